//! `sse.idle_cut`: several streams of one capture, proxy run or soak cut after the same time.
//!
//! One cut stream says little (a server crashed, a client went away); three cut after the same
//! time (within a tolerance) is what an intermediary's idle timeout looks like: a load
//! balancer or proxy that closes any stream silent for N seconds. The finding is given once
//! per duration, on the exchange that completes the group (live, the proxy and soak report it
//! as it happens), naming the duration and the fix: events (an SSE comment as heartbeat, or
//! priming events) more often than that.

use crate::rules::Rule;
use crate::verdict::{Advice, End, Verdict, Violation};
use crate::vocab::kinds::ExchangeKind;

/// Streams cut after the same time before it is a finding.
pub const IDLE_CUT_STREAMS: usize = 3;
/// Cuts shorter than this are not an idle timeout (a crash or a refusal is quicker).
pub const IDLE_CUT_MIN_MS: u64 = 1000;
/// Cuts remembered to compare with (the most recent), so memory stays bounded.
const REMEMBERED: usize = 64;
/// Durations already reported (one finding each).
const REPORTED: usize = 16;

/// Two cuts are "the same time" within 5 % or 250 ms, whichever is larger: timeouts fire on a
/// timer tick, and the client's and the proxy's clocks start a little apart.
fn tolerance(ms: u64) -> u64 {
    (ms / 20).max(250)
}

/// The cuts seen so far.
#[derive(Debug, Clone, Default)]
pub(crate) struct IdleCuts {
    /// `(index, duration)` of recent cut streams.
    cuts: Vec<(u64, u64)>,
    reported: Vec<u64>,
}

impl IdleCuts {
    /// Looks at one finished exchange that took `elapsed_ms`; the finding when it completes a
    /// group of cuts after the same time not reported yet.
    pub(crate) fn observe(&mut self, v: &Verdict, elapsed_ms: Option<f64>) -> Option<Violation> {
        let ms = elapsed_ms.filter(|t| t.is_finite() && *t >= 0.0)? as u64;
        if ms < IDLE_CUT_MIN_MS || !is_cut(v) {
            return None;
        }
        if self.cuts.len() == REMEMBERED {
            self.cuts.remove(0);
        }
        self.cuts.push((v.index, ms));
        let tol = tolerance(ms);
        let near = |d: u64| d.abs_diff(ms) <= tol;
        if self.reported.iter().any(|&d| near(d)) {
            return None;
        }
        let group: Vec<(u64, u64)> = self
            .cuts
            .iter()
            .copied()
            .filter(|&(_, d)| near(d))
            .collect();
        if group.len() < IDLE_CUT_STREAMS {
            return None;
        }
        let mean = group.iter().map(|&(_, d)| d).sum::<u64>() / group.len() as u64;
        if self.reported.len() == REPORTED {
            self.reported.remove(0);
        }
        self.reported.push(mean);
        let entries: Vec<String> = group.iter().map(|(i, _)| i.to_string()).collect();
        let secs = mean as f64 / 1000.0;
        Some(Violation::new(
            Rule::SseIdleCut,
            format!(
                "{} streams were cut after {secs:.1} s (±{} ms; entries {}): likely an \
                 intermediary's idle timeout; send events (an SSE comment as heartbeat, or \
                 priming events) more often than every {secs:.1} s, or raise that timeout",
                group.len(),
                tolerance(mean),
                entries.join(", ")
            ),
            None,
        ))
    }
}

/// A 2xx event stream that ended (EOF or reset) before its answer, or a standalone stream
/// that ended at all; not a 2025-11-25 polling close (the server asked to be polled).
fn is_cut(v: &Verdict) -> bool {
    let sse = v.content_type.as_deref() == Some("text/event-stream");
    let ok = v.status.is_some_and(|s| (200..300).contains(&s));
    let ended = matches!(v.end, End::Eof | End::Reset);
    let standalone =
        matches!(v.kind, Some(ExchangeKind::Listen | ExchangeKind::Resume)) && v.method.is_none();
    let polling = v.retry.advice == Advice::Resume && v.retry.after_ms.is_some();
    sse && ok && ended && (standalone || !v.complete) && !polling
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Headers, Request, ResponseHead, Session};

    /// A tools/call stream cut (reset) after a progress notification.
    fn cut(session: &mut Session, id: u64) -> Verdict {
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"t"}}}}"#
        );
        let mut ex = session.begin(Request::new("POST", Headers::new(), body.as_bytes()));
        ex.on_head(ResponseHead {
            status: 200,
            headers: Headers::from_iter([("Content-Type", "text/event-stream")]),
        });
        ex.feed(b": heartbeat\n\n");
        session.finish(&mut ex, End::Reset)
    }

    #[test]
    fn three_streams_cut_after_the_same_time_are_one_finding() {
        let mut s = Session::default();
        let mut cuts = IdleCuts::default();
        let mut found = Vec::new();
        for (id, ms) in [
            (1, 30_050.0),
            (2, 12_000.0),
            (3, 29_900.0),
            (4, 30_300.0),
            (5, 30_000.0),
        ] {
            let v = cut(&mut s, id);
            found.push(cuts.observe(&v, Some(ms)));
        }
        assert!(found[..3].iter().all(Option::is_none), "{found:?}");
        let f = found[3].as_ref().expect("the third cut near 30 s");
        assert_eq!(f.rule, Rule::SseIdleCut);
        assert!(
            f.detail.contains("3 streams were cut after 30.1 s"),
            "{}",
            f.detail
        );
        assert!(f.detail.contains("heartbeat"), "{}", f.detail);
        // Once per duration.
        assert!(found[4].is_none());
    }

    #[test]
    fn short_cuts_complete_answers_and_scattered_times_are_not() {
        let mut s = Session::default();
        let mut cuts = IdleCuts::default();
        for id in 1..=5 {
            assert!(cuts.observe(&cut(&mut s, id), Some(300.0)).is_none());
        }
        for (id, ms) in [(6, 5_000.0), (7, 9_000.0), (8, 14_000.0), (9, 20_000.0)] {
            assert!(cuts.observe(&cut(&mut s, id), Some(ms)).is_none());
        }
        let mut done = cut(&mut s, 10);
        done.complete = true;
        for _ in 0..3 {
            assert!(cuts.observe(&done, Some(5_000.0)).is_none());
        }
        assert!(cuts.observe(&cut(&mut s, 11), None).is_none());
    }
}
