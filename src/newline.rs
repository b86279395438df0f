//! Where lines end: the first and the last `\n` of some bytes. The reader's
//! one way of searching for a line end, tuned for what it sees: short lines
//! and tiny chunks (found inline, without a call) as well as megabytes
//! (memchr's SIMD, with run-time CPU detection).

use wide::u8x32;

/// Bytes per block of the inline search: two SSE2 compares (or NEON) a step.
const BLOCK: usize = 32;

/// The inline search covers this many bytes before handing over to memchr:
/// a short line costs less than a call.
const INLINE: usize = 8 * BLOCK;

/// The index of the first `\n` in `s`, if any.
#[inline]
pub(crate) fn first_newline(s: &[u8]) -> Option<usize> {
    let mut i = 0;
    while let Some(block) = s.get(i..i + BLOCK) {
        if i == INLINE {
            return memchr::memchr(b'\n', &s[i..]).map(|k| i + k);
        }
        let v = u8x32::new(block.try_into().unwrap());
        let newlines = v.simd_eq(u8x32::splat(b'\n')).to_bitmask();
        if newlines != 0 {
            return Some(i + newlines.trailing_zeros() as usize);
        }
        i += BLOCK;
    }
    s[i..].iter().position(|&b| b == b'\n').map(|k| i + k)
}

/// The index of the last `\n` in `s`, if any.
#[inline]
pub(crate) fn last_newline(s: &[u8]) -> Option<usize> {
    if s.len() < BLOCK {
        s.iter().rposition(|&b| b == b'\n') // a few bytes: cheaper than a call
    } else {
        memchr::memrchr(b'\n', s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_and_the_last_newline_are_found_at_every_length() {
        for len in [0, 1, 15, 16, 17, 255, 256, 257, 300, 1000] {
            let plain = vec![b'x'; len];
            assert_eq!(first_newline(&plain), None);
            assert_eq!(last_newline(&plain), None);
            // Under Miri (a thousand times slower) the newline goes only
            // where the search changes path: every lane of the first block,
            // either side of every block boundary (and of the handover to
            // memchr at 256), and the last bytes, where reads would overrun.
            let ats = (0..len).filter(|&at| {
                !cfg!(miri) || at < 33 || at % 32 == 0 || at % 32 == 31 || at + 33 > len
            });
            for at in ats {
                let mut s = plain.clone();
                s[at] = b'\n';
                assert_eq!(first_newline(&s), Some(at), "len {len}");
                assert_eq!(last_newline(&s), Some(at), "len {len}");
                if at + 1 < len {
                    s[len - 1] = b'\n';
                    assert_eq!(first_newline(&s), Some(at), "len {len}");
                    assert_eq!(last_newline(&s), Some(len - 1), "len {len}");
                }
            }
        }
    }
}
