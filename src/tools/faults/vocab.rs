//! The words of the fault scenarios: what a server does (replies, SSE steps, endings), what a
//! client does next, and the verdicts and calls a correct analyzer must give, with the
//! [`Scenario`] entry that holds them. Types only, so the table (`scenarios.rs`, filled by
//! `call_faults.rs` and `session_faults.rs`), the reply builders (`replies.rs`), the server and
//! the demo can all name them without importing each other.

use serde::Serialize;
use serde_json::{Value, json};

use crate::vocab::call::{AuthStep, RetryOrigin};
use crate::vocab::verdict::{Advice, Layer, Outcome};

/// What a handler is given about the call it answers (`tools/call`, or the scenario's method).
#[derive(Debug, Clone, Copy)]
pub struct Ctx<'a> {
    /// The request id.
    pub id: &'a Value,
    /// The tool's ordinary result (what a correct server would answer).
    pub normal: &'a Value,
    /// The request's progress token (or a stand-in).
    pub token: &'a Value,
    /// The request's params.
    pub params: &'a Value,
    /// `http://host:port` as the client addressed the server (for URLs in replies).
    pub origin: &'a str,
}

impl Ctx<'_> {
    /// The correct response to the request.
    pub fn ok(&self) -> Value {
        json!({"jsonrpc": "2.0", "id": self.id, "result": self.normal})
    }

    /// A JSON-RPC error response to the request.
    pub fn error(&self, code: i64, message: &str) -> Value {
        json!({"jsonrpc": "2.0", "id": self.id, "error": {"code": code, "message": message}})
    }

    /// Progress notification number `n` (of 3) for the request's token.
    pub fn progress(&self, n: u64) -> Value {
        json!({"jsonrpc": "2.0", "method": "notifications/progress",
               "params": {"progressToken": self.token, "progress": n, "total": 3,
                          "message": format!("step {n}")}})
    }
}

/// Which revision a scenario's server speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Era {
    /// Stateless 2026-07-28 (`server/discover`).
    #[serde(rename = "2026-07-28")]
    Stateless,
    /// 2025-11-25 only: `server/discover` is answered like a legacy server (404, no body).
    #[serde(rename = "2025-11-25")]
    Legacy,
}

/// How an SSE body ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Ending {
    /// The last chunk of the chunked body: a clean end of stream.
    Clean,
    /// The connection closes without the last chunk: the client sees a broken body.
    Cut,
    /// A TCP reset (SO_LINGER 0).
    Reset,
    /// Keep-alive comments forever (until the client goes away).
    Hang,
}

/// One step of an SSE body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// Send these bytes as one chunk.
    Send(Vec<u8>),
    /// Send these bytes one per chunk.
    Drip(Vec<u8>),
    /// Wait.
    Sleep(u64),
    /// Wait until the client's answer to this server request id arrives on the same session, at
    /// most this many milliseconds (a server that waits for its elicitation, then gives up).
    AwaitAnswer(&'static str, u64),
}

/// An HTTP reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    /// A complete body with Content-Length.
    Body {
        /// HTTP status.
        status: u16,
        /// Extra headers (Content-Type included).
        headers: Vec<(String, String)>,
        /// The body.
        body: Vec<u8>,
    },
    /// This reply after a delay before its head (a gateway's error page after its timeout).
    After {
        /// Milliseconds before the head.
        ms: u64,
        /// The reply.
        reply: Box<Reply>,
    },
    /// `text/event-stream`, chunked.
    Sse {
        /// Steps in order.
        steps: Vec<Step>,
        /// How it ends.
        ending: Ending,
    },
    /// `text/event-stream` delimited by the close (no chunked framing) and without the
    /// `X-Accel-Buffering: no` every other stream sends: an nginx in front with
    /// `proxy_buffering on` (its default) holds it until a buffer fills or the body ends.
    SseBufferable {
        /// Steps in order.
        steps: Vec<Step>,
        /// How it ends.
        ending: Ending,
    },
}

/// What the server does with a scenario's `tools/call`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// What a correct server does.
    Normal,
    /// This reply.
    Reply(Reply),
    /// This reply; a later `GET` with `Last-Event-ID: key` gets `later` as one SSE chunk.
    Park {
        /// The reply to the POST.
        reply: Reply,
        /// The event id the client resumes from.
        key: String,
        /// What the resumed stream carries.
        later: Vec<u8>,
    },
    /// This reply, then the session expires: later requests with its id get 404 `-32001`.
    Expire(Reply),
    /// This reply to the session's first call on the path; the ordinary answer afterwards.
    First(Reply),
    /// The ordinary answer to the session's first `n` calls on the path; this reply to every
    /// later one (a token that expires after `n` calls).
    AfterCalls(u32, Reply),
}

