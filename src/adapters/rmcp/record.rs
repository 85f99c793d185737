//! What [`VerdictHttpClient`](super::VerdictHttpClient) keeps of each exchange when asked to
//! record: the entry the one exchange path recorded (the request as sent, the response head and
//! body as received, redacted by the one policy), paired with its verdict. The logical calls of the live traffic come from the same
//! grouping replay uses ([`calls_of`]), so that they equal the calls of the recording replayed.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::adapters::lock;
use crate::calls::Call;
use crate::har::Entry;
use crate::replay::calls_of;
use crate::verdict::Verdict;

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
    /// Exchanges begun and not judged yet, by index, with the driver's entry once it ended.
    open: HashMap<u64, Option<Entry>>,
    /// Judged exchanges, in the order their verdicts were handed out.
    judged: Vec<(Verdict, Entry)>,
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

    /// Exchange `index` began (the driver records it).
    pub(super) fn began(&self, index: u64) {
        lock(&self.inner).open.insert(index, None);
    }

    /// The driver's entry of an exchange that ended (it comes just before its verdict).
    pub(super) fn entry(&self, entry: Entry) {
        if let Some(slot) = lock(&self.inner).open.get_mut(&entry.index) {
            *slot = Some(entry);
        }
    }

    /// The verdict of an exchange: its entry is complete.
    pub(super) fn judged(&self, verdict: &Verdict) {
        let mut r = lock(&self.inner);
        if let Some(Some(entry)) = r.open.remove(&verdict.index) {
            r.judged.push((verdict.clone(), entry));
        }
    }
}
