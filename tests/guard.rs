//! The guard of issue 30 (one exchange path): a corpus of malformed and unusual requests, sent in
//! order over real loopback HTTP through every live path this crate has, judged live and judged
//! again by `replay` of that path's own recording. Row by row, the outcome and the set of rule
//! ids must be the same: a live path that decides on its own what an exchange is, which request
//! rules apply or how a batch splits shows up here as a row that differs.
//!
//! Paths (each is a function giving a [`Run`]; add one, e.g. the rmcp transport, by writing
//! another and listing it in the test):
//! - `proxy`: raw HTTP/1.1 bytes through [`Proxy`] to the fault server's correct endpoint, every
//!   row in one proxy session; live verdicts from a [`Sink`], replay of [`Proxy::recorder`].
//! - `client`: the reqwest [`Client`] against the same kind of server, one client (one session),
//!   for the rows it can send; live verdicts as its calls return them, replay of its recorder.
//!   Rows it cannot send say why ([`Via::Skip`]).
//!
//! The corpus walks three revisions in one session, so that the session-level rules have
//! something to compare: 2026-07-28 (stateless) first, then an `initialize` for 2025-03-26
//! (batches allowed), then one for 2025-06-18 (the version header, no batches), ending with the
//! client's own `DELETE` and a request after it. Every server answer is deterministic.
//!
//! Run with `-- --nocapture` for the table of every row on every path. Written before the single
//! driver (issue 30, deliverable 1) as its acceptance test: on the code it was written against,
//! the proxy runs no request-shape checks (`shape.*` on the request) and neither live path
//! splits a batch into rows as replay does, so those rows fail until the driver lands.
#![cfg(feature = "proxy")]

use std::collections::{BTreeMap, BTreeSet};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_verdict::adapters::{Client, Deadlines, Handshake};
use mcp_verdict::faults::FaultServer;
use mcp_verdict::proxy::{Config, ExchangeRecord, Proxy, Sink};
use mcp_verdict::replay::{Item, replay_har};
use mcp_verdict::{Limits, ProtocolVersion, Verdict, har};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// The whole test, every path, must finish within this (it takes well under a second).
const BOUND: Duration = Duration::from_secs(60);
/// One row's exchange, from connecting to the proxy reporting it.
const ROW_BOUND: Duration = Duration::from_secs(5);

/// Stands for the session id the server gave at the latest `initialize` (raw rows only; the
/// `Client` keeps its own).
const SID: &str = "$SID";

// --- the corpus --------------------------------------------------------------------------------

/// How the reqwest [`Client`] sends a row, or why it cannot.
#[derive(Debug, Clone)]
enum Via {
    /// `set_protocol(version)`, then `send(message)`: the client adds the headers (and on
    /// 2026-07-28 the `_meta` members) `version` needs.
    Send(ProtocolVersion, Value),
    /// `handshake(Handshake::Initialize(version))`: `initialize` and `notifications/initialized`.
    Handshake(ProtocolVersion),
    /// `set_protocol(version)`, then `resume(last_event_id)`.
    Resume(ProtocolVersion, &'static str),
    /// `set_protocol(version)`, then `terminate()`.
    Terminate(ProtocolVersion),
    /// The client cannot send this request; why.
    Skip(&'static str),
}

/// One request of the corpus, as sent on the wire by the raw path.
#[derive(Debug, Clone)]
struct Row {
    name: &'static str,
    method: &'static str,
    /// Sent in this order after `Host` and `Connection: close` (and before `Content-Length`
    /// on a POST). A value may hold [`SID`].
    headers: Vec<(String, String)>,
    body: Vec<u8>,
    client: Via,
}

const JSON_AND_SSE: &str = "application/json, text/event-stream";
const V26: ProtocolVersion = ProtocolVersion::V2026_07_28;
const V0326: ProtocolVersion = ProtocolVersion::V2025_03_26;
const V0618: ProtocolVersion = ProtocolVersion::V2025_06_18;
const V1125: ProtocolVersion = ProtocolVersion::V2025_11_25;

/// The 2026-07-28 `_meta` members a request carries.
fn meta26() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}
    })
}

