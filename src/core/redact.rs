//! The one redaction policy: what every recording and every output shows of a secret.
//!
//! Header values are hidden by name: a fixed list (`Authorization`, `Proxy-Authorization`,
//! `Cookie`, `Set-Cookie`, `Mcp-Session-Id`), any name containing one of [`SECRET_WORDS`] (but
//! the challenges in [`PUBLIC_HEADERS`]), and every header the user passed with `-H`. A URL carries its secrets inline
//! (`http://user:pw@host/`, `?access_token=…`), so its userinfo and secret query values are
//! rewritten wherever it is shown; the values of the user's `-H` headers are also cut out of
//! free text (error messages, stderr lines). What is *sent* is never rewritten. `--no-redact`
//! ([`Redaction::off`]) turns all of it off.
//!
//! A session id becomes a stand-in (`<redacted-XXXXXXXX>`, from a hash of the id) rather than
//! plain [`REDACTED`]: two sessions stay two sessions when a recording is replayed.
//!
//! A verdict itself never carries a secret, whatever the policy: a session id in a violation's
//! detail is always its stand-in, and a URL in a reason is always shown by [`url`]. So a
//! verdict is the same live and replayed, from a redacted recording or a raw capture; the
//! policy decides what recordings and the other outputs (report pages, telemetry, messages)
//! show around the verdicts.

use std::borrow::Cow;

use crate::request::Headers;

/// The value shown instead of a secret.
pub const REDACTED: &str = "<redacted>";

/// Header names whose values are always secret (compared case-insensitively).
pub const SECRET_HEADERS: [&str; 5] = [
    "authorization",
    "proxy-authorization",
    "cookie",
    "set-cookie",
    "mcp-session-id",
];

/// A header whose name contains one of these (case-insensitively) holds a secret:
/// `X-Api-Key`, `X-Auth-Token`, `X-Session-Signature`, `Db-Password`.
pub const SECRET_WORDS: [&str; 7] = [
    "token",
    "key",
    "secret",
    "password",
    "auth",
    "session",
    "signature",
];

/// What is hidden in recordings and outputs. The default redacts; [`Redaction::off`] is
/// `--no-redact`. Cheap to clone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redaction {
    enabled: bool,
    /// Names of the user's own headers (lowercase): hidden whatever they are called.
    names: Vec<String>,
    /// Their values, cut out of free text (only values long enough to be a secret).
    values: Vec<String>,
}

impl Default for Redaction {
    fn default() -> Self {
        Redaction::on()
    }
}

/// Shortest user header value cut out of free text: shorter ones (`1`, `on`) would mangle
/// ordinary words and hide nothing worth hiding.
const MIN_TEXT_SECRET: usize = 4;

impl Redaction {
    /// The policy on, with no user headers.
    pub fn on() -> Self {
        Redaction {
            enabled: true,
            names: Vec::new(),
            values: Vec::new(),
        }
    }

    /// Nothing is hidden (`--no-redact`).
    pub fn off() -> Self {
        Redaction {
            enabled: false,
            ..Redaction::on()
        }
    }

    /// On when `enabled`, off otherwise.
    pub fn new(enabled: bool) -> Self {
        if enabled {
            Redaction::on()
        } else {
            Redaction::off()
        }
    }

    /// Whether anything is hidden.
    pub fn enabled(&self) -> bool {
        self.enabled
    }

    /// Adds a header the user passed (`-H name: value`): its value is hidden wherever it
    /// appears, under its name or in text.
    pub fn with_user_header(mut self, name: &str, value: &str) -> Self {
        self.add_user_header(name, value);
        self
    }

    /// [`with_user_header`](Self::with_user_header) in place.
    pub fn add_user_header(&mut self, name: &str, value: &str) {
        let name = name.trim().to_ascii_lowercase();
        if !self.names.contains(&name) {
            self.names.push(name);
        }
        let value = value.trim();
        if value.len() >= MIN_TEXT_SECRET && !self.values.iter().any(|v| v == value) {
            self.values.push(value.to_owned());
            // Longest first, so a value that contains another is cut whole.
            self.values.sort_by_key(|v| std::cmp::Reverse(v.len()));
        }
    }

