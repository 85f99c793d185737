//! The one redaction policy (docs/redaction.md), over every output of the binary: a secret in
//! each named place — `Authorization`, `Proxy-Authorization`, `Cookie`, `Set-Cookie` (from the
//! server), `Mcp-Session-Id` (from the server, and a changed one from a client), headers named
//! like `X-Api-Key` and `X-Auth-Token`, URL userinfo, a secret query value, and a `-H` with an
//! innocuous name — and none of them in any output: HAR (probe `-o`, proxy `--record`, rmcp's
//! recording), JSONL (`--format jsonl`, proxy `--log`), calls (`--calls`), HTML (`--html`),
//! JUnit, OTLP (a real receiver on 127.0.0.1), Prometheus metrics, stdout and stderr of probe,
//! replay, soak and proxy. With `--no-redact` the recordings show them.
//!
//! Every secret contains [`MARK`]; the upstream is a small MCP server on 127.0.0.1 that sets a
//! secret session id and a secret cookie. Each process is bounded in time.
#![cfg(feature = "cli")]

mod proxy_process;
mod support;

use proxy_process::ProxyProcess;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_mcp-verdict");

/// Every secret contains this, so that one search finds any of them.
const MARK: &str = "SECRET";

const AUTHORIZATION: &str = "Bearer SECRET-authorization-a1";
const PROXY_AUTHORIZATION: &str = "Basic SECRET-proxyauth-b2";
const COOKIE: &str = "sid=SECRET-cookie-c3";
const SET_COOKIE: &str = "srv=SECRET-setcookie-d4; Path=/";
/// The session id the upstream hands out.
const SESSION: &str = "SECRET-session-e5";
/// Another session id a client sends without an `initialize` between (`session.id_changed`,
/// whose detail names both).
const OTHER_SESSION: &str = "SECRET-othersession-f6";
const API_KEY: &str = "SECRET-apikey-g7";
const AUTH_TOKEN: &str = "SECRET-authtoken-h8";
const USERINFO: &str = "SECRET-userinfo-i9";
const QUERY: &str = "SECRET-query-j10";
/// The value of a `-H` whose name says nothing about secrets.
const TENANT: &str = "SECRET-tenant-k11";

/// The secrets a client puts in its request headers, as `-H` arguments.
fn header_args() -> Vec<String> {
    [
        ("Authorization", AUTHORIZATION),
        ("Proxy-Authorization", PROXY_AUTHORIZATION),
        ("Cookie", COOKIE),
        ("X-Api-Key", API_KEY),
        ("X-Auth-Token", AUTH_TOKEN),
        ("X-Tenant", TENANT),
    ]
    .iter()
    .flat_map(|(n, v)| ["-H".to_owned(), format!("{n}: {v}")])
    .collect()
}

/// `http://user:USERINFO@127.0.0.1:PORT/mcp?access_token=QUERY` for `base` `http://127.0.0.1:PORT/mcp`.
fn secret_url(base: &str) -> String {
    let rest = base.strip_prefix("http://").unwrap();
    format!("http://user:{USERINFO}@{rest}?access_token={QUERY}")
}

// --- the upstream: a small 2025-11-25 MCP server with a secret session id and cookie ---------

fn reply(status: u16, content_type: &str, body: String) -> hyper::Response<Full<Bytes>> {
    let mut r = hyper::Response::builder()
        .status(status)
        .header("set-cookie", SET_COOKIE);
    if !content_type.is_empty() {
        r = r.header("content-type", content_type);
    }
    r.body(Full::new(Bytes::from(body))).unwrap()
}

