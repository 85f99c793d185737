//! A reqwest client wrapper: sends one JSON-RPC message to an MCP endpoint with the headers the
//! negotiated version needs, and returns the message stream with its verdict.
//!
//! 2026-07-28: `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name` and the `_meta` members on every
//! request; the handshake is `server/discover`. 2025-x: `initialize`, then the session id and the
//! version header on every later request.

use std::pin::Pin;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use bytes::Bytes;
use futures_core::Stream;
use serde_json::{Value, json};
use tokio::time::Instant;

mod session;

use super::body::{Deadlines, EntrySink, JudgedBody, SharedDriver, VerdictSink};
use super::lock;
use super::negotiate;
use crate::driver::{Driver, Flight, Sent};
use crate::exchange::ResponseHead;
use crate::har::Entry;
use crate::limits::Limits;
use crate::redact::Redaction;
use crate::request::Headers;
use crate::verdict::{End, Outcome, Verdict};
use crate::version::ProtocolVersion;
use crate::wire;

/// The body stream type of a live call.
pub type BodyStream = Pin<Box<dyn Stream<Item = Result<Bytes, reqwest::Error>> + Send>>;

/// One call in flight: messages as they arrive, then the verdict.
pub type Call = JudgedBody<BodyStream>;

/// Which handshake to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Handshake {
    /// `server/discover` under 2026-07-28.
    Stateless,
    /// `initialize` and `notifications/initialized` under this 2025 revision.
    Initialize(ProtocolVersion),
    /// Try 2026-07-28; fall back to 2025-11-25 `initialize` when the server is legacy.
    Auto,
}

/// A request serialized once, sent many times with fresh ids ([`Client::prepare`]).
#[derive(Debug, Clone)]
pub struct Prepared {
    headers: Vec<(String, String)>,
    /// The body split where the id goes.
    parts: Vec<Vec<u8>>,
}

/// Records every exchange (for `probe --record`).
pub type Recorder = Arc<Mutex<Vec<Entry>>>;

/// Builds a [`Client`].
pub struct ClientBuilder {
    url: String,
    headers: Vec<(String, String)>,
    deadlines: Deadlines,
    limits: Limits,
    sink: Option<VerdictSink>,
    recorder: Option<Recorder>,
    record_max_body_bytes: u64,
    redaction: Redaction,
    http: Option<reqwest::Client>,
    follow_redirects: usize,
    capabilities: Value,
    #[cfg(feature = "tls")]
    tls: TlsTrust,
}

/// Which server certificates the built-in client accepts besides the platform's roots.
#[cfg(feature = "tls")]
#[derive(Default)]
struct TlsTrust {
    roots: Vec<reqwest::Certificate>,
    accept_invalid_certs: bool,
}

