//! A small HTTP/1.1 MCP server on tokio that misbehaves on purpose.
//!
//! Written on raw TCP rather than an HTTP framework because the faults live below what a
//! framework lets you do: a chunked body cut without its last chunk, a TCP reset mid-stream, one
//! byte per chunk. `/mcp` is a correct server (2026-07-28 stateless and 2025-11-25 with
//! sessions); `/mcp/<scenario>` is the same server with the scenario's fault on `tools/call`.

use std::collections::{HashMap, VecDeque};
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

use super::auth_faults;
use super::extension_faults;
use super::fixtures;
use super::http::{self, RequestError, RequestHead};
use super::input_required;
use super::methods::{self, Answer};
use super::replies;
use super::request_checks;
use super::scenarios;
use super::tasks::{self, TaskStore};
use super::vocab::{Action, Ctx, Ending, Era, Reply, Scenario, Step};
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
    /// Last-Event-ID → the event that completes the interrupted stream (bounded: emptied when
    /// full).
    resumes: Mutex<HashMap<String, Vec<u8>>>,
    limits: ServeLimits,
    connections: Arc<Semaphore>,
    /// One permit per byte of request body held.
    body_bytes: Arc<Semaphore>,
    /// Sessions ended by `DELETE`: answered 404 afterwards (bounded, oldest forgotten first).
    ended: Mutex<VecDeque<String>>,
    /// Sessions a scenario expired: answered 404 with `-32001` afterwards (bounded likewise).
    expired: Mutex<VecDeque<String>>,
    /// `<scenario> <session>` pairs that got their [`Action::First`] fault (bounded likewise).
    faulted: Mutex<VecDeque<String>>,
    /// `<session> <id>` of the client's answers to server requests (bounded likewise).
    answers: Mutex<VecDeque<String>>,
    /// `<scenario> <session>` → calls answered so far, for [`Action::AfterCalls`] (bounded:
    /// emptied when full).
    calls: Mutex<HashMap<String, u32>>,
    /// `--auth-token`: every MCP request must carry `Authorization: Bearer <token>`.
    auth_token: Option<String>,
    /// The tasks of the correct endpoint (bounded, see `tasks.rs`).
    tasks: TaskStore,
}

/// How many ended session ids are remembered.
const MAX_ENDED: usize = 4096;

/// Adds `item` to a bounded memory unless it is there; the oldest goes first.
fn remember(list: &Mutex<VecDeque<String>>, item: &str) {
    let mut list = lock(list);
    if !list.iter().any(|e| e == item) {
        if list.len() == MAX_ENDED {
            list.pop_front();
        }
        list.push_back(item.to_owned());
    }
}

fn remembers(list: &Mutex<VecDeque<String>>, item: &str) -> bool {
    lock(list).iter().any(|e| e == item)
}

