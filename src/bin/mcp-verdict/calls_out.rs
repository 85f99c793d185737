//! `replay --calls`: logical calls instead of exchanges, as a table (the seed article's per-call
//! fields as columns), one JSON document, or one call per line.

use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use mcp_verdict::replay::{self, Tally};
use mcp_verdict::{AuthStep, Call, ExchangeKind, Level, Limits, Outcome, RetryOrigin, TaskStatus};
use serde_json::Value;

use crate::args::{FormatArg, OutputArgs, OutputFormatArg};

use crate::output::{BOLD, Format, GREEN, Printer, RED, YELLOW};

/// Writes calls as they come, through the verdict printer's writer (colour, broken pipe).
struct CallPrinter<W: Write> {
    out: Printer<W>,
    format: FormatArg,
    files: usize,
    in_file: usize,
    total: u64,
    incomplete: u64,
}

impl CallPrinter<io::StdoutLock<'static>> {
    /// A printer for `--calls`; `None` (said on stderr) for the report formats it does not have.
    fn new(out: &OutputArgs) -> Option<Self> {
        let format = match out.format {
            OutputFormatArg::Human => FormatArg::Human,
            OutputFormatArg::Json => FormatArg::Json,
            OutputFormatArg::Jsonl => FormatArg::Jsonl,
            OutputFormatArg::Junit | OutputFormatArg::Markdown => {
                eprintln!(
                    "mcp-verdict: --calls prints human, json or jsonl, not junit or markdown"
                );
                return None;
            }
        };
        if out.junit.is_some() {
            eprintln!("mcp-verdict: --calls does not write --junit reports (they show exchanges)");
            return None;
        }
        if out.html.is_some() {
            eprintln!("mcp-verdict: --calls does not write --html reports (they show exchanges)");
            return None;
        }
        Some(CallPrinter {
            out: Printer::new(io::stdout().lock(), Format::Human, out.color.enabled()),
            format,
            files: 0,
            in_file: 0,
            total: 0,
            incomplete: 0,
        })
    }
}

impl<W: Write> CallPrinter<W> {
    /// 0 all calls complete (or output cut by a closed pipe), 1 some not, 2 unusable input.
    fn exit(&self, unusable: bool, all_complete: bool) -> ExitCode {
        if self.out.broken_pipe() || (all_complete && !unusable) {
            ExitCode::SUCCESS
        } else if unusable {
            ExitCode::from(2)
        } else {
            ExitCode::from(1)
        }
    }

    fn emit(&mut self, text: &str) {
        self.out.emit(text);
    }

    fn paint(&self, code: &str, text: &str) -> String {
        self.out.paint(code, text)
    }

    fn begin_file(&mut self, name: &str) {
        self.in_file = 0;
        match self.format {
            FormatArg::Human => {
                let title = self.paint(BOLD, name);
                self.emit(&format!(
                    "{title}\n{:>4}  {:<12} {:<22} {:<10} {:<26} {:>5}  {:<14} {:<10} {:>6}  {:<14} {:<22} {}\n",
                    "call",
                    "entries",
                    "client",
                    "version",
                    "method",
                    "posts",
                    "statuses",
                    "ids",
                    "error",
                    "result_type",
                    "outcome",
                    "retry_origin"
                ));
            }
            FormatArg::Json => {
                let sep = if self.files == 0 { "[\n" } else { ",\n" };
                let file = serde_json::to_string(name).unwrap_or_default();
                self.emit(&format!("{sep}{{\"file\":{file},\"calls\":["));
            }
            FormatArg::Jsonl => {}
        }
        self.files += 1;
    }

    fn call(&mut self, c: &Call) {
        self.total += 1;
        if !c.complete {
            self.incomplete += 1;
        }
        match self.format {
            FormatArg::Human => self.human(c),
            FormatArg::Json => {
                let sep = if self.in_file == 0 { "\n" } else { ",\n" };
                let text = serde_json::to_string(c).unwrap_or_default();
                self.emit(&format!("{sep}{text}"));
            }
            FormatArg::Jsonl => {
                // The proxy's `--calls` line (one writer for both).
                let mut line = Vec::new();
                c.write_json(&mut line);
                line.push(b'\n');
                self.out.emit_bytes(&line);
            }
        }
        self.in_file += 1;
    }

    fn human(&mut self, c: &Call) {
        let list = |items: Vec<String>| {
            if items.is_empty() {
                "-".to_owned()
            } else {
                items.join(",")
            }
        };
        let entries = list(c.entries.iter().map(u64::to_string).collect());
        let statuses = list(
            c.http_statuses
                .iter()
                .map(|s| s.map_or("-".to_owned(), |s| s.to_string()))
                .collect(),
        );
        let ids = list(c.ids.iter().map(id_text).collect());
        let mut method = c.method.as_deref().unwrap_or("-").to_owned();
        if let Some(tool) = &c.tool {
            method = format!("{method} {tool}");
        }
        let outcome = format!("{:<22}", c.outcome.as_str());
        let outcome = self.paint(if c.complete { GREEN } else { RED }, &outcome);
        let origin = c.retry_origin.map_or("unknown", |o| o.as_str());
        let line = format!(
            "{:>4}  {:<12} {:<22} {:<10} {:<26} {:>5}  {:<14} {:<10} {:>6}  {:<14} {} {}\n",
            c.call,
            clip(&entries, 12),
            clip(c.client.as_deref().unwrap_or("-"), 22),
            c.protocol_version.map_or("-", |v| v.as_str()),
            clip(&method, 26),
            c.post_count,
            clip(&statuses, 14),
            clip(&ids, 10),
            c.error_code.map_or("-".to_owned(), |e| e.to_string()),
            clip(c.result_type.as_deref().unwrap_or("-"), 14),
            outcome,
            origin,
        );
        self.emit(&line);
        if c.double_execution_risk {
            let note = self.paint(RED, "      double execution risk");
            self.emit(&format!("{note}\n"));
        }
        if let Some(status) = c.task_status {
            let note = self.paint(YELLOW, &format!("      task: {status}"));
            self.emit(&format!("{note} ({})\n", status.summary()));
        }
        if let Some(step) = c.auth_step {
            let note = self.paint(YELLOW, &format!("      auth step failed: {step}"));
            self.emit(&format!("{note} ({})\n", step.summary()));
        }
        for v in &c.violations {
            let level = match v.level {
                Level::Must => "MUST",
                Level::Should => "SHOULD",
            };
            let tag = self.paint(YELLOW, &format!("{level:<6} {}", v.rule));
            self.emit(&format!("      {tag}: {}\n", v.detail));
        }
    }

