//! Windows of a text for the string scanner: 16 bytes, or a run of 64, and
//! the end of the text, over the kernels of the level in use
//! ([`crate::simd::Kernels`]).

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
    if let Some(block) = s.get(j..j + BLOCK) {
        (
            k.string_specials_16::<NON_ASCII>(block.try_into().unwrap(), e2),
            BLOCK,
        )
    } else if let Some(from) = s.len().checked_sub(BLOCK) {
        // The last 16 bytes of the text, shifted: no copy.
        let last: &[u8; BLOCK] = s[from..].try_into().unwrap();
        (
            k.string_specials_16::<NON_ASCII>(last, e2) >> (j - from),
            s.len() - j,
        )
    } else {
        // A text shorter than a block: pad it with spaces, which are never special.
        let mut padded = [b' '; BLOCK];
        padded[..s.len() - j].copy_from_slice(&s[j..]);
        (k.string_specials_16::<NON_ASCII>(&padded, e2), s.len() - j)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::simd::portable::Portable;

    fn scalar(block: &[u8], non_ascii: bool, e2: bool) -> u32 {
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
        for len in 0..text.len() {
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
                        mask,
                        scalar(&s[j..j + covered], non_ascii, e2),
                        "{s:?} from {j}"
                    );
                }
            }
        }
    }
}
