//! What the shape walker reads: [`Json`], implemented for `serde_json::Value` (the public
//! [`super::check`]) and for [`Node`], a tree that borrows its strings from the message text.
//!
//! Why: a `Value` owns every key and string (14 allocations on a small tool result, most of a
//! judged exchange's); a `Node` allocates one `Vec` per object or array and nothing else
//! unless a string has escapes. It reads the same as the `Value` serde_json would build: same
//! parser, same numbers, a member lookup finds the last of duplicate keys and members are
//! visited in key order (a `BTreeMap`'s), so the findings do not change.

use std::borrow::Cow;
use std::fmt;

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Number, Value};

/// A JSON value as the shape walker reads it: a handle (`&Value`, `&Node`, a
/// [`super::flat::Tree`]) whose reads borrow for `'a`.
pub(crate) trait Json<'a>: Copy + 'a {
    /// An array's items.
    type Items: Iterator<Item = Self>;
    fn as_number(self) -> Option<&'a Number>;
    fn as_str(self) -> Option<&'a str>;
    fn as_bool(self) -> Option<bool>;
    fn is_null(self) -> bool;
    fn is_object(self) -> bool;
    fn items(self) -> Option<Self::Items>;
    /// The member named `key` of an object (the last of duplicates), `None` otherwise.
    fn member(self, key: &str) -> Option<Self>;
    /// An object's members in key order, one per key (the last of duplicates).
    fn sorted_members(self) -> Vec<(&'a str, Self)>;
    /// The value as serde_json's, to print it or compare it with a composite constant.
    fn to_value(self) -> Cow<'a, Value>;
}

impl<'a> Json<'a> for &'a Value {
    type Items = std::slice::Iter<'a, Value>;

    fn as_number(self) -> Option<&'a Number> {
        match self {
            Value::Number(n) => Some(n),
            _ => None,
        }
    }
    fn as_str(self) -> Option<&'a str> {
        Value::as_str(self)
    }
    fn as_bool(self) -> Option<bool> {
        Value::as_bool(self)
    }
    fn is_null(self) -> bool {
        Value::is_null(self)
    }
    fn is_object(self) -> bool {
        Value::is_object(self)
    }
    fn items(self) -> Option<Self::Items> {
        self.as_array().map(|list| list.iter())
    }
    fn member(self, key: &str) -> Option<Self> {
        self.as_object().and_then(|m| m.get(key))
    }
    fn sorted_members(self) -> Vec<(&'a str, Self)> {
        self.as_object()
            .map(|m| m.iter().map(|(k, v)| (k.as_str(), v)).collect())
            .unwrap_or_default()
    }
    fn to_value(self) -> Cow<'a, Value> {
        Cow::Borrowed(self)
    }
}

/// Members in text order, sorted by key with the last of duplicates kept: the order and the
/// choice of a `Value`'s `BTreeMap`.
pub(super) fn sorted_last_wins<'a, J>(mut list: Vec<(&'a str, J)>) -> Vec<(&'a str, J)> {
    // Stable: duplicates stay in text order, and the last of each run is the one kept.
    list.sort_by(|a, b| a.0.cmp(b.0));
    let mut out: Vec<(&'a str, J)> = Vec::with_capacity(list.len());
    for entry in list {
        match out.last_mut() {
            Some(last) if last.0 == entry.0 => *last = entry,
            _ => out.push(entry),
        }
    }
    out
}

/// A JSON value whose strings borrow from the text where they have no escapes.
#[derive(Debug)]
pub(crate) enum Node<'a> {
    Null,
    Bool(bool),
    Number(Number),
    String(Cow<'a, str>),
    Array(Vec<Node<'a>>),
    /// Members in text order, duplicates kept.
    Object(Vec<(Cow<'a, str>, Node<'a>)>),
}

impl<'a> Node<'a> {
    /// Parses `text` as serde_json parses a `Value` (same grammar, limits and numbers).
    pub(crate) fn parse(text: &'a str) -> Option<Self> {
        serde_json::from_str(text).ok()
    }
}

impl<'a, 't: 'a> Json<'a> for &'a Node<'t> {
    type Items = std::slice::Iter<'a, Node<'t>>;

    fn as_number(self) -> Option<&'a Number> {
        match self {
            Node::Number(n) => Some(n),
            _ => None,
        }
    }
    fn as_str(self) -> Option<&'a str> {
        match self {
            Node::String(s) => Some(s),
            _ => None,
        }
    }
    fn as_bool(self) -> Option<bool> {
        match self {
            Node::Bool(b) => Some(*b),
            _ => None,
        }
    }
    fn is_null(self) -> bool {
        matches!(self, Node::Null)
    }
    fn is_object(self) -> bool {
        matches!(self, Node::Object(_))
    }
    fn items(self) -> Option<Self::Items> {
        match self {
            Node::Array(list) => Some(list.iter()),
            _ => None,
        }
    }
    fn member(self, key: &str) -> Option<Self> {
        match self {
            Node::Object(members) => members.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }
    fn sorted_members(self) -> Vec<(&'a str, Self)> {
        let Node::Object(members) = self else {
            return Vec::new();
        };
        sorted_last_wins(members.iter().map(|(k, v)| (&**k, v)).collect())
    }
    fn to_value(self) -> Cow<'a, Value> {
        Cow::Owned(match self {
            Node::Null => Value::Null,
            Node::Bool(b) => Value::Bool(*b),
            Node::Number(n) => Value::Number(n.clone()),
            Node::String(s) => Value::String(s.to_string()),
            Node::Array(list) => {
                Value::Array(list.iter().map(|n| n.to_value().into_owned()).collect())
            }
            Node::Object(members) => Value::Object(
                members
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_value().into_owned()))
                    .collect(),
            ),
        })
    }
}