impl ClientBuilder {
    /// Adds a header sent on every request (e.g. `Authorization`).
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Adds a secret header: sent as given, shown as `<redacted>` in records and cut out of
    /// any text shown (the user's `-H` headers are all secret: see [`Redaction`]).
    pub fn secret_header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        let (name, value) = (name.into(), value.into());
        self.redaction.add_user_header(&name, &value);
        self.headers.push((name, value));
        self
    }

    /// What recordings hide (default: the one policy, on). Secret headers added before or
    /// after stay hidden unless the policy is off.
    pub fn redaction(mut self, redaction: Redaction) -> Self {
        let enabled = redaction.enabled();
        let mut policy = redaction;
        if enabled {
            for (name, value) in &self.headers {
                if self.redaction.hides_header(name) {
                    policy.add_user_header(name, value);
                }
            }
        }
        self.redaction = policy;
        self
    }

    /// The client capabilities declared in `initialize` (2025-x) and in every request's
    /// `_meta` (2026-07-28); default `{}`. Declare only what the caller answers: a server may
    /// send `elicitation/create`, `sampling/createMessage` or `roots/list` to a client that
    /// declares them.
    pub fn capabilities(mut self, capabilities: Value) -> Self {
        self.capabilities = capabilities;
        self
    }

    /// Deadlines for every call.
    pub fn deadlines(mut self, deadlines: Deadlines) -> Self {
        self.deadlines = deadlines;
        self
    }

    /// Limits for every exchange.
    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// Called with every verdict.
    pub fn on_verdict(mut self, sink: impl Fn(&Verdict) + Send + Sync + 'static) -> Self {
        self.sink = Some(Arc::new(sink));
        self
    }

    /// Records every exchange into `recorder`.
    pub fn record(mut self, recorder: Recorder) -> Self {
        self.recorder = Some(recorder);
        self
    }

    /// Keeps at most `max` bytes of each recorded response body (default: unlimited, so the
    /// cap is `max_body_bytes + 1`, what a replay needs to give a JSON body the same verdict).
    /// The recording keeps `min(max, max_body_bytes) + 1` bytes: a body recorded at that length
    /// was cut.
    pub fn record_max_body_bytes(mut self, max: u64) -> Self {
        self.record_max_body_bytes = max;
        self
    }

    /// Follows up to `max` redirects (default 0: a 3xx is the answer, judged `HTTP_ERROR` with
    /// its `Location` in the reason). Only method-preserving 307/308 are followed (a 301/302
    /// would turn the POST into a GET), and never to another origin when secret headers are
    /// set: there the 3xx is the answer. Applies to the built-in reqwest client only.
    pub fn follow_redirects(mut self, max: usize) -> Self {
        self.follow_redirects = max;
        self
    }

    /// Also trusts these root certificates (a private CA, a self-signed server), beside the
    /// platform's. Applies to the built-in reqwest client only.
    #[cfg(feature = "tls")]
    pub fn root_certificates(
        mut self,
        certs: impl IntoIterator<Item = reqwest::Certificate>,
    ) -> Self {
        self.tls.roots.extend(certs);
        self
    }

    /// Accepts any server certificate without checking it (expired, self-signed, another
    /// host's): encrypted, not authenticated; for test servers. Applies to the built-in reqwest
    /// client only.
    #[cfg(feature = "tls")]
    pub fn accept_invalid_certs(mut self, accept: bool) -> Self {
        self.tls.accept_invalid_certs = accept;
        self
    }

    /// Uses this reqwest client (connection pool, proxies, TLS settings). Its own redirect
    /// policy applies (reqwest's default follows up to 10, forwarding custom headers).
    pub fn http_client(mut self, http: reqwest::Client) -> Self {
        self.http = Some(http);
        self
    }

    /// Builds the client.
    ///
    /// # Errors
    /// When the URL does not parse.
    pub fn build(self) -> Result<Client, BuildError> {
        let url = reqwest::Url::parse(&self.url).map_err(|e| BuildError::Url {
            // Shown to users: the URL's secrets stay out of the message.
            url: crate::redact::url(&self.url),
            reason: e.to_string(),
        })?;
        let http = match self.http {
            Some(http) => http,
            None => {
                let builder = reqwest::Client::builder().redirect(redirect_policy(
                    &url,
                    self.follow_redirects,
                    self.headers.iter().any(|(n, _)| {
                        Redaction::on().hides_header(n) || self.redaction.hides_header(n)
                    }),
                ));
                #[cfg(feature = "tls")]
                let builder = {
                    let builder =
                        builder.tls_danger_accept_invalid_certs(self.tls.accept_invalid_certs);
                    if self.tls.roots.is_empty() {
                        builder
                    } else {
                        builder.tls_certs_merge(self.tls.roots)
                    }
                };
                builder
                    .build()
                    .map_err(|e| BuildError::Http(e.to_string()))?
            }
        };
        let mut driver = Driver::new(self.limits).redaction(self.redaction);
        if self.recorder.is_some() {
            // One byte past `max_body_bytes` still replays as LIMIT_EXCEEDED; an endless
            // stream cannot grow the recording without bound.
            // `record_max_body_bytes` caps it lower when asked (a body recorded at that length
            // was cut).
            let cap = self.limits.max_body_bytes.min(self.record_max_body_bytes);
            driver = driver.recording(cap.saturating_add(1));
        }
        let entries: Option<EntrySink> = self.recorder.map(|rec| {
            Arc::new(move |entry: Entry| {
                // In the order the exchanges began (a HAR's order), whatever order they end in.
                let mut list = lock(&rec);
                let at = list.partition_point(|e| e.index <= entry.index);
                list.insert(at, entry);
            }) as EntrySink
        });
        Ok(Client {
            inner: Arc::new(Inner {
                http,
                url,
                headers: self.headers,
                deadlines: self.deadlines,
                sink: self.sink,
                entries,
                driver: Arc::new(Mutex::new(driver)),
                state: Mutex::new(State::default()),
                next_id: AtomicI64::new(1),
                capabilities: self.capabilities,
            }),
        })
    }
}

