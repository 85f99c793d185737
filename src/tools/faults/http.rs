//! The fault server's request reading: a strict, sans-IO reading of one HTTP/1.1 request head.
//!
//! The head is parsed by `httparse`; this module adds the framing and the checks that decide
//! whether the bytes after the head are this request's body or the next request, which is where
//! request smuggling lives: a `Content-Length` that is not exactly one plain decimal number, or
//! any `Transfer-Encoding`, is refused (400, connection closed) rather than guessed at. The Host
//! check is here too: exactly one `Host`, naming the address the connection actually arrived on
//! (a loopback server answers loopback names only: DNS-rebinding protection).
//!
//! Only the reading is strict; the replies stay raw TCP, so faults below HTTP remain possible.

use std::fmt;
use std::net::{IpAddr, SocketAddr};

/// Most header lines a request may carry.
pub const MAX_HEADERS: usize = 64;

/// A request head that passed the checks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestHead {
    /// Method, as sent.
    pub method: String,
    /// Request target (path and query), as sent.
    pub path: String,
    /// Header lines in order (values lossily decoded as UTF-8).
    pub headers: Vec<(String, String)>,
    /// Body length: the one `Content-Length`, or 0 without one.
    pub content_length: usize,
    /// Bytes of the head, the blank line included.
    pub head_len: usize,
}

impl RequestHead {
    /// The first header called `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// Why a request is refused. Each maps to a status; every one closes the connection, since the
/// server can no longer know where the next request starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RequestError {
    /// The head is longer than allowed (431).
    HeadTooLarge(usize),
    /// Not an HTTP/1.x request head (400).
    Malformed(String),
    /// A `Content-Length` that is not one plain decimal number (400).
    InvalidContentLength(String),
    /// More than one `Content-Length` (400).
    DuplicateContentLength,
    /// Any `Transfer-Encoding` (400): chunked request bodies are not read, and with a
    /// `Content-Length` the framing would be ambiguous.
    TransferEncoding {
        /// A `Content-Length` came with it.
        with_length: bool,
    },
    /// The body is longer than allowed (413).
    BodyTooLarge {
        /// Declared length.
        length: usize,
        /// The allowed maximum.
        max: usize,
    },
    /// No `Host` (400).
    MissingHost,
    /// More than one `Host` (400).
    DuplicateHost,
    /// A `Host` (or `Origin`) that does not name this server's address (403).
    ForeignHost(String),
}

impl RequestError {
    /// The HTTP status of the refusal.
    pub fn status(&self) -> u16 {
        match self {
            RequestError::HeadTooLarge(_) => 431,
            RequestError::BodyTooLarge { .. } => 413,
            RequestError::ForeignHost(_) => 403,
            _ => 400,
        }
    }
}

impl fmt::Display for RequestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RequestError::HeadTooLarge(max) => write!(f, "request head over {max} bytes"),
            RequestError::Malformed(why) => write!(f, "malformed request head: {why}"),
            RequestError::InvalidContentLength(v) => {
                write!(f, "Content-Length {v:?} is not a decimal length")
            }
            RequestError::DuplicateContentLength => f.write_str("more than one Content-Length"),
            RequestError::TransferEncoding { with_length: true } => {
                f.write_str("Transfer-Encoding with Content-Length: ambiguous framing")
            }
            RequestError::TransferEncoding { with_length: false } => {
                f.write_str("Transfer-Encoding in a request is not supported; send Content-Length")
            }
            RequestError::BodyTooLarge { length, max } => {
                write!(f, "request body of {length} bytes is over {max}")
            }
            RequestError::MissingHost => f.write_str("no Host header"),
            RequestError::DuplicateHost => f.write_str("more than one Host header"),
            RequestError::ForeignHost(h) => {
                write!(f, "Host or Origin {h:?} does not name this server")
            }
        }
    }
}

impl std::error::Error for RequestError {}

