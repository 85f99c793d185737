//! Soak mode: sustained `tools/call` traffic with a verdict for every response.
//!
//! Load tools count HTTP statuses; for MCP that is the wrong number, because a 200 can carry a
//! JSON-RPC error, an `isError` result, or a stream that ends before its final response. Here
//! every response goes through the core, and the report counts outcomes, layers and broken rules.
//! Latencies go into HdrHistograms that serialize losslessly, so reports from several machines
//! merge into exact combined percentiles.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::adapters::h1::Connection;
use crate::adapters::{Client, Handshake, Timings};
use crate::verdict::{Outcome, Verdict};

/// Requests run when neither a count nor a duration is given.
pub const DEFAULT_REQUESTS: u64 = 1000;

/// Consecutive `CONNECTION_FAILED` calls after which a run stops (the server is gone).
pub const DEFAULT_MAX_CONNECT_FAILURES: u32 = 10;

/// A worker whose call found no server waits this long before the next one, doubling up to
/// [`BACKOFF_MAX`]: a dead server is not hammered while the run decides to stop.
const BACKOFF_START: Duration = Duration::from_millis(20);
const BACKOFF_MAX: Duration = Duration::from_secs(1);

/// One entry of a mix: a tool, its arguments, and a weight.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MixEntry {
    /// Tool name.
    pub tool: String,
    /// Arguments (a JSON object).
    #[serde(default = "empty_object")]
    pub args: Value,
    /// Relative weight (default 1).
    #[serde(default = "one")]
    pub weight: u32,
}

fn empty_object() -> Value {
    json!({})
}

fn one() -> u32 {
    1
}

/// Spreads the mix over request slots with smooth weighted round-robin: deterministic, and each
/// entry gets exactly its share of every `sum(weights)` consecutive requests.
pub fn schedule(mix: &[MixEntry]) -> Vec<usize> {
    let total: i64 = mix.iter().map(|m| i64::from(m.weight)).sum();
    let mut current = vec![0i64; mix.len()];
    let mut order = Vec::with_capacity(total.max(0) as usize);
    for _ in 0..total {
        for (c, m) in current.iter_mut().zip(mix) {
            *c += i64::from(m.weight);
        }
        let Some((best, _)) = current
            .iter()
            .enumerate()
            .max_by_key(|(i, c)| (**c, -(*i as i64)))
        else {
            break;
        };
        current[best] -= total;
        order.push(best);
    }
    order
}

/// What to run.
#[derive(Debug, Clone)]
pub struct SoakConfig {
    /// Calls to make, in weighted rotation.
    pub mix: Vec<MixEntry>,
    /// Calls in flight at once.
    pub concurrency: usize,
    /// Stop after this many calls.
    pub requests: Option<u64>,
    /// Stop after this long.
    pub duration: Option<Duration>,
    /// At most this many calls per second, overall.
    pub rate: Option<f64>,
    /// Handshake before the load.
    pub handshake: Handshake,
    /// Stop after this many consecutive `CONNECTION_FAILED` calls (0: never).
    pub max_connect_failures: u32,
}

/// A latency histogram in microseconds (1 µs to 1 hour, 3 significant digits).
#[derive(Debug, Clone)]
pub struct Latency(Histogram<u64>);

impl Default for Latency {
    fn default() -> Self {
        Latency(Histogram::new_with_bounds(1, 3_600_000_000, 3).expect("valid bounds"))
    }
}

impl Latency {
    /// Records one value (clamped into range).
    pub fn record(&mut self, micros: u64) {
        let _ = self.0.record(micros.clamp(1, 3_600_000_000));
    }
    /// Number of values.
    pub fn count(&self) -> u64 {
        self.0.len()
    }
    /// The value at quantile `q` (0..=1), or 0 when empty.
    pub fn quantile(&self, q: f64) -> u64 {
        if self.0.is_empty() {
            0
        } else {
            self.0.value_at_quantile(q)
        }
    }
    /// The largest value.
    pub fn max(&self) -> u64 {
        self.0.max()
    }
    fn merge(&mut self, other: &Latency) {
        let _ = self.0.add(&other.0);
    }
}

impl Latency {
    /// Lossless form: every recorded bucket as `[value, count]`, with its unit.
    fn to_json(&self, unit: &str) -> Value {
        let buckets: Vec<(u64, u64)> = self
            .0
            .iter_recorded()
            .map(|v| (v.value_iterated_to(), v.count_at_value()))
            .collect();
        json!({"unit": unit, "buckets": buckets})
    }
}

