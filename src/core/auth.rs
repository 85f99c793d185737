//! The auth layer: `WWW-Authenticate` challenges (RFC 9110 §11.6.1 syntax, RFC 6750 Bearer
//! errors, RFC 9728 `resource_metadata`) and what a 401/403 says about authorization.
//!
//! Sans-IO and bounded: a header value is parsed once, at most [`MAX_CHALLENGES`] challenges of
//! at most [`MAX_PARAMS`] parameters each, every kept value cut at [`MAX_VALUE`] bytes, so a
//! hostile header cannot grow memory. A 401 is always an auth failure; a 403 only with a
//! challenge, since MCP servers also answer 403 to a bad `Origin`, which no login fixes.

use crate::findings::Findings;
use crate::request::Headers;
use crate::rules::Rule;
use crate::vocab::call::AuthStep;

/// Challenges read from one response; more are ignored.
pub const MAX_CHALLENGES: usize = 16;
/// Parameters read per challenge; more are ignored.
pub const MAX_PARAMS: usize = 32;
/// Longest scheme, parameter name or value kept (longer ones are cut on a char boundary).
pub const MAX_VALUE: usize = 1024;

/// One challenge: `Bearer realm="mcp", error="invalid_token"`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Challenge {
    /// The auth scheme as sent (compare without case).
    pub scheme: String,
    /// A `token68` instead of parameters (`Negotiate abc==`), if any.
    pub token68: Option<String>,
    /// Parameters in order: names lowercased, values unquoted.
    pub params: Vec<(String, String)>,
}

impl Challenge {
    /// The value of parameter `name` (lowercase).
    pub fn param(&self, name: &str) -> Option<&str> {
        self.params
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// Whether this is a `Bearer` challenge.
    pub fn is_bearer(&self) -> bool {
        self.scheme.eq_ignore_ascii_case("bearer")
    }
}

/// Parses every challenge of one `WWW-Authenticate` value. Never fails: what cannot be read is
/// skipped (a value with no scheme gives no challenge).
pub fn parse(value: &str, out: &mut Vec<Challenge>) {
    let mut p = Parser {
        s: value.as_bytes(),
        at: 0,
    };
    loop {
        p.skip(|b| b == b',' || is_space(b));
        if p.done() || out.len() >= MAX_CHALLENGES {
            return;
        }
        let Some(scheme) = p.token() else {
            // Not a token where a scheme should be: skip to the next comma.
            p.skip(|b| b != b',');
            continue;
        };
        let mut c = Challenge {
            scheme: cut(scheme),
            ..Challenge::default()
        };
        p.skip(is_space);
        // token68 or the first parameter.
        let start = p.at;
        if let Some(word) = p.token68() {
            let before_eq = p.at;
            p.skip(is_space);
            let is_param = p.peek() == Some(b'=')
                && !matches!(p.s.get(p.at + 1), None | Some(b'=' | b','))
                && word.bytes().all(is_tchar);
            if is_param {
                p.at = start;
                params(&mut p, &mut c);
            } else {
                p.at = before_eq;
                p.skip(|b| b == b'=');
                c.token68 = Some(cut(&value[start..p.at]));
            }
        }
        out.push(c);
    }
}

/// Reads `name=value` pairs of one challenge, stopping before the next challenge's scheme.
fn params(p: &mut Parser<'_>, c: &mut Challenge) {
    loop {
        let mark = p.at;
        let Some(name) = p.token() else { return };
        p.skip(is_space);
        if p.peek() != Some(b'=') {
            // A bare token: the next challenge's scheme.
            p.at = mark;
            return;
        }
        p.at += 1;
        p.skip(is_space);
        let value = if p.peek() == Some(b'"') {
            p.quoted()
        } else {
            p.token().map(str::to_owned).unwrap_or_default()
        };
        if c.params.len() < MAX_PARAMS {
            c.params.push((cut(name).to_ascii_lowercase(), cut(&value)));
        }
        p.skip(is_space);
        if p.peek() != Some(b',') {
            // Junk after a value: skip to the next comma, where a parameter or scheme starts.
            p.skip(|b| b != b',');
        }
        p.skip(|b| b == b',' || is_space(b));
        if p.done() {
            return;
        }
    }
}

struct Parser<'a> {
    s: &'a [u8],
    at: usize,
}

