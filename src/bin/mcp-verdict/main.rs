//! `mcp-verdict`: judge MCP Streamable-HTTP exchanges.
//!
//! Exit codes: 0 every exchange complete, 1 any incomplete or invalid, 2 unusable input.

mod faults;
mod output;
mod probe;
mod replay_files;
mod report;
mod soak;

use std::fs::File;
use std::io::{self, IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};
use mcp_verdict::Rule;
use mcp_verdict::replay::{self, Item};
use mcp_verdict::{Limits, Session, har};

use output::{Format, Printer};
use report::{Decision, Run, Trace, TraceObserver};

#[derive(Parser)]
#[command(
    name = "mcp-verdict",
    version,
    about = "Tells, for every MCP Streamable-HTTP exchange, which layer failed and whether the reply is complete.",
    after_help = "Exit codes: 0 every exchange complete, 1 any incomplete or invalid, 2 unusable input."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Judge every MCP exchange in HAR 1.2 captures, in order.
    Replay(ReplayArgs),
    /// Talk to a live MCP endpoint: handshake, tools/list, optionally one tools/call.
    Probe(ProbeArgs),
    /// Run an MCP server that misbehaves on purpose: /mcp is correct, /mcp/<scenario> faulty.
    ServeFaults(ServeArgs),
    /// Start the fault server on a loopback port, probe every scenario, compare the verdicts.
    Demo(DemoArgs),
    /// Sustained tools/call load with a verdict for every response.
    Soak(SoakArgs),
    /// Work with soak reports.
    Report {
        #[command(subcommand)]
        command: ReportCommand,
    },
    /// List the spec rules that are checked, with their ids and levels.
    Rules,
}

#[derive(Subcommand)]
enum ReportCommand {
    /// Merge soak reports (--report-out files) into exact combined figures.
    Merge {
        /// Report files.
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Write the merged report as JSON.
        #[arg(long, value_name = "FILE.json")]
        report_out: Option<PathBuf>,
        /// Print JSON instead of the table.
        #[arg(long)]
        json: bool,
    },
}

#[derive(clap::Args)]
struct SoakArgs {
    /// The MCP endpoint.
    url: String,
    /// Tool to call (or use --mix).
    #[arg(long, required_unless_present = "mix")]
    tool: Option<String>,
    /// Tool arguments, a JSON object.
    #[arg(long, default_value = "{}")]
    args: String,
    /// A JSON file: [{"tool": "...", "args": {...}, "weight": N}, ...]
    #[arg(long, value_name = "FILE.json", conflicts_with = "tool")]
    mix: Option<PathBuf>,
    /// Calls in flight at once.
    #[arg(long, default_value_t = 8)]
    concurrency: usize,
    /// Stop after this many calls (default 1000 when no --duration is given).
    #[arg(long)]
    requests: Option<u64>,
    /// Stop after this long, e.g. 30s, 5m, 500ms.
    #[arg(long)]
    duration: Option<String>,
    /// At most this many calls per second.
    #[arg(long)]
    rate: Option<f64>,
    /// Protocol revision (as for probe).
    #[arg(long, default_value = "auto")]
    protocol: String,
    /// Extra request header, 'Name: value' (repeatable, redacted in output).
    #[arg(long = "header", value_name = "NAME: VALUE")]
    headers: Vec<String>,
    /// Deadline per call, e.g. 10s.
    #[arg(long, default_value = "60s")]
    timeout: String,
    /// Write the report as JSON (mergeable with `report merge`).
    #[arg(long, value_name = "FILE.json")]
    report_out: Option<PathBuf>,
    /// Fail (exit 1) when more than this share of calls is incomplete, e.g. 0.001.
    #[arg(long)]
    max_incomplete_rate: Option<f64>,
    /// Fail (exit 1) when the p99 time to the terminal response exceeds this, e.g. 2s.
    #[arg(long)]
    max_p99: Option<String>,
    /// Write Prometheus text exposition to this file at the end.
    #[arg(long, value_name = "FILE")]
    metrics_file: Option<PathBuf>,
    /// Serve Prometheus text on this loopback address while running, e.g. 127.0.0.1:9464.
    #[arg(long, value_name = "ADDR")]
    metrics_listen: Option<String>,
    /// Write a self-contained HTML report (percentiles plotted, throughput and outcomes over
    /// time) to FILE.
    #[arg(long, value_name = "FILE.html")]
    html: Option<PathBuf>,
    /// Export one span per call and the mcp.client.operation.duration histogram as OTLP/HTTP
    /// protobuf to this collector, e.g. http://127.0.0.1:4318.
    #[cfg(feature = "otel")]
    #[arg(long, value_name = "URL")]
    otlp: Option<String>,
    /// Write JUnit XML (one test case per gate: complete calls and each threshold) to FILE.
    #[arg(long, value_name = "FILE.xml")]
    junit: Option<PathBuf>,
    #[command(flatten)]
    limits: LimitArgs,
}

