//! `mcp-verdict proxy` between real clients and real servers on 127.0.0.1: every fault scenario
//! through the proxy gives the verdict `probe` gives directly, the proxy's own verdicts equal the
//! replay of its recording, and the bodies are the same bytes on both sides. Also: the rmcp
//! client (this crate's transport and plain rmcp) against the rmcp server, a client that cancels,
//! refusals, and many streams at once.
//!
//! Every test is bounded in time and in requests.
#![cfg(feature = "cli")]

mod support;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use mcp_verdict::faults::{FaultServer, demo, scenarios};
use mcp_verdict::har::{self, Entry};
use mcp_verdict::proxy::{Config, Proxy};
use mcp_verdict::replay::{Item, judge_entry};
use mcp_verdict::{Driver, End, Limits, Outcome, Rule, Verdict};

use support::{ProxyVerdicts as Verdicts, bounded, chunk, post, read_request};

fn loopback() -> SocketAddr {
    "127.0.0.1:0".parse().unwrap()
}

async fn start_proxy(upstream: &str, limits: Limits) -> (Proxy, Arc<Verdicts>) {
    start_proxy_with(upstream, limits, None).await
}

/// A proxy told the clients' deadline (`--timeout`).
async fn start_proxy_with(
    upstream: &str,
    limits: Limits,
    client_timeout: Option<Duration>,
) -> (Proxy, Arc<Verdicts>) {
    let mut config = Config::new(upstream, loopback());
    config.limits = limits;
    config.client_timeout = client_timeout;
    let seen = Arc::new(Verdicts::default());
    let proxy = Proxy::builder(config)
        .sink(seen.clone())
        .call_sink(seen.clone())
        .record()
        .start()
        .await
        .expect("the proxy starts");
    (proxy, seen)
}

/// The recording as HAR text.
fn har_text(proxy: &Proxy) -> Vec<u8> {
    let mut bytes = Vec::new();
    proxy.recorder().unwrap().write(&mut bytes).unwrap();
    bytes
}

/// The recording, through the HAR writer and reader.
fn recorded(proxy: &Proxy) -> Vec<Entry> {
    har::parse(&har_text(proxy)).unwrap()
}

/// The proxy's logical calls (closed now) and `replay --calls` of its recording, as JSON lines.
fn calls_live_and_replayed(
    proxy: &Proxy,
    seen: &Verdicts,
    limits: Limits,
) -> (Vec<String>, Vec<String>) {
    proxy.close_calls();
    let live = seen
        .calls()
        .iter()
        .map(|c| serde_json::to_string(c).unwrap())
        .collect();
    let mut again = Vec::new();
    mcp_verdict::replay::replay_calls(&har_text(proxy)[..], limits, &mut |c| {
        again.push(serde_json::to_string(&c).unwrap())
    })
    .unwrap();
    (live, again)
}

fn replayed(entries: &[Entry], limits: Limits) -> Vec<Verdict> {
    let mut session = Driver::new(limits);
    entries
        .iter()
        .filter_map(
            |e| match judge_entry(&mut session, e, &mut std::iter::empty()) {
                Item::Verdict(v) => Some(*v),
                Item::Skipped(_) => None,
            },
        )
        .collect()
}

fn json(v: &Verdict) -> String {
    serde_json::to_string(v).unwrap()
}

/// [`support::essence`], and the idle cut's duration masked: it is a measurement (the proxy's
/// forwarding adds a little to each stream), compared apart, within the rule's own tolerance,
/// by `idle_cuts_agree`.
fn essence(v: &Verdict) -> String {
    let mut v = v.clone();
    for x in v
        .violations
        .iter_mut()
        .filter(|x| x.rule == Rule::SseIdleCut)
    {
        x.detail = idle_cut_secs(&x.detail).1;
    }
    support::essence(v)
}

