//! The JSON objects of a [`Verdict`] and a [`Call`], written by hand: the lines the proxy writes
//! per exchange (`--log`) and per call (`--calls`), and `replay --format jsonl`'s.
//!
//! The bytes are exactly serde_json's of the derived `Serialize` (kept for every other output;
//! tests compare the two over the test captures), without its cost per line: keys are literal
//! bytes, wire names are copied as they are (none needs escaping), and only the strings that
//! come from traffic go through the escaper. Each writer destructures its struct whole, so a
//! field added later does not compile until it is written here too.

use serde_json::Value;

use super::call::Call;
use super::verdict::{Location, RetryAdvice, ServerRequest, Unterminated, Verdict, Violation};

impl Verdict {
    /// The start of each JSON line of `file`'s verdicts, `{"file":"…"`, escaped once to be
    /// reused for every line ([`Verdict::write_jsonl`]).
    pub fn jsonl_start(file: &str) -> Vec<u8> {
        let mut start = b"{\"file\":".to_vec();
        string(&mut start, file);
        start
    }

    /// Appends this verdict's line of `replay --format jsonl` and of the proxy's `--log`
    /// (without the newline): `start` ([`Verdict::jsonl_start`]), then the verdict's object
    /// with its `{` turned into the `,` after the file: the bytes `#[serde(flatten)]` of the
    /// file beside the verdict gives, written by hand at a fraction of serde's cost.
    pub fn write_jsonl(&self, buf: &mut Vec<u8>, start: &[u8]) {
        buf.extend_from_slice(start);
        let open = buf.len();
        verdict(buf, self);
        if let Some(b @ b'{') = buf.get_mut(open) {
            *b = b',';
        }
    }
}

impl Call {
    /// Appends the call's JSON object (without a newline) for the lines of `proxy --calls` and
    /// `--calls --format jsonl`: the bytes serde_json writes for it, written by hand at a
    /// fraction of serde's cost.
    pub fn write_json(&self, buf: &mut Vec<u8>) {
        call(buf, self);
    }
}

/// Appends the verdict's JSON object, member for member as serde_json writes it.
fn verdict(out: &mut Vec<u8>, v: &Verdict) {
    let Verdict {
        index,
        http_method,
        kind,
        batch_position,
        method,
        id,
        tool,
        protocol_version,
        protocol_version_source,
        outcome,
        layer,
        complete,
        status,
        content_type,
        error_code,
        error_message,
        result_type,
        event_count,
        last_event_id,
        resumable,
        end,
        retry,
        violations,
        unterminated,
        limit,
        server_requests,
        status_origin,
        origin_reason,
        client_error,
        task_status,
        task: _, // not serialized
    } = v;
    // One capacity check for the whole line, short of long strings (a line is ~700 bytes).
    out.reserve(1024);
    out.extend_from_slice(b"{\"index\":");
    uint(out, *index);
    out.extend_from_slice(b",\"http_method\":");
    opt(out, http_method.as_deref(), string);
    out.extend_from_slice(b",\"kind\":");
    opt(out, kind.map(|k| k.as_str()), word);
    out.extend_from_slice(b",\"batch_position\":");
    opt(out, batch_position.map(u64::from), uint);
    out.extend_from_slice(b",\"method\":");
    opt(out, method.as_deref(), string);
    out.extend_from_slice(b",\"id\":");
    opt(out, id.as_ref(), value);
    out.extend_from_slice(b",\"tool\":");
    opt(out, tool.as_deref(), string);
    out.extend_from_slice(b",\"protocol_version\":");
    word(out, protocol_version.as_str());
    out.extend_from_slice(b",\"protocol_version_source\":");
    word(out, protocol_version_source.as_str());
    out.extend_from_slice(b",\"outcome\":");
    word(out, outcome.as_str());
    out.extend_from_slice(b",\"layer\":");
    word(out, layer.as_str());
    out.extend_from_slice(b",\"complete\":");
    boolean(out, *complete);
    out.extend_from_slice(b",\"status\":");
    opt(out, status.map(u64::from), uint);
    out.extend_from_slice(b",\"content_type\":");
    opt(out, content_type.as_deref(), string);
    out.extend_from_slice(b",\"error_code\":");
    opt(out, *error_code, int);
    out.extend_from_slice(b",\"error_message\":");
    opt(out, error_message.as_deref(), string);
    out.extend_from_slice(b",\"result_type\":");
    opt(out, result_type.as_deref(), string);
    out.extend_from_slice(b",\"event_count\":");
    opt(out, *event_count, uint);
    out.extend_from_slice(b",\"last_event_id\":");
    opt(out, last_event_id.as_deref(), string);
    out.extend_from_slice(b",\"resumable\":");
    boolean(out, *resumable);
    out.extend_from_slice(b",\"end\":");
    word(out, end.as_str());
    out.extend_from_slice(b",\"retry\":");
    retry_advice(out, retry);
    out.extend_from_slice(b",\"violations\":");
    list(out, violations, violation);
    out.extend_from_slice(b",\"unterminated\":");
    opt(out, unterminated.as_ref(), unterminated_event);
    out.extend_from_slice(b",\"limit\":");
    opt(out, limit.map(|l| l.as_str()), word);
    out.extend_from_slice(b",\"server_requests\":");
    list(out, server_requests, server_request);
    out.extend_from_slice(b",\"status_origin\":");
    opt(out, status_origin.map(|o| o.as_str()), word);
    out.extend_from_slice(b",\"origin_reason\":");
    opt(out, origin_reason.as_deref(), string);
    out.extend_from_slice(b",\"client_error\":");
    opt(out, client_error.as_deref(), string);
    out.extend_from_slice(b",\"task_status\":");
    opt(out, task_status.map(|t| t.as_str()), word);
    out.push(b'}');
}