    /// Whether the value of header `name` is hidden.
    pub fn hides_header(&self, name: &str) -> bool {
        self.enabled
            && (is_secret_header(name) || self.names.iter().any(|n| n.eq_ignore_ascii_case(name)))
    }

    /// What is shown of header `name`'s `value`.
    pub fn header_value<'a>(&self, name: &str, value: &'a str) -> Cow<'a, str> {
        if !self.hides_header(name) {
            Cow::Borrowed(value)
        } else if name.eq_ignore_ascii_case("mcp-session-id") {
            Cow::Owned(session_stand_in(value))
        } else {
            Cow::Borrowed(REDACTED)
        }
    }

    /// `headers` as shown.
    pub fn headers(&self, headers: &Headers) -> Headers {
        // Most exchanges carry no secret header: a copy as it is (one string) then, not the
        // set rebuilt header by header.
        if !self.enabled || !headers.iter().any(|(name, _)| self.hides_header(name)) {
            return headers.clone();
        }
        let mut out = Headers::new();
        for (name, value) in headers.iter() {
            out.push(name, self.header_value(name, value));
        }
        out
    }

    /// `url` as shown: userinfo and secret query values hidden.
    pub fn url<'a>(&self, text: &'a str) -> Cow<'a, str> {
        if self.enabled {
            Cow::Owned(url(text))
        } else {
            Cow::Borrowed(text)
        }
    }

    /// Free text (a message, a stderr line) as shown: the user's header values cut out, and
    /// every URL in it shown as [`url`](Self::url) shows it.
    pub fn text<'a>(&self, text: &'a str) -> Cow<'a, str> {
        if !self.enabled {
            return Cow::Borrowed(text);
        }
        let mut out = Cow::Borrowed(text);
        for value in &self.values {
            if out.contains(value.as_str()) {
                out = Cow::Owned(out.replace(value.as_str(), REDACTED));
            }
        }
        if out.contains("://") {
            let shown: Vec<String> = out.split(' ').map(url).collect();
            out = Cow::Owned(shown.join(" "));
        }
        out
    }
}

/// Headers that name a secret word but hold none: a server's challenge says how to authorize
/// (scheme, `error`, `scope`, `resource_metadata`), and the verdict reads it, so a recording
/// must keep it for the replay to judge as the live client did.
pub const PUBLIC_HEADERS: [&str; 2] = ["www-authenticate", "proxy-authenticate"];

/// Whether header `name` holds a secret by the fixed rules (the list and the words).
///
/// Asked of every header of every recorded exchange: compared in place, without a lower-cased
/// copy or a substring searcher per word (their set-up was most of recording an exchange).
pub fn is_secret_header(name: &str) -> bool {
    let b = name.as_bytes();
    let listed = |list: &[&str]| list.iter().any(|h| crate::wire::eq_lower(b, h.as_bytes()));
    listed(&SECRET_HEADERS) || (!listed(&PUBLIC_HEADERS) && names_secret_word(b))
}

/// The letters of `text` (ASCII, either case) as bits, `a` = 1 to `z` = 1 << 25.
const fn letters(text: &[u8]) -> u32 {
    let mut bits = 0;
    let mut i = 0;
    while i < text.len() {
        let c = text[i].to_ascii_lowercase();
        if c.is_ascii_lowercase() {
            bits |= 1 << (c - b'a');
        }
        i += 1;
    }
    bits
}

/// [`letters`] of each of [`SECRET_WORDS`].
const WORD_LETTERS: [u32; SECRET_WORDS.len()] = {
    let mut bits = [0; SECRET_WORDS.len()];
    let mut i = 0;
    while i < SECRET_WORDS.len() {
        bits[i] = letters(SECRET_WORDS[i].as_bytes());
        i += 1;
    }
    bits
};

