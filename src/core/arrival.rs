//! When a body's bytes arrived, and the rule that reads it: `sse.buffered` (a stream whose
//! events all arrive together after a long wait, as when a proxy buffers `text/event-stream`).
//!
//! The core keeps no clock: an adapter says when each chunk arrived
//! ([`Flight::feed_at`](crate::Flight::feed_at)), a capture says when its body did (this tool's
//! `_mcp_arrivals` marks, or HAR `timings`). What is kept is a list of [`Mark`]s over byte
//! ranges, not chunks: two chunks that arrived in the same millisecond are one mark, so the
//! verdict depends on when bytes arrived, never on how they were cut. The list is bounded
//! ([`MAX_MARKS`]); past it the last mark grows, which can only make a burst look wider (no
//! false finding).

use serde::{Deserialize, Serialize};

/// Marks kept per exchange: enough for a stream with a few hundred separate arrivals; a longer
/// one merges its tail into the last mark.
pub const MAX_MARKS: usize = 256;

/// The body bytes before `end` (those not covered by an earlier mark) arrived between
/// `from_ms` and `to_ms` after the request was sent (equal when a live adapter saw them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Mark {
    /// Body offset one past the last byte this mark covers.
    pub end: u64,
    /// Earliest arrival, in milliseconds since the request was sent.
    pub from_ms: u64,
    /// Latest arrival, in milliseconds since the request was sent.
    pub to_ms: u64,
}

/// The marks of one body, in body order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Arrivals {
    marks: Vec<Mark>,
}

impl Arrivals {
    /// Marks as a capture gives them: ends that go backwards and inverted windows are dropped
    /// (a broken capture is judged without them, never refused); past [`MAX_MARKS`] the rest
    /// merge into the last one, as live.
    pub fn from_marks(marks: &[Mark]) -> Arrivals {
        let mut a = Arrivals::default();
        for m in marks {
            if m.from_ms <= m.to_ms && a.marks.last().is_none_or(|l| m.end >= l.end) {
                a.note(m.end, m.from_ms, m.to_ms);
            }
        }
        a
    }

    /// The body up to `end` arrived between `from_ms` and `to_ms`.
    pub fn note(&mut self, end: u64, from_ms: u64, to_ms: u64) {
        let full = self.marks.len() >= MAX_MARKS;
        if let Some(last) = self.marks.last_mut()
            && ((last.from_ms, last.to_ms) == (from_ms, to_ms) || full)
        {
            last.end = last.end.max(end);
            last.to_ms = last.to_ms.max(to_ms);
            return;
        }
        self.marks.push(Mark {
            end,
            from_ms,
            to_ms,
        });
    }

    /// The marks, in body order.
    pub fn marks(&self) -> &[Mark] {
        &self.marks
    }

    /// No arrival time is known.
    pub fn is_empty(&self) -> bool {
        self.marks.is_empty()
    }

    /// When the byte at `offset` arrived: `(earliest, latest)`; `None` past the last mark.
    pub fn when(&self, offset: u64) -> Option<(u64, u64)> {
        let i = self.marks.partition_point(|m| m.end <= offset);
        self.marks.get(i).map(|m| (m.from_ms, m.to_ms))
    }
}

/// What a stream's events were, for the burst test: counted by the exchange as they are framed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct EventSpan {
    /// Body offset of the first and the last event with data.
    pub first: Option<u64>,
    pub last: u64,
    /// Events with data.
    pub events: u64,
    /// `notifications/progress` among them.
    pub progress: u64,
    /// Other notifications.
    pub notifications: u64,
    /// Server requests.
    pub requests: u64,
}

impl EventSpan {
    /// An event with data started at `offset`.
    pub fn event(&mut self, offset: u64) {
        self.first.get_or_insert(offset);
        self.last = offset;
        self.events += 1;
    }
}

/// A burst: every event of the stream arrived within `spread_ms`, the first `wait_ms` after the
/// request was sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Burst {
    pub wait_ms: u64,
    pub spread_ms: u64,
}

