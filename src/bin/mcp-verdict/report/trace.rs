//! One exchange on a time axis: when the head came, what each SSE event carried, how it ended.

use std::time::{Duration, SystemTime};

use mcp_verdict::adapters::Timings;
use mcp_verdict::har::Entry;
use mcp_verdict::sse::SseEvent;
use mcp_verdict::{Message, MessageKind, Observer, Redaction, Verdict};

/// Where a trace's times come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Clock {
    /// Measured live: every message has its arrival time.
    Live,
    /// A capture's `timings` (send / wait / receive): the head time is known, messages only by
    /// their byte position in the body (HAR records no per-event times).
    Har,
    /// No times at all: order and byte positions only.
    Untimed,
}

/// What a message from the server was, for the timeline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PointKind {
    /// A notification (progress, log, ...).
    Notification,
    /// A request from the server (sampling, elicitation, ...).
    ServerRequest,
    /// The response to this exchange's request.
    Terminal,
    /// A response to some other id.
    OtherResponse,
}

impl PointKind {
    /// What a framed message was: the exchange's answer, a server request, a notification, or
    /// a response to some other id.
    pub fn of(kind: MessageKind, terminal: bool) -> PointKind {
        match (kind, terminal) {
            (_, true) => PointKind::Terminal,
            (MessageKind::Request, _) => PointKind::ServerRequest,
            (MessageKind::Notification, _) => PointKind::Notification,
            _ => PointKind::OtherResponse,
        }
    }

    /// The span event name in telemetry.
    #[cfg_attr(not(feature = "otel"), allow(dead_code))]
    pub fn event_name(self) -> &'static str {
        match self {
            PointKind::Notification => "mcp.notification",
            PointKind::ServerRequest => "mcp.server_request",
            PointKind::Terminal => "mcp.response",
            PointKind::OtherResponse => "mcp.other_response",
        }
    }

    /// The CSS class and legend word.
    pub fn as_str(self) -> &'static str {
        match self {
            PointKind::Notification => "notification",
            PointKind::ServerRequest => "server-request",
            PointKind::Terminal => "terminal",
            PointKind::OtherResponse => "other-response",
        }
    }
}

/// One message from the server.
#[derive(Debug, Clone)]
pub struct Point {
    /// Milliseconds after the request was sent, when measured.
    pub at_ms: Option<f64>,
    /// Byte offset of its SSE event in the body (0 for a JSON body).
    pub offset: u64,
    /// What it was.
    pub kind: PointKind,
    /// Its method, for requests and notifications.
    pub method: Option<String>,
}

/// One exchange: its verdict and its timeline.
#[derive(Debug, Clone)]
pub struct Trace {
    /// The capture or URL it came from.
    pub source: String,
    /// The verdict.
    pub verdict: Verdict,
    /// Where the times come from.
    pub clock: Clock,
    /// Milliseconds from sending to the response head.
    pub head_ms: Option<f64>,
    /// Milliseconds from sending to the end of the body.
    pub end_ms: Option<f64>,
    /// Response body length in bytes.
    pub body_bytes: u64,
    /// Messages from the server, in order: the first `--max-timeline-messages` of them.
    pub points: Vec<Point>,
    /// Messages past `points` that were counted, not kept (`--max-timeline-messages`).
    pub messages_dropped: u64,
    /// When the request was sent (wall clock), when known.
    pub started: Option<SystemTime>,
    /// The request's `Mcp-Session-Id`.
    pub session_id: Option<String>,
}

/// Messages kept per exchange for its timeline unless `--max-timeline-messages` says otherwise.
pub const TIMELINE_MESSAGES: usize = 256;

/// Collects the messages of one exchange as the core frames them: the first `keep`, and a
/// count of the rest, so that an endless stream costs no more than a short one.
pub struct TraceObserver {
    event_offset: Option<u64>,
    points: Vec<Point>,
    keep: usize,
    dropped: u64,
}

impl Default for TraceObserver {
    fn default() -> Self {
        TraceObserver::keeping(TIMELINE_MESSAGES)
    }
}

impl TraceObserver {
    /// Keeps the first `keep` messages.
    pub fn keeping(keep: usize) -> Self {
        TraceObserver {
            event_offset: None,
            points: Vec::new(),
            keep,
            dropped: 0,
        }
    }
}

impl Observer for TraceObserver {
    fn on_event(&mut self, event: &SseEvent<'_>) {
        self.event_offset = Some(event.offset);
    }
    fn on_message(&mut self, m: &Message<'_>) {
        if self.points.len() >= self.keep {
            self.dropped += 1;
            return;
        }
        self.points.push(Point {
            at_ms: None,
            offset: m.event.and(self.event_offset).unwrap_or(0),
            kind: PointKind::of(m.kind, m.terminal),
            method: m.method.map(str::to_owned),
        });
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

impl Trace {
    /// A replayed entry: times from the capture's `timings` (or `time`), messages by position;
    /// its session id as `shown` shows it.
    pub fn from_entry(
        source: &str,
        entry: &Entry,
        verdict: Verdict,
        seen: TraceObserver,
        shown: &Redaction,
    ) -> Self {
        let (clock, head_ms, end_ms) = match entry.timings {
            Some(t) if entry.response.is_some() && t.wait.is_some() => {
                let head = t.send.unwrap_or(0.0) + t.wait.unwrap_or(0.0);
                let end = t.receive.map(|r| head + r).or(entry.time_ms);
                (Clock::Har, Some(head), end)
            }
            _ => match entry.time_ms {
                Some(total) => (Clock::Har, None, Some(total)),
                None => (Clock::Untimed, None, None),
            },
        };
        Trace {
            source: source.to_owned(),
            verdict,
            clock,
            head_ms,
            end_ms,
            body_bytes: entry.response_body.len() as u64,
            points: seen.points,
            messages_dropped: seen.dropped,
            started: None,
            session_id: entry
                .request_headers
                .get("mcp-session-id")
                .map(|id| shown.header_value("mcp-session-id", id).into_owned()),
        }
    }

    /// A live exchange: `arrivals` are the messages' arrival times in framing order (the same
    /// order the observer saw them when the recorded body was judged again; as many as were
    /// kept, or fewer).
    pub fn live(mut self, timings: &Timings, arrivals: &[Duration]) -> Self {
        self.clock = Clock::Live;
        self.head_ms = timings.head.map(ms).or(self.head_ms);
        for (p, at) in self.points.iter_mut().zip(arrivals) {
            p.at_ms = Some(ms(*at));
        }
        // A message is handed over (and timed) just after the body that carried it ended.
        let last = arrivals.last().copied().map(ms);
        self.end_ms = match (timings.end.map(ms), last) {
            (Some(end), Some(last)) => Some(end.max(last)),
            (end, last) => end.or(last).or(self.end_ms),
        };
        self
    }

    /// A trace with nothing but its verdict (no recording to draw from).
    pub fn bare(source: &str, verdict: Verdict) -> Self {
        Trace {
            source: source.to_owned(),
            verdict,
            clock: Clock::Untimed,
            head_ms: None,
            end_ms: None,
            body_bytes: 0,
            points: Vec::new(),
            messages_dropped: 0,
            started: None,
            session_id: None,
        }
    }
}
