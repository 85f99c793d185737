//! The floor for replaying a HAR file: one bare serde_json pass over it, from a `BufReader` (the
//! same 64 KiB buffer the HAR reader uses) into `IgnoredAny`. Compare with
//! `mcp-verdict replay FILE --format jsonl` (see `examples/gen_big_har.rs`).
//!
//! ```sh
//! /usr/bin/time -v target/release/examples/serde_pass out.har
//! ```

use std::fs::File;
use std::io::BufReader;

use serde::Deserialize;
use serde::de::IgnoredAny;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: serde_pass FILE.har");
        std::process::exit(2);
    };
    let reader = BufReader::with_capacity(1 << 16, File::open(&path)?);
    let mut de = serde_json::Deserializer::from_reader(reader);
    IgnoredAny::deserialize(&mut de)?;
    de.end()?;
    Ok(())
}
