//! The one exchange path: every adapter (capture replay, the proxy, the reqwest client, the rmcp
//! transport) moves bytes and times into a [`Driver`] and takes verdicts out; nothing else
//! starts an exchange.
//!
//! The driver decides, once for all of them, what used to be decided four times: whether an
//! entry is MCP at all, which kind it is, whether a `GET` resumes an earlier stream (and is then
//! judged as that request's answer), which request rules and shapes apply, how a 2025-03-26
//! batch becomes one row per request id, what a recording keeps (a HAR entry, headers and URL
//! redacted by the one [`Redaction`] policy, the body capped) and what the call grouping reads
//! ([`Finished::facts`]). It is sans-IO: no clock (times are passed in), no sockets.
//!
//! ```text
//!   Driver::begin(Sent) ─▶ Flight ─on_head─▶ feed* ─▶ Driver::finish(end, times) ─▶ Finished
//! ```
//!
//! A live adapter shares one driver between connections (behind a lock) and feeds each flight
//! outside it: only `begin`, [`Driver::note`] and `finish` touch the session.

use serde::Serialize;
use serde_json::Value;
use smallvec::SmallVec;

use crate::arrival::Arrivals;
use crate::entry::Entry;
use crate::exchange::{Exchange, Observer, ResponseHead};
use crate::headers::Known;
use crate::idle_cut::IdleCuts;
use crate::limits::Limits;
use crate::redact::Redaction;
use crate::request::{BodyKind, Request};
use crate::session::Session;
use crate::verdict::{End, Verdict};

/// An entry that was not judged, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Skipped {
    /// Position in the capture.
    pub index: u64,
    /// Why it was not judged.
    pub reason: String,
}

/// A request as it went on the wire: what [`Driver::begin`] takes.
#[derive(Debug, Clone)]
pub struct Sent<'a> {
    /// Position in a capture; `None` takes the driver's running counter (live).
    pub index: Option<u64>,
    /// HTTP method.
    pub method: &'a str,
    /// The URL as sent (shown redacted).
    pub url: &'a str,
    /// Request headers as sent.
    pub headers: crate::Headers,
    /// Request body as sent.
    pub body: &'a [u8],
    /// When it was sent (RFC 3339), when known now; a capture may give it at the end instead.
    /// Only a recording reads it: a live adapter that does not record passes `None` and formats
    /// no time.
    pub started: Option<String>,
    /// Sent by one of this crate's MCP client adapters: MCP by construction, judged whatever
    /// it looks like. Their requests also carry the `Accept` both media types that makes
    /// [`not_mcp`] judge their recordings the same way.
    pub from_client: bool,
}

/// Times an adapter passes in at the end (the core keeps no clock).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Times {
    /// When the request was sent (RFC 3339), if not given to [`Driver::begin`].
    pub started: Option<String>,
    /// From sending the request to the end of the exchange, in milliseconds.
    pub elapsed_ms: Option<f64>,
    /// From sending the request to the response head, in milliseconds (evidence of which box
    /// made the status: `crate::origin`).
    pub head_ms: Option<f64>,
    /// The request's own timeout, in milliseconds, when the adapter has one.
    pub timeout_ms: Option<f64>,
    /// The error the capturing client recorded (a HAR `_error`), as written: it goes into the
    /// verdict's `client_error`.
    pub error: Option<String>,
    /// When the body arrived, as a capture recorded it (read after the body, so given here);
    /// `None` keeps what [`Flight::feed_at`] noted.
    pub arrivals: Option<Arrivals>,
}

