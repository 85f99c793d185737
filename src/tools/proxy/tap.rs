//! The analysis side of one forwarded exchange: the bytes the proxy forwards are handed to the
//! sans-IO [`Exchange`] (through the proxy's one [`Session`]) and, when recording, kept for the
//! HAR. Fail open: the analysis runs after a chunk is taken and before it is passed on, cannot
//! block, and a panic inside it ends the analysis of that exchange (reported), never the
//! forwarding.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::time::{Instant, SystemTime};

use bytes::Bytes;

use super::arrivals::Arrivals;
use super::config::AnalysisStep;
use super::shared::Shared;
use super::sinks::ExchangeRecord;
use crate::adapters::Timings;
use crate::exchange::{Exchange, Message, Observer, ResponseHead};
use crate::har::Entry;
use crate::replay::not_mcp;
use crate::request::{Headers, Request};
use crate::sse::SseEvent;
use crate::verdict::End;

/// Times the first event and the final answer.
struct Clock<'a> {
    started: Instant,
    timings: &'a mut Timings,
    arrivals: &'a mut Arrivals,
    /// Server requests framed in this step, for the session to wait on (calls2).
    requests: Vec<(serde_json::Value, String)>,
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
        self.requests
            .extend(crate::lifecycle::server_request_in(message));
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

/// The record of what was forwarded, kept only when recording.
struct Recording {
    entry: Entry,
    cap: usize,
}

/// One exchange under observation.
pub struct Tap {
    shared: Arc<Shared>,
    index: u64,
    http_method: String,
    exchange: Option<Exchange>,
    /// Why there is no exchange (not MCP, or the analysis failed).
    note: Option<String>,
    /// The analysis failed (an internal error); forwarding went on.
    analysis_failed: bool,
    inject: Inject,
    recording: Option<Recording>,
    /// The request body as forwarded (shared, not copied).
    body: Bytes,
    /// When the request was forwarded, by the wall clock (for call grouping and the HAR).
    wall: SystemTime,
    started: Instant,
    timings: Timings,
    arrivals: Arrivals,
    finished: bool,
}

/// An entry with only its position, method and URL (bodies and response come later).
fn bare_entry(index: u64, method: &str, url: &str) -> Entry {
    Entry {
        index,
        method: method.to_owned(),
        url: url.to_owned(),
        request_headers: Headers::new(),
        request_body: Vec::new(),
        response: None,
        response_body: Vec::new(),
        end: End::Eof,
        started: None,
        time_ms: None,
        timings: None,
    }
}

impl Tap {
    /// Starts observing a request about to be forwarded.
    pub fn begin(
        shared: Arc<Shared>,
        method: &str,
        url: &str,
        headers: Headers,
        body: &Bytes,
    ) -> Tap {
        let inject = Inject::of(&shared);
        let wall = SystemTime::now();
        let started = Instant::now();
        // The index is taken under the session's lock, with the exchange begun: the recording
        // is written in index order, so its replay meets the exchanges in the order the live
        // session did (two connections racing here, such as rmcp's `initialized` notification
        // and its next request, would otherwise be judged in one order live and the other in
        // replay).
        let mut taken = None;
        let begun = catch_unwind(AssertUnwindSafe(|| {
            inject.at(AnalysisStep::Begin);
            let mut req = Request::new(method, headers.clone(), body);
            let mut session = shared.session();
            let index = *taken.insert(shared.next_index());
            if method == "GET"
                && let Some(last) = headers.get("last-event-id")
                && let Some(resumed) = session.resumption(last, headers.clone())
            {
                req = resumed;
            }
            match not_mcp(&bare_entry(index, method, url), &req) {
                Some(reason) => Err(reason),
                None => Ok(session.begin_at(index, req)),
            }
        }));
        let index = taken.unwrap_or_else(|| shared.next_index());
        let recording = shared.recorder.is_some().then(|| Recording {
            entry: Entry {
                request_headers: super::headers::redacted(&headers, shared.config.redact),
                request_body: body.to_vec(),
                started: Some(crate::adapters::client::rfc3339_with(wall, true)),
                ..bare_entry(index, method, url)
            },
            cap: shared.config.record_max_body_bytes,
        });
        let arrivals = Arrivals::new(shared.config.trace_messages);
        let mut tap = Tap {
            shared,
            index,
            http_method: method.to_owned(),
            exchange: None,
            note: None,
            analysis_failed: false,
            inject,
            recording,
            body: body.clone(),
            wall,
            started,
            timings: Timings::default(),
            arrivals,
            finished: false,
        };
        match begun {
            Ok(Ok(exchange)) => tap.exchange = Some(exchange),
            Ok(Err(reason)) => tap.note = Some(format!("not judged: {reason}")),
            Err(_) => tap.fail(),
        }
        tap
    }

