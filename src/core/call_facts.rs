//! What the call grouping reads of a request message: the client it names, the fingerprint that
//! tells a re-sent call, the id a cancel names, whether it answers an input request, the task
//! it polls.
//!
//! A single message is read in one pass of the core's scan over its text, nothing of it built
//! as a tree: the grouping runs for every exchange the proxy forwards, and a tree of a
//! 2026-07-28 request (its `_meta` most of it) cost more than the rest of the grouping. A batch
//! row, or a text the scan leaves to serde_json (a key with an escape, a repeated member, an
//! object of many members), is read from serde_json's tree instead, with the same result: the
//! two readings are tested equal.
//!
//! The fingerprint is a hash of the method and of the params' values, without `_meta`, the
//! MRTR members and `progressToken`: equal JSON values hash equal however they are spelled
//! (member order, spacing, escapes, `1.0` and `1.00`); it is compared within one run only.

use std::hash::{DefaultHasher, Hasher};

use serde_json::Value;

use crate::jsonrpc::scan;
use crate::meta::Meta;
use crate::shapes::flat;
use crate::shapes::node::Json;
use crate::wire::META_CLIENT_INFO;

/// `params` members the fingerprint leaves out.
const LEFT_OUT: [&str; 4] = ["_meta", "inputResponses", "requestState", "progressToken"];

/// Members of one object the scan tells apart (to find a repeated one) before leaving the
/// object to serde_json.
const MEMBERS: usize = 16;

/// Nesting the scan reads (serde_json's own limit is 128).
const DEPTH: u32 = 100;

/// What the grouping reads of one request message.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct CallFacts {
    /// `params.clientInfo` (an `initialize`) as `name@version`.
    pub(crate) init_client: Option<String>,
    /// `params._meta["io.modelcontextprotocol/clientInfo"]` as `name@version`.
    pub(crate) meta_client: Option<String>,
    /// Method and params, hashed; `None` without a string `method`.
    pub(crate) fingerprint: Option<u64>,
    /// `params.requestId`, when not `null`.
    pub(crate) request_id: Option<Value>,
    /// `params` carries `inputResponses` or `requestState`.
    pub(crate) mrtr: bool,
    /// `params.taskId`, when a string.
    pub(crate) task_id: Option<String>,
}

impl CallFacts {
    /// The client the message names, as the grouping reports it: an `initialize`'s
    /// `clientInfo`, any other request's `_meta` client info.
    pub(crate) fn client(&self, method: Option<&str>) -> Option<&str> {
        match method {
            Some("initialize") => self.init_client.as_deref(),
            _ => self.meta_client.as_deref(),
        }
    }
}

/// The facts of the request in `body` (for a batch row, of the request at that position);
/// `None` when there is no such message.
///
/// `meta` is the request's `_meta` as the exchange's judging read it, when the caller has it:
/// where it is the body's own, its text is not walked again (the client info is where that
/// reading noted it; `_meta` is most of a 2026-07-28 request).
pub(crate) fn read(
    body: &[u8],
    batch_position: Option<u32>,
    meta: Option<&Meta>,
) -> Option<CallFacts> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return None;
    }
    if batch_position.is_none()
        && let Ok(text) = simdutf8::basic::from_utf8(body)
        && let Some(facts) = scanned(text, meta)
    {
        return Some(facts);
    }
    let value: Value = serde_json::from_slice(body).ok()?;
    let message = match (value, batch_position) {
        (Value::Array(items), Some(k)) => items
            .into_iter()
            .filter(|m| m.get("method").is_some() && m.get("id").is_some_and(|i| !i.is_null()))
            .nth(k as usize)?,
        (Value::Array(_), None) => return None,
        (value, _) => value,
    };
    Some(of_value(&message))
}

/// The facts of a message read by serde_json.
fn of_value(message: &Value) -> CallFacts {
    let params = message.get("params");
    let member = |key: &str| params.and_then(|p| p.get(key));
    CallFacts {
        init_client: member("clientInfo").and_then(client_of_value),
        meta_client: member("_meta")
            .and_then(|m| m.get(META_CLIENT_INFO))
            .and_then(client_of_value),
        fingerprint: message.get("method").and_then(Value::as_str).map(|method| {
            let params = match params {
                Some(Value::Object(p)) => object_hash(
                    p.iter()
                        .filter(|(k, _)| !LEFT_OUT.contains(&k.as_str()))
                        .map(|(k, v)| member_hash(k.as_bytes(), value_hash(v))),
                ),
                Some(other) => value_hash(other),
                None => value_hash(&Value::Null),
            };
            mix(string_hash(method.as_bytes()), params)
        }),
        request_id: member("requestId").filter(|id| !id.is_null()).cloned(),
        mrtr: member("inputResponses").is_some() || member("requestState").is_some(),
        task_id: member("taskId").and_then(Value::as_str).map(str::to_owned),
    }
}

