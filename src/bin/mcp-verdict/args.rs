//! The command line as clap reads it: every command's flags, and nothing that acts on them.
//! Kept apart from `main.rs` (which only dispatches) and from the commands (which import these
//! types), so that no command needs another command or the crate root to know its own flags.

use std::io::{self, IsTerminal};
use std::path::PathBuf;
use std::time::Duration;

use clap::{Parser, Subcommand, ValueEnum};
use mcp_verdict::{Limits, Redaction};

use crate::units;

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
        "  mcp-verdict diff yesterday.har today.har\n",
        "  mkdir -p ~/.local/share/bash-completion/completions && mcp-verdict completions bash > ~/.local/share/bash-completion/completions/mcp-verdict\n",
        "  mcp-verdict man --dir ~/.local/share/man/man1"
    )
)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Subcommand)]
pub(crate) enum Command {
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
    /// What changed between two runs: calls paired, changes and regressions (exit 1 on any).
    #[command(
        after_help = "A and B: HAR captures, verdict logs (--format jsonl, proxy --log), calls files (--calls --format jsonl) or soak reports (soak -o), told apart by content; two soak reports are compared as whole runs.\n\nRegression kinds (--fail-on): incomplete, outcome, must_rule, new_failure, latency.\n\nExit: 0 no regression of the --fail-on kinds; 1 some; 2 unusable input.\n\nExamples:\n  mcp-verdict diff yesterday.har today.har\n  mcp-verdict diff a.jsonl b.jsonl --format markdown --fail-on incomplete,must_rule\n  mcp-verdict diff base.json head.json --latency-threshold 50"
    )]
    Diff(DiffArgs),
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
        after_help = "Examples (the directory first: a fresh account has none):\n  mkdir -p ~/.local/share/bash-completion/completions && mcp-verdict completions bash > ~/.local/share/bash-completion/completions/mcp-verdict\n  mkdir -p ~/.zfunc && mcp-verdict completions zsh > ~/.zfunc/_mcp-verdict   # with fpath+=(~/.zfunc) before compinit\n  mkdir -p ~/.config/fish/completions && mcp-verdict completions fish > ~/.config/fish/completions/mcp-verdict.fish"
    )]
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff) on standard output; `man soak` for one command's page, `man
    /// --dir DIR` to write every page (the tool's and each command's) into DIR.
    #[command(
        after_help = "Examples:\n  mcp-verdict man --dir ~/.local/share/man/man1   # creates it; then `man mcp-verdict-soak`\n  mcp-verdict man soak | man -l -"
    )]
    Man {
        /// A command whose page to print (default: the tool's page).
        #[arg(conflicts_with = "dir")]
        command: Option<String>,
        /// Write every page into DIR (created if missing): mcp-verdict.1 and one
        /// mcp-verdict-COMMAND.1 per command.
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
    },
}

