//! The x86-64 kernels beyond the baseline: AVX2 and AVX-512BW.
//!
//! Every `unsafe` of the kernels lives here. There are two kinds:
//! - calling a `#[target_feature]` function from code that lacks the
//!   feature: sound only on a CPU that has it. The tokens [`Avx2`] and
//!   [`Avx512`] carry that proof: they are made only by [`run_avx2`] and
//!   [`run_avx512`], whose callers have checked the CPU;
//! - unaligned loads of 32 or 64 bytes: sound when the bytes are in bounds,
//!   which the array types of the arguments guarantee.

use std::arch::x86_64::*;

use super::portable::Portable;
use super::{Kernels, WithKernels};

/// The CPU has what [`Avx2`] uses.
pub(super) fn has_avx2() -> bool {
    is_x86_feature_detected!("avx2")
        && is_x86_feature_detected!("bmi1")
        && is_x86_feature_detected!("bmi2")
        && is_x86_feature_detected!("lzcnt")
        && is_x86_feature_detected!("popcnt")
}

/// The CPU has what [`Avx512`] uses.
pub(super) fn has_avx512() -> bool {
    has_avx2() && is_x86_feature_detected!("avx512f") && is_x86_feature_detected!("avx512bw")
}

/// Runs `f` with the AVX2 kernels, compiled with AVX2 enabled.
///
/// # Safety
/// The CPU has AVX2, BMI1, BMI2, LZCNT and POPCNT ([`has_avx2`]).
#[inline]
pub(super) unsafe fn run_avx2<F: WithKernels>(f: F) -> F::Output {
    #[target_feature(enable = "avx2,bmi1,bmi2,lzcnt,popcnt")]
    fn run<F: WithKernels>(f: F) -> F::Output {
        f.run(Avx2(()))
    }
    // SAFETY: the caller has checked the CPU.
    unsafe { run(f) }
}

/// Runs `f` with the AVX-512 kernels, compiled with AVX-512 enabled.
///
/// # Safety
/// The CPU has AVX-512F and AVX-512BW and what [`run_avx2`] needs
/// ([`has_avx512`]).
#[inline]
pub(super) unsafe fn run_avx512<F: WithKernels>(f: F) -> F::Output {
    #[target_feature(enable = "avx512f,avx512bw,avx2,bmi1,bmi2,lzcnt,popcnt")]
    fn run<F: WithKernels>(f: F) -> F::Output {
        f.run(Avx512(()))
    }
    // SAFETY: the caller has checked the CPU.
    unsafe { run(f) }
}

/// The AVX2 kernels. Only [`run_avx2`] makes one: where there is an
/// `Avx2`, the CPU has AVX2.
#[derive(Debug, Clone, Copy)]
pub(super) struct Avx2(());

/// The AVX-512 kernels. Only [`run_avx512`] makes one: where there is an
/// `Avx512`, the CPU has AVX-512F and AVX-512BW.
#[derive(Debug, Clone, Copy)]
pub(super) struct Avx512(());

impl Kernels for Avx2 {
    #[inline(always)]
    fn string_specials_16<const NON_ASCII: bool>(self, block: &[u8; 16], e2: bool) -> u32 {
        Portable.string_specials_16::<NON_ASCII>(block, e2)
    }

    #[inline(always)]
    fn string_specials_64<const NON_ASCII: bool>(self, run: &[u8; 64], e2: bool) -> u64 {
        let (lo, hi) = run.split_at(32);
        // SAFETY: `self` proves the CPU has AVX2.
        unsafe {
            u64::from(specials_32::<NON_ASCII>(lo.try_into().unwrap(), e2))
                | u64::from(specials_32::<NON_ASCII>(hi.try_into().unwrap(), e2)) << 32
        }
    }

    #[inline(always)]
    fn whitespace_end(self, s: &[u8], i: usize) -> usize {
        // SAFETY: `self` proves the CPU has AVX2.
        unsafe { whitespace_end_avx2(s, i) }
    }
}

impl Kernels for Avx512 {
    #[inline(always)]
    fn string_specials_16<const NON_ASCII: bool>(self, block: &[u8; 16], e2: bool) -> u32 {
        Portable.string_specials_16::<NON_ASCII>(block, e2)
    }

    #[inline(always)]
    fn string_specials_64<const NON_ASCII: bool>(self, run: &[u8; 64], e2: bool) -> u64 {
        // SAFETY: `self` proves the CPU has AVX-512F and AVX-512BW.
        unsafe { specials_64::<NON_ASCII>(run, e2) }
    }

