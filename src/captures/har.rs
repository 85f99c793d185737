//! HAR 1.2 reader: browser devtools, mitmproxy and proxy exports.
//!
//! Two readers with the same verdicts. [`read_entries`] / [`parse`] read one whole entry at a
//! time with serde (the reference, and what tests and `probe --record` round trips use).
//! [`stream_entries`] / [`stream_entries_seekable`], which `replay` uses, also decode each
//! response body piece by piece into an [`EntrySink`], so memory does not grow with a body's
//! size (`har/stream.rs` says how member order is handled).
//!
//! Accepted: `request.postData.text`, `response.content.text` plain or base64
//! (`encoding: "base64"`), an entry-level `_error` (the transfer failed: with status 0 there was
//! no response head, otherwise the body was cut), and this tool's own `_mcp_end`
//! (`eof`/`reset`/`open`), which `probe --record` writes for streams still open.

use std::fmt;
use std::io::Read;

use base64::Engine;
use serde::Deserialize;
use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};

mod base64_stream;
mod error;
mod scan;
mod stream;

pub use error::{Base64Error, StreamError};
pub use stream::{EntryHead, EntrySink, EntryTail};

/// The entry and its timings are the core's: the one exchange path records them.
pub use crate::entry::{Entry, Timings};

use crate::exchange::ResponseHead;
use crate::request::Headers;
use crate::verdict::End;

/// A capture that cannot be used. Display gives one line for the CLI; `source` is serde_json's
/// error (with line and column) where there is one.
#[derive(Debug)]
#[non_exhaustive]
pub enum HarError {
    /// Not JSON, not HAR 1.x, or an entry is unusable (bad base64, impossible status); also an
    /// I/O error while reading.
    Unusable(serde_json::Error),
    /// Bytes after the HAR document.
    TrailingData(serde_json::Error),
    /// A JSON document without a `log.entries` array.
    NoEntries,
    /// The first bytes (where a byte-order mark may stand) could not be read.
    Read(std::io::Error),
    /// The streaming reader's refusal (the same cases as above, found while decoding
    /// `content.text` piece by piece, where no serde_json error exists). A document without
    /// `log.entries` is [`HarError::NoEntries`] from either reader.
    Streamed(StreamError),
}

impl fmt::Display for HarError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HarError::Unusable(e) => write!(f, "not a usable HAR file: {e}"),
            HarError::TrailingData(e) => write!(f, "trailing data after the HAR document: {e}"),
            HarError::NoEntries => f.write_str("no log.entries array: not a HAR file"),
            HarError::Read(e) => write!(f, "cannot read: {e}"),
            // Worded as its serde counterpart: trailing data on its own, the rest unusable.
            HarError::Streamed(e @ StreamError::TrailingData { .. }) => e.fmt(f),
            HarError::Streamed(e) => write!(f, "not a usable HAR file: {e}"),
        }
    }
}

impl std::error::Error for HarError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            HarError::Unusable(e) | HarError::TrailingData(e) => Some(e),
            HarError::NoEntries => None,
            HarError::Read(e) => Some(e),
            HarError::Streamed(e) => Some(e),
        }
    }
}

#[derive(Deserialize, Clone)]
struct RawHeader {
    name: String,
    value: String,
}

#[derive(Deserialize, Clone)]
struct RawPostData {
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    encoding: Option<String>,
}

#[derive(Deserialize, Clone)]
#[serde(rename_all = "camelCase")]
struct RawRequest {
    method: String,
    #[serde(default)]
    url: String,
    #[serde(default)]
    headers: Vec<RawHeader>,
    #[serde(default)]
    post_data: Option<RawPostData>,
}

#[derive(Deserialize)]
struct RawContent {
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    encoding: Option<String>,
}

#[derive(Deserialize)]
struct RawResponse {
    #[serde(default)]
    status: i64,
    #[serde(default)]
    headers: Vec<RawHeader>,
    #[serde(default)]
    content: Option<RawContent>,
    /// Chrome DevTools' `localizedFailDescription` (`net::ERR_…`).
    #[serde(default, rename = "_error")]
    error: ErrorText,
}