#[derive(Subcommand)]
pub(crate) enum ReportCommand {
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
pub(crate) struct RulesArgs {
    #[command(flatten)]
    pub(crate) out: StyleArgs,
}

#[derive(clap::Args)]
pub(crate) struct SoakArgs {
    /// The MCP endpoint.
    pub(crate) url: String,
    /// Tool to call (or use --mix).
    #[arg(long, required_unless_present = "mix")]
    pub(crate) tool: Option<String>,
    /// Tool arguments, a JSON object (with --tool).
    #[arg(long, requires = "tool")]
    pub(crate) args: Option<String>,
    /// A JSON file: [{"tool": "...", "args": {...}, "weight": N}, ...]
    #[arg(long, value_name = "FILE.json", conflicts_with = "tool")]
    pub(crate) mix: Option<PathBuf>,
    /// Calls in flight at once.
    #[arg(short = 'c', long, default_value = "8", value_parser = units::positive)]
    pub(crate) concurrency: u64,
    /// Stop after this many calls [default: 1000 when no --duration is given].
    #[arg(short = 'n', long, value_parser = units::positive)]
    pub(crate) requests: Option<u64>,
    /// Stop after this long, e.g. 30s, 1m30s, 500ms.
    #[arg(long, value_parser = units::duration)]
    pub(crate) duration: Option<Duration>,
    /// At most this many calls per second.
    #[arg(long, value_parser = units::per_second)]
    pub(crate) rate: Option<f64>,
    /// Protocol revision (as for probe).
    #[arg(long, default_value = "auto")]
    pub(crate) protocol: String,
    /// Extra request header, 'Name: value' (repeatable, redacted in output).
    #[arg(short = 'H', long = "header", value_name = "NAME: VALUE")]
    pub(crate) headers: Vec<String>,
    /// Deadline per call, e.g. 10s.
    #[arg(long, default_value = "60s", value_parser = units::duration)]
    pub(crate) timeout: Duration,
    /// Write the report as JSON (mergeable with `report merge`).
    #[arg(short = 'o', long, value_name = "FILE.json")]
    pub(crate) report_out: Option<PathBuf>,
    /// Allow this share of incomplete calls, e.g. 0.001 (exit 1 above it; without it any
    /// incomplete call exits 1).
    #[arg(long, value_parser = units::rate)]
    pub(crate) max_incomplete_rate: Option<f64>,
    /// Fail (exit 1) when the p99 time to the terminal response exceeds this, e.g. 2s.
    #[arg(long, value_parser = units::duration)]
    pub(crate) max_p99: Option<Duration>,
    /// Stop after this many calls in a row found no server (0: never stop). Each worker also
    /// backs off (20 ms doubling to 1 s) after such a call.
    #[arg(long, default_value_t = mcp_verdict::soak::DEFAULT_MAX_CONNECT_FAILURES)]
    pub(crate) max_connect_failures: u32,
    /// Write Prometheus text exposition to this file at the end.
    #[arg(long, value_name = "FILE")]
    pub(crate) metrics_file: Option<PathBuf>,
    /// Serve Prometheus text on this loopback address while running, e.g. 127.0.0.1:9464.
    #[arg(long, value_name = "ADDR")]
    pub(crate) metrics_listen: Option<String>,
    /// Write a self-contained HTML report (percentiles plotted, throughput and outcomes over
    /// time) to FILE.
    #[arg(long, value_name = "FILE.html")]
    pub(crate) html: Option<PathBuf>,
    /// Export one span per call (its exchange's span as its child) and the
    /// mcp.client.operation.duration histogram as OTLP/HTTP protobuf to this collector, e.g.
    /// http://127.0.0.1:4318.
    #[arg(long, value_name = "URL")]
    #[cfg_attr(not(feature = "otel"), arg(hide = true))]
    pub(crate) otlp: Option<String>,
    /// Write JUnit XML (one test case per gate: complete calls and each threshold) to FILE.
    #[arg(long, value_name = "FILE.xml")]
    pub(crate) junit: Option<PathBuf>,
    /// Write one logical call per line (the JSON of `replay --calls --format jsonl`) as each
    /// call finishes; `-` is stdout. Each soak call is one POST by construction (retry_origin
    /// `none`; never grouped by the traffic heuristic).
    #[arg(long, value_name = "FILE")]
    pub(crate) calls: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) tls: TlsArgs,
    #[command(flatten)]
    pub(crate) out: StyleArgs,
    #[command(flatten)]
    pub(crate) redact: RedactArgs,
    #[command(flatten)]
    pub(crate) limits: LimitArgs,
}

