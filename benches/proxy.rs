//! What the proxy costs: the same loopback `tools/call` sent directly to a tiny hyper server and
//! through `mcp-verdict proxy` in front of it, in interleaved rounds (direct and proxied take
//! turns, so load drift on the machine affects both alike), for a JSON reply and an SSE reply.
//!
//! ```text
//! cargo bench --bench proxy
//! ```
//!
//! Each of the server, the proxy and the client runs on its own single-threaded runtime in its own
//! thread; the client keeps `CONCURRENCY` requests in flight over reqwest. Printed per reply kind:
//! requests per second (median of the rounds) and the latency quantiles over all rounds, direct and
//! proxied, with the ratio of req/s (goal ≥ 0.9) and the p99 added (goal < 1 ms).

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use hdrhistogram::Histogram;
use http_body_util::{BodyExt, Full};
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use mcp_verdict::proxy::{Config, Proxy};
use serde_json::{Value, json};

/// Requests in flight at once.
const CONCURRENCY: usize = 4;
/// Requests per round and target.
const PER_ROUND: usize = 2000;
/// Rounds (each runs direct and proxied, in alternating order).
const ROUNDS: usize = 10;

/// Answers `/sse` with one SSE event and `/json` with a JSON body, echoing the request id.
async fn answer(req: Request<hyper::body::Incoming>) -> Result<Response<Full<Bytes>>, Infallible> {
    let sse = req.uri().path() == "/sse";
    let body = req
        .into_body()
        .collect()
        .await
        .map(|b| b.to_bytes())
        .unwrap_or_default();
    let id = serde_json::from_slice::<Value>(&body)
        .ok()
        .and_then(|v| v.get("id").cloned())
        .unwrap_or(Value::Null);
    let message = json!({
        "jsonrpc": "2.0", "id": id,
        "result": {"content": [{"type": "text", "text": "hello from the bench"}], "isError": false}
    })
    .to_string();
    let (content_type, body) = if sse {
        (
            "text/event-stream",
            format!("event: message\ndata: {message}\n\n"),
        )
    } else {
        ("application/json", message)
    };
    Ok(Response::builder()
        .header("content-type", content_type)
        .body(Full::new(Bytes::from(body)))
        .expect("a valid response"))
}

fn single_thread() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime")
}

/// Starts the tiny server in its own thread; returns its address.
fn start_server() -> SocketAddr {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        single_thread().block_on(async move {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            tx.send(listener.local_addr().unwrap()).unwrap();
            while let Ok((stream, _)) = listener.accept().await {
                let _ = stream.set_nodelay(true);
                tokio::spawn(async move {
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), hyper::service::service_fn(answer))
                        .await;
                });
            }
        });
    });
    rx.recv().unwrap()
}

/// Starts a proxy for `upstream` in its own thread; returns the URL clients use.
fn start_proxy(upstream: String) -> String {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        single_thread().block_on(async move {
            let config = Config::new(upstream, "127.0.0.1:0".parse().unwrap());
            let proxy = Proxy::builder(config)
                .start()
                .await
                .expect("the proxy starts");
            tx.send(proxy.url()).unwrap();
            std::future::pending::<()>().await;
        });
    });
    rx.recv().unwrap()
}

/// Runs `PER_ROUND` calls to `url`; returns the elapsed time and records latencies in `hist`.
async fn round(http: &reqwest::Client, url: &str, hist: &mut Histogram<u64>) -> Duration {
    let started = Instant::now();
    let next = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let mut tasks = Vec::new();
    for _ in 0..CONCURRENCY {
        let (http, url, next) = (http.clone(), url.to_owned(), next.clone());
        tasks.push(tokio::spawn(async move {
            let mut lat = Vec::new();
            loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                if i >= PER_ROUND {
                    return lat;
                }
                let body = format!(
                    r#"{{"jsonrpc":"2.0","id":{i},"method":"tools/call","params":{{"name":"echo","arguments":{{"text":"hi"}}}}}}"#
                );
                let t = Instant::now();
                let resp = http
                    .post(&url)
                    .header("content-type", "application/json")
                    .header("accept", "application/json, text/event-stream")
                    .header("mcp-protocol-version", "2026-07-28")
                    .body(body)
                    .send()
                    .await
                    .expect("a response");
                let bytes = resp.bytes().await.expect("a body");
                assert!(!bytes.is_empty());
                lat.push(t.elapsed());
            }
        }));
    }
    for t in tasks {
        for d in t.await.unwrap() {
            let _ = hist.record(d.as_micros() as u64);
        }
    }
    started.elapsed()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` runs this once, quickly.
    let quick = std::env::args().all(|a| a != "--bench");
    let server = start_server();
    let rt = single_thread();
    let http = reqwest::Client::builder()
        .no_proxy()
        .tcp_nodelay(true)
        .build()
        .unwrap();
    println!(
        "proxy bench: {ROUNDS} interleaved rounds x {PER_ROUND} calls, {CONCURRENCY} in flight, loopback"
    );
    println!(
        "{:<6} {:>12} {:>12} {:>7} {:>9} {:>9} {:>9} {:>9} {:>10}",
        "reply",
        "direct req/s",
        "proxy req/s",
        "ratio",
        "p50 dir",
        "p50 prx",
        "p99 dir",
        "p99 prx",
        "p99 added"
    );
    for kind in ["json", "sse"] {
        let direct = format!("http://{server}/{kind}");
        let proxied = start_proxy(direct.clone());
        let rounds = if quick { 1 } else { ROUNDS };
        let (mut hd, mut hp) = (
            Histogram::<u64>::new(3).unwrap(),
            Histogram::<u64>::new(3).unwrap(),
        );
        let (mut rd, mut rp) = (Vec::new(), Vec::new());
        rt.block_on(async {
            // Warm-up: connections, allocator, caches.
            round(&http, &direct, &mut Histogram::new(3).unwrap()).await;
            round(&http, &proxied, &mut Histogram::new(3).unwrap()).await;
            for r in 0..rounds {
                let order = if r % 2 == 0 {
                    [true, false]
                } else {
                    [false, true]
                };
                for is_direct in order {
                    if is_direct {
                        let t = round(&http, &direct, &mut hd).await;
                        rd.push(PER_ROUND as f64 / t.as_secs_f64());
                    } else {
                        let t = round(&http, &proxied, &mut hp).await;
                        rp.push(PER_ROUND as f64 / t.as_secs_f64());
                    }
                }
            }
        });
        let (d, p) = (median(rd), median(rp));
        let us = |h: &Histogram<u64>, q: f64| h.value_at_quantile(q);
        let added = us(&hp, 0.99) as i64 - us(&hd, 0.99) as i64;
        println!(
            "{kind:<6} {d:>12.0} {p:>12.0} {:>7.3} {:>7}us {:>7}us {:>7}us {:>7}us {:>8}us",
            p / d,
            us(&hd, 0.5),
            us(&hp, 0.5),
            us(&hd, 0.99),
            us(&hp, 0.99),
            added
        );
        println!(
            "       goals: req/s ratio >= 0.9: {}; p99 added < 1 ms: {}",
            if p / d >= 0.9 { "met" } else { "NOT met" },
            if added < 1000 { "met" } else { "NOT met" }
        );
    }
}
