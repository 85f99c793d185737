//! What a message, a request body and an exchange are: the kinds every layer names. Reading
//! them off a request is behaviour and lives with it ([`ExchangeKind::of`] in `request.rs`,
//! [`MessageKind`] from an envelope in `jsonrpc.rs`), so that this file imports nothing.

wire_names! {
    /// What one entry is, from the client's side. One table, so that verdicts, calls, the docs
    /// and `mcp-verdict rules` use the same words.
    pub enum ExchangeKind {
        /// A POSTed JSON-RPC request (or a batch holding one).
        Request => ("request", "a POSTed JSON-RPC request (or one row of a batch)"),
        /// A POSTed notification.
        Notification => ("notification", "a POSTed notification"),
        /// A POSTed response: the client's answer to a server request.
        Response => (
            "response",
            "a POSTed response: the client's answer to a server request"
        ),
        /// A standalone `GET` stream for server messages.
        Listen => (
            "listen",
            "a GET without Last-Event-ID: the standalone server stream"
        ),
        /// A `GET` with `Last-Event-ID`: resumes an earlier stream.
        Resume => ("resume", "a GET with Last-Event-ID: resumes an earlier stream"),
        /// A `DELETE` ending the session.
        Terminate => ("terminate", "a DELETE of the session"),
    }
}

impl ExchangeKind {
    /// A `GET` or `DELETE`: no JSON-RPC body of its own.
    pub fn is_session_entry(self) -> bool {
        matches!(
            self,
            ExchangeKind::Listen | ExchangeKind::Resume | ExchangeKind::Terminate
        )
    }
}

/// What a message is, by the JSON-RPC rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MessageKind {
    /// `method` and `id`.
    Request,
    /// `method`, no `id`.
    Notification,
    /// No `method`: a result or error response (valid or not).
    Response,
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

/// A `tools/call` request as the SDKs write it, whose shape is known without the full check:
/// `jsonrpc` `"2.0"` (first, or anywhere), an integer or string `id`, one `params` of `name`
/// (a string), `arguments` (an object) and `_meta`, and no other member. `_meta` holds a
/// `progressToken` (a string or an integer) and nothing else, or the three members a
/// 2026-07-28 client sends (`io.modelcontextprotocol/protocolVersion`, a string;
/// `…/clientInfo`, exactly `name` and `version`, strings; `…/clientCapabilities`, exactly `{}`)
/// with or without `progressToken`. On the 2025 revisions it has no shape problem; on
/// 2026-07-28 one without the three lacks the required `_meta` members, one with them has none
/// (see `shapes::plain_call_problems`). It may say "check"
/// where the check would agree, never "plain" where the check says otherwise
/// (`request.rs`, `a_plain_call_has_the_shape_problems_the_check_finds`). A hint of how the text was
/// read, not a fact of the request: it never makes two readings differ.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct PlainCall {
    /// The message is a plain call.
    pub(crate) plain: bool,
    /// Its `params` has `_meta`.
    pub(crate) meta: bool,
    /// That `_meta` has the three 2026-07-28 client members (see above).
    pub(crate) client_meta: bool,
}

impl PartialEq for PlainCall {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}
