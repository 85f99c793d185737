#![cfg(feature = "cli")]
//! `mcp-verdict diff A B` as a user runs it: captures recorded by `probe -o` against the
//! built-in fault server (the correct endpoint as A, a faulty scenario as B), verdict and calls
//! logs written by `replay`, soak reports written by `soak -o`. Each regression kind, the exit
//! codes 0/1/2, `--fail-on` and every output format.

#[cfg(target_os = "linux")]
mod peak;
mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_mcp-verdict");

/// The recordings every test reads, made once: `name.har` for each `(name, scenario, tool)`.
fn recordings() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let rt = support::runtime();
        let server = support::fault_server(&rt);
        // Under the target directory, made afresh each run: nothing is left in /tmp.
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("diff-recordings");
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let record = |name: &str, scenario: Option<&str>, tool: Option<&str>| {
            let mut args = vec!["probe".to_owned(), server.url(scenario), "-o".into()];
            args.push(dir.join(format!("{name}.har")).display().to_string());
            if let Some(tool) = tool {
                args.extend(["--tool".into(), tool.into()]);
            }
            let out = Command::new(BIN).args(&args).output().unwrap();
            assert!(
                dir.join(format!("{name}.har")).exists(),
                "{name}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        };
        record("ok_pay", None, Some("pay"));
        record("cut_pay", Some("sse-cut-between-events"), Some("pay"));
        record("ok_echo", None, Some("echo"));
        record("jsonrpc_error", Some("jsonrpc-error"), Some("echo"));
        record("foreign_id", Some("sse-foreign-id-first"), Some("echo"));
        record("ok_lookup", None, Some("lookup"));
        record("slow_lookup", Some("slow-answer"), Some("lookup"));
        record("no_call", None, None);
        // Soak reports of the correct endpoint and of a stream cut mid-way.
        for (name, scenario) in [
            ("soak_ok", None),
            ("soak_cut", Some("sse-cut-between-events")),
        ] {
            let path = dir.join(format!("{name}.json"));
            let url = server.url(scenario);
            let args = ["soak", &url, "--tool", "pay", "-n", "6", "-c", "1", "-o"];
            Command::new(BIN).args(args).arg(&path).output().unwrap();
            assert!(path.exists(), "{name}");
        }
        // Keep the server up for the soak runs above only: the recordings are files now.
        drop(server);
        drop(rt);
        dir
    })
}

fn file(name: &str) -> String {
    recordings().join(name).display().to_string()
}

