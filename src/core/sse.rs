//! A WHATWG `text/event-stream` framer: bytes in, events out, no I/O.
//!
//! It follows the parsing and dispatch steps of the HTML standard's "Server-sent events" section
//! exactly: lines end in CR, LF or CRLF (a CR is a complete line end on its own, even as the very
//! last byte of the body); one leading UTF-8 BOM is dropped; lines starting with `:` are comments;
//! `data:` with or without a space; multi-line data joined by LF; `id` values containing NUL are
//! ignored; `retry` takes ASCII digits only; an event whose data buffer is empty updates the last
//! event id but is not dispatched; and an event left without its blank line at the end of the
//! stream is not dispatched (the framer reports it instead through [`SseFramer::pending`]).
//!
//! Design, after `httparse` and `csv-core`: explicit carried state (BOM progress, a pending CR, the
//! partial line), linear time in any chunking (each byte is scanned once with `memchr`; only a
//! line that straddles two chunks is copied, once), and every buffer bounded by
//! [`Limits::max_event_bytes`](crate::Limits::max_event_bytes). Values are handed out as borrowed
//! bytes: UTF-8 is decoded (with replacement, as WHATWG requires) only by whoever needs text.

use memchr::{memchr, memchr2};

/// One dispatched event. Borrowed: valid only during the [`SseSink::on_event`] call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SseEvent<'a> {
    /// The `event:` field, or empty when absent (which means `message`).
    pub event_type: &'a [u8],
    /// The data buffer with its final LF removed. May be empty (`data:` with no value).
    pub data: &'a [u8],
    /// The last event id string at dispatch time, if an `id:` field was ever applied.
    pub last_event_id: Option<&'a [u8]>,
    /// Whether this event itself carried an `id:` field.
    pub has_id_field: bool,
    /// 0-based dispatch index on this stream (counting every dispatched event).
    pub index: u64,
    /// Byte offset of the event's first line in the body (BOM included).
    pub offset: u64,
}

impl SseEvent<'_> {
    /// `true` when the event type is absent or `message`, the only type MCP clients read.
    pub fn is_message(&self) -> bool {
        self.event_type.is_empty() || self.event_type == b"message"
    }
}

/// Receives what the framer finds. Only `on_event` is required.
pub trait SseSink {
    /// An event was dispatched.
    fn on_event(&mut self, event: &SseEvent<'_>);
    /// A `retry:` field with a valid value (milliseconds) was read.
    fn on_retry(&mut self, _ms: u64, _offset: u64) {}
    /// An `id:` field was read (whether or not its event is ever dispatched).
    fn on_id_field(&mut self, _offset: u64) {}
    /// A comment line (`:` first) was read; `text` excludes the colon.
    fn on_comment(&mut self, _text: &[u8], _offset: u64) {}
    /// Asked after every line: `true` stops the framer for good (e.g. a count limit was hit),
    /// so that nothing after that point is read, however the bytes were chunked.
    fn halted(&self) -> bool {
        false
    }
}

/// The event size limit was exceeded; the framer stops consuming input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EventTooLarge {
    /// Offset of the event that grew too large.
    pub offset: u64,
}

/// What was left when the stream ended: an event with no closing blank line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pending<'a> {
    /// Bytes of the undispatched event, from its first line to the end of the body.
    pub bytes: u64,
    /// The data it would have carried (data buffer plus a final `data` line with no line end).
    pub data: std::borrow::Cow<'a, [u8]>,
    /// Byte offset of its first line.
    pub offset: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Bom {
    /// `n` bytes of EF BB BF matched so far at the start of the stream.
    Matching(u8),
    Done,
}

const BOM: [u8; 3] = [0xEF, 0xBB, 0xBF];

/// The framer. Feed it body bytes in any chunking; it calls the sink for each event.
#[derive(Debug, Clone)]
pub struct SseFramer {
    bom: Bom,
    /// The previous chunk ended in CR: a leading LF in the next one belongs to that line end.
    pending_cr: bool,
    /// Partial line carried across chunks.
    line: Vec<u8>,
    data: Vec<u8>,
    event_type: Vec<u8>,
    id_buffer: Option<Vec<u8>>,
    last_event_id: Option<Vec<u8>>,
    event_has_id: bool,
    /// The pending event has at least one non-comment line.
    event_open: bool,
    /// Bytes consumed so far.
    offset: u64,
    /// Offset where the pending event began.
    event_start: u64,
    dispatched: u64,
    max_event_bytes: usize,
    overflow: Option<EventTooLarge>,
    /// The sink asked to stop.
    halted: bool,
}

