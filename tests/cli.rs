#![cfg(feature = "cli")]
//! The command line as a user meets it: the real binary, real servers on 127.0.0.1, real
//! signals. One test per bug of issue 12 (each failed on the main of that day), then the
//! modern-CLI items: one exit rule, causes named, probe's answer, one flag grammar, failing
//! before the work.

mod support;

use std::io::Write;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use support::{fault_server, runtime, wait_bounded};

const BIN: &str = env!("CARGO_BIN_EXE_mcp-verdict");

fn spawn(args: &[&str]) -> Child {
    Command::new(BIN)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn run(args: &[&str]) -> Output {
    wait_bounded(spawn(args), Duration::from_secs(60))
}

fn text(out: &Output) -> String {
    format!(
        "exit {:?}\n--- stdout\n{}--- stderr\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn temp(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("mcp-verdict-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// Waits until `child` catches SIGINT (Linux: the `SigCgt` mask in /proc), so that the signal
/// tests the handler and not the default action of a process still starting.
fn wait_until_it_catches_sigint(child: &Child) {
    let path = format!("/proc/{}/status", child.id());
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(20) {
        let caught = std::fs::read_to_string(&path).ok().and_then(|status| {
            let mask = status.lines().find_map(|l| l.strip_prefix("SigCgt:"))?;
            u64::from_str_radix(mask.trim(), 16).ok()
        });
        if caught.is_some_and(|m| m & (1 << (2 - 1)) != 0) {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    panic!("the process never installed its SIGINT handler");
}

fn send_sigint(child: &Child) {
    let ok = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(ok.success());
}

// ---- Bug 1: soak exits 0 when calls fail -------------------------------------------------

#[test]
fn soak_exits_1_when_calls_fail_and_2_for_a_tool_the_server_does_not_list() {
    let rt = runtime();
    let server = fault_server(&rt);
    let reset = run(&[
        "soak",
        &server.url(Some("tcp-reset")),
        "--tool",
        "pay",
        "--requests",
        "50",
    ]);
    assert_eq!(reset.status.code(), Some(1), "{}", text(&reset));
    assert!(text(&reset).contains("STREAM_ABORTED"), "{}", text(&reset));

    let unknown = run(&[
        "soak",
        &server.url(None),
        "--tool",
        "nosuch",
        "--requests",
        "50",
    ]);
    assert_eq!(unknown.status.code(), Some(2), "{}", text(&unknown));
    assert!(
        text(&unknown).contains("tool \"nosuch\" is not in tools/list"),
        "{}",
        text(&unknown)
    );

    let fine = run(&[
        "soak",
        &server.url(None),
        "--tool",
        "echo",
        "--requests",
        "20",
    ]);
    assert_eq!(fine.status.code(), Some(0), "{}", text(&fine));
}

// ---- Bug 2: soak spins on a dead server --------------------------------------------------

#[test]
fn soak_stops_after_consecutive_connection_failures_and_counts_answered_throughput() {
    let server_rt = runtime();
    let server = fault_server(&server_rt);
    let url = server.url(None);
    let report_file = temp("dead-server.json");
    // Flags that today's main also reads, so that it fails on the bug, not on the grammar.
    let child = Command::new(BIN)
        .args([
            "soak",
            &url,
            "--tool",
            "echo",
            "--duration",
            "4s",
            "--report-out",
        ])
        .arg(&report_file)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    // The server goes away: its runtime, listener and connections with it.
    drop(server);
    server_rt.shutdown_background();
    let out = wait_bounded(child, Duration::from_secs(30));
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let report: Value =
        serde_json::from_slice(&std::fs::read(&report_file).unwrap()).expect("a JSON report");
    let failed = report["outcomes"]["CONNECTION_FAILED"]
        .as_u64()
        .unwrap_or(0);
    assert!(
        (10..=40).contains(&failed),
        "stops after 10 in a row (8 workers may each have one in flight): {failed}"
    );
    assert!(
        report["stopped"]
            .as_str()
            .is_some_and(|s| s.contains("10 calls in a row found no server")),
        "{report}"
    );
    let answered = report["answered"].as_u64().unwrap();
    let requests = report["requests"].as_u64().unwrap();
    assert_eq!(answered + failed, requests);
    let elapsed_s = report["elapsed_ms"].as_f64().unwrap() / 1000.0;
    let throughput = report["throughput"].as_f64().unwrap();
    assert!(
        (throughput - answered as f64 / elapsed_s).abs() < 0.01 * throughput.max(1.0),
        "throughput counts answered calls only: {throughput} vs {answered} in {elapsed_s} s"
    );
}

// ---- Bug 3: Ctrl-C does not stop soak ----------------------------------------------------

#[test]
fn first_ctrl_c_cancels_calls_in_flight_reports_and_exits_130() {
    let rt = runtime();
    let server = fault_server(&rt);
    let child = spawn(&[
        "soak",
        &server.url(Some("sse-never-ends")),
        "--tool",
        "echo",
        "--requests",
        "100",
        "--concurrency",
        "4",
        "--timeout",
        "20s",
    ]);
    wait_until_it_catches_sigint(&child);
    // Let the calls start and their streams begin.
    std::thread::sleep(Duration::from_millis(1000));
    let sent = Instant::now();
    send_sigint(&child);
    let out = wait_bounded(child, Duration::from_secs(15));
    let took = sent.elapsed();
    assert_eq!(out.status.code(), Some(130), "{}", text(&out));
    assert!(
        took < Duration::from_secs(5),
        "at once, not after the 20 s timeout: {took:?}"
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("interrupted (Ctrl-C): partial report"),
        "{stdout}"
    );
    assert!(stdout.contains("CANCELLED"), "{stdout}");
    assert!(
        stdout.contains("4 answered"),
        "the streams had begun: {stdout}"
    );
}

/// A listener that accepts and never answers: the handshake hangs.
fn silent_server(rt: &tokio::runtime::Runtime) -> String {
    let listener = rt
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let addr = listener.local_addr().unwrap();
    rt.spawn(async move {
        let mut held = Vec::new();
        for _ in 0..8 {
            if let Ok((s, _)) = listener.accept().await {
                held.push(s);
            }
        }
        tokio::time::sleep(Duration::from_secs(60)).await;
    });
    format!("http://{addr}/mcp")
}

#[test]
fn ctrl_c_during_the_handshake_stops_at_once_and_twice_exits_at_once() {
    let rt = runtime();
    let url = silent_server(&rt);
    for signals in [1, 2] {
        let child = spawn(&["soak", &url, "--tool", "echo", "--timeout", "20s"]);
        wait_until_it_catches_sigint(&child);
        std::thread::sleep(Duration::from_millis(300));
        let sent = Instant::now();
        for _ in 0..signals {
            send_sigint(&child);
        }
        let out = wait_bounded(child, Duration::from_secs(15));
        assert_eq!(out.status.code(), Some(130), "{signals}: {}", text(&out));
        assert!(
            sent.elapsed() < Duration::from_secs(5),
            "{signals}: at once"
        );
        if signals == 1 {
            assert!(
                text(&out).contains("interrupted (Ctrl-C) before the load began"),
                "{}",
                text(&out)
            );
        }
    }
}

// ---- Bug 4: an absent HAR body is judged STREAM_ABORTED ----------------------------------

const NO_BODY_HAR: &str = r#"{"log":{"version":"1.2","entries":[
 {"request":{"method":"POST","url":"http://x/mcp","headers":[{"name":"Content-Type","value":"application/json"},{"name":"MCP-Protocol-Version","value":"2025-11-25"}],
   "postData":{"mimeType":"application/json","text":"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"pay\",\"arguments\":{}}}"}},
  "response":{"status":200,"headers":[{"name":"Content-Type","value":"text/event-stream"}],"content":{"size":-1,"mimeType":"text/event-stream"}}}
]}}"#;

#[test]
fn a_har_entry_without_content_text_is_not_captured_not_aborted() {
    let path = temp("no-body.har");
    std::fs::write(&path, NO_BODY_HAR).unwrap();
    let out = run(&["replay", path.to_str().unwrap(), "--format", "jsonl"]);
    let line: Value = serde_json::from_slice(out.stdout.split(|b| *b == b'\n').next().unwrap())
        .unwrap_or_else(|e| panic!("{e}: {}", text(&out)));
    assert_eq!(line["outcome"], "NOT_CAPTURED", "{line}");
    assert_eq!(line["layer"], "stream");
    assert_eq!(line["complete"], false);
    assert_eq!(line["end"], "not_captured");
    assert!(line["event_count"].is_null(), "unknown, not zero: {line}");
    assert_eq!(
        line["retry"]["advice"], "none",
        "never 'may already have taken effect'"
    );
    // Unknown is not complete: the one exit rule gives 1.
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));

    // An explicitly empty body is still an empty body.
    std::fs::write(
        &path,
        NO_BODY_HAR.replace(r#""size":-1,"#, r#""size":0,"text":"","#),
    )
    .unwrap();
    let out = run(&["replay", path.to_str().unwrap(), "--format", "jsonl"]);
    let line: Value =
        serde_json::from_slice(out.stdout.split(|b| *b == b'\n').next().unwrap()).unwrap();
    assert_eq!(line["outcome"], "STREAM_ABORTED", "{line}");
}

// ---- Bug 5: the summary contradicts the exit code ----------------------------------------

#[test]
fn probe_of_a_legacy_server_counts_the_discovery_fallback_as_the_exit_code_does() {
    let rt = runtime();
    let server = rt.block_on(support::rmcp_server(support::Mode::Legacy));
    let out = run(&["probe", &server.url, "--color", "always"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        !stdout.contains("1 incomplete"),
        "the summary says what the exit code says: {stdout}"
    );
    assert!(stdout.contains("0 incomplete, 1 legacy probe"), "{stdout}");
    let discover = stdout
        .lines()
        .find(|l| l.contains("server/discover"))
        .unwrap();
    assert!(
        !discover.contains("\x1b[31m"),
        "not painted as a failure: {discover:?}"
    );
    assert!(stdout.contains("legacy-server fallback"), "{stdout}");
}

// ---- Bug 6: soak counting, units, merge, idle deadline -----------------------------------

#[test]
fn soak_report_counts_zero_event_streams_and_names_units() {
    use mcp_verdict::adapters::Timings;
    use mcp_verdict::soak::Report;
    use mcp_verdict::{End, Headers, Request, ResponseHead, Session};

    let mut session = Session::default();
    let body = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}"#;
    let mut ex = session.begin(Request::new("POST", Headers::new(), &body[..]));
    ex.on_head(ResponseHead {
        status: 200,
        headers: Headers::from_iter([("Content-Type", "text/event-stream")]),
    });
    let v = session.finish(&mut ex, End::Eof);
    assert_eq!(v.event_count, Some(0));
    let mut report = Report::default();
    report.record(&v, &Timings::default());
    assert_eq!(
        report.events_per_stream.max(),
        0,
        "a stream with no event has 0"
    );
    let json = serde_json::to_value(&report).unwrap();
    assert_eq!(json["events_per_stream"]["unit"], "events");
    assert_eq!(json["head_us"]["unit"], "us");

    let mut merged = Report::default();
    merged.merge(&report);
    merged.merge(&report);
    assert!(
        merged.human().contains("throughput summed"),
        "{}",
        merged.human()
    );
}

#[test]
fn idle_timeout_covers_the_wait_for_the_response_head() {
    let rt = runtime();
    let url = silent_server(&rt);
    let start = Instant::now();
    let out = run(&[
        "probe",
        &url,
        // Bare seconds: read alike by the main of the day and by the unit grammar.
        "--timeout",
        "30",
        "--idle-timeout",
        "0.5",
        "--format",
        "jsonl",
    ]);
    assert!(
        start.elapsed() < Duration::from_secs(10),
        "the idle deadline, not the 30 s one: {:?}",
        start.elapsed()
    );
    assert!(text(&out).contains("TIMED_OUT"), "{}", text(&out));
    assert_eq!(out.status.code(), Some(1));
}

// ---- Item 7 and 8: HTTPS by default, causes named ----------------------------------------

#[test]
fn https_is_spoken_and_a_failed_handshake_names_tls() {
    // A plain TCP server that records the first bytes and answers in plain HTTP: a TLS client
    // opens with a handshake record (0x16, version 3.x) and then fails its handshake.
    let rt = runtime();
    let listener = rt
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let addr = listener.local_addr().unwrap();
    let first = rt.spawn(async move {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let (mut s, _) = listener.accept().await.unwrap();
        let mut buf = [0u8; 3];
        s.read_exact(&mut buf).await.unwrap();
        // Answer as a plain-HTTP server would.
        let _ = s
            .write_all(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
            .await;
        let _ = s.flush().await;
        buf
    });
    let out = run(&[
        "probe",
        &format!("https://{addr}/mcp"),
        "--timeout",
        "10s",
        "--format",
        "jsonl",
    ]);
    let bytes = rt.block_on(first).unwrap();
    assert_eq!(bytes[0], 0x16, "a TLS handshake record");
    assert_eq!(bytes[1], 0x03);
    let line: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(line["outcome"], "CONNECTION_FAILED", "{line}");
    let reason = line["retry"]["reason"].as_str().unwrap();
    assert!(reason.contains("TLS with 127.0.0.1"), "{reason}");
}

#[test]
fn connection_failures_say_why_and_urls_get_helpful_errors() {
    // A port nothing listens on: bind, note, close.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let out = run(&[
        "probe",
        &format!("http://127.0.0.1:{port}/mcp"),
        "--color",
        "never",
    ]);
    // No server for the handshake: unusable input (issue 33), with the cause.
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains(&format!(
            "the connection failed: connection refused: nothing listens on 127.0.0.1:{port}"
        )),
        "{}",
        text(&out)
    );
    // soak's direct HTTP/1.1 path names it too (the handshake fails: exit 2).
    let out = run(&[
        "soak",
        &format!("http://127.0.0.1:{port}/mcp"),
        "--tool",
        "x",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("connection refused"), "{}", text(&out));

    let out = run(&["probe", &format!("127.0.0.1:{port}/mcp")]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out).contains(&format!("did you mean http://127.0.0.1:{port}/mcp")),
        "{}",
        text(&out)
    );
    let out = run(&["probe", "localhost/mcp"]);
    assert!(
        text(&out).contains("did you mean http://localhost/mcp"),
        "{}",
        text(&out)
    );

    let rt = runtime();
    let server = fault_server(&rt);
    let root = format!("http://{}/", server.addr());
    let out = run(&["probe", &root, "--color", "never"]);
    assert!(
        text(&out).contains("MCP endpoints usually live at /mcp"),
        "{}",
        text(&out)
    );
}

