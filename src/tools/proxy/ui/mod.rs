//! `proxy --ui ADDR`: one live page beside the proxy, fed over server-sent events.
//!
//! Modules, one job each: [`feed`] (what the page is sent, and the bounded memory behind it),
//! `server` (the HTTP side: the page, `/events`, `/har`, the token check), `page.html` (the page,
//! embedded so the binary needs no files, no CDN and no build step).
//!
//! The page shows what the proxy judges, which can include request bodies: it is served on
//! loopback only unless the caller opts in ([`check_listen`]), and every request must carry
//! the random [`Token`] printed with its URL (a page on another origin cannot read it, and a
//! DNS-rebound name gets a 403).

pub mod feed;
mod server;

use std::fmt;
use std::net::SocketAddr;

pub use feed::{DEFAULT_KEEP, Feed, SUBSCRIBER_QUEUE};
pub use server::{PAGE, serve};

/// The secret every UI request carries as `?token=`: 128 random bits, as hex.
#[derive(Clone, PartialEq, Eq)]
pub struct Token(String);

impl Token {
    /// A fresh token from the OS's random source (`/dev/urandom`); where that cannot be read,
    /// from std's randomly keyed hasher, which the OS seeds as well.
    pub fn random() -> Token {
        let mut bytes = [0u8; 16];
        let read = std::fs::File::open("/dev/urandom")
            .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut bytes));
        if read.is_err() {
            use std::hash::{BuildHasher, Hasher};
            for (i, chunk) in bytes.chunks_mut(8).enumerate() {
                let mut h = std::collections::hash_map::RandomState::new().build_hasher();
                h.write_usize(i);
                chunk.copy_from_slice(&h.finish().to_le_bytes());
            }
        }
        Token(bytes.iter().map(|b| format!("{b:02x}")).collect())
    }

    /// The token as it appears in URLs.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether `candidate` is this token, compared in constant time (the comparison must not
    /// tell a guesser how many leading characters were right).
    pub fn matches(&self, candidate: &str) -> bool {
        let (a, b) = (self.0.as_bytes(), candidate.as_bytes());
        a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
    }
}

impl fmt::Debug for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Token(<redacted>)")
    }
}

/// Why the UI cannot be served.
#[derive(Debug)]
pub enum UiError {
    /// A non-loopback address without `--ui-allow-remote`.
    Remote(SocketAddr),
    /// The address could not be bound.
    Bind(SocketAddr, std::io::Error),
}

impl fmt::Display for UiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UiError::Remote(addr) => write!(
                f,
                "--ui {addr}: not a loopback address; the page shows request bodies, so serving it to other hosts needs --ui-allow-remote"
            ),
            UiError::Bind(addr, e) => write!(f, "--ui {addr}: cannot listen: {e}"),
        }
    }
}

impl std::error::Error for UiError {}

/// Refuses a non-loopback `addr` unless `allow_remote`.
///
/// # Errors
/// [`UiError::Remote`].
pub fn check_listen(addr: SocketAddr, allow_remote: bool) -> Result<(), UiError> {
    if addr.ip().is_loopback() || allow_remote {
        Ok(())
    } else {
        Err(UiError::Remote(addr))
    }
}

/// The page's address with the token, as printed for the user.
pub fn page_url(addr: SocketAddr, token: &Token) -> String {
    format!("http://{addr}/?token={}", token.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_random_and_compared_whole() {
        let (a, b) = (Token::random(), Token::random());
        assert_eq!(a.as_str().len(), 32);
        assert_ne!(a, b);
        assert!(a.matches(a.as_str()));
        assert!(!a.matches(b.as_str()));
        assert!(!a.matches(&a.as_str()[..31]));
        assert!(!a.matches(""));
        assert!(!format!("{a:?}").contains(a.as_str()));
    }

    #[test]
    fn only_loopback_unless_allowed() {
        let lo: SocketAddr = "127.0.0.1:1".parse().unwrap();
        let lo6: SocketAddr = "[::1]:1".parse().unwrap();
        let any: SocketAddr = "0.0.0.0:1".parse().unwrap();
        assert!(check_listen(lo, false).is_ok());
        assert!(check_listen(lo6, false).is_ok());
        assert!(matches!(check_listen(any, false), Err(UiError::Remote(_))));
        assert!(check_listen(any, true).is_ok());
    }
}
