#![cfg(feature = "tools")]
//! Differential test of the shape table against the official checker: every JSON-RPC message of
//! the testdata captures and of the fault server's traffic (every scenario, live on loopback) is
//! judged by `mcp_verdict::shapes::check` and by the conformance suite's `wire-schema-valid`
//! logic (`.ci/conformance/oracle.mjs`: ajv with the schemas the suite bundles). Both must agree,
//! message by message, on whether the message is valid; the deliberate differences listed in
//! docs/conformance.md are the only exceptions, each tested by its own predicate below.
//!
//! Needs Node and the installed suite: `.ci/conformance.sh` sets `MCP_VERDICT_CONFORMANCE_HOME`
//! (the folder with `node_modules/` and the extracted `schemas/`) and `MCP_VERDICT_NODE`. Without
//! them the test says so and passes; `.ci/run` runs it with them.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use mcp_verdict::faults::{FaultServer, demo, scenarios};
use mcp_verdict::har::{self, Entry};
use mcp_verdict::replay::{Item, judge_entry};
use mcp_verdict::sse::{SseEvent, SseFramer, SseSink};
use mcp_verdict::{Driver, ProtocolVersion, shapes};
use serde_json::{Value, json};

/// One message to judge.
struct Sample {
    origin: String,
    version: ProtocolVersion,
    message: Value,
    request_method: Option<String>,
}

struct Events(Vec<Vec<u8>>);
impl SseSink for Events {
    fn on_event(&mut self, ev: &SseEvent<'_>) {
        if !ev.data.is_empty() && ev.is_message() {
            self.0.push(ev.data.to_vec());
        }
    }
}

/// A JSON-RPC message or batch, or `None`.
fn message(bytes: &[u8]) -> Option<Value> {
    match serde_json::from_slice::<Value>(bytes).ok()? {
        v @ Value::Object(_) => Some(v),
        Value::Array(items) if !items.is_empty() && items.iter().all(Value::is_object) => {
            Some(Value::Array(items))
        }
        _ => None,
    }
}

/// The messages of a capture, each with the revision the analyzer applied to its exchange.
fn samples(name: &str, entries: &[Entry], out: &mut Vec<Sample>) {
    let mut session = Driver::default();
    for e in entries {
        let Item::Verdict(v) = judge_entry(&mut session, e, &mut std::iter::empty()) else {
            continue;
        };
        let version = v.protocol_version;
        let origin = format!("{name} #{}", e.index);
        if let Some(m) = message(&e.request_body) {
            out.push(Sample {
                origin: format!("{origin} request"),
                version,
                message: m,
                request_method: None,
            });
        }
        let sse = e
            .response
            .as_ref()
            .and_then(|h| h.headers.get("content-type"))
            .is_some_and(|t| t.contains("text/event-stream"));
        let bodies = if sse {
            let mut events = Events(Vec::new());
            let _ = SseFramer::new(1 << 20).feed(&e.response_body, &mut events);
            events.0
        } else {
            vec![e.response_body.clone()]
        };
        for (i, body) in bodies.iter().enumerate() {
            if let Some(m) = message(body) {
                out.push(Sample {
                    origin: format!("{origin} response part {i}"),
                    version,
                    message: m,
                    request_method: v.method.as_deref().map(str::to_owned),
                });
            }
        }
    }
}

fn testdata_samples(out: &mut Vec<Sample>) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/har");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("testdata/har")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "har"))
        .collect();
    files.sort();
    for f in files {
        let entries = har::parse(&std::fs::read(&f).unwrap()).unwrap();
        samples(&f.file_name().unwrap().to_string_lossy(), &entries, out);
    }
}

