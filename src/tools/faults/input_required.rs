//! Input-required results (MRTR, SEP-2322) on the correct endpoint: the fixture tools and the
//! prompt the conformance suite's `input-required-result-*` scenarios call by name. A first call
//! answers `resultType: "input_required"` with `inputRequests` (and, where the round needs it, a
//! `requestState`); the retry carrying `inputResponses` (and that state) completes.
//!
//! Stateless by design: what a round needs travels in `requestState`, made tamper-evident with a
//! keyed hash (SipHash under a per-process random key), so a forged or edited state is refused
//! (-32602) and nothing is stored between rounds.

use std::collections::hash_map::RandomState;
use std::hash::BuildHasher;
use std::sync::OnceLock;

use serde_json::{Map, Value, json};

use super::replies::text_result;
use super::tasks::{self, Answer, Plan, TaskStore, elicit, error, ok};

/// The prompt of `input-required-result-non-tool-request`.
pub(crate) const PROMPT: &str = "test_input_required_result_prompt";

/// `requestState` for `payload`: the payload, a dot, its keyed hash.
fn sign(payload: &str) -> String {
    static KEY: OnceLock<RandomState> = OnceLock::new();
    let mac = KEY.get_or_init(RandomState::new).hash_one(payload);
    format!("{payload}.{mac:016x}")
}

/// The payload of a `requestState` this server signed; `None` when it was altered.
fn verify(state: &str) -> Option<&str> {
    let (payload, _) = state.rsplit_once('.')?;
    (sign(payload) == state).then_some(payload)
}

fn sampling(text: &str, max_tokens: u32) -> Value {
    json!({"method": "sampling/createMessage", "params": {
        "messages": [{"role": "user", "content": {"type": "text", "text": text}}],
        "maxTokens": max_tokens}})
}

fn roots() -> Value {
    json!({"method": "roots/list", "params": {}})
}

/// An `InputRequiredResult`.
fn input_required(asks: Vec<(&str, Value)>, state: Option<String>) -> Value {
    let asks: Map<String, Value> = asks.into_iter().map(|(k, v)| (k.to_owned(), v)).collect();
    let mut r = json!({"resultType": "input_required", "inputRequests": asks});
    if let Some(s) = state {
        r["requestState"] = json!(s);
    }
    r
}

/// The request's answers: `Ok(None)` on a first round, `Err` when `inputResponses` is there but
/// not an object, or when one of the `needed` answers is not an object (a protocol error).
fn answers<'a>(params: &'a Value, needed: &[&str]) -> Result<Option<&'a Map<String, Value>>, ()> {
    match params.get("inputResponses") {
        None => Ok(None),
        Some(Value::Object(m)) => {
            let bad = needed
                .iter()
                .any(|k| m.get(*k).is_some_and(|a| !a.is_object()));
            if bad { Err(()) } else { Ok(Some(m)) }
        }
        Some(_) => Err(()),
    }
}

fn bad_input(id: &Value) -> Answer {
    error(
        id,
        -32602,
        "inputResponses must be an object of response objects",
    )
}

/// `content.<field>` of an elicitation answer, as text.
fn field(answers: &Map<String, Value>, key: &str, field: &str) -> String {
    match answers
        .get(key)
        .and_then(|a| a.pointer(&format!("/content/{field}")))
    {
        Some(Value::String(s)) => s.clone(),
        Some(v) => v.to_string(),
        None => String::new(),
    }
}

/// The fixtures' `tools/list` entries: they ask for input, so they carry no annotations (MCP's
/// defaults: destructive) and `probe --all-tools` calls them only with `--include-destructive`.
pub(crate) fn tools() -> impl Iterator<Item = Value> {
    [
        "test_input_required_result_elicitation",
        "test_input_required_result_sampling",
        "test_input_required_result_list_roots",
        "test_input_required_result_request_state",
        "test_input_required_result_multiple_inputs",
        "test_input_required_result_multi_round",
        "test_input_required_result_tampered_state",
        "test_input_required_result_capabilities",
        "test_tool_with_task",
    ]
    .into_iter()
    .map(|name| {
        json!({"name": name,
               "description": "MRTR fixture: answers input_required first, completes on the retry with inputResponses.",
               "inputSchema": {"type": "object", "properties": {}}})
    })
}

