//! The request side of an exchange: HTTP method, headers, and the JSON-RPC message POSTed.
//!
//! Parsed once into owned facts: the method, the id, and the few `params` members the checks
//! read. A tool call's arguments are skipped, not built.

use std::borrow::Cow;

use serde::de::{Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;
use smol_str::SmolStr;

pub use crate::headers::Headers;
use crate::headers::Known;
use crate::jsonrpc::scan;
use crate::meta::{Meta, Spans};
use crate::shapes::flat::{self, Tree};
use crate::shapes::node::Json;
/// The vocabulary is a leaf; the request's own words are reachable here too.
pub use crate::vocab::kinds::BodyKind;
use crate::vocab::kinds::ExchangeKind;
pub(crate) use crate::vocab::kinds::PlainCall;

/// The members of a request's `params` that the checks read. Everything else (a tool call's
/// `arguments`, often the bulk of the body) is skipped while parsing, never built as a tree.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Params {
    /// `params.name` (tools/call, prompts/get), when a string.
    pub name: Option<SmolStr>,
    /// `params.uri` (resources/read), when a string.
    pub uri: Option<String>,
    /// `params.protocolVersion` (initialize), when a string.
    pub protocol_version: Option<String>,
    /// `params.taskId` (`tasks/get`, `tasks/update`, `tasks/cancel`, `tasks/result`), when a
    /// string.
    pub task_id: Option<String>,
    /// `params._meta`, when an object: its text, read member by member when asked.
    pub meta: Option<Meta>,
    /// `params` carries `inputResponses` or `requestState` (an MRTR follow-up).
    pub mrtr: bool,
}

impl<'de> Deserialize<'de> for Params {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ParamsVisitor)
    }
}

struct ParamsVisitor;

/// An object key of a request message or its `params`, told apart without allocating.
enum Key {
    Method,
    Id,
    Params,
    Answer,
    Name,
    Uri,
    ProtocolVersion,
    TaskId,
    Meta,
    Mrtr,
    Other,
}

impl<'de> Deserialize<'de> for Key {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Key;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an object key")
            }
            fn visit_str<E>(self, v: &str) -> Result<Key, E> {
                Ok(match v {
                    "method" => Key::Method,
                    "id" => Key::Id,
                    "params" => Key::Params,
                    "result" | "error" => Key::Answer,
                    "name" => Key::Name,
                    "uri" => Key::Uri,
                    "protocolVersion" => Key::ProtocolVersion,
                    "taskId" => Key::TaskId,
                    "_meta" => Key::Meta,
                    "inputResponses" | "requestState" => Key::Mrtr,
                    _ => Key::Other,
                })
            }
        }
        d.deserialize_str(V)
    }
}

/// A string value as an owned `String`; any other value is read and gives `None`.
struct Text(Option<String>);

impl<'de> Deserialize<'de> for Text {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Text;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_str<E>(self, v: &str) -> Result<Text, E> {
                Ok(Text(Some(v.to_owned())))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Text, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(Text(None))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Text, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Text(None))
            }
            fn visit_bool<E>(self, _: bool) -> Result<Text, E> {
                Ok(Text(None))
            }
            fn visit_i64<E>(self, _: i64) -> Result<Text, E> {
                Ok(Text(None))
            }
            fn visit_u64<E>(self, _: u64) -> Result<Text, E> {
                Ok(Text(None))
            }
            fn visit_f64<E>(self, _: f64) -> Result<Text, E> {
                Ok(Text(None))
            }
            fn visit_unit<E>(self) -> Result<Text, E> {
                Ok(Text(None))
            }
        }
        d.deserialize_any(V)
    }
}

impl<'de> Visitor<'de> for ParamsVisitor {
    type Value = Params;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("any JSON value")
    }

    // Duplicate members: the last one wins, as in a `serde_json::Value`.
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Params, A::Error> {
        let mut p = Params::default();
        while let Some(key) = map.next_key::<Key>()? {
            match key {
                Key::Name => p.name = map.next_value::<Text>()?.0.map(SmolStr::from),
                Key::Uri => p.uri = map.next_value::<Text>()?.0,
                Key::ProtocolVersion => p.protocol_version = map.next_value::<Text>()?.0,
                Key::TaskId => p.task_id = map.next_value::<Text>()?.0,
                Key::Meta => {
                    p.meta = match map.next_value::<Value>()? {
                        Value::Object(m) => Some(Meta::from_map(&m)),
                        _ => None,
                    }
                }
                Key::Mrtr => {
                    map.next_value::<IgnoredAny>()?;
                    p.mrtr = true;
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(p)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Params, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Params::default())
    }

    scalars_give!(Params, Params::default());
}

/// One message object of a request body, as far as the facts go.
#[derive(Debug, Default, PartialEq)]
struct Message {
    method: Option<Cow<'static, str>>,
    /// `id`, unless absent or null.
    id: Option<Value>,
    params: Option<Params>,
    /// Has `result` or `error`.
    answer: bool,
}

impl<'de> Deserialize<'de> for Message {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Message;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON-RPC message object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Message, A::Error> {
                let mut m = Message::default();
                while let Some(key) = map.next_key::<Key>()? {
                    match key {
                        Key::Method => m.method = map.next_value::<Text>()?.0.map(method_name),
                        Key::Id => m.id = Some(map.next_value::<Value>()?).filter(|v| !v.is_null()),
                        Key::Params => m.params = Some(map.next_value::<Params>()?),
                        Key::Answer => {
                            map.next_value::<IgnoredAny>()?;
                            m.answer = true;
                        }
                        _ => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                Ok(m)
            }
        }
        d.deserialize_map(V)
    }
}

/// A request body: one message, a batch, or another JSON value.
// Lives for one parse and is taken apart at once: a box for the one message would be an
// allocation per request the serde reading reads.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, PartialEq)]
enum Body {
    Single(Message),
    Batch(Vec<Option<Message>>),
    Other,
}

impl<'de> Deserialize<'de> for Body {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Body;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON value")
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Body, A::Error> {
                Message::deserialize(serde::de::value::MapAccessDeserializer::new(map))
                    .map(Body::Single)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Body, A::Error> {
                let mut items = Vec::new();
                while let Some(item) = seq.next_element::<Item>()? {
                    items.push(item.0);
                }
                Ok(Body::Batch(items))
            }
            scalars_give!(Body, Body::Other);
        }
        d.deserialize_any(V)
    }
}

