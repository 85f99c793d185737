//! Replays captured exchanges through the one exchange path ([`Driver`]), in order, with one
//! driver per capture so that each exchange is judged with what the earlier ones established.
//! This module only moves a capture's bytes and times into the driver.

use std::io::{Read, Seek};

use crate::arrival::Arrivals;
use crate::calls::{Call, Calls, ExchangeFacts, rfc3339_ms};
use crate::driver::{Driver, Flight, Sent, Times};
use crate::exchange::Observer;
use crate::har::{self, Entry, EntryHead, EntrySink, EntryTail, HarError};
use crate::limits::Limits;
use crate::request::Request;
use crate::verdict::Verdict;

pub use crate::driver::Skipped;

/// What replaying one entry gave.
#[derive(Debug, Clone, PartialEq)]
pub enum Item {
    /// An MCP exchange and its verdict.
    Verdict(Box<Verdict>),
    /// Not an MCP exchange.
    Skipped(Skipped),
}

/// Why an entry is not an MCP exchange, or `None` if it is one (the driver's rule,
/// [`not_mcp`](crate::not_mcp)).
pub fn not_mcp(entry: &Entry, req: &Request) -> Option<String> {
    crate::driver::not_mcp(&entry.url, req)
}

/// Judges entries as a reader gives them, piece by piece, with one [`Driver`].
struct Judge<'a> {
    driver: &'a mut Driver,
    current: Option<Flight>,
    chunks: &'a mut dyn Iterator<Item = usize>,
    observer: &'a mut dyn Observer,
    each: &'a mut dyn FnMut(Item),
}

impl EntrySink for Judge<'_> {
    fn begin(&mut self, head: EntryHead) {
        let mut flight = self.driver.begin(Sent {
            index: Some(head.index),
            method: &head.method,
            url: &head.url,
            headers: head.request_headers,
            body: &head.request_body,
            started: None,
            from_client: false,
        });
        if let Some(response) = head.response {
            flight.on_head(response);
        }
        self.current = Some(flight);
    }

    fn body(&mut self, mut piece: &[u8]) {
        let Some(flight) = self.current.as_mut() else {
            return;
        };
        // Cut as the caller's chunk sizes say (tests prove the verdict does not depend on it).
        while !piece.is_empty() {
            let n = self
                .chunks
                .next()
                .unwrap_or(piece.len())
                .clamp(1, piece.len());
            flight.feed(&piece[..n], self.observer);
            piece = &piece[n..];
        }
    }

    fn finish(&mut self, tail: EntryTail) {
        let Some(flight) = self.current.take() else {
            return;
        };
        let arrivals = arrivals_of(&tail);
        let times = Times {
            started: tail.started,
            elapsed_ms: tail.time_ms,
            // The head came after sending and waiting (HAR's `send` and `wait` phases).
            head_ms: tail
                .timings
                .and_then(|t| Some(t.send.unwrap_or(0.0) + t.wait?)),
            timeout_ms: tail.timeout_ms,
            error: tail.error,
            arrivals,
        };
        let finished = self.driver.finish(flight, tail.end, times, self.observer);
        if let Some(skipped) = finished.skipped {
            (self.each)(Item::Skipped(skipped));
        }
        for verdict in finished.rows {
            (self.each)(Item::Verdict(Box::new(verdict)));
        }
    }
}

/// Judges one entry, feeding its body in chunks whose sizes come from `chunks` (cycled by the
/// caller as it likes; a size of 0 is treated as 1). Returns `Skipped` for non-MCP entries. For
/// a 2025-03-26 batch this is the row of its first request; [`judge_entry_rows`] gives them all.
pub fn judge_entry(
    driver: &mut Driver,
    entry: &Entry,
    chunks: &mut dyn Iterator<Item = usize>,
) -> Item {
    judge_entry_with(driver, entry, chunks, &mut ())
}

