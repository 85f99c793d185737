//! `completion/complete` on the correct endpoint (the suite's `completion-complete`): values for
//! the arguments of `test_prompt_with_arguments` and the template's `{id}`, filtered by the
//! prefix typed so far. A bare result or a JSON-RPC error object; `methods.rs` frames it.

use serde_json::{Value, json};

/// The candidates of each completable argument.
fn candidates(reference: &Value, argument: &str) -> Option<&'static [&'static str]> {
    let kind = reference.get("type").and_then(Value::as_str)?;
    let name = reference
        .get("name")
        .or_else(|| reference.get("uri"))
        .and_then(Value::as_str)?;
    match (kind, name, argument) {
        ("ref/prompt", "test_prompt_with_arguments", "arg1" | "arg2") => {
            Some(&["hello", "help", "world"])
        }
        ("ref/resource", "test://template/{id}/data", "id") => Some(&["1", "2", "123"]),
        ("ref/prompt" | "ref/resource", _, _) => Some(&[]),
        _ => None,
    }
}

/// The answer to `completion/complete`, `None` when `method` is another.
pub(crate) fn answer(method: &str, params: &Value) -> Option<Result<Value, Value>> {
    if method != "completion/complete" {
        return None;
    }
    let argument = params.pointer("/argument/name").and_then(Value::as_str);
    let typed = params
        .pointer("/argument/value")
        .and_then(Value::as_str)
        .unwrap_or("");
    let found = params
        .get("ref")
        .zip(argument)
        .and_then(|(r, a)| candidates(r, a));
    Some(match found {
        Some(all) => {
            let values: Vec<&str> = all
                .iter()
                .copied()
                .filter(|v| v.starts_with(typed))
                .collect();
            Ok(json!({"completion": {"values": values, "total": values.len(), "hasMore": false}}))
        }
        None => Err(json!({"code": -32602,
                           "message": "completion/complete needs ref (ref/prompt or ref/resource) and argument.name"})),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_follow_the_prefix_and_a_bad_ref_is_invalid_params() {
        let params = json!({"ref": {"type": "ref/prompt", "name": "test_prompt_with_arguments"},
                            "argument": {"name": "arg1", "value": "hel"}});
        let got = answer("completion/complete", &params).unwrap().unwrap();
        assert_eq!(got["completion"]["values"], json!(["hello", "help"]));
        assert_eq!(got["completion"]["total"], 2);
        let other = json!({"ref": {"type": "ref/prompt", "name": "test_simple_prompt"},
                           "argument": {"name": "x", "value": ""}});
        let none = answer("completion/complete", &other).unwrap().unwrap();
        assert_eq!(none["completion"]["values"], json!([]));
        let bad = answer("completion/complete", &json!({"ref": {"type": "ref/tool"}}));
        assert_eq!(bad.unwrap().unwrap_err()["code"], -32602);
        assert!(answer("ping", &json!({})).is_none());
    }
}
