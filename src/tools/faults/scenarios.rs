//! The fault scenarios: what the server sends for `tools/call` on `/mcp/<name>`, and the verdict a
//! correct analyzer must give. One table, so `--list`, the demo, the tests and the README agree.

use serde::Serialize;
use serde_json::{Value, json};

use crate::verdict::{Advice, Outcome};

/// Which revision a scenario's server speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Era {
    /// Stateless 2026-07-28 (`server/discover`).
    #[serde(rename = "2026-07-28")]
    Stateless,
    /// 2025-11-25 only: `server/discover` is answered like a legacy server (404, no body).
    #[serde(rename = "2025-11-25")]
    Legacy,
}

/// How an SSE body ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Ending {
    /// The last chunk of the chunked body: a clean end of stream.
    Clean,
    /// The connection closes without the last chunk: the client sees a broken body.
    Cut,
    /// A TCP reset (SO_LINGER 0).
    Reset,
    /// Keep-alive comments forever (until the client goes away).
    Hang,
}

/// One step of an SSE body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// Send these bytes as one chunk.
    Send(Vec<u8>),
    /// Send these bytes one per chunk.
    Drip(Vec<u8>),
    /// Wait.
    Sleep(u64),
}

/// A reply to `tools/call`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    /// A complete body with Content-Length.
    Body {
        /// HTTP status.
        status: u16,
        /// Extra headers (Content-Type included).
        headers: Vec<(String, String)>,
        /// The body.
        body: Vec<u8>,
    },
    /// `text/event-stream`, chunked.
    Sse {
        /// Steps in order.
        steps: Vec<Step>,
        /// How it ends.
        ending: Ending,
    },
}

/// What the verdict of the scenario's `tools/call` must be.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Expect {
    /// The outcome.
    pub outcome: Outcome,
    /// The retry advice.
    pub advice: Advice,
    /// HTTP status (None: no head).
    pub status: Option<u16>,
    /// SSE event count (None: not SSE).
    pub event_count: Option<u64>,
    /// JSON-RPC error code.
    pub error_code: Option<i64>,
    /// Rule ids, sorted.
    pub violations: Vec<&'static str>,
}

/// A fault scenario.
#[derive(Debug, Clone, Serialize)]
pub struct Scenario {
    /// Path segment: the endpoint is `/mcp/<name>`.
    pub name: &'static str,
    /// One line: what goes wrong.
    pub about: &'static str,
    /// Which revision the server speaks on this path.
    pub era: Era,
    /// The tool the client calls.
    pub tool: &'static str,
    /// The verdict of that call.
    pub expect: Expect,
    /// A client deadline (ms) the scenario needs, e.g. for a stream that never ends.
    pub client_deadline_ms: Option<u64>,
    /// A client event-size limit the scenario needs.
    pub client_max_event_bytes: Option<usize>,
    /// After `INPUT_REQUIRED`, the client resubmits with input; this is that verdict.
    pub follow_up: Option<Expect>,
    /// After a resumable abort, the client resumes with GET; this is that verdict.
    pub resume: Option<Expect>,
}

fn expect(outcome: Outcome, advice: Advice, status: u16, events: Option<u64>) -> Expect {
    Expect {
        outcome,
        advice,
        status: Some(status),
        event_count: events,
        error_code: None,
        violations: Vec::new(),
    }
}