#[derive(clap::Args)]
pub(crate) struct ProxyArgs {
    /// The real MCP endpoint, e.g. http://127.0.0.1:8000/mcp (served at the same path).
    #[arg(long)]
    pub(crate) upstream: String,
    /// Also trust the certificates in this PEM file for an https:// upstream (a private CA, a
    /// self-signed server), beside the platform's roots.
    #[arg(long, value_name = "FILE.pem")]
    pub(crate) upstream_cacert: Option<PathBuf>,
    /// Address to listen on (loopback unless told otherwise; a warning otherwise).
    #[arg(long, default_value = "127.0.0.1:8788")]
    pub(crate) listen: String,
    /// Write one verdict per line (the JSON of `replay --format jsonl`); `-` is stdout.
    #[arg(long, value_name = "FILE")]
    pub(crate) log: Option<PathBuf>,
    /// Record every exchange as HAR 1.2, written at Ctrl-C (replay gives the same verdicts).
    #[arg(long, value_name = "FILE.har")]
    pub(crate) record: Option<PathBuf>,
    /// Write one logical call per line (the JSON of `replay --calls --format jsonl`) as each
    /// call closes (no later exchange can join it; the rest at Ctrl-C); `-` is stdout.
    #[arg(long, value_name = "FILE")]
    pub(crate) calls: Option<PathBuf>,
    /// Serve Prometheus metrics on this loopback address, e.g. 127.0.0.1:9464.
    #[arg(long, value_name = "ADDR")]
    pub(crate) metrics_listen: Option<String>,
    /// Serve a live page of the calls on this address, e.g. 127.0.0.1:8790 (loopback only
    /// unless --ui-allow-remote; the URL printed at start carries the required token).
    #[arg(long, value_name = "ADDR")]
    pub(crate) ui: Option<String>,
    /// Let --ui listen on a non-loopback address (the page shows request bodies).
    #[arg(long, requires = "ui")]
    pub(crate) ui_allow_remote: bool,
    /// Closed calls the live page keeps (a page that connects late gets these first).
    #[arg(long, value_name = "N", default_value_t = mcp_verdict::proxy::ui::DEFAULT_KEEP, requires = "ui")]
    pub(crate) ui_keep: usize,
    #[command(flatten)]
    pub(crate) redact: RedactArgs,
    /// No human line per exchange and per call on stderr.
    #[arg(long)]
    pub(crate) quiet: bool,
    /// human: a line per exchange on stderr and a summary at stop; jsonl: also one verdict per
    /// line on stdout (the lines of --log). A proxy streams, so there is no one-document json.
    #[arg(long, value_enum, default_value_t = ProxyFormatArg::Human)]
    pub(crate) format: ProxyFormatArg,
    /// Colour of the summary at stop (auto: on a terminal, unless NO_COLOR is set).
    #[arg(long, value_enum, default_value_t = ColorArg::Auto)]
    pub(crate) color: ColorArg,
    /// Largest request head, e.g. 64KiB (larger: 431).
    #[arg(long, value_name = "SIZE", value_parser = units::size_usize, default_value = "64KiB")]
    pub(crate) max_head_bytes: usize,
    /// Largest request body, e.g. 4MiB (larger: 413).
    #[arg(long, value_name = "SIZE", value_parser = units::size, default_value = "4MiB")]
    pub(crate) max_request_bytes: u64,
    /// Most client connections at once (more: 503).
    #[arg(long, default_value_t = 4096)]
    pub(crate) max_connections: usize,
    /// Threads that forward and judge. 1 (the default): every connection, its upstream
    /// connection and the judging on one thread, so no request is handed between threads
    /// (the fastest on a small machine, as one nginx worker); more for heavy load on many cores.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=1024))]
    pub(crate) threads: u16,
    /// Time a client has to send a request head and body, e.g. 30s.
    #[arg(long, default_value = "30s", value_parser = units::duration)]
    pub(crate) head_timeout: Duration,
    /// Time the upstream has to send a response head.
    #[arg(long, default_value = "10m", value_parser = units::duration)]
    pub(crate) upstream_head_timeout: Duration,
    /// Longest silence inside a response body before the upstream is given up (0: none).
    #[arg(long, default_value = "10m", value_parser = units::duration)]
    pub(crate) idle_timeout: Duration,
    /// The clients' deadline, e.g. 30s: a client that leaves without the answer this long after
    /// its request is judged TIMED_OUT, earlier CANCELLED (judging only; nothing is cut).
    #[arg(long, value_parser = units::duration)]
    pub(crate) timeout: Option<Duration>,
    /// Largest response body kept per exchange in the recording, e.g. 16MiB.
    #[arg(long, value_name = "SIZE", value_parser = units::size_usize, default_value = "16MiB")]
    pub(crate) record_max_body_bytes: usize,
    /// Forwarded bytes that may wait for the judging thread, e.g. 1MiB; past it the
    /// forwarding waits for the judging (the summary counts the waits).
    #[arg(long, value_name = "SIZE", value_parser = units::size_usize, default_value = "1MiB")]
    pub(crate) max_backlog_bytes: usize,
    /// Also accept this Origin (exact, e.g. https://app.example; repeatable).
    #[arg(long = "allow-origin", value_name = "ORIGIN")]
    pub(crate) allow_origins: Vec<String>,
    /// Write a self-contained HTML report when the proxy stops (Ctrl-C, SIGTERM): counts of
    /// every exchange, table and timelines of the last 500.
    #[arg(long, value_name = "FILE.html")]
    pub(crate) html: Option<PathBuf>,
    /// Messages kept per exchange with their arrival times, for --html and --otlp: the first N;
    /// the page counts the rest.
    #[arg(long, value_name = "N", default_value_t = crate::report::TIMELINE_MESSAGES)]
    pub(crate) max_timeline_messages: usize,
    /// Export a span per exchange once it is grouped (as it finishes, unless an earlier
    /// exchange still streams), the child of its logical call's span, exported when the call
    /// closes; and the mcp.client.operation.duration histogram; as OTLP/HTTP protobuf to this
    /// collector, e.g. http://127.0.0.1:4318.
    #[arg(long, value_name = "URL")]
    #[cfg_attr(not(feature = "otel"), arg(hide = true))]
    pub(crate) otlp: Option<String>,
    #[command(flatten)]
    pub(crate) limits: LimitArgs,
}