/// Why the request of `method` to `url` is not an MCP exchange, or `None` if it is one. The
/// one rule every path applies: a `POST` with a JSON-RPC body, or with an MCP header, or that
/// accepts both `application/json` and `text/event-stream` (what a Streamable-HTTP client must
/// send); a `GET` or `DELETE` with an MCP header or `Last-Event-ID`; a `GET` that accepts
/// `text/event-stream`.
pub fn not_mcp(url: &str, req: &Request) -> Option<String> {
    let has_mcp_header = req.headers.known(Known::McpProtocolVersion).is_some()
        || req.headers.known(Known::McpSessionId).is_some();
    // Read only where it decides (most requests are told by their body or an MCP header).
    let accepts = |media: &str| {
        req.headers
            .known(Known::Accept)
            .is_some_and(|a| a.to_ascii_lowercase().contains(media))
    };
    match (req.http_method.as_ref(), req.kind) {
        ("POST", BodyKind::Unreadable | BodyKind::None)
            if has_mcp_header || (accepts("text/event-stream") && accepts("application/json")) =>
        {
            None
        }
        ("POST", BodyKind::Unreadable | BodyKind::None) => Some(format!(
            "POST {} without a JSON-RPC body",
            crate::redact::url(url)
        )),
        ("POST", _) => None,
        ("GET", BodyKind::Request) => None, // a resumption linked to its request
        ("GET" | "DELETE", _) if has_mcp_header => None,
        ("GET", _)
            if req.headers.known(Known::LastEventId).is_some() || accepts("text/event-stream") =>
        {
            None
        }
        (m, _) if has_mcp_header => {
            Some(format!("{m} {}: not an MCP entry", crate::redact::url(url)))
        }
        (m, _) => Some(format!("{m} {}: not MCP", crate::redact::url(url))),
    }
}

/// Owns the [`Session`] of one capture or connection, and what every exchange of it shares:
/// the recording policy and the redaction policy.
#[derive(Debug, Clone, Default)]
pub struct Driver {
    session: Session,
    redaction: Redaction,
    /// Keep a HAR entry of every exchange, its response body capped at this many bytes.
    record_cap: Option<u64>,
    /// Index of the next live exchange.
    next_index: u64,
    /// Streams cut so far, for `sse.idle_cut` across the capture or run.
    idle_cuts: IdleCuts,
    /// The box of the last finished exchange, for the next one (an exchange is too big for
    /// the allocator's fast path, and one is begun per request).
    spare: SpareBox,
}

/// An emptied exchange box; a clone of the driver starts without one.
#[derive(Debug, Default)]
struct SpareBox(Option<Box<Exchange>>);

impl Clone for SpareBox {
    fn clone(&self) -> Self {
        SpareBox(None)
    }
}

impl Driver {
    /// A driver with a fresh session under `limits`; no recording; redaction on.
    pub fn new(limits: Limits) -> Self {
        Driver {
            session: Session::new(limits),
            ..Driver::default()
        }
    }

    /// Keeps a HAR entry of every exchange ([`Finished::entry`]), its response body capped at
    /// `body_cap` bytes (a recording meant for replay needs `max_body_bytes + 1`: one byte past
    /// the limit still replays as `LIMIT_EXCEEDED`).
    pub fn recording(mut self, body_cap: u64) -> Self {
        self.record_cap = Some(body_cap);
        self
    }

    /// Sets what recordings hide.
    pub fn redaction(mut self, redaction: Redaction) -> Self {
        self.redaction = redaction;
        self
    }

    /// The redaction policy.
    pub fn redaction_policy(&self) -> &Redaction {
        &self.redaction
    }

    /// The session: what earlier exchanges established.
    pub fn session(&self) -> &Session {
        &self.session
    }

    /// The limits every exchange runs under.
    pub fn limits(&self) -> Limits {
        self.session.limits()
    }

    /// Takes the next live index without starting an exchange (a request whose analysis
    /// failed before it began still has its place).
    pub fn reserve_index(&mut self) -> u64 {
        self.next_index += 1;
        self.next_index - 1
    }