/// Reads one request head from the start of `buf`. `Ok(None)`: incomplete, read more.
///
/// # Errors
/// When the head is unusable or its framing is ambiguous (see [`RequestError`]).
pub fn parse_head(
    buf: &[u8],
    max_head: usize,
    max_body: usize,
) -> Result<Option<RequestHead>, RequestError> {
    let mut slots = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut req = httparse::Request::new(&mut slots);
    let head_len = match req.parse(buf) {
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) => {
            return if buf.len() > max_head {
                Err(RequestError::HeadTooLarge(max_head))
            } else {
                Ok(None)
            };
        }
        Err(e) => return Err(RequestError::Malformed(e.to_string())),
    };
    if head_len > max_head {
        return Err(RequestError::HeadTooLarge(max_head));
    }
    let headers: Vec<(String, String)> = req
        .headers
        .iter()
        .map(|h| {
            (
                h.name.to_owned(),
                String::from_utf8_lossy(h.value).trim().to_owned(),
            )
        })
        .collect();
    let named = |name: &'static str| {
        headers
            .iter()
            .filter(move |(n, _)| n.eq_ignore_ascii_case(name))
    };
    let lengths: Vec<&str> = named("content-length").map(|(_, v)| v.as_str()).collect();
    if named("transfer-encoding").next().is_some() {
        return Err(RequestError::TransferEncoding {
            with_length: !lengths.is_empty(),
        });
    }
    let content_length = match lengths.as_slice() {
        [] => 0,
        [one] => content_length(one)?,
        _ => return Err(RequestError::DuplicateContentLength),
    };
    if content_length > max_body {
        return Err(RequestError::BodyTooLarge {
            length: content_length,
            max: max_body,
        });
    }
    match named("host").count() {
        0 => return Err(RequestError::MissingHost),
        1 => {}
        _ => return Err(RequestError::DuplicateHost),
    }
    Ok(Some(RequestHead {
        method: req.method.unwrap_or_default().to_owned(),
        path: req.path.unwrap_or_default().to_owned(),
        headers,
        content_length,
        head_len,
    }))
}

/// `1*DIGIT`, nothing else (no sign, no list, no spaces inside), and representable.
fn content_length(v: &str) -> Result<usize, RequestError> {
    let bad = || RequestError::InvalidContentLength(v.chars().take(40).collect());
    if v.is_empty() || !v.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    v.parse().map_err(|_| bad())
}

/// Splits `host[:port]`, strictly: a bracketed IPv6 literal must be the whole host, and a port
/// is 1*DIGIT. `None` when it is not an authority.
pub fn split_authority(authority: &str) -> Option<(&str, Option<u16>)> {
    let (host, port) = if let Some(rest) = authority.strip_prefix('[') {
        let (inside, after) = rest.split_once(']')?;
        let port = match after {
            "" => None,
            p => Some(p.strip_prefix(':')?),
        };
        inside.parse::<std::net::Ipv6Addr>().ok()?;
        (inside, port)
    } else {
        let (host, port) = match authority.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (authority, None),
        };
        let name_ok = !host.is_empty()
            && host
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'-');
        if !name_ok {
            return None;
        }
        (host, port)
    };
    let port = match port {
        None => None,
        Some(p) if !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()) => Some(p.parse().ok()?),
        Some(_) => return None,
    };
    Some((host, port))
}

/// Whether `authority` names `local` (the address the connection arrived on): `localhost` when
/// that is a loopback address, or the address itself as an IP literal; with the same port, or
/// no port when that is 80.
pub fn names_local(authority: &str, local: SocketAddr) -> bool {
    let Some((host, port)) = split_authority(authority) else {
        return false;
    };
    if port.unwrap_or(80) != local.port() {
        return false;
    }
    let local_ip = canonical(local.ip());
    if host.eq_ignore_ascii_case("localhost") {
        return local_ip.is_loopback();
    }
    host.parse::<IpAddr>()
        .is_ok_and(|ip| canonical(ip) == local_ip)
}

/// An IPv4-mapped IPv6 address as the IPv4 address it is.
fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    }
}

/// The Host check, and the Origin check when an Origin is present (`scheme://authority`, no
/// path). `head` has exactly one Host ([`parse_head`] made sure).
///
/// # Errors
/// [`RequestError::ForeignHost`] naming the offending value.
pub fn check_host(head: &RequestHead, local: SocketAddr) -> Result<(), RequestError> {
    let host = head.header("host").unwrap_or("");
    if !names_local(host, local) {
        return Err(RequestError::ForeignHost(host.chars().take(80).collect()));
    }
    if let Some(origin) = head.header("origin") {
        let authority = origin
            .strip_prefix("http://")
            .or_else(|| origin.strip_prefix("https://"));
        if !authority.is_some_and(|a| names_local(a, local)) {
            return Err(RequestError::ForeignHost(origin.chars().take(80).collect()));
        }
    }
    Ok(())
}

/// Largest head and body the differential check reads with.
const DIFF_MAX_HEAD: usize = 64 * 1024;
const DIFF_MAX_BODY: usize = 4 << 20;

