//! Block reader and JSON tokenizer under the streamed HAR reader.
//!
//! Reads the input in large blocks (not byte by byte through `io::Read`), walks JSON structure
//! with serde_json's exact grammar (the skipped-value rules of its `IgnoredAny`, the string
//! rules of its `String`), and hands small values to serde_json itself as captured byte ranges,
//! so that everything but the big strings keeps serde's semantics to the letter.

use std::io::{self, Read, Seek, SeekFrom};

use super::error::StreamError;

/// Block size of the reader.
const BLOCK: usize = 1 << 17;
/// Decoded string bytes gathered before they are handed on in one piece.
const OUT_BLOCK: usize = 1 << 16;
/// Unescaped runs at least this long are handed on where they lie, without a copy.
const DIRECT_RUN: usize = 1 << 13;
/// Runs this short are copied with one fixed-size copy (then cut), not a `memcpy` call: in an
/// escaped SSE body a `\"` or `\n` comes every few bytes.
const SHORT_RUN: usize = 16;

/// An input the reader can go back in, when it can.
pub(crate) trait Input: Read {
    /// Moves to absolute offset `pos`; `None` when the input cannot seek (a pipe).
    fn seek_to(&mut self, pos: u64) -> Option<io::Result<()>>;
}

/// A pipe or any other forward-only reader.
pub(crate) struct Forward<R>(pub R);

impl<R: Read> Read for Forward<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.0.read(buf)
    }
}

impl<R: Read> Input for Forward<R> {
    fn seek_to(&mut self, _: u64) -> Option<io::Result<()>> {
        None
    }
}

/// A file (or anything seekable), read from its current position.
pub(crate) struct Seekable<R> {
    inner: R,
    /// Where the reader started, so offsets are relative to it.
    origin: u64,
}

impl<R: Read + Seek> Seekable<R> {
    pub(crate) fn new(mut inner: R) -> io::Result<Self> {
        let origin = inner.stream_position()?;
        Ok(Seekable { inner, origin })
    }
}

impl<R: Read> Read for Seekable<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.inner.read(buf)
    }
}

impl<R: Read + Seek> Input for Seekable<R> {
    fn seek_to(&mut self, pos: u64) -> Option<io::Result<()>> {
        Some(
            self.inner
                .seek(SeekFrom::Start(self.origin + pos))
                .map(|_| ()),
        )
    }
}

/// The block reader: a window on the input, with an optional capture of what passes through.
pub(crate) struct Src<I> {
    input: I,
    buf: Box<[u8]>,
    pos: usize,
    end: usize,
    /// Input offset of `buf[0]`.
    base: u64,
    /// Bytes captured so far, and where the capture resumes in `buf`.
    capture: Option<(Vec<u8>, usize)>,
    /// Largest capture.
    capture_cap: usize,
    /// Decoded string text gathered before it is handed on; kept from one string to the next
    /// so that a small string does not cost a fresh block.
    text: Block,
}

/// Room for decoded text: [`OUT_BLOCK`] bytes are handed on at a time, and past them there
/// is room for one more run shorter than [`DIRECT_RUN`] and one word, so that the decoding
/// loops write whole words without asking for room.
struct Block {
    bytes: Box<[u8]>,
    len: usize,
}

impl Block {
    fn new() -> Self {
        Block {
            bytes: vec![0; OUT_BLOCK + DIRECT_RUN + 2 * SHORT_RUN].into_boxed_slice(),
            len: 0,
        }
    }

    fn filled(&self) -> &[u8] {
        &self.bytes[..self.len]
    }

    fn push(&mut self, b: u8) {
        self.bytes[self.len] = b;
        self.len += 1;
    }

    fn extend(&mut self, run: &[u8]) {
        self.bytes[self.len..self.len + run.len()].copy_from_slice(run);
        self.len += run.len();
    }

    /// Appends `avail[..run]` (`run` < [`DIRECT_RUN`]); a short run with one fixed-size copy
    /// (then cut), not a `memcpy` call: in an escaped SSE body a `\"` or `\n` comes every few
    /// bytes.
    fn append_run(&mut self, avail: &[u8], run: usize) {
        match avail.get(..SHORT_RUN) {
            Some(word) if run <= SHORT_RUN => {
                self.bytes[self.len..self.len + SHORT_RUN].copy_from_slice(word);
                self.len += run;
            }
            _ => self.extend(&avail[..run]),
        }
    }
}

fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\n' | b'\t' | b'\r')
}

/// One `0x80` bit per zero byte of `x`, exactly (no carries between bytes).
fn zero_bytes(x: u64) -> u64 {
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    !(((x & LOW7) + LOW7) | x | LOW7)
}

/// One `0x80` bit per byte of the word `x` that ends a plain run in a JSON string: `"`, `\\`
/// or a control character.
fn stops(x: u64) -> u64 {
    zero_bytes(x ^ 0x2222_2222_2222_2222)
        | zero_bytes(x ^ 0x5c5c_5c5c_5c5c_5c5c)
        | zero_bytes(x & 0xe0e0_e0e0_e0e0_e0e0)
}

/// Length of the run of plain string bytes at the start of `bytes`: up to the first `"`, `\\`
/// or control character (all three end a run in a JSON string). Eight bytes a step, so one pass
/// finds the next escape and refuses control characters.
fn plain_run(bytes: &[u8]) -> usize {
    let mut words = bytes.chunks_exact(8);
    let mut at = 0;
    for word in &mut words {
        let stops = stops(u64::from_le_bytes(word.try_into().unwrap_or_default()));
        if stops != 0 {
            return at + (stops.trailing_zeros() / 8) as usize;
        }
        at += 8;
    }
    let rest = words.remainder();
    at + rest
        .iter()
        .position(|&b| b == b'"' || b == b'\\' || b < 0x20)
        .unwrap_or(rest.len())
}

/// The byte each one-character escape stands for (`\\u` excluded), 0 for the rest: a table
/// rather than a `match`, whose jump is mispredicted in text where the escapes vary.
const ESCAPES: [u8; 256] = {
    let mut t = [0u8; 256];
    t[b'"' as usize] = b'"';
    t[b'\\' as usize] = b'\\';
    t[b'/' as usize] = b'/';
    t[b'b' as usize] = 8;
    t[b'f' as usize] = 12;
    t[b'n' as usize] = b'\n';
    t[b'r' as usize] = b'\r';
    t[b't' as usize] = b'\t';
    t
};

/// The byte a one-character escape stands for (`\\u` excluded).
fn simple_escape(b: u8) -> Option<u8> {
    Some(ESCAPES[usize::from(b)]).filter(|&c| c != 0)
}

/// Decodes the plain bytes and one-character escapes at the start of `avail` into `block`, a
/// word at a time, while a whole word is left to read and `block` has not reached
/// [`OUT_BLOCK`]; the bytes consumed. It stops before a closing quote, a `\u` escape, a
/// control character or an escape cut by the end of `avail`, for the general loop to take.
/// Each word is copied before it is looked at (the bytes past a stop are overwritten or cut),
/// so an escaped SSE body, a `\"` every few bytes, costs one word load and store per run.
fn decode_words(avail: &[u8], block: &mut Block) -> usize {
    let mut at = 0;
    while let Some(word) = avail.get(at..at + 8) {
        if block.len >= OUT_BLOCK {
            break;
        }
        let word: [u8; 8] = word.try_into().unwrap_or_default();
        block.bytes[block.len..block.len + 8].copy_from_slice(&word);
        let stops = stops(u64::from_le_bytes(word));
        if stops == 0 {
            at += 8;
            block.len += 8;
            continue;
        }
        let run = (stops.trailing_zeros() / 8) as usize;
        at += run;
        block.len += run;
        if avail[at] != b'\\' {
            break;
        }
        match avail.get(at + 1).copied().and_then(simple_escape) {
            Some(c) => {
                block.push(c);
                at += 2;
            }
            None => break,
        }
    }
    at
}

fn hex(b: u8) -> Option<u16> {
    match b {
        b'0'..=b'9' => Some(u16::from(b - b'0')),
        b'a'..=b'f' => Some(u16::from(b - b'a' + 10)),
        b'A'..=b'F' => Some(u16::from(b - b'A' + 10)),
        _ => None,
    }
}