    /// Starts an exchange for a request as sent.
    pub fn begin(&mut self, sent: Sent<'_>) -> Flight {
        let index = sent.index.unwrap_or(self.next_index);
        self.next_index = index + 1;
        let recording = self.record_cap.map(|cap| Recording {
            entry: Box::new(Entry {
                index,
                method: sent.method.to_owned(),
                url: self.redaction.url(sent.url).into_owned(),
                request_headers: self.redaction.headers(&sent.headers),
                request_body: sent.body.to_vec(),
                response: None,
                response_body: Vec::new(),
                end: End::Eof,
                started: sent.started,
                time_ms: None,
                timings: None,
                timeout_ms: None,
                error: None,
                arrivals: Vec::new(),
            }),
            cap,
            redaction: self.redaction.clone(),
        });
        let request = Request::new(sent.method, sent.headers, sent.body);
        let shape = shape_text(&request, sent.body);
        let judging = if request.kind == BodyKind::Batch && request.ids().len() > 1 {
            match not_mcp(sent.url, &request).filter(|_| !sent.from_client) {
                Some(reason) => Judging::Skipped(reason),
                None => Judging::Batch(Box::new(Batch {
                    members: batch_requests(&request, sent.body),
                    shape: shape.map(str::to_owned),
                    head: None,
                    body: Vec::new(),
                    cap: usize::try_from(self.limits().max_body_bytes.saturating_add(1))
                        .unwrap_or(usize::MAX),
                })),
            }
        } else {
            match self.start(index, sent.url, request, shape, sent.from_client) {
                Ok(exchange) => Judging::One(match self.spare.0.take() {
                    Some(mut boxed) => {
                        *boxed = exchange;
                        boxed
                    }
                    None => Box::new(exchange),
                }),
                Err(reason) => Judging::Skipped(reason),
            }
        };
        Flight {
            index,
            judging,
            recording,
            noted: 0,
        }
    }

    /// Begins judging one request (the entry's, or one of its batch) at `index`.
    fn start(
        &mut self,
        index: u64,
        url: &str,
        mut req: Request,
        shape: Option<&str>,
        from_client: bool,
    ) -> Result<Exchange, String> {
        // A GET with Last-Event-ID that resumes an earlier stream is judged as that request's
        // answer.
        if req.http_method == "GET"
            && let Some(last) = req.headers.known(Known::LastEventId)
            && let Some(resumed) = self.session.resumption(last, req.headers.clone())
        {
            req = resumed;
        }
        if !from_client && let Some(reason) = not_mcp(url, &req) {
            return Err(reason);
        }
        let mut exchange = self.session.begin_at(index, req);
        if let Some(text) = shape {
            exchange.check_request_text(text);
        }
        Ok(exchange)
    }

    /// Tells the session about server requests `flight` framed so far on a stream that is still
    /// open, so that the client's answer, sent before the stream ends, finds them waiting (as a
    /// replay in start order does). Live adapters call it after feeding, when
    /// [`Flight::has_news`] says so.
    pub fn note(&mut self, flight: &mut Flight) {
        let Judging::One(exchange) = &flight.judging else {
            return;
        };
        let (framed, Some(listed)) = exchange.server_requests_framed() else {
            return;
        };
        // The newest `framed - noted` of them (past the list's length they were not kept).
        let new = usize::try_from(framed - flight.noted).unwrap_or(usize::MAX);
        for request in listed.iter().skip(listed.len().saturating_sub(new)) {
            self.session
                .server_request_seen(request.id.clone(), request.method.clone());
        }
        flight.noted = framed;
    }