/// The differential check the fuzz target and the property tests run on any bytes: the strict
/// reading never panics, and where it accepts a head, an independent reading agrees with it:
/// `httparse` on the request line and every header line, a by-hand reading of the framing
/// headers (one plain decimal `Content-Length`, no `Transfer-Encoding`, one `Host`), and
/// `http::uri::Authority` on any Host it accepts as naming `local`.
///
/// # Panics
/// When the readings disagree (that is the finding).
#[doc(hidden)]
pub fn differential(input: &[u8], local: SocketAddr) {
    let ours = parse_head(input, DIFF_MAX_HEAD, DIFF_MAX_BODY);
    let mut slots = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut reference = httparse::Request::new(&mut slots);
    let status = reference.parse(input);
    let Some(head_len) = complete_in_both(input, &ours, &status) else {
        return;
    };
    let named = |name: &str| {
        reference
            .headers
            .iter()
            .filter(|h| h.name.eq_ignore_ascii_case(name))
            .map(|h| String::from_utf8_lossy(h.value).trim().to_owned())
            .collect::<Vec<_>>()
    };
    let (lengths, hosts) = (named("content-length"), named("host"));
    let framing_ok = framing_is_plain(head_len, &lengths, &named("transfer-encoding"), &hosts);
    let head = match ours {
        Ok(Some(head)) => head,
        Err(e) => {
            assert!(!framing_ok, "refused ({e}) a head whose framing is fine");
            return;
        }
        Ok(None) => panic!("strict reading incomplete, httparse complete"),
    };
    assert!(
        framing_ok,
        "accepted a head with ambiguous framing: {head:?}"
    );
    assert_eq!(head.head_len, head_len);
    assert_eq!(Some(head.method.as_str()), reference.method);
    assert_eq!(Some(head.path.as_str()), reference.path);
    assert_eq!(head.headers.len(), reference.headers.len());
    for ((name, value), h) in head.headers.iter().zip(reference.headers.iter()) {
        assert_eq!(name, h.name);
        assert_eq!(*value, String::from_utf8_lossy(h.value).trim());
    }
    let length = lengths
        .first()
        .map_or(0, |v| v.parse().unwrap_or(usize::MAX));
    assert_eq!(head.content_length, length);
    if check_host(&head, local).is_ok() {
        host_names_local(&hosts[0], local);
    }
}

/// Where both readings agree that the head is incomplete or malformed: `None` (nothing more to
/// compare). Where `httparse` read a whole head: its length.
///
/// # Panics
/// When only one of them read a whole head.
fn complete_in_both(
    input: &[u8],
    ours: &Result<Option<RequestHead>, RequestError>,
    status: &Result<httparse::Status<usize>, httparse::Error>,
) -> Option<usize> {
    match (ours, status) {
        (_, Ok(httparse::Status::Complete(n))) => Some(*n),
        (Ok(None), Ok(httparse::Status::Partial)) => None,
        (Err(RequestError::HeadTooLarge(_)), Ok(httparse::Status::Partial)) => {
            assert!(input.len() > DIFF_MAX_HEAD);
            None
        }
        (Err(RequestError::Malformed(_)), Err(_)) => None,
        _ => panic!("strict reading {ours:?} but httparse {status:?}"),
    }
}

/// The by-hand reading of the framing: a head within bounds, no `Transfer-Encoding`, at most
/// one plain decimal `Content-Length` within bounds, exactly one `Host`.
fn framing_is_plain(
    head_len: usize,
    lengths: &[String],
    encodings: &[String],
    hosts: &[String],
) -> bool {
    let plain = |v: &str| !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit());
    head_len <= DIFF_MAX_HEAD
        && encodings.is_empty()
        && lengths.len() <= 1
        && lengths
            .iter()
            .all(|v| plain(v) && v.parse::<usize>().is_ok_and(|n| n <= DIFF_MAX_BODY))
        && hosts.len() == 1
}

