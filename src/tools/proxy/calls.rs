//! Logical calls from the proxy's exchanges: the grouping `replay --calls` uses
//! ([`Calls`]), fed in forwarding order, so that the calls of a proxy run equal `replay --calls`
//! of its recording.
//!
//! Exchanges finish in any order (a long stream outlives the POSTs after it) while the grouping
//! reads them in the order they began: finished exchanges wait here until every earlier one has
//! finished, at most [`REORDER_MAX`] of them (a stream that never ends cannot hold the rest back
//! without bound; past the cap the waiting ones go on and the late one joins when it ends). A call
//! is handed on once no later exchange can join it, as `replay` decides: when more than
//! [`OPEN_CALLS`](crate::calls::OPEN_CALLS) are open, and for the rest when the proxy stops
//! ([`Proxy::close_calls`](super::Proxy::close_calls)).

use std::collections::BTreeMap;
use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use crate::calls::{Call, Calls, ExchangeFacts};
use crate::meta::Meta;
use crate::request::Headers;
use crate::verdict::{Advice, End, Outcome, Verdict};

use super::sinks::{ExchangeRecord, Sink};

/// Finished exchanges kept waiting for an earlier one at most.
pub const REORDER_MAX: usize = 1024;

/// Receives every logical call once it is closed, in the order the calls began.
pub trait CallSink: Send + Sync {
    /// A call is closed.
    fn call(&self, call: &Call);

    /// The exchange numbered `index` was grouped into call number `call` (still open). Told
    /// for every grouped exchange, in grouping order, always before that call closes (while
    /// the grouping is locked: keep it quick). For exporters that link an exchange to its call
    /// before the call ends (`proxy --otlp`); nothing by default.
    fn joined(&self, index: u64, call: u64) {
        let _ = (index, call);
    }
}

/// What the grouping needs of one finished exchange, owned while it waits.
struct Finished {
    verdict: Verdict,
    headers: Headers,
    body: bytes::Bytes,
    started_ms: u64,
    duration_ms: Option<u64>,
}

#[derive(Default)]
struct Grouping {
    calls: Calls,
    /// The next exchange index the grouping expects.
    next: u64,
    /// Finished exchanges after a gap, by index (`None`: not judged, nothing to group).
    waiting: BTreeMap<u64, Option<Finished>>,
}

/// The [`Sink`] that turns exchanges into calls for its [`CallSink`]s.
pub struct CallGrouper {
    state: Mutex<Grouping>,
    outs: Vec<Arc<dyn CallSink>>,
}

impl CallGrouper {
    /// Groups for `outs`.
    pub fn new(outs: Vec<Arc<dyn CallSink>>) -> CallGrouper {
        CallGrouper {
            state: Mutex::new(Grouping::default()),
            outs,
        }
    }

    fn hand_on(&self, calls: Vec<Call>) {
        for call in &calls {
            for out in &self.outs {
                out.call(call);
            }
        }
    }

    /// Groups what is waiting and closes every open call (the proxy stops).
    pub fn close(&self) {
        let mut out = Vec::new();
        {
            let mut g = self.state.lock().unwrap_or_else(|p| p.into_inner());
            let g = &mut *g;
            for (i, f) in std::mem::take(&mut g.waiting) {
                add(
                    &mut g.calls,
                    i,
                    f.as_ref().map(Finished::facts),
                    None,
                    &mut out,
                    &self.outs,
                );
            }
            g.calls.finish(&mut |c| out.push(c));
        }
        self.hand_on(out);
    }
}

/// Groups one finished exchange (`index`, its facts when it was judged) and tells `outs`
/// which call it joined.
fn add(
    calls: &mut Calls,
    index: u64,
    facts: Option<ExchangeFacts<'_>>,
    meta: Option<&Meta>,
    out: &mut Vec<Call>,
    outs: &[Arc<dyn CallSink>],
) {
    if let Some(facts) = facts {
        let call = calls.add_read(facts, meta, &mut |c| out.push(c));
        for sink in outs {
            sink.joined(index, call);
        }
    }
}

impl Finished {
    fn facts(&self) -> ExchangeFacts<'_> {
        ExchangeFacts {
            verdict: &self.verdict,
            headers: &self.headers,
            body: &self.body,
            started_ms: Some(self.started_ms),
            duration_ms: self.duration_ms,
        }
    }
}

/// What the grouping reads of a record, borrowed (`None`: not judged).
fn facts_of<'a>(record: &ExchangeRecord<'a>) -> Option<ExchangeFacts<'a>> {
    match (record.verdict, record.request) {
        (Some(verdict), Some(r)) => Some(ExchangeFacts {
            verdict,
            headers: &r.headers,
            body: record.request_body,
            started_ms: Some(millis_since_epoch(record.started)),
            // As the recording's `time` reads back in replay.
            duration_ms: record.timings.end.map(|d| (d.as_secs_f64() * 1e3) as u64),
        }),
        _ => None,
    }
}

