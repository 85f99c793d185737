//! Base64 decoding piece by piece, with the verdict of `STANDARD.decode(text.trim())` (the
//! serde reader's) on the whole text: leading and trailing (Unicode) whitespace trimmed,
//! canonical padding, nothing else.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;

use super::error::StreamError;

/// Whole quartets decoded per call, in symbols.
const BATCH: usize = 1 << 16;

#[derive(Default)]
pub(crate) struct Base64Stream {
    /// Symbols not decoded yet (always ends with the last 1..=4 symbols seen, so that the final
    /// quartet, the only one where padding may be, is decoded by the engine with the rest).
    held: Vec<u8>,
    /// Symbols seen (for error offsets).
    started: bool,
    /// Whitespace after symbols: only whitespace may follow.
    trailing: bool,
    /// A non-ASCII character being gathered (to know whether it is whitespace).
    wide: [u8; 4],
    wide_n: usize,
    decoded: Vec<u8>,
}

fn bad() -> StreamError {
    StreamError::Base64Symbol
}

impl Base64Stream {
    /// Feeds text (valid UTF-8 as a whole), handing decoded bytes to `out`.
    pub(crate) fn push(
        &mut self,
        text: &[u8],
        out: &mut dyn FnMut(&[u8]) -> Result<(), StreamError>,
    ) -> Result<(), StreamError> {
        let mut i = 0;
        while i < text.len() {
            let b = text[i];
            if self.wide_n > 0 || b >= 0x80 {
                self.wide[self.wide_n] = b;
                self.wide_n += 1;
                i += 1;
                if let Ok(s) = std::str::from_utf8(&self.wide[..self.wide_n]) {
                    self.wide_n = 0;
                    if s.chars().all(char::is_whitespace) {
                        self.space();
                    } else {
                        return Err(bad());
                    }
                } else if self.wide_n == 4 {
                    return Err(bad());
                }
                continue;
            }
            if (b as char).is_whitespace() {
                self.space();
                i += 1;
                continue;
            }
            if self.trailing {
                return Err(bad());
            }
            self.started = true;
            // A run of symbols.
            let run = text[i..]
                .iter()
                .position(|&c| !(c.is_ascii_alphanumeric() || c == b'+' || c == b'/' || c == b'='))
                .unwrap_or(text.len() - i);
            if run == 0 {
                return Err(bad());
            }
            self.held.extend_from_slice(&text[i..i + run]);
            i += run;
            if self.held.len() >= BATCH + 8 {
                self.flush(out)?;
            }
        }
        Ok(())
    }

    fn space(&mut self) {
        if self.started {
            self.trailing = true;
        }
    }

    /// Decodes the whole quartets held, keeping the last 4..8 symbols for the end.
    fn flush(
        &mut self,
        out: &mut dyn FnMut(&[u8]) -> Result<(), StreamError>,
    ) -> Result<(), StreamError> {
        let keep = 4 + self.held.len() % 4;
        let cut = self.held.len() - keep;
        // Padding may only end the text: one inside what is decoded now is an error.
        if self.held[..cut].contains(&b'=') {
            return Err(bad());
        }
        self.decoded.clear();
        STANDARD
            .decode_vec(&self.held[..cut], &mut self.decoded)
            .map_err(StreamError::from)?;
        out(&self.decoded)?;
        self.held.drain(..cut);
        Ok(())
    }

    /// The end of the text: decodes what is held with the final-quartet rules.
    pub(crate) fn finish(
        &mut self,
        out: &mut dyn FnMut(&[u8]) -> Result<(), StreamError>,
    ) -> Result<(), StreamError> {
        if self.wide_n > 0 {
            return Err(bad());
        }
        self.decoded.clear();
        STANDARD
            .decode_vec(&self.held, &mut self.decoded)
            .map_err(StreamError::from)?;
        if !self.decoded.is_empty() {
            out(&self.decoded)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reference(text: &str) -> Option<Vec<u8>> {
        STANDARD.decode(text.trim()).ok()
    }

    fn streamed(text: &str, piece: usize) -> Option<Vec<u8>> {
        let mut s = Base64Stream::default();
        let mut got = Vec::new();
        let mut out = |b: &[u8]| {
            got.extend_from_slice(b);
            Ok(())
        };
        for chunk in text.as_bytes().chunks(piece.max(1)) {
            s.push(chunk, &mut out).ok()?;
        }
        s.finish(&mut out).ok()?;
        Some(got)
    }

    #[test]
    fn agrees_with_the_engine_on_the_whole_text() {
        let long = STANDARD.encode(vec![7u8; 200_000]);
        let cases = [
            "",
            " ",
            "aGk=",
            " aGk=\n",
            "aGk",
            "aGk==",
            "aG k=",
            "aGk=aGk=",
            "=aGk",
            "aGl=",
            "\u{a0}aGk=\u{3000}",
            "aGk=\u{e9}",
            "\u{e9}aGk=",
            "aGVsbG8gd29ybGQ=",
            "YQ==",
            "YQ=",
            "YR==",
            "{\"a\":1}",
            "aGVsbG8",
            long.as_str(),
        ];
        let broken = format!("{}={}", &long[..100_000], &long[100_000..]);
        for text in cases.iter().copied().chain([broken.as_str()]) {
            for piece in [1, 3, 4, 7, 1000, usize::MAX] {
                assert_eq!(
                    streamed(text, piece),
                    reference(text),
                    "{text:.40?} in {piece}"
                );
            }
        }
    }
}
