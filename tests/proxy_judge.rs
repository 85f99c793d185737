//! The proxy judges off the forwarding path (its judging thread), with real peers on 127.0.0.1:
//! - a sink that does not return holds up no client, and once it returns every exchange is
//!   judged, in forwarding order ([`Proxy::settle`]);
//! - past `max_backlog_bytes` the forwarding waits for the judging (memory stays bounded), and
//!   goes on once the judging catches up; the waits are counted;
//! - a sink that panics ends the judging of that exchange only.
//!
//! Every test is bounded in time and in requests.
#![cfg(feature = "cli")]

mod support;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use mcp_verdict::Outcome;
use mcp_verdict::faults::FaultServer;
use mcp_verdict::proxy::{Config, ExchangeRecord, Proxy, Sink};

use support::{ProxyVerdicts, bounded, post};

/// A sink that holds every exchange until the test opens its gate.
#[derive(Default)]
struct Gate {
    /// (open, an exchange has reached the gate)
    state: Mutex<(bool, bool)>,
    turn: Condvar,
}

impl Gate {
    fn open(&self) {
        self.state.lock().unwrap().0 = true;
        self.turn.notify_all();
    }

    /// Waits until the judging is held at the gate.
    fn reached(&self) {
        let mut state = self.state.lock().unwrap();
        while !state.1 {
            state = self.turn.wait(state).unwrap();
        }
    }
}

/// Opens the gate when dropped, so that a failing assertion does not leave the proxy's threads
/// waiting on it.
struct Opens(Arc<Gate>);

impl Drop for Opens {
    fn drop(&mut self) {
        self.0.open();
    }
}

impl Sink for Gate {
    fn exchange(&self, _: &ExchangeRecord<'_>) {
        let mut state = self.state.lock().unwrap();
        state.1 = true;
        self.turn.notify_all();
        while !state.0 {
            state = self.turn.wait(state).unwrap();
        }
    }
}

/// A sink that panics on the first exchange it sees.
#[derive(Default)]
struct PanicsOnce(Mutex<bool>);

impl Sink for PanicsOnce {
    fn exchange(&self, _: &ExchangeRecord<'_>) {
        let mut seen = self.0.lock().unwrap();
        if !std::mem::replace(&mut *seen, true) {
            drop(seen);
            panic!("a sink that panics (test)");
        }
    }
}

/// One `tools/call` through the proxy at `addr` on a plain blocking socket; the response text,
/// or `None` when none came within `wait`. The request says `Connection: close`: the proxy
/// closes once it let go of the exchange, so `to_close` (reading on to the close) makes sure
/// the exchange is with the judging before this returns.
fn call(addr: SocketAddr, path: &str, id: u32, wait: Duration, to_close: bool) -> Option<String> {
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"echo","arguments":{{"text":"hi"}}}}}}"#
    );
    let mut s = TcpStream::connect(addr).ok()?;
    s.set_read_timeout(Some(wait)).ok()?;
    s.write_all(post(path, &body).as_bytes()).ok()?;
    // Read up to the body's end (not to the close: the proxy may close later).
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let n = s.read(&mut buf).ok()?;
        out.extend_from_slice(&buf[..n]);
        let text = String::from_utf8_lossy(&out).into_owned();
        if let Some((head, body)) = text.split_once("\r\n\r\n") {
            let length = head.lines().find_map(|l| {
                let (name, value) = l.split_once(':')?;
                name.eq_ignore_ascii_case("content-length")
                    .then(|| value.trim().parse::<usize>().ok())?
            });
            let whole = match length {
                Some(n) => body.len() >= n,
                None => body.ends_with("0\r\n\r\n"),
            };
            if (whole && !to_close) || n == 0 {
                return whole.then_some(text);
            }
        } else if n == 0 {
            return None;
        }
    }
}

