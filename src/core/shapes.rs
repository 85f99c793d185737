//! Message shapes per revision: the required members of every request, result, error,
//! notification and server request of each MCP revision, with their JSON types, checked from a
//! compact table (`shapes/table.txt`, generated from the official JSON schemas by
//! `.ci/conformance/gen-shapes.mjs`).
//!
//! Not a JSON Schema engine: the table keeps only what the analyzer reports (required members,
//! JSON types, `const` and `enum` values, array items, references and unions) and the checker
//! walks only the members the table names. Formats, numeric and length bounds and
//! `additionalProperties` are left out (docs/conformance.md).
//!
//! Table format, one fact per line: `revision R` starts a revision; `request METHOD DEF RESULT`,
//! `notification METHOD DEF` and `error CODE DEF` say which definition a message is checked
//! against; `type NAME` starts a definition, followed by `is SPEC` and member lines
//! `! NAME SPEC` (required) or `? NAME SPEC` (optional), and `* SPEC` for the values of every
//! other member (a map). A SPEC is `*` (anything), JSON type
//! names joined by `|`, `@DEF`, `[SPEC]` (an array of), `=JSON` (a constant), `~[JSON,...]`
//! (one of), or alternatives of these joined by `|`.

use std::collections::HashMap;
use std::sync::OnceLock;

use serde_json::{Number, Value};

use crate::rules::Rule;
use crate::verdict::Violation;
use crate::version::ProtocolVersion;

mod fast;
pub(crate) mod flat;
pub(crate) mod node;

pub(crate) use fast::tool_result_conforms;

use node::Json;
pub(crate) use node::Node;

const TABLE: &str = include_str!("shapes/table.txt");

/// Nesting followed at most; deeper values are not checked.
const MAX_DEPTH: usize = 24;
/// Findings kept per message at most.
const MAX_FINDINGS: usize = 8;

/// JSON types as bits.
const OBJECT: u8 = 1;
const ARRAY: u8 = 2;
const STRING: u8 = 4;
const NUMBER: u8 = 8;
const INTEGER: u8 = 16;
const BOOLEAN: u8 = 32;
const NULL: u8 = 64;

