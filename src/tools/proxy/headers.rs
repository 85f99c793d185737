//! Which headers cross the proxy (what its outputs hide is the one [`Redaction`](crate::Redaction)
//! policy).
//!
//! Hop-by-hop headers (RFC 9110 §7.6.1) belong to one connection and are dropped both ways, with
//! any header a `Connection` header names. Everything else passes unchanged, `Mcp-Session-Id`
//! included, except that the upstream request asks for an unencoded body (`Accept-Encoding` is
//! not forwarded) so that the bytes the analysis reads are the bytes of the messages.

use crate::request::Headers;

use reqwest::header::{
    ACCEPT_ENCODING, CONNECTION, CONTENT_LENGTH, HOST, HeaderMap, HeaderName, PROXY_AUTHENTICATE,
    PROXY_AUTHORIZATION, TE, TRAILER, TRANSFER_ENCODING, UPGRADE,
};

/// Hop-by-hop headers (`Connection` is looked at on its own).
static HOP_BY_HOP: [HeaderName; 8] = [
    HeaderName::from_static("keep-alive"),
    PROXY_AUTHENTICATE,
    PROXY_AUTHORIZATION,
    HeaderName::from_static("proxy-connection"),
    TE,
    TRAILER,
    TRANSFER_ENCODING,
    UPGRADE,
];

/// What the upstream request also goes without.
static NOT_UPSTREAM: [HeaderName; 3] = [HOST, CONTENT_LENGTH, ACCEPT_ENCODING];

fn connection_tokens(map: &HeaderMap) -> Vec<String> {
    map.get_all(CONNECTION)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|t| t.trim().to_ascii_lowercase())
        .filter(|t| !t.is_empty())
        .collect()
}

/// Whether `name` (lowercase, as `HeaderName` keeps it) may be one of [`HOP_BY_HOP`],
/// [`NOT_UPSTREAM`] or `Connection`: one look at its length and first byte passes most names
/// (`content-type`, `mcp-session-id`, `date`, ...) without comparing their text.
#[inline]
fn maybe_hop_by_hop(name: &str) -> bool {
    matches!(
        (name.len(), name.as_bytes().first()),
        (10, Some(b'k' | b'c'))  // keep-alive, connection
            | (18 | 19, Some(b'p')) // proxy-authenticate, proxy-authorization
            | (16, Some(b'p'))       // proxy-connection
            | (2, Some(b't'))        // te
            | (7, Some(b't' | b'u')) // trailer, upgrade
            | (17, Some(b't'))       // transfer-encoding
            | (4, Some(b'h'))        // host
            | (14, Some(b'c'))       // content-length
            | (15, Some(b'a')) // accept-encoding
    )
}

/// `map` without hop-by-hop headers, the headers its `Connection` names, and `also_drop`
/// (removed in place). One pass over the names notes which of them are there (most messages
/// have none, or only `Host` and `Content-Length` of a request), and only those are removed.
fn filtered(mut map: HeaderMap, also_drop: &[HeaderName]) -> HeaderMap {
    let dropped = HOP_BY_HOP.iter().chain(also_drop);
    // Bit i: the i-th of `dropped` is there.
    let mut present = 0u32;
    let mut connection = false;
    for name in map.keys() {
        if !maybe_hop_by_hop(name.as_str()) {
            continue;
        }
        if name == CONNECTION {
            connection = true;
        } else if let Some(i) = dropped.clone().position(|d| d == name) {
            present |= 1 << i;
        }
    }
    if connection {
        for name in connection_tokens(&map) {
            map.remove(name.as_str());
        }
        map.remove(CONNECTION);
    }
    for (i, name) in dropped.enumerate() {
        if present & (1 << i) != 0 {
            map.remove(name);
        }
    }
    map
}

/// The client's request headers as sent upstream: without hop-by-hop headers, `Host` (the
/// upstream's own is used), `Content-Length` (set from the body) and `Accept-Encoding`.
pub fn upstream_request(map: HeaderMap) -> HeaderMap {
    filtered(map, &NOT_UPSTREAM)
}

