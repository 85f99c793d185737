//! Judging an SSE body: the sink the framer calls per event, and the verdict at the stream's end.

use std::borrow::Cow;

use serde_json::Value;

use super::{Exchange, Observer, Stream, Terminal, Track, judge_terminal, report};
use crate::arrival::{self, EventSpan};
use crate::findings::Findings;
use crate::jsonrpc::{self, Envelope, Payload};
use crate::request::{BodyKind, Request};
use crate::rules::Rule;
use crate::sse::{SseEvent, SseSink};
use crate::verdict::{End, Level, Location, Outcome, Unterminated, Verdict};
use crate::version::ProtocolVersion;
use crate::vocab::kinds::{ExchangeKind, MessageKind as Kind};
use crate::vocab::members::ScannedMembers;
use crate::vocab::verdict::ServerRequest;

impl Exchange {
    /// The stream's outcome at its end; its facts go into `v` (and its `retry` field into
    /// `sse_retry`).
    pub(super) fn judge_stream(
        &mut self,
        stream: &mut Stream,
        end: End,
        v: &mut Verdict,
        sse_retry: &mut Option<u64>,
    ) -> Outcome {
        // A body the capture did not keep has no event count: unknown, not zero.
        v.event_count = (end != End::NotCaptured).then_some(stream.track.event_count);
        // Most streams carry none: then there is no list to convert.
        if !stream.track.server_requests.is_empty() {
            v.server_requests = std::mem::take(&mut stream.track.server_requests).into();
        }
        self.server_requests_unlisted = stream.track.unlisted;
        let last_id = stream
            .framer
            .last_event_id()
            .map(|b| String::from_utf8_lossy(b).into_owned());
        let had_id = last_id.is_some();
        // 2025-x only: resumption and the `retry` field.
        if self.setup.version.has_resumption() {
            v.resumable = had_id;
            v.last_event_id = last_id;
            *sse_retry = stream.track.retry_ms;
        }
        if self.limit_hit.is_none() {
            v.unterminated = self.unterminated(stream);
        }
        if let Some(outcome) = stream.track.terminal.as_ref().and_then(|t| t.outcome) {
            return outcome;
        }
        if self.limit_hit.is_some() {
            return Outcome::LimitExceeded;
        }
        match end {
            End::Open => Outcome::StreamOpen,
            End::NotCaptured => Outcome::NotCaptured,
            End::Timeout => Outcome::TimedOut,
            End::Cancelled => Outcome::Cancelled,
            End::Eof | End::Reset => self.ended_without_response(stream, end, had_id),
        }
    }

    /// An event left without its blank line at the end: reported, with whether it looked like
    /// our answer.
    fn unterminated(&mut self, stream: &Stream) -> Option<Unterminated> {
        let p = stream.framer.pending()?;
        let looked_final = looks_like_response(&p.data, self.req.ids());
        self.findings.add(
            Rule::SseUnterminatedEvent,
            format!("{} bytes after the last complete event", p.bytes),
            Some(Location {
                offset: p.offset,
                event: None,
            }),
        );
        Some(Unterminated {
            bytes: p.bytes,
            looked_final,
        })
    }

    /// The stream ended (EOF or reset) without our response: on 2025-11-25 a close after an
    /// event id is the server's polling choice; otherwise the outcome says what the events were.
    fn ended_without_response(&mut self, stream: &Stream, end: End, had_id: bool) -> Outcome {
        let at = Some(Location {
            offset: stream.framer.offset(),
            event: None,
        });
        let polling = self.setup.version == ProtocolVersion::V2025_11_25 && had_id;
        if polling {
            // Only a deliberate close (clean EOF) is the server's polling choice; a reset is not.
            if stream.track.retry_ms.is_none() && end == End::Eof {
                self.findings.add(
                    Rule::SseRetryMissing,
                    "closed after an event id without a retry field",
                    at,
                );
            }
        } else if end == End::Eof {
            self.findings.add(
                Rule::SseClosedBeforeResponse,
                format!(
                    "stream closed after {} events without the response",
                    stream.track.event_count
                ),
                at,
            );
        }
        if stream.track.parse_failed {
            Outcome::MalformedJson
        } else if stream.track.foreign_seen {
            Outcome::InvalidEnvelope
        } else {
            Outcome::StreamAborted
        }
    }
}

