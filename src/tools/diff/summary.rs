//! What `diff` keeps of one logical call: a few words and numbers, never a body, so that two
//! large captures can be compared in memory proportional to their number of calls.

use serde::Serialize;
use serde_json::Value;

use crate::rules::Rule;
use crate::verdict::{Advice, Layer, Level, Outcome, Verdict};
use crate::vocab::call::Call;
use smol_str::SmolStr;

/// One call (or, from a verdict log, one exchange) as `diff` compares it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CallSummary {
    /// Its number in its input: the call number of a capture or calls file, the verdict index
    /// of a verdict log.
    pub call: u64,
    /// JSON-RPC method; `null` for a call of `GET`/`DELETE` entries only.
    pub method: Option<SmolStr>,
    /// `params.name` of a `tools/call`.
    pub tool: Option<SmolStr>,
    /// Digest of the arguments (`params.arguments` of a `tools/call`, else `params` without
    /// `_meta`) as 16 hex digits; `null` when the input does not carry requests (verdict and
    /// call logs). Only for pairing: stable within one run of the tool.
    #[serde(serialize_with = "hex")]
    pub args: Option<u64>,
    /// The outcome of the exchange that decided it.
    pub outcome: Outcome,
    /// Whether that answer was complete.
    pub complete: bool,
    /// The layer that decided it; `null` when the input does not say (a calls file).
    pub layer: Option<Layer>,
    /// The retry advice of that exchange; `null` when the input does not say (a calls file).
    pub advice: Option<Advice>,
    /// Every rule broken by any of its exchanges or by the call, by id, once each.
    pub rules: Vec<Rule>,
    /// POSTs it took.
    pub post_count: u32,
    /// Milliseconds from its first request to the end of its last exchange (HAR `time`);
    /// `null` when the input has no times.
    pub duration_ms: Option<u64>,
}

fn hex<S: serde::Serializer>(args: &Option<u64>, s: S) -> Result<S::Ok, S::Error> {
    match args {
        Some(d) => s.serialize_str(&format!("{d:016x}")),
        None => s.serialize_none(),
    }
}

/// What a summary is paired by: method, tool and (when both inputs know it) the arguments.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct Key {
    pub(crate) method: Option<SmolStr>,
    pub(crate) tool: Option<SmolStr>,
    pub(crate) args: Option<u64>,
}

impl CallSummary {
    /// The pairing key, with or without the arguments digest.
    pub(crate) fn key(&self, with_args: bool) -> Key {
        Key {
            method: self.method.clone(),
            tool: self.tool.clone(),
            args: self.args.filter(|_| with_args),
        }
    }

    /// What the latency table groups by: the tool of a `tools/call`, else the method.
    pub fn operation(&self) -> String {
        match (&self.method, &self.tool) {
            (Some(m), Some(t)) => format!("{m} {t}"),
            (Some(m), None) => m.to_string(),
            (None, _) => "-".to_owned(),
        }
    }

    /// Rules of MUST level among [`CallSummary::rules`].
    pub fn must_rules(&self) -> impl Iterator<Item = Rule> + '_ {
        self.rules
            .iter()
            .copied()
            .filter(|r| r.level() == Level::Must)
    }

    /// One line of a verdict log: the exchange stands for its call (no grouping without the
    /// requests).
    pub fn of_verdict(v: &Verdict) -> CallSummary {
        CallSummary {
            call: v.index,
            method: v.method.as_deref().map(SmolStr::new),
            tool: v.tool.clone(),
            args: None,
            outcome: v.outcome,
            complete: v.complete,
            layer: Some(v.layer),
            advice: Some(v.retry.advice),
            rules: rules_of(v.violations.iter().map(|x| x.rule)),
            post_count: u32::from(v.http_method.as_deref().is_none_or(|m| m == "POST")),
            duration_ms: None,
        }
    }

    /// One line of a calls file: layer read back from the outcome (`auth` for an auth step
    /// that failed with `HTTP_ERROR`), no advice, no exchange rules.
    pub fn of_call_record(c: &Call) -> CallSummary {
        let layer = if c.outcome == Outcome::HttpError && c.auth_step.is_some() {
            Layer::Auth
        } else {
            c.outcome.layer()
        };
        CallSummary {
            call: c.call,
            method: c.method.as_deref().map(SmolStr::new),
            tool: c.tool.clone(),
            args: None,
            outcome: c.outcome,
            complete: c.complete,
            layer: Some(layer),
            advice: None,
            rules: rules_of(c.violations.iter().map(|x| x.rule)),
            post_count: c.post_count,
            duration_ms: None,
        }
    }

    /// A call grouped from a capture, with the notes kept for its exchanges (in the order of
    /// `c.entries`; any may be missing).
    pub(crate) fn of_grouped(c: &Call, notes: &[Note]) -> CallSummary {
        // The deciding exchange: the latest with the call's outcome (an answer POST joins a
        // call without deciding it).
        let decided = notes.iter().rev().find(|n| n.outcome == c.outcome);
        let mut rules: Vec<Rule> = c.violations.iter().map(|x| x.rule).collect();
        rules.extend(notes.iter().flat_map(|n| n.rules.iter().copied()));
        let mut summary = CallSummary::of_call_record(c);
        summary.args = notes.iter().find_map(|n| n.args);
        summary.layer = decided.map(|n| n.layer).or(summary.layer);
        summary.advice = decided.map(|n| n.advice);
        summary.rules = rules_of(rules);
        summary.duration_ms = duration_of(notes);
        summary
    }
}

