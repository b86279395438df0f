//! `McpTransport`: the C face of [`Transport`](crate::Transport), with the
//! driving that a state machine leaves to its user: the lock that lets any
//! thread send, the wait in `next_event` (which sends wake), and, for
//! `mcp_transport_open_fds`, the descriptors' I/O (`fds.rs`).
//!
//! - `mod.rs`: the handle, constructors, sends, the memory transport's
//!   byte movers, `next_event` and free;
//! - `event.rs`: `McpEvent`;
//! - `fds.rs` and `wake.rs` (POSIX): descriptors, and waking a `poll(2)`.

mod event;
#[cfg(unix)]
mod fds;
#[cfg(unix)]
mod wake;

use std::alloc::{alloc, Layout};
use std::ffi::{c_char, CStr};
use std::num::NonZeroUsize;
use std::ptr;
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use super::boundary::fault_point;
use super::buffer::McpBuffer;
use super::slice::bytes_in;
use super::McpStatus;
use crate::{Error, Event, Transport};

pub use event::{McpEvent, McpEventKind};
#[cfg(unix)]
pub use fds::{
    mcp_transport_open_fds, mcp_transport_poll_fds, MCP_TRANSPORT_BORROW_FDS,
    MCP_TRANSPORT_MAX_POLL_FDS,
};

/// The grace `mcp_transport_free` gives an open transport: 2 s.
const FREE_GRACE: Duration = Duration::from_secs(2);

/// The output queue's bound in a new transport, in bytes: 64 MiB.
pub const MCP_TRANSPORT_DEFAULT_MAX_QUEUED: usize = 64 << 20;

/// One MCP stdio connection (opaque): the peer's messages as events, our
/// requests numbered, matched with their answers and timed out, and what we
/// send queued, bounded.
///
/// Create it with `mcp_transport_new` (a memory transport: you move the
/// bytes) or `mcp_transport_open_fds` (the transport does the I/O on two
/// descriptors); free it with `mcp_transport_free`.
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
}

/// Everything behind the lock.
struct Inner {
    core: Transport,
    /// A thread waits in `next_event` (or an event loop on `poll_fds`' set):
    /// the next send wakes it.
    waiting: bool,
    /// The descriptors of `mcp_transport_open_fds`; `None`: a memory transport.
    #[cfg(unix)]
    io: Option<fds::FdIo>,
}

impl Inner {
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
            };
            // SAFETY: freshly allocated with this type's layout;
            // `mcp_transport_free` gives it back through `Box`, which uses the
            // same global allocator and layout.
            unsafe { raw.write(handle) };
        }
        raw
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
    let guard = handle
        .inner
        .lock()
        .map_err(|_| McpStatus::MCP_STATUS_POISONED)?;
    fault_point();
    Ok((handle, guard))
}

/// Runs a send on the transport behind `t` and wakes a waiting
/// `next_event` when it queued something.
///
/// # Safety
/// As [`lock`].
unsafe fn send_with(
    t: *const McpTransport,
    send: impl FnOnce(&mut Transport) -> Result<(), McpStatus>,
) -> McpStatus {
    // SAFETY: forwarded caller contract.
    let (handle, mut inner) = match unsafe { lock(t) } {
        Ok(locked) => locked,
        Err(status) => return status,
    };
    match send(&mut inner.core) {
        Ok(()) => {
            handle.wake(&mut inner);
            McpStatus::MCP_STATUS_OK
        }
        Err(status) => status,
    }
}

/// A NUL-terminated UTF-8 string argument: NULL is
/// `MCP_STATUS_NULL_ARGUMENT`, invalid UTF-8 `MCP_STATUS_INVALID_ARGUMENT`.
///
/// # Safety
/// `text` is NULL or a NUL-terminated string that lives for `'a`.
unsafe fn text_in<'a>(text: *const c_char) -> Result<&'a str, McpStatus> {
    if text.is_null() {
        return Err(McpStatus::MCP_STATUS_NULL_ARGUMENT);
    }
    // SAFETY: non-null and NUL-terminated, by the caller's contract.
    let bytes = unsafe { CStr::from_ptr(text) }.to_bytes();
    std::str::from_utf8(bytes).map_err(|_| McpStatus::MCP_STATUS_INVALID_ARGUMENT)
}