impl<I: Input> Src<I> {
    pub(crate) fn new(input: I, capture_cap: usize) -> Self {
        Src {
            input,
            buf: vec![0; BLOCK].into_boxed_slice(),
            pos: 0,
            end: 0,
            base: 0,
            capture: None,
            capture_cap,
            text: Block::new(),
        }
    }

    /// Input offset of the next byte.
    pub(crate) fn offset(&self) -> u64 {
        self.base + self.pos as u64
    }

    pub(crate) fn can_seek(&mut self) -> bool {
        // Seeking to where the reader already is tells whether it can, without moving it.
        let here = self.base + self.end as u64;
        matches!(self.input.seek_to(here), Some(Ok(())))
    }

    pub(crate) fn fail<T>(&self, what: &'static str) -> Result<T, StreamError> {
        Err(StreamError::Syntax {
            what,
            at: self.offset(),
        })
    }

    /// Reads the next block when the window is used up. `false` at the end of the input.
    fn fill(&mut self) -> Result<bool, StreamError> {
        if self.pos < self.end {
            return Ok(true);
        }
        if let Some((vec, start)) = &mut self.capture {
            vec.extend_from_slice(&self.buf[*start..self.end]);
            *start = 0;
            if vec.len() > self.capture_cap {
                return Err(StreamError::TooLarge {
                    cap: self.capture_cap,
                    at: self.offset(),
                });
            }
        }
        self.base += self.end as u64;
        self.pos = 0;
        self.end = 0;
        loop {
            match self.input.read(&mut self.buf) {
                Ok(n) => {
                    self.end = n;
                    return Ok(n > 0);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(StreamError::Read(e)),
            }
        }
    }

    /// Moves to input offset `to`, within the window when it is there.
    pub(crate) fn seek(&mut self, to: u64) -> Result<(), StreamError> {
        if to >= self.base && to <= self.base + self.end as u64 {
            self.pos = (to - self.base) as usize;
            return Ok(());
        }
        match self.input.seek_to(to) {
            Some(Ok(())) => {
                self.base = to;
                self.pos = 0;
                self.end = 0;
                Ok(())
            }
            Some(Err(e)) => Err(StreamError::Seek(e)),
            None => Err(StreamError::CannotSeek),
        }
    }

    /// Skips a leading UTF-8 byte order mark, as the serde reader does.
    pub(crate) fn skip_bom(&mut self) -> Result<(), StreamError> {
        for (i, &b) in b"\xEF\xBB\xBF".iter().enumerate() {
            if self.peek()? != Some(b) {
                // Not a BOM: nothing consumed yet unless the first bytes matched, which a JSON
                // document cannot start with anyway.
                if i > 0 {
                    return self.fail("expected value");
                }
                return Ok(());
            }
            self.pos += 1;
        }
        Ok(())
    }

    /// The next byte, without consuming it. `None` at the end of the input.
    pub(crate) fn peek(&mut self) -> Result<Option<u8>, StreamError> {
        if self.pos == self.end && !self.fill()? {
            return Ok(None);
        }
        Ok(Some(self.buf[self.pos]))
    }

    pub(crate) fn bump(&mut self) {
        self.pos += 1;
    }

    fn next_or_eof(&mut self, what: &'static str) -> Result<u8, StreamError> {
        match self.peek()? {
            Some(b) => {
                self.pos += 1;
                Ok(b)
            }
            None => self.fail(what),
        }
    }

    /// The next byte after whitespace, not consumed.
    pub(crate) fn peek_ws(&mut self) -> Result<Option<u8>, StreamError> {
        loop {
            match self.peek()? {
                Some(b) if is_ws(b) => self.pos += 1,
                other => return Ok(other),
            }
        }
    }

    /// Consumes `b` after whitespace, or fails with `what`.
    pub(crate) fn expect(&mut self, b: u8, what: &'static str) -> Result<(), StreamError> {
        if self.peek_ws()? == Some(b) {
            self.pos += 1;
            Ok(())
        } else {
            self.fail(what)
        }
    }

    /// Starts capturing at the next byte.
    pub(crate) fn start_capture(&mut self) {
        self.capture = Some((Vec::new(), self.pos));
    }

    /// Ends the capture: the bytes since [`start_capture`](Self::start_capture).
    pub(crate) fn end_capture(&mut self) -> Result<Vec<u8>, StreamError> {
        let (mut vec, start) = self.capture.take().unwrap_or_default();
        vec.extend_from_slice(&self.buf[start..self.pos]);
        if vec.len() > self.capture_cap {
            return Err(StreamError::TooLarge {
                cap: self.capture_cap,
                at: self.offset(),
            });
        }
        Ok(vec)
    }

    /// Captures the next value whole (after whitespace), checked by the skip rules. Also gives
    /// its nesting depth.
    pub(crate) fn capture_value(&mut self) -> Result<(Vec<u8>, usize), StreamError> {
        self.peek_ws()?;
        self.start_capture();
        let depth = self.skip_value();
        let bytes = self.end_capture();
        let depth = depth?;
        Ok((bytes?, depth))
    }

    /// Reads an object key (the opening quote is next, after whitespace) as serde_json's
    /// `String` would, and the colon after it.
    pub(crate) fn key(&mut self) -> Result<String, StreamError> {
        if self.peek_ws()? != Some(b'"') {
            return self.fail("expected a key");
        }
        self.start_capture();
        self.pos += 1;
        let skipped = self.skip_str();
        let raw = self.end_capture()?;
        skipped?;
        let inner = &raw[1..raw.len() - 1];
        let key = if inner.contains(&b'\\') {
            serde_json::from_slice::<String>(&raw).map_err(StreamError::Key)?
        } else {
            String::from_utf8(inner.to_vec())
                .map_err(|_| StreamError::KeyUtf8 { at: self.offset() })?
        };
        self.expect(b':', "expected `:`")?;
        Ok(key)
    }

    /// After a member or element: `true` for a comma (more follow), `false` for `close`.
    pub(crate) fn comma_or(&mut self, close: u8) -> Result<bool, StreamError> {
        match self.peek_ws()? {
            Some(b',') => {
                self.pos += 1;
                Ok(true)
            }
            Some(b) if b == close => {
                self.pos += 1;
                Ok(false)
            }
            _ => self.fail(if close == b'}' {
                "expected `,` or `}`"
            } else {
                "expected `,` or `]`"
            }),
        }
    }

    /// After an opening bracket: `true` when the container is empty (and consumes the close).
    pub(crate) fn empty(&mut self, close: u8) -> Result<bool, StreamError> {
        if self.peek_ws()? == Some(close) {
            self.pos += 1;
            return Ok(true);
        }
        Ok(false)
    }

    /// Skips a string whose opening quote is consumed: escapes checked, control characters
    /// refused, UTF-8 not checked (serde_json's `ignore_str`).
    pub(crate) fn skip_str(&mut self) -> Result<(), StreamError> {
        loop {
            if self.pos == self.end && !self.fill()? {
                return self.fail("EOF while parsing a string");
            }
            let avail = &self.buf[self.pos..self.end];
            let run = plain_run(avail);
            let stop = avail.get(run).copied();
            self.pos += run;
            match stop {
                None => {}
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(());
                }
                Some(b'\\') => {
                    self.pos += 1;
                    self.skip_escape()?;
                }
                Some(_) => return self.fail("control character while parsing a string"),
            }
        }
    }

