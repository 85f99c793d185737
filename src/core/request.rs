//! The request side of an exchange: HTTP method, headers, and the JSON-RPC message POSTed.
//!
//! Parsed once into owned facts: the method, the id, and the few `params` members the checks
//! read. A tool call's arguments are skipped, not built.

use serde::de::{Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

/// HTTP headers with case-insensitive lookup. Keeps the order and duplicates as sent.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Headers(Vec<(String, String)>);

impl Headers {
    /// An empty set.
    pub fn new() -> Self {
        Headers(Vec::new())
    }

    /// Adds one header.
    pub fn push(&mut self, name: impl Into<String>, value: impl Into<String>) {
        self.0.push((name.into(), value.into()));
    }

    /// The first value of `name` (case-insensitive).
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// Whether there are no headers (a capture that did not record them).
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// All headers, in order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.0.iter().map(|(n, v)| (n.as_str(), v.as_str()))
    }
}

impl From<Vec<(String, String)>> for Headers {
    fn from(pairs: Vec<(String, String)>) -> Self {
        Headers(pairs)
    }
}

impl<N: Into<String>, V: Into<String>> FromIterator<(N, V)> for Headers {
    fn from_iter<I: IntoIterator<Item = (N, V)>>(iter: I) -> Self {
        Headers(
            iter.into_iter()
                .map(|(n, v)| (n.into(), v.into()))
                .collect(),
        )
    }
}

/// What the POST body is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BodyKind {
    /// A request: it expects a response with its id.
    Request,
    /// A notification: expects 202.
    Notification,
    /// A response or error the client sends to a server request: expects 202.
    Response,
    /// A JSON array (2025-03-26 batch). Expects responses if it holds any request.
    Batch,
    /// No body (GET, DELETE).
    None,
    /// A body that is not a JSON-RPC message.
    Unreadable,
}

