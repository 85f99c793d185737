//! `proxy`: forward to an upstream MCP endpoint and judge every exchange on the way.

use std::fs::File;
use std::io::{self, IsTerminal};
use std::process::ExitCode;
use std::sync::Arc;

use mcp_verdict::proxy::{Config, HumanLines, JsonLog, Metrics, Proxy, display_url};

use crate::ProxyArgs;
use crate::probe::fail;
use crate::report::proxy::ProxyReports;
use crate::soak::{metrics_addr, serve_metrics};

fn config(args: &ProxyArgs) -> Result<Config, String> {
    let listen: std::net::SocketAddr = args.listen.parse().map_err(|_| {
        format!(
            "--listen {:?}: expected IP:PORT, e.g. 127.0.0.1:8788",
            args.listen
        )
    })?;
    let mut c = Config::new(args.upstream.clone(), listen);
    c.limits = args.limits.limits();
    c.max_head_bytes = args.max_head_bytes;
    c.max_request_bytes = args.max_request_bytes;
    c.max_connections = args.max_connections.max(1);
    c.head_timeout = args.head_timeout;
    c.upstream_head_timeout = args.upstream_head_timeout;
    let idle = args.idle_timeout;
    c.idle_timeout = (!idle.is_zero()).then_some(idle);
    c.record_max_body_bytes = args.record_max_body_bytes;
    c.redact = !args.no_redact;
    c.allow_origins = args.allow_origins.clone();
    Ok(c)
}

pub fn run(args: ProxyArgs) -> ExitCode {
    let mut config = match config(&args) {
        Ok(c) => c,
        Err(e) => return fail(e),
    };
    let reports = match ProxyReports::for_args(&args, &mut config) {
        Ok(r) => r,
        Err(e) => return fail(e),
    };
    let metrics_at = match args.metrics_listen.as_deref().map(metrics_addr).transpose() {
        Ok(a) => a,
        Err(e) => return fail(e),
    };
    let log: Option<Box<dyn io::Write + Send>> = match args.log.as_deref() {
        None => None,
        Some(p) if p.as_os_str() == "-" => Some(Box::new(io::stdout())),
        Some(p) => match File::create(p) {
            Ok(f) => Some(Box::new(io::BufWriter::new(f))),
            Err(e) => return fail(format!("--log {}: {e}", p.display())),
        },
    };
    // Fail before serving, not at Ctrl-C, when the recording cannot be written.
    if let Some(path) = &args.record
        && let Err(e) = File::create(path)
    {
        return fail(format!("--record {}: {e}", path.display()));
    }
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => return fail(format!("cannot start the async runtime: {e}")),
    };
    let reports_sink = reports.clone();
    let code = rt.block_on(async move {
        let mut builder = Proxy::builder(config.clone());
        if let Some(r) = reports_sink {
            builder = builder.sink(r);
        }
        let file_label = args
            .record
            .as_ref()
            .map_or_else(|| "proxy".to_owned(), |p| p.display().to_string());
        if let Some(out) = log {
            builder = builder.sink(Arc::new(JsonLog::new(out, file_label)));
        }
        if !args.quiet && (io::stderr().is_terminal() || args.log.is_none()) {
            builder = builder.sink(Arc::new(HumanLines));
        }
        let metrics = Arc::new(Metrics::default());
        if let Some(addr) = metrics_at {
            let listener = match tokio::net::TcpListener::bind(addr).await {
                Ok(l) => l,
                Err(e) => return fail(format!("--metrics-listen {addr}: {e}")),
            };
            let m = metrics.clone();
            tokio::spawn(serve_metrics(listener, move || m.render()));
            builder = builder.sink(metrics.clone());
        }
        if args.record.is_some() {
            builder = builder.record();
        }
        let proxy = match builder.start().await {
            Ok(p) => p,
            Err(e) => return fail(e.to_string()),
        };
        if !proxy.addr().ip().is_loopback() {
            eprintln!(
                "mcp-verdict: WARNING: listening on {}, not loopback: anyone who can reach it can use the upstream through it",
                proxy.addr()
            );
        }
        let upstream = reqwest::Url::parse(&config.upstream)
            .map(|u| display_url(&u))
            .unwrap_or_default();
        eprintln!(
            "mcp-verdict: proxy {} -> {upstream} (point the client at {}; Ctrl-C stops)",
            proxy.addr(),
            proxy.url()
        );
        stopped().await;
        if let (Some(path), Some(rec)) = (&args.record, proxy.recorder()) {
            let written = File::create(path).and_then(|f| {
                let mut out = io::BufWriter::new(f);
                rec.write(&mut out)?;
                io::Write::flush(&mut out)
            });
            match written {
                Ok(()) => eprintln!("mcp-verdict: recorded {} exchanges to {}", rec.len(), path.display()),
                Err(e) => return fail(format!("--record {}: {e}", path.display())),
            }
        }
        ExitCode::SUCCESS
    });
    // Exchanges still in flight end (cancelled) as the runtime stops, and reach the sinks first.
    rt.shutdown_timeout(std::time::Duration::from_secs(2));
    match reports {
        Some(r) if r.finish() => ExitCode::from(2),
        _ => code,
    }
}

/// Ctrl-C, or SIGTERM (a service manager, `kill`): either stops the proxy and writes its files.
async fn stopped() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        if let Ok(mut term) = signal(SignalKind::terminate()) {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
            return;
        }
    }
    let _ = tokio::signal::ctrl_c().await;
}