/// The seconds an `sse.idle_cut` detail names, and the detail with them masked.
fn idle_cut_secs(detail: &str) -> (Vec<f64>, String) {
    let mut secs = Vec::new();
    let mut masked = String::new();
    let mut rest = detail;
    while let Some(at) = rest.find(|c: char| c.is_ascii_digit()) {
        let (before, from) = rest.split_at(at);
        let len = from
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(from.len());
        let (number, after) = from.split_at(len);
        masked.push_str(before);
        let unit = after.strip_prefix(" s");
        if unit.is_some_and(|u| !u.starts_with(|c: char| c.is_alphabetic())) {
            secs.push(number.parse().unwrap());
            masked.push_str("<secs>");
        } else {
            masked.push_str(number);
        }
        rest = after;
    }
    masked.push_str(rest);
    (secs, masked)
}

/// Idle-cut durations on both sides name the same cut: within 250 ms, the rule's tolerance.
fn idle_cuts_agree(a: &[Verdict], b: &[Verdict]) -> bool {
    let secs = |vs: &[Verdict]| -> Vec<f64> {
        vs.iter()
            .flat_map(|v| &v.violations)
            .filter(|x| x.rule == Rule::SseIdleCut)
            .flat_map(|x| {
                let (secs, _) = idle_cut_secs(&x.detail);
                assert_eq!(
                    secs.len(),
                    2,
                    "the detail names its duration twice: {}",
                    x.detail
                );
                secs
            })
            .collect()
    };
    let (a, b) = (secs(a), secs(b));
    a.len() == b.len() && a.iter().zip(&b).all(|(x, y)| (x - y).abs() <= 0.25)
}

fn hash(bytes: &[u8]) -> u64 {
    use std::hash::{DefaultHasher, Hasher};
    let mut h = DefaultHasher::new();
    h.write(bytes);
    h.finish()
}

