//! `mcp_encode`: the C face of [`crate::encode_into`].

use super::boundary::fault_point;
use super::slice::{bytes_in, bytes_out};
use super::{McpBuffer, McpStatus};
use crate::{encode_bound, encode_into, encode_to_slice, EncodeOptions, Error};

/// Flag for `mcp_encode`: escape every non-ASCII character (and DEL) as
/// `\uXXXX`, lowercase hex, characters above U+FFFF as a surrogate pair, so
/// the line is pure printable ASCII (like Python's `json.dumps` default).
pub const MCP_ENCODE_ASCII: u32 = 1 << 0;

/// Encodes one JSON text as one line for the stdio transport: validated (RFC
/// 8259, UTF-8), compact (no whitespace outside strings), ending in exactly
/// one `\n`. Every token is kept byte for byte, except that raw U+2028 and
/// U+2029 in strings become `\u2028` and `\u2029`. Whitespace around the value
/// is allowed. `flags` is 0 or `MCP_ENCODE_ASCII`.
///
/// Returns `MCP_STATUS_OK` and fills `*out` with a new buffer the caller owns
/// (free it with `mcp_buffer_free`); or, leaving `*out` untouched:
/// `MCP_STATUS_NULL_ARGUMENT` (out NULL, or json NULL with `len` > 0),
/// `MCP_STATUS_INVALID_JSON` (not exactly one JSON text, not UTF-8, empty —
/// `(NULL, 0)` included), `MCP_STATUS_UNKNOWN_FLAGS`,
/// `MCP_STATUS_INVALID_ARGUMENT` (`len` > PTRDIFF_MAX) or
/// `MCP_STATUS_OUT_OF_MEMORY`. `json` is not kept.
/// Thread-safe: it touches no shared state.
///
/// # Safety
/// `json` is NULL or points to `len` readable bytes; `out` is NULL or points
/// to writable memory for one `McpBuffer` (its old content is overwritten, not freed).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcp_encode(
    json: *const u8,
    len: usize,
    flags: u32,
    out: *mut McpBuffer,
) -> McpStatus {
    ffi_boundary!(mcp_encode, McpStatus::MCP_STATUS_PANIC, {
        fault_point();
        if out.is_null() {
            return McpStatus::MCP_STATUS_NULL_ARGUMENT;
        }
        // SAFETY: `json` points to `len` readable bytes, by the caller's contract.
        let input = match unsafe { bytes_in(json, len) } {
            Ok(input) => input,
            Err(status) => return status,
        };
        let options = match options(flags) {
            Ok(options) => options,
            Err(status) => return status,
        };
        let mut line = Vec::new();
        match encode_into(input, options, &mut line) {
            Ok(()) => {
                // SAFETY: `out` is non-null and writable, by the caller's contract.
                unsafe { out.write(McpBuffer::from_vec(line)) };
                McpStatus::MCP_STATUS_OK
            }
            Err(e) => e.into(),
        }
    })
}

/// The options of `flags`, or `MCP_STATUS_UNKNOWN_FLAGS` for unknown bits.
fn options(flags: u32) -> Result<EncodeOptions, McpStatus> {
    if flags & !MCP_ENCODE_ASCII != 0 {
        return Err(McpStatus::MCP_STATUS_UNKNOWN_FLAGS);
    }
    Ok(EncodeOptions {
        ascii: flags & MCP_ENCODE_ASCII != 0,
    })
}

/// `mcp_encode` into a buffer the caller owns and reuses: nothing is
/// allocated. The line (with its `\n`) is written to `out[0..*out_len]`.
/// A buffer of `mcp_encode_bound(len, flags)` bytes is always long enough.
///
/// Returns `MCP_STATUS_OK`; or `MCP_STATUS_BUFFER_TOO_SMALL` with the length
/// the line needs in `*out_len` (`out`'s bytes are then unspecified: the
/// encoder may have written some); `MCP_STATUS_NULL_ARGUMENT` (out_len
/// NULL, json NULL with `len` > 0, out NULL with `cap` > 0),
/// `MCP_STATUS_INVALID_JSON`, `MCP_STATUS_UNKNOWN_FLAGS`,
/// `MCP_STATUS_INVALID_ARGUMENT` (`len` or `cap` > PTRDIFF_MAX), with
/// `*out_len` 0. `json` and `out`
/// must not overlap. Thread-safe: it touches no shared state.
///
/// # Safety
/// `json` is NULL or points to `len` readable bytes; `out` is NULL or points
/// to `cap` writable bytes; `out_len` is NULL or points to a writable
/// `size_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcp_encode_to(
    json: *const u8,
    len: usize,
    flags: u32,
    out: *mut u8,
    cap: usize,
    out_len: *mut usize,
) -> McpStatus {
    ffi_boundary!(mcp_encode_to, McpStatus::MCP_STATUS_PANIC, {
        fault_point();
        if out_len.is_null() {
            return McpStatus::MCP_STATUS_NULL_ARGUMENT;
        }
        // SAFETY: non-null and writable, by the caller's contract.
        unsafe { out_len.write(0) };
        // SAFETY: the caller's contract for `json` and `out`.
        let (input, output) = match unsafe { (bytes_in(json, len), bytes_out(out, cap)) } {
            (Ok(input), Ok(output)) => (input, output),
            (Err(status), _) | (_, Err(status)) => return status,
        };
        let options = match options(flags) {
            Ok(options) => options,
            Err(status) => return status,
        };
        let (status, written) = match encode_to_slice(input, options, output) {
            Ok(n) => (McpStatus::MCP_STATUS_OK, n),
            Err(Error::BufferTooSmall(needed)) => (McpStatus::MCP_STATUS_BUFFER_TOO_SMALL, needed),
            Err(e) => (e.into(), 0),
        };
        // SAFETY: as above.
        unsafe { out_len.write(written) };
        status
    })
}

/// The longest line `mcp_encode_to` can make of `len` bytes of JSON with
/// `flags` (unknown bits count as `MCP_ENCODE_ASCII`): `2 * len + 1`, or
/// `6 * len + 1` with `MCP_ENCODE_ASCII` (DEL becomes `\u007f`), at most
/// SIZE_MAX. A buffer that long never gets `MCP_STATUS_BUFFER_TOO_SMALL`.
/// Thread-safe.
#[unsafe(no_mangle)]
pub extern "C" fn mcp_encode_bound(len: usize, flags: u32) -> usize {
    ffi_boundary!(mcp_encode_bound, usize::MAX, {
        fault_point();
        encode_bound(len, EncodeOptions { ascii: flags != 0 })
    })
}
