//! `mcp-verdict probe`: handshake, `tools/list`, optionally one `tools/call`, one verdict each.

use std::io::Write;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use mcp_verdict::Redaction;
use mcp_verdict::adapters::{Client, Deadlines, Handshake, Timings};
use mcp_verdict::har::{self, Entry};
use mcp_verdict::replay::{self, Item};
use mcp_verdict::soak::tool_names;
use mcp_verdict::{Outcome, ProtocolVersion, Verdict};
use serde_json::{Value, json};

use crate::args::{OutputFormatArg, ProbeArgs};
use crate::cli::{endpoint, exit_code, fail, handshake_of, runtime, tool_args, with_headers};
use crate::output::Printer;
use crate::report::{Run, Trace, TraceObserver};
use crate::tool_args;

pub fn run(args: ProbeArgs) -> ExitCode {
    // Messages before the client exists name the URL at most (never a header value).
    let (handshake, tool_args, record) = match setup(&args) {
        Ok(p) => p,
        Err(e) => return fail(args.redact.policy().text(&e)),
    };
    let recorder = Arc::new(Mutex::new(Vec::new()));
    let client = match client_for(&args, &recorder) {
        Ok(c) => c,
        Err(e) => return fail(args.redact.policy().text(&e)),
    };
    // The one policy, with the user's -H headers: for everything this command shows.
    let policy = client.redaction();
    let runtime = match runtime() {
        Ok(rt) => rt,
        Err(code) => return code,
    };
    #[cfg(feature = "otel")]
    let otlp = match args
        .otlp
        .as_deref()
        .map(crate::report::otel::Otlp::new)
        .transpose()
    {
        Ok(o) => o,
        Err(e) => return fail(policy.text(&e)),
    };
    let calls = match (&args.tool, args.all_tools) {
        (Some(name), _) => Calls::One(name.clone(), tool_args),
        (None, true) => Calls::All,
        (None, false) => Calls::None,
    };
    let began = SystemTime::now();
    let judged = runtime.block_on(session(&client, handshake, calls));
    let recorded = recorder.lock().unwrap_or_else(|p| p.into_inner()).clone();
    if args.calls {
        return print_calls(&args, judged, &recorded, record, &policy);
    }

    let mut printer = args.out.printer();
    let human = args.out.format == OutputFormatArg::Human;
    if human {
        printer.note(&policy.text(&answer_summary(&recorded, client.protocol())));
    }
    let shown_url = policy.url(&args.url).into_owned();
    let verdicts = print_verdicts(&mut printer, &args.url, judged, &recorded, human, &policy);
    printer.end_file(&shown_url, None);
    let mut unusable = false;
    #[cfg(feature = "otel")]
    let exporting = otlp.is_some();
    #[cfg(not(feature = "otel"))]
    let exporting = false;
    if args.out.wants_run() || exporting {
        let entries = recorder.lock().unwrap_or_else(|p| p.into_inner());
        let judged: Vec<Verdict> = verdicts.iter().map(|(v, _)| v.clone()).collect();
        let calls = mcp_verdict::replay::calls_of(&judged, &entries);
        let run = Run {
            command: "probe",
            sources: vec![shown_url.clone()],
            traces: traces(
                &shown_url,
                verdicts,
                &entries,
                &policy,
                args.limits.limits(),
                began,
            ),
            skipped: Vec::new(),
            calls: calls.into_iter().map(|c| (shown_url.clone(), c)).collect(),
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
                eprintln!("mcp-verdict: {}", policy.text(&e));
                unusable = true;
            }
        }
    }
    printer.finish();
    if let (Some(file), Some(path)) = (record, &args.record) {
        unusable |= !write_har(path, file, &recorded);
    }
    exit_code(&printer, unusable)
}

/// The arguments that need checking before any work. The record file is opened here, so a bad
/// path fails at once.
fn setup(args: &ProbeArgs) -> Result<(Handshake, Value, Option<std::fs::File>), String> {
    endpoint(&args.url)?;
    let handshake = handshake_of(&args.protocol)?;
    let tool_args = tool_args(args.args.as_deref())?;
    args.out.create_junit()?;
    let record = args
        .record
        .as_ref()
        .map(|p| std::fs::File::create(p).map_err(|e| format!("{}: {e}", p.display())))
        .transpose()?;
    Ok((handshake, tool_args, record))
}

/// The client the probe runs with, recording into `recorder` when anything shows the bodies.
fn client_for(args: &ProbeArgs, recorder: &Arc<Mutex<Vec<Entry>>>) -> Result<Client, String> {
    let mut builder = Client::builder(args.url.clone())
        .redaction(args.redact.policy())
        .limits(args.limits.limits())
        .deadlines(Deadlines {
            overall: Some(args.timeout),
            idle: args.idle_timeout,
            ..Deadlines::default()
        });
    #[cfg(feature = "otel")]
    let otlp_asked = args.otlp.is_some();
    #[cfg(not(feature = "otel"))]
    let otlp_asked = false;
    // Bodies are kept only for what shows them (`--record`, `--html`, JUnit, OTLP), and then at
    // most `max_body_bytes + 1` per exchange; otherwise nothing is copied.
    // Human output shows the server's answers (server info, tools, a tool's error text).
    let human = args.out.format == OutputFormatArg::Human;
    if args.record.is_some() || args.out.wants_run() || otlp_asked || human || args.calls {
        builder = builder.record(recorder.clone());
    }
    with_headers(builder, &args.headers)?
        .build()
        .map_err(|e| format!("bad URL {e}"))
}

