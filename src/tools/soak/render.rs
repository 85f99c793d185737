//! The report's renderings: a readable summary and Prometheus text exposition.

use super::Report;
use crate::verdict::Outcome;

impl Report {
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
