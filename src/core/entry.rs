//! One recorded exchange, as a HAR entry holds it: what the driver records of every exchange
//! and what capture replay reads. A vocabulary type: it imports no behaviour.

use serde::Deserialize;
use serde::de;

use crate::exchange::ResponseHead;
use crate::request::Headers;
use crate::verdict::End;

/// One HAR entry, decoded.
#[derive(Debug, Clone)]
pub struct Entry {
    /// 0-based position in `log.entries`.
    pub index: u64,
    /// HTTP method.
    pub method: String,
    /// Request URL.
    pub url: String,
    /// Request headers.
    pub request_headers: Headers,
    /// Request body bytes.
    pub request_body: Vec<u8>,
    /// Response head, if one arrived.
    pub response: Option<ResponseHead>,
    /// Response body bytes.
    pub response_body: Vec<u8>,
    /// How the body ended.
    pub end: End,
    /// `startedDateTime` (RFC 3339), when known.
    pub started: Option<String>,
    /// Total time in milliseconds, when known.
    pub time_ms: Option<f64>,
    /// The `timings` phases, when the capture has them.
    pub timings: Option<Timings>,
    /// The request's own timeout in milliseconds (`_mcp_timeout_ms`, written by this tool's
    /// live recordings), when known.
    pub timeout_ms: Option<f64>,
    /// The capturing client's error text (Chrome's `response._error`, or an entry-level
    /// `_error` string), as written.
    pub error: Option<String>,
    /// When the response body's bytes arrived (`_mcp_arrivals`, written by this tool's
    /// recordings of streams); empty when unknown.
    pub arrivals: Vec<crate::arrival::Mark>,
}

/// HAR `timings` phases in milliseconds (`None` where the capture says -1 or leaves it out).
/// HAR has no per-event times: within `receive` only byte positions are known.
#[derive(Debug, Clone, Copy, Default, PartialEq, Deserialize)]
pub struct Timings {
    /// Sending the request.
    #[serde(default, deserialize_with = "phase")]
    pub send: Option<f64>,
    /// Waiting for the response head (time to first byte).
    #[serde(default, deserialize_with = "phase")]
    pub wait: Option<f64>,
    /// Receiving the body.
    #[serde(default, deserialize_with = "phase")]
    pub receive: Option<f64>,
}

/// A phase: HAR writes -1 for "does not apply"; anything not a finite non-negative number is
/// treated as unknown rather than rejecting the capture.
fn phase<'de, D: de::Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    let v = Option::<serde_json::Value>::deserialize(d)?;
    Ok(v.and_then(|v| v.as_f64())
        .filter(|t| t.is_finite() && *t >= 0.0))
}

/// `_mcp_arrivals`: this tool's marks of when a body arrived. Read leniently: a member that is
/// not a list of marks (or a mark that is not one) is left out, never a reason to refuse the
/// entry; what is kept is bounded where it is used ([`Arrivals::from_marks`](crate::Arrivals::from_marks)).
pub(crate) fn marks<'de, D: de::Deserializer<'de>>(
    d: D,
) -> Result<Vec<crate::arrival::Mark>, D::Error> {
    let v = Option::<serde_json::Value>::deserialize(d)?;
    Ok(match v {
        Some(serde_json::Value::Array(items)) => items
            .into_iter()
            .filter_map(|m| serde_json::from_value(m).ok())
            .collect(),
        _ => Vec::new(),
    })
}