/// A 2026-07-28 POST of `message` with every header that revision asks for: `Mcp-Method` from
/// its method and `Mcp-Name` from a string `params.name` (in the `=?base64?…?=` form when it is
/// not plain ASCII). The client sends the same message.
fn post26(name: &'static str, message: Value) -> Row {
    let mut headers = vec![
        ("Content-Type".to_owned(), "application/json".to_owned()),
        ("Accept".to_owned(), JSON_AND_SSE.to_owned()),
        ("MCP-Protocol-Version".to_owned(), "2026-07-28".to_owned()),
    ];
    if let Some(m) = message.get("method").and_then(Value::as_str) {
        headers.push(("Mcp-Method".to_owned(), m.to_owned()));
    }
    let tool = message.pointer("/params/name").and_then(Value::as_str);
    if let Some(tool) = tool.filter(|_| message.get("id").is_some()) {
        headers.push(("Mcp-Name".to_owned(), tool.to_owned()));
    }
    Row {
        name,
        method: "POST",
        headers,
        body: message.to_string().into_bytes(),
        client: Via::Send(V26, message),
    }
}

/// A POST in the current 2025 session (`Mcp-Session-Id` the server gave), with
/// `MCP-Protocol-Version: version` when given. The client sends the same message under
/// `version` (or under 2025-03-26, which sends no version header).
fn post25(name: &'static str, version: Option<ProtocolVersion>, message: Value) -> Row {
    let mut headers = vec![
        ("Content-Type".to_owned(), "application/json".to_owned()),
        ("Accept".to_owned(), JSON_AND_SSE.to_owned()),
        ("Mcp-Session-Id".to_owned(), SID.to_owned()),
    ];
    if let Some(v) = version {
        headers.push(("MCP-Protocol-Version".to_owned(), v.as_str().to_owned()));
    }
    Row {
        name,
        method: "POST",
        headers,
        body: message.to_string().into_bytes(),
        client: Via::Send(version.unwrap_or(V0326), message),
    }
}

/// A GET or DELETE with these headers and no body.
fn bodyless(name: &'static str, method: &'static str, headers: &[(&str, &str)], via: Via) -> Row {
    Row {
        name,
        method,
        headers: headers
            .iter()
            .map(|(n, v)| ((*n).to_owned(), (*v).to_owned()))
            .collect(),
        body: Vec::new(),
        client: via,
    }
}

impl Row {
    /// Sets header `name` (replacing any with that name) to `value`.
    fn set(mut self, name: &str, value: &str) -> Row {
        self.headers.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }

    /// Removes header `name`.
    fn unset(mut self, name: &str) -> Row {
        self.headers.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
        self
    }

    /// Sends these bytes as the body.
    fn raw_body(mut self, body: &[u8]) -> Row {
        self.body = body.to_vec();
        self
    }

    /// The client sends it another way, or not at all.
    fn client(mut self, via: Via) -> Row {
        self.client = via;
        self
    }
}

fn call(id: u64, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})
}

fn echo26(id: u64) -> Value {
    call(
        id,
        json!({"name": "echo", "arguments": {"message": "hi"}, "_meta": meta26()}),
    )
}

/// Why the client cannot send a row: it writes these itself.
const CLIENT_ROUTING: &str = "the Client always sends Mcp-Method and Mcp-Name on 2026-07-28";
const CLIENT_META: &str = "the Client adds the missing _meta members on 2026-07-28";
const CLIENT_VERSION: &str =
    "the Client sends the version header of a ProtocolVersion it knows, never another value";
const CLIENT_CONTENT: &str = "the Client always sends Content-Type: application/json and \
     Accept: application/json, text/event-stream on a POST";
const CLIENT_HEADERS: &str = "the Client's extra headers (ClientBuilder::header) go on every \
     request of its session, not on one";
const CLIENT_JSON: &str = "the Client POSTs serialized JSON-RPC messages only";
const CLIENT_SID: &str = "the Client sends the session id the server gave";
const CLIENT_HANDSHAKE: &str = "sent by the Client's handshake in the row before";
const CLIENT_LISTEN: &str = "Client::listen always asks for text/event-stream";

