//! The JSON-RPC envelope: what kind of message a payload is, and whether a response is a valid
//! answer to our request.
//!
//! Parsing borrows from the payload (`serde_json::value::RawValue`): the envelope is read without
//! building a tree, and `result` is only looked into by [`crate::tool_result`] for the few fields
//! that decide the verdict. Syntax is still validated in full, including trailing bytes.

use serde::{Deserialize, Deserializer};
use serde_json::Value;
use serde_json::value::RawValue;

use crate::rules::Rule;
use crate::vocab::codes::RATE_LIMITED;
// Vocabulary, defined in the leaf `vocab` and reachable here for the paths that name it so.
use crate::vocab::kinds::MessageKind as Kind;
use crate::vocab::members::ScannedMembers;

pub(crate) mod scan;
#[cfg(test)]
mod scan_tests;

/// A JSON value's text, borrowed from a payload whose syntax has been checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Raw<'a>(&'a str);

impl<'a> Raw<'a> {
    /// The value's JSON text.
    pub fn get(&self) -> &'a str {
        self.0
    }
}

impl<'a> From<&'a RawValue> for Raw<'a> {
    fn from(r: &'a RawValue) -> Self {
        Raw(r.get())
    }
}

/// Deserializes a field that is present (even as `null`) into `Some`.
pub(crate) fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(d).map(Some)
}

/// The members of `params` that the checks read, picked out while the envelope is parsed, so
/// that a `notifications/progress` (most of a long stream) is parsed once, not once for the
/// envelope and again for its params.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Params<'a> {
    /// `params` is an object, without a repeated `progressToken` or `progress` member and with
    /// a `progress` that is a number or null (else the progress checks do not apply).
    pub readable: bool,
    /// The raw `progressToken` member.
    pub progress_token: Option<Raw<'a>>,
    /// The `progress` member.
    pub progress: Option<f64>,
    /// The other members the progress schema names are as it asks: `total` a number and
    /// `message` a string, each at most once, and no `_meta` (whose shape varies by revision).
    /// With the members above, this lets a progress notification skip the full shape check.
    pub rest_plain: bool,
}

fn params<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Params<'de>>, D::Error> {
    d.deserialize_any(ParamsVisitor).map(Some)
}

struct ParamsVisitor;

impl<'de> serde::de::Visitor<'de> for ParamsVisitor {
    type Value = Params<'de>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Params<'de>, A::Error> {
        let mut reader = ParamsReader::new();
        while let Some(key) = map.next_key::<Key>()? {
            match key {
                Key::Other => {
                    map.next_value::<serde::de::IgnoredAny>()?;
                }
                key => reader.member(key, map.next_value::<&RawValue>()?.get()),
            }
        }
        Ok(reader.params)
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Params<'de>, A::Error> {
        while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {}
        Ok(Params::default())
    }

    scalars_give!(Params<'de>, Params::default());
}

/// Reads a `params` object member by member: the one reading behind both the serde visitor
/// and the fast scan.
struct ParamsReader<'a> {
    params: Params<'a>,
    token_seen: bool,
    progress_seen: bool,
    total_seen: bool,
    message_seen: bool,
}

impl<'a> ParamsReader<'a> {
    fn new() -> Self {
        ParamsReader {
            params: Params {
                readable: true,
                rest_plain: true,
                ..Params::default()
            },
            token_seen: false,
            progress_seen: false,
            total_seen: false,
            message_seen: false,
        }
    }