impl Body {
    /// Reads a body: from the flat list where it can (see [`flat`]), else by serde_json;
    /// `None` when it is not JSON.
    fn read(body: &[u8]) -> Option<Body> {
        if let Ok(text) = simdutf8::basic::from_utf8(body)
            && let Some(read) = flat::with_tree(text, Body::of_tree)
        {
            return Some(read);
        }
        serde_json::from_slice::<Body>(body).ok()
    }

    /// What serde_json's reading into [`Body`] gives, from the flat list of the same text.
    fn of_tree(tree: Tree<'_>) -> Body {
        if tree.is_object() {
            Body::Single(Message::of_tree(tree))
        } else if let Some(items) = tree.items() {
            Body::Batch(
                items
                    .map(|item| item.is_object().then(|| Message::of_tree(item)))
                    .collect(),
            )
        } else {
            Body::Other
        }
    }
}

impl Request {
    /// One pass over a single message object, writing only the facts straight into `self`
    /// (made by [`Request::empty`]; a `Message` moved in would cost copies of it): `None`
    /// leaves the text to the flat reading (anything the pass does not decide as serde_json
    /// would: an escape in a key or a string it keeps, an object or array id, a batch), with
    /// the facts to be cleared by the caller.
    fn scan(&mut self, text: &str) -> Option<()> {
        let b = text.as_bytes();
        let m = self;
        let mut answer = false;
        // Whether every member so far is one a plain call has (see [`PlainCall`]), and
        // whether `jsonrpc` was met ("2.0"; the SDKs' lead is passed by one compare).
        let mut plain = true;
        let mut jsonrpc = b.starts_with(scan::LEAD);
        let mut client_meta = false;
        let mut member = |key: &[u8], at: usize| match key {
            b"jsonrpc" => {
                let end = scan::any(b, at, 1)?;
                plain &= &b[at..end] == b"\"2.0\"";
                jsonrpc = true;
                Some(end)
            }
            b"params" => {
                // A repeated `params` is left to the check.
                let repeated = m.params.is_some();
                // Read where it is kept: a `Params` returned and moved in cost two copies.
                let params = m.params.insert(Params::default());
                let (end, params_plain, meta_of_client) = params.scan(text, at)?;
                plain &= params_plain && !repeated;
                client_meta = meta_of_client;
                Some(end)
            }
            b"method" => {
                let (method, end) = text_at(text, at, 1)?;
                plain &= method == Some("tools/call");
                m.method = method.map(method_name);
                Some(end)
            }
            b"id" if b[at] == b'"' => {
                let (id, end) = text_at(text, at, 1)?;
                m.id = id.map(|id| Value::String(id.to_owned()));
                Some(end)
            }
            b"id" => {
                let end = scan::any(b, at, 1)?;
                let raw = &text[at..end];
                plain &= is_small_integer(raw);
                m.id = match b[at] {
                    b'{' | b'[' => return None,
                    b'-' | b'0'..=b'9' => Some(Value::Number(flat::number(raw)?)),
                    _ => Some(value_of(raw)?).filter(|v| !v.is_null()),
                };
                Some(end)
            }
            _ => {
                plain = false;
                answer |= key == b"result" || key == b"error";
                scan::any(b, at, 1)
            }
        };
        // `jsonrpc` is no fact of the request's: the SDKs' lead is passed by one compare.
        let end = if b.starts_with(scan::LEAD) {
            scan::members_from(b, scan::LEAD.len(), &mut member)?
        } else {
            let open = scan::ws(b, 0);
            if b.get(open) != Some(&b'{') {
                return None;
            }
            scan::members(b, open, &mut member)?
        };
        if scan::ws(b, end) != b.len() {
            return None;
        }
        let meta = m.params.as_ref().is_some_and(|p| p.meta.is_some());
        m.plain_call = PlainCall {
            plain: plain && jsonrpc && m.id.is_some() && m.params.is_some(),
            meta,
            client_meta: meta && client_meta,
        };
        // What [`Request::take_message`] keeps of one message, by its kind.
        m.kind = match (&m.method, &m.id) {
            (Some(_), Some(_)) => BodyKind::Request,
            (Some(_), None) => BodyKind::Notification,
            (None, _) if answer => {
                m.params = None;
                BodyKind::Response
            }
            (None, _) => {
                (m.id, m.params) = (None, None);
                BodyKind::Unreadable
            }
        };
        Some(())
    }
}

