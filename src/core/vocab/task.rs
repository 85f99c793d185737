//! Tasks (the `io.modelcontextprotocol/tasks` extension, and 2025-11-25's experimental tasks):
//! the status words a task object carries ([`TaskStatus`]). What one exchange learned of its
//! task is part of the verdict (`TaskReport` in `verdict.rs`); reading a task object is the
//! behaviour module `task.rs`'s job. This leaf names the words only and imports nothing.

wire_names! {
    /// A task's `status`, as a `CreateTaskResult`, a `tasks/get` result or a task status
    /// notification reports it. `working` and `input_required` are not terminal; `completed`,
    /// `failed` and `cancelled` are, and never change again.
    pub enum TaskStatus {
        /// The request is being processed.
        Working => ("working", "the request is being processed (poll again)"),
        /// The server needs input (`inputRequests`), given with `tasks/update`.
        InputRequired => (
            "input_required",
            "the server needs input: answer its inputRequests with tasks/update, then poll again"
        ),
        /// Done: `result` holds what the request would have returned (maybe `isError: true`).
        Completed => (
            "completed",
            "done: result holds the request's own result (a tool error included)"
        ),
        /// A JSON-RPC error ended it: `error` holds it.
        Failed => ("failed", "a JSON-RPC error ended it: error holds it"),
        /// Cancelled before it completed.
        Cancelled => ("cancelled", "cancelled before it completed"),
    }
}

impl TaskStatus {
    /// `completed`, `failed` or `cancelled`: the task will not change again.
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            TaskStatus::Completed | TaskStatus::Failed | TaskStatus::Cancelled
        )
    }

    /// The status a wire name names; `None` for anything else.
    pub fn from_wire(name: &str) -> Option<TaskStatus> {
        TaskStatus::ALL.iter().copied().find(|s| s.as_str() == name)
    }
}
