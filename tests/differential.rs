//! Differential tests of the SSE framer.
//!
//! 1. A small, obviously correct `String`-based reference of the WHATWG "Server-sent events"
//!    parsing and dispatch steps (decode the whole body as UTF-8 with replacement, drop one leading
//!    BOM, split lines on CRLF / CR / LF, field rules, dispatch rules, no dispatch of an event left
//!    without its blank line), and a property: for SSE-like random bytes in any chunking,
//!    `mcp_verdict::sse::SseFramer` dispatches exactly what the reference dispatches.
//! 2. Deterministic tests of where `eventsource-stream` 0.2.3 and `sse-stream` 0.2 (the parser
//!    under rmcp) read a stream differently from WHATWG. Each asserts what that crate actually
//!    does today (so a test fails when a new version changes behaviour) and that ours matches
//!    the reference.

use std::convert::Infallible;
use std::pin::pin;

use bytes::Bytes;
use futures::StreamExt;
use futures::executor::block_on;
use mcp_verdict::sse::{SseEvent, SseFramer, SseSink};
use proptest::prelude::*;

/// One dispatched event: type buffer (empty when absent), data, last event id (`None` until an
/// `id` field was applied). All text decoded with replacement.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Ev {
    event_type: String,
    data: String,
    last_event_id: Option<String>,
}

/// What reading a whole stream gives.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
struct Read {
    events: Vec<Ev>,
    /// Valid `retry` values, in order.
    retries: Vec<u64>,
    /// The last event id string at the end of the stream.
    last_event_id: Option<String>,
}

// --- the reference ------------------------------------------------------------------------

/// WHATWG, read literally, on `String`s.
fn reference(input: &[u8]) -> Read {
    // "Streams must be decoded using the UTF-8 decode algorithm": invalid sequences become
    // U+FFFD. "One leading U+FEFF BYTE ORDER MARK character must be ignored if any are present."
    let decoded = String::from_utf8_lossy(input);
    let text = decoded.strip_prefix('\u{FEFF}').unwrap_or(&decoded);

    // Lines end in CRLF, a lone LF or a lone CR. Text after the last line end is not a line:
    // "Once the end of the file is reached, any pending data must be discarded."
    let mut lines = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find(['\r', '\n']) {
        lines.push(&rest[..i]);
        let end = if rest[i..].starts_with("\r\n") { 2 } else { 1 };
        rest = &rest[i + end..];
    }

    let mut out = Read::default();
    let mut data = String::new();
    let mut event_type = String::new();
    let mut last_event_id_buffer: Option<String> = None;
    for line in lines {
        if line.is_empty() {
            // Dispatch the event.
            out.last_event_id = last_event_id_buffer.clone();
            if data.is_empty() {
                event_type.clear();
                continue;
            }
            if data.ends_with('\n') {
                data.pop();
            }
            out.events.push(Ev {
                event_type: std::mem::take(&mut event_type),
                data: std::mem::take(&mut data),
                last_event_id: out.last_event_id.clone(),
            });
            continue;
        }
        if line.starts_with(':') {
            continue; // comment
        }
        let (field, value) = match line.find(':') {
            Some(i) => {
                let value = &line[i + 1..];
                (&line[..i], value.strip_prefix(' ').unwrap_or(value))
            }
            None => (line, ""),
        };
        match field {
            "event" => event_type = value.to_owned(),
            "data" => {
                data.push_str(value);
                data.push('\n');
            }
            // An id containing NUL is ignored.
            "id" if !value.contains('\0') => last_event_id_buffer = Some(value.to_owned()),
            // Only ASCII digits; anything else is ignored.
            "retry" if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) => {
                let ms = value.bytes().fold(0u64, |acc, d| {
                    acc.saturating_mul(10).saturating_add(u64::from(d - b'0'))
                });
                out.retries.push(ms);
            }
            _ => {} // unknown fields are ignored
        }
    }
    out
}

