//! The analysis side of one forwarded exchange: the bytes the proxy forwards are handed to the
//! one exchange path (a [`Flight`] of the proxy's one [`Driver`](crate::Driver)), which also
//! keeps the HAR entry when recording. Fail open: the analysis runs after a chunk is taken and before it is passed on, cannot
//! block, and a panic inside it ends the analysis of that exchange (reported), never the
//! forwarding.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::time::{Instant, SystemTime};

use bytes::Bytes;

use super::arrivals::Arrivals;
use super::config::AnalysisStep;
use super::shared::Shared;
use super::sinks::{ExchangeRecord, Opened};
use crate::adapters::Timings;
use crate::driver::{Flight, Sent, Times};
use crate::exchange::{Message, Observer, ResponseHead};
use crate::request::Headers;
use crate::sse::SseEvent;
use crate::verdict::{End, Outcome};

/// Times the first event and the final answer.
struct Clock<'a> {
    started: Instant,
    timings: &'a mut Timings,
    arrivals: &'a mut Arrivals,
}

impl Observer for Clock<'_> {
    fn on_event(&mut self, event: &SseEvent<'_>) {
        self.arrivals.on_event(event.offset);
        if self.timings.first_event.is_none() && !event.data.is_empty() {
            self.timings.first_event = Some(self.started.elapsed());
        }
    }
    fn on_message(&mut self, message: &Message<'_>) {
        self.arrivals.on_message(self.started.elapsed(), message);
        if message.terminal && self.timings.terminal.is_none() {
            self.timings.terminal = Some(self.started.elapsed());
        }
    }
}

/// The `fuzzing` test hook: makes the analysis fail at one step when the settings ask for it
/// (an empty, free value in other builds).
#[derive(Clone, Copy)]
struct Inject {
    #[cfg(feature = "fuzzing")]
    step: Option<AnalysisStep>,
}

impl Inject {
    fn of(_shared: &Shared) -> Inject {
        Inject {
            #[cfg(feature = "fuzzing")]
            step: _shared.config.inject_panic,
        }
    }

    #[inline(always)]
    fn at(self, _step: AnalysisStep) {
        #[cfg(feature = "fuzzing")]
        if self.step == Some(_step) {
            panic!("injected analysis failure at {_step:?} (test hook)");
        }
    }
}

/// What an analysis failure reads as.
const FAILED: &str = "analysis failed (internal error); forwarded unchanged";

/// One exchange under observation.
pub struct Tap {
    shared: Arc<Shared>,
    index: u64,
    /// The request's method (a standard one is not allocated).
    http_method: hyper::Method,
    /// The exchange in the one exchange path; `None` once the analysis failed.
    flight: Option<Flight>,
    /// Why there is no verdict (not MCP, or the analysis failed).
    note: Option<String>,
    /// The analysis failed (an internal error); forwarding went on.
    analysis_failed: bool,
    inject: Inject,
    /// The request body as forwarded (shared, not copied).
    body: Bytes,
    /// When the request was forwarded, by the wall clock (for call grouping and the HAR).
    wall: SystemTime,
    started: Instant,
    timings: Timings,
    arrivals: Arrivals,
    /// The body ended so (its time in `timings.end`); the verdict waits for the client's
    /// connection to take the last bytes ([`Tap::ended`]).
    ended: Option<End>,
    finished: bool,
}

