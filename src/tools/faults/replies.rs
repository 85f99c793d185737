//! The building blocks the scenarios' handlers answer with: JSON bodies, SSE events, progress
//! notifications, tool results. No scenario names here; each handler lives with its scenario.

use serde_json::{Value, json};

/// What a handler is given; vocabulary, reachable here with the builders as before.
pub use super::vocab::Ctx;
use super::vocab::{Action, Ending, Reply, Step};

/// One SSE event carrying `message`.
pub fn event(message: &Value) -> Vec<u8> {
    format!("event: message\ndata: {message}\n\n").into_bytes()
}

/// A step sending one event carrying `message`.
pub fn ev(message: &Value) -> Step {
    Step::Send(event(message))
}

/// A `CallToolResult` with one text item.
pub fn text_result(text: &str, is_error: bool, stateless: bool) -> Value {
    let mut r = json!({"content": [{"type": "text", "text": text}], "isError": is_error});
    if stateless {
        r["resultType"] = json!("complete");
    }
    r
}

/// A complete body: `status`, `Content-Type: content_type`.
pub fn body(status: u16, content_type: &str, body: &[u8]) -> Reply {
    Reply::Body {
        status,
        headers: vec![("Content-Type".into(), content_type.into())],
        body: body.to_vec(),
    }
}

/// A JSON body with `status`.
pub fn json_body(status: u16, value: &Value) -> Reply {
    body(status, "application/json", value.to_string().as_bytes())
}

/// A status with no body and no headers.
pub fn empty(status: u16) -> Reply {
    Reply::Body {
        status,
        headers: Vec::new(),
        body: Vec::new(),
    }
}

/// A plain-text body with `Retry-After: after`.
pub fn busy(status: u16, after: &str, text: &str) -> Reply {
    let mut reply = body(status, "text/plain", text.as_bytes());
    if let Reply::Body { headers, .. } = &mut reply {
        headers.insert(0, ("Retry-After".into(), after.into()));
    }
    reply
}

/// An SSE reply.
pub fn sse(steps: Vec<Step>, ending: Ending) -> Reply {
    Reply::Sse { steps, ending }
}

/// Two progress events, then the result: what a `progress` call with a token gets.
pub fn progress_stream(c: &Ctx<'_>) -> Reply {
    sse(
        vec![ev(&c.progress(1)), ev(&c.progress(2)), ev(&c.ok())],
        Ending::Clean,
    )
}

/// The ordinary answer: [`Action::Normal`] (for scenarios whose fault is elsewhere).
pub fn normal(_: &Ctx<'_>) -> Action {
    Action::Normal
}

/// An `Action` that replies with `value` as a JSON body with `status`.
pub fn json(status: u16, value: Value) -> Action {
    Action::Reply(json_body(status, &value))
}
