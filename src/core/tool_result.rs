//! The result layer: `resultType` (complete, input_required, task) and, for `tools/call`, the
//! `CallToolResult` shape (`content`, `isError`, `structuredContent`).
//!
//! Only the members that decide the verdict are looked at; `content` items are not parsed.

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::jsonrpc::scan;
use crate::jsonrpc::{present, to_string};
use crate::rules::Rule;
use crate::verdict::Outcome;
use crate::version::ProtocolVersion;
use crate::vocab::members::ResultMembers;
// Vocabulary, defined in the leaf `vocab` and reachable here for the paths that name it so.

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawResult<'a> {
    #[serde(borrow, default, deserialize_with = "present")]
    result_type: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    content: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    is_error: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    structured_content: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    input_requests: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    request_state: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    task: Option<&'a RawValue>,
}

impl<'a> ResultMembers<'a> {
    /// Reads a result object's members: by one pass over its text where the keys have no
    /// escapes, else by serde_json. `None` when serde_json's reading refuses the object (a
    /// member above repeated) or it is not an object.
    pub(crate) fn read(result: &'a str) -> Option<Self> {
        if let Some(read) = Self::scan(result) {
            return read;
        }
        Self::by_serde(result)
    }

    /// serde_json's reading of the members (the scan's fallback, and what it must agree with).
    fn by_serde(result: &'a str) -> Option<Self> {
        let raw = serde_json::from_str::<RawResult<'_>>(result).ok()?;
        let text = |r: Option<&'a RawValue>| r.map(RawValue::get);
        Some(ResultMembers {
            result_type: text(raw.result_type),
            content: text(raw.content),
            is_error: text(raw.is_error),
            structured_content: text(raw.structured_content),
            input_requests: text(raw.input_requests),
            request_state: text(raw.request_state),
            task: text(raw.task),
            scanned: false,
            meta: false,
            plain_content: false,
        })
    }

    /// The scan: `Some` with what serde_json's reading gives (`Some(None)` for a repeated
    /// member), `None` to leave the text to serde_json (an escaped key, anything unusual).
    fn scan(text: &'a str) -> Option<Option<Self>> {
        let b = text.as_bytes();
        let (read, end) = scan::result_members_at(text, scan::ws(b, 0), 1)?;
        (scan::ws(b, end) == b.len()).then_some(read)
    }
}

/// What the result layer decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResultJudgement {
    /// The outcome.
    pub outcome: Outcome,
    /// `resultType` as sent, when it is a string.
    pub result_type: Option<String>,
    /// Broken rules, with details.
    pub violations: Vec<(Rule, String)>,
}

/// Methods that may answer with `input_required` (MRTR).
const MRTR_METHODS: [&str; 3] = ["tools/call", "resources/read", "prompts/get"];

/// Judges a result for `method` under `version`: first that it is an object, then its
/// `resultType`, then (for `tools/call`) the `CallToolResult` members. (The exchange reads the
/// members first, for the shape check too, and calls [`judge_members`].)
#[cfg(test)]
pub fn judge_result(
    method: Option<&str>,
    version: ProtocolVersion,
    result: &str,
) -> ResultJudgement {
    judge_members(
        method,
        version,
        result,
        ResultMembers::read(result).as_ref(),
    )
}

/// [`judge_result`] of a result whose members were read already (`None`: they could not be).
pub(crate) fn judge_members(
    method: Option<&str>,
    version: ProtocolVersion,
    result: &str,
    members: Option<&ResultMembers<'_>>,
) -> ResultJudgement {
    let is_tool = method == Some("tools/call");
    let not_object = |detail: String| {
        let rule = if is_tool {
            Rule::ToolResultNotObject
        } else {
            Rule::ResultNotObject
        };
        invalid(is_tool, rule, detail, None)
    };
    if !result.starts_with('{') {
        return not_object(format!("result is {}", kind_of(result)));
    }
    let Some(raw) = members else {
        return not_object("result object could not be read (duplicate keys?)".into());
    };
    let mut judged = match judge_result_type(method, version, raw) {
        Ok(judged) => judged,
        Err(decided) => return decided,
    };
    // 2025-11-25 CreateTaskResult: a task object instead of the real result.
    if raw.task.is_some_and(|t| t.starts_with('{')) && raw.content.is_none() {
        judged.outcome = Outcome::Deferred;
    } else if is_tool {
        judge_tool_members(version, raw, &mut judged);
    }
    judged
}

/// A judgement of one broken rule: `INVALID_TOOL_RESULT` for a tool, else `INVALID_ENVELOPE`.
fn invalid(
    is_tool: bool,
    rule: Rule,
    detail: String,
    result_type: Option<String>,
) -> ResultJudgement {
    ResultJudgement {
        outcome: if is_tool {
            Outcome::InvalidToolResult
        } else {
            Outcome::InvalidEnvelope
        },
        result_type,
        violations: vec![(rule, detail)],
    }
}

