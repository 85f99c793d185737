//! Rendering verdicts: a readable table, one JSON document, JSON lines, or markdown (one table
//! per file, failures first: the CI job summary, its shape in docs/ci.md).

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
    /// One markdown table per file, failures first, and a summary line (docs/ci.md).
    Markdown,
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
    /// Markdown: the rows of the file being read, written at its end (failures first).
    md: MdFile,
    /// JSON lines: the line being written, reused, and the file whose `{"file":…` start it
    /// holds (escaped once per file, not per line).
    line: Vec<u8>,
    line_file: Option<(String, Vec<u8>)>,
}

/// Rows of a markdown table shown per file at most; past them a line counts the rest (a job
/// summary holds 1 MiB). Failures come first, so they are the last to be left out.
pub(crate) const MD_ROWS: usize = 500;

/// One file's markdown rows, by group: failures, refused discovery probes, complete ones.
#[derive(Default)]
struct MdFile {
    failures: Vec<String>,
    probes: Vec<String>,
    complete: Vec<String>,
    /// Rows judged in this file, and how many were incomplete (forgiven probes aside).
    total: u64,
    incomplete: u64,
    /// Rows past [`MD_ROWS`] in each group.
    hidden: [u64; 3],
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
            md: MdFile::default(),
            line: Vec::new(),
            line_file: None,
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
            Format::Human | Format::Markdown | Format::Silent => {}
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
        self.emit_bytes(text.as_bytes());
    }

    /// [`Printer::emit`] of a JSON line as written (valid UTF-8 already: not checked again).
    pub(crate) fn emit_bytes(&mut self, bytes: &[u8]) {
        if self.broken {
            return;
        }
        if let Err(e) = self.out.write_all(bytes) {
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
            Format::Markdown => self.md = MdFile::default(),
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
                    Format::Markdown => self.md_row(v),
                    Format::Silent => {}
                    Format::Jsonl => {
                        // The proxy's `--log` line (one writer for both), written as the
                        // bytes it is (JSON: UTF-8 already).
                        if self.line_file.as_ref().is_none_or(|(f, _)| f != file) {
                            self.line_file = Some((file.to_owned(), Verdict::jsonl_start(file)));
                        }
                        let mut line = std::mem::take(&mut self.line);
                        line.clear();
                        if let Some((_, start)) = &self.line_file {
                            v.write_jsonl(&mut line, start);
                        }
                        line.push(b'\n');
                        self.emit_bytes(&line);
                        self.line = line;
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
            Format::Markdown => self.md_file(name, error),
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
                let (head, tally) = self.summary();
                let all_complete = self.completeness.all_complete();
                let head = self.paint(if all_complete { GREEN } else { RED }, &head);
                self.emit(&format!("{head}: {tally}\n"));
            }
            Format::Markdown => {
                let (head, tally) = self.summary();
                self.emit(&format!("**{head}**: {tally}\n"));
            }
            Format::Jsonl | Format::Silent => {}
        }
        let _ = self.out.flush();
    }
}

impl<W: Write> Printer<W> {
    /// The summary of the run: the head ("N exchanges, C complete, I incomplete") and the
    /// count per outcome.
    fn summary(&self) -> (String, String) {
        let tally: Vec<String> = self.tally.iter().map(|(o, n)| format!("{n} {o}")).collect();
        let c = &self.completeness;
        let mut head = format!(
            "{} exchanges, {} complete, {} incomplete",
            c.total(),
            c.total() - c.incomplete() - c.forgiven() - c.resumed() - c.refused_listens(),
            c.incomplete()
        );
        if c.forgiven() > 0 {
            head.push_str(&format!(", {} legacy probe", c.forgiven()));
        }
        if c.resumed() > 0 {
            head.push_str(&format!(", {} resumed", c.resumed()));
        }
        if c.refused_listens() > 0 {
            head.push_str(&format!(", {} GET stream refused", c.refused_listens()));
        }
        (head, tally.join(", "))
    }

    /// Keeps one markdown row of the file being read.
    fn md_row(&mut self, v: &Verdict) {
        // Refusals that do not fail the run (the exit code's rule): a warning row.
        let probe = is_discovery_refusal(v) || mcp_verdict::replay::is_refused_listen(v);
        let (group, mark) = match (v.complete, probe) {
            (true, _) => (2, "✅"),
            (false, true) => (1, "⚠️"),
            (false, false) => (0, "❌"),
        };
        let md = &mut self.md;
        md.total += 1;
        md.incomplete += u64::from(group == 0);
        let rows = match group {
            0 => &mut md.failures,
            1 => &mut md.probes,
            _ => &mut md.complete,
        };
        if rows.len() >= MD_ROWS {
            md.hidden[group] += 1;
            return;
        }
        let mut retry = v.retry.advice.as_str().to_owned();
        if let Some(ms) = v.retry.after_ms {
            retry = format!("{retry} after {ms} ms");
        }
        let mut why = notes_of(v);
        if probe {
            why.push("refused 2026-07-28 discovery: the legacy-server fallback when an initialize follows".into());
        } else if !v.complete {
            why.insert(0, v.retry.reason.to_string());
        }
        let violations: Vec<&str> = v.violations.iter().map(|x| x.rule.as_str()).collect();
        rows.push(format!(
            "| {} | {} | {} | {mark} {} | {} | {} | {} | {} | {} |\n",
            v.index,
            md_cell(&method_column(v)),
            v.status.map_or_else(|| "-".into(), |s| s.to_string()),
            v.outcome.as_str(),
            v.layer.as_str(),
            v.end.as_str(),
            retry,
            md_cell(&violations.join(", ")),
            md_cell(&why.join("; ")),
        ));
    }

