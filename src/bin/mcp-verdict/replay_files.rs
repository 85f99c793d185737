//! `replay` over many captures: files judged on all cores (one file per worker, each with its
//! own session), results handed back in input order.
//!
//! A directory stands for the `.har` files directly in it, sorted by name. Each file is read
//! streaming (a file seekably, `-` as a pipe). The file being printed is printed as it is
//! judged; results of files further on wait in memory (verdicts, not bodies) until their turn.
//! Opening a capture (stdin, progress on a terminal) is here too: `replay --calls` shares it.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, BufRead, BufReader, IsTerminal};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;

use mcp_verdict::Limits;
use mcp_verdict::replay::{self, Item};

/// What happened to one input, in order: its items, then how it ended.
pub enum Event {
    Item(Item),
    /// The file is done: `Err` with a one-line reason when it could not be used.
    End(Result<replay::ReplayStats, String>),
    /// The file could not be opened (it is done too).
    Unopened(String),
}

impl Event {
    fn last(&self) -> bool {
        matches!(self, Event::End(_) | Event::Unopened(_))
    }
}

/// The inputs named on the command line, directories expanded. A directory that cannot be
/// listed is an unusable input, reported in its place.
pub fn expand(args: &[PathBuf]) -> Vec<Result<PathBuf, String>> {
    let mut out = Vec::new();
    for path in args {
        if path.as_os_str() != "-" && path.is_dir() {
            match list_dir(path) {
                Ok(files) if files.is_empty() => out.push(Err(format!(
                    "{}: no .har files in this directory",
                    path.display()
                ))),
                Ok(files) => out.extend(files.into_iter().map(Ok)),
                Err(e) => out.push(Err(format!("{}: {e}", path.display()))),
            }
        } else {
            out.push(Ok(path.clone()));
        }
    }
    out
}

fn list_dir(dir: &Path) -> io::Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_file()
            && path
                .extension()
                .is_some_and(|e| e.eq_ignore_ascii_case("har"))
        {
            files.push(path);
        }
    }
    files.sort();
    Ok(files)
}

/// Judges one input, giving its events to `each`. An input that is empty, or holds no MCP
/// exchange, ends with an error (exit 2: there is nothing to judge, most likely the wrong file).
fn judge_one(path: &Path, limits: Limits, progress: bool, each: &mut dyn FnMut(Event)) {
    let name = path.display().to_string();
    let (mut judged, mut skipped) = (0u64, 0u64);
    let mut item = |item: Item| {
        match &item {
            Item::Verdict(_) => judged += 1,
            Item::Skipped(_) => skipped += 1,
        }
        each(Event::Item(item));
    };
    let result = if name == "-" {
        let mut reader = BufReader::with_capacity(1 << 16, io::stdin().lock());
        match empty(&mut reader) {
            Some(reason) => Err(reason),
            None => replay::replay_har(reader, limits, &mut item).map_err(|e| e.to_string()),
        }
    } else {
        let f = match File::open(path) {
            Ok(f) => f,
            Err(e) => {
                each(Event::Unopened(e.to_string()));
                return;
            }
        };
        let big = f.metadata().map(|m| m.len()).unwrap_or(0);
        if progress && big >= PROGRESS_MIN_BYTES && io::stderr().is_terminal() {
            let mut reader = BufReader::with_capacity(1 << 16, Progress::new(f, big, &name));
            match empty(&mut reader) {
                Some(reason) => Err(reason),
                None => replay::replay_har_seekable(reader, limits, &mut item)
                    .map_err(|e| e.to_string()),
            }
        } else {
            let mut reader = BufReader::with_capacity(1 << 16, f);
            match empty(&mut reader) {
                Some(reason) => Err(reason),
                None => replay::replay_har_seekable(reader, limits, &mut item)
                    .map_err(|e| e.to_string()),
            }
        }
    };
    let result = match result {
        Ok(_) if judged == 0 && skipped == 0 => Err("no entries: the HAR log is empty".into()),
        Ok(_) if judged == 0 => Err(format!(
            "no MCP exchange among its {skipped} entries (none is an MCP exchange)"
        )),
        other => other,
    };
    each(Event::End(result));
}

