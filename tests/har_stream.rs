//! Differential test of the streamed HAR reader (`replay_har`, `replay_har_seekable`) against
//! the serde reader (`har::parse`, then `judge_entry_rows` per entry): on every capture in
//! `testdata/har/`, and on versions of them rewritten (keys sorted, text before encoding and
//! status, base64 bodies, escapes everywhere) and damaged (cut, bytes changed), both readers
//! must accept and refuse the same documents and give the same items, in the same order, up to
//! the point where they refuse.

use std::io::Cursor;
use std::path::{Path, PathBuf};

use base64::Engine;
use mcp_verdict::har;
use mcp_verdict::replay::{self, Item, judge_entry_rows};
use mcp_verdict::{Driver, Limits};
use serde_json::{Value, json};

fn cases() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/har");
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "har"))
        .collect();
    files.sort();
    files
}

/// The serde reader: parse whole, then judge each entry. `None` when the document is refused.
fn by_serde(bytes: &[u8]) -> Option<Vec<Item>> {
    let entries = har::parse(bytes).ok()?;
    let mut session = Driver::default();
    let mut items = Vec::new();
    for e in &entries {
        judge_entry_rows(&mut session, e, &mut std::iter::empty(), &mut |i| {
            items.push(i)
        });
    }
    Some(items)
}

/// Both streamed readers; they must agree with each other, items included on refusal.
fn by_stream(bytes: &[u8]) -> (Vec<Item>, bool) {
    let mut piped = Vec::new();
    let ok_piped = replay::replay_har(bytes, Limits::default(), &mut |i| piped.push(i)).is_ok();
    let mut seeked = Vec::new();
    let ok_seeked = replay::replay_har_seekable(Cursor::new(bytes), Limits::default(), &mut |i| {
        seeked.push(i)
    })
    .is_ok();
    assert_eq!(ok_piped, ok_seeked, "pipe and file disagree on acceptance");
    assert_eq!(piped, seeked, "pipe and file disagree on items");
    (piped, ok_piped)
}

fn check(label: &str, bytes: &[u8]) {
    let (streamed, ok) = by_stream(bytes);
    match by_serde(bytes) {
        Some(items) => {
            assert!(ok, "{label}: refused by the streamed reader only");
            assert_eq!(streamed, items, "{label}: different items");
        }
        None => {
            assert!(
                !ok,
                "{label}: refused by the serde reader only ({:?})",
                har::parse(bytes).err()
            );
            // What was delivered before the refusal is a prefix of what serde would judge
            // entry by entry; at least it must not be more entries than the document has.
        }
    }
}

