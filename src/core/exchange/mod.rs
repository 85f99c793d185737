//! The per-exchange state machine: request facts in, response head, body bytes in any chunking,
//! an end reason, and out comes a [`Verdict`]. No I/O, no clocks, no async.
//!
//! ```text
//!   new ──on_head──▶ (Buffer | Stream | Discard) ──feed*──▶ finish(end) ──▶ Verdict
//! ```
//!
//! The order of judgement is fixed: HTTP status and content type first (decided from the head,
//! whatever the body says), then stream completeness, then the JSON-RPC envelope, then the result.

mod learn;
mod stream;
#[cfg(test)]
mod tests;

use learn::learn;
use stream::StreamSink;

use std::borrow::Cow;
use std::collections::VecDeque;

use serde_json::Value;

use crate::arrival::{Arrivals, EventSpan};
use crate::error_codes;
use crate::findings::Findings;
use crate::headers::Known;
use crate::jsonrpc::{self, Envelope, EnvelopeCheck, Payload};
use crate::limits::{LimitKind, Limits};
use crate::request::{Headers, Request};
use crate::retry::{self, RetryFacts};
use crate::rules::Rule;
use crate::sse::{SseEvent, SseFramer};
use crate::tool_result;
use crate::verdict::{Advice, End, Layer, Location, Outcome, RetryAdvice, TaskReport, Verdict};
use crate::version::{ProtocolVersion, VersionSource};
use crate::vocab::kinds::{ExchangeKind, MessageKind as Kind};
use crate::vocab::members::{ResultMembers, ScannedMembers};
use crate::vocab::verdict::ServerRequest;
use crate::wire;

/// The response status line and headers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResponseHead {
    /// HTTP status.
    pub status: u16,
    /// Response headers.
    pub headers: Headers,
}

/// A JSON-RPC message from the server, as soon as it is framed. Borrowed: valid during the call.
#[derive(Debug, Clone, Copy)]
pub struct Message<'a> {
    /// The message text (one JSON object).
    pub raw: &'a str,
    /// Request, notification or response.
    pub kind: Kind,
    /// The method, for requests and notifications.
    pub method: Option<&'a str>,
    /// This is the response to our request.
    pub terminal: bool,
    /// SSE dispatch index, when it came in an event.
    pub event: Option<u64>,
}