/// Appends the call's JSON object, member for member as serde_json writes it.
fn call(out: &mut Vec<u8>, c: &Call) {
    let Call {
        call,
        entries,
        client,
        protocol_version,
        method,
        tool,
        post_count,
        http_statuses,
        ids,
        error_code,
        result_type,
        outcome,
        complete,
        retry_origin,
        double_execution_risk,
        violations,
        status_origin,
        origin_reason,
        auth_step,
        task_status,
    } = c;
    // One capacity check for the whole line, short of long strings and lists.
    out.reserve(512);
    out.extend_from_slice(b"{\"call\":");
    uint(out, *call);
    out.extend_from_slice(b",\"entries\":");
    list(out, entries, |out, e| uint(out, *e));
    out.extend_from_slice(b",\"client\":");
    opt(out, client.as_deref(), string);
    out.extend_from_slice(b",\"protocol_version\":");
    opt(out, protocol_version.map(|p| p.as_str()), word);
    out.extend_from_slice(b",\"method\":");
    opt(out, method.as_deref(), string);
    out.extend_from_slice(b",\"tool\":");
    opt(out, tool.as_deref(), string);
    out.extend_from_slice(b",\"post_count\":");
    uint(out, u64::from(*post_count));
    out.extend_from_slice(b",\"http_statuses\":");
    list(out, http_statuses, |out, s| {
        opt(out, s.map(u64::from), uint)
    });
    out.extend_from_slice(b",\"ids\":");
    list(out, ids, value);
    out.extend_from_slice(b",\"error_code\":");
    opt(out, *error_code, int);
    out.extend_from_slice(b",\"result_type\":");
    opt(out, result_type.as_deref(), string);
    out.extend_from_slice(b",\"outcome\":");
    word(out, outcome.as_str());
    out.extend_from_slice(b",\"complete\":");
    boolean(out, *complete);
    out.extend_from_slice(b",\"retry_origin\":");
    opt(out, retry_origin.map(|r| r.as_str()), word);
    out.extend_from_slice(b",\"double_execution_risk\":");
    boolean(out, *double_execution_risk);
    out.extend_from_slice(b",\"violations\":");
    list(out, violations, violation);
    out.extend_from_slice(b",\"status_origin\":");
    opt(out, status_origin.map(|o| o.as_str()), word);
    out.extend_from_slice(b",\"origin_reason\":");
    opt(out, origin_reason.as_deref(), string);
    out.extend_from_slice(b",\"auth_step\":");
    opt(out, auth_step.map(|a| a.as_str()), word);
    out.extend_from_slice(b",\"task_status\":");
    opt(out, task_status.map(|t| t.as_str()), word);
    out.push(b'}');
}

