//! Reading a task object: what a task handle, a `tasks/get` result, a task status notification
//! or a 2025-11-25 `tasks/result` says of its task ([`TaskReport`]), and, for a terminal task,
//! what the call that created it came to ([`TaskEnd`]).
//!
//! Servers differ where the spec leaves room, so every shape the spec texts allow is read: the
//! task members flat in the result (`CreateTaskResult = Result & Task`, `GetTaskResult = Result
//! & DetailedTask`) or under `task` (2025-11-25's `CreateTaskResult {task}`, and servers that
//! nest it in `tasks/get` too); the polling interval as `pollIntervalMs`,
//! `pollIntervalMilliseconds` or `pollInterval`. Only task messages are parsed here, so other
//! exchanges pay nothing.

use serde_json::Value;

use crate::tool_result;
use crate::verdict::{Outcome, TaskEnd, TaskReport};
use crate::version::ProtocolVersion;
use crate::vocab::members::ResultMembers;
use crate::vocab::task::TaskStatus;

/// Methods whose notifications carry a task at its current status: the extension's
/// `notifications/tasks/status` (SEP-2663, and 2025-11-25), and `notifications/tasks` (the
/// name one draft of the extension's overview gives).
pub(crate) const STATUS_NOTIFICATIONS: [&str; 2] =
    ["notifications/tasks/status", "notifications/tasks"];

/// The task a result reports, for a request of `method`: a `tools/call` answered with a task
/// handle (`deferred`), a `tasks/get` result, or a 2025-11-25 `tasks/result` (the request's own
/// result). `None` for anything else, and for a result that is not a JSON object.
pub(crate) fn of_result(
    method: Option<&str>,
    deferred: bool,
    version: ProtocolVersion,
    result: &str,
) -> Option<TaskReport> {
    match method {
        Some("tasks/get") => of_task(&parse(result)?, version),
        Some("tasks/result") => Some(TaskReport {
            end: Some(TaskEnd {
                outcome: tool_outcome(version, result),
                error_code: None,
            }),
            ..TaskReport::default()
        }),
        // A handle has no result or error (the spec says not to use them if present).
        _ if deferred => {
            let value = parse(result)?;
            Some(TaskReport {
                end: None,
                ..of_task(&value, version)?
            })
        }
        _ => None,
    }
}

/// The task a status notification's raw message carries (its `params`); `None` when it has
/// none readable.
pub(crate) fn of_notification(message: &str, version: ProtocolVersion) -> Option<TaskReport> {
    let value = parse(message)?;
    of_task(value.get("params")?, version)
}

fn parse(text: &str) -> Option<Value> {
    serde_json::from_str(text).ok()
}

/// The task in `value` (a result, or a notification's params): its members under `task` when
/// that is an object, else the object's own. A completed task's `result` and a failed one's
/// `error` are looked for among the task's members, then beside them.
fn of_task(value: &Value, version: ProtocolVersion) -> Option<TaskReport> {
    let outer = value.as_object()?;
    let task = match outer.get("task") {
        Some(Value::Object(task)) => task,
        _ => outer,
    };
    let member = |key: &str| task.get(key).or_else(|| outer.get(key));
    let status = task
        .get("status")
        .and_then(Value::as_str)
        .and_then(TaskStatus::from_wire);
    let end = match status {
        Some(TaskStatus::Completed) => member("result").map(|r| TaskEnd {
            outcome: tool_outcome(version, &r.to_string()),
            error_code: None,
        }),
        Some(TaskStatus::Failed) => Some(TaskEnd {
            outcome: Outcome::JsonrpcError,
            error_code: member("error")
                .and_then(|e| e.get("code"))
                .and_then(Value::as_i64),
        }),
        Some(TaskStatus::Cancelled) => Some(TaskEnd {
            outcome: Outcome::Cancelled,
            error_code: None,
        }),
        Some(TaskStatus::Working | TaskStatus::InputRequired) | None => None,
    };
    let poll_interval_ms = ["pollIntervalMs", "pollIntervalMilliseconds", "pollInterval"]
        .iter()
        .find_map(|k| task.get(*k).and_then(Value::as_u64));
    Some(TaskReport {
        id: task
            .get("taskId")
            .and_then(Value::as_str)
            .map(str::to_owned),
        status,
        end,
        poll_interval_ms,
    })
}

