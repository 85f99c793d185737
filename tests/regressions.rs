//! Minimized inputs found by fuzzing (`fuzz/`), kept as tests.

use mcp_verdict::{End, Headers, LimitKind, Limits, Request, ResponseHead, Session, Verdict};

const TOOLS_CALL: &[u8] =
    br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t"}}"#;

/// Judges `body` as an SSE reply to a `tools/call`, fed in chunks of `chunk` bytes.
fn judge(limits: Limits, body: &[u8], chunk: usize, end: End) -> Verdict {
    let mut session = Session::new(limits);
    let headers = Headers::from_iter([("MCP-Protocol-Version", "2025-11-25")]);
    let mut ex = session.begin(Request::new("POST", headers, TOOLS_CALL));
    ex.on_head(ResponseHead {
        status: 200,
        headers: Headers::from_iter([("Content-Type", "text/event-stream")]),
    });
    for piece in body.chunks(chunk.max(1)) {
        ex.feed(piece);
    }
    session.finish(&mut ex, end)
}

fn events(n: usize) -> Vec<u8> {
    let event = b"data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\"}\n\n";
    event.repeat(n)
}

/// fuzz `exchange`, crash-72fe8c90: with `max_events` 3 and `max_event_bytes` 64, a body whose
/// 4th event is followed by an over-long line. Fed whole, the framer goes on after the 4th event
/// (the event-count limit is only looked at when `feed` returns) and the over-long line then
/// reports `max_event_bytes`; fed one byte at a time, `max_events` is reported. The limit hit
/// first in the byte stream (`max_events`) should win in both.
#[test]
fn limit_reported_does_not_depend_on_chunking() {
    let limits = Limits {
        max_event_bytes: 64,
        max_events: 3,
        ..Limits::default()
    };
    let mut body = events(4);
    body.extend_from_slice(b"data: ");
    body.extend_from_slice(&[b'x'; 80]);
    body.extend_from_slice(b"\n\n");
    let whole = judge(limits, &body, body.len(), End::Eof);
    let bytewise = judge(limits, &body, 1, End::Eof);
    assert_eq!(bytewise.limit.map(LimitKind::name), Some("max_events"));
    assert_eq!(whole, bytewise);
}

/// Same cause, without the event-size limit: events after the one over `max_events` are still
/// counted when they arrive in the same chunk, so `event_count` depends on the chunking.
#[test]
fn event_count_over_max_events_does_not_depend_on_chunking() {
    let limits = Limits {
        max_events: 3,
        ..Limits::default()
    };
    let body = events(6);
    let whole = judge(limits, &body, body.len(), End::Eof);
    let bytewise = judge(limits, &body, 1, End::Eof);
    let per_event = judge(limits, &body, body.len() / 6, End::Eof);
    assert_eq!(whole.limit.map(LimitKind::name), Some("max_events"));
    assert_eq!(whole, bytewise);
    assert_eq!(whole, per_event);
}

/// Same cause: fields after the event over `max_events` still reach the framer when they arrive
/// in the same chunk, so `last_event_id` (and the `retry` advice) depend on the chunking.
#[test]
fn last_event_id_after_max_events_does_not_depend_on_chunking() {
    let limits = Limits {
        max_events: 3,
        ..Limits::default()
    };
    let mut body = events(4);
    body.extend_from_slice(b"id: 9\nretry: 5000\ndata: {}\n\n");
    let whole = judge(limits, &body, body.len(), End::Eof);
    let bytewise = judge(limits, &body, 1, End::Eof);
    assert_eq!(bytewise.last_event_id, None);
    assert_eq!(whole, bytewise);
}

/// fuzz `exchange`, crash-e57f1832: a one-line event whose `data:` line fits `max_event_bytes`
/// but whose CRLF line end does not. The framer's in-place path for one-line events (taken when
/// the blank line is in the same chunk) skipped the size check that the blank line makes on the
/// byte-by-byte path, so the whole body dispatched the event and the bytewise feed reported the
/// limit.
#[test]
fn one_line_event_counts_its_line_end_against_the_size_limit() {
    let limits = Limits {
        max_event_bytes: 64,
        ..Limits::default()
    };
    let line = format!("data: {}", "x".repeat(57)); // 63 bytes, then CRLF: 65
    let body = format!("{line}\r\n\r\n");
    let whole = judge(limits, body.as_bytes(), body.len(), End::Eof);
    let bytewise = judge(limits, body.as_bytes(), 1, End::Eof);
    assert_eq!(bytewise.limit.map(LimitKind::name), Some("max_event_bytes"));
    assert_eq!(whole, bytewise);
    // With LF the event is 64 bytes: within the limit on both paths.
    let body = format!("{line}\n\n");
    let whole = judge(limits, body.as_bytes(), body.len(), End::Eof);
    assert_eq!(whole.limit, None);
    assert_eq!(whole, judge(limits, body.as_bytes(), 1, End::Eof));
}
