//! Rendering verdicts: a readable table, one JSON document, or JSON lines.

use std::collections::BTreeMap;
use std::io::{self, Write};

use mcp_verdict::replay::{Item, Skipped, Tally};
use mcp_verdict::{Level, Outcome, Verdict};
use serde::Serialize;

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Human,
    Json,
    Jsonl,
    /// Nothing per verdict: the caller writes a whole document at the end (JUnit).
    Silent,
}

/// Writes verdicts as they come. Remembers a broken pipe and stops writing (not an error).
pub struct Printer<W: Write> {
    out: W,
    format: Format,
    color: bool,
    broken: bool,
    files: usize,
    in_file: usize,
    /// The first [`SKIPPED_EXAMPLES`] skipped entries of the file (JSON output), and the count.
    skipped: Vec<Skipped>,
    skipped_total: u64,
    /// Human format: the file whose table header is not printed yet.
    title: Option<String>,
    tally: BTreeMap<Outcome, u64>,
    /// The one count of completeness: the summary line and the exit code both read it.
    completeness: Tally,
    /// `probe --all-tools`: the tools not called (JSON: the file's `skipped_tools`).
    skipped_tools: Option<Vec<SkippedTool>>,
}

/// A tool `probe --all-tools` did not call, and why.
#[derive(Clone, Serialize)]
pub struct SkippedTool {
    pub name: String,
    pub reason: String,
}

/// Skipped entries listed per file in JSON output; `skipped_total` counts them all.
const SKIPPED_EXAMPLES: usize = 100;

pub(crate) const RESET: &str = "\x1b[0m";
pub(crate) const RED: &str = "\x1b[31m";
pub(crate) const GREEN: &str = "\x1b[32m";
pub(crate) const YELLOW: &str = "\x1b[33m";
const DIM: &str = "\x1b[2m";
pub(crate) const BOLD: &str = "\x1b[1m";

#[derive(Serialize)]
struct Line<'a> {
    file: &'a str,
    #[serde(flatten)]
    verdict: &'a Verdict,
}

impl<W: Write> Printer<W> {
    pub fn new(out: W, format: Format, color: bool) -> Self {
        Printer {
            out,
            format,
            color,
            broken: false,
            files: 0,
            in_file: 0,
            skipped: Vec::new(),
            skipped_total: 0,
            title: None,
            tally: BTreeMap::new(),
            completeness: Tally::default(),
            skipped_tools: None,
        }
    }

    /// The tools `probe --all-tools` left out: a `skipped_tools` array in the file's JSON
    /// object, a `{"file", "skipped_tool", "reason"}` line each in JSON lines (human output has
    /// them on stderr, from the caller).
    pub fn skipped_tools(&mut self, file: &str, tools: &[SkippedTool]) {
        match self.format {
            Format::Json => self.skipped_tools = Some(tools.to_vec()),
            Format::Jsonl => {
                for t in tools {
                    let line = serde_json::json!({"file": file, "skipped_tool": t.name, "reason": t.reason});
                    self.emit(&format!("{line}\n"));
                }
            }
            Format::Human | Format::Silent => {}
        }
    }

    /// Counts a verdict for the summary line and the exit code without printing a row (the
    /// proxy's summary at stop: its rows went out live).
    pub fn count(&mut self, v: &Verdict) {
        *self.tally.entry(v.outcome).or_default() += 1;
        self.completeness.add(v);
    }

    /// Writes a whole document (JUnit) to the output.
    pub fn document(&mut self, text: &str) {
        self.emit(text);
        let _ = self.out.flush();
    }

    pub fn broken_pipe(&self) -> bool {
        self.broken
    }

    /// Free text in human output (probe's server summary, a tool's error text).
    pub fn note(&mut self, text: &str) {
        if self.format == Format::Human {
            self.emit(text);
        }
    }

    /// Flushes what was written (for printers that only borrow the writer).
    pub(crate) fn flush(&mut self) {
        let _ = self.out.flush();
    }

    /// Every exchange printed was complete (a refused `server/discover` followed by `initialize`
    /// is forgiven, see [`Tally`]): the exit code's rule, and the summary's.
    pub fn all_complete(&self) -> bool {
        self.completeness.all_complete()
    }

    pub(crate) fn emit(&mut self, text: &str) {
        if self.broken {
            return;
        }
        if let Err(e) = self.out.write_all(text.as_bytes()) {
            if e.kind() == io::ErrorKind::BrokenPipe {
                self.broken = true;
            } else {
                eprintln!("mcp-verdict: cannot write output: {e}");
                self.broken = true;
            }
        }
    }

    pub(crate) fn paint(&self, code: &str, text: &str) -> String {
        if self.color {
            format!("{code}{text}{RESET}")
        } else {
            text.to_owned()
        }
    }