/// The server's side of a scenario.
pub type OnCall = fn(&Ctx<'_>) -> Action;
/// A `GET` on the scenario's path that resumes nothing (its `Last-Event-ID`, if any).
pub type OnGet = fn(Option<&str>) -> Reply;
/// A `DELETE` on the scenario's path: the reply, and the session stays.
pub type OnDelete = fn() -> Reply;

/// What the client does after the scenario's first `tools/call`, in order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ClientStep {
    /// An MRTR round: the same call with `inputResponses` and `requestState`, a new id.
    Input,
    /// `GET` with the `Last-Event-ID` the first call's stream gave, after its `retry` delay.
    Resume,
    /// `GET` without `Last-Event-ID` where a resumption was due.
    ResumeWithoutId,
    /// A standalone `GET` stream.
    Listen,
    /// `DELETE` of the session.
    Delete,
    /// The same `tools/call` again with a new id, at once.
    Resend,
    /// A new `tools/call` of this tool.
    Call(&'static str),
    /// A response POST answering the server's request with this id, sent as soon as the
    /// request arrives, while the first call's stream is still open (only as the first step).
    AnswerDuring(&'static str),
    /// `tasks/get` of the task the first call's handle named (declaring the tasks extension),
    /// after the `pollIntervalMs` the handle asked for.
    Poll,
}

/// What the verdict of one exchange must be.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Expect {
    /// The outcome.
    pub outcome: Outcome,
    /// The retry advice.
    pub advice: Advice,
    /// HTTP status (None: no head).
    pub status: Option<u16>,
    /// SSE event count (None: not SSE).
    pub event_count: Option<u64>,
    /// JSON-RPC error code.
    pub error_code: Option<i64>,
    /// Rule ids, sorted.
    pub violations: Vec<&'static str>,
    /// Which box made the status (`None`: not checked).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status_origin: Option<crate::verdict::StatusOrigin>,
    /// The layer (the outcome's, unless set: `auth` for a refused 401/403).
    pub layer: Layer,
}

/// What one logical call must be ([`crate::Call`]), from the scenario's first `tools/call` on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CallExpect {
    /// JSON-RPC method (`None`: a GET or DELETE of its own).
    pub method: Option<&'static str>,
    /// Exchanges in the call.
    pub exchanges: usize,
    /// POSTs in the call.
    pub post_count: u32,
    /// HTTP statuses in order.
    pub http_statuses: Vec<Option<u16>>,
    /// The call's outcome.
    pub outcome: Outcome,
    /// Whether it ended complete.
    pub complete: bool,
    /// Its retry origin.
    pub retry_origin: Option<RetryOrigin>,
    /// The double-execution flag.
    pub double_execution_risk: bool,
    /// Call-level rule ids, sorted.
    pub violations: Vec<&'static str>,
    /// The auth step that failed (`None`: none).
    pub auth_step: Option<AuthStep>,
}

/// A step after the first call, with its verdict.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Then {
    /// What the client does.
    pub step: ClientStep,
    /// The verdict of that exchange.
    pub expect: Expect,
}

/// A fault scenario: one entry of the table.
#[derive(Debug, Clone, Serialize)]
pub struct Scenario {
    /// Path segment: the endpoint is `/mcp/<name>`.
    pub name: &'static str,
    /// One line: what goes wrong.
    pub about: &'static str,
    /// Which revision the server speaks on this path.
    pub era: Era,
    /// The method of the client's first call (`tools/call` unless the fault is elsewhere).
    pub method: &'static str,
    /// What that call names: the tool (`tools/call`, `prompts/get`: the prompt; `resources/read`:
    /// the URI).
    pub tool: &'static str,
    /// The verdict of that call.
    pub expect: Expect,
    /// A client deadline (ms) the scenario needs, e.g. for a stream that never ends.
    pub client_deadline_ms: Option<u64>,
    /// A client event-size limit the scenario needs.
    pub client_max_event_bytes: Option<usize>,
    /// The client sends `Authorization: Bearer demo-token` (a scenario whose fault needs a
    /// token that worked before).
    pub bearer: bool,
    /// What the client does next, and each verdict.
    pub then: Vec<Then>,
    /// The logical calls from the first `tools/call` on (empty: not checked).
    pub calls: Vec<CallExpect>,
    /// The verdict of the `tools/list` before the first call (`None`: not checked), for a
    /// fault that shows on the first request after the handshake.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub listing: Option<Expect>,
    /// The server's answer to `tools/call`.
    #[serde(skip)]
    pub on_call: OnCall,
    /// The server's answer to a `GET` that resumes nothing (`None`: 405).
    #[serde(skip)]
    pub on_get: Option<OnGet>,
    /// The server's answer to `DELETE` (`None`: 200, and the session ends).
    #[serde(skip)]
    pub on_delete: Option<OnDelete>,
}

/// An expectation: outcome, advice, status, SSE event count.
pub fn expect(outcome: Outcome, advice: Advice, status: u16, events: Option<u64>) -> Expect {
    Expect {
        outcome,
        advice,
        status: Some(status),
        event_count: events,
        error_code: None,
        status_origin: None,
        violations: Vec::new(),
        layer: outcome.layer(),
    }
}

