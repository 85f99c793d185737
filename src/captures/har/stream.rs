//! The streamed HAR reader: entries walked member by member, `response.content.text` decoded
//! piece by piece straight into an [`EntrySink`], never held whole.
//!
//! Member order in HAR JSON is not fixed, and the body can only be judged once the request,
//! the response status and headers, and the body's encoding are known:
//! - when they come first (the order of the HAR spec, browsers and mitmproxy), the text is
//!   decoded into the sink as it is read;
//! - when only `encoding` is still unknown (Chrome writes `text` before `encoding`), the text is
//!   read as plain text as soon as it holds a character base64 cannot contain; until then (at
//!   most 64 KiB) it is held;
//! - otherwise (keys sorted, as `jq -S` or serde_json's `json!` write them: `content` before
//!   `status`), a seekable input is skipped over and read again from the recorded offset at the
//!   end of the entry, and a pipe's text is held, up to [`Limits::max_body_bytes`] plus a third
//!   (base64) — more is an error that says to pass the file instead.
//!
//! Everything else is handed to serde_json as captured bytes (the same types as the serde
//! reader in `har.rs`), so that the two readers accept and refuse the same documents;
//! `tests/har_stream.rs` and the `har_reader` fuzz target check that they give the same
//! verdicts.

use serde_json::Value;

use super::base64_stream::Base64Stream;
use super::error::StreamError;
use super::scan::{Input, Src};
use super::{
    RawContent, RawEntry, RawHeader, RawRequest, RawResponse, Timings, decode_text, end_of, headers,
};
use crate::exchange::ResponseHead;
use crate::request::Headers;
use crate::verdict::End;

/// Text held while it may still be base64 and `encoding` is not known yet.
const SPECULATE_CAP: usize = 64 << 10;
/// Depth of an entry's members in a HAR document (`{"log":{"entries":[{`), for serde_json's
/// recursion limit of 128 on the `_error` value.
const ENTRY_DEPTH: usize = 4;

/// What an entry says before its response body.
#[derive(Debug, Clone)]
pub struct EntryHead {
    /// 0-based position in `log.entries`.
    pub index: u64,
    /// HTTP method.
    pub method: String,
    /// Request URL.
    pub url: String,
    /// Request headers.
    pub request_headers: Headers,
    /// Request body bytes.
    pub request_body: Vec<u8>,
    /// Response head, if one arrived.
    pub response: Option<ResponseHead>,
}

/// What an entry says after its response body.
#[derive(Debug, Clone)]
pub struct EntryTail {
    /// How the body ended.
    pub end: End,
    /// `response.content.text` was present (possibly empty), not absent or null: whether the
    /// body was captured at all.
    pub body_captured: bool,
    /// `startedDateTime`, when known.
    pub started: Option<String>,
    /// Total time in milliseconds, when known.
    pub time_ms: Option<f64>,
    /// The `timings` phases, when the capture has them.
    pub timings: Option<Timings>,
    /// The request's own timeout in milliseconds (`_mcp_timeout_ms`), when recorded.
    pub timeout_ms: Option<f64>,
    /// The capturing client's error text (`response._error`, or an entry-level `_error`
    /// string), as written.
    pub error: Option<String>,
    /// `_mcp_arrivals`: when the body's bytes arrived (empty when unknown).
    pub arrivals: Vec<crate::arrival::Mark>,
}

/// Receives entries piece by piece: `begin`, the response body in pieces, then `finish`. An
/// entry whose `finish` never comes was unusable (the read ends with an error).
pub trait EntrySink {
    /// The request and response head.
    fn begin(&mut self, head: EntryHead);
    /// A piece of the response body (only when the head has a response).
    fn body(&mut self, piece: &[u8]);
    /// The end of the entry.
    fn finish(&mut self, tail: EntryTail);
}

/// Reads every entry of the HAR document in `input`, in order, into `sink`. `hold_cap` bounds
/// what the reader may hold whole: an out-of-order body on a pipe, a request, `_error`.
pub(crate) fn read<I: Input>(
    input: I,
    hold_cap: usize,
    sink: &mut dyn EntrySink,
) -> Result<(), StreamError> {
    let mut src = Src::new(input, hold_cap);
    let seekable = src.can_seek();
    src.skip_bom()?;
    let mut reader = Reader {
        src,
        seekable,
        hold_cap,
        index: 0,
    };
    let found = reader.document(sink)?;
    if reader.src.peek_ws()?.is_some() {
        return Err(StreamError::TrailingData {
            at: reader.src.offset(),
        });
    }
    if !found {
        return Err(StreamError::NoEntries);
    }
    Ok(())
}

