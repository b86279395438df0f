//! `McpTransport`: the C face of [`Transport`](crate::Transport), with the
//! driving that a state machine leaves to its user: the lock that lets any
//! thread send, the wait in `next_event` (which sends wake), and, for the
//! descriptor transports (`open_fds`, `open_stdio`, `spawn`), the
//! descriptors' I/O and the server process.
//!
//! - `mod.rs`: the handle and its lock, `new` and settings, free;
//! - `event.rs`: `McpEvent`;
//! - `send.rs`: the sending calls, from any thread;
//! - `memory.rs`: a memory transport's bytes in and out;
//! - `events.rs`: `next_event`, its wait and its I/O;
//! - `fds.rs` (POSIX): `open_fds`, `open_stdio`, the descriptors' I/O and
//!   the wait in poll(2) (its wake-up is `sys::unix::wake`);
//! - `spawn.rs` (POSIX): `spawn`, `pid`, `stderr_dropped`, over
//!   `process/` (starting the server, its supervision and shutdown, its
//!   stderr as lines).

mod event;
mod events;
#[cfg(unix)]
mod fds;
mod memory;
mod send;
#[cfg(unix)]
mod spawn;

use std::alloc::{alloc, Layout};
use std::num::NonZeroUsize;
use std::ptr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use super::boundary::fault_point;
use super::McpStatus;
use crate::Transport;

pub use event::{McpEvent, McpEventKind};
pub use events::{mcp_transport_next_deadline, mcp_transport_next_event};
#[cfg(unix)]
pub use fds::{
    mcp_transport_open_fds, mcp_transport_open_stdio, mcp_transport_poll_fds,
    MCP_TRANSPORT_BORROW_FDS, MCP_TRANSPORT_GUARD_STDOUT, MCP_TRANSPORT_MAX_POLL_FDS,
};
pub use memory::{
    mcp_transport_read_output, mcp_transport_receive, mcp_transport_receive_end,
    mcp_transport_take_output,
};
pub use send::{
    mcp_transport_cancel, mcp_transport_close, mcp_transport_notify, mcp_transport_request,
    mcp_transport_respond, mcp_transport_respond_error, mcp_transport_send,
};
#[cfg(unix)]
pub use spawn::{
    mcp_transport_pid, mcp_transport_spawn, mcp_transport_stderr_dropped,
    MCP_TRANSPORT_KILL_ON_HOST_EXIT,
};

/// The grace `mcp_transport_free` gives an open transport: 2 s.
const FREE_GRACE: Duration = Duration::from_secs(2);

/// The output queue's bound in a new transport, in bytes: 64 MiB.
pub const MCP_TRANSPORT_DEFAULT_MAX_QUEUED: usize = 64 << 20;

/// One MCP stdio connection (opaque): the peer's messages as events, our
/// requests numbered, matched with their answers and timed out, and what we
/// send queued, bounded.
///
/// Create it with one of four constructors: `mcp_transport_new` (a memory
/// transport: you move the bytes), `mcp_transport_open_fds` (the transport
/// does the I/O on descriptors you give it), `mcp_transport_open_stdio` (a
/// server on its own stdin and stdout) or `mcp_transport_spawn` (a host: the
/// transport starts the server and supervises it to the end). Free it with
/// `mcp_transport_free`.
///
/// Threads: the sending calls (`send`, `request`, `notify`, `respond`,
/// `respond_error`, `cancel`, `close`, `set_max_queued`), the calls that
/// take output (`take_output`, `read_output`) and `next_deadline` may be made
/// from any thread, concurrently, also while another thread waits in
/// `mcp_transport_next_event`, which the sends wake. The receiving calls
/// (`next_event`, `receive`, `receive_end`, `poll_fds`, `set_max_line_len`)
/// are for one thread at a time. `mcp_transport_free` must not overlap any
/// other call.
///
/// Event data borrows the transport until the next `next_event`, `receive`
/// or `receive_end` on it, or its free; no other call disturbs it.
pub struct McpTransport {
    inner: Mutex<Inner>,
    /// Wakes a thread waiting in `next_event` on a memory transport.
    ready: Condvar,
    /// Calls waiting for the lock: a `next_event` that keeps reading (a
    /// peer whose bytes never run out) lets them in between its turns.
    contenders: AtomicUsize,
}

/// Everything behind the lock.
struct Inner {
    core: Transport,
    /// A thread waits in `next_event` (or an event loop on `poll_fds`' set):
    /// the next send wakes it.
    waiting: bool,
    /// The descriptors (and a spawned server) of a descriptor transport;
    /// `None`: a memory transport.
    #[cfg(unix)]
    io: Option<fds::FdIo>,
}

impl Inner {
    /// Begins closing: sends refused from now on; for a spawned server, its
    /// signals scheduled. The first call's schedule stands.
    fn begin_close(&mut self, grace: Duration, now: Instant) -> Result<(), crate::Error> {
        #[cfg(unix)]
        if let Some(process) = self.io.as_mut().and_then(|io| io.process_mut()) {
            process.on_close(grace, now);
        }
        self.core.close(grace, now)
    }

