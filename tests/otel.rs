//! `--otlp`: a real OTLP/HTTP receiver on 127.0.0.1 (hyper) decodes what replay, probe, soak
//! and proxy send with the collector's own protobuf types, and the span trees (a root span per
//! logical call, its exchanges' spans as children), attributes, events and the duration
//! histogram are checked against the verdicts and calls of the same run.
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
use proxy_process::{ProxyProcess, client, settled_log_lines, write_mix};

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
    let call = exchanges(spans)
        .into_iter()
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

/// Call spans: the roots.
fn calls(spans: &[Span]) -> Vec<&Span> {
    spans
        .iter()
        .filter(|s| s.parent_span_id.is_empty())
        .collect()
}

/// The call span of the call record `c` (by `mcp_verdict.call`; the test fails without one).
fn span_of_call<'a>(spans: &'a [Span], c: &Value) -> &'a Span {
    calls(spans)
        .into_iter()
        .find(|s| {
            attrs(&s.attributes)["mcp_verdict.call"].parse::<u64>().ok() == c["call"].as_u64()
        })
        .unwrap_or_else(|| panic!("no call span for {c}"))
}

/// Exchange spans: the call spans' children.
fn exchanges(spans: &[Span]) -> Vec<&Span> {
    spans
        .iter()
        .filter(|s| !s.parent_span_id.is_empty())
        .collect()
}

/// The children of `call`.
fn children<'a>(spans: &'a [Span], call: &Span) -> Vec<&'a Span> {
    spans
        .iter()
        .filter(|s| s.parent_span_id == call.span_id)
        .collect()
}