#[derive(Debug)]
enum Spec {
    Any,
    Types(u8),
    /// A definition by name, as the table spells it; resolved to [`Spec::Def`] once the
    /// revision is read.
    Ref(&'static str),
    /// A definition by its index in [`Revision::defs`] (no lookup by name while checking).
    Def(usize),
    Array(Box<Spec>),
    Const(Value),
    Enum(Vec<Value>),
    Union(Vec<Spec>),
}

#[derive(Debug)]
struct Def {
    name: &'static str,
    is: Spec,
    members: Vec<(&'static str, bool, Spec)>,
    /// A map's values: the shape of every member not named above.
    rest: Option<Spec>,
}

/// One revision's table as read from the text: definitions by name.
#[derive(Debug, Default)]
struct Revision {
    requests: HashMap<&'static str, (&'static str, Option<&'static str>)>,
    notifications: HashMap<&'static str, &'static str>,
    errors: HashMap<i64, &'static str>,
    defs: HashMap<&'static str, Def>,
}

/// One revision's table as the walker reads it: definitions by index, every reference
/// resolved, and the lookups by method or code in sorted lists.
#[derive(Debug, Default)]
struct Shapes {
    /// Method → definition of the request, and of its result (if it has one).
    requests: Vec<(&'static str, (usize, Option<usize>))>,
    notifications: Vec<(&'static str, usize)>,
    errors: Vec<(i64, usize)>,
    defs: Vec<Def>,
    /// The envelopes (renamed in 2025-11-25) and the MRTR result, where the revision has them.
    request: Option<usize>,
    notification: Option<usize>,
    result_response: Option<usize>,
    error_response: Option<usize>,
    input_required: Option<usize>,
}

impl Shapes {
    fn from(rev: Revision) -> Self {
        let mut names: Vec<&'static str> = rev.defs.keys().copied().collect();
        names.sort_unstable();
        let index = |name: &str| names.binary_search(&name).ok();
        let mut defs: Vec<Option<Def>> = names.iter().map(|_| None).collect();
        for (name, mut def) in rev.defs {
            resolve(&mut def.is, &index);
            for (_, _, spec) in &mut def.members {
                resolve(spec, &index);
            }
            if let Some(rest) = &mut def.rest {
                resolve(rest, &index);
            }
            if let Some(i) = index(name) {
                defs[i] = Some(def);
            }
        }
        let pick = |names: [&str; 2]| index(names[0]).or_else(|| index(names[1]));
        Shapes {
            requests: sorted(
                rev.requests
                    .iter()
                    .filter_map(|(m, (d, r))| Some((*m, (index(d)?, r.and_then(&index)))))
                    .collect(),
            ),
            notifications: sorted(
                rev.notifications
                    .iter()
                    .filter_map(|(m, d)| Some((*m, index(d)?)))
                    .collect(),
            ),
            errors: sorted(
                rev.errors
                    .iter()
                    .filter_map(|(c, d)| Some((*c, index(d)?)))
                    .collect(),
            ),
            request: index("JSONRPCRequest"),
            notification: index("JSONRPCNotification"),
            result_response: pick(["JSONRPCResultResponse", "JSONRPCResponse"]),
            error_response: pick(["JSONRPCErrorResponse", "JSONRPCError"]),
            input_required: index("InputRequiredResult"),
            defs: defs.into_iter().flatten().collect(),
        }
    }

    fn request(&self, method: &str) -> Option<(usize, Option<usize>)> {
        let i = self
            .requests
            .binary_search_by(|(m, _)| (*m).cmp(method))
            .ok()?;
        Some(self.requests[i].1)
    }

    fn notification(&self, method: &str) -> Option<usize> {
        let i = self
            .notifications
            .binary_search_by(|(m, _)| (*m).cmp(method))
            .ok()?;
        Some(self.notifications[i].1)
    }

    fn error(&self, code: i64) -> Option<usize> {
        let i = self.errors.binary_search_by(|(c, _)| c.cmp(&code)).ok()?;
        Some(self.errors[i].1)
    }
}

/// `list` sorted by key, for binary searches.
fn sorted<K: Ord, V>(mut list: Vec<(K, V)>) -> Vec<(K, V)> {
    list.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    list
}

/// Turns every [`Spec::Ref`] in `spec` into a [`Spec::Def`]; a name the revision does not
/// define checks nothing, as before.
fn resolve(spec: &mut Spec, index: &impl Fn(&str) -> Option<usize>) {
    match spec {
        Spec::Ref(name) => *spec = index(name).map_or(Spec::Any, Spec::Def),
        Spec::Array(inner) => resolve(inner, index),
        Spec::Union(alts) => alts.iter_mut().for_each(|a| resolve(a, index)),
        _ => {}
    }
}

/// `name` as the fixed text of a method some revision defines (a request or notification).
pub(crate) fn method_name(name: &str) -> Option<&'static str> {
    // By length, then by the first eight bytes as one word: the text is compared once, with
    // the name it is (every request is looked up, and names of a length share prefixes).
    static BY_LENGTH: OnceLock<Vec<Vec<(u64, &'static str)>>> = OnceLock::new();
    let head = |m: &str| {
        let mut word = [0u8; 8];
        let n = m.len().min(8);
        word[..n].copy_from_slice(&m.as_bytes()[..n]);
        u64::from_le_bytes(word)
    };
    let by_length = BY_LENGTH.get_or_init(|| {
        let mut by_length: Vec<Vec<(u64, &'static str)>> = Vec::new();
        for rev in table() {
            let requests = rev.requests.iter().map(|(m, _)| *m);
            for m in requests.chain(rev.notifications.iter().map(|(m, _)| *m)) {
                if by_length.len() <= m.len() {
                    by_length.resize(m.len() + 1, Vec::new());
                }
                if !by_length[m.len()].iter().any(|(_, known)| *known == m) {
                    by_length[m.len()].push((head(m), m));
                }
            }
        }
        by_length
    });
    let bucket = by_length.get(name.len())?;
    let word = head(name);
    bucket
        .iter()
        .find(|(w, m)| *w == word && *m == name)
        .map(|(_, m)| *m)
}

/// The table of each revision, in [`ProtocolVersion::ALL`] order.
fn table() -> &'static [Shapes] {
    static PARSED: OnceLock<Vec<Shapes>> = OnceLock::new();
    PARSED.get_or_init(|| {
        let mut revisions = parse(TABLE);
        ProtocolVersion::ALL
            .iter()
            .map(|v| Shapes::from(revisions.remove(v.as_str()).unwrap_or_default()))
            .collect()
    })
}

/// `version`'s table.
fn shapes_of(version: ProtocolVersion) -> Option<&'static Shapes> {
    let i = ProtocolVersion::ALL.iter().position(|v| *v == version)?;
    table().get(i)
}

fn parse(text: &'static str) -> HashMap<&'static str, Revision> {
    let mut revisions = HashMap::new();
    let mut rev: Option<(&str, Revision)> = None;
    let mut def: Option<(&str, Def)> = None;
    let close = |rev: &mut Option<(&str, Revision)>, def: &mut Option<(&'static str, Def)>| {
        if let (Some((_, r)), Some((name, d))) = (rev.as_mut(), def.take()) {
            r.defs.insert(name, d);
        }
    };
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let mut words = line.trim_start().splitn(2, ' ');
        let (head, rest) = (words.next().unwrap_or(""), words.next().unwrap_or(""));
        let mut args = rest.split(' ');
        match head {
            "revision" => {
                close(&mut rev, &mut def);
                if let Some((name, r)) = rev.take() {
                    revisions.insert(name, r);
                }
                rev = Some((rest, Revision::default()));
            }
            "request" | "notification" | "error" => {
                let Some((_, r)) = rev.as_mut() else { continue };
                let (key, name) = (args.next().unwrap_or(""), args.next().unwrap_or(""));
                match head {
                    "request" => {
                        let result = args.next().filter(|r| *r != "-");
                        r.requests.insert(key, (name, result));
                    }
                    "notification" => {
                        r.notifications.insert(key, name);
                    }
                    _ => {
                        if let Ok(code) = key.parse() {
                            r.errors.insert(code, name);
                        }
                    }
                }
            }
            "type" => {
                close(&mut rev, &mut def);
                def = Some((
                    rest,
                    Def {
                        name: rest,
                        is: Spec::Any,
                        members: Vec::new(),
                        rest: None,
                    },
                ));
            }
            "is" => {
                if let Some((_, d)) = def.as_mut() {
                    d.is = spec(rest);
                }
            }
            "*" => {
                if let Some((_, d)) = def.as_mut() {
                    d.rest = Some(spec(rest));
                }
            }
            "!" | "?" => {
                if let Some((_, d)) = def.as_mut() {
                    let (name, s) = rest.split_once(' ').unwrap_or((rest, "*"));
                    d.members.push((name, head == "!", spec(s)));
                }
            }
            _ => {}
        }
    }
    close(&mut rev, &mut def);
    if let Some((name, r)) = rev {
        revisions.insert(name, r);
    }
    revisions
}

fn spec(text: &'static str) -> Spec {
    let alts = split_alternatives(text);
    if alts.len() > 1 {
        let mut types = 0;
        let mut others = Vec::new();
        for a in alts {
            match spec(a) {
                Spec::Types(t) => types |= t,
                other => others.push(other),
            }
        }
        if types != 0 {
            others.push(Spec::Types(types));
        }
        return if others.len() == 1 {
            others.pop().unwrap_or(Spec::Any)
        } else {
            Spec::Union(others)
        };
    }
    if let Some(json) = text.strip_prefix('=') {
        return serde_json::from_str(json).map_or(Spec::Any, Spec::Const);
    }
    if let Some(json) = text.strip_prefix('~') {
        return serde_json::from_str(json).map_or(Spec::Any, Spec::Enum);
    }
    if let Some(name) = text.strip_prefix('@') {
        return Spec::Ref(name);
    }
    if let Some(inner) = text.strip_prefix('[').and_then(|t| t.strip_suffix(']')) {
        return Spec::Array(Box::new(spec(inner)));
    }
    match text {
        "object" => Spec::Types(OBJECT),
        "array" => Spec::Types(ARRAY),
        "string" => Spec::Types(STRING),
        "number" => Spec::Types(NUMBER | INTEGER),
        "integer" => Spec::Types(INTEGER),
        "boolean" => Spec::Types(BOOLEAN),
        "null" => Spec::Types(NULL),
        _ => Spec::Any,
    }
}

/// Splits on `|` outside brackets and JSON strings.
fn split_alternatives(text: &str) -> Vec<&str> {
    let (mut out, mut depth, mut in_string, mut escaped, mut start) =
        (vec![], 0i32, false, false, 0);
    for (i, c) in text.char_indices() {
        if in_string {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => in_string = true,
            '[' => depth += 1,
            ']' => depth -= 1,
            '|' if depth == 0 => {
                out.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&text[start..]);
    out
}

fn type_bits(v: &Value) -> u8 {
    match v {
        Value::Object(_) => OBJECT,
        Value::Array(_) => ARRAY,
        Value::String(_) => STRING,
        Value::Number(n) => number_bits(n),
        Value::Bool(_) => BOOLEAN,
        Value::Null => NULL,
    }
}

fn number_bits(n: &Number) -> u8 {
    let whole = n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0);
    if whole { NUMBER | INTEGER } else { NUMBER }
}

/// [`type_bits`] of a value the walker reads.
fn json_bits<'a>(v: impl Json<'a>) -> u8 {
    if let Some(n) = v.as_number() {
        number_bits(n)
    } else if v.as_str().is_some() {
        STRING
    } else if v.is_object() {
        OBJECT
    } else if v.items().is_some() {
        ARRAY
    } else if v.as_bool().is_some() {
        BOOLEAN
    } else {
        NULL
    }
}

fn type_names(bits: u8) -> String {
    let names = [
        (OBJECT, "object"),
        (ARRAY, "array"),
        (STRING, "string"),
        (NUMBER, "number"),
        (INTEGER, "integer"),
        (BOOLEAN, "boolean"),
        (NULL, "null"),
    ];
    let mut list: Vec<&str> = names
        .iter()
        .filter(|(b, _)| bits & b != 0)
        .map(|(_, n)| *n)
        .collect();
    if list.contains(&"number") {
        list.retain(|n| *n != "integer");
    }
    list.join(" or ")
}

fn kind_of<'a>(v: impl Json<'a>) -> &'static str {
    match json_bits(v) {
        OBJECT => "an object",
        ARRAY => "an array",
        STRING => "a string",
        BOOLEAN => "a boolean",
        NULL => "null",
        _ => "a number",
    }
}

/// One problem found, before it becomes a [`Violation`].
struct Finding {
    rule: Rule,
    detail: String,
}

/// Where a value sits in the message, spelled out only when a finding names it: most messages
/// have none, and a path per member was most of a small exchange's allocations.
#[derive(Clone, Copy)]
enum Path<'p> {
    /// `""` for the message, `"result"` for a result.
    Root(&'static str),
    Member(&'p Path<'p>, &'p str),
    Item(&'p Path<'p>, usize),
}

impl std::fmt::Display for Path<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Path::Root(name) => f.write_str(name),
            Path::Member(Path::Root(""), member) => f.write_str(member),
            Path::Member(parent, member) => write!(f, "{parent}.{member}"),
            Path::Item(parent, i) => write!(f, "{parent}[{i}]"),
        }
    }
}