/// Bodies on both sides of the proxy: the client's recording (what came out of the proxy) and
/// the proxy's (what came from the upstream, and what the client sent). A body the client let go
/// of early (after the answer, or at its deadline) is a prefix of what the proxy forwarded.
fn same_bodies(name: &str, client: &[Entry], proxy: &[Entry], failures: &mut Vec<String>) {
    if client.len() != proxy.len() {
        failures.push(format!(
            "{name}: client recorded {} exchanges, proxy {}",
            client.len(),
            proxy.len()
        ));
        return;
    }
    for (c, p) in client.iter().zip(proxy) {
        if hash(&c.request_body) != hash(&p.request_body) {
            failures.push(format!("{name}: entry {}: request bodies differ", c.index));
        }
        let whole =
            matches!(c.end, End::Eof | End::Reset) && matches!(p.end, End::Eof | End::Reset);
        let ok = if whole {
            hash(&c.response_body) == hash(&p.response_body) && c.end == p.end
        } else {
            p.response_body.starts_with(&c.response_body)
        };
        if !ok {
            failures.push(format!(
                "{name}: entry {}: response bodies differ (client {} bytes {:?}, proxy {} bytes {:?})",
                c.index,
                c.response_body.len(),
                c.end,
                p.response_body.len(),
                p.end
            ));
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_fault_scenario_through_the_proxy_equals_probe_direct_and_replay() {
    bounded(async {
        let server = FaultServer::start("127.0.0.1:0").await.unwrap();
        let list = scenarios::all();
        let mut failures = Vec::new();
        for batch in list.chunks(8) {
            let mut runs = Vec::new();
            for s in batch {
                let s = s.clone();
                let upstream = server.url(Some(s.name));
                runs.push(tokio::spawn(async move {
                    let mut limits = Limits::default();
                    if let Some(n) = s.client_max_event_bytes {
                        limits.max_event_bytes = n;
                    }
                    let direct = demo::probe(&upstream, &s).await;
                    // The proxy is told the client's deadline (`--timeout`), a little short of
                    // it: the client leaves when its own clock says so, after the proxy's.
                    let told = s.client_deadline_ms.map(|ms| Duration::from_millis(ms * 3 / 4));
                    let (proxy, seen) = start_proxy_with(&upstream, limits, told).await;
                    let through = demo::probe(&proxy.url(), &s).await;
                    // The proxy finishes an exchange when the client lets go of it.
                    tokio::time::sleep(Duration::from_millis(300)).await;
                    let calls = calls_live_and_replayed(&proxy, &seen, limits);
                    (s, limits, direct, through, seen.sorted(), recorded(&proxy), calls)
                }));
            }
            for run in runs {
                let (s, limits, direct, through, at_proxy, entries, (calls, calls_again)) =
                    run.await.unwrap();
                let name = s.name;
                // The client through the proxy sees what it sees directly.
                failures.extend(through.mismatches.iter().map(|m| format!("{name}: through the proxy: {m}")));
                failures.extend(direct.mismatches.iter().map(|m| format!("{name}: direct: {m}")));
                let a: Vec<_> = direct.verdicts.iter().map(essence).collect();
                let b: Vec<_> = through.verdicts.iter().map(essence).collect();
                if a != b || !idle_cuts_agree(&direct.verdicts, &through.verdicts) {
                    failures.push(format!("{name}: client verdicts differ through the proxy:\n  {a:?}\n  {b:?}"));
                }
                // The proxy's verdicts equal probe's, every scenario (`sse-never-ends` included:
                // told the client's deadline, the proxy judges its leaving TIMED_OUT).
                let want = direct.verdicts.clone();
                let a: Vec<_> = want.iter().map(essence).collect();
                let b: Vec<_> = at_proxy.iter().map(essence).collect();
                if a != b || !idle_cuts_agree(&want, &at_proxy) {
                    failures.push(format!("{name}: proxy verdicts differ from probe's:\n  probe: {a:?}\n  proxy: {b:?}"));
                }
                // Replay of the proxy's recording gives the proxy's verdicts, index and end included.
                let again = replayed(&entries, limits);
                if again.iter().map(json).collect::<Vec<_>>() != at_proxy.iter().map(json).collect::<Vec<_>>() {
                    failures.push(format!("{name}: replay of the recording differs from the proxy's verdicts"));
                }
                same_bodies(name, &through.recorded, &entries, &mut failures);
                // The proxy's logical calls equal `replay --calls` of its recording.
                if calls.is_empty() || calls != calls_again {
                    failures.push(format!("{name}: proxy calls differ from replay --calls:\n  proxy:  {calls:?}\n  replay: {calls_again:?}"));
                }
            }
        }
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    })
    .await;
}

// --- real clients and the rmcp server --------------------------------------------------------

fn client(url: &str) -> mcp_verdict::adapters::Client {
    mcp_verdict::adapters::Client::builder(url)
        .deadlines(mcp_verdict::adapters::Deadlines {
            overall: Some(Duration::from_secs(10)),
            ..Default::default()
        })
        .build()
        .unwrap()
}

async fn client_session(
    c: &mcp_verdict::adapters::Client,
    handshake: mcp_verdict::adapters::Handshake,
) -> Vec<Verdict> {
    use serde_json::json;
    let mut verdicts = c.handshake(handshake).await;
    verdicts.push(c.request("tools/list", json!({})).await.verdict().await);
    for params in [
        json!({"name": "echo", "arguments": {"text": "hi"}}),
        json!({"name": "fail", "arguments": {}}),
        json!({"name": "progress", "arguments": {}, "_meta": {"progressToken": "p1"}}),
        json!({"name": "nope", "arguments": {}}),
    ] {
        verdicts.push(c.request("tools/call", params).await.verdict().await);
    }
    verdicts
}

/// This crate's client against the rmcp server, directly and through the proxy: the same
/// verdicts on the client, at the proxy, and in the replay of the proxy's recording.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crate_client_and_rmcp_server_through_the_proxy() {
    use mcp_verdict::adapters::Handshake;
    use support::Mode;
    bounded(async {
        for (mode, handshake) in [
            (Mode::Modern, Handshake::Stateless),
            (Mode::ModernJson, Handshake::Stateless),
            (Mode::Legacy, Handshake::Auto),
        ] {
            let server = support::rmcp_server(mode).await;
            let direct = client_session(&client(&server.url), handshake).await;
            let (proxy, seen) = start_proxy(&server.url, Limits::default()).await;
            let through = client_session(&client(&proxy.url()), handshake).await;
            tokio::time::sleep(Duration::from_millis(300)).await;
            let at_proxy = seen.sorted();
            let ess = |v: &[Verdict]| v.iter().map(essence).collect::<Vec<_>>();
            assert_eq!(
                ess(&direct),
                ess(&through),
                "{mode:?}: client verdicts through the proxy"
            );
            assert_eq!(ess(&direct), ess(&at_proxy), "{mode:?}: proxy verdicts");
            let again = replayed(&recorded(&proxy), Limits::default());
            assert_eq!(
                again.iter().map(json).collect::<Vec<_>>(),
                at_proxy.iter().map(json).collect::<Vec<_>>(),
                "{mode:?}: replay of the recording"
            );
            let (calls, calls_again) = calls_live_and_replayed(&proxy, &seen, Limits::default());
            assert!(!calls.is_empty(), "{mode:?}: no calls");
            assert_eq!(calls, calls_again, "{mode:?}: calls vs replay --calls");
            let calls: Vec<_> = at_proxy
                .iter()
                .filter(|v| v.method.as_deref() == Some("tools/call"))
                .map(|v| v.outcome)
                .collect();
            assert_eq!(
                calls,
                [
                    Outcome::ToolSuccess,
                    Outcome::ToolError,
                    Outcome::ToolSuccess,
                    Outcome::JsonrpcError
                ],
                "{mode:?}"
            );
        }
    })
    .await;
}

#[cfg(feature = "rmcp")]
mod rmcp_clients {
    use super::*;
    use mcp_verdict::adapters::rmcp::VerdictHttpClient;
    use rmcp::ServiceExt;
    use rmcp::transport::StreamableHttpClientTransport;
    use rmcp::transport::streamable_http_client::{
        StreamableHttpClient, StreamableHttpClientTransportConfig,
    };

    /// rmcp's client over `http`: list tools, call echo, fail and progress, then close.
    async fn rmcp_session<C: StreamableHttpClient + Send + Sync + 'static>(http: C, url: &str) {
        let config = StreamableHttpClientTransportConfig::with_uri(url.to_owned());
        let transport = StreamableHttpClientTransport::with_client(http, config);
        let client = ().serve(transport).await.expect("rmcp connects");
        support::list_and_call(&client).await;
        client.cancel().await.expect("rmcp closes");
    }

    fn outcomes(v: &[Verdict]) -> Vec<(Option<String>, Outcome)> {
        v.iter()
            .map(|v| (v.method.as_deref().map(str::to_owned), v.outcome))
            .collect()
    }

    /// rmcp's client through this crate's transport and through plain reqwest, against the
    /// rmcp server behind the proxy: the transport's verdicts equal the proxy's.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn rmcp_client_and_rmcp_server_through_the_proxy() {
        bounded(async {
            for mode in [support::Mode::Modern, support::Mode::Legacy] {
                let server = support::rmcp_server(mode).await;
                // Through this crate's transport.
                let (proxy, seen) = start_proxy(&server.url, Limits::default()).await;
                let (http, mut rx) = VerdictHttpClient::channel(reqwest::Client::new());
                rmcp_session(http, &proxy.url()).await;
                tokio::time::sleep(Duration::from_millis(300)).await;
                let mut at_client = Vec::new();
                while let Ok(v) = rx.try_recv() {
                    at_client.push(v);
                }
                at_client.sort_by_key(|v| v.index);
                let all_at_proxy = seen.sorted();
                // Both judge rmcp's standalone GET and its DELETE; those overlap the POSTs, so
                // their place in the order may differ: compared as a set, the POSTs in order.
                let session_entries = |v: &[Verdict]| {
                    let mut o: Vec<_> = v
                        .iter()
                        .filter(|v| v.method.is_none())
                        .map(|v| format!("{:?}", v.outcome))
                        .collect();
                    o.sort();
                    o
                };
                assert_eq!(
                    session_entries(&at_client),
                    session_entries(&all_at_proxy),
                    "{mode:?}"
                );
                let at_client: Vec<_> = at_client
                    .into_iter()
                    .filter(|v| v.method.is_some())
                    .collect();
                let at_proxy: Vec<_> = all_at_proxy
                    .into_iter()
                    .filter(|v| v.method.is_some())
                    .collect();
                assert!(at_proxy.len() >= 5, "{mode:?}: {}", at_proxy.len());
                assert_eq!(outcomes(&at_client), outcomes(&at_proxy), "{mode:?}");
                // Known difference: rmcp sends `notifications/initialized` and the next request
                // without waiting, on separate connections. The session counts the notification
                // from the moment it is sent (`Lifecycle::sent`), but under load the request can
                // still *arrive* at the proxy first, and gets `session.before_initialized` there
                // only: from the proxy's seat the client did send it first.
                let ess = |v: &[Verdict]| {
                    v.iter()
                        .map(|v| {
                            let mut v = v.clone();
                            v.violations
                                .retain(|x| x.rule.as_str() != "session.before_initialized");
                            essence(&v)
                        })
                        .collect::<Vec<_>>()
                };
                assert_eq!(ess(&at_client), ess(&at_proxy), "{mode:?}");

                // Plain rmcp (its own reqwest client): the proxy judges what it sends.
                let (proxy, seen) = start_proxy(&server.url, Limits::default()).await;
                rmcp_session(reqwest::Client::new(), &proxy.url()).await;
                tokio::time::sleep(Duration::from_millis(300)).await;
                let plain = seen.sorted();
                let calls: Vec<_> = plain
                    .iter()
                    .filter(|v| v.method.as_deref() == Some("tools/call"))
                    .map(|v| v.outcome)
                    .collect();
                assert_eq!(
                    calls,
                    [
                        Outcome::ToolSuccess,
                        Outcome::ToolError,
                        Outcome::ToolSuccess
                    ],
                    "{mode:?}"
                );
                assert!(
                    plain
                        .iter()
                        .filter(|v| v.method.is_some())
                        .all(|v| v.complete),
                    "{mode:?}: {plain:?}"
                );
                let again = replayed(&recorded(&proxy), Limits::default());
                assert_eq!(
                    again.iter().map(json).collect::<Vec<_>>(),
                    plain.iter().map(json).collect::<Vec<_>>()
                );
            }
        })
        .await;
    }
}