#[derive(clap::Args)]
pub(crate) struct ServeArgs {
    /// Address to listen on (loopback by default).
    #[arg(long, default_value = "127.0.0.1:8787")]
    pub(crate) listen: String,
    /// Print the scenarios and the verdict each must produce, then exit.
    #[arg(long)]
    pub(crate) list: bool,
    #[command(flatten)]
    pub(crate) out: StyleArgs,
    /// Open connections at once; one more gets 503 and is closed.
    #[arg(long, default_value_t = 256)]
    pub(crate) max_connections: usize,
    /// Largest request body, e.g. 4MiB (413 past it).
    #[arg(long, value_name = "SIZE", value_parser = units::size_usize, default_value = "4MiB")]
    pub(crate) max_request_bytes: usize,
    /// Request bodies held at once, all connections together, e.g. 64MiB (503 past it).
    #[arg(long, value_name = "SIZE", value_parser = units::size_usize, default_value = "64MiB")]
    pub(crate) max_bodies_in_flight: usize,
    /// Close a keep-alive connection after this long without a request.
    #[arg(long, default_value = "30s", value_parser = units::duration)]
    pub(crate) idle_timeout: Duration,
    /// From a request's first byte to the end of its head (slowloris); 408 past it.
    #[arg(long, default_value = "10s", value_parser = units::duration)]
    pub(crate) head_timeout: Duration,
    /// From the end of the head to the end of the body; 408 past it.
    #[arg(long, default_value = "30s", value_parser = units::duration)]
    pub(crate) body_timeout: Duration,
    /// Be a protected resource: every MCP request needs `Authorization: Bearer T` (401 with a
    /// WWW-Authenticate challenge otherwise; metadata at /.well-known/oauth-protected-resource).
    #[arg(long, value_name = "T")]
    pub(crate) auth_token: Option<String>,
}

#[derive(clap::Args)]
pub(crate) struct DemoArgs {
    /// Only these scenarios (default: all).
    #[arg(long = "scenario")]
    pub(crate) scenarios: Vec<String>,
    /// Also print every verdict as JSON lines.
    #[arg(long)]
    pub(crate) verbose: bool,
    /// Write each scenario's exchanges as DIR/<scenario>.har (for `replay`, `replay --calls`).
    #[arg(long, value_name = "DIR")]
    pub(crate) record: Option<std::path::PathBuf>,
    #[command(flatten)]
    pub(crate) out: StyleArgs,
}