impl Message {
    /// Members as the serde visitor reads them: the last of duplicates wins.
    fn of_tree(object: Tree<'_>) -> Message {
        let mut m = Message::default();
        for (key, value) in object.members() {
            match key {
                "method" => m.method = value.as_str().map(method_name),
                "id" => m.id = Some(value.to_value().into_owned()).filter(|v| !v.is_null()),
                "params" => m.params = Some(Params::of_tree(value)),
                "result" | "error" => m.answer = true,
                _ => {}
            }
        }
        m
    }
}

impl Params {
    /// [`Request::scan`] of `params` (its text, checked already): `params` at `at` in `text`
    /// read into `self` (a default one), with the index after it and whether `params` is one
    /// of a plain call (see [`PlainCall`]).
    fn scan(&mut self, text: &str, at: usize) -> Option<(usize, bool, bool)> {
        let b = text.as_bytes();
        if b[at] != b'{' {
            // serde_json reads any other value in full (a number must be in range): read it
            // so too, to tell.
            let end = scan::any(b, at, 1)?;
            return value_of(&text[at..end]).map(|_| (end, false, false));
        }
        let p = self;
        let (mut plain, mut client_meta) = (true, false);
        let end = scan::members(b, at, |key, at| {
            if let b"name" | b"uri" | b"protocolVersion" | b"taskId" = key {
                let (value, end) = text_at(text, at, 2)?;
                plain &= key == b"name" && value.is_some();
                match key {
                    b"name" => p.name = value.map(SmolStr::new),
                    b"uri" => p.uri = value.map(str::to_owned),
                    b"taskId" => p.task_id = value.map(str::to_owned),
                    _ => p.protocol_version = value.map(str::to_owned),
                }
                return Some(end);
            }
            // An object `_meta` is read once, where it lies: the walk that vouches for it and
            // notes its members finds its end (a walk that fails leaves it to the scan).
            let meta_read = match (key, b[at]) {
                (b"_meta", b'{') => {
                    let mut spans = Spans::default();
                    let (vouched, read) = plain_meta(&text[at..], &mut spans);
                    Some((vouched, read, spans))
                }
                _ => None,
            };
            let end = match &meta_read {
                Some((_, Some(len), _)) => at + len,
                _ => scan::any(b, at, 2)?,
            };
            match key {
                b"_meta" => {
                    let raw = &text[at..end];
                    let (vouched, noted, spans) = match meta_read {
                        Some((vouched, read, spans)) => (vouched, read.is_some(), spans),
                        None => (PlainMeta::No, false, Spans::default()),
                    };
                    match vouched {
                        PlainMeta::No => plain = false,
                        other => client_meta = other == PlainMeta::Client,
                    }
                    // Kept as text; serde_json must accept it as it would the whole body (a
                    // vouched one it does: plain strings, small integers).
                    if vouched == PlainMeta::No && flat::with_tree(raw, |_| ()).is_none() {
                        return None;
                    }
                    p.meta =
                        (b[at] == b'{').then(|| Meta::from_checked(raw, noted.then_some(spans)));
                }
                b"arguments" => plain &= b[at] == b'{',
                b"inputResponses" | b"requestState" => {
                    plain = false;
                    p.mrtr = true;
                }
                _ => plain = false,
            }
            Some(end)
        })?;
        let plain = plain && p.name.is_some();
        Some((end, plain, client_meta))
    }

    /// Members as the serde visitor reads them; anything but an object gives the default.
    fn of_tree(params: Tree<'_>) -> Params {
        let mut p = Params::default();
        let text = |v: Tree<'_>| v.as_str().map(str::to_owned);
        for (key, value) in params.members() {
            match key {
                "name" => p.name = value.as_str().map(SmolStr::new),
                "uri" => p.uri = text(value),
                "protocolVersion" => p.protocol_version = text(value),
                "taskId" => p.task_id = text(value),
                "_meta" => {
                    p.meta = match value.is_object().then(|| value.to_value().into_owned()) {
                        Some(Value::Object(m)) => Some(Meta::from_map(&m)),
                        _ => None,
                    }
                }
                "inputResponses" | "requestState" => p.mrtr = true,
                _ => {}
            }
        }
        p
    }
}

/// The member value at `at` (nested at `depth`) read as [`Text`] reads it, with the index
/// after it: the text of a string, `None` for any other value; `None` for the whole where the
/// scan leaves it to serde_json (an escape, a number serde_json would refuse). One pass: the
/// string's scan tells whether it holds an escape.
fn text_at(text: &str, at: usize, depth: u32) -> Option<(Option<&str>, usize)> {
    let b = text.as_bytes();
    match b[at] {
        b'"' => {
            let (end, plain) = scan::string_escapes(b, at)?;
            plain.then(|| (Some(&text[at + 1..end - 1]), end))
        }
        b'-' | b'0'..=b'9' => {
            let end = scan::number(b, at)?;
            flat::number(&text[at..end]).map(|_| (None, end))
        }
        _ => Some((None, scan::any(b, at, depth)?)),
    }
}

/// A member's text as a `serde_json::Value`, read as serde_json reads it (`None` where the
/// flat reading leaves it to serde_json).
fn value_of(raw: &str) -> Option<Value> {
    flat::with_tree(raw, |tree| tree.to_value().into_owned())
}

