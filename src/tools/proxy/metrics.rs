//! Prometheus metrics of the proxy: exchanges by outcome, layer, method and tool, and latency
//! histograms for the response head, the first SSE event and the final answer.
//!
//! Method and tool names come from peers, so the number of label sets is capped
//! ([`MAX_SERIES`]); past it, new combinations are counted under `method="other"`.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Mutex;
use std::time::Duration;

use super::sinks::{ExchangeRecord, Sink};

/// Most distinct (outcome, method, tool) label sets.
pub const MAX_SERIES: usize = 1000;

/// Histogram bucket bounds, in seconds.
const BUCKETS: [f64; 14] = [
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0, 60.0,
];

#[derive(Default, Clone)]
struct Histogram {
    counts: [u64; BUCKETS.len()],
    count: u64,
    sum: f64,
}

impl Histogram {
    fn observe(&mut self, d: Duration) {
        let s = d.as_secs_f64();
        for (bound, n) in BUCKETS.iter().zip(self.counts.iter_mut()) {
            if s <= *bound {
                *n += 1;
            }
        }
        self.count += 1;
        self.sum += s;
    }
}

#[derive(Default)]
struct State {
    exchanges: BTreeMap<(&'static str, &'static str, String, String), u64>,
    unjudged: u64,
    failed: u64,
    phases: [Histogram; 3],
}

/// Counters and histograms, fed as a [`Sink`].
#[derive(Default)]
pub struct Metrics {
    state: Mutex<State>,
}

fn label(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

impl Metrics {
    /// Prometheus text exposition.
    pub fn render(&self) -> String {
        let s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let mut out = String::new();
        out.push_str("# HELP mcp_verdict_proxy_exchanges_total Exchanges judged, by outcome, layer, method and tool.\n");
        out.push_str("# TYPE mcp_verdict_proxy_exchanges_total counter\n");
        for ((outcome, layer, method, tool), n) in &s.exchanges {
            let _ = writeln!(
                out,
                "mcp_verdict_proxy_exchanges_total{{outcome=\"{outcome}\",layer=\"{layer}\",method=\"{}\",tool=\"{}\"}} {n}",
                label(method),
                label(tool)
            );
        }
        out.push_str("# HELP mcp_verdict_proxy_unjudged_total Forwarded exchanges that are not MCP request/response exchanges.\n");
        out.push_str("# TYPE mcp_verdict_proxy_unjudged_total counter\n");
        let _ = writeln!(out, "mcp_verdict_proxy_unjudged_total {}", s.unjudged);
        out.push_str("# HELP mcp_verdict_proxy_analysis_failures_total Forwarded exchanges whose analysis failed (an internal error; forwarded unchanged).\n");
        out.push_str("# TYPE mcp_verdict_proxy_analysis_failures_total counter\n");
        let _ = writeln!(
            out,
            "mcp_verdict_proxy_analysis_failures_total {}",
            s.failed
        );
        out.push_str("# HELP mcp_verdict_proxy_latency_seconds Time from forwarding the request, by phase.\n");
        out.push_str("# TYPE mcp_verdict_proxy_latency_seconds histogram\n");
        for (phase, h) in ["head", "first_event", "final"].iter().zip(&s.phases) {
            for (bound, n) in BUCKETS.iter().zip(&h.counts) {
                let _ = writeln!(
                    out,
                    "mcp_verdict_proxy_latency_seconds_bucket{{phase=\"{phase}\",le=\"{bound}\"}} {n}"
                );
            }
            let _ = writeln!(
                out,
                "mcp_verdict_proxy_latency_seconds_bucket{{phase=\"{phase}\",le=\"+Inf\"}} {}",
                h.count
            );
            let _ = writeln!(
                out,
                "mcp_verdict_proxy_latency_seconds_sum{{phase=\"{phase}\"}} {}",
                h.sum
            );
            let _ = writeln!(
                out,
                "mcp_verdict_proxy_latency_seconds_count{{phase=\"{phase}\"}} {}",
                h.count
            );
        }
        out
    }
}

impl Sink for Metrics {
    fn exchange(&self, record: &ExchangeRecord<'_>) {
        let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let Some(v) = record.verdict else {
            if record.analysis_failed {
                s.failed += 1;
            } else {
                s.unjudged += 1;
            }
            return;
        };
        let mut key = (
            v.outcome.as_str(),
            v.layer.as_str(),
            v.method.as_deref().unwrap_or_default().to_owned(),
            v.tool.as_deref().unwrap_or_default().to_owned(),
        );
        if !s.exchanges.contains_key(&key) && s.exchanges.len() >= MAX_SERIES {
            key.2 = "other".into();
            key.3 = String::new();
        }
        *s.exchanges.entry(key).or_default() += 1;
        let t = record.timings;
        for (i, d) in [t.head, t.first_event, t.terminal].into_iter().enumerate() {
            if let Some(d) = d {
                s.phases[i].observe(d);
            }
        }
    }
}
