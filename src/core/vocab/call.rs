//! One logical call's record ([`Call`]) and how its latest exchange came about
//! ([`RetryOrigin`]): the output contract of the call grouping, which lives in `calls.rs` and
//! builds it.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use smol_str::SmolStr;

use super::rules::Rule;
use super::task::TaskStatus;
use super::verdict::{Layer, Outcome, StatusOrigin, Verdict, Violation};
use super::version::ProtocolVersion;

wire_names! {
    /// How a call's latest exchange came about. A guess from traffic.
    pub enum RetryOrigin {
        /// One exchange, or only answers and streams joined it.
        None => ("none", "one exchange, or only answers and streams joined it"),
        /// Re-sent with the same arguments within [`AUTOMATIC_RETRY_MS`](crate::AUTOMATIC_RETRY_MS).
        Automatic => (
            "automatic",
            "re-sent with the same arguments within 10 s (a client's retry loop)"
        ),
        /// Re-sent with the same arguments later than that.
        Manual => (
            "manual",
            "re-sent with the same arguments later than 10 s (a person or an agent decided again)"
        ),
        /// A `GET` with `Last-Event-ID` resumed its stream.
        Resume => ("resume", "a GET with Last-Event-ID resumed its stream"),
        /// An MRTR round (new id, `inputResponses`/`requestState`).
        Input => (
            "input",
            "an MRTR round: a new id with inputResponses and requestState"
        ),
        /// Following its task (`tasks/get`, `tasks/update`, `tasks/cancel`, 2025-11-25
        /// `tasks/result`).
        Poll => (
            "poll",
            "following its task (tasks/get, tasks/update, tasks/cancel, tasks/result)"
        ),
    }
}

wire_names! {
    /// The auth step that failed, for a call's `auth_step`: read from a verdict in the `auth`
    /// layer (a 401, or a 403 with a challenge).
    pub enum AuthStep {
        /// A 401 without a challenge: the server gave no `WWW-Authenticate` to start discovery
        /// from (`auth.challenge_missing`).
        Challenge => (
            "challenge",
            "401 without a WWW-Authenticate challenge: discovery cannot start (server's fault)"
        ),
        /// A 401 with a challenge: no token, or one the server rejected; get a token.
        Token => (
            "token",
            "401 with a challenge: no token, or a rejected one; get a token"
        ),
        /// A 401 `invalid_token` after a request with a token succeeded in the session
        /// (`auth.token_expired`): refresh the token.
        TokenExpired => (
            "token_expired",
            "401 invalid_token after the session worked: the token expired; refresh it"
        ),
        /// A 403 `insufficient_scope` (`auth.insufficient_scope`): authorize again with the
        /// scope the challenge names (step-up).
        Scope => (
            "scope",
            "403 insufficient_scope: re-authorize with the scope it names"
        ),
    }
}

