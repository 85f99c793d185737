//! The live page's HTTP side, on its own listener (never the proxy's: the page must not take
//! the upstream's path, and a page's requests must never be forwarded): `/` the page,
//! `/events` the server-sent events (`&snapshot=1`: what is kept, then the end), `/har` the
//! recording so far. Every request carries the
//! token; anything else gets a 403 before it is read further.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body_util::{Either, Full};
use hyper::body::{Body, Frame as BodyFrame, Incoming};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpListener;
use tokio::sync::mpsc;

use super::super::sinks::Recorder;
use super::Token;
use super::feed::{Feed, Frame};

/// The page, embedded: the binary serves it without files, CDN or build step.
pub const PAGE: &str = include_str!("page.html");

/// Connections to the UI at once, at most (a page holds one for its events).
const MAX_CONNECTIONS: usize = 64;

/// What a UI request gets: a whole body, or the event stream.
type UiBody = Either<Full<Bytes>, Events>;

/// The `/events` body: the start frames, then whatever the feed sends, until the feed lets the
/// page go (it was too slow) or the page goes away (hyper drops the body).
pub struct Events {
    start: VecDeque<Frame>,
    /// `None` for a snapshot: the body ends after `start`.
    rx: Option<mpsc::Receiver<Frame>>,
}

impl Body for Events {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<BodyFrame<Bytes>, Infallible>>> {
        if let Some(f) = self.start.pop_front() {
            return Poll::Ready(Some(Ok(BodyFrame::data(Bytes::from(f.to_string())))));
        }
        match &mut self.rx {
            Some(rx) => rx
                .poll_recv(cx)
                .map(|f| f.map(|f| Ok(BodyFrame::data(Bytes::from(f.to_string()))))),
            None => Poll::Ready(None),
        }
    }
}

/// What the UI serves from.
struct Ui {
    feed: Arc<Feed>,
    token: Token,
    recorder: Option<Arc<Recorder>>,
}

/// Serves the UI on `listener` until the task is dropped. `recorder` backs `/har` (404
/// without one: the proxy was not asked to `--record`).
pub async fn serve(
    listener: TcpListener,
    feed: Arc<Feed>,
    token: Token,
    recorder: Option<Arc<Recorder>>,
) {
    let ui = Arc::new(Ui {
        feed,
        token,
        recorder,
    });
    let slots = Arc::new(tokio::sync::Semaphore::new(MAX_CONNECTIONS));
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
            continue;
        };
        let Ok(permit) = slots.clone().try_acquire_owned() else {
            continue;
        };
        let ui = ui.clone();
        tokio::spawn(async move {
            let service = service_fn(move |req| {
                let ui = ui.clone();
                async move { Ok::<_, Infallible>(handle(&req, &ui)) }
            });
            let mut builder = http1::Builder::new();
            builder
                .timer(TokioTimer::new())
                .header_read_timeout(std::time::Duration::from_secs(30));
            let _ = builder
                .serve_connection(TokioIo::new(stream), service)
                .await;
            drop(permit);
        });
    }
}

/// The value of `name` in a query string (no percent-decoding: the token is hex).
fn query_value<'a>(query: &'a str, name: &str) -> Option<&'a str> {
    query
        .split('&')
        .filter_map(|pair| pair.split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v)
}

fn plain(status: StatusCode, text: &str) -> Response<UiBody> {
    let mut resp = Response::new(Either::Left(Full::new(Bytes::from(format!("{text}\n")))));
    *resp.status_mut() = status;
    set(&mut resp, "content-type", "text/plain; charset=utf-8");
    resp
}

fn set(resp: &mut Response<UiBody>, name: &'static str, value: &'static str) {
    resp.headers_mut()
        .insert(name, hyper::header::HeaderValue::from_static(value));
}

fn handle(req: &Request<Incoming>, ui: &Ui) -> Response<UiBody> {
    let token = req.uri().query().and_then(|q| query_value(q, "token"));
    if !token.is_some_and(|t| ui.token.matches(t)) {
        return plain(
            StatusCode::FORBIDDEN,
            "this page needs the token printed with its URL (?token=...)",
        );
    }
    if req.method() != hyper::Method::GET {
        return plain(StatusCode::METHOD_NOT_ALLOWED, "only GET");
    }
    let mut resp = match req.uri().path() {
        "/" => {
            let mut r = Response::new(Either::Left(Full::new(Bytes::from_static(PAGE.as_bytes()))));
            set(&mut r, "content-type", "text/html; charset=utf-8");
            // Nothing but the page's own inline script and style, and its own origin.
            set(
                &mut r,
                "content-security-policy",
                "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; img-src data:",
            );
            r
        }
        "/events" => {
            // `snapshot=1`: what is kept, then the end (a page rendered once, a script).
            let snapshot = req
                .uri()
                .query()
                .and_then(|q| query_value(q, "snapshot"))
                .is_some_and(|v| v == "1");
            let (start, rx) = if snapshot {
                (ui.feed.snapshot(), None)
            } else {
                let (start, rx) = ui.feed.subscribe();
                (start, Some(rx))
            };
            let mut r = Response::new(Either::Right(Events {
                start: start.into(),
                rx,
            }));
            set(&mut r, "content-type", "text/event-stream");
            r
        }
        "/har" => match &ui.recorder {
            Some(rec) => {
                let mut out = Vec::new();
                match rec.write(&mut out) {
                    Ok(()) => {
                        let mut r = Response::new(Either::Left(Full::new(Bytes::from(out))));
                        set(&mut r, "content-type", "application/json");
                        set(
                            &mut r,
                            "content-disposition",
                            "attachment; filename=\"mcp-verdict-proxy.har\"",
                        );
                        r
                    }
                    Err(e) => plain(StatusCode::INTERNAL_SERVER_ERROR, &e.to_string()),
                }
            }
            None => plain(
                StatusCode::NOT_FOUND,
                "no recording: start the proxy with --record FILE.har",
            ),
        },
        _ => plain(StatusCode::NOT_FOUND, "not found"),
    };
    set(&mut resp, "cache-control", "no-store");
    set(&mut resp, "referrer-policy", "no-referrer");
    resp
}

#[cfg(test)]
mod tests {
    use super::query_value;

    #[test]
    fn query_values_by_name() {
        assert_eq!(query_value("a=1&token=ab", "token"), Some("ab"));
        assert_eq!(query_value("xtoken=ab", "token"), None);
        assert_eq!(query_value("token", "token"), None);
    }
}