    /// Ends `flight`: judges it (each request of a batch in turn) and records what it taught.
    pub fn finish(
        &mut self,
        flight: Flight,
        end: End,
        times: Times,
        observer: &mut dyn Observer,
    ) -> Finished {
        let Flight {
            index,
            judging,
            recording,
            ..
        } = flight;
        let mut entry = recording.map(|r| r.entry);
        if let Some(e) = entry.as_mut() {
            e.end = end;
            e.time_ms = times.elapsed_ms;
            if times.head_ms.is_some() {
                e.timings = Some(crate::entry::Timings {
                    send: None,
                    wait: times.head_ms,
                    receive: None,
                });
            }
            e.timeout_ms = times.timeout_ms;
            e.error.clone_from(&times.error);
            // A capture gives its start time with the end; a live adapter gave it at begin.
            if e.started.is_none() {
                e.started = times.started;
            }
        }
        let mut finished = Finished {
            index,
            rows: SmallVec::new(),
            requests: SmallVec::new(),
            skipped: None,
            entry,
        };
        match judging {
            Judging::One(mut exchange) => {
                exchange.head_ms = times.head_ms;
                exchange.timeout_ms = times.timeout_ms;
                if let Some(arrivals) = times.arrivals {
                    exchange.set_arrivals(arrivals);
                }
                if let Some(e) = finished.entry.as_mut() {
                    e.arrivals = exchange.arrivals().marks().to_vec();
                }
                let mut verdict = self.session.finish_with(&mut exchange, end, observer);
                if let Some(found) = self.idle_cuts.observe(&verdict, times.elapsed_ms) {
                    verdict.violations.push(found);
                }
                finished.rows.push(verdict);
                finished.requests.push(exchange.take_request());
                self.spare.0 = Some(exchange);
            }
            Judging::Skipped(reason) => finished.skipped = Some(Skipped { index, reason }),
            Judging::Batch(batch) => {
                let Batch {
                    members,
                    shape,
                    body,
                    head,
                    ..
                } = *batch;
                for (position, member) in members.into_iter().enumerate() {
                    // Judged as MCP at begin: the members need no second look.
                    let started = self.start(index, "", member, shape.as_deref(), true);
                    let Ok(mut exchange) = started else { continue };
                    exchange.head_ms = times.head_ms;
                    exchange.timeout_ms = times.timeout_ms;
                    if let Some(head) = &head {
                        exchange.on_head(head.clone());
                        exchange.feed_with(&body, observer);
                    }
                    let mut verdict = self.session.finish_with(&mut exchange, end, observer);
                    verdict.batch_position = u32::try_from(position).ok();
                    finished.rows.push(verdict);
                    finished.requests.push(exchange.into_request());
                }
            }
        }
        if let Some(error) = &times.error {
            for v in &mut finished.rows {
                client_failure(v, error);
            }
        }
        finished
    }
}

/// The capturing client said the transfer failed (`net::ERR_…`): kept as written, and the
/// failure is the network's or the client's, not the server's.
fn client_failure(v: &mut Verdict, error: &str) {
    v.client_error = Some(error.to_owned());
    if !v.complete {
        v.retry.reason = format!(
            "{}; the client recorded `{error}`: a network or client failure, not the server's",
            v.retry.reason
        )
        .into();
    }
}

/// Milliseconds as the core keeps them: whole, never negative (a clock that went back, or
/// not a number, reads 0).
fn ms_of(elapsed_ms: f64) -> u64 {
    if elapsed_ms.is_finite() && elapsed_ms > 0.0 {
        elapsed_ms as u64
    } else {
        0
    }
}

/// The request's text for the shape check, when its body is JSON-RPC.
fn shape_text<'a>(req: &Request, body: &'a [u8]) -> Option<&'a str> {
    let readable = matches!(
        req.kind,
        BodyKind::Request | BodyKind::Notification | BodyKind::Response | BodyKind::Batch
    );
    if readable {
        std::str::from_utf8(body).ok()
    } else {
        None
    }
}

/// The requests of a batch, each with the batch's ids (so that its siblings' responses are not
/// taken for foreign ones) and its own method, id and params.
fn batch_requests(batch: &Request, body: &[u8]) -> Vec<Request> {
    let Ok(Value::Array(items)) = serde_json::from_slice(body) else {
        return vec![batch.clone()];
    };
    items
        .iter()
        .map(|item| Request::from_value(&batch.http_method, batch.headers.clone(), item))
        .filter(|r| r.kind == BodyKind::Request)
        .map(|r| Request {
            kind: BodyKind::Batch,
            batch_ids: batch.batch_ids.clone(),
            ..r
        })
        .collect()
}

/// How a flight is being judged.
#[derive(Debug)]
enum Judging {
    One(Box<Exchange>),
    /// A 2025-03-26 batch: its requests are judged one after the other, each over the whole
    /// response body, so the body is held (capped) until the end.
    Batch(Box<Batch>),
    /// Not MCP: forwarded or recorded, never judged.
    Skipped(String),
}

