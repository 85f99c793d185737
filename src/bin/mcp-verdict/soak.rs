//! `soak` and `report merge`.

use std::fs::File;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_verdict::Call;
use mcp_verdict::adapters::{Client, Deadlines};
use mcp_verdict::soak::{self, Live, MixEntry, Report, SoakConfig, SoakError};

use crate::args::{FormatArg, SoakArgs};
use crate::cli::{
    bind_metrics, check_out, create_out, endpoint, fail, handshake_of, open_out, otlp_available,
    runtime, serve_metrics, tool_args, with_headers, with_tls,
};
use crate::exit;
use crate::report::html::Sample;
use crate::report::{self, Decision};

fn mix_of(args: &SoakArgs) -> Result<Vec<MixEntry>, String> {
    if let Some(path) = &args.mix {
        if args.args.is_some() {
            return Err("--args goes with --tool; in a --mix file each entry has its args".into());
        }
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let mix: Vec<MixEntry> = serde_json::from_str(&text)
            .map_err(|e| format!("{}: not a mix file: {e}", path.display()))?;
        if mix.is_empty() || mix.iter().all(|m| m.weight == 0) {
            return Err(format!(
                "{}: the mix has no entry with a weight",
                path.display()
            ));
        }
        if let Some(m) = mix.iter().find(|m| !m.args.is_object()) {
            return Err(format!(
                "{}: the args of {:?} must be a JSON object",
                path.display(),
                m.tool
            ));
        }
        return Ok(mix);
    }
    Ok(vec![MixEntry {
        tool: args.tool.clone().unwrap_or_default(),
        args: tool_args(args.args.as_deref())?,
        weight: 1,
    }])
}

/// An output file, created before the run so that a bad path fails before the work.
fn output_file(flag: &str, path: Option<&PathBuf>) -> Result<Option<(PathBuf, File)>, String> {
    path.map(|p| create_out(flag, p).map(|f| (p.clone(), f)))
        .transpose()
}

/// What the run needs, checked before any work: a bad argument or path fails first.
struct Setup {
    client: Client,
    config: SoakConfig,
    listen: Option<std::net::TcpListener>,
    report_out: Option<(PathBuf, File)>,
    metrics_file: Option<(PathBuf, File)>,
    calls: Option<Box<dyn Write + Send>>,
}

fn setup(args: &SoakArgs) -> Result<Setup, String> {
    endpoint(&args.url)?;
    let handshake = handshake_of(&args.protocol)?;
    let mix = mix_of(args)?;
    if let Some(r) = args.rate {
        check_rate(r)?;
    }
    otlp_available(args.otlp.as_deref())?;
    // Every output before anything is sent: a bad path fails in a second, not after the run.
    if let Some(path) = &args.html {
        check_out("--html", path)?;
    }
    if let Some(path) = &args.junit {
        check_out("--junit", path)?;
    }
    let report_out = output_file("--report-out", args.report_out.as_ref())?;
    let metrics_file = output_file("--metrics-file", args.metrics_file.as_ref())?;
    let calls = open_out("--calls", args.calls.as_deref())?;
    let listen = args
        .metrics_listen
        .as_deref()
        .map(|a| bind_metrics("--metrics-listen", a))
        .transpose()?;
    let builder = Client::builder(args.url.clone())
        .redaction(args.redact.policy())
        .limits(args.limits.limits())
        .deadlines(Deadlines {
            overall: Some(args.timeout),
            ..Deadlines::default()
        });
    let client = with_tls(with_headers(builder, &args.headers)?, &args.tls)?
        .build()
        .map_err(|e| format!("bad URL {e}"))?;
    let config = SoakConfig {
        mix,
        concurrency: usize::try_from(args.concurrency).unwrap_or(usize::MAX),
        requests: args.requests,
        duration: args.duration,
        rate: args.rate,
        handshake,
        max_connect_failures: args.max_connect_failures,
    };
    Ok(Setup {
        client,
        config,
        listen,
        report_out,
        metrics_file,
        calls,
    })
}

/// `--rate` is positive and its interval is a representable time.
fn check_rate(r: f64) -> Result<(), String> {
    if r.is_nan() || r <= 0.0 {
        return Err("--rate must be positive".to_owned());
    }
    let interval_fits = Duration::try_from_secs_f64(1.0 / r)
        .ok()
        .and_then(|d| std::time::Instant::now().checked_add(d))
        .is_some();
    if !interval_fits {
        return Err(format!(
            "--rate {r}: one call every {:e} s is past any representable time",
            1.0 / r
        ));
    }
    Ok(())
}

