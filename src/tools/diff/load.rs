//! Reading one side of a diff, its kind told by content: a HAR capture, a verdict log
//! (`--format jsonl`, `proxy --log`), a calls file (`--calls --format jsonl`, `soak --calls`)
//! or a soak report (`soak -o`). The first member name of the first JSON object decides
//! (`log`, `index`, `call`, `requests`: what each writer puts first), so nothing is read twice
//! and nothing is held whole: a capture is replayed streamed, a log read line by line, and per
//! call only a [`CallSummary`] is kept.

use std::collections::{HashMap, VecDeque};
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Seek};
use std::path::Path;

use super::summary::{CallSummary, Note};
use crate::calls::Calls;
use crate::har::HarError;
use crate::limits::Limits;
use crate::soak::Report;
use crate::verdict::Verdict;
use crate::vocab::call::Call;

wire_names! {
    /// What an input file is.
    pub enum Kind {
        /// A HAR 1.2 capture: replayed and grouped into calls like `replay --calls`.
        Har => "har",
        /// One verdict per line: each exchange stands for a call.
        Verdicts => "verdicts",
        /// One call per line.
        Calls => "calls",
        /// A soak report.
        Soak => "soak",
    }
}

/// One side of a diff, read.
#[derive(Debug)]
pub enum Side {
    /// Calls, from a capture or a log.
    Calls {
        /// What the file was.
        kind: Kind,
        /// Its calls, in order.
        calls: Vec<CallSummary>,
    },
    /// A soak report.
    Soak(Box<Report>),
}

/// Why an input cannot be used: one line each.
#[derive(Debug)]
pub enum LoadError {
    /// Opening or reading failed.
    Read(io::Error),
    /// Nothing in it.
    Empty,
    /// Not one of the kinds (what was found instead).
    Unknown(String),
    /// The HAR capture is unusable.
    Har(HarError),
    /// A log line is not a verdict or call.
    Line {
        /// 1-based line number.
        line: u64,
        /// The parse error.
        error: serde_json::Error,
    },
    /// A soak report that does not parse.
    Soak(serde_json::Error),
    /// No MCP exchange (a capture) or no line (a log).
    NoCalls(Kind),
}

impl std::fmt::Display for LoadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LoadError::Read(e) => write!(f, "{e}"),
            LoadError::Empty => f.write_str("empty file"),
            LoadError::Unknown(what) => write!(
                f,
                "not a HAR capture, verdict or calls JSONL log, or soak report ({what})"
            ),
            LoadError::Har(e) => write!(f, "{e}"),
            LoadError::Line { line, error } => write!(f, "line {line}: {error}"),
            LoadError::Soak(e) => write!(f, "not a soak report: {e}"),
            LoadError::NoCalls(Kind::Har) => f.write_str("no MCP exchange in the capture"),
            LoadError::NoCalls(kind) => write!(f, "no {kind} line in the log"),
        }
    }
}

impl std::error::Error for LoadError {}

/// Reads the file at `path`, telling its kind by content.
///
/// # Errors
/// A [`LoadError`] saying in one line why the file cannot be used.
pub fn load(path: &Path, limits: Limits) -> Result<Side, LoadError> {
    let file = File::open(path).map_err(LoadError::Read)?;
    if file.metadata().map_err(LoadError::Read)?.is_dir() {
        return Err(LoadError::Read(io::Error::from(
            io::ErrorKind::IsADirectory,
        )));
    }
    let mut reader = BufReader::with_capacity(1 << 16, file);
    let kind = sniff(&mut reader)?;
    reader.rewind().map_err(LoadError::Read)?;
    let calls = match kind {
        Kind::Soak => {
            return serde_json::from_reader(reader)
                .map(|r| Side::Soak(Box::new(r)))
                .map_err(LoadError::Soak);
        }
        Kind::Har => har_calls(reader, limits)?,
        Kind::Verdicts => lines(reader, |v: Verdict| CallSummary::of_verdict(&v))?,
        Kind::Calls => lines(reader, |c: Call| CallSummary::of_call_record(&c))?,
    };
    if calls.is_empty() {
        return Err(LoadError::NoCalls(kind));
    }
    Ok(Side::Calls { kind, calls })
}

/// The kind, from the first member name of the first object.
fn sniff(reader: &mut impl BufRead) -> Result<Kind, LoadError> {
    let head = reader.fill_buf().map_err(LoadError::Read)?;
    let head = head.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(head);
    let mut rest = head.iter().skip_while(|b| b.is_ascii_whitespace());
    match rest.next() {
        None => return Err(LoadError::Empty),
        Some(b'{') => {}
        Some(other) => {
            return Err(LoadError::Unknown(format!(
                "it starts with {:?}, not a JSON object",
                char::from(*other)
            )));
        }
    }
    let mut rest = rest.skip_while(|b| b.is_ascii_whitespace());
    if rest.next() != Some(&b'"') {
        return Err(LoadError::Unknown("its first object has no member".into()));
    }
    let name: Vec<u8> = rest.take_while(|b| **b != b'"').take(64).copied().collect();
    match name.as_slice() {
        b"log" => Ok(Kind::Har),
        b"index" => Ok(Kind::Verdicts),
        b"call" => Ok(Kind::Calls),
        b"requests" => Ok(Kind::Soak),
        other => by_members(head).ok_or_else(|| {
            LoadError::Unknown(format!(
                "its first member is {:?}",
                String::from_utf8_lossy(other)
            ))
        }),
    }
}