impl<'de> Deserialize<'de> for Node<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(NodeVisitor)
    }
}

struct NodeVisitor;

impl<'de> Visitor<'de> for NodeVisitor {
    type Value = Node<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, b: bool) -> Result<Node<'de>, E> {
        Ok(Node::Bool(b))
    }
    fn visit_i64<E>(self, n: i64) -> Result<Node<'de>, E> {
        Ok(Node::Number(n.into()))
    }
    fn visit_u64<E>(self, n: u64) -> Result<Node<'de>, E> {
        Ok(Node::Number(n.into()))
    }
    fn visit_f64<E>(self, f: f64) -> Result<Node<'de>, E> {
        // As serde_json's `Value`: a float that is not finite is null.
        Ok(Number::from_f64(f).map_or(Node::Null, Node::Number))
    }
    fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Node<'de>, E> {
        Ok(Node::String(Cow::Borrowed(s)))
    }
    fn visit_str<E>(self, s: &str) -> Result<Node<'de>, E> {
        Ok(Node::String(Cow::Owned(s.to_owned())))
    }
    fn visit_string<E>(self, s: String) -> Result<Node<'de>, E> {
        Ok(Node::String(Cow::Owned(s)))
    }
    fn visit_unit<E>(self) -> Result<Node<'de>, E> {
        Ok(Node::Null)
    }
    fn visit_none<E>(self) -> Result<Node<'de>, E> {
        Ok(Node::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Node<'de>, D::Error> {
        Deserialize::deserialize(d)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Node<'de>, A::Error> {
        let mut list = Vec::new();
        while let Some(item) = seq.next_element()? {
            list.push(item);
        }
        Ok(Node::Array(list))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Node<'de>, A::Error> {
        let mut members = Vec::new();
        while let Some(Key(key)) = map.next_key()? {
            members.push((key, map.next_value()?));
        }
        Ok(Node::Object(members))
    }
}

/// An object's key, borrowed where it has no escapes.
struct Key<'a>(Cow<'a, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string key")
            }
            fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(s)))
            }
            fn visit_str<E>(self, s: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(s.to_owned())))
            }
            fn visit_string<E>(self, s: String) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(s)))
            }
        }
        d.deserialize_str(KeyVisitor)
    }
}

/// Reads like the `Value` serde_json builds from the same text; the shape walker's findings
/// on the two are compared in `shapes::tests`.
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_node_reads_like_the_value_of_the_same_text() {
        let texts = [
            r#"{"b":1,"a":[1,2.5,-3,"x\"y",null,true],"b":{"z":1e300}}"#,
            r#"{"k\u0041":"v\n","kA":2,"":{}}"#,
            r#"[{"x":18446744073709551615},{"x":-9223372036854775808},{"x":1.0}]"#,
            "\"plain\"",
            "12",
        ];
        for text in texts {
            let value: Value = serde_json::from_str(text).unwrap();
            let node = Node::parse(text).unwrap();
            assert_eq!(*node.to_value(), value, "{text}");
            let sorted: Vec<_> = node
                .sorted_members()
                .into_iter()
                .map(|(k, v)| (k.to_owned(), v.to_value().into_owned()))
                .collect();
            let expected: Vec<_> = value
                .sorted_members()
                .into_iter()
                .map(|(k, v)| (k.to_owned(), v.clone()))
                .collect();
            assert_eq!(sorted, expected, "{text}");
            for key in ["a", "b", "kA", "", "none"] {
                assert_eq!(
                    node.member(key).map(|n| n.to_value().into_owned()),
                    value.get(key).cloned(),
                    "{text} {key}"
                );
            }
        }
        for bad in ["{", r#"{"a":1,}"#, "[1 2]", r#""\ud800""#] {
            assert_eq!(
                Node::parse(bad).is_some(),
                serde_json::from_str::<Value>(bad).is_ok(),
                "{bad}"
            );
        }
    }
}
