//! Request-side rules: what the client had to send (headers, `_meta`), checked before the
//! response is looked at. Only applied when the capture recorded request headers.

use crate::findings::Findings;
use crate::request::{BodyKind, Request};
use crate::rules::Rule;
use crate::version::ProtocolVersion;
use crate::wire;

use crate::wire::META_CLIENT_CAPABILITIES as CAPS_META;
use crate::wire::META_PROTOCOL_VERSION as VERSION_META;

/// Checks the request against `version`'s rules. `header`: its `MCP-Protocol-Version`.
/// `after_initialize`: an `initialize` exchange was seen earlier, so 2025-06-18+ requests must
/// carry the version header.
pub(crate) fn check_request(
    req: &Request,
    header: Option<&str>,
    version: ProtocolVersion,
    after_initialize: bool,
    findings: &mut Findings,
) {
    if req.kind == BodyKind::Batch && !version.allows_batches() {
        findings.add(
            Rule::RequestBatch,
            format!("a JSON array was POSTed under {version}"),
            None,
        );
    }
    if req.headers.is_empty() || req.http_method != "POST" {
        return;
    }
    check_accept(req, findings);
    let is_initialize = req.method.as_deref() == Some("initialize");
    let header_required = version.is_stateless()
        || (version >= ProtocolVersion::V2025_06_18 && after_initialize && !is_initialize);
    if header.is_none() && header_required {
        findings.add(
            Rule::RequestProtocolVersionHeader,
            format!("no MCP-Protocol-Version header under {version}"),
            None,
        );
    }
    if !version.is_stateless() || req.kind != BodyKind::Request {
        return;
    }
    check_meta(req, header, findings);
    check_routing_headers(req, findings);
}

/// Accept names both JSON and SSE.
fn check_accept(req: &Request, findings: &mut Findings) {
    let accept = req.headers.get("accept").unwrap_or("");
    if !(contains_ignoring_case(accept, wire::JSON)
        && contains_ignoring_case(accept, wire::EVENT_STREAM))
    {
        findings.add(
            Rule::RequestAccept,
            format!(
                "Accept is {:?}",
                req.headers.get("accept").unwrap_or("absent")
            ),
            None,
        );
    }
}

/// `haystack` contains the lower-case `needle` in any case (as sent, most often).
fn contains_ignoring_case(haystack: &str, needle: &str) -> bool {
    haystack.contains(needle)
        || haystack
            .as_bytes()
            .windows(needle.len())
            .any(|w| w.eq_ignore_ascii_case(needle.as_bytes()))
}

/// 2026-07-28: `_meta` carries the version and the client's capabilities, and agrees with the
/// version header.
fn check_meta(req: &Request, header: Option<&str>, findings: &mut Findings) {
    let meta_version = req.meta(VERSION_META).and_then(|v| v.as_str());
    if meta_version.is_none() || req.meta(CAPS_META).is_none() {
        findings.add(
            Rule::RequestMetaMissing,
            "params._meta lacks protocolVersion or clientCapabilities",
            None,
        );
    }
    if let (Some(h), Some(m)) = (header, meta_version)
        && h.trim() != m
    {
        findings.add(
            Rule::RequestProtocolVersionMismatch,
            format!("header {h:?} but _meta {m:?}"),
            None,
        );
    }
}

/// 2026-07-28: `Mcp-Method` and `Mcp-Name` repeat the method and its name for routing.
fn check_routing_headers(req: &Request, findings: &mut Findings) {
    let method = req.method.as_deref().unwrap_or("");
    match req.headers.get("mcp-method") {
        Some(h) if h == method => {}
        other => findings.add(
            Rule::RequestMcpMethodHeader,
            format!(
                "Mcp-Method is {:?}, method is {method:?}",
                other.unwrap_or("absent")
            ),
            None,
        ),
    }
    let name_key = match method {
        "tools/call" | "prompts/get" => Some("name"),
        "resources/read" => Some("uri"),
        _ => None,
    };
    if let Some(key) = name_key {
        let expected = req.param_str(key).unwrap_or("");
        let sent = req.headers.get("mcp-name").map(decode_header_value);
        if sent.as_deref() != Some(expected) {
            findings.add(
                Rule::RequestMcpNameHeader,
                format!(
                    "Mcp-Name is {:?}, params.{key} is {expected:?}",
                    sent.as_deref().unwrap_or("absent")
                ),
                None,
            );
        }
    }
}

/// Decodes the `=?base64?…?=` form used for header values that are not safe ASCII.
fn decode_header_value(v: &str) -> String {
    use base64::Engine;
    let v = v.trim();
    v.strip_prefix("=?base64?")
        .and_then(|rest| rest.strip_suffix("?="))
        .and_then(|b64| base64::engine::general_purpose::STANDARD.decode(b64).ok())
        .and_then(|bytes| String::from_utf8(bytes).ok())
        .unwrap_or_else(|| v.to_owned())
}