#[derive(clap::Args)]
struct ServeArgs {
    /// Address to listen on (loopback by default).
    #[arg(long, default_value = "127.0.0.1:8787")]
    listen: String,
    /// Print the scenarios and the verdict each must produce, then exit.
    #[arg(long)]
    list: bool,
    /// Format of --list.
    #[arg(long, value_enum, default_value_t = FormatArg::Human)]
    format: FormatArg,
    /// Open connections at once; one more gets 503 and is closed.
    #[arg(long, default_value_t = 256)]
    max_connections: usize,
    /// Largest request body, in bytes (413 past it).
    #[arg(long, default_value_t = 4 << 20)]
    max_request_bytes: usize,
    /// Request bodies held at once, all connections together, in bytes (503 past it).
    #[arg(long, default_value_t = 64 << 20)]
    max_bodies_in_flight: usize,
    /// Close a keep-alive connection after this long without a request.
    #[arg(long, default_value = "30s")]
    idle_timeout: String,
    /// From a request's first byte to the end of its head (slowloris); 408 past it.
    #[arg(long, default_value = "10s")]
    head_timeout: String,
    /// From the end of the head to the end of the body; 408 past it.
    #[arg(long, default_value = "30s")]
    body_timeout: String,
}

#[derive(clap::Args)]
struct DemoArgs {
    /// Only these scenarios (default: all).
    #[arg(long = "scenario")]
    scenarios: Vec<String>,
    /// Also print every verdict as JSON lines.
    #[arg(long)]
    verbose: bool,
    /// Colour (auto: on a terminal, unless NO_COLOR is set).
    #[arg(long, value_enum, default_value_t = ColorArg::Auto)]
    color: ColorArg,
}

#[derive(clap::Args)]
struct ProbeArgs {
    /// The MCP endpoint, e.g. http://127.0.0.1:8000/mcp
    url: String,
    /// Protocol revision: auto tries 2026-07-28 and falls back to 2025-11-25 initialize.
    #[arg(long, default_value = "auto")]
    protocol: String,
    /// Call this tool after listing tools.
    #[arg(long)]
    tool: Option<String>,
    /// Tool arguments, a JSON object.
    #[arg(long, default_value = "{}")]
    args: String,
    /// Extra request header, 'Name: value' (repeatable). Values are redacted in all output.
    #[arg(long = "header", value_name = "NAME: VALUE")]
    headers: Vec<String>,
    /// Export one span per exchange and the mcp.client.operation.duration histogram as
    /// OTLP/HTTP protobuf to this collector, e.g. http://127.0.0.1:4318.
    #[cfg(feature = "otel")]
    #[arg(long, value_name = "URL")]
    otlp: Option<String>,
    /// Write what was seen as HAR 1.2 (replay gives the same verdicts).
    #[arg(long, value_name = "FILE.har")]
    record: Option<PathBuf>,
    /// Overall deadline per exchange, in seconds.
    #[arg(long, default_value_t = 60.0)]
    timeout: f64,
    /// Deadline without any body bytes, in seconds.
    #[arg(long)]
    idle_timeout: Option<f64>,
    #[command(flatten)]
    out: OutputArgs,
    #[command(flatten)]
    limits: LimitArgs,
}

#[derive(clap::Args)]
struct ReplayArgs {
    /// HAR files (browser devtools, mitmproxy, proxy exports). `-` reads standard input.
    /// A directory stands for the `.har` files in it.
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// Files judged at once (default: one per core). Output stays in input order.
    #[arg(long, short = 'j')]
    jobs: Option<usize>,
    #[command(flatten)]
    out: OutputArgs,
    #[command(flatten)]
    limits: LimitArgs,
}

#[derive(clap::Args)]
struct OutputArgs {
    /// Output format.
    #[arg(long, value_enum, default_value_t = OutputFormatArg::Human)]
    format: OutputFormatArg,
    /// Also write a self-contained HTML report (summary, sortable table, timelines) to FILE.
    #[arg(long, value_name = "FILE.html")]
    html: Option<PathBuf>,
    /// Colour in human output (auto: on a terminal, unless NO_COLOR is set).
    #[arg(long, value_enum, default_value_t = ColorArg::Auto)]
    color: ColorArg,
}