/// Whether `span`'s events came as one burst after a long wait (the thresholds are
/// [`Limits::buffered_wait_ms`](crate::Limits::buffered_wait_ms) and
/// [`Limits::buffered_burst_ms`](crate::Limits::buffered_burst_ms)). Only telling when
/// something other than the response sat in it (a progress notification, a log message, a
/// server request): those are sent while the tool runs, so a server that streams them cannot
/// have sent them all at once at the end; a lone response after a wait is just a slow tool.
pub(crate) fn burst(
    span: &EventSpan,
    arrivals: &Arrivals,
    wait_ms: u64,
    burst_ms: u64,
) -> Option<Burst> {
    if span.events < 2 || span.progress + span.notifications + span.requests == 0 {
        return None;
    }
    let (first, _) = arrivals.when(span.first?)?;
    let (_, last) = arrivals.when(span.last)?;
    let spread = last.saturating_sub(first);
    (first >= wait_ms && spread <= burst_ms).then_some(Burst {
        wait_ms: first,
        spread_ms: spread,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span(first: u64, last: u64, events: u64, progress: u64) -> EventSpan {
        EventSpan {
            first: Some(first),
            last,
            events,
            progress,
            ..EventSpan::default()
        }
    }

    #[test]
    fn marks_merge_by_time_not_by_chunk() {
        let mut one = Arrivals::default();
        one.note(100, 5, 5);
        let mut many = Arrivals::default();
        for end in (10..=100).step_by(10) {
            many.note(end, 5, 5);
        }
        assert_eq!(one, many);
        many.note(120, 9, 9);
        assert_eq!(many.when(99), Some((5, 5)));
        assert_eq!(many.when(100), Some((9, 9)));
        assert_eq!(many.when(120), None);
    }

    #[test]
    fn marks_are_bounded_and_broken_ones_dropped() {
        let mut a = Arrivals::default();
        for i in 0..(MAX_MARKS as u64 * 4) {
            a.note(i + 1, i, i);
        }
        assert_eq!(a.marks().len(), MAX_MARKS);
        assert_eq!(a.when(MAX_MARKS as u64 * 4 - 1), Some((255, 1023)));
        let bad = [
            Mark {
                end: 10,
                from_ms: 1,
                to_ms: 1,
            },
            Mark {
                end: 5,
                from_ms: 2,
                to_ms: 2,
            },
            Mark {
                end: 20,
                from_ms: 9,
                to_ms: 3,
            },
        ];
        assert_eq!(Arrivals::from_marks(&bad).marks(), &bad[..1]);
    }

    #[test]
    fn a_burst_after_a_wait_is_found_and_a_spread_stream_is_not() {
        let mut burst_at_end = Arrivals::default();
        burst_at_end.note(400, 3000, 3002);
        let s = span(0, 300, 4, 3);
        assert_eq!(
            burst(&s, &burst_at_end, 1000, 100),
            Some(Burst {
                wait_ms: 3000,
                spread_ms: 2
            })
        );
        // Spread over time: each event in its own mark.
        let mut spread = Arrivals::default();
        for (i, end) in [100, 200, 300, 400].into_iter().enumerate() {
            spread.note(end, 1000 * i as u64 + 1000, 1000 * i as u64 + 1000);
        }
        assert_eq!(burst(&s, &spread, 1000, 100), None);
        // Early: no long wait.
        let mut early = Arrivals::default();
        early.note(400, 20, 20);
        assert_eq!(burst(&s, &early, 1000, 100), None);
        // Only the response (a slow tool), or unknown times: nothing said.
        assert_eq!(burst(&span(0, 0, 1, 0), &burst_at_end, 1000, 100), None);
        assert_eq!(burst(&span(0, 300, 2, 0), &burst_at_end, 1000, 100), None);
        assert_eq!(burst(&s, &Arrivals::default(), 1000, 100), None);
        // A HAR window wider than the burst allows proves nothing.
        let mut wide = Arrivals::default();
        wide.note(400, 1000, 5000);
        assert_eq!(burst(&s, &wide, 1000, 100), None);
    }
}