// --- ours ---------------------------------------------------------------------------------

fn lossy(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[derive(Default)]
struct Collect(Read);

impl SseSink for Collect {
    fn on_event(&mut self, e: &SseEvent<'_>) {
        self.0.events.push(Ev {
            event_type: lossy(e.event_type),
            data: lossy(e.data),
            last_event_id: e.last_event_id.map(lossy),
        });
    }
    fn on_retry(&mut self, ms: u64, _offset: u64) {
        self.0.retries.push(ms);
    }
}

/// Our framer over `input` cut at `cuts` (sorted positions; out-of-range ones are clamped).
fn ours(input: &[u8], cuts: &[usize]) -> Read {
    let mut framer = SseFramer::new(1 << 20);
    let mut sink = Collect::default();
    let mut last = 0;
    for &cut in cuts {
        let cut = cut.clamp(last, input.len());
        framer.feed(&input[last..cut], &mut sink).unwrap();
        last = cut;
    }
    framer.feed(&input[last..], &mut sink).unwrap();
    sink.0.last_event_id = framer.last_event_id().map(lossy);
    sink.0
}

fn ours_whole(input: &[u8]) -> Read {
    ours(input, &[])
}

fn ev(event_type: &str, data: &str, last_event_id: Option<&str>) -> Ev {
    Ev {
        event_type: event_type.into(),
        data: data.into(),
        last_event_id: last_event_id.map(Into::into),
    }
}

/// Asserts ours equals the reference, whole and fed one byte at a time; returns the events.
fn check_ours(input: &[u8]) -> Vec<Ev> {
    let expected = reference(input);
    assert_eq!(ours_whole(input), expected, "whole feed");
    let bytewise: Vec<usize> = (1..input.len()).collect();
    assert_eq!(ours(input, &bytewise), expected, "byte-at-a-time feed");
    expected.events
}

// --- the property -------------------------------------------------------------------------

fn atom() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        // Field lines and pieces of them.
        4 => Just(b"data:".to_vec()),
        4 => Just(b"data: ".to_vec()),
        1 => Just(b"data".to_vec()),
        1 => Just(b"DATA:".to_vec()),
        2 => Just(b"id: 3".to_vec()),
        1 => Just(b"id".to_vec()),
        1 => Just(b"id:".to_vec()),
        1 => Just(b"id: a\0b".to_vec()),
        1 => Just(b"retry: 12".to_vec()),
        1 => Just(b"retry:7x".to_vec()),
        1 => Just(b"retry".to_vec()),
        1 => Just(b"retry: 99999999999999999999999".to_vec()),
        2 => Just(b"event: x".to_vec()),
        1 => Just(b"event:".to_vec()),
        1 => Just(b"event: message".to_vec()),
        1 => Just(b": c".to_vec()),
        1 => Just(b":".to_vec()),
        1 => Just(b"foo: bar".to_vec()),
        2 => Just(b" ".to_vec()),
        2 => Just(b":".to_vec()),
        2 => Just(br#"{"jsonrpc":"2.0","id":1,"result":{}}"#.to_vec()),
        // Line ends.
        6 => Just(b"\n".to_vec()),
        3 => Just(b"\r".to_vec()),
        3 => Just(b"\r\n".to_vec()),
        // BOM (leading, partial, repeated) and other text.
        2 => Just(b"\xEF\xBB\xBF".to_vec()),
        1 => Just(b"\xEF\xBB".to_vec()),
        1 => Just("é€😀".as_bytes().to_vec()),
        1 => Just(b"\0".to_vec()),
        // Invalid UTF-8: stray continuation, truncated sequences, overlong, surrogate, > U+10FFFF.
        1 => Just(b"\x80".to_vec()),
        1 => Just(b"\xFF".to_vec()),
        1 => Just(b"\xC3".to_vec()),
        1 => Just(b"\xE2\x82".to_vec()),
        1 => Just(b"\xF0\x9F\x98".to_vec()),
        1 => Just(b"\xC0\xAF".to_vec()),
        1 => Just(b"\xED\xA0\x80".to_vec()),
        1 => Just(b"\xF4\x90\x80\x80".to_vec()),
        // Anything.
        3 => prop::collection::vec(any::<u8>(), 1..6),
        2 => "[a-z ]{1,8}".prop_map(String::into_bytes),
    ]
}

