//! The runner: workers that send the mix and fold every verdict into the live report.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::json;

use std::time::Duration;

use super::{DEFAULT_REQUESTS, Report, SoakConfig, schedule};
use crate::adapters::h1::Connection;
use crate::adapters::{Client, Timings, lock};
use crate::verdict::Verdict;

/// Called with every call's verdict and timings as it finishes (telemetry export).
pub type CallHook = Box<dyn Fn(&Verdict, &Timings) + Send + Sync>;

/// Live counters, for a progress bar and a metrics endpoint.
#[derive(Default)]
pub struct Live {
    /// The report so far.
    pub report: Mutex<Report>,
    /// Set to stop (Ctrl-C): no new calls start, calls in flight finish.
    pub stop: AtomicBool,
    started: AtomicU64,
    on_call: Option<CallHook>,
}

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
    /// Live counters that also hand every finished call to `hook`.
    pub fn with_hook(hook: CallHook) -> Self {
        Live {
            on_call: Some(hook),
            ..Live::default()
        }
    }

    /// A copy of the report so far.
    pub fn snapshot(&self) -> Report {
        lock(&self.report).clone()
    }
}

/// Why a soak run could not start.
#[derive(Debug)]
#[non_exhaustive]
pub enum SoakError {
    /// The mix has no entries: there is nothing to send.
    EmptyMix,
    /// The handshake's last exchange was not a complete success; its verdict says why.
    Handshake(Box<Verdict>),
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
            SoakError::Handshake(last) => write!(
                f,
                "the handshake failed: {} {} (HTTP {})",
                last.method.as_deref().unwrap_or("?"),
                last.outcome,
                last.status.map_or("-".into(), |s| s.to_string())
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
    let handshake = client.handshake(config.handshake).await;
    if let Some(last) = handshake
        .last()
        .filter(|v| !(v.complete && v.error_code.is_none()))
    {
        return Err(SoakError::Handshake(Box::new(last.clone())));
    }
    // tools/list once, so retry advice knows the tools' annotations.
    let _ = client
        .request("tools/list", json!({}))
        .await
        .verdict()
        .await;

    let requests = match (config.requests, config.duration) {
        (None, None) => Some(DEFAULT_REQUESTS),
        (r, _) => r,
    };
    let order = Arc::new(schedule(&config.mix));
    let mix: Arc<Vec<_>> = Arc::new(
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
    );
    let begin = tokio::time::Instant::now();
    // A duration too long to represent runs until stopped (or `requests`), never panics.
    let deadline = config.duration.and_then(|d| begin.checked_add(d));
    let mut workers = Vec::new();
    for _ in 0..config.concurrency.max(1) {
        let (client, live, order, mix) = (client.clone(), live.clone(), order.clone(), mix.clone());
        let rate = config.rate;
        workers.push(tokio::spawn(async move {
            // Plain HTTP goes over a connection of this worker's own; HTTPS through reqwest.
            let mut direct = Connection::new(&client);
            loop {
                if live.stop.load(Ordering::Relaxed) {
                    break;
                }
                let slot = live.started.fetch_add(1, Ordering::Relaxed);
                if requests.is_some_and(|n| slot >= n) {
                    break;
                }
                if let Some(r) = rate.filter(|r| *r > 0.0) {
                    // A slot too far away to represent (`--rate 1e-19`) is never due.
                    let Some(at) = slot_time(begin, slot, r) else {
                        break;
                    };
                    if deadline.is_some_and(|d| at >= d) {
                        break;
                    }
                    tokio::time::sleep_until(at).await;
                }
                if deadline.is_some_and(|d| tokio::time::Instant::now() >= d) {
                    break;
                }
                let k = order[(slot % order.len() as u64) as usize];
                let (verdict, timings) = match direct.as_mut() {
                    Some(conn) => conn.send(&mix[k].0, &mix[k].1).await.finish().await,
                    None => client.send_prepared(&mix[k].0).await.finish().await,
                };
                lock(&live.report).record(&verdict, &timings);
                if let Some(hook) = &live.on_call {
                    hook(&verdict, &timings);
                }
            }
        }));
    }
    // A worker that panicked is a failed run, never a quiet "0 calls" with exit 0.
    let mut failures = Vec::new();
    for w in workers {
        if let Err(e) = w.await {
            failures.push(worker_failure(e));
        }
    }
    if let Some(first) = failures.first() {
        return Err(SoakError::Workers {
            failed: failures.len(),
            of: config.concurrency.max(1),
            first: first.clone(),
        });
    }
    let mut report = live.snapshot();
    report.elapsed_ms = u64::try_from(begin.elapsed().as_millis()).unwrap_or(u64::MAX);
    report.throughput = if report.elapsed_ms == 0 {
        0.0
    } else {
        report.requests as f64 * 1000.0 / report.elapsed_ms as f64
    };
    report.merged = 1;
    Ok(report)
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
