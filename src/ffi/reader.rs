//! `McpLineReader`: the C handle around [`LineReader`].

use std::alloc::{alloc, Layout};
use std::cell::Cell;
use std::marker::PhantomData;
use std::num::NonZeroUsize;
use std::ptr;

use super::boundary::fault_point;
use super::slice::bytes_in;
use super::McpStatus;
use crate::{LineReader, Message, RpcKind};

/// Flag for `mcp_line_reader_set_flags`: drop lines that are not JSON (and,
/// with `MCP_READER_JSONRPC`, JSON that is not JSON-RPC) silently instead of
/// reporting them. Too-long lines are reported whatever the flags.
pub const MCP_READER_SKIP_INVALID: u32 = 1 << 0;
/// Flag for `mcp_line_reader_set_flags`: classify each message as JSON-RPC 2.0
/// (`McpMessage.rpc_kind`); valid JSON that is none of the JSON-RPC kinds
/// yields `MCP_MESSAGE_INVALID_JSONRPC`.
pub const MCP_READER_JSONRPC: u32 = 1 << 1;

/// The line limit of a new reader, in bytes: 64 MiB.
pub const MCP_READER_DEFAULT_MAX_LINE_LEN: usize = 64 << 20;

const KNOWN_FLAGS: u32 = MCP_READER_SKIP_INVALID | MCP_READER_JSONRPC;

/// A line reader for one input stream (opaque).
///
/// Create it with `mcp_line_reader_new`, free it with `mcp_line_reader_free`.
/// A reader may be used from any thread, but from one thread at a time: calls
/// on the same reader must not overlap (in Rust terms it is `Send`, not `Sync`).
/// Different readers are independent.
pub struct McpLineReader {
    inner: LineReader,
    /// Set when a call begins and cleared when it returns, so it stays set
    /// only if that call panicked: the reader may be half-changed, and every
    /// later call but free is refused with `MCP_STATUS_POISONED`.
    poisoned: bool,
    /// `Send` but not `Sync`: one thread at a time, as documented for C.
    _not_sync: PhantomData<Cell<()>>,
}

/// What `McpMessage.kind` holds.
#[repr(i32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(non_camel_case_types)]
pub enum McpMessageKind {
    /// A JSON message; `data`/`len` are the line (trimmed), `rpc_kind` its JSON-RPC kind.
    MCP_MESSAGE_JSON = 0,
    /// A line that is not one JSON text in valid UTF-8; `data`/`len` are the line (trimmed).
    MCP_MESSAGE_PARSE_ERROR = 1,
    /// A line longer than the limit, dropped: `data` is NULL, `len` is how many
    /// of its bytes had been received when the reader gave up (more than the limit).
    MCP_MESSAGE_TOO_LONG = 2,
    /// Valid JSON that is not a JSON-RPC 2.0 message (only with `MCP_READER_JSONRPC`);
    /// `data`/`len` are the line (trimmed).
    MCP_MESSAGE_INVALID_JSONRPC = 3,
}

/// What `McpMessage.rpc_kind` holds.
#[repr(i32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(non_camel_case_types)]
pub enum McpRpcKind {
    /// Not classified: `MCP_READER_JSONRPC` is off, or the item is not a message.
    MCP_RPC_NONE = 0,
    /// `method` (a string) and `id` (a string or a number; MCP forbids a null
    /// id, so `"id":null` with a method is not a request): the peer expects a response.
    MCP_RPC_REQUEST = 1,
    /// `method` (a string) without `id`: no response expected.
    MCP_RPC_NOTIFICATION = 2,
    /// `id` (a string or a number) and `result` (any value, null included).
    MCP_RPC_RESPONSE = 3,
    /// An `error` object with an integer `code` and a string `message`, and an
    /// `id` that is a string, a number, null or absent (MCP 2025-11-25 and later).
    MCP_RPC_ERROR = 4,
    /// A non-empty array of the kinds above.
    MCP_RPC_BATCH = 5,
}

/// One item from `mcp_line_reader_next_message`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct McpMessage {
    /// An `McpMessageKind` value.
    pub kind: i32,
    /// An `McpRpcKind` value (`MCP_RPC_NONE` unless classification is on and this is a message).
    pub rpc_kind: i32,
    /// The line's bytes, not NUL-terminated; NULL for `MCP_MESSAGE_TOO_LONG`.
    /// Borrowed from the reader: valid until the next call on that reader.
    pub data: *const u8,
    /// The number of bytes at `data` (for `MCP_MESSAGE_TOO_LONG`, bytes received).
    pub len: usize,
}

