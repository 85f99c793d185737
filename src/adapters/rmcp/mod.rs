//! A transport for the official Rust SDK (`rmcp`) that reports a [`Verdict`] for every flight.
//!
//! [`VerdictHttpClient`] implements rmcp's [`StreamableHttpClient`] on top of reqwest, with the
//! same semantics as rmcp's own reqwest client (session ids, `202` → `Accepted`, auth challenges,
//! legacy `server/discover` fallback, SSE resumption), and runs every request through the core:
//! the exact headers and bytes sent become a [`Request`](crate::Request), the head and every body
//! chunk go to an [`Exchange`](crate::Exchange), and rmcp's SSE events come from this crate's
//! framer. An rmcp-based agent gets verdicts by changing only how it builds its transport:
//!
//! ```no_run
//! use mcp_verdict::adapters::rmcp::VerdictHttpClient;
//! use rmcp::ServiceExt;
//! use rmcp::transport::StreamableHttpClientTransport;
//! use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let (http, mut verdicts) = VerdictHttpClient::channel(reqwest::Client::new());
//! let config = StreamableHttpClientTransportConfig::with_uri("http://127.0.0.1:8000/mcp");
//! let transport = StreamableHttpClientTransport::with_client(http, config);
//! let client = ().serve(transport).await?;
//! let tools = client.list_all_tools().await?;
//! while let Ok(verdict) = verdicts.try_recv() {
//!     println!("{} {:?} {}", verdict.outcome, verdict.method, verdict.complete);
//! }
//! # let _ = tools;
//! # Ok(())
//! # }
//! ```
//!
//! A verdict is handed out when its body ends: at EOF, at a deadline, or when rmcp drops the
//! stream (rmcp stops reading shortly after the response; that is judged as an open stream whose
//! answer was complete, `end: open`, or, before the answer, as a cancel). Bodies rmcp does not
//! read (an auth challenge, `202`, a session-expired `404`, a rate limit) are read to their end in
//! a background task, so the error reaches rmcp as soon as it would without this crate.
//!
//! A `GET` that resumes a POST stream (`Last-Event-ID` of an earlier resumable flight) is
//! judged as the answer to that POST; any other `GET` (rmcp's standalone stream: kind `listen`)
//! and the session `DELETE` (kind `terminate`) are judged as themselves, as replay judges them.
//! A listen stream's verdict comes when it ends or rmcp drops it.
//!
//! With [`VerdictHttpClient::with_recording`], every judged exchange is also kept as a capture
//! entry next to its verdict ([`Recording`]): `har::write` makes it a HAR, and
//! [`Recording::calls`] groups it into logical calls exactly as `replay --calls` groups that HAR.

mod errors;
mod record;
mod tee;

pub use record::Recording;

use errors::*;
use tee::*;

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use futures_core::Stream;
use http::header::{ACCEPT, CONTENT_TYPE, WWW_AUTHENTICATE};
use http::{HeaderMap, HeaderName, HeaderValue, StatusCode};
use rmcp::model::ServerJsonRpcMessage;
use rmcp::model::{ClientJsonRpcMessage, JsonRpcMessage};
use rmcp::transport::streamable_http_client::{
    AuthRequiredError, InsufficientScopeError, SseError, StreamableHttpClient, StreamableHttpError,
    StreamableHttpPostResponse, StreamableHttpResponseLimits,
};
use sse_stream::Sse;
use tokio::time::Instant;

use super::body::{
    Deadlines, EntrySink, JudgedBody, SharedDriver, Tap, TapFn, VerdictSink, deliver, finish,
};
use super::client::BodyStream;
use super::lock;
use crate::driver::{Driver, Flight, Sent};
use crate::exchange::ResponseHead;
use crate::limits::Limits;
use crate::redact::Redaction;
use crate::request::Headers;
use crate::verdict::{End, Verdict};

type Error = StreamableHttpError<reqwest::Error>;
type SseBox = Pin<Box<dyn Stream<Item = Result<Sse, SseError>> + Send>>;

