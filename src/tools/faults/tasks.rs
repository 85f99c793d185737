//! The tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663) on the correct endpoint: the
//! task fixture tools the conformance suite calls by name (`greet`, `slow_compute`,
//! `failing_job`, `protocol_error_job`, `confirm_delete`, `multi_input`), a bounded task store,
//! and `tasks/get|update|cancel`. Also the task faults' polls (`task-never-terminal`,
//! `task-expired`, `task-failed`), which need no store: their answer is the fault.
//!
//! A task's status is worked out when it is read, from its plan and the tokio clock, so no
//! background work runs and a task costs only its entry. The store holds at most
//! [`MAX_TASKS`] live tasks; a task is dropped [`TTL_MS`] after its creation (the `ttlMs` it
//! advertises, so it stays readable as long as promised).

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

use serde_json::{Map, Value, json};
use tokio::time::Instant;

use super::replies::text_result;
use crate::adapters::client::rfc3339_with;
use crate::adapters::lock;

/// The extension's id, as declared in capabilities.
pub(crate) const EXTENSION: &str = "io.modelcontextprotocol/tasks";
/// How long a task stays readable after its creation (advertised as `ttlMs`).
pub(crate) const TTL_MS: u64 = 60_000;
/// The polling interval a task asks for (`pollIntervalMs`).
pub(crate) const POLL_MS: u64 = 100;
/// Live tasks at most: a creation past it is refused (-32603), none is evicted early.
pub(crate) const MAX_TASKS: usize = 1024;
/// The longest a `slow_compute` runs, whatever `seconds` asks.
const MAX_RUN_MS: u64 = 600_000;

/// A JSON-RPC answer: HTTP status and body.
pub(crate) type Answer = (u16, Value);

/// A result answer.
pub(crate) fn ok(id: &Value, result: Value) -> Answer {
    (200, json!({"jsonrpc": "2.0", "id": id, "result": result}))
}

/// An error answer (HTTP 200: a JSON-RPC error travels in a successful HTTP response).
pub(crate) fn error(id: &Value, code: i64, message: &str) -> Answer {
    let e = json!({"code": code, "message": message});
    (200, json!({"jsonrpc": "2.0", "id": id, "error": e}))
}

/// -32021: the tool needs the tasks extension the client did not declare.
pub(crate) fn needs_extension(id: &Value) -> Answer {
    let data = json!({"requiredCapabilities": {"extensions": {EXTENSION: {}}}});
    let e = json!({"code": -32021, "message": "Missing required client capability", "data": data});
    (200, json!({"jsonrpc": "2.0", "id": id, "error": e}))
}

/// Whether the request's `_meta` client capabilities declare the tasks extension.
pub(crate) fn declared(params: &Value) -> bool {
    params
        .pointer("/_meta/io.modelcontextprotocol~1clientCapabilities/extensions")
        .and_then(|e| e.get(EXTENSION))
        .is_some()
}

/// What a task does over its life.
#[derive(Debug, Clone)]
pub(crate) enum Plan {
    /// `working` for `ms`, then `completed` with `result` (a `CallToolResult`).
    Runs { ms: u64, result: Value },
    /// `working` for `ms`, then `failed` with this JSON-RPC error.
    Fails { ms: u64, error: Value },
    /// `input_required` while any of these requests is unanswered, then `completed` with
    /// `done` (and the answers' names, if any).
    Asks {
        pending: Vec<(String, Value)>,
        done: String,
    },
}

#[derive(Debug)]
struct Task {
    plan: Plan,
    created: Instant,
    wall: SystemTime,
    /// Set by an answer or a cancel (the status changed then).
    touched: Option<SystemTime>,
    cancelled: bool,
}

/// A task's status now, and when it last changed.
struct View {
    status: &'static str,
    updated: SystemTime,
}

