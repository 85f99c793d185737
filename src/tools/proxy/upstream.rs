//! The upstream side. Nothing here follows a redirect (a redirect reaches the client as it was
//! sent) or reads proxy settings from the environment (the upstream is the one the user named).
//!
//! hyper's HTTP/1.1 client directly, one upstream connection per client connection ([`Link`]),
//! over TCP for `http://` and over TLS ([`Tls`](super::tls::Tls), the `tls` feature) for
//! `https://`. HTTP/1.1 carries one exchange at a time, so a client connection never needs two,
//! and pairing them costs no pool look-up, no lock and no per-request copy of the URL: the
//! proxy's hot path (see `benches/proxy.rs`), the same for both schemes.
//!
//! The upstream connection runs in its client connection's task, not in one of its own: it is
//! driven ([`Link::drive`]) while the request waits for its head and while the response body is
//! read. So a request and its answer never hop between tasks, and chunks that arrive together
//! (an SSE reply's events in one read) reach the client in one write, each still passed on as
//! soon as it is there.

use std::future::Future;
use std::pin::{Pin, pin};
use std::sync::Mutex;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper::client::conn::http1::SendRequest;
use hyper::header::{HOST, HeaderMap, HeaderValue};
use hyper::{Method, StatusCode, Uri};
use hyper_util::rt::TokioIo;

use super::config::ProxyError;
use crate::adapters::cause;

/// The upstream's response body, as hyper reads it (not boxed).
pub type UpstreamBody = hyper::body::Incoming;

/// The upstream's response head and body.
pub struct Answer {
    /// Status code.
    pub status: StatusCode,
    /// Headers as received.
    pub headers: HeaderMap,
    /// The body, not read yet.
    pub body: UpstreamBody,
}

/// How the proxy reaches the upstream.
pub struct Upstream {
    /// `host:port` to connect to.
    connect_to: String,
    /// The `Host` header the upstream expects.
    host: HeaderValue,
    /// The upstream's path and query as the request target (built once: most requests have no
    /// query of their own).
    target: Uri,
    /// `https://`: the TLS to open on each new connection.
    #[cfg(feature = "tls")]
    tls: Option<super::tls::Tls>,
}

/// The upstream connection one client connection uses, made on its first request and made
/// again when the upstream closed it.
#[derive(Default)]
pub struct Link(Mutex<Option<Kept>>);

/// hyper's connection future (reads and writes the upstream socket).
type Driving = Pin<Box<dyn Future<Output = hyper::Result<()>> + Send>>;

struct Kept {
    sender: SendRequest<Full<Bytes>>,
    /// `None` once it ended (closed or failed).
    conn: Option<Driving>,
}

impl Kept {
    fn drive(&mut self, cx: &mut Context<'_>) {
        if let Some(conn) = &mut self.conn
            && conn.as_mut().poll(cx).is_ready()
        {
            self.conn = None;
        }
    }
}

impl Link {
    /// Lets the upstream connection make progress (write the request, read the answer, hand
    /// the body on); the task is woken when it can go on.
    pub fn drive(&self, cx: &mut Context<'_>) {
        if let Some(kept) = self.0.lock().unwrap_or_else(|p| p.into_inner()).as_mut() {
            kept.drive(cx);
        }
    }

    /// Whether the kept connection can take a request (`false`: there is none, or it closed).
    fn poll_ready(&self, cx: &mut Context<'_>) -> Poll<bool> {
        let mut slot = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let Some(kept) = slot.as_mut() else {
            return Poll::Ready(false);
        };
        kept.drive(cx);
        match kept.sender.poll_ready(cx) {
            Poll::Ready(Ok(())) => Poll::Ready(true),
            Poll::Pending if kept.conn.is_some() => Poll::Pending,
            _ => {
                *slot = None;
                Poll::Ready(false)
            }
        }
    }

    fn keep(&self, sender: SendRequest<Full<Bytes>>, conn: Driving) {
        *self.0.lock().unwrap_or_else(|p| p.into_inner()) = Some(Kept {
            sender,
            conn: Some(conn),
        });
    }

    /// Waits for `answer` while driving the connection.
    async fn answer<T>(&self, answer: impl Future<Output = T>) -> T {
        let mut answer = pin!(answer);
        std::future::poll_fn(|cx| {
            self.drive(cx);
            answer.as_mut().poll(cx)
        })
        .await
    }
}

/// The upstream did not answer with a head: why, in the words of `adapters::cause` (refused,
/// DNS, TLS, a close or reset before the head).
#[derive(Debug)]
pub struct NoAnswer(pub String);

