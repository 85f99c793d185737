//! Runs every capture in `testdata/har/` and compares with its `.expect.json`, then checks that
//! the verdicts do not depend on how the bodies were chunked.

use std::path::Path;

use mcp_verdict::har::{self, Entry};
use mcp_verdict::replay::{Item, group_entry, judge_entry_rows};
use mcp_verdict::{Call, Calls, Driver, Limits, Verdict};
use serde_json::{Value, json};

#[path = "support/captures.rs"]
mod captures;
use captures::{cases, limits_of};

fn expectation(har: &Path) -> Value {
    let path = har.with_extension("expect.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

/// Replays `entries` with body chunk sizes from `sizes`.
fn replay(entries: &[Entry], limits: Limits, sizes: &mut dyn FnMut() -> usize) -> Vec<Item> {
    let mut session = Driver::new(limits);
    let mut items = Vec::new();
    for e in entries {
        let chunks = &mut std::iter::from_fn(|| Some(sizes()));
        judge_entry_rows(&mut session, e, chunks, &mut |item| items.push(item));
    }
    items
}

/// Replays `entries` into logical calls, with body chunk sizes from `sizes`.
fn replay_calls(entries: &[Entry], limits: Limits, sizes: &mut dyn FnMut() -> usize) -> Vec<Call> {
    let mut session = Driver::new(limits);
    let mut calls = Calls::new();
    let mut out = Vec::new();
    for e in entries {
        let chunks = &mut std::iter::from_fn(|| Some(sizes()));
        group_entry(&mut session, &mut calls, e, chunks, &mut |c| out.push(c));
    }
    calls.finish(&mut |c| out.push(c));
    out
}

/// The expected calls of a case, if it states them (`<case>.calls.json`).
fn expected_calls(har: &Path) -> Option<Vec<Value>> {
    let path = har.with_extension("calls.json");
    let text = std::fs::read_to_string(&path).ok()?;
    let doc: Value = serde_json::from_str(&text).unwrap();
    Some(doc["calls"].as_array().expect("calls array").clone())
}

#[test]
fn every_stated_call_grouping_matches() {
    let mut failures = Vec::new();
    let mut stated = 0;
    for har in cases() {
        let Some(wanted) = expected_calls(&har) else {
            continue;
        };
        stated += 1;
        let name = har.file_name().unwrap().to_string_lossy().into_owned();
        let calls = replay_calls(&load(&har), limits_of(&expectation(&har)), &mut || {
            usize::MAX
        });
        if !same_count(&name, "calls", calls.len(), wanted.len(), &mut failures) {
            continue;
        }
        for (want, got) in wanted.iter().zip(&calls) {
            let mut got = serde_json::to_value(got).unwrap();
            let mut rules: Vec<Value> = got["violations"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v["rule"].clone())
                .collect();
            rules.sort_by_key(|r| r.to_string());
            got["violations"] = Value::Array(rules);
            let at = format!("{name} call {}", want["call"]);
            compare_members(&at, want, &got, &[], &mut failures);
        }
    }
    assert!(stated >= 8, "only {stated} cases state their calls");
    assert_no_mismatch(&failures);
}

#[test]
fn calls_do_not_depend_on_chunking() {
    for har in cases() {
        let expect = expectation(&har);
        let entries = load(&har);
        let limits = limits_of(&expect);
        let whole = replay_calls(&entries, limits, &mut || usize::MAX);
        let bytewise = replay_calls(&entries, limits, &mut || 1);
        assert_eq!(
            whole,
            bytewise,
            "{}: calls differ byte by byte",
            har.display()
        );
        let mut n = 0usize;
        let odd = replay_calls(&entries, limits, &mut || {
            n += 1;
            [3, 1, 7, 64][n % 4]
        });
        assert_eq!(whole, odd, "{}: calls differ in odd chunks", har.display());
    }
}

fn assert_no_mismatch(failures: &[String]) {
    assert!(
        failures.is_empty(),
        "{} mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Records a mismatch when `got` rows were produced where the case expects `wanted`.
fn same_count(
    name: &str,
    what: &str,
    got: usize,
    wanted: usize,
    failures: &mut Vec<String>,
) -> bool {
    if got != wanted {
        failures.push(format!("{name}: {got} {what}, expected {wanted}"));
    }
    got == wanted
}

/// Compares every member `want` states with the same member of `got`. For the members named in
/// `nested`, an expectation may state only some members of the nested object.
fn compare_members(
    at: &str,
    want: &Value,
    got: &Value,
    nested: &[&str],
    failures: &mut Vec<String>,
) {
    for (key, want_value) in want.as_object().unwrap() {
        let got_value = match &got[key] {
            Value::Object(m) if nested.contains(&key.as_str()) && want_value.is_object() => {
                let keys = want_value.as_object().unwrap();
                Value::Object(
                    m.iter()
                        .filter(|(k, _)| keys.contains_key(*k))
                        .map(|(k, v)| (k.clone(), v.clone()))
                        .collect(),
                )
            }
            v => v.clone(),
        };
        if &got_value != want_value {
            failures.push(format!("{at}: {key} = {got_value}, expected {want_value}"));
        }
    }
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
        if !same_count(
            &name,
            "verdicts",
            verdicts.len(),
            wanted.len(),
            &mut failures,
        ) {
            continue;
        }
        for (want, got) in wanted.iter().zip(&verdicts) {
            let at = format!("{name} #{}", want["index"]);
            let nested = ["retry", "unterminated"];
            compare_members(&at, want, &comparable(got), &nested, &mut failures);
        }
        // The exit code's rule: every exchange complete, or forgiven (a refused handshake
        // retried, such as the legacy-server probe).
        let mut tally = mcp_verdict::replay::Tally::default();
        for v in &verdicts {
            tally.add(v);
        }
        let exit = if tally.all_complete() { 0 } else { 1 };
        if expect["exit_code"] != json!(exit) {
            failures.push(format!(
                "{name}: exit code {exit}, expected {}",
                expect["exit_code"]
            ));
        }
    }
    assert_no_mismatch(&failures);
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

/// Every rule in the catalogue is exercised by at least one case: some `.expect.json` lists a
/// violation of it. A new rule needs a case in `testdata/gen_har.py` (then run it).
#[test]
fn every_rule_has_a_case() {
    // A rule is covered when a stated verdict (`<case>.expect.json`) or a stated call
    // (`<case>.calls.json`, for the call-level rules of `replay --calls`) lists it.
    fn collect(value: &Value, seen: &mut std::collections::BTreeSet<String>) {
        match value {
            Value::Object(map) => {
                for (key, v) in map {
                    if key == "violations" {
                        for rule in v.as_array().into_iter().flatten() {
                            let id = rule.as_str().or_else(|| rule["rule"].as_str());
                            seen.insert(id.unwrap_or_default().to_owned());
                        }
                    } else {
                        collect(v, seen);
                    }
                }
            }
            Value::Array(items) => items.iter().for_each(|v| collect(v, seen)),
            _ => {}
        }
    }
    let mut seen = std::collections::BTreeSet::new();
    for har in cases() {
        collect(&expectation(&har)["verdicts"], &mut seen);
        if let Some(calls) = expected_calls(&har) {
            calls.iter().for_each(|c| collect(c, &mut seen));
        }
    }
    let missing: Vec<&str> = mcp_verdict::Rule::ALL
        .iter()
        .map(|r| r.id())
        .filter(|id| !seen.contains(*id))
        .collect();
    assert!(
        missing.is_empty(),
        "rules without a testdata case in an expect.json or calls.json (add one to \
         testdata/gen_har.py, then run `python3 testdata/gen_har.py`): {missing:?}"
    );
}
