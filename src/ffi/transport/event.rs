//! `McpEvent`: one [`Event`] of a transport, in C.

use std::ptr;

use super::super::envelope::McpEnvelope;
use super::super::reader::{McpMessageKind, McpRpcKind};
use crate::connection::Exit;
use crate::{Event, InvalidKind};

/// What `McpEvent.kind` holds.
#[repr(i32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(non_camel_case_types)]
pub enum McpEventKind {
    /// A message from the peer that answers no request of ours: a request or
    /// a notification (answer it with `mcp_transport_respond`), a response to
    /// no pending request (stray, late after a timeout or a cancel, or a
    /// duplicate), or a batch (`rpc_kind` `MCP_RPC_BATCH`, envelope absent).
    /// `data`/`len`: the line; `envelope`: its members.
    MCP_EVENT_MESSAGE = 1,
    /// The answer (result or error) to our request `request_id`. Comes once
    /// per request. `data`/`len`: the line; `envelope`: its members
    /// (`rpc_kind` `MCP_RPC_RESPONSE` or `MCP_RPC_ERROR`).
    MCP_EVENT_RESPONSE = 2,
    /// Our request `request_id` reached its deadline unanswered. It is
    /// forgotten (a late answer is an `MCP_EVENT_MESSAGE`) and, unless it was
    /// an `initialize`, a `notifications/cancelled` for it was queued.
    MCP_EVENT_REQUEST_TIMED_OUT = 3,
    /// Our request `request_id` will never be answered: the transport
    /// closed, or its peer can answer no more (a spawned server exited, or
    /// closed its stdout: then these come at once, not at the end of the
    /// shutdown). By ascending id, after the lines received before the
    /// end, before `MCP_EVENT_CLOSED`. `mcp_transport_end_reason` says why,
    /// `mcp_transport_end_text` in words; `exit_code` and `term_signal`
    /// carry a spawned server's exit status when it is known by then.
    MCP_EVENT_REQUEST_FAILED = 4,
    /// A line from the peer that is not a message (nothing is dropped
    /// silently): `invalid_kind` says why; `data`/`len` the line (`data`
    /// NULL and `len` the bytes received for `MCP_MESSAGE_TOO_LONG`).
    MCP_EVENT_INVALID = 5,
    /// One line a spawned server wrote to its stderr (`MCP_STDERR_EVENTS`):
    /// `data`/`len` without the newline (a line over 64 KiB comes in pieces
    /// of 64 KiB). They come in the order written, interleaved with the
    /// other events as they arrive, all before `MCP_EVENT_CLOSED`.
    MCP_EVENT_STDERR = 6,
    /// The transport is closed. Always the last event, given once; then
    /// `mcp_transport_next_event` returns `MCP_STATUS_END_OF_STREAM`. A
    /// server restarted by its command's restart policy does not close the
    /// transport (`MCP_EVENT_RESTARTED`): this comes only when it is done.
    MCP_EVENT_CLOSED = 7,
    /// A `notifications/progress` for our request `request_id`, sent with
    /// `MCP_REQUEST_PROGRESS` (`mcp_transport_request_with`): its
    /// `progressToken` named the request. `data`/`len`: the line;
    /// `envelope`: its members (its `params` hold `progress`, `total`,
    /// `message`). With `MCP_REQUEST_RESET_ON_PROGRESS`, an increasing
    /// `progress` moved the request's deadline. Only while the request is
    /// pending; no transport gives these unless asked.
    MCP_EVENT_PROGRESS = 8,
    /// A notification of the stream of our `subscriptions/listen` request
    /// `request_id` (MCP 2026-07-28): its
    /// `_meta["io.modelcontextprotocol/subscriptionId"]` named the request
    /// (`notifications/subscriptions/acknowledged`, then what it listens
    /// to). `data`/`len`: the line; `envelope`: its members. Only while
    /// the subscription is open.
    MCP_EVENT_SUBSCRIPTION = 9,
    /// The server ended our subscription `request_id` with a
    /// `notifications/cancelled` for it: the listen request is over (no
    /// other event comes for it). `data`/`len`: the line (its
    /// `params.reason` may say why).
    MCP_EVENT_SUBSCRIPTION_ENDED = 10,
    /// A spawned server that ended unexpectedly was started again, by its
    /// command's restart policy (`mcp_command_restart`). Its pending
    /// requests failed before this (`MCP_EVENT_REQUEST_FAILED`, open
    /// subscriptions included), and so did those sent while it was down;
    /// sends meanwhile returned `MCP_STATUS_RESTARTING`. Everything after
    /// this event is the new process's: do the handshake again, and listen
    /// again to what was subscribed to. `exit_code` and `term_signal`: how
    /// the server before it ended; `mcp_transport_pid` gives the new
    /// server's pid and `mcp_transport_restarts` this restart's number (1
    /// for the first), both until the next event. Request ids go on.
    MCP_EVENT_RESTARTED = 11,
}

