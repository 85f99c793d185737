//! The server's messages of one exchange with their arrival times, for sinks that draw
//! timelines or export span events (`proxy --html`, `--otlp`). Off unless
//! [`Config::trace_messages`](super::Config::trace_messages) asks for it, and bounded by it.

use std::time::Duration;

use crate::exchange::Message;
use crate::vocab::kinds::MessageKind as Kind;

/// A message from the server, when the proxy framed it.
#[derive(Debug, Clone)]
pub struct Arrival {
    /// After the request was forwarded.
    pub at: Duration,
    /// Byte offset of its SSE event in the response body (0 for a JSON body).
    pub offset: u64,
    /// Request, notification or response.
    pub kind: Kind,
    /// The response to this exchange's request.
    pub terminal: bool,
    /// Its method, for requests and notifications.
    pub method: Option<String>,
}

/// The arrivals of one exchange: at most `keep` (the first ones; later ones are only counted).
#[derive(Debug, Default)]
pub struct Arrivals {
    list: Vec<Arrival>,
    keep: usize,
    dropped: u64,
    event_offset: u64,
}

impl Arrivals {
    /// Keeps at most `keep` messages (0: none, nothing is allocated).
    pub fn new(keep: usize) -> Arrivals {
        Arrivals {
            keep,
            ..Arrivals::default()
        }
    }

    /// An SSE event began at `offset` in the body.
    pub fn on_event(&mut self, offset: u64) {
        self.event_offset = offset;
    }

    /// A message was framed `at` after the request was forwarded.
    pub fn on_message(&mut self, at: Duration, m: &Message<'_>) {
        if self.list.len() < self.keep {
            self.list.push(Arrival {
                at,
                offset: m.event.map_or(0, |_| self.event_offset),
                kind: m.kind,
                terminal: m.terminal,
                method: m.method.map(str::to_owned),
            });
        } else {
            self.dropped += 1;
        }
    }

    /// Messages framed past the first `keep` (counted, not kept).
    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    /// What was kept, in arrival order.
    pub fn as_slice(&self) -> &[Arrival] {
        &self.list
    }
}
