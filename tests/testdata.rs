//! Runs every capture in `testdata/har/` and compares with its `.expect.json`, then checks that
//! the verdicts do not depend on how the bodies were chunked.

use std::path::{Path, PathBuf};

use mcp_verdict::har::{self, Entry};
use mcp_verdict::replay::{Item, judge_entry};
use mcp_verdict::{Limits, Session, Verdict};
use serde_json::{Value, json};

fn cases() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/har");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("testdata/har exists")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "har"))
        .collect();
    files.sort();
    assert!(
        files.len() >= 40,
        "expected at least 40 cases, found {}",
        files.len()
    );
    files
}

fn expectation(har: &Path) -> Value {
    let path = har.with_extension("expect.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

fn limits_of(expect: &Value) -> Limits {
    let mut limits = Limits::default();
    if let Some(l) = expect.get("limits").filter(|l| l.is_object()) {
        if let Some(n) = l.get("max_event_bytes").and_then(Value::as_u64) {
            limits.max_event_bytes = n as usize;
        }
        if let Some(n) = l.get("max_body_bytes").and_then(Value::as_u64) {
            limits.max_body_bytes = n;
        }
        if let Some(n) = l.get("max_events").and_then(Value::as_u64) {
            limits.max_events = n;
        }
    }
    limits
}

/// Replays `entries` with body chunk sizes from `sizes`.
fn replay(entries: &[Entry], limits: Limits, sizes: &mut dyn FnMut() -> usize) -> Vec<Item> {
    let mut session = Session::new(limits);
    entries
        .iter()
        .map(|e| judge_entry(&mut session, e, &mut std::iter::from_fn(|| Some(sizes()))))
        .collect()
}

fn load(har: &Path) -> Vec<Entry> {
    har::parse(&std::fs::read(har).unwrap()).unwrap_or_else(|e| panic!("{}: {e}", har.display()))
}

/// The verdict in the expectation's shape: violations as a sorted list of rule ids.
fn comparable(v: &Verdict) -> Value {
    let mut value = serde_json::to_value(v).unwrap();
    let mut rules: Vec<String> = v.violations.iter().map(|x| x.rule.to_string()).collect();
    rules.sort();
    value["violations"] = json!(rules);
    value
}

#[test]
fn every_case_matches_its_expectation() {
    let mut failures = Vec::new();
    for har in cases() {
        let expect = expectation(&har);
        let items = replay(&load(&har), limits_of(&expect), &mut || usize::MAX);
        let name = har.file_name().unwrap().to_string_lossy().into_owned();
        let verdicts: Vec<&Verdict> = items
            .iter()
            .filter_map(|i| match i {
                Item::Verdict(v) => Some(&**v),
                Item::Skipped(_) => None,
            })
            .collect();
        let skipped: Vec<u64> = items
            .iter()
            .filter_map(|i| match i {
                Item::Skipped(s) => Some(s.index),
                Item::Verdict(_) => None,
            })
            .collect();
        let want_skipped: Vec<u64> =
            serde_json::from_value(expect["skipped"].clone()).unwrap_or_default();
        if skipped != want_skipped {
            failures.push(format!(
                "{name}: skipped {skipped:?}, expected {want_skipped:?}"
            ));
        }
        let wanted = expect["verdicts"].as_array().expect("verdicts array");
        if wanted.len() != verdicts.len() {
            failures.push(format!(
                "{name}: {} verdicts, expected {}",
                verdicts.len(),
                wanted.len()
            ));
            continue;
        }
        for (want, got) in wanted.iter().zip(&verdicts) {
            let got = comparable(got);
            for (key, want_value) in want.as_object().unwrap() {
                let got_value = match (key.as_str(), &got[key]) {
                    // Expectations may state only some members of nested objects.
                    ("retry" | "unterminated", Value::Object(m)) if want_value.is_object() => {
                        let keys = want_value.as_object().unwrap();
                        Value::Object(
                            m.iter()
                                .filter(|(k, _)| keys.contains_key(*k))
                                .map(|(k, v)| (k.clone(), v.clone()))
                                .collect(),
                        )
                    }
                    (_, v) => v.clone(),
                };
                if &got_value != want_value {
                    failures.push(format!(
                        "{name} #{}: {key} = {got_value}, expected {want_value}",
                        want["index"]
                    ));
                }
            }
        }
        let exit = if verdicts.iter().all(|v| v.complete) {
            0
        } else {
            1
        };
        if expect["exit_code"] != json!(exit) {
            failures.push(format!(
                "{name}: exit code {exit}, expected {}",
                expect["exit_code"]
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn verdicts_do_not_depend_on_chunking() {
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut random = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for har in cases() {
        let expect = expectation(&har);
        let entries = load(&har);
        let limits = limits_of(&expect);
        let whole = replay(&entries, limits, &mut || usize::MAX);
        let bytewise = replay(&entries, limits, &mut || 1);
        assert_eq!(whole, bytewise, "{}: byte-by-byte differs", har.display());
        for round in 0..8 {
            let max = [2, 3, 7, 64, 1000][round % 5];
            let chunked = replay(&entries, limits, &mut || (random() % max) as usize + 1);
            assert_eq!(
                whole,
                chunked,
                "{}: random chunking (max {max}) differs",
                har.display()
            );
        }
    }
}
