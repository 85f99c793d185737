//! Replays captured exchanges through the core, in order, with one [`Session`] per capture so
//! that each exchange is judged with what the earlier ones established.

use std::io::{Read, Seek};

use serde::Serialize;

use crate::exchange::{Exchange, Observer};
use crate::har::{self, Entry, EntryHead, EntrySink, EntryTail, HarError};
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
    not_mcp_at(&entry.url, req)
}

fn not_mcp_at(url: &str, req: &Request) -> Option<String> {
    let has_mcp_header = req.headers.get("mcp-protocol-version").is_some()
        || req.headers.get("mcp-session-id").is_some();
    match (req.http_method.as_str(), req.kind) {
        ("POST", BodyKind::Unreadable) if has_mcp_header => None,
        ("POST", BodyKind::None) if has_mcp_header => None,
        ("POST", BodyKind::Unreadable | BodyKind::None) => {
            Some(format!("POST {} without a JSON-RPC body", redact::url(url)))
        }
        ("POST", _) => None,
        ("GET", BodyKind::Request) => None, // a resumption linked to its request
        (m, _) if has_mcp_header => Some(format!(
            "{m} {}: standalone stream or session request, not a request/response exchange",
            redact::url(url)
        )),
        (m, _) => Some(format!("{m} {}: not MCP", redact::url(url))),
    }
}

/// Judges entries as a reader gives them, piece by piece, with one [`Session`].
struct Judge<'a> {
    session: &'a mut Session,
    current: Option<Current>,
    chunks: &'a mut dyn Iterator<Item = usize>,
    observer: &'a mut dyn Observer,
    each: &'a mut dyn FnMut(Item),
}

enum Current {
    Skipped(Skipped),
    Judging(Box<Exchange>),
}

impl EntrySink for Judge<'_> {
    fn begin(&mut self, head: EntryHead) {
        let mut req = Request::new(
            &head.method,
            head.request_headers.clone(),
            &head.request_body,
        );
        // A GET with Last-Event-ID that resumes an earlier stream is judged as that request's
        // answer.
        if req.http_method == "GET"
            && let Some(last) = head.request_headers.get("last-event-id")
            && let Some(resumed) = self.session.resumption(last, head.request_headers.clone())
        {
            req = resumed;
        }
        self.current = Some(match not_mcp_at(&head.url, &req) {
            Some(reason) => Current::Skipped(Skipped {
                index: head.index,
                reason,
            }),
            None => {
                let mut exchange = self.session.begin_at(head.index, req);
                if let Some(response) = head.response {
                    exchange.on_head(response);
                }
                Current::Judging(Box::new(exchange))
            }
        });
    }

    fn body(&mut self, mut piece: &[u8]) {
        let Some(Current::Judging(exchange)) = &mut self.current else {
            return;
        };
        while !piece.is_empty() {
            let n = self
                .chunks
                .next()
                .unwrap_or(piece.len())
                .clamp(1, piece.len());
            exchange.feed_with(&piece[..n], self.observer);
            piece = &piece[n..];
        }
    }

    fn finish(&mut self, tail: EntryTail) {
        let item = match self.current.take() {
            Some(Current::Judging(mut exchange)) => Item::Verdict(Box::new(
                self.session
                    .finish_with(&mut exchange, tail.end, self.observer),
            )),
            Some(Current::Skipped(skipped)) => Item::Skipped(skipped),
            None => return,
        };
        (self.each)(item);
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
    let mut out = None;
    let mut each = |item| out = Some(item);
    let mut judge = Judge {
        session,
        current: None,
        chunks,
        observer,
        each: &mut each,
    };
    judge.begin(EntryHead {
        index: entry.index,
        method: entry.method.clone(),
        url: entry.url.clone(),
        request_headers: entry.request_headers.clone(),
        request_body: entry.request_body.clone(),
        response: entry.response.clone(),
    });
    if entry.response.is_some() {
        judge.body(&entry.response_body);
    }
    judge.finish(EntryTail {
        end: entry.end,
        body_captured: true,
        started: entry.started.clone(),
        time_ms: entry.time_ms,
        timings: entry.timings,
    });
    out.expect("finish gives an item")
}

/// What a replay leaves behind besides its items: what a limit made it forget.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReplayStats {
    /// Tool annotations forgotten past [`Limits::max_tools`].
    pub tools_forgotten: u64,
}

/// Runs `read` with a fresh session's judge of the entries it gives.
fn judged(
    limits: Limits,
    each: &mut dyn FnMut(Item),
    read: impl FnOnce(usize, &mut Judge<'_>) -> Result<(), HarError>,
) -> Result<ReplayStats, HarError> {
    let mut session = Session::new(limits);
    let mut judge = Judge {
        session: &mut session,
        current: None,
        chunks: &mut std::iter::empty(),
        observer: &mut (),
        each,
    };
    read(har::hold_cap(&limits), &mut judge)?;
    Ok(ReplayStats {
        tools_forgotten: session.tools_forgotten(),
    })
}

/// Replays a HAR document from a forward-only `reader` (a pipe), calling `each` for every
/// entry in order. Bodies are streamed into the core, never held whole (see
/// [`har::stream_entries`]).
///
/// # Errors
/// When the capture is unusable; entries before the problem have been delivered.
pub fn replay_har<R: Read>(
    reader: R,
    limits: Limits,
    each: &mut dyn FnMut(Item),
) -> Result<ReplayStats, HarError> {
    judged(limits, each, |hold_cap, judge| {
        har::stream_entries(reader, hold_cap, judge)
    })
}

/// [`replay_har`] on a seekable input (a file): a body that comes before the response head in
/// its entry is read again from its offset instead of being held.
///
/// # Errors
/// When the capture is unusable; entries before the problem have been delivered.
pub fn replay_har_seekable<R: Read + Seek>(
    reader: R,
    limits: Limits,
    each: &mut dyn FnMut(Item),
) -> Result<ReplayStats, HarError> {
    judged(limits, each, |hold_cap, judge| {
        har::stream_entries_seekable(reader, hold_cap, judge)
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
