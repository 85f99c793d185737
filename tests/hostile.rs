#![cfg(feature = "tools")]
//! Hostile peers (issue 13): endless bodies, redirects, smuggling, slowloris, floods, huge
//! durations and secrets in URLs. Every server here is on 127.0.0.1, stops by itself after a
//! bounded time, and every child process runs under a deadline. Memory is the child's peak RSS
//! (`VmHWM` in `/proc/<pid>/status`, sampled until it exits), never a guess.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener as StdListener, TcpStream as StdStream};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

mod peak;

use mcp_verdict::adapters::{Client, ClientBuilder};
use mcp_verdict::faults::{FaultServer, ServeLimits};
use mcp_verdict::{Advice, Outcome};
use peak::{Run, measure, vm_hwm_kib};
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const BIN: &str = env!("CARGO_BIN_EXE_mcp-verdict");

/// The binary under test; `MCP_VERDICT_BIN` points these tests at another build (to show that
/// they fail on the code before the fix).
fn bin() -> String {
    std::env::var("MCP_VERDICT_BIN").unwrap_or_else(|_| BIN.to_owned())
}
/// A child that takes longer than this is killed and the test fails.
const CHILD_DEADLINE: Duration = Duration::from_secs(60);

/// Runs `mcp-verdict args…`, sampling its peak RSS until it exits.
fn run(args: &[&str]) -> Run {
    let child = Command::new(bin())
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary starts");
    measure(child, CHILD_DEADLINE, &format!("mcp-verdict {args:?}"))
}

/// The verdicts of `--format json` output for one target.
fn verdicts(stdout: &str) -> Vec<Value> {
    let doc: Value = serde_json::from_str(stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    doc[0]["verdicts"].as_array().cloned().unwrap_or_default()
}

/// How a scripted hostile server answers each request.
#[derive(Clone, Copy)]
enum Hostile {
    /// `text/event-stream`, progress notifications forever.
    EndlessProgress,
    /// `text/event-stream`, SSE comments forever.
    EndlessComments,
    /// `application/json`, chunked, never ending.
    EndlessJson,
    /// A redirect with this status to this port's `/mcp`.
    Redirect(u16, u16),
    /// A JSON-RPC result for id 1.
    Answer,
}

/// A raw HTTP/1.1 server on 127.0.0.1 that answers every request as `kind`, on a thread of its
/// own; at most `connections` connections, for at most 30 s. Counts requests and remembers
/// whether any carried `X-Api-Key`.
struct Scripted {
    addr: SocketAddr,
    requests: Arc<AtomicUsize>,
    saw_secret: Arc<AtomicBool>,
}

fn scripted(kind: Hostile, connections: usize) -> Scripted {
    let listener = StdListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let addr = listener.local_addr().unwrap();
    let requests = Arc::new(AtomicUsize::new(0));
    let saw_secret = Arc::new(AtomicBool::new(false));
    let (r, s) = (requests.clone(), saw_secret.clone());
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            let serve = async {
                for _ in 0..connections {
                    let Ok((stream, _)) = listener.accept().await else {
                        return;
                    };
                    tokio::spawn(answer(stream, kind, r.clone(), s.clone()));
                }
                std::future::pending::<()>().await;
            };
            let _ = tokio::time::timeout(Duration::from_secs(30), serve).await;
        });
    });
    Scripted {
        addr,
        requests,
        saw_secret,
    }
}

