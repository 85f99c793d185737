//! One 64 MiB SSE body, end to end: `replay` of a HAR holding it against eventsource-stream
//! framing the same body from memory, in interleaved rounds.
//!
//! ```sh
//! cargo build --release --bin mcp-verdict && cargo run --release --example big_sse -- 64 7
//! ```
//!
//! Writes `/tmp/big_sse.har` (one `tools/call` whose reply is progress notifications then the
//! result, in HAR member order), then each round runs `target/release/mcp-verdict replay
//! /tmp/big_sse.har --format jsonl` (timed with its peak RSS from `/usr/bin/time`-style
//! `getrusage`) and eventsource-stream 0.2.3 on the same body in memory, one chunk per event
//! (its best feed), parsing nothing. Prints the median ratio.
//!
//! Two in-process columns split the replay's time: the streamed HAR reader alone (the body
//! decoded into a sink that only counts it) and the reader feeding the core's bare `SseFramer`
//! (framing, no judging). Replay minus the second is what judging the events costs.

use std::process::Command;
use std::time::Instant;

#[path = "../benches/support/big_sse.rs"]
mod big_sse;
use big_sse::{body, eventsource, write_har};

/// Counts body bytes, and frames them when it holds a framer.
struct Frames {
    bytes: u64,
    framer: Option<(mcp_verdict::sse::SseFramer, Events)>,
}

/// Counts events with data.
struct Events(u64);

impl mcp_verdict::sse::SseSink for Events {
    fn on_event(&mut self, event: &mcp_verdict::sse::SseEvent<'_>) {
        self.0 += u64::from(!event.data.is_empty());
    }
}

impl mcp_verdict::har::EntrySink for Frames {
    fn begin(&mut self, _: mcp_verdict::har::EntryHead) {}
    fn body(&mut self, piece: &[u8]) {
        self.bytes += piece.len() as u64;
        if let Some((framer, events)) = &mut self.framer {
            framer.feed(piece, events).expect("event too large");
        }
    }
    fn finish(&mut self, _: mcp_verdict::har::EntryTail) {}
}

/// The streamed HAR reader on `path` (with the core's framer when `frame`): seconds.
fn reader(path: &str, frame: bool, expect: usize) -> Result<f64, Box<dyn std::error::Error>> {
    let t = Instant::now();
    let mut sink = Frames {
        bytes: 0,
        framer: frame.then(|| (mcp_verdict::sse::SseFramer::new(16 << 20), Events(0))),
    };
    let cap = mcp_verdict::har::hold_cap(&mcp_verdict::Limits::default());
    mcp_verdict::har::stream_entries_seekable(std::fs::File::open(path)?, cap, &mut sink)?;
    let secs = t.elapsed().as_secs_f64();
    assert_eq!(sink.bytes, expect as u64);
    if let Some((_, events)) = sink.framer {
        assert!(events.0 > 1000);
    }
    Ok(secs)
}

/// The reader before streaming: serde_json reads each entry whole (the body decoded into one
/// string), then the entry is judged. Run as a child process, for its peak RSS.
fn serde_replay(path: &str) -> Result<(), Box<dyn std::error::Error>> {
    use mcp_verdict::replay::{Item, judge_entry};
    let mut session = mcp_verdict::Driver::default();
    let mut ok = false;
    mcp_verdict::har::read_entries(std::fs::File::open(path)?, &mut |entry| {
        if let Item::Verdict(v) = judge_entry(&mut session, &entry, &mut std::iter::empty()) {
            ok = v.complete;
        }
    })?;
    assert!(ok);
    Ok(())
}

/// Runs `cmd` under `/usr/bin/time`: seconds and peak RSS in kB.
fn timed(cmd: &mut Command) -> Result<(f64, u64), Box<dyn std::error::Error>> {
    let t = Instant::now();
    let out = cmd.output()?;
    let secs = t.elapsed().as_secs_f64();
    assert!(
        out.status.success() || out.status.code() == Some(1),
        "{out:?}"
    );
    let rss_kb = String::from_utf8_lossy(&out.stderr)
        .lines()
        .last()
        .and_then(|l| l.trim().parse().ok())
        .unwrap_or(0);
    Ok((secs, rss_kb))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    if std::env::args().nth(1).as_deref() == Some("serde") {
        return serde_replay(&std::env::args().nth(2).unwrap_or_default());
    }
    let mib: usize = args.next().map_or(Ok(64), |a| a.parse())?;
    let rounds: usize = args.next().map_or(Ok(7), |a| a.parse())?;
    let body = body(mib);
    let path = "/tmp/big_sse.har";
    write_har(path.as_ref(), &body)?;
    let chunks = big_sse::event_chunks(&body);
    let exe = concat!(env!("CARGO_MANIFEST_DIR"), "/target/release/mcp-verdict");
    let size = body.len() as f64 / (1u64 << 20) as f64;
    println!("body {size:.1} MiB, HAR {path}");
    let mut ratios = Vec::new();
    let mut before_ratios = Vec::new();
    let (mut reader_ratios, mut framed_ratios) = (Vec::new(), Vec::new());
    for round in 0..rounds {
        let me = std::env::current_exe()?;
        let replay = || {
            timed(
                Command::new("/usr/bin/time")
                    .args(["-f", "%M", exe, "replay", path, "--format", "jsonl"]),
            )
        };
        let before = || {
            timed(
                Command::new("/usr/bin/time")
                    .arg("-f")
                    .arg("%M")
                    .arg(&me)
                    .args(["serde", path]),
            )
        };
        let es = || {
            let t = Instant::now();
            let n = eventsource(&chunks);
            assert!(n > 1000);
            t.elapsed().as_secs_f64()
        };
        let only = || reader(path, false, body.len());
        let framed = || reader(path, true, body.len());
        // Rotated order.
        let (mut r, mut b, mut e, mut o, mut f) = ((0.0, 0), (0.0, 0), 0.0, 0.0, 0.0);
        for step in 0..5 {
            match (step + round) % 5 {
                0 => r = replay()?,
                1 => b = before()?,
                2 => o = only()?,
                3 => f = framed()?,
                _ => e = es(),
            }
        }
        let ratio = e / r.0;
        ratios.push(ratio);
        before_ratios.push(e / b.0);
        reader_ratios.push(e / o);
        framed_ratios.push(e / f);
        println!(
            "round {round}: replay {:.0} MiB/s (peak RSS {:.1} MB) | serde reader {:.0} MiB/s (peak RSS {:.1} MB) | reader only {:.0} MiB/s | reader + framer {:.0} MiB/s | eventsource-stream {:.0} MiB/s | replay ÷ eventsource-stream {ratio:.2}, serde reader ÷ eventsource-stream {:.2}",
            size / r.0,
            r.1 as f64 / 1000.0,
            size / b.0,
            b.1 as f64 / 1000.0,
            size / o,
            size / f,
            size / e,
            e / b.0
        );
    }
    for (what, ratios) in [
        ("reader only", &mut reader_ratios),
        ("reader + framer", &mut framed_ratios),
    ] {
        ratios.sort_by(f64::total_cmp);
        println!(
            "median {what} ÷ eventsource-stream: {:.2}",
            ratios[ratios.len() / 2]
        );
    }
    before_ratios.sort_by(f64::total_cmp);
    println!(
        "median serde reader ÷ eventsource-stream: {:.2}",
        before_ratios[before_ratios.len() / 2]
    );
    ratios.sort_by(f64::total_cmp);
    println!(
        "median replay ÷ eventsource-stream: {:.2}",
        ratios[ratios.len() / 2]
    );
    Ok(())
}
