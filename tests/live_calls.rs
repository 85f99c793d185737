#![cfg(feature = "client")]
//! Logical calls live and in replay: for every fault-server scenario, the calls grouped from the
//! live client's verdicts equal the calls of the capture it recorded, read back through the HAR
//! writer and reader.

use mcp_verdict::faults::{FaultServer, demo, scenarios};
use mcp_verdict::replay::{calls_of, replay_calls};
use mcp_verdict::{Limits, RetryOrigin, har};

#[tokio::test(flavor = "current_thread")]
async fn live_calls_equal_replayed_calls_for_every_scenario() {
    let server = FaultServer::start("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", server.addr());
    let list = scenarios::all();
    let runs = tokio::time::timeout(
        std::time::Duration::from_secs(60),
        demo::run_all(&base, &list),
    )
    .await
    .expect("the matrix finishes within a minute");

    let mut failures = Vec::new();
    let mut grouped = Vec::new();
    for run in &runs {
        let name = run.scenario.name;
        let live = calls_of(&run.verdicts, &run.recorded);
        let mut bytes = Vec::new();
        har::write(&run.recorded, &mut bytes).unwrap();
        let mut limits = Limits::default();
        if let Some(n) = run.scenario.client_max_event_bytes {
            limits.max_event_bytes = n;
        }
        let mut replayed = Vec::new();
        replay_calls(&bytes[..], limits, &mut |c| replayed.push(c)).unwrap();
        if live != replayed {
            failures.push(format!(
                "{name}: live and replayed calls differ:\n  live:   {}\n  replay: {}",
                serde_json::to_string(&live).unwrap(),
                serde_json::to_string(&replayed).unwrap()
            ));
        }
        // The calls read back from the capture are the ones the scenario declares.
        let first = run.call().map_or(0, |v| v.index);
        for m in demo::compare_calls(&run.scenario.calls, &replayed, first) {
            failures.push(format!("{name}: replayed {m}"));
        }
        let entries: usize = live.iter().map(|c| c.entries.len()).sum();
        if entries != run.verdicts.len() {
            failures.push(format!(
                "{name}: calls hold {entries} exchanges, the run made {}",
                run.verdicts.len()
            ));
        }
        grouped.push((name, live));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    let declared = runs.iter().filter(|r| !r.scenario.calls.is_empty()).count();
    assert!(
        declared >= 9,
        "only {declared} scenarios declare their calls"
    );

    // The two scenarios whose traffic is one operation over two exchanges are grouped so.
    let origin_of = |scenario: &str| {
        grouped
            .iter()
            .find(|(n, _)| *n == scenario)
            .and_then(|(_, calls)| {
                calls
                    .iter()
                    .find(|c| c.method.as_deref() == Some("tools/call"))
            })
            .map(|c| (c.entries.len(), c.retry_origin, c.complete))
    };
    assert_eq!(
        origin_of("input-required"),
        Some((2, Some(RetryOrigin::Input), true))
    );
    assert_eq!(
        origin_of("sse-priming-resume"),
        Some((2, Some(RetryOrigin::Resume), true))
    );
}