/// Receives what the exchange sees while it is fed. Every method defaults to doing nothing, so
/// an adapter implements only what it forwards.
pub trait Observer {
    /// An SSE event was dispatched.
    fn on_event(&mut self, _event: &SseEvent<'_>) {}
    /// A JSON-RPC message was framed and parsed.
    fn on_message(&mut self, _message: &Message<'_>) {}
}

/// An observer that ignores everything.
impl Observer for () {}

/// What an exchange taught about the session, for later exchanges in the same capture.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Learned {
    /// `initialize` result's `protocolVersion`.
    pub negotiated: Option<ProtocolVersion>,
    /// `tools/list` result: tool name and whether its annotations make a repeat harmless.
    pub tools: Vec<(String, bool)>,
    /// The request id got `input_required`.
    pub input_required: bool,
    /// `server/discover` result: the `supportedVersions` it advertised.
    pub advertised: Option<Vec<String>>,
}

/// How the exchange was set up: everything decided before the response.
#[derive(Debug, Clone)]
pub(crate) struct Setup {
    /// Position in the capture, or a live counter.
    pub index: u64,
    /// The version whose rules apply.
    pub version: ProtocolVersion,
    /// Why that version.
    pub version_source: VersionSource,
    /// Repeating the request is harmless.
    pub safe_to_repeat: bool,
    /// A request with a token succeeded earlier in the session (a later 401 `invalid_token`
    /// is then an expiry).
    pub authorized_before: bool,
    /// Limits.
    pub limits: Limits,
    /// This server's earlier errors in the session came as JSON-RPC (evidence for
    /// [`crate::origin`]).
    pub server_errors_jsonrpc: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Media {
    Json,
    Sse,
    Other,
}

#[derive(Debug)]
enum Body {
    AwaitHead,
    /// JSON, or a body kept only for an error code: buffered up to `cap`.
    Buffer {
        buf: Vec<u8>,
        cap: u64,
        over: bool,
    },
    Stream(Box<Stream>),
}

/// The body buffer (JSON) or stream state (SSE) of a finished exchange, kept by its session
/// for the next exchange: allocating them anew cost a tenth of judging a small exchange.
/// A clone starts empty: the spare is a cache, not state.
#[derive(Debug, Default)]
pub(crate) struct Spare {
    buf: Vec<u8>,
    stream: Option<Box<Stream>>,
}

/// Largest buffer kept as a spare: a session that once read a large body does not hold on to
/// its memory.
const SPARE_MAX_BYTES: usize = 64 * 1024;

impl Clone for Spare {
    fn clone(&self) -> Self {
        Spare::default()
    }
}

impl Spare {
    /// Keeps a judged body's buffers for reuse, when they are small.
    fn keep(&mut self, body: Body) {
        match body {
            Body::Buffer { mut buf, .. } if buf.capacity() <= SPARE_MAX_BYTES => {
                buf.clear();
                self.buf = buf;
            }
            Body::Stream(stream) if stream.framer.capacity() <= SPARE_MAX_BYTES => {
                self.stream = Some(stream);
            }
            _ => {}
        }
    }
}

/// One exchange being judged: begun by [`Session::begin`](crate::Session::begin) (which applies
/// the request rules), fed with [`on_head`](Self::on_head) and [`feed`](Self::feed), and ended by
/// [`Session::finish`](crate::Session::finish), which gives the [`Verdict`].
///
/// # Misuse
///
/// The calls have one order: `on_head` once, then `feed` any number of times, then one finish.
/// Breaking it is a bug in the caller, not bad input, so debug builds panic with a message naming
/// the call (`feed` before `on_head`, a second `on_head`, a second finish). Release builds do not
/// check: body bytes before the head are dropped, and a second finish judges an exchange with no
/// response (`CONNECTION_FAILED`).
///
/// ```compile_fail
/// // There is no way to judge an exchange without the request rules: no public constructor.
/// let exchange = mcp_verdict::Exchange::new(
///     mcp_verdict::Request::new("POST", mcp_verdict::Headers::new(), b"{}"),
///     Default::default(),
/// );
/// ```
#[derive(Debug)]
#[must_use = "an exchange gives its verdict only when finished by Session::finish"]
pub struct Exchange {
    req: Request,
    kind: ExchangeKind,
    setup: Setup,
    findings: Findings,
    head: Option<Head>,
    body: Body,
    body_bytes: u64,
    limit_hit: Option<LimitKind>,
    /// A verdict was given: the exchange is spent.
    finished: bool,
    /// Buffers lent by the session, taken back when it finishes.
    pub(crate) spare: Spare,
    /// What the finished exchange taught the session, taken by it; `None` for most exchanges,
    /// which teach nothing (nothing to move or drop then).
    pub(crate) learned: Option<Box<Learned>>,
    /// Server requests its verdict does not list (past `max_server_requests`).
    pub(crate) server_requests_unlisted: u64,
    /// From sending to the response head, and the request's own timeout, in milliseconds: the
    /// adapter's times, evidence for [`crate::origin`].
    pub(crate) head_ms: Option<f64>,
    pub(crate) timeout_ms: Option<f64>,
    /// When the body's bytes arrived, where an adapter or capture said.
    arrivals: Arrivals,
}

#[derive(Debug)]
struct Head {
    status: u16,
    content_type: Option<Cow<'static, str>>,
    media: Media,
    retry_after_ms: Option<u64>,
    /// A redirect's target (secrets in it redacted), for the reason: redirects are answers.
    location: Option<String>,
    /// What the headers of an error status say about intermediaries (`None` for a 2xx).
    hints: Option<Box<crate::origin::Hints>>,
    /// A 401/403's challenges (boxed: most heads have none).
    auth: Option<Box<crate::auth::AuthHead>>,
    /// `X-Accel-Buffering: no` was sent (nginx then does not buffer the stream).
    accel_off: bool,
}

/// What the terminal response said.
#[derive(Debug, Clone, Default)]
struct Terminal {
    outcome: Option<Outcome>,
    error_code: Option<i64>,
    error_message: Option<String>,
    /// A RateLimited error's `data.retryAfterMs`.
    error_retry_after_ms: Option<u64>,
    result_type: Option<String>,
    /// What the result said of a task (a handle, a `tasks/get`, a `tasks/result`).
    task: Option<TaskReport>,
    /// Boxed when something was learned: most answers teach nothing.
    learned: Option<Box<Learned>>,
}

impl Terminal {
    /// Hands what the terminal response said to the verdict (and its delay to `delays`), and
    /// what it taught to `learned` (the exchange's): taken where it lies, since moving a
    /// terminal out cost a copy of it.
    fn hand_over(
        &mut self,
        v: &mut Verdict,
        delays: &mut Delays,
        learned: &mut Option<Box<Learned>>,
    ) {
        v.error_code = self.error_code;
        v.error_message = self.error_message.take();
        delays.error_retry_ms = self.error_retry_after_ms;
        v.result_type = self.result_type.take();
        if let Some(task) = self.task.take() {
            v.task_status = task.status;
            v.task = Some(task);
        }
        if self.learned.is_some() {
            *learned = self.learned.take();
        }
    }
}

/// The delays the body asked for, for the retry advice (the head's `Retry-After` is read
/// with the head).
#[derive(Debug, Clone, Copy, Default)]
struct Delays {
    /// The SSE `retry` field (2025-x only).
    sse_retry_ms: Option<u64>,
    /// A RateLimited error's `data.retryAfterMs`: it wins over `Retry-After` (the
    /// rate-limiting SEP: both sent, the client uses this one).
    error_retry_ms: Option<u64>,
}

/// An SSE body: the framer and what the events told so far.
#[derive(Debug)]
struct Stream {
    framer: SseFramer,
    track: Track,
}

/// SSE bookkeeping, updated by the sink the framer calls.
#[derive(Debug, Default)]
struct Track {
    event_count: u64,
    terminal: Option<Terminal>,
    parse_failed: bool,
    foreign_seen: bool,
    retry_ms: Option<u64>,
    last_progress: Option<f64>,
    max_events: u64,
    too_many: bool,
    /// The request's progress token as JSON text, for a cheap comparison.
    token_text: Option<String>,
    /// A standalone `GET` stream: no response of its own is awaited.
    listen: Option<ExchangeKind>,
    /// Where the events with data lie and what they were, for `sse.buffered`.
    span: EventSpan,
    /// Requests the server sent on the stream: the last `max_server_requests`.
    server_requests: VecDeque<ServerRequest>,
    max_server_requests: usize,
    /// Server requests no longer listed (the oldest go first).
    unlisted: u64,
    /// The task of the latest task status notification (a `tasks/get` stream may carry them).
    task_note: Option<TaskReport>,
}

impl Track {
    fn new(limits: &Limits, token_text: Option<String>, listen: Option<ExchangeKind>) -> Self {
        let mut track = Track::default();
        track.reset(limits, token_text, listen);
        track
    }

