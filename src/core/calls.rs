//! Logical calls: the exchanges that are one operation, grouped the way a person reading the
//! capture would group them, with the per-call record of the seed article (client, version,
//! method, POST count, statuses, ids, error code, result type, outcome, retry origin) and the
//! retry audit (call-level violations). How exchanges join a call: [`Calls`]; the record:
//! [`Call`].

use std::collections::VecDeque;

use serde_json::Value;

use crate::call_facts::{self, CallFacts};
use crate::cancel::{self, Pending, REQUEST_CANCELLED};
use crate::headers::Known;
use crate::meta::Meta;
use crate::request::Headers;
use crate::rules::Rule;
use crate::verdict::{Advice, Outcome, Verdict, Violation};
/// The call record is vocabulary (a leaf); reachable here, with the grouping that makes it.
pub use crate::vocab::call::{Call, RetryOrigin};
use crate::vocab::kinds::ExchangeKind;

/// A re-send within this many milliseconds of the previous attempt's end is `automatic` (a
/// client's retry loop); later it is `manual` (a person or an agent decided again). SDK retry
/// loops back off for seconds, not minutes; ten seconds separates them from a human's second try
/// in the captures we have seen, and it is a guess.
pub const AUTOMATIC_RETRY_MS: u64 = 10_000;

/// At most this many calls are kept open for later exchanges to join (memory stays bounded on
/// any capture); the oldest is emitted when one more begins.
pub const OPEN_CALLS: usize = 256;

/// A call holds at most this many exchanges; the next one that would join starts a call of its
/// own (a client polling one task forever cannot grow one record without bound).
pub const MAX_CALL_EXCHANGES: usize = 4096;

/// Server requests a call remembers while waiting for the client's answers.
const MAX_WAITING: usize = 256;

/// What the grouping needs from one judged exchange.
#[derive(Debug, Clone, Copy)]
pub struct ExchangeFacts<'a> {
    /// Its verdict.
    pub verdict: &'a Verdict,
    /// Request headers (for `Last-Event-ID`).
    pub headers: &'a Headers,
    /// Request body as sent (the params are compared for re-sends).
    pub body: &'a [u8],
    /// When the request started, in milliseconds on any fixed clock.
    pub started_ms: Option<u64>,
    /// How long the exchange took, in milliseconds.
    pub duration_ms: Option<u64>,
}

/// A call still open for later exchanges, with what grouping compares.
#[derive(Debug)]
struct Open {
    call: Call,
    /// Hash of method and params without ids, progress tokens and `_meta`.
    fingerprint: Option<u64>,
    /// The final exchange's retry advice and its delay.
    last_advice: Advice,
    last_after_ms: Option<u64>,
    last_end_ms: Option<u64>,
    /// The stream can be resumed from this event id.
    resume_from: Option<String>,
    /// Server requests not answered yet.
    waiting: Vec<Value>,
    /// A task was created; the task id once a poll named it.
    task: Option<Option<String>>,
    /// The latest exchange got `input_required`.
    wants_input: bool,
    /// The task's latest `pollIntervalMs` (from the handle or a poll), for the poll audit.
    poll_interval_ms: Option<u64>,
}

impl Open {
    /// The call got a complete answer that asks for nothing more, or a task to follow (a
    /// handle is an answer too: a second identical call is a second task). A complete answer
    /// advised `retry` (a RateLimited error: refused before dispatch) is not settled: sending
    /// the request again is what the server asked for, not a resend after the answer.
    fn settled(&self) -> bool {
        (self.call.complete && self.last_advice != Advice::Retry) || self.task.is_some()
    }
}

/// A poll of a task sooner than this share of its `pollIntervalMs` (in percent) after the
/// previous poll ended is `call.retry_too_soon`: 10 % of tolerance for clock granularity and
/// timers that fire early.
pub const POLL_TOLERANCE_PERCENT: u64 = 90;

/// Groups exchanges into calls, fed in capture order.
///
/// Grouping is a guess from traffic, never a fact the protocol states. An exchange joins an
/// earlier call when it is:
/// - the client's answer (response POST) to a server request seen on that call's stream;
/// - a `GET` with `Last-Event-ID` resuming that call's stream;
/// - an MRTR round (`inputResponses`/`requestState`) after that call got `input_required`;
/// - `tasks/get`/`tasks/update`/`tasks/cancel` (or 2025-11-25 `tasks/result`) for the task
///   that call created (its `taskId`, from the handle or the first poll that named one); the
///   task then decides the call's outcome ([`Call`] says how);
/// - the same method with the same params (ids, progress tokens and `_meta` aside) re-sent after
///   that call failed (or was refused as rate limited: a complete answer advised `retry`);
/// - a `notifications/cancelled` naming one of that call's request ids: the call is `CANCELLED`
///   unless it already had its answer (see [`Call`]).
///
/// Anything else starts a call of its own. A `tools/call` re-sent after the same call got a
/// complete answer is a new call, flagged `call.resent_after_complete` when it came within
/// [`AUTOMATIC_RETRY_MS`] (or the delay is unknown); one re-sent while the first call's task
/// still runs is a new call (a second task) flagged `call.double_execution_risk`. Calls are emitted in the order they began, once no
/// later exchange can join them (at the end, or when more than [`OPEN_CALLS`] are open).
#[derive(Debug, Default)]
pub struct Calls {
    open: VecDeque<Open>,
    next: u64,
    client: Option<String>,
    /// Cancels seen before the exchange of the request they name.
    cancels: Pending,
}

/// An earlier call the same `tools/call` repeats, though it cannot join it.
struct Echo {
    call: u64,
    outcome: Outcome,
    /// Its task still runs: the repeat starts a second one.
    task_runs: bool,
    /// The ids it sent.
    ids: Vec<Value>,
}

/// How an exchange relates to an open call.
struct Join {
    at: usize,
    origin: Option<RetryOrigin>,
    resent: bool,
}

impl Calls {
    /// An empty grouping.
    pub fn new() -> Self {
        Calls::default()
    }

    /// Adds one judged exchange; calls that can no longer grow go to `emit`. Returns the number
    /// ([`Call::call`]) of the call it joined or began, which is still open: a live exporter can
    /// name an exchange's call before the call closes.
    pub fn add(&mut self, x: ExchangeFacts<'_>, emit: &mut dyn FnMut(Call)) -> u64 {
        self.add_read(x, None, emit)
    }