    /// Takes one member with its JSON text. A repeated `progressToken` or `progress`, or a
    /// `progress` that is neither a number nor null, makes the params unreadable.
    fn member(&mut self, key: Key, raw: &'a str) {
        let p = &mut self.params;
        match key {
            Key::ProgressToken => {
                p.readable &= !std::mem::replace(&mut self.token_seen, true);
                p.progress_token = Some(Raw(raw));
            }
            Key::Progress => {
                p.readable &= !std::mem::replace(&mut self.progress_seen, true);
                match raw {
                    "null" => p.progress = None,
                    // Valid JSON that reads as a float can only be a number.
                    n => match number(n) {
                        Some(v) => p.progress = Some(v),
                        None => p.readable = false,
                    },
                }
            }
            Key::Total => {
                let number = matches!(raw.as_bytes().first(), Some(b'-' | b'0'..=b'9'));
                p.rest_plain &= number && !std::mem::replace(&mut self.total_seen, true);
            }
            Key::Message => {
                let string = raw.starts_with('"');
                p.rest_plain &= string && !std::mem::replace(&mut self.message_seen, true);
            }
            Key::Meta => p.rest_plain = false,
            Key::Other => {}
        }
    }
}

/// A JSON number's text as `f64`, exactly as `str::parse` reads it. Progress values are
/// mostly small integers, which convert exactly without the general float parser: up to 15
/// digits, a value below 2^53 is an `f64` as it stands (a `-` gives the negated value, so `-0`
/// is `-0.0`, as the parser gives).
#[inline]
fn number(text: &str) -> Option<f64> {
    let (negative, digits) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    if digits.is_empty() || digits.len() > 15 {
        return text.parse().ok();
    }
    let mut n: u64 = 0;
    for &d in digits.as_bytes() {
        let d = d.wrapping_sub(b'0');
        if d > 9 {
            return text.parse().ok();
        }
        n = n * 10 + u64::from(d);
    }
    let v = n as f64;
    Some(if negative { -v } else { v })
}

/// A `params` key, told apart without allocating.
enum Key {
    ProgressToken,
    Progress,
    Total,
    Message,
    Meta,
    Other,
}

impl Key {
    fn of(key: &[u8]) -> Key {
        match key {
            b"progressToken" => Key::ProgressToken,
            b"progress" => Key::Progress,
            b"total" => Key::Total,
            b"message" => Key::Message,
            b"_meta" => Key::Meta,
            _ => Key::Other,
        }
    }
}

impl<'de> Deserialize<'de> for Key {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl serde::de::Visitor<'_> for KeyVisitor {
            type Value = Key;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an object key")
            }
            fn visit_str<E>(self, v: &str) -> Result<Key, E> {
                Ok(Key::of(v.as_bytes()))
            }
        }
        d.deserialize_str(KeyVisitor)
    }
}

#[derive(Deserialize)]
struct RawEnvelope<'a> {
    #[serde(borrow, default, deserialize_with = "present")]
    jsonrpc: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    id: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    method: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "params")]
    params: Option<Params<'a>>,
    #[serde(borrow, default, deserialize_with = "present")]
    result: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    error: Option<&'a RawValue>,
}

/// One JSON-RPC message, borrowed from its payload.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Envelope<'a> {
    /// The raw `jsonrpc` member.
    pub jsonrpc: Option<Raw<'a>>,
    /// The raw `id` member (`Some("null")` when present as null).
    pub id: Option<Raw<'a>>,
    /// The method, when it is a string.
    pub method: Option<&'a str>,
    /// The raw `method` member was present.
    pub has_method: bool,
    /// What the `params` member holds that the checks read (present when `params` is).
    pub params: Option<Params<'a>>,
    /// The raw `result` member.
    pub result: Option<Raw<'a>>,
    /// The raw `error` member.
    pub error: Option<Raw<'a>>,
    /// The whole message text.
    pub raw: &'a str,
}

impl<'a> Envelope<'a> {
    /// An envelope of `raw` with no members, which the fast scan fills.
    #[inline(always)]
    pub(crate) fn empty(raw: &'a str) -> Self {
        Envelope {
            jsonrpc: None,
            id: None,
            method: None,
            has_method: false,
            params: None,
            result: None,
            error: None,
            raw,
        }
    }

    /// The message kind.
    pub fn kind(&self) -> Kind {
        match (self.has_method, self.id.is_some()) {
            (true, true) => Kind::Request,
            (true, false) => Kind::Notification,
            (false, _) => Kind::Response,
        }
    }

