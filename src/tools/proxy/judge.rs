//! The judging thread: every exchange is judged, and its outputs written, off the forwarding
//! path. The forwarding side notes what passes ([`Tap`](super::tap::Tap): the request, the
//! response head, each chunk with its arrival time, how it ended) into a queue; one thread takes
//! the notes in the order they were made and runs the analysis and the sinks
//! ([`Judging`]). The order is the order the forwarding made them, so the one session sees the
//! exchanges exactly as it did when the analysis ran inline (and as `replay` of the recording
//! does).
//!
//! Why a thread: on a small machine the proxy, its clients and its upstream share the cores,
//! and the judging (half the proxy's CPU per request) delayed each reply's next step. Here the
//! forwarding thread only copies a chunk into the queue's buffer (no allocation once the
//! buffers have grown) and never makes a system call for it: a judge that has work polls
//! every [`POLL`], and only a judge idle for [`BUSY_FOR`] is woken (once) by the next note.
//!
//! Memory is bounded: the notes waiting (chunk bytes, request bodies, a fixed cost per note)
//! are held under [`Config::max_backlog_bytes`](super::Config::max_backlog_bytes); past it
//! the forwarding waits for the judging (counted, [`Judge::waits`]), as a disk slower than the
//! log slows the proxy rather than growing its memory. The queue's two buffers (one filling,
//! one being judged) keep their capacity between batches up to [`KEEP_BYTES`].

use std::collections::HashMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread::{JoinHandle, Thread};
use std::time::{Duration, Instant};

use super::judging::{Analysis, Begun, Judging};
use crate::request::Headers;
use crate::verdict::End;

/// How often a judge with recent work looks for more (no wake-up needed from the forwarding).
const POLL: Duration = Duration::from_millis(1);

/// How long a judge keeps polling after its last work; then it sleeps until woken.
const BUSY_FOR: Duration = Duration::from_millis(50);

/// A buffer past this is let go once emptied instead of kept for the next batch.
const KEEP_BYTES: usize = 1 << 20;

/// What one note costs in the backlog besides its bytes.
const NOTE_COST: usize = std::mem::size_of::<Note>();

/// What the forwarding side noted of one exchange (`id`: the forwarding's own number).
pub(crate) enum Note {
    Begin {
        id: u64,
        begun: Begun,
    },
    Head {
        id: u64,
        status: u16,
        headers: Headers,
        at: Duration,
    },
    /// `len` bytes of the batch's byte buffer, in order.
    Chunk {
        id: u64,
        len: usize,
        at: Duration,
    },
    Ended {
        id: u64,
        end: End,
        at: Duration,
    },
    Finish {
        id: u64,
        end: End,
        cause: Option<String>,
        at: Duration,
    },
    /// The forwarding let go of the exchange.
    Dropped {
        id: u64,
        at: Duration,
    },
    /// Everything before this is judged and with the sinks.
    Settle(mpsc::SyncSender<()>),
}

impl Note {
    /// The exchange it is about.
    fn id(&self) -> Option<u64> {
        match self {
            Note::Begin { id, .. }
            | Note::Head { id, .. }
            | Note::Chunk { id, .. }
            | Note::Ended { id, .. }
            | Note::Finish { id, .. }
            | Note::Dropped { id, .. } => Some(*id),
            Note::Settle(_) => None,
        }
    }
}

/// Notes waiting, and the chunk bytes they name.
#[derive(Default)]
struct Batch {
    notes: Vec<Note>,
    bytes: Vec<u8>,
    /// Their cost in the backlog.
    cost: usize,
}

/// The queue between the forwarding and the judge.
struct Queue {
    batch: Mutex<Batch>,
    /// Bytes waiting (see [`NOTE_COST`]).
    backlog: AtomicUsize,
    limit: usize,
    /// The judge sleeps until woken.
    asleep: AtomicBool,
    /// The forwarding side is gone: judge what is left, then stop.
    closed: AtomicBool,
    /// The judge thread ended (it cannot: a panic is caught per note; this keeps forwarding
    /// from waiting on it all the same).
    gone: AtomicBool,
    next_id: AtomicU64,
    waits: AtomicU64,
    thread: std::sync::OnceLock<Thread>,
}

/// The forwarding side's end of the judging: notes go in here. Dropping it lets the judge
/// finish what is queued and stop.
pub(crate) struct Judge {
    queue: Arc<Queue>,
    handle: Option<JoinHandle<()>>,
}