/// [`text_in`], NULL meaning `None`.
///
/// # Safety
/// As [`text_in`].
unsafe fn optional_text_in<'a>(text: *const c_char) -> Result<Option<&'a str>, McpStatus> {
    if text.is_null() {
        Ok(None)
    } else {
        // SAFETY: forwarded caller contract.
        unsafe { text_in(text) }.map(Some)
    }
}

/// A JSON text argument where `(NULL, 0)` means none.
///
/// # Safety
/// As [`bytes_in`].
unsafe fn optional_json_in<'a>(data: *const u8, len: usize) -> Result<Option<&'a [u8]>, McpStatus> {
    // SAFETY: forwarded caller contract.
    let bytes = unsafe { bytes_in(data, len) }?;
    Ok((!bytes.is_empty()).then_some(bytes))
}

fn status(result: Result<(), Error>) -> Result<(), McpStatus> {
    result.map_err(McpStatus::from)
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

// ---- Sending ----

/// Queues one JSON text for the peer, as one compact line (as `mcp_encode`
/// writes it: whitespace outside strings removed, a trailing `\n`). For
/// messages the other sends do not build, such as an error with `data`.
///
/// Sends never block and never drop: they queue, and `next_event` (or you,
/// for a memory transport) writes the queue out. Each returns, queuing
/// nothing but on `MCP_STATUS_OK`:
/// - `MCP_STATUS_OK`: queued;
/// - `MCP_STATUS_NULL_ARGUMENT`: t NULL, or a pointer NULL with its length > 0;
/// - `MCP_STATUS_INVALID_JSON`: `json` is not one JSON text in valid UTF-8
///   (`(NULL, 0)` included);
/// - `MCP_STATUS_WOULD_BLOCK`: the queue is at its bound
///   (`mcp_transport_set_max_queued`); send again once it has drained;
/// - `MCP_STATUS_CLOSED`: close has begun (`mcp_transport_close`), or the
///   transport found its peer gone (end of stream, a failed write);
/// - `MCP_STATUS_INVALID_ARGUMENT` (`len` > PTRDIFF_MAX),
///   `MCP_STATUS_OUT_OF_MEMORY`, `MCP_STATUS_POISONED`.
///
/// Any thread, also while another waits in `mcp_transport_next_event`
/// (which it wakes). `json` is only read during the call.
///
/// # Safety
/// `t` is NULL or a live transport; `json` is NULL or points to `len`
/// readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcp_transport_send(
    t: *mut McpTransport,
    json: *const u8,
    len: usize,
) -> McpStatus {
    ffi_boundary!(mcp_transport_send, McpStatus::MCP_STATUS_PANIC, {
        // SAFETY: forwarded caller contract.
        unsafe {
            send_with(t, |core| {
                let json = bytes_in(json, len)?;
                status(core.send(json))
            })
        }
    })
}

/// Queues the request
/// `{"jsonrpc":"2.0","id":N,"method":"<method>","params":<params>}` and
/// writes its id `N` to `*id` (when `id` is not NULL). Ids are 1, 2, 3...
/// per transport, written as JSON integers; the answer whose id token is
/// exactly that integer comes as one `MCP_EVENT_RESPONSE`.
///
/// `method` is NUL-terminated UTF-8 text, escaped by the library.
/// `params` is a JSON object or array, sent compact; `(NULL, 0)` leaves
/// `params` out. With `timeout_ms` > 0, an unanswered request gives one
/// `MCP_EVENT_REQUEST_TIMED_OUT` event at its deadline and, unless `method`
/// is `initialize` (MCP forbids cancelling it), the transport sends
/// `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":N,"reason":"request timed out"}}`.
/// 0: no deadline.
///
/// Returns as `mcp_transport_send`, and `MCP_STATUS_NULL_ARGUMENT` (method
/// NULL), `MCP_STATUS_INVALID_ARGUMENT` (method not UTF-8; params valid JSON
/// but not an object or array; ids exhausted), `MCP_STATUS_INVALID_JSON`
/// (params not one JSON text). A refused request uses no id and writes
/// nothing to `*id`. Any thread.
///
/// # Safety
/// `t` is NULL or a live transport; `method` is NULL or NUL-terminated;
/// `params` is NULL or points to `params_len` readable bytes; `id` is NULL
/// or points to a writable `int64_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcp_transport_request(
    t: *mut McpTransport,
    method: *const c_char,
    params: *const u8,
    params_len: usize,
    timeout_ms: u32,
    id: *mut i64,
) -> McpStatus {
    ffi_boundary!(mcp_transport_request, McpStatus::MCP_STATUS_PANIC, {
        // SAFETY: forwarded caller contract.
        unsafe {
            send_with(t, |core| {
                let method = text_in(method)?;
                let params = optional_json_in(params, params_len)?;
                let timeout = (timeout_ms > 0).then(|| Duration::from_millis(timeout_ms.into()));
                // Only a deadline needs the time.
                let now = Instant::now();
                let new_id = core.request(method, params, timeout, now)?;
                if !id.is_null() {
                    id.write(new_id);
                }
                Ok(())
            })
        }
    })
}

