//! A position in a JSON text, and the moves every walker of JSON needs.

use super::block::Specials;
use super::is_whitespace;
use crate::simd::Kernels;

/// The text, the index of the next byte to look at, and the kernels to look
/// with. The validator adds its steps in its own `impl` block.
pub(crate) struct Cursor<'a, K> {
    pub(crate) s: &'a [u8],
    pub(crate) i: usize,
    pub(crate) k: K,
    /// The special bytes of the strings ahead, kept between strings.
    pub(crate) strings: Specials,
}

impl<'a, K: Kernels> Cursor<'a, K> {
    #[inline(always)]
    pub(crate) fn new(s: &'a [u8], k: K) -> Self {
        Cursor {
            s,
            i: 0,
            k,
            strings: Specials::new(),
        }
    }

    /// The byte at the cursor, or 0 at the end (0 is invalid wherever a byte is expected).
    #[inline(always)]
    pub(crate) fn peek(&self) -> u8 {
        self.s.get(self.i).copied().unwrap_or(0)
    }

    /// Skips JSON whitespace: byte by byte for a space or two, by blocks
    /// for longer runs (indentation).
    #[inline(always)]
    pub(crate) fn skip_whitespace(&mut self) {
        if is_whitespace(self.peek()) {
            self.i += 1;
            if is_whitespace(self.peek()) {
                self.i = self.k.whitespace_end(self.s, self.i + 1);
            }
        }
    }
}