impl Expect {
    fn code(mut self, code: i64) -> Self {
        self.error_code = Some(code);
        self
    }
    fn rules(mut self, rules: &[&'static str]) -> Self {
        self.violations = rules.to_vec();
        self.violations.sort_unstable();
        self
    }
}

const fn scenario(
    name: &'static str,
    about: &'static str,
    tool: &'static str,
    expect: Expect,
) -> Scenario {
    Scenario {
        name,
        about,
        era: Era::Stateless,
        tool,
        expect,
        client_deadline_ms: None,
        client_max_event_bytes: None,
        follow_up: None,
        resume: None,
    }
}

/// Every scenario, in a stable order.
pub fn all() -> Vec<Scenario> {
    use Advice as A;
    use Outcome as O;
    let success = |events| expect(O::ToolSuccess, A::None, 200, events);
    let mut list = vec![
        scenario(
            "ok",
            "no fault: echo answers with JSON",
            "echo",
            success(None),
        ),
        scenario(
            "http-400-header-mismatch",
            "400 with -32020 HeaderMismatch: rejected before dispatch",
            "pay",
            expect(O::HttpError, A::FixRequest, 400, None).code(-32020),
        ),
        scenario(
            "http-404-method-not-found",
            "404 with -32601",
            "echo",
            expect(O::HttpError, A::FixRequest, 404, None).code(-32601),
        ),
        Scenario {
            era: Era::Legacy,
            ..scenario(
                "http-404-session-expired",
                "2025-11-25: 404 on a request with a session id: the session is gone",
                "pay",
                expect(O::HttpError, A::Reinitialize, 404, None).code(-32001),
            )
        },
        scenario(
            "http-429",
            "429 with Retry-After: 2",
            "pay",
            expect(O::HttpError, A::Retry, 429, None),
        ),
        scenario(
            "http-500-success-body",
            "500 whose body is a success result: the status decides",
            "pay",
            expect(O::HttpError, A::DoNotRetry, 500, None),
        ),
        scenario(
            "http-503-read-only",
            "503 with Retry-After: 1 on a read-only tool: safe to retry",
            "lookup",
            expect(O::HttpError, A::Retry, 503, None),
        ),
        scenario(
            "http-503-destructive",
            "503 on a destructive tool: it may have run, do not retry",
            "pay",
            expect(O::HttpError, A::DoNotRetry, 503, None),
        ),
        scenario(
            "accepted-request",
            "202 with no body to a request",
            "pay",
            expect(O::UnexpectedAccepted, A::DoNotRetry, 202, None)
                .rules(&["http.accepted_for_request"]),
        ),
        scenario(
            "html-200",
            "an HTML page with 200 (a proxy's login page)",
            "lookup",
            expect(O::UnexpectedContentType, A::Retry, 200, None).rules(&["http.content_type"]),
        ),
        scenario(
            "jsonrpc-error",
            "200 carrying a JSON-RPC error",
            "echo",
            expect(O::JsonrpcError, A::None, 200, None).code(-32602),
        ),
        scenario(
            "tool-error",
            "isError: true",
            "fail",
            expect(O::ToolError, A::None, 200, None),
        ),
        scenario(
            "invalid-tool-result",
            "content is a string, not an array",
            "echo",
            expect(O::InvalidToolResult, A::Retry, 200, None).rules(&["tool.content_not_array"]),
        ),
        scenario(
            "malformed-json",
            "a body that is not JSON",
            "pay",
            expect(O::MalformedJson, A::DoNotRetry, 200, None).rules(&["jsonrpc.malformed"]),
        ),
        scenario(
            "wrong-id",
            "the response carries another id",
            "pay",
            expect(O::InvalidEnvelope, A::DoNotRetry, 200, None).rules(&["jsonrpc.id_mismatch"]),
        ),
        scenario(
            "id-wrong-type",
            "the response id is the string form of the request's number",
            "pay",
            expect(O::InvalidEnvelope, A::DoNotRetry, 200, None).rules(&["jsonrpc.id_mismatch"]),
        ),
        scenario(
            "duplicate-response",
            "two responses concatenated in one JSON body",
            "pay",
            expect(O::MalformedJson, A::DoNotRetry, 200, None).rules(&["jsonrpc.malformed"]),
        ),
        scenario(
            "result-and-error",
            "a response with both result and error",
            "pay",
            expect(O::InvalidEnvelope, A::DoNotRetry, 200, None)
                .rules(&["jsonrpc.result_and_error"]),
        ),
        Scenario {
            follow_up: Some(success(None)),
            ..scenario(
                "input-required",
                "MRTR: input_required, then the follow-up with a new id succeeds",
                "pay",
                expect(O::InputRequired, A::ResubmitWithInput, 200, None),
            )
        },
        scenario(
            "sse-progress",
            "two progress notifications, then the result",
            "progress",
            success(Some(3)),
        ),
        scenario(
            "sse-final-error",
            "progress, then a JSON-RPC error as the final response",
            "progress",
            expect(O::JsonrpcError, A::None, 200, Some(2)).code(-32603),
        ),
        scenario(
            "sse-cut-between-events",
            "two progress events, then the connection breaks",
            "pay",
            expect(O::StreamAborted, A::DoNotRetry, 200, Some(2)),
        ),
        scenario(
            "sse-cut-mid-event",
            "the connection breaks inside the final event's field name",
            "pay",
            expect(O::StreamAborted, A::DoNotRetry, 200, Some(1))
                .rules(&["sse.unterminated_event"]),
        ),
        scenario(
            "sse-cut-mid-json",
            "the connection breaks inside the final response's JSON",
            "lookup",
            expect(O::StreamAborted, A::Retry, 200, Some(1)).rules(&["sse.unterminated_event"]),
        ),
        scenario(
            "sse-close-without-final",
            "a progress event, then a clean end of stream with no response",
            "pay",
            expect(O::StreamAborted, A::DoNotRetry, 200, Some(1))
                .rules(&["sse.closed_before_response"]),
        ),
        scenario(
            "sse-final-without-blank-line",
            "the final response without its closing blank line: never dispatched",
            "pay",
            expect(O::StreamAborted, A::DoNotRetry, 200, Some(0))
                .rules(&["sse.closed_before_response", "sse.unterminated_event"]),
        ),
        scenario(
            "sse-foreign-id-first",
            "a response for another id, then ours",
            "echo",
            success(Some(2)).rules(&["sse.foreign_id_response"]),
        ),
        scenario(
            "sse-events-after-final",
            "a notification after the final response",
            "echo",
            success(Some(2)).rules(&["sse.after_final"]),
        ),
        scenario(
            "sse-server-request",
            "a server-to-client request on a 2026-07-28 stream",
            "echo",
            success(Some(2)).rules(&["sse.server_request"]),
        ),
        scenario(
            "sse-keepalive-late-final",
            "keep-alive comments for 300 ms, then the result",
            "echo",
            success(Some(1)),
        ),
        scenario(
            "sse-drip",
            "the result, one byte per chunk",
            "echo",
            success(Some(1)),
        ),
        Scenario {
            era: Era::Legacy,
            resume: Some(success(Some(1))),
            ..scenario(
                "sse-priming-resume",
                "2025-11-25: priming event with retry: 100, close; GET with Last-Event-ID gets the result",
                "pay",
                expect(O::StreamAborted, A::Resume, 200, Some(0)),
            )
        },
        scenario(
            "sse-cr-only",
            "CR-only line ends (the final CR is the last byte)",
            "echo",
            success(Some(2)),
        ),
        scenario(
            "sse-crlf-bom",
            "CRLF line ends after a UTF-8 BOM",
            "echo",
            success(Some(2)),
        ),
        Scenario {
            client_max_event_bytes: Some(64 * 1024),
            ..scenario(
                "sse-oversize-event",
                "a 100 KiB event against a 64 KiB client limit",
                "echo",
                expect(O::LimitExceeded, A::DoNotRetry, 200, Some(0)),
            )
        },
        Scenario {
            client_deadline_ms: Some(400),
            ..scenario(
                "sse-never-ends",
                "keep-alive comments forever: the client's deadline ends it",
                "lookup",
                expect(O::TimedOut, A::Retry, 200, Some(0)),
            )
        },
        scenario(
            "tcp-reset",
            "one progress event, then a TCP reset",
            "pay",
            expect(O::StreamAborted, A::DoNotRetry, 200, Some(1)),
        ),
    ];
    for s in &mut list {
        s.expect.violations.sort_unstable();
    }
    list
}

impl Scenario {
    /// The revision as a string.
    pub fn era_str(&self) -> &'static str {
        match self.era {
            Era::Stateless => "2026-07-28",
            Era::Legacy => "2025-11-25",
        }
    }
}

