//! Which box made an HTTP status: the MCP server, or an intermediary (gateway, load balancer,
//! CDN) between it and the client. Sans-IO: a pure function of the response head, the error
//! body the exchange kept, what the session saw of this server's other errors, and times passed
//! in by the adapter.
//!
//! Production failures mostly come from the boxes in between (a gateway's own 502/504, made in
//! 3 ms or after its timeout), and judging them as the server's sends users to the wrong logs
//! and gets retries wrong. The rule is "never guess": every `intermediary` names its evidence,
//! and absent evidence the origin is `server`.
//!
//! The evidence table, first match wins:
//!
//! | evidence | origin | reached the server |
//! |---|---|---|
//! | a JSON-RPC body | server | — |
//! | a canonical error page of nginx/openresty, envoy, HAProxy, Cloudflare, AWS ELB | intermediary | by page (`no healthy upstream`: no; `upstream request timeout`: yes) |
//! | a Cloudflare 52x status with `CF-RAY` or `Server: cloudflare` | intermediary | by status (521/522/523/525/526/530: no; 524: yes) |
//! | `X-Envoy-Upstream-Service-Time` (the upstream answered) | server | — |
//! | 502 or 504 (gateway statuses) with a body that is not JSON-RPC | intermediary | 504: yes |
//! | any other error status, HTML or plain text, where this server's other errors were JSON-RPC | intermediary | unknown |
//! | none of these | server | — |
//!
//! Time refines "reached": a gateway 502 within [`FAST_502_MS`] of sending is a refused or
//! failed upstream connection (the request never reached the server); a gateway timeout that
//! came before the request's own timeout names that timeout in the reason (never the measured time:
//! a verdict reads the same live and replayed).

use std::borrow::Cow;

use crate::request::Headers;
use crate::vocab::verdict::StatusOrigin;

/// A gateway's 502 this fast (from sending the request to the response head) could not have
/// waited on a server that read the request: it is a refused or failed upstream connection.
/// Low on purpose: a server that crashes 100 ms into a destructive call also gives a 502, and
/// calling that "never reached" would advise a double execution.
pub const FAST_502_MS: f64 = 50.0;

/// Whether the request reached the server, as far as the evidence tells.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reach {
    /// Unknown: the usual status rules decide the retry advice.
    Unknown,
    /// The intermediary could not hand it on (no healthy upstream, connect refused): safe to
    /// send again, whatever the tool does.
    Never,
    /// Handed on, then the intermediary gave up waiting: the call may have run.
    Forwarded,
}

/// The decision: which box, why, and whether the request reached the server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Origin {
    pub(crate) origin: StatusOrigin,
    pub(crate) reason: Cow<'static, str>,
    pub(crate) reach: Reach,
}

/// What the response head says about boxes on the path, read once from its headers (only for
/// error statuses: a 2xx is the server's answer).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Hints {
    /// `Server`, when it names a proxy product (nginx, envoy, cloudflare, …).
    pub(crate) proxy_server: Option<String>,
    /// A `Via` header.
    pub(crate) via: bool,
    /// A `CF-RAY` header (Cloudflare is on the path).
    pub(crate) cf_ray: bool,
    /// Any `X-Envoy-*` header.
    pub(crate) envoy: bool,
    /// `X-Envoy-Upstream-Service-Time`: envoy got the upstream's answer.
    pub(crate) envoy_upstream_answered: bool,
}

/// Proxy products whose name in `Server` means they are on the path.
const PROXY_SERVERS: &[&str] = &[
    "nginx",
    "openresty",
    "envoy",
    "haproxy",
    "cloudflare",
    "awselb",
    "akamaighost",
    "varnish",
    "caddy",
    "istio-envoy",
    "google frontend",
    "kong",
];

impl Hints {
    /// Reads the headers that tell of an intermediary.
    pub(crate) fn of(headers: &Headers) -> Hints {
        let mut h = Hints::default();
        for (name, value) in headers.iter() {
            let lower = name.to_ascii_lowercase();
            match lower.as_str() {
                "server" => {
                    let v = value.to_ascii_lowercase();
                    if PROXY_SERVERS.iter().any(|p| v.starts_with(p)) {
                        h.proxy_server = Some(value.chars().take(64).collect());
                    }
                }
                "via" => h.via = true,
                "cf-ray" => h.cf_ray = true,
                "x-envoy-upstream-service-time" => {
                    h.envoy = true;
                    h.envoy_upstream_answered = true;
                }
                n if n.starts_with("x-envoy-") => h.envoy = true,
                _ => {}
            }
        }
        h
    }

    /// An intermediary is on the path, in words for the reason; `None` when nothing says so.
    fn path(&self) -> Option<String> {
        let mut said = Vec::new();
        if let Some(s) = &self.proxy_server {
            said.push(format!("Server: {s}"));
        }
        if self.via {
            said.push("Via".to_owned());
        }
        if self.cf_ray {
            said.push("CF-RAY".to_owned());
        }
        if self.envoy {
            said.push("X-Envoy-*".to_owned());
        }
        (!said.is_empty()).then(|| said.join(", "))
    }

