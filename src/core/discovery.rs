//! The 2026-07-28 discovery probe across exchanges. A client MAY start with `server/discover`
//! and fall back to `initialize` when the server turns out to be legacy; the transport page
//! (§Backward Compatibility) says what a legacy server looks like: `400`, `404` or `405` with an
//! empty body or one that is not a recognised modern JSON-RPC error. Anything else is no such
//! signal:
//!
//! - a transient failure (a 5xx, a gateway's error, 408, 429, RateLimited, no response at all)
//!   followed by `initialize` downgrades a modern server on a hiccup:
//!   `request.fallback_on_transient_error`, on the `initialize`;
//! - a `server/discover` that advertises a revision, then a plain `400` (or `-32022`) to the
//!   next request made under that revision: `server.discover_version_refused`, on that request.
//!
//! [`looks_legacy`] is also what the run's exit code forgives (`replay::forgives`).

use std::borrow::Cow;

use crate::error_codes;
use crate::findings::Findings;
use crate::headers::Known;
use crate::request::Request;
use crate::rules::Rule;
use crate::verdict::{Outcome, Verdict, Violation};
use crate::vocab::codes::{RATE_LIMITED, UNSUPPORTED_PROTOCOL_VERSION};
use crate::wire::META_PROTOCOL_VERSION;

/// The method of the probe.
pub(crate) const DISCOVER: &str = "server/discover";

/// A refusal that says "legacy server": `400`, `404` or `405` whose body is empty or not a
/// recognised modern JSON-RPC error (one of the codes 2026-07-28 defines).
pub(crate) fn looks_legacy(status: Option<u16>, error_code: Option<i64>) -> bool {
    matches!(status, Some(400 | 404 | 405)) && !error_code.is_some_and(error_codes::is_modern)
}

/// A failure that says nothing about the server's era: it may pass if tried again.
fn is_transient(v: &Verdict) -> bool {
    if v.error_code == Some(RATE_LIMITED) {
        return true;
    }
    !v.complete
        && match v.status {
            None => true,
            Some(s) => s >= 500 || s == 408 || s == 429 || (200..300).contains(&s),
        }
}

/// What the status and code of a transient failure were, for the finding's detail.
fn describe(v: &Verdict) -> String {
    match (v.status, v.error_code) {
        (Some(s), Some(c)) => format!("HTTP {s} with error {c}"),
        (Some(s), None) if (200..300).contains(&s) => format!("HTTP {s} and {}", v.outcome),
        (Some(s), None) => format!("HTTP {s}"),
        (None, _) => format!("no response ({})", v.outcome),
    }
}

/// The version a request states: its `MCP-Protocol-Version`, else its `_meta`, else (an
/// `initialize`) the version it proposes.
fn stated_version(req: &Request) -> Option<Cow<'_, str>> {
    req.headers
        .known(Known::McpProtocolVersion)
        .map(|v| Cow::Borrowed(v.trim()))
        .or_else(|| req.meta_str(META_PROTOCOL_VERSION))
        .or_else(|| {
            (req.method.as_deref() == Some("initialize"))
                .then(|| req.param_str("protocolVersion").map(Cow::Borrowed))
                .flatten()
        })
}

/// The probe's state in one session (capture or connection).
#[derive(Debug, Clone, Default)]
pub(crate) struct Discovery {
    /// The latest `server/discover` failed transiently: its entry index and what it got.
    transient: Option<(u64, String)>,
    /// The versions the latest `server/discover` advertised, with its entry index, until the
    /// next request is judged.
    advertised: Option<(u64, Vec<String>)>,
}

impl Discovery {
    /// Request-side, before the response: an `initialize` right after a transient failure of
    /// the probe is a fallback on no legacy signal.
    pub(crate) fn check(&self, req: &Request, findings: &mut Findings) {
        if req.method.as_deref() != Some("initialize") {
            return;
        }
        if let Some((at, what)) = &self.transient {
            findings.add(
                Rule::RequestFallbackOnTransientError,
                format!(
                    "initialize after server/discover (entry {at}) got {what}: a transient failure, not a legacy server; send server/discover again"
                ),
                None,
            );
        }
    }