    fn hex4(&mut self) -> Result<u16, StreamError> {
        let mut n = 0u16;
        for _ in 0..4 {
            let b = self.next_or_eof("EOF while parsing a string")?;
            n = (n << 4) | hex(b).map_or_else(|| self.fail("invalid escape"), Ok)?;
        }
        Ok(n)
    }

    fn skip_escape(&mut self) -> Result<(), StreamError> {
        match self.next_or_eof("EOF while parsing a string")? {
            e if simple_escape(e).is_some() => Ok(()),
            b'u' => self.hex4().map(|_| ()),
            _ => self.fail("invalid escape"),
        }
    }

    fn skip_ident(&mut self, rest: &[u8]) -> Result<(), StreamError> {
        for &want in rest {
            match self.peek()? {
                Some(b) if b == want => self.pos += 1,
                Some(_) => return self.fail("expected ident"),
                None => return self.fail("EOF while parsing a value"),
            }
        }
        Ok(())
    }

    fn digits(&mut self) -> Result<usize, StreamError> {
        let mut n = 0;
        while let Some(b'0'..=b'9') = self.peek()? {
            self.pos += 1;
            n += 1;
        }
        Ok(n)
    }

    /// serde_json's `ignore_integer`, `ignore_decimal`, `ignore_exponent`.
    fn skip_number(&mut self) -> Result<(), StreamError> {
        if self.peek()? == Some(b'-') {
            self.pos += 1;
        }
        match self.peek()? {
            Some(b'0') => {
                self.pos += 1;
                if let Some(b'0'..=b'9') = self.peek()? {
                    return self.fail("invalid number");
                }
            }
            Some(b'1'..=b'9') => {
                self.digits()?;
            }
            _ => return self.fail("invalid number"),
        }
        if self.peek()? == Some(b'.') {
            self.pos += 1;
            if self.digits()? == 0 {
                return self.fail("invalid number");
            }
        }
        if let Some(b'e' | b'E') = self.peek()? {
            self.pos += 1;
            if let Some(b'+' | b'-') = self.peek()? {
                self.pos += 1;
            }
            if self.digits()? == 0 {
                return self.fail("invalid number");
            }
        }
        Ok(())
    }

