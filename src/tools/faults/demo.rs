//! Probes every scenario of a fault server with the live client: the first `tools/call`, then the
//! scenario's client steps (answer a server request, resume, listen, delete, re-send, MRTR
//! rounds), and compares each verdict and the logical calls with what the scenario declares.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

use super::vocab::{CallExpect, ClientStep, Expect, Scenario};
use crate::adapters::lock;
use crate::adapters::{Client, Deadlines, Handshake};
use crate::calls::Call;
use crate::har::Entry;
use crate::limits::Limits;
use crate::verdict::Verdict;

/// What probing one scenario gave.
#[derive(Debug, Clone)]
pub struct Run {
    /// The scenario.
    pub scenario: Scenario,
    /// Every verdict, in order: handshake, `tools/list`, the call, then each client step's.
    pub verdicts: Vec<Verdict>,
    /// The verdicts and calls compared with the expectations: mismatches.
    pub mismatches: Vec<String>,
    /// Every exchange as recorded, for `replay`.
    pub recorded: Vec<Entry>,
}

impl Run {
    fn new(scenario: &Scenario) -> Self {
        Run {
            scenario: scenario.clone(),
            verdicts: Vec::new(),
            mismatches: Vec::new(),
            recorded: Vec::new(),
        }
    }

    /// The verdict of the scenario's first call (`tools/call`, or the scenario's method).
    pub fn call(&self) -> Option<&Verdict> {
        let method = self.scenario.method;
        self.verdicts
            .iter()
            .find(|v| v.method.as_deref() == Some(method))
    }

    /// Whether everything matched.
    pub fn passed(&self) -> bool {
        self.mismatches.is_empty()
    }

    /// Notes the differences between `want` and `got`, each prefixed with `what`.
    fn check(&mut self, what: &str, want: &Expect, got: &Verdict) {
        let prefix = |m: String| match what {
            "" => m,
            w => format!("{w} {m}"),
        };
        self.mismatches
            .extend(want.compare(got).into_iter().map(prefix));
    }
}

/// `format!("{:?}")` of both sides; a line when they differ.
fn differ<T: std::fmt::Debug>(what: &str, want: T, got: T, out: &mut Vec<String>) {
    let (want, got) = (format!("{want:?}"), format!("{got:?}"));
    if want != got {
        out.push(format!("{what}: expected {want}, got {got}"));
    }
}

impl Expect {
    /// The differences between this expectation and `v` (empty when it matches).
    pub fn compare(&self, v: &Verdict) -> Vec<String> {
        let mut out = Vec::new();
        differ("outcome", self.outcome, v.outcome, &mut out);
        differ("advice", self.advice, v.retry.advice, &mut out);
        differ("status", self.status, v.status, &mut out);
        differ("event_count", self.event_count, v.event_count, &mut out);
        differ("error_code", self.error_code, v.error_code, &mut out);
        differ("layer", self.layer, v.layer, &mut out);
        let mut got: Vec<&str> = v.violations.iter().map(|x| x.rule.as_str()).collect();
        got.sort_unstable();
        differ("violations", &self.violations, &got, &mut out);
        if self.status_origin.is_some() {
            differ(
                "status_origin",
                self.status_origin,
                v.status_origin,
                &mut out,
            );
        }
        out
    }
}

impl CallExpect {
    /// The differences between this expectation and `c` (empty when it matches).
    pub fn compare(&self, c: &Call) -> Vec<String> {
        let mut out = Vec::new();
        differ("method", self.method, c.method.as_deref(), &mut out);
        differ("exchanges", self.exchanges, c.entries.len(), &mut out);
        differ("post_count", self.post_count, c.post_count, &mut out);
        differ(
            "http_statuses",
            &self.http_statuses,
            &c.http_statuses,
            &mut out,
        );
        differ("outcome", self.outcome, c.outcome, &mut out);
        differ("complete", self.complete, c.complete, &mut out);
        differ("retry_origin", self.retry_origin, c.retry_origin, &mut out);
        let risk = c.double_execution_risk;
        differ(
            "double_execution_risk",
            self.double_execution_risk,
            risk,
            &mut out,
        );
        let mut got: Vec<&str> = c.violations.iter().map(|x| x.rule.as_str()).collect();
        got.sort_unstable();
        differ("violations", &self.violations, &got, &mut out);
        differ("auth_step", self.auth_step, c.auth_step, &mut out);
        out
    }
}