/// A log line that starts with another member (`replay --format jsonl` puts `file` first):
/// the members of the first line, when it is a whole object within `head`, tell.
fn by_members(head: &[u8]) -> Option<Kind> {
    let line = &head[..memchr::memchr(b'\n', head)?];
    let serde_json::Value::Object(first) = serde_json::from_slice(line).ok()? else {
        return None;
    };
    let has = |k: &str| first.contains_key(k);
    if has("index") && has("layer") && has("outcome") {
        Some(Kind::Verdicts)
    } else if has("call") && has("entries") && has("outcome") {
        Some(Kind::Calls)
    } else {
        None
    }
}

/// One JSON value per non-blank line, each made a summary.
fn lines<T: serde::de::DeserializeOwned>(
    reader: impl BufRead,
    summary: impl Fn(T) -> CallSummary,
) -> Result<Vec<CallSummary>, LoadError> {
    let mut out = Vec::new();
    for (n, line) in reader.lines().enumerate() {
        let line = line.map_err(LoadError::Read)?;
        if line.trim().is_empty() {
            continue;
        }
        let value = serde_json::from_str(&line).map_err(|error| LoadError::Line {
            line: n as u64 + 1,
            error,
        })?;
        out.push(summary(value));
    }
    Ok(out)
}

/// A capture replayed streamed and grouped into calls by the grouping `replay --calls` uses;
/// each exchange's note waits only until its call is emitted.
fn har_calls(reader: impl Read + Seek, limits: Limits) -> Result<Vec<CallSummary>, LoadError> {
    let mut calls = Calls::new();
    let mut waiting: HashMap<u64, VecDeque<Note>> = HashMap::new();
    let mut out = Vec::new();
    let mut done = |c: Call, waiting: &mut HashMap<u64, VecDeque<Note>>| {
        let notes: Vec<Note> = c
            .entries
            .iter()
            .filter_map(|e| {
                let queue = waiting.get_mut(e)?;
                let note = queue.pop_front();
                if queue.is_empty() {
                    waiting.remove(e);
                }
                note
            })
            .collect();
        out.push(CallSummary::of_grouped(&c, &notes));
    };
    let mut emitted = Vec::new();
    crate::replay::replay_facts_seekable(reader, limits, &mut |x| {
        let note = Note::of(x.verdict, x.body, x.started_ms, x.duration_ms);
        waiting.entry(x.verdict.index).or_default().push_back(note);
        calls.add(x, &mut |c| emitted.push(c));
        for c in emitted.drain(..) {
            done(c, &mut waiting);
        }
    })
    .map_err(LoadError::Har)?;
    calls.finish(&mut |c| done(c, &mut waiting));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A capture's summaries are the calls `replay --calls` gives (its grouping, streamed): on
    /// every shipped capture, call for call.
    #[test]
    fn capture_summaries_are_the_calls_of_replay_calls() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/har");
        let mut checked = 0;
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_none_or(|e| e != "har") {
                continue;
            }
            let limits = Limits::default();
            let mut expected = Vec::new();
            let whole = std::fs::File::open(&path).unwrap();
            if crate::replay::replay_calls(whole, limits, &mut |c| expected.push(c)).is_err() {
                continue;
            }
            let file = BufReader::new(File::open(&path).unwrap());
            let got = har_calls(file, limits).unwrap();
            let name = path.display();
            assert_eq!(got.len(), expected.len(), "{name}");
            for (g, e) in got.iter().zip(&expected) {
                let e = CallSummary::of_call_record(e);
                let same = (
                    g.call,
                    &g.method,
                    &g.tool,
                    g.outcome,
                    g.complete,
                    g.post_count,
                );
                let want = (
                    e.call,
                    &e.method,
                    &e.tool,
                    e.outcome,
                    e.complete,
                    e.post_count,
                );
                assert_eq!(same, want, "{name}");
                assert!(e.rules.iter().all(|r| g.rules.contains(r)), "{name}");
            }
            checked += 1;
        }
        assert!(checked > 50, "{checked} captures");
    }

    #[test]
    fn the_first_member_tells_the_kind() {
        let kind = |text: &str| sniff(&mut io::Cursor::new(text.as_bytes().to_vec()));
        assert_eq!(kind("\u{feff} {\"log\": {}}").unwrap(), Kind::Har);
        assert_eq!(kind("{\"index\":0}\n").unwrap(), Kind::Verdicts);
        assert_eq!(kind("{\"call\":0}\n").unwrap(), Kind::Calls);
        assert_eq!(kind("{\n  \"requests\": 3\n}").unwrap(), Kind::Soak);
        assert!(matches!(kind(""), Err(LoadError::Empty)));
        assert!(matches!(kind("  \n"), Err(LoadError::Empty)));
        let e = kind("[1]").unwrap_err().to_string();
        assert!(e.contains("not a JSON object"), "{e}");
        assert_eq!(
            kind(
                "{\"file\":\"a.har\",\"index\":0,\"layer\":\"stream\",\"outcome\":\"CANCELLED\"}\n"
            )
            .unwrap(),
            Kind::Verdicts
        );
        let e = kind("{\"x\":1}\n").unwrap_err().to_string();
        assert!(e.contains("\"x\""), "{e}");
    }
}
