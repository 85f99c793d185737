//! The plain-POST path: the proxy's own HTTP/1.1 forwarding for the exchange nearly every MCP
//! client sends (a `POST` to the upstream's path with a `Content-Length` body), without hyper.
//!
//! Measured (`benches/proxy-vs-nginx.sh`, the `floor` path): a tokio forwarder that parses with
//! httparse and reuses its buffers keeps up with nginx on this machine, while hyper's server and
//! client around the same judging cost about a quarter of the proxy's instructions per request.
//! So the common exchange is read, forwarded and answered here: the request head is parsed in
//! place and written upstream in one write with its body, the reply's head rewritten into one
//! buffer, its body passed on as it arrives (the chunked framing as sent), and three clocks per
//! connection (not per request) time the head, the upstream's answer and its silences.
//!
//! Anything else (another method, a refusal, chunked or oversized request bodies, `Expect`,
//! HTTP/1.0, a `Connection` header naming other headers, a head httparse rejects) hands the
//! connection, with the bytes already read, to the hyper path ([`super::server`]), which reads
//! it from that request on exactly as before: one set of rules for what is refused.

use std::future::{Future, poll_fn};
use std::io::{self, IoSlice};
use std::pin::{Pin, pin};
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use bytes::{Buf, BytesMut};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::net::TcpStream;
use tokio::time::{Instant, Sleep};

use super::guard::{self, Refusal};
use super::headers;
use super::shared::Shared;
use super::tap::Tap;
use super::unanswered;
use super::upstream::{NoAnswer, UpIo, host_port};
use crate::adapters::cause;
use crate::request::Headers;
use crate::verdict::End;
use crate::vocab::decimal;

/// How a connection left the plain path.
pub enum Left {
    /// It ended (the client closed, a timeout, a cut).
    Closed,
    /// A request this path does not take: hyper reads the connection on, from `read` (the
    /// bytes already taken from the socket, that request's first).
    HandOver(TcpStream, BytesMut),
}

/// Serves `client` until it closes or sends a request for the hyper path.
pub async fn serve(client: TcpStream, shared: &Arc<Shared>, loopback: bool) -> Left {
    let config = &shared.config;
    let mut plain = Plain {
        shared,
        loopback,
        client,
        read: BytesMut::with_capacity(FIRST),
        up: None,
        up_read: BytesMut::with_capacity(FIRST),
        out: Vec::new(),
        reply_head: Vec::new(),
        ranges: Vec::new(),
        spans: Vec::new(),
        head_clock: Clock::new(config.head_timeout),
        answer_clock: Clock::new(config.upstream_head_timeout),
        idle_clock: config.idle_timeout.map(Clock::new),
    };
    loop {
        match plain.exchange().await {
            Step::Next => plain.trim(),
            Step::Close => return Left::Closed,
            Step::Reset => {
                let _ = plain.client.set_zero_linger();
                return Left::Closed;
            }
            Step::HandOver => return Left::HandOver(plain.client, plain.read),
        }
    }
}

/// Room added to a read buffer that is nearly full.
const BUF: usize = 16 << 10;

/// A read buffer's first size (as hyper's); one grown past [`KEEP`] by a large body is let go
/// after its exchange, so that an idle connection holds little whatever it once carried.
const FIRST: usize = 8 << 10;
const KEEP: usize = 64 << 10;

/// Headers a request or reply head may have on this path, as many as hyper allows (a request
/// with more goes to hyper's path to be refused; a reply with more is a 502).
const MAX_HEADERS: usize = 100;

enum Step {
    Next,
    Close,
    /// The upstream broke off: the client's connection is cut with a TCP reset, so that it sees
    /// what the proxy saw (never a made-up end).
    Reset,
    HandOver,
}

/// A wait with a fixed length per connection, started often and rarely timed: starting it only
/// notes the time; its one timer is set at the first wait and moved on only when it fires early.
struct Clock {
    after: Duration,
    due: Instant,
    sleep: Option<Pin<Box<Sleep>>>,
}

impl Clock {
    fn new(after: Duration) -> Clock {
        Clock {
            after,
            due: Instant::now(),
            sleep: None,
        }
    }

    fn start(&mut self) {
        let now = Instant::now();
        // Durations no clock can add wait as long as a clock can.
        self.due = now
            .checked_add(self.after)
            .unwrap_or_else(|| now + Duration::from_secs(86_400 * 365 * 30));
    }

    /// Whether the wait is over (else the task is woken when it may be).
    fn passed(&mut self, cx: &mut Context<'_>) -> bool {
        let due = self.due;
        let sleep = self
            .sleep
            .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(due)));
        loop {
            if sleep.as_mut().poll(cx).is_pending() {
                return false;
            }
            if sleep.deadline() >= due {
                return true;
            }
            sleep.as_mut().reset(due);
        }
    }
}

