//! The runner: workers that send the mix and fold every verdict into the live report.

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::json;

use std::time::Duration;

use super::{DEFAULT_REQUESTS, Report, SoakConfig, schedule};
use crate::adapters::h1::Connection;
use crate::adapters::{Client, Prepared, Timings, lock};
use crate::verdict::{Outcome, Verdict};
use hyper::header::HeaderMap;

/// A worker whose call found no server waits this long before the next one, doubling up to
/// [`BACKOFF_MAX`]: a dead server is not hammered while the run decides to stop.
const BACKOFF_START: Duration = Duration::from_millis(20);
const BACKOFF_MAX: Duration = Duration::from_secs(1);

/// Called with every call's verdict, timings and the `Mcp-Session-Id` it was sent with, as it
/// finishes (telemetry export).
pub type CallHook = Box<dyn Fn(&Verdict, &Timings, Option<&str>) + Send + Sync>;

/// Live counters, for a progress bar and a metrics endpoint.
#[derive(Default)]
pub struct Live {
    /// The report so far.
    pub report: Mutex<Report>,
    /// Set by [`Live::interrupt`]: no new calls start, calls in flight are cancelled.
    stop: AtomicBool,
    wake: tokio::sync::Notify,
    started: AtomicU64,
    /// `CONNECTION_FAILED` calls in a row, over all workers.
    connect_failures: AtomicU32,
    on_call: Option<CallHook>,
    on_prelude: Option<PreludeHook>,
}

/// Called with each verdict of the handshake and the `tools/list` before the load, in order
/// (they are not soak calls: the report does not count them).
pub type PreludeHook = Box<dyn Fn(&Verdict) + Send + Sync>;

impl std::fmt::Debug for Live {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Live")
            .field("report", &self.report)
            .field("stop", &self.stop)
            .field("on_call", &self.on_call.is_some())
            .finish_non_exhaustive()
    }
}

impl Live {
    /// Stops the run at once (Ctrl-C): no new call starts and calls in flight are cancelled
    /// (`CANCELLED`); [`run`] returns the report of what was done, marked interrupted.
    pub fn interrupt(&self) {
        self.stop.store(true, Ordering::SeqCst);
        self.wake.notify_waiters();
    }

    /// Whether [`Live::interrupt`] was called.
    pub fn is_interrupted(&self) -> bool {
        self.stop.load(Ordering::SeqCst)
    }

    /// Resolves once [`Live::interrupt`] has been called.
    pub async fn interrupted(&self) {
        loop {
            let notified = self.wake.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if self.is_interrupted() {
                return;
            }
            notified.await;
        }
    }

    /// Live counters that also hand every finished call to `hook`.
    pub fn with_hook(hook: CallHook) -> Self {
        Live {
            on_call: Some(hook),
            ..Live::default()
        }
    }

    /// Also hands every verdict of the handshake and `tools/list` before the load to `hook`.
    #[must_use]
    pub fn with_prelude_hook(self, hook: PreludeHook) -> Self {
        Live {
            on_prelude: Some(hook),
            ..self
        }
    }

    /// A copy of the report so far.
    pub fn snapshot(&self) -> Report {
        lock(&self.report).clone()
    }
}

/// Why a soak run could not start.
#[derive(Debug, Clone, PartialEq)]
pub enum SoakError {
    /// The mix has no entries: there is nothing to send.
    EmptyMix,
    /// The handshake's last exchange was not a complete success; its verdict says why.
    Handshake(Box<Verdict>),
    /// A tool of the mix is not in the server's `tools/list`: every call would be a JSON-RPC
    /// error, a complete answer, and the run would pass while testing nothing.
    UnknownTool {
        /// The tool of the mix.
        tool: String,
        /// What `tools/list` gave.
        listed: Vec<String>,
    },
    /// Interrupted (Ctrl-C) before the load began.
    Interrupted,
    /// Workers failed (panicked): the run is not a clean one, whatever it counted.
    Workers {
        /// How many failed.
        failed: usize,
        /// How many ran.
        of: usize,
        /// The first failure (a panic's message).
        first: String,
    },
}

impl std::fmt::Display for SoakError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SoakError::EmptyMix => f.write_str("the mix is empty"),
            SoakError::Interrupted => f.write_str("interrupted (Ctrl-C) before the load began"),
            SoakError::Handshake(last) => {
                write!(
                    f,
                    "the handshake failed: {} {} (HTTP {})",
                    last.method.as_deref().unwrap_or("?"),
                    last.outcome,
                    last.status.map_or("-".into(), |s| s.to_string())
                )?;
                if !last.complete {
                    write!(f, ": {}", last.retry.reason)?;
                }
                Ok(())
            }
            SoakError::UnknownTool { tool, listed } => write!(
                f,
                "tool {tool:?} is not in tools/list (it lists: {}); every call would be a JSON-RPC error",
                if listed.is_empty() {
                    "nothing".into()
                } else {
                    listed.join(", ")
                }
            ),
            SoakError::Workers { failed, of, first } => {
                write!(f, "{failed} of {of} soak workers failed: {first}")
            }
        }
    }
}

