//! Resource limits for one exchange.
//!
//! Every buffer the core keeps is bounded by one of these numbers, so a hostile or broken server
//! cannot make the analyzer allocate without bound. Hitting a limit is a verdict
//! ([`Outcome::LimitExceeded`](crate::Outcome::LimitExceeded)) naming the limit, not a panic.

use serde::Serialize;

/// Limits applied to one exchange. `Default` gives values suitable for real traffic.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Limits {
    /// Largest SSE event (all its field lines together), in bytes. Default 16 MiB, as rmcp.
    pub max_event_bytes: usize,
    /// Largest `application/json` (or error) body kept for parsing, in bytes. Default 64 MiB.
    /// SSE bodies are not buffered whole and are bounded by `max_event_bytes` instead.
    pub max_body_bytes: u64,
    /// Largest number of SSE events on one stream. Default: unbounded (`u64::MAX`).
    pub max_events: u64,
    /// Tool annotations a session remembers (for retry safety), per capture or client. Past
    /// it the oldest is forgotten: a call to a forgotten tool gets the advice of an unknown one
    /// (not known to be idempotent). Default 4096.
    pub max_tools: usize,
    /// Server requests a verdict lists per stream: the most recent ones; older ones are only
    /// counted ([`Session::server_requests_unlisted`](crate::Session::server_requests_unlisted)),
    /// so an endless stream of them cannot grow the verdict. Default 256, as many as the
    /// session waits on for answers.
    pub max_server_requests: usize,
    /// `sse.buffered`: the first event of a burst came at least this long after the request
    /// was sent, in milliseconds. Default 1000: progress of a tool that runs a second or more
    /// should have been on the wire before then.
    pub buffered_wait_ms: u64,
    /// `sse.buffered`: every event of the stream arrived within this many milliseconds.
    /// Default 100: a proxy that flushes its buffer at the end delivers it in one read or a few.
    pub buffered_burst_ms: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_event_bytes: 16 << 20,
            max_body_bytes: 64 << 20,
            max_events: u64::MAX,
            max_tools: 4096,
            max_server_requests: 256,
            buffered_wait_ms: 1000,
            buffered_burst_ms: 100,
        }
    }
}

wire_names! {
    /// Which limit was hit. One name per limit, the same everywhere: the [`Limits`] field, the
    /// verdict's `limit` field in JSON and [`LimitKind::name`] all say `max_event_bytes`.
    pub enum LimitKind {
        /// [`Limits::max_event_bytes`]
        EventBytes => "max_event_bytes",
        /// [`Limits::max_body_bytes`]
        BodyBytes => "max_body_bytes",
        /// [`Limits::max_events`]
        Events => "max_events",
    }
}

impl LimitKind {
    /// The CLI/config name of the limit (its wire name).
    pub fn name(self) -> &'static str {
        self.as_str()
    }
}

#[cfg(test)]
mod tests {
    use super::LimitKind;

    #[test]
    fn serde_name_is_the_limit_name() {
        for kind in [
            LimitKind::EventBytes,
            LimitKind::BodyBytes,
            LimitKind::Events,
        ] {
            let json = serde_json::to_string(&kind).unwrap();
            assert_eq!(json, format!("\"{}\"", kind.name()));
            assert_eq!(serde_json::from_str::<LimitKind>(&json).unwrap(), kind);
        }
    }
}
