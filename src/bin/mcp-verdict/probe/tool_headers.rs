//! SEP-2243 (2026-07-28): a tool parameter marked `x-mcp-header: NAME` is mirrored into an
//! `Mcp-Param-NAME` request header, so gateways can route on it without reading the body. A
//! tool whose marks break the rules must not be called (clients MUST exclude it).

use serde_json::Value;

/// Why `tool`'s `x-mcp-header` marks are invalid; `None` when they are fine (or absent).
/// Rules: a non-empty name of visible ASCII without `:`, unique without regard to case, on a
/// property of type `string`, `integer` or `boolean`.
pub(crate) fn invalid(tool: &Value) -> Option<String> {
    let mut seen: Vec<String> = Vec::new();
    for (prop, schema) in properties(tool) {
        let Some(mark) = schema.get("x-mcp-header") else {
            continue;
        };
        let Some(name) = mark.as_str() else {
            return Some(format!("x-mcp-header of {prop:?} is not a string"));
        };
        if name.is_empty() {
            return Some(format!("x-mcp-header of {prop:?} is empty"));
        }
        if !name.bytes().all(|b| (0x21..0x7f).contains(&b) && b != b':') {
            return Some(format!(
                "x-mcp-header {name:?} of {prop:?} has a character a header name cannot carry"
            ));
        }
        let ty = schema.get("type").and_then(Value::as_str);
        if !matches!(ty, Some("string" | "integer" | "boolean")) {
            return Some(format!(
                "x-mcp-header {name:?} is on {prop:?}, not a string, integer or boolean"
            ));
        }
        let lower = name.to_ascii_lowercase();
        if seen.contains(&lower) {
            return Some(format!("x-mcp-header {name:?} is used twice"));
        }
        seen.push(lower);
    }
    None
}

/// The `Mcp-Param-*` headers for calling `tool` with `args`: one per marked parameter that has
/// a non-null value. Strings that are not plain visible ASCII (or that have surrounding
/// spaces) go as `=?base64?…?=`.
pub(crate) fn param_headers(tool: &Value, args: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (prop, schema) in properties(tool) {
        let Some(name) = schema.get("x-mcp-header").and_then(Value::as_str) else {
            continue;
        };
        let value = match args.get(prop) {
            None | Some(Value::Null) => continue,
            Some(Value::String(s)) => mcp_verdict::adapters::client::header_safe(s),
            Some(Value::Bool(b)) => b.to_string(),
            Some(Value::Number(n)) => n.to_string(),
            Some(_) => continue,
        };
        out.push((format!("Mcp-Param-{name}"), value));
    }
    out
}

fn properties(tool: &Value) -> impl Iterator<Item = (&String, &Value)> {
    tool.pointer("/inputSchema/properties")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(props: Value) -> Value {
        json!({"name": "t", "inputSchema": {"type": "object", "properties": props}})
    }

    #[test]
    fn bad_marks_are_found() {
        let ok = tool(json!({"r": {"type": "string", "x-mcp-header": "Region"},
                             "n": {"type": "integer", "x-mcp-header": "N"}, "q": {"type": "number"}}));
        assert_eq!(invalid(&ok), None);
        for props in [
            json!({"v": {"type": "string", "x-mcp-header": ""}}),
            json!({"v": {"type": "object", "x-mcp-header": "V"}}),
            json!({"v": {"type": "number", "x-mcp-header": "V"}}),
            json!({"v": {"type": "null", "x-mcp-header": "V"}}),
            json!({"a": {"type": "string", "x-mcp-header": "My"}, "b": {"type": "string", "x-mcp-header": "mY"}}),
            json!({"v": {"type": "string", "x-mcp-header": "My Region"}}),
            json!({"v": {"type": "string", "x-mcp-header": "A:B"}}),
            json!({"v": {"type": "string", "x-mcp-header": "Région"}}),
            json!({"v": {"type": "string", "x-mcp-header": "A\tB"}}),
            json!({"v": {"type": "string", "x-mcp-header": 3}}),
        ] {
            assert!(invalid(&tool(props.clone())).is_some(), "{props}");
        }
    }

    #[test]
    fn marked_values_become_headers() {
        let t = tool(json!({"r": {"type": "string", "x-mcp-header": "Region"},
                            "p": {"type": "integer", "x-mcp-header": "Priority"},
                            "b": {"type": "boolean", "x-mcp-header": "Debug"},
                            "u": {"type": "string", "x-mcp-header": "U"},
                            "n": {"type": "boolean", "x-mcp-header": "Nil"},
                            "q": {"type": "string"}}));
        let args = json!({"r": "us west", "p": 42, "b": true, "u": " é", "n": null, "q": "x"});
        let mut h = param_headers(&t, &args);
        h.sort();
        assert_eq!(
            h,
            vec![
                ("Mcp-Param-Debug".to_owned(), "true".to_owned()),
                ("Mcp-Param-Priority".to_owned(), "42".to_owned()),
                ("Mcp-Param-Region".to_owned(), "us west".to_owned()),
                ("Mcp-Param-U".to_owned(), "=?base64?IMOp?=".to_owned()),
            ]
        );
    }
}