    /// After the verdict: the server's refusal of a revision it advertised (added to
    /// `verdict`), then what the exchange teaches. `advertised`: the `supportedVersions` of
    /// a `server/discover` result.
    #[inline]
    pub(crate) fn record(
        &mut self,
        req: &Request,
        verdict: &mut Verdict,
        advertised: Option<Vec<String>>,
    ) {
        // Most exchanges: nothing advertised, nothing to forget, no `server/discover`.
        let method = req.method.as_deref();
        if self.advertised.is_none()
            && self.transient.is_none()
            && advertised.is_none()
            && method != Some(DISCOVER)
        {
            return;
        }
        self.record_any(req, verdict, advertised);
    }

    fn record_any(
        &mut self,
        req: &Request,
        verdict: &mut Verdict,
        advertised: Option<Vec<String>>,
    ) {
        let method = req.method.as_deref();
        // Nothing advertised (most exchanges): no text compared.
        if self.advertised.is_some() && req.http_method == "POST" && method != Some(DISCOVER) {
            self.check_refusal(req, verdict);
        }
        match method {
            Some(DISCOVER) => {
                self.transient = is_transient(verdict).then(|| (verdict.index, describe(verdict)));
                self.advertised = advertised
                    .filter(|_| verdict.outcome == Outcome::Success)
                    .map(|versions| (verdict.index, versions));
            }
            Some("initialize") => self.transient = None,
            _ => {}
        }
    }