    /// Makes this track new, keeping its vector's memory: the one list of a new track's
    /// fields.
    fn reset(&mut self, limits: &Limits, token_text: Option<String>, listen: Option<ExchangeKind>) {
        self.event_count = 0;
        self.terminal = None;
        self.task_note = None;
        self.parse_failed = false;
        self.foreign_seen = false;
        self.retry_ms = None;
        self.last_progress = None;
        self.max_events = limits.max_events;
        self.too_many = false;
        self.token_text = token_text;
        self.listen = listen;
        self.span = EventSpan::default();
        // Most streams list none: nothing to clear then.
        if !self.server_requests.is_empty() {
            self.server_requests.clear();
        }
        self.max_server_requests = limits.max_server_requests;
        self.unlisted = 0;
    }

    /// Lists a server request, the oldest one giving way past `max_server_requests`.
    fn list(&mut self, request: ServerRequest) {
        if self.server_requests.len() >= self.max_server_requests {
            self.unlisted += 1;
            if self.server_requests.pop_front().is_none() {
                return; // none listed at all
            }
        }
        self.server_requests.push_back(request);
    }
}

/// The media type a `Content-Type` value names, in lower case; the two MCP answers with as
/// fixed text. Written as most servers write it (one of the two, no parameters), the value is
/// taken as it is, without a parse.
fn content_type(value: &str) -> Cow<'static, str> {
    const FIXED: [&str; 2] = [wire::JSON, wire::EVENT_STREAM];
    if let Some(m) = FIXED.into_iter().find(|m| *m == value) {
        return Cow::Borrowed(m);
    }
    let media_type = wire::media_type(value);
    FIXED
        .into_iter()
        .find(|m| wire::eq_ignoring_case(m.as_bytes(), media_type.as_bytes()))
        .map_or_else(
            || Cow::Owned(media_type.to_ascii_lowercase()),
            Cow::Borrowed,
        )
}

/// Largest error body kept when the status already decided the outcome.
const ERROR_BODY_CAP: u64 = 1 << 20;

/// Where a JSON body's findings are: the body as a whole.
const BODY_START: Option<Location> = Some(Location {
    offset: 0,
    event: None,
});

impl Exchange {
    /// Starts judging `req` under `setup`, with the request-side findings already made. Only
    /// [`Session::begin`](crate::Session::begin) calls this, so the request rules always apply.
    /// `kind` is `ExchangeKind::of(&req)`, which the caller has read already (reading it here
    /// made the request be copied twice).
    pub(crate) fn with_findings(
        req: Request,
        kind: ExchangeKind,
        setup: Setup,
        findings: Findings,
        spare: Spare,
    ) -> Self {
        Exchange {
            kind,
            req,
            setup,
            findings,
            head: None,
            body: Body::AwaitHead,
            body_bytes: 0,
            limit_hit: None,
            finished: false,
            spare,
            learned: None,
            server_requests_unlisted: 0,
            head_ms: None,
            timeout_ms: None,
            arrivals: Arrivals::default(),
        }
    }

    /// Checks the message the client sent (a request, notification or response, or a batch)
    /// against the revision's schema ([`crate::shapes`]). The request facts keep only what
    /// the other checks read, so the caller that holds the message passes it here.
    pub fn check_request_shape(&mut self, message: &Value) {
        for (rule, detail) in crate::shapes::problems(self.setup.version, message, None) {
            self.findings.add(rule, format!("request: {detail}"), None);
        }
    }

    /// [`check_request_shape`](Self::check_request_shape) of the request's text as sent
    /// (read without building a `Value` where it can be). Text that is not JSON has no shape.
    pub(crate) fn check_request_text(&mut self, text: &str) {
        // The commonest request, told as it was read (no second reading of its text).
        if let Some(found) =
            crate::shapes::plain_call_problems(self.setup.version, self.req.plain_call)
        {
            for &(rule, detail) in found {
                self.findings.add(rule, format!("request: {detail}"), None);
            }
            return;
        }
        for (rule, detail) in crate::shapes::problems_in(text, self.setup.version, None) {
            self.findings.add(rule, format!("request: {detail}"), None);
        }
    }

