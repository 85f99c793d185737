//! A small HTTP/1.1 MCP server on tokio that misbehaves on purpose.
//!
//! Written on raw TCP rather than an HTTP framework because the faults live below what a
//! framework lets you do: a chunked body cut without its last chunk, a TCP reset mid-stream, one
//! byte per chunk. `/mcp` is a correct server (2026-07-28 stateless and 2025-11-25 with
//! sessions); `/mcp/<scenario>` is the same server with the scenario's fault on `tools/call`.

use std::collections::HashMap;
use std::io;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::Instant;

use super::fixtures;
use super::http::{self, RequestError, RequestHead};
use super::scenarios::{self, Ending, Era, Reply, Step};
use crate::adapters::lock;

/// A "never ending" stream still ends after this long, so nothing runs unbounded.
const HANG_LIMIT: Duration = Duration::from_secs(600);

/// What one fault server may hold, and for how long. Worst-case memory is about
/// `max_connections × (max_head + 8 KiB) + max_bodies_in_flight` plus the replies being written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ServeLimits {
    /// Open connections at once; one more is answered 503 and closed.
    pub max_connections: usize,
    /// Largest request head (431 past it).
    pub max_head: usize,
    /// Largest request body (413 past it).
    pub max_body: usize,
    /// Request bodies held at once, all connections together; a request that would go past it
    /// is answered 503 with `Retry-After: 1` and its connection closed.
    pub max_bodies_in_flight: usize,
    /// A keep-alive connection with no request starting for this long is closed.
    pub idle_timeout: Duration,
    /// From a request's first byte to the end of its head (slowloris): 408 and close.
    pub head_timeout: Duration,
    /// From the end of the head to the end of the body: 408 and close.
    pub body_timeout: Duration,
}

impl Default for ServeLimits {
    fn default() -> Self {
        ServeLimits {
            max_connections: 256,
            max_head: 64 * 1024,
            max_body: 4 * 1024 * 1024,
            max_bodies_in_flight: 64 * 1024 * 1024,
            idle_timeout: Duration::from_secs(30),
            head_timeout: Duration::from_secs(10),
            body_timeout: Duration::from_secs(30),
        }
    }
}

struct Shared {
    next_session: AtomicU64,
    /// Last-Event-ID → the event that completes the interrupted stream.
    resumes: Mutex<HashMap<String, Vec<u8>>>,
    limits: ServeLimits,
    connections: Arc<Semaphore>,
    /// One permit per byte of request body held.
    body_bytes: Arc<Semaphore>,
    /// Sessions ended by `DELETE`: answered 404 afterwards (bounded, oldest forgotten first).
    ended: Mutex<std::collections::VecDeque<String>>,
}

/// How many ended session ids are remembered.
const MAX_ENDED: usize = 4096;

impl Shared {
    fn new(limits: ServeLimits) -> Self {
        Shared {
            next_session: AtomicU64::new(0),
            resumes: Mutex::new(HashMap::new()),
            ended: Mutex::new(std::collections::VecDeque::new()),
            limits,
            connections: Arc::new(Semaphore::new(limits.max_connections.max(1))),
            body_bytes: Arc::new(Semaphore::new(
                limits.max_bodies_in_flight.min(Semaphore::MAX_PERMITS),
            )),
        }
    }
}

/// A running fault server.
#[derive(Debug)]
pub struct FaultServer {
    addr: SocketAddr,
    task: tokio::task::JoinHandle<()>,
}

impl FaultServer {
    /// Binds `addr` (e.g. `127.0.0.1:0`) and serves in the background on the current runtime.
    pub async fn start(addr: &str) -> io::Result<FaultServer> {
        FaultServer::start_with(addr, ServeLimits::default()).await
    }

    /// Like [`start`](Self::start), under `limits`.
    pub async fn start_with(addr: &str, limits: ServeLimits) -> io::Result<FaultServer> {
        let listener = TcpListener::bind(addr).await?;
        let addr = listener.local_addr()?;
        let task = tokio::spawn(serve_with(listener, limits));
        Ok(FaultServer { addr, task })
    }

    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The endpoint of a scenario (`None`: the correct server).
    pub fn url(&self, scenario: Option<&str>) -> String {
        match scenario {
            Some(name) => format!("http://{}/mcp/{name}", self.addr),
            None => format!("http://{}/mcp", self.addr),
        }
    }
}

impl Drop for FaultServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Accepts connections until the task is dropped, under the default [`ServeLimits`].
pub async fn serve(listener: TcpListener) {
    serve_with(listener, ServeLimits::default()).await
}

