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
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_event_bytes: 16 << 20,
            max_body_bytes: 64 << 20,
            max_events: u64::MAX,
        }
    }
}

/// Which limit was hit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LimitKind {
    /// [`Limits::max_event_bytes`]
    EventBytes,
    /// [`Limits::max_body_bytes`]
    BodyBytes,
    /// [`Limits::max_events`]
    Events,
}

impl LimitKind {
    /// The CLI/config name of the limit.
    pub fn name(self) -> &'static str {
        match self {
            LimitKind::EventBytes => "max_event_bytes",
            LimitKind::BodyBytes => "max_body_bytes",
            LimitKind::Events => "max_events",
        }
    }
}