impl From<Option<RpcKind>> for McpRpcKind {
    fn from(rpc: Option<RpcKind>) -> Self {
        match rpc {
            None => McpRpcKind::MCP_RPC_NONE,
            Some(RpcKind::Request) => McpRpcKind::MCP_RPC_REQUEST,
            Some(RpcKind::Notification) => McpRpcKind::MCP_RPC_NOTIFICATION,
            Some(RpcKind::Response) => McpRpcKind::MCP_RPC_RESPONSE,
            Some(RpcKind::Error) => McpRpcKind::MCP_RPC_ERROR,
            Some(RpcKind::Batch) => McpRpcKind::MCP_RPC_BATCH,
        }
    }
}

impl From<Message<'_>> for McpMessage {
    fn from(m: Message<'_>) -> Self {
        let (kind, rpc) = match m {
            Message::Json { rpc, .. } => (McpMessageKind::MCP_MESSAGE_JSON, rpc),
            Message::ParseError { .. } => (McpMessageKind::MCP_MESSAGE_PARSE_ERROR, None),
            Message::TooLong { .. } => (McpMessageKind::MCP_MESSAGE_TOO_LONG, None),
            Message::InvalidJsonRpc { .. } => (McpMessageKind::MCP_MESSAGE_INVALID_JSONRPC, None),
        };
        McpMessage {
            kind: kind as i32,
            rpc_kind: McpRpcKind::from(rpc) as i32,
            data: m.data().map_or(ptr::null(), <[u8]>::as_ptr),
            len: m.len(),
        }
    }
}

/// Runs `call` on the reader behind `reader`, after the NULL and poison
/// checks, which come before any check of the other arguments (done by
/// `call`): a NULL reader is `MCP_STATUS_NULL_ARGUMENT` and a poisoned one
/// `MCP_STATUS_POISONED`, whatever else was passed. If `call` panics, the
/// reader stays marked poisoned.
///
/// # Safety
/// `reader` is NULL or a live pointer from `mcp_line_reader_new`, not in use
/// by another call.
pub(crate) unsafe fn with_reader(
    reader: *mut McpLineReader,
    call: impl FnOnce(&mut LineReader) -> McpStatus,
) -> McpStatus {
    // SAFETY: NULL or valid and unaliased, by the caller's contract.
    let Some(handle) = (unsafe { reader.as_mut() }) else {
        return McpStatus::MCP_STATUS_NULL_ARGUMENT;
    };
    if handle.poisoned {
        return McpStatus::MCP_STATUS_POISONED;
    }
    handle.poisoned = true;
    fault_point();
    let status = call(&mut handle.inner);
    handle.poisoned = false;
    status
}

/// [`with_reader`] for a call that only reads the reader: the same NULL
/// and poison checks first, then the fault point, then `call`. A panic in
/// `call` cannot have changed the reader, so it does not poison it.
///
/// # Safety
/// `reader` is NULL or a live pointer from `mcp_line_reader_new`, not being
/// changed by another call.
pub(crate) unsafe fn with_reader_ref(
    reader: *const McpLineReader,
    call: impl FnOnce(&LineReader) -> McpStatus,
) -> McpStatus {
    // SAFETY: NULL or valid and not being changed, by the caller's contract.
    let Some(handle) = (unsafe { reader.as_ref() }) else {
        return McpStatus::MCP_STATUS_NULL_ARGUMENT;
    };
    if handle.poisoned {
        return McpStatus::MCP_STATUS_POISONED;
    }
    fault_point();
    call(&handle.inner)
}

/// Creates a reader: 64 MiB line limit, no flags.
///
/// Returns a new reader owned by the caller (free it with
/// `mcp_line_reader_free`), or NULL only if memory could not be allocated.
/// Thread-safe.
#[unsafe(no_mangle)]
pub extern "C" fn mcp_line_reader_new() -> *mut McpLineReader {
    ffi_boundary!(mcp_line_reader_new, ptr::null_mut(), {
        fault_point();
        let layout = Layout::new::<McpLineReader>();
        // SAFETY: the layout has a non-zero size.
        let raw = unsafe { alloc(layout) }.cast::<McpLineReader>();
        if !raw.is_null() {
            let handle = McpLineReader {
                inner: LineReader::new(),
                poisoned: false,
                _not_sync: PhantomData,
            };
            // SAFETY: freshly allocated with the layout of `McpLineReader`;
            // `mcp_line_reader_free` gives it back through `Box`, which uses the
            // same global allocator and layout.
            unsafe { raw.write(handle) };
        }
        raw
    })
}