/// Why a [`ClientBuilder`] could not build its client.
#[derive(Debug)]
#[non_exhaustive]
pub enum BuildError {
    /// The endpoint URL does not parse.
    Url {
        /// The URL as given.
        url: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The HTTP client cannot be set up (TLS backend, system configuration).
    Http(String),
}

impl std::fmt::Display for BuildError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BuildError::Url { url, reason } => write!(f, "{url}: {reason}"),
            BuildError::Http(reason) => write!(f, "cannot build the HTTP client: {reason}"),
        }
    }
}

impl std::error::Error for BuildError {}

#[derive(Default)]
struct State {
    version: Option<ProtocolVersion>,
    session_id: Option<String>,
}

struct Inner {
    http: reqwest::Client,
    url: reqwest::Url,
    headers: Vec<(String, String)>,
    deadlines: Deadlines,
    sink: Option<VerdictSink>,
    /// Where recorded entries go (when recording).
    entries: Option<EntrySink>,
    driver: SharedDriver,
    state: Mutex<State>,
    next_id: AtomicI64,
    capabilities: Value,
}

/// An MCP client that judges every exchange. Cheap to clone; calls may run concurrently.
#[derive(Clone)]
pub struct Client {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("url", &self.inner.url.as_str())
            .finish()
    }
}

impl Client {
    /// Starts building a client for the MCP endpoint `url`.
    pub fn builder(url: impl Into<String>) -> ClientBuilder {
        ClientBuilder {
            url: url.into(),
            headers: Vec::new(),
            deadlines: Deadlines::default(),
            limits: Limits::default(),
            sink: None,
            recorder: None,
            record_max_body_bytes: u64::MAX,
            redaction: Redaction::on(),
            http: None,
            follow_redirects: 0,
            capabilities: json!({}),
            #[cfg(feature = "tls")]
            tls: TlsTrust::default(),
        }
    }

    /// What this client's recordings hide (its secret headers included): the policy for
    /// anything else shown of its traffic (messages, report pages).
    pub fn redaction(&self) -> Redaction {
        lock(&self.inner.driver).redaction_policy().clone()
    }

    /// The negotiated protocol version, once a handshake succeeded (or one was set).
    pub fn protocol(&self) -> Option<ProtocolVersion> {
        lock(&self.inner.state).version
    }

    /// Server requests the verdicts so far do not list, past
    /// [`Limits::max_server_requests`](crate::Limits::max_server_requests).
    pub fn server_requests_unlisted(&self) -> u64 {
        lock(&self.inner.driver)
            .session()
            .server_requests_unlisted()
    }

    /// Uses `version` without a handshake.
    pub fn set_protocol(&self, version: ProtocolVersion) {
        lock(&self.inner.state).version = Some(version);
    }