    /// [`Calls::add`] with the request's `_meta` as the exchange's judging read it (the proxy
    /// has it at hand): the grouping then does not walk that text again.
    pub(crate) fn add_read(
        &mut self,
        x: ExchangeFacts<'_>,
        meta: Option<&Meta>,
        emit: &mut dyn FnMut(Call),
    ) -> u64 {
        let v = x.verdict;
        let facts = call_facts::read(x.body, v.batch_position, meta);
        // Most exchanges name the client the last one named: kept, not copied again.
        if let Some(client) = facts.as_ref().and_then(|f| f.client(v.method.as_deref()))
            && self.client.as_deref() != Some(client)
        {
            self.client = Some(client.to_owned());
        }
        let kind = v.kind.unwrap_or(ExchangeKind::Request);
        // Read once: the join, the echo and a new call's record all compare it.
        let print = facts.as_ref().and_then(|f| f.fingerprint);
        if let Some(id) = cancel::cancelled_id(v.method.as_deref(), facts.as_ref()) {
            match self
                .open
                .iter_mut()
                .rev()
                .find(|o| o.call.ids.contains(&id))
            {
                Some(open) if open.call.entries.len() < MAX_CALL_EXCHANGES => {
                    take_cancel(open, x);
                    return open.call.call;
                }
                // A call at its cap is cancelled all the same; the notification is a call of
                // its own.
                Some(open) => cancel_call(open),
                None => self.cancels.add(id),
            }
        }
        let join = self
            .find(x, kind, facts.as_ref(), print)
            .filter(|j| self.open[j.at].call.entries.len() < MAX_CALL_EXCHANGES);
        let at = match &join {
            Some(j) => j.at,
            None => {
                let echo = (kind == ExchangeKind::Request)
                    .then(|| self.echo(x, print))
                    .flatten();
                let mut open = self.start(v, print);
                if let Some(echo) = echo {
                    flag_echo(&mut open, v, &echo);
                }
                self.open.push_back(open);
                self.open.len() - 1
            }
        };
        let open = &mut self.open[at];
        if let Some(j) = &join {
            audit(open, x, j);
            if j.origin != Some(RetryOrigin::None) {
                open.call.retry_origin = j.origin;
            }
        }
        apply(open, x, kind, facts.as_ref());
        if kind == ExchangeKind::Request && v.id.as_ref().is_some_and(|id| self.cancels.take(id)) {
            cancel_call(open);
        }
        let joined = open.call.call;
        while self.open.len() > OPEN_CALLS {
            if let Some(oldest) = self.open.pop_front() {
                emit(close(oldest));
            }
        }
        joined
    }

    /// Emits every call still open.
    pub fn finish(&mut self, emit: &mut dyn FnMut(Call)) {
        while let Some(open) = self.open.pop_front() {
            emit(close(open));
        }
    }

    fn start(&mut self, v: &Verdict, print: Option<u64>) -> Open {
        let call = Call {
            call: self.next,
            entries: Vec::new(),
            client: self.client.clone(),
            protocol_version: None,
            method: v.method.clone(),
            tool: v.tool.clone(),
            post_count: 0,
            http_statuses: Vec::new(),
            ids: Vec::new(),
            error_code: None,
            result_type: None,
            outcome: v.outcome,
            complete: v.complete,
            retry_origin: Some(RetryOrigin::None),
            double_execution_risk: false,
            violations: Vec::new(),
            status_origin: None,
            origin_reason: None,
            auth_step: None,
            task_status: None,
        };
        self.next += 1;
        Open {
            call,
            fingerprint: print,
            last_advice: Advice::None,
            last_after_ms: None,
            last_end_ms: None,
            resume_from: None,
            waiting: Vec::new(),
            task: None,
            wants_input: false,
            poll_interval_ms: None,
        }
    }

    /// The open call an unjoined `tools/call` repeats (same tool, same arguments) after it got
    /// its answer or a task: worth a flag when it came within [`AUTOMATIC_RETRY_MS`] of that
    /// answer (or the delay is unknown), or whenever the first call's task still runs.
    fn echo(&self, x: ExchangeFacts<'_>, print: Option<u64>) -> Option<Echo> {
        if x.verdict.method.as_deref() != Some("tools/call") {
            return None;
        }
        let print = print?;
        let o = self.open.iter().rev().find(|o| {
            o.fingerprint == Some(print) && o.call.method.as_deref() == Some("tools/call")
        })?;
        let task_runs = o.task.is_some() && o.call.outcome == Outcome::Deferred;
        let late = matches!((o.last_end_ms, x.started_ms),
            (Some(end), Some(start)) if start.saturating_sub(end) > AUTOMATIC_RETRY_MS);
        (task_runs || (o.call.complete && !late)).then(|| Echo {
            call: o.call.call,
            outcome: o.call.outcome,
            task_runs,
            ids: o.call.ids.clone(),
        })
    }

    /// The open call this exchange belongs to, most recent first.
    fn find(
        &self,
        x: ExchangeFacts<'_>,
        kind: ExchangeKind,
        facts: Option<&CallFacts>,
        print: Option<u64>,
    ) -> Option<Join> {
        let v = x.verdict;
        let join = |at, origin, resent| Some(Join { at, origin, resent });
        let recent = self.open.iter().enumerate().rev();
        match kind {
            ExchangeKind::Response => {
                let id = v.id.as_ref()?;
                let at = recent.clone().find(|(_, o)| o.waiting.contains(id))?.0;
                join(at, Some(RetryOrigin::None), false)
            }
            // A GET without Last-Event-ID while a stream waits to be resumed: the client meant
            // to resume (a guess; it may also just listen) and left out the header.
            ExchangeKind::Listen => {
                let at = recent
                    .clone()
                    .find(|(_, o)| o.resume_from.is_some() && !o.call.complete)?
                    .0;
                join(at, Some(RetryOrigin::Resume), false)
            }
            ExchangeKind::Resume if v.method.is_some() => {
                let last = x.headers.known(Known::LastEventId)?;
                let at = recent
                    .clone()
                    .find(|(_, o)| o.resume_from.as_deref() == Some(last))?
                    .0;
                join(at, Some(RetryOrigin::Resume), false)
            }
            ExchangeKind::Request => {
                let method = v.method.as_deref()?;
                if facts.is_some_and(|f| f.mrtr) {
                    let at = recent
                        .clone()
                        .find(|(_, o)| o.wants_input && o.call.method.as_deref() == Some(method));
                    if let Some((at, _)) = at {
                        return join(at, Some(RetryOrigin::Input), false);
                    }
                }
                if is_task_method(method) {
                    let task_id = facts.and_then(|f| f.task_id.as_deref());
                    let named = recent.clone().find(
                        |(_, o)| matches!((&o.task, task_id), (Some(Some(t)), Some(id)) if t == id),
                    );
                    let unnamed = || recent.clone().find(|(_, o)| matches!(o.task, Some(None)));
                    if let Some((at, _)) = named.or_else(unnamed) {
                        return join(at, Some(RetryOrigin::Poll), false);
                    }
                }
                let print = print?;
                let (at, o) = recent.clone().find(|(_, o)| {
                    o.fingerprint == Some(print) && o.call.method.as_deref() == Some(method)
                })?;
                let delay = match (o.last_end_ms, x.started_ms) {
                    (Some(end), Some(start)) => Some(start.saturating_sub(end)),
                    _ => None,
                };
                let quick = delay.map(|d| d <= AUTOMATIC_RETRY_MS);
                // A call that got its answer, or a task to follow (a handle is an answer too: a
                // second identical call is a second task), is not retried by a later one: that
                // one is a call of its own ([`Calls::echo`] flags it). A rate-limited answer
                // asked for the re-send, so it does not settle the call.
                if o.settled() {
                    return None;
                }
                let origin = quick.map(|q| {
                    if q {
                        RetryOrigin::Automatic
                    } else {
                        RetryOrigin::Manual
                    }
                });
                join(at, origin, true)
            }
            _ => None,
        }
    }
}