async fn answer(
    mut stream: tokio::net::TcpStream,
    kind: Hostile,
    requests: Arc<AtomicUsize>,
    saw_secret: Arc<AtomicBool>,
) {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        // One request: the head, then Content-Length bytes.
        let head_end = loop {
            if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                break i + 4;
            }
            match stream.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        };
        let head = String::from_utf8_lossy(&buf[..head_end]).to_ascii_lowercase();
        let len: usize = head
            .lines()
            .find_map(|l| l.strip_prefix("content-length:"))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0);
        while buf.len() < head_end + len {
            match stream.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        }
        buf.drain(..head_end + len);
        requests.fetch_add(1, Ordering::SeqCst);
        if head.contains("x-api-key:") {
            saw_secret.store(true, Ordering::SeqCst);
        }
        let endless = |ct: &str| {
            format!("HTTP/1.1 200 OK\r\nContent-Type: {ct}\r\nTransfer-Encoding: chunked\r\n\r\n")
        };
        let piece: Vec<u8> = match kind {
            Hostile::EndlessProgress => {
                let event = "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"x\",\"progress\":1}}\n\n";
                event.repeat(64 * 1024 / event.len()).into_bytes()
            }
            Hostile::EndlessComments => b": keep-alive\n".repeat(5000),
            Hostile::EndlessJson => b"{\"a\":[1,2,3]},".repeat(4000),
            Hostile::Redirect(status, port) => {
                let reply = format!(
                    "HTTP/1.1 {status} Moved\r\nLocation: http://localhost:{port}/mcp\r\nContent-Length: 0\r\n\r\n"
                );
                if stream.write_all(reply.as_bytes()).await.is_err() {
                    return;
                }
                continue;
            }
            Hostile::Answer => {
                let body = r#"{"jsonrpc":"2.0","id":1,"result":{}}"#;
                let reply = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
                    body.len()
                );
                if stream.write_all(reply.as_bytes()).await.is_err() {
                    return;
                }
                continue;
            }
        };
        let ct = match kind {
            Hostile::EndlessJson => "application/json",
            _ => "text/event-stream",
        };
        if stream.write_all(endless(ct).as_bytes()).await.is_err() {
            return;
        }
        if matches!(kind, Hostile::EndlessJson) && stream.write_all(b"1\r\n[\r\n").await.is_err() {
            return;
        }
        let mut framed = format!("{:x}\r\n", piece.len()).into_bytes();
        framed.extend_from_slice(&piece);
        framed.extend_from_slice(b"\r\n");
        // Until the client goes away (or the server's 30 s are up).
        while stream.write_all(&framed).await.is_ok() {}
        return;
    }
}

fn url(addr: SocketAddr) -> String {
    format!("http://{addr}/mcp")
}

/// `probe` of a scripted server under 2026-07-28 (its first request is `server/discover`), with
/// JSON output.
fn probe_json(addr: SocketAddr, extra: &[&str]) -> Run {
    let target = url(addr);
    let mut args = vec![
        "probe",
        &target,
        "--protocol",
        "2026-07-28",
        "--format",
        "json",
    ];
    args.extend_from_slice(extra);
    run(&args)
}

/// Peak RSS allowed for a probe whatever the server sends: the debug binary and its runtime
/// (10.4 MiB measured here) plus what the limits allow it to keep, with room to spare. Before
/// the fix an endless stream took 1.77 GB in 10 s (release); the debug build of that code reads
/// about 10 MB/s here, so 5 s of it passes this bound.
const PROBE_RSS_KIB: u64 = 24 * 1024;

#[test]
fn probe_memory_stays_bounded_on_endless_streams() {
    for (kind, name) in [
        (Hostile::EndlessProgress, "progress"),
        (Hostile::EndlessComments, "comments"),
    ] {
        let server = scripted(kind, 4);
        let r = probe_json(server.addr, &["--timeout", "5"]);
        let v = verdicts(&r.stdout);
        assert_eq!(v[0]["outcome"], "TIMED_OUT", "{name}: {}", r.stdout);
        assert_eq!(r.code, Some(1), "{name}");
        assert!(
            r.peak_kib < PROBE_RSS_KIB,
            "{name}: peak RSS {} KiB",
            r.peak_kib
        );
        eprintln!("endless {name}: {:?}, peak {} KiB", r.took, r.peak_kib);
    }
}