impl Shared {
    fn new(limits: ServeLimits, auth_token: Option<String>) -> Self {
        Shared {
            calls: Mutex::new(HashMap::new()),
            auth_token,
            tasks: TaskStore::default(),
            next_session: AtomicU64::new(0),
            resumes: Mutex::new(HashMap::new()),
            ended: Mutex::new(VecDeque::new()),
            expired: Mutex::new(VecDeque::new()),
            faulted: Mutex::new(VecDeque::new()),
            answers: Mutex::new(VecDeque::new()),
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
        FaultServer::start_protected(addr, limits, None).await
    }

    /// Like [`start_with`](Self::start_with); with `auth_token`, a protected resource: every
    /// MCP request needs `Authorization: Bearer <auth_token>` (401 with a challenge otherwise).
    pub async fn start_protected(
        addr: &str,
        limits: ServeLimits,
        auth_token: Option<String>,
    ) -> io::Result<FaultServer> {
        let listener = TcpListener::bind(addr).await?;
        let addr = listener.local_addr()?;
        let task = tokio::spawn(serve_protected(listener, limits, auth_token));
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
    serve_protected(listener, limits, None).await
}

/// [`serve_with`], requiring `Authorization: Bearer <auth_token>` when one is given.
pub async fn serve_protected(
    listener: TcpListener,
    limits: ServeLimits,
    auth_token: Option<String>,
) {
    let shared = Arc::new(Shared::new(limits, auth_token));
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

/// Whose stream is being written: for the steps that wait on the client's answers.
#[derive(Clone, Copy)]
struct Peer<'a> {
    shared: &'a Shared,
    session: Option<&'a str>,
}

impl Peer<'_> {
    fn answer_key(&self, id: &str) -> String {
        format!("{} {id}", self.session.unwrap_or(""))
    }

    /// Waits (polling) until the answer to `id` arrived, at most `ms`.
    async fn await_answer(&self, id: &str, ms: u64) {
        let key = self.answer_key(id);
        let until = tokio::time::Instant::now() + Duration::from_millis(ms);
        while tokio::time::Instant::now() < until {
            let arrived = {
                let mut answers = lock(&self.shared.answers);
                let at = answers.iter().position(|a| *a == key);
                at.and_then(|at| answers.remove(at)).is_some()
            };
            if arrived {
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
}

/// How an SSE reply goes on the wire.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Framing {
    /// Chunked, with `X-Accel-Buffering: no` (an nginx in front passes events on as they come).
    Chunked,
    /// Delimited by the close, no `X-Accel-Buffering`: an HTTP/1.0-style streamer. An nginx in
    /// front with `proxy_buffering on` (its default) holds such a body until a buffer fills or
    /// the body ends, which is how a buffering proxy is met in practice.
    Close,
}

/// Writes an SSE reply. Returns whether the connection may be reused.
async fn write_sse(
    stream: &mut TcpStream,
    peer: Peer<'_>,
    steps: &[Step],
    ending: Ending,
    framing: Framing,
) -> io::Result<bool> {
    let head: &[u8] = match framing {
        Framing::Chunked => {
            b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n\
              X-Accel-Buffering: no\r\nTransfer-Encoding: chunked\r\n\r\n"
        }
        Framing::Close => {
            b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n\
              Connection: close\r\n\r\n"
        }
    };
    stream.write_all(head).await?;
    for step in steps {
        match step {
            Step::Send(bytes) if framing == Framing::Close => {
                stream.write_all(bytes).await?;
                stream.flush().await?;
            }
            Step::Send(bytes) => chunk(stream, bytes).await?,
            Step::Drip(bytes) => {
                for b in bytes {
                    match framing {
                        Framing::Chunked => chunk(stream, std::slice::from_ref(b)).await?,
                        Framing::Close => stream.write_all(std::slice::from_ref(b)).await?,
                    }
                    stream.flush().await?;
                    tokio::task::yield_now().await;
                }
            }
            Step::Sleep(ms) => tokio::time::sleep(Duration::from_millis(*ms)).await,
            Step::AwaitAnswer(id, ms) => {
                stream.flush().await?;
                peer.await_answer(id, *ms).await;
            }
        }
    }
    if framing == Framing::Close {
        // The close is the end of the body: a clean end, whatever the ending says (a reset
        // still resets).
        if ending == Ending::Reset {
            stream.set_zero_linger()?;
        } else {
            stream.shutdown().await?;
        }
        return Ok(false);
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
        items.extend(tasks::tools());
        items.extend(input_required::tools());
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
         "annotations": {"readOnlyHint": false, "destructiveHint": false, "idempotentHint": true}},
        {"name": "pay", "description": "Moves money. Not idempotent.", "inputSchema": {"type": "object"},
         "annotations": {"readOnlyHint": false, "destructiveHint": true, "idempotentHint": false}}
    ])
}

/// Writes `reply`. Returns whether the connection may be reused.
async fn write_reply(stream: &mut TcpStream, peer: Peer<'_>, reply: Reply) -> io::Result<bool> {
    match reply {
        Reply::Body {
            status,
            headers,
            body,
        } => write_body(stream, status, &headers, &body).await,
        Reply::After { ms, reply } => {
            tokio::time::sleep(Duration::from_millis(ms)).await;
            Box::pin(write_reply(stream, peer, *reply)).await
        }
        Reply::Sse { steps, ending } => {
            write_sse(stream, peer, &steps, ending, Framing::Chunked).await
        }
        Reply::SseBufferable { steps, ending } => {
            write_sse(stream, peer, &steps, ending, Framing::Close).await
        }
    }
}

fn allow_post() -> Reply {
    Reply::Body {
        status: 405,
        headers: vec![("Allow".into(), "POST".into())],
        body: Vec::new(),
    }
}

/// The scenario a path names: `Ok(None)` for the correct server, `Err` a 404 to send.
fn route(path: &str) -> Result<Option<Scenario>, String> {
    match path.split('?').next().unwrap_or("") {
        "/mcp" | "/mcp/" => Ok(None),
        p => match p.strip_prefix("/mcp/") {
            Some(name) => scenarios::find(name)
                .map(Some)
                .ok_or_else(|| format!("no scenario {name:?}; see serve-faults --list")),
            None => Err("the MCP endpoint is /mcp or /mcp/<scenario>".into()),
        },
    }
}

/// `http://host` as the client addressed the server (the Host header, checked on reading).
fn origin_of(req: &HttpRequest) -> String {
    format!("http://{}", req.header("host").unwrap_or("127.0.0.1"))
}

async fn handle(stream: &mut TcpStream, shared: &Shared, req: HttpRequest) -> io::Result<bool> {
    let peer = Peer {
        shared,
        session: None,
    };
    let path = req.path.split('?').next().unwrap_or("");
    if req.method == "GET"
        && (path == auth_faults::METADATA_PATH
            || path.starts_with(&format!("{}/", auth_faults::METADATA_PATH)))
    {
        return write_reply(stream, peer, auth_faults::metadata(&origin_of(&req))).await;
    }
    if let Some(token) = &shared.auth_token
        && let Some(refusal) =
            auth_faults::refuse(req.header("authorization"), token, &origin_of(&req))
    {
        return write_reply(stream, peer, refusal).await;
    }
    let scenario = match route(&req.path) {
        Ok(s) => s,
        Err(why) => return write_plain(stream, 404, &why).await,
    };
    if let Some(sid) = req
        .header("mcp-session-id")
        .filter(|_| req.method != "DELETE")
    {
        // A session ended by DELETE is gone: 404, so the client knows to initialize again.
        if remembers(&shared.ended, sid) {
            return write_plain(stream, 404, "session terminated").await;
        }
        if remembers(&shared.expired, sid) {
            let gone = json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32001, "message": "Session not found"}});
            return write_json(stream, 404, &[], &gone).await;
        }
    }
    let peer = Peer {
        shared,
        session: req.header("mcp-session-id"),
    };
    match req.method.as_str() {
        "POST" => handle_post(stream, shared, scenario.as_ref(), &req).await,
        "GET" => write_reply(stream, peer, on_get(shared, scenario.as_ref(), &req)).await,
        "DELETE" => write_reply(stream, peer, on_delete(shared, scenario.as_ref(), &req)).await,
        _ => write_reply(stream, peer, allow_post()).await,
    }
}

