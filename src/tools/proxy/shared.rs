//! What every connection of one proxy shares: the settings, the upstream client, the one
//! [`Session`] (as `replay` uses one per capture, so a recording replays to the same verdicts),
//! the exchange counter and the sinks.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use super::config::Config;
use super::sinks::{ExchangeRecord, Recorder, Sink};
use super::upstream::Upstream;
use crate::session::Session;

/// State shared by the proxy's connections.
pub struct Shared {
    /// The settings.
    pub config: Config,
    /// The upstream endpoint.
    pub upstream: reqwest::Url,
    /// How the upstream is reached (no redirects, no proxies from the environment).
    pub http: Upstream,
    /// The recording, when `--record` is on.
    pub recorder: Option<Arc<Recorder>>,
    session: Mutex<Session>,
    next: AtomicU64,
    sinks: Vec<Arc<dyn Sink>>,
}

impl Shared {
    /// State for `config`, forwarding with `http` to `upstream`.
    pub fn new(
        config: Config,
        upstream: reqwest::Url,
        http: Upstream,
        sinks: Vec<Arc<dyn Sink>>,
        recorder: Option<Arc<Recorder>>,
    ) -> Shared {
        Shared {
            session: Mutex::new(Session::new(config.limits)),
            config,
            upstream,
            http,
            recorder,
            next: AtomicU64::new(0),
            sinks,
        }
    }

    /// The upstream URL of a request with the client's `query` (which replaces the upstream's
    /// own), as the analysis and the recording name it.
    pub fn url_with(&self, query: Option<&str>) -> std::borrow::Cow<'_, str> {
        match query {
            None => self.upstream.as_str().into(),
            Some(q) => {
                let mut url = self.upstream.clone();
                url.set_query(Some(q));
                String::from(url).into()
            }
        }
    }

    /// The next exchange number.
    pub fn next_index(&self) -> u64 {
        self.next.fetch_add(1, Ordering::Relaxed)
    }

    /// The session, locked (held only to begin or finish an exchange).
    pub fn session(&self) -> MutexGuard<'_, Session> {
        self.session.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Hands a finished exchange to every sink (the recorder takes its entry afterwards).
    pub fn emit(&self, record: &ExchangeRecord<'_>) {
        for sink in &self.sinks {
            sink.exchange(record);
        }
    }
}
