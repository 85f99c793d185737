//! The session requests of the live client that carry no JSON-RPC body: the standalone `GET`
//! stream and the `DELETE` that ends a session. Judged like every other exchange (kinds `listen`
//! and `terminate`), so a live run can show what a replay of its capture shows.

use super::{Call, Client, lock};
use crate::request::Headers;
use crate::version::ProtocolVersion;

impl Client {
    /// Opens the standalone server stream: `GET` with `Accept: text/event-stream` and no
    /// `Last-Event-ID`. The call's verdict comes when the server ends the stream (or a deadline).
    pub async fn listen(&self) -> Call {
        let headers = self.session_headers(Some("text/event-stream"));
        self.dispatch(
            reqwest::Method::GET,
            Vec::new(),
            Headers::from(headers),
            false,
        )
        .await
    }

    /// Ends the session: `DELETE` with its `Mcp-Session-Id`.
    pub async fn terminate(&self) -> Call {
        let headers = self.session_headers(None);
        self.dispatch(
            reqwest::Method::DELETE,
            Vec::new(),
            Headers::from(headers),
            false,
        )
        .await
    }

    /// The headers of a bodyless session request: `Accept` if given, the negotiated version and
    /// the session id, then the builder's own headers.
    fn session_headers(&self, accept: Option<&str>) -> Vec<(String, String)> {
        let (version, session_id) = {
            let st = lock(&self.inner.state);
            (st.version, st.session_id.clone())
        };
        let mut headers: Vec<(String, String)> = Vec::new();
        if let Some(a) = accept {
            headers.push(("Accept".into(), a.into()));
        }
        if let Some(v) = version.filter(|v| *v >= ProtocolVersion::V2025_06_18) {
            headers.push(("MCP-Protocol-Version".into(), v.as_str().into()));
        }
        if let Some(sid) = session_id {
            headers.push(("Mcp-Session-Id".into(), sid));
        }
        headers.extend(self.inner.headers.iter().cloned());
        headers
    }
}