fn corpus() -> Vec<Row> {
    let padding = "p".repeat(48 << 10);
    let many: Vec<(String, String)> = (0..70)
        .map(|i| (format!("X-Extra-{i}"), format!("{i}")))
        .collect();
    let mut many_headers = post26(
        "2026 70 extra headers (more than the server reads)",
        json!({"jsonrpc": "2.0", "id": 14, "method": "tools/list", "params": {"_meta": meta26()}}),
    )
    .client(Via::Skip(CLIENT_HEADERS));
    many_headers.headers.extend(many);
    let init = |id: u64, v: &str| {
        json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {
            "protocolVersion": v, "capabilities": {},
            "clientInfo": {"name": "guard", "version": "1"}}})
    };
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let list = |id: u64| json!({"jsonrpc": "2.0", "id": id, "method": "tools/list"});
    vec![
        // --- 2026-07-28, stateless ---
        post26("2026 tools/call without Mcp-Method and Mcp-Name", echo26(1))
            .unset("Mcp-Method")
            .unset("Mcp-Name")
            .client(Via::Skip(CLIENT_ROUTING)),
        post26("2026 Mcp-Method names another method", echo26(2))
            .set("Mcp-Method", "tools/list")
            .client(Via::Skip(CLIENT_ROUTING)),
        post26(
            "2026 tools/call arguments is an array",
            call(3, json!({"name": "echo", "arguments": ["hi"], "_meta": meta26()})),
        ),
        post26(
            "2026 tools/call name is a number",
            call(4, json!({"name": 42, "arguments": {}, "_meta": meta26()})),
        ),
        post26(
            "2026 params._meta is a string",
            call(5, json!({"name": "echo", "arguments": {}, "_meta": "2026-07-28"})),
        ),
        post26(
            "2026 params is an array",
            json!({"jsonrpc": "2.0", "id": 6, "method": "tools/list", "params": [1, 2]}),
        ),
        post26(
            "2026 jsonrpc is \"1.0\"",
            json!({"jsonrpc": "1.0", "id": 7, "method": "tools/list", "params": {"_meta": meta26()}}),
        ),
        post26(
            "2026 request id is null",
            json!({"jsonrpc": "2.0", "id": null, "method": "tools/list", "params": {"_meta": meta26()}}),
        ),
        post26(
            "2026 request without _meta",
            call(8, json!({"name": "echo", "arguments": {}})),
        )
        .client(Via::Skip(CLIENT_META)),
        post26(
            "2026 _meta protocolVersion disagrees with the header",
            call(9, json!({"name": "echo", "arguments": {}, "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2025-11-25",
                "io.modelcontextprotocol/clientCapabilities": {}}})),
        ),
        post26("2026 MCP-Protocol-Version is not a date", echo26(10))
            .set("MCP-Protocol-Version", "latest")
            .client(Via::Skip(CLIENT_VERSION)),
        post26("2026 Content-Type: text/plain", echo26(11))
            .set("Content-Type", "text/plain")
            .client(Via::Skip(CLIENT_CONTENT)),
        post26("2026 Accept without text/event-stream", echo26(12))
            .set("Accept", "application/json")
            .client(Via::Skip(CLIENT_CONTENT)),
        post26(
            "2026 notifications/progress whose progress is a string",
            json!({"jsonrpc": "2.0", "method": "notifications/progress",
                   "params": {"progressToken": "t1", "progress": "half"}}),
        ),
        post26(
            "2026 JSON-RPC batch of two requests",
            json!([
                {"jsonrpc": "2.0", "id": 15, "method": "tools/list", "params": {"_meta": meta26()}},
                {"jsonrpc": "2.0", "id": 16, "method": "ping", "params": {"_meta": meta26()}}
            ]),
        ),
        post26(
            "2026 unknown method",
            json!({"jsonrpc": "2.0", "id": 17, "method": "tools/frobnicate", "params": {"_meta": meta26()}}),
        ),
        post26(
            "2026 oversized head (a 48 KiB header)",
            json!({"jsonrpc": "2.0", "id": 13, "method": "tools/list", "params": {"_meta": meta26()}}),
        )
        .set("X-Padding", &padding)
        .client(Via::Skip(CLIENT_HEADERS)),
        many_headers,
        bodyless(
            "2026 GET with Last-Event-ID",
            "GET",
            &[
                ("Accept", "text/event-stream"),
                ("MCP-Protocol-Version", "2026-07-28"),
                ("Last-Event-ID", "evt-1"),
            ],
            Via::Resume(V26, "evt-1"),
        ),
        bodyless(
            "2026 DELETE without a session",
            "DELETE",
            &[("MCP-Protocol-Version", "2026-07-28")],
            Via::Terminate(V26),
        ),
        // --- 2025-03-26: a session, batches allowed ---
        post25("setup: initialize 2025-03-26", None, init(20, "2025-03-26"))
            .unset("Mcp-Session-Id")
            .client(Via::Handshake(V0326)),
        post25("setup: notifications/initialized", None, initialized.clone())
            .client(Via::Skip(CLIENT_HANDSHAKE)),
        post25(
            "2025-03-26 batch of two requests",
            None,
            json!([list(21), {"jsonrpc": "2.0", "id": 22, "method": "ping"}]),
        ),
        post25(
            "2025-03-26 response POST with no server request waiting",
            None,
            json!({"jsonrpc": "2.0", "id": "srv-1", "result": {}}),
        ),
        post25("2025-03-26 empty POST body", None, json!(null))
            .raw_body(b"")
            .client(Via::Skip(CLIENT_JSON)),
        post25("2025-03-26 session id not visible ASCII", None, list(23))
            .set("Mcp-Session-Id", "s\u{e9}ssion \u{1f600}")
            .client(Via::Skip(CLIENT_SID)),
        post25(
            "2025-03-26 MCP-Protocol-Version header the session did not negotiate",
            Some(V0618),
            list(24),
        ),
        post25("2025-03-26 request without Accept", None, list(25))
            .unset("Accept")
            .client(Via::Skip(CLIENT_CONTENT)),
        // --- 2025-06-18: the version header, no batches ---
        post25("setup: initialize 2025-06-18", None, init(30, "2025-06-18"))
            .unset("Mcp-Session-Id")
            .client(Via::Handshake(V0618)),
        post25("setup: notifications/initialized", Some(V0618), initialized)
            .client(Via::Skip(CLIENT_HANDSHAKE)),
        post25(
            "2025-06-18 JSON-RPC batch",
            Some(V0618),
            json!([list(31), {"jsonrpc": "2.0", "id": 32, "method": "ping"}]),
        ),
        post25(
            "2025-06-18 no MCP-Protocol-Version after initialize",
            None,
            list(33),
        ),
        post25(
            "2025-06-18 MCP-Protocol-Version is not the negotiated one",
            Some(V1125),
            list(34),
        ),
        post25(
            "2025-06-18 tools/call without a name",
            Some(V0618),
            call(35, json!({"arguments": {"message": "hi"}})),
        ),
        bodyless(
            "2025-06-18 GET without text/event-stream in Accept",
            "GET",
            &[
                ("Accept", "application/json"),
                ("MCP-Protocol-Version", "2025-06-18"),
                ("Mcp-Session-Id", SID),
            ],
            Via::Skip(CLIENT_LISTEN),
        ),
        bodyless(
            "2025-06-18 GET with Last-Event-ID nothing resumes",
            "GET",
            &[
                ("Accept", "text/event-stream"),
                ("MCP-Protocol-Version", "2025-06-18"),
                ("Mcp-Session-Id", SID),
                ("Last-Event-ID", "evt-9"),
            ],
            Via::Resume(V0618, "evt-9"),
        ),
        bodyless(
            "2025-06-18 DELETE of the session",
            "DELETE",
            &[
                ("MCP-Protocol-Version", "2025-06-18"),
                ("Mcp-Session-Id", SID),
            ],
            Via::Terminate(V0618),
        ),
        post25(
            "2025-06-18 request after the client's own DELETE",
            Some(V0618),
            list(36),
        ),
    ]
}