pub fn run(args: SoakArgs) -> ExitCode {
    let Setup {
        client,
        config,
        listen,
        report_out,
        metrics_file,
        calls,
    } = match setup(&args) {
        Ok(s) => s,
        Err(e) => return fail(args.redact.policy().text(&e)),
    };
    // The one policy, with the user's -H headers: for everything this command shows.
    let policy = client.redaction();
    let rt = match runtime() {
        Ok(rt) => rt,
        Err(code) => return code,
    };
    #[cfg(feature = "otel")]
    let otlp = match args
        .otlp
        .as_deref()
        .map(report::otel::Otlp::new)
        .transpose()
    {
        Ok(o) => o.map(Arc::new),
        Err(e) => return fail(policy.text(&e)),
    };
    let mut hooks: Vec<soak::CallHook> = Vec::new();
    #[cfg(feature = "otel")]
    if let Some(o) = &otlp {
        hooks.push(otel_hook(o.clone(), &args.url, policy.clone()));
    }
    let mut prelude = None;
    if let Some(out) = calls {
        let (call, before) = calls_hooks(out);
        hooks.push(call);
        prelude = Some(before);
    }
    let live = match hooks.len() {
        0 => Live::default(),
        1 => Live::with_hook(hooks.remove(0)),
        _ => Live::with_hook(Box::new(move |verdict, timings, session_id| {
            for hook in &hooks {
                hook(verdict, timings, session_id);
            }
        })),
    };
    let live = Arc::new(match prelude {
        Some(hook) => live.with_prelude_hook(hook),
        None => live,
    });
    let samples = Arc::new(Mutex::new(Vec::new()));
    let result = rt.block_on(drive(
        &client,
        &config,
        live,
        listen,
        args.html.is_some().then(|| samples.clone()),
    ));
    let report = match finished(result, &policy) {
        Ok(r) => r,
        Err(code) => return code,
    };
    let samples = closed_samples(&samples, &report);
    let mut out = std::io::stdout().lock();
    print_report(&args, &report, &mut out);
    let shown = mcp_verdict::redact::url(&args.url);
    crate::cli::warn_unlisted(
        &shown,
        client.server_requests_unlisted(),
        args.limits.limits(),
    );
    let mut unusable = write_outputs(report_out, metrics_file, &report);
    let broken = broken_thresholds(&args, &report);
    for b in &broken {
        eprintln!("mcp-verdict: threshold broken: {b}");
        if args.out.format == FormatArg::Human {
            let _ = writeln!(out, "threshold broken: {b}");
        }
    }
    #[cfg(feature = "otel")]
    if let Some(o) = &otlp
        && let Err(e) = o.shutdown()
    {
        eprintln!("mcp-verdict: {}", policy.text(&e));
        unusable = true;
    }
    if args.html.is_some() || args.junit.is_some() {
        let url = policy.url(&args.url);
        unusable |= write_reports(&args, &url, &report, &samples, &broken, unusable);
    }
    exit::Run {
        interrupted: report.interrupted,
        unusable,
        // --max-incomplete-rate is the user saying how many incomplete calls are fine.
        incomplete: args.max_incomplete_rate.is_none() && report.incomplete > 0,
        threshold_broken: !broken.is_empty(),
        broken_pipe: false,
    }
    .code()
}

/// The report of a run that finished, or the exit code of one that did not: 130 when
/// interrupted before the load, 2 when it could not run.
fn finished(
    result: Result<Result<Report, SoakError>, String>,
    policy: &mcp_verdict::Redaction,
) -> Result<Report, ExitCode> {
    match result {
        Ok(Ok(r)) => Ok(r),
        Ok(Err(SoakError::Interrupted)) => {
            eprintln!("mcp-verdict: {}", SoakError::Interrupted);
            Err(exit::Run {
                interrupted: true,
                ..exit::Run::default()
            }
            .code())
        }
        Ok(Err(e)) => Err(fail(policy.text(&e.to_string()))),
        Err(e) => Err(fail(policy.text(&e))),
    }
}