/// One round of a fixture whose answers are all asked at once: the asks, the state (when the
/// fixture carries one), and the text once every answer is in.
fn one_round(
    id: &Value,
    params: &Value,
    asks: Vec<(&str, Value)>,
    state: Option<&str>,
    done: impl FnOnce(&Map<String, Value>) -> String,
) -> Answer {
    let keys: Vec<&str> = asks.iter().map(|(k, _)| *k).collect();
    let Ok(got) = answers(params, &keys) else {
        return bad_input(id);
    };
    let signed = state.map(sign);
    let Some(got) = got else {
        return ok(id, input_required(asks, signed));
    };
    if let Some(want) = state {
        let echoed = params.get("requestState").and_then(Value::as_str);
        if echoed.and_then(verify) != Some(want) {
            return error(
                id,
                -32602,
                "requestState is missing or failed its integrity check",
            );
        }
    }
    let missing: Vec<(&str, Value)> = asks
        .into_iter()
        .filter(|(k, _)| !got.contains_key(*k))
        .collect();
    if !missing.is_empty() {
        return ok(id, input_required(missing, signed));
    }
    ok(id, text_result(&done(got), false, true))
}

/// A `tools/call` of an MRTR fixture: `None` when `tool` is not one. `test_tool_with_task`
/// escalates to a task (in `store`) once its input is in.
pub(crate) fn call(store: &TaskStore, tool: &str, id: &Value, params: &Value) -> Option<Answer> {
    let name = || elicit("What is your name?", "name", "string");
    let confirm = || elicit("Please confirm", "ok", "boolean");
    Some(match tool {
        "test_input_required_result_elicitation" => {
            one_round(id, params, vec![("user_name", name())], None, |a| {
                format!("Hello, {}!", field(a, "user_name", "name"))
            })
        }
        "test_input_required_result_sampling" => {
            let ask = sampling("What is the capital of France?", 100);
            one_round(id, params, vec![("capital_question", ask)], None, |a| {
                let said = a
                    .get("capital_question")
                    .and_then(|r| r.pointer("/content/text"));
                format!(
                    "The model said: {}",
                    said.and_then(Value::as_str).unwrap_or("")
                )
            })
        }
        "test_input_required_result_list_roots" => {
            one_round(id, params, vec![("client_roots", roots())], None, |a| {
                let list = a
                    .get("client_roots")
                    .and_then(|r| r.get("roots"))
                    .and_then(Value::as_array);
                let uris: Vec<&str> = list
                    .into_iter()
                    .flatten()
                    .filter_map(|r| r["uri"].as_str())
                    .collect();
                format!("Roots: {}", uris.join(", "))
            })
        }
        "test_input_required_result_request_state"
        | "test_input_required_result_tampered_state" => {
            one_round(id, params, vec![("confirm", confirm())], Some(tool), |_| {
                "state-ok: the requestState came back intact".into()
            })
        }
        "test_input_required_result_multiple_inputs" => {
            let asks = vec![
                ("user_name", name()),
                ("greeting", sampling("Generate a greeting", 50)),
                ("client_roots", roots()),
            ];
            one_round(id, params, asks, Some(tool), |a| {
                format!(
                    "Hello, {}! All three inputs arrived.",
                    field(a, "user_name", "name")
                )
            })
        }
        "test_input_required_result_multi_round" => multi_round(id, params),
        "test_input_required_result_capabilities" => {
            let caps = params.pointer("/_meta/io.modelcontextprotocol~1clientCapabilities");
            let has = |c: &str| caps.and_then(|v| v.get(c)).is_some();
            let mut asks = Vec::new();
            if has("elicitation") {
                asks.push(("user_name", name()));
            }
            if has("sampling") {
                asks.push((
                    "capital_question",
                    sampling("What is the capital of France?", 100),
                ));
            }
            if has("roots") {
                asks.push(("client_roots", roots()));
            }
            if asks.is_empty() {
                return Some(ok(
                    id,
                    text_result("no input the client can give: done without", false, true),
                ));
            }
            one_round(id, params, asks, None, |_| {
                "done with the inputs the client can give".into()
            })
        }
        "test_tool_with_task" => with_task(store, id, params),
        _ => return None,
    })
}

