//! What every connection of one proxy shares: the settings, the upstream client, and the
//! judging thread's queue ([`Judge`]), whose [`Analysis`] holds the one driver and the sinks.

use std::sync::{Arc, MutexGuard};

use super::config::Config;
use super::judge::Judge;
use super::judging::Analysis;
use super::sinks::{Recorder, Sink};
use super::upstream::Upstream;
use crate::driver::Driver;

/// State shared by the proxy's connections.
pub struct Shared {
    /// The settings (shared with the judging thread's [`Analysis`]).
    pub config: Arc<Config>,
    /// The upstream endpoint.
    pub upstream: reqwest::Url,
    /// How the upstream is reached (no redirects, no proxies from the environment).
    pub http: Upstream,
    /// Where the forwarding notes what passes, for the judging thread.
    pub(crate) judge: Judge,
    analysis: Arc<Analysis>,
}

impl Shared {
    /// State for `config`, forwarding with `http` to `upstream`; starts the judging thread.
    pub fn new(
        config: Config,
        upstream: reqwest::Url,
        http: Upstream,
        sinks: Vec<Arc<dyn Sink>>,
        recorder: Option<Arc<Recorder>>,
    ) -> std::io::Result<Shared> {
        let config = Arc::new(config);
        let analysis = Arc::new(Analysis::new(
            config.clone(),
            upstream.as_str().to_owned(),
            sinks,
            recorder,
        ));
        let judge = Judge::start(analysis.clone(), config.max_backlog_bytes)?;
        Ok(Shared {
            config,
            upstream,
            http,
            judge,
            analysis,
        })
    }

    /// The upstream URL of a request with the client's `query` (which replaces the upstream's
    /// own), as the analysis and the recording name it; `None` without a query: the upstream's
    /// own URL, which the analysis holds (nothing copied per request).
    pub fn query_url(&self, query: Option<&str>) -> Option<String> {
        let query = query?;
        let mut url = self.upstream.clone();
        url.set_query(Some(query));
        Some(url.into())
    }

    /// The driver, locked.
    pub fn driver(&self) -> MutexGuard<'_, Driver> {
        self.analysis.driver()
    }
}
