//! The verdict: what one exchange came to, at which layer, and what to do next.
//!
//! The JSON form (serde) is a public contract, documented here next to the types (see
//! [`Verdict`]): field names do not change, and fields that do not apply are `null`, never absent.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use smol_str::SmolStr;

use super::kinds::ExchangeKind;
use super::limits::LimitKind;
/// A violation's level, reachable with the verdict's other words (it is the rule catalogue's).
pub use super::rules::Level;
use super::rules::Rule;
use super::task::TaskStatus;
use super::version::{ProtocolVersion, VersionSource};

/// The outcome table: each outcome once, with its wire name, its layer, whether it is a complete
/// answer, its one-line summary (for `mcp-verdict rules`), and its description. Order is judging
/// order: transport, stream, envelope, result.
macro_rules! outcomes {
    ($($(#[doc = $doc:literal])* $variant:ident => $wire:literal, $layer:ident, $complete:literal, $summary:literal;)*) => {
        wire_names! {
            /// What one exchange came to. Judged in order: transport, stream, envelope, result.
            ///
            /// Serialized as its wire name in `SCREAMING_SNAKE_CASE` (`"TOOL_SUCCESS"`); each
            /// outcome belongs to exactly one [`Layer`] and is or is not a complete answer
            /// ([`Outcome::is_complete`]). The names are stable; new outcomes may be added.
            #[derive(PartialOrd, Ord)]
            pub enum Outcome { $($(#[doc = $doc])* $variant => $wire,)* }
        }

        impl Outcome {
            /// The layer this outcome belongs to.
            pub fn layer(self) -> Layer {
                match self { $(Outcome::$variant => Layer::$layer,)* }
            }

            /// Whether the reply is a complete answer (a tool or JSON-RPC error is one).
            pub fn is_complete(self) -> bool {
                match self { $(Outcome::$variant => $complete,)* }
            }

            /// One line: when the outcome is given (for `mcp-verdict rules`).
            pub fn summary(self) -> &'static str {
                match self { $(Outcome::$variant => $summary,)* }
            }
        }
    };
}

outcomes! {
    /// Any non-2xx status, decided before the body (even a success-looking one). Its layer is
    /// `transport`, but a verdict's [`Verdict::layer`] is `auth` for a 401, or a 403 with a
    /// challenge.
    HttpError => "HTTP_ERROR", Transport, false, "any non-2xx status, decided before the body";
    /// No response head: refused, reset before the head, DNS or TLS failure (in a HAR capture, an
    /// entry with `_error` and status 0).
    ConnectionFailed => "CONNECTION_FAILED", Transport, false, "no response head";
    /// 2xx to a request with neither `application/json` nor `text/event-stream`.
    UnexpectedContentType => "UNEXPECTED_CONTENT_TYPE", Transport, false,
        "2xx to a request (or GET) with neither JSON nor SSE";
    /// 202 (or any 2xx with an empty body) to a notification or response POST: correct, and not
    /// a tool call.
    NotificationAccepted => "NOTIFICATION_ACCEPTED", Transport, true,
        "202 to a notification or response POST";
    /// 202/204 to a request: the answer was promised elsewhere or never.
    UnexpectedAccepted => "UNEXPECTED_ACCEPTED", Transport, false, "202/204 to a request";
    /// The SSE stream ended (EOF or reset) without a response for the request id. (Notifications
    /// never complete a request; at the end without our response the outcome is `MALFORMED_JSON`
    /// if an event failed to parse, else `INVALID_ENVELOPE` if only foreign-id responses came.)
    StreamAborted => "STREAM_ABORTED", Stream, false, "the SSE stream ended without the response";
    /// The capture ended with the stream still open and no terminal response: unknown.
    StreamOpen => "STREAM_OPEN", Stream, false, "the capture ended with the stream open: unknown";
    /// The capture kept the response head but not the body (no `content.text`): unknown.
    NotCaptured => "NOT_CAPTURED", Stream, false,
        "the capture kept the head but not the body: unknown";
    /// The client stopped waiting (deadline); on 2026-07-28 the close is a cancel.
    TimedOut => "TIMED_OUT", Stream, false, "the client gave up waiting";
    /// The client closed the stream before the answer (on 2026-07-28 that is the cancel). Also
    /// the outcome of a call whose task ended `cancelled` (never a single exchange's for that).
    Cancelled => "CANCELLED", Stream, false, "the client closed the stream on purpose";
    /// A configured limit (event size, body size, event count) was hit; [`Verdict::limit`] says
    /// which. Layer `stream` also for the JSON body-size limit.
    LimitExceeded => "LIMIT_EXCEEDED", Stream, false, "a configured limit was hit";
    /// Empty, unparseable, or trailing bytes after the JSON value.
    MalformedJson => "MALFORMED_JSON", Protocol, false, "empty, unparseable, or trailing bytes";
    /// Not a valid JSON-RPC response to this request: `jsonrpc` not `"2.0"`, an id that differs in
    /// value or type, result and error both or neither, a bad error object, a JSON array on
    /// 2025-06-18 or later, a non-tools result that is not an object.
    InvalidEnvelope => "INVALID_ENVELOPE", Protocol, false,
        "not a valid JSON-RPC response to this request";
    /// A JSON-RPC error response: a complete answer.
    JsonrpcError => "JSONRPC_ERROR", Protocol, true, "a JSON-RPC error response";
    /// A `tools/call` result that breaks the `CallToolResult` schema: not an object, `content` not
    /// an array, `isError` not a boolean, or an unknown `resultType`. (A `structuredContent` of the
    /// wrong type is a violation only; the outcome stays `TOOL_SUCCESS`/`TOOL_ERROR`.)
    InvalidToolResult => "INVALID_TOOL_RESULT", Protocol, false,
        "a tools/call result that breaks CallToolResult";
    /// `resultType: "input_required"` (MRTR): the exchange is done, the operation is not.
    InputRequired => "INPUT_REQUIRED", Interaction, true, "MRTR: resubmit with input";
    /// A task was created (`resultType: "task"`, or a 2025-11-25 `CreateTaskResult`): the
    /// exchange is done, the operation is not (poll `tasks/get`). A call whose task is still
    /// `working` or `input_required` when the capture ends keeps this outcome, incomplete.
    Deferred => "DEFERRED", Interaction, true, "a task was created";
    /// `isError: true`: the tool ran and reported failure.
    ToolError => "TOOL_ERROR", Application, true, "isError: true";
    /// A `tools/call` result with `isError` false or absent. An absent `resultType` means
    /// complete (on 2026-07-28 it is also the violation `result.type_missing`).
    ToolSuccess => "TOOL_SUCCESS", Application, true, "a tools/call result";
    /// Any other request completed with a result.
    Success => "SUCCESS", Application, true, "any other request completed with a result";
    /// A standalone `GET` stream (listen or unlinked resume) was opened and carried what it may.
    Listening => "LISTENING", Stream, true, "a listen (or unlinked resume) GET got its SSE stream";
    /// `DELETE` of the session was accepted (2xx).
    SessionTerminated => "SESSION_TERMINATED", Transport, true, "2xx to a DELETE of the session";
    /// 405 to a `GET` or `DELETE`: the server offers no such stream or termination (allowed).
    MethodNotAllowed => "METHOD_NOT_ALLOWED", Transport, true, "405 to a GET or DELETE (allowed)";
}

wire_names! {
    /// Where an exchange failed (or, for a complete answer, which layer gave it).
    pub enum Layer {
        /// HTTP status, content type, connection.
        Transport => "transport",
        /// SSE stream completeness.
        Stream => "stream",
        /// JSON and the JSON-RPC envelope, result schema.
        Protocol => "protocol",
        /// MRTR and tasks: the server needs more from the client.
        Interaction => "interaction",
        /// The tool or method itself.
        Application => "application",
        /// Authorization: a 401, or a 403 with a `WWW-Authenticate` challenge (outcome
        /// `HTTP_ERROR`; a 403 without one, e.g. for a bad `Origin`, stays `transport`).
        Auth => "auth",
    }
}

wire_names! {
    /// How the response body ended. In a HAR capture, the entry's `_mcp_end` member gives it
    /// (one of these names); without one a body is `eof`, and an entry with `_error` is `reset`.
    pub enum End {
        /// Clean end of body.
        Eof => "eof",
        /// The transfer broke (reset, truncated chunked encoding, I/O error).
        Reset => "reset",
        /// Still open when observation stopped (a capture cut short, or a live reader that stopped
        /// once the answer was complete).
        Open => "open",
        /// The client gave up waiting (deadline) and closed the stream.
        Timeout => "timeout",
        /// The client closed the stream on purpose.
        Cancelled => "cancelled",
        /// A capture kept the response head but not the body (no `content.text`): how it ended
        /// is unknown.
        NotCaptured => "not_captured",
    }
}

wire_names! {
    /// What a client should do next. Separate from the outcome: a failure may or may not be safe
    /// to send again, depending on whether it may already have taken effect.
    pub enum Advice {
        /// Nothing to retry: a complete answer (success, `TOOL_ERROR`, `JSONRPC_ERROR` other than
        /// -32020..=-32023, `NOTIFICATION_ACCEPTED`), or unknown (`STREAM_OPEN`).
        None => "none",
        /// Safe to send again as a new request: 429, or RateLimited -32023 at any status (from
        /// 2026-07-28 on; `after_ms` from its `data.retryAfterMs`, else `Retry-After`), both
        /// rejected before dispatch, always; or a failure that may have run the call when the
        /// call is safe to repeat. A call is safe when
        /// it is not `tools/call`, or when the tool's annotations seen earlier in the same session
        /// (a `tools/list` result) say `readOnlyHint` or `idempotentHint`; unknown tools are not.
        Retry => "retry",
        /// It may already have taken effect (5xx, 408, `STREAM_ABORTED` not resumable,
        /// `UNEXPECTED_CONTENT_TYPE`, `UNEXPECTED_ACCEPTED`, `MALFORMED_JSON`, `INVALID_ENVELOPE`,
        /// `INVALID_TOOL_RESULT`, `CONNECTION_FAILED`, `TIMED_OUT`) on a call not known to be safe;
        /// also `LIMIT_EXCEEDED`, since the same reply would exceed the limit again.
        DoNotRetry => "do_not_retry",
        /// Resume the stream: GET with `Last-Event-ID` (2025-x, an event id was seen), after the
        /// SSE `retry` delay if one was sent.
        Resume => "resume",
        /// `INPUT_REQUIRED` (MRTR): send a new request (new id) with `inputResponses` /
        /// `requestState`.
        ResubmitWithInput => "resubmit_with_input",
        /// The 2025 session is gone (404 to a request that carried `Mcp-Session-Id`): initialize
        /// again before anything else.
        Reinitialize => "reinitialize",
        /// Rejected before dispatch: change the request (headers, version, `_meta`). HTTP
        /// 4xx other than 404-with-session, 408, 429 and the auth layer's 401/403 (on 2026-07-28 a 404 with a leftover
        /// session id too), and JSON-RPC -32020/-32021/-32022 at any status.
        FixRequest => "fix_request",
        /// The auth layer refused the request (401, or 403 with a challenge): it was not run,
        /// so sending it again after re-authorizing (a new or refreshed token, or the scope the
        /// challenge names) is safe.
        Reauthenticate => "reauthenticate",
        /// `DEFERRED`: the call became a task. Never send it again: poll `tasks/get` with its
        /// `taskId` until the task is terminal, waiting the task's `pollIntervalMs` (`after_ms`)
        /// between polls.
        Poll => "poll",
    }
}

wire_names! {
    /// Which box made the HTTP status: the MCP server, or an intermediary (gateway, load
    /// balancer, CDN) on the path. Decided from evidence only (`origin_reason` names it);
    /// absent evidence, `server`.
    pub enum StatusOrigin {
        /// The server's own status (or no evidence of anyone else's).
        Server => "server",
        /// A box between client and server made it: its own error page, a gateway status
        /// without the server's JSON-RPC body, a CDN's 52x.
        Intermediary => "intermediary",
    }
}

/// Retry advice with its delay and reason: `{"advice", "after_ms", "reason"}` in JSON.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RetryAdvice {
    /// What to do.
    pub advice: Advice,
    /// How long to wait first, if the server said: `Retry-After` (seconds, or an HTTP date relative
    /// to the response's `Date`) for 429 and 503, the SSE `retry` field for `resume`, the task's
    /// polling interval for `poll`. `null` when it did not say (a 429 without `Retry-After`
    /// included).
    pub after_ms: Option<u64>,
    /// Why, in one sentence. Fixed text for most outcomes (no allocation per verdict).
    pub reason: Cow<'static, str>,
}

/// Where in the response a violation was seen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Location {
    /// Byte offset in the response body.
    pub offset: u64,
    /// SSE dispatch index, when the violation is about an event.
    pub event: Option<u64>,
}

/// A broken spec rule, with evidence: `{"rule", "level", "detail", "at"}` in JSON.
///
/// The rules are the catalogue [`Rule`] (`mcp-verdict rules` lists ids, levels and summaries).
/// Request-side rules (`request.*`) are checked only when the request's headers are known (a
/// capture that left them out is not blamed for them).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Violation {
    /// The rule; serialized as its stable id, e.g. `sse.foreign_id_response`.
    pub rule: Rule,
    /// MUST or SHOULD.
    pub level: Level,
    /// What was seen.
    pub detail: String,
    /// Where, if it is about the response body: `{"offset", "event"}`, else `null`.
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

/// A JSON-RPC request the server sent on a stream (elicitation, sampling, roots, ping).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerRequest {
    /// Its method.
    pub method: String,
    /// Its id: the client's response POST must carry the same.
    pub id: Value,
}

/// An SSE event left without its closing blank line when the body ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Unterminated {
    /// Bytes from the event's first line to the end of the body.
    pub bytes: u64,
    /// Its data parses as the response to this request: the answer was there but never finished.
    pub looked_final: bool,
}

