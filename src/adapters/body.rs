//! The async adapter: feeds a [`Flight`] of the one exchange path from any body stream of
//! `Result<Bytes, E>`, hands out each JSON-RPC message as soon as it is framed, and ends it
//! through its [`Driver`] with the [`Verdict`] (and, when the driver records, the entry).
//!
//! Deadlines are the adapter's job (the core keeps no clock): overall, idle (no bytes), and a
//! progress deadline that `notifications/progress` resets, capped by a maximum. When one passes,
//! the stream is dropped (on 2026-07-28 that close *is* the cancel) and the verdict is
//! `TIMED_OUT`. An early end is reported at once: no waiting for a timeout after EOF.

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use futures_core::Stream;
use tokio::time::{Instant, Sleep};

use crate::driver::{Driver, Finished, Flight, Times};
use crate::entry::Entry;
use crate::exchange::{Message, Observer};
use crate::sse::SseEvent;
use crate::verdict::{End, Verdict};
use crate::vocab::kinds::MessageKind as Kind;

/// The one exchange path shared by the exchanges of one client (its session, recording and
/// redaction policy).
pub type SharedDriver = Arc<Mutex<Driver>>;

/// Called with every recorded entry when its exchange ends.
pub type EntrySink = Arc<dyn Fn(Entry) + Send + Sync>;

/// Called with every verdict, including those of exchanges dropped before the end.
pub type VerdictSink = Arc<dyn Fn(&Verdict) + Send + Sync>;

/// How long to wait. `None` means no limit of that kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Deadlines {
    /// From the start of the exchange to the terminal response.
    pub overall: Option<Duration>,
    /// Without any body bytes.
    pub idle: Option<Duration>,
    /// Without progress; each `notifications/progress` starts it again...
    pub progress: Option<Duration>,
    /// ...but never past this, from the start.
    pub max_total: Option<Duration>,
    /// After the terminal response, how long to keep reading for trailing events before
    /// letting go of a stream the server keeps open.
    pub grace: Duration,
}

impl Default for Deadlines {
    fn default() -> Self {
        Deadlines {
            overall: Some(Duration::from_secs(60)),
            idle: None,
            progress: None,
            max_total: None,
            grace: Duration::from_millis(100),
        }
    }
}

impl Deadlines {
    /// Waits for `fut` (a request, up to its response head) under the deadlines that apply
    /// before any body arrives: the earliest of `overall`, `max_total` and `idle` (no byte has
    /// come yet, so the wait for the head is idle time too).
    ///
    /// # Errors
    /// [`HeadTimeout`] when that deadline passed first.
    pub async fn until_head<F: Future>(&self, fut: F) -> Result<F::Output, HeadTimeout> {
        let earliest = [self.overall, self.max_total, self.idle]
            .into_iter()
            .flatten()
            .min();
        match earliest {
            Some(d) => tokio::time::timeout(d, fut).await.map_err(|_| HeadTimeout),
            None => Ok(fut.await),
        }
    }
}

/// No response head before the deadline ([`Deadlines::until_head`]). One case only, so a unit
/// struct; the exchange ends as [`End::Timeout`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeadTimeout;

impl std::fmt::Display for HeadTimeout {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("no response head before the deadline")
    }
}

impl std::error::Error for HeadTimeout {}

/// An owned JSON-RPC message from the server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerMessage {
    /// The message text.
    pub raw: String,
    /// Request, notification or response.
    pub kind: Kind,
    /// The method of a request or notification.
    pub method: Option<String>,
    /// This is the response to our request.
    pub terminal: bool,
    /// SSE dispatch index.
    pub event: Option<u64>,
}

impl ServerMessage {
    /// Parses the message.
    pub fn value(&self) -> serde_json::Result<serde_json::Value> {
        serde_json::from_str(&self.raw)
    }
}

/// When things happened, measured from the moment the request was sent.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Timings {
    /// The response head arrived.
    pub head: Option<Duration>,
    /// The first SSE event with data arrived.
    pub first_event: Option<Duration>,
    /// The response to the request was framed.
    pub terminal: Option<Duration>,
    /// The exchange ended.
    pub end: Option<Duration>,
}

/// What the adapter yields: messages as they are framed, then the verdict.
#[derive(Debug, Clone)]
pub enum Frame {
    /// A JSON-RPC message from the server.
    Message(ServerMessage),
    /// The verdict; the last item.
    Verdict(Box<Verdict>),
}

#[derive(Default)]
struct Collector {
    /// Nobody will read the messages (the caller only wants the verdict): do not copy them.
    discard: bool,
    queue: VecDeque<ServerMessage>,
    progress: bool,
    first_event: Option<Instant>,
    terminal: Option<Instant>,
}