const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Checks `upstream` and builds the way to reach it; `cacert` (PEM) adds roots for `https://`.
pub fn client(
    upstream: &str,
    cacert: Option<&[u8]>,
) -> Result<(reqwest::Url, Upstream), ProxyError> {
    let url = reqwest::Url::parse(upstream).map_err(|e| {
        ProxyError::BadUpstream(format!("{e} (expected e.g. http://127.0.0.1:8000/mcp)"))
    })?;
    let Some(host) = url.host_str() else {
        return Err(ProxyError::BadUpstream("no host".into()));
    };
    #[cfg(feature = "tls")]
    let tls = match url.scheme() {
        "https" => Some(super::tls::Tls::new(host, cacert)?),
        _ => None,
    };
    #[cfg(not(feature = "tls"))]
    let _ = cacert;
    match url.scheme() {
        "http" => {}
        "https" if cfg!(feature = "tls") => {}
        "https" => return Err(ProxyError::NoTls),
        other => {
            return Err(ProxyError::BadUpstream(format!(
                "scheme {other}: only http:// and https:// are forwarded"
            )));
        }
    }
    let port = url.port_or_known_default().unwrap_or(80);
    let host_header = match url.port() {
        Some(p) => format!("{host}:{p}"),
        None => host.to_owned(),
    };
    let host_value = HeaderValue::from_str(&host_header)
        .map_err(|_| ProxyError::BadUpstream("host is not a valid header value".into()))?;
    // `host_str` keeps an IPv6 address's brackets, as `connect` wants them.
    let connect_to = format!("{host}:{port}");
    let target = match url.query() {
        Some(q) => format!("{}?{q}", url.path()),
        None => url.path().to_owned(),
    }
    .parse()
    .map_err(|_| ProxyError::BadUpstream("the path is not a valid request target".into()))?;
    let up = Upstream {
        connect_to,
        host: host_value,
        target,
        #[cfg(feature = "tls")]
        tls,
    };
    Ok((url, up))
}

impl Upstream {
    /// Sends one request; `query` is the client's query, which replaces the upstream's own.
    pub async fn send(
        &self,
        link: &Link,
        url: &reqwest::Url,
        method: Method,
        query: Option<&str>,
        mut headers: HeaderMap,
        body: Bytes,
    ) -> Result<Answer, NoAnswer> {
        headers.insert(HOST, self.host.clone());
        let mut req = hyper::Request::new(Full::new(body));
        *req.method_mut() = method;
        *req.uri_mut() = match query {
            None => self.target.clone(),
            Some(q) => {
                let path_and_query = format!("{}?{q}", url.path());
                path_and_query.parse().map_err(|_| {
                    NoAnswer(format!("cannot forward to the path {path_and_query:?}"))
                })?
            }
        };
        *req.headers_mut() = headers;
        let resp = self.send_on(link, url, req).await?;
        let (parts, body) = resp.into_parts();
        Ok(Answer {
            status: parts.status,
            headers: parts.headers,
            body,
        })
    }
    /// Sends `req` on the link's connection, or on a new one when there is none, it is closed, or
    /// it closed before the request went out (the race with an upstream's idle close: the request
    /// was not sent, so sending it on a new connection is no retry).
    async fn send_on(
        &self,
        link: &Link,
        url: &reqwest::Url,
        req: hyper::Request<Full<Bytes>>,
    ) -> Result<hyper::Response<hyper::body::Incoming>, NoAnswer> {
        let mut req = req;
        if std::future::poll_fn(|cx| link.poll_ready(cx)).await {
            let answer = {
                let mut slot = link.0.lock().unwrap_or_else(|p| p.into_inner());
                slot.as_mut().map(|kept| kept.sender.try_send_request(req))
            };
            let Some(answer) = answer else {
                return Err(NoAnswer("the upstream connection went away".into()));
            };
            match link.answer(answer).await {
                Ok(resp) => return Ok(resp),
                Err(mut e) => match e.take_message() {
                    Some(unsent) => req = unsent,
                    None => return Err(NoAnswer(of_hyper(e.error(), url))),
                },
            }
        }
        let (mut sender, conn) = self.connect(url).await?;
        let answer = sender.send_request(req);
        link.keep(sender, conn);
        link.answer(answer)
            .await
            .map_err(|e| NoAnswer(of_hyper(&e, url)))
    }

    /// A new HTTP/1.1 connection to the upstream (TLS for `https://`), to be driven by its
    /// client connection's task.
    async fn connect(
        &self,
        url: &reqwest::Url,
    ) -> Result<(SendRequest<Full<Bytes>>, Driving), NoAnswer> {
        let io = self.open(url).await?;
        handshake(io, url).await
    }