    /// Skips one value after whitespace, with serde_json's `ignore_value` rules (no depth
    /// limit: it is iterative). Gives the value's nesting depth.
    pub(crate) fn skip_value(&mut self) -> Result<usize, StreamError> {
        let mut stack: Vec<u8> = Vec::new();
        let mut deepest = 0;
        loop {
            // A value.
            let Some(b) = self.peek_ws()? else {
                return self.fail("EOF while parsing a value");
            };
            match b {
                b'n' | b't' | b'f' => {
                    self.pos += 1;
                    let rest: &[u8] = match b {
                        b'n' => b"ull",
                        b't' => b"rue",
                        _ => b"alse",
                    };
                    self.skip_ident(rest)?;
                }
                b'-' | b'0'..=b'9' => self.skip_number()?,
                b'"' => {
                    self.pos += 1;
                    self.skip_str()?;
                }
                b'[' | b'{' => {
                    self.pos += 1;
                    stack.push(b);
                    deepest = deepest.max(stack.len());
                    let close = if b == b'[' { b']' } else { b'}' };
                    if !self.empty(close)? {
                        if b == b'{' {
                            self.object_key()?;
                        }
                        continue;
                    }
                    stack.pop();
                }
                _ => return self.fail("expected value"),
            }
            // After a value: close containers or go on to the next member.
            loop {
                let Some(&frame) = stack.last() else {
                    return Ok(deepest);
                };
                let close = if frame == b'[' { b']' } else { b'}' };
                if self.comma_or(close)? {
                    if frame == b'{' {
                        self.object_key()?;
                    }
                    break;
                }
                stack.pop();
            }
        }
    }

    /// A key inside a skipped object: not decoded, not checked for UTF-8.
    fn object_key(&mut self) -> Result<(), StreamError> {
        match self.peek_ws()? {
            Some(b'"') => {
                self.pos += 1;
                self.skip_str()?;
                self.expect(b':', "expected `:`")
            }
            None => self.fail("EOF while parsing an object"),
            _ => self.fail("key must be a string"),
        }
    }

    /// Decodes a string whose opening quote is next (after whitespace) as serde_json's `String`
    /// would (escapes, surrogate pairs, UTF-8), handing the text on in pieces: long unescaped
    /// runs where they lie, the rest gathered in blocks.
    pub(crate) fn decode_str(
        &mut self,
        out: &mut dyn FnMut(&[u8]) -> Result<(), StreamError>,
    ) -> Result<(), StreamError> {
        if self.peek_ws()? != Some(b'"') {
            return self.fail("expected a string");
        }
        self.pos += 1;
        let mut block = std::mem::replace(
            &mut self.text,
            Block {
                bytes: Box::new([]),
                len: 0,
            },
        );
        block.len = 0;
        let decoded = self.decode_rest(&mut block, out);
        self.text = block;
        decoded
    }

