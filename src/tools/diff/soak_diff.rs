//! Two soak reports compared. A report keeps counts and histograms, not calls, so there is
//! nothing to pair: the whole run is compared as one operation (the tools of a mix are not
//! told apart in a report): the incomplete share, outcome counts, rules counted, and the
//! time to the terminal response.

use serde::Serialize;

use super::compare::{LATENCY_FLOOR_MS, Regression};
use crate::rules::Rule;
use crate::soak::Report;
use crate::verdict::Level;

/// One side's figures.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SoakSide {
    /// Calls judged.
    pub requests: u64,
    /// Calls whose reply was not complete.
    pub incomplete: u64,
    /// `incomplete / requests` (0 for an empty report).
    pub incomplete_rate: f64,
    /// Median time to the terminal response, milliseconds.
    pub p50_ms: f64,
    /// 99th percentile of it, milliseconds.
    pub p99_ms: f64,
}

impl SoakSide {
    fn of(r: &Report) -> SoakSide {
        let ms = |q: f64| r.terminal_us.quantile(q) as f64 / 1000.0;
        SoakSide {
            requests: r.requests,
            incomplete: r.incomplete,
            incomplete_rate: r.incomplete_rate(),
            p50_ms: ms(0.5),
            p99_ms: ms(0.99),
        }
    }
}

/// A count in A and in B.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Count {
    /// The outcome or rule id.
    pub name: String,
    /// Its count in A.
    pub a: u64,
    /// Its count in B.
    pub b: u64,
}

/// What changed between two soak reports.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SoakDiff {
    /// A's figures.
    pub a: SoakSide,
    /// B's figures.
    pub b: SoakSide,
    /// p99 change in percent of A's; `null` when A's is 0.
    pub p99_change_pct: Option<f64>,
    /// Every outcome counted in either, by name.
    pub outcomes: Vec<Count>,
    /// Every rule counted in either, by id.
    pub rules: Vec<Count>,
    /// The regressions, each kind once.
    pub regressions: Vec<Regression>,
}

impl SoakDiff {
    /// Whether any regression of the given kinds was found.
    pub fn fails_on(&self, kinds: &[Regression]) -> bool {
        self.regressions.iter().any(|r| kinds.contains(r))
    }
}

/// Compares two soak reports: `incomplete` when B's incomplete share is higher, `must_rule`
/// when B counts a MUST rule A does not, `latency` when the p99 grew past the threshold (and
/// [`LATENCY_FLOOR_MS`]).
pub fn diff_soak(a: &Report, b: &Report, latency_threshold_pct: f64) -> SoakDiff {
    let (sa, sb) = (SoakSide::of(a), SoakSide::of(b));
    let counts = |x: &std::collections::BTreeMap<String, u64>,
                  y: &std::collections::BTreeMap<String, u64>| {
        let mut names: Vec<&String> = x.keys().chain(y.keys()).collect();
        names.sort();
        names.dedup();
        names
            .into_iter()
            .map(|n| Count {
                name: n.clone(),
                a: x.get(n).copied().unwrap_or(0),
                b: y.get(n).copied().unwrap_or(0),
            })
            .collect::<Vec<_>>()
    };
    let rules = counts(&a.violations, &b.violations);
    let p99_change_pct = (sa.p99_ms > 0.0).then(|| (sb.p99_ms - sa.p99_ms) * 100.0 / sa.p99_ms);
    let mut regressions = Vec::new();
    if sb.incomplete_rate > sa.incomplete_rate {
        regressions.push(Regression::Incomplete);
    }
    let must = |id: &str| Rule::from_id(id).is_some_and(|r| r.level() == Level::Must);
    if rules.iter().any(|c| c.a == 0 && c.b > 0 && must(&c.name)) {
        regressions.push(Regression::MustRule);
    }
    if a.terminal_us.count() > 0
        && b.terminal_us.count() > 0
        && sb.p99_ms >= sa.p99_ms + LATENCY_FLOOR_MS as f64
        && p99_change_pct.is_none_or(|p| p > latency_threshold_pct)
    {
        regressions.push(Regression::Latency);
    }
    SoakDiff {
        a: sa,
        b: sb,
        p99_change_pct,
        outcomes: counts(&a.outcomes, &b.outcomes),
        rules,
        regressions,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_worse_run_regresses_on_incomplete_rules_and_latency() {
        let must = Rule::ALL
            .iter()
            .copied()
            .find(|r| r.level() == Level::Must)
            .unwrap();
        let mut a = Report {
            requests: 10,
            ..Report::default()
        };
        a.outcomes.insert("TOOL_SUCCESS".into(), 10);
        for _ in 0..10 {
            a.terminal_us.record(100_000);
        }
        let mut b = a.clone();
        b.incomplete = 1;
        b.outcomes.insert("STREAM_ABORTED".into(), 1);
        b.violations.insert(must.id().to_owned(), 1);
        b.terminal_us = Default::default();
        for _ in 0..10 {
            b.terminal_us.record(300_000);
        }
        let d = diff_soak(&a, &b, 20.0);
        assert_eq!(
            d.regressions,
            vec![
                Regression::Incomplete,
                Regression::MustRule,
                Regression::Latency
            ]
        );
        assert_eq!(d.outcomes.len(), 2);
        assert!(diff_soak(&a, &a, 20.0).regressions.is_empty());
        assert!(
            diff_soak(&b, &a, 20.0).regressions.is_empty(),
            "better is no regression"
        );
    }
}