// --- what a path gives ---------------------------------------------------------------------------

/// One verdict as the guard compares it: its place in a batch, its outcome, its rule ids.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Judged {
    batch_position: Option<u32>,
    /// The outcome's wire name, or [`NOT_JUDGED`].
    outcome: String,
    rules: BTreeSet<String>,
}

/// An exchange the path did not judge (not MCP to it).
const NOT_JUDGED: &str = "(not judged)";

impl Judged {
    fn of(v: &Verdict) -> Judged {
        Judged {
            batch_position: v.batch_position,
            outcome: v.outcome.as_str().to_owned(),
            rules: v
                .violations
                .iter()
                .map(|x| x.rule.as_str().to_owned())
                .collect(),
        }
    }

    fn not_judged() -> Judged {
        Judged {
            batch_position: None,
            outcome: NOT_JUDGED.to_owned(),
            rules: BTreeSet::new(),
        }
    }
}

impl std::fmt::Display for Judged {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let Some(p) = self.batch_position {
            write!(f, "[{p}] ")?;
        }
        f.write_str(&self.outcome)?;
        if !self.rules.is_empty() {
            let rules: Vec<&str> = self.rules.iter().map(String::as_str).collect();
            write!(f, " {{{}}}", rules.join(", "))?;
        }
        Ok(())
    }
}

