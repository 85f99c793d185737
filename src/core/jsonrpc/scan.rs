//! The fast path of the envelope parse: one pass over a message object that validates its
//! syntax and picks out the top-level members (and the two `params` members the progress checks
//! read) as borrowed text, without serde's visitor machinery.
//!
//! It is sound, not complete: when it returns `Some`, serde_json would have accepted the text
//! and produced the same envelope (`tests/envelope_scan.rs` and the `sse_framer` and `exchange`
//! fuzz targets check this). Anything unusual — an escaped key, a repeated envelope member, nesting deeper than
//! serde_json's limit, any syntax error — gives `None`, and the caller takes the serde path,
//! which also words the error.

use super::{Envelope, Key, ParamsReader, Raw};
use crate::vocab::members::{ResultMembers, ScannedMembers};

/// serde_json's recursion limit; deeper input goes to serde_json, which decides.
const MAX_DEPTH: u32 = 128;

/// Scans `text` as one JSON-RPC message object.
#[cfg(any(test, feature = "fuzzing"))]
pub(super) fn object(text: &str) -> Option<Envelope<'_>> {
    let mut env = Envelope::empty(text);
    object_into(text, &mut env).then_some(env)
}

/// Scans `text` as one JSON-RPC message object into `env` (made by [`Envelope::empty`] from
/// the same text); `false` when the scan defers, and then `env` is not to be read. Inlined,
/// and filling the caller's envelope, so that no envelope is moved: moving one cost more
/// than the scan of a short message's members.
#[inline(always)]
pub(super) fn object_into<'a>(text: &'a str, env: &mut Envelope<'a>) -> bool {
    object_reading_result(text, env, None)
}

/// [`object_into`], and where `result` is given, the result object's members read by the same
/// pass into it ([`result_members_at`]: `Some(read)` as [`ResultMembers::read`] of the
/// `result` text gives it; left `None` where that scan defers, and then the value is scanned as
/// any other). Nothing in `result` is to be read when this returns `false`.
#[inline(always)]
pub(super) fn object_reading_result<'a>(
    text: &'a str,
    env: &mut Envelope<'a>,
    mut result: Option<&mut ScannedMembers<'a>>,
) -> bool {
    let b = text.as_bytes();
    let lead = b.starts_with(LEAD);
    if lead {
        env.jsonrpc = Some(Raw(&text[LEAD.len() - 6..LEAD.len() - 1]));
    }
    let mut member = |key: &'a [u8], start: usize| {
        if key == b"params" {
            // serde's params visitor decodes a `params` that is not an object (and rejects a
            // lone surrogate escape or a number out of range, where the scan only checks the
            // syntax): MCP params are objects, so leave the rest to it. A repeated `params`
            // is an error for serde's derive: that too.
            if b.get(start) != Some(&b'{') || env.params.is_some() {
                return None;
            }
            let mut reader = ParamsReader::new();
            let end = members(b, start, |key, at| {
                let end = any(b, at, 2)?;
                reader.member(Key::of(key), &text[at..end]);
                Some(end)
            })?;
            env.params = Some(reader.params);
            return Some(end);
        }
        if key == b"method" {
            // The method's text without escapes is the method; one with escapes (or not a
            // string) is left to the checks that read the raw member.
            let (end, plain) = match b.get(start) {
                Some(b'"') => string_escapes(b, start)?,
                _ => (value(b, start, 1)?, false),
            };
            if env.has_method {
                return None; // serde's derive rejects a repeated member
            }
            env.has_method = true;
            env.method = plain.then(|| &text[start + 1..end - 1]);
            return Some(end);
        }
        if key == b"result"
            && let Some(members) = result.as_deref_mut()
            && let Some((read, end)) = result_members_at(text, start, 2)
        {
            // serde's derive rejects a repeated member.
            env.result
                .replace(Raw(&text[start..end]))
                .is_none()
                .then_some(())?;
            *members = Some(read);
            return Some(end);
        }
        let end = any(b, start, 1)?;
        let slot = match key {
            b"jsonrpc" => &mut env.jsonrpc,
            b"id" => &mut env.id,
            b"result" => &mut env.result,
            b"error" => &mut env.error,
            _ => return Some(end),
        };
        // serde's derive rejects a repeated member.
        slot.replace(Raw(&text[start..end]))
            .is_none()
            .then_some(end)
    };
    let end = if lead {
        members_from(b, LEAD.len(), &mut member)
    } else {
        let open = ws(b, 0);
        if b.get(open) != Some(&b'{') {
            return false;
        }
        members(b, open, &mut member)
    };
    matches!(end, Some(end) if ws(b, end) == b.len())
}

