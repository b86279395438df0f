//! `McpTransport`: the C face of [`Connection`], every function a
//! conversion: arguments checked and converted, the safe API called under
//! the connection's lock, the result written and its status returned.
//!
//! - `mod.rs`: the handle, `new` and settings, free;
//! - `event.rs`: `McpEvent`, made from an [`Event`](crate::Event);
//! - `end.rs`: why it ended: `end_reason`, `end_text`;
//! - `send.rs`: the sending calls, from any thread;
//! - `memory.rs`: a memory transport's bytes in and out;
//! - `events.rs`: `next_event`, `next_deadline`;
//! - `fds.rs` (POSIX): `open_fds`, `poll_fds`;
//! - `handles.rs` (Windows): `open_handles`, `poll_handles`;
//! - `stdio.rs`: `open_stdio`;
//! - `spawn.rs` (POSIX and Windows): `spawn`, `pid`, `stderr_dropped`,
//!   `stderr_tail`.

mod end;
mod event;
mod events;
#[cfg(all(os_io, unix))]
mod fds;
#[cfg(windows)]
mod handles;
mod memory;
mod send;
#[cfg(os_io)]
mod spawn;
#[cfg(os_io)]
mod stdio;

use std::alloc::{alloc, dealloc, Layout};
use std::num::NonZeroUsize;
use std::ptr;
use std::sync::MutexGuard;

use super::boundary::fault_point;
use super::McpStatus;
use crate::connection::{Inner, Shared};
use crate::Connection;

pub use end::{mcp_transport_end_reason, mcp_transport_end_text, McpEndReason};
pub use event::{McpEvent, McpEventKind};
pub use events::{mcp_transport_next_deadline, mcp_transport_next_event};
#[cfg(all(os_io, unix))]
pub use fds::{
    mcp_transport_open_fds, mcp_transport_poll_fds, MCP_TRANSPORT_BORROW_FDS,
    MCP_TRANSPORT_MAX_POLL_FDS,
};
#[cfg(windows)]
pub use handles::{
    mcp_transport_open_handles, mcp_transport_poll_handles, MCP_TRANSPORT_BORROW_HANDLES,
    MCP_TRANSPORT_MAX_POLL_HANDLES,
};
pub use memory::{
    mcp_transport_read_output, mcp_transport_receive, mcp_transport_receive_end,
    mcp_transport_take_output,
};
pub use send::{
    mcp_transport_cancel, mcp_transport_close, mcp_transport_notify, mcp_transport_request,
    mcp_transport_request_with, mcp_transport_respond, mcp_transport_respond_error,
    mcp_transport_send, MCP_REQUEST_PROGRESS, MCP_REQUEST_RESET_ON_PROGRESS,
};
#[cfg(os_io)]
pub use spawn::{
    mcp_transport_pid, mcp_transport_spawn, mcp_transport_stderr_dropped,
    mcp_transport_stderr_tail, MCP_TRANSPORT_CONSOLE_WINDOW, MCP_TRANSPORT_KILL_ON_HOST_EXIT,
};
#[cfg(os_io)]
pub use stdio::{mcp_transport_open_stdio, MCP_TRANSPORT_GUARD_STDOUT};

/// The output queue's bound in a new transport, in bytes: 64 MiB.
pub const MCP_TRANSPORT_DEFAULT_MAX_QUEUED: usize = 64 << 20;

/// One MCP stdio connection (opaque): the peer's messages as events, our
/// requests numbered, matched with their answers and timed out, and what we
/// send queued, bounded.
///
/// Create it with one of four constructors: `mcp_transport_new` (a memory
/// transport: you move the bytes), `mcp_transport_open_fds` (the transport
/// does the I/O on descriptors you give it; on Windows
/// `mcp_transport_open_handles`, on handles), `mcp_transport_open_stdio` (a
/// server on its own stdin and stdout) or `mcp_transport_spawn` (a host: the
/// transport starts the server and supervises it to the end). Free it with
/// `mcp_transport_free`.
///
/// Threads: the sending calls (`send`, `request`, `notify`, `respond`,
/// `respond_error`, `cancel`, `close`, `set_max_queued`), the calls that
/// take output (`take_output`, `read_output`) and `next_deadline` may be made
/// from any thread, concurrently, also while another thread waits in
/// `mcp_transport_next_event`, which the sends wake. The receiving calls
/// (`next_event`, `receive`, `receive_end`, `poll_fds`, `poll_handles`,
/// `set_max_line_len`)
/// are for one thread at a time. `mcp_transport_free` must not overlap any
/// other call.
///
/// Event data borrows the transport until the next `next_event`, `receive`
/// or `receive_end` on it, or its free; no other call disturbs it.
pub struct McpTransport {
    conn: Connection,
}

