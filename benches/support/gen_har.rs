//! A large, realistic HAR capture of one MCP session, written streaming: memory stays bounded
//! by one entry whatever the requested size. Shared by the `gen_big_har` example and the
//! `replay` bench.
//!
//! The entries: an `initialize` and a `tools/list` first, then a deterministic mix of JSON tool
//! results, SSE replies with progress notifications (some large, some base64-encoded), 202s to
//! notifications, HTTP 500s with a JSON-RPC error body, JSON-RPC errors on 200, `isError`
//! results and SSE streams cut short (`_mcp_end: "reset"`).

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

use base64::Engine;
use serde_json::{Value, json};

/// Deterministic, so that two runs write the same file.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Counts what goes through, so the generator knows when it has written enough.
struct Counting<W> {
    inner: W,
    written: u64,
}

impl<W: Write> Write for Counting<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.written += n as u64;
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

const TOOLS: [&str; 4] = [
    "search_code",
    "index_repository",
    "get_weather",
    "delete_file",
];

fn header(name: &str, value: &str) -> Value {
    json!({ "name": name, "value": value })
}

fn request_headers(session: &str, initialized: bool) -> Vec<Value> {
    let mut h = vec![
        header("Content-Type", "application/json"),
        header("Accept", "application/json, text/event-stream"),
        header("User-Agent", "gen_big_har/1"),
    ];
    if initialized {
        h.push(header("MCP-Protocol-Version", "2025-11-25"));
        h.push(header("Mcp-Session-Id", session));
    }
    h
}

struct Reply {
    status: u16,
    content_type: Option<&'static str>,
    body: Vec<u8>,
    base64: bool,
    /// `_mcp_end`, when not a clean end.
    end: Option<&'static str>,
}

fn text_block(rng: &mut Lcg, bytes: usize) -> String {
    let mut s = String::with_capacity(bytes + 128);
    let mut line = 0;
    while s.len() < bytes {
        line += 1;
        let n = rng.below(10_000);
        s.push_str(&format!(
            "src/module_{:02}/file_{n:04}.rs:{line}: fn handler_{n}(req: &Request) -> Result<Reply, \"Error\"> {{ \u{2026} }}\n",
            n % 97
        ));
    }
    s
}

fn result_message(id: u64, text: &str, is_error: bool) -> String {
    json!({
        "jsonrpc": "2.0",
        "id": id,
        "result": { "content": [{ "type": "text", "text": text }], "isError": is_error },
    })
    .to_string()
}

fn progress_message(token: u64, n: u64, total: u64) -> String {
    json!({
        "jsonrpc": "2.0",
        "method": "notifications/progress",
        "params": {
            "progressToken": token,
            "progress": n,
            "total": total,
            "message": format!("Indexed {n} of {total} files"),
        },
    })
    .to_string()
}

fn sse_body(rng: &mut Lcg, id: u64, progress: u64, text_bytes: usize, cut: bool) -> Vec<u8> {
    let mut body = Vec::new();
    for n in 1..=progress {
        if rng.below(8) == 0 {
            body.extend_from_slice(b": keep-alive\n\n");
        }
        body.extend_from_slice(b"data: ");
        body.extend_from_slice(progress_message(id, n, progress).as_bytes());
        body.extend_from_slice(b"\n\n");
    }
    let text = text_block(rng, text_bytes);
    let last = format!("data: {}\n\n", result_message(id, &text, false));
    if cut {
        body.extend_from_slice(&last.as_bytes()[..last.len() / 2]);
    } else {
        body.extend_from_slice(last.as_bytes());
    }
    body
}