/// Rewrites of one document that keep its meaning.
fn rewrites(doc: &Value) -> Vec<(String, Vec<u8>)> {
    let mut out = vec![
        // serde_json's Value sorts keys: `content` before `status`, `encoding` before `text`.
        ("sorted".to_owned(), serde_json::to_vec(doc).unwrap()),
        ("pretty".to_owned(), serde_json::to_vec_pretty(doc).unwrap()),
    ];
    // HAR order by hand: request, then status, headers, content with text last.
    let ordered = |text_first: bool, base64: bool, escape_all: bool| -> Vec<u8> {
        let mut s = String::from("{\"log\":{\"version\":\"1.2\",\"entries\":[");
        for (i, e) in doc["log"]["entries"].as_array().unwrap().iter().enumerate() {
            if i > 0 {
                s.push(',');
            }
            s.push('{');
            let mut first = true;
            let mut member = |k: &str, v: String| {
                if !first {
                    s.push(',');
                }
                first = false;
                s.push_str(&format!("{}:{v}", json!(k)));
            };
            member("request", e["request"].to_string());
            let r = &e["response"];
            if r.is_object() {
                let c = &r["content"];
                let text = c.get("text").and_then(Value::as_str);
                let (text, enc) = match (text, c.get("encoding").and_then(Value::as_str)) {
                    (Some(t), None) if base64 => (
                        Some(base64::engine::general_purpose::STANDARD.encode(t)),
                        Some("base64"),
                    ),
                    (t, enc) => (t.map(str::to_owned), enc),
                };
                let text_json = text.map(|t| {
                    if escape_all {
                        let mut j = String::from("\"");
                        for ch in t.chars() {
                            let mut buf = [0u16; 2];
                            for unit in ch.encode_utf16(&mut buf) {
                                j.push_str(&format!("\\u{unit:04x}"));
                            }
                        }
                        j.push('"');
                        j
                    } else {
                        json!(t).to_string()
                    }
                });
                let mut content = String::from("{\"size\":0");
                let enc_json = enc.map(|e| format!(",\"encoding\":{}", json!(e)));
                if !text_first {
                    content.push_str(enc_json.as_deref().unwrap_or(""));
                }
                if let Some(t) = &text_json {
                    content.push_str(&format!(",\"text\":{t}"));
                }
                if text_first {
                    content.push_str(enc_json.as_deref().unwrap_or(""));
                }
                content.push('}');
                let head = format!(
                    "\"status\":{},\"headers\":{}",
                    r.get("status").cloned().unwrap_or(json!(0)),
                    r.get("headers").cloned().unwrap_or(json!([]))
                );
                let body = if text_first {
                    format!("{{\"content\":{content},{head}}}")
                } else {
                    format!("{{{head},\"content\":{content}}}")
                };
                member("response", body);
            } else {
                member("response", r.to_string());
            }
            for k in ["_error", "_mcp_end", "time"] {
                if let Some(v) = e.get(k) {
                    member(k, v.to_string());
                }
            }
            s.push('}');
        }
        s.push_str("]}}");
        s.into_bytes()
    };
    for text_first in [false, true] {
        for base64 in [false, true] {
            for escape_all in [false, true] {
                out.push((
                    format!("ordered text_first={text_first} base64={base64} escape={escape_all}"),
                    ordered(text_first, base64, escape_all),
                ));
            }
        }
    }
    out
}

#[test]
fn streamed_reader_matches_serde_on_testdata_and_rewrites() {
    for path in cases() {
        let bytes = std::fs::read(&path).unwrap();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        check(&name, &bytes);
        let doc: Value = serde_json::from_slice(&bytes).unwrap();
        for (label, bytes) in rewrites(&doc) {
            if let Err(e) = har::parse(&bytes) {
                panic!("{name} {label}: the rewrite must stay valid: {e}");
            }
            check(&format!("{name} {label}"), &bytes);
        }
    }
}

#[test]
fn streamed_reader_matches_serde_on_damaged_captures() {
    let mut rng = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let noise: &[&[u8]] = &[
        b"\"",
        b"\\",
        b"\\u",
        b"\\ud800",
        b"\\udc00",
        b"\xff",
        b"\xc3",
        b",",
        b"}",
        b"]",
        b"{",
        b"null",
        b"0",
        b"1e400",
        b"-",
        b" ",
        b"\"text\":\"",
        b"\"status\":",
        b"\"encoding\":\"base64\",",
    ];
    for path in cases() {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let doc: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        for (label, bytes) in rewrites(&doc).into_iter().take(4) {
            for _ in 0..40 {
                let mut damaged = bytes.clone();
                let at = (next() as usize) % damaged.len();
                match next() % 3 {
                    0 => damaged.truncate(at),
                    1 => damaged[at] = (next() & 0xff) as u8,
                    _ => {
                        let n = noise[(next() as usize) % noise.len()];
                        damaged.splice(at..at, n.iter().copied());
                    }
                }
                check(&format!("{name} {label} damaged at {at}"), &damaged);
            }
        }
    }
}