// ---- Item 9: probe shows the answer --------------------------------------------------------

#[test]
fn probe_shows_server_protocol_tools_and_the_tool_error_text() {
    let rt = runtime();
    let server = fault_server(&rt);
    let out = run(&[
        "probe",
        &server.url(None),
        "--tool",
        "fail",
        "--color",
        "never",
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("server: mcp-verdict serve-faults")
            && stdout.contains("protocol 2026-07-28 (via server/discover)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("tools (23): echo, lookup, progress, fail, pay, test_simple_text"),
        "{stdout}"
    );
    assert!(
        stdout.contains("tool error text: the tool failed on purpose"),
        "{stdout}"
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "a tool error is a complete answer"
    );

    let out = run(&[
        "probe",
        &server.url(None),
        "--tool",
        "nosuch",
        "--color",
        "never",
    ]);
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("tool \"nosuch\" is not in tools/list"),
        "{}",
        text(&out)
    );
}

// ---- Item 10 and 11: one grammar, fail before the work -----------------------------------

#[test]
fn meaningless_input_is_refused_before_any_work() {
    let cases: &[(&[&str], &str)] = &[
        (
            &["soak", "http://127.0.0.1:9/mcp", "--tool", "x", "-c", "0"],
            "at least 1",
        ),
        (
            &[
                "soak",
                "http://127.0.0.1:9/mcp",
                "--args",
                "{}",
                "--mix",
                "m.json",
            ],
            "--tool",
        ),
        (
            &["probe", "http://127.0.0.1:9/mcp", "--args", "{}"],
            "--tool",
        ),
        (
            &[
                "soak",
                "http://127.0.0.1:9/mcp",
                "--tool",
                "x",
                "--max-incomplete-rate",
                "1.5",
            ],
            "between 0 and 1",
        ),
        (
            &[
                "soak",
                "http://127.0.0.1:9/mcp",
                "--tool",
                "x",
                "--timeout",
                "3parsecs",
            ],
            "unit",
        ),
        (
            &[
                "soak",
                "http://127.0.0.1:9/mcp",
                "--tool",
                "x",
                "--duration",
                "99999999999h",
            ],
            "maximum",
        ),
        (
            &["replay", "x.har", "--max-body-bytes", "12 furlongs"],
            "unit",
        ),
        (
            &[
                "soak",
                "http://127.0.0.1:9/mcp",
                "--tool",
                "x",
                "-o",
                "/nonexistent/dir/r.json",
            ],
            "/nonexistent/dir/r.json",
        ),
        (
            &[
                "probe",
                "http://127.0.0.1:9/mcp",
                "-o",
                "/nonexistent/dir/p.har",
            ],
            "/nonexistent/dir/p.har",
        ),
    ];
    for (args, says) in cases {
        let start = Instant::now();
        let out = run(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out));
        assert!(
            text(&out).contains(says),
            "{args:?} should say {says:?}: {}",
            text(&out)
        );
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "{args:?}: before the work"
        );
    }
}

