//! `diff`'s output: tables (human, Markdown), one JSON document, or JUnit XML with a test case
//! per regression kind. Only printing: what changed is decided in the library.

use std::io;
use std::path::Path;

use mcp_verdict::diff::{CallSummary, Diff, Kind, Latency, PairDiff, Regression, SoakDiff};
use serde::Serialize;
use serde_json::json;

use crate::args::DiffFormatArg;
use crate::output::{BOLD, Format, GREEN, Printer, RED};
use crate::report::escape;

/// An input as the output names it.
#[derive(Serialize)]
pub struct Named {
    file: String,
    kind: Kind,
    /// Calls read (requests, for a soak report).
    calls: usize,
}

impl Named {
    pub fn new(path: &Path, kind: Kind, calls: usize) -> Named {
        Named {
            file: path.display().to_string(),
            kind,
            calls,
        }
    }
}

/// Writes one diff to standard output.
pub struct Out {
    printer: Printer<io::StdoutLock<'static>>,
    format: DiffFormatArg,
    fail_on: Vec<Regression>,
}

impl Out {
    pub fn new(format: DiffFormatArg, color: bool, fail_on: &[Regression]) -> Out {
        let color = color && format == DiffFormatArg::Human;
        Out {
            printer: Printer::new(io::stdout().lock(), Format::Human, color),
            format,
            fail_on: fail_on.to_vec(),
        }
    }

    pub fn broken_pipe(&self) -> bool {
        self.printer.broken_pipe()
    }

    /// Prints a diff of calls.
    pub fn calls(&mut self, names: &[Named; 2], d: &Diff) {
        let found: Vec<(Regression, u64)> = d.regressions.iter().map(|(k, n)| (*k, *n)).collect();
        let text = match self.format {
            DiffFormatArg::Json => {
                let doc = json!({
                    "a": names[0], "b": names[1],
                    "fail_on": self.fail_on, "failed": d.fails_on(&self.fail_on),
                    "regressions": found.iter().map(|(k, _)| *k).collect::<Vec<_>>(),
                    "diff": d,
                });
                format!(
                    "{}\n",
                    serde_json::to_string_pretty(&doc).unwrap_or_default()
                )
            }
            DiffFormatArg::Human => self.human(names, d, &found),
            DiffFormatArg::Markdown => markdown(names, d, &found, &self.fail_on),
            DiffFormatArg::Junit => junit(&found, &self.fail_on, &|k| details(d, k)),
        };
        self.printer.emit(&text);
        self.printer.flush();
    }

    /// Prints a diff of two soak reports.
    pub fn soak(&mut self, names: &[Named; 2], d: &SoakDiff) {
        let found: Vec<(Regression, u64)> = d.regressions.iter().map(|k| (*k, 1)).collect();
        let text = match self.format {
            DiffFormatArg::Json => {
                let doc = json!({
                    "a": names[0], "b": names[1],
                    "fail_on": self.fail_on, "failed": d.fails_on(&self.fail_on),
                    "regressions": d.regressions,
                    "soak": d,
                });
                format!(
                    "{}\n",
                    serde_json::to_string_pretty(&doc).unwrap_or_default()
                )
            }
            DiffFormatArg::Human | DiffFormatArg::Markdown => {
                let md = self.format == DiffFormatArg::Markdown;
                let mut t = heading(names, md);
                t.push_str(&soak_table(d, md));
                t.push_str(&verdict_line(&found, &self.fail_on, md));
                t
            }
            DiffFormatArg::Junit => junit(&found, &self.fail_on, &|_| Vec::new()),
        };
        self.printer.emit(&text);
        self.printer.flush();
    }

