//! What judging costs a live client: the same loopback `tools/call` through bare reqwest (send,
//! read every byte) and through this crate's [`Client`] (send, read, verdict), at the same
//! concurrency. The server is a tiny hyper server on 127.0.0.1 in its own thread, answering with
//! a small SSE result or a small JSON body.
//!
//! ```text
//! cargo bench --bench overhead
//! ```
//!
//! Variants, per body kind (`tools_call_sse`, `tools_call_json`):
//! - `reqwest`: bare reqwest, the body serialized per call, all bytes read;
//! - `reqwest+core`: the same, judged on the side by the sans-IO core (`Session`, `Exchange`):
//!   what judging itself costs;
//! - `verdict`: [`Client::request`] then `.verdict()`: core plus the async adapter;
//! - `verdict_prepared`: [`Client::send_prepared`], the wrapper's fast path (serialized once).
//!
//! After criterion's per-request times, the bench prints the throughput loss of each variant
//! against bare reqwest, from criterion's batches and from interleaved rounds (the variants
//! take turns, so a machine whose load drifts affects them alike). Target: under 5 %.
//!
//! The tiny server does no work at all (its reply costs less than the client's request), the
//! worst case for any wrapper. The last table runs the same comparison against a real MCP
//! server, the rmcp Streamable-HTTP server the live tests use (`echo` tool, 2026-07-28, JSON
//! replies), where a call costs what it costs in practice.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group};
use hyper_util::rt::TokioIo;
use mcp_verdict::adapters::{Client, Prepared};
use mcp_verdict::{End, Headers, ProtocolVersion, Request as McpRequest, ResponseHead, Session};
use serde_json::{Value, json};

#[path = "../tests/support/mod.rs"]
mod support;
#[path = "support/tiny.rs"]
mod tiny;
use tiny::answer;

/// Requests in flight at once, for both clients.
const CONCURRENCY: u64 = 4;

/// Starts the server on its own thread and runtime; it lives as long as the bench process.
fn start_server() -> SocketAddr {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("server runtime");
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
                .await
                .expect("bind 127.0.0.1");
            tx.send(listener.local_addr().expect("address"))
                .expect("report the address");
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    continue;
                };
                tokio::spawn(async move {
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), hyper::service::service_fn(answer))
                        .await;
                });
            }
        });
    });
    rx.recv().expect("the server started")
}

fn params() -> Value {
    json!({"name": "echo", "arguments": {"text": "hello"}})
}

/// One request through bare reqwest, with the same body and headers the wrapper sends.
async fn bare(http: &reqwest::Client, url: &str, id: u64) -> usize {
    let message = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params()});
    let body = serde_json::to_vec(&message).expect("JSON");
    let response = http
        .post(url)
        .header("Content-Type", "application/json")
        .header("Accept", "application/json, text/event-stream")
        .header("MCP-Protocol-Version", "2025-11-25")
        .body(body)
        .send()
        .await
        .expect("a response");
    response.bytes().await.expect("a body").len()
}

/// One request through bare reqwest that also decodes the reply, as any client must: the JSON
/// body, or the `data:` of each SSE event, parsed into a `serde_json::Value`.
async fn bare_parsed(http: &reqwest::Client, url: &str, id: u64) -> usize {
    let message = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params()});
    let body = serde_json::to_vec(&message).expect("JSON");
    let response = http
        .post(url)
        .header("Content-Type", "application/json")
        .header("Accept", "application/json, text/event-stream")
        .header("MCP-Protocol-Version", "2025-11-25")
        .body(body)
        .send()
        .await
        .expect("a response");
    let sse = response
        .headers()
        .get("content-type")
        .is_some_and(|v| v.as_bytes().starts_with(b"text/event-stream"));
    let bytes = response.bytes().await.expect("a body");
    let text = std::str::from_utf8(&bytes).expect("UTF-8");
    let mut messages = 0;
    if sse {
        for line in text.lines() {
            if let Some(data) = line.strip_prefix("data: ") {
                messages += usize::from(serde_json::from_str::<Value>(data).is_ok());
            }
        }
    } else {
        messages += usize::from(serde_json::from_str::<Value>(text).is_ok());
    }
    messages
}

