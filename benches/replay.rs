//! `mcp-verdict replay` end to end, the release binary run as a user runs it, in interleaved
//! rounds (the variants take turns, order rotated, so load drift on a shared machine touches
//! them alike; the median per-round ratio is printed):
//!
//! - `big_sse`: a HAR holding one `tools/call` answered by a 64 MiB SSE body (progress
//!   notifications, then the result; HAR member order), `replay FILE --format jsonl` against
//!   eventsource-stream 0.2.3 framing the same body from memory, one chunk per event (its best
//!   feed), parsing nothing. Goal: replay ≥ 1.0× eventsource-stream. (Peak RSS, the other half
//!   of that goal, is the `big_sse` example's: a bench cannot read a child's peak cleanly.)
//! - `jobs`: 200 copies of a 1 MiB realistic capture (`gen_big_har`'s) in one directory,
//!   `replay DIR --format jsonl -j1` against `-j2`.
//!
//! ```text
//! cargo bench --bench replay                 # both, the issue's sizes
//! cargo bench --bench replay -- jobs         # only the many-files rounds
//! REPLAY_BENCH_SSE_MIB=8 REPLAY_BENCH_FILES=20 REPLAY_BENCH_ROUNDS=3 cargo bench --bench replay
//! ```
//!
//! Sizes (environment, defaults in brackets): `REPLAY_BENCH_SSE_MIB` [64],
//! `REPLAY_BENCH_FILES` [200], `REPLAY_BENCH_FILE_MIB` [1], `REPLAY_BENCH_ROUNDS` [5]. The
//! inputs are generated deterministically, once per run, into a temporary directory removed at
//! the end. Replay's output goes to `/dev/null`; before timing, one run of each variant is
//! checked (exit code, the verdict, `-j1` and `-j2` printing the same bytes).
//!
//! `cargo test --benches` runs this binary without `--bench`: it then runs every variant once
//! on a 1 MiB body and 4 files, as a check, and times nothing.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

#[path = "support/big_sse.rs"]
mod big_sse;
#[path = "support/gen_har.rs"]
mod gen_har;

/// The binary cargo built for this bench (release with `cargo bench`).
const EXE: &str = env!("CARGO_BIN_EXE_mcp-verdict");

const MIB: f64 = (1u64 << 20) as f64;

/// A size from the environment, or its default.
fn size(name: &str, default: usize) -> usize {
    match std::env::var(name) {
        Ok(v) => v
            .parse()
            .unwrap_or_else(|_| panic!("{name}={v}: expected a whole number")),
        Err(_) => default,
    }
}

