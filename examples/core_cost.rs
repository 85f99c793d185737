//! Time per exchange of the bare core on a small JSON and SSE reply (no I/O):
//! `cargo run --release --example core_cost [rounds] [json|sse] [driver]` (default 200,000
//! rounds of each). A round count lets an instruction counter take the difference of two runs,
//! which machine load cannot move; a kind runs that one alone; `driver` feeds the exchanges
//! through the [`Driver`](mcp_verdict::Driver) (the adapters' path) instead of the bare
//! session.
//! The exchanges are the `exchange` bench's (`cargo bench --bench exchange`), which times them
//! with criterion and in interleaved rounds.
use mcp_verdict::Session;
use std::time::Instant;

#[path = "../benches/support/exchange.rs"]
mod exchange;

fn main() {
    let only = std::env::args().nth(2);
    let driven = std::env::args().nth(3).as_deref() == Some("driver");
    for (name, ct, bytes) in exchange::kinds() {
        if only.as_deref().is_some_and(|k| k != name) {
            continue;
        }
        let mut session = Session::default();
        let mut driver = mcp_verdict::Driver::new(mcp_verdict::Limits::default());
        let n: usize = match std::env::args().nth(1) {
            Some(a) => a.parse().expect("rounds: a whole number"),
            None => 200_000,
        };
        let t = Instant::now();
        for _ in 0..n {
            if driven {
                exchange::drive(&mut driver, ct, &bytes);
            } else {
                exchange::judge(&mut session, ct, &bytes);
            }
        }
        println!(
            "{name}: {:.2} µs per exchange",
            t.elapsed().as_secs_f64() * 1e6 / n as f64
        );
    }
}