/// The verdict for one exchange: the output contract of the library and of the CLI's
/// `--format json` / `jsonl`.
///
/// Serialized with serde as one JSON object whose members are the fields below, in this order,
/// under these names. The names and the meaning of each value are stable; new members may be
/// added. A member that does not apply is `null`, never absent. Enumerated values are the wire
/// names of [`Outcome`], [`Layer`], [`End`], [`Advice`], [`Level`], [`Rule`], [`LimitKind`],
/// [`ExchangeKind`], [`ProtocolVersion`], [`VersionSource`], [`StatusOrigin`] and
/// [`TaskStatus`]. (One field, [`Verdict::task`], is for the call grouping and not serialized.)
///
/// ```json
/// {
///   "index": 1, "http_method": "POST", "kind": "request", "batch_position": null,
///   "method": "tools/call", "id": 2, "tool": "get_weather",
///   "protocol_version": "2026-07-28", "protocol_version_source": "header",
///   "outcome": "TOOL_ERROR", "layer": "application", "complete": true,
///   "status": 200, "content_type": "text/event-stream",
///   "error_code": null, "error_message": null, "result_type": "complete",
///   "event_count": 2, "last_event_id": null, "resumable": false, "end": "eof",
///   "retry": {"advice": "none", "after_ms": null, "reason": "the tool ran and reported an error; show it to the model rather than resend"},
///   "violations": [], "unterminated": null, "limit": null, "server_requests": [],
///   "status_origin": "server", "origin_reason": "a success status: the server's answer",
///   "client_error": null, "task_status": null
/// }
/// ```
///
/// Every member, always present (this example runs as a test):
///
/// ```
/// # use mcp_verdict::{End, Headers, Request, ResponseHead, Session};
/// # let mut session = Session::default();
/// # let body = br#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get_weather"}}"#;
/// # let mut exchange = session.begin(Request::new("POST", Headers::new(), body));
/// # let headers = Headers::from_iter([("Content-Type", "application/json")]);
/// # exchange.on_head(ResponseHead { status: 200, headers });
/// # exchange.feed(br#"{"jsonrpc":"2.0","id":2,"result":{"content":[],"isError":true}}"#);
/// let verdict = session.finish(&mut exchange, End::Eof);
/// let json = serde_json::to_value(&verdict).unwrap();
/// let mut names: Vec<&str> = json.as_object().unwrap().keys().map(String::as_str).collect();
/// let mut members = [
///     "index", "http_method", "kind", "batch_position", "method", "id", "tool",
///     "protocol_version", "protocol_version_source", "outcome", "layer", "complete", "status",
///     "content_type", "error_code", "error_message", "result_type", "event_count",
///     "last_event_id", "resumable", "end", "retry", "violations", "unterminated", "limit",
///     "server_requests", "status_origin", "origin_reason", "client_error", "task_status",
/// ];
/// names.sort();
/// members.sort();
/// assert_eq!(names, members);
/// assert_eq!(json["outcome"], "TOOL_ERROR");
/// assert_eq!(json["event_count"], serde_json::Value::Null); // not SSE: null, never absent
/// ```
///
/// One verdict per exchange: one HTTP POST carrying JSON-RPC, a `GET` (a standalone stream, or
/// one resuming an earlier stream) or a `DELETE` of the session. Outcomes are judged in order
/// (transport, stream, envelope, result), so `outcome` names the first layer that failed, or the
/// layer that answered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[must_use]
pub struct Verdict {
    /// 0-based position of the entry in the capture (skipped non-MCP entries still use up an
    /// index), or the exchange number, live.
    pub index: u64,
    /// HTTP method of the entry: `POST`, `GET` or `DELETE`. Set on every verdict this crate
    /// makes; `null` is kept for records from elsewhere.
    pub http_method: Option<Cow<'static, str>>,
    /// What the entry is: [`ExchangeKind`] (`request`, `notification`, `response`, `listen`,
    /// `resume`, `terminate`). Set on every verdict this crate makes; `null` is kept for records
    /// from elsewhere.
    pub kind: Option<ExchangeKind>,
    /// 2025-03-26 batch: 0-based position of this request among the batch's requests (one
    /// verdict per request id). `null` when the body is not a batch.
    pub batch_position: Option<u32>,
    /// JSON-RPC method of the request (of the first request, for a 2025-03-26 batch). `null`
    /// for `GET`/`DELETE` (except a resumption judged as the answer to its POST) and for a
    /// response POST.
    pub method: Option<Cow<'static, str>>,
    /// JSON-RPC id of the request; for a response POST, the id of the server request it answers.
    /// `null` for notifications, `GET` and `DELETE`.
    pub id: Option<Value>,
    /// `params.name` of a `tools/call`; `null` for any other method.
    pub tool: Option<SmolStr>,
    /// The protocol version whose rules were applied.
    pub protocol_version: ProtocolVersion,
    /// Which rule decided the version: the request's header, its `_meta`, an `initialize`
    /// (this one or an earlier one), an earlier exchange, or the 2025-03-26 default.
    pub protocol_version_source: VersionSource,
    /// What the exchange came to.
    pub outcome: Outcome,
    /// Where it failed, or which layer answered: the outcome's layer, except `auth` for an
    /// `HTTP_ERROR` that is a 401, or a 403 with a `WWW-Authenticate` challenge.
    pub layer: Layer,
    /// The reply is a complete answer to the request.
    pub complete: bool,
    /// HTTP status; `null` when there was no response head.
    pub status: Option<u16>,
    /// Response media type, lowercased, without parameters; `null` when there was no head or
    /// no `Content-Type`.
    pub content_type: Option<Cow<'static, str>>,
    /// JSON-RPC error code (kept for HTTP errors whose body is a JSON-RPC error). `null` when the
    /// reply is not ours (another id), except an id-less error, which still answers us.
    pub error_code: Option<i64>,
    /// JSON-RPC error message; `null` exactly when `error_code` is.
    pub error_message: Option<String>,
    /// `result.resultType` as sent (`null` when absent, or when the result is not ours).
    pub result_type: Option<String>,
    /// SSE: dispatched events with non-empty data (terminal included; comments, priming and
    /// empty-data events and an unterminated trailing event excluded). `null` for a non-SSE body.
    pub event_count: Option<u64>,
    /// SSE on 2025-x: the last event id, for `Last-Event-ID`; `null` otherwise (2026-07-28 streams
    /// have no resumption, so an id there is only the violation `sse.legacy_field`).
    pub last_event_id: Option<String>,
    /// The stream can be resumed with GET and `Last-Event-ID`: 2025-x SSE with at least one event
    /// id seen. Never on 2026-07-28.
    pub resumable: bool,
    /// How the body ended.
    pub end: End,
    /// What to do next.
    pub retry: RetryAdvice,
    /// Broken rules, in the order seen.
    pub violations: Vec<Violation>,
    /// SSE: an event cut off at the end of the body (no closing blank line): `{"bytes",
    /// "looked_final"}`; `null` when the body ended on an event boundary or is not SSE.
    pub unterminated: Option<Unterminated>,
    /// Which limit was hit, for `LIMIT_EXCEEDED` ([`LimitKind`]: `max_event_bytes`,
    /// `max_body_bytes`, `max_events`); `null` for every other outcome.
    pub limit: Option<LimitKind>,
    /// Requests the server sent on this exchange's SSE stream, in order, each `{"method",
    /// "id"}`: the most recent [`Limits::max_server_requests`](crate::Limits::max_server_requests)
    /// (256) of them; `[]` when none (and for every non-SSE body).
    pub server_requests: Vec<ServerRequest>,
    /// Which box made the HTTP status ([`StatusOrigin`]: `server` or `intermediary`), from
    /// evidence only; absent evidence `server`. `null` exactly when `status` is.
    pub status_origin: Option<StatusOrigin>,
    /// The evidence for `status_origin`, in one sentence (the canonical page, headers, body
    /// shape against this server's other errors, time to the status); `null` exactly when
    /// `status_origin` is.
    pub origin_reason: Option<Cow<'static, str>>,
    /// The error the capturing client recorded for the entry, as written (a HAR `_error` or
    /// Chrome's `response._error`, e.g. `net::ERR_CONNECTION_RESET`): the transfer failed in the
    /// network or the client, not at the server. `null` when none was recorded.
    pub client_error: Option<String>,
    /// The task status the exchange reported ([`TaskStatus`]: `working`, `input_required`,
    /// `completed`, `failed`, `cancelled`): of the task handle a `tools/call` got, of a
    /// `tasks/get` result, or else of the last task status notification for its `taskId` on a
    /// `tasks/*` request's stream. `null` when it reported none (every other exchange, a
    /// status this crate does not know, and a listen stream, which may carry many tasks).
    pub task_status: Option<TaskStatus>,
    /// What the exchange learned of a task, for the call grouping ([`TaskReport`]): not part of
    /// the JSON form (it is `null` after a round trip through JSON); `task_status` is its status.
    #[serde(skip)]
    pub task: Option<TaskReport>,
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

/// What a task's end makes of the call that created it: the outcome and JSON-RPC error code
/// the call takes (`TOOL_SUCCESS`/`TOOL_ERROR` from a completed task's result, `JSONRPC_ERROR`
/// with a failed task's `error.code`, `CANCELLED`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TaskEnd {
    /// The outcome the call takes.
    pub outcome: Outcome,
    /// A failed task's `error.code`; `None` otherwise (or when it had none).
    pub error_code: Option<i64>,
}

