//! Names and numbers on the wire, each written once: MCP's reserved error codes, the `_meta`
//! keys, the two media types of Streamable HTTP and how a `Content-Type` is read.

// The codes, with the revisions that define them, are the table in `vocab::codes`.
pub(crate) use crate::vocab::codes::{HEADER_MISMATCH, UNSUPPORTED_PROTOCOL_VERSION};

/// The codes that mean "rejected before dispatch because of the request itself" (2026-07-28):
/// `-32022..=-32020`, with `-32021` MissingRequiredClientCapability between the two above.
pub(crate) fn is_pre_dispatch(code: i64) -> bool {
    (UNSUPPORTED_PROTOCOL_VERSION..=HEADER_MISMATCH).contains(&code)
}

/// `_meta` key of the request's protocol version (2026-07-28).
pub(crate) const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// `_meta` key where a client names itself, `{"name", "version"}` (2026-07-28).
pub(crate) const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
/// `_meta` key of the client's capabilities (2026-07-28).
pub(crate) const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
/// `_meta` key with which a request asks for `notifications/message` (2026-07-28).
pub(crate) const META_LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";
/// The member of a RateLimited (`-32023`) error's `data` that says how long to wait, in
/// milliseconds (the rate-limiting SEP; it wins over `Retry-After` when both are sent).
pub(crate) const DATA_RETRY_AFTER_MS: &str = "retryAfterMs";

/// The JSON media type.
pub(crate) const JSON: &str = "application/json";
/// The SSE media type.
pub(crate) const EVENT_STREAM: &str = "text/event-stream";

/// A media type's essence: the part before any parameters, without the optional whitespace
/// around it (SP and HTAB, RFC 9110), case kept.
pub(crate) fn media_type(value: &str) -> &str {
    // By bytes: `split` and `trim_matches` set up searchers that cost more than these few
    // bytes (every judged exchange reads its `Content-Type`).
    let b = value.as_bytes();
    let end = b.iter().position(|&c| c == b';').unwrap_or(b.len());
    let is_ws = |c: &u8| *c == b' ' || *c == b'\t';
    let start = b[..end].iter().position(|c| !is_ws(c)).unwrap_or(end);
    let end = b[..end]
        .iter()
        .rposition(|c| !is_ws(c))
        .map_or(start, |e| e + 1);
    &value[start..end]
}

/// `a == b` ignoring ASCII case, exactly as `eq_ignore_ascii_case`, eight bytes at a time:
/// the header names and media types compared on every exchange are short, where the
/// library's version costs more to set up than to compare.
#[inline]
pub(crate) fn eq_ignoring_case(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    if n < 8 {
        return a.iter().zip(b).all(|(x, y)| x.eq_ignore_ascii_case(y));
    }
    let word =
        |s: &[u8], i: usize| fold(<[u8; 8]>::try_from(&s[i..i + 8]).map_or(0, u64::from_le_bytes));
    let mut i = 0;
    while i + 8 < n {
        if word(a, i) != word(b, i) {
            return false;
        }
        i += 8;
    }
    // The last eight bytes (overlapping the word before: equality does not mind).
    word(a, n - 8) == word(b, n - 8)
}

/// `eq_ignoring_case(a, lower)` where `lower` has no upper-case letter (a name as written in
/// this crate): only `a` needs folding, and a name under eight bytes is one word.
#[inline]
pub(crate) fn eq_lower(a: &[u8], lower: &[u8]) -> bool {
    let n = a.len();
    if n != lower.len() {
        return false;
    }
    debug_assert!(!lower.iter().any(u8::is_ascii_uppercase));
    if n < 8 {
        // From four bytes on, the first four and the last four (overlapping) make one word.
        let word = |s: &[u8]| match (s.first_chunk::<4>(), s.last_chunk::<4>()) {
            (Some(&head), Some(&tail)) => {
                u64::from(u32::from_le_bytes(head)) | u64::from(u32::from_le_bytes(tail)) << 32
            }
            _ => s.iter().rev().fold(0u64, |w, &c| (w << 8) | u64::from(c)),
        };
        return fold(word(a)) == word(lower);
    }
    let word = |s: &[u8], i: usize| <[u8; 8]>::try_from(&s[i..i + 8]).map_or(0, u64::from_le_bytes);
    let mut i = 0;
    while i + 8 < n {
        if fold(word(a, i)) != word(lower, i) {
            return false;
        }
        i += 8;
    }
    fold(word(a, n - 8)) == word(lower, n - 8)
}

