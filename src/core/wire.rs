//! Names and numbers on the wire, each written once: MCP's reserved error codes, the `_meta`
//! keys, the two media types of Streamable HTTP and how a `Content-Type` is read.

/// `-32020` HeaderMismatch: a header disagrees with the body (2026-07-28).
pub(crate) const HEADER_MISMATCH: i64 = -32020;
/// `-32022` UnsupportedProtocolVersion (2026-07-28).
pub(crate) const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;

/// The codes that mean "rejected before dispatch because of the request itself" (2026-07-28):
/// `-32022..=-32020`, with `-32021` MissingRequiredClientCapability between the two above.
pub(crate) fn is_pre_dispatch(code: i64) -> bool {
    (UNSUPPORTED_PROTOCOL_VERSION..=HEADER_MISMATCH).contains(&code)
}

/// `_meta` key of the request's protocol version (2026-07-28).
pub(crate) const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// `_meta` key of the client's capabilities (2026-07-28).
pub(crate) const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
/// `_meta` key with which a request asks for `notifications/message` (2026-07-28).
pub(crate) const META_LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";

/// The JSON media type.
pub(crate) const JSON: &str = "application/json";
/// The SSE media type.
pub(crate) const EVENT_STREAM: &str = "text/event-stream";

/// A media type's essence: the part before any parameters, without the optional whitespace
/// around it (SP and HTAB, RFC 9110), case kept.
pub(crate) fn media_type(value: &str) -> &str {
    value
        .split(';')
        .next()
        .unwrap_or("")
        .trim_matches([' ', '\t'])
}

/// Whether `value` (a `Content-Type`) names `expected`, case-insensitively, parameters ignored.
#[cfg_attr(not(feature = "rmcp"), allow(dead_code))]
pub(crate) fn media_type_is(value: &str, expected: &str) -> bool {
    media_type(value).eq_ignore_ascii_case(expected)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pre_dispatch_range_is_the_three_codes() {
        let codes: Vec<i64> = (-32030..=-32010).filter(|&c| is_pre_dispatch(c)).collect();
        assert_eq!(
            codes,
            [UNSUPPORTED_PROTOCOL_VERSION, -32021, HEADER_MISMATCH]
        );
    }

    #[test]
    fn media_types() {
        assert_eq!(
            media_type(" Application/JSON ; charset=utf-8"),
            "Application/JSON"
        );
        assert!(media_type_is("Application/JSON; charset=utf-8", JSON));
        assert!(!media_type_is("application/jsonx", JSON));
        assert!(media_type_is("text/event-stream", EVENT_STREAM));
    }
}