    /// Runs the handshake and returns its verdicts (the discover probe, `initialize`,
    /// `notifications/initialized`, as they happened). A version rejection (`-32022`, or a 400
    /// naming the protocol version) that lists supported revisions is retried once with one of
    /// them (see `adapters::negotiate`); both verdicts are returned.
    pub async fn handshake(&self, mode: Handshake) -> Vec<Verdict> {
        let mut verdicts = Vec::new();
        let mut retried = false;
        let mut version = match mode {
            Handshake::Initialize(v) => v,
            _ => ProtocolVersion::V2025_11_25,
        };
        if matches!(mode, Handshake::Stateless | Handshake::Auto) {
            let stateless = ProtocolVersion::V2026_07_28;
            self.set_protocol(stateless);
            let (v, answer) = self.request_answer("server/discover", json!({})).await;
            let next = answer
                .as_ref()
                .and_then(|a| negotiate::retry_with(a, stateless));
            let legacy = mode == Handshake::Auto && is_legacy_signal(&v);
            verdicts.push(v);
            match next {
                Some(v) if v.is_stateless() => {
                    let again = self.request("server/discover", json!({})).await;
                    verdicts.push(again.verdict().await);
                    return verdicts;
                }
                Some(v) => {
                    retried = true;
                    version = v;
                }
                None if legacy => {}
                None => return verdicts,
            }
        }
        loop {
            {
                let mut st = lock(&self.inner.state);
                st.version = None;
                st.session_id = None;
            }
            let params = json!({
                "protocolVersion": version.as_str(),
                "capabilities": self.inner.capabilities.clone(),
                "clientInfo": {"name": "mcp-verdict", "version": env!("CARGO_PKG_VERSION")},
            });
            let (init, answer) = self.request_answer("initialize", params).await;
            let ok = init.complete && init.error_code.is_none();
            let next = answer
                .as_ref()
                .filter(|_| !ok && !retried)
                .and_then(|a| negotiate::retry_with(a, version))
                .filter(|v| !v.is_stateless() && *v != version);
            // The server's answer decides the revision, when it is one this crate speaks.
            let chosen = answer
                .as_ref()
                .and_then(|a| a.pointer("/result/protocolVersion"))
                .and_then(Value::as_str)
                .and_then(|s| ProtocolVersion::parse(s).filter(|v| v.as_str() == s))
                .filter(|v| ok && !v.is_stateless())
                .unwrap_or(version);
            lock(&self.inner.state).version = Some(chosen);
            verdicts.push(init);
            if let Some(v) = next {
                retried = true;
                version = v;
                continue;
            }
            if ok {
                verdicts.push(self.notify("notifications/initialized", None).await);
            }
            return verdicts;
        }
    }

    /// Sends a request and reads it to the end: its verdict, and the response message when one
    /// came (the terminal one, or the JSON body of an HTTP error, such as a `-32022` rejection
    /// that lists the supported versions).
    pub async fn request_answer(&self, method: &str, params: Value) -> (Verdict, Option<Value>) {
        /// An error body is short; more than this is not read for an answer.
        const MAX_ERROR_BODY: usize = 64 * 1024;
        let raw = Arc::new(Mutex::new(Vec::new()));
        let sink = raw.clone();
        let mut call = self
            .request(method, params)
            .await
            .and_tap(Box::new(move |t| {
                if let super::body::Tap::Chunk(bytes) = t {
                    let mut raw = lock(&sink);
                    let room = MAX_ERROR_BODY.saturating_sub(raw.len());
                    raw.extend_from_slice(&bytes[..bytes.len().min(room)]);
                }
            }));
        let mut answer = None;
        while let Some(m) = call.next_message().await {
            if m.terminal {
                answer = m.value().ok();
            }
        }
        let verdict = call.verdict().await;
        if answer.is_none() && verdict.outcome == Outcome::HttpError {
            answer = serde_json::from_slice(&lock(&raw)).ok();
        }
        (verdict, answer)
    }

    /// Sends a request with a fresh id and returns the call in flight.
    pub async fn request(&self, method: &str, params: Value) -> Call {
        let id = self.inner.next_id.fetch_add(1, Ordering::Relaxed);
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await
    }

    /// Sends a notification and returns its verdict (202 expected).
    pub async fn notify(&self, method: &str, params: Option<Value>) -> Verdict {
        let mut msg = json!({"jsonrpc": "2.0", "method": method});
        if let Some(p) = params {
            msg["params"] = p;
        }
        self.send(msg).await.verdict().await
    }

    /// Sends a request with a fresh id and these extra headers (after the ones the version
    /// needs): e.g. the `Mcp-Param-*` headers a tool's `x-mcp-header` parameters ask for.
    pub async fn request_with_headers(
        &self,
        method: &str,
        params: Value,
        extra: &[(String, String)],
    ) -> Call {
        let id = self.inner.next_id.fetch_add(1, Ordering::Relaxed);
        let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.send_with(message, extra).await
    }

    /// Sends one JSON-RPC message as given, adding the headers (and, on 2026-07-28, the
    /// `_meta` members) the negotiated version needs.
    pub async fn send(&self, message: Value) -> Call {
        self.send_with(message, &[]).await
    }