fn diff(args: &[&str]) -> Output {
    Command::new(BIN)
        .arg("diff")
        .args(args)
        .args(["--color", "never"])
        .output()
        .unwrap()
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn json(a: &str, b: &str, extra: &[&str]) -> (Option<i32>, Value) {
    let mut args = vec![a, b, "--format", "json"];
    args.extend(extra);
    let out = diff(&args);
    let doc =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", stdout(&out)));
    (out.status.code(), doc)
}

/// The regression kinds found, but `latency`: two live recordings differ in timing (a busy
/// machine can slow a first connection past the floor), so only the latency test reads it.
fn regressions(doc: &Value) -> Vec<String> {
    doc["regressions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k.as_str().unwrap().to_owned())
        .filter(|k| k != "latency")
        .collect()
}

/// `--fail-on` every kind but `latency`: for exit codes of recordings made apart (see
/// [`regressions`]).
const BUT_LATENCY: [&str; 2] = ["--fail-on", "incomplete,outcome,must_rule,new_failure"];

#[test]
fn the_same_capture_twice_changes_nothing_and_exits_0() {
    let ok = file("ok_pay.har");
    let out = diff(&[&ok, &ok]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    let text = stdout(&out);
    assert!(
        text.contains("3 paired, 0 changed, 0 only in A, 0 only in B"),
        "{text}"
    );
    assert!(text.trim_end().ends_with("no regressions"), "{text}");
}

#[test]
fn a_stream_cut_in_b_is_an_incomplete_regression() {
    let (code, doc) = json(&file("ok_pay.har"), &file("cut_pay.har"), &[]);
    assert_eq!(code, Some(1));
    assert_eq!(regressions(&doc), ["incomplete"]);
    assert_eq!(doc["a"]["kind"], "har");
    let changed = &doc["diff"]["changed"][0];
    assert_eq!(changed["a"]["tool"], "pay");
    assert_eq!(changed["a"]["outcome"], "TOOL_SUCCESS");
    assert_eq!(changed["b"]["outcome"], "STREAM_ABORTED");
    assert_eq!(changed["b"]["complete"], false);
    assert_eq!(changed["b"]["layer"], "stream");
    assert_eq!(changed["b"]["advice"], "do_not_retry");
    assert_eq!(doc["diff"]["changed"].as_array().unwrap().len(), 1);
    // Backwards it got better: nothing fails.
    let (code, doc) = json(&file("cut_pay.har"), &file("ok_pay.har"), &BUT_LATENCY);
    assert_eq!(code, Some(0));
    assert!(regressions(&doc).is_empty());
}

#[test]
fn a_jsonrpc_error_in_place_of_a_result_is_an_outcome_regression() {
    let (code, doc) = json(&file("ok_echo.har"), &file("jsonrpc_error.har"), &[]);
    assert_eq!(code, Some(1));
    assert_eq!(regressions(&doc), ["outcome"]);
    let changed = &doc["diff"]["changed"][0];
    assert_eq!(changed["b"]["outcome"], "JSONRPC_ERROR");
    assert_eq!(changed["b"]["complete"], true);
}

#[test]
fn a_new_must_rule_is_a_regression_even_when_complete() {
    let (code, doc) = json(&file("ok_echo.har"), &file("foreign_id.har"), &[]);
    assert_eq!(code, Some(1));
    assert_eq!(regressions(&doc), ["must_rule"]);
    let changed = &doc["diff"]["changed"][0];
    assert_eq!(
        changed["rules_added"],
        serde_json::json!(["sse.foreign_id_response"])
    );
    assert_eq!(changed["b"]["outcome"], "TOOL_SUCCESS");
}

#[test]
fn a_failing_call_only_in_b_is_a_new_failure() {
    let (code, doc) = json(&file("no_call.har"), &file("cut_pay.har"), &[]);
    assert_eq!(code, Some(1));
    assert_eq!(regressions(&doc), ["new_failure"]);
    let only_b = doc["diff"]["only_b"].as_array().unwrap();
    assert_eq!(only_b.len(), 1);
    assert_eq!(only_b[0]["tool"], "pay");
    // The other way round, the call is only in A: reported, not a regression.
    let (code, doc) = json(&file("cut_pay.har"), &file("no_call.har"), &BUT_LATENCY);
    assert_eq!(code, Some(0));
    assert_eq!(doc["diff"]["only_a"].as_array().unwrap().len(), 1);
}

#[test]
fn a_slower_tool_is_a_latency_regression() {
    let (code, doc) = json(&file("ok_lookup.har"), &file("slow_lookup.har"), &[]);
    assert_eq!(code, Some(1), "{doc}");
    assert!(regressions(&doc).is_empty(), "{doc}");
    assert_eq!(doc["regressions"], serde_json::json!(["latency"]), "{doc}");
    let lookup = doc["diff"]["latency"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["operation"] == "tools/call lookup")
        .unwrap();
    assert!(lookup["b"]["p99_ms"].as_u64().unwrap() >= 1400, "{lookup}");
    assert_eq!(lookup["regression"], true);
    let (code, _) = json(
        &file("ok_lookup.har"),
        &file("slow_lookup.har"),
        &BUT_LATENCY,
    );
    assert_eq!(code, Some(0), "latency not in --fail-on");
}

#[test]
fn fail_on_chooses_the_kinds_that_exit_1() {
    let (a, b) = (file("ok_pay.har"), file("cut_pay.har"));
    let code = |fail_on: &str| diff(&[&a, &b, "--fail-on", fail_on]).status.code();
    assert_eq!(code("incomplete"), Some(1));
    assert_eq!(code("outcome,must_rule"), Some(0));
    assert_eq!(code("none"), Some(0));
    assert_eq!(code("all"), Some(1));
    let out = diff(&[&a, &b, "--fail-on", "none"]);
    let text = stdout(&out);
    assert!(text.contains("regressions: incomplete 1"), "{text}");
    assert!(text.trim_end().ends_with("(none of --fail-on)"), "{text}");
}

#[test]
fn verdict_and_calls_logs_pair_by_method_tool_and_order() {
    let dir = recordings();
    for (flag, name) in [(None, "verdicts"), (Some("--calls"), "calls")] {
        for har in ["ok_pay", "cut_pay"] {
            let mut cmd = Command::new(BIN);
            cmd.args(["replay", "--format", "jsonl"]);
            if let Some(flag) = flag {
                cmd.arg(flag);
            }
            let out = cmd.arg(dir.join(format!("{har}.har"))).output().unwrap();
            std::fs::write(dir.join(format!("{har}.{name}.jsonl")), &out.stdout).unwrap();
        }
        let a = file(&format!("ok_pay.{name}.jsonl"));
        let b = file(&format!("cut_pay.{name}.jsonl"));
        let (code, doc) = json(&a, &b, &[]);
        assert_eq!(code, Some(1), "{name}: {doc}");
        assert_eq!(doc["a"]["kind"], name);
        assert_eq!(regressions(&doc), ["incomplete"], "{name}");
        assert_eq!(doc["diff"]["changed"][0]["b"]["args"], Value::Null);
        // A log against the capture it came from: nothing changed (no durations in a log).
        let (code, doc) = json(&file("ok_pay.har"), &a, &[]);
        assert_eq!(code, Some(0), "{name}: {doc}");
    }
}

#[test]
fn soak_reports_compare_as_whole_runs() {
    let (code, doc) = json(&file("soak_ok.json"), &file("soak_cut.json"), &[]);
    assert_eq!(code, Some(1), "{doc}");
    assert_eq!(doc["a"]["kind"], "soak");
    assert!(
        regressions(&doc).contains(&"incomplete".to_owned()),
        "{doc}"
    );
    assert_eq!(doc["soak"]["a"]["incomplete"], 0);
    assert_eq!(doc["soak"]["b"]["incomplete"], 6);
    let out = diff(&[&file("soak_ok.json"), &file("soak_ok.json")]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert!(stdout(&out).contains("incomplete rate"));
}

#[test]
fn markdown_and_junit_say_the_same() {
    let (a, b) = (file("ok_pay.har"), file("cut_pay.har"));
    let out = diff(&[&a, &b, "--format", "markdown"]);
    assert_eq!(out.status.code(), Some(1));
    let md = stdout(&out);
    assert!(
        md.contains("| 2→2 | `tools/call pay` | TOOL_SUCCESS → STREAM_ABORTED |"),
        "{md}"
    );
    assert!(md.contains("**regressions: incomplete 1"), "{md}");
    assert!(md.trim_end().ends_with("(exit 1)**"), "{md}");
    let out = diff(&[&a, &b, "--format", "junit", "--fail-on", "incomplete"]);
    assert_eq!(out.status.code(), Some(1));
    let xml = stdout(&out);
    assert!(xml.contains("tests=\"5\" failures=\"1\""), "{xml}");
    assert!(
        xml.contains("<testcase classname=\"diff\" name=\"incomplete\"><failure message=\"1 found"),
        "{xml}"
    );
    assert!(
        xml.contains("call 2→2 tools/call pay: TOOL_SUCCESS → STREAM_ABORTED"),
        "{xml}"
    );
}

#[test]
fn unusable_input_exits_2_with_one_line() {
    let dir = recordings();
    let ok = file("ok_pay.har");
    let junk = dir.join("junk.txt");
    std::fs::write(&junk, "hello\n").unwrap();
    let unknown = dir.join("unknown.json");
    std::fs::write(&unknown, "{\"x\": 1}\n").unwrap();
    let empty = dir.join("empty.jsonl");
    std::fs::write(&empty, "").unwrap();
    let missing = dir.join("missing.har").display().to_string();
    let soak = file("soak_ok.json");
    let cases: [(Vec<&str>, &str); 6] = [
        (vec![&ok, &missing], "missing.har: "),
        (vec![junk.to_str().unwrap(), &ok], "not a JSON object"),
        (
            vec![&ok, unknown.to_str().unwrap()],
            "its first member is \"x\"",
        ),
        (vec![empty.to_str().unwrap(), &ok], "empty file"),
        (
            vec![&soak, &ok],
            "a soak report compares only with another soak report",
        ),
        (
            vec![&ok, &ok, "--fail-on", "slow"],
            "--fail-on slow: not a regression kind",
        ),
    ];
    for (args, says) in cases {
        let out = diff(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        assert!(out.stdout.is_empty(), "{args:?}");
    }
}

/// The `diff` samples of the README and of docs/diff.md (a ```text fence whose first line is
/// `$ mcp-verdict diff …`) are what the binary prints on the shipped testdata: their lines in
/// order, `…` standing for any number of lines left out.
#[test]
fn the_documented_samples_are_what_the_binary_prints() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut checked = 0;
    for page in ["README.md", "docs/diff.md"] {
        let text = std::fs::read_to_string(root.join(page)).unwrap();
        let mut lines = text.lines();
        while let Some(line) = lines.next() {
            if line != "```text" {
                continue;
            }
            let fence: Vec<&str> = lines.by_ref().take_while(|l| *l != "```").collect();
            let Some(command) = fence
                .first()
                .and_then(|l| l.strip_prefix("$ mcp-verdict diff "))
            else {
                continue;
            };
            let out = Command::new(BIN)
                .arg("diff")
                .args(command.split_whitespace())
                .current_dir(root)
                .env("NO_COLOR", "1")
                .output()
                .unwrap();
            let printed: Vec<String> = String::from_utf8_lossy(&out.stdout)
                .lines()
                .map(|l| l.trim_end().to_owned())
                .collect();
            let mut at = 0;
            let mut gap = false;
            for expected in &fence[1..] {
                let expected = expected.trim_end();
                if expected == "…" {
                    gap = true;
                    continue;
                }
                let found = if gap {
                    printed[at..]
                        .iter()
                        .position(|p| p == expected)
                        .map(|i| at + i)
                } else {
                    (printed.get(at).map(String::as_str) == Some(expected)).then_some(at)
                };
                let Some(i) = found else {
                    panic!(
                        "{page}: `{command}`: {expected:?} is not printed there:\n{}",
                        printed.join("\n")
                    );
                };
                at = i + 1;
                gap = false;
            }
            assert!(
                gap || printed[at..].iter().all(|l| l.is_empty()),
                "{page}: `{command}` prints more: {:?}",
                &printed[at..]
            );
            checked += 1;
        }
    }
    assert_eq!(checked, 2, "one sample in each page");
}

/// Writes a HAR of `n` `tools/call` entries (distinct arguments), each answered with a
/// `body_kib` KiB text, taking `slow_ms` every 50th call and 13 ms otherwise.
#[cfg(target_os = "linux")]
fn write_big_har(path: &Path, n: usize, body_kib: usize, slow_ms: u64) {
    use std::io::Write;
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    write!(
        f,
        r#"{{"log":{{"version":"1.2","creator":{{"name":"t","version":"1"}},"entries":["#
    )
    .unwrap();
    let text = "x".repeat(body_kib << 10);
    for i in 0..n {
        let request = serde_json::json!({"jsonrpc": "2.0", "id": i + 1, "method": "tools/call",
            "params": {"name": "synthetic", "arguments": {"n": i}}});
        let response = serde_json::json!({"jsonrpc": "2.0", "id": i + 1, "result": {
            "content": [{"type": "text", "text": text}], "isError": false}});
        let time = if i % 50 == 49 { slow_ms } else { 13 };
        let entry = serde_json::json!({
            "startedDateTime": "2026-12-02T10:00:00.000Z", "time": time,
            "request": {"method": "POST", "url": "https://mcp.example.test/mcp",
                "headers": [{"name": "Content-Type", "value": "application/json"},
                            {"name": "Accept", "value": "application/json, text/event-stream"},
                            {"name": "MCP-Protocol-Version", "value": "2025-11-25"}],
                "postData": {"mimeType": "application/json", "text": request.to_string()}},
            "response": {"status": 200, "headers": [{"name": "Content-Type", "value": "application/json"}],
                "content": {"mimeType": "application/json", "text": response.to_string()}}
        });
        let sep = if i == 0 { "" } else { "," };
        write!(f, "{sep}{entry}").unwrap();
    }
    write!(f, "]}}}}").unwrap();
    f.flush().unwrap();
}

/// Two captures of 48 MB each: the diff keeps summaries, not bodies, so the process stays far
/// below the size of one capture (docs/diff.md#memory).
#[cfg(target_os = "linux")]
#[test]
fn a_large_capture_pair_is_diffed_in_streaming_memory() {
    let dir = recordings().join("big");
    std::fs::create_dir_all(&dir).unwrap();
    let (a, b) = (dir.join("a.har"), dir.join("b.har"));
    write_big_har(&a, 12_000, 4, 13);
    write_big_har(&b, 12_000, 4, 400);
    let size = std::fs::metadata(&a).unwrap().len();
    assert!(size > 48_000_000, "{size}");
    let child = Command::new(BIN)
        .args(["diff", "--format", "json"])
        .args([&a, &b])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let run = peak::measure(child, std::time::Duration::from_secs(120), "diff");
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    let doc: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(doc["diff"]["paired"], 12_000);
    assert_eq!(doc["regressions"], serde_json::json!(["latency"]));
    let peak_mb = run.peak_kib * 1024 / 1_000_000;
    eprintln!(
        "diff of two {} MB captures: peak {peak_mb} MB",
        size / 1_000_000
    );
    assert!(
        peak_mb < 32,
        "peak {peak_mb} MB for two {size}-byte captures"
    );
}