use crate::wire::{EVENT_STREAM, JSON, media_type_is};
const SESSION_ID: &str = "mcp-session-id";
const LAST_EVENT_ID: &str = "last-event-id";
/// rmcp keeps at most this much of a `Retry-After` value.
const MAX_RETRY_AFTER_BYTES: usize = 128;
const BODY_READ_FAILURE: &str = "<failed to read response body>";

/// Where verdicts go: a closure, or the sending half of a tokio channel.
pub trait IntoVerdictSink {
    /// The sink, as the adapters take it.
    fn into_verdict_sink(self) -> VerdictSink;
}

impl<F> IntoVerdictSink for F
where
    F: Fn(&Verdict) + Send + Sync + 'static,
{
    fn into_verdict_sink(self) -> VerdictSink {
        Arc::new(self)
    }
}

impl IntoVerdictSink for tokio::sync::mpsc::UnboundedSender<Verdict> {
    fn into_verdict_sink(self) -> VerdictSink {
        Arc::new(move |v: &Verdict| {
            // A dropped receiver means nobody wants verdicts any more: not an error.
            let _ = self.send(v.clone());
        })
    }
}

/// rmcp's default byte limits, so that the verdict and rmcp agree on what is too large.
fn rmcp_limits() -> Limits {
    let rmcp = StreamableHttpResponseLimits::default();
    Limits {
        max_event_bytes: rmcp.max_sse_event_size,
        max_body_bytes: rmcp.max_json_response_size as u64,
        ..Limits::default()
    }
}

/// rmcp's [`StreamableHttpClient`] over reqwest, judging every POST, GET and DELETE. Cheap to
/// clone (rmcp clones it per request); clones share one [`Session`](crate::Session) and one sink.
#[derive(Clone)]
pub struct VerdictHttpClient {
    http: reqwest::Client,
    driver: SharedDriver,
    sink: VerdictSink,
    deadlines: Deadlines,
    /// Where recorded entries go (with [`with_recording`](Self::with_recording)).
    entries: Option<EntrySink>,
    recording: Option<Recording>,
}

impl std::fmt::Debug for VerdictHttpClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VerdictHttpClient")
            .field("deadlines", &self.deadlines)
            .finish_non_exhaustive()
    }
}

impl VerdictHttpClient {
    /// Wraps `http`; every verdict goes to `sink` (a `Fn(&Verdict)` or a tokio
    /// `mpsc::UnboundedSender<Verdict>`). The sink is called on the task that reads the body:
    /// keep it short. A closure needs its argument type written out:
    ///
    /// ```
    /// # use mcp_verdict::{Verdict, adapters::rmcp::VerdictHttpClient};
    /// let http = VerdictHttpClient::new(reqwest::Client::new(), |v: &Verdict| {
    ///     eprintln!("{} {}", v.index, v.outcome);
    /// });
    /// # let _ = http;
    /// ```
    ///
    /// No deadlines by default (rmcp keeps its own request timeouts); limits are rmcp's
    /// defaults (16 MiB per SSE event and per JSON body).
    pub fn new(http: reqwest::Client, sink: impl IntoVerdictSink) -> Self {
        VerdictHttpClient {
            http,
            driver: Arc::new(Mutex::new(Driver::new(rmcp_limits()))),
            sink: sink.into_verdict_sink(),
            deadlines: Deadlines {
                overall: None,
                idle: None,
                progress: None,
                max_total: None,
                grace: Duration::from_millis(100),
            },
            entries: None,
            recording: None,
        }
    }

    /// Wraps `http` and returns the receiving end of an unbounded channel of verdicts.
    pub fn channel(http: reqwest::Client) -> (Self, tokio::sync::mpsc::UnboundedReceiver<Verdict>) {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        (VerdictHttpClient::new(http, tx), rx)
    }