impl Expect {
    /// With this JSON-RPC error code.
    pub fn code(mut self, code: i64) -> Self {
        self.error_code = Some(code);
        self
    }

    /// With these rule ids (kept sorted).
    pub fn rules(mut self, rules: &[&'static str]) -> Self {
        self.violations = rules.to_vec();
        self.violations.sort_unstable();
        self
    }

    /// With this `status_origin`.
    pub fn made_by(mut self, origin: crate::verdict::StatusOrigin) -> Self {
        self.status_origin = Some(origin);
        self
    }

    /// In this layer rather than the outcome's.
    pub fn layer(mut self, layer: Layer) -> Self {
        self.layer = layer;
        self
    }
}

impl CallExpect {
    /// A call of `exchanges` exchanges, `post_count` of them POSTs, ending in `outcome`.
    pub fn new(
        method: Option<&'static str>,
        statuses: &[u16],
        post_count: u32,
        outcome: Outcome,
    ) -> Self {
        CallExpect {
            method,
            exchanges: statuses.len(),
            post_count,
            http_statuses: statuses.iter().map(|s| Some(*s)).collect(),
            outcome,
            complete: outcome.is_complete(),
            retry_origin: Some(RetryOrigin::None),
            double_execution_risk: false,
            violations: Vec::new(),
            auth_step: None,
        }
    }

    /// With this failed auth step.
    pub fn auth(mut self, step: AuthStep) -> Self {
        self.auth_step = Some(step);
        self
    }

    /// With this retry origin.
    pub fn origin(mut self, origin: RetryOrigin) -> Self {
        self.retry_origin = Some(origin);
        self
    }

    /// With these call-level rule ids (kept sorted); `call.double_execution_risk` sets the flag.
    pub fn rules(mut self, rules: &[&'static str]) -> Self {
        self.violations = rules.to_vec();
        self.violations.sort_unstable();
        self.double_execution_risk = rules.contains(&"call.double_execution_risk");
        self
    }
}

impl Scenario {
    /// A 2026-07-28 scenario whose server answers `tools/call` with `on_call`.
    pub fn new(
        name: &'static str,
        about: &'static str,
        tool: &'static str,
        expect: Expect,
        on_call: OnCall,
    ) -> Self {
        Scenario {
            name,
            about,
            era: Era::Stateless,
            method: "tools/call",
            tool,
            expect,
            client_deadline_ms: None,
            client_max_event_bytes: None,
            bearer: false,
            then: Vec::new(),
            calls: Vec::new(),
            listing: None,
            on_call,
            on_get: None,
            on_delete: None,
        }
    }

    /// The first call is `method` (naming [`Scenario::tool`]: a resource URI, a prompt), not a
    /// tool call: the handler answers that method on the path, every other call is correct.
    pub fn on_method(mut self, method: &'static str) -> Self {
        self.method = method;
        self
    }

    /// The first call's params: the tool's arguments and a progress token, the URI to read, or
    /// the prompt to get.
    pub fn first_params(&self) -> Value {
        match self.method {
            "resources/read" => json!({"uri": self.tool}),
            "prompts/get" => json!({"name": self.tool}),
            _ => json!({"name": self.tool, "arguments": {"message": "hello"},
                        "_meta": {"progressToken": "p-1"}}),
        }
    }

    /// Speaks 2025-11-25 with sessions.
    pub fn legacy(mut self) -> Self {
        self.era = Era::Legacy;
        self
    }

    /// The client sends a Bearer token ([`Scenario::bearer`]).
    pub fn bearer(mut self) -> Self {
        self.bearer = true;
        self
    }

    /// Then the client does `step`, whose verdict must be `expect`.
    pub fn then(mut self, step: ClientStep, expect: Expect) -> Self {
        self.then.push(Then { step, expect });
        self
    }

    /// The calls from the first `tools/call` on must be these.
    pub fn calls(mut self, calls: Vec<CallExpect>) -> Self {
        self.calls = calls;
        self
    }

    /// The `tools/list` before the first call must get this verdict.
    pub fn lists(mut self, expect: Expect) -> Self {
        self.listing = Some(expect);
        self
    }

    /// A `GET` that resumes nothing is answered by `on_get` (instead of 405).
    pub fn gets(mut self, on_get: OnGet) -> Self {
        self.on_get = Some(on_get);
        self
    }

    /// A `DELETE` is answered by `on_delete` (instead of 200 and the end of the session).
    pub fn deletes(mut self, on_delete: OnDelete) -> Self {
        self.on_delete = Some(on_delete);
        self
    }

    /// The revision as a string.
    pub fn era_str(&self) -> &'static str {
        match self.era {
            Era::Stateless => "2026-07-28",
            Era::Legacy => "2025-11-25",
        }
    }

    /// What the server does with a `tools/call` on this path.
    pub fn act(&self, ctx: &Ctx<'_>) -> Action {
        (self.on_call)(ctx)
    }
}