/// The members of the result object at `open` in `text` as [`ResultMembers::read`] gives
/// them (`Some(None)` for a repeated member), its member values nested from `depth` on (as
/// the envelope scan counts: 1 alone, 2 as a message's `result`), with the index after it;
/// `None` to leave the text to serde_json. It validates exactly what [`any`] would there, so
/// the envelope scan reads a `result` by it ([`object_reading_result`]), not twice. Here, not
/// in the result layer, because the envelope scan calls it: the result layer reads through
/// this module, never the other way.
pub(crate) fn result_members_at<'a>(
    text: &'a str,
    open: usize,
    depth: u32,
) -> Option<(Option<ResultMembers<'a>>, usize)> {
    let b = text.as_bytes();
    if b.get(open) != Some(&b'{') {
        return None;
    }
    let mut m = ResultMembers {
        scanned: true,
        ..ResultMembers::default()
    };
    let mut repeated = false;
    let end = members(b, open, |key, at| {
        // Text blocks are told plain while they are read (the fast shape check's).
        let plain = if key == b"content" {
            text_blocks(text, at, depth)
        } else {
            None
        };
        m.plain_content |= plain.is_some();
        let end = match plain {
            Some(end) => end,
            None => any(b, at, depth)?,
        };
        let slot = match key {
            b"resultType" => &mut m.result_type,
            b"content" => &mut m.content,
            b"isError" => &mut m.is_error,
            b"structuredContent" => &mut m.structured_content,
            b"inputRequests" => &mut m.input_requests,
            b"requestState" => &mut m.request_state,
            b"task" => &mut m.task,
            b"_meta" => {
                m.meta = true;
                return Some(end);
            }
            _ => return Some(end),
        };
        repeated |= slot.replace(&text[at..end]).is_some();
        Some(end)
    })?;
    Some(((!repeated).then_some(m), end))
}

/// The array at `at` in `text` holds plain text blocks only (maybe none): the index after it.
/// `None` for anything else (the caller reads the value some other way). The array is nested
/// at `depth` as [`any`] counts. (The fast shape check's question, asked while the result
/// scan reads `content`, so it is answered here.)
pub(super) fn text_blocks(text: &str, at: usize, depth: u32) -> Option<usize> {
    let b = text.as_bytes();
    if b.get(at) != Some(&b'[') {
        return None;
    }
    let mut i = ws(b, at + 1);
    if b.get(i) != Some(&b']') {
        loop {
            i = ws(b, text_block(text, i, depth + 2)?);
            match b.get(i)? {
                b',' => i = ws(b, i + 1),
                b']' => break,
                _ => return None,
            }
        }
    }
    Some(i + 1)
}

/// A plain text block at `at`, its member values nested at `depth`; the index after it.
fn text_block(content: &str, at: usize, depth: u32) -> Option<usize> {
    // The block as the SDKs serialize it (`type` first, then `text`, nothing else): told by
    // one compare and the string's scan. Anything else takes the member loop.
    const PLAIN: &[u8] = br#"{"type":"text","text":""#;
    let b = content.as_bytes();
    if b.get(at..at + PLAIN.len()) == Some(PLAIN)
        && let Some(end) = any(b, at + PLAIN.len() - 1, depth)
        && b.get(end) == Some(&b'}')
    {
        return Some(end + 1);
    }
    if b.get(at) != Some(&b'{') {
        return None;
    }
    let (mut kind, mut text, mut other) = (0, 0, false);
    let end = members(b, at, |key, value| {
        let end = any(b, value, depth)?;
        let raw = &content[value..end];
        match key {
            b"type" => {
                kind += 1;
                other |= raw != "\"text\"";
            }
            b"text" => {
                text += 1;
                other |= !raw.starts_with('"');
            }
            b"_meta" | b"annotations" => other = true,
            _ => {}
        }
        Some(end)
    })?;
    (kind == 1 && text == 1 && !other).then_some(end)
}

/// How a message begins as the SDKs write it: `jsonrpc` first, compact. Read by one compare,
/// the member loop going on after its comma.
pub(crate) const LEAD: &[u8] = br#"{"jsonrpc":"2.0","#;

