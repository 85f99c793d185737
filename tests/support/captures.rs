//! The test captures and the limits their `*.expect.json` ask for (so that `LIMIT_EXCEEDED`
//! verdicts are made), for the test files that replay them. Included by `#[path]`: it needs
//! none of the live servers in `support/mod.rs`.

use std::path::{Path, PathBuf};

use mcp_verdict::Limits;
use serde_json::Value;

/// The generated corpus (`testdata/har`) and the captures recorded from real servers
/// (`testdata/captures`, expectations written by hand), sorted.
pub fn cases() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata");
    let mut files: Vec<PathBuf> = ["har", "captures"]
        .iter()
        .flat_map(|d| std::fs::read_dir(root.join(d)).expect("testdata dir exists"))
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

/// `Limits::default()` with the members of `expect`'s `limits` object set.
pub fn limits_of(expect: &Value) -> Limits {
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
