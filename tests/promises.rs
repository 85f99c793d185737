#![cfg(feature = "cli")]
//! Issue 33, deliverables 2 and 3: every promise the README makes to a newcomer, kept, each
//! asserted against the built binary (`CARGO_BIN_EXE_mcp-verdict`), with real servers on
//! 127.0.0.1 only and every process bounded in time.
//!
//! - exit codes exactly as the table, on every command;
//! - every output path checked before anything is sent;
//! - `https://` to a plain-HTTP port says so; `--cacert` and `--insecure` for self-signed
//!   servers (a certificate made here with `openssl`, skipped with a message without it);
//! - `--otlp` in the default build;
//! - `--format` and `--color` on every command that prints verdicts, `proxy` and `demo` too;
//! - the README's completion and man lines work in an empty home; `man --dir` writes every page;
//! - `probe --all-tools` calls no tool that is (or may be) destructive unless asked.

#[path = "support/certs.rs"]
mod certs;
mod support;

use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::Value;
use support::{fault_server, runtime, wait_bounded};

const BIN: &str = env!("CARGO_BIN_EXE_mcp-verdict");

/// How long one run of the binary may take before it is killed (and the test fails).
const RUN_BOUND: Duration = Duration::from_secs(60);

fn command(args: &[&str]) -> Command {
    let mut cmd = Command::new(BIN);
    cmd.args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .env_remove("NO_COLOR");
    cmd
}

fn run(args: &[&str]) -> Output {
    wait_bounded(command(args).spawn().unwrap(), RUN_BOUND)
}

