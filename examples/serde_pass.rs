//! The floor for replaying a HAR file: one bare serde_json pass over it into `IgnoredAny`.
//!
//! By default from a `BufReader` (the same 64 KiB buffer the HAR reader uses), as the replay
//! reads it. With `--slice` the whole file is read into memory first and parsed from the slice
//! (serde_json's faster `SliceRead`), to show what the reader-based pass costs; that mode holds
//! the whole file in memory. Compare with `mcp-verdict replay FILE --format jsonl` (see
//! `examples/gen_big_har.rs`).
//!
//! ```sh
//! /usr/bin/time -v target/release/examples/serde_pass out.har
//! /usr/bin/time -v target/release/examples/serde_pass out.har --slice
//! ```

use std::fs::File;
use std::io::BufReader;

use serde::Deserialize;
use serde::de::IgnoredAny;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let Some(path) = args.next() else {
        eprintln!("usage: serde_pass FILE.har [--slice]");
        std::process::exit(2);
    };
    if args.next().as_deref() == Some("--slice") {
        let bytes = std::fs::read(&path)?;
        let mut de = serde_json::Deserializer::from_slice(&bytes);
        IgnoredAny::deserialize(&mut de)?;
        de.end()?;
        return Ok(());
    }
    let reader = BufReader::with_capacity(1 << 16, File::open(&path)?);
    let mut de = serde_json::Deserializer::from_reader(reader);
    IgnoredAny::deserialize(&mut de)?;
    de.end()?;
    Ok(())
}
