//! `soak` and `report merge`.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_verdict::adapters::{Client, Deadlines};
use mcp_verdict::soak::{self, Live, MixEntry, Report, SoakConfig};
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::SoakArgs;
use crate::probe::{fail, handshake_of, with_headers};
use crate::report::html::Sample;
use crate::report::{self, Decision};

/// Parses `500ms`, `30s`, `5m`, `1h`, or plain seconds.
pub(crate) fn parse_duration(flag: &str, text: &str) -> Result<Duration, String> {
    let t = text.trim();
    let (num, unit) = match t.find(|c: char| c.is_ascii_alphabetic()) {
        Some(i) => t.split_at(i),
        None => (t, "s"),
    };
    let n: f64 = num
        .trim()
        .parse()
        .map_err(|_| format!("--{flag} {text:?}: expected e.g. 500ms, 30s, 5m"))?;
    let secs = match unit {
        "ms" => n / 1000.0,
        "s" => n,
        "m" => n * 60.0,
        "h" => n * 3600.0,
        _ => return Err(format!("--{flag} {text:?}: unit must be ms, s, m or h")),
    };
    Duration::try_from_secs_f64(secs).map_err(|_| format!("--{flag} {text:?}: out of range"))
}

fn mix_of(args: &SoakArgs) -> Result<Vec<MixEntry>, String> {
    if let Some(path) = &args.mix {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let mix: Vec<MixEntry> = serde_json::from_str(&text)
            .map_err(|e| format!("{}: not a mix file: {e}", path.display()))?;
        if mix.is_empty() || mix.iter().all(|m| m.weight == 0) {
            return Err(format!(
                "{}: the mix has no entry with a weight",
                path.display()
            ));
        }
        return Ok(mix);
    }
    let args_value: Value = match serde_json::from_str(&args.args) {
        Ok(v @ Value::Object(_)) => v,
        Ok(_) => return Err("--args must be a JSON object".into()),
        Err(e) => return Err(format!("--args is not JSON: {e}")),
    };
    Ok(vec![MixEntry {
        tool: args.tool.clone().unwrap_or_default(),
        args: args_value,
        weight: 1,
    }])
}

pub fn run(args: SoakArgs) -> ExitCode {
    let prepared = (|| {
        let handshake = handshake_of(&args.protocol)?;
        let mix = mix_of(&args)?;
        let duration = args
            .duration
            .as_deref()
            .map(|d| parse_duration("duration", d))
            .transpose()?;
        let timeout = parse_duration("timeout", &args.timeout)?;
        let max_p99 = args
            .max_p99
            .as_deref()
            .map(|d| parse_duration("max-p99", d))
            .transpose()?;
        if args.rate.is_some_and(|r| r.is_nan() || r <= 0.0) {
            return Err("--rate must be positive".to_owned());
        }
        let interval_fits = |r: f64| {
            Duration::try_from_secs_f64(1.0 / r)
                .ok()
                .and_then(|d| std::time::Instant::now().checked_add(d))
                .is_some()
        };
        if let Some(r) = args.rate
            && !interval_fits(r)
        {
            return Err(format!(
                "--rate {r}: one call every {:e} s is past any representable time",
                1.0 / r
            ));
        }
        let listen = match &args.metrics_listen {
            Some(a) => {
                let addr: std::net::SocketAddr = a
                    .parse()
                    .map_err(|_| format!("--metrics-listen {a:?}: expected IP:PORT"))?;
                if !addr.ip().is_loopback() {
                    return Err(format!(
                        "--metrics-listen {a}: only loopback addresses are served"
                    ));
                }
                Some(addr)
            }
            None => None,
        };
        let builder = Client::builder(args.url.clone())
            .limits(args.limits.limits())
            .deadlines(Deadlines {
                overall: Some(timeout),
                ..Deadlines::default()
            });
        let client = with_headers(builder, &args.headers)?
            .build()
            .map_err(|e| format!("bad URL {e}"))?;
        let config = SoakConfig {
            mix,
            concurrency: args.concurrency.max(1),
            requests: args.requests,
            duration,
            rate: args.rate,
            handshake,
        };
        Ok::<_, String>((client, config, max_p99, listen))
    })();
    let (client, config, max_p99, listen) = match prepared {
        Ok(p) => p,
        Err(e) => return fail(e),
    };
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => return fail(format!("cannot start the async runtime: {e}")),
    };
    #[cfg(feature = "otel")]
    let otlp = match args
        .otlp
        .as_deref()
        .map(report::otel::Otlp::new)
        .transpose()
    {
        Ok(o) => o.map(Arc::new),
        Err(e) => return fail(e),
    };
    #[cfg(feature = "otel")]
    let live = Arc::new(match &otlp {
        Some(o) => Live::with_hook(otel_hook(o.clone(), &args.url)),
        None => Live::default(),
    });
    #[cfg(not(feature = "otel"))]
    let live = Arc::new(Live::default());
    let samples = Arc::new(Mutex::new(Vec::new()));
    let result = rt.block_on(async {
        if let Some(addr) = listen {
            let listener = tokio::net::TcpListener::bind(addr)
                .await
                .map_err(|e| format!("--metrics-listen {addr}: {e}"))?;
            tokio::spawn(serve_metrics(listener, live.clone()));
        }
        let stopper = live.clone();
        tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                stopper.stop.store(true, Ordering::Relaxed);
            }
        });
        let progress = std::io::stderr()
            .is_terminal()
            .then(|| tokio::spawn(progress_bar(live.clone())));
        let sampler = args
            .html
            .is_some()
            .then(|| tokio::spawn(sample(live.clone(), samples.clone())));
        let report = soak::run(&client, &config, live.clone())
            .await
            .map_err(|e| e.to_string());
        if let Some(p) = progress {
            p.abort();
            eprint!("\r\x1b[2K");
        }
        if let Some(s) = sampler {
            s.abort();
        }
        report
    });
    let report = match result {
        Ok(r) => r,
        Err(e) => return fail(e),
    };
    let mut samples = std::mem::take(&mut *samples.lock().unwrap_or_else(|p| p.into_inner()));
    // The final counts close the last interval; a sliver under half a second joins the one
    // before it rather than showing as a spike.
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
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(report.human().as_bytes());
    let mut unusable = false;
    if let Some(path) = &args.report_out {
        unusable |= write_file(
            path,
            &serde_json::to_string_pretty(&report).unwrap_or_default(),
        );
    }
    if let Some(path) = &args.metrics_file {
        unusable |= write_file(path, &report.prometheus());
    }
    let mut broken = Vec::new();
    if let Some(max) = args.max_incomplete_rate
        && report.incomplete_rate() > max
    {
        broken.push(format!(
            "incomplete rate {:.5} > {max}",
            report.incomplete_rate()
        ));
    }
    if let Some(max) = max_p99 {
        let p99 = Duration::from_micros(report.terminal_us.quantile(0.99));
        if p99 > max || (report.terminal_us.count() == 0 && report.requests > 0) {
            broken.push(format!("p99 to terminal response {p99:?} > {max:?}"));
        }
    }
    for b in &broken {
        let _ = writeln!(out, "threshold broken: {b}");
    }
    #[cfg(feature = "otel")]
    if let Some(o) = &otlp
        && let Err(e) = o.shutdown()
    {
        eprintln!("mcp-verdict: {e}");
        unusable = true;
    }
    if args.html.is_some() || args.junit.is_some() {
        unusable |= write_reports(&args, &report, &samples, &broken, unusable);
    }
    if unusable {
        ExitCode::from(2)
    } else if broken.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