/// Sorted by id, once each.
fn rules_of(rules: impl IntoIterator<Item = Rule>) -> Vec<Rule> {
    let mut out: Vec<Rule> = rules.into_iter().collect();
    out.sort_by_key(|r| r.as_str());
    out.dedup();
    out
}

/// From the first start to the last end when every exchange has a start; else the sum of the
/// known durations; `None` when none is known.
fn duration_of(notes: &[Note]) -> Option<u64> {
    let spans: Option<Vec<(u64, u64)>> = notes
        .iter()
        .map(|n| Some((n.started_ms?, n.started_ms? + n.duration_ms?)))
        .collect();
    match spans {
        Some(s) if !s.is_empty() => {
            let first = s.iter().map(|x| x.0).min()?;
            let last = s.iter().map(|x| x.1).max()?;
            Some(last - first)
        }
        _ => {
            let known: Vec<u64> = notes.iter().filter_map(|n| n.duration_ms).collect();
            (!known.is_empty()).then(|| known.iter().sum())
        }
    }
}

/// What is kept of one exchange until its call is grouped.
#[derive(Debug, Clone)]
pub(crate) struct Note {
    pub(crate) outcome: Outcome,
    pub(crate) layer: Layer,
    pub(crate) advice: Advice,
    pub(crate) rules: Vec<Rule>,
    pub(crate) args: Option<u64>,
    pub(crate) started_ms: Option<u64>,
    pub(crate) duration_ms: Option<u64>,
}

impl Note {
    /// The note of a verdict, with the arguments digest read from its request body.
    pub(crate) fn of(
        v: &Verdict,
        body: &[u8],
        started_ms: Option<u64>,
        duration_ms: Option<u64>,
    ) -> Note {
        Note {
            outcome: v.outcome,
            layer: v.layer,
            advice: v.retry.advice,
            rules: v.violations.iter().map(|x| x.rule).collect(),
            args: v
                .method
                .as_ref()
                .and_then(|_| args_digest(body, v.batch_position)),
            started_ms,
            duration_ms,
        }
    }
}

/// The arguments of a request body (the `position`th message of a batch): `params.arguments`
/// of a `tools/call`, else `params` without `_meta`; digested as FNV-1a over its JSON with
/// sorted keys (serde_json's map), so equal arguments in any member order give one digest.
/// `None` when the body is no JSON request.
pub(crate) fn args_digest(body: &[u8], position: Option<u32>) -> Option<u64> {
    let value: Value = serde_json::from_slice(body).ok()?;
    let message = match (value, position) {
        (Value::Array(mut items), Some(p)) if (p as usize) < items.len() => {
            items.swap_remove(p as usize)
        }
        (Value::Array(_), _) => return None,
        (v, _) => v,
    };
    let mut message = message;
    let method = message.get("method")?.as_str()?.to_owned();
    let mut params = message
        .get_mut("params")
        .map(Value::take)
        .unwrap_or(Value::Null);
    let args = if method == "tools/call" {
        params
            .get_mut("arguments")
            .map(Value::take)
            .unwrap_or(Value::Null)
    } else {
        if let Value::Object(map) = &mut params {
            map.remove("_meta");
            if map.is_empty() {
                // `{"_meta": …}` alone, `{}` and no params ask the same.
                params = Value::Null;
            }
        }
        params
    };
    Some(fnv1a(serde_json::to_string(&args).ok()?.as_bytes()))
}

fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// docs/diff.md's memory formula counts 200 bytes per call: the summary and its share of the
    /// pairing index.
    #[test]
    fn a_summary_stays_small() {
        assert!(std::mem::size_of::<CallSummary>() <= 128);
        assert_eq!(std::mem::size_of::<Rule>(), 1, "1 B per rule broken");
    }

    #[test]
    fn equal_arguments_in_any_order_digest_alike_and_meta_is_ignored() {
        let a = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"a":1,"b":[2]},"_meta":{"progressToken":1}}}"#;
        let b = br#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"arguments":{"b":[2],"a":1},"name":"x"}}"#;
        let c = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"a":2}}}"#;
        assert_eq!(args_digest(a, None), args_digest(b, None));
        assert_ne!(args_digest(a, None), args_digest(c, None));
        let l1 = br#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"k":1}}}"#;
        let l2 = br#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;
        assert_ne!(args_digest(l1, None), None);
        assert_eq!(
            args_digest(l1, None),
            args_digest(l2, None),
            "only _meta: no params"
        );
        assert_eq!(args_digest(b"not json", None), None);
        let batch = br#"[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","id":2,"method":"b","params":{"k":1}}]"#;
        assert_ne!(args_digest(batch, Some(1)), None);
        assert_eq!(args_digest(batch, Some(2)), None);
    }
}