#[test]
fn flags_take_units_and_help_shows_unlimited_and_examples() {
    let help = run(&["replay", "--help"]);
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(help.contains("[default: unlimited]"), "{help}");
    assert!(help.contains("[default: 16MiB]"), "{help}");
    assert!(!help.contains("18446744073709551615"), "{help}");
    assert!(help.contains("Examples:"), "{help}");
    let top = run(&["--help"]);
    let top = String::from_utf8_lossy(&top.stdout);
    assert!(top.contains("130  interrupted by Ctrl-C"), "{top}");
    // Every command takes --format and --color.
    for cmd in ["replay", "probe", "soak", "serve-faults", "demo", "rules"] {
        let h = run(&[cmd, "--help"]);
        let h = String::from_utf8_lossy(&h.stdout);
        assert!(
            h.contains("--format") && h.contains("--color"),
            "{cmd}: {h}"
        );
    }
    let merge = run(&["report", "merge", "--help"]);
    assert!(String::from_utf8_lossy(&merge.stdout).contains("--format"));
    // Units at work: 64KiB is a limit a 100 KiB event breaks.
    let rt = runtime();
    let server = fault_server(&rt);
    let out = run(&[
        "probe",
        &server.url(Some("sse-oversize-event")),
        "--tool",
        "echo",
        "--max-event-bytes",
        "64KiB",
        "--timeout",
        "1m30s",
        "--format",
        "jsonl",
    ]);
    let last: Value =
        serde_json::from_str(String::from_utf8_lossy(&out.stdout).lines().last().unwrap()).unwrap();
    assert_eq!(last["outcome"], "LIMIT_EXCEEDED", "{last}");
}