impl Task {
    fn view(&self, now: Instant) -> View {
        let since = |ms: u64| View {
            status: if now.duration_since(self.created) >= Duration::from_millis(ms) {
                "done"
            } else {
                "working"
            },
            updated: self.wall + Duration::from_millis(ms),
        };
        let mut v = match &self.plan {
            Plan::Runs { ms, .. } => match since(*ms) {
                View {
                    status: "done",
                    updated,
                } => View {
                    status: "completed",
                    updated,
                },
                _ => View {
                    status: "working",
                    updated: self.wall,
                },
            },
            Plan::Fails { ms, .. } => match since(*ms) {
                View {
                    status: "done",
                    updated,
                } => View {
                    status: "failed",
                    updated,
                },
                _ => View {
                    status: "working",
                    updated: self.wall,
                },
            },
            Plan::Asks { pending, .. } => View {
                status: if pending.is_empty() {
                    "completed"
                } else {
                    "input_required"
                },
                updated: self.touched.unwrap_or(self.wall),
            },
        };
        if self.cancelled {
            v.status = "cancelled";
        }
        if let Some(t) = self.touched
            && t > v.updated
        {
            v.updated = t;
        }
        v
    }
}

fn terminal(status: &str) -> bool {
    matches!(status, "completed" | "failed" | "cancelled")
}

/// The task members every task message carries.
fn members(id: &str, status: &str, created: SystemTime, updated: SystemTime) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("taskId".into(), json!(id));
    m.insert("status".into(), json!(status));
    m.insert("createdAt".into(), json!(rfc3339_with(created, true)));
    m.insert("lastUpdatedAt".into(), json!(rfc3339_with(updated, true)));
    m.insert("ttlMs".into(), json!(TTL_MS));
    m.insert("pollIntervalMs".into(), json!(POLL_MS));
    m
}

/// A `CreateTaskResult` for a task just created now: `resultType: "task"`, the task flat.
pub(crate) fn handle(task_id: &str) -> Value {
    let now = SystemTime::now();
    let mut m = members(task_id, "working", now, now);
    m.insert("resultType".into(), json!("task"));
    Value::Object(m)
}

/// A `tasks/get` result for a task in `status` (created and updated now), with `extra`
/// members (`result`, `error`).
pub(crate) fn detailed(task_id: &str, status: &str, extra: &[(&str, Value)]) -> Value {
    let now = SystemTime::now();
    let mut m = members(task_id, status, now, now);
    m.insert("resultType".into(), json!("complete"));
    for (k, v) in extra {
        m.insert((*k).into(), v.clone());
    }
    Value::Object(m)
}

/// The live tasks of one server.
#[derive(Debug, Default)]
pub(crate) struct TaskStore {
    tasks: Mutex<HashMap<String, Task>>,
    next: AtomicU64,
}

impl TaskStore {
    /// Creates a task following `plan`: its `CreateTaskResult`, or -32603 when the store is full.
    pub(crate) fn create(&self, id: &Value, plan: Plan) -> Answer {
        self.create_at(id, plan, Instant::now())
    }

    fn create_at(&self, id: &Value, plan: Plan, now: Instant) -> Answer {
        let mut tasks = lock(&self.tasks);
        tasks.retain(|_, t| now.duration_since(t.created) < Duration::from_millis(TTL_MS));
        if tasks.len() >= MAX_TASKS {
            return error(id, -32603, "too many live tasks; try again later");
        }
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        let task_id = format!("task-{n}-{:08x}", nonce(n));
        let task = Task {
            plan,
            created: now,
            wall: SystemTime::now(),
            touched: None,
            cancelled: false,
        };
        let mut result = handle(&task_id);
        result["createdAt"] = json!(rfc3339_with(task.wall, true));
        result["lastUpdatedAt"] = result["createdAt"].clone();
        tasks.insert(task_id, task);
        ok(id, result)
    }

    /// `tasks/get`, `tasks/update` or `tasks/cancel`.
    pub(crate) fn request(&self, method: &str, id: &Value, params: &Value) -> Answer {
        self.request_at(method, id, params, Instant::now())
    }

