//! The 2026-07-28 routing headers (SEP-2243, and SEP-2663 for `tasks/*`): `Mcp-Method` must
//! match the body's `method`, `Mcp-Name` the body's name-shaped member, else the server refuses
//! with HTTP 400 and -32020 (HeaderMismatch), so a gateway routing on the headers cannot be
//! steered somewhere the body does not go. Only headers that are present are compared.

use serde_json::Value;

/// The body member `Mcp-Name` mirrors for `method`.
fn name_of<'a>(method: &str, params: &'a Value) -> Option<&'a str> {
    let key = match method {
        "tools/call" | "prompts/get" => "name",
        "resources/read" => "uri",
        "tasks/get" | "tasks/update" | "tasks/cancel" => "taskId",
        _ => return None,
    };
    params.get(key).and_then(Value::as_str)
}

/// Why the headers disagree with the body (`None`: they agree, or are absent). Values are
/// compared without surrounding whitespace (RFC 9110 §5.5), case-sensitively.
pub(crate) fn mismatch(
    method: &str,
    params: &Value,
    mcp_method: Option<&str>,
    mcp_name: Option<&str>,
) -> Option<String> {
    if let Some(h) = mcp_method.map(str::trim)
        && h != method
    {
        return Some(format!(
            "Mcp-Method {h:?} does not match the body's method {method:?}"
        ));
    }
    let (Some(h), Some(body)) = (mcp_name.map(str::trim), name_of(method, params)) else {
        return None;
    };
    (h != body).then(|| format!("Mcp-Name {h:?} does not match the body's {body:?}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn headers_must_agree_with_the_body() {
        let call = json!({"name": "greet"});
        assert_eq!(
            mismatch("tools/call", &call, Some("tools/call"), Some("  greet ")),
            None
        );
        assert!(mismatch("tools/call", &call, Some("tasks/get"), None).is_some());
        assert!(mismatch("tools/list", &json!({}), Some("TOOLS/LIST"), None).is_some());
        let get = json!({"taskId": "t-1"});
        assert!(mismatch("tasks/get", &get, Some("tasks/get"), Some("t-2")).is_some());
        assert_eq!(mismatch("tasks/get", &get, None, Some("t-1")), None);
        assert_eq!(
            mismatch("tools/list", &json!({}), None, Some("anything")),
            None
        );
    }
}