/// A `GET`: the rest of a parked stream, else the scenario's own answer, else 405.
fn on_get(shared: &Shared, scenario: Option<&Scenario>, req: &HttpRequest) -> Reply {
    let last = req.header("last-event-id");
    if let Some(event) = last.and_then(|l| lock(&shared.resumes).remove(l)) {
        return Reply::Sse {
            steps: vec![Step::Send(event)],
            ending: Ending::Clean,
        };
    }
    match scenario.and_then(|s| s.on_get) {
        Some(answer) => answer(last),
        None => allow_post(),
    }
}

/// A `DELETE`: the scenario's own answer, else 200 and the session ends.
fn on_delete(shared: &Shared, scenario: Option<&Scenario>, req: &HttpRequest) -> Reply {
    if let Some(answer) = scenario.and_then(|s| s.on_delete) {
        return answer();
    }
    if let Some(sid) = req.header("mcp-session-id") {
        remember(&shared.ended, sid);
    }
    replies::empty(200)
}

/// How one POSTed request is answered: its id, params and revision.
struct Posted<'a> {
    id: Value,
    params: Value,
    stateless: bool,
    session: Option<&'a str>,
    origin: String,
}

impl Posted<'_> {
    fn result(&self, mut r: Value) -> Value {
        if self.stateless {
            r["resultType"] = json!("complete");
        }
        json!({"jsonrpc": "2.0", "id": self.id, "result": r})
    }

    /// 2026-07-28 list and discover results are cacheable: `cacheScope` and `ttlMs` are required.
    fn cacheable(&self, mut r: Value) -> Value {
        if self.stateless {
            r["cacheScope"] = json!("public");
            r["ttlMs"] = json!(0);
        }
        self.result(r)
    }

    fn answer(&self, answer: Answer) -> Value {
        match answer {
            Answer::Result(r) => self.result(r),
            Answer::Cacheable(r) => self.cacheable(r),
            Answer::Error(e) => json!({"jsonrpc": "2.0", "id": self.id, "error": e}),
        }
    }
}