    /// The request, once the exchange is judged.
    pub(crate) fn into_request(self) -> Request {
        self.req
    }

    /// The request, once the exchange is judged, leaving an empty one (the exchange is done
    /// with; its box may be reused).
    pub(crate) fn take_request(&mut self) -> Request {
        let empty = Request::new(&self.req.http_method, Headers::new(), b"");
        std::mem::replace(&mut self.req, empty)
    }

    /// The request being judged.
    pub fn request(&self) -> &Request {
        &self.req
    }

    /// What kind of entry this is.
    pub fn kind(&self) -> ExchangeKind {
        self.kind
    }

    /// The protocol version applied.
    pub fn version(&self) -> ProtocolVersion {
        self.setup.version
    }

    /// Feeds the response head. Decides how the body will be read.
    pub fn on_head(&mut self, head: ResponseHead) {
        debug_assert!(
            self.head.is_none() && !self.finished,
            "Exchange::on_head called twice, or after the exchange was finished"
        );
        let content_type = head.headers.known(Known::ContentType).map(content_type);
        let media = match content_type.as_deref() {
            Some("application/json") => Media::Json,
            Some(t) if t.ends_with("+json") => Media::Json,
            Some("text/event-stream") => Media::Sse,
            _ => Media::Other,
        };
        let retry_after_ms = head
            .headers
            .known(Known::RetryAfter)
            .and_then(|v| retry::parse_retry_after(v, head.headers.known(Known::Date)));
        if self.setup.version.is_stateless() && head.headers.session_id().is_some() {
            self.findings.add(
                Rule::HttpSessionIdOnStateless,
                "response carries Mcp-Session-Id under 2026-07-28",
                None,
            );
        }
        let ok = (200..300).contains(&head.status);
        let listen =
            (self.kind.is_session_entry() && !self.req.expects_response()).then_some(self.kind);
        self.body =
            if ok && media == Media::Sse && (self.req.expects_response() || listen.is_some()) {
                let max_event_bytes = self.setup.limits.max_event_bytes;
                let limits = &self.setup.limits;
                let token_text = self.req.progress_token().as_ref().map(Value::to_string);
                Body::Stream(match self.spare.stream.take() {
                    // Reset field by field: a whole new state moved in costs a copy of it.
                    Some(mut stream) => {
                        stream.framer.reset(max_event_bytes);
                        stream.track.reset(limits, token_text, listen);
                        stream
                    }
                    None => Box::new(Stream {
                        framer: SseFramer::new(max_event_bytes),
                        track: Track::new(limits, token_text, listen),
                    }),
                })
            } else {
                let cap = if ok && self.req.expects_response() {
                    self.setup.limits.max_body_bytes
                } else {
                    ERROR_BODY_CAP.min(self.setup.limits.max_body_bytes)
                };
                Body::Buffer {
                    buf: std::mem::take(&mut self.spare.buf),
                    cap,
                    over: false,
                }
            };
        self.head = Some(Head {
            status: head.status,
            content_type,
            media,
            retry_after_ms,
            location: (300..400)
                .contains(&head.status)
                .then(|| head.headers.known(Known::Location).map(crate::redact::url))
                .flatten(),
            hints: (!ok).then(|| Box::new(crate::origin::Hints::of(&head.headers))),
            // Challenges only matter on a refusal: a 2xx does not look.
            auth: (!ok)
                .then(|| crate::auth::AuthHead::of(head.status, &head.headers).map(Box::new))
                .flatten(),
            accel_off: head
                .headers
                .known(Known::XAccelBuffering)
                .is_some_and(|v| v.trim().eq_ignore_ascii_case("no")),
        });
    }

    /// Feeds body bytes. Any chunking gives the same verdict.
    pub fn feed(&mut self, chunk: &[u8]) {
        self.feed_with(chunk, &mut ());
    }

    /// Feeds body bytes that arrived between `from_ms` and `to_ms` after the request was sent
    /// (equal, live). Only a stream's times are kept (for `sse.buffered`); the verdict depends
    /// on when bytes arrived, not on how they were cut.
    pub fn feed_at(&mut self, chunk: &[u8], from_ms: u64, to_ms: u64, observer: &mut dyn Observer) {
        self.feed_with(chunk, observer);
        if matches!(self.body, Body::Stream(_)) && !chunk.is_empty() {
            self.arrivals
                .note(self.body_bytes, from_ms, to_ms.max(from_ms));
        }
    }

    /// Says when the body arrived, all at once (a capture's recorded marks, read after the
    /// body): replaces what [`Exchange::feed_at`] noted.
    pub fn set_arrivals(&mut self, arrivals: Arrivals) {
        self.arrivals = arrivals;
    }