/// One request through bare reqwest, judged by the sans-IO core on the side (no adapter): how
/// much of the wrapper's cost is the judging itself.
async fn core_only(http: &reqwest::Client, url: &str, id: u64, session: &Mutex<Session>) -> bool {
    let message = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params()});
    let body = serde_json::to_vec(&message).expect("JSON");
    let headers = [
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
        ("MCP-Protocol-Version", "2025-11-25"),
    ];
    let request = McpRequest::new("POST", Headers::from_iter(headers), &body);
    let mut exchange = session.lock().expect("session").begin(request);
    let mut rb = http.post(url).body(body);
    for (n, v) in headers {
        rb = rb.header(n, v);
    }
    let response = rb.send().await.expect("a response");
    exchange.on_head(ResponseHead {
        status: response.status().as_u16(),
        headers: response
            .headers()
            .iter()
            .map(|(n, v)| (n.as_str(), v.to_str().unwrap_or("")))
            .collect(),
    });
    exchange.feed(&response.bytes().await.expect("a body"));
    let verdict = session
        .lock()
        .expect("session")
        .finish(&mut exchange, End::Eof);
    verdict.complete
}

/// One request through the wrapper: send, read, verdict.
async fn judged(client: &Client) -> bool {
    client
        .request("tools/call", params())
        .await
        .verdict()
        .await
        .complete
}

/// One request through the wrapper's fast path: body serialized once ([`Client::prepare`]),
/// only the id spliced in per send.
async fn judged_prepared(client: &Client, prepared: &Prepared) -> bool {
    client
        .send_prepared(prepared)
        .await
        .verdict()
        .await
        .complete
}

/// Runs `iters` requests with [`CONCURRENCY`] in flight; returns the wall time.
async fn run<F, Fut>(iters: u64, one: F) -> Duration
where
    F: Fn(u64) -> Fut + Clone + Send + 'static,
    Fut: std::future::Future<Output = ()> + Send,
{
    let next = Arc::new(AtomicU64::new(0));
    let started = Instant::now();
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..CONCURRENCY.min(iters.max(1)) {
        let next = next.clone();
        let one = one.clone();
        tasks.spawn(async move {
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= iters {
                    break;
                }
                one(i).await;
            }
        });
    }
    while tasks.join_next().await.is_some() {}
    started.elapsed()
}

/// Mean time per request of each variant, summed over every criterion batch.
static TOTALS: Mutex<Vec<(String, Duration, u64)>> = Mutex::new(Vec::new());

fn record(name: &str, elapsed: Duration, iters: u64) {
    let mut totals = TOTALS.lock().unwrap_or_else(|p| p.into_inner());
    match totals.iter_mut().find(|(n, ..)| n == name) {
        Some((_, d, n)) => {
            *d += elapsed;
            *n += iters;
        }
        None => totals.push((name.to_owned(), elapsed, iters)),
    }
}

