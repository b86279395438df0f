//! `McpEnvelope`: the C face of [`crate::envelope`], of
//! [`LineReader::envelope`](crate::LineReader::envelope) and of
//! [`crate::json_string_eq`].

use std::ffi::{c_char, CStr};

use super::boundary::fault_point;
use super::reader::{with_reader_ref, McpLineReader, McpRpcKind};
use super::slice::{bytes_in, McpSlice};
use super::McpStatus;
use crate::json::string_token_eq;
use crate::{Envelope, RpcKind};

/// The envelope of one JSON-RPC 2.0 message: its kind and the members a
/// host routes on, each the member's raw JSON value exactly as on the wire
/// (without the whitespace around it), pointing into the message's bytes.
///
/// When the text is one JSON-RPC message (`rpc_kind` is
/// `MCP_RPC_REQUEST`, `MCP_RPC_NOTIFICATION`, `MCP_RPC_RESPONSE` or
/// `MCP_RPC_ERROR`), each member it has is present, whatever the kind; when a
/// member repeats, the last one counts (as for the classification).
/// Otherwise `rpc_kind` is `MCP_RPC_NONE` and every member is absent
/// (`{NULL, 0}`): valid JSON that is not JSON-RPC, and batches too (they
/// have no single envelope).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct McpEnvelope {
    /// An `McpRpcKind` value: `MCP_RPC_REQUEST`, `MCP_RPC_NOTIFICATION`,
    /// `MCP_RPC_RESPONSE`, `MCP_RPC_ERROR`, or `MCP_RPC_NONE` (never `MCP_RPC_BATCH`).
    pub rpc_kind: i32,
    /// The `id` token exactly as on the wire: `7`, `"abc"`, or `null` (an
    /// error response whose request's id could not be read). Absent for a
    /// notification, and for an error response without an id.
    pub id: McpSlice,
    /// The `method` JSON string token, quotes and escapes included: compare
    /// it with `mcp_json_string_eq`.
    pub method: McpSlice,
    /// The `params` value (an object or an array in a request or notification).
    pub params: McpSlice,
    /// The `result` value (any JSON value, `null` included).
    pub result: McpSlice,
    /// The `error` object.
    pub error: McpSlice,
}

impl From<Envelope<'_>> for McpEnvelope {
    fn from(e: Envelope<'_>) -> Self {
        let kind = match e.kind {
            Some(RpcKind::Batch) => None,
            kind => kind,
        };
        McpEnvelope {
            rpc_kind: McpRpcKind::from(kind) as i32,
            id: e.id.into(),
            method: e.method.into(),
            params: e.params.into(),
            result: e.result.into(),
            error: e.error.into(),
        }
    }
}

/// Reads the envelope of one JSON text: validates it and classifies it as
/// JSON-RPC 2.0 in one pass, exactly as a reader with `MCP_READER_JSONRPC`
/// does, noting where the members of the envelope are. Whitespace around
/// the text is allowed.
///
/// Returns `MCP_STATUS_OK` and fills `*out` for any JSON text (`rpc_kind`
/// `MCP_RPC_NONE` and every member absent when it is not one JSON-RPC
/// message, a batch included); or, leaving `*out` untouched:
/// `MCP_STATUS_NULL_ARGUMENT` (out NULL, or json NULL with `len` > 0),
/// `MCP_STATUS_INVALID_JSON` (not exactly one JSON text in valid UTF-8,
/// empty — `(NULL, 0)` included), `MCP_STATUS_INVALID_ARGUMENT` (`len` >
/// PTRDIFF_MAX) or `MCP_STATUS_OUT_OF_MEMORY` (the text nests so deep that
/// its stack of open containers, one bit a level, could not be allocated).
///
/// The members point into `json`: they are valid as long as those bytes
/// are, and unchanged. Nothing is allocated for them, nothing is to be
/// freed. Thread-safe: it touches no shared state.
///
/// # Safety
/// `json` is NULL or points to `len` readable bytes; `out` is NULL or points
/// to writable memory for one `McpEnvelope`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcp_envelope_parse(
    json: *const u8,
    len: usize,
    out: *mut McpEnvelope,
) -> McpStatus {
    ffi_boundary!(mcp_envelope_parse, McpStatus::MCP_STATUS_PANIC, {
        fault_point();
        if out.is_null() {
            return McpStatus::MCP_STATUS_NULL_ARGUMENT;
        }
        // SAFETY: `json` points to `len` readable bytes, by the caller's contract.
        let input = match unsafe { bytes_in(json, len) } {
            Ok(input) => input,
            Err(status) => return status,
        };
        match crate::envelope(input) {
            Ok(envelope) => {
                // SAFETY: `out` is non-null and writable, by the caller's contract.
                unsafe { out.write(envelope.into()) };
                McpStatus::MCP_STATUS_OK
            }
            Err(e) => e.into(),
        }
    })
}

