//! Time per exchange of the bare core on a small JSON and SSE reply (no I/O):
//! `cargo run --release --example core_cost [rounds]` (default 200,000). A round count lets
//! an instruction counter take the difference of two runs, which machine load cannot move.
use mcp_verdict::{End, Headers, Request, ResponseHead, Session};
use std::time::Instant;

fn main() {
    let body = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"}}}"#;
    let reply = br#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hello from the bench"}],"isError":false}}"#;
    let sse = [b"event: message\ndata: ".as_slice(), reply, b"\n\n"].concat();
    for (name, ct, bytes) in [
        ("json", "application/json", reply.to_vec()),
        ("sse", "text/event-stream", sse),
    ] {
        let mut session = Session::default();
        let n: usize = match std::env::args().nth(1) {
            Some(a) => a.parse().expect("rounds: a whole number"),
            None => 200_000,
        };
        let t = Instant::now();
        for _ in 0..n {
            let headers = Headers::from_iter([
                ("Content-Type", "application/json"),
                ("Accept", "application/json, text/event-stream"),
                ("MCP-Protocol-Version", "2025-11-25"),
            ]);
            let mut ex = session.begin(Request::new("POST", headers, body));
            ex.on_head(ResponseHead {
                status: 200,
                headers: Headers::from_iter([
                    ("content-type", ct),
                    ("content-length", "120"),
                    ("date", "Thu, 03 Dec 2026 06:40:00 GMT"),
                ]),
            });
            ex.feed(&bytes);
            let v = session.finish(&mut ex, End::Eof);
            assert!(v.complete);
        }
        println!(
            "{name}: {:.2} µs per exchange",
            t.elapsed().as_secs_f64() * 1e6 / n as f64
        );
    }
}