fn show(list: &[Judged]) -> String {
    if list.is_empty() {
        return "(nothing)".to_owned();
    }
    list.iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(" + ")
}

/// What one path did with the corpus.
struct Run {
    path: &'static str,
    /// Per row: the exchange indices it made, or why the path could not send it.
    rows: Vec<Result<Vec<u64>, String>>,
    /// Every exchange judged live, by index (a batch may give several verdicts).
    live: BTreeMap<u64, Vec<Judged>>,
    /// The path's own recording, as HAR.
    har: Vec<u8>,
}

/// `replay` of a HAR recording (the streaming reader `mcp-verdict replay` uses), by index.
fn replayed(har: &[u8]) -> BTreeMap<u64, Vec<Judged>> {
    let mut out: BTreeMap<u64, Vec<Judged>> = BTreeMap::new();
    replay_har(har, Limits::default(), &mut |item| match item {
        Item::Verdict(v) => out.entry(v.index).or_default().push(Judged::of(&v)),
        Item::Skipped(s) => out.entry(s.index).or_default().push(Judged::not_judged()),
    })
    .expect("the recording replays");
    out
}

/// The row's verdicts in `by_index`: exchange by exchange, each in batch order.
fn gather(by_index: &BTreeMap<u64, Vec<Judged>>, indices: &[u64]) -> Vec<Judged> {
    let mut indices = indices.to_vec();
    indices.sort_unstable();
    let mut list = Vec::new();
    for i in indices {
        let mut one = by_index.get(&i).cloned().unwrap_or_default();
        one.sort();
        list.extend(one);
    }
    list
}

fn has_verdict(list: &[Judged]) -> bool {
    list.iter().any(|j| j.outcome != NOT_JUDGED)
}

/// Compares one path's live verdicts with the replay of its recording, row by row. Returns one
/// line per row that differs (or made no verdict) and per exchange no row accounts for, and
/// the table of every row.
fn compare(corpus: &[Row], run: &Run) -> (Vec<String>, Vec<String>) {
    let again = replayed(&run.har);
    let mut failures = Vec::new();
    let mut table = Vec::new();
    let mut claimed = BTreeSet::new();
    for (row, sent) in corpus.iter().zip(&run.rows) {
        let indices = match sent {
            Ok(indices) => indices,
            Err(why) => {
                table.push(format!("{:<7} {:<66} skipped: {why}", run.path, row.name));
                continue;
            }
        };
        claimed.extend(indices.iter().copied());
        let live = gather(&run.live, indices);
        let replay = gather(&again, indices);
        let same = live == replay;
        table.push(format!(
            "{:<7} {:<66} {} live: {}{}",
            run.path,
            row.name,
            if same { "  " } else { "!=" },
            show(&live),
            if same {
                String::new()
            } else {
                format!("  replay: {}", show(&replay))
            }
        ));
        if !has_verdict(&live) || !has_verdict(&replay) {
            failures.push(format!(
                "{} / {}: no verdict (exchanges {indices:?}; live {}, replayed {})",
                run.path,
                row.name,
                show(&live),
                show(&replay)
            ));
        } else if !same {
            failures.push(format!(
                "{} / {}:\n    live:     {}\n    replayed: {}",
                run.path,
                row.name,
                show(&live),
                show(&replay)
            ));
        }
    }
    for (side, by_index) in [("live", &run.live), ("replayed", &again)] {
        for (index, list) in by_index {
            if !claimed.contains(index) {
                failures.push(format!(
                    "{}: exchange {index} ({side}: {}) belongs to no row",
                    run.path,
                    show(list)
                ));
            }
        }
    }
    (failures, table)
}