/// A JSON integer every reading keeps exact: optional `-`, at most 15 digits.
fn is_small_integer(raw: &str) -> bool {
    let digits = raw.strip_prefix('-').unwrap_or(raw);
    (1..=15).contains(&digits.len()) && digits.bytes().all(|c| c.is_ascii_digit())
}

/// Whether `_meta` (its text, scanned already) is one of a plain call ([`PlainMeta`]): only
/// `progressToken` (a string without escapes or a small integer), with or without the three
/// client members of 2026-07-28 (plain strings, `clientInfo` of `name` and `version`,
/// `clientCapabilities` `{}`). The same walk notes in
/// `spans` where the members the checks read are ([`crate::meta::KEYS`]); the length of the
/// object when it read the whole of it (else the notes are incomplete). `raw` starts with the
/// object and may run on past it; its members are read at the depth they have in a request.
fn plain_meta(raw: &str, spans: &mut Spans) -> (PlainMeta, Option<usize>) {
    const VERSION: &[u8] = crate::wire::META_PROTOCOL_VERSION.as_bytes();
    const INFO: &[u8] = crate::wire::META_CLIENT_INFO.as_bytes();
    const CAPABILITIES: &[u8] = crate::wire::META_CLIENT_CAPABILITIES.as_bytes();
    let b = raw.as_bytes();
    if b.first() != Some(&b'{') {
        return (PlainMeta::No, None);
    }
    let plain_string = |at: usize| plain_string(b, at);
    let mut plain = true;
    // Each of the three client members, once.
    let mut client = [0u8; 3];
    let read = scan::members(b, 0, |key, at| {
        let end = scan::any(b, at, 3)?;
        Meta::note(spans, key, at, end);
        let value = &raw[at..end];
        plain &= match key {
            b"progressToken" => plain_string(at) || is_small_integer(value),
            VERSION => {
                client[0] += 1;
                plain_string(at)
            }
            INFO => {
                client[1] += 1;
                plain_client_info(value)
            }
            CAPABILITIES => {
                client[2] += 1;
                value == "{}"
            }
            _ => false,
        };
        Some(end)
    });
    let vouched = match (read.is_some() && plain, client) {
        (false, _) => PlainMeta::No,
        (true, [0, 0, 0]) => PlainMeta::Progress,
        (true, [1, 1, 1]) => PlainMeta::Client,
        (true, _) => PlainMeta::No,
    };
    (vouched, read)
}

/// A `_meta` as a plain call has it (see [`PlainCall`]).
#[derive(Clone, Copy, PartialEq, Eq)]
enum PlainMeta {
    No,
    /// `progressToken` only.
    Progress,
    /// The three 2026-07-28 client members, with or without `progressToken`.
    Client,
}

/// A string at `at` with no escape in it.
fn plain_string(b: &[u8], at: usize) -> bool {
    b[at] == b'"' && scan::string_escapes(b, at).is_some_and(|(_, plain)| plain)
}

/// `clientInfo` of exactly `name` and `version`, plain strings, once each.
fn plain_client_info(raw: &str) -> bool {
    let b = raw.as_bytes();
    if b.first() != Some(&b'{') {
        return false;
    }
    let (mut plain, mut seen) = (true, [0u8; 2]);
    let read = scan::members(b, 0, |key, at| {
        let end = scan::any(b, at, 1)?;
        let slot = match key {
            b"name" => 0,
            b"version" => 1,
            _ => {
                plain = false;
                return Some(end);
            }
        };
        seen[slot] += 1;
        plain &= plain_string(b, at);
        Some(end)
    });
    read.is_some() && plain && seen == [1, 1]
}

/// A batch element: a message object, or `None` for anything else.
struct Item(Option<Message>);

impl<'de> Deserialize<'de> for Item {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match Body::deserialize(d)? {
            Body::Single(m) => Ok(Item(Some(m))),
            _ => Ok(Item(None)),
        }
    }
}

/// A JSON-RPC method name: one of the MCP revisions' as fixed text, any other owned.
fn method_name(name: impl AsRef<str> + Into<String>) -> Cow<'static, str> {
    crate::shapes::method_name(name.as_ref()).map_or_else(|| Cow::Owned(name.into()), Cow::Borrowed)
}

/// An HTTP method in upper case: the ones MCP uses as fixed text.
pub(crate) fn upper_case(method: &str) -> Cow<'static, str> {
    ["POST", "GET", "DELETE"]
        .into_iter()
        .find(|m| crate::wire::eq_ignoring_case(m.as_bytes(), method.as_bytes()))
        .map_or_else(|| Cow::Owned(method.to_ascii_uppercase()), Cow::Borrowed)
}

/// The request facts the analyzer needs.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    /// HTTP method, upper-case (`POST`, `GET` and `DELETE` without an allocation).
    pub http_method: Cow<'static, str>,
    /// Request headers.
    pub headers: Headers,
    /// What the body is.
    pub kind: BodyKind,
    /// JSON-RPC method (first request of a batch). The methods of the MCP revisions are fixed
    /// text (no allocation).
    pub method: Option<Cow<'static, str>>,
    /// JSON-RPC id (first request of a batch; for a response POST, the id it answers).
    pub id: Option<Value>,
    /// Ids of every request in a batch; read through [`Request::ids`], which gives the one id
    /// of a single request without a vector of its own.
    pub(crate) batch_ids: Vec<Value>,
    /// What `params` of the (first) request holds, as far as the checks read it.
    pub params: Option<Params>,
    /// Whether the text was read as a plain call (see [`PlainCall`]).
    pub(crate) plain_call: PlainCall,
}