/// Like [`judge_entry`], reporting every SSE event and JSON-RPC message to `observer` (reports
/// draw their timelines from it).
pub fn judge_entry_with(
    driver: &mut Driver,
    entry: &Entry,
    chunks: &mut dyn Iterator<Item = usize>,
    observer: &mut dyn Observer,
) -> Item {
    let mut first = None;
    judge_entry_rows_with(driver, entry, chunks, observer, &mut |item| {
        first.get_or_insert(item);
    });
    first.unwrap_or_else(|| {
        Item::Skipped(Skipped {
            index: entry.index,
            reason: "no rows".into(),
        })
    })
}

/// Judges one entry like [`judge_entry`], giving one row per request id of a batch (each with
/// its `batch_position`), one row otherwise.
pub fn judge_entry_rows(
    driver: &mut Driver,
    entry: &Entry,
    chunks: &mut dyn Iterator<Item = usize>,
    each: &mut dyn FnMut(Item),
) {
    judge_entry_rows_with(driver, entry, chunks, &mut (), each);
}

/// Like [`judge_entry_rows`], reporting events and messages to `observer`. Runs through the
/// same sink as streaming replay.
pub fn judge_entry_rows_with(
    driver: &mut Driver,
    entry: &Entry,
    chunks: &mut dyn Iterator<Item = usize>,
    observer: &mut dyn Observer,
    each: &mut dyn FnMut(Item),
) {
    let mut judge = Judge {
        driver,
        current: None,
        chunks,
        observer,
        each,
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
        body_captured: entry.end != crate::End::NotCaptured,
        started: entry.started.clone(),
        time_ms: entry.time_ms,
        timings: entry.timings,
        timeout_ms: entry.timeout_ms,
        error: entry.error.clone(),
        arrivals: entry.arrivals.clone(),
    });
}

/// When an entry's body arrived: this tool's recorded marks; else, from HAR `timings`, the
/// whole body somewhere in the `receive` phase that ended at `time` (a window as wide as
/// `receive`: only a short one can show a burst); else unknown.
fn arrivals_of(tail: &EntryTail) -> Option<Arrivals> {
    if !tail.arrivals.is_empty() {
        return Some(Arrivals::from_marks(&tail.arrivals));
    }
    let total = tail.time_ms.filter(|t| t.is_finite() && *t >= 0.0)?;
    let receive = tail.timings?.receive?;
    let to = total as u64;
    let mut a = Arrivals::default();
    a.note(u64::MAX, to.saturating_sub(receive.ceil() as u64), to);
    Some(a)
}

/// What a replay leaves behind besides its items: what a limit made it forget.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReplayStats {
    /// Tool annotations forgotten past [`Limits::max_tools`].
    pub tools_forgotten: u64,
    /// Server requests left out of their verdicts past [`Limits::max_server_requests`].
    pub server_requests_unlisted: u64,
}