#[derive(Debug)]
struct Batch {
    members: Vec<Request>,
    shape: Option<String>,
    head: Option<ResponseHead>,
    /// The response body, up to `cap` bytes (`max_body_bytes + 1`: past the limit every row
    /// is `LIMIT_EXCEEDED` whatever follows).
    body: Vec<u8>,
    cap: usize,
}

/// A flight's recording: the entry being filled (boxed: a flight moves between an adapter's
/// steps, and the entry is handed on as it is), its body cap and the policy its head is shown
/// under.
#[derive(Debug)]
struct Recording {
    entry: Box<Entry>,
    cap: u64,
    redaction: Redaction,
}

/// One exchange between [`Driver::begin`] and [`Driver::finish`]: fed without the driver, so
/// that many can be in flight while their session is shared.
#[derive(Debug)]
#[must_use = "a flight gives its verdict only when finished by Driver::finish"]
pub struct Flight {
    index: u64,
    judging: Judging,
    /// What is recorded, when the driver records.
    recording: Option<Recording>,
    /// Server requests the session was told about ([`Driver::note`]).
    noted: u64,
}

impl Flight {
    /// Its position (the verdict's `index`).
    pub fn index(&self) -> u64 {
        self.index
    }

    /// The request being judged (the first of a batch); `None` when not judged.
    pub fn request(&self) -> Option<&Request> {
        match &self.judging {
            Judging::One(exchange) => Some(exchange.request()),
            Judging::Batch(batch) => batch.members.first(),
            Judging::Skipped(_) => None,
        }
    }

    /// Why it is not judged (not MCP), if so.
    pub fn skipped(&self) -> Option<&str> {
        match &self.judging {
            Judging::Skipped(reason) => Some(reason),
            _ => None,
        }
    }

    /// The response head arrived.
    pub fn on_head(&mut self, head: ResponseHead) {
        if let Some(r) = self.recording.as_mut() {
            r.entry.response = Some(ResponseHead {
                status: head.status,
                headers: r.redaction.headers(&head.headers),
            });
        }
        match &mut self.judging {
            Judging::One(exchange) => exchange.on_head(head),
            Judging::Batch(batch) => batch.head = Some(head),
            Judging::Skipped(_) => {}
        }
    }

    /// Body bytes, in any chunking; each SSE event and JSON-RPC message goes to `observer` as
    /// it is framed.
    pub fn feed(&mut self, chunk: &[u8], observer: &mut dyn Observer) {
        self.record(chunk);
        self.feed_judging(chunk, observer);
    }

    /// Keeps what the recording's cap allows of `chunk`.
    fn record(&mut self, chunk: &[u8]) {
        if let Some(r) = self.recording.as_mut() {
            let room = r.cap.saturating_sub(r.entry.response_body.len() as u64);
            let take = usize::try_from(room).unwrap_or(usize::MAX).min(chunk.len());
            r.entry.response_body.extend_from_slice(&chunk[..take]);
        }
    }

    fn feed_judging(&mut self, chunk: &[u8], observer: &mut dyn Observer) {
        match &mut self.judging {
            Judging::One(exchange) => exchange.feed_with(chunk, observer),
            Judging::Batch(batch) => {
                let room = batch.cap.saturating_sub(batch.body.len());
                batch
                    .body
                    .extend_from_slice(&chunk[..chunk.len().min(room)]);
            }
            Judging::Skipped(_) => {}
        }
    }

    /// Body bytes that arrived `elapsed_ms` after the request was sent (a live adapter's
    /// clock): as [`Flight::feed`], and the time is kept for `sse.buffered` (and recorded, so
    /// that a replay of the recording judges the same).
    pub fn feed_at(&mut self, chunk: &[u8], elapsed_ms: f64, observer: &mut dyn Observer) {
        self.record(chunk);
        match &mut self.judging {
            Judging::One(exchange) => {
                let ms = ms_of(elapsed_ms);
                exchange.feed_at(chunk, ms, ms, observer);
            }
            _ => self.feed_judging(chunk, observer),
        }
    }

