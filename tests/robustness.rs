//! Arbitrary input never panics and never changes the verdict with the chunking.

use mcp_verdict::har;
use mcp_verdict::{End, Headers, Request, ResponseHead, Session, Verdict};
use proptest::prelude::*;

fn judge(content_type: &str, status: u16, body: &[u8], cuts: &[usize], end: End) -> Verdict {
    let mut session = Session::default();
    let req = Request::new(
        "POST",
        Headers::from_iter([("MCP-Protocol-Version", "2025-11-25")]),
        br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"t","_meta":{"progressToken":1}}}"#,
    );
    let mut ex = session.begin(req);
    ex.on_head(ResponseHead {
        status,
        headers: Headers::from_iter([("Content-Type", content_type)]),
    });
    let mut last = 0;
    for &cut in cuts {
        let cut = cut.min(body.len()).max(last);
        ex.feed(&body[last..cut]);
        last = cut;
    }
    ex.feed(&body[last..]);
    session.finish(&mut ex, end)
}

/// Bytes that look like SSE more often than uniform noise does.
fn sse_bytes() -> impl Strategy<Value = Vec<u8>> {
    let atoms = prop_oneof![
        Just(b"data: ".to_vec()),
        Just(b"data:".to_vec()),
        Just(b"id: 1".to_vec()),
        Just(b"retry: 10".to_vec()),
        Just(b"event: x".to_vec()),
        Just(b": c".to_vec()),
        Just(b"\n".to_vec()),
        Just(b"\r".to_vec()),
        Just(b"\r\n".to_vec()),
        Just(b"\xEF\xBB\xBF".to_vec()),
        Just(br#"{"jsonrpc":"2.0","id":7,"result":{"content":[]}}"#.to_vec()),
        Just(br#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":2}}"#.to_vec()),
        Just(br#"{"jsonrpc":"2.0","id":8,"result":{}}"#.to_vec()),
        prop::collection::vec(any::<u8>(), 0..8),
    ];
    prop::collection::vec(atoms, 0..24).prop_map(|v| v.concat())
}

fn end() -> impl Strategy<Value = End> {
    prop_oneof![Just(End::Eof), Just(End::Reset), Just(End::Open)]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn sse_any_bytes_any_chunking(body in sse_bytes(), cuts in prop::collection::vec(0usize..400, 0..12), end in end()) {
        let mut sorted = cuts.clone();
        sorted.sort_unstable();
        let whole = judge("text/event-stream", 200, &body, &[], end);
        let chunked = judge("text/event-stream", 200, &body, &sorted, end);
        prop_assert_eq!(whole, chunked);
    }

    #[test]
    fn json_any_bytes(body in prop::collection::vec(any::<u8>(), 0..256), status in prop_oneof![Just(200u16), Just(202), Just(404), Just(500)]) {
        let whole = judge("application/json", status, &body, &[], End::Eof);
        let split = judge("application/json", status, &body, &[body.len() / 2], End::Eof);
        prop_assert_eq!(whole, split);
    }

    #[test]
    fn har_reader_never_panics(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        let _ = har::parse(&bytes);
    }

    #[test]
    fn har_reader_never_panics_on_near_har(s in r#"\{"log":\{"entries":\[\{"request":\{"method":"(POST|GET)","headers":\[\],"postData":\{"text":"[^"]{0,20}"\}\},"response":\{"status":-?[0-9]{1,6},"content":\{"text":"[A-Za-z0-9+/=]{0,12}","encoding":"(base64|utf8)"\}\}\}\]\}\}"#) {
        if let Ok(entries) = har::parse(s.as_bytes()) {
            let mut session = mcp_verdict::Driver::default();
            for e in &entries {
                let _ = mcp_verdict::replay::judge_entry(&mut session, e, &mut std::iter::empty());
            }
        }
    }
}