    /// The first request after an advertising `server/discover`: refused under a revision the
    /// server advertised (a plain `400`, or UnsupportedProtocolVersion at any status).
    fn check_refusal(&mut self, req: &Request, verdict: &mut Verdict) {
        let Some((at, versions)) = self.advertised.take() else {
            return;
        };
        let Some(stated) = stated_version(req).filter(|s| versions.iter().any(|v| v == s.as_ref()))
        else {
            return;
        };
        let refused = verdict.error_code == Some(UNSUPPORTED_PROTOCOL_VERSION)
            || (verdict.status == Some(400) && verdict.error_code.is_none());
        if refused && !verdict.breaks(Rule::ServerDiscoverVersionRefused) {
            let how = match verdict.error_code {
                Some(code) => format!("error {code}"),
                None => "a plain 400".to_owned(),
            };
            verdict.violations.push(Violation::new(
                Rule::ServerDiscoverVersionRefused,
                format!(
                    "server/discover (entry {at}) advertised {stated}, then this request under it got {how}"
                ),
                None,
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{End, Headers, ResponseHead, Session};

    #[test]
    fn legacy_signals() {
        for status in [400, 404, 405] {
            assert!(looks_legacy(Some(status), None), "{status}");
            assert!(looks_legacy(Some(status), Some(-32000)), "{status}");
            assert!(looks_legacy(Some(status), Some(-32601)), "{status}");
            assert!(!looks_legacy(Some(status), Some(-32022)), "{status}");
            assert!(!looks_legacy(Some(status), Some(-32020)), "{status}");
        }
        for status in [
            Some(401),
            Some(403),
            Some(429),
            Some(500),
            Some(502),
            Some(503),
            None,
        ] {
            assert!(!looks_legacy(status, None), "{status:?}");
        }
    }

    /// `(method, version, status, JSON body)` exchanges through one session (status 0: no
    /// response; the version goes in the header, or an `initialize`'s params): the rules each
    /// verdict breaks.
    fn run(steps: &[(&str, &str, u16, &str)]) -> Vec<Vec<Rule>> {
        let mut session = Session::default();
        let mut out = Vec::new();
        for (i, &(method, version, status, body)) in steps.iter().enumerate() {
            let params = if method == "initialize" {
                format!(r#"{{"protocolVersion":"{version}"}}"#)
            } else {
                "{}".to_owned()
            };
            let req =
                format!(r#"{{"jsonrpc":"2.0","id":{i},"method":"{method}","params":{params}}}"#);
            let headers = if method == "initialize" {
                Headers::new()
            } else {
                Headers::from_iter([("MCP-Protocol-Version", version)])
            };
            let mut ex = session.begin(Request::new("POST", headers, req.as_bytes()));
            if status == 0 {
                let v = session.finish(&mut ex, End::Reset);
                out.push(v.violations.iter().map(|v| v.rule).collect());
                continue;
            }
            ex.on_head(ResponseHead {
                status,
                headers: Headers::from_iter([("Content-Type", "application/json")]),
            });
            ex.feed(body.replace("ID", &i.to_string()).as_bytes());
            let v = session.finish(&mut ex, End::Eof);
            out.push(v.violations.iter().map(|v| v.rule).collect());
        }
        out
    }

    const DISCOVERED: &str = r#"{"jsonrpc":"2.0","id":ID,"result":{"resultType":"complete","supportedVersions":["2026-07-28","2025-11-25"],"capabilities":{},"serverInfo":{"name":"s","version":"1"}}}"#;
    const INIT_OK: &str = r#"{"jsonrpc":"2.0","id":ID,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}"#;
    const TOOLS: &str =
        r#"{"jsonrpc":"2.0","id":ID,"result":{"resultType":"complete","tools":[]}}"#;

    fn has(rules: &[Rule], rule: Rule) -> bool {
        rules.contains(&rule)
    }

    #[test]
    fn fallback_after_a_transient_failure_is_reported() {
        let fallback = Rule::RequestFallbackOnTransientError;
        for status in [500, 502, 503, 504, 429, 0] {
            let got = run(&[
                ("server/discover", "2026-07-28", status, ""),
                ("initialize", "2025-11-25", 200, INIT_OK),
            ]);
            assert!(has(&got[1], fallback), "{status}: {got:?}");
        }
        // The legacy signals: no finding.
        for status in [400, 404, 405] {
            let got = run(&[
                ("server/discover", "2026-07-28", status, ""),
                ("initialize", "2025-11-25", 200, INIT_OK),
            ]);
            assert!(!has(&got[1], fallback), "{status}: {got:?}");
        }
        // A transient failure retried with discover, which then says legacy: no finding.
        let got = run(&[
            ("server/discover", "2026-07-28", 503, ""),
            ("server/discover", "2026-07-28", 404, ""),
            ("initialize", "2025-11-25", 200, INIT_OK),
        ]);
        assert!(!has(&got[2], fallback), "{got:?}");
    }

    #[test]
    fn a_refused_advertised_version_is_reported_on_the_next_request() {
        let refused = Rule::ServerDiscoverVersionRefused;
        let got = run(&[
            ("server/discover", "2026-07-28", 200, DISCOVERED),
            ("tools/list", "2026-07-28", 400, ""),
        ]);
        assert!(has(&got[1], refused), "{got:?}");
        let unsupported = r#"{"jsonrpc":"2.0","id":ID,"error":{"code":-32022,"message":"no"}}"#;
        let got = run(&[
            ("server/discover", "2026-07-28", 200, DISCOVERED),
            ("tools/list", "2026-07-28", 400, unsupported),
        ]);
        assert!(has(&got[1], refused), "{got:?}");
        // Not advertised, another refusal, or not the next request: nothing.
        let got = run(&[
            ("server/discover", "2026-07-28", 200, DISCOVERED),
            ("tools/list", "2025-06-18", 400, ""),
        ]);
        assert!(!has(&got[1], refused), "{got:?}");
        let mismatch = r#"{"jsonrpc":"2.0","id":ID,"error":{"code":-32020,"message":"no"}}"#;
        let got = run(&[
            ("server/discover", "2026-07-28", 200, DISCOVERED),
            ("tools/list", "2026-07-28", 400, mismatch),
        ]);
        assert!(!has(&got[1], refused), "{got:?}");
        let got = run(&[
            ("server/discover", "2026-07-28", 200, DISCOVERED),
            ("tools/list", "2026-07-28", 200, TOOLS),
            ("tools/list", "2026-07-28", 400, ""),
        ]);
        assert!(got.iter().all(|r| !has(r, refused)), "{got:?}");
    }
}