/// `work`, or `None` once `clock` (started by the caller) passed.
async fn within<F: Future>(clock: &mut Clock, work: F) -> Option<F::Output> {
    let mut work = pin!(work);
    poll_fn(|cx| match work.as_mut().poll(cx) {
        Poll::Ready(done) => Poll::Ready(Some(done)),
        Poll::Pending if clock.passed(cx) => Poll::Ready(None),
        Poll::Pending => Poll::Pending,
    })
    .await
}

/// Hands the data at `ranges` of `bytes` to the tap.
fn feed(tap: &mut Tap, bytes: &[u8], ranges: &[(usize, usize)]) {
    for &(from, to) in ranges {
        tap.on_chunk(&bytes[from..to]);
    }
}

/// How a wait on the upstream ended.
enum Wait<T> {
    Done(T),
    /// Its clock passed.
    Late,
    /// The client closed its connection (or it broke) meanwhile.
    Left,
}

/// `work` (reading or asking the upstream) while watching the client, as hyper watches a
/// connection whose answer is pending: a client that goes away ends the exchange now (its
/// upstream stream is closed, the tap says cancelled), not at the next write.
async fn watching<F: Future>(
    work: F,
    clock: Option<&mut Clock>,
    client: &TcpStream,
    read: &mut BytesMut,
) -> Wait<F::Output> {
    let mut work = pin!(work);
    let mut clock = clock;
    poll_fn(|cx| {
        if let Poll::Ready(done) = work.as_mut().poll(cx) {
            return Poll::Ready(Wait::Done(done));
        }
        if client_left(client, read, cx) {
            return Poll::Ready(Wait::Left);
        }
        if clock.as_mut().is_some_and(|c| c.passed(cx)) {
            return Poll::Ready(Wait::Late);
        }
        Poll::Pending
    })
    .await
}

/// Whether the client closed or broke its connection; what it sends meanwhile (a pipelined
/// request) is kept in `read`, up to a bound past which it is no longer watched.
fn client_left(client: &TcpStream, read: &mut BytesMut, cx: &mut Context<'_>) -> bool {
    loop {
        if read.len() >= 4 * BUF {
            return false;
        }
        match client.poll_read_ready(cx) {
            Poll::Pending => return false,
            Poll::Ready(Err(_)) => return true,
            Poll::Ready(Ok(())) => {}
        }
        if read.capacity() - read.len() < 4096 {
            read.reserve(BUF);
        }
        match client.try_read_buf(read) {
            Ok(0) => return true,
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
            Err(_) => return true,
        }
    }
}

/// Reads more into `buf` (growing it when nearly full); `Ok(0)` at the peer's end.
async fn read_more<R: AsyncRead + Unpin>(io: &mut R, buf: &mut BytesMut) -> io::Result<usize> {
    if buf.capacity() - buf.len() < 4096 {
        buf.reserve(BUF);
    }
    io.read_buf(buf).await
}

/// Writes `parts` whole, in as few writes as the socket takes.
async fn write_all<W: AsyncWrite + Unpin>(io: &mut W, parts: &mut [&[u8]]) -> io::Result<()> {
    let mut first = 0;
    while first < parts.len() {
        if parts[first].is_empty() {
            first += 1;
            continue;
        }
        let slices: [IoSlice<'_>; 3] = std::array::from_fn(|i| {
            IoSlice::new(parts.get(first + i).copied().unwrap_or_default())
        });
        let n = io.write_vectored(&slices).await?;
        if n == 0 {
            return Err(io::ErrorKind::WriteZero.into());
        }
        let mut left = n;
        while left > 0 {
            let k = left.min(parts[first].len());
            parts[first] = &parts[first][k..];
            left -= k;
            if parts[first].is_empty() {
                first += 1;
            }
        }
    }
    io.flush().await
}

/// Whether a kept upstream connection was closed (or sent something unasked) while idle: one
/// poll that never waits (a socket with nothing new is not even read), so a request is never
/// sent on a connection the upstream already closed.
fn went_away(up: &mut UpIo) -> bool {
    let mut byte = [0u8; 1];
    let mut buf = ReadBuf::new(&mut byte);
    let mut cx = Context::from_waker(Waker::noop());
    Pin::new(up).poll_read(&mut cx, &mut buf).is_ready()
}

/// A request head this path takes.
struct Request {
    /// Head and body length.
    head: usize,
    body: usize,
    /// The client asked to close after this exchange.
    close: bool,
    /// The upstream URL with the client's query; `None`: the upstream's own.
    url: Option<String>,
}

/// How the reply's body ends.
#[derive(Clone, Copy)]
enum Framing {
    None,
    Length(u64),
    Chunked,
    /// At the upstream's close: passed on chunked.
    Close,
}

