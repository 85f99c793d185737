//! `--otlp URL` (feature `otel`): one client span per logical call, the exchanges' client
//! spans as its children, and the `mcp.client.operation.duration` histogram, in the
//! OpenTelemetry MCP semantic conventions' vocabulary (development status; since 2026 kept in
//! the `semantic-conventions-genai` repository, `docs/gen-ai/mcp.md`), sent as OTLP/HTTP
//! protobuf to `URL/v1/traces` and `URL/v1/metrics`.
//!
//! Span names `{mcp.method.name} {gen_ai.tool.name}` (or the method alone), kind client. The
//! verdict rides along as `mcp_verdict.*`; `error.type` is [`otel_call::error_kind`]; a span's
//! status is ERROR exactly then, described by the JSON-RPC error's message when there is one.
//! Messages from the server are span events of the exchange span at their arrival times. Not
//! set: `mcp.resource.uri` and `gen_ai.prompt.name` (the verdict does not carry them),
//! `jsonrpc.protocol.version` (always 2.0).
//!
//! [`otel_call::error_kind`]: super::otel_call::error_kind

use std::time::{Duration, SystemTime};

use mcp_verdict::{Call, Verdict};
use opentelemetry::metrics::{Histogram, MeterProvider as _};
use opentelemetry::trace::{
    Span as _, SpanContext, SpanKind, Status, TraceContextExt as _, TraceFlags, TraceState,
    Tracer as _, TracerProvider as _,
};
use opentelemetry::{Context, KeyValue, Value};
use opentelemetry_otlp::{MetricExporter, Protocol, SpanExporter, WithExportConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::metrics::SdkMeterProvider;
use opentelemetry_sdk::trace::{IdGenerator as _, RandomIdGenerator, SdkTracer, SdkTracerProvider};

use super::otel_call::{self, CallIds, Window};

/// Something that happened during an exchange, for a span event.
#[derive(Debug, Clone)]
pub struct Event {
    /// After the request was sent.
    pub at: Duration,
    /// `http.response.head`, or the message kind (`notification`, `server_request`, ...).
    pub name: &'static str,
    /// The message's method, when it has one.
    pub method: Option<String>,
}

/// One exchange to export.
#[derive(Debug)]
pub struct Exchange<'a> {
    /// Its verdict.
    pub verdict: &'a Verdict,
    /// When the request was sent (wall clock).
    pub start: SystemTime,
    /// From sending to the end of the exchange.
    pub duration: Duration,
    /// In time order.
    pub events: Vec<Event>,
    /// `Mcp-Session-Id`, when the exchange belongs to a session.
    pub session_id: Option<&'a str>,
    /// The server's host and port.
    pub server: Option<(String, u16)>,
}

/// The exporters, the tracer and the histogram.
pub struct Otlp {
    traces: SdkTracerProvider,
    metrics: SdkMeterProvider,
    tracer: SdkTracer,
    duration: Histogram<f64>,
    /// Random per run: the call spans' ids derive from it ([`CallIds::of`]).
    nonce: u128,
}

/// Bucket bounds the conventions recommend for `mcp.client.operation.duration` (seconds).
const BOUNDS: [f64; 14] = [
    0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
];

