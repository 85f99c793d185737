//! The evidence table against bodies and heads as the intermediaries send them.

use super::*;

/// nginx 1.22's own 502 page, as Debian's nginx sends it.
const NGINX_502: &str = "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx/1.22.1</center>\r\n</body>\r\n</html>\r\n";
const NGINX_504: &str = "<html>\r\n<head><title>504 Gateway Time-out</title></head>\r\n<body>\r\n<center><h1>504 Gateway Time-out</h1></center>\r\n<hr><center>nginx/1.22.1</center>\r\n</body>\r\n</html>\r\n";
const HAPROXY_503: &str = "<html><body><h1>503 Service Unavailable</h1>\nNo server is available to handle this request.\n</body></html>\n";
const HAPROXY_504: &str = "<html><body><h1>504 Gateway Time-out</h1>\nThe server didn't respond in time.\n</body></html>\n";
const CLOUDFLARE_522: &str = "<!DOCTYPE html><html><head><title>example.com | 522: Connection timed out</title></head><body><div id=\"cf-wrapper\"><div id=\"cf-error-details\" class=\"cf-error-details-wrapper\">Ray ID: 7d1f</div></div></body></html>";

fn facts<'a>(status: u16, hints: &'a Hints, body: &'a str, ct: Option<&'a str>) -> Facts<'a> {
    Facts {
        status,
        hints,
        body: body.as_bytes(),
        jsonrpc_body: false,
        content_type: ct,
        server_errors_jsonrpc: false,
        head_ms: None,
        timeout_ms: None,
    }
}

fn hints(pairs: &[(&str, &str)]) -> Hints {
    Hints::of(&pairs.iter().copied().collect())
}

#[test]
fn canonical_pages_are_the_intermediarys() {
    let nginx = hints(&[("Server", "nginx/1.22.1")]);
    let d = decide(&facts(502, &nginx, NGINX_502, Some("text/html")));
    assert_eq!(d.origin, StatusOrigin::Intermediary, "{d:?}");
    assert!(
        d.reason.contains("nginx") && d.reason.contains("Server: nginx/1.22.1"),
        "{d:?}"
    );
    assert_eq!(
        d.reach,
        Reach::Unknown,
        "a slow or untimed 502 may have run the call"
    );
    let d = decide(&facts(504, &nginx, NGINX_504, Some("text/html")));
    assert_eq!(
        (d.origin, d.reach),
        (StatusOrigin::Intermediary, Reach::Forwarded)
    );
    let none = Hints::default();
    let d = decide(&facts(
        503,
        &none,
        "no healthy upstream",
        Some("text/plain"),
    ));
    assert_eq!(
        (d.origin, d.reach),
        (StatusOrigin::Intermediary, Reach::Never)
    );
    assert!(d.reason.contains("envoy"), "{d:?}");
    let d = decide(&facts(
        504,
        &none,
        "upstream request timeout",
        Some("text/plain"),
    ));
    assert_eq!(d.reach, Reach::Forwarded);
    let reset = "upstream connect error or disconnect/reset before headers. reset reason: connection failure, transport failure reason: delayed connect error: 111";
    assert_eq!(decide(&facts(503, &none, reset, None)).reach, Reach::Never);
    let d = decide(&facts(503, &none, HAPROXY_503, Some("text/html")));
    assert_eq!(
        (d.origin, d.reach),
        (StatusOrigin::Intermediary, Reach::Never)
    );
    assert_eq!(
        decide(&facts(504, &none, HAPROXY_504, None)).reach,
        Reach::Forwarded
    );
    let cf = hints(&[("Server", "cloudflare"), ("CF-RAY", "7d1f-AMS")]);
    let d = decide(&facts(522, &cf, CLOUDFLARE_522, Some("text/html")));
    assert_eq!(d.origin, StatusOrigin::Intermediary, "{d:?}");
    assert!(d.reason.contains("Cloudflare"), "{d:?}");
}