    fn human(&self, names: &[Named; 2], d: &Diff, found: &[(Regression, u64)]) -> String {
        let mut t = heading(names, false);
        t.push_str(&summary_line(d));
        if !d.changed.is_empty() {
            t.push_str(&format!("\n{}\n", self.printer.paint(BOLD, "changed")));
            t.push_str(&format!(
                "  {:<9} {:<24} {:<34} {:<26} {:<28} {:<6} {}\n",
                "A→B", "operation", "outcome", "layer", "advice", "posts", "rules"
            ));
            for p in &d.changed {
                let line = format!(
                    "  {:<9} {:<24} {:<34} {:<26} {:<28} {:<6} {}{}\n",
                    format!("{}→{}", p.a.call, p.b.call),
                    p.a.operation(),
                    arrow(p.a.outcome.as_str(), p.b.outcome.as_str()),
                    arrow(&opt(p.a.layer), &opt(p.b.layer)),
                    arrow(&opt(p.a.advice), &opt(p.b.advice)),
                    arrow(&p.a.post_count.to_string(), &p.b.post_count.to_string()),
                    rules_text(p),
                    kinds_text(&p.regressions),
                );
                let paint = if p.regressions.is_empty() { GREEN } else { RED };
                t.push_str(&self.printer.paint(paint, &line));
            }
        }
        for (title, calls, side) in [("only in A", &d.only_a, "A"), ("only in B", &d.only_b, "B")] {
            if calls.is_empty() {
                continue;
            }
            t.push_str(&format!("\n{}\n", self.printer.paint(BOLD, title)));
            for c in calls {
                let new_failure = side == "B" && !c.complete;
                let line = format!(
                    "  {side}{:<8} {:<24} {}{}\n",
                    c.call,
                    c.operation(),
                    c.outcome,
                    if new_failure { "   [new_failure]" } else { "" }
                );
                t.push_str(&if new_failure {
                    self.printer.paint(RED, &line)
                } else {
                    line
                });
            }
        }
        if !d.latency.is_empty() {
            t.push_str(&format!(
                "\n{}\n  {:<24} {:>6} {:>8} {:>8}   {:>6} {:>8} {:>8}   {}\n",
                self.printer.paint(BOLD, "latency (ms)"),
                "operation",
                "A n",
                "p50",
                "p99",
                "B n",
                "p50",
                "p99",
                "p99 change"
            ));
            for l in &d.latency {
                let line = latency_line(l);
                t.push_str(&if l.regression {
                    self.printer.paint(RED, &line)
                } else {
                    line
                });
            }
        }
        let last = verdict_line(found, &self.fail_on, false);
        let failed = found.iter().any(|(k, _)| self.fail_on.contains(k));
        t.push('\n');
        t.push_str(&self.printer.paint(if failed { RED } else { GREEN }, &last));
        t
    }
}

fn heading(names: &[Named; 2], md: bool) -> String {
    let one = |side: &str, n: &Named| {
        let unit = match (n.kind == Kind::Soak, n.calls == 1) {
            (true, true) => "request",
            (true, false) => "requests",
            (false, true) => "call",
            (false, false) => "calls",
        };
        if md {
            format!("**{side}** `{}` ({}, {} {unit})", n.file, n.kind, n.calls)
        } else {
            format!("{side}  {}  ({}, {} {unit})\n", n.file, n.kind, n.calls)
        }
    };
    if md {
        format!(
            "## mcp-verdict diff\n\n{} · {}\n\n",
            one("A", &names[0]),
            one("B", &names[1])
        )
    } else {
        one("A", &names[0]) + &one("B", &names[1])
    }
}

/// A word that may be unknown (`-`).
fn opt<T: std::fmt::Display>(x: Option<T>) -> String {
    x.map_or("-".to_owned(), |v| v.to_string())
}

/// `a` when equal, else `a → b`.
fn arrow(a: &str, b: &str) -> String {
    if a == b {
        a.to_owned()
    } else {
        format!("{a} → {b}")
    }
}

fn rules_text(p: &PairDiff) -> String {
    let mut words: Vec<String> = p.rules_added.iter().map(|r| format!("+{r}")).collect();
    words.extend(p.rules_removed.iter().map(|r| format!("-{r}")));
    if words.is_empty() {
        "-".to_owned()
    } else {
        words.join(" ")
    }
}

fn kinds_text(kinds: &[Regression]) -> String {
    if kinds.is_empty() {
        String::new()
    } else {
        let names: Vec<&str> = kinds.iter().map(|k| k.as_str()).collect();
        format!("   [{}]", names.join(", "))
    }
}

