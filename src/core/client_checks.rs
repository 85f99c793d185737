//! Request-side rules: what the client had to send (headers, `_meta`), checked before the
//! response is looked at. Only applied when the capture recorded request headers.

use crate::findings::Findings;
use crate::headers::Known;
use crate::request::{BodyKind, Request};
use crate::rules::Rule;
use crate::version::ProtocolVersion;
use crate::vocab::methods;
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
    check_removed_method(req, version, findings);
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

/// A method the revision removed ([`crate::vocab::methods`]): read from the body, so checked
/// whether or not the capture kept the headers. A batch is already a violation from
/// 2025-06-18 on, and removals start later, so only single messages are read.
fn check_removed_method(req: &Request, version: ProtocolVersion, findings: &mut Findings) {
    if !matches!(req.kind, BodyKind::Request | BodyKind::Notification) {
        return;
    }
    let Some(method) = req.method.as_deref() else {
        return;
    };
    if let Some(removed) = methods::removed_in(version, method) {
        findings.add(
            Rule::RequestRemovedMethod,
            format!(
                "{method} was removed in {}; instead: {}",
                removed.in_version, removed.instead
            ),
            None,
        );
    }
}

/// The `Accept` value the TypeScript, Python and Rust SDKs send: told by one comparison.
const SDKS_ACCEPT: &str = "application/json, text/event-stream";

/// Accept names both JSON and SSE.
fn check_accept(req: &Request, findings: &mut Findings) {
    let accept = req.headers.known(Known::Accept).unwrap_or("");
    if accept != SDKS_ACCEPT
        && !(contains_ignoring_case(accept, wire::JSON)
            && contains_ignoring_case(accept, wire::EVENT_STREAM))
    {
        findings.add(
            Rule::RequestAccept,
            format!(
                "Accept is {:?}",
                req.headers.known(Known::Accept).unwrap_or("absent")
            ),
            None,
        );
    }
}

/// `haystack` contains the lower-case `needle` in any case. The places where the needle's
/// first letter (a lower-case letter here) occurs in either case are found eight bytes at a
/// time and each compared whole: a window slid over every byte was a tenth of the cost of
/// judging a small exchange.
fn contains_ignoring_case(haystack: &str, needle: &str) -> bool {
    let (h, n) = (haystack.as_bytes(), needle.as_bytes());
    let Some(&first) = n.first() else {
        return true;
    };
    let Some(last_start) = h.len().checked_sub(n.len()) else {
        return false;
    };
    let matches_at = |at: usize| wire::eq_lower(&h[at..at + n.len()], n);
    let mut i = 0;
    while i + 8 <= last_start + 1 {
        // `| 0x20` makes an upper-case letter lower case (and lets a few other bytes through,
        // which the comparison turns down); a hit marks each byte equal to `first` (and maybe
        // a byte above one: also turned down).
        let word = <[u8; 8]>::try_from(&h[i..i + 8]).map_or(0, u64::from_le_bytes);
        let mut hits =
            wire::zero_bytes((word | (wire::ONES * 0x20)) ^ (wire::ONES * u64::from(first)));
        while hits != 0 {
            if matches_at(i + (hits.trailing_zeros() / 8) as usize) {
                return true;
            }
            hits &= hits - 1;
        }
        i += 8;
    }
    (i..=last_start).any(|at| h[at] | 0x20 == first && matches_at(at))
}