#[test]
fn cloudflare_statuses_tell_whether_the_origin_was_reached() {
    let cf = hints(&[("CF-RAY", "7d1f-AMS")]);
    assert_eq!(decide(&facts(521, &cf, "", None)).reach, Reach::Never);
    assert_eq!(decide(&facts(524, &cf, "", None)).reach, Reach::Forwarded);
    // Without Cloudflare on the path a 521 is only a status.
    let none = Hints::default();
    assert_eq!(
        decide(&facts(521, &none, "", None)).origin,
        StatusOrigin::Server
    );
}

#[test]
fn the_servers_json_rpc_error_is_the_servers_behind_any_proxy() {
    let nginx = hints(&[("Server", "nginx"), ("Via", "1.1 gw")]);
    let body = r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"boom"}}"#;
    let mut f = facts(502, &nginx, body, Some("application/json"));
    f.jsonrpc_body = true;
    let d = decide(&f);
    assert_eq!(d.origin, StatusOrigin::Server, "{d:?}");
    // envoy says when the upstream answered.
    let envoy = hints(&[("Server", "envoy"), ("x-envoy-upstream-service-time", "12")]);
    let d = decide(&facts(
        500,
        &envoy,
        "Internal Server Error",
        Some("text/plain"),
    ));
    assert_eq!(d.origin, StatusOrigin::Server, "{d:?}");
}

#[test]
fn no_evidence_is_the_server() {
    let none = Hints::default();
    let d = decide(&facts(
        500,
        &none,
        "Internal Server Error",
        Some("text/plain"),
    ));
    assert_eq!(d.origin, StatusOrigin::Server);
    let d = decide(&facts(200, &none, "", Some("text/event-stream")));
    assert_eq!(d.origin, StatusOrigin::Server);
    // A proxy on the path is not evidence that it made the status.
    let via = hints(&[("Via", "1.1 varnish")]);
    let d = decide(&facts(500, &via, "oops", Some("text/plain")));
    assert_eq!(d.origin, StatusOrigin::Server, "{d:?}");
    assert!(d.reason.contains("Via"), "{d:?}");
}

#[test]
fn body_shape_against_the_servers_other_errors() {
    let none = Hints::default();
    let mut f = facts(
        503,
        &none,
        "<html><body>Service Unavailable</body></html>",
        Some("text/html"),
    );
    assert_eq!(decide(&f).origin, StatusOrigin::Server);
    f.server_errors_jsonrpc = true;
    let d = decide(&f);
    assert_eq!(d.origin, StatusOrigin::Intermediary, "{d:?}");
    assert!(d.reason.contains("other errors are JSON-RPC"), "{d:?}");
    // A JSON body that is not JSON-RPC is still the server's shape.
    let mut f = facts(500, &none, r#"{"detail":"x"}"#, Some("application/json"));
    f.server_errors_jsonrpc = true;
    assert_eq!(decide(&f).origin, StatusOrigin::Server);
}

#[test]
fn gateway_statuses_and_time() {
    let none = Hints::default();
    let mut f = facts(502, &none, "Bad Gateway", Some("text/plain"));
    let d = decide(&f);
    assert_eq!(
        (d.origin, d.reach),
        (StatusOrigin::Intermediary, Reach::Unknown)
    );
    f.head_ms = Some(3.0);
    let d = decide(&f);
    assert_eq!(d.reach, Reach::Never, "{d:?}");
    assert!(d.reason.contains("within 50 ms"), "{d:?}");
    f.head_ms = Some(FAST_502_MS + 1.0);
    assert_eq!(decide(&f).reach, Reach::Unknown);
    let mut f = facts(504, &none, "", None);
    f.head_ms = Some(1000.0);
    f.timeout_ms = Some(30_000.0);
    let d = decide(&f);
    assert_eq!(
        (d.origin, d.reach),
        (StatusOrigin::Intermediary, Reach::Forwarded)
    );
    assert!(
        d.reason.contains("before the request's own 30.0 s timeout"),
        "{d:?}"
    );
}

#[test]
fn a_long_body_is_searched_only_at_its_start() {
    let none = Hints::default();
    let long = format!("{}<center>nginx</center>", "x".repeat(SCAN_BYTES));
    assert_eq!(
        decide(&facts(500, &none, &long, Some("text/html"))).origin,
        StatusOrigin::Server
    );
}
