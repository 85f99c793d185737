//! `sse.buffered` from arrival times: the same verdict whatever the chunking, from a live
//! flight and from its recording replayed by both HAR readers, and from HAR `timings` alone.

use mcp_verdict::har::{self, Entry, Timings};
use mcp_verdict::replay::{self, Item};
use mcp_verdict::{Driver, End, Headers, Limits, ResponseHead, Sent, Times, Verdict};

const CALL: &[u8] = br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"slow","arguments":{},"_meta":{"progressToken":"p"}}}"#;

/// Three progress notifications and the response, each a separate event.
fn events() -> Vec<Vec<u8>> {
    let mut out: Vec<Vec<u8>> = (1..=3)
        .map(|n| {
            format!(
                "data: {{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{{\"progressToken\":\"p\",\"progress\":{n}}}}}\n\n"
            )
            .into_bytes()
        })
        .collect();
    out.push(b"data: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"content\":[]}}\n\n".to_vec());
    out
}

fn head(accel_off: bool) -> ResponseHead {
    let mut headers = Headers::from_iter([("Content-Type", "text/event-stream")]);
    if accel_off {
        headers.push("X-Accel-Buffering", "no");
    }
    ResponseHead {
        status: 200,
        headers,
    }
}

/// One exchange fed as `(bytes, ms)` pieces, each cut into `cut`-byte chunks; the verdict and
/// the recorded entry.
fn live(pieces: &[(Vec<u8>, f64)], cut: usize, accel_off: bool) -> (Verdict, Entry) {
    let mut driver = Driver::new(Limits::default()).recording(1 << 20);
    let headers = Headers::from_iter([
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
        ("MCP-Protocol-Version", "2025-11-25"),
    ]);
    let mut flight = driver.begin(Sent {
        index: None,
        method: "POST",
        url: "http://127.0.0.1:9/mcp",
        headers,
        body: CALL,
        started: Some("2026-12-06T10:00:00.000Z".into()),
        from_client: false,
    });
    flight.on_head(head(accel_off));
    for (bytes, ms) in pieces {
        for chunk in bytes.chunks(cut) {
            flight.feed_at(chunk, *ms, &mut ());
        }
    }
    let end_ms = pieces.last().map_or(0.0, |p| p.1);
    let times = Times {
        elapsed_ms: Some(end_ms),
        ..Times::default()
    };
    let mut finished = driver.finish(flight, End::Eof, times, &mut ());
    (finished.rows.remove(0), *finished.entry.expect("recorded"))
}

/// The entry written as HAR and replayed by the streaming reader and by the serde reader.
fn replayed(entry: Entry) -> [Verdict; 2] {
    let mut doc = Vec::new();
    har::write(&[entry], &mut doc).unwrap();
    let mut streamed = Vec::new();
    replay::replay_har(&doc[..], Limits::default(), &mut |item| {
        if let Item::Verdict(v) = item {
            streamed.push(*v);
        }
    })
    .unwrap();
    let entries = har::parse(&doc).unwrap();
    let mut driver = Driver::new(Limits::default());
    let Item::Verdict(whole) =
        replay::judge_entry(&mut driver, &entries[0], &mut [3].into_iter().cycle())
    else {
        panic!("skipped");
    };
    [streamed.remove(0), *whole]
}

fn burst_at(ms: f64) -> Vec<(Vec<u8>, f64)> {
    vec![(events().concat(), ms)]
}

/// The verdict's `sse.buffered` finding (the test fails without one).
fn buffered(v: &Verdict) -> &mcp_verdict::Violation {
    v.violations
        .iter()
        .find(|f| f.rule == "sse.buffered")
        .unwrap_or_else(|| panic!("no sse.buffered in {:?}", v.violations))
}

#[test]
fn a_burst_after_a_long_wait_is_buffered_whatever_the_chunking() {
    let (v, entry) = live(&burst_at(3000.0), 7, false);
    assert!(v.has_violation("sse.buffered"), "{:?}", v.violations);
    let finding = buffered(&v);
    assert!(
        finding.detail.contains("3 progress notifications"),
        "{}",
        finding.detail
    );
    assert!(
        finding
            .detail
            .contains("within 100 ms, none sooner than 1000 ms"),
        "{}",
        finding.detail
    );
    assert!(
        finding.detail.contains("proxy_buffering off"),
        "{}",
        finding.detail
    );
    assert!(
        finding.detail.contains("X-Accel-Buffering: no"),
        "{}",
        finding.detail
    );
    // The same bytes at the same time in other chunkings: the same verdict.
    for cut in [1, 64, 4096] {
        assert_eq!(live(&burst_at(3000.0), cut, false).0, v, "cut {cut}");
    }
    // Its call carries the finding too.
    let calls = replay::calls_of(std::slice::from_ref(&v), std::slice::from_ref(&entry));
    let on_call = calls[0]
        .violations
        .iter()
        .find(|w| w.rule == "sse.buffered");
    assert!(
        on_call.is_some_and(|w| w.detail.starts_with("entry 0: ")),
        "{calls:?}"
    );
    // Replayed from the recording, by both readers: the same verdict.
    assert!(!entry.arrivals.is_empty());
    for r in replayed(entry) {
        assert_eq!(r, v);
    }
}