/// `name@version` (or `name`) of a client info object.
fn client_of_value(info: &Value) -> Option<String> {
    let name = info.get("name")?.as_str()?;
    Some(client_name(
        name,
        info.get("version").and_then(Value::as_str),
    ))
}

/// `name@version`, or `name` alone (built without the formatting machinery: once per
/// exchange).
fn client_name(name: &str, version: Option<&str>) -> String {
    let mut s = String::with_capacity(name.len() + version.map_or(0, |v| v.len() + 1));
    s.push_str(name);
    if let Some(version) = version {
        s.push('@');
        s.push_str(version);
    }
    s
}

/// The facts of one message object read by the scan; `None` where it leaves the text to
/// serde_json.
fn scanned(text: &str, meta: Option<&Meta>) -> Option<CallFacts> {
    let b = text.as_bytes();
    let open = scan::ws(b, 0);
    if b.get(open) != Some(&b'{') {
        return None;
    }
    let mut facts = CallFacts::default();
    let (mut method, mut params_hash) = (None, None);
    // A repeated member (`?` on `replace`): serde_json's reading (the last one wins) decides.
    let end = scan::members(b, open, |key, at| {
        Some(match key {
            b"method" => {
                let end = scan::any(b, at, 1)?;
                method.replace((at, end)).is_none().then_some(end)?
            }
            // An object is read member by member where it lies (not walked once to find its
            // end, then again).
            b"params" => {
                let (hash, end) = match b[at] {
                    b'{' => params_of(text, at, meta, &mut facts)?,
                    _ => hash_at(text, at, 2)?,
                };
                params_hash.replace(hash).is_none().then_some(end)?
            }
            _ => scan::any(b, at, 1)?,
        })
    })?;
    if scan::ws(b, end) != b.len() {
        return None;
    }
    let params_hash = params_hash.unwrap_or_else(|| value_hash(&Value::Null));
    if let Some((at, end)) = method
        && b[at] == b'"'
    {
        let method = string_at(text, at, end)?;
        facts.fingerprint = Some(mix(string_hash(method.as_bytes()), params_hash));
    }
    Some(facts)
}

/// `params` (an object at `at`) into `facts`; the hash of its members but the left-out ones,
/// and where the object ends.
fn params_of(
    text: &str,
    at: usize,
    meta: Option<&Meta>,
    facts: &mut CallFacts,
) -> Option<(u64, usize)> {
    let b = text.as_bytes();
    let mut keys = Keys::default();
    let mut sum = 0u64;
    let end = scan::members(b, at, |key, at| {
        keys.add(key)?;
        let counted = !LEFT_OUT.iter().any(|l| l.as_bytes() == key);
        // `_meta` (left out of the hash) is read where it lies, its walk finding its end;
        // `clientInfo` (an `initialize`'s, once per session) is read for the client and then
        // hashed, two walks of a small object; any other member counted is hashed in the walk
        // that finds its end.
        let (hash, end) = match key {
            b"_meta" if b[at] == b'{' => {
                let (client, end) = match meta.and_then(|m| client_in_read_meta(text, at, m)) {
                    Some(read) => read?,
                    None => client_in_meta(text, at)?,
                };
                facts.meta_client = client;
                (None, end)
            }
            b"clientInfo" if b[at] == b'{' => {
                let (client, _) = client_at(text, at)?;
                facts.init_client = client;
                let (hash, end) = hash_at(text, at, 3)?;
                (Some(hash), end)
            }
            _ if counted => {
                let (hash, end) = hash_at(text, at, 3)?;
                (Some(hash), end)
            }
            _ => (None, scan::any(b, at, 2)?),
        };
        match key {
            b"requestId" if b[at] != b'n' => {
                facts.request_id = Some(flat::with_tree(&text[at..end], |t| {
                    t.to_value().into_owned()
                })?)
            }
            b"taskId" if b[at] == b'"' => facts.task_id = Some(string_at(text, at, end)?.into()),
            b"inputResponses" | b"requestState" => facts.mrtr = true,
            _ => {}
        }
        if counted {
            sum = sum.wrapping_add(member_hash(key, hash?));
        }
        Some(end)
    })?;
    Some((object_end(sum), end))
}