    /// The response head arrived.
    pub fn on_head(&mut self, status: u16, headers: Headers) {
        self.timings.head = Some(self.started.elapsed());
        let head = ResponseHead { status, headers };
        if let Some(rec) = &mut self.recording {
            let mut shown = head.clone();
            shown.headers = super::headers::redacted(&head.headers, self.shared.config.redact);
            rec.entry.response = Some(shown);
        }
        let inject = self.inject;
        self.analyse(|ex, _| {
            inject.at(AnalysisStep::Head);
            ex.on_head(head)
        });
    }

    /// A chunk of the response body, as forwarded.
    pub fn on_chunk(&mut self, chunk: &[u8]) {
        if let Some(rec) = &mut self.recording {
            let room = rec.cap.saturating_sub(rec.entry.response_body.len());
            rec.entry
                .response_body
                .extend_from_slice(&chunk[..chunk.len().min(room)]);
        }
        let inject = self.inject;
        self.analyse(|ex, clock| {
            inject.at(AnalysisStep::Chunk);
            ex.feed_with(chunk, clock)
        });
    }

    /// The final answer is known: a client may stop reading now without cancelling anything.
    pub fn settled(&self) -> bool {
        self.exchange.as_ref().is_some_and(Exchange::is_settled)
    }

    /// Runs one step of the analysis; a panic ends the analysis of this exchange only.
    fn analyse(&mut self, step: impl FnOnce(&mut Exchange, &mut Clock<'_>)) {
        let Some(ex) = self.exchange.as_mut() else {
            return;
        };
        let mut clock = Clock {
            started: self.started,
            timings: &mut self.timings,
            arrivals: &mut self.arrivals,
            requests: Vec::new(),
        };
        let failed = catch_unwind(AssertUnwindSafe(|| step(ex, &mut clock))).is_err();
        let requests = clock.requests;
        if failed {
            self.fail();
            return;
        }
        // The client may answer before this stream ends: the session waits on them from now.
        if !requests.is_empty() {
            let mut session = self.shared.session();
            for (id, method) in requests {
                session.server_request_seen(id, method);
            }
        }
    }

    /// The analysis of this exchange failed: it ends here (forwarding goes on) and says so.
    fn fail(&mut self) {
        self.exchange = None;
        self.analysis_failed = true;
        self.note = Some(FAILED.into());
    }

    /// The exchange ended: judge it and hand it to the sinks. Later calls do nothing.
    pub fn finish(&mut self, end: End) {
        if std::mem::replace(&mut self.finished, true) {
            return;
        }
        self.timings.end = Some(self.started.elapsed());
        let mut verdict = None;
        if let Some(ex) = self.exchange.as_mut() {
            let shared = &self.shared;
            let mut clock = Clock {
                started: self.started,
                timings: &mut self.timings,
                arrivals: &mut self.arrivals,
                requests: Vec::new(),
            };
            let inject = self.inject;
            match catch_unwind(AssertUnwindSafe(|| {
                inject.at(AnalysisStep::Finish);
                shared.session().finish_with(ex, end, &mut clock)
            })) {
                Ok(v) => verdict = Some(v),
                Err(_) => {
                    self.analysis_failed = true;
                    self.note = Some(FAILED.into());
                }
            }
        }
        if let Some(rec) = &mut self.recording {
            rec.entry.end = end;
            rec.entry.time_ms = self.timings.end.map(|d| d.as_secs_f64() * 1e3);
        }
        let record = ExchangeRecord {
            index: self.index,
            request: self.exchange.as_ref().map(Exchange::request),
            verdict: verdict.as_ref(),
            note: self.note.as_deref(),
            analysis_failed: self.analysis_failed,
            http_method: &self.http_method,
            request_body: &self.body,
            started: self.wall,
            timings: self.timings,
            entry: self.recording.as_ref().map(|r| &r.entry),
            messages: self.arrivals.as_slice(),
            messages_dropped: self.arrivals.dropped(),
        };
        self.shared.emit(&record);
        // The recording moves into the recorder: a copy would hold its body twice.
        if let (Some(recorder), Some(rec)) = (&self.shared.recorder, self.recording.take()) {
            recorder.keep(rec.entry);
        }
    }
}

impl Drop for Tap {
    /// Dropped unfinished: the client went away. After the final answer that is a reader that
    /// stopped (the stream is still open); before it, a cancel, or the client's deadline when
    /// it left at or after the `--timeout` it was said to have.
    fn drop(&mut self) {
        if !self.finished {
            let deadline = self.shared.config.client_timeout;
            let end = if self.settled() {
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
