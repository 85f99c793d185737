//! `serve-faults` and `demo`.

use std::io::Write;
use std::process::ExitCode;

use mcp_verdict::faults::demo;
use mcp_verdict::faults::scenarios::{self, Scenario};
use mcp_verdict::faults::{FaultServer, ServeLimits};

use crate::args::{DemoArgs, FormatArg, ServeArgs};
use crate::cli::{fail, runtime};

/// The `serve-faults` limits from the flags.
fn serve_limits(args: &ServeArgs) -> Result<ServeLimits, String> {
    if args.max_connections == 0 {
        return Err("--max-connections must be at least 1".into());
    }
    // The cap must sit below the descriptor limit, or new clients wait in the backlog (accept
    // fails with EMFILE) instead of getting a 503.
    let mut max_connections = args.max_connections;
    if let Some(files) = open_files_limit() {
        let room = files.saturating_sub(FDS_KEPT_FREE).max(1);
        if max_connections > room {
            eprintln!(
                "mcp-verdict: warning: --max-connections {max_connections} lowered to {room}: the open-files limit is {files}"
            );
            max_connections = room;
        }
    }
    Ok(ServeLimits {
        max_connections,
        max_head: ServeLimits::default().max_head,
        max_body: args.max_request_bytes,
        max_bodies_in_flight: args.max_bodies_in_flight,
        idle_timeout: args.idle_timeout,
        head_timeout: args.head_timeout,
        body_timeout: args.body_timeout,
    })
}

/// Descriptors left for the listener, stdio and the refusals of connections past the cap.
const FDS_KEPT_FREE: usize = 32;

/// The soft limit on open files (`ulimit -n`), where `/proc` tells it.
fn open_files_limit() -> Option<usize> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = limits.lines().find(|l| l.starts_with("Max open files"))?;
    line.split_whitespace().nth(3)?.parse().ok()
}

fn expectation(s: &Scenario) -> String {
    let e = &s.expect;
    let mut text = format!("{} / {}", e.outcome, e.advice.as_str());
    if let Some(n) = e.event_count {
        text.push_str(&format!(", {n} events"));
    }
    if !e.violations.is_empty() {
        text.push_str(&format!(", {}", e.violations.join(" ")));
    }
    for then in &s.then {
        let step = serde_json::to_string(&then.step).unwrap_or_default();
        text.push_str(&format!("; then {step}: {}", then.expect.outcome));
    }
    if !s.calls.is_empty() {
        text.push_str(&format!("; {} calls checked", s.calls.len()));
    }
    text
}

pub fn serve(args: ServeArgs) -> ExitCode {
    let list = scenarios::all();
    if args.list {
        let mut out = std::io::stdout().lock();
        let _ = match args.out.format {
            FormatArg::Human => list.iter().try_for_each(|s| {
                writeln!(
                    out,
                    "{:<30} {:<11} {:<7} {}\n{:<30} expect: {}",
                    s.name,
                    s.era_str(),
                    s.tool,
                    s.about,
                    "",
                    expectation(s)
                )
            }),
            FormatArg::Json => writeln!(out, "{}", demo::list_json(&list)),
            FormatArg::Jsonl => list.iter().try_for_each(|s| {
                writeln!(out, "{}", serde_json::to_string(s).unwrap_or_default())
            }),
        };
        return ExitCode::SUCCESS;
    }
    let limits = match serve_limits(&args) {
        Ok(l) => l,
        Err(e) => return fail(e),
    };
    if args
        .auth_token
        .as_deref()
        .is_some_and(|t| t.trim().is_empty())
    {
        return fail("--auth-token must not be empty");
    }
    let rt = match runtime() {
        Ok(rt) => rt,
        Err(code) => return code,
    };
    rt.block_on(async {
        let protected = args.auth_token.clone();
        let server = match FaultServer::start_protected(&args.listen, limits, protected).await {
            Ok(s) => s,
            Err(e) => {
                eprintln!("mcp-verdict: cannot listen on {}: {e}", args.listen);
                return ExitCode::from(2);
            }
        };
        if !server.addr().ip().is_loopback() {
            eprintln!(
                "mcp-verdict: warning: listening on {}, reachable from other machines; its tools \
                 (pay included) answer any client that names this address in Host",
                server.addr()
            );
        }
        eprintln!(
            "mcp-verdict: serving {} fault scenarios; correct endpoint {}, faulty ones {}/<scenario> (Ctrl-C stops)",
            list.len(),
            server.url(None),
            server.url(None)
        );
        if args.auth_token.is_some() {
            eprintln!(
                "mcp-verdict: protected resource: send Authorization: Bearer <token>; metadata at http://{}/.well-known/oauth-protected-resource",
                server.addr()
            );
        }
        let _ = tokio::signal::ctrl_c().await;
        ExitCode::SUCCESS
    })
}

/// The scenarios `--scenario` names (all when none); exit 2 for a name that is not one.
fn selected(names: &[String]) -> Result<Vec<Scenario>, ExitCode> {
    let mut list = scenarios::all();
    if let Some(name) = names.iter().find(|n| !list.iter().any(|s| s.name == *n)) {
        eprintln!("mcp-verdict: no scenario {name:?}; see `mcp-verdict serve-faults --list`");
        return Err(ExitCode::from(2));
    }
    if !names.is_empty() {
        list.retain(|s| names.iter().any(|n| n == s.name));
    }
    Ok(list)
}

