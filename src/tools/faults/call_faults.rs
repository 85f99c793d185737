//! The call-level scenarios: one `tools/call` misbehaves on `/mcp/<name>`. Each entry holds its
//! name, its handler and the verdict it must produce (see [`super::scenarios`]).

use serde_json::json;

use super::replies::{
    body, busy, empty, ev, event, json, normal, progress_stream, sse, text_result,
};
use super::vocab::{Action, CallExpect, ClientStep, Ctx, Ending, Reply, Scenario, Step, expect};
use crate::vocab::call::RetryOrigin;
use crate::vocab::verdict::{Advice as A, Outcome as O};

/// Every call-level scenario, in a stable order.
pub fn all() -> Vec<Scenario> {
    let mut list = http_faults();
    list.extend(envelope_faults());
    list.extend(envelope_shapes());
    list.extend(stream_results());
    list.extend(stream_faults());
    list.extend(stream_strays());
    list.extend(stream_shapes());
    list.extend(intermediary_timing());
    list
}

fn success(events: Option<u64>) -> super::Expect {
    expect(O::ToolSuccess, A::None, 200, events)
}

fn sse_action(steps: Vec<Step>, ending: Ending) -> Action {
    Action::Reply(sse(steps, ending))
}

/// Faults in the HTTP status and content type.
fn http_faults() -> Vec<Scenario> {
    let s = Scenario::new;
    vec![
        s("ok", "no fault: echo answers with JSON", "echo", success(None), normal),
        s("http-400-header-mismatch", "400 with -32020 HeaderMismatch: rejected before dispatch", "pay",
          expect(O::HttpError, A::FixRequest, 400, None).code(-32020),
          |c| json(400, c.error(-32020, "Mcp-Name does not match params.name"))),
        s("http-404-method-not-found", "404 with -32601", "echo",
          expect(O::HttpError, A::FixRequest, 404, None).code(-32601),
          |c| json(404, c.error(-32601, "Method not found"))),
        s("http-404-session-expired", "2025-11-25: 404 on a request with a session id: the session is gone", "pay",
          expect(O::HttpError, A::Reinitialize, 404, None).code(-32001),
          |_| json(404, json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32001, "message": "Session not found"}})))
        .legacy(),
        s("http-429", "429 with Retry-After: 2", "pay", expect(O::HttpError, A::Retry, 429, None),
          |_| Action::Reply(busy(429, "2", "slow down"))),
        s("rate-limited-200", "200 with RateLimited -32023 and data.retryAfterMs 1500: a complete error, yet retry", "pay",
          expect(O::JsonrpcError, A::Retry, 200, None).code(-32023),
          |c| json(200, json!({"jsonrpc": "2.0", "id": c.id, "error": {"code": -32023, "message": "Rate limited",
                                                                   "data": {"retryAfterMs": 1500}}}))),
        s("http-500-success-body", "500 whose body is a success result: the status decides", "pay",
          expect(O::HttpError, A::DoNotRetry, 500, None), |c| json(500, c.ok())),
        s("http-503-read-only", "503 with Retry-After: 1 on a read-only tool: safe to retry", "lookup",
          expect(O::HttpError, A::Retry, 503, None), |_| Action::Reply(busy(503, "1", "unavailable"))),
        s("http-503-destructive", "503 on a destructive tool: it may have run, do not retry", "pay",
          expect(O::HttpError, A::DoNotRetry, 503, None), |_| Action::Reply(busy(503, "1", "unavailable"))),
        s("accepted-request", "202 with no body to a request", "pay",
          expect(O::UnexpectedAccepted, A::DoNotRetry, 202, None).rules(&["http.accepted_for_request"]),
          |_| Action::Reply(empty(202))),
        s("html-200", "an HTML page with 200 (a proxy's login page)", "lookup",
          expect(O::UnexpectedContentType, A::Retry, 200, None).rules(&["http.content_type"]),
          |_| Action::Reply(body(200, "text/html; charset=utf-8", b"<html><body>Please log in</body></html>"))),
        // Intermediary faults (issue 32): a gateway's own error page, imitated.
        s("gateway-html-502-slow", "nginx's own HTML 502 page after 300 ms (a gateway gave up on its upstream)", "pay",
          expect(O::HttpError, A::DoNotRetry, 502, None).made_by(crate::verdict::StatusOrigin::Intermediary),
          |_| Action::Reply(super::vocab::Reply::After { ms: 300, reply: Box::new(gateway_502()) })),
        s("slow-answer", "a correct answer after 1.5 s (a slow tool: behind a gateway with a 1 s timeout, a 504)", "lookup",
          success(None),
          |c| Action::Reply(super::vocab::Reply::After {
              ms: 1500,
              reply: Box::new(super::vocab::Reply::Body {
                  status: 200,
                  headers: vec![("Content-Type".into(), "application/json".into())],
                  body: c.ok().to_string().into_bytes(),
              }),
          })),
    ]
}

