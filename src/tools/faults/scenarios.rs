//! The fault scenarios. One table: each entry holds its name, what the server does on its path
//! (the handler), what the client does after the first call, and the verdicts and calls a correct
//! analyzer must give, so a name cannot drift from its behaviour and `--list`, the demo, the
//! tests and docs/faults.md agree. The entries live in `call_faults.rs` (one `tools/call`
//! misbehaves), `method_faults.rs` (a `resources/read` or `prompts/get` misbehaves) and
//! `session_faults.rs` (the fault needs several exchanges); the types they are
//! written in are in `vocab.rs`, the reply builders in `replies.rs`.

// The scenario vocabulary and the two plainest handlers, reachable from the table as before.
pub use super::replies::{json, normal};
pub use super::vocab::{
    Action, CallExpect, ClientStep, Ending, Era, Expect, OnCall, OnDelete, OnGet, Reply, Scenario,
    Step, Then, expect,
};

/// Every scenario, in a stable order: the call-level faults, then the session-level ones.
pub fn all() -> Vec<Scenario> {
    let mut list = super::call_faults::all();
    list.extend(super::method_faults::all());
    list.extend(super::session_faults::all());
    list.extend(super::auth_faults::all());
    list.extend(super::extension_faults::all());
    list
}

/// Looks a scenario up by name.
pub fn find(name: &str) -> Option<Scenario> {
    all().into_iter().find(|s| s.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_paths_and_each_finds_its_own_entry() {
        let list = all();
        let mut names: Vec<&str> = list.iter().map(|s| s.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), list.len(), "a scenario name is used twice");
        for s in &list {
            assert!(
                s.name
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-'),
                "{} is not a plain path segment",
                s.name
            );
            assert_eq!(find(s.name).map(|f| f.about), Some(s.about));
        }
        assert!(find("no-such-scenario").is_none());
        let sessions = list.iter().filter(|s| !s.calls.is_empty()).count();
        assert!(sessions >= 8, "{sessions} scenarios state their calls");
    }
}