/// An `_error` as text: a string is kept as written; any other value says only that the
/// transfer failed (it is skipped without being built, however deep).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ErrorText {
    /// The text, when it is one.
    pub(crate) text: Option<String>,
    /// Present and neither `null` nor empty: the transfer failed.
    pub(crate) failed: bool,
}

impl ErrorText {
    fn other(failed: bool) -> ErrorText {
        ErrorText { text: None, failed }
    }
}

/// Longest `_error` text kept (Chrome's are a few dozen bytes).
const MAX_ERROR_TEXT: usize = 512;

impl<'de> Deserialize<'de> for ErrorText {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = ErrorText;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an error text")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<ErrorText, E> {
                let mut end = s.len().min(MAX_ERROR_TEXT);
                while !s.is_char_boundary(end) {
                    end -= 1;
                }
                Ok(ErrorText {
                    text: (!s.is_empty()).then(|| s[..end].to_owned()),
                    failed: !s.is_empty(),
                })
            }
            fn visit_unit<E: de::Error>(self) -> Result<ErrorText, E> {
                Ok(ErrorText::other(false))
            }
            fn visit_none<E: de::Error>(self) -> Result<ErrorText, E> {
                Ok(ErrorText::other(false))
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<ErrorText, E> {
                Ok(ErrorText::other(true))
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<ErrorText, E> {
                Ok(ErrorText::other(true))
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<ErrorText, E> {
                Ok(ErrorText::other(true))
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<ErrorText, E> {
                Ok(ErrorText::other(true))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<ErrorText, A::Error> {
                while a.next_element::<IgnoredAny>()?.is_some() {}
                Ok(ErrorText::other(true))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<ErrorText, A::Error> {
                while a.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(ErrorText::other(true))
            }
        }
        d.deserialize_any(V)
    }
}

#[derive(Deserialize)]
struct RawEntry {
    request: RawRequest,
    #[serde(default)]
    response: Option<RawResponse>,
    #[serde(default, rename = "_error")]
    error: Option<serde_json::Value>,
    #[serde(default, rename = "_mcp_end")]
    mcp_end: Option<String>,
    #[serde(default, rename = "startedDateTime")]
    started: Option<String>,
    #[serde(default)]
    time: Option<f64>,
    #[serde(default)]
    timings: Option<Timings>,
    #[serde(default, rename = "_mcp_timeout_ms")]
    timeout_ms: Option<f64>,
    #[serde(
        default,
        rename = "_mcp_arrivals",
        deserialize_with = "crate::entry::marks"
    )]
    arrivals: Vec<crate::arrival::Mark>,
}

fn decode_text(text: Option<String>, encoding: Option<&str>) -> Result<Vec<u8>, StreamError> {
    let text = text.unwrap_or_default();
    match encoding {
        Some(e) if e.eq_ignore_ascii_case("base64") => base64::engine::general_purpose::STANDARD
            .decode(text.trim())
            .map_err(StreamError::from),
        _ => Ok(text.into_bytes()),
    }
}

fn headers(raw: Vec<RawHeader>) -> Headers {
    raw.into_iter().map(|h| (h.name, h.value)).collect()
}

/// How the body ended: `_mcp_end`, else a reset when the transfer `failed` (`_error`), else
/// NOT_CAPTURED when a response's `content.text` is absent (a body the capture did not keep,
/// not an empty one).
fn end_of(mcp_end: Option<&str>, failed: bool, captured: bool) -> Result<End, StreamError> {
    Ok(match mcp_end {
        Some("open") => End::Open,
        Some("reset") => End::Reset,
        Some("timeout") => End::Timeout,
        Some("cancelled") => End::Cancelled,
        Some("not_captured") => End::NotCaptured,
        Some("eof") => End::Eof,
        Some(other) => return Err(StreamError::UnknownEnd(other.to_owned())),
        None if failed => End::Reset,
        None if !captured => End::NotCaptured,
        None => End::Eof,
    })
}

/// Chrome's `net::ERR_ABORTED` is the page cancelling the request (an `AbortController`, a
/// navigation): the client's own cancel, not a broken transfer. Only when the capture did not
/// say how the body ended (`_mcp_end`).
pub(crate) fn client_end(end: End, unstated: bool, error: Option<&str>) -> End {
    match error {
        Some(e) if unstated && end == End::Reset && e.trim() == "net::ERR_ABORTED" => {
            End::Cancelled
        }
        _ => end,
    }
}

impl RawEntry {
    /// The entry, or what is wrong with its content (the same for both readers: the serde
    /// reader words it through serde's error, the streaming one returns it).
    fn decode(self, index: u64) -> Result<Entry, StreamError> {
        let request_body = match self.request.post_data {
            Some(p) => decode_text(p.text, p.encoding.as_deref())?,
            None => Vec::new(),
        };
        let entry_error = self
            .error
            .as_ref()
            .and_then(|e| e.as_str())
            .map(str::to_owned);
        let response_error = self.response.as_ref().and_then(|r| r.error.text.clone());
        let failed = self.error.as_ref().is_some_and(|e| !e.is_null())
            || self.response.as_ref().is_some_and(|r| r.error.failed);
        let error = response_error.or(entry_error);
        let mut captured = true;
        let (response, response_body) = match self.response {
            Some(r) if r.status > 0 => {
                let status = u16::try_from(r.status)
                    .ok()
                    .filter(|s| *s <= 999)
                    .ok_or(StreamError::BadStatus(r.status))?;
                // An absent `content.text` is a body the capture did not keep (devtools often
                // drop streamed bodies), not an empty one: the verdict is NOT_CAPTURED.
                let body = match r.content {
                    Some(c) if c.text.is_some() => decode_text(c.text, c.encoding.as_deref())?,
                    _ => {
                        captured = false;
                        Vec::new()
                    }
                };
                let head = ResponseHead {
                    status,
                    headers: headers(r.headers),
                };
                (Some(head), body)
            }
            _ => (None, Vec::new()),
        };
        let end = end_of(self.mcp_end.as_deref(), failed, captured)?;
        let end = client_end(end, self.mcp_end.is_none(), error.as_deref());
        Ok(Entry {
            index,
            method: self.request.method,
            url: self.request.url,
            request_headers: headers(self.request.headers),
            request_body,
            response,
            response_body,
            end,
            started: self.started,
            time_ms: self.time,
            timings: self.timings,
            timeout_ms: self.timeout_ms.filter(|t| t.is_finite() && *t >= 0.0),
            error,
            arrivals: self.arrivals,
        })
    }
}

/// Reads every entry of a HAR document from `reader`, calling `each` in order.
///
/// # Errors
/// A [`HarError`] with a one-line reason when the input is not JSON, not HAR 1.x, or an entry
/// is unusable (bad base64, impossible status). Entries before the error have been delivered.
pub fn read_entries<R: Read>(reader: R, each: &mut dyn FnMut(Entry)) -> Result<(), HarError> {
    let reader = skip_bom(reader).map_err(HarError::Read)?;
    let mut de =
        serde_json::Deserializer::from_reader(std::io::BufReader::with_capacity(1 << 16, reader));
    let mut count = 0u64;
    let entries = Entries {
        each,
        count: &mut count,
    };
    let found = Member {
        key: "log",
        seed: Member {
            key: "entries",
            seed: entries,
        },
    }
    .deserialize(&mut de)
    .map_err(HarError::Unusable)?;
    de.end().map_err(HarError::TrailingData)?;
    if !matches!(found, Some(Some(()))) {
        return Err(HarError::NoEntries);
    }
    Ok(())
}

/// How much the streamed reader may hold whole under `limits`: an out-of-order body read from a
/// pipe (up to the body limit, base64-encoded), a request, an `_error`.
pub fn hold_cap(limits: &crate::Limits) -> usize {
    let body = usize::try_from(limits.max_body_bytes).unwrap_or(usize::MAX);
    body.saturating_add(body / 3).saturating_add(64 << 10)
}

/// Reads every entry of a HAR document from a forward-only `reader` (a pipe), streaming each
/// `response.content.text` into `sink` piece by piece (see the `stream` module for how member
/// order is handled). Verdict-for-verdict the same as [`read_entries`].
///
/// # Errors
/// As [`read_entries`]; also when an out-of-order body is over `hold_cap` bytes.
pub fn stream_entries<R: Read>(
    reader: R,
    hold_cap: usize,
    sink: &mut dyn EntrySink,
) -> Result<(), HarError> {
    stream::read(scan::Forward(reader), hold_cap, sink).map_err(usable)
}

/// Like [`stream_entries`] on a seekable input (a file): an out-of-order body is skipped and
/// read again from its offset at the end of its entry instead of being held.
///
/// # Errors
/// As [`stream_entries`].
pub fn stream_entries_seekable<R: Read + std::io::Seek>(
    reader: R,
    hold_cap: usize,
    sink: &mut dyn EntrySink,
) -> Result<(), HarError> {
    let input = scan::Seekable::new(reader).map_err(HarError::Read)?;
    stream::read(input, hold_cap, sink).map_err(usable)
}

fn usable(e: StreamError) -> HarError {
    match e {
        StreamError::NoEntries => HarError::NoEntries,
        e => HarError::Streamed(e),
    }
}

/// `reader` without a leading UTF-8 byte order mark: some Windows tools write one, and JSON
/// parsers may ignore it (RFC 8259 §8.1), so it is accepted rather than called "not JSON".
fn skip_bom<R: Read>(mut reader: R) -> std::io::Result<impl Read> {
    let mut prefix = Vec::with_capacity(3);
    (&mut reader).take(3).read_to_end(&mut prefix)?;
    if prefix == b"\xEF\xBB\xBF" {
        prefix.clear();
    }
    Ok(std::io::Cursor::new(prefix).chain(reader))
}

/// Reads a HAR document held in memory.
pub fn parse(bytes: &[u8]) -> Result<Vec<Entry>, HarError> {
    let mut out = Vec::new();
    read_entries(bytes, &mut |e| out.push(e))?;
    Ok(out)
}

/// Deserializes the member `key` of a JSON object with `seed`, skipping every other member
/// without building it. `None` when the object has no such member.
struct Member<S> {
    key: &'static str,
    seed: S,
}

impl<'de, S: DeserializeSeed<'de>> DeserializeSeed<'de> for Member<S> {
    type Value = Option<S::Value>;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de, S: DeserializeSeed<'de>> Visitor<'de> for Member<S> {
    type Value = Option<S::Value>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "an object with a `{}` member", self.key)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut seed = Some(self.seed);
        let mut found = None;
        while let Some(key) = map.next_key::<String>()? {
            // A second `log` or `entries` is refused like a duplicate `text`: which one a reader
            // uses is not defined, so no answer from either would be trustworthy.
            if key == self.key && found.is_some() {
                return Err(de::Error::custom(format!(
                    "duplicate `{}` member",
                    self.key
                )));
            }
            match seed.take() {
                Some(s) if key == self.key => found = Some(map.next_value_seed(s)?),
                other => {
                    seed = other;
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(found)
    }
}

struct Entries<'a> {
    each: &'a mut dyn FnMut(Entry),
    count: &'a mut u64,
}

impl<'de> DeserializeSeed<'de> for Entries<'_> {
    type Value = ();
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for Entries<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an array of HAR entries")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while let Some(raw) = seq.next_element::<RawEntry>()? {
            let index = *self.count;
            *self.count += 1;
            let entry = raw
                .decode(index)
                .map_err(|e| de::Error::custom(format!("entry {index}: {e}")))?;
            (self.each)(entry);
        }
        Ok(())
    }
}