/// The run itself, with Ctrl-C handling, the metrics endpoint, the progress bar on a terminal
/// and, for `--html`, the sampler. `Err` when the metrics address cannot be bound.
async fn drive(
    client: &Client,
    config: &SoakConfig,
    live: Arc<Live>,
    listen: Option<std::net::TcpListener>,
    samples: Option<Arc<Mutex<Vec<Sample>>>>,
) -> Result<Result<Report, SoakError>, String> {
    tokio::spawn(on_ctrl_c(live.clone()));
    if let Some(listener) = listen {
        let listener = tokio::net::TcpListener::from_std(listener)
            .map_err(|e| format!("--metrics-listen: {e}"))?;
        let live = live.clone();
        tokio::spawn(serve_metrics(listener, move || {
            live.snapshot().prometheus()
        }));
    }
    let progress = std::io::stderr()
        .is_terminal()
        .then(|| tokio::spawn(progress_bar(live.clone())));
    let sampler = samples.map(|s| tokio::spawn(sample(live.clone(), s)));
    let report = soak::run(client, config, live.clone()).await;
    if let Some(p) = progress {
        p.abort();
        eprint!("\r\x1b[2K");
    }
    if let Some(s) = sampler {
        s.abort();
    }
    Ok(report)
}

/// The samples with the final counts closing the last interval; a sliver under half a second
/// joins the one before it rather than showing as a spike.
fn closed_samples(samples: &Mutex<Vec<Sample>>, report: &Report) -> Vec<Sample> {
    let mut samples = std::mem::take(&mut *samples.lock().unwrap_or_else(|p| p.into_inner()));
    if samples.len() > 1
        && samples
            .last()
            .is_some_and(|l| report.elapsed_ms.saturating_sub(l.t_ms) < 500)
    {
        samples.pop();
    }
    samples.push(Sample {
        t_ms: report.elapsed_ms,
        requests: report.requests,
        incomplete: report.incomplete,
    });
    samples
}

/// `-o` (the JSON report) and `--metrics-file` (Prometheus text); true when one could not be
/// written.
fn write_outputs(
    report_out: Option<(PathBuf, File)>,
    metrics_file: Option<(PathBuf, File)>,
    report: &Report,
) -> bool {
    let mut unusable = false;
    if let Some((path, file)) = report_out {
        let json = serde_json::to_string_pretty(report).unwrap_or_default();
        unusable |= write_file(&path, file, &json);
    }
    if let Some((path, file)) = metrics_file {
        unusable |= write_file(&path, file, &report.prometheus());
    }
    unusable
}

/// The report on stdout, in the chosen format.
fn print_report(args: &SoakArgs, report: &Report, out: &mut impl Write) {
    let _ = match args.out.format {
        FormatArg::Human => {
            out.write_all(paint_summary(report, args.out.color.enabled()).as_bytes())
        }
        FormatArg::Json | FormatArg::Jsonl => {
            writeln!(out, "{}", serde_json::to_string(report).unwrap_or_default())
        }
    };
}

/// The thresholds the run broke (`--max-incomplete-rate`, `--max-p99`), as sentences.
fn broken_thresholds(args: &SoakArgs, report: &Report) -> Vec<String> {
    let mut broken = Vec::new();
    if let Some(max) = args.max_incomplete_rate
        && report.incomplete_rate() > max
    {
        broken.push(format!(
            "incomplete rate {:.5} > {max}",
            report.incomplete_rate()
        ));
    }
    if let Some(max) = args.max_p99 {
        let p99 = Duration::from_micros(report.terminal_us.quantile(0.99));
        if p99 > max || (report.terminal_us.count() == 0 && report.requests > 0) {
            broken.push(format!("p99 to terminal response {p99:?} > {max:?}"));
        }
    }
    broken
}

/// The human report, the first line coloured by what it says.
fn paint_summary(report: &Report, color: bool) -> String {
    let text = report.human();
    if !color {
        return text;
    }
    let tone = if report.incomplete == 0 && !report.interrupted && report.stopped.is_none() {
        "32"
    } else {
        "31"
    };
    match text.split_once('\n') {
        Some((first, rest)) => format!("\x1b[{tone}m{first}\x1b[0m\n{rest}"),
        None => text,
    }
}

