//! The correct endpoint's prompts, as the official conformance suite gets them (`prompts-*`):
//! a simple prompt, one with two required arguments substituted into its text, one embedding a
//! resource, one with an image. Answers are bare results or JSON-RPC error objects; the
//! dispatcher (`methods.rs`) frames them.

use serde_json::{Value, json};

use super::fixtures::PNG;

/// `(name, title, description, required arguments)` of every prompt.
const PROMPTS: &[(&str, &str, &str, &[&str])] = &[
    (
        "test_simple_prompt",
        "Simple Test Prompt",
        "A simple prompt without arguments",
        &[],
    ),
    (
        "test_prompt_with_arguments",
        "Prompt With Arguments",
        "A prompt with required arguments",
        &["arg1", "arg2"],
    ),
    (
        "test_prompt_with_embedded_resource",
        "Prompt With Embedded Resource",
        "A prompt that includes an embedded resource",
        &["resourceUri"],
    ),
    (
        "test_prompt_with_image",
        "Prompt With Image",
        "A prompt that includes image content",
        &[],
    ),
];

/// The answer to a `prompts/*` method, `None` when `method` is not one.
pub(crate) fn answer(method: &str, params: &Value) -> Option<Result<Value, Value>> {
    match method {
        "prompts/list" => Some(Ok(
            json!({"prompts": PROMPTS.iter().map(|(name, title, d, args)| {
            let args: Vec<Value> = args.iter()
                .map(|a| json!({"name": a, "description": format!("The {a} argument"), "required": true}))
                .collect();
            json!({"name": name, "title": title, "description": d, "arguments": args})
        }).collect::<Vec<_>>()}),
        )),
        "prompts/get" => Some(get(params)),
        _ => None,
    }
}

fn invalid(message: String) -> Value {
    json!({"code": -32602, "message": message})
}

fn user(content: Value) -> Value {
    json!({"role": "user", "content": content})
}

fn text(t: &str) -> Value {
    json!({"type": "text", "text": t})
}

/// `prompts/get`: the messages, or `-32602` for an unknown prompt or a missing argument.
fn get(params: &Value) -> Result<Value, Value> {
    let name = params.get("name").and_then(Value::as_str).unwrap_or("");
    let Some((_, _, description, required)) = PROMPTS.iter().find(|p| p.0 == name) else {
        return Err(invalid(format!("Unknown prompt: {name}")));
    };
    let arg = |a: &str| {
        params
            .pointer(&format!("/arguments/{a}"))
            .and_then(Value::as_str)
    };
    if let Some(missing) = required.iter().find(|a| arg(a).is_none()) {
        return Err(invalid(format!("Missing required argument: {missing}")));
    }
    let messages = match name {
        "test_prompt_with_arguments" => vec![user(text(&format!(
            "Prompt with arguments: arg1='{}', arg2='{}'",
            arg("arg1").unwrap_or_default(),
            arg("arg2").unwrap_or_default()
        )))],
        "test_prompt_with_embedded_resource" => vec![
            user(json!({"type": "resource", "resource": {
                "uri": arg("resourceUri").unwrap_or_default(), "mimeType": "text/plain",
                "text": "Embedded resource content for testing."}})),
            user(text("Please process the embedded resource above.")),
        ],
        "test_prompt_with_image" => vec![
            user(json!({"type": "image", "data": PNG, "mimeType": "image/png"})),
            user(text("Please analyze the image above.")),
        ],
        _ => vec![user(text("This is a simple prompt for testing."))],
    };
    Ok(json!({"description": description, "messages": messages}))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn get_prompt(params: Value) -> Result<Value, Value> {
        answer("prompts/get", &params).expect("a prompts method")
    }

    #[test]
    fn every_listed_prompt_answers_with_user_messages() {
        let list = answer("prompts/list", &json!({})).unwrap().unwrap();
        for p in list["prompts"].as_array().unwrap() {
            let mut args = json!({});
            for a in p["arguments"].as_array().unwrap() {
                args[a["name"].as_str().unwrap()] = json!("test://x");
            }
            let got = get_prompt(json!({"name": p["name"], "arguments": args})).unwrap();
            let messages = got["messages"].as_array().unwrap();
            assert!(!messages.is_empty());
            assert!(
                messages
                    .iter()
                    .all(|m| m["role"] == "user" && m["content"].is_object())
            );
        }
    }

    #[test]
    fn arguments_are_substituted_and_required() {
        let got = get_prompt(json!({"name": "test_prompt_with_arguments",
                                    "arguments": {"arg1": "one", "arg2": "two"}}))
        .unwrap();
        let t = got["messages"][0]["content"]["text"].as_str().unwrap();
        assert!(t.contains("arg1='one'") && t.contains("arg2='two'"), "{t}");
        let err = get_prompt(json!({"name": "test_prompt_with_arguments",
                                    "arguments": {"arg1": "one"}}))
        .unwrap_err();
        assert_eq!(err["code"], -32602);
        assert!(get_prompt(json!({"name": "nope"})).is_err());
        assert!(answer("prompts/nope", &json!({})).is_none());
    }
}
