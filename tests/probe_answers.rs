#![cfg(feature = "cli")]
//! `probe` answering a server's requests, live on loopback: a 2025-11-25 server asks, on the
//! `tools/call` response stream, for an elicitation, a sampling and the roots, and finishes the
//! call only once the answers came back as POSTed responses.

#[path = "support/loopback.rs"]
mod loopback;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;
use tokio::sync::Notify;

/// What the server saw: every POSTed message, and the answers (responses) among them.
#[derive(Default)]
struct Seen {
    posts: Mutex<Vec<Value>>,
    answered: Notify,
}

/// The three server requests sent on the tool's stream.
fn server_requests() -> Vec<Value> {
    vec![
        json!({"jsonrpc": "2.0", "id": "e1", "method": "elicitation/create", "params": {
            "message": "who?", "requestedSchema": {"type": "object", "properties": {
                "name": {"type": "string", "default": "Ada"},
                "age": {"type": "integer", "default": 36},
                "ok": {"type": "boolean"}}, "required": ["ok"]}}}),
        json!({"jsonrpc": "2.0", "id": "s1", "method": "sampling/createMessage", "params": {
            "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
            "maxTokens": 10}}),
        json!({"jsonrpc": "2.0", "id": "r1", "method": "roots/list"}),
    ]
}

async fn server(max: usize) -> (String, Arc<Seen>) {
    let seen = Arc::new(Seen::default());
    let shared = seen.clone();
    let (url, _) = loopback::bounded_server(max, Duration::from_secs(20), move |stream| {
        serve(stream, shared.clone())
    })
    .await;
    (url, seen)
}

async fn serve(mut stream: TcpStream, seen: Arc<Seen>) -> std::io::Result<()> {
    let mut buf = Vec::new();
    loop {
        let Some((head, msg)) = loopback::next_message(&mut stream, &mut buf).await? else {
            return Ok(());
        };
        if head.starts_with("get ") {
            let out = "HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\n\r\n";
            stream.write_all(out.as_bytes()).await?;
            continue;
        }
        seen.posts.lock().unwrap().push(msg.clone());
        let id = msg.get("id").cloned().unwrap_or(Value::Null);
        let json_reply = |result: Value| {
            let text = json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string();
            format!(
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nMcp-Session-Id: s-1\r\nContent-Length: {}\r\n\r\n{text}",
                text.len()
            )
        };
        let out = match msg.get("method").and_then(Value::as_str) {
            None => {
                seen.answered.notify_one();
                "HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n".to_owned()
            }
            Some("notifications/initialized") => {
                "HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n".to_owned()
            }
            Some("initialize") => json_reply(json!({"protocolVersion": "2025-11-25",
                "capabilities": {"tools": {}}, "serverInfo": {"name": "asks", "version": "1"}})),
            Some("tools/list") => json_reply(json!({"tools": [{"name": "ask",
                "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": true}}]})),
            Some("tools/call") => {
                let mut head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n".to_owned();
                for r in server_requests() {
                    head.push_str(&format!("data: {r}\n\n"));
                }
                stream.write_all(head.as_bytes()).await?;
                // The call ends only when the three answers came.
                let answers = |seen: &Seen| {
                    seen.posts
                        .lock()
                        .unwrap()
                        .iter()
                        .filter(|m| m.get("method").is_none())
                        .count()
                };
                while answers(&seen) < 3 {
                    seen.answered.notified().await;
                }
                let done = json!({"jsonrpc": "2.0", "id": id,
                                  "result": {"content": [{"type": "text", "text": "thanks"}]}});
                stream
                    .write_all(format!("data: {done}\n\n").as_bytes())
                    .await?;
                return Ok(());
            }
            _ => json_reply(json!({})),
        };
        stream.write_all(out.as_bytes()).await?;
    }
}

async fn probe(url: &str, extra: &[&str]) -> (std::process::Output, Vec<Value>) {
    let args: Vec<String> = [
        "probe",
        url,
        "--protocol",
        "2025-11-25",
        "--tool",
        "ask",
        "--timeout",
        "10s",
        "--format",
        "jsonl",
    ]
    .iter()
    .chain(extra)
    .map(|s| s.to_string())
    .collect();
    let out = loopback::cli(args, Duration::from_secs(30)).await;
    let verdicts = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .map(|l| l.get("verdict").cloned().unwrap_or(l))
        .filter(|v| v.get("outcome").is_some())
        .collect();
    (out, verdicts)
}

fn answer_to<'a>(posts: &'a [Value], id: &str) -> &'a Value {
    posts
        .iter()
        .find(|m| m.get("method").is_none() && m["id"] == id)
        .unwrap_or_else(|| panic!("no answer to {id}: {posts:?}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn probe_answers_server_requests_on_the_call_stream() {
    let (url, seen) = server(32).await;
    let (out, verdicts) = probe(&url, &["--elicit", "accept"]).await;
    let posts = seen.posts.lock().unwrap().clone();
    let stdout = String::from_utf8_lossy(&out.stdout);

    // Declared: the kinds of request it answers.
    let init = posts
        .iter()
        .find(|m| m["method"] == "initialize")
        .expect("initialize");
    let caps = &init["params"]["capabilities"];
    assert!(
        caps["elicitation"].is_object()
            && caps["sampling"].is_object()
            && caps["roots"].is_object()
    );

    let e = answer_to(&posts, "e1");
    assert_eq!(e["result"]["action"], "accept");
    assert_eq!(
        e["result"]["content"]["name"], "Ada",
        "the schema's defaults"
    );
    assert_eq!(e["result"]["content"]["age"], 36);
    assert!(
        e["result"]["content"]["ok"].is_boolean(),
        "a required member filled"
    );
    let s = answer_to(&posts, "s1");
    assert_eq!(s["result"]["role"], "assistant");
    assert!(s["result"]["content"]["text"].is_string());
    assert_eq!(answer_to(&posts, "r1")["result"], json!({"roots": []}));

    // The call completed after the answers; each answer is a judged `response` row.
    let call = verdicts
        .iter()
        .find(|v| v["method"] == "tools/call")
        .expect("the call");
    assert_eq!(call["outcome"], "TOOL_SUCCESS", "{stdout}");
    let responses: Vec<&Value> = verdicts
        .iter()
        .filter(|v| v["kind"] == "response")
        .collect();
    assert_eq!(responses.len(), 3, "{stdout}");
    assert!(
        responses
            .iter()
            .all(|v| v["outcome"] == "NOTIFICATION_ACCEPTED")
    );
    // The session's GET stream was offered and refused with the allowed 405.
    assert!(
        verdicts
            .iter()
            .any(|v| v["kind"] == "listen" && v["outcome"] == "METHOD_NOT_ALLOWED")
    );
    assert_eq!(out.status.code(), Some(0), "{stdout}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn by_default_probe_declines_and_refuses_sampling() {
    let (url, seen) = server(32).await;
    let (out, _) = probe(&url, &[]).await;
    let posts = seen.posts.lock().unwrap().clone();
    assert_eq!(
        answer_to(&posts, "e1")["result"],
        json!({"action": "decline"})
    );
    assert_eq!(answer_to(&posts, "s1")["error"]["code"], -1);
    assert_eq!(answer_to(&posts, "r1")["result"], json!({"roots": []}));
    assert_eq!(out.status.code(), Some(0));
}
