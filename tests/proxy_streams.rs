//! 1,000 SSE streams through one proxy: memory per stream bounded, a slow client stalls no one.
//! In its own test binary so that the memory reading is not mixed with other tests'.
#![cfg(feature = "cli")]

mod support;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use mcp_verdict::Outcome;
use mcp_verdict::proxy::{Config, Proxy};
use support::{ProxyVerdicts as Verdicts, bounded, chunk, post, read_request};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

const CALL: &str =
    r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"slow","arguments":{}}}"#;

fn loopback() -> SocketAddr {
    "127.0.0.1:0".parse().unwrap()
}

fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0)
}

/// Streams held open at once in the many-streams test.
const STREAMS: usize = 1000;
/// The bound docs/proxy.md states for the memory of one open SSE stream through the proxy
/// (measured here with both ends of every connection in the same process).
const KIB_PER_STREAM: u64 = 64;

/// 1,000 SSE streams open at once through one proxy, each with its first event delivered and
/// its final event pending; memory grows by less than `KIB_PER_STREAM` per stream; a client
/// that stops reading a large stream does not hold up the others; every stream then completes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_streams_with_bounded_memory_and_a_slow_client() {
    bounded(async {
        let upstream = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/mcp", upstream.local_addr().unwrap());
        let release = Arc::new(tokio::sync::Notify::new());
        let released = Arc::new(std::sync::atomic::AtomicBool::new(false));
        {
            let (release, released) = (release.clone(), released.clone());
            tokio::spawn(async move {
                while let Ok((mut s, _)) = upstream.accept().await {
                    let (release, released) = (release.clone(), released.clone());
                    tokio::spawn(async move {
                        let req = read_request(&mut s).await.unwrap_or_default();
                        let slow = String::from_utf8_lossy(&req).contains("\"slow-reader\"");
                        let head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n";
                        let first = chunk(&support::progress_event("t", 1));
                        if s.write_all(format!("{head}{first}").as_bytes()).await.is_err() {
                            return;
                        }
                        if slow {
                            // 32 MiB of progress events for a client that does not read them.
                            let event = chunk(&support::progress_event("t", 2).repeat(400));
                            for _ in 0..(32 << 20) / event.len() {
                                if s.write_all(event.as_bytes()).await.is_err() {
                                    return;
                                }
                            }
                            return;
                        }
                        let wait = release.notified();
                        if !released.load(std::sync::atomic::Ordering::SeqCst) {
                            wait.await;
                        }
                        let last = chunk(r#"data: {"jsonrpc":"2.0","id":7,"result":{"content":[]}}

"#);
                        let _ = s.write_all(format!("{last}0\r\n\r\n").as_bytes()).await;
                    });
                }
            });
        }
        let mut config = Config::new(url, loopback());
        config.max_connections = STREAMS + 16;
        let seen = Arc::new(Verdicts::default());
        let proxy = Proxy::builder(config).sink(seen.clone()).start().await.unwrap();
        let addr = proxy.addr();

        // Warm up (runtime, allocator), then measure.
        let before = rss_kib();
        let mut clients = Vec::with_capacity(STREAMS);
        for _ in 0..STREAMS {
            let mut c = TcpStream::connect(addr).await.unwrap();
            c.write_all(post("/mcp", CALL).as_bytes()).await.unwrap();
            clients.push(c);
        }
        let mut firsts = Vec::new();
        for c in &mut clients {
            let mut got = Vec::new();
            let mut buf = [0u8; 2048];
            while !String::from_utf8_lossy(&got).contains("notifications/progress") {
                let n = c.read(&mut buf).await.unwrap();
                assert!(n > 0);
                got.extend_from_slice(&buf[..n]);
            }
            firsts.push(got);
        }
        // A slow client: asks for a large stream and never reads it.
        let slow_body = CALL.replace("\"slow\"", "\"slow-reader\"");
        let mut slow = TcpStream::connect(addr).await.unwrap();
        slow.write_all(post("/mcp", &slow_body).as_bytes()).await.unwrap();
        tokio::time::sleep(Duration::from_millis(500)).await;
        let during = rss_kib();
        let per_stream = during.saturating_sub(before) / STREAMS as u64;
        eprintln!(
            "{STREAMS} open SSE streams (+1 stalled 32 MiB stream): RSS {before} KiB -> {during} KiB, {per_stream} KiB per stream"
        );
        assert!(
            per_stream < KIB_PER_STREAM,
            "{per_stream} KiB per stream (bound {KIB_PER_STREAM} KiB)"
        );

        // Release the final events: every other client completes while the slow one stalls.
        released.store(true, std::sync::atomic::Ordering::SeqCst);
        release.notify_waiters();
        for (c, mut got) in clients.into_iter().zip(firsts) {
            let mut c = c;
            tokio::time::timeout(Duration::from_secs(30), c.read_to_end(&mut got))
                .await
                .expect("a stream completes while another client stalls")
                .unwrap();
            let text = String::from_utf8_lossy(&got);
            assert!(text.contains(r#""id":7,"result""#), "final event delivered");
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
        let verdicts = seen.sorted();
        let done = verdicts.iter().filter(|v| v.outcome == Outcome::ToolSuccess).count();
        assert_eq!(done, STREAMS);
        drop(slow);
    })
    .await;
}
