//! The hand-written JSON lines (`Verdict::write_jsonl`, `Call::write_json`: the proxy's `--log`
//! and `--calls`, `replay --format jsonl`) are byte for byte serde_json's of the derived
//! `Serialize`, over every verdict and call of the test captures and over hand-built records
//! with every optional member set and unset, strings that need every escape, and full lists.
//! The key sets are compared too, so a member the writer left out is named in the failure.

use std::fs::File;
use std::path::Path;

use mcp_verdict::replay::{Item, replay_calls, replay_har_seekable};
use mcp_verdict::{Call, Limits, Verdict};
use serde_json::{Value, json};

#[path = "support/captures.rs"]
mod captures;

/// The limits a capture's expectation asks for; none without one.
fn limits_of(har: &Path) -> Limits {
    match std::fs::read_to_string(har.with_extension("expect.json")) {
        Ok(text) => captures::limits_of(&serde_json::from_str(&text).unwrap()),
        Err(_) => Limits::default(),
    }
}

/// Every object in `ours` has the members of the same object in `theirs`, at every depth.
fn same_members(ours: &Value, theirs: &Value, at: &str) {
    match (ours, theirs) {
        (Value::Object(a), Value::Object(b)) => {
            let (ka, kb): (Vec<_>, Vec<_>) = (a.keys().collect(), b.keys().collect());
            assert_eq!(ka, kb, "members of {at}");
            for (k, v) in a {
                same_members(v, &b[k], &format!("{at}.{k}"));
            }
        }
        (Value::Array(a), Value::Array(b)) => {
            assert_eq!(a.len(), b.len(), "length of {at}");
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                same_members(x, y, &format!("{at}[{i}]"));
            }
        }
        _ => {}
    }
}

/// The verdict's line, checked against serde's: returns its members, to count coverage.
fn check_verdict(v: &Verdict, file: &str) -> Vec<(String, bool)> {
    #[derive(serde::Serialize)]
    struct Flattened<'a> {
        file: &'a str,
        #[serde(flatten)]
        verdict: &'a Verdict,
    }
    let mut ours = Vec::new();
    v.write_jsonl(&mut ours, &Verdict::jsonl_start(file));
    let parsed: Value = serde_json::from_slice(&ours).expect("our line is JSON");
    let mut theirs = serde_json::to_value(v).unwrap();
    theirs
        .as_object_mut()
        .unwrap()
        .insert("file".into(), file.into());
    same_members(&parsed, &theirs, "verdict");
    let flattened = serde_json::to_vec(&Flattened { file, verdict: v }).unwrap();
    assert_eq!(
        String::from_utf8(ours).unwrap(),
        String::from_utf8(flattened).unwrap()
    );
    // And the object alone (without the file) is serde_json's of the verdict.
    let mut alone = Vec::new();
    v.write_jsonl(&mut alone, b"{\"file\":0");
    let expected = serde_json::to_vec(v).unwrap();
    assert_eq!(
        String::from_utf8_lossy(&alone[b"{\"file\":0,".len()..]),
        String::from_utf8_lossy(&expected[1..])
    );
    members(&parsed)
}

fn check_call(c: &Call) -> Vec<(String, bool)> {
    let mut ours = b"earlier\n".to_vec();
    c.write_json(&mut ours);
    let mut theirs = b"earlier\n".to_vec();
    serde_json::to_writer(&mut theirs, c).unwrap();
    let parsed: Value = serde_json::from_slice(&ours[8..]).expect("our line is JSON");
    same_members(&parsed, &serde_json::to_value(c).unwrap(), "call");
    assert_eq!(
        String::from_utf8(ours).unwrap(),
        String::from_utf8(theirs).unwrap()
    );
    members(&parsed)
}

/// Each top-level member with whether it was set (not `null`, not `[]`).
fn members(v: &Value) -> Vec<(String, bool)> {
    v.as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| {
            let set = !(v.is_null() || v.as_array().is_some_and(Vec::is_empty));
            (k.clone(), set)
        })
        .collect()
}

#[test]
fn lines_of_the_test_captures_are_serde_jsons() {
    let (mut verdicts, mut calls) = (0, 0);
    for har in captures::cases() {
        let limits = limits_of(&har);
        let file = har.display().to_string();
        let mut each = |item: Item| {
            if let Item::Verdict(v) = item {
                check_verdict(&v, &file);
                verdicts += 1;
            }
        };
        let _ = replay_har_seekable(File::open(&har).unwrap(), limits, &mut each);
        let _ = replay_calls(File::open(&har).unwrap(), limits, &mut |c| {
            check_call(&c);
            calls += 1;
        });
    }
    assert!(
        verdicts > 200 && calls > 100,
        "{verdicts} verdicts, {calls} calls"
    );
}

/// Strings that need every kind of escape, and unicode.
const NASTY: &str = "q\"b\\s\nn\rr\tt\u{8}b\u{c}f\u{0}\u{1}\u{1f}\u{7f}é😀\u{2028}end";

