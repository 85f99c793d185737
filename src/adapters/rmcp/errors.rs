//! Error mapping: what rmcp's own reqwest client turns a response into, reproduced so that
//! rmcp sees the same errors with this transport as without it.

use std::collections::HashMap;

use http::header::{CONTENT_TYPE, RETRY_AFTER, WWW_AUTHENTICATE};
use http::{HeaderMap, HeaderName, HeaderValue, StatusCode};
use rmcp::model::ServerJsonRpcMessage;
use rmcp::model::{ClientJsonRpcMessage, ClientRequest, ErrorData, JsonRpcMessage};
use rmcp::transport::streamable_http_client::{
    AuthRequiredError, HttpStatusError, InsufficientScopeError, StreamableHttpError,
    StreamableHttpPostResponse,
};

use super::{
    BODY_READ_FAILURE, EVENT_STREAM, Error, JSON, LAST_EVENT_ID, MAX_RETRY_AFTER_BYTES, SESSION_ID,
    media_type_is,
};

/// What rmcp's reqwest client makes of a `GET` head, as an error (`None`: go on).
pub(super) fn get_error(response: &reqwest::Response) -> Option<Error> {
    let status = response.status();
    if status == StatusCode::METHOD_NOT_ALLOWED {
        return Some(StreamableHttpError::ServerDoesNotSupportSse);
    }
    let challenge = response.headers().get(WWW_AUTHENTICATE);
    if let (StatusCode::UNAUTHORIZED, Some(h)) = (status, challenge) {
        return Some(match header_text(h) {
            Ok(h) => StreamableHttpError::AuthRequired(AuthRequiredError::new(h)),
            Err(e) => e,
        });
    }
    if let (StatusCode::FORBIDDEN, Some(h)) = (status, challenge) {
        return Some(match header_text(h) {
            Ok(h) => {
                let scope = scope_of(&h);
                StreamableHttpError::InsufficientScope(InsufficientScopeError::new(h, scope))
            }
            Err(e) => e,
        });
    }
    if let Some(error) = http_status_error(status, response.headers()) {
        return Some(error.into());
    }
    if status.is_success() {
        let ct = response.headers().get(CONTENT_TYPE);
        let ok = ct.is_some_and(|ct| {
            let ct = String::from_utf8_lossy(ct.as_bytes());
            media_type_is(&ct, EVENT_STREAM) || media_type_is(&ct, JSON)
        });
        if !ok {
            return Some(StreamableHttpError::UnexpectedContentType(
                ct.map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned()),
            ));
        }
    }
    None
}

/// rmcp's reserved headers (`MCP-Protocol-Version` is let through: rmcp sets it that way).
pub(super) fn apply_custom_headers(
    mut rb: reqwest::RequestBuilder,
    custom_headers: HashMap<HeaderName, HeaderValue>,
) -> Result<reqwest::RequestBuilder, Error> {
    for (name, value) in custom_headers {
        let reserved = ["accept", SESSION_ID, LAST_EVENT_ID]
            .iter()
            .any(|r| name.as_str().eq_ignore_ascii_case(r));
        if reserved {
            return Err(StreamableHttpError::ReservedHeaderConflict(
                name.to_string(),
            ));
        }
        rb = rb.header(name, value);
    }
    Ok(rb)
}

/// 429 and 5xx keep only the status and a short `Retry-After`, as rmcp's client does.
pub(super) fn http_status_error(
    status: StatusCode,
    headers: &HeaderMap,
) -> Option<HttpStatusError> {
    if status != StatusCode::TOO_MANY_REQUESTS && !status.is_server_error() {
        return None;
    }
    let retry_after = headers
        .get(RETRY_AFTER)
        .filter(|v| v.as_bytes().len() <= MAX_RETRY_AFTER_BYTES)
        .and_then(|v| std::str::from_utf8(v.as_bytes()).ok())
        .map(str::to_owned);
    Some(HttpStatusError::new(status.as_u16(), retry_after))
}

pub(super) fn parse_json_rpc_error(body: &str) -> Option<ServerJsonRpcMessage> {
    match serde_json::from_str::<ServerJsonRpcMessage>(body) {
        Ok(message @ JsonRpcMessage::Error(_)) => Some(message),
        _ => None,
    }
}

/// rmcp's fallback for a legacy server's 4xx to `server/discover`: the rejection becomes a
/// JSON-RPC error with the request's id, so that rmcp's lifecycle can fall back to `initialize`.
pub(super) fn legacy_discover_response(
    message: &ClientJsonRpcMessage,
    session_was_attached: bool,
    status: StatusCode,
    body: &str,
) -> Option<StreamableHttpPostResponse> {
    if session_was_attached
        || !status.is_client_error()
        || matches!(status, StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN)
    {
        return None;
    }
    let JsonRpcMessage::Request(request) = message else {
        return None;
    };
    if !matches!(request.request, ClientRequest::DiscoverRequest(_)) {
        return None;
    }
    let error = match serde_json::from_str::<ServerJsonRpcMessage>(body) {
        Ok(JsonRpcMessage::Error(error)) => error.error,
        _ => ErrorData::invalid_request(
            format!("server/discover rejected with HTTP {status}: {body}"),
            None,
        ),
    };
    Some(StreamableHttpPostResponse::Json(
        ServerJsonRpcMessage::error(error, Some(request.id.clone())),
        None,
    ))
}

pub(super) fn header_text(value: &HeaderValue) -> Result<String, Error> {
    value.to_str().map(str::to_owned).map_err(|_| {
        StreamableHttpError::UnexpectedServerResponse(
            "invalid www-authenticate header value".into(),
        )
    })
}

/// The `scope=` parameter of a `WWW-Authenticate` challenge, quoted or not.
pub(super) fn scope_of(header: &str) -> Option<String> {
    let pos = header.to_ascii_lowercase().find("scope=")?;
    let value = &header[pos + "scope=".len()..];
    if let Some(quoted) = value.strip_prefix('"') {
        return quoted.find('"').map(|end| quoted[..end].to_owned());
    }
    let end = value
        .find(|c: char| c == ',' || c == ';' || c.is_whitespace())
        .unwrap_or(value.len());
    (end > 0).then(|| value[..end].to_owned())
}

pub(super) fn truncated_read_failure(max: usize) -> String {
    BODY_READ_FAILURE[..BODY_READ_FAILURE.len().min(max)].to_owned()
}

pub(super) fn prefix(mut text: String, max: usize) -> String {
    if text.len() > max {
        let mut end = max;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
    }
    text
}

pub(super) fn preview(body: &[u8]) -> String {
    if body.is_empty() {
        return "<empty>".into();
    }
    prefix(String::from_utf8_lossy(body).into_owned(), 256)
}