/// `--calls`: the session's exchanges grouped into logical calls, printed; the recording
/// written if asked.
fn print_calls(
    args: &ProbeArgs,
    judged: Vec<(Verdict, Measured)>,
    recorded: &[Entry],
    record: Option<std::fs::File>,
    policy: &Redaction,
) -> ExitCode {
    let verdicts: Vec<Verdict> = judged
        .into_iter()
        .enumerate()
        .map(|(i, (mut v, _))| {
            v.index = i as u64;
            v
        })
        .collect();
    let calls = mcp_verdict::replay::calls_of(&verdicts, recorded);
    let unusable = match (record, &args.record) {
        (Some(file), Some(path)) => !write_har(path, file, recorded),
        _ => false,
    };
    crate::calls_out::print(&args.out, &policy.url(&args.url), &calls, unusable)
}

/// Prints each verdict (numbered in session order), with the hint for a 404 at the root path
/// and, in human output, a tool error's text. Returns the verdicts with their measurements.
fn print_verdicts(
    printer: &mut Printer<impl Write>,
    url: &str,
    judged: Vec<(Verdict, Measured)>,
    recorded: &[Entry],
    human: bool,
    policy: &Redaction,
) -> Vec<(Verdict, Measured)> {
    let shown_url = policy.url(url);
    printer.begin_file(&shown_url);
    let mut verdicts = Vec::with_capacity(judged.len());
    let mut hinted = false;
    for (i, (mut v, live)) in judged.into_iter().enumerate() {
        v.index = i as u64;
        if v.status == Some(404) && root_path(url) && !hinted {
            hinted = true;
            eprintln!(
                "mcp-verdict: hint: 404 at the root path; MCP endpoints usually live at /mcp (try {}mcp)",
                shown_url.trim_end_matches('/').to_owned() + "/"
            );
        }
        printer.item(&shown_url, &Item::Verdict(Box::new(v.clone())));
        if human
            && v.outcome == Outcome::ToolError
            && let Some(text) = tool_error_text(recorded)
        {
            printer.note(&format!("      tool error text: {}\n", policy.text(&text)));
        }
        verdicts.push((v, live));
    }
    verdicts
}

/// Which tools the probe calls after listing them.
enum Calls {
    None,
    /// `--tool NAME --args JSON`.
    One(String, Value),
    /// `--all-tools`: every listed tool, arguments from its `inputSchema`.
    All,
}

/// How many `tools/list` pages `--all-tools` reads at most.
const MAX_LIST_PAGES: usize = 32;

/// Writes the recorded entries as HAR into the file opened before the run; false (said on
/// stderr) when it cannot.
fn write_har(path: &std::path::Path, file: std::fs::File, entries: &[har::Entry]) -> bool {
    let mut f = std::io::BufWriter::new(file);
    let written = har::write(entries, &mut f).and_then(|()| f.flush());
    if let Err(e) = &written {
        eprintln!("mcp-verdict: {}: {e}", path.display());
    }
    written.is_ok()
}

/// What was measured live for one exchange: its timings and each message's arrival.
type Measured = Option<(SystemTime, Timings, Vec<Duration>)>;

/// The probe sequence. Stops early when the handshake fails. The handshake's exchanges come
/// without live timings (the client runs them as one step); the others are measured.
async fn session(client: &Client, handshake: Handshake, calls: Calls) -> Vec<(Verdict, Measured)> {
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
    let mut tools = Vec::new();
    let mut cursor: Option<Value> = None;
    for _ in 0..MAX_LIST_PAGES {
        let params = match cursor.take() {
            Some(c) => json!({"cursor": c}),
            None => json!({}),
        };
        let (verdict, answer) = measured(client, "tools/list", params).await;
        verdicts.push(verdict);
        let Some(result) = answer.as_ref().and_then(|a| a.get("result")) else {
            break;
        };
        if let Some(list) = result.get("tools").and_then(Value::as_array) {
            tools.extend(list.iter().cloned());
        }
        // Only --all-tools needs every page.
        match result.get("nextCursor") {
            Some(c) if matches!(calls, Calls::All) && !c.is_null() => cursor = Some(c.clone()),
            _ => break,
        }
    }
    let planned: Vec<(String, Value)> = match calls {
        Calls::None => Vec::new(),
        Calls::One(name, args) => {
            // Said before the call (which is made all the same: the server's answer is the point).
            let names: Vec<&str> = tools
                .iter()
                .filter_map(|t| t.get("name")?.as_str())
                .collect();
            if !names.contains(&name.as_str()) {
                eprintln!(
                    "mcp-verdict: tool {name:?} is not in tools/list (it lists: {}); calling it anyway",
                    if names.is_empty() {
                        "nothing".into()
                    } else {
                        names.join(", ")
                    }
                );
            }
            vec![(name, args)]
        }
        Calls::All => tools
            .iter()
            .filter_map(|t| {
                let name = t.get("name")?.as_str()?.to_owned();
                let schema = t.get("inputSchema").unwrap_or(&Value::Null);
                Some((name, tool_args::arguments_for(schema)))
            })
            .collect(),
    };
    for (i, (name, args)) in planned.into_iter().enumerate() {
        // A progress token, so servers that report progress do (and the stream shows it).
        let token = format!("probe-{}", i + 1);
        let params = json!({"name": name, "arguments": args, "_meta": {"progressToken": token}});
        verdicts.push(measured(client, "tools/call", params).await.0);
    }
    verdicts
}