/// A deliberate difference (docs/conformance.md), or `None` when the two must agree.
fn deliberate(s: &Sample, ours: &[String], theirs: &[String]) -> Option<&'static str> {
    let result_type = s
        .message
        .pointer("/result/resultType")
        .and_then(Value::as_str);
    let has_task = s.message.pointer("/result/task").is_some();
    if ours.is_empty() && (result_type == Some("task") || has_task) {
        return Some("a created task answers a task-augmented request: not the method's result");
    }
    let only_bounds = theirs.iter().all(|e| {
        [
            "must be >=",
            "must be <=",
            "must match format",
            "must NOT have more",
            "must NOT have fewer",
            "must NOT have additional",
        ]
        .iter()
        .any(|k| e.contains(k))
    });
    if ours.is_empty() && only_bounds {
        return Some("formats, numeric and length bounds are not in the table");
    }
    None
}

#[test]
fn shapes_agree_with_the_official_checker() {
    let (Ok(home), Ok(node)) = (
        std::env::var("MCP_VERDICT_CONFORMANCE_HOME"),
        std::env::var("MCP_VERDICT_NODE"),
    ) else {
        eprintln!(
            "skipped: set MCP_VERDICT_CONFORMANCE_HOME and MCP_VERDICT_NODE (.ci/conformance.sh does)"
        );
        return;
    };
    let mut all = Vec::new();
    testdata_samples(&mut all);
    let from_testdata = all.len();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let server = FaultServer::start("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", server.addr());
        for run in demo::run_all(&base, &scenarios::all()).await {
            samples(
                &format!("fault {}", run.scenario.name),
                &run.recorded,
                &mut all,
            );
        }
    });
    assert!(from_testdata > 150, "{from_testdata} testdata messages");
    assert!(all.len() > from_testdata + 100, "{} messages", all.len());

    let oracle = Path::new(env!("CARGO_MANIFEST_DIR")).join(".ci/conformance/oracle.mjs");
    let mut child = Command::new(node)
        .arg(oracle)
        .arg(Path::new(&home).join("schemas"))
        .arg(Path::new(&home).join("node_modules"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("start node");
    let mut input = Vec::new();
    for s in &all {
        let line = json!({"version": s.version.as_str(), "message": s.message,
                          "requestMethod": s.request_method});
        writeln!(input, "{line}").unwrap();
    }
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || stdin.write_all(&input));
    let out = child.wait_with_output().expect("oracle output");
    writer.join().unwrap().expect("oracle input");
    assert!(out.status.success(), "oracle failed");
    let answers: Vec<Vec<String>> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            v["errors"]
                .as_array()
                .unwrap()
                .iter()
                .map(|e| e.as_str().unwrap_or_default().to_owned())
                .collect()
        })
        .collect();
    assert_eq!(answers.len(), all.len(), "one answer per message");

    let (mut agree, mut invalid_both, mut deliberate_count) = (0, 0, 0);
    let mut disagreements = Vec::new();
    for (s, theirs) in all.iter().zip(&answers) {
        let ours: Vec<String> = shapes::check(s.version, &s.message, s.request_method.as_deref())
            .into_iter()
            .map(|v| format!("{} {}", v.rule, v.detail))
            .collect();
        if ours.is_empty() == theirs.is_empty() {
            agree += 1;
            invalid_both += usize::from(!ours.is_empty());
        } else if deliberate(s, &ours, theirs).is_some() {
            deliberate_count += 1;
        } else {
            disagreements.push(format!(
                "{} ({}): ours {ours:?}, official {theirs:?}\n    {}",
                s.origin,
                s.version,
                s.message.to_string().chars().take(300).collect::<String>()
            ));
        }
    }
    eprintln!(
        "shapes vs wire-schema-valid: {} messages, {agree} agree ({invalid_both} invalid for both), \
         {deliberate_count} deliberate differences, {} disagreements",
        all.len(),
        disagreements.len()
    );
    assert!(
        disagreements.is_empty(),
        "{} disagreements:\n{}",
        disagreements.len(),
        disagreements.join("\n")
    );
    assert!(
        invalid_both > 0,
        "the corpus holds invalid messages both see"
    );
}
