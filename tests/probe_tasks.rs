#![cfg(feature = "cli")]
//! `probe` as a client of the 2026-07-28 interaction patterns, live on loopback: it follows a
//! task handle with `tasks/get` at the task's `pollIntervalMs` until a terminal status (the
//! call's verdict is the task's end), cancels a task past `--task-timeout`, and answers an
//! input-required result (MRTR) by retrying with `inputResponses` and the exact `requestState`.

#[path = "support/loopback.rs"]
mod loopback;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

/// What the test server saw, per POST: when, the `Mcp-Name` header, the message.
type Seen = Arc<Mutex<Vec<(Instant, Option<String>, Value)>>>;

/// The poll interval the server's tasks ask for.
const POLL_MS: u64 = 300;

/// A 2026-07-28 server with three read-only tools: `slow` answers with a task that completes
/// on its third `tasks/get`, `stuck` with one that never ends, `ask` with an input-required
/// result until it is retried with an answer. Serves at most `max` connections, each bounded
/// in time.
async fn task_server(max: usize) -> (String, Seen) {
    let seen: Seen = Arc::default();
    let log = seen.clone();
    let (url, _) = loopback::bounded_server(max, Duration::from_secs(30), move |stream| {
        serve(stream, log.clone())
    })
    .await;
    (url, seen)
}

async fn serve(mut stream: TcpStream, seen: Seen) -> std::io::Result<()> {
    let mut buf = Vec::new();
    loop {
        let Some((head, msg)) = loopback::next_message(&mut stream, &mut buf).await? else {
            return Ok(());
        };
        let header = |name: &str| loopback::header(&head, name);
        let polls = {
            let mut seen = seen.lock().unwrap();
            seen.push((Instant::now(), header("mcp-name:"), msg.clone()));
            seen.iter()
                .filter(|(_, _, m)| {
                    m["method"] == "tasks/get" && m["params"]["taskId"] == msg["params"]["taskId"]
                })
                .count()
        };
        let reply = answer(&msg, polls);
        let text = reply.to_string();
        let out = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{text}",
            text.len()
        );
        stream.write_all(out.as_bytes()).await?;
    }
}

/// The server's answer to `msg`; `polls` counts the `tasks/get` for its task so far.
fn answer(msg: &Value, polls: usize) -> Value {
    let id = msg.get("id").cloned().unwrap_or(Value::Null);
    let params = &msg["params"];
    let task = |task_id: &str, status: &str| {
        json!({"taskId": task_id, "status": status, "ttlMs": null, "pollIntervalMs": POLL_MS,
               "createdAt": "2026-12-01T00:00:00Z", "lastUpdatedAt": "2026-12-01T00:00:00Z"})
    };
    let mut result = match msg["method"].as_str() {
        Some("server/discover") => json!({"supportedVersions": ["2026-07-28"],
            "capabilities": {"tools": {}, "extensions": {"io.modelcontextprotocol/tasks": {}}},
            "serverInfo": {"name": "tasks", "version": "1"}, "cacheScope": "public", "ttlMs": 0}),
        Some("tools/list") => {
            let tool = |name: &str| {
                json!({"name": name, "inputSchema": {"type": "object"},
                                           "annotations": {"readOnlyHint": true}})
            };
            json!({"cacheScope": "public", "ttlMs": 0,
                   "tools": [tool("slow"), tool("stuck"), tool("ask")]})
        }
        Some("tools/call") => match params["name"].as_str() {
            Some("slow") => {
                let mut t = task("task-slow", "working");
                t["resultType"] = json!("task");
                t
            }
            Some("stuck") => {
                let mut t = task("task-stuck", "working");
                t["resultType"] = json!("task");
                t
            }
            _ if params.get("inputResponses").is_none() => json!({
                "resultType": "input_required", "requestState": "opaque-state-1",
                "inputRequests": {"confirm": {"method": "elicitation/create", "params": {
                    "message": "go?", "requestedSchema": {"type": "object", "properties": {
                        "ok": {"type": "boolean", "default": true}}}}}}}),
            _ => json!({"content": [{"type": "text", "text": "asked"}]}),
        },
        Some("tasks/get") => match params["taskId"].as_str() {
            Some("task-slow") if polls >= 3 => {
                let mut t = task("task-slow", "completed");
                t["result"] = json!({"content": [{"type": "text", "text": "done"}]});
                t
            }
            Some(other) => task(other, "working"),
            None => json!({}),
        },
        Some("tasks/cancel") => json!({}),
        _ => {
            return json!({"jsonrpc": "2.0", "id": id,
                          "error": {"code": -32601, "message": "no such method"}});
        }
    };
    if result.get("resultType").is_none() {
        result["resultType"] = json!("complete");
    }
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

/// `probe --all-tools --calls` of `url` on 2026-07-28 with `flags` (the CLI run off the
/// runtime's threads, so the in-process server keeps serving): its output, standard output as
/// text, and its call lines.
async fn probe(url: &str, flags: &[&str]) -> (std::process::Output, String, Vec<Value>) {
    let args = ["probe", url, "--protocol", "2026-07-28", "--all-tools"]
        .iter()
        .chain(flags)
        .chain(&["--calls", "--format", "jsonl"])
        .map(|s| s.to_string())
        .collect();
    let out = loopback::cli(args, Duration::from_secs(60)).await;
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let calls = calls(&out);
    (out, stdout, calls)
}

/// The JSON lines of `--calls --format jsonl`.
fn calls(out: &std::process::Output) -> Vec<Value> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|l| l.get("tool").is_some())
        .collect()
}

