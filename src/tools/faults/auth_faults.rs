//! The auth layer of the fault server: the protected-resource mode (`serve-faults --auth-token
//! T`: a Bearer token on every MCP request, RFC 9728 metadata at
//! `/.well-known/oauth-protected-resource`) and the auth fault scenarios, which imitate an
//! authorization server's refusals on their own path whether or not a token is required.

use serde_json::json;

use super::replies::body;
use super::vocab::{Action, CallExpect, ClientStep, Ctx, Reply, Scenario, expect};
use crate::vocab::call::AuthStep;
use crate::vocab::verdict::{Advice as A, Layer, Outcome as O};

/// Where the metadata lives: RFC 9728 §3.1 inserts the well-known segment before the resource
/// path (`/mcp`).
pub const METADATA_PATH: &str = "/.well-known/oauth-protected-resource";

/// The token the demo's client sends on the auth scenarios that need one.
pub const DEMO_TOKEN: &str = "demo-token";

/// The scope `pay` needs on `auth-insufficient-scope`.
pub const PAY_SCOPE: &str = "tools:pay";

/// `resource_metadata="…"` for a server reached at `origin` (`http://host:port`).
fn metadata_url(origin: &str) -> String {
    format!("{origin}{METADATA_PATH}/mcp")
}

/// A 401 or 403 with a Bearer challenge carrying `error` (and `scope`), as RFC 6750 §3 writes it.
pub fn challenge(
    status: u16,
    origin: &str,
    error: Option<(&str, &str)>,
    scope: Option<&str>,
) -> Reply {
    let mut value = String::from("Bearer realm=\"mcp\"");
    if let Some((error, description)) = error {
        value.push_str(&format!(
            ", error=\"{error}\", error_description=\"{description}\""
        ));
    }
    if let Some(scope) = scope {
        value.push_str(&format!(", scope=\"{scope}\""));
    }
    value.push_str(&format!(", resource_metadata=\"{}\"", metadata_url(origin)));
    let text = if status == 401 {
        "unauthorized"
    } else {
        "forbidden"
    };
    let mut reply = body(status, "text/plain", text.as_bytes());
    if let Reply::Body { headers, .. } = &mut reply {
        headers.push(("WWW-Authenticate".into(), value));
    }
    reply
}

/// The protected-resource mode's check of a request's `Authorization`: `None` when it carries
/// `Bearer <token>`, else the 401 to send (with `invalid_token` when a wrong token came).
pub fn refuse(authorization: Option<&str>, token: &str, origin: &str) -> Option<Reply> {
    let presented = authorization.and_then(|v| {
        let (scheme, rest) = v.trim().split_once(' ')?;
        scheme.eq_ignore_ascii_case("bearer").then(|| rest.trim())
    });
    match presented {
        Some(t) if t == token => None,
        Some(_) => Some(challenge(
            401,
            origin,
            Some(("invalid_token", "The access token is invalid or expired")),
            None,
        )),
        None => Some(challenge(401, origin, None, None)),
    }
}

/// RFC 9728 protected resource metadata for the server at `origin`. There is no authorization
/// server behind it (the token is fixed by `--auth-token`); `authorization_servers` names the
/// origin so that clients following the MCP discovery steps have somewhere to look.
pub fn metadata(origin: &str) -> Reply {
    let doc = json!({
        "resource": format!("{origin}/mcp"),
        "authorization_servers": [origin],
        "bearer_methods_supported": ["header"],
        "scopes_supported": ["tools:read", PAY_SCOPE],
        "resource_name": "mcp-verdict serve-faults",
    });
    body(200, "application/json", doc.to_string().as_bytes())
}

fn refused(status: u16, rule: &'static str) -> super::Expect {
    expect(O::HttpError, A::Reauthenticate, status, None)
        .rules(&[rule])
        .layer(Layer::Auth)
}

fn success() -> super::Expect {
    expect(O::ToolSuccess, A::None, 200, None)
}

/// The auth scenarios, in a stable order.
pub fn all() -> Vec<Scenario> {
    let s = Scenario::new;
    vec![
        s(
            "auth-challenge-missing",
            "401 without WWW-Authenticate: the client cannot discover how to authorize",
            "pay",
            refused(401, "auth.challenge_missing"),
            |_| Action::Reply(body(401, "text/plain", b"unauthorized")),
        )
        .calls(vec![
            CallExpect::new(Some("tools/call"), &[401], 1, O::HttpError).auth(AuthStep::Challenge),
        ]),
        s(
            "auth-insufficient-scope",
            "403 insufficient_scope (scope tools:pay) on pay only; echo works",
            "pay",
            refused(403, "auth.insufficient_scope"),
            |c: &Ctx<'_>| {
                if c.params.get("name").and_then(|n| n.as_str()) != Some("pay") {
                    return Action::Normal;
                }
                Action::Reply(challenge(
                    403,
                    c.origin,
                    Some(("insufficient_scope", "pay needs tools:pay")),
                    Some(PAY_SCOPE),
                ))
            },
        )
        .then(ClientStep::Call("echo"), success())
        .calls(vec![
            CallExpect::new(Some("tools/call"), &[403], 1, O::HttpError).auth(AuthStep::Scope),
            CallExpect::new(Some("tools/call"), &[200], 1, O::ToolSuccess),
        ]),
        s(
            "auth-token-expired",
            "2025-11-25: the token expires after 1 call: the next call gets 401 invalid_token",
            "echo",
            success(),
            |c: &Ctx<'_>| {
                Action::AfterCalls(
                    1,
                    challenge(
                        401,
                        c.origin,
                        Some(("invalid_token", "The access token expired")),
                        None,
                    ),
                )
            },
        )
        .legacy()
        .bearer()
        .then(
            ClientStep::Call("lookup"),
            refused(401, "auth.token_expired"),
        )
        .calls(vec![
            CallExpect::new(Some("tools/call"), &[200], 1, O::ToolSuccess),
            CallExpect::new(Some("tools/call"), &[401], 1, O::HttpError)
                .auth(AuthStep::TokenExpired),
        ]),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn protected_mode_checks_the_bearer_token() {
        let origin = "http://127.0.0.1:1";
        assert!(refuse(Some("Bearer t"), "t", origin).is_none());
        assert!(refuse(Some("bearer  t "), "t", origin).is_none());
        let header = |r: Option<Reply>| match r {
            Some(Reply::Body {
                status, headers, ..
            }) => (
                status,
                headers.into_iter().find(|(n, _)| n == "WWW-Authenticate"),
            ),
            other => panic!("{other:?}"),
        };
        let (status, missing) = header(refuse(None, "t", origin));
        assert_eq!(status, 401);
        let missing = missing.unwrap().1;
        assert!(!missing.contains("error="), "{missing}");
        assert!(missing.contains(&format!(
            "resource_metadata=\"{origin}{METADATA_PATH}/mcp\""
        )));
        let (_, wrong) = header(refuse(Some("Bearer u"), "t", origin));
        assert!(wrong.unwrap().1.contains("error=\"invalid_token\""));
        let (_, basic) = header(refuse(Some("Basic dDp0"), "t", origin));
        assert!(!basic.unwrap().1.contains("error="));
    }
}