/// A one in every byte of a word, for the word-at-a-time byte tricks here and in the scans.
pub(crate) const ONES: u64 = 0x0101_0101_0101_0101;
/// The high bit of every byte of a word.
const HIGH: u64 = 0x8080_8080_8080_8080;

/// A high bit in each byte of `w` that is zero (and, above the lowest such byte, maybe in a
/// byte that is one: callers read the lowest hit, or check each hit).
#[inline(always)]
pub(crate) fn zero_bytes(w: u64) -> u64 {
    w.wrapping_sub(ONES) & !w & HIGH
}

/// A high bit in each byte of `w` below `0x20` (a control character), as [`zero_bytes`].
#[inline(always)]
pub(crate) fn control_bytes(w: u64) -> u64 {
    w.wrapping_sub(ONES * 0x20) & !w & HIGH
}

/// Eight bytes with every ASCII upper-case letter made lower case (others kept).
#[inline]
fn fold(w: u64) -> u64 {
    // Per byte, on its low seven bits (no carry leaves a byte): the high bit is set when the
    // byte is at least `A`, and when it is past `Z`.
    let low = w & !HIGH;
    let from_a = low + ONES * u64::from(0x80 - b'A');
    let past_z = low + ONES * u64::from(0x80 - b'Z' - 1);
    let upper = from_a & !past_z & !w & HIGH;
    w | (upper >> 2)
}

/// Whether `value` (a `Content-Type`) names `expected`, case-insensitively, parameters ignored.
#[cfg_attr(not(feature = "rmcp"), allow(dead_code))]
pub(crate) fn media_type_is(value: &str, expected: &str) -> bool {
    media_type(value).eq_ignore_ascii_case(expected)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pre_dispatch_range_is_the_three_codes() {
        let codes: Vec<i64> = (-32030..=-32010).filter(|&c| is_pre_dispatch(c)).collect();
        assert_eq!(
            codes,
            [UNSUPPORTED_PROTOCOL_VERSION, -32021, HEADER_MISMATCH]
        );
    }

    #[test]
    fn media_types() {
        assert_eq!(
            media_type(" Application/JSON ; charset=utf-8"),
            "Application/JSON"
        );
        assert!(media_type_is("Application/JSON; charset=utf-8", JSON));
        assert!(!media_type_is("application/jsonx", JSON));
        assert!(media_type_is("text/event-stream", EVENT_STREAM));
        for v in ["", ";", " ; x", "\t", "a", " a\t;b", "a b ;", "\u{e9} x ;y"] {
            let old = v.split(';').next().unwrap_or("").trim_matches([' ', '\t']);
            assert_eq!(media_type(v), old, "{v:?}");
        }
    }

    /// The word-wise comparison agrees with the library's on every byte pair, at every
    /// position of a word and of the tail, in names under four bytes, under eight and longer.
    #[test]
    fn eq_ignoring_case_is_eq_ignore_ascii_case() {
        for x in 0..=255u8 {
            for y in 0..=255u8 {
                for (at, len) in [
                    (0, 11),
                    (3, 11),
                    (7, 11),
                    (8, 11),
                    (10, 11),
                    (2, 5),
                    (0, 3),
                    (3, 4),
                    (0, 6),
                    (5, 6),
                    (4, 7),
                    (6, 8),
                    (15, 16),
                ] {
                    let mut a = *b"Content-Type-Two";
                    let mut b = *b"content-type-two";
                    a[at] = x;
                    b[at] = y;
                    assert_eq!(
                        eq_ignoring_case(&a[..len], &b[..len]),
                        a[..len].eq_ignore_ascii_case(&b[..len]),
                        "{x} {y} at {at}"
                    );
                    if !y.is_ascii_uppercase() {
                        assert_eq!(
                            eq_lower(&a[..len], &b[..len]),
                            a[..len].eq_ignore_ascii_case(&b[..len]),
                            "{x} {y} at {at}"
                        );
                    }
                }
            }
        }
        assert!(!eq_ignoring_case(b"accept", b"accepts"));
        assert!(!eq_lower(b"accept", b"accepts"));
        assert!(eq_ignoring_case(b"", b""));
    }
}