    fn cloudflare(&self) -> bool {
        self.cf_ray
            || self
                .proxy_server
                .as_deref()
                .is_some_and(|s| s.eq_ignore_ascii_case("cloudflare"))
    }
}

/// Everything the decision reads.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Facts<'a> {
    pub(crate) status: u16,
    pub(crate) hints: &'a Hints,
    /// The body as kept (error bodies up to 1 MiB; empty for a streamed 2xx).
    pub(crate) body: &'a [u8],
    /// The body is a JSON-RPC message (its error was read).
    pub(crate) jsonrpc_body: bool,
    /// Media type, lowercased.
    pub(crate) content_type: Option<&'a str>,
    /// This server's earlier errors in the session came as JSON-RPC.
    pub(crate) server_errors_jsonrpc: bool,
    /// From sending the request to the response head, in milliseconds.
    pub(crate) head_ms: Option<f64>,
    /// The request's own timeout, in milliseconds.
    pub(crate) timeout_ms: Option<f64>,
}

/// How much of a body is searched for a canonical page (they are all short; a server's long
/// HTML error page is not read to its end).
const SCAN_BYTES: usize = 4096;

/// A canonical intermediary page: a needle in the body, who makes it, and what it tells.
struct Page {
    needle: &'static str,
    who: &'static str,
    reach: Reach,
}

/// Bodies intermediaries write themselves, searched in lower case, most specific first.
const PAGES: &[Page] = &[
    Page {
        needle: "no healthy upstream",
        who: "envoy (`no healthy upstream`)",
        reach: Reach::Never,
    },
    Page {
        needle: "upstream request timeout",
        who: "envoy (`upstream request timeout`)",
        reach: Reach::Forwarded,
    },
    Page {
        needle: "upstream connect error or disconnect/reset before headers. reset reason: connection failure",
        who: "envoy (`upstream connect error`, connection failure)",
        reach: Reach::Never,
    },
    Page {
        needle: "upstream connect error or disconnect/reset before headers. reset reason: remote connection failure",
        who: "envoy (`upstream connect error`, remote connection failure)",
        reach: Reach::Never,
    },
    Page {
        needle: "upstream connect error or disconnect/reset before headers",
        who: "envoy (`upstream connect error`)",
        reach: Reach::Unknown,
    },
    Page {
        needle: "no server is available to handle this request",
        who: "HAProxy (`No server is available`)",
        reach: Reach::Never,
    },
    Page {
        needle: "the server didn't respond in time",
        who: "HAProxy (gateway timeout)",
        reach: Reach::Forwarded,
    },
    Page {
        needle: "the server returned an invalid or incomplete response",
        who: "HAProxy (bad gateway)",
        reach: Reach::Unknown,
    },
    Page {
        needle: "<center>nginx",
        who: "nginx",
        reach: Reach::Unknown,
    },
    Page {
        needle: "<center>openresty",
        who: "openresty (nginx)",
        reach: Reach::Unknown,
    },
    Page {
        needle: "<center>awselb",
        who: "AWS ELB",
        reach: Reach::Unknown,
    },
    Page {
        needle: "cf-error-details",
        who: "Cloudflare",
        reach: Reach::Unknown,
    },
];

/// What a Cloudflare 52x status says about the origin server.
fn cloudflare_status(status: u16) -> Option<(&'static str, Reach)> {
    Some(match status {
        520 => ("520: the origin returned an unknown error", Reach::Unknown),
        521 => ("521: the origin refused the connection", Reach::Never),
        522 => ("522: connecting to the origin timed out", Reach::Never),
        523 => ("523: the origin is unreachable", Reach::Never),
        524 => ("524: the origin took too long to answer", Reach::Forwarded),
        525 => (
            "525: the TLS handshake with the origin failed",
            Reach::Never,
        ),
        526 => ("526: the origin's certificate is invalid", Reach::Never),
        527 => ("527: the Railgun connection failed", Reach::Unknown),
        530 => ("530: the origin could not be resolved", Reach::Never),
        _ => return None,
    })
}

/// A 2xx needs no evidence: the answer came through, so its origin is the server.
const SUCCESS: &str = "a success status: the server's answer";

/// Absent evidence the origin is the server (the rule: never guess).
const NO_EVIDENCE: &str = "no sign of an intermediary (JSON-RPC body, proxy error page, gateway status, headers): the server's";

/// Decides the origin of the status in `f`. Inlined, so a 2xx (most exchanges) is decided
/// where it is asked, without building the error path's evidence.
#[inline]
pub(crate) fn decide(f: &Facts<'_>) -> Origin {
    if (200..300).contains(&f.status) {
        return Origin {
            origin: StatusOrigin::Server,
            reason: Cow::Borrowed(SUCCESS),
            reach: Reach::Unknown,
        };
    }
    decide_error(f)
}

