//! The catalogue of spec rules the analyzer checks, each with a stable id and a level.
//!
//! One table, so that the CLI's rule listing (which docs/rules.md points at) and the checks
//! cannot drift apart.

wire_names! {
    /// Requirement level of a broken rule.
    pub enum Level {
        /// MUST / MUST NOT.
        Must => "must",
        /// SHOULD / SHOULD NOT (or a portability hazard with real clients).
        Should => "should",
    }
}

macro_rules! rules {
    ($($variant:ident => $id:literal, $level:ident, $summary:literal;)*) => {
        /// A checked rule. [`Rule::id`] is the stable name used in verdicts.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum Rule { $(#[doc = $summary] $variant,)* }

        impl Rule {
            /// Every rule, in catalogue order.
            pub const ALL: &'static [Rule] = &[$(Rule::$variant,)*];
            /// Stable id, e.g. `sse.foreign_id_response`.
            pub fn id(self) -> &'static str { match self { $(Rule::$variant => $id,)* } }
            /// MUST or SHOULD.
            pub fn level(self) -> Level { match self { $(Rule::$variant => Level::$level,)* } }
            /// One line: what the rule says.
            pub fn summary(self) -> &'static str { match self { $(Rule::$variant => $summary,)* } }
            /// The rule with this stable id.
            pub fn from_id(id: &str) -> Option<Rule> {
                match id { $($id => Some(Rule::$variant),)* _ => None }
            }
        }
    };
}