/// The members of the object whose `{` is at `open`, keys without escapes: `member(key, at)`
/// reads the value at `at` and returns where it ends. Returns the index after the `}`.
#[inline(always)]
pub(crate) fn members<'b>(
    b: &'b [u8],
    open: usize,
    member: impl FnMut(&'b [u8], usize) -> Option<usize>,
) -> Option<usize> {
    let i = ws(b, open + 1);
    if b.get(i) == Some(&b'}') {
        return Some(i + 1);
    }
    members_from(b, i, member)
}

/// [`members`] from `i`, where a key is due (after the `{`, or after a member's `,`).
pub(crate) fn members_from<'b>(
    b: &'b [u8],
    mut i: usize,
    mut member: impl FnMut(&'b [u8], usize) -> Option<usize>,
) -> Option<usize> {
    i = ws(b, i);
    loop {
        let (key, after) = key(b, i)?;
        i = ws(b, after);
        if b.get(i) != Some(&b':') {
            return None;
        }
        i = ws(b, member(key, ws(b, i + 1))?);
        match b.get(i) {
            Some(b',') => i = ws(b, i + 1),
            Some(b'}') => return Some(i + 1),
            _ => return None,
        }
    }
}

/// JSON whitespace from `i`. Inlined with a test for the usual case, a byte that is no
/// whitespace (the SDKs write compact JSON): called four times per member, the loop's own
/// four-way test was a tenth of a small message's scan.
#[inline(always)]
pub(crate) fn ws(b: &[u8], i: usize) -> usize {
    match b.get(i) {
        Some(&c) if c > b' ' => i,
        _ => ws_from(b, i),
    }
}

/// [`ws`] past the first byte.
#[inline(never)]
fn ws_from(b: &[u8], mut i: usize) -> usize {
    while let Some(b' ' | b'\n' | b'\r' | b'\t') = b.get(i) {
        i += 1;
    }
    i
}

/// The first `"`, `\` or control character at or after `i`, eight bytes at a time (the
/// strings of a message are short: a SIMD search costs more to set up than it saves).
/// Inlined into its two callers: a call per key cost a third of the key's search.
#[inline(always)]
fn special(b: &[u8], mut i: usize) -> Option<usize> {
    use crate::wire::{ONES, control_bytes, zero_bytes};
    while let Some(word) = b.get(i..i + 8) {
        let w = u64::from_le_bytes(word.try_into().ok()?);
        // Only the lowest hit is read (see `zero_bytes`).
        let hits = zero_bytes(w ^ (ONES * u64::from(b'"')))
            | zero_bytes(w ^ (ONES * u64::from(b'\\')))
            | control_bytes(w);
        if hits != 0 {
            return Some(i + (hits.trailing_zeros() / 8) as usize);
        }
        i += 8;
    }
    b[i..]
        .iter()
        .position(|&c| c == b'"' || c == b'\\' || c < 0x20)
        .map(|n| i + n)
}

/// An object key at `i` without escapes: its bytes and the index after its closing quote.
/// Inlined: called for every key of every message, a call and its returned pair cost as much
/// as the search of a short key.
#[inline(always)]
pub(crate) fn key(b: &[u8], i: usize) -> Option<(&[u8], usize)> {
    if b.get(i) != Some(&b'"') {
        return None;
    }
    let end = special(b, i + 1)?;
    if b[end] != b'"' {
        return None;
    }
    Some((&b[i + 1..end], end + 1))
}

/// A string at `i` (at its opening quote); the index after its closing quote.
#[inline]
fn string(b: &[u8], i: usize) -> Option<usize> {
    string_escapes(b, i).map(|(end, _)| end)
}

/// The text of `raw`, one whole JSON string (quotes included, as scanned): borrowed when it
/// holds no escape, else decoded by serde_json; `None` when `raw` is no such string.
pub(crate) fn unescaped(raw: &str) -> Option<std::borrow::Cow<'_, str>> {
    match string_escapes(raw.as_bytes(), 0)? {
        (end, true) if end == raw.len() => Some(std::borrow::Cow::Borrowed(&raw[1..end - 1])),
        _ => serde_json::from_str::<String>(raw)
            .ok()
            .map(std::borrow::Cow::Owned),
    }
}