impl std::error::Error for SoakError {}

/// Runs the load with `client` (handshake included) and returns the report. `live` is updated
/// as calls finish.
pub async fn run(
    client: &Client,
    config: &SoakConfig,
    live: Arc<Live>,
) -> Result<Report, SoakError> {
    if config.mix.is_empty() {
        return Err(SoakError::EmptyMix);
    }
    prelude(client, config, &live).await?;
    let plan = Plan {
        requests: match (config.requests, config.duration) {
            (None, None) => Some(DEFAULT_REQUESTS),
            (r, _) => r,
        },
        order: Arc::new(schedule(&config.mix)),
        mix: prepared_mix(client, config),
        begin: tokio::time::Instant::now(),
        deadline: None,
        rate: config.rate,
        max_failures: config.max_connect_failures,
    };
    // A duration too long to represent runs until stopped (or `requests`), never panics.
    let plan = Plan {
        deadline: config.duration.and_then(|d| plan.begin.checked_add(d)),
        ..plan
    };
    let begin = plan.begin;
    let workers: Vec<_> = (0..config.concurrency.max(1))
        .map(|_| tokio::spawn(worker(client.clone(), live.clone(), plan.clone())))
        .collect();
    join_workers(workers, config.concurrency.max(1)).await?;
    Ok(final_report(&live, config, begin))
}

/// The handshake and `tools/list` before the load (a Ctrl-C stops them too). `tools/list`
/// once, so retry advice knows the tools' annotations; and a tool the server does not list is
/// refused before the load: every call would be a JSON-RPC error, a complete answer, and the
/// run would pass while testing nothing.
async fn prelude(client: &Client, config: &SoakConfig, live: &Live) -> Result<(), SoakError> {
    let prelude = async {
        let handshake = client.handshake(config.handshake).await;
        let mut list = client.request("tools/list", json!({})).await;
        let mut listed = None;
        while let Some(m) = list.next_message().await {
            if m.terminal {
                listed = m.value().ok().and_then(|v| tool_names(&v));
            }
        }
        let list_verdict = list.verdict().await;
        if let Some(hook) = &live.on_prelude {
            handshake.iter().chain(Some(&list_verdict)).for_each(hook);
        }
        (handshake, listed)
    };
    let (handshake, listed) = tokio::select! {
        done = prelude => done,
        _ = live.interrupted() => return Err(SoakError::Interrupted),
    };
    if let Some(last) = handshake
        .last()
        .filter(|v| !(v.complete && v.error_code.is_none()))
    {
        return Err(SoakError::Handshake(Box::new(last.clone())));
    }
    if let Some(names) = listed
        && let Some(m) = config.mix.iter().find(|m| !names.contains(&m.tool))
    {
        return Err(SoakError::UnknownTool {
            tool: m.tool.clone(),
            listed: names,
        });
    }
    Ok(())
}

/// Each mix entry's `tools/call`, prepared once, with its headers for the direct connection.
fn prepared_mix(client: &Client, config: &SoakConfig) -> Arc<Vec<(Prepared, HeaderMap)>> {
    Arc::new(
        config
            .mix
            .iter()
            .map(|m| {
                let prepared =
                    client.prepare("tools/call", json!({"name": m.tool, "arguments": m.args}));
                let headers = Connection::headers_of(&prepared);
                (prepared, headers)
            })
            .collect(),
    )
}

/// What every worker shares: when to stop, the order of the mix, the pace.
#[derive(Clone)]
struct Plan {
    requests: Option<u64>,
    order: Arc<Vec<usize>>,
    mix: Arc<Vec<(Prepared, HeaderMap)>>,
    begin: tokio::time::Instant,
    deadline: Option<tokio::time::Instant>,
    rate: Option<f64>,
    max_failures: u32,
}

impl Plan {
    /// When call `slot` may start (its rate slot, after `backoff`), or `None` when it never
    /// will (past the deadline, or a slot too far away to represent: `--rate 1e-19`).
    fn due(&self, slot: u64, backoff: Duration) -> Option<Option<tokio::time::Instant>> {
        let mut at = None;
        if let Some(r) = self.rate.filter(|r| *r > 0.0) {
            at = Some(slot_time(self.begin, slot, r)?);
        }
        if !backoff.is_zero() {
            let after = tokio::time::Instant::now() + backoff;
            at = Some(at.map_or(after, |a| a.max(after)));
        }
        if let Some(at) = at
            && self.deadline.is_some_and(|d| at >= d)
        {
            return None;
        }
        Some(at)
    }

    fn past_deadline(&self) -> bool {
        self.deadline
            .is_some_and(|d| tokio::time::Instant::now() >= d)
    }
}

