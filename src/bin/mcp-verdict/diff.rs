//! `mcp-verdict diff A B`: reads both runs (the library's `diff` module tells their kinds and
//! pairs their calls), prints what changed in the chosen format, and exits 1 when a regression
//! of a `--fail-on` kind was found.

use std::path::Path;
use std::process::ExitCode;

use mcp_verdict::diff::{self, Kind, Regression, Side};

use crate::args::DiffArgs;
use crate::diff_out::{Named, Out};
use crate::exit;

/// Runs `diff`: 0 no regression of the `--fail-on` kinds, 1 some, 2 unusable input.
pub fn run(args: DiffArgs) -> ExitCode {
    let fail_on = match fail_on(&args.fail_on) {
        Ok(kinds) => kinds,
        Err(e) => return exit::unusable(e),
    };
    let limits = args.limits.limits();
    let (a, b) = match (side(&args.a, limits), side(&args.b, limits)) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(e), _) | (_, Err(e)) => return exit::unusable(e),
    };
    let mut out = Out::new(args.format, args.color.enabled(), &fail_on);
    let failed = match (a, b) {
        (
            Side::Calls {
                kind: ka,
                calls: ca,
            },
            Side::Calls {
                kind: kb,
                calls: cb,
            },
        ) => {
            let found = diff::diff_calls(&ca, &cb, args.latency_threshold);
            let names = [
                Named::new(&args.a, ka, ca.len()),
                Named::new(&args.b, kb, cb.len()),
            ];
            out.calls(&names, &found);
            found.fails_on(&fail_on)
        }
        (Side::Soak(ra), Side::Soak(rb)) => {
            let found = diff::diff_soak(&ra, &rb, args.latency_threshold);
            let names = [
                Named::new(&args.a, Kind::Soak, ra.requests as usize),
                Named::new(&args.b, Kind::Soak, rb.requests as usize),
            ];
            out.soak(&names, &found);
            found.fails_on(&fail_on)
        }
        (Side::Soak(_), _) => {
            return exit::unusable(format!(
                "{}: a soak report compares only with another soak report ({} is not one)",
                args.a.display(),
                args.b.display()
            ));
        }
        (_, Side::Soak(_)) => {
            return exit::unusable(format!(
                "{}: a soak report compares only with another soak report ({} is not one)",
                args.b.display(),
                args.a.display()
            ));
        }
    };
    exit::Run {
        threshold_broken: failed,
        broken_pipe: out.broken_pipe(),
        ..exit::Run::default()
    }
    .code()
}

/// One input read, or the one-line reason naming it.
fn side(path: &Path, limits: mcp_verdict::Limits) -> Result<Side, String> {
    diff::load(path, limits).map_err(|e| format!("{}: {e}", path.display()))
}

/// `--fail-on`: kinds by wire name, comma-separated; `all`; `none`.
fn fail_on(list: &str) -> Result<Vec<Regression>, String> {
    match list.trim() {
        "all" => return Ok(Regression::ALL.to_vec()),
        "none" | "" => return Ok(Vec::new()),
        _ => {}
    }
    let mut kinds = Vec::new();
    for word in list.split(',').map(str::trim).filter(|w| !w.is_empty()) {
        let kind = Regression::ALL
            .iter()
            .copied()
            .find(|k| k.as_str() == word.replace('-', "_"))
            .ok_or_else(|| {
                let names: Vec<&str> = Regression::ALL.iter().map(|k| k.as_str()).collect();
                format!(
                    "--fail-on {word}: not a regression kind; use {}, all or none",
                    names.join(", ")
                )
            })?;
        if !kinds.contains(&kind) {
            kinds.push(kind);
        }
    }
    Ok(kinds)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fail_on_reads_kinds_all_and_none() {
        assert_eq!(fail_on("all").unwrap(), Regression::ALL.to_vec());
        assert_eq!(fail_on("none").unwrap(), Vec::new());
        assert_eq!(
            fail_on("latency, must-rule,latency").unwrap(),
            vec![Regression::Latency, Regression::MustRule]
        );
        let e = fail_on("incomplete,slow").unwrap_err();
        assert!(
            e.starts_with("--fail-on slow: ") && e.contains("new_failure"),
            "{e}"
        );
    }
}