    pub fn begin_file(&mut self, name: &str) {
        self.completeness.next_capture();
        self.in_file = 0;
        self.skipped.clear();
        self.skipped_total = 0;
        match self.format {
            // The table header waits for the first row, so an unusable file prints none.
            Format::Human => self.title = Some(name.to_owned()),
            Format::Json => {
                let sep = if self.files == 0 { "[\n" } else { ",\n" };
                let file = serde_json::to_string(name).unwrap_or_default();
                self.emit(&format!("{sep}{{\"file\":{file},\"verdicts\":["));
            }
            Format::Jsonl | Format::Silent => {}
        }
        self.files += 1;
    }

    fn table_header(&mut self) {
        if let Some(name) = self.title.take() {
            let title = self.paint(BOLD, &name);
            self.emit(&format!(
                "{title}\n{:>4}  {:<28} {:>6}  {:<24} {:<12} {:<5} {:>6}  {}\n",
                "#", "method", "status", "outcome", "layer", "done", "events", "retry"
            ));
        }
    }

    pub fn item(&mut self, file: &str, item: &Item) {
        self.table_header();
        match item {
            Item::Skipped(s) => {
                if self.format == Format::Human {
                    let line = self.paint(DIM, &format!("{:>4}  skipped: {}", s.index, s.reason));
                    self.emit(&format!("{line}\n"));
                }
                // A capture of a million non-MCP entries keeps a count, not a million reasons.
                self.skipped_total += 1;
                if self.skipped.len() < SKIPPED_EXAMPLES {
                    self.skipped.push(s.clone());
                }
            }
            Item::Verdict(v) => {
                *self.tally.entry(v.outcome).or_default() += 1;
                self.completeness.add(v);
                match self.format {
                    Format::Human => self.human(v),
                    Format::Json => {
                        let sep = if self.in_file == 0 { "\n" } else { ",\n" };
                        let text = serde_json::to_string(&**v).unwrap_or_default();
                        self.emit(&format!("{sep}{text}"));
                    }
                    Format::Silent => {}
                    Format::Jsonl => {
                        let text =
                            serde_json::to_string(&Line { file, verdict: v }).unwrap_or_default();
                        self.emit(&format!("{text}\n"));
                    }
                }
                self.in_file += 1;
            }
        }
    }

    fn human(&mut self, v: &Verdict) {
        let method = method_column(v);
        let status = v
            .status
            .map(|s| s.to_string())
            .unwrap_or_else(|| "-".into());
        let events = v
            .event_count
            .map(|e| e.to_string())
            .unwrap_or_else(|| "-".into());
        let outcome = format!("{:<24}", v.outcome.as_str());
        // A refused 2026-07-28 discovery is how a client finds a legacy server: information.
        let probe = is_discovery_refusal(v);
        let tone = match (v.complete, probe) {
            (true, _) => GREEN,
            (false, true) => YELLOW,
            (false, false) => RED,
        };
        let outcome = self.paint(tone, &outcome);
        let done = if v.complete { "yes" } else { "no" };
        let mut retry = v.retry.advice.as_str().to_owned();
        if let Some(ms) = v.retry.after_ms {
            retry = format!("{retry} after {ms} ms");
        }
        self.emit(&format!(
            "{:>4}  {:<28} {:>6}  {} {:<12} {:<5} {:>6}  {}\n",
            v.index,
            method,
            status,
            outcome,
            v.layer.as_str(),
            done,
            events,
            retry
        ));
        for n in notes_of(v) {
            let line = self.paint(DIM, &format!("      {n}"));
            self.emit(&format!("{line}\n"));
        }
        for violation in &v.violations {
            let level = match violation.level {
                Level::Must => "MUST",
                Level::Should => "SHOULD",
            };
            let tag = self.paint(YELLOW, &format!("{level:<6} {}", violation.rule));
            self.emit(&format!("      {tag}: {}\n", violation.detail));
        }
        if probe {
            let note = "      note: the server refused 2026-07-28 discovery; when an initialize \
                        follows, that is the legacy-server fallback, not a failure";
            let note = self.paint(DIM, note);
            self.emit(&format!("{note}\n"));
        } else if !v.complete {
            let why = self.paint(DIM, &format!("      why: {}", v.retry.reason));
            self.emit(&format!("{why}\n"));
        }
    }

    /// Ends a file; `error` says why it could not be used (JSON carries it as `error`).
    pub fn end_file(&mut self, name: &str, error: Option<&str>) {
        match self.format {
            Format::Json => {
                let skipped = serde_json::to_string(&self.skipped).unwrap_or_default();
                let total = self.skipped_total;
                let error = serde_json::to_string(&error).unwrap_or_default();
                let tools = match self.skipped_tools.take() {
                    Some(t) => format!(
                        ",\"skipped_tools\":{}",
                        serde_json::to_string(&t).unwrap_or_default()
                    ),
                    None => String::new(),
                };
                self.emit(&format!(
                    "\n],\"skipped\":{skipped},\"skipped_total\":{total}{tools},\"error\":{error}}}"
                ));
            }
            Format::Jsonl => {
                if let Some(e) = error {
                    let line = serde_json::json!({"file": name, "error": e});
                    self.emit(&format!("{line}\n"));
                }
            }
            Format::Human | Format::Silent => {}
        }
        if self.format == Format::Human && self.title.take().is_none() {
            self.emit("\n");
        }
    }