/// Fills `*out` with the envelope of the item the last call to
/// `mcp_line_reader_next_message` returned, as that call found it while
/// classifying the line: nothing is read again. That is what
/// `mcp_envelope_parse` gives for the item's data when the item is an
/// `MCP_MESSAGE_JSON` taken with `MCP_READER_JSONRPC` on. Otherwise —
/// classification off, any other kind of item, a batch, `next_message`
/// returned no item, or any call on the reader since other than this one
/// and `mcp_line_reader_buffered_len` — `rpc_kind` is `MCP_RPC_NONE` and
/// every member absent (`{NULL, 0}`).
///
/// The members point into the reader's buffer, inside the message's data,
/// and live as long as it: until the next call on this reader other than
/// this one and `mcp_line_reader_buffered_len` (`mcp_line_reader_free`
/// included). This call changes nothing, so it leaves the message's data
/// valid, and can be made any number of times.
///
/// Returns `MCP_STATUS_OK`, `MCP_STATUS_NULL_ARGUMENT` (reader or out NULL;
/// the reader is checked first) or `MCP_STATUS_POISONED`; `*out` is written
/// only on `MCP_STATUS_OK`. A panic inside it (a bug) returns
/// `MCP_STATUS_PANIC` and, since nothing was changed, does not poison the reader.
///
/// # Safety
/// `reader` is NULL or a live reader, not being changed by another thread
/// during the call; `out` is NULL or points to writable memory for one
/// `McpEnvelope`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcp_line_reader_envelope(
    reader: *const McpLineReader,
    out: *mut McpEnvelope,
) -> McpStatus {
    ffi_boundary!(mcp_line_reader_envelope, McpStatus::MCP_STATUS_PANIC, {
        let envelope = |r: &crate::LineReader| {
            if out.is_null() {
                return McpStatus::MCP_STATUS_NULL_ARGUMENT;
            }
            // SAFETY: `out` is non-null and writable, by the caller's contract.
            unsafe { out.write(r.envelope().into()) };
            McpStatus::MCP_STATUS_OK
        };
        // SAFETY: forwarded caller contract.
        unsafe { with_reader_ref(reader, envelope) }
    })
}

/// Whether the JSON string token `token[0..len]` (quotes included, nothing
/// around it: an envelope's `method`, say) stands for the NUL-terminated
/// UTF-8 `text`, comparing while it unescapes: `"tools\/call"` and
/// `"\u0074ools/call"` both equal `tools/call`, and the surrogate pair
/// `"\ud83d\ude00"` equals the UTF-8 of U+1F600. Allocates nothing.
///
/// Returns true only for a valid JSON string token whose value is `text`;
/// false for anything else: another value, a token that is not a string
/// (`7`, `null`) or not a valid one (a bad escape, invalid UTF-8, bytes
/// after the closing quote), a lone surrogate escape (no UTF-8 text holds
/// one), `token` NULL with `len` > 0, `len` > PTRDIFF_MAX, or `text` NULL.
/// Neither argument is kept. Thread-safe: it touches no shared state.
///
/// # Safety
/// `token` is NULL or points to `len` readable bytes; `text` is NULL or a
/// NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcp_json_string_eq(
    token: *const u8,
    len: usize,
    text: *const c_char,
) -> bool {
    ffi_boundary!(mcp_json_string_eq, false, {
        fault_point();
        // SAFETY: `token` points to `len` readable bytes, by the caller's contract.
        let Ok(token) = (unsafe { bytes_in(token, len) }) else {
            return false;
        };
        if text.is_null() {
            return false;
        }
        // SAFETY: non-null and NUL-terminated, by the caller's contract.
        let text = unsafe { CStr::from_ptr(text) };
        string_token_eq(token, text.to_bytes())
    })
}