/// One worker: takes the next slot, waits until it is due, sends it, folds the verdict in.
async fn worker(client: Client, live: Arc<Live>, plan: Plan) {
    // Plain HTTP goes over a connection of this worker's own; HTTPS through reqwest.
    let mut direct = Connection::new(&client);
    let mut backoff = Duration::ZERO;
    loop {
        if live.is_interrupted() || stopped(&live, plan.max_failures) {
            break;
        }
        let slot = live.started.fetch_add(1, Ordering::Relaxed);
        if plan.requests.is_some_and(|n| slot >= n) {
            break;
        }
        let Some(at) = plan.due(slot, backoff) else {
            break;
        };
        if let Some(at) = at {
            tokio::select! {
                _ = tokio::time::sleep_until(at) => {}
                _ = live.interrupted() => break,
            }
        }
        if plan.past_deadline() {
            break;
        }
        let (prepared, headers) = &plan.mix[plan.order[(slot % plan.order.len() as u64) as usize]];
        let (verdict, timings) = call(&client, &mut direct, prepared, headers, &live).await;
        if verdict.outcome == Outcome::ConnectionFailed {
            live.connect_failures.fetch_add(1, Ordering::SeqCst);
            backoff = (backoff * 2).clamp(BACKOFF_START, BACKOFF_MAX);
        } else {
            live.connect_failures.store(0, Ordering::SeqCst);
            backoff = Duration::ZERO;
        }
        lock(&live.report).record(&verdict, &timings);
        if let Some(hook) = &live.on_call {
            let session = headers.get("mcp-session-id");
            hook(&verdict, &timings, session.and_then(|s| s.to_str().ok()));
        }
    }
}

/// One call, over the worker's own connection or reqwest. Ctrl-C cancels the call in flight:
/// before the head by dropping the request, after it by closing the stream (on 2026-07-28 that
/// close is the cancel).
async fn call(
    client: &Client,
    direct: &mut Option<Connection>,
    prepared: &Prepared,
    headers: &HeaderMap,
    live: &Live,
) -> (Verdict, Timings) {
    match direct.as_mut() {
        Some(conn) => tokio::select! {
            call = conn.send(prepared, headers) => {
                call.finish_unless(live.interrupted()).await
            }
            _ = live.interrupted() => {
                *direct = Connection::new(client);
                (client.cancelled(prepared), Timings::default())
            }
        },
        None => tokio::select! {
            call = client.send_prepared(prepared) => {
                call.finish_unless(live.interrupted()).await
            }
            _ = live.interrupted() => (client.cancelled(prepared), Timings::default()),
        },
    }
}

/// Waits for every worker. A worker that panicked is a failed run, never a quiet "0 calls"
/// with exit 0.
async fn join_workers(
    workers: Vec<tokio::task::JoinHandle<()>>,
    of: usize,
) -> Result<(), SoakError> {
    let mut failures = Vec::new();
    for w in workers {
        if let Err(e) = w.await {
            failures.push(worker_failure(e));
        }
    }
    match failures.first() {
        Some(first) => Err(SoakError::Workers {
            failed: failures.len(),
            of,
            first: first.clone(),
        }),
        None => Ok(()),
    }
}

/// The report at the end: elapsed time, throughput, and why the run stopped.
fn final_report(live: &Live, config: &SoakConfig, begin: tokio::time::Instant) -> Report {
    let mut report = live.snapshot();
    report.elapsed_ms = u64::try_from(begin.elapsed().as_millis()).unwrap_or(u64::MAX);
    report.throughput = if report.elapsed_ms == 0 {
        0.0
    } else {
        report.answered as f64 * 1000.0 / report.elapsed_ms as f64
    };
    report.interrupted = live.is_interrupted();
    if stopped(live, config.max_connect_failures) {
        report.stopped = Some(format!(
            "{} calls in a row found no server (CONNECTION_FAILED); is it running? (--max-connect-failures)",
            config.max_connect_failures
        ));
    }
    report.merged = 1;
    report
}

/// The run stops: `max` calls in a row found no server.
fn stopped(live: &Live, max: u32) -> bool {
    max > 0 && live.connect_failures.load(Ordering::SeqCst) >= max
}

/// The tool names of a `tools/list` response, or `None` when it is not one.
pub fn tool_names(response: &serde_json::Value) -> Option<Vec<String>> {
    let tools = response.pointer("/result/tools")?.as_array()?;
    Some(
        tools
            .iter()
            .filter_map(|t| t.get("name")?.as_str().map(str::to_owned))
            .collect(),
    )
}

/// When request number `slot` is due at `rate` per second, if that is representable.
fn slot_time(begin: tokio::time::Instant, slot: u64, rate: f64) -> Option<tokio::time::Instant> {
    let offset = Duration::try_from_secs_f64(slot as f64 / rate).ok()?;
    begin.checked_add(offset)
}

/// What a worker's failure says: its panic message when it panicked.
fn worker_failure(e: tokio::task::JoinError) -> String {
    if !e.is_panic() {
        return e.to_string();
    }
    let payload = e.into_panic();
    let text = payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".to_owned());
    format!("panicked: {text}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slot_times_saturate_instead_of_panicking() {
        let begin = tokio::time::Instant::now();
        assert!(slot_time(begin, 0, 1e-19).is_some());
        assert_eq!(slot_time(begin, 1, 1e-19), None);
        assert_eq!(slot_time(begin, u64::MAX, f64::MIN_POSITIVE), None);
        assert_eq!(
            slot_time(begin, 3, 2.0),
            Some(begin + Duration::from_millis(1500))
        );
    }
}
