//! What changed between paired calls, per-operation latency, and which changes are
//! regressions. The regression kinds are a closed list ([`Regression`]) so that `--fail-on`
//! can name them.

use std::collections::BTreeMap;

use serde::Serialize;

use super::pair::pair;
use super::summary::CallSummary;
use crate::rules::Rule;
use crate::verdict::Outcome;

wire_names! {
    /// A kind of change for the worse, as `--fail-on` names it.
    pub enum Regression {
        /// A call complete in A is incomplete in B.
        Incomplete => (
            "incomplete",
            "a call complete in A is incomplete in B"
        ),
        /// A call's outcome got worse while staying complete: a success in A is an error
        /// answer (`TOOL_ERROR`, `JSONRPC_ERROR`) in B.
        Outcome => (
            "outcome",
            "a success in A is a complete error answer (TOOL_ERROR, JSONRPC_ERROR) in B"
        ),
        /// A paired call breaks a MUST-level rule in B that it did not break in A (for soak
        /// reports: a MUST rule counted in B and not in A).
        MustRule => (
            "must_rule",
            "a MUST-level rule broken in B that was not broken in A"
        ),
        /// A call only in B is incomplete (a failing call that has no partner in A).
        NewFailure => (
            "new_failure",
            "a call only in B is incomplete"
        ),
        /// An operation's p99 duration grew by more than the threshold (and by at least
        /// [`LATENCY_FLOOR_MS`]).
        Latency => (
            "latency",
            "an operation's p99 duration grew by more than --latency-threshold"
        ),
    }
}

/// A p99 growth smaller than this many milliseconds is never a regression: on fast calls a
/// few milliseconds of noise (a first connection, a busy machine) are many percent.
pub const LATENCY_FLOOR_MS: u64 = 50;

/// How the outcome ranks, worse is higher: a success, a complete error answer, no complete
/// answer.
fn rank(outcome: Outcome) -> u8 {
    match outcome {
        _ if !outcome.is_complete() => 2,
        Outcome::ToolError | Outcome::JsonrpcError => 1,
        _ => 0,
    }
}

/// One pair of calls that differ.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PairDiff {
    /// The call in A.
    pub a: CallSummary,
    /// The call in B.
    pub b: CallSummary,
    /// What differs, by name: `outcome`, `complete`, `layer`, `advice`, `rules`, `post_count`.
    pub changed: Vec<&'static str>,
    /// Rules broken in B and not in A.
    pub rules_added: Vec<Rule>,
    /// Rules broken in A and not in B.
    pub rules_removed: Vec<Rule>,
    /// The changes for the worse.
    pub regressions: Vec<Regression>,
}

impl PairDiff {
    /// The pair's differences, or `None` when nothing compared differs (durations are compared
    /// per operation, not per call).
    fn of(a: &CallSummary, b: &CallSummary) -> Option<PairDiff> {
        let mut changed = Vec::new();
        let mut note = |differs: bool, name| {
            if differs {
                changed.push(name);
            }
        };
        note(a.outcome != b.outcome, "outcome");
        note(a.complete != b.complete, "complete");
        note(a.layer != b.layer, "layer");
        note(a.advice != b.advice, "advice");
        note(a.rules != b.rules, "rules");
        note(a.post_count != b.post_count, "post_count");
        if changed.is_empty() {
            return None;
        }
        let rules_added: Vec<Rule> = b
            .rules
            .iter()
            .filter(|r| !a.rules.contains(r))
            .copied()
            .collect();
        let rules_removed = a
            .rules
            .iter()
            .filter(|r| !b.rules.contains(r))
            .copied()
            .collect();
        let mut regressions = Vec::new();
        if a.complete && !b.complete {
            regressions.push(Regression::Incomplete);
        } else if b.complete && rank(b.outcome) > rank(a.outcome) {
            regressions.push(Regression::Outcome);
        }
        if b.must_rules().any(|r| !a.rules.contains(&r)) {
            regressions.push(Regression::MustRule);
        }
        Some(PairDiff {
            a: a.clone(),
            b: b.clone(),
            changed,
            rules_added,
            rules_removed,
            regressions,
        })
    }
}

/// Durations of one side for one operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Spread {
    /// Calls with a known duration.
    pub count: u64,
    /// Median, milliseconds (nearest rank).
    pub p50_ms: u64,
    /// 99th percentile, milliseconds (nearest rank: the maximum below 100 calls).
    pub p99_ms: u64,
}

