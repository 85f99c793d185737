//! The session-level scenarios: faults that need more than one exchange to show (a server request
//! and the client's answer, a `DELETE`, an expired session, a listen or resumed stream, MRTR
//! rounds, a re-send). Each entry holds the server's handlers, the client's steps after the first
//! `tools/call`, every verdict and the logical calls (see [`super::scenarios`]).

use serde_json::{Value, json};

use super::call_faults::ask_confirmation;
use super::replies::{empty, ev, normal, sse, text_result};
use super::vocab::{Action, CallExpect, ClientStep as Do, Ctx, Ending, Scenario, Step, expect};
use crate::vocab::call::RetryOrigin;
use crate::vocab::verdict::{Advice as A, Outcome as O};

/// Every session-level scenario, in a stable order.
pub fn all() -> Vec<Scenario> {
    let mut list = server_requests();
    list.extend(session_ends());
    list.extend(streams());
    list.extend(repeats());
    list
}

/// The elicitation the server asks on the call's stream, with id `srv-1`.
fn confirm_request() -> Value {
    json!({"jsonrpc": "2.0", "id": "srv-1", "method": "elicitation/create", "params": {
        "mode": "form", "message": "Confirm the payment?",
        "requestedSchema": {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}}})
}

/// The SSE priming event of a resumable 2025-11-25 stream: an id, `retry: 100`, no data.
fn priming(id: &str) -> Step {
    Step::Send(format!("id: {id}\nretry: 100\ndata:\n\n").into_bytes())
}

fn call(method: &'static str, statuses: &[u16], posts: u32, outcome: O) -> CallExpect {
    CallExpect::new(Some(method), statuses, posts, outcome)
}

fn tools_call(statuses: &[u16], posts: u32, outcome: O) -> CallExpect {
    call("tools/call", statuses, posts, outcome)
}

/// What the server ends with when no answer to `srv-1` came in time.
fn gave_up(c: &Ctx<'_>) -> Value {
    json!({"jsonrpc": "2.0", "id": c.id,
           "result": text_result("not confirmed: nothing paid", true, false)})
}

/// The server asks `srv-1` and waits for the answer on the same session, up to `ms`.
fn asks_and_waits(ms: u64, then: Value) -> Action {
    let steps = vec![
        ev(&confirm_request()),
        Step::AwaitAnswer("srv-1", ms),
        ev(&then),
    ];
    Action::Reply(sse(steps, Ending::Clean))
}

/// A server request answered while the stream waits (the correct flow, for contrast), never
/// answered, or answered with another id.
fn server_requests() -> Vec<Scenario> {
    let accepted = || expect(O::NotificationAccepted, A::None, 202, None);
    vec![
        Scenario::new(
            "server-request-answered",
            "2025-11-25: no fault: elicitation/create on the call's stream, answered while the server waits",
            "pay",
            expect(O::ToolSuccess, A::None, 200, Some(2)),
            |c| asks_and_waits(5_000, c.ok()),
        )
        .legacy()
        .then(Do::AnswerDuring("srv-1"), accepted())
        .calls(vec![tools_call(&[200, 202], 2, O::ToolSuccess)]),
        Scenario::new(
            "server-request-unanswered",
            "2025-11-25: the server asks elicitation/create and waits 300 ms; the client never answers",
            "pay",
            expect(O::ToolError, A::None, 200, Some(2)),
            |c| asks_and_waits(300, gave_up(c)),
        )
        .legacy()
        .calls(vec![tools_call(&[200], 1, O::ToolError).rules(&["call.server_request_unanswered"])]),
        Scenario::new(
            "server-request-wrong-id",
            "2025-11-25: the client answers the server's elicitation/create srv-1 with id srv-9; the server gives up",
            "pay",
            expect(O::ToolError, A::None, 200, Some(2)),
            |c| asks_and_waits(300, gave_up(c)),
        )
        .legacy()
        .then(Do::AnswerDuring("srv-9"), accepted().rules(&["session.response_unknown_id"]))
        .calls(vec![
            tools_call(&[200], 1, O::ToolError).rules(&["call.server_request_unanswered"]),
            CallExpect::new(None, &[202], 1, O::NotificationAccepted),
        ]),
    ]
}

/// `DELETE` refused (405 is allowed, 500 is not), and a session that expires mid-call.
fn session_ends() -> Vec<Scenario> {
    let then_lookup = |s: Scenario| {
        s.then(
            Do::Call("lookup"),
            expect(O::ToolSuccess, A::None, 200, None),
        )
    };
    vec![
        then_lookup(
            Scenario::new("delete-405", "2025-11-25: DELETE is answered 405 (allowed): the session stays", "echo",
                          expect(O::ToolSuccess, A::None, 200, None), normal)
            .legacy()
            .then(Do::Delete, expect(O::MethodNotAllowed, A::None, 405, None)),
        )
        .calls(vec![
            tools_call(&[200], 1, O::ToolSuccess),
            CallExpect::new(None, &[405], 0, O::MethodNotAllowed),
            tools_call(&[200], 1, O::ToolSuccess),
        ])
        .deletes(|| {
            let mut r = empty(405);
            if let super::Reply::Body { headers, .. } = &mut r {
                headers.push(("Allow".into(), "GET, POST".into()));
            }
            r
        }),
        then_lookup(
            Scenario::new("delete-500", "2025-11-25: DELETE fails with 500: the session may or may not be gone", "echo",
                          expect(O::ToolSuccess, A::None, 200, None), normal)
            .legacy()
            .then(Do::Delete, expect(O::HttpError, A::Retry, 500, None)),
        )
        .calls(vec![
            tools_call(&[200], 1, O::ToolSuccess),
            CallExpect::new(None, &[500], 0, O::HttpError),
            tools_call(&[200], 1, O::ToolSuccess),
        ])
        .deletes(|| super::replies::body(500, "text/plain", b"could not end the session")),
        Scenario::new(
            "session-expires-mid-call",
            "2025-11-25: the session expires while the call streams; the re-sent call gets 404 -32001",
            "lookup",
            expect(O::StreamAborted, A::Retry, 200, Some(1)),
            |c: &Ctx<'_>| Action::Expire(sse(vec![ev(&c.progress(1))], Ending::Cut)),
        )
        .legacy()
        .then(Do::Resend, expect(O::HttpError, A::Reinitialize, 404, None).code(-32001))
        .calls(vec![tools_call(&[200, 404], 2, O::HttpError).origin(RetryOrigin::Automatic)]),
    ]
}