impl Request {
    /// Builds the request facts from what was sent. Never fails: a body that is not JSON-RPC is
    /// [`BodyKind::Unreadable`].
    pub fn new(http_method: &str, headers: Headers, body: &[u8]) -> Self {
        // Built where it is returned and filled in place: a request moved between helpers cost
        // a copy of it each time.
        let mut req = Request::empty(http_method, headers, BodyKind::None);
        if body.iter().all(u8::is_ascii_whitespace) {
            return req;
        }
        if let Ok(text) = simdutf8::basic::from_utf8(body) {
            if req.scan(text).is_some() {
                return req;
            }
            (req.method, req.id, req.params) = (None, None, None);
            req.plain_call = PlainCall::default();
        }
        match Body::read(body) {
            Some(parsed) => req.take_body(parsed),
            None => req.kind = BodyKind::Unreadable,
        }
        req
    }

    /// Builds the request facts from a message already parsed (a client that holds the `Value`
    /// it sends need not serialize and parse it again).
    pub fn from_value(http_method: &str, headers: Headers, value: &Value) -> Self {
        let mut req = Request::empty(http_method, headers, BodyKind::Unreadable);
        if let Ok(parsed) = Body::deserialize(value) {
            req.take_body(parsed);
        }
        req
    }

    /// Reads a parsed body into the facts of a request made by [`Request::empty`].
    fn take_body(&mut self, body: Body) {
        self.kind = BodyKind::Unreadable;
        match body {
            Body::Single(m) => {
                self.kind = self.take_message(m);
            }
            Body::Batch(items) => {
                self.kind = BodyKind::Batch;
                for item in items.into_iter().flatten() {
                    let before = (self.method.clone(), self.id.clone(), self.params.clone());
                    let is_first_request = self.id.is_none();
                    if self.take_message(item) != BodyKind::Request || !is_first_request {
                        (self.method, self.id, self.params) = before;
                    }
                }
            }
            Body::Other => {}
        }
    }

    fn empty(http_method: &str, headers: Headers, kind: BodyKind) -> Self {
        Request {
            http_method: upper_case(http_method),
            headers,
            kind,
            method: None,
            id: None,
            batch_ids: Vec::new(),
            params: None,
            plain_call: PlainCall::default(),
        }
    }

    /// Reads one message into the facts; returns its kind.
    fn take_message(&mut self, m: Message) -> BodyKind {
        match (m.method, m.id) {
            (Some(method), Some(id)) => {
                self.method = Some(method);
                if self.kind == BodyKind::Batch {
                    self.batch_ids.push(id.clone());
                }
                self.id = Some(id);
                self.params = m.params;
                BodyKind::Request
            }
            (Some(method), None) => {
                self.method = Some(method);
                self.params = m.params;
                BodyKind::Notification
            }
            (None, id) if m.answer => {
                // The id of the server request this answers (links it to that request); a
                // batch puts back the facts of its first request after any other message.
                self.id = id;
                BodyKind::Response
            }
            (None, _) => BodyKind::Unreadable,
        }
    }

    /// The body expects a response carrying a request id.
    pub fn expects_response(&self) -> bool {
        !self.ids().is_empty()
    }

    /// The JSON-RPC ids of every request the body holds: the one id of a request, each
    /// request's of a batch, none for a notification, a response or no body.
    pub fn ids(&self) -> &[Value] {
        match (self.kind, &self.id) {
            (BodyKind::Batch, _) => &self.batch_ids,
            (BodyKind::Request, Some(id)) => std::slice::from_ref(id),
            _ => &[],
        }
    }

    /// `params.name` of a `tools/call`.
    pub fn tool(&self) -> Option<&str> {
        self.tool_name().map(SmolStr::as_str)
    }

    /// `params.name` of a `tools/call` as held: a clone copies it, without an allocation.
    pub(crate) fn tool_name(&self) -> Option<&SmolStr> {
        if self.method.as_deref() != Some("tools/call") {
            return None;
        }
        self.params.as_ref()?.name.as_ref()
    }

    /// A string member of `params`: `name`, `uri`, `protocolVersion` or `taskId` (the ones the checks
    /// read; any other key gives `None`).
    pub fn param_str(&self, key: &str) -> Option<&str> {
        let p = self.params.as_ref()?;
        match key {
            "name" => p.name.as_deref(),
            "uri" => p.uri.as_deref(),
            "protocolVersion" => p.protocol_version.as_deref(),
            "taskId" => p.task_id.as_deref(),
            _ => None,
        }
    }

    /// A member of `params._meta`.
    pub fn meta(&self, key: &str) -> Option<Value> {
        self.params.as_ref()?.meta.as_ref()?.get(key)
    }

    /// A member of `params._meta` when it is a string.
    pub fn meta_str(&self, key: &str) -> Option<Cow<'_, str>> {
        self.params.as_ref()?.meta.as_ref()?.get_str(key)
    }

    /// Whether `params._meta` has member `key` (with any value).
    pub fn has_meta(&self, key: &str) -> bool {
        self.params
            .as_ref()
            .and_then(|p| p.meta.as_ref())
            .is_some_and(|m| m.contains(key))
    }

    /// `params._meta.progressToken`.
    pub fn progress_token(&self) -> Option<Value> {
        self.meta("progressToken")
    }

    /// The request is an MRTR follow-up (carries `inputResponses` or `requestState`).
    pub fn is_mrtr_follow_up(&self) -> bool {
        self.params.as_ref().is_some_and(|p| p.mrtr)
    }

    /// The session id header, if sent.
    pub fn session_id(&self) -> Option<&str> {
        self.headers.session_id()
    }
}

