//! C `(pointer, length)` pairs to Rust slices, and Rust slices lent to C.

use std::ptr;

use super::McpStatus;

/// A run of bytes lent to the caller: `data[0..len]`, not NUL-terminated.
/// `{NULL, 0}` means absent; a present slice is never empty. The function
/// that fills it says whose bytes they are and how long they stay valid;
/// never free them.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct McpSlice {
    /// The first byte, or NULL when absent.
    pub data: *const u8,
    /// The number of bytes at `data` (0 when absent).
    pub len: usize,
}

impl From<Option<&[u8]>> for McpSlice {
    fn from(bytes: Option<&[u8]>) -> Self {
        match bytes {
            Some(b) if !b.is_empty() => McpSlice {
                data: b.as_ptr(),
                len: b.len(),
            },
            _ => McpSlice {
                data: ptr::null(),
                len: 0,
            },
        }
    }
}

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

/// The writable bytes `data[0..cap]`, the output twin of [`bytes_in`]:
/// `(NULL, 0)` (and any pointer with capacity 0) is the empty slice.
///
/// # Safety
/// Unless `cap` is 0 or `data` is NULL, `data` must point to `cap`
/// writable bytes, not used by anything else for `'a`.
pub(crate) unsafe fn bytes_out<'a>(data: *mut u8, cap: usize) -> Result<&'a mut [u8], McpStatus> {
    if cap == 0 {
        Ok(&mut [])
    } else if data.is_null() {
        Err(McpStatus::MCP_STATUS_NULL_ARGUMENT)
    } else if cap > isize::MAX as usize {
        Err(McpStatus::MCP_STATUS_INVALID_ARGUMENT)
    } else {
        // SAFETY: non-null, length in range, validity promised by the caller.
        Ok(unsafe { std::slice::from_raw_parts_mut(data, cap) })
    }
}
