//! One small `tools/call` exchange judged by the bare core, as a live adapter judges it: the
//! request and its headers built, the head, the body in one piece, the verdict. Shared by the
//! `exchange` bench and the `core_cost` example, so the two time the same work.

use mcp_verdict::{End, Headers, Request, ResponseHead, Session};

/// The request body: a `tools/call` of `echo`.
pub const REQUEST: &[u8] = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"}}}"#;

/// The reply: a small successful tool result.
pub const REPLY: &[u8] = br#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hello from the bench"}],"isError":false}}"#;

/// The two reply kinds: name, content type, body (the JSON reply, and the same reply as one
/// SSE event).
pub fn kinds() -> [(&'static str, &'static str, Vec<u8>); 2] {
    [
        ("json", "application/json", REPLY.to_vec()),
        (
            "sse",
            "text/event-stream",
            [b"event: message\ndata: ".as_slice(), REPLY, b"\n\n"].concat(),
        ),
    ]
}

/// Judges one exchange on `session` and asserts the reply is complete, so a regression cannot
/// turn the timing into one of a failure path. Inlined, so the loop around it compiles as if
/// written in place.
#[inline(always)]
pub fn judge(session: &mut Session, content_type: &str, body: &[u8]) {
    let headers = Headers::from_iter([
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
        ("MCP-Protocol-Version", "2025-11-25"),
    ]);
    let mut ex = session.begin(Request::new("POST", headers, REQUEST));
    ex.on_head(ResponseHead {
        status: 200,
        headers: Headers::from_iter([
            ("content-type", content_type),
            ("content-length", "120"),
            ("date", "Thu, 03 Dec 2026 06:40:00 GMT"),
        ]),
    });
    ex.feed(body);
    let v = session.finish(&mut ex, End::Eof);
    assert!(v.complete);
}

/// [`judge`] through the [`Driver`](mcp_verdict::Driver), as the proxy and the other adapters
/// feed it: the request as sent, the head, the body, the end; nothing recorded.
#[inline(always)]
pub fn drive(driver: &mut mcp_verdict::Driver, content_type: &str, body: &[u8]) {
    let headers = Headers::from_iter([
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
        ("MCP-Protocol-Version", "2025-11-25"),
    ]);
    let mut flight = driver.begin(mcp_verdict::Sent {
        index: None,
        method: "POST",
        url: "http://127.0.0.1/mcp",
        headers,
        body: REQUEST,
        started: None,
        from_client: false,
    });
    flight.on_head(ResponseHead {
        status: 200,
        headers: Headers::from_iter([
            ("content-type", content_type),
            ("content-length", "120"),
            ("date", "Thu, 03 Dec 2026 06:40:00 GMT"),
        ]),
    });
    flight.feed(body, &mut ());
    let times = mcp_verdict::Times {
        started: None,
        elapsed_ms: Some(1.0),
        arrivals: None,
    };
    let finished = driver.finish(flight, End::Eof, times, &mut ());
    assert!(finished.rows.iter().all(|v| v.complete));
}
