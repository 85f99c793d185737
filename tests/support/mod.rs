//! Servers for the live tests, all on 127.0.0.1 with an OS-chosen port: a real rmcp
//! Streamable-HTTP server (hyper, no framework) and raw-tokio servers that misbehave on purpose.
//! Every server stops by itself: the rmcp one when its task is aborted (the [`Server`] guard),
//! the raw ones after a bounded number of connections and a bounded time.
#![allow(dead_code)]

use std::borrow::Cow;
use std::sync::Arc;
use std::time::Duration;

use hyper_util::rt::TokioIo;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ErrorData,
    Implementation, ListToolsResult, PaginatedRequestParams, ProgressNotificationParam,
    ProtocolVersion, ServerCapabilities, ServerConfig, Tool, ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{RoleServer, ServerHandler};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

/// How long any one live test may take before it fails as hung.
pub const TEST_BOUND: Duration = Duration::from_secs(120);

/// Runs `f` to completion within [`TEST_BOUND`]; a hang fails the test instead of stalling CI.
pub async fn bounded<F: std::future::Future>(f: F) -> F::Output {
    tokio::time::timeout(TEST_BOUND, f)
        .await
        .expect("the test finished within its bound")
}

/// A server task; aborted on drop.
pub struct Server {
    pub url: String,
    task: JoinHandle<()>,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// How the rmcp server is configured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// `legacy_session_mode: false`, every version rmcp knows: 2026-07-28 via `server/discover`.
    Modern,
    /// `legacy_session_mode: true`, versions up to 2025-11-25 only: `initialize` and sessions.
    Legacy,
    /// Like `Modern`, with `json_response: true` (JSON bodies where no notification is sent).
    ModernJson,
}

/// The test server's tools: `echo` (read-only), `fail` (`isError: true`), `progress` (three
/// `notifications/progress` before the result).
#[derive(Clone)]
struct Tools {
    mode: Mode,
}

fn schema() -> Arc<rmcp::model::JsonObject> {
    let value = serde_json::json!({"type": "object", "properties": {"text": {"type": "string"}}});
    match value {
        serde_json::Value::Object(map) => Arc::new(map),
        _ => unreachable!(),
    }
}

pub const PROGRESS_STEPS: u32 = 3;

impl ServerHandler for Tools {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("mcp-verdict-live-test", "1.0.0"))
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        match self.mode {
            Mode::Legacy => Cow::Borrowed(&[
                ProtocolVersion::V_2025_03_26,
                ProtocolVersion::V_2025_06_18,
                ProtocolVersion::V_2025_11_25,
            ]),
            Mode::Modern | Mode::ModernJson => Cow::Borrowed(ProtocolVersion::KNOWN_VERSIONS),
        }
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(vec![
            Tool::new("echo", "Echoes its text", schema())
                .with_annotations(ToolAnnotations::new().read_only(true)),
            Tool::new("fail", "Always reports failure", schema()),
            Tool::new("progress", "Reports progress, then succeeds", schema()),
        ]))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let text = request
            .arguments
            .as_ref()
            .and_then(|a| a.get("text"))
            .and_then(|t| t.as_str())
            .unwrap_or("")
            .to_owned();
        match request.name.as_ref() {
            "echo" => Ok(CallToolResult::success(vec![ContentBlock::text(text)]).into()),
            "fail" => Ok(CallToolResult::error(vec![ContentBlock::text("it failed")]).into()),
            "progress" => {
                if let Some(token) = context.meta.get_progress_token() {
                    for step in 1..=PROGRESS_STEPS {
                        let param = ProgressNotificationParam::new(token.clone(), f64::from(step))
                            .with_total(f64::from(PROGRESS_STEPS));
                        let _ = context.peer.notify_progress(param).await;
                    }
                }
                Ok(CallToolResult::success(vec![ContentBlock::text("done")]).into())
            }
            other => Err(ErrorData::invalid_params(
                format!("tool {other:?} not found"),
                None,
            )),
        }
    }
}

/// Starts the rmcp server.
pub async fn rmcp_server(mode: Mode) -> Server {
    let config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(mode == Mode::Legacy)
        .with_json_response(mode == Mode::ModernJson)
        .with_sse_keep_alive(None);
    let service: StreamableHttpService<Tools, LocalSessionManager> =
        StreamableHttpService::new(move || Ok(Tools { mode }), Default::default(), config);
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("address");
    let task = tokio::spawn(async move {
        let mut connections = tokio::task::JoinSet::new();
        while let Ok((stream, _)) = listener.accept().await {
            let service = service.clone();
            connections.spawn(async move {
                let hyper_service = hyper::service::service_fn(move |req| {
                    let service = service.clone();
                    async move { Ok::<_, std::convert::Infallible>(service.handle(req).await) }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), hyper_service)
                    .await;
            });
        }
    });
    Server {
        url: format!("http://{addr}/mcp"),
        task,
    }
}

