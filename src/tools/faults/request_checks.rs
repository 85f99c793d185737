//! What the correct endpoint refuses before dispatch under 2026-07-28, so the official suite's
//! `server-stateless`, `http-header-validation` and `http-custom-header-server-validation` see a
//! strict server: an unknown `MCP-Protocol-Version` (400, `-32022`), `_meta` without the version
//! or the client's capabilities (400, `-32602`), and a routing header that is missing or does
//! not repeat the body (`Mcp-Method`, `Mcp-Name`, a tool's `Mcp-Param-*`: 400, `-32020`).
//! 2025 requests (no header, or a 2025 version) pass untouched: that wire has no such rules.

use serde_json::{Value, json};

/// The revisions the endpoint speaks, newest first (what `server/discover` lists).
pub(crate) const SUPPORTED: &[&str] = &["2026-07-28", "2025-11-25"];

/// Older revisions a session-based client may still name; not checked here.
const LEGACY: &[&str] = &["2025-11-25", "2025-06-18", "2025-03-26"];

const HEADER_MISMATCH: i64 = -32020;
const UNSUPPORTED_VERSION: i64 = -32022;

/// A refusal: always 400, with this JSON-RPC error object.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Refusal(pub Value);

fn refuse(code: i64, message: String, data: Option<Value>) -> Refusal {
    let mut e = json!({"code": code, "message": message});
    if let Some(data) = data {
        e["data"] = data;
    }
    Refusal(e)
}

/// Checks one request. `header` looks a request header up (any case); `tools` is the
/// endpoint's `tools/list` array, whose `x-mcp-header` properties name the `Mcp-Param-*`
/// headers a `tools/call` must carry.
pub(crate) fn check(
    method: &str,
    params: &Value,
    header: &dyn Fn(&str) -> Option<String>,
    tools: &Value,
) -> Result<(), Refusal> {
    let version = header("mcp-protocol-version").map(|v| v.trim().to_owned());
    match version.as_deref() {
        None => return Ok(()),
        Some(v) if LEGACY.contains(&v) => return Ok(()),
        Some("2026-07-28") => {}
        // The header is what routing reads first: its value is the version refused.
        Some(requested) => {
            return Err(refuse(
                UNSUPPORTED_VERSION,
                format!("Unsupported protocol version: {requested}"),
                Some(json!({"supported": SUPPORTED, "requested": requested})),
            ));
        }
    }
    let declared = meta(params, "protocolVersion").and_then(Value::as_str);
    if declared.is_none() || meta(params, "clientCapabilities").is_none() {
        return Err(refuse(
            -32602,
            "params._meta must carry io.modelcontextprotocol/protocolVersion and clientCapabilities"
                .into(),
            None,
        ));
    }
    if declared != Some("2026-07-28") {
        return Err(refuse(
            HEADER_MISMATCH,
            format!("MCP-Protocol-Version is 2026-07-28, _meta says {declared:?}"),
            None,
        ));
    }
    routing(method, params, header)?;
    if method == "tools/call" {
        param_headers(params, header, tools)?;
    }
    Ok(())
}

/// `params._meta["io.modelcontextprotocol/<key>"]`.
fn meta<'a>(params: &'a Value, key: &str) -> Option<&'a Value> {
    params
        .get("_meta")?
        .get(format!("io.modelcontextprotocol/{key}"))
}

/// `Mcp-Method` equals the method (case-sensitive value, surrounding whitespace ignored), and
/// `Mcp-Name` equals `params.name` / `params.uri` / a `tasks/*` request's `params.taskId` where
/// the method has one (SEP-2243, SEP-2663), so a gateway routing on the headers cannot be
/// steered somewhere the body does not go.
fn routing(
    method: &str,
    params: &Value,
    header: &dyn Fn(&str) -> Option<String>,
) -> Result<(), Refusal> {
    let sent = header("mcp-method");
    if sent.as_deref().map(str::trim) != Some(method) {
        return Err(refuse(
            HEADER_MISMATCH,
            format!("Mcp-Method is {sent:?}, the body's method is {method:?}"),
            None,
        ));
    }
    let key = match method {
        "tools/call" | "prompts/get" => "name",
        "resources/read" => "uri",
        "tasks/get" | "tasks/update" | "tasks/cancel" => "taskId",
        _ => return Ok(()),
    };
    let body = params.get(key).and_then(Value::as_str);
    let sent = header("mcp-name");
    if body.is_some() && decoded(sent.as_deref()) != body.map(str::to_owned) {
        return Err(refuse(
            HEADER_MISMATCH,
            format!("Mcp-Name is {sent:?}, params.{key} is {body:?}"),
            None,
        ));
    }
    Ok(())
}