fn overhead(c: &mut Criterion) {
    let addr = start_server();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("client runtime");
    for kind in ["sse", "json"] {
        let url = format!("http://{addr}/{kind}");
        let http = reqwest::Client::new();
        let client = Client::builder(url.clone())
            .http_client(reqwest::Client::new())
            .build()
            .expect("a valid URL");
        client.set_protocol(ProtocolVersion::V2025_11_25);
        // Both must work before they are timed.
        rt.block_on(async {
            assert!(bare(&http, &url, 0).await > 0);
            assert!(
                judged(&client).await,
                "the wrapper judged the bench reply incomplete"
            );
        });

        let mut group = c.benchmark_group(format!("tools_call_{kind}"));
        group.throughput(Throughput::Elements(1));
        group.sample_size(30);
        group.measurement_time(Duration::from_secs(6));
        group.warm_up_time(Duration::from_secs(2));
        let name = format!("{kind}/reqwest");
        group.bench_function("reqwest", |b| {
            b.iter_custom(|iters| {
                let (http, url) = (http.clone(), url.clone());
                let d = rt.block_on(run(iters, move |i| {
                    let (http, url) = (http.clone(), url.clone());
                    async move {
                        std::hint::black_box(bare(&http, &url, i).await);
                    }
                }));
                record(&name, d, iters);
                d
            })
        });
        let name = format!("{kind}/parsed");
        group.bench_function("reqwest+parse", |b| {
            b.iter_custom(|iters| {
                let (http, url) = (http.clone(), url.clone());
                let d = rt.block_on(run(iters, move |i| {
                    let (http, url) = (http.clone(), url.clone());
                    async move {
                        std::hint::black_box(bare_parsed(&http, &url, i).await);
                    }
                }));
                record(&name, d, iters);
                d
            })
        });
        let name = format!("{kind}/core");
        let session = Arc::new(Mutex::new(Session::default()));
        group.bench_function("reqwest+core", |b| {
            b.iter_custom(|iters| {
                let (http, url, session) = (http.clone(), url.clone(), session.clone());
                let d = rt.block_on(run(iters, move |i| {
                    let (http, url, session) = (http.clone(), url.clone(), session.clone());
                    async move {
                        std::hint::black_box(core_only(&http, &url, i, &session).await);
                    }
                }));
                record(&name, d, iters);
                d
            })
        });
        let name = format!("{kind}/verdict");
        group.bench_function("verdict", |b| {
            b.iter_custom(|iters| {
                let client = client.clone();
                let d = rt.block_on(run(iters, move |_| {
                    let client = client.clone();
                    async move {
                        std::hint::black_box(judged(&client).await);
                    }
                }));
                record(&name, d, iters);
                d
            })
        });
        let name = format!("{kind}/prepared");
        let prepared = Arc::new(client.prepare("tools/call", params()));
        group.bench_function("verdict_prepared", |b| {
            b.iter_custom(|iters| {
                let (client, prepared) = (client.clone(), prepared.clone());
                let d = rt.block_on(run(iters, move |_| {
                    let (client, prepared) = (client.clone(), prepared.clone());
                    async move {
                        std::hint::black_box(judged_prepared(&client, &prepared).await);
                    }
                }));
                record(&name, d, iters);
                d
            })
        });
        group.finish();
    }
}

/// Interleaved rounds (every variant once per round, order rotated): per variant, requests per
/// second over all rounds and the median of its per-round time ratios to the two baselines. Robust to a machine
/// whose load drifts during the run.
fn interleaved(rt: &tokio::runtime::Runtime, addr: SocketAddr, kind: &str) -> Vec<(f64, f64, f64)> {
    const ROUNDS: usize = 15;
    const PER_ROUND: u64 = 3000;
    let url = format!("http://{addr}/{kind}");
    let http = reqwest::Client::new();
    let client = Client::builder(url.clone())
        .http_client(reqwest::Client::new())
        .build()
        .expect("a valid URL");
    client.set_protocol(ProtocolVersion::V2025_11_25);
    let session = Arc::new(Mutex::new(Session::default()));
    let prepared = Arc::new(client.prepare("tools/call", params()));
    let variants: [Box<dyn Fn() -> Duration>; 5] = [
        Box::new(|| {
            let (http, url) = (http.clone(), url.clone());
            rt.block_on(run(PER_ROUND, move |i| {
                let (http, url) = (http.clone(), url.clone());
                async move {
                    std::hint::black_box(bare(&http, &url, i).await);
                }
            }))
        }),
        Box::new(|| {
            let (http, url) = (http.clone(), url.clone());
            rt.block_on(run(PER_ROUND, move |i| {
                let (http, url) = (http.clone(), url.clone());
                async move {
                    std::hint::black_box(bare_parsed(&http, &url, i).await);
                }
            }))
        }),
        Box::new(|| {
            let (http, url, session) = (http.clone(), url.clone(), session.clone());
            rt.block_on(run(PER_ROUND, move |i| {
                let (http, url, session) = (http.clone(), url.clone(), session.clone());
                async move {
                    std::hint::black_box(core_only(&http, &url, i, &session).await);
                }
            }))
        }),
        Box::new(|| {
            let client = client.clone();
            rt.block_on(run(PER_ROUND, move |_| {
                let client = client.clone();
                async move {
                    std::hint::black_box(judged(&client).await);
                }
            }))
        }),
        Box::new(|| {
            let (client, prepared) = (client.clone(), prepared.clone());
            rt.block_on(run(PER_ROUND, move |_| {
                let (client, prepared) = (client.clone(), prepared.clone());
                async move {
                    std::hint::black_box(judged_prepared(&client, &prepared).await);
                }
            }))
        }),
    ];
    let table = take_turns(&variants, ROUNDS, PER_ROUND);
    table
        .iter()
        .map(|(rate, losses)| (*rate, losses[0], losses[1]))
        .collect()
}

