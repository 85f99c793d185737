//! The analysis of one forwarded exchange, on the judging thread ([`judge`](super::judge)):
//! what the forwarding side noted ([`Tap`](super::tap::Tap)) is handed, in the order it
//! happened, to the one exchange path (a [`Flight`] of the proxy's one [`Driver`](crate::Driver)),
//! which also keeps the HAR entry when recording. Times come with the notes (when the chunk
//! arrived, not when it is judged). A panic inside the analysis ends the analysis of that
//! exchange (reported), never the judging of the others, and never the forwarding.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime};

use bytes::Bytes;

use super::arrivals::Arrivals;
use super::config::{AnalysisStep, Config};
use super::sinks::{ExchangeRecord, Opened, Recorder, Sink};
use crate::adapters::Timings;
use crate::driver::{Driver, Flight, Sent, Times};
use crate::exchange::{Message, Observer, ResponseHead};
use crate::request::Headers;
use crate::sse::SseEvent;
use crate::verdict::{End, Outcome};

/// What the judging of every exchange of one proxy shares: the settings, the one [`Driver`]
/// (as `replay` uses one per capture, so a recording replays to the same verdicts; it also
/// numbers the exchanges and records them) and the sinks.
pub(crate) struct Analysis {
    pub(crate) config: Arc<Config>,
    /// The upstream URL (an exchange's own when its request had no query).
    upstream: String,
    driver: Mutex<Driver>,
    sinks: Vec<Arc<dyn Sink>>,
    /// The recording, when `--record` is on.
    pub(crate) recorder: Option<Arc<Recorder>>,
}

impl Analysis {
    pub(crate) fn new(
        config: Arc<Config>,
        upstream: String,
        sinks: Vec<Arc<dyn Sink>>,
        recorder: Option<Arc<Recorder>>,
    ) -> Analysis {
        let mut driver = Driver::new(config.limits).redaction(config.redaction());
        if recorder.is_some() {
            driver = driver.recording(config.record_max_body_bytes as u64);
        }
        Analysis {
            driver: Mutex::new(driver),
            config,
            upstream,
            sinks,
            recorder,
        }
    }

    /// The driver, locked (held only to begin, note or finish an exchange, and by
    /// [`Proxy::server_requests_unlisted`](super::Proxy::server_requests_unlisted)).
    pub(crate) fn driver(&self) -> MutexGuard<'_, Driver> {
        self.driver.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Tells every sink an exchange begins.
    fn emit_opened(&self, opened: &Opened<'_>) {
        for sink in &self.sinks {
            sink.opened(opened);
        }
    }

    /// Hands a finished exchange to every sink (the recorder takes its entry afterwards).
    fn emit(&self, record: &ExchangeRecord<'_>) {
        for sink in &self.sinks {
            sink.exchange(record);
        }
    }
}

/// Times the first event and the final answer: `now` is when the chunk being read arrived.
struct Clock<'a> {
    now: Duration,
    timings: &'a mut Timings,
    arrivals: &'a mut Arrivals,
}