    /// The id as a JSON value (`None` when absent).
    pub fn id_value(&self) -> Option<Value> {
        self.id.and_then(|r| serde_json::from_str(r.get()).ok())
    }

    /// Whether `id` equals `expected` in value and type.
    pub fn id_matches(&self, expected: &Value) -> bool {
        let raw = self.id.map_or("", |r| r.get());
        // The common ids compared as text, without building a `Value`: an unsigned integer,
        // a string without escapes.
        match expected {
            Value::Number(n) if !raw.is_empty() && raw.bytes().all(|c| c.is_ascii_digit()) => {
                if let (Ok(got), Some(want)) = (raw.parse::<u64>(), n.as_u64()) {
                    return got == want;
                }
            }
            Value::String(s) if raw.len() >= 2 && raw.starts_with('"') && !raw.contains('\\') => {
                return raw[1..raw.len() - 1] == *s;
            }
            _ => {}
        }
        self.id_value().as_ref() == Some(expected)
    }
}

/// Why a payload is not usable JSON. Display is the violation's detail: `empty body`, or
/// serde_json's wording with line and column.
#[derive(Debug)]
pub enum Malformed {
    /// Nothing but whitespace.
    Empty,
    /// The text ends inside a JSON value (a body cut short).
    Truncated(serde_json::Error),
    /// Not JSON: a syntax error, or bytes after the value.
    Syntax(serde_json::Error),
    /// JSON, but not readable as a message (duplicate members, a member of the wrong type).
    Shape(serde_json::Error),
}

impl std::fmt::Display for Malformed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Malformed::Empty => f.write_str("empty body"),
            Malformed::Truncated(e) | Malformed::Syntax(e) | Malformed::Shape(e) => e.fmt(f),
        }
    }
}

/// Same kind and same wording (serde_json's error has no equality of its own); for the
/// differential tests that compare the scan with serde_json.
impl PartialEq for Malformed {
    fn eq(&self, other: &Self) -> bool {
        std::mem::discriminant(self) == std::mem::discriminant(other)
            && self.to_string() == other.to_string()
    }
}

impl Eq for Malformed {}

impl std::error::Error for Malformed {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Malformed::Empty => None,
            Malformed::Truncated(e) | Malformed::Syntax(e) | Malformed::Shape(e) => Some(e),
        }
    }
}

/// A payload: one message, or a batch array (2025-03-26).
#[derive(Debug)]
pub enum Payload<'a> {
    /// A JSON object.
    Single(Envelope<'a>),
    /// A JSON array; each element is parsed separately (an element that is not an object is
    /// `Err`).
    Batch(Vec<Result<Envelope<'a>, Malformed>>),
    /// Valid JSON that is neither an object nor an array.
    NotAMessage,
}

/// Parses a payload. Validates the whole text (trailing bytes are an error).
#[inline]
pub fn parse_payload(text: &str) -> Result<Payload<'_>, Malformed> {
    let first = text.trim_start().as_bytes().first().copied();
    match first {
        None => Err(Malformed::Empty),
        Some(b'{') => parse_object(text).map(Payload::Single),
        Some(b'[') => {
            let items: Vec<&RawValue> = serde_json::from_str(text).map_err(describe)?;
            Ok(Payload::Batch(
                items.into_iter().map(|r| parse_object(r.get())).collect(),
            ))
        }
        Some(_) => {
            serde_json::from_str::<serde::de::IgnoredAny>(text).map_err(describe)?;
            Ok(Payload::NotAMessage)
        }
    }
}

/// The common payload, one message object the fast scan reads, filled into `env` (made by
/// [`Envelope::empty`] from `text`) where the caller keeps it; `false` sends the caller to
/// [`parse_payload`] (which also words any error). A `result` object's members are read in
/// the same pass, into `result` (see [`scan::object_reading_result`]): a judged reply's
/// result is not scanned twice.
#[inline(always)]
pub(crate) fn scan_single_reading_result<'a>(
    text: &'a str,
    env: &mut Envelope<'a>,
    result: &mut ScannedMembers<'a>,
) -> bool {
    scan::object_reading_result(text, env, Some(result))
}

