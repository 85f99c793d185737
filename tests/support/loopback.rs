//! The probe tests' loopback servers, which must answer in ways no framework would (a task
//! handle, a server request, a refused first call): a bounded server, requests read by hand,
//! and the CLI run beside them. Included by path (`#[path = "support/loopback.rs"] mod
//! loopback;`).
#![allow(dead_code)]

use std::future::Future;
use std::time::Duration;

use tokio::io::AsyncReadExt;
use tokio::net::{TcpListener, TcpStream};

/// A loopback server: its `http://…/mcp` URL and its accept task. It accepts at most `max`
/// connections and serves each with `serve`, given `limit` to finish (the tests stay bounded in
/// count and time).
pub async fn bounded_server<S, F>(
    max: usize,
    limit: Duration,
    serve: S,
) -> (String, tokio::task::JoinHandle<()>)
where
    S: Fn(TcpStream) -> F + Send + 'static,
    F: Future<Output = std::io::Result<()>> + Send + 'static,
{
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let url = format!("http://{}/mcp", listener.local_addr().expect("addr"));
    let task = tokio::spawn(async move {
        for _ in 0..max {
            let Ok((stream, _)) = listener.accept().await else {
                return;
            };
            let served = serve(stream);
            tokio::spawn(async move {
                let _ = tokio::time::timeout(limit, served).await;
            });
        }
    });
    (url, task)
}

/// The next request on `stream`: its head (as [`next_request`] gives it) and its body read as
/// JSON (`null` when it is not); `None` when the client closed the connection.
pub async fn next_message(
    stream: &mut TcpStream,
    buf: &mut Vec<u8>,
) -> std::io::Result<Option<(String, serde_json::Value)>> {
    Ok(next_request(stream, buf).await?.map(|(head, body)| {
        let message = serde_json::from_slice(&body).unwrap_or(serde_json::Value::Null);
        (head, message)
    }))
}

/// Runs the CLI with `args` off the runtime's threads (so the in-process servers keep
/// serving), within `limit`.
pub async fn cli(args: Vec<String>, limit: Duration) -> std::process::Output {
    let run = tokio::task::spawn_blocking(move || {
        std::process::Command::new(env!("CARGO_BIN_EXE_mcp-verdict"))
            .args(args)
            .output()
            .expect("run mcp-verdict")
    });
    tokio::time::timeout(limit, run)
        .await
        .expect("the CLI ends in time")
        .expect("join")
}

/// The next request on `stream`: its head lower-cased (request line and headers) and its body
/// (by `Content-Length`); `None` when the client closed the connection. `buf` keeps what was
/// read past the request for the next call.
pub async fn next_request(
    stream: &mut TcpStream,
    buf: &mut Vec<u8>,
) -> std::io::Result<Option<(String, Vec<u8>)>> {
    let mut chunk = [0u8; 4096];
    let end = loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break end;
        }
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            return Ok(None);
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
    let length: usize = header(&head, "content-length:")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    while buf.len() < end + 4 + length {
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            return Ok(None);
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    let body: Vec<u8> = buf.drain(..end + 4 + length).skip(end + 4).collect();
    Ok(Some((head, body)))
}

/// A header's value from a lower-cased head; `name` with its colon, e.g. `"mcp-name:"`.
pub fn header(head: &str, name: &str) -> Option<String> {
    head.lines()
        .find_map(|l| l.strip_prefix(name))
        .map(|v| v.trim().to_owned())
}