    /// The earliest instant something is due without new input: the
    /// core's next deadline, or a descriptor transport's own (the end of a
    /// grace, a server's signals).
    fn next_deadline(&self, now: Instant) -> Option<Instant> {
        let deadline = self.core.next_deadline();
        #[cfg(unix)]
        let deadline = match self.io.as_ref().and_then(|io| io.next_deadline(now)) {
            Some(b) => Some(deadline.map_or(b, |a| a.min(b))),
            None => deadline,
        };
        let _ = now;
        deadline
    }

    /// Milliseconds to [`next_deadline`](Self::next_deadline), rounded up
    /// (at most `i32::MAX`); -1: none; 0 once closed.
    fn millis_to_deadline(&self) -> i32 {
        if self.core.is_closed() {
            return 0;
        }
        let now = Instant::now();
        match self.next_deadline(now) {
            None => -1,
            Some(at) => {
                let left = at.saturating_duration_since(now);
                i32::try_from(left.as_nanos().div_ceil(1_000_000)).unwrap_or(i32::MAX)
            }
        }
    }

    #[cfg(unix)]
    fn is_memory(&self) -> bool {
        self.io.is_none()
    }

    #[cfg(not(unix))]
    fn is_memory(&self) -> bool {
        true
    }
}

impl McpTransport {
    /// Allocates a handle around `inner`; NULL when memory is short.
    fn into_raw(inner: Inner) -> *mut McpTransport {
        let layout = Layout::new::<McpTransport>();
        // SAFETY: the layout has a non-zero size.
        let raw = unsafe { alloc(layout) }.cast::<McpTransport>();
        if !raw.is_null() {
            let handle = McpTransport {
                inner: Mutex::new(inner),
                ready: Condvar::new(),
                contenders: AtomicUsize::new(0),
            };
            // SAFETY: freshly allocated with this type's layout;
            // `mcp_transport_free` gives it back through `Box`, which uses the
            // same global allocator and layout.
            unsafe { raw.write(handle) };
        }
        raw
    }

    /// Takes the lock, counted among the contenders while waiting for it.
    fn lock_inner(&self) -> Result<MutexGuard<'_, Inner>, McpStatus> {
        self.contenders.fetch_add(1, Ordering::AcqRel);
        let locked = self.inner.lock();
        self.contenders.fetch_sub(1, Ordering::AcqRel);
        locked.map_err(|_| McpStatus::MCP_STATUS_POISONED)
    }

    /// Between two turns of a `next_event` that does not wait (a peer whose
    /// bytes never run out), with the lock released: lets the calls waiting
    /// for it take it first. A mutex does not hand itself over: the thread
    /// that unlocks takes it again before a woken waiter runs, so without
    /// this a `close` or a send from another thread could wait for as long
    /// as the peer keeps writing.
    fn let_contenders_in(&self) {
        for _ in 0..1000 {
            if self.contenders.load(Ordering::Acquire) == 0 {
                return;
            }
            std::thread::yield_now();
        }
    }

    /// After a send: wakes the thread waiting for events, if one is, so that
    /// it writes what was queued and heeds new deadlines or a close.
    fn wake(&self, inner: &mut Inner) {
        if !inner.waiting {
            return;
        }
        inner.waiting = false;
        #[cfg(unix)]
        if let Some(io) = &mut inner.io {
            io.wake();
            return;
        }
        self.ready.notify_all();
    }
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
) -> Result<(&'a McpTransport, MutexGuard<'a, Inner>), McpStatus> {
    // SAFETY: NULL or live, by the caller's contract; shared access only.
    let Some(handle) = (unsafe { t.as_ref() }) else {
        return Err(McpStatus::MCP_STATUS_NULL_ARGUMENT);
    };
    let guard = handle.lock_inner()?;
    fault_point();
    Ok((handle, guard))
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
        McpTransport::into_raw(Inner {
            core: Transport::new(),
            waiting: false,
            #[cfg(unix)]
            io: None,
        })
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
        // SAFETY: allocated by `McpTransport::into_raw` with the global
        // allocator and this type's layout, and not freed before (caller's
        // contract).
        let handle = unsafe { Box::from_raw(t) };
        if let Ok(mut inner) = handle.inner.lock() {
            if !inner.is_memory() && !inner.core.is_closed() {
                let _ = inner.begin_close(FREE_GRACE, Instant::now());
                let mut event = std::mem::MaybeUninit::<McpEvent>::uninit();
                // SAFETY: `event` is writable memory for one `McpEvent`.
                while let Ok(()) = unsafe {
                    events::next_event(&handle, inner, events::Wait::Forever, event.as_mut_ptr())
                } {
                    inner = match handle.inner.lock() {
                        Ok(inner) => inner,
                        Err(_) => break,
                    };
                }
            }
        }
        fault_point();
        drop(handle);
        // A server that could not be reaped at its free, earlier or now,
        // is reaped here once it can be (no thread of ours waits for it).
        #[cfg(unix)]
        crate::process::child::reap_owed();
    })
}

#[cfg(test)]
mod tests;