struct Walker<'t> {
    rev: &'t Shapes,
    found: Vec<Finding>,
    /// Only count findings (a union's alternatives are ranked by count; the details are
    /// written for the winner alone).
    count_only: bool,
    counted: usize,
}

impl<'t> Walker<'t> {
    fn new(rev: &'t Shapes, count_only: bool) -> Self {
        Walker {
            rev,
            found: Vec::new(),
            count_only,
            counted: 0,
        }
    }

    fn len(&self) -> usize {
        if self.count_only {
            self.counted
        } else {
            self.found.len()
        }
    }

    fn add(&mut self, rule: Rule, detail: impl FnOnce() -> String) {
        if self.len() < MAX_FINDINGS {
            if self.count_only {
                self.counted += 1;
            } else {
                self.found.push(Finding {
                    rule,
                    detail: detail(),
                });
            }
        }
    }

    fn wrong_type<'a>(&mut self, path: &Path<'_>, expected: u8, v: impl Json<'a>) {
        self.add(Rule::ShapeWrongType, || {
            format!(
                "{path}: must be {}, is {}",
                type_names(expected),
                kind_of(v)
            )
        });
    }

    fn check<'a, J: Json<'a>>(&mut self, spec: &Spec, v: J, path: &Path<'_>, depth: usize) {
        if depth > MAX_DEPTH {
            return;
        }
        match spec {
            Spec::Any => {}
            Spec::Types(bits) => {
                if json_bits(v) & bits == 0 {
                    self.wrong_type(path, *bits, v);
                }
            }
            Spec::Ref(_) => {}
            Spec::Def(def) => self.check_def(*def, v, path, depth + 1),
            Spec::Array(items) => match v.items() {
                Some(list) => {
                    for (i, item) in list.enumerate() {
                        self.check(items, item, &Path::Item(path, i), depth + 1);
                        if self.len() >= MAX_FINDINGS {
                            break;
                        }
                    }
                }
                None => self.wrong_type(path, ARRAY, v),
            },
            Spec::Const(c) => {
                if !same(c, v) {
                    if type_bits(c) & json_bits(v) == 0 {
                        self.wrong_type(path, type_bits(c), v);
                    } else {
                        self.add(Rule::ShapeBadValue, || {
                            format!("{path}: must be {c}, is {}", v.to_value())
                        });
                    }
                }
            }
            Spec::Enum(list) => {
                if !list.iter().any(|c| same(c, v)) {
                    let bits = list.iter().fold(0, |b, c| b | type_bits(c));
                    if bits & json_bits(v) == 0 {
                        self.wrong_type(path, bits, v);
                    } else {
                        self.add(Rule::ShapeBadValue, || {
                            let allowed: Vec<String> = list.iter().map(Value::to_string).collect();
                            format!(
                                "{path}: must be one of {}, is {}",
                                allowed.join(", "),
                                v.to_value()
                            )
                        });
                    }
                }
            }
            Spec::Union(alts) => self.check_union(alts, v, path, depth),
        }
    }

    /// The alternative with the fewest findings stands for the union (a content block with
    /// `type: "text"` is judged as text content); the first of equals wins.
    fn check_union<'a, J: Json<'a>>(&mut self, alts: &[Spec], v: J, path: &Path<'_>, depth: usize) {
        let mut best: Option<(&Spec, usize)> = None;
        for alt in alts {
            let mut w = Walker::new(self.rev, true);
            w.check(alt, v, path, depth + 1);
            if w.counted == 0 {
                return;
            }
            if best.is_none_or(|(_, n)| w.counted < n) {
                best = Some((alt, w.counted));
            }
        }
        let Some((alt, n)) = best else { return };
        if self.count_only {
            for _ in 0..n {
                self.add(Rule::ShapeWrongType, String::new);
            }
        } else {
            let mut w = Walker::new(self.rev, false);
            w.check(alt, v, path, depth + 1);
            for f in w.found {
                self.add(f.rule, || f.detail);
            }
        }
    }

    fn check_def<'a, J: Json<'a>>(&mut self, def: usize, v: J, path: &Path<'_>, depth: usize) {
        let Some(def) = self.rev.defs.get(def) else {
            return;
        };
        let name = def.name;
        self.check(&def.is, v, path, depth);
        if !v.is_object() {
            return;
        }
        for (member, required, spec) in &def.members {
            let at = Path::Member(path, member);
            match v.member(member) {
                Some(value) => self.check(spec, value, &at, depth + 1),
                None if *required => self.add(Rule::ShapeMissingMember, || {
                    format!("{at}: required by {name}, absent")
                }),
                None => {}
            }
        }
        if let Some(rest) = &def.rest {
            for (key, value) in v.sorted_members() {
                if !def.members.iter().any(|(m, _, _)| *m == key) {
                    self.check(rest, value, &Path::Member(path, key), depth + 1);
                }
                if self.len() >= MAX_FINDINGS {
                    break;
                }
            }
        }
    }
}

