//! The fixture tools the official conformance suite calls by fixed name
//! (`@modelcontextprotocol/conformance`: `tools-call-simple-text`, `tools-call-error`), so that
//! the fault server's correct endpoint passes the suite and every fault is measured against a
//! correct baseline. Kept apart from the fault scenarios: they never misbehave.

use serde_json::{Value, json};

/// One fixture: name, description, and the text it answers with (`is_error`: as a tool error).
struct Fixture {
    name: &'static str,
    description: &'static str,
    text: &'static str,
    is_error: bool,
}

const FIXTURES: &[Fixture] = &[
    Fixture {
        name: "test_simple_text",
        description: "Conformance fixture: returns a simple text result.",
        text: "This is a simple text response for testing.",
        is_error: false,
    },
    Fixture {
        name: "test_error_handling",
        description: "Conformance fixture: always returns a tool error (isError).",
        text: "This tool intentionally returns an error for testing",
        is_error: true,
    },
];

/// The fixtures' `tools/list` entries: no arguments, read-only (so a retry is safe).
pub(crate) fn tools() -> impl Iterator<Item = Value> {
    FIXTURES.iter().map(|f| {
        json!({"name": f.name, "description": f.description,
               "inputSchema": {"type": "object", "properties": {}},
               "annotations": {"readOnlyHint": true}})
    })
}

/// The fixture's `CallToolResult`, or `None` when `name` is not a fixture.
pub(crate) fn call(name: &str, stateless: bool) -> Option<Value> {
    let f = FIXTURES.iter().find(|f| f.name == name)?;
    Some(super::replies::text_result(f.text, f.is_error, stateless))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixtures_are_listed_and_answer_as_the_suite_expects() {
        let names: Vec<String> = tools()
            .map(|t| t["name"].as_str().unwrap_or_default().to_owned())
            .collect();
        assert_eq!(names, ["test_simple_text", "test_error_handling"]);
        let ok = call("test_simple_text", false).expect("fixture");
        assert_eq!(ok["content"][0]["type"], "text");
        assert_eq!(ok["isError"], false);
        let err = call("test_error_handling", true).expect("fixture");
        assert_eq!(err["isError"], true);
        assert_eq!(err["resultType"], "complete");
        assert!(call("echo", false).is_none());
    }
}