/// A task's final result judged as the `tools/call` result it is (the only method the
/// extension lets become a task): `TOOL_SUCCESS`, `TOOL_ERROR`, or `INVALID_TOOL_RESULT`.
fn tool_outcome(version: ProtocolVersion, result: &str) -> Outcome {
    let members = ResultMembers::read(result);
    tool_result::judge_members(Some("tools/call"), version, result, members.as_ref()).outcome
}

#[cfg(test)]
mod tests {
    use super::*;

    const V26: ProtocolVersion = ProtocolVersion::V2026_07_28;

    fn get(result: &str) -> TaskReport {
        of_result(Some("tasks/get"), false, V26, result).expect("a task")
    }

    #[test]
    fn flat_and_nested_tasks_read_alike() {
        let flat = get(
            r#"{"resultType":"complete","taskId":"t1","status":"working","pollIntervalMilliseconds":500}"#,
        );
        let nested = get(
            r#"{"resultType":"complete","task":{"taskId":"t1","status":"working","pollIntervalMs":500}}"#,
        );
        assert_eq!(flat, nested);
        let beside = get(
            r#"{"resultType":"complete","task":{"taskId":"t1","status":"completed"},"result":{"content":[],"isError":true}}"#,
        );
        assert_eq!(beside.end.map(|e| e.outcome), Some(Outcome::ToolError));
        assert_eq!(flat.id.as_deref(), Some("t1"));
        assert_eq!(flat.status, Some(TaskStatus::Working));
        assert_eq!((flat.end, flat.poll_interval_ms), (None, Some(500)));
    }

    #[test]
    fn terminal_states_say_what_the_call_came_to() {
        let end = |r: &str| get(r).end.map(|e| (e.outcome, e.error_code));
        let done = r#"{"taskId":"t","status":"completed","result":{"content":[],"isError":false}}"#;
        assert_eq!(end(done), Some((Outcome::ToolSuccess, None)));
        let tool_error =
            r#"{"taskId":"t","status":"completed","result":{"content":[],"isError":true}}"#;
        assert_eq!(end(tool_error), Some((Outcome::ToolError, None)));
        let broken = r#"{"taskId":"t","status":"completed","result":{"content":"x"}}"#;
        assert_eq!(end(broken), Some((Outcome::InvalidToolResult, None)));
        let failed = r#"{"taskId":"t","status":"failed","error":{"code":-32603,"message":"boom"}}"#;
        assert_eq!(end(failed), Some((Outcome::JsonrpcError, Some(-32603))));
        let cancelled = r#"{"taskId":"t","status":"cancelled"}"#;
        assert_eq!(end(cancelled), Some((Outcome::Cancelled, None)));
        // 2025-11-25: completed, the result fetched apart with tasks/result.
        assert_eq!(end(r#"{"taskId":"t","status":"completed"}"#), None);
        assert_eq!(get(r#"{"taskId":"t","status":"done"}"#).status, None);
    }

    #[test]
    fn a_handle_never_ends_its_task() {
        let r =
            r#"{"resultType":"task","taskId":"t","status":"completed","result":{"content":[]}}"#;
        let handle = of_result(Some("tools/call"), true, V26, r).unwrap();
        assert_eq!(
            (handle.status, handle.end),
            (Some(TaskStatus::Completed), None)
        );
        assert_eq!(of_result(Some("tools/call"), false, V26, r), None);
    }

    #[test]
    fn notifications_and_tasks_result() {
        let n = r#"{"jsonrpc":"2.0","method":"notifications/tasks/status","params":{"taskId":"t","status":"failed","error":{"code":-32000,"message":"x"}}}"#;
        let r = of_notification(n, V26).unwrap();
        assert_eq!(r.status, Some(TaskStatus::Failed));
        assert_eq!(r.end.and_then(|e| e.error_code), Some(-32000));
        let fetched = of_result(
            Some("tasks/result"),
            false,
            ProtocolVersion::V2025_11_25,
            r#"{"content":[],"isError":true}"#,
        )
        .unwrap();
        assert_eq!(
            (fetched.status, fetched.end.map(|e| e.outcome)),
            (None, Some(Outcome::ToolError))
        );
    }
}
