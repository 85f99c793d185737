//! What the commands share: reading an endpoint, `--protocol`, `-H` headers and `--args`,
//! opening output files, the metrics address and its server, the async runtime, and the
//! verdict printer with its reports and exit code. Here, not in any command, so that the
//! commands stay siblings: none imports another (`tests/layout.rs` checks).

use std::fs::File;
use std::io::{self, Write};
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use mcp_verdict::ProtocolVersion;
use mcp_verdict::adapters::{ClientBuilder, Handshake};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::args::{OutputArgs, OutputFormatArg, TlsArgs};
use crate::exit;
/// Unusable input: the message on stderr, exit 2 (the rule in [`exit`]).
pub(crate) use crate::exit::unusable as fail;
use crate::output::{Format, Printer};
use crate::report::{self, Decision, Run};

/// A current-thread runtime, or exit 2 when it cannot start.
pub(crate) fn runtime() -> Result<tokio::runtime::Runtime, ExitCode> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| {
            eprintln!("mcp-verdict: cannot start the async runtime: {e}");
            ExitCode::from(2)
        })
}

/// Parses `--protocol`.
pub(crate) fn handshake_of(protocol: &str) -> Result<Handshake, String> {
    match protocol {
        "auto" => Ok(Handshake::Auto),
        "2026-07-28" => Ok(Handshake::Stateless),
        other => match ProtocolVersion::parse(other) {
            Some(v) if !v.is_stateless() && v.as_str() == other => Ok(Handshake::Initialize(v)),
            _ => Err(format!(
                "--protocol {other}: use auto, 2026-07-28, 2025-11-25, 2025-06-18 or 2025-03-26"
            )),
        },
    }
}

/// Adds `--header 'Name: value'` arguments as secret headers.
pub(crate) fn with_headers(
    mut builder: ClientBuilder,
    headers: &[String],
) -> Result<ClientBuilder, String> {
    for h in headers {
        let Some((name, value)) = h.split_once(':') else {
            // No name to show, and the argument may be a secret: not echoed.
            return Err("--header: expected 'Name: value' (the argument is not shown)".into());
        };
        let (name, value) = (name.trim(), value.trim());
        // Checked here, before anything is sent: an unusable header is unusable input (exit
        // 2), not a connection failure to retry. The value is a secret: never echoed.
        if reqwest::header::HeaderName::from_bytes(name.as_bytes()).is_err() {
            return Err(format!("--header {name:?}: not a valid header name"));
        }
        if reqwest::header::HeaderValue::from_str(value).is_err() {
            return Err(format!(
                "--header {name:?}: the value is not a valid header value (control characters or non-visible bytes)"
            ));
        }
        builder = builder.secret_header(name, value);
    }
    Ok(builder)
}

/// `--cacert` and `--insecure` onto the client. An unreadable file, or one without a PEM
/// certificate, is unusable input (checked before anything is sent).
pub(crate) fn with_tls(builder: ClientBuilder, tls: &TlsArgs) -> Result<ClientBuilder, String> {
    let mut builder = builder.accept_invalid_certs(tls.insecure);
    if let Some(path) = &tls.cacert {
        let flag = format!("--cacert {}", path.display());
        let pem = std::fs::read(path).map_err(|e| format!("{flag}: {e}"))?;
        let certs = reqwest::Certificate::from_pem_bundle(&pem)
            .map_err(|e| format!("{flag}: not a PEM certificate file: {e}"))?;
        if certs.is_empty() {
            return Err(format!(
                "{flag}: no certificate in it (expected PEM: -----BEGIN CERTIFICATE-----)"
            ));
        }
        builder = builder.root_certificates(certs);
    }
    Ok(builder)
}

/// Checks, before any work, that the output `flag` names can be written, without writing it:
/// an existing file is opened for writing (not truncated), a missing one created and removed
/// again (so its directory takes files). `-` is standard output. The message names the flag.
pub(crate) fn check_out(flag: &str, path: &Path) -> Result<(), String> {
    if path.as_os_str() == "-" {
        return Ok(());
    }
    let cannot = |e: io::Error| format!("{flag} {}: cannot be written: {e}", path.display());
    if path.is_dir() {
        return Err(cannot(io::Error::from(io::ErrorKind::IsADirectory)));
    }
    if path.exists() {
        return std::fs::OpenOptions::new()
            .write(true)
            .open(path)
            .map(drop)
            .map_err(cannot);
    }
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .map_err(cannot)?;
    let _ = std::fs::remove_file(path);
    Ok(())
}