#[derive(clap::Args)]
pub(crate) struct ProbeArgs {
    /// The MCP endpoint, e.g. http://127.0.0.1:8000/mcp
    pub(crate) url: String,
    /// Protocol revision: auto tries 2026-07-28 and falls back to 2025-11-25 initialize.
    #[arg(long, default_value = "auto")]
    pub(crate) protocol: String,
    /// Call this tool after listing tools.
    #[arg(long, conflicts_with = "all_tools")]
    pub(crate) tool: Option<String>,
    /// Call every listed tool that is safe to call, with arguments made from its inputSchema
    /// (one verdict each): read-only (readOnlyHint) or declared not destructive
    /// (destructiveHint: false). The others (destructiveHint: true, or no hint: MCP's default
    /// is destructive) are listed as skipped, on stderr and in JSON output.
    #[arg(long)]
    pub(crate) all_tools: bool,
    /// With --all-tools, also call the tools that are or may be destructive.
    #[arg(long, requires = "all_tools")]
    pub(crate) include_destructive: bool,
    /// Tool arguments, a JSON object (with --tool).
    #[arg(long, requires = "tool")]
    pub(crate) args: Option<String>,
    /// With --all-tools, the arguments of named tools instead of ones made from their
    /// inputSchema: a JSON object, tool name to arguments object, e.g. '{"search":{"q":"x"}}'.
    #[arg(long, value_name = "JSON", requires = "all_tools")]
    pub(crate) tool_args: Option<String>,
    /// How probe answers a server's elicitation/create (on a response stream, or in a
    /// 2026-07-28 input-required result): decline (the default), cancel, or accept with the
    /// requested schema's defaults and minimal valid values. sampling/createMessage gets a fixed
    /// assistant text only with accept (else it is refused, error -1); roots/list gets no roots.
    #[arg(long, value_enum, default_value_t = ElicitArg::Decline)]
    pub(crate) elicit: ElicitArg,
    /// Do not poll a task handle (2026-07-28 tools/call answered with resultType "task"): by
    /// default probe polls tasks/get, at the task's pollIntervalMs, until a terminal status.
    #[arg(long)]
    pub(crate) no_follow_tasks: bool,
    /// How long to follow a task before sending tasks/cancel and giving up, e.g. 5m.
    #[arg(long, default_value = "5m", value_parser = units::duration)]
    pub(crate) task_timeout: Duration,
    /// Extra request header, 'Name: value' (repeatable). Values are redacted in all output.
    #[arg(short = 'H', long = "header", value_name = "NAME: VALUE")]
    pub(crate) headers: Vec<String>,
    /// Export one span per logical call, its exchanges' spans as children, and the
    /// mcp.client.operation.duration histogram as OTLP/HTTP protobuf to this collector, e.g.
    /// http://127.0.0.1:4318.
    #[arg(long, value_name = "URL")]
    #[cfg_attr(not(feature = "otel"), arg(hide = true))]
    pub(crate) otlp: Option<String>,
    /// Write what was seen as HAR 1.2 (replay gives the same verdicts).
    #[arg(short = 'o', long, value_name = "FILE.har")]
    pub(crate) record: Option<PathBuf>,
    /// Print logical calls instead of one verdict per exchange (as `replay --calls`).
    #[arg(long)]
    pub(crate) calls: bool,
    /// Overall deadline per exchange, e.g. 60s, 1m30s.
    #[arg(long, default_value = "60s", value_parser = units::duration)]
    pub(crate) timeout: Duration,
    /// Deadline without any bytes, the wait for the response head included, e.g. 10s.
    #[arg(long, value_parser = units::duration)]
    pub(crate) idle_timeout: Option<Duration>,
    /// Largest response body kept per exchange in the recording (--record, --html, --calls,
    /// JUnit, OTLP, the server summary), e.g. 16MiB; stderr names any body cut.
    #[arg(long, value_name = "SIZE", value_parser = units::size, default_value = "16MiB")]
    pub(crate) record_max_body_bytes: u64,
    #[command(flatten)]
    pub(crate) tls: TlsArgs,
    #[command(flatten)]
    pub(crate) out: OutputArgs,
    #[command(flatten)]
    pub(crate) redact: RedactArgs,
    #[command(flatten)]
    pub(crate) limits: LimitArgs,
}

#[derive(clap::Args)]
pub(crate) struct DiffArgs {
    /// The reference run (yesterday's, or server A's).
    pub(crate) a: PathBuf,
    /// The run compared with it (today's, or server B's).
    pub(crate) b: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value_t = DiffFormatArg::Human)]
    pub(crate) format: DiffFormatArg,
    /// Regression kinds that exit 1, comma-separated: incomplete, outcome, must_rule,
    /// new_failure, latency; or all, or none.
    #[arg(long, value_name = "LIST", default_value = "all")]
    pub(crate) fail_on: String,
    /// An operation's p99 call duration growing by more than this many percent (and by at
    /// least 50 ms) is a latency regression.
    #[arg(long, value_name = "PCT", default_value_t = 20.0, value_parser = units::percent)]
    pub(crate) latency_threshold: f64,
    /// Colour in human output (auto: on a terminal, unless NO_COLOR is set).
    #[arg(long, value_enum, default_value_t = ColorArg::Auto)]
    pub(crate) color: ColorArg,
    #[command(flatten)]
    pub(crate) limits: LimitArgs,
}

