//! The upstream side: one pooled HTTP client that follows no redirects (a redirect reaches the
//! client as it was sent) and ignores proxy settings from the environment (the upstream is the
//! one the user named). HTTPS comes from reqwest's rustls, the same TLS the rest of the tool uses
//! (the `tls` feature).

use std::time::Duration;

use super::config::ProxyError;

/// Checks `upstream` and builds the client for it.
pub fn client(upstream: &str) -> Result<(reqwest::Url, reqwest::Client), ProxyError> {
    let url = reqwest::Url::parse(upstream).map_err(|e| {
        ProxyError::BadUpstream(format!("{e} (expected e.g. http://127.0.0.1:8000/mcp)"))
    })?;
    match url.scheme() {
        "http" => {}
        "https" if cfg!(feature = "tls") => {}
        "https" => return Err(ProxyError::NoTls),
        other => {
            return Err(ProxyError::BadUpstream(format!(
                "scheme {other}: only http:// and https:// are forwarded"
            )));
        }
    }
    if url.host_str().is_none() {
        return Err(ProxyError::BadUpstream("no host".into()));
    }
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .tcp_nodelay(true)
        .connect_timeout(Duration::from_secs(10))
        .pool_idle_timeout(Duration::from_secs(60))
        .build()
        .map_err(|e| ProxyError::Client(e.to_string()))?;
    Ok((url, http))
}
