//! `completions` and `man`: generated from the clap definitions, so they never drift from the
//! flags.

use std::io::Write;
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