    /// Deadlines for every response body, the standalone `GET` stream's included (a passed
    /// deadline closes the stream: `TIMED_OUT`).
    pub fn with_deadlines(mut self, deadlines: Deadlines) -> Self {
        self.deadlines = deadlines;
        self
    }

    /// Limits for the verdicts, in a fresh session. Set rmcp's `max_sse_event_size` and
    /// `max_json_response_size` to the same values so both sides agree.
    pub fn with_limits(mut self, limits: Limits) -> Self {
        let redaction = lock(&self.driver).redaction_policy().clone();
        self.driver = Arc::new(Mutex::new(Driver::new(limits).redaction(redaction)));
        self
    }

    /// What the recording hides (default: the one policy, on): e.g. a policy that also hides
    /// the custom headers given to rmcp ([`Redaction::with_user_header`]), or
    /// [`Redaction::off`]. Kept by [`with_limits`](Self::with_limits) and
    /// [`with_recording`](Self::with_recording).
    pub fn with_redaction(self, redaction: Redaction) -> Self {
        let mut driver = lock(&self.driver);
        *driver = std::mem::take(&mut *driver).redaction(redaction);
        drop(driver);
        self
    }

    /// Records every judged exchange into `recording` (a capture of the traffic with its
    /// verdicts, and its logical calls: [`Recording::calls`]). Call it after
    /// [`with_limits`](Self::with_limits), which starts a fresh session.
    pub fn with_recording(mut self, recording: &Recording) -> Self {
        let sink = self.sink.clone();
        let r = recording.clone();
        self.sink = Arc::new(move |v: &Verdict| {
            r.judged(v);
            sink(v);
        });
        let r = recording.clone();
        self.entries = Some(Arc::new(move |entry| r.entry(entry)));
        let (limits, redaction) = {
            let d = lock(&self.driver);
            (d.limits(), d.redaction_policy().clone())
        };
        // One byte past `max_body_bytes` still replays as LIMIT_EXCEEDED.
        let driver = Driver::new(limits)
            .recording(limits.max_body_bytes.saturating_add(1))
            .redaction(redaction);
        self.driver = Arc::new(Mutex::new(driver));
        self.recording = Some(recording.clone());
        self
    }

    /// The one exchange path shared by the exchanges of this client (its session: negotiated
    /// version, tool annotations).
    pub fn driver(&self) -> SharedDriver {
        self.driver.clone()
    }

    /// Begins judging `sent` (its body is `body`) on the one exchange path.
    fn begin(&self, sent: &reqwest::Request, body: &[u8]) -> Begun {
        let flight = lock(&self.driver).begin(Sent {
            index: None,
            method: sent.method().as_str(),
            url: sent.url().as_str(),
            headers: headers_of(sent.headers()),
            body,
            started: self
                .entries
                .is_some()
                .then(|| super::client::rfc3339(std::time::SystemTime::now())),
            from_client: true,
        });
        if let Some(r) = &self.recording {
            r.began(flight.index());
        }
        Begun {
            flight: Some(flight),
            driver: self.driver.clone(),
            sink: self.sink.clone(),
            entries: self.entries.clone(),
            started: Instant::now(),
        }
    }

    async fn send(
        &self,
        begun: &mut Begun,
        request: reqwest::Request,
    ) -> Result<(reqwest::Response, Instant), Error> {
        let started = Instant::now();
        let result = self.deadlines.until_head(self.http.execute(request)).await;
        match result {
            Ok(Ok(response)) => Ok((response, started)),
            Ok(Err(e)) => {
                begun.finish(End::Reset);
                Err(StreamableHttpError::Client(e))
            }
            Err(timeout) => {
                begun.finish(End::Timeout);
                Err(StreamableHttpError::Io(std::io::Error::new(
                    std::io::ErrorKind::TimedOut,
                    timeout,
                )))
            }
        }
    }

