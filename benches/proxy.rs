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

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use hyper_util::rt::TokioIo;
use mcp_verdict::proxy::{Config, Proxy};

#[path = "support/tiny.rs"]
mod tiny;
use tiny::answer;

/// Requests in flight at once.
const CONCURRENCY: usize = 4;
/// Requests per round and target.
const PER_ROUND: usize = 2000;
/// Rounds (each runs direct and proxied, in alternating order).
const ROUNDS: usize = 10;

/// CPU time (ns) each thread of this process has used so far, by thread name, from
/// `/proc/self/task/*/schedstat` (Linux; empty elsewhere). The server, the proxies and the client
/// run on named threads, so a round's CPU per request can be split by role.
fn cpu_by_thread() -> std::collections::HashMap<String, u64> {
    let mut out = std::collections::HashMap::new();
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return out;
    };
    for task in tasks.flatten() {
        let dir = task.path();
        let name = std::fs::read_to_string(dir.join("comm")).unwrap_or_default();
        let ns = std::fs::read_to_string(dir.join("schedstat"))
            .ok()
            .and_then(|s| s.split_whitespace().next()?.parse::<u64>().ok())
            .unwrap_or(0);
        *out.entry(name.trim().to_owned()).or_default() += ns;
    }
    out
}

/// CPU microseconds per request by role over one round, from two [`cpu_by_thread`] readings.
#[derive(Default, Clone, Copy)]
struct Cpu {
    client: f64,
    server: f64,
    proxy: f64,
    other: f64,
}

impl Cpu {
    fn between(
        before: &std::collections::HashMap<String, u64>,
        after: &std::collections::HashMap<String, u64>,
        calls: usize,
    ) -> Cpu {
        let mut cpu = Cpu::default();
        for (name, ns) in after {
            let d = ns.saturating_sub(before.get(name).copied().unwrap_or(0)) as f64;
            let us = d / 1e3 / calls as f64;
            match name.as_str() {
                "bench-client" => cpu.client += us,
                "bench-server" => cpu.server += us,
                n if n.starts_with("bench-proxy") => cpu.proxy += us,
                _ => cpu.other += us,
            }
        }
        cpu
    }

    fn add(&mut self, o: Cpu) {
        self.client += o.client;
        self.server += o.server;
        self.proxy += o.proxy;
        self.other += o.other;
    }

    fn scale(self, k: f64) -> Cpu {
        Cpu {
            client: self.client * k,
            server: self.server * k,
            proxy: self.proxy * k,
            other: self.other * k,
        }
    }

    /// The most requests per second `cores` cores can serve at these costs, each role being
    /// one thread: bounded by the total CPU over the cores and by the busiest single thread.
    fn bound(self, cores: f64) -> f64 {
        let total = self.client + self.server + self.proxy + self.other;
        let busiest = self.client.max(self.server).max(self.proxy);
        (cores * 1e6 / total).min(1e6 / busiest)
    }
}

fn single_thread() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime")
}

fn named(name: &str, f: impl FnOnce() + Send + 'static) {
    std::thread::Builder::new()
        .name(name.into())
        .spawn(f)
        .expect("a thread");
}

/// Starts the tiny server in its own thread; returns its address.
fn start_server() -> SocketAddr {
    let (tx, rx) = std::sync::mpsc::channel();
    named("bench-server", move || {
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
    named("bench-proxy", move || {
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
    // The client runs on a named thread too, so its CPU is told apart from the others'.
    std::thread::Builder::new()
        .name("bench-client".into())
        .spawn(client_main)
        .expect("a thread")
        .join()
        .expect("the bench ran");
}

fn client_main() {
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
        let (mut cd, mut cp) = (Cpu::default(), Cpu::default());
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
                    let before = cpu_by_thread();
                    if is_direct {
                        let t = round(&http, &direct, &mut hd).await;
                        rd.push(PER_ROUND as f64 / t.as_secs_f64());
                        cd.add(Cpu::between(&before, &cpu_by_thread(), PER_ROUND));
                    } else {
                        let t = round(&http, &proxied, &mut hp).await;
                        rp.push(PER_ROUND as f64 / t.as_secs_f64());
                        cp.add(Cpu::between(&before, &cpu_by_thread(), PER_ROUND));
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
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let (cd, cp) = (cd.scale(1.0 / rounds as f64), cp.scale(1.0 / rounds as f64));
        for (label, c) in [("direct", cd), ("proxied", cp)] {
            println!(
                "       CPU us/request {label:<7}: client {:.1}, server {:.1}, proxy {:.1}, other {:.1}; bound on {cores} cores {:.0} req/s",
                c.client,
                c.server,
                c.proxy,
                c.other,
                c.bound(cores as f64)
            );
        }
        println!(
            "       ratio the CPU costs allow on {cores} cores: {:.3} (measured {:.3})",
            cp.bound(cores as f64) / cd.bound(cores as f64),
            p / d
        );
    }
}
