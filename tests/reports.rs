//! Reports as their readers meet them: the HTML page rendered by a real browser (headless
//! Chromium from Debian) and checked against the JSON of the same run, and the JUnit XML
//! validated against the schema Jenkins reads it with (vendored in `tests/schema/`).
//!
//! Chromium and xmllint are installed by `.ci/run`, which sets `MCP_VERDICT_CI=1`: there a
//! missing tool fails the test. Elsewhere the browser and schema checks are skipped with a note
//! (the rest of each test still runs).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use mcp_verdict::faults::FaultServer;
use serde_json::Value;

mod proxy_process;
use proxy_process::{ProxyProcess, client, log_lines, write_mix};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_mcp-verdict"))
}

/// A fresh scratch directory for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mcp-verdict-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// An external program, or `None` (skip) outside CI; in CI a missing tool is a failure.
fn external(name: &str) -> Option<PathBuf> {
    let found = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|p| p.join(name))
            .find(|p| p.is_file())
    });
    if found.is_none() {
        assert!(
            std::env::var_os("MCP_VERDICT_CI").is_none(),
            "{name} is required in CI (.ci/run installs it)"
        );
        eprintln!("skipping the {name} check: {name} is not installed");
    }
    found
}

/// Runs a command with a deadline (a hung browser must fail the test, not hang it). Output goes
/// to files in `dir`, so a large DOM cannot fill a pipe while we wait.
fn run_bounded(mut cmd: Command, dir: &Path, limit: Duration) -> Output {
    let (out_path, err_path) = (dir.join("stdout"), dir.join("stderr"));
    let mut child = cmd
        .stdout(std::fs::File::create(&out_path).unwrap())
        .stderr(std::fs::File::create(&err_path).unwrap())
        .spawn()
        .unwrap();
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            panic!("{cmd:?} took longer than {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    Output {
        status,
        stdout: std::fs::read(&out_path).unwrap(),
        stderr: std::fs::read(&err_path).unwrap(),
    }
}

/// What the browser made of a page: the DOM after scripts ran, and every console message.
struct Rendered {
    dom: String,
    console: Vec<String>,
}

fn render(chromium: &Path, page: &Path, dir: &Path) -> Rendered {
    let profile = dir.join(format!(
        "profile-{}",
        page.file_stem().unwrap().to_string_lossy()
    ));
    let mut cmd = Command::new(chromium);
    cmd.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--enable-logging=stderr",
        "--v=0",
        "--dump-dom",
    ])
    .arg(format!("--user-data-dir={}", profile.display()))
    .arg(format!("file://{}", page.display()));
    let out = run_bounded(cmd, dir, Duration::from_secs(90));
    assert!(out.status.success(), "chromium failed: {out:?}");
    // Chromium logs every console message (log, error, uncaught exception, CSP refusal) as
    // `INFO:CONSOLE`; the report logs nothing, so any such line is a fault.
    let console = String::from_utf8_lossy(&out.stderr)
        .lines()
        .filter(|l| l.contains(":CONSOLE"))
        .map(str::to_owned)
        .collect();
    Rendered {
        dom: String::from_utf8(out.stdout).unwrap(),
        console,
    }
}

/// The text of the element with this id.
fn by_id<'a>(dom: &'a str, id: &str) -> &'a str {
    let marker = format!("id=\"{id}\">");
    let start = dom
        .find(&marker)
        .unwrap_or_else(|| panic!("no #{id} in the page"))
        + marker.len();
    let len = dom[start..].find('<').unwrap();
    &dom[start..start + len]
}

/// The table with this id, up to its end.
fn table<'a>(dom: &'a str, id: &str) -> &'a str {
    let start = dom
        .find(&format!("id=\"{id}\""))
        .unwrap_or_else(|| panic!("no #{id} table"));
    &dom[start..start + dom[start..].find("</table>").unwrap()]
}

/// The rendered "outcomes by layer" table: outcome name to count.
fn outcome_table(dom: &str) -> BTreeMap<String, u64> {
    let start = dom.find("id=\"outcomes\"").expect("outcomes table");
    let table = &dom[start..start + dom[start..].find("</table>").unwrap()];
    table
        .split("<tr data-outcome=\"")
        .skip(1)
        .map(|row| {
            let name = &row[..row.find('"').unwrap()];
            let cell = "class=\"num count\">";
            let at = row.find(cell).unwrap() + cell.len();
            let count = row[at..at + row[at..].find('<').unwrap()].parse().unwrap();
            (name.to_owned(), count)
        })
        .collect()
}

