#![cfg(feature = "cli")]
//! `probe` as a conformant client, live on loopback: it retries once with a supported version
//! after a `-32022` rejection, and `--all-tools` calls every listed tool with arguments made
//! from its `inputSchema`. (The official suite's client scenarios run in `.ci/conformance.sh`.)

#[path = "support/loopback.rs"]
mod loopback;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_verdict::faults::FaultServer;
use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

/// What the test server saw: (MCP-Protocol-Version header, JSON-RPC message) per POST.
type Seen = Arc<Mutex<Vec<(Option<String>, Value)>>>;

/// A 2026-07-28 server that rejects its first request with `-32022` (as the suite's
/// `request-metadata` mock does) and lists one tool with required numeric members. Serves at
/// most `max` connections, each bounded in time.
async fn negotiating_server(max: usize) -> (String, Seen, tokio::task::JoinHandle<()>) {
    let seen: Seen = Arc::default();
    let log = seen.clone();
    let (url, task) = loopback::bounded_server(max, Duration::from_secs(20), move |stream| {
        serve(stream, log.clone())
    })
    .await;
    (url, seen, task)
}

async fn serve(mut stream: TcpStream, seen: Seen) -> std::io::Result<()> {
    let mut buf = Vec::new();
    loop {
        let Some((head, msg)) = loopback::next_message(&mut stream, &mut buf).await? else {
            return Ok(());
        };
        let header = |name: &str| loopback::header(&head, name);
        let first = {
            let mut seen = seen.lock().unwrap();
            seen.push((header("mcp-protocol-version:"), msg.clone()));
            seen.len() == 1
        };
        let id = msg.get("id").cloned().unwrap_or(Value::Null);
        let complete = |r: Value| {
            let mut r = r;
            r["resultType"] = json!("complete");
            json!({"jsonrpc": "2.0", "id": id, "result": r})
        };
        let (status, reply) = match msg.get("method").and_then(Value::as_str) {
            _ if first => (
                400,
                json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32022,
                "message": "Unsupported protocol version",
                "data": {"supported": ["2026-07-28"], "requested": "2026-07-28"}}}),
            ),
            Some("server/discover") => (
                200,
                complete(json!({"supportedVersions": ["2026-07-28"],
                "capabilities": {"tools": {}}, "serverInfo": {"name": "t", "version": "1"},
                "cacheScope": "public", "ttlMs": 0})),
            ),
            Some("tools/list") => (
                200,
                complete(json!({"cacheScope": "public", "ttlMs": 0,
                "tools": [{"name": "add_numbers", "inputSchema": {"type": "object",
                    "properties": {"a": {"type": "number"}, "b": {"type": "number"},
                                   "unit": {"type": "string", "enum": ["m", "km"]}},
                    "required": ["a", "b", "unit"]},
                    "annotations": {"readOnlyHint": true}}]})),
            ),
            Some("tools/call") => (
                200,
                complete(json!({"content": [{"type": "text", "text": "ok"}]})),
            ),
            _ => (
                404,
                json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "no"}}),
            ),
        };
        let text = reply.to_string();
        let out = format!(
            "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{text}",
            text.len()
        );
        stream.write_all(out.as_bytes()).await?;
    }
}

/// Runs the CLI beside the in-process servers, within a minute.
async fn cli(args: Vec<String>) -> std::process::Output {
    loopback::cli(args, Duration::from_secs(60)).await
}

fn verdict_lines(out: &std::process::Output) -> Vec<Value> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .map(|l| l.get("verdict").cloned().unwrap_or(l))
        .collect()
}

#[tokio::test(flavor = "current_thread")]
async fn probe_retries_after_a_version_rejection_and_calls_every_tool() {
    let (url, seen, _task) = negotiating_server(16).await;
    let args = [
        "probe",
        &url,
        "--protocol",
        "2026-07-28",
        "--all-tools",
        "--format",
        "jsonl",
    ];
    let out = cli(args.iter().map(|s| s.to_string()).collect()).await;
    let verdicts = verdict_lines(&out);
    let methods: Vec<&str> = verdicts
        .iter()
        .filter_map(|v| v["method"].as_str())
        .collect();
    assert_eq!(
        methods,
        [
            "server/discover",
            "server/discover",
            "tools/list",
            "tools/call"
        ],
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert_eq!(verdicts[0]["error_code"], -32022);
    assert_eq!(verdicts[1]["outcome"], "SUCCESS");
    assert_eq!(verdicts[3]["outcome"], "TOOL_SUCCESS");
    assert_eq!(
        out.status.code(),
        Some(0),
        "a recovered version rejection does not fail the run"
    );

    let seen = seen.lock().unwrap();
    // The retry is a new request under a supported version, header and _meta alike.
    let (header, retry) = &seen[1];
    assert_eq!(header.as_deref(), Some("2026-07-28"));
    assert_ne!(retry["id"], seen[0].1["id"]);
    assert_eq!(
        retry["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"],
        "2026-07-28"
    );
    // --all-tools: arguments from the inputSchema, type-correct, enum honoured.
    let call = &seen.last().unwrap().1;
    assert_eq!(call["params"]["name"], "add_numbers");
    let a = &call["params"]["arguments"];
    assert!(a["a"].is_number() && a["b"].is_number(), "{a}");
    assert_eq!(a["unit"], "m");
}

#[tokio::test(flavor = "current_thread")]
async fn all_tools_against_the_fault_server_gives_one_verdict_per_tool() {
    let server = FaultServer::start("127.0.0.1:0").await.unwrap();
    let url = server.url(None);
    let args = ["probe", &url, "--all-tools", "--format", "jsonl"];
    let out = cli(args.iter().map(|s| s.to_string()).collect()).await;
    let calls: Vec<(String, String)> = verdict_lines(&out)
        .iter()
        .filter(|v| v["method"] == "tools/call")
        .map(|v| {
            (
                v["tool"].as_str().unwrap_or_default().to_owned(),
                v["outcome"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    let expect = [
        ("echo", "TOOL_SUCCESS"),
        ("lookup", "TOOL_SUCCESS"),
        ("progress", "TOOL_SUCCESS"),
        ("fail", "TOOL_ERROR"),
        // `pay` (destructiveHint: true) is skipped without --include-destructive
        // (tests/promises.rs).
        ("test_simple_text", "TOOL_SUCCESS"),
        ("test_error_handling", "TOOL_ERROR"),
        ("test_image_content", "TOOL_SUCCESS"),
        ("test_audio_content", "TOOL_SUCCESS"),
        ("test_embedded_resource", "TOOL_SUCCESS"),
        ("test_multiple_content_types", "TOOL_SUCCESS"),
        ("json_schema_2020_12_tool", "TOOL_SUCCESS"),
        // The task and input-required fixtures are unannotated (destructive by default) but
        // for the read-only `greet`.
        ("greet", "TOOL_SUCCESS"),
    ];
    let expect: Vec<(String, String)> = expect
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
    assert_eq!(calls, expect);
    assert_eq!(
        out.status.code(),
        Some(0),
        "tool errors are complete answers"
    );
}