    /// Feeds the head and wraps the body.
    fn judged(
        &self,
        mut flight: Flight,
        response: reqwest::Response,
        started: Instant,
        tap: Option<TapFn>,
    ) -> JudgedBody<BodyStream> {
        flight.on_head(ResponseHead {
            status: response.status().as_u16(),
            headers: headers_of(response.headers()),
        });
        let stream: BodyStream = Box::pin(response.bytes_stream());
        let mut judged =
            JudgedBody::new(self.driver.clone(), flight, stream, self.deadlines, started)
                .with_sink(self.sink.clone());
        if let Some(entries) = &self.entries {
            judged = judged.with_entries(entries.clone());
        }
        if let Some(tap) = tap {
            judged = judged.with_tap(tap);
        }
        judged
    }

    /// Judges a body rmcp does not read, without holding rmcp up.
    fn finish_later(&self, flight: Flight, response: reqwest::Response, started: Instant) {
        let empty = response.content_length() == Some(0);
        let judged = self.judged(flight, response, started, None);
        match tokio::runtime::Handle::try_current() {
            Ok(rt) if !empty => {
                rt.spawn(judged.verdict());
            }
            // Nothing to read (or no runtime to read it on): the end is known now.
            _ => drop(judged.now_or_cancel()),
        }
    }

    /// Reads a whole body through the core, keeping its first `keep` bytes.
    async fn read_body(
        &self,
        flight: Flight,
        response: reqwest::Response,
        started: Instant,
        keep: usize,
    ) -> Captured {
        let captured = Arc::new(Mutex::new(Captured::default()));
        let c = captured.clone();
        let tap: TapFn = Box::new(move |tap| {
            let mut c = lock(&c);
            match tap {
                Tap::Chunk(bytes) => {
                    let room = keep.saturating_sub(c.bytes.len());
                    if bytes.len() > room {
                        c.over = true;
                    }
                    let n = room.min(bytes.len());
                    c.bytes.extend_from_slice(&bytes[..n]);
                }
                Tap::End(end) => c.end = Some(end),
            }
        });
        // The verdict went to the sink; only the captured body is wanted here.
        let _ = self
            .judged(flight, response, started, Some(tap))
            .verdict()
            .await;
        std::mem::take(&mut *lock(&captured))
    }

    /// An SSE body for rmcp: events from this crate's framer, the verdict when it ends.
    fn sse(
        &self,
        flight: Flight,
        response: reqwest::Response,
        started: Instant,
        max_event_bytes: usize,
    ) -> SseBox {
        let queue = Arc::new(Mutex::new(SseQueue::default()));
        let mut tee = SseTee::new(max_event_bytes, queue.clone());
        let tap: TapFn = Box::new(move |tap| match tap {
            Tap::Chunk(bytes) => tee.feed(bytes),
            Tap::End(end) => lock(&tee.queue).end = Some(end),
        });
        let judged = self.judged(flight, response, started, Some(tap));
        Box::pin(JudgedSse {
            judged: Some(judged),
            queue,
        })
    }