    /// [`decode_str`](Self::decode_str) after the opening quote, gathering in `block`.
    fn decode_rest(
        &mut self,
        block: &mut Block,
        out: &mut dyn FnMut(&[u8]) -> Result<(), StreamError>,
    ) -> Result<(), StreamError> {
        let mut utf8 = Utf8::default();
        loop {
            if self.pos == self.end && !self.fill()? {
                return self.fail("EOF while parsing a string");
            }
            self.pos += decode_words(&self.buf[self.pos..self.end], block);
            if block.len >= OUT_BLOCK {
                utf8.push(block.filled(), out)?;
                block.len = 0;
                continue;
            }
            let avail = &self.buf[self.pos..self.end];
            let run = plain_run(avail);
            if run >= DIRECT_RUN {
                if block.len > 0 {
                    utf8.push(block.filled(), out)?;
                    block.len = 0;
                }
                utf8.push(&avail[..run], out)?;
            } else {
                block.append_run(avail, run);
            }
            let stop = avail.get(run).copied();
            // The escaped character, when the whole escape is in the window.
            let simple = avail.get(run + 1).copied().and_then(simple_escape);
            self.pos += run;
            match stop {
                None => {}
                Some(b'"') => {
                    self.pos += 1;
                    if block.len > 0 {
                        utf8.push(block.filled(), out)?;
                    }
                    if utf8.n > 0 {
                        return self.fail("invalid unicode code point");
                    }
                    return Ok(());
                }
                Some(b'\\') => {
                    // Escapes give whole characters, so checking the raw runs and the escapes
                    // as one sequence is checking each raw run alone.
                    if let Some(c) = simple {
                        self.pos += 2;
                        block.push(c);
                    } else {
                        self.pos += 1;
                        self.escape(block)?;
                    }
                }
                Some(_) => return self.fail("control character while parsing a string"),
            }
            if block.len >= OUT_BLOCK {
                utf8.push(block.filled(), out)?;
                block.len = 0;
            }
        }
    }

    /// serde_json's `parse_escape` with validation (lone surrogates refused).
    fn escape(&mut self, block: &mut Block) -> Result<(), StreamError> {
        let e = self.next_or_eof("EOF while parsing a string")?;
        if let Some(c) = simple_escape(e) {
            block.push(c);
            return Ok(());
        }
        match e {
            b'u' => {
                let n = self.hex4()?;
                let ch = match n {
                    0xDC00..=0xDFFF => return self.fail("lone leading surrogate in hex escape"),
                    0xD800..=0xDBFF => {
                        if self.next_or_eof("EOF while parsing a string")? != b'\\'
                            || self.next_or_eof("EOF while parsing a string")? != b'u'
                        {
                            return self.fail("unexpected end of hex escape");
                        }
                        let n2 = self.hex4()?;
                        if !(0xDC00..=0xDFFF).contains(&n2) {
                            return self.fail("lone leading surrogate in hex escape");
                        }
                        0x1_0000 + ((u32::from(n - 0xD800) << 10) | u32::from(n2 - 0xDC00))
                    }
                    _ => u32::from(n),
                };
                let ch = char::from_u32(ch).unwrap_or(char::REPLACEMENT_CHARACTER);
                let mut tmp = [0u8; 4];
                block.extend(ch.encode_utf8(&mut tmp).as_bytes());
                Ok(())
            }
            _ => self.fail("invalid escape"),
        }
    }
}

/// UTF-8 validation across pieces: a character split between two pieces is carried over.
#[derive(Default)]
struct Utf8 {
    carry: [u8; 4],
    n: usize,
}

