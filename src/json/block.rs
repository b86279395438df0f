//! Windows of a text for the string scanners, over the kernels of the level
//! in use ([`crate::simd::Kernels`]): the validator's 64-byte window kept
//! from one string to the next ([`Specials`]), and 16-byte blocks for the
//! encoder's and the classifier's short looks; both handle the end of the
//! text without copying it, but for texts shorter than a window.

use crate::simd::Kernels;

/// Bytes per block.
pub(crate) const BLOCK: usize = 16;

/// Bytes per run: four blocks.
pub(crate) const RUN: usize = 4 * BLOCK;

/// [`Kernels::string_specials_16`] of the (up to) 16 bytes of `s` from
/// `j <= s.len()`, and how many bytes the mask covers: 16, or fewer at the
/// end of `s` (no bit is set past it).
#[inline(always)]
pub(crate) fn string_specials_at<const NON_ASCII: bool, K: Kernels>(
    k: K,
    s: &[u8],
    j: usize,
    e2: bool,
) -> (u32, usize) {
    let (mask, covered) = window_at::<BLOCK>(s, j, |block| {
        u64::from(k.string_specials_16::<NON_ASCII>(block, e2))
    });
    // Bits past the 16th never come out of a 16-byte mask.
    (mask as u32, covered)
}

/// What `classify` says of the (up to) `N` bytes of `s` from `j <= s.len()`
/// (bit `k` for `s[j + k]`), and how many bytes that covers: `N`, or fewer
/// at the end of `s`, where no bit is set past it. At the end the last `N`
/// bytes of the text are classified and shifted (no copy), unless the text
/// is shorter than `N`: it is then padded with spaces, never special.
#[inline(always)]
fn window_at<const N: usize>(
    s: &[u8],
    j: usize,
    classify: impl Fn(&[u8; N]) -> u64,
) -> (u64, usize) {
    if let Some(window) = s.get(j..j + N) {
        (classify(window.try_into().unwrap()), N)
    } else if let Some(from) = s.len().checked_sub(N) {
        let (mask, shift) = (classify(s[from..].try_into().unwrap()), j - from);
        // `shift <= N`: all 64 bits go when a 64-byte window ends at `j`.
        let mask = if N < 64 || shift < 64 {
            mask >> shift
        } else {
            0
        };
        (mask, s.len() - j)
    } else {
        let mut padded = [b' '; N];
        padded[..s.len() - j].copy_from_slice(&s[j..]);
        (classify(&padded), s.len() - j)
    }
}

/// The special bytes ([`Kernels::string_specials_64`]) of 64 bytes of a
/// text, kept from one string to the next: the short strings of a message
/// (member names, small values), a few bytes apart, share one
/// classification instead of paying one each.
pub(crate) struct Specials {
    /// The window starts at `s[base]`...
    base: usize,
    /// ...and holds `covered` bytes of the text: 64, or fewer at its end.
    covered: usize,
    /// Bit `k` for `s[base + k]`; none past `covered`.
    mask: u64,
}

impl Specials {
    /// No window yet: the first look classifies one.
    #[inline(always)]
    pub(crate) fn new() -> Self {
        Specials {
            base: 0,
            covered: 0,
            mask: 0,
        }
    }

    /// The special bytes from `s[j]` (`j <= s.len()`, never before an
    /// earlier `j` of the same text) to the end of the window: the mask
    /// (bit 0 for `s[j]`), how many of its bytes exist, and the window's
    /// width from `j`. The two differ only at the end of the text.
    /// Classifies a new window from `j` when `j` is past the current one.
    #[inline(always)]
    pub(crate) fn from<const NON_ASCII: bool, K: Kernels>(
        &mut self,
        k: K,
        s: &[u8],
        j: usize,
        e2: bool,
    ) -> (u64, usize, usize) {
        let off = j.wrapping_sub(self.base);
        if off < self.covered {
            return (self.mask >> off, self.covered - off, RUN - off);
        }
        self.classify::<NON_ASCII, K>(k, s, j, e2);
        (self.mask, self.covered, RUN)
    }

    #[inline(always)]
    fn classify<const NON_ASCII: bool, K: Kernels>(&mut self, k: K, s: &[u8], j: usize, e2: bool) {
        self.base = j;
        (self.mask, self.covered) =
            window_at::<RUN>(s, j, |run| k.string_specials_64::<NON_ASCII>(run, e2));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::simd::portable::Portable;

    fn scalar(block: &[u8], non_ascii: bool, e2: bool) -> u64 {
        let special = |b: u8| {
            b == b'"' || b == b'\\' || b < 0x20 || (non_ascii && b >= 0x80) || (e2 && b == 0xE2)
        };
        block
            .iter()
            .enumerate()
            .filter(|&(_, &b)| special(b))
            .fold(0, |m, (k, _)| m | 1 << k)
    }

    #[test]
    fn near_the_end_of_short_and_long_texts() {
        let text: Vec<u8> = (0..40)
            .map(|k| [b'x', b'"', 0x80, b'\\', 0x1F, 0xE2][k % 6])
            .collect();
        // Under Miri (a thousand times slower), the lengths around the
        // block's width and its double only, and the longest.
        let lens: Vec<usize> = if cfg!(miri) {
            vec![0, 1, 2, 15, 16, 17, 31, 32, 33, 39]
        } else {
            (0..text.len()).collect()
        };
        for len in lens {
            for j in 0..=len {
                let s = &text[..len];
                for (non_ascii, e2) in [(false, false), (false, true), (true, false)] {
                    let (mask, covered) = if non_ascii {
                        string_specials_at::<true, _>(Portable, s, j, e2)
                    } else {
                        string_specials_at::<false, _>(Portable, s, j, e2)
                    };
                    assert_eq!(covered, (s.len() - j).min(BLOCK));
                    assert_eq!(
                        u64::from(mask),
                        scalar(&s[j..j + covered], non_ascii, e2),
                        "{s:?} from {j}"
                    );
                }
            }
        }
    }

    #[test]
    fn a_kept_window_tells_the_specials_ahead_wherever_the_text_ends() {
        let text: Vec<u8> = (0..150)
            .map(|k| [b'x', b'"', 0x80, b'y', b'\\', 0x1F, b'z', 0xE2][k % 8])
            .collect();
        // Lengths and starts around the window's width and its multiples
        // (fewer under Miri, where each call costs a thousand times more).
        let lens: Vec<usize> = if cfg!(miri) {
            vec![0, 1, 63, 64, 65, 128, 129]
        } else {
            (0..text.len()).collect()
        };
        for len in lens {
            let s = &text[..len];
            for step in [1, 5, 13, 64, 70] {
                let firsts = if cfg!(miri) {
                    0..=len.min(2)
                } else {
                    0..=len.min(66)
                };
                for first in firsts {
                    let mut window = Specials::new();
                    let mut j = first;
                    while j <= len {
                        let (mask, covered, width) = window.from::<false, _>(Portable, s, j, true);
                        assert!(covered <= width && width <= RUN, "{len} {j}");
                        assert!(covered == width || j + covered == len, "{len} {j}");
                        assert_eq!(mask, scalar(&s[j..j + covered], false, true), "{len} {j}");
                        j += step;
                    }
                }
            }
        }
    }
}