impl Otlp {
    /// Exporters to `url` (the OTLP/HTTP base, e.g. `http://127.0.0.1:4318`).
    pub fn new(url: &str) -> Result<Otlp, String> {
        let base = url.trim_end_matches('/');
        if !(base.starts_with("http://") || base.starts_with("https://")) {
            return Err(format!("--otlp {url}: expected an http:// or https:// URL"));
        }
        let spans = SpanExporter::builder()
            .with_http()
            .with_protocol(Protocol::HttpBinary)
            .with_endpoint(format!("{base}/v1/traces"))
            .with_timeout(Duration::from_secs(10))
            .build()
            .map_err(|e| format!("--otlp {url}: {e}"))?;
        let points = MetricExporter::builder()
            .with_http()
            .with_protocol(Protocol::HttpBinary)
            .with_endpoint(format!("{base}/v1/metrics"))
            .with_timeout(Duration::from_secs(10))
            .build()
            .map_err(|e| format!("--otlp {url}: {e}"))?;
        let resource = Resource::builder()
            .with_service_name("mcp-verdict")
            .with_attribute(KeyValue::new("service.version", env!("CARGO_PKG_VERSION")))
            .build();
        let traces = SdkTracerProvider::builder()
            .with_batch_exporter(spans)
            .with_id_generator(otel_call::Ids::default())
            .with_resource(resource.clone())
            .build();
        let metrics = SdkMeterProvider::builder()
            .with_periodic_exporter(points)
            .with_resource(resource)
            .build();
        let tracer = traces.tracer("mcp-verdict");
        let duration = metrics
            .meter("mcp-verdict")
            .f64_histogram("mcp.client.operation.duration")
            .with_unit("s")
            .with_description("Time from sending an MCP request until its response ended.")
            .with_boundaries(BOUNDS.to_vec())
            .build();
        let nonce = u128::from_be_bytes(RandomIdGenerator::default().new_trace_id().to_bytes());
        Ok(Otlp {
            traces,
            metrics,
            tracer,
            duration,
            nonce,
        })
    }

    /// The ids of the span of call `n` (numbered within this run, from 0).
    pub fn call_ids(&self, n: u64) -> CallIds {
        CallIds::of(self.nonce, n)
    }

    /// Records one call's span, with the ids [`Otlp::call_ids`] gave its exchanges as their
    /// parent: it starts with its first exchange and ends with its last (`w`).
    pub fn record_call(
        &self,
        ids: CallIds,
        call: &Call,
        w: &Window,
        server: Option<&(String, u16)>,
    ) {
        let start = w.start.unwrap_or_else(SystemTime::now);
        let builder = self
            .tracer
            .span_builder(otel_call::span_name(call))
            .with_kind(SpanKind::Client)
            .with_start_time(start)
            .with_attributes(otel_call::attributes(call, w, server));
        // A root: no parent, so the forced ids are its trace and span id.
        let mut span = otel_call::with_ids(ids, || {
            self.tracer.build_with_context(builder, &Context::new())
        });
        if otel_call::error_kind(call.error_code, call.outcome, call.complete).is_some() {
            let why = w
                .error_message
                .clone()
                .unwrap_or_else(|| call.outcome.summary().to_owned());
            span.set_status(Status::error(why));
        }
        span.end_with_timestamp(w.end.unwrap_or(start).max(start));
    }

    /// Records one exchange: its span (with events), the child of its call's span when
    /// `parent` names it, and a histogram point.
    pub fn record(&self, x: &Exchange<'_>, parent: Option<CallIds>) {
        let v = x.verdict;
        let common = metric_attributes(x);
        self.duration.record(x.duration.as_secs_f64(), &common);
        let mut attrs = common;
        attrs.extend(span_attributes(x));
        let name = match &v.tool {
            Some(tool) => format!("{} {tool}", method_name(v)),
            None => method_name(v),
        };
        let builder = self
            .tracer
            .span_builder(name)
            .with_kind(SpanKind::Client)
            .with_start_time(x.start)
            .with_attributes(attrs);
        let cx = match parent {
            // The call span may not exist yet (the proxy ends it later): its ids are derived.
            Some(ids) => Context::new().with_remote_span_context(SpanContext::new(
                ids.trace,
                ids.span,
                TraceFlags::SAMPLED,
                false,
                TraceState::default(),
            )),
            None => Context::new(),
        };
        let mut span = self.tracer.build_with_context(builder, &cx);
        for e in &x.events {
            let mut attrs = Vec::new();
            if let Some(m) = &e.method {
                attrs.push(KeyValue::new("mcp.method.name", m.clone()));
            }
            span.add_event_with_timestamp(e.name, x.start + e.at, attrs);
        }
        // ERROR exactly when error.type is set; the description is the JSON-RPC error's
        // message when there is one (as the conventions ask), else why the reply failed.
        if error_type(v).is_some() {
            let why = v
                .error_message
                .clone()
                .unwrap_or_else(|| v.retry.reason.to_string());
            span.set_status(Status::error(why));
        }
        span.end_with_timestamp(x.start + x.duration);
    }

