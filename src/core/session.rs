//! What one exchange needs from the ones before it: the negotiated version, tool annotations
//! (for retry safety) and MRTR ids. A capture, or a live client connection, is one `Session`.

use std::collections::{HashMap, VecDeque};

use serde_json::Value;

use crate::client_checks::check_request;
use crate::discovery::Discovery;
use crate::exchange::{Exchange, Learned, Observer, Setup, Spare};
use crate::findings::Findings;
use crate::headers::Known;
use crate::lifecycle::Lifecycle;
use crate::limits::Limits;
use crate::request::Request;
use crate::rules::Rule;
use crate::verdict::{Advice, End, RetryAdvice, Verdict};
use crate::version::{ProtocolVersion, VersionSource};
use crate::vocab::kinds::ExchangeKind;

/// How many entries each bounded memory keeps: `input_required` ids (MRTR id-reuse check) and
/// resumable streams (Last-Event-ID linking).
const MEMORY: usize = 256;

/// Context shared by the exchanges of one capture or connection.
#[derive(Debug, Clone, Default)]
pub struct Session {
    limits: Limits,
    /// Version from an `initialize` exchange.
    negotiated: Option<ProtocolVersion>,
    /// Version last stated by a header or `_meta`.
    stated: Option<ProtocolVersion>,
    initialized: bool,
    /// Tool name → repeat is harmless.
    tools: HashMap<String, bool>,
    /// Tool names in the order first learned, to forget the oldest past `max_tools`.
    tool_order: VecDeque<String>,
    tools_forgotten: u64,
    server_requests_unlisted: u64,
    input_required_ids: Vec<Value>,
    /// Last-Event-ID of resumable streams → the request they answer (most recent last).
    resumable: Vec<(String, Request)>,
    next_index: u64,
    /// Session ids, deletes, server requests: rules that span exchanges.
    lifecycle: Lifecycle,
    /// The `server/discover` probe and the fallback to `initialize`.
    discovery: Discovery,
    /// The last finished exchange's buffers, lent to the next.
    spare: Spare,
    /// An error of this server came as JSON-RPC (a JSON-RPC error, or one in an error
    /// status's body): an HTML error later is more likely a box in between.
    server_errors_jsonrpc: bool,
    /// A request carrying `Authorization` got a 2xx: the token worked in this session, so a
    /// later 401 `invalid_token` is an expiry (`auth.token_expired`).
    authorized: bool,
}

impl Session {
    /// A session with these limits.
    pub fn new(limits: Limits) -> Self {
        Session {
            limits,
            ..Session::default()
        }
    }

    /// How many tool annotations were forgotten because of [`Limits::max_tools`].
    pub fn tools_forgotten(&self) -> u64 {
        self.tools_forgotten
    }

    /// How many server requests the verdicts do not list because of
    /// [`Limits::max_server_requests`] (each stream lists its most recent ones).
    pub fn server_requests_unlisted(&self) -> u64 {
        self.server_requests_unlisted
    }

    /// Remembers a tool's retry safety, forgetting the oldest tool past `max_tools`: a
    /// capture that names millions of tools cannot grow the session without bound.
    fn learn_tool(&mut self, name: String, safe: bool) {
        if let Some(known) = self.tools.get_mut(&name) {
            *known = safe;
            return;
        }
        if self.limits.max_tools == 0 {
            self.tools_forgotten += 1;
            return;
        }
        while self.tools.len() >= self.limits.max_tools {
            let Some(oldest) = self.tool_order.pop_front() else {
                break;
            };
            self.tools.remove(&oldest);
            self.tools_forgotten += 1;
        }
        self.tool_order.push_back(name.clone());
        self.tools.insert(name, safe);
    }

    /// The limits given to each exchange.
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// Starts an exchange for `req`, numbered by a running counter.
    pub fn begin(&mut self, req: Request) -> Exchange {
        let index = self.next_index;
        self.begin_at(index, req)
    }