    /// The final answer is known: a reader may stop now without cancelling anything.
    pub fn is_settled(&self) -> bool {
        match &self.judging {
            Judging::One(exchange) => exchange.is_settled(),
            _ => false,
        }
    }

    /// Server requests were framed since the last [`Driver::note`].
    pub fn has_news(&self) -> bool {
        match &self.judging {
            Judging::One(exchange) => exchange.server_requests_framed().0 > self.noted,
            _ => false,
        }
    }
}

/// What an ended flight gave.
#[derive(Debug, Clone)]
pub struct Finished {
    /// Its position.
    pub index: u64,
    /// One verdict per request id of a 2025-03-26 batch (each with its `batch_position`), one
    /// otherwise; none when it was not judged. (Room for one in place: the commonest flight
    /// then allocates nothing for its rows.)
    pub rows: SmallVec<[Verdict; 1]>,
    /// The request each row judged (the same order).
    pub requests: SmallVec<[Request; 1]>,
    /// Not an MCP exchange: why.
    pub skipped: Option<Skipped>,
    /// The recorded HAR entry, when the driver records (boxed: a finished flight is handed on
    /// by value).
    pub entry: Option<Box<Entry>>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Headers;
    use crate::redact::REDACTED;

    fn sent<'a>(method: &'a str, headers: Headers, body: &'a [u8]) -> Sent<'a> {
        Sent {
            index: None,
            method,
            url: "http://user:pw@127.0.0.1:9/mcp?token=t",
            headers,
            body,
            started: Some("2026-12-06T10:00:00.000Z".into()),
            from_client: false,
        }
    }

    fn sse_head() -> ResponseHead {
        ResponseHead {
            status: 200,
            headers: Headers::from_iter([("Content-Type", "text/event-stream")]),
        }
    }