async fn answer(
    req: hyper::Request<hyper::body::Incoming>,
) -> Result<hyper::Response<Full<Bytes>>, hyper::Error> {
    let method = req.method().clone();
    let body = req.into_body().collect().await?.to_bytes();
    if method == hyper::Method::DELETE {
        return Ok(reply(200, "", String::new()));
    }
    if method != hyper::Method::POST {
        let mut r = reply(405, "", String::new());
        r.headers_mut()
            .insert("allow", hyper::header::HeaderValue::from_static("POST"));
        return Ok(r);
    }
    let msg: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let (Some(id), Some(m)) = (msg.get("id"), msg.get("method").and_then(Value::as_str)) else {
        return Ok(reply(202, "", String::new()));
    };
    let result = |r: Value| json!({"jsonrpc": "2.0", "id": id, "result": r}).to_string();
    Ok(match m {
        "initialize" => {
            let mut r = reply(
                200,
                "application/json",
                result(json!({
                    "protocolVersion": "2025-11-25",
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "redaction-upstream", "version": "1"},
                })),
            );
            r.headers_mut().insert(
                "mcp-session-id",
                hyper::header::HeaderValue::from_static(SESSION),
            );
            r
        }
        "tools/list" => reply(
            200,
            "application/json",
            result(json!({"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]})),
        ),
        "tools/call" => {
            let r = result(json!({"content": [{"type": "text", "text": "hi"}]}));
            reply(
                200,
                "text/event-stream",
                format!("event: message\ndata: {r}\n\n"),
            )
        }
        "server/discover" => reply(404, "", String::new()),
        other => reply(
            200,
            "application/json",
            json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": format!("no {other}")}})
                .to_string(),
        ),
    })
}

/// Serves `handle` on 127.0.0.1; returns its base URL.
async fn serve<F, Fut>(handle: F) -> String
where
    F: Fn(hyper::Request<hyper::body::Incoming>) -> Fut + Clone + Send + Sync + 'static,
    Fut: Future<Output = Result<hyper::Response<Full<Bytes>>, hyper::Error>> + Send + 'static,
{
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let handle = handle.clone();
            tokio::spawn(async move {
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service_fn(handle))
                    .await;
            });
        }
    });
    url
}

/// An OTLP/HTTP receiver on 127.0.0.1 (as in `tests/otel.rs`): keeps every body it gets. The
/// protobuf carries strings as UTF-8, so a secret in any attribute shows in the bytes.
async fn otlp_receiver() -> (String, Arc<Mutex<Vec<u8>>>) {
    let got: Arc<Mutex<Vec<u8>>> = Arc::default();
    let keep = got.clone();
    let url = serve(move |req: hyper::Request<hyper::body::Incoming>| {
        let keep = keep.clone();
        async move {
            let body = req.into_body().collect().await?.to_bytes();
            keep.lock().unwrap().extend_from_slice(&body);
            let mut r = hyper::Response::new(Full::new(Bytes::new()));
            r.headers_mut().insert(
                "content-type",
                hyper::header::HeaderValue::from_static("application/x-protobuf"),
            );
            Ok(r)
        }
    })
    .await;
    (url, got)
}

// --- running the binary ----------------------------------------------------------------------

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// Runs the binary to completion (at most 60 s).
fn run(args: &[String]) -> Output {
    let mut child = Command::new(BIN)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Drained on threads, so that a full pipe never blocks the process.
    let (mut out, mut err) = (child.stdout.take().unwrap(), child.stderr.take().unwrap());
    let stdout = std::thread::spawn(move || {
        let mut b = Vec::new();
        let _ = std::io::Read::read_to_end(&mut out, &mut b);
        b
    });
    let stderr = std::thread::spawn(move || {
        let mut b = Vec::new();
        let _ = std::io::Read::read_to_end(&mut err, &mut b);
        b
    });
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if start.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            panic!("mcp-verdict {args:?} took longer than 60 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Output {
        status,
        stdout: stdout.join().unwrap(),
        stderr: stderr.join().unwrap(),
    }
}

fn args(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| (*s).to_owned()).collect()
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "mcp-verdict-redaction-{}-{name}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Every secret, by what it is.
fn secrets() -> Vec<(&'static str, &'static str)> {
    vec![
        ("Authorization", "SECRET-authorization-a1"),
        ("Proxy-Authorization", "SECRET-proxyauth-b2"),
        ("Cookie", "SECRET-cookie-c3"),
        ("Set-Cookie", "SECRET-setcookie-d4"),
        ("Mcp-Session-Id (server)", SESSION),
        ("Mcp-Session-Id (client)", OTHER_SESSION),
        ("X-Api-Key", API_KEY),
        ("X-Auth-Token", AUTH_TOKEN),
        ("URL userinfo", USERINFO),
        ("query access_token", QUERY),
        ("-H X-Tenant", TENANT),
    ]
}

