//! `probe` following a task (2026-07-28 Tasks extension): a `tools/call` answered with
//! `resultType: "task"` is polled with `tasks/get` at the task's `pollIntervalMs` until a
//! terminal status; a task waiting for input gets probe's answers through `tasks/update`. The
//! polls are exchanges of the same logical call (the core joins them by task id), so the call's
//! verdict is the task's end. Past `--task-timeout` probe sends `tasks/cancel` and stops: the
//! spec asks clients to poll until terminal or cancel, and a probe must end.

use std::time::Duration;

use mcp_verdict::Verdict;
use mcp_verdict::adapters::Client;
use serde_json::{Value, json};
use tokio::time::Instant;

use super::{Conduct, Measured, measured};

/// The interval when the task names none (and the floor for one that names less): a busy
/// loop helps no one, and bounds the polls (and verdicts kept) per timeout.
const MIN_POLL: Duration = Duration::from_millis(100);
const DEFAULT_POLL: Duration = Duration::from_secs(1);
/// The longest wait between polls, whatever the server asks.
const MAX_POLL: Duration = Duration::from_secs(60);
/// At most this many polls per task, whatever the timeout.
const MAX_POLLS: usize = 2000;

/// The task a `tools/call` answer hands out: the task object (flat or under `task`) when the
/// result's `resultType` is `"task"`.
pub(super) fn handle(answer: Option<&Value>) -> Option<&Value> {
    let result = answer?.get("result")?;
    if result.get("resultType").and_then(Value::as_str) != Some("task") {
        return None;
    }
    Some(task_of(result))
}

fn task_of(result: &Value) -> &Value {
    match result.get("task") {
        Some(t @ Value::Object(_)) => t,
        _ => result,
    }
}

fn status(task: &Value) -> &str {
    task.get("status").and_then(Value::as_str).unwrap_or("")
}

fn terminal(status: &str) -> bool {
    matches!(status, "completed" | "failed" | "cancelled")
}

/// The polling interval the task asks for, kept within [`MIN_POLL`]..[`MAX_POLL`].
pub(super) fn interval(task: &Value) -> Option<Duration> {
    ["pollIntervalMs", "pollIntervalMilliseconds", "pollInterval"]
        .iter()
        .find_map(|k| task.get(*k).and_then(Value::as_u64))
        .map(|ms| Duration::from_millis(ms).clamp(MIN_POLL, MAX_POLL))
}

/// Follows the task `task` handed out by a `tools/call`, each exchange's verdict into
/// `verdicts`.
pub(super) async fn follow(
    client: &Client,
    task: &Value,
    conduct: Conduct,
    verdicts: &mut Vec<(Verdict, Measured)>,
) {
    let Some(id) = task
        .get("taskId")
        .and_then(Value::as_str)
        .map(str::to_owned)
    else {
        eprintln!("mcp-verdict: a task handle without a taskId: not followed");
        return;
    };
    let deadline = Instant::now() + conduct.task_timeout;
    let mut every = interval(task).unwrap_or(DEFAULT_POLL);
    let mut last = status(task).to_owned();
    let mut polls = 0;
    while !terminal(&last) {
        if polls >= MAX_POLLS || Instant::now() + every > deadline {
            eprintln!(
                "mcp-verdict: task {id:?} still {last:?} after {polls} polls; sending tasks/cancel (--task-timeout)"
            );
            let (rows, _) =
                measured(client, "tasks/cancel", json!({"taskId": id}), &[], conduct).await;
            verdicts.extend(rows);
            return;
        }
        tokio::time::sleep(every).await;
        polls += 1;
        let (rows, answer) =
            measured(client, "tasks/get", json!({"taskId": id}), &[], conduct).await;
        verdicts.extend(rows);
        let Some(result) = answer.as_ref().and_then(|a| a.get("result")) else {
            return; // an error, or no answer: the call ends there
        };
        let task = task_of(result);
        last = status(task).to_owned();
        every = interval(task).unwrap_or(every);
        if last == "input_required"
            && let Some(requests) = task.get("inputRequests").or(result.get("inputRequests"))
        {
            let responses = super::answers::input_responses(requests, conduct.elicit);
            let params = json!({"taskId": id, "inputResponses": responses});
            let (rows, _) = measured(client, "tasks/update", params, &[], conduct).await;
            verdicts.extend(rows);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handles_and_intervals() {
        let flat = json!({"result": {"resultType": "task", "taskId": "t1", "status": "working", "pollIntervalMs": 250}});
        let t = handle(Some(&flat)).expect("a handle");
        assert_eq!(t["taskId"], "t1");
        assert_eq!(interval(t), Some(Duration::from_millis(250)));
        let nested = json!({"result": {"resultType": "task", "task": {"taskId": "t2", "status": "working", "pollIntervalMs": 1}}});
        let t = handle(Some(&nested)).expect("a handle");
        assert_eq!(t["taskId"], "t2");
        assert_eq!(interval(t), Some(MIN_POLL), "a floor against busy polling");
        let done = json!({"result": {"resultType": "complete", "content": []}});
        assert!(handle(Some(&done)).is_none());
        assert!(handle(None).is_none());
        assert!(terminal("completed") && terminal("failed") && terminal("cancelled"));
        assert!(!terminal("working") && !terminal("input_required") && !terminal(""));
    }
}
