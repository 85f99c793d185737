//! The verdict: what one exchange came to, at which layer, and what to do next.
//!
//! The JSON form (serde) is a public contract: field names do not change, and fields that do not
//! apply are `null`, never absent.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::lifecycle::{ExchangeKind, ServerRequest};
use crate::limits::LimitKind;
use crate::rules::Rule;
use crate::version::{ProtocolVersion, VersionSource};

/// What one exchange came to. Judged in order: transport, stream, envelope, result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Outcome {
    /// Any non-2xx status, decided before the body (even a success-looking one).
    HttpError,
    /// No response head: refused, reset before the head, DNS or TLS failure.
    ConnectionFailed,
    /// 2xx to a request with neither `application/json` nor `text/event-stream`.
    UnexpectedContentType,
    /// 202 to a notification or response POST: correct, and not a tool call.
    NotificationAccepted,
    /// 202/204 to a request: the answer was promised elsewhere or never.
    UnexpectedAccepted,
    /// The SSE stream ended (EOF or reset) without a response for the request id.
    StreamAborted,
    /// The capture ended with the stream still open and no terminal response: unknown.
    StreamOpen,
    /// The capture kept the response head but not the body (no `content.text`): unknown.
    NotCaptured,
    /// The client stopped waiting (deadline); on 2026-07-28 the close is a cancel.
    TimedOut,
    /// The client closed the stream before the answer (on 2026-07-28 that is the cancel).
    Cancelled,
    /// A configured limit (event size, body size, event count) was hit.
    LimitExceeded,
    /// Empty, unparseable, or trailing bytes after the JSON value.
    MalformedJson,
    /// Not a valid JSON-RPC response to this request.
    InvalidEnvelope,
    /// A JSON-RPC error response: a complete answer.
    JsonrpcError,
    /// A `tools/call` result that breaks the `CallToolResult` schema.
    InvalidToolResult,
    /// `resultType: "input_required"` (MRTR): the exchange is done, the operation is not.
    InputRequired,
    /// A task was created (`resultType: "task"`, or a 2025-11-25 `CreateTaskResult`).
    Deferred,
    /// `isError: true`: the tool ran and reported failure.
    ToolError,
    /// A `tools/call` result with `isError` false or absent.
    ToolSuccess,
    /// Any other request completed with a result.
    Success,
    /// A standalone `GET` stream (listen or unlinked resume) was opened and carried what it may.
    Listening,
    /// `DELETE` of the session was accepted (2xx).
    SessionTerminated,
    /// 405 to a `GET` or `DELETE`: the server offers no such stream or termination (allowed).
    MethodNotAllowed,
}

impl Outcome {
    /// Every outcome, in judging order.
    pub const ALL: [Outcome; 23] = [
        Outcome::HttpError,
        Outcome::ConnectionFailed,
        Outcome::UnexpectedContentType,
        Outcome::NotificationAccepted,
        Outcome::UnexpectedAccepted,
        Outcome::StreamAborted,
        Outcome::StreamOpen,
        Outcome::NotCaptured,
        Outcome::TimedOut,
        Outcome::Cancelled,
        Outcome::LimitExceeded,
        Outcome::MalformedJson,
        Outcome::InvalidEnvelope,
        Outcome::JsonrpcError,
        Outcome::InvalidToolResult,
        Outcome::InputRequired,
        Outcome::Deferred,
        Outcome::ToolError,
        Outcome::ToolSuccess,
        Outcome::Success,
        Outcome::Listening,
        Outcome::SessionTerminated,
        Outcome::MethodNotAllowed,
    ];

    /// The layer this outcome belongs to.
    pub fn layer(self) -> Layer {
        use Outcome::*;
        match self {
            HttpError
            | ConnectionFailed
            | UnexpectedContentType
            | NotificationAccepted
            | UnexpectedAccepted
            | SessionTerminated
            | MethodNotAllowed => Layer::Transport,
            StreamAborted | StreamOpen | NotCaptured | TimedOut | Cancelled | LimitExceeded
            | Listening => Layer::Stream,
            MalformedJson | InvalidEnvelope | JsonrpcError | InvalidToolResult => Layer::Protocol,
            InputRequired | Deferred => Layer::Interaction,
            ToolError | ToolSuccess | Success => Layer::Application,
        }
    }

    /// Whether the reply is a complete answer (a tool or JSON-RPC error is one).
    pub fn is_complete(self) -> bool {
        use Outcome::*;
        matches!(
            self,
            NotificationAccepted
                | JsonrpcError
                | InputRequired
                | Deferred
                | ToolError
                | ToolSuccess
                | Success
                | Listening
                | SessionTerminated
                | MethodNotAllowed
        )
    }

