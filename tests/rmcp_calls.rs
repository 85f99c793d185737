//! Logical calls through rmcp's own client: the calls grouped from what the rmcp transport
//! ([`VerdictHttpClient`]) judged live equal the calls of its recording replayed through the HAR
//! writer and reader (`replay --calls`), and so do the verdicts, for each way the rmcp test
//! server speaks (2026-07-28 SSE and JSON, 2025-11-25 with sessions).
#![cfg(all(feature = "cli", feature = "rmcp"))]

mod support;

use std::time::Duration;

use mcp_verdict::adapters::rmcp::{Recording, VerdictHttpClient};
use mcp_verdict::replay::{Item, judge_entry_rows, replay_calls};
use mcp_verdict::{Call, Driver, Limits, Outcome, RetryOrigin, Verdict, har};
use rmcp::model::{CallToolRequestParams, ClientConfig, ProtocolVersion as RmcpVersion};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientLifecycleMode, ClientServiceExt, ServiceExt};
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
    // With a session (2025-11-25), rmcp also opens its standalone GET stream after the
    // handshake and sends DELETE at close: both judged (kinds `listen` and `terminate`).
    let session_requests = if mode == Mode::Legacy { 2 } else { 0 };
    let exchanges = handshake + 6 + session_requests;
    client.cancel().await.expect("rmcp closes");
    settled(&recording).await;
    (recording, exchanges)
}

