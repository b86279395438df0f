//! `mcp_transport_open_fds` ([`Connection::open_fds`] and its kin) and
//! `mcp_transport_poll_fds` for event loops (POSIX).

use std::ffi::c_int;
use std::os::fd::{BorrowedFd, FromRawFd, IntoRawFd, OwnedFd};

use super::super::fd::set_errno;
use super::{hand_out, poll_set, McpStatus, McpTransport};
use crate::connection::{empty_set, Desc, OpenFailed, MAX_POLL_FDS};
use crate::sys::unix::fd::is_open;
use crate::Connection;

/// `mcp_transport_open_fds` flag: the caller keeps owning the descriptors.
/// The transport never closes them, and at free it gives them back the
/// flags it changed (O_NONBLOCK).
pub const MCP_TRANSPORT_BORROW_FDS: u32 = 1 << 0;

const KNOWN_FLAGS: u32 = MCP_TRANSPORT_BORROW_FDS;

/// The most descriptors `mcp_transport_poll_fds` gives: 5 (read, write,
/// wake-up, and for a spawned server its stderr and its pidfd).
pub const MCP_TRANSPORT_MAX_POLL_FDS: usize = 5;
const _: () = assert!(MCP_TRANSPORT_MAX_POLL_FDS == MAX_POLL_FDS);

/// Creates a transport that reads the peer's messages from `read_fd` and
/// writes to `write_fd`: two pipes, a socket (pass it twice), a tty. The
/// descriptors are made non-blocking; `mcp_transport_next_event` does the
/// I/O. Writes never raise SIGPIPE (as `mcp_write_all`): a peer that stopped
/// reading closes the transport instead.
///
/// The transport owns the descriptors and closes them (the write side when
/// closing ends, the rest at free; an owned socket is also shut down for
/// writing then, whatever other descriptor holds it), unless `flags` has
/// `MCP_TRANSPORT_BORROW_FDS`: then it never closes them and at free gives
/// them back the flags it changed. Defaults as `mcp_transport_new`. Each
/// transport also holds one descriptor of its own (to be woken by other
/// threads), close-on-exec, numbered above 2 even in a process that closed
/// 0, 1 or 2.
///
/// Returns `MCP_STATUS_OK` and the transport in `*out` (free it with
/// `mcp_transport_free`), or, with nothing created and the descriptors not
/// taken (the caller still owns them, flags unchanged):
/// `MCP_STATUS_NULL_ARGUMENT` (out NULL), `MCP_STATUS_UNKNOWN_FLAGS`,
/// `MCP_STATUS_INVALID_ARGUMENT` (a negative descriptor), `MCP_STATUS_IO_ERROR` (a
/// descriptor is not open, or no descriptor was left for the wake-up:
/// `errno` says why) or `MCP_STATUS_OUT_OF_MEMORY`. Thread-safe. POSIX only;
/// on Windows, `mcp_transport_open_handles`.
///
/// # Safety
/// `out` is NULL or points to writable memory for one pointer. The
/// descriptors are not closed or used for other I/O while the transport
/// lives (read and write them only through it).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcp_transport_open_fds(
    read_fd: c_int,
    write_fd: c_int,
    flags: u32,
    out: *mut *mut McpTransport,
) -> McpStatus {
    ffi_boundary!(mcp_transport_open_fds, McpStatus::MCP_STATUS_PANIC, {
        super::fault_point();
        if out.is_null() {
            return McpStatus::MCP_STATUS_NULL_ARGUMENT;
        }
        if flags & !KNOWN_FLAGS != 0 {
            return McpStatus::MCP_STATUS_UNKNOWN_FLAGS;
        }
        if read_fd < 0 || write_fd < 0 {
            return McpStatus::MCP_STATUS_INVALID_ARGUMENT;
        }
        // Asked before anything is made: a number that is not open would
        // otherwise be the wake-up's own (the lowest free one) by the time
        // the connection looks at it, and pass.
        for fd in [read_fd, write_fd] {
            if !is_open(fd) {
                set_errno(libc::EBADF);
                return McpStatus::MCP_STATUS_IO_ERROR;
            }
        }
        let owned = flags & MCP_TRANSPORT_BORROW_FDS == 0;
        let desc = |fd: c_int| {
            if owned {
                // SAFETY: open, and given to the transport by the caller
                // (flag clear): owned by nothing else from now on.
                Desc::Owned(unsafe { OwnedFd::from_raw_fd(fd) })
            } else {
                // SAFETY: open, not -1, and kept open by the caller while
                // the transport lives (its contract); the borrow ends with
                // the transport.
                Desc::Borrowed(unsafe { BorrowedFd::borrow_raw(fd) })
            }
        };
        let write = (write_fd != read_fd).then(|| desc(write_fd));
        let made = McpTransport::make(|| Connection::open_descs(desc(read_fd), write));
        // SAFETY: `out` is non-null and writable, by the caller's contract.
        unsafe { opened(made, out) }
    })
}

