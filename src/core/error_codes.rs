//! What an error answer's code says under the exchange's revision: a code the revision retired
//! (`jsonrpc.retired_code`), an undefined code in the band it reserves for the specification
//! (`jsonrpc.reserved_code`), and whether it is the rate-limit code the retry advice honours.
//! The facts are the table in [`crate::vocab::codes`]; this module only reads it.
//!
//! The checks apply wherever the code arrived: a JSON body, the stream's final event, or the
//! body of an HTTP error status (a 404 with `-32002` is the same mistake as a 200 with it).

use crate::findings::Findings;
use crate::rules::Rule;
use crate::verdict::Location;
use crate::version::ProtocolVersion;
use crate::vocab::codes::{self, RATE_LIMITED};

/// Reports `code` when `version` forbids it.
pub(crate) fn check_code(
    code: i64,
    version: ProtocolVersion,
    findings: &mut Findings,
    at: Option<Location>,
) {
    let known = codes::lookup(code);
    if let Some(c) = known.filter(|c| c.retired_by(version)) {
        findings.add(
            Rule::JsonrpcRetiredCode,
            format!(
                "error code {code} ({}) is not sent under {version}; instead: {}",
                c.name, c.instead
            ),
            at,
        );
        return;
    }
    let in_band = codes::reserved_band(version).is_some_and(|band| band.contains(&code));
    if in_band && !known.is_some_and(|c| c.in_force(version)) {
        findings.add(
            Rule::JsonrpcReservedCode,
            format!(
                "error code {code} lies in -32099..-32020, which {version} reserves for the codes it defines"
            ),
            at,
        );
    }
}

/// `code` is a recognised modern JSON-RPC error: one 2026-07-28 defines (or, RateLimited,
/// proposes). A refusal carrying one comes from a modern server, never a legacy one.
pub(crate) fn is_modern(code: i64) -> bool {
    codes::lookup(code).is_some_and(|c| c.in_force(ProtocolVersion::V2026_07_28))
}

/// `code` means "rate limited, refused before dispatch": safe to send again after the delay,
/// whatever the HTTP status. Only from 2026-07-28 on: before, the whole server-error band was
/// the implementations' and `-32023` may mean anything.
pub(crate) fn is_rate_limited(code: Option<i64>, version: ProtocolVersion) -> bool {
    // Proposed, not final: honoured all the same (the reference: "treat as safe to retry
    // later whatever the status").
    code == Some(RATE_LIMITED) && codes::lookup(RATE_LIMITED).is_some_and(|c| c.in_force(version))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ProtocolVersion::*;

    fn rules(code: i64, version: ProtocolVersion) -> Vec<Rule> {
        let mut findings = Findings::default();
        check_code(code, version, &mut findings, None);
        findings.into_vec().into_iter().map(|v| v.rule).collect()
    }

    #[test]
    fn retired_codes_on_2026_only() {
        for code in [codes::RESOURCE_NOT_FOUND, codes::URL_ELICITATION_REQUIRED] {
            assert_eq!(
                rules(code, V2026_07_28),
                [Rule::JsonrpcRetiredCode],
                "{code}"
            );
        }
        assert!(rules(codes::RESOURCE_NOT_FOUND, V2025_11_25).is_empty());
        assert!(rules(codes::URL_ELICITATION_REQUIRED, V2025_11_25).is_empty());
        // Before its revision -32042 was an implementation's own code: not reported either.
        assert!(rules(codes::URL_ELICITATION_REQUIRED, V2025_06_18).is_empty());
    }

    /// Every code of the server-error band under 2026-07-28: the reserved part holds only the
    /// defined (and proposed) codes; the legacy part is the implementations'.
    #[test]
    fn reserved_band_on_2026() {
        let reported: Vec<i64> = (-32099..=-32000)
            .filter(|&c| rules(c, V2026_07_28) == [Rule::JsonrpcReservedCode])
            .collect();
        let allowed = [-32023, -32022, -32021, -32020, -32042];
        let expected: Vec<i64> = (-32099..=-32020).filter(|c| !allowed.contains(c)).collect();
        assert_eq!(reported, expected);
        for code in [
            -32000, -32001, -32019, -32601, -32602, -32603, -32700, -31999, 1,
        ] {
            assert!(rules(code, V2026_07_28).is_empty(), "{code}");
        }
        for earlier in [V2025_03_26, V2025_06_18, V2025_11_25] {
            assert!(rules(-32050, earlier).is_empty(), "{earlier}");
            assert!(rules(-32020, earlier).is_empty(), "{earlier}");
        }
    }

    #[test]
    fn rate_limited_from_2026() {
        assert!(is_rate_limited(Some(-32023), V2026_07_28));
        assert!(!is_rate_limited(Some(-32023), V2025_11_25));
        assert!(!is_rate_limited(Some(-32022), V2026_07_28));
        assert!(!is_rate_limited(None, V2026_07_28));
    }
}
