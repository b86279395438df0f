//! What library the host is running against.

use std::ffi::{c_char, CStr};

use super::boundary::fault_point;

/// The ABI version of this header. It changes exactly when the ABI breaks, and
/// it is the number in the shared library's SONAME (`libmcp_stdio.so.0`).
/// Compare it with `mcp_stdio_abi_version()` at run time.
pub const MCP_STDIO_ABI_VERSION: u32 = 0;

const VERSION: &CStr =
    match CStr::from_bytes_with_nul(concat!(env!("CARGO_PKG_VERSION"), "\0").as_bytes()) {
        Ok(v) => v,
        Err(_) => panic!("the crate version contains a NUL byte"),
    };

/// The library's version, `"MAJOR.MINOR.PATCH"` (equal to `MCP_STDIO_VERSION`
/// for the header it was built with).
///
/// Returns a static NUL-terminated string: never NULL, never to be freed. Thread-safe.
#[unsafe(no_mangle)]
pub extern "C" fn mcp_stdio_version() -> *const c_char {
    ffi_boundary!(mcp_stdio_version, VERSION.as_ptr(), {
        fault_point();
        VERSION.as_ptr()
    })
}

/// The library's ABI version: equal to `MCP_STDIO_ABI_VERSION` when the
/// library and the header a program was compiled with agree. Thread-safe.
#[unsafe(no_mangle)]
pub extern "C" fn mcp_stdio_abi_version() -> u32 {
    ffi_boundary!(mcp_stdio_abi_version, MCP_STDIO_ABI_VERSION, {
        fault_point();
        MCP_STDIO_ABI_VERSION
    })
}

/// The SIMD kernels the library's JSON validation runs with: `"avx512"`,
/// `"avx2"`, or the target's baseline, `"sse2"` (x86-64), `"neon"`
/// (AArch64) or `"scalar"`. Chosen when first needed: `"avx2"` where the
/// CPU has it, or what the environment variable `MCP_STDIO_SIMD` asks for
/// (`portable` for the baseline, `avx2`, `avx512`: AVX-512 only when asked,
/// as it measured slower than AVX2 on AMD Zen 4), never above what the CPU
/// has. Results never depend on it, only speed does.
///
/// Returns a static NUL-terminated string: never NULL, never to be freed.
/// Thread-safe.
#[unsafe(no_mangle)]
pub extern "C" fn mcp_stdio_simd_level() -> *const c_char {
    ffi_boundary!(mcp_stdio_simd_level, c"scalar".as_ptr(), {
        fault_point();
        let name: &CStr = match crate::simd_level().name() {
            "avx512" => c"avx512",
            "avx2" => c"avx2",
            "sse2" => c"sse2",
            "neon" => c"neon",
            _ => c"scalar",
        };
        name.as_ptr()
    })
}
