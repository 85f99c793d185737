//! `proxy`: forward to an upstream MCP endpoint and judge every exchange on the way.

use std::fs::File;
use std::io::{self, IsTerminal};
use std::process::ExitCode;
use std::sync::Arc;

use mcp_verdict::proxy::ui::{self, Feed, Token};
use mcp_verdict::proxy::{CallLog, Config, JsonLog, Metrics, Proxy};

use crate::args::{ProxyArgs, ProxyFormatArg};
use crate::cli::{create_out, fail, metrics_addr, open_out, otlp_available, serve_metrics};
use crate::proxy_summary::Summary;
use crate::report::proxy::ProxyReports;

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
    c.client_timeout = args.timeout;
    c.record_max_body_bytes = args.record_max_body_bytes;
    c.max_backlog_bytes = args.max_backlog_bytes;
    c.redact = !args.redact.no_redact;
    c.allow_origins = args.allow_origins.clone();
    if let Some(path) = &args.upstream_cacert {
        let pem = std::fs::read(path)
            .map_err(|e| format!("--upstream-cacert {}: {e}", path.display()))?;
        c.upstream_cacert = Some(pem);
    }
    Ok(c)
}

/// Everything checked and opened before serving, so that a mistake fails at once, not at Ctrl-C.
struct Prepared {
    config: Config,
    /// `--html` / `--otlp`: a sink that writes or flushes when the proxy stops.
    reports: Option<Arc<ProxyReports>>,
    metrics_at: Option<std::net::SocketAddr>,
    outputs: Outputs,
    /// The summary line at stop (not with `--quiet`).
    summary: Option<Arc<Summary>>,
    /// `--ui`: where the live page listens (checked: loopback, or `--ui-allow-remote`).
    ui_at: Option<std::net::SocketAddr>,
}

/// The live page while the proxy runs: its feed (a sink), its listener and token.
struct LivePage {
    feed: Arc<Feed>,
    listener: tokio::net::TcpListener,
    token: Token,
}

fn prepare(args: &ProxyArgs) -> Result<Prepared, String> {
    let mut config = config(args)?;
    otlp_available(args.otlp.as_deref())?;
    let reports = ProxyReports::for_args(args, &mut config)?;
    let metrics_at = args
        .metrics_listen
        .as_deref()
        .map(metrics_addr)
        .transpose()?;
    let outputs = Outputs::open(args)?;
    if let Some(path) = &args.record {
        create_out("--record", path)?;
    }
    let ui_at = args.ui.as_deref().map(ui_addr).transpose()?;
    if let Some(at) = ui_at {
        ui::check_listen(at, args.ui_allow_remote).map_err(|e| e.to_string())?;
    }
    let summary = (!args.quiet).then(|| {
        Arc::new(Summary::new(
            args.color.enabled_on(io::stderr().is_terminal()),
        ))
    });
    Ok(Prepared {
        config,
        reports,
        metrics_at,
        outputs,
        summary,
        ui_at,
    })
}

/// The JSON-lines outputs. They write through a buffer ([`JsonLog`], [`CallLog`]), so the
/// binary keeps them to flush once the runtime has stopped: the exchanges that end as it stops
/// and the calls closed at stop are written after the last timer could run.
#[derive(Clone, Default)]
struct Outputs {
    /// `--format jsonl`: the verdict lines on stdout (unless `--log -` writes them there).
    stdout: Option<Arc<JsonLog>>,
    log: Option<Arc<JsonLog>>,
    calls: Option<Arc<CallLog>>,
}

impl Outputs {
    fn open(args: &ProxyArgs) -> Result<Outputs, String> {
        let file_label = args
            .record
            .as_ref()
            .map_or_else(|| "proxy".to_owned(), |p| p.display().to_string());
        let log_on_stdout = args.log.as_deref().is_some_and(|p| p.as_os_str() == "-");
        let stdout = (args.format == ProxyFormatArg::Jsonl && !log_on_stdout).then(|| {
            let out: Box<dyn io::Write + Send> = Box::new(io::stdout());
            Arc::new(JsonLog::new(out, file_label.clone()))
        });
        let log = open_out("--log", args.log.as_deref())?
            .map(|out| Arc::new(JsonLog::new(out, file_label)));
        let calls =
            open_out("--calls", args.calls.as_deref())?.map(|out| Arc::new(CallLog::new(out)));
        Ok(Outputs { stdout, log, calls })
    }

    fn flush(&self) {
        self.stdout.iter().chain(&self.log).for_each(|l| l.flush());
        if let Some(c) = &self.calls {
            c.flush();
        }
    }
}

fn ui_addr(text: &str) -> Result<std::net::SocketAddr, String> {
    text.parse()
        .map_err(|_| format!("--ui {text:?}: expected IP:PORT, e.g. 127.0.0.1:8790"))
}

