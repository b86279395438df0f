//! Why a transport ended: `mcp_transport_end_reason` (a code) and
//! `mcp_transport_end_text` (words), read through the transport: no
//! thread-local "last error", which a goroutine moving between threads
//! between cgo calls would miss.

use super::super::buffer::McpBuffer;
use super::{lock, McpStatus, McpTransport};
use crate::end_reason::EndReason;

/// What `mcp_transport_end_reason` returns.
#[repr(i32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(non_camel_case_types)]
pub enum McpEndReason {
    /// The transport is open (and for NULL).
    MCP_END_NONE = 0,
    /// We closed it: `mcp_transport_close` (or a free) came first.
    MCP_END_CLOSED_BY_HOST = 1,
    /// The peer closed its output (a spawned server its stdout) and, as far
    /// as known, lives on: no answer can come.
    MCP_END_PEER_CLOSED = 2,
    /// A write to the peer was refused: it reads no more.
    MCP_END_WRITE_REFUSED = 3,
    /// A spawned server exited by itself; the failures' `exit_code` (and
    /// `MCP_EVENT_CLOSED`'s) has its status.
    MCP_END_SERVER_EXITED = 4,
    /// A spawned server was killed by a signal that was not ours (POSIX);
    /// the failures' `term_signal` has it.
    MCP_END_SERVER_KILLED = 5,
}

/// Why the transport ended, or is ending: an `McpEndReason` value
/// (`MCP_END_NONE` while it is open, and for NULL). The first cause stands,
/// but that a server's exit, noticed a moment after its stdout ended or a
/// write to it failed, takes their place. `MCP_EVENT_REQUEST_FAILED`
/// events come with this reason.
///
/// `before_first_message` (NULL: not wanted) is set to true when a spawned
/// server exited (`MCP_END_SERVER_EXITED`, `MCP_END_SERVER_KILLED`) before
/// it wrote any line on its stdout (a server that failed to start: its
/// stderr tail says why), false otherwise. Any thread.
///
/// # Safety
/// `t` is NULL or a live transport; `before_first_message` is NULL or
/// points to a writable `bool`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcp_transport_end_reason(
    t: *const McpTransport,
    before_first_message: *mut bool,
) -> i32 {
    ffi_boundary!(
        mcp_transport_end_reason,
        McpEndReason::MCP_END_NONE as i32,
        {
            // SAFETY: forwarded caller contract.
            let reason = match unsafe { lock(t) } {
                Ok((_, inner)) => inner.end_reason(),
                Err(_) => None,
            };
            let (code, early) = match reason {
                None => (McpEndReason::MCP_END_NONE, false),
                Some(EndReason::ClosedByUs) => (McpEndReason::MCP_END_CLOSED_BY_HOST, false),
                Some(EndReason::PeerClosed) => (McpEndReason::MCP_END_PEER_CLOSED, false),
                Some(EndReason::WriteRefused) => (McpEndReason::MCP_END_WRITE_REFUSED, false),
                Some(EndReason::ServerExited(exit)) => match exit.signal {
                    Some(_) => (
                        McpEndReason::MCP_END_SERVER_KILLED,
                        exit.before_first_message,
                    ),
                    None => (
                        McpEndReason::MCP_END_SERVER_EXITED,
                        exit.before_first_message,
                    ),
                },
            };
            if !before_first_message.is_null() {
                // SAFETY: non-null and writable, by the caller's contract.
                unsafe { before_first_message.write(early) };
            }
            code as i32
        }
    )
}

/// Why the transport ended, in words, for a log or a user: "server exited
/// with code 1 before its first message: ModuleNotFoundError: No module
/// named 'foo'" (the exit, then the last line of the server's stderr tail
/// that is not blank, up to 200 bytes), "server killed by signal 9",
/// "server closed its stdout", "server reads its stdin no more (a write
/// was refused)", "closed by the host"; for a transport that spawned
/// nothing, "the peer closed its output" and "the peer reads no more (a
/// write was refused)". Valid UTF-8 (invalid stderr bytes replaced), not
/// NUL-terminated; empty while the transport is open.
///
/// Writes the text to `*out` (free it with `mcp_buffer_free`; an empty
/// buffer holds no allocation). Returns `MCP_STATUS_OK`,
/// `MCP_STATUS_NULL_ARGUMENT` (t or out NULL) or `MCP_STATUS_POISONED`.
/// (The text, a few hundred bytes, is allocated as Rust allocates: should
/// that fail, the process aborts.) Any thread.
///
/// # Safety
/// `t` is NULL or a live transport; `out` is NULL or points to a writable
/// `McpBuffer`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcp_transport_end_text(
    t: *const McpTransport,
    out: *mut McpBuffer,
) -> McpStatus {
    ffi_boundary!(mcp_transport_end_text, McpStatus::MCP_STATUS_PANIC, {
        // SAFETY: forwarded caller contract.
        let inner = match unsafe { lock(t) } {
            Ok((_, inner)) => inner,
            Err(status) => return status,
        };
        if out.is_null() {
            return McpStatus::MCP_STATUS_NULL_ARGUMENT;
        }
        let text = inner.end_text().unwrap_or_default();
        drop(inner);
        // SAFETY: `out` is non-null and writable, by the caller's contract.
        unsafe { out.write(McpBuffer::from_vec(text.into_bytes())) };
        McpStatus::MCP_STATUS_OK
    })
}