/// Runs `read` with a fresh session's judge of the entries it gives.
fn judged(
    limits: Limits,
    each: &mut dyn FnMut(Item),
    read: impl FnOnce(usize, &mut Judge<'_>) -> Result<(), HarError>,
) -> Result<ReplayStats, HarError> {
    let mut driver = Driver::new(limits);
    let mut judge = Judge {
        driver: &mut driver,
        current: None,
        chunks: &mut std::iter::empty(),
        observer: &mut (),
        each,
    };
    read(har::hold_cap(&limits), &mut judge)?;
    Ok(ReplayStats {
        tools_forgotten: driver.session().tools_forgotten(),
        server_requests_unlisted: driver.session().server_requests_unlisted(),
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

/// Judges one entry streamed, then gives each row's verdict with its request's facts.
struct WithFacts<'a> {
    judge: Judge<'a>,
    rows: &'a std::cell::RefCell<Vec<Item>>,
    request: (crate::request::Headers, Vec<u8>),
    each: &'a mut dyn FnMut(ExchangeFacts<'_>),
}

impl EntrySink for WithFacts<'_> {
    fn begin(&mut self, head: EntryHead) {
        // The request only (small, and held by the reader anyway): never the response body.
        self.request = (head.request_headers.clone(), head.request_body.clone());
        self.judge.begin(head);
    }

    fn body(&mut self, piece: &[u8]) {
        self.judge.body(piece);
    }

    fn finish(&mut self, tail: EntryTail) {
        let started_ms = tail.started.as_deref().and_then(rfc3339_ms);
        let duration_ms = tail.time_ms.filter(|t| *t >= 0.0).map(|t| t as u64);
        self.judge.finish(tail);
        let rows = std::mem::take(&mut *self.rows.borrow_mut());
        for item in rows {
            if let Item::Verdict(verdict) = item {
                (self.each)(ExchangeFacts {
                    verdict: &verdict,
                    headers: &self.request.0,
                    body: &self.request.1,
                    started_ms,
                    duration_ms,
                });
            }
        }
    }
}

/// Replays a HAR file streamed like [`replay_har_seekable`] (response bodies never held whole)
/// and gives every verdict with the facts [`Calls`] groups by, as [`facts_of`] reads them from
/// a whole entry: for callers that group calls and keep their own per-exchange notes (`diff`).
///
/// # Errors
/// When the capture is unusable; verdicts before the problem have been delivered.
pub fn replay_facts_seekable<R: Read + Seek>(
    reader: R,
    limits: Limits,
    each: &mut dyn FnMut(ExchangeFacts<'_>),
) -> Result<ReplayStats, HarError> {
    let rows = std::cell::RefCell::new(Vec::new());
    let mut push = |item: Item| rows.borrow_mut().push(item);
    let mut driver = Driver::new(limits);
    let mut sink = WithFacts {
        judge: Judge {
            driver: &mut driver,
            current: None,
            chunks: &mut std::iter::empty(),
            observer: &mut (),
            each: &mut push,
        },
        rows: &rows,
        request: Default::default(),
        each,
    };
    har::stream_entries_seekable(reader, har::hold_cap(&limits), &mut sink)?;
    drop(sink);
    Ok(ReplayStats {
        tools_forgotten: driver.session().tools_forgotten(),
        server_requests_unlisted: driver.session().server_requests_unlisted(),
    })
}

/// `next` retries the handshake that `refused` failed, so `refused` does not fail the run: a
/// refused `server/discover` followed by `initialize` when the refusal looks like a legacy server
/// (`400`/`404`/`405` with an empty or unrecognised body: how a client detects one), a refused
/// `server/discover` followed by `server/discover` again (the retry after a version rejection),
/// or a handshake refused for its version (`-32022`) followed by another handshake. A 5xx or
/// other transient failure followed by `initialize` is no legacy signal and is not forgiven
/// (that `initialize` breaks `request.fallback_on_transient_error`). [`Tally`] applies it.
pub fn forgives(refused: &Verdict, next: &Verdict) -> bool {
    Refusal::of(
        refused.method.as_deref(),
        refused.complete,
        refused.status,
        refused.error_code,
    )
    .is_some_and(|r| r.retried_by(next.method.as_deref()))
}

/// `v` is a standalone `GET` stream (kind `listen`) that the server refused with a 4xx other
/// than the allowed 405: the client's own optional stream, so [`Tally`] does not fail a run
/// for it (the row keeps its outcome).
pub fn is_refused_listen(v: &Verdict) -> bool {
    v.kind == Some(crate::ExchangeKind::Listen)
        && !v.complete
        && v.status.is_some_and(|s| (400..500).contains(&s))
}

/// `v` is a refused `server/discover` that an `initialize` may follow without blame: refused
/// like a legacy server (`400`/`404`/`405` with an empty or unrecognised body: the fallback
/// HTTP-26 describes), or for its version (`-32022`: the server speaks no revision the probe
/// offered, so the client negotiates an older one). A 5xx or an auth refusal is neither.
pub fn is_legacy_probe(v: &Verdict) -> bool {
    Refusal::of(v.method.as_deref(), v.complete, v.status, v.error_code)
        .is_some_and(|r| r.discover && (r.legacy || r.version))
}

/// An incomplete handshake that a next handshake may retry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Refusal {
    /// `server/discover` (else `initialize`).
    discover: bool,
    /// Refused for its version (`-32022`): negotiation.
    version: bool,
    /// Looks like a legacy server ([`crate::discovery::looks_legacy`]).
    legacy: bool,
}

impl Refusal {
    fn of(
        method: Option<&str>,
        complete: bool,
        status: Option<u16>,
        error_code: Option<i64>,
    ) -> Option<Refusal> {
        let discover = method == Some(crate::discovery::DISCOVER);
        let version = error_code == Some(crate::vocab::codes::UNSUPPORTED_PROTOCOL_VERSION);
        (!complete && (discover || (method == Some("initialize") && version))).then(|| Refusal {
            discover,
            version,
            legacy: crate::discovery::looks_legacy(status, error_code),
        })
    }

    fn retried_by(self, next: Option<&str>) -> bool {
        match next {
            Some("initialize") => self.version || (self.discover && self.legacy),
            Some(m) if m == crate::discovery::DISCOVER => self.version || self.discover,
            _ => false,
        }
    }
}

/// Replays a HAR document from `reader` and groups its exchanges into logical calls, calling
/// `each` for every call in the order they began.
///
/// # Errors
/// When the capture is unusable; calls before the problem have been delivered.
pub fn replay_calls<R: Read>(
    reader: R,
    limits: Limits,
    each: &mut dyn FnMut(Call),
) -> Result<(), HarError> {
    let mut driver = Driver::new(limits);
    let mut calls = Calls::new();
    let result = har::read_entries(reader, &mut |entry| {
        group_entry(
            &mut driver,
            &mut calls,
            &entry,
            &mut std::iter::empty(),
            each,
        );
    });
    calls.finish(each);
    result
}

/// Groups exchanges judged live into calls, given the entries the client recorded for them (one
/// per verdict, in the same order): the grouping replay uses, so that live calls equal the calls
/// of the recorded capture.
pub fn calls_of(verdicts: &[Verdict], entries: &[Entry]) -> Vec<Call> {
    let mut calls = Calls::new();
    let mut out = Vec::new();
    for (verdict, entry) in verdicts.iter().zip(entries) {
        calls.add(facts_of(verdict, entry), &mut |c| out.push(c));
    }
    calls.finish(&mut |c| out.push(c));
    out
}

/// Judges one entry (as [`judge_entry_rows`]) and adds its rows to `calls`.
pub fn group_entry(
    driver: &mut Driver,
    calls: &mut Calls,
    entry: &Entry,
    chunks: &mut dyn Iterator<Item = usize>,
    each: &mut dyn FnMut(Call),
) {
    judge_entry_rows(driver, entry, chunks, &mut |item| {
        if let Item::Verdict(verdict) = item {
            calls.add(facts_of(&verdict, entry), each);
        }
    });
}

/// What the grouping reads from a verdict and the entry it judged.
pub fn facts_of<'a>(verdict: &'a Verdict, entry: &'a Entry) -> ExchangeFacts<'a> {
    ExchangeFacts {
        verdict,
        headers: &entry.request_headers,
        body: &entry.request_body,
        started_ms: entry.started.as_deref().and_then(rfc3339_ms),
        duration_ms: entry.time_ms.filter(|t| *t >= 0.0).map(|t| t as u64),
    }
}

/// Decides the exit code of a run: it passes when every exchange is complete, except that a
/// refused handshake retried by the next exchange is not a failure ([`forgives`]): a refused
/// `server/discover` directly followed by an `initialize` is how a client detects a legacy
/// server (the 2026-07-28 backward-compatibility probe), and a version rejection retried with a
/// supported version is negotiation.
///
/// Likewise a 2025-x request whose stream ended early but resumably (advice `resume`) does not
/// fail the run once a resumption (`GET` with `Last-Event-ID`) brought its answer: the
/// transport says a client should reconnect, and the call completed. And a standalone `GET`
/// stream (kind `listen`) that the server refuses with a 4xx does not fail the run either: the
/// client opens it on its own account, in case the server has something to send, and loses
/// nothing it asked for (the row keeps its outcome; 405 is the allowed refusal).
#[derive(Debug, Clone, Copy, Default)]
pub struct Tally {
    total: u64,
    incomplete: u64,
    forgiven: u64,
    refused: Option<Refusal>,
    resumed: u64,
    refused_listens: u64,
    /// Hashes of the ids of requests whose stream broke resumably, not yet resumed (a few:
    /// the most recent win).
    broken: [Option<u64>; BROKEN_KEPT],
}

/// Broken streams remembered by [`Tally`] for a later resumption.
const BROKEN_KEPT: usize = 8;

/// A request id as a hash (so that [`Tally`] stays `Copy` and bounded).
fn id_hash(id: &serde_json::Value) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    id.to_string().hash(&mut h);
    h.finish()
}

