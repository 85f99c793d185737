//! HTTP headers as the core reads them: in order, duplicates kept, names compared without case.
//!
//! Every judged exchange builds two sets and reads a handful of names from them, so a set costs
//! one allocation (the text) when it has up to [`INLINE`] headers, and the names the core reads
//! are noted as they are pushed: reading one is an index, not a search.

/// Where a header's name starts, where it ends and where its value ends, in the set's text.
type Span = [u32; 3];

/// Headers whose spans live in the set itself; more go to a vector.
const INLINE: usize = 8;

/// Room reserved per header when the count is known (most names and values are short).
const BYTES_PER_HEADER: usize = 48;

/// The headers the core reads, each noted at its first occurrence when pushed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Known {
    Accept,
    Authorization,
    ContentType,
    Date,
    LastEventId,
    Location,
    McpMethod,
    McpName,
    McpProtocolVersion,
    McpSessionId,
    RetryAfter,
    XAccelBuffering,
}

impl Known {
    /// How many there are.
    const COUNT: usize = Known::XAccelBuffering as usize + 1;

    /// The known header `name` is, in any case: the one table of their names. The length (and
    /// for the two of eight and the two of thirteen bytes, one byte) picks the one candidate, so
    /// most names are told apart without comparing their text.
    #[inline(always)]
    fn of(name: &[u8]) -> Option<Known> {
        let (k, n) = match name.len() {
            4 => (Known::Date, "date"),
            6 => (Known::Accept, "accept"),
            8 if name[3] == b'-' => (Known::McpName, "mcp-name"),
            8 => (Known::Location, "location"),
            10 => (Known::McpMethod, "mcp-method"),
            11 => (Known::RetryAfter, "retry-after"),
            12 => (Known::ContentType, "content-type"),
            13 if name[0] | 0x20 == b'a' => (Known::Authorization, "authorization"),
            13 => (Known::LastEventId, "last-event-id"),
            14 => (Known::McpSessionId, "mcp-session-id"),
            17 => (Known::XAccelBuffering, "x-accel-buffering"),
            20 => (Known::McpProtocolVersion, "mcp-protocol-version"),
            _ => return None,
        };
        crate::wire::eq_lower(name, n.as_bytes()).then_some(k)
    }
}

/// HTTP headers with case-insensitive lookup. Keeps the order and duplicates as sent.
///
/// Stored as one string of every name and value back to back, with where each ends. A set
/// whose text passes 4 GiB keeps the headers that fit (no peer sends that much: HTTP stacks
/// refuse heads of a few KiB).
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Headers {
    /// Names and values, back to back.
    text: String,
    /// The spans of the first [`INLINE`] headers (unused ones zero).
    inline: [Span; INLINE],
    /// The spans of the rest.
    more: Vec<Span>,
    /// How many headers.
    len: usize,
    /// Per [`Known`] header, 1 + the index of its first occurrence; 0 when not among the first
    /// 255 headers (then a search decides).
    known: [u8; Known::COUNT],
}

impl Headers {
    /// An empty set.
    pub fn new() -> Self {
        Headers::default()
    }

    #[inline]
    pub(crate) fn with_capacity(headers: usize, bytes: usize) -> Self {
        Headers {
            text: String::with_capacity(bytes),
            more: Vec::with_capacity(headers.saturating_sub(INLINE)),
            ..Headers::default()
        }
    }

    /// Adds one header.
    pub fn push(&mut self, name: impl AsRef<str>, value: impl AsRef<str>) {
        self.push_with(name.as_ref(), value.as_ref(), false);
    }

    /// Adds one header with its name lowercased (ASCII) where it is stored: a name off the
    /// wire in the sender's case costs no copy of its own.
    pub(crate) fn push_lowercased(&mut self, name: &str, value: &str) {
        self.push_with(name, value, true);
    }

    #[inline]
    fn push_with(&mut self, name: &str, value: &str, lower: bool) {
        let start = self.text.len();
        let (Ok(start32), Ok(name_end), Ok(value_end)) = (
            u32::try_from(start),
            u32::try_from(start + name.len()),
            u32::try_from(start + name.len() + value.len()),
        ) else {
            return;
        };
        self.text.push_str(name);
        if lower {
            self.text[start..].make_ascii_lowercase();
        }
        if let Some(k) = Known::of(&self.text.as_bytes()[start..])
            && self.known[k as usize] == 0
            && let Ok(at) = u8::try_from(self.len + 1)
        {
            self.known[k as usize] = at;
        }
        self.text.push_str(value);
        let span = [start32, name_end, value_end];
        match self.inline.get_mut(self.len) {
            Some(slot) => *slot = span,
            None => self.more.push(span),
        }
        self.len += 1;
    }

    fn spans(&self) -> impl Iterator<Item = &Span> {
        self.inline[..self.len.min(INLINE)].iter().chain(&self.more)
    }

    fn name_of(&self, &[start, name_end, _]: &Span) -> &str {
        &self.text[start as usize..name_end as usize]
    }

    fn value_of(&self, &[_, name_end, value_end]: &Span) -> &str {
        &self.text[name_end as usize..value_end as usize]
    }

    /// The first value of `name` (case-insensitive).
    pub fn get(&self, name: &str) -> Option<&str> {
        let name = name.as_bytes();
        // Most names differ in length: that test alone passes most headers by.
        self.spans()
            .find(|span| {
                (span[1] - span[0]) as usize == name.len()
                    && crate::wire::eq_ignoring_case(self.name_of(span).as_bytes(), name)
            })
            .map(|span| self.value_of(span))
    }

