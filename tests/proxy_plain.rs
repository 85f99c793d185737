//! The proxy's plain-POST path (its own HTTP/1.1 forwarding, `src/tools/proxy/forward.rs`)
//! against a scripted upstream on 127.0.0.1: every reply framing reaches the client whole and is
//! judged, informational replies are not passed on, the upstream connection is kept or opened
//! again as the upstream says, pipelined requests are answered in order, a request the path
//! does not take goes to hyper on the same connection, and an upstream that closed its idle
//! connection costs no request.
#![cfg(feature = "proxy")]

mod support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_verdict::proxy::{Config, Proxy};
use mcp_verdict::{End, Outcome};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use support::{ProxyVerdicts as Verdicts, bounded, chunk, read_request};

fn result(id: u32) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":"ok {id}"}}],"isError":false}}}}"#
    )
}

fn call(id: u32) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"echo","arguments":{{}}}}}}"#
    )
}

/// A keep-alive POST of call `id` with `?r=reply` (the upstream answers as `reply` says).
fn request(id: u32, reply: &str, extra: &str) -> String {
    let body = call(id);
    format!(
        "POST /mcp?r={reply} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n{extra}Content-Length: {}\r\n\r\n{body}",
        body.len()
    )
}

/// The request's id and `r`, from its text.
fn id_and_reply(request: &str) -> (u32, String) {
    let reply = request
        .split_once("?r=")
        .map(|(_, rest)| rest.split(' ').next().unwrap_or("").to_owned())
        .unwrap_or_default();
    let id = request
        .split_once("\"id\":")
        .and_then(|(_, rest)| rest.split(',').next())
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or(0);
    (id, reply)
}

/// The scripted upstream: answers each request on a connection as its `r` says, and notes
/// which connection (numbered from 0) each request came on. `close_idle`: each connection is
/// closed 50 ms after its first answer (an idle close, no `Connection: close`).
async fn upstream(close_idle: bool) -> (String, Arc<Mutex<Vec<(usize, String)>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let noted = seen.clone();
    tokio::spawn(async move {
        let mut n = 0;
        while let Ok((mut s, _)) = listener.accept().await {
            let conn = n;
            n += 1;
            let noted = noted.clone();
            tokio::spawn(async move {
                loop {
                    let Ok(req) = read_request(&mut s).await else {
                        return;
                    };
                    if req.is_empty() {
                        return;
                    }
                    let text = String::from_utf8_lossy(&req).into_owned();
                    noted.lock().unwrap().push((conn, text.clone()));
                    let (id, reply) = id_and_reply(&text);
                    let json = result(id);
                    let length = |extra: &str| {
                        format!(
                            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n{extra}Content-Length: {}\r\n\r\n{json}",
                            json.len()
                        )
                    };
                    let (answer, close) = match reply.as_str() {
                        "chunked" => {
                            let (a, b) = json.split_at(10);
                            let event_a = format!("event: message\ndata: {a}");
                            let event_b = format!("{b}\n\n");
                            (
                                format!(
                                    "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n{:x};ext=1\r\n{event_a}\r\n{}0\r\nx-trailer: 1\r\n\r\n",
                                    event_a.len(),
                                    chunk(&event_b)
                                ),
                                false,
                            )
                        }
                        "info" => (
                            format!("HTTP/1.1 100 Continue\r\n\r\n{}", length("")),
                            false,
                        ),
                        "close" => (
                            format!(
                                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n{json}"
                            ),
                            true,
                        ),
                        "conn-close" => (length("Connection: close\r\n"), true),
                        _ => (length(""), false),
                    };
                    if s.write_all(answer.as_bytes()).await.is_err() {
                        return;
                    }
                    if close {
                        return;
                    }
                    if close_idle {
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        return;
                    }
                }
            });
        }
    });
    (url, seen)
}

async fn proxy(upstream: &str) -> (Proxy, Arc<Verdicts>) {
    let config = Config::new(upstream, "127.0.0.1:0".parse().unwrap());
    let seen = Arc::new(Verdicts::default());
    let proxy = Proxy::builder(config)
        .sink(seen.clone())
        .start()
        .await
        .expect("the proxy starts");
    (proxy, seen)
}