/// One `tools/call` exchange of a random kind.
fn tool_call(rng: &mut Lcg, id: u64) -> (Value, Reply) {
    let tool = TOOLS[rng.below(TOOLS.len() as u64) as usize];
    let request = json!({
        "jsonrpc": "2.0",
        "id": id,
        "method": "tools/call",
        "params": { "name": tool, "arguments": { "path": "/srv/repo", "query": "fn main" },
                    "_meta": { "progressToken": id } },
    });
    let kind = rng.below(100);
    let reply = match kind {
        // Small JSON result.
        0..=29 => {
            let len = 200 + rng.below(2_000) as usize;
            let text = text_block(rng, len);
            Reply {
                status: 200,
                content_type: Some("application/json"),
                body: result_message(id, &text, false).into_bytes(),
                base64: false,
                end: None,
            }
        }
        // SSE: progress, then the result.
        30..=64 => {
            let progress = 5 + rng.below(200);
            let text = 500 + rng.below(8_000) as usize;
            Reply {
                status: 200,
                content_type: Some("text/event-stream"),
                body: sse_body(rng, id, progress, text, false),
                base64: rng.below(4) == 0,
                end: None,
            }
        }
        // SSE with a large result (up to 256 KiB; 1 in 50 of them 4 MiB).
        65..=74 => {
            let text = if rng.below(50) == 0 {
                4 << 20
            } else {
                rng.below(256 << 10) as usize
            };
            Reply {
                status: 200,
                content_type: Some("text/event-stream"),
                body: sse_body(rng, id, 3, text, false),
                base64: false,
                end: None,
            }
        }
        // SSE cut short.
        75..=79 => Reply {
            status: 200,
            content_type: Some("text/event-stream"),
            body: sse_body(rng, id, 20, 4_000, true),
            base64: false,
            end: Some("reset"),
        },
        // HTTP 500 with a JSON-RPC error body.
        80..=86 => Reply {
            status: 500,
            content_type: Some("application/json"),
            body: json!({"jsonrpc":"2.0","id":id,"error":{"code":-32603,"message":"internal error: upstream timed out"}})
                .to_string()
                .into_bytes(),
            base64: false,
            end: None,
        },
        // JSON-RPC error on 200.
        87..=92 => Reply {
            status: 200,
            content_type: Some("application/json"),
            body: json!({"jsonrpc":"2.0","id":id,"error":{"code":-32602,"message":"Unknown tool: nope"}})
                .to_string()
                .into_bytes(),
            base64: false,
            end: None,
        },
        // The tool ran and failed.
        _ => Reply {
            status: 200,
            content_type: Some("application/json"),
            body: result_message(id, "permission denied: /srv/repo/.git", true).into_bytes(),
            base64: false,
            end: None,
        },
    };
    (request, reply)
}

fn entry(index: u64, session: &str, initialized: bool, request: &Value, reply: &Reply) -> Value {
    let post = request.to_string();
    let secs = index / 10;
    let started = format!(
        "2026-12-02T{:02}:{:02}:{:02}.{:03}Z",
        (secs / 3600) % 24,
        (secs / 60) % 60,
        secs % 60,
        (index % 10) * 100
    );
    let (text, encoding) = if reply.base64 {
        (
            base64::engine::general_purpose::STANDARD.encode(&reply.body),
            Some("base64"),
        )
    } else {
        (String::from_utf8_lossy(&reply.body).into_owned(), None)
    };
    let mut response_headers = vec![
        header("Date", "Wed, 02 Dec 2026 10:00:00 GMT"),
        header("Cache-Control", "no-cache"),
    ];
    if let Some(ct) = reply.content_type {
        response_headers.insert(0, header("Content-Type", ct));
    }
    let mut content = json!({
        "size": reply.body.len(),
        "mimeType": reply.content_type.unwrap_or("x-unknown"),
        "text": text,
    });
    if let Some(e) = encoding {
        content["encoding"] = json!(e);
    }
    let mut e = json!({
        "startedDateTime": started,
        "time": 12.5,
        "request": {
            "method": "POST",
            "url": "https://mcp.example.test/mcp",
            "httpVersion": "HTTP/1.1",
            "headers": request_headers(session, initialized),
            "queryString": [],
            "cookies": [],
            "headersSize": -1,
            "bodySize": post.len(),
            "postData": { "mimeType": "application/json", "text": post },
        },
        "response": {
            "status": reply.status,
            "statusText": if reply.status == 200 { "OK" } else if reply.status == 202 { "Accepted" } else { "Internal Server Error" },
            "httpVersion": "HTTP/1.1",
            "headers": response_headers,
            "cookies": [],
            "content": content,
            "redirectURL": "",
            "headersSize": -1,
            "bodySize": reply.body.len(),
        },
        "cache": {},
        "timings": { "send": 0.1, "wait": 10.0, "receive": 2.4 },
    });
    if let Some(end) = reply.end {
        e["_mcp_end"] = json!(end);
    }
    e
}