/// The members of a request's `params` that the checks read. Everything else (a tool call's
/// `arguments`, often the bulk of the body) is skipped while parsing, never built as a tree.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Params {
    /// `params.name` (tools/call, prompts/get), when a string.
    pub name: Option<String>,
    /// `params.uri` (resources/read), when a string.
    pub uri: Option<String>,
    /// `params.protocolVersion` (initialize), when a string.
    pub protocol_version: Option<String>,
    /// `params._meta`, when an object.
    pub meta: Option<Map<String, Value>>,
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
                Key::Name => p.name = map.next_value::<Text>()?.0,
                Key::Uri => p.uri = map.next_value::<Text>()?.0,
                Key::ProtocolVersion => p.protocol_version = map.next_value::<Text>()?.0,
                Key::Meta => {
                    p.meta = match map.next_value::<Value>()? {
                        Value::Object(m) => Some(m),
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
#[derive(Default)]
struct Message {
    method: Option<String>,
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
                        Key::Method => m.method = map.next_value::<Text>()?.0,
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

/// The request facts the analyzer needs.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    /// HTTP method, upper-case.
    pub http_method: String,
    /// Request headers.
    pub headers: Headers,
    /// What the body is.
    pub kind: BodyKind,
    /// JSON-RPC method (first request of a batch).
    pub method: Option<String>,
    /// JSON-RPC id (first request of a batch; for a response POST, the id it answers).
    pub id: Option<Value>,
    /// Ids of every request in a batch (or the one id).
    pub ids: Vec<Value>,
    /// What `params` of the (first) request holds, as far as the checks read it.
    pub params: Option<Params>,
}

impl Request {
    /// Builds the request facts from what was sent. Never fails: a body that is not JSON-RPC is
    /// [`BodyKind::Unreadable`].
    pub fn new(http_method: &str, headers: Headers, body: &[u8]) -> Self {
        if body.iter().all(u8::is_ascii_whitespace) {
            return Request::empty(http_method, headers, BodyKind::None);
        }
        match serde_json::from_slice::<Body>(body) {
            Ok(parsed) => Request::from_body(http_method, headers, parsed),
            Err(_) => Request::empty(http_method, headers, BodyKind::Unreadable),
        }
    }

    /// Builds the request facts from a message already parsed (a client that holds the `Value`
    /// it sends need not serialize and parse it again).
    pub fn from_value(http_method: &str, headers: Headers, value: &Value) -> Self {
        match Body::deserialize(value) {
            Ok(parsed) => Request::from_body(http_method, headers, parsed),
            Err(_) => Request::empty(http_method, headers, BodyKind::Unreadable),
        }
    }

    fn from_body(http_method: &str, headers: Headers, body: Body) -> Self {
        let mut req = Request::empty(http_method, headers, BodyKind::Unreadable);
        match body {
            Body::Single(m) => {
                let answered = m.id.clone();
                req.kind = req.take_message(m);
                if req.kind == BodyKind::Response {
                    // The id of the server request this answers (links it to that request).
                    req.id = answered;
                }
            }
            Body::Batch(items) => {
                req.kind = BodyKind::Batch;
                for item in items.into_iter().flatten() {
                    let before = (req.method.clone(), req.id.clone(), req.params.clone());
                    let is_first_request = req.id.is_none();
                    if req.take_message(item) != BodyKind::Request || !is_first_request {
                        (req.method, req.id, req.params) = before;
                    }
                }
            }
            Body::Other => {}
        }
        req
    }

    fn empty(http_method: &str, headers: Headers, kind: BodyKind) -> Self {
        Request {
            http_method: http_method.to_ascii_uppercase(),
            headers,
            kind,
            method: None,
            id: None,
            ids: Vec::new(),
            params: None,
        }
    }

    /// Reads one message into the facts; returns its kind.
    fn take_message(&mut self, m: Message) -> BodyKind {
        match (m.method, m.id) {
            (Some(method), Some(id)) => {
                self.method = Some(method);
                self.ids.push(id.clone());
                self.id = Some(id);
                self.params = m.params;
                BodyKind::Request
            }
            (Some(method), None) => {
                self.method = Some(method);
                self.params = m.params;
                BodyKind::Notification
            }
            (None, _) if m.answer => BodyKind::Response,
            (None, _) => BodyKind::Unreadable,
        }
    }

    /// The body expects a response carrying a request id.
    pub fn expects_response(&self) -> bool {
        !self.ids.is_empty()
    }

    /// `params.name` of a `tools/call`.
    pub fn tool(&self) -> Option<&str> {
        if self.method.as_deref() != Some("tools/call") {
            return None;
        }
        self.param_str("name")
    }

    /// A string member of `params`: `name`, `uri` or `protocolVersion` (the ones the checks
    /// read; any other key gives `None`).
    pub fn param_str(&self, key: &str) -> Option<&str> {
        let p = self.params.as_ref()?;
        match key {
            "name" => p.name.as_deref(),
            "uri" => p.uri.as_deref(),
            "protocolVersion" => p.protocol_version.as_deref(),
            _ => None,
        }
    }

    /// A member of `params._meta`.
    pub fn meta(&self, key: &str) -> Option<&Value> {
        self.params.as_ref()?.meta.as_ref()?.get(key)
    }

    /// `params._meta.progressToken`.
    pub fn progress_token(&self) -> Option<&Value> {
        self.meta("progressToken")
    }

    /// The request is an MRTR follow-up (carries `inputResponses` or `requestState`).
    pub fn is_mrtr_follow_up(&self) -> bool {
        self.params.as_ref().is_some_and(|p| p.mrtr)
    }

    /// The session id header, if sent.
    pub fn session_id(&self) -> Option<&str> {
        self.headers.get("mcp-session-id")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds() {
        let r = Request::new(
            "post",
            Headers::new(),
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}"#,
        );
        assert_eq!(
            (r.kind, r.tool(), r.http_method.as_str()),
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
            (r.kind, r.ids.len(), r.method.as_deref()),
            (BodyKind::Batch, 2, Some("ping"))
        );
        let r = Request::new("GET", Headers::new(), b"");
        assert_eq!(r.kind, BodyKind::None);
        let r = Request::new("POST", Headers::new(), b"{oops");
        assert_eq!(r.kind, BodyKind::Unreadable);
    }
}