struct Reply {
    status: u16,
    framing: Framing,
    /// The upstream closes the connection after this reply.
    close: bool,
    headers: Headers,
}

struct Plain<'s> {
    shared: &'s Arc<Shared>,
    loopback: bool,
    client: TcpStream,
    /// Bytes from the client not yet forwarded.
    read: BytesMut,
    /// The upstream connection, kept across this client's requests.
    up: Option<UpIo>,
    /// Bytes from the upstream not yet passed on.
    up_read: BytesMut,
    /// The request as it goes upstream (head and body), or the proxy's own answer.
    out: Vec<u8>,
    /// The reply's head as it goes to the client.
    reply_head: Vec<u8>,
    /// Where the data of what arrived lies in `up_read` (the chunked framing taken off).
    ranges: Vec<(usize, usize)>,
    /// Where the request's header names and values lie in its head (read for the analysis once
    /// the request is on its way).
    spans: Vec<[usize; 4]>,
    head_clock: Clock,
    answer_clock: Clock,
    idle_clock: Option<Clock>,
}

impl<'s> Plain<'s> {
    /// Lets go of buffers a large exchange grew (see [`KEEP`]).
    fn trim(&mut self) {
        if self.out.capacity() > KEEP {
            self.out = Vec::new();
        }
        if self.read.is_empty() && self.read.capacity() > KEEP {
            self.read = BytesMut::with_capacity(FIRST);
        }
        if self.up_read.is_empty() && self.up_read.capacity() > KEEP {
            self.up_read = BytesMut::with_capacity(FIRST);
        }
    }

    async fn exchange(&mut self) -> Step {
        // The head (timed from the wait for it, as hyper's header read timeout), then the body
        // (timed from the head, as the hyper path's body read).
        self.head_clock.start();
        let request = loop {
            let (read, out, spans) = (&self.read, &mut self.out, &mut self.spans);
            match parse_request(read, self.shared, self.loopback, out, spans) {
                Parsed::Ready(request) => break request,
                Parsed::Other => return Step::HandOver,
                Parsed::Partial if self.read.len() > self.shared.config.max_head_bytes => {
                    return Step::HandOver;
                }
                Parsed::Partial => {
                    let read = read_more(&mut self.client, &mut self.read);
                    match within(&mut self.head_clock, read).await {
                        Some(Ok(n)) if n > 0 => {}
                        // A closed or silent client (hyper closes at its head timeout too).
                        _ => return Step::Close,
                    }
                }
            }
        };
        let total = request.head + request.body;
        self.head_clock.start();
        while self.read.len() < total {
            let read = read_more(&mut self.client, &mut self.read);
            match within(&mut self.head_clock, read).await {
                Some(Ok(n)) if n > 0 => {}
                Some(_) => return Step::Close,
                None => {
                    let _ = self.refuse(&Refusal::BodyUnreadable).await;
                    return Step::Close;
                }
            }
        }
        let sent = self.read.split_to(total).freeze();
        let body = sent.slice(request.head..);
        let shared = self.shared;
        self.out.extend_from_slice(&body);

        // Sent first, then begun: the request's judging runs while the upstream works on it,
        // not before the upstream has it (the exchange's index and order are the same: they
        // are taken when it begins, before its answer is read).
        self.answer_clock.start();
        let sending = send(shared, &mut self.up, &self.out);
        let clock = Some(&mut self.answer_clock);
        let sent_up = watching(sending, clock, &self.client, &mut self.read).await;
        let spans = self.spans.iter();
        let seen =
            match std::str::from_utf8(&sent[..request.head]) {
                // Names and values are cut at ASCII delimiters: always at a character's edge.
                Ok(head) => headers::analysis_of_text(spans.map(|&[n, m, v, w]| {
                    (head.get(n..m).unwrap_or(""), head.get(v..w).unwrap_or(""))
                })),
                Err(_) => headers::analysis_of_pairs(spans.map(|&[n, m, v, w]| {
                    (std::str::from_utf8(&sent[n..m]).unwrap_or(""), &sent[v..w])
                })),
            };
        let mut tap = Box::new(Tap::begin(
            shared.clone(),
            &hyper::Method::POST,
            request.url,
            seen,
            &body,
        ));
        let answered = match (sent_up, self.up.as_mut()) {
            (Wait::Done(Ok(())), Some(io)) => {
                let reading = answer(
                    shared,
                    io,
                    &mut self.up_read,
                    &mut self.reply_head,
                    request.close,
                );
                let clock = Some(&mut self.answer_clock);
                watching(reading, clock, &self.client, &mut self.read).await
            }
            (Wait::Done(Ok(())), None) => {
                Wait::Done(Err(NoAnswer("the upstream connection went away".into())))
            }
            (Wait::Done(Err(no)), _) => Wait::Done(Err(no)),
            (Wait::Late, _) => Wait::Late,
            (Wait::Left, _) => Wait::Left,
        };
        let reply = match answered {
            Wait::Done(Ok(reply)) => reply,
            Wait::Left => {
                // The tap, dropped unfinished, says cancelled.
                self.up = None;
                return Step::Close;
            }
            Wait::Done(Err(NoAnswer(cause))) => {
                let cause = shared.config.redaction().text(&cause).into_owned();
                tap.finish_unanswered(End::Reset, &cause);
                self.up = None;
                return self
                    .answer_unanswered(502, &body, &cause, request.close)
                    .await;
            }
            Wait::Late => {
                let cause = format!(
                    "the upstream sent no response head within {:?} (--upstream-head-timeout)",
                    shared.config.upstream_head_timeout
                );
                tap.finish_unanswered(End::Timeout, &cause);
                self.up = None;
                return self
                    .answer_unanswered(504, &body, &cause, request.close)
                    .await;
            }
        };
        drop(sent);
        tap.on_head(reply.status, reply.headers);
        let step = self.pass_body(tap, reply.framing).await;
        if reply.close && matches!(step, Step::Next) {
            self.up = None;
        }
        match step {
            Step::Next if request.close => {
                let _ = self.client.shutdown().await;
                Step::Close
            }
            step => step,
        }
    }

