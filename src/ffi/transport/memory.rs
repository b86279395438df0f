//! A memory transport's bytes: the caller hands in what the peer sent
//! (`receive`, `receive_end`) and takes out what is queued for it
//! (`take_output`, `read_output`). Descriptor transports refuse these: they
//! move their bytes themselves.

use std::ptr;

use super::{lock, McpStatus, McpTransport};
use crate::ffi::buffer::McpBuffer;
use crate::ffi::slice::bytes_in;

// ---- The memory transport's bytes ----

/// Hands a memory transport `len` bytes the peer sent, in chunks of any size
/// (a message split across calls, or many in one, give the same events).
/// Take the events with `mcp_transport_next_event(t, 0, &ev)` until
/// `MCP_STATUS_NO_MESSAGE`.
///
/// Returns `MCP_STATUS_OK`, `MCP_STATUS_NULL_ARGUMENT` (t NULL, or data NULL
/// with `len` > 0), `MCP_STATUS_CLOSED` (after `mcp_transport_receive_end`,
/// or once closing has come to its end), `MCP_STATUS_INVALID_ARGUMENT` (a
/// descriptor transport, which reads by itself; `len` > PTRDIFF_MAX),
/// `MCP_STATUS_OUT_OF_MEMORY` (nothing taken) or `MCP_STATUS_POISONED`.
/// Invalidates the data of the last event. A receiving call: one thread at
/// a time. `data` is only read during the call.
///
/// # Safety
/// `t` is NULL or a live transport; `data` is NULL or points to `len`
/// readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcp_transport_receive(
    t: *mut McpTransport,
    data: *const u8,
    len: usize,
) -> McpStatus {
    ffi_boundary!(mcp_transport_receive, McpStatus::MCP_STATUS_PANIC, {
        // SAFETY: forwarded caller contract.
        let (_, mut inner) = match unsafe { lock(t) } {
            Ok(locked) => locked,
            Err(status) => return status,
        };
        if !inner.is_memory() {
            return McpStatus::MCP_STATUS_INVALID_ARGUMENT;
        }
        // SAFETY: `data` points to `len` readable bytes, by the caller's contract.
        let bytes = match unsafe { bytes_in(data, len) } {
            Ok(bytes) => bytes,
            Err(status) => return status,
        };
        match inner.core.receive(bytes) {
            Ok(()) => McpStatus::MCP_STATUS_OK,
            Err(e) => e.into(),
        }
    })
}

/// Tells a memory transport that the peer closed its end: a last line
/// without a newline still counts, then the transport closes (pending
/// requests get `MCP_EVENT_REQUEST_FAILED`, then `MCP_EVENT_CLOSED`).
///
/// Returns `MCP_STATUS_OK` (also when repeated), `MCP_STATUS_NULL_ARGUMENT`
/// (t NULL), `MCP_STATUS_INVALID_ARGUMENT` (a descriptor transport),
/// `MCP_STATUS_OUT_OF_MEMORY` (judging the last line; call again) or
/// `MCP_STATUS_POISONED`. A receiving call: one thread at a time.
///
/// # Safety
/// `t` is NULL or a live transport.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcp_transport_receive_end(t: *mut McpTransport) -> McpStatus {
    ffi_boundary!(mcp_transport_receive_end, McpStatus::MCP_STATUS_PANIC, {
        // SAFETY: forwarded caller contract.
        let (_, mut inner) = match unsafe { lock(t) } {
            Ok(locked) => locked,
            Err(status) => return status,
        };
        if !inner.is_memory() {
            return McpStatus::MCP_STATUS_INVALID_ARGUMENT;
        }
        match inner.core.receive_end() {
            Ok(()) => McpStatus::MCP_STATUS_OK,
            Err(e) => e.into(),
        }
    })
}