/// Sets the longest line accepted, in bytes before the `\n` (a trailing `\r`
/// and surrounding whitespace count, a stream-opening BOM does not). A longer
/// line yields one `MCP_MESSAGE_TOO_LONG` item and is dropped through its `\n`.
/// `SIZE_MAX` means no limit; the default is 64 MiB.
///
/// Returns `MCP_STATUS_OK`, `MCP_STATUS_NULL_ARGUMENT` (reader NULL),
/// `MCP_STATUS_INVALID_ARGUMENT` (`max_len` is 0) or `MCP_STATUS_POISONED`.
///
/// # Safety
/// `reader` is NULL or a live reader, not used by another thread during the call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcp_line_reader_set_max_line_len(
    reader: *mut McpLineReader,
    max_len: usize,
) -> McpStatus {
    ffi_boundary!(
        mcp_line_reader_set_max_line_len,
        McpStatus::MCP_STATUS_PANIC,
        {
            // SAFETY: forwarded caller contract.
            unsafe {
                with_reader(reader, |r| {
                    if max_len == 0 {
                        return McpStatus::MCP_STATUS_INVALID_ARGUMENT;
                    }
                    r.set_max_line_len(if max_len == usize::MAX {
                        None
                    } else {
                        NonZeroUsize::new(max_len)
                    });
                    McpStatus::MCP_STATUS_OK
                })
            }
        }
    )
}

/// Sets the reader's flags: a bitwise OR of `MCP_READER_SKIP_INVALID` and
/// `MCP_READER_JSONRPC` (0 for none, the default). They apply to the lines
/// taken from then on.
///
/// Returns `MCP_STATUS_OK`, `MCP_STATUS_NULL_ARGUMENT` (reader NULL),
/// `MCP_STATUS_UNKNOWN_FLAGS` (unknown bits; nothing changed) or `MCP_STATUS_POISONED`.
///
/// # Safety
/// `reader` is NULL or a live reader, not used by another thread during the call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcp_line_reader_set_flags(
    reader: *mut McpLineReader,
    flags: u32,
) -> McpStatus {
    ffi_boundary!(mcp_line_reader_set_flags, McpStatus::MCP_STATUS_PANIC, {
        // SAFETY: forwarded caller contract.
        unsafe {
            with_reader(reader, |r| {
                if flags & !KNOWN_FLAGS != 0 {
                    return McpStatus::MCP_STATUS_UNKNOWN_FLAGS;
                }
                r.set_skip_invalid(flags & MCP_READER_SKIP_INVALID != 0);
                r.set_jsonrpc(flags & MCP_READER_JSONRPC != 0);
                McpStatus::MCP_STATUS_OK
            })
        }
    })
}

/// Appends `len` bytes read from the stream. The bytes are copied: `data` is
/// not kept after the call. Any chunking of a stream gives the same items.
/// `(NULL, 0)` is a valid empty chunk. `data` may point into this reader's
/// own buffer (the data of the message just taken, fed back): such bytes are
/// copied aside before anything in the buffer moves.
///
/// Returns `MCP_STATUS_OK`, `MCP_STATUS_NULL_ARGUMENT` (reader NULL, or data
/// NULL with `len` > 0), `MCP_STATUS_INVALID_ARGUMENT` (`len` > PTRDIFF_MAX),
/// `MCP_STATUS_OUT_OF_MEMORY` (nothing was appended; the reader is still
/// usable) or `MCP_STATUS_POISONED`. The reader is checked before `data` and
/// `len`. Invalidates the data of the last message taken.
///
/// # Safety
/// `reader` is NULL or a live reader, not used by another thread during the
/// call; `data` is NULL or points to `len` readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcp_line_reader_feed(
    reader: *mut McpLineReader,
    data: *const u8,
    len: usize,
) -> McpStatus {
    ffi_boundary!(mcp_line_reader_feed, McpStatus::MCP_STATUS_PANIC, {
        let feed = |r: &mut LineReader| {
            // SAFETY: `data` points to `len` readable bytes, by the caller's contract.
            let chunk = match unsafe { bytes_in(data, len) } {
                Ok(chunk) => chunk,
                Err(status) => return status,
            };
            if !r.holds_bytes_at(chunk.as_ptr()) {
                return r.feed(chunk).into();
            }
            // The chunk is part of the buffer that feeding may move or
            // reallocate: copy it first.
            let mut copy = Vec::new();
            if copy.try_reserve_exact(chunk.len()).is_err() {
                return McpStatus::MCP_STATUS_OUT_OF_MEMORY;
            }
            copy.extend_from_slice(chunk);
            r.feed(&copy).into()
        };
        // SAFETY: forwarded caller contract.
        unsafe { with_reader(reader, feed) }
    })
}