/// Writes HAR 1.2 that [`read_entries`] (and other tools) read back: bodies as UTF-8 text when
/// they are, base64 otherwise; `_mcp_end` for how the body ended, `_error` when the transfer
/// failed. Entries are written as they are (a recording hides what the
/// [`Redaction`](crate::Redaction) policy it was recorded under hides: the driver applies it),
/// built and written one at a time: writing costs one entry's copy on top of `entries`.
pub fn write(entries: &[Entry], out: &mut dyn std::io::Write) -> std::io::Result<()> {
    use serde::ser::{Serialize, SerializeSeq, Serializer};
    use serde_json::{Value, json};
    let hdrs = |h: &Headers| -> Value {
        Value::Array(
            h.iter()
                .map(|(n, v)| json!({"name": n, "value": v}))
                .collect(),
        )
    };
    let content = |body: &[u8], mime: &str| -> Value {
        match std::str::from_utf8(body) {
            Ok(text) => json!({"size": body.len(), "mimeType": mime, "text": text}),
            Err(_) => json!({
                "size": body.len(), "mimeType": mime, "encoding": "base64",
                "text": base64::engine::general_purpose::STANDARD.encode(body),
            }),
        }
    };
    let entry_value = |e: &Entry| -> Value {
        let req_mime = e
            .request_headers
            .get("content-type")
            .unwrap_or("application/json");
        let mut request = json!({
            "method": e.method, "url": e.url, "httpVersion": "HTTP/1.1",
            "cookies": [], "queryString": [], "headers": hdrs(&e.request_headers),
            "headersSize": -1, "bodySize": e.request_body.len(),
        });
        if !e.request_body.is_empty() {
            let mut post = content(&e.request_body, req_mime);
            post.as_object_mut().map(|o| o.remove("size"));
            request["postData"] = post;
        }
        let response = match &e.response {
            Some(head) => {
                let mime = head.headers.get("content-type").unwrap_or("");
                let mut response = json!({
                    "status": head.status, "statusText": "", "httpVersion": "HTTP/1.1",
                    "cookies": [], "headers": hdrs(&head.headers),
                    "redirectURL": "", "headersSize": -1, "bodySize": e.response_body.len(),
                });
                response["content"] = content(&e.response_body, mime);
                response
            }
            None => json!({
                "status": 0, "statusText": "", "httpVersion": "", "cookies": [], "headers": [],
                "content": {"size": 0, "mimeType": ""}, "redirectURL": "",
                "headersSize": -1, "bodySize": -1,
            }),
        };
        let end = e.end.as_str();
        let mut entry = json!({
            "startedDateTime": e.started.as_deref().unwrap_or("1970-01-01T00:00:00Z"),
            "time": e.time_ms.unwrap_or(0.0), "cache": {},
            "timings": {"send": 0, "wait": e.timings.and_then(|t| t.wait).or(e.time_ms), "receive": 0},
            "_mcp_end": end,
        });
        if !e.arrivals.is_empty() {
            entry["_mcp_arrivals"] = json!(e.arrivals);
        }
        // Moved in, as the bodies are: inside `json!` each would be copied once more.
        entry["request"] = request;
        entry["response"] = response;
        // The capturing client's own words, as read; this tool's live recordings keep none
        // (a missing head says enough, with `_mcp_end`).
        if let Some(error) = &e.error {
            entry["_error"] = json!(error);
        }
        if let Some(t) = e.timeout_ms {
            entry["_mcp_timeout_ms"] = json!(t);
        }
        entry
    };
    /// The entries, each made a JSON value only while it is written.
    struct List<'a, F>(&'a [Entry], F);
    impl<F: Fn(&Entry) -> Value> Serialize for List<'_, F> {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            let mut seq = s.serialize_seq(Some(self.0.len()))?;
            for e in self.0 {
                seq.serialize_element(&(self.1)(e))?;
            }
            seq.end()
        }
    }
    // Members in the order a JSON object keeps them (sorted), as the whole document once was.
    #[derive(serde::Serialize)]
    #[serde(bound = "")]
    struct Log<'a, F: Fn(&Entry) -> Value> {
        creator: Value,
        entries: List<'a, F>,
        version: &'static str,
    }
    #[derive(serde::Serialize)]
    #[serde(bound = "")]
    struct Doc<'a, F: Fn(&Entry) -> Value> {
        log: Log<'a, F>,
    }
    let doc = Doc {
        log: Log {
            creator: json!({"name": "mcp-verdict", "version": env!("CARGO_PKG_VERSION")}),
            entries: List(entries, entry_value),
            version: "1.2",
        },
    };
    serde_json::to_writer_pretty(&mut *out, &doc)?;
    out.write_all(b"\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_entries_and_errors() {
        let har = br#"{"log":{"version":"1.2","entries":[
            {"request":{"method":"POST","url":"http://x/mcp","headers":[{"name":"A","value":"b"}],
              "postData":{"mimeType":"application/json","text":"{}"}},
             "response":{"status":200,"headers":[],"content":{"text":"aGk=","encoding":"base64"}}},
            {"request":{"method":"POST","url":"http://x/mcp","headers":[]},
             "response":{"status":0,"headers":[],"content":{}},"_error":"net::ERR_CONNECTION_REFUSED"}
        ]}}"#;
        let entries = parse(har).unwrap();
        assert_eq!(entries.len(), 2);
        assert_eq!(entries[0].response_body, b"hi");
        assert_eq!(entries[0].request_headers.get("a"), Some("b"));
        assert!(entries[1].response.is_none());
        assert_eq!(entries[1].end, End::Reset);
        assert!(parse(b"{\"log\":{}}").is_err());
        assert!(parse(b"[]").is_err());
        assert!(parse(b"{\"log\":{\"entries\":[]}} x").is_err());
        let bad =
            br#"{"log":{"entries":[{"request":{"method":"GET"},"response":{"status":70000}}]}}"#;
        assert!(parse(bad).unwrap_err().to_string().contains("entry 0"));
    }

    /// Chrome DevTools writes a failed transfer's `net::ERR_*` as `response._error`: both
    /// readers keep its text, and `net::ERR_ABORTED` (the page cancelled) is the client's end.
    #[test]
    fn chrome_response_error_is_kept_by_both_readers() {
        let doc = |error: &str| {
            format!(
                r#"{{"log":{{"entries":[{{"request":{{"method":"POST","url":"http://x/mcp","headers":[]}},
                "response":{{"status":200,"headers":[{{"name":"Content-Type","value":"text/event-stream"}}],
                "content":{{"text":"data: {{}}\n\n"}},"_error":"{error}"}}}}]}}}}"#
            )
        };
        struct Tails(Vec<EntryTail>);
        impl EntrySink for Tails {
            fn begin(&mut self, _: EntryHead) {}
            fn body(&mut self, _: &[u8]) {}
            fn finish(&mut self, tail: EntryTail) {
                self.0.push(tail);
            }
        }
        for (error, end) in [
            ("net::ERR_INCOMPLETE_CHUNKED_ENCODING", End::Reset),
            ("net::ERR_ABORTED", End::Cancelled),
        ] {
            let text = doc(error);
            let whole = parse(text.as_bytes()).unwrap();
            assert_eq!(whole[0].error.as_deref(), Some(error));
            assert_eq!(whole[0].end, end, "{error}");
            let mut tails = Tails(Vec::new());
            stream_entries(text.as_bytes(), 1 << 20, &mut tails).unwrap();
            assert_eq!(tails.0[0].error.as_deref(), Some(error));
            assert_eq!(tails.0[0].end, end, "{error}");
        }
        // A non-string `_error` says only that the transfer failed, however it is nested.
        let nested = doc("x").replace(r#""_error":"x""#, r#""_error":{"a":[[{"b":1}]]}"#);
        let whole = parse(nested.as_bytes()).unwrap();
        assert_eq!(
            (whole[0].error.as_deref(), whole[0].end),
            (None, End::Reset)
        );
    }

    #[test]
    fn errors_say_which_kind() {
        assert!(matches!(parse(b"{}"), Err(HarError::NoEntries)));
        assert!(matches!(parse(b"{\"log\""), Err(HarError::Unusable(_))));
        let trailing = parse(br#"{"log":{"entries":[]}} x"#).unwrap_err();
        assert!(matches!(trailing, HarError::TrailingData(_)));
        assert!(std::error::Error::source(&trailing).is_some());
        assert!(
            trailing
                .to_string()
                .starts_with("trailing data after the HAR document")
        );
    }

    /// The streaming reader's refusals are variants to match (never text to search), and read
    /// as the CLI has always printed them.
    #[test]
    fn streamed_errors_say_which_kind() {
        struct Nothing;
        impl EntrySink for Nothing {
            fn begin(&mut self, _: EntryHead) {}
            fn body(&mut self, _: &[u8]) {}
            fn finish(&mut self, _: EntryTail) {}
        }
        let read = |doc: &str| stream_entries(doc.as_bytes(), 1 << 20, &mut Nothing).unwrap_err();
        assert!(matches!(read("{}"), HarError::NoEntries));
        let trailing = read(r#"{"log":{"entries":[]}} x"#);
        assert!(matches!(
            trailing,
            HarError::Streamed(StreamError::TrailingData { at: 23 })
        ));
        assert_eq!(
            trailing.to_string(),
            "trailing data after the HAR document at byte 23"
        );
        let status = read(
            r#"{"log":{"entries":[{"request":{"method":"GET","url":"u","headers":[]},
                "response":{"status":1000,"headers":[],"content":{"text":""}}}]}}"#,
        );
        let HarError::Streamed(StreamError::Entry { index: 0, error }) = &status else {
            panic!("{status:?}")
        };
        assert!(matches!(**error, StreamError::BadStatus(1000)));
        assert_eq!(
            status.to_string(),
            "not a usable HAR file: entry 0: response status 1000 is not an HTTP status"
        );
        let cut = read(r#"{"log":{"entries":["#);
        assert_eq!(
            cut.to_string(),
            "not a usable HAR file: entry 0: EOF while parsing a value at byte 19"
        );
    }

    #[test]
    fn duplicate_log_or_entries_is_refused_and_a_bom_is_skipped() {
        let entry = r#"{"request":{"method":"GET","url":"http://x/"},"response":{"status":200}}"#;
        let twice_log = format!(r#"{{"log":{{"entries":[]}},"log":{{"entries":[{entry}]}}}}"#);
        let err = parse(twice_log.as_bytes()).unwrap_err().to_string();
        assert!(err.contains("duplicate `log`"), "{err}");
        let twice_entries = format!(r#"{{"log":{{"entries":[],"entries":[{entry}]}}}}"#);
        let err = parse(twice_entries.as_bytes()).unwrap_err().to_string();
        assert!(err.contains("duplicate `entries`"), "{err}");
        let with_bom = format!("\u{feff}{{\"log\":{{\"entries\":[{entry}]}}}}");
        assert_eq!(parse(with_bom.as_bytes()).unwrap().len(), 1);
        // A lone BOM-like prefix that is not a BOM is still an error, named as JSON.
        assert!(parse(b"\xEF\xBB{}").is_err());
    }

    #[test]
    fn written_one_entry_at_a_time_as_the_whole_pretty_document() {
        let entry = |i: u64, body: &[u8], answered: bool| Entry {
            index: i,
            method: "POST".into(),
            url: "http://x/mcp".into(),
            request_headers: Headers::from_iter([("Content-Type", "application/json")]),
            request_body: br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#.to_vec(),
            response: answered.then(|| ResponseHead {
                status: 200,
                headers: Headers::from_iter([("Content-Type", "text/event-stream")]),
            }),
            response_body: body.to_vec(),
            end: End::Timeout,
            started: Some("2026-12-06T07:00:00.125Z".into()),
            time_ms: Some(8000.5),
            timings: None,
            timeout_ms: None,
            error: None,
            arrivals: Vec::new(),
        };
        let entries = [
            entry(0, b"data: {\"a\":\"\\u00e9\"}\n\n", true),
            entry(1, &[0xff, 0, 1], true),
            entry(2, b"", false),
        ];
        let mut out = Vec::new();
        write(&entries, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        // The same bytes as the whole document built as one JSON value and printed at once.
        let whole: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(text, serde_json::to_string_pretty(&whole).unwrap() + "\n");
        let back = parse(text.as_bytes()).unwrap();
        assert_eq!(back.len(), 3);
        assert_eq!(back[1].response_body, [0xff, 0, 1]);
        assert_eq!(back[2].end, End::Timeout);
    }
}
