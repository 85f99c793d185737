//! Why a connection failed, in words a user can act on: refused, DNS, TLS, proxy, timeout.
//!
//! A bare `CONNECTION_FAILED` sends users guessing; the cause goes into the verdict's
//! `retry.reason` (so JSON and the human line both carry it).

use std::error::Error as StdError;
use std::io;

/// The environment variables that route reqwest through a proxy, in the order it reads them.
const PROXY_VARS: [&str; 6] = [
    "HTTPS_PROXY",
    "https_proxy",
    "HTTP_PROXY",
    "http_proxy",
    "ALL_PROXY",
    "all_proxy",
];

/// The cause of a failed connection attempt from an I/O error.
#[cfg_attr(not(feature = "tools"), allow(dead_code))] // the proxy's and soak's own connections
pub(crate) fn of_io(e: &io::Error, host: &str, port: u16) -> String {
    match e.kind() {
        io::ErrorKind::ConnectionRefused => {
            format!("connection refused: nothing listens on {host}:{port}")
        }
        io::ErrorKind::TimedOut => format!("timed out connecting to {host}:{port}"),
        io::ErrorKind::ConnectionReset | io::ErrorKind::ConnectionAborted => {
            format!("{host}:{port} reset the connection before the response head")
        }
        _ if looks_like_dns(&e.to_string()) => format!("DNS: cannot resolve {host}: {e}"),
        _ => format!("{host}:{port}: {e}"),
    }
}

fn looks_like_dns(text: &str) -> bool {
    let t = text.to_ascii_lowercase();
    t.contains("dns error")
        || t.contains("failed to lookup address")
        || t.contains("name or service not known")
        || t.contains("no such host")
        || t.contains("nodename nor servname")
        || t.contains("temporary failure in name resolution")
}

/// The proxy variable in force for `scheme`, if any (as reqwest reads them).
fn proxy_var(scheme: &str) -> Option<&'static str> {
    PROXY_VARS
        .iter()
        .filter(|v| !(scheme == "http" && v.eq_ignore_ascii_case("https_proxy")))
        .filter(|v| !(scheme == "https" && v.eq_ignore_ascii_case("http_proxy")))
        .find(|v| std::env::var_os(v).is_some_and(|x| !x.is_empty()))
        .copied()
}

/// The cause of a failed request from its error chain.
pub(crate) fn of_error(e: &(dyn StdError + 'static), url: &reqwest::Url) -> String {
    let host = url.host_str().unwrap_or("?");
    let port = url.port_or_known_default().unwrap_or(0);
    let mut chain = Vec::new();
    let mut io_kind = None;
    let mut cur: Option<&(dyn StdError + 'static)> = Some(e);
    while let Some(err) = cur {
        if let Some(io) = err.downcast_ref::<io::Error>() {
            io_kind.get_or_insert(io.kind());
        }
        chain.push(err.to_string());
        cur = err.source();
    }
    let text = chain.join(": ");
    let lower = text.to_ascii_lowercase();
    let through = proxy_var(url.scheme())
        .map(|v| format!(" (through the proxy from {v})"))
        .unwrap_or_default();
    if lower.contains("proxy") {
        return format!("proxy{through}: {}", last(&chain));
    }
    if looks_like_dns(&lower) {
        return format!("DNS: cannot resolve {host}{through}: {}", last(&chain));
    }
    if url.scheme() == "https" && lower.contains("invalidcontenttype") {
        // The reply to the TLS hello was not TLS: most likely an HTTP response.
        return format!(
            "TLS with {host}:{port}{through}: the server speaks plain HTTP; did you mean {}?",
            plain_http(url)
        );
    }
    if lower.contains("certificate")
        || lower.contains("tls")
        || lower.contains("handshake")
        || lower.contains("invalidcontenttype")
        || lower.contains("peer sent")
    {
        return format!("TLS with {host}:{port}{through}: {}", last(&chain));
    }
    if lower.contains("scheme is not http") || lower.contains("url scheme is not allowed") {
        return format!(
            "{}:// is not supported by this build (enable the `tls` feature)",
            url.scheme()
        );
    }
    let closed = matches!(
        io_kind,
        Some(
            io::ErrorKind::ConnectionReset
                | io::ErrorKind::ConnectionAborted
                | io::ErrorKind::UnexpectedEof
        )
    );
    if url.scheme() == "https" && closed && !lower.contains("connection closed before message") {
        return format!(
            "TLS with {host}:{port}{through}: the server closed the connection during the handshake; if it speaks plain HTTP, did you mean {}? ({})",
            plain_http(url),
            last(&chain)
        );
    }
    match io_kind {
        Some(io::ErrorKind::ConnectionRefused) => {
            format!("connection refused: nothing listens on {host}:{port}{through}")
        }
        Some(io::ErrorKind::TimedOut) => format!("timed out connecting to {host}:{port}{through}"),
        Some(io::ErrorKind::ConnectionReset | io::ErrorKind::ConnectionAborted) => {
            format!("{host}:{port} reset the connection before the response head{through}")
        }
        _ => format!("{host}:{port}{through}: {}", last(&chain)),
    }
}

/// `url` as `http://`, on the same port (an `https://` URL without one keeps 443), without
/// userinfo or query (they may carry secrets).
fn plain_http(url: &reqwest::Url) -> String {
    let host = url.host_str().unwrap_or("?");
    let port = url.port_or_known_default().unwrap_or(443);
    format!("http://{host}:{port}{}", url.path())
}

fn last(chain: &[String]) -> &str {
    chain.last().map_or("", String::as_str)
}

/// Puts the cause into a `CONNECTION_FAILED` verdict's reason.
pub(crate) fn explain(verdict: &mut crate::verdict::Verdict, cause: &str) {
    const HEAD: &str = "the connection failed";
    let reason = &mut verdict.retry.reason;
    *reason = match reason.strip_prefix(HEAD) {
        Some(rest) => format!("{HEAD}: {cause}{rest}"),
        None => format!("{cause}; {reason}"),
    }
    .into();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn io_causes_are_named() {
        let refused = io::Error::from(io::ErrorKind::ConnectionRefused);
        assert_eq!(
            of_io(&refused, "127.0.0.1", 9),
            "connection refused: nothing listens on 127.0.0.1:9"
        );
        let dns =
            io::Error::other("failed to lookup address information: Name or service not known");
        assert!(
            of_io(&dns, "nowhere.invalid", 80).starts_with("DNS: cannot resolve nowhere.invalid")
        );
    }

    #[test]
    fn the_plain_http_suggestion_keeps_the_port_and_drops_secrets() {
        let at = |u: &str| plain_http(&reqwest::Url::parse(u).unwrap());
        assert_eq!(at("https://example.com/mcp"), "http://example.com:443/mcp");
        assert_eq!(
            at("https://user:pw@127.0.0.1:8443/mcp?token=x"),
            "http://127.0.0.1:8443/mcp"
        );
        assert_eq!(at("https://[::1]:9/"), "http://[::1]:9/");
    }
}
