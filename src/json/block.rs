//! 16 bytes at a time: which bytes of a block a scanner must look at, as a
//! bitmask, computed with SIMD through `wide` (SSE2 on x86-64 and NEON on
//! AArch64, both baseline, so no CPU detection is needed; plain scalar code
//! elsewhere). No `unsafe` here: `wide` holds it.

use wide::u8x16;

/// Bytes per block.
pub(crate) const BLOCK: usize = 16;

/// Bit `k` is set when byte `k` of `block` is `"`, `\`, a control character
/// (below 0x20), when `NON_ASCII` a byte of 0x80 or above, and when `e2`
/// the byte 0xE2 (which starts U+2028 and U+2029): what a JSON string
/// scanner must stop at.
#[inline(always)]
pub(crate) fn string_specials<const NON_ASCII: bool>(block: &[u8; BLOCK], e2: bool) -> u32 {
    let v = u8x16::new(*block);
    let quote = v.simd_eq(u8x16::splat(b'"'));
    let backslash = v.simd_eq(u8x16::splat(b'\\'));
    let control = v.min(u8x16::splat(0x1F)).simd_eq(v);
    let lanes = quote | backslash | control;
    let lanes = if NON_ASCII {
        lanes | v // the high bit of a non-ASCII byte is set already
    } else if e2 {
        lanes | v.simd_eq(u8x16::splat(0xE2))
    } else {
        lanes
    };
    lanes.to_bitmask()
}

/// Bytes per run: four blocks.
pub(crate) const RUN: usize = 4 * BLOCK;

/// [`string_specials`] of 64 bytes, bit `k` for byte `k`.
#[inline(always)]
pub(crate) fn string_specials_64<const NON_ASCII: bool>(run: &[u8], e2: bool) -> u64 {
    let block = |k: usize| {
        let bytes: &[u8; BLOCK] = run[k * BLOCK..(k + 1) * BLOCK].try_into().unwrap();
        u64::from(string_specials::<NON_ASCII>(bytes, e2)) << (k * BLOCK)
    };
    block(0) | block(1) | block(2) | block(3)
}

/// [`string_specials`] of the (up to) 16 bytes of `s` from `j <= s.len()`,
/// and how many bytes the mask covers: 16, or fewer at the end of `s` (no
/// bit is set past it).
#[inline(always)]
pub(crate) fn string_specials_at<const NON_ASCII: bool>(
    s: &[u8],
    j: usize,
    e2: bool,
) -> (u32, usize) {
    if let Some(block) = s.get(j..j + BLOCK) {
        (
            string_specials::<NON_ASCII>(block.try_into().unwrap(), e2),
            BLOCK,
        )
    } else if let Some(from) = s.len().checked_sub(BLOCK) {
        // The last 16 bytes of the text, shifted: no copy.
        let last: &[u8; BLOCK] = s[from..].try_into().unwrap();
        (
            string_specials::<NON_ASCII>(last, e2) >> (j - from),
            s.len() - j,
        )
    } else {
        // A text shorter than a block: pad it with spaces, which are never special.
        let mut padded = [b' '; BLOCK];
        padded[..s.len() - j].copy_from_slice(&s[j..]);
        (string_specials::<NON_ASCII>(&padded, e2), s.len() - j)
    }
}

