//! The envelope's fast scan against serde_json: wherever the scan answers, serde_json accepts
//! the same text and reads the same envelope. The scan may defer (answer `None`) on anything;
//! on the messages servers actually send it must answer, or the fast path is dead code.

use super::scan::{object_into, object_reading_result};
use super::{Envelope, parse_object_serde, scan_object};
use crate::vocab::members::ResultMembers;
use proptest::prelude::*;

/// Whitespace as JSON allows it, sometimes none.
fn ws() -> impl Strategy<Value = String> {
    prop::sample::select(vec!["", "", "", " ", "\n", "\t ", "\r\n  "]).prop_map(str::to_owned)
}

fn string() -> impl Strategy<Value = String> {
    let pieces = prop::sample::select(vec![
        "a",
        "progress",
        "é",
        "😀",
        "\\n",
        "\\\"",
        "\\\\",
        "\\/",
        "\\u00e9",
        "\\ud83d\\ude00",
        "\\ud800",
        "\\uZZZZ",
        "\\x",
        "\u{1}",
        "\u{7f}",
        " ",
    ]);
    prop::collection::vec(pieces, 0..5).prop_map(|p| format!("\"{}\"", p.concat()))
}

fn number() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        "0",
        "-0",
        "1",
        "42",
        "-17",
        "3.25",
        "1e3",
        "1E+2",
        "2e-5",
        "-0.5e10",
        "01",
        "1.",
        ".5",
        "-",
        "1e",
        "1.5e+",
        "999999999999999999999999",
        "1e400",
        "0x10",
        "+1",
    ])
    .prop_map(str::to_owned)
}

fn value() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        prop::sample::select(vec!["null", "true", "false", "nul", "tru"]).prop_map(str::to_owned),
        number(),
        string(),
    ];
    leaf.prop_recursive(4, 24, 4, |inner| {
        prop_oneof![
            (
                prop::collection::vec((ws(), inner.clone(), ws()), 0..4),
                any::<bool>()
            )
                .prop_map(|(items, trailing)| {
                    let body: Vec<String> = items
                        .into_iter()
                        .map(|(a, v, b)| format!("{a}{v}{b}"))
                        .collect();
                    format!("[{}{}]", body.join(","), if trailing { "," } else { "" })
                }),
            prop::collection::vec((string(), ws(), inner), 0..4).prop_map(|members| {
                let body: Vec<String> = members
                    .into_iter()
                    .map(|(k, w, v)| format!("{k}{w}:{w}{v}"))
                    .collect();
                format!("{{{}}}", body.join(","))
            }),
        ]
    })
}

/// `params` as progress notifications carry it, with the usual mistakes.
fn params() -> impl Strategy<Value = String> {
    let member = prop_oneof![
        value().prop_map(|v| format!("\"progressToken\":{v}")),
        prop_oneof![number(), value()].prop_map(|v| format!("\"progress\":{v}")),
        number().prop_map(|v| format!("\"total\":{v}")),
        string().prop_map(|v| format!("\"message\":{v}")),
        value().prop_map(|v| format!("\"_meta\":{v}")),
        Just("\"progr\\u0065ss\":1".to_owned()),
    ];
    prop_oneof![
        prop::collection::vec(member, 0..5).prop_map(|m| format!("{{{}}}", m.join(","))),
        value(),
    ]
}

/// A `result` object: the members the result layer reads, plain and odd text blocks.
fn result() -> impl Strategy<Value = String> {
    let block = prop::sample::select(vec![
        r#"{"type":"text","text":"x"}"#,
        r#"{"type":"text","text":"x","other":[[{}]]}"#,
        r#"{"type":"image","data":"x"}"#,
        r#"{"type":"text","text":"x","_meta":{}}"#,
        r#"{"type":"text","type":"text","text":"x"}"#,
        r#"{"t\u0079pe":"text","text":"x"}"#,
        r#"{"type":"text","text":1}"#,
    ]);
    let content = prop::collection::vec(block, 0..3).prop_map(|b| format!("[{}]", b.join(",")));
    let member = prop_oneof![
        content.prop_map(|c| format!("\"content\":{c}")),
        value().prop_map(|v| format!("\"content\":{v}")),
        prop::sample::select(vec![
            "resultType",
            "isError",
            "structuredContent",
            "task",
            "_meta"
        ])
        .prop_flat_map(|k| value().prop_map(move |v| format!("\"{k}\":{v}"))),
        Just("\"isError\":false".to_owned()),
    ];
    prop::collection::vec(member, 0..4).prop_map(|m| format!("{{{}}}", m.join(",")))
}