impl Exchange {
    /// `sse.buffered`: every event came in one burst after a long wait, with something the
    /// server sends while working (progress, a log message, a server request) in it.
    pub(super) fn check_buffered(&mut self, span: &EventSpan, head: &super::Head) {
        // No arrival times told (a capture without them, or a caller that does not say).
        if self.arrivals.is_empty() {
            return;
        }
        let limits = &self.setup.limits;
        // The thresholds, not the times measured: two runs of the same traffic give the same
        // verdict (the times are in the recording).
        let (wait, within) = (limits.buffered_wait_ms, limits.buffered_burst_ms);
        if arrival::burst(span, &self.arrivals, wait, within).is_none() {
            return;
        }
        let mut sat = Vec::new();
        for (n, what) in [
            (span.progress, "progress notification"),
            (span.notifications, "other notification"),
            (span.requests, "server request"),
        ] {
            if n > 0 {
                sat.push(format!("{n} {what}{}", if n == 1 { "" } else { "s" }));
            }
        }
        let fix = if head.accel_off {
            "the response has X-Accel-Buffering: no, so a proxy other than nginx (or the \
             server's own writer) buffered it: disable buffering for text/event-stream there"
        } else {
            "a proxy likely buffered it: disable proxy buffering for text/event-stream (nginx: \
             proxy_buffering off), or send X-Accel-Buffering: no from the server"
        };
        self.findings.add(
            Rule::SseBuffered,
            format!(
                "all {} events ({}) arrived together, within {within} ms, none sooner than \
                 {wait} ms after the request; {fix}",
                span.events,
                sat.join(", "),
            ),
            span.first.map(|offset| Location {
                offset,
                event: None,
            }),
        );
    }
}

/// Whether an unterminated event's data is a response to one of `expected`.
fn looks_like_response(data: &[u8], expected: &[Value]) -> bool {
    let text = String::from_utf8_lossy(data);
    match jsonrpc::parse_payload(&text) {
        Ok(Payload::Single(env)) => {
            env.kind() == Kind::Response && expected.iter().any(|id| env.id_matches(id))
        }
        _ => false,
    }
}

/// A `notifications/progress` whose members have the types its schema gives, told from what
/// the envelope parse picked out: the full shape check (a tree of the message, then a walk)
/// would find nothing, so the commonest event of a long stream skips it. Anything else (an
/// escaped method, a `_meta`, a token like `1.0`) takes the full check.
pub(super) fn progress_conforms(env: &Envelope<'_>) -> bool {
    let string_or_integer = |raw: &str| {
        let digits = raw.strip_prefix('-').unwrap_or(raw);
        raw.starts_with('"') || (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
    };
    env.method == Some("notifications/progress")
        && env.jsonrpc.is_some_and(|j| j.get() == "\"2.0\"")
        && env.params.is_some_and(|p| {
            p.readable
                && p.rest_plain
                && p.progress.is_some()
                && p.progress_token.is_some_and(|t| string_or_integer(t.get()))
        })
}

pub(super) struct StreamSink<'a> {
    pub(super) stream: &'a mut Track,
    pub(super) req: &'a Request,
    pub(super) version: ProtocolVersion,
    pub(super) findings: &'a mut Findings,
    pub(super) observer: &'a mut dyn Observer,
}