impl SseFramer {
    /// A framer whose events (all field lines together) may not exceed `max_event_bytes`.
    pub fn new(max_event_bytes: usize) -> Self {
        SseFramer {
            bom: Bom::Matching(0),
            pending_cr: false,
            line: Vec::new(),
            data: Vec::new(),
            event_type: Vec::new(),
            id_buffer: None,
            last_event_id: None,
            event_has_id: false,
            event_open: false,
            offset: 0,
            event_start: 0,
            dispatched: 0,
            max_event_bytes,
            overflow: None,
            halted: false,
        }
    }

    /// Makes this framer as [`SseFramer::new`] makes one, keeping its buffers' memory: a
    /// session reuses the framer of its last stream.
    pub(crate) fn reset(&mut self, max_event_bytes: usize) {
        // Field by field: a whole new framer moved in costs a copy of it.
        self.bom = Bom::Matching(0);
        self.pending_cr = false;
        self.line.clear();
        self.data.clear();
        self.event_type.clear();
        self.id_buffer = None;
        self.last_event_id = None;
        self.event_has_id = false;
        self.event_open = false;
        self.offset = 0;
        self.event_start = 0;
        self.dispatched = 0;
        self.max_event_bytes = max_event_bytes;
        self.overflow = None;
        self.halted = false;
    }

    /// The bytes its buffers hold allocated.
    pub(crate) fn capacity(&self) -> usize {
        self.line.capacity() + self.data.capacity() + self.event_type.capacity()
    }

    /// The last event id string (set at dispatch, as a browser would send in `Last-Event-ID`).
    pub fn last_event_id(&self) -> Option<&[u8]> {
        self.last_event_id.as_deref()
    }

    /// Number of dispatched events (including those with empty data).
    pub fn dispatched(&self) -> u64 {
        self.dispatched
    }

    /// Bytes consumed so far.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// Feed one chunk. Consumes all of it unless an event exceeds the limit.
    ///
    /// # Errors
    /// [`EventTooLarge`] once the pending event (or a single line) exceeds the limit; from then on
    /// every call returns the same error and consumes nothing.
    pub fn feed(&mut self, chunk: &[u8], sink: &mut impl SseSink) -> Result<(), EventTooLarge> {
        if let Some(err) = self.overflow {
            return Err(err);
        }
        let mut rest = chunk;
        if let Bom::Matching(n) = self.bom {
            rest = self.strip_bom(n, rest);
        }
        if self.pending_cr && !rest.is_empty() {
            self.pending_cr = false;
            if rest[0] == b'\n' {
                rest = &rest[1..];
                self.offset += 1;
            }
        }
        // Halted: only the LF of a CRLF split across chunks was still owed (consumed above).
        if self.halted {
            return Ok(());
        }
        while !rest.is_empty() {
            let Some(i) = line_end_in(rest) else {
                self.check_size(self.offset + rest.len() as u64)?;
                self.line.extend_from_slice(rest);
                self.offset += rest.len() as u64;
                break;
            };
            let ending = self.line_end(&rest[i..]);
            let line_start = self.offset - self.line.len() as u64;
            self.check_size(self.offset + i as u64)?;
            if self.line.is_empty() {
                // The common event, one `data:` line then a blank line, both in this chunk:
                // dispatch the data where it lies instead of copying it (as httparse borrows).
                let after = &rest[i + ending..];
                if self.data.is_empty()
                    && matches!(after.first(), Some(b'\n' | b'\r'))
                    && let Some(value) = data_value(&rest[..i])
                {
                    if !self.event_open {
                        self.event_open = true;
                        self.event_start = line_start;
                    }
                    // The event spans the data line and its line end, as on the slow path,
                    // where the blank line checks that.
                    self.check_size(self.offset + (i + ending) as u64)?;
                    let blank = self.line_end(after);
                    self.dispatch_data(Some(value), sink);
                    self.offset += (i + ending + blank) as u64;
                    rest = &after[blank..];
                    if sink.halted() {
                        self.halted = true;
                        return Ok(());
                    }
                    continue;
                }
                self.process_line(&rest[..i], line_start, sink)?;
            } else {
                let mut line = std::mem::take(&mut self.line);
                line.extend_from_slice(&rest[..i]);
                let result = self.process_line(&line, line_start, sink);
                line.clear();
                self.line = line;
                result?;
            }
            self.offset += (i + ending) as u64;
            rest = &rest[i + ending..];
            if sink.halted() {
                self.halted = true;
                return Ok(());
            }
        }
        Ok(())
    }