#[derive(clap::Args)]
struct LimitArgs {
    /// Largest SSE event, in bytes.
    #[arg(long, default_value_t = Limits::default().max_event_bytes)]
    max_event_bytes: usize,
    /// Largest JSON body, in bytes.
    #[arg(long, default_value_t = Limits::default().max_body_bytes)]
    max_body_bytes: u64,
    /// Most SSE events on one stream.
    #[arg(long, default_value_t = Limits::default().max_events)]
    max_events: u64,
    /// Tool annotations remembered per capture or client (oldest forgotten past it).
    #[arg(long, default_value_t = Limits::default().max_tools)]
    max_tools: usize,
}

impl LimitArgs {
    fn limits(&self) -> Limits {
        Limits {
            max_event_bytes: self.max_event_bytes,
            max_body_bytes: self.max_body_bytes,
            max_events: self.max_events,
            max_tools: self.max_tools,
        }
    }
}

#[derive(Clone, Copy, ValueEnum)]
enum FormatArg {
    /// A readable table.
    Human,
    /// One JSON document: an array of per-file results.
    Json,
    /// One verdict per line.
    Jsonl,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum OutputFormatArg {
    /// A readable table.
    Human,
    /// One JSON document: an array of per-file results.
    Json,
    /// One verdict per line.
    Jsonl,
    /// JUnit XML: one test case per exchange, failures for incomplete ones.
    Junit,
}

#[derive(Clone, Copy, ValueEnum)]
enum ColorArg {
    Auto,
    Always,
    Never,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Replay(args) => run_replay(args),
        Command::Probe(args) => probe::run(args),
        Command::ServeFaults(args) => faults::serve(args),
        Command::Demo(args) => faults::demo(args),
        Command::Soak(args) => soak::run(args),
        Command::Report { command } => match command {
            ReportCommand::Merge {
                files,
                report_out,
                json,
            } => soak::merge(&files, report_out.as_deref(), json),
        },
        Command::Rules => {
            let mut out = io::stdout().lock();
            for rule in Rule::ALL {
                let level = format!("{:?}", rule.level()).to_lowercase();
                if writeln!(out, "{:<40} {:<6} {}", rule.id(), level, rule.summary()).is_err() {
                    break;
                }
            }
            ExitCode::SUCCESS
        }
    }
}

impl ColorArg {
    /// Whether to colour standard output.
    fn enabled(self) -> bool {
        match self {
            ColorArg::Always => true,
            ColorArg::Never => false,
            ColorArg::Auto => {
                io::stdout().is_terminal()
                    && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
            }
        }
    }
}

impl OutputArgs {
    fn printer(&self) -> Printer<io::StdoutLock<'static>> {
        let stdout = io::stdout();
        let color = self.color.enabled();
        let format = match self.format {
            OutputFormatArg::Human => Format::Human,
            OutputFormatArg::Json => Format::Json,
            OutputFormatArg::Jsonl => Format::Jsonl,
            OutputFormatArg::Junit => Format::Silent,
        };
        Printer::new(stdout.lock(), format, color)
    }
}

impl OutputArgs {
    /// Whether a report needs the whole run (traces) kept.
    fn wants_run(&self) -> bool {
        self.html.is_some() || self.format == OutputFormatArg::Junit
    }

    /// Writes `--html` and, for `--format junit`, the JUnit document to the output. Returns
    /// whether a file could not be written.
    fn write_reports<W: Write>(&self, printer: &mut Printer<W>, run: &Run, unusable: bool) -> bool {
        let all_complete = printer.all_complete();
        let incomplete = run.traces.iter().filter(|t| !t.verdict.complete).count();
        let mut decision = Decision::of(unusable, all_complete, incomplete);
        let mut failed = false;
        if let Some(path) = &self.html {
            failed = report::write_file(path, &report::html::exchanges_page(run, &decision));
            if failed {
                decision = Decision::of(true, all_complete, incomplete);
            }
        }
        if self.format == OutputFormatArg::Junit {
            printer.document(&report::junit::exchanges(run, &decision));
        }
        failed
    }
}

