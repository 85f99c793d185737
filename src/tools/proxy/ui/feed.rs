//! What the live page is sent: exchanges as they open (`opened`; not `open`, which
//! `EventSource` fires itself) and finish (`done`), finished exchanges as they join a call
//! (`exchange`), and calls as they close (`call`), as server-sent event frames of the existing
//! records (a [`Verdict`], a [`Call`]).
//!
//! A call closes late (when no later exchange can join it, see [`super::super::calls`]), so the
//! page also gets each exchange as soon as it is grouped, with its call's number, and draws the
//! open call from it; the `call` event then replaces that with the record.
//!
//! Memory is bounded: the last `keep` closed calls (with their exchanges), the exchanges of
//! calls still open and those in flight (at most [`PENDING_MAX`] each), and per page a queue of [`SUBSCRIBER_QUEUE`]
//! frames. Sending never waits: a page whose queue is full is dropped, and its browser's
//! `EventSource` reconnects and starts again from the kept calls (`event: reset` first).

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex};

use serde::Serialize;
use tokio::sync::mpsc;

use crate::calls::Call;
use crate::redact::Redaction;
use crate::verdict::Verdict;

use super::super::calls::CallSink;
use super::super::sinks::{ExchangeRecord, Opened, Sink};

/// Closed calls kept for the page by default (`--ui-keep`).
pub const DEFAULT_KEEP: usize = 1000;

/// Frames queued per page before it counts as too slow and is dropped.
pub const SUBSCRIBER_QUEUE: usize = 1024;

/// Exchanges of still-open calls kept at most (calls close after
/// [`OPEN_CALLS`](crate::calls::OPEN_CALLS) later ones begin; past this the oldest go).
pub const PENDING_MAX: usize = 8192;

/// Largest request body written into a curl line: the feed keeps thousands of exchanges, so a
/// larger body is left out (named, with its size) rather than kept for each.
pub const CURL_BODY_MAX: usize = 16 << 10;

/// One SSE frame (`event: …\ndata: …\n\n`), shared by every page it is sent to.
pub type Frame = Arc<str>;

/// One exchange as the page shows it: the verdict, and what the verdict leaves out.
#[derive(Serialize)]
struct Exchange<'a> {
    /// The call it joined (`null` until grouped).
    call: Option<u64>,
    /// The session it belongs to, as the policy shows it (a stand-in when redacting).
    session: Option<String>,
    /// Milliseconds from forwarding to the end of the exchange.
    duration_ms: Option<f64>,
    /// The request as a `curl` command line (secret headers redacted by the policy).
    curl: Option<String>,
    verdict: &'a Verdict,
}

/// An exchange waiting for its call to close: its JSON, and the call once grouped.
struct Pending {
    call: Option<u64>,
    json: serde_json::Value,
}

#[derive(Default)]
struct State {
    /// The frames of the last closed calls, oldest first.
    calls: VecDeque<Frame>,
    /// Exchanges of calls not closed yet, by exchange index.
    pending: BTreeMap<u64, Pending>,
    /// The `opened` frames of exchanges in flight, by exchange index.
    inflight: BTreeMap<u64, Frame>,
    pages: Vec<mpsc::Sender<Frame>>,
}

/// The [`Sink`] and [`CallSink`] behind the live page; [`Feed::subscribe`] gives each page its
/// start and its stream.
pub struct Feed {
    state: Mutex<State>,
    keep: usize,
    redaction: Redaction,
    /// The upstream URL as shown, for the curl lines.
    url: String,
}

