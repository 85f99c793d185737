//! What probe answers a server's requests with: `elicitation/create` (decline by default;
//! `--elicit`), `sampling/createMessage` (a fixed assistant text when `--elicit accept`, else
//! refused), `roots/list` (no roots), `ping`. The same answers fill the `inputResponses` of a
//! 2026-07-28 input-required result (MRTR) and of a task waiting for input.

use serde_json::{Map, Value, json};

use crate::args::ElicitArg;

/// The capabilities probe declares: the kinds of server request it answers.
pub(crate) fn capabilities() -> Value {
    json!({"elicitation": {}, "sampling": {}, "roots": {}})
}

/// The text `sampling/createMessage` gets when probe consents (`--elicit accept`).
pub(crate) const SAMPLING_TEXT: &str = "mcp-verdict probe: a fixed sampling answer";

/// The JSON-RPC response to the server request `request` (a message with `method` and `id`).
pub(crate) fn response_to(request: &Value, elicit: ElicitArg) -> Value {
    let id = request.get("id").cloned().unwrap_or(Value::Null);
    let method = request.get("method").and_then(Value::as_str).unwrap_or("");
    let params = request.get("params").unwrap_or(&Value::Null);
    match result_for(method, params, elicit) {
        Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
        Err((code, message)) => {
            json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
        }
    }
}

/// `inputResponses` for an `inputRequests` map (key → `{method, params}`): one answer per key
/// that probe answers with a result; a refused request is left out (the server asks again or
/// fails the call, as it would with a user who said no).
pub(crate) fn input_responses(requests: &Value, elicit: ElicitArg) -> Value {
    let mut out = Map::new();
    for (key, req) in requests.as_object().into_iter().flatten() {
        let method = req.get("method").and_then(Value::as_str).unwrap_or("");
        let params = req.get("params").unwrap_or(&Value::Null);
        if let Ok(result) = result_for(method, params, elicit) {
            out.insert(key.clone(), result);
        }
    }
    Value::Object(out)
}

/// The result for one server request, or the JSON-RPC error probe answers with.
fn result_for(method: &str, params: &Value, elicit: ElicitArg) -> Result<Value, (i64, String)> {
    match method {
        "elicitation/create" => Ok(match elicit {
            ElicitArg::Accept => json!({
                "action": "accept",
                "content": content_for(params.get("requestedSchema").unwrap_or(&Value::Null)),
            }),
            ElicitArg::Decline => json!({"action": "decline"}),
            ElicitArg::Cancel => json!({"action": "cancel"}),
        }),
        "sampling/createMessage" if elicit == ElicitArg::Accept => Ok(json!({
            "role": "assistant",
            "content": {"type": "text", "text": SAMPLING_TEXT},
            "model": "mcp-verdict-probe",
            "stopReason": "endTurn",
        })),
        // The spec's example of a user refusing a sampling request.
        "sampling/createMessage" => Err((-1, "User rejected sampling request".into())),
        "roots/list" => Ok(json!({"roots": []})),
        "ping" => Ok(json!({})),
        _ => Err((-32601, format!("Method not found: {method}"))),
    }
}

/// Accepted elicitation content: every property's `default` (SEP-1034: the client applies the
/// schema's defaults), and for a required property without one, a minimal valid value.
fn content_for(schema: &Value) -> Value {
    let mut content = match crate::tool_args::arguments_for(schema) {
        Value::Object(m) => m,
        _ => Map::new(),
    };
    for (name, prop) in schema
        .get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        if let Some(d) = prop.get("default") {
            content.insert(name.clone(), d.clone());
        }
    }
    Value::Object(content)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elicitation_follows_the_flag_and_fills_defaults() {
        let req = json!({"jsonrpc": "2.0", "id": 7, "method": "elicitation/create", "params": {
            "message": "m", "requestedSchema": {"type": "object", "properties": {
                "name": {"type": "string", "default": "John"},
                "age": {"type": "integer"},
                "ok": {"type": "boolean"}}, "required": ["ok"]}}});
        let r = response_to(&req, ElicitArg::Accept);
        assert_eq!(r["id"], 7);
        assert_eq!(r["result"]["action"], "accept");
        assert_eq!(r["result"]["content"]["name"], "John");
        assert!(r["result"]["content"]["ok"].is_boolean());
        assert!(
            r["result"]["content"].get("age").is_none(),
            "optional, no default"
        );
        let r = response_to(&req, ElicitArg::Decline);
        assert_eq!(r["result"], json!({"action": "decline"}));
        let r = response_to(&req, ElicitArg::Cancel);
        assert_eq!(r["result"], json!({"action": "cancel"}));
    }

    #[test]
    fn sampling_roots_and_unknown_methods() {
        let s = json!({"id": "s", "method": "sampling/createMessage", "params": {}});
        assert_eq!(
            response_to(&s, ElicitArg::Accept)["result"]["content"]["text"],
            SAMPLING_TEXT
        );
        assert_eq!(response_to(&s, ElicitArg::Decline)["error"]["code"], -1);
        let r = json!({"id": 1, "method": "roots/list"});
        assert_eq!(
            response_to(&r, ElicitArg::Decline)["result"],
            json!({"roots": []})
        );
        let u = json!({"id": 2, "method": "nope"});
        assert_eq!(response_to(&u, ElicitArg::Accept)["error"]["code"], -32601);
    }

    #[test]
    fn input_responses_keep_the_keys_and_leave_out_refusals() {
        let reqs = json!({
            "confirm": {"method": "elicitation/create", "params": {"requestedSchema": {}}},
            "roots": {"method": "roots/list"},
            "llm": {"method": "sampling/createMessage", "params": {}},
        });
        let out = input_responses(&reqs, ElicitArg::Decline);
        assert_eq!(out["confirm"], json!({"action": "decline"}));
        assert_eq!(out["roots"], json!({"roots": []}));
        assert!(out.get("llm").is_none());
        assert_eq!(input_responses(&json!(null), ElicitArg::Accept), json!({}));
    }
}
