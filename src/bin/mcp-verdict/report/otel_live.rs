//! `proxy --otlp`: call spans and exchange spans from a proxy that runs for days, where an
//! exchange finishes long before its call closes.
//!
//! An exchange's span goes out as soon as the grouping has placed it
//! ([`CallSink::joined`](mcp_verdict::proxy::CallSink::joined): at once, unless an earlier
//! exchange still streams), naming its call span as parent by the ids derived from the call's
//! number ([`CallIds`](super::otel_call::CallIds)); the call span goes out when the call
//! closes, with those same ids. Kept meanwhile, both bounded: exchanges finished but not yet
//! grouped (the grouping holds at most [`REORDER_MAX`] back), and per open call (the grouping
//! keeps at most [`OPEN_CALLS`](mcp_verdict::OPEN_CALLS) open) its [`Window`]: two times, the
//! session stand-in and the final advice.

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;

use mcp_verdict::Call;
use mcp_verdict::proxy::calls::REORDER_MAX;

use super::Trace;
use super::otel::Otlp;
use super::otel_call::Window;
use super::otel_run::end_of;

#[derive(Default)]
struct State {
    /// Finished exchanges waiting for the grouping, by exchange number.
    pending: HashMap<u64, Trace>,
    /// Each open call's window so far, by call number.
    windows: BTreeMap<u64, Window>,
    /// Calls close in the order they began: every call below this one is closed.
    next_open: u64,
}

/// The live exporter.
pub struct LiveCalls {
    otlp: Otlp,
    /// The upstream as shown, for `server.*`.
    source: String,
    state: Mutex<State>,
}

impl LiveCalls {
    /// Exports to `otlp`; `source` is the upstream as shown.
    pub fn new(otlp: Otlp, source: String) -> LiveCalls {
        LiveCalls {
            otlp,
            source,
            state: Mutex::default(),
        }
    }

    /// A judged exchange finished. `grouped`: the grouping will place it (it had a request);
    /// otherwise its span goes out now, without a call.
    pub fn exchange(&self, index: u64, trace: Trace, grouped: bool) {
        if !grouped {
            self.otlp
                .record(&super::otel_exchange(&trace, &self.source), None);
            return;
        }
        let evicted = {
            let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
            s.pending.insert(index, trace);
            // Never more than the grouping holds back; past it (it cannot happen while the
            // grouping keeps its bound) the lowest goes out alone rather than wait forever.
            if s.pending.len() > REORDER_MAX + 1 {
                let lowest = s.pending.keys().min().copied();
                lowest.and_then(|i| s.pending.remove(&i))
            } else {
                None
            }
        };
        if let Some(t) = evicted {
            self.otlp
                .record(&super::otel_exchange(&t, &self.source), None);
        }
    }

    /// The grouping placed exchange `index` in call `call`: its span goes out, the call span's
    /// child, and the call's window takes it in.
    pub fn joined(&self, index: u64, call: u64) {
        let ids = self.otlp.call_ids(call);
        let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let Some(trace) = s.pending.remove(&index) else {
            return;
        };
        let x = super::otel_exchange(&trace, &self.source);
        if call >= s.next_open {
            s.windows
                .entry(call)
                .or_default()
                .add(x.verdict, x.start, end_of(&x), x.session_id);
        }
        drop(s);
        self.otlp.record(&x, Some(ids));
    }

    /// A call closed: its span goes out with the ids its exchanges named.
    pub fn call(&self, call: &Call) {
        let window = {
            let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
            s.next_open = s.next_open.max(call.call + 1);
            s.windows.remove(&call.call).unwrap_or_default()
        };
        let server = super::otel::server_of(&self.source);
        self.otlp.record_call(
            self.otlp.call_ids(call.call),
            call,
            &window,
            server.as_ref(),
        );
    }

    /// The proxy stopped (after the grouping closed its calls): exchanges never grouped go
    /// out alone, then everything buffered is sent.
    pub fn shutdown(&self) -> Result<(), String> {
        let left: Vec<Trace> = {
            let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
            s.windows.clear();
            s.pending.drain().map(|(_, t)| t).collect()
        };
        for t in &left {
            self.otlp
                .record(&super::otel_exchange(t, &self.source), None);
        }
        self.otlp.shutdown()
    }
}
