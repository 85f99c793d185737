//! `mcp-verdict replay`: judge every MCP exchange in HAR captures, in order; plain output
//! streamed file by file, reports (`--html`, JUnit) from the whole run.

use std::io::{self, IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use mcp_verdict::replay::{self, Item};
use mcp_verdict::{Driver, Limits, Redaction, har};

use crate::args::ReplayArgs;
use crate::cli::{check_out, exit_code};
use crate::output::Printer;
use crate::replay_files::{self, open_capture};
use crate::report::{Run, Trace, TraceObserver};
use crate::{calls_out, exit};

/// Judges every MCP exchange of the named captures.
pub fn run(args: ReplayArgs) -> ExitCode {
    // The reports' paths before any capture is read: a bad one fails at once.
    if let Err(e) = args
        .out
        .html
        .as_ref()
        .map_or(Ok(()), |path| check_out("--html", path))
        .and_then(|()| args.out.create_junit())
    {
        return exit::unusable(e);
    }
    if let Err(e) = crate::cli::otlp_available(args.otlp.as_deref()) {
        return exit::unusable(e);
    }
    #[cfg(feature = "otel")]
    let otlp = match args
        .otlp
        .as_deref()
        .map(crate::report::otel::Otlp::new)
        .transpose()
    {
        Ok(o) => o,
        Err(e) => return exit::unusable(e),
    };
    #[cfg(feature = "otel")]
    let exporting = otlp.is_some();
    #[cfg(not(feature = "otel"))]
    let exporting = false;
    let (files, mut unusable) = match capture_paths(&args.files) {
        Ok(found) => found,
        Err(code) => return code,
    };
    if args.calls {
        let code = calls_out::run(&files, &args.out, args.limits.limits());
        return if unusable { ExitCode::from(2) } else { code };
    }
    let mut printer = args.out.printer();
    let limits = args.limits.limits();
    if !args.out.wants_run() && !exporting {
        // Plain output: files judged in parallel, bodies streamed, printed in input order.
        let jobs = args
            .jobs
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
        unusable |= replay_streamed(&files, limits, jobs, &mut printer);
        printer.finish();
        return exit_code(&printer, unusable);
    }
    // Reports need every exchange with its timeline; plain output streams and keeps nothing.
    let shown = args.redact.policy();
    let mut run = Run {
        command: "replay",
        ..Run::default()
    };
    for path in &files {
        let name = path.display().to_string();
        let Some(reader) = open_capture(path, &name) else {
            unusable = true;
            continue;
        };
        printer.begin_file(&name);
        let keep = args.out.max_timeline_messages;
        let error = replay_one(reader, limits, keep, &name, &mut printer, &mut run, &shown);
        if let Some(e) = &error {
            eprintln!("mcp-verdict: {name}: {e}");
            unusable = true;
        }
        printer.end_file(&name, error.as_deref());
    }
    unusable |= args.out.write_reports(&mut printer, &run, unusable);
    #[cfg(feature = "otel")]
    if let Some(otlp) = &otlp {
        // The server is unknown from a capture: no server.* attributes.
        crate::report::otel_run::export(otlp, &run, "");
        if let Err(e) = otlp.shutdown() {
            eprintln!("mcp-verdict: {e}");
            unusable = true;
        }
    }
    printer.finish();
    exit_code(&printer, unusable)
}

/// The captures to replay, directories and globs expanded (stdin when none is named and it is
/// not a terminal), and whether a named one was unusable. `Err` with the exit code when there
/// is nothing to read.
fn capture_paths(named: &[PathBuf]) -> Result<(Vec<PathBuf>, bool), ExitCode> {
    let mut files = named.to_vec();
    if files.is_empty() {
        if io::stdin().is_terminal() {
            return Err(exit::unusable(
                "replay: no capture given; name HAR files, or pipe one in (`mcp-verdict replay - < capture.har`)",
            ));
        }
        files.push(PathBuf::from("-"));
    }
    let mut unusable = false;
    let mut paths = Vec::new();
    for input in replay_files::expand(&files) {
        match input {
            Ok(path) => paths.push(path),
            Err(reason) => {
                eprintln!("mcp-verdict: {reason}");
                unusable = true;
            }
        }
    }
    Ok((paths, unusable))
}

/// Plain output: `files` judged on `jobs` threads, bodies streamed, printed in input order.
/// Returns whether a file was unusable.
fn replay_streamed(
    files: &[PathBuf],
    limits: Limits,
    jobs: usize,
    printer: &mut Printer<impl Write>,
) -> bool {
    let mut unusable = false;
    let mut begun = None;
    replay_files::judge_files(files, limits, jobs, &mut |i, event| {
        let name = files[i].display().to_string();
        if let replay_files::Event::Unopened(e) = &event {
            eprintln!("mcp-verdict: {name}: {e}");
            unusable = true;
            return;
        }
        if begun != Some(i) {
            begun = Some(i);
            printer.begin_file(&name);
        }
        match event {
            replay_files::Event::Item(item) => printer.item(&name, &item),
            replay_files::Event::End(result) => {
                let error = result.as_ref().err().map(String::as_str);
                if let Some(e) = error {
                    eprintln!("mcp-verdict: {name}: {e}");
                    unusable = true;
                }
                if let Ok(stats) = &result {
                    warn_forgotten(&name, stats, limits);
                }
                printer.end_file(&name, error);
            }
            replay_files::Event::Unopened(_) => {}
        }
    });
    unusable
}

/// Says when tool annotations were forgotten past `--max-tools` (their calls got the advice of
/// an unknown tool), and when verdicts left server requests out.
fn warn_forgotten(name: &str, stats: &replay::ReplayStats, limits: Limits) {
    if stats.tools_forgotten > 0 {
        eprintln!(
            "mcp-verdict: {name}: {} tool annotations forgotten past --max-tools {}; calls to them got the advice of an unknown tool",
            stats.tools_forgotten, limits.max_tools
        );
    }
    crate::cli::warn_unlisted(name, stats.server_requests_unlisted, limits);
}

/// Replays one capture for the reports, keeping every exchange with its timeline in `run`;
/// `Some(reason)` when it could not be used: unreadable, empty, not HAR, or without any MCP
/// exchange (exit 2: there is nothing to judge, most likely the wrong file).
fn replay_one(
    reader: Box<dyn io::Read>,
    limits: Limits,
    keep: usize,
    name: &str,
    printer: &mut Printer<io::StdoutLock<'static>>,
    run: &mut Run,
    shown: &Redaction,
) -> Option<String> {
    let mut reader = io::BufReader::with_capacity(1 << 16, reader);
    if let Some(reason) = replay_files::empty(&mut reader) {
        return Some(reason);
    }
    let (mut judged, mut skipped) = (0u64, 0u64);
    let mut each = |item: Item| {
        match &item {
            Item::Verdict(_) => judged += 1,
            Item::Skipped(_) => skipped += 1,
        }
        printer.item(name, &item);
    };
    let result = replay_into_run(reader, limits, keep, name, run, shown, &mut each);
    match result {
        Err(e) => Some(e.to_string()),
        Ok(_) if judged == 0 && skipped == 0 => Some("no entries: the HAR log is empty".into()),
        Ok(_) if judged == 0 => Some(format!(
            "no MCP exchange among its {skipped} entries (none is an MCP exchange)"
        )),
        Ok(stats) => {
            warn_forgotten(name, &stats, limits);
            None
        }
    }
}

/// Replays a capture keeping every exchange's timeline in `run` (for the reports); each row
/// also goes to `each`.
fn replay_into_run(
    reader: impl io::Read,
    limits: Limits,
    keep: usize,
    name: &str,
    run: &mut Run,
    shown: &Redaction,
    each: &mut dyn FnMut(Item),
) -> Result<replay::ReplayStats, har::HarError> {
    run.sources.push(name.to_owned());
    let mut driver = Driver::new(limits);
    let (mut calls, mut grouped) = (mcp_verdict::Calls::new(), Vec::new());
    let read = har::read_entries(reader, &mut |entry| {
        let mut seen = TraceObserver::keeping(keep);
        let mut rows = Vec::with_capacity(1);
        replay::judge_entry_rows_with(
            &mut driver,
            &entry,
            &mut std::iter::empty(),
            &mut seen,
            &mut |item| rows.push(item),
        );
        // A batch's rows share one body: its timeline goes to none of them.
        let single = rows.len() == 1;
        for item in rows {
            match &item {
                Item::Verdict(v) => {
                    calls.add(replay::facts_of(v, &entry), &mut |c| grouped.push(c));
                    let seen = if single {
                        std::mem::replace(&mut seen, TraceObserver::keeping(0))
                    } else {
                        TraceObserver::keeping(0)
                    };
                    let mut trace = Trace::from_entry(name, &entry, (**v).clone(), seen, shown);
                    // The capture's clock, for --otlp (reports draw times relative to it).
                    trace.started = replay::facts_of(v, &entry)
                        .started_ms
                        .map(|ms| std::time::UNIX_EPOCH + std::time::Duration::from_millis(ms));
                    run.traces.push(trace);
                }
                Item::Skipped(s) => run.skipped.push((name.to_owned(), s.clone())),
            }
            each(item);
        }
    });
    // The logical calls, for the page's calls table.
    calls.finish(&mut |c| grouped.push(c));
    run.calls
        .extend(grouped.into_iter().map(|c| (name.to_owned(), c)));
    read.map(|()| replay::ReplayStats {
        tools_forgotten: driver.session().tools_forgotten(),
        server_requests_unlisted: driver.session().server_requests_unlisted(),
    })
}