/// One logical call: the output contract of `replay --calls`, `probe --calls` (`--format json`
/// / `jsonl`) and of the library's grouping ([`Calls`](crate::Calls), `replay::replay_calls`,
/// `replay::calls_of`, the rmcp transport's `Recording::calls`).
///
/// Serialized with serde as one JSON object with exactly these members, in this order, under
/// these names; a member that does not apply is `null`, never absent. Lists are `[]` when empty.
/// Enumerated values are the wire names of [`Outcome`], [`ProtocolVersion`], [`RetryOrigin`], [`StatusOrigin`], [`TaskStatus`],
/// and, in `violations`, [`Rule`](crate::Rule) and [`Level`](crate::Level) (each violation is
/// `{"rule", "level", "detail", "at"}` as in [`Verdict`], with `at` always `null`: call-level
/// rules are about the traffic, not a byte of one body).
///
/// "Final exchange" below is the latest exchange that decides the call: the client's answer to
/// a server request joins the call but does not decide it, nor do `tasks/update` and
/// `tasks/cancel` acknowledgements.
///
/// A `tools/call` answered with a task handle is followed to the task's end: its `tasks/get`,
/// `tasks/update` and `tasks/cancel` (and 2025-11-25 `tasks/result`) for that `taskId` join it,
/// and the task, not the last poll's own verdict, decides `outcome`, `error_code` and
/// `complete`: a `completed` task the outcome of its `result` (`TOOL_SUCCESS`, `TOOL_ERROR`,
/// `INVALID_TOOL_RESULT`), `failed` `JSONRPC_ERROR` with its `error.code`, `cancelled`
/// `CANCELLED` (incomplete); a poll answered -32602 (task unknown or expired) `JSONRPC_ERROR`
/// -32602, incomplete; a task still `working` or `input_required` when the capture ends
/// `DEFERRED`, incomplete. A poll that itself failed (an HTTP error, a broken stream) gives
/// the call its own outcome, incomplete.
///
/// A `notifications/cancelled` naming one of the call's request ids joins the call and makes it
/// `CANCELLED`, incomplete, unless an answer came first (that answer stands) or the call became a
/// task (only `tasks/cancel` ends a task): the stream the
/// server or client then drops is the cancel, not `STREAM_ABORTED`, and no resume is due. A
/// `-32800` ("request cancelled") error answer makes the call `CANCELLED` with `error_code`
/// -32800 and `complete` **true**: the server confirmed the cancellation, nothing more will come
/// (the one `CANCELLED` call that is complete).
///
/// Grouping is a guess from traffic (see [`Calls`](crate::Calls) for when an exchange joins a call); so are
/// `retry_origin` and `double_execution_risk`.
///
/// ```json
/// {
///   "call": 3, "entries": [4, 5], "client": "my-agent@1.2.0",
///   "protocol_version": "2025-11-25", "method": "tools/call", "tool": "get_weather",
///   "post_count": 2, "http_statuses": [200, 200], "ids": [4, 5],
///   "error_code": null, "result_type": null, "outcome": "TOOL_SUCCESS", "complete": true,
///   "retry_origin": "automatic", "double_execution_risk": true,
///   "violations": [{"rule": "call.double_execution_risk", "level": "should",
///                   "detail": "entry 5 re-sends tools/call get_weather after STREAM_ABORTED, which may have run it",
///                   "at": null}],
///   "status_origin": "server", "origin_reason": "a success status: the server's answer",
///   "auth_step": null, "task_status": null
/// }
/// ```
///
/// Every member, always present (this example runs as a test):
///
/// ```
/// # use mcp_verdict::{Calls, End, ExchangeFacts, Headers, Request, ResponseHead, Session};
/// let mut session = Session::default();
/// let body = br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;
/// let headers = Headers::new();
/// let mut exchange = session.begin(Request::new("POST", headers.clone(), body));
/// let json_reply = Headers::from_iter([("Content-Type", "application/json")]);
/// exchange.on_head(ResponseHead { status: 200, headers: json_reply });
/// exchange.feed(br#"{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}"#);
/// let verdict = session.finish(&mut exchange, End::Eof);
///
/// let (mut calls, mut out) = (Calls::new(), Vec::new());
/// let facts = ExchangeFacts { verdict: &verdict, headers: &headers, body, started_ms: None, duration_ms: None };
/// calls.add(facts, &mut |c| out.push(c));
/// calls.finish(&mut |c| out.push(c));
/// let json = serde_json::to_value(&out[0]).unwrap();
/// let names: Vec<&str> = json.as_object().unwrap().keys().map(String::as_str).collect();
/// let mut sorted = names.clone();
/// sorted.sort();
/// let mut members = [
///     "call", "entries", "client", "protocol_version", "method", "tool", "post_count",
///     "http_statuses", "ids", "error_code", "result_type", "outcome", "complete",
///     "retry_origin", "double_execution_risk", "violations", "status_origin", "origin_reason",
///     "auth_step", "task_status",
/// ];
/// members.sort();
/// assert_eq!(sorted, members);
/// assert_eq!(json["tool"], serde_json::Value::Null); // not a tools/call: null, never absent
/// assert_eq!(json["retry_origin"], "none");
/// assert_eq!(json["post_count"], 1);
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Call {
    /// 0-based number of the call within the capture (or the live run), in the order calls
    /// began.
    pub call: u64,
    /// The verdict `index` of each of its exchanges, in order (in a capture: entry positions).
    /// Never empty; at most [`MAX_CALL_EXCHANGES`](crate::MAX_CALL_EXCHANGES).
    pub entries: Vec<u64>,
    /// `name@version` of the client, from the latest `initialize` `clientInfo` or 2026-07-28
    /// `_meta` client info seen before the call began; `null` when none was seen.
    pub client: Option<String>,
    /// The revision whose rules judged its final exchange. Set for every call this crate
    /// groups; `null` is kept for records from elsewhere.
    pub protocol_version: Option<ProtocolVersion>,
    /// JSON-RPC method of its first exchange that has one; `null` for a call of `GET`/`DELETE`
    /// entries only (or a response POST whose server request was not seen).
    pub method: Option<Cow<'static, str>>,
    /// `params.name` of a `tools/call`; `null` for any other method.
    pub tool: Option<SmolStr>,
    /// How many of its exchanges were POSTs (`GET` and `DELETE` entries do not count).
    pub post_count: u32,
    /// HTTP status of each exchange, in the order of `entries`; an element is `null` when that
    /// exchange got no response head (connection failed, timed out or cancelled before it).
    pub http_statuses: Vec<Option<u16>>,
    /// JSON-RPC ids of its requests, in order (a re-send or an MRTR round adds one; responses,
    /// notifications and `GET`/`DELETE` entries add none). `[]` when it has no request.
    pub ids: Vec<Value>,
    /// JSON-RPC error code of the final exchange; `null` when it carried none.
    pub error_code: Option<i64>,
    /// `result.resultType` of the final exchange as sent; `null` when absent.
    pub result_type: Option<String>,
    /// The final exchange's outcome.
    pub outcome: Outcome,
    /// The final exchange gave a complete answer (the outcome's completeness; see
    /// [`Outcome::is_complete`]).
    pub complete: bool,
    /// How its latest joining exchange came about: `none` for a call of one exchange (or one
    /// that only answers and streams joined). `null` for a re-send whose delay is unknown (the
    /// capture has no timestamps), so automatic and manual cannot be told apart.
    pub retry_origin: Option<RetryOrigin>,
    /// A `tools/call` not known to be safe to repeat was re-sent after a failure that may have
    /// run it, or this call re-sent a `tools/call` while an earlier identical call's task still
    /// runs (two tasks now run); the `call.double_execution_risk` violation says which entry.
    pub double_execution_risk: bool,
    /// Call-level violations (the retry audit and unanswered server requests), in the order
    /// seen; each rule at most once per call.
    pub violations: Vec<Violation>,
    /// Which box made the final exchange's HTTP status (its verdict's `status_origin`:
    /// `server` or `intermediary`); `null` when that exchange got no status.
    pub status_origin: Option<StatusOrigin>,
    /// The evidence for `status_origin` (its verdict's `origin_reason`); `null` exactly when
    /// `status_origin` is.
    pub origin_reason: Option<Cow<'static, str>>,
    /// The auth step that failed, from the latest of its exchanges in the `auth` layer (a 401,
    /// or a 403 with a challenge) even when a later one succeeded ([`AuthStep`]: `challenge`,
    /// `token`, `token_expired`, `scope`); `null` when none failed there.
    pub auth_step: Option<AuthStep>,
    /// The latest task status seen for the call ([`TaskStatus`]), from its exchanges'
    /// `task_status` (the handle, `tasks/get` results, task status notifications); `null` when
    /// none reported one.
    pub task_status: Option<TaskStatus>,
}