/// nginx's own 502 page, as Debian's nginx 1.22 writes it.
fn gateway_502() -> super::vocab::Reply {
    const PAGE: &[u8] = b"<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx/1.22.1</center>\r\n</body>\r\n</html>\r\n";
    super::vocab::Reply::Body {
        status: 502,
        headers: vec![
            ("Content-Type".into(), "text/html".into()),
            ("Server".into(), "nginx/1.22.1".into()),
        ],
        body: PAGE.to_vec(),
    }
}

fn malformed() -> super::Expect {
    expect(O::MalformedJson, A::DoNotRetry, 200, None).rules(&["jsonrpc.malformed"])
}

fn envelope(rule: &'static str) -> super::Expect {
    expect(O::InvalidEnvelope, A::DoNotRetry, 200, None).rules(&[rule])
}

/// Faults in the JSON-RPC error and the tool result.
fn envelope_faults() -> Vec<Scenario> {
    let s = Scenario::new;
    vec![
        s(
            "jsonrpc-error",
            "200 carrying a JSON-RPC error",
            "echo",
            expect(O::JsonrpcError, A::None, 200, None).code(-32602),
            |c| json(200, c.error(-32602, "Invalid params")),
        ),
        s(
            "tool-error",
            "isError: true",
            "fail",
            expect(O::ToolError, A::None, 200, None),
            normal,
        ),
        s(
            "invalid-tool-result",
            "content is a string, not an array",
            "echo",
            expect(O::InvalidToolResult, A::Retry, 200, None).rules(&["tool.content_not_array"]),
            |c| {
                json(
                    200,
                    json!({"jsonrpc": "2.0", "id": c.id, "result": {"resultType": "complete", "content": "not-an-array"}}),
                )
            },
        ),
        s(
            "malformed-json",
            "a body that is not JSON",
            "pay",
            malformed(),
            |_| {
                Action::Reply(body(
                    200,
                    "application/json",
                    b"{\"jsonrpc\": \"2.0\", \"id\": ",
                ))
            },
        ),
        s(
            "wrong-id",
            "the response carries another id",
            "pay",
            envelope("jsonrpc.id_mismatch"),
            |c| {
                json(
                    200,
                    json!({"jsonrpc": "2.0", "id": 99_999, "result": c.normal}),
                )
            },
        ),
    ]
}

/// Envelopes that break JSON-RPC: wrong ids, two responses, result with error; and MRTR.
fn envelope_shapes() -> Vec<Scenario> {
    let s = Scenario::new;
    vec![
        s(
            "id-wrong-type",
            "the response id is the string form of the request's number",
            "pay",
            envelope("jsonrpc.id_mismatch"),
            |c| {
                json(
                    200,
                    json!({"jsonrpc": "2.0", "id": c.id.to_string(), "result": c.normal}),
                )
            },
        ),
        s(
            "duplicate-response",
            "two responses concatenated in one JSON body",
            "pay",
            malformed(),
            |c| {
                let one = c.ok().to_string();
                Action::Reply(body(
                    200,
                    "application/json",
                    format!("{one}{one}").as_bytes(),
                ))
            },
        ),
        s(
            "result-and-error",
            "a response with both result and error",
            "pay",
            envelope("jsonrpc.result_and_error"),
            |c| {
                json(
                    200,
                    json!({"jsonrpc": "2.0", "id": c.id, "result": c.normal, "error": {"code": -32603, "message": "both"}}),
                )
            },
        ),
        s(
            "input-required",
            "MRTR: input_required, then the follow-up with a new id succeeds",
            "pay",
            expect(O::InputRequired, A::ResubmitWithInput, 200, None),
            input_required,
        )
        .then(ClientStep::Input, success(None)),
    ]
}

/// MRTR: asks for a confirmation until the round carries it.
fn input_required(c: &Ctx<'_>) -> Action {
    let answered = c.params.get("requestState").and_then(|s| s.as_str()) == Some("state-1")
        && c.params.pointer("/inputResponses/confirm").is_some();
    if answered {
        return Action::Normal;
    }
    json(200, ask_confirmation(c, "state-1"))
}

/// An `input_required` result asking to confirm, with `state`.
pub(super) fn ask_confirmation(c: &Ctx<'_>, state: &str) -> serde_json::Value {
    json!({"jsonrpc": "2.0", "id": c.id, "result": {
        "resultType": "input_required",
        "inputRequests": {"confirm": {"method": "elicitation/create", "params": {
            "mode": "form", "message": "Confirm the payment?",
            "requestedSchema": {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}}}},
        "requestState": state}})
}

