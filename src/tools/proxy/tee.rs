//! The response body as the client receives it: each chunk the upstream sends is passed on
//! unchanged, as soon as it arrives (no buffering: an SSE event reaches the client when it leaves
//! the server), after the [`Tap`] has seen it. Back-pressure is per stream: the next chunk is
//! read from the upstream only when the client's connection has taken the last one, so a slow
//! client slows only its own upstream stream and holds at most one chunk here.
//!
//! An upstream that breaks off makes the client's connection break off too (a TCP reset, see
//! [`ClientIo`]), never a made-up end; a client that goes away drops this body, which drops the
//! upstream stream and so closes it.
//!
//! A body that ends whole is judged after its last bytes are handed on: the tap goes to the
//! client's connection ([`Conn`]), which judges it once hyper has written everything out
//! (the socket's flush), so that the client never waits on the judging.

use std::collections::VecDeque;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use hyper::body::{Body, Frame, SizeHint};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::time::{Instant, Sleep};

use super::tap::Tap;
use super::upstream::{Link, UpstreamBody};
use crate::verdict::End;

/// The upstream broke off (or went silent past the idle timeout): the client's body is cut.
#[derive(Debug)]
pub struct UpstreamBroke(pub &'static str);

impl std::fmt::Display for UpstreamBroke {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0)
    }
}

impl std::error::Error for UpstreamBroke {}

/// Forwards the upstream body to the client, feeding the tap on the way.
pub struct TeeBody {
    upstream: UpstreamBody,
    /// The upstream connection, driven here while the body is read.
    link: Arc<Link>,
    /// `None` once the body ended whole (the tap went to the connection).
    tap: Option<Box<Tap>>,
    conn: Arc<Conn>,
    idle: Option<Idle>,
    /// Bytes still due by the upstream's `Content-Length` (hyper stops polling a body whose
    /// length is met, so the end is taken from the count).
    remaining: Option<u64>,
    done: bool,
    /// The upstream broke off: the cut is passed on at the next poll, after hyper has flushed
    /// what it already took (returning the error at once would make it drop its buffer, and the
    /// client would lose bytes the upstream did send).
    broken: bool,
}

/// The upstream's silence inside a body, timed only while there is one: a body that arrives
/// without a pause (most JSON replies) never sets a timer, and a chunk only notes the time
/// (the timer, once set, is moved on when it fires early, not at every chunk).
struct Idle {
    after: Duration,
    /// When the head or the latest chunk came.
    last: Instant,
    sleep: Option<Pin<Box<Sleep>>>,
}

impl Idle {
    /// Whether the upstream has been silent for `after` (else the timer is set to wake the
    /// task when it will have been).
    fn silent(&mut self, cx: &mut Context<'_>) -> bool {
        let due = self.last + self.after;
        let sleep = self
            .sleep
            .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(due)));
        if sleep.deadline() != due {
            sleep.as_mut().reset(due);
        }
        sleep.as_mut().poll(cx).is_ready()
    }
}

impl TeeBody {
    /// A body reading `upstream` for the client connection `conn`; `length` is the upstream's
    /// `Content-Length`, when it sent one.
    pub fn new(
        upstream: UpstreamBody,
        link: Arc<Link>,
        mut tap: Box<Tap>,
        conn: Arc<Conn>,
        idle: Option<Duration>,
        length: Option<u64>,
    ) -> Self {
        // An empty body (`Content-Length: 0`, or one the upstream's client already knows ended,
        // as a 204's) ends the exchange now, before the client can see the head and go on.
        let done = length == Some(0) || upstream.is_end_stream();
        if done {
            tap.finish(End::Eof);
        }
        TeeBody {
            upstream,
            link,
            tap: Some(tap),
            conn,
            idle: idle.map(|after| Idle {
                after,
                last: Instant::now(),
                sleep: None,
            }),
            remaining: length,
            done,
            broken: false,
        }
    }

    /// The upstream's body ended whole: judged once the connection has written it out.
    fn ended_whole(&mut self) {
        self.done = true;
        if let Some(mut tap) = self.tap.take() {
            tap.ended(End::Eof);
            self.conn.park(tap);
        }
    }

    fn broke(
        &mut self,
        end: End,
        why: &'static str,
    ) -> Poll<Option<Result<Frame<Bytes>, UpstreamBroke>>> {
        self.done = true;
        if let Some(tap) = &mut self.tap {
            tap.finish(end);
        }
        self.conn.reset.store(true, Ordering::Relaxed);
        Poll::Ready(Some(Err(UpstreamBroke(why))))
    }
}

