//! Which headers cross the proxy (what its outputs hide is the one [`Redaction`](crate::Redaction)
//! policy).
//!
//! Hop-by-hop headers (RFC 9110 §7.6.1) belong to one connection and are dropped both ways, with
//! any header a `Connection` header names. Everything else passes unchanged, `Mcp-Session-Id`
//! included, except that the upstream request asks for an unencoded body (`Accept-Encoding` is
//! not forwarded) so that the bytes the analysis reads are the bytes of the messages.

use reqwest::header::HeaderMap;

use crate::request::Headers;

/// Hop-by-hop headers, lowercase.
const HOP_BY_HOP: [&str; 9] = [
    "connection",
    "keep-alive",
    "proxy-authenticate",
    "proxy-authorization",
    "proxy-connection",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
];

fn connection_tokens(map: &HeaderMap) -> Vec<String> {
    map.get_all("connection")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|t| t.trim().to_ascii_lowercase())
        .filter(|t| !t.is_empty())
        .collect()
}

/// `map` without hop-by-hop headers, the headers its `Connection` names, and `also_drop`
/// (removed in place: most requests have none of them, and then nothing is copied).
fn filtered(mut map: HeaderMap, also_drop: &[&str]) -> HeaderMap {
    for name in connection_tokens(&map) {
        map.remove(name.as_str());
    }
    for name in HOP_BY_HOP.iter().chain(also_drop) {
        map.remove(*name);
    }
    map
}

/// The client's request headers as sent upstream: without hop-by-hop headers, `Host` (the
/// upstream's own is used), `Content-Length` (set from the body) and `Accept-Encoding`.
pub fn upstream_request(map: HeaderMap) -> HeaderMap {
    filtered(map, &["host", "content-length", "accept-encoding"])
}

/// The upstream's response headers as sent to the client: without hop-by-hop headers.
pub fn client_response(map: HeaderMap) -> HeaderMap {
    filtered(map, &[])
}

/// Headers for the analysis (values that are not UTF-8 are read lossily; the forwarded bytes
/// are untouched).
pub fn for_analysis(map: &HeaderMap) -> Headers {
    let mut out = Headers::new();
    for (name, value) in map {
        out.push(name.as_str(), String::from_utf8_lossy(value.as_bytes()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    #[test]
    fn hop_by_hop_and_connection_named_headers_are_dropped() {
        let mut map = HeaderMap::new();
        map.insert(
            "connection",
            HeaderValue::from_static("keep-alive, x-private"),
        );
        map.insert("x-private", HeaderValue::from_static("1"));
        map.insert("transfer-encoding", HeaderValue::from_static("chunked"));
        map.insert("mcp-session-id", HeaderValue::from_static("abc"));
        map.insert("host", HeaderValue::from_static("127.0.0.1:1"));
        map.insert("accept-encoding", HeaderValue::from_static("gzip"));
        map.append("x-many", HeaderValue::from_static("a"));
        map.append("x-many", HeaderValue::from_static("b"));
        let up = upstream_request(map.clone());
        let names: Vec<&str> = up.keys().map(|k| k.as_str()).collect();
        assert_eq!(names, ["mcp-session-id", "x-many"]);
        assert_eq!(up.get_all("x-many").iter().count(), 2);
        let down = client_response(map.clone());
        assert!(down.contains_key("host") && down.contains_key("accept-encoding"));
        assert!(!down.contains_key("x-private") && !down.contains_key("transfer-encoding"));
    }
}