    /// [`request`](Self::request) as of `now` (the tests' clock).
    fn request_at(&self, method: &str, id: &Value, params: &Value, now: Instant) -> Answer {
        if !declared(params) {
            return needs_extension(id);
        }
        let Some(task_id) = params.get("taskId").and_then(Value::as_str) else {
            return error(id, -32602, "taskId is required");
        };
        let mut tasks = lock(&self.tasks);
        tasks.retain(|_, t| now.duration_since(t.created) < Duration::from_millis(TTL_MS));
        let Some(task) = tasks.get_mut(task_id) else {
            return error(id, -32602, "unknown or expired taskId");
        };
        match method {
            "tasks/get" => ok(id, detail(task_id, task, now)),
            "tasks/update" => match params.get("inputResponses") {
                Some(Value::Object(answers)) => {
                    if let Plan::Asks { pending, .. } = &mut task.plan {
                        let before = pending.len();
                        pending.retain(|(key, _)| !answers.contains_key(key));
                        if pending.len() != before {
                            task.touched = Some(SystemTime::now());
                        }
                    }
                    ok(id, json!({"resultType": "complete"}))
                }
                _ => error(id, -32602, "inputResponses must be an object"),
            },
            _ => {
                if !terminal(task.view(now).status) {
                    task.cancelled = true;
                    task.touched = Some(SystemTime::now());
                }
                ok(id, json!({"resultType": "complete"}))
            }
        }
    }
}

/// The `tasks/get` result: the task at its current status, with its result, error or input
/// requests.
fn detail(task_id: &str, task: &Task, now: Instant) -> Value {
    let view = task.view(now);
    let mut m = members(task_id, view.status, task.wall, view.updated);
    m.insert("resultType".into(), json!("complete"));
    match (&task.plan, view.status) {
        (Plan::Runs { result, .. }, "completed") => {
            m.insert("result".into(), result.clone());
        }
        (Plan::Fails { error, .. }, "failed") => {
            m.insert("error".into(), error.clone());
        }
        (Plan::Asks { pending, .. }, "input_required") => {
            let asks: Map<String, Value> = pending.iter().cloned().collect();
            m.insert("inputRequests".into(), Value::Object(asks));
        }
        (Plan::Asks { done, .. }, "completed") => {
            m.insert("result".into(), text_result(done, false, true));
        }
        _ => {}
    }
    Value::Object(m)
}

/// A per-task suffix, so task ids are not guessable from the counter alone.
fn nonce(n: u64) -> u64 {
    use std::hash::BuildHasher;
    static KEY: std::sync::OnceLock<std::collections::hash_map::RandomState> =
        std::sync::OnceLock::new();
    KEY.get_or_init(Default::default).hash_one(n) & 0xffff_ffff
}

/// An `elicitation/create` input request asking for one string or boolean property.
pub(crate) fn elicit(message: &str, property: &str, kind: &str) -> Value {
    json!({"method": "elicitation/create", "params": {"message": message, "requestedSchema": {
        "type": "object", "properties": {property: {"type": kind}}, "required": [property]}}})
}

/// The task fixtures' `tools/list` entries. Only `greet` is annotated (read-only); the others
/// run long or ask for input, so they keep MCP's defaults (destructive) and `probe --all-tools`
/// leaves them alone unless told `--include-destructive`.
pub(crate) fn tools() -> impl Iterator<Item = Value> {
    let name = json!({"type": "object", "properties": {"name": {"type": "string"}}});
    let compute = json!({"type": "object", "properties": {
        "seconds": {"type": "number"}, "label": {"type": "string"}}});
    let file = json!({"type": "object", "properties": {"filename": {"type": "string"}}});
    let none = json!({"type": "object", "properties": {}});
    [
        (
            "greet",
            "Task fixture: returns Hello, {name}! at once.",
            name,
            true,
        ),
        (
            "slow_compute",
            "Task fixture: a task that works `seconds` s, then completes.",
            compute,
            false,
        ),
        (
            "failing_job",
            "Task fixture (task required): completes with a tool error after ~1 s.",
            none.clone(),
            false,
        ),
        (
            "protocol_error_job",
            "Task fixture (task required): the task fails with a JSON-RPC error.",
            none.clone(),
            false,
        ),
        (
            "confirm_delete",
            "Task fixture: asks for a confirmation (input_required), then completes.",
            file,
            false,
        ),
        (
            "multi_input",
            "Task fixture: asks two questions at once, completes when both are answered.",
            none,
            false,
        ),
    ]
    .into_iter()
    .map(|(name, description, schema, read_only)| {
        let mut tool = json!({"name": name, "description": description, "inputSchema": schema});
        if read_only {
            tool["annotations"] = json!({"readOnlyHint": true});
        }
        tool
    })
}