/// A directory removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new() -> Self {
        let dir =
            std::env::temp_dir().join(format!("mcp-verdict-replay-bench-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("create the temporary directory");
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `mcp-verdict replay ARGS --format jsonl`, output discarded: seconds. Asserts the exit code
/// (1 when the input holds broken exchanges on purpose; 2, unusable input, never).
fn replay<I: AsRef<OsStr>>(args: &[I], exit: i32) -> f64 {
    let started = Instant::now();
    let status = Command::new(EXE)
        .arg("replay")
        .args(args)
        .args(["--format", "jsonl"])
        .stdout(Stdio::null())
        .status()
        .expect("run mcp-verdict");
    let secs = started.elapsed().as_secs_f64();
    assert_eq!(status.code(), Some(exit), "replay {status}");
    secs
}

/// The same, output kept (the checks before timing).
fn replay_output<I: AsRef<OsStr>>(args: &[I], exit: i32) -> Vec<u8> {
    let out = Command::new(EXE)
        .arg("replay")
        .args(args)
        .args(["--format", "jsonl"])
        .output()
        .expect("run mcp-verdict");
    assert_eq!(
        out.status.code(),
        Some(exit),
        "replay {}: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// Runs `variants` in `rounds` rounds, order rotated: each variant's seconds per round.
fn take_turns(variants: &mut [&mut dyn FnMut() -> f64], rounds: usize) -> Vec<Vec<f64>> {
    let mut secs = vec![Vec::with_capacity(rounds); variants.len()];
    for round in 0..rounds {
        for k in 0..variants.len() {
            let i = (round + k) % variants.len();
            secs[i].push((variants[i])());
        }
    }
    secs
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// The 64 MiB SSE body: replay of its HAR against eventsource-stream on it in memory.
fn big_sse(dir: &Path, mib: usize, rounds: usize) {
    let body = big_sse::body(mib);
    let har = dir.join("big_sse.har");
    big_sse::write_har(&har, &body).expect("write the HAR");
    let chunks = big_sse::event_chunks(&body);
    let events = chunks.len();
    let size = body.len() as f64 / MIB;
    drop(body);

    let out = replay_output(&[&har], 0);
    let out = String::from_utf8(out).expect("UTF-8 output");
    assert_eq!(out.lines().count(), 1, "one verdict: {out}");
    assert!(out.contains(r#""outcome":"TOOL_SUCCESS""#), "{out}");
    assert_eq!(big_sse::eventsource(&chunks), events);
    if rounds == 0 {
        return;
    }

    let mut run_replay = || replay(&[&har], 0);
    let mut run_eventsource = || {
        let started = Instant::now();
        assert_eq!(big_sse::eventsource(&chunks), events);
        started.elapsed().as_secs_f64()
    };
    let secs = take_turns(&mut [&mut run_replay, &mut run_eventsource], rounds);
    let ratios: Vec<f64> = secs[1].iter().zip(&secs[0]).map(|(e, r)| e / r).collect();
    let rate = |s: &[f64]| size / median(s.to_vec());
    println!(
        "\nbig_sse: one {size:.1} MiB SSE body ({events} events), {rounds} interleaved rounds, medians:"
    );
    println!(
        "  replay --format jsonl (end to end)  {:>6.0} MiB/s",
        rate(&secs[0])
    );
    println!(
        "  eventsource-stream, from memory     {:>6.0} MiB/s",
        rate(&secs[1])
    );
    println!(
        "  replay ÷ eventsource-stream         {:>6.2}x (per round {})",
        median(ratios.clone()),
        list(&ratios)
    );
}

/// Many files: `-j1` against `-j2` on copies of one capture.
fn jobs(dir: &Path, files: usize, file_mib: usize, rounds: usize) {
    let one = dir.join("one.har");
    let written = gen_har::write(&one, (file_mib as u64) << 20).expect("write the capture");
    let copies = dir.join("copies");
    std::fs::create_dir_all(&copies).expect("create the copies' directory");
    let width = files.to_string().len();
    for i in 1..=files {
        std::fs::copy(&one, copies.join(format!("c{i:0width$}.har"))).expect("copy the capture");
    }
    std::fs::remove_file(&one).expect("remove the original");

    // The capture holds broken exchanges on purpose: exit 1.
    let serial = replay_output(&[copies.as_os_str(), "-j1".as_ref()], 1);
    let parallel = replay_output(&[copies.as_os_str(), "-j2".as_ref()], 1);
    assert!(serial == parallel, "-j1 and -j2 print different output");
    // One verdict line per entry.
    let lines = serial
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .count();
    assert_eq!(lines as u64, written.entries * files as u64);
    if rounds == 0 {
        return;
    }

    let mut one_thread = || replay(&[copies.as_os_str(), "-j1".as_ref()], 1);
    let mut two_threads = || replay(&[copies.as_os_str(), "-j2".as_ref()], 1);
    let secs = take_turns(&mut [&mut one_thread, &mut two_threads], rounds);
    let ratios: Vec<f64> = secs[0].iter().zip(&secs[1]).map(|(a, b)| a / b).collect();
    let total = written.bytes as f64 * files as f64 / MIB;
    println!(
        "\njobs: {files} copies of a {:.2} MiB capture ({} entries each: {} tools/call, {} notifications; {total:.0} MiB), {rounds} interleaved rounds, medians:",
        written.bytes as f64 / MIB,
        written.entries,
        written.tool_calls,
        written.notifications
    );
    for (name, s) in [("-j1", &secs[0]), ("-j2", &secs[1])] {
        let m = median(s.to_vec());
        println!(
            "  replay DIR --format jsonl {name}  {m:>6.2} s  {:>6.0} MiB/s",
            total / m
        );
    }
    println!(
        "  speed-up (-j1 time ÷ -j2 time)    {:>6.2}x (per round {})",
        median(ratios.clone()),
        list(&ratios)
    );
}

fn list(v: &[f64]) -> String {
    v.iter()
        .map(|r| format!("{r:.2}"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` does not: then check, time nothing.
    let bench = std::env::args().any(|a| a == "--bench");
    let filters: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let wanted =
        |name: &str| filters.is_empty() || filters.iter().any(|f| name.contains(f.as_str()));
    let (sse_mib, files, file_mib, rounds) = if bench {
        (
            size("REPLAY_BENCH_SSE_MIB", 64),
            size("REPLAY_BENCH_FILES", 200),
            size("REPLAY_BENCH_FILE_MIB", 1),
            size("REPLAY_BENCH_ROUNDS", 5),
        )
    } else {
        (1, 4, 1, 0)
    };
    let dir = TempDir::new();
    if wanted("big_sse") {
        big_sse(&dir.0, sse_mib, rounds);
    }
    if wanted("jobs") {
        jobs(&dir.0, files, file_mib, rounds);
    }
    if !bench {
        println!("replay bench: checked (no timing without --bench)");
    }
}