struct Reader<I> {
    src: Src<I>,
    seekable: bool,
    hold_cap: usize,
    index: u64,
}

/// Where `content.text` stands.
enum Text {
    /// No `text` member (yet).
    Absent,
    /// `text: null`.
    Null,
    /// Handed to the sink already (the entry has begun).
    Streamed { plain: bool },
    /// Held whole (decoded JSON string, not yet base64-decoded).
    Held(Vec<u8>),
    /// To be read again from this offset at the end of the entry.
    Deferred(u64),
    /// Read and checked, with no response head to give it to.
    Checked,
}

#[derive(Default)]
struct Response {
    status: Option<i64>,
    headers: Option<Vec<RawHeader>>,
    encoding: Option<Option<String>>,
    content_seen: bool,
    /// Chrome's `response._error`.
    error: Option<super::ErrorText>,
}

struct Entry {
    request: Option<RawRequest>,
    /// `Some(None)`: `response: null`.
    response: Option<Option<Response>>,
    text: Text,
    error: Option<Option<Value>>,
    mcp_end: Option<Option<String>>,
    started: Option<Option<String>>,
    timings: Option<Option<Timings>>,
    time: Option<Option<f64>>,
    timeout_ms: Option<Option<f64>>,
    arrivals: Option<Vec<crate::arrival::Mark>>,
    begun: bool,
}

fn dup(name: &'static str) -> StreamError {
    StreamError::DuplicateField(name)
}

fn serde<'a, T: serde::Deserialize<'a>>(
    bytes: &'a [u8],
    name: &'static str,
) -> Result<T, StreamError> {
    serde_json::from_slice(bytes).map_err(|source| StreamError::Member { name, source })
}

fn is_base64(encoding: Option<&str>) -> bool {
    encoding.is_some_and(|e| e.eq_ignore_ascii_case("base64"))
}

/// Could still be (trimmed) base64: symbols, ASCII whitespace, or any non-ASCII byte (which
/// may be Unicode whitespace).
fn base64_like(b: u8) -> bool {
    b.is_ascii_alphanumeric()
        || matches!(b, b'+' | b'/' | b'=')
        || b >= 0x80
        || (b as char).is_whitespace()
}

impl Entry {
    fn status(&self) -> Option<i64> {
        match &self.response {
            Some(Some(r)) => r.status,
            _ => None,
        }
    }

    /// The response head, once the entry is complete.
    fn response_head(&self) -> Result<Option<ResponseHead>, StreamError> {
        match &self.response {
            Some(Some(r)) => head_of(r.status.unwrap_or(0), r.headers.as_deref()),
            _ => Ok(None),
        }
    }

    fn encoding(&self) -> Option<&str> {
        match &self.response {
            Some(Some(r)) => r.encoding.as_ref().and_then(|e| e.as_deref()),
            _ => None,
        }
    }
}

fn head_of(
    status: i64,
    headers: Option<&[RawHeader]>,
) -> Result<Option<ResponseHead>, StreamError> {
    if status <= 0 {
        return Ok(None);
    }
    let status = u16::try_from(status)
        .ok()
        .filter(|s| *s <= 999)
        .ok_or(StreamError::BadStatus(status))?;
    let headers = headers
        .unwrap_or_default()
        .iter()
        .map(|h| (h.name.clone(), h.value.clone()))
        .collect();
    Ok(Some(ResponseHead { status, headers }))
}

fn begin(
    index: u64,
    request: &RawRequest,
    response: Option<ResponseHead>,
    sink: &mut dyn EntrySink,
) -> Result<(), StreamError> {
    let request_body = match &request.post_data {
        Some(p) => decode_text(p.text.clone(), p.encoding.as_deref())?,
        None => Vec::new(),
    };
    sink.begin(EntryHead {
        index,
        method: request.method.clone(),
        url: request.url.clone(),
        request_headers: headers(request.headers.clone()),
        request_body,
        response,
    });
    Ok(())
}