/// Checks a rendered summary against counts from JSON: totals, outcomes, the exit decision,
/// that the script ran, and that the console stayed silent.
fn assert_summary(
    page: &Rendered,
    total: u64,
    incomplete: u64,
    outcomes: &BTreeMap<String, u64>,
    exit: i32,
) {
    assert!(page.console.is_empty(), "console: {:#?}", page.console);
    assert!(
        page.dom.contains("data-js=\"ok\""),
        "the page's script did not run"
    );
    assert_eq!(by_id(&page.dom, "n-total"), total.to_string());
    assert_eq!(by_id(&page.dom, "n-incomplete"), incomplete.to_string());
    assert_eq!(
        by_id(&page.dom, "n-complete"),
        (total - incomplete).to_string()
    );
    assert_eq!(&outcome_table(&page.dom), outcomes);
    assert!(
        page.dom.contains(&format!(
            "id=\"decision\" data-exit=\"{exit}\">Exit {exit}:"
        )),
        "exit decision {exit} not shown"
    );
}

fn testdata_hars() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir("testdata/har")
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "har"))
        .collect();
    files.sort();
    files
}

/// Totals from `--format json` output: verdict count, incomplete, per outcome.
fn json_counts(json: &Value) -> (u64, u64, BTreeMap<String, u64>) {
    let mut outcomes = BTreeMap::new();
    let (mut total, mut incomplete) = (0, 0);
    for file in json.as_array().unwrap() {
        for v in file["verdicts"].as_array().unwrap() {
            total += 1;
            incomplete += u64::from(!v["complete"].as_bool().unwrap());
            *outcomes
                .entry(v["outcome"].as_str().unwrap().to_owned())
                .or_default() += 1;
        }
    }
    (total, incomplete, outcomes)
}

#[test]
fn the_console_check_sees_errors() {
    // The control for every browser test below: a page that throws must be caught.
    let Some(chromium) = external("chromium") else {
        return;
    };
    let dir = scratch("console-control");
    let page = dir.join("broken.html");
    std::fs::write(
        &page,
        "<!DOCTYPE html><p>x</p><script>throw new Error('deliberate')</script>",
    )
    .unwrap();
    let rendered = render(&chromium, &page, &dir);
    assert!(
        rendered.console.iter().any(|l| l.contains("deliberate")),
        "{:?}",
        rendered.console
    );
}