impl Tap {
    /// Starts observing a request about to be forwarded.
    pub fn begin(
        shared: Arc<Shared>,
        http_method: &hyper::Method,
        url: &str,
        headers: Headers,
        body: &Bytes,
    ) -> Tap {
        let inject = Inject::of(&shared);
        let method = http_method.as_str();
        let wall = SystemTime::now();
        let started = Instant::now();
        // The index is taken under the driver's lock, with the exchange begun: the recording
        // is written in index order, so its replay meets the exchanges in the order the live
        // session did (two connections racing here, such as rmcp's `initialized` notification
        // and its next request, would otherwise be judged in one order live and the other in
        // replay).
        let begun = catch_unwind(AssertUnwindSafe(|| {
            inject.at(AnalysisStep::Begin);
            shared.driver().begin(Sent {
                index: None,
                method,
                url,
                headers,
                body,
                started: shared
                    .recorder
                    .is_some()
                    .then(|| crate::adapters::client::rfc3339_with(wall, true)),
                from_client: false,
            })
        }));
        let arrivals = Arrivals::new(shared.config.trace_messages);
        let mut tap = Tap {
            index: 0,
            shared,
            http_method: http_method.clone(),
            flight: None,
            note: None,
            analysis_failed: false,
            inject,
            body: body.clone(),
            wall,
            started,
            timings: Timings::default(),
            arrivals,
            ended: None,
            finished: false,
        };
        match begun {
            Ok(flight) => {
                tap.index = flight.index();
                tap.note = flight
                    .skipped()
                    .map(|reason| format!("not judged: {reason}"));
                tap.flight = Some(flight);
            }
            Err(_) => {
                tap.index = tap.shared.driver().reserve_index();
                tap.fail();
            }
        }
        tap.shared.emit_opened(&Opened {
            index: tap.index,
            http_method: method,
            request: tap.flight.as_ref().and_then(|f| f.request()),
        });
        tap
    }

    /// The response head arrived.
    pub fn on_head(&mut self, status: u16, headers: Headers) {
        self.timings.head = Some(self.started.elapsed());
        let head = ResponseHead { status, headers };
        let inject = self.inject;
        self.analyse(|flight, _| {
            inject.at(AnalysisStep::Head);
            flight.on_head(head)
        });
    }

    /// A chunk of the response body, as forwarded.
    pub fn on_chunk(&mut self, chunk: &[u8]) {
        let inject = self.inject;
        self.analyse(|flight, clock| {
            inject.at(AnalysisStep::Chunk);
            let at = clock.started.elapsed().as_secs_f64() * 1e3;
            flight.feed_at(chunk, at, clock)
        });
    }

    /// The final answer is known: a client may stop reading now without cancelling anything.
    pub fn settled(&self) -> bool {
        self.flight.as_ref().is_some_and(Flight::is_settled)
    }