    /// [`Client::send`] with extra headers after the ones the version needs.
    async fn send_with(&self, mut message: Value, extra: &[(String, String)]) -> Call {
        let mut headers = self.headers_for(&mut message);
        headers.extend(extra.iter().cloned());
        let is_init = message.get("method").and_then(Value::as_str) == Some("initialize");
        let body = serde_json::to_vec(&message).unwrap_or_default();
        self.dispatch(reqwest::Method::POST, body, Headers::from(headers), is_init)
            .await
    }

    /// Prepares `method` with `params` once, for sending many times with fresh ids (soak).
    /// Uses the version and session negotiated so far: call it after the handshake. The body is
    /// serialized once; each send only splices in the id (also used as the progress token).
    pub fn prepare(&self, method: &str, mut params: Value) -> Prepared {
        const MARK: &str = "\u{1}id\u{1}";
        if let Value::Object(p) = &mut params {
            let meta = p.entry("_meta").or_insert_with(|| json!({}));
            if let Value::Object(m) = meta {
                m.insert("progressToken".into(), json!(MARK));
            }
        }
        let mut message = json!({"jsonrpc": "2.0", "id": MARK, "method": method, "params": params});
        let headers = self.headers_for(&mut message);
        let text = serde_json::to_string(&message).unwrap_or_default();
        let quoted = serde_json::to_string(MARK).unwrap_or_default();
        let parts = text
            .split(quoted.as_str())
            .map(|p| p.as_bytes().to_vec())
            .collect();
        Prepared { headers, parts }
    }

    /// Sends a prepared request with a fresh id.
    pub async fn send_prepared(&self, prepared: &Prepared) -> Call {
        let body = self.instance(prepared);
        let headers: Headers = prepared.headers.iter().cloned().collect();
        self.dispatch(reqwest::Method::POST, body, headers, false)
            .await
    }

    /// A prepared request's body with a fresh id.
    fn instance(&self, prepared: &Prepared) -> Vec<u8> {
        let id = self.inner.next_id.fetch_add(1, Ordering::Relaxed);
        prepared.parts.join(id.to_string().as_bytes())
    }

    /// Starts a flight for a request this client sends (the one exchange path).
    fn begin(&self, method: &str, headers: Headers, body: &[u8]) -> Flight {
        lock(&self.inner.driver).begin(Sent {
            index: None,
            method,
            url: self.inner.url.as_str(),
            headers,
            body,
            started: self
                .inner
                .entries
                .is_some()
                .then(|| rfc3339(SystemTime::now())),
            from_client: true,
        })
    }

    /// Starts judging a prepared request sent by another transport ([`super::h1`]): the body
    /// to send and the flight to feed.
    #[cfg_attr(not(feature = "tools"), allow(dead_code))] // the soak tool's h1 path
    pub(crate) fn begin_prepared(&self, prepared: &Prepared) -> (Vec<u8>, Flight) {
        let body = self.instance(prepared);
        let headers: Headers = prepared.headers.iter().cloned().collect();
        let flight = self.begin("POST", headers, &body);
        (body, flight)
    }

    /// Judges the rest of an exchange begun with [`Client::begin_prepared`] from its response.
    pub(crate) fn judge_body<S, E>(
        &self,
        mut flight: Flight,
        head: ResponseHead,
        body: S,
        started: Instant,
    ) -> JudgedBody<S>
    where
        S: Stream<Item = Result<Bytes, E>> + Unpin,
    {
        flight.on_head(head);
        let mut call = JudgedBody::new(
            self.inner.driver.clone(),
            flight,
            body,
            self.inner.deadlines,
            started,
        );
        if let Some(sink) = &self.inner.sink {
            call = call.with_sink(sink.clone());
        }
        if let Some(entries) = &self.inner.entries {
            call = call.with_entries(entries.clone());
        }
        call
    }

    /// The verdict of a prepared call cancelled before it got an answer (soak's Ctrl-C).
    #[cfg_attr(not(feature = "tools"), allow(dead_code))] // the soak tool's h1 path
    pub(crate) fn cancelled(&self, prepared: &Prepared) -> Verdict {
        let (_, flight) = self.begin_prepared(prepared);
        let rows = self.judge_failure(flight, End::Cancelled, None, Instant::now());
        rows.into_iter()
            .next()
            .expect("a client's own request is always judged (Sent::from_client)")
    }

