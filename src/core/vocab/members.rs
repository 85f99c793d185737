//! The members of a result object that decide the verdict, as the envelope scan or serde_json
//! read them. Data only: reading them is the result layer's ([`ResultMembers::read`] in
//! `tool_result.rs`) and the envelope scan's (`jsonrpc::scan::result_members_at`), which both
//! sit above this leaf.

/// A result's members as the envelope scan read them, in passing: `None` when it did not (then
/// [`ResultMembers::read`] reads them), else what `read` gives.
pub(crate) type ScannedMembers<'a> = Option<Option<ResultMembers<'a>>>;

/// The members of a result object that decide the verdict, as JSON text.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ResultMembers<'a> {
    pub(crate) result_type: Option<&'a str>,
    pub(crate) content: Option<&'a str>,
    pub(crate) is_error: Option<&'a str>,
    pub(crate) structured_content: Option<&'a str>,
    pub(crate) input_requests: Option<&'a str>,
    pub(crate) request_state: Option<&'a str>,
    pub(crate) task: Option<&'a str>,
    /// Read by the one-pass scan, which also tells [`meta`](Self::meta); serde_json's reading
    /// does not.
    pub(crate) scanned: bool,
    /// The object has a `_meta` member (known only when `scanned`).
    pub(crate) meta: bool,
    /// `content` holds plain text blocks only (known only when `scanned`; see
    /// `shapes::tool_result_conforms`).
    pub(crate) plain_content: bool,
}
