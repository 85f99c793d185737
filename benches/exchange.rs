//! Time per exchange of the bare core (no I/O), on the `core_cost` example's two exchanges: a
//! small `tools/call` answered by a small JSON result, and by the same result as one SSE event.
//! Each iteration builds the request and its headers, gives the head and the body in one piece,
//! and asserts the verdict complete, on one `Session` reused throughout (as a live adapter
//! reuses it).
//!
//! ```text
//! cargo bench --bench exchange
//! ```
//!
//! Criterion's rows (`exchange/json`, `exchange/sse`) give the time per exchange, and
//! `exchange/json-driver`, `exchange/sse-driver` the same fed through the `Driver` (the path of
//! the adapters: request shapes, the recording decision, the finished rows); the run ends
//! with interleaved rounds (the two kinds take turns, order rotated), printing each kind's
//! median time per exchange. Goal: under 1 µs. The `core_cost` example runs the same loop for
//! an instruction counter.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group};
use mcp_verdict::Session;

#[path = "support/exchange.rs"]
mod exchange;

fn exchanges(c: &mut Criterion) {
    let mut group = c.benchmark_group("exchange");
    group.throughput(Throughput::Elements(1));
    group.warm_up_time(Duration::from_secs(1));
    group.measurement_time(Duration::from_secs(3));
    for (name, content_type, body) in exchange::kinds() {
        let mut session = Session::default();
        group.bench_function(name, |b| {
            b.iter(|| exchange::judge(&mut session, content_type, black_box(&body)))
        });
        // The same through the driver, as the adapters feed it.
        let mut driver = mcp_verdict::Driver::new(mcp_verdict::Limits::default());
        group.bench_function(format!("{name}-driver"), |b| {
            b.iter(|| exchange::drive(&mut driver, content_type, black_box(&body)))
        });
    }
    group.finish();
}

/// Interleaved rounds: each kind runs `PER_ROUND` exchanges per round, order rotated, so load
/// drift on a shared machine touches both alike. Prints each kind's median µs per exchange.
fn interleaved() {
    const ROUNDS: usize = 21;
    const PER_ROUND: usize = 100_000;
    let kinds = exchange::kinds();
    let mut sessions: Vec<Session> = kinds.iter().map(|_| Session::default()).collect();
    let mut micros: Vec<Vec<f64>> = vec![Vec::new(); kinds.len()];
    for round in 0..ROUNDS {
        for k in 0..kinds.len() {
            let i = (round + k) % kinds.len();
            let (_, content_type, body) = &kinds[i];
            let session = &mut sessions[i];
            let started = Instant::now();
            for _ in 0..PER_ROUND {
                exchange::judge(session, content_type, black_box(body));
            }
            micros[i].push(started.elapsed().as_secs_f64() * 1e6 / PER_ROUND as f64);
        }
    }
    println!(
        "\ninterleaved rounds ({ROUNDS} rounds of {PER_ROUND} exchanges per kind; median, lowest–highest round):"
    );
    for ((name, ..), m) in kinds.iter().zip(&mut micros) {
        m.sort_by(f64::total_cmp);
        println!(
            "  {name:<5} {:.3} µs per exchange ({:.3}–{:.3})",
            m[m.len() / 2],
            m[0],
            m[m.len() - 1]
        );
    }
}

criterion_group!(benches, exchanges);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
    // `cargo test --benches` runs this binary in test mode: skip the rounds there.
    if std::env::args().any(|a| a == "--bench") {
        interleaved();
    }
}