#[inline]
fn parse_object(text: &str) -> Result<Envelope<'_>, Malformed> {
    let mut env = Envelope::empty(text);
    if scan::object_into(text, &mut env) {
        return Ok(env);
    }
    parse_object_serde(text)
}

/// The envelope by serde_json: the reference the fast scan agrees with, and the path for
/// whatever the scan leaves alone (it also words the syntax errors).
pub fn parse_object_serde(text: &str) -> Result<Envelope<'_>, Malformed> {
    let raw: RawEnvelope<'_> = serde_json::from_str(text).map_err(describe)?;
    let method = raw.method.and_then(|m| as_str(m.get()));
    Ok(Envelope {
        jsonrpc: raw.jsonrpc.map(Raw::from),
        id: raw.id.map(Raw::from),
        method,
        has_method: raw.method.is_some(),
        params: raw.params,
        result: raw.result.map(Raw::from),
        error: raw.error.map(Raw::from),
        raw: text,
    })
}

/// The envelope by the fast scan alone (`None` where it defers to serde_json), for the
/// differential tests and the fuzz targets.
#[cfg(any(test, feature = "fuzzing"))]
pub fn scan_object(text: &str) -> Option<Envelope<'_>> {
    scan::object(text)
}

fn describe(e: serde_json::Error) -> Malformed {
    use serde_json::error::Category;
    match e.classify() {
        Category::Eof => Malformed::Truncated(e),
        Category::Syntax | Category::Io => Malformed::Syntax(e),
        Category::Data => Malformed::Shape(e),
    }
}

/// A raw JSON string's value, if it is a string without escapes (the common case) or with them.
pub(crate) fn as_str(s: &str) -> Option<&str> {
    let inner = s.strip_prefix('"')?.strip_suffix('"')?;
    if inner.contains('\\') {
        None
    } else {
        Some(inner)
    }
}

/// A raw value as an owned string (handles escapes).
pub(crate) fn to_string(raw: &str) -> Option<String> {
    serde_json::from_str::<String>(raw).ok()
}

/// The envelope checks on a response that is our terminal answer.
#[derive(Debug, Clone)]
pub enum EnvelopeCheck<'a> {
    /// Broken envelope: the outcome is `INVALID_ENVELOPE` with this rule and detail.
    Invalid(Rule, String),
    /// A valid error response.
    Error(ErrorReply),
    /// A valid result response; the result still needs judging.
    Result(Raw<'a>),
}

/// Checks `jsonrpc`, result/error exclusivity and the error object. The id is checked by the
/// caller, which knows whether a mismatch means "invalid" (JSON body) or "foreign" (SSE).
pub fn check_response<'a>(env: &Envelope<'a>) -> EnvelopeCheck<'a> {
    let version_ok = env.jsonrpc.map(|v| v.get() == "\"2.0\"").unwrap_or(false);
    if !version_ok {
        let seen = env.jsonrpc.map(|v| v.get()).unwrap_or("absent");
        return EnvelopeCheck::Invalid(Rule::JsonrpcVersion, format!("jsonrpc is {seen}"));
    }
    match (env.result, env.error) {
        (Some(_), Some(_)) => EnvelopeCheck::Invalid(
            Rule::JsonrpcResultAndError,
            "response has both result and error".into(),
        ),
        (None, None) => EnvelopeCheck::Invalid(
            Rule::JsonrpcResultAndError,
            "response has neither result nor error".into(),
        ),
        (Some(result), None) => EnvelopeCheck::Result(result),
        (None, Some(error)) => check_error(error),
    }
}

/// What a valid error object says.
#[derive(Debug, Clone, PartialEq)]
pub struct ErrorReply {
    /// The error code.
    pub code: i64,
    /// The error message.
    pub message: String,
    /// A RateLimited error's `data.retryAfterMs` ([`crate::wire::DATA_RETRY_AFTER_MS`]),
    /// rounded up to whole milliseconds: read for that code only, where it is defined.
    pub retry_after_ms: Option<u64>,
}

