//! `mcp-verdict`: judge MCP Streamable-HTTP exchanges.
//!
//! Exit codes: one rule for every command, in [`exit`].

mod calls_out;
mod docs;
mod exit;
mod faults;
mod output;
mod probe;
mod proxy;
mod replay_files;
mod report;
mod soak;
mod tool_args;
mod units;

use std::fs::File;
use std::io::{self, IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

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
    after_help = concat!(
        "Durations take units (500ms, 3s, 1m30s; a bare number is seconds); sizes take suffixes (64KiB, 16MiB, unlimited).\n\n",
        "Exit codes (every command):\n",
        "  0    every exchange complete (a tool or JSON-RPC error is a complete answer)\n",
        "  1    any exchange incomplete or invalid, or a --max-* threshold broken\n",
        "  2    unusable input (bad flag, unreadable/empty file, no MCP exchange, no server for the handshake)\n",
        "  130  interrupted by Ctrl-C (partial report printed; a second Ctrl-C exits at once)\n\n",
        "Examples:\n",
        "  mcp-verdict demo\n",
        "  mcp-verdict replay capture.har\n",
        "  cat capture.har | mcp-verdict replay --format jsonl\n",
        "  mcp-verdict probe https://example.com/mcp -H 'Authorization: Bearer …' --tool echo\n",
        "  mcp-verdict soak http://127.0.0.1:8787/mcp --tool echo -n 10000 -c 16 --timeout 3s\n",
        "  mcp-verdict completions bash > ~/.local/share/bash-completion/completions/mcp-verdict"
    )
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Judge every MCP exchange in HAR 1.2 captures, in order.
    #[command(
        after_help = "Examples:\n  mcp-verdict replay capture.har\n  mcp-verdict replay a.har b.har --format json\n  mcp-proxy-export | mcp-verdict replay -"
    )]
    Replay(ReplayArgs),
    /// Talk to a live MCP endpoint: handshake, tools/list, optionally one tools/call.
    #[command(
        after_help = "Examples:\n  mcp-verdict probe http://127.0.0.1:8787/mcp\n  mcp-verdict probe https://example.com/mcp -H 'Authorization: Bearer …' --tool search --args '{\"q\":\"x\"}'\n  mcp-verdict probe http://127.0.0.1:8787/mcp --tool echo -o probe.har --timeout 10s"
    )]
    Probe(ProbeArgs),
    /// Run an MCP server that misbehaves on purpose: /mcp is correct, /mcp/<scenario> faulty.
    #[command(
        after_help = "Examples:\n  mcp-verdict serve-faults --listen 127.0.0.1:8787\n  mcp-verdict serve-faults --list --format json"
    )]
    ServeFaults(ServeArgs),
    /// Start the fault server on a loopback port, probe every scenario, compare the verdicts.
    #[command(
        after_help = "Examples:\n  mcp-verdict demo\n  mcp-verdict demo --scenario sse-cut-between-events --format json"
    )]
    Demo(DemoArgs),
    /// Sustained tools/call load with a verdict for every response.
    #[command(
        after_help = "Examples:\n  mcp-verdict soak http://127.0.0.1:8787/mcp --tool echo -n 10000 -c 16\n  mcp-verdict soak http://127.0.0.1:8787/mcp --mix mix.json --duration 1m30s --rate 200 --max-incomplete-rate 0.001 -o report.json\n\nExit: 0 every call complete; 1 any call incomplete (or, with --max-incomplete-rate, that share exceeded) or --max-p99 broken; 2 unusable input or no server for the handshake; 130 Ctrl-C."
    )]
    Soak(SoakArgs),
    /// Forward to an MCP endpoint and judge every exchange of any client as it streams.
    Proxy(ProxyArgs),
    /// Work with soak reports.
    Report {
        #[command(subcommand)]
        command: ReportCommand,
    },
    /// List the spec rules that are checked, with their ids and levels. `--format json`: one
    /// array of `{"rule", "level", "summary"}` objects in catalogue order (what
    /// `testdata/gen_har.py` reads).
    Rules(RulesArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    #[command(
        after_help = "Examples:\n  mcp-verdict completions bash > ~/.local/share/bash-completion/completions/mcp-verdict\n  mcp-verdict completions zsh > ~/.zfunc/_mcp-verdict\n  mcp-verdict completions fish > ~/.config/fish/completions/mcp-verdict.fish"
    )]
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff) on standard output; `man soak` for one command's page.
    #[command(
        after_help = "Examples:\n  mcp-verdict man > /usr/local/share/man/man1/mcp-verdict.1\n  mcp-verdict man soak | man -l -"
    )]
    Man {
        /// A command whose page to print (default: the tool's page).
        command: Option<String>,
    },
}

