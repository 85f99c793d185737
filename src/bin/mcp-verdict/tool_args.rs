//! Arguments for `probe --all-tools`, made from a tool's `inputSchema`: every required member,
//! with a value of the right JSON type. `default`, `const`, `enum` and `examples` are honoured
//! first (the server's own choices), then the type with its bounds and common string formats.
//! Optional members are left out: the server applies its own defaults to them.

use serde_json::{Map, Value, json};

/// How deep nested schemas (and `$ref` chains) are followed; deeper parts get `null`.
const MAX_DEPTH: usize = 8;

/// Arguments for a tool whose `inputSchema` is `schema` (always a JSON object).
pub(crate) fn arguments_for(schema: &Value) -> Value {
    match example(schema, schema, 0) {
        v @ Value::Object(_) => v,
        _ => json!({}),
    }
}

fn example(schema: &Value, root: &Value, depth: usize) -> Value {
    let Some(s) = schema.as_object() else {
        return Value::Null; // `true`/`false` schemas: anything (or nothing) goes
    };
    if depth > MAX_DEPTH {
        return Value::Null;
    }
    if let Some(v) = s.get("default").or_else(|| s.get("const")) {
        return v.clone();
    }
    for key in ["enum", "examples"] {
        if let Some(first) = s.get(key).and_then(Value::as_array).and_then(|a| a.first()) {
            return first.clone();
        }
    }
    if let Some(target) = s
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| r.strip_prefix('#'))
        .and_then(|pointer| root.pointer(pointer))
    {
        return example(target, root, depth + 1);
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(first) = s.get(key).and_then(Value::as_array).and_then(|a| {
            // A branch that is not `null`, when there is one.
            a.iter()
                .find(|b| b.get("type") != Some(&json!("null")))
                .or(a.first())
        }) {
            return example(first, root, depth + 1);
        }
    }
    if let Some(all) = s.get("allOf").and_then(Value::as_array) {
        let mut merged = Map::new();
        for part in all {
            match example(part, root, depth + 1) {
                Value::Object(m) => merged.extend(m),
                other if merged.is_empty() => return other,
                _ => {}
            }
        }
        return Value::Object(merged);
    }
    match type_of(s) {
        "object" => object(s, root, depth),
        "array" => {
            let n = s
                .get("minItems")
                .and_then(Value::as_u64)
                .unwrap_or(0)
                .min(16);
            let item = s.get("items").unwrap_or(&Value::Null);
            Value::Array((0..n).map(|_| example(item, root, depth + 1)).collect())
        }
        "string" => string(s),
        "integer" => number(s, true),
        "number" => number(s, false),
        "boolean" => json!(false),
        "null" => Value::Null,
        _ => json!("example"),
    }
}

/// The schema's type: the first non-null of a list, else inferred from its keywords.
fn type_of(s: &Map<String, Value>) -> &str {
    match s.get("type") {
        Some(Value::String(t)) => t,
        Some(Value::Array(list)) => list
            .iter()
            .filter_map(Value::as_str)
            .find(|t| *t != "null")
            .unwrap_or("null"),
        _ if s.contains_key("properties") || s.contains_key("required") => "object",
        _ if s.contains_key("items") => "array",
        _ => "string",
    }
}

fn object(s: &Map<String, Value>, root: &Value, depth: usize) -> Value {
    let empty = Map::new();
    let props = s
        .get("properties")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let mut out = Map::new();
    for name in s
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
    {
        let member = props.get(name).unwrap_or(&Value::Null);
        let value = match member {
            Value::Null => json!("example"), // required but undescribed: a string is the mildest
            m => example(m, root, depth + 1),
        };
        out.insert(name.to_owned(), value);
    }
    Value::Object(out)
}