rules! {
    RequestAccept => "request.accept", Must,
        "The POST's Accept header must list application/json and text/event-stream.";
    RequestProtocolVersionHeader => "request.protocol_version_header", Must,
        "MCP-Protocol-Version must be sent (2026-07-28: every POST; 2025-06-18+: after initialize).";
    RequestProtocolVersionMismatch => "request.protocol_version_mismatch", Must,
        "2026-07-28: MCP-Protocol-Version must equal the request's _meta protocolVersion.";
    RequestMetaMissing => "request.meta_missing", Must,
        "2026-07-28: _meta must carry protocolVersion and clientCapabilities.";
    RequestMcpMethodHeader => "request.mcp_method_header", Must,
        "2026-07-28: Mcp-Method must be present and equal the JSON-RPC method.";
    RequestMcpNameHeader => "request.mcp_name_header", Must,
        "2026-07-28: Mcp-Name must equal params.name/uri on tools/call, resources/read, prompts/get (params.taskId on tasks/get|update|cancel).";
    RequestBatch => "request.batch", Must,
        "2025-06-18 and later: a POST body is one message, never a JSON array.";
    RequestMrtrReusedId => "request.mrtr_reused_id", Must,
        "An MRTR follow-up must use a new JSON-RPC id.";
    RequestRemovedMethod => "request.removed_method", Must,
        "2026-07-28: no ping, logging/setLevel, resources/(un)subscribe, tasks/result, tasks/list, ... (removed).";
    RequestFallbackOnTransientError => "request.fallback_on_transient_error", Should,
        "Fall back to initialize only after a legacy refusal of server/discover, never after a 5xx, 429 or timeout.";
    ServerDiscoverVersionRefused => "server.discover_version_refused", Should,
        "A server does not refuse (plain 400, -32022) a revision its server/discover just advertised.";
    HttpAcceptedForRequest => "http.accepted_for_request", Must,
        "A request must be answered with application/json or text/event-stream, not 202/204.";
    HttpAcceptedWithBody => "http.accepted_with_body", Must,
        "202 Accepted to a notification or response carries no body.";
    HttpContentType => "http.content_type", Must,
        "A 2xx reply to a request is application/json or text/event-stream.";
    HttpSessionIdOnStateless => "http.session_id_on_stateless", Should,
        "2026-07-28 servers should not mint or echo Mcp-Session-Id.";
    SseForeignIdResponse => "sse.foreign_id_response", Must,
        "A POST stream carries responses only for its own request.";
    SseAfterFinal => "sse.after_final", Should,
        "The final response should end the stream (must, after input_required).";
    SseServerRequest => "sse.server_request", Must,
        "2026-07-28: the server must not send JSON-RPC requests on a POST stream.";
    SseEventNotJson => "sse.event_not_json", Must,
        "Each event's data is one JSON-RPC message.";
    SseUnterminatedEvent => "sse.unterminated_event", Should,
        "An event must end with a blank line; one cut off at the end is never dispatched.";
    SseNonMessageEvent => "sse.non_message_event", Should,
        "Events other than `message` are ignored by SDK clients.";
    SseLegacyField => "sse.legacy_field", Should,
        "2026-07-28 streams are not resumable: id and retry fields are legacy and ignored.";
    SseRetryMissing => "sse.retry_missing", Should,
        "2025-11-25: a server closing a stream before the response should send retry first.";
    SseClosedBeforeResponse => "sse.closed_before_response", Should,
        "The server should not close the stream before the response (except 2025-11-25 polling).";
    SseBuffered => "sse.buffered", Should,
        "Events reach the client as they are sent: not all at once after a long wait (a buffering proxy).";
    SseIdleCut => "sse.idle_cut", Should,
        "Streams are not cut after the same idle time (an intermediary's timeout): send heartbeats below it.";
    JsonrpcMalformed => "jsonrpc.malformed", Must,
        "The body is one JSON value with nothing after it.";
    JsonrpcVersion => "jsonrpc.version", Must,
        "jsonrpc must be \"2.0\".";
    JsonrpcIdMismatch => "jsonrpc.id_mismatch", Must,
        "The response id equals the request id in value and type.";
    JsonrpcResultAndError => "jsonrpc.result_and_error", Must,
        "A response has exactly one of result and error.";
    JsonrpcErrorObject => "jsonrpc.error_object", Must,
        "error is an object with an integer code and a string message.";
    JsonrpcBatchResponse => "jsonrpc.batch_response", Must,
        "2025-06-18 and later: a response body is one message, never a JSON array.";
    JsonrpcRetiredCode => "jsonrpc.retired_code", Must,
        "2026-07-28: no error code an earlier revision retired (-32002: now -32602; -32042).";
    JsonrpcReservedCode => "jsonrpc.reserved_code", Must,
        "2026-07-28: -32020..-32099 holds only the codes the specification defines.";
    ResultNotObject => "result.not_object", Must,
        "A JSON-RPC result in MCP is an object.";
    ResultTypeMissing => "result.type_missing", Must,
        "2026-07-28 results must carry resultType (clients treat it as complete).";
    ResultTypeUnknown => "result.type_unknown", Must,
        "An unrecognised resultType must be considered invalid.";
    ToolResultNotObject => "tool.result_not_object", Must,
        "A tools/call result is an object.";
    ToolContentNotArray => "tool.content_not_array", Must,
        "CallToolResult.content is a required array.";
    ToolIsErrorNotBool => "tool.is_error_not_bool", Must,
        "CallToolResult.isError, if present, is a boolean.";
    ToolStructuredContentNotObject => "tool.structured_content_not_object", Must,
        "2025-06-18/2025-11-25: structuredContent is a JSON object.";
    MrtrNotAllowed => "mrtr.not_allowed", Must,
        "input_required only answers tools/call, resources/read and prompts/get.";
    MrtrEmpty => "mrtr.empty", Must,
        "An InputRequiredResult carries inputRequests or requestState.";
    ProgressTokenMismatch => "progress.token_mismatch", Must,
        "Progress notifications reference the request's progressToken.";
    ProgressNotIncreasing => "progress.not_increasing", Must,
        "Progress must increase with each notification.";
    ShapeMissingMember => "shape.missing_member", Must,
        "A member the revision's schema requires is present (every message, both directions).";
    ShapeWrongType => "shape.wrong_type", Must,
        "Each member has the JSON type the revision's schema gives it.";
    ShapeBadValue => "shape.bad_value", Must,
        "A member with a fixed value or a closed set of values (const, enum) has one of them.";
    NotificationMessageWithoutLogLevel => "notification.message_without_log_level", Must,
        "2026-07-28: no notifications/message unless the request _meta asked for a logLevel.";
    ListenResponse => "listen.response", Must,
        "A standalone GET stream must not carry a JSON-RPC response (unless resuming a stream).";
    SessionRequestAfterDelete => "session.request_after_delete", Must,
        "After its own DELETE the client must not use that session id again (initialize anew).";
    SessionIdChanged => "session.id_changed", Must,
        "The client sends the same Mcp-Session-Id on every request of a session.";
    SessionBeforeInitialized => "session.before_initialized", Should,
        "2025-x: no requests other than ping before notifications/initialized.";
    SessionVersionHeader => "session.version_header", Must,
        "2025-06-18+: MCP-Protocol-Version must be the version initialize negotiated.";
    SessionResponseUnknownId => "session.response_unknown_id", Must,
        "A client's response carries the id of a server request that is waiting for it.";
    SessionResumeNotSupported => "session.resume_not_supported", Should,
        "2026-07-28 streams are not resumable: re-send as a new request instead of GET + Last-Event-ID.";
    AuthChallengeMissing => "auth.challenge_missing", Must,
        "A 401 carries a WWW-Authenticate challenge (RFC 9110; MCP: Bearer with resource_metadata).";
    AuthInsufficientScope => "auth.insufficient_scope", Should,
        "A client holds the scopes its request needs (403 insufficient_scope names them: step up).";
    AuthTokenExpired => "auth.token_expired", Should,
        "A client refreshes its token before it expires (401 invalid_token after the session worked).";
    CallServerRequestUnanswered => "call.server_request_unanswered", Must,
        "Every server request (elicitation, sampling, roots, ping) gets the client's response.";
    CallDoubleExecutionRisk => "call.double_execution_risk", Should,
        "A tools/call not known safe is not re-sent after a failure that may have run it, nor while its task runs.";
    CallResentAfterComplete => "call.resent_after_complete", Should,
        "A tools/call is not re-sent (same arguments, new id, within 10 s) after it got a complete answer.";
    CallReusedId => "call.reused_id", Must,
        "A retry or MRTR round uses a new JSON-RPC id (2025-x: ids are unique within a session).";
    CallResumeWithoutLastEventId => "call.resume_without_last_event_id", Should,
        "2025-x: a client resuming an interrupted stream sends GET with Last-Event-ID (a guess from traffic).";
    CallRetryTooSoon => "call.retry_too_soon", Should,
        "A retry or resumption waits the Retry-After or SSE retry delay; a task poll the task's pollIntervalMs (less 10 %).";
}