    /// One line: when the outcome is given (for `mcp-verdict rules`).
    pub fn summary(self) -> &'static str {
        use Outcome::*;
        match self {
            HttpError => "any non-2xx status, decided before the body",
            ConnectionFailed => "no response head",
            UnexpectedContentType => "2xx to a request (or GET) with neither JSON nor SSE",
            NotificationAccepted => "202 to a notification or response POST",
            UnexpectedAccepted => "202/204 to a request",
            StreamAborted => "the SSE stream ended without the response",
            StreamOpen => "the capture ended with the stream open: unknown",
            NotCaptured => "the capture kept the head but not the body: unknown",
            TimedOut => "the client gave up waiting",
            Cancelled => "the client closed the stream on purpose",
            LimitExceeded => "a configured limit was hit",
            MalformedJson => "empty, unparseable, or trailing bytes",
            InvalidEnvelope => "not a valid JSON-RPC response to this request",
            JsonrpcError => "a JSON-RPC error response",
            InvalidToolResult => "a tools/call result that breaks CallToolResult",
            InputRequired => "MRTR: resubmit with input",
            Deferred => "a task was created",
            ToolError => "isError: true",
            ToolSuccess => "a tools/call result",
            Success => "any other request completed with a result",
            Listening => "a listen (or unlinked resume) GET got its SSE stream",
            SessionTerminated => "2xx to a DELETE of the session",
            MethodNotAllowed => "405 to a GET or DELETE (allowed)",
        }
    }

    /// The wire name, e.g. `TOOL_SUCCESS`.
    pub fn as_str(self) -> &'static str {
        use Outcome::*;
        match self {
            HttpError => "HTTP_ERROR",
            ConnectionFailed => "CONNECTION_FAILED",
            UnexpectedContentType => "UNEXPECTED_CONTENT_TYPE",
            NotificationAccepted => "NOTIFICATION_ACCEPTED",
            UnexpectedAccepted => "UNEXPECTED_ACCEPTED",
            StreamAborted => "STREAM_ABORTED",
            StreamOpen => "STREAM_OPEN",
            NotCaptured => "NOT_CAPTURED",
            TimedOut => "TIMED_OUT",
            Cancelled => "CANCELLED",
            LimitExceeded => "LIMIT_EXCEEDED",
            MalformedJson => "MALFORMED_JSON",
            InvalidEnvelope => "INVALID_ENVELOPE",
            JsonrpcError => "JSONRPC_ERROR",
            InvalidToolResult => "INVALID_TOOL_RESULT",
            InputRequired => "INPUT_REQUIRED",
            Deferred => "DEFERRED",
            ToolError => "TOOL_ERROR",
            ToolSuccess => "TOOL_SUCCESS",
            Success => "SUCCESS",
            Listening => "LISTENING",
            SessionTerminated => "SESSION_TERMINATED",
            MethodNotAllowed => "METHOD_NOT_ALLOWED",
        }
    }
}

impl std::fmt::Display for Outcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where an exchange failed (or, for a complete answer, which layer gave it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Layer {
    /// HTTP status, content type, connection.
    Transport,
    /// SSE stream completeness.
    Stream,
    /// JSON and the JSON-RPC envelope, result schema.
    Protocol,
    /// MRTR and tasks: the server needs more from the client.
    Interaction,
    /// The tool or method itself.
    Application,
}

impl Layer {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Layer::Transport => "transport",
            Layer::Stream => "stream",
            Layer::Protocol => "protocol",
            Layer::Interaction => "interaction",
            Layer::Application => "application",
        }
    }
}

/// How the response body ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum End {
    /// Clean end of body.
    Eof,
    /// The transfer broke (reset, truncated chunked encoding, I/O error).
    Reset,
    /// Still open when observation stopped (a capture cut short, or a live reader that stopped
    /// once the answer was complete).
    Open,
    /// The client gave up waiting (deadline) and closed the stream.
    Timeout,
    /// The client closed the stream on purpose.
    Cancelled,
    /// A capture kept the response head but not the body: how it ended is unknown.
    NotCaptured,
}

/// What a client should do next. Separate from the outcome: a failure may or may not be safe to
/// send again, depending on whether it may already have taken effect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Advice {
    /// Nothing to retry: the answer is complete (or unknown, for an open capture).
    None,
    /// Safe to send again as a new request.
    Retry,
    /// It may already have taken effect; do not send it again blindly.
    DoNotRetry,
    /// Resume the stream: GET with `Last-Event-ID`.
    Resume,
    /// MRTR: send a new request with `inputResponses` / `requestState`.
    ResubmitWithInput,
    /// The 2025 session is gone: initialize again before anything else.
    Reinitialize,
    /// Rejected before dispatch: change the request (headers, version, `_meta`, auth).
    FixRequest,
}