fn sse_input() -> impl Strategy<Value = Vec<u8>> {
    // The start of the stream is special (BOM handling): give it its own choices.
    let start = prop_oneof![
        4 => Just(&b""[..]),
        2 => Just(&b"\xEF\xBB\xBF"[..]),
        1 => Just(&b"\xEF\xBB\xBF\xEF\xBB\xBF"[..]),
        1 => Just(&b"\xEF\xBB"[..]),
        1 => Just(&b"\xEF"[..]),
    ];
    (start, prop::collection::vec(atom(), 0..40)).prop_map(|(start, atoms)| {
        let mut input = start.to_vec();
        input.extend(atoms.concat());
        input
    })
}

fn cuts(max_len: usize) -> impl Strategy<Value = Vec<usize>> {
    prop::collection::vec(0..=max_len, 0..12).prop_map(|mut v| {
        v.sort_unstable();
        v
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn framer_matches_whatwg_reference(input in sse_input(), cuts in cuts(400)) {
        let expected = reference(&input);
        prop_assert_eq!(&ours(&input, &cuts), &expected);
        prop_assert_eq!(&ours_whole(&input), &expected);
    }

    #[test]
    fn framer_matches_reference_byte_at_a_time(input in sse_input()) {
        let bytewise: Vec<usize> = (1..input.len()).collect();
        prop_assert_eq!(ours(&input, &bytewise), reference(&input));
    }
}

// --- the other crates, driven as their users drive them -----------------------------------

fn byte_stream(chunks: &[&[u8]]) -> impl futures::Stream<Item = Result<Bytes, Infallible>> + use<> {
    let owned: Vec<Result<Bytes, Infallible>> = chunks
        .iter()
        .map(|c| Ok(Bytes::copy_from_slice(c)))
        .collect();
    futures::stream::iter(owned)
}

/// `eventsource-stream` 0.2.3: events as (type, data, id), or the error's text. It reports
/// `message` for an absent type and `""` for an id never set.
fn eventsource(chunks: &[&[u8]]) -> Vec<Result<(String, String, String), String>> {
    block_on(async {
        let mut s = pin!(eventsource_stream::EventStream::new(byte_stream(chunks)));
        let mut out = Vec::new();
        while let Some(item) = s.next().await {
            out.push(
                item.map(|e| (e.event, e.data, e.id))
                    .map_err(|e| format!("{e:?}")),
            );
        }
        out
    })
}

/// What `sse-stream` 0.2 gives per item.
type SseItem = Result<sse_stream::Sse, String>;

/// `sse-stream` 0.2: every item, errors included (the stream goes on after an error).
fn sse_stream(chunks: &[&[u8]]) -> Vec<SseItem> {
    block_on(async {
        let mut s = pin!(sse_stream::SseStream::from_bytes_stream(byte_stream(
            chunks
        )));
        let mut out = Vec::new();
        while let Some(item) = s.next().await {
            out.push(item.map_err(|e| format!("{e:?}")));
        }
        out
    })
}

fn sse(event: Option<&str>, data: Option<&str>, id: Option<&str>, retry: Option<u64>) -> SseItem {
    Ok(sse_stream::Sse {
        event: event.map(Into::into),
        data: data.map(Into::into),
        id: id.map(Into::into),
        retry,
    })
}

fn es_ok(event: &str, data: &str, id: &str) -> Result<(String, String, String), String> {
    Ok((event.into(), data.into(), id.into()))
}

#[test]
fn reference_sanity() {
    // The examples of the HTML standard's "Server-sent events" section.
    let r = reference(b"data: YHOO\ndata: +2\ndata: 10\n\n");
    assert_eq!(r.events, vec![ev("", "YHOO\n+2\n10", None)]);
    let r = reference(
        b": test stream\n\ndata: first event\nid: 1\n\ndata:second event\nid\n\ndata:  third event\n",
    );
    assert_eq!(
        r.events,
        vec![
            ev("", "first event", Some("1")),
            ev("", "second event", Some(""))
        ]
    );
    let r = reference(b"data\n\ndata\ndata\n\ndata:");
    assert_eq!(r.events, vec![ev("", "", None), ev("", "\n", None)]);
    let r = reference(b"data:test\n\ndata: test\n\n");
    assert_eq!(r.events, vec![ev("", "test", None), ev("", "test", None)]);
}

#[test]
fn leading_bom() {
    let input = "\u{FEFF}data: a\n\n".as_bytes();
    assert_eq!(check_ours(input), vec![ev("", "a", None)]);

    // eventsource-stream 0.2.3 slices `&string[1..]` to drop the 3-byte BOM: a panic (not on a
    // char boundary). The panic message printed by this test is expected.
    let panicked = std::panic::catch_unwind(|| eventsource(&[input])).is_err();
    assert!(
        panicked,
        "eventsource-stream no longer panics on a leading BOM"
    );

    // sse-stream strips it from the first line: correct.
    assert_eq!(sse_stream(&[input]), vec![sse(None, Some("a"), None, None)]);
    // Two BOMs: only one is dropped; the first line's field is "\u{FEFF}data", unknown.
    let two = "\u{FEFF}\u{FEFF}data: a\n\ndata: b\n\n".as_bytes();
    assert_eq!(check_ours(two), vec![ev("", "b", None)]);
    assert_eq!(
        sse_stream(&[two]),
        vec![Err("InvalidLine".into())],
        "sse-stream rejects the unknown field (and drops the rest of the chunk)"
    );
}

#[test]
fn cr_only_line_ends() {
    let input = b"data: a\r\rdata: b\r\r";
    assert_eq!(
        check_ours(input),
        vec![ev("", "a", None), ev("", "b", None)]
    );
    // eventsource-stream's nom parser treats a CR at the end of its buffer as possibly the start
    // of a CRLF and waits for more; at the end of the stream the final event is lost.
    assert_eq!(eventsource(&[input]), vec![es_ok("message", "a", "")]);
    // sse-stream gets it right.
    assert_eq!(
        sse_stream(&[input]),
        vec![
            sse(None, Some("a"), None, None),
            sse(None, Some("b"), None, None)
        ]
    );
    // CRLF split across chunks is one line end for everyone.
    let split: [&[u8]; 3] = [b"data: a\r", b"\n\r", b"\n"];
    assert_eq!(
        ours(&split.concat(), &[8, 10]).events,
        vec![ev("", "a", None)]
    );
    assert_eq!(eventsource(&split), vec![es_ok("message", "a", "")]);
    assert_eq!(sse_stream(&split), vec![sse(None, Some("a"), None, None)]);
}

#[test]
fn unknown_field_and_line_without_colon() {
    // An unknown field is ignored.
    let unknown = b"foo: bar\ndata: a\n\n";
    assert_eq!(check_ours(unknown), vec![ev("", "a", None)]);
    assert_eq!(eventsource(&[unknown]), vec![es_ok("message", "a", "")]);
    // sse-stream errors, and the rest of that chunk is dropped with it.
    assert_eq!(sse_stream(&[unknown]), vec![Err("InvalidLine".into())]);
    // Fed line by line, the stream goes on after the error.
    assert_eq!(
        sse_stream(&[b"foo: bar\n", b"data: a\n\n"]),
        vec![Err("InvalidLine".into()), sse(None, Some("a"), None, None)]
    );

    // A line without a colon is a field name with an empty value: `data` appends an empty line.
    let bare = b"data\ndata: a\n\n";
    assert_eq!(check_ours(bare), vec![ev("", "\na", None)]);
    assert_eq!(eventsource(&[bare]), vec![es_ok("message", "\na", "")]);
    assert_eq!(sse_stream(&[bare]), vec![Err("InvalidLine".into())]);
}

#[test]
fn invalid_utf8() {
    // WHATWG decodes with replacement: the event is dispatched with U+FFFD.
    let input = b"data: \xFF\n\ndata: b\n\n";
    assert_eq!(
        check_ours(input),
        vec![ev("", "\u{FFFD}", None), ev("", "b", None)]
    );
    // eventsource-stream keeps everything from the invalid byte on in its UTF-8 buffer and fails
    // only at the end of the stream: both events are lost, then one error.
    let got = eventsource(&[input]);
    assert_eq!(got.len(), 1, "{got:?}");
    assert!(got[0].as_ref().unwrap_err().starts_with("Utf8("), "{got:?}");
    // Fed event by event, the valid event before the bad byte is dispatched; the rest is not.
    let got = eventsource(&[b"data: a\n\n", b"data: \xFF\n\n", b"data: b\n\n"]);
    assert_eq!(got.len(), 2, "{got:?}");
    assert_eq!(got[0], es_ok("message", "a", ""));
    assert!(got[1].as_ref().unwrap_err().starts_with("Utf8("), "{got:?}");
    // sse-stream rejects the line (and the rest of the chunk).
    let got = sse_stream(&[input]);
    assert_eq!(got.len(), 1, "{got:?}");
    assert!(
        got[0].as_ref().unwrap_err().starts_with("Utf8Parse("),
        "{got:?}"
    );
}

#[test]
fn duplicate_fields() {
    // The last `event`, `id` and `retry` win; every `data` line is appended.
    let input = b"event: a\nevent: b\nid: 1\nid: 2\nretry: 10\nretry: 20\ndata: x\ndata: y\n\n";
    let r = reference(input);
    assert_eq!(r.events, vec![ev("b", "x\ny", Some("2"))]);
    assert_eq!(r.retries, vec![10, 20]);
    assert_eq!(ours_whole(input), r);
    check_ours(input);
    assert_eq!(eventsource(&[input]), vec![es_ok("b", "x\ny", "2")]);
    // sse-stream errors on the second `event` line.
    assert_eq!(
        sse_stream(&[input]),
        vec![Err("DuplicatedEventLine".into())]
    );
    assert_eq!(
        sse_stream(&[b"id: 1\nid: 2\ndata: x\n\n"]),
        vec![Err("DuplicatedIdLine".into())]
    );
    assert_eq!(
        sse_stream(&[b"retry: 1\nretry: 2\ndata: x\n\n"]),
        vec![Err("DuplicatedRetry".into())]
    );
}

#[test]
fn retry_values() {
    // Only ASCII digits: "+5", " 5" (after the one optional space) and "5x" are ignored.
    for (input, want) in [
        (&b"retry: 5\ndata: a\n\n"[..], vec![5]),
        (b"retry: +5\ndata: a\n\n", vec![]),
        (b"retry:  5\ndata: a\n\n", vec![]),
        (b"retry: 5x\ndata: a\n\n", vec![]),
    ] {
        let r = reference(input);
        assert_eq!(r.retries, want, "{:?}", String::from_utf8_lossy(input));
        assert_eq!(ours_whole(input), r);
    }
    // eventsource-stream uses `u64::from_str`, which takes a leading '+'.
    let got = block_on(async {
        let input: &[u8] = b"retry: +5\ndata: a\n\n";
        let mut s = pin!(eventsource_stream::EventStream::new(byte_stream(&[input])));
        s.next().await.unwrap().unwrap().retry
    });
    assert_eq!(got, Some(std::time::Duration::from_millis(5)));
    // sse-stream trims ASCII whitespace (accepts "  5") and errors on anything else.
    assert_eq!(
        sse_stream(&[b"retry:  5\ndata: a\n\n"]),
        vec![sse(None, Some("a"), None, Some(5))]
    );
    let got = sse_stream(&[b"retry: 5x\ndata: a\n\n"]);
    assert!(
        got[0].as_ref().unwrap_err().starts_with("IntParse("),
        "{got:?}"
    );
}

#[test]
fn events_without_data() {
    // An event with no `data` line is not dispatched, but its id becomes the last event id (the
    // MCP 2025-11-25 priming event is `id` plus an empty `data:`, which *is* dispatched).
    let input = b"id: 7\n\nretry: 100\n\nevent: x\n\n";
    let r = reference(input);
    assert!(r.events.is_empty());
    assert_eq!(r.last_event_id.as_deref(), Some("7"));
    assert_eq!(ours_whole(input), r);
    assert_eq!(eventsource(&[input]), vec![]);
    // sse-stream hands out every field-bearing event, data or not.
    assert_eq!(
        sse_stream(&[input]),
        vec![
            sse(None, None, Some("7"), None),
            sse(None, None, None, Some(100)),
            sse(Some("x"), None, None, None),
        ]
    );
    let priming = b"id: 7\ndata:\n\n";
    assert_eq!(check_ours(priming), vec![ev("", "", Some("7"))]);
}

#[test]
fn unterminated_final_event() {
    // No blank line at the end: nobody dispatches it.
    let input = b"data: a\n\ndata: b\n";
    assert_eq!(check_ours(input), vec![ev("", "a", None)]);
    assert_eq!(eventsource(&[input]), vec![es_ok("message", "a", "")]);
    assert_eq!(sse_stream(&[input]), vec![sse(None, Some("a"), None, None)]);
    // A final CR is a complete line end.
    let input = b"data: a\n\r";
    assert_eq!(check_ours(input), vec![ev("", "a", None)]);
    assert_eq!(
        eventsource(&[input]),
        vec![],
        "eventsource-stream waits for an LF"
    );
    assert_eq!(sse_stream(&[input]), vec![sse(None, Some("a"), None, None)]);
}

/// A sink that halts the framer (`SseSink::halted`) after `after` events.
struct HaltAfter {
    after: usize,
    events: Vec<String>,
}

impl SseSink for HaltAfter {
    fn on_event(&mut self, e: &SseEvent<'_>) {
        self.events.push(lossy(e.data));
    }
    fn halted(&self) -> bool {
        self.events.len() >= self.after
    }
}

fn halted_at(chunks: &[&[u8]]) -> (Vec<String>, u64) {
    let mut framer = SseFramer::new(1 << 20);
    let mut sink = HaltAfter {
        after: 1,
        events: Vec::new(),
    };
    for chunk in chunks {
        framer.feed(chunk, &mut sink).unwrap();
    }
    (sink.events, framer.offset())
}

/// Found by fuzzing (`sse_framer` with a halting sink): when the line that halts the framer ends
/// in CRLF and the chunk ends between the CR and the LF, the LF was never consumed, so
/// `offset()` after the halt depended on the chunking (11 whole, 10 split).
#[test]
fn halted_framer_consumes_the_same_bytes_in_any_chunking() {
    let body: &[u8] = b"data: a\r\n\r\ndata: b\r\n\r\n";
    let whole = halted_at(&[body]);
    assert_eq!(whole, (vec!["a".to_owned()], 11));
    assert_eq!(halted_at(&[&body[..10], &body[10..]]), whole);
    let bytewise: Vec<&[u8]> = body.chunks(1).collect();
    assert_eq!(halted_at(&bytewise), whole);
}