impl<I: Input> Reader<I> {
    /// The top-level object; `true` when `log.entries` was found.
    fn document(&mut self, sink: &mut dyn EntrySink) -> Result<bool, StreamError> {
        Ok(self.only("log", |r| r.log(sink))? == Some(true))
    }

    /// `log`: `true` when it has `entries`.
    fn log(&mut self, sink: &mut dyn EntrySink) -> Result<bool, StreamError> {
        Ok(self.only("entries", |r| r.entries(sink))?.is_some())
    }

    /// Walks an object whose `{` is next and of which only member `name` matters: `read`
    /// reads it, the others are skipped, and a second `name` is refused as by the serde reader
    /// (which of the two would count is undefined).
    fn only<T>(
        &mut self,
        name: &'static str,
        mut read: impl FnMut(&mut Self) -> Result<T, StreamError>,
    ) -> Result<Option<T>, StreamError> {
        let mut found = None;
        self.object(|r, key| {
            if key != name {
                return r.src.skip_value().map(|_| ());
            }
            if found.is_some() {
                return Err(StreamError::DuplicateMember(name));
            }
            found = Some(read(r)?);
            Ok(())
        })?;
        Ok(found)
    }

    /// Walks an object whose `{` is next, calling `member` with each key (the value is next).
    fn object(
        &mut self,
        mut member: impl FnMut(&mut Self, String) -> Result<(), StreamError>,
    ) -> Result<(), StreamError> {
        self.items(b'{', "expected an object", |r| {
            let key = r.src.key()?;
            member(r, key)
        })
    }

    fn entries(&mut self, sink: &mut dyn EntrySink) -> Result<(), StreamError> {
        self.items(b'[', "expected an array of HAR entries", |r| {
            let index = r.index;
            r.index += 1;
            r.entry(index, sink).map_err(|e| StreamError::Entry {
                index,
                error: Box::new(e),
            })
        })
    }

    /// Walks an object or array whose `open` bracket is next (else fails with `what`), calling
    /// `item` for each member or element.
    fn items(
        &mut self,
        open: u8,
        what: &'static str,
        mut item: impl FnMut(&mut Self) -> Result<(), StreamError>,
    ) -> Result<(), StreamError> {
        let close = if open == b'{' { b'}' } else { b']' };
        if self.src.peek_ws()? != Some(open) {
            return self.src.fail(what);
        }
        self.src.bump();
        if self.src.empty(close)? {
            return Ok(());
        }
        loop {
            item(self)?;
            if !self.src.comma_or(close)? {
                return Ok(());
            }
        }
    }