/// Streams that end with the final response.
fn stream_results() -> Vec<Scenario> {
    let s = Scenario::new;
    vec![
        s(
            "sse-progress",
            "two progress notifications, then the result",
            "progress",
            success(Some(3)),
            |c| Action::Reply(progress_stream(c)),
        ),
        s(
            "sse-final-error",
            "progress, then a JSON-RPC error as the final response",
            "progress",
            expect(O::JsonrpcError, A::None, 200, Some(2)).code(-32603),
            |c| {
                sse_action(
                    vec![ev(&c.progress(1)), ev(&c.error(-32603, "Internal error"))],
                    Ending::Clean,
                )
            },
        ),
    ]
}

/// Streams that stop early, or end the final event wrongly.
fn stream_faults() -> Vec<Scenario> {
    let s = Scenario::new;
    let aborted = |advice, events| expect(O::StreamAborted, advice, 200, Some(events));
    vec![
        s(
            "sse-cut-between-events",
            "two progress events, then the connection breaks",
            "pay",
            aborted(A::DoNotRetry, 2),
            |c| sse_action(vec![ev(&c.progress(1)), ev(&c.progress(2))], Ending::Cut),
        ),
        s(
            "sse-cut-mid-event",
            "the connection breaks inside the final event's field name",
            "pay",
            aborted(A::DoNotRetry, 1).rules(&["sse.unterminated_event"]),
            |c| {
                sse_action(
                    vec![
                        ev(&c.progress(1)),
                        Step::Send(b"event: message\nda".to_vec()),
                    ],
                    Ending::Cut,
                )
            },
        ),
        s(
            "sse-cut-mid-json",
            "the connection breaks inside the final response's JSON",
            "lookup",
            aborted(A::Retry, 1).rules(&["sse.unterminated_event"]),
            |c| {
                let text = format!("data: {}", c.ok());
                let half = text.len() / 2;
                sse_action(
                    vec![
                        ev(&c.progress(1)),
                        Step::Send(text.as_bytes()[..half].to_vec()),
                    ],
                    Ending::Cut,
                )
            },
        ),
        s(
            "sse-close-without-final",
            "a progress event, then a clean end of stream with no response",
            "pay",
            aborted(A::DoNotRetry, 1).rules(&["sse.closed_before_response"]),
            |c| sse_action(vec![ev(&c.progress(1))], Ending::Clean),
        ),
        s(
            "sse-final-without-blank-line",
            "the final response without its closing blank line: never dispatched",
            "pay",
            aborted(A::DoNotRetry, 0)
                .rules(&["sse.closed_before_response", "sse.unterminated_event"]),
            |c| {
                sse_action(
                    vec![Step::Send(format!("data: {}\n", c.ok()).into_bytes())],
                    Ending::Clean,
                )
            },
        ),
    ]
}

/// Messages a stream should not carry: another id's response, a late notification, a server request.
fn stream_strays() -> Vec<Scenario> {
    let s = Scenario::new;
    vec![
        s(
            "sse-foreign-id-first",
            "a response for another id, then ours",
            "echo",
            success(Some(2)).rules(&["sse.foreign_id_response"]),
            |c| {
                sse_action(
                    vec![
                        ev(&json!({"jsonrpc": "2.0", "id": 424_242, "result": c.normal})),
                        ev(&c.ok()),
                    ],
                    Ending::Clean,
                )
            },
        ),
        s(
            "sse-events-after-final",
            "a notification after the final response",
            "echo",
            success(Some(2)).rules(&["sse.after_final"]),
            |c| sse_action(vec![ev(&c.ok()), ev(&c.progress(3))], Ending::Clean),
        ),
        s(
            "sse-server-request",
            "a server-to-client request on a 2026-07-28 stream",
            "echo",
            success(Some(2)).rules(&["sse.server_request"]),
            |c| {
                let ask = json!({"jsonrpc": "2.0", "id": "srv-1", "method": "sampling/createMessage",
                             "params": {"messages": [], "maxTokens": 1}});
                sse_action(vec![ev(&ask), ev(&c.ok())], Ending::Clean)
            },
        ),
    ]
}

