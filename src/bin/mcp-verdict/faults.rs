//! `serve-faults` and `demo`.

use std::io::Write;
use std::process::ExitCode;

use mcp_verdict::faults::demo;
use mcp_verdict::faults::scenarios::{self, Scenario};
use mcp_verdict::faults::{FaultServer, ServeLimits};

use crate::{DemoArgs, FormatArg, ServeArgs};

/// A current-thread runtime, or exit 2 when it cannot start.
pub(crate) fn runtime() -> Result<tokio::runtime::Runtime, ExitCode> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| {
            eprintln!("mcp-verdict: cannot start the async runtime: {e}");
            ExitCode::from(2)
        })
}

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
        Err(e) => return crate::probe::fail(e),
    };
    let rt = match runtime() {
        Ok(rt) => rt,
        Err(code) => return code,
    };
    rt.block_on(async {
        let server = match FaultServer::start_with(&args.listen, limits).await {
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
        let _ = tokio::signal::ctrl_c().await;
        ExitCode::SUCCESS
    })
}

pub fn demo(args: DemoArgs) -> ExitCode {
    let mut list = scenarios::all();
    if !args.scenarios.is_empty() {
        for name in &args.scenarios {
            if scenarios::find(name).is_none() {
                eprintln!(
                    "mcp-verdict: no scenario {name:?}; see `mcp-verdict serve-faults --list`"
                );
                return ExitCode::from(2);
            }
        }
        list.retain(|s| args.scenarios.iter().any(|n| n == s.name));
    }
    let rt = match runtime() {
        Ok(rt) => rt,
        Err(code) => return code,
    };
    let runs = rt.block_on(async {
        let server = FaultServer::start("127.0.0.1:0").await?;
        let base = format!("http://{}", server.addr());
        Ok::<_, std::io::Error>(demo::run_all(&base, &list).await)
    });
    let runs = match runs {
        Ok(r) => r,
        Err(e) => {
            eprintln!("mcp-verdict: cannot start the fault server on 127.0.0.1: {e}");
            return ExitCode::from(2);
        }
    };
    let color = args.out.color.enabled();
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
    for run in &runs {
        let got = run
            .call()
            .map(|v| format!("{} / {}", v.outcome, v.retry.advice.as_str()))
            .unwrap_or_else(|| "(no call)".into());
        let want = format!(
            "{} / {}",
            run.scenario.expect.outcome,
            run.scenario.expect.advice.as_str()
        );
        let result = if run.passed() {
            paint("32", "pass")
        } else {
            failed += 1;
            paint("31", "FAIL")
        };
        let _ = writeln!(
            out,
            "{:<30} {:<36} {:<36} {result}",
            run.scenario.name, want, got
        );
        for m in &run.mismatches {
            let _ = writeln!(out, "{:<30} {}", "", paint("33", m));
        }
        if args.verbose {
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
    if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
