//! The proxy's own answer when the upstream gave no response head, one text for both ways
//! through (the plain path and hyper's).

use super::shared::Shared;

/// The JSON-RPC error code of the proxy's own answer when the upstream gave no response head
/// (implementation-defined server error range).
pub const UNANSWERED_CODE: i64 = -32000;

/// The body of the proxy's answer (`status`: 502, or 504 past `--upstream-head-timeout`): a
/// JSON-RPC error naming the cause, for the request's id when it has one.
pub fn text(shared: &Shared, status: u16, request: &[u8], cause: &str) -> String {
    let id = match serde_json::from_slice::<serde_json::Value>(request) {
        Ok(serde_json::Value::Object(mut m)) => match m.remove("id") {
            Some(id @ (serde_json::Value::String(_) | serde_json::Value::Number(_))) => id,
            _ => serde_json::Value::Null,
        },
        _ => serde_json::Value::Null,
    };
    let upstream = shared
        .config
        .redaction()
        .url(shared.upstream.as_str())
        .into_owned();
    let what = if status == 504 {
        "timed out"
    } else {
        "did not answer"
    };
    #[derive(serde::Serialize)]
    struct Data<'a> {
        upstream: &'a str,
        cause: &'a str,
    }
    #[derive(serde::Serialize)]
    struct Error<'a> {
        code: i64,
        message: String,
        data: Data<'a>,
    }
    #[derive(serde::Serialize)]
    struct Answer<'a> {
        jsonrpc: &'static str,
        id: serde_json::Value,
        error: Error<'a>,
    }
    let body = Answer {
        jsonrpc: "2.0",
        id,
        error: Error {
            code: UNANSWERED_CODE,
            message: format!("mcp-verdict proxy: the upstream {what}: {cause}"),
            data: Data {
                upstream: &upstream,
                cause,
            },
        },
    };
    let mut text = serde_json::to_string(&body).unwrap_or_default();
    text.push('\n');
    text
}
