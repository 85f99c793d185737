//! Protocol versions and how the version of an exchange is decided.

wire_names! {
    /// An MCP protocol revision whose transport rules differ. Serialized as its date.
    #[derive(PartialOrd, Ord)]
    pub enum ProtocolVersion {
        /// Batches, optional sessions, no version header.
        V2025_03_26 => "2025-03-26",
        /// Version header, no batches, structuredContent.
        V2025_06_18 => "2025-06-18",
        /// Priming events, SSE polling and `retry`, tasks.
        V2025_11_25 => "2025-11-25",
        /// Stateless: no sessions, no resumption, `resultType`, MRTR, required headers.
        V2026_07_28 => "2026-07-28",
    }
}

impl ProtocolVersion {
    /// Parses a version string. Unknown dates map to the nearest earlier known revision (a
    /// server on a revision between two we know follows the older rules until told otherwise);
    /// anything that is not a date is `None`.
    pub fn parse(s: &str) -> Option<Self> {
        // A date has ten bytes: a value of that length has nothing to trim (trimming looks
        // for Unicode spaces at both ends, which costs more than the rest of the parse).
        let s = if s.len() == 10 { s } else { s.trim() };
        let b = s.as_bytes();
        let is_date = b.len() == 10
            && b[4] == b'-'
            && b[7] == b'-'
            && b.iter()
                .enumerate()
                .all(|(i, c)| i == 4 || i == 7 || c.is_ascii_digit());
        if !is_date {
            return None;
        }
        // ISO dates compare correctly as strings.
        Some(match s {
            s if s >= "2026-07-28" => ProtocolVersion::V2026_07_28,
            s if s >= "2025-11-25" => ProtocolVersion::V2025_11_25,
            s if s >= "2025-06-18" => ProtocolVersion::V2025_06_18,
            _ => ProtocolVersion::V2025_03_26,
        })
    }

    /// SSE event ids and `Last-Event-ID` resumption exist (all 2025 revisions).
    pub fn has_resumption(self) -> bool {
        self < ProtocolVersion::V2026_07_28
    }

    /// JSON-RPC batches are allowed (2025-03-26 only).
    pub fn allows_batches(self) -> bool {
        self == ProtocolVersion::V2025_03_26
    }

    /// Sessions exist (every revision before 2026-07-28).
    pub fn has_sessions(self) -> bool {
        self < ProtocolVersion::V2026_07_28
    }

    /// Stateless revision with required headers, `resultType` and MRTR.
    pub fn is_stateless(self) -> bool {
        self >= ProtocolVersion::V2026_07_28
    }
}

wire_names! {
    /// Which rule decided the version of an exchange, in order of precedence.
    pub enum VersionSource {
        /// The request's `MCP-Protocol-Version` header.
        Header => "header",
        /// The request's `params._meta["io.modelcontextprotocol/protocolVersion"]`.
        Meta => "meta",
        /// This `initialize` exchange, or the one earlier in the capture.
        Initialize => "initialize",
        /// An earlier exchange in the same capture.
        Earlier => "earlier",
        /// Nothing said: 2025-03-26, as the spec tells servers to assume.
        Default => "default",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_maps_dates_to_revisions() {
        assert_eq!(
            ProtocolVersion::parse("2026-07-28"),
            Some(ProtocolVersion::V2026_07_28)
        );
        assert_eq!(
            ProtocolVersion::parse("2025-11-25"),
            Some(ProtocolVersion::V2025_11_25)
        );
        assert_eq!(
            ProtocolVersion::parse("2025-12-01"),
            Some(ProtocolVersion::V2025_11_25)
        );
        assert_eq!(
            ProtocolVersion::parse("2024-11-05"),
            Some(ProtocolVersion::V2025_03_26)
        );
        assert_eq!(ProtocolVersion::parse("DRAFT-2026"), None);
        assert_eq!(ProtocolVersion::parse(""), None);
    }
}
