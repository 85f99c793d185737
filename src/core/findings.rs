//! Collects violations for one exchange with bounded memory: the first occurrence of each rule is
//! kept with its evidence, later ones only counted.

use crate::rules::Rule;
use crate::verdict::{Level, Location, Violation};

/// Violations seen so far.
#[derive(Debug, Clone, Default)]
pub(crate) struct Findings {
    list: Vec<Violation>,
    counts: Vec<u64>,
}

impl Findings {
    /// Records a violation of `rule`.
    pub(crate) fn add(&mut self, rule: Rule, detail: impl Into<String>, at: Option<Location>) {
        self.add_at_level(rule, rule.level(), detail, at);
    }

    /// Records a violation whose level depends on context (e.g. after `input_required`).
    pub(crate) fn add_at_level(
        &mut self,
        rule: Rule,
        level: Level,
        detail: impl Into<String>,
        at: Option<Location>,
    ) {
        if let Some(i) = self.list.iter().position(|v| v.rule == rule) {
            self.counts[i] += 1;
            if level == Level::Must {
                self.list[i].level = Level::Must;
            }
            return;
        }
        let mut v = Violation::new(rule, detail, at);
        v.level = level;
        self.list.push(v);
        self.counts.push(1);
    }

    /// The violations, with repeat counts folded into the detail.
    pub(crate) fn into_vec(self) -> Vec<Violation> {
        // Most exchanges break no rule, or each once: nothing to fold.
        if self.counts.iter().all(|&n| n == 1) {
            return self.list;
        }
        self.list
            .into_iter()
            .zip(self.counts)
            .map(|(mut v, n)| {
                if n > 1 {
                    v.detail = format!("{} ({n} times)", v.detail);
                }
                v
            })
            .collect()
    }
}
