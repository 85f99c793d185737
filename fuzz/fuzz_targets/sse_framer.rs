//! The SSE framer on arbitrary bytes: never panics, and feeding the body whole or in chunks
//! dispatches the same events, reports the same fields and leaves the same pending event; and
//! the envelope's fast scan reads each event's data as serde_json does wherever it answers.
//!
//! Input layout (so that seeds are plain bodies behind one zero byte):
//! - byte 0: bits 0-2 = `n`, how many chunk-size bytes follow; bit 3 = use a small event limit
//!   (taken from the next byte: `4 * b + 1` bytes) instead of 1 MiB; bits 4-6 = `h`: when not 0,
//!   the sink halts the framer (`SseSink::halted`) once it has seen `h` events;
//! - [limit byte], then `n` chunk sizes (`b + 1` each, cycled); `n == 0` feeds one byte at a time;
//! - the rest is the body.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_verdict::fuzzing as jsonrpc;
use mcp_verdict::sse::{EventTooLarge, SseEvent, SseFramer, SseSink};

#[derive(Debug, PartialEq, Eq)]
enum Seen {
    Event {
        event_type: Vec<u8>,
        data: Vec<u8>,
        last_event_id: Option<Vec<u8>>,
        has_id_field: bool,
        index: u64,
        offset: u64,
    },
    Retry(u64, u64),
    Id(u64),
    Comment(Vec<u8>, u64),
}

#[derive(Default)]
struct Record {
    seen: Vec<Seen>,
    events: usize,
    halt_after: usize,
}

impl SseSink for Record {
    fn on_event(&mut self, e: &SseEvent<'_>) {
        assert!(!self.halted(), "an event after the sink halted the framer");
        self.events += 1;
        self.seen.push(Seen::Event {
            event_type: e.event_type.to_vec(),
            data: e.data.to_vec(),
            last_event_id: e.last_event_id.map(<[u8]>::to_vec),
            has_id_field: e.has_id_field,
            index: e.index,
            offset: e.offset,
        });
    }
    fn on_retry(&mut self, ms: u64, offset: u64) {
        self.seen.push(Seen::Retry(ms, offset));
    }
    fn on_id_field(&mut self, offset: u64) {
        self.seen.push(Seen::Id(offset));
    }
    fn on_comment(&mut self, text: &[u8], offset: u64) {
        self.seen.push(Seen::Comment(text.to_vec(), offset));
    }
    fn halted(&self) -> bool {
        self.halt_after != 0 && self.events >= self.halt_after
    }
}

#[derive(Debug, PartialEq, Eq)]
struct Outcome {
    seen: Vec<Seen>,
    result: Result<(), EventTooLarge>,
    dispatched: u64,
    /// Bytes consumed, when no limit was hit (after one, it depends on the chunking).
    offset: u64,
    last_event_id: Option<Vec<u8>>,
    /// (bytes, data, offset) of the pending event, when no limit was hit.
    pending: Option<(u64, Vec<u8>, u64)>,
}

fn run(
    body: &[u8],
    limit: usize,
    halt_after: usize,
    sizes: &mut dyn Iterator<Item = usize>,
) -> Outcome {
    let mut framer = SseFramer::new(limit);
    let mut sink = Record {
        halt_after,
        ..Record::default()
    };
    let mut result = Ok(());
    let mut rest = body;
    while !rest.is_empty() {
        let n = sizes.next().unwrap_or(rest.len()).clamp(1, rest.len());
        result = framer.feed(&rest[..n], &mut sink);
        if result.is_err() {
            // Once over the limit, every later call fails the same way and consumes nothing.
            assert_eq!(framer.feed(&rest[n..], &mut sink), result);
            break;
        }
        rest = &rest[n..];
    }
    let pending = if result.is_ok() {
        framer
            .pending()
            .map(|p| (p.bytes, p.data.into_owned(), p.offset))
    } else {
        None
    };
    if result.is_ok() && !sink.halted() {
        assert_eq!(framer.offset(), body.len() as u64);
    }
    Outcome {
        seen: sink.seen,
        result,
        dispatched: framer.dispatched(),
        offset: if result.is_ok() { framer.offset() } else { 0 },
        last_event_id: framer.last_event_id().map(<[u8]>::to_vec),
        pending,
    }
}

fuzz_target!(|input: &[u8]| {
    let Some((&head, rest)) = input.split_first() else {
        return;
    };
    let n = usize::from(head & 7);
    let (limit, rest) = if head & 8 != 0 {
        match rest.split_first() {
            Some((&b, rest)) => (4 * usize::from(b) + 1, rest),
            None => return,
        }
    } else {
        (1 << 20, rest)
    };
    if rest.len() < n {
        return;
    }
    let (sizes, body) = rest.split_at(n);
    let sizes: Vec<usize> = sizes.iter().map(|&b| usize::from(b) + 1).collect();

    let halt_after = usize::from((head >> 4) & 7);
    let whole = run(body, limit, halt_after, &mut std::iter::empty());
    let chunked = if sizes.is_empty() {
        run(body, limit, halt_after, &mut std::iter::repeat(1))
    } else {
        run(body, limit, halt_after, &mut sizes.iter().copied().cycle())
    };
    assert_eq!(whole, chunked);
    // The envelope's fast scan agrees with serde_json on every event's data it answers for.
    for seen in &whole.seen {
        if let Seen::Event { data, .. } = seen
            && let Ok(text) = std::str::from_utf8(data)
            && let Some(scanned) = jsonrpc::scan_object(text)
        {
            assert_eq!(Ok(scanned), jsonrpc::parse_object_serde(text), "{text:?}");
        }
    }
});