/// JSON equality where 1 and 1.0 are the same number.
fn same<'a>(a: &Value, b: impl Json<'a>) -> bool {
    match a {
        Value::Number(x) => b.as_number().is_some_and(|y| x.as_f64() == y.as_f64()),
        Value::String(x) => b.as_str() == Some(x.as_str()),
        Value::Bool(x) => b.as_bool() == Some(*x),
        Value::Null => b.is_null(),
        _ => *b.to_value() == *a,
    }
}

/// Checks one JSON-RPC message against `version`'s schema, in either direction: a request,
/// notification or server request by its method; an error by its code; a result by the method
/// of the request it answers (`request_method`). Returns the violations (rules
/// `shape.missing_member`, `shape.wrong_type`, `shape.bad_value`; at most a few per message).
pub fn check(
    version: ProtocolVersion,
    message: &Value,
    request_method: Option<&str>,
) -> Vec<Violation> {
    problems(version, message, request_method)
        .into_iter()
        .map(|(rule, detail)| Violation::new(rule, detail, None))
        .collect()
}

/// [`problems`] of a message's text: read into the reused flat list where it can be (no
/// allocation for a conforming message), else into a [`Node`] by serde_json. Text that is not
/// JSON has none.
pub(crate) fn problems_in(
    text: &str,
    version: ProtocolVersion,
    request_method: Option<&str>,
) -> Vec<(Rule, String)> {
    flat::with_tree(text, |tree| problems(version, tree, request_method)).unwrap_or_else(|| {
        Node::parse(text).map_or_else(Vec::new, |node| problems(version, &node, request_method))
    })
}