    /// Passes the reply's body on as it arrives, feeding the tap; the exchange is judged once
    /// its last bytes were handed to the client's socket.
    async fn pass_body(&mut self, mut tap: Box<Tap>, framing: Framing) -> Step {
        let head = std::mem::take(&mut self.reply_head);
        let step = match framing {
            Framing::None | Framing::Length(0) => {
                // Ends now, before the client can see the head and go on.
                tap.finish(End::Eof);
                match write_all(&mut self.client, &mut [&head]).await {
                    Ok(()) => Step::Next,
                    Err(_) => Step::Close,
                }
            }
            Framing::Length(n) => self.pass(tap, &head, Body::Length(n)).await,
            Framing::Chunked => {
                self.pass(tap, &head, Body::Chunked(Chunks::default()))
                    .await
            }
            Framing::Close => self.pass(tap, &head, Body::Close).await,
        };
        self.reply_head = head;
        match step {
            Step::Next => {}
            Step::Close | Step::HandOver => {
                // The client went away: the upstream stream closes with it (the tap, dropped
                // unfinished, says whether that was a cancel or a reader that stopped).
                self.up = None;
            }
            Step::Reset => {}
        }
        step
    }

    async fn pass(&mut self, mut tap: Box<Tap>, head: &[u8], mut body: Body) -> Step {
        let Some(up) = self.up.as_mut() else {
            return Step::Reset;
        };
        let mut head = head;
        if let Some(idle) = &mut self.idle_clock {
            idle.start();
        }
        loop {
            // What arrived: the part of this body, passed on whole, with the framing as sent;
            // the analysis reads its data once the client's socket has it (off the time to the
            // client, as a chunk is never held for it).
            let ranges = &mut self.ranges;
            ranges.clear();
            let took = body.take(&self.up_read, |from, to| ranges.push((from, to)));
            let Ok((take, ended)) = took else {
                // Broken framing: the client's body is cut, as a hyper read error cuts it.
                let _ = write_all(&mut self.client, &mut [head]).await;
                feed(&mut tap, &self.up_read, &self.ranges);
                tap.finish(End::Reset);
                self.up = None;
                return Step::Reset;
            };
            let piece = &self.up_read[..take];
            let mut size = [0u8; 18];
            let written = if matches!(body, Body::Close | Body::Closed) {
                // Re-framed as chunks: the client needs an end it can tell from a cut.
                let size = chunk_size(&mut size, take);
                let tail: &[u8] = if ended { b"0\r\n\r\n" } else { b"" };
                if take > 0 {
                    write_all(&mut self.client, &mut [head, size, piece, b"\r\n", tail]).await
                } else {
                    write_all(&mut self.client, &mut [head, tail]).await
                }
            } else {
                write_all(&mut self.client, &mut [head, piece]).await
            };
            feed(&mut tap, &self.up_read, &self.ranges);
            if ended {
                tap.ended(End::Eof);
            }
            if written.is_err() {
                return Step::Close;
            }
            head = b"";
            if ended {
                let extra = self.up_read.len() > take;
                self.up_read.clear();
                if extra || matches!(body, Body::Close | Body::Closed) {
                    // Bytes after the reply (or its end was the close): not kept.
                    self.up = None;
                }
                // Judged now: the client has the last bytes.
                drop(tap);
                return Step::Next;
            }
            self.up_read.advance(take);
            let read = read_more(up, &mut self.up_read);
            let idle = self.idle_clock.as_mut();
            match watching(read, idle, &self.client, &mut self.read).await {
                Wait::Done(Ok(0)) if matches!(body, Body::Close) => body = Body::Closed,
                Wait::Done(Ok(n)) if n > 0 => {
                    if let Some(idle) = &mut self.idle_clock {
                        idle.start();
                    }
                }
                Wait::Done(_) => {
                    tap.finish(End::Reset);
                    self.up = None;
                    return Step::Reset;
                }
                Wait::Left => {
                    self.up = None;
                    return Step::Close;
                }
                Wait::Late => {
                    tap.finish(End::Timeout);
                    self.up = None;
                    return Step::Reset;
                }
            }
        }
    }

