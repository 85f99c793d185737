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

use super::scenarios::{self, Ending, Era, Reply, Step};
use crate::adapters::lock;

const MAX_HEAD: usize = 64 * 1024;
const MAX_BODY: usize = 4 * 1024 * 1024;
/// A "never ending" stream still ends after this long, so nothing runs unbounded.
const HANG_LIMIT: Duration = Duration::from_secs(600);

#[derive(Default)]
struct Shared {
    next_session: AtomicU64,
    /// Last-Event-ID → the event that completes the interrupted stream.
    resumes: Mutex<HashMap<String, Vec<u8>>>,
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
        let listener = TcpListener::bind(addr).await?;
        let addr = listener.local_addr()?;
        let task = tokio::spawn(serve(listener));
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

/// Accepts connections until the task is dropped.
pub async fn serve(listener: TcpListener) {
    let shared = Arc::new(Shared::default());
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            tokio::time::sleep(Duration::from_millis(10)).await;
            continue;
        };
        let _ = stream.set_nodelay(true);
        tokio::spawn(connection(stream, shared.clone()));
    }
}

struct HttpRequest {
    method: String,
    path: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl HttpRequest {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

async fn connection(mut stream: TcpStream, shared: Arc<Shared>) {
    let mut buf = Vec::with_capacity(4096);
    loop {
        let req = match read_request(&mut stream, &mut buf).await {
            Ok(Some(r)) => r,
            Ok(None) => return,
            Err(e) => {
                let _ = write_plain(&mut stream, 400, &e.to_string()).await;
                return;
            }
        };
        match handle(&mut stream, &shared, req).await {
            Ok(true) => continue,
            _ => return,
        }
    }
}

/// Reads one request. `Ok(None)` when the peer closed between requests.
async fn read_request(
    stream: &mut TcpStream,
    buf: &mut Vec<u8>,
) -> io::Result<Option<HttpRequest>> {
    let head_end = loop {
        if let Some(i) = find(buf, b"\r\n\r\n") {
            break i;
        }
        if buf.len() > MAX_HEAD {
            return Err(io::Error::other("request head too large"));
        }
        let mut chunk = [0u8; 4096];
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            return if buf.is_empty() {
                Ok(None)
            } else {
                Err(io::Error::other("connection closed mid-request"))
            };
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let request_line = lines.next().unwrap_or("");
    let mut parts = request_line.split(' ');
    let method = parts.next().unwrap_or("").to_owned();
    let path = parts.next().unwrap_or("").to_owned();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_owned(), v.trim().to_owned()))
        .collect();
    let get = |name: &str| {
        headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.clone())
    };
    if get("transfer-encoding").is_some() {
        return Err(io::Error::other("chunked request bodies are not supported"));
    }
    let len: usize = get("content-length")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    if len > MAX_BODY {
        return Err(io::Error::other("request body too large"));
    }
    buf.drain(..head_end + 4);
    while buf.len() < len {
        let mut chunk = [0u8; 8192];
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            return Err(io::Error::other("connection closed mid-body"));
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    let body = buf.drain(..len).collect();
    Ok(Some(HttpRequest {
        method,
        path,
        headers,
        body,
    }))
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// `localhost`, `127.x.y.z` or `[::1]`, with or without a port.
fn is_loopback_authority(authority: &str) -> bool {
    let host = if let Some(rest) = authority.strip_prefix('[') {
        rest.split(']').next().unwrap_or("")
    } else {
        authority.rsplit_once(':').map_or(authority, |(h, p)| {
            if p.chars().all(|c| c.is_ascii_digit()) {
                h
            } else {
                authority
            }
        })
    };
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        202 => "Accepted",
        400 => "Bad Request",
        403 => "Forbidden",
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
    // DNS-rebinding protection: a loopback server answers loopback names only (403 otherwise).
    let foreign = |v: Option<&str>, strip_scheme: bool| {
        v.is_some_and(|v| {
            let v = if strip_scheme {
                v.split("://").nth(1).unwrap_or(v)
            } else {
                v
            };
            !is_loopback_authority(v)
        })
    };
    if foreign(req.header("host"), false) || foreign(req.header("origin"), true) {
        let err = json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32600, "message": "Host or Origin is not a loopback name"}});
        return write_json(stream, 403, &[], &err).await;
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
        "DELETE" => return write_body(stream, 200, &[], b"").await,
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
    let server_info =
        json!({"name": "mcp-verdict serve-faults", "version": env!("CARGO_PKG_VERSION")});
    match method {
        "server/discover" if era == Era::Legacy => write_body(stream, 404, &[], b"").await,
        "server/discover" => {
            let r = result(json!({"supportedVersions": ["2026-07-28", "2025-11-25"],
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
        "tools/list" => write_json(stream, 200, &[], &result(json!({"tools": tools()}))).await,
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
        _ => {
            let err = json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32602, "message": format!("Unknown tool: {tool}")}});
            return write_json(stream, 200, &[], &err).await;
        }
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
