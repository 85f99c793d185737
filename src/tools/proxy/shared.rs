//! What every connection of one proxy shares: the settings, the upstream client, the one
//! [`Driver`] (as `replay` uses one per capture, so a recording replays to the same verdicts; it
//! also numbers the exchanges and records them) and the sinks.

use std::sync::{Arc, Mutex, MutexGuard};

use super::config::Config;
use super::sinks::{ExchangeRecord, Opened, Recorder, Sink};
use super::upstream::Upstream;
use crate::driver::Driver;

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
    driver: Mutex<Driver>,
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
        let mut driver = Driver::new(config.limits).redaction(config.redaction());
        if recorder.is_some() {
            driver = driver.recording(config.record_max_body_bytes as u64);
        }
        Shared {
            driver: Mutex::new(driver),
            config,
            upstream,
            http,
            recorder,
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

    /// The driver, locked (held only to begin, note or finish an exchange).
    pub fn driver(&self) -> MutexGuard<'_, Driver> {
        self.driver.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Tells every sink an exchange begins.
    pub fn emit_opened(&self, opened: &Opened<'_>) {
        for sink in &self.sinks {
            sink.opened(opened);
        }
    }

    /// Hands a finished exchange to every sink (the recorder takes its entry afterwards).
    pub fn emit(&self, record: &ExchangeRecord<'_>) {
        for sink in &self.sinks {
            sink.exchange(record);
        }
    }
}
