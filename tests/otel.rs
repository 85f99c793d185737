//! `--otlp`: a real OTLP/HTTP receiver on 127.0.0.1 (hyper) decodes what probe and soak send
//! with the collector's own protobuf types, and the spans, attributes, events and the duration
//! histogram are checked against the verdicts of the same run.
#![cfg(feature = "otel")]

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use mcp_verdict::faults::FaultServer;
use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{AnyValue, KeyValue, any_value};
use opentelemetry_proto::tonic::metrics::v1::metric;
use opentelemetry_proto::tonic::trace::v1::{Span, span, status};
use prost::Message;
use serde_json::Value;

mod proxy_process;
use proxy_process::{ProxyProcess, client, log_lines, write_mix};

type Received = Arc<Mutex<Vec<(String, Bytes)>>>;

/// Accepts OTLP/HTTP posts on 127.0.0.1 and keeps (path, body).
async fn receiver() -> (String, Received) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let got: Received = Arc::default();
    let keep = got.clone();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let keep = keep.clone();
            tokio::spawn(async move {
                let service = service_fn(move |req: hyper::Request<hyper::body::Incoming>| {
                    let keep = keep.clone();
                    async move {
                        let path = req.uri().path().to_owned();
                        let body = req.into_body().collect().await?.to_bytes();
                        keep.lock().unwrap().push((path, body));
                        let mut response = hyper::Response::new(Full::new(Bytes::new()));
                        response.headers_mut().insert(
                            "content-type",
                            hyper::header::HeaderValue::from_static("application/x-protobuf"),
                        );
                        Ok::<_, hyper::Error>(response)
                    }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    (url, got)
}

fn spans(got: &Received) -> Vec<Span> {
    got.lock()
        .unwrap()
        .iter()
        .filter(|(p, _)| p == "/v1/traces")
        .flat_map(|(_, b)| {
            ExportTraceServiceRequest::decode(b.clone())
                .unwrap()
                .resource_spans
        })
        .flat_map(|r| r.scope_spans)
        .flat_map(|s| s.spans)
        .collect()
}

/// Data points of `mcp.client.operation.duration`: (attributes, count).
fn duration_points(got: &Received) -> Vec<(BTreeMap<String, String>, u64)> {
    let mut out = Vec::new();
    for (path, body) in got.lock().unwrap().iter() {
        if path != "/v1/metrics" {
            continue;
        }
        let req = ExportMetricsServiceRequest::decode(body.clone()).unwrap();
        for m in req
            .resource_metrics
            .into_iter()
            .flat_map(|r| r.scope_metrics)
            .flat_map(|s| s.metrics)
            .filter(|m| m.name == "mcp.client.operation.duration")
        {
            assert_eq!(m.unit, "s");
            let Some(metric::Data::Histogram(h)) = m.data else {
                panic!("not a histogram: {m:?}");
            };
            for p in h.data_points {
                out.push((attrs(&p.attributes), p.count));
            }
        }
    }
    out
}

fn text(v: &Option<AnyValue>) -> String {
    match v.as_ref().and_then(|v| v.value.as_ref()) {
        Some(any_value::Value::StringValue(s)) => s.clone(),
        Some(any_value::Value::IntValue(i)) => i.to_string(),
        Some(any_value::Value::BoolValue(b)) => b.to_string(),
        Some(other) => format!("{other:?}"),
        None => String::new(),
    }
}

fn attrs(kv: &[KeyValue]) -> BTreeMap<String, String> {
    kv.iter().map(|a| (a.key.clone(), text(&a.value))).collect()
}

/// The `tools/call progress` span: named `{method} {tool}`, its SSE stream as span events (the
/// head, two progress notifications, the response) inside the span. Returns its attributes.
fn progress_call(spans: &[Span]) -> BTreeMap<String, String> {
    let call = spans
        .iter()
        .find(|s| s.name == "tools/call progress")
        .expect("a span named {method} {tool}");
    let names: Vec<&str> = call.events.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "http.response.head",
            "mcp.notification",
            "mcp.notification",
            "mcp.response"
        ]
    );
    assert!(
        call.events
            .iter()
            .all(|e| e.time_unix_nano >= call.start_time_unix_nano
                && e.time_unix_nano <= call.end_time_unix_nano)
    );
    let a = attrs(&call.attributes);
    assert_eq!(a["gen_ai.tool.name"], "progress");
    a
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap()
}

fn probe(url: &str, otlp: &str) -> Vec<Value> {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_mcp-verdict"))
        .args([
            "probe", url, "--tool", "progress", "--format", "jsonl", "--otlp", otlp,
        ])
        .output()
        .unwrap();
    assert!(out.status.code().is_some_and(|c| c < 2), "{out:?}");
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn probe_exports_one_client_span_per_exchange_with_the_verdict() {
    let rt = runtime();
    let server = rt.block_on(FaultServer::start("127.0.0.1:0")).unwrap();
    let (otlp, got) = rt.block_on(receiver());
    let verdicts = probe(&server.url(Some("sse-progress")), &otlp);
    let spans = spans(&got);
    assert_eq!(spans.len(), verdicts.len(), "{spans:#?}");
    for (span, v) in spans.iter().zip(&verdicts) {
        let a = attrs(&span.attributes);
        assert_eq!(span.kind, span::SpanKind::Client as i32);
        assert_eq!(a["mcp.method.name"], v["method"].as_str().unwrap());
        assert_eq!(
            a["mcp.protocol.version"],
            v["protocol_version"].as_str().unwrap()
        );
        assert_eq!(a["mcp_verdict.outcome"], v["outcome"].as_str().unwrap());
        assert_eq!(a["mcp_verdict.layer"], v["layer"].as_str().unwrap());
        assert_eq!(
            a["mcp_verdict.retry_advice"],
            v["retry"]["advice"].as_str().unwrap()
        );
        assert_eq!(a["server.address"], "127.0.0.1");
        assert!(span.end_time_unix_nano >= span.start_time_unix_nano);
    }
    let a = progress_call(&spans);
    assert_eq!(a["mcp_verdict.outcome"], "TOOL_SUCCESS");
    assert!(!a.contains_key("error.type"));
    assert!(a.contains_key("jsonrpc.request.id"));
    // One histogram point per exchange, split by method.
    let points = duration_points(&got);
    assert_eq!(
        points.iter().map(|(_, n)| n).sum::<u64>(),
        verdicts.len() as u64
    );
    assert!(
        points
            .iter()
            .any(
                |(a, n)| a.get("gen_ai.tool.name").map(String::as_str) == Some("progress")
                    && *n == 1
            )
    );
}

#[test]
fn a_cut_stream_is_an_error_span_with_its_outcome_as_error_type() {
    let rt = runtime();
    let server = rt.block_on(FaultServer::start("127.0.0.1:0")).unwrap();
    let (otlp, got) = rt.block_on(receiver());
    let verdicts = probe(&server.url(Some("sse-cut-mid-event")), &otlp);
    let last = verdicts.last().unwrap();
    assert_eq!(last["complete"], false);
    let spans = spans(&got);
    let call = spans
        .iter()
        .find(|s| s.name.starts_with("tools/call"))
        .unwrap();
    let a = attrs(&call.attributes);
    assert_eq!(a["error.type"], last["outcome"].as_str().unwrap());
    assert_eq!(a["mcp_verdict.complete"], "false");
    assert_eq!(
        call.status.as_ref().unwrap().code,
        status::StatusCode::Error as i32
    );
    assert!(
        duration_points(&got).iter().any(
            |(a, _)| a.get("error.type") == Some(&last["outcome"].as_str().unwrap().to_owned())
        )
    );
}

#[test]
fn soak_exports_a_span_and_a_histogram_point_per_call() {
    let rt = runtime();
    let server = rt.block_on(FaultServer::start("127.0.0.1:0")).unwrap();
    let (otlp, got) = rt.block_on(receiver());
    let dir = std::env::temp_dir().join(format!("mcp-verdict-otel-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mix = write_mix(&dir, 3);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_mcp-verdict"))
        .args(["soak", &server.url(None), "--mix"])
        .arg(&mix)
        .args(["--requests", "40", "--concurrency", "2", "--otlp", &otlp])
        .output()
        .unwrap();
    assert!(out.status.code().is_some_and(|c| c < 2), "{out:?}");
    let spans = spans(&got);
    assert_eq!(spans.len(), 40);
    let cut: Vec<_> = spans
        .iter()
        .filter(|s| {
            attrs(&s.attributes).get("error.type").map(String::as_str) == Some("STREAM_ABORTED")
        })
        .collect();
    assert_eq!(cut.len(), 10);
    assert!(spans.iter().any(|s| s.name == "tools/call echo"));
    // 2026-07-28 is stateless: no session, so no mcp.session.id.
    assert!(
        spans
            .iter()
            .all(|s| !attrs(&s.attributes).contains_key("mcp.session.id"))
    );
    assert_eq!(
        duration_points(&got).iter().map(|(_, n)| n).sum::<u64>(),
        40
    );
}

#[test]
fn soak_spans_carry_the_session_they_were_sent_in() {
    let rt = runtime();
    let server = rt.block_on(FaultServer::start("127.0.0.1:0")).unwrap();
    let (otlp, got) = rt.block_on(receiver());
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_mcp-verdict"))
        .args(["soak", &server.url(None), "--protocol", "2025-11-25"])
        .args(["--tool", "echo", "--args", r#"{"message":"hi"}"#])
        .args(["--requests", "12", "--concurrency", "2", "--otlp", &otlp])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let spans = spans(&got);
    assert_eq!(spans.len(), 12);
    let sessions: std::collections::BTreeSet<String> = spans
        .iter()
        .map(|s| attrs(&s.attributes)["mcp.session.id"].clone())
        .collect();
    // One soak run is one session, named by its stand-in (docs/redaction.md).
    assert_eq!(sessions.len(), 1, "{sessions:?}");
    assert!(sessions.first().unwrap().starts_with("<redacted-"));
}

/// Polls until `want` spans arrived (at most 20 s).
fn wait_for_spans(got: &Received, want: usize) -> Vec<Span> {
    let start = std::time::Instant::now();
    loop {
        let now = spans(got);
        if now.len() >= want || start.elapsed() > std::time::Duration::from_secs(20) {
            return now;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

#[test]
fn proxy_exports_each_exchange_as_it_finishes_and_flushes_at_sigterm() {
    let rt = runtime();
    let server = rt.block_on(FaultServer::start("127.0.0.1:0")).unwrap();
    let (otlp, got) = rt.block_on(receiver());
    let dir = std::env::temp_dir().join(format!("mcp-verdict-otel-proxy-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let log = dir.join("proxy.jsonl");
    // A short batch delay, so "live" is seen within the test (the default is 5 s).
    let proxy = ProxyProcess::start(
        &server.url(Some("sse-progress")),
        &["--quiet", "--log", log.to_str().unwrap(), "--otlp", &otlp],
        &[("OTEL_BSP_SCHEDULE_DELAY", "100")],
        &dir,
    );
    let mut probe = std::process::Command::new(env!("CARGO_BIN_EXE_mcp-verdict"));
    probe.args([
        "probe",
        &proxy.url,
        "--protocol",
        "2025-11-25",
        "--tool",
        "progress",
    ]);
    assert_eq!(client(probe), 0);
    let verdicts = log_lines(&log);
    // Exported live: every exchange's span arrives while the proxy still runs.
    let live = wait_for_spans(&got, verdicts.len());
    assert_eq!(live.len(), verdicts.len(), "{live:#?}");
    assert_eq!(proxy.stop().code(), Some(0));
    let spans = spans(&got);
    assert_eq!(spans.len(), verdicts.len());
    for (span, v) in spans.iter().zip(&verdicts) {
        let a = attrs(&span.attributes);
        assert_eq!(span.kind, span::SpanKind::Client as i32);
        assert_eq!(a["mcp.method.name"], v["method"].as_str().unwrap());
        assert_eq!(a["mcp.protocol.version"], "2025-11-25");
        assert_eq!(a["mcp_verdict.outcome"], v["outcome"].as_str().unwrap());
        assert_eq!(a["mcp_verdict.layer"], v["layer"].as_str().unwrap());
        assert_eq!(
            a["mcp_verdict.retry_advice"],
            v["retry"]["advice"].as_str().unwrap()
        );
        // Notifications have no id, and the conventions say to leave it out then.
        assert_eq!(
            a.get("jsonrpc.request.id").cloned(),
            (!v["id"].is_null()).then(|| v["id"].to_string())
        );
        // The upstream, not the proxy: server.* name the server behind the intermediary.
        assert_eq!(a["server.address"], "127.0.0.1");
        assert_eq!(a["server.port"], server.addr().port().to_string());
        assert_eq!(a["network.protocol.version"], "1.1");
        // After initialize every request carries the session, shown as the recording's
        // stand-in (the proxy redacts session ids unless --no-redact).
        if v["method"] != "initialize" {
            assert!(a["mcp.session.id"].starts_with("<redacted-"), "{a:?}");
        }
    }
    assert_eq!(
        progress_call(&spans)["gen_ai.operation.name"],
        "execute_tool"
    );
    // The histogram, flushed at SIGTERM: one point per exchange.
    assert_eq!(
        duration_points(&got).iter().map(|(_, n)| n).sum::<u64>(),
        verdicts.len() as u64
    );
}

#[test]
fn a_json_rpc_error_names_the_code_and_describes_the_status_with_its_message() {
    let rt = runtime();
    let server = rt.block_on(FaultServer::start("127.0.0.1:0")).unwrap();
    let (otlp, got) = rt.block_on(receiver());
    let verdicts = probe(&server.url(Some("http-404-method-not-found")), &otlp);
    let last = verdicts.last().unwrap();
    let code = last["error_code"]
        .as_i64()
        .expect("a JSON-RPC error")
        .to_string();
    let call = spans(&got)
        .into_iter()
        .find(|s| s.name.starts_with("tools/call"))
        .unwrap();
    let a = attrs(&call.attributes);
    assert_eq!(a["error.type"], code);
    assert_eq!(a["rpc.response.status_code"], code);
    let status = call.status.unwrap();
    assert_eq!(status.code, status::StatusCode::Error as i32);
    assert_eq!(status.message, last["error_message"].as_str().unwrap());
}