    /// A new connection to the upstream (TCP, and TLS for `https://`), within the connect
    /// timeout; `Err` names why not, in the words the verdicts use.
    pub async fn open(&self, url: &reqwest::Url) -> Result<UpIo, NoAnswer> {
        let (host, port) = host_port(url);
        let opening = async {
            let stream = tokio::net::TcpStream::connect(&self.connect_to)
                .await
                .map_err(|e| NoAnswer(cause::of_io(&e, host, port)))?;
            let _ = stream.set_nodelay(true);
            #[cfg(feature = "tls")]
            if let Some(tls) = &self.tls {
                let stream = tls
                    .open(stream)
                    .await
                    .map_err(|e| NoAnswer(cause::of_error(&e, url)))?;
                return Ok(UpIo::Tls(Box::new(stream)));
            }
            Ok(UpIo::Tcp(stream))
        };
        tokio::time::timeout(CONNECT_TIMEOUT, opening)
            .await
            .map_err(|_| NoAnswer(format!("timed out connecting to {host}:{port}")))?
    }

    /// The `Host` header's value the upstream expects.
    pub fn host(&self) -> &[u8] {
        self.host.as_bytes()
    }
}

/// An open connection to the upstream: TCP, or TLS over it.
pub enum UpIo {
    /// `http://`.
    Tcp(tokio::net::TcpStream),
    /// `https://` (boxed: the TLS state is large, the connection moves with its client's).
    #[cfg(feature = "tls")]
    Tls(Box<tokio_rustls::client::TlsStream<tokio::net::TcpStream>>),
}

impl tokio::io::AsyncRead for UpIo {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            UpIo::Tcp(s) => Pin::new(s).poll_read(cx, buf),
            #[cfg(feature = "tls")]
            UpIo::Tls(s) => Pin::new(s.as_mut()).poll_read(cx, buf),
        }
    }
}

impl tokio::io::AsyncWrite for UpIo {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        match self.get_mut() {
            UpIo::Tcp(s) => Pin::new(s).poll_write(cx, buf),
            #[cfg(feature = "tls")]
            UpIo::Tls(s) => Pin::new(s.as_mut()).poll_write(cx, buf),
        }
    }
    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            UpIo::Tcp(s) => Pin::new(s).poll_flush(cx),
            #[cfg(feature = "tls")]
            UpIo::Tls(s) => Pin::new(s.as_mut()).poll_flush(cx),
        }
    }
    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            UpIo::Tcp(s) => Pin::new(s).poll_shutdown(cx),
            #[cfg(feature = "tls")]
            UpIo::Tls(s) => Pin::new(s.as_mut()).poll_shutdown(cx),
        }
    }
}

/// The cause of a failed exchange on an upstream connection: a close before the head is named
/// as such (hyper calls it an incomplete message), anything else as `adapters::cause` reads it.
fn of_hyper(e: &hyper::Error, url: &reqwest::Url) -> String {
    if e.is_incomplete_message() {
        let (host, port) = host_port(url);
        format!("{host}:{port} closed the connection before the response head")
    } else {
        cause::of_error(e, url)
    }
}

/// The upstream's host and port, as causes name them.
pub fn host_port(url: &reqwest::Url) -> (&str, u16) {
    (
        url.host_str().unwrap_or("?"),
        url.port_or_known_default().unwrap_or(0),
    )
}

/// One TCP connection to the upstream's host and port, dropped at once: whether anything
/// answers there, within `wait`. `Err` says why not, in the words the verdicts use.
pub async fn reachable(url: &reqwest::Url, wait: Duration) -> Result<(), String> {
    let (host, port) = host_port(url);
    // `host_str` keeps an IPv6 address's brackets, as `connect` wants them.
    let at = format!("{host}:{port}");
    match tokio::time::timeout(wait, tokio::net::TcpStream::connect(&at)).await {
        Ok(Ok(_)) => Ok(()),
        Ok(Err(e)) => Err(cause::of_io(&e, host, port)),
        Err(_) => Err(format!(
            "timed out connecting to {host}:{port} (no answer within {} ms)",
            wait.as_millis()
        )),
    }
}

/// HTTP/1.1 on an open connection: the sender and the connection to drive.
async fn handshake<T>(
    io: T,
    url: &reqwest::Url,
) -> Result<(SendRequest<Full<Bytes>>, Driving), NoAnswer>
where
    T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Send + Unpin + 'static,
{
    let (sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(io))
        .await
        .map_err(|e| NoAnswer(of_hyper(&e, url)))?;
    Ok((sender, Box::pin(conn)))
}