fn call_of<'a>(calls: &'a [Value], tool: &str) -> &'a Value {
    calls
        .iter()
        .find(|c| c["tool"] == tool)
        .unwrap_or_else(|| panic!("no call of {tool}: {calls:?}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn probe_follows_tasks_cancels_past_the_timeout_and_answers_input_requests() {
    let (url, seen) = task_server(64).await;
    let (out, stdout, calls) =
        probe(&url, &["--elicit", "accept", "--task-timeout", "1500ms"]).await;

    // The completed task: its call is the task's end, over the call and its three polls.
    let slow = call_of(&calls, "slow");
    assert_eq!(slow["outcome"], "TOOL_SUCCESS", "{stdout}");
    assert_eq!(slow["task_status"], "completed", "{stdout}");
    assert_eq!(slow["complete"], true, "{stdout}");
    assert_eq!(slow["post_count"], 4, "{stdout}");

    let seen = seen.lock().unwrap().clone();
    let sent = |pred: &dyn Fn(&Value) -> bool| -> Vec<(Instant, Option<String>, Value)> {
        seen.iter().filter(|(_, _, m)| pred(m)).cloned().collect()
    };
    let created = sent(&|m| m["method"] == "tools/call" && m["params"]["name"] == "slow");
    let polls = sent(&|m| m["method"] == "tasks/get" && m["params"]["taskId"] == "task-slow");
    assert_eq!(polls.len(), 3, "polled until completed, then stopped");
    // pollIntervalMs respected: each poll at least the interval after the one before.
    let mut before = created[0].0;
    for (at, name, _) in &polls {
        let gap = at.duration_since(before);
        assert!(
            gap >= Duration::from_millis(POLL_MS - 20),
            "a poll {gap:?} after the previous request"
        );
        assert_eq!(
            name.as_deref(),
            Some("task-slow"),
            "Mcp-Name carries the task id"
        );
        before = *at;
    }

    // The task that never ends: polled within --task-timeout, then cancelled, not complete.
    let stuck_polls =
        sent(&|m| m["method"] == "tasks/get" && m["params"]["taskId"] == "task-stuck");
    assert!(
        (2..=6).contains(&stuck_polls.len()),
        "{} polls in 1.5 s at {POLL_MS} ms",
        stuck_polls.len()
    );
    let cancels = sent(&|m| m["method"] == "tasks/cancel");
    assert_eq!(cancels.len(), 1);
    assert_eq!(cancels[0].2["params"]["taskId"], "task-stuck");
    assert_eq!(cancels[0].1.as_deref(), Some("task-stuck"));
    let stuck = call_of(&calls, "stuck");
    assert_eq!(stuck["complete"], false, "{stdout}");
    assert_eq!(
        out.status.code(),
        Some(1),
        "an unfinished task fails the run"
    );

    // MRTR: the retry is a new request with the answer and the state, byte for byte.
    let asks = sent(&|m| m["method"] == "tools/call" && m["params"]["name"] == "ask");
    assert_eq!(asks.len(), 2);
    let (first, retry) = (&asks[0].2, &asks[1].2);
    assert_ne!(first["id"], retry["id"]);
    assert!(first["params"].get("inputResponses").is_none());
    assert_eq!(retry["params"]["requestState"], "opaque-state-1");
    assert_eq!(
        retry["params"]["inputResponses"]["confirm"],
        json!({"action": "accept", "content": {"ok": true}})
    );
    // Nothing of that exchange leaks into another call.
    for (_, _, m) in sent(&|m| m["method"] == "tools/call" && m["params"]["name"] != "ask") {
        assert!(
            m["params"].get("requestState").is_none()
                && m["params"].get("inputResponses").is_none()
        );
    }
    // The capabilities probe answers for, declared on every request.
    let caps = &first["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"];
    assert!(
        caps["elicitation"].is_object() && caps["sampling"].is_object(),
        "{caps}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_follow_tasks_leaves_the_handle_deferred_and_decline_is_the_default() {
    let (url, seen) = task_server(64).await;
    let (_, stdout, calls) = probe(&url, &["--no-follow-tasks"]).await;
    let slow = call_of(&calls, "slow");
    assert_eq!(slow["outcome"], "DEFERRED", "{stdout}");
    assert_eq!(slow["post_count"], 1, "{stdout}");
    let seen = seen.lock().unwrap().clone();
    assert!(
        !seen.iter().any(|(_, _, m)| m["method"] == "tasks/get"),
        "no polls"
    );
    let retry = seen
        .iter()
        .rev()
        .find(|(_, _, m)| m["params"]["name"] == "ask")
        .expect("the ask retry");
    assert_eq!(
        retry.2["params"]["inputResponses"]["confirm"],
        json!({"action": "decline"}),
        "decline unless --elicit says otherwise"
    );
}