/// Whether `name` contains one of [`SECRET_WORDS`], ignoring ASCII case. A word with a letter
/// the name lacks is passed by without a search (most are, for most names).
fn names_secret_word(name: &[u8]) -> bool {
    let present = letters(name);
    SECRET_WORDS.iter().zip(WORD_LETTERS).any(|(word, needed)| {
        present & needed == needed
            && name
                .windows(word.len())
                .any(|at| crate::wire::eq_lower(at, word.as_bytes()))
    })
}

/// A session id's stand-in: `<redacted-XXXXXXXX>` from a hash of the id, so that two sessions
/// stay two sessions in a replayed recording (a single `<redacted>` would make a new session
/// look like the one the client deleted) while the id itself is not written. A value that is
/// a stand-in already is kept (redacting twice changes nothing).
pub fn session_stand_in(id: &str) -> String {
    use std::hash::{Hash, Hasher};
    if id.starts_with("<redacted") {
        return id.to_owned();
    }
    let mut h = std::hash::DefaultHasher::new();
    id.hash(&mut h);
    format!("<redacted-{:08x}>", h.finish() as u32)
}

/// Query parameter names (compared case-insensitively, `-` and `_` ignored) whose value is a
/// secret; also any name ending in one of [`SECRET_SUFFIXES`].
const SECRET_NAMES: &[&str] = &[
    "token",
    "accesstoken",
    "refreshtoken",
    "idtoken",
    "key",
    "apikey",
    "secret",
    "clientsecret",
    "password",
    "passwd",
    "pwd",
    "auth",
    "authorization",
    "code",
    "sig",
    "signature",
    "credential",
    "credentials",
    "session",
    "sessionid",
];

/// Name endings that mark a secret (`x_api_key`, `github_token`, `db_password`).
const SECRET_SUFFIXES: &[&str] = &["token", "key", "secret", "password"];

/// Whether a query parameter named `name` carries a secret.
pub fn is_secret_param(name: &str) -> bool {
    let folded: String = name
        .chars()
        .filter(|c| *c != '-' && *c != '_')
        .map(|c| c.to_ascii_lowercase())
        .collect();
    SECRET_NAMES.contains(&folded.as_str()) || SECRET_SUFFIXES.iter().any(|s| folded.ends_with(s))
}

