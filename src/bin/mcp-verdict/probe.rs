//! `mcp-verdict probe`: handshake, `tools/list`, optionally one `tools/call`, one verdict each.

use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use mcp_verdict::adapters::{Client, ClientBuilder, Deadlines, Handshake, Timings};
use mcp_verdict::replay::{self, Item};
use mcp_verdict::{ProtocolVersion, Verdict};
use mcp_verdict::{har, redact};
use serde_json::{Value, json};

use crate::report::{Run, Trace, TraceObserver};
use crate::{ProbeArgs, exit_code};

pub(crate) fn fail(msg: impl std::fmt::Display) -> ExitCode {
    eprintln!("mcp-verdict: {msg}");
    ExitCode::from(2)
}

fn seconds(name: &str, s: f64) -> Result<Duration, String> {
    Duration::try_from_secs_f64(s).map_err(|_| format!("--{name} {s}: not a number of seconds"))
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
            return Err(format!("--header {:?}: expected 'Name: value'", redact(h)));
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

pub fn run(args: ProbeArgs) -> ExitCode {
    let handshake = match handshake_of(&args.protocol) {
        Ok(h) => h,
        Err(e) => return fail(e),
    };
    let tool_args: Value = match serde_json::from_str(&args.args) {
        Ok(v @ Value::Object(_)) => v,
        Ok(_) => return fail("--args must be a JSON object"),
        Err(e) => return fail(format!("--args is not JSON: {e}")),
    };
    let overall = match seconds("timeout", args.timeout) {
        Ok(d) => d,
        Err(e) => return fail(e),
    };
    let idle = match args
        .idle_timeout
        .map(|s| seconds("idle-timeout", s))
        .transpose()
    {
        Ok(d) => d,
        Err(e) => return fail(e),
    };
    let recorder = Arc::new(Mutex::new(Vec::new()));
    let mut builder = Client::builder(args.url.clone())
        .limits(args.limits.limits())
        .deadlines(Deadlines {
            overall: Some(overall),
            idle,
            ..Deadlines::default()
        });
    #[cfg(feature = "otel")]
    let otlp_asked = args.otlp.is_some();
    #[cfg(not(feature = "otel"))]
    let otlp_asked = false;
    // Bodies are kept only for what shows them (`--record`, `--html`, JUnit, OTLP), and then at
    // most `max_body_bytes + 1` per exchange; otherwise nothing is copied.
    if args.record.is_some() || args.out.wants_run() || otlp_asked {
        builder = builder.record(recorder.clone());
    }
    let builder = match with_headers(builder, &args.headers) {
        Ok(b) => b,
        Err(e) => return fail(e),
    };
    let client = match builder.build() {
        Ok(c) => c,
        Err(e) => return fail(format!("bad URL {e}")),
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
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
        .map(crate::report::otel::Otlp::new)
        .transpose()
    {
        Ok(o) => o,
        Err(e) => return fail(e),
    };
    let began = SystemTime::now();
    let judged = runtime.block_on(session(&client, handshake, args.tool.as_deref(), tool_args));

    let mut printer = args.out.printer();
    let shown_url = redact::url(&args.url);
    printer.begin_file(&shown_url);
    let mut verdicts = Vec::with_capacity(judged.len());
    for (i, (mut v, live)) in judged.into_iter().enumerate() {
        v.index = i as u64;
        printer.item(&shown_url, &Item::Verdict(Box::new(v.clone())));
        verdicts.push((v, live));
    }
    printer.end_file(&shown_url);
    let mut unusable = false;
    #[cfg(feature = "otel")]
    let exporting = otlp.is_some();
    #[cfg(not(feature = "otel"))]
    let exporting = false;
    if args.out.wants_run() || exporting {
        let entries = recorder.lock().unwrap_or_else(|p| p.into_inner());
        let run = Run {
            command: "probe",
            sources: vec![shown_url.clone()],
            traces: traces(&shown_url, verdicts, &entries, args.limits.limits(), began),
            skipped: Vec::new(),
        };
        if args.out.wants_run() {
            unusable |= args.out.write_reports(&mut printer, &run, false);
        }
        #[cfg(feature = "otel")]
        if let Some(otlp) = &otlp {
            for t in &run.traces {
                otlp.record(&crate::report::otel_exchange(t, &shown_url));
            }
            if let Err(e) = otlp.shutdown() {
                eprintln!("mcp-verdict: {e}");
                unusable = true;
            }
        }
    }
    printer.finish();
    if let Some(path) = &args.record {
        let entries = recorder.lock().unwrap_or_else(|p| p.into_inner());
        let written = std::fs::File::create(path)
            .map(std::io::BufWriter::new)
            .and_then(|mut f| har::write(&entries, &mut f));
        if let Err(e) = written {
            eprintln!("mcp-verdict: {}: {e}", path.display());
            unusable = true;
        }
    }
    exit_code(&printer, unusable)
}

/// What was measured live for one exchange: its timings and each message's arrival.
type Measured = Option<(SystemTime, Timings, Vec<Duration>)>;

/// The probe sequence. Stops early when the handshake fails. The handshake's exchanges come
/// without live timings (the client runs them as one step); the others are measured.
async fn session(
    client: &Client,
    handshake: Handshake,
    tool: Option<&str>,
    args: Value,
) -> Vec<(Verdict, Measured)> {
    let mut verdicts: Vec<(Verdict, Measured)> = client
        .handshake(handshake)
        .await
        .into_iter()
        .map(|v| (v, None))
        .collect();
    if !verdicts
        .last()
        .is_some_and(|(v, _)| v.complete && v.error_code.is_none())
    {
        return verdicts;
    }
    verdicts.push(measured(client, "tools/list", json!({})).await);
    if let Some(name) = tool {
        // A progress token, so servers that report progress do (and the stream shows it).
        let params =
            json!({"name": name, "arguments": args, "_meta": {"progressToken": "probe-1"}});
        verdicts.push(measured(client, "tools/call", params).await);
    }
    verdicts
}

/// One request, with every server message's arrival time (from just before sending).
async fn measured(client: &Client, method: &str, params: Value) -> (Verdict, Measured) {
    let (sent, wall) = (Instant::now(), SystemTime::now());
    let mut call = client.request(method, params).await;
    let mut arrivals = Vec::new();
    while call.next_message().await.is_some() {
        arrivals.push(sent.elapsed());
    }
    let (verdict, timings) = call.finish().await;
    (verdict, Some((wall, timings, arrivals)))
}

/// Traces for the report: messages and byte positions from the recorded bodies (judged again,
/// in order, as replay would), times from what was measured live.
fn traces(
    url: &str,
    verdicts: Vec<(Verdict, Measured)>,
    recorded: &[har::Entry],
    limits: mcp_verdict::Limits,
    began: SystemTime,
) -> Vec<Trace> {
    let mut session = mcp_verdict::Session::new(limits);
    let aligned = recorded.len() == verdicts.len();
    // The handshake's exchanges ran one after another from `began`: each starts where the
    // previous one ended (their own send times were not taken).
    let mut next_start = began;
    verdicts
        .into_iter()
        .enumerate()
        .map(|(i, (verdict, live))| {
            let Some(entry) = recorded.get(i).filter(|_| aligned) else {
                return Trace::bare(url, verdict);
            };
            let mut seen = TraceObserver::default();
            replay::judge_entry_with(&mut session, entry, &mut std::iter::empty(), &mut seen);
            let mut trace = Trace::from_entry(url, entry, verdict, seen);
            if let Some((wall, timings, arrivals)) = live {
                trace = trace.live(&timings, &arrivals);
                next_start = wall;
            }
            trace.started = Some(next_start);
            next_start += Duration::from_secs_f64(trace.end_ms.unwrap_or(0.0).max(0.0) / 1000.0);
            trace
        })
        .collect()
}

fn redact(header: &str) -> String {
    match header.split_once(':') {
        Some((name, _)) => format!("{name}: <redacted>"),
        None => "<redacted>".into(),
    }
}