/// The retry audit for an exchange joining `open`, before it is applied.
fn audit(open: &mut Open, x: ExchangeFacts<'_>, join: &Join) {
    let v = x.verdict;
    let mut flag = |rule: Rule, detail: String| {
        if !open.call.violations.iter().any(|w| w.rule == rule.id()) {
            open.call
                .violations
                .push(Violation::new(rule, detail, None));
        }
    };
    if join.resent
        && open.last_advice == Advice::DoNotRetry
        && v.method.as_deref() == Some("tools/call")
    {
        open.call.double_execution_risk = true;
        flag(
            Rule::CallDoubleExecutionRisk,
            format!(
                "entry {} re-sends tools/call {} after {}, which may have run it",
                v.index,
                v.tool.as_deref().unwrap_or("?"),
                open.call.outcome
            ),
        );
    }
    if (matches!(join.origin, Some(RetryOrigin::Input)) || join.resent)
        && let Some(id) = &v.id
        && open.call.ids.contains(id)
    {
        flag(
            Rule::CallReusedId,
            format!("entry {} reuses id {id} of an earlier attempt", v.index),
        );
    }
    if v.kind == Some(ExchangeKind::Listen) {
        flag(
            Rule::CallResumeWithoutLastEventId,
            format!(
                "entry {} resumes without Last-Event-ID; the stream gave event id {}",
                v.index,
                open.resume_from.as_deref().unwrap_or("?")
            ),
        );
    }
    if (join.resent || join.origin == Some(RetryOrigin::Resume))
        && let (Some(wait), Some(end), Some(start)) =
            (open.last_after_ms, open.last_end_ms, x.started_ms)
        && start.saturating_sub(end) < wait
    {
        flag(
            Rule::CallRetryTooSoon,
            format!(
                "entry {} came {} ms after the previous attempt; the server asked for {wait} ms",
                v.index,
                start.saturating_sub(end)
            ),
        );
    }
    if join.origin == Some(RetryOrigin::Poll)
        && v.method.as_deref() == Some("tasks/get")
        && let (Some(every), Some(end), Some(start)) =
            (open.poll_interval_ms, open.last_end_ms, x.started_ms)
        && start.saturating_sub(end) * 100 < every * POLL_TOLERANCE_PERCENT
    {
        flag(
            Rule::CallRetryTooSoon,
            format!(
                "entry {} polled the task {} ms after the previous exchange; the task asked for {every} ms",
                v.index,
                start.saturating_sub(end)
            ),
        );
    }
}

/// Flags a new call that repeats `echo` (see [`Calls::echo`]).
fn flag_echo(open: &mut Open, v: &Verdict, echo: &Echo) {
    let tool = v.tool.as_deref().unwrap_or("?");
    let (rule, detail) = if echo.task_runs {
        open.call.double_execution_risk = true;
        (
            Rule::CallDoubleExecutionRisk,
            detail(&[
                Part::Text("entry "),
                Part::Number(v.index),
                Part::Text(" re-sends tools/call "),
                Part::Text(tool),
                Part::Text(" while call "),
                Part::Number(echo.call),
                Part::Text("'s task runs: two tasks now run"),
            ]),
        )
    } else {
        (
            Rule::CallResentAfterComplete,
            detail(&[
                Part::Text("entry "),
                Part::Number(v.index),
                Part::Text(" re-sends tools/call "),
                Part::Text(tool),
                Part::Text(", which got "),
                Part::Text(echo.outcome.as_str()),
                Part::Text(" in call "),
                Part::Number(echo.call),
            ]),
        )
    };
    open.call
        .violations
        .push(Violation::new(rule, detail, None));
    if let Some(id) = v.id.as_ref().filter(|id| echo.ids.contains(id)) {
        open.call.violations.push(Violation::new(
            Rule::CallReusedId,
            format!("entry {} reuses id {id} of call {}", v.index, echo.call),
            None,
        ));
    }
}

/// A piece of a violation's detail.
enum Part<'a> {
    Text(&'a str),
    Number(u64),
}