impl Utf8 {
    fn push(
        &mut self,
        mut bytes: &[u8],
        out: &mut dyn FnMut(&[u8]) -> Result<(), StreamError>,
    ) -> Result<(), StreamError> {
        let invalid = || Err::<(), StreamError>(StreamError::InvalidCodePoint);
        while self.n > 0 && !bytes.is_empty() {
            self.carry[self.n] = bytes[0];
            self.n += 1;
            bytes = &bytes[1..];
            match std::str::from_utf8(&self.carry[..self.n]) {
                Ok(_) => {
                    out(&self.carry[..self.n])?;
                    self.n = 0;
                }
                Err(e) if e.error_len().is_some() => return invalid(),
                Err(_) if self.n == 4 => return invalid(),
                Err(_) => {}
            }
        }
        match std::str::from_utf8(bytes) {
            Ok(_) => {
                if !bytes.is_empty() {
                    out(bytes)?;
                }
                Ok(())
            }
            Err(e) if e.error_len().is_some() => invalid(),
            Err(e) => {
                let good = e.valid_up_to();
                if good > 0 {
                    out(&bytes[..good])?;
                }
                let tail = &bytes[good..];
                self.carry[..tail.len()].copy_from_slice(tail);
                self.n = tail.len();
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The word-at-a-time scan stops where a byte-by-byte one does, for every byte value at
    /// every position of a word and in the tail.
    #[test]
    fn plain_run_matches_bytewise_scan() {
        let bytewise = |b: &[u8]| {
            b.iter()
                .position(|&c| c == b'"' || c == b'\\' || c < 0x20)
                .unwrap_or(b.len())
        };
        for len in [1, 7, 8, 9, 16, 21] {
            for at in 0..len {
                for stop in 0..=255u8 {
                    let mut bytes = vec![b'a'; len];
                    bytes[len - 1] = 0xC3;
                    bytes[at] = stop;
                    assert_eq!(plain_run(&bytes), bytewise(&bytes), "{bytes:?}");
                }
            }
        }
        assert_eq!(plain_run(b""), 0);
    }

    /// Text dense in escapes (as an SSE body is in a HAR), long enough to fill several output
    /// blocks and input windows, with every kind of piece at every alignment, decodes as
    /// serde_json decodes it; and a control character or a bad escape anywhere in it is
    /// refused as serde_json refuses it.
    #[test]
    fn escape_dense_text_decodes_as_serde() {
        let pieces = [
            "a",
            "data: ",
            "jsonrpc",
            "\\\"",
            "\\n",
            "\\\\",
            "\\/",
            "\\t",
            "\\u00e9",
            "é",
            "\\ud83d\\ude00",
            "€",
            "0123456789abcdef",
            "x\\ry",
        ];
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let mut doc = String::from("\"");
        while doc.len() < 3 * BLOCK + 777 {
            doc.push_str(pieces[(next() % pieces.len() as u64) as usize]);
        }
        doc.push('"');
        let decode = |doc: &str| {
            let mut src = Src::new(Forward(doc.as_bytes()), 1 << 20);
            let mut got = Vec::new();
            src.decode_str(&mut |piece| {
                got.extend_from_slice(piece);
                Ok(())
            })
            .map(|()| (got, src.offset()))
        };
        let want: String = serde_json::from_str(&doc).unwrap();
        assert_eq!(decode(&doc).unwrap(), (want.into_bytes(), doc.len() as u64));
        for bad in ["\u{1}", "\\x", "\\u12", "\\ude00"] {
            for _ in 0..40 {
                let mut at = 1 + (next() % (doc.len() as u64 - 2)) as usize;
                while !doc.is_char_boundary(at) || doc[..at].ends_with('\\') {
                    at -= 1;
                }
                let damaged = format!("{}{bad}{}", &doc[..at], &doc[at..]);
                if serde_json::from_str::<String>(&damaged).is_err() {
                    assert!(decode(&damaged).is_err(), "{bad:?} at {at}");
                }
            }
        }
    }

    /// Escapes and multi-byte characters that straddle a block boundary, at every split,
    /// decode as serde_json decodes them.
    #[test]
    fn escapes_across_block_boundaries_decode_as_serde() {
        let tail = r#"\n\"\\\/\u00e9\ud83d\ude00é€x\t"#;
        for shift in 0..24 {
            let mut doc = String::from("\"");
            doc.push_str(&"a".repeat(BLOCK - 12 + shift));
            for _ in 0..3 {
                doc.push_str(tail);
            }
            doc.push('"');
            let want: String = serde_json::from_str(&doc).unwrap();
            let mut src = Src::new(Forward(doc.as_bytes()), 1 << 20);
            let mut got = Vec::new();
            src.decode_str(&mut |piece| {
                got.extend_from_slice(piece);
                Ok(())
            })
            .unwrap();
            assert_eq!(got, want.as_bytes(), "shift {shift}");
            assert_eq!(src.offset(), doc.len() as u64);
        }
    }
}
