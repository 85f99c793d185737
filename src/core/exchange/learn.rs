//! What an exchange teaches the session: the negotiated version, tool annotations and the
//! versions `server/discover` advertised.

use serde_json::Value;

use super::Learned;
use crate::version::ProtocolVersion;

/// Picks up what later exchanges need: the negotiated version and tool annotations.
///
/// `learned` is made only when there is something to keep.
pub(super) fn learn(method: Option<&str>, result: &str, learned: &mut Option<Box<Learned>>) {
    match method {
        Some("initialize") => {
            #[derive(serde::Deserialize)]
            #[serde(rename_all = "camelCase")]
            struct Init {
                protocol_version: Option<String>,
            }
            if let Ok(init) = serde_json::from_str::<Init>(result) {
                learned.get_or_insert_default().negotiated = init
                    .protocol_version
                    .as_deref()
                    .and_then(ProtocolVersion::parse);
            }
        }
        Some("tools/list") => {
            #[derive(serde::Deserialize)]
            struct List {
                tools: Vec<Value>,
            }
            if let Ok(list) = serde_json::from_str::<List>(result) {
                for tool in list.tools {
                    let Some(name) = tool.get("name").and_then(Value::as_str) else {
                        continue;
                    };
                    let hint = |k: &str| {
                        tool.get("annotations")
                            .and_then(|a| a.get(k))
                            .and_then(Value::as_bool)
                            .unwrap_or(false)
                    };
                    let safe = hint("readOnlyHint") || hint("idempotentHint");
                    learned
                        .get_or_insert_default()
                        .tools
                        .push((name.to_owned(), safe));
                }
            }
        }
        Some(crate::discovery::DISCOVER) => {
            #[derive(serde::Deserialize)]
            #[serde(rename_all = "camelCase")]
            struct Discover {
                supported_versions: Vec<String>,
            }
            if let Ok(d) = serde_json::from_str::<Discover>(result) {
                learned.get_or_insert_default().advertised = Some(d.supported_versions);
            }
        }
        _ => {}
    }
}
