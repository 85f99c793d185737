//! Allocations per judged exchange, counted by a counting global allocator, on the exchanges
//! of the `core_cost` example (a small JSON reply and the same reply as one SSE event). The
//! bound is the count measured when it was set (now none): a change that allocates more per
//! exchange fails here.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};

use mcp_verdict::{End, Headers, Outcome, Request, ResponseHead, Session};

struct Counting;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

const REQUEST: &[u8] = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"}}}"#;
const REPLY: &[u8] = br#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hello from the bench"}],"isError":false}}"#;

/// Allocations of the judging alone (request parsed, head, body, verdict), per exchange, with
/// the headers built outside the count (a live adapter has them already).
fn per_exchange(content_type: &str, body: &[u8]) -> u64 {
    let mut session = Session::default();
    let rounds = 200;
    let mut total = 0;
    for round in 0..rounds + 1 {
        let request_headers = Headers::from_iter([
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
            ("MCP-Protocol-Version", "2025-11-25"),
        ]);
        let response_headers = Headers::from_iter([
            ("content-type", content_type),
            ("content-length", "120"),
            ("date", "Thu, 03 Dec 2026 06:40:00 GMT"),
        ]);
        let before = ALLOCATIONS.load(Ordering::Relaxed);
        let mut ex = session.begin(Request::new("POST", request_headers, REQUEST));
        ex.on_head(ResponseHead {
            status: 200,
            headers: response_headers,
        });
        ex.feed(body);
        let v = session.finish(&mut ex, End::Eof);
        drop(ex);
        assert_eq!(v.outcome, Outcome::ToolSuccess);
        drop(v);
        // The first round warms the session's maps.
        if round > 0 {
            total += ALLOCATIONS.load(Ordering::Relaxed) - before;
        }
    }
    total / rounds
}

#[test]
fn allocations_per_exchange_stay_bounded() {
    let json = per_exchange("application/json", REPLY);
    let sse = per_exchange(
        "text/event-stream",
        &[b"event: message\ndata: ".as_slice(), REPLY, b"\n\n"].concat(),
    );
    eprintln!("allocations per exchange: json {json}, sse {sse}");
    // None: any allocation a change adds fails here.
    assert_eq!(json, 0, "json: {json} allocations per exchange");
    assert_eq!(sse, 0, "sse: {sse} allocations per exchange");
}

// 12 / 14 on perf before it absorbed main 36e2642 (calls, cli, ...); 50 / 52 after (the shape
// check's paths and a `serde_json::Value` of every message); 27 / 29 on perfcore (issue 17),
// where a conforming message's shape walk allocates nothing; 17 / 19 on perfcore2, where the
// shape check reads a tree borrowed from the text (one `Vec` per object or array, 4 here)
// instead of a `serde_json::Value` (14). 4 / 5 on exch (issue 17, third round): the shape
// check reads a flat list reused between messages (or, for a plain text tool result, nothing),
// the request facts are read by one scan, and the fixed texts (HTTP method, media type, MCP
// method, retry reason) are `Cow<'static, str>`. What is left: the request's `params.name` and
// id list, the JSON body's buffer (the SSE framer's box and buffers), the verdict's tool name.
// 2 / 2 on the fourth round: the session lends each exchange the last one's body buffer or SSE
// state, a single request's id list is its id (no vector), and a set of up to eight headers
// keeps its spans inline. What is left: the request's `params.name` and the verdict's copy of it.
// 0 / 0 on the fifth round: a tool name is a `SmolStr`, held inline up to 23 bytes.