    fn entry(&mut self, index: u64, sink: &mut dyn EntrySink) -> Result<(), StreamError> {
        if self.src.peek_ws()? != Some(b'{') {
            // Any other form (serde also reads a struct from an array): held and read by serde.
            let (bytes, _) = self.src.capture_value()?;
            let raw: RawEntry = serde(&bytes, "entry")?;
            return whole(index, raw, sink);
        }
        let mut e = Entry {
            request: None,
            response: None,
            text: Text::Absent,
            error: None,
            mcp_end: None,
            started: None,
            time: None,
            timings: None,
            timeout_ms: None,
            arrivals: None,
            begun: false,
        };
        self.object(|r, key| r.entry_member(index, &key, &mut e, sink))?;
        let Some(request) = &e.request else {
            return Err(StreamError::MissingField("request"));
        };
        let response = e.response_head()?;
        let (response_error, response_failed) = match &e.response {
            Some(Some(r)) => r
                .error
                .as_ref()
                .map_or((None, false), |t| (t.text.clone(), t.failed)),
            _ => (None, false),
        };
        let entry_error = e
            .error
            .as_ref()
            .and_then(|v| v.as_ref()?.as_str().map(str::to_owned));
        let failed = e
            .error
            .as_ref()
            .is_some_and(|v| v.as_ref().is_some_and(|v| !v.is_null()))
            || response_failed;
        let error = response_error.or(entry_error);
        let base64 = is_base64(e.encoding());
        let has_response = response.is_some();
        let body_captured = !matches!(e.text, Text::Absent | Text::Null);
        let mcp_end = e.mcp_end.clone().flatten();
        let end = end_of(mcp_end.as_deref(), failed, !has_response || body_captured)?;
        let end = super::client_end(end, mcp_end.is_none(), error.as_deref());
        if !e.begun {
            begin(index, request, response, sink)?;
        }
        match std::mem::replace(&mut e.text, Text::Absent) {
            Text::Streamed { plain } => {
                if has_response && base64 && plain {
                    // It was read as plain text because it held a character base64 cannot.
                    return Err(StreamError::Base64Symbol);
                }
            }
            Text::Held(text) => {
                if has_response {
                    let body = decode_text(
                        Some(String::from_utf8(text).unwrap_or_default()),
                        e.encoding(),
                    )?;
                    sink.body(&body);
                }
            }
            Text::Deferred(at) => {
                let resume = self.src.offset();
                self.src.seek(at)?;
                let mut decoder = has_response.then(|| Decoder::new(base64));
                self.src.decode_str(&mut |piece| match &mut decoder {
                    Some(d) => d.push(piece, sink),
                    None => Ok(()),
                })?;
                if let Some(d) = &mut decoder {
                    d.finish(sink)?;
                }
                self.src.seek(resume)?;
            }
            Text::Absent | Text::Null | Text::Checked => {}
        }
        sink.finish(EntryTail {
            end,
            body_captured,
            started: e.started.flatten(),
            time_ms: e.time.flatten(),
            timings: e.timings.flatten(),
            timeout_ms: e
                .timeout_ms
                .flatten()
                .filter(|t| t.is_finite() && *t >= 0.0),
            error,
            arrivals: e.arrivals.take().unwrap_or_default(),
        });
        Ok(())
    }

    /// A member read by serde from its captured bytes; a second one is serde's duplicate-field
    /// error.
    fn once<T: serde::de::DeserializeOwned>(
        &mut self,
        slot: &mut Option<T>,
        name: &'static str,
    ) -> Result<(), StreamError> {
        if slot.is_some() {
            return Err(dup(name));
        }
        let (bytes, _) = self.src.capture_value()?;
        *slot = Some(serde(&bytes, name)?);
        Ok(())
    }

    fn entry_member(
        &mut self,
        index: u64,
        key: &str,
        e: &mut Entry,
        sink: &mut dyn EntrySink,
    ) -> Result<(), StreamError> {
        match key {
            "request" => self.once(&mut e.request, "request")?,
            "response" => {
                if e.response.is_some() {
                    return Err(dup("response"));
                }
                if self.src.peek_ws()? == Some(b'{') {
                    e.response = Some(Some(Response::default()));
                    self.object(|r, key| r.response_member(index, &key, e, sink))?;
                } else {
                    let (bytes, _) = self.src.capture_value()?;
                    let raw: Option<RawResponse> = serde(&bytes, "response")?;
                    e.response = Some(raw.map(|raw| {
                        let (text, encoding) = match raw.content {
                            Some(RawContent { text, encoding }) => (text, encoding),
                            None => (None, None),
                        };
                        e.text = match text {
                            Some(t) => Text::Held(t.into_bytes()),
                            None => Text::Absent,
                        };
                        Response {
                            status: Some(raw.status),
                            headers: Some(raw.headers),
                            encoding: Some(encoding),
                            content_seen: true,
                            error: Some(raw.error),
                        }
                    }));
                }
            }
            "_error" => {
                if e.error.is_some() {
                    return Err(dup("_error"));
                }
                let (bytes, depth) = self.src.capture_value()?;
                if depth + ENTRY_DEPTH >= 128 {
                    return Err(StreamError::ErrorTooDeep);
                }
                e.error = Some(serde(&bytes, "_error")?);
            }
            "_mcp_end" => self.once(&mut e.mcp_end, "_mcp_end")?,
            "startedDateTime" => self.once(&mut e.started, "startedDateTime")?,
            "time" => self.once(&mut e.time, "time")?,
            "timings" => self.once(&mut e.timings, "timings")?,
            "_mcp_timeout_ms" => self.once(&mut e.timeout_ms, "_mcp_timeout_ms")?,
            "_mcp_arrivals" => {
                if e.arrivals.is_some() {
                    return Err(dup("_mcp_arrivals"));
                }
                let (bytes, _) = self.src.capture_value()?;
                let mut de = serde_json::Deserializer::from_slice(&bytes);
                let marks = crate::entry::marks(&mut de).map_err(|source| StreamError::Member {
                    name: "_mcp_arrivals",
                    source,
                })?;
                e.arrivals = Some(marks);
            }
            _ => {
                self.src.skip_value()?;
            }
        }
        Ok(())
    }