/// `http::uri::Authority`'s reading of an accepted Host: it names `local`.
///
/// # Panics
/// When it does not.
fn host_names_local(host_value: &str, local: SocketAddr) {
    let authority: http::uri::Authority = host_value
        .parse()
        .unwrap_or_else(|e| panic!("accepted Host {host_value:?} that is no authority: {e}"));
    assert_eq!(authority.port_u16().unwrap_or(80), local.port());
    let host = authority
        .host()
        .trim_start_matches('[')
        .trim_end_matches(']');
    assert!(
        host.eq_ignore_ascii_case("localhost") && local.ip().is_loopback()
            || host
                .parse::<IpAddr>()
                .is_ok_and(|ip| canonical(ip) == canonical(local.ip())),
        "accepted Host {host_value:?} for {local}"
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAX: usize = 1 << 20;

    fn parse(text: &str) -> Result<Option<RequestHead>, RequestError> {
        parse_head(text.as_bytes(), 64 * 1024, MAX)
    }

    fn local() -> SocketAddr {
        "127.0.0.1:8787".parse().unwrap()
    }

    #[test]
    fn a_plain_request_is_read() {
        let head =
            parse("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:8787\r\nContent-Length: 5\r\n\r\nhello")
                .unwrap()
                .unwrap();
        assert_eq!((head.method.as_str(), head.path.as_str()), ("POST", "/mcp"));
        assert_eq!(head.content_length, 5);
        assert_eq!(head.head_len, 63);
        assert_eq!(parse("POST /mcp HTTP/1.1\r\nHost: x"), Ok(None));
    }

    #[test]
    fn ambiguous_framing_is_refused() {
        let cases = [
            (
                "Content-Length: abc",
                RequestError::InvalidContentLength("abc".into()),
            ),
            (
                "Content-Length: -5",
                RequestError::InvalidContentLength("-5".into()),
            ),
            (
                "Content-Length: +5",
                RequestError::InvalidContentLength("+5".into()),
            ),
            (
                "Content-Length: 5, 5",
                RequestError::InvalidContentLength("5, 5".into()),
            ),
            (
                "Content-Length: 99999999999999999999999",
                RequestError::InvalidContentLength("99999999999999999999999".into()),
            ),
            (
                "Content-Length: 5\r\nContent-Length: 5",
                RequestError::DuplicateContentLength,
            ),
            (
                "Content-Length: 5\r\nContent-Length: 0",
                RequestError::DuplicateContentLength,
            ),
            (
                "Transfer-Encoding: chunked\r\nContent-Length: 5",
                RequestError::TransferEncoding { with_length: true },
            ),
            (
                "Transfer-Encoding: chunked",
                RequestError::TransferEncoding { with_length: false },
            ),
            (
                "Content-Length: 2000000",
                RequestError::BodyTooLarge {
                    length: 2_000_000,
                    max: MAX,
                },
            ),
        ];
        for (line, want) in cases {
            let text = format!("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:8787\r\n{line}\r\n\r\n");
            assert_eq!(parse(&text), Err(want), "{line}");
        }
    }

    #[test]
    fn host_must_be_one_and_name_this_server() {
        assert_eq!(
            parse("GET / HTTP/1.1\r\n\r\n"),
            Err(RequestError::MissingHost)
        );
        assert_eq!(
            parse("GET / HTTP/1.1\r\nHost: 127.0.0.1:8787\r\nHost: evil.example\r\n\r\n"),
            Err(RequestError::DuplicateHost)
        );
        let v6: SocketAddr = "[::1]:8787".parse().unwrap();
        let lan: SocketAddr = "192.168.1.5:8787".parse().unwrap();
        for (host, at, ok) in [
            ("127.0.0.1:8787", local(), true),
            ("localhost:8787", local(), true),
            ("LOCALHOST:8787", local(), true),
            ("[::1]:8787", v6, true),
            ("localhost:8787", v6, true),
            ("[::1]evil.example", v6, false),
            ("[::1]:8787evil", v6, false),
            ("[::1]:8787", local(), false),
            ("127.0.0.1:9999", local(), false),
            ("127.0.0.1", local(), false),
            ("127.0.0.2:8787", local(), false),
            ("evil.example:8787", local(), false),
            ("localhost.evil.example:8787", local(), false),
            ("127.0.0.1:8787@evil", local(), false),
            ("", local(), false),
            // Listening on every interface: a LAN connection must name the LAN address.
            ("127.0.0.1:8787", lan, false),
            ("localhost:8787", lan, false),
            ("192.168.1.5:8787", lan, true),
        ] {
            assert_eq!(names_local(host, at), ok, "{host} at {at}");
        }
        let head = |origin: &str| {
            parse(&format!(
                "POST / HTTP/1.1\r\nHost: 127.0.0.1:8787\r\nOrigin: {origin}\r\n\r\n"
            ))
            .unwrap()
            .unwrap()
        };
        assert!(check_host(&head("http://localhost:8787"), local()).is_ok());
        assert!(check_host(&head("http://evil.example"), local()).is_err());
        assert!(check_host(&head("null"), local()).is_err());
        assert!(check_host(&head("http://localhost:8787/path"), local()).is_err());
    }
}