/// Told from the request alone, so it is here with [`Request`] (the kind itself is vocabulary,
/// in a leaf module that reads nothing).
impl ExchangeKind {
    /// The kind of `req`, from its HTTP method, headers and body.
    pub fn of(req: &Request) -> ExchangeKind {
        match req.http_method.as_ref() {
            "GET" if req.headers.known(Known::LastEventId).is_some() => ExchangeKind::Resume,
            "GET" => ExchangeKind::Listen,
            "DELETE" => ExchangeKind::Terminate,
            _ => match req.kind {
                BodyKind::Notification => ExchangeKind::Notification,
                BodyKind::Response => ExchangeKind::Response,
                BodyKind::Batch if req.ids().is_empty() => ExchangeKind::Notification,
                _ => ExchangeKind::Request,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [`Request::scan`] of `text` alone: the facts it writes, if it decides the text.
    fn scanned_as_read(text: &str) -> Option<Request> {
        let mut req = Request::empty("POST", Headers::default(), BodyKind::None);
        req.scan(text).map(|()| req)
    }

    /// The facts serde_json's reading of `text` gives.
    fn facts(text: &str) -> Option<Request> {
        let body = serde_json::from_str::<Body>(text).ok()?;
        let mut req = Request::empty("POST", Headers::default(), BodyKind::None);
        req.take_body(body);
        Some(req)
    }

    /// Every value at every path of `v`, replaced by each of a few others.
    fn variants(v: &Value) -> Vec<Value> {
        let alternatives = [
            serde_json::json!(1),
            serde_json::json!(-7),
            serde_json::json!(1.5),
            serde_json::json!("text"),
            serde_json::json!(null),
            serde_json::json!(true),
            serde_json::json!([]),
            serde_json::json!({}),
            serde_json::json!([{"name": "n"}]),
            serde_json::json!({"name": "n", "_meta": {"a": 1}}),
        ];
        fn paths(v: &Value, at: String, out: &mut Vec<String>) {
            out.push(at.clone());
            match v {
                Value::Object(m) => m.iter().for_each(|(k, x)| {
                    // A JSON pointer escapes `~` and `/` in a key.
                    let k = k.replace('~', "~0").replace('/', "~1");
                    paths(x, format!("{at}/{k}"), out)
                }),
                Value::Array(l) => l
                    .iter()
                    .enumerate()
                    .for_each(|(i, x)| paths(x, format!("{at}/{i}"), out)),
                _ => {}
            }
        }
        let mut all = Vec::new();
        paths(v, String::new(), &mut all);
        let mut out = vec![v.clone()];
        for path in &all {
            for alt in &alternatives {
                let mut copy = v.clone();
                *copy.pointer_mut(path).unwrap() = alt.clone();
                out.push(copy);
            }
        }
        out
    }

    /// The flat reading of a body gives the facts serde_json's gives, wherever it reads one
    /// (it leaves escapes and the like to serde_json).
    #[test]
    fn flat_and_serde_read_the_same_facts() {
        let bases = [
            serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": {"name": "echo", "arguments": {"text": "hello", "n": [1, 2.5, -3]}}}),
            serde_json::json!({"jsonrpc": "2.0", "id": "a", "method": "initialize",
                "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                    "_meta": {"progressToken": "t", "x": {"y": [1]}}}}),
            serde_json::json!({"jsonrpc": "2.0", "id": 5, "result": {"action": "accept"}}),
            // A 2026-07-28 call's `_meta` (read where it lies) with members after it.
            serde_json::json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                "params": {"_meta": {"io.modelcontextprotocol/clientCapabilities": {},
                    "io.modelcontextprotocol/clientInfo": {"name": "c", "version": "1"},
                    "io.modelcontextprotocol/protocolVersion": "2026-07-28", "progressToken": 2},
                    "name": "echo", "arguments": {"m": "x"}}}),
            serde_json::json!({"jsonrpc": "2.0", "id": 6, "method": "tasks/get",
                "params": {"taskId": "job-1", "requestState": "s"}}),
            serde_json::json!({"jsonrpc": "2.0", "method": "resources/read",
                "params": {"uri": "file:///x", "requestState": "s", "inputResponses": {}}}),
            serde_json::json!([{"jsonrpc": "2.0", "method": "n"},
                {"jsonrpc": "2.0", "id": 2, "method": "ping"}, 7, [1]]),
        ];
        let (mut compared, mut flat_read, mut scanned) = (0, 0, 0);
        for base in &bases {
            for v in variants(base) {
                let text = v.to_string();
                let mut texts = vec![text.clone()];
                // Duplicate members, before and after: the last wins.
                if let Some(rest) = text.strip_prefix('{') {
                    texts.push(format!(
                        r#"{{"method":"a","id":9,"params":{{"name":"m","_meta":{{}}}},"error":1,{rest}"#
                    ));
                    texts.push(format!(
                        r#"{},"method":7,"params":{{"name":"z","name":"y","uri":[]}}}}"#,
                        &text[..text.len() - 1]
                    ));
                }
                texts.push(text.replace("\"method\"", "\"m\\u0065thod\""));
                // As the SDKs write it: compact `jsonrpc` first (here perhaps repeated later).
                if let Some(rest) = text.strip_prefix('{') {
                    texts.push(format!(r#"{{"jsonrpc":"2.0",{rest}"#));
                }
                texts.push(format!(" \n{text}\t"));
                for text in &texts {
                    let serde = serde_json::from_str::<Body>(text).ok();
                    if let Some(read) = flat::with_tree(text, Body::of_tree) {
                        assert_eq!(Some(read), serde, "{text}");
                        flat_read += 1;
                    }
                    if let Some(read) = scanned_as_read(text) {
                        assert_eq!(Some(read), facts(text), "scan: {text}");
                        scanned += 1;
                    }
                    assert_eq!(Body::read(text.as_bytes()), serde, "{text}");
                    compared += 1;
                }
            }
        }
        assert!(compared > 500, "{compared}");
        assert!(flat_read * 10 > compared * 7, "{flat_read} of {compared}");
        assert!(scanned * 10 > compared * 6, "{scanned} of {compared}");
        // What serde_json reads in full (a number must be in range, a string's escapes must
        // decode) and what it only skips, wherever the scan meets it.
        let deep = format!("{}1{}", "[".repeat(130), "]".repeat(130));
        let edges = [
            r#"{"id":1,"method":"x","params":1e400}"#.to_owned(),
            r#"{"id":1,"method":"x","params":"\ud800"}"#.to_owned(),
            r#"{"id":1,"method":"x","params":[1e400]}"#.to_owned(),
            r#"{"id":1,"method":"x","params":{"name":1e400}}"#.to_owned(),
            r#"{"id":1,"method":"x","params":{"name":"\ud800"}}"#.to_owned(),
            r#"{"id":1,"method":"x","params":{"name":[1e400]}}"#.to_owned(),
            r#"{"id":1,"method":"x","params":{"_meta":1e400}}"#.to_owned(),
            r#"{"id":1,"method":"x","params":{"_meta":{"a":"\ud800"}}}"#.to_owned(),
            r#"{"id":1,"method":"x","params":{"arguments":1e400}}"#.to_owned(),
            r#"{"id":1,"method":"x","params":{"arguments":"\ud800"}}"#.to_owned(),
            r#"{"id":1,"method":"x","params":{"arguments":"a\u0041"}}"#.to_owned(),
            r#"{"id":{"a":1},"method":"x"}"#.to_owned(),
            r#"{"id":[1e400],"method":"x"}"#.to_owned(),
            r#"{"id":1e400,"method":"x"}"#.to_owned(),
            r#"{"id":-0,"method":"x"}"#.to_owned(),
            r#"{"id":1,"method":1e400}"#.to_owned(),
            r#"{"id":1,"method":"x","result":1e400}"#.to_owned(),
            format!(r#"{{"id":1,"method":"x","params":{{"arguments":{deep}}}}}"#),
            format!(r#"{{"id":1,"method":"x","params":{{"_meta":{deep}}}}}"#),
        ];
        for text in &edges {
            let serde = serde_json::from_str::<Body>(text).ok();
            if let Some(read) = scanned_as_read(text) {
                assert_eq!(Some(read), facts(text), "scan: {text}");
            }
            assert_eq!(Body::read(text.as_bytes()), serde, "{text}");
        }
        // Not UTF-8, not JSON: unreadable both ways.
        assert_eq!(Body::read(b"{\"id\":1,\"method\":\"\xff\"}"), None);
        assert_eq!(Body::read(b"{\"id\":1,"), None);
    }

    /// Wherever the reading vouches for a plain call, the full shape check finds what
    /// [`crate::shapes::plain_call_problems`] says for each revision; and it does vouch for the
    /// calls the SDKs send.
    #[test]
    fn a_plain_call_has_the_shape_problems_the_check_finds() {
        use crate::version::ProtocolVersion as V;
        let bases = [
            serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": {"name": "echo", "arguments": {"text": "hi", "n": [1, 2.5]}}}),
            serde_json::json!({"jsonrpc": "2.0", "id": "r-1", "method": "tools/call",
                "params": {"name": "add", "arguments": {}, "_meta": {"progressToken": 7}}}),
            serde_json::json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                "params": {"name": "x", "_meta": {"progressToken": "p"}}}),
            // A 2026-07-28 client's `_meta` (as `soak` and the SDKs send it).
            serde_json::json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call",
                "params": {"name": "echo", "arguments": {},
                    "_meta": {"io.modelcontextprotocol/clientCapabilities": {},
                        "io.modelcontextprotocol/clientInfo": {"name": "c", "version": "1"},
                        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                        "progressToken": 4}}}),
            serde_json::json!({"jsonrpc": "2.0", "id": "b", "method": "tools/call",
                "params": {"name": "echo", "arguments": {"a": [1]},
                    "_meta": {"io.modelcontextprotocol/clientCapabilities": {},
                        "io.modelcontextprotocol/clientInfo": {"version": "0.1", "name": "x"},
                        "io.modelcontextprotocol/protocolVersion": "2025-11-25"}}}),
        ];
        let (mut vouched, mut seen, mut client_vouched) = (0, 0, 0);
        for base in &bases {
            let mut texts: Vec<String> = Vec::new();
            // As written (serde_json sorts the members), and as the SDKs write it: compact,
            // `jsonrpc` first; and with repeated members.
            for mut v in variants(base) {
                texts.push(v.to_string());
                let Some(object) = v.as_object_mut() else {
                    continue;
                };
                let jsonrpc = object.remove("jsonrpc");
                let text = v.to_string();
                let Some(rest) = text.strip_prefix('{').filter(|r| r.len() > 1) else {
                    continue;
                };
                match jsonrpc {
                    Some(j) => texts.push(format!(r#"{{"jsonrpc":{j},{rest}"#)),
                    None => texts.push(format!(r#"{{"jsonrpc":"2.0",{rest}"#)),
                }
                texts.push(format!(r#"{{"jsonrpc":"2.0",{rest}"#));
                texts.push(format!(r#"{{"jsonrpc":"2.0","jsonrpc":"1.0",{rest}"#));
                texts.push(format!(r#"{{"jsonrpc":"2.0","method":"tools/list",{rest}"#));
                texts.push(format!(r#"{{"jsonrpc":"2.0","params":{{"name":1}},{rest}"#));
                texts.push(format!(
                    r#"{{"jsonrpc":"2.0",{}}}}},"params":{{"name":"a","_meta":{{"progressToken":1.5}}}}}}"#,
                    &rest[..rest.len() - 1]
                ));
            }
            for huge in ["1e3", "12345678901234567890", "-0.0", "true"] {
                texts.push(format!(
                    r#"{{"jsonrpc":"2.0","id":{huge},"method":"tools/call","params":{{"name":"a"}}}}"#
                ));
                texts.push(format!(
                    r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"a","_meta":{{"progressToken":{huge}}}}}}}"#
                ));
            }
            for text in &texts {
                let req = Request::new("POST", Headers::new(), text.as_bytes());
                seen += 1;
                if !req.plain_call.plain {
                    continue;
                }
                vouched += 1;
                client_vouched += usize::from(req.plain_call.client_meta);
                for version in [
                    V::V2025_03_26,
                    V::V2025_06_18,
                    V::V2025_11_25,
                    V::V2026_07_28,
                ] {
                    let found = crate::shapes::problems_in(text, version, None);
                    let said = crate::shapes::plain_call_problems(version, req.plain_call);
                    let said: Option<Vec<(crate::rules::Rule, String)>> =
                        said.map(|s| s.iter().map(|&(r, d)| (r, d.to_owned())).collect());
                    if let Some(said) = said {
                        assert_eq!(found, said, "{version:?} {text}");
                    }
                }
            }
        }
        assert!(seen > 300, "{seen}");
        assert!(vouched > 100, "{vouched} of {seen}");
        assert!(
            client_vouched > 30,
            "{client_vouched} with a client's _meta"
        );
        for sdk in [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}"#,
            r#"{"jsonrpc":"2.0","id":"4a","method":"tools/call","params":{"name":"e","arguments":{},"_meta":{"progressToken":2}}}"#,
            // serde_json's order (`soak`'s): `jsonrpc` after `id`.
            r#"{"id":3,"jsonrpc":"2.0","method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"mcp-verdict","version":"0.1.0"},"io.modelcontextprotocol/protocolVersion":"2026-07-28","progressToken":3},"arguments":{},"name":"echo"}}"#,
        ] {
            let call = Request::new("POST", Headers::new(), sdk.as_bytes()).plain_call;
            assert!(call.plain, "{sdk}");
            for version in [V::V2025_11_25, V::V2026_07_28] {
                let said = crate::shapes::plain_call_problems(version, call);
                assert!(
                    said.is_some() || (!call.client_meta && call.meta),
                    "{version:?} {sdk}"
                );
            }
        }
        // The one the 2026-07-28 fast path answers: no `_meta` at all (as the proxy bench
        // sends it); a repeated `params` is left to the check.
        let bare = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"e"}}"#;
        let call = Request::new("POST", Headers::new(), bare).plain_call;
        assert!(crate::shapes::plain_call_problems(V::V2026_07_28, call).is_some());
        let twice = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"e"},"params":{"name":"f","_meta":{}}}"#;
        assert!(!Request::new("POST", Headers::new(), twice).plain_call.plain);
    }

    #[test]
    fn kinds() {
        let r = Request::new(
            "post",
            Headers::new(),
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}"#,
        );
        assert_eq!(
            (r.kind, r.tool(), r.http_method.as_ref()),
            (BodyKind::Request, Some("x"), "POST")
        );
        let r = Request::new(
            "POST",
            Headers::new(),
            br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        );
        assert_eq!(r.kind, BodyKind::Notification);
        assert!(!r.expects_response());
        let r = Request::new(
            "POST",
            Headers::new(),
            br#"{"jsonrpc":"2.0","id":5,"result":{}}"#,
        );
        assert_eq!(r.kind, BodyKind::Response);
        let r = Request::new("POST", Headers::new(), br#"[{"jsonrpc":"2.0","method":"n"},{"jsonrpc":"2.0","id":2,"method":"ping"},{"jsonrpc":"2.0","id":3,"method":"tools/list"}]"#);
        assert_eq!(
            (r.kind, r.ids().len(), r.method.as_deref()),
            (BodyKind::Batch, 2, Some("ping"))
        );
        let r = Request::new("GET", Headers::new(), b"");
        assert_eq!(r.kind, BodyKind::None);
        let r = Request::new("POST", Headers::new(), b"{oops");
        assert_eq!(r.kind, BodyKind::Unreadable);
    }
}