    /// The length of the line end that `at` starts with (at a CR or LF): CRLF is one line end,
    /// and a CR that ends the chunk is one too, whose LF, if it comes, the next chunk skips.
    fn line_end(&mut self, at: &[u8]) -> usize {
        match at {
            [b'\r', b'\n', ..] => 2,
            [b'\r'] => {
                self.pending_cr = true;
                1
            }
            _ => 1,
        }
    }

    /// Handles the start-of-stream BOM, carried across chunks. Returns the unconsumed input.
    fn strip_bom<'c>(&mut self, mut matched: u8, mut rest: &'c [u8]) -> &'c [u8] {
        while let Some(&b) = rest.first() {
            if b == BOM[matched as usize] {
                matched += 1;
                rest = &rest[1..];
                self.offset += 1;
                if matched == 3 {
                    self.bom = Bom::Done;
                    self.event_start = self.offset;
                    return rest;
                }
            } else {
                // Not a BOM: the bytes matched so far are ordinary line content.
                self.line.extend_from_slice(&BOM[..matched as usize]);
                self.bom = Bom::Done;
                return rest;
            }
        }
        self.bom = Bom::Matching(matched);
        rest
    }

    /// Fails when the pending event would span more than the limit up to `end` (exclusive).
    fn check_size(&mut self, end: u64) -> Result<(), EventTooLarge> {
        let start = if self.event_open {
            self.event_start
        } else {
            self.offset - self.line.len() as u64
        };
        if end - start > self.max_event_bytes as u64 {
            return Err(self.overflowed());
        }
        Ok(())
    }

    fn overflowed(&mut self) -> EventTooLarge {
        let err = EventTooLarge {
            offset: if self.event_open {
                self.event_start
            } else {
                self.offset - self.line.len() as u64
            },
        };
        self.overflow = Some(err);
        err
    }

    fn process_line(
        &mut self,
        line: &[u8],
        offset: u64,
        sink: &mut impl SseSink,
    ) -> Result<(), EventTooLarge> {
        if line.is_empty() {
            self.dispatch(sink);
            return Ok(());
        }
        if line[0] == b':' {
            sink.on_comment(&line[1..], offset);
            return Ok(());
        }
        if !self.event_open {
            self.event_open = true;
            self.event_start = offset;
        }
        let (field, value) = match colon(line) {
            Some(c) => {
                let v = &line[c + 1..];
                (&line[..c], v.strip_prefix(b" ").unwrap_or(v))
            }
            None => (line, &b""[..]),
        };
        match field {
            b"data" => {
                self.data.extend_from_slice(value);
                self.data.push(b'\n');
            }
            b"event" => {
                self.event_type.clear();
                self.event_type.extend_from_slice(value);
            }
            b"id" => {
                sink.on_id_field(offset);
                if memchr(0, value).is_none() {
                    let buf = self.id_buffer.get_or_insert_with(Vec::new);
                    buf.clear();
                    buf.extend_from_slice(value);
                    self.event_has_id = true;
                }
            }
            b"retry" if !value.is_empty() && value.iter().all(u8::is_ascii_digit) => {
                let ms = value.iter().fold(0u64, |acc, d| {
                    acc.saturating_mul(10).saturating_add(u64::from(d - b'0'))
                });
                sink.on_retry(ms, offset);
            }
            _ => {}
        }
        Ok(())
    }

    fn dispatch(&mut self, sink: &mut impl SseSink) {
        if self.data.is_empty() {
            self.dispatch_data(None, sink);
            return;
        }
        let mut data = std::mem::take(&mut self.data);
        data.pop(); // the LF after the last data line
        self.dispatch_data(Some(&data), sink);
        data.clear();
        self.data = data;
    }

    /// Dispatches the pending event with `data` (the data buffer without its final LF; `None`
    /// when the buffer is empty, which per WHATWG dispatches nothing).
    fn dispatch_data(&mut self, data: Option<&[u8]>, sink: &mut impl SseSink) {
        if self.event_has_id {
            let buf = self.id_buffer.as_deref().unwrap_or_default();
            let last = self.last_event_id.get_or_insert_with(Vec::new);
            last.clear();
            last.extend_from_slice(buf);
        }
        let has_id_field = std::mem::take(&mut self.event_has_id);
        let was_open = std::mem::take(&mut self.event_open);
        let Some(data) = data else {
            self.event_type.clear();
            return;
        };
        debug_assert!(was_open);
        let event = SseEvent {
            event_type: &self.event_type,
            data,
            last_event_id: self.last_event_id.as_deref(),
            has_id_field,
            index: self.dispatched,
            offset: self.event_start,
        };
        sink.on_event(&event);
        self.dispatched += 1;
        self.event_type.clear();
    }

    /// The undispatched event left at the end of the stream, if any. Call after the last `feed`.
    ///
    /// A final line with no line end is not a line in WHATWG terms and is discarded; its data is
    /// still included here, because a reader of the verdict wants to know what was lost.
    pub fn pending(&self) -> Option<Pending<'_>> {
        let partial = if self.line.first() == Some(&b':') {
            &b""[..]
        } else {
            &self.line[..]
        };
        if !self.event_open && partial.is_empty() {
            return None;
        }
        let start = if self.event_open {
            self.event_start
        } else {
            self.offset - self.line.len() as u64
        };
        let data_line = match memchr(b':', partial) {
            Some(c) if &partial[..c] == b"data" => {
                let v = &partial[c + 1..];
                Some(v.strip_prefix(b" ").unwrap_or(v))
            }
            None if partial == b"data" => Some(&b""[..]),
            _ => None,
        };
        let data = match data_line {
            Some(v) => {
                let mut d = self.data.clone();
                d.extend_from_slice(v);
                std::borrow::Cow::Owned(d)
            }
            None => {
                let d = self.data.strip_suffix(b"\n").unwrap_or(&self.data);
                std::borrow::Cow::Borrowed(d)
            }
        };
        Some(Pending {
            bytes: self.offset - start,
            data,
            offset: start,
        })
    }
}