impl<'a> Parser<'a> {
    fn done(&self) -> bool {
        self.at >= self.s.len()
    }

    fn peek(&self) -> Option<u8> {
        self.s.get(self.at).copied()
    }

    fn skip(&mut self, f: impl Fn(u8) -> bool) {
        while self.peek().is_some_and(&f) {
            self.at += 1;
        }
    }

    fn run(&mut self, f: impl Fn(u8) -> bool) -> Option<&'a str> {
        let start = self.at;
        self.skip(f);
        // The bytes taken are ASCII, so the slice is on char boundaries.
        (self.at > start).then(|| std::str::from_utf8(&self.s[start..self.at]).unwrap_or(""))
    }

    fn token(&mut self) -> Option<&'a str> {
        self.run(is_tchar)
    }

    /// token68 without its trailing `=`s.
    fn token68(&mut self) -> Option<&'a str> {
        self.run(|b| b.is_ascii_alphanumeric() || b"-._~+/!#$%&'*^`|".contains(&b))
    }

    /// A quoted-string at `"`: unescaped; an unterminated one runs to the end.
    fn quoted(&mut self) -> String {
        self.at += 1;
        let mut out = Vec::new();
        while let Some(b) = self.peek() {
            self.at += 1;
            match b {
                b'"' => break,
                b'\\' => {
                    if let Some(next) = self.peek() {
                        out.push(next);
                        self.at += 1;
                    }
                }
                _ => out.push(b),
            }
            if out.len() > MAX_VALUE + 4 {
                // Keep reading to the closing quote, but keep no more.
                out.pop();
            }
        }
        String::from_utf8_lossy(&out).into_owned()
    }
}

fn is_space(b: u8) -> bool {
    b == b' ' || b == b'\t'
}

/// RFC 9110 tchar.
fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

fn cut(s: &str) -> String {
    if s.len() <= MAX_VALUE {
        return s.to_owned();
    }
    let mut end = MAX_VALUE;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s[..end].to_owned()
}

/// What a 401/403 head said about authorization, kept from `on_head` to the verdict.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AuthHead {
    /// The status: 401 or 403.
    pub status: u16,
    /// How many challenges were read (0: none, or none readable).
    pub challenges: usize,
    /// `WWW-Authenticate` was present (even if nothing in it could be read).
    pub header_present: bool,
    /// The scheme of the challenge the facts below come from (Bearer first, else the first).
    pub scheme: Option<String>,
    /// RFC 6750 `error`: `invalid_request`, `invalid_token`, `insufficient_scope`.
    pub error: Option<String>,
    /// RFC 6750 `error_description`.
    pub error_description: Option<String>,
    /// RFC 6750 `scope`: the scopes the request needs.
    pub scope: Option<String>,
    /// RFC 9728 `resource_metadata`: where the protected resource's metadata lives.
    pub resource_metadata: Option<String>,
}

impl AuthHead {
    /// Reads a 401/403 response's challenges; `None` for any other status.
    pub fn of(status: u16, headers: &Headers) -> Option<AuthHead> {
        if status != 401 && status != 403 {
            return None;
        }
        let mut list = Vec::new();
        let mut header_present = false;
        for (name, value) in headers.iter() {
            if name.eq_ignore_ascii_case("www-authenticate") {
                header_present = true;
                parse(value, &mut list);
            }
        }
        let main = list.iter().find(|c| c.is_bearer()).or(list.first());
        let param = |n: &str| main.and_then(|c| c.param(n)).map(str::to_owned);
        Some(AuthHead {
            status,
            challenges: list.len(),
            header_present,
            scheme: main.map(|c| c.scheme.clone()),
            error: param("error"),
            error_description: param("error_description"),
            scope: param("scope"),
            resource_metadata: param("resource_metadata"),
        })
    }

