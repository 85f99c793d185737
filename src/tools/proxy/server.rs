//! The client side: accepts connections (up to the cap) and serves each on the plain-POST path
//! ([`forward`]) until a request it does not take; from there hyper reads the connection (strict
//! HTTP/1.1, head size and head time limited), refuses what must not be forwarded, and forwards
//! the rest through the hyper client ([`Link`]) and [`TeeBody`].

use std::sync::Arc;

use bytes::Bytes;
use http_body_util::{BodyExt, Either, Full, Limited};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;

use super::forward;
use super::guard::{self, Refusal};
use super::headers;
use super::shared::Shared;
use super::tap::Tap;
use super::tee::{ClientIo, Conn, TeeBody};
use super::unanswered;
use super::upstream::Link;
use crate::verdict::End;

/// What the client receives: a forwarded body, or the proxy's own short refusal.
pub type ClientBody = Either<TeeBody, Full<Bytes>>;

/// The service never fails: every upstream failure becomes a response (see [`unanswered`]).
type NoError = std::convert::Infallible;

/// Accepts connections on `listener` until the task is dropped.
pub async fn accept_loop(listener: TcpListener, shared: Arc<Shared>) {
    let slots = Arc::new(Semaphore::new(shared.config.max_connections));
    let loopback = listener.local_addr().is_ok_and(|a| a.ip().is_loopback());
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            // Out of file descriptors and the like: wait instead of spinning.
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
            continue;
        };
        let _ = stream.set_nodelay(true);
        match slots.clone().try_acquire_owned() {
            Ok(permit) => {
                let shared = shared.clone();
                tokio::spawn(async move {
                    serve_connection(stream, shared, loopback).await;
                    drop(permit);
                });
            }
            Err(_) => {
                tokio::spawn(refuse_busy(stream));
            }
        }
    }
}

/// Over the connection cap: a 503 with the reason, then close. The request is read (up to
/// 64 KiB, within a second) before the close: closing a socket with unread bytes sends a reset,
/// which can make the client lose the 503 it was sent.
async fn refuse_busy(mut stream: TcpStream) {
    let reason = Refusal::Busy.reason();
    let text = format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{reason}",
        reason.len()
    );
    let _ = tokio::time::timeout(std::time::Duration::from_secs(1), async {
        stream.write_all(text.as_bytes()).await?;
        stream.shutdown().await?;
        let mut sink = [0u8; 4096];
        let mut left = 64usize << 10;
        while left > 0 {
            let n = stream.read(&mut sink).await?;
            if n == 0 {
                break;
            }
            left = left.saturating_sub(n);
        }
        std::io::Result::Ok(())
    })
    .await;
}

/// The plain-POST path first ([`forward`]); hyper from the first request it does not take.
async fn serve_connection(stream: TcpStream, shared: Arc<Shared>, loopback: bool) {
    let (stream, read) = match forward::serve(stream, &shared, loopback).await {
        forward::Left::Closed => return,
        forward::Left::HandOver(stream, read) => (stream, read),
    };
    let (io, conn) = ClientIo::new(stream, read);
    let link = Arc::new(Link::default());
    let service = {
        let shared = shared.clone();
        service_fn(move |req| handle(req, shared.clone(), conn.clone(), link.clone(), loopback))
    };
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(shared.config.head_timeout)
        .max_buf_size(shared.config.max_head_bytes.max(8192));
    let _ = builder.serve_connection(TokioIo::new(io), service).await;
}

fn refusal(r: &Refusal) -> Response<ClientBody> {
    let mut resp = Response::new(Either::Right(Full::new(Bytes::from(r.reason() + "\n"))));
    *resp.status_mut() =
        hyper::StatusCode::from_u16(r.status()).unwrap_or(hyper::StatusCode::BAD_REQUEST);
    resp.headers_mut().insert(
        "content-type",
        hyper::header::HeaderValue::from_static("text/plain"),
    );
    if matches!(r, Refusal::Method) {
        resp.headers_mut().insert(
            "allow",
            hyper::header::HeaderValue::from_static("POST, GET, DELETE"),
        );
    }
    resp
}