    /// The proxy's own refusal (the request is not forwarded).
    async fn refuse(&mut self, refusal: &Refusal) -> io::Result<()> {
        let reason = refusal.reason() + "\n";
        self.out.clear();
        status_line(&mut self.out, refusal.status());
        self.out
            .extend_from_slice(b"content-type: text/plain\r\nconnection: close\r\n");
        content_length(&mut self.out, reason.len());
        self.out.extend_from_slice(reason.as_bytes());
        write_all(&mut self.client, &mut [&self.out]).await
    }

    /// The proxy's own answer when the upstream gave no head ([`unanswered::text`]); the
    /// connection stays usable.
    async fn answer_unanswered(
        &mut self,
        status: u16,
        request: &[u8],
        cause: &str,
        close: bool,
    ) -> Step {
        let text = unanswered::text(self.shared, status, request, cause);
        self.out.clear();
        status_line(&mut self.out, status);
        self.out
            .extend_from_slice(b"content-type: application/json\r\n");
        if close {
            self.out.extend_from_slice(b"connection: close\r\n");
        }
        content_length(&mut self.out, text.len());
        self.out.extend_from_slice(text.as_bytes());
        match write_all(&mut self.client, &mut [&self.out]).await {
            Ok(()) if !close => Step::Next,
            _ => Step::Close,
        }
    }
}

fn status_line(out: &mut Vec<u8>, status: u16) {
    let reason = hyper::StatusCode::from_u16(status)
        .ok()
        .and_then(|s| s.canonical_reason())
        .unwrap_or("");
    out.extend_from_slice(b"HTTP/1.1 ");
    decimal(out, u64::from(status));
    out.push(b' ');
    out.extend_from_slice(reason.as_bytes());
    out.extend_from_slice(b"\r\n");
}

fn content_length(out: &mut Vec<u8>, len: usize) {
    out.extend_from_slice(b"content-length: ");
    decimal(out, len as u64);
    out.extend_from_slice(b"\r\n\r\n");
}

/// A chunk's size line for `len` bytes, written into `buf`.
fn chunk_size(buf: &mut [u8; 18], len: usize) -> &[u8] {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut i = 16;
    let mut n = len;
    loop {
        i -= 1;
        buf[i] = HEX[n & 15];
        n >>= 4;
        if n == 0 {
            break;
        }
    }
    buf[16] = b'\r';
    buf[17] = b'\n';
    &buf[i..]
}

// Not boxed: it lives one call long, on the stack, once per request.
#[allow(clippy::large_enum_variant)]
enum Parsed {
    Ready(Request),
    Partial,
    Other,
}

