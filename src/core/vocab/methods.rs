//! Methods a revision removed, with what replaced them: one table, read by the request check
//! `request.removed_method` and by the docs.
//!
//! Source: `docs/specification/2026-07-28/changelog.mdx` of the spec repository (Major #4, #5,
//! #6; Minor #11). `initialize` and `notifications/initialized` are removed too (Major #2) but
//! stay the legacy fallback a client uses after a refused `server/discover`, and an exchange
//! that carries them is judged by the revision it negotiates (2025-11-25 at the latest), so
//! they are not listed.

use super::version::ProtocolVersion;

/// A method a revision removed.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Removed {
    /// The JSON-RPC method.
    pub method: &'static str,
    /// The first revision without it.
    pub in_version: ProtocolVersion,
    /// What to use instead.
    pub instead: &'static str,
}

use ProtocolVersion::V2026_07_28;

/// Every removed method.
pub(crate) const REMOVED: &[Removed] = &[
    Removed {
        method: "ping",
        in_version: V2026_07_28,
        instead: "nothing: every request stands alone (there is no session to keep alive)",
    },
    Removed {
        method: "logging/setLevel",
        in_version: V2026_07_28,
        instead: "io.modelcontextprotocol/logLevel in each request's _meta",
    },
    Removed {
        method: "notifications/roots/list_changed",
        in_version: V2026_07_28,
        instead: "roots travel in an InputRequiredResult when the server asks (MRTR)",
    },
    Removed {
        method: "resources/subscribe",
        in_version: V2026_07_28,
        instead: "subscriptions/listen",
    },
    Removed {
        method: "resources/unsubscribe",
        in_version: V2026_07_28,
        instead: "closing the subscriptions/listen stream",
    },
    Removed {
        method: "tasks/result",
        in_version: V2026_07_28,
        instead: "polling tasks/get until the task is terminal (tasks extension)",
    },
    Removed {
        method: "tasks/list",
        in_version: V2026_07_28,
        instead: "nothing: keep the task ids the server returned (tasks extension)",
    },
    Removed {
        method: "notifications/elicitation/complete",
        in_version: V2026_07_28,
        instead: "retrying the original request with requestState (MRTR)",
    },
];

/// The entry for `method` when `version` has removed it.
pub(crate) fn removed_in(version: ProtocolVersion, method: &str) -> Option<&'static Removed> {
    // The version first: one compare passes every method under a revision that removed none.
    REMOVED
        .iter()
        .find(|r| version >= r.in_version && r.method == method)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn removed_only_from_their_revision_on() {
        for r in REMOVED {
            assert!(removed_in(V2026_07_28, r.method).is_some(), "{}", r.method);
            assert!(
                removed_in(ProtocolVersion::V2025_11_25, r.method).is_none(),
                "{}",
                r.method
            );
            assert!(!r.instead.is_empty());
        }
        assert_eq!(REMOVED.iter().filter(|r| r.method == "ping").count(), 1);
        assert!(removed_in(V2026_07_28, "tools/call").is_none());
        assert!(removed_in(V2026_07_28, "tasks/get").is_none());
        assert!(removed_in(V2026_07_28, "initialize").is_none());
    }
}