    /// Starts an exchange for `req` at capture position `index` (the driver's: it decides
    /// first whether the entry is MCP and what it resumes).
    pub(crate) fn begin_at(&mut self, index: u64, req: Request) -> Exchange {
        self.next_index = index + 1;
        // Read once: the version decision and both sets of request rules use it.
        let header = req.headers.known(Known::McpProtocolVersion);
        let header_version = header.and_then(ProtocolVersion::parse);
        let (version, version_source) = self.decide_version(&req, header_version);
        let safe_to_repeat = match req.tool() {
            Some(tool) => self.tools.get(tool).copied().unwrap_or(false),
            None => req.method.as_deref() != Some("tools/call"),
        };
        let mut findings = Findings::default();
        let kind = ExchangeKind::of(&req);
        check_request(&req, header, version, self.initialized, &mut findings);
        self.lifecycle.check(
            &req,
            kind,
            header_version,
            version,
            self.negotiated,
            &mut findings,
        );
        self.discovery.check(&req, &mut findings);
        self.lifecycle.sent(&req, index);
        if req.is_mrtr_follow_up()
            && req
                .id
                .as_ref()
                .is_some_and(|id| self.input_required_ids.contains(id))
        {
            findings.add(
                Rule::RequestMrtrReusedId,
                format!(
                    "follow-up reuses id {} of the input_required request",
                    req.id.as_ref().map(Value::to_string).unwrap_or_default()
                ),
                None,
            );
        }
        let setup = Setup {
            index,
            version,
            version_source,
            safe_to_repeat,
            authorized_before: self.authorized,
            limits: self.limits,
            server_errors_jsonrpc: self.server_errors_jsonrpc,
        };
        Exchange::with_findings(req, kind, setup, findings, std::mem::take(&mut self.spare))
    }

    /// The request a `GET` with `Last-Event-ID: last_event_id` resumes, if an earlier exchange
    /// ended resumable with that id. The returned request keeps the original's JSON-RPC facts
    /// with the GET's method and headers, so the resumed stream is judged as its answer.
    pub(crate) fn resumption(
        &self,
        last_event_id: &str,
        get_headers: crate::Headers,
    ) -> Option<Request> {
        let (_, original) = self
            .resumable
            .iter()
            .rev()
            .find(|(id, _)| id == last_event_id)?;
        Some(Request {
            http_method: "GET".into(),
            headers: get_headers,
            ..original.clone()
        })
    }

    /// Decides the version, in order: header, `_meta`, initialize, earlier exchange, default.
    /// `header`: the version the request's `MCP-Protocol-Version` names.
    fn decide_version(
        &self,
        req: &Request,
        header: Option<ProtocolVersion>,
    ) -> (ProtocolVersion, VersionSource) {
        // `initialize` exists only up to 2025-11-25 (2026-07-28 has `server/discover`): whatever
        // a client proposes in it, the exchange itself follows the newest revision that has it.
        if req.method.as_deref() == Some("initialize") {
            let proposed = req
                .param_str("protocolVersion")
                .and_then(ProtocolVersion::parse)
                .unwrap_or(ProtocolVersion::V2025_03_26);
            return (
                proposed.min(ProtocolVersion::V2025_11_25),
                VersionSource::Initialize,
            );
        }
        if let Some(v) = header {
            return (v, VersionSource::Header);
        }
        let meta = req
            .meta_str(crate::wire::META_PROTOCOL_VERSION)
            .and_then(|v| ProtocolVersion::parse(&v));
        if let Some(v) = meta {
            return (v, VersionSource::Meta);
        }
        if let Some(v) = self.negotiated {
            return (v, VersionSource::Initialize);
        }
        if let Some(v) = self.stated {
            return (v, VersionSource::Earlier);
        }
        (ProtocolVersion::V2025_03_26, VersionSource::Default)
    }

    /// A server request (`id`, `method`) framed on a stream that is still open: waiting for the
    /// client's answer from now on, so an answer sent before the stream ends is linked.
    pub(crate) fn server_request_seen(&mut self, id: Value, method: String) {
        self.lifecycle.server_request_seen(id, method);
    }

    /// Finishes `exchange` and records what it taught.
    #[inline]
    pub fn finish(&mut self, exchange: &mut Exchange, end: End) -> Verdict {
        self.finish_with(exchange, end, &mut ())
    }

    /// Like [`finish`](Self::finish), reporting a JSON body's message to `observer`.
    ///
    /// Inlined, so the verdict is made where the caller keeps it: a 500-byte verdict
    /// returned through each level cost a copy of it at each.
    #[inline]
    pub fn finish_with(
        &mut self,
        exchange: &mut Exchange,
        end: End,
        observer: &mut dyn Observer,
    ) -> Verdict {
        let mut verdict = exchange.base_verdict(end);
        self.finish_into(exchange, end, observer, &mut verdict);
        verdict
    }