/// Runs every variant once (warm-up), then once per round for `rounds` rounds, the order
/// rotated, each run `per_round` requests. Per variant: requests per second over all rounds,
/// and the median per-round throughput loss against variant 0 and against variant 1.
fn take_turns(
    variants: &[Box<dyn Fn() -> Duration + '_>],
    rounds: usize,
    per_round: u64,
) -> Vec<(f64, [f64; 2])> {
    for v in variants {
        v();
    }
    let k = variants.len();
    let mut totals = vec![0.0f64; k];
    let mut ratios: Vec<[Vec<f64>; 2]> = (0..k).map(|_| Default::default()).collect();
    for round in 0..rounds {
        let mut times = vec![0.0f64; k];
        for j in 0..k {
            let i = (round + j) % k;
            times[i] = variants[i]().as_secs_f64();
        }
        for i in 0..k {
            totals[i] += times[i];
            for (base, r) in ratios[i].iter_mut().enumerate() {
                r.push(times[base.min(k - 1)] / times[i]);
            }
        }
    }
    let median_loss = |r: &mut Vec<f64>| {
        r.sort_by(f64::total_cmp);
        (1.0 - r[rounds / 2]) * 100.0
    };
    let n = (rounds as u64 * per_round) as f64;
    (0..k)
        .map(|i| {
            let [a, b] = &mut ratios[i];
            (n / totals[i], [median_loss(a), median_loss(b)])
        })
        .collect()
}

/// Starts the rmcp server on its own thread and runtime; it lives as long as the bench process.
fn start_rmcp_server() -> String {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("server runtime");
        rt.block_on(async move {
            let server = support::rmcp_server(support::Mode::ModernJson).await;
            tx.send(server.url.clone()).expect("report the URL");
            std::future::pending::<()>().await;
            drop(server);
        });
    });
    rx.recv().expect("the rmcp server started")
}

/// One `echo` call to the rmcp server through bare reqwest, with the body and headers a
/// 2026-07-28 client sends (as the wrapper sends them).
async fn bare_rmcp(http: &reqwest::Client, url: &str, id: u64) -> usize {
    let message = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
        "name": "echo", "arguments": {"text": "hello"},
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "1"},
        },
    }});
    let body = serde_json::to_vec(&message).expect("JSON");
    let response = http
        .post(url)
        .header("Content-Type", "application/json")
        .header("Accept", "application/json, text/event-stream")
        .header("MCP-Protocol-Version", "2026-07-28")
        .header("Mcp-Method", "tools/call")
        .header("Mcp-Name", "echo")
        .body(body)
        .send()
        .await
        .expect("a response");
    response.bytes().await.expect("a body").len()
}