fn retry_advice(out: &mut Vec<u8>, r: &RetryAdvice) {
    let RetryAdvice {
        advice,
        after_ms,
        reason,
    } = r;
    out.extend_from_slice(b"{\"advice\":");
    word(out, advice.as_str());
    out.extend_from_slice(b",\"after_ms\":");
    opt(out, *after_ms, uint);
    out.extend_from_slice(b",\"reason\":");
    string(out, reason);
    out.push(b'}');
}

fn violation(out: &mut Vec<u8>, v: &Violation) {
    let Violation {
        rule,
        level,
        detail,
        at,
    } = v;
    out.extend_from_slice(b"{\"rule\":");
    word(out, rule.as_str());
    out.extend_from_slice(b",\"level\":");
    word(out, level.as_str());
    out.extend_from_slice(b",\"detail\":");
    string(out, detail);
    out.extend_from_slice(b",\"at\":");
    opt(out, at.as_ref(), location);
    out.push(b'}');
}

fn location(out: &mut Vec<u8>, l: &Location) {
    let Location { offset, event } = l;
    out.extend_from_slice(b"{\"offset\":");
    uint(out, *offset);
    out.extend_from_slice(b",\"event\":");
    opt(out, *event, uint);
    out.push(b'}');
}

fn unterminated_event(out: &mut Vec<u8>, u: &Unterminated) {
    let Unterminated {
        bytes,
        looked_final,
    } = u;
    out.extend_from_slice(b"{\"bytes\":");
    uint(out, *bytes);
    out.extend_from_slice(b",\"looked_final\":");
    boolean(out, *looked_final);
    out.push(b'}');
}

fn server_request(out: &mut Vec<u8>, r: &ServerRequest) {
    let ServerRequest { method, id } = r;
    out.extend_from_slice(b"{\"method\":");
    string(out, method);
    out.extend_from_slice(b",\"id\":");
    value(out, id);
    out.push(b'}');
}

/// `null`, or the value as `write` writes it.
fn opt<T>(out: &mut Vec<u8>, v: Option<T>, write: impl FnOnce(&mut Vec<u8>, T)) {
    match v {
        Some(v) => write(out, v),
        None => out.extend_from_slice(b"null"),
    }
}

/// `[…]`, each item as `write` writes it, comma-separated.
fn list<T>(out: &mut Vec<u8>, items: &[T], mut write: impl FnMut(&mut Vec<u8>, &T)) {
    out.push(b'[');
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        write(out, item);
    }
    out.push(b']');
}

fn boolean(out: &mut Vec<u8>, b: bool) {
    out.extend_from_slice(if b { b"true" } else { b"false" });
}

/// A wire name, quoted as it is: wire names are plain ASCII words (a test holds every one to
/// serde_json's string).
fn word(out: &mut Vec<u8>, w: &str) {
    out.push(b'"');
    out.extend_from_slice(w.as_bytes());
    out.push(b'"');
}

/// Decimal, as serde_json (itoa) writes it (and HTTP its numbers: the proxy's plain path).
pub(crate) fn uint(out: &mut Vec<u8>, mut n: u64) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[at..]);
}

fn int(out: &mut Vec<u8>, n: i64) {
    if n < 0 {
        out.push(b'-');
    }
    uint(out, n.unsigned_abs());
}

/// A JSON value (an id): strings and integers here, anything else through serde_json.
fn value(out: &mut Vec<u8>, v: &Value) {
    match v {
        Value::String(s) => string(out, s),
        Value::Number(n) if n.is_u64() => uint(out, n.as_u64().unwrap_or_default()),
        Value::Number(n) if n.is_i64() => int(out, n.as_i64().unwrap_or_default()),
        Value::Null => out.extend_from_slice(b"null"),
        // Serializing a `Value` into a `Vec` cannot fail.
        _ => {
            let _ = serde_json::to_writer(&mut *out, v);
        }
    }
}