/// Accepts connections until the task is dropped. Past `max_connections` a new connection gets
/// 503 and is closed at once, so held-open sockets cannot starve the server of descriptors.
pub async fn serve_with(listener: TcpListener, limits: ServeLimits) {
    let shared = Arc::new(Shared::new(limits));
    loop {
        let Ok((mut stream, _)) = listener.accept().await else {
            tokio::time::sleep(Duration::from_millis(10)).await;
            continue;
        };
        let _ = stream.set_nodelay(true);
        match shared.connections.clone().try_acquire_owned() {
            Ok(permit) => {
                tokio::spawn(connection(stream, shared.clone(), permit));
            }
            Err(_) => {
                tokio::spawn(async move {
                    let refuse = write_refusal(&mut stream, 503, "too many connections", true);
                    let _ = tokio::time::timeout(Duration::from_secs(1), refuse).await;
                });
            }
        }
    }
}

/// A request read whole: its head, its body, and the share of the body budget it holds.
struct HttpRequest {
    method: String,
    path: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
    _budget: Option<OwnedSemaphorePermit>,
}

impl HttpRequest {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// Why a connection stops reading requests.
enum ReadEnd {
    /// The peer closed (or went idle) between requests: close quietly.
    Quiet,
    /// Refuse with this status and reason, then close.
    Refuse(u16, String),
}

impl From<RequestError> for ReadEnd {
    fn from(e: RequestError) -> Self {
        ReadEnd::Refuse(e.status(), e.to_string())
    }
}

async fn connection(mut stream: TcpStream, shared: Arc<Shared>, _permit: OwnedSemaphorePermit) {
    let Ok(local) = stream.local_addr() else {
        return;
    };
    let mut buf = Vec::with_capacity(4096);
    loop {
        let req = match read_request(&mut stream, &mut buf, &shared, local).await {
            Ok(r) => r,
            Err(ReadEnd::Quiet) => return,
            Err(ReadEnd::Refuse(status, why)) => {
                let write = write_refusal(&mut stream, status, &why, status == 503);
                let _ = tokio::time::timeout(Duration::from_secs(1), write).await;
                return;
            }
        };
        match handle(&mut stream, &shared, req).await {
            Ok(true) => continue,
            _ => return,
        }
    }
}

/// Reads from `stream` into `buf` until `deadline`. `Ok(0)` at EOF; `Err` when the deadline
/// passed or the read failed.
async fn read_more(
    stream: &mut TcpStream,
    buf: &mut Vec<u8>,
    deadline: Instant,
) -> Result<usize, bool> {
    let mut chunk = [0u8; 8192];
    match tokio::time::timeout_at(deadline, stream.read(&mut chunk)).await {
        Ok(Ok(n)) => {
            buf.extend_from_slice(&chunk[..n]);
            Ok(n)
        }
        Ok(Err(_)) => Err(false),
        Err(_) => Err(true),
    }
}

/// Reads one request under the limits: the head strictly ([`http::parse_head`], then the Host
/// check against the address the connection arrived on), the body within its deadline and the
/// global body budget.
async fn read_request(
    stream: &mut TcpStream,
    buf: &mut Vec<u8>,
    shared: &Shared,
    local: std::net::SocketAddr,
) -> Result<HttpRequest, ReadEnd> {
    let limits = &shared.limits;
    // Idle until a request starts, then the head has `head_timeout` to arrive whole.
    let mut deadline = after(limits.idle_timeout);
    let mut started = !buf.is_empty();
    if started {
        deadline = after(limits.head_timeout);
    }
    let head: RequestHead = loop {
        if let Some(head) = http::parse_head(buf, limits.max_head, limits.max_body)? {
            break head;
        }
        match read_more(stream, buf, deadline).await {
            Ok(0) => return Err(ReadEnd::Quiet),
            Ok(_) if !started => {
                started = true;
                deadline = after(limits.head_timeout);
            }
            Ok(_) => {}
            Err(true) if started => {
                return Err(ReadEnd::Refuse(
                    408,
                    "request head not received in time".into(),
                ));
            }
            Err(_) => return Err(ReadEnd::Quiet),
        }
    };
    http::check_host(&head, local)?;
    let len = head.content_length;
    // The body budget is taken before the body is read, so bodies in flight stay bounded.
    let budget = match len {
        0 => None,
        n => {
            let permits = u32::try_from(n).unwrap_or(u32::MAX);
            match shared.body_bytes.clone().try_acquire_many_owned(permits) {
                Ok(p) => Some(p),
                Err(_) => {
                    return Err(ReadEnd::Refuse(
                        503,
                        "request bodies in flight are at the server's limit".into(),
                    ));
                }
            }
        }
    };
    buf.drain(..head.head_len);
    let deadline = after(limits.body_timeout);
    while buf.len() < len {
        match read_more(stream, buf, deadline).await {
            Ok(0) | Err(false) => return Err(ReadEnd::Quiet),
            Ok(_) => {}
            Err(true) => {
                return Err(ReadEnd::Refuse(
                    408,
                    "request body not received in time".into(),
                ));
            }
        }
    }
    let body = buf.drain(..len).collect();
    Ok(HttpRequest {
        method: head.method,
        path: head.path,
        headers: head.headers,
        body,
        _budget: budget,
    })
}

/// `d` from now; a duration too long to represent waits (practically) forever, never panics.
fn after(d: Duration) -> Instant {
    let now = Instant::now();
    now.checked_add(d)
        .unwrap_or_else(|| now + Duration::from_secs(100 * 365 * 86_400))
}

/// A refusal that closes the connection.
async fn write_refusal(
    stream: &mut TcpStream,
    status: u16,
    why: &str,
    retry: bool,
) -> io::Result<()> {
    let mut headers = vec![
        ("Content-Type".to_owned(), "text/plain".to_owned()),
        ("Connection".to_owned(), "close".to_owned()),
    ];
    if retry {
        headers.push(("Retry-After".to_owned(), "1".to_owned()));
    }
    write_body(stream, status, &headers, why.as_bytes()).await?;
    stream.shutdown().await
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        202 => "Accepted",
        400 => "Bad Request",
        403 => "Forbidden",
        408 => "Request Timeout",
        413 => "Content Too Large",
        431 => "Request Header Fields Too Large",
        404 => "Not Found",
        405 => "Method Not Allowed",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        _ => "",
    }
}

