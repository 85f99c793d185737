//! `mcp-verdict rules`: the rule catalogue, and the words of the call records, as a table or
//! JSON.

use std::io::{self, Write};
use std::process::ExitCode;

use mcp_verdict::Rule;

use crate::args::{FormatArg, StyleArgs};
use crate::calls_out;

/// Lists every rule with its id, level and summary (human: then the call vocabulary).
pub fn run(out: &StyleArgs) -> ExitCode {
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