    /// Ends an exchange begun with [`Client::begin_prepared`] that got no response head;
    /// `cause` says why the connection failed. Gives its rows (one, or one per request id of
    /// a batch).
    pub(crate) fn judge_failure(
        &self,
        flight: Flight,
        end: End,
        cause: Option<&str>,
        started: Instant,
    ) -> Vec<Verdict> {
        let clocked = super::body::Clocked {
            elapsed: started.elapsed(),
            ..Default::default()
        };
        let mut finished = super::body::finish(&self.inner.driver, flight, end, clocked, &mut ());
        for verdict in &mut finished.rows {
            if let Some(cause) = cause.filter(|_| verdict.outcome == Outcome::ConnectionFailed) {
                super::cause::explain(verdict, cause);
            }
        }
        super::body::deliver(
            finished,
            self.inner.sink.as_ref(),
            self.inner.entries.as_ref(),
        )
    }

    /// The deadlines every call runs under.
    #[cfg_attr(not(feature = "tools"), allow(dead_code))] // the soak tool's h1 path
    pub(crate) fn deadlines(&self) -> Deadlines {
        self.inner.deadlines
    }

    /// The endpoint.
    pub fn url(&self) -> &reqwest::Url {
        &self.inner.url
    }

    /// The headers of a prepared request, as sent.
    #[cfg_attr(not(feature = "tools"), allow(dead_code))] // the soak tool's h1 path
    pub(crate) fn prepared_headers(prepared: &Prepared) -> &[(String, String)] {
        &prepared.headers
    }

    /// The headers (and 2026 `_meta` members) a message needs under the negotiated version.
    fn headers_for(&self, message: &mut Value) -> Vec<(String, String)> {
        let inner = &self.inner;
        let (version, session_id) = {
            let st = lock(&inner.state);
            (st.version, st.session_id.clone())
        };
        let is_init = message.get("method").and_then(Value::as_str) == Some("initialize");
        let mut headers: Vec<(String, String)> = vec![
            ("Content-Type".into(), "application/json".into()),
            (
                "Accept".into(),
                "application/json, text/event-stream".into(),
            ),
        ];
        if let Some(v) = version {
            if v >= ProtocolVersion::V2025_06_18 && !is_init {
                headers.push(("MCP-Protocol-Version".into(), v.as_str().into()));
            }
            if v.is_stateless() {
                add_stateless_fields(message, &mut headers, v, &inner.capabilities);
            } else if let Some(sid) = &session_id {
                headers.push(("Mcp-Session-Id".into(), sid.clone()));
            }
        }
        headers.extend(inner.headers.iter().cloned());
        headers
    }

    /// Resumes an interrupted 2025-x stream: `GET` with `Last-Event-ID`, judged as the answer to
    /// the request whose stream carried that id.
    pub async fn resume(&self, last_event_id: &str) -> Call {
        let inner = &self.inner;
        let (version, session_id) = {
            let st = lock(&inner.state);
            (st.version, st.session_id.clone())
        };
        let mut headers: Vec<(String, String)> = vec![
            ("Accept".into(), "text/event-stream".into()),
            ("Last-Event-ID".into(), last_event_id.into()),
        ];
        if let Some(v) = version.filter(|v| *v >= ProtocolVersion::V2025_06_18) {
            headers.push(("MCP-Protocol-Version".into(), v.as_str().into()));
        }
        if let Some(sid) = session_id {
            headers.push(("Mcp-Session-Id".into(), sid));
        }
        headers.extend(inner.headers.iter().cloned());
        self.dispatch(
            reqwest::Method::GET,
            Vec::new(),
            Headers::from(headers),
            false,
        )
        .await
    }

