//! A buffered stream, against a real nginx (issue 32, deliverables 3 and 8): `mcp-verdict
//! probe` (the binary) through Debian's nginx to the fault server's `sse-progress-spread` (three
//! progress events 500 ms apart, then the result, without `X-Accel-Buffering: no`). With
//! `proxy_buffering on` nginx holds the events and delivers them together at the end:
//! `sse.buffered`. With `proxy_buffering off` they arrive spread: no finding. The recording
//! replays to the same verdict.
//!
//! nginx missing: each test prints `SKIP: ...` and passes, except under `.ci/run`
//! (`MCP_VERDICT_CI`), which installs it.
#![cfg(feature = "tools")]

#[path = "support/nginx.rs"]
mod nginx;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use nginx::{Nginx, fault_server, probe};
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_mcp-verdict");

/// Runs `mcp-verdict probe <url> --tool progress -o <har>`, bounded: its output and the
/// `tools/call` verdict.
fn probe_progress(url: &str, har: &Path) -> (Output, Value) {
    let har = har.to_str().expect("a UTF-8 temp path");
    let (out, verdicts) = probe(url, &["--tool", "progress", "--args", "{}", "-o", har]);
    let call = verdicts
        .into_iter()
        .find(|v| v["method"] == "tools/call")
        .unwrap_or_else(|| {
            panic!(
                "no tools/call verdict; stdout: {}\nstderr: {}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            )
        });
    (out, call)
}

/// The `tools/call` verdict of `mcp-verdict replay <har> --format jsonl`.
fn replayed_call(har: &PathBuf) -> Value {
    let out = Command::new(BIN)
        .arg("replay")
        .arg(har)
        .args(["--format", "jsonl"])
        .output()
        .expect("run mcp-verdict replay");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|v| v["method"] == "tools/call")
        .unwrap_or_else(|| panic!("no replayed tools/call: {out:?}"))
}

fn rules(verdict: &Value) -> Vec<String> {
    verdict["violations"]
        .as_array()
        .map(|list| {
            list.iter()
                .filter_map(|v| v["rule"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

fn har_path(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!(
        "mcp-verdict-nginx-buffering-{}-{name}.har",
        std::process::id()
    ))
}

/// Probes `sse-progress-spread` through nginx configured with `extra`: the call's verdict and
/// its replay from the recording.
fn through_nginx(extra: &str, name: &str) -> Option<(Value, Value, String)> {
    let (_rt, server) = fault_server();
    let nginx = Nginx::start(server.addr().port(), extra)?;
    let har = har_path(name);
    let (_, call) = probe_progress(&nginx.url("/mcp/sse-progress-spread"), &har);
    let mut again = replayed_call(&har);
    let _ = std::fs::remove_file(&har);
    // The one member that differs: where the verdict came from (the URL, then the file).
    let mut call = call;
    for v in [&mut call, &mut again] {
        v.as_object_mut().map(|o| o.remove("file"));
    }
    Some((call, again, nginx.log()))
}

#[test]
fn proxy_buffering_on_delivers_the_progress_all_at_once_sse_buffered() {
    let Some((call, again, log)) = through_nginx("proxy_buffering on;", "on") else {
        return;
    };
    assert_eq!(call["outcome"], "TOOL_SUCCESS", "{call}\n{log}");
    assert_eq!(call["event_count"], 4, "{call}");
    assert!(
        rules(&call).contains(&"sse.buffered".to_owned()),
        "{call}\n{log}"
    );
    let finding = call["violations"]
        .as_array()
        .and_then(|l| l.iter().find(|v| v["rule"] == "sse.buffered"))
        .expect("the finding");
    let detail = finding["detail"].as_str().unwrap_or_default();
    assert!(detail.contains("3 progress notifications"), "{detail}");
    assert!(detail.contains("proxy_buffering off"), "{detail}");
    // The recording replays to the same verdict (the arrival marks travel with it).
    assert_eq!(again, call);
}

#[test]
fn proxy_buffering_off_passes_the_events_on_as_they_come() {
    let Some((call, again, log)) = through_nginx("proxy_buffering off;", "off") else {
        return;
    };
    assert_eq!(call["outcome"], "TOOL_SUCCESS", "{call}\n{log}");
    assert_eq!(call["event_count"], 4, "{call}");
    assert!(
        !rules(&call).contains(&"sse.buffered".to_owned()),
        "{call}\n{log}"
    );
    assert_eq!(again, call);
}
