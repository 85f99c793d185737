#![cfg(feature = "client")]
//! Soak against the fault server: exact counts for a known scenario mix, mergeable reports, and
//! the CLI's thresholds.

use std::sync::Arc;

mod support;

use mcp_verdict::adapters::h1::Connection;
use mcp_verdict::adapters::{Client, Handshake};
use mcp_verdict::faults::FaultServer;
use mcp_verdict::soak::{self, Live, MixEntry, Report, SoakConfig};
use mcp_verdict::{Outcome, ProtocolVersion};
use serde_json::json;

fn mix(cut_every: u32) -> Vec<MixEntry> {
    vec![
        MixEntry {
            tool: "echo".into(),
            args: json!({"message": "hi"}),
            weight: cut_every - 1,
        },
        MixEntry {
            tool: "pay".into(),
            args: json!({"_fault": "sse-cut-between-events"}),
            weight: 1,
        },
    ]
}

async fn soak_once(url: &str, requests: u64, concurrency: usize) -> Report {
    let client = Client::builder(url).build().unwrap();
    let config = SoakConfig {
        mix: mix(10),
        concurrency,
        requests: Some(requests),
        duration: None,
        rate: None,
        handshake: Handshake::Auto,
        max_connect_failures: soak::DEFAULT_MAX_CONNECT_FAILURES,
    };
    tokio::time::timeout(
        std::time::Duration::from_secs(60),
        soak::run(&client, &config, Arc::new(Live::default())),
    )
    .await
    .expect("bounded in time")
    .expect("the soak ran")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_in_ten_cut_streams_gives_exact_counts() {
    let server = FaultServer::start("127.0.0.1:0").await.unwrap();
    let report = soak_once(&server.url(None), 200, 8).await;
    assert_eq!(report.requests, 200);
    assert_eq!(report.outcomes.get("STREAM_ABORTED"), Some(&20));
    assert_eq!(report.outcomes.get("TOOL_SUCCESS"), Some(&180));
    assert_eq!(report.outcomes.len(), 2, "{:?}", report.outcomes);
    assert_eq!(report.layers.get("stream"), Some(&20));
    assert_eq!(
        (report.streams, report.incomplete_streams, report.incomplete),
        (20, 20, 20)
    );
    assert_eq!(report.events_per_stream.count(), 20);
    assert_eq!(report.events_per_stream.max(), 2);
    assert_eq!(report.head_us.count(), 200);
    assert_eq!(
        report.terminal_us.count(),
        180,
        "aborted streams have no terminal time"
    );
    assert!(report.violations.is_empty(), "{:?}", report.violations);

    // Two runs merged give the sum of the counts and exactly the combined histogram.
    let other = soak_once(&server.url(None), 100, 4).await;
    let mut merged = report.clone();
    merged.merge(&serde_json::from_str(&serde_json::to_string(&other).unwrap()).unwrap());
    assert_eq!(merged.requests, 300);
    assert_eq!(merged.outcomes.get("STREAM_ABORTED"), Some(&30));
    assert_eq!(merged.head_us.count(), 300);
    assert!(merged.head_us.max() >= report.head_us.max().max(other.head_us.max()));
    let text = merged.prometheus();
    assert!(
        text.contains(
            "mcp_verdict_exchanges_total{outcome=\"STREAM_ABORTED\",layer=\"stream\"} 30"
        )
    );
}

/// A fault server on its own runtime, and a scratch folder holding the test mix.
fn cli_setup(
    tag: &str,
) -> (
    tokio::runtime::Runtime,
    FaultServer,
    std::path::PathBuf,
    std::path::PathBuf,
) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let server = rt.block_on(FaultServer::start("127.0.0.1:0")).unwrap();
    let dir = std::env::temp_dir().join(format!("{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mix_file = dir.join("mix.json");
    std::fs::write(&mix_file, serde_json::to_string(&mix(10)).unwrap()).unwrap();
    (rt, server, dir, mix_file)
}

#[test]
fn cli_threshold_breaks_with_exit_1_and_writes_reports() {
    let (_rt, server, dir, mix_file) = cli_setup("mcp-verdict-soak");
    let report_file = dir.join("report.json");
    let metrics_file = dir.join("metrics.prom");
    let run = |max_rate: &str| {
        std::process::Command::new(env!("CARGO_BIN_EXE_mcp-verdict"))
            .args(["soak", &server.url(None), "--mix"])
            .arg(&mix_file)
            .args([
                "--requests",
                "50",
                "--concurrency",
                "4",
                "--max-incomplete-rate",
                max_rate,
                "--report-out",
            ])
            .arg(&report_file)
            .arg("--metrics-file")
            .arg(&metrics_file)
            .output()
            .unwrap()
    };
    let broken = run("0.01");
    assert_eq!(
        broken.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&broken.stdout)
    );
    assert!(String::from_utf8_lossy(&broken.stdout).contains("threshold broken: incomplete rate"));
    let report: Report = serde_json::from_slice(&std::fs::read(&report_file).unwrap()).unwrap();
    assert_eq!(report.outcomes.get("STREAM_ABORTED"), Some(&5));
    assert!(
        std::fs::read_to_string(&metrics_file)
            .unwrap()
            .contains("mcp_verdict_incomplete_total 5")
    );
    let fine = run("0.2");
    assert_eq!(
        fine.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&fine.stdout)
    );

    let merged = std::process::Command::new(env!("CARGO_BIN_EXE_mcp-verdict"))
        .args(["report", "merge", "--json"])
        .arg(&report_file)
        .arg(&report_file)
        .output()
        .unwrap();
    // The one exit rule on the merged counts: the runs had incomplete calls.
    assert_eq!(merged.status.code(), Some(1));
    let merged: Report = serde_json::from_slice(&merged.stdout).unwrap();
    assert_eq!(merged.requests, 100);
    let _ = std::fs::remove_dir_all(&dir);
    drop(server);
}