/// Every exchange span is the child of exactly one call span, in that call's trace and within
/// its time; each call span has as many children as it says exchanges, and its own trace.
fn assert_tree(spans: &[Span]) {
    for x in exchanges(spans) {
        let parents: Vec<_> = calls(spans)
            .into_iter()
            .filter(|c| c.span_id == x.parent_span_id)
            .collect();
        assert_eq!(parents.len(), 1, "the parent of {x:#?}");
        let call = parents[0];
        assert_eq!(x.trace_id, call.trace_id);
        assert!(
            call.start_time_unix_nano <= x.start_time_unix_nano,
            "{call:#?} {x:#?}"
        );
        assert!(
            call.end_time_unix_nano >= x.end_time_unix_nano,
            "{call:#?} {x:#?}"
        );
    }
    let roots = calls(spans);
    let traces: std::collections::BTreeSet<_> = roots.iter().map(|c| &c.trace_id).collect();
    assert_eq!(traces.len(), roots.len(), "one trace per call");
    for call in roots {
        let a = attrs(&call.attributes);
        assert_eq!(
            a["mcp_verdict.exchange_count"],
            children(spans, call).len().to_string(),
            "{call:#?}"
        );
        assert_eq!(call.kind, span::SpanKind::Client as i32);
    }
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
    assert_tree(&spans);
    let exchange_spans = exchanges(&spans);
    assert_eq!(exchange_spans.len(), verdicts.len(), "{spans:#?}");
    // Probe's calls are one exchange each: one call span per exchange, named alike.
    assert_eq!(calls(&spans).len(), verdicts.len());
    for (span, v) in exchange_spans.into_iter().zip(&verdicts) {
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
        assert_eq!(a["http.request.method"], "POST");
        assert_eq!(
            a["http.response.status_code"],
            v["status"].as_u64().unwrap().to_string()
        );
        assert_eq!(
            a["mcp_verdict.status_origin"],
            v["status_origin"].as_str().unwrap()
        );
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
    assert_tree(&spans);
    // The exchange span and its call's span: both failed, and say how.
    let cut: Vec<&Span> = spans
        .iter()
        .filter(|s| s.name.starts_with("tools/call"))
        .collect();
    assert_eq!(cut.len(), 2);
    for call in cut {
        let a = attrs(&call.attributes);
        assert_eq!(a["error.type"], last["outcome"].as_str().unwrap());
        assert_eq!(a["mcp_verdict.complete"], "false");
        assert_eq!(
            call.status.as_ref().unwrap().code,
            status::StatusCode::Error as i32
        );
    }
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
    // 40 calls of one exchange each: a call span and its child per call.
    assert_eq!(spans.len(), 80);
    assert_eq!(calls(&spans).len(), 40);
    assert_tree(&spans);
    let cut: Vec<_> = spans
        .iter()
        .filter(|s| {
            attrs(&s.attributes).get("error.type").map(String::as_str) == Some("STREAM_ABORTED")
        })
        .collect();
    assert_eq!(cut.len(), 20);
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
    assert_eq!(spans.len(), 24);
    assert_tree(&spans);
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
    let calls_log = dir.join("calls.jsonl");
    // A short batch delay, so "live" is seen within the test (the default is 5 s).
    let proxy = ProxyProcess::start(
        &server.url(Some("sse-progress")),
        &[
            "--quiet",
            "--log",
            log.to_str().unwrap(),
            "--calls",
            calls_log.to_str().unwrap(),
            "--otlp",
            &otlp,
        ],
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
    let verdicts = settled_log_lines(&log);
    // Exported live: every exchange's span arrives while the proxy still runs, naming its
    // call's span as parent although no call has closed yet (they close when it stops).
    let live = wait_for_spans(&got, verdicts.len());
    assert_eq!(live.len(), verdicts.len(), "{live:#?}");
    assert_eq!(exchanges(&live).len(), verdicts.len());
    assert_eq!(proxy.stop().code(), Some(0));
    let spans = spans(&got);
    let grouped = std::fs::read_to_string(&calls_log).unwrap();
    let grouped: Vec<Value> = grouped
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // At SIGTERM the calls close: one span each, the parent the exchanges named.
    assert_eq!(calls(&spans).len(), grouped.len());
    assert_tree(&spans);
    for c in &grouped {
        let span = span_of_call(&spans, c);
        let a = attrs(&span.attributes);
        assert_eq!(a["mcp_verdict.outcome"], c["outcome"].as_str().unwrap());
        assert_eq!(
            a["mcp_verdict.exchange_count"],
            c["entries"].as_array().unwrap().len().to_string()
        );
        if c["method"] != "initialize" {
            assert!(a["mcp.session.id"].starts_with("<redacted-"), "{a:?}");
        }
    }
    let spans: Vec<Span> = exchanges(&spans).into_iter().cloned().collect();
    assert_eq!(spans.len(), verdicts.len());
    for (span, v) in spans.iter().zip(&verdicts) {
        let a = attrs(&span.attributes);
        assert_eq!(span.kind, span::SpanKind::Client as i32);
        // probe's GET stream (open while it calls the tool) has no JSON-RPC method; the
        // exporter's name for it is its own business (checked where it is made).
        if let Some(method) = v["method"].as_str() {
            assert_eq!(a["mcp.method.name"], method);
        } else {
            assert_eq!(a["http.request.method"], "GET", "{a:?}");
        }
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
    let spans = spans(&got);
    // The exchange span and its call's span alike.
    let failed: Vec<&Span> = spans
        .iter()
        .filter(|s| s.name.starts_with("tools/call"))
        .collect();
    assert_eq!(failed.len(), 2);
    for call in failed {
        let a = attrs(&call.attributes);
        assert_eq!(a["error.type"], code);
        assert_eq!(a["rpc.response.status_code"], code);
        let status = call.status.clone().unwrap();
        assert_eq!(status.code, status::StatusCode::Error as i32);
        assert_eq!(status.message, last["error_message"].as_str().unwrap());
    }
}

/// `replay FILE --otlp URL` with extra arguments; the spans it sent.
fn replay(file: &str, extra: &[&str]) -> Vec<Span> {
    let rt = runtime();
    let (otlp, got) = rt.block_on(receiver());
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_mcp-verdict"))
        .args(["replay", file, "--format", "jsonl", "--otlp", &otlp])
        .args(extra)
        .output()
        .unwrap();
    assert!(out.status.code().is_some_and(|c| c < 2), "{out:?}");
    spans(&got)
}

fn call_span<'a>(spans: &'a [Span], name: &str) -> Vec<&'a Span> {
    calls(spans)
        .into_iter()
        .filter(|s| s.name == name)
        .collect()
}

fn unix_nanos(rfc3339_ms: &str) -> u64 {
    // 2026-12-02T10:00:01.500Z: the captures here all start on that day.
    let time = rfc3339_ms
        .strip_prefix("2026-12-02T")
        .and_then(|t| t.strip_suffix('Z'))
        .unwrap();
    let (h, rest) = time.split_once(':').unwrap();
    let (m, s) = rest.split_once(':').unwrap();
    let day = 1_796_169_600u64; // 2026-12-02T00:00:00Z
    let secs: f64 = s.parse().unwrap();
    let ms = (day + h.parse::<u64>().unwrap() * 3600 + m.parse::<u64>().unwrap() * 60) * 1000
        + (secs * 1000.0).round() as u64;
    ms * 1_000_000
}

#[test]
fn replay_exports_a_re_sent_call_as_one_span_over_its_exchanges() {
    let spans = replay("testdata/har/retry_audit_2026.har", &[]);
    assert_tree(&spans);
    let expected: Value = serde_json::from_str(
        &std::fs::read_to_string("testdata/har/retry_audit_2026.calls.json").unwrap(),
    )
    .unwrap();
    let expected = expected["calls"].as_array().unwrap();
    assert_eq!(calls(&spans).len(), expected.len());
    assert_eq!(exchanges(&spans).len(), 9);
    for c in expected {
        let span = span_of_call(&spans, c);
        let a = attrs(&span.attributes);
        assert_eq!(a["mcp.method.name"], c["method"].as_str().unwrap());
        // The revision that judged it, as its exchanges say.
        for kid in children(&spans, span) {
            assert_eq!(
                a["mcp.protocol.version"],
                attrs(&kid.attributes)["mcp.protocol.version"]
            );
        }
        assert_eq!(a["mcp_verdict.outcome"], c["outcome"].as_str().unwrap());
        assert_eq!(a["mcp_verdict.post_count"], c["post_count"].to_string());
        assert_eq!(
            a["mcp_verdict.retry_origin"],
            c["retry_origin"].as_str().unwrap()
        );
        assert_eq!(a["jsonrpc.request.id"], c["ids"][0].to_string());
        assert_eq!(
            children(&spans, span).len(),
            c["entries"].as_array().unwrap().len()
        );
    }
    // delete_file: a 503, re-sent 0.5 s later and answered. One call span over both POSTs.
    let [call] = call_span(&spans, "tools/call delete_file")[..] else {
        panic!("one call span for delete_file: {spans:#?}");
    };
    let a = attrs(&call.attributes);
    assert_eq!(a["gen_ai.tool.name"], "delete_file");
    assert_eq!(a["gen_ai.operation.name"], "execute_tool");
    assert_eq!(a["mcp_verdict.double_execution_risk"], "true");
    assert_eq!(a["mcp_verdict.retry_advice"], "none");
    assert_eq!(a["mcp_verdict.status_origin"], "server");
    assert!(a["mcp_verdict.violations"].contains("call.double_execution_risk"));
    // It ended well: no error.type, status unset.
    assert!(!a.contains_key("error.type"), "{a:?}");
    assert_ne!(
        call.status.as_ref().map_or(0, |s| s.code),
        status::StatusCode::Error as i32
    );
    let mut kids = children(&spans, call);
    kids.sort_by_key(|s| s.start_time_unix_nano);
    let [first, resent] = kids[..] else {
        panic!("two exchanges: {kids:#?}");
    };
    let (f, r) = (attrs(&first.attributes), attrs(&resent.attributes));
    assert_eq!(f["http.response.status_code"], "503");
    // The 503 carried a JSON-RPC error: its code is the error type (the conventions' choice).
    assert_eq!(f["error.type"], "-32603");
    assert_eq!(f["mcp_verdict.outcome"], "HTTP_ERROR");
    assert_eq!(f["http.request.method"], "POST");
    assert!(f.contains_key("mcp_verdict.status_origin"));
    assert_eq!(r["http.response.status_code"], "200");
    assert!(!r.contains_key("error.type"));
    assert_eq!(f["jsonrpc.request.id"], "2");
    assert_eq!(r["jsonrpc.request.id"], "3");
    // The capture's clock: the call starts with its first POST, ends with the re-send's end.
    assert_eq!(
        first.start_time_unix_nano,
        unix_nanos("2026-12-02T10:00:01.000Z")
    );
    assert_eq!(call.start_time_unix_nano, first.start_time_unix_nano);
    assert_eq!(
        resent.start_time_unix_nano,
        unix_nanos("2026-12-02T10:00:01.500Z")
    );
    assert_eq!(call.end_time_unix_nano, resent.end_time_unix_nano);
    assert_eq!(
        resent.end_time_unix_nano,
        unix_nanos("2026-12-02T10:00:01.513Z")
    );
    // tools/list: a call of one exchange, a span of its own in its own trace.
    let [list] = call_span(&spans, "tools/list")[..] else {
        panic!("one tools/list call: {spans:#?}");
    };
    let kids = children(&spans, list);
    assert_eq!(kids.len(), 1);
    assert_eq!(kids[0].trace_id, list.trace_id);
    assert_ne!(list.trace_id, call.trace_id);
    assert_eq!(
        (list.start_time_unix_nano, list.end_time_unix_nano),
        (kids[0].start_time_unix_nano, kids[0].end_time_unix_nano)
    );
}

#[test]
fn replay_names_the_session_by_its_stand_in_unless_told_not_to_redact() {
    let file = "testdata/har/sse_server_request_2025_allowed.har";
    let raw = "5f1c2a9e-7b3d-4c11-9a0e-2d6f8b4e1a73";
    let spans = replay(file, &[]);
    assert_tree(&spans);
    // tools/call and the client's answer to the server's request: one call, two POSTs.
    let [call] = call_span(&spans, "tools/call get_weather")[..] else {
        panic!("one call span: {spans:#?}");
    };
    let a = attrs(&call.attributes);
    let session = &a["mcp.session.id"];
    assert!(session.starts_with("<redacted-"), "{a:?}");
    let kids = children(&spans, call);
    assert_eq!(kids.len(), 2);
    for kid in kids {
        assert_eq!(&attrs(&kid.attributes)["mcp.session.id"], session);
    }
    assert!(
        spans
            .iter()
            .flat_map(|s| &s.attributes)
            .all(|kv| !text(&kv.value).contains(raw))
    );
    // initialize has no session yet: no mcp.session.id on its call span.
    let [init] = call_span(&spans, "initialize")[..] else {
        panic!("one initialize call");
    };
    assert!(!attrs(&init.attributes).contains_key("mcp.session.id"));
    // The one switch of the one policy shows it as sent.
    let shown = replay(file, &["--no-redact"]);
    let [call] = call_span(&shown, "tools/call get_weather")[..] else {
        panic!("one call span: {shown:#?}");
    };
    assert_eq!(attrs(&call.attributes)["mcp.session.id"], raw);
}

/// `proxy --otlp` in front of `scenario`, two probes through it; the spans and the calls (the
/// proxy's `--calls` lines).
fn proxied(scenario: &str, tool: &str, name: &str) -> (Vec<Span>, Vec<Value>) {
    let rt = runtime();
    let server = rt.block_on(FaultServer::start("127.0.0.1:0")).unwrap();
    let (otlp, got) = rt.block_on(receiver());
    let dir = std::env::temp_dir().join(format!("mcp-verdict-otel-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let calls_log = dir.join("calls.jsonl");
    let proxy = ProxyProcess::start_named(
        &server.url(Some(scenario)),
        &[
            "--quiet",
            "--calls",
            calls_log.to_str().unwrap(),
            "--otlp",
            &otlp,
        ],
        &[("OTEL_BSP_SCHEDULE_DELAY", "100")],
        &dir,
        name,
    );
    // Twice: the second run's tools/call re-sends the first's after it failed, so the
    // grouping joins them into one call (a client's retry).
    for _ in 0..2 {
        let mut probe = std::process::Command::new(env!("CARGO_BIN_EXE_mcp-verdict"));
        probe.args([
            "probe",
            &proxy.url,
            "--protocol",
            "2025-11-25",
            "--tool",
            tool,
        ]);
        client(probe);
    }
    assert_eq!(proxy.stop().code(), Some(0));
    let grouped = std::fs::read_to_string(&calls_log)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    (spans(&got), grouped)
}

#[test]
fn proxy_parents_both_posts_of_a_re_sent_call_by_ids_named_before_it_closed() {
    let (spans, grouped) = proxied("sse-cut-mid-event", "progress", "proxy-resent");
    assert_tree(&spans);
    assert_eq!(calls(&spans).len(), grouped.len());
    let several: Vec<&Value> = grouped
        .iter()
        .filter(|c| c["entries"].as_array().unwrap().len() > 1)
        .collect();
    assert!(
        !several.is_empty(),
        "a call of several exchanges: {grouped:#?}"
    );
    for c in several {
        let span = span_of_call(&spans, c);
        let mut kids = children(&spans, span);
        assert_eq!(kids.len(), c["entries"].as_array().unwrap().len());
        let a = attrs(&span.attributes);
        assert_eq!(a["mcp_verdict.post_count"], c["post_count"].to_string());
        assert_eq!(
            a["mcp_verdict.retry_origin"],
            c["retry_origin"].as_str().unwrap()
        );
        // Each run had its own session, each named by its stand-in; the call's is its first
        // exchange's.
        kids.sort_by_key(|s| s.start_time_unix_nano);
        assert_eq!(span.start_time_unix_nano, kids[0].start_time_unix_nano);
        assert_eq!(
            a["mcp.session.id"],
            attrs(&kids[0].attributes)["mcp.session.id"]
        );
        for kid in kids {
            assert!(attrs(&kid.attributes)["mcp.session.id"].starts_with("<redacted-"));
        }
    }
}