#[test]
fn error_nesting_limit_is_serde_s() {
    for depth in 118..132 {
        let nested = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
        let doc = format!(
            r#"{{"log":{{"entries":[{{"request":{{"method":"GET","url":"http://x/"}},"_error":{nested}}}]}}}}"#
        );
        check(&format!("_error nested {depth}"), doc.as_bytes());
        let ignored = format!(
            r#"{{"log":{{"entries":[{{"request":{{"method":"GET"}},"cache":{nested}}}]}},"x":{nested}}}"#
        );
        check(&format!("ignored nested {depth}"), ignored.as_bytes());
    }
}

#[test]
fn a_pipe_refuses_an_out_of_order_body_over_its_hold_cap_and_a_file_does_not() {
    let body = format!(
        "data: {}\n\n",
        json!({"jsonrpc":"2.0","id":1,"result":{"content":[],"isError":false}})
    );
    let big = body.repeat((1 << 20) / body.len() + 1);
    let doc = json!({"log":{"entries":[{
        "request":{"method":"POST","url":"http://x/mcp","headers":[
            {"name":"Content-Type","value":"application/json"},
            {"name":"MCP-Protocol-Version","value":"2025-11-25"}],
            "postData":{"text":"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"x\"}}"}},
        "response":{"status":200,"headers":[{"name":"Content-Type","value":"text/event-stream"}],
                    "content":{"text": big}}}]}});
    // Sorted keys: `content` before `headers` and `status`.
    let bytes = serde_json::to_vec(&doc).unwrap();
    let limits = Limits {
        max_body_bytes: 1 << 16,
        ..Limits::default()
    };
    let mut items = Vec::new();
    let err = replay::replay_har(&bytes[..], limits, &mut |i| items.push(i)).unwrap_err();
    assert!(err.to_string().contains("pass the HAR as a file"), "{err}");
    let mut items = Vec::new();
    replay::replay_har_seekable(Cursor::new(&bytes), limits, &mut |i| items.push(i)).unwrap();
    let Item::Verdict(v) = &items[0] else {
        panic!("judged")
    };
    assert!(v.complete, "{v:?}");
}

/// `replay` of a directory on two threads prints what one thread prints, in input order, and
/// the exit code is the same.
#[test]
fn replay_of_a_directory_in_parallel_keeps_input_order() {
    let exe = env!("CARGO_BIN_EXE_mcp-verdict");
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/har");
    let run = |jobs: &str| {
        std::process::Command::new(exe)
            .args(["replay", "--format", "jsonl", "-j", jobs])
            .arg(&dir)
            .output()
            .unwrap()
    };
    let one = run("1");
    let two = run("2");
    assert_eq!(
        one.status.code(),
        Some(1),
        "the samples include broken exchanges"
    );
    assert_eq!(two.status.code(), one.status.code());
    assert_eq!(
        String::from_utf8_lossy(&two.stdout),
        String::from_utf8_lossy(&one.stdout)
    );
    // In input order: the files appear sorted by name.
    let files: Vec<String> = String::from_utf8_lossy(&one.stdout)
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["file"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    let mut sorted = files.clone();
    sorted.sort();
    assert_eq!(files, sorted);
}

#[test]
fn bom_and_duplicate_members_as_serde() {
    let entry = r#"{"request":{"method":"GET","url":"http://x/"}}"#;
    for doc in [
        format!("\u{feff}{{\"log\":{{\"entries\":[{entry}]}}}}"),
        format!("{{\"log\":{{\"entries\":[{entry}]}},\"log\":{{}}}}"),
        format!("{{\"log\":{{\"entries\":[{entry}],\"entries\":[]}}}}"),
        "\u{feff}\u{feff}{\"log\":{\"entries\":[]}}".to_owned(),
        r#"{"log":{"entries":[{"request":{"method":"GET"},"response":{"status":200,"content":{"text":"a","text":"b"}}}]}}"#.to_owned(),
    ] {
        check(&doc, doc.as_bytes());
    }
}