/// Starts a fault server on a loopback port and probes `list` against it.
fn run_demo(list: &[Scenario]) -> Result<Vec<demo::Run>, ExitCode> {
    let rt = runtime()?;
    let runs = rt.block_on(async {
        let server = FaultServer::start("127.0.0.1:0").await?;
        let base = format!("http://{}", server.addr());
        Ok::<_, std::io::Error>(demo::run_all(&base, list).await)
    });
    runs.map_err(|e| {
        eprintln!("mcp-verdict: cannot start the fault server on 127.0.0.1: {e}");
        ExitCode::from(2)
    })
}

pub fn demo(args: DemoArgs) -> ExitCode {
    // The recordings' directory first: a bad path fails before the run, not after it.
    if let Some(dir) = &args.record
        && let Err(e) = std::fs::create_dir_all(dir).and_then(|()| writable_dir(dir))
    {
        return fail(format!(
            "--record {}: cannot be written: {e}",
            dir.display()
        ));
    }
    let runs = match selected(&args.scenarios).and_then(|list| run_demo(&list)) {
        Ok(runs) => runs,
        Err(code) => return code,
    };
    if let Some(dir) = &args.record
        && let Err(e) = record_runs(dir, &runs)
    {
        eprintln!(
            "mcp-verdict: cannot write the recordings to {}: {e}",
            dir.display()
        );
        return ExitCode::from(2);
    }
    let failed = match args.out.format {
        FormatArg::Human => print_runs(&runs, args.out.color.enabled(), args.verbose),
        FormatArg::Json | FormatArg::Jsonl => print_runs_json(&runs, args.out.format),
    };
    if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// Whether a file can be created in `dir` (created and removed again).
fn writable_dir(dir: &std::path::Path) -> std::io::Result<()> {
    let probe = dir.join(format!(".mcp-verdict-{}", std::process::id()));
    std::fs::File::create(&probe)?;
    std::fs::remove_file(probe)
}

/// One object per scenario: its name, what it expects, what the call got, whether it passed,
/// the mismatches and every verdict. `json`: one array; `jsonl`: one object per line. Returns
/// how many failed.
fn print_runs_json(runs: &[demo::Run], format: FormatArg) -> usize {
    let objects: Vec<serde_json::Value> = runs
        .iter()
        .map(|run| {
            let got = run.call().map(|v| {
                serde_json::json!({"outcome": v.outcome, "advice": v.retry.advice, "status": v.status})
            });
            serde_json::json!({
                "scenario": run.scenario.name,
                "era": run.scenario.era_str(),
                "tool": run.scenario.tool,
                "expect": run.scenario.expect,
                "got": got,
                "passed": run.passed(),
                "mismatches": run.mismatches,
                "verdicts": run.verdicts,
            })
        })
        .collect();
    let mut out = std::io::stdout().lock();
    let _ = match format {
        FormatArg::Json => writeln!(
            out,
            "{}",
            serde_json::to_string_pretty(&objects).unwrap_or_default()
        ),
        _ => objects.iter().try_for_each(|o| writeln!(out, "{o}")),
    };
    runs.iter().filter(|r| !r.passed()).count()
}

/// Writes each run's exchanges as `dir/<scenario>.har`, creating `dir`.
fn record_runs(dir: &std::path::Path, runs: &[demo::Run]) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    for run in runs {
        let path = dir.join(format!("{}.har", run.scenario.name));
        let mut out = std::io::BufWriter::new(std::fs::File::create(path)?);
        mcp_verdict::har::write(&run.recorded, &mut out)?;
        out.flush()?;
    }
    Ok(())
}

/// One line per scenario (expected, got, pass/FAIL), its mismatches under it, and with
/// `verbose` every verdict as JSON. Returns how many failed.
fn print_runs(runs: &[demo::Run], color: bool, verbose: bool) -> usize {
    let paint = |code: &str, text: &str| {
        if color {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_owned()
        }
    };
    let mut out = std::io::stdout().lock();
    let _ = writeln!(
        out,
        "{:<30} {:<36} {:<36} result",
        "scenario", "expected", "got"
    );
    let mut failed = 0;
    for run in runs {
        let got = run
            .call()
            .map(|v| format!("{} / {}", v.outcome, v.retry.advice.as_str()))
            .unwrap_or_else(|| "(no call)".into());
        let expect = &run.scenario.expect;
        let want = format!("{} / {}", expect.outcome, expect.advice.as_str());
        let result = if run.passed() {
            paint("32", "pass")
        } else {
            failed += 1;
            paint("31", "FAIL")
        };
        let name = run.scenario.name;
        let _ = writeln!(out, "{name:<30} {want:<36} {got:<36} {result}");
        for m in &run.mismatches {
            let _ = writeln!(out, "{:<30} {}", "", paint("33", m));
        }
        if verbose {
            for v in &run.verdicts {
                let _ = writeln!(out, "{}", serde_json::to_string(v).unwrap_or_default());
            }
        }
    }
    let summary = format!(
        "{} scenarios, {} passed, {failed} failed",
        runs.len(),
        runs.len() - failed
    );
    let _ = writeln!(
        out,
        "{}",
        paint(if failed == 0 { "32" } else { "31" }, &summary)
    );
    failed
}
