//! `proxy --ui`: the live page over real loopback HTTP, with the proxy as a process in front of
//! the in-process fault server.
//! - the event stream: a failed call arrives with its outcome and rule ids, and a page that
//!   connects late gets what is kept first; no token (or a wrong one) is a 403; a
//!   non-loopback `--ui` address is refused without `--ui-allow-remote` and served (with a
//!   warning) with it; `/har` serves the recording, or a 404 naming `--record`;
//! - the page in a real browser (Debian's headless Chromium): the failed call is drawn, the
//!   "only failures" filter (`&only=failures`) hides the successes, an opened call shows its
//!   rule ids, and a 1280 px screenshot is kept under `target/tmp/`.
//!
//! Chromium is installed by `.ci/run` (`MCP_VERDICT_CI=1`): there a missing browser fails the
//! test; elsewhere the browser check is skipped with a `SKIP:` line.
#![cfg(feature = "cli")]

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use mcp_verdict::faults::FaultServer;
use serde_json::Value;

mod proxy_process;
use proxy_process::{ProxyProcess, client};

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

fn fault_server() -> (tokio::runtime::Runtime, FaultServer) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let server = rt.block_on(FaultServer::start("127.0.0.1:0")).unwrap();
    (rt, server)
}

/// The proxy (with `--ui 127.0.0.1:0` and `args`) in front of `scenario`, and its page's URL
/// as printed (`http://127.0.0.1:PORT/?token=...`).
fn proxy_with_ui(
    server: &FaultServer,
    scenario: &str,
    args: &[&str],
    dir: &Path,
) -> (ProxyProcess, String) {
    let mut all = vec!["--ui", "127.0.0.1:0", "--quiet"];
    all.extend_from_slice(args);
    let proxy = ProxyProcess::start(&server.url(Some(scenario)), &all, &[], dir);
    let start = Instant::now();
    let page = loop {
        let text = std::fs::read_to_string(&proxy.stderr).unwrap_or_default();
        if let Some(url) = text
            .split("live page http://")
            .nth(1)
            .and_then(|rest| rest.lines().next())
        {
            break format!("http://{}", url.trim());
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "no page URL: {text}"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    (proxy, page)
}

/// `(host:port, token)` of a page URL.
fn split_page(url: &str) -> (String, String) {
    let rest = url.strip_prefix("http://").unwrap();
    let (addr, query) = rest.split_once("/?token=").unwrap();
    assert_eq!(query.len(), 32, "128-bit hex token: {url}");
    (addr.to_owned(), query.to_owned())
}

/// One GET on a fresh connection: the status, and the body read until `enough` says so or
/// `limit` passes (an event stream never ends by itself).
fn get(addr: &str, target: &str, enough: impl Fn(&str) -> bool, limit: Duration) -> (u16, String) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    // `connection: close`: a whole response ends with the connection, not at `limit`.
    write!(
        s,
        "GET {target} HTTP/1.1\r\nhost: {addr}\r\nconnection: close\r\n\r\n"
    )
    .unwrap();
    let start = Instant::now();
    let mut got = Vec::new();
    let mut buf = [0u8; 16 << 10];
    while start.elapsed() < limit {
        match s.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) => {}
            Err(e) => panic!("{e}"),
        }
        let text = String::from_utf8_lossy(&got);
        if let Some((_, body)) = text.split_once("\r\n\r\n")
            && enough(body)
        {
            break;
        }
    }
    let text = String::from_utf8_lossy(&got).into_owned();
    let status = text
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status line: {text:?}"));
    let body = text
        .split_once("\r\n\r\n")
        .map_or("", |(_, b)| b)
        .to_owned();
    (status, body)
}

/// The `(event, data)` pairs of an SSE text (chunked framing lines are not `event:`/`data:`).
fn events(body: &str) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    let mut event = String::new();
    for line in body.lines() {
        if let Some(e) = line.strip_prefix("event: ") {
            event = e.to_owned();
        } else if let Some(d) = line.strip_prefix("data: ") {
            out.push((event.clone(), serde_json::from_str(d).unwrap()));
        }
    }
    out
}

