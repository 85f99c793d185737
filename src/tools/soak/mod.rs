//! Soak mode: sustained `tools/call` traffic with a verdict for every response.
//!
//! Load tools count HTTP statuses; for MCP that is the wrong number, because a 200 can carry a
//! JSON-RPC error, an `isError` result, or a stream that ends before its final response. Here
//! every response goes through the core, and the report counts outcomes, layers and broken rules.
//! Latencies go into HdrHistograms that serialize losslessly, so reports from several machines
//! merge into exact combined percentiles.

use std::collections::BTreeMap;
use std::time::Duration;

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

mod render;
mod run;

pub use run::{CallHook, Live, PreludeHook, SoakError, run, tool_names};

use crate::adapters::{Handshake, Timings};
use crate::verdict::Verdict;

/// Requests run when neither a count nor a duration is given.
pub const DEFAULT_REQUESTS: u64 = 1000;

/// Consecutive `CONNECTION_FAILED` calls after which a run stops (the server is gone).
pub const DEFAULT_MAX_CONNECT_FAILURES: u32 = 10;

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
            (h.0)
                .0
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
            *self
                .violations
                .entry(violation.rule.to_string())
                .or_default() += 1;
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
