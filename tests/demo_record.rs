#![cfg(feature = "cli")]
//! The session-level fault scenarios from the command line, as a user would check them: `demo
//! --record DIR` probes each scenario live and writes its capture; `replay --calls` of that
//! capture must give the calls the scenario declares (the same the demo compared live).

use std::process::Command;

use mcp_verdict::Call;
use mcp_verdict::faults::{demo, scenarios};

const BIN: &str = env!("CARGO_BIN_EXE_mcp-verdict");

#[test]
fn demo_recordings_replay_to_the_declared_calls() {
    let session: Vec<_> = scenarios::all()
        .into_iter()
        .filter(|s| !s.calls.is_empty())
        .collect();
    assert!(session.len() >= 8, "{} session scenarios", session.len());
    let dir = std::env::temp_dir().join(format!("mcp-verdict-demo-record-{}", std::process::id()));
    let mut args = vec!["demo".to_owned(), "--color".into(), "never".into()];
    for s in &session {
        args.extend(["--scenario".into(), s.name.to_owned()]);
    }
    args.extend(["--record".into(), dir.display().to_string()]);
    let out = Command::new(BIN).args(&args).output().expect("run demo");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "demo failed:\n{text}");

    let mut failures = Vec::new();
    for s in &session {
        let har = dir.join(format!("{}.har", s.name));
        let out = Command::new(BIN)
            .args(["replay", "--calls", "--format", "jsonl"])
            .arg(&har)
            .output()
            .expect("run replay");
        let calls: Vec<Call> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(|l| serde_json::from_str(l).expect("a call per line"))
            .collect();
        // The first tools/call follows the handshake and tools/list.
        let first = calls
            .iter()
            .find(|c| c.method.as_deref() == Some("tools/call"))
            .and_then(|c| c.entries.first().copied())
            .unwrap_or(u64::MAX);
        for m in demo::compare_calls(&s.calls, &calls, first) {
            failures.push(format!("{}: {m}", s.name));
        }
        // The exit code speaks of calls (a refused discover before initialize is forgiven).
        let complete = calls
            .iter()
            .filter(|c| c.entries.first().is_some_and(|e| *e >= first))
            .all(|c| c.complete);
        let code = out.status.code();
        if code != Some(if complete { 0 } else { 1 }) {
            failures.push(format!("{}: replay --calls exit {code:?}", s.name));
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