/// Three rounds: step 1 (name), step 2 (colour), then the result; the state names the round.
fn multi_round(id: &Value, params: &Value) -> Answer {
    let Ok(got) = answers(params, &["step1", "step2"]) else {
        return bad_input(id);
    };
    let step1 = || elicit("Step 1: What is your name?", "name", "string");
    let Some(got) = got else {
        return ok(
            id,
            input_required(vec![("step1", step1())], Some(sign("multi_round:1"))),
        );
    };
    let state = params
        .get("requestState")
        .and_then(Value::as_str)
        .and_then(verify);
    match state {
        Some("multi_round:1") if got.contains_key("step1") => {
            let name = field(got, "step1", "name");
            let ask = elicit("Step 2: What is your favorite color?", "color", "string");
            ok(
                id,
                input_required(
                    vec![("step2", ask)],
                    Some(sign(&format!("multi_round:2:{name}"))),
                ),
            )
        }
        Some("multi_round:1") => ok(
            id,
            input_required(vec![("step1", step1())], Some(sign("multi_round:1"))),
        ),
        Some(s) if s.starts_with("multi_round:2:") && got.contains_key("step2") => {
            let name = &s["multi_round:2:".len()..];
            let text = format!("{name} likes {}", field(got, "step2", "color"));
            ok(id, text_result(&text, false, true))
        }
        Some(s) if s.starts_with("multi_round:2:") => {
            let ask = elicit("Step 2: What is your favorite color?", "color", "string");
            ok(
                id,
                input_required(vec![("step2", ask)], Some(s.to_owned()).map(|p| sign(&p))),
            )
        }
        _ => error(
            id,
            -32602,
            "requestState is missing or failed its integrity check",
        ),
    }
}

/// MRTR first, then a task: round 1 asks for the name; round 2 creates a task whose result
/// greets that name (-32021 without the tasks extension: the tool needs a task).
fn with_task(store: &TaskStore, id: &Value, params: &Value) -> Answer {
    let Ok(got) = answers(params, &["user_name"]) else {
        return bad_input(id);
    };
    match got.filter(|a| a.contains_key("user_name")) {
        None => ok(
            id,
            input_required(
                vec![("user_name", elicit("What is your name?", "name", "string"))],
                None,
            ),
        ),
        Some(_) if !tasks::declared(params) => tasks::needs_extension(id),
        Some(a) => {
            let result = text_result(
                &format!("Hello, {}!", field(a, "user_name", "name")),
                false,
                true,
            );
            store.create(id, Plan::Runs { ms: 200, result })
        }
    }
}