/// The index of the first byte at or after `i` that is not JSON whitespace
/// (space, tab, LF, CR), or `s.len()`: indentation skipped 16 bytes a step.
#[inline]
pub(crate) fn whitespace_end(s: &[u8], mut i: usize) -> usize {
    while let Some(block) = s.get(i..i + BLOCK) {
        let v = u8x16::new(block.try_into().unwrap());
        let ws = v.simd_eq(u8x16::splat(b' '))
            | v.simd_eq(u8x16::splat(b'\n'))
            | v.simd_eq(u8x16::splat(b'\t'))
            | v.simd_eq(u8x16::splat(b'\r'));
        let other = !ws.to_bitmask() & 0xFFFF;
        if other != 0 {
            return i + other.trailing_zeros() as usize;
        }
        i += BLOCK;
    }
    while s.get(i).is_some_and(|&b| super::is_whitespace(b)) {
        i += 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scalar<const NON_ASCII: bool, const E2: bool>(block: &[u8]) -> u32 {
        let special = |b: u8| {
            b == b'"' || b == b'\\' || b < 0x20 || (NON_ASCII && b >= 0x80) || (E2 && b == 0xE2)
        };
        block
            .iter()
            .enumerate()
            .filter(|&(_, &b)| special(b))
            .fold(0, |m, (k, _)| m | 1 << k)
    }

    fn both<const NON_ASCII: bool, const E2: bool>(s: &[u8], j: usize) {
        let (mask, covered) = string_specials_at::<NON_ASCII>(s, j, E2);
        assert_eq!(covered, (s.len() - j).min(BLOCK));
        let expected = scalar::<NON_ASCII, E2>(&s[j..j + covered]);
        assert_eq!(mask, expected, "{s:?} from {j}");
    }

    #[test]
    fn every_byte_value_in_every_lane() {
        // Miri runs every lane's code path too, in fewer lanes (it is slow).
        let lanes: Vec<usize> = if cfg!(miri) {
            vec![0, 9, 15]
        } else {
            (0..BLOCK).collect()
        };
        for b in 0..=255u8 {
            for &lane in &lanes {
                let mut block = [b'a'; BLOCK];
                block[lane] = b;
                both::<false, false>(&block, 0);
                both::<false, true>(&block, 0);
                both::<true, false>(&block, 0);
            }
        }
    }

    #[test]
    fn near_the_end_of_short_and_long_texts() {
        let text: Vec<u8> = (0..40)
            .map(|k| [b'x', b'"', 0x80, b'\\', 0x1F, 0xE2][k % 6])
            .collect();
        for len in 0..text.len() {
            for j in 0..=len {
                both::<false, false>(&text[..len], j);
                both::<false, true>(&text[..len], j);
                both::<true, false>(&text[..len], j);
            }
        }
    }

    #[test]
    fn runs_of_64_bytes_are_four_blocks_in_order() {
        let run: Vec<u8> = (0..RUN)
            .map(|k| [b'a', b'"', 0xE2, b'\\', 0x05, 0xC3, b'z'][k * 7 % 11 % 7])
            .collect();
        let scalar = |special: &dyn Fn(u8) -> bool| {
            run.iter()
                .enumerate()
                .filter(|&(_, &b)| special(b))
                .fold(0u64, |m, (k, _)| m | 1 << k)
        };
        let base = |b: u8| b == b'"' || b == b'\\' || b < 0x20;
        assert_eq!(string_specials_64::<false>(&run, false), scalar(&base));
        assert_eq!(
            string_specials_64::<false>(&run, true),
            scalar(&|b| base(b) || b == 0xE2)
        );
        assert_eq!(
            string_specials_64::<true>(&run, false),
            scalar(&|b| base(b) || b >= 0x80)
        );
    }

    #[test]
    fn whitespace_ends_at_the_first_other_byte() {
        for len in [0, 1, 2, 15, 16, 17, 31, 32, 33, 40] {
            for other in [None, Some(b'x'), Some(0x0B), Some(0xA0)] {
                for at in 0..len {
                    let mut text: Vec<u8> = (0..len).map(|k| b" \n\t\r"[k % 4]).collect();
                    if let Some(b) = other {
                        text[at] = b;
                    }
                    for from in [0, 1, at, at + 1, len].into_iter().filter(|&f| f <= len) {
                        let want = text[from..]
                            .iter()
                            .position(|&b| !crate::json::is_whitespace(b))
                            .map_or(len, |k| from + k);
                        assert_eq!(whitespace_end(&text, from), want, "{text:?} from {from}");
                    }
                }
            }
        }
    }
}