    /// Writes the markdown section of a finished file: heading, counts, the table (failures
    /// first), what was left out.
    fn md_file(&mut self, name: &str, error: Option<&str>) {
        let md = std::mem::take(&mut self.md);
        let mut text = format!("### `{}`\n\n", name.replace('`', "'"));
        if let Some(e) = error {
            text.push_str(&format!("**error:** {}\n\n", md_cell(e)));
        }
        if md.total > 0 {
            text.push_str(&format!(
                "{} exchanges: {} incomplete, {} complete",
                md.total,
                md.incomplete,
                md.total - md.incomplete - (md.probes.len() as u64 + md.hidden[1]),
            ));
        }
        if self.skipped_total > 0 {
            let sep = if md.total > 0 { "; " } else { "" };
            text.push_str(&format!(
                "{sep}{} entries skipped (not MCP)",
                self.skipped_total
            ));
        }
        if md.total > 0 || self.skipped_total > 0 {
            text.push_str("\n\n");
        }
        if md.total > 0 {
            text.push_str(
                "| # | method | status | outcome | layer | end | retry | violations | why |\n\
                 |---:|---|---:|---|---|---|---|---|---|\n",
            );
            for row in md.failures.iter().chain(&md.probes).chain(&md.complete) {
                text.push_str(row);
            }
            let hidden: u64 = md.hidden.iter().sum();
            if hidden > 0 {
                text.push_str(&format!(
                    "\n_{hidden} more rows not shown ({} incomplete); `--format json` has them all._\n",
                    md.hidden[0]
                ));
            }
            text.push('\n');
        }
        self.emit(&text);
    }
}

/// Text made safe for one markdown table cell: no line breaks, pipes escaped.
fn md_cell(text: &str) -> String {
    text.replace('\\', "\\\\")
        .replace('|', "\\|")
        .replace(['\r', '\n'], " ")
}

/// A refused `server/discover`: a legacy server's answer to the 2026-07-28 probe.
fn is_discovery_refusal(v: &Verdict) -> bool {
    // Only a legacy-looking refusal: a 5xx or an auth refusal says nothing of the revision.
    mcp_verdict::replay::is_legacy_probe(v)
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

    fn markdown(files: &[(&str, Vec<Verdict>)]) -> String {
        let mut printer = Printer::new(Vec::new(), Format::Markdown, true);
        for (name, verdicts) in files {
            printer.begin_file(name);
            for v in verdicts {
                printer.item(name, &Item::Verdict(Box::new(v.clone())));
            }
            printer.end_file(name, None);
        }
        printer.finish();
        String::from_utf8(printer.out).unwrap()
    }

    /// The documented shape (docs/ci.md): a heading and a table per file, failures first,
    /// cells that cannot break the table, no colour codes, the summary line last.
    #[test]
    fn markdown_is_one_table_per_file_failures_first() {
        let mut session = Session::default();
        let ok = judge(
            &mut session,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
            200,
            r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}"#,
        );
        let mut broken = judge(
            &mut session,
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
            500,
            "",
        );
        broken.index = 1;
        broken.retry.reason = "a | b\nc".into();
        let text = markdown(&[
            ("a.har", vec![ok.clone(), broken]),
            ("b.har", vec![ok.clone()]),
        ]);
        assert!(!text.contains('\x1b'), "no colour in markdown: {text}");
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "### `a.har`");
        assert_eq!(lines[2], "2 exchanges: 1 incomplete, 1 complete");
        assert_eq!(
            lines[4],
            "| # | method | status | outcome | layer | end | retry | violations | why |"
        );
        assert!(
            lines[6].starts_with("| 1 | tools/list | 500 | ❌ HTTP_ERROR |"),
            "{}",
            lines[6]
        );
        assert!(lines[6].ends_with("| a \\| b c |"), "{}", lines[6]);
        assert!(
            lines[7].starts_with("| 0 | tools/list | 200 | ✅ SUCCESS |"),
            "{}",
            lines[7]
        );
        assert_eq!(lines[9], "### `b.har`");
        assert_eq!(
            text.matches("| # | method").count(),
            2,
            "one table per file"
        );
        let last = lines.last().unwrap();
        assert!(
            last.starts_with("**3 exchanges, 2 complete, 1 incomplete**: "),
            "{last}"
        );
        // Every table row has the header's nine cells (escaped pipes aside).
        for row in lines.iter().filter(|l| l.starts_with("| ")) {
            assert_eq!(row.replace("\\|", "").matches('|').count(), 10, "{row}");
        }
    }

    #[test]
    fn markdown_tables_are_capped_with_failures_kept() {
        let mut session = Session::default();
        let ok = judge(
            &mut session,
            r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
            200,
            r#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
        );
        let bad = judge(
            &mut session,
            r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#,
            503,
            "",
        );
        let mut rows = vec![ok; MD_ROWS + 3];
        rows.push(bad);
        let text = markdown(&[("big.har", rows)]);
        assert_eq!(
            text.matches("HTTP_ERROR |").count(),
            1,
            "the failure is shown"
        );
        assert_eq!(text.matches("✅ SUCCESS").count(), MD_ROWS);
        assert!(
            text.contains("_3 more rows not shown (0 incomplete)"),
            "{text}"
        );
    }
}