async fn write_body(
    stream: &mut TcpStream,
    status: u16,
    headers: &[(String, String)],
    body: &[u8],
) -> io::Result<bool> {
    let mut head = format!("HTTP/1.1 {status} {}\r\n", reason(status));
    for (n, v) in headers {
        head.push_str(&format!("{n}: {v}\r\n"));
    }
    head.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
    stream.write_all(&[head.as_bytes(), body].concat()).await?;
    Ok(true)
}

async fn write_plain(stream: &mut TcpStream, status: u16, text: &str) -> io::Result<bool> {
    let headers = [("Content-Type".to_owned(), "text/plain".to_owned())];
    write_body(stream, status, &headers, text.as_bytes()).await
}

async fn write_json(
    stream: &mut TcpStream,
    status: u16,
    extra: &[(String, String)],
    value: &Value,
) -> io::Result<bool> {
    let mut headers = vec![("Content-Type".to_owned(), "application/json".to_owned())];
    headers.extend_from_slice(extra);
    write_body(stream, status, &headers, value.to_string().as_bytes()).await
}

async fn chunk(stream: &mut TcpStream, bytes: &[u8]) -> io::Result<()> {
    if bytes.is_empty() {
        return Ok(());
    }
    let mut out = format!("{:x}\r\n", bytes.len()).into_bytes();
    out.extend_from_slice(bytes);
    out.extend_from_slice(b"\r\n");
    stream.write_all(&out).await
}

