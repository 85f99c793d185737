//! The request side of an exchange: HTTP method, headers, and the JSON-RPC message POSTed.
//!
//! Parsed once, owned, small: requests are a few hundred bytes, so this uses `serde_json::Value`.

use serde_json::Value;

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
    /// JSON-RPC id (first request of a batch).
    pub id: Option<Value>,
    /// Ids of every request in a batch (or the one id).
    pub ids: Vec<Value>,
    /// `params` of the (first) request.
    pub params: Option<Value>,
}

impl Request {
    /// Builds the request facts from what was sent. Never fails: a body that is not JSON-RPC is
    /// [`BodyKind::Unreadable`].
    pub fn new(http_method: &str, headers: Headers, body: &[u8]) -> Self {
        if body.iter().all(u8::is_ascii_whitespace) {
            return Request::empty(http_method, headers, BodyKind::None);
        }
        match serde_json::from_slice::<Value>(body) {
            Ok(value) => Request::from_value(http_method, headers, value),
            Err(_) => Request::empty(http_method, headers, BodyKind::Unreadable),
        }
    }

    /// Builds the request facts from a message already parsed (a client that holds the `Value`
    /// it sends need not serialize and parse it again).
    pub fn from_value(http_method: &str, headers: Headers, value: Value) -> Self {
        let mut req = Request::empty(http_method, headers, BodyKind::Unreadable);
        match value {
            Value::Object(_) => {
                req.kind = req.take_message(value);
            }
            Value::Array(items) => {
                req.kind = BodyKind::Batch;
                for item in items {
                    let before = (req.method.clone(), req.id.clone(), req.params.clone());
                    let is_first_request = req.id.is_none();
                    if req.take_message(item) != BodyKind::Request || !is_first_request {
                        (req.method, req.id, req.params) = before;
                    }
                }
            }
            _ => {}
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

    /// Reads one message object into the facts; returns its kind.
    fn take_message(&mut self, value: Value) -> BodyKind {
        let Value::Object(mut map) = value else {
            return BodyKind::Unreadable;
        };
        let method = map.get("method").and_then(Value::as_str).map(str::to_owned);
        let id = map.remove("id").filter(|id| !id.is_null());
        match (method, id) {
            (Some(m), Some(id)) => {
                self.method = Some(m);
                self.ids.push(id.clone());
                self.id = Some(id);
                self.params = map.remove("params");
                BodyKind::Request
            }
            (Some(m), None) => {
                self.method = Some(m);
                self.params = map.remove("params");
                BodyKind::Notification
            }
            (None, _) if map.contains_key("result") || map.contains_key("error") => {
                BodyKind::Response
            }
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

    /// A string member of `params`.
    pub fn param_str(&self, key: &str) -> Option<&str> {
        self.params.as_ref()?.get(key)?.as_str()
    }

    /// A member of `params._meta`.
    pub fn meta(&self, key: &str) -> Option<&Value> {
        self.params.as_ref()?.get("_meta")?.get(key)
    }

    /// `params._meta.progressToken`.
    pub fn progress_token(&self) -> Option<&Value> {
        self.meta("progressToken")
    }

    /// The request is an MRTR follow-up (carries `inputResponses` or `requestState`).
    pub fn is_mrtr_follow_up(&self) -> bool {
        self.params
            .as_ref()
            .is_some_and(|p| p.get("inputResponses").is_some() || p.get("requestState").is_some())
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