/// soak's direct HTTP/1.1 path reopens a connection the server closed (`Connection: close` after
/// each answer): every call gets its HTTP answer, none is judged `CONNECTION_FAILED`; once no
/// server listens, the call is a clear `CONNECTION_FAILED`, not a hang.
#[tokio::test]
async fn direct_connection_reopens_after_the_server_closes_it() {
    let body = r#"{"jsonrpc":"2.0","id":1,"result":{"content":[],"isError":false}}"#;
    let server = support::raw_server(support::Raw::Status(200, body.into()), 4).await;
    let client = Client::builder(server.url.clone()).build().unwrap();
    client.set_protocol(ProtocolVersion::V2025_11_25);
    let prepared = client.prepare("tools/call", json!({"name": "echo", "arguments": {}}));
    let headers = Connection::headers_of(&prepared);
    let mut conn = Connection::new(&client).expect("an http:// URL");
    let bounded = std::time::Duration::from_secs(20);
    let mut outcomes = Vec::new();
    for _ in 0..5 {
        let call = conn.send(&prepared, &headers);
        let (verdict, _) = tokio::time::timeout(bounded, async { call.await.finish().await })
            .await
            .expect("bounded in time");
        outcomes.push((verdict.status, verdict.outcome));
    }
    // The first call has id 1, as the canned answer does; the later ones get a foreign id.
    assert_eq!(outcomes[0], (Some(200), Outcome::ToolSuccess));
    for (status, outcome) in &outcomes[1..4] {
        assert_eq!(*status, Some(200));
        assert_ne!(*outcome, Outcome::ConnectionFailed);
    }
    assert_eq!(outcomes[4], (None, Outcome::ConnectionFailed));
}