// --- path: raw HTTP through the proxy -----------------------------------------------------------

/// The proxy's finished exchanges, each tagged with the row being sent when it finished.
#[derive(Default)]
struct Tagged {
    row: AtomicUsize,
    seen: Mutex<Vec<(usize, u64, Option<Judged>)>>,
}

impl Sink for Tagged {
    fn exchange(&self, record: &ExchangeRecord<'_>) {
        let row = self.row.load(Ordering::SeqCst);
        let judged = record.verdict.map(Judged::of);
        self.seen.lock().unwrap().push((row, record.index, judged));
    }
}

impl Tagged {
    fn indices_of(&self, row: usize) -> Vec<u64> {
        let seen = self.seen.lock().unwrap();
        let set: BTreeSet<u64> = seen
            .iter()
            .filter(|(r, _, _)| *r == row)
            .map(|(_, i, _)| *i)
            .collect();
        set.into_iter().collect()
    }
}

/// `row` as bytes on the wire, [`SID`] replaced by `sid`.
fn wire(row: &Row, addr: SocketAddr, sid: &str) -> Vec<u8> {
    let mut head = format!(
        "{} /mcp HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n",
        row.method
    );
    for (name, value) in &row.headers {
        head.push_str(&format!("{name}: {}\r\n", value.replace(SID, sid)));
    }
    if row.method == "POST" {
        head.push_str(&format!("Content-Length: {}\r\n", row.body.len()));
    }
    head.push_str("\r\n");
    let mut bytes = head.into_bytes();
    bytes.extend_from_slice(&row.body);
    bytes
}

/// Sends `bytes` on a new connection and reads the whole response (the connection closes).
async fn exchange(addr: SocketAddr, bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    let talk = async {
        let mut stream = TcpStream::connect(addr).await?;
        stream.write_all(bytes).await?;
        stream.read_to_end(&mut out).await
    };
    let _ = tokio::time::timeout(ROW_BOUND, talk).await;
    out
}

/// The `Mcp-Session-Id` of a response, if it has one.
fn session_id(response: &[u8]) -> Option<String> {
    let end = response.windows(4).position(|w| w == b"\r\n\r\n")?;
    String::from_utf8_lossy(&response[..end])
        .lines()
        .find_map(|line| {
            let (name, value) = line.split_once(':')?;
            name.trim()
                .eq_ignore_ascii_case("mcp-session-id")
                .then(|| value.trim().to_owned())
        })
}