/// Queues the notification
/// `{"jsonrpc":"2.0","method":"<method>","params":<params>}`; `method` and
/// `params` as for `mcp_transport_request`. Returns as
/// `mcp_transport_request`. Any thread.
///
/// # Safety
/// `t` is NULL or a live transport; `method` is NULL or NUL-terminated;
/// `params` is NULL or points to `params_len` readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcp_transport_notify(
    t: *mut McpTransport,
    method: *const c_char,
    params: *const u8,
    params_len: usize,
) -> McpStatus {
    ffi_boundary!(mcp_transport_notify, McpStatus::MCP_STATUS_PANIC, {
        // SAFETY: forwarded caller contract.
        unsafe {
            send_with(t, |core| {
                let method = text_in(method)?;
                let params = optional_json_in(params, params_len)?;
                status(core.notify(method, params))
            })
        }
    })
}

/// Queues the response `{"jsonrpc":"2.0","id":<id>,"result":<result>}` to a
/// request of the peer. `id` is the request's id token as on the wire (the
/// event's `envelope.id`), echoed as is; `result` is one JSON text, sent
/// compact.
///
/// Returns as `mcp_transport_send`, and `MCP_STATUS_INVALID_ARGUMENT` when
/// `id` is `(NULL, 0)` or not a JSON string or number,
/// `MCP_STATUS_INVALID_JSON` when `result` is not one JSON text (`(NULL, 0)`
/// included). Any thread.
///
/// # Safety
/// `t` is NULL or a live transport; `id` and `result` are NULL or point to
/// `id_len` and `result_len` readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcp_transport_respond(
    t: *mut McpTransport,
    id: *const u8,
    id_len: usize,
    result: *const u8,
    result_len: usize,
) -> McpStatus {
    ffi_boundary!(mcp_transport_respond, McpStatus::MCP_STATUS_PANIC, {
        // SAFETY: forwarded caller contract.
        unsafe {
            send_with(t, |core| {
                let id = bytes_in(id, id_len)?;
                let result = bytes_in(result, result_len)?;
                status(core.respond(id, result))
            })
        }
    })
}

/// Queues the error response
/// `{"jsonrpc":"2.0","id":<id>,"error":{"code":<code>,"message":"<message>"}}`.
/// `id` as for `mcp_transport_respond`; `(NULL, 0)` leaves `id` out (for a
/// request whose id could not be read; never `"id":null`). `message` is
/// NUL-terminated UTF-8 text, escaped by the library. For `error.data`,
/// build the message yourself and use `mcp_transport_send`.
///
/// Returns as `mcp_transport_send`, and `MCP_STATUS_NULL_ARGUMENT` (message
/// NULL), `MCP_STATUS_INVALID_ARGUMENT` (`id` not a JSON string or number;
/// message not UTF-8). Any thread.
///
/// # Safety
/// `t` is NULL or a live transport; `id` is NULL or points to `id_len`
/// readable bytes; `message` is NULL or NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcp_transport_respond_error(
    t: *mut McpTransport,
    id: *const u8,
    id_len: usize,
    code: i64,
    message: *const c_char,
) -> McpStatus {
    ffi_boundary!(mcp_transport_respond_error, McpStatus::MCP_STATUS_PANIC, {
        // SAFETY: forwarded caller contract.
        unsafe {
            send_with(t, |core| {
                let id = optional_json_in(id, id_len)?;
                let message = text_in(message)?;
                status(core.respond_error(id, code, message))
            })
        }
    })
}