/// Creates the output `flag` names before any work (a bad path fails at once); the message
/// names the flag.
pub(crate) fn create_out(flag: &str, path: &Path) -> Result<File, String> {
    if path.is_dir() {
        return Err(format!(
            "{flag} {}: cannot be written: it is a directory",
            path.display()
        ));
    }
    File::create(path).map_err(|e| format!("{flag} {}: cannot be written: {e}", path.display()))
}

/// `--otlp` in a build without the `otel` feature: refused, naming the feature, before any work.
pub(crate) fn otlp_available(otlp: Option<&str>) -> Result<(), String> {
    match otlp_refusal(otlp.is_some(), cfg!(feature = "otel")) {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// The refusal of `--otlp` (`asked`) in a build without `otel` (`built`: with it).
fn otlp_refusal(asked: bool, built: bool) -> Option<String> {
    (asked && !built).then(|| {
        "--otlp: this build has no OpenTelemetry export; rebuild with the `otel` feature (on by \
         default: `cargo install --locked --path .`; with --no-default-features add \
         `--features otel`)"
            .to_owned()
    })
}

/// Binds the metrics address before any work (in use, or not allowed: exit 2 at once); served
/// later on the runtime with [`serve_metrics`].
pub(crate) fn bind_metrics(flag: &str, addr: &str) -> Result<std::net::TcpListener, String> {
    let at = metrics_addr(addr)?;
    let listener =
        std::net::TcpListener::bind(at).map_err(|e| format!("{flag} {at}: cannot listen: {e}"))?;
    listener
        .set_nonblocking(true)
        .map_err(|e| format!("{flag} {at}: {e}"))?;
    Ok(listener)
}

/// Checks an endpoint URL before any work: a scheme is needed (and suggested when missing).
pub(crate) fn endpoint(url: &str) -> Result<(), String> {
    match reqwest::Url::parse(url) {
        Ok(u) if matches!(u.scheme(), "http" | "https") && u.host_str().is_some() => Ok(()),
        Ok(u) if matches!(u.scheme(), "http" | "https") => Err(format!("{url}: no host")),
        Ok(u) if u.cannot_be_a_base() || u.host_str().is_none() => {
            Err(format!("{url}: no scheme; did you mean http://{url} ?"))
        }
        Ok(u) => Err(format!(
            "{url}: scheme {}:// is not an MCP transport; use http:// or https://",
            u.scheme()
        )),
        Err(e) if e.to_string().contains("relative URL without a base") => {
            Err(format!("{url}: no scheme; did you mean http://{url} ?"))
        }
        Err(e) => Err(format!("{url}: {e}")),
    }
}

/// `--args` as a JSON object (`{}` when absent).
pub(crate) fn tool_args(args: Option<&str>) -> Result<Value, String> {
    match args.map(serde_json::from_str::<Value>) {
        None => Ok(json!({})),
        Some(Ok(v @ Value::Object(_))) => Ok(v),
        Some(Ok(_)) => Err("--args must be a JSON object".into()),
        Some(Err(e)) => Err(format!("--args is not JSON: {e}")),
    }
}

/// Opens an output named on the command line: `-` is stdout, anything else a new file.
pub(crate) fn open_out(
    flag: &str,
    path: Option<&Path>,
) -> Result<Option<Box<dyn io::Write + Send>>, String> {
    match path {
        None => Ok(None),
        Some(p) if p.as_os_str() == "-" => Ok(Some(Box::new(io::stdout()))),
        Some(p) => create_out(flag, p)
            .map(|f| Some(Box::new(io::BufWriter::new(f)) as Box<dyn io::Write + Send>)),
    }
}

/// The `--metrics-listen` address: IP:PORT on loopback only.
pub(crate) fn metrics_addr(a: &str) -> Result<std::net::SocketAddr, String> {
    let addr: std::net::SocketAddr = a
        .parse()
        .map_err(|_| format!("--metrics-listen {a:?}: expected IP:PORT"))?;
    if !addr.ip().is_loopback() {
        return Err(format!(
            "--metrics-listen {a}: only loopback addresses are served"
        ));
    }
    Ok(addr)
}

/// Answers every connection with the current Prometheus text from `render`.
pub(crate) async fn serve_metrics(
    listener: tokio::net::TcpListener,
    render: impl Fn() -> String + Send + Sync + 'static,
) {
    let render = Arc::new(render);
    while let Ok((mut stream, _)) = listener.accept().await {
        let render = render.clone();
        tokio::spawn(async move {
            let mut buf = [0u8; 2048];
            let _ = tokio::time::timeout(Duration::from_secs(2), stream.read(&mut buf)).await;
            let body = render();
            let head = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            let _ = stream.write_all(head.as_bytes()).await;
            let _ = stream.write_all(body.as_bytes()).await;
        });
    }
}

impl OutputArgs {
    /// The printer for `--format` and `--color` on standard output.
    pub(crate) fn printer(&self) -> Printer<io::StdoutLock<'static>> {
        let stdout = io::stdout();
        let color = self.color.enabled();
        let format = match self.format {
            OutputFormatArg::Human => Format::Human,
            OutputFormatArg::Json => Format::Json,
            OutputFormatArg::Jsonl => Format::Jsonl,
            OutputFormatArg::Junit => Format::Silent,
            OutputFormatArg::Markdown => Format::Markdown,
        };
        Printer::new(stdout.lock(), format, color)
    }

    /// Creates the `--junit` file now, so that a path that cannot be written fails before any
    /// work (it is written at the end of the run).
    pub(crate) fn create_junit(&self) -> Result<(), String> {
        match &self.junit {
            Some(p) => File::create(p)
                .map(drop)
                .map_err(|e| format!("--junit {}: {e}", p.display())),
            None => Ok(()),
        }
    }

    /// Whether a report needs the whole run (traces) kept.
    pub(crate) fn wants_run(&self) -> bool {
        self.html.is_some() || self.junit.is_some() || self.format == OutputFormatArg::Junit
    }

    /// Writes `--html`, `--junit FILE` and, for `--format junit`, the JUnit document to the
    /// output. Returns whether a file could not be written.
    pub(crate) fn write_reports<W: Write>(
        &self,
        printer: &mut Printer<W>,
        run: &Run,
        unusable: bool,
    ) -> bool {
        let all_complete = printer.all_complete();
        let incomplete = run.traces.iter().filter(|t| !t.verdict.complete).count();
        let mut decision = Decision::of(unusable, all_complete, incomplete);
        let mut failed = false;
        if let Some(path) = &self.html {
            failed = report::write_file(path, &report::html::exchanges_page(run, &decision));
            if failed {
                decision = Decision::of(true, all_complete, incomplete);
            }
        }
        if let Some(path) = &self.junit {
            failed |= report::write_file(path, &report::junit::exchanges(run, &decision));
        }
        if self.format == OutputFormatArg::Junit {
            printer.document(&report::junit::exchanges(run, &decision));
        }
        failed
    }
}

/// The exit code for a run of verdicts, by the one rule in [`exit`].
pub(crate) fn exit_code<W: Write>(printer: &Printer<W>, unusable: bool) -> ExitCode {
    exit::Run {
        unusable,
        incomplete: !printer.all_complete(),
        broken_pipe: printer.broken_pipe(),
        ..exit::Run::default()
    }
    .code()
}

/// Says when verdicts left server requests out past `--max-server-requests` (each lists the
/// most recent ones of its stream).
pub(crate) fn warn_unlisted(name: &str, unlisted: u64, limits: mcp_verdict::Limits) {
    if unlisted > 0 {
        eprintln!(
            "mcp-verdict: {name}: {unlisted} server requests not listed in their verdicts past --max-server-requests {} (each lists the most recent of its stream)",
            limits.max_server_requests
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn otlp_without_the_feature_is_refused_naming_it() {
        let e = otlp_refusal(true, false).expect("refused");
        assert!(
            e.starts_with("--otlp:") && e.contains("`otel` feature"),
            "{e}"
        );
        assert_eq!(otlp_refusal(true, true), None);
        assert_eq!(otlp_refusal(false, false), None);
    }

    #[test]
    fn output_checks_name_the_flag_and_leave_files_alone() {
        let dir =
            std::env::temp_dir().join(format!("mcp-verdict-check-out-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let missing = dir.join("missing").join("x.html");
        let e = check_out("--html", &missing).unwrap_err();
        assert!(
            e.starts_with("--html ") && e.contains("cannot be written"),
            "{e}"
        );
        let e = check_out("--junit", &dir).unwrap_err();
        assert!(e.starts_with("--junit "), "{e}");
        let kept = dir.join("kept");
        std::fs::write(&kept, "old").unwrap();
        check_out("--html", &kept).unwrap();
        assert_eq!(std::fs::read_to_string(&kept).unwrap(), "old");
        let new = dir.join("new");
        check_out("--html", &new).unwrap();
        assert!(!new.exists(), "a check creates nothing");
        assert!(check_out("--log", Path::new("-")).is_ok());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
