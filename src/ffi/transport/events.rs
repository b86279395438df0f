//! Taking events: `next_event` (the loop that waits, moves a descriptor
//! transport's bytes, and asks the core) and `next_deadline`.

use std::time::{Duration, Instant};

use super::{lock, McpEvent, McpStatus, McpTransport};
use crate::connection::{Taken, Wait};

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
        unsafe { timeout_ms.write(inner.millis_to_deadline()) };
        McpStatus::MCP_STATUS_OK
    })
}

// ---- Events ----

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
/// The timeout holds whatever the peer sends: bytes that give no event
/// (blank lines, the rest of a line too long) are read at most 16 reads of
/// 64 KiB (1 MiB), or 5 ms, at a time before the time is looked at, so
/// timeout 0 returns `MCP_STATUS_NO_MESSAGE` after at most that much. A descriptor
/// transport reads only when no line it read is waiting to be taken, so it
/// holds at most the line limit and one read (64 KiB) of lines, whatever
/// the pace at which events are taken (`docs/contract.md`, §Bounds).
///
/// The event's data is valid until the next `next_event` (whatever it
/// returns), `receive` or `receive_end` on `t`, or its free. A receiving
/// call: one thread at a time; sends from other threads wake it. It holds
/// the transport's lock while it moves bytes (a turn: at most 16 reads or
/// 5 ms, and judging the lines read), not while it waits: a send, `close`
/// or `next_deadline` from another thread waits for one turn at most,
/// never for the peer.
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
        let (shared, inner) = match unsafe { lock(t) } {
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
        // The event is written where it goes, its data pointing into the
        // reader's buffer, which only this (receiving) thread moves.
        let taken = shared.next_event_locked(inner, wait, |event, exit| {
            // SAFETY: `ev` is non-null and writable, by the caller's contract.
            unsafe { ev.write(McpEvent::new(event, exit)) }
        });
        match taken {
            Ok(Taken::Event(())) => McpStatus::MCP_STATUS_OK,
            Ok(Taken::NoMessage) => McpStatus::MCP_STATUS_NO_MESSAGE,
            Ok(Taken::Ended) => McpStatus::MCP_STATUS_END_OF_STREAM,
            Err(e) => e.into(),
        }
    })
}