/// How the bytes of a stream arrive: pauses, drips, line ends, sizes, endings.
fn stream_shapes() -> Vec<Scenario> {
    let s = Scenario::new;
    vec![
        s("sse-keepalive-late-final", "keep-alive comments for 300 ms, then the result", "echo", success(Some(1)),
          |c| {
            let mut steps = Vec::new();
            for _ in 0..3 {
                steps.extend([Step::Send(b": keepalive\n\n".to_vec()), Step::Sleep(100)]);
            }
            steps.push(ev(&c.ok()));
            sse_action(steps, Ending::Clean)
        }),
        s("sse-drip", "the result, one byte per chunk", "echo", success(Some(1)),
          |c| sse_action(vec![Step::Drip(event(&c.ok()))], Ending::Clean)),
        s("sse-priming-resume", "2025-11-25: priming event with retry: 100, close; GET with Last-Event-ID gets the result",
          "pay", expect(O::StreamAborted, A::Resume, 200, Some(0)), |c| Action::Park {
            reply: sse(vec![Step::Send(b"id: ev-1\nretry: 100\ndata:\n\n".to_vec())], Ending::Clean),
            key: "ev-1".into(),
            later: format!("id: ev-2\nevent: message\ndata: {}\n\n", c.ok()).into_bytes(),
        })
        .legacy()
        .then(ClientStep::Resume, success(Some(1))),
        s("sse-cr-only", "CR-only line ends (the final CR is the last byte)", "echo", success(Some(2)),
          |c| sse_action(vec![Step::Send(format!("data: {}\r\rdata: {}\r\r", c.progress(1), c.ok()).into_bytes())], Ending::Clean)),
        s("sse-crlf-bom", "CRLF line ends after a UTF-8 BOM", "echo", success(Some(2)), |c| {
            let text = format!("event: message\r\ndata: {}\r\n\r\ndata:{}\r\n\r\n", c.progress(1), c.ok());
            sse_action(vec![Step::Send([b"\xEF\xBB\xBF".to_vec(), text.into_bytes()].concat())], Ending::Clean)
        }),
        Scenario {
            client_max_event_bytes: Some(64 * 1024),
            ..s("sse-oversize-event", "a 100 KiB event against a 64 KiB client limit", "echo",
                expect(O::LimitExceeded, A::DoNotRetry, 200, Some(0)), |c| {
                let big = text_result(&"x".repeat(100 * 1024), false, true);
                sse_action(vec![ev(&json!({"jsonrpc": "2.0", "id": c.id, "result": big}))], Ending::Clean)
            })
        },
        Scenario {
            // Long enough for the handshake on a loaded machine; the stream never ends anyway.
            client_deadline_ms: Some(1_500),
            ..s("sse-never-ends", "keep-alive comments forever: the client's deadline ends it", "lookup",
                expect(O::TimedOut, A::Retry, 200, Some(0)), |_| sse_action(vec![], Ending::Hang))
        },
        // The pause lets the client read the event before the reset discards unread data.
        s("tcp-reset", "one progress event, then a TCP reset", "pay", expect(O::StreamAborted, A::DoNotRetry, 200, Some(1)),
          |c| sse_action(vec![ev(&c.progress(1)), Step::Sleep(50)], Ending::Reset)),
    ]
}

/// What an intermediary's timing does to a stream, imitated by the server itself: a proxy that
/// buffers the stream (everything at once at the end), and a load balancer's idle timeout
/// (every silent stream cut after the same time). `sse-progress-spread` is the honest stream
/// the nginx tests put a real buffering proxy in front of.
fn intermediary_timing() -> Vec<Scenario> {
    let s = Scenario::new;
    let aborted = expect(O::StreamAborted, A::Retry, 200, Some(1));
    vec![
        s("sse-buffered", "a buffering proxy: three progress events and the result all at once after 1.2 s",
          "progress", success(Some(4)).rules(&["sse.buffered"]), |c| {
            let all = [event(&c.progress(1)), event(&c.progress(2)), event(&c.progress(3)), event(&c.ok())];
            Action::Reply(Reply::SseBufferable {
                steps: vec![Step::Sleep(1_200), Step::Send(all.concat())],
                ending: Ending::Clean,
            })
        }),
        s("sse-progress-spread", "progress every 500 ms, then the result, without X-Accel-Buffering: no (a proxy may buffer it)",
          "progress", success(Some(4)), |c| {
            let mut steps = Vec::new();
            for n in 1..=3 {
                steps.extend([ev(&c.progress(n)), Step::Sleep(500)]);
            }
            steps.push(ev(&c.ok()));
            Action::Reply(Reply::SseBufferable { steps, ending: Ending::Clean })
        }),
        s("sse-idle-cut", "an idle timeout: one progress event, then silence, cut after 1.5 s; re-sent twice, cut the same",
          "lookup", aborted.clone(), |c| sse_action(vec![ev(&c.progress(1)), Step::Sleep(1_500)], Ending::Cut))
        .then(ClientStep::Resend, aborted.clone())
        .then(ClientStep::Resend, aborted.rules(&["sse.idle_cut"]))
        .calls(vec![
            CallExpect::new(Some("tools/call"), &[200, 200, 200], 3, O::StreamAborted)
                .origin(RetryOrigin::Automatic)
                .rules(&["sse.idle_cut"]),
        ]),
    ]
}