    #[inline(always)]
    fn whitespace_end(self, s: &[u8], i: usize) -> usize {
        // SAFETY: `self` proves the CPU has AVX-512F, AVX-512BW and AVX2.
        unsafe { whitespace_end_avx512(s, i) }
    }
}

/// `Kernels::string_specials_16` of 32 bytes.
#[target_feature(enable = "avx2")]
#[inline]
fn specials_32<const NON_ASCII: bool>(bytes: &[u8; 32], e2: bool) -> u32 {
    // SAFETY: 32 readable bytes (the array); loadu needs no alignment.
    let v = unsafe { _mm256_loadu_si256(bytes.as_ptr().cast()) };
    let quote = _mm256_cmpeq_epi8(v, _mm256_set1_epi8(b'"' as i8));
    let backslash = _mm256_cmpeq_epi8(v, _mm256_set1_epi8(b'\\' as i8));
    let control = _mm256_cmpeq_epi8(_mm256_min_epu8(v, _mm256_set1_epi8(0x1F)), v);
    let mut lanes = _mm256_or_si256(_mm256_or_si256(quote, backslash), control);
    if NON_ASCII {
        lanes = _mm256_or_si256(lanes, v); // movemask takes the high bits
    } else if e2 {
        lanes = _mm256_or_si256(lanes, _mm256_cmpeq_epi8(v, _mm256_set1_epi8(0xE2u8 as i8)));
    }
    _mm256_movemask_epi8(lanes) as u32
}

/// Bit `k`: byte `k` of the 32 is JSON whitespace.
#[target_feature(enable = "avx2")]
#[inline]
fn whitespace_32(bytes: &[u8; 32]) -> u32 {
    // SAFETY: 32 readable bytes (the array).
    let v = unsafe { _mm256_loadu_si256(bytes.as_ptr().cast()) };
    let eq = |b: u8| _mm256_cmpeq_epi8(v, _mm256_set1_epi8(b as i8));
    let ws = _mm256_or_si256(
        _mm256_or_si256(eq(b' '), eq(b'\n')),
        _mm256_or_si256(eq(b'\t'), eq(b'\r')),
    );
    _mm256_movemask_epi8(ws) as u32
}

/// `Kernels::whitespace_end`, 32 bytes a step.
#[target_feature(enable = "avx2")]
#[inline]
fn whitespace_end_avx2(s: &[u8], mut i: usize) -> usize {
    while let Some(window) = s.get(i..i + 32) {
        let other = !whitespace_32(window.try_into().unwrap());
        if other != 0 {
            return i + other.trailing_zeros() as usize;
        }
        i += 32;
    }
    Portable.whitespace_end(s, i)
}

/// `Kernels::string_specials_16` of 64 bytes, the mask straight from the
/// compares.
#[target_feature(enable = "avx512f,avx512bw")]
#[inline]
fn specials_64<const NON_ASCII: bool>(run: &[u8; 64], e2: bool) -> u64 {
    // SAFETY: 64 readable bytes (the array); loadu needs no alignment.
    let v = unsafe { _mm512_loadu_si512(run.as_ptr().cast()) };
    let mut mask = _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8(b'"' as i8))
        | _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8(b'\\' as i8))
        | _mm512_cmple_epu8_mask(v, _mm512_set1_epi8(0x1F));
    if NON_ASCII {
        mask |= _mm512_movepi8_mask(v); // the high bits
    } else if e2 {
        mask |= _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8(0xE2u8 as i8));
    }
    mask
}

/// `Kernels::whitespace_end`, 64 bytes a step, the rest 32 at a time.
#[target_feature(enable = "avx512f,avx512bw,avx2")]
#[inline]
fn whitespace_end_avx512(s: &[u8], mut i: usize) -> usize {
    while let Some(window) = s.get(i..i + 64) {
        // SAFETY: 64 readable bytes (the window).
        let v = unsafe { _mm512_loadu_si512(window.as_ptr().cast()) };
        let eq = |b: u8| _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8(b as i8));
        let other = !(eq(b' ') | eq(b'\n') | eq(b'\t') | eq(b'\r'));
        if other != 0 {
            return i + other.trailing_zeros() as usize;
        }
        i += 64;
    }
    whitespace_end_avx2(s, i)
}