impl Judge {
    /// Starts the judging thread for `analysis`; its sinks run there (inside the current
    /// tokio runtime's context, for outputs that set timers).
    pub(crate) fn start(analysis: Arc<Analysis>, limit: usize) -> std::io::Result<Judge> {
        let queue = Arc::new(Queue {
            batch: Mutex::new(Batch::default()),
            backlog: AtomicUsize::new(0),
            limit: limit.max(1),
            asleep: AtomicBool::new(false),
            closed: AtomicBool::new(false),
            gone: AtomicBool::new(false),
            next_id: AtomicU64::new(0),
            waits: AtomicU64::new(0),
            thread: std::sync::OnceLock::new(),
        });
        let runtime = tokio::runtime::Handle::try_current().ok();
        let q = queue.clone();
        let handle = std::thread::Builder::new()
            .name("mcp-verdict-judge".into())
            .spawn(move || {
                batch_policy();
                let _entered = runtime.as_ref().map(tokio::runtime::Handle::enter);
                let _gone = Gone(&q);
                run(&q, &analysis);
            })?;
        let _ = queue.thread.set(handle.thread().clone());
        Ok(Judge {
            queue,
            handle: Some(handle),
        })
    }

    /// A number for a new exchange's notes.
    pub(crate) fn next_id(&self) -> u64 {
        self.queue.next_id.fetch_add(1, Ordering::Relaxed)
    }

    /// Queues a note (with `bytes` for a [`Note::Chunk`]; `held`: other bytes it keeps alive).
    pub(crate) fn note(&self, note: Note, bytes: &[u8], held: usize) {
        let q = &*self.queue;
        if q.gone.load(Ordering::Acquire) {
            return;
        }
        let cost = NOTE_COST + bytes.len() + held;
        // Counted before it is queued: the judge subtracts what it took.
        let backlog = q
            .backlog
            .fetch_add(cost, Ordering::AcqRel)
            .saturating_add(cost);
        {
            let mut batch = q.batch.lock().unwrap_or_else(|p| p.into_inner());
            batch.notes.push(note);
            batch.bytes.extend_from_slice(bytes);
            batch.cost += cost;
        }
        q.wake();
        if backlog > q.limit {
            q.wait_below();
        }
    }

    /// Returns once everything noted so far is judged and handed to the sinks.
    pub(crate) fn settle(&self) {
        let q = &*self.queue;
        if q.gone.load(Ordering::Acquire)
            || q.thread.get().map(Thread::id) == Some(std::thread::current().id())
        {
            return;
        }
        let (tx, rx) = mpsc::sync_channel(1);
        self.note(Note::Settle(tx), &[], 0);
        // The judge answers (it cannot end before: see `Gone`; checked all the same).
        while let Err(mpsc::RecvTimeoutError::Timeout) = rx.recv_timeout(Duration::from_millis(100))
        {
            if q.gone.load(Ordering::Acquire) {
                return;
            }
        }
    }

    /// How often the forwarding waited because the backlog was full.
    pub(crate) fn waits(&self) -> u64 {
        self.queue.waits.load(Ordering::Relaxed)
    }
}

impl Drop for Judge {
    fn drop(&mut self) {
        self.queue.closed.store(true, Ordering::Release);
        self.queue.rouse();
        // Not joined: the judge finishes the queue on its own (a proxy dropped inside a
        // runtime must not block it).
        drop(self.handle.take());
    }
}

/// Linux: the judge runs as `SCHED_BATCH`, the same share of the CPU as any thread but never
/// preempting the one running when it wakes: the forwarding (and the client and server beside
/// it) are not pushed off a core by a judge waking for its next batch. Measured against the
/// default policy in the same rounds: ahead in all six cells over HTTP (+0.01 to +0.07 × nginx),
/// and the gap to the inline judging over HTTPS mostly closed (docs/performance.md). Elsewhere,
/// and if the kernel refuses, the default policy.
fn batch_policy() {
    #[cfg(target_os = "linux")]
    {
        let param = libc::sched_param { sched_priority: 0 };
        // SAFETY: pid 0 is the calling thread; `param` is a valid, initialised sched_param
        // that outlives the call. The result is not needed: a refusal keeps the default.
        let _ = unsafe { libc::sched_setscheduler(0, libc::SCHED_BATCH, &param) };
    }
}

/// Marks the queue's judge gone when its thread ends, however it ends.
struct Gone<'a>(&'a Queue);

impl Drop for Gone<'_> {
    fn drop(&mut self) {
        self.0.gone.store(true, Ordering::Release);
    }
}