impl Sink for CallGrouper {
    fn exchange(&self, record: &ExchangeRecord<'_>) {
        let mut out = Vec::new();
        {
            let mut g = self.state.lock().unwrap_or_else(|p| p.into_inner());
            let g = &mut *g;
            // Late (the others went on without it, past the cap; or a batch's later row), or
            // in order with nothing waiting (the common case): grouped from the record as it
            // is, nothing copied.
            let in_order = record.index == g.next && g.waiting.is_empty();
            if record.index < g.next || in_order {
                if in_order {
                    g.next = record.index + 1;
                }
                add(
                    &mut g.calls,
                    record.index,
                    facts_of(record),
                    // The request's `_meta` as the judging read it: not walked again.
                    record
                        .request
                        .and_then(|r| r.params.as_ref())
                        .and_then(|p| p.meta.as_ref()),
                    &mut out,
                    &self.outs,
                );
            } else {
                let finished = facts_of(record).map(|f| Finished {
                    verdict: f.verdict.clone(),
                    headers: f.headers.clone(),
                    body: bytes::Bytes::copy_from_slice(f.body),
                    started_ms: f.started_ms.unwrap_or_default(),
                    duration_ms: f.duration_ms,
                });
                g.waiting.insert(record.index, finished);
                while g.waiting.len() > REORDER_MAX
                    || g.waiting
                        .first_key_value()
                        .is_some_and(|(i, _)| *i == g.next)
                {
                    let Some((i, f)) = g.waiting.pop_first() else {
                        break;
                    };
                    g.next = i + 1;
                    add(
                        &mut g.calls,
                        i,
                        f.as_ref().map(Finished::facts),
                        None,
                        &mut out,
                        &self.outs,
                    );
                }
            }
        }
        self.hand_on(out);
    }
}

fn millis_since_epoch(t: SystemTime) -> u64 {
    t.duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// One call per line, the JSON of `replay --calls --format jsonl`.
pub struct CallLog {
    out: Arc<super::sinks::Lines>,
}

impl CallLog {
    /// Writes to `out`.
    pub fn new(out: Box<dyn Write + Send>) -> CallLog {
        CallLog {
            out: super::sinks::Lines::new(out),
        }
    }

    /// Writes out the lines still in the buffer (call it when the grouping has ended).
    pub fn flush(&self) {
        self.out.flush();
    }
}

impl CallSink for CallLog {
    fn call(&self, call: &Call) {
        self.out.write_with(|buf| {
            call.write_json(buf);
            Ok(())
        });
    }
}

/// What a call line needs of an exchange: its outcome, how its body ended, the advice.
type Ending = (Outcome, End, Advice);

/// Exchanges remembered for call lines at most (a call is handed on after at most
/// [`OPEN_CALLS`](crate::calls::OPEN_CALLS) later ones began; past this the oldest are let go).
const ENDINGS_MAX: usize = 1 << 16;

/// A short line per call on standard error: number, method, tool, outcome, whether complete,
/// how the final exchange's body ended (`end`), its retry advice, POSTs and entries.
///
/// The end and the advice are the final exchange's verdict's: add it as a [`Sink`] too (before
/// the calls are grouped; [`ProxyBuilder::human_lines`](super::ProxyBuilder::human_lines) does
/// both). How a re-send came about (`retry_origin`) is in `--calls`, not here: it is not advice.
///
/// ```text
/// call 0    tools/call                 echo                 TOOL_SUCCESS           complete   end eof       advice none                 posts 1 entries [0]
/// ```
#[derive(Default)]
pub struct HumanCallLines {
    endings: Mutex<BTreeMap<u64, Ending>>,
}

impl HumanCallLines {
    /// The line for `c` (without the newline), its exchanges' verdicts taken from what this
    /// sink saw; `-` when it saw none.
    pub fn line(&self, c: &Call) -> String {
        let mut endings = self.endings.lock().unwrap_or_else(|p| p.into_inner());
        let mine: Vec<Ending> = c.entries.iter().filter_map(|i| endings.remove(i)).collect();
        drop(endings);
        // The final exchange decides the call: the latest with the call's outcome.
        let last = mine
            .iter()
            .rev()
            .find(|(o, _, _)| *o == c.outcome)
            .or(mine.last());
        format!(
            "call {:<4} {:<26} {:<20} {:<22} {:<10} end {:<9} advice {:<20} posts {} entries {:?}",
            c.call,
            c.method.as_deref().unwrap_or("-"),
            c.tool.as_deref().unwrap_or(""),
            c.outcome.as_str(),
            if c.complete { "complete" } else { "incomplete" },
            last.map_or("-", |(_, end, _)| end.as_str()),
            last.map_or("-", |(_, _, advice)| advice.as_str()),
            c.post_count,
            c.entries,
        )
    }
}

impl Sink for HumanCallLines {
    fn exchange(&self, record: &ExchangeRecord<'_>) {
        if let Some(v) = record.verdict {
            let mut endings = self.endings.lock().unwrap_or_else(|p| p.into_inner());
            endings.insert(record.index, (v.outcome, v.end, v.retry.advice));
            while endings.len() > ENDINGS_MAX {
                endings.pop_first();
            }
        }
    }
}

impl CallSink for HumanCallLines {
    fn call(&self, c: &Call) {
        eprintln!("{}", self.line(c));
    }
}