/// Moves everything a memory transport queued for the peer into `*out`, a
/// buffer the caller owns and frees with `mcp_buffer_free`; `{NULL, 0}` when
/// nothing is queued (nothing allocated then). Write the bytes to the peer
/// in order. For no allocation per call, use `mcp_transport_read_output`.
///
/// Returns `MCP_STATUS_OK`, `MCP_STATUS_NULL_ARGUMENT` (t or out NULL),
/// `MCP_STATUS_INVALID_ARGUMENT` (a descriptor transport, which writes by
/// itself), `MCP_STATUS_OUT_OF_MEMORY` (nothing moved) or
/// `MCP_STATUS_POISONED`. Works after `MCP_EVENT_CLOSED` too. Any thread
/// (it touches only the queue; event data stays valid).
///
/// # Safety
/// `t` is NULL or a live transport; `out` is NULL or points to writable
/// memory for one `McpBuffer` (its old contents are overwritten, not freed).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcp_transport_take_output(
    t: *mut McpTransport,
    out: *mut McpBuffer,
) -> McpStatus {
    ffi_boundary!(mcp_transport_take_output, McpStatus::MCP_STATUS_PANIC, {
        // SAFETY: forwarded caller contract.
        let (_, mut inner) = match unsafe { lock(t) } {
            Ok(locked) => locked,
            Err(status) => return status,
        };
        if out.is_null() {
            return McpStatus::MCP_STATUS_NULL_ARGUMENT;
        }
        if !inner.is_memory() {
            return McpStatus::MCP_STATUS_INVALID_ARGUMENT;
        }
        let mut bytes = Vec::new();
        if let Err(e) = inner.core.take_output(&mut bytes) {
            return e.into();
        }
        // SAFETY: `out` is non-null and writable, by the caller's contract.
        unsafe { out.write(McpBuffer::from_vec(bytes)) };
        McpStatus::MCP_STATUS_OK
    })
}

/// Copies up to `cap` bytes of what a memory transport queued for the peer
/// into the caller's `buf` and removes them from the queue; `*n` (when `n`
/// is not NULL) is set on every return to the bytes copied (0 when nothing
/// is queued). Call again until it gives 0. No allocation.
///
/// Returns `MCP_STATUS_OK`, `MCP_STATUS_NULL_ARGUMENT` (t NULL, or buf NULL
/// with `cap` > 0), `MCP_STATUS_INVALID_ARGUMENT` (a descriptor transport) or
/// `MCP_STATUS_POISONED`. Any thread (it touches only the queue; event data
/// stays valid).
///
/// # Safety
/// `t` is NULL or a live transport; `buf` is NULL or points to `cap`
/// writable bytes; `n` is NULL or points to a writable `size_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcp_transport_read_output(
    t: *mut McpTransport,
    buf: *mut u8,
    cap: usize,
    n: *mut usize,
) -> McpStatus {
    ffi_boundary!(mcp_transport_read_output, McpStatus::MCP_STATUS_PANIC, {
        let mut copied = 0;
        let status = (|| {
            // SAFETY: forwarded caller contract.
            let (_, mut inner) = unsafe { lock(t) }?;
            if buf.is_null() && cap > 0 {
                return Err(McpStatus::MCP_STATUS_NULL_ARGUMENT);
            }
            if !inner.is_memory() {
                return Err(McpStatus::MCP_STATUS_INVALID_ARGUMENT);
            }
            let queued = inner.core.output();
            copied = queued.len().min(cap);
            if copied > 0 {
                // SAFETY: `buf` holds `cap` >= `copied` writable bytes, by the
                // caller's contract, and cannot overlap the transport's queue.
                unsafe { ptr::copy_nonoverlapping(queued.as_ptr(), buf, copied) };
            }
            inner.core.consume(copied);
            Ok(())
        })();
        if !n.is_null() {
            // SAFETY: non-null and writable, by the caller's contract.
            unsafe { n.write(copied) };
        }
        match status {
            Ok(()) => McpStatus::MCP_STATUS_OK,
            Err(status) => status,
        }
    })
}
