//! `mcp-verdict`: judge MCP Streamable-HTTP exchanges.
//!
//! This file is only the top: it parses the flags ([`args`]) and hands each command to its
//! module. The commands (`replay`, `probe`, `faults`, `soak`, `proxy`, `diff`, `rules`, `docs`) are
//! siblings that import none of each other; what they share is in [`cli`] and the helpers
//! beside it (`tests/layout.rs` checks both).
//!
//! Exit codes: one rule for every command, in [`exit`].

mod args;
mod calls_out;
mod cli;
mod diff;
mod diff_out;
mod docs;
mod exit;
mod faults;
mod output;
mod probe;
mod proxy;
mod proxy_summary;
mod replay;
mod replay_files;
mod report;
mod rules;
mod soak;
mod tool_args;
mod units;

use std::process::ExitCode;

use clap::Parser;

use args::{Cli, Command, FormatArg, ReportCommand};

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Replay(args) => replay::run(args),
        Command::Probe(args) => probe::run(args),
        Command::ServeFaults(args) => faults::serve(args),
        Command::Demo(args) => faults::demo(args),
        Command::Soak(args) => soak::run(args),
        Command::Proxy(args) => proxy::run(args),
        Command::Diff(args) => diff::run(args),
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
        Command::Rules(args) => rules::run(&args.out),
        Command::Completions { shell } => docs::completions::<Cli>(shell),
        Command::Man { command, dir } => match dir {
            Some(dir) => docs::man_dir::<Cli>(&dir),
            None => docs::man::<Cli>(command.as_deref()),
        },
    }
}