impl Observer for Collector {
    fn on_event(&mut self, _event: &SseEvent<'_>) {
        self.first_event.get_or_insert_with(Instant::now);
    }
    fn on_message(&mut self, m: &Message<'_>) {
        if m.method == Some("notifications/progress") {
            self.progress = true;
        }
        if m.terminal {
            self.terminal.get_or_insert_with(Instant::now);
        }
        if self.discard {
            return;
        }
        self.queue.push_back(ServerMessage {
            raw: m.raw.to_owned(),
            kind: m.kind,
            method: m.method.map(str::to_owned),
            terminal: m.terminal,
            event: m.event,
        });
    }
}

/// What a tap sees: the raw body, for recording. Only set up when recording.
#[derive(Debug, Clone, Copy)]
pub enum Tap<'a> {
    /// Body bytes as received.
    Chunk(&'a [u8]),
    /// How the body ended.
    End(End),
}

/// Receives the raw body of an exchange.
pub type TapFn = Box<dyn FnMut(Tap<'_>) + Send>;

/// An exchange being read from a live body.
pub struct JudgedBody<S> {
    tap: Option<TapFn>,
    flight: Option<Flight>,
    driver: Option<SharedDriver>,
    sink: Option<VerdictSink>,
    entries: Option<EntrySink>,
    body: Option<S>,
    collector: Collector,
    verdict: Option<Verdict>,
    /// The rows after the first of a batch (one verdict per request id).
    more: Vec<Verdict>,
    delivered: bool,
    deadlines: Deadlines,
    started: Instant,
    last_byte: Instant,
    last_progress: Instant,
    settled_at: Option<Instant>,
    head_at: Option<Instant>,
    ended_at: Option<Instant>,
    /// Armed on the first wait that has a deadline (a reply read without waiting needs none).
    sleep: Option<Pin<Box<Sleep>>>,
}

impl<S> std::fmt::Debug for JudgedBody<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JudgedBody")
            .field("finished", &self.flight.is_none())
            .field("queued", &self.collector.queue.len())
            .finish()
    }
}

impl<S> JudgedBody<S> {
    /// Its times for the driver, `elapsed` since the request was sent: the head's (evidence
    /// of which box made the status) and the request's own timeout.
    fn clocked(&self, elapsed: Duration) -> Clocked {
        Clocked {
            elapsed,
            head: self
                .head_at
                .map(|at| at.saturating_duration_since(self.started)),
            timeout: [self.deadlines.overall, self.deadlines.max_total]
                .into_iter()
                .flatten()
                .min(),
        }
    }
}

