//! The commonest answer, told conforming without the full check: a `tools/call` result of
//! plain text blocks. Read from what the envelope and result scans picked out, plus one pass
//! over `content`; anything it does not recognise takes the full check, so it may say "check"
//! where the check finds nothing, never "conforms" where it finds something
//! (`shapes::tests::the_tool_result_fast_path_never_hides_a_shape_finding`).

use crate::jsonrpc::{Envelope, scan};
use crate::tool_result::ResultMembers;
use crate::version::ProtocolVersion;

/// Whether the full shape check of this `tools/call` response would find nothing: `jsonrpc`
/// `"2.0"`, an integer or string id, a result without `_meta`, `resultType` `"complete"`
/// (required on 2026-07-28, else absent or `"complete"`), `isError` a boolean,
/// `structuredContent` an object, and text blocks only (`type` `"text"` and a string `text`,
/// each once, no `_meta` or `annotations`).
pub(crate) fn tool_result_conforms(
    version: ProtocolVersion,
    env: &Envelope<'_>,
    result: &ResultMembers<'_>,
) -> bool {
    let id = env.id.map_or("", |id| id.get());
    let digits = id.strip_prefix('-').unwrap_or(id);
    let id_ok =
        id.starts_with('"') || (!digits.is_empty() && digits.bytes().all(|c| c.is_ascii_digit()));
    env.jsonrpc.is_some_and(|j| j.get() == "\"2.0\"")
        && id_ok
        && !env.has_method
        && env.error.is_none()
        && result.scanned
        && !result.meta
        && result
            .result_type
            .map_or(!version.is_stateless(), |t| t == "\"complete\"")
        && result.is_error.is_none_or(|e| e == "true" || e == "false")
        && result.structured_content.is_none_or(|s| s.starts_with('{'))
        && result.plain_content
}

/// The array at `at` in `text` holds plain text blocks only (maybe none): the index after it.
/// `None` for anything else (the caller reads the value some other way). The array is nested
/// at `depth` as [`scan::any`] counts.
pub(crate) fn text_blocks(text: &str, at: usize, depth: u32) -> Option<usize> {
    let b = text.as_bytes();
    if b.get(at) != Some(&b'[') {
        return None;
    }
    let mut i = scan::ws(b, at + 1);
    if b.get(i) != Some(&b']') {
        loop {
            i = scan::ws(b, text_block(text, i, depth + 2)?);
            match b.get(i)? {
                b',' => i = scan::ws(b, i + 1),
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
        && let Some(end) = scan::any(b, at + PLAIN.len() - 1, depth)
        && b.get(end) == Some(&b'}')
    {
        return Some(end + 1);
    }
    if b.get(at) != Some(&b'{') {
        return None;
    }
    let (mut kind, mut text, mut other) = (0, 0, false);
    let end = scan::members(b, at, |key, value| {
        let end = scan::any(b, value, depth)?;
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

#[cfg(test)]
mod tests {
    use super::text_blocks;
    use serde_json::{Map, Value};

    /// `text_blocks` says "plain" only of an array serde_json reads as text blocks (other
    /// members allowed, but not `_meta` or `annotations`), and reads it to its end: whether
    /// the block is in the SDKs' order (the one-compare path) or not.
    #[test]
    fn text_blocks_are_told_as_serde_json_reads_them() {
        let plain = [
            r#"[{"type":"text","text":"hi"}]"#,
            r#"[{"type":"text","text":"a\"}b"}]"#,
            r#"[{"type":"text","text":"hi" }]"#,
            r#"[ {"text":"x","type":"text"} , {"type":"text","text":""} ]"#,
            r#"[{"type":"text","text":"hi","x":1}]"#,
            r#"[]"#,
        ];
        let not_plain = [
            r#"[{"type":"text","text":"hi","type":"image"}]"#,
            r#"[{"type":"text","text":"hi","_meta":{}}]"#,
            r#"[{"type":"text","text":"hi",]"#,
            r#"[{"type":"text","text":"hi"}"#,
            r#"[{"type":"text","text":"hi"]"#,
            "[{\"type\":\"text\",\"text\":\"h\u{1}i\"}]",
            r#"[{"type":"text","text":1}]"#,
        ];
        let serde_plain = |text: &str| {
            serde_json::from_str::<Vec<Map<String, Value>>>(text).is_ok_and(|blocks| {
                blocks.iter().all(|b| {
                    !b.contains_key("_meta")
                        && !b.contains_key("annotations")
                        && b.get("type").and_then(Value::as_str) == Some("text")
                        && b.get("text").is_some_and(Value::is_string)
                })
            })
        };
        for text in plain {
            assert!(serde_plain(text), "{text}");
            assert_eq!(text_blocks(text, 0, 1), Some(text.len()), "{text}");
        }
        for text in not_plain {
            assert!(!serde_plain(text), "{text}");
            assert_eq!(text_blocks(text, 0, 1), None, "{text}");
        }
    }
}
