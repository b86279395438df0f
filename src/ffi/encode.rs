//! `mcp_encode`: the C face of [`crate::encode_into`].

use super::boundary::fault_point;
use super::slice::bytes_in;
use super::{McpBuffer, McpStatus};
use crate::{encode_into, EncodeOptions};

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
/// `(NULL, 0)` included), `MCP_STATUS_INVALID_ARGUMENT` (unknown flag bits, or
/// `len` > PTRDIFF_MAX) or `MCP_STATUS_OUT_OF_MEMORY`. `json` is not kept.
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
        if flags & !MCP_ENCODE_ASCII != 0 {
            return McpStatus::MCP_STATUS_INVALID_ARGUMENT;
        }
        let options = EncodeOptions {
            ascii: flags & MCP_ENCODE_ASCII != 0,
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