fn spread_cells(s: Option<mcp_verdict::diff::Spread>) -> [String; 3] {
    match s {
        Some(s) => [
            s.count.to_string(),
            s.p50_ms.to_string(),
            s.p99_ms.to_string(),
        ],
        None => ["0".into(), "-".into(), "-".into()],
    }
}

fn pct(p: Option<f64>) -> String {
    p.map_or("-".to_owned(), |p| format!("{p:+.0}%"))
}

fn latency_line(l: &Latency) -> String {
    let [an, a50, a99] = spread_cells(l.a);
    let [bn, b50, b99] = spread_cells(l.b);
    format!(
        "  {:<24} {an:>6} {a50:>8} {a99:>8}   {bn:>6} {b50:>8} {b99:>8}   {}{}\n",
        l.operation,
        pct(l.p99_change_pct),
        if l.regression { "   [latency]" } else { "" }
    )
}

/// The last line: what was found, and whether it fails the run.
fn verdict_line(found: &[(Regression, u64)], fail_on: &[Regression], md: bool) -> String {
    let failing = found.iter().any(|(k, _)| fail_on.contains(k));
    let list: Vec<String> = found.iter().map(|(k, n)| format!("{k} {n}")).collect();
    let text = if found.is_empty() {
        "no regressions".to_owned()
    } else if failing {
        format!("regressions: {} (exit 1)", list.join(", "))
    } else {
        format!("regressions: {} (none of --fail-on)", list.join(", "))
    };
    if md {
        format!("\n**{text}**\n")
    } else {
        format!("{text}\n")
    }
}

fn md_row(cells: &[String]) -> String {
    let cells: Vec<String> = cells.iter().map(|c| c.replace('|', "\\|")).collect();
    format!("| {} |\n", cells.join(" | "))
}

/// The counts line both the human and the markdown output open with.
fn summary_line(d: &Diff) -> String {
    format!(
        "{} paired, {} changed, {} only in A, {} only in B\n",
        d.paired,
        d.changed.len(),
        d.only_a.len(),
        d.only_b.len()
    )
}

fn markdown(
    names: &[Named; 2],
    d: &Diff,
    found: &[(Regression, u64)],
    fail_on: &[Regression],
) -> String {
    let mut t = heading(names, true);
    t.push_str(&summary_line(d));
    if !d.changed.is_empty() {
        t.push_str("\n### Changed\n\n| A→B | operation | outcome | layer | advice | posts | rules | regressions |\n|---|---|---|---|---|---|---|---|\n");
        for p in &d.changed {
            t.push_str(&md_row(&[
                format!("{}→{}", p.a.call, p.b.call),
                format!("`{}`", p.a.operation()),
                arrow(p.a.outcome.as_str(), p.b.outcome.as_str()),
                arrow(&opt(p.a.layer), &opt(p.b.layer)),
                arrow(&opt(p.a.advice), &opt(p.b.advice)),
                arrow(&p.a.post_count.to_string(), &p.b.post_count.to_string()),
                rules_text(p),
                kinds_text(&p.regressions).trim().to_owned(),
            ]));
        }
    }
    for (title, calls) in [("Only in A", &d.only_a), ("Only in B", &d.only_b)] {
        if !calls.is_empty() {
            t.push_str(&format!(
                "\n### {title}\n\n| call | operation | outcome |\n|---|---|---|\n"
            ));
            for c in calls {
                t.push_str(&md_row(&[
                    c.call.to_string(),
                    format!("`{}`", c.operation()),
                    c.outcome.to_string(),
                ]));
            }
        }
    }
    if !d.latency.is_empty() {
        t.push_str("\n### Latency (ms)\n\n| operation | A n | A p50 | A p99 | B n | B p50 | B p99 | p99 change |\n|---|---|---|---|---|---|---|---|\n");
        for l in &d.latency {
            let [an, a50, a99] = spread_cells(l.a);
            let [bn, b50, b99] = spread_cells(l.b);
            let change = pct(l.p99_change_pct) + if l.regression { " **latency**" } else { "" };
            t.push_str(&md_row(&[
                format!("`{}`", l.operation),
                an,
                a50,
                a99,
                bn,
                b50,
                b99,
                change,
            ]));
        }
    }
    t.push_str(&verdict_line(found, fail_on, true));
    t
}

