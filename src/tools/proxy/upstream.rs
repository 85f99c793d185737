//! The upstream side. Nothing here follows a redirect (a redirect reaches the client as it was
//! sent) or reads proxy settings from the environment (the upstream is the one the user named).
//!
//! - `http://`: hyper's HTTP/1.1 client directly, one upstream connection per client connection
//!   ([`Link`]). HTTP/1.1 carries one exchange at a time, so a client connection never needs two,
//!   and pairing them costs no pool look-up, no lock and no per-request copy of the URL: the
//!   proxy's hot path (see `benches/proxy.rs`).
//! - `https://`: reqwest with rustls (the `tls` feature), the TLS stack the rest of the tool
//!   uses, with its pool.

use std::sync::Mutex;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1::SendRequest;
use hyper::header::{HOST, HeaderMap, HeaderValue};
use hyper::{Method, StatusCode};
use hyper_util::rt::TokioIo;

use super::config::ProxyError;
use crate::adapters::cause;

/// Any error of an upstream body.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The upstream's response body, whichever client read it.
pub type UpstreamBody = UnsyncBoxBody<Bytes, BoxError>;

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
pub enum Upstream {
    /// `http://`: a direct HTTP/1.1 connection per client connection.
    Plain {
        /// `host:port` to connect to.
        connect_to: String,
        /// The `Host` header the upstream expects.
        host: HeaderValue,
    },
    /// `https://`: reqwest (rustls).
    Tls(reqwest::Client),
}

/// The upstream connection one client connection uses (`http://` only), made on its first
/// request and made again when the upstream closed it.
#[derive(Default)]
pub struct Link(Mutex<Option<SendRequest<Full<Bytes>>>>);

/// The upstream did not answer with a head: why, in the words of `adapters::cause` (refused,
/// DNS, TLS, a close or reset before the head).
#[derive(Debug)]
pub struct NoAnswer(pub String);

const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Checks `upstream` and builds the way to reach it.
pub fn client(upstream: &str) -> Result<(reqwest::Url, Upstream), ProxyError> {
    let url = reqwest::Url::parse(upstream).map_err(|e| {
        ProxyError::BadUpstream(format!("{e} (expected e.g. http://127.0.0.1:8000/mcp)"))
    })?;
    let Some(host) = url.host_str() else {
        return Err(ProxyError::BadUpstream("no host".into()));
    };
    match url.scheme() {
        "http" => {
            let port = url.port_or_known_default().unwrap_or(80);
            let host_header = match url.port() {
                Some(p) => format!("{host}:{p}"),
                None => host.to_owned(),
            };
            let host = HeaderValue::from_str(&host_header)
                .map_err(|_| ProxyError::BadUpstream("host is not a valid header value".into()))?;
            // `host_str` keeps an IPv6 address's brackets, as `connect` wants them.
            let connect_to = format!("{}:{port}", url.host_str().unwrap_or_default());
            Ok((url, Upstream::Plain { connect_to, host }))
        }
        "https" if cfg!(feature = "tls") => {
            let http = reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .no_proxy()
                .tcp_nodelay(true)
                .connect_timeout(CONNECT_TIMEOUT)
                .pool_idle_timeout(Duration::from_secs(60))
                .build()
                .map_err(|e| ProxyError::Client(e.to_string()))?;
            Ok((url, Upstream::Tls(http)))
        }
        "https" => Err(ProxyError::NoTls),
        other => Err(ProxyError::BadUpstream(format!(
            "scheme {other}: only http:// and https:// are forwarded"
        ))),
    }
}

impl Upstream {
    /// Sends one request; `path_and_query` is the upstream's path with the client's query.
    pub async fn send(
        &self,
        link: &Link,
        url: &reqwest::Url,
        method: Method,
        path_and_query: &str,
        mut headers: HeaderMap,
        body: Bytes,
    ) -> Result<Answer, NoAnswer> {
        match self {
            Upstream::Plain { connect_to, host } => {
                headers.insert(HOST, host.clone());
                let mut req = hyper::Request::new(Full::new(body));
                *req.method_mut() = method;
                *req.uri_mut() = path_and_query.parse().map_err(|_| {
                    NoAnswer(format!("cannot forward to the path {path_and_query:?}"))
                })?;
                *req.headers_mut() = headers;
                let resp = send_plain(link, connect_to, url, req).await?;
                let (parts, body) = resp.into_parts();
                Ok(Answer {
                    status: parts.status,
                    headers: parts.headers,
                    body: body.map_err(BoxError::from).boxed_unsync(),
                })
            }
            Upstream::Tls(http) => {
                let mut target = url.clone();
                target.set_query(path_and_query.split_once('?').map(|(_, q)| q));
                let resp = http
                    .request(method, target)
                    .headers(headers)
                    .body(body)
                    .send()
                    .await
                    .map_err(|e| NoAnswer(cause::of_error(&e, url)))?;
                let (parts, body) = hyper::Response::from(resp).into_parts();
                Ok(Answer {
                    status: parts.status,
                    headers: parts.headers,
                    body: body.map_err(BoxError::from).boxed_unsync(),
                })
            }
        }
    }
}

/// Sends `req` on the link's connection, or on a new one when there is none, it is closed, or
/// it closed before the request went out (the race with an upstream's idle close: the request
/// was not sent, so sending it on a new connection is no retry).
async fn send_plain(
    link: &Link,
    connect_to: &str,
    url: &reqwest::Url,
    req: hyper::Request<Full<Bytes>>,
) -> Result<hyper::Response<hyper::body::Incoming>, NoAnswer> {
    let kept = link.0.lock().unwrap_or_else(|p| p.into_inner()).take();
    let mut req = req;
    if let Some(mut sender) = kept
        && sender.ready().await.is_ok()
    {
        let answer = sender.try_send_request(req);
        put_back(link, sender);
        match answer.await {
            Ok(resp) => return Ok(resp),
            Err(mut e) => match e.take_message() {
                Some(unsent) => req = unsent,
                None => return Err(NoAnswer(of_hyper(e.error(), url))),
            },
        }
    }
    let mut sender = connect(connect_to, url).await?;
    let answer = sender.send_request(req);
    put_back(link, sender);
    answer.await.map_err(|e| NoAnswer(of_hyper(&e, url)))
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
fn host_port(url: &reqwest::Url) -> (&str, u16) {
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

fn put_back(link: &Link, sender: SendRequest<Full<Bytes>>) {
    *link.0.lock().unwrap_or_else(|p| p.into_inner()) = Some(sender);
}

/// A new HTTP/1.1 connection to the upstream; its connection task runs on its own.
async fn connect(
    connect_to: &str,
    url: &reqwest::Url,
) -> Result<SendRequest<Full<Bytes>>, NoAnswer> {
    let (host, port) = host_port(url);
    let stream = tokio::time::timeout(CONNECT_TIMEOUT, tokio::net::TcpStream::connect(connect_to))
        .await
        .map_err(|_| NoAnswer(format!("timed out connecting to {host}:{port}")))?
        .map_err(|e| NoAnswer(cause::of_io(&e, host, port)))?;
    let _ = stream.set_nodelay(true);
    let (sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|e| NoAnswer(of_hyper(&e, url)))?;
    tokio::spawn(conn);
    Ok(sender)
}