    /// [`finish_with`](Self::finish_with) into `verdict`, made by [`Exchange::base_verdict`].
    fn finish_into(
        &mut self,
        exchange: &mut Exchange,
        end: End,
        observer: &mut dyn Observer,
        verdict: &mut Verdict,
    ) {
        exchange.finish_into(end, observer, verdict);
        self.server_requests_unlisted += std::mem::take(&mut exchange.server_requests_unlisted);
        // Most exchanges learn nothing: then nothing is moved out, read or dropped.
        let mut learned = exchange.take_learned();
        self.spare = std::mem::take(&mut exchange.spare);
        if let Some(at) = self.lifecycle.deleted_at(exchange.request())
            && matches!(verdict.status, Some(400 | 404))
        {
            verdict.retry = RetryAdvice {
                advice: Advice::Reinitialize,
                after_ms: None,
                reason: format!(
                    "the client ended this session itself (DELETE, entry {at}): the client's fault, not the server's; initialize a new session"
                ).into(),
            };
        }
        self.discovery.record(
            exchange.request(),
            verdict,
            learned.as_mut().and_then(|l| l.advertised.take()),
        );
        self.lifecycle.record(exchange.request(), verdict);
        self.record(exchange.request(), verdict, learned);
    }

    fn record(&mut self, req: &Request, verdict: &Verdict, learned: Option<Box<Learned>>) {
        if verdict.error_code.is_some()
            && verdict.status_origin != Some(crate::verdict::StatusOrigin::Intermediary)
        {
            self.server_errors_jsonrpc = true;
        }
        if verdict.status.is_some_and(|s| (200..300).contains(&s))
            && req.headers.known(Known::Authorization).is_some()
        {
            self.authorized = true;
        }
        if matches!(
            verdict.protocol_version_source,
            VersionSource::Header | VersionSource::Meta
        ) {
            self.stated = Some(verdict.protocol_version);
        }
        if req.method.as_deref() == Some("initialize") {
            self.initialized = true;
            let negotiated = learned.as_ref().and_then(|l| l.negotiated);
            self.negotiated = negotiated.or(Some(verdict.protocol_version));
        }
        if let (true, Some(last)) = (verdict.resumable, &verdict.last_event_id) {
            if self.resumable.len() == MEMORY {
                self.resumable.remove(0);
            }
            self.resumable.push((last.clone(), req.clone()));
        }
        let Some(learned) = learned else {
            return;
        };
        for (name, safe) in learned.tools {
            self.learn_tool(name, safe);
        }
        if learned.input_required
            && let Some(id) = &req.id
        {
            if self.input_required_ids.len() == MEMORY {
                self.input_required_ids.remove(0);
            }
            self.input_required_ids.push(id.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exchange::ResponseHead;
    use crate::request::Headers;

    fn post(s: &mut Session, body: serde_json::Value) -> Exchange {
        let headers = Headers::from(vec![
            ("Content-Type".to_owned(), "application/json".to_owned()),
            (
                "Accept".to_owned(),
                "application/json, text/event-stream".to_owned(),
            ),
            ("MCP-Protocol-Version".to_owned(), "2025-11-25".to_owned()),
            ("Mcp-Session-Id".to_owned(), "s-1".to_owned()),
        ]);
        s.begin(Request::new("POST", headers, body.to_string().as_bytes()))
    }

    fn answer(s: &mut Session, id: &str) -> Verdict {
        let body = serde_json::json!({"jsonrpc": "2.0", "id": id, "result": {"action": "accept"}});
        let mut ex = post(s, body);
        ex.on_head(ResponseHead {
            status: 202,
            headers: Headers::default(),
        });
        s.finish(&mut ex, End::Eof)
    }

    fn unknown_answer(v: &Verdict) -> bool {
        v.violations
            .iter()
            .any(|x| x.rule == Rule::SessionResponseUnknownId)
    }

    /// A live client answers a server request while its stream is open: the request is known
    /// from the moment it was framed, and the stream's finish does not make it wait again.
    #[test]
    #[cfg(feature = "client")]
    fn a_server_request_seen_live_is_answered_once() {
        let mut s = Session::new(Limits::default());
        let call = serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                                      "params": {"name": "pay", "arguments": {}}});
        let mut ex = post(&mut s, call);
        ex.on_head(ResponseHead {
            status: 200,
            headers: Headers::from(vec![(
                "Content-Type".to_owned(),
                "text/event-stream".to_owned(),
            )]),
        });
        ex.feed(b"data: {\"jsonrpc\":\"2.0\",\"id\":\"srv-1\",\"method\":\"elicitation/create\",\"params\":{}}\n\n");
        s.server_request_seen(serde_json::json!("srv-1"), "elicitation/create".into());
        assert!(!unknown_answer(&answer(&mut s, "srv-1")));
        ex.feed(b"data: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"content\":[]}}\n\n");
        let v = s.finish(&mut ex, End::Eof);
        assert_eq!(v.server_requests.len(), 1);
        // Answered already: a second answer with the same id is one nobody waits for.
        assert!(unknown_answer(&answer(&mut s, "srv-1")));
    }

    /// A 2025-11-25 `initialize` and the answer to it, for the lifecycle tests below.
    fn initialize(s: &mut Session) -> Exchange {
        post(
            s,
            serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                           "clientInfo": {"name": "t", "version": "1"}}}),
        )
    }
    const INITIALIZED: &[u8] = br#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}"#;

    /// A JSON reply's head, then `body`.
    fn reply_json(ex: &mut Exchange, body: &[u8]) {
        ex.on_head(ResponseHead {
            status: 200,
            headers: Headers::from(vec![(
                "Content-Type".to_owned(),
                "application/json".to_owned(),
            )]),
        });
        ex.feed(body);
    }

    /// Sends `notifications/initialized` (its `202` not in yet).
    fn notify_initialized(s: &mut Session) -> Exchange {
        post(
            s,
            serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        )
    }

    /// Whether a `tools/list` sent now is flagged `session.before_initialized`.
    fn tools_list_flagged(s: &mut Session) -> bool {
        let mut call = post(
            s,
            serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
        );
        reply_json(
            &mut call,
            br#"{"jsonrpc":"2.0","id":2,"result":{"tools":[]}}"#,
        );
        s.finish(&mut call, End::Eof)
            .violations
            .iter()
            .any(|v| v.rule == Rule::SessionBeforeInitialized)
    }

    /// rmcp sends `notifications/initialized` and its next request without waiting for the
    /// `202`: the request is in order although the notification has not finished yet.
    #[test]
    fn a_request_overtaking_the_initialized_notification_is_in_order() {
        let before = |notify: bool| {
            let mut s = Session::new(Limits::default());
            let mut ex = initialize(&mut s);
            reply_json(&mut ex, INITIALIZED);
            let _ = s.finish(&mut ex, End::Eof);
            let _pending = notify.then(|| notify_initialized(&mut s));
            tools_list_flagged(&mut s)
        };
        assert!(!before(true), "sent after the notification: in order");
        assert!(before(false), "no notification at all: still flagged");
    }

    /// Live, the initialize's stream can end after the client sent its notification and its
    /// next request (rmcp stops reading the stream, the proxy finishes it later): the
    /// notification still counts, as it does in the replay, where the three come one after
    /// the other. A second initialize begun after the notification starts over.
    #[test]
    fn an_initialize_ending_after_the_notification_does_not_undo_it() {
        let flagged = |reinitialize: bool| {
            let mut s = Session::new(Limits::default());
            let mut first = initialize(&mut s);
            reply_json(&mut first, INITIALIZED);
            let mut note = notify_initialized(&mut s);
            note.on_head(ResponseHead {
                status: 202,
                headers: Headers::new(),
            });
            let _ = s.finish(&mut note, End::Eof);
            let mut later = reinitialize.then(|| initialize(&mut s));
            // The first initialize ends only now.
            let _ = s.finish(&mut first, End::Eof);
            if let Some(again) = later.as_mut() {
                reply_json(again, INITIALIZED);
                let _ = s.finish(again, End::Eof);
            }
            tools_list_flagged(&mut s)
        };
        assert!(
            !flagged(false),
            "the notification came after that initialize began"
        );
        assert!(flagged(true), "a new initialize, no notification since");
    }

    #[test]
    fn tool_memory_is_bounded_by_max_tools() {
        let limits = Limits {
            max_tools: 3,
            ..Limits::default()
        };
        let mut s = Session::new(limits);
        for i in 0..10 {
            s.learn_tool(format!("tool-{i}"), true);
        }
        assert_eq!(s.tools.len(), 3);
        assert_eq!(s.tool_order.len(), 3);
        assert_eq!(s.tools_forgotten(), 7);
        assert!(s.tools.contains_key("tool-9") && !s.tools.contains_key("tool-6"));
        // Learning a known tool again updates it in place, forgetting nothing.
        s.learn_tool("tool-9".into(), false);
        assert_eq!((s.tools["tool-9"], s.tools_forgotten()), (false, 7));
    }

    /// The buffers a session lends from one exchange to the next never carry anything over:
    /// after every kind of body (a cut-off event, a BOM, a trailing CR, ids and retry, an event
    /// or body over its limit, a foreign event type, JSON over its cap), the next exchange gets
    /// the verdict it gets from a clone of the session, which starts without spare buffers.
    #[test]
    fn a_lent_buffer_judges_as_a_fresh_one() {
        let reply = r#"{"jsonrpc":"2.0","id":ID,"result":{"content":[{"type":"text","text":"hi"}],"isError":false}}"#;
        let progress = r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":ID,"progress":1}}"#;
        let sse = |body: String| ("text/event-stream", body);
        let bodies: Vec<(&str, String)> = vec![
            sse(format!("event: message\ndata: {reply}\n\n")),
            sse(format!("\u{feff}data: {progress}\n\ndata: {reply}\n\n")),
            sse(format!("data: {reply}\r")),
            sse(format!("data: {progress}\n\ndata: {reply}")),
            sse(format!("id: 7\nretry: 50\ndata: {progress}\n\n")),
            sse(format!("data: {}\n\n", "x".repeat(300))),
            sse(format!("event: other\ndata: {reply}\n\n: note\n")),
            sse(format!(
                "data: {progress}\n\ndata: {progress}\n\ndata: {progress}\n\n"
            )),
            ("application/json", reply.to_owned()),
            ("application/json", format!("[{reply}]")),
            ("application/json", format!("{reply}{}", " ".repeat(600))),
        ];
        let limits = Limits {
            max_event_bytes: 256,
            max_body_bytes: 512,
            max_events: 2,
            ..Limits::default()
        };
        let judge = |s: &mut Session, id: usize, (content_type, body): &(&str, String)| {
            let body = body.replace("ID", &id.to_string());
            let request = serde_json::json!({
                "jsonrpc": "2.0", "id": id, "method": "tools/call",
                "params": {"name": "echo", "arguments": {}, "_meta": {"progressToken": id}},
            });
            let mut ex = post(s, request);
            ex.on_head(ResponseHead {
                status: 200,
                headers: Headers::from_iter([("content-type", *content_type)]),
            });
            for chunk in body.as_bytes().chunks(7) {
                ex.feed(chunk);
            }
            s.finish(&mut ex, End::Eof)
        };
        let mut compared = 0;
        for first in &bodies {
            for then in &bodies {
                let mut lent = Session::new(limits);
                let _ = judge(&mut lent, 1, first);
                let mut fresh = lent.clone();
                assert_eq!(
                    judge(&mut lent, 2, then),
                    judge(&mut fresh, 2, then),
                    "{then:?} after {first:?}"
                );
                compared += 1;
            }
        }
        assert_eq!(compared, bodies.len() * bodies.len());
    }

    /// A stream lists its most recent `max_server_requests` server requests and counts the
    /// rest, so an endless stream of them cannot grow a verdict; a lent stream starts anew.
    #[test]
    fn server_requests_past_the_limit_are_counted_not_listed() {
        let body: String = (1..=5)
            .map(|i| {
                format!(
                    "data: {{\"jsonrpc\":\"2.0\",\"id\":\"s-{i}\",\"method\":\"roots/list\"}}\n\n"
                )
            })
            .collect();
        for (max, listed) in [
            (2, vec!["s-4", "s-5"]),
            (0, vec![]),
            (9, vec!["s-1", "s-2", "s-3", "s-4", "s-5"]),
        ] {
            let mut s = Session::new(Limits {
                max_server_requests: max,
                ..Limits::default()
            });
            for round in 1..=2u64 {
                let request = serde_json::json!({
                    "jsonrpc": "2.0", "id": round, "method": "tools/call",
                    "params": {"name": "echo", "arguments": {}},
                });
                let mut ex = post(&mut s, request);
                ex.on_head(ResponseHead {
                    status: 200,
                    headers: Headers::from_iter([("content-type", "text/event-stream")]),
                });
                ex.feed(body.as_bytes());
                let v = s.finish(&mut ex, End::Eof);
                let ids: Vec<&str> = v
                    .server_requests
                    .iter()
                    .filter_map(|r| r.id.as_str())
                    .collect();
                assert_eq!(ids, listed, "max {max}");
                assert_eq!(
                    s.server_requests_unlisted(),
                    round * (5 - listed.len() as u64)
                );
            }
        }
    }
}