#[derive(Subcommand)]
enum ReportCommand {
    /// Merge soak reports (--report-out files) into exact combined figures.
    Merge {
        /// Report files.
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Write the merged report as JSON.
        #[arg(short = 'o', long, value_name = "FILE.json")]
        report_out: Option<PathBuf>,
        /// Print JSON instead of the table (same as --format json).
        #[arg(long, hide = true)]
        json: bool,
        #[command(flatten)]
        out: StyleArgs,
    },
}

#[derive(clap::Args)]
struct RulesArgs {
    #[command(flatten)]
    out: StyleArgs,
}

#[derive(clap::Args)]
struct SoakArgs {
    /// The MCP endpoint.
    url: String,
    /// Tool to call (or use --mix).
    #[arg(long, required_unless_present = "mix")]
    tool: Option<String>,
    /// Tool arguments, a JSON object (with --tool).
    #[arg(long, requires = "tool")]
    args: Option<String>,
    /// A JSON file: [{"tool": "...", "args": {...}, "weight": N}, ...]
    #[arg(long, value_name = "FILE.json", conflicts_with = "tool")]
    mix: Option<PathBuf>,
    /// Calls in flight at once.
    #[arg(short = 'c', long, default_value = "8", value_parser = units::positive)]
    concurrency: u64,
    /// Stop after this many calls [default: 1000 when no --duration is given].
    #[arg(short = 'n', long, value_parser = units::positive)]
    requests: Option<u64>,
    /// Stop after this long, e.g. 30s, 1m30s, 500ms.
    #[arg(long, value_parser = units::duration)]
    duration: Option<Duration>,
    /// At most this many calls per second.
    #[arg(long, value_parser = units::per_second)]
    rate: Option<f64>,
    /// Protocol revision (as for probe).
    #[arg(long, default_value = "auto")]
    protocol: String,
    /// Extra request header, 'Name: value' (repeatable, redacted in output).
    #[arg(short = 'H', long = "header", value_name = "NAME: VALUE")]
    headers: Vec<String>,
    /// Deadline per call, e.g. 10s.
    #[arg(long, default_value = "60s", value_parser = units::duration)]
    timeout: Duration,
    /// Write the report as JSON (mergeable with `report merge`).
    #[arg(short = 'o', long, value_name = "FILE.json")]
    report_out: Option<PathBuf>,
    /// Allow this share of incomplete calls, e.g. 0.001 (exit 1 above it; without it any
    /// incomplete call exits 1).
    #[arg(long, value_parser = units::rate)]
    max_incomplete_rate: Option<f64>,
    /// Fail (exit 1) when the p99 time to the terminal response exceeds this, e.g. 2s.
    #[arg(long, value_parser = units::duration)]
    max_p99: Option<Duration>,
    /// Stop after this many calls in a row found no server (0: never stop). Each worker also
    /// backs off (20 ms doubling to 1 s) after such a call.
    #[arg(long, default_value_t = mcp_verdict::soak::DEFAULT_MAX_CONNECT_FAILURES)]
    max_connect_failures: u32,
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
    /// Write one logical call per line (the JSON of `replay --calls --format jsonl`) as each
    /// call finishes; `-` is stdout. Each soak call is one POST by construction (retry_origin
    /// `none`; never grouped by the traffic heuristic).
    #[arg(long, value_name = "FILE")]
    calls: Option<PathBuf>,
    #[command(flatten)]
    out: StyleArgs,
    #[command(flatten)]
    limits: LimitArgs,
}

