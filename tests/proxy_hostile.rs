//! The cases of the hostile-peers issue (13) that apply to the proxy, against a proxy on
//! 127.0.0.1 in front of an upstream that writes down every request it receives: request
//! smuggling and bad framing never reach the upstream, `Host` is read strictly (exactly one, a
//! loopback name), a slowloris client is cut at the head timeout, and durations too large to add
//! to a clock (`--idle-timeout 1e19s`) are held, not a panic. (Redirects, the connection cap and
//! the size limits: `tests/proxy.rs`; memory per stream: `tests/proxy_streams.rs`.)
//!
//! Every test is bounded in time and in requests.
#![cfg(feature = "cli")]

mod support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_verdict::proxy::{Config, Proxy};
use support::exchange_raw;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpListener;

/// An upstream that answers every request with a small JSON result and keeps its request line.
async fn recording_upstream() -> (String, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let lines = seen.clone();
    tokio::spawn(async move {
        for _ in 0..64 {
            let Ok((mut stream, _)) = listener.accept().await else {
                return;
            };
            let lines = lines.clone();
            tokio::spawn(async move {
                for _ in 0..16 {
                    let Ok(req) = support::read_request(&mut stream).await else {
                        return;
                    };
                    if req.is_empty() {
                        return;
                    }
                    let text = String::from_utf8_lossy(&req);
                    lines
                        .lock()
                        .unwrap()
                        .push(text.lines().next().unwrap_or("").to_owned());
                    let body = r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}"#;
                    let resp = format!(
                        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
                        body.len()
                    );
                    if stream.write_all(resp.as_bytes()).await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    (format!("http://{addr}/mcp"), seen)
}

const BODY: &str = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}"#;

fn request(extra_headers: &str, body: &str) -> String {
    format!(
        "POST /mcp HTTP/1.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\nConnection: close\r\n{extra_headers}\r\n{body}"
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn smuggling_bad_framing_and_foreign_hosts_never_reach_the_upstream() {
    tokio::time::timeout(Duration::from_secs(60), async {
        let (upstream, seen) = recording_upstream().await;
        let proxy = Proxy::builder(Config::new(&upstream, "127.0.0.1:0".parse().unwrap()))
            .start()
            .await
            .unwrap();
        let addr = proxy.addr();
        let smuggled = "DELETE /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n\r\n";
        let len = BODY.len();
        let cases: Vec<(&str, String, &str)> = vec![
            (
                "a valid request",
                request(
                    &format!("Host: 127.0.0.1\r\nContent-Length: {len}\r\n"),
                    BODY,
                ),
                "HTTP/1.1 200",
            ),
            (
                "Content-Length: abc",
                request("Host: 127.0.0.1\r\nContent-Length: abc\r\n", smuggled),
                "HTTP/1.1 400",
            ),
            (
                "Content-Length: -5",
                request("Host: 127.0.0.1\r\nContent-Length: -5\r\n", smuggled),
                "HTTP/1.1 400",
            ),
            (
                "two Content-Lengths",
                request(
                    "Host: 127.0.0.1\r\nContent-Length: 0\r\nContent-Length: 40\r\n",
                    smuggled,
                ),
                "HTTP/1.1 400",
            ),
            (
                "two Hosts, loopback first",
                request(
                    &format!("Host: 127.0.0.1\r\nHost: evil.example\r\nContent-Length: {len}\r\n"),
                    BODY,
                ),
                "HTTP/1.1 400",
            ),
            (
                "Host [::1]evil.example",
                request(
                    &format!("Host: [::1]evil.example\r\nContent-Length: {len}\r\n"),
                    BODY,
                ),
                "HTTP/1.1 4",
            ),
            (
                "Host with user info",
                request(
                    &format!("Host: 127.0.0.1@evil.example\r\nContent-Length: {len}\r\n"),
                    BODY,
                ),
                "HTTP/1.1 4",
            ),
            (
                "no Host",
                request(&format!("Content-Length: {len}\r\n"), BODY),
                "HTTP/1.1 400",
            ),
        ];
        let mut failures = Vec::new();
        for (name, raw, want) in &cases {
            let got = exchange_raw(addr, raw.as_bytes()).await;
            if !got.starts_with(want) {
                failures.push(format!(
                    "{name}: wanted {want:?}, got {:?}",
                    got.lines().next()
                ));
            }
            if got.matches("HTTP/1.1 ").count() > 1 {
                failures.push(format!("{name}: more than one response: {got:?}"));
            }
        }
        // Chunked and Content-Length together: whatever hyper decides, the DELETE hidden after
        // the chunked body's end is never forwarded as a request of its own.
        let both = request(
            "Host: 127.0.0.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 4\r\n",
            &format!("0\r\n\r\n{smuggled}"),
        );
        let _ = exchange_raw(addr, both.as_bytes()).await;
        let lines = seen.lock().unwrap().clone();
        if lines.iter().any(|l| !l.starts_with("POST /mcp ")) || lines.is_empty() {
            failures.push(format!("the upstream received {lines:?}"));
        }
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    })
    .await
    .expect("bounded");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slowloris_client_is_cut_and_huge_durations_are_held() {
    tokio::time::timeout(Duration::from_secs(60), async {
        let (upstream, seen) = recording_upstream().await;
        let mut config = Config::new(&upstream, "127.0.0.1:0".parse().unwrap());
        config.head_timeout = Duration::from_millis(300);
        let proxy = Proxy::builder(config).start().await.unwrap();
        let started = std::time::Instant::now();
        let got = exchange_raw(proxy.addr(), b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n").await;
        let took = started.elapsed();
        assert!(
            took < Duration::from_secs(2),
            "the half-sent head was held {took:?}: {got:?}"
        );
        assert!(seen.lock().unwrap().is_empty());

        // Durations no clock can add: held at the longest wait, and the proxy works.
        let mut config = Config::new(&upstream, "127.0.0.1:0".parse().unwrap());
        config.head_timeout = Duration::MAX;
        config.upstream_head_timeout = Duration::MAX;
        config.idle_timeout = Some(Duration::MAX);
        config.client_timeout = Some(Duration::MAX);
        let proxy = Proxy::builder(config).start().await.unwrap();
        let len = BODY.len();
        for _ in 0..2 {
            let raw = request(
                &format!("Host: 127.0.0.1\r\nContent-Length: {len}\r\n"),
                BODY,
            );
            let got = exchange_raw(proxy.addr(), raw.as_bytes()).await;
            assert!(
                got.starts_with("HTTP/1.1 200") && got.ends_with("}"),
                "{got:?}"
            );
        }
    })
    .await
    .expect("bounded");
}
