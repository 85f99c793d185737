#![cfg(feature = "client")]
//! The fault server's full matrix, live over loopback, and the replay of what was recorded:
//! live and replay verdicts must be identical.

use mcp_verdict::faults::{FaultServer, demo, scenarios};
use mcp_verdict::replay::{Item, judge_entry};
use mcp_verdict::{Driver, Limits, Outcome, har};

#[tokio::test(flavor = "current_thread")]
async fn every_scenario_gives_its_declared_verdict_live_and_in_replay() {
    let server = FaultServer::start("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", server.addr());
    let list = scenarios::all();
    assert!(list.len() >= 36, "scenario table shrank to {}", list.len());
    let runs = tokio::time::timeout(
        std::time::Duration::from_secs(60),
        demo::run_all(&base, &list),
    )
    .await
    .expect("the matrix finishes within a minute");

    let mut failures = Vec::new();
    for run in &runs {
        let name = run.scenario.name;
        for m in &run.mismatches {
            failures.push(format!("{name}: {m}"));
        }
        // The handshake and listing must have worked, or the call verdict means nothing (unless
        // the scenario's fault is on the listing: then its declared verdict was checked).
        let listing = run
            .verdicts
            .iter()
            .find(|v| v.method.as_deref() == Some("tools/list"));
        if run.scenario.listing.is_none() && listing.map(|v| v.outcome) != Some(Outcome::Success) {
            failures.push(format!(
                "{name}: tools/list was {:?}",
                listing.map(|v| v.outcome)
            ));
        }

        // Replay what was recorded, through the HAR writer and reader, with the same limits.
        let mut bytes = Vec::new();
        har::write(&run.recorded, &mut bytes).unwrap();
        let entries = har::parse(&bytes).unwrap();
        let mut limits = Limits::default();
        if let Some(n) = run.scenario.client_max_event_bytes {
            limits.max_event_bytes = n;
        }
        let mut session = Driver::new(limits);
        let replayed: Vec<_> = entries
            .iter()
            .filter_map(
                |e| match judge_entry(&mut session, e, &mut std::iter::empty()) {
                    Item::Verdict(v) => Some(*v),
                    Item::Skipped(s) => {
                        failures.push(format!(
                            "{name}: replay skipped entry {}: {}",
                            s.index, s.reason
                        ));
                        None
                    }
                },
            )
            .collect();
        if replayed != run.verdicts {
            for (live, again) in run.verdicts.iter().zip(&replayed) {
                if live != again {
                    failures.push(format!(
                        "{name}: live and replay differ:\n  live:   {}\n  replay: {}",
                        serde_json::to_string(live).unwrap(),
                        serde_json::to_string(again).unwrap()
                    ));
                }
            }
            if replayed.len() != run.verdicts.len() {
                failures.push(format!(
                    "{name}: {} live verdicts, {} replayed",
                    run.verdicts.len(),
                    replayed.len()
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[tokio::test(flavor = "current_thread")]
async fn unknown_scenario_is_a_plain_404() {
    let server = FaultServer::start("127.0.0.1:0").await.unwrap();
    let client = mcp_verdict::adapters::Client::builder(server.url(Some("no-such-scenario")))
        .build()
        .unwrap();
    let verdicts = client
        .handshake(mcp_verdict::adapters::Handshake::Stateless)
        .await;
    assert_eq!(verdicts[0].outcome, Outcome::HttpError);
    assert_eq!(verdicts[0].status, Some(404));
    assert_eq!(verdicts[0].content_type.as_deref(), Some("text/plain"));
}