impl<S, E> JudgedBody<S>
where
    S: Stream<Item = Result<Bytes, E>> + Unpin,
{
    /// Reads `body` into `flight`, whose head has been fed, and ends it through `driver` (the
    /// one that began it). `started` is when the request was sent (deadlines count from it).
    pub fn new(
        driver: SharedDriver,
        flight: Flight,
        body: S,
        deadlines: Deadlines,
        started: Instant,
    ) -> Self {
        let now = Instant::now();
        JudgedBody {
            tap: None,
            flight: Some(flight),
            driver: Some(driver),
            sink: None,
            entries: None,
            body: Some(body),
            collector: Collector::default(),
            verdict: None,
            more: Vec::new(),
            delivered: false,
            deadlines,
            started,
            last_byte: now,
            last_progress: now,
            settled_at: None,
            head_at: Some(now),
            ended_at: None,
            sleep: None,
        }
    }

    /// An exchange that ended before a body (no head, or a deadline before the head).
    pub fn finished(verdict: Verdict) -> Self {
        let now = Instant::now();
        JudgedBody {
            tap: None,
            flight: None,
            driver: None,
            sink: None,
            entries: None,
            body: None,
            collector: Collector::default(),
            verdict: Some(verdict),
            more: Vec::new(),
            delivered: false,
            deadlines: Deadlines::default(),
            started: now,
            last_byte: now,
            last_progress: now,
            settled_at: None,
            head_at: None,
            ended_at: Some(now),
            sleep: None,
        }
    }

    /// [`finished`](Self::finished) with every row of an exchange (a batch has one per
    /// request id).
    pub(crate) fn finished_rows(rows: Vec<Verdict>) -> Self {
        let mut rows = rows.into_iter();
        let first = rows
            .next()
            .expect("a client's own request is always judged");
        let mut body = JudgedBody::finished(first);
        body.more = rows.collect();
        body
    }

    /// Shows the raw body to `tap` (for recording captures).
    pub fn with_tap(mut self, tap: TapFn) -> Self {
        self.tap = Some(tap);
        self
    }

    /// Shows the raw body to `tap` too, after any tap already set.
    pub fn and_tap(mut self, mut tap: TapFn) -> Self {
        self.tap = Some(match self.tap.take() {
            None => tap,
            Some(mut first) => Box::new(move |t: Tap<'_>| {
                first(t);
                tap(t);
            }),
        });
        self
    }

    /// Hands the recorded entry (when the driver records) to `entries` at the end.
    pub fn with_entries(mut self, entries: EntrySink) -> Self {
        self.entries = Some(entries);
        self
    }

    /// Sends the verdict (also on drop) to `sink`.
    pub fn with_sink(mut self, sink: VerdictSink) -> Self {
        self.sink = Some(sink);
        self
    }

    /// The next message from the server, or `None` once the exchange has ended.
    pub async fn next_message(&mut self) -> Option<ServerMessage> {
        loop {
            match std::future::poll_fn(|cx| self.poll_frame(cx)).await? {
                Frame::Message(m) => return Some(m),
                Frame::Verdict(v) => {
                    self.verdict = Some(*v);
                }
            }
        }
    }

    /// Reads to the end (or a deadline) and returns the verdict.
    /// Reads to the end and returns every row: one verdict, or one per request id when the
    /// body was a batch (the order of the batch).
    pub async fn verdicts(self) -> Vec<Verdict> {
        self.finish_all(std::future::pending()).await.0
    }

    /// Reads to the end (or a deadline) and returns the verdict (the first row of a batch).
    pub async fn verdict(self) -> Verdict {
        self.finish().await.0
    }

    /// Reads to the end (or a deadline) and returns the verdict with its timings.
    pub async fn finish(self) -> (Verdict, Timings) {
        self.finish_unless(std::future::pending()).await
    }

    /// Like [`finish`](Self::finish), but when `cancel` resolves first the stream is closed at
    /// once and the verdict is `CANCELLED` (a user's Ctrl-C), with the head and events seen.
    pub async fn finish_unless(self, cancel: impl Future<Output = ()>) -> (Verdict, Timings) {
        let (rows, timings) = self.finish_all(cancel).await;
        let verdict = rows
            .into_iter()
            .next()
            .expect("a finished exchange has a verdict");
        (verdict, timings)
    }

    /// Reads to the end (or `cancel`) and returns every row with the timings.
    async fn finish_all(mut self, cancel: impl Future<Output = ()>) -> (Vec<Verdict>, Timings) {
        self.collector.discard = true;
        self.collector.queue.clear();
        self.delivered = true; // the verdict is taken below, not handed out as a frame
        let mut cancel = std::pin::pin!(cancel);
        while std::future::poll_fn(|cx| {
            if self.flight.is_some() && cancel.as_mut().poll(cx).is_ready() {
                self.end(End::Cancelled);
            }
            self.poll_frame(cx)
        })
        .await
        .is_some()
        {}
        let started = self.started;
        let since = |t: Option<Instant>| t.map(|t| t.saturating_duration_since(started));
        let timings = Timings {
            head: since(self.head_at),
            first_event: since(self.collector.first_event),
            terminal: since(self.collector.terminal),
            end: since(self.ended_at),
        };
        let rows = self
            .verdict
            .take()
            .into_iter()
            .chain(std::mem::take(&mut self.more));
        (rows.collect(), timings)
    }

    fn deadline(&self) -> Option<Instant> {
        // `checked_add` throughout: a deadline too far away to represent is no deadline
        // (`--timeout 1e19` must not panic with "overflow when adding duration to instant").
        let d = &self.deadlines;
        if let Some(at) = self.settled_at {
            return at.checked_add(d.grace);
        }
        let progress = d.progress.and_then(|p| {
            let by_progress = self.last_progress.checked_add(p);
            let cap = d.max_total.and_then(|cap| self.started.checked_add(cap));
            by_progress.into_iter().chain(cap).min()
        });
        [
            d.overall.and_then(|o| self.started.checked_add(o)),
            d.idle.and_then(|i| self.last_byte.checked_add(i)),
            progress,
        ]
        .into_iter()
        .flatten()
        .min()
    }

    fn end(&mut self, end: End) {
        self.body = None; // closes the connection
        let now = Instant::now();
        self.ended_at = Some(now);
        let Some(flight) = self.flight.take() else {
            return;
        };
        let elapsed = now.saturating_duration_since(self.started);
        if let Some(tap) = self.tap.as_mut() {
            tap(Tap::End(end));
        }
        if let Some(driver) = self.driver.as_ref() {
            let clocked = self.clocked(elapsed);
            let finished = finish(driver, flight, end, clocked, &mut self.collector);
            let mut rows = deliver(finished, self.sink.as_ref(), self.entries.as_ref()).into_iter();
            self.verdict = rows.next();
            self.more = rows.collect();
        }
    }

    /// Tells the session about server requests as they are framed, so that the client's answer,
    /// sent while this stream is still open, finds them waiting (as a replay in start order does).
    fn note_server_requests(&mut self) {
        if let (Some(flight), Some(driver)) = (self.flight.as_mut(), &self.driver)
            && flight.has_news()
        {
            super::lock(driver).note(flight);
        }
    }

    fn poll_frame(&mut self, cx: &mut Context<'_>) -> Poll<Option<Frame>> {
        loop {
            if let Some(m) = self.collector.queue.pop_front() {
                return Poll::Ready(Some(Frame::Message(m)));
            }
            if self.flight.is_none() {
                if self.delivered {
                    return Poll::Ready(None);
                }
                self.delivered = true;
                return Poll::Ready(self.verdict.clone().map(|v| Frame::Verdict(Box::new(v))));
            }
            let Some(body) = self.body.as_mut() else {
                self.end(End::Eof);
                continue;
            };
            match Pin::new(body).poll_next(cx) {
                Poll::Ready(Some(Ok(chunk))) => {
                    self.last_byte = Instant::now();
                    if let Some(tap) = self.tap.as_mut() {
                        tap(Tap::Chunk(&chunk));
                    }
                    let flight = self.flight.as_mut().expect("checked above");
                    let at = self.last_byte.saturating_duration_since(self.started);
                    flight.feed_at(&chunk, at.as_secs_f64() * 1e3, &mut self.collector);
                    if std::mem::take(&mut self.collector.progress) {
                        self.last_progress = self.last_byte;
                    }
                    if self.settled_at.is_none() && flight.is_settled() {
                        self.settled_at = Some(self.last_byte);
                    }
                    self.note_server_requests();
                }
                Poll::Ready(Some(Err(_))) => self.end(End::Reset),
                Poll::Ready(None) => self.end(End::Eof),
                Poll::Pending => {
                    let Some(at) = self.deadline() else {
                        return Poll::Pending;
                    };
                    let sleep = match &mut self.sleep {
                        Some(sleep) => {
                            if sleep.deadline() != at {
                                sleep.as_mut().reset(at);
                            }
                            sleep
                        }
                        None => self.sleep.insert(Box::pin(tokio::time::sleep_until(at))),
                    };
                    if sleep.as_mut().poll(cx).is_pending() {
                        return Poll::Pending;
                    }
                    let end = if self.settled_at.is_some() {
                        End::Open
                    } else {
                        End::Timeout
                    };
                    self.end(end);
                }
            }
        }
    }
}

