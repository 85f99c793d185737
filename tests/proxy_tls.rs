//! `proxy --upstream https://...`: the proxy's own HTTP/1.1 path over TLS (issue 34, D3), in
//! front of a real TLS server: Debian's nginx with a certificate for 127.0.0.1 from a test CA
//! (made with `openssl`), forwarding to the fault server. The client (probe) speaks plain HTTP
//! to the proxy; the proxy trusts the CA through `--upstream-cacert` and judges each exchange
//! as it would over plain HTTP. Without the CA the upstream is refused, and the proxy's 502
//! names the certificate problem.
//!
//! nginx and openssl are installed by `.ci/run` (`MCP_VERDICT_CI=1`): there a missing one fails
//! the test; elsewhere it is skipped with a `SKIP:` line.
#![cfg(feature = "cli")]

#[path = "support/certs.rs"]
mod certs;
#[path = "support/nginx.rs"]
mod nginx;
mod proxy_process;

use std::path::PathBuf;

use nginx::{Nginx, fault_server, probe};
use proxy_process::{ProxyProcess, log_lines};

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mcp-verdict-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Certificates in `dir`, or `None` after a `SKIP:` line (a panic under CI).
fn certificates(dir: &std::path::Path) -> Option<()> {
    let made = certs::make_certificates(dir);
    if made.is_none() {
        assert!(
            std::env::var_os("MCP_VERDICT_CI").is_none(),
            "openssl is missing, and MCP_VERDICT_CI is set: .ci/run installs it"
        );
        eprintln!("SKIP: openssl is not installed; the HTTPS upstream test did not run");
    }
    made
}

#[test]
fn an_https_upstream_is_forwarded_and_judged_like_plain_http() {
    let dir = scratch("proxy-tls");
    let Some(()) = certificates(&dir) else { return };
    let (_rt, server) = fault_server();
    let Some(tls) = Nginx::start_tls(server.addr().port(), "proxy_buffering off;", &dir) else {
        return;
    };
    let ca = dir.join("ca.pem");
    let ca = ca.to_str().unwrap();
    // A correct call and a stream cut mid-JSON: the same verdicts as over plain HTTP.
    for (path, tool, outcome) in [
        ("/mcp", "echo", "TOOL_SUCCESS"),
        ("/mcp/sse-cut-mid-json", "echo", "STREAM_ABORTED"),
    ] {
        let upstream = format!("https://127.0.0.1:{}{path}", tls.port);
        let log = dir.join(format!("log-{}.jsonl", path.replace('/', "_")));
        let proxy = ProxyProcess::start(
            &upstream,
            &[
                "--upstream-cacert",
                ca,
                "--log",
                log.to_str().unwrap(),
                "--quiet",
            ],
            &[],
            &dir,
        );
        let args = ["--tool", tool, "--args", r#"{"message":"hi"}"#];
        let (out, verdicts) = probe(&proxy.url, &args);
        let call = verdicts
            .iter()
            .find(|v| v["method"] == "tools/call")
            .unwrap_or_else(|| panic!("{path}: no tools/call verdict from probe: {out:?}"));
        assert_eq!(call["outcome"], outcome, "{path}: probe saw {call}");
        let status = proxy.stop();
        assert!(
            status.code().is_some(),
            "{path}: the proxy ended by a signal"
        );
        let judged = log_lines(&log);
        let call = judged
            .iter()
            .find(|v| v["method"] == "tools/call")
            .unwrap_or_else(|| panic!("{path}: the proxy logged no tools/call: {judged:?}"));
        assert_eq!(call["outcome"], outcome, "{path}: the proxy judged {call}");
        assert_eq!(call["status"], 200, "{path}: {call}");
    }
}

#[test]
fn an_https_upstream_with_an_unknown_ca_is_refused_with_the_reason() {
    let dir = scratch("proxy-tls-unknown");
    let Some(()) = certificates(&dir) else { return };
    let (_rt, server) = fault_server();
    let Some(tls) = Nginx::start_tls(server.addr().port(), "", &dir) else {
        return;
    };
    let upstream = format!("https://127.0.0.1:{}/mcp", tls.port);
    let proxy = ProxyProcess::start(&upstream, &["--quiet"], &[], &dir);
    let (out, verdicts) = probe(&proxy.url, &[]);
    let first = verdicts
        .first()
        .unwrap_or_else(|| panic!("no verdict from probe: {out:?}"));
    assert_eq!(first["status"], 502, "{first}");
    let body =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(
        body.to_ascii_lowercase().contains("certificate"),
        "the 502 does not name the certificate: {body}"
    );
}

#[test]
fn an_unusable_upstream_cacert_is_refused_at_start() {
    let dir = scratch("proxy-tls-bad-ca");
    let bad = dir.join("not-a-cert.pem");
    std::fs::write(&bad, "hello\n").unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_mcp-verdict"))
        .args([
            "proxy",
            "--upstream",
            "https://127.0.0.1:1/mcp",
            "--listen",
            "127.0.0.1:0",
        ])
        .args(["--upstream-cacert", bad.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--upstream-cacert"), "{err}");
}