/// What [`write`] wrote.
pub struct Written {
    pub bytes: u64,
    pub entries: u64,
    pub tool_calls: u64,
    pub notifications: u64,
}

/// Writes the capture to `path`: about `target` bytes (it stops after the first entry that
/// reaches it), the same bytes for the same `target`.
pub fn write(path: &Path, target: u64) -> std::io::Result<Written> {
    let mut out = Counting {
        inner: BufWriter::with_capacity(1 << 20, File::create(path)?),
        written: 0,
    };
    out.write_all(
        br#"{"log":{"version":"1.2","creator":{"name":"mcp-verdict gen_big_har","version":"1"},"pages":[],"entries":["#,
    )?;
    let session = "5f2c9a0e-1b7d-4c3e-9a61-0d8e2f4b7c19";
    let mut rng = Lcg(42);
    let mut index = 0u64;
    let mut first = true;
    let mut write_entry = |out: &mut Counting<_>, e: &Value| -> std::io::Result<()> {
        if !first {
            out.write_all(b",\n")?;
        }
        first = false;
        serde_json::to_writer(&mut *out, e)?;
        Ok(())
    };

    // The session opens as every client opens it.
    let init = json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
        "protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"gen_big_har","version":"1"}}});
    let init_reply = Reply {
        status: 200,
        content_type: Some("application/json"),
        body: br#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"big","version":"1"}}}"#.to_vec(),
        base64: false,
        end: None,
    };
    write_entry(&mut out, &entry(index, session, false, &init, &init_reply))?;
    index += 1;
    let list = json!({"jsonrpc":"2.0","id":1,"method":"tools/list"});
    let tools: Vec<Value> = TOOLS
        .iter()
        .map(|t| {
            json!({"name": t, "inputSchema": {"type":"object"},
                         "annotations": {"readOnlyHint": *t != "delete_file"}})
        })
        .collect();
    let list_reply = Reply {
        status: 200,
        content_type: Some("application/json"),
        body: json!({"jsonrpc":"2.0","id":1,"result":{"tools": tools}})
            .to_string()
            .into_bytes(),
        base64: false,
        end: None,
    };
    write_entry(&mut out, &entry(index, session, true, &list, &list_reply))?;
    index += 1;

    let mut id = 2u64;
    let mut counts = [0u64; 2];
    while out.written < target {
        let (request, reply) = if rng.below(10) == 0 {
            let note = json!({"jsonrpc":"2.0","method":"notifications/cancelled",
                               "params":{"requestId": id - 1, "reason": "user"}});
            let accepted = Reply {
                status: 202,
                content_type: None,
                body: Vec::new(),
                base64: false,
                end: None,
            };
            counts[0] += 1;
            (note, accepted)
        } else {
            counts[1] += 1;
            id += 1;
            tool_call(&mut rng, id)
        };
        write_entry(&mut out, &entry(index, session, true, &request, &reply))?;
        index += 1;
    }
    out.write_all(b"]}}\n")?;
    out.flush()?;
    Ok(Written {
        bytes: out.written,
        entries: index,
        tool_calls: counts[1],
        notifications: counts[0],
    })
}