/// `soak --calls`: one call record per soak call, written as calls finish, with the same
/// outcome counts as the report. The mix sends `echo` with identical arguments again and again
/// (within `AUTOMATIC_RETRY_MS`), which the traffic heuristic would group as automatic re-sends;
/// soak knows each call is one POST, so every record has one entry and `retry_origin: none`.
/// The handshake and `tools/list` exchanges come first, one call each.
#[test]
fn cli_calls_file_has_one_record_per_call() {
    let (_rt, server, dir, mix_file) = cli_setup("mcp-verdict-soak-calls");
    let report_file = dir.join("report.json");
    let calls_file = dir.join("calls.jsonl");
    let run = std::process::Command::new(env!("CARGO_BIN_EXE_mcp-verdict"))
        .args(["soak", &server.url(None), "--mix"])
        .arg(&mix_file)
        .args([
            "--requests",
            "60",
            "--concurrency",
            "4",
            "--max-incomplete-rate",
            "0.5",
        ])
        .arg("--report-out")
        .arg(&report_file)
        .arg("--calls")
        .arg(&calls_file)
        .output()
        .unwrap();
    assert_eq!(
        run.status.code(),
        Some(0),
        "{}{}",
        String::from_utf8_lossy(&run.stdout),
        String::from_utf8_lossy(&run.stderr)
    );
    let report: Report = serde_json::from_slice(&std::fs::read(&report_file).unwrap()).unwrap();
    let text = std::fs::read_to_string(&calls_file).unwrap();
    let calls: Vec<mcp_verdict::Call> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("one call per line"))
        .collect();
    for (n, c) in calls.iter().enumerate() {
        assert_eq!(c.call, n as u64, "numbered in the order written");
    }
    // The handshake and tools/list come first, one call each, as they are.
    let first_load = calls
        .iter()
        .position(|c| c.method.as_deref() == Some("tools/call"))
        .expect("load calls");
    let prelude: Vec<_> = calls[..first_load]
        .iter()
        .map(|c| c.method.as_deref().unwrap_or("-"))
        .collect();
    assert!(
        matches!(prelude.first(), Some(&("initialize" | "server/discover")))
            && prelude.last() == Some(&"tools/list"),
        "{prelude:?}"
    );
    for c in &calls[..first_load] {
        assert!(
            c.complete && c.retry_origin == Some(mcp_verdict::RetryOrigin::None),
            "{c:?}"
        );
        assert_eq!((c.entries.len(), c.post_count), (1, 1), "{c:?}");
    }
    let calls = &calls[first_load..];
    assert_eq!(calls.len() as u64, report.requests);
    assert_eq!(calls.len(), 60);
    let mut outcomes = std::collections::BTreeMap::new();
    for c in calls {
        *outcomes
            .entry(c.outcome.as_str().to_owned())
            .or_insert(0u64) += 1;
        assert_eq!(
            c.retry_origin,
            Some(mcp_verdict::RetryOrigin::None),
            "{c:?}"
        );
        assert_eq!(
            (c.entries.len(), c.post_count, c.ids.len()),
            (1, 1, 1),
            "{c:?}"
        );
        assert_eq!(c.method.as_deref(), Some("tools/call"));
        assert!(!c.double_execution_risk && c.violations.is_empty(), "{c:?}");
        assert!(
            c.client
                .as_deref()
                .is_some_and(|c| c.starts_with("mcp-verdict@"))
        );
        assert_eq!(c.complete, c.outcome.is_complete());
    }
    assert_eq!(outcomes, report.outcomes);
    assert_eq!(outcomes.get("STREAM_ABORTED"), Some(&6));
    // Identical arguments, one call each: 54 echo calls, none grouped.
    assert_eq!(
        calls
            .iter()
            .filter(|c| c.tool.as_deref() == Some("echo"))
            .count(),
        54
    );
    let _ = std::fs::remove_dir_all(&dir);
    drop(server);
}

/// Streams an intermediary cuts after the same idle time: the soak reports `sse.idle_cut` once
/// (on the exchange that made the group), as it happens.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streams_cut_after_the_same_time_are_one_idle_cut() {
    let server = FaultServer::start("127.0.0.1:0").await.unwrap();
    let client = Client::builder(server.url(None)).build().unwrap();
    let config = SoakConfig {
        mix: vec![MixEntry {
            tool: "lookup".into(),
            args: json!({"_fault": "sse-idle-cut"}),
            weight: 1,
        }],
        concurrency: 2,
        requests: Some(4),
        duration: None,
        rate: None,
        handshake: Handshake::Auto,
        max_connect_failures: soak::DEFAULT_MAX_CONNECT_FAILURES,
    };
    let report = tokio::time::timeout(
        std::time::Duration::from_secs(60),
        soak::run(&client, &config, Arc::new(Live::default())),
    )
    .await
    .expect("bounded in time")
    .expect("the soak ran");
    assert_eq!(report.outcomes.get("STREAM_ABORTED"), Some(&4));
    assert_eq!(
        report.violations.get("sse.idle_cut"),
        Some(&1),
        "{:?}",
        report.violations
    );
}