    /// When the body's bytes arrived, as far as told.
    pub fn arrivals(&self) -> &Arrivals {
        &self.arrivals
    }

    /// Feeds body bytes, telling `observer` about each event and message as it is framed.
    pub fn feed_with(&mut self, chunk: &[u8], observer: &mut dyn Observer) {
        debug_assert!(
            !self.finished,
            "Exchange::feed called after the exchange was finished"
        );
        debug_assert!(
            !matches!(self.body, Body::AwaitHead) || chunk.is_empty(),
            "Exchange::feed called before Exchange::on_head: body bytes need the response head"
        );
        self.body_bytes += chunk.len() as u64;
        match &mut self.body {
            Body::AwaitHead => {}
            Body::Buffer { buf, cap, over } => {
                if *over {
                    return;
                }
                if buf.len() as u64 + chunk.len() as u64 > *cap {
                    *over = true;
                    buf.clear();
                    buf.shrink_to_fit();
                    return;
                }
                buf.extend_from_slice(chunk);
            }
            Body::Stream(stream) => {
                if self.limit_hit.is_some() {
                    return;
                }
                let Stream { framer, track } = &mut **stream;
                let mut sink = StreamSink {
                    stream: track,
                    req: &self.req,
                    version: self.setup.version,
                    findings: &mut self.findings,
                    observer,
                };
                if framer.feed(chunk, &mut sink).is_err() {
                    self.limit_hit = Some(LimitKind::EventBytes);
                } else if sink.stream.too_many {
                    self.limit_hit = Some(LimitKind::Events);
                }
            }
        }
    }

    /// How many server requests the stream has framed so far (listed or not), and the listed
    /// ones, oldest first: a live adapter tells its session about those it has not told yet,
    /// without watching every message go by.
    pub(crate) fn server_requests_framed(&self) -> (u64, Option<&VecDeque<ServerRequest>>) {
        match &self.body {
            Body::Stream(s) => (
                s.track.unlisted + s.track.server_requests.len() as u64,
                Some(&s.track.server_requests),
            ),
            _ => (0, None),
        }
    }

    /// The answer is known: a live reader may stop reading (a proxy keeps reading, to report
    /// anything that trails the final response).
    pub fn is_settled(&self) -> bool {
        match &self.body {
            Body::Stream(s) => s.track.terminal.is_some() || self.limit_hit.is_some(),
            // Past its cap a buffered body is no longer read: the verdict cannot change, so a
            // live reader stops at once instead of reading an endless body to its deadline.
            Body::Buffer { over, .. } => *over,
            Body::AwaitHead => false,
        }
    }

    /// Ends the exchange and gives the verdict (`end` says how the body ended), also reporting
    /// a JSON body's message to `observer`; what the session learned is left in `learned`.
    ///
    /// The verdict is judged into `v`, made by [`Exchange::base_verdict`] where the caller
    /// returns it: a 500-byte verdict returned from here cost a copy of it at each level.
    pub(crate) fn finish_into(&mut self, end: End, observer: &mut dyn Observer, v: &mut Verdict) {
        debug_assert!(
            !self.finished,
            "the exchange was finished twice: it has given its verdict already"
        );
        self.finished = true;
        // The body's delays, for the advice.
        let mut delays = Delays::default();
        let head = self.head.take();
        let mut reach = crate::origin::Reach::Unknown;
        let outcome = match &head {
            None if end == End::Timeout => Outcome::TimedOut,
            None if end == End::Cancelled => Outcome::Cancelled,
            None => Outcome::ConnectionFailed,
            Some(h) => {
                v.status = Some(h.status);
                let mut body = std::mem::replace(&mut self.body, Body::AwaitHead);
                let outcome = self.judge_body(h, &mut body, end, observer, v, &mut delays);
                reach = self.judge_origin(h, &body, v);
                self.spare.keep(body);
                outcome
            }
        };
        v.outcome = outcome;
        v.layer = outcome.layer();
        v.complete = outcome.is_complete();
        v.limit = self.limit_hit;
        // The auth layer: a status the auth check refused (see `auth`).
        let auth = head
            .as_ref()
            .and_then(|h| h.auth.as_deref())
            .filter(|a| outcome == Outcome::HttpError && a.is_auth());
        if let Some(a) = auth {
            v.layer = Layer::Auth;
            a.check(self.setup.authorized_before, &mut self.findings);
        }
        v.retry = retry::advise(&RetryFacts {
            outcome,
            status: v.status,
            error_code: v.error_code,
            safe_to_repeat: self.setup.safe_to_repeat,
            resumable: v.resumable,
            had_session: self.req.session_id().is_some(),
            version: self.setup.version,
            retry_after_ms: delays
                .error_retry_ms
                .or(head.as_ref().and_then(|h| h.retry_after_ms)),
            sse_retry_ms: delays.sse_retry_ms,
            reach,
            auth_refused: auth.is_some(),
            poll_interval_ms: v.task.as_ref().and_then(|t| t.poll_interval_ms),
        });
        if let Some(url) = auth.and_then(|a| a.resource_metadata.as_deref()) {
            let url = crate::redact::url(url);
            v.retry.reason = format!("{}; resource metadata: {url}", v.retry.reason).into();
        }
        if let Some(location) = head.as_ref().and_then(|h| h.location.as_deref()) {
            v.retry.reason = format!("{}; Location: {location}", v.retry.reason).into();
        }
        v.content_type = head.and_then(|h| h.content_type);
        v.violations = std::mem::take(&mut self.findings).into_vec();
    }