    /// The first value of a known header: `get` of its name without the search (but for a
    /// first occurrence past 255 headers).
    #[inline(always)]
    pub(crate) fn known(&self, header: Known) -> Option<&str> {
        match self.known[header as usize] {
            0 if self.len >= usize::from(u8::MAX) => self.search(header),
            0 => None,
            at => {
                let i = usize::from(at - 1);
                let span = match self.inline.get(i) {
                    Some(span) => span,
                    None => &self.more[i - INLINE],
                };
                Some(self.value_of(span))
            }
        }
    }

    /// The first value of `header` by a search: for a set whose first occurrence of it may lie
    /// past the 255 headers `push` notes.
    #[cold]
    fn search(&self, header: Known) -> Option<&str> {
        self.spans()
            .find(|span| Known::of(self.name_of(span).as_bytes()) == Some(header))
            .map(|span| self.value_of(span))
    }

    /// The first `Mcp-Session-Id` value.
    pub(crate) fn session_id(&self) -> Option<&str> {
        self.known(Known::McpSessionId)
    }

    /// Whether there are no headers (a capture that did not record them).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// All headers, in order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.spans()
            .map(|span| (self.name_of(span), self.value_of(span)))
    }
}

impl std::fmt::Debug for Headers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl From<Vec<(String, String)>> for Headers {
    fn from(pairs: Vec<(String, String)>) -> Self {
        let bytes = pairs.iter().map(|(n, v)| n.len() + v.len()).sum();
        let mut headers = Headers::with_capacity(pairs.len(), bytes);
        for (name, value) in &pairs {
            headers.push(name, value);
        }
        headers
    }
}

impl<N: AsRef<str>, V: AsRef<str>> FromIterator<(N, V)> for Headers {
    fn from_iter<I: IntoIterator<Item = (N, V)>>(iter: I) -> Self {
        let iter = iter.into_iter();
        let count = iter.size_hint().0;
        let mut headers = Headers::with_capacity(count, count * BYTES_PER_HEADER);
        for (name, value) in iter {
            headers.push(name, value);
        }
        headers
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every known header with its name as HTTP peers write it (the table [`Known::of`] must
    /// agree with), in the order of the enum.
    const KNOWN: [(Known, &str); Known::COUNT] = [
        (Known::Accept, "Accept"),
        (Known::Authorization, "Authorization"),
        (Known::ContentType, "Content-Type"),
        (Known::Date, "Date"),
        (Known::LastEventId, "Last-Event-ID"),
        (Known::Location, "Location"),
        (Known::McpMethod, "Mcp-Method"),
        (Known::McpName, "Mcp-Name"),
        (Known::McpProtocolVersion, "MCP-Protocol-Version"),
        (Known::McpSessionId, "Mcp-Session-Id"),
        (Known::RetryAfter, "Retry-After"),
        (Known::XAccelBuffering, "X-Accel-Buffering"),
    ];

    /// The length switch of [`Known::of`] finds every known name, in any case, and each
    /// `Known` is at its own index.
    #[test]
    fn known_names_are_found_by_length() {
        for (i, &(k, name)) in KNOWN.iter().enumerate() {
            assert_eq!(k as usize, i, "{name}");
            assert_eq!(Known::of(name.as_bytes()), Some(k));
            assert_eq!(Known::of(name.to_uppercase().as_bytes()), Some(k));
            assert_eq!(Known::of(name.to_lowercase().as_bytes()), Some(k));
        }
        assert_eq!(Known::of(b"mcp-nami"), None);
        assert_eq!(Known::of(b"x-custom"), None);
    }

    /// Each known header noted at `push` is what a search for its name finds: absent, any
    /// case, repeated, after other headers, next to near-miss names, in every way a set is
    /// built, inline or past the inline spans.
    #[test]
    fn known_headers_are_what_a_search_finds() {
        let names = [
            "mcp-session-id",
            "Mcp-Session-Id",
            "MCP-SESSION-ID",
            "mcp-session-ix",
            "mcp-session-idd",
            "Content-Type",
            "content-typf",
            "Location",
            "mcp-name",
            "Authorization",
            "last-event-iD",
            "x-other",
        ];
        let mut sets = 0;
        for filler in [0, INLINE - 1, INLINE + 3] {
            for a in 0..names.len() {
                for b in 0..names.len() {
                    for c in 0..names.len() {
                        let pairs: Vec<(String, String)> = (0..filler)
                            .map(|i| (format!("x-filler-{i}"), "f".to_owned()))
                            .chain(
                                [a, b, c]
                                    .iter()
                                    .enumerate()
                                    .map(|(i, &n)| (names[n].to_owned(), format!("v{i}"))),
                            )
                            .collect();
                        let mut pushed = Headers::new();
                        for (n, v) in &pairs {
                            pushed.push(n, v);
                        }
                        let built = [
                            Headers::from(pairs.clone()),
                            pairs.iter().cloned().collect(),
                            pushed,
                        ];
                        for h in &built {
                            for &(k, name) in &KNOWN {
                                assert_eq!(h.known(k), h.get(name), "{name} in {pairs:?}");
                            }
                            assert_eq!(h.iter().count(), pairs.len());
                            assert!(h.iter().eq(pairs.iter().map(|(n, v)| (&n[..], &v[..]))));
                        }
                        sets += 1;
                    }
                }
            }
        }
        assert_eq!(sets, 3 * 12 * 12 * 12);
        assert_eq!(Headers::new().session_id(), None);
    }

    /// Past 255 headers the index is not noted, and the search still finds a late first one.
    #[test]
    fn a_known_header_after_255_others_is_found() {
        let mut h = Headers::new();
        for i in 0..300 {
            h.push(format!("x-{i}"), "v");
        }
        h.push("Retry-After", "5");
        assert_eq!(h.known(Known::RetryAfter), Some("5"));
        assert_eq!(h.known(Known::Date), None);
        assert_eq!(h.iter().count(), 301);
    }
}
