//! Faults on methods other than `tools/call`: the scenario's first call is a `resources/read`
//! or a `prompts/get` ([`Scenario::on_method`]), which misbehaves on `/mcp/<name>` while every
//! tool call there stays correct. Each entry holds its handler and the verdict it must produce.

use serde_json::json;

use super::replies::{json, sse};
use super::vocab::{Action, Ending, Scenario, Step, expect};
use crate::vocab::verdict::{Advice as A, Outcome as O};

/// Every method-level scenario, in a stable order.
pub fn all() -> Vec<Scenario> {
    vec![
        Scenario::new(
            "resource-read-cut",
            "resources/read answered on an SSE stream cut mid-event, before the result",
            "test://static-text",
            // A read is safe to repeat: `retry`, unlike a cut `tools/call` of a destructive tool.
            expect(O::StreamAborted, A::Retry, 200, Some(0)).rules(&["sse.unterminated_event"]),
            |c| {
                let event = format!("event: message\ndata: {}", c.ok());
                let half = event.len() / 2;
                Action::Reply(sse(
                    vec![Step::Send(event.as_bytes()[..half].to_vec())],
                    Ending::Cut,
                ))
            },
        )
        .on_method("resources/read"),
        Scenario::new(
            "prompt-bad-shape",
            "prompts/get result whose message has no role and whose content is a string",
            "test_simple_prompt",
            // The result arrived whole: a complete answer whose shape breaks MUSTs of
            // `PromptMessage` (the outcome stays SUCCESS; a re-send would get the same).
            expect(O::Success, A::None, 200, None)
                .rules(&["shape.missing_member", "shape.wrong_type"]),
            |c| {
                let mut bad = c.normal.clone();
                bad["messages"] = json!([{"content": "This is a simple prompt for testing."}]);
                json(200, json!({"jsonrpc": "2.0", "id": c.id, "result": bad}))
            },
        )
        .on_method("prompts/get"),
    ]
}