/// First Ctrl-C: stop new calls, cancel those in flight, report. Second: exit at once.
/// The handler is registered when this is called (not when the task is first polled), so a
/// Ctrl-C during the handshake is caught too.
fn on_ctrl_c(live: Arc<Live>) -> impl Future<Output = ()> {
    #[cfg(unix)]
    let mut signals =
        tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt()).ok();
    async move {
        #[cfg(unix)]
        let mut next = async || match signals.as_mut() {
            Some(s) => s.recv().await.is_some(),
            None => false,
        };
        #[cfg(not(unix))]
        let next = async || tokio::signal::ctrl_c().await.is_ok();
        if !next().await {
            return;
        }
        live.interrupt();
        if next().await {
            eprintln!("\nmcp-verdict: interrupted twice; exiting without a report");
            std::process::exit(130);
        }
    }
}

fn write_file(path: &Path, mut file: File, text: &str) -> bool {
    match file.write_all(text.as_bytes()).and_then(|()| file.flush()) {
        Ok(()) => false,
        Err(e) => {
            eprintln!("mcp-verdict: {}: {e}", path.display());
            true
        }
    }
}

async fn progress_bar(live: Arc<Live>) {
    let start = tokio::time::Instant::now();
    loop {
        tokio::time::sleep(Duration::from_millis(250)).await;
        let r = live.snapshot();
        let secs = start.elapsed().as_secs_f64();
        let counts: Vec<String> = r.outcomes.iter().map(|(o, n)| format!("{o} {n}")).collect();
        eprint!(
            "\r\x1b[2K{secs:6.1}s  {} calls  {:.1}/s  {}",
            r.requests,
            r.answered as f64 / secs.max(0.001),
            counts.join("  ")
        );
    }
}

pub fn merge(files: &[PathBuf], out: Option<&Path>, json: bool) -> ExitCode {
    let out = match output_file("--report-out", out.map(Path::to_path_buf).as_ref()) {
        Ok(o) => o,
        Err(e) => return fail(e),
    };
    let mut merged = Report::default();
    for path in files {
        let report: Report = match std::fs::read_to_string(path)
            .map_err(|e| e.to_string())
            .and_then(|t| serde_json::from_str(&t).map_err(|e| format!("not a soak report: {e}")))
        {
            Ok(r) => r,
            Err(e) => return fail(format!("{}: {e}", path.display())),
        };
        merged.merge(&report);
    }
    let text = if json {
        serde_json::to_string_pretty(&merged).unwrap_or_default() + "\n"
    } else {
        merged.human()
    };
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
    let unusable = out.is_some_and(|(path, file)| {
        write_file(
            &path,
            file,
            &serde_json::to_string_pretty(&merged).unwrap_or_default(),
        )
    });
    // The one rule, on the merged counts: incomplete calls in any run make it 1.
    exit::Run {
        unusable,
        incomplete: merged.incomplete > 0,
        interrupted: false,
        threshold_broken: false,
        broken_pipe: false,
    }
    .code()
}