impl McpTransport {
    /// Allocates a handle around the connection `open` makes; NULL when
    /// memory is short (`Err` from `open` is returned as is, nothing made).
    /// The handle's memory, and the connection's shared part (an `Arc`,
    /// which has no fallible constructor), are tried first, so that a
    /// failed allocation gives NULL before anything is opened.
    fn make<E>(
        open: impl FnOnce() -> Result<Connection, E>,
    ) -> Result<*mut McpTransport, Option<E>> {
        let layout = Layout::new::<McpTransport>();
        // SAFETY: the layout has a non-zero size.
        let raw = unsafe { alloc(layout) }.cast::<McpTransport>();
        if raw.is_null() || !shared_fits() {
            if !raw.is_null() {
                // SAFETY: allocated just above with this layout.
                unsafe { dealloc(raw.cast(), layout) };
            }
            return Err(None);
        }
        match open() {
            Ok(conn) => {
                // SAFETY: freshly allocated with this type's layout;
                // `mcp_transport_free` gives it back through `Box`, which
                // uses the same global allocator and layout.
                unsafe { raw.write(McpTransport { conn }) };
                Ok(raw)
            }
            Err(e) => {
                // SAFETY: allocated just above with this layout, not written.
                unsafe { dealloc(raw.cast(), layout) };
                Err(Some(e))
            }
        }
    }

    fn shared(&self) -> &Shared {
        self.conn.shared()
    }
}

/// Memory for a connection's shared part can be had now: tried with a
/// layout as large as the `Arc`'s (its two counts and the value).
fn shared_fits() -> bool {
    let layout = Layout::new::<(usize, usize, Shared)>();
    // SAFETY: the layout has a non-zero size.
    let trial = unsafe { alloc(layout) };
    if trial.is_null() {
        return false;
    }
    // SAFETY: allocated just above with this layout.
    unsafe { dealloc(trial, layout) };
    true
}

/// The transport behind `t`, locked, after the NULL and poison checks (a
/// NULL handle is `MCP_STATUS_NULL_ARGUMENT`, a poisoned one
/// `MCP_STATUS_POISONED`, whatever the other arguments), then the fault
/// point. A panic while the lock is held poisons the transport: every later
/// call but free is refused.
///
/// # Safety
/// `t` is NULL or a live pointer from a constructor of this module.
unsafe fn lock<'a>(
    t: *const McpTransport,
) -> Result<(&'a Shared, MutexGuard<'a, Inner>), McpStatus> {
    // SAFETY: NULL or live, by the caller's contract; shared access only.
    let Some(handle) = (unsafe { t.as_ref() }) else {
        return Err(McpStatus::MCP_STATUS_NULL_ARGUMENT);
    };
    let guard = handle.shared().lock()?;
    fault_point();
    Ok((handle.shared(), guard))
}

/// Writes a transport just made to `*out` (`MCP_STATUS_OK`), or turns why
/// it was not made into a status.
///
/// # Safety
/// `out` is non-null and writable.
#[cfg(os_io)]
unsafe fn hand_out(
    made: Result<*mut McpTransport, Option<crate::Error>>,
    out: *mut *mut McpTransport,
) -> McpStatus {
    match made {
        Ok(raw) => {
            // SAFETY: forwarded caller contract.
            unsafe { out.write(raw) };
            McpStatus::MCP_STATUS_OK
        }
        Err(Some(e)) => e.into(),
        Err(None) => McpStatus::MCP_STATUS_OUT_OF_MEMORY,
    }
}

