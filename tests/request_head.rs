#![cfg(feature = "tools")]
//! The fault server's strict request reading against independent readings of the same bytes
//! (`httparse`, a by-hand framing check, `http::uri::Authority`), on requests built from a
//! grammar that favours the hostile cases: odd `Content-Length`s, duplicates, `Transfer-Encoding`,
//! Host variants; and on arbitrary bytes. `fuzz/fuzz_targets/request_head.rs` runs the same check.

use std::net::SocketAddr;

use mcp_verdict::faults::http::{differential, parse_head};
use proptest::prelude::*;

fn local() -> SocketAddr {
    "127.0.0.1:8787".parse().unwrap()
}

fn header_line() -> impl Strategy<Value = String> {
    prop_oneof![
        prop_oneof![
            Just("5"),
            Just("0"),
            Just("abc"),
            Just("-5"),
            Just("+5"),
            Just("5, 5"),
            Just(" 5"),
            Just("99999999999999999999999"),
            Just("4194304"),
            Just("4194305"),
        ]
        .prop_map(|v| format!("Content-Length: {v}")),
        prop_oneof![Just("chunked"), Just("gzip, chunked"), Just("identity")]
            .prop_map(|v| format!("Transfer-Encoding: {v}")),
        prop_oneof![
            Just("127.0.0.1:8787"),
            Just("localhost:8787"),
            Just("[::1]:8787"),
            Just("[::1]evil.example"),
            Just("127.0.0.1"),
            Just("127.0.0.1:80"),
            Just("evil.example:8787"),
            Just("127.0.0.1:8787:1"),
            Just("[::ffff:127.0.0.1]:8787"),
            Just(""),
        ]
        .prop_map(|v| format!("Host: {v}")),
        prop_oneof![
            Just("http://localhost:8787"),
            Just("null"),
            Just("http://evil")
        ]
        .prop_map(|v| format!("Origin: {v}")),
        "[A-Za-z-]{1,12}: [ -~]{0,20}",
        "[ -~]{0,30}",
    ]
}

fn request() -> impl Strategy<Value = Vec<u8>> {
    (
        prop_oneof![Just("POST"), Just("GET"), Just("DELETE"), Just("P OST")],
        prop_oneof![Just("/mcp"), Just("/mcp/sse-cut?x=1"), Just("*"), Just("")],
        prop_oneof![Just("HTTP/1.1"), Just("HTTP/1.0"), Just("HTTP/2.0")],
        prop::collection::vec(header_line(), 0..6),
        prop::collection::vec(any::<u8>(), 0..16),
        any::<bool>(),
    )
        .prop_map(|(method, path, version, headers, body, crlf)| {
            let eol = if crlf { "\r\n" } else { "\n" };
            let mut text = format!("{method} {path} {version}{eol}");
            for h in headers {
                text.push_str(&h);
                text.push_str(eol);
            }
            text.push_str(eol);
            let mut bytes = text.into_bytes();
            bytes.extend_from_slice(&body);
            bytes
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    #[test]
    fn strict_reading_agrees_with_independent_readings(bytes in request()) {
        differential(&bytes, local());
        differential(&bytes, "[::1]:8787".parse().unwrap());
    }

    #[test]
    fn arbitrary_bytes_never_panic_and_agree(bytes in prop::collection::vec(any::<u8>(), 0..200)) {
        differential(&bytes, local());
    }

    /// Reading is incremental: every proper prefix of an accepted head is "read more".
    #[test]
    fn prefixes_of_an_accepted_head_are_incomplete(bytes in request()) {
        if let Ok(Some(head)) = parse_head(&bytes, 64 * 1024, 4 << 20) {
            for cut in 0..head.head_len {
                let prefix = parse_head(&bytes[..cut], 64 * 1024, 4 << 20);
                prop_assert!(
                    matches!(prefix, Ok(None)) || prefix.is_err(),
                    "prefix {cut}: {prefix:?}"
                );
            }
        }
    }
}