#[test]
fn probe_recording_is_capped_by_max_body_bytes() {
    let server = scripted(Hostile::EndlessProgress, 4);
    let dir = std::env::temp_dir().join(format!("mcp-verdict-hostile-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let har = dir.join("endless.har");
    let r = probe_json(
        server.addr,
        &[
            "--timeout",
            "3",
            "--max-body-bytes",
            "1048576",
            "--record",
            har.to_str().unwrap(),
        ],
    );
    assert_eq!(r.code, Some(1));
    assert!(r.peak_kib < PROBE_RSS_KIB, "peak RSS {} KiB", r.peak_kib);
    let size = std::fs::metadata(&har).unwrap().len();
    assert!(size < 2 << 20, "recording of {size} bytes");
    // The recording replays to the same outcome.
    let replayed = run(&["replay", har.to_str().unwrap(), "--format", "json"]);
    assert_eq!(verdicts(&replayed.stdout)[0]["outcome"], "TIMED_OUT");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn endless_json_settles_at_the_body_limit_at_once() {
    let server = scripted(Hostile::EndlessJson, 4);
    let r = probe_json(
        server.addr,
        &["--timeout", "30", "--max-body-bytes", "1048576"],
    );
    let v = verdicts(&r.stdout);
    assert_eq!(v[0]["outcome"], "LIMIT_EXCEEDED", "{}", r.stdout);
    assert_eq!(v[0]["limit"], "max_body_bytes");
    assert_eq!(r.code, Some(1));
    assert!(r.took < Duration::from_secs(15), "took {:?}", r.took);
    assert!(r.peak_kib < PROBE_RSS_KIB, "peak RSS {} KiB", r.peak_kib);
}

#[test]
fn a_redirect_is_an_answer_and_secrets_stay_home() {
    for status in [301u16, 302, 307, 308] {
        let other = scripted(Hostile::Answer, 4);
        let first = scripted(Hostile::Redirect(status, other.addr.port()), 4);
        let r = probe_json(
            first.addr,
            &["--header", "X-Api-Key: SECRET456", "--timeout", "5"],
        );
        let v = verdicts(&r.stdout);
        assert_eq!(v[0]["outcome"], "HTTP_ERROR", "{status}: {}", r.stdout);
        assert_eq!(v[0]["status"], status);
        let reason = v[0]["retry"]["reason"].as_str().unwrap();
        let location = format!("Location: http://localhost:{}/mcp", other.addr.port());
        assert!(reason.contains(&location), "{reason}");
        assert_eq!(v[0]["retry"]["advice"], "fix_request");
        assert_eq!(r.code, Some(1));
        assert_eq!(
            other.requests.load(Ordering::SeqCst),
            0,
            "{status} followed"
        );
        assert!(!r.stdout.contains("SECRET456"));
    }
}

/// A `ping` through a redirect of `status` to another origin (`localhost` vs `127.0.0.1`),
/// with the client `configure` gives: the verdict, and how many requests the target got.
async fn ping_through_redirect(
    status: u16,
    configure: impl FnOnce(ClientBuilder) -> ClientBuilder,
) -> (mcp_verdict::Verdict, usize, bool) {
    let other = scripted(Hostile::Answer, 4);
    let first = scripted(Hostile::Redirect(status, other.addr.port()), 4);
    let client = configure(Client::builder(url(first.addr))).build().unwrap();
    let v = client
        .request("ping", serde_json::json!({}))
        .await
        .verdict()
        .await;
    let reached = other.requests.load(Ordering::SeqCst);
    (v, reached, other.saw_secret.load(Ordering::SeqCst))
}

#[tokio::test]
async fn opted_in_redirects_never_carry_secrets_to_another_origin() {
    // With a secret header: not followed, the 307 is the answer.
    let (v, reached, _) = ping_through_redirect(307, |b| {
        b.follow_redirects(5)
            .secret_header("X-Api-Key", "SECRET456")
    })
    .await;
    assert_eq!((v.outcome, v.status), (Outcome::HttpError, Some(307)));
    assert_eq!(v.retry.advice, Advice::FixRequest);
    assert_eq!(reached, 0);

    // Without secrets, opted in: followed (307 keeps the POST), and the answer judged.
    let (v, reached, saw_secret) = ping_through_redirect(307, |b| b.follow_redirects(5)).await;
    assert_eq!(v.outcome, Outcome::Success, "{v:?}");
    assert_eq!((reached, saw_secret), (1, false));

    // Opted in, a 302 (which would turn the POST into a GET): not followed.
    let (v, reached, _) = ping_through_redirect(302, |b| b.follow_redirects(5)).await;
    assert_eq!((v.outcome, reached), (Outcome::HttpError, 0));

    // By default: not followed.
    let (v, reached, _) = ping_through_redirect(308, |b| b).await;
    assert_eq!((v.outcome, reached), (Outcome::HttpError, 0));
}

/// Sends `request` raw and reads what comes back until the server closes (at most 5 s).
fn exchange_raw(addr: SocketAddr, request: &[u8]) -> String {
    let mut s = StdStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    s.write_all(request).unwrap();
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    String::from_utf8_lossy(&out).into_owned()
}

fn statuses(replies: &str) -> Vec<&str> {
    replies
        .match_indices("HTTP/1.1 ")
        .map(|(i, _)| &replies[i + 9..i + 12])
        .collect()
}

/// Runs the fault server on a runtime of its own for the blocking raw clients below.
fn fault_server(limits: ServeLimits) -> (tokio::runtime::Runtime, FaultServer) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let server = rt
        .block_on(FaultServer::start_with("127.0.0.1:0", limits))
        .unwrap();
    (rt, server)
}

#[test]
fn fault_server_refuses_ambiguous_framing_and_closes() {
    let (_rt, server) = fault_server(ServeLimits::default());
    let addr = server.addr();
    let smuggled = format!("DELETE /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Length: 0\r\n\r\n");
    for framing in [
        "Content-Length: abc\r\n".to_owned(),
        format!("Content-Length: -{}\r\n", smuggled.len()),
        format!(
            "Content-Length: 0\r\nContent-Length: {}\r\n",
            smuggled.len()
        ),
        format!("Content-Length: {0}, {0}\r\n", smuggled.len()),
        format!(
            "Transfer-Encoding: chunked\r\nContent-Length: {}\r\n",
            smuggled.len()
        ),
        "Transfer-Encoding: chunked\r\n".to_owned(),
    ] {
        let request = format!("POST /mcp HTTP/1.1\r\nHost: {addr}\r\n{framing}\r\n{smuggled}");
        let replies = exchange_raw(addr, request.as_bytes());
        assert_eq!(statuses(&replies), ["400"], "{framing:?}: {replies}");
        assert!(replies.contains("Connection: close"));
    }
}

#[test]
fn fault_server_host_check_is_strict() {
    let (_rt, server) = fault_server(ServeLimits::default());
    let addr = server.addr();
    let port = addr.port();
    let ping = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    let post = |host_lines: &str| {
        let request = format!(
            "POST /mcp HTTP/1.1\r\n{host_lines}Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{ping}",
            ping.len()
        );
        statuses(&exchange_raw(addr, request.as_bytes()))
            .first()
            .map(|s| s.to_string())
            .unwrap_or_default()
    };
    assert_eq!(post(&format!("Host: 127.0.0.1:{port}\r\n")), "200");
    assert_eq!(post(&format!("Host: localhost:{port}\r\n")), "200");
    assert_eq!(post(""), "400", "missing Host");
    assert_eq!(
        post(&format!("Host: 127.0.0.1:{port}\r\nHost: evil.example\r\n")),
        "400",
        "duplicate Host, loopback first"
    );
    assert_eq!(post("Host: [::1]evil.example\r\n"), "403");
    assert_eq!(
        post(&format!("Host: [::1]:{port}\r\n")),
        "403",
        "not the address listened on"
    );
    assert_eq!(post("Host: 127.0.0.1:1\r\n"), "403", "another port");
    assert_eq!(post(&format!("Host: evil.example:{port}\r\n")), "403");
    assert_eq!(
        post(&format!(
            "Host: 127.0.0.1:{port}\r\nOrigin: http://evil.example\r\n"
        )),
        "403"
    );
}

fn quick_limits() -> ServeLimits {
    ServeLimits {
        max_connections: 4,
        idle_timeout: Duration::from_millis(400),
        head_timeout: Duration::from_millis(400),
        body_timeout: Duration::from_millis(400),
        ..ServeLimits::default()
    }
}

#[test]
fn fault_server_times_out_slowloris_and_idle_connections() {
    let (_rt, server) = fault_server(quick_limits());
    let addr = server.addr();
    let started = Instant::now();
    // A head that never ends: 408, closed.
    let mut slow = StdStream::connect(addr).unwrap();
    slow.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    slow.write_all(b"POST /mcp HTTP/1.1\r\nHost: 12").unwrap();
    let mut out = String::new();
    let _ = slow.read_to_string(&mut out);
    assert_eq!(statuses(&out), ["408"], "{out}");
    // A body that never ends: 408, closed.
    let reply = {
        let mut s = StdStream::connect(addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        s.write_all(
            format!("POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Length: 100\r\n\r\n{{")
                .as_bytes(),
        )
        .unwrap();
        let mut out = String::new();
        let _ = s.read_to_string(&mut out);
        out
    };
    assert_eq!(statuses(&reply), ["408"], "{reply}");
    // Silent: closed without a word.
    let mut idle = StdStream::connect(addr).unwrap();
    idle.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut out = Vec::new();
    assert_eq!(idle.read_to_end(&mut out).unwrap(), 0);
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[test]
fn fault_server_caps_connections() {
    let limits = ServeLimits {
        idle_timeout: Duration::from_secs(20),
        ..quick_limits()
    };
    let (_rt, server) = fault_server(limits);
    let addr = server.addr();
    let held: Vec<StdStream> = (0..4).map(|_| StdStream::connect(addr).unwrap()).collect();
    std::thread::sleep(Duration::from_millis(200));
    let reply = exchange_raw(addr, b"");
    assert_eq!(statuses(&reply), ["503"], "{reply}");
    drop(held);
    std::thread::sleep(Duration::from_millis(200));
    let ping = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{ping}",
        ping.len()
    );
    assert_eq!(statuses(&exchange_raw(addr, request.as_bytes())), ["200"]);
}

/// 40 clients each holding a body of 4 MiB − 1 against `serve-faults` with a 8 MiB budget for
/// bodies in flight: most are refused (503) at once, and the server's peak RSS stays near the
/// budget. Before the fix 250 such clients took it to 1,045 MB.
#[test]
fn serve_faults_memory_is_bounded_by_the_body_budget() {
    let port = StdListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let addr: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
    let mut child = Command::new(bin())
        .args([
            "serve-faults",
            "--listen",
            &addr.to_string(),
            "--max-bodies-in-flight",
            &(8 << 20).to_string(),
            "--body-timeout",
            "3s",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    let up = (0..100).any(|_| {
        std::thread::sleep(Duration::from_millis(50));
        StdStream::connect(addr).is_ok()
    });
    assert!(up, "serve-faults did not start");
    let len = (4 << 20) - 1;
    let clients: Vec<_> = (0..40)
        .map(|_| {
            std::thread::spawn(move || {
                let Ok(mut s) = StdStream::connect(addr) else {
                    return None;
                };
                let head =
                    format!("POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Length: {len}\r\n\r\n");
                s.write_all(head.as_bytes()).ok()?;
                let body = vec![b' '; len - 1];
                let _ = s.write_all(&body);
                s.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
                let mut out = Vec::new();
                let _ = s.read_to_end(&mut out);
                Some(String::from_utf8_lossy(&out).into_owned())
            })
        })
        .collect();
    let mut peak = 0;
    let replies: Vec<String> = clients
        .into_iter()
        .map(|c| {
            if let Some(kib) = vm_hwm_kib(pid) {
                peak = peak.max(kib);
            }
            c.join().unwrap().unwrap_or_default()
        })
        .collect();
    if let Some(kib) = vm_hwm_kib(pid) {
        peak = peak.max(kib);
    }
    let _ = child.kill();
    let _ = child.wait();
    let refused = replies.iter().filter(|r| r.contains(" 503 ")).count();
    let timed_out = replies.iter().filter(|r| r.contains(" 408 ")).count();
    eprintln!(
        "40 clients: {refused} refused (503), {timed_out} timed out (408), peak RSS {peak} KiB"
    );
    assert!(refused >= 30, "{refused} refused");
    assert!(peak < 64 * 1024, "peak RSS {peak} KiB");
}

#[test]
fn huge_durations_are_refused_instead_of_panicking() {
    let (_rt, server) = fault_server(ServeLimits::default());
    let target = server.url(None);
    // The flag grammar refuses durations past a year before any work: exit 2, the limit named.
    for flag in ["--idle-timeout", "--timeout"] {
        let r = run(&["probe", &target, flag, "1.8e19", "--format", "json"]);
        assert_eq!(r.code, Some(2), "{flag}: {}", r.stderr);
        assert!(r.stderr.contains("maximum"), "{flag}: {}", r.stderr);
        assert!(!r.stderr.contains("panicked"), "{}", r.stderr);
    }
    // The longest accepted deadline still runs: deadline arithmetic saturates.
    let r = run(&[
        "probe",
        &target,
        "--idle-timeout",
        "8760h",
        "--format",
        "json",
    ]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let soak_with_timeout = |timeout: &str| {
        run(&[
            "soak",
            &target,
            "--tool",
            "echo",
            "--requests",
            "20",
            "--concurrency",
            "2",
            "--timeout",
            timeout,
        ])
    };
    let r = soak_with_timeout("18000000000000000000s");
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    assert!(!r.stderr.contains("panicked"), "{}", r.stderr);
    let r = soak_with_timeout("8760h");
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(r.stdout.contains("20 calls"), "{}", r.stdout);
    let r = run(&["soak", &target, "--tool", "echo", "--rate", "1e-19"]);
    assert_eq!(r.code, Some(2), "{}", r.stdout);
    assert!(r.stderr.contains("--rate"), "{}", r.stderr);
    assert!(!r.stderr.contains("panicked"));
}

#[test]
fn url_secrets_are_redacted_everywhere() {
    let (_rt, server) = fault_server(ServeLimits::default());
    let addr = server.addr();
    let target = format!("http://user:SECRETPW@{addr}/mcp?token=TOKEN123&page=2");
    let dir = std::env::temp_dir().join(format!("mcp-verdict-url-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let har = dir.join("probe.har");
    let html = dir.join("probe.html");
    for format in ["human", "json", "jsonl", "junit"] {
        let r = run(&[
            "probe",
            &target,
            "--format",
            format,
            "--record",
            har.to_str().unwrap(),
            "--html",
            html.to_str().unwrap(),
        ]);
        assert_eq!(r.code, Some(0), "{}", r.stderr);
        let recorded = std::fs::read_to_string(&har).unwrap();
        let page = std::fs::read_to_string(&html).unwrap();
        for text in [&r.stdout, &r.stderr, &recorded, &page] {
            assert!(
                !text.contains("SECRETPW") && !text.contains("TOKEN123"),
                "{text}"
            );
        }
        assert!(recorded.contains("token=<redacted>&page=2"));
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_invalid_header_value_is_unusable_input_and_nothing_is_sent() {
    let listener = StdListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let target = url(listener.local_addr().unwrap());
    for header in [
        "X-Api-Key: SECRET\u{1}789",
        "X-Api-Key: SECRET\r\n789",
        "Bad Name: v",
    ] {
        let r = run(&["probe", &target, "--header", header]);
        assert_eq!(r.code, Some(2), "{header:?}: {}", r.stdout);
        assert!(r.stderr.contains("--header"), "{}", r.stderr);
        assert!(
            !r.stderr.contains("789") && r.stdout.is_empty(),
            "{}",
            r.stderr
        );
    }
    assert!(listener.accept().is_err(), "a connection was made");
}

#[test]
fn replay_keeps_a_count_of_skipped_entries_not_the_list() {
    let dir = std::env::temp_dir().join(format!("mcp-verdict-skip-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let har = dir.join("static.har");
    let entry = r#"{"request":{"method":"GET","url":"http://x/style.css?key=K1"},"response":{"status":200}}"#;
    let list = vec![entry; 5000].join(",");
    std::fs::write(&har, format!(r#"{{"log":{{"entries":[{list}]}}}}"#)).unwrap();
    let r = run(&["replay", har.to_str().unwrap(), "--format", "json"]);
    // Nothing to judge is an unusable file (exit 2), and the JSON says why.
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    assert!(r.stderr.contains("no MCP exchange"), "{}", r.stderr);
    let doc: Value = serde_json::from_str(&r.stdout).unwrap();
    assert!(
        doc[0]["error"]
            .as_str()
            .unwrap()
            .contains("no MCP exchange")
    );
    assert_eq!(doc[0]["skipped_total"], 5000);
    assert_eq!(doc[0]["skipped"].as_array().unwrap().len(), 100);
    assert!(
        !r.stdout.contains("K1"),
        "a secret query value in a skipped reason"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