#[derive(clap::Args)]
struct ProxyArgs {
    /// The real MCP endpoint, e.g. http://127.0.0.1:8000/mcp (served at the same path).
    #[arg(long)]
    upstream: String,
    /// Address to listen on (loopback unless told otherwise; a warning otherwise).
    #[arg(long, default_value = "127.0.0.1:8788")]
    listen: String,
    /// Write one verdict per line (the JSON of `replay --format jsonl`); `-` is stdout.
    #[arg(long, value_name = "FILE")]
    log: Option<PathBuf>,
    /// Record every exchange as HAR 1.2, written at Ctrl-C (replay gives the same verdicts).
    #[arg(long, value_name = "FILE.har")]
    record: Option<PathBuf>,
    /// Write one logical call per line (the JSON of `replay --calls --format jsonl`) as each
    /// call closes (no later exchange can join it; the rest at Ctrl-C); `-` is stdout.
    #[arg(long, value_name = "FILE")]
    calls: Option<PathBuf>,
    /// Serve Prometheus metrics on this loopback address, e.g. 127.0.0.1:9464.
    #[arg(long, value_name = "ADDR")]
    metrics_listen: Option<String>,
    /// Show Authorization, Cookie, Set-Cookie and Mcp-Session-Id values in recordings.
    #[arg(long)]
    no_redact: bool,
    /// No human line per exchange and per call on stderr.
    #[arg(long)]
    quiet: bool,
    /// Largest request head, e.g. 64KiB (larger: 431).
    #[arg(long, value_name = "SIZE", value_parser = units::size_usize, default_value = "64KiB")]
    max_head_bytes: usize,
    /// Largest request body, e.g. 4MiB (larger: 413).
    #[arg(long, value_name = "SIZE", value_parser = units::size, default_value = "4MiB")]
    max_request_bytes: u64,
    /// Most client connections at once (more: 503).
    #[arg(long, default_value_t = 4096)]
    max_connections: usize,
    /// Time a client has to send a request head and body, e.g. 30s.
    #[arg(long, default_value = "30s", value_parser = units::duration)]
    head_timeout: Duration,
    /// Time the upstream has to send a response head.
    #[arg(long, default_value = "10m", value_parser = units::duration)]
    upstream_head_timeout: Duration,
    /// Longest silence inside a response body before the upstream is given up (0: none).
    #[arg(long, default_value = "10m", value_parser = units::duration)]
    idle_timeout: Duration,
    /// The clients' deadline, e.g. 30s: a client that leaves without the answer this long after
    /// its request is judged TIMED_OUT, earlier CANCELLED (judging only; nothing is cut).
    #[arg(long, value_parser = units::duration)]
    timeout: Option<Duration>,
    /// Largest response body kept per exchange in the recording, e.g. 16MiB.
    #[arg(long, value_name = "SIZE", value_parser = units::size_usize, default_value = "16MiB")]
    record_max_body_bytes: usize,
    /// Also accept this Origin (exact, e.g. https://app.example; repeatable).
    #[arg(long = "allow-origin", value_name = "ORIGIN")]
    allow_origins: Vec<String>,
    /// Write a self-contained HTML report when the proxy stops (Ctrl-C, SIGTERM): counts of
    /// every exchange, table and timelines of the last 500.
    #[arg(long, value_name = "FILE.html")]
    html: Option<PathBuf>,
    /// Messages kept per exchange with their arrival times, for --html and --otlp: the first N;
    /// the page counts the rest.
    #[arg(long, value_name = "N", default_value_t = report::TIMELINE_MESSAGES)]
    max_timeline_messages: usize,
    /// Export a span per exchange as it finishes and the mcp.client.operation.duration
    /// histogram as OTLP/HTTP protobuf to this collector, e.g. http://127.0.0.1:4318.
    #[cfg(feature = "otel")]
    #[arg(long, value_name = "URL")]
    otlp: Option<String>,
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
    #[command(flatten)]
    out: StyleArgs,
    /// Open connections at once; one more gets 503 and is closed.
    #[arg(long, default_value_t = 256)]
    max_connections: usize,
    /// Largest request body, e.g. 4MiB (413 past it).
    #[arg(long, value_name = "SIZE", value_parser = units::size_usize, default_value = "4MiB")]
    max_request_bytes: usize,
    /// Request bodies held at once, all connections together, e.g. 64MiB (503 past it).
    #[arg(long, value_name = "SIZE", value_parser = units::size_usize, default_value = "64MiB")]
    max_bodies_in_flight: usize,
    /// Close a keep-alive connection after this long without a request.
    #[arg(long, default_value = "30s", value_parser = units::duration)]
    idle_timeout: Duration,
    /// From a request's first byte to the end of its head (slowloris); 408 past it.
    #[arg(long, default_value = "10s", value_parser = units::duration)]
    head_timeout: Duration,
    /// From the end of the head to the end of the body; 408 past it.
    #[arg(long, default_value = "30s", value_parser = units::duration)]
    body_timeout: Duration,
}

