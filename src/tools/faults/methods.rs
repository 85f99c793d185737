//! The correct endpoint's methods besides tools: resources, prompts, completion, logging, and
//! the capabilities that advertise them. One place decides which methods a revision has
//! (2026-07-28 removed `logging/setLevel` and `resources/(un)subscribe`) and which results are
//! cacheable, so the server's dispatcher needs one line for all of them.

use serde_json::{Value, json};

use super::{completion, prompts, resources};

/// How a method is answered.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Answer {
    /// A result.
    Result(Value),
    /// A result that 2026-07-28 makes cacheable (`ttlMs`, `cacheScope` required).
    Cacheable(Value),
    /// A JSON-RPC error object (`code`, `message`, `data`).
    Error(Value),
}

/// The levels `logging/setLevel` accepts, least severe first.
const LEVELS: &[&str] = &[
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
];

/// Methods removed in 2026-07-28: a stateless request for one is an unknown method.
const REMOVED: &[&str] = &[
    "logging/setLevel",
    "resources/subscribe",
    "resources/unsubscribe",
];

/// The answer to `method`, or `None` when the endpoint does not implement it at this revision.
pub(crate) fn answer(method: &str, params: &Value, stateless: bool) -> Option<Answer> {
    if stateless && REMOVED.contains(&method) {
        return None;
    }
    let found = match method {
        "logging/setLevel" => Some(set_level(params)),
        _ => resources::answer(method, params)
            .or_else(|| prompts::answer(method, params))
            .or_else(|| completion::answer(method, params)),
    }?;
    Some(match found {
        Ok(r) if cacheable(method) => Answer::Cacheable(r),
        Ok(r) => Answer::Result(r),
        Err(e) => Answer::Error(e),
    })
}

/// 2026-07-28 results that carry caching hints (SEP-2549): the lists and `resources/read`.
fn cacheable(method: &str) -> bool {
    method.ends_with("/list") || method == "resources/read"
}

/// Accepts a known level. No log notification is filtered by it: the endpoint sends logs only
/// from `test_tool_with_logging`, at `info`.
fn set_level(params: &Value) -> Result<Value, Value> {
    match params.get("level").and_then(Value::as_str) {
        Some(level) if LEVELS.contains(&level) => Ok(json!({})),
        _ => Err(json!({"code": -32602,
                        "message": format!("params.level must be one of {}", LEVELS.join(", "))})),
    }
}

/// What `initialize` and `server/discover` advertise: what is implemented at the revision.
/// 2026-07-28 has no `logging` capability and no `resources.subscribe` (subscriptions moved
/// to `subscriptions/listen`, which the endpoint does not offer).
pub(crate) fn capabilities(stateless: bool) -> Value {
    if stateless {
        json!({"tools": {}, "resources": {}, "prompts": {}, "completions": {}})
    } else {
        json!({"tools": {}, "resources": {"subscribe": true}, "prompts": {}, "completions": {},
               "logging": {}})
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn revisions_differ_in_removed_methods_and_capabilities() {
        let sub = json!({"uri": "test://watched-resource"});
        assert_eq!(
            answer("resources/subscribe", &sub, false),
            Some(Answer::Result(json!({})))
        );
        assert_eq!(answer("resources/subscribe", &sub, true), None);
        assert_eq!(
            answer("logging/setLevel", &json!({"level": "info"}), true),
            None
        );
        assert!(capabilities(false)["logging"].is_object());
        assert!(capabilities(true).get("logging").is_none());
        assert!(capabilities(true)["resources"].get("subscribe").is_none());
    }

    #[test]
    fn lists_and_reads_are_cacheable_errors_are_errors() {
        let list = answer("prompts/list", &json!({}), true);
        assert!(matches!(list, Some(Answer::Cacheable(_))));
        let read = answer(
            "resources/read",
            &json!({"uri": "test://static-text"}),
            true,
        );
        assert!(matches!(read, Some(Answer::Cacheable(_))));
        let missing = answer("resources/read", &json!({"uri": "test://missing"}), true);
        assert!(matches!(missing, Some(Answer::Error(e)) if e["code"] == -32602));
        let level = answer("logging/setLevel", &json!({"level": "loud"}), false);
        assert!(matches!(level, Some(Answer::Error(_))));
        let done = answer(
            "completion/complete",
            &json!({"ref": {"type": "ref/prompt", "name": "x"},
                                                         "argument": {"name": "a", "value": ""}}),
            true,
        );
        assert!(matches!(done, Some(Answer::Result(_))));
        assert_eq!(answer("tools/list", &json!({}), true), None);
    }
}
