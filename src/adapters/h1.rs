//! One plain-HTTP/1.1 connection driven by hyper directly: the load path of `soak`.
//!
//! reqwest's pool, URL handling and redirect and proxy layers cost more per request than the
//! judging does; a load tool wants what `oha` does instead, one connection per worker, kept
//! alive. Only `http://` endpoints take this path (no TLS, no proxy); everything else goes
//! through [`Client`]'s reqwest transport. The exchange is begun, judged and finished by the
//! same [`Client`] (its session, deadlines and sink), so a verdict here is the verdict there.

use bytes::Bytes;
use http_body_util::{BodyDataStream, BodyExt, Full};
use hyper::client::conn::http1::{self, SendRequest};
use hyper::header::{HOST, HeaderMap, HeaderName, HeaderValue};
use hyper_util::rt::TokioIo;
use tokio::time::Instant;

use super::body::JudgedBody;
use super::client::{Client, Prepared};
use crate::exchange::ResponseHead;
use crate::request::Headers;
use crate::verdict::End;

/// The body stream of a call on a [`Connection`].
pub type H1Body = BodyDataStream<hyper::body::Incoming>;

/// A call in flight on a [`Connection`].
pub type H1Call = JudgedBody<H1Body>;

/// One keep-alive connection to the client's endpoint, opened on first use and again after
/// the server closes it.
pub struct Connection {
    client: Client,
    /// Where to connect.
    host_name: String,
    port: u16,
    /// The `Host` header value.
    host: HeaderValue,
    /// The request target (path and query).
    target: hyper::Uri,
    sender: Option<SendRequest<Full<Bytes>>>,
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection")
            .field("host", &self.host_name)
            .field("port", &self.port)
            .field("open", &self.sender.is_some())
            .finish()
    }
}

impl Connection {
    /// A connection for `client`'s endpoint, or `None` when that is not a plain `http://` URL.
    pub fn new(client: &Client) -> Option<Connection> {
        let url = client.url();
        if url.scheme() != "http" {
            return None;
        }
        let host = url.host_str()?;
        let port = url.port_or_known_default()?;
        let authority = match url.port() {
            Some(p) => format!("{host}:{p}"),
            None => host.to_owned(),
        };
        let target = match url.query() {
            Some(q) => format!("{}?{q}", url.path()),
            None => url.path().to_owned(),
        };
        Some(Connection {
            client: client.clone(),
            host_name: host
                .trim_start_matches('[')
                .trim_end_matches(']')
                .to_owned(),
            port,
            host: HeaderValue::from_str(&authority).ok()?,
            target: target.parse().ok()?,
            sender: None,
        })
    }

    /// Headers of `prepared`, as a map hyper can send (built once per prepared request).
    pub fn headers_of(prepared: &Prepared) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (n, v) in Client::prepared_headers(prepared) {
            if let (Ok(n), Ok(v)) = (
                HeaderName::from_bytes(n.as_bytes()),
                HeaderValue::from_str(v),
            ) {
                map.append(n, v);
            }
        }
        map
    }

    /// The sender of the open connection, opening one if needed; `Err` names the cause.
    async fn open(&mut self) -> Result<&mut SendRequest<Full<Bytes>>, String> {
        if self.sender.as_ref().is_none_or(SendRequest::is_closed) {
            self.sender = None;
            let stream = tokio::net::TcpStream::connect((self.host_name.as_str(), self.port))
                .await
                .map_err(|e| super::cause::of_io(&e, &self.host_name, self.port))?;
            let _ = stream.set_nodelay(true);
            let (sender, conn) = http1::handshake(TokioIo::new(stream))
                .await
                .map_err(|e| format!("HTTP/1.1 handshake: {e}"))?;
            // Ends when the sender is dropped or the server closes the connection.
            tokio::spawn(conn);
            self.sender = Some(sender);
        }
        let sender = self
            .sender
            .as_mut()
            .ok_or_else(|| "no connection".to_owned())?;
        sender
            .ready()
            .await
            .map_err(|e| format!("the connection closed: {e}"))?;
        Ok(sender)
    }

    /// Sends `prepared` (with `headers`, from [`Connection::headers_of`]) with a fresh id and
    /// returns the call in flight.
    pub async fn send(&mut self, prepared: &Prepared, headers: &HeaderMap) -> H1Call {
        let (body, flight) = self.client.begin_prepared(prepared);
        let started = Instant::now();
        let deadlines = self.client.deadlines();
        let response = deadlines
            .until_head(self.head(Bytes::from(body), headers))
            .await
            .unwrap_or(Err((End::Timeout, None)));
        let response = match response {
            Ok(r) => r,
            Err((end, cause)) => {
                self.sender = None;
                return JudgedBody::finished_rows(self.client.judge_failure(
                    flight,
                    end,
                    cause.as_deref(),
                    started,
                ));
            }
        };
        let (parts, incoming) = response.into_parts();
        let head = ResponseHead {
            status: parts.status.as_u16(),
            headers: parts
                .headers
                .iter()
                .map(|(n, v)| (n.as_str(), String::from_utf8_lossy(v.as_bytes())))
                .collect::<Headers>(),
        };
        self.client
            .judge_body(flight, head, incoming.into_data_stream(), started)
    }

    /// Sends the request and waits for the response head.
    async fn head(
        &mut self,
        body: Bytes,
        headers: &HeaderMap,
    ) -> Result<hyper::Response<hyper::body::Incoming>, (End, Option<String>)> {
        let (target, host) = (self.target.clone(), self.host.clone());
        let request = |body: Bytes| {
            let mut req = hyper::Request::new(Full::new(body));
            *req.method_mut() = hyper::Method::POST;
            *req.uri_mut() = target.clone();
            *req.headers_mut() = headers.clone();
            req.headers_mut().insert(HOST, host.clone());
            req
        };
        // A kept-alive connection the server closed while idle fails before the request is
        // written: open a new one and send once more (never sent, so this is safe).
        let mut cause = None;
        for attempt in 0..2 {
            let result = match self.open().await {
                Ok(sender) => sender.send_request(request(body.clone())).await,
                Err(why) => {
                    self.sender = None;
                    cause = Some(why);
                    continue;
                }
            };
            match result {
                Ok(r) => return Ok(r),
                Err(e) if e.is_canceled() && attempt == 0 => self.sender = None,
                Err(e) => {
                    cause = Some(format!(
                        "{}:{} broke the connection before the response head: {e}",
                        self.host_name, self.port
                    ));
                    break;
                }
            }
        }
        Err((End::Reset, cause))
    }
}
