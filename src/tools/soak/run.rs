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
    let deadline = config.duration.map(|d| begin + d);
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
                    let at = begin + Duration::from_secs_f64(slot as f64 / r);
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
    for w in workers {
        let _ = w.await;
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