fn server_info() -> Value {
    json!({"name": "mcp-verdict serve-faults", "version": env!("CARGO_PKG_VERSION")})
}

async fn handle_post(
    stream: &mut TcpStream,
    shared: &Shared,
    scenario: Option<&Scenario>,
    req: &HttpRequest,
) -> io::Result<bool> {
    let Ok(msg) = serde_json::from_slice::<Value>(&req.body) else {
        let err = json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "Parse error"}});
        return write_json(stream, 400, &[], &err).await;
    };
    let id = msg.get("id").cloned().filter(|v| !v.is_null());
    let method = msg.get("method").and_then(Value::as_str).unwrap_or("");
    let Some(id) = id.filter(|_| !method.is_empty()) else {
        // A notification or a client's response: accepted, no body. An answer is kept for the
        // stream that waits on it (bounded, like the ended sessions).
        if let Some(answered) = msg.get("id").and_then(Value::as_str) {
            let peer = Peer {
                shared,
                session: req.header("mcp-session-id"),
            };
            remember(&shared.answers, &peer.answer_key(answered));
        }
        return write_body(stream, 202, &[], b"").await;
    };
    let posted = Posted {
        id,
        params: msg.get("params").cloned().unwrap_or(json!({})),
        stateless: req.header("mcp-protocol-version") == Some("2026-07-28"),
        session: req.header("mcp-session-id"),
        origin: origin_of(req),
    };
    if scenario.is_none() {
        let header = |name: &str| req.header(name).map(str::to_owned);
        if let Err(refusal) = request_checks::check(method, &posted.params, &header, &tools()) {
            let err = json!({"jsonrpc": "2.0", "id": posted.id, "error": refusal.0});
            return write_json(stream, 400, &[], &err).await;
        }
    }
    // 2026-07-28 removed the handshake and ping: the correct endpoint answers them as unknown.
    let removed = posted.stateless && scenario.is_none();
    if let Some(s) = scenario.filter(|s| s.method == method && method != "tools/call") {
        return method_fault(stream, shared, s, &posted, method).await;
    }
    let era = scenario.map_or(Era::Stateless, |s| s.era);
    if scenario.is_some_and(|s| s.name == extension_faults::DISCOVER_REFUSED)
        && method != "server/discover"
    {
        let peer = Peer {
            shared,
            session: None,
        };
        return write_reply(stream, peer, extension_faults::refusal()).await;
    }
    if let Some((status, body)) = extension_reply(shared, scenario, method, &posted) {
        return write_json(stream, status, &[], &body).await;
    }
    match method {
        "server/discover" if era == Era::Legacy => write_body(stream, 404, &[], b"").await,
        "server/discover" => {
            let mut capabilities = methods::capabilities(true);
            capabilities["extensions"] = json!({tasks::EXTENSION: {}});
            let r = posted.cacheable(json!({"supportedVersions": request_checks::SUPPORTED,
                                  "capabilities": capabilities, "serverInfo": server_info(),
                                  "_meta": {"io.modelcontextprotocol/serverInfo": server_info()}}));
            write_json(stream, 200, &[], &r).await
        }
        "initialize" if !removed => initialize(stream, shared, &posted).await,
        "ping" if !removed => write_json(stream, 200, &[], &posted.result(json!({}))).await,
        "tools/list" => {
            let r = posted.cacheable(json!({"tools": tools()}));
            write_json(stream, 200, &[], &r).await
        }
        "tools/call" => call_tool(stream, shared, scenario, &posted).await,
        _ => match methods::answer(method, &posted.params, posted.stateless) {
            Some(answer) => write_json(stream, 200, &[], &posted.answer(answer)).await,
            None => {
                let err = json!({"jsonrpc": "2.0", "id": posted.id, "error": {"code": -32601, "message": format!("Method not found: {method}")}});
                write_json(stream, if posted.stateless { 404 } else { 200 }, &[], &err).await
            }
        },
    }
}