    pub fn finish(&mut self) {
        match self.format {
            Format::Json => {
                if self.files == 0 {
                    self.emit("[");
                }
                self.emit("\n]\n");
            }
            Format::Human => {
                let tally: Vec<String> =
                    self.tally.iter().map(|(o, n)| format!("{n} {o}")).collect();
                let c = &self.completeness;
                let mut head = format!(
                    "{} exchanges, {} complete, {} incomplete",
                    c.total(),
                    c.total() - c.incomplete() - c.forgiven(),
                    c.incomplete()
                );
                if c.forgiven() > 0 {
                    head.push_str(&format!(", {} legacy probe", c.forgiven()));
                }
                let head = self.paint(if c.all_complete() { GREEN } else { RED }, &head);
                self.emit(&format!("{head}: {}\n", tally.join(", ")));
            }
            Format::Jsonl | Format::Silent => {}
        }
        let _ = self.out.flush();
    }
}

/// A refused `server/discover`: a legacy server's answer to the 2026-07-28 probe.
fn is_discovery_refusal(v: &Verdict) -> bool {
    !v.complete && v.method.as_deref() == Some("server/discover") && v.status.is_some()
}

/// The method column of a human row: the method (or the exchange's kind), the tool's name,
/// cut to 28 characters.
fn method_column(v: &Verdict) -> String {
    let mut method: String = v.method.as_deref().map_or_else(
        || match v.kind {
            Some(kind) if kind != mcp_verdict::ExchangeKind::Request => {
                format!("({})", kind.as_str())
            }
            _ => "(response)".into(),
        },
        str::to_owned,
    );
    if let Some(tool) = &v.tool {
        method = format!("{method} {tool}");
    }
    if method.chars().count() > 28 {
        method = method.chars().take(27).collect::<String>() + "…";
    }
    method
}

/// The dim notes under a human row: the JSON-RPC error, a cut-off event, a limit hit, where
/// the stream can be resumed.
fn notes_of(v: &Verdict) -> Vec<String> {
    let mut notes = Vec::new();
    if let Some(code) = v.error_code {
        notes.push(format!(
            "error {code}: {}",
            v.error_message.as_deref().unwrap_or("")
        ));
    }
    if let Some(u) = &v.unterminated {
        notes.push(format!(
            "cut-off event: {} bytes{}",
            u.bytes,
            if u.looked_final {
                ", and it was the final response"
            } else {
                ""
            }
        ));
    }
    if let Some(limit) = &v.limit {
        notes.push(format!("limit hit: {limit}"));
    }
    if v.resumable {
        notes.push(format!(
            "resumable from Last-Event-ID {}",
            v.last_event_id.as_deref().unwrap_or("")
        ));
    }
    notes
}

#[cfg(test)]
mod tests {
    use mcp_verdict::{End, Headers, Request, ResponseHead, Session, Verdict};

    use super::*;

    fn judge(session: &mut Session, body: &str, status: u16, reply: &str) -> Verdict {
        let mut exchange = session.begin(Request::new("POST", Headers::new(), body.as_bytes()));
        exchange.on_head(ResponseHead {
            status,
            headers: Headers::from_iter([("Content-Type", "application/json")]),
        });
        exchange.feed(reply.as_bytes());
        session.finish(&mut exchange, End::Eof)
    }

    fn summary(verdicts: Vec<Verdict>) -> (String, bool) {
        let mut printer = Printer::new(Vec::new(), Format::Human, false);
        printer.begin_file("capture.har");
        for v in verdicts {
            printer.item("capture.har", &Item::Verdict(Box::new(v)));
        }
        printer.end_file("capture.har", None);
        printer.finish();
        let all_complete = printer.all_complete();
        let text = String::from_utf8(printer.out).unwrap();
        (text.lines().last().unwrap_or("").to_owned(), all_complete)
    }

    /// A refused `server/discover` followed by `initialize` is the legacy probe: the summary
    /// says what the exit code says (this once printed "1 incomplete" and exited 0).
    #[test]
    fn summary_and_exit_code_agree_on_a_legacy_probe() {
        let mut session = Session::default();
        let discover = judge(
            &mut session,
            r#"{"jsonrpc":"2.0","id":0,"method":"server/discover"}"#,
            404,
            "",
        );
        assert!(!discover.complete);
        let init = judge(
            &mut session,
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}"#,
            200,
            r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18"}}"#,
        );
        assert!(init.complete);
        let (line, all_complete) = summary(vec![discover.clone(), init]);
        assert!(all_complete);
        assert!(
            line.starts_with("2 exchanges, 1 complete, 0 incomplete, 1 legacy probe"),
            "{line}"
        );

        // Without the initialize, the refused discover is a failure, in both places.
        let (line, all_complete) = summary(vec![discover]);
        assert!(!all_complete);
        assert!(
            line.starts_with("1 exchanges, 0 complete, 1 incomplete"),
            "{line}"
        );
    }
}