/// `url` with its userinfo and secret query values replaced by [`REDACTED`]. Anything that does
/// not look like a URL is returned unchanged (there is nothing to find in it).
pub fn url(url: &str) -> String {
    let (before_fragment, fragment) = match url.find('#') {
        Some(i) => url.split_at(i),
        None => (url, ""),
    };
    let (before_query, query) = match before_fragment.find('?') {
        Some(i) => (&before_fragment[..i], Some(&before_fragment[i + 1..])),
        None => (before_fragment, None),
    };
    let mut out = String::with_capacity(url.len());
    match before_query.find("://") {
        Some(i) => {
            let (scheme, rest) = before_query.split_at(i + 3);
            let authority_end = rest.find('/').unwrap_or(rest.len());
            let (authority, path) = rest.split_at(authority_end);
            out.push_str(scheme);
            // The last `@` ends the userinfo (a password may hold an unescaped `@`).
            match authority.rfind('@') {
                Some(at) => {
                    out.push_str(REDACTED);
                    out.push_str(&authority[at..]);
                }
                None => out.push_str(authority),
            }
            out.push_str(path);
        }
        None => out.push_str(before_query),
    }
    if let Some(query) = query {
        out.push('?');
        for (i, pair) in query.split('&').enumerate() {
            if i > 0 {
                out.push('&');
            }
            match pair.split_once('=') {
                Some((name, _)) if is_secret_param(name) => {
                    out.push_str(name);
                    out.push('=');
                    out.push_str(REDACTED);
                }
                _ => out.push_str(pair),
            }
        }
    }
    out.push_str(fragment);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn userinfo_and_secret_parameters_are_redacted() {
        assert_eq!(
            url("http://user:SECRETPW@127.0.0.1:8080/mcp"),
            "http://<redacted>@127.0.0.1:8080/mcp"
        );
        assert_eq!(
            url("https://TOKEN@host/mcp?x=1&token=abc&API-Key=k&github_token=g#frag"),
            "https://<redacted>@host/mcp?x=1&token=<redacted>&API-Key=<redacted>&github_token=<redacted>#frag"
        );
        assert_eq!(
            url("http://u:p@ss@h/?access_token=t"),
            "http://<redacted>@h/?access_token=<redacted>"
        );
    }

    #[test]
    fn secret_header_names_are_told_as_the_plain_rule_tells_them() {
        let plain = |name: &str| {
            let lower = name.to_ascii_lowercase();
            SECRET_HEADERS.contains(&lower.as_str())
                || (!PUBLIC_HEADERS.contains(&lower.as_str())
                    && SECRET_WORDS.iter().any(|w| lower.contains(w)))
        };
        let names = [
            "Authorization",
            "proxy-AUTHORIZATION",
            "Cookie",
            "set-cookie",
            "Mcp-Session-Id",
            "WWW-Authenticate",
            "Proxy-Authenticate",
            "X-Api-Key",
            "KEY",
            "x-auth-token",
            "Db-Password",
            "X-Client-Secret",
            "X-Request-Signature",
            "Accept",
            "Content-Type",
            "MCP-Protocol-Version",
            "Host",
            "",
            "k",
            "ke",
            "Keys",
            "monkey",
            "X-Sessio",
            "x-tok",
            "tokenx",
            "Authenticate",
            "Authority",
            "É-token",
            "tökén",
            "p",
            "sig",
            "user-agent",
            "Last-Event-ID",
            "x-accel-buffering",
        ];
        for name in names {
            assert_eq!(is_secret_header(name), plain(name), "{name}");
        }
    }

    #[test]
    fn header_values_are_hidden_by_name_word_and_user_list() {
        let policy = Redaction::on().with_user_header("X-Tenant", "tenant-4711");
        let h = Headers::from_iter([
            ("Authorization", "Bearer t"),
            ("Proxy-Authorization", "Basic p"),
            ("Cookie", "a=b"),
            ("Set-Cookie", "c=d"),
            ("X-Api-Key", "k1"),
            ("X-Auth-Token", "t1"),
            ("X-Client-Secret", "s1"),
            ("Db-Password", "p1"),
            ("X-Request-Signature", "g1"),
            ("X-Tenant", "tenant-4711"),
            ("Accept", "*/*"),
            ("MCP-Protocol-Version", "2025-11-25"),
        ]);
        let shown = policy.headers(&h);
        for (name, value) in shown.iter() {
            let public =
                ["accept", "mcp-protocol-version"].contains(&name.to_ascii_lowercase().as_str());
            assert_eq!(value == REDACTED, !public, "{name}: {value}");
        }
        assert_eq!(
            policy.text("upstream said tenant-4711 at http://u:pw@h/mcp?token=x"),
            "upstream said <redacted> at http://<redacted>@h/mcp?token=<redacted>"
        );
        assert_eq!(Redaction::off().headers(&h), h);
        assert_eq!(Redaction::off().text("tenant-4711"), "tenant-4711");
    }

    #[test]
    fn a_session_id_becomes_a_stable_stand_in() {
        let policy = Redaction::on();
        let a = policy.header_value("Mcp-Session-Id", "s-1").into_owned();
        assert!(a.starts_with("<redacted-") && !a.contains("s-1"), "{a}");
        assert_eq!(policy.header_value("mcp-session-id", "s-1"), a);
        assert_ne!(policy.header_value("mcp-session-id", "s-2"), a);
        // Redacting a recording again changes nothing.
        assert_eq!(policy.header_value("mcp-session-id", &a), a);
    }

    #[test]
    fn harmless_urls_are_unchanged() {
        for u in [
            "http://127.0.0.1:8787/mcp",
            "http://h/mcp?page=2&cursor=x",
            "http://h/a@b",
            "not a url",
            "",
        ] {
            assert_eq!(url(u), u);
        }
    }
}