fn check(req: &Request<Incoming>, shared: &Shared, loopback: bool) -> Result<(), Refusal> {
    let want = shared.upstream.path();
    if req.uri().path() != want {
        return Err(Refusal::WrongPath(want.to_owned()));
    }
    if !matches!(req.method().as_str(), "POST" | "GET" | "DELETE") {
        return Err(Refusal::Method);
    }
    let text = |name: &str| req.headers().get(name).and_then(|v| v.to_str().ok());
    let hosts = req.headers().get_all("host").iter();
    let host = guard::one_host(hosts.map(|v| v.to_str().unwrap_or("\u{0}")))?;
    guard::check_names(
        Some(host),
        text("origin"),
        loopback,
        &shared.config.allow_origins,
    )
}

async fn read_body(body: Incoming, shared: &Shared) -> Result<Bytes, Refusal> {
    let max = shared.config.max_request_bytes;
    let limited = Limited::new(body, usize::try_from(max).unwrap_or(usize::MAX));
    match tokio::time::timeout(shared.config.head_timeout, limited.collect()).await {
        Ok(Ok(collected)) => Ok(collected.to_bytes()),
        Ok(Err(e))
            if e.downcast_ref::<http_body_util::LengthLimitError>()
                .is_some() =>
        {
            Err(Refusal::BodyTooLarge(max))
        }
        _ => Err(Refusal::BodyUnreadable),
    }
}

async fn handle(
    req: Request<Incoming>,
    shared: Arc<Shared>,
    conn: Arc<Conn>,
    link: Arc<Link>,
    loopback: bool,
) -> Result<Response<ClientBody>, NoError> {
    if let Err(r) = check(&req, &shared, loopback) {
        return Ok(refusal(&r));
    }
    let (parts, body) = req.into_parts();
    let body = match read_body(body, &shared).await {
        Ok(b) => b,
        Err(r) => return Ok(refusal(&r)),
    };
    // Kept (a reference count, not a copy) for the id of the proxy's own error answer.
    let request_body = body.clone();
    let seen = headers::for_analysis(&parts.headers);
    // Boxed: the tap goes with the response body through hyper, and a box moves as one
    // pointer where the tap's kilobytes were copied at each hand-over.
    let mut tap = Box::new(Tap::begin(
        shared.clone(),
        &parts.method,
        shared.query_url(parts.uri.query()),
        seen,
        &body,
    ));
    let sent = shared.http.send(
        &link,
        &shared.upstream,
        parts.method,
        parts.uri.query(),
        headers::upstream_request(parts.headers),
        body,
    );
    let resp = match tokio::time::timeout(shared.config.upstream_head_timeout, sent).await {
        Ok(Ok(resp)) => resp,
        Ok(Err(no)) => {
            let cause = shared.config.redaction().text(&no.0).into_owned();
            tap.finish_unanswered(End::Reset, &cause);
            return Ok(unanswered(&shared, 502, &request_body, &cause));
        }
        Err(_) => {
            let cause = format!(
                "the upstream sent no response head within {:?} (--upstream-head-timeout)",
                shared.config.upstream_head_timeout
            );
            tap.finish_unanswered(End::Timeout, &cause);
            return Ok(unanswered(&shared, 504, &request_body, &cause));
        }
    };
    tap.on_head(resp.status.as_u16(), headers::for_analysis(&resp.headers));
    let length = resp
        .headers
        .get("content-length")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse().ok());
    let headers = headers::client_response(resp.headers);
    let body = TeeBody::new(
        resp.body,
        link,
        tap,
        conn,
        shared.config.idle_timeout,
        length,
    );
    let mut out = Response::new(Either::Left(body));
    *out.status_mut() = resp.status;
    *out.headers_mut() = headers;
    Ok(out)
}

/// The proxy's own answer when the upstream gave no response head: `status` (502, or 504 past
/// `--upstream-head-timeout`) with a JSON-RPC error naming the cause, for the request's id when
/// it has one (`null` otherwise: a notification, a batch, a GET), so that a client reads a
/// reason instead of a connection reset. The connection stays usable.
fn unanswered(shared: &Shared, status: u16, request: &[u8], cause: &str) -> Response<ClientBody> {
    let text = unanswered::text(shared, status, request, cause);
    let mut resp = Response::new(Either::Right(Full::new(Bytes::from(text))));
    *resp.status_mut() =
        hyper::StatusCode::from_u16(status).unwrap_or(hyper::StatusCode::BAD_GATEWAY);
    resp.headers_mut().insert(
        "content-type",
        hyper::header::HeaderValue::from_static("application/json"),
    );
    resp
}