/// What a raw server does after reading one request.
#[derive(Debug, Clone)]
pub enum Raw {
    /// `200 text/event-stream` (chunked), these events, then the socket is closed mid-body.
    AbortChunked(Vec<String>),
    /// `200 text/event-stream` delimited by the connection, these events, then a clean close.
    CloseDelimited(Vec<String>),
    /// `200 text/event-stream` (chunked), then nothing until the client goes away.
    Hang,
    /// A `POST` breaks off as `AbortChunked` does; a `GET` (the resumption) gets these events
    /// and a clean end.
    AbortThenResume(Vec<String>, Vec<String>),
    /// This status line and JSON body, with a `Content-Length`.
    Status(u16, String),
}

/// A raw HTTP/1.1 server answering at most `connections` requests, each as `raw` says.
pub async fn raw_server(raw: Raw, connections: usize) -> Server {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("address");
    let task = tokio::spawn(async move {
        for _ in 0..connections {
            let Ok((stream, _)) = listener.accept().await else {
                return;
            };
            let raw = raw.clone();
            tokio::spawn(async move {
                let _ = tokio::time::timeout(Duration::from_secs(20), answer(stream, raw)).await;
            });
        }
    });
    Server {
        url: format!("http://{addr}/mcp"),
        task,
    }
}

/// Reads one request (head and `Content-Length` body).
pub async fn read_request(stream: &mut TcpStream) -> std::io::Result<Vec<u8>> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            return Ok(buf);
        }
        buf.extend_from_slice(&chunk[..n]);
        let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") else {
            continue;
        };
        let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
        let length = head
            .lines()
            .find_map(|l| l.strip_prefix("content-length:"))
            .and_then(|v| v.trim().parse::<usize>().ok())
            .unwrap_or(0);
        while buf.len() < end + 4 + length {
            let n = stream.read(&mut chunk).await?;
            if n == 0 {
                break;
            }
            buf.extend_from_slice(&chunk[..n]);
        }
        return Ok(buf);
    }
}

/// A verdict without the fields that name where it was seen, as JSON: the index, and how the
/// reader let go of a stream that was already complete (`eof` or `open` depends on timing).
pub fn essence(mut v: mcp_verdict::Verdict) -> String {
    use mcp_verdict::End;
    v.index = 0;
    if v.complete && matches!(v.end, End::Eof | End::Open) {
        v.end = End::Eof;
    }
    serde_json::to_string(&v).unwrap()
}

/// Sends `request` on a new connection to `addr`; returns all it reads until the peer closes
/// (at most 5 s).
pub async fn exchange_raw(addr: std::net::SocketAddr, request: &[u8]) -> String {
    let mut c = TcpStream::connect(addr).await.unwrap();
    let _ = c.write_all(request).await;
    let mut out = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(5), c.read_to_end(&mut out)).await;
    String::from_utf8_lossy(&out).into_owned()
}

/// `data` as one chunk of a chunked body.
pub fn chunk(data: &str) -> String {
    format!("{:x}\r\n{data}\r\n", data.len())
}