    fn end_file(&mut self) {
        match self.format {
            FormatArg::Json => self.emit("\n]}"),
            FormatArg::Human => self.emit("\n"),
            FormatArg::Jsonl => {}
        }
    }

    fn finish(&mut self) {
        match self.format {
            FormatArg::Json => {
                if self.files == 0 {
                    self.emit("[");
                }
                self.emit("\n]\n");
            }
            FormatArg::Human => {
                let head = format!(
                    "{} calls, {} complete, {} incomplete\n",
                    self.total,
                    self.total - self.incomplete,
                    self.incomplete
                );
                let head = self.paint(if self.incomplete == 0 { GREEN } else { RED }, &head);
                self.emit(&head);
            }
            FormatArg::Jsonl => {}
        }
        self.out.flush();
    }
}

fn id_text(id: &Value) -> String {
    match id {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn clip(text: &str, width: usize) -> String {
    if text.chars().count() > width {
        text.chars().take(width - 1).collect::<String>() + "…"
    } else {
        text.to_owned()
    }
}

/// Prints the calls of one live run (`probe --calls`); the exit code as for `replay --calls`.
pub fn print(out: &OutputArgs, name: &str, calls: &[Call], unusable: bool) -> ExitCode {
    let Some(mut printer) = CallPrinter::new(out) else {
        return ExitCode::from(2);
    };
    let mut tally = Tally::default();
    printer.begin_file(name);
    for call in calls {
        tally.add_call(call);
        printer.call(call);
    }
    printer.end_file();
    printer.finish();
    printer.exit(unusable, tally.all_complete())
}

/// Runs `replay --calls`. Exit codes as for verdicts, one level up: 0 when every call ended
/// complete (a refused `server/discover` followed by `initialize` is forgiven), 1 otherwise, 2
/// for unusable input.
pub fn run(files: &[PathBuf], out: &OutputArgs, limits: Limits) -> ExitCode {
    let Some(mut printer) = CallPrinter::new(out) else {
        return ExitCode::from(2);
    };
    let mut tally = Tally::default();
    let mut unusable = false;
    for path in files {
        tally.next_capture();
        let name = path.display().to_string();
        let Some(reader) = crate::replay_files::open_capture(path, &name) else {
            unusable = true;
            continue;
        };
        printer.begin_file(&name);
        let result = replay::replay_calls(reader, limits, &mut |call| {
            tally.add_call(&call);
            printer.call(&call);
        });
        printer.end_file();
        if let Err(e) = result {
            eprintln!("mcp-verdict: {name}: {e}");
            unusable = true;
        }
    }
    printer.finish();
    printer.exit(unusable, tally.all_complete())
}

/// After the rules, `mcp-verdict rules` lists the outcomes (with layer and completeness) and the
/// entry kinds and the calls' retry origins, so that every name a verdict or call can carry is
/// explained in one place.
pub fn list_vocabulary(out: &mut dyn Write) {
    let mut lines = vec![String::new(), "outcomes:".to_owned()];
    for o in Outcome::ALL {
        let done = if o.is_complete() {
            "complete"
        } else {
            "incomplete"
        };
        lines.push(format!(
            "  {:<26} {:<12} {:<10} {}",
            o.as_str(),
            o.layer().as_str(),
            done,
            o.summary()
        ));
    }
    lines.push(
        "  (HTTP_ERROR is in layer auth for a 401, or a 403 with a WWW-Authenticate challenge)"
            .to_owned(),
    );
    lines.push(String::new());
    lines.push("kinds:".to_owned());
    for k in ExchangeKind::ALL {
        lines.push(format!("  {:<26} {}", k.as_str(), k.summary()));
    }
    lines.push(String::new());
    lines.push("retry origins (calls; a guess from traffic):".to_owned());
    for r in RetryOrigin::ALL {
        lines.push(format!("  {:<26} {}", r.as_str(), r.summary()));
    }
    lines.push(String::new());
    lines.push("auth steps (calls' auth_step: the step that failed):".to_owned());
    for a in AuthStep::ALL {
        lines.push(format!("  {:<26} {}", a.as_str(), a.summary()));
    }
    lines.push(String::new());
    lines.push("task statuses (verdicts' and calls' task_status):".to_owned());
    for t in TaskStatus::ALL {
        lines.push(format!("  {:<26} {}", t.as_str(), t.summary()));
    }
    let _ = writeln!(out, "{}", lines.join("\n"));
}