impl Rule {
    /// The stable id (same as [`Rule::id`]), the name used in verdicts and on the command line.
    pub fn as_str(self) -> &'static str {
        self.id()
    }
}

impl std::fmt::Display for Rule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.id())
    }
}

impl PartialEq<str> for Rule {
    fn eq(&self, other: &str) -> bool {
        self.id() == other
    }
}

impl PartialEq<&str> for Rule {
    fn eq(&self, other: &&str) -> bool {
        self.id() == *other
    }
}

/// Serialized as its stable id (`"sse.foreign_id_response"`).
impl serde::Serialize for Rule {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.id())
    }
}

impl<'de> serde::Deserialize<'de> for Rule {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let id = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        Rule::from_id(&id)
            .ok_or_else(|| serde::de::Error::custom(format_args!("unknown rule id `{id}`")))
    }
}

#[cfg(test)]
mod tests {
    use super::Rule;

    #[test]
    fn ids_are_unique_and_round_trip() {
        for &rule in Rule::ALL {
            assert_eq!(Rule::from_id(rule.id()), Some(rule));
            let json = serde_json::to_string(&rule).unwrap();
            assert_eq!(json, format!("\"{}\"", rule.id()));
            assert_eq!(serde_json::from_str::<Rule>(&json).unwrap(), rule);
        }
        assert_eq!(Rule::from_id("no.such_rule"), None);
        assert!(serde_json::from_str::<Rule>("\"no.such_rule\"").is_err());
    }
}