impl Queue {
    /// Wakes a sleeping judge (a system call only when it sleeps).
    fn wake(&self) {
        if self.asleep.load(Ordering::SeqCst)
            && self.asleep.swap(false, Ordering::SeqCst)
            && let Some(t) = self.thread.get()
        {
            t.unpark();
        }
    }

    /// Wakes the judge whether or not it sleeps (the forwarding is gone, or waits for it).
    fn rouse(&self) {
        self.asleep.store(false, Ordering::SeqCst);
        if let Some(t) = self.thread.get() {
            t.unpark();
        }
    }

    /// The backlog is full: the forwarding waits until the judge has taken it below the limit.
    fn wait_below(&self) {
        self.waits.fetch_add(1, Ordering::Relaxed);
        while self.backlog.load(Ordering::Acquire) > self.limit
            && !self.gone.load(Ordering::Acquire)
        {
            self.rouse();
            std::thread::sleep(Duration::from_micros(100));
        }
    }

    fn take(&self, into: &mut Batch) {
        let mut batch = self.batch.lock().unwrap_or_else(|p| p.into_inner());
        std::mem::swap(&mut *batch, into);
    }

    fn is_empty(&self) -> bool {
        self.batch
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .notes
            .is_empty()
    }
}

/// The judge's loop: takes what is queued, judges it in order, polls while busy and sleeps
/// when idle; ends once the forwarding side is gone and the queue is empty.
fn run(queue: &Queue, analysis: &Analysis) {
    let mut open: HashMap<u64, Box<Judging>> = HashMap::new();
    let mut batch = Batch::default();
    let mut last_work = Instant::now();
    loop {
        queue.take(&mut batch);
        if batch.notes.is_empty() {
            // Closed: every tap (each holds the proxy's state, and with it this queue's
            // sender) is gone, so every note is in.
            if queue.closed.load(Ordering::Acquire) && queue.is_empty() {
                return;
            }
            if last_work.elapsed() < BUSY_FOR {
                std::thread::sleep(POLL);
            } else {
                queue.asleep.store(true, Ordering::SeqCst);
                if queue.is_empty() && !queue.closed.load(Ordering::Acquire) {
                    std::thread::park_timeout(BUSY_FOR * 20);
                }
                queue.asleep.store(false, Ordering::SeqCst);
            }
            continue;
        }
        let mut offset = 0;
        for note in batch.notes.drain(..) {
            let len = match &note {
                Note::Chunk { len, .. } => *len,
                _ => 0,
            };
            let bytes = batch.bytes.get(offset..offset + len).unwrap_or(&[]);
            offset += len;
            // A panic in a sink ends that exchange's judging, never the judge.
            let id = note.id();
            let judged = catch_unwind(AssertUnwindSafe(|| apply(&mut open, analysis, note, bytes)));
            if let (Err(_), Some(id)) = (judged, id) {
                open.remove(&id);
            }
        }
        batch.bytes.clear();
        // A burst (a fast stream, a slow sink) grew the buffer: let it go rather than keep it.
        if batch.bytes.capacity() > KEEP_BYTES {
            batch.bytes = Vec::new();
        }
        if batch.notes.capacity() * NOTE_COST > KEEP_BYTES {
            batch.notes = Vec::new();
        }
        queue.backlog.fetch_sub(batch.cost, Ordering::AcqRel);
        batch.cost = 0;
        last_work = Instant::now();
    }
}

/// Applies one note (`bytes`: a chunk's).
fn apply(open: &mut HashMap<u64, Box<Judging>>, analysis: &Analysis, note: Note, bytes: &[u8]) {
    match note {
        Note::Begin { id, begun } => {
            open.insert(id, Box::new(Judging::begin(analysis, begun)));
        }
        Note::Head {
            id,
            status,
            headers,
            at,
        } => {
            if let Some(j) = open.get_mut(&id) {
                j.on_head(analysis, status, headers, at);
            }
        }
        Note::Chunk { id, at, .. } => {
            if let Some(j) = open.get_mut(&id) {
                j.on_chunk(analysis, bytes, at);
            }
        }
        Note::Ended { id, end, at } => {
            if let Some(j) = open.get_mut(&id) {
                j.ended(end, at);
            }
        }
        Note::Finish { id, end, cause, at } => {
            if let Some(mut j) = open.remove(&id) {
                j.finish(analysis, end, cause.as_deref(), at);
            }
        }
        Note::Dropped { id, at } => {
            if let Some(mut j) = open.remove(&id) {
                j.dropped(analysis, at);
            }
        }
        Note::Settle(done) => {
            let _ = done.send(());
        }
    }
}