/// Outputs and the secrets found in them.
#[derive(Default)]
struct Leaks {
    found: Vec<String>,
    checked: usize,
}

impl Leaks {
    fn check(&mut self, what: &str, bytes: &[u8]) {
        self.check_except(what, bytes, &[]);
    }

    /// Checks for every secret but the `allowed` ones.
    fn check_except(&mut self, what: &str, bytes: &[u8], allowed: &[&str]) {
        self.checked += 1;
        let mut text = String::from_utf8_lossy(bytes).into_owned();
        for a in allowed {
            text = text.replace(a, "");
        }
        for (name, secret) in secrets() {
            if text.contains(secret) {
                self.found.push(format!("{what}: {name}"));
            }
        }
        // Anything else marked secret (a secret cut in two would still show its mark).
        if text.contains(MARK)
            && !self
                .found
                .iter()
                .any(|f| f.starts_with(&format!("{what}:")))
        {
            self.found.push(format!("{what}: {MARK}"));
        }
    }

    fn check_file(&mut self, what: &str, path: &Path) {
        match std::fs::read(path) {
            Ok(bytes) if !bytes.is_empty() => self.check(what, &bytes),
            Ok(_) => self
                .found
                .push(format!("{what}: empty ({})", path.display())),
            Err(e) => self.found.push(format!("{what}: not written ({e})")),
        }
    }

    fn check_run(&mut self, what: &str, out: &Output) {
        self.check(&format!("{what} stdout"), &out.stdout);
        self.check(&format!("{what} stderr"), &out.stderr);
    }

    fn assert_none(&self) {
        assert!(
            self.found.is_empty(),
            "secrets shown ({} findings in {} outputs checked):\n  {}",
            self.found.len(),
            self.checked,
            self.found.join("\n  ")
        );
    }
}

/// A proxy process (stderr in a file: its lines are checked too).
fn proxy_run(upstream: &str, extra: &[String], dir: &Path, name: &str) -> ProxyProcess {
    let extra: Vec<&str> = extra.iter().map(String::as_str).collect();
    ProxyProcess::start_named(upstream, &extra, &[], dir, name)
}

/// A probe with every secret through the proxy at `url` (a secret query too).
fn through(url: &str) -> Vec<String> {
    let mut a = args(&["probe", &format!("{url}?access_token={QUERY}")]);
    a.extend(args(&["--protocol", "2025-11-25", "--tool", "echo"]));
    a.extend(args(&["--timeout", "10s"]));
    a.extend(header_args());
    a
}