/// Writes a transport just made to `*out`; or, when it could not be made,
/// gives the descriptors back to the caller, open (they were not taken),
/// and returns why.
///
/// # Safety
/// `out` is non-null and writable.
unsafe fn opened(
    made: Result<*mut McpTransport, Option<OpenFailed>>,
    out: *mut *mut McpTransport,
) -> McpStatus {
    let made = made.map_err(|failed| {
        failed.map(|failed| {
            for desc in [Some(failed.read), failed.write].into_iter().flatten() {
                if let Desc::Owned(fd) = desc {
                    let _ = fd.into_raw_fd(); // the caller's again
                }
            }
            failed.error
        })
    });
    // SAFETY: forwarded caller contract.
    unsafe { hand_out(made, out) }
}

/// For event loops (libuv, GLib, your own poll(2)): fills `fds[0..*n]` with
/// the descriptors to wait on now (`POLLIN` for the peer's bytes and for
/// wake-ups by sends from other threads, `POLLOUT` when output is queued)
/// and `*timeout_ms` with the milliseconds to the transport's next deadline
/// (rounded up; -1: none; 0: due now). Wait for any of them or the time,
/// then call `mcp_transport_next_event(t, 0, &ev)` until it returns
/// `MCP_STATUS_NO_MESSAGE`, and ask again: the set changes. Take every
/// event before you wait: events already received do not make a
/// descriptor ready. Each call empties the wake-up descriptor, so that
/// nothing left in it makes the loop's poll return at once for ever.
///
/// A memory transport gives 0 descriptors and the time to its next deadline
/// (as `mcp_transport_next_deadline`). After `MCP_EVENT_CLOSED` a descriptor
/// transport gives only its wake-up descriptor, and every transport the time
/// 0 (`next_event` says `MCP_STATUS_END_OF_STREAM`). At most
/// `MCP_TRANSPORT_MAX_POLL_FDS` descriptors.
///
/// Returns `MCP_STATUS_OK`, `MCP_STATUS_NULL_ARGUMENT` (t, n or timeout_ms
/// NULL, or fds NULL with `cap` > 0), `MCP_STATUS_INVALID_ARGUMENT` (`cap`
/// too small: `*n` is set to the number needed) or `MCP_STATUS_POISONED`.
/// `*n` is written on every return when `n` is not NULL (0 on the other
/// failures). A receiving call: one thread at a time. POSIX only; on
/// Windows, `mcp_transport_poll_handles`.
///
/// # Safety
/// `t` is NULL or a live transport; `fds` is NULL or points to `cap`
/// writable `struct pollfd`; `n` and `timeout_ms` are NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcp_transport_poll_fds(
    t: *mut McpTransport,
    fds: *mut libc::pollfd,
    cap: usize,
    n: *mut usize,
    timeout_ms: *mut i32,
) -> McpStatus {
    ffi_boundary!(mcp_transport_poll_fds, McpStatus::MCP_STATUS_PANIC, {
        // SAFETY: forwarded caller contract.
        unsafe {
            poll_set(
                t,
                fds,
                cap,
                n,
                timeout_ms,
                empty_set(),
                |shared, inner, set, cap| shared.poll_set_locked(inner, set, cap),
            )
        }
    })
}