/// [`client_in_meta`] from the `_meta` the judging read, when it is the one at `at` (its text
/// starts there: a JSON object's text ends where it ends, so the object at `at` is that one):
/// `None` when it is not, `Some(None)` where the walk would have failed (a repeated or
/// unreadable client info member: serde_json decides).
fn client_in_read_meta(
    text: &str,
    at: usize,
    meta: &Meta,
) -> Option<Option<(Option<String>, usize)>> {
    let read = meta.text();
    if !text[at..].starts_with(read) {
        return None;
    }
    let end = at + read.len();
    Some(match meta.raw(META_CLIENT_INFO).ok()? {
        Some(info) if info.starts_with('{') => client_at(info, 0).map(|(c, _)| (c, end)),
        _ => Some((None, end)),
    })
}

/// The client info in a `_meta` object at `at` (`None` inside when it names none), and where
/// the object ends.
fn client_in_meta(text: &str, at: usize) -> Option<(Option<String>, usize)> {
    let b = text.as_bytes();
    let mut keys = Keys::default();
    let mut client = None;
    let end = scan::members(b, at, |key, at| {
        keys.add(key)?;
        match (key == META_CLIENT_INFO.as_bytes(), b[at]) {
            (true, b'{') => {
                let (info, end) = client_at(text, at)?;
                client = info;
                Some(end)
            }
            (true, _) => {
                client = None;
                scan::any(b, at, 3)
            }
            (false, _) => scan::any(b, at, 3),
        }
    })?;
    Some((client, end))
}

/// `name@version` of a client info object at `at` (`None` inside without a string `name`),
/// and where the object ends.
fn client_at(text: &str, at: usize) -> Option<(Option<String>, usize)> {
    let b = text.as_bytes();
    let mut keys = Keys::default();
    let (mut name, mut version) = (None, None);
    let end = scan::members(b, at, |key, at| {
        let end = scan::any(b, at, 4)?;
        keys.add(key)?;
        let slot = match key {
            b"name" => &mut name,
            b"version" => &mut version,
            _ => return Some(end),
        };
        *slot = match b[at] {
            b'"' => Some(string_at(text, at, end)?),
            _ => None,
        };
        Some(end)
    })?;
    Some((name.map(|name| client_name(&name, version.as_deref())), end))
}

/// The string at `at..end` (a scanned string), unescaped.
fn string_at(text: &str, at: usize, end: usize) -> Option<std::borrow::Cow<'_, str>> {
    scan::unescaped(&text[at..end])
}

/// The keys of one object read so far, to tell a repeated one (then serde_json decides which
/// counts) without allocating.
#[derive(Default)]
struct Keys<'t> {
    seen: [&'t [u8]; MEMBERS],
    len: usize,
}

impl<'t> Keys<'t> {
    /// Notes `key`; `None` for a repeated key, or past [`MEMBERS`].
    fn add(&mut self, key: &'t [u8]) -> Option<()> {
        let seen = &mut self.seen[..];
        if self.len == seen.len() || seen[..self.len].contains(&key) {
            return None;
        }
        seen[self.len] = key;
        self.len += 1;
        Some(())
    }
}

/// The hash of the JSON value at `at` of `text`, as [`value_hash`] of its tree, and where it
/// ends: one walk (finding a value's end first and hashing it after walked nested values once
/// per level).
fn hash_at(text: &str, at: usize, depth: u32) -> Option<(u64, usize)> {
    if depth > DEPTH {
        return None;
    }
    let b = text.as_bytes();
    match *b.get(at)? {
        b'{' => {
            let mut keys = Keys::default();
            let mut sum = 0u64;
            let end = scan::members(b, at, |key, at| {
                keys.add(key)?;
                let (hash, end) = hash_at(text, at, depth + 1)?;
                sum = sum.wrapping_add(member_hash(key, hash));
                Some(end)
            })?;
            Some((object_end(sum), end))
        }
        b'[' => {
            let mut h = ARRAY;
            let mut i = scan::ws(b, at + 1);
            if b.get(i) == Some(&b']') {
                return Some((h, i + 1));
            }
            loop {
                let (item, item_end) = hash_at(text, i, depth + 1)?;
                h = mix(h, item);
                i = scan::ws(b, item_end);
                match b.get(i) {
                    Some(b',') => i = scan::ws(b, i + 1),
                    Some(b']') => return Some((h, i + 1)),
                    _ => return None,
                }
            }
        }
        first => {
            let end = scan::any(b, at, depth)?;
            let hash = match first {
                b'"' => string_hash(string_at(text, at, end)?.as_bytes()),
                b't' => mix(BOOL, 1),
                b'f' => mix(BOOL, 0),
                b'n' => NULL,
                _ => number_hash(&flat::number(&text[at..end])?),
            };
            Some((hash, end))
        }
    }
}