/// `prompts/get` of [`PROMPT`]: `None` for any other prompt.
pub(crate) fn prompt(id: &Value, params: &Value) -> Option<Answer> {
    if params.get("name").and_then(Value::as_str) != Some(PROMPT) {
        return None;
    }
    let ask = elicit("What context should the prompt use?", "context", "string");
    let Ok(got) = answers(params, &["user_context"]) else {
        return Some(bad_input(id));
    };
    Some(match got.filter(|a| a.contains_key("user_context")) {
        None => ok(id, input_required(vec![("user_context", ask)], None)),
        Some(a) => {
            let text = format!(
                "Answer using this context: {}",
                field(a, "user_context", "context")
            );
            ok(
                id,
                json!({"resultType": "complete", "description": "A prompt built from elicited context",
                          "messages": [{"role": "user", "content": {"type": "text", "text": text}}]}),
            )
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(a: &Answer) -> &Value {
        &a.1["result"]
    }

    #[test]
    fn a_round_asks_then_the_retry_completes() {
        let store = TaskStore::default();
        let tool = "test_input_required_result_elicitation";
        let first = call(&store, tool, &json!(1), &json!({})).expect("fixture");
        assert_eq!(result(&first)["resultType"], "input_required");
        assert_eq!(
            result(&first)["inputRequests"]["user_name"]["method"],
            "elicitation/create"
        );
        let answer = json!({"inputResponses": {"user_name": {"action": "accept", "content": {"name": "Alice"}}}});
        let done = call(&store, tool, &json!(2), &answer).expect("fixture");
        assert_eq!(result(&done)["content"][0]["text"], "Hello, Alice!");
        let wrong = call(
            &store,
            tool,
            &json!(3),
            &json!({"inputResponses": {"other": {}}}),
        )
        .expect("fixture");
        assert_eq!(result(&wrong)["resultType"], "input_required");
        for bad in [json!(null), json!({"user_name": 12345})] {
            let refused =
                call(&store, tool, &json!(4), &json!({"inputResponses": bad})).expect("fixture");
            assert_eq!(refused.1["error"]["code"], -32602);
        }
    }

    #[test]
    fn a_tampered_state_is_refused_and_rounds_move_on() {
        let store = TaskStore::default();
        let tool = "test_input_required_result_tampered_state";
        let first = call(&store, tool, &json!(1), &json!({})).expect("fixture");
        let state = result(&first)["requestState"]
            .as_str()
            .expect("state")
            .to_owned();
        let answer = json!({"confirm": {"action": "accept", "content": {"ok": true}}});
        let good = json!({"inputResponses": answer, "requestState": state});
        assert_eq!(
            result(&call(&store, tool, &json!(2), &good).expect("fixture"))["resultType"],
            "complete"
        );
        let bad = json!({"inputResponses": answer, "requestState": format!("{state}-TAMPERED")});
        assert_eq!(
            call(&store, tool, &json!(3), &bad).expect("fixture").1["error"]["code"],
            -32602
        );
        let r1 = multi_round(&json!(4), &json!({}));
        let s1 = result(&r1)["requestState"].clone();
        let step1 = json!({"step1": {"action": "accept", "content": {"name": "Alice"}}});
        let r2 = multi_round(
            &json!(5),
            &json!({"inputResponses": step1, "requestState": s1}),
        );
        assert!(result(&r2)["inputRequests"].get("step2").is_some());
        assert_ne!(result(&r2)["requestState"], s1);
        let step2 = json!({"step2": {"action": "accept", "content": {"color": "blue"}}});
        let s2 = result(&r2)["requestState"].clone();
        let r3 = multi_round(
            &json!(6),
            &json!({"inputResponses": step2, "requestState": s2}),
        );
        assert_eq!(result(&r3)["content"][0]["text"], "Alice likes blue");
    }

    #[test]
    fn only_declared_capabilities_are_asked_and_prompts_ask_too() {
        let store = TaskStore::default();
        let params =
            json!({"_meta": {"io.modelcontextprotocol/clientCapabilities": {"sampling": {}}}});
        let r = call(
            &store,
            "test_input_required_result_capabilities",
            &json!(1),
            &params,
        )
        .expect("fixture");
        let keys: Vec<&String> = result(&r)["inputRequests"]
            .as_object()
            .expect("map")
            .keys()
            .collect();
        assert_eq!(keys, ["capital_question"]);
        let asked = prompt(&json!(2), &json!({"name": PROMPT})).expect("prompt");
        assert_eq!(result(&asked)["resultType"], "input_required");
        let answer = json!({"name": PROMPT, "inputResponses": {"user_context": {"action": "accept", "content": {"context": "c"}}}});
        let done = prompt(&json!(3), &answer).expect("prompt");
        assert_eq!(result(&done)["messages"][0]["role"], "user");
        assert!(prompt(&json!(4), &json!({"name": "other"})).is_none());
    }
}
