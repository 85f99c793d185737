//! TLS to an `https://` upstream on the proxy's own HTTP/1.1 path: one TLS connection per client
//! connection, like plain HTTP ([`Link`](super::upstream::Link)), so HTTPS upstreams pay no pool
//! look-up and no hand-off to another task either. rustls with the platform's verifier and
//! roots (as reqwest uses for `probe`), plus the roots of `--upstream-cacert`; ALPN offers
//! `http/1.1` only, the protocol this path speaks.

use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;
use tokio_rustls::client::TlsStream;

use super::config::ProxyError;

/// How to open TLS to the upstream's host.
pub(crate) struct Tls {
    connector: TlsConnector,
    name: ServerName<'static>,
}

impl Tls {
    /// For `host` (a name or an IP address), trusting the platform's roots and the certificates
    /// in `extra_pem` (PEM; `None`: none).
    pub(crate) fn new(host: &str, extra_pem: Option<&[u8]>) -> Result<Tls, ProxyError> {
        let extra = match extra_pem {
            Some(pem) => certificates(pem)?,
            None => Vec::new(),
        };
        let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
        let verifier =
            rustls_platform_verifier::Verifier::new_with_extra_roots(extra, provider.clone())
                .map_err(|e| ProxyError::Client(format!("TLS: {e}")))?;
        let mut config = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| ProxyError::Client(format!("TLS: {e}")))?
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(verifier))
            .with_no_client_auth();
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        // `host_str` keeps an IPv6 address's brackets; a server name has none.
        let bare = host.trim_start_matches('[').trim_end_matches(']');
        let name = ServerName::try_from(bare.to_owned())
            .map_err(|_| ProxyError::BadUpstream(format!("{host} is no TLS server name")))?;
        Ok(Tls {
            connector: TlsConnector::from(Arc::new(config)),
            name,
        })
    }

    /// The TLS handshake on a connected socket.
    pub(crate) async fn open(&self, tcp: TcpStream) -> std::io::Result<TlsStream<TcpStream>> {
        self.connector.connect(self.name.clone(), tcp).await
    }
}

/// Every certificate of a PEM file; none, or a broken block, is an error naming the flag.
fn certificates(pem: &[u8]) -> Result<Vec<CertificateDer<'static>>, ProxyError> {
    let certs = CertificateDer::pem_slice_iter(pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| ProxyError::UpstreamCa(format!("not a PEM certificate file: {e}")))?;
    if certs.is_empty() {
        return Err(ProxyError::UpstreamCa(
            "no certificate in it (expected PEM: -----BEGIN CERTIFICATE-----)".into(),
        ));
    }
    Ok(certs)
}