#[test]
fn events_spread_over_time_or_early_are_not_buffered() {
    let spread: Vec<_> = events()
        .into_iter()
        .enumerate()
        .map(|(i, e)| (e, 500.0 * (i as f64 + 1.0)))
        .collect();
    let (v, entry) = live(&spread, 5, false);
    assert!(!v.has_violation("sse.buffered"), "{:?}", v.violations);
    for r in replayed(entry) {
        assert_eq!(r, v);
    }
    let (early, _) = live(&burst_at(40.0), 5, false);
    assert!(
        !early.has_violation("sse.buffered"),
        "{:?}",
        early.violations
    );
    // Only the response after a wait: a slow tool, not a buffer.
    let lone = vec![(events().pop().unwrap(), 5000.0)];
    assert!(!live(&lone, 5, false).0.has_violation("sse.buffered"));
}

#[test]
fn with_x_accel_buffering_no_the_fix_points_elsewhere() {
    let (v, _) = live(&burst_at(2500.0), 9, true);
    let finding = buffered(&v);
    assert!(
        finding.detail.contains("other than nginx"),
        "{}",
        finding.detail
    );
}

#[test]
fn har_timings_alone_show_a_burst_only_when_receive_is_short() {
    let (_, mut entry) = live(&burst_at(3000.0), 4096, false);
    entry.arrivals.clear();
    entry.time_ms = Some(3004.0);
    // A browser's HAR: the whole body arrived in `receive`, which ended at `time`.
    let judge = |entry: &Entry, receive: f64| {
        let mut e = entry.clone();
        e.timings = Some(Timings {
            send: Some(1.0),
            wait: Some(3003.0 - receive),
            receive: Some(receive),
        });
        let mut driver = Driver::new(Limits::default());
        match replay::judge_entry(&mut driver, &e, &mut std::iter::empty()) {
            Item::Verdict(v) => v.has_violation("sse.buffered"),
            Item::Skipped(s) => panic!("{s:?}"),
        }
    };
    assert!(judge(&entry, 3.0));
    assert!(!judge(&entry, 2500.0));
    // No times at all: nothing said.
    entry.timings = None;
    let mut driver = Driver::new(Limits::default());
    let Item::Verdict(v) = replay::judge_entry(&mut driver, &entry, &mut std::iter::empty()) else {
        panic!()
    };
    assert!(!v.has_violation("sse.buffered"));
}

#[test]
fn thresholds_are_configurable() {
    let limits = Limits {
        buffered_wait_ms: 5000,
        ..Limits::default()
    };
    let (_, entry) = live(&burst_at(3000.0), 64, false);
    let mut driver = Driver::new(limits);
    let Item::Verdict(v) = replay::judge_entry(&mut driver, &entry, &mut std::iter::empty()) else {
        panic!()
    };
    assert!(!v.has_violation("sse.buffered"), "{:?}", v.violations);
}

/// A recorded stream cut (reset) after `ms`, at `index`.
fn cut_entry(index: u64, ms: f64) -> Entry {
    let (_, mut entry) = live(&[(events()[0].clone(), 10.0)], 64, false);
    entry.index = index;
    entry.end = End::Reset;
    entry.time_ms = Some(ms);
    entry
}

#[test]
fn a_capture_with_streams_cut_after_the_same_time_has_one_idle_cut() {
    let entries: Vec<Entry> = [30_020.0, 4_000.0, 29_950.0, 30_100.0, 30_000.0]
        .into_iter()
        .enumerate()
        .map(|(i, ms)| cut_entry(i as u64, ms))
        .collect();
    let mut doc = Vec::new();
    har::write(&entries, &mut doc).unwrap();
    let mut verdicts = Vec::new();
    replay::replay_har(&doc[..], Limits::default(), &mut |item| {
        if let Item::Verdict(v) = item {
            verdicts.push(*v);
        }
    })
    .unwrap();
    let found: Vec<_> = verdicts
        .iter()
        .filter(|v| v.has_violation("sse.idle_cut"))
        .map(|v| v.index)
        .collect();
    // One finding, on the third stream cut after about 30 s, naming the time and the fix.
    assert_eq!(found, [3], "{verdicts:?}");
    let f = verdicts[3]
        .violations
        .iter()
        .find(|w| w.rule == "sse.idle_cut")
        .unwrap();
    assert!(
        f.detail.contains("3 streams were cut after 30.0 s"),
        "{}",
        f.detail
    );
    assert!(f.detail.contains("entries 0, 2, 3"), "{}", f.detail);
    assert!(f.detail.contains("heartbeat"), "{}", f.detail);
    // Streams cut at scattered times: nothing.
    let scattered: Vec<Entry> = [3_000.0, 9_000.0, 15_000.0, 21_000.0]
        .into_iter()
        .enumerate()
        .map(|(i, ms)| cut_entry(i as u64, ms))
        .collect();
    let mut doc = Vec::new();
    har::write(&scattered, &mut doc).unwrap();
    replay::replay_har(&doc[..], Limits::default(), &mut |item| {
        if let Item::Verdict(v) = item {
            assert!(!v.has_violation("sse.idle_cut"), "{v:?}");
        }
    })
    .unwrap();
}