/// The exchanges of failed `tools/call`s among `events`: `(call, outcome, rule ids)`.
fn failed_tool_calls(events: &[(String, Value)]) -> Vec<(u64, String, Vec<String>)> {
    events
        .iter()
        .filter(|(e, _)| e == "exchange")
        .map(|(_, d)| d)
        .filter(|d| d["verdict"]["method"] == "tools/call")
        .map(|d| {
            let v = &d["verdict"];
            let rules = v["violations"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x["rule"].as_str().unwrap().to_owned())
                .collect();
            (
                d["call"].as_u64().unwrap(),
                v["outcome"].as_str().unwrap().to_owned(),
                rules,
            )
        })
        .collect()
}

/// Probes `url` with `tool` (one failed call on the wrong-id scenario: probe exits 1).
fn probe(url: &str, tool: &str) {
    let mut p = bin();
    p.args(["probe", url, "--tool", tool]);
    assert_eq!(client(p), 1, "probe {url} --tool {tool}");
}

#[test]
fn the_event_stream_sends_a_failed_call_and_needs_the_token() {
    let (_rt, server) = fault_server();
    let dir = scratch("ui-events");
    let (proxy, page) = proxy_with_ui(&server, "wrong-id", &["--record", "/dev/null"], &dir);
    let (addr, token) = split_page(&page);

    // A page connected before the call sees it arrive live.
    let live = {
        let (addr, token) = (addr.clone(), token.clone());
        std::thread::spawn(move || {
            get(
                &addr,
                &format!("/events?token={token}"),
                // The failed exchange's frame, whole (up to its blank line).
                |b| {
                    b.split_once("\"outcome\":\"INVALID_ENVELOPE\"")
                        .is_some_and(|(_, rest)| rest.contains("\n\n"))
                },
                Duration::from_secs(60),
            )
        })
    };
    std::thread::sleep(Duration::from_millis(300));
    probe(&proxy.url, "pay");
    let returned = std::time::Instant::now();
    let (status, body) = live.join().unwrap();
    // The page learns of the failed call within a second of the client's (live, not polled).
    assert!(
        returned.elapsed() < Duration::from_secs(1),
        "the failed call reached the page {:?} after the client had its answer",
        returned.elapsed()
    );
    assert_eq!(status, 200);
    let seen = events(&body);
    assert_eq!(seen[0].0, "reset", "{body}");
    assert_eq!(seen[0].1["keep"], 1000);
    let failed = failed_tool_calls(&seen);
    assert_eq!(failed.len(), 1, "{body}");
    let (call, outcome, rules) = &failed[0];
    assert_eq!(outcome, "INVALID_ENVELOPE");
    // It was sent as it opened (before forwarding) and as it finished, before it was grouped.
    let at = |event: &str| {
        seen.iter()
            .position(|(e, d)| e == event && (d["tool"] == "pay" || d["verdict"]["tool"] == "pay"))
    };
    let index = seen[at("exchange").unwrap()].1["verdict"]["index"].clone();
    let opened = at("opened").expect("an opened event for the tools/call");
    assert_eq!(seen[opened].1["index"], index);
    assert_eq!(seen[opened].1["method"], "tools/call");
    let done = seen
        .iter()
        .position(|(e, d)| e == "done" && d["index"] == index)
        .expect("a done event");
    assert!(opened < done && done < at("exchange").unwrap(), "{seen:?}");
    assert!(
        rules.contains(&"jsonrpc.id_mismatch".to_owned()),
        "{rules:?}"
    );
    // The exchanges before it (discovery, the tool list) are calls of their own, earlier.
    assert!(*call >= 1, "{seen:?}");
    let curl = seen
        .iter()
        .find(|(_, d)| d["verdict"]["method"] == "tools/call")
        .map(|(_, d)| d["curl"].as_str().unwrap().to_owned())
        .unwrap();
    assert!(
        curl.starts_with("curl -X POST 'http://127.0.0.1:"),
        "{curl}"
    );
    assert!(curl.contains("\"name\":\"pay\""), "{curl}");
    // The copied line sends the request again, as is: through the proxy to the same reply.
    let replayed = Command::new("sh")
        .arg("-c")
        .arg(format!("{curl} --silent --show-error --max-time 10"))
        .output()
        .expect("sh and curl");
    assert!(replayed.status.success(), "{curl}: {replayed:?}");
    let reply = String::from_utf8_lossy(&replayed.stdout);
    assert!(
        reply.contains("\"id\":99999"),
        "the wrong-id scenario's reply: {reply}"
    );

    // A page that connects late gets what is kept first, then ends with a snapshot.
    let (status, body) = get(
        &addr,
        &format!("/events?token={token}&snapshot=1"),
        |_| false,
        Duration::from_secs(10),
    );
    assert_eq!(status, 200);
    assert_eq!(failed_tool_calls(&events(&body)), failed, "{body}");

    // The page itself, and the recording so far.
    let (status, html) = get(
        &addr,
        &format!("/?token={token}"),
        |b| b.contains("</html>"),
        Duration::from_secs(10),
    );
    assert_eq!(status, 200);
    assert!(html.contains("new EventSource("), "the embedded page");
    let (status, har) = get(
        &addr,
        &format!("/har?token={token}"),
        |_| false,
        Duration::from_secs(10),
    );
    assert_eq!(status, 200);
    assert!(har.contains("\"entries\""), "{har}");

    // Every UI request needs the token.
    for target in [
        "/",
        "/events",
        "/har",
        "/?token=",
        "/events?token=00000000000000000000000000000000",
    ] {
        let (status, body) = get(&addr, target, |_| false, Duration::from_secs(5));
        assert_eq!(status, 403, "{target}: {body}");
        assert!(!body.contains("event:"), "{target}");
    }
    assert_eq!(proxy.stop().code(), Some(0));
}