impl Serialize for Latency {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.to_json("us").serialize(s)
    }
}

/// A histogram of counts (events per stream): zero is a value, and the unit is `events`.
#[derive(Debug, Clone, Default)]
pub struct Counts(Latency);

impl Counts {
    /// Records one count (a stream with no event records 0).
    pub fn record(&mut self, n: u64) {
        let _ = (self.0).0.record(n.min(3_600_000_000));
    }
    /// Number of values.
    pub fn count(&self) -> u64 {
        self.0.count()
    }
    /// The value at quantile `q` (0..=1), or 0 when empty.
    pub fn quantile(&self, q: f64) -> u64 {
        self.0.quantile(q)
    }
    /// The largest value.
    pub fn max(&self) -> u64 {
        self.0.max()
    }
    /// The smallest value (0 when empty).
    pub fn min(&self) -> u64 {
        (self.0).0.min()
    }
    fn merge(&mut self, other: &Counts) {
        self.0.merge(&other.0);
    }
}

impl Serialize for Counts {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.to_json("events").serialize(s)
    }
}

impl<'de> Deserialize<'de> for Counts {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        struct Raw {
            buckets: Vec<(u64, u64)>,
        }
        let raw = Raw::deserialize(d)?;
        let mut h = Counts::default();
        for (value, count) in raw.buckets {
            (h.0).0
                .record_n(value.min(3_600_000_000), count)
                .map_err(serde::de::Error::custom)?;
        }
        Ok(h)
    }
}

impl<'de> Deserialize<'de> for Latency {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        struct Raw {
            buckets: Vec<(u64, u64)>,
        }
        let raw = Raw::deserialize(d)?;
        let mut h = Latency::default();
        for (value, count) in raw.buckets {
            h.0.record_n(value.clamp(1, 3_600_000_000), count)
                .map_err(serde::de::Error::custom)?;
        }
        Ok(h)
    }
}

/// The soak report. Serializable, and mergeable across machines.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Report {
    /// Calls judged.
    pub requests: u64,
    /// Calls whose reply was not complete.
    pub incomplete: u64,
    /// Calls answered with SSE.
    pub streams: u64,
    /// SSE calls whose reply was not complete.
    pub incomplete_streams: u64,
    /// Wall time of the run, in milliseconds (the longest, after a merge).
    pub elapsed_ms: u64,
    /// Calls that got a response head.
    #[serde(default)]
    pub answered: u64,
    /// Answered calls per second (summed over merged reports: they ran side by side). Calls
    /// that found no server are not throughput.
    pub throughput: f64,
    /// The run was interrupted (Ctrl-C): the report covers what was done.
    #[serde(default)]
    pub interrupted: bool,
    /// Why the run stopped before its count or duration, when it did.
    #[serde(default)]
    pub stopped: Option<String>,
    /// Count per outcome.
    pub outcomes: BTreeMap<String, u64>,
    /// Count per layer.
    pub layers: BTreeMap<String, u64>,
    /// Count per broken rule.
    pub violations: BTreeMap<String, u64>,
    /// Time to the response head.
    pub head_us: Latency,
    /// Time to the first SSE event.
    pub first_event_us: Latency,
    /// Time to the terminal response.
    pub terminal_us: Latency,
    /// Events per SSE stream (a histogram of counts, not times).
    pub events_per_stream: Counts,
    /// Reports merged into this one.
    pub merged: u64,
}

fn micros(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}

impl Report {
    /// Counts one verdict with its timings.
    pub fn record(&mut self, v: &Verdict, t: &Timings) {
        self.requests += 1;
        if v.status.is_some() {
            self.answered += 1;
        }
        *self.outcomes.entry(v.outcome.to_string()).or_default() += 1;
        *self.layers.entry(v.layer.as_str().to_owned()).or_default() += 1;
        for violation in &v.violations {
            *self.violations.entry(violation.rule.clone()).or_default() += 1;
        }
        if !v.complete {
            self.incomplete += 1;
        }
        if let Some(n) = v.event_count {
            self.streams += 1;
            if !v.complete {
                self.incomplete_streams += 1;
            }
            self.events_per_stream.record(n);
        }
        if let Some(d) = t.head {
            self.head_us.record(micros(d));
        }
        if let Some(d) = t.first_event {
            self.first_event_us.record(micros(d));
        }
        if let Some(d) = t.terminal {
            self.terminal_us.record(micros(d));
        }
    }