#[derive(Deserialize)]
struct RawError<'a> {
    #[serde(borrow, default, deserialize_with = "present")]
    code: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    message: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    data: Option<&'a RawValue>,
}

/// `data.retryAfterMs` of a RateLimited error: a number not below zero.
fn retry_after_ms(data: Option<&RawValue>) -> Option<u64> {
    let data: serde_json::Map<String, Value> = serde_json::from_str(data?.get()).ok()?;
    let ms = data.get(crate::wire::DATA_RETRY_AFTER_MS)?.as_f64()?;
    (ms.is_finite() && ms >= 0.0).then(|| ms.ceil().min(u64::MAX as f64) as u64)
}

fn check_error(error: Raw<'_>) -> EnvelopeCheck<'_> {
    let invalid = |d: &str| EnvelopeCheck::Invalid(Rule::JsonrpcErrorObject, d.to_owned());
    if !error.get().starts_with('{') {
        return invalid("error is not an object");
    }
    let Ok(raw) = serde_json::from_str::<RawError<'_>>(error.get()) else {
        return invalid("error object could not be read (duplicate keys?)");
    };
    let Some(code) = raw.code.and_then(|c| c.get().parse::<i64>().ok()) else {
        return invalid("error.code is missing or not an integer");
    };
    let Some(message) = raw.message.and_then(|m| to_string(m.get())) else {
        return invalid("error.message is missing or not a string");
    };
    let retry_after_ms = if code == RATE_LIMITED {
        retry_after_ms(raw.data)
    } else {
        None
    };
    EnvelopeCheck::Error(ErrorReply {
        code,
        message,
        retry_after_ms,
    })
}