    /// Sends what is buffered and stops the exporters.
    pub fn shutdown(&self) -> Result<(), String> {
        let traces = self.traces.shutdown().map_err(|e| e.to_string());
        let metrics = self.metrics.shutdown().map_err(|e| e.to_string());
        traces.and(metrics).map_err(|e| format!("--otlp: {e}"))
    }
}

/// `mcp.method.name`: the request's method, or `(response)` for a client's answer POST.
fn method_name(v: &Verdict) -> String {
    v.method.as_deref().unwrap_or("(response)").to_owned()
}

/// The low-cardinality attributes, shared by the span and the histogram.
fn metric_attributes(x: &Exchange<'_>) -> Vec<KeyValue> {
    let v = x.verdict;
    let mut common = vec![
        KeyValue::new("mcp.method.name", method_name(v)),
        KeyValue::new("mcp.protocol.version", v.protocol_version.as_str()),
        KeyValue::new("network.transport", "tcp"),
        KeyValue::new("network.protocol.name", "http"),
        // reqwest is built without HTTP/2 and soak's direct path is HTTP/1.1.
        KeyValue::new("network.protocol.version", "1.1"),
    ];
    if let Some(tool) = &v.tool {
        common.push(KeyValue::new("gen_ai.tool.name", tool.to_string()));
        common.push(KeyValue::new("gen_ai.operation.name", "execute_tool"));
    }
    if let Some((host, port)) = &x.server {
        common.push(KeyValue::new("server.address", host.clone()));
        common.push(KeyValue::new("server.port", i64::from(*port)));
    }
    if let Some(code) = v.error_code {
        common.push(KeyValue::new("rpc.response.status_code", code.to_string()));
    }
    if let Some(kind) = error_type(v) {
        common.push(KeyValue::new("error.type", kind));
    }
    common
}

/// What only the span carries: ids, the session, the HTTP status and the verdict.
fn span_attributes(x: &Exchange<'_>) -> Vec<KeyValue> {
    let v = x.verdict;
    let mut attrs = Vec::new();
    // The conventions leave a null or missing id out.
    if let Some(id) = v.id.as_ref().filter(|id| !id.is_null()) {
        attrs.push(KeyValue::new("jsonrpc.request.id", otel_call::id_text(id)));
    }
    // A replayed entry without a method is a POST, as the verdicts read it.
    let method = v.http_method.as_deref().unwrap_or("POST");
    attrs.push(KeyValue::new("http.request.method", method.to_owned()));
    if let Some(session) = x.session_id {
        attrs.push(KeyValue::new("mcp.session.id", session.to_owned()));
    }
    if let Some(status) = v.status {
        attrs.push(KeyValue::new(
            "http.response.status_code",
            i64::from(status),
        ));
    }
    attrs.extend([
        KeyValue::new("mcp_verdict.layer", v.layer.as_str()),
        KeyValue::new("mcp_verdict.outcome", v.outcome.as_str()),
        KeyValue::new("mcp_verdict.complete", v.complete),
        KeyValue::new("mcp_verdict.retry_advice", v.retry.advice.as_str()),
        KeyValue::new("mcp_verdict.end", super::html::end_word(v)),
    ]);
    if let Some(origin) = v.status_origin {
        attrs.push(KeyValue::new("mcp_verdict.status_origin", origin.as_str()));
    }
    if !v.violations.is_empty() {
        let rules: Vec<_> = v.violations.iter().map(|r| r.rule.id().into()).collect();
        attrs.push(KeyValue::new(
            "mcp_verdict.violations",
            Value::Array(opentelemetry::Array::String(rules)),
        ));
    }
    attrs
}

/// `error.type` of an exchange: the call spans' mapping, from its own outcome.
fn error_type(v: &Verdict) -> Option<String> {
    otel_call::error_kind(v.error_code, v.outcome, v.complete)
}

/// Host and port of an http(s) URL, for `server.address` / `server.port`.
pub fn server_of(url: &str) -> Option<(String, u16)> {
    let url = reqwest::Url::parse(url).ok()?;
    Some((url.host_str()?.to_owned(), url.port_or_known_default()?))
}