    /// Share of calls that were not complete.
    pub fn incomplete_rate(&self) -> f64 {
        if self.requests == 0 {
            0.0
        } else {
            self.incomplete as f64 / self.requests as f64
        }
    }

    /// Share of SSE calls that were not complete.
    pub fn incomplete_stream_rate(&self) -> f64 {
        if self.streams == 0 {
            0.0
        } else {
            self.incomplete_streams as f64 / self.streams as f64
        }
    }

    /// Adds another report: counts and histograms exactly; elapsed is the longest; throughput
    /// is summed (the documented way to scale out is several soak runs side by side).
    pub fn merge(&mut self, other: &Report) {
        self.requests += other.requests;
        self.incomplete += other.incomplete;
        self.streams += other.streams;
        self.incomplete_streams += other.incomplete_streams;
        self.answered += other.answered;
        self.interrupted |= other.interrupted;
        if self.stopped.is_none() {
            self.stopped.clone_from(&other.stopped);
        }
        self.elapsed_ms = self.elapsed_ms.max(other.elapsed_ms);
        self.throughput += other.throughput;
        for (dst, src) in [
            (&mut self.outcomes, &other.outcomes),
            (&mut self.layers, &other.layers),
            (&mut self.violations, &other.violations),
        ] {
            for (k, n) in src {
                *dst.entry(k.clone()).or_default() += n;
            }
        }
        self.head_us.merge(&other.head_us);
        self.first_event_us.merge(&other.first_event_us);
        self.terminal_us.merge(&other.terminal_us);
        self.events_per_stream.merge(&other.events_per_stream);
        self.merged += other.merged.max(1);
    }

    /// A readable report.
    pub fn human(&self) -> String {
        let mut out = String::new();
        let secs = self.elapsed_ms as f64 / 1000.0;
        if self.interrupted {
            out.push_str("interrupted (Ctrl-C): partial report\n");
        }
        if let Some(why) = &self.stopped {
            out.push_str(&format!("stopped early: {why}\n"));
        }
        let over = if self.merged > 1 {
            format!(
                "{} merged reports, {} calls, longest run {secs:.2} s; throughput summed (they ran side by side): {:.1} answered/s",
                self.merged, self.requests, self.throughput
            )
        } else {
            format!(
                "{} calls in {secs:.2} s, {} answered ({:.1}/s)",
                self.requests, self.answered, self.throughput
            )
        };
        out.push_str(&format!(
            "{over}; incomplete {} ({:.3}%), SSE streams {} of which incomplete {} ({:.3}%)\n",
            self.incomplete,
            self.incomplete_rate() * 100.0,
            self.streams,
            self.incomplete_streams,
            self.incomplete_stream_rate() * 100.0
        ));
        out.push_str("\noutcome                     count\n");
        for (k, n) in &self.outcomes {
            out.push_str(&format!("{k:<26} {n:>6}\n"));
        }
        out.push_str("\nlayer                       count\n");
        for (k, n) in &self.layers {
            out.push_str(&format!("{k:<26} {n:>6}\n"));
        }
        if !self.violations.is_empty() {
            out.push_str("\nviolation                                count\n");
            for (k, n) in &self.violations {
                out.push_str(&format!("{k:<40} {n:>6}\n"));
            }
        }
        out.push_str(&format!(
            "\n{:<22} {:>9} {:>9} {:>9} {:>9} {:>9} {:>8}\n",
            "latency (ms)", "p50", "p90", "p99", "p99.9", "max", "n"
        ));
        for (name, h) in [
            ("to response head", &self.head_us),
            ("to first SSE event", &self.first_event_us),
            ("to terminal response", &self.terminal_us),
        ] {
            let ms = |v: u64| v as f64 / 1000.0;
            out.push_str(&format!(
                "{name:<22} {:>9.3} {:>9.3} {:>9.3} {:>9.3} {:>9.3} {:>8}\n",
                ms(h.quantile(0.5)),
                ms(h.quantile(0.9)),
                ms(h.quantile(0.99)),
                ms(h.quantile(0.999)),
                ms(h.max()),
                h.count()
            ));
        }
        let e = &self.events_per_stream;
        if e.count() > 0 {
            out.push_str(&format!(
                "{:<22} {:>9} {:>9} {:>9} {:>9} {:>9} {:>8}\n",
                "events per stream",
                e.quantile(0.5),
                e.quantile(0.9),
                e.quantile(0.99),
                e.quantile(0.999),
                e.max(),
                e.count()
            ));
        }
        out
    }

