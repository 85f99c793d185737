//! Logical calls through rmcp's own client: the calls grouped from what the rmcp transport
//! ([`VerdictHttpClient`]) judged live equal the calls of its recording replayed through the HAR
//! writer and reader (`replay --calls`), and so do the verdicts, for each way the rmcp test
//! server speaks (2026-07-28 SSE and JSON, 2025-11-25 with sessions).
#![cfg(all(feature = "cli", feature = "rmcp"))]

mod support;

use std::time::Duration;

use mcp_verdict::adapters::rmcp::{Recording, VerdictHttpClient};
use mcp_verdict::replay::{Item, judge_entry_rows, replay_calls};
use mcp_verdict::{Call, Limits, Outcome, RetryOrigin, Session, Verdict, har};
use rmcp::model::{CallToolRequestParams, ClientConfig, ProtocolVersion as RmcpVersion};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientLifecycleMode, ClientServiceExt};
use serde_json::json;
use support::Mode;

/// rmcp's default byte limits, which the transport judges by (see `VerdictHttpClient::new`).
fn rmcp_limits() -> Limits {
    Limits {
        max_event_bytes: 16 * 1024 * 1024,
        max_body_bytes: 16 * 1024 * 1024,
        ..Limits::default()
    }
}

/// Runs rmcp's client against the test server in `mode`: list, echo twice with the same
/// arguments, a tool error, a call with progress, an unknown tool. Returns the recording once
/// every exchange has its verdict.
async fn run(mode: Mode) -> (Recording, usize) {
    let server = support::rmcp_server(mode).await;
    let recording = Recording::new();
    let http =
        VerdictHttpClient::new(reqwest::Client::new(), |_: &Verdict| {}).with_recording(&recording);
    let config = StreamableHttpClientTransportConfig::with_uri(server.url.clone());
    let transport = StreamableHttpClientTransport::with_client(http, config);
    let (handler, lifecycle, handshake) = match mode {
        Mode::Legacy => (
            ClientConfig::default().with_protocol_version(RmcpVersion::V_2025_11_25),
            ClientLifecycleMode::Initialize,
            2, // initialize, notifications/initialized
        ),
        Mode::Modern | Mode::ModernJson => (
            ClientConfig::default(),
            ClientLifecycleMode::Auto {
                preferred_versions: vec![RmcpVersion::V_2026_07_28],
                legacy_version: None,
            },
            1, // server/discover
        ),
    };
    let client = handler
        .serve_with_lifecycle(transport, lifecycle)
        .await
        .expect("rmcp connects");
    client.list_all_tools().await.expect("tools/list");
    let mut args = serde_json::Map::new();
    args.insert("text".into(), json!("hi"));
    for _ in 0..2 {
        let echo = CallToolRequestParams::new("echo").with_arguments(args.clone());
        client.call_tool(echo).await.expect("echo");
    }
    client
        .call_tool(CallToolRequestParams::new("fail"))
        .await
        .expect("fail");
    client
        .call_tool(CallToolRequestParams::new("progress"))
        .await
        .expect("progress");
    let _ = client.call_tool(CallToolRequestParams::new("nope")).await;
    let exchanges = handshake + 6;
    // rmcp stops reading a stream shortly after its answer; the verdict follows within the
    // transport's grace period.
    for _ in 0..200 {
        if recording.verdicts().len() >= exchanges {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    client.cancel().await.expect("rmcp closes");
    (recording, exchanges)
}

/// The recording's entries written as HAR and replayed: calls and verdicts.
fn replayed(recording: &Recording) -> (Vec<Call>, Vec<Verdict>) {
    let mut bytes = Vec::new();
    har::write(&recording.entries(), &mut bytes).unwrap();
    let mut calls = Vec::new();
    replay_calls(&bytes[..], rmcp_limits(), &mut |c| calls.push(c)).unwrap();
    let mut session = Session::new(rmcp_limits());
    let mut verdicts = Vec::new();
    har::read_entries(&bytes[..], &mut |entry| {
        judge_entry_rows(&mut session, &entry, &mut std::iter::empty(), &mut |item| {
            if let Item::Verdict(v) = item {
                verdicts.push(*v);
            }
        });
    })
    .unwrap();
    (calls, verdicts)
}

/// A `tools/call` call as the test pins it: tool, exchanges, outcome, complete, retry origin.
type Row<'a> = (Option<&'a str>, usize, Outcome, bool, Option<RetryOrigin>);

async fn live_equals_replay(mode: Mode) {
    let (recording, exchanges) = tokio::time::timeout(Duration::from_secs(60), run(mode))
        .await
        .expect("the run finishes within a minute");
    let live_verdicts = recording.verdicts();
    assert_eq!(
        live_verdicts.len(),
        exchanges,
        "{mode:?}: every exchange judged"
    );
    let live = recording.calls();
    let (calls, verdicts) = replayed(&recording);
    let json = |x: &dyn erased::Json| x.json();
    assert_eq!(
        json(&live_verdicts),
        json(&verdicts),
        "{mode:?}: live and replayed verdicts differ"
    );
    assert_eq!(
        json(&live),
        json(&calls),
        "{mode:?}: live and replayed calls differ"
    );

    // The calls hold every exchange once, in order.
    let entries: Vec<u64> = live.iter().flat_map(|c| c.entries.clone()).collect();
    let mut sorted = entries.clone();
    sorted.sort();
    assert_eq!(
        sorted,
        (0..exchanges as u64).collect::<Vec<_>>(),
        "{mode:?}"
    );

    // The grouping is the one a person would make: one call per operation, the tool error a
    // complete call of its own, and the second echo (same arguments, after a complete answer,
    // within the automatic-retry window) joined to the first as an automatic re-send.
    let tool_calls: Vec<Row> = live
        .iter()
        .filter(|c| c.method.as_deref() == Some("tools/call"))
        .map(|c| {
            (
                c.tool.as_deref(),
                c.entries.len(),
                c.outcome,
                c.complete,
                c.retry_origin,
            )
        })
        .collect();
    assert_eq!(
        tool_calls,
        vec![
            (
                Some("echo"),
                2,
                Outcome::ToolSuccess,
                true,
                Some(RetryOrigin::Automatic)
            ),
            (
                Some("fail"),
                1,
                Outcome::ToolError,
                true,
                Some(RetryOrigin::None)
            ),
            (
                Some("progress"),
                1,
                Outcome::ToolSuccess,
                true,
                Some(RetryOrigin::None)
            ),
            (
                Some("nope"),
                1,
                Outcome::JsonrpcError,
                true,
                Some(RetryOrigin::None)
            ),
        ],
        "{mode:?}: {}",
        serde_json::to_string(&live).unwrap()
    );
}

/// Compares by JSON, so a difference shows as text.
mod erased {
    pub trait Json {
        fn json(&self) -> String;
    }
    impl<T: serde::Serialize> Json for T {
        fn json(&self) -> String {
            serde_json::to_string_pretty(self).unwrap()
        }
    }
}

#[tokio::test]
async fn rmcp_live_calls_equal_replayed_calls_modern_sse() {
    live_equals_replay(Mode::Modern).await;
}

#[tokio::test]
async fn rmcp_live_calls_equal_replayed_calls_modern_json() {
    live_equals_replay(Mode::ModernJson).await;
}

#[tokio::test]
async fn rmcp_live_calls_equal_replayed_calls_legacy() {
    live_equals_replay(Mode::Legacy).await;
}