impl Advice {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Advice::None => "none",
            Advice::Retry => "retry",
            Advice::DoNotRetry => "do_not_retry",
            Advice::Resume => "resume",
            Advice::ResubmitWithInput => "resubmit_with_input",
            Advice::Reinitialize => "reinitialize",
            Advice::FixRequest => "fix_request",
        }
    }
}

/// Retry advice with its delay and reason.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RetryAdvice {
    /// What to do.
    pub advice: Advice,
    /// How long to wait first (from `Retry-After` or the SSE `retry` field), if the server said.
    pub after_ms: Option<u64>,
    /// Why, in one sentence.
    pub reason: String,
}

/// Requirement level of a broken rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// MUST / MUST NOT.
    Must,
    /// SHOULD / SHOULD NOT (or a portability hazard with real clients).
    Should,
}

/// Where in the response a violation was seen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Location {
    /// Byte offset in the response body.
    pub offset: u64,
    /// SSE dispatch index, when the violation is about an event.
    pub event: Option<u64>,
}

/// A broken spec rule, with evidence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Violation {
    /// The rule; serialized as its stable id, e.g. `sse.foreign_id_response`.
    pub rule: Rule,
    /// MUST or SHOULD.
    pub level: Level,
    /// What was seen.
    pub detail: String,
    /// Where, if it is about the response body.
    pub at: Option<Location>,
}

impl Violation {
    pub(crate) fn new(rule: Rule, detail: impl Into<String>, at: Option<Location>) -> Self {
        Violation {
            rule,
            level: rule.level(),
            detail: detail.into(),
            at,
        }
    }
}

/// An SSE event left without its closing blank line when the body ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Unterminated {
    /// Bytes from the event's first line to the end of the body.
    pub bytes: u64,
    /// Its data parses as the response to this request: the answer was there but never finished.
    pub looked_final: bool,
}

/// The verdict for one exchange. See the crate docs for how each field is decided.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[must_use]
pub struct Verdict {
    /// 0-based position of the entry in the capture (or the exchange number, live).
    pub index: u64,
    /// HTTP method of the entry: `POST`, `GET` or `DELETE`.
    pub http_method: Option<String>,
    /// What the entry is: request, notification, response, listen, resume or terminate.
    pub kind: Option<ExchangeKind>,
    /// 2025-03-26 batch: 0-based position of this request among the batch's requests.
    pub batch_position: Option<u32>,
    /// JSON-RPC method of the request.
    pub method: Option<String>,
    /// JSON-RPC id of the request; for a response POST, the id of the server request it answers.
    pub id: Option<Value>,
    /// `params.name` of a `tools/call`.
    pub tool: Option<String>,
    /// The protocol version whose rules were applied.
    pub protocol_version: ProtocolVersion,
    /// Which rule decided the version.
    pub protocol_version_source: VersionSource,
    /// What the exchange came to.
    pub outcome: Outcome,
    /// Where it failed, or which layer answered.
    pub layer: Layer,
    /// The reply is a complete answer to the request.
    pub complete: bool,
    /// HTTP status.
    pub status: Option<u16>,
    /// Response media type, lowercased, without parameters.
    pub content_type: Option<String>,
    /// JSON-RPC error code (kept for HTTP errors whose body is a JSON-RPC error).
    pub error_code: Option<i64>,
    /// JSON-RPC error message.
    pub error_message: Option<String>,
    /// `result.resultType` as sent.
    pub result_type: Option<String>,
    /// SSE: dispatched events with non-empty data (terminal included).
    pub event_count: Option<u64>,
    /// SSE on 2025-x: the last event id, for `Last-Event-ID`.
    pub last_event_id: Option<String>,
    /// The stream can be resumed with GET and `Last-Event-ID`.
    pub resumable: bool,
    /// How the body ended.
    pub end: End,
    /// What to do next.
    pub retry: RetryAdvice,
    /// Broken rules, in the order seen.
    pub violations: Vec<Violation>,
    /// SSE: an event cut off at the end of the body.
    pub unterminated: Option<Unterminated>,
    /// Which limit was hit, for `LIMIT_EXCEEDED`; serialized as the limit's name, e.g.
    /// `max_event_bytes`.
    pub limit: Option<LimitKind>,
    /// Requests the server sent on this exchange's SSE stream (method and id), in order.
    pub server_requests: Vec<ServerRequest>,
}

impl Verdict {
    /// Whether a rule with this id was broken.
    pub fn has_violation(&self, rule: &str) -> bool {
        self.violations.iter().any(|v| v.rule == rule)
    }

    /// Whether `rule` was broken.
    pub fn breaks(&self, rule: Rule) -> bool {
        self.violations.iter().any(|v| v.rule == rule)
    }
}