#[derive(clap::Args)]
struct DemoArgs {
    /// Only these scenarios (default: all).
    #[arg(long = "scenario")]
    scenarios: Vec<String>,
    /// Also print every verdict as JSON lines.
    #[arg(long)]
    verbose: bool,
    /// Write each scenario's exchanges as DIR/<scenario>.har (for `replay`, `replay --calls`).
    #[arg(long, value_name = "DIR")]
    record: Option<std::path::PathBuf>,
    #[command(flatten)]
    out: StyleArgs,
}

#[derive(clap::Args)]
struct ProbeArgs {
    /// The MCP endpoint, e.g. http://127.0.0.1:8000/mcp
    url: String,
    /// Protocol revision: auto tries 2026-07-28 and falls back to 2025-11-25 initialize.
    #[arg(long, default_value = "auto")]
    protocol: String,
    /// Call this tool after listing tools.
    #[arg(long, conflicts_with = "all_tools")]
    tool: Option<String>,
    /// Call every listed tool, with arguments made from its inputSchema (one verdict each).
    #[arg(long)]
    all_tools: bool,
    /// Tool arguments, a JSON object (with --tool).
    #[arg(long, requires = "tool")]
    args: Option<String>,
    /// Extra request header, 'Name: value' (repeatable). Values are redacted in all output.
    #[arg(short = 'H', long = "header", value_name = "NAME: VALUE")]
    headers: Vec<String>,
    /// Export one span per exchange and the mcp.client.operation.duration histogram as
    /// OTLP/HTTP protobuf to this collector, e.g. http://127.0.0.1:4318.
    #[cfg(feature = "otel")]
    #[arg(long, value_name = "URL")]
    otlp: Option<String>,
    /// Write what was seen as HAR 1.2 (replay gives the same verdicts).
    #[arg(short = 'o', long, value_name = "FILE.har")]
    record: Option<PathBuf>,
    /// Print logical calls instead of one verdict per exchange (as `replay --calls`).
    #[arg(long)]
    calls: bool,
    /// Overall deadline per exchange, e.g. 60s, 1m30s.
    #[arg(long, default_value = "60s", value_parser = units::duration)]
    timeout: Duration,
    /// Deadline without any bytes, the wait for the response head included, e.g. 10s.
    #[arg(long, value_parser = units::duration)]
    idle_timeout: Option<Duration>,
    /// Largest response body kept per exchange in the recording (--record, --html, --calls,
    /// JUnit, OTLP, the server summary), e.g. 16MiB; stderr names any body cut.
    #[arg(long, value_name = "SIZE", value_parser = units::size, default_value = "16MiB")]
    record_max_body_bytes: u64,
    #[command(flatten)]
    out: OutputArgs,
    #[command(flatten)]
    limits: LimitArgs,
}

#[derive(clap::Args)]
struct ReplayArgs {
    /// HAR files (browser devtools, mitmproxy, proxy exports). `-` or none reads standard input.
    /// A directory stands for the `.har` files in it.
    files: Vec<PathBuf>,
    /// Files judged at once (default: one per core). Output stays in input order.
    #[arg(long, short = 'j')]
    jobs: Option<usize>,
    /// Print logical calls (retries, resumptions, MRTR rounds and answers grouped) instead of
    /// one verdict per exchange.
    #[arg(long)]
    calls: bool,
    #[command(flatten)]
    out: OutputArgs,
    #[command(flatten)]
    limits: LimitArgs,
}