/// Cancels our request `id`: queues
/// `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":<id>,"reason":"<reason>"}}`
/// (`reason` left out when NULL) whatever the queue's bound, and forgets the
/// request: no event comes for it (an answer that comes anyway is an
/// `MCP_EVENT_MESSAGE`).
///
/// Returns `MCP_STATUS_OK`, `MCP_STATUS_NULL_ARGUMENT` (t NULL),
/// `MCP_STATUS_INVALID_ARGUMENT` (`id` is not a pending request of ours:
/// unknown, answered, timed out, cancelled; or it is an `initialize`, which
/// MCP forbids cancelling; or reason is not UTF-8), `MCP_STATUS_CLOSED`,
/// `MCP_STATUS_OUT_OF_MEMORY` or `MCP_STATUS_POISONED`; nothing is sent but
/// on `MCP_STATUS_OK`. Any thread.
///
/// # Safety
/// `t` is NULL or a live transport; `reason` is NULL or NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcp_transport_cancel(
    t: *mut McpTransport,
    id: i64,
    reason: *const c_char,
) -> McpStatus {
    ffi_boundary!(mcp_transport_cancel, McpStatus::MCP_STATUS_PANIC, {
        // SAFETY: forwarded caller contract.
        unsafe {
            send_with(t, |core| {
                let reason = optional_text_in(reason)?;
                status(core.cancel(id, reason))
            })
        }
    })
}

/// Begins closing and returns at once; from now on every send returns
/// `MCP_STATUS_CLOSED`. `mcp_transport_next_event` then drives the close:
/// - the output queue is written until it is empty or `grace_ms` has passed
///   (a descriptor transport drops what is left then; a memory transport
///   keeps it for `take_output`, also after `MCP_EVENT_CLOSED`);
/// - then the write side ends: an owned write descriptor is closed, an owned
///   socket serving both ways is `shutdown(SHUT_WR)`, borrowed descriptors
///   are left as they are;
/// - answers that still arrive are delivered;
/// - when the peer's end arrives (end of stream, `mcp_transport_receive_end`)
///   or `grace_ms` after this call, whichever first, pending requests get
///   `MCP_EVENT_REQUEST_FAILED` and `MCP_EVENT_CLOSED` comes, last.
///
/// Returns `MCP_STATUS_OK`, also when repeated (the first call's schedule
/// stands) and after `MCP_EVENT_CLOSED`; `MCP_STATUS_NULL_ARGUMENT` (t
/// NULL) or `MCP_STATUS_POISONED`. Any thread; wakes a waiting
/// `next_event`.
///
/// # Safety
/// `t` is NULL or a live transport.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcp_transport_close(t: *mut McpTransport, grace_ms: u32) -> McpStatus {
    ffi_boundary!(mcp_transport_close, McpStatus::MCP_STATUS_PANIC, {
        // SAFETY: forwarded caller contract.
        let (handle, mut inner) = match unsafe { lock(t) } {
            Ok(locked) => locked,
            Err(status) => return status,
        };
        let grace = Duration::from_millis(grace_ms.into());
        match inner.core.close(grace, Instant::now()) {
            Ok(()) => {
                handle.wake(&mut inner);
                McpStatus::MCP_STATUS_OK
            }
            Err(e) => e.into(),
        }
    })
}

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

/// Writes to `*timeout_ms` the milliseconds until the transport's next
/// deadline (a request's, or the end of a closing grace), rounded up so
/// that waiting that long never wakes too early: -1 when nothing is
/// scheduled, 0 when one is due now or `MCP_EVENT_CLOSED` was delivered
/// (take the events). For drivers of a memory transport (`poll_fds` gives
/// the same time along with the descriptors).
///
/// Returns `MCP_STATUS_OK`, `MCP_STATUS_NULL_ARGUMENT` (t or timeout_ms NULL)
/// or `MCP_STATUS_POISONED`. Any thread.
///
/// # Safety
/// `t` is NULL or a live transport; `timeout_ms` is NULL or points to a
/// writable `int32_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcp_transport_next_deadline(
    t: *mut McpTransport,
    timeout_ms: *mut i32,
) -> McpStatus {
    ffi_boundary!(mcp_transport_next_deadline, McpStatus::MCP_STATUS_PANIC, {
        // SAFETY: forwarded caller contract.
        let (_, inner) = match unsafe { lock(t) } {
            Ok(locked) => locked,
            Err(status) => return status,
        };
        if timeout_ms.is_null() {
            return McpStatus::MCP_STATUS_NULL_ARGUMENT;
        }
        // SAFETY: non-null and writable, by the caller's contract.
        unsafe { timeout_ms.write(millis_to_deadline(&inner.core)) };
        McpStatus::MCP_STATUS_OK
    })
}