/// The proxy with its outputs: log, human lines, calls, metrics, recording.
async fn build(args: &ProxyArgs, p: Prepared) -> Result<(Proxy, Option<LivePage>), String> {
    let page = match p.ui_at {
        Some(at) => {
            let listener = tokio::net::TcpListener::bind(at)
                .await
                .map_err(|e| ui::UiError::Bind(at, e).to_string())?;
            let feed = Arc::new(Feed::new(
                args.ui_keep,
                p.config.redaction(),
                &p.config.upstream,
            ));
            Some(LivePage {
                feed,
                listener,
                token: Token::random(),
            })
        }
        None => None,
    };
    let mut builder = Proxy::builder(p.config);
    if let Some(page) = &page {
        builder = builder.sink(page.feed.clone()).call_sink(page.feed.clone());
    }
    if let Some(r) = p.reports {
        builder = builder.sink(r.clone()).call_sink(r);
    }
    for log in p.outputs.stdout.iter().chain(&p.outputs.log) {
        builder = builder.sink(log.clone());
    }
    if let Some(summary) = p.summary {
        builder = builder.sink(summary);
    }
    if let Some(calls) = p.outputs.calls {
        builder = builder.call_sink(calls);
    }
    // The live lines stay when `--log` or `--calls` write elsewhere (stderr is not stdout);
    // `--quiet` turns them off.
    if !args.quiet {
        builder = builder.human_lines();
    }
    if let Some(addr) = p.metrics_at {
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|e| format!("--metrics-listen {addr}: {e}"))?;
        let metrics = Arc::new(Metrics::default());
        let m = metrics.clone();
        tokio::spawn(serve_metrics(listener, move || m.render()));
        builder = builder.sink(metrics);
    }
    if args.record.is_some() {
        builder = builder.record();
    }
    let proxy = builder.start().await.map_err(|e| e.to_string())?;
    Ok((proxy, page))
}

/// Serves the live page in the background and prints its URL (with the token).
fn serve_page(page: LivePage, proxy: &Proxy) {
    if let Ok(at) = page.listener.local_addr() {
        if !at.ip().is_loopback() {
            eprintln!(
                "mcp-verdict: WARNING: the live page listens on {at}, not loopback: anyone who can reach it and has the token sees the traffic"
            );
        }
        eprintln!("mcp-verdict: live page {}", ui::page_url(at, &page.token));
    }
    tokio::spawn(ui::serve(
        page.listener,
        page.feed,
        page.token,
        proxy.recorder_shared(),
    ));
}

fn announce(proxy: &Proxy, config: &Config) {
    if !proxy.addr().ip().is_loopback() {
        eprintln!(
            "mcp-verdict: WARNING: listening on {}, not loopback: anyone who can reach it can use the upstream through it",
            proxy.addr()
        );
    }
    let upstream = config.redaction().url(&config.upstream).into_owned();
    eprintln!(
        "mcp-verdict: proxy {} -> {upstream} (point the client at {}; Ctrl-C stops)",
        proxy.addr(),
        proxy.url()
    );
}

/// How long the look at the upstream at start waits for a connection.
const UPSTREAM_LOOK: std::time::Duration = std::time::Duration::from_secs(2);

/// At Ctrl-C: the calls still open, then the recording.
fn stop(args: &ProxyArgs, proxy: &Proxy) -> Result<(), String> {
    proxy.close_calls();
    let waits = proxy.backlog_waits();
    if waits > 0 {
        eprintln!(
            "mcp-verdict: the forwarding waited {waits} times for the judging to catch up (--max-backlog-bytes {})",
            args.max_backlog_bytes
        );
    }
    crate::cli::warn_unlisted(
        "proxy",
        proxy.server_requests_unlisted(),
        args.limits.limits(),
    );
    if let (Some(path), Some(rec)) = (&args.record, proxy.recorder()) {
        File::create(path)
            .and_then(|f| {
                let mut out = io::BufWriter::new(f);
                rec.write(&mut out)?;
                io::Write::flush(&mut out)
            })
            .map_err(|e| format!("--record {}: {e}", path.display()))?;
        eprintln!(
            "mcp-verdict: recorded {} exchanges to {}",
            rec.len(),
            path.display()
        );
    }
    Ok(())
}

pub fn run(args: ProxyArgs) -> ExitCode {
    let prepared = match prepare(&args) {
        Ok(p) => p,
        Err(e) => return fail(args.redact.policy().text(&e)),
    };
    let config = prepared.config.clone();
    let reports = prepared.reports.clone();
    let summary = prepared.summary.clone();
    let outputs = prepared.outputs.clone();
    // One thread: a current-thread runtime, where a connection's task and its upstream
    // connection's task wake each other without crossing threads.
    let mut builder = match args.threads {
        1 => tokio::runtime::Builder::new_current_thread(),
        n => {
            let mut b = tokio::runtime::Builder::new_multi_thread();
            b.worker_threads(usize::from(n));
            b
        }
    };
    let rt = match builder.enable_all().build() {
        Ok(rt) => rt,
        Err(e) => return fail(format!("cannot start the async runtime: {e}")),
    };
    let (code, served) = rt.block_on(async move {
        let (proxy, page) = match build(&args, prepared).await {
            Ok(p) => p,
            Err(e) => return (fail(config.redaction().text(&e)), false),
        };
        announce(&proxy, &config);
        if let Some(page) = page {
            serve_page(page, &proxy);
        }
        // One quick look at the upstream, beside serving (never holding it up).
        let look = proxy.check_upstream(UPSTREAM_LOOK);
        let policy = config.redaction();
        let upstream = policy.url(&config.upstream).into_owned();
        tokio::select! {
            () = stopped() => {}
            looked = look => {
                if let Err(cause) = looked {
                    eprintln!(
                        "mcp-verdict: WARNING: the upstream {upstream} does not answer ({}); serving anyway: each request gets a 502 naming the cause until it does",
                        policy.text(&cause)
                    );
                }
                stopped().await;
            }
        }
        match stop(&args, &proxy) {
            Ok(()) => (ExitCode::SUCCESS, true),
            Err(e) => (fail(e), true),
        }
    });
    // Exchanges still in flight end (cancelled) as the runtime stops, and reach the sinks first.
    rt.shutdown_timeout(std::time::Duration::from_secs(2));
    outputs.flush();
    if let Some(summary) = summary.filter(|_| served) {
        summary.print();
    }
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