// --- cancel, refusals, many streams ----------------------------------------------------------

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

const CALL: &str =
    r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"slow","arguments":{}}}"#;

/// A client drops a long-running call after its first event: the upstream sees its stream
/// closed within 100 ms (on 2026-07-28 that close is the cancel), and the proxy says CANCELLED.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_goes_away_closes_the_upstream_stream() {
    bounded(async {
        let upstream = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/mcp", upstream.local_addr().unwrap());
        let (closed_tx, closed_rx) = tokio::sync::oneshot::channel();
        tokio::spawn(async move {
            let (mut s, _) = upstream.accept().await.unwrap();
            let _ = read_request(&mut s).await;
            let progress = support::progress_event("t", 1);
            let head = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n{}",
                chunk(&progress)
            );
            s.write_all(head.as_bytes()).await.unwrap();
            let mut buf = [0u8; 64];
            while matches!(s.read(&mut buf).await, Ok(n) if n > 0) {}
            let _ = closed_tx.send(tokio::time::Instant::now());
        });
        let (proxy, seen) = start_proxy(&url, Limits::default()).await;
        let mut c = TcpStream::connect(proxy.addr()).await.unwrap();
        c.write_all(post("/mcp", CALL).as_bytes()).await.unwrap();
        let mut got = Vec::new();
        let mut buf = [0u8; 4096];
        while !String::from_utf8_lossy(&got).contains("notifications/progress") {
            let n = c.read(&mut buf).await.unwrap();
            assert!(n > 0, "the first event arrives");
            got.extend_from_slice(&buf[..n]);
        }
        drop(c);
        let dropped = tokio::time::Instant::now();
        let closed = closed_rx.await.expect("the upstream saw the close");
        let after = closed.saturating_duration_since(dropped);
        assert!(after < Duration::from_millis(100), "upstream saw the close after {after:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
        let v = seen.sorted();
        assert_eq!(v.len(), 1);
        assert_eq!(v[0].outcome, Outcome::Cancelled);
        assert_eq!(v[0].end, End::Cancelled);
        assert_eq!(v[0].event_count, Some(1));
    })
    .await;
}