async fn answer(mut stream: TcpStream, raw: Raw) -> std::io::Result<()> {
    let request = read_request(&mut stream).await?;
    let raw = match raw {
        Raw::AbortThenResume(_, resumed) if request.starts_with(b"GET ") => {
            Raw::CloseDelimited(resumed)
        }
        Raw::AbortThenResume(events, _) => Raw::AbortChunked(events),
        other => other,
    };
    match raw {
        Raw::AbortChunked(events) => {
            let mut out = String::from(
                "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n",
            );
            for e in &events {
                out.push_str(&chunk(e));
            }
            stream.write_all(out.as_bytes()).await?;
            stream.flush().await?;
            // No terminating chunk: the body breaks off.
        }
        Raw::CloseDelimited(events) => {
            let mut out = String::from(
                "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n",
            );
            for e in &events {
                out.push_str(e);
            }
            stream.write_all(out.as_bytes()).await?;
            stream.flush().await?;
        }
        Raw::Hang => {
            stream
                .write_all(
                    b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n",
                )
                .await?;
            stream.flush().await?;
            // Wait for the client to close (read returns 0), bounded by the caller's timeout.
            let mut sink = [0u8; 256];
            while stream.read(&mut sink).await? > 0 {}
        }
        Raw::Status(status, body) => {
            let head = format!(
                "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            stream.write_all(head.as_bytes()).await?;
            stream.write_all(body.as_bytes()).await?;
            stream.flush().await?;
        }
        Raw::AbortThenResume(..) => unreachable!("resolved above"),
    }
    stream.shutdown().await.ok();
    Ok(())
}

/// A `notifications/progress` event for `token`.
pub fn progress_event(token: &str, progress: u32) -> String {
    format!(
        "data: {{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{{\"progressToken\":\"{token}\",\"progress\":{progress}}}}}\n\n"
    )
}

/// Collects what a proxy gives: verdicts per exchange, records of unjudged exchanges, and
/// logical calls.
#[cfg(feature = "proxy")]
#[derive(Default)]
pub struct ProxyVerdicts {
    verdicts: std::sync::Mutex<Vec<mcp_verdict::Verdict>>,
    /// `(index, note, analysis failed)` of exchanges without a verdict.
    unjudged: std::sync::Mutex<Vec<(u64, String, bool)>>,
    calls: std::sync::Mutex<Vec<mcp_verdict::Call>>,
}

#[cfg(feature = "proxy")]
impl mcp_verdict::proxy::Sink for ProxyVerdicts {
    fn exchange(&self, record: &mcp_verdict::proxy::ExchangeRecord<'_>) {
        match record.verdict {
            Some(v) => self.verdicts.lock().unwrap().push(v.clone()),
            None => self.unjudged.lock().unwrap().push((
                record.index,
                record.note.unwrap_or_default().to_owned(),
                record.analysis_failed,
            )),
        }
    }
}

#[cfg(feature = "proxy")]
impl mcp_verdict::proxy::CallSink for ProxyVerdicts {
    fn call(&self, call: &mcp_verdict::Call) {
        self.calls.lock().unwrap().push(call.clone());
    }
}

#[cfg(feature = "proxy")]
impl ProxyVerdicts {
    /// The verdicts so far, in forwarding order.
    pub fn sorted(&self) -> Vec<mcp_verdict::Verdict> {
        let mut v = self.verdicts.lock().unwrap().clone();
        v.sort_by_key(|v| v.index);
        v
    }

    /// Exchanges without a verdict so far, in forwarding order.
    pub fn unjudged(&self) -> Vec<(u64, String, bool)> {
        let mut v = self.unjudged.lock().unwrap().clone();
        v.sort();
        v
    }

    /// The calls handed on so far, in the order they began.
    pub fn calls(&self) -> Vec<mcp_verdict::Call> {
        self.calls.lock().unwrap().clone()
    }
}

/// A `POST` of `body` to `path` on 127.0.0.1 as a 2026-07-28 client sends it, closing after.
pub fn post(path: &str, body: &str) -> String {
    format!(
        "POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
}

/// What an rmcp client does against [`rmcp_server`] in the live tests: `tools/list` (three
/// tools), then `echo` (a success), `fail` (`isError`) and `progress` (a success after progress
/// notifications; rmcp puts a progress token on every request).
pub async fn list_and_call(client: &rmcp::Peer<rmcp::RoleClient>) {
    assert_eq!(client.list_all_tools().await.expect("tools/list").len(), 3);
    let mut args = serde_json::Map::new();
    args.insert("text".into(), serde_json::json!("hi"));
    let echo = client
        .call_tool(CallToolRequestParams::new("echo").with_arguments(args))
        .await
        .expect("echo");
    assert_eq!(echo.is_error, Some(false));
    let fail = client
        .call_tool(CallToolRequestParams::new("fail"))
        .await
        .expect("fail");
    assert_eq!(fail.is_error, Some(true));
    let progress = client
        .call_tool(CallToolRequestParams::new("progress"))
        .await
        .expect("progress");
    assert_eq!(progress.is_error, Some(false));
}

/// A runtime that serves in the background while a test drives the binary.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap()
}

/// The built-in fault server on an OS-chosen loopback port.
#[cfg(feature = "tools")]
pub fn fault_server(rt: &tokio::runtime::Runtime) -> mcp_verdict::faults::FaultServer {
    rt.block_on(mcp_verdict::faults::FaultServer::start("127.0.0.1:0"))
        .unwrap()
}

/// Waits for `child` at most `limit`, killing it past that (the test then fails on the code).
pub fn wait_bounded(mut child: std::process::Child, limit: Duration) -> std::process::Output {
    let start = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > limit {
            let _ = child.kill();
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}