/// `probe --elicit`: what probe answers a server's elicitation with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum ElicitArg {
    /// Accept, with the requested schema's defaults and minimal valid values.
    Accept,
    /// Decline.
    Decline,
    /// Cancel.
    Cancel,
}

/// `diff --format`.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum DiffFormatArg {
    /// Readable tables.
    Human,
    /// One JSON document.
    Json,
    /// Markdown tables, for CI job summaries.
    Markdown,
    /// JUnit XML: one test case per regression kind.
    Junit,
}

#[derive(clap::Args)]
pub(crate) struct ReplayArgs {
    /// HAR files (browser devtools, mitmproxy, proxy exports). `-` or none reads standard input.
    /// A directory stands for the `.har` files in it.
    pub(crate) files: Vec<PathBuf>,
    /// Files judged at once (default: one per core). Output stays in input order.
    #[arg(long, short = 'j')]
    pub(crate) jobs: Option<usize>,
    /// Print logical calls (retries, resumptions, MRTR rounds and answers grouped) instead of
    /// one verdict per exchange.
    #[arg(long)]
    pub(crate) calls: bool,
    /// Export one span per logical call, its exchanges' spans as children, and the
    /// mcp.client.operation.duration histogram as OTLP/HTTP protobuf to this collector, e.g.
    /// http://127.0.0.1:4318. Times are the capture's (`startedDateTime`, `time`).
    #[arg(long, value_name = "URL", conflicts_with = "calls")]
    #[cfg_attr(not(feature = "otel"), arg(hide = true))]
    pub(crate) otlp: Option<String>,
    #[command(flatten)]
    pub(crate) out: OutputArgs,
    #[command(flatten)]
    pub(crate) redact: RedactArgs,
    #[command(flatten)]
    pub(crate) limits: LimitArgs,
}

/// `--insecure` and `--cacert`: for servers whose certificate the platform's roots do not vouch
/// for (self-signed, a private CA).
#[derive(clap::Args)]
pub(crate) struct TlsArgs {
    /// Also trust the certificates in this PEM file (a private CA, a self-signed server).
    #[arg(long, value_name = "FILE.pem")]
    pub(crate) cacert: Option<PathBuf>,
    /// Accept any server certificate, unchecked (expired, self-signed, another host's): the
    /// connection is encrypted but not authenticated. For test servers only.
    #[arg(long)]
    pub(crate) insecure: bool,
}

/// `--format` and `--color` of the commands that print no verdict stream (soak, serve-faults,
/// demo, rules, report merge): no JUnit or HTML there.
#[derive(clap::Args)]
pub(crate) struct StyleArgs {
    /// Output format.
    #[arg(long, value_enum, default_value_t = FormatArg::Human)]
    pub(crate) format: FormatArg,
    /// Colour in human output (auto: on a terminal, unless NO_COLOR is set).
    #[arg(long, value_enum, default_value_t = ColorArg::Auto)]
    pub(crate) color: ColorArg,
}

#[derive(clap::Args)]
pub(crate) struct OutputArgs {
    /// Output format.
    #[arg(long, value_enum, default_value_t = OutputFormatArg::Human)]
    pub(crate) format: OutputFormatArg,
    /// Also write a self-contained HTML report (summary, sortable table, timelines) to FILE.
    #[arg(long, value_name = "FILE.html")]
    pub(crate) html: Option<PathBuf>,
    /// Messages kept per exchange for its timeline (--html, --otlp): the first N; the page
    /// counts the rest.
    #[arg(long, value_name = "N", default_value_t = crate::report::TIMELINE_MESSAGES)]
    pub(crate) max_timeline_messages: usize,
    /// Also write JUnit XML (one test case per exchange) to FILE, whatever --format prints
    /// (the GitHub Action: --format markdown for the job summary, --junit for the test report).
    #[arg(long, value_name = "FILE.xml")]
    pub(crate) junit: Option<PathBuf>,
    /// Colour in human output (auto: on a terminal, unless NO_COLOR is set).
    #[arg(long, value_enum, default_value_t = ColorArg::Auto)]
    pub(crate) color: ColorArg,
}