/// Reads a request head at the start of `read`; for one this path takes, writes the upstream
/// request's head into `out`: the upstream's path with the client's query, the client's headers
/// as sent but for the hop-by-hop ones, `Host`, `Content-Length` and `Accept-Encoding` (the
/// body is read unencoded), then the upstream's `Host` and the body's length.
fn parse_request(
    read: &[u8],
    shared: &Shared,
    loopback: bool,
    out: &mut Vec<u8>,
    spans: &mut Vec<[usize; 4]>,
) -> Parsed {
    if read.is_empty() {
        return Parsed::Partial;
    }
    // Uninitialised: httparse writes only the headers it finds (no array of 100 headers,
    // 3.2 KB, zeroed per request).
    let mut raw = [const { std::mem::MaybeUninit::<httparse::Header<'_>>::uninit() }; MAX_HEADERS];
    let mut req = httparse::Request::new(&mut []);
    let head = match req.parse_with_uninit_headers(read, &mut raw) {
        // A head over the limit is hyper's to refuse (431), however it arrived.
        Ok(httparse::Status::Complete(n)) if n > shared.config.max_head_bytes => {
            return Parsed::Other;
        }
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) => return Parsed::Partial,
        Err(_) => return Parsed::Other,
    };
    if req.method != Some("POST") || req.version != Some(1) {
        return Parsed::Other;
    }
    let target = req.path.unwrap_or("");
    let (path, query) = match target.split_once('?') {
        Some((p, q)) => (p, Some(q)),
        None => (target, None),
    };
    let upstream = &shared.upstream;
    if path != upstream.path() {
        return Parsed::Other;
    }
    let mut host = None;
    let mut hosts = 0;
    let mut origin = None;
    let mut length = None;
    let mut close = false;
    for h in req.headers.iter() {
        let name = h.name;
        let text = || std::str::from_utf8(h.value).ok();
        if name.eq_ignore_ascii_case("host") {
            hosts += 1;
            host = text();
        } else if name.eq_ignore_ascii_case("origin") {
            if origin.is_none() {
                origin = Some(text());
            }
        } else if name.eq_ignore_ascii_case("content-length") {
            let Some(n) = text().and_then(|t| t.trim().parse::<u64>().ok()) else {
                return Parsed::Other;
            };
            if length.is_some_and(|l| l != n) {
                return Parsed::Other;
            }
            length = Some(n);
        } else if name.eq_ignore_ascii_case("connection") {
            for token in text().unwrap_or("?").split(',') {
                match token.trim() {
                    t if t.eq_ignore_ascii_case("close") => close = true,
                    t if t.eq_ignore_ascii_case("keep-alive") || t.is_empty() => {}
                    _ => return Parsed::Other,
                }
            }
        } else if name.eq_ignore_ascii_case("transfer-encoding")
            || name.eq_ignore_ascii_case("expect")
            || name.eq_ignore_ascii_case("upgrade")
        {
            return Parsed::Other;
        }
    }
    let (Some(host), 1) = (host, hosts) else {
        return Parsed::Other;
    };
    let origin = match origin {
        Some(Some(o)) => Some(o),
        Some(None) => return Parsed::Other,
        None => None,
    };
    let config = &shared.config;
    if guard::check_names(Some(host), origin, loopback, &config.allow_origins).is_err() {
        return Parsed::Other;
    }
    let body = length.unwrap_or(0);
    if body > config.max_request_bytes {
        return Parsed::Other;
    }
    let Ok(body) = usize::try_from(body) else {
        return Parsed::Other;
    };
    out.clear();
    out.extend_from_slice(b"POST ");
    out.extend_from_slice(path.as_bytes());
    if let Some(q) = query {
        out.push(b'?');
        out.extend_from_slice(q.as_bytes());
    } else if let Some(q) = upstream.query() {
        out.push(b'?');
        out.extend_from_slice(q.as_bytes());
    }
    out.extend_from_slice(b" HTTP/1.1\r\n");
    let at = |part: &[u8]| part.as_ptr() as usize - read.as_ptr() as usize;
    spans.clear();
    for h in req.headers.iter() {
        let (name, value) = (at(h.name.as_bytes()), at(h.value));
        spans.push([name, name + h.name.len(), value, value + h.value.len()]);
        if headers::dropped(h.name, true) {
            continue;
        }
        out.extend_from_slice(h.name.as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(h.value);
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"host: ");
    out.extend_from_slice(shared.http.host());
    out.extend_from_slice(b"\r\n");
    content_length(out, body);
    Parsed::Ready(Request {
        head,
        body,
        close,
        url: shared.query_url(query),
    })
}

/// Sends the request in `request` (head and body), opening the upstream connection when there
/// is none or it went away.
async fn send(shared: &Shared, up: &mut Option<UpIo>, request: &[u8]) -> Result<(), NoAnswer> {
    let url = &shared.upstream;
    if up.as_mut().is_some_and(went_away) {
        *up = None;
    }
    let io = match up {
        Some(io) => io,
        None => up.insert(shared.http.open(url).await?),
    };
    write_all(io, &mut [request]).await.map_err(|e| {
        let (host, port) = host_port(url);
        NoAnswer(cause::of_io(&e, host, port))
    })
}

/// Reads the reply's head from `io`; the head for the client goes to `reply_out`.
async fn answer(
    shared: &Shared,
    io: &mut UpIo,
    up_read: &mut BytesMut,
    reply_out: &mut Vec<u8>,
    client_close: bool,
) -> Result<Reply, NoAnswer> {
    let (host, port) = host_port(&shared.upstream);
    up_read.clear();
    loop {
        let mut raw = [httparse::EMPTY_HEADER; MAX_HEADERS];
        let mut resp = httparse::Response::new(&mut raw);
        match resp.parse(up_read) {
            Ok(httparse::Status::Complete(n)) => {
                let status = resp.code.unwrap_or(0);
                if (100..200).contains(&status) && status != 101 {
                    // Informational: not passed on (as hyper's client), the reply follows.
                    up_read.advance(n);
                    continue;
                }
                let reply = reply_head(&resp, status, client_close, reply_out)
                    .map_err(|why| NoAnswer(format!("{host}:{port} {why}")))?;
                up_read.advance(n);
                return Ok(reply);
            }
            Ok(httparse::Status::Partial) => {
                if up_read.len() > shared.config.max_head_bytes.max(64 << 10) {
                    return Err(NoAnswer(format!(
                        "{host}:{port} sent a response head over {} bytes",
                        shared.config.max_head_bytes.max(64 << 10)
                    )));
                }
                match read_more(io, up_read).await {
                    Ok(0) => {
                        return Err(NoAnswer(format!(
                            "{host}:{port} closed the connection before the response head"
                        )));
                    }
                    Ok(_) => {}
                    Err(e) => return Err(NoAnswer(cause::of_io(&e, host, port))),
                }
            }
            Err(e) => {
                return Err(NoAnswer(format!(
                    "{host}:{port} sent an invalid response head ({e})"
                )));
            }
        }
    }
}

/// The reply's head as the client receives it (into `out`): the upstream's status line and
/// headers as sent, but for hop-by-hop ones; `Transfer-Encoding: chunked` when the body is passed
/// on chunked; `Connection: close` when the client asked for it.
fn reply_head(
    resp: &httparse::Response<'_, '_>,
    status: u16,
    client_close: bool,
    out: &mut Vec<u8>,
) -> Result<Reply, &'static str> {
    if status == 101 {
        return Err("switched protocols on a POST");
    }
    let mut length = None;
    let mut chunked = false;
    let mut close = resp.version != Some(1);
    for h in resp.headers.iter() {
        if h.name.eq_ignore_ascii_case("content-length") {
            let n = std::str::from_utf8(h.value)
                .ok()
                .and_then(|t| t.trim().parse::<u64>().ok())
                .ok_or("sent an invalid Content-Length")?;
            if length.is_some_and(|l| l != n) {
                return Err("sent two different Content-Length headers");
            }
            length = Some(n);
        } else if h.name.eq_ignore_ascii_case("transfer-encoding") {
            if !h.value.trim_ascii().eq_ignore_ascii_case(b"chunked") || chunked {
                return Err("sent a Transfer-Encoding other than chunked");
            }
            chunked = true;
        } else if h.name.eq_ignore_ascii_case("connection") {
            for token in h.value.split(|&b| b == b',') {
                let token = token.trim_ascii();
                if token.eq_ignore_ascii_case(b"close") {
                    close = true;
                } else if !token.eq_ignore_ascii_case(b"keep-alive") && !token.is_empty() {
                    return Err("sent a Connection header naming other headers");
                }
            }
        }
    }
    let framing = if status == 204 || status == 304 {
        Framing::None
    } else if chunked {
        Framing::Chunked
    } else if let Some(n) = length {
        Framing::Length(n)
    } else {
        close = true;
        Framing::Close
    };
    out.clear();
    let reason = resp.reason.unwrap_or("");
    out.extend_from_slice(b"HTTP/1.1 ");
    decimal(out, u64::from(status));
    out.push(b' ');
    out.extend_from_slice(reason.as_bytes());
    out.extend_from_slice(b"\r\n");
    for h in resp.headers.iter() {
        if headers::dropped(h.name, false)
            || (chunked && h.name.eq_ignore_ascii_case("content-length"))
        {
            continue;
        }
        out.extend_from_slice(h.name.as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(h.value);
        out.extend_from_slice(b"\r\n");
    }
    if matches!(framing, Framing::Chunked | Framing::Close) {
        out.extend_from_slice(b"transfer-encoding: chunked\r\n");
    }
    if client_close {
        out.extend_from_slice(b"connection: close\r\n");
    }
    out.extend_from_slice(b"\r\n");
    Ok(Reply {
        status,
        framing,
        close,
        headers: headers::analysis_of(resp.headers),
    })
}

/// A reply body in passing: how much of what arrived belongs to it, and whether it ended.
enum Body {
    Length(u64),
    Chunked(Chunks),
    /// Until the upstream closes.
    Close,
    /// The upstream closed: the body ended.
    Closed,
}

impl Body {
    /// Of `bytes` (what arrived), how many belong to the body and whether they end it; where the
    /// data in them lies (the chunked framing taken off) goes to `data`, as `from, to`.
    fn take(
        &mut self,
        bytes: &[u8],
        mut data: impl FnMut(usize, usize),
    ) -> Result<(usize, bool), &'static str> {
        match self {
            Body::Length(left) => {
                let take = usize::try_from(*left).map_or(bytes.len(), |l| l.min(bytes.len()));
                if take > 0 {
                    data(0, take);
                }
                *left -= take as u64;
                Ok((take, *left == 0))
            }
            Body::Chunked(chunks) => chunks.take(bytes, data),
            Body::Close => {
                if !bytes.is_empty() {
                    data(0, bytes.len());
                }
                Ok((bytes.len(), false))
            }
            Body::Closed => Ok((0, true)),
        }
    }
}

/// Where the chunked framing stands, fed piece by piece.
#[derive(Default)]
struct Chunks {
    state: ChunkState,
}

#[derive(Clone, Copy)]
enum ChunkState {
    /// Reading a size (hex digits so far).
    Size(u64),
    /// After the size: an extension, up to the line's end.
    SizeLine(u64),
    SizeLf(u64),
    Data(u64),
    DataCr,
    DataLf,
    /// After the last chunk: a trailer line, or the empty line that ends the body.
    TrailerStart,
    TrailerLine,
    TrailerLf,
    EndLf,
}

impl Default for ChunkState {
    fn default() -> Self {
        ChunkState::Size(0)
    }
}

impl Chunks {
    fn take(
        &mut self,
        bytes: &[u8],
        mut data: impl FnMut(usize, usize),
    ) -> Result<(usize, bool), &'static str> {
        use ChunkState::*;
        let mut i = 0;
        while i < bytes.len() {
            let b = bytes[i];
            self.state = match self.state {
                Size(n) => match (b as char).to_digit(16) {
                    Some(d) if n >> 60 == 0 => Size(n << 4 | u64::from(d)),
                    Some(_) => return Err("chunk size too large"),
                    None if b == b'\r' => SizeLf(n),
                    None if b == b';' || b == b' ' || b == b'\t' => SizeLine(n),
                    None => return Err("bad chunk size"),
                },
                SizeLine(n) if b == b'\r' => SizeLf(n),
                SizeLine(n) => SizeLine(n),
                SizeLf(0) if b == b'\n' => TrailerStart,
                SizeLf(n) if b == b'\n' => Data(n),
                Data(n) => {
                    let take =
                        usize::try_from(n).map_or(bytes.len() - i, |n| n.min(bytes.len() - i));
                    if take > 0 {
                        data(i, i + take);
                    }
                    i += take;
                    let left = n - take as u64;
                    self.state = if left == 0 { DataCr } else { Data(left) };
                    continue;
                }
                DataCr if b == b'\r' => DataLf,
                DataLf if b == b'\n' => Size(0),
                TrailerStart if b == b'\r' => EndLf,
                TrailerStart => TrailerLine,
                TrailerLine if b == b'\r' => TrailerLf,
                TrailerLine => TrailerLine,
                TrailerLf if b == b'\n' => TrailerStart,
                EndLf if b == b'\n' => {
                    return Ok((i + 1, true));
                }
                _ => return Err("bad chunked framing"),
            };
            i += 1;
        }
        Ok((bytes.len(), false))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(pieces: &[&[u8]]) -> Result<(Vec<u8>, usize, bool), &'static str> {
        let mut chunks = Chunks::default();
        let mut out = Vec::new();
        let mut used = 0;
        for piece in pieces {
            let (n, ended) = chunks.take(piece, |a, b| out.extend_from_slice(&piece[a..b]))?;
            used += n;
            if ended {
                return Ok((out, used, true));
            }
        }
        Ok((out, used, false))
    }

    /// The framing is read the same however it is cut, and ends exactly at its last byte.
    #[test]
    fn chunked_framing_is_read_whatever_the_cuts() {
        let whole: &[u8] =
            b"5\r\nhello\r\n1;ext=1\r\n \r\nA\r\n0123456789\r\n0\r\nx-trailer: 1\r\n\r\nNEXT";
        let end = whole.len() - 4;
        for cut in 0..=whole.len() {
            for cut2 in cut..=whole.len() {
                let (data, used, ended) =
                    decode(&[&whole[..cut], &whole[cut..cut2], &whole[cut2..]]).unwrap();
                assert!(ended, "cut at {cut}/{cut2}");
                assert_eq!(data, b"hello 0123456789", "cut at {cut}/{cut2}");
                assert_eq!(used, end, "cut at {cut}/{cut2}");
            }
        }
        for bad in [
            &b"x\r\n"[..],
            b"5\r\nhelloX",
            b"5\nhello",
            b"fffffffffffffffff\r\n",
        ] {
            assert!(decode(&[bad]).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn chunk_size_lines_are_hex() {
        let mut buf = [0u8; 18];
        assert_eq!(chunk_size(&mut buf, 0), b"0\r\n");
        assert_eq!(chunk_size(&mut buf, 255), b"ff\r\n");
        assert_eq!(chunk_size(&mut buf, 0x1234), b"1234\r\n");
    }
}