/// Writes an SSE reply. Returns whether the connection may be reused.
async fn write_sse(stream: &mut TcpStream, steps: &[Step], ending: Ending) -> io::Result<bool> {
    stream
        .write_all(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n\
              X-Accel-Buffering: no\r\nTransfer-Encoding: chunked\r\n\r\n",
        )
        .await?;
    for step in steps {
        match step {
            Step::Send(bytes) => chunk(stream, bytes).await?,
            Step::Drip(bytes) => {
                for b in bytes {
                    chunk(stream, std::slice::from_ref(b)).await?;
                    stream.flush().await?;
                    tokio::task::yield_now().await;
                }
            }
            Step::Sleep(ms) => tokio::time::sleep(Duration::from_millis(*ms)).await,
        }
    }
    match ending {
        Ending::Clean => {
            stream.write_all(b"0\r\n\r\n").await?;
            Ok(true)
        }
        Ending::Cut => {
            stream.shutdown().await?;
            Ok(false)
        }
        Ending::Reset => {
            stream.set_zero_linger()?;
            Ok(false)
        }
        Ending::Hang => {
            let until = tokio::time::Instant::now() + HANG_LIMIT;
            while tokio::time::Instant::now() < until {
                chunk(stream, b": keepalive\n\n").await?;
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            Ok(false)
        }
    }
}

/// The tools every path offers, with the annotations that decide retry safety.
fn tools() -> Value {
    let mut list = fault_tools();
    if let Value::Array(items) = &mut list {
        items.extend(fixtures::tools());
    }
    list
}

fn fault_tools() -> Value {
    let schema = json!({"type": "object", "properties": {"message": {"type": "string"}}});
    json!([
        {"name": "echo", "description": "Returns its message.", "inputSchema": schema,
         "annotations": {"readOnlyHint": true}},
        {"name": "lookup", "description": "Reads a record.", "inputSchema": {"type": "object"},
         "annotations": {"readOnlyHint": true}},
        {"name": "progress", "description": "Reports progress, then returns.", "inputSchema": {"type": "object"},
         "annotations": {"readOnlyHint": true}},
        {"name": "fail", "description": "Always fails (isError).", "inputSchema": {"type": "object"},
         "annotations": {"readOnlyHint": false, "idempotentHint": true}},
        {"name": "pay", "description": "Moves money. Not idempotent.", "inputSchema": {"type": "object"},
         "annotations": {"readOnlyHint": false, "destructiveHint": true, "idempotentHint": false}}
    ])
}

async fn handle(stream: &mut TcpStream, shared: &Shared, req: HttpRequest) -> io::Result<bool> {
    let scenario = match req.path.split('?').next().unwrap_or("") {
        "/mcp" | "/mcp/" => None,
        p => match p.strip_prefix("/mcp/") {
            Some(name) => match scenarios::find(name) {
                Some(s) => Some(s),
                None => {
                    return write_plain(
                        stream,
                        404,
                        &format!("no scenario {name:?}; see serve-faults --list"),
                    )
                    .await;
                }
            },
            None => {
                return write_plain(stream, 404, "the MCP endpoint is /mcp or /mcp/<scenario>")
                    .await;
            }
        },
    };
    let era = scenario.as_ref().map_or(Era::Stateless, |s| s.era);
    // A session ended by DELETE is gone: 404, so the client knows to initialize again.
    if req.method != "DELETE"
        && req
            .header("mcp-session-id")
            .is_some_and(|sid| lock(&shared.ended).iter().any(|e| e == sid))
    {
        return write_plain(stream, 404, "session terminated").await;
    }
    match req.method.as_str() {
        "POST" => {}
        "GET" => {
            if let Some(last) = req.header("last-event-id") {
                let pending = lock(&shared.resumes).remove(last);
                if let Some(event) = pending {
                    return write_sse(stream, &[Step::Send(event)], Ending::Clean).await;
                }
            }
            return write_body(stream, 405, &[("Allow".into(), "POST".into())], b"").await;
        }
        "DELETE" => {
            if let Some(sid) = req.header("mcp-session-id") {
                let mut ended = lock(&shared.ended);
                if !ended.iter().any(|e| e == sid) {
                    if ended.len() == MAX_ENDED {
                        ended.pop_front();
                    }
                    ended.push_back(sid.to_owned());
                }
            }
            return write_body(stream, 200, &[], b"").await;
        }
        _ => return write_body(stream, 405, &[("Allow".into(), "POST".into())], b"").await,
    }
    let Ok(msg) = serde_json::from_slice::<Value>(&req.body) else {
        let err = json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "Parse error"}});
        return write_json(stream, 400, &[], &err).await;
    };
    let id = msg.get("id").cloned().filter(|v| !v.is_null());
    let method = msg.get("method").and_then(Value::as_str).unwrap_or("");
    let Some(id) = id.filter(|_| !method.is_empty()) else {
        // A notification or a client's response: accepted, no body.
        return write_body(stream, 202, &[], b"").await;
    };
    let params = msg.get("params").cloned().unwrap_or(json!({}));
    let stateless = req.header("mcp-protocol-version") == Some("2026-07-28");
    let result = |mut r: Value| {
        if stateless {
            r["resultType"] = json!("complete");
        }
        json!({"jsonrpc": "2.0", "id": id, "result": r})
    };
    // 2026-07-28 list and discover results are cacheable: `cacheScope` and `ttlMs` are required.
    let cacheable = |mut r: Value| {
        if stateless {
            r["cacheScope"] = json!("public");
            r["ttlMs"] = json!(0);
        }
        result(r)
    };
    let server_info =
        json!({"name": "mcp-verdict serve-faults", "version": env!("CARGO_PKG_VERSION")});
    match method {
        "server/discover" if era == Era::Legacy => write_body(stream, 404, &[], b"").await,
        "server/discover" => {
            let r = cacheable(json!({"supportedVersions": ["2026-07-28", "2025-11-25"],
                                  "capabilities": {"tools": {}}, "serverInfo": server_info}));
            write_json(stream, 200, &[], &r).await
        }
        "initialize" => {
            let asked = params
                .get("protocolVersion")
                .and_then(Value::as_str)
                .unwrap_or("");
            let version = if ["2025-11-25", "2025-06-18", "2025-03-26"].contains(&asked) {
                asked
            } else {
                "2025-11-25"
            };
            let n = shared.next_session.fetch_add(1, Ordering::Relaxed);
            let r = result(
                json!({"protocolVersion": version, "capabilities": {"tools": {}}, "serverInfo": server_info}),
            );
            write_json(
                stream,
                200,
                &[("Mcp-Session-Id".into(), format!("session-{n}"))],
                &r,
            )
            .await
        }
        "ping" => write_json(stream, 200, &[], &result(json!({}))).await,
        "tools/list" => write_json(stream, 200, &[], &cacheable(json!({"tools": tools()}))).await,
        "tools/call" => {
            call_tool(
                stream,
                shared,
                scenario.map(|s| s.name),
                &id,
                &params,
                stateless,
            )
            .await
        }
        _ => {
            let err = json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": format!("Method not found: {method}")}});
            write_json(stream, if stateless { 404 } else { 200 }, &[], &err).await
        }
    }
}

