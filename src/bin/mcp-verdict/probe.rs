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
use mcp_verdict::{Advice, Outcome, ProtocolVersion, Verdict};
use serde_json::{Value, json};

use crate::args::{ElicitArg, OutputFormatArg, ProbeArgs};
use crate::cli::{
    check_out, create_out, endpoint, exit_code, fail, handshake_of, otlp_available, runtime,
    tool_args, with_headers, with_tls,
};
use crate::output::{Printer, SkippedTool};
use crate::report::{Run, Trace, TraceObserver};
use crate::tool_args;

mod answers;
mod listen;
mod tasks;
mod tool_headers;

pub fn run(args: ProbeArgs) -> ExitCode {
    // Messages before the client exists name the URL at most (never a header value).
    let (handshake, tool_args, overrides, record) = match setup(&args) {
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
        (None, true) => Calls::All {
            include_destructive: args.include_destructive,
            overrides,
        },
        (None, false) => Calls::None,
    };
    #[cfg(feature = "otel")]
    let exporting = otlp.is_some();
    #[cfg(not(feature = "otel"))]
    let exporting = false;
    // Arrival times are kept only for the timelines that draw them, and only as many as a
    // timeline keeps messages: an endless stream costs no more than a short one.
    let keep = if args.out.wants_run() || exporting {
        args.out.max_timeline_messages
    } else {
        0
    };
    let began = SystemTime::now();
    let Session {
        verdicts: judged,
        no_server,
        unlisted,
        skipped,
    } = runtime.block_on(session(
        &client,
        handshake,
        calls,
        Conduct {
            keep,
            elicit: args.elicit,
            follow_tasks: !args.no_follow_tasks,
            task_timeout: args.task_timeout,
        },
    ));
    // Unusable input (exit 2): no server answered the handshake, or the tool is not listed.
    if no_server && let Some((last, _)) = judged.last() {
        eprintln!(
            "mcp-verdict: no server for the handshake: {}",
            policy.text(&last.retry.reason)
        );
    }
    let refused = no_server || unlisted.is_some();
    // Taken, not copied: the recording holds up to `--record-max-body-bytes` per exchange.
    let recorded = std::mem::take(&mut *recorder.lock().unwrap_or_else(|p| p.into_inner()));
    if args.record.is_some() || args.out.wants_run() || exporting {
        say_cut(&recorded, &args.limits.limits(), args.record_max_body_bytes);
    }
    let requests_unlisted = client.server_requests_unlisted();
    crate::cli::warn_unlisted(
        &policy.url(&args.url),
        requests_unlisted,
        args.limits.limits(),
    );
    if args.calls {
        return print_calls(&args, judged, &recorded, record, &policy, refused);
    }

    let mut printer = args.out.printer();
    let human = args.out.format == OutputFormatArg::Human;
    if human {
        printer.note(&policy.text(&answer_summary(&recorded, client.protocol())));
    }
    let shown_url = policy.url(&args.url).into_owned();
    let verdicts = print_verdicts(&mut printer, &args.url, judged, &recorded, human, &policy);
    if args.all_tools {
        printer.skipped_tools(&shown_url, &skipped);
    }
    printer.end_file(&shown_url, None);
    let mut unusable = refused;
    if args.out.wants_run() || exporting {
        let judged: Vec<Verdict> = verdicts.iter().map(|(v, _)| v.clone()).collect();
        let calls = mcp_verdict::replay::calls_of(&judged, &recorded);
        let run = Run {
            command: "probe",
            sources: vec![shown_url.clone()],
            traces: traces(
                &shown_url,
                verdicts,
                &recorded,
                &policy,
                args.limits.limits(),
                keep,
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
            crate::report::otel_run::export(otlp, &run, &shown_url);
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

/// The arguments that need checking before any work. The record file is opened here, and the
/// report's path checked, so a bad path fails at once (before anything is sent).
fn setup(args: &ProbeArgs) -> Result<Setup, String> {
    endpoint(&args.url)?;
    let handshake = handshake_of(&args.protocol)?;
    let tool_args = tool_args(args.args.as_deref())?;
    let overrides = per_tool_args(args.tool_args.as_deref())?;
    otlp_available(args.otlp.as_deref())?;
    if let Some(path) = &args.out.html {
        check_out("--html", path)?;
    }
    args.out.create_junit()?;
    let record = args
        .record
        .as_deref()
        .map(|p| create_out("--record", p))
        .transpose()?;
    Ok((handshake, tool_args, overrides, record))
}

/// What [`setup`] checked: the handshake, `--args`, `--tool-args`, the record file.
type Setup = (
    Handshake,
    Value,
    serde_json::Map<String, Value>,
    Option<std::fs::File>,
);

/// `--tool-args`: an object of argument objects, by tool name.
fn per_tool_args(text: Option<&str>) -> Result<serde_json::Map<String, Value>, String> {
    let Some(text) = text else {
        return Ok(serde_json::Map::new());
    };
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(m)) if m.values().all(Value::is_object) => Ok(m),
        Ok(_) => Err("--tool-args must be a JSON object of argument objects by tool name".into()),
        Err(e) => Err(format!("--tool-args is not JSON: {e}")),
    }
}

/// The client the probe runs with, recording into `recorder` when anything shows the bodies.
fn client_for(args: &ProbeArgs, recorder: &Arc<Mutex<Vec<Entry>>>) -> Result<Client, String> {
    let mut builder = Client::builder(args.url.clone())
        .redaction(args.redact.policy())
        .limits(args.limits.limits())
        .record_max_body_bytes(args.record_max_body_bytes)
        .capabilities(answers::capabilities())
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
    // most `min(record_max_body_bytes, max_body_bytes) + 1` per exchange; otherwise nothing is
    // copied.
    // Human output shows the server's answers (server info, tools, a tool's error text).
    let human = args.out.format == OutputFormatArg::Human;
    if args.record.is_some() || args.out.wants_run() || otlp_asked || human || args.calls {
        builder = builder.record(recorder.clone());
    }
    with_tls(with_headers(builder, &args.headers)?, &args.tls)?
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
    refused: bool,
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
    let unusable = refused
        | match (record, &args.record) {
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
    /// `--all-tools`: every listed tool that is safe to call (or every one, with
    /// `--include-destructive`), arguments from its `inputSchema`.
    All {
        include_destructive: bool,
        /// `--tool-args`: arguments by tool name, instead of made ones.
        overrides: serde_json::Map<String, Value>,
    },
}

/// What the probe session came to.
struct Session {
    /// Every exchange's verdict, in order.
    verdicts: Vec<(Verdict, Measured)>,
    /// No exchange of the handshake reached a server (each one `CONNECTION_FAILED`).
    no_server: bool,
    /// `--tool NAME` that the (whole) `tools/list` does not list: not called.
    unlisted: Option<String>,
    /// `--all-tools`: the tools not called, and why.
    skipped: Vec<SkippedTool>,
}

/// Why `--all-tools` does not call `tool` without `--include-destructive`; `None` when its
/// annotations say it is safe: `readOnlyHint: true`, or `destructiveHint: false`. A tool with
/// neither is taken at MCP's defaults (`readOnlyHint: false`, `destructiveHint: true`): it may
/// be destructive, so it is not called either.
fn destructive(tool: &Value) -> Option<&'static str> {
    let hint = |name: &str| tool.get("annotations")?.get(name)?.as_bool();
    if hint("readOnlyHint") == Some(true) {
        return None;
    }
    match hint("destructiveHint") {
        Some(false) => None,
        Some(true) => Some("declared destructive (destructiveHint: true)"),
        None => Some(
            "may be destructive: not read-only and no destructiveHint (MCP's default is destructive)",
        ),
    }
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
async fn session(client: &Client, handshake: Handshake, calls: Calls, conduct: Conduct) -> Session {
    let mut verdicts: Vec<(Verdict, Measured)> = client
        .handshake(handshake)
        .await
        .into_iter()
        .map(|v| (v, None))
        .collect();
    let mut session = Session {
        no_server: !verdicts.is_empty()
            && verdicts
                .iter()
                .all(|(v, _)| v.outcome == Outcome::ConnectionFailed),
        verdicts: Vec::new(),
        unlisted: None,
        skipped: Vec::new(),
    };
    if !verdicts
        .last()
        .is_some_and(|(v, _)| v.complete && v.error_code.is_none())
    {
        session.verdicts = verdicts;
        return session;
    }
    after_handshake(client, calls, conduct, &mut verdicts, &mut session).await;
    // In the order the exchanges began: the recording's order.
    verdicts.sort_by_key(|(v, _)| v.index);
    session.verdicts = verdicts;
    session
}

/// Everything after a good handshake: `tools/list`, then the tool calls asked for.
async fn after_handshake(
    client: &Client,
    calls: Calls,
    conduct: Conduct,
    verdicts: &mut Vec<(Verdict, Measured)>,
    session: &mut Session,
) {
    let (tools, listed) = list_tools(client, &calls, verdicts, conduct).await;
    let names: Vec<&str> = tools
        .iter()
        .filter_map(|t| t.get("name")?.as_str())
        .collect();
    let planned: Vec<(String, Value)> = match calls {
        Calls::None => Vec::new(),
        Calls::One(name, _) if listed && !names.contains(&name.as_str()) => {
            // Unusable input (exit 2), as for soak: every call would be a JSON-RPC error.
            eprintln!(
                "mcp-verdict: tool {name:?} is not in tools/list (it lists: {}); not called",
                if names.is_empty() {
                    "nothing".into()
                } else {
                    names.join(", ")
                }
            );
            session.unlisted = Some(name);
            Vec::new()
        }
        Calls::One(name, args) => {
            if !names.contains(&name.as_str()) {
                eprintln!(
                    "mcp-verdict: tools/list could not be read whole; calling {name:?} unchecked"
                );
            }
            vec![(name, args)]
        }
        Calls::All {
            include_destructive,
            overrides,
        } => {
            let mut planned = Vec::new();
            for t in &tools {
                let Some(name) = t.get("name").and_then(Value::as_str) else {
                    continue;
                };
                if let Some(why) = tool_headers::invalid(t) {
                    // SEP-2243: clients MUST exclude such a tool, destructive or not.
                    eprintln!("mcp-verdict: --all-tools: not calling {name:?}: {why}");
                    session.skipped.push(SkippedTool {
                        name: name.to_owned(),
                        reason: format!("invalid x-mcp-header: {why}"),
                    });
                    continue;
                }
                if let Some(why) = destructive(t).filter(|_| !include_destructive) {
                    eprintln!(
                        "mcp-verdict: --all-tools: not calling {name:?}: {why}; --include-destructive calls it"
                    );
                    session.skipped.push(SkippedTool {
                        name: name.to_owned(),
                        reason: why.to_owned(),
                    });
                    continue;
                }
                let schema = t.get("inputSchema").unwrap_or(&Value::Null);
                let args = overrides
                    .get(name)
                    .cloned()
                    .unwrap_or_else(|| tool_args::arguments_for(schema));
                planned.push((name.to_owned(), args));
            }
            planned
        }
    };
    let stateless = client.protocol().is_some_and(ProtocolVersion::is_stateless);
    // A 2025-x session's GET stream, open while tools are called (see `listen`).
    let get = if !planned.is_empty() && !stateless {
        Some(client.listen().await)
    } else {
        None
    };
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let calls = async {
        call_tools(client, &tools, planned, conduct, verdicts).await;
        drop(stop);
    };
    let heard = match get {
        Some(get) => tokio::join!(calls, listen::run(client, get, conduct, stopped)).1,
        None => {
            calls.await;
            Vec::new()
        }
    };
    verdicts.extend(heard);
}

/// The planned tool calls, one after another.
async fn call_tools(
    client: &Client,
    tools: &[Value],
    planned: Vec<(String, Value)>,
    conduct: Conduct,
    verdicts: &mut Vec<(Verdict, Measured)>,
) {
    let stateless = client.protocol().is_some_and(ProtocolVersion::is_stateless);
    for (i, (name, args)) in planned.into_iter().enumerate() {
        // A progress token, so servers that report progress do (and the stream shows it).
        let token = format!("probe-{}", i + 1);
        // SEP-2243 (2026-07-28): marked parameters mirrored into Mcp-Param-* headers.
        let headers = tools
            .iter()
            .find(|t| t.get("name").and_then(Value::as_str) == Some(&name))
            .filter(|_| stateless)
            .map(|t| tool_headers::param_headers(t, &args))
            .unwrap_or_default();
        let params = json!({"name": name, "arguments": args, "_meta": {"progressToken": token}});
        call_tool(client, params, &headers, conduct, verdicts).await;
    }
}

/// How many input-required rounds (MRTR) one tool call goes through at most.
const MAX_INPUT_ROUNDS: usize = 8;

/// One `tools/call`, with what follows from its answer: a 2026-07-28 input-required result is
/// answered and the call retried (a new id, the original params plus `inputResponses` and the
/// exact `requestState`, and nothing of another call's); a task handle is followed
/// (`--no-follow-tasks` stops that).
async fn call_tool(
    client: &Client,
    params: Value,
    headers: &[(String, String)],
    conduct: Conduct,
    verdicts: &mut Vec<(Verdict, Measured)>,
) {
    let (rows, mut answer) = measured(client, "tools/call", params.clone(), headers, conduct).await;
    verdicts.extend(rows);
    for _ in 0..MAX_INPUT_ROUNDS {
        let Some(result) = answer.as_ref().and_then(|a| a.get("result")) else {
            break;
        };
        if result.get("resultType").and_then(Value::as_str) != Some("input_required") {
            break;
        }
        let mut retry = params.clone();
        if let Some(requests) = result.get("inputRequests") {
            retry["inputResponses"] = answers::input_responses(requests, conduct.elicit);
        }
        if let Some(state) = result.get("requestState") {
            retry["requestState"] = state.clone();
        }
        let (rows, again) = measured(client, "tools/call", retry, headers, conduct).await;
        verdicts.extend(rows);
        answer = again;
    }
    let stateless = client.protocol().is_some_and(ProtocolVersion::is_stateless);
    if conduct.follow_tasks
        && stateless
        && let Some(task) = tasks::handle(answer.as_ref())
    {
        tasks::follow(client, task, conduct, verdicts).await;
    }
}

/// Reads `tools/list`, each page's verdict into `verdicts`: the first page only, unless
/// `--all-tools` (every page) or `--tool` (until the tool is found). Returns the tools and
/// whether the list was read to its end (so that a missing tool is known to be missing).
async fn list_tools(
    client: &Client,
    calls: &Calls,
    verdicts: &mut Vec<(Verdict, Measured)>,
    conduct: Conduct,
) -> (Vec<Value>, bool) {
    let mut tools: Vec<Value> = Vec::new();
    let mut cursor: Option<Value> = None;
    for _ in 0..MAX_LIST_PAGES {
        let params = match cursor.take() {
            Some(c) => json!({"cursor": c}),
            None => json!({}),
        };
        let (rows, answer) = measured(client, "tools/list", params, &[], conduct).await;
        verdicts.extend(rows);
        let Some(result) = answer.as_ref().and_then(|a| a.get("result")) else {
            return (tools, false);
        };
        if let Some(list) = result.get("tools").and_then(Value::as_array) {
            tools.extend(list.iter().cloned());
        }
        let more = match calls {
            Calls::None => false,
            Calls::One(name, _) => !tools
                .iter()
                .any(|t| t.get("name").and_then(Value::as_str) == Some(name)),
            Calls::All { .. } => true,
        };
        match result.get("nextCursor") {
            Some(c) if !c.is_null() && more => cursor = Some(c.clone()),
            Some(c) if !c.is_null() => return (tools, false),
            _ => return (tools, true),
        }
    }
    (tools, false)
}

/// What the probe does besides sending its requests.
#[derive(Clone, Copy)]
struct Conduct {
    /// Arrival times kept per exchange (for the timelines).
    keep: usize,
    /// How server requests (elicitation, sampling) are answered.
    elicit: ElicitArg,
    /// Poll task handles until a terminal status.
    follow_tasks: bool,
    /// How long to follow one task.
    task_timeout: Duration,
}

/// Server requests answered per exchange at most; more are left unanswered (memory and time
/// stay bounded whatever the server sends).
const MAX_ANSWERS: usize = 64;

/// One request (with `headers` besides the ones the version needs), with the arrival times
/// (from just before sending) of its first `keep` server messages, and the response message
/// when one came. A server request on its stream is answered at once (a POST of the response,
/// judged too): its verdicts follow the request's, in the order the exchanges began. A 2025-x
/// stream that ends without the response but with an event id is resumed (`GET` with
/// `Last-Event-ID`, after the stream's `retry` delay), a few times at most.
async fn measured(
    client: &Client,
    method: &str,
    params: Value,
    headers: &[(String, String)],
    conduct: Conduct,
) -> (Vec<(Verdict, Measured)>, Option<Value>) {
    let wall = SystemTime::now();
    let call = client.request_with_headers(method, params, headers).await;
    let (mut rows, mut answer) = read(client, call, wall, conduct).await;
    for _ in 0..MAX_RESUMES {
        // The latest read's own row (answers' rows carry no measurement).
        let latest = rows.iter().rev().find(|(_, m)| m.is_some()).map(|(v, _)| v);
        let Some((last_id, after)) = latest
            .filter(|v| answer.is_none() && v.retry.advice == Advice::Resume)
            .and_then(|v| Some((v.last_event_id.clone()?, v.retry.after_ms)))
        else {
            break;
        };
        // The stream's `retry` field, else a second; never past a minute.
        let wait = Duration::from_millis(after.unwrap_or(1000).min(60_000));
        tokio::time::sleep(wait).await;
        let call = client.resume(&last_id).await;
        let (more, again) = read(client, call, SystemTime::now(), conduct).await;
        rows.extend(more);
        answer = again;
    }
    (rows, answer)
}

/// Resumptions of one request's stream at most.
const MAX_RESUMES: usize = 3;

/// Reads one exchange to its end, answering the server's requests on it: its row (measured),
/// the answers' rows, and the response message when one came.
async fn read(
    client: &Client,
    mut call: mcp_verdict::adapters::Call,
    wall: SystemTime,
    conduct: Conduct,
) -> (Vec<(Verdict, Measured)>, Option<Value>) {
    let sent = Instant::now();
    let mut arrivals = Vec::new();
    let mut answer = None;
    let mut answered: Vec<(Verdict, Measured)> = Vec::new();
    while let Some(m) = call.next_message().await {
        if arrivals.len() < conduct.keep {
            arrivals.push(sent.elapsed());
        }
        if m.terminal {
            answer = m.value().ok();
        } else if answered.len() < MAX_ANSWERS
            && let Some(row) = answer_request(client, &m, conduct).await
        {
            answered.push(row);
        }
    }
    let (verdict, timings) = call.finish().await;
    let mut rows = vec![(verdict, Some((wall, timings, arrivals)))];
    rows.append(&mut answered);
    (rows, answer)
}

/// When `m` is a server request: probe's answer sent (a POST), with its verdict.
async fn answer_request(
    client: &Client,
    m: &mcp_verdict::adapters::ServerMessage,
    conduct: Conduct,
) -> Option<(Verdict, Measured)> {
    m.method.as_ref()?;
    let request = m.value().ok().filter(|r| r.get("id").is_some())?;
    let reply = answers::response_to(&request, conduct.elicit);
    Some((client.send(reply).await.verdict().await, None))
}

/// Traces for the report: messages and byte positions from the recorded bodies (judged again,
/// in order, as replay would; the first `keep` of each), times from what was measured live.
fn traces(
    url: &str,
    verdicts: Vec<(Verdict, Measured)>,
    recorded: &[har::Entry],
    policy: &Redaction,
    limits: mcp_verdict::Limits,
    keep: usize,
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
            let mut seen = TraceObserver::keeping(keep);
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

/// Says on stderr which recorded bodies were cut: the recording keeps
/// `min(record_max_body_bytes, max_body_bytes) + 1` bytes of each, so one recorded at that
/// length went on past it (and its replay judges the part that was kept).
fn say_cut(recorded: &[Entry], limits: &mcp_verdict::Limits, record_max: u64) {
    let kept = limits.max_body_bytes.min(record_max).saturating_add(1);
    for (i, e) in recorded.iter().enumerate() {
        if e.response_body.len() as u64 == kept {
            let flag = if record_max < limits.max_body_bytes {
                "--record-max-body-bytes"
            } else {
                "--max-body-bytes"
            };
            eprintln!(
                "mcp-verdict: exchange {i} ({}): body longer than {}; the recording keeps its first {} and one byte more ({flag}), and replay judges that",
                method_of(e).as_deref().unwrap_or(&e.method),
                crate::units::show_size(kept - 1),
                crate::units::show_size(kept - 1),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `--all-tools` calls a tool only when its annotations say it is safe; no annotations is
    /// MCP's default: destructive.
    #[test]
    fn only_read_only_or_non_destructive_tools_are_safe() {
        let tool = |annotations: Value| json!({"name": "t", "annotations": annotations});
        assert_eq!(destructive(&tool(json!({"readOnlyHint": true}))), None);
        assert_eq!(
            destructive(&tool(
                json!({"readOnlyHint": true, "destructiveHint": true})
            )),
            None,
            "destructiveHint means nothing on a read-only tool"
        );
        assert_eq!(destructive(&tool(json!({"destructiveHint": false}))), None);
        assert!(
            destructive(&tool(
                json!({"readOnlyHint": false, "destructiveHint": true})
            ))
            .is_some_and(|w| w.contains("declared destructive"))
        );
        assert!(
            destructive(&tool(json!({"readOnlyHint": false})))
                .is_some_and(|w| w.contains("MCP's default"))
        );
        assert!(destructive(&json!({"name": "bare"})).is_some_and(|w| w.contains("MCP's default")));
        assert!(destructive(&tool(json!({"readOnlyHint": "yes"}))).is_some());
    }

    /// `--tool-args` takes argument objects by tool name, and nothing else.
    #[test]
    fn per_tool_args_are_objects_by_name() {
        let m = per_tool_args(Some(r#"{"a": {"x": 1}, "b": {}}"#)).expect("valid");
        assert_eq!(m["a"], json!({"x": 1}));
        assert!(per_tool_args(None).expect("none").is_empty());
        for bad in [r#"{"a": 1}"#, "[]", "{", r#"{"a": null}"#] {
            assert!(per_tool_args(Some(bad)).is_err(), "{bad}");
        }
    }
}