fn string(s: &Map<String, Value>) -> Value {
    let text = match s.get("format").and_then(Value::as_str) {
        Some("date-time") => "2026-01-01T00:00:00Z",
        Some("date") => "2026-01-01",
        Some("time") => "00:00:00Z",
        Some("email") => "user@example.com",
        Some("uri" | "url" | "uri-reference" | "iri") => "https://example.com/",
        Some("uuid") => "00000000-0000-4000-8000-000000000000",
        Some("ipv4") => "127.0.0.1",
        Some("ipv6") => "::1",
        Some("hostname") => "localhost",
        _ => "example",
    };
    let min = s.get("minLength").and_then(Value::as_u64).unwrap_or(0) as usize;
    let max = s
        .get("maxLength")
        .and_then(Value::as_u64)
        .map(|m| m as usize);
    let mut text = text.to_owned();
    if text.chars().count() < min {
        text.push_str(&"x".repeat(min.min(1024) - text.chars().count()));
    }
    if let Some(max) = max.filter(|m| text.chars().count() > *m) {
        text = text.chars().take(max).collect();
    }
    json!(text)
}

/// 1, moved into `[minimum, maximum]` (exclusive bounds respected; integers stay whole).
fn number(s: &Map<String, Value>, integer: bool) -> Value {
    let get = |k: &str| s.get(k).and_then(Value::as_f64);
    let step = if integer { 1.0 } else { 0.5 };
    let mut v: f64 = 1.0;
    if let Some(m) = get("minimum") {
        v = v.max(m);
    }
    if let Some(m) = get("exclusiveMinimum") {
        v = v.max(m + step);
    }
    if let Some(m) = get("maximum") {
        v = v.min(m);
    }
    if let Some(m) = get("exclusiveMaximum") {
        v = v.min(m - step);
    }
    if let Some(k) = get("multipleOf").filter(|k| *k > 0.0) {
        v = (v / k).ceil() * k;
    }
    if integer {
        json!(v.ceil() as i64)
    } else {
        json!(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn required_members_get_type_correct_values() {
        let schema = json!({"type": "object", "properties": {
            "a": {"type": "number"}, "b": {"type": "integer", "minimum": 5},
            "name": {"type": "string", "minLength": 10}, "when": {"type": "string", "format": "date-time"},
            "flag": {"type": "boolean"}, "tags": {"type": "array", "items": {"type": "string"}, "minItems": 2},
            "opt": {"type": "string"}},
            "required": ["a", "b", "name", "when", "flag", "tags"]});
        let args = arguments_for(&schema);
        assert_eq!(
            args,
            json!({"a": 1.0, "b": 5, "name": "examplexxx", "when": "2026-01-01T00:00:00Z",
                   "flag": false, "tags": ["example", "example"]})
        );
        assert!(
            args.get("opt").is_none(),
            "optional members are left to the server"
        );
    }

    #[test]
    fn defaults_enums_and_consts_come_first() {
        let schema = json!({"type": "object", "required": ["mode", "unit", "n", "k"], "properties": {
            "mode": {"type": "string", "enum": ["fast", "slow"]},
            "unit": {"type": "string", "default": "kg", "enum": ["g", "kg"]},
            "n": {"type": "integer", "default": 7},
            "k": {"const": "fixed"}}});
        assert_eq!(
            arguments_for(&schema),
            json!({"mode": "fast", "unit": "kg", "n": 7, "k": "fixed"})
        );
    }

    #[test]
    fn refs_unions_nesting_and_bounds() {
        let schema = json!({"type": "object", "required": ["p", "u", "x"],
            "$defs": {"point": {"type": "object", "required": ["x"], "properties": {"x": {"type": "integer", "exclusiveMaximum": 0}}}},
            "properties": {
                "p": {"$ref": "#/$defs/point"},
                "u": {"anyOf": [{"type": "null"}, {"type": "integer", "multipleOf": 4}]},
                "x": {"type": ["null", "number"], "maximum": 0.25}}});
        assert_eq!(
            arguments_for(&schema),
            json!({"p": {"x": -1}, "u": 4, "x": 0.25})
        );
    }

    #[test]
    fn odd_schemas_still_give_an_object() {
        for schema in [
            json!(null),
            json!(true),
            json!({"type": "string"}),
            json!({}),
        ] {
            assert_eq!(arguments_for(&schema), json!({}), "{schema}");
        }
        // A self-referencing schema stops at the depth limit.
        let schema = json!({"type": "object", "required": ["next"],
                            "properties": {"next": {"$ref": "#"}}});
        let args = arguments_for(&schema);
        assert!(args.pointer("/next/next/next").is_some());
    }
}
