//! Which box made the status, against a real nginx (issue 32, deliverable 8): `mcp-verdict
//! probe` (the binary) through Debian's nginx to the fault server, all on loopback. nginx's own
//! 504 and 502 must be `status_origin: intermediary`; the server's JSON-RPC error passed through
//! it stays `server`, although every response through nginx says `Server: nginx`.
//!
//! nginx missing: each test prints `SKIP: ...` and passes, except under `.ci/run`
//! (`MCP_VERDICT_CI`), which installs it.
#![cfg(feature = "tools")]

#[path = "support/nginx.rs"]
mod nginx;

use std::process::Output;

use nginx::{Nginx, fault_server, probe};
use serde_json::Value;

/// The verdict of the `tools/call`.
fn tool_call(verdicts: &[Value], out: &Output) -> Value {
    verdicts
        .iter()
        .find(|v| v["method"] == "tools/call")
        .cloned()
        .unwrap_or_else(|| {
            panic!(
                "no tools/call verdict; stdout: {}\nstderr: {}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            )
        })
}

#[test]
fn a_stalled_tool_behind_proxy_read_timeout_is_the_gateways_504() {
    let (_rt, server) = fault_server();
    let Some(nginx) = Nginx::start(server.addr().port(), "proxy_read_timeout 1s;") else {
        return;
    };
    let (out, verdicts) = probe(
        &nginx.url("/mcp/slow-answer"),
        &["--tool", "lookup", "--args", "{}"],
    );
    let call = tool_call(&verdicts, &out);
    assert_eq!(call["status"], 504, "{call}\n{}", nginx.log());
    assert_eq!(call["status_origin"], "intermediary", "{call}");
    let reason = call["origin_reason"].as_str().unwrap_or_default();
    assert!(reason.contains("nginx"), "{reason}");
    assert!(
        reason.contains("before the request's own 10.0 s timeout"),
        "the time to the status against the probe's own timeout: {reason}"
    );
    // Forwarded, then the gateway gave up: a read-only tool may be sent again.
    assert_eq!(call["retry"]["advice"], "retry", "{call}");
    assert!(
        call["retry"]["reason"]
            .as_str()
            .is_some_and(|r| r.contains("after it forwarded")),
        "{call}"
    );
    // The exchanges nginx passed on are the server's.
    let first = &verdicts[0];
    assert_eq!(first["status_origin"], "server", "{first}");
}

#[test]
fn a_closed_upstream_port_is_the_gateways_502_and_never_reached_the_server() {
    // A port nothing listens on: nginx's connect is refused at once.
    let upstream = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let Some(nginx) = Nginx::start(upstream, "") else {
        return;
    };
    let (out, verdicts) = probe(&nginx.url("/mcp"), &["--tool", "pay", "--args", "{}"]);
    let first = verdicts.first().unwrap_or_else(|| {
        panic!(
            "no verdict; stdout: {}\nstderr: {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    assert_eq!(first["status"], 502, "{first}");
    assert_eq!(first["status_origin"], "intermediary", "{first}");
    let reason = first["origin_reason"].as_str().unwrap_or_default();
    assert!(reason.contains("nginx"), "{reason}");
    // In milliseconds on loopback: the upstream connection failed, nothing ran.
    assert_eq!(first["retry"]["advice"], "retry", "{first}");
    assert!(
        first["retry"]["reason"]
            .as_str()
            .is_some_and(|r| r.contains("never reached the server")),
        "{first}\n{}",
        nginx.log()
    );
}

#[test]
fn the_servers_own_json_rpc_error_through_nginx_is_the_servers() {
    let (_rt, server) = fault_server();
    let Some(nginx) = Nginx::start(server.addr().port(), "") else {
        return;
    };
    let (out, verdicts) = probe(
        &nginx.url("/mcp/http-404-method-not-found"),
        &["--tool", "echo", "--args", "{}"],
    );
    let call = tool_call(&verdicts, &out);
    assert_eq!(call["status"], 404, "{call}");
    assert_eq!(call["error_code"], -32601, "{call}");
    assert_eq!(call["status_origin"], "server", "{call}");
    assert_eq!(call["retry"]["advice"], "fix_request", "{call}");
}

/// The imitation in serve-faults (`gateway-html-502-slow`) is judged as the real thing: an
/// intermediary's 502 that came too late to be called "never reached", so a destructive tool
/// is not sent again.
#[test]
fn the_fault_servers_imitation_is_judged_as_nginxs_own_page() {
    let (_rt, server) = fault_server();
    let (out, verdicts) = probe(
        &server.url(Some("gateway-html-502-slow")),
        &["--tool", "pay", "--args", "{}"],
    );
    let call = tool_call(&verdicts, &out);
    assert_eq!(call["status_origin"], "intermediary", "{call}");
    assert_eq!(call["retry"]["advice"], "do_not_retry", "{call}");
}