/// The hash of a JSON value: [`hash_at`] of any text of it.
fn value_hash(v: &Value) -> u64 {
    match v {
        Value::Null => NULL,
        Value::Bool(b) => mix(BOOL, u64::from(*b)),
        Value::Number(n) => number_hash(n),
        Value::String(s) => string_hash(s.as_bytes()),
        Value::Array(items) => items.iter().fold(ARRAY, |h, i| mix(h, value_hash(i))),
        Value::Object(m) => object_hash(
            m.iter()
                .map(|(k, v)| member_hash(k.as_bytes(), value_hash(v))),
        ),
    }
}

/// Tags of the value kinds (their names' bytes), so that no two kinds hash alike by chance of
/// their contents.
const NULL: u64 = 0x6e75_6c6c;
const BOOL: u64 = 0x626f_6f6c;
const ARRAY: u64 = 0x0061_7272_6179;
const OBJECT: u64 = 0x6f62_6a65_6374;
const NUMBER: u64 = 0x6e75_6d62_6572;

/// An object's hash from its members' (their order does not count: a sum).
fn object_hash(members: impl Iterator<Item = u64>) -> u64 {
    object_end(members.fold(0u64, u64::wrapping_add))
}

fn object_end(sum: u64) -> u64 {
    mix(OBJECT, sum)
}

fn member_hash(key: &[u8], value: u64) -> u64 {
    mix(string_hash(key), value)
}

/// A number's hash by the value serde_json reads (`1.0` and `1.00` alike; `1` and `1.0` not,
/// as serde_json tells an integer from a float).
fn number_hash(n: &serde_json::Number) -> u64 {
    let (kind, bits) = match (n.as_u64(), n.as_i64(), n.as_f64()) {
        (Some(u), _, _) => (1, u),
        (None, Some(i), _) => (2, i as u64),
        (None, None, Some(f)) => (3, f.to_bits()),
        (None, None, None) => (4, 0),
    };
    mix(mix(NUMBER, kind), bits)
}

fn string_hash(s: &[u8]) -> u64 {
    let mut h = DefaultHasher::new();
    h.write(s);
    h.finish()
}