fn message() -> impl Strategy<Value = String> {
    let key = prop::sample::select(vec![
        "jsonrpc",
        "id",
        "method",
        "params",
        "result",
        "error",
        "other",
        "j\\u0073onrpc",
        "",
    ]);
    let member = (
        key,
        ws(),
        prop_oneof![value(), params(), result(), Just("\"2.0\"".to_owned())],
    );
    // Often as the SDKs write it: compact `jsonrpc` first (the scan passes it by one compare).
    let sdk_lead = prop::sample::select(vec!["", r#""jsonrpc":"2.0""#]);
    (prop::collection::vec(member, 0..7), ws(), ws(), sdk_lead).prop_map(
        |(members, lead, trail, sdk_lead)| {
            let body: Vec<String> = (!sdk_lead.is_empty())
                .then(|| sdk_lead.to_owned())
                .into_iter()
                .chain(
                    members
                        .into_iter()
                        .map(|(k, w, v)| format!("{w}\"{k}\"{w}:{w}{v}{w}")),
                )
                .collect();
            let lead = if sdk_lead.is_empty() {
                lead
            } else {
                String::new()
            };
            format!("{lead}{{{}}}{trail}", body.join(","))
        },
    )
}

/// Agreement: where the scan answers, serde_json reads the same envelope; and the scan that
/// reads a result's members in passing answers exactly where the plain scan does, with the
/// same envelope, and members as [`ResultMembers::read`] of the result's text.
fn agree(text: &str) -> Result<(), TestCaseError> {
    let (mut plain, mut reading) = (Envelope::empty(text), Envelope::empty(text));
    let mut members = None;
    let answered = object_into(text, &mut plain);
    prop_assert_eq!(
        object_reading_result(text, &mut reading, Some(&mut members)),
        answered,
        "text: {}",
        text
    );
    if answered {
        prop_assert_eq!(reading, plain, "text: {}", text);
        if let Some(read) = members {
            let result = plain.result.map(|r| r.get());
            prop_assert!(result.is_some(), "members without a result: {}", text);
            prop_assert_eq!(
                read,
                ResultMembers::read(result.unwrap_or("")),
                "text: {}",
                text
            );
        }
    }
    if let Some(scanned) = scan_object(text) {
        match parse_object_serde(text) {
            Ok(env) => prop_assert_eq!(scanned, env, "text: {}", text),
            Err(e) => prop_assert!(
                false,
                "scan accepted what serde_json rejects ({:?}): {}",
                e,
                text
            ),
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4000))]

    #[test]
    fn scan_agrees_with_serde(text in message()) {
        agree(&text)?;
    }

    /// One character inserted, removed or replaced anywhere: mostly broken JSON.
    #[test]
    fn scan_agrees_with_serde_on_damaged_text(
        text in message(),
        at in any::<prop::sample::Index>(),
        how in 0..3u8,
        c in prop::sample::select(vec!['"', '\\', '{', '}', '[', ']', ',', ':', '0', '-', 'e', ' ', '\u{0}', 'é']),
    ) {
        let mut chars: Vec<char> = text.chars().collect();
        let i = at.index(chars.len() + 1);
        match how {
            0 => chars.insert(i, c),
            1 if i < chars.len() => {
                chars.remove(i);
            }
            _ if i < chars.len() => chars[i] = c,
            _ => chars.push(c),
        }
        agree(&chars.into_iter().collect::<String>())?;
    }
}

/// Nesting at serde_json's limit, in a result member and in a text block: the scan reading the
/// members counts depth as the plain scan does (answers at the same depths, and reads the
/// members where it answers).
#[test]
fn result_members_read_in_passing_keep_the_depth_limit() {
    let mut read = 0;
    for n in 120..=130 {
        let deep = format!("{}{}", "[".repeat(n), "]".repeat(n));
        for result in [
            format!(r#"{{"other":{deep}}}"#),
            format!(r#"{{"content":[{{"type":"text","text":"x","o":{deep}}}]}}"#),
            format!(r#"{{"content":{deep}}}"#),
        ] {
            let text = format!(r#"{{"jsonrpc":"2.0","id":1,"result":{result}}}"#);
            agree(&text).unwrap();
            let mut env = Envelope::empty(&text);
            let mut members = None;
            if object_reading_result(&text, &mut env, Some(&mut members)) && members.is_some() {
                read += 1;
            }
        }
    }
    assert!(read > 10, "{read}");
}

#[test]
fn scan_answers_for_what_servers_send() {
    let typical = [
        r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":3,"total":10,"message":"Indexed 3 of 10 files: src/é.rs…"}}"#,
        r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"a \"quoted\" line\nand more"}],"isError":false}}"#,
        r#"{"jsonrpc":"2.0","id":"req-7","error":{"code":-32602,"message":"Unknown tool: nope"}}"#,
        r#"{ "jsonrpc" : "2.0", "id" : 2, "method" : "sampling/createMessage", "params" : { "messages" : [ ] } }"#,
        r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t-1","progress":0.5,"_meta":{"x":[1,2,{"y":null}]}}}"#,
    ];
    for text in typical {
        let scanned = scan_object(text).unwrap_or_else(|| panic!("the scan deferred on {text}"));
        assert_eq!(Ok(scanned), parse_object_serde(text));
    }
}

#[test]
fn scan_defers_where_serde_decides() {
    for text in [
        r#"{"id":1,"id":2}"#, // repeated member: serde rejects it
        r#"{"jsonrpc":"2.0","params":{},"params":1}"#, // repeated params
        r#"{"j\u0073onrpc":"2.0"}"#, // escaped key
        r#"{"id":01}"#,       // leading zero
        r#"{"id":1,}"#,       // trailing comma
        "{\"method\":\"a\u{1}b\"}", // raw control character
        r#"{"a":1} x"#,       // trailing bytes
        r#"[{"id":1}]"#,      // a batch is not an object
        r#"{"jsonrpc":"2.0",}"#, // the SDKs' lead, then a trailing comma
        r#"{"jsonrpc":"2.0", }"#,
        r#"{"jsonrpc":"2.0","jsonrpc":"2.0","id":1,"result":{}}"#, // repeated after the lead
        r#"{"jsonrpc":"2.0","#,                                    // cut after the lead
    ] {
        assert_eq!(scan_object(text), None, "{text}");
    }
    let deep = format!("{{\"id\":{}1{}}}", "[".repeat(200), "]".repeat(200));
    assert_eq!(scan_object(&deep), None);
    assert!(
        parse_object_serde(&deep).is_ok(),
        "serde_json reads deep RawValues"
    );
}

/// `text_blocks` says "plain" only of an array serde_json reads as text blocks (other
/// members allowed, but not `_meta` or `annotations`), and reads it to its end: whether
/// the block is in the SDKs' order (the one-compare path) or not.
#[test]
fn text_blocks_are_told_as_serde_json_reads_them() {
    use super::scan::text_blocks;
    use serde_json::{Map, Value};
    let plain = [
        r#"[{"type":"text","text":"hi"}]"#,
        r#"[{"type":"text","text":"a\"}b"}]"#,
        r#"[{"type":"text","text":"hi" }]"#,
        r#"[ {"text":"x","type":"text"} , {"type":"text","text":""} ]"#,
        r#"[{"type":"text","text":"hi","x":1}]"#,
        r#"[]"#,
    ];
    let not_plain = [
        r#"[{"type":"text","text":"hi","type":"image"}]"#,
        r#"[{"type":"text","text":"hi","_meta":{}}]"#,
        r#"[{"type":"text","text":"hi",]"#,
        r#"[{"type":"text","text":"hi"}"#,
        r#"[{"type":"text","text":"hi"]"#,
        "[{\"type\":\"text\",\"text\":\"h\u{1}i\"}]",
        r#"[{"type":"text","text":1}]"#,
    ];
    let serde_plain = |text: &str| {
        serde_json::from_str::<Vec<Map<String, Value>>>(text).is_ok_and(|blocks| {
            blocks.iter().all(|b| {
                !b.contains_key("_meta")
                    && !b.contains_key("annotations")
                    && b.get("type").and_then(Value::as_str) == Some("text")
                    && b.get("text").is_some_and(Value::is_string)
            })
        })
    };
    for text in plain {
        assert!(serde_plain(text), "{text}");
        assert_eq!(text_blocks(text, 0, 1), Some(text.len()), "{text}");
    }
    for text in not_plain {
        assert!(!serde_plain(text), "{text}");
        assert_eq!(text_blocks(text, 0, 1), None, "{text}");
    }
}