/// The exit code for a run: 2 unusable input, else 0 when every exchange was complete.
fn exit_code<W: Write>(printer: &Printer<W>, unusable: bool) -> ExitCode {
    if printer.broken_pipe() {
        ExitCode::SUCCESS
    } else if unusable {
        ExitCode::from(2)
    } else if printer.all_complete() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// Files at least this large get a progress line on a terminal.
pub(crate) const PROGRESS_MIN_BYTES: u64 = 16 << 20;

/// A reader that draws "name: 42% (420 MiB of 1000 MiB)" on stderr as it goes.
pub(crate) struct Progress<R> {
    inner: R,
    name: String,
    total: u64,
    done: u64,
    last: std::time::Instant,
}

impl<R> Progress<R> {
    pub(crate) fn new(inner: R, total: u64, name: &str) -> Self {
        Progress {
            inner,
            name: name.to_owned(),
            total,
            done: 0,
            last: std::time::Instant::now(),
        }
    }
}

/// Seeking (the HAR reader reads a body again when it came before the response head) moves
/// the progress with it.
impl<R: io::Seek> io::Seek for Progress<R> {
    fn seek(&mut self, pos: io::SeekFrom) -> io::Result<u64> {
        let at = self.inner.seek(pos)?;
        self.done = at;
        Ok(at)
    }
}

impl<R: io::Read> io::Read for Progress<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.done += n as u64;
        if n == 0 {
            eprint!("\r\x1b[2K");
        } else if self.last.elapsed() >= std::time::Duration::from_millis(200) {
            self.last = std::time::Instant::now();
            let mib = |b: u64| b >> 20;
            eprint!(
                "\r\x1b[2K{}: {}% ({} MiB of {} MiB)",
                self.name,
                self.done * 100 / self.total.max(1),
                mib(self.done),
                mib(self.total)
            );
        }
        Ok(n)
    }
}

fn run_replay(args: ReplayArgs) -> ExitCode {
    let mut printer = args.out.printer();
    let limits = args.limits.limits();
    let mut unusable = false;
    let mut files = Vec::new();
    for input in replay_files::expand(&args.files) {
        match input {
            Ok(path) => files.push(path),
            Err(reason) => {
                eprintln!("mcp-verdict: {reason}");
                unusable = true;
            }
        }
    }
    if !args.out.wants_run() {
        // Plain output: files judged in parallel, bodies streamed, printed in input order.
        let jobs = args
            .jobs
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
        let mut begun = None;
        replay_files::judge_files(&files, limits, jobs, &mut |i, event| {
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
                    printer.end_file(&name);
                    match result {
                        Err(e) => {
                            eprintln!("mcp-verdict: {name}: {e}");
                            unusable = true;
                        }
                        Ok(stats) if stats.tools_forgotten > 0 => eprintln!(
                            "mcp-verdict: {name}: {} tool annotations forgotten past --max-tools {}; calls to them got the advice of an unknown tool",
                            stats.tools_forgotten, limits.max_tools
                        ),
                        Ok(_) => {}
                    }
                }
                replay_files::Event::Unopened(_) => {}
            }
        });
        printer.finish();
        return exit_code(&printer, unusable);
    }
    // Reports need every exchange with its timeline; plain output streams and keeps nothing.
    let mut run = args.out.wants_run().then(|| Run {
        command: "replay",
        ..Run::default()
    });
    for path in &files {
        let name = path.display().to_string();
        let reader: Box<dyn io::Read> = if name == "-" {
            Box::new(io::stdin().lock())
        } else {
            match File::open(path) {
                Ok(f) => match f.metadata() {
                    Ok(m) if m.len() >= PROGRESS_MIN_BYTES && io::stderr().is_terminal() => {
                        Box::new(Progress::new(f, m.len(), &name))
                    }
                    _ => Box::new(f),
                },
                Err(e) => {
                    eprintln!("mcp-verdict: {name}: {e}");
                    unusable = true;
                    continue;
                }
            }
        };
        printer.begin_file(&name);
        let result = match run.as_mut() {
            None => replay::replay_har(reader, limits, &mut |item| printer.item(&name, &item)),
            Some(run) => {
                run.sources.push(name.clone());
                let mut session = Session::new(limits);
                har::read_entries(reader, &mut |entry| {
                    let mut seen = TraceObserver::default();
                    let item = replay::judge_entry_with(
                        &mut session,
                        &entry,
                        &mut std::iter::empty(),
                        &mut seen,
                    );
                    match &item {
                        Item::Verdict(v) => {
                            run.traces
                                .push(Trace::from_entry(&name, &entry, (**v).clone(), seen));
                        }
                        Item::Skipped(s) => run.skipped.push((name.clone(), s.clone())),
                    }
                    printer.item(&name, &item);
                })
                .map(|()| replay::ReplayStats {
                    tools_forgotten: session.tools_forgotten(),
                })
            }
        };
        printer.end_file(&name);
        match result {
            Err(e) => {
                eprintln!("mcp-verdict: {name}: {e}");
                unusable = true;
            }
            Ok(stats) if stats.tools_forgotten > 0 => eprintln!(
                "mcp-verdict: {name}: {} tool annotations forgotten past --max-tools {}; calls to them got the advice of an unknown tool",
                stats.tools_forgotten, limits.max_tools
            ),
            Ok(_) => {}
        }
    }
    if let Some(run) = &run {
        unusable |= args.out.write_reports(&mut printer, run, unusable);
    }
    printer.finish();
    exit_code(&printer, unusable)
}
