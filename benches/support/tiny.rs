//! The tiny MCP server the benches put on loopback: it does no work at all (its reply costs
//! less than the client's request), the worst case for anything in between.

use std::convert::Infallible;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::{Request, Response};
use serde_json::{Value, json};

/// Answers `/sse` with one SSE event and `/json` with a JSON body, echoing the request id.
pub async fn answer(
    req: Request<hyper::body::Incoming>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let sse = req.uri().path() == "/sse";
    let body = req
        .into_body()
        .collect()
        .await
        .map(|b| b.to_bytes())
        .unwrap_or_default();
    let id = serde_json::from_slice::<Value>(&body)
        .ok()
        .and_then(|v| v.get("id").cloned())
        .unwrap_or(Value::Null);
    let message = json!({
        "jsonrpc": "2.0", "id": id,
        "result": {"content": [{"type": "text", "text": "hello from the bench"}], "isError": false}
    })
    .to_string();
    let (content_type, body) = if sse {
        (
            "text/event-stream",
            format!("event: message\ndata: {message}\n\n"),
        )
    } else {
        ("application/json", message)
    };
    Ok(Response::builder()
        .header("content-type", content_type)
        .body(Full::new(Bytes::from(body)))
        .expect("a valid response"))
}