/// When an exchange's times were taken: what [`finish`] passes to the driver besides the end.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Clocked {
    /// Since the request was sent, at the end.
    pub(crate) elapsed: Duration,
    /// Since the request was sent, at the response head (none arrived: `None`).
    pub(crate) head: Option<Duration>,
    /// The request's own timeout.
    pub(crate) timeout: Option<Duration>,
}

/// Ends `flight` through `driver` with its times.
pub(crate) fn finish(
    driver: &SharedDriver,
    flight: Flight,
    end: End,
    clocked: Clocked,
    observer: &mut dyn Observer,
) -> Finished {
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let times = Times {
        started: None,
        elapsed_ms: Some(ms(clocked.elapsed)),
        head_ms: clocked.head.map(ms),
        timeout_ms: clocked.timeout.map(ms),
        error: None,
        arrivals: None,
    };
    super::lock(driver).finish(flight, end, times, observer)
}

/// Hands every row to `sink` and the recorded entry to `entries`; gives the rows (an
/// adapter's own request is always judged, so there is at least one).
pub(crate) fn deliver(
    finished: Finished,
    sink: Option<&VerdictSink>,
    entries: Option<&EntrySink>,
) -> Vec<Verdict> {
    if let (Some(entries), Some(entry)) = (entries, finished.entry) {
        entries(*entry);
    }
    if let Some(sink) = sink {
        for verdict in &finished.rows {
            sink(verdict);
        }
    }
    finished.rows.into_vec()
}

impl<S, E> Stream for JudgedBody<S>
where
    S: Stream<Item = Result<Bytes, E>> + Unpin,
{
    type Item = Frame;
    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Frame>> {
        self.get_mut().poll_frame(cx)
    }
}

impl<S> Drop for JudgedBody<S> {
    /// Dropping before the end closes the stream and records it as cancelled; once the answer
    /// is known (settled), as a reader that stopped with the stream still open.
    fn drop(&mut self) {
        self.body = None;
        if let (Some(flight), Some(driver)) = (self.flight.take(), &self.driver) {
            let end = if flight.is_settled() {
                End::Open
            } else {
                End::Cancelled
            };
            if let Some(tap) = self.tap.as_mut() {
                tap(Tap::End(end));
            }
            let clocked = self.clocked(self.started.elapsed());
            let finished = finish(driver, flight, end, clocked, &mut ());
            deliver(finished, self.sink.as_ref(), self.entries.as_ref());
        }
    }
}
