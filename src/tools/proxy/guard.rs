//! Checks on a client request before anything is forwarded: the path, the method, and the
//! DNS-rebinding protection of a loopback service (`Host` and `Origin` must be loopback names,
//! as `serve-faults` requires), each refused with a plain-text reason.

use std::net::IpAddr;

/// Why a request was refused before forwarding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// Another path than the upstream's.
    WrongPath(String),
    /// A method MCP's Streamable HTTP does not use.
    Method,
    /// `Host` is not a loopback name while the proxy listens on loopback.
    ForeignHost,
    /// No `Host` (HTTP/1.1 requires one).
    MissingHost,
    /// More than one `Host` (which one would the upstream read?).
    DuplicateHost,
    /// `Origin` is neither loopback nor allowed.
    ForeignOrigin,
    /// The request body is over the limit.
    BodyTooLarge(u64),
    /// The body did not arrive in time, or broke off.
    BodyUnreadable,
    /// Too many connections.
    Busy,
}

impl Refusal {
    /// The HTTP status it is answered with.
    pub fn status(&self) -> u16 {
        match self {
            Refusal::WrongPath(_) => 404,
            Refusal::Method => 405,
            Refusal::ForeignHost | Refusal::ForeignOrigin => 403,
            Refusal::MissingHost | Refusal::DuplicateHost => 400,
            Refusal::BodyTooLarge(_) => 413,
            Refusal::BodyUnreadable => 408,
            Refusal::Busy => 503,
        }
    }

    /// The reason, one line.
    pub fn reason(&self) -> String {
        match self {
            Refusal::WrongPath(path) => format!("mcp-verdict proxy serves only {path}"),
            Refusal::Method => "mcp-verdict proxy forwards POST, GET and DELETE only".into(),
            Refusal::ForeignHost => "Host is not a loopback name".into(),
            Refusal::MissingHost => "no Host header".into(),
            Refusal::DuplicateHost => "more than one Host header".into(),
            Refusal::ForeignOrigin => "Origin is not a loopback origin or an allowed one".into(),
            Refusal::BodyTooLarge(max) => {
                format!("request body over {max} bytes (--max-request-bytes)")
            }
            Refusal::BodyUnreadable => "request body not received in time".into(),
            Refusal::Busy => "connection limit reached (--max-connections)".into(),
        }
    }
}

/// Whether `authority` (`host[:port]`) names the loopback interface, read strictly: a host
/// (an IPv6 address only in brackets), then nothing or `:` and digits. `[::1]evil.example` or
/// `127.0.0.1@evil.example` is no loopback name.
pub fn is_loopback_authority(authority: &str) -> bool {
    let (host, port) = match authority.strip_prefix('[') {
        Some(rest) => match rest.split_once(']') {
            Some(split) => split,
            None => return false,
        },
        None => match authority.find(':') {
            Some(at) => authority.split_at(at),
            None => (authority, ""),
        },
    };
    let port_ok = port.is_empty()
        || port
            .strip_prefix(':')
            .is_some_and(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
    port_ok
        && (host.eq_ignore_ascii_case("localhost")
            || host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback()))
}

/// Exactly one `Host` value, or why not.
pub fn one_host<'a>(mut values: impl Iterator<Item = &'a str>) -> Result<&'a str, Refusal> {
    match (values.next(), values.next()) {
        (Some(host), None) => Ok(host),
        (None, _) => Err(Refusal::MissingHost),
        (Some(_), Some(_)) => Err(Refusal::DuplicateHost),
    }
}

/// Checks `Host` (only when the proxy listens on loopback) and `Origin` (always).
pub fn check_names(
    host: Option<&str>,
    origin: Option<&str>,
    loopback: bool,
    allow_origins: &[String],
) -> Result<(), Refusal> {
    if loopback && host.is_some_and(|h| !is_loopback_authority(h)) {
        return Err(Refusal::ForeignHost);
    }
    if let Some(origin) = origin {
        let allowed = allow_origins.iter().any(|a| a.eq_ignore_ascii_case(origin));
        let authority = origin.split_once("://").map_or(origin, |(_, rest)| rest);
        if !allowed && !is_loopback_authority(authority) {
            return Err(Refusal::ForeignOrigin);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_names_pass_and_others_are_refused() {
        assert!(is_loopback_authority("127.0.0.1:8080"));
        assert!(is_loopback_authority("[::1]:1"));
        assert!(is_loopback_authority("LOCALHOST"));
        assert!(!is_loopback_authority("evil.example:80"));
        assert!(!is_loopback_authority("10.0.0.1"));
        assert!(!is_loopback_authority("[::1]evil.example"));
        assert!(!is_loopback_authority("127.0.0.1@evil.example"));
        assert!(!is_loopback_authority("127.0.0.1:80 evil"));
        assert!(!is_loopback_authority(""));
        assert_eq!(one_host(["a"].into_iter()), Ok("a"));
        assert_eq!(one_host(std::iter::empty()), Err(Refusal::MissingHost));
        assert_eq!(
            one_host(["a", "b"].into_iter()),
            Err(Refusal::DuplicateHost)
        );
        assert_eq!(check_names(Some("127.0.0.1:1"), None, true, &[]), Ok(()));
        assert_eq!(
            check_names(Some("evil.example"), None, true, &[]),
            Err(Refusal::ForeignHost)
        );
        assert_eq!(check_names(Some("evil.example"), None, false, &[]), Ok(()));
        assert_eq!(
            check_names(None, Some("https://evil.example"), true, &[]),
            Err(Refusal::ForeignOrigin)
        );
        let allowed = ["https://app.example".to_string()];
        assert_eq!(
            check_names(None, Some("https://app.example"), true, &allowed),
            Ok(())
        );
        assert_eq!(
            check_names(None, Some("http://localhost:3000"), true, &[]),
            Ok(())
        );
    }
}