/// What a client sends through the proxy besides a probe: a request with another session id
/// (judged `session.id_changed`), and a request that is not MCP (skipped, its URL in the
/// reason), both with every secret header and a secret query.
fn odd_requests(rt: &tokio::runtime::Runtime, url: &str) {
    rt.block_on(async {
        let http = reqwest::Client::new();
        let with_query = format!("{url}?access_token={QUERY}");
        let headers = [
            ("authorization", AUTHORIZATION),
            ("cookie", COOKIE),
            ("x-api-key", API_KEY),
            ("x-auth-token", AUTH_TOKEN),
            ("x-tenant", TENANT),
        ];
        let mut changed = http
            .post(&with_query)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2025-11-25")
            .header("mcp-session-id", OTHER_SESSION)
            .body(r#"{"jsonrpc":"2.0","id":99,"method":"tools/list","params":{}}"#);
        let mut not_mcp = http.get(&with_query);
        for (n, v) in headers {
            changed = changed.header(n, v);
            not_mcp = not_mcp.header(n, v);
        }
        let a = changed.send().await.unwrap();
        let _ = a.bytes().await;
        let b = not_mcp.send().await.unwrap();
        let _ = b.bytes().await;
    });
}

#[test]
fn no_output_of_any_command_shows_a_secret() {
    let rt = runtime();
    let dir = temp_dir("on");
    let base = rt.block_on(serve(answer)) + "/mcp";
    let (otlp, exported) = rt.block_on(otlp_receiver());
    let url = secret_url(&base);
    let headers = header_args();
    let mut leaks = Leaks::default();
    let p = |name: &str| dir.join(name).display().to_string();

    // probe: JSONL, HAR, HTML and OTLP in one run; JUnit, human output and calls in others.
    let mut probe = args(&["probe", &url, "--protocol", "2025-11-25", "--tool", "echo"]);
    probe.extend(headers.iter().cloned());
    probe.extend(args(&["--timeout", "10s"]));
    let with = |extra: &[&str]| {
        let mut a = probe.clone();
        a.extend(args(extra));
        a
    };
    let (har, html) = (p("probe.har"), p("probe.html"));
    let out = run(&with(&[
        "--format", "jsonl", "-o", &har, "--html", &html, "--otlp", &otlp,
    ]));
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    leaks.check_run("probe --format jsonl", &out);
    leaks.check_file("probe -o (HAR)", dir.join("probe.har").as_path());
    leaks.check_file("probe --html", dir.join("probe.html").as_path());
    for (what, extra) in [
        ("probe --format junit", vec!["--format", "junit"]),
        ("probe (human)", vec![]),
        ("probe --format json", vec!["--format", "json"]),
        ("probe --calls", vec!["--calls"]),
        (
            "probe --calls --format json",
            vec!["--calls", "--format", "json"],
        ),
    ] {
        let out = run(&with(&extra));
        assert!(out.status.code().is_some_and(|c| c < 2), "{what}: {out:?}");
        leaks.check_run(what, &out);
    }
    // Errors: nothing listens; a scheme that is not MCP.
    let closed = secret_url(&format!("http://127.0.0.1:{}/mcp", free_port()));
    let mut refused = args(&["probe", &closed, "--timeout", "5s"]);
    refused.extend(headers.iter().cloned());
    leaks.check_run("probe (connection refused)", &run(&refused));
    let ftp = format!("ftp://user:{USERINFO}@127.0.0.1/mcp?access_token={QUERY}");
    leaks.check_run("probe (bad scheme)", &run(&args(&["probe", &ftp])));

    // soak: every output it has.
    let mut soak = args(&["soak", &url, "--tool", "echo", "-n", "4", "-c", "2"]);
    soak.extend(headers.iter().cloned());
    soak.extend(args(&[
        "--format",
        "json",
        "-o",
        &p("soak.json"),
        "--html",
        &p("soak.html"),
        "--junit",
        &p("soak.xml"),
        "--calls",
        &p("soak-calls.jsonl"),
        "--metrics-file",
        &p("soak.prom"),
        "--otlp",
        &otlp,
        "--timeout",
        "10s",
    ]));
    let out = run(&soak);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    leaks.check_run("soak", &out);
    for f in [
        "soak.json",
        "soak.html",
        "soak.xml",
        "soak-calls.jsonl",
        "soak.prom",
    ] {
        leaks.check_file(&format!("soak {f}"), &dir.join(f));
    }

    // proxy: log, calls, recording, HTML, OTLP and metrics in one run, its human lines in
    // another; a probe with every secret through each, and a client with another session id.
    let upstream = secret_url(&base);
    let metrics = free_port();
    let mut extra = args(&[
        "--log",
        &p("proxy.jsonl"),
        "--calls",
        &p("proxy-calls.jsonl"),
        "--record",
        &p("proxy.har"),
        "--html",
        &p("proxy.html"),
        "--otlp",
        &otlp,
        "--metrics-listen",
    ]);
    extra.push(format!("127.0.0.1:{metrics}"));
    let proxy = proxy_run(&upstream, &extra, &dir, "proxy");
    let out = run(&through(&proxy.url));
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    leaks.check_run("probe through the proxy", &out);
    odd_requests(&rt, &proxy.url);
    let scraped = rt.block_on(async {
        let r = reqwest::get(format!("http://127.0.0.1:{metrics}/metrics")).await;
        r.unwrap().text().await.unwrap()
    });
    leaks.check("proxy --metrics-listen", scraped.as_bytes());
    let (stdout, stderr) = (proxy.stdout.clone(), proxy.stderr.clone());
    proxy.stop();
    leaks.check_file("proxy stderr", &stderr);
    leaks.check("proxy stdout", &std::fs::read(&stdout).unwrap());
    for f in ["proxy.jsonl", "proxy-calls.jsonl", "proxy.html"] {
        leaks.check_file(&format!("proxy {f}"), &dir.join(f));
    }
    // The proxy has no -H: a header named like nothing secret (the probe's X-Tenant) passes
    // through it as any other header does, and its recording shows it. Every other secret of
    // the probe's is hidden there by name.
    let recorded = std::fs::read(dir.join("proxy.har")).unwrap();
    leaks.check_except("proxy --record (HAR)", &recorded, &[TENANT]);
    if !String::from_utf8_lossy(&recorded).contains("<redacted-") {
        leaks
            .found
            .push("proxy --record (HAR): no session stand-in".into());
    }
    let log = std::fs::read_to_string(dir.join("proxy.jsonl")).unwrap();
    assert!(log.contains("session.id_changed"), "{log}");

    let human = proxy_run(&upstream, &[], &dir, "human");
    assert_eq!(run(&through(&human.url)).status.code(), Some(0));
    odd_requests(&rt, &human.url);
    let stderr = human.stderr.clone();
    human.stop();
    leaks.check_file("proxy human lines (stderr)", &stderr);

    // replay of a recording that kept every secret (as a browser's capture does): its outputs
    // show none of them either.
    let raw = p("raw.har");
    let kept = proxy_run(
        &upstream,
        &args(&["--no-redact", "--record", &raw]),
        &dir,
        "raw",
    );
    assert_eq!(run(&through(&kept.url)).status.code(), Some(0));
    odd_requests(&rt, &kept.url);
    kept.stop();
    let raw_text = std::fs::read_to_string(&raw).unwrap();
    assert!(raw_text.contains(SESSION) && raw_text.contains(OTHER_SESSION));
    for (what, extra) in [
        ("replay (human)", vec![]),
        ("replay --format jsonl", vec!["--format", "jsonl"]),
        ("replay --format junit", vec!["--format", "junit"]),
        (
            "replay --calls --format json",
            vec!["--calls", "--format", "json"],
        ),
    ] {
        let mut a = args(&["replay", &raw]);
        a.extend(args(&extra));
        let out = run(&a);
        assert!(out.status.code().is_some_and(|c| c < 2), "{what}: {out:?}");
        // The file name is the user's own; the secrets are in the entries.
        leaks.check_run(what, &out);
    }
    let out = run(&args(&[
        "replay",
        &raw,
        "--html",
        &p("replay.html"),
        "--format",
        "json",
    ]));
    leaks.check_run("replay --html", &out);
    leaks.check_file("replay --html", &dir.join("replay.html"));

    // Everything exported over OTLP (probe, soak, proxy).
    let exported = exported.lock().unwrap().clone();
    assert!(!exported.is_empty(), "nothing reached the OTLP receiver");
    leaks.check("OTLP export", &exported);

    leaks.assert_none();
}

#[test]
fn with_no_redact_the_recordings_show_them() {
    let rt = runtime();
    let dir = temp_dir("off");
    let base = rt.block_on(serve(answer)) + "/mcp";
    let headers = header_args();
    let har = dir.join("probe.har");
    let mut probe = args(&[
        "probe",
        &secret_url(&base),
        "--protocol",
        "2025-11-25",
        "--tool",
        "echo",
    ]);
    probe.extend(headers.iter().cloned());
    probe.extend(args(&[
        "--timeout",
        "10s",
        "--format",
        "jsonl",
        "--no-redact",
        "--html",
    ]));
    probe.push(dir.join("probe.html").display().to_string());
    probe.push("-o".to_owned());
    probe.push(har.display().to_string());
    let out = run(&probe);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let recorded = std::fs::read_to_string(&har).unwrap();
    // The page names the session as it was sent.
    let page = std::fs::read_to_string(dir.join("probe.html")).unwrap();
    assert!(
        page.contains(SESSION),
        "--no-redact: the page hides the session id"
    );

    let proxy_har = dir.join("proxy.har");
    let extra = vec![
        "--no-redact".to_owned(),
        "--record".to_owned(),
        proxy_har.display().to_string(),
    ];
    let proxy = proxy_run(&secret_url(&base), &extra, &dir, "proxy");
    assert_eq!(run(&through(&proxy.url)).status.code(), Some(0));
    let stderr = proxy.stderr.clone();
    proxy.stop();
    let proxied = std::fs::read_to_string(&proxy_har).unwrap();
    // The upstream as given, on the first line.
    let said = std::fs::read_to_string(stderr).unwrap();
    assert!(said.contains(USERINFO) && said.contains(QUERY), "{said}");

    let mut missing = Vec::new();
    for (what, text) in [("probe -o", &recorded), ("proxy --record", &proxied)] {
        for secret in [
            AUTHORIZATION,
            PROXY_AUTHORIZATION,
            COOKIE,
            API_KEY,
            AUTH_TOKEN,
            TENANT,
            SESSION,
            "SECRET-setcookie-d4",
            USERINFO,
            QUERY,
        ] {
            if !text.contains(secret) {
                missing.push(format!("{what}: {secret}"));
            }
        }
    }
    assert!(missing.is_empty(), "--no-redact hid: {missing:?}");
}

/// rmcp's own client over `VerdictHttpClient`, recording: the HAR written from its recording
/// hides the secrets rmcp sends (its `auth_header`, custom headers, the URL's) and the
/// server's session id.
#[cfg(feature = "rmcp")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_rmcp_recording_shows_no_secret() {
    use std::collections::HashMap;

    use mcp_verdict::adapters::rmcp::{Recording, VerdictHttpClient};
    use rmcp::model::{ClientConfig, ProtocolVersion as RmcpVersion};
    use rmcp::transport::StreamableHttpClientTransport;
    use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
    use rmcp::{ClientLifecycleMode, ClientServiceExt};

    support::bounded(async {
        let server = support::rmcp_server(support::Mode::Legacy).await;
        let recording = Recording::new();
        // The policy also hides the custom header whose name says nothing (as a `-H` would).
        let policy = mcp_verdict::Redaction::on().with_user_header("X-Tenant", TENANT);
        let http = VerdictHttpClient::new(reqwest::Client::new(), |_: &mcp_verdict::Verdict| {})
            .with_redaction(policy)
            .with_recording(&recording);
        let mut custom = HashMap::new();
        for (n, v) in [
            ("cookie", COOKIE),
            ("proxy-authorization", PROXY_AUTHORIZATION),
            ("x-api-key", API_KEY),
            ("x-auth-token", AUTH_TOKEN),
            ("x-tenant", TENANT),
        ] {
            custom.insert(n.parse().unwrap(), v.parse().unwrap());
        }
        let config = StreamableHttpClientTransportConfig::with_uri(secret_url(&server.url))
            .auth_header("SECRET-authorization-a1")
            .custom_headers(custom);
        let transport = StreamableHttpClientTransport::with_client(http, config);
        let client = ClientConfig::default()
            .with_protocol_version(RmcpVersion::V_2025_11_25)
            .serve_with_lifecycle(transport, ClientLifecycleMode::Initialize)
            .await
            .expect("rmcp connects");
        support::list_and_call(&client).await;
        client.cancel().await.expect("rmcp closes");
        for _ in 0..100 {
            if recording.in_progress() == 0 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let entries = recording.entries();
        assert!(entries.len() >= 4, "{entries:?}");
        let mut har = Vec::new();
        mcp_verdict::har::write(&entries, &mut har).unwrap();
        let mut leaks = Leaks::default();
        leaks.check("rmcp recording (HAR)", &har);
        leaks.assert_none();
        // The server's session id (a UUID this test cannot know) is a stand-in wherever it is.
        let text = String::from_utf8(har).unwrap();
        let doc: Value = serde_json::from_str(&text).unwrap();
        let mut sessions = 0;
        for e in doc["log"]["entries"].as_array().unwrap() {
            for side in ["request", "response"] {
                for h in e[side]["headers"].as_array().into_iter().flatten() {
                    if h["name"]
                        .as_str()
                        .unwrap()
                        .eq_ignore_ascii_case("mcp-session-id")
                    {
                        sessions += 1;
                        let v = h["value"].as_str().unwrap();
                        assert!(v.starts_with("<redacted-"), "{v}");
                    }
                }
            }
        }
        assert!(sessions > 0, "{text}");
    })
    .await;
}
