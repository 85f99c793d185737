//! Faults of the 2026-07-28 additions: a task that never ends, a task gone before its end, a
//! task that fails, and a server whose `server/discover` advertises a revision it then refuses.
//! The task scenarios answer the first `tools/call` with a task handle; their polls are answered
//! by [`super::tasks::fault_poll`] (the fault is the poll's answer, so no store is needed).

use serde_json::{Value, json};

use super::replies::{body, json};
use super::tasks;
use super::vocab::{Action, CallExpect, ClientStep as Do, Ctx, Reply, Scenario, expect};
use crate::vocab::call::RetryOrigin;
use crate::vocab::verdict::{Advice as A, Outcome as O};

/// The scenario whose server refuses every request but `server/discover`.
pub(crate) const DISCOVER_REFUSED: &str = "discover-refused";

/// Every scenario here, in a stable order.
pub fn all() -> Vec<Scenario> {
    let deferred = || expect(O::Deferred, A::Poll, 200, None);
    // A poll that got an answer is a success whatever the task's status: the call says the rest.
    let answered = || expect(O::Success, A::None, 200, None);
    let poll = |statuses: &[u16], outcome: O| {
        CallExpect::new(Some("tools/call"), statuses, statuses.len() as u32, outcome)
            .origin(RetryOrigin::Poll)
    };
    vec![
        Scenario::new(
            "task-never-terminal",
            "a task handle, then `working` on every tasks/get: the call never ends",
            "lookup",
            deferred(),
            handle,
        )
        .then(Do::Poll, answered())
        .then(Do::Poll, answered())
        .then(Do::Poll, answered())
        .calls(vec![incomplete(poll(&[200, 200, 200, 200], O::Deferred))]),
        Scenario::new(
            "task-expired",
            "a task handle, then tasks/get answers -32602: the task is unknown or expired",
            "lookup",
            deferred(),
            handle,
        )
        .then(
            Do::Poll,
            expect(O::JsonrpcError, A::None, 200, None).code(-32602),
        )
        .calls(vec![incomplete(poll(&[200, 200], O::JsonrpcError))]),
        Scenario::new(
            "task-failed",
            "a task handle, then tasks/get reports `failed` with error -32603",
            "lookup",
            deferred(),
            handle,
        )
        .then(Do::Poll, answered())
        .calls(vec![poll(&[200, 200], O::JsonrpcError)]),
        Scenario::new(
            DISCOVER_REFUSED,
            "server/discover advertises 2026-07-28, then every request under it gets a plain 400",
            "lookup",
            expect(O::HttpError, A::FixRequest, 400, None),
            |_| Action::Reply(refusal()),
        )
        .lists(
            expect(O::HttpError, A::FixRequest, 400, None)
                .rules(&["server.discover_version_refused"]),
        ),
    ]
}

/// A call whose task's end is unknown (still working, or its poll failed): incomplete.
fn incomplete(mut c: CallExpect) -> CallExpect {
    c.complete = false;
    c
}

/// The task handle every task fault answers its first call with.
fn handle(c: &Ctx<'_>) -> Action {
    let id = format!("fault-task-{}", id_text(c.id));
    json(
        200,
        json!({"jsonrpc": "2.0", "id": c.id, "result": tasks::handle(&id)}),
    )
}

fn id_text(id: &Value) -> String {
    match id {
        Value::String(s) => s.clone(),
        v => v.to_string(),
    }
}

/// What a legacy-looking refusal is: 400 with a body that is no JSON-RPC error.
pub(crate) fn refusal() -> Reply {
    body(400, "text/plain", b"Bad Request")
}