#[test]
fn replay_html_matches_the_json_of_the_same_run() {
    let dir = scratch("replay-html");
    let page = dir.join("replay.html");
    let files = testdata_hars();
    let out = bin()
        .arg("replay")
        .args(&files)
        .args(["--format", "json", "--html"])
        .arg(&page)
        .output()
        .unwrap();
    let exit = out.status.code().unwrap();
    assert_eq!(exit, 1, "the testdata has broken exchanges on purpose");
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    let (total, incomplete, outcomes) = json_counts(&json);
    let html = std::fs::read_to_string(&page).unwrap();
    // Self-contained: nothing is fetched, and the page stays small.
    for fetch in ["src=\"http", "href=\"http", "@import", "url(http"] {
        assert!(!html.contains(fetch), "the page would fetch: {fetch}");
    }
    assert!(
        html.len() < 2 << 20,
        "{} bytes for {total} exchanges",
        html.len()
    );
    // The summary is there before any script runs.
    assert!(html.contains(&format!("id=\"n-total\">{total}<")));

    let Some(chromium) = external("chromium") else {
        return;
    };
    let rendered = render(&chromium, &page, &dir);
    assert_summary(&rendered, total, incomplete, &outcomes, exit);
    let rows = table(&rendered.dom, "exchanges")
        .matches("<tr data-outcome=")
        .count() as u64;
    assert_eq!(rows, total, "one row per exchange");
    // The logical calls: the rows of `replay --calls` over the same captures.
    let calls = bin()
        .args(["replay", "--calls", "--format", "jsonl"])
        .args(&files)
        .output()
        .unwrap();
    let calls: Vec<Value> = String::from_utf8(calls.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let shown = table(&rendered.dom, "calls");
    assert_eq!(shown.matches("<tr data-outcome=").count(), calls.len());
    assert_eq!(
        shown.matches("data-complete=\"false\"").count(),
        calls.iter().filter(|c| c["complete"] == false).count()
    );
    assert!(
        calls.len() < total as usize,
        "some calls group several exchanges"
    );
    assert_eq!(
        rendered.dom.matches("<section class=\"trace\"").count() as u64,
        total
    );
    // The cut stream: its timeline marks where the answer began and was cut off.
    let cut = files
        .iter()
        .position(|f| f.ends_with("sse_unterminated_final.har"))
        .unwrap();
    let before: usize = json.as_array().unwrap()[..cut]
        .iter()
        .map(|f| f["verdicts"].as_array().unwrap().len())
        .sum();
    let section = &rendered.dom[rendered.dom.find(&format!("id=\"x-{before}\"")).unwrap()..];
    let section = &section[..section.find("</section>").unwrap()];
    assert!(section.contains("STREAM_ABORTED"), "{section}");
    assert!(section.contains("the answer began here and was cut off"));
    assert!(section.contains("notification notifications/progress"));
}

#[test]
fn replay_junit_validates_against_the_jenkins_schema_and_counts_failures() {
    let dir = scratch("replay-junit");
    let files = testdata_hars();
    let junit = bin()
        .arg("replay")
        .args(&files)
        .args(["--format", "junit"])
        .output()
        .unwrap();
    let json = bin()
        .arg("replay")
        .args(&files)
        .args(["--format", "json"])
        .output()
        .unwrap();
    assert_eq!(junit.status.code(), json.status.code());
    let xml = String::from_utf8(junit.stdout).unwrap();
    let (total, incomplete, _) = json_counts(&serde_json::from_slice(&json.stdout).unwrap());
    let skipped: u64 = serde_json::from_slice::<Value>(&json.stdout)
        .unwrap()
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["skipped"].as_array().unwrap().len() as u64)
        .sum();
    let failures = xml.matches("<failure ").count() as u64;
    let forgiven = xml.matches("a legacy server, not a failure").count() as u64;
    assert_eq!(failures + forgiven, incomplete);
    assert!(failures > 0);
    assert_eq!(
        xml.matches("<testcase ").count() as u64,
        total + skipped,
        "one test case per exchange and per skipped entry"
    );
    assert!(xml.contains(&format!(
        "<testsuites name=\"mcp-verdict replay\" tests=\"{}\" failures=\"{failures}\"",
        total + skipped
    )));
    assert!(xml.contains("<failure type=\"stream.STREAM_ABORTED\""));
    let path = dir.join("replay.xml");
    std::fs::write(&path, &xml).unwrap();
    if let Some(xmllint) = external("xmllint") {
        validate(&xmllint, &path);
    }
}