    /// What the session learns from this exchange, taken; `None` when nothing was learned
    /// (most exchanges), so nothing is moved or dropped for them.
    pub(crate) fn take_learned(&mut self) -> Option<Box<Learned>> {
        self.learned.take()
    }

    /// The verdict's facts known before the response: what [`Exchange::finish_into`] judges
    /// into.
    #[inline(always)]
    pub(crate) fn base_verdict(&self, end: End) -> Verdict {
        Verdict {
            index: self.setup.index,
            http_method: Some(self.req.http_method.clone()),
            kind: Some(self.kind),
            batch_position: None,
            method: self.req.method.clone(),
            id: self.req.id.clone(),
            tool: self.req.tool_name().cloned(),
            protocol_version: self.setup.version,
            protocol_version_source: self.setup.version_source,
            outcome: Outcome::Success,
            layer: Outcome::Success.layer(),
            complete: false,
            status: None,
            content_type: None,
            error_code: None,
            error_message: None,
            result_type: None,
            event_count: None,
            last_event_id: None,
            resumable: false,
            end,
            // Decided in `finish_with`, once the outcome is known.
            retry: RetryAdvice {
                advice: Advice::None,
                after_ms: None,
                reason: "".into(),
            },
            violations: Vec::new(),
            unterminated: None,
            limit: None,
            server_requests: Vec::new(),
            status_origin: None,
            origin_reason: None,
            client_error: None,
            task_status: None,
            task: None,
        }
    }

    /// Which box made the status ([`crate::origin`]), into `v`; whether the request reached
    /// the server, for the advice.
    fn judge_origin(&self, head: &Head, body: &Body, v: &mut Verdict) -> crate::origin::Reach {
        let no_hints = crate::origin::Hints::default();
        let kept: &[u8] = match body {
            Body::Buffer {
                buf, over: false, ..
            } => buf,
            _ => &[],
        };
        let decided = crate::origin::decide(&crate::origin::Facts {
            status: head.status,
            hints: head.hints.as_deref().unwrap_or(&no_hints),
            body: kept,
            jsonrpc_body: v.error_code.is_some(),
            content_type: head.content_type.as_deref(),
            server_errors_jsonrpc: self.setup.server_errors_jsonrpc,
            head_ms: self.head_ms,
            timeout_ms: self.timeout_ms,
        });
        v.status_origin = Some(decided.origin);
        v.origin_reason = Some(decided.reason);
        decided.reach
    }

    /// What the body came to: its outcome, with what the terminal response said and the
    /// stream's facts written into `v` where they lie (and the delays it asked for into
    /// `delays`).
    fn judge_body(
        &mut self,
        head: &Head,
        body: &mut Body,
        end: End,
        observer: &mut dyn Observer,
        v: &mut Verdict,
        delays: &mut Delays,
    ) -> Outcome {
        let status = head.status;
        let own_stream = self.kind.is_session_entry() && !self.req.expects_response();
        if own_stream && status == 405 {
            return Outcome::MethodNotAllowed;
        }
        // Transport first: the status decides, whatever the body looks like.
        if !(200..300).contains(&status) {
            if let Body::Buffer { buf, .. } = &*body
                && let Some(reply) = jsonrpc::error_of(&String::from_utf8_lossy(buf))
            {
                let version = self.setup.version;
                error_codes::check_code(reply.code, version, &mut self.findings, BODY_START);
                v.error_code = Some(reply.code);
                v.error_message = Some(reply.message);
                delays.error_retry_ms = reply.retry_after_ms;
            }
            return Outcome::HttpError;
        }
        if self.kind == ExchangeKind::Terminate {
            return Outcome::SessionTerminated;
        }
        if own_stream {
            return self.judge_listen(head, body, v);
        }
        if !self.req.expects_response() {
            // Notification or response POST: 202 and no body.
            if self.body_bytes > 0 {
                self.findings.add(
                    Rule::HttpAcceptedWithBody,
                    format!("{status} with a {}-byte body", self.body_bytes),
                    None,
                );
            }
            return Outcome::NotificationAccepted;
        }
        if status == 202 || status == 204 {
            self.findings.add(
                Rule::HttpAcceptedForRequest,
                format!("request answered with {status}"),
                None,
            );
            return Outcome::UnexpectedAccepted;
        }
        match body {
            Body::Stream(stream) => {
                let outcome = self.judge_stream(stream, end, v, &mut delays.sse_retry_ms);
                self.check_buffered(&stream.track.span, head);
                if let Some(terminal) = &mut stream.track.terminal {
                    terminal.hand_over(v, delays, &mut self.learned);
                }
                // No task in the final response (or none came): the last status notification.
                if v.task.is_none()
                    && let Some(task) = stream.track.task_note.take()
                {
                    v.task_status = task.status;
                    v.task = Some(task);
                }
                outcome
            }
            Body::Buffer { buf, over, .. } if head.media == Media::Json => {
                if *over {
                    self.limit_hit = Some(LimitKind::BodyBytes);
                    return Outcome::LimitExceeded;
                }
                let mut terminal = Terminal::default();
                let outcome = self.judge_json(buf, end, &mut terminal, observer);
                terminal.hand_over(v, delays, &mut self.learned);
                outcome
            }
            _ => {
                self.findings.add(
                    Rule::HttpContentType,
                    format!(
                        "{status} with Content-Type {}",
                        head.content_type.as_deref().unwrap_or("absent")
                    ),
                    None,
                );
                Outcome::UnexpectedContentType
            }
        }
    }
}

impl Exchange {
    /// A standalone or unlinked resumed `GET` stream: it may carry anything but (when listening)
    /// a response; how it ended is no failure of any request.
    fn judge_listen(&mut self, head: &Head, body: &mut Body, v: &mut Verdict) -> Outcome {
        let Body::Stream(stream) = body else {
            self.findings.add(
                Rule::HttpContentType,
                format!(
                    "{} GET answered with Content-Type {}",
                    head.status,
                    head.content_type.as_deref().unwrap_or("absent")
                ),
                None,
            );
            return Outcome::UnexpectedContentType;
        };
        v.event_count = Some(stream.track.event_count);
        v.server_requests = std::mem::take(&mut stream.track.server_requests).into();
        self.server_requests_unlisted = stream.track.unlisted;
        if self.setup.version.has_resumption()
            && let Some(last) = stream.framer.last_event_id()
        {
            v.last_event_id = Some(String::from_utf8_lossy(last).into_owned());
            v.resumable = true;
        }
        if self.limit_hit.is_some() {
            Outcome::LimitExceeded
        } else {
            Outcome::Listening
        }
    }

