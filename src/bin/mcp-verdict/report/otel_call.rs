//! The call span of `--otlp`: one span per logical call ([`Call`]), the parent of its
//! exchanges' spans. What it says ([`attributes`]), how long it lasts ([`Window`]), the one
//! `error.type` mapping ([`error_kind`], shared with the exchange spans) and its ids
//! ([`CallIds`], [`Ids`]).
//!
//! The ids are derived, not remembered: the proxy exports an exchange's span when the grouping
//! has placed it, long before its call closes, so the exchange must name its parent's trace
//! and span id before the call span exists. Both come from the run's random nonce and the
//! call's number; nothing is kept per call to make them.

use std::cell::Cell;
use std::time::SystemTime;

use mcp_verdict::{Call, ExchangeKind, Outcome, Verdict};
use opentelemetry::trace::{SpanId, TraceId};
use opentelemetry::{KeyValue, Value};
use opentelemetry_sdk::trace::{IdGenerator, RandomIdGenerator};

/// The trace and span id of one call's span.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallIds {
    /// The call's trace: its span and every exchange span under it.
    pub trace: TraceId,
    /// The call span's own id, the exchange spans' parent.
    pub span: SpanId,
}

/// An odd multiplier (the 128-bit golden ratio): `nonce + call × K` is a bijection of the call
/// number, so two calls of one run never share a trace.
const K: u128 = 0x9E37_79B9_7F4A_7C15_F39C_C060_5CED_C835;

impl CallIds {
    /// The ids of call `call` of the run whose nonce is `nonce`.
    pub fn of(nonce: u128, call: u64) -> CallIds {
        let trace = nonce.wrapping_add(u128::from(call).wrapping_mul(K));
        // All-zero ids are invalid in OTLP; the low bit set keeps every id valid.
        let trace = trace | 1;
        let span = mix((trace >> 64) as u64 ^ trace as u64) | 1;
        CallIds {
            trace: TraceId::from(trace),
            span: SpanId::from(span),
        }
    }
}

/// splitmix64's finalizer: spreads the trace id's bits over the span id.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

thread_local! {
    /// Ids the next root span built on this thread must take (see [`Ids`]).
    static FORCED: Cell<Option<CallIds>> = const { Cell::new(None) };
}

/// The tracer's id generator: random ids, except while [`with_ids`] forces a call span's
/// derived ids. The SDK takes span ids only from its generator (a span builder's ids are
/// ignored), so this is the one way to give a span an id chosen in advance.
#[derive(Debug, Default)]
pub struct Ids(RandomIdGenerator);

impl IdGenerator for Ids {
    fn new_trace_id(&self) -> TraceId {
        FORCED
            .get()
            .map_or_else(|| self.0.new_trace_id(), |ids| ids.trace)
    }

    fn new_span_id(&self) -> SpanId {
        FORCED
            .get()
            .map_or_else(|| self.0.new_span_id(), |ids| ids.span)
    }
}

/// Runs `start` (which starts one root span on this thread) with `ids` forced.
pub fn with_ids<T>(ids: CallIds, start: impl FnOnce() -> T) -> T {
    FORCED.set(Some(ids));
    let started = start();
    FORCED.set(None);
    started
}

/// What the call span takes from its exchanges, folded in one at a time: the live proxy keeps
/// one per open call, replay and probe build one per call from its traces.
#[derive(Debug, Clone, Default)]
pub struct Window {
    /// When its first exchange started.
    pub start: Option<SystemTime>,
    /// When its last exchange ended.
    pub end: Option<SystemTime>,
    /// `Mcp-Session-Id` as shown (a stand-in when redacting), from its first exchange with one.
    pub session_id: Option<String>,
    /// The retry advice of its final exchange (the latest that decides it: a client's answer
    /// to a server request does not).
    pub advice: Option<&'static str>,
    /// The JSON-RPC error message of its final exchange, for the span status.
    pub error_message: Option<String>,
}

impl Window {
    /// Folds in one exchange of the call.
    pub fn add(&mut self, v: &Verdict, start: SystemTime, end: SystemTime, session: Option<&str>) {
        self.start = Some(self.start.map_or(start, |s| s.min(start)));
        self.end = Some(self.end.map_or(end, |e| e.max(end)));
        if self.session_id.is_none() {
            self.session_id = session.map(str::to_owned);
        }
        if v.kind != Some(ExchangeKind::Response) || self.advice.is_none() {
            self.advice = Some(v.retry.advice.as_str());
            self.error_message = v.error_message.clone();
        }
    }
}

/// `error.type` of a span, call or exchange, from its (final) outcome; `None` on success, as
/// the conventions ask. In order: the JSON-RPC error code as a string (the MCP conventions'
/// choice for an error response), `tool_error` for `isError: true` (theirs too), and for an
/// incomplete answer its outcome's wire name (`STREAM_ABORTED`, `HTTP_ERROR`, ...: which layer
/// failed and how). Complete answers that are not errors (`INPUT_REQUIRED`, `DEFERRED`, ...)
/// have none.
pub fn error_kind(error_code: Option<i64>, outcome: Outcome, complete: bool) -> Option<String> {
    if let Some(code) = error_code {
        return Some(code.to_string());
    }
    if outcome == Outcome::ToolError {
        return Some("tool_error".into());
    }
    (!complete).then(|| outcome.as_str().to_owned())
}

/// `mcp.method.name` of a call: its method, or `(none)` for a call of `GET`/`DELETE` entries
/// only or of an answer whose server request was not seen.
pub fn method_name(call: &Call) -> String {
    call.method.as_deref().unwrap_or("(none)").to_owned()
}