/// A violation's detail put together without the formatting machinery: a soak of one tool
/// re-sends the same call all the time, and `format!` was a tenth of grouping each exchange.
fn detail(parts: &[Part<'_>]) -> String {
    let mut out = Vec::with_capacity(96);
    for part in parts {
        match part {
            Part::Text(t) => out.extend_from_slice(t.as_bytes()),
            Part::Number(n) => crate::vocab::decimal(&mut out, *n),
        }
    }
    // Text and ASCII digits: valid UTF-8.
    String::from_utf8(out).unwrap_or_default()
}

/// A `notifications/cancelled` naming one of the call's requests joins it and cancels it.
fn take_cancel(open: &mut Open, x: ExchangeFacts<'_>) {
    let v = x.verdict;
    open.call.entries.push(v.index);
    if v.http_method.as_deref().is_none_or(|m| m == "POST") {
        open.call.post_count += 1;
    }
    open.call.http_statuses.push(v.status);
    cancel_call(open);
}

/// The client cancelled the call's request. Without an answer yet, the call is `CANCELLED`,
/// incomplete: the stream the server or client then drops is the cancel, not `STREAM_ABORTED`,
/// and nothing is left to resume. An answer that came first stands (a cancel racing the
/// response; the client should ignore a late one), as does a `-32800` answer (already a
/// complete cancellation). A call that became a task is not cancelled by the notification:
/// only `tasks/cancel` cancels a task (2025-11-25 says so), so its task still decides the call.
fn cancel_call(open: &mut Open) {
    let call = &mut open.call;
    if call.complete || call.error_code == Some(REQUEST_CANCELLED) || open.task.is_some() {
        return;
    }
    call.outcome = Outcome::Cancelled;
    call.complete = false;
    call.error_code = None;
    open.resume_from = None;
    open.last_advice = Advice::None;
    open.last_after_ms = None;
    open.wants_input = false;
}

/// Adds the exchange's facts to its call.
fn apply(open: &mut Open, x: ExchangeFacts<'_>, kind: ExchangeKind, facts: Option<&CallFacts>) {
    let v = x.verdict;
    let call = &mut open.call;
    call.entries.push(v.index);
    // A finding about the path rather than one body: the call carries it too (once).
    for w in v.violations.iter().filter(|w| {
        matches!(
            w.rule,
            Rule::SseBuffered | Rule::SseIdleCut | Rule::SessionRequestAfterDelete
        )
    }) {
        if !call.violations.iter().any(|c| c.rule == w.rule) {
            let detail = format!("entry {}: {}", v.index, w.detail);
            call.violations.push(Violation::new(w.rule, detail, None));
        }
    }
    if v.http_method.as_deref().is_none_or(|m| m == "POST") {
        call.post_count += 1;
    }
    call.http_statuses.push(v.status);
    if let Some(step) = crate::vocab::call::AuthStep::of(v) {
        call.auth_step = Some(step);
    }
    if kind == ExchangeKind::Request
        && let Some(id) = &v.id
    {
        call.ids.push(id.clone());
    }
    if call.method.is_none() {
        call.method = v.method.clone();
        call.tool = v.tool.clone();
    }
    for sr in &v.server_requests {
        if open.waiting.len() == MAX_WAITING {
            open.waiting.remove(0);
        }
        open.waiting.push(sr.id.clone());
    }
    if kind == ExchangeKind::Response {
        if let Some(id) = &v.id {
            open.waiting.retain(|w| w != id);
        }
        if call.entries.len() > 1 {
            return; // the answer to a server request does not decide the call
        }
    }
    if kind == ExchangeKind::Listen && call.entries.len() > 1 {
        // A resumption without Last-Event-ID cannot get the answer: the call stays as it was,
        // and is not resumed twice.
        open.resume_from = None;
        return;
    }
    if v.task_status.is_some() {
        call.task_status = v.task_status;
    }
    if let Some(every) = v.task.as_ref().and_then(|t| t.poll_interval_ms) {
        open.poll_interval_ms = Some(every);
    }
    let following = open.task.is_some() && v.method.as_deref().is_some_and(is_task_method);
    if following && matches!(v.method.as_deref(), Some("tasks/update" | "tasks/cancel")) {
        // An acknowledgement: the task, not the ack, says how the call ends.
        return;
    }
    call.protocol_version = Some(v.protocol_version);
    call.error_code = v.error_code;
    call.result_type = v.result_type.clone();
    call.outcome = v.outcome;
    call.complete = v.complete;
    if following {
        follow_task(call, v);
    } else if v.outcome == Outcome::Deferred {
        call.complete = false; // the handle is not the answer
    } else if v.error_code == Some(REQUEST_CANCELLED) {
        // The server stopped the request because the client cancelled it, and said so: a
        // complete cancellation (the answer to the cancel came), not a plain JSON-RPC error.
        call.outcome = Outcome::Cancelled;
        call.complete = true;
    }
    call.status_origin = v.status_origin;
    call.origin_reason.clone_from(&v.origin_reason);
    open.last_advice = v.retry.advice;
    open.last_after_ms = v.retry.after_ms;
    open.last_end_ms = x.started_ms.map(|s| s + x.duration_ms.unwrap_or(0));
    open.resume_from = v.last_event_id.clone().filter(|_| v.resumable);
    open.wants_input = v.outcome == Outcome::InputRequired;
    if v.outcome == Outcome::Deferred && open.task.is_none() {
        open.task = Some(v.task.as_ref().and_then(|t| t.id.clone()));
    }
    if let (Some(task), Some(id)) = (open.task.as_mut(), facts.and_then(|f| f.task_id.as_deref()))
        && task.is_none()
    {
        *task = Some(id.to_owned());
    }
}

/// The methods that follow a task by its `taskId`.
fn is_task_method(method: &str) -> bool {
    matches!(
        method,
        "tasks/get" | "tasks/update" | "tasks/cancel" | "tasks/result"
    )
}

/// What a poll (`tasks/get`, `tasks/result`) of the call's task makes of the call, over the
/// poll's own verdict (already in `call`): the terminal task's end; a task still running is
/// `DEFERRED`, incomplete. A poll that failed keeps its own outcome, incomplete (the task's
/// state is unknown then): a JSON-RPC error (-32602: the task is unknown or expired), an HTTP
/// error, a broken stream.
fn follow_task(call: &mut Call, v: &Verdict) {
    if let Some(end) = v.task.as_ref().and_then(|t| t.end) {
        call.outcome = end.outcome;
        call.error_code = end.error_code;
        call.complete = end.outcome.is_complete();
    } else if v.outcome == Outcome::JsonrpcError {
        // A 2025-11-25 `tasks/result` error is the task's own answer (its execution failed); a
        // poll's error says nothing of the task's end: -32602 is a task unknown or expired,
        // anything else a poll that failed.
        call.complete = v.method.as_deref() == Some("tasks/result");
    } else if v.complete {
        // Answered, the task not over (or a completed task's result not fetched yet).
        call.outcome = Outcome::Deferred;
        call.error_code = None;
        call.complete = false;
    }
}

fn close(mut open: Open) -> Call {
    for id in &open.waiting {
        open.call.violations.push(Violation::new(
            Rule::CallServerRequestUnanswered,
            format!("server request {id} was never answered"),
            None,
        ));
    }
    open.call
}

/// Milliseconds since 1970 of an RFC 3339 time (`startedDateTime` of a HAR entry).
pub fn rfc3339_ms(text: &str) -> Option<u64> {
    let b = text.as_bytes();
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        std::str::from_utf8(b.get(r)?).ok()?.parse().ok()
    };
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (h, mi, s) = (num(11..13)?, num(14..16)?, num(17..19)?);
    let mut i = 19;
    let mut millis = 0i64;
    if b.get(i) == Some(&b'.') {
        i += 1;
        let start = i;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        let frac = &text[start..i];
        let digits: String = frac.chars().chain("000".chars()).take(3).collect();
        millis = digits.parse().ok()?;
    }
    let offset_min = match b.get(i) {
        Some(b'Z' | b'z') => 0,
        Some(&sign @ (b'+' | b'-')) => {
            let (oh, om) = (num(i + 1..i + 3)?, num(i + 4..i + 6)?);
            let m = oh * 60 + om;
            if sign == b'+' { m } else { -m }
        }
        _ => return None,
    };
    // Days from civil (Howard Hinnant's algorithm).
    let y = if mo <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (mo + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let secs = days * 86_400 + h * 3600 + mi * 60 + s - offset_min * 60;
    u64::try_from(secs * 1000 + millis).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_stops_growing_at_its_cap() {
        use crate::{End, Headers, Request, ResponseHead, Session};
        let mut session = Session::default();
        let mut calls = Calls::new();
        let mut out = Vec::new();
        let body = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{}}}"#;
        let headers = Headers::new();
        let mut joined = Vec::new();
        for _ in 0..MAX_CALL_EXCHANGES + 1 {
            let mut ex = session.begin(Request::new("POST", headers.clone(), body));
            ex.on_head(ResponseHead {
                status: 503,
                headers: Headers::new(),
            });
            let v = session.finish(&mut ex, End::Eof);
            let facts = ExchangeFacts {
                verdict: &v,
                headers: &headers,
                body,
                started_ms: None,
                duration_ms: None,
            };
            joined.push(calls.add(facts, &mut |c| out.push(c)));
        }
        calls.finish(&mut |c| out.push(c));
        let sizes: Vec<usize> = out.iter().map(|c| c.entries.len()).collect();
        assert_eq!(sizes, vec![MAX_CALL_EXCHANGES, 1]);
        // `add` names the call each exchange went to, as the calls later say.
        assert!(
            joined[..MAX_CALL_EXCHANGES]
                .iter()
                .all(|n| *n == out[0].call)
        );
        assert_eq!(joined[MAX_CALL_EXCHANGES], out[1].call);
        assert_ne!(out[0].call, out[1].call);
        assert_eq!(
            out[0].retry_origin, None,
            "re-sends without timestamps: origin unknown"
        );
    }

    /// Following a task: a 2026-07-28 conversation of (request, response) bodies, each reply
    /// JSON unless it starts with `event:` (SSE, cut off without its end when it ends in `!`).
    mod tasks {
        use super::super::*;
        use crate::vocab::task::TaskStatus;
        use crate::{End, Headers, Request, ResponseHead, Session};

        fn call(id: u32) -> String {
            format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"render","arguments":{{}}}}}}"#
            )
        }

        fn task_req(id: u32, method: &str, task: &str) -> String {
            format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{{"taskId":"{task}"}}}}"#
            )
        }

        fn ok(id: u32, result: &str) -> String {
            format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#)
        }

        fn handle(id: u32, task: &str) -> (String, String) {
            let r = format!(
                r#"{{"resultType":"task","taskId":"{task}","status":"working","pollIntervalMs":500}}"#
            );
            (call(id), ok(id, &r))
        }

        fn poll(id: u32, task: &str, rest: &str) -> (String, String) {
            let r = format!(r#"{{"resultType":"complete","taskId":"{task}",{rest}}}"#);
            (task_req(id, "tasks/get", task), ok(id, &r))
        }

        fn judge(conversation: &[(String, String)]) -> (Vec<Verdict>, Vec<Call>) {
            let mut session = Session::default();
            let headers = Headers::from_iter([("MCP-Protocol-Version", "2026-07-28")]);
            let (mut calls, mut verdicts, mut out) = (Calls::new(), Vec::new(), Vec::new());
            for (request, reply) in conversation {
                let mut ex =
                    session.begin(Request::new("POST", headers.clone(), request.as_bytes()));
                let sse = reply.starts_with("event:");
                let media = if sse {
                    "text/event-stream"
                } else {
                    "application/json"
                };
                ex.on_head(ResponseHead {
                    status: 200,
                    headers: Headers::from_iter([("Content-Type", media)]),
                });
                let cut = reply.ends_with('!');
                ex.feed(reply.trim_end_matches('!').as_bytes());
                let v = session.finish(&mut ex, if cut { End::Reset } else { End::Eof });
                let facts = ExchangeFacts {
                    verdict: &v,
                    headers: &headers,
                    body: request.as_bytes(),
                    started_ms: None,
                    duration_ms: None,
                };
                calls.add(facts, &mut |c| out.push(c));
                verdicts.push(v);
            }
            calls.finish(&mut |c| out.push(c));
            (verdicts, out)
        }

        /// The one call of a conversation, as (outcome, error_code, complete, task_status).
        fn ended(
            conversation: &[(String, String)],
        ) -> (Outcome, Option<i64>, bool, Option<TaskStatus>) {
            let (_, calls) = judge(conversation);
            assert_eq!(calls.len(), 1, "{calls:#?}");
            let c = &calls[0];
            assert_eq!(c.entries.len(), conversation.len(), "{c:#?}");
            assert_eq!(c.post_count as usize, conversation.len());
            assert_eq!(c.method.as_deref(), Some("tools/call"));
            (c.outcome, c.error_code, c.complete, c.task_status)
        }

        #[test]
        fn completed_task_gives_its_tool_success() {
            let conversation = [
                handle(1, "t1"),
                poll(2, "t1", r#""status":"working""#),
                poll(
                    3,
                    "t1",
                    r#""status":"completed","result":{"content":[],"isError":false}"#,
                ),
            ];
            let (verdicts, calls) = judge(&conversation);
            assert_eq!(verdicts[0].outcome, Outcome::Deferred);
            assert_eq!(verdicts[0].retry.advice, Advice::Poll);
            assert_eq!(verdicts[0].retry.after_ms, Some(500));
            assert_eq!(verdicts[0].task_status, Some(TaskStatus::Working));
            // Each poll is judged alone: a successful tasks/get, with the status it reported.
            assert_eq!(verdicts[2].outcome, Outcome::Success);
            assert_eq!(verdicts[2].task_status, Some(TaskStatus::Completed));
            assert_eq!(calls[0].retry_origin, Some(RetryOrigin::Poll));
            assert_eq!(calls[0].ids.len(), 3);
            assert_eq!(
                ended(&conversation),
                (
                    Outcome::ToolSuccess,
                    None,
                    true,
                    Some(TaskStatus::Completed)
                )
            );
        }

        #[test]
        fn completed_task_with_is_error_is_a_tool_error() {
            let conversation = [
                handle(1, "t1"),
                poll(
                    2,
                    "t1",
                    r#""status":"completed","result":{"content":[],"isError":true}"#,
                ),
            ];
            assert_eq!(
                ended(&conversation),
                (Outcome::ToolError, None, true, Some(TaskStatus::Completed))
            );
        }

        #[test]
        fn failed_task_is_a_jsonrpc_error_with_its_code() {
            let conversation = [
                handle(1, "t1"),
                poll(
                    2,
                    "t1",
                    r#""status":"failed","error":{"code":-32001,"message":"quota"}"#,
                ),
            ];
            assert_eq!(
                ended(&conversation),
                (
                    Outcome::JsonrpcError,
                    Some(-32001),
                    true,
                    Some(TaskStatus::Failed)
                )
            );
        }

        #[test]
        fn cancelled_task_is_cancelled_and_incomplete() {
            let conversation = [
                handle(1, "t1"),
                (
                    task_req(2, "tasks/cancel", "t1"),
                    ok(2, r#"{"resultType":"complete"}"#),
                ),
                poll(3, "t1", r#""status":"cancelled""#),
            ];
            assert_eq!(
                ended(&conversation),
                (Outcome::Cancelled, None, false, Some(TaskStatus::Cancelled))
            );
        }

        #[test]
        fn expired_task_leaves_the_call_incomplete() {
            let gone =
                r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"unknown task"}}"#;
            let conversation = [
                handle(1, "t1"),
                poll(2, "t1", r#""status":"working""#),
                (task_req(3, "tasks/get", "t1"), gone.to_owned()),
            ];
            assert_eq!(
                ended(&conversation),
                (
                    Outcome::JsonrpcError,
                    Some(-32602),
                    false,
                    Some(TaskStatus::Working)
                )
            );
        }

        #[test]
        fn capture_ending_while_the_task_runs_is_deferred() {
            assert_eq!(
                ended(&[handle(1, "t1")]),
                (Outcome::Deferred, None, false, Some(TaskStatus::Working))
            );
            // Input given with tasks/update: the ack joins but does not end the call.
            let update = r#"{"jsonrpc":"2.0","id":3,"method":"tasks/update","params":{"taskId":"t1","inputResponses":{"k":{"action":"accept"}}}}"#;
            let conversation = [
                handle(1, "t1"),
                poll(2, "t1", r#""status":"input_required","inputRequests":{}"#),
                (update.to_owned(), ok(3, r#"{"resultType":"complete"}"#)),
            ];
            assert_eq!(
                ended(&conversation),
                (
                    Outcome::Deferred,
                    None,
                    false,
                    Some(TaskStatus::InputRequired)
                )
            );
        }

        #[test]
        fn terminal_status_notification_ends_the_call_even_on_a_broken_poll() {
            let note = r#"{"jsonrpc":"2.0","method":"notifications/tasks/status","params":{"taskId":"t1","status":"completed","result":{"content":[],"isError":true}}}"#;
            let stream = format!("event: message\ndata: {note}\n\n!");
            let conversation = [handle(1, "t1"), (task_req(2, "tasks/get", "t1"), stream)];
            let (verdicts, _) = judge(&conversation);
            assert_eq!(verdicts[1].outcome, Outcome::StreamAborted);
            assert_eq!(verdicts[1].task_status, Some(TaskStatus::Completed));
            assert_eq!(
                ended(&conversation),
                (Outcome::ToolError, None, true, Some(TaskStatus::Completed))
            );
        }

        /// 2025-11-25: `tasks/get` says completed without the result; `tasks/result` fetches
        /// it, and its JSON-RPC error is the failed task's own answer (complete), unlike a
        /// poll's.
        #[test]
        fn tasks_result_gives_the_answer_a_completed_poll_left_out() {
            let done = poll(2, "t1", r#""status":"completed""#);
            assert_eq!(
                ended(&[handle(1, "t1"), done.clone()]),
                (Outcome::Deferred, None, false, Some(TaskStatus::Completed))
            );
            let result = task_req(3, "tasks/result", "t1");
            let fetched = (result.clone(), ok(3, r#"{"content":[],"isError":true}"#));
            assert_eq!(
                ended(&[handle(1, "t1"), done.clone(), fetched]),
                (Outcome::ToolError, None, true, Some(TaskStatus::Completed))
            );
            let failed = r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32000,"message":"x"}}"#;
            assert_eq!(
                ended(&[handle(1, "t1"), done, (result, failed.to_owned())]),
                (
                    Outcome::JsonrpcError,
                    Some(-32000),
                    true,
                    Some(TaskStatus::Completed)
                )
            );
        }

        #[test]
        fn a_notification_for_another_task_is_not_this_polls() {
            let note = r#"{"jsonrpc":"2.0","method":"notifications/tasks/status","params":{"taskId":"other","status":"cancelled"}}"#;
            let stream = format!("event: message\ndata: {note}\n\n!");
            let conversation = [handle(1, "t1"), (task_req(2, "tasks/get", "t1"), stream)];
            let (verdicts, _) = judge(&conversation);
            assert_eq!(verdicts[1].task_status, None);
            assert_eq!(
                ended(&conversation),
                (
                    Outcome::StreamAborted,
                    None,
                    false,
                    Some(TaskStatus::Working)
                )
            );
        }

        #[test]
        fn polls_join_the_call_of_their_own_task() {
            let (_, calls) = judge(&[
                handle(1, "a"),
                handle(2, "b"),
                poll(
                    3,
                    "a",
                    r#""status":"failed","error":{"code":-32000,"message":"x"}"#,
                ),
                poll(4, "b", r#""status":"completed","result":{"content":[]}"#),
            ]);
            let got: Vec<(Vec<u64>, Outcome)> = calls
                .iter()
                .map(|c| (c.entries.clone(), c.outcome))
                .collect();
            assert_eq!(
                got,
                vec![
                    (vec![0, 2], Outcome::JsonrpcError),
                    (vec![1, 3], Outcome::ToolSuccess)
                ]
            );
        }
    }

    /// A RateLimited error is a complete answer advised `retry`: the re-send after its delay
    /// joins the call without `call.resent_after_complete`; after another complete error it
    /// would be flagged.
    #[test]
    fn a_resend_after_rate_limiting_is_no_resend_after_complete() {
        use crate::{End, Headers, Request, ResponseHead, Session};
        let run = |code: i64| {
            let mut session = Session::default();
            let mut calls = Calls::new();
            let mut out = Vec::new();
            let headers = Headers::from_iter([("MCP-Protocol-Version", "2026-07-28")]);
            for (id, at) in [(1, 0), (2, 2_000)] {
                let body = format!(
                    r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"t","arguments":{{}}}}}}"#
                );
                let mut ex = session.begin(Request::new("POST", headers.clone(), body.as_bytes()));
                ex.on_head(ResponseHead {
                    status: 200,
                    headers: Headers::from_iter([("Content-Type", "application/json")]),
                });
                let reply = if id == 1 {
                    format!(
                        r#"{{"jsonrpc":"2.0","id":1,"error":{{"code":{code},"message":"m","data":{{"retryAfterMs":1000}}}}}}"#
                    )
                } else {
                    r#"{"jsonrpc":"2.0","id":2,"result":{"resultType":"complete","content":[]}}"#
                        .into()
                };
                ex.feed(reply.as_bytes());
                let v = session.finish(&mut ex, End::Eof);
                let facts = ExchangeFacts {
                    verdict: &v,
                    headers: &headers,
                    body: body.as_bytes(),
                    started_ms: Some(at),
                    duration_ms: Some(10),
                };
                calls.add(facts, &mut |c| out.push(c));
            }
            calls.finish(&mut |c| out.push(c));
            out
        };
        let limited = run(-32023);
        assert_eq!(limited.len(), 1, "{limited:?}");
        assert_eq!(limited[0].entries.len(), 2);
        assert_eq!(limited[0].outcome, Outcome::ToolSuccess);
        assert!(
            limited[0].violations.is_empty(),
            "{:?}",
            limited[0].violations
        );
        let other = run(-32603);
        let rules: Vec<&str> = other
            .iter()
            .flat_map(|c| c.violations.iter().map(|v| v.rule.as_str()))
            .collect();
        assert_eq!(rules, ["call.resent_after_complete"]);
    }

    /// Cancels, repeats, session ends and poll pacing: exchanges with timestamps, each
    /// `(HTTP method, headers, request body, status, reply, end, started_ms)`; a reply is SSE when
    /// it starts with `event:`, else JSON (empty: no body). Each exchange takes 10 ms.
    mod traffic {
        use super::super::*;
        use crate::{End, Headers, Request, ResponseHead, Session};

        type Step<'a> = (&'a str, Headers, String, u16, String, End, u64);

        fn v26() -> Headers {
            Headers::from_iter([("MCP-Protocol-Version", "2026-07-28")])
        }

        fn post(body: &str, reply: &str, end: End, at: u64) -> Step<'static> {
            (
                "POST",
                v26(),
                body.to_owned(),
                200,
                reply.to_owned(),
                end,
                at,
            )
        }

        fn run(steps: &[Step<'_>]) -> Vec<Call> {
            let mut session = Session::default();
            let (mut calls, mut out) = (Calls::new(), Vec::new());
            for (method, headers, body, status, reply, end, at) in steps {
                // A GET with Last-Event-ID is linked to the request it resumes, as replay does.
                let request = headers
                    .known(Known::LastEventId)
                    .and_then(|last| session.resumption(last, headers.clone()))
                    .unwrap_or_else(|| Request::new(method, headers.clone(), body.as_bytes()));
                let mut ex = session.begin(request);
                let media = if reply.starts_with("event:") || reply.starts_with("id:") {
                    "text/event-stream"
                } else {
                    "application/json"
                };
                let head = if reply.is_empty() {
                    Headers::new()
                } else {
                    Headers::from_iter([("Content-Type", media)])
                };
                ex.on_head(ResponseHead {
                    status: *status,
                    headers: head,
                });
                ex.feed(reply.as_bytes());
                let v = session.finish(&mut ex, *end);
                let facts = ExchangeFacts {
                    verdict: &v,
                    headers,
                    body: body.as_bytes(),
                    started_ms: Some(*at),
                    duration_ms: Some(10),
                };
                calls.add(facts, &mut |c| out.push(c));
            }
            calls.finish(&mut |c| out.push(c));
            out
        }

        fn rules(c: &Call) -> Vec<&str> {
            c.violations.iter().map(|w| w.rule.id()).collect()
        }

        fn tool(id: u32, name: &str) -> String {
            format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{name}","arguments":{{"a":1}}}}}}"#
            )
        }

        fn cancel(id: u32) -> String {
            format!(
                r#"{{"jsonrpc":"2.0","method":"notifications/cancelled","params":{{"requestId":{id},"reason":"user"}}}}"#
            )
        }

        fn accepted(body: &str, at: u64) -> Step<'static> {
            (
                "POST",
                v26(),
                body.to_owned(),
                202,
                String::new(),
                End::Eof,
                at,
            )
        }

        /// A stream cut after a progress event (no answer).
        fn cut() -> String {
            let p = r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":1}}"#;
            format!("event: message\ndata: {p}\n\n")
        }

        fn answer(id: u32) -> String {
            format!(
                r#"{{"jsonrpc":"2.0","id":{id},"result":{{"resultType":"complete","content":[],"isError":false}}}}"#
            )
        }

        #[test]
        fn a_cancel_makes_the_dropped_call_cancelled_in_either_order() {
            let call = post(&tool(1, "slow"), &cut(), End::Reset, 0);
            let note = accepted(&cancel(1), 500);
            for steps in [[call.clone(), note.clone()], [note, call]] {
                let calls = run(&steps);
                let c = calls
                    .iter()
                    .find(|c| c.ids == [serde_json::json!(1)])
                    .unwrap();
                assert_eq!((c.outcome, c.complete), (Outcome::Cancelled, false));
                assert_eq!(c.error_code, None);
            }
            // Seen after the call: the cancel joins it (one call of two POSTs).
            let calls = run(&[
                post(&tool(1, "slow"), &cut(), End::Reset, 0),
                accepted(&cancel(1), 500),
            ]);
            assert_eq!(calls.len(), 1);
            assert_eq!(
                (calls[0].entries.clone(), calls[0].post_count),
                (vec![0, 1], 2)
            );
            assert_eq!(calls[0].http_statuses, vec![Some(200), Some(202)]);
        }

        #[test]
        fn a_cancelled_call_is_not_resumed_by_a_later_get() {
            let p = r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":1}}"#;
            let primed =
                format!("id: e-1\nretry: 100\ndata: \n\nevent: message\nid: e-2\ndata: {p}\n\n");
            let v25 = Headers::from_iter([("MCP-Protocol-Version", "2025-11-25")]);
            let resume = Headers::from_iter([
                ("MCP-Protocol-Version", "2025-11-25"),
                ("Last-Event-ID", "e-2"),
            ]);
            let rest = format!("event: message\ndata: {}\n\n", answer(1));
            let call = (
                "POST",
                v25.clone(),
                tool(1, "slow"),
                200,
                primed,
                End::Reset,
                0,
            );
            let get = ("GET", resume, String::new(), 200, rest, End::Eof, 400);
            // Without the cancel, the GET resumes the call and brings its answer.
            let calls = run(&[call.clone(), get.clone()]);
            assert_eq!(calls[0].entries, vec![0, 1], "{calls:#?}");
            assert_eq!(calls[0].outcome, Outcome::ToolSuccess);
            let calls = run(&[
                call,
                ("POST", v25, cancel(1), 202, String::new(), End::Eof, 100),
                get,
            ]);
            assert_eq!(calls[0].outcome, Outcome::Cancelled);
            assert_eq!(calls[0].entries, vec![0, 1], "the GET does not resume it");
        }

        #[test]
        fn a_cancel_does_not_end_a_task() {
            let calls = run(&[
                post(&tool(1, "render"), &handle(1, 500), End::Eof, 0),
                accepted(&cancel(1), 600),
            ]);
            assert_eq!(calls.len(), 1);
            assert_eq!(calls[0].entries, vec![0, 1]);
            assert_eq!(
                (calls[0].outcome, calls[0].complete),
                (Outcome::Deferred, false)
            );
        }

        #[test]
        fn an_answer_before_the_cancel_stands() {
            let calls = run(&[
                post(&tool(1, "slow"), &answer(1), End::Eof, 0),
                accepted(&cancel(1), 500),
            ]);
            assert_eq!(
                (calls[0].outcome, calls[0].complete),
                (Outcome::ToolSuccess, true)
            );
        }

        #[test]
        fn a_minus_32800_answer_is_a_complete_cancellation() {
            let gone =
                r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32800,"message":"Request cancelled"}}"#;
            let stream = format!("event: message\ndata: {gone}\n\n");
            for order in [0, 1] {
                let call = post(&tool(1, "slow"), &stream, End::Eof, 0);
                let note = accepted(&cancel(1), 5);
                let steps = if order == 0 {
                    [call, note]
                } else {
                    [note, call]
                };
                let calls = run(&steps);
                let c = calls.iter().find(|c| !c.ids.is_empty()).unwrap();
                assert_eq!(
                    (c.outcome, c.complete, c.error_code),
                    (Outcome::Cancelled, true, Some(-32800))
                );
            }
        }

        #[test]
        fn a_repeat_after_a_complete_answer_is_a_call_of_its_own() {
            let calls = run(&[
                post(&tool(1, "pay"), &answer(1), End::Eof, 0),
                post(&tool(2, "pay"), &answer(2), End::Eof, 1_000),
            ]);
            assert_eq!(calls.len(), 2);
            assert_eq!(calls[0].entries, vec![0]);
            assert!(calls[0].violations.is_empty());
            assert_eq!(calls[1].entries, vec![1]);
            assert_eq!(rules(&calls[1]), ["call.resent_after_complete"]);
            assert!(!calls[1].double_execution_risk);
            assert_eq!(calls[1].retry_origin, Some(RetryOrigin::None));
            // Asked again a minute later: a new question, not flagged; the same id is.
            let later = run(&[
                post(&tool(1, "pay"), &answer(1), End::Eof, 0),
                post(&tool(2, "pay"), &answer(2), End::Eof, 60_000),
            ]);
            assert!(later[1].violations.is_empty());
            let same_id = run(&[
                post(&tool(1, "pay"), &answer(1), End::Eof, 0),
                post(&tool(1, "pay"), &answer(1), End::Eof, 1_000),
            ]);
            assert_eq!(
                rules(&same_id[1]),
                ["call.resent_after_complete", "call.reused_id"]
            );
        }

        fn handle(id: u32, every: u64) -> String {
            format!(
                r#"{{"jsonrpc":"2.0","id":{id},"result":{{"resultType":"task","taskId":"t{id}","status":"working","pollIntervalMs":{every}}}}}"#
            )
        }

        #[test]
        fn a_repeat_while_its_task_runs_starts_a_second_task() {
            let calls = run(&[
                post(&tool(1, "render"), &handle(1, 500), End::Eof, 0),
                post(&tool(2, "render"), &handle(2, 500), End::Eof, 60_000),
            ]);
            assert_eq!(calls.len(), 2);
            assert!(calls[1].double_execution_risk);
            assert_eq!(rules(&calls[1]), ["call.double_execution_risk"]);
            assert!(!calls[0].double_execution_risk);
        }

        fn get(id: u32, task: &str, every: u64) -> (String, String) {
            let req = format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"tasks/get","params":{{"taskId":"{task}"}}}}"#
            );
            let rsp = format!(
                r#"{{"jsonrpc":"2.0","id":{id},"result":{{"resultType":"complete","taskId":"{task}","status":"working","pollIntervalMs":{every}}}}}"#
            );
            (req, rsp)
        }

        #[test]
        fn polls_faster_than_the_task_asks_are_too_soon() {
            // Handle ends at 10 ms; polls wait 460 ms (within 10 % of 500: fine), then the task
            // asks for 2000 ms and the client polls after 1000 ms (too soon).
            let (a, ra) = get(2, "t1", 2000);
            let (b, rb) = get(3, "t1", 2000);
            let steps = [
                post(&tool(1, "render"), &handle(1, 500), End::Eof, 0),
                post(&a, &ra, End::Eof, 470),
                post(&b, &rb, End::Eof, 1_480),
            ];
            let calls = run(&steps[..2]);
            assert!(calls[0].violations.is_empty(), "{:?}", calls[0].violations);
            let calls = run(&steps);
            assert_eq!(calls.len(), 1);
            assert_eq!(rules(&calls[0]), ["call.retry_too_soon"]);
            assert!(calls[0].violations[0].detail.contains("2000 ms"));
            // 449 ms after the handle: under 90 % of 500.
            let calls = run(&[steps[0].clone(), post(&a, &ra, End::Eof, 459)]);
            assert_eq!(rules(&calls[0]), ["call.retry_too_soon"]);
        }

        #[test]
        fn a_request_after_delete_flags_its_call() {
            let sid = "s-1";
            let h = || {
                Headers::from_iter([
                    ("MCP-Protocol-Version", "2025-11-25"),
                    ("Mcp-Session-Id", sid),
                ])
            };
            let init = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#;
            let init_ok = r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}"#;
            let gone = r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"Session not found"}}"#;
            let calls = run(&[
                (
                    "POST",
                    Headers::new(),
                    init.to_owned(),
                    200,
                    init_ok.to_owned(),
                    End::Eof,
                    0,
                ),
                (
                    "DELETE",
                    h(),
                    String::new(),
                    200,
                    String::new(),
                    End::Eof,
                    100,
                ),
                (
                    "POST",
                    h(),
                    tool(1, "x"),
                    404,
                    gone.to_owned(),
                    End::Eof,
                    200,
                ),
            ]);
            let last = calls.last().unwrap();
            assert_eq!(rules(last), ["session.request_after_delete"]);
            assert!(last.violations[0].detail.starts_with("entry 2: "));
        }
    }

    #[test]
    fn retry_origin_summaries_state_the_threshold() {
        let window = format!("{} s", AUTOMATIC_RETRY_MS / 1000);
        assert!(RetryOrigin::Automatic.summary().contains(&window));
        assert!(RetryOrigin::Manual.summary().contains(&window));
        for r in RetryOrigin::ALL {
            let json = serde_json::to_string(r).unwrap();
            assert_eq!(json, format!("\"{r}\""));
            assert_eq!(serde_json::from_str::<RetryOrigin>(&json).unwrap(), *r);
        }
    }

    #[test]
    fn rfc3339() {
        assert_eq!(rfc3339_ms("1970-01-01T00:00:01.5Z"), Some(1500));
        assert_eq!(
            rfc3339_ms("2026-12-02T10:00:01.000Z"),
            rfc3339_ms("2026-12-02T11:00:01+01:00")
        );
        assert_eq!(rfc3339_ms("2026-12-02"), None);
    }
}