/// A string, quoted and escaped as serde_json escapes it: `"` and `\` and control characters
/// only (the short forms where JSON has one, else `\u00xx`); runs between them, UTF-8 included,
/// copied whole.
fn string(out: &mut Vec<u8>, s: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let bytes = s.as_bytes();
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    let (mut run, mut at) = (0, 0);
    loop {
        at = plain_until(bytes, at);
        let Some(&b) = bytes.get(at) else { break };
        out.extend_from_slice(&bytes[run..at]);
        match b {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            0x08 => out.extend_from_slice(b"\\b"),
            0x0c => out.extend_from_slice(b"\\f"),
            _ => out.extend_from_slice(&[
                b'\\',
                b'u',
                b'0',
                b'0',
                HEX[usize::from(b >> 4)],
                HEX[usize::from(b & 0xf)],
            ]),
        }
        at += 1;
        run = at;
    }
    out.extend_from_slice(&bytes[run..]);
    out.push(b'"');
}

/// The position of the first byte from `at` on that needs escaping (`bytes.len()` if none):
/// eight bytes at a time while none of them does (one word's arithmetic: a byte below 0x20, a
/// `"` or a `\`), then byte by byte.
fn plain_until(bytes: &[u8], mut at: usize) -> usize {
    loop {
        match bytes.get(at..at + 8) {
            Some(chunk) if needs_escape(chunk) => break,
            Some(_) => at += 8,
            None => {
                // Fewer than eight left: the last eight bytes of the string as one word (those
                // before `at` are plain or already escaped; one of them only sends the rest
                // byte by byte).
                if let Some(last) = bytes.len().checked_sub(8).and_then(|s| bytes.get(s..))
                    && !needs_escape(last)
                {
                    return bytes.len();
                }
                break;
            }
        }
    }
    while let Some(&b) = bytes.get(at) {
        if b < 0x20 || b == b'"' || b == b'\\' {
            break;
        }
        at += 1;
    }
    at
}

/// Whether some byte of an 8-byte `chunk` needs escaping, in one word's arithmetic:
/// `(w - ONES) & !w & HIGH` is non-zero exactly when some byte of `w` is zero, and
/// `(x - 0x20 * ONES) & !x & HIGH` when some byte of `x` is below 0x20.
fn needs_escape(chunk: &[u8]) -> bool {
    const ONES: u64 = u64::from_ne_bytes([1; 8]);
    const HIGH: u64 = ONES << 7;
    let x = u64::from_ne_bytes(chunk.try_into().unwrap_or_default());
    let quote = x ^ (ONES * u64::from(b'"'));
    let backslash = x ^ (ONES * u64::from(b'\\'));
    let hit = (x.wrapping_sub(ONES * 0x20) & !x)
        | (quote.wrapping_sub(ONES) & !quote)
        | (backslash.wrapping_sub(ONES) & !backslash);
    hit & HIGH != 0
}

#[cfg(test)]
mod tests {
    use super::super::call::{AuthStep, RetryOrigin};
    use super::super::kinds::ExchangeKind;
    use super::super::limits::LimitKind;
    use super::super::rules::{Level, Rule};
    use super::super::task::TaskStatus;
    use super::super::verdict::{Advice, End, Layer, Outcome, StatusOrigin};
    use super::super::version::{ProtocolVersion, VersionSource};
    use super::*;

