//! The auth layer live, binary to binary over loopback: `serve-faults --auth-token T` as a
//! protected resource, `probe -H "Authorization: Bearer T"`, and each auth fault scenario
//! judged by `probe` with its layer, advice, rule and the calls' `auth_step`.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_mcp-verdict");
const TOKEN: &str = "s3cret-token";

/// `serve-faults` on an OS-chosen loopback port; killed on drop.
struct Serve {
    child: Child,
    url: String,
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn serve(token: &str) -> Serve {
    let mut child = Command::new(BIN)
        .args([
            "serve-faults",
            "--listen",
            "127.0.0.1:0",
            "--auth-token",
            token,
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("serve-faults starts");
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let line = lines
        .next()
        .and_then(Result::ok)
        .expect("serve-faults names its endpoint");
    let url = line
        .split_whitespace()
        .find(|w| w.starts_with("http://127.0.0.1:") && w.ends_with("/mcp,"))
        .map(|w| w.trim_end_matches(',').to_owned())
        .unwrap_or_else(|| panic!("no endpoint in {line:?}"));
    // Keep draining stderr so the server never blocks on a full pipe.
    std::thread::spawn(move || for _ in lines {});
    Serve { child, url }
}

/// `probe` with a deadline of its own (the test is bounded even if the server hangs).
fn probe(args: &[&str]) -> Output {
    let mut child = Command::new(BIN)
        .arg("probe")
        .args(args)
        .args(["--timeout", "10s"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            return child.wait_with_output().unwrap();
        }
        if start.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            panic!("probe {args:?} hung");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn jsonl(out: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn bearer(token: &str) -> String {
    format!("Authorization: Bearer {token}")
}

fn rules(v: &Value) -> Vec<&str> {
    v["violations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["rule"].as_str().unwrap())
        .collect()
}

/// A plain HTTP/1.1 GET over loopback: status line, headers and body as text.
fn get(url: &str, path: &str) -> String {
    let host = url.trim_start_matches("http://").split('/').next().unwrap();
    let mut s = TcpStream::connect(host).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut text = String::new();
    let _ = s.read_to_string(&mut text);
    text
}

#[test]
fn protected_resource_challenges_and_probe_sends_the_token() {
    let server = serve(TOKEN);
    // RFC 9728 metadata, at the root and under the resource path.
    for path in [
        "/.well-known/oauth-protected-resource",
        "/.well-known/oauth-protected-resource/mcp",
    ] {
        let reply = get(&server.url, path);
        assert!(reply.starts_with("HTTP/1.1 200"), "{reply}");
        let body = &reply[reply.find("\r\n\r\n").unwrap() + 4..];
        let doc: Value = serde_json::from_str(body).unwrap();
        assert_eq!(doc["resource"], server.url.as_str(), "{doc}");
        assert!(
            doc["authorization_servers"]
                .as_array()
                .is_some_and(|a| !a.is_empty())
        );
    }
    // No token: 401 with a challenge that names the metadata; the auth layer, reauthenticate.
    let raw = get(&server.url, "/mcp");
    assert!(raw.starts_with("HTTP/1.1 401"), "{raw}");
    assert!(
        raw.contains("resource_metadata=\"http://127.0.0.1:"),
        "{raw}"
    );
    for args in [vec![], vec!["-H".to_owned(), bearer("wrong")]] {
        let mut all = vec![server.url.as_str(), "--format", "jsonl"];
        all.extend(args.iter().map(String::as_str));
        let out = probe(&all);
        assert_eq!(out.status.code(), Some(1), "{out:?}");
        let v = &jsonl(&out)[0];
        assert_eq!(v["status"], 401, "{v}");
        assert_eq!(v["layer"], "auth", "{v}");
        assert_eq!(v["retry"]["advice"], "reauthenticate", "{v}");
        assert!(
            v["retry"]["reason"]
                .as_str()
                .unwrap()
                .contains("/.well-known/oauth-protected-resource/mcp"),
            "{v}"
        );
        assert!(rules(v).iter().all(|r| !r.starts_with("auth.")), "{v}");
        assert!(
            !String::from_utf8_lossy(&out.stdout).contains(TOKEN),
            "the token never shows"
        );
    }
    // With -H the handshake and the call go through.
    let out = probe(&[
        &server.url,
        "--tool",
        "echo",
        "-H",
        &bearer(TOKEN),
        "--format",
        "jsonl",
    ]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let verdicts = jsonl(&out);
    assert!(verdicts.iter().any(|v| v["outcome"] == "TOOL_SUCCESS"));
    assert!(verdicts.iter().all(|v| v["layer"] != "auth"));
}

#[test]
fn each_auth_fault_is_judged_by_probe() {
    let server = serve(TOKEN);
    let auth = bearer(TOKEN);
    let call = |scenario: &str, tool: &[&str]| -> (Vec<Value>, Vec<Value>) {
        let url = format!("{}/{scenario}", server.url);
        let mut args = vec![url.as_str(), "-H", &auth, "--format", "jsonl"];
        args.extend_from_slice(tool);
        let verdicts = jsonl(&probe(&args));
        args.push("--calls");
        let calls = jsonl(&probe(&args));
        (verdicts, calls)
    };
    let tools_call = |vs: &[Value]| -> Vec<Value> {
        vs.iter()
            .filter(|v| v["method"] == "tools/call")
            .cloned()
            .collect()
    };

    // 401 without a challenge.
    let (verdicts, calls) = call("auth-challenge-missing", &["--tool", "pay"]);
    let v = &tools_call(&verdicts)[0];
    assert_eq!(
        (v["status"].clone(), v["layer"].clone()),
        (401.into(), "auth".into())
    );
    assert_eq!(v["retry"]["advice"], "reauthenticate", "{v}");
    assert_eq!(rules(v), ["auth.challenge_missing"], "{v}");
    let c = calls.iter().find(|c| c["tool"] == "pay").unwrap();
    assert_eq!(c["auth_step"], "challenge", "{c}");

    // 403 insufficient_scope on pay, naming the scope; echo is not refused.
    let (verdicts, calls) = call("auth-insufficient-scope", &["--tool", "pay"]);
    let v = &tools_call(&verdicts)[0];
    assert_eq!(
        (v["status"].clone(), v["layer"].clone()),
        (403.into(), "auth".into())
    );
    assert_eq!(v["retry"]["advice"], "reauthenticate", "{v}");
    assert_eq!(rules(v), ["auth.insufficient_scope"], "{v}");
    assert!(
        v["violations"][0]["detail"]
            .as_str()
            .unwrap()
            .contains("\"tools:pay\""),
        "{v}"
    );
    assert_eq!(
        calls.iter().find(|c| c["tool"] == "pay").unwrap()["auth_step"],
        "scope"
    );
    let (verdicts, _) = call("auth-insufficient-scope", &["--tool", "echo"]);
    assert_eq!(tools_call(&verdicts)[0]["outcome"], "TOOL_SUCCESS");

    // The token expires after one call: the first call works, every later one is an expiry.
    let (verdicts, calls) = call("auth-token-expired", &["--all-tools"]);
    let tc = tools_call(&verdicts);
    assert!(tc.len() >= 2, "{tc:?}");
    assert_eq!(tc[0]["outcome"], "TOOL_SUCCESS", "{:?}", tc[0]);
    for v in &tc[1..] {
        assert_eq!(
            (v["status"].clone(), v["layer"].clone()),
            (401.into(), "auth".into())
        );
        assert_eq!(v["retry"]["advice"], "reauthenticate", "{v}");
        assert_eq!(rules(v), ["auth.token_expired"], "{v}");
    }
    let steps: Vec<&Value> = calls
        .iter()
        .filter(|c| c["method"] == "tools/call")
        .map(|c| &c["auth_step"])
        .collect();
    assert_eq!(steps[0], &Value::Null);
    assert!(
        steps[1..].iter().all(|s| *s == "token_expired"),
        "{steps:?}"
    );
}