impl Tally {
    /// Counts one verdict, in capture order.
    pub fn add(&mut self, v: &Verdict) {
        self.count(v.method.as_deref(), v.complete, v.status, v.error_code);
        if is_refused_listen(v) {
            self.incomplete -= 1;
            self.refused_listens += 1;
            return;
        }
        let Some(id) = v.id.as_ref().map(id_hash) else {
            return;
        };
        let resume = v.kind == Some(crate::ExchangeKind::Resume);
        if resume && v.complete {
            if let Some(slot) = self.broken.iter_mut().find(|b| **b == Some(id)) {
                *slot = None;
                self.incomplete -= 1;
                self.resumed += 1;
            }
        } else if !v.complete && v.retry.advice == crate::Advice::Resume {
            self.broken.rotate_right(1);
            self.broken[0] = Some(id);
        }
    }

    /// Standalone `GET` streams refused with a 4xx (not failing the run).
    pub fn refused_listens(&self) -> u64 {
        self.refused_listens
    }

    /// Incomplete exchanges whose stream a later resumption answered.
    pub fn resumed(&self) -> u64 {
        self.resumed
    }

    /// Counts one logical call, in capture order (the same rule, one level up).
    pub fn add_call(&mut self, c: &Call) {
        let status = c.http_statuses.last().copied().flatten();
        self.count(c.method.as_deref(), c.complete, status, c.error_code);
    }