impl Body for TeeBody {
    type Data = Bytes;
    type Error = UpstreamBroke;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, UpstreamBroke>>> {
        let this = &mut *self;
        if this.done {
            return Poll::Ready(None);
        }
        if this.broken {
            return this.broke(End::Reset, "the upstream broke off");
        }
        // What the upstream connection already handed on is taken first; only when there is
        // nothing is the connection driven (to read more), and the body looked at again.
        let mut driven = false;
        let polled = loop {
            match Pin::new(&mut this.upstream).poll_frame(cx) {
                // Trailers are not forwarded (hop-by-hop `TE`/`Trailer` are dropped too).
                Poll::Ready(Some(Ok(frame))) => match frame.into_data() {
                    Ok(chunk) => break Poll::Ready(Some(Ok(chunk))),
                    Err(_) => continue,
                },
                Poll::Ready(Some(Err(e))) => break Poll::Ready(Some(Err(e))),
                Poll::Ready(None) => break Poll::Ready(None),
                Poll::Pending if !driven => {
                    driven = true;
                    this.link.drive(cx);
                }
                Poll::Pending => break Poll::Pending,
            }
        };
        match polled {
            Poll::Ready(Some(Ok(chunk))) => {
                if let Some(idle) = &mut this.idle {
                    idle.last = Instant::now();
                }
                if let Some(tap) = &mut this.tap {
                    tap.on_chunk(&chunk);
                }
                if let Some(left) = &mut this.remaining {
                    *left = left.saturating_sub(chunk.len() as u64);
                    if *left == 0 {
                        this.ended_whole();
                    }
                }
                Poll::Ready(Some(Ok(Frame::data(chunk))))
            }
            Poll::Ready(Some(Err(_))) => {
                // Pending once, so that hyper writes out what it holds; then the cut.
                this.broken = true;
                cx.waker().wake_by_ref();
                Poll::Pending
            }
            Poll::Ready(None) => {
                this.ended_whole();
                Poll::Ready(None)
            }
            Poll::Pending => {
                let silent = this.idle.as_mut().is_some_and(|idle| idle.silent(cx));
                if silent {
                    this.broke(End::Timeout, "the upstream went silent (--idle-timeout)")
                } else {
                    Poll::Pending
                }
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.done
    }

    fn size_hint(&self) -> SizeHint {
        match self.remaining {
            Some(n) => SizeHint::with_exact(n),
            None => SizeHint::default(),
        }
    }
}

/// What the responses of one client connection share with its socket.
#[derive(Default)]
pub struct Conn {
    /// The upstream broke off: the connection closes with a TCP reset.
    reset: AtomicBool,
    /// Exchanges whose body ended whole, to judge once the socket has taken the last bytes
    /// (each is judged as it is dropped; whatever is left when the connection goes is judged
    /// then).
    parked: Mutex<VecDeque<Box<Tap>>>,
    /// `parked` is not empty (a look without the lock at every flush).
    any_parked: AtomicBool,
}

impl Conn {
    fn park(&self, tap: Box<Tap>) {
        self.parked
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push_back(tap);
        self.any_parked.store(true, Ordering::Release);
    }

    /// Judges the parked exchanges (outside the lock), oldest first.
    fn judge_parked(&self) {
        if !self.any_parked.load(Ordering::Acquire) {
            return;
        }
        loop {
            let tap = {
                let mut parked = self.parked.lock().unwrap_or_else(|p| p.into_inner());
                let tap = parked.pop_front();
                if parked.is_empty() {
                    self.any_parked.store(false, Ordering::Release);
                }
                tap
            };
            match tap {
                Some(tap) => drop(tap),
                None => break,
            }
        }
    }
}

/// The client's TCP connection. When the upstream broke off ([`Conn`]'s reset), the connection
/// is closed with a TCP reset instead of a clean close, so the client sees what the proxy saw.
/// Once a flush found everything written, the exchanges that ended are judged.
pub struct ClientIo {
    stream: TcpStream,
    conn: Arc<Conn>,
    /// Bytes already read from `stream` (by the plain-POST path, which handed the connection
    /// over), read again first.
    read_first: bytes::BytesMut,
}

impl ClientIo {
    /// Wraps `stream`, whose first bytes `read_first` were already taken from it, with what its
    /// responses share.
    pub fn new(stream: TcpStream, read_first: bytes::BytesMut) -> (ClientIo, Arc<Conn>) {
        let conn = Arc::new(Conn::default());
        (
            ClientIo {
                stream,
                conn: conn.clone(),
                read_first,
            },
            conn,
        )
    }
}

impl Drop for ClientIo {
    fn drop(&mut self) {
        if self.conn.reset.load(Ordering::Relaxed) {
            let _ = self.stream.set_zero_linger();
        }
        self.conn.judge_parked();
    }
}

impl AsyncRead for ClientIo {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        if !self.read_first.is_empty() {
            let n = self.read_first.len().min(buf.remaining());
            buf.put_slice(&self.read_first.split_to(n));
            return Poll::Ready(Ok(()));
        }
        Pin::new(&mut self.stream).poll_read(cx, buf)
    }
}

impl AsyncWrite for ClientIo {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write(cx, buf)
    }
    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write_vectored(cx, bufs)
    }
    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }
    /// hyper flushes its connection once its buffer is written out: the last bytes of a
    /// response are with the kernel, so its exchange is judged now.
    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let flushed = Pin::new(&mut self.stream).poll_flush(cx);
        if flushed.is_ready() {
            self.conn.judge_parked();
        }
        flushed
    }
    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }
}
