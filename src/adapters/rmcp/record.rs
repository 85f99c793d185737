//! What [`VerdictHttpClient`](super::VerdictHttpClient) keeps of each exchange when asked to
//! record: the entry a capture holds (the request as sent, the response head and body as
//! received), paired with its verdict. The logical calls of the live traffic come from the same
//! grouping replay uses ([`calls_of`]), so that they equal the calls of the recording replayed.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Instant, SystemTime};

use crate::adapters::client::rfc3339;
use crate::adapters::lock;
use crate::calls::Call;
use crate::exchange::ResponseHead;
use crate::har::Entry;
use crate::replay::calls_of;
use crate::request::Headers;
use crate::verdict::{End, Verdict};

/// Header values a recording never holds (shown as `<redacted>`).
const SECRET_HEADERS: [&str; 2] = ["authorization", "cookie"];

/// The exchanges of a [`VerdictHttpClient`](super::VerdictHttpClient), recorded as a capture and
/// grouped into logical calls. Cheap to clone; clones share one recording. Memory: each entry
/// keeps at most `max_body_bytes + 1` of its response body (what its verdict needed), and the
/// recording grows with the number of exchanges, as any capture does.
#[derive(Clone, Default)]
pub struct Recording {
    inner: Arc<Mutex<Recorded>>,
}

impl std::fmt::Debug for Recording {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let r = lock(&self.inner);
        f.debug_struct("Recording")
            .field("open", &r.open.len())
            .field("judged", &r.judged.len())
            .finish()
    }
}

#[derive(Default)]
struct Recorded {
    /// Exchanges begun and not judged yet, by index.
    open: HashMap<u64, Open>,
    /// Judged exchanges, in the order their verdicts were handed out.
    judged: Vec<(Verdict, Entry)>,
}

struct Open {
    entry: Entry,
    started: Instant,
    body_cap: u64,
}

impl Recording {
    /// An empty recording.
    pub fn new() -> Self {
        Recording::default()
    }

    /// The judged exchanges as capture entries, in the order they began (a HAR's order); each
    /// entry's `index` is its position. Write them with [`har::write`](crate::har::write).
    pub fn entries(&self) -> Vec<Entry> {
        self.in_order().into_iter().map(|(_, e)| e).collect()
    }

    /// The verdicts of the judged exchanges, in the order they began; each `index` is the
    /// position of its entry in [`Recording::entries`].
    pub fn verdicts(&self) -> Vec<Verdict> {
        self.in_order().into_iter().map(|(v, _)| v).collect()
    }

    /// The logical calls of the judged exchanges: the grouping `replay --calls` applies to
    /// [`Recording::entries`], so the two agree for the same traffic. `entries` in each call
    /// are positions in [`Recording::entries`].
    pub fn calls(&self) -> Vec<Call> {
        let (verdicts, entries): (Vec<_>, Vec<_>) = self.in_order().into_iter().unzip();
        calls_of(&verdicts, &entries)
    }

    /// Exchanges begun and not judged yet (a body still being read, perhaps in the background
    /// after rmcp got its answer). Once the client is done and this is 0, the recording is
    /// complete.
    pub fn in_progress(&self) -> usize {
        lock(&self.inner).open.len()
    }

    /// Judged exchanges by index (the order they began), renumbered by position.
    fn in_order(&self) -> Vec<(Verdict, Entry)> {
        let mut judged = lock(&self.inner).judged.clone();
        judged.sort_by_key(|(v, _)| v.index);
        for (i, (v, e)) in judged.iter_mut().enumerate() {
            v.index = i as u64;
            e.index = i as u64;
        }
        judged
    }

    /// An exchange began: `request` as sent, with `body`.
    pub(super) fn begin(&self, index: u64, request: &reqwest::Request, body: &[u8], cap: u64) {
        let headers: Headers = request
            .headers()
            .iter()
            .map(|(n, v)| {
                let value = if SECRET_HEADERS.contains(&n.as_str()) {
                    "<redacted>".to_owned()
                } else {
                    String::from_utf8_lossy(v.as_bytes()).into_owned()
                };
                (n.as_str().to_owned(), value)
            })
            .collect();
        let entry = Entry {
            index,
            method: request.method().to_string(),
            url: request.url().to_string(),
            request_headers: headers,
            request_body: body.to_vec(),
            response: None,
            response_body: Vec::new(),
            end: End::Eof,
            started: Some(rfc3339(SystemTime::now())),
            time_ms: None,
            timings: None,
        };
        let open = Open {
            entry,
            started: Instant::now(),
            body_cap: cap,
        };
        lock(&self.inner).open.insert(index, open);
    }

    /// The response head of exchange `index` arrived.
    pub(super) fn head(&self, index: u64, head: &ResponseHead) {
        if let Some(open) = lock(&self.inner).open.get_mut(&index) {
            open.entry.response = Some(head.clone());
        }
    }

    /// Body bytes of exchange `index`, kept up to its cap.
    pub(super) fn chunk(&self, index: u64, bytes: &[u8]) {
        if let Some(open) = lock(&self.inner).open.get_mut(&index) {
            let body = &mut open.entry.response_body;
            let room = open.body_cap.saturating_sub(body.len() as u64);
            let take = usize::try_from(room).unwrap_or(usize::MAX).min(bytes.len());
            body.extend_from_slice(&bytes[..take]);
        }
    }

    /// The verdict of an exchange: its entry is complete.
    pub(super) fn judged(&self, verdict: &Verdict) {
        let mut r = lock(&self.inner);
        if let Some(open) = r.open.remove(&verdict.index) {
            let mut entry = open.entry;
            entry.end = verdict.end;
            entry.time_ms = Some(open.started.elapsed().as_secs_f64() * 1000.0);
            r.judged.push((verdict.clone(), entry));
        }
    }
}