fn validate(xmllint: &Path, path: &Path) {
    let out = Command::new(xmllint)
        .args(["--noout", "--schema", "tests/schema/junit-10.xsd"])
        .arg(path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn the_schema_check_rejects_a_bad_document() {
    // The control for the schema checks: a test case without a name is not JUnit.
    let Some(xmllint) = external("xmllint") else {
        return;
    };
    let dir = scratch("junit-control");
    let path = dir.join("bad.xml");
    std::fs::write(
        &path,
        "<testsuites><testsuite name=\"s\" tests=\"1\" failures=\"0\" errors=\"0\"><testcase/></testsuite></testsuites>",
    )
    .unwrap();
    let out = Command::new(xmllint)
        .args(["--noout", "--schema", "tests/schema/junit-10.xsd"])
        .arg(&path)
        .output()
        .unwrap();
    assert!(!out.status.success());
}

fn fault_server() -> (tokio::runtime::Runtime, FaultServer) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let server = rt.block_on(FaultServer::start("127.0.0.1:0")).unwrap();
    (rt, server)
}

#[test]
fn soak_html_and_junit_match_the_report_of_the_same_run() {
    let (_rt, server) = fault_server();
    let dir = scratch("soak-html");
    let mix = write_mix(&dir, 4);
    let (page, junit, report) = (
        dir.join("soak.html"),
        dir.join("soak.xml"),
        dir.join("soak.json"),
    );
    let out = bin()
        .args(["soak", &server.url(None), "--mix"])
        .arg(&mix)
        .args(["--requests", "100", "--concurrency", "4", "--html"])
        .arg(&page)
        .arg("--junit")
        .arg(&junit)
        .arg("--report-out")
        .arg(&report)
        .output()
        .unwrap();
    let exit = out.status.code().unwrap();
    let report: Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    let outcomes: BTreeMap<String, u64> =
        serde_json::from_value(report["outcomes"].clone()).unwrap();
    let total = report["requests"].as_u64().unwrap();
    let incomplete = report["incomplete"].as_u64().unwrap();
    assert_eq!((total, incomplete), (100, 20));
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(xml.contains("<testcase name=\"every call complete\""));
    assert!(xml.contains("<failure type=\"threshold\" message=\"20 of 100 calls not complete\""));
    if let Some(xmllint) = external("xmllint") {
        validate(&xmllint, &junit);
    }
    let Some(chromium) = external("chromium") else {
        return;
    };
    let rendered = render(&chromium, &page, &dir);
    assert_summary(&rendered, total, incomplete, &outcomes, exit);
    let hdr = &rendered.dom[rendered.dom.find("id=\"hdr\"").expect("percentile plot")..];
    assert_eq!(
        hdr[..hdr.find("</svg>").unwrap()]
            .matches("<polyline")
            .count(),
        3,
        "head, first event and terminal response plotted"
    );
    assert!(rendered.dom.contains("id=\"percentiles\""));
}

#[test]
fn probe_html_draws_live_arrival_times() {
    let (_rt, server) = fault_server();
    let dir = scratch("probe-html");
    let page = dir.join("probe.html");
    let out = bin()
        .args([
            "probe",
            &server.url(Some("sse-progress")),
            "--tool",
            "progress",
        ])
        .args(["--format", "json", "--html"])
        .arg(&page)
        .output()
        .unwrap();
    let exit = out.status.code().unwrap();
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    let (total, incomplete, outcomes) = json_counts(&json);
    assert_eq!(outcomes.get("TOOL_SUCCESS"), Some(&1));
    let html = std::fs::read_to_string(&page).unwrap();
    // The measured call: three messages, each with its arrival time.
    let call = &html[html.rfind("<section class=\"trace\"").unwrap()..];
    assert!(call.contains("ms (measured)"), "{call}");
    assert_eq!(call.matches("<li>+").count(), 3, "{call}");
    // Its logical calls, the last one the tool call.
    let calls = table(&html, "calls");
    let last_row = &calls[calls.rfind("<tr ").unwrap()..];
    assert!(last_row.contains("tools/call progress"), "{last_row}");
    let Some(chromium) = external("chromium") else {
        return;
    };
    let rendered = render(&chromium, &page, &dir);
    assert_summary(&rendered, total, incomplete, &outcomes, exit);
}

/// Totals from a proxy's `--log`: verdict count, incomplete, per outcome.
fn log_counts(lines: &[Value]) -> (u64, u64, BTreeMap<String, u64>) {
    let mut outcomes = BTreeMap::new();
    let mut incomplete = 0;
    for v in lines {
        incomplete += u64::from(!v["complete"].as_bool().unwrap());
        *outcomes
            .entry(v["outcome"].as_str().unwrap().to_owned())
            .or_default() += 1;
    }
    (lines.len() as u64, incomplete, outcomes)
}

/// A proxy in front of `upstream` writing `--log` and `--html` into `dir`.
fn proxy_with_html(upstream: &str, dir: &Path) -> (ProxyProcess, PathBuf, PathBuf) {
    let (page, log) = (dir.join("proxy.html"), dir.join("proxy.jsonl"));
    let args = [
        "--quiet",
        "--log",
        log.to_str().unwrap(),
        "--html",
        page.to_str().unwrap(),
    ];
    (ProxyProcess::start(upstream, &args, &[], dir), page, log)
}

#[test]
fn proxy_html_written_at_sigterm_matches_its_log() {
    let (_rt, server) = fault_server();
    let dir = scratch("proxy-html");
    let (proxy, page, log) = proxy_with_html(&server.url(None), &dir);
    // Real clients through it: a probe whose call streams progress, then a soak with one call
    // in three cut off, long enough that the page keeps only the last 500 exchanges.
    let mut probe = bin();
    probe.args(["probe", &proxy.url, "--tool", "progress"]);
    assert_eq!(client(probe), 0);
    let mix = write_mix(&dir, 2);
    let mut soak = bin();
    soak.args(["soak", &proxy.url, "--mix"]).arg(&mix).args([
        "--requests",
        "540",
        "--concurrency",
        "4",
    ]);
    assert_eq!(client(soak), 1, "the soak saw its cut calls");
    let status = proxy.stop();
    assert_eq!(status.code(), Some(0), "{status:?}");

    let lines = log_lines(&log);
    let (total, incomplete, outcomes) = log_counts(&lines);
    assert!(total > 540, "{total}");
    assert_eq!(incomplete, 180);
    assert_eq!(outcomes["STREAM_ABORTED"], 180);
    let html = std::fs::read_to_string(&page).unwrap();
    // Bounded: the table and the timelines hold the last 500 exchanges; the counts are of all.
    assert!(html.contains("id=\"kept\""), "the page says what it kept");
    assert_eq!(html.matches("<section class=\"trace\"").count(), 500);
    let last = lines.last().unwrap()["index"].as_u64().unwrap();
    let exchanges = table(&html, "exchanges");
    assert!(exchanges.contains(&format!("<td class=\"num\">{last}</td>")));
    assert!(
        !exchanges.contains("<td class=\"num\">0</td><td>"),
        "the oldest row was dropped"
    );
    // The calls table is bounded the same way.
    let calls = table(&html, "calls").matches("<tr data-outcome=").count();
    assert!((1..=500).contains(&calls), "{calls}");
    // A cut call's timeline, measured live: the answer expected where the body ended.
    let cut = &html[html.rfind("data-outcome=\"STREAM_ABORTED\"><h3>").unwrap()..];
    let cut = &cut[..cut.find("</section>").unwrap()];
    assert!(cut.contains("ms (measured)"), "{cut}");
    assert!(cut.contains("answer expected by here"), "{cut}");
    let Some(chromium) = external("chromium") else {
        return;
    };
    let rendered = render(&chromium, &page, &dir);
    assert_summary(&rendered, total, incomplete, &outcomes, 0);
}

#[test]
fn proxy_html_draws_each_message_at_its_arrival() {
    let (_rt, server) = fault_server();
    let dir = scratch("proxy-html-small");
    let (page, log, calls) = (
        dir.join("proxy.html"),
        dir.join("proxy.jsonl"),
        dir.join("calls.jsonl"),
    );
    let args = [
        "--quiet",
        "--log",
        log.to_str().unwrap(),
        "--html",
        page.to_str().unwrap(),
        "--calls",
        calls.to_str().unwrap(),
    ];
    let proxy = ProxyProcess::start(&server.url(Some("sse-progress")), &args, &[], &dir);
    let mut probe = bin();
    probe.args(["probe", &proxy.url, "--tool", "progress"]);
    assert_eq!(client(probe), 0);
    assert_eq!(proxy.stop().code(), Some(0));
    let (total, incomplete, outcomes) = log_counts(&log_lines(&log));
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(!html.contains("id=\"kept\""), "everything was kept");
    // The page's calls table holds the proxy's logical calls, one row per `--calls` record.
    let calls = std::fs::read_to_string(&calls).unwrap();
    let calls: Vec<&str> = calls.lines().collect();
    assert!(!calls.is_empty());
    let shown = table(&html, "calls");
    assert_eq!(
        shown.matches("<tr data-outcome=").count(),
        calls.len(),
        "{shown}"
    );
    assert!(shown.contains("progress"), "{shown}");
    // The tools/call: two progress notifications and the answer, each with its arrival time.
    let call = &html[html.rfind("<section class=\"trace\"").unwrap()..];
    assert!(call.contains("tools/call progress"), "{call}");
    assert!(call.contains("ms (measured)"), "{call}");
    assert_eq!(call.matches("<li>+").count(), 3, "{call}");
    assert_eq!(
        call.matches("notifications/progress</li>").count(),
        2,
        "{call}"
    );
    let Some(chromium) = external("chromium") else {
        return;
    };
    let rendered = render(&chromium, &page, &dir);
    assert_summary(&rendered, total, incomplete, &outcomes, 0);
}