/// Waits (at most 10 s) until every exchange begun has its verdict: rmcp stops reading a stream
/// shortly after its answer, and bodies it does not read are judged in the background.
async fn settled(recording: &Recording) {
    for _ in 0..200 {
        if recording.in_progress() == 0 {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The recording's entries written as HAR and replayed: calls and verdicts.
fn replayed(recording: &Recording) -> (Vec<Call>, Vec<Verdict>) {
    let mut bytes = Vec::new();
    har::write(&recording.entries(), &mut bytes).unwrap();
    let mut calls = Vec::new();
    replay_calls(&bytes[..], rmcp_limits(), &mut |c| calls.push(c)).unwrap();
    let mut session = Driver::new(rmcp_limits());
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

    // rmcp's standalone GET and its DELETE: judged as listen and terminate, each a call of
    // its own (live as replayed, compared above).
    let session_rows = |v: &[Verdict]| -> Vec<(Option<String>, Option<&'static str>, Outcome)> {
        v.iter()
            .filter(|v| v.http_method.as_deref() != Some("POST"))
            .map(|v| {
                let method = v.http_method.as_deref().map(str::to_owned);
                (method, v.kind.map(|k| k.as_str()), v.outcome)
            })
            .collect()
    };
    let session_calls: Vec<(Option<&str>, usize, Outcome)> = live
        .iter()
        .filter(|c| c.method.is_none())
        .map(|c| (c.method.as_deref(), c.entries.len(), c.outcome))
        .collect();
    if mode == Mode::Legacy {
        assert_eq!(
            session_rows(&live_verdicts),
            vec![
                (Some("GET".into()), Some("listen"), Outcome::Listening),
                (
                    Some("DELETE".into()),
                    Some("terminate"),
                    Outcome::SessionTerminated
                ),
            ],
            "{}",
            serde_json::to_string(&live_verdicts).unwrap()
        );
        assert_eq!(
            live_verdicts
                .last()
                .and_then(|v| v.kind)
                .map(|k| k.as_str()),
            Some("terminate"),
            "the DELETE is the last exchange"
        );
        assert_eq!(
            session_calls,
            vec![
                (None, 1, Outcome::Listening),
                (None, 1, Outcome::SessionTerminated)
            ],
            "{}",
            serde_json::to_string(&live).unwrap()
        );
    } else {
        assert!(session_rows(&live_verdicts).is_empty(), "{mode:?}");
    }

    // The grouping is the one a person would make: one call per operation, the tool error a
    // complete call of its own, and the second echo (same arguments, after a complete answer,
    // within the automatic-retry window) a call of its own flagged call.resent_after_complete.
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
    let echoes: Vec<Vec<&str>> = live
        .iter()
        .filter(|c| c.tool.as_deref() == Some("echo"))
        .map(|c| c.violations.iter().map(|w| w.rule.id()).collect())
        .collect();
    assert_eq!(
        echoes,
        vec![vec![], vec!["call.resent_after_complete"]],
        "{mode:?}"
    );
    assert_eq!(
        tool_calls,
        vec![
            (
                Some("echo"),
                1,
                Outcome::ToolSuccess,
                true,
                Some(RetryOrigin::None)
            ),
            (
                Some("echo"),
                1,
                Outcome::ToolSuccess,
                true,
                Some(RetryOrigin::None)
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

/// One fault-server scenario through rmcp's client; `Err` says how live and replay differ.
/// Returns the methods of the exchanges judged.
async fn fault_scenario(
    base: String,
    scenario: mcp_verdict::faults::scenarios::Scenario,
) -> Result<Vec<Option<String>>, String> {
    use mcp_verdict::adapters::Deadlines;

    let mut limits = rmcp_limits();
    if let Some(n) = scenario.client_max_event_bytes {
        limits.max_event_bytes = n;
    }
    let deadline = Duration::from_millis(scenario.client_deadline_ms.unwrap_or(5_000));
    let recording = Recording::new();
    let http = VerdictHttpClient::new(reqwest::Client::new(), |_: &Verdict| {})
        .with_limits(limits)
        .with_deadlines(Deadlines {
            overall: Some(deadline),
            ..Deadlines::default()
        })
        .with_recording(&recording);
    let url = format!("{base}/mcp/{}", scenario.name);
    let config = StreamableHttpClientTransportConfig::with_uri(url);
    let transport = StreamableHttpClientTransport::with_client(http, config);
    // rmcp may give up at any step; what it sent until then is what is compared.
    let run = async {
        if let Ok(client) = ClientConfig::default().serve(transport).await {
            let call = CallToolRequestParams::new(scenario.tool);
            let _ = client.call_tool(call).await;
            let _ = client.cancel().await;
        }
    };
    let _ = tokio::time::timeout(Duration::from_secs(15), run).await;
    settled(&recording).await;
    let live_verdicts = recording.verdicts();
    let live = recording.calls();
    let mut bytes = Vec::new();
    har::write(&recording.entries(), &mut bytes).unwrap();
    let mut calls = Vec::new();
    replay_calls(&bytes[..], limits, &mut |c| calls.push(c)).unwrap();
    let mut session = Driver::new(limits);
    let mut verdicts = Vec::new();
    har::read_entries(&bytes[..], &mut |entry| {
        judge_entry_rows(&mut session, &entry, &mut std::iter::empty(), &mut |item| {
            if let Item::Verdict(v) = item {
                verdicts.push(*v);
            }
        });
    })
    .unwrap();
    let json = |x: &dyn erased::Json| x.json();
    let name = scenario.name;
    if json(&live_verdicts) != json(&verdicts) {
        return Err(format!(
            "{name}: verdicts differ:\n  live:   {}\n  replay: {}",
            serde_json::to_string(&live_verdicts).unwrap(),
            serde_json::to_string(&verdicts).unwrap()
        ));
    }
    if json(&live) != json(&calls) {
        return Err(format!(
            "{name}: calls differ:\n  live:   {}\n  replay: {}",
            serde_json::to_string(&live).unwrap(),
            serde_json::to_string(&calls).unwrap()
        ));
    }
    Ok(live_verdicts
        .into_iter()
        .map(|v| v.method.map(std::borrow::Cow::into_owned))
        .collect())
}

/// Every fault-server scenario through rmcp's client (eight at a time): whatever the fault, the
/// calls and verdicts of what the transport judged equal those of its recording replayed.
#[tokio::test(flavor = "current_thread")]
async fn rmcp_live_calls_equal_replayed_calls_for_every_fault_scenario() {
    use mcp_verdict::faults::{FaultServer, scenarios};

    let server = FaultServer::start("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", server.addr());
    let list = scenarios::all();
    let mut failures = Vec::new();
    let mut tool_calls = 0;
    for batch in list.chunks(8) {
        let runs: Vec<_> = batch
            .iter()
            .map(|s| tokio::spawn(fault_scenario(base.clone(), s.clone())))
            .collect();
        for (run, s) in runs.into_iter().zip(batch) {
            match run.await {
                Ok(Ok(methods)) => {
                    let calls = methods.iter().flatten().filter(|m| *m == "tools/call");
                    tool_calls += calls.count();
                }
                Ok(Err(e)) => failures.push(e),
                Err(e) => failures.push(format!("{}: the run failed: {e}", s.name)),
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // rmcp got through the handshake and made the scenario's call in (nearly) every scenario.
    eprintln!(
        "{tool_calls} tools/call exchanges judged over {} scenarios",
        list.len()
    );
    assert!(
        tool_calls * 10 >= list.len() * 9,
        "only {tool_calls} tools/call exchanges over {} scenarios",
        list.len()
    );
}