/// One request, with every server message's arrival time (from just before sending), and the
/// response message when one came.
async fn measured(
    client: &Client,
    method: &str,
    params: Value,
) -> ((Verdict, Measured), Option<Value>) {
    let (sent, wall) = (Instant::now(), SystemTime::now());
    let mut call = client.request(method, params).await;
    let mut arrivals = Vec::new();
    let mut answer = None;
    while let Some(m) = call.next_message().await {
        arrivals.push(sent.elapsed());
        if m.terminal {
            answer = m.value().ok();
        }
    }
    let (verdict, timings) = call.finish().await;
    ((verdict, Some((wall, timings, arrivals))), answer)
}

/// Traces for the report: messages and byte positions from the recorded bodies (judged again,
/// in order, as replay would), times from what was measured live.
fn traces(
    url: &str,
    verdicts: Vec<(Verdict, Measured)>,
    recorded: &[har::Entry],
    policy: &Redaction,
    limits: mcp_verdict::Limits,
    began: SystemTime,
) -> Vec<Trace> {
    let mut driver = mcp_verdict::Driver::new(limits);
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
            replay::judge_entry_with(&mut driver, entry, &mut std::iter::empty(), &mut seen);
            let mut trace = Trace::from_entry(url, entry, verdict, seen, policy);
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

fn root_path(url: &str) -> bool {
    reqwest::Url::parse(url).is_ok_and(|u| u.path() == "/" || u.path().is_empty())
}

/// The JSON-RPC response in a recorded body: the JSON body, or the SSE event that is one.
fn response_of(entry: &Entry) -> Option<Value> {
    let body = std::str::from_utf8(&entry.response_body).ok()?;
    if let Ok(v) = serde_json::from_str::<Value>(body) {
        return Some(v);
    }
    let mut data = String::new();
    let mut found = None;
    for line in body.lines().chain(std::iter::once("")) {
        if let Some(d) = line.strip_prefix("data:") {
            data.push_str(d.strip_prefix(' ').unwrap_or(d));
            data.push('\n');
        } else if line.is_empty() && !data.is_empty() {
            if let Ok(v) = serde_json::from_str::<Value>(&data)
                && (v.get("result").is_some() || v.get("error").is_some())
            {
                found = Some(v);
            }
            data.clear();
        }
    }
    found
}

fn method_of(entry: &Entry) -> Option<String> {
    serde_json::from_slice::<Value>(&entry.request_body)
        .ok()?
        .get("method")?
        .as_str()
        .map(str::to_owned)
}

/// Lines naming the server, the protocol it speaks, and its tools (human output).
fn answer_summary(entries: &[Entry], spoken: Option<ProtocolVersion>) -> String {
    let mut out = String::new();
    for e in entries {
        let (Some(method), Some(resp)) = (method_of(e), response_of(e)) else {
            continue;
        };
        match method.as_str() {
            "initialize" | "server/discover" if resp.get("result").is_some() => {
                let r = &resp["result"];
                let info = &r["serverInfo"];
                let name = info["name"].as_str().unwrap_or("(unnamed)");
                let version = info["version"].as_str().unwrap_or("?");
                let protocol = spoken.map_or("?", ProtocolVersion::as_str);
                out.push_str(&format!(
                    "server: {name} {version}, protocol {protocol} (via {method})\n"
                ));
            }
            "tools/list" => {
                let names = tool_names(&resp).unwrap_or_default();
                out.push_str(&format!("tools ({}): {}\n", names.len(), names.join(", ")));
            }
            _ => {}
        }
    }
    if !out.is_empty() {
        out.push('\n');
    }
    out
}

/// The text of the last `tools/call` result with `isError: true`.
fn tool_error_text(entries: &[Entry]) -> Option<String> {
    let e = entries
        .iter()
        .rev()
        .find(|e| method_of(e).as_deref() == Some("tools/call"))?;
    let resp = response_of(e)?;
    let texts: Vec<&str> = resp
        .pointer("/result/content")?
        .as_array()?
        .iter()
        .filter_map(|c| c.get("text").and_then(Value::as_str))
        .collect();
    (!texts.is_empty()).then(|| texts.join(" / "))
}
