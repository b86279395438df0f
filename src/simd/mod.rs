//! The SIMD kernels, chosen when the program runs: the byte classifications
//! the JSON validator spends its time in, at the widest level the CPU offers.
//!
//! - [`portable`]: 16 bytes a step through `wide` (SSE2 on x86-64, NEON on
//!   AArch64: both baseline, so always there; plain scalar code elsewhere).
//!   No `unsafe`.
//! - `x86` (x86-64): AVX2 (32 bytes a step) and AVX-512BW (64 bytes a step,
//!   masks straight from the compare). Every `unsafe` of the kernels is
//!   there, each with its safety argument.
//!
//! The level is chosen once per process, on first use: AVX2 where the CPU
//! has it (else the portable kernels), or what `MCP_STDIO_SIMD` asks for
//! (`portable`, `avx2`, `avx512`; never above what the CPU has), or what
//! [`force_simd_level`] sets. AVX-512 is not chosen by itself: on this
//! project's AMD Zen 4 machine it measured 4-11% slower than AVX2 on every
//! corpus (a 512-bit compare is two 256-bit halves there, and its mask
//! costs more to move than AVX2's), so it runs only when asked for
//! (docs/PERFORMANCE.md). Code
//! that uses the kernels is written once, generic over [`Kernels`], and run
//! through [`dispatch`], which compiles it once per level, each copy with
//! its target features enabled, and picks the copy at run time: one branch
//! per call, none per byte.

use std::sync::atomic::{AtomicU8, Ordering};

pub(crate) mod portable;
#[cfg(target_arch = "x86_64")]
mod x86;

/// JSON's insignificant whitespace: space, tab, line feed, carriage return.
/// Nothing else. The kernels' scalar tails and the `json` module share it.
#[inline]
pub(crate) fn is_whitespace(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

/// A level of SIMD kernels, from the narrowest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum SimdLevel {
    /// 16 bytes a step with the target's baseline: SSE2 on x86-64, NEON on
    /// AArch64, scalar code elsewhere. Always available.
    Portable,
    /// x86-64 with AVX2 (and BMI1, BMI2, LZCNT, POPCNT): 32 bytes a step.
    Avx2,
    /// x86-64 with AVX-512F and AVX-512BW (and what `Avx2` needs): 64 bytes
    /// a step.
    Avx512,
}

impl SimdLevel {
    /// Every level, from the narrowest.
    pub(crate) const ALL_LEVELS: [SimdLevel; 3] =
        [SimdLevel::Portable, SimdLevel::Avx2, SimdLevel::Avx512];

    /// Its name: `"sse2"`, `"neon"` or `"scalar"` for `Portable` (what it
    /// is on this target), `"avx2"`, `"avx512"`.
    pub fn name(self) -> &'static str {
        match self {
            SimdLevel::Portable if cfg!(target_arch = "x86_64") => "sse2",
            SimdLevel::Portable if cfg!(target_arch = "aarch64") => "neon",
            SimdLevel::Portable => "scalar",
            SimdLevel::Avx2 => "avx2",
            SimdLevel::Avx512 => "avx512",
        }
    }

    /// Whether this CPU can run the level (Miri runs only `Portable`).
    pub fn is_supported(self) -> bool {
        match self {
            SimdLevel::Portable => true,
            #[cfg(all(target_arch = "x86_64", not(miri)))]
            SimdLevel::Avx2 => x86::has_avx2(),
            #[cfg(all(target_arch = "x86_64", not(miri)))]
            SimdLevel::Avx512 => x86::has_avx512(),
            #[allow(unreachable_patterns)]
            _ => false,
        }
    }

    fn from_u8(v: u8) -> SimdLevel {
        match v {
            1 => SimdLevel::Avx2,
            2 => SimdLevel::Avx512,
            _ => SimdLevel::Portable,
        }
    }
}

/// The level in use, `UNSET` before the first use.
static LEVEL: AtomicU8 = AtomicU8::new(UNSET);
const UNSET: u8 = u8::MAX;