/// The client a scenario is probed with: its deadline and limits, recording every exchange.
fn client_for(
    url: &str,
    scenario: &Scenario,
    recorder: &Arc<Mutex<Vec<Entry>>>,
) -> Result<Client, String> {
    let overall = Duration::from_millis(scenario.client_deadline_ms.unwrap_or(10_000));
    let deadlines = Deadlines {
        overall: Some(overall),
        ..Deadlines::default()
    };
    let mut limits = Limits::default();
    if let Some(n) = scenario.client_max_event_bytes {
        limits.max_event_bytes = n;
    }
    let mut builder = Client::builder(url);
    if scenario.bearer {
        let token = format!("Bearer {}", super::auth_faults::DEMO_TOKEN);
        builder = builder.secret_header("Authorization", token);
    }
    builder
        .deadlines(deadlines)
        .limits(limits)
        .record(recorder.clone())
        .build()
        .map_err(|e| format!("cannot build a client: {e}"))
}

/// Runs the client steps of a scenario after its first call.
struct Driver<'a> {
    client: &'a Client,
    /// The first call's params (re-sent, or extended by an MRTR round).
    params: Value,
    /// The first call's verdict: where a resumption starts from.
    first: Verdict,
}

impl Driver<'_> {
    async fn step(&self, step: &ClientStep) -> Result<Verdict, String> {
        let client = self.client;
        let call = match step {
            ClientStep::Input => {
                let mut params = self.params.clone();
                params["inputResponses"] =
                    json!({"confirm": {"action": "accept", "content": {"ok": true}}});
                params["requestState"] = json!("state-1");
                client.request("tools/call", params).await
            }
            ClientStep::Resume => {
                let last = match (self.first.resumable, &self.first.last_event_id) {
                    (true, Some(last)) => last.clone(),
                    _ => return Err("the stream was not resumable".into()),
                };
                self.wait_retry().await;
                client.resume(&last).await
            }
            ClientStep::ResumeWithoutId => {
                self.wait_retry().await;
                client.listen().await
            }
            ClientStep::Listen => client.listen().await,
            ClientStep::Delete => client.terminate().await,
            ClientStep::Resend => client.request("tools/call", self.params.clone()).await,
            ClientStep::Call(tool) => {
                let params = json!({"name": tool, "arguments": {"message": "hello"}});
                client.request("tools/call", params).await
            }
            ClientStep::Poll => {
                let task = self.first.task.as_ref();
                let Some(id) = task.and_then(|t| t.id.clone()) else {
                    return Err("the first call named no task".into());
                };
                let wait = task.and_then(|t| t.poll_interval_ms).unwrap_or(0);
                tokio::time::sleep(Duration::from_millis(wait.min(5_000) + 10)).await;
                let caps = json!({"extensions": {"io.modelcontextprotocol/tasks": {}}});
                let params = json!({"taskId": id,
                                    "_meta": {"io.modelcontextprotocol/clientCapabilities": caps}});
                client.request("tasks/get", params).await
            }
            ClientStep::AnswerDuring(_) => {
                return Err("answers during the first call only, as the first step".into());
            }
        };
        Ok(call.verdict().await)
    }

    /// Waits the `retry` delay the first call's stream asked for, and a little more: the
    /// recording's clock has millisecond steps, and the delay is checked from it.
    async fn wait_retry(&self) {
        let ms = self.first.retry.after_ms.unwrap_or(0) + 10;
        tokio::time::sleep(Duration::from_millis(ms)).await;
    }
}

/// The client's answer to the server's elicitation, with `id`.
async fn answer(client: &Client, id: &str) -> Verdict {
    let answer = json!({"jsonrpc": "2.0", "id": id,
                        "result": {"action": "accept", "content": {"ok": true}}});
    client.send(answer).await.verdict().await
}