    /// Every wire name is written as serde_json writes it, so none needs escaping.
    #[test]
    fn wire_names_need_no_escaping() {
        fn check<T: serde::Serialize>(all: &[T], name: impl Fn(&T) -> &'static str) {
            for v in all {
                let mut ours = Vec::new();
                word(&mut ours, name(v));
                assert_eq!(
                    String::from_utf8(ours).unwrap(),
                    serde_json::to_string(v).unwrap()
                );
            }
        }
        check(Outcome::ALL, |v| v.as_str());
        check(Layer::ALL, |v| v.as_str());
        check(End::ALL, |v| v.as_str());
        check(Advice::ALL, |v| v.as_str());
        check(StatusOrigin::ALL, |v| v.as_str());
        check(ExchangeKind::ALL, |v| v.as_str());
        check(LimitKind::ALL, |v| v.as_str());
        check(Level::ALL, |v| v.as_str());
        check(Rule::ALL, |v| v.as_str());
        check(ProtocolVersion::ALL, |v| v.as_str());
        check(VersionSource::ALL, |v| v.as_str());
        check(TaskStatus::ALL, |v| v.as_str());
        check(RetryOrigin::ALL, |v| v.as_str());
        check(AuthStep::ALL, |v| v.as_str());
    }

    /// Strings escape as serde_json escapes them: every byte below 0x20, quotes, backslashes,
    /// DEL, and multi-byte UTF-8 at either end and between escapes.
    #[test]
    fn strings_escape_as_serde_json_does() {
        let every_control: String = (0u8..0x20).map(char::from).collect();
        let cases = [
            "",
            "plain",
            "\"",
            "\\",
            "a\"b\\c\nd\re\tf\u{8}g\u{c}h\u{0}i\u{1f}j\u{7f}",
            "é\n{",
            "😀\"😀",
            "\u{2028}\u{2029}",
            "\"\"\\\\",
            "end\n",
            &every_control,
        ];
        for s in cases {
            let mut ours = b"x".to_vec();
            string(&mut ours, s);
            let mut theirs = b"x".to_vec();
            serde_json::to_writer(&mut theirs, s).unwrap();
            assert_eq!(ours, theirs, "{s:?}");
        }
    }

    /// The word-at-a-time scan stops at the first byte needing escape wherever it sits in a
    /// word, past bytes that only look close (0x20, DEL, `!`, `#`, `[`, `]`, UTF-8).
    #[test]
    fn the_scan_finds_every_escape_in_every_position() {
        let fillers = [
            b'a', 0x20, 0x7f, b'!', b'#', b'[', b']', 0xc3, 0xa9, 0xff, 0x21,
        ];
        for len in 0..26 {
            for filler in fillers {
                let plain = vec![filler; len];
                assert_eq!(plain_until(&plain, 0), len);
                for at in 0..len {
                    for b in [0u8, 0x1f, b'"', b'\\', b'\n', 0x08] {
                        let mut bytes = plain.clone();
                        bytes[at] = b;
                        for from in 0..=at {
                            assert_eq!(plain_until(&bytes, from), at, "{bytes:?} from {from}");
                        }
                    }
                }
            }
        }
        for n in 0..20 {
            for tail in ["", "\"", "\u{1}x", "é\\"] {
                let s = format!("{}{tail}{}", "é".repeat(n), "ab".repeat(n));
                let mut ours = Vec::new();
                string(&mut ours, &s);
                assert_eq!(ours, serde_json::to_vec(&s).unwrap(), "{s:?}");
            }
        }
    }

    /// Integers at their edges, and ids of every JSON type.
    #[test]
    fn numbers_and_values_as_serde_json_writes_them() {
        for n in [0, 1, 9, 10, 99, 100, 12345, u64::MAX / 10, u64::MAX] {
            let mut ours = Vec::new();
            uint(&mut ours, n);
            assert_eq!(ours, serde_json::to_vec(&n).unwrap());
        }
        for n in [0, -1, -10, 7, i64::MIN, i64::MAX] {
            let mut ours = Vec::new();
            int(&mut ours, n);
            assert_eq!(ours, serde_json::to_vec(&n).unwrap());
        }
        let values = serde_json::json!([
            null, 0, 7, -3, u64::MAX, i64::MIN, 1.5, -0.0, 1e300, "s", "a\"\n", true, false,
            [], [1, "x", null], {}, {"a": {"b": [1.25]}, "c": "\u{1}"}
        ]);
        for v in values.as_array().unwrap() {
            let mut ours = Vec::new();
            value(&mut ours, v);
            assert_eq!(ours, serde_json::to_vec(v).unwrap(), "{v}");
        }
    }
}
