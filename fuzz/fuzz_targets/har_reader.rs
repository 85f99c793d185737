//! The HAR readers on arbitrary bytes: never panic; the streamed reader (`replay_har`, bodies
//! decoded piece by piece into the core) accepts exactly what the serde reader (`har::parse`)
//! accepts and gives the verdicts that parsing first and judging each entry gives, whole and in
//! small chunks.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_verdict::replay::{self, Item};
use mcp_verdict::{Limits, Driver, har};

fuzz_target!(|input: &[u8]| {
    let parsed = har::parse(input);
    let mut streamed = Vec::new();
    let replayed = replay::replay_har(input, Limits::default(), &mut |item| streamed.push(item));
    let Ok(entries) = parsed else {
        // The streaming reader fails too, after delivering the entries before the problem.
        assert!(replayed.is_err());
        return;
    };
    assert!(replayed.is_ok());
    let mut whole = Driver::default();
    let mut chunked = Driver::default();
    let mut judged: Vec<Item> = Vec::new();
    for entry in &entries {
        let a = replay::judge_entry(&mut whole, entry, &mut std::iter::empty());
        let b = replay::judge_entry(
            &mut chunked,
            entry,
            &mut [1usize, 7, 2, 64].into_iter().cycle(),
        );
        assert_eq!(a, b);
        judged.push(a);
    }
    assert_eq!(judged, streamed);
});