/// The answers of the tasks extension and of input-required results (`tasks.rs`,
/// `input_required.rs`), with the 2026-07-28 routing-header check of the correct endpoint
/// before them; `None`: the request is not theirs.
fn extension_reply(
    shared: &Shared,
    scenario: Option<&Scenario>,
    method: &str,
    posted: &Posted<'_>,
) -> Option<tasks::Answer> {
    let (id, params) = (&posted.id, &posted.params);
    if let Some(s) = scenario {
        return tasks::fault_poll(s.name, method, id, params);
    }
    let tool = params.get("name").and_then(Value::as_str).unwrap_or("");
    match method {
        "tasks/get" | "tasks/update" | "tasks/cancel" => {
            Some(shared.tasks.request(method, id, params))
        }
        "tools/call" if params.pointer("/arguments/_fault").is_none() => {
            tasks::call(&shared.tasks, tool, id, params)
                .or_else(|| input_required::call(&shared.tasks, tool, id, params))
        }
        "prompts/get" => input_required::prompt(id, params),
        _ => None,
    }
}

async fn initialize(
    stream: &mut TcpStream,
    shared: &Shared,
    posted: &Posted<'_>,
) -> io::Result<bool> {
    let asked = posted
        .params
        .get("protocolVersion")
        .and_then(Value::as_str)
        .unwrap_or("");
    let version = if ["2025-11-25", "2025-06-18", "2025-03-26"].contains(&asked) {
        asked
    } else {
        "2025-11-25"
    };
    let n = shared.next_session.fetch_add(1, Ordering::Relaxed);
    let r = posted.result(
        json!({"protocolVersion": version, "capabilities": methods::capabilities(false), "serverInfo": server_info()}),
    );
    let sid = [("Mcp-Session-Id".to_owned(), format!("session-{n}"))];
    write_json(stream, 200, &sid, &r).await
}

/// The ordinary result of `tool`, or the JSON-RPC error for an unknown tool.
fn tool_result(tool: &str, params: &Value, stateless: bool) -> Result<Value, String> {
    let text = |t: &str| replies::text_result(t, false, stateless);
    Ok(match tool {
        "echo" => text(
            params
                .pointer("/arguments/message")
                .and_then(Value::as_str)
                .unwrap_or("echo"),
        ),
        "lookup" => text("record 42: found"),
        "progress" => text("done"),
        "fail" => replies::text_result("the tool failed on purpose", true, stateless),
        "pay" => text("paid 10 EUR"),
        // On a fault path the task and MRTR fixtures answer plainly: the path's fault is the point.
        _ if is_extension_fixture(tool) => text("answered without a task on a fault path"),
        _ => fixtures::call(tool, stateless).ok_or_else(|| format!("Unknown tool: {tool}"))?,
    })
}

/// Whether `tool` is one of the task or input-required fixtures (`tasks.rs`,
/// `input_required.rs`).
fn is_extension_fixture(tool: &str) -> bool {
    tasks::tools()
        .chain(input_required::tools())
        .any(|t| t["name"] == tool)
}