/// The span name the conventions ask for: `{mcp.method.name} {target}`, the target being the
/// tool, or the method alone.
pub fn span_name(call: &Call) -> String {
    match &call.tool {
        Some(tool) => format!("{} {tool}", method_name(call)),
        None => method_name(call),
    }
}

/// The call span's attributes: the conventions' names where they have one, `mcp_verdict.*`
/// for the verdict's own fields.
pub fn attributes(call: &Call, w: &Window, server: Option<&(String, u16)>) -> Vec<KeyValue> {
    let mut attrs = vec![KeyValue::new("mcp.method.name", method_name(call))];
    if let Some(version) = call.protocol_version {
        attrs.push(KeyValue::new("mcp.protocol.version", version.as_str()));
    }
    if let Some(tool) = &call.tool {
        attrs.push(KeyValue::new("gen_ai.tool.name", tool.to_string()));
        attrs.push(KeyValue::new("gen_ai.operation.name", "execute_tool"));
    }
    // The call's first request id: a re-send or an MRTR round adds ids, listed below.
    if let Some(id) = call.ids.iter().find(|id| !id.is_null()) {
        attrs.push(KeyValue::new("jsonrpc.request.id", id_text(id)));
    }
    if let Some(session) = &w.session_id {
        attrs.push(KeyValue::new("mcp.session.id", session.clone()));
    }
    if let Some((host, port)) = server {
        attrs.push(KeyValue::new("server.address", host.clone()));
        attrs.push(KeyValue::new("server.port", i64::from(*port)));
    }
    if let Some(code) = call.error_code {
        attrs.push(KeyValue::new("rpc.response.status_code", code.to_string()));
    }
    if let Some(kind) = error_kind(call.error_code, call.outcome, call.complete) {
        attrs.push(KeyValue::new("error.type", kind));
    }
    attrs.extend([
        KeyValue::new("mcp_verdict.call", call.call as i64),
        KeyValue::new("mcp_verdict.outcome", call.outcome.as_str()),
        KeyValue::new("mcp_verdict.complete", call.complete),
        KeyValue::new("mcp_verdict.post_count", i64::from(call.post_count)),
        KeyValue::new("mcp_verdict.exchange_count", call.entries.len() as i64),
        KeyValue::new(
            "mcp_verdict.double_execution_risk",
            call.double_execution_risk,
        ),
    ]);
    if let Some(advice) = w.advice {
        attrs.push(KeyValue::new("mcp_verdict.retry_advice", advice));
    }
    if let Some(origin) = call.retry_origin {
        attrs.push(KeyValue::new("mcp_verdict.retry_origin", origin.as_str()));
    }
    if let Some(origin) = call.status_origin {
        attrs.push(KeyValue::new("mcp_verdict.status_origin", origin.as_str()));
    }
    if let Some(step) = call.auth_step {
        attrs.push(KeyValue::new("mcp_verdict.auth_step", step.as_str()));
    }
    if call.ids.len() > 1 {
        let ids: Vec<_> = call.ids.iter().map(|id| id_text(id).into()).collect();
        attrs.push(KeyValue::new(
            "mcp_verdict.request_ids",
            Value::Array(opentelemetry::Array::String(ids)),
        ));
    }
    if !call.violations.is_empty() {
        let rules: Vec<_> = call.violations.iter().map(|r| r.rule.id().into()).collect();
        attrs.push(KeyValue::new(
            "mcp_verdict.violations",
            Value::Array(opentelemetry::Array::String(rules)),
        ));
    }
    attrs
}

/// A JSON-RPC id as the conventions write it: a string as is, a number in decimal.
pub fn id_text(id: &serde_json::Value) -> String {
    match id {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_of_one_run_get_distinct_valid_ids_and_the_same_ids_twice() {
        let nonce = 0x0123_4567_89ab_cdef_0011_2233_4455_6677;
        let a = CallIds::of(nonce, 0);
        assert_eq!(a, CallIds::of(nonce, 0));
        let mut traces = std::collections::BTreeSet::new();
        for call in 0..1000 {
            let ids = CallIds::of(nonce, call);
            assert_ne!(ids.trace, TraceId::INVALID);
            assert_ne!(ids.span, SpanId::INVALID);
            traces.insert(ids.trace.to_bytes());
        }
        assert_eq!(traces.len(), 1000);
        assert_ne!(CallIds::of(nonce ^ (1 << 90), 0).trace, a.trace);
    }

    #[test]
    fn forced_ids_apply_only_inside_with_ids() {
        let ids = CallIds::of(7, 3);
        let generator = Ids::default();
        let inside = with_ids(ids, || (generator.new_trace_id(), generator.new_span_id()));
        assert_eq!(inside, (ids.trace, ids.span));
        assert_ne!(generator.new_span_id(), ids.span);
    }

    #[test]
    fn error_type_is_the_code_then_tool_error_then_an_incomplete_outcome() {
        assert_eq!(
            error_kind(Some(-32601), Outcome::JsonrpcError, true).as_deref(),
            Some("-32601")
        );
        assert_eq!(
            error_kind(None, Outcome::ToolError, true).as_deref(),
            Some("tool_error")
        );
        assert_eq!(
            error_kind(None, Outcome::StreamAborted, false).as_deref(),
            Some("STREAM_ABORTED")
        );
        assert_eq!(error_kind(None, Outcome::ToolSuccess, true), None);
        assert_eq!(error_kind(None, Outcome::InputRequired, true), None);
    }
}
