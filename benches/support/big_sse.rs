//! One `tools/call` answered by a large SSE body of progress notifications then the result,
//! as a HAR (in HAR member order), and eventsource-stream framing the same body from memory.
//! Shared by the `big_sse` example (which adds peak RSS) and the `replay` bench.

use std::io::Write;

use futures::StreamExt;
use serde_json::json;

/// The SSE body: progress notifications (about 180 bytes each) up to `mib` MiB, then the
/// result. The same bytes for the same size.
pub fn body(mib: usize) -> Vec<u8> {
    let mut body = Vec::with_capacity(mib << 20);
    let total = (mib << 20) / 180;
    let mut n = 0u64;
    while body.len() < (mib << 20) {
        n += 1;
        let event = json!({"jsonrpc":"2.0","method":"notifications/progress","params":{
            "progressToken":1,"progress":n,"total":total,"message":format!("Indexed {n} of {total} files")}});
        body.extend_from_slice(b"data: ");
        body.extend_from_slice(event.to_string().as_bytes());
        body.extend_from_slice(b"\n\n");
    }
    let last = json!({"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"done"}],"isError":false}});
    body.extend_from_slice(format!("data: {last}\n\n").as_bytes());
    body
}

/// Writes the HAR holding one exchange answered by `body`.
pub fn write_har(path: &std::path::Path, body: &[u8]) -> std::io::Result<()> {
    let request = json!({"jsonrpc":"2.0","id":1,"method":"tools/call",
        "params":{"name":"index","arguments":{},"_meta":{"progressToken":1}}});
    let mut f = std::io::BufWriter::new(std::fs::File::create(path)?);
    // HAR member order (request, then status, headers, content with the text last).
    write!(
        f,
        r#"{{"log":{{"version":"1.2","creator":{{"name":"big_sse","version":"1"}},"entries":[{{"startedDateTime":"2026-12-03T00:00:00Z","time":1,"request":{{"method":"POST","url":"http://127.0.0.1/mcp","httpVersion":"HTTP/1.1","headers":[{{"name":"Content-Type","value":"application/json"}},{{"name":"Accept","value":"application/json, text/event-stream"}},{{"name":"MCP-Protocol-Version","value":"2026-07-28"}}],"postData":{{"mimeType":"application/json","text":{}}}}},"response":{{"status":200,"statusText":"OK","httpVersion":"HTTP/1.1","headers":[{{"name":"Content-Type","value":"text/event-stream"}}],"content":{{"size":{},"mimeType":"text/event-stream","text":"#,
        serde_json::to_string(&request.to_string())?,
        body.len()
    )?;
    serde_json::to_writer(&mut f, std::str::from_utf8(body).unwrap())?;
    writeln!(f, r#"}}}}}}]}}}}"#)?;
    f.flush()
}

/// eventsource-stream on the body, one chunk per event; the number of events.
pub fn eventsource(chunks: &[bytes::Bytes]) -> usize {
    use eventsource_stream::Eventsource;
    let stream = futures::stream::iter(chunks.iter().cloned().map(Ok::<_, std::io::Error>));
    futures::executor::block_on(async {
        let mut events = stream.eventsource();
        let mut n = 0;
        while let Some(e) = events.next().await {
            let e = e.expect("well-formed");
            n += usize::from(!e.data.is_empty());
        }
        n
    })
}

/// The body cut into one chunk per event (its two lines), eventsource-stream's best feed.
pub fn event_chunks(body: &[u8]) -> Vec<bytes::Bytes> {
    body.split_inclusive(|&b| b == b'\n')
        .collect::<Vec<_>>()
        .chunks(2)
        .map(|c| bytes::Bytes::from(c.concat()))
        .collect()
}