impl SseSink for StreamSink<'_> {
    fn on_event(&mut self, ev: &SseEvent<'_>) {
        if ev.data.is_empty() {
            return; // priming or keep-alive: never JSON, never counted
        }
        if self.stream.event_count >= self.stream.max_events {
            self.stream.too_many = true;
            return;
        }
        self.stream.event_count += 1;
        self.stream.span.event(ev.offset);
        self.observer.on_event(ev);
        let at = Some(Location {
            offset: ev.offset,
            event: Some(ev.index),
        });
        if !ev.is_message() {
            self.findings.add(
                Rule::SseNonMessageEvent,
                format!(
                    "event type {:?}: SDK clients ignore it",
                    String::from_utf8_lossy(ev.event_type)
                ),
                at,
            );
            return;
        }
        // In a batch, events after our answer may be the siblings' answers: judged per message.
        if let Some(t) = &self.stream.terminal
            && self.req.kind != BodyKind::Batch
        {
            let level = if t.outcome == Some(Outcome::InputRequired) {
                Level::Must
            } else {
                Level::Should
            };
            self.findings.add_at_level(
                Rule::SseAfterFinal,
                level,
                "event after the final response",
                at,
            );
            return;
        }
        // The fast validator first; the replacing decoder only for invalid bytes (WHATWG).
        let text: Cow<'_, str> = match simdutf8::basic::from_utf8(ev.data) {
            Ok(valid) => Cow::Borrowed(valid),
            Err(_) => String::from_utf8_lossy(ev.data),
        };
        let mut env = Envelope::empty(&text);
        let mut scanned = None;
        if jsonrpc::scan_single_reading_result(&text, &mut env, &mut scanned) {
            self.message(&env, scanned, ev.index, at);
            return;
        }
        match jsonrpc::parse_payload(&text) {
            Err(m) => self.not_json(m.to_string(), at),
            Ok(Payload::NotAMessage) => self.not_json("not a JSON-RPC object".into(), at),
            Ok(Payload::Single(env)) => self.message(&env, None, ev.index, at),
            Ok(Payload::Batch(items)) => {
                if !self.version.allows_batches() {
                    self.findings.add(
                        Rule::JsonrpcBatchResponse,
                        format!("an event holds a JSON array under {}", self.version),
                        at,
                    );
                }
                for item in items {
                    match item {
                        Ok(env) => self.message(&env, None, ev.index, at),
                        Err(m) => self.not_json(m.to_string(), at),
                    }
                }
            }
        }
    }

    fn on_retry(&mut self, ms: u64, offset: u64) {
        self.stream.retry_ms = Some(ms);
        self.legacy("retry", offset);
    }

    fn on_id_field(&mut self, offset: u64) {
        self.legacy("id", offset);
    }

    fn halted(&self) -> bool {
        self.stream.too_many
    }
}