#[test]
fn replay_reads_stdin_and_names_unusable_files() {
    // Piped standard input with no file argument.
    let mut child = Command::new(BIN)
        .args(["replay", "--format", "jsonl"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(NO_BODY_HAR.as_bytes())
        .unwrap();
    let out = wait_bounded(child, Duration::from_secs(20));
    assert!(text(&out).contains("NOT_CAPTURED"), "{}", text(&out));

    let empty = temp("empty.har");
    std::fs::write(&empty, "").unwrap();
    let out = run(&["replay", empty.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out).contains("empty file"), "{}", text(&out));

    let none = temp("none.har");
    std::fs::write(
        &none,
        r#"{"log":{"version":"1.2","entries":[{"request":{"method":"GET","url":"http://x/"},"response":{"status":200,"content":{"text":"hi"}}}]}}"#,
    )
    .unwrap();
    let out = run(&["replay", none.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("no MCP exchange"), "{}", text(&out));

    let out = run(&["replay", empty.to_str().unwrap(), "--format", "json"]);
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc[0]["error"], "empty file", "{doc}");
    let good = temp("good.har");
    std::fs::write(&good, NO_BODY_HAR).unwrap();
    let out = run(&["replay", good.to_str().unwrap(), "--format", "json"]);
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(doc[0]["error"].is_null(), "present and null: {doc}");
}

// ---- Item 12: completions and man page -----------------------------------------------------

#[test]
fn completions_and_man_page_come_from_the_flags() {
    for (shell, marker) in [
        ("bash", "complete -F"),
        ("zsh", "#compdef"),
        ("fish", "complete -c"),
    ] {
        let out = run(&["completions", shell]);
        assert_eq!(out.status.code(), Some(0));
        let script = String::from_utf8_lossy(&out.stdout);
        assert!(script.contains(marker), "{shell}: {script}");
        assert!(script.contains("max-connect-failures"), "{shell}");
    }
    let man = run(&["man"]);
    let page = String::from_utf8_lossy(&man.stdout);
    assert!(
        page.starts_with(".ie") || page.contains(".TH mcp-verdict"),
        "{page}"
    );
    let soak = run(&["man", "soak"]);
    assert!(String::from_utf8_lossy(&soak.stdout).contains("max\\-connect\\-failures"));
    assert_eq!(run(&["man", "nosuch"]).status.code(), Some(2));
}