/// `--format` and `--color` of the commands that print no verdict stream (soak, serve-faults,
/// demo, rules, report merge): no JUnit or HTML there.
#[derive(clap::Args)]
struct StyleArgs {
    /// Output format.
    #[arg(long, value_enum, default_value_t = FormatArg::Human)]
    format: FormatArg,
    /// Colour in human output (auto: on a terminal, unless NO_COLOR is set).
    #[arg(long, value_enum, default_value_t = ColorArg::Auto)]
    color: ColorArg,
}

#[derive(clap::Args)]
struct OutputArgs {
    /// Output format.
    #[arg(long, value_enum, default_value_t = OutputFormatArg::Human)]
    format: OutputFormatArg,
    /// Also write a self-contained HTML report (summary, sortable table, timelines) to FILE.
    #[arg(long, value_name = "FILE.html")]
    html: Option<PathBuf>,
    /// Messages kept per exchange for its timeline (--html, --otlp): the first N; the page
    /// counts the rest.
    #[arg(long, value_name = "N", default_value_t = report::TIMELINE_MESSAGES)]
    max_timeline_messages: usize,
    /// Colour in human output (auto: on a terminal, unless NO_COLOR is set).
    #[arg(long, value_enum, default_value_t = ColorArg::Auto)]
    color: ColorArg,
}

#[derive(clap::Args)]
struct LimitArgs {
    /// Largest SSE event, e.g. 16MiB.
    #[arg(long, value_name = "SIZE", value_parser = units::size,
          default_value = "16MiB")]
    max_event_bytes: u64,
    /// Largest JSON body, e.g. 64MiB.
    #[arg(long, value_name = "SIZE", value_parser = units::size,
          default_value = "64MiB")]
    max_body_bytes: u64,
    /// Most SSE events on one stream (a number or unlimited).
    #[arg(long, value_name = "N", value_parser = units::count,
          default_value = "unlimited")]
    max_events: u64,
    /// Tool annotations remembered per capture or client (oldest forgotten past it).
    #[arg(long, default_value_t = Limits::default().max_tools)]
    max_tools: usize,
    /// Server requests a verdict lists per stream (the most recent; the rest are counted).
    #[arg(long, value_name = "N", default_value_t = Limits::default().max_server_requests)]
    max_server_requests: usize,
}

