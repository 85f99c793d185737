//! `replay --otlp` and `probe --otlp`: a finished [`Run`] exported as span trees, one per
//! logical call: the call span, then its exchanges' spans as children in its trace. The run
//! already holds every trace and call, so the tree is built whole.

use std::collections::{HashMap, VecDeque};

use super::otel::Otlp;
use super::otel_call::Window;
use super::{Run, otel_exchange};

/// Exports every call of `run` with its exchanges (`url`: the server, for `server.*`). An
/// exchange no call claims (none should) is exported alone.
pub fn export(otlp: &Otlp, run: &Run, url: &str) {
    let server = super::otel::server_of(url);
    // The traces of each entry, in order: a JSON-RPC batch is one entry with several verdicts,
    // each claimed by one call in turn.
    let mut of_entry: HashMap<(&str, u64), VecDeque<usize>> = HashMap::new();
    for (i, t) in run.traces.iter().enumerate() {
        of_entry
            .entry((t.source.as_str(), t.verdict.index))
            .or_default()
            .push_back(i);
    }
    let mut claimed = vec![false; run.traces.len()];
    // Numbered across the run (replay numbers calls per capture): one trace per call.
    for (n, (source, call)) in run.calls.iter().enumerate() {
        let ids = otlp.call_ids(n as u64);
        let traces: Vec<usize> = call
            .entries
            .iter()
            .filter_map(|e| of_entry.get_mut(&(source.as_str(), *e))?.pop_front())
            .collect();
        let mut window = Window::default();
        for &i in &traces {
            claimed[i] = true;
            let x = otel_exchange(&run.traces[i], url);
            window.add(x.verdict, x.start, end_of(&x), x.session_id);
            otlp.record(&x, Some(ids));
        }
        otlp.record_call(ids, call, &window, server.as_ref());
    }
    for (t, _) in run.traces.iter().zip(&claimed).filter(|(_, c)| !**c) {
        otlp.record(&otel_exchange(t, url), None);
    }
}

/// When an exchange ended.
pub fn end_of(x: &super::otel::Exchange<'_>) -> std::time::SystemTime {
    x.start + x.duration
}