    fn count(
        &mut self,
        method: Option<&str>,
        complete: bool,
        status: Option<u16>,
        error_code: Option<i64>,
    ) {
        self.total += 1;
        if self.refused.is_some_and(|r| r.retried_by(method)) {
            self.incomplete -= 1;
            self.forgiven += 1;
        }
        self.refused = Refusal::of(method, complete, status, error_code);
        if !complete {
            self.incomplete += 1;
        }
    }

    /// Starts a new capture (a refused discover does not carry over).
    pub fn next_capture(&mut self) {
        self.refused = None;
        self.broken = [None; BROKEN_KEPT];
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

    /// Only a legacy-looking refusal (400/404/405, no recognised modern error) makes the
    /// fallback to initialize a detection step; a transient failure or a modern refusal stays
    /// a failure of the run.
    #[test]
    fn only_a_legacy_refusal_of_discover_is_forgiven_by_initialize() {
        let with_code = |status: u16, code: i64| {
            let mut v = verdict("server/discover", status);
            v.error_code = Some(code);
            v
        };
        for refused in [
            verdict("server/discover", 404),
            verdict("server/discover", 405),
            with_code(400, -32000),
        ] {
            let mut t = Tally::default();
            t.add(&refused);
            t.add(&verdict("initialize", 200));
            assert!(
                t.all_complete(),
                "{:?} {:?}",
                refused.status,
                refused.error_code
            );
            assert_eq!(t.forgiven(), 1);
        }
        for refused in [
            verdict("server/discover", 500),
            verdict("server/discover", 503),
            verdict("server/discover", 429),
            verdict("server/discover", 401),
            with_code(400, -32020),
            with_code(400, -32021),
        ] {
            let mut t = Tally::default();
            t.add(&refused);
            t.add(&verdict("initialize", 200));
            assert!(
                !t.all_complete(),
                "{:?} {:?}",
                refused.status,
                refused.error_code
            );
            assert_eq!(t.forgiven(), 0);
        }
        assert!(forgives(
            &verdict("server/discover", 404),
            &verdict("initialize", 200)
        ));
        assert!(!forgives(
            &verdict("server/discover", 502),
            &verdict("initialize", 200)
        ));
        // A transient failure retried with discover is still a retry of the probe.
        assert!(forgives(
            &verdict("server/discover", 503),
            &verdict("server/discover", 200)
        ));
        // What the report shows as the probe (not painted as a failure).
        assert!(is_legacy_probe(&verdict("server/discover", 404)));
        assert!(is_legacy_probe(&with_code(400, -32022)));
        assert!(!is_legacy_probe(&verdict("server/discover", 503)));
        assert!(!is_legacy_probe(&with_code(400, -32020)));
        assert!(!is_legacy_probe(&verdict("tools/list", 404)));
    }

    #[test]
    fn a_broken_stream_resumed_to_its_answer_does_not_fail() {
        let mut broken = verdict("tools/call", 200);
        broken.id = Some(serde_json::json!(4));
        broken.complete = false;
        broken.retry.advice = crate::Advice::Resume;
        let mut resumed = broken.clone();
        resumed.kind = Some(crate::ExchangeKind::Resume);
        resumed.complete = true;
        resumed.retry.advice = crate::Advice::None;
        let mut t = Tally::default();
        t.add(&broken);
        assert!(!t.all_complete());
        t.add(&resumed);
        assert!(t.all_complete());
        assert_eq!((t.resumed(), t.incomplete()), (1, 0));
        // A resumption of another request forgives nothing; nor does one that failed too.
        let mut t = Tally::default();
        t.add(&broken);
        let mut other = resumed.clone();
        other.id = Some(serde_json::json!(5));
        t.add(&other);
        let mut failed = resumed.clone();
        failed.complete = false;
        t.add(&failed);
        assert_eq!((t.resumed(), t.incomplete()), (0, 2));
    }

    #[test]
    fn a_refused_listen_does_not_fail_but_a_broken_one_does() {
        let listen = |status: u16, complete: bool| {
            let mut v = verdict("tools/list", status);
            v.kind = Some(crate::ExchangeKind::Listen);
            v.method = None;
            v.complete = complete;
            v
        };
        let mut t = Tally::default();
        t.add(&listen(404, false));
        assert!(t.all_complete());
        assert_eq!(t.refused_listens(), 1);
        t.add(&listen(500, false));
        t.add(&listen(200, false));
        assert_eq!((t.refused_listens(), t.incomplete()), (1, 2));
    }

    #[test]
    fn a_version_rejection_retried_is_forgiven() {
        let rejected = |method: &str| {
            let mut v = verdict(method, 400);
            v.error_code = Some(-32022);
            v
        };
        let mut t = Tally::default();
        t.add(&rejected("server/discover"));
        t.add(&verdict("server/discover", 200));
        assert!(
            t.all_complete(),
            "discover retried with a supported version"
        );

        let mut t = Tally::default();
        t.add(&rejected("initialize"));
        t.add(&verdict("initialize", 200));
        assert!(
            t.all_complete(),
            "initialize retried with a supported version"
        );

        let mut t = Tally::default();
        t.add(&verdict("initialize", 400));
        t.add(&verdict("initialize", 200));
        assert!(
            !t.all_complete(),
            "only a version rejection is a negotiation step"
        );

        let mut t = Tally::default();
        t.add(&rejected("server/discover"));
        t.add(&verdict("server/discover", 500));
        assert!(!t.all_complete(), "a failed retry still fails the run");
    }
}
