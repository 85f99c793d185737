//! `mcp-verdict probe`: handshake, `tools/list`, optionally one `tools/call`, one verdict each,
//! and what the server said: its name and version, the protocol spoken, its tools, a tool's
//! error text.

use std::io::Write;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};

use mcp_verdict::adapters::{Client, ClientBuilder, Deadlines, Handshake};
use mcp_verdict::har::{self, Entry};
use mcp_verdict::replay::Item;
use mcp_verdict::soak::tool_names;
use mcp_verdict::{Outcome, ProtocolVersion, Verdict};
use serde_json::{Value, json};

use crate::exit;
use crate::{FormatArg, ProbeArgs, exit_code};

pub(crate) use exit::unusable as fail;

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

/// Adds `--header 'Name: value'` arguments as secret headers.
pub(crate) fn with_headers(
    mut builder: ClientBuilder,
    headers: &[String],
) -> Result<ClientBuilder, String> {
    for h in headers {
        let Some((name, value)) = h.split_once(':') else {
            return Err(format!("--header {:?}: expected 'Name: value'", redact(h)));
        };
        builder = builder.secret_header(name.trim(), value.trim());
    }
    Ok(builder)
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

pub fn run(args: ProbeArgs) -> ExitCode {
    let prepared = (|| {
        endpoint(&args.url)?;
        let handshake = handshake_of(&args.protocol)?;
        let tool_args = tool_args(args.args.as_deref())?;
        // The record file is opened before the work, so a bad path fails at once.
        let record = args
            .record
            .as_ref()
            .map(|p| std::fs::File::create(p).map_err(|e| format!("{}: {e}", p.display())))
            .transpose()?;
        Ok::<_, String>((handshake, tool_args, record))
    })();
    let (handshake, tool_args, record) = match prepared {
        Ok(p) => p,
        Err(e) => return fail(e),
    };
    let recorder = Arc::new(Mutex::new(Vec::new()));
    let builder = Client::builder(args.url.clone())
        .limits(args.limits.limits())
        .deadlines(Deadlines {
            overall: Some(args.timeout),
            idle: args.idle_timeout,
            ..Deadlines::default()
        })
        .record(recorder.clone());
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
    let tool = args.tool.as_deref();
    let (verdicts, missing) = runtime.block_on(session(&client, handshake, tool, tool_args));
    let entries = recorder.lock().unwrap_or_else(|p| p.into_inner()).clone();

    let mut printer = args.out.printer();
    let human = args.out.format == FormatArg::Human;
    if human {
        printer.note(&answer_summary(&entries, client.protocol()));
    }
    if let Some(note) = missing {
        eprintln!("mcp-verdict: {note}");
    }
    printer.begin_file(&args.url);
    let mut hinted = false;
    for (i, mut v) in verdicts.into_iter().enumerate() {
        v.index = i as u64;
        if human && v.outcome == Outcome::ToolError {
            printer.item(&args.url, &Item::Verdict(Box::new(v)));
            if let Some(text) = tool_error_text(&entries) {
                printer.note(&format!("      tool error text: {text}\n"));
            }
            continue;
        }
        if v.status == Some(404) && root_path(&args.url) && !hinted {
            hinted = true;
            eprintln!(
                "mcp-verdict: hint: 404 at the root path; MCP endpoints usually live at /mcp (try {}mcp)",
                args.url.trim_end_matches('/').to_owned() + "/"
            );
        }
        printer.item(&args.url, &Item::Verdict(Box::new(v)));
    }
    printer.end_file(&args.url, None);
    printer.finish();
    let mut unusable = false;
    if let (Some(file), Some(path)) = (record, &args.record) {
        let mut f = std::io::BufWriter::new(file);
        if let Err(e) = har::write(&entries, &mut f).and_then(|()| f.flush()) {
            eprintln!("mcp-verdict: {}: {e}", path.display());
            unusable = true;
        }
    }
    exit_code(&printer, unusable)
}

fn root_path(url: &str) -> bool {
    reqwest::Url::parse(url).is_ok_and(|u| u.path() == "/" || u.path().is_empty())
}

/// The probe sequence. Stops early when the handshake fails. Also returns a note when the tool
/// to call is not in `tools/list` (it is called all the same: the server's answer is the point).
async fn session(
    client: &Client,
    handshake: Handshake,
    tool: Option<&str>,
    args: Value,
) -> (Vec<Verdict>, Option<String>) {
    let mut verdicts = client.handshake(handshake).await;
    if !verdicts
        .last()
        .is_some_and(|v| v.complete && v.error_code.is_none())
    {
        return (verdicts, None);
    }
    let mut list = client.request("tools/list", json!({})).await;
    let mut names = None;
    while let Some(m) = list.next_message().await {
        if m.terminal {
            names = m.value().ok().and_then(|v| tool_names(&v));
        }
    }
    verdicts.push(list.verdict().await);
    let mut missing = None;
    if let Some(name) = tool {
        if let Some(names) = names.filter(|n| !n.iter().any(|t| t == name)) {
            missing = Some(format!(
                "tool {name:?} is not in tools/list (it lists: {}); calling it anyway",
                if names.is_empty() {
                    "nothing".into()
                } else {
                    names.join(", ")
                }
            ));
        }
        // A progress token, so servers that report progress do (and the stream shows it).
        let params =
            json!({"name": name, "arguments": args, "_meta": {"progressToken": "probe-1"}});
        verdicts.push(client.request("tools/call", params).await.verdict().await);
    }
    (verdicts, missing)
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

fn redact(header: &str) -> String {
    match header.split_once(':') {
        Some((name, _)) => format!("{name}: <redacted>"),
        None => "<redacted>".into(),
    }
}
