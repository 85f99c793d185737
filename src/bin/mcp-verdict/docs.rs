//! `completions` and `man`: generated from the clap definitions, so they never drift from the
//! flags.

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use clap::CommandFactory;

/// Prints the completion script for `shell`.
pub fn completions<C: CommandFactory>(shell: clap_complete::Shell) -> ExitCode {
    let mut cmd = C::command();
    let mut out = std::io::stdout().lock();
    clap_complete::generate(shell, &mut cmd, "mcp-verdict", &mut out);
    let _ = out.flush();
    ExitCode::SUCCESS
}

/// Writes every page into `dir` (created when missing): the tool's `mcp-verdict.1` and one
/// `mcp-verdict-COMMAND.1` per command (`mcp-verdict-report-merge.1` for nested ones), each
/// path on standard output.
pub fn man_dir<C: CommandFactory>(dir: &Path) -> ExitCode {
    if let Err(e) = std::fs::create_dir_all(dir) {
        return crate::exit::unusable(format!("man --dir {}: {e}", dir.display()));
    }
    let mut cmd = C::command().disable_help_subcommand(true);
    cmd.build();
    let mut written = Vec::new();
    if let Err(e) = write_pages(&cmd, dir, &mut written) {
        return crate::exit::unusable(format!("man --dir {}: {e}", dir.display()));
    }
    let mut out = std::io::stdout().lock();
    for path in written {
        let _ = writeln!(out, "{}", path.display());
    }
    ExitCode::SUCCESS
}

/// The page of `cmd` and of each visible command under it, depth first, the parent last.
fn write_pages(
    cmd: &clap::Command,
    dir: &Path,
    written: &mut Vec<std::path::PathBuf>,
) -> std::io::Result<()> {
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        write_pages(sub, dir, written)?;
    }
    written.push(clap_mangen::Man::new(cmd.clone()).generate_to(dir)?);
    Ok(())
}

/// Prints the man page (roff) of the tool, or of one subcommand (`man soak`).
pub fn man<C: CommandFactory>(sub: Option<&str>) -> ExitCode {
    let top = C::command();
    let cmd = match sub {
        None => top,
        Some(name) => match top.find_subcommand(name) {
            // The page is printed once and the process ends: leaking the name is free.
            Some(s) => s
                .clone()
                .name(&*String::leak(format!("mcp-verdict-{name}"))),
            None => {
                return crate::exit::unusable(format!(
                    "man {name}: no such command; see `mcp-verdict --help`"
                ));
            }
        },
    };
    let mut page = Vec::new();
    if let Err(e) = clap_mangen::Man::new(cmd).render(&mut page) {
        return crate::exit::unusable(format!("cannot render the man page: {e}"));
    }
    let _ = std::io::stdout().lock().write_all(&page);
    ExitCode::SUCCESS
}