/// 2026-07-28: `_meta` carries the version and the client's capabilities, and agrees with the
/// version header.
fn check_meta(req: &Request, header: Option<&str>, findings: &mut Findings) {
    let meta_version = req.meta_str(VERSION_META);
    if meta_version.is_none() || !req.has_meta(CAPS_META) {
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

/// 2026-07-28: `Mcp-Method` and `Mcp-Name` repeat the method and its name for routing. The
/// tasks extension routes `tasks/get`, `tasks/update` and `tasks/cancel` by `Mcp-Name: <taskId>`
/// too (a load balancer sends every poll to the node that runs the task).
fn check_routing_headers(req: &Request, findings: &mut Findings) {
    let method = req.method.as_deref().unwrap_or("");
    match req.headers.known(Known::McpMethod) {
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
        "tasks/get" | "tasks/update" | "tasks/cancel" => Some("taskId"),
        _ => None,
    };
    if let Some(key) = name_key {
        let expected = req.param_str(key).unwrap_or("");
        let sent = req
            .headers
            .known(Known::McpName)
            .map(|v| mcp_header_value(v).unwrap_or_else(|| v.trim().to_owned()));
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

/// An MCP header's value (`Mcp-Name`, `Mcp-Param-*`) as meant: surrounding whitespace dropped
/// and the `=?base64?…?=` form used for values that are not safe ASCII decoded; `None` when that
/// form does not hold valid, padded base64 of UTF-8 (a value without both markers is literal).
/// The judge reads such a value as sent; the fault server refuses it.
pub(crate) fn mcp_header_value(v: &str) -> Option<String> {
    use base64::Engine;
    let v = v.trim();
    match v
        .strip_prefix("=?base64?")
        .and_then(|rest| rest.strip_suffix("?="))
    {
        Some(b64) => base64::engine::general_purpose::STANDARD
            .decode(b64)
            .ok()
            .and_then(|bytes| String::from_utf8(bytes).ok()),
        None => Some(v.to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::Headers;

    fn rules_for(body: &str, version: ProtocolVersion) -> Vec<Rule> {
        let req = Request::new("POST", Headers::new(), body.as_bytes());
        let mut findings = Findings::default();
        check_request(&req, None, version, false, &mut findings);
        findings.into_vec().into_iter().map(|v| v.rule).collect()
    }

    /// Every removed method, as a request and as a notification, only from 2026-07-28 on; a
    /// method that stays (tasks/get) and a response are never reported.
    #[test]
    fn removed_methods_only_on_2026() {
        use ProtocolVersion::*;
        for removed in methods::REMOVED {
            let m = removed.method;
            let request = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"{m}"}}"#);
            let notification = format!(r#"{{"jsonrpc":"2.0","method":"{m}"}}"#);
            for body in [&request, &notification] {
                assert_eq!(
                    rules_for(body, V2026_07_28),
                    [Rule::RequestRemovedMethod],
                    "{body}"
                );
                for earlier in [V2025_03_26, V2025_06_18, V2025_11_25] {
                    assert!(rules_for(body, earlier).is_empty(), "{body} {earlier}");
                }
            }
        }
        let kept = r#"{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"taskId":"t"}}"#;
        assert!(rules_for(kept, V2026_07_28).is_empty());
        let response = r#"{"jsonrpc":"2.0","id":1,"result":{}}"#;
        assert!(rules_for(response, V2026_07_28).is_empty());
    }

    #[test]
    fn removed_method_detail_names_the_replacement() {
        let req = Request::new(
            "POST",
            Headers::new(),
            br#"{"jsonrpc":"2.0","id":3,"method":"logging/setLevel","params":{"level":"info"}}"#,
        );
        let mut findings = Findings::default();
        check_request(
            &req,
            None,
            ProtocolVersion::V2026_07_28,
            false,
            &mut findings,
        );
        let v = findings.into_vec();
        assert_eq!(v.len(), 1);
        assert!(v[0].detail.contains("logLevel"), "{}", v[0].detail);
    }

    /// 2026-07-28 task requests are routed by `Mcp-Name: <taskId>`; a wrong one is the client's
    /// fault even when the server rejects it with 400 and -32020 (fix the request).
    #[test]
    fn task_requests_carry_their_task_id_in_mcp_name() {
        use crate::verdict::Advice;
        use crate::{End, Headers, Request, ResponseHead, Session};
        for method in ["tasks/get", "tasks/update", "tasks/cancel"] {
            let body = format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"{method}","params":{{"taskId":"t-1","_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{{}}}}}}}}"#
            );
            let judge = |name: &str, status: u16, reply: &str| {
                let headers = Headers::from_iter([
                    ("Accept", SDKS_ACCEPT),
                    ("Content-Type", "application/json"),
                    ("MCP-Protocol-Version", "2026-07-28"),
                    ("Mcp-Method", method),
                    ("Mcp-Name", name),
                ]);
                let mut session = Session::default();
                let mut ex = session.begin(Request::new("POST", headers, body.as_bytes()));
                ex.on_head(ResponseHead {
                    status,
                    headers: Headers::from_iter([("Content-Type", "application/json")]),
                });
                ex.feed(reply.as_bytes());
                session.finish(&mut ex, End::Eof)
            };
            let fine = judge(
                "t-1",
                200,
                r#"{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete"}}"#,
            );
            assert!(
                !fine.breaks(Rule::RequestMcpNameHeader),
                "{method}: {:?}",
                fine.violations
            );
            let mismatch = r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32020,"message":"Mcp-Name does not match"}}"#;
            let wrong = judge("t-2", 400, mismatch);
            assert!(wrong.breaks(Rule::RequestMcpNameHeader), "{method}");
            assert_eq!(wrong.retry.advice, Advice::FixRequest);
            assert_eq!(wrong.error_code, Some(-32020));
        }
    }

    /// The search agrees with a window slid over every byte, on Accept values of every kind:
    /// either case, parameters, the needle at the start, the end, split, repeated, absent.
    #[test]
    fn contains_ignoring_case_is_a_sliding_window() {
        // The value told by one comparison is one the search passes.
        assert!(contains_ignoring_case(SDKS_ACCEPT, wire::JSON));
        assert!(contains_ignoring_case(SDKS_ACCEPT, wire::EVENT_STREAM));
        let slide = |h: &str, n: &str| {
            n.is_empty()
                || h.as_bytes()
                    .windows(n.len())
                    .any(|w| w.eq_ignore_ascii_case(n.as_bytes()))
        };
        let parts = [
            "application/json",
            "APPLICATION/JSON",
            "Application/Json;q=0.9",
            "text/event-stream",
            "Text/Event-Stream",
            "text/event-strea",
            "application/jso",
            "*/*",
            ", ",
            "a",
            "t",
            "T",
            "application/",
            "json",
            "\u{e9}",
        ];
        let mut checked = 0;
        for a in parts {
            for b in parts {
                for c in ["", ",", "application/json", "text/event-stream"] {
                    let h = format!("{a}{b}{c}");
                    for n in [wire::JSON, wire::EVENT_STREAM, "a", ""] {
                        assert_eq!(contains_ignoring_case(&h, n), slide(&h, n), "{h:?} {n:?}");
                        checked += 1;
                    }
                }
            }
        }
        assert_eq!(checked, 15 * 15 * 4 * 4);
    }
}