/// The level the kernels run at: chosen on first use (AVX2 where the CPU
/// has it, or what the environment variable `MCP_STDIO_SIMD` asks for:
/// `portable`, `avx2` or `avx512`, never above what the CPU has), then the
/// same until [`force_simd_level`].
pub fn simd_level() -> SimdLevel {
    match LEVEL.load(Ordering::Relaxed) {
        UNSET => {
            let level = initial_level();
            LEVEL.store(level as u8, Ordering::Relaxed);
            level
        }
        v => SimdLevel::from_u8(v),
    }
}

/// What `MCP_STDIO_SIMD` asks for (AVX2 when it asks for nothing), at most
/// the widest level the CPU has.
fn initial_level() -> SimdLevel {
    let best = SimdLevel::ALL_LEVELS
        .into_iter()
        .rev()
        .find(|l| l.is_supported())
        .unwrap_or(SimdLevel::Portable);
    let asked = std::env::var("MCP_STDIO_SIMD").ok().and_then(|name| {
        SimdLevel::ALL_LEVELS
            .into_iter()
            .find(|l| l.name() == name || (name == "portable" && *l == SimdLevel::Portable))
    });
    asked.unwrap_or(SimdLevel::Avx2).min(best)
}

/// Makes every later call of the library run the kernels of `level`
/// (tests, fuzzing and benchmarks use it to prove each level, and to show
/// the portable floor). Returns `false`, changing nothing, when the CPU
/// lacks the level. Results never depend on the level, only speed does.
pub fn force_simd_level(level: SimdLevel) -> bool {
    if !level.is_supported() {
        return false;
    }
    LEVEL.store(level as u8, Ordering::Relaxed);
    true
}

/// The byte classifications, one implementation per level. Bit `k` of a
/// mask is byte `k` of the block or run.
pub(crate) trait Kernels: Copy {
    /// Bit `k` is set when byte `k` is `"`, `\`, a control character
    /// (below 0x20), when `NON_ASCII` a byte of 0x80 or above, and when
    /// `e2` the byte 0xE2 (which starts U+2028 and U+2029): what a JSON
    /// string scanner must stop at.
    fn string_specials_16<const NON_ASCII: bool>(self, block: &[u8; 16], e2: bool) -> u32;

    /// [`Kernels::string_specials_16`] of 64 bytes.
    fn string_specials_64<const NON_ASCII: bool>(self, run: &[u8; 64], e2: bool) -> u64;

    /// The index of the first byte at or after `i` that is not JSON
    /// whitespace (space, tab, LF, CR), or `s.len()`.
    fn whitespace_end(self, s: &[u8], i: usize) -> usize;
}

/// Code to run with the kernels of the level in use (a closure cannot be
/// generic over them).
pub(crate) trait WithKernels {
    type Output;
    fn run<K: Kernels>(self, kernels: K) -> Self::Output;
}

/// Runs `f` with the kernels of [`simd_level`], in a copy of it compiled
/// for that level (`f.run` and what it inlines get the level's target
/// features).
#[inline]
pub(crate) fn dispatch<F: WithKernels>(f: F) -> F::Output {
    // SAFETY: `LEVEL` only ever holds a level the CPU has: the initial one
    // is at most the best supported, and `force_simd_level` checks.
    unsafe { run_at(simd_level(), f) }
}

/// Runs `f` at `level` (which the CPU must have): for tests that compare
/// the levels side by side without changing the process's level.
#[cfg(test)]
pub(crate) fn dispatch_at<F: WithKernels>(level: SimdLevel, f: F) -> Option<F::Output> {
    // SAFETY: the CPU has the level (checked first).
    level.is_supported().then(|| unsafe { run_at(level, f) })
}

/// Runs `f` with the kernels of `level`.
///
/// # Safety
/// The CPU has `level` ([`SimdLevel::is_supported`]).
#[inline(always)]
unsafe fn run_at<F: WithKernels>(level: SimdLevel, f: F) -> F::Output {
    match level {
        // SAFETY: the caller's promise.
        #[cfg(all(target_arch = "x86_64", not(miri)))]
        SimdLevel::Avx512 => unsafe { x86::run_avx512(f) },
        // SAFETY: the caller's promise.
        #[cfg(all(target_arch = "x86_64", not(miri)))]
        SimdLevel::Avx2 => unsafe { x86::run_avx2(f) },
        _ => f.run(portable::Portable),
    }
}

#[cfg(test)]
mod tests;
