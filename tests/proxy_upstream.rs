//! The proxy in front of an upstream that does not answer, with real loopback peers: a port
//! with nothing listening, and a listener that accepts and closes.
//! - the client gets a 502 with a JSON-RPC error naming the cause (its request's id when it has
//!   one), never a connection reset;
//! - the verdict is `CONNECTION_FAILED`, end `reset`, with the cause in `retry.reason`, judged
//!   through the one exchange path (the tap's finish without a head);
//! - the `mcp-verdict proxy` binary warns at start when the upstream does not answer, and its
//!   live lines (kept with `--log`, gone with `--quiet`) show outcome, end and advice.
//!
//! Every test is bounded in time and in requests.
#![cfg(feature = "cli")]

mod peak;
mod support;

use std::io::{Read, Write};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use mcp_verdict::proxy::{Config, Proxy};
use mcp_verdict::{End, Outcome, Verdict};
use serde_json::Value;
use tokio::net::TcpListener;

use support::{ProxyVerdicts, bounded, exchange_raw, post, read_request};

const CALL: &str =
    r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{}}}"#;
const NOTIFICATION: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

/// A loopback port with nothing listening (bound, then let go).
async fn dead_port() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    l.local_addr().unwrap().port()
}

/// A listener that accepts up to `n` connections, reads each request and closes without a
/// word. Stops by itself after `n` connections or when dropped.
async fn closing_upstream(n: usize) -> (String, tokio::task::JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let task = tokio::spawn(async move {
        for _ in 0..n {
            let Ok((mut stream, _)) = listener.accept().await else {
                return;
            };
            let _ = tokio::time::timeout(Duration::from_secs(5), read_request(&mut stream)).await;
            drop(stream);
        }
    });
    (format!("http://{addr}/mcp"), task)
}

async fn start(upstream: &str) -> (Proxy, Arc<ProxyVerdicts>) {
    let config = Config::new(upstream, "127.0.0.1:0".parse().unwrap());
    let seen = Arc::new(ProxyVerdicts::default());
    let proxy = Proxy::builder(config)
        .sink(seen.clone())
        .record()
        .start()
        .await
        .expect("the proxy starts whatever the upstream does");
    (proxy, seen)
}

/// Status, lower-cased head and parsed body of a raw HTTP/1.1 response.
fn parse(raw: &str) -> (u16, String, Value) {
    let (head, body) = raw
        .split_once("\r\n\r\n")
        .unwrap_or_else(|| panic!("{raw:?}"));
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status in {head:?}"));
    let body = serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {body:?}"));
    (status, head.to_ascii_lowercase(), body)
}