/// Why a capture is empty (nothing, or only whitespace), or `None`; a read error is a reason too.
pub(crate) fn empty(reader: &mut impl BufRead) -> Option<String> {
    match reader.fill_buf() {
        Ok([]) => Some("empty file".into()),
        Ok(buf) if buf.iter().all(u8::is_ascii_whitespace) && buf.len() < (1 << 16) => {
            Some("empty file (only whitespace)".into())
        }
        Ok(_) => None,
        Err(e) => Some(e.to_string()),
    }
}

/// Judges `files` on `jobs` threads and gives every event to `each` in input order (all of a
/// file's events before the next file's). With one job, or one file, nothing waits.
pub fn judge_files(
    files: &[PathBuf],
    limits: Limits,
    jobs: usize,
    each: &mut dyn FnMut(usize, Event),
) {
    let jobs = jobs.clamp(1, files.len().max(1));
    if jobs == 1 {
        for (i, path) in files.iter().enumerate() {
            judge_one(path, limits, files.len() == 1, &mut |e| each(i, e));
        }
        return;
    }
    let next = AtomicUsize::new(0);
    let (tx, rx) = mpsc::channel::<(usize, Event)>();
    std::thread::scope(|scope| {
        for _ in 0..jobs {
            let tx = tx.clone();
            let next = &next;
            scope.spawn(move || {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(path) = files.get(i) else { break };
                    judge_one(path, limits, false, &mut |e| {
                        let _ = tx.send((i, e));
                    });
                }
            });
        }
        drop(tx);
        // The file being printed passes straight through; later ones wait their turn.
        let mut current = 0;
        let mut waiting: BTreeMap<usize, Vec<Event>> = BTreeMap::new();
        for (i, event) in rx {
            if i != current {
                waiting.entry(i).or_default().push(event);
                continue;
            }
            let done = event.last();
            each(i, event);
            if done {
                current += 1;
                while let Some(events) = waiting.remove(&current) {
                    let finished = events.iter().any(Event::last);
                    for e in events {
                        each(current, e);
                    }
                    if !finished {
                        break;
                    }
                    current += 1;
                }
            }
        }
    });
}

/// Files at least this large get a progress line on a terminal.
const PROGRESS_MIN_BYTES: u64 = 16 << 20;

/// A reader that draws "name: 42% (420 MiB of 1000 MiB)" on stderr as it goes.
struct Progress<R> {
    inner: R,
    name: String,
    total: u64,
    done: u64,
    last: std::time::Instant,
}

impl<R> Progress<R> {
    fn new(inner: R, total: u64, name: &str) -> Self {
        Progress {
            inner,
            name: name.to_owned(),
            total,
            done: 0,
            last: std::time::Instant::now(),
        }
    }
}

/// Seeking (the HAR reader reads a body again when it came before the response head) moves
/// the progress with it.
impl<R: io::Seek> io::Seek for Progress<R> {
    fn seek(&mut self, pos: io::SeekFrom) -> io::Result<u64> {
        let at = self.inner.seek(pos)?;
        self.done = at;
        Ok(at)
    }
}

impl<R: io::Read> io::Read for Progress<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.done += n as u64;
        if n == 0 {
            eprint!("\r\x1b[2K");
        } else if self.last.elapsed() >= std::time::Duration::from_millis(200) {
            self.last = std::time::Instant::now();
            let mib = |b: u64| b >> 20;
            eprint!(
                "\r\x1b[2K{}: {}% ({} MiB of {} MiB)",
                self.name,
                self.done * 100 / self.total.max(1),
                mib(self.done),
                mib(self.total)
            );
        }
        Ok(n)
    }
}

/// Opens a capture (`-` is standard input), with a progress line for large files on a terminal;
/// `None` after saying why on stderr.
pub(crate) fn open_capture(path: &Path, name: &str) -> Option<Box<dyn io::Read>> {
    if name == "-" {
        return Some(Box::new(io::stdin().lock()));
    }
    match File::open(path) {
        Ok(f) => match f.metadata() {
            Ok(m) if m.is_dir() => {
                eprintln!("mcp-verdict: {name}: is a directory");
                None
            }
            Ok(m) if m.len() >= PROGRESS_MIN_BYTES && io::stderr().is_terminal() => {
                Some(Box::new(Progress::new(f, m.len(), name)))
            }
            _ => Some(Box::new(f)),
        },
        Err(e) => {
            eprintln!("mcp-verdict: {name}: {e}");
            None
        }
    }
}
