//! Where finished exchanges go: a JSONL log, a human line, a HAR recording, metrics, and any
//! [`Sink`] a caller adds (the hook for logical-call records built from exchanges).

use std::io::Write;
use std::sync::{Arc, Mutex};

use crate::adapters::Timings;
use crate::har::{self, Entry};
use crate::request::Request;
use crate::verdict::Verdict;

/// One finished exchange as the proxy saw it.
#[derive(Debug, Clone, Copy)]
pub struct ExchangeRecord<'a> {
    /// Position among everything the proxy forwarded (and in its recording).
    pub index: u64,
    /// The request as judged (`None` when the exchange was not judged).
    pub request: Option<&'a Request>,
    /// The verdict (`None` for non-MCP traffic, or when the analysis failed).
    pub verdict: Option<&'a Verdict>,
    /// Why there is no verdict.
    pub note: Option<&'a str>,
    /// There is no verdict because the analysis failed (an internal error; the bytes were
    /// forwarded unchanged all the same).
    pub analysis_failed: bool,
    /// HTTP method and path, for lines about unjudged traffic.
    pub http_method: &'a str,
    /// The request body as forwarded.
    pub request_body: &'a [u8],
    /// When the request was forwarded (wall clock; the recording's `startedDateTime`).
    pub started: std::time::SystemTime,
    /// When things happened, from the moment the request was forwarded.
    pub timings: Timings,
    /// The exchange as recorded (secrets redacted), when recording.
    pub entry: Option<&'a Entry>,
    /// The server's messages with their arrival times (empty unless
    /// [`Config::trace_messages`](super::Config::trace_messages) is set), the first ones.
    pub messages: &'a [super::Arrival],
    /// Messages framed past `messages` when it was full (counted, not kept).
    pub messages_dropped: u64,
}

/// An exchange the proxy forwarded (its request judged, no answer judged yet).
#[derive(Debug, Clone, Copy)]
pub struct Opened<'a> {
    /// Its number, as its [`ExchangeRecord::index`] will be.
    pub index: u64,
    /// HTTP method.
    pub http_method: &'a str,
    /// The request as judged (`None` when the exchange is not judged).
    pub request: Option<&'a Request>,
}

/// Receives every finished exchange, in the order they finish. Sinks run on the proxy's judging
/// thread, off the forwarding path, a moment after the bytes were forwarded
/// ([`Proxy::settle`](super::Proxy::settle) waits for them): a slow sink delays the verdicts
/// after it, and once the backlog is full
/// ([`Config::max_backlog_bytes`](super::Config::max_backlog_bytes)) the forwarding too. A
/// panic ends the judging of that exchange only.
pub trait Sink: Send + Sync {
    /// An exchange finished.
    fn exchange(&self, record: &ExchangeRecord<'_>);

    /// An exchange begins: its request was forwarded (on the judging thread, in the order the
    /// requests were forwarded). For outputs that show what is in flight (`proxy --ui`);
    /// nothing by default.
    fn opened(&self, opened: &Opened<'_>) {
        let _ = opened;
    }
}

/// One verdict per line, the JSON of `replay --format jsonl` (with `file` set to the recording's
/// path, so that the log of a run equals the replay of its recording).
pub struct JsonLog {
    out: Arc<Lines>,
    /// `{"file":"…"`: the start of every line, escaped once.
    start: Vec<u8>,
}

impl JsonLog {
    /// Writes to `out`; `file` fills the `file` field.
    pub fn new(out: Box<dyn Write + Send>, file: impl Into<String>) -> JsonLog {
        JsonLog {
            out: Lines::new(out),
            start: Verdict::jsonl_start(&file.into()),
        }
    }

    /// Writes out the lines still in the buffer (call it when the proxy has stopped).
    pub fn flush(&self) {
        self.out.flush();
    }
}

impl Sink for JsonLog {
    fn exchange(&self, record: &ExchangeRecord<'_>) {
        let Some(verdict) = record.verdict else {
            return;
        };
        self.out.write_with(|buf| {
            verdict.write_jsonl(buf, &self.start);
            Ok(())
        });
    }
}

pub use super::lines::FLUSH_AFTER;
pub(crate) use super::lines::Lines;

/// A short line per exchange on standard error: index, method, tool, outcome, how the body
/// ended (the verdict's `end`: `eof`, `reset`, `open`, `timeout`, `cancelled`), the retry
/// advice (`retry.advice`), time; for an exchange without a response head, the cause.
///
/// ```text
/// #0    tools/call                 echo                 TOOL_SUCCESS           eof       none                 1.2 ms
/// #1    tools/call                 echo                 CONNECTION_FAILED      reset     do_not_retry         0.4 ms  the connection failed: connection refused: nothing listens on 127.0.0.1:9; …
/// ```
pub struct HumanLines;

impl HumanLines {
    /// The line for `record` (without the newline).
    pub fn line(record: &ExchangeRecord<'_>) -> String {
        let ms = |d: Option<std::time::Duration>| {
            d.map_or_else(
                || "-".to_string(),
                |d| format!("{:.1} ms", d.as_secs_f64() * 1e3),
            )
        };
        match record.verdict {
            Some(v) => {
                let mut line = format!(
                    "#{:<4} {:<26} {:<20} {:<22} {:<9} {:<20} {}",
                    record.index,
                    v.method.as_deref().unwrap_or("-"),
                    v.tool.as_deref().unwrap_or(""),
                    v.outcome.as_str(),
                    v.end.as_str(),
                    v.retry.advice.as_str(),
                    ms(record.timings.terminal.or(record.timings.end)),
                );
                if v.status.is_none() && !v.complete {
                    line.push_str("  ");
                    line.push_str(&v.retry.reason);
                }
                line
            }
            None => format!(
                "#{:<4} {:<26} {}",
                record.index,
                record.http_method,
                record.note.unwrap_or("")
            ),
        }
    }
}

impl Sink for HumanLines {
    fn exchange(&self, record: &ExchangeRecord<'_>) {
        eprintln!("{}", HumanLines::line(record));
    }
}

/// Keeps every exchange for a HAR recording, written by [`Recorder::write`].
#[derive(Default)]
pub struct Recorder {
    entries: Mutex<Vec<Entry>>,
}

impl Recorder {
    /// Writes the recording so far as HAR 1.2, entries in forwarding order (sorted in place:
    /// a copy would double what the recording holds).
    pub fn write(&self, out: &mut dyn Write) -> std::io::Result<()> {
        let mut entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        entries.sort_by_key(|e| e.index);
        har::write(&entries, out)
    }

    /// Keeps a finished exchange's entry (moved in, not copied).
    pub(crate) fn keep(&self, entry: Entry) {
        self.entries
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(entry);
    }

    /// How many exchanges are recorded.
    pub fn len(&self) -> usize {
        self.entries.lock().unwrap_or_else(|p| p.into_inner()).len()
    }

    /// Whether nothing is recorded yet.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl Sink for Recorder {
    fn exchange(&self, record: &ExchangeRecord<'_>) {
        if let Some(entry) = record.entry {
            self.keep(entry.clone());
        }
    }
}