/// One event of a transport, from `mcp_transport_next_event`. Fields that do
/// not apply to the event's kind are 0 or NULL, `request_id` and `exit_code`
/// -1, and the envelope absent with `rpc_kind` `MCP_RPC_NONE`.
///
/// `data` and the envelope's slices point into the transport: they are
/// valid until the next call on that transport that receives
/// (`mcp_transport_next_event`, `mcp_transport_receive`,
/// `mcp_transport_receive_end`) or frees it. Sends from other threads meanwhile
/// do not disturb them. Copy what you keep; never free them.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct McpEvent {
    /// An `McpEventKind` value.
    pub kind: i32,
    /// `MCP_EVENT_MESSAGE`, `MCP_EVENT_RESPONSE`: the message's `McpRpcKind`
    /// (`MCP_RPC_BATCH` for a batch); `MCP_RPC_NONE` otherwise.
    pub rpc_kind: i32,
    /// `MCP_EVENT_RESPONSE`, `MCP_EVENT_PROGRESS`, `MCP_EVENT_SUBSCRIPTION`,
    /// `MCP_EVENT_SUBSCRIPTION_ENDED`, `MCP_EVENT_REQUEST_TIMED_OUT`,
    /// `MCP_EVENT_REQUEST_FAILED`: the id `mcp_transport_request` gave; -1 otherwise.
    pub request_id: i64,
    /// `MCP_EVENT_MESSAGE`, `MCP_EVENT_RESPONSE`, `MCP_EVENT_INVALID`, and
    /// the notifications tied to a request (`MCP_EVENT_PROGRESS`,
    /// `MCP_EVENT_SUBSCRIPTION`, `MCP_EVENT_SUBSCRIPTION_ENDED`): the line,
    /// trimmed, not NUL-terminated (NULL for a line too long);
    /// `MCP_EVENT_STDERR`: one stderr line without its newline.
    pub data: *const u8,
    /// The number of bytes at `data` (for a line too long: bytes received).
    pub len: usize,
    /// `MCP_EVENT_MESSAGE` (but a batch), `MCP_EVENT_RESPONSE` and the
    /// notifications tied to a request: the message's id, method, params,
    /// result and error, pointing into `data`.
    pub envelope: McpEnvelope,
    /// `MCP_EVENT_INVALID`: an `McpMessageKind`, `MCP_MESSAGE_PARSE_ERROR`,
    /// `MCP_MESSAGE_TOO_LONG` or `MCP_MESSAGE_INVALID_JSONRPC`; 0 otherwise.
    pub invalid_kind: i32,
    /// `MCP_EVENT_CLOSED`, and `MCP_EVENT_REQUEST_FAILED` once it is
    /// known, after a spawned server exited: its exit status; -1 otherwise
    /// (no process, still running, or killed by a signal).
    /// `MCP_EVENT_RESTARTED`: the same, of the server before the restart.
    pub exit_code: i32,
    /// `MCP_EVENT_CLOSED`, and `MCP_EVENT_REQUEST_FAILED` once it is
    /// known, after a spawned server was killed by a signal: the signal; 0
    /// otherwise. `MCP_EVENT_RESTARTED`: the same, of the server before
    /// the restart.
    pub term_signal: i32,
}