    /// Prometheus text exposition of the same counters and quantiles.
    pub fn prometheus(&self) -> String {
        let mut out = String::new();
        out.push_str("# HELP mcp_verdict_exchanges_total MCP exchanges judged, by outcome.\n");
        out.push_str("# TYPE mcp_verdict_exchanges_total counter\n");
        for outcome in Outcome::ALL {
            let n = self.outcomes.get(outcome.as_str()).copied().unwrap_or(0);
            out.push_str(&format!(
                "mcp_verdict_exchanges_total{{outcome=\"{}\",layer=\"{}\"}} {n}\n",
                outcome.as_str(),
                outcome.layer().as_str()
            ));
        }
        out.push_str(
            "# HELP mcp_verdict_incomplete_total Exchanges whose reply was not complete.\n",
        );
        out.push_str("# TYPE mcp_verdict_incomplete_total counter\n");
        out.push_str(&format!(
            "mcp_verdict_incomplete_total {}\n",
            self.incomplete
        ));
        out.push_str("# HELP mcp_verdict_violations_total Broken spec rules, by rule id.\n");
        out.push_str("# TYPE mcp_verdict_violations_total counter\n");
        for (rule, n) in &self.violations {
            out.push_str(&format!(
                "mcp_verdict_violations_total{{rule=\"{rule}\"}} {n}\n"
            ));
        }
        out.push_str("# HELP mcp_verdict_latency_seconds Latency by phase.\n");
        out.push_str("# TYPE mcp_verdict_latency_seconds summary\n");
        for (phase, h) in [
            ("head", &self.head_us),
            ("first_event", &self.first_event_us),
            ("terminal", &self.terminal_us),
        ] {
            for q in [0.5, 0.9, 0.99, 0.999] {
                out.push_str(&format!(
                    "mcp_verdict_latency_seconds{{phase=\"{phase}\",quantile=\"{q}\"}} {}\n",
                    h.quantile(q) as f64 / 1e6
                ));
            }
            out.push_str(&format!(
                "mcp_verdict_latency_seconds_count{{phase=\"{phase}\"}} {}\n",
                h.count()
            ));
        }
        out.push_str("# HELP mcp_verdict_throughput Calls per second over the run.\n");
        out.push_str("# TYPE mcp_verdict_throughput gauge\n");
        out.push_str(&format!("mcp_verdict_throughput {}\n", self.throughput));
        out
    }
}

/// Live counters, for a progress bar and a metrics endpoint.
#[derive(Debug, Default)]
pub struct Live {
    /// The report so far.
    pub report: Mutex<Report>,
    /// Set by [`Live::interrupt`]: no new calls start, calls in flight are cancelled.
    stop: AtomicBool,
    wake: tokio::sync::Notify,
    started: AtomicU64,
    /// `CONNECTION_FAILED` calls in a row, over all workers.
    connect_failures: AtomicU32,
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

