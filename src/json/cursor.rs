//! A position in a JSON text, and the moves every walker of JSON needs.

use super::block::whitespace_end;
use super::is_whitespace;

/// The text and the index of the next byte to look at. The validator adds
/// its steps in its own `impl` block.
pub(crate) struct Cursor<'a> {
    pub(crate) s: &'a [u8],
    pub(crate) i: usize,
}

impl<'a> Cursor<'a> {
    pub(crate) fn new(s: &'a [u8]) -> Self {
        Cursor { s, i: 0 }
    }

    /// The byte at the cursor, or 0 at the end (0 is invalid wherever a byte is expected).
    #[inline]
    pub(crate) fn peek(&self) -> u8 {
        self.s.get(self.i).copied().unwrap_or(0)
    }

    /// Skips JSON whitespace: byte by byte for a space or two, by blocks
    /// for longer runs (indentation).
    #[inline]
    pub(crate) fn skip_whitespace(&mut self) {
        if is_whitespace(self.peek()) {
            self.i += 1;
            if is_whitespace(self.peek()) {
                self.i = whitespace_end(self.s, self.i + 1);
            }
        }
    }
}