    fn judge_json(
        &mut self,
        buf: &[u8],
        end: End,
        terminal: &mut Terminal,
        observer: &mut dyn Observer,
    ) -> Outcome {
        // The fast validator first; std's only to word the error.
        let text = match simdutf8::basic::from_utf8(buf) {
            Ok(t) => t,
            Err(_) => {
                let e = std::str::from_utf8(buf).err();
                let detail = e.map(|e| e.to_string()).unwrap_or_default();
                return self.malformed(end, format!("body is not UTF-8: {detail}"));
            }
        };
        // One message object, its result's members read by the same pass; else the whole
        // payload parse (which scans again, and words any error).
        let mut scanned = None;
        let mut fast = Envelope::empty(text);
        let env = if jsonrpc::scan_single_reading_result(text, &mut fast, &mut scanned) {
            fast
        } else {
            scanned = None;
            let payload = match jsonrpc::parse_payload(text) {
                Ok(p) => p,
                Err(m) => return self.malformed(end, m.to_string()),
            };
            match payload {
                Payload::Single(env) => env,
                Payload::NotAMessage => {
                    self.findings.add(
                        Rule::JsonrpcResultAndError,
                        "body is JSON but not a JSON-RPC object",
                        BODY_START,
                    );
                    return Outcome::InvalidEnvelope;
                }
                Payload::Batch(items) => match self.pick_from_batch(items, observer) {
                    Ok(env) => env,
                    Err(outcome) => return outcome,
                },
            }
        };
        let mine = env.id_matches(self.req.id.as_ref().unwrap_or(&Value::Null));
        report(observer, &env, mine, None);
        if let Err(outcome) = self.check_reply_is_ours(&env, mine) {
            return outcome;
        }
        let version = self.setup.version;
        judge_terminal(
            &env,
            scanned,
            &self.req,
            version,
            &mut self.findings,
            BODY_START,
            terminal,
        )
    }