async fn start(upstream: &str, backlog: usize, sinks: Vec<Arc<dyn Sink>>) -> Proxy {
    let mut config = Config::new(upstream, "127.0.0.1:0".parse().unwrap());
    config.max_backlog_bytes = backlog;
    let mut builder = Proxy::builder(config);
    for sink in sinks {
        builder = builder.sink(sink);
    }
    builder.start().await.expect("the proxy starts")
}

/// A proxy in front of the `ok` scenario with a [`Gate`] before a [`ProxyVerdicts`]; the
/// gate opens when the [`Opens`] is dropped.
async fn gated(backlog: usize) -> (FaultServer, Arc<Gate>, Opens, Arc<ProxyVerdicts>, Proxy) {
    let server = FaultServer::start("127.0.0.1:0").await.unwrap();
    let gate = Arc::new(Gate::default());
    let opens = Opens(gate.clone());
    let seen = Arc::new(ProxyVerdicts::default());
    let sinks: Vec<Arc<dyn Sink>> = vec![gate.clone(), seen.clone()];
    let proxy = start(&server.url(Some("ok")), backlog, sinks).await;
    (server, gate, opens, seen, proxy)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sink_that_does_not_return_holds_up_no_client() {
    bounded(async {
        let (_server, gate, _opens, seen, proxy) = gated(64 << 20).await;
        let (addr, path) = (proxy.addr(), url_path(&proxy.url()));
        let answers = one_by_one(addr, path, 5).await;
        // Every client had its answer while the judging was held at the gate.
        for a in &answers {
            let a = a.as_deref().unwrap_or("no answer");
            assert!(a.starts_with("HTTP/1.1 200"), "{a}");
        }
        assert!(seen.sorted().is_empty(), "judged past a closed gate");
        gate.open();
        let proxy = settled(proxy).await;
        let verdicts = seen.sorted();
        let ids: Vec<_> = verdicts
            .iter()
            .map(|v| v.id.as_ref().map(ToString::to_string))
            .collect();
        assert_eq!(
            ids,
            (1..=5).map(|i| Some(i.to_string())).collect::<Vec<_>>()
        );
        assert!(verdicts.iter().all(|v| v.outcome == Outcome::ToolSuccess));
        assert_eq!(proxy.backlog_waits(), 0);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn past_the_backlog_limit_the_forwarding_waits_for_the_judging() {
    bounded(async {
        // One byte: every note is past the limit, so each waits until the judge took it.
        let (_server, gate, _opens, seen, proxy) = gated(1).await;
        let (addr, path) = (proxy.addr(), url_path(&proxy.url()));
        // The first exchange reaches the gate; the second's notes then wait for the judge.
        let first = {
            let path = path.clone();
            tokio::task::spawn_blocking(move || {
                call(addr, &path, 1, Duration::from_secs(20), false)
            })
            .await
            .unwrap()
        };
        assert!(first.is_some_and(|a| a.starts_with("HTTP/1.1 200")));
        // The first exchange's client has its answer; once its judging is held at the gate
        // (and the backlog full behind it), a second request waits.
        let held = gate.clone();
        tokio::task::spawn_blocking(move || held.reached())
            .await
            .unwrap();
        let second = {
            let path = path.clone();
            tokio::task::spawn_blocking(move || {
                call(addr, &path, 2, Duration::from_millis(700), false)
            })
        };
        assert_eq!(second.await.unwrap(), None, "answered past a full backlog");
        assert!(proxy.backlog_waits() >= 1);
        gate.open();
        let third = tokio::task::spawn_blocking(move || {
            call(addr, &path, 3, Duration::from_secs(20), true)
        })
        .await
        .unwrap();
        assert!(third.is_some_and(|a| a.starts_with("HTTP/1.1 200")));
        // The second client gave up; its exchange goes on upstream and is judged all the
        // same, once the proxy has let go of it.
        // (Which of the second and third came first to the session depends on which was read
        // first once the forwarding went on: the verdicts are told apart by their ids.)
        let mut by_id = loop {
            let verdicts = seen.sorted();
            if verdicts.len() >= 3 {
                break verdicts
                    .iter()
                    .map(|v| (v.id.as_ref().map(ToString::to_string), v.outcome))
                    .collect::<Vec<_>>();
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        };
        by_id.sort_by(|a, b| a.0.cmp(&b.0));
        let ids: Vec<_> = by_id.iter().map(|(id, _)| id.as_deref()).collect();
        assert_eq!(ids, [Some("1"), Some("2"), Some("3")], "{by_id:?}");
        assert_eq!(by_id[0].1, Outcome::ToolSuccess, "{by_id:?}");
        assert_eq!(by_id[2].1, Outcome::ToolSuccess, "{by_id:?}");
        drop(proxy);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sink_that_panics_ends_only_that_exchanges_judging() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let text = info.payload().downcast_ref::<&str>().copied();
        if text != Some("a sink that panics (test)") {
            default(info);
        }
    }));
    bounded(async {
        let server = FaultServer::start("127.0.0.1:0").await.unwrap();
        let upstream = server.url(Some("ok"));
        let seen = Arc::new(ProxyVerdicts::default());
        let proxy = start(
            &upstream,
            64 << 20,
            vec![Arc::new(PanicsOnce::default()), seen.clone()],
        )
        .await;
        let (addr, path) = (proxy.addr(), url_path(&proxy.url()));
        let answers = one_by_one(addr, path, 3).await;
        assert!(
            answers
                .iter()
                .all(|a| a.as_deref().is_some_and(|a| a.starts_with("HTTP/1.1 200")))
        );
        let proxy = settled(proxy).await;
        // The first exchange's sinks stopped at the panic; the others were judged.
        let ids: Vec<_> = seen
            .sorted()
            .iter()
            .map(|v| v.id.as_ref().map(ToString::to_string))
            .collect();
        assert_eq!(ids, vec![Some("2".into()), Some("3".into())]);
        drop(proxy);
    })
    .await;
}

/// Waits (off the runtime's threads) until the proxy's judging has caught up.
async fn settled(proxy: Proxy) -> Proxy {
    tokio::task::spawn_blocking(move || {
        proxy.settle();
        proxy
    })
    .await
    .unwrap()
}

/// Requests with ids `1..=n`, one after the other, each closing its connection.
async fn one_by_one(addr: SocketAddr, path: String, n: u32) -> Vec<Option<String>> {
    tokio::task::spawn_blocking(move || {
        (1..=n)
            .map(|id| call(addr, &path, id, Duration::from_secs(20), true))
            .collect()
    })
    .await
    .unwrap()
}

fn url_path(url: &str) -> String {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    rest.find('/').map_or("/".into(), |i| rest[i..].to_owned())
}

/// Linux: the judging thread runs as `SCHED_BATCH` (3), so that waking for a batch never pushes
/// the forwarding off its core (`/proc/self/task/<tid>/stat`, field 41).
#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_judging_thread_runs_as_sched_batch() {
    bounded(async {
        let server = FaultServer::start("127.0.0.1:0").await.unwrap();
        let proxy = start(&server.url(Some("ok")), 1 << 20, Vec::new()).await;
        let policies = || {
            let mut found = Vec::new();
            for task in std::fs::read_dir("/proc/self/task").unwrap().flatten() {
                let comm = std::fs::read_to_string(task.path().join("comm")).unwrap_or_default();
                if comm.trim() != "mcp-verdict-jud" {
                    continue;
                }
                let stat = std::fs::read_to_string(task.path().join("stat")).unwrap_or_default();
                // Fields after the command name, which ends at the last ')': field 3 first.
                let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
                found.push(rest.split_whitespace().nth(41 - 3).map(str::to_owned));
            }
            found
        };
        // The thread sets its policy as it starts.
        let mut seen = policies();
        for _ in 0..100 {
            if seen.iter().any(|p| p.as_deref() == Some("3")) {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
            seen = policies();
        }
        assert!(
            seen.iter().any(|p| p.as_deref() == Some("3")),
            "judging threads' policies: {seen:?}"
        );
        drop(proxy);
    })
    .await;
}