/// The body of `mcp_transport_poll_fds` and `mcp_transport_poll_handles`:
/// `fill` makes the set of what to wait on (at most `cap`, else nothing
/// changes) and the time to the next deadline; they are copied to `out`
/// and `timeout_ms`, the count to `n` on every return.
///
/// # Safety
/// `t` is NULL or a live transport; `out` is NULL or points to `cap`
/// writable items; `n` and `timeout_ms` are NULL or writable.
#[cfg(os_io)]
unsafe fn poll_set<T: Copy, const N: usize>(
    t: *mut McpTransport,
    out: *mut T,
    cap: usize,
    n: *mut usize,
    timeout_ms: *mut i32,
    mut set: [T; N],
    fill: impl FnOnce(&Shared, MutexGuard<'_, Inner>, &mut [T; N], usize) -> (usize, i32),
) -> McpStatus {
    let mut count = 0;
    let status = (|| {
        // SAFETY: forwarded caller contract.
        let (shared, inner) = unsafe { lock(t) }?;
        if n.is_null() || timeout_ms.is_null() || (out.is_null() && cap > 0) {
            return Err(McpStatus::MCP_STATUS_NULL_ARGUMENT);
        }
        let (needed, timeout) = fill(shared, inner, &mut set, cap);
        count = needed;
        if needed > cap {
            return Err(McpStatus::MCP_STATUS_INVALID_ARGUMENT);
        }
        // SAFETY: `out` holds `cap` >= `needed` writable items and
        // `timeout_ms` is writable, by the caller's contract.
        unsafe {
            ptr::copy_nonoverlapping(set.as_ptr(), out, needed);
            timeout_ms.write(timeout);
        }
        Ok(())
    })();
    if !n.is_null() {
        // SAFETY: non-null and writable, by the caller's contract.
        unsafe { n.write(count) };
    }
    match status {
        Ok(()) => McpStatus::MCP_STATUS_OK,
        Err(status) => status,
    }
}

// ---- Constructors and settings ----

/// Creates a memory transport: it does no I/O and holds no descriptor. You
/// hand it the peer's bytes (`mcp_transport_receive`, then
/// `mcp_transport_receive_end` when the peer closed), take what it queued for
/// the peer (`mcp_transport_take_output` or `mcp_transport_read_output`) and
/// write that yourself. This is the transport for Go, Swift, libuv, GLib or
/// a test.
///
/// Defaults: a 64 MiB line limit, JSON-RPC classification on, every line
/// reported (invalid ones as `MCP_EVENT_INVALID`), a 64 MiB output bound.
///
/// Returns a new transport owned by the caller (free it with
/// `mcp_transport_free`), or NULL only if memory could not be allocated.
/// Thread-safe.
#[unsafe(no_mangle)]
pub extern "C" fn mcp_transport_new() -> *mut McpTransport {
    ffi_boundary!(mcp_transport_new, ptr::null_mut(), {
        fault_point();
        McpTransport::make(|| Ok::<_, ()>(Connection::memory())).unwrap_or(ptr::null_mut())
    })
}

/// Sets the longest line accepted from the peer, in bytes before the `\n`
/// (as `mcp_line_reader_set_max_line_len`): a longer line is one
/// `MCP_EVENT_INVALID` event with `invalid_kind` `MCP_MESSAGE_TOO_LONG`, and
/// its bytes are dropped, never held. `SIZE_MAX` means no limit; the default
/// is 64 MiB.
///
/// Returns `MCP_STATUS_OK`, `MCP_STATUS_NULL_ARGUMENT` (t NULL),
/// `MCP_STATUS_INVALID_ARGUMENT` (`max_line_len` is 0) or
/// `MCP_STATUS_POISONED`. A receiving call: one thread at a time.
///
/// # Safety
/// `t` is NULL or a live transport.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcp_transport_set_max_line_len(
    t: *mut McpTransport,
    max_line_len: usize,
) -> McpStatus {
    ffi_boundary!(
        mcp_transport_set_max_line_len,
        McpStatus::MCP_STATUS_PANIC,
        {
            // SAFETY: forwarded caller contract.
            let (_, mut inner) = match unsafe { lock(t) } {
                Ok(locked) => locked,
                Err(status) => return status,
            };
            if max_line_len == 0 {
                return McpStatus::MCP_STATUS_INVALID_ARGUMENT;
            }
            inner.core.set_max_line_len(if max_line_len == usize::MAX {
                None
            } else {
                NonZeroUsize::new(max_line_len)
            });
            McpStatus::MCP_STATUS_OK
        }
    )
}

/// Bounds the output queue at `bytes` of framed lines, newlines included
/// (default 64 MiB). A send that would take the queue past the bound is
/// refused with `MCP_STATUS_WOULD_BLOCK` and queues nothing (a refused
/// request uses no id), unless the queue is empty: one message larger than
/// the bound is accepted then. Cancellations (`mcp_transport_cancel` and
/// those of timed-out requests) are queued whatever the bound. Applies to
/// later sends only.
///
/// Returns `MCP_STATUS_OK`, `MCP_STATUS_NULL_ARGUMENT` (t NULL),
/// `MCP_STATUS_INVALID_ARGUMENT` (`bytes` is 0) or `MCP_STATUS_POISONED`.
/// Any thread.
///
/// # Safety
/// `t` is NULL or a live transport.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcp_transport_set_max_queued(
    t: *mut McpTransport,
    bytes: usize,
) -> McpStatus {
    ffi_boundary!(mcp_transport_set_max_queued, McpStatus::MCP_STATUS_PANIC, {
        // SAFETY: forwarded caller contract.
        let (_, mut inner) = match unsafe { lock(t) } {
            Ok(locked) => locked,
            Err(status) => return status,
        };
        match inner.core.set_max_queued(bytes) {
            Ok(()) => McpStatus::MCP_STATUS_OK,
            Err(e) => e.into(),
        }
    })
}

/// Frees a transport and everything it holds. An open descriptor
/// transport is closed first, as `mcp_transport_close(t, 2000)` does (or on
/// the schedule of an earlier close), and this waits until it is: its
/// queue written (or dropped at the grace) and the peer's end seen, at most
/// about 2 s (4 s for a spawned server that ignores SIGTERM: SIGKILL comes
/// at twice the grace; see `mcp_transport_spawn`). A memory transport is
/// freed at once (there is nothing to wait for); what it still queued is
/// dropped. Owned descriptors are closed;
/// borrowed ones get back the flags the transport changed. Events not yet
/// taken are dropped. NULL is a no-op; a poisoned transport is freed too.
///
/// # Safety
/// `t` is NULL or a live transport, not used by any other call during or
/// after this one.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcp_transport_free(t: *mut McpTransport) {
    ffi_boundary!(mcp_transport_free, (), {
        if t.is_null() {
            return;
        }
        // SAFETY: allocated by `McpTransport::make` with the global
        // allocator and this type's layout, and not freed before (caller's
        // contract).
        let handle = unsafe { Box::from_raw(t) };
        fault_point();
        drop(handle); // `Connection`'s drop: the close, and the wait for it
    })
}

#[cfg(test)]
mod tests;