/// The first CR or LF in `bytes` (most often the start of a line). A `data` line is left to the
/// vector search; any other (an `event`, `id` or `retry` field, a comment) is most likely short, and
/// its first two words are read eight bytes at a time first: the vector search costs more to
/// set up than such a line takes to read.
#[inline]
fn line_end_in(bytes: &[u8]) -> Option<usize> {
    use crate::wire::{ONES, zero_bytes};
    let short = if bytes.starts_with(b"data") { 0 } else { 2 };
    for (w, word) in bytes.chunks_exact(8).take(short).enumerate() {
        let w8 = u64::from_le_bytes(word.try_into().ok()?);
        // Only the lowest hit is read (see `zero_bytes`).
        let hits =
            zero_bytes(w8 ^ (ONES * u64::from(b'\r'))) | zero_bytes(w8 ^ (ONES * u64::from(b'\n')));
        if hits != 0 {
            return Some(w * 8 + (hits.trailing_zeros() / 8) as usize);
        }
    }
    let skipped = bytes.len().min(8 * short) & !7;
    memchr2(b'\r', b'\n', &bytes[skipped..]).map(|i| i + skipped)
}

/// The first colon of a field line, which ends its name. The names MCP servers send are
/// short, so the first bytes are looked at one by one: a vector search costs more to set up
/// than such a name takes to read. A line with no colon early takes the vector search.
fn colon(line: &[u8]) -> Option<usize> {
    let head = &line[..line.len().min(8)];
    match head.iter().position(|&c| c == b':') {
        Some(i) => Some(i),
        None => memchr(b':', &line[head.len()..]).map(|i| i + head.len()),
    }
}

