//! Session-level facts: the requests a server sent on its streams, and the lifecycle rules
//! that need more than one exchange (a request after the client's own `DELETE`, a session id that
//! changes, a request before `notifications/initialized`, a version header that disagrees with
//! the negotiated version, an answer to a server request that was never sent).

use serde_json::Value;

use crate::findings::Findings;
use crate::redact::session_stand_in;
use crate::request::Request;
use crate::rules::Rule;
use crate::verdict::Verdict;
use crate::version::ProtocolVersion;
use crate::vocab::kinds::ExchangeKind;

/// How many server requests are remembered while waiting for the client's answer.
const PENDING: usize = 256;

/// The lifecycle state of one session, fed in exchange order.
#[derive(Debug, Clone, Default)]
pub(crate) struct Lifecycle {
    /// The session id the client has been sending.
    session_id: Option<String>,
    /// A session the client ended itself with `DELETE`, and that entry's index.
    deleted: Option<(String, u64)>,
    initialize_seen: bool,
    /// The entry index of the client's `notifications/initialized` since the last
    /// `initialize`: an index, so that an `initialize` whose stream ends after the
    /// notification was sent (a live client that does not wait for it) does not undo it.
    initialized_at: Option<u64>,
    /// Server requests not answered yet: id, method, entry index.
    pending: Vec<(Value, String, u64)>,
    /// Any server request was seen, so an unmatched answer means a wrong id.
    server_requests_seen: bool,
    /// Server requests noted while their stream was open, not yet recorded with its verdict.
    noted_live: std::collections::VecDeque<Value>,
}

impl Lifecycle {
    /// Checks `req` against what the session established, before the response. `header`: the
    /// version its `MCP-Protocol-Version` names.
    pub(crate) fn check(
        &self,
        req: &Request,
        kind: ExchangeKind,
        header: Option<ProtocolVersion>,
        version: ProtocolVersion,
        negotiated: Option<ProtocolVersion>,
        findings: &mut Findings,
    ) {
        let sid = req.session_id();
        if let (Some(sid), Some((gone, at))) = (sid, &self.deleted)
            && sid == gone
        {
            findings.add(
                Rule::SessionRequestAfterDelete,
                format!(
                    "session {} was ended by the client's own DELETE (entry {at})",
                    session_stand_in(sid)
                ),
                None,
            );
        }
        if let (Some(sid), Some(current)) = (sid, &self.session_id)
            && sid != current
            && self.deleted.as_ref().is_none_or(|(gone, _)| gone != sid)
        {
            findings.add(
                Rule::SessionIdChanged,
                format!(
                    "Mcp-Session-Id {} after {}, with no initialize between",
                    session_stand_in(sid),
                    session_stand_in(current)
                ),
                None,
            );
        }
        let method = req.method.as_deref();
        if version.has_sessions()
            && self.initialize_seen
            && self.initialized_at.is_none()
            && kind == ExchangeKind::Request
            && !matches!(method, Some("initialize" | "ping"))
        {
            findings.add(
                Rule::SessionBeforeInitialized,
                format!(
                    "{} sent before notifications/initialized",
                    method.unwrap_or("a request")
                ),
                None,
            );
        }
        if let (Some(sent), Some(agreed)) = (header, negotiated)
            && method != Some("initialize")
            && agreed.has_sessions()
            && sent != agreed
        {
            findings.add(
                Rule::SessionVersionHeader,
                format!("MCP-Protocol-Version {sent}, but initialize negotiated {agreed}"),
                None,
            );
        }
        if kind == ExchangeKind::Response
            && self.server_requests_seen
            && let Some(id) = &req.id
            && !self.pending.iter().any(|(p, _, _)| p == id)
        {
            findings.add(
                Rule::SessionResponseUnknownId,
                format!("answer with id {id}, but no server request with that id is waiting"),
                None,
            );
        }
        if kind == ExchangeKind::Resume && version.is_stateless() {
            findings.add(
                Rule::SessionResumeNotSupported,
                "GET with Last-Event-ID under 2026-07-28: streams are not resumable",
                None,
            );
        }
    }

    /// What the client has done by sending `req`, whatever the answer: its
    /// `notifications/initialized` counts from the moment it is sent, so a request sent after it
    /// is in order even when it overtakes the notification's `202` (clients such as rmcp do not
    /// wait for it, and a proxy sees the two overlap).
    pub(crate) fn sent(&mut self, req: &Request, index: u64) {
        if req.method.as_deref() == Some("notifications/initialized") {
            self.initialized_at = Some(index);
        }
    }

    /// The entry index of the client's own `DELETE` of the session `req` still uses.
    pub(crate) fn deleted_at(&self, req: &Request) -> Option<u64> {
        let (gone, at) = self.deleted.as_ref()?;
        (req.session_id() == Some(gone.as_str())).then_some(*at)
    }

    /// A server request seen on a stream that is still open: the client may answer it before
    /// the stream ends (a server that waits for the answer), so it is waiting from now on.
    /// Its entry index is not known yet: `u64::MAX` stands for it.
    pub(crate) fn server_request_seen(&mut self, id: Value, method: String) {
        if self.noted_live.len() == PENDING {
            self.noted_live.pop_front();
        }
        self.noted_live.push_back(id.clone());
        self.note(id, method, u64::MAX);
    }

    fn note(&mut self, id: Value, method: String, at: u64) {
        self.server_requests_seen = true;
        if self.pending.len() == PENDING {
            self.pending.remove(0);
        }
        self.pending.push((id, method, at));
    }

    /// Records what a finished exchange established.
    pub(crate) fn record(&mut self, req: &Request, verdict: &Verdict) {
        let kind = verdict.kind.unwrap_or_else(|| ExchangeKind::of(req));
        // The notification itself is counted when it is sent (`sent`), never here: recorded
        // after a later initialize, it would count for a session it came before.
        if req.method.as_deref() == Some("initialize") {
            self.initialize_seen = true;
            // A notification sent after this initialize began still counts: live, the
            // initialize's stream may end after the client sent it (replay meets them one
            // after the other, so both judge alike).
            if self.initialized_at.is_none_or(|at| at < verdict.index) {
                self.initialized_at = None;
            }
            self.session_id = None;
        }
        if let Some(sid) = req.session_id()
            && self.session_id.is_none()
            && self.deleted.as_ref().is_none_or(|(gone, _)| gone != sid)
        {
            self.session_id = Some(sid.to_owned());
        }
        if kind == ExchangeKind::Terminate
            && verdict.status.is_some_and(|s| (200..300).contains(&s))
            && let Some(sid) = req.session_id()
        {
            self.deleted = Some((sid.to_owned(), verdict.index));
            self.session_id = None;
        }
        for sr in &verdict.server_requests {
            // Noted while its stream was still open (a live client): not again, or an answer
            // that already came would leave it waiting forever.
            if let Some(at) = self.noted_live.iter().position(|id| *id == sr.id) {
                self.noted_live.remove(at);
                continue;
            }
            self.note(sr.id.clone(), sr.method.clone(), verdict.index);
        }
        if kind == ExchangeKind::Response
            && let Some(id) = &req.id
        {
            self.pending.retain(|(p, _, _)| p != id);
        }
    }
}
