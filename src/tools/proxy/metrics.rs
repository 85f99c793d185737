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

/// Counts by tool, by method, by (outcome, layer): looked up by the verdict's own strings
/// (nothing is allocated for a label set already counted), listed in the order of the tuple.
type Series = BTreeMap<(&'static str, &'static str), BTreeMap<String, BTreeMap<String, u64>>>;

#[derive(Default)]
struct State {
    exchanges: Series,
    /// Label sets in `exchanges`.
    series: usize,
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
        for ((outcome, layer), methods) in &s.exchanges {
            for (method, tools) in methods {
                for (tool, n) in tools {
                    let _ = writeln!(
                        out,
                        "mcp_verdict_proxy_exchanges_total{{outcome=\"{outcome}\",layer=\"{layer}\",method=\"{}\",tool=\"{}\"}} {n}",
                        label(method),
                        label(tool)
                    );
                }
            }
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
        let mut guard = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let s = &mut *guard;
        let Some(v) = record.verdict else {
            if record.analysis_failed {
                s.failed += 1;
            } else {
                s.unjudged += 1;
            }
            return;
        };
        let methods = s
            .exchanges
            .entry((v.outcome.as_str(), v.layer.as_str()))
            .or_default();
        let (method, tool) = (
            v.method.as_deref().unwrap_or_default(),
            v.tool.as_deref().unwrap_or_default(),
        );
        match methods
            .get_mut(method)
            .and_then(|tools| tools.get_mut(tool))
        {
            Some(n) => *n += 1,
            None => {
                let (method, tool) = if s.series >= MAX_SERIES {
                    ("other", "")
                } else {
                    (method, tool)
                };
                let n = methods
                    .entry(method.to_owned())
                    .or_default()
                    .entry(tool.to_owned())
                    .or_insert_with(|| {
                        s.series += 1;
                        0
                    });
                *n += 1;
            }
        }
        let t = record.timings;
        for (i, d) in [t.head, t.first_event, t.terminal].into_iter().enumerate() {
            if let Some(d) = d {
                s.phases[i].observe(d);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verdict::Verdict;

    fn verdict(method: &str, tool: &str) -> Verdict {
        let mut v: Verdict = serde_json::from_value(serde_json::json!({"index":0,"http_method":"POST","kind":"request","batch_position":null,"method":"tools/call","id":1,"tool":"echo","protocol_version":"2026-07-28","protocol_version_source":"header","outcome":"TOOL_SUCCESS","layer":"application","complete":true,"status":200,"content_type":"application/json","error_code":null,"error_message":null,"result_type":"complete","event_count":null,"last_event_id":null,"resumable":false,"end":"eof","retry":{"advice":"none","after_ms":null,"reason":"complete answer"},"violations":[],"unterminated":null,"limit":null,"server_requests":[],"status_origin":"server","origin_reason":"a success status: the server's answer","client_error":null,"task_status":null}))
        .unwrap();
        v.method = Some(method.to_owned().into());
        v.tool = (!tool.is_empty()).then(|| tool.into());
        v
    }

    fn feed(m: &Metrics, v: &Verdict) {
        m.exchange(&ExchangeRecord {
            index: 0,
            request: None,
            verdict: Some(v),
            note: None,
            analysis_failed: false,
            http_method: "POST",
            request_body: b"",
            started: std::time::SystemTime::UNIX_EPOCH,
            timings: Default::default(),
            entry: None,
            messages: &[],
            messages_dropped: 0,
        });
    }

    /// Label sets are counted and listed sorted; past [`MAX_SERIES`] a new one counts as
    /// `method="other"`, while those already there go on counting.
    #[test]
    fn series_are_counted_sorted_and_capped() {
        let m = Metrics::default();
        for (method, tool) in [
            ("tools/call", "b"),
            ("tools/call", "a"),
            ("tools/call", "b"),
        ] {
            feed(&m, &verdict(method, tool));
        }
        feed(&m, &verdict("tools/list", ""));
        let text = m.render();
        let lines: Vec<&str> = text
            .lines()
            .filter(|l| l.starts_with("mcp_verdict_proxy_exchanges_total{"))
            .collect();
        assert_eq!(
            lines,
            [
                r#"mcp_verdict_proxy_exchanges_total{outcome="TOOL_SUCCESS",layer="application",method="tools/call",tool="a"} 1"#,
                r#"mcp_verdict_proxy_exchanges_total{outcome="TOOL_SUCCESS",layer="application",method="tools/call",tool="b"} 2"#,
                r#"mcp_verdict_proxy_exchanges_total{outcome="TOOL_SUCCESS",layer="application",method="tools/list",tool=""} 1"#,
            ]
        );
        for i in 0..MAX_SERIES {
            feed(&m, &verdict("tools/call", &format!("t{i}")));
        }
        feed(&m, &verdict("tools/call", "a"));
        let text = m.render();
        let count = |needle: &str| {
            text.lines()
                .find(|l| l.contains(needle))
                .and_then(|l| l.rsplit(' ').next())
                .map(str::to_owned)
        };
        assert_eq!(count(r#"method="other",tool="""#).as_deref(), Some("3"));
        assert_eq!(count(r#"tool="a""#).as_deref(), Some("2"));
        assert_eq!(
            text.lines()
                .filter(|l| l.starts_with("mcp_verdict_proxy_exchanges_total{"))
                .count(),
            MAX_SERIES + 1
        );
    }
}
