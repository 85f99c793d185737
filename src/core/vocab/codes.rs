//! The JSON-RPC error codes MCP gives a meaning, each with the revisions that define it: one
//! table, so that the code checks (`jsonrpc.retired_code`, `jsonrpc.reserved_code`), the retry
//! advice and the wire constants read the same facts.
//!
//! Source: `docs/specification/2026-07-28/basic/index.mdx` §Error Codes and the changelog
//! (Minor #6, #12) of the spec repository; `-32023` from the rate-limiting SEP (a draft).

use std::ops::RangeInclusive;

use super::version::ProtocolVersion;

/// `-32002` resource not found (2025-11-25 and earlier; 2026-07-28 answers `-32602`).
pub(crate) const RESOURCE_NOT_FOUND: i64 = -32002;
/// `-32020` HeaderMismatch: a header disagrees with the body (2026-07-28).
pub(crate) const HEADER_MISMATCH: i64 = -32020;
/// `-32021` MissingRequiredClientCapability (2026-07-28).
pub(crate) const MISSING_CLIENT_CAPABILITY: i64 = -32021;
/// `-32022` UnsupportedProtocolVersion (2026-07-28).
pub(crate) const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;
/// `-32023` RateLimited: refused before dispatch, safe to send again later (proposed).
pub(crate) const RATE_LIMITED: i64 = -32023;
/// `-32042` URL elicitation required (2025-11-25 only).
pub(crate) const URL_ELICITATION_REQUIRED: i64 = -32042;

/// One code and the revisions that define it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Code {
    /// The code.
    pub code: i64,
    /// Its name in the schema (or the proposal).
    pub name: &'static str,
    /// First revision that defines it.
    pub since: ProtocolVersion,
    /// Last revision that defines it; a later one retired it (`None`: still defined).
    pub until: Option<ProtocolVersion>,
    /// What a sender uses instead, once it is retired.
    pub instead: &'static str,
}

use ProtocolVersion::{V2025_03_26, V2025_11_25, V2026_07_28};

/// Every code MCP defined in the server-error band (`-32000..=-32099`), in any revision.
pub(crate) const CODES: &[Code] = &[
    Code {
        code: RESOURCE_NOT_FOUND,
        name: "ResourceNotFound",
        since: V2025_03_26,
        until: Some(V2025_11_25),
        instead: "-32602 (Invalid Params)",
    },
    Code {
        code: HEADER_MISMATCH,
        name: "HeaderMismatch",
        since: V2026_07_28,
        until: None,
        instead: "",
    },
    Code {
        code: MISSING_CLIENT_CAPABILITY,
        name: "MissingRequiredClientCapability",
        since: V2026_07_28,
        until: None,
        instead: "",
    },
    Code {
        code: UNSUPPORTED_PROTOCOL_VERSION,
        name: "UnsupportedProtocolVersion",
        since: V2026_07_28,
        until: None,
        instead: "",
    },
    // Allocated by a proposal that is not final yet (the rate-limiting SEP, a draft): listed,
    // so the retry advice honours it and a server that adopts it early is not blamed for an
    // undefined code.
    Code {
        code: RATE_LIMITED,
        name: "RateLimited (proposed)",
        since: V2026_07_28,
        until: None,
        instead: "",
    },
    Code {
        code: URL_ELICITATION_REQUIRED,
        name: "URLElicitationRequired",
        since: V2025_11_25,
        until: Some(V2025_11_25),
        instead: "an InputRequiredResult (MRTR)",
    },
];

/// The part of the server-error band that `version` reserves for the specification: only
/// codes the revision defines may be sent there. Before 2026-07-28 the whole band was the
/// implementations' (JSON-RPC 2.0), so nothing is reserved; from then on `-32020..=-32099`
/// is, while `-32000..=-32019` stays legacy and implementation-defined.
pub(crate) fn reserved_band(version: ProtocolVersion) -> Option<RangeInclusive<i64>> {
    version.is_stateless().then_some(-32099..=-32020)
}

/// The table's entry for `code`.
pub(crate) fn lookup(code: i64) -> Option<&'static Code> {
    CODES.iter().find(|c| c.code == code)
}

impl Code {
    /// `version` defines (or proposes) this code.
    pub(crate) fn in_force(&self, version: ProtocolVersion) -> bool {
        self.since <= version && self.until.is_none_or(|last| version <= last)
    }

    /// A revision after the last that defined it: senders of `version` must not use it.
    pub(crate) fn retired_by(&self, version: ProtocolVersion) -> bool {
        self.until.is_some_and(|last| version > last)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_unique_and_in_the_server_band() {
        for (i, c) in CODES.iter().enumerate() {
            assert!((-32099..=-32000).contains(&c.code), "{}", c.code);
            assert!(CODES[..i].iter().all(|o| o.code != c.code), "{}", c.code);
            assert_eq!(
                c.retired_by(V2026_07_28),
                !c.instead.is_empty(),
                "{}",
                c.name
            );
        }
    }

    #[test]
    fn revisions_of_each_code() {
        let code = |c| lookup(c).unwrap();
        assert!(code(RESOURCE_NOT_FOUND).in_force(V2025_11_25));
        assert!(code(RESOURCE_NOT_FOUND).retired_by(V2026_07_28));
        assert!(!code(URL_ELICITATION_REQUIRED).in_force(ProtocolVersion::V2025_06_18));
        assert!(code(URL_ELICITATION_REQUIRED).retired_by(V2026_07_28));
        assert!(code(HEADER_MISMATCH).in_force(V2026_07_28));
        assert!(!code(HEADER_MISMATCH).in_force(V2025_11_25));
        assert!(!code(HEADER_MISMATCH).retired_by(V2026_07_28));
        assert!(code(RATE_LIMITED).in_force(V2026_07_28));
        assert!(lookup(-32001).is_none());
        assert_eq!(reserved_band(V2025_11_25), None);
        assert_eq!(reserved_band(V2026_07_28), Some(-32099..=-32020));
    }
}