/// The upstream's response headers as sent to the client: without hop-by-hop headers.
pub fn client_response(map: HeaderMap) -> HeaderMap {
    filtered(map, &[])
}

/// Headers for the analysis (values that are not UTF-8 are read lossily; the forwarded bytes
/// are untouched).
pub fn for_analysis(map: &HeaderMap) -> Headers {
    // Collected (sized from the map at once, not grown header by header); a value is copied
    // once, into the set's one string.
    map.iter()
        .map(|(name, value)| {
            let bytes = value.as_bytes();
            let text = match std::str::from_utf8(bytes) {
                Ok(text) => std::borrow::Cow::Borrowed(text),
                Err(_) => String::from_utf8_lossy(bytes),
            };
            (name.as_str(), text)
        })
        .collect()
}

/// Whether a header named `name` (any case) is dropped on the way: hop-by-hop (`Connection`
/// included) both ways, and `Host`, `Content-Length` and `Accept-Encoding` too when `upstream`.
/// The plain-POST path's test of a name as the peer wrote it (the names a `Connection` header
/// lists make that path hand the connection to hyper, so they need no look here).
pub fn dropped(name: &str, upstream: bool) -> bool {
    let lower = |n: &str| n.as_bytes().first().map(|b| b | 0x20);
    let quick = matches!(
        (name.len(), lower(name)),
        (10, Some(b'k' | b'c'))
            | (18 | 19 | 16, Some(b'p'))
            | (2 | 7 | 17, Some(b't'))
            | (7, Some(b'u'))
            | (4, Some(b'h'))
            | (14, Some(b'c'))
            | (15, Some(b'a'))
    );
    if !quick {
        return false;
    }
    let is = |n: &HeaderName| name.eq_ignore_ascii_case(n.as_str());
    is(&CONNECTION) || HOP_BY_HOP.iter().any(is) || (upstream && NOT_UPSTREAM.iter().any(is))
}

/// Headers as the peer sent them (parsed by httparse), for the analysis: names lowercased as
/// `HeaderMap` keeps them (so the verdicts and recordings read the same on both paths), values
/// that are not UTF-8 read lossily.
pub fn analysis_of(raw: &[httparse::Header<'_>]) -> Headers {
    analysis_of_pairs(raw.iter().map(|h| (h.name, h.value)))
}

/// [`analysis_of`] for `(name, value)` pairs (the plain path reads a request's headers again
/// from where they lie in the forwarded bytes, after sending them).
pub fn analysis_of_pairs<'a>(raw: impl ExactSizeIterator<Item = (&'a str, &'a [u8])>) -> Headers {
    analysis_of_text(raw.map(|(name, value)| {
        let text = match std::str::from_utf8(value) {
            Ok(text) => std::borrow::Cow::Borrowed(text),
            Err(_) => String::from_utf8_lossy(value),
        };
        (name, text)
    }))
}