impl Observer for Clock<'_> {
    fn on_event(&mut self, event: &SseEvent<'_>) {
        self.arrivals.on_event(event.offset);
        if self.timings.first_event.is_none() && !event.data.is_empty() {
            self.timings.first_event = Some(self.now);
        }
    }
    fn on_message(&mut self, message: &Message<'_>) {
        self.arrivals.on_message(self.now, message);
        if message.terminal && self.timings.terminal.is_none() {
            self.timings.terminal = Some(self.now);
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
    fn of(_config: &Config) -> Inject {
        Inject {
            #[cfg(feature = "fuzzing")]
            step: _config.inject_panic,
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

/// A request as the forwarding side noted it, when it was forwarded.
pub(crate) struct Begun {
    pub(crate) method: hyper::Method,
    /// The upstream URL with the client's query; `None`: the upstream's own.
    pub(crate) url: Option<String>,
    pub(crate) headers: Headers,
    /// The request body as forwarded (shared, not copied).
    pub(crate) body: Bytes,
    /// When it was forwarded, by the wall clock (for call grouping and the HAR).
    pub(crate) wall: SystemTime,
}

/// One exchange under judgement.
pub(crate) struct Judging {
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
    body: Bytes,
    wall: SystemTime,
    timings: Timings,
    arrivals: Arrivals,
    /// The body ended so (its time in `timings.end`); the verdict waits for the client's
    /// connection to take the last bytes (the forwarding side's tap is dropped then).
    ended: Option<End>,
    finished: bool,
}

impl Judging {
    /// Judges a request that was forwarded.
    pub(crate) fn begin(analysis: &Analysis, begun: Begun) -> Judging {
        let inject = Inject::of(&analysis.config);
        let method = begun.method.as_str();
        let url = begun.url.as_deref().unwrap_or(&analysis.upstream);
        let recording = analysis.recorder.is_some();
        // The index is taken with the exchange begun: the recording is written in index
        // order, so its replay meets the exchanges in the order the live session did (the
        // judging thread takes them in the order the forwarding began them).
        let flight = catch_unwind(AssertUnwindSafe(|| {
            inject.at(AnalysisStep::Begin);
            analysis.driver().begin(Sent {
                index: None,
                method,
                url,
                headers: begun.headers,
                body: &begun.body,
                started: recording.then(|| crate::adapters::client::rfc3339_with(begun.wall, true)),
                from_client: false,
            })
        }));
        let mut judging = Judging {
            index: 0,
            http_method: begun.method,
            flight: None,
            note: None,
            analysis_failed: false,
            inject,
            body: begun.body,
            wall: begun.wall,
            timings: Timings::default(),
            arrivals: Arrivals::new(analysis.config.trace_messages),
            ended: None,
            finished: false,
        };
        match flight {
            Ok(flight) => {
                judging.index = flight.index();
                judging.note = flight
                    .skipped()
                    .map(|reason| format!("not judged: {reason}"));
                judging.flight = Some(flight);
            }
            Err(_) => {
                judging.index = analysis.driver().reserve_index();
                judging.fail();
            }
        }
        analysis.emit_opened(&Opened {
            index: judging.index,
            http_method: judging.http_method.as_str(),
            request: judging.flight.as_ref().and_then(|f| f.request()),
        });
        judging
    }

    /// The response head arrived (`at`, from the request's forwarding).
    pub(crate) fn on_head(
        &mut self,
        analysis: &Analysis,
        status: u16,
        headers: Headers,
        at: Duration,
    ) {
        self.timings.head = Some(at);
        let head = ResponseHead { status, headers };
        let inject = self.inject;
        self.analyse(analysis, at, |flight, _| {
            inject.at(AnalysisStep::Head);
            flight.on_head(head)
        });
    }

    /// A chunk of the response body, as forwarded (`at`: when it arrived).
    pub(crate) fn on_chunk(&mut self, analysis: &Analysis, chunk: &[u8], at: Duration) {
        let inject = self.inject;
        self.analyse(analysis, at, |flight, clock| {
            inject.at(AnalysisStep::Chunk);
            flight.feed_at(chunk, at.as_secs_f64() * 1e3, clock)
        });
    }

    /// The final answer is known: a client may stop reading now without cancelling anything.
    fn settled(&self) -> bool {
        self.flight.as_ref().is_some_and(Flight::is_settled)
    }

    /// Runs one step of the analysis; a panic ends the analysis of this exchange only.
    fn analyse(
        &mut self,
        analysis: &Analysis,
        now: Duration,
        step: impl FnOnce(&mut Flight, &mut Clock<'_>),
    ) {
        let Some(flight) = self.flight.as_mut() else {
            return;
        };
        let mut clock = Clock {
            now,
            timings: &mut self.timings,
            arrivals: &mut self.arrivals,
        };
        if catch_unwind(AssertUnwindSafe(|| step(flight, &mut clock))).is_err() {
            self.fail();
            return;
        }
        // The client may answer before this stream ends: the session waits on them from now.
        if flight.has_news() {
            analysis.driver().note(flight);
        }
    }

    /// The analysis of this exchange failed: it ends here (forwarding goes on) and says so.
    /// Its recording goes with it: the one path records what it judges.
    fn fail(&mut self) {
        self.flight = None;
        self.analysis_failed = true;
        self.note = Some(FAILED.into());
    }

    /// The response body ended (`end`, `at`) and is on its way to the client: the exchange
    /// is judged when the forwarding side lets go of it ([`Judging::dropped`]), once the
    /// client's connection has the last bytes.
    pub(crate) fn ended(&mut self, end: End, at: Duration) {
        if self.ended.is_none() && !self.finished {
            self.ended = Some(end);
            self.timings.end = Some(at);
        }
    }

    /// The forwarding side let go of the exchange (`at`). After [`Judging::ended`]: judged
    /// with that end. Unfinished otherwise: the client went away. After the final answer that
    /// is a reader that stopped (the stream is still open); before it, a cancel, or the
    /// client's deadline when it left at or after the `--timeout` it was said to have.
    pub(crate) fn dropped(&mut self, analysis: &Analysis, at: Duration) {
        if self.finished {
            return;
        }
        let deadline = analysis.config.client_timeout;
        let end = if let Some(end) = self.ended {
            end
        } else if self.settled() {
            End::Open
        } else if deadline.is_some_and(|d| at >= d) {
            End::Timeout
        } else {
            End::Cancelled
        };
        self.finish(analysis, end, None, at);
    }

    /// The exchange ended (`end`, `at`): judge it and hand it to the sinks. `cause`: the
    /// upstream gave no response head (`end`: `Reset` when the connection failed or broke
    /// off, `Timeout` past `--upstream-head-timeout`), judged through the one path like any
    /// exchange (no head and `Reset` is `CONNECTION_FAILED`), with `cause` in the verdict's
    /// `retry.reason`, as the client adapter words it. Later calls do nothing.
    pub(crate) fn finish(
        &mut self,
        analysis: &Analysis,
        end: End,
        cause: Option<&str>,
        at: Duration,
    ) {
        if std::mem::replace(&mut self.finished, true) {
            return;
        }
        if self.ended.is_none() {
            self.timings.end = Some(at);
        }
        let mut finished = None;
        if let Some(flight) = self.flight.take() {
            let ms = |d: Duration| d.as_secs_f64() * 1e3;
            let times = Times {
                started: None,
                elapsed_ms: self.timings.end.map(ms),
                head_ms: self.timings.head.map(ms),
                timeout_ms: analysis.config.client_timeout.map(ms),
                error: None,
                arrivals: None,
            };
            let mut clock = Clock {
                now: at,
                timings: &mut self.timings,
                arrivals: &mut self.arrivals,
            };
            let inject = self.inject;
            match catch_unwind(AssertUnwindSafe(|| {
                inject.at(AnalysisStep::Finish);
                analysis.driver().finish(flight, end, times, &mut clock)
            })) {
                Ok(mut f) => {
                    if let Some(cause) = cause {
                        for verdict in &mut f.rows {
                            explain(verdict, cause);
                        }
                    }
                    finished = Some(f);
                }
                Err(_) => self.fail(),
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
            None => analysis.emit(&record),
            // One record per row (a batch has one per request id); the entry goes with the
            // first.
            Some(f) => {
                for (verdict, request) in f.rows.iter().zip(&f.requests) {
                    record.verdict = Some(verdict);
                    record.request = Some(request);
                    analysis.emit(&record);
                    record.entry = None;
                }
            }
        }
        if let (Some(recorder), Some(entry)) = (&analysis.recorder, entry) {
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
