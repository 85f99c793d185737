//! Reading HTTP/1.1 requests by hand, for the tests' small loopback servers that must answer in
//! ways no framework would (a task handle, a server request, a refused first call). Included by
//! path (`#[path = "support/http_read.rs"] mod http_read;`).
#![allow(dead_code)]

use tokio::io::AsyncReadExt;
use tokio::net::TcpStream;

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