async fn call_tool(
    stream: &mut TcpStream,
    shared: &Shared,
    scenario: Option<&str>,
    id: &Value,
    params: &Value,
    stateless: bool,
) -> io::Result<bool> {
    let tool = params.get("name").and_then(Value::as_str).unwrap_or("");
    // `arguments._fault` picks a scenario per call, so one soak run can mix faults.
    let by_argument = params
        .get("arguments")
        .and_then(|a| a.get("_fault"))
        .and_then(Value::as_str)
        .and_then(scenarios::find);
    let scenario = by_argument.as_ref().map(|s| s.name).or(scenario);
    let token = params
        .get("_meta")
        .and_then(|m| m.get("progressToken"))
        .cloned();
    let normal = match tool {
        "echo" => {
            let text = params
                .get("arguments")
                .and_then(|a| a.get("message"))
                .and_then(Value::as_str)
                .unwrap_or("echo");
            scenarios::text_result(text, false, stateless)
        }
        "lookup" => scenarios::text_result("record 42: found", false, stateless),
        "progress" => scenarios::text_result("done", false, stateless),
        "fail" => scenarios::text_result("the tool failed on purpose", true, stateless),
        "pay" => scenarios::text_result("paid 10 EUR", false, stateless),
        _ => match fixtures::call(tool, stateless) {
            Some(r) => r,
            None => {
                let err = json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32602, "message": format!("Unknown tool: {tool}")}});
                return write_json(stream, 200, &[], &err).await;
            }
        },
    };
    let ok = json!({"jsonrpc": "2.0", "id": id, "result": normal});
    if scenario == Some("input-required") {
        let answered = params.get("requestState").and_then(Value::as_str) == Some("state-1")
            && params
                .get("inputResponses")
                .and_then(|r| r.get("confirm"))
                .is_some();
        if answered {
            return write_json(stream, 200, &[], &ok).await;
        }
        let ask = json!({"jsonrpc": "2.0", "id": id, "result": {
            "resultType": "input_required",
            "inputRequests": {"confirm": {"method": "elicitation/create", "params": {
                "mode": "form", "message": "Confirm the payment?",
                "requestedSchema": {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}}}},
            "requestState": "state-1"}});
        return write_json(stream, 200, &[], &ask).await;
    }
    if scenario == Some("sse-priming-resume") {
        let finale = format!("id: ev-2\nevent: message\ndata: {ok}\n\n").into_bytes();
        lock(&shared.resumes).insert("ev-1".into(), finale);
    }
    let token_value = token.clone().unwrap_or(json!("none"));
    let reply = match scenario.and_then(|s| scenarios::reply(s, id, &normal, &token_value)) {
        Some(r) => r,
        None if tool == "progress" && token.is_some() => {
            scenarios::reply("sse-progress", id, &normal, &token_value).unwrap_or(Reply::Body {
                status: 200,
                headers: vec![],
                body: vec![],
            })
        }
        None => return write_json(stream, 200, &[], &ok).await,
    };
    match reply {
        Reply::Body {
            status,
            headers,
            body,
        } => write_body(stream, status, &headers, &body).await,
        Reply::Sse { steps, ending } => write_sse(stream, &steps, ending).await,
    }
}
