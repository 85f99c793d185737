//! Why the streaming reader refused a capture: one enum, so that callers match a variant (not
//! the wording), while Display keeps the one-line text the CLI has always printed.

use std::fmt;

/// Why the streaming reader ([`stream_entries`](super::stream_entries)) refused a capture.
/// Display gives the one-line reason the CLI prints after `not a usable HAR file: ` (see
/// [`HarError::Streamed`](super::HarError::Streamed)); the wording of the syntax errors follows
/// serde_json's, with a byte offset instead of a line and column.
#[derive(Debug)]
#[non_exhaustive]
pub enum StreamError {
    /// JSON that is not well formed, or not the shape HAR needs here: what was expected or
    /// found, and the byte offset in the input.
    Syntax {
        /// What was expected or found, e.g. `EOF while parsing a string`.
        what: &'static str,
        /// Byte offset in the input.
        at: u64,
    },
    /// A value the reader must hold whole (a request, `_error`, a key, an out-of-order body on
    /// a pipe) is over `cap` bytes.
    TooLarge {
        /// The cap, in bytes.
        cap: usize,
        /// Byte offset in the input where it was exceeded.
        at: u64,
    },
    /// `response.content.text` comes before the members needed to judge it, on an input that
    /// cannot seek back, and is over `cap` bytes.
    BodyBeforeHead {
        /// The cap, in bytes.
        cap: usize,
    },
    /// Reading the input failed.
    Read(std::io::Error),
    /// Seeking back in the input failed.
    Seek(std::io::Error),
    /// The reader needed to seek back and the input cannot.
    CannotSeek,
    /// An object key that is not valid UTF-8, at this byte offset.
    KeyUtf8 {
        /// Byte offset in the input.
        at: u64,
    },
    /// An object key with escapes that serde_json refuses.
    Key(serde_json::Error),
    /// A string whose bytes are not valid UTF-8.
    InvalidCodePoint,
    /// A member serde_json refuses to read as HAR (the member's name, and serde_json's error).
    Member {
        /// The member, e.g. `status`.
        name: &'static str,
        /// serde_json's error.
        source: serde_json::Error,
    },
    /// A member given twice where HAR has one (serde's duplicate-field error).
    DuplicateField(&'static str),
    /// A second `log` or `entries`: which one a reader uses is not defined.
    DuplicateMember(&'static str),
    /// A required member is absent.
    MissingField(&'static str),
    /// `response.status` is not an HTTP status.
    BadStatus(i64),
    /// `_mcp_end` is not one of the endings this tool writes.
    UnknownEnd(String),
    /// A base64 body with a byte that is not base64.
    Base64Symbol,
    /// A base64 body that does not decode.
    Base64(Base64Error),
    /// `_error` nested deeper than serde_json's recursion limit.
    ErrorTooDeep,
    /// Something is wrong with the entry at this 0-based index of `log.entries`.
    Entry {
        /// The entry's index.
        index: u64,
        /// What is wrong with it.
        error: Box<StreamError>,
    },
    /// Bytes after the HAR document, from this byte offset on.
    TrailingData {
        /// Byte offset in the input.
        at: u64,
    },
    /// A JSON document without a `log.entries` array.
    NoEntries,
}

/// A base64 body that does not decode (the decoder's own words); opaque, so that the base64
/// crate's version is no part of this crate's API.
#[derive(Debug)]
pub struct Base64Error(pub(crate) base64::DecodeError);

impl fmt::Display for Base64Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl std::error::Error for Base64Error {}

impl From<base64::DecodeError> for StreamError {
    fn from(e: base64::DecodeError) -> Self {
        StreamError::Base64(Base64Error(e))
    }
}

impl fmt::Display for StreamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StreamError::Syntax { what, at } => write!(f, "{what} at byte {at}"),
            StreamError::TooLarge { cap, at } => write!(
                f,
                "a value over {cap} bytes where the reader must hold it whole, at byte {at}"
            ),
            StreamError::BodyBeforeHead { cap } => write!(
                f,
                "response.content.text comes before what is needed to judge it and is over \
                 {cap} bytes: pass the HAR as a file (not a pipe), or raise --max-body-bytes"
            ),
            StreamError::Read(e) => write!(f, "read error: {e}"),
            StreamError::Seek(e) => write!(f, "seek error: {e}"),
            StreamError::CannotSeek => f.write_str("the input cannot seek"),
            StreamError::KeyUtf8 { at } => write!(f, "invalid UTF-8 in a key at byte {at}"),
            StreamError::Key(e) => write!(f, "key: {e}"),
            StreamError::InvalidCodePoint => f.write_str("invalid unicode code point in a string"),
            StreamError::Member { name, source } => write!(f, "{name}: {source}"),
            StreamError::DuplicateField(name) => write!(f, "duplicate field `{name}`"),
            StreamError::DuplicateMember(name) => write!(f, "duplicate `{name}` member"),
            StreamError::MissingField(name) => write!(f, "missing field `{name}`"),
            StreamError::BadStatus(status) => {
                write!(f, "response status {status} is not an HTTP status")
            }
            StreamError::UnknownEnd(end) => write!(
                f,
                "_mcp_end {end:?} is not eof, reset, open, timeout, cancelled or not_captured"
            ),
            StreamError::Base64Symbol => f.write_str("base64 body: invalid symbol"),
            StreamError::Base64(e) => write!(f, "base64 body: {e}"),
            StreamError::ErrorTooDeep => f.write_str("_error: recursion limit exceeded"),
            StreamError::Entry { index, error } => write!(f, "entry {index}: {error}"),
            StreamError::TrailingData { at } => {
                write!(f, "trailing data after the HAR document at byte {at}")
            }
            StreamError::NoEntries => f.write_str("no log.entries array: not a HAR file"),
        }
    }
}

impl std::error::Error for StreamError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            StreamError::Read(e) | StreamError::Seek(e) => Some(e),
            StreamError::Key(e) | StreamError::Member { source: e, .. } => Some(e),
            StreamError::Base64(e) => Some(e),
            StreamError::Entry { error, .. } => Some(error),
            _ => None,
        }
    }
}
