//! `mcp-verdict probe`: handshake, `tools/list`, optionally one `tools/call`, one verdict each.

use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_verdict::adapters::{Client, ClientBuilder, Deadlines, Handshake};
use mcp_verdict::har;
use mcp_verdict::replay::Item;
use mcp_verdict::{ProtocolVersion, Verdict};
use serde_json::{Value, json};

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
        builder = builder.secret_header(name.trim(), value.trim());
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
    let builder = Client::builder(args.url.clone())
        .limits(args.limits.limits())
        .deadlines(Deadlines {
            overall: Some(overall),
            idle,
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
    let verdicts = runtime.block_on(session(&client, handshake, args.tool.as_deref(), tool_args));

    let mut printer = args.out.printer();
    printer.begin_file(&args.url);
    for (i, mut v) in verdicts.into_iter().enumerate() {
        v.index = i as u64;
        printer.item(&args.url, &Item::Verdict(Box::new(v)));
    }
    printer.end_file(&args.url);
    printer.finish();
    let mut unusable = false;
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

/// The probe sequence. Stops early when the handshake fails.
async fn session(
    client: &Client,
    handshake: Handshake,
    tool: Option<&str>,
    args: Value,
) -> Vec<Verdict> {
    let mut verdicts = client.handshake(handshake).await;
    if !verdicts
        .last()
        .is_some_and(|v| v.complete && v.error_code.is_none())
    {
        return verdicts;
    }
    verdicts.push(
        client
            .request("tools/list", json!({}))
            .await
            .verdict()
            .await,
    );
    if let Some(name) = tool {
        // A progress token, so servers that report progress do (and the stream shows it).
        let params =
            json!({"name": name, "arguments": args, "_meta": {"progressToken": "probe-1"}});
        verdicts.push(client.request("tools/call", params).await.verdict().await);
    }
    verdicts
}

fn redact(header: &str) -> String {
    match header.split_once(':') {
        Some((name, _)) => format!("{name}: <redacted>"),
        None => "<redacted>".into(),
    }
}