/// The shape problems of a plain call ([`PlainCall`](crate::vocab::kinds::PlainCall)) on
/// `version`, as the full check words them, where they are known without it: none on the 2025
/// revisions; on 2026-07-28, the missing `_meta` when it has none, none when it has the three
/// client members (with a `_meta` of `progressToken` only, the check reads it). `None`: check.
pub(crate) fn plain_call_problems(
    version: ProtocolVersion,
    call: crate::vocab::kinds::PlainCall,
) -> Option<&'static [(Rule, &'static str)]> {
    const NO_META: &[(Rule, &str)] = &[(
        Rule::ShapeMissingMember,
        "params._meta: required by CallToolRequestParams, absent",
    )];
    match version {
        _ if !call.plain => None,
        ProtocolVersion::V2025_03_26
        | ProtocolVersion::V2025_06_18
        | ProtocolVersion::V2025_11_25 => Some(&[]),
        ProtocolVersion::V2026_07_28 if !call.meta => Some(NO_META),
        ProtocolVersion::V2026_07_28 if call.client_meta => Some(&[]),
        ProtocolVersion::V2026_07_28 => None,
    }
}

/// [`check`] for the analyzer: the rule and the detail of each problem.
pub(crate) fn problems<'a, J: Json<'a>>(
    version: ProtocolVersion,
    message: J,
    request_method: Option<&str>,
) -> Vec<(Rule, String)> {
    let Some(rev) = shapes_of(version) else {
        return Vec::new();
    };
    let mut w = Walker::new(rev, false);
    if let Some(items) = message.items() {
        for item in items {
            for (rule, detail) in problems(version, item, request_method) {
                w.add(rule, || detail);
            }
        }
    } else if let Some(method) = message.member("method").and_then(J::as_str) {
        let def = match (rev.request(method), rev.notification(method)) {
            (Some((def, _)), _) => Some(def),
            (None, Some(def)) => Some(def),
            (None, None) if message.member("id").is_some() => rev.request,
            (None, None) => rev.notification,
        };
        if let Some(def) = def {
            w.check_def(def, message, &Path::Root(""), 0);
        }
    } else if let Some(error) = message.member("error").filter(|e| !e.is_null()) {
        let by_code = error
            .member("code")
            .and_then(J::as_number)
            .and_then(Number::as_i64)
            .and_then(|c| rev.error(c));
        if let Some(def) = by_code.or(rev.error_response) {
            w.check_def(def, message, &Path::Root(""), 0);
        }
    } else if let Some(result) = message.member("result") {
        let result_type = result.member("resultType").and_then(J::as_str);
        let def = match result_type {
            Some("input_required") if rev.input_required.is_some() => rev.input_required,
            Some("task") => None,
            _ => request_method
                .and_then(|m| rev.request(m))
                .and_then(|(_, r)| r),
        };
        if let Some(def) = def {
            w.check_def(def, result, &Path::Root("result"), 0);
        }
        if w.found.is_empty()
            && let Some(envelope) = rev.result_response
        {
            w.check_def(envelope, message, &Path::Root(""), 0);
        }
    } else {
        w.add(Rule::ShapeMissingMember, || {
            "neither method, result nor error: not a JSON-RPC message".into()
        });
    }
    w.found.into_iter().map(|f| (f.rule, f.detail)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const V25: ProtocolVersion = ProtocolVersion::V2025_11_25;
    const V26: ProtocolVersion = ProtocolVersion::V2026_07_28;

    fn rules(v: &[Violation]) -> Vec<&str> {
        v.iter().map(|v| v.rule.as_str()).collect()
    }

    /// Every method of every revision is found as itself, and a name that differs anywhere
    /// (a byte of the first eight, a later byte, the length, the case) is not.
    #[test]
    fn method_names_are_found_exactly() {
        let mut count = 0;
        for rev in table() {
            let requests = rev.requests.iter().map(|(m, _)| *m);
            for m in requests.chain(rev.notifications.iter().map(|(m, _)| *m)) {
                assert_eq!(method_name(m), Some(m));
                count += 1;
                for at in [0, m.len() / 2, m.len() - 1] {
                    let mut other = m.as_bytes().to_vec();
                    other[at] ^= 0x01;
                    let other = String::from_utf8(other).unwrap();
                    assert_eq!(method_name(&other), None, "{other}");
                }
                assert_eq!(method_name(&m.to_uppercase()), None);
                assert_eq!(method_name(&m[..m.len() - 1]), None);
                assert_eq!(method_name(&format!("{m}x")), None);
            }
        }
        assert!(count > 40);
        assert_eq!(method_name(""), None);
    }

    #[test]
    fn the_table_covers_every_revision() {
        for &v in ProtocolVersion::ALL {
            let rev = shapes_of(v).expect("revision in the table");
            assert!(rev.request("tools/call").is_some(), "{v}");
            assert_eq!(rev.request("ping").is_some(), !v.is_stateless(), "{v}");
            assert!(rev.notification("notifications/progress").is_some(), "{v}");
            assert!(rev.defs.len() > 80, "{v}: {} definitions", rev.defs.len());
            assert!(rev.result_response.is_some() && rev.error_response.is_some());
            // Every reference resolved to a definition of the same revision.
            let names: Vec<&str> = rev.defs.iter().map(|d| d.name).collect();
            assert!(names.windows(2).all(|w| w[0] < w[1]), "{v}: sorted, unique");
        }
        assert!(shapes_of(V26).unwrap().error(-32022).is_some());
        assert!(shapes_of(V25).unwrap().error(-32022).is_none());
    }

    #[test]
    fn a_2026_list_without_cache_members_is_reported() {
        let msg =
            json!({"jsonrpc": "2.0", "id": 1, "result": {"resultType": "complete", "tools": []}});
        let found = check(V26, &msg, Some("tools/list"));
        assert_eq!(
            rules(&found),
            ["shape.missing_member", "shape.missing_member"]
        );
        assert!(
            found[0].detail.contains("result.cacheScope"),
            "{}",
            found[0].detail
        );
        // The same result is fine under 2025-11-25, where those members do not exist.
        let msg = json!({"jsonrpc": "2.0", "id": 1, "result": {"tools": []}});
        assert!(check(V25, &msg, Some("tools/list")).is_empty());
    }

    #[test]
    fn wrong_types_and_values_deep_inside() {
        let msg = json!({"jsonrpc": "2.0", "id": 1, "result": {"tools": [
            {"name": "a", "inputSchema": {"type": "object"}},
            {"name": 7, "inputSchema": {"type": "array"}}]}});
        let found = check(V25, &msg, Some("tools/list"));
        assert_eq!(rules(&found), ["shape.bad_value", "shape.wrong_type"]);
        assert!(found[0].detail.contains("result.tools[1].inputSchema.type"));
        assert!(
            found[1]
                .detail
                .starts_with("result.tools[1].name: must be string, is a number")
        );
    }

    #[test]
    fn requests_notifications_and_server_requests() {
        let call =
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "x"}});
        assert!(check(V25, &call, None).is_empty());
        // 2026-07-28 requests carry _meta with the protocol version and capabilities.
        let found = check(V26, &call, None);
        assert_eq!(rules(&found), ["shape.missing_member"]);
        let progress = json!({"jsonrpc": "2.0", "method": "notifications/progress",
                              "params": {"progressToken": 1, "progress": "half"}});
        assert_eq!(rules(&check(V25, &progress, None)), ["shape.wrong_type"]);
        let sampling = json!({"jsonrpc": "2.0", "id": 3, "method": "sampling/createMessage",
                              "params": {"messages": []}});
        assert_eq!(
            rules(&check(V25, &sampling, None)),
            ["shape.missing_member"]
        );
    }

    #[test]
    fn content_blocks_are_judged_by_their_kind() {
        let ok = json!({"jsonrpc": "2.0", "id": 1, "result": {"content": [
            {"type": "text", "text": "hi"}, {"type": "image", "data": "AA==", "mimeType": "image/png"}]}});
        assert!(check(V25, &ok, Some("tools/call")).is_empty());
        let bad = json!({"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text"}]}});
        let found = check(V25, &bad, Some("tools/call"));
        assert_eq!(rules(&found), ["shape.missing_member"]);
        assert!(
            found[0].detail.contains("content[0].text"),
            "{}",
            found[0].detail
        );
    }

    /// Every value at every path of `v`, replaced by each of a few others.
    fn variants(v: &Value, out: &mut Vec<Value>) {
        let alternatives = [
            json!(1),
            json!(1.0),
            json!(-2.5),
            json!("text"),
            json!(null),
            json!(true),
            json!([]),
            json!({}),
            json!([{"type": "text"}]),
        ];
        let mut paths = Vec::new();
        fn collect(v: &Value, at: String, paths: &mut Vec<String>) {
            paths.push(at.clone());
            match v {
                Value::Object(m) => m
                    .iter()
                    .for_each(|(k, x)| collect(x, format!("{at}/{k}"), paths)),
                Value::Array(l) => l
                    .iter()
                    .enumerate()
                    .for_each(|(i, x)| collect(x, format!("{at}/{i}"), paths)),
                _ => {}
            }
        }
        collect(v, String::new(), &mut paths);
        for path in paths.iter().skip(1) {
            for alt in &alternatives {
                let mut copy = v.clone();
                *copy.pointer_mut(path).unwrap() = alt.clone();
                out.push(copy);
            }
        }
    }

    /// The walker reads a borrowed [`Node`] and the flat list (the analyzer's) exactly as the
    /// `Value` serde_json builds from the same text: same findings, same details, same order.
    #[test]
    fn borrowed_nodes_and_values_give_the_same_findings() {
        let bases = [
            (
                json!({"jsonrpc": "2.0", "id": 1, "result": {"content": [
                {"type": "text", "text": "hi"}, {"type": "image", "data": "AA==", "mimeType": "image/png"}],
                "isError": false, "structuredContent": {"a": 1}}}),
                Some("tools/call"),
            ),
            (
                json!({"jsonrpc": "2.0", "id": 1, "result": {"tools": [
                {"name": "a", "inputSchema": {"type": "object", "properties": {"x": {"type": "string"}}}}],
                "resultType": "complete", "cacheScope": "session", "_meta": {"k": 1}}}),
                Some("tools/list"),
            ),
            (
                json!({"jsonrpc": "2.0", "id": 2, "error": {"code": -32022, "message": "no", "data": {"x": 1}}}),
                None,
            ),
            (
                json!({"jsonrpc": "2.0", "method": "notifications/progress",
                    "params": {"progressToken": "t", "progress": 1, "total": 2, "message": "m", "_meta": {}}}),
                None,
            ),
            (
                json!({"jsonrpc": "2.0", "id": 3, "method": "sampling/createMessage",
                    "params": {"messages": [{"role": "user", "content": {"type": "text", "text": "q"}}], "maxTokens": 5}}),
                None,
            ),
            (
                json!([{"jsonrpc": "2.0", "id": 1, "result": {}}, {"jsonrpc": "2.0", "method": "x/y"}]),
                None,
            ),
        ];
        let (mut compared, mut flat_read) = (0, 0);
        for (base, method) in &bases {
            let mut texts: Vec<String> = Vec::new();
            let mut all = vec![base.clone()];
            variants(base, &mut all);
            for v in &all {
                let text = v.to_string();
                // Duplicate members: an earlier one is overridden, a later one wins.
                if let Some(rest) = text.strip_prefix('{') {
                    texts.push(format!(r#"{{"jsonrpc":1,"id":null,{rest}"#));
                    texts.push(format!(
                        r#"{}{},"jsonrpc":"1.0","result":7}}"#,
                        "",
                        &text[..text.len() - 1]
                    ));
                }
                texts.push(text);
            }
            // Escaped keys and strings take the owned path.
            texts.push(base.to_string().replace("\"jsonrpc\"", "\"json\\u0072pc\""));
            texts.push(base.to_string().replace("\"2.0\"", "\"2\\u002e0\""));
            for text in &texts {
                let value: Value = serde_json::from_str(text).unwrap();
                let node = Node::parse(text).unwrap();
                for &v in ProtocolVersion::ALL {
                    let expected = problems(v, &value, *method);
                    assert_eq!(problems(v, &node, *method), expected, "{v} {text}");
                    // The flat list, where it reads the text (escapes go to the `Node`).
                    if let Some(found) = flat::with_tree(text, |t| problems(v, t, *method)) {
                        assert_eq!(found, expected, "flat, {v} {text}");
                        flat_read += 1;
                    }
                    assert_eq!(problems_in(text, v, *method), expected, "{v} {text}");
                    compared += 1;
                }
            }
        }
        assert!(compared > 1000, "{compared}");
        assert!(flat_read * 10 > compared * 9, "{flat_read} of {compared}");
    }

    /// The fast path for tool results says "conforms" only where the full check finds
    /// nothing, over every combination of the members it reads (each right, wrong, absent,
    /// repeated or escaped), in every revision; and it does fire on the plain answers.
    #[test]
    fn the_tool_result_fast_path_never_hides_a_shape_finding() {
        use crate::jsonrpc::{Payload, parse_payload};
        use crate::vocab::members::ResultMembers;
        let jsonrpc = [
            r#""jsonrpc":"2.0","#,
            r#""jsonrpc":"1.0","#,
            "",
            r#""jsonrpc":"2\u002e0","#,
        ];
        let ids = [
            r#""id":1,"#,
            r#""id":"a","#,
            r#""id":-3,"#,
            r#""id":1.0,"#,
            r#""id":null,"#,
            "",
        ];
        let result_types = [
            "",
            r#""resultType":"complete","#,
            r#""resultType":"task","#,
            r#""resultType":"input_required","#,
            r#""resultType":1,"#,
        ];
        let is_error = ["", r#""isError":false,"#, r#""isError":"x","#];
        let extra = [
            "",
            r#""structuredContent":{},"#,
            r#""structuredContent":[1],"#,
            r#""_meta":{},"#,
            r#""_meta":1,"#,
            r#""other":1,"#,
        ];
        let text = r#"{"type":"text","text":"hi"}"#;
        let blocks = [
            text,
            r#"{"text":"hi","type":"text","x":[1]}"#,
            r#"{"type":"text"}"#,
            r#"{"type":"text","text":1}"#,
            r#"{"type":"image","text":"x"}"#,
            r#"{"type":"image","data":"AA==","mimeType":"image/png"}"#,
            r#"{"type":"text","text":"a","text":"b"}"#,
            r#"{"type":"text","type":"text","text":"a"}"#,
            r#"{"type":"text","text":"hi","_meta":{}}"#,
            r#"{"type":"text","text":"hi","annotations":{"priority":"x"}}"#,
            r#"{"t\u0079pe":"text","text":"hi"}"#,
            r#"{"type":"text","text":"a\"}b"}"#,
            r#"{"type":"text","text":"hi" }"#,
            r#"{"type":"text","text":"hi","type":"image"}"#,
            "1",
            "[]",
        ];
        let mut contents: Vec<String> = vec![
            String::new(),
            r#""content":[],"#.into(),
            r#""content":"x","#.into(),
        ];
        for block in blocks {
            contents.push(format!(r#""content":[{block}],"#));
            contents.push(format!(r#""content":[ {text} , {block} ],"#));
        }
        let (mut fast, mut checked) = (0, 0);
        for j in jsonrpc {
            for id in ids {
                for rt in result_types {
                    for e in is_error {
                        for x in extra {
                            for c in &contents {
                                let result = format!("{{{rt}{e}{x}{c}\"z\":0}}");
                                let text = format!(r#"{{{j}{id}"result":{result}}}"#);
                                let Ok(Payload::Single(env)) = parse_payload(&text) else {
                                    panic!("{text}");
                                };
                                let members = ResultMembers::read(env.result.unwrap().get());
                                for &v in ProtocolVersion::ALL {
                                    let says = members
                                        .as_ref()
                                        .is_some_and(|m| tool_result_conforms(v, &env, m));
                                    if says {
                                        let found = problems_in(&text, v, Some("tools/call"));
                                        assert!(found.is_empty(), "{v} {text}: {found:?}");
                                        fast += 1;
                                    }
                                    checked += 1;
                                }
                            }
                        }
                    }
                }
            }
        }
        assert!(checked > 50_000 && fast > 500, "{fast} of {checked}");
        for &v in ProtocolVersion::ALL {
            let plain = if v.is_stateless() {
                r#"{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[{"type":"text","text":"hi"}],"isError":false}}"#
            } else {
                r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hi"}],"isError":false}}"#
            };
            let Ok(Payload::Single(env)) = parse_payload(plain) else {
                panic!("{plain}");
            };
            let members = ResultMembers::read(env.result.unwrap().get()).unwrap();
            assert!(tool_result_conforms(v, &env, &members), "{v}");
        }
    }

    #[test]
    fn errors_by_code() {
        let ok = json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "no"}});
        assert!(check(V25, &ok, None).is_empty());
        let bare = json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32022, "message": "no"}});
        assert!(
            check(V25, &bare, None).is_empty(),
            "-32022 has no shape before 2026"
        );
        let found = check(V26, &bare, None);
        assert_eq!(rules(&found), ["shape.missing_member"]);
        assert!(found[0].detail.contains("error.data"));
    }
}