fn write_file(path: &Path, text: &str) -> bool {
    match std::fs::write(path, text) {
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
            r.requests as f64 / secs.max(0.001),
            counts.join("  ")
        );
    }
}

/// Answers every connection with the current Prometheus text.
async fn serve_metrics(listener: tokio::net::TcpListener, live: Arc<Live>) {
    while let Ok((mut stream, _)) = listener.accept().await {
        let live = live.clone();
        tokio::spawn(async move {
            let mut buf = [0u8; 2048];
            let _ = tokio::time::timeout(Duration::from_secs(2), stream.read(&mut buf)).await;
            let body = live.snapshot().prometheus();
            let head = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            let _ = stream.write_all(head.as_bytes()).await;
            let _ = stream.write_all(body.as_bytes()).await;
        });
    }
}

pub fn merge(files: &[PathBuf], out: Option<&Path>, json: bool) -> ExitCode {
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
    if let Some(path) = out
        && write_file(
            path,
            &serde_json::to_string_pretty(&merged).unwrap_or_default(),
        )
    {
        return ExitCode::from(2);
    }
    ExitCode::SUCCESS
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

/// `--html` and `--junit`. The gates are what the exit code checks; "every call complete"
/// stands in for the incomplete-rate threshold when none is given. Returns whether a file could
/// not be written.
fn write_reports(
    args: &SoakArgs,
    report: &Report,
    samples: &[Sample],
    broken: &[String],
    unusable: bool,
) -> bool {
    let decision = if unusable {
        Decision {
            code: 2,
            reason: "a report file could not be written".into(),
        }
    } else if broken.is_empty() {
        let note = if report.incomplete > 0 {
            format!(
                "; {} of {} calls were not complete",
                report.incomplete, report.requests
            )
        } else {
            String::new()
        };
        Decision {
            code: 0,
            reason: format!("no threshold broken{note}"),
        }
    } else {
        Decision {
            code: 1,
            reason: format!("threshold broken: {}", broken.join("; ")),
        }
    };
    let mut gates = Vec::new();
    match args.max_incomplete_rate {
        Some(max) => gates.push((
            format!("incomplete rate at most {max}"),
            broken
                .iter()
                .find(|b| b.starts_with("incomplete rate"))
                .cloned(),
        )),
        None => gates.push((
            "every call complete".to_owned(),
            (report.incomplete > 0).then(|| {
                format!(
                    "{} of {} calls not complete",
                    report.incomplete, report.requests
                )
            }),
        )),
    }
    if let Some(max) = &args.max_p99 {
        gates.push((
            format!("p99 to terminal response at most {max}"),
            broken.iter().find(|b| b.starts_with("p99")).cloned(),
        ));
    }
    let mut failed = false;
    if let Some(path) = &args.html {
        failed |= report::write_file(
            path,
            &report::html::soak_page(&args.url, report, samples, &decision),
        );
    }
    if let Some(path) = &args.junit {
        failed |= report::write_file(
            path,
            &report::junit::soak(&args.url, report, &gates, &decision),
        );
    }
    failed
}

/// Exports every finished call: a span from its send time (now minus its duration) with the
/// head, first event and terminal response as events.
#[cfg(feature = "otel")]
fn otel_hook(otlp: Arc<report::otel::Otlp>, url: &str) -> soak::CallHook {
    use report::otel::{Event, Exchange, server_of};
    let server = server_of(url);
    Box::new(move |verdict, timings| {
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
        otlp.record(&Exchange {
            verdict,
            start: std::time::SystemTime::now() - duration,
            duration,
            events,
            session_id: None,
            server: server.clone(),
        });
    })
}