impl McpEvent {
    /// An event of `kind` with every other field "does not apply".
    #[inline]
    fn empty(kind: McpEventKind) -> McpEvent {
        McpEvent {
            kind: kind as i32,
            rpc_kind: McpRpcKind::MCP_RPC_NONE as i32,
            request_id: -1,
            data: ptr::null(),
            len: 0,
            envelope: crate::Envelope::default().into(),
            invalid_kind: 0,
            exit_code: -1,
            term_signal: 0,
        }
    }
}

impl McpEvent {
    /// A notification tied to our request `id`.
    #[inline]
    fn tied(kind: McpEventKind, id: i64, line: &[u8], envelope: crate::Envelope<'_>) -> McpEvent {
        McpEvent {
            rpc_kind: McpRpcKind::from(envelope.kind) as i32,
            request_id: id,
            data: line.as_ptr(),
            len: line.len(),
            envelope: envelope.into(),
            ..McpEvent::empty(kind)
        }
    }

    /// The C form of `event` (`exit`: how a spawned server ended, as far
    /// as known, for `Closed` and `RequestFailed`). Its pointers borrow the event's data.
    // Inlined into `next_event`, the event is built in the caller's memory
    // instead of in a temporary that is then copied.
    #[inline]
    pub(super) fn new(event: Event<'_>, exit: Exit) -> Self {
        match event {
            Event::Message { line, envelope } => McpEvent {
                rpc_kind: McpRpcKind::from(envelope.kind) as i32,
                data: line.as_ptr(),
                len: line.len(),
                envelope: envelope.into(),
                ..McpEvent::empty(McpEventKind::MCP_EVENT_MESSAGE)
            },
            Event::Response { id, line, envelope } => McpEvent {
                rpc_kind: McpRpcKind::from(envelope.kind) as i32,
                request_id: id,
                data: line.as_ptr(),
                len: line.len(),
                envelope: envelope.into(),
                ..McpEvent::empty(McpEventKind::MCP_EVENT_RESPONSE)
            },
            Event::Progress { id, line, envelope } => {
                McpEvent::tied(McpEventKind::MCP_EVENT_PROGRESS, id, line, envelope)
            }
            Event::Subscription { id, line, envelope } => {
                McpEvent::tied(McpEventKind::MCP_EVENT_SUBSCRIPTION, id, line, envelope)
            }
            Event::SubscriptionEnded { id, line, envelope } => McpEvent::tied(
                McpEventKind::MCP_EVENT_SUBSCRIPTION_ENDED,
                id,
                line,
                envelope,
            ),
            Event::RequestTimedOut { id } => McpEvent {
                request_id: id,
                ..McpEvent::empty(McpEventKind::MCP_EVENT_REQUEST_TIMED_OUT)
            },
            Event::RequestFailed { id, .. } => McpEvent {
                request_id: id,
                exit_code: exit.code,
                term_signal: exit.signal,
                ..McpEvent::empty(McpEventKind::MCP_EVENT_REQUEST_FAILED)
            },
            Event::Invalid { kind, line, len } => McpEvent {
                data: line.map_or(ptr::null(), <[u8]>::as_ptr),
                len,
                invalid_kind: match kind {
                    InvalidKind::ParseError => McpMessageKind::MCP_MESSAGE_PARSE_ERROR,
                    InvalidKind::TooLong => McpMessageKind::MCP_MESSAGE_TOO_LONG,
                    InvalidKind::InvalidJsonRpc => McpMessageKind::MCP_MESSAGE_INVALID_JSONRPC,
                } as i32,
                ..McpEvent::empty(McpEventKind::MCP_EVENT_INVALID)
            },
            Event::Stderr { line } => McpEvent {
                data: line.as_ptr(),
                len: line.len(),
                ..McpEvent::empty(McpEventKind::MCP_EVENT_STDERR)
            },
            Event::Restarted { .. } => McpEvent {
                exit_code: exit.code,
                term_signal: exit.signal,
                ..McpEvent::empty(McpEventKind::MCP_EVENT_RESTARTED)
            },
            Event::Closed => McpEvent {
                exit_code: exit.code,
                term_signal: exit.signal,
                ..McpEvent::empty(McpEventKind::MCP_EVENT_CLOSED)
            },
        }
    }
}