/// The first `tools/call`; with `answer_with`, its server request is answered (with that id) as
/// soon as it arrives, while the stream stays open: the call's verdict, then the answer's.
async fn first_call(
    client: &Client,
    method: &str,
    params: Value,
    answer_with: Option<&str>,
) -> (Verdict, Option<Verdict>) {
    let mut call = client.request(method, params).await;
    let Some(id) = answer_with else {
        return (call.verdict().await, None);
    };
    let mut answered = None;
    while let Some(m) = call.next_message().await {
        if answered.is_none() && m.kind == crate::vocab::kinds::MessageKind::Request {
            answered = Some(answer(client, id).await);
        }
    }
    (call.verdict().await, answered)
}

/// Probes `scenario` at `url` (the scenario's endpoint).
pub async fn probe(url: &str, scenario: &Scenario) -> Run {
    let recorder = Arc::new(Mutex::new(Vec::new()));
    let mut run = Run::new(scenario);
    let client = match client_for(url, scenario, &recorder) {
        Ok(c) => c,
        Err(e) => {
            run.mismatches.push(e);
            return run;
        }
    };
    run.verdicts = client.handshake(Handshake::Auto).await;
    let listing = client
        .request("tools/list", json!({}))
        .await
        .verdict()
        .await;
    if let Some(want) = &scenario.listing {
        run.check("tools/list", want, &listing);
    }
    run.verdicts.push(listing);
    let params = scenario.first_params();
    let mut steps = scenario.then.iter().peekable();
    let during = steps.peek().and_then(|t| match t.step {
        ClientStep::AnswerDuring(id) => Some(id),
        _ => None,
    });
    let (first, answered) = first_call(&client, scenario.method, params.clone(), during).await;
    run.check("", &scenario.expect, &first);
    let first_index = run.verdicts.len() as u64;
    run.verdicts.push(first.clone());
    if let Some(then) = steps.next_if(|_| during.is_some()) {
        match answered {
            Some(v) => {
                run.check("\"answer_during\"", &then.expect, &v);
                run.verdicts.push(v);
            }
            None => run
                .mismatches
                .push("answer_during: no server request came".into()),
        }
    }
    let driver = Driver {
        client: &client,
        params,
        first,
    };
    for then in steps {
        let what = serde_json::to_string(&then.step).unwrap_or_default();
        match driver.step(&then.step).await {
            Ok(v) => {
                run.check(&what, &then.expect, &v);
                run.verdicts.push(v);
            }
            Err(why) => run.mismatches.push(format!("{what}: {why}")),
        }
    }
    for (i, v) in run.verdicts.iter_mut().enumerate() {
        v.index = i as u64;
    }
    run.recorded = std::mem::take(&mut *lock(&recorder));
    check_calls(&mut run, first_index);
    run
}

/// Compares the calls from the first `tools/call` on with the scenario's, when it declares them.
fn check_calls(run: &mut Run, first_index: u64) {
    let calls = crate::replay::calls_of(&run.verdicts, &run.recorded);
    let found = compare_calls(&run.scenario.calls, &calls, first_index);
    run.mismatches.extend(found);
}

/// The differences between the declared calls `want` and the calls among `calls` that start at
/// entry `from` or later (empty when they match, or when nothing is declared).
pub fn compare_calls(want: &[CallExpect], calls: &[Call], from: u64) -> Vec<String> {
    if want.is_empty() {
        return Vec::new();
    }
    let got: Vec<&Call> = calls
        .iter()
        .filter(|c| c.entries.first().is_some_and(|e| *e >= from))
        .collect();
    let mut out = Vec::new();
    differ("calls", want.len(), got.len(), &mut out);
    for (n, (w, c)) in want.iter().zip(got).enumerate() {
        out.extend(w.compare(c).into_iter().map(|m| format!("call {n} {m}")));
    }
    out
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
            runs.push(h.await.unwrap_or_else(|e| {
                let mut run = Run::new(s);
                run.mismatches.push(format!("the probe task failed: {e}"));
                run
            }));
        }
    }
    runs
}

/// The scenario list as JSON (for `serve-faults --list --format json`).
pub fn list_json(scenarios: &[Scenario]) -> Value {
    serde_json::to_value(scenarios).unwrap_or(Value::Null)
}
