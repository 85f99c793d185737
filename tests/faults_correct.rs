#![cfg(feature = "tools")]
//! The fault server's correct endpoint as the official conformance suite sees it (the suite
//! itself runs in `.ci/conformance.sh`): fixture tools, DELETEd sessions answer 404,
//! 2026-07-28 list results carry `cacheScope` and `ttlMs`, 2026-07-28 requests are checked
//! before dispatch, resources and prompts answer, and a server request waits for its answer.

use mcp_verdict::faults::FaultServer;
use serde_json::{Value, json};

async fn post(url: &str, headers: &[(&str, &str)], body: Value) -> (u16, Option<String>, Value) {
    let mut req = reqwest::Client::new()
        .post(url)
        .header("Content-Type", "application/json")
        .header("Accept", "application/json, text/event-stream");
    for (n, v) in headers {
        req = req.header(*n, *v);
    }
    let resp = req.body(body.to_string()).send().await.expect("response");
    let status = resp.status().as_u16();
    let sid = resp
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let text = resp.text().await.unwrap_or_default();
    (
        status,
        sid,
        serde_json::from_str(&text).unwrap_or(Value::Null),
    )
}

fn call(id: u64, name: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": name}})
}

#[tokio::test(flavor = "current_thread")]
async fn deleted_session_answers_404_and_fixtures_answer() {
    let server = FaultServer::start("127.0.0.1:0").await.unwrap();
    let url = server.url(None);
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"}}});
    let (status, sid, _) = post(&url, &[], init).await;
    assert_eq!(status, 200);
    let sid = sid.expect("a session id");
    let h = [
        ("Mcp-Session-Id", sid.as_str()),
        ("MCP-Protocol-Version", "2025-11-25"),
    ];

    let (status, _, ok) = post(&url, &h, call(2, "test_simple_text")).await;
    assert_eq!(status, 200);
    assert_eq!(ok["result"]["isError"], false);
    assert_eq!(ok["result"]["content"][0]["type"], "text");
    let (_, _, err) = post(&url, &h, call(3, "test_error_handling")).await;
    assert_eq!(err["result"]["isError"], true);

    let deleted = reqwest::Client::new()
        .delete(&url)
        .header("Mcp-Session-Id", &sid)
        .send()
        .await
        .expect("response");
    assert!(deleted.status().is_success());
    let (status, _, _) = post(&url, &h, call(4, "test_simple_text")).await;
    assert_eq!(status, 404, "a terminated session is gone");
    // Another session is untouched.
    let (status, _, _) = post(
        &url,
        &[("Mcp-Session-Id", "session-other")],
        call(5, "echo"),
    )
    .await;
    assert_eq!(status, 200);
}

#[tokio::test(flavor = "current_thread")]
async fn stateless_lists_are_cacheable() {
    let server = FaultServer::start("127.0.0.1:0").await.unwrap();
    let h = [
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tools/list"),
    ];
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}}}});
    let (status, _, r) = post(&server.url(None), &h, list.clone()).await;
    assert_eq!(status, 200);
    assert_eq!(r["result"]["cacheScope"], "public");
    assert!(r["result"]["ttlMs"].is_u64());
    assert_eq!(r["result"]["resultType"], "complete");
    // The 2025 wire has no caching members.
    let (_, _, r) = post(&server.url(None), &[], list).await;
    assert!(r["result"].get("cacheScope").is_none());
}

/// A 2025-11-25 session on `url`: its id.
async fn session(url: &str) -> String {
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {"elicitation": {}},
        "clientInfo": {"name": "t", "version": "1"}}});
    let (status, sid, _) = post(url, &[], init).await;
    assert_eq!(status, 200);
    sid.expect("a session id")
}

fn request(id: u64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

#[tokio::test(flavor = "current_thread")]
async fn stateless_requests_are_checked_before_dispatch() {
    let server = FaultServer::start("127.0.0.1:0").await.unwrap();
    let url = server.url(None);
    let meta = json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                                "io.modelcontextprotocol/clientCapabilities": {}}});
    let v = ("MCP-Protocol-Version", "2026-07-28");
    let (status, _, r) = post(&url, &[v], request(7, "tools/list", meta.clone())).await;
    assert_eq!(
        (status, &r["error"]["code"], &r["id"]),
        (400, &json!(-32020), &json!(7))
    );
    let (status, _, r) = post(
        &url,
        &[v, ("mcp-method", " tools/list ")],
        request(8, "tools/list", meta.clone()),
    )
    .await;
    assert_eq!(status, 200, "{r}");
    let (status, _, r) = post(
        &url,
        &[v, ("Mcp-Method", "tools/list")],
        request(9, "tools/list", json!({})),
    )
    .await;
    assert_eq!((status, &r["error"]["code"]), (400, &json!(-32602)));
    let odd = [("MCP-Protocol-Version", "v9"), ("Mcp-Method", "tools/list")];
    let (status, _, r) = post(&url, &odd, request(10, "tools/list", meta.clone())).await;
    assert_eq!((status, &r["error"]["code"]), (400, &json!(-32022)));
    assert_eq!(r["error"]["data"]["requested"], "v9");
    let init = [v, ("Mcp-Method", "initialize")];
    let (status, _, r) = post(&url, &init, request(11, "initialize", meta.clone())).await;
    assert_eq!(
        (status, &r["error"]["code"]),
        (404, &json!(-32601)),
        "removed in 2026-07-28"
    );
    let read = [
        v,
        ("Mcp-Method", "resources/read"),
        ("Mcp-Name", "test://static-text"),
    ];
    let mut params = meta.clone();
    params["uri"] = json!("test://static-text");
    let (status, _, r) = post(&url, &read, request(12, "resources/read", params)).await;
    assert_eq!(status, 200, "{r}");
    assert_eq!(r["result"]["contents"][0]["uri"], "test://static-text");
    assert_eq!(r["result"]["cacheScope"], "public");
}