/// [`decide`] for an error status: the evidence table, first match wins.
fn decide_error(f: &Facts<'_>) -> Origin {
    let server = |reason: Cow<'static, str>| Origin {
        origin: StatusOrigin::Server,
        reason,
        reach: Reach::Unknown,
    };
    let intermediary = |reason: String, reach: Reach| Origin {
        origin: StatusOrigin::Intermediary,
        reason: reason.into(),
        reach,
    };
    if f.jsonrpc_body {
        return server("the body is a JSON-RPC error: the server's own".into());
    }
    let head = &f.body[..f.body.len().min(SCAN_BYTES)];
    let text = String::from_utf8_lossy(head).to_ascii_lowercase();
    let on_path = f.hints.path();
    let with_path = |s: String| match &on_path {
        Some(p) => format!("{s} ({p})"),
        None => s,
    };
    if let Some(page) = PAGES.iter().find(|p| text.contains(p.needle)) {
        let reach = refine(f, page.reach);
        return intermediary(
            with_path(format!(
                "{} {}: the error page of {}{}",
                f.status,
                shape(f.content_type, f.body.is_empty()),
                page.who,
                timing(f, reach)
            )),
            reach,
        );
    }
    if f.hints.cloudflare()
        && let Some((what, reach)) = cloudflare_status(f.status)
    {
        return intermediary(
            with_path(format!("Cloudflare {what}{}", timing(f, reach))),
            reach,
        );
    }
    if f.hints.envoy_upstream_answered {
        return server(
            "X-Envoy-Upstream-Service-Time: envoy passed on the upstream's own answer".into(),
        );
    }
    if matches!(f.status, 502 | 504) {
        let reach = refine(f, Reach::Unknown);
        return intermediary(
            with_path(format!(
                "{} {}: a gateway's status (RFC 9110), and not the server's JSON-RPC{}",
                f.status,
                shape(f.content_type, f.body.is_empty()),
                timing(f, reach)
            )),
            reach,
        );
    }
    let textual = f.body.is_empty()
        || matches!(f.content_type, None | Some("text/html" | "text/plain"))
        || !looks_json(head);
    if f.server_errors_jsonrpc && textual {
        let reach = refine(f, Reach::Unknown);
        return intermediary(
            with_path(format!(
                "{} {} where this server's other errors are JSON-RPC{}",
                f.status,
                shape(f.content_type, f.body.is_empty()),
                timing(f, reach)
            )),
            reach,
        );
    }
    match on_path {
        // An intermediary is on the path but nothing says it made this status.
        Some(p) => server(format!("{NO_EVIDENCE} ({p} only shows one on the path)").into()),
        None => server(NO_EVIDENCE.into()),
    }
}

/// An intermediary's 504 is a timeout after forwarding; its 502 within [`FAST_502_MS`] never
/// reached the server.
fn refine(f: &Facts<'_>, reach: Reach) -> Reach {
    match (reach, f.status, f.head_ms) {
        (Reach::Unknown, 504, _) => Reach::Forwarded,
        (Reach::Unknown, 502, Some(ms)) if ms <= FAST_502_MS => Reach::Never,
        _ => reach,
    }
}

/// What the time to the status tells, for the reason. It names the thresholds the time was
/// held against, never the time itself: a verdict must read the same live, through the proxy
/// and replayed, and the measured time differs on every run.
fn timing(f: &Facts<'_>, reach: Reach) -> String {
    let Some(ms) = f.head_ms else {
        return String::new();
    };
    match (reach, f.timeout_ms) {
        (Reach::Never, _) if f.status == 502 && ms <= FAST_502_MS => format!(
            "; within {}: too fast to have waited on the server, the upstream connection failed",
            duration(FAST_502_MS)
        ),
        (Reach::Forwarded, Some(t)) if ms < t => format!(
            "; before the request's own {} timeout: the intermediary's timeout",
            duration(t)
        ),
        _ => String::new(),
    }
}

fn duration(ms: f64) -> String {
    if ms < 1000.0 {
        format!("{} ms", ms.round())
    } else {
        format!("{:.1} s", ms / 1000.0)
    }
}

/// The body's shape in words.
fn shape(content_type: Option<&str>, empty: bool) -> String {
    if empty {
        return "with an empty body".into();
    }
    match content_type {
        Some("text/html") => "with an HTML body".into(),
        Some("text/plain") => "with a plain-text body".into(),
        Some(t) => format!("with a {t} body"),
        None => "with a body of no declared type".into(),
    }
}

/// The first non-blank byte opens a JSON object or array.
fn looks_json(body: &[u8]) -> bool {
    body.iter()
        .find(|b| !b.is_ascii_whitespace())
        .is_some_and(|b| matches!(b, b'{' | b'['))
}

#[cfg(test)]
mod tests;