    fn response_member(
        &mut self,
        index: u64,
        key: &str,
        e: &mut Entry,
        sink: &mut dyn EntrySink,
    ) -> Result<(), StreamError> {
        let r = match &mut e.response {
            Some(Some(r)) => r,
            _ => unreachable!("walking a response object"),
        };
        match key {
            "status" => {
                if r.status.is_some() {
                    return Err(dup("status"));
                }
                let (bytes, _) = self.src.capture_value()?;
                let status: i64 = serde(&bytes, "status")?;
                head_of(status, None)?;
                r.status = Some(status);
            }
            "headers" => self.once(&mut r.headers, "headers")?,
            "_error" => self.once(&mut r.error, "_error")?,
            "content" => {
                if r.content_seen {
                    return Err(dup("content"));
                }
                r.content_seen = true;
                if self.src.peek_ws()? == Some(b'{') {
                    r.encoding = None;
                    self.object(|rd, key| rd.content_member(index, &key, e, sink))?;
                    if let Some(Some(r)) = &mut e.response
                        && r.encoding.is_none()
                    {
                        r.encoding = Some(None);
                    }
                } else {
                    let (bytes, _) = self.src.capture_value()?;
                    let raw: Option<RawContent> = serde(&bytes, "content")?;
                    let (text, encoding) = raw.map_or((None, None), |c| (c.text, c.encoding));
                    r.encoding = Some(encoding);
                    e.text = text.map_or(Text::Absent, |t| Text::Held(t.into_bytes()));
                }
            }
            _ => {
                self.src.skip_value()?;
            }
        }
        Ok(())
    }

    fn content_member(
        &mut self,
        index: u64,
        key: &str,
        e: &mut Entry,
        sink: &mut dyn EntrySink,
    ) -> Result<(), StreamError> {
        match key {
            "encoding" => {
                let Some(Some(r)) = &mut e.response else {
                    unreachable!("walking a content object")
                };
                self.once(&mut r.encoding, "encoding")?;
            }
            "text" => {
                if !matches!(e.text, Text::Absent) {
                    return Err(dup("text"));
                }
                if self.src.peek_ws()? != Some(b'"') {
                    let (bytes, _) = self.src.capture_value()?;
                    let text: Option<String> = serde(&bytes, "text")?;
                    e.text = text.map_or(Text::Null, |t| Text::Held(t.into_bytes()));
                    return Ok(());
                }
                e.text = self.text(index, e, sink)?;
            }
            _ => {
                self.src.skip_value()?;
            }
        }
        Ok(())
    }