fn full_verdict() -> Value {
    json!({
        "index": u64::MAX, "http_method": "PO\"ST", "kind": "response", "batch_position": 4_000_000_000u32,
        "method": NASTY, "id": {"nested": [1, 2.5, "x\n"]}, "tool": NASTY,
        "protocol_version": "2025-03-26", "protocol_version_source": "initialize",
        "outcome": "LIMIT_EXCEEDED", "layer": "stream", "complete": false, "status": 599,
        "content_type": "text/event-stream; é", "error_code": i64::MIN, "error_message": NASTY,
        "result_type": "ta\tsk", "event_count": 0, "last_event_id": "id \"7\"", "resumable": true,
        "end": "not_captured",
        "retry": {"advice": "do_not_retry", "after_ms": 1500, "reason": NASTY},
        "violations": [
            {"rule": "sse.foreign_id_response", "level": "must", "detail": NASTY, "at": {"offset": 12, "event": 3}},
            {"rule": "call.retry_too_soon", "level": "should", "detail": "", "at": {"offset": 0, "event": null}},
            {"rule": "auth.challenge_missing", "level": "must", "detail": "plain", "at": null}
        ],
        "unterminated": {"bytes": 17, "looked_final": true}, "limit": "max_event_bytes",
        "server_requests": [
            {"method": "sampling/createMessage", "id": 1},
            {"method": NASTY, "id": "s-\"2\""},
            {"method": "ping", "id": -7},
            {"method": "roots/list", "id": null},
            {"method": "elicitation/create", "id": 1.5}
        ],
        "status_origin": "intermediary", "origin_reason": NASTY, "client_error": NASTY,
        "task_status": "input_required"
    })
}

fn empty_verdict() -> Value {
    json!({
        "index": 0, "http_method": null, "kind": null, "batch_position": null, "method": null,
        "id": null, "tool": null, "protocol_version": "2026-07-28",
        "protocol_version_source": "default", "outcome": "CONNECTION_FAILED",
        "layer": "transport", "complete": false, "status": null, "content_type": null,
        "error_code": null, "error_message": null, "result_type": null, "event_count": null,
        "last_event_id": null, "resumable": false, "end": "reset",
        "retry": {"advice": "none", "after_ms": null, "reason": ""},
        "violations": [], "unterminated": null, "limit": null, "server_requests": [],
        "status_origin": null, "origin_reason": null, "client_error": null, "task_status": null
    })
}

fn full_call() -> Value {
    json!({
        "call": u64::MAX, "entries": [0, 5, u64::MAX], "client": NASTY,
        "protocol_version": "2025-11-25", "method": NASTY, "tool": "get_\"weather",
        "post_count": u32::MAX, "http_statuses": [200, null, 503], "ids": [1, "two\n", -3, 4.25, null, [1], {"a": "b"}],
        "error_code": -32603, "result_type": NASTY, "outcome": "DEFERRED", "complete": true,
        "retry_origin": "automatic", "double_execution_risk": true,
        "violations": [
            {"rule": "call.double_execution_risk", "level": "should", "detail": NASTY, "at": null},
            {"rule": "call.reused_id", "level": "must", "detail": "entry 5", "at": null}
        ],
        "status_origin": "server", "origin_reason": NASTY, "auth_step": "token_expired",
        "task_status": "cancelled"
    })
}

fn empty_call() -> Value {
    json!({
        "call": 0, "entries": [], "client": null, "protocol_version": null, "method": null,
        "tool": null, "post_count": 0, "http_statuses": [], "ids": [], "error_code": null,
        "result_type": null, "outcome": "SUCCESS", "complete": false, "retry_origin": null,
        "double_execution_risk": false, "violations": [], "status_origin": null,
        "origin_reason": null, "auth_step": null, "task_status": null
    })
}

/// Hand-built records: one with every member set (and every escape), one with none.
#[test]
fn lines_of_full_and_empty_records_are_serde_jsons() {
    let full: Verdict = serde_json::from_value(full_verdict()).unwrap();
    let set = check_verdict(&full, "runs/a \"b\"\\c\n.har");
    assert!(
        set.iter().all(|(_, s)| *s),
        "unset in the full verdict: {set:?}"
    );
    let empty: Verdict = serde_json::from_value(empty_verdict()).unwrap();
    let set = check_verdict(&empty, "");
    let unset = [
        "index",
        "protocol_version",
        "protocol_version_source",
        "outcome",
        "layer",
    ];
    for (k, s) in set {
        assert!(
            !s || unset.contains(&k.as_str())
                || ["file", "complete", "resumable", "end", "retry"].contains(&k.as_str()),
            "{k} set in the empty verdict"
        );
    }
    // Every outcome, layer, end and advice, one verdict each.
    for (i, outcome) in mcp_verdict::Outcome::ALL.iter().enumerate() {
        let mut v = empty.clone();
        v.outcome = *outcome;
        v.layer = mcp_verdict::Layer::ALL[i % mcp_verdict::Layer::ALL.len()];
        v.end = mcp_verdict::End::ALL[i % mcp_verdict::End::ALL.len()];
        v.retry.advice = mcp_verdict::Advice::ALL[i % mcp_verdict::Advice::ALL.len()];
        check_verdict(&v, "x");
    }

    let full: Call = serde_json::from_value(full_call()).unwrap();
    let set = check_call(&full);
    assert!(
        set.iter().all(|(_, s)| *s),
        "unset in the full call: {set:?}"
    );
    let empty: Call = serde_json::from_value(empty_call()).unwrap();
    check_call(&empty);
}