/// [`analysis_of_pairs`] for values that are text already (a head that is UTF-8 as a whole,
/// checked once: no header needs a check of its own).
pub fn analysis_of_text<'a>(
    raw: impl ExactSizeIterator<Item = (&'a str, impl AsRef<str>)>,
) -> Headers {
    let mut headers = Headers::with_capacity(raw.len(), raw.len() * 48);
    for (name, value) in raw {
        headers.push_lowercased(name, value.as_ref());
    }
    headers
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
        // Nothing to drop: passed on as it is; one hop-by-hop name alone is still found.
        let mut plain = HeaderMap::new();
        plain.insert("mcp-session-id", HeaderValue::from_static("abc"));
        plain.insert("content-type", HeaderValue::from_static("application/json"));
        assert_eq!(client_response(plain.clone()), plain);
        plain.insert("keep-alive", HeaderValue::from_static("timeout=5"));
        assert!(!client_response(plain.clone()).contains_key("keep-alive"));
        plain.insert("host", HeaderValue::from_static("h"));
        assert!(!upstream_request(plain).contains_key("host"));
    }

    /// The quick look passes every name that is dropped, so that one of them alone is found.
    #[test]
    fn every_dropped_name_passes_the_quick_look() {
        for name in HOP_BY_HOP.iter().chain(&NOT_UPSTREAM).chain([&CONNECTION]) {
            assert!(maybe_hop_by_hop(name.as_str()), "{name}");
            let mut map = HeaderMap::new();
            map.insert("content-type", HeaderValue::from_static("text/plain"));
            map.insert(name.clone(), HeaderValue::from_static("x"));
            assert!(!upstream_request(map).contains_key(name), "{name}");
        }
        for name in [
            "content-type",
            "mcp-session-id",
            "date",
            "accept",
            "authorization",
        ] {
            assert!(!maybe_hop_by_hop(name), "{name}");
        }
    }

    /// Values that are not UTF-8 are read lossily; the rest as they are, in order.
    #[test]
    fn analysis_headers_keep_order_and_read_bad_bytes_lossily() {
        let mut map = HeaderMap::new();
        map.insert("content-type", HeaderValue::from_static("application/json"));
        map.append("x-many", HeaderValue::from_static("a"));
        map.append("x-many", HeaderValue::from_static("b"));
        map.insert("x-bad", HeaderValue::from_bytes(b"a\xffb").unwrap());
        let h = for_analysis(&map);
        let all: Vec<(&str, &str)> = h.iter().collect();
        assert_eq!(
            all,
            [
                ("content-type", "application/json"),
                ("x-many", "a"),
                ("x-many", "b"),
                ("x-bad", "a\u{fffd}b"),
            ]
        );
    }

    /// The plain path's look at names as peers write them agrees with the `HeaderMap` one, in
    /// any case; its analysis set reads as `for_analysis` of the same headers.
    #[test]
    fn raw_names_are_dropped_and_read_as_the_map_reads_them() {
        for name in HOP_BY_HOP.iter().chain([&CONNECTION]) {
            let upper = name.as_str().to_ascii_uppercase();
            assert!(
                dropped(name.as_str(), false) && dropped(&upper, false),
                "{name}"
            );
            assert!(dropped(&upper, true), "{name}");
        }
        for name in &NOT_UPSTREAM {
            assert!(dropped(name.as_str(), true), "{name}");
            assert!(!dropped(name.as_str(), false), "{name}");
        }
        for name in [
            "Content-Type",
            "Mcp-Session-Id",
            "Date",
            "Accept",
            "Authorization",
        ] {
            assert!(!dropped(name, true), "{name}");
        }
        let long = "X-".to_owned() + &"A".repeat(80);
        let raw = [
            httparse::Header {
                name: "Content-Type",
                value: b"application/json",
            },
            httparse::Header {
                name: "X-Bad",
                value: b"a\xffb",
            },
            httparse::Header {
                name: &long,
                value: b"v",
            },
        ];
        let mut map = HeaderMap::new();
        for h in &raw {
            map.append(
                HeaderName::from_bytes(h.name.as_bytes()).unwrap(),
                HeaderValue::from_bytes(h.value).unwrap(),
            );
        }
        let ours: Vec<(String, String)> = analysis_of(&raw)
            .iter()
            .map(|(n, v)| (n.to_owned(), v.to_owned()))
            .collect();
        let theirs: Vec<(String, String)> = for_analysis(&map)
            .iter()
            .map(|(n, v)| (n.to_owned(), v.to_owned()))
            .collect();
        assert_eq!(ours, theirs);
        assert_eq!(ours[0].0, "content-type");
        // A head that is UTF-8 as a whole reads the same through the text path.
        let text: Vec<(String, String)> = analysis_of_text(
            [raw[0], raw[2]]
                .iter()
                .map(|h| (h.name, std::str::from_utf8(h.value).unwrap())),
        )
        .iter()
        .map(|(n, v)| (n.to_owned(), v.to_owned()))
        .collect();
        assert_eq!(text, [ours[0].clone(), ours[2].clone()]);
    }
}