async fn call_tool(
    stream: &mut TcpStream,
    shared: &Shared,
    scenario: Option<&Scenario>,
    posted: &Posted<'_>,
) -> io::Result<bool> {
    let params = &posted.params;
    let tool = params.get("name").and_then(Value::as_str).unwrap_or("");
    // `arguments._fault` picks a scenario per call, so one soak run can mix faults.
    let by_argument = params
        .pointer("/arguments/_fault")
        .and_then(Value::as_str)
        .and_then(scenarios::find);
    // A scenario whose fault is on another method leaves `tools/call` correct.
    let scenario = by_argument
        .as_ref()
        .or(scenario)
        .filter(|s| s.method == "tools/call");
    let normal = match tool_result(tool, params, posted.stateless) {
        Ok(r) => r,
        Err(why) => {
            let err = json!({"jsonrpc": "2.0", "id": posted.id, "error": {"code": -32602, "message": why}});
            return write_json(stream, 200, &[], &err).await;
        }
    };
    let token = params.pointer("/_meta/progressToken").cloned();
    let stand_in = json!("none");
    let ctx = Ctx {
        id: &posted.id,
        normal: &normal,
        token: token.as_ref().unwrap_or(&stand_in),
        params,
        origin: &posted.origin,
    };
    let action = scenario.map_or_else(
        || fixtures::act(tool, &ctx, posted.stateless),
        |s| s.act(&ctx),
    );
    let reply = resolve(shared, scenario, posted.session, action);
    let peer = Peer {
        shared,
        session: posted.session,
    };
    match reply {
        Some(reply) => write_reply(stream, peer, reply).await,
        None if tool == "progress" && token.is_some() => {
            write_reply(stream, peer, replies::progress_stream(&ctx)).await
        }
        None => write_json(stream, 200, &[], &ctx.ok()).await,
    }
}

/// A scenario's fault on a method other than `tools/call` ([`Scenario::method`]): its handler
/// gets the correct result as `normal`; a method the endpoint answers with an error is answered
/// so, unfaulted.
async fn method_fault(
    stream: &mut TcpStream,
    shared: &Shared,
    scenario: &Scenario,
    posted: &Posted<'_>,
    method: &str,
) -> io::Result<bool> {
    let answer = methods::answer(method, &posted.params, posted.stateless)
        .map(|a| posted.answer(a))
        .unwrap_or_else(|| json!({"jsonrpc": "2.0", "id": posted.id, "error": {"code": -32601, "message": "Method not found"}}));
    let Some(normal) = answer.get("result") else {
        return write_json(stream, 200, &[], &answer).await;
    };
    let stand_in = json!("none");
    let ctx = Ctx {
        id: &posted.id,
        normal,
        token: &stand_in,
        params: &posted.params,
        origin: &posted.origin,
    };
    let action = scenario.act(&ctx);
    let peer = Peer {
        shared,
        session: posted.session,
    };
    match resolve(shared, Some(scenario), posted.session, action) {
        Some(reply) => write_reply(stream, peer, reply).await,
        None => write_json(stream, 200, &[], &ctx.ok()).await,
    }
}

/// What `action` sends (`None`: the correct answer), keeping the state it needs: a parked
/// stream, an expired session, the calls a session made on the path.
fn resolve(
    shared: &Shared,
    scenario: Option<&Scenario>,
    session: Option<&str>,
    action: Action,
) -> Option<Reply> {
    match action {
        Action::Normal => None,
        Action::Reply(reply) => Some(reply),
        Action::Park { reply, key, later } => {
            // Bounded like the other memories: streams nobody resumed are forgotten when full.
            let mut resumes = lock(&shared.resumes);
            if resumes.len() >= MAX_ENDED && !resumes.contains_key(&key) {
                resumes.clear();
            }
            resumes.insert(key, later);
            Some(reply)
        }
        Action::Expire(reply) => {
            if let Some(sid) = session {
                remember(&shared.expired, sid);
            }
            Some(reply)
        }
        Action::First(reply) => {
            let key = format!(
                "{} {}",
                scenario.map_or("", |s| s.name),
                session.unwrap_or("")
            );
            let first = !remembers(&shared.faulted, &key);
            remember(&shared.faulted, &key);
            first.then_some(reply)
        }
        Action::AfterCalls(n, reply) => {
            let key = format!(
                "{} {}",
                scenario.map_or("", |s| s.name),
                session.unwrap_or("")
            );
            let mut calls = lock(&shared.calls);
            if calls.len() >= MAX_ENDED && !calls.contains_key(&key) {
                calls.clear();
            }
            let seen = calls.entry(key).or_insert(0);
            *seen = seen.saturating_add(1);
            (*seen > n).then_some(reply)
        }
    }
}
