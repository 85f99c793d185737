//! Replays captured exchanges through the core, in order, with one [`Session`] per capture so
//! that each exchange is judged with what the earlier ones established.

use std::io::Read;

use serde::Serialize;

use crate::exchange::Observer;
use crate::har::{self, Entry, HarError};
use crate::limits::Limits;
use crate::redact;
use crate::request::{BodyKind, Request};
use crate::session::Session;
use crate::verdict::Verdict;

/// An entry that was not judged, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Skipped {
    /// Position in the capture.
    pub index: u64,
    /// Why it was not judged.
    pub reason: String,
}

/// What replaying one entry gave.
#[derive(Debug, Clone, PartialEq)]
pub enum Item {
    /// An MCP exchange and its verdict.
    Verdict(Box<Verdict>),
    /// Not an MCP exchange.
    Skipped(Skipped),
}

/// Why an entry is not an MCP exchange, or `None` if it is one.
pub fn not_mcp(entry: &Entry, req: &Request) -> Option<String> {
    let has_mcp_header = req.headers.get("mcp-protocol-version").is_some()
        || req.headers.get("mcp-session-id").is_some();
    match (req.http_method.as_str(), req.kind) {
        ("POST", BodyKind::Unreadable) if has_mcp_header => None,
        ("POST", BodyKind::None) if has_mcp_header => None,
        ("POST", BodyKind::Unreadable | BodyKind::None) => Some(format!(
            "POST {} without a JSON-RPC body",
            redact::url(&entry.url)
        )),
        ("POST", _) => None,
        ("GET", BodyKind::Request) => None, // a resumption linked to its request
        (m, _) if has_mcp_header => Some(format!(
            "{m} {}: standalone stream or session request, not a request/response exchange",
            redact::url(&entry.url)
        )),
        (m, _) => Some(format!("{m} {}: not MCP", redact::url(&entry.url))),
    }
}

/// Judges one entry, feeding its body in chunks whose sizes come from `chunks` (cycled by the
/// caller as it likes; a size of 0 is treated as 1). Returns `Skipped` for non-MCP entries.
pub fn judge_entry(
    session: &mut Session,
    entry: &Entry,
    chunks: &mut dyn Iterator<Item = usize>,
) -> Item {
    judge_entry_with(session, entry, chunks, &mut ())
}

/// Like [`judge_entry`], reporting every SSE event and JSON-RPC message to `observer` (reports
/// draw their timelines from it).
pub fn judge_entry_with(
    session: &mut Session,
    entry: &Entry,
    chunks: &mut dyn Iterator<Item = usize>,
    observer: &mut dyn Observer,
) -> Item {
    let mut req = Request::new(
        &entry.method,
        entry.request_headers.clone(),
        &entry.request_body,
    );
    // A GET with Last-Event-ID that resumes an earlier stream is judged as that request's answer.
    if req.http_method == "GET"
        && let Some(last) = entry.request_headers.get("last-event-id")
        && let Some(resumed) = session.resumption(last, entry.request_headers.clone())
    {
        req = resumed;
    }
    if let Some(reason) = not_mcp(entry, &req) {
        return Item::Skipped(Skipped {
            index: entry.index,
            reason,
        });
    }
    let mut exchange = session.begin_at(entry.index, req);
    if let Some(head) = &entry.response {
        exchange.on_head(head.clone());
        let mut rest = &entry.response_body[..];
        while !rest.is_empty() {
            let n = chunks.next().unwrap_or(rest.len()).clamp(1, rest.len());
            exchange.feed_with(&rest[..n], observer);
            rest = &rest[n..];
        }
    }
    Item::Verdict(Box::new(session.finish_with(
        &mut exchange,
        entry.end,
        observer,
    )))
}

/// What a replay leaves behind besides its items: what a limit made it forget.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReplayStats {
    /// Tool annotations forgotten past [`Limits::max_tools`].
    pub tools_forgotten: u64,
}

/// Replays a HAR document from `reader`, calling `each` for every entry in order.
///
/// # Errors
/// When the capture is unusable; entries before the problem have been delivered.
pub fn replay_har<R: Read>(
    reader: R,
    limits: Limits,
    each: &mut dyn FnMut(Item),
) -> Result<ReplayStats, HarError> {
    let mut session = Session::new(limits);
    har::read_entries(reader, &mut |entry| {
        each(judge_entry(&mut session, &entry, &mut std::iter::empty()));
    })?;
    Ok(ReplayStats {
        tools_forgotten: session.tools_forgotten(),
    })
}

/// Decides the exit code of a run: it passes when every exchange is complete, except that a
/// refused `server/discover` directly followed by an `initialize` is how a client detects a
/// legacy server (the 2026-07-28 backward-compatibility probe), not a failure.
#[derive(Debug, Clone, Copy, Default)]
pub struct Tally {
    total: u64,
    incomplete: u64,
    forgiven: u64,
    discover_refused: bool,
}

impl Tally {
    /// Counts one verdict, in capture order.
    pub fn add(&mut self, v: &Verdict) {
        let method = v.method.as_deref();
        self.total += 1;
        if self.discover_refused && method == Some("initialize") {
            self.incomplete -= 1;
            self.forgiven += 1;
        }
        self.discover_refused = false;
        if !v.complete {
            self.incomplete += 1;
            self.discover_refused = method == Some("server/discover");
        }
    }

    /// Starts a new capture (a refused discover does not carry over).
    pub fn next_capture(&mut self) {
        self.discover_refused = false;
    }

    /// Every exchange counted was complete (or a forgiven legacy probe).
    pub fn all_complete(&self) -> bool {
        self.incomplete == 0
    }

    /// Exchanges counted.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// Incomplete exchanges that fail the run (forgiven legacy probes not included).
    pub fn incomplete(&self) -> u64 {
        self.incomplete
    }

    /// Refused `server/discover` probes forgiven because an `initialize` followed.
    pub fn forgiven(&self) -> u64 {
        self.forgiven
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{End, Headers, ResponseHead, Session};

    fn verdict(method: &str, status: u16) -> Verdict {
        let mut session = Session::default();
        let body = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"{method}","params":{{}}}}"#);
        let mut ex = session.begin(Request::new("POST", Headers::new(), body.as_bytes()));
        ex.on_head(ResponseHead {
            status,
            headers: Headers::from_iter([("Content-Type", "application/json")]),
        });
        ex.feed(br#"{"jsonrpc":"2.0","id":1,"result":{}}"#);
        session.finish(&mut ex, End::Eof)
    }

    #[test]
    fn a_refused_discover_before_initialize_is_forgiven_only_there() {
        let mut t = Tally::default();
        t.add(&verdict("server/discover", 400));
        assert!(!t.all_complete());
        t.add(&verdict("initialize", 200));
        assert!(t.all_complete());

        let mut t = Tally::default();
        t.add(&verdict("server/discover", 400));
        t.add(&verdict("tools/list", 200));
        assert!(
            !t.all_complete(),
            "not followed by initialize: a real failure"
        );

        let mut t = Tally::default();
        t.add(&verdict("server/discover", 400));
        t.next_capture();
        t.add(&verdict("initialize", 200));
        assert!(!t.all_complete(), "does not carry across captures");
    }
}