    async fn dispatch(
        &self,
        http_method: reqwest::Method,
        mut body: Vec<u8>,
        headers: Headers,
        is_init: bool,
    ) -> Call {
        let inner = &self.inner;
        let mut rb = inner.http.request(http_method.clone(), inner.url.clone());
        for (n, v) in headers.iter() {
            rb = rb.header(n, v);
        }
        let flight = self.begin(http_method.as_str(), headers, &body);
        let started = Instant::now();
        let rb = rb.body(std::mem::take(&mut body));
        let result = inner.deadlines.until_head(rb.send()).await;
        let response = match result {
            Ok(Ok(r)) => r,
            failed => {
                let (end, cause) = match &failed {
                    Ok(Err(e)) => (End::Reset, Some(super::cause::of_error(e, &inner.url))),
                    _ => (End::Timeout, None),
                };
                return JudgedBody::finished_rows(self.judge_failure(
                    flight,
                    end,
                    cause.as_deref(),
                    started,
                ));
            }
        };
        let head = head_of(&response);
        if is_init && let Some(sid) = head.headers.get("mcp-session-id") {
            lock(&inner.state).session_id = Some(sid.to_owned());
        }
        let stream: BodyStream = Box::pin(response.bytes_stream());
        self.judge_body(flight, head, stream, started)
    }
}

/// The response head as the core takes it.
fn head_of(response: &reqwest::Response) -> ResponseHead {
    ResponseHead {
        status: response.status().as_u16(),
        headers: response
            .headers()
            .iter()
            .map(|(n, v)| {
                (
                    n.as_str().to_owned(),
                    String::from_utf8_lossy(v.as_bytes()).into_owned(),
                )
            })
            .collect(),
    }
}

/// The redirect policy of the built-in client: none unless asked; then 307/308 only, at most
/// `max`, and same-origin only when secret headers would travel along.
fn redirect_policy(origin: &reqwest::Url, max: usize, secrets: bool) -> reqwest::redirect::Policy {
    if max == 0 {
        return reqwest::redirect::Policy::none();
    }
    let origin = origin.origin();
    reqwest::redirect::Policy::custom(move |attempt| {
        let preserving = matches!(attempt.status().as_u16(), 307 | 308);
        let foreign = attempt.url().origin() != origin;
        if !preserving || attempt.previous().len() > max || (secrets && foreign) {
            attempt.stop()
        } else {
            attempt.follow()
        }
    })
}

/// 2026-07-28 request fields: `_meta` members, `Mcp-Method` and `Mcp-Name`.
fn add_stateless_fields(
    message: &mut Value,
    headers: &mut Vec<(String, String)>,
    v: ProtocolVersion,
    capabilities: &Value,
) {
    let Some(method) = message
        .get("method")
        .and_then(Value::as_str)
        .map(str::to_owned)
    else {
        return;
    };
    headers.push(("Mcp-Method".into(), method.clone()));
    if message.get("id").is_none() {
        return;
    }
    let params = message
        .as_object_mut()
        .map(|m| m.entry("params").or_insert_with(|| json!({})));
    let Some(Value::Object(params)) = params else {
        return;
    };
    let name_key = match method.as_str() {
        "tools/call" | "prompts/get" => Some("name"),
        "resources/read" => Some("uri"),
        // SEP-2663: gateways route task requests to the instance holding the task.
        "tasks/get" | "tasks/update" | "tasks/cancel" => Some("taskId"),
        _ => None,
    };
    if let Some(name) = name_key.and_then(|k| params.get(k)).and_then(Value::as_str) {
        headers.push(("Mcp-Name".into(), header_safe(name)));
    }
    let meta = params.entry("_meta").or_insert_with(|| json!({}));
    if let Value::Object(meta) = meta {
        meta.entry(wire::META_PROTOCOL_VERSION)
            .or_insert_with(|| json!(v.as_str()));
        meta.entry(wire::META_CLIENT_CAPABILITIES)
            .or_insert_with(|| capabilities.clone());
        meta.entry("io.modelcontextprotocol/clientInfo")
            .or_insert_with(
                || json!({"name": "mcp-verdict", "version": env!("CARGO_PKG_VERSION")}),
            );
    }
}

