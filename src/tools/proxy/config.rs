//! What the proxy is told: where to forward, where to listen, and the limits it holds peers to.

use std::fmt;
use std::net::SocketAddr;
use std::time::Duration;

use crate::limits::Limits;

/// The proxy's settings. `Config::new` gives the documented defaults.
#[derive(Debug, Clone)]
pub struct Config {
    /// The upstream MCP endpoint; the proxy serves the same path.
    pub upstream: String,
    /// Where to listen (loopback unless told otherwise).
    pub listen: SocketAddr,
    /// Certificates (PEM) an `https://` upstream may chain to, beside the platform's roots
    /// (`--upstream-cacert`: a private CA, a self-signed server). Default `None`.
    pub upstream_cacert: Option<Vec<u8>>,
    /// Limits for the analysis of each exchange (never for forwarding).
    pub limits: Limits,
    /// Largest request head (request line and headers), in bytes. Default 64 KiB.
    pub max_head_bytes: usize,
    /// Largest request body, in bytes. Default 4 MiB.
    pub max_request_bytes: u64,
    /// Most client connections at once. Default 4096.
    pub max_connections: usize,
    /// Time a client has to send a request head, and to send its body. Default 30 s.
    pub head_timeout: Duration,
    /// Time the upstream has to send its response head. Default 600 s (a slow tool on JSON).
    pub upstream_head_timeout: Duration,
    /// Longest silence inside a response body before the proxy gives up on the upstream
    /// (`None`: wait as long as both peers keep the connection). Default 600 s.
    pub idle_timeout: Option<Duration>,
    /// The clients' deadline, when known (`--timeout`): a client that goes away without the
    /// final answer this long or longer after its request is judged `TIMED_OUT` (it gave up at
    /// its deadline), earlier `CANCELLED`. Judging only: the proxy never cuts a stream for it.
    /// Default `None` (every early close is `CANCELLED`).
    pub client_timeout: Option<Duration>,
    /// Largest response body kept per exchange for `--record`. Default 16 MiB.
    pub record_max_body_bytes: usize,
    /// Hide secrets in every output by the one policy ([`Redaction`](crate::Redaction):
    /// secret headers by name, URL userinfo and secret query values, session ids as stand-ins).
    /// `--no-redact` sets it false.
    pub redact: bool,
    /// Origins allowed besides loopback ones (exact `scheme://host[:port]`).
    pub allow_origins: Vec<String>,
    /// Messages from the server kept per exchange with their arrival times, for sinks that
    /// draw timelines or export span events ([`ExchangeRecord::messages`](super::ExchangeRecord::messages)).
    /// Default 0: none.
    pub trace_messages: usize,
    /// Bytes of forwarded data (chunks, request bodies, a fixed cost per note) that may wait
    /// for the judging thread; past it the forwarding waits for the judging (counted:
    /// [`Proxy::backlog_waits`](super::Proxy::backlog_waits)). Default 1 MiB (the queue's two
    /// buffers may hold up to twice that while it is full).
    pub max_backlog_bytes: usize,
    /// Test hook (feature `fuzzing`, not a stable API): the analysis panics at this step, so
    /// that tests can prove forwarding fails open.
    #[cfg(feature = "fuzzing")]
    #[doc(hidden)]
    pub inject_panic: Option<AnalysisStep>,
}

/// A step of one exchange's analysis (where the `fuzzing` test hook makes it fail).
#[doc(hidden)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AnalysisStep {
    /// The request is judged before forwarding.
    Begin,
    /// The response head arrived.
    Head,
    /// A body chunk arrived.
    Chunk,
    /// The exchange ended.
    Finish,
}

impl Config {
    /// Defaults for `upstream`, listening on `listen`.
    pub fn new(upstream: impl Into<String>, listen: SocketAddr) -> Config {
        Config {
            upstream: upstream.into(),
            listen,
            upstream_cacert: None,
            limits: Limits::default(),
            max_head_bytes: 64 << 10,
            max_request_bytes: 4 << 20,
            max_connections: 4096,
            head_timeout: Duration::from_secs(30),
            upstream_head_timeout: Duration::from_secs(600),
            idle_timeout: Some(Duration::from_secs(600)),
            client_timeout: None,
            record_max_body_bytes: 16 << 20,
            redact: true,
            allow_origins: Vec::new(),
            trace_messages: 0,
            max_backlog_bytes: 1 << 20,
            #[cfg(feature = "fuzzing")]
            inject_panic: None,
        }
    }
}

/// The longest wait the proxy keeps: a longer one (`--idle-timeout 1e19s`) means "practically
/// never" and is held at this, so that no deadline arithmetic can overflow.
pub const LONGEST_WAIT: Duration = Duration::from_secs(100 * 365 * 86_400);

impl Config {
    /// The redaction policy every output of this proxy applies.
    pub fn redaction(&self) -> crate::Redaction {
        crate::Redaction::new(self.redact)
    }

    /// The settings with every duration held at [`LONGEST_WAIT`].
    pub(crate) fn bounded(mut self) -> Config {
        let cap = |d: Duration| d.min(LONGEST_WAIT);
        self.head_timeout = cap(self.head_timeout);
        self.upstream_head_timeout = cap(self.upstream_head_timeout);
        self.idle_timeout = self.idle_timeout.map(cap);
        self.client_timeout = self.client_timeout.map(cap);
        self
    }
}

/// Why the proxy could not start.
#[derive(Debug)]
pub enum ProxyError {
    /// The upstream URL is not an absolute http(s) URL.
    BadUpstream(String),
    /// `https://` upstream in a build without the `tls` feature.
    NoTls,
    /// The listen address could not be bound.
    Bind(SocketAddr, std::io::Error),
    /// The HTTP client could not be built.
    Client(String),
    /// The extra roots for an `https://` upstream (`--upstream-cacert`) are unusable.
    UpstreamCa(String),
    /// The judging thread could not be started.
    Judge(std::io::Error),
}

impl fmt::Display for ProxyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProxyError::BadUpstream(why) => write!(f, "--upstream: {why}"),
            ProxyError::NoTls => f.write_str(
                "--upstream is https:// but this build has no TLS: rebuild with --features tls",
            ),
            ProxyError::Bind(addr, e) => write!(f, "cannot listen on {addr}: {e}"),
            ProxyError::Client(e) => write!(f, "cannot build the upstream client: {e}"),
            ProxyError::UpstreamCa(why) => write!(f, "--upstream-cacert: {why}"),
            ProxyError::Judge(e) => write!(f, "cannot start the judging thread: {e}"),
        }
    }
}

impl std::error::Error for ProxyError {}
