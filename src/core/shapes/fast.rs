//! The commonest answer, told conforming without the full check: a `tools/call` result of
//! plain text blocks. Read from what the envelope and result scans picked out, plus one pass
//! over `content`; anything it does not recognise takes the full check, so it may say "check"
//! where the check finds nothing, never "conforms" where it finds something
//! (`shapes::tests::the_tool_result_fast_path_never_hides_a_shape_finding`).

use crate::jsonrpc::Envelope;
use crate::version::ProtocolVersion;
use crate::vocab::members::ResultMembers;

/// Whether the full shape check of this `tools/call` response would find nothing: `jsonrpc`
/// `"2.0"`, an integer or string id, a result without `_meta`, `resultType` `"complete"`
/// (required on 2026-07-28, else absent or `"complete"`), `isError` a boolean,
/// `structuredContent` an object, and text blocks only (`type` `"text"` and a string `text`,
/// each once, no `_meta` or `annotations`).
pub(crate) fn tool_result_conforms(
    version: ProtocolVersion,
    env: &Envelope<'_>,
    result: &ResultMembers<'_>,
) -> bool {
    let id = env.id.map_or("", |id| id.get());
    let digits = id.strip_prefix('-').unwrap_or(id);
    let id_ok =
        id.starts_with('"') || (!digits.is_empty() && digits.bytes().all(|c| c.is_ascii_digit()));
    env.jsonrpc.is_some_and(|j| j.get() == "\"2.0\"")
        && id_ok
        && !env.has_method
        && env.error.is_none()
        && result.scanned
        && !result.meta
        && result
            .result_type
            .map_or(!version.is_stateless(), |t| t == "\"complete\"")
        && result.is_error.is_none_or(|e| e == "true" || e == "false")
        && result.structured_content.is_none_or(|s| s.starts_with('{'))
        && result.plain_content
}
