//! The kernels every target has: 16 bytes a step through `wide` (SSE2 on
//! x86-64 and NEON on AArch64, both baseline; scalar code elsewhere). No
//! `unsafe` here: `wide` holds it.

use wide::u8x16;

use super::Kernels;

/// The portable kernels (a token: any code may use them).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Portable;

impl Kernels for Portable {
    #[inline(always)]
    fn string_specials_16<const NON_ASCII: bool>(self, block: &[u8; 16], e2: bool) -> u32 {
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

    #[inline(always)]
    fn string_specials_64<const NON_ASCII: bool>(self, run: &[u8; 64], e2: bool) -> u64 {
        let block = |k: usize| {
            let bytes: &[u8; 16] = run[k * 16..(k + 1) * 16].try_into().unwrap();
            u64::from(self.string_specials_16::<NON_ASCII>(bytes, e2)) << (k * 16)
        };
        block(0) | block(1) | block(2) | block(3)
    }

    #[inline]
    fn whitespace_end(self, s: &[u8], mut i: usize) -> usize {
        while let Some(block) = s.get(i..i + 16) {
            let v = u8x16::new(block.try_into().unwrap());
            let other = !whitespace_16(v) & 0xFFFF;
            if other != 0 {
                return i + other.trailing_zeros() as usize;
            }
            i += 16;
        }
        while s.get(i).is_some_and(|&b| super::is_whitespace(b)) {
            i += 1;
        }
        i
    }
}

/// Bit `k`: byte `k` of `v` is JSON whitespace.
#[inline(always)]
fn whitespace_16(v: u8x16) -> u32 {
    (v.simd_eq(u8x16::splat(b' '))
        | v.simd_eq(u8x16::splat(b'\n'))
        | v.simd_eq(u8x16::splat(b'\t'))
        | v.simd_eq(u8x16::splat(b'\r')))
    .to_bitmask()
}