    async fn post(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, Error> {
        let session_was_attached = session_id.is_some();
        let (request, body) =
            self.post_request(&uri, &message, session_id, auth_header, custom_headers)?;
        let mut begun = self.begin(&request, &body);
        let (response, started) = self.send(&mut begun, request).await?;
        let flight = begun.take();
        let reply = PostReply::of(&response, &message, session_was_attached);
        if let Some(answer) = reply.answer_without_body() {
            self.finish_later(flight, response, started);
            return answer;
        }
        let body = Body {
            flight,
            response,
            started,
        };
        if reply.status.is_success() {
            self.success_reply(body, reply, limits).await
        } else {
            self.error_reply(body, reply, &message, limits).await
        }
    }

    /// The POST exactly as rmcp's own reqwest client builds it, and its body.
    fn post_request(
        &self,
        uri: &str,
        message: &ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(reqwest::Request, Vec<u8>), Error> {
        let body = serde_json::to_vec(message)?;
        let mut rb = self
            .http
            .post(uri)
            .header(ACCEPT, [EVENT_STREAM, JSON].join(", "))
            .header(CONTENT_TYPE, JSON);
        if let Some(token) = auth_header {
            rb = rb.bearer_auth(token);
        }
        rb = apply_custom_headers(rb, custom_headers)?;
        if let Some(sid) = &session_id {
            rb = rb.header(SESSION_ID, sid.as_ref());
        }
        let request = rb
            .body(body.clone())
            .build()
            .map_err(StreamableHttpError::Client)?;
        Ok((request, body))
    }

    /// A failed POST: rmcp gets the JSON-RPC error in the body, the legacy `server/discover`
    /// fallback, or an error carrying the status and the start of the body.
    async fn error_reply(
        &self,
        body: Body,
        reply: PostReply,
        message: &ClientJsonRpcMessage,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, Error> {
        let status = reply.status;
        let status_error = http_status_error(status, &reply.headers);
        let legacy = |text: &str| {
            legacy_discover_response(message, reply.session_was_attached, status, text)
        };
        let is_auth_failure = status == StatusCode::UNAUTHORIZED || status == StatusCode::FORBIDDEN;
        let text = if reply.is_json && !is_auth_failure {
            let max = limits.max_json_response_size;
            let read = self.read_all(body, max).await;
            if read.over {
                return Err(status_error
                    .map(StreamableHttpError::from)
                    .unwrap_or(StreamableHttpError::ResponseBodyTooLarge { max_size: max }));
            }
            if read.broke() {
                truncated_read_failure(limits.max_error_response_size)
            } else {
                let full = String::from_utf8_lossy(&read.bytes).into_owned();
                if let Some(error) = parse_json_rpc_error(&full) {
                    if let Some(r) = legacy(&full) {
                        return Ok(r);
                    }
                    return Ok(StreamableHttpPostResponse::Json(
                        error,
                        reply.session_header,
                    ));
                }
                prefix(full, limits.max_error_response_size)
            }
        } else {
            let read = self.read_all(body, limits.max_error_response_size).await;
            if read.broke() && read.bytes.is_empty() {
                truncated_read_failure(limits.max_error_response_size)
            } else {
                String::from_utf8_lossy(&read.bytes).into_owned()
            }
        };
        if let Some(r) = legacy(&text) {
            return Ok(r);
        }
        if let Some(error) = status_error {
            return Err(error.into());
        }
        Err(StreamableHttpError::UnexpectedServerResponse(
            format!("HTTP {status}: {text}").into(),
        ))
    }

    /// A successful POST: SSE events, a parsed JSON body, or `Accepted` for a message that
    /// awaits no response.
    async fn success_reply(
        &self,
        body: Body,
        reply: PostReply,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, Error> {
        let Body {
            flight,
            response,
            started,
        } = body;
        match reply.content_type.as_deref() {
            Some(ct) if media_type_is(ct, EVENT_STREAM) => {
                let events = self.sse(flight, response, started, limits.max_sse_event_size);
                Ok(StreamableHttpPostResponse::Sse(
                    events,
                    reply.session_header,
                ))
            }
            Some(ct) if media_type_is(ct, JSON) => {
                let max = limits.max_json_response_size;
                if reply.content_length.is_some_and(|n| n > max as u64) {
                    self.finish_later(flight, response, started);
                    return Err(StreamableHttpError::ResponseBodyTooLarge { max_size: max });
                }
                let read = self.read_body(flight, response, started, max).await;
                if read.over {
                    return Err(StreamableHttpError::ResponseBodyTooLarge { max_size: max });
                }
                if let Some(e) = read.failure() {
                    return Err(StreamableHttpError::Io(e));
                }
                match serde_json::from_slice::<ServerJsonRpcMessage>(&read.bytes) {
                    Ok(parsed) => Ok(StreamableHttpPostResponse::Json(
                        parsed,
                        reply.session_header,
                    )),
                    Err(_) if reply.awaits_no_response => Ok(StreamableHttpPostResponse::Accepted),
                    Err(e) => Err(StreamableHttpError::UnexpectedServerResponse(
                        format!(
                            "could not parse JSON response as ServerJsonRpcMessage: {e}: {}",
                            preview(&read.bytes)
                        )
                        .into(),
                    )),
                }
            }
            _ if reply.awaits_no_response => {
                self.finish_later(flight, response, started);
                Ok(StreamableHttpPostResponse::Accepted)
            }
            _ => {
                self.finish_later(flight, response, started);
                Err(StreamableHttpError::UnexpectedContentType(
                    reply.content_type,
                ))
            }
        }
    }

    async fn read_all(&self, body: Body, keep: usize) -> Captured {
        self.read_body(body.flight, body.response, body.started, keep)
            .await
    }

    async fn get(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_event_bytes: usize,
    ) -> Result<SseBox, Error> {
        let mut rb = self
            .http
            .get(uri.as_ref())
            .header(ACCEPT, [EVENT_STREAM, JSON].join(", "));
        if let Some(sid) = &session_id {
            rb = rb.header(SESSION_ID, sid.as_ref());
        }
        if let Some(id) = &last_event_id {
            rb = rb.header(LAST_EVENT_ID, id.as_str());
        }
        if let Some(token) = auth_header {
            rb = rb.bearer_auth(token);
        }
        rb = apply_custom_headers(rb, custom_headers)?;
        let request = rb.build().map_err(StreamableHttpError::Client)?;
        // A GET that resumes an earlier POST stream is judged as that POST's answer; any other
        // GET (the standalone listen stream, or a Last-Event-ID that resumes no POST) is judged
        // as itself: the driver decides, as it does for replay.
        let mut begun = self.begin(&request, &[]);
        let (response, started) = self.send(&mut begun, request).await?;
        let flight = begun.take();
        if let Some(error) = get_error(&response) {
            self.finish_later(flight, response, started);
            return Err(error);
        }
        if let Err(e) = response.error_for_status_ref() {
            self.finish_later(flight, response, started);
            return Err(StreamableHttpError::Client(e));
        }
        Ok(self.sse(flight, response, started, max_event_bytes))
    }
}

/// A POST's response whose body has not been read yet.
struct Body {
    flight: Flight,
    response: reqwest::Response,
    started: Instant,
}

/// What the answer to a POST depends on, read from its head.
struct PostReply {
    status: StatusCode,
    headers: HeaderMap,
    content_type: Option<String>,
    is_json: bool,
    content_length: Option<u64>,
    session_header: Option<String>,
    session_was_attached: bool,
    /// A notification or a response: the server owes no JSON-RPC answer.
    awaits_no_response: bool,
}

impl PostReply {
    fn of(
        response: &reqwest::Response,
        message: &ClientJsonRpcMessage,
        session_was_attached: bool,
    ) -> Self {
        let headers = response.headers().clone();
        let content_type = headers
            .get(CONTENT_TYPE)
            .map(|ct| String::from_utf8_lossy(ct.as_bytes()).into_owned());
        let is_json = content_type
            .as_deref()
            .is_some_and(|ct| media_type_is(ct, JSON));
        let session_header = headers
            .get(SESSION_ID)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        PostReply {
            status: response.status(),
            content_length: response.content_length(),
            headers,
            content_type,
            is_json,
            session_header,
            session_was_attached,
            awaits_no_response: matches!(
                message,
                JsonRpcMessage::Notification(_)
                    | JsonRpcMessage::Response(_)
                    | JsonRpcMessage::Error(_)
            ),
        }
    }

    /// The answers rmcp gets without the body being read (an auth challenge, `202`, an expired
    /// session, a rate limit or server error without JSON, an empty success to a notification);
    /// the body is then judged in the background.
    fn answer_without_body(&self) -> Option<Result<StreamableHttpPostResponse, Error>> {
        let status = self.status;
        if let Some(error) = self.challenge() {
            return Some(Err(error));
        }
        if status == StatusCode::ACCEPTED || status == StatusCode::NO_CONTENT {
            return Some(Ok(StreamableHttpPostResponse::Accepted));
        }
        if status == StatusCode::NOT_FOUND && self.session_was_attached {
            return Some(Err(StreamableHttpError::SessionExpired));
        }
        if let Some(error) = http_status_error(status, &self.headers)
            && (!self.is_json || status == StatusCode::TOO_MANY_REQUESTS)
        {
            return Some(Err(error.into()));
        }
        if status.is_success() && self.content_length == Some(0) && self.awaits_no_response {
            return Some(Ok(StreamableHttpPostResponse::Accepted));
        }
        None
    }

    /// A 401 or 403 with a `WWW-Authenticate` challenge, as rmcp's errors.
    fn challenge(&self) -> Option<Error> {
        let forbidden = match self.status {
            StatusCode::UNAUTHORIZED => false,
            StatusCode::FORBIDDEN => true,
            _ => return None,
        };
        let challenge = match header_text(self.headers.get(WWW_AUTHENTICATE)?) {
            Ok(text) => text,
            Err(e) => return Some(e),
        };
        Some(if forbidden {
            let scope = scope_of(&challenge);
            StreamableHttpError::InsufficientScope(InsufficientScopeError::new(challenge, scope))
        } else {
            StreamableHttpError::AuthRequired(AuthRequiredError::new(challenge))
        })
    }
}

/// An exchange that has begun: if dropped before its head (rmcp dropped the request), it is
/// judged as cancelled.
struct Begun {
    flight: Option<Flight>,
    driver: SharedDriver,
    sink: VerdictSink,
    entries: Option<EntrySink>,
    started: Instant,
}

impl Begun {
    fn take(&mut self) -> Flight {
        self.flight.take().expect("a flight is taken once")
    }

    fn finish(&mut self, end: End) {
        if let Some(flight) = self.flight.take() {
            let clocked = super::body::Clocked {
                elapsed: self.started.elapsed(),
                ..Default::default()
            };
            let finished = finish(&self.driver, flight, end, clocked, &mut ());
            deliver(finished, Some(&self.sink), self.entries.as_ref());
        }
    }
}

impl Drop for Begun {
    fn drop(&mut self) {
        self.finish(End::Cancelled);
    }
}

trait NowOrCancel {
    /// Polls once: a body that has already ended gives its verdict; otherwise it is dropped
    /// (judged as cancelled).
    fn now_or_cancel(self) -> Option<Verdict>;
}

impl NowOrCancel for JudgedBody<BodyStream> {
    fn now_or_cancel(mut self) -> Option<Verdict> {
        let waker = std::task::Waker::noop();
        let mut cx = Context::from_waker(waker);
        loop {
            match Pin::new(&mut self).poll_next(&mut cx) {
                Poll::Ready(Some(super::body::Frame::Verdict(v))) => return Some(*v),
                Poll::Ready(Some(_)) => continue,
                Poll::Ready(None) | Poll::Pending => return None,
            }
        }
    }
}

#[derive(Default)]
struct Captured {
    bytes: Vec<u8>,
    over: bool,
    end: Option<End>,
}

impl Captured {
    fn broke(&self) -> bool {
        matches!(self.end, Some(End::Reset))
    }

    fn failure(&self) -> Option<std::io::Error> {
        use std::io::{Error as IoError, ErrorKind};
        match self.end {
            Some(End::Reset) => Some(IoError::new(
                ErrorKind::ConnectionReset,
                "the response body broke off",
            )),
            Some(End::Timeout) => Some(IoError::new(
                ErrorKind::TimedOut,
                "the response body did not end before the deadline",
            )),
            _ => None,
        }
    }
}

impl StreamableHttpClient for VerdictHttpClient {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, Error> {
        let limits = StreamableHttpResponseLimits::default();
        self.post(
            uri,
            message,
            session_id,
            auth_header,
            custom_headers,
            limits,
        )
        .await
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<StreamableHttpPostResponse, Error> {
        let mut limits = StreamableHttpResponseLimits::default();
        limits.max_sse_event_size = max_sse_event_size;
        self.post(
            uri,
            message,
            session_id,
            auth_header,
            custom_headers,
            limits,
        )
        .await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, Error> {
        self.post(
            uri,
            message,
            session_id,
            auth_header,
            custom_headers,
            limits,
        )
        .await
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), Error> {
        let mut rb = self.http.delete(uri.as_ref());
        if let Some(token) = auth_header {
            rb = rb.bearer_auth(token);
        }
        rb = rb.header(SESSION_ID, session_id.as_ref());
        rb = apply_custom_headers(rb, custom_headers)?;
        let request = rb.build().map_err(StreamableHttpError::Client)?;
        let mut begun = self.begin(&request, &[]);
        let (response, started) = self.send(&mut begun, request).await?;
        let flight = begun.take();
        // rmcp reads no DELETE body: it is judged in the background.
        let status = response.status();
        let failed = response.error_for_status_ref().err();
        self.finish_later(flight, response, started);
        if status == StatusCode::METHOD_NOT_ALLOWED {
            return Ok(());
        }
        match failed {
            Some(e) => Err(StreamableHttpError::Client(e)),
            None => Ok(()),
        }
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<SseBox, Error> {
        let max = StreamableHttpResponseLimits::default().max_sse_event_size;
        self.get(
            uri,
            session_id,
            last_event_id,
            auth_header,
            custom_headers,
            max,
        )
        .await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<SseBox, Error> {
        self.get(
            uri,
            session_id,
            last_event_id,
            auth_header,
            custom_headers,
            max_sse_event_size,
        )
        .await
    }
}

fn lossy(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn headers_of(map: &HeaderMap) -> Headers {
    map.iter()
        .map(|(n, v)| {
            (
                n.as_str().to_owned(),
                String::from_utf8_lossy(v.as_bytes()).into_owned(),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn items(body: &[&[u8]]) -> Vec<Sse> {
        let queue = Arc::new(Mutex::new(SseQueue::default()));
        let mut tee = SseTee::new(1 << 20, queue.clone());
        for chunk in body {
            tee.feed(chunk);
        }
        let mut q = lock(&queue);
        q.items.drain(..).map(|i| i.expect("no error")).collect()
    }

    #[test]
    fn tee_gives_rmcp_what_its_parser_would() {
        let got = items(&[
            b"id: 7\nretry: 1500\ndata:\n\n",
            b"event: message\ndata: {\"a\":",
            b"1}\n\nid: 9\n\n: comment\n\ndata: x\n\n",
        ]);
        assert_eq!(
            got,
            vec![
                Sse {
                    event: None,
                    data: Some(String::new()),
                    id: Some("7".into()),
                    retry: Some(1500),
                },
                Sse {
                    event: Some("message".into()),
                    data: Some("{\"a\":1}".into()),
                    id: None,
                    retry: None,
                },
                Sse {
                    event: None,
                    data: Some("x".into()),
                    id: None,
                    retry: None,
                },
                Sse {
                    event: None,
                    data: None,
                    id: Some("9".into()),
                    retry: None,
                },
            ]
        );
    }

    #[test]
    fn scopes_and_media_types() {
        assert_eq!(
            scope_of(r#"Bearer error="insufficient_scope", scope="a b""#).as_deref(),
            Some("a b")
        );
        assert_eq!(
            scope_of("Bearer scope=read:data, x").as_deref(),
            Some("read:data")
        );
        assert_eq!(scope_of("Bearer"), None);
        assert!(media_type_is("Application/JSON; charset=utf-8", JSON));
        assert!(!media_type_is("application/jsonx", JSON));
        assert!(media_type_is("text/event-stream", EVENT_STREAM));
    }
}
