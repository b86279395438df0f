//! `mcp_transport_open_handles` ([`Connection::open_handles`] and its
//! kin) and `mcp_transport_poll_handles` for event loops (Windows).

use std::ffi::c_void;
use std::os::windows::io::{BorrowedHandle, FromRawHandle, OwnedHandle};

use super::{hand_out, poll_set, McpStatus, McpTransport};
use crate::connection::MAX_WAIT_HANDLES;
use crate::Connection;

/// `mcp_transport_open_handles` flag: the caller keeps owning the handles.
/// The transport never closes them.
pub const MCP_TRANSPORT_BORROW_HANDLES: u32 = 1 << 0;

/// The most handles `mcp_transport_poll_handles` gives: 5 (the read, the
/// write, the wake event, and for a spawned server its stderr and its
/// process).
pub const MCP_TRANSPORT_MAX_POLL_HANDLES: usize = 5;
const _: () = assert!(MCP_TRANSPORT_MAX_POLL_HANDLES == MAX_WAIT_HANDLES);

fn is_handle(h: *mut c_void) -> bool {
    !h.is_null() && h as isize != -1
}

/// Windows: creates a transport that reads the peer's messages from
/// `read` and writes to `write` (`HANDLE`s: pipes, a console, files; the
/// counterpart of `mcp_transport_open_fds`). Any kind of handle works,
/// opened without `FILE_FLAG_OVERLAPPED`: a thread per direction does the
/// blocking reads and writes. Owned handles are closed by the transport
/// (the write one once closing has written what it took); with
/// `MCP_TRANSPORT_BORROW_HANDLES` they stay the caller's, and must stay
/// open until the transport is freed, and for as long as its reading
/// thread may still be blocked in a read (until the peer writes or ends
/// its stream: the thread is not joined at free).
///
/// Returns `MCP_STATUS_OK` and the transport in `*out`, or, with nothing
/// changed (the handles still the caller's): `MCP_STATUS_NULL_ARGUMENT`
/// (out NULL), `MCP_STATUS_UNKNOWN_FLAGS`, `MCP_STATUS_INVALID_ARGUMENT`
/// (a handle NULL or `INVALID_HANDLE_VALUE`), `MCP_STATUS_OUT_OF_MEMORY`;
/// or `MCP_STATUS_IO_ERROR` (a thread or an event could not be made;
/// `GetLastError()` says why), after which owned handles were closed.
/// Thread-safe. Windows only.
///
/// # Safety
/// `read` and `write` are live handles (owned by the transport from now on
/// unless borrowed); `out` is NULL or points to writable memory for one
/// pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcp_transport_open_handles(
    read: *mut c_void,
    write: *mut c_void,
    flags: u32,
    out: *mut *mut McpTransport,
) -> McpStatus {
    ffi_boundary!(mcp_transport_open_handles, McpStatus::MCP_STATUS_PANIC, {
        super::fault_point();
        if out.is_null() {
            return McpStatus::MCP_STATUS_NULL_ARGUMENT;
        }
        if flags & !MCP_TRANSPORT_BORROW_HANDLES != 0 {
            return McpStatus::MCP_STATUS_UNKNOWN_FLAGS;
        }
        if !is_handle(read) || !is_handle(write) {
            return McpStatus::MCP_STATUS_INVALID_ARGUMENT;
        }
        let made = if flags & MCP_TRANSPORT_BORROW_HANDLES != 0 {
            // SAFETY: live handles the caller keeps open for the
            // transport's life, by its contract.
            let (read, write) = unsafe {
                (
                    BorrowedHandle::borrow_raw(read),
                    BorrowedHandle::borrow_raw(write),
                )
            };
            McpTransport::make(|| Connection::open_borrowed_handles(read, write))
        } else {
            // SAFETY: live handles handed over to the transport, by the
            // caller's contract; given back (not closed) on failure.
            let (r, w) = unsafe {
                (
                    OwnedHandle::from_raw_handle(read),
                    OwnedHandle::from_raw_handle(write),
                )
            };
            let mut kept = Some((r, w));
            let made = McpTransport::make(|| {
                let (r, w) = kept.take().expect("made once");
                Connection::open_handles(r, w)
            });
            if made.is_err() {
                // `make` failed before the connection took the handles:
                // they are the caller's again. (A connection that could
                // not start its threads closed them: see the doc.)
                if let Some((r, w)) = kept {
                    let _ = (
                        std::os::windows::io::IntoRawHandle::into_raw_handle(r),
                        std::os::windows::io::IntoRawHandle::into_raw_handle(w),
                    );
                }
            }
            made
        };
        // SAFETY: `out` is non-null and writable, by the caller's contract.
        unsafe { hand_out(made, out) }
    })
}

/// Windows, for event loops (the counterpart of `mcp_transport_poll_fds`):
/// fills `handles[0..*n]` with the `HANDLE`s to wait on now (events and a
/// process handle: pass them to `WaitForMultipleObjects`, or register them
/// with your loop) and `*timeout_ms` with the milliseconds to the
/// transport's next deadline (rounded up; -1: none; 0: due now). Wait for
/// any of them or the time, then call `mcp_transport_next_event(t, 0, &ev)`
/// until it returns `MCP_STATUS_NO_MESSAGE`, and ask again: the set
/// changes. Sends from other threads signal one of them. The handles are
/// the transport's: do not close them; they stay valid until the next
/// receiving call.
///
/// A memory transport gives 0 handles. At most
/// `MCP_TRANSPORT_MAX_POLL_HANDLES`. Returns `MCP_STATUS_OK`,
/// `MCP_STATUS_NULL_ARGUMENT` (t, n or timeout_ms NULL, or handles NULL with
/// `cap` > 0), `MCP_STATUS_INVALID_ARGUMENT` (`cap` too small: `*n` is set to
/// the number needed) or `MCP_STATUS_POISONED`. `*n` is written on every
/// return when `n` is not NULL. A receiving call: one thread at a time.
/// Windows only.
///
/// # Safety
/// `t` is NULL or a live transport; `handles` is NULL or points to `cap`
/// writable pointers; `n` and `timeout_ms` are NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcp_transport_poll_handles(
    t: *mut McpTransport,
    handles: *mut *mut c_void,
    cap: usize,
    n: *mut usize,
    timeout_ms: *mut i32,
) -> McpStatus {
    ffi_boundary!(mcp_transport_poll_handles, McpStatus::MCP_STATUS_PANIC, {
        let empty = [std::ptr::null_mut(); MAX_WAIT_HANDLES];
        // SAFETY: forwarded caller contract.
        unsafe {
            poll_set(
                t,
                handles,
                cap,
                n,
                timeout_ms,
                empty,
                |shared, inner, set, cap| shared.wait_set_locked(inner, set, cap),
            )
        }
    })
}
