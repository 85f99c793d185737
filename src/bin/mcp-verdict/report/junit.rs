//! `--format junit`: JUnit XML as CI systems read it (Jenkins, GitLab, GitHub test reporters).
//!
//! One `<testsuite>` per capture (or probed URL), one `<testcase>` per exchange. An incomplete
//! exchange is a `<failure>` whose type is `layer.OUTCOME` and whose message carries the retry
//! advice; broken rules go to `<system-out>` (they do not fail a complete exchange, as they do
//! not change the exit code). Non-MCP entries are `<skipped>`, and so is a refused
//! `server/discover` directly before `initialize` (the legacy-server probe the exit code forgives).
//! The failure count is non-zero exactly when the exit code is 1.

use std::fmt::Write as _;

use mcp_verdict::soak::Report;

use super::{Decision, Run, Trace, escape as esc, label};

/// Whether each trace is the forgiven half of a retried handshake (the rule of
/// `replay::Tally`, `replay::forgives`, within one source).
fn forgiven(traces: &[Trace]) -> Vec<bool> {
    let mut out = vec![false; traces.len()];
    for (i, pair) in traces.windows(2).enumerate() {
        let (a, b) = (&pair[0], &pair[1]);
        out[i] = mcp_verdict::replay::forgives(&a.verdict, &b.verdict) && a.source == b.source;
    }
    out
}

fn seconds(ms: Option<f64>) -> String {
    format!("{:.3}", ms.unwrap_or(0.0).max(0.0) / 1000.0)
}

fn testcase(out: &mut String, class: &str, t: &Trace, forgiven: bool) {
    let v = &t.verdict;
    let _ = write!(
        out,
        "    <testcase name=\"#{} {}\" classname=\"{}\" time=\"{}\">",
        v.index,
        esc(&label(v)),
        esc(class),
        seconds(t.end_ms)
    );
    let advice = match v.retry.after_ms {
        Some(ms) => format!("{} after {ms} ms", v.retry.advice.as_str()),
        None => v.retry.advice.as_str().to_owned(),
    };
    if forgiven {
        let _ = write!(
            out,
            "<skipped message=\"refused server/discover before initialize: a legacy server, not a failure\"/>"
        );
    } else if !v.complete {
        let _ = write!(
            out,
            "<failure type=\"{}.{}\" message=\"{} layer: {}; retry advice: {}\">{}</failure>",
            v.layer.as_str(),
            v.outcome,
            v.layer.as_str(),
            v.outcome,
            esc(&advice),
            esc(&format!(
                "status {}, body ended {}: {}",
                v.status
                    .map(|s| s.to_string())
                    .unwrap_or_else(|| "none".into()),
                super::html::end_word(v),
                v.retry.reason
            ))
        );
    }
    let mut notes = String::new();
    let _ = writeln!(
        notes,
        "outcome {} (layer {}), retry advice {advice}",
        v.outcome,
        v.layer.as_str()
    );
    for viol in &v.violations {
        let level = match viol.level {
            mcp_verdict::Level::Must => "MUST",
            mcp_verdict::Level::Should => "SHOULD",
        };
        let _ = writeln!(notes, "{level} {}: {}", viol.rule, viol.detail);
    }
    let _ = writeln!(out, "<system-out>{}</system-out></testcase>", esc(&notes));
}

/// The document for `replay` and `probe`.
pub fn exchanges(run: &Run, decision: &Decision) -> String {
    let forgiven = forgiven(&run.traces);
    let mut suites = String::new();
    let (mut all_tests, mut all_failures) = (0usize, 0usize);
    for source in &run.sources {
        let idx: Vec<usize> = (0..run.traces.len())
            .filter(|&i| &run.traces[i].source == source)
            .collect();
        let skipped: Vec<_> = run.skipped.iter().filter(|(s, _)| s == source).collect();
        let failures = idx
            .iter()
            .filter(|&&i| !run.traces[i].verdict.complete && !forgiven[i])
            .count();
        let n_forgiven = idx.iter().filter(|&&i| forgiven[i]).count();
        let tests = idx.len() + skipped.len();
        let time: f64 = idx
            .iter()
            .filter_map(|&i| run.traces[i].end_ms)
            .sum::<f64>();
        all_tests += tests;
        all_failures += failures;
        let class = format!("mcp-verdict.{}", run.command);
        let _ = writeln!(
            suites,
            "  <testsuite name=\"{}\" tests=\"{tests}\" failures=\"{failures}\" errors=\"0\" skipped=\"{}\" time=\"{}\">",
            esc(source),
            skipped.len() + n_forgiven,
            seconds(Some(time))
        );
        for &i in &idx {
            testcase(&mut suites, &class, &run.traces[i], forgiven[i]);
        }
        for (_, s) in skipped {
            let _ = writeln!(
                suites,
                "    <testcase name=\"#{} (not an MCP exchange)\" classname=\"{}\"><skipped message=\"{}\"/></testcase>",
                s.index,
                esc(&class),
                esc(&s.reason)
            );
        }
        suites.push_str("  </testsuite>\n");
    }
    wrap(
        &format!("mcp-verdict {}", run.command),
        all_tests,
        all_failures,
        decision,
        &suites,
    )
}

fn wrap(name: &str, tests: usize, failures: usize, decision: &Decision, suites: &str) -> String {
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!-- {}: exit {} -->\n<testsuites name=\"{}\" tests=\"{tests}\" failures=\"{failures}\" errors=\"0\">\n{suites}</testsuites>\n",
        esc(name).replace("--", "- -"),
        decision.code,
        esc(name)
    )
}

/// The document for `soak`: one test case per gate (every call complete, and each threshold
/// given), since a soak's calls number in the thousands and are counted, not listed.
pub fn soak(
    url: &str,
    report: &Report,
    gates: &[(String, Option<String>)],
    decision: &Decision,
) -> String {
    let mut s = String::new();
    let failures = gates.iter().filter(|(_, broken)| broken.is_some()).count();
    let _ = writeln!(
        s,
        "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{failures}\" errors=\"0\" time=\"{}\">",
        esc(url),
        gates.len(),
        seconds(Some(report.elapsed_ms as f64))
    );
    let outcomes: Vec<String> = report
        .outcomes
        .iter()
        .map(|(o, n)| format!("{o} {n}"))
        .collect();
    for (name, broken) in gates {
        let _ = write!(
            s,
            "    <testcase name=\"{}\" classname=\"mcp-verdict.soak\">",
            esc(name)
        );
        if let Some(why) = broken {
            let _ = write!(s, "<failure type=\"threshold\" message=\"{}\"/>", esc(why));
        }
        let _ = writeln!(
            s,
            "<system-out>{} calls, {} incomplete: {}</system-out></testcase>",
            report.requests,
            report.incomplete,
            esc(&outcomes.join(", "))
        );
    }
    s.push_str("  </testsuite>\n");
    wrap("mcp-verdict soak", gates.len(), failures, decision, &s)
}