impl LimitArgs {
    fn limits(&self) -> Limits {
        Limits {
            max_event_bytes: usize::try_from(self.max_event_bytes).unwrap_or(usize::MAX),
            max_body_bytes: self.max_body_bytes,
            max_events: self.max_events,
            max_tools: self.max_tools,
            max_server_requests: self.max_server_requests,
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
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
        Command::Proxy(args) => proxy::run(args),
        Command::Report { command } => match command {
            ReportCommand::Merge {
                files,
                report_out,
                json,
                out,
            } => soak::merge(
                &files,
                report_out.as_deref(),
                json || out.format != FormatArg::Human,
            ),
        },
        Command::Rules(args) => rules(&args.out),
        Command::Completions { shell } => docs::completions::<Cli>(shell),
        Command::Man { command } => docs::man::<Cli>(command.as_deref()),
    }
}

fn rules(out: &StyleArgs) -> ExitCode {
    let mut stdout = io::stdout().lock();
    let _ = match out.format {
        FormatArg::Human => Rule::ALL
            .iter()
            .try_for_each(|rule| {
                let level = rule.level().as_str();
                writeln!(stdout, "{:<40} {:<6} {}", rule.id(), level, rule.summary())
            })
            .map(|()| calls_out::list_vocabulary(&mut stdout)),
        FormatArg::Json | FormatArg::Jsonl => {
            let list: Vec<_> = Rule::ALL
                .iter()
                .map(|r| {
                    serde_json::json!({
                        "rule": r.id(),
                        "level": r.level().as_str(),
                        "summary": r.summary(),
                    })
                })
                .collect();
            if out.format == FormatArg::Json {
                writeln!(stdout, "{}", serde_json::Value::Array(list))
            } else {
                list.iter().try_for_each(|r| writeln!(stdout, "{r}"))
            }
        }
    };
    ExitCode::SUCCESS
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

/// The exit code for a run of verdicts, by the one rule in [`exit`].
fn exit_code<W: Write>(printer: &Printer<W>, unusable: bool) -> ExitCode {
    exit::Run {
        unusable,
        incomplete: !printer.all_complete(),
        broken_pipe: printer.broken_pipe(),
        ..exit::Run::default()
    }
    .code()
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

/// Opens a capture (`-` is standard input), with a progress line for large files on a terminal;
/// `None` after saying why on stderr.
fn open_capture(path: &std::path::Path, name: &str) -> Option<Box<dyn io::Read>> {
    if name == "-" {
        return Some(Box::new(io::stdin().lock()));
    }
    match File::open(path) {
        Ok(f) => match f.metadata() {
            Ok(m) if m.is_dir() => {
                eprintln!("mcp-verdict: {name}: is a directory");
                None
            }
            Ok(m) if m.len() >= PROGRESS_MIN_BYTES && io::stderr().is_terminal() => {
                Some(Box::new(Progress::new(f, m.len(), name)))
            }
            _ => Some(Box::new(f)),
        },
        Err(e) => {
            eprintln!("mcp-verdict: {name}: {e}");
            None
        }
    }
}

fn run_replay(args: ReplayArgs) -> ExitCode {
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
    if !args.out.wants_run() {
        // Plain output: files judged in parallel, bodies streamed, printed in input order.
        let jobs = args
            .jobs
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
        unusable |= replay_streamed(&files, limits, jobs, &mut printer);
        printer.finish();
        return exit_code(&printer, unusable);
    }
    // Reports need every exchange with its timeline; plain output streams and keeps nothing.
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
        let error = replay_one(reader, limits, keep, &name, &mut printer, &mut run);
        if let Some(e) = &error {
            eprintln!("mcp-verdict: {name}: {e}");
            unusable = true;
        }
        printer.end_file(&name, error.as_deref());
    }
    unusable |= args.out.write_reports(&mut printer, &run, unusable);
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
    warn_unlisted(name, stats.server_requests_unlisted, limits);
}

/// Says when verdicts left server requests out past `--max-server-requests` (each lists the
/// most recent ones of its stream).
pub(crate) fn warn_unlisted(name: &str, unlisted: u64, limits: Limits) {
    if unlisted > 0 {
        eprintln!(
            "mcp-verdict: {name}: {unlisted} server requests not listed in their verdicts past --max-server-requests {} (each lists the most recent of its stream)",
            limits.max_server_requests
        );
    }
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
    let result = replay_into_run(reader, limits, keep, name, run, &mut each);
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

/// Replays a capture keeping every exchange's timeline in `run` (for the reports), each with
/// its first `keep` messages; each row also goes to `each`.
fn replay_into_run(
    reader: impl io::Read,
    limits: Limits,
    keep: usize,
    name: &str,
    run: &mut Run,
    each: &mut dyn FnMut(Item),
) -> Result<replay::ReplayStats, har::HarError> {
    run.sources.push(name.to_owned());
    let mut session = Session::new(limits);
    let (mut calls, mut grouped) = (mcp_verdict::Calls::new(), Vec::new());
    let read = har::read_entries(reader, &mut |entry| {
        let mut seen = TraceObserver::keeping(keep);
        let mut rows = Vec::with_capacity(1);
        replay::judge_entry_rows_with(
            &mut session,
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
                    run.traces
                        .push(Trace::from_entry(name, &entry, (**v).clone(), seen));
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
        tools_forgotten: session.tools_forgotten(),
        server_requests_unlisted: session.server_requests_unlisted(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limit_defaults_in_help_are_the_library_defaults() {
        let cli = Cli::try_parse_from(["mcp-verdict", "replay", "x.har"]).unwrap();
        let Command::Replay(args) = cli.command else {
            unreachable!()
        };
        assert_eq!(args.limits.limits(), Limits::default());
        let d = Limits::default();
        assert_eq!(units::show_size(d.max_event_bytes as u64), "16MiB");
        assert_eq!(units::show_size(d.max_body_bytes), "64MiB");
        assert_eq!(units::show_size(d.max_events), "unlimited");
    }

    #[test]
    fn the_cli_definition_is_consistent() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }
}
