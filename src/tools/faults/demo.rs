//! Probes every scenario of a fault server with the live client and compares each verdict with
//! the one the scenario declares.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

use super::scenarios::{Expect, Scenario};
use crate::adapters::lock;
use crate::adapters::{Client, Deadlines, Handshake};
use crate::har::Entry;
use crate::limits::Limits;
use crate::verdict::Verdict;

/// What probing one scenario gave.
#[derive(Debug, Clone)]
pub struct Run {
    /// The scenario.
    pub scenario: Scenario,
    /// Every verdict, in order: handshake, `tools/list`, the call, and any follow-up or resume.
    pub verdicts: Vec<Verdict>,
    /// The call's verdict (and any follow-up) compared with the expectation: mismatches.
    pub mismatches: Vec<String>,
    /// Every exchange as recorded, for `replay`.
    pub recorded: Vec<Entry>,
}

impl Run {
    /// The verdict of the scenario's `tools/call`.
    pub fn call(&self) -> Option<&Verdict> {
        self.verdicts
            .iter()
            .find(|v| v.method.as_deref() == Some("tools/call"))
    }

    /// Whether everything matched.
    pub fn passed(&self) -> bool {
        self.mismatches.is_empty()
    }
}

impl Expect {
    /// The differences between this expectation and `v` (empty when it matches).
    pub fn compare(&self, v: &Verdict) -> Vec<String> {
        let mut out = Vec::new();
        let mut check = |what: &str, want: String, got: String| {
            if want != got {
                out.push(format!("{what}: expected {want}, got {got}"));
            }
        };
        check("outcome", self.outcome.to_string(), v.outcome.to_string());
        check(
            "advice",
            self.advice.as_str().into(),
            v.retry.advice.as_str().into(),
        );
        check(
            "status",
            format!("{:?}", self.status),
            format!("{:?}", v.status),
        );
        check(
            "event_count",
            format!("{:?}", self.event_count),
            format!("{:?}", v.event_count),
        );
        check(
            "error_code",
            format!("{:?}", self.error_code),
            format!("{:?}", v.error_code),
        );
        let mut got: Vec<&str> = v.violations.iter().map(|x| x.rule.as_str()).collect();
        got.sort_unstable();
        check(
            "violations",
            format!("{:?}", self.violations),
            format!("{got:?}"),
        );
        out
    }
}

/// Probes `scenario` at `url` (the scenario's endpoint).
pub async fn probe(url: &str, scenario: &Scenario) -> Run {
    let recorder = Arc::new(Mutex::new(Vec::new()));
    let mut deadlines = Deadlines {
        overall: Some(Duration::from_secs(10)),
        ..Deadlines::default()
    };
    if let Some(ms) = scenario.client_deadline_ms {
        deadlines.overall = Some(Duration::from_millis(ms));
    }
    let mut limits = Limits::default();
    if let Some(n) = scenario.client_max_event_bytes {
        limits.max_event_bytes = n;
    }
    let client = Client::builder(url)
        .deadlines(deadlines)
        .limits(limits)
        .record(recorder.clone())
        .build();
    let mut run = Run {
        scenario: scenario.clone(),
        verdicts: Vec::new(),
        mismatches: Vec::new(),
        recorded: Vec::new(),
    };
    let client = match client {
        Ok(c) => c,
        Err(e) => {
            run.mismatches.push(format!("cannot build a client: {e}"));
            return run;
        }
    };
    run.verdicts = client.handshake(Handshake::Auto).await;
    run.verdicts.push(
        client
            .request("tools/list", json!({}))
            .await
            .verdict()
            .await,
    );
    let params = json!({
        "name": scenario.tool,
        "arguments": {"message": "hello"},
        "_meta": {"progressToken": "p-1"},
    });
    let call = client
        .request("tools/call", params.clone())
        .await
        .verdict()
        .await;
    run.mismatches.extend(scenario.expect.compare(&call));
    let (resumable, last_id, after) = (
        call.resumable,
        call.last_event_id.clone(),
        call.retry.after_ms,
    );
    run.verdicts.push(call);

    if let Some(follow) = &scenario.follow_up {
        let mut params = params;
        params["inputResponses"] =
            json!({"confirm": {"action": "accept", "content": {"ok": true}}});
        params["requestState"] = json!("state-1");
        let v = client.request("tools/call", params).await.verdict().await;
        run.mismatches.extend(
            follow
                .compare(&v)
                .into_iter()
                .map(|m| format!("follow-up {m}")),
        );
        run.verdicts.push(v);
    }
    if let Some(resume) = &scenario.resume {
        match (resumable, last_id) {
            (true, Some(last)) => {
                tokio::time::sleep(Duration::from_millis(after.unwrap_or(0))).await;
                let v = client.resume(&last).await.verdict().await;
                run.mismatches.extend(
                    resume
                        .compare(&v)
                        .into_iter()
                        .map(|m| format!("resume {m}")),
                );
                run.verdicts.push(v);
            }
            _ => run
                .mismatches
                .push("resume: the stream was not resumable".into()),
        }
    }
    for (i, v) in run.verdicts.iter_mut().enumerate() {
        v.index = i as u64;
    }
    run.recorded = std::mem::take(&mut *lock(&recorder));
    run
}

/// Probes every scenario at `base` (`http://host:port`), a few at a time.
pub async fn run_all(base: &str, scenarios: &[Scenario]) -> Vec<Run> {
    let mut runs = Vec::with_capacity(scenarios.len());
    for batch in scenarios.chunks(8) {
        let mut handles = Vec::new();
        for s in batch {
            let url = format!("{base}/mcp/{}", s.name);
            let s = s.clone();
            handles.push(tokio::spawn(async move { probe(&url, &s).await }));
        }
        for (h, s) in handles.into_iter().zip(batch) {
            runs.push(h.await.unwrap_or_else(|e| Run {
                scenario: s.clone(),
                verdicts: Vec::new(),
                mismatches: vec![format!("the probe task failed: {e}")],
                recorded: Vec::new(),
            }));
        }
    }
    runs
}

/// The scenario list as JSON (for `serve-faults --list --format json`).
pub fn list_json(scenarios: &[Scenario]) -> Value {
    serde_json::to_value(scenarios).unwrap_or(Value::Null)
}