    /// Runs one step of the analysis; a panic ends the analysis of this exchange only.
    fn analyse(&mut self, step: impl FnOnce(&mut Flight, &mut Clock<'_>)) {
        let Some(flight) = self.flight.as_mut() else {
            return;
        };
        let mut clock = Clock {
            started: self.started,
            timings: &mut self.timings,
            arrivals: &mut self.arrivals,
        };
        if catch_unwind(AssertUnwindSafe(|| step(flight, &mut clock))).is_err() {
            self.fail();
            return;
        }
        // The client may answer before this stream ends: the session waits on them from now.
        if flight.has_news() {
            self.shared.driver().note(flight);
        }
    }

    /// The analysis of this exchange failed: it ends here (forwarding goes on) and says so.
    /// Its recording goes with it: the one path records what it judges.
    fn fail(&mut self) {
        self.flight = None;
        self.analysis_failed = true;
        self.note = Some(FAILED.into());
    }

    /// The response body ended (`end`, at this moment) and is on its way to the client: the
    /// exchange is judged when the tap is dropped ([`TeeBody`](super::tee::TeeBody) hands it to
    /// the client's connection, which drops it once the last bytes are written), so that the
    /// client never waits on the judging.
    pub fn ended(&mut self, end: End) {
        if self.ended.is_none() && !self.finished {
            self.ended = Some(end);
            self.timings.end = Some(self.started.elapsed());
        }
    }

    /// The exchange ended: judge it and hand it to the sinks. Later calls do nothing.
    pub fn finish(&mut self, end: End) {
        self.finish_with(end, None);
    }

    /// The upstream gave no response head (`end`: `Reset` when the connection failed or broke
    /// off, `Timeout` past `--upstream-head-timeout`): judged through the one path like any
    /// exchange (no head and `Reset` is `CONNECTION_FAILED`), with `cause` in the verdict's
    /// `retry.reason`, as the client adapter words it.
    pub fn finish_unanswered(&mut self, end: End, cause: &str) {
        self.finish_with(end, Some(cause));
    }

    fn finish_with(&mut self, end: End, cause: Option<&str>) {
        if std::mem::replace(&mut self.finished, true) {
            return;
        }
        if self.ended.is_none() {
            self.timings.end = Some(self.started.elapsed());
        }
        let mut finished = None;
        if let Some(flight) = self.flight.take() {
            let shared = &self.shared;
            let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
            let times = Times {
                started: None,
                elapsed_ms: self.timings.end.map(ms),
                head_ms: self.timings.head.map(ms),
                timeout_ms: self.shared.config.client_timeout.map(ms),
                error: None,
                arrivals: None,
            };
            let mut clock = Clock {
                started: self.started,
                timings: &mut self.timings,
                arrivals: &mut self.arrivals,
            };
            let inject = self.inject;
            match catch_unwind(AssertUnwindSafe(|| {
                inject.at(AnalysisStep::Finish);
                shared.driver().finish(flight, end, times, &mut clock)
            })) {
                Ok(mut f) => {
                    if let Some(cause) = cause {
                        for verdict in &mut f.rows {
                            explain(verdict, cause);
                        }
                    }
                    finished = Some(f);
                }
                Err(_) => {
                    self.analysis_failed = true;
                    self.note = Some(FAILED.into());
                }
            }
        }
        // The recording moves into the recorder after the sinks saw it: a copy would hold its
        // body twice.
        let entry = finished.as_mut().and_then(|f| f.entry.take());
        let mut record = ExchangeRecord {
            index: self.index,
            request: None,
            verdict: None,
            note: self.note.as_deref(),
            analysis_failed: self.analysis_failed,
            http_method: self.http_method.as_str(),
            request_body: &self.body,
            started: self.wall,
            timings: self.timings,
            entry: entry.as_deref(),
            messages: self.arrivals.as_slice(),
            messages_dropped: self.arrivals.dropped(),
        };
        match finished.as_ref().filter(|f| !f.rows.is_empty()) {
            None => self.shared.emit(&record),
            // One record per row (a batch has one per request id); the entry goes with the
            // first.
            Some(f) => {
                for (verdict, request) in f.rows.iter().zip(&f.requests) {
                    record.verdict = Some(verdict);
                    record.request = Some(request);
                    self.shared.emit(&record);
                    record.entry = None;
                }
            }
        }
        if let (Some(recorder), Some(entry)) = (&self.shared.recorder, entry) {
            recorder.keep(*entry);
        }
    }
}

/// Puts `cause` into the reason of a verdict about an exchange without a response head.
fn explain(verdict: &mut crate::verdict::Verdict, cause: &str) {
    if verdict.status.is_none()
        && matches!(
            verdict.outcome,
            Outcome::ConnectionFailed | Outcome::TimedOut
        )
    {
        crate::adapters::cause::explain(verdict, cause);
    }
}

impl Drop for Tap {
    /// Dropped after [`Tap::ended`]: judged with that end. Dropped unfinished otherwise: the
    /// client went away. After the final answer that is a reader that
    /// stopped (the stream is still open); before it, a cancel, or the client's deadline when
    /// it left at or after the `--timeout` it was said to have.
    fn drop(&mut self) {
        if !self.finished {
            let deadline = self.shared.config.client_timeout;
            let end = if let Some(end) = self.ended {
                end
            } else if self.settled() {
                End::Open
            } else if deadline.is_some_and(|d| self.started.elapsed() >= d) {
                End::Timeout
            } else {
                End::Cancelled
            };
            self.finish(end);
        }
    }
}