use support::exchange_raw;

/// What must not be forwarded is refused with a status and a one-line reason; a redirect
/// reaches the client as sent (not followed).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refusals_and_no_redirect_following() {
    bounded(async {
        let server =
            support::raw_server(support::Raw::Status(307, r#"{"moved":true}"#.into()), 64).await;
        let mut config = Config::new(server.url.clone(), loopback());
        config.max_request_bytes = 1024;
        config.max_head_bytes = 8192;
        config.max_connections = 2;
        let proxy = Proxy::builder(config).start().await.unwrap();
        let addr = proxy.addr();
        let status = |text: &str| text.split(' ').nth(1).unwrap_or("").to_owned();

        let r = exchange_raw(addr, post("/elsewhere", CALL).as_bytes()).await;
        assert_eq!(status(&r), "404", "{r}");
        assert!(r.contains("serves only /mcp"), "{r}");
        let r = exchange_raw(
            addr,
            post("/mcp", CALL)
                .replace("Host: 127.0.0.1", "Host: evil.example")
                .as_bytes(),
        )
        .await;
        assert_eq!(status(&r), "403", "{r}");
        let with_origin = post("/mcp", CALL).replace(
            "Host: 127.0.0.1",
            "Host: 127.0.0.1\r\nOrigin: https://evil.example",
        );
        let r = exchange_raw(addr, with_origin.as_bytes()).await;
        assert_eq!(status(&r), "403", "{r}");
        let big = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"x","params":{{"p":"{}"}}}}"#,
            "a".repeat(2000)
        );
        let r = exchange_raw(addr, post("/mcp", &big).as_bytes()).await;
        assert_eq!(status(&r), "413", "{r}");
        assert!(r.contains("--max-request-bytes"), "{r}");
        let huge_head = post("/mcp", CALL).replace(
            "Host: 127.0.0.1",
            &format!("Host: 127.0.0.1\r\nX-Big: {}", "b".repeat(20_000)),
        );
        let r = exchange_raw(addr, huge_head.as_bytes()).await;
        assert_eq!(status(&r), "431", "{r}");
        let r = exchange_raw(
            addr,
            b"PUT /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n\r\n",
        )
        .await;
        assert_eq!(status(&r), "405", "{r}");
        let r = exchange_raw(addr, b"NOT HTTP AT ALL\r\n\r\n").await;
        assert!(r.is_empty() || status(&r) == "400", "{r}");

        // The redirect is passed on as it came.
        let r = exchange_raw(addr, post("/mcp", CALL).as_bytes()).await;
        assert_eq!(status(&r), "307", "{r}");
        assert!(r.ends_with(r#"{"moved":true}"#), "{r}");

        // Over the connection cap: 503 with the reason.
        // The proxy frees a connection's slot when it sees the close, and counts a new one
        // when it accepts it; a loaded machine may be late with either (the connections above
        // still holding slots makes one of these two the one refused). So: two idle
        // connections, then a third; again (at most 40 times, 50 ms apart) until the third is
        // the one refused.
        let mut r = String::new();
        for _ in 0..40 {
            let _a = TcpStream::connect(addr).await.unwrap();
            let _b = TcpStream::connect(addr).await.unwrap();
            tokio::time::sleep(Duration::from_millis(50)).await;
            r = exchange_raw(addr, post("/mcp", CALL).as_bytes()).await;
            if status(&r) == "503" {
                break;
            }
        }
        assert_eq!(status(&r), "503", "{r}");
        assert!(r.contains("--max-connections"), "{r}");
    })
    .await;
}
