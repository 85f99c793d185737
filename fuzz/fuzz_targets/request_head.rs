//! The fault server's request reading (`serve-faults`) on arbitrary bytes: never panics, and
//! where it accepts a head, independent readings of the same bytes agree with it (`httparse` on
//! the request line and headers, a by-hand framing check, `http::uri::Authority` on the Host it
//! accepted). See `mcp_verdict::faults::http::differential`.
//!
//! Input layout: byte 0 picks the address the connection arrived on (bit 0: IPv6 loopback,
//! bit 1: a LAN address, as when listening on 0.0.0.0); the rest is the request.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_verdict::faults::http::differential;

fuzz_target!(|input: &[u8]| {
    let Some((&pick, request)) = input.split_first() else {
        return;
    };
    let local = match pick & 3 {
        0 => "127.0.0.1:8787",
        1 => "[::1]:8787",
        _ => "192.168.1.5:80",
    };
    differential(request, local.parse().expect("a socket address"));
});