/// A string at `i` (at its opening quote): the index after its closing quote, and whether it
/// holds no escape.
/// Inlined, as [`key`]: its callers read the strings of every message.
#[inline(always)]
pub(crate) fn string_escapes(b: &[u8], mut i: usize) -> Option<(usize, bool)> {
    i += 1;
    let mut plain = true;
    loop {
        i = special(b, i)?;
        match b[i] {
            b'"' => return Some((i + 1, plain)),
            b'\\' => plain = false,
            _ => return None, // a control character
        }
        // An escape: as serde_json accepts it (any `\uXXXX`, paired or not).
        match b.get(i + 1)? {
            b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => i += 2,
            b'u' => {
                let hex = b.get(i + 2..i + 6)?;
                if !hex.iter().all(u8::is_ascii_hexdigit) {
                    return None;
                }
                i += 6;
            }
            _ => return None,
        }
    }
}

/// A number at `i`, by the JSON grammar; the index after it. Inlined, as [`key`].
#[inline(always)]
pub(crate) fn number(b: &[u8], mut i: usize) -> Option<usize> {
    let digits = |b: &[u8], mut i: usize| {
        let start = i;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        (i > start).then_some(i)
    };
    if b.get(i) == Some(&b'-') {
        i += 1;
    }
    match b.get(i)? {
        b'0' => i += 1,
        b'1'..=b'9' => i = digits(b, i)?,
        _ => return None,
    }
    if b.get(i) == Some(&b'.') {
        i = digits(b, i + 1)?;
    }
    if let Some(b'e' | b'E') = b.get(i) {
        i += 1;
        if let Some(b'+' | b'-') = b.get(i) {
            i += 1;
        }
        i = digits(b, i)?;
    }
    // serde_json reads `01` or `1x` as an error; leave those to it.
    if b.get(i)
        .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'.')
    {
        return None;
    }
    Some(i)
}

/// Any value at `i`, as [`value`]: the scalars a message's members mostly hold are read
/// without the container loop.
#[inline(always)]
pub(crate) fn any(b: &[u8], i: usize, depth: u32) -> Option<usize> {
    match *b.get(i)? {
        b'"' => string(b, i),
        b'-' | b'0'..=b'9' => number(b, i),
        _ => value(b, i, depth),
    }
}

/// Any value at `i`, nested at most [`MAX_DEPTH`] counting from `depth`; the index after it.
/// Iterative: the open containers are bits of a `u128` (1 = object).
fn value(b: &[u8], mut i: usize, depth: u32) -> Option<usize> {
    let mut stack: u128 = 0;
    let mut open: u32 = 0;
    loop {
        // A value starts at `i`.
        match *b.get(i)? {
            c @ (b'{' | b'[') => {
                if depth + open >= MAX_DEPTH {
                    return None;
                }
                let close = if c == b'{' { b'}' } else { b']' };
                i = ws(b, i + 1);
                if b.get(i) == Some(&close) {
                    i += 1;
                } else {
                    stack = (stack << 1) | u128::from(c == b'{');
                    open += 1;
                    if c == b'{' {
                        i = member_start(b, i)?;
                    }
                    continue;
                }
            }
            b'"' => i = string(b, i)?,
            b't' => i = literal(b, i, b"true")?,
            b'f' => i = literal(b, i, b"false")?,
            b'n' => i = literal(b, i, b"null")?,
            b'-' | b'0'..=b'9' => i = number(b, i)?,
            _ => return None,
        }
        // After a value: close containers, or move to the next element.
        loop {
            if open == 0 {
                return Some(i);
            }
            let in_object = stack & 1 == 1;
            i = ws(b, i);
            match *b.get(i)? {
                b',' => {
                    i = ws(b, i + 1);
                    if in_object {
                        i = member_start(b, i)?;
                    }
                    break;
                }
                b'}' if in_object => {}
                b']' if !in_object => {}
                _ => return None,
            }
            i += 1;
            stack >>= 1;
            open -= 1;
        }
    }
}

/// `"key" :` at `i` inside a nested object (escapes allowed: the key is not looked at); the
/// index of the value.
fn member_start(b: &[u8], i: usize) -> Option<usize> {
    if b.get(i) != Some(&b'"') {
        return None;
    }
    let i = ws(b, string(b, i)?);
    if b.get(i) != Some(&b':') {
        return None;
    }
    Some(ws(b, i + 1))
}

pub(crate) fn literal(b: &[u8], i: usize, word: &[u8]) -> Option<usize> {
    (b.get(i..i + word.len())? == word).then_some(i + word.len())
}