/// Two hashes into one, order-dependent (a multiply-xorshift of the pair).
fn mix(a: u64, b: u64) -> u64 {
    let x = (a.rotate_left(23) ^ b).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    x ^ (x >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::{Headers, Request};

    /// The scan's facts are serde_json's tree's, for texts the scan reads and texts it leaves
    /// to serde_json alike: clients, cancels, input, tasks, fingerprints.
    #[test]
    fn the_scan_reads_what_the_tree_holds() {
        let bodies = [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/clientCapabilities":{"x":[1,{"y":2}]},"io.modelcontextprotocol/clientInfo":{"name":"c","version":"2"},"io.modelcontextprotocol/protocolVersion":"2026-07-28","progressToken":3},"arguments":{"b":[1,2],"a":{"z":null}},"name":"pay"}}"#,
            r#"{"jsonrpc":"2.0","id":"i","method":"initialize","params":{"clientInfo":{"name":"old","version":"1"},"capabilities":{}}}"#,
            r#"{"jsonrpc":"2.0","id":"i","method":"initialize","params":{"clientInfo":{"name":"n\u00e9","version":7}}}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"a","inputResponses":{"k":{"action":"accept"}},"requestState":"s"}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"x"}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":null}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":{"a":[1]}}}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"tasks/get","params":{"taskId":"t-\"1","_meta":5}}"#,
            r#"{"jsonrpc":"2.0","id":4,"method":"x","params":[1,2]}"#,
            r#"{"jsonrpc":"2.0","id":4,"method":"x","params":"s"}"#,
            r#"{"jsonrpc":"2.0","id":4,"method":7,"params":{}}"#,
            r#"{"jsonrpc":"2.0","id":4,"method":"x"}"#,
            r#"{"id":5,"method":"m","method":"n","params":{"a":1},"params":{"b":2}}"#,
            r#"{"id":5,"method":"m","params":{"a":1,"a":2}}"#,
            r#"[{"jsonrpc":"2.0","method":"n"},{"jsonrpc":"2.0","id":2,"method":"ping","params":{"_meta":{"progressToken":1}}},{"id":3,"method":"tools/call","params":{"name":"z"}}]"#,
            r#"{"id":6,"method":"tools/call","par\u0061ms":{"n\u0061me":"a","_meta":{"progressToken":1}}}"#,
            r#" { "id" : 8 , "method" : "tools/call" , "params" : { "arguments" : { "n" : [ 1.50 , -2 , true , false , null , "\n" ] } } } "#,
            r#"{"id":9,"method":"tools/call","params":{"arguments":{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9,"j":10,"k":11,"l":12,"m":13,"n":14,"o":15,"p":16,"q":17}}}"#,
            r#"{"params":{"_meta":{"io.modelcontextprotocol/clientInfo":5}},"method":"tools/call","id":1}"#,
            r#"{"id":1,"method":"m","params":{"_meta":{"io.modelcontextprotocol/clientInfo":{"name":"a"},"io.modelcontextprotocol/clientInfo":{"name":"b"}}}}"#,
            r#"{"id":1,"method":"m","params":{"_meta":{"io.modelcontextprotocol/clientInfo":{"name":"a","version":"1","name":"b"}}}}"#,
            r#"{"id":1,"method":"initialize","params":{"clientInfo":{"name":"x"},"clientInfo":{"name":"y"}}}"#,
            r#"{"id":1,"method":"m","params":{"_meta":{"io.modelcontextprotocol/clientInfo":{"name":"a","version":"1"}},"x":1}} x"#,
            r#"{"id":1,"method":"m","params":{"_meta":{"io.modelcontextprotocol/clientInfo":{"name":"a",}}}}"#,
            r#"{"id":1,"method":"m","params":{"_meta":{"io.modelcontextprotocol/clientInfo":{"name":"a"},"x":{"y":[1]},"io.modelcontextprotocol/clientInfo":{"name":"b","version":"2"}}}}"#,
            r#"{"id":1,"method":"m","params":{"_meta":{"io.modelcontextprotocol/clientInfo":{"name":"n\u00e9","version":"1"},"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9,"j":10,"k":11,"l":12,"m":13,"n":14,"o":15,"p":16}}}"#,
            r#"{"id":1,"method":"m","params":{"_meta":{"io.modelcontextprotocol/clientInfo":{"name":"a","version":"1","name":"c"}},"name":"t"}}"#,
            r#"{"id":1,"method":"m","params":{"_meta":{"io.modelcontextprotocol/clientInfo":"a"}}}"#,
            r#"{"id":1,"method":"m","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"a","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}},"name":"t","arguments":{}}}"#,
            r#"{"id":1,"method":"m","params":{"clientInfo":{"name":["a"],"version":"1"},"_meta":{"io.modelcontextprotocol/clientInfo":{"version":"2"}}}}"#,
            r#"{"id":1,"params":{"name":"a"},"method":"tools/call","params":{"name":"a"}}"#,
            r#"{"id":1,"method":"tools/call","params":{"name":"a","arguments":{"x":[[1,[2,{"a":[],"b":{}}]],{},[ ],"s\"t"],"y":{"z":[true,false,null,-0.5e3]}}}}"#,
            r#"{"id":1,"method":"tools/call","params":{"name":"a","arguments":{"x":[1,]}}}"#,
            r#"{"id":1,"method":"tools/call","params":{"name":"a","arguments":{"x":{"a":1,"a":2}}}}"#,
            r#"{"id":1,"method":"tools/call","params":{"name":"a","arguments":{"x":tru}}}"#,
            "7",
            "[1,2]",
            "",
        ];
        for body in bodies {
            let whole: Option<Value> = serde_json::from_str(body).ok();
            for position in [None, Some(0), Some(1)] {
                let full = match (&whole, position) {
                    (Some(Value::Array(items)), Some(k)) => items
                        .iter()
                        .filter(|m| {
                            m.get("method").is_some() && m.get("id").is_some_and(|i| !i.is_null())
                        })
                        .nth(k as usize)
                        .cloned(),
                    (Some(Value::Array(_)), None) => None,
                    (value, _) => value.clone(),
                };
                let expected = full.as_ref().map(of_value);
                assert_eq!(
                    read(body.as_bytes(), position, None),
                    expected,
                    "{body} {position:?}"
                );
                // With the `_meta` the request's reading kept (the proxy's way): the same.
                let request = Request::new("POST", Headers::default(), body.as_bytes());
                let meta = request.params.as_ref().and_then(|p| p.meta.as_ref());
                assert_eq!(
                    read(body.as_bytes(), position, meta),
                    expected,
                    "{body} {position:?} with its read _meta"
                );
            }
        }
    }

    /// The `_meta` the request's reading kept is used where it is the body's own (not walked
    /// again), and only there.
    #[test]
    fn a_read_meta_is_used_only_where_it_lies() {
        let body = r#"{"id":1,"method":"m","params":{"name":"t","_meta":{"x":[1,{"y":2}],"io.modelcontextprotocol/clientInfo":{"name":"c","version":"2"}}}}"#;
        let request = Request::new("POST", Headers::default(), body.as_bytes());
        let meta = request
            .params
            .as_ref()
            .and_then(|p| p.meta.as_ref())
            .unwrap();
        let at = body.find(r#"{"x""#).unwrap();
        let end = at + meta.text().len();
        assert_eq!(
            client_in_read_meta(body, at, meta),
            Some(Some((Some("c@2".to_string()), end)))
        );
        assert_eq!(
            client_in_meta(body, at),
            Some((Some("c@2".to_string()), end))
        );
        // Another `_meta` (same start, other text) is not this one's.
        let other = Request::new(
            "POST",
            Headers::default(),
            br#"{"id":1,"method":"m","params":{"_meta":{"x":[1,{"y":3}]}}}"#,
        );
        let other = other.params.as_ref().and_then(|p| p.meta.as_ref()).unwrap();
        assert_eq!(client_in_read_meta(body, at, other), None);
    }

    /// Arguments nested past the scan's depth are read by serde_json (to its own limit), with
    /// the same facts as its tree.
    #[test]
    fn deep_arguments_are_left_to_serde_json() {
        for depth in [99, 100, 101, 126, 130] {
            let body = format!(
                r#"{{"id":1,"method":"tools/call","params":{{"name":"a","arguments":{}{}}}}}"#,
                "[".repeat(depth),
                "]".repeat(depth)
            );
            let tree: Option<Value> = serde_json::from_str(&body).ok();
            assert_eq!(
                read(body.as_bytes(), None, None),
                tree.as_ref().map(of_value),
                "depth {depth}"
            );
        }
    }

    /// Equal params hash equal however they are written; other params, methods or left-out
    /// members aside, do not.
    #[test]
    fn fingerprints_tell_params_not_their_spelling() {
        let print = |body: &str| read(body.as_bytes(), None, None).and_then(|f| f.fingerprint);
        let a = print(
            r#"{"id":1,"method":"tools/call","params":{"name":"pay","arguments":{"a":1,"b":[2,"x"]},"_meta":{"progressToken":"x"}}}"#,
        );
        for same in [
            r#"{"id":9,"method":"tools/call","params":{"arguments":{"b":[2,"x"],"a":1},"name":"pay","_meta":{"progressToken":"y"}}}"#,
            r#"{"id":9,"method":"tools/call","params":{"arguments":{"b":[2,"\u0078"],"a":1},"name":"p\u0061y"}}"#,
            r#"{ "params" : { "name" : "pay" , "arguments" : { "a" : 1 , "b" : [ 2 , "x" ] } } , "method" : "tools/call" }"#,
        ] {
            assert_eq!(a, print(same), "{same}");
        }
        for other in [
            r#"{"id":1,"method":"tools/call","params":{"name":"pay","arguments":{"a":2,"b":[2,"x"]}}}"#,
            r#"{"id":1,"method":"tools/call","params":{"name":"pay","arguments":{"a":1,"b":["x",2]}}}"#,
            r#"{"id":1,"method":"tools/call","params":{"name":"pay","arguments":{"a":1.0,"b":[2,"x"]}}}"#,
            r#"{"id":1,"method":"tools/call","params":{"name":"pay","arguments":{"a":1,"b":[2,"x"],"c":null}}}"#,
            r#"{"id":1,"method":"prompts/get","params":{"name":"pay","arguments":{"a":1,"b":[2,"x"]}}}"#,
        ] {
            assert_ne!(a, print(other), "{other}");
        }
        assert!(a.is_some());
    }
}