/// Milliseconds to the core's next deadline, rounded up (at most
/// `i32::MAX`); -1: none; 0 once closed.
fn millis_to_deadline(core: &Transport) -> i32 {
    if core.is_closed() {
        return 0;
    }
    match core.next_deadline() {
        None => -1,
        Some(at) => {
            let left = at.saturating_duration_since(Instant::now());
            i32::try_from(left.as_nanos().div_ceil(1_000_000)).unwrap_or(i32::MAX)
        }
    }
}

// ---- Events ----

/// How long `next_event` may wait.
#[derive(Clone, Copy)]
enum Wait {
    /// Only what is ready (timeout 0).
    Ready,
    Until(Instant),
    Forever,
}

/// Takes the next event into `*ev`, waiting up to `timeout_ms` milliseconds
/// for one (0: only what is ready now; negative: no limit). Meanwhile a
/// descriptor transport writes its queue and reads the peer's bytes.
///
/// Events come in this order: the peer's lines, in stream order (each an
/// `MCP_EVENT_MESSAGE`, `MCP_EVENT_RESPONSE` or `MCP_EVENT_INVALID`); then
/// requests whose deadline has passed, `MCP_EVENT_REQUEST_TIMED_OUT`
/// (earliest deadline first, ties by id); when closing has come to its end,
/// `MCP_EVENT_REQUEST_FAILED` for every pending request (ascending ids),
/// then `MCP_EVENT_CLOSED`, last.
///
/// Returns:
/// - `MCP_STATUS_OK`: `*ev` holds the next event;
/// - `MCP_STATUS_NO_MESSAGE`: none came in time;
/// - `MCP_STATUS_END_OF_STREAM`: `MCP_EVENT_CLOSED` was delivered before;
///   nothing more will come;
/// - `MCP_STATUS_NULL_ARGUMENT` (t or ev NULL), `MCP_STATUS_OUT_OF_MEMORY`
///   (judging a line, or queuing a cancellation; call again),
///   `MCP_STATUS_IO_ERROR` (poll(2) failed; `errno` says why),
///   `MCP_STATUS_POISONED`.
///
/// `*ev` is written only on `MCP_STATUS_OK`. A peer that goes away is not
/// an error: its end (or a write refused with EPIPE) closes the transport,
/// after the lines it sent before it went. A descriptor transport reads what
/// has already arrived before it times a request out, so an answer that came
/// in time is a response even if `next_event` was called late.
///
/// The event's data is valid until the next `next_event` (whatever it
/// returns), `receive` or `receive_end` on `t`, or its free. A receiving
/// call: one thread at a time; sends from other threads wake it.
///
/// # Safety
/// `t` is NULL or a live transport; `ev` is NULL or points to writable
/// memory for one `McpEvent`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcp_transport_next_event(
    t: *mut McpTransport,
    timeout_ms: i32,
    ev: *mut McpEvent,
) -> McpStatus {
    ffi_boundary!(mcp_transport_next_event, McpStatus::MCP_STATUS_PANIC, {
        // SAFETY: forwarded caller contract.
        let (handle, inner) = match unsafe { lock(t) } {
            Ok(locked) => locked,
            Err(status) => return status,
        };
        if ev.is_null() {
            return McpStatus::MCP_STATUS_NULL_ARGUMENT;
        }
        let wait = match u64::try_from(timeout_ms) {
            Err(_) => Wait::Forever,
            Ok(0) => Wait::Ready,
            Ok(ms) => Wait::Until(Instant::now() + Duration::from_millis(ms)),
        };
        // SAFETY: `ev` is non-null and writable, by the caller's contract.
        match unsafe { next_event(handle, inner, wait, ev) } {
            Ok(()) => McpStatus::MCP_STATUS_OK,
            Err(status) => status,
        }
    })
}