impl Spread {
    fn of(mut durations: Vec<u64>) -> Option<Spread> {
        if durations.is_empty() {
            return None;
        }
        durations.sort_unstable();
        let at = |q: f64| {
            let rank = (q * durations.len() as f64).ceil() as usize;
            durations[rank.clamp(1, durations.len()) - 1]
        };
        Some(Spread {
            count: durations.len() as u64,
            p50_ms: at(0.50),
            p99_ms: at(0.99),
        })
    }
}

/// Call durations of one operation (a tool, or a method other than `tools/call`) in A and B.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Latency {
    /// `tools/call NAME`, or the method.
    pub operation: String,
    /// In A; `null` when no duration is known there.
    pub a: Option<Spread>,
    /// In B; `null` when no duration is known there.
    pub b: Option<Spread>,
    /// p50 change in percent of A's; `null` unless both sides are known and A's is not 0.
    pub p50_change_pct: Option<f64>,
    /// p99 change in percent of A's, as p50.
    pub p99_change_pct: Option<f64>,
    /// The p99 grew past the threshold: a [`Regression::Latency`].
    pub regression: bool,
}

/// Everything `diff` found between two lists of calls.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Diff {
    /// Calls in A.
    pub calls_a: u64,
    /// Calls in B.
    pub calls_b: u64,
    /// Calls paired.
    pub paired: u64,
    /// Pairs that differ, in A's order.
    pub changed: Vec<PairDiff>,
    /// Calls only in A.
    pub only_a: Vec<CallSummary>,
    /// Calls only in B.
    pub only_b: Vec<CallSummary>,
    /// Per operation, in name order; only operations with a known duration on some side.
    pub latency: Vec<Latency>,
    /// Every regression found, once per occurrence (a pair with two kinds counts twice).
    pub regressions: BTreeMap<Regression, u64>,
}

impl Ord for Regression {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (*self as u8).cmp(&(*other as u8))
    }
}