impl Feed {
    /// Keeps the last `keep` calls; `redaction` is the proxy's policy, `upstream` its endpoint.
    pub fn new(keep: usize, redaction: Redaction, upstream: &str) -> Feed {
        let url = redaction.url(upstream).into_owned();
        Feed {
            state: Mutex::new(State::default()),
            keep,
            redaction,
            url,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A new page: the frames it starts from (a reset, the kept calls, the open calls'
    /// exchanges) and the receiver for everything after, in order with them.
    pub fn subscribe(&self) -> (Vec<Frame>, mpsc::Receiver<Frame>) {
        let (tx, rx) = mpsc::channel(SUBSCRIBER_QUEUE);
        let mut s = self.lock();
        let start = self.start(&s);
        s.pages.push(tx);
        (start, rx)
    }

    /// What a page would start from, without subscribing it: the kept calls and the open
    /// calls' exchanges (`/events?snapshot=1`, for a page saved or rendered once).
    pub fn snapshot(&self) -> Vec<Frame> {
        self.start(&self.lock())
    }

    fn start(&self, s: &State) -> Vec<Frame> {
        let mut start = vec![frame("reset", &serde_json::json!({ "keep": self.keep }))];
        start.extend(s.calls.iter().cloned());
        for p in s.pending.values().filter(|p| p.call.is_some()) {
            start.push(frame("exchange", &p.json));
        }
        start.extend(s.inflight.values().cloned());
        start
    }

    /// The session of `request`, as the policy shows it.
    fn session(&self, request: &crate::request::Request) -> Option<String> {
        let id = request.headers.get("mcp-session-id")?;
        Some(
            self.redaction
                .header_value("mcp-session-id", id)
                .into_owned(),
        )
    }

    /// Pages connected now.
    pub fn pages(&self) -> usize {
        self.lock().pages.len()
    }

    /// Closed calls kept now.
    pub fn kept(&self) -> usize {
        self.lock().calls.len()
    }

    /// Sends `f` to every page without waiting; a page that is gone or too slow is dropped.
    fn send(s: &mut State, f: &Frame) {
        s.pages.retain(|tx| tx.try_send(f.clone()).is_ok());
    }

    fn curl(&self, record: &ExchangeRecord<'_>) -> Option<String> {
        let request = record.request?;
        let mut line = format!("curl -X {} {}", record.http_method, shell_quote(&self.url));
        for (name, value) in self.redaction.headers(&request.headers).iter() {
            // curl writes these itself, for the URL and body it sends.
            if ["host", "content-length"].contains(&name.to_ascii_lowercase().as_str()) {
                continue;
            }
            line.push_str(" -H ");
            line.push_str(&shell_quote(&format!("{name}: {value}")));
        }
        let body = record.request_body;
        if body.len() > CURL_BODY_MAX {
            line.push_str(&format!(
                " --data-binary @body.json  # the body ({} bytes) is left out here: take it from the HAR",
                body.len()
            ));
        } else if !body.is_empty() {
            line.push_str(" --data-raw ");
            line.push_str(&shell_quote(&String::from_utf8_lossy(body)));
        }
        Some(line)
    }
}

/// `text` in single quotes for a POSIX shell.
fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// One SSE frame; JSON has no raw newlines, so `data` is one line.
fn frame(event: &str, data: &impl Serialize) -> Frame {
    let json = serde_json::to_string(data).unwrap_or_else(|_| "null".into());
    format!("event: {event}\ndata: {json}\n\n").into()
}

/// An exchange in flight as the page shows it.
#[derive(Serialize)]
struct InFlight<'a> {
    index: u64,
    http_method: &'a str,
    method: Option<&'a str>,
    tool: Option<&'a str>,
    session: Option<String>,
}

impl Sink for Feed {
    fn opened(&self, opened: &Opened<'_>) {
        let request = opened.request;
        let f = frame(
            "opened",
            &InFlight {
                index: opened.index,
                http_method: opened.http_method,
                method: request.and_then(|r| r.method.as_deref()),
                tool: request.and_then(|r| r.tool()),
                session: request.and_then(|r| self.session(r)),
            },
        );
        let mut s = self.lock();
        s.inflight.insert(opened.index, f.clone());
        while s.inflight.len() > PENDING_MAX {
            s.inflight.pop_first();
        }
        Self::send(&mut s, &f);
    }

    fn exchange(&self, record: &ExchangeRecord<'_>) {
        {
            let mut s = self.lock();
            s.inflight.remove(&record.index);
            let f = frame("done", &serde_json::json!({ "index": record.index }));
            Self::send(&mut s, &f);
        }
        // Only judged exchanges are grouped into calls (the rest never join one).
        let (Some(verdict), Some(request)) = (record.verdict, record.request) else {
            return;
        };
        let exchange = Exchange {
            call: None,
            session: self.session(request),
            duration_ms: record
                .timings
                .terminal
                .or(record.timings.end)
                .map(|d| d.as_secs_f64() * 1e3),
            curl: self.curl(record),
            verdict,
        };
        let Ok(json) = serde_json::to_value(&exchange) else {
            return;
        };
        let mut s = self.lock();
        s.pending.insert(record.index, Pending { call: None, json });
        while s.pending.len() > PENDING_MAX {
            s.pending.pop_first();
        }
    }
}

impl CallSink for Feed {
    fn joined(&self, index: u64, call: u64) {
        let mut s = self.lock();
        let Some(p) = s.pending.get_mut(&index) else {
            return;
        };
        p.call = Some(call);
        p.json["call"] = call.into();
        let f = frame("exchange", &p.json);
        Self::send(&mut s, &f);
    }

    fn call(&self, call: &Call) {
        let mut s = self.lock();
        let exchanges: Vec<serde_json::Value> = call
            .entries
            .iter()
            .filter_map(|i| s.pending.remove(i).map(|p| p.json))
            .collect();
        #[derive(Serialize)]
        struct Closed<'a> {
            call: &'a Call,
            exchanges: Vec<serde_json::Value>,
        }
        let f = frame("call", &Closed { call, exchanges });
        if self.keep > 0 {
            s.calls.push_back(f.clone());
            while s.calls.len() > self.keep {
                s.calls.pop_front();
            }
        }
        Self::send(&mut s, &f);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::{End, Headers, Request, Session};

    /// Feeds one judged `tools/call` exchange numbered `index` (session `sid`) to `feed`, grouped
    /// into call `call`, and closes that call.
    /// `pad` bytes of argument make the request body larger.
    fn one_call(feed: &Feed, index: u64, call: u64, sid: &str, pad: usize) {
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"pay","arguments":{{"x":"{}"}}}}}}"#,
            "a".repeat(pad)
        );
        let body = body.as_bytes();
        let headers =
            Headers::from_iter([("Mcp-Session-Id", sid), ("Authorization", "Bearer s3cr3t")]);
        let request = Request::new("POST", headers, body);
        let mut session = Session::default();
        let mut exchange = session.begin(request.clone());
        let mut verdict = session.finish(&mut exchange, End::Reset);
        verdict.index = index;
        let record = ExchangeRecord {
            index,
            request: Some(&request),
            verdict: Some(&verdict),
            note: None,
            analysis_failed: false,
            http_method: "POST",
            request_body: body,
            started: std::time::SystemTime::now(),
            timings: crate::adapters::Timings::default(),
            entry: None,
            messages: &[],
            messages_dropped: 0,
        };
        feed.opened(&Opened {
            index,
            http_method: "POST",
            request: Some(&request),
        });
        assert_eq!(
            feed.snapshot().last().unwrap().split('\n').next(),
            Some("event: opened")
        );
        feed.exchange(&record);
        feed.joined(index, call);
        feed.call(&Call::single(call, &verdict, None));
    }

    #[test]
    fn the_last_calls_are_kept_with_their_exchanges_redacted() {
        let feed = Feed::new(2, Redaction::on(), "http://127.0.0.1:1/mcp");
        let (_, mut rx) = feed.subscribe();
        for n in 0..5 {
            one_call(&feed, n, n, "sess-1234567890", 0);
        }
        assert_eq!(feed.kept(), 2);
        // Live, for each call: open, done, the exchange as it joined, then its call.
        let mut live = Vec::new();
        while let Ok(f) = rx.try_recv() {
            live.push(f.split('\n').next().unwrap().to_owned());
        }
        assert_eq!(live.len(), 20);
        assert_eq!(
            live[..4],
            [
                "event: opened",
                "event: done",
                "event: exchange",
                "event: call"
            ]
        );
        // Late: the reset, then only the last two calls, each with its exchange.
        let late = feed.snapshot();
        assert_eq!(late.len(), 3);
        let data = |f: &Frame| -> serde_json::Value {
            serde_json::from_str(f.split_once("data: ").unwrap().1.trim()).unwrap()
        };
        let calls: Vec<u64> = late[1..]
            .iter()
            .map(|f| data(f)["call"]["call"].as_u64().unwrap())
            .collect();
        assert_eq!(calls, [3, 4]);
        let last = data(&late[2]);
        assert_eq!(last["exchanges"][0]["verdict"]["index"], 4);
        assert_eq!(last["exchanges"][0]["call"], 4);
        // The session and the curl line as the policy shows them.
        let session = last["exchanges"][0]["session"].as_str().unwrap();
        assert!(session.starts_with("<redacted-"), "{session}");
        let curl = last["exchanges"][0]["curl"].as_str().unwrap();
        assert!(
            !curl.contains("s3cr3t") && !curl.contains("sess-1234567890"),
            "{curl}"
        );
        assert!(curl.contains("'Authorization: <redacted>'"), "{curl}");
        // Closed calls leave nothing pending, finished exchanges nothing in flight.
        assert!(feed.lock().pending.is_empty());
        assert!(feed.lock().inflight.is_empty());
    }

    #[test]
    fn a_large_body_is_left_out_of_the_curl_line() {
        let feed = Feed::new(1, Redaction::on(), "http://127.0.0.1:1/mcp");
        one_call(&feed, 0, 0, "s", CURL_BODY_MAX);
        let kept = feed.snapshot().pop().unwrap();
        assert!(kept.len() < CURL_BODY_MAX, "{} bytes kept", kept.len());
        assert!(kept.contains("bytes) is left out here"), "{kept}");
    }

    #[test]
    fn shell_quoting_survives_quotes() {
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
    }

    #[test]
    fn a_slow_page_is_dropped_without_waiting() {
        let feed = Feed::new(2, Redaction::on(), "http://u:p@127.0.0.1:1/mcp");
        assert_eq!(feed.url, "http://<redacted>@127.0.0.1:1/mcp");
        let (start, mut rx) = feed.subscribe();
        assert_eq!(start.len(), 1);
        assert!(start[0].starts_with("event: reset\n"));
        // Never read: the queue fills, then the page is let go (the sender never blocks).
        for i in 0..=SUBSCRIBER_QUEUE as u64 {
            let mut s = feed.lock();
            Feed::send(&mut s, &frame("tick", &i));
        }
        assert_eq!(feed.pages(), 0);
        let mut got = 0;
        while rx.try_recv().is_ok() {
            got += 1;
        }
        assert_eq!(got, SUBSCRIBER_QUEUE);
    }
}