/// A `tools/call` of a task fixture: `None` when `tool` is not one.
pub(crate) fn call(store: &TaskStore, tool: &str, id: &Value, params: &Value) -> Option<Answer> {
    let args = params.get("arguments").cloned().unwrap_or(json!({}));
    let text = |t: String| text_result(&t, false, true);
    let tasks = declared(params);
    Some(match tool {
        "greet" => {
            let who = args.get("name").and_then(Value::as_str).unwrap_or("World");
            ok(id, text(format!("Hello, {who}!")))
        }
        "slow_compute" => {
            let label = args
                .get("label")
                .and_then(Value::as_str)
                .unwrap_or("compute");
            let result = text(format!("computed {label}"));
            let secs = args.get("seconds").and_then(Value::as_f64).unwrap_or(1.0);
            // Without the extension the call runs synchronously (the fixture returns at once).
            if !tasks {
                return Some(ok(id, result));
            }
            let ms = (secs.max(0.0) * 1000.0).min(MAX_RUN_MS as f64) as u64;
            store.create(id, Plan::Runs { ms, result })
        }
        "failing_job" if tasks => {
            let result = text_result("the job failed on purpose", true, true);
            store.create(id, Plan::Runs { ms: 1000, result })
        }
        "protocol_error_job" if tasks => {
            let error = json!({"code": -32603, "message": "the job crashed (on purpose)"});
            store.create(id, Plan::Fails { ms: 300, error })
        }
        "failing_job" | "protocol_error_job" => needs_extension(id),
        "confirm_delete" | "multi_input" if !tasks => needs_extension(id),
        "confirm_delete" => {
            let file = args
                .get("filename")
                .and_then(Value::as_str)
                .unwrap_or("file");
            let ask = elicit(&format!("Delete {file}?"), "confirm", "boolean");
            let plan = Plan::Asks {
                pending: vec![("confirm".into(), ask)],
                done: format!("deleted {file}"),
            };
            store.create(id, plan)
        }
        "multi_input" => {
            let plan = Plan::Asks {
                pending: vec![
                    ("first".into(), elicit("First name?", "name", "string")),
                    ("second".into(), elicit("Confirm?", "confirm", "boolean")),
                ],
                done: "both inputs received".into(),
            };
            store.create(id, plan)
        }
        _ => return None,
    })
}