/// A listen stream that carries a response; resumptions that go wrong.
fn streams() -> Vec<Scenario> {
    vec![
        Scenario::new(
            "listen-carries-response",
            "2025-11-25: the standalone GET stream carries a JSON-RPC response",
            "echo",
            expect(O::ToolSuccess, A::None, 200, None),
            normal,
        )
        .legacy()
        .then(Do::Listen, expect(O::Listening, A::None, 200, Some(1)).rules(&["listen.response"]))
        .calls(vec![
            tools_call(&[200], 1, O::ToolSuccess),
            CallExpect::new(None, &[200], 0, O::Listening),
        ])
        .gets(|_| {
            let stray = json!({"jsonrpc": "2.0", "id": 0, "result": {}});
            sse(vec![ev(&stray)], Ending::Clean)
        }),
        Scenario::new(
            "resume-wrong-events",
            "2025-11-25: the resumed stream replays another stream's events (its response, its progress)",
            "pay",
            expect(O::StreamAborted, A::Resume, 200, Some(0)),
            |c| Action::Park {
                reply: sse(vec![priming("wrong-1")], Ending::Clean),
                key: "wrong-1".into(),
                later: foreign_events(c),
            },
        )
        .legacy()
        .then(
            Do::Resume,
            // Another stream's messages break MUSTs of this one: the protocol layer failed.
            expect(O::InvalidEnvelope, A::DoNotRetry, 200, Some(2))
                .rules(&["progress.token_mismatch", "sse.foreign_id_response", "sse.retry_missing"]),
        )
        .calls(vec![tools_call(&[200, 200], 1, O::InvalidEnvelope).origin(RetryOrigin::Resume)]),
        Scenario::new(
            "resume-without-last-event-id",
            "2025-11-25: the stream primes an event id and closes; the client GETs without Last-Event-ID",
            "pay",
            expect(O::StreamAborted, A::Resume, 200, Some(0)),
            |c| Action::Park {
                reply: sse(vec![priming("nolei-1")], Ending::Clean),
                key: "nolei-1".into(),
                later: format!("id: nolei-2\nevent: message\ndata: {}\n\n", c.ok()).into_bytes(),
            },
        )
        .legacy()
        .then(Do::ResumeWithoutId, expect(O::Listening, A::None, 200, Some(0)))
        .calls(vec![tools_call(&[200, 200], 1, O::StreamAborted)
            .origin(RetryOrigin::Resume)
            .rules(&["call.resume_without_last_event_id"])])
        .gets(|_| sse(vec![Step::Send(b": listening\n\n".to_vec())], Ending::Clean)),
    ]
}

/// Events of another request's stream: its progress and its response.
fn foreign_events(c: &Ctx<'_>) -> Vec<u8> {
    let progress = json!({"jsonrpc": "2.0", "method": "notifications/progress",
                          "params": {"progressToken": "other-token", "progress": 3, "total": 3}});
    let response = json!({"jsonrpc": "2.0", "id": 424_242, "result": c.normal});
    format!("id: other-6\nevent: message\ndata: {progress}\n\nid: other-7\nevent: message\ndata: {response}\n\n")
        .into_bytes()
}

/// Rounds that never end, and a re-send that may run a payment twice.
fn repeats() -> Vec<Scenario> {
    let asked = || expect(O::InputRequired, A::ResubmitWithInput, 200, None);
    vec![
        Scenario::new(
            "mrtr-never-completes",
            "MRTR: every round answers input_required again; the client gives up after three rounds",
            "pay",
            asked(),
            |c| super::replies::json(200, ask_confirmation(c, "state-1")),
        )
        .then(Do::Input, asked())
        .then(Do::Input, asked())
        .then(Do::Input, asked())
        .calls(vec![tools_call(&[200, 200, 200, 200], 4, O::InputRequired).origin(RetryOrigin::Input)]),
        Scenario::new(
            "resent-after-cut",
            "2025-11-25: the pay stream is cut after progress; the client re-sends the call, which runs again",
            "pay",
            expect(O::StreamAborted, A::DoNotRetry, 200, Some(1)),
            |c| Action::First(sse(vec![ev(&c.progress(1))], Ending::Cut)),
        )
        .legacy()
        .then(Do::Resend, expect(O::ToolSuccess, A::None, 200, None))
        .calls(vec![tools_call(&[200, 200], 2, O::ToolSuccess)
            .origin(RetryOrigin::Automatic)
            .rules(&["call.double_execution_risk"])]),
    ]
}