fn soak_table(d: &SoakDiff, md: bool) -> String {
    let mut rows = vec![
        [
            "requests".to_owned(),
            d.a.requests.to_string(),
            d.b.requests.to_string(),
        ],
        [
            "incomplete rate".to_owned(),
            format!("{:.4}", d.a.incomplete_rate),
            format!("{:.4}", d.b.incomplete_rate),
        ],
        [
            "p50 ms".to_owned(),
            format!("{:.1}", d.a.p50_ms),
            format!("{:.1}", d.b.p50_ms),
        ],
        [
            format!("p99 ms ({})", pct(d.p99_change_pct)),
            format!("{:.1}", d.a.p99_ms),
            format!("{:.1}", d.b.p99_ms),
        ],
    ];
    for c in &d.outcomes {
        rows.push([c.name.clone(), c.a.to_string(), c.b.to_string()]);
    }
    for c in &d.rules {
        rows.push([format!("rule {}", c.name), c.a.to_string(), c.b.to_string()]);
    }
    let mut t = if md {
        "| | A | B |\n|---|---|---|\n".to_owned()
    } else {
        format!("\n  {:<40} {:>12} {:>12}\n", "", "A", "B")
    };
    for [name, a, b] in rows {
        t.push_str(&if md {
            md_row(&[name, a, b])
        } else {
            format!("  {name:<40} {a:>12} {b:>12}\n")
        });
    }
    if !md {
        t.push('\n');
    }
    t
}

/// The calls behind one regression kind, one line each (JUnit failure text).
fn details(d: &Diff, kind: Regression) -> Vec<String> {
    let pair = |p: &PairDiff| {
        format!(
            "call {}→{} {}: {} → {}",
            p.a.call,
            p.b.call,
            p.a.operation(),
            p.a.outcome,
            p.b.outcome
        )
    };
    let only =
        |c: &CallSummary| format!("call {} {} only in B: {}", c.call, c.operation(), c.outcome);
    match kind {
        Regression::NewFailure => d.only_b.iter().filter(|c| !c.complete).map(only).collect(),
        Regression::Latency => d
            .latency
            .iter()
            .filter(|l| l.regression)
            .map(|l| format!("{}: p99 {}", l.operation, pct(l.p99_change_pct)))
            .collect(),
        _ => d
            .changed
            .iter()
            .filter(|p| p.regressions.contains(&kind))
            .map(pair)
            .collect(),
    }
}

/// One test case per regression kind: a failure when found and in `--fail-on`.
fn junit(
    found: &[(Regression, u64)],
    fail_on: &[Regression],
    details: &dyn Fn(Regression) -> Vec<String>,
) -> String {
    let failures = found.iter().filter(|(k, _)| fail_on.contains(k)).count();
    let mut x = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"mcp-verdict diff\" tests=\"{n}\" failures=\"{failures}\">\n<testsuite name=\"mcp-verdict diff\" tests=\"{n}\" failures=\"{failures}\">\n",
        n = Regression::ALL.len()
    );
    for kind in Regression::ALL {
        let count = found.iter().find(|(k, _)| k == kind).map_or(0, |(_, n)| *n);
        x.push_str(&format!(
            "  <testcase classname=\"diff\" name=\"{}\">",
            escape(kind.as_str())
        ));
        let text = details(*kind).join("\n");
        if count > 0 && fail_on.contains(kind) {
            x.push_str(&format!(
                "<failure message=\"{count} found: {}\">{}</failure>",
                escape(kind.summary()),
                escape(&text)
            ));
        } else if count > 0 {
            x.push_str(&format!(
                "<system-out>{count} found, not in --fail-on\n{}</system-out>",
                escape(&text)
            ));
        }
        x.push_str("</testcase>\n");
    }
    x.push_str("</testsuite>\n</testsuites>\n");
    x
}