    /// Whether this status is the auth layer's: every 401, and a 403 that carries a challenge.
    pub fn is_auth(&self) -> bool {
        self.status == 401 || self.challenges > 0
    }

    /// The failed step (see [`AuthStep`]), given whether a request with a token succeeded
    /// earlier in the same session.
    pub fn step(&self, authorized_before: bool) -> Option<AuthStep> {
        if !self.is_auth() {
            return None;
        }
        Some(match (self.status, self.error.as_deref()) {
            (401, _) if self.challenges == 0 => AuthStep::Challenge,
            (_, Some("insufficient_scope")) => AuthStep::Scope,
            (401, Some("invalid_token")) if authorized_before => AuthStep::TokenExpired,
            _ => AuthStep::Token,
        })
    }

    /// Adds the auth rules this head breaks to `findings` (the step decides which).
    pub fn check(&self, authorized_before: bool, findings: &mut Findings) {
        let why = self
            .error_description
            .as_deref()
            .map(|d| format!(" ({d})"))
            .unwrap_or_default();
        match self.step(authorized_before) {
            Some(AuthStep::Challenge) if self.header_present => findings.add(
                Rule::AuthChallengeMissing,
                "401 whose WWW-Authenticate holds no readable challenge",
                None,
            ),
            Some(AuthStep::Challenge) => findings.add(
                Rule::AuthChallengeMissing,
                "401 without WWW-Authenticate: the client cannot discover how to authorize",
                None,
            ),
            Some(AuthStep::Scope) => findings.add(
                Rule::AuthInsufficientScope,
                match &self.scope {
                    Some(scope) => format!(
                        "{} insufficient_scope: the request needs scope \"{scope}\"{why}",
                        self.status
                    ),
                    None => format!(
                        "{} insufficient_scope without a scope parameter{why}",
                        self.status
                    ),
                },
                None,
            ),
            Some(AuthStep::TokenExpired) => findings.add(
                Rule::AuthTokenExpired,
                format!(
                    "401 invalid_token after a request with a token succeeded in this session{why}"
                ),
                None,
            ),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verdict::{Layer, Outcome, Verdict};

    fn all(value: &str) -> Vec<Challenge> {
        let mut out = Vec::new();
        parse(value, &mut out);
        out
    }

    fn head(status: u16, values: &[&str]) -> AuthHead {
        let headers = Headers::from_iter(values.iter().map(|v| ("WWW-Authenticate", *v)));
        AuthHead::of(status, &headers).unwrap()
    }

    fn rules(h: &AuthHead, before: bool) -> Vec<&'static str> {
        let mut f = Findings::default();
        h.check(before, &mut f);
        f.into_vec().iter().map(|v| v.rule.id()).collect()
    }

    #[test]
    fn rfc6750_examples() {
        // RFC 6750 §3 and §3.1.
        let c = all(r#"Bearer realm="example""#);
        assert_eq!(c.len(), 1);
        assert!(c[0].is_bearer());
        assert_eq!(c[0].param("realm"), Some("example"));
        let c = all(
            r#"Bearer realm="example", error="invalid_token", error_description="The access token expired""#,
        );
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].param("error"), Some("invalid_token"));
        assert_eq!(
            c[0].param("error_description"),
            Some("The access token expired")
        );
        // Scopes are space-separated inside one quoted value.
        let c = all(r#"Bearer error="insufficient_scope", scope="files:read files:write""#);
        assert_eq!(c[0].param("scope"), Some("files:read files:write"));
    }

    #[test]
    fn rfc9728_and_mcp_sdk_values() {
        // RFC 9728 §5.1, and what the MCP TypeScript SDK's bearer middleware sends.
        let c = all(
            r#"Bearer resource_metadata="https://resource.example.com/.well-known/oauth-protected-resource""#,
        );
        assert_eq!(
            c[0].param("resource_metadata"),
            Some("https://resource.example.com/.well-known/oauth-protected-resource")
        );
        let c = all(
            r#"Bearer error="invalid_token", error_description="Token has expired", resource_metadata="http://localhost:3000/.well-known/oauth-protected-resource/mcp""#,
        );
        assert_eq!(c[0].param("error"), Some("invalid_token"));
        assert_eq!(
            c[0].param("resource_metadata"),
            Some("http://localhost:3000/.well-known/oauth-protected-resource/mcp")
        );
    }

    #[test]
    fn several_challenges_tokens_and_token68() {
        // RFC 9110 §11.6.1's example: two challenges in one value, unquoted and quoted params.
        let c =
            all(r#"Newauth realm="apps", type=1, title="Login to \"apps\"", Basic realm="simple""#);
        assert_eq!(c.len(), 2);
        assert_eq!(c[0].scheme, "Newauth");
        assert_eq!(c[0].param("type"), Some("1"));
        assert_eq!(c[0].param("title"), Some(r#"Login to "apps""#));
        assert_eq!(c[1].scheme, "Basic");
        assert_eq!(c[1].param("realm"), Some("simple"));
        // token68, a bare scheme, odd spacing and case.
        let c = all("Negotiate abc+/def==, NTLM ,  bearer  ERROR = invalid_token");
        assert_eq!(c.len(), 3);
        assert_eq!(c[0].token68.as_deref(), Some("abc+/def=="));
        assert_eq!(c[1].scheme, "NTLM");
        assert!(c[2].is_bearer());
        assert_eq!(c[2].param("error"), Some("invalid_token"));
    }

    #[test]
    fn junk_never_panics_and_stays_bounded() {
        for v in [
            "",
            ",,,",
            "=",
            "\"",
            "Bearer \"unterminated",
            "Bearer error=\"x\\",
            "Bearer ,error=",
            "Bearer a=b junk, c=d",
            "é Bearer",
            "Bearer realm=\"é\"",
        ] {
            let _ = all(v);
        }
        let many = "Basic realm=x, ".repeat(1000);
        assert_eq!(all(&many).len(), MAX_CHALLENGES);
        let long = format!("Bearer scope=\"{}\"", "s".repeat(100_000));
        assert_eq!(all(&long)[0].param("scope").unwrap().len(), MAX_VALUE);
        let c = all("Bearer a=b junk, c=d");
        assert_eq!(c[0].param("a"), Some("b"));
        assert_eq!(c[0].param("c"), Some("d"));
    }

    #[test]
    fn challenge_missing_rule() {
        let none = AuthHead::of(401, &Headers::new()).unwrap();
        assert_eq!(rules(&none, false), ["auth.challenge_missing"]);
        assert_eq!(none.step(false), Some(AuthStep::Challenge));
        assert_eq!(rules(&head(401, &[""]), true), ["auth.challenge_missing"]);
        // A proper challenge breaks no rule: the client has to get a token.
        let ok = head(
            401,
            &[r#"Bearer resource_metadata="https://a/.well-known/x""#],
        );
        assert!(rules(&ok, false).is_empty());
        assert_eq!(ok.step(false), Some(AuthStep::Token));
        assert_eq!(
            ok.resource_metadata.as_deref(),
            Some("https://a/.well-known/x")
        );
    }

    #[test]
    fn insufficient_scope_rule_names_the_scope() {
        let h = head(
            403,
            &[
                r#"Bearer error="insufficient_scope", scope="tools:pay", error_description="pay needs tools:pay""#,
            ],
        );
        assert!(h.is_auth());
        let mut f = Findings::default();
        h.check(true, &mut f);
        let v = f.into_vec();
        assert_eq!(v.len(), 1);
        assert_eq!(v[0].rule, Rule::AuthInsufficientScope);
        assert!(v[0].detail.contains("\"tools:pay\""), "{}", v[0].detail);
        // A 403 without a challenge is not auth (MCP's answer to a bad Origin).
        let origin = AuthHead::of(403, &Headers::new()).unwrap();
        assert!(!origin.is_auth());
        assert!(rules(&origin, true).is_empty());
        assert_eq!(origin.step(true), None);
    }

    #[test]
    fn token_expired_needs_an_earlier_success() {
        let h = head(
            401,
            &[
                "Basic realm=\"x\"",
                r#"Bearer error="invalid_token", error_description="The access token expired""#,
            ],
        );
        assert_eq!(h.scheme.as_deref(), Some("Bearer"), "Bearer is preferred");
        assert_eq!(rules(&h, true), ["auth.token_expired"]);
        assert!(rules(&h, false).is_empty(), "never worked: not an expiry");
        assert_eq!(h.step(false), Some(AuthStep::Token));
        // Only on 401, and only for invalid_token.
        let other = head(401, &[r#"Bearer error="invalid_request""#]);
        assert!(rules(&other, true).is_empty());
        assert!(AuthHead::of(200, &Headers::new()).is_none());
    }

    /// Through the session: the layer, the rule, the advice and the call's step.
    fn judged(s: &mut crate::Session, auth: bool, status: u16, challenge: Option<&str>) -> Verdict {
        use crate::{End, Request, ResponseHead};
        let mut req = vec![("Content-Type", "application/json")];
        if auth {
            req.push(("Authorization", "Bearer t"));
        }
        let body = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"pay"}}"#;
        let mut x = s.begin(Request::new("POST", Headers::from_iter(req), body));
        let mut headers = vec![("Content-Type", "application/json")];
        headers.extend(challenge.map(|c| ("WWW-Authenticate", c)));
        x.on_head(ResponseHead {
            status,
            headers: Headers::from_iter(headers),
        });
        if status == 200 {
            x.feed(br#"{"jsonrpc":"2.0","id":1,"result":{"content":[]}}"#);
        }
        s.finish(&mut x, End::Eof)
    }

    #[test]
    fn session_tells_an_expiry_from_a_missing_token() {
        use crate::Advice;
        let expired = r#"Bearer error="invalid_token", resource_metadata="http://h/.well-known/oauth-protected-resource""#;
        let mut s = crate::Session::default();
        // No token worked yet: a plain "get a token".
        let v = judged(&mut s, false, 401, Some(expired));
        assert_eq!((v.outcome, v.layer), (Outcome::HttpError, Layer::Auth));
        assert_eq!(v.retry.advice, Advice::Reauthenticate);
        assert!(
            v.retry.reason.contains("http://h/.well-known/"),
            "{}",
            v.retry.reason
        );
        assert!(
            !v.violations
                .iter()
                .any(|x| x.rule.id().starts_with("auth."))
        );
        assert_eq!(AuthStep::of(&v), Some(AuthStep::Token));
        // A 200 without a token proves nothing about tokens.
        let _ = judged(&mut s, false, 200, None);
        assert!(!judged(&mut s, true, 401, Some(expired)).breaks(Rule::AuthTokenExpired));
        // Once a token worked, invalid_token is an expiry.
        assert_eq!(judged(&mut s, true, 200, None).layer, Layer::Application);
        let v = judged(&mut s, true, 401, Some(expired));
        assert!(v.breaks(Rule::AuthTokenExpired));
        assert_eq!(AuthStep::of(&v), Some(AuthStep::TokenExpired));
        let v = judged(&mut s, true, 401, None);
        assert!(v.breaks(Rule::AuthChallengeMissing));
        assert_eq!(v.retry.advice, Advice::Reauthenticate);
        // 403 without a challenge: transport, fix the request, no auth step.
        let v = judged(&mut s, true, 403, None);
        assert_eq!(
            (v.layer, v.retry.advice),
            (Layer::Transport, Advice::FixRequest)
        );
        assert_eq!(AuthStep::of(&v), None);
    }
}
