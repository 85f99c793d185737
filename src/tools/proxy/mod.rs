//! `mcp-verdict proxy`: a transparent Streamable-HTTP proxy that judges every exchange as it
//! streams, for clients in any language.
//!
//! The proxy serves the upstream endpoint's own path on a local address, forwards POST, GET and
//! DELETE byte for byte (hop-by-hop headers aside), and hands the same bytes to the sans-IO core
//! through one [`Session`](crate::Session), so its verdicts equal `replay` of its recording.
//! Forwarding never waits on the analysis and never changes because of it (fail open).
//!
//! Modules, one job each: `config` (settings, errors), `guard` (what is refused before
//! forwarding), `headers` (hop-by-hop), `upstream` (the client), `server` and `forward` (the
//! client side), `tap` (what one exchange's forwarding notes), `judge` (the thread that judges
//! the notes, off the forwarding path), `judging` (the analysis of one exchange), `tee` (the
//! forwarding body), `shared` (state of one proxy), [`sinks`], [`calls`] and [`metrics`]
//! (outputs), [`ui`] (the live page).
//!
//! Memory per stream is bounded: hyper's buffers on both connections, one chunk in flight, and
//! the analysis buffers bounded by [`Limits`](crate::Limits) (see docs/proxy.md for the figure).

mod arrivals;
pub mod calls;
mod config;
mod forward;
mod guard;
mod headers;
mod judge;
mod judging;
mod lines;
pub mod metrics;
mod server;
mod shared;
pub mod sinks;
mod tap;
mod tee;
#[cfg(feature = "tls")]
mod tls;
pub mod ui;
mod unanswered;
mod upstream;

use std::net::SocketAddr;
use std::sync::Arc;

pub use crate::redact::REDACTED;
pub use arrivals::Arrival;
pub use calls::{CallGrouper, CallLog, CallSink, HumanCallLines};
#[doc(hidden)]
pub use config::AnalysisStep;
pub use config::{Config, ProxyError};
pub use metrics::Metrics;
pub use sinks::{ExchangeRecord, HumanLines, JsonLog, Opened, Recorder, Sink};

use shared::Shared;

/// A running proxy. Dropping it stops accepting (connections in flight end with their tasks).
pub struct Proxy {
    addr: SocketAddr,
    path: String,
    upstream: reqwest::Url,
    recorder: Option<Arc<Recorder>>,
    calls: Option<Arc<CallGrouper>>,
    shared: Arc<Shared>,
    task: tokio::task::JoinHandle<()>,
}

/// Sets up a proxy: outputs first, then [`ProxyBuilder::start`].
pub struct ProxyBuilder {
    config: Config,
    sinks: Vec<Arc<dyn Sink>>,
    call_sinks: Vec<Arc<dyn CallSink>>,
    record: bool,
}

impl ProxyBuilder {
    /// Adds an output for finished exchanges.
    pub fn sink(mut self, sink: Arc<dyn Sink>) -> Self {
        self.sinks.push(sink);
        self
    }

    /// Adds an output for logical calls (grouped as `replay --calls` groups the recording).
    pub fn call_sink(mut self, sink: Arc<dyn CallSink>) -> Self {
        self.call_sinks.push(sink);
        self
    }

    /// A human line per exchange ([`HumanLines`]) and per call ([`HumanCallLines`], which
    /// also reads the exchanges for each call's end and retry advice) on standard error.
    pub fn human_lines(self) -> Self {
        let calls = Arc::new(HumanCallLines::default());
        self.sink(Arc::new(HumanLines))
            .sink(calls.clone())
            .call_sink(calls)
    }

    /// Keeps every exchange for a HAR recording ([`Proxy::recorder`]).
    pub fn record(mut self) -> Self {
        self.record = true;
        self
    }

    /// Binds the listen address and serves in the background on the current tokio runtime.
    ///
    /// # Errors
    /// A bad upstream URL, `https://` without TLS, or an address that cannot be bound.
    pub async fn start(mut self) -> Result<Proxy, ProxyError> {
        let (url, http) = upstream::client(
            &self.config.upstream,
            self.config.upstream_cacert.as_deref(),
        )?;
        let listen = self.config.listen;
        let listener = tokio::net::TcpListener::bind(listen)
            .await
            .map_err(|e| ProxyError::Bind(listen, e))?;
        let addr = listener
            .local_addr()
            .map_err(|e| ProxyError::Bind(listen, e))?;
        let recorder = self.record.then(|| Arc::new(Recorder::default()));
        let path = url.path().to_owned();
        let upstream = url.clone();
        let calls = (!self.call_sinks.is_empty())
            .then(|| Arc::new(CallGrouper::new(std::mem::take(&mut self.call_sinks))));
        if let Some(c) = &calls {
            self.sinks.push(c.clone());
        }
        let shared = Arc::new(
            Shared::new(
                self.config.bounded(),
                url,
                http,
                self.sinks,
                recorder.clone(),
            )
            .map_err(ProxyError::Judge)?,
        );
        let task = tokio::spawn(server::accept_loop(listener, shared.clone()));
        Ok(Proxy {
            addr,
            path,
            upstream,
            recorder,
            calls,
            shared,
            task,
        })
    }
}

impl Proxy {
    /// A proxy with `config`.
    pub fn builder(config: Config) -> ProxyBuilder {
        ProxyBuilder {
            config,
            sinks: Vec::new(),
            call_sinks: Vec::new(),
            record: false,
        }
    }

    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The endpoint clients use: the proxy's address with the upstream's path.
    pub fn url(&self) -> String {
        format!("http://{}{}", self.addr, self.path)
    }

    /// Whether anything answers at the upstream's host and port: one TCP connection, given up
    /// after `wait`. `Err` names the cause as a `CONNECTION_FAILED` verdict would (refused,
    /// DNS, timed out). The proxy serves either way; until the upstream answers, each client
    /// gets a 502 naming the cause.
    pub async fn check_upstream(&self, wait: std::time::Duration) -> Result<(), String> {
        upstream::reachable(&self.upstream, wait).await
    }

    /// Waits until every exchange that ended so far is judged and with the sinks (the judging
    /// runs on a thread of its own, a moment behind the forwarding). Blocks the calling thread
    /// (briefly: the judge is at most [`Config::max_backlog_bytes`] behind).
    pub fn settle(&self) {
        self.shared.judge.settle();
    }

    /// How often the forwarding waited for the judging because its backlog was full
    /// ([`Config::max_backlog_bytes`]).
    pub fn backlog_waits(&self) -> u64 {
        self.shared.judge.waits()
    }

    /// Closes every logical call still open and hands it to the call sinks (call it when the
    /// proxy stops: a call stays open while a later exchange could still join it). Settles
    /// first ([`Proxy::settle`]).
    pub fn close_calls(&self) {
        self.settle();
        if let Some(c) = &self.calls {
            c.close();
        }
    }

    /// The recording, when [`ProxyBuilder::record`] was asked for.
    pub fn recorder(&self) -> Option<&Recorder> {
        self.recorder.as_deref()
    }

    /// The recording, shared: for outputs that read it while the proxy runs (the live page's
    /// HAR download).
    pub fn recorder_shared(&self) -> Option<Arc<Recorder>> {
        self.recorder.clone()
    }

    /// Server requests the verdicts so far do not list, past
    /// [`Limits::max_server_requests`](crate::Limits::max_server_requests).
    pub fn server_requests_unlisted(&self) -> u64 {
        self.shared.driver().session().server_requests_unlisted()
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}