#[test]
fn a_non_loopback_ui_needs_the_opt_in_and_is_served_with_it() {
    let out = bin()
        .args([
            "proxy",
            "--upstream",
            "http://127.0.0.1:9/mcp",
            "--listen",
            "127.0.0.1:0",
            "--ui",
            "0.0.0.0:0",
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--ui-allow-remote"), "{err}");
    assert!(!err.contains("live page"), "{err}");

    // With the opt-in it serves, and says so.
    let (_rt, server) = fault_server();
    let dir = scratch("ui-remote");
    let proxy = ProxyProcess::start(
        &server.url(Some("ok")),
        &["--quiet", "--ui", "0.0.0.0:0", "--ui-allow-remote"],
        &[],
        &dir,
    );
    let start = Instant::now();
    let err = loop {
        let err = std::fs::read_to_string(&proxy.stderr).unwrap();
        if err.contains("live page http://") || start.elapsed() > Duration::from_secs(20) {
            break err;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(err.contains("not loopback"), "{err}");
    let page = err
        .split("live page http://")
        .nth(1)
        .unwrap()
        .lines()
        .next()
        .unwrap();
    let (addr, token) = split_page(&format!("http://{page}"));
    let port = addr.rsplit_once(':').unwrap().1;
    let (status, _) = get(
        &format!("127.0.0.1:{port}"),
        &format!("/?token={token}"),
        |b| b.contains("</html>"),
        Duration::from_secs(10),
    );
    assert_eq!(status, 200);
    assert_eq!(proxy.stop().code(), Some(0));
}

/// Chromium, or `None` with a `SKIP:` line outside CI; in CI a missing browser fails.
fn chromium() -> Option<PathBuf> {
    let found = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|p| p.join("chromium"))
            .find(|p| p.is_file())
    });
    if found.is_none() {
        assert!(
            std::env::var_os("MCP_VERDICT_CI").is_none(),
            "chromium is required in CI (.ci/run installs it)"
        );
        eprintln!("SKIP: the live page browser check: chromium is not installed");
    }
    found
}

/// Headless Chromium on `url`, bounded in time: the DOM after scripts ran (`--dump-dom`), or
/// a screenshot at `shot` (1280×900). The page is asked for a snapshot (`&snapshot=1`), so its
/// event stream ends and the browser's virtual time can run out.
fn browse(chromium: &Path, url: &str, dir: &Path, shot: Option<&Path>) -> String {
    let profile = dir.join(format!("profile-{}", shot.is_some()));
    let mut cmd = Command::new(chromium);
    cmd.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--virtual-time-budget=5000",
        "--enable-logging=stderr",
        "--v=0",
    ])
    .arg(format!("--user-data-dir={}", profile.display()));
    match shot {
        Some(path) => cmd
            .arg("--window-size=1280,900")
            .arg(format!("--screenshot={}", path.display())),
        None => cmd.arg("--dump-dom"),
    };
    let out_path = dir.join("chromium.stdout");
    let mut child = cmd
        .arg(url)
        .stdout(std::fs::File::create(&out_path).unwrap())
        .stderr(std::fs::File::create(dir.join("chromium.stderr")).unwrap())
        .spawn()
        .unwrap();
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > Duration::from_secs(90) {
            let _ = child.kill();
            panic!("chromium took longer than 90 s on {url}");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.success(), "chromium failed on {url}");
    // Every console message (an error, an uncaught exception, a CSP refusal) is logged as
    // `:CONSOLE`; the page logs nothing, so any such line is a fault.
    let log = std::fs::read_to_string(dir.join("chromium.stderr")).unwrap();
    let console: Vec<&str> = log.lines().filter(|l| l.contains(":CONSOLE")).collect();
    assert!(console.is_empty(), "{url}: {console:#?}");
    std::fs::read_to_string(out_path).unwrap()
}

