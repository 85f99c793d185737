//! A request's `params._meta` as it was sent: its text, read member by member when a check asks.
//!
//! Every request of a 2026-07-28 client carries a `_meta` of four members, and the checks read
//! one or two of them; the tree of it (a map, its keys and values, built and dropped) cost more
//! than the rest of the request's reading. A member is found by the core's scan of the text;
//! a text the scan leaves to serde_json (a key with an escape) is read whole by it.

use std::borrow::Cow;

use serde_json::{Map, Value};

use crate::jsonrpc::scan;
use crate::shapes::flat;
use crate::shapes::node::Json;

/// `params._meta`: a JSON object's text, valid as serde_json reads it.
#[derive(Debug, Clone)]
pub struct Meta {
    text: Box<str>,
    /// Where the values of [`KEYS`] are in the text, when the request's reading noted them.
    spans: Option<Spans>,
}

/// The members the checks read of most requests, found while the request is read (then a
/// check's look is an index, not a scan of the text).
pub(crate) const KEYS: [&str; 5] = [
    crate::wire::META_PROTOCOL_VERSION,
    crate::wire::META_CLIENT_CAPABILITIES,
    crate::wire::META_LOG_LEVEL,
    "progressToken",
    // The call grouping names each call's client from it.
    crate::wire::META_CLIENT_INFO,
];

/// Start and end of each of [`KEYS`]' values in the text (the last one of a repeated key);
/// `(0, 0)` when absent (a value never starts at 0: the text starts with `{`).
pub(crate) type Spans = [(u32, u32); KEYS.len()];

impl Meta {
    /// `_meta` from the text of a request, where `text` is a JSON object serde_json accepts
    /// (the caller checked both), with where [`KEYS`] are in it when the caller noted that.
    pub(crate) fn from_checked(text: &str, spans: Option<Spans>) -> Meta {
        Meta {
            text: text.into(),
            // Offsets past 4 GiB are not noted: such a text is scanned at each look.
            spans: spans.filter(|_| u32::try_from(text.len()).is_ok()),
        }
    }

    /// `_meta` from an object already parsed (the serde reading of a batch or a `Value`).
    pub(crate) fn from_map(map: &Map<String, Value>) -> Meta {
        Meta {
            text: serde_json::to_string(map).unwrap_or_default().into(),
            spans: None,
        }
    }

    /// Notes in `spans` where `key`'s value is (`at..end` of a `_meta` text being read).
    pub(crate) fn note(spans: &mut Spans, key: &[u8], at: usize, end: usize) {
        if let Some(i) = KEYS.iter().position(|k| k.as_bytes() == key)
            && let (Ok(at), Ok(end)) = (u32::try_from(at), u32::try_from(end))
        {
            spans[i] = (at, end);
        }
    }

    /// The object's text as sent.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The text of member `key` (the last one, as a `serde_json::Value` keeps repeated
    /// members); `Err` when the scan leaves the object to serde_json.
    pub(crate) fn raw(&self, key: &str) -> Result<Option<&str>, ()> {
        let (text, b) = (&*self.text, self.text.as_bytes());
        if let Some(spans) = &self.spans
            && let Some(i) = KEYS.iter().position(|k| *k == key)
        {
            let (at, end) = spans[i];
            return Ok((end > 0).then(|| &text[at as usize..end as usize]));
        }
        let mut found = None;
        let read = scan::members(b, scan::ws(b, 0), |k, at| {
            let end = scan::any(b, at, 1)?;
            if k == key.as_bytes() {
                found = Some(&text[at..end]);
            }
            Some(end)
        });
        read.map(|_| found).ok_or(())
    }

    /// Member `key` as a `serde_json::Value`.
    pub fn get(&self, key: &str) -> Option<Value> {
        match self.raw(key) {
            Ok(raw) => {
                let raw = raw?;
                flat::with_tree(raw, |t| t.to_value().into_owned())
                    .or_else(|| serde_json::from_str(raw).ok())
            }
            Err(()) => self.map()?.remove(key),
        }
    }

    /// Member `key` when it is a string: borrowed from the text unless it holds an escape.
    pub fn get_str(&self, key: &str) -> Option<Cow<'_, str>> {
        match self.raw(key) {
            Ok(raw) => raw.filter(|r| r.starts_with('"')).and_then(scan::unescaped),
            Err(()) => match self.map()?.remove(key)? {
                Value::String(s) => Some(Cow::Owned(s)),
                _ => None,
            },
        }
    }

    /// Whether member `key` is there (with any value, `null` too).
    pub fn contains(&self, key: &str) -> bool {
        match self.raw(key) {
            Ok(raw) => raw.is_some(),
            Err(()) => self.map().is_some_and(|m| m.contains_key(key)),
        }
    }

    /// The whole object, read by serde_json.
    fn map(&self) -> Option<Map<String, Value>> {
        serde_json::from_str(&self.text).ok()
    }
}

/// Equal when the objects are (the texts may differ in spacing and member order).
impl PartialEq for Meta {
    fn eq(&self, other: &Meta) -> bool {
        self.text == other.text || self.map() == other.map()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every member read from the text is what serde_json's map of the object holds: strings
    /// with and without escapes, numbers, nested values, `null`, repeated keys (the last
    /// wins), spacing, and keys with escapes (read by serde_json).
    #[test]
    fn members_read_from_the_text_are_serde_jsons() {
        let texts = [
            r#"{"progressToken":1}"#,
            r#"{"progressToken":"t","io.modelcontextprotocol/protocolVersion":"2026-07-28"}"#,
            r#" { "a" : "x\"y" , "b" : [1, {"c": null}] , "d" : null } "#,
            r#"{"a":1,"a":"second"}"#,
            r#"{"a\u0062":"escaped key","b":2}"#,
            r#"{"v":"\u00e9t\u00e9","n":-1.5e3,"big":18446744073709551615}"#,
            r#"{}"#,
            r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"progressToken":null,"io.modelcontextprotocol/logLevel":"debug","io.modelcontextprotocol/protocolVersion":"2025-11-25"}"#,
        ];
        for text in texts {
            let map: Map<String, Value> = serde_json::from_str(text).unwrap();
            let meta = Meta::from_checked(text, None);
            let mut spans = Spans::default();
            let b = text.as_bytes();
            let noted = scan::members(b, scan::ws(b, 0), |key, at| {
                let end = scan::any(b, at, 1)?;
                Meta::note(&mut spans, key, at, end);
                Some(end)
            })
            .map(|_| Meta::from_checked(text, Some(spans)));
            assert_eq!(meta, Meta::from_map(&map), "{text}");
            let keys = [
                "progressToken",
                "a",
                "ab",
                "b",
                "d",
                "v",
                "n",
                "big",
                "missing",
                "",
            ];
            for key in keys.into_iter().chain(KEYS) {
                for meta in [Some(&meta), noted.as_ref()].into_iter().flatten() {
                    assert_eq!(meta.get(key), map.get(key).cloned(), "{text} {key}");
                    assert_eq!(meta.contains(key), map.contains_key(key), "{text} {key}");
                    assert_eq!(
                        meta.get_str(key).as_deref(),
                        map.get(key).and_then(Value::as_str),
                        "{text} {key}"
                    );
                }
            }
        }
    }
}
