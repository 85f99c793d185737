//! Writes a large, realistic HAR capture of one MCP session, streaming: memory stays bounded by
//! one entry whatever the requested size.
//!
//! ```sh
//! cargo run --release --example gen_big_har -- out.har 1024     # ~1 GiB
//! /usr/bin/time -v target/release/mcp-verdict replay out.har --format jsonl > /dev/null
//! /usr/bin/time -v target/release/examples/serde_pass out.har   # bare serde_json pass
//! ```
//!
//! The capture is the one `benches/support/gen_har.rs` describes (the `replay` bench writes the
//! same one).

#[path = "../benches/support/gen_har.rs"]
mod gen_har;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let (Some(path), Some(mib)) = (args.next(), args.next()) else {
        eprintln!("usage: gen_big_har OUT.har SIZE_MIB");
        std::process::exit(2);
    };
    let w = gen_har::write(path.as_ref(), mib.parse::<u64>()? << 20)?;
    eprintln!(
        "{path}: {} bytes, {} entries ({} tools/call, {} notifications)",
        w.bytes, w.entries, w.tool_calls, w.notifications
    );
    Ok(())
}