    /// `content.text` is next: streams it when the entry can begin, else holds or defers it.
    fn text(
        &mut self,
        index: u64,
        e: &mut Entry,
        sink: &mut dyn EntrySink,
    ) -> Result<Text, StreamError> {
        let status = e.status();
        let headers_known = matches!(&e.response, Some(Some(r)) if r.headers.is_some());
        let ready = e.request.is_some() && status.is_some_and(|s| s <= 0 || headers_known);
        if !ready {
            return self.defer_or_hold();
        }
        let Some(request) = &e.request else {
            unreachable!()
        };
        if status.is_some_and(|s| s <= 0) {
            // No response head: the text is only checked.
            self.src.decode_str(&mut |_| Ok(()))?;
            return Ok(Text::Checked);
        }
        let encoding = match &e.response {
            Some(Some(r)) => r.encoding.clone(),
            _ => None,
        };
        let head = e.response_head()?;
        match encoding {
            Some(enc) => {
                let base64 = is_base64(enc.as_deref());
                begin(index, request, head, sink)?;
                e.begun = true;
                let mut d = Decoder::new(base64);
                self.src.decode_str(&mut |piece| d.push(piece, sink))?;
                d.finish(sink)?;
                Ok(Text::Streamed { plain: !base64 })
            }
            None => {
                // `encoding` may still come: plain text as soon as it cannot be base64.
                let at = self.src.offset();
                let mut held: Vec<u8> = Vec::new();
                let mut state = Speculate::Holding;
                let mut begun = false;
                let seekable = self.seekable;
                let hold_cap = if seekable {
                    SPECULATE_CAP
                } else {
                    self.hold_cap
                };
                self.src.decode_str(&mut |piece| {
                    match state {
                        Speculate::Holding => {
                            if piece.iter().all(|&b| base64_like(b)) {
                                if held.len() + piece.len() > hold_cap {
                                    if seekable {
                                        state = Speculate::Deferred;
                                        held = Vec::new();
                                        return Ok(());
                                    }
                                    return Err(too_big(hold_cap));
                                }
                                held.extend_from_slice(piece);
                                return Ok(());
                            }
                            begin(index, request, head.clone(), sink)?;
                            begun = true;
                            sink.body(&held);
                            sink.body(piece);
                            held = Vec::new();
                            state = Speculate::Plain;
                        }
                        Speculate::Plain => sink.body(piece),
                        Speculate::Deferred => {}
                    }
                    Ok(())
                })?;
                e.begun = begun;
                Ok(match state {
                    Speculate::Holding => Text::Held(held),
                    Speculate::Plain => Text::Streamed { plain: true },
                    Speculate::Deferred => Text::Deferred(at),
                })
            }
        }
    }

    /// The text cannot be judged yet: skip it and read it again later (seekable input), or
    /// hold it.
    fn defer_or_hold(&mut self) -> Result<Text, StreamError> {
        let mut held = Vec::new();
        if self.seekable {
            let at = self.src.offset();
            // Checked now (serde reads it whole), decoded when read again.
            self.src.decode_str(&mut |_| Ok(()))?;
            return Ok(Text::Deferred(at));
        }
        let cap = self.hold_cap;
        self.src.decode_str(&mut |piece| {
            if held.len() + piece.len() > cap {
                return Err(too_big(cap));
            }
            held.extend_from_slice(piece);
            Ok(())
        })?;
        Ok(Text::Held(held))
    }
}

enum Speculate {
    Holding,
    Plain,
    Deferred,
}

fn too_big(cap: usize) -> StreamError {
    StreamError::BodyBeforeHead { cap }
}

/// Plain text or base64, into the sink.
enum Decoder {
    Plain,
    Base64(Box<Base64Stream>),
}

impl Decoder {
    fn new(base64: bool) -> Self {
        if base64 {
            Decoder::Base64(Box::default())
        } else {
            Decoder::Plain
        }
    }

    fn push(&mut self, piece: &[u8], sink: &mut dyn EntrySink) -> Result<(), StreamError> {
        match self {
            Decoder::Plain => {
                sink.body(piece);
                Ok(())
            }
            Decoder::Base64(b) => b.push(piece, &mut |bytes| {
                sink.body(bytes);
                Ok(())
            }),
        }
    }

    fn finish(&mut self, sink: &mut dyn EntrySink) -> Result<(), StreamError> {
        match self {
            Decoder::Plain => Ok(()),
            Decoder::Base64(b) => b.finish(&mut |bytes| {
                sink.body(bytes);
                Ok(())
            }),
        }
    }
}

/// An entry read whole by serde (any form but an object), given to the sink.
fn whole(index: u64, raw: RawEntry, sink: &mut dyn EntrySink) -> Result<(), StreamError> {
    let body_captured = raw
        .response
        .as_ref()
        .and_then(|r| r.content.as_ref())
        .is_some_and(|c| c.text.is_some());
    let entry = raw.decode(index)?;
    sink.begin(EntryHead {
        index,
        method: entry.method,
        url: entry.url,
        request_headers: entry.request_headers,
        request_body: entry.request_body,
        response: entry.response,
    });
    if !entry.response_body.is_empty() {
        sink.body(&entry.response_body);
    }
    sink.finish(EntryTail {
        end: entry.end,
        body_captured,
        started: entry.started,
        time_ms: entry.time_ms,
        timings: entry.timings,
        timeout_ms: entry.timeout_ms,
        error: entry.error,
        arrivals: entry.arrivals,
    });
    Ok(())
}