/// `resultType`: `Err` with the final judgement when it decides the outcome (input required, a
/// task, an unknown type), else `Ok` with a complete result's judgement so far (`SUCCESS`).
fn judge_result_type(
    method: Option<&str>,
    version: ProtocolVersion,
    raw: &ResultMembers<'_>,
) -> Result<ResultJudgement, ResultJudgement> {
    let result_type = raw.result_type.and_then(to_string);
    let mut violations = Vec::new();
    match (raw.result_type, result_type.as_deref()) {
        (None, _) => {
            if version.is_stateless() {
                violations.push((
                    Rule::ResultTypeMissing,
                    "result has no resultType; treated as \"complete\"".to_owned(),
                ));
            }
        }
        (Some(_), Some("complete")) => {}
        (Some(_), Some("input_required")) => {
            if !MRTR_METHODS.contains(&method.unwrap_or("")) {
                violations.push((
                    Rule::MrtrNotAllowed,
                    format!(
                        "input_required answers {}",
                        method.unwrap_or("an unknown method")
                    ),
                ));
            }
            if raw.input_requests.is_none() && raw.request_state.is_none() {
                violations.push((
                    Rule::MrtrEmpty,
                    "input_required without inputRequests or requestState".to_owned(),
                ));
            }
            return Err(ResultJudgement {
                outcome: Outcome::InputRequired,
                result_type,
                violations,
            });
        }
        (Some(_), Some("task")) => {
            return Err(ResultJudgement {
                outcome: Outcome::Deferred,
                result_type,
                violations,
            });
        }
        (Some(raw_type), _) => {
            return Err(invalid(
                method == Some("tools/call"),
                Rule::ResultTypeUnknown,
                format!("resultType {} is not recognised", raw_type),
                result_type,
            ));
        }
    }
    Ok(ResultJudgement {
        outcome: Outcome::Success,
        result_type,
        violations,
    })
}

/// The `CallToolResult` members: `content` an array and `isError` a boolean decide between
/// `TOOL_SUCCESS`, `TOOL_ERROR` and `INVALID_TOOL_RESULT`; `structuredContent` that is not an
/// object (on the revisions that say so) is a violation only.
fn judge_tool_members(
    version: ProtocolVersion,
    raw: &ResultMembers<'_>,
    judged: &mut ResultJudgement,
) {
    let mut broken = Vec::new();
    match raw.content {
        Some(c) if c.starts_with('[') => {}
        Some(c) => broken.push((
            Rule::ToolContentNotArray,
            format!("content is {}", kind_of(c)),
        )),
        None => broken.push((Rule::ToolContentNotArray, "content is missing".to_owned())),
    }
    let is_error = match raw.is_error {
        None | Some("false") => false,
        Some("true") => true,
        Some(other) => {
            broken.push((Rule::ToolIsErrorNotBool, format!("isError is {other}")));
            false
        }
    };
    if let Some(sc) = raw.structured_content {
        let object_only = matches!(
            version,
            ProtocolVersion::V2025_06_18 | ProtocolVersion::V2025_11_25
        );
        // A schema violation, but not one that makes the answer unusable (issue 3 keeps the
        // INVALID_TOOL_RESULT list to content, isError and resultType).
        if object_only && !sc.starts_with('{') {
            judged.violations.push((
                Rule::ToolStructuredContentNotObject,
                format!("structuredContent is {}", kind_of(sc)),
            ));
        }
    }
    judged.outcome = if !broken.is_empty() {
        Outcome::InvalidToolResult
    } else if is_error {
        Outcome::ToolError
    } else {
        Outcome::ToolSuccess
    };
    judged.violations.extend(broken);
}