    const CALL: &[u8] =
        br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{}}}"#;

    #[test]
    fn a_recording_is_capped_and_redacted() {
        let mut driver = Driver::new(Limits::default()).recording(10);
        let headers = Headers::from_iter([("Authorization", "Bearer s3cret"), ("Accept", "*/*")]);
        let mut flight = driver.begin(sent("POST", headers, CALL));
        flight.on_head(sse_head());
        flight.feed(b"data: {\"jsonrpc\":\"2.0\"", &mut ());
        let finished = driver.finish(flight, End::Eof, Times::default(), &mut ());
        let entry = finished.entry.expect("recording");
        assert_eq!(entry.response_body, b"data: {\"js");
        assert_eq!(entry.request_headers.get("authorization"), Some(REDACTED));
        assert_eq!(entry.request_headers.get("accept"), Some("*/*"));
        assert_eq!(
            entry.url,
            "http://<redacted>@127.0.0.1:9/mcp?token=<redacted>"
        );
        assert_eq!(finished.rows.len(), 1);
        let off = Driver::new(Limits::default())
            .recording(10)
            .redaction(Redaction::off());
        let mut off = off;
        let headers = Headers::from_iter([("Authorization", "Bearer s3cret")]);
        let flight = off.begin(sent("POST", headers, CALL));
        let entry = off
            .finish(flight, End::Eof, Times::default(), &mut ())
            .entry;
        assert_eq!(
            entry.unwrap().request_headers.get("authorization"),
            Some("Bearer s3cret")
        );
    }

    #[test]
    fn a_get_that_resumes_a_stream_is_judged_as_its_request() {
        let mut driver = Driver::new(Limits::default());
        let headers = Headers::from_iter([("MCP-Protocol-Version", "2025-11-25")]);
        let mut flight = driver.begin(sent("POST", headers.clone(), CALL));
        flight.on_head(sse_head());
        flight.feed(b"id: e-1\ndata: \n\n", &mut ());
        let first = driver.finish(flight, End::Reset, Times::default(), &mut ());
        assert!(first.rows[0].resumable, "{:?}", first.rows[0]);
        let mut get = headers;
        get.push("Last-Event-ID", "e-1");
        let mut flight = driver.begin(sent("GET", get, b""));
        flight.on_head(sse_head());
        flight.feed(
            br#"data: {"jsonrpc":"2.0","id":7,"result":{"content":[]}}

"#,
            &mut (),
        );
        let resumed = driver.finish(flight, End::Eof, Times::default(), &mut ());
        let v = &resumed.rows[0];
        assert_eq!((v.method.as_deref(), v.index), (Some("tools/call"), 1));
        assert_eq!(v.outcome, crate::Outcome::ToolSuccess);
    }

    /// The capturing client's error goes into the verdict as written, and the head time and
    /// the request's own timeout into the recording (so its replay sees the same evidence).
    #[test]
    fn client_error_and_times_are_kept() {
        let mut driver = Driver::new(Limits::default()).recording(1 << 10);
        let mut flight = driver.begin(sent("POST", Headers::new(), CALL));
        flight.on_head(sse_head());
        flight.feed(b"data: {}\n\n", &mut ());
        let times = Times {
            head_ms: Some(3.0),
            timeout_ms: Some(10_000.0),
            error: Some("net::ERR_CONNECTION_RESET".into()),
            ..Times::default()
        };
        let finished = driver.finish(flight, End::Reset, times, &mut ());
        let v = &finished.rows[0];
        assert_eq!(v.client_error.as_deref(), Some("net::ERR_CONNECTION_RESET"));
        assert!(v.retry.reason.contains("not the server's"), "{v:?}");
        assert_eq!(v.status_origin, Some(crate::StatusOrigin::Server));
        let entry = finished.entry.expect("recording");
        assert_eq!(entry.timings.and_then(|t| t.wait), Some(3.0));
        assert_eq!(entry.timeout_ms, Some(10_000.0));
        assert_eq!(entry.error.as_deref(), Some("net::ERR_CONNECTION_RESET"));
    }

    #[test]
    fn traffic_that_is_not_mcp_is_recorded_not_judged() {
        let mut driver = Driver::new(Limits::default()).recording(100);
        let flight = driver.begin(sent("POST", Headers::new(), b"{\"q\":1}"));
        assert!(flight.skipped().is_some() && flight.request().is_none());
        let finished = driver.finish(flight, End::Eof, Times::default(), &mut ());
        assert!(finished.rows.is_empty() && finished.entry.is_some());
        let skipped = finished.skipped.expect("skipped");
        assert!(
            skipped.reason.contains("without a JSON-RPC body"),
            "{skipped:?}"
        );
        assert!(!skipped.reason.contains("pw@"), "{skipped:?}");
        // What a Streamable-HTTP client must send makes it MCP, whatever the body.
        let accept = Headers::from_iter([("Accept", "application/json, text/event-stream")]);
        let flight = driver.begin(sent("POST", accept, b"{\"q\":1}"));
        assert!(flight.skipped().is_none());
        // A client adapter's own request is always judged.
        let mut own = sent("DELETE", Headers::new(), b"");
        own.from_client = true;
        assert!(driver.begin(own).skipped().is_none());
    }

    #[test]
    fn a_batch_gives_a_row_per_request_id_over_a_capped_body() {
        let limits = Limits {
            max_body_bytes: 64,
            ..Limits::default()
        };
        let mut driver = Driver::new(limits);
        let batch = br#"[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}]"#;
        let mut flight = driver.begin(sent("POST", Headers::new(), batch));
        flight.on_head(ResponseHead {
            status: 200,
            headers: Headers::from_iter([("Content-Type", "application/json")]),
        });
        let reply =
            br#"[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","id":2,"result":{}}]"#;
        for chunk in reply.chunks(5) {
            flight.feed(chunk, &mut ());
        }
        flight.feed(&[b' '; 4096], &mut ());
        let finished = driver.finish(flight, End::Eof, Times::default(), &mut ());
        let rows: Vec<_> = finished
            .rows
            .iter()
            .map(|v| (v.batch_position, v.id.clone(), v.outcome))
            .collect();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[1].0, Some(1));
        // Past the body limit every row says so.
        assert!(
            rows.iter().all(|r| r.2 == crate::Outcome::LimitExceeded),
            "{rows:?}"
        );
    }
}
