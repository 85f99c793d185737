//! Secrets in URLs: what is shown of a URL on stdout, in JSON and in recordings.
//!
//! `--header` secrets are kept out of every output by name; a URL carries its secrets inline
//! (`http://user:pw@host/`, `?access_token=…`), so the URL is rewritten wherever it is shown.
//! The URL that is *sent* is never rewritten.

/// The value shown instead of a secret.
pub const REDACTED: &str = "<redacted>";

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