/// A short name for a JSON value's type, for details.
pub(crate) fn kind_of(raw: &str) -> &'static str {
    match raw.as_bytes().first() {
        Some(b'{') => "an object",
        Some(b'[') => "an array",
        Some(b'"') => "a string",
        Some(b't' | b'f') => "a boolean",
        Some(b'n') => "null",
        _ => "a number",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn judge(method: &str, v: ProtocolVersion, json: &str) -> ResultJudgement {
        judge_result(Some(method), v, json)
    }

    const V26: ProtocolVersion = ProtocolVersion::V2026_07_28;
    const V25: ProtocolVersion = ProtocolVersion::V2025_11_25;

    #[test]
    fn absent_result_type_is_complete_and_flagged_only_on_2026() {
        let j = judge("tools/call", V25, r#"{"content":[]}"#);
        assert_eq!((j.outcome, j.violations.len()), (Outcome::ToolSuccess, 0));
        let j = judge("tools/call", V26, r#"{"content":[]}"#);
        assert_eq!(j.outcome, Outcome::ToolSuccess);
        assert_eq!(j.violations[0].0, Rule::ResultTypeMissing);
    }

    #[test]
    fn tool_shapes() {
        let j = judge(
            "tools/call",
            V26,
            r#"{"resultType":"complete","content":[],"isError":true}"#,
        );
        assert_eq!(j.outcome, Outcome::ToolError);
        let j = judge(
            "tools/call",
            V26,
            r#"{"resultType":"complete","content":"x"}"#,
        );
        assert_eq!(j.outcome, Outcome::InvalidToolResult);
        let j = judge(
            "tools/call",
            V26,
            r#"{"resultType":"complete","content":[],"isError":"yes"}"#,
        );
        assert_eq!(j.violations[0].0, Rule::ToolIsErrorNotBool);
        let j = judge("tools/call", V26, r#"{"resultType":"banana","content":[]}"#);
        assert_eq!(j.outcome, Outcome::InvalidToolResult);
        let j = judge("tools/call", V26, r#"[1]"#);
        assert_eq!(j.violations[0].0, Rule::ToolResultNotObject);
        let j = judge(
            "tools/call",
            V25,
            r#"{"content":[],"structuredContent":[1]}"#,
        );
        assert_eq!(j.outcome, Outcome::ToolSuccess);
        assert_eq!(j.violations[0].0, Rule::ToolStructuredContentNotObject);
        let j = judge(
            "tools/call",
            V26,
            r#"{"resultType":"complete","content":[],"structuredContent":[1]}"#,
        );
        assert_eq!(j.outcome, Outcome::ToolSuccess);
    }

    /// The one-pass scan of a result's members reads what serde_json reads, wherever it
    /// reads at all: every named member, repeated, absent, of every JSON type, around other
    /// members.
    #[test]
    fn scanned_members_are_serdes() {
        let names = [
            "resultType",
            "content",
            "isError",
            "structuredContent",
            "inputRequests",
            "requestState",
            "task",
            "_meta",
            "other",
        ];
        let values = [
            "1",
            "-2.5e3",
            "\"s\"",
            "\"e\\u0073c\"",
            "null",
            "true",
            "[]",
            "{}",
            "[{\"type\":\"text\",\"text\":\"x\"}]",
            "{\"a\":{\"b\":[1,{}]}}",
        ];
        let mut texts = Vec::new();
        for (i, a) in names.iter().enumerate() {
            for v in values {
                texts.push(format!(r#"{{"{a}":{v}}}"#));
                texts.push(format!(r#"{{ "{a}" : {v} , "content":[] }}"#));
                let b = names[(i + 1) % names.len()];
                texts.push(format!(r#"{{"{b}":true,"{a}":{v},"{a}":{v}}}"#));
                texts.push(format!(r#"{{"{a}":{v},"x\u0041":1}}"#));
                texts.push(format!("{{\"{a}\":{v}}} \n"));
            }
        }
        texts.extend(["{}".into(), "{ }".into(), "[]".into(), "{\"a\":1}x".into()]);
        let mut scanned = 0;
        for text in &texts {
            let serde = ResultMembers::by_serde(text);
            if let Some(read) = ResultMembers::scan(text) {
                let read = read.map(|m| ResultMembers {
                    scanned: false,
                    meta: false,
                    plain_content: false,
                    ..m
                });
                assert_eq!(read, serde, "{text}");
                scanned += 1;
            }
            let read = ResultMembers::read(text).map(|m| ResultMembers {
                scanned: false,
                meta: false,
                plain_content: false,
                ..m
            });
            assert_eq!(read, serde, "{text}");
        }
        assert!(
            scanned * 10 > texts.len() * 7,
            "{scanned} of {}",
            texts.len()
        );
    }

    #[test]
    fn mrtr_and_tasks() {
        let j = judge(
            "tools/call",
            V26,
            r#"{"resultType":"input_required","requestState":"s"}"#,
        );
        assert_eq!((j.outcome, j.violations.len()), (Outcome::InputRequired, 0));
        let j = judge("tools/list", V26, r#"{"resultType":"input_required"}"#);
        let rules: Vec<Rule> = j.violations.iter().map(|v| v.0).collect();
        assert_eq!(rules, vec![Rule::MrtrNotAllowed, Rule::MrtrEmpty]);
        let j = judge("tools/call", V26, r#"{"resultType":"task","task":{}}"#);
        assert_eq!(j.outcome, Outcome::Deferred);
        let j = judge(
            "tools/call",
            V25,
            r#"{"task":{"taskId":"t","status":"working"}}"#,
        );
        assert_eq!(j.outcome, Outcome::Deferred);
        let j = judge("ping", V26, r#"{"resultType":"complete"}"#);
        assert_eq!(j.outcome, Outcome::Success);
    }
}