/// Takes the next item, in stream order: a message, or the report of a line
/// that is not one (see `McpMessageKind`).
///
/// Returns `MCP_STATUS_OK` and writes `*out`, or `MCP_STATUS_NO_MESSAGE` (no
/// complete line buffered; `*out` untouched), `MCP_STATUS_NULL_ARGUMENT`
/// (reader or out NULL), `MCP_STATUS_OUT_OF_MEMORY` (the line nests so deep
/// that its stack of open containers, one bit a level, could not be
/// allocated; the line stays in place, and the next call tries it again) or
/// `MCP_STATUS_POISONED`. `out->data` borrows the reader's buffer: it stays
/// valid until the next call on this reader (including
/// `mcp_line_reader_free`; not counting `mcp_line_reader_envelope` and
/// `mcp_line_reader_buffered_len`, which only read); copy what you keep, or
/// feed it back. With `MCP_READER_JSONRPC`, `mcp_line_reader_envelope` then
/// tells where the message's `id`, `method`, `params`, `result` and `error`
/// are.
///
/// # Safety
/// `reader` is NULL or a live reader, not used by another thread during the
/// call; `out` is NULL or points to writable memory for one `McpMessage`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcp_line_reader_next_message(
    reader: *mut McpLineReader,
    out: *mut McpMessage,
) -> McpStatus {
    ffi_boundary!(mcp_line_reader_next_message, McpStatus::MCP_STATUS_PANIC, {
        let next = |r: &mut LineReader| {
            if out.is_null() {
                return McpStatus::MCP_STATUS_NULL_ARGUMENT;
            }
            match r.try_next_message() {
                Ok(Some(message)) => {
                    // SAFETY: `out` is non-null and writable, by the caller's contract.
                    unsafe { out.write(message.into()) };
                    McpStatus::MCP_STATUS_OK
                }
                Ok(None) => McpStatus::MCP_STATUS_NO_MESSAGE,
                Err(e) => e.into(),
            }
        };
        // SAFETY: forwarded caller contract.
        unsafe { with_reader(reader, next) }
    })
}

/// Marks the end of the stream: a buffered line without a final `\n` becomes
/// a complete line (take it with `mcp_line_reader_next_message`), and the
/// rest of a too-long line being dropped is over. The reader stays usable:
/// bytes fed afterwards start a new line.
///
/// Returns `MCP_STATUS_OK`, `MCP_STATUS_NULL_ARGUMENT`,
/// `MCP_STATUS_OUT_OF_MEMORY` (nothing changed) or `MCP_STATUS_POISONED`.
/// Invalidates the data of the last message taken.
///
/// # Safety
/// `reader` is NULL or a live reader, not used by another thread during the call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcp_line_reader_finish(reader: *mut McpLineReader) -> McpStatus {
    ffi_boundary!(mcp_line_reader_finish, McpStatus::MCP_STATUS_PANIC, {
        // SAFETY: forwarded caller contract.
        unsafe { with_reader(reader, |r| r.finish().into()) }
    })
}

/// The number of bytes the reader holds that no item has consumed yet:
/// complete lines waiting for `mcp_line_reader_next_message` plus the
/// unterminated last line (a skipped BOM and the dropped part of a too-long
/// line are not counted). Returns 0 for NULL and for a poisoned reader.
///
/// # Safety
/// `reader` is NULL or a live reader, not being changed by another thread
/// during the call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcp_line_reader_buffered_len(reader: *const McpLineReader) -> usize {
    ffi_boundary!(mcp_line_reader_buffered_len, 0, {
        // SAFETY: NULL or valid, by the caller's contract.
        match unsafe { reader.as_ref() } {
            Some(handle) if !handle.poisoned => {
                fault_point();
                handle.inner.buffered_len()
            }
            _ => 0,
        }
    })
}

/// Frees a reader and everything it holds (a poisoned one too); NULL is a
/// no-op. The reader and the data of its messages must not be used afterwards.
///
/// # Safety
/// `reader` is NULL or a live reader from `mcp_line_reader_new`, freed once,
/// not used by another thread during the call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcp_line_reader_free(reader: *mut McpLineReader) {
    ffi_boundary!(mcp_line_reader_free, (), {
        if !reader.is_null() {
            // SAFETY: allocated by `mcp_line_reader_new` with the global allocator
            // and this type's layout, and not freed before (caller's contract).
            drop(unsafe { Box::from_raw(reader) });
            fault_point();
        }
    })
}
