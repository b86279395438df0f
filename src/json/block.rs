//! 16 bytes at a time: which bytes of a block a scanner must look at, as a
//! bitmask, computed with SIMD through `wide` (SSE2 on x86-64 and NEON on
//! AArch64, both baseline, so no CPU detection is needed; plain scalar code
//! elsewhere). No `unsafe` here: `wide` holds it.

use wide::u8x16;

/// Bytes per block.
pub(crate) const BLOCK: usize = 16;

/// Bit `k` is set when byte `k` of `block` is `"`, `\`, a control character
/// (below 0x20) or, when `NON_ASCII`, a byte of 0x80 or above: what a JSON
/// string scanner must stop at.
#[inline(always)]
pub(crate) fn string_specials<const NON_ASCII: bool>(block: &[u8; BLOCK]) -> u32 {
    let v = u8x16::new(*block);
    let quote = v.simd_eq(u8x16::splat(b'"'));
    let backslash = v.simd_eq(u8x16::splat(b'\\'));
    let control = v.min(u8x16::splat(0x1F)).simd_eq(v);
    let mut mask = (quote | backslash | control).to_bitmask();
    if NON_ASCII {
        mask |= v.to_bitmask(); // the high bit of each byte
    }
    mask
}

/// [`string_specials`] of the (up to) 16 bytes of `s` from `j <= s.len()`,
/// and how many bytes the mask covers: 16, or fewer at the end of `s` (no
/// bit is set past it).
#[inline(always)]
pub(crate) fn string_specials_at<const NON_ASCII: bool>(s: &[u8], j: usize) -> (u32, usize) {
    if let Some(block) = s.get(j..j + BLOCK) {
        (
            string_specials::<NON_ASCII>(block.try_into().unwrap()),
            BLOCK,
        )
    } else if let Some(from) = s.len().checked_sub(BLOCK) {
        // The last 16 bytes of the text, shifted: no copy.
        let last: &[u8; BLOCK] = s[from..].try_into().unwrap();
        (
            string_specials::<NON_ASCII>(last) >> (j - from),
            s.len() - j,
        )
    } else {
        // A text shorter than a block: pad it with spaces, which are never special.
        let mut padded = [b' '; BLOCK];
        padded[..s.len() - j].copy_from_slice(&s[j..]);
        (string_specials::<NON_ASCII>(&padded), s.len() - j)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scalar<const NON_ASCII: bool>(block: &[u8]) -> u32 {
        block
            .iter()
            .enumerate()
            .filter(|&(_, &b)| b == b'"' || b == b'\\' || b < 0x20 || (NON_ASCII && b >= 0x80))
            .fold(0, |m, (k, _)| m | 1 << k)
    }

    #[test]
    fn every_byte_value_in_every_lane() {
        for b in 0..=255u8 {
            for lane in 0..BLOCK {
                let mut block = [b'a'; BLOCK];
                block[lane] = b;
                assert_eq!(string_specials::<false>(&block), scalar::<false>(&block));
                assert_eq!(string_specials::<true>(&block), scalar::<true>(&block));
            }
        }
    }

    #[test]
    fn near_the_end_of_short_and_long_texts() {
        let text: Vec<u8> = (0..40u8)
            .map(|k| [b'x', b'"', 0x80, b'\\', 0x1F][k as usize % 5])
            .collect();
        for len in 0..text.len() {
            let s = &text[..len];
            for j in 0..=len {
                let (mask, covered) = string_specials_at::<true>(s, j);
                assert_eq!(covered, (len - j).min(BLOCK));
                assert_eq!(mask, scalar::<true>(&s[j..j + covered]), "len {len} j {j}");
            }
        }
    }
}