#[tokio::test(flavor = "current_thread")]
async fn resources_prompts_and_completion_answer_in_a_session() {
    let server = FaultServer::start("127.0.0.1:0").await.unwrap();
    let url = server.url(None);
    let sid = session(&url).await;
    let h = [
        ("Mcp-Session-Id", sid.as_str()),
        ("MCP-Protocol-Version", "2025-11-25"),
    ];
    let (_, _, r) = post(
        &url,
        &h,
        request(
            2,
            "resources/read",
            json!({"uri": "test://template/42/data"}),
        ),
    )
    .await;
    let text = r["result"]["contents"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(text.contains("\"42\""), "{r}");
    let (_, _, r) = post(
        &url,
        &h,
        request(3, "resources/read", json!({"uri": "test://gone"})),
    )
    .await;
    assert_eq!(
        (&r["error"]["code"], &r["error"]["data"]["uri"]),
        (&json!(-32602), &json!("test://gone"))
    );
    let args =
        json!({"name": "test_prompt_with_arguments", "arguments": {"arg1": "a", "arg2": "b"}});
    let (_, _, r) = post(&url, &h, request(4, "prompts/get", args)).await;
    assert_eq!(
        r["result"]["messages"][0]["content"]["text"],
        "Prompt with arguments: arg1='a', arg2='b'"
    );
    let complete = json!({"ref": {"type": "ref/prompt", "name": "test_prompt_with_arguments"},
                          "argument": {"name": "arg1", "value": "wor"}});
    let (_, _, r) = post(&url, &h, request(5, "completion/complete", complete)).await;
    assert_eq!(r["result"]["completion"]["values"], json!(["world"]));
    let (_, _, r) = post(
        &url,
        &h,
        request(6, "logging/setLevel", json!({"level": "info"})),
    )
    .await;
    assert_eq!(r["result"], json!({}));
}

#[tokio::test(flavor = "current_thread")]
async fn an_elicitation_waits_on_the_call_stream_for_the_answer_post() {
    let server = FaultServer::start("127.0.0.1:0").await.unwrap();
    let url = server.url(None);
    let sid = session(&url).await;
    let call = request(
        2,
        "tools/call",
        json!({"name": "test_elicitation", "arguments": {"message": "who?"}}),
    );
    let started = std::time::Instant::now();
    let mut resp = reqwest::Client::new()
        .post(&url)
        .header("Content-Type", "application/json")
        .header("Accept", "application/json, text/event-stream")
        .header("Mcp-Session-Id", &sid)
        .header("MCP-Protocol-Version", "2025-11-25")
        .body(call.to_string())
        .send()
        .await
        .expect("response");
    let mut seen = String::new();
    let read = async {
        let mut answered = false;
        while let Ok(Some(chunk)) = resp.chunk().await {
            seen.push_str(&String::from_utf8_lossy(&chunk));
            if !answered && seen.contains("elicitation/create") {
                answered = true;
                let answer = json!({"jsonrpc": "2.0", "id": "elicitation-1",
                                    "result": {"action": "accept", "content": {"response": "me"}}});
                let h = [
                    ("Mcp-Session-Id", sid.as_str()),
                    ("MCP-Protocol-Version", "2025-11-25"),
                ];
                let (status, _, _) = post(&url, &h, answer).await;
                assert_eq!(status, 202);
            }
        }
    };
    tokio::time::timeout(std::time::Duration::from_secs(10), read)
        .await
        .expect("the stream ends");
    assert!(seen.contains("\"message\":\"who?\""), "{seen}");
    assert!(
        seen.contains("\"id\":2") && seen.contains("User response received"),
        "{seen}"
    );
    // Answered at once: the result did not wait out the 3 s limit.
    assert!(
        started.elapsed() < std::time::Duration::from_millis(2500),
        "{:?}",
        started.elapsed()
    );
}
