//! A JSON text read in one pass into a flat list of values in text order, in a buffer reused
//! from one message to the next: what the shape walker and the request facts read, without a
//! tree of `Vec`s per message (a [`super::Node`] costs one per object or array).
//!
//! A container is followed by its contents and knows where they end; an object's members are
//! a key (a string) then its value. Strings are borrowed from the text.
//!
//! Sound, not complete: when [`with_tree`] reads a text, the values read exactly as the
//! `Value` serde_json builds from it (same grammar, same numbers, duplicate members kept for
//! the reader to resolve as a `Value` does). What it does not handle itself (a string with an
//! escape, nesting deeper than [`MAX_DEPTH`], a number serde_json rejects) makes it give up, and
//! the caller reads the text with serde_json instead. `shapes::tests` and `request::tests`
//! compare the two readings.

use std::borrow::Cow;
use std::cell::RefCell;

use serde_json::{Map, Number, Value};

use super::node::Json;
use crate::jsonrpc::scan;

/// One value of the list.
#[derive(Debug, Clone)]
pub(crate) enum Flat {
    Null,
    Bool(bool),
    Number(Number),
    /// The text between the quotes: `text[start..end]`.
    String(usize, usize),
    /// An array, and the index after its last descendant.
    Array(usize),
    /// An object (keys and values alternating), and the index after its last descendant.
    Object(usize),
}

/// Nesting read at most (serde_json's limit is 128); deeper texts go to serde_json.
const MAX_DEPTH: usize = 100;

/// Values kept in the reused buffer between texts at most: a huge message's list is dropped.
const KEEP: usize = 4096;

thread_local! {
    static BUFFER: RefCell<Vec<Flat>> = const { RefCell::new(Vec::new()) };
}

/// Reads `text` and gives its root to `read`; `None` when the text needs serde_json (see the
/// module doc), or is not JSON.
pub(crate) fn with_tree<R>(text: &str, read: impl FnOnce(Tree<'_>) -> R) -> Option<R> {
    BUFFER.with(|cell| {
        // Called again while the buffer is lent (never today): a buffer of its own.
        let mut own = Vec::new();
        let mut lent = cell.try_borrow_mut().ok();
        let nodes = lent.as_deref_mut().unwrap_or(&mut own);
        nodes.clear();
        let read = parse(text, nodes).then(|| read(Tree { text, nodes, at: 0 }));
        if nodes.capacity() > KEEP {
            *nodes = Vec::new();
        }
        read
    })
}

fn parse(text: &str, nodes: &mut Vec<Flat>) -> bool {
    let b = text.as_bytes();
    value(b, scan::ws(b, 0), 0, text, nodes).is_some_and(|end| scan::ws(b, end) == b.len())
}

/// The value at `i` (after whitespace) into `nodes`; the index after it.
fn value(b: &[u8], i: usize, depth: usize, text: &str, nodes: &mut Vec<Flat>) -> Option<usize> {
    match *b.get(i)? {
        open @ (b'{' | b'[') => {
            if depth >= MAX_DEPTH {
                return None;
            }
            let object = open == b'{';
            let close = if object { b'}' } else { b']' };
            let at = nodes.len();
            nodes.push(Flat::Null);
            let mut i = scan::ws(b, i + 1);
            if b.get(i) != Some(&close) {
                loop {
                    if object {
                        i = string(b, i, nodes)?;
                        i = scan::ws(b, i);
                        if b.get(i) != Some(&b':') {
                            return None;
                        }
                        i = scan::ws(b, i + 1);
                    }
                    i = scan::ws(b, value(b, i, depth + 1, text, nodes)?);
                    match *b.get(i)? {
                        b',' => i = scan::ws(b, i + 1),
                        c if c == close => break,
                        _ => return None,
                    }
                }
            }
            let end = nodes.len();
            nodes[at] = if object {
                Flat::Object(end)
            } else {
                Flat::Array(end)
            };
            Some(i + 1)
        }
        b'"' => string(b, i, nodes),
        b't' => literal(b, i, b"true", Flat::Bool(true), nodes),
        b'f' => literal(b, i, b"false", Flat::Bool(false), nodes),
        b'n' => literal(b, i, b"null", Flat::Null, nodes),
        b'-' | b'0'..=b'9' => {
            let end = scan::number(b, i)?;
            nodes.push(Flat::Number(number(&text[i..end])?));
            Some(end)
        }
        _ => None,
    }
}

/// A string without escapes or control characters at `i`; the index after it.
fn string(b: &[u8], i: usize, nodes: &mut Vec<Flat>) -> Option<usize> {
    let (_, after) = scan::key(b, i)?;
    nodes.push(Flat::String(i + 1, after - 1));
    Some(after)
}

fn literal(b: &[u8], i: usize, word: &[u8], flat: Flat, nodes: &mut Vec<Flat>) -> Option<usize> {
    let end = scan::literal(b, i, word)?;
    nodes.push(flat);
    Some(end)
}

/// A number's value as serde_json reads it: short integers here, anything else by serde_json
/// itself (which gives `None` where it would reject the whole text, e.g. `1e400`).
pub(crate) fn number(text: &str) -> Option<Number> {
    let all_digits = |s: &str| s.bytes().all(|c| c.is_ascii_digit());
    match text.strip_prefix('-') {
        None if text.len() <= 19 && all_digits(text) => text.parse::<u64>().ok().map(Number::from),
        // `-0` is a float for serde_json: left to it.
        Some(digits) if digits.len() <= 18 && !digits.starts_with('0') && all_digits(digits) => {
            text.parse::<i64>().ok().map(Number::from)
        }
        _ => serde_json::from_str(text).ok(),
    }
}

/// A value of a read text.
#[derive(Clone, Copy)]
pub(crate) struct Tree<'a> {
    text: &'a str,
    nodes: &'a [Flat],
    at: usize,
}