/// The `data-outcome` of every call row in a dumped DOM.
fn rows(dom: &str) -> Vec<&str> {
    dom.split("<tr class=\"call ")
        .skip(1)
        .map(|row| {
            row.split("data-outcome=\"")
                .nth(1)
                .and_then(|r| r.split('"').next())
                .unwrap()
        })
        .collect()
}

#[test]
fn the_page_in_a_browser_shows_the_failed_call_and_filters() {
    let (_rt, server) = fault_server();
    let dir = scratch("ui-browser");
    let (proxy, page) = proxy_with_ui(&server, "wrong-id", &[], &dir);
    let (addr, token) = split_page(&page);
    probe(&proxy.url, "pay");
    // Wait until the failed call is in the feed (it is grouped as its exchange finishes).
    let (_, body) = get(
        &addr,
        &format!("/events?token={token}&snapshot=1"),
        |_| false,
        Duration::from_secs(10),
    );
    let failed = failed_tool_calls(&events(&body));
    assert_eq!(failed.len(), 1, "{body}");
    let call = failed[0].0;
    // No `--record`: no HAR to download, and the reason why.
    let (status, why) = get(
        &addr,
        &format!("/har?token={token}"),
        |_| false,
        Duration::from_secs(10),
    );
    assert_eq!(status, 404);
    assert!(why.contains("--record"), "{why}");
    let Some(chromium) = chromium() else {
        return;
    };

    let all = browse(&chromium, &format!("{page}&snapshot=1"), &dir, None);
    let shown = rows(&all);
    assert!(shown.contains(&"INVALID_ENVELOPE"), "{all}");
    assert!(
        shown.contains(&"SUCCESS"),
        "discovery and the tool list: {shown:?}"
    );

    let url = format!("{page}&snapshot=1&only=failures&open={call}");
    let failures = browse(&chromium, &url, &dir, None);
    assert_eq!(rows(&failures), ["INVALID_ENVELOPE"], "{failures}");
    assert!(
        failures.contains(&format!("data-call=\"{call}\"")),
        "{failures}"
    );
    // The opened call shows its exchange's rule ids and its copy-as-curl line.
    assert!(failures.contains("jsonrpc.id_mismatch"), "{failures}");
    assert!(failures.contains("copy as curl"), "{failures}");

    let shot = Path::new(env!("CARGO_TARGET_TMPDIR")).join("proxy-ui-1280.png");
    let _ = std::fs::remove_file(&shot);
    browse(
        &chromium,
        &format!("{page}&snapshot=1&open={call}"),
        &dir,
        Some(&shot),
    );
    let png = std::fs::read(&shot).unwrap();
    assert!(
        png.starts_with(b"\x89PNG") && png.len() > 10_000,
        "screenshot at {}",
        shot.display()
    );
    assert_eq!(proxy.stop().code(), Some(0));
}