    /// A copy of the report so far.
    pub fn snapshot(&self) -> Report {
        self.report
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}

/// Runs the load with `client` (handshake included) and returns the report. `live` is updated
/// as calls finish.
pub async fn run(client: &Client, config: &SoakConfig, live: Arc<Live>) -> Result<Report, String> {
    if config.mix.is_empty() {
        return Err("the mix is empty".into());
    }
    let handshake = client.handshake(config.handshake).await;
    if let Some(last) = handshake
        .last()
        .filter(|v| !(v.complete && v.error_code.is_none()))
    {
        return Err(format!(
            "the handshake failed: {} {} (HTTP {})",
            last.method.as_deref().unwrap_or("?"),
            last.outcome,
            last.status.map_or("-".into(), |s| s.to_string())
        ));
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
        let max_failures = config.max_connect_failures;
        workers.push(tokio::spawn(async move {
            // Plain HTTP goes over a connection of this worker's own; HTTPS through reqwest.
            let mut direct = Connection::new(&client);
            let mut backoff = Duration::ZERO;
            loop {
                if live.is_interrupted() || stopped(&live, max_failures) {
                    break;
                }
                let slot = live.started.fetch_add(1, Ordering::Relaxed);
                if requests.is_some_and(|n| slot >= n) {
                    break;
                }
                let mut at = None;
                if let Some(r) = rate.filter(|r| *r > 0.0) {
                    at = Some(begin + Duration::from_secs_f64(slot as f64 / r));
                }
                if !backoff.is_zero() {
                    let after = tokio::time::Instant::now() + backoff;
                    at = Some(at.map_or(after, |a| a.max(after)));
                }
                if let Some(at) = at {
                    if deadline.is_some_and(|d| at >= d) {
                        break;
                    }
                    tokio::select! {
                        _ = tokio::time::sleep_until(at) => {}
                        _ = live.interrupted() => break,
                    }
                }
                if deadline.is_some_and(|d| tokio::time::Instant::now() >= d) {
                    break;
                }
                let k = order[(slot % order.len() as u64) as usize];
                // Ctrl-C cancels the call in flight: before the head by dropping the request,
                // after it by closing the stream (on 2026-07-28 that close is the cancel).
                let (verdict, timings) = match direct.as_mut() {
                    Some(conn) => tokio::select! {
                        call = conn.send(&mix[k].0, &mix[k].1) => {
                            call.finish_unless(live.interrupted()).await
                        }
                        _ = live.interrupted() => {
                            direct = Connection::new(&client);
                            (client.cancelled(&mix[k].0), Timings::default())
                        }
                    },
                    None => tokio::select! {
                        call = client.send_prepared(&mix[k].0) => {
                            call.finish_unless(live.interrupted()).await
                        }
                        _ = live.interrupted() => (client.cancelled(&mix[k].0), Timings::default()),
                    },
                };
                if verdict.outcome == Outcome::ConnectionFailed {
                    live.connect_failures.fetch_add(1, Ordering::SeqCst);
                    backoff = (backoff * 2).clamp(BACKOFF_START, BACKOFF_MAX);
                } else {
                    live.connect_failures.store(0, Ordering::SeqCst);
                    backoff = Duration::ZERO;
                }
                live.report
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .record(&verdict, &timings);
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
        report.answered as f64 * 1000.0 / report.elapsed_ms as f64
    };
    report.interrupted = live.is_interrupted();
    if stopped(&live, config.max_connect_failures) {
        report.stopped = Some(format!(
            "{} calls in a row found no server (CONNECTION_FAILED); is it running? (--max-connect-failures)",
            config.max_connect_failures
        ));
    }
    report.merged = 1;
    Ok(report)
}

/// The run stops: `max` calls in a row found no server.
fn stopped(live: &Live, max: u32) -> bool {
    max > 0 && live.connect_failures.load(Ordering::SeqCst) >= max
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(tool: &str, weight: u32) -> MixEntry {
        MixEntry {
            tool: tool.into(),
            args: json!({}),
            weight,
        }
    }

    #[test]
    fn schedule_gives_exact_shares() {
        let order = schedule(&[entry("a", 9), entry("b", 1)]);
        assert_eq!(order.len(), 10);
        assert_eq!(order.iter().filter(|&&i| i == 1).count(), 1);
        let order = schedule(&[entry("a", 2), entry("b", 3)]);
        assert_eq!(order.iter().filter(|&&i| i == 0).count(), 2);
    }

    #[test]
    fn histograms_round_trip_and_merge_exactly() {
        let mut a = Report::default();
        let mut b = Report::default();
        for v in 1..=1000u64 {
            a.terminal_us.record(v * 7);
            b.terminal_us.record(v * 13);
        }
        let a2: Report = serde_json::from_str(&serde_json::to_string(&a).unwrap()).unwrap();
        assert_eq!(a2.terminal_us.quantile(0.99), a.terminal_us.quantile(0.99));
        let mut direct = Latency::default();
        for v in 1..=1000u64 {
            direct.record(v * 7);
            direct.record(v * 13);
        }
        let mut merged = a2.clone();
        merged.merge(&b);
        for q in [0.5, 0.9, 0.99, 0.999] {
            assert_eq!(merged.terminal_us.quantile(q), direct.quantile(q));
        }
    }
}