impl PartialOrd for Regression {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Diff {
    /// Whether any regression of the given kinds was found.
    pub fn fails_on(&self, kinds: &[Regression]) -> bool {
        kinds.iter().any(|k| self.regressions.contains_key(k))
    }
}

/// Compares the calls of A with those of B; an operation's p99 growing by more than
/// `latency_threshold_pct` percent (and [`LATENCY_FLOOR_MS`]) is a regression.
pub fn diff_calls(a: &[CallSummary], b: &[CallSummary], latency_threshold_pct: f64) -> Diff {
    let pairing = pair(a, b);
    let changed: Vec<PairDiff> = pairing
        .pairs
        .iter()
        .filter_map(|&(i, j)| PairDiff::of(&a[i], &b[j]))
        .collect();
    let only_b: Vec<CallSummary> = pairing.only_b.iter().map(|&j| b[j].clone()).collect();
    let latency = latency(a, b, latency_threshold_pct);
    let mut regressions = BTreeMap::new();
    let found = changed
        .iter()
        .flat_map(|p| p.regressions.iter().copied())
        .chain(
            only_b
                .iter()
                .filter(|c| !c.complete)
                .map(|_| Regression::NewFailure),
        )
        .chain(
            latency
                .iter()
                .filter(|l| l.regression)
                .map(|_| Regression::Latency),
        );
    for kind in found {
        *regressions.entry(kind).or_insert(0) += 1;
    }
    Diff {
        calls_a: a.len() as u64,
        calls_b: b.len() as u64,
        paired: pairing.pairs.len() as u64,
        changed,
        only_a: pairing.only_a.iter().map(|&i| a[i].clone()).collect(),
        only_b,
        latency,
        regressions,
    }
}

/// Per-operation durations of both sides.
fn latency(a: &[CallSummary], b: &[CallSummary], threshold_pct: f64) -> Vec<Latency> {
    let mut by_op: BTreeMap<String, (Vec<u64>, Vec<u64>)> = BTreeMap::new();
    for c in a {
        if let Some(d) = c.duration_ms {
            by_op.entry(c.operation()).or_default().0.push(d);
        }
    }
    for c in b {
        if let Some(d) = c.duration_ms {
            by_op.entry(c.operation()).or_default().1.push(d);
        }
    }
    by_op
        .into_iter()
        .map(|(operation, (da, db))| {
            let (a, b) = (Spread::of(da), Spread::of(db));
            let change = |x: u64, y: u64| match (x, y) {
                (0, 0) => Some(0.0),
                (0, _) => None,
                _ => Some((y as f64 - x as f64) * 100.0 / x as f64),
            };
            let both = a.zip(b);
            let p99_change_pct = both.and_then(|(a, b)| change(a.p99_ms, b.p99_ms));
            let regression = both.is_some_and(|(a, b)| {
                b.p99_ms >= a.p99_ms + LATENCY_FLOOR_MS
                    && p99_change_pct.is_none_or(|p| p > threshold_pct)
            });
            Latency {
                operation,
                a,
                b,
                p50_change_pct: both.and_then(|(a, b)| change(a.p50_ms, b.p50_ms)),
                p99_change_pct,
                regression,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use smol_str::SmolStr;

    fn call(tool: &str, outcome: Outcome, rules: &[Rule], ms: Option<u64>) -> CallSummary {
        CallSummary {
            call: 0,
            method: Some(SmolStr::new("tools/call")),
            tool: Some(SmolStr::new(tool)),
            args: Some(1),
            outcome,
            complete: outcome.is_complete(),
            layer: Some(outcome.layer()),
            advice: None,
            rules: rules.to_vec(),
            post_count: 1,
            duration_ms: ms,
        }
    }

    #[test]
    fn each_regression_kind_is_found_where_it_happens() {
        let must = Rule::ALL
            .iter()
            .copied()
            .find(|r| r.level() == crate::verdict::Level::Must)
            .unwrap();
        let a = [
            call("cut", Outcome::ToolSuccess, &[], Some(100)),
            call("err", Outcome::ToolSuccess, &[], Some(100)),
            call("rule", Outcome::ToolSuccess, &[], Some(100)),
            call("slow", Outcome::ToolSuccess, &[], Some(100)),
        ];
        let b = [
            call("cut", Outcome::StreamAborted, &[], Some(100)),
            call("err", Outcome::ToolError, &[], Some(100)),
            call("rule", Outcome::ToolSuccess, &[must], Some(100)),
            call("slow", Outcome::ToolSuccess, &[], Some(200)),
            call("new", Outcome::HttpError, &[], None),
        ];
        let d = diff_calls(&a, &b, 20.0);
        let kinds = |i: usize| d.changed[i].regressions.clone();
        assert_eq!(d.changed.len(), 3, "{d:?}");
        assert_eq!(kinds(0), vec![Regression::Incomplete]);
        assert_eq!(kinds(1), vec![Regression::Outcome]);
        assert_eq!(kinds(2), vec![Regression::MustRule]);
        assert_eq!(d.changed[2].rules_added, vec![must]);
        assert_eq!(d.only_b.len(), 1);
        let slow = d
            .latency
            .iter()
            .find(|l| l.operation == "tools/call slow")
            .unwrap();
        assert!(
            slow.regression && slow.p99_change_pct == Some(100.0),
            "{slow:?}"
        );
        for k in Regression::ALL {
            assert_eq!(d.regressions.get(k), Some(&1), "{k}");
        }
        assert!(d.fails_on(&[Regression::Latency]));
        assert!(!d.fails_on(&[]));
    }

    #[test]
    fn better_is_no_regression_and_small_latency_noise_is_not_either() {
        let a = [call("x", Outcome::StreamAborted, &[], Some(2))];
        let b = [call("x", Outcome::ToolSuccess, &[], Some(5))];
        let d = diff_calls(&a, &b, 20.0);
        assert_eq!(d.changed.len(), 1);
        assert!(d.regressions.is_empty(), "{d:?}");
        assert_eq!(d.latency[0].p99_change_pct, Some(150.0));
        assert!(!d.latency[0].regression, "3 ms is under the floor");
    }

    #[test]
    fn nearest_rank_percentiles() {
        let s = Spread::of((1..=100).collect()).unwrap();
        assert_eq!((s.count, s.p50_ms, s.p99_ms), (100, 50, 99));
        let s = Spread::of(vec![7]).unwrap();
        assert_eq!((s.p50_ms, s.p99_ms), (7, 7));
        assert_eq!(Spread::of(Vec::new()), None);
    }
}