/// The value of a `data` field line, or `None` for any other line.
fn data_value(line: &[u8]) -> Option<&[u8]> {
    if line == b"data" {
        return Some(b"");
    }
    let v = line.strip_prefix(b"data:")?;
    Some(v.strip_prefix(b" ").unwrap_or(v))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Default)]
    struct Collect {
        events: Vec<(String, String, Option<String>)>,
        retries: Vec<u64>,
    }

    impl SseSink for Collect {
        fn on_event(&mut self, e: &SseEvent<'_>) {
            self.events.push((
                String::from_utf8_lossy(e.event_type).into_owned(),
                String::from_utf8_lossy(e.data).into_owned(),
                e.last_event_id
                    .map(|i| String::from_utf8_lossy(i).into_owned()),
            ));
        }
        fn on_retry(&mut self, ms: u64, _: u64) {
            self.retries.push(ms);
        }
    }

    fn frame(input: &[u8]) -> Collect {
        let mut f = SseFramer::new(1 << 20);
        let mut c = Collect::default();
        f.feed(input, &mut c).unwrap();
        c
    }

    #[test]
    fn cr_only_stream_keeps_final_event() {
        let c = frame(b"data: a\r\rdata: b\r\r");
        assert_eq!(c.events.len(), 2);
        assert_eq!(c.events[1].1, "b");
    }

    #[test]
    fn crlf_split_across_chunks_is_one_line_end() {
        let mut f = SseFramer::new(1 << 20);
        let mut c = Collect::default();
        f.feed(b"data: a\r", &mut c).unwrap();
        f.feed(b"\n\r", &mut c).unwrap();
        f.feed(b"\n", &mut c).unwrap();
        assert_eq!(c.events.len(), 1);
        assert!(f.pending().is_none());
    }

    #[test]
    fn bom_split_across_chunks_is_dropped() {
        let mut f = SseFramer::new(1 << 20);
        let mut c = Collect::default();
        f.feed(&[0xEF], &mut c).unwrap();
        f.feed(&[0xBB], &mut c).unwrap();
        f.feed(b"\xBFdata:x\n\n", &mut c).unwrap();
        assert_eq!(c.events[0].1, "x");
    }

    #[test]
    fn partial_bom_is_line_content() {
        // EF BB then 'd': not a BOM, so the first line's field is "\xEF\xBBdata", unknown.
        let c = frame(b"\xEF\xBBdata:x\n\ndata:y\n\n");
        assert_eq!(c.events.len(), 1);
        assert_eq!(c.events[0].1, "y");
    }

    #[test]
    fn field_rules() {
        let c =
            frame(b": comment\ndata\ndata:x\ndata:  y\nevent: e\nid: 7\nretry: 12\nretry: x\n\n");
        assert_eq!(
            c.events,
            vec![("e".into(), "\nx\n y".into(), Some("7".into()))]
        );
        assert_eq!(c.retries, vec![12]);
    }

    #[test]
    fn id_only_event_updates_last_id_without_dispatch() {
        let mut f = SseFramer::new(1 << 20);
        let mut c = Collect::default();
        f.feed(b"id: 5\n\nid: 6\n", &mut c).unwrap();
        assert!(c.events.is_empty());
        assert_eq!(f.last_event_id(), Some(&b"5"[..]));
        assert_eq!(f.pending().map(|p| p.bytes), Some(6));
    }

    #[test]
    fn id_with_nul_is_ignored() {
        let c = frame(b"id: 1\ndata: a\n\nid: 2\0\ndata: b\n\n");
        assert_eq!(c.events[1].2.as_deref(), Some("1"));
    }

    #[test]
    fn empty_data_is_dispatched_with_empty_string() {
        let c = frame(b"id: 1\ndata:\n\n");
        assert_eq!(c.events, vec![("".into(), "".into(), Some("1".into()))]);
    }

    #[test]
    fn unterminated_event_is_pending_not_dispatched() {
        let mut f = SseFramer::new(1 << 20);
        let mut c = Collect::default();
        f.feed(b"data: a\n\ndata: {\"x\"\ndata: :1}", &mut c)
            .unwrap();
        assert_eq!(c.events.len(), 1);
        let p = f.pending().unwrap();
        assert_eq!(&*p.data, b"{\"x\"\n:1}");
        assert_eq!(p.offset, 9);
        assert_eq!(p.bytes, 20);
    }

    #[test]
    fn event_limit_is_enforced_for_lines_and_data() {
        let mut f = SseFramer::new(8);
        let mut c = Collect::default();
        assert!(f.feed(b"data: 0123456789", &mut c).is_err());
        let mut f = SseFramer::new(8);
        assert!(f.feed(b"data: 01\ndata: 23\n", &mut c).is_err());
        assert!(f.feed(b"\n", &mut c).is_err());
    }
}