impl AuthStep {
    /// The auth step that failed for a verdict, read back from it (for the call log): its
    /// layer is `auth` and its auth rule, or else its status, names the step.
    pub fn of(v: &Verdict) -> Option<AuthStep> {
        if v.layer != Layer::Auth || v.outcome != Outcome::HttpError {
            return None;
        }
        Some(if v.breaks(Rule::AuthChallengeMissing) {
            AuthStep::Challenge
        } else if v.breaks(Rule::AuthInsufficientScope) {
            AuthStep::Scope
        } else if v.breaks(Rule::AuthTokenExpired) {
            AuthStep::TokenExpired
        } else {
            AuthStep::Token
        })
    }
}

impl Call {
    /// A call known to be one exchange by construction (a soak `tools/call`: one POST, a new
    /// id, never re-sent), built from its verdict without the traffic grouping, so identical
    /// calls in a load test are never read as re-sends. `call` numbers it; `client` is
    /// `name@version` when known. `retry_origin` is `none`; there are no call-level violations.
    pub fn single(call: u64, v: &Verdict, client: Option<String>) -> Call {
        Call {
            call,
            entries: vec![v.index],
            client,
            protocol_version: Some(v.protocol_version),
            method: v.method.clone(),
            tool: v.tool.clone(),
            post_count: u32::from(v.http_method.as_deref().is_none_or(|m| m == "POST")),
            http_statuses: vec![v.status],
            ids: v.id.iter().cloned().collect(),
            error_code: v.error_code,
            result_type: v.result_type.clone(),
            outcome: v.outcome,
            // A task handle alone is not the answer (see the grouping's rules above).
            complete: v.complete && v.outcome != Outcome::Deferred,
            retry_origin: Some(RetryOrigin::None),
            double_execution_risk: false,
            violations: Vec::new(),
            status_origin: v.status_origin,
            origin_reason: v.origin_reason.clone(),
            auth_step: AuthStep::of(v),
            task_status: v.task_status,
        }
    }
}