/// What one exchange learned of a task: from the task handle of a `tools/call`, a `tasks/get`
/// result, a task status notification on its stream, or a 2025-11-25 `tasks/result`.
///
/// Kept on the verdict for the call grouping only (not part of its JSON form, which carries the
/// status alone as `task_status`): the grouping never sees response bodies, so what a terminal
/// task's result came to is judged where the body is read, and handed on with the verdict.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TaskReport {
    /// The `taskId`, when the message named one.
    pub id: Option<String>,
    /// The status reported; `None` when the message had none this crate knows (a 2025-11-25
    /// `tasks/result` carries the result itself, not a status).
    pub status: Option<TaskStatus>,
    /// For a terminal status (or a `tasks/result`): what the call came to. `None` for a
    /// non-terminal status, and for a `completed` task whose message left the result out (a
    /// 2025-11-25 `tasks/get`: the result is fetched with `tasks/result`).
    pub end: Option<TaskEnd>,
    /// The suggested polling interval (`pollIntervalMs`, `pollIntervalMilliseconds`, or
    /// 2025-11-25's `pollInterval`), in milliseconds.
    pub poll_interval_ms: Option<u64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Serialize)]
    struct Flattened<'a> {
        file: &'a str,
        #[serde(flatten)]
        verdict: &'a Verdict,
    }

    /// The JSON line is byte for byte `file` flattened beside the verdict (as `replay
    /// --format jsonl` wrote it before), file names that need escaping included.
    #[test]
    fn the_jsonl_line_is_the_flattened_line() {
        let verdict: Verdict = serde_json::from_str(
            r#"{"index":3,"http_method":"POST","kind":"request","batch_position":null,"method":"tools/call","id":"a\"b","tool":"echo","protocol_version":"2026-07-28","protocol_version_source":"header","outcome":"TOOL_SUCCESS","layer":"application","complete":true,"status":200,"content_type":"application/json","error_code":null,"error_message":null,"result_type":"complete","event_count":null,"last_event_id":null,"resumable":false,"end":"eof","retry":{"advice":"none","after_ms":null,"reason":"complete answer"},"violations":[],"unterminated":null,"limit":null,"server_requests":[],"status_origin":"server","origin_reason":"a success status: the server's answer","client_error":null,"task_status":null}"#,
        )
        .unwrap();
        for file in ["proxy", "runs/a \"b\"\\c.har", "é\n{"] {
            let mut ours = b"earlier line\n".to_vec();
            verdict.write_jsonl(&mut ours, &Verdict::jsonl_start(file));
            let mut theirs = b"earlier line\n".to_vec();
            serde_json::to_writer(
                &mut theirs,
                &Flattened {
                    file,
                    verdict: &verdict,
                },
            )
            .unwrap();
            assert_eq!(String::from_utf8(ours), String::from_utf8(theirs), "{file}");
        }
    }
}