/// Each argument of the called tool whose property declares `x-mcp-header: X` is repeated in
/// `Mcp-Param-X` (SEP-2243).
fn param_headers(
    params: &Value,
    header: &dyn Fn(&str) -> Option<String>,
    tools: &Value,
) -> Result<(), Refusal> {
    let name = params.get("name").and_then(Value::as_str).unwrap_or("");
    let Some(tool) = tools
        .as_array()
        .and_then(|t| t.iter().find(|t| t["name"] == name))
    else {
        return Ok(());
    };
    let props = tool
        .pointer("/inputSchema/properties")
        .and_then(Value::as_object);
    for (arg, def) in props.into_iter().flatten() {
        let (Some(suffix), Some(value)) = (
            def.get("x-mcp-header").and_then(Value::as_str),
            params.pointer(&format!("/arguments/{arg}")),
        ) else {
            continue;
        };
        let body = match value {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        let sent = header(&format!("mcp-param-{}", suffix.to_ascii_lowercase()));
        if decoded(sent.as_deref()) != Some(body) {
            return Err(refuse(
                HEADER_MISMATCH,
                format!("Mcp-Param-{suffix} is {sent:?}, which does not repeat arguments.{arg}"),
                None,
            ));
        }
    }
    Ok(())
}

/// A present header's value as meant (`None`: absent, or a broken `=?base64?…?=` form).
fn decoded(v: Option<&str>) -> Option<String> {
    v.and_then(crate::core::client_checks::mcp_header_value)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta_params(extra: Value) -> Value {
        let mut p = json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                                     "io.modelcontextprotocol/clientCapabilities": {}}});
        if let (Some(p), Some(e)) = (p.as_object_mut(), extra.as_object()) {
            p.extend(e.clone());
        }
        p
    }

    fn run(method: &str, params: &Value, headers: &[(&str, &str)]) -> Option<i64> {
        let tools = json!([{"name": "t", "inputSchema": {"properties": {
            "region": {"type": "string", "x-mcp-header": "Region"}}}}]);
        let lookup = |n: &str| {
            headers
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case(n))
                .map(|(_, v)| (*v).to_owned())
        };
        check(method, params, &lookup, &tools)
            .err()
            .and_then(|r| r.0["code"].as_i64())
    }

    const V: (&str, &str) = ("MCP-Protocol-Version", "2026-07-28");

    #[test]
    fn legacy_requests_pass_and_unknown_versions_are_refused_with_the_supported_list() {
        assert_eq!(run("tools/list", &json!({}), &[]), None);
        assert_eq!(
            run(
                "tools/list",
                &json!({}),
                &[("MCP-Protocol-Version", "2025-11-25")]
            ),
            None
        );
        let tools = json!([]);
        let lookup = |_: &str| Some("v9".to_owned());
        let refused = check("server/discover", &json!({}), &lookup, &tools).unwrap_err();
        assert_eq!(refused.0["code"], UNSUPPORTED_VERSION);
        assert_eq!(refused.0["data"]["requested"], "v9");
        assert_eq!(refused.0["data"]["supported"], json!(SUPPORTED));
    }

    #[test]
    fn meta_and_routing_headers_must_repeat_the_body() {
        let list = ("Mcp-Method", "tools/list");
        assert_eq!(run("tools/list", &json!({}), &[V, list]), Some(-32602));
        assert_eq!(run("tools/list", &meta_params(json!({})), &[V, list]), None);
        assert_eq!(
            run(
                "tools/list",
                &meta_params(json!({})),
                &[V, ("mcp-method", " x ")]
            ),
            Some(HEADER_MISMATCH)
        );
        assert_eq!(
            run(
                "tools/list",
                &meta_params(json!({})),
                &[V, ("Mcp-Method", "TOOLS/LIST")]
            ),
            Some(HEADER_MISMATCH)
        );
        let call = meta_params(json!({"name": "echo"}));
        let m = ("Mcp-Method", "tools/call");
        assert_eq!(run("tools/call", &call, &[V, m]), Some(HEADER_MISMATCH));
        assert_eq!(
            run("tools/call", &call, &[V, m, ("Mcp-Name", "  echo ")]),
            None
        );
        assert_eq!(
            run(
                "tools/call",
                &call,
                &[V, m, ("Mcp-Name", "=?base64?ZWNobw==?=")]
            ),
            None
        );
        let mut wrong = meta_params(json!({}));
        wrong["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("v999");
        assert_eq!(run("tools/list", &wrong, &[V, list]), Some(HEADER_MISMATCH));
    }

    #[test]
    fn a_declared_param_header_must_carry_the_argument() {
        let call = meta_params(json!({"name": "t", "arguments": {"region": "Hello"}}));
        let base = [V, ("Mcp-Method", "tools/call"), ("Mcp-Name", "t")];
        let with = |v: &'static str| {
            let mut h = base.to_vec();
            h.push(("Mcp-Param-Region", v));
            run("tools/call", &call, &h)
        };
        assert_eq!(with("Hello"), None);
        assert_eq!(with("=?base64?SGVsbG8=?="), None);
        assert_eq!(
            with("=?base64?SGVsbG8?="),
            Some(HEADER_MISMATCH),
            "unpadded"
        );
        assert_eq!(with("=?base64?SGVs!!!bG8=?="), Some(HEADER_MISMATCH));
        assert_eq!(
            run("tools/call", &call, &base),
            Some(HEADER_MISMATCH),
            "missing"
        );
        let literal =
            meta_params(json!({"name": "t", "arguments": {"region": "=?base64?SGVsbG8="}}));
        let mut h = base.to_vec();
        h.push(("Mcp-Param-Region", "=?base64?SGVsbG8="));
        assert_eq!(run("tools/call", &literal, &h), None, "no suffix: literal");
    }
}