fn text(out: &Output) -> String {
    format!(
        "exit {:?}\n--- stdout\n{}--- stderr\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The JSON lines of standard output.
fn json_lines(out: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// A fresh directory of this test process.
fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "mcp-verdict-promises-{}-{name}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

// ---- 1. Exit codes ------------------------------------------------------------------------

#[test]
fn exit_codes_are_the_table_on_every_command() {
    let rt = runtime();
    let server = fault_server(&rt);
    let ok = server.url(None);
    let reset = server.url(Some("tcp-reset"));
    let nobody = format!("http://127.0.0.1:{}/mcp", free_port());
    let dir = temp_dir("exit");
    let (good_har, bad_har, empty) = (
        dir.join("ok.har"),
        dir.join("bad.har"),
        dir.join("empty.har"),
    );
    std::fs::write(&empty, "").unwrap();

    // probe: complete → 0; a verdict failure → 1; no server, an unlisted tool, a bad flag → 2.
    let out = run(&["probe", &ok, "--tool", "echo", "-o", s(&good_har)]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let out = run(&["probe", &reset, "--tool", "pay", "-o", s(&bad_har)]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let out = run(&["probe", &nobody, "--color", "never"]);
    assert_eq!(out.status.code(), Some(2), "no server: {}", text(&out));
    assert!(
        stderr(&out).contains("no server for the handshake")
            && stderr(&out).contains("connection refused"),
        "{}",
        text(&out)
    );
    let out = run(&["probe", &ok, "--tool", "nosuch", "--format", "jsonl"]);
    assert_eq!(out.status.code(), Some(2), "unlisted tool: {}", text(&out));
    assert!(
        stderr(&out).contains("tool \"nosuch\" is not in tools/list"),
        "{}",
        text(&out)
    );
    assert!(
        json_lines(&out).iter().all(|v| v["method"] != "tools/call"),
        "an unlisted tool is not called: {}",
        text(&out)
    );
    // The same with --calls (logical calls instead of exchanges).
    let out = run(&["probe", &ok, "--tool", "nosuch", "--calls"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let out = run(&["probe", &ok, "--no-such-flag"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));

    // soak: complete → 0; failures → 1; no server, an unlisted tool, a bad flag → 2.
    let out = run(&["soak", &ok, "--tool", "echo", "-n", "20", "-c", "2"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let out = run(&["soak", &reset, "--tool", "pay", "-n", "10", "-c", "2"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let out = run(&["soak", &nobody, "--tool", "echo"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let out = run(&["soak", &ok, "--tool", "nosuch", "-n", "5"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let out = run(&["soak", &ok, "--tool", "echo", "-c", "0"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));

    // replay: the recordings above, an empty file, a bad flag.
    let out = run(&["replay", s(&good_har)]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let out = run(&["replay", s(&bad_har)]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let out = run(&["replay", s(&empty)]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let out = run(&["replay", s(&good_har), "--format", "yaml"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));

    // demo: every scenario as expected → 0; an unknown scenario, a bad flag → 2.
    let out = run(&["demo", "--scenario", "ok", "--scenario", "tcp-reset"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let out = run(&["demo", "--scenario", "nosuch"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let out = run(&["demo", "--format", "yaml"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));

    // proxy: usage errors are 2 and it does not start.
    let out = run(&["proxy", "--upstream", &ok, "--listen", "nowhere"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let out = run(&["proxy", "--upstream", &ok, "--format", "json"]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "a proxy streams: {}",
        text(&out)
    );

    // report merge, man: unusable input is 2.
    let out = run(&["report", "merge", s(&dir.join("missing.json"))]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let out = run(&["man", "nosuch"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
}

// ---- 2. Output paths checked before anything is sent --------------------------------------

/// A TCP listener that counts the connections it gets (and answers none): a command that sends
/// anything to it shows in the count.
struct Counter {
    addr: SocketAddr,
    seen: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
}

impl Counter {
    fn start() -> Counter {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let addr = listener.local_addr().unwrap();
        let (seen, stop) = (
            Arc::new(AtomicUsize::new(0)),
            Arc::new(AtomicBool::new(false)),
        );
        let (count, done) = (seen.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut held = Vec::new();
            while !done.load(Ordering::Relaxed) {
                match listener.accept() {
                    Ok((conn, _)) => {
                        count.fetch_add(1, Ordering::SeqCst);
                        held.push(conn);
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                        std::thread::sleep(Duration::from_millis(5));
                    }
                    Err(_) => break,
                }
            }
        });
        Counter { addr, seen, stop }
    }

    fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }

    fn connections(&self) -> usize {
        self.seen.load(Ordering::SeqCst)
    }
}

impl Drop for Counter {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

#[test]
fn every_output_path_is_checked_before_anything_is_sent() {
    let server = Counter::start();
    let url = server.url();
    let dir = temp_dir("paths");
    let missing = dir.join("no-such-dir");
    let bad = |name: &str| missing.join(name).to_str().unwrap().to_owned();
    let a_dir = dir.to_str().unwrap().to_owned();
    // An address already in use, for the metrics flags.
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let taken = taken.local_addr().unwrap().to_string();
    // An existing report stays as it is when the run cannot start.
    let kept = dir.join("kept.html");
    std::fs::write(&kept, "old report").unwrap();

    let probe = |extra: &[&str]| {
        let mut a = vec![
            "probe".to_owned(),
            url.clone(),
            "--tool".into(),
            "echo".into(),
        ];
        a.extend(extra.iter().map(|s| s.to_string()));
        a
    };
    let soak = |extra: &[&str]| {
        let mut a = vec![
            "soak".to_owned(),
            url.clone(),
            "--tool".into(),
            "echo".into(),
        ];
        a.extend(["-n", "5"].iter().map(|s| s.to_string()));
        a.extend(extra.iter().map(|s| s.to_string()));
        a
    };
    let proxy = |extra: &[&str]| {
        let listen = format!("127.0.0.1:{}", free_port());
        let mut a = vec!["proxy".to_owned(), "--upstream".into(), url.clone()];
        a.extend(["--listen".to_owned(), listen]);
        a.extend(extra.iter().map(|s| s.to_string()));
        a
    };
    let cases: Vec<(Vec<String>, &str)> = vec![
        (probe(&["-o", &bad("p.har")]), "--record"),
        (probe(&["--record", &a_dir]), "--record"),
        (probe(&["--html", &bad("p.html")]), "--html"),
        (probe(&["--html", &a_dir]), "--html"),
        (soak(&["-o", &bad("r.json")]), "--report-out"),
        (soak(&["--metrics-file", &bad("m.prom")]), "--metrics-file"),
        (soak(&["--html", &bad("s.html")]), "--html"),
        (soak(&["--junit", &bad("s.xml")]), "--junit"),
        (soak(&["--calls", &bad("c.jsonl")]), "--calls"),
        (soak(&["--metrics-listen", &taken]), "--metrics-listen"),
        (
            soak(&["--html", s(&kept), "--junit", &bad("s.xml")]),
            "--junit",
        ),
        (proxy(&["--log", &bad("l.jsonl")]), "--log"),
        (proxy(&["--calls", &bad("c.jsonl")]), "--calls"),
        (proxy(&["--record", &bad("r.har")]), "--record"),
        (proxy(&["--html", &bad("p.html")]), "--html"),
        (proxy(&["--metrics-listen", &taken]), "--metrics-listen"),
        (
            vec!["replay".into(), "-".into(), "--html".into(), bad("r.html")],
            "--html",
        ),
        (
            vec![
                "demo".into(),
                "--scenario".into(),
                "ok".into(),
                "--record".into(),
                format!("{}/dir", s(&kept)),
            ],
            "--record",
        ),
    ];
    for (args, flag) in &cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let start = Instant::now();
        let out = wait_bounded(command(&args).spawn().unwrap(), Duration::from_secs(20));
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out));
        let err = stderr(&out);
        assert!(
            err.contains(flag),
            "{args:?}: the message names {flag}: {}",
            text(&out)
        );
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "{args:?}: at once, not after the run ({:?})",
            start.elapsed()
        );
        assert_eq!(
            server.connections(),
            0,
            "{args:?}: nothing may be sent before the outputs are checked"
        );
    }
    assert_eq!(std::fs::read_to_string(&kept).unwrap(), "old report");
    // The checks leave nothing behind.
    assert!(!missing.exists());
}

// ---- 3. TLS: plain HTTP named, --cacert and --insecure -------------------------------------

#[test]
fn https_to_a_plain_http_port_says_so() {
    let rt = runtime();
    let server = fault_server(&rt);
    let https = format!("https://{}/mcp", server.addr());
    let plain = format!("http://{}/mcp", server.addr());
    let out = run(&["probe", &https, "--format", "jsonl", "--timeout", "10s"]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "no server for the handshake: {}",
        text(&out)
    );
    let want = format!("the server speaks plain HTTP; did you mean {plain}?");
    let line = &json_lines(&out)[0];
    assert_eq!(line["outcome"], "CONNECTION_FAILED", "{line}");
    let reason = line["retry"]["reason"].as_str().unwrap();
    assert!(reason.contains(&want), "{reason}");
    assert!(!reason.contains("InvalidContentType"), "{reason}");
    let out = run(&["soak", &https, "--tool", "echo", "-n", "5"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(stderr(&out).contains(&want), "{}", text(&out));
}

/// `openssl s_server` with the test certificate on a loopback port, for one connection: it
/// answers the first request with a 404 (any HTTP answer shows the TLS handshake passed).
struct TlsServer {
    child: Child,
    port: u16,
}

impl TlsServer {
    fn start(dir: &Path) -> TlsServer {
        let port = free_port();
        let mut child = Command::new("openssl")
            .args([
                "s_server", "-cert", "leaf.pem", "-key", "leaf.key", "-naccept", "1",
            ])
            .args(["-accept", &format!("127.0.0.1:{port}")])
            .current_dir(dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut input = child.stdin.take().unwrap();
        let output = BufReader::new(child.stdout.take().unwrap());
        let (ready_tx, ready) = std::sync::mpsc::channel();
        // s_server prints ACCEPT when it listens and what the client sends; it sends what it
        // reads on stdin. The answer goes once the request is in.
        std::thread::spawn(move || {
            for line in output.lines() {
                let Ok(line) = line else { break };
                if line.starts_with("ACCEPT") {
                    let _ = ready_tx.send(());
                }
                if line.starts_with("POST ") {
                    let _ = input.write_all(
                        b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                    );
                    let _ = input.flush();
                }
            }
        });
        ready
            .recv_timeout(Duration::from_secs(20))
            .expect("openssl s_server listens");
        TlsServer { child, port }
    }

    fn url(&self) -> String {
        format!("https://127.0.0.1:{}/mcp", self.port)
    }
}

impl Drop for TlsServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn self_signed_servers_with_cacert_or_insecure() {
    let dir = temp_dir("tls");
    if certs::make_certificates(&dir).is_none() {
        // `.ci/run` installs openssl and sets MCP_VERDICT_CI: there a missing one fails.
        assert!(
            std::env::var_os("MCP_VERDICT_CI").is_none(),
            "no `openssl` on PATH under .ci/run, which installs it"
        );
        eprintln!(
            "SKIPPED self_signed_servers_with_cacert_or_insecure: no `openssl` on PATH to make a certificate and serve it"
        );
        return;
    }
    let ca = dir.join("ca.pem");
    // One request (no legacy fallback), so one connection per run.
    let probe = |server: &TlsServer, extra: &[&str]| {
        let url = server.url();
        let mut args = vec![
            "probe",
            &url,
            "--protocol",
            "2026-07-28",
            "--format",
            "jsonl",
        ];
        args.extend_from_slice(&["--timeout", "10s"]);
        args.extend_from_slice(extra);
        let out = run(&args);
        let first = json_lines(&out).first().cloned().unwrap_or(Value::Null);
        (out, first)
    };

    // Unknown to the platform's roots: refused, and said to be the certificate.
    let server = TlsServer::start(&dir);
    let (out, v) = probe(&server, &[]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert_eq!(v["outcome"], "CONNECTION_FAILED", "{v}");
    let reason = v["retry"]["reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains("TLS with 127.0.0.1") && reason.contains("certificate"),
        "{reason}"
    );
    drop(server);

    // --cacert: the CA is trusted, the handshake passes, the 404 is the answer.
    let server = TlsServer::start(&dir);
    let (out, v) = probe(&server, &["--cacert", s(&ca)]);
    assert_eq!(v["status"], 404, "{}", text(&out));
    assert_eq!(v["outcome"], "HTTP_ERROR", "{v}");
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    drop(server);

    // --insecure: any certificate.
    let server = TlsServer::start(&dir);
    let (out, v) = probe(&server, &["--insecure"]);
    assert_eq!(v["status"], 404, "{}", text(&out));
    drop(server);

    // soak too: the handshake reaches the server (its 404 fails it: exit 2, HTTP 404 named).
    for extra in [["--cacert", s(&ca)].as_slice(), ["--insecure"].as_slice()] {
        let server = TlsServer::start(&dir);
        let url = server.url();
        let mut args = vec![
            "soak",
            &url,
            "--tool",
            "echo",
            "-n",
            "1",
            "--protocol",
            "2026-07-28",
        ];
        args.extend_from_slice(extra);
        let out = run(&args);
        assert_eq!(out.status.code(), Some(2), "{}", text(&out));
        assert!(
            stderr(&out).contains("HTTP 404"),
            "{extra:?}: {}",
            text(&out)
        );
    }

    // A --cacert that is not a certificate: unusable input, the flag named, nothing sent.
    std::fs::write(dir.join("junk.pem"), "not a certificate").unwrap();
    let junk = dir.join("junk.pem");
    let out = run(&["probe", "https://127.0.0.1:9/mcp", "--cacert", s(&junk)]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(stderr(&out).contains("--cacert"), "{}", text(&out));
}

// ---- 4. --otlp in the default build --------------------------------------------------------

#[test]
fn otlp_is_in_the_default_build() {
    // The default features turn `otel` on (this test binary has it either way: the
    // dev-dependency asks for it; a build without it refuses --otlp naming the feature, a unit
    // test in src/bin/mcp-verdict/cli.rs).
    let manifest =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml")).unwrap();
    let default = manifest
        .lines()
        .find(|l| l.trim_start().starts_with("default ="))
        .expect("a default feature list");
    assert!(default.contains("\"otel\""), "{default}");
    for cmd in ["probe", "soak", "proxy"] {
        let help = run(&[cmd, "--help"]);
        assert!(
            String::from_utf8_lossy(&help.stdout).contains("--otlp <URL>"),
            "{cmd} --help"
        );
    }
}

// ---- 5. --format and --color everywhere ----------------------------------------------------

#[test]
fn format_and_color_on_every_command_that_prints_verdicts() {
    for cmd in [
        &["replay"][..],
        &["probe"],
        &["soak"],
        &["demo"],
        &["proxy"],
        &["serve-faults"],
        &["rules"],
        &["report", "merge"],
    ] {
        let mut args = cmd.to_vec();
        args.push("--help");
        let help = String::from_utf8_lossy(&run(&args).stdout).into_owned();
        assert!(
            help.contains("--format") && help.contains("--color"),
            "{cmd:?}: {help}"
        );
    }

    // demo honours --format (it once printed its table whatever was asked) and --color.
    let one = [
        "demo",
        "--scenario",
        "ok",
        "--scenario",
        "sse-cut-between-events",
    ];
    let json = run(&[&one[..], &["--format", "json"]].concat());
    assert_eq!(json.status.code(), Some(0), "{}", text(&json));
    let doc: Value = serde_json::from_slice(&json.stdout).expect("one JSON document");
    let runs = doc.as_array().unwrap();
    assert_eq!(runs.len(), 2, "{doc}");
    assert_eq!(runs[0]["scenario"], "ok");
    assert_eq!(runs[0]["passed"], true);
    assert_eq!(runs[1]["got"]["outcome"], runs[1]["expect"]["outcome"]);
    assert!(
        runs[1]["verdicts"]
            .as_array()
            .is_some_and(|v| !v.is_empty())
    );
    let jsonl = run(&[&one[..], &["--format", "jsonl"]].concat());
    let lines = json_lines(&jsonl);
    assert_eq!(lines.len(), 2, "{}", text(&jsonl));
    assert_eq!(lines[1]["scenario"], "sse-cut-between-events");
    let colored = run(&[&one[..], &["--color", "always"]].concat());
    assert!(String::from_utf8_lossy(&colored.stdout).contains("\x1b[32m"));
    let plain = run(&[&one[..], &["--color", "never"]].concat());
    assert!(!String::from_utf8_lossy(&plain.stdout).contains('\x1b'));

    // proxy: --format jsonl puts the verdicts on stdout; the summary at stop takes --color.
    let rt = runtime();
    let server = fault_server(&rt);
    let port = free_port();
    let mut proxy = command(&[
        "proxy",
        "--upstream",
        &server.url(None),
        "--listen",
        &format!("127.0.0.1:{port}"),
        "--format",
        "jsonl",
        "--color",
        "always",
    ])
    .spawn()
    .unwrap();
    let err = BufReader::new(proxy.stderr.take().unwrap());
    // Killed if the test fails before it stops the proxy.
    let mut proxy = Reaped(Some(proxy));
    let (first_tx, first) = std::sync::mpsc::channel();
    let drained = std::thread::spawn(move || {
        let mut all = String::new();
        for line in err.lines().map_while(Result::ok) {
            let _ = first_tx.send(());
            all.push_str(&line);
            all.push('\n');
        }
        all
    });
    first
        .recv_timeout(Duration::from_secs(20))
        .expect("the proxy announces itself");
    let through = format!("http://127.0.0.1:{port}/mcp");
    let out = run(&["probe", &through, "--tool", "echo"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let proxy = proxy.0.take().unwrap();
    let kill = Command::new("kill")
        .args(["-INT", &proxy.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let stopped = wait_bounded(proxy, Duration::from_secs(30));
    assert_eq!(stopped.status.code(), Some(0), "{}", text(&stopped));
    let verdicts = json_lines(&stopped);
    assert!(
        verdicts
            .iter()
            .any(|v| v["method"] == "tools/call" && v["outcome"] == "TOOL_SUCCESS"),
        "{}",
        text(&stopped)
    );
    let err = drained.join().unwrap();
    assert!(
        err.contains("\x1b[32m") && err.contains("exchanges,") && err.contains("0 incomplete"),
        "the summary at stop, coloured: {err}"
    );
}

/// A child process killed and reaped on drop unless taken out.
struct Reaped(Option<Child>);

impl Drop for Reaped {
    fn drop(&mut self) {
        if let Some(mut child) = self.0.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

// ---- 6. Completions and man pages on a fresh account ---------------------------------------

/// The shell lines of the README (and `docs/`) that install completions or man pages.
fn install_lines() -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = vec![root.join("README.md")];
    if let Ok(docs) = std::fs::read_dir(root.join("docs")) {
        files.extend(
            docs.flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "md")),
        );
    }
    let mut lines = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap_or_default();
        let mut in_sh = false;
        for line in text.lines() {
            let t = line.trim();
            if t.starts_with("```") {
                in_sh = t == "```sh" || t == "```bash" || t == "```console";
                continue;
            }
            let t = t.trim_start_matches("$ ");
            if in_sh
                && (t.contains("mcp-verdict completions ") || t.contains("mcp-verdict man "))
                && t.contains('~')
            {
                lines.push(t.to_owned());
            }
        }
    }
    lines
}

#[test]
fn completion_and_man_lines_work_in_an_empty_home() {
    let mut lines = install_lines();
    assert!(
        lines.iter().any(|l| l.contains("completions bash")),
        "the README shows how to install completions: {lines:?}"
    );
    assert!(
        lines.iter().any(|l| l.contains("mcp-verdict man ")),
        "the README shows how to install the man pages: {lines:?}"
    );
    // The examples in `--help` too.
    for args in [
        &["--help"][..],
        &["completions", "--help"],
        &["man", "--help"],
    ] {
        let help = String::from_utf8_lossy(&run(args).stdout).into_owned();
        lines.extend(
            help.lines()
                .map(str::trim)
                .filter(|l| {
                    (l.starts_with("mkdir -p") || l.starts_with("mcp-verdict man --dir"))
                        && l.contains('~')
                })
                .map(str::to_owned),
        );
    }
    let bin_dir = Path::new(BIN).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    for line in &lines {
        let home = temp_dir("home");
        let out = wait_bounded(
            Command::new("sh")
                .args(["-c", line])
                .env("HOME", &home)
                .env("PATH", &path)
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap(),
            RUN_BOUND,
        );
        assert!(out.status.success(), "{line}: {}", text(&out));
        // What the line writes: the target of `>`, or the --dir.
        if let Some(target) = line.split(" > ").nth(1) {
            let target = target.split_whitespace().next().unwrap();
            let file = home.join(target.trim_start_matches("~/"));
            let written = std::fs::read_to_string(&file).unwrap_or_default();
            assert!(written.len() > 100, "{line}: {} is empty", file.display());
            assert!(written.contains("mcp-verdict"), "{line}");
        }
        if let Some(dir) = line.split("--dir ").nth(1) {
            let dir = home.join(
                dir.split_whitespace()
                    .next()
                    .unwrap()
                    .trim_start_matches("~/"),
            );
            for page in [
                "mcp-verdict.1",
                "mcp-verdict-replay.1",
                "mcp-verdict-probe.1",
                "mcp-verdict-soak.1",
                "mcp-verdict-proxy.1",
                "mcp-verdict-demo.1",
                "mcp-verdict-serve-faults.1",
                "mcp-verdict-report-merge.1",
                "mcp-verdict-rules.1",
                "mcp-verdict-completions.1",
                "mcp-verdict-man.1",
            ] {
                let roff = std::fs::read_to_string(dir.join(page)).unwrap_or_default();
                assert!(
                    roff.starts_with(".ie") && roff.contains(".TH"),
                    "{line}: {page}"
                );
            }
        }
        let _ = std::fs::remove_dir_all(&home);
    }
    // A completion script that bash can load.
    if Command::new("bash").arg("--version").output().is_ok() {
        let home = temp_dir("bash");
        let out = Command::new("bash")
            .args([
                "-c",
                "mkdir -p ~/.local/share/bash-completion/completions && mcp-verdict completions bash > ~/.local/share/bash-completion/completions/mcp-verdict && . ~/.local/share/bash-completion/completions/mcp-verdict && complete -p mcp-verdict",
            ])
            .env("HOME", &home)
            .env("PATH", &path)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", text(&out));
        assert!(String::from_utf8_lossy(&out.stdout).contains("mcp-verdict"));
    }
}

// ---- 7. --all-tools is safe by default -----------------------------------------------------

#[test]
fn all_tools_skips_destructive_tools_unless_asked() {
    let rt = runtime();
    let server = fault_server(&rt);
    let url = server.url(None);
    let called = |out: &Output| -> Vec<String> {
        json_lines(out)
            .iter()
            .filter(|v| v["method"] == "tools/call")
            .map(|v| v["tool"].as_str().unwrap_or_default().to_owned())
            .collect()
    };

    // `pay` is declared destructive: listed as skipped, on stderr and in the output, not called.
    let out = run(&["probe", &url, "--all-tools", "--format", "jsonl"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(
        called(&out),
        [
            "echo",
            "lookup",
            "progress",
            "fail",
            "test_simple_text",
            "test_error_handling",
            "test_image_content",
            "test_audio_content",
            "test_embedded_resource",
            "test_multiple_content_types",
            "json_schema_2020_12_tool",
            "greet"
        ],
        "read-only tools and `fail` (destructiveHint: false) are called"
    );
    let lines = json_lines(&out);
    let skipped: Vec<&Value> = lines
        .iter()
        .filter(|v| v.get("skipped_tool").is_some())
        .collect();
    // `pay`, then the task and input-required fixtures (unannotated: destructive by default).
    assert_eq!(skipped[0]["skipped_tool"], "pay", "{}", text(&out));
    for s in &skipped[1..] {
        let name = s["skipped_tool"].as_str().unwrap_or_default();
        assert!(!called(&out).iter().any(|c| c == name), "{name} was called");
        assert!(
            name.starts_with("test_")
                || ["slow_compute", "failing_job", "protocol_error_job"].contains(&name)
                || ["confirm_delete", "multi_input"].contains(&name),
            "{name} skipped"
        );
    }
    assert!(
        skipped[0]["reason"]
            .as_str()
            .unwrap()
            .contains("destructiveHint: true"),
        "{}",
        skipped[0]
    );
    assert!(
        stderr(&out).contains("not calling \"pay\"")
            && stderr(&out).contains("--include-destructive"),
        "{}",
        text(&out)
    );

    let out = run(&["probe", &url, "--all-tools", "--format", "json"]);
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc[0]["skipped_tools"][0]["name"], "pay", "{doc}");

    // Human output: the skipped tool on stderr.
    let out = run(&["probe", &url, "--all-tools", "--color", "never"]);
    assert!(
        stderr(&out).contains("not calling \"pay\""),
        "{}",
        text(&out)
    );
    assert!(!String::from_utf8_lossy(&out.stdout).contains("tools/call pay"));

    // --include-destructive: every tool.
    let out = run(&[
        "probe",
        &url,
        "--all-tools",
        "--include-destructive",
        "--format",
        "jsonl",
    ]);
    assert!(called(&out).contains(&"pay".to_owned()), "{}", text(&out));
    assert!(
        json_lines(&out)
            .iter()
            .all(|v| v.get("skipped_tool").is_none())
    );
    // It goes with --all-tools only.
    let out = run(&["probe", &url, "--include-destructive"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
}