/// The loop of `mcp_transport_next_event`: an event written to `*ev`
/// (`Ok`; only then is `*ev` written), or the status to return. The event is
/// built where it goes: returned by value, its 136 bytes were copied twice
/// on the way (about a tenth of what the transport added to the bare
/// reader's cost per small message).
///
/// # Safety
/// `ev` points to writable memory for one `McpEvent`.
unsafe fn next_event<'a>(
    handle: &'a McpTransport,
    mut inner: MutexGuard<'a, Inner>,
    wait: Wait,
    ev: *mut McpEvent,
) -> Result<(), McpStatus> {
    // This thread is awake: a send need not wake it, and a wake-up already
    // signalled (for an event loop's poll) is taken.
    inner.waiting = false;
    #[cfg(unix)]
    if let Some(io) = &mut inner.io {
        io.clear_wake();
    }
    loop {
        if inner.core.is_closed() {
            return Err(McpStatus::MCP_STATUS_END_OF_STREAM);
        }
        #[cfg(unix)]
        {
            let Inner { core, io, .. } = &mut *inner;
            if let Some(io) = io {
                io.flush(core);
                // A refused write ends the transport, but after the lines
                // the peer sent before it went.
                if let Err(e) = io.read_left(core) {
                    return Err(e.into());
                }
                // A deadline is due: what already arrived (its answer,
                // maybe) is read first, so that it is not timed out.
                let due = core.next_deadline().is_some_and(|at| at <= Instant::now());
                if due {
                    if let Err(e) = io.read(core) {
                        return Err(e.into());
                    }
                }
            }
        }
        match inner.core.try_next_event_at(Instant::now) {
            Ok(Some(event)) => {
                let closed = matches!(event, Event::Closed);
                // Raw pointers into the reader's buffer, which writing and
                // sending never touch.
                // SAFETY: `ev` is writable, by the caller's contract.
                unsafe { ev.write(McpEvent::from(event)) };
                #[cfg(unix)]
                {
                    let Inner { core, io, .. } = &mut *inner;
                    if let Some(io) = io {
                        if closed {
                            io.end_write(core);
                        } else {
                            // What the event queued (a timed-out request's
                            // cancellation) goes out now, not next call.
                            io.flush(core);
                        }
                    }
                }
                let _ = closed;
                return Ok(());
            }
            Ok(None) => {}
            Err(e) => return Err(e.into()),
        }
        #[cfg(unix)]
        {
            let Inner { core, io, .. } = &mut *inner;
            if let Some(io) = io {
                match io.read(core) {
                    Ok(true) => continue,
                    Ok(false) => {}
                    Err(e) => return Err(e.into()),
                }
            }
        }
        // Nothing ready: wait for the peer, the next deadline, or a send.
        let until = match wait {
            Wait::Ready => return Err(McpStatus::MCP_STATUS_NO_MESSAGE),
            Wait::Until(at) => Some(at),
            Wait::Forever => None,
        };
        let scheduled = inner.core.next_deadline();
        let now = Instant::now();
        if until.is_some_and(|at| at <= now) {
            return Err(McpStatus::MCP_STATUS_NO_MESSAGE);
        }
        if scheduled.is_some_and(|at| at <= now) {
            continue; // due now: the core gives it
        }
        let wake_at = match (until, scheduled) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        inner.waiting = true;
        #[cfg(unix)]
        if inner.io.is_some() {
            inner = fds::wait(handle, inner, wake_at, now)?;
            continue;
        }
        let woken = match wake_at {
            None => handle.ready.wait(inner).ok(),
            Some(at) => handle
                .ready
                .wait_timeout(inner, at.saturating_duration_since(now))
                .ok()
                .map(|(inner, _)| inner),
        };
        inner = woken.ok_or(McpStatus::MCP_STATUS_POISONED)?;
        inner.waiting = false;
    }
}

/// Frees a transport and everything it holds. An open descriptor
/// transport is closed first, as `mcp_transport_close(t, 2000)` does (or on
/// the schedule of an earlier close), and this waits until it is: its
/// queue written (or dropped at the grace) and the peer's end seen, at most
/// about 2 s. A memory transport is freed at once (there is nothing to wait
/// for); what it still queued is dropped. Owned descriptors are closed;
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
                let _ = inner.core.close(FREE_GRACE, Instant::now());
                let mut event = std::mem::MaybeUninit::<McpEvent>::uninit();
                // SAFETY: `event` is writable memory for one `McpEvent`.
                while let Ok(()) =
                    unsafe { next_event(&handle, inner, Wait::Forever, event.as_mut_ptr()) }
                {
                    inner = match handle.inner.lock() {
                        Ok(inner) => inner,
                        Err(_) => break,
                    };
                }
            }
        }
        fault_point();
        drop(handle);
    })
}

#[cfg(test)]
mod tests;
