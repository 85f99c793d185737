//! `proxy --ui`: the live page over real loopback HTTP, with the proxy as a process in front of
//! the in-process fault server.
//! - the event stream: a failed call arrives with its outcome and rule ids, and a page that
//!   connects late gets what is kept first; no token (or a wrong one) is a 403; a
//!   non-loopback `--ui` address is refused without `--ui-allow-remote` and served (with a
//!   warning) with it; `/har` serves the recording, or a 404 naming `--record`;
//! - the page in a real browser (Debian's headless Chromium driven over the DevTools protocol,
//!   `support/cdp.rs`), open while a client calls through the proxy: the failed call is drawn
//!   within 1 s of the client's reply; by keyboard alone, "only failures" hides the success,
//!   Enter opens the failed call (its rule ids shown), its copy-as-curl line replays the
//!   request with curl, Escape closes it; 1280 px screenshots are kept under `target/tmp/`.
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
#[path = "support/cdp.rs"]
mod cdp;
use cdp::Browser;

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

/// One 2026-07-28 `tools/call` of `tool` with `arguments`, posted straight to the proxy at
/// `url` on a fresh connection: the whole response, and the instant the client had all of it.
fn call_tool(url: &str, tool: &str, arguments: Value) -> (String, Instant) {
    let rest = url.strip_prefix("http://").unwrap();
    let (addr, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let body = serde_json::json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
        "name": tool, "arguments": arguments, "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "proxy-ui-test", "version": "0"}}}})
    .to_string();
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    write!(
        s,
        "POST {path} HTTP/1.1\r\nhost: {addr}\r\nconnection: close\r\n\
         content-type: application/json\r\naccept: application/json, text/event-stream\r\n\
         mcp-protocol-version: 2026-07-28\r\nmcp-method: tools/call\r\nmcp-name: {tool}\r\n\
         content-length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut reply = String::new();
    s.read_to_string(&mut reply)
        .expect("the whole reply within 20 s");
    (reply, Instant::now())
}

/// The outcomes of the call rows a user can see (laid out and not `visibility: hidden`), top
/// to bottom: what the rendered page shows, not what its markup holds.
const VISIBLE_ROWS: &str = "[...document.querySelectorAll('tr.call')]
    .filter((r) => r.getClientRects().length > 0 && getComputedStyle(r).visibility !== 'hidden')
    .map((r) => r.dataset.outcome)";

/// Presses Tab until `js` (about `document.activeElement`) holds, at most 30 times: focus
/// reaches it by keyboard alone.
fn tab_to(b: &mut Browser, js: &str) {
    press_until(b, "Tab", js);
}

/// Presses `key` until `js` holds, at most 30 times.
fn press_until(b: &mut Browser, key: &str, js: &str) {
    for _ in 0..30 {
        if b.evaluate(js) == Value::Bool(true) {
            return;
        }
        b.key(key);
    }
    panic!(
        "Tab never reached `{js}`; focus is on {}",
        b.evaluate("document.activeElement.outerHTML.slice(0, 200)")
    );
}

#[test]
fn the_page_in_a_browser_shows_a_failed_call_live_and_is_keyboard_usable() {
    let (_rt, server) = fault_server();
    let dir = scratch("ui-browser");
    let (proxy, page) = proxy_with_ui(&server, "ok", &[], &dir);
    let (addr, token) = split_page(&page);
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

    // The page is open (its event stream connected) before any call.
    let mut b = Browser::launch(&chromium, 1280, 900, &dir);
    b.navigate(&page);
    assert!(
        b.wait_until(
            "document.getElementById('status').textContent === 'live'",
            Duration::from_secs(10)
        )
        .is_some(),
        "the page's event stream did not connect"
    );
    assert_eq!(b.evaluate(VISIBLE_ROWS), serde_json::json!([]));

    // A failed call: the reply carries another id (`_fault` picks the scenario per call).
    let (reply, returned) = call_tool(&proxy.url, "pay", serde_json::json!({"_fault": "wrong-id"}));
    assert!(reply.contains("\"id\":99999"), "{reply}");
    let drawn = b
        .wait_until(
            "!!document.querySelector('tr.call[data-outcome=\"INVALID_ENVELOPE\"]')",
            Duration::from_secs(5),
        )
        .expect("the failed call is drawn");
    let delay = drawn.saturating_duration_since(returned);
    eprintln!("the failed call was drawn {delay:?} after the client had its reply");
    assert!(
        delay <= Duration::from_secs(1),
        "the failed call was drawn {delay:?} after the client had its reply"
    );
    // A successful call after it.
    let (reply, _) = call_tool(&proxy.url, "echo", serde_json::json!({"message": "hi"}));
    assert!(reply.contains("\"id\":7"), "{reply}");
    assert!(
        b.wait_until(
            "!!document.querySelector('tr.call[data-outcome=\"TOOL_SUCCESS\"]')",
            Duration::from_secs(5)
        )
        .is_some(),
        "the successful call is drawn"
    );
    assert_eq!(
        b.evaluate(VISIBLE_ROWS),
        serde_json::json!(["TOOL_SUCCESS", "INVALID_ENVELOPE"]),
        "newest first"
    );
    let shots = Path::new(env!("CARGO_TARGET_TMPDIR"));
    b.screenshot(&shots.join("proxy-ui-1280.png"));

    // "only failures" by keyboard: Tab to the checkbox, Space ticks it; the success is gone
    // from what is rendered.
    tab_to(&mut b, "document.activeElement.id === 'f-failures'");
    b.key("Space");
    assert_eq!(
        b.evaluate("document.getElementById('f-failures').checked"),
        Value::Bool(true)
    );
    assert!(
        b.wait_until(
            &format!("JSON.stringify({VISIBLE_ROWS}) === '[\"INVALID_ENVELOPE\"]'"),
            Duration::from_secs(2)
        )
        .is_some(),
        "only the failure is visible: {}",
        b.evaluate(VISIBLE_ROWS)
    );

    // The failed call opened by keyboard: Tab to its row (it shows focus), Enter.
    tab_to(
        &mut b,
        "document.activeElement.matches('tr.call[data-outcome=\"INVALID_ENVELOPE\"]')",
    );
    assert_ne!(
        b.evaluate("getComputedStyle(document.activeElement).outlineStyle"),
        serde_json::json!("none"),
        "a focused row shows its focus"
    );
    b.key("Enter");
    let detail = "(() => { const d = document.querySelector('tr.detail'); \
                  return d && d.getClientRects().length > 0 ? d.innerText : ''; })()";
    assert!(
        b.wait_until(detail, Duration::from_secs(2)).is_some(),
        "Enter opened the call"
    );
    let text = b.evaluate(detail);
    let text = text.as_str().unwrap();
    assert!(text.contains("jsonrpc.id_mismatch"), "{text}");
    assert_eq!(
        b.evaluate("document.activeElement.getAttribute('aria-expanded')"),
        serde_json::json!("true"),
        "focus stays on the opened row"
    );

    // Copy as curl, by keyboard: what the button puts on the clipboard replays the request.
    b.evaluate(
        "navigator.clipboard.writeText = (t) => { window.copied = t; return Promise.resolve(); }; true",
    );
    tab_to(
        &mut b,
        "document.activeElement.textContent === 'copy as curl'",
    );
    b.key("Enter");
    assert!(
        b.wait_until("typeof window.copied === 'string'", Duration::from_secs(2))
            .is_some(),
        "the button copied"
    );
    let curl = b.evaluate("window.copied");
    let curl = curl.as_str().unwrap();
    assert_eq!(
        b.evaluate("document.querySelector('tr.detail pre.curl').textContent"),
        serde_json::json!(curl),
        "the shown line is the copied one"
    );
    assert!(
        curl.starts_with("curl -X POST 'http://127.0.0.1:"),
        "{curl}"
    );
    let replayed = Command::new("sh")
        .arg("-c")
        .arg(format!("{curl} --silent --show-error --max-time 10"))
        .output()
        .expect("sh and curl");
    assert!(replayed.status.success(), "{curl}: {replayed:?}");
    let reply = String::from_utf8_lossy(&replayed.stdout);
    assert!(
        reply.contains("\"id\":99999"),
        "the same fault again: {reply}"
    );

    // Escape closes the call; focus goes back to its row.
    b.key("Escape");
    assert!(
        b.wait_until(
            "![...document.querySelectorAll('tr.detail')].some((d) => d.getClientRects().length > 0)",
            Duration::from_secs(2)
        )
        .is_some(),
        "Escape closed the call"
    );
    assert_eq!(
        b.evaluate("document.activeElement.dataset.outcome"),
        serde_json::json!("INVALID_ENVELOPE")
    );
    // Back to the checkbox (Shift+Tab), Space unticks it: the success is shown again. The
    // failed call opened once more, with the success under it, is the kept screenshot.
    press_until(
        &mut b,
        "Shift+Tab",
        "document.activeElement.id === 'f-failures'",
    );
    b.key("Space");
    assert!(
        b.wait_until(
            &format!(
                "JSON.stringify({VISIBLE_ROWS}) === '[\"TOOL_SUCCESS\",\"INVALID_ENVELOPE\"]'"
            ),
            Duration::from_secs(2)
        )
        .is_some(),
        "the filter is off again: {}",
        b.evaluate(VISIBLE_ROWS)
    );
    tab_to(
        &mut b,
        "document.activeElement.matches('tr.call[data-outcome=\"INVALID_ENVELOPE\"]')",
    );
    b.key("Space");
    assert!(
        b.wait_until(detail, Duration::from_secs(2)).is_some(),
        "Space opened the call"
    );
    b.screenshot(&shots.join("proxy-ui-1280-open.png"));

    // The page itself reported nothing: no exception, no console line, no refused load.
    assert!(b.console.is_empty(), "{:#?}", b.console);
    b.close();
    for shot in ["proxy-ui-1280.png", "proxy-ui-1280-open.png"] {
        let png = std::fs::read(shots.join(shot)).unwrap();
        assert!(
            png.starts_with(b"\x89PNG") && png.len() > 10_000,
            "screenshot {shot}"
        );
        // The PNG header's width: the 1280 px viewport.
        assert_eq!(&png[16..20], &1280u32.to_be_bytes(), "{shot}");
    }
    assert_eq!(proxy.stop().code(), Some(0));
}