impl StreamSink<'_> {
    fn legacy(&mut self, field: &str, offset: u64) {
        if self.version.is_stateless() {
            self.findings.add(
                Rule::SseLegacyField,
                format!("`{field}:` field on a 2026-07-28 stream (ignored)"),
                Some(Location {
                    offset,
                    event: None,
                }),
            );
        }
    }

    fn not_json(&mut self, detail: String, at: Option<Location>) {
        self.stream.parse_failed = true;
        self.findings.add(Rule::SseEventNotJson, detail, at);
    }

    /// One message of the stream; `scanned`: its result's members if the envelope scan read
    /// them.
    fn message(
        &mut self,
        env: &Envelope<'_>,
        scanned: ScannedMembers<'_>,
        event: u64,
        at: Option<Location>,
    ) {
        let is_response = env.kind() == Kind::Response;
        let mine = is_response && self.req.id.as_ref().is_some_and(|id| env.id_matches(id));
        // Another request of the same batch: its own row judges it.
        let sibling = is_response && !mine && self.req.ids().iter().any(|id| env.id_matches(id));
        report(self.observer, env, mine, Some(event));
        if self.stream.terminal.is_some() {
            if sibling {
                return;
            }
            self.findings
                .add(Rule::SseAfterFinal, "message after the final response", at);
            return;
        }
        if env.kind() != Kind::Response && !progress_conforms(env) {
            super::check_shape(env, None, self.version, self.findings, at);
        }
        match env.kind() {
            Kind::Request => self.stream.span.requests += 1,
            Kind::Notification if env.method == Some("notifications/progress") => {
                self.stream.span.progress += 1;
            }
            Kind::Notification => self.stream.span.notifications += 1,
            Kind::Response => {}
        }
        match env.kind() {
            Kind::Request => {
                if let Some(id) = env.id.and_then(|i| serde_json::from_str(i.get()).ok()) {
                    self.stream.list(ServerRequest {
                        method: env.method.unwrap_or("").to_owned(),
                        id,
                    });
                }
                if self.version.is_stateless() {
                    self.findings.add(
                        Rule::SseServerRequest,
                        format!(
                            "server request {:?} on the POST stream",
                            env.method.unwrap_or("?")
                        ),
                        at,
                    );
                }
            }
            Kind::Notification => self.notification(env, at),
            Kind::Response if mine => {
                // Judged where it is kept: a terminal built aside and moved in cost a copy.
                let terminal = self.stream.terminal.insert(Terminal::default());
                judge_terminal(
                    env,
                    scanned,
                    self.req,
                    self.version,
                    self.findings,
                    at,
                    terminal,
                );
            }
            Kind::Response if sibling => {}
            Kind::Response if self.stream.listen == Some(ExchangeKind::Resume) => {}
            Kind::Response if self.stream.listen.is_some() => {
                self.findings.add(
                    Rule::ListenResponse,
                    format!(
                        "response with id {} on a standalone GET stream",
                        env.id.map(|i| i.get()).unwrap_or("absent")
                    ),
                    at,
                );
            }
            Kind::Response => {
                self.stream.foreign_seen = true;
                self.findings.add(
                    Rule::SseForeignIdResponse,
                    format!(
                        "response with id {} on the stream of request {}",
                        env.id.map(|i| i.get()).unwrap_or("absent"),
                        self.req
                            .id
                            .as_ref()
                            .map(Value::to_string)
                            .unwrap_or_default()
                    ),
                    at,
                );
            }
        }
    }

    /// The token's text differs from the request's: the same value spelled differently (`1.0`
    /// for `1`), or a mismatch.
    fn token_mismatch(&mut self, token: Option<jsonrpc::Raw<'_>>, at: Option<Location>) {
        let expected = self.req.progress_token();
        let same = match (token, &expected) {
            (None, None) => true,
            (Some(raw), Some(want)) => {
                serde_json::from_str::<Value>(raw.get()).ok().as_ref() == Some(want)
            }
            _ => false,
        };
        if !same {
            self.findings.add(
                Rule::ProgressTokenMismatch,
                format!(
                    "progressToken {} but the request's is {}",
                    token.map_or("absent", |t| t.get()),
                    expected
                        .as_ref()
                        .map(Value::to_string)
                        .unwrap_or("absent".into())
                ),
                at,
            );
        }
    }

    fn notification(&mut self, env: &Envelope<'_>, at: Option<Location>) {
        match env.method {
            Some("notifications/progress") => {
                let Some(p) = env.params.filter(|p| p.readable) else {
                    return;
                };
                // Compare the token's text first (no allocation, no lookup in the request);
                // parse it only when the text differs, since equal values can be spelled
                // differently.
                let same_text =
                    p.progress_token.map(|t| t.get()) == self.stream.token_text.as_deref();
                if !same_text {
                    self.token_mismatch(p.progress_token, at);
                }
                if let Some(value) = p.progress {
                    if self.stream.last_progress.is_some_and(|last| value <= last) {
                        self.findings.add(
                            Rule::ProgressNotIncreasing,
                            format!(
                                "progress {value} after {}",
                                self.stream.last_progress.unwrap_or(0.0)
                            ),
                            at,
                        );
                    }
                    self.stream.last_progress = Some(value);
                }
            }
            // Only on a task request's stream (the extension sends them on a `tasks/get`
            // stream), and only for its task: a listen stream, or another request's, may carry
            // other tasks.
            Some(m)
                if crate::task::STATUS_NOTIFICATIONS.contains(&m)
                    && self.stream.listen.is_none()
                    && self
                        .req
                        .method
                        .as_deref()
                        .is_some_and(|m| m.starts_with("tasks/")) =>
            {
                let asked = self.req.param_str("taskId");
                if let Some(task) = crate::task::of_notification(env.raw, self.version)
                    && (asked.is_none() || task.id.is_none() || task.id.as_deref() == asked)
                {
                    self.stream.task_note = Some(task);
                }
            }
            Some("notifications/message")
                if self.version.is_stateless()
                    && !self.req.has_meta(crate::wire::META_LOG_LEVEL) =>
            {
                self.findings.add(
                    Rule::NotificationMessageWithoutLogLevel,
                    "notifications/message without a logLevel in the request _meta",
                    at,
                );
            }
            _ => {}
        }
    }
}
