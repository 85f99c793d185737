#![cfg(feature = "tools")]
//! Tasks over real loopback HTTP: the fault server's correct endpoint creates tasks for the
//! suite's task fixtures, the library's client polls them with `tasks/get` (and answers or
//! cancels), and the logical call the judge makes of the exchanges must end as the task did:
//! each terminal status (completed, completed with a tool error, failed, cancelled) and the
//! `input_required` → `tasks/update` → completed path. Bounded: every task ends within ~1 s,
//! every poll loop within 5 s.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mcp_verdict::adapters::{Client, Handshake};
use mcp_verdict::faults::FaultServer;
use mcp_verdict::replay::calls_of;
use mcp_verdict::{Call, Outcome, TaskStatus, Verdict};
use serde_json::{Value, json};

/// The `_meta` that declares the tasks extension.
fn with_tasks(mut params: Value) -> Value {
    params["_meta"] = json!({"io.modelcontextprotocol/clientCapabilities":
                             {"extensions": {"io.modelcontextprotocol/tasks": {}}}});
    params
}

/// A session with the server: its client, the verdicts so far, and the recording.
struct Session {
    client: Client,
    verdicts: Vec<Verdict>,
    recorded: Arc<Mutex<Vec<mcp_verdict::har::Entry>>>,
}

impl Session {
    async fn open(url: &str) -> Session {
        let recorded = Arc::new(Mutex::new(Vec::new()));
        let client = Client::builder(url)
            .record(recorded.clone())
            .build()
            .expect("client");
        let verdicts = client.handshake(Handshake::Auto).await;
        Session {
            client,
            verdicts,
            recorded,
        }
    }

    async fn send(&mut self, method: &str, params: Value) -> Verdict {
        let v = self
            .client
            .request(method, with_tasks(params))
            .await
            .verdict()
            .await;
        self.verdicts.push(v.clone());
        v
    }

    /// Polls `task` until its status is terminal (or `until` it is `until`).
    async fn poll(&mut self, task: &str, until: Option<TaskStatus>) -> Verdict {
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            tokio::time::sleep(Duration::from_millis(110)).await;
            let v = self.send("tasks/get", json!({"taskId": task})).await;
            let status = v.task_status;
            let done = status.is_some_and(|s| Some(s) == until || s.is_terminal());
            if done || Instant::now() > deadline {
                return v;
            }
        }
    }

    /// The logical call the `tools/call` and its polls make.
    fn call(mut self) -> Call {
        for (i, v) in self.verdicts.iter_mut().enumerate() {
            v.index = i as u64;
        }
        let recorded = self.recorded.lock().expect("recording").clone();
        let calls = calls_of(&self.verdicts, &recorded);
        let mut tool_calls = calls
            .into_iter()
            .filter(|c| c.method.as_deref() == Some("tools/call"));
        let call = tool_calls.next().expect("the tools/call");
        assert!(tool_calls.next().is_none(), "one tools/call only");
        call
    }
}

/// Calls `tool` (which must create a task), then polls it to its end.
async fn run_task(url: &str, tool: &str, args: Value) -> (Session, String) {
    let mut s = Session::open(url).await;
    let created = s
        .send("tools/call", json!({"name": tool, "arguments": args}))
        .await;
    assert_eq!(created.outcome, Outcome::Deferred, "{tool} created no task");
    assert_eq!(created.task_status, Some(TaskStatus::Working));
    let task = created
        .task
        .as_ref()
        .and_then(|t| t.id.clone())
        .expect("a taskId");
    (s, task)
}

fn summary(c: &Call) -> (Outcome, Option<i64>, bool, Option<TaskStatus>) {
    (c.outcome, c.error_code, c.complete, c.task_status)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_terminal_status_ends_the_call_as_the_task_did() {
    let server = FaultServer::start("127.0.0.1:0").await.unwrap();
    let url = server.url(None);

    let (mut s, task) = run_task(&url, "slow_compute", json!({"seconds": 0.2, "label": "t"})).await;
    let end = s.poll(&task, None).await;
    assert_eq!(end.task_status, Some(TaskStatus::Completed));
    let done = (
        Outcome::ToolSuccess,
        None,
        true,
        Some(TaskStatus::Completed),
    );
    assert_eq!(summary(&s.call()), done);

    let (mut s, task) = run_task(&url, "failing_job", json!({})).await;
    let end = s.poll(&task, None).await;
    assert_eq!(end.task_status, Some(TaskStatus::Completed));
    let tool_error = (Outcome::ToolError, None, true, Some(TaskStatus::Completed));
    assert_eq!(summary(&s.call()), tool_error);

    let (mut s, task) = run_task(&url, "protocol_error_job", json!({})).await;
    let end = s.poll(&task, None).await;
    assert_eq!(end.task_status, Some(TaskStatus::Failed));
    let failed = (
        Outcome::JsonrpcError,
        Some(-32603),
        true,
        Some(TaskStatus::Failed),
    );
    assert_eq!(summary(&s.call()), failed);

    let (mut s, task) = run_task(&url, "slow_compute", json!({"seconds": 60})).await;
    let ack = s.send("tasks/cancel", json!({"taskId": task})).await;
    assert!(ack.complete && ack.error_code.is_none());
    let end = s.poll(&task, None).await;
    assert_eq!(end.task_status, Some(TaskStatus::Cancelled));
    let cancelled = s.call();
    assert_eq!(cancelled.task_status, Some(TaskStatus::Cancelled));
    assert!(
        !cancelled.complete,
        "a cancelled task leaves its call incomplete"
    );
    assert_eq!(cancelled.outcome, Outcome::Cancelled);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn input_required_task_resumes_after_tasks_update() {
    let server = FaultServer::start("127.0.0.1:0").await.unwrap();
    let url = server.url(None);
    let (mut s, task) = run_task(&url, "confirm_delete", json!({"filename": "a.txt"})).await;
    let asked = s.poll(&task, Some(TaskStatus::InputRequired)).await;
    assert_eq!(asked.task_status, Some(TaskStatus::InputRequired));
    let answer = json!({"taskId": task,
                        "inputResponses": {"confirm": {"action": "accept", "content": {"confirm": true}}}});
    let ack = s.send("tasks/update", answer).await;
    assert!(ack.complete && ack.error_code.is_none());
    let end = s.poll(&task, None).await;
    assert_eq!(end.task_status, Some(TaskStatus::Completed));
    let done = (
        Outcome::ToolSuccess,
        None,
        true,
        Some(TaskStatus::Completed),
    );
    assert_eq!(summary(&s.call()), done);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_task_leaves_the_call_incomplete() {
    let server = FaultServer::start("127.0.0.1:0").await.unwrap();
    let url = server.url(Some("task-expired"));
    let (mut s, task) = run_task(&url, "lookup", json!({})).await;
    let gone = s.send("tasks/get", json!({"taskId": task})).await;
    assert_eq!(gone.error_code, Some(-32602));
    let call = s.call();
    assert_eq!(call.outcome, Outcome::JsonrpcError);
    assert_eq!(call.error_code, Some(-32602));
    assert!(!call.complete);
    assert_eq!(call.task_status, Some(TaskStatus::Working));
}