/// Every row through one proxy, in order, to the fault server's correct endpoint.
async fn through_proxy(corpus: &[Row]) -> Run {
    let server = FaultServer::start("127.0.0.1:0").await.unwrap();
    let tagged = Arc::new(Tagged::default());
    let config = Config::new(server.url(None), "127.0.0.1:0".parse().unwrap());
    let proxy = Proxy::builder(config)
        .sink(tagged.clone())
        .record()
        .start()
        .await
        .expect("the proxy starts");
    let addr = proxy.addr();
    let mut sid = String::new();
    let mut rows = Vec::new();
    for (n, row) in corpus.iter().enumerate() {
        tagged.row.store(n, Ordering::SeqCst);
        let response = exchange(addr, &wire(row, addr, &sid)).await;
        if let Some(given) = session_id(&response) {
            sid = given;
        }
        // The proxy reports an exchange when its stream ends, a moment after the client read
        // it: wait for it, so that the next row is not tagged with this one's exchange.
        let waited = tokio::time::timeout(ROW_BOUND, async {
            while tagged.indices_of(n).is_empty() {
                tokio::time::sleep(Duration::from_millis(2)).await;
            }
        })
        .await;
        rows.push(match waited {
            Ok(()) => Ok(tagged.indices_of(n)),
            // Compared as a row with no exchange: reported as "no verdict".
            Err(_) => Ok(Vec::new()),
        });
    }
    // The rest of a batch's rows, if the proxy ever reports them apart, come with the first.
    tokio::time::sleep(Duration::from_millis(20)).await;
    let mut live: BTreeMap<u64, Vec<Judged>> = BTreeMap::new();
    for (_, index, judged) in tagged.seen.lock().unwrap().iter() {
        let judged = judged.clone().unwrap_or_else(Judged::not_judged);
        live.entry(*index).or_default().push(judged);
    }
    let mut har = Vec::new();
    proxy.recorder().unwrap().write(&mut har).unwrap();
    Run {
        path: "proxy",
        rows,
        live,
        har,
    }
}

// --- path: the reqwest Client ---------------------------------------------------------------------

/// The rows the [`Client`] can send, in order, with one client (one session).
async fn through_client(corpus: &[Row]) -> Run {
    let server = FaultServer::start("127.0.0.1:0").await.unwrap();
    let recorder = mcp_verdict::adapters::client::Recorder::default();
    let client = Client::builder(server.url(None))
        .deadlines(Deadlines {
            overall: Some(ROW_BOUND),
            ..Default::default()
        })
        .record(recorder.clone())
        .build()
        .unwrap();
    let mut live: BTreeMap<u64, Vec<Judged>> = BTreeMap::new();
    let mut rows = Vec::new();
    for row in corpus {
        let verdicts = match &row.client {
            Via::Skip(why) => {
                rows.push(Err((*why).to_owned()));
                continue;
            }
            Via::Send(version, message) => {
                client.set_protocol(*version);
                client.send(message.clone()).await.verdicts().await
            }
            Via::Handshake(version) => client.handshake(Handshake::Initialize(*version)).await,
            Via::Resume(version, last) => {
                client.set_protocol(*version);
                client.resume(last).await.verdicts().await
            }
            Via::Terminate(version) => {
                client.set_protocol(*version);
                client.terminate().await.verdicts().await
            }
        };
        rows.push(Ok(verdicts.iter().map(|v| v.index).collect()));
        for v in &verdicts {
            live.entry(v.index).or_default().push(Judged::of(v));
        }
    }
    let mut har = Vec::new();
    har::write(&recorder.lock().unwrap(), &mut har).unwrap();
    Run {
        path: "client",
        rows,
        live,
        har,
    }
}

// --- the guard ------------------------------------------------------------------------------------

/// Rows the client must be able to send, at the least (so that its comparison is not empty).
const CLIENT_MIN_ROWS: usize = 15;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_verdicts_equal_the_replay_of_each_paths_recording() {
    let corpus = corpus();
    assert!(
        corpus.len() >= 20,
        "the corpus has {} rows, fewer than 20",
        corpus.len()
    );
    let runs = tokio::time::timeout(BOUND, async {
        vec![through_proxy(&corpus).await, through_client(&corpus).await]
    })
    .await
    .expect("every path finished within its bound");

    let mut failures = Vec::new();
    let mut table = Vec::new();
    for run in &runs {
        assert_eq!(
            run.rows.len(),
            corpus.len(),
            "{}: a result per row",
            run.path
        );
        let sent = run.rows.iter().filter(|r| r.is_ok()).count();
        let least = if run.path == "client" {
            CLIENT_MIN_ROWS
        } else {
            corpus.len()
        };
        assert!(
            sent >= least,
            "{}: sent {sent} rows, fewer than {least}",
            run.path
        );
        let (f, t) = compare(&corpus, run);
        failures.extend(f);
        table.extend(t);
    }
    // The whole table, for `--nocapture` (what every row gave on every path).
    eprintln!("{}", table.join("\n"));
    assert!(
        failures.is_empty(),
        "{} row(s) judged differently live than by replay of the recording:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
