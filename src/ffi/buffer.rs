//! `McpBuffer`: bytes Rust allocated and hands to C, freed by Rust.

use std::ptr;

use super::boundary::fault_point;

/// Bytes the library allocated for the caller (the output of `mcp_encode`).
/// The caller owns them and frees them with `mcp_buffer_free`, never `free()`.
/// `{NULL, 0}` is the empty buffer.
#[repr(C)]
#[derive(Debug)]
pub struct McpBuffer {
    /// The bytes, not NUL-terminated; NULL when empty.
    pub data: *mut u8,
    /// The number of bytes at `data`.
    pub len: usize,
}

impl McpBuffer {
    /// Hands `bytes` over to C.
    pub(crate) fn from_vec(bytes: Vec<u8>) -> McpBuffer {
        if bytes.is_empty() {
            return McpBuffer {
                data: ptr::null_mut(),
                len: 0,
            };
        }
        let boxed = bytes.into_boxed_slice();
        let len = boxed.len();
        McpBuffer {
            data: Box::into_raw(boxed).cast::<u8>(),
            len,
        }
    }
}

/// Frees the bytes of `*buf` and resets it to `{NULL, 0}`, so freeing the same
/// buffer twice is harmless. `buf` NULL, or `buf->data` NULL, is a no-op.
///
/// # Safety
/// `buf` is NULL or points to an `McpBuffer` that is `{NULL, 0}` or was filled
/// by this library and not changed since. Thread-safe for different buffers.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcp_buffer_free(buf: *mut McpBuffer) {
    ffi_boundary!(mcp_buffer_free, (), {
        // SAFETY: NULL or valid and writable, by the caller's contract.
        let Some(buf) = (unsafe { buf.as_mut() }) else {
            return;
        };
        if !buf.data.is_null() {
            let slice = ptr::slice_from_raw_parts_mut(buf.data, buf.len);
            // SAFETY: `data`/`len` come from `McpBuffer::from_vec` (a boxed
            // slice of exactly `len` bytes) and were not freed before, as the
            // reset below makes sure.
            drop(unsafe { Box::from_raw(slice) });
        }
        buf.data = ptr::null_mut();
        buf.len = 0;
        fault_point();
    })
}