/// Interleaved rounds against the rmcp server: bare reqwest, then the wrapper.
fn interleaved_rmcp(rt: &tokio::runtime::Runtime, url: &str) -> Vec<(f64, f64)> {
    const ROUNDS: usize = 15;
    const PER_ROUND: u64 = 1000;
    let http = reqwest::Client::new();
    let client = Client::builder(url)
        .http_client(reqwest::Client::new())
        .build()
        .expect("a valid URL");
    client.set_protocol(ProtocolVersion::V2026_07_28);
    let echo = || json!({"name": "echo", "arguments": {"text": "hello"}});
    let url = url.to_owned();
    rt.block_on(async {
        assert!(bare_rmcp(&http, &url, 0).await > 0);
        let v = client.request("tools/call", echo()).await.verdict().await;
        assert_eq!(v.outcome, mcp_verdict::Outcome::ToolSuccess, "{v:?}");
    });
    let variants: [Box<dyn Fn() -> Duration>; 2] = [
        Box::new(|| {
            let (http, url) = (http.clone(), url.clone());
            rt.block_on(run(PER_ROUND, move |i| {
                let (http, url) = (http.clone(), url.clone());
                async move {
                    std::hint::black_box(bare_rmcp(&http, &url, i).await);
                }
            }))
        }),
        Box::new(|| {
            let client = client.clone();
            rt.block_on(run(PER_ROUND, move |_| {
                let client = client.clone();
                async move {
                    let v = client.request("tools/call", echo()).await.verdict().await;
                    std::hint::black_box(v.complete);
                }
            }))
        }),
    ];
    take_turns(&variants, ROUNDS, PER_ROUND)
        .into_iter()
        .map(|(rate, losses)| (rate, losses[0]))
        .collect()
}

const VARIANTS: [&str; 5] = [
    "reqwest",
    "reqwest+parse",
    "reqwest+core",
    "Client",
    "Client prepared",
];

/// One row per variant: requests per second and the throughput loss against bare reqwest and
/// against reqwest that decodes the reply.
fn table(kind: &str, rows: &[(f64, f64, f64)]) {
    println!(
        "  {kind}:  {:<16} {:>9}  {:>16}  {:>16}",
        "variant", "req/s", "loss vs reqwest", "loss vs +parse"
    );
    for (name, (rate, bare, parsed)) in VARIANTS.iter().zip(rows) {
        println!("        {name:<16} {rate:>9.0}  {bare:>+15.1}%  {parsed:>+15.1}%");
    }
}

fn summary() {
    let totals = TOTALS.lock().unwrap_or_else(|p| p.into_inner());
    let mean = |name: &str| {
        totals
            .iter()
            .find(|(n, ..)| n == name)
            .map(|(_, d, n)| d.as_secs_f64() / (*n).max(1) as f64)
    };
    println!("\ncriterion batches ({CONCURRENCY} in flight, mean over all batches):");
    for kind in ["sse", "json"] {
        let keys = ["reqwest", "parsed", "core", "verdict", "prepared"];
        let means: Option<Vec<f64>> = keys.iter().map(|k| mean(&format!("{kind}/{k}"))).collect();
        let Some(means) = means else {
            continue;
        };
        let rows: Vec<(f64, f64, f64)> = means
            .iter()
            .map(|m| {
                (
                    1.0 / m,
                    (1.0 - means[0] / m) * 100.0,
                    (1.0 - means[1] / m) * 100.0,
                )
            })
            .collect();
        table(kind, &rows);
    }
}

criterion_group!(benches, overhead);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
    summary();
    // `cargo test --benches` runs this binary in test mode: skip the long A/B rounds there.
    if std::env::args().any(|a| a == "--bench") {
        let addr = start_server();
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("client runtime");
        println!(
            "\ninterleaved rounds ({CONCURRENCY} in flight, 15 rounds of 3000 each; loss = median of per-round time ratios):"
        );
        for kind in ["sse", "json"] {
            table(kind, &interleaved(&rt, addr, kind));
        }
        let url = start_rmcp_server();
        println!(
            "\nagainst the rmcp Streamable-HTTP server (echo, 2026-07-28, JSON; {CONCURRENCY} in flight, 15 rounds of 1000):"
        );
        println!(
            "  {:<16} {:>9}  {:>16}",
            "variant", "req/s", "loss vs reqwest"
        );
        for (name, (rate, loss)) in ["reqwest", "Client"]
            .iter()
            .zip(interleaved_rmcp(&rt, &url))
        {
            println!("  {name:<16} {rate:>9.0}  {loss:>+15.1}%");
        }
    }
}
