//! A whole exchange on arbitrary input: never panics, and the verdict (and everything the
//! observer is told) does not depend on how the body is chunked.
//!
//! Input layout (seeds: six header bytes, then a response body):
//! - byte 0: status, from `STATUSES` (0 = no response head at all);
//! - byte 1: response `Content-Type`, from `CONTENT_TYPES`;
//! - byte 2: bits 0-2 = how the body ended (`END`, mod 5); bit 3 = small limits; bit 4 = a
//!   `Retry-After` header; bit 5 = an `Mcp-Session-Id` header; bit 6 = a second exchange first
//!   (an `initialize` answered with JSON), so the session carries a negotiated version;
//! - byte 3: the request, from `REQUESTS`;
//! - byte 4: the `MCP-Protocol-Version` request header, from `VERSIONS` (index 0 = none);
//! - byte 5: bits 0-2 = `n`, how many chunk-size bytes follow (`b + 1` each, cycled; `n == 0`
//!   feeds one byte at a time);
//! - the rest is the response body.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_verdict::{Message, Observer};
use mcp_verdict::MessageKind as Kind;
use mcp_verdict::sse::SseEvent;
use mcp_verdict::{End, Headers, Limits, Request, ResponseHead, Session, Verdict};

const STATUSES: [u16; 10] = [200, 200, 200, 202, 204, 400, 404, 500, 429, 0];

const CONTENT_TYPES: [&str; 8] = [
    "text/event-stream",
    "application/json",
    "text/event-stream; charset=utf-8",
    "Application/JSON; charset=utf-8",
    "application/vnd.api+json",
    "text/plain",
    "",
    "text/html",
];

const END: [End; 5] = [
    End::Eof,
    End::Reset,
    End::Open,
    End::Timeout,
    End::Cancelled,
];

const REQUESTS: [&str; 12] = [
    r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{},"_meta":{"progressToken":1}}}"#,
    r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"f","version":"1"}}}"#,
    r#"{"jsonrpc":"2.0","id":"a","method":"tools/list"}"#,
    r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    r#"[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t"}},{"jsonrpc":"2.0","id":2,"method":"ping"}]"#,
    r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#,
    r#"{"jsonrpc":"2.0","id":5,"result":{}}"#,
    "not json",
    "",
    r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"progressToken":"p"}}}"#,
    r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","inputResponses":{},"requestState":"s"}}"#,
    r#"{"jsonrpc":"2.0","id":null,"method":"tools/call"}"#,
];

const VERSIONS: [Option<&str>; 6] = [
    None,
    Some("2025-03-26"),
    Some("2025-06-18"),
    Some("2025-11-25"),
    Some("2026-07-28"),
    Some("1999-01-01"),
];

/// What the observer was told, owned.
#[derive(Debug, Default, PartialEq)]
struct Told(Vec<(String, Option<u64>, Option<Kind>, bool)>);

impl Observer for Told {
    fn on_event(&mut self, e: &SseEvent<'_>) {
        self.0.push((
            String::from_utf8_lossy(e.data).into_owned(),
            Some(e.index),
            None,
            false,
        ));
    }
    fn on_message(&mut self, m: &Message<'_>) {
        self.0
            .push((m.raw.to_owned(), m.event, Some(m.kind), m.terminal));
    }
}

struct Case<'a> {
    status: u16,
    content_type: &'a str,
    end: End,
    flags: u8,
    request: &'a str,
    version: Option<&'a str>,
    body: &'a [u8],
}

fn judge(case: &Case<'_>, sizes: &mut dyn Iterator<Item = usize>) -> (Verdict, Told) {
    let limits = if case.flags & 8 != 0 {
        Limits {
            max_event_bytes: 64,
            max_body_bytes: 64,
            max_events: 3,
            ..Limits::default()
        }
    } else {
        Limits::default()
    };
    let mut session = Session::new(limits);
    let mut headers = Headers::from_iter([
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
    ]);
    if let Some(v) = case.version {
        headers.push("MCP-Protocol-Version", v);
    }
    if case.flags & 64 != 0 {
        let init = br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}"#;
        let mut ex = session.begin(Request::new("POST", headers.clone(), init));
        ex.on_head(ResponseHead {
            status: 200,
            headers: Headers::from_iter([("Content-Type", "application/json")]),
        });
        ex.feed(br#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}"#);
        session.finish(&mut ex, End::Eof);
    }
    let mut told = Told::default();
    let mut ex = session.begin(Request::new("POST", headers, case.request.as_bytes()));
    if case.status != 0 {
        let mut response = Headers::new();
        if !case.content_type.is_empty() {
            response.push("Content-Type", case.content_type);
        }
        if case.flags & 16 != 0 {
            response.push("Retry-After", "3");
        }
        if case.flags & 32 != 0 {
            response.push("Mcp-Session-Id", "abc");
        }
        ex.on_head(ResponseHead {
            status: case.status,
            headers: response,
        });
        let mut rest = case.body;
        while !rest.is_empty() {
            let n = sizes.next().unwrap_or(rest.len()).clamp(1, rest.len());
            ex.feed_with(&rest[..n], &mut told);
            rest = &rest[n..];
        }
    }
    let verdict = session.finish_with(&mut ex, case.end, &mut told);
    (verdict, told)
}

fuzz_target!(|input: &[u8]| {
    if input.len() < 6 {
        return;
    }
    let (head, rest) = input.split_at(6);
    let n = usize::from(head[5] & 7);
    if rest.len() < n {
        return;
    }
    let (sizes, body) = rest.split_at(n);
    let case = Case {
        status: STATUSES[usize::from(head[0]) % STATUSES.len()],
        content_type: CONTENT_TYPES[usize::from(head[1]) % CONTENT_TYPES.len()],
        end: END[usize::from(head[2] & 7) % END.len()],
        flags: head[2],
        request: REQUESTS[usize::from(head[3]) % REQUESTS.len()],
        version: VERSIONS[usize::from(head[4]) % VERSIONS.len()],
        body,
    };
    let sizes: Vec<usize> = sizes.iter().map(|&b| usize::from(b) + 1).collect();
    // A JSON body goes through the envelope's fast scan: where it answers, serde_json agrees.
    if let Ok(text) = std::str::from_utf8(body)
        && let Some(scanned) = mcp_verdict::fuzzing::scan_object(text)
    {
        assert_eq!(Ok(scanned), mcp_verdict::fuzzing::parse_object_serde(text));
    }
    let whole = judge(&case, &mut std::iter::empty());
    let chunked = if sizes.is_empty() {
        judge(&case, &mut std::iter::repeat(1))
    } else {
        judge(&case, &mut sizes.iter().copied().cycle())
    };
    assert_eq!(whole, chunked);
    let v = &whole.0;
    assert_eq!(v.complete, v.outcome.is_complete());
    assert_eq!(v.layer, v.outcome.layer());
    // The JSON form is a public contract: it always serializes, and reads back the same.
    let json = serde_json::to_string(v).expect("verdict serializes");
    let back: Verdict = serde_json::from_str(&json).expect("verdict JSON reads back");
    assert_eq!(&back, v);
});
