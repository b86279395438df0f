//! Taking events: `next_event` (the loop that waits, moves a descriptor
//! transport's bytes, and asks the core) and `next_deadline`.

use std::sync::MutexGuard;
use std::time::{Duration, Instant};

#[cfg(unix)]
use super::fds;
use super::{lock, Inner, McpEvent, McpEventKind, McpStatus, McpTransport};
use crate::Event;

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

/// Reads (of up to 64 KiB each) that give no event before `next_event`
/// looks at its time and lets other threads in: about 1 MiB of blank lines,
/// or `TURN_TIME` of reading, whichever comes first (a slow build, or a
/// machine under load, reads far less in a turn).
#[cfg(unix)]
const READS_PER_TURN: usize = 16;
#[cfg(unix)]
const TURN_TIME: Duration = Duration::from_millis(5);

/// How long `next_event` may wait.
#[derive(Clone, Copy)]
pub(super) enum Wait {
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
pub(super) unsafe fn next_event<'a>(
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
        if let Some(process) = io.process_mut() {
            process.begin_call(); // the last event's stderr line goes
        }
    }
    // Reads in a row that gave no event, since the last wait.
    #[cfg(unix)]
    let mut reads = 0;
    #[cfg(unix)]
    let mut turn_began = Instant::now();
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
                if let Err(e) = io.finish_end(core) {
                    return Err(e.into());
                }
                // A deadline is due: what already arrived (its answer,
                // maybe) is read first, so that it is not timed out; once
                // per deadline, and only when no line is waiting (those
                // come first anyway), so that a peer that keeps writing
                // can neither hold the timeout back nor grow the buffer.
                if let Err(e) = io.catch_up(core) {
                    return Err(e.into());
                }
                // Reap, signal, drain stderr; end the transport when the
                // server is gone.
                match io.process_mut().map(|process| process.supervise(core)) {
                    Some(Err(e)) => return Err(e.into()),
                    // Killed just now: what its stdout holds is read first.
                    Some(Ok(true)) => {
                        io.read_what_is_left();
                        continue;
                    }
                    _ => {}
                }
                if let Some(process) = io.process_mut() {
                    // Once its end is under way, the stderr lines left come
                    // before the end's events.
                    // SAFETY: `ev` is writable, by the caller's contract.
                    if process.ending() && unsafe { stderr_event(process, ev) } {
                        return Ok(());
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
                            if let Some(process) = io.process() {
                                // SAFETY: as above; the event was just written.
                                unsafe {
                                    (*ev).exit_code = process.exit_code();
                                    (*ev).term_signal = process.term_signal();
                                }
                            }
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
                // Bytes that give no event (blank lines, the rest of a line
                // too long) may never run out: after `READS_PER_TURN` such
                // reads or `TURN_TIME`, or once the caller's time is up, the
                // wait below has its say (the time, the lock for other
                // threads). The first read of a call always happens: what is
                // there is taken, however short the time.
                let turn_over = reads > 0 && {
                    let now = Instant::now();
                    reads >= READS_PER_TURN
                        || now.saturating_duration_since(turn_began) >= TURN_TIME
                        || matches!(wait, Wait::Until(at) if at <= now)
                };
                let read = if !turn_over { io.read(core) } else { Ok(false) };
                match read {
                    Ok(true) => {
                        reads += 1;
                        continue;
                    }
                    Ok(false) => {}
                    Err(e) => return Err(e.into()),
                }
                // The server's stderr lines come when its messages are
                // taken, those it has sent included (read just above): a
                // chatty stderr cannot hold answers back.
                if let Some(process) = io.process_mut() {
                    // SAFETY: `ev` is writable, by the caller's contract.
                    if unsafe { stderr_event(process, ev) } {
                        return Ok(());
                    }
                }
            }
        }
        // Nothing ready: wait for the peer, the next deadline, or a send.
        let until = match wait {
            Wait::Ready => return Err(McpStatus::MCP_STATUS_NO_MESSAGE),
            Wait::Until(at) => Some(at),
            Wait::Forever => None,
        };
        let now = Instant::now();
        let scheduled = inner.next_deadline(now);
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
            reads = 0;
            turn_began = Instant::now();
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

/// Writes the server's next stderr line to `*ev` as an `MCP_EVENT_STDERR`;
/// false when none is waiting.
///
/// # Safety
/// `ev` points to writable memory for one `McpEvent`.
#[cfg(unix)]
unsafe fn stderr_event(process: &mut crate::process::server::Server, ev: *mut McpEvent) -> bool {
    let Some(line) = process.stderr_line() else {
        return false;
    };
    let event = McpEvent {
        kind: McpEventKind::MCP_EVENT_STDERR as i32,
        data: line.as_ptr(),
        len: line.len(),
        ..McpEvent::from(Event::Closed)
    };
    // SAFETY: forwarded caller contract.
    unsafe { ev.write(event) };
    true
}