/// One response read off `c`: its head (lowercased) and its body, the chunked framing taken
/// off; `buf` keeps what was read past it.
async fn response(c: &mut TcpStream, buf: &mut Vec<u8>) -> (String, String) {
    async fn more(c: &mut TcpStream, buf: &mut Vec<u8>) {
        let mut b = [0u8; 4096];
        let n = c.read(&mut b).await.unwrap();
        assert!(
            n > 0,
            "the proxy closed mid-response: {:?}",
            String::from_utf8_lossy(buf)
        );
        buf.extend_from_slice(&b[..n]);
    }
    let end = loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break end + 4;
        }
        more(c, buf).await;
    };
    let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
    buf.drain(..end);
    let mut body = Vec::new();
    if head.contains("transfer-encoding: chunked") {
        loop {
            let line = loop {
                if let Some(i) = buf.windows(2).position(|w| w == b"\r\n") {
                    break i;
                }
                more(c, buf).await;
            };
            let size_text = String::from_utf8_lossy(&buf[..line]).into_owned();
            let size = usize::from_str_radix(size_text.split(';').next().unwrap().trim(), 16)
                .unwrap_or_else(|_| panic!("chunk size {size_text:?}"));
            buf.drain(..line + 2);
            if size == 0 {
                // Trailer lines, then the empty line.
                loop {
                    let i = loop {
                        if let Some(i) = buf.windows(2).position(|w| w == b"\r\n") {
                            break i;
                        }
                        more(c, buf).await;
                    };
                    buf.drain(..i + 2);
                    if i == 0 {
                        break;
                    }
                }
                break;
            }
            while buf.len() < size + 2 {
                more(c, buf).await;
            }
            body.extend_from_slice(&buf[..size]);
            buf.drain(..size + 2);
        }
    } else {
        let length: usize = head
            .lines()
            .find_map(|l| l.strip_prefix("content-length:"))
            .map(|v| v.trim().parse().unwrap())
            .expect("a length or chunks");
        while buf.len() < length {
            more(c, buf).await;
        }
        body.extend(buf.drain(..length));
    }
    (head, String::from_utf8(body).unwrap())
}

/// Every framing on one client connection, then two requests in one write.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_reply_framing_passes_whole_on_one_kept_connection() {
    bounded(async {
        let (url, seen_up) = upstream(false).await;
        let (proxy, seen) = proxy(&url).await;
        let mut c = TcpStream::connect(proxy.addr()).await.unwrap();
        let mut buf = Vec::new();
        let replies = [
            "len",
            "chunked",
            "info",
            "close",
            "len",
            "conn-close",
            "chunked",
        ];
        for (i, reply) in replies.iter().enumerate() {
            let id = i as u32 + 1;
            c.write_all(request(id, reply, "").as_bytes())
                .await
                .unwrap();
            let (head, body) = response(&mut c, &mut buf).await;
            assert!(head.starts_with("http/1.1 200 "), "{reply}: {head}");
            let expected = if *reply == "chunked" {
                let json = result(id);
                format!("event: message\ndata: {json}\n\n")
            } else {
                result(id)
            };
            assert_eq!(body, expected, "{reply}");
            // The close-delimited body reaches the client chunked, so the connection goes on.
            if *reply == "close" || *reply == "chunked" {
                assert!(
                    head.contains("transfer-encoding: chunked"),
                    "{reply}: {head}"
                );
            }
            assert!(!head.contains("connection: close"), "{reply}: {head}");
        }
        // Pipelined: both in one write, answered in order.
        let two = format!("{}{}", request(8, "len", ""), request(9, "chunked", ""));
        c.write_all(two.as_bytes()).await.unwrap();
        let (_, first) = response(&mut c, &mut buf).await;
        let (_, second) = response(&mut c, &mut buf).await;
        assert_eq!(first, result(8));
        assert!(second.contains(&result(9)), "{second}");

        // The upstream: the client's query forwarded, one connection until it closed one.
        let up = seen_up.lock().unwrap().clone();
        assert_eq!(up.len(), 9);
        assert!(
            up.iter().all(|(_, r)| r.starts_with("POST /mcp?r=")),
            "{up:?}"
        );
        let conns: Vec<usize> = up.iter().map(|(c, _)| *c).collect();
        assert_eq!(conns, [0, 0, 0, 0, 1, 1, 2, 2, 2]);

        tokio::time::sleep(Duration::from_millis(100)).await;
        let v = seen.sorted();
        assert_eq!(v.len(), 9);
        for v in &v {
            assert_eq!(v.outcome, Outcome::ToolSuccess, "{v:?}");
            assert_eq!(v.end, End::Eof, "{v:?}");
            assert!(v.complete, "{v:?}");
        }
        assert_eq!(v[1].event_count, Some(1));
    })
    .await;
}