/// Cumulative counts once a second, for the report's over-time chart.
async fn sample(live: Arc<Live>, samples: Arc<Mutex<Vec<Sample>>>) {
    let start = tokio::time::Instant::now();
    loop {
        let r = live.snapshot();
        samples
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(Sample {
                t_ms: u64::try_from(start.elapsed().as_millis()).unwrap_or(u64::MAX),
                requests: r.requests,
                incomplete: r.incomplete,
            });
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

/// `--html` and `--junit` (`url` as shown). Returns whether a file could not be written.
fn write_reports(
    args: &SoakArgs,
    url: &str,
    report: &Report,
    samples: &[Sample],
    broken: &[String],
    unusable: bool,
) -> bool {
    let decision = soak_decision(args, report, broken, unusable);
    let mut failed = false;
    if let Some(path) = &args.html {
        failed |= report::write_file(
            path,
            &report::html::soak_page(url, report, samples, &decision),
        );
    }
    if let Some(path) = &args.junit {
        let gates = gates(args, report, broken);
        failed |= report::write_file(path, &report::junit::soak(url, report, &gates, &decision));
    }
    failed
}

/// What the exit code says, in words for the reports.
fn soak_decision(args: &SoakArgs, report: &Report, broken: &[String], unusable: bool) -> Decision {
    let not_complete = format!(
        "{} of {} calls were not complete",
        report.incomplete, report.requests
    );
    let (code, reason) = if unusable {
        (2, "a report file could not be written".to_owned())
    } else if report.interrupted {
        (130, "interrupted (Ctrl-C): partial report".to_owned())
    } else if !broken.is_empty() {
        (1, format!("threshold broken: {}", broken.join("; ")))
    } else if report.incomplete == 0 {
        (0, "no threshold broken".to_owned())
    } else if args.max_incomplete_rate.is_none() {
        (1, not_complete)
    } else {
        (0, format!("no threshold broken; {not_complete}"))
    };
    Decision { code, reason }
}

/// The JUnit test cases: one per gate the exit code checks (name, failure message). "Every
/// call complete" stands in for the incomplete-rate threshold when none is given.
fn gates(args: &SoakArgs, report: &Report, broken: &[String]) -> Vec<(String, Option<String>)> {
    let broken_by = |prefix: &str| broken.iter().find(|b| b.starts_with(prefix)).cloned();
    let mut gates = vec![match args.max_incomplete_rate {
        Some(max) => (
            format!("incomplete rate at most {max}"),
            broken_by("incomplete rate"),
        ),
        None => (
            "every call complete".to_owned(),
            (report.incomplete > 0).then(|| {
                format!(
                    "{} of {} calls not complete",
                    report.incomplete, report.requests
                )
            }),
        ),
    }];
    if let Some(max) = &args.max_p99 {
        gates.push((
            format!("p99 to terminal response at most {max:?}"),
            broken_by("p99"),
        ));
    }
    gates
}

/// Exports every finished call: its call span and, as its child, the exchange's span from its
/// send time (now minus its duration) with the head, first event and terminal response as
/// events. The session id as `policy` shows it.
#[cfg(feature = "otel")]
fn otel_hook(
    otlp: Arc<report::otel::Otlp>,
    url: &str,
    policy: mcp_verdict::Redaction,
) -> soak::CallHook {
    use report::otel::{Event, Exchange, server_of};
    use report::otel_call::Window;
    let server = server_of(url);
    let calls = std::sync::atomic::AtomicU64::new(0);
    Box::new(move |verdict, timings, session_id| {
        let duration = timings.end.unwrap_or_default();
        let events = [
            (timings.head, "http.response.head"),
            (timings.first_event, "sse.first_event"),
            (timings.terminal, "mcp.response"),
        ]
        .into_iter()
        .filter_map(|(at, name)| {
            at.map(|at| Event {
                at,
                name,
                method: None,
            })
        })
        .collect();
        let session = session_id.map(|id| policy.header_value("mcp-session-id", id));
        let x = Exchange {
            verdict,
            start: std::time::SystemTime::now() - duration,
            duration,
            events,
            session_id: session.as_deref(),
            server: server.clone(),
        };
        // A soak call is one exchange by construction (`Call::single`): its span and the
        // exchange's, its child, go out together.
        let n = calls.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let ids = otlp.call_ids(n);
        let mut window = Window::default();
        window.add(verdict, x.start, x.start + duration, x.session_id);
        otlp.record(&x, Some(ids));
        let call = mcp_verdict::Call::single(n, verdict, None);
        otlp.record_call(ids, &call, &window, server.as_ref());
    })
}

/// `--calls`: every finished call as one line (the JSON of `replay --calls --format jsonl`),
/// written and flushed as it finishes; nothing is kept. A soak call is one POST with a new id,
/// never re-sent, so each is [`Call::single`] of its verdict, not the traffic grouping (which
/// would read a load test's identical calls as automatic re-sends). The handshake and
/// `tools/list` exchanges come first (the second hook), one call each, as they are. Numbered in
/// the order written.
fn calls_hooks(out: Box<dyn Write + Send>) -> (soak::CallHook, soak::PreludeHook) {
    use mcp_verdict::Verdict;
    use mcp_verdict::proxy::{CallLog, CallSink};
    let log = CallLog::new(out);
    let next = Mutex::new(0u64);
    let client = format!("mcp-verdict@{}", env!("CARGO_PKG_VERSION"));
    let write = Arc::new(move |verdict: &Verdict| {
        let mut n = next.lock().unwrap_or_else(|p| p.into_inner());
        log.call(&Call::single(*n, verdict, Some(client.clone())));
        *n += 1;
    });
    let before = write.clone();
    (
        Box::new(move |verdict, _timings, _session_id| write(verdict)),
        Box::new(move |verdict| before(verdict)),
    )
}
