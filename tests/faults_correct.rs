#![cfg(feature = "tools")]
//! The fault server's correct endpoint as the official conformance suite sees it (the suite
//! itself runs in `.ci/conformance.sh`): fixture tools, DELETEd sessions answer 404, and
//! 2026-07-28 list results carry `cacheScope` and `ttlMs`.

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
