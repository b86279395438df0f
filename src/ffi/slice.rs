//! C `(pointer, length)` pairs to Rust slices.

use super::McpStatus;

/// The bytes `data[0..len]`. `(NULL, 0)` (and any pointer with length 0) is
/// the empty slice: Go and Swift pass NULL for empty data, and
/// `slice::from_raw_parts(NULL, 0)` would be undefined behaviour.
///
/// # Safety
/// Unless `len` is 0 or `data` is NULL, `data` must point to `len` readable
/// bytes that stay unchanged for `'a`.
pub(crate) unsafe fn bytes_in<'a>(data: *const u8, len: usize) -> Result<&'a [u8], McpStatus> {
    if len == 0 {
        Ok(&[])
    } else if data.is_null() {
        Err(McpStatus::MCP_STATUS_NULL_ARGUMENT)
    } else if len > isize::MAX as usize {
        Err(McpStatus::MCP_STATUS_INVALID_ARGUMENT)
    } else {
        // SAFETY: non-null, length in range, validity promised by the caller.
        Ok(unsafe { std::slice::from_raw_parts(data, len) })
    }
}