/// Looks a scenario up by name.
pub fn find(name: &str) -> Option<Scenario> {
    all().into_iter().find(|s| s.name == name)
}

/// One SSE event carrying `message`.
pub fn event(message: &Value) -> Vec<u8> {
    format!("event: message\ndata: {message}\n\n").into_bytes()
}

fn progress(token: &Value, n: u64) -> Value {
    json!({"jsonrpc": "2.0", "method": "notifications/progress",
           "params": {"progressToken": token, "progress": n, "total": 3, "message": format!("step {n}")}})
}

/// A `CallToolResult` with one text item.
pub fn text_result(text: &str, is_error: bool, stateless: bool) -> Value {
    let mut r = json!({"content": [{"type": "text", "text": text}], "isError": is_error});
    if stateless {
        r["resultType"] = json!("complete");
    }
    r
}

fn json_reply(status: u16, body: Vec<u8>) -> Reply {
    Reply::Body {
        status,
        headers: vec![("Content-Type".into(), "application/json".into())],
        body,
    }
}

fn sse(steps: Vec<Step>, ending: Ending) -> Reply {
    Reply::Sse { steps, ending }
}

/// The reply of the scenario to a `tools/call` with `id`. `normal` is the ordinary result of the
/// tool; `token` the request's progress token (or a default).
pub fn reply(name: &str, id: &Value, normal: &Value, token: &Value) -> Option<Reply> {
    let ok = json!({"jsonrpc": "2.0", "id": id, "result": normal});
    let ok_bytes = ok.to_string().into_bytes();
    let ev = |v: &Value| Step::Send(event(v));
    Some(match name {
        "http-400-header-mismatch" => json_reply(
            400,
            json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32020, "message": "Mcp-Name does not match params.name"}})
                .to_string()
                .into_bytes(),
        ),
        "http-404-method-not-found" => json_reply(
            404,
            json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "Method not found"}})
                .to_string()
                .into_bytes(),
        ),
        "http-404-session-expired" => json_reply(
            404,
            json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32001, "message": "Session not found"}})
                .to_string()
                .into_bytes(),
        ),
        "http-429" => Reply::Body {
            status: 429,
            headers: vec![("Retry-After".into(), "2".into()), ("Content-Type".into(), "text/plain".into())],
            body: b"slow down".to_vec(),
        },
        "http-500-success-body" => json_reply(500, ok_bytes),
        "http-503-read-only" | "http-503-destructive" => Reply::Body {
            status: 503,
            headers: vec![("Retry-After".into(), "1".into()), ("Content-Type".into(), "text/plain".into())],
            body: b"unavailable".to_vec(),
        },
        "accepted-request" => Reply::Body {
            status: 202,
            headers: vec![],
            body: vec![],
        },
        "html-200" => Reply::Body {
            status: 200,
            headers: vec![("Content-Type".into(), "text/html; charset=utf-8".into())],
            body: b"<html><body>Please log in</body></html>".to_vec(),
        },
        "jsonrpc-error" => json_reply(
            200,
            json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32602, "message": "Invalid params"}})
                .to_string()
                .into_bytes(),
        ),
        "invalid-tool-result" => json_reply(
            200,
            json!({"jsonrpc": "2.0", "id": id, "result": {"resultType": "complete", "content": "not-an-array"}})
                .to_string()
                .into_bytes(),
        ),
        "malformed-json" => json_reply(200, b"{\"jsonrpc\": \"2.0\", \"id\": ".to_vec()),
        "wrong-id" => json_reply(
            200,
            json!({"jsonrpc": "2.0", "id": 99_999, "result": normal}).to_string().into_bytes(),
        ),
        "id-wrong-type" => json_reply(
            200,
            json!({"jsonrpc": "2.0", "id": id.to_string(), "result": normal}).to_string().into_bytes(),
        ),
        "duplicate-response" => json_reply(200, [ok_bytes.clone(), ok_bytes].concat()),
        "result-and-error" => json_reply(
            200,
            json!({"jsonrpc": "2.0", "id": id, "result": normal, "error": {"code": -32603, "message": "both"}})
                .to_string()
                .into_bytes(),
        ),
        "sse-progress" => sse(
            vec![ev(&progress(token, 1)), ev(&progress(token, 2)), ev(&ok)],
            Ending::Clean,
        ),
        "sse-final-error" => sse(
            vec![
                ev(&progress(token, 1)),
                ev(&json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32603, "message": "Internal error"}})),
            ],
            Ending::Clean,
        ),
        "sse-cut-between-events" => sse(vec![ev(&progress(token, 1)), ev(&progress(token, 2))], Ending::Cut),
        "sse-cut-mid-event" => sse(vec![ev(&progress(token, 1)), Step::Send(b"event: message\nda".to_vec())], Ending::Cut),
        "sse-cut-mid-json" => {
            let text = format!("data: {ok}");
            let half = text.len() / 2;
            sse(
                vec![ev(&progress(token, 1)), Step::Send(text.as_bytes()[..half].to_vec())],
                Ending::Cut,
            )
        }
        "sse-close-without-final" => sse(vec![ev(&progress(token, 1))], Ending::Clean),
        "sse-final-without-blank-line" => sse(vec![Step::Send(format!("data: {ok}\n").into_bytes())], Ending::Clean),
        "sse-foreign-id-first" => sse(
            vec![ev(&json!({"jsonrpc": "2.0", "id": 424_242, "result": normal})), ev(&ok)],
            Ending::Clean,
        ),
        "sse-events-after-final" => sse(vec![ev(&ok), ev(&progress(token, 3))], Ending::Clean),
        "sse-server-request" => sse(
            vec![
                ev(&json!({"jsonrpc": "2.0", "id": "srv-1", "method": "sampling/createMessage", "params": {"messages": [], "maxTokens": 1}})),
                ev(&ok),
            ],
            Ending::Clean,
        ),
        "sse-keepalive-late-final" => sse(
            vec![
                Step::Send(b": keepalive\n\n".to_vec()),
                Step::Sleep(100),
                Step::Send(b": keepalive\n\n".to_vec()),
                Step::Sleep(100),
                Step::Send(b": keepalive\n\n".to_vec()),
                Step::Sleep(100),
                ev(&ok),
            ],
            Ending::Clean,
        ),
        "sse-drip" => sse(vec![Step::Drip(event(&ok))], Ending::Clean),
        "sse-priming-resume" => sse(vec![Step::Send(b"id: ev-1\nretry: 100\ndata:\n\n".to_vec())], Ending::Clean),
        "sse-cr-only" => sse(
            vec![Step::Send(
                format!("data: {}\r\rdata: {ok}\r\r", progress(token, 1)).into_bytes(),
            )],
            Ending::Clean,
        ),
        "sse-crlf-bom" => sse(
            vec![Step::Send(
                [
                    b"\xEF\xBB\xBF".to_vec(),
                    format!("event: message\r\ndata: {}\r\n\r\ndata:{ok}\r\n\r\n", progress(token, 1)).into_bytes(),
                ]
                .concat(),
            )],
            Ending::Clean,
        ),
        "sse-oversize-event" => {
            let big = text_result(&"x".repeat(100 * 1024), false, true);
            sse(vec![ev(&json!({"jsonrpc": "2.0", "id": id, "result": big}))], Ending::Clean)
        }
        "sse-never-ends" => sse(vec![], Ending::Hang),
        // The pause lets the client read the event before the reset discards unread data.
        "tcp-reset" => sse(vec![ev(&progress(token, 1)), Step::Sleep(50)], Ending::Reset),
        _ => return None,
    })
}