/// Reads `code` and `message` from any body that looks like a JSON-RPC error response, whatever
/// its id: HTTP error bodies and id-less errors carry them this way.
pub fn error_of(body: &str) -> Option<ErrorReply> {
    let Ok(Payload::Single(env)) = parse_payload(body) else {
        return None;
    };
    match check_error(env.error?) {
        EnvelopeCheck::Error(reply) => Some(reply),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn malformed_says_which_kind() {
        assert!(matches!(parse_payload("  "), Err(Malformed::Empty)));
        assert!(matches!(
            parse_payload(r#"{"jsonrpc":"2.0""#),
            Err(Malformed::Truncated(_))
        ));
        assert!(matches!(parse_payload("{} x"), Err(Malformed::Syntax(_))));
        let dup = parse_payload(r#"{"jsonrpc":"2.0","id":1,"id":2}"#);
        assert!(matches!(dup, Err(Malformed::Shape(_))), "{dup:?}");
        assert_eq!(parse_payload("").unwrap_err().to_string(), "empty body");
    }

    fn single(text: &str) -> Envelope<'_> {
        match parse_payload(text).unwrap() {
            Payload::Single(e) => e,
            other => panic!("not single: {other:?}"),
        }
    }

    #[test]
    fn null_members_are_present() {
        let e = single(r#"{"jsonrpc":"2.0","id":null,"result":null}"#);
        assert!(e.id.is_some());
        assert!(matches!(check_response(&e), EnvelopeCheck::Result(_)));
    }

    #[test]
    fn trailing_bytes_and_empty_are_malformed() {
        assert!(parse_payload(r#"{"a":1} x"#).is_err());
        assert!(parse_payload("  ").is_err());
        assert!(parse_payload("{} \n").is_ok());
    }

    #[test]
    fn id_type_matters() {
        let e = single(r#"{"jsonrpc":"2.0","id":"1","result":{}}"#);
        assert!(!e.id_matches(&Value::from(1)));
        assert!(e.id_matches(&Value::from("1")));
        // The text comparison agrees with the `Value` one on every pair.
        let ids = [
            "1",
            "0",
            "18446744073709551615",
            "18446744073709551616",
            "1.0",
            "-1",
            "1e2",
            "\"1\"",
            "\"a\"",
            "\"\"",
            "\"a\\u0062\"",
            "\"ab\"",
            "null",
            "true",
            "[1]",
            "{}",
        ];
        for raw in ids {
            let text = format!(r#"{{"jsonrpc":"2.0","id":{raw},"result":{{}}}}"#);
            let e = single(&text);
            for other in ids {
                let want: Value = serde_json::from_str(other).unwrap();
                let by_value = e.id_value().as_ref() == Some(&want);
                assert_eq!(e.id_matches(&want), by_value, "{raw} vs {other}");
            }
        }
    }

    #[test]
    fn error_object_is_checked() {
        let e = single(r#"{"jsonrpc":"2.0","id":1,"error":{"code":"x","message":"m"}}"#);
        assert!(matches!(
            check_response(&e),
            EnvelopeCheck::Invalid(Rule::JsonrpcErrorObject, _)
        ));
        let e = single(r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"bad"}}"#);
        assert!(matches!(
            check_response(&e),
            EnvelopeCheck::Error(ErrorReply { code: -32602, ref message, retry_after_ms: None })
                if message == "bad"
        ));
    }

    /// `data.retryAfterMs` is read for RateLimited only, as a number of milliseconds.
    #[test]
    fn rate_limited_data_gives_the_delay() {
        let delay = |code: i64, data: &str| {
            let text = format!(
                r#"{{"jsonrpc":"2.0","id":1,"error":{{"code":{code},"message":"m","data":{data}}}}}"#
            );
            match check_response(&single(&text)) {
                EnvelopeCheck::Error(reply) => reply.retry_after_ms,
                other => panic!("{other:?}"),
            }
        };
        assert_eq!(delay(-32023, r#"{"retryAfterMs":1500}"#), Some(1500));
        assert_eq!(delay(-32023, r#"{"retryAfterMs":2.5,"limit":10}"#), Some(3));
        assert_eq!(delay(-32023, r#"{"retryAfterMs":-1}"#), None);
        assert_eq!(delay(-32023, r#"{"retryAfterMs":"5"}"#), None);
        assert_eq!(delay(-32023, r#"{"retry_after_ms":5}"#), None);
        assert_eq!(delay(-32023, "[1]"), None);
        assert_eq!(delay(-32603, r#"{"retryAfterMs":1500}"#), None);
        let body = r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32023,"message":"slow down","data":{"retryAfterMs":250}}}"#;
        assert_eq!(error_of(body).and_then(|r| r.retry_after_ms), Some(250));
    }

    /// The integer shortcut reads every number as the float parser does, bit for bit (or
    /// refuses it as the parser does).
    #[test]
    fn number_reads_as_the_float_parser() {
        // Comma-separated; one is empty.
        let edges = "0,-0,1,-1,42,007,999999999999999,-999999999999999,9999999999999999,\
                     9007199254740993,18446744073709551616,1.5,-0.0,1e3,2E-2,,-,1x,x,+1,null,1 ,\u{663}";
        let mut texts: Vec<String> = edges.split(',').map(str::to_owned).collect();
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..20_000 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let digits = (seed % 20) as usize + 1;
            let n = format!("{:020}", seed >> 1);
            let sign = if seed & 1 == 1 { "-" } else { "" };
            texts.push(format!("{sign}{}", &n[20 - digits..]));
        }
        for text in &texts {
            let want = text.parse::<f64>().ok().map(f64::to_bits);
            assert_eq!(number(text).map(f64::to_bits), want, "{text:?}");
        }
    }

    #[test]
    fn kinds() {
        assert_eq!(single(r#"{"method":"x","id":1}"#).kind(), Kind::Request);
        assert_eq!(single(r#"{"method":"x"}"#).kind(), Kind::Notification);
        assert_eq!(single(r#"{"id":1,"result":{}}"#).kind(), Kind::Response);
    }
}