/// `--no-redact`: the one switch of the one redaction policy (docs/redaction.md), on every
/// command that shows what was sent or received.
#[derive(clap::Args)]
pub(crate) struct RedactArgs {
    /// Show secrets in every output: the values of Authorization, Proxy-Authorization, Cookie,
    /// Set-Cookie, Mcp-Session-Id, of headers named like token/key/secret/password/auth/
    /// session/signature and of every -H; URL userinfo and secret query values (hidden by
    /// default; verdicts never carry them).
    #[arg(long)]
    pub(crate) no_redact: bool,
}

impl RedactArgs {
    /// The policy (on unless `--no-redact`).
    pub(crate) fn policy(&self) -> Redaction {
        Redaction::new(!self.no_redact)
    }
}

#[derive(clap::Args)]
pub(crate) struct LimitArgs {
    /// Largest SSE event, e.g. 16MiB.
    #[arg(long, value_name = "SIZE", value_parser = units::size,
          default_value = "16MiB")]
    pub(crate) max_event_bytes: u64,
    /// Largest JSON body, e.g. 64MiB.
    #[arg(long, value_name = "SIZE", value_parser = units::size,
          default_value = "64MiB")]
    pub(crate) max_body_bytes: u64,
    /// Most SSE events on one stream (a number or unlimited).
    #[arg(long, value_name = "N", value_parser = units::count,
          default_value = "unlimited")]
    pub(crate) max_events: u64,
    /// Tool annotations remembered per capture or client (oldest forgotten past it).
    #[arg(long, default_value_t = Limits::default().max_tools)]
    pub(crate) max_tools: usize,
    /// Server requests a verdict lists per stream (the most recent; the rest are counted).
    #[arg(long, value_name = "N", default_value_t = Limits::default().max_server_requests)]
    pub(crate) max_server_requests: usize,
    /// sse.buffered: a burst counts when its first event came at least this many ms after the
    /// request.
    #[arg(long, value_name = "MS", default_value_t = Limits::default().buffered_wait_ms)]
    pub(crate) buffered_wait_ms: u64,
    /// sse.buffered: every event of the stream arrived within this many ms.
    #[arg(long, value_name = "MS", default_value_t = Limits::default().buffered_burst_ms)]
    pub(crate) buffered_burst_ms: u64,
}

impl LimitArgs {
    pub(crate) fn limits(&self) -> Limits {
        Limits {
            max_event_bytes: usize::try_from(self.max_event_bytes).unwrap_or(usize::MAX),
            max_body_bytes: self.max_body_bytes,
            max_events: self.max_events,
            max_tools: self.max_tools,
            max_server_requests: self.max_server_requests,
            buffered_wait_ms: self.buffered_wait_ms,
            buffered_burst_ms: self.buffered_burst_ms,
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum FormatArg {
    /// A readable table.
    Human,
    /// One JSON document: an array of per-file results.
    Json,
    /// One verdict per line.
    Jsonl,
}

/// `proxy --format`: the proxy streams, so no one-document JSON.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum ProxyFormatArg {
    /// Human lines on stderr.
    Human,
    /// One verdict per line on stdout.
    Jsonl,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum OutputFormatArg {
    /// A readable table.
    Human,
    /// One JSON document: an array of per-file results.
    Json,
    /// One verdict per line.
    Jsonl,
    /// JUnit XML: one test case per exchange, failures for incomplete ones.
    Junit,
    /// Markdown: one table per file (failures first) and a summary line, for CI job summaries.
    Markdown,
}

#[derive(Clone, Copy, ValueEnum)]
pub(crate) enum ColorArg {
    Auto,
    Always,
    Never,
}

impl ColorArg {
    /// Whether to colour standard output.
    pub(crate) fn enabled(self) -> bool {
        self.enabled_on(io::stdout().is_terminal())
    }

    /// Whether to colour an output that is (or is not) a terminal.
    pub(crate) fn enabled_on(self, terminal: bool) -> bool {
        match self {
            ColorArg::Always => true,
            ColorArg::Never => false,
            ColorArg::Auto => terminal && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
        }
    }
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