/// Waits (at most 5 s) until the proxy has judged `n` exchanges.
async fn verdicts(seen: &ProxyVerdicts, n: usize) -> Vec<Verdict> {
    let start = Instant::now();
    loop {
        let v = seen.sorted();
        if v.len() >= n || start.elapsed() > Duration::from_secs(5) {
            return v;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// One failed exchange as the client and the proxy see it: 502 with a JSON-RPC error naming
/// `cause`, and a `CONNECTION_FAILED` verdict with it.
fn assert_unanswered(raw: &str, verdict: &Verdict, id: Value, cause: &str) {
    let (status, head, body) = parse(raw);
    assert_eq!(status, 502, "{raw}");
    assert!(head.contains("content-type: application/json"), "{head}");
    assert_eq!(body["jsonrpc"], "2.0", "{body}");
    assert_eq!(body["id"], id, "{body}");
    assert_eq!(body["error"]["code"], -32000, "{body}");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("upstream") && message.contains(cause),
        "{message}"
    );
    let named = body["error"]["data"]["cause"].as_str().unwrap_or("");
    assert!(named.contains(cause), "{body}");
    assert_eq!(verdict.outcome, Outcome::ConnectionFailed, "{verdict:?}");
    assert_eq!(verdict.end, End::Reset);
    assert_eq!(verdict.status, None);
    assert!(
        verdict.retry.reason.contains(cause),
        "the cause is in the reason: {}",
        verdict.retry.reason
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nothing_listening_gives_502_with_the_cause_and_connection_failed() {
    bounded(async {
        let port = dead_port().await;
        let (proxy, seen) = start(&format!("http://127.0.0.1:{port}/mcp")).await;
        let cause = format!("connection refused: nothing listens on 127.0.0.1:{port}");
        let looked = proxy.check_upstream(Duration::from_secs(2)).await;
        assert_eq!(looked, Err(cause.clone()));

        let raw = exchange_raw(proxy.addr(), post("/mcp", CALL).as_bytes()).await;
        let v = verdicts(&seen, 1).await;
        assert_eq!(v.len(), 1, "{v:?}");
        assert_unanswered(&raw, &v[0], Value::from(7), &cause);
        assert_eq!(v[0].method.as_deref(), Some("tools/call"));

        // No id to answer to (a notification): the error's id is null.
        let raw = exchange_raw(proxy.addr(), post("/mcp", NOTIFICATION).as_bytes()).await;
        let v = verdicts(&seen, 2).await;
        assert_eq!(v.len(), 2, "{v:?}");
        assert_unanswered(&raw, &v[1], Value::Null, &cause);

        // The recording keeps them: a replay judges them CONNECTION_FAILED too.
        let mut har = Vec::new();
        proxy.recorder().unwrap().write(&mut har).unwrap();
        let entries = mcp_verdict::har::parse(&har).unwrap();
        let mut driver = mcp_verdict::Driver::new(mcp_verdict::Limits::default());
        for e in &entries {
            match mcp_verdict::replay::judge_entry(&mut driver, e, &mut std::iter::empty()) {
                mcp_verdict::replay::Item::Verdict(r) => {
                    assert_eq!(r.outcome, Outcome::ConnectionFailed)
                }
                other => panic!("{other:?}"),
            }
        }
        assert_eq!(entries.len(), 2);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upstream_that_accepts_and_closes_gives_502_with_the_cause() {
    bounded(async {
        let (upstream, task) = closing_upstream(4).await;
        let (proxy, seen) = start(&upstream).await;
        // It accepts connections: the look at start finds nothing wrong.
        assert_eq!(proxy.check_upstream(Duration::from_secs(2)).await, Ok(()));
        let port = upstream.split(':').nth(2).unwrap().trim_end_matches("/mcp");
        let cause = format!("127.0.0.1:{port} closed the connection before the response head");
        let raw = exchange_raw(proxy.addr(), post("/mcp", CALL).as_bytes()).await;
        let v = verdicts(&seen, 1).await;
        assert_eq!(v.len(), 1, "{v:?}");
        assert_unanswered(&raw, &v[0], Value::from(7), &cause);
        task.abort();
    })
    .await;
}

// --- the binary -------------------------------------------------------------------------------

fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "mcp-verdict-proxy-upstream-{}-{name}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `mcp-verdict proxy` with its standard error in a file.
struct Running {
    child: Child,
    stderr: PathBuf,
    addr: SocketAddr,
}

impl Running {
    fn start(upstream: &str, args: &[&str], dir: &Path) -> Running {
        let stderr = dir.join("stderr.txt");
        let child = Command::new(env!("CARGO_BIN_EXE_mcp-verdict"))
            .args(["proxy", "--upstream", upstream, "--listen", "127.0.0.1:0"])
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&stderr).unwrap())
            .spawn()
            .unwrap();
        let mut running = Running {
            child,
            stderr,
            addr: "127.0.0.1:1".parse().unwrap(),
        };
        let text = running.wait_for("point the client at ");
        let url = text
            .split("point the client at http://")
            .nth(1)
            .and_then(|r| r.split('/').next())
            .unwrap();
        running.addr = url.parse().unwrap();
        running
    }

    fn stderr(&self) -> String {
        std::fs::read_to_string(&self.stderr).unwrap_or_default()
    }

    /// Standard error once it contains `needle` (at most 10 s).
    fn wait_for(&mut self, needle: &str) -> String {
        let start = Instant::now();
        loop {
            let text = self.stderr();
            if text.contains(needle) {
                return text;
            }
            if let Some(status) = self.child.try_wait().unwrap() {
                panic!("the proxy exited ({status}) before saying {needle:?}:\n{text}");
            }
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "no {needle:?} within 10 s:\n{text}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// One request on a new connection; the whole response.
    fn send(&self, body: &str) -> String {
        let mut c = std::net::TcpStream::connect(self.addr).unwrap();
        c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        c.write_all(post("/mcp", body).as_bytes()).unwrap();
        let mut out = String::new();
        c.read_to_string(&mut out)
            .expect("a response, not a connection reset");
        out
    }

    /// SIGTERM; waits (at most 30 s); standard error.
    fn stop(mut self) -> String {
        peak::sigterm(&self.child);
        let start = Instant::now();
        while self.child.try_wait().unwrap().is_none() {
            assert!(start.elapsed() < Duration::from_secs(30), "no stop in 30 s");
            std::thread::sleep(Duration::from_millis(20));
        }
        self.stderr()
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn the_binary_warns_at_start_and_its_lines_show_outcome_end_and_advice() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let upstream = format!("http://127.0.0.1:{port}/mcp");
    let cause = format!("connection refused: nothing listens on 127.0.0.1:{port}");
    let dir = temp("lines");
    let log = dir.join("verdicts.jsonl");
    let mut proxy = Running::start(&upstream, &["--log", log.to_str().unwrap()], &dir);
    // The warning comes after the address line (scripts read that one first), within the
    // look's two seconds.
    let text = proxy.wait_for("WARNING: the upstream");
    let warning = text.lines().find(|l| l.contains("WARNING")).unwrap();
    assert!(warning.contains(&cause), "{warning}");
    assert!(text.lines().next().unwrap().contains("point the client at"));

    let raw = proxy.send(CALL);
    let (status, _, body) = parse(&raw);
    assert_eq!(status, 502);
    assert_eq!(body["id"], 7);
    // The live line, though `--log` is given and standard error is no terminal.
    let text = proxy.wait_for("CONNECTION_FAILED");
    let stderr = proxy.stop();
    let logged: Value = serde_json::from_str(
        std::fs::read_to_string(&log)
            .unwrap()
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(logged["outcome"], "CONNECTION_FAILED");
    assert_eq!(logged["end"], "reset");
    let advice = logged["retry"]["advice"].as_str().unwrap();
    let line = text
        .lines()
        .find(|l| l.starts_with("#0"))
        .unwrap_or_else(|| panic!("{text}"));
    let words: Vec<&str> = line.split_whitespace().collect();
    assert!(
        words.contains(&"CONNECTION_FAILED") && words.contains(&"reset") && words.contains(&advice),
        "{line}"
    );
    assert!(line.contains(&cause), "the cause on the line: {line}");
    assert!(
        !words.contains(&"open") && !words.contains(&"done"),
        "{line}"
    );
    // The call line (at stop): the final exchange's end and advice, not how it was re-sent.
    let call = stderr
        .lines()
        .find(|l| l.starts_with("call 0"))
        .unwrap_or_else(|| panic!("{stderr}"));
    assert!(
        call.contains("end reset") && call.contains(&format!("advice {advice}")),
        "{call}"
    );
    assert!(!call.contains(" retry "), "{call}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn quiet_keeps_the_log_and_drops_the_lines() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let upstream = format!("http://127.0.0.1:{port}/mcp");
    let dir = temp("quiet");
    let log = dir.join("verdicts.jsonl");
    let args = ["--log", log.to_str().unwrap(), "--quiet"];
    let mut proxy = Running::start(&upstream, &args, &dir);
    // A warning is no per-exchange line: it stays.
    proxy.wait_for("WARNING: the upstream");
    let (status, _, _) = parse(&proxy.send(CALL));
    assert_eq!(status, 502);
    let start = Instant::now();
    while !std::fs::read_to_string(&log)
        .unwrap_or_default()
        .contains("CONNECTION_FAILED")
    {
        assert!(start.elapsed() < Duration::from_secs(10), "nothing logged");
        std::thread::sleep(Duration::from_millis(20));
    }
    let stderr = proxy.stop();
    assert!(!stderr.contains("CONNECTION_FAILED"), "{stderr}");
    assert!(!stderr.lines().any(|l| l.starts_with("call ")), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_live_upstream_gets_no_warning() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let upstream = format!("http://{}/mcp", listener.local_addr().unwrap());
    let dir = temp("live");
    let proxy = Running::start(&upstream, &["--quiet"], &dir);
    // The look takes one connect; give it more than enough time to have said something.
    std::thread::sleep(Duration::from_millis(2500));
    let stderr = proxy.stop();
    assert!(!stderr.contains("WARNING"), "{stderr}");
    drop(listener);
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upstream_silent_past_the_head_timeout_gives_504_with_the_cause() {
    bounded(async {
        // Accepts, reads the request, and says nothing until dropped.
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let upstream = format!("http://{}/mcp", listener.local_addr().unwrap());
        let task = tokio::spawn(async move {
            let Ok((mut stream, _)) = listener.accept().await else {
                return;
            };
            let _ = read_request(&mut stream).await;
            tokio::time::sleep(Duration::from_secs(30)).await;
        });
        let mut config = Config::new(upstream, "127.0.0.1:0".parse().unwrap());
        config.upstream_head_timeout = Duration::from_millis(300);
        let seen = Arc::new(ProxyVerdicts::default());
        let proxy = Proxy::builder(config)
            .sink(seen.clone())
            .start()
            .await
            .unwrap();
        let raw = exchange_raw(proxy.addr(), post("/mcp", CALL).as_bytes()).await;
        let (status, _, body) = parse(&raw);
        assert_eq!(status, 504, "{raw}");
        assert_eq!(body["id"], 7);
        let message = body["error"]["message"].as_str().unwrap();
        assert!(message.contains("--upstream-head-timeout"), "{message}");
        let v = verdicts(&seen, 1).await;
        assert_eq!(v.len(), 1);
        assert_eq!(v[0].status, None);
        assert_eq!(v[0].end, End::Timeout);
        assert!(
            v[0].retry.reason.contains("--upstream-head-timeout"),
            "{}",
            v[0].retry.reason
        );
        task.abort();
    })
    .await;
}