    /// A JSON array body (2025-03-26 batches only): every message goes to `observer`, and the
    /// first response with our id is the answer; `Err` with the outcome when there is none.
    fn pick_from_batch<'t>(
        &mut self,
        items: Vec<Result<Envelope<'t>, jsonrpc::Malformed>>,
        observer: &mut dyn Observer,
    ) -> Result<Envelope<'t>, Outcome> {
        let version = self.setup.version;
        if !version.allows_batches() {
            self.findings.add(
                Rule::JsonrpcBatchResponse,
                format!("a JSON array of {} under {version}", items.len()),
                BODY_START,
            );
            return Err(Outcome::InvalidEnvelope);
        }
        let expected = self.req.id.clone().unwrap_or(Value::Null);
        let mut found = None;
        for env in items.into_iter().flatten() {
            let mine = env.id_matches(&expected);
            report(observer, &env, mine, None);
            if mine && found.is_none() {
                found = Some(env);
            }
        }
        found.ok_or_else(|| {
            self.findings.add(
                Rule::JsonrpcIdMismatch,
                format!("no response with id {expected} in the batch"),
                BODY_START,
            );
            Outcome::InvalidEnvelope
        })
    }

    /// The reply must be a response, and ours (`mine`: its id is the request's); an id-less
    /// error still answers us. `Err` with the outcome when it is not.
    fn check_reply_is_ours(&mut self, env: &Envelope<'_>, mine: bool) -> Result<(), Outcome> {
        if env.kind() != Kind::Response {
            self.findings.add(
                Rule::JsonrpcResultAndError,
                format!(
                    "the reply is a {}, not a response",
                    if env.kind() == Kind::Request {
                        "request"
                    } else {
                        "notification"
                    }
                ),
                BODY_START,
            );
            return Err(Outcome::InvalidEnvelope);
        }
        if mine {
            return Ok(());
        }
        let expected = self.req.id.as_ref().unwrap_or(&Value::Null);
        self.findings.add(
            Rule::JsonrpcIdMismatch,
            format!(
                "response id is {}, request id is {expected}",
                env.id.map(|i| i.get()).unwrap_or("absent")
            ),
            BODY_START,
        );
        // An id-less error still answers us (the server could not read the id); any other
        // response is someone else's, and its result is not ours to report.
        let id_less_error = env.error.is_some() && env.id.is_none_or(|i| i.get() == "null");
        if id_less_error {
            return Ok(());
        }
        if let EnvelopeCheck::Invalid(rule, detail) = jsonrpc::check_response(env) {
            self.findings.add(rule, detail, BODY_START);
        }
        Err(Outcome::InvalidEnvelope)
    }

    fn malformed(&mut self, end: End, detail: String) -> Outcome {
        match end {
            // A body cut short is a transfer problem, not bad JSON.
            End::Reset => Outcome::StreamAborted,
            End::Timeout => Outcome::TimedOut,
            End::Cancelled => Outcome::Cancelled,
            End::Open => Outcome::StreamOpen,
            End::NotCaptured => Outcome::NotCaptured,
            End::Eof => {
                self.findings.add(
                    Rule::JsonrpcMalformed,
                    detail,
                    Some(Location {
                        offset: 0,
                        event: None,
                    }),
                );
                Outcome::MalformedJson
            }
        }
    }
}

/// Judges a response that is ours: envelope, then result.
fn judge_terminal(
    env: &Envelope<'_>,
    scanned: ScannedMembers<'_>,
    req: &Request,
    version: ProtocolVersion,
    findings: &mut Findings,
    at: Option<Location>,
    terminal: &mut Terminal,
) -> Outcome {
    let method = req.method.as_deref();
    let outcome = match jsonrpc::check_response(env) {
        EnvelopeCheck::Invalid(rule, detail) => {
            findings.add(rule, detail, at);
            Outcome::InvalidEnvelope
        }
        EnvelopeCheck::Error(reply) => {
            error_codes::check_code(reply.code, version, findings, at);
            terminal.error_code = Some(reply.code);
            terminal.error_message = Some(reply.message);
            terminal.error_retry_after_ms = reply.retry_after_ms;
            check_shape(env, method, version, findings, at);
            Outcome::JsonrpcError
        }
        EnvelopeCheck::Result(result) => {
            let members = scanned.unwrap_or_else(|| ResultMembers::read(result.get()));
            let j = tool_result::judge_members(method, version, result.get(), members.as_ref());
            // The result layer's own findings already say what is wrong with its shape; a
            // created task answers a task-augmented request, not the method's own result.
            // A plain text tool result is known to conform without the full check.
            let plain = method == Some("tools/call")
                && members
                    .as_ref()
                    .is_some_and(|m| crate::shapes::tool_result_conforms(version, env, m));
            if j.violations.is_empty() && j.outcome != Outcome::Deferred && !plain {
                check_shape(env, method, version, findings, at);
            }
            for (rule, detail) in j.violations {
                findings.add(rule, detail, at);
            }
            terminal.result_type = j.result_type;
            terminal.task = crate::task::of_result(
                method,
                j.outcome == Outcome::Deferred,
                version,
                result.get(),
            );
            if j.outcome == Outcome::InputRequired {
                terminal.learned.get_or_insert_default().input_required = true;
            }
            learn(method, result.get(), &mut terminal.learned);
            j.outcome
        }
    };
    terminal.outcome = Some(outcome);
    outcome
}

/// Checks a message against the revision's schema ([`crate::shapes`]): violations only, the
/// outcome stays as the layers decided it (docs/conformance.md).
pub(super) fn check_shape(
    env: &Envelope<'_>,
    request_method: Option<&str>,
    version: ProtocolVersion,
    findings: &mut Findings,
    at: Option<Location>,
) {
    for (rule, detail) in crate::shapes::problems_in(env.raw, version, request_method) {
        findings.add(rule, detail, at);
    }
}

fn report(observer: &mut dyn Observer, env: &Envelope<'_>, terminal: bool, event: Option<u64>) {
    observer.on_message(&Message {
        raw: env.raw,
        kind: env.kind(),
        method: env.method,
        terminal,
        event,
    });
}
