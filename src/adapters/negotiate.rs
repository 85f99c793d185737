//! Version negotiation after a rejection: which revision to try next.
//!
//! A 2026-07-28 server rejects a revision it does not speak with `-32022` (HTTP 400) and lists
//! the ones it does in `error.data.supported`; some 2025 servers answer an unsupported
//! `MCP-Protocol-Version` with a 400 that carries the same list. A conformant client retries
//! once with a revision from that list (the official suite's `request-metadata` scenario checks
//! it). Pure functions, so the choice is tested without a server.

use serde_json::Value;

use crate::version::ProtocolVersion;

/// `-32022`: the requested protocol version is not supported.
pub const UNSUPPORTED_VERSION: i64 = -32022;

/// The revisions a rejection offers, newest first, among those this crate speaks; empty when the
/// message is not a version rejection with a `supported` list.
pub fn offered(message: &Value) -> Vec<ProtocolVersion> {
    let Some(error) = message.get("error") else {
        return Vec::new();
    };
    let code = error.get("code").and_then(Value::as_i64);
    let text = error.get("message").and_then(Value::as_str).unwrap_or("");
    let about_version =
        code == Some(UNSUPPORTED_VERSION) || text.to_ascii_lowercase().contains("protocol version");
    if !about_version {
        return Vec::new();
    }
    let list = error
        .get("data")
        .and_then(|d| d.get("supported"))
        .and_then(Value::as_array);
    let mut versions: Vec<ProtocolVersion> = list
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .filter_map(|s| ProtocolVersion::parse(s).filter(|v| v.as_str() == s))
        .collect();
    versions.sort_unstable_by(|a, b| b.cmp(a));
    versions.dedup();
    versions
}

/// The revision to retry with: the newest offered one, unless it is the one just refused.
pub fn retry_with(message: &Value, refused: ProtocolVersion) -> Option<ProtocolVersion> {
    let offered = offered(message);
    // A server that lists the refused revision as supported refused something else about the
    // request (the suite's mock does so once on purpose): the same revision is the one to retry.
    if offered.contains(&refused) {
        Some(refused)
    } else {
        offered.first().copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rejection(code: i64, supported: Value) -> Value {
        json!({"jsonrpc": "2.0", "id": 1, "error": {"code": code,
               "message": "Unsupported protocol version", "data": {"supported": supported}}})
    }

    #[test]
    fn picks_the_newest_spoken_revision() {
        let m = rejection(-32022, json!(["2025-06-18", "2099-01-01", "2025-11-25"]));
        assert_eq!(
            offered(&m),
            [ProtocolVersion::V2025_11_25, ProtocolVersion::V2025_06_18]
        );
        assert_eq!(
            retry_with(&m, ProtocolVersion::V2026_07_28),
            Some(ProtocolVersion::V2025_11_25)
        );
    }

    #[test]
    fn same_revision_when_the_server_lists_it() {
        let m = rejection(-32022, json!(["2026-07-28"]));
        assert_eq!(
            retry_with(&m, ProtocolVersion::V2026_07_28),
            Some(ProtocolVersion::V2026_07_28)
        );
    }

    #[test]
    fn nothing_to_retry_without_a_usable_list() {
        for m in [
            rejection(-32022, json!(["2099-01-01"])),
            rejection(-32022, json!("2025-11-25")),
            json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32602, "message": "Invalid params",
                   "data": {"supported": ["2025-11-25"]}}}),
            json!({"jsonrpc": "2.0", "id": 1, "result": {}}),
            json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32022, "message": "x"}}),
        ] {
            assert_eq!(retry_with(&m, ProtocolVersion::V2026_07_28), None, "{m}");
        }
        // A 2025 server's 400 names the problem in its message, not its code.
        let m = json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32000,
            "message": "Bad Request: Unsupported protocol version",
            "data": {"supported": ["2025-06-18"]}}});
        assert_eq!(
            retry_with(&m, ProtocolVersion::V2025_11_25),
            Some(ProtocolVersion::V2025_06_18)
        );
    }
}
