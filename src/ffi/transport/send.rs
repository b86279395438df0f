//! The sending calls: `send`, `request`, `notify`, `respond`,
//! `respond_error`, `cancel`, and `close`. Any thread, any time: each takes
//! the lock, queues, and wakes a thread waiting for events.

use std::ffi::{c_char, CStr};
use std::time::{Duration, Instant};

use super::{lock, McpStatus, McpTransport};
use crate::ffi::slice::bytes_in;
use crate::{Error, RequestOptions, Transport};

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
    let (shared, mut inner) = match unsafe { lock(t) } {
        Ok(locked) => locked,
        Err(status) => return status,
    };
    match send(&mut inner.core) {
        Ok(()) => {
            shared.wake(&mut inner);
            McpStatus::MCP_STATUS_OK
        }
        Err(status) => status,
    }
}

/// A NUL-terminated UTF-8 string argument: NULL is
/// `MCP_STATUS_NULL_ARGUMENT`, invalid UTF-8 `MCP_STATUS_INVALID_TEXT`.
///
/// # Safety
/// `text` is NULL or a NUL-terminated string that lives for `'a`.
unsafe fn text_in<'a>(text: *const c_char) -> Result<&'a str, McpStatus> {
    if text.is_null() {
        return Err(McpStatus::MCP_STATUS_NULL_ARGUMENT);
    }
    // SAFETY: non-null and NUL-terminated, by the caller's contract.
    let bytes = unsafe { CStr::from_ptr(text) }.to_bytes();
    std::str::from_utf8(bytes).map_err(|_| McpStatus::MCP_STATUS_INVALID_TEXT)
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
/// NULL), `MCP_STATUS_INVALID_TEXT` (method not UTF-8),
/// `MCP_STATUS_INVALID_PARAMS` (params valid JSON but not an object or
/// array), `MCP_STATUS_INVALID_ARGUMENT` (ids exhausted),
/// `MCP_STATUS_INVALID_JSON` (params not one JSON text). A refused request uses no id and writes
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

/// `mcp_transport_request_with`'s flag: follow the request's progress. The
/// transport puts a `progressToken` in the request's `params._meta` (merged
/// into a `_meta` the params carry, made when they have none; params that
/// are an array are refused with `MCP_STATUS_INVALID_PARAMS`) and gives
/// each `notifications/progress` for it as an `MCP_EVENT_PROGRESS` event
/// with the request's id, until the request ends.
pub const MCP_REQUEST_PROGRESS: u32 = 1 << 0;

/// `mcp_transport_request_with`'s flag: follow the request's progress (as
/// `MCP_REQUEST_PROGRESS`) and let each notification whose `progress`
/// value increases move the deadline to `timeout_ms` from then, never past
/// `max_ms` after the request was sent (a value that does not increase is
/// delivered and resets nothing).
pub const MCP_REQUEST_RESET_ON_PROGRESS: u32 = 1 << 1;

/// `mcp_transport_request` with options: `flags`, a bitwise OR of
/// `MCP_REQUEST_PROGRESS` and `MCP_REQUEST_RESET_ON_PROGRESS` (0: the same
/// as `mcp_transport_request`), and `max_ms`, the hard maximum (0: none):
/// the request times out `max_ms` after it is sent at the latest, whatever
/// the progress. A long tool call that reports progress every second then
/// outlives a short `timeout_ms`, and still ends at `max_ms`.
///
/// Returns as `mcp_transport_request`, and `MCP_STATUS_UNKNOWN_FLAGS`,
/// `MCP_STATUS_INVALID_PARAMS` (with progress: params that are an array, a
/// `_meta` that is not an object or already holds a `progressToken`).
/// Any thread.
///
/// # Safety
/// As `mcp_transport_request`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcp_transport_request_with(
    t: *mut McpTransport,
    method: *const c_char,
    params: *const u8,
    params_len: usize,
    timeout_ms: u32,
    flags: u32,
    max_ms: u32,
    id: *mut i64,
) -> McpStatus {
    ffi_boundary!(mcp_transport_request_with, McpStatus::MCP_STATUS_PANIC, {
        if flags & !(MCP_REQUEST_PROGRESS | MCP_REQUEST_RESET_ON_PROGRESS) != 0 {
            return McpStatus::MCP_STATUS_UNKNOWN_FLAGS;
        }
        // SAFETY: forwarded caller contract.
        unsafe {
            send_with(t, |core| {
                let method = text_in(method)?;
                let params = optional_json_in(params, params_len)?;
                let millis = |ms: u32| (ms > 0).then(|| Duration::from_millis(ms.into()));
                let mut options = RequestOptions::timeout(millis(timeout_ms));
                if flags & MCP_REQUEST_PROGRESS != 0 {
                    options = options.progress();
                }
                if flags & MCP_REQUEST_RESET_ON_PROGRESS != 0 {
                    options = options.reset_on_progress();
                }
                if let Some(max) = millis(max_ms) {
                    options = options.max_timeout(max);
                }
                let new_id = core.request_with(method, params, options, Instant::now())?;
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
/// NULL), `MCP_STATUS_INVALID_ARGUMENT` (`id` not a JSON string or
/// number), `MCP_STATUS_INVALID_TEXT` (message not UTF-8). Any thread.
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
/// MCP forbids cancelling), `MCP_STATUS_INVALID_TEXT` (reason not UTF-8),
/// `MCP_STATUS_CLOSED`,
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
///   A spawned server is the exception: `MCP_EVENT_CLOSED` waits for the
///   process too (SIGTERM at `grace_ms`, SIGKILL at twice `grace_ms`), so
///   it comes at most about `2 * grace_ms` after this call, plus 1 s for a
///   server stuck in the kernel; see `mcp_transport_spawn`.
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
        let (shared, mut inner) = match unsafe { lock(t) } {
            Ok(locked) => locked,
            Err(status) => return status,
        };
        let grace = Duration::from_millis(grace_ms.into());
        match inner.begin_close(grace, Instant::now()) {
            Ok(()) => {
                shared.wake(&mut inner);
                McpStatus::MCP_STATUS_OK
            }
            Err(e) => e.into(),
        }
    })
}