/// The poll of a task fault's path (`None`: not a task fault, or not a task method).
pub(crate) fn fault_poll(
    scenario: &str,
    method: &str,
    id: &Value,
    params: &Value,
) -> Option<Answer> {
    if !method.starts_with("tasks/") {
        return None;
    }
    let task_id = params.get("taskId").and_then(Value::as_str).unwrap_or("");
    match (scenario, method) {
        ("task-never-terminal", "tasks/get") => Some(ok(id, detailed(task_id, "working", &[]))),
        ("task-expired", _) => Some(error(id, -32602, "unknown or expired taskId")),
        ("task-failed", "tasks/get") => {
            let e = json!({"code": -32603, "message": "the task's execution failed"});
            Some(ok(id, detailed(task_id, "failed", &[("error", e)])))
        }
        ("task-never-terminal" | "task-failed", _) => {
            Some(ok(id, json!({"resultType": "complete"})))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_tasks(mut params: Value) -> Value {
        params["_meta"] = json!({"io.modelcontextprotocol/clientCapabilities":
                                 {"extensions": {EXTENSION: {}}}});
        params
    }

    fn task_id(answer: &Answer) -> String {
        answer.1["result"]["taskId"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    }

    #[tokio::test]
    async fn a_task_works_then_completes_and_expires_after_its_ttl() {
        let store = TaskStore::default();
        let params = with_tasks(json!({"arguments": {"seconds": 2, "label": "x"}}));
        let created = call(&store, "slow_compute", &json!(1), &params).expect("fixture");
        assert_eq!(created.1["result"]["resultType"], "task");
        let get = with_tasks(json!({"taskId": task_id(&created)}));
        let working = store.request("tasks/get", &json!(2), &get);
        assert_eq!(working.1["result"]["status"], "working");
        assert!(working.1["result"].get("result").is_none());
        let later = Instant::now() + Duration::from_secs(2);
        let done = store.request_at("tasks/get", &json!(3), &get, later);
        assert_eq!(done.1["result"]["status"], "completed");
        assert_eq!(
            done.1["result"]["result"]["content"][0]["text"],
            "computed x"
        );
        let expired = later + Duration::from_millis(TTL_MS);
        let gone = store.request_at("tasks/get", &json!(4), &get, expired);
        assert_eq!(gone.1["error"]["code"], -32602);
    }

    #[tokio::test]
    async fn cancel_settles_a_running_task_and_leaves_a_terminal_one() {
        let store = TaskStore::default();
        let params = with_tasks(json!({"arguments": {"seconds": 60}}));
        let created = call(&store, "slow_compute", &json!(1), &params).expect("fixture");
        let get = with_tasks(json!({"taskId": task_id(&created)}));
        let ack = store.request("tasks/cancel", &json!(2), &get);
        assert_eq!(ack.1["result"], json!({"resultType": "complete"}));
        let after = store.request("tasks/get", &json!(3), &get);
        assert_eq!(after.1["result"]["status"], "cancelled");
        let failing = call(&store, "protocol_error_job", &json!(4), &params).expect("fixture");
        let get = with_tasks(json!({"taskId": task_id(&failing)}));
        let later = Instant::now() + Duration::from_secs(1);
        store.request_at("tasks/cancel", &json!(5), &get, later);
        let failed = store.request_at("tasks/get", &json!(6), &get, later);
        assert_eq!(failed.1["result"]["status"], "failed");
        assert_eq!(failed.1["result"]["error"]["code"], -32603);
    }

    #[tokio::test]
    async fn input_is_asked_until_every_key_is_answered() {
        let store = TaskStore::default();
        let created =
            call(&store, "multi_input", &json!(1), &with_tasks(json!({}))).expect("fixture");
        let get = with_tasks(json!({"taskId": task_id(&created)}));
        let asked = store.request("tasks/get", &json!(2), &get);
        assert_eq!(asked.1["result"]["status"], "input_required");
        let mut update = get.clone();
        update["inputResponses"] = json!({"first": {"action": "accept", "content": {"name": "A"}}});
        store.request("tasks/update", &json!(3), &update);
        let half = store.request("tasks/get", &json!(4), &get);
        assert_eq!(half.1["result"]["status"], "input_required");
        let keys: Vec<&String> = half.1["result"]["inputRequests"]
            .as_object()
            .expect("map")
            .keys()
            .collect();
        assert_eq!(keys, ["second"]);
        update["inputResponses"] =
            json!({"second": {"action": "accept", "content": {"confirm": true}}});
        store.request("tasks/update", &json!(5), &update);
        let done = store.request("tasks/get", &json!(6), &get);
        assert_eq!(done.1["result"]["status"], "completed");
    }

    #[tokio::test]
    async fn the_extension_gates_tasks_and_the_store_is_bounded() {
        let store = TaskStore::default();
        let plain = json!({"arguments": {"seconds": 60}});
        let sync = call(&store, "slow_compute", &json!(1), &plain).expect("fixture");
        assert_eq!(sync.1["result"]["resultType"], "complete");
        let refused = call(&store, "failing_job", &json!(2), &plain).expect("fixture");
        assert_eq!(refused.1["error"]["code"], -32021);
        let get = store.request("tasks/get", &json!(3), &json!({"taskId": "x"}));
        assert_eq!(get.1["error"]["code"], -32021);
        let params = with_tasks(plain);
        for n in 0..MAX_TASKS {
            let a = call(&store, "slow_compute", &json!(n), &params).expect("fixture");
            assert_eq!(a.1["result"]["resultType"], "task");
        }
        let full = call(&store, "slow_compute", &json!(0), &params).expect("fixture");
        assert_eq!(full.1["error"]["code"], -32603);
        assert!(call(&store, "echo", &json!(0), &params).is_none());
    }
}