impl<'a> Tree<'a> {
    fn at(self, at: usize) -> Self {
        Tree { at, ..self }
    }

    /// The index after this value and its contents.
    fn end(self) -> usize {
        match self.nodes[self.at] {
            Flat::Array(end) | Flat::Object(end) => end,
            _ => self.at + 1,
        }
    }

    /// An object's members in text order, duplicates included.
    pub(crate) fn members(self) -> Members<'a> {
        let (next, end) = match self.nodes[self.at] {
            Flat::Object(end) => (self.at + 1, end),
            _ => (0, 0),
        };
        Members {
            tree: self,
            next,
            end,
        }
    }
}

/// An array's items.
pub(crate) struct Items<'a> {
    tree: Tree<'a>,
    next: usize,
    end: usize,
}

impl<'a> Iterator for Items<'a> {
    type Item = Tree<'a>;
    fn next(&mut self) -> Option<Tree<'a>> {
        (self.next < self.end).then(|| {
            let item = self.tree.at(self.next);
            self.next = item.end();
            item
        })
    }
}

/// An object's members: key and value, in text order.
pub(crate) struct Members<'a> {
    tree: Tree<'a>,
    next: usize,
    end: usize,
}

impl<'a> Iterator for Members<'a> {
    type Item = (&'a str, Tree<'a>);
    fn next(&mut self) -> Option<(&'a str, Tree<'a>)> {
        if self.next >= self.end {
            return None;
        }
        let key = self.tree.at(self.next).as_str().unwrap_or("");
        let value = self.tree.at(self.next + 1);
        self.next = value.end();
        Some((key, value))
    }
}

impl<'a> Json<'a> for Tree<'a> {
    type Items = Items<'a>;

    fn as_number(self) -> Option<&'a Number> {
        match &self.nodes[self.at] {
            Flat::Number(n) => Some(n),
            _ => None,
        }
    }
    fn as_str(self) -> Option<&'a str> {
        match self.nodes[self.at] {
            Flat::String(start, end) => Some(&self.text[start..end]),
            _ => None,
        }
    }
    fn as_bool(self) -> Option<bool> {
        match self.nodes[self.at] {
            Flat::Bool(b) => Some(b),
            _ => None,
        }
    }
    fn is_null(self) -> bool {
        matches!(self.nodes[self.at], Flat::Null)
    }
    fn is_object(self) -> bool {
        matches!(self.nodes[self.at], Flat::Object(_))
    }
    fn items(self) -> Option<Items<'a>> {
        match self.nodes[self.at] {
            Flat::Array(end) => Some(Items {
                tree: self,
                next: self.at + 1,
                end,
            }),
            _ => None,
        }
    }
    fn member(self, key: &str) -> Option<Self> {
        self.members()
            .filter(|(k, _)| *k == key)
            .last()
            .map(|(_, v)| v)
    }
    fn sorted_members(self) -> Vec<(&'a str, Self)> {
        super::node::sorted_last_wins(self.members().collect())
    }
    fn to_value(self) -> Cow<'a, Value> {
        Cow::Owned(match &self.nodes[self.at] {
            Flat::Null => Value::Null,
            Flat::Bool(b) => Value::Bool(*b),
            Flat::Number(n) => Value::Number(n.clone()),
            Flat::String(start, end) => Value::String(self.text[*start..*end].to_owned()),
            Flat::Array(_) => Value::Array(
                self.items()
                    .into_iter()
                    .flatten()
                    .map(|v| v.to_value().into_owned())
                    .collect(),
            ),
            Flat::Object(_) => Value::Object(
                self.members()
                    .map(|(k, v)| (k.to_owned(), v.to_value().into_owned()))
                    .collect::<Map<String, Value>>(),
            ),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every text read here reads as serde_json's `Value` of it, and what it leaves to serde
    /// is what it cannot read exactly.
    #[test]
    fn a_tree_reads_like_the_value_of_the_same_text() {
        let read = [
            r#"{"b":1,"a":[1,2.5,-3,"x y",null,true,false],"b":{"z":1e300}}"#,
            r#"[{"x":18446744073709551615},{"x":-9223372036854775808},{"x":1.0},{"x":-0}]"#,
            r#"{"x":18446744073709551616,"y":-9223372036854775809,"z":0,"w":-0.0}"#,
            " \t\n{ \"a\" : [ ] , \"b\" : { } }\r\n",
            "\"plain\"",
            "12",
            "[]",
        ];
        for text in read {
            let value: Value = serde_json::from_str(text).unwrap();
            let read = with_tree(text, |t| t.to_value().into_owned());
            assert_eq!(read, Some(value), "{text}");
        }
        // Left to serde_json: escapes, control characters, numbers it rejects, deep nesting,
        // and anything that is not JSON.
        let deep = format!("{}{}", "[".repeat(MAX_DEPTH + 1), "]".repeat(MAX_DEPTH + 1));
        let left = [
            r#"{"k\u0041":1}"#,
            r#"{"a":"x\ny"}"#,
            "\"a\tb\"",
            r#"{"a":1e400}"#,
            &deep,
            "{",
            r#"{"a":1,}"#,
            "[1 2]",
            "[1,]",
            "01",
            "1x",
            "{} x",
            r#"{"a" 1}"#,
            "tru",
            "",
        ];
        for text in left {
            assert!(with_tree(text, |_| ()).is_none(), "{text}");
        }
    }
}