/// A chunked request body is not the plain path's: hyper takes the connection from there, and
/// the requests before and after it are answered all the same.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_the_plain_path_does_not_take_goes_to_hyper_on_the_same_connection() {
    bounded(async {
        let (url, seen_up) = upstream(false).await;
        let (proxy, seen) = proxy(&url).await;
        let mut c = TcpStream::connect(proxy.addr()).await.unwrap();
        let mut buf = Vec::new();
        c.write_all(request(1, "len", "").as_bytes()).await.unwrap();
        assert_eq!(response(&mut c, &mut buf).await.1, result(1));
        let body = call(2);
        let chunked = format!(
            "POST /mcp?r=len HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n{}0\r\n\r\n",
            chunk(&body)
        );
        c.write_all(chunked.as_bytes()).await.unwrap();
        assert_eq!(response(&mut c, &mut buf).await.1, result(2));
        c.write_all(request(3, "chunked", "").as_bytes()).await.unwrap();
        assert!(response(&mut c, &mut buf).await.1.contains(&result(3)));
        // A client that asks to close is told so, and the connection ends.
        c.write_all(request(4, "len", "Connection: close\r\n").as_bytes())
            .await
            .unwrap();
        let (head, body) = response(&mut c, &mut buf).await;
        assert_eq!(body, result(4));
        assert!(head.contains("connection: close"), "{head}");
        let mut rest = Vec::new();
        let read = tokio::time::timeout(Duration::from_secs(5), c.read_to_end(&mut rest)).await;
        assert!(matches!(read, Ok(Ok(0))), "{read:?} {rest:?}");

        let up = seen_up.lock().unwrap().clone();
        assert_eq!(up.len(), 4, "{up:?}");
        // hyper forwarded the chunked body with its length.
        assert!(up[1].1.ends_with(&call(2)), "{:?}", up[1].1);
        tokio::time::sleep(Duration::from_millis(100)).await;
        let v = seen.sorted();
        assert_eq!(v.len(), 4);
        assert!(v.iter().all(|v| v.outcome == Outcome::ToolSuccess), "{v:?}");
    })
    .await;
}

/// The upstream closes each connection soon after its answer (no `Connection: close`): the
/// next request goes on a new connection and is answered, never a 502.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upstream_that_closed_its_idle_connection_costs_no_request() {
    bounded(async {
        let (url, seen_up) = upstream(true).await;
        let (proxy, seen) = proxy(&url).await;
        let mut c = TcpStream::connect(proxy.addr()).await.unwrap();
        let mut buf = Vec::new();
        for id in 1..=3 {
            c.write_all(request(id, "len", "").as_bytes())
                .await
                .unwrap();
            let (head, body) = response(&mut c, &mut buf).await;
            assert!(head.starts_with("http/1.1 200 "), "{head}");
            assert_eq!(body, result(id));
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        let conns: Vec<usize> = seen_up.lock().unwrap().iter().map(|(c, _)| *c).collect();
        assert_eq!(conns, [0, 1, 2]);
        let v = seen.sorted();
        assert_eq!(v.len(), 3);
        assert!(v.iter().all(|v| v.outcome == Outcome::ToolSuccess), "{v:?}");
    })
    .await;
}