/// A value for an MCP header (`Mcp-Name`, a tool's `Mcp-Param-*`) as sent: plain when it is
/// safe visible ASCII (inner spaces allowed), else the `=?base64?…?=` form 2026-07-28 defines.
pub fn header_safe(v: &str) -> String {
    use base64::Engine;
    let safe = v.bytes().all(|b| (0x20..0x7f).contains(&b)) && v.trim() == v;
    if safe {
        v.to_owned()
    } else {
        format!(
            "=?base64?{}?=",
            base64::engine::general_purpose::STANDARD.encode(v.as_bytes())
        )
    }
}

/// A 2026 probe answered the way a legacy server answers: 400/404/405 without a recognised
/// modern error, or a JSON-RPC error that is not a modern rejection. An unsupported-version
/// rejection (-32022) counts as legacy too: 2026-07-28 is the only stateless revision we speak,
/// so a server that refuses it can only offer 2025 revisions (rmcp answers so when its handler
/// lists none newer than 2025-11-25).
fn is_legacy_signal(v: &Verdict) -> bool {
    let modern = v
        .error_code
        .is_some_and(|c| wire::is_pre_dispatch(c) && c != wire::UNSUPPORTED_PROTOCOL_VERSION);
    match v.outcome {
        Outcome::HttpError => matches!(v.status, Some(400 | 404 | 405)) && !modern,
        Outcome::JsonrpcError => !modern,
        _ => false,
    }
}

pub(super) fn rfc3339(t: SystemTime) -> String {
    // Milliseconds when there are any: call grouping compares retry delays of 100 ms.
    let millis = t
        .duration_since(SystemTime::UNIX_EPOCH)
        .is_ok_and(|d| d.subsec_millis() != 0);
    rfc3339_with(t, millis)
}

/// `t` as RFC 3339 in UTC, with milliseconds when `millis` (the proxy's recordings, whose call
/// grouping reads the delays between exchanges).
pub(crate) fn rfc3339_with(t: SystemTime, millis: bool) -> String {
    let since = t.duration_since(SystemTime::UNIX_EPOCH).unwrap_or_default();
    let secs = since.as_secs();
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // Civil-from-days (Howard Hinnant's algorithm), to avoid a date dependency.
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    // Written digit by digit: the proxy stamps every recorded exchange, and the formatting
    // machinery cost a fifth of recording one.
    let mut out = Vec::with_capacity(24);
    let year = u64::try_from(y).unwrap_or_default();
    for (n, width, after) in [
        (year, 4, b'-'),
        (m as u64, 2, b'-'),
        (d as u64, 2, b'T'),
        (rem / 3600, 2, b':'),
        (rem % 3600 / 60, 2, b':'),
        (rem % 60, 2, b'.'),
    ] {
        zero_padded(&mut out, n, width);
        out.push(after);
    }
    if millis {
        zero_padded(&mut out, u64::from(since.subsec_millis()), 3);
    } else {
        out.pop();
    }
    out.push(b'Z');
    // ASCII digits and separators: valid UTF-8.
    String::from_utf8(out).unwrap_or_default()
}

/// `n` in decimal ([`crate::vocab::decimal`]), with leading zeros to `width` digits.
fn zero_padded(out: &mut Vec<u8>, n: u64, width: usize) {
    let start = out.len();
    crate::vocab::decimal(out, n);
    let short = width.saturating_sub(out.len() - start);
    out.splice(start..start, std::iter::repeat_n(b'0', short));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_and_header_values() {
        assert_eq!(
            rfc3339(SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_795_000_000)),
            "2026-11-18T11:06:40Z"
        );
        let at = |secs: u64, ms: u64| {
            SystemTime::UNIX_EPOCH
                + std::time::Duration::from_secs(secs)
                + std::time::Duration::from_millis(ms)
        };
        assert_eq!(
            rfc3339_with(at(1_795_000_000, 7), true),
            "2026-11-18T11:06:40.007Z"
        );
        assert_eq!(rfc3339_with(at(0, 0), true), "1970-01-01T00:00:00.000Z");
        assert_eq!(
            rfc3339_with(at(951_825_599, 999), true),
            "2000-02-29T11:59:59.999Z"
        );
        assert_eq!(
            rfc3339_with(at(253_402_300_800, 0), false),
            "10000-01-01T00:00:00Z"
        );
        assert_eq!(header_safe("echo"), "echo");
        assert_eq!(header_safe("é"), "=?base64?w6k=?=");
    }
}
