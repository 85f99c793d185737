//! Cancellation seen from traffic: which request a `notifications/cancelled` names, whether an
//! error answer says "request cancelled", and the cancels remembered until the exchange of the
//! request they name is seen (a live proxy finishes the short cancel POST before the long stream
//! it cancels, so the order exchanges reach the grouping must not change the call).

use std::collections::VecDeque;

use serde_json::Value;

use crate::call_facts::CallFacts;

/// JSON-RPC `-32800` "Request cancelled": the answer a server gives a request it stopped because
/// the client cancelled it (the LSP code the SDKs use for it).
pub(crate) const REQUEST_CANCELLED: i64 = -32800;

/// Cancels remembered before their request was seen; the oldest is forgotten beyond this.
const PENDING: usize = 256;

/// The `params.requestId` of a `notifications/cancelled` message; `None` for anything else.
pub(crate) fn cancelled_id(method: Option<&str>, facts: Option<&CallFacts>) -> Option<Value> {
    if method != Some("notifications/cancelled") {
        return None;
    }
    facts?.request_id.clone()
}

/// Request ids a cancel named before any call carried them, bounded.
#[derive(Debug, Default)]
pub(crate) struct Pending {
    ids: VecDeque<Value>,
}

impl Pending {
    /// Remembers a cancel for `id`.
    pub(crate) fn add(&mut self, id: Value) {
        if self.ids.len() == PENDING {
            self.ids.pop_front();
        }
        self.ids.push_back(id);
    }

    /// Whether a cancel named `id`; forgets it (one cancel cancels one request).
    pub(crate) fn take(&mut self, id: &Value) -> bool {
        match self.ids.iter().position(|p| p == id) {
            Some(at) => {
                self.ids.remove(at);
                true
            }
            None => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_the_request_id_of_a_cancel_only() {
        let read = |body: &str| crate::call_facts::read(body.as_bytes(), None, None);
        let m = read(
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"user"}}"#,
        );
        assert_eq!(
            cancelled_id(Some("notifications/cancelled"), m.as_ref()),
            Some(json!(7))
        );
        assert_eq!(
            cancelled_id(Some("notifications/progress"), m.as_ref()),
            None
        );
        let none = read(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{}}"#);
        assert_eq!(
            cancelled_id(Some("notifications/cancelled"), none.as_ref()),
            None
        );
    }

    #[test]
    fn pending_cancels_are_bounded_and_taken_once() {
        let mut p = Pending::default();
        for i in 0..=PENDING {
            p.add(json!(i));
        }
        assert!(!p.take(&json!(0)), "the oldest was forgotten");
        assert!(p.take(&json!(PENDING)));
        assert!(!p.take(&json!(PENDING)), "taken once");
        assert!(!p.take(&json!("1")), "ids compare in value and type");
    }
}
