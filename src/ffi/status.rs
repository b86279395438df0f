//! Status codes: 0 is success, positive is "nothing yet", negative is an error.

use std::ffi::{c_char, CStr};

use crate::Error;

/// The result of an `mcp_` function. A fixed-width `int32_t`: `MCP_STATUS_OK`
/// (0) is success, positive values are not errors, negative values are errors.
/// Functions that take a status from C take an `int32_t`, never this enum.
#[repr(i32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(non_camel_case_types)]
pub enum McpStatus {
    /// Success.
    MCP_STATUS_OK = 0,
    /// Not an error: no complete line is buffered yet; feed more data (or call finish).
    MCP_STATUS_NO_MESSAGE = 1,
    /// Not an error: the non-blocking file descriptor has no data now (EAGAIN);
    /// poll(2) it and try again.
    MCP_STATUS_WOULD_BLOCK = 2,
    /// Not an error: read(2) returned 0, the peer closed its end. Call
    /// `mcp_line_reader_finish` to get a last line that had no final newline.
    MCP_STATUS_END_OF_STREAM = 3,
    /// A pointer argument that must not be NULL was NULL. Nothing was done.
    MCP_STATUS_NULL_ARGUMENT = -1,
    /// An argument is out of range (a line limit of 0, unknown flag bits, a
    /// length above PTRDIFF_MAX). Nothing was done.
    MCP_STATUS_INVALID_ARGUMENT = -2,
    /// The input is not exactly one JSON text in valid UTF-8 (or is empty). No output.
    MCP_STATUS_INVALID_JSON = -3,
    /// Memory could not be allocated. Nothing was done; the reader is still usable.
    MCP_STATUS_OUT_OF_MEMORY = -4,
    /// A bug: a panic inside the library was caught at the boundary. The reader
    /// it happened in (if any) is now unusable: free it.
    MCP_STATUS_PANIC = -5,
    /// The reader panicked in an earlier call and refuses further use: free it.
    MCP_STATUS_POISONED = -6,
    /// A system call failed; `errno`, read right after the call on the same
    /// thread, says why (cgo's two-value calls capture it).
    MCP_STATUS_IO_ERROR = -7,
    /// The peer closed its end of the pipe or socket (EPIPE): it will read no more.
    MCP_STATUS_BROKEN_PIPE = -8,
}

impl From<Error> for McpStatus {
    fn from(e: Error) -> Self {
        match e {
            Error::InvalidJson => McpStatus::MCP_STATUS_INVALID_JSON,
            Error::OutOfMemory => McpStatus::MCP_STATUS_OUT_OF_MEMORY,
        }
    }
}

impl From<Result<(), Error>> for McpStatus {
    fn from(r: Result<(), Error>) -> Self {
        match r {
            Ok(()) => McpStatus::MCP_STATUS_OK,
            Err(e) => e.into(),
        }
    }
}

fn describe(status: i32) -> &'static CStr {
    use McpStatus::*;
    const ALL: [McpStatus; 12] = [
        MCP_STATUS_OK,
        MCP_STATUS_NO_MESSAGE,
        MCP_STATUS_WOULD_BLOCK,
        MCP_STATUS_END_OF_STREAM,
        MCP_STATUS_NULL_ARGUMENT,
        MCP_STATUS_INVALID_ARGUMENT,
        MCP_STATUS_INVALID_JSON,
        MCP_STATUS_OUT_OF_MEMORY,
        MCP_STATUS_PANIC,
        MCP_STATUS_POISONED,
        MCP_STATUS_IO_ERROR,
        MCP_STATUS_BROKEN_PIPE,
    ];
    match ALL.into_iter().find(|&s| s as i32 == status) {
        Some(MCP_STATUS_OK) => c"ok",
        Some(MCP_STATUS_NO_MESSAGE) => c"no complete message yet",
        Some(MCP_STATUS_WOULD_BLOCK) => c"no data available now (non-blocking descriptor)",
        Some(MCP_STATUS_END_OF_STREAM) => c"end of stream: the peer closed its end",
        Some(MCP_STATUS_NULL_ARGUMENT) => c"a required pointer argument is NULL",
        Some(MCP_STATUS_INVALID_ARGUMENT) => c"an argument is out of range",
        Some(MCP_STATUS_INVALID_JSON) => c"input is not one JSON text in valid UTF-8",
        Some(MCP_STATUS_OUT_OF_MEMORY) => c"out of memory",
        Some(MCP_STATUS_PANIC) => {
            c"internal error: a panic was caught (the reader is now unusable)"
        }
        Some(MCP_STATUS_POISONED) => c"the reader is unusable after an earlier panic: free it",
        Some(MCP_STATUS_IO_ERROR) => c"a system call failed (see errno)",
        Some(MCP_STATUS_BROKEN_PIPE) => c"broken pipe: the peer closed its end",
        None => c"unknown status code",
    }
}

/// A short English description of `status`, for logs.
///
/// Returns a static NUL-terminated string (never NULL, never to be freed);
/// unknown codes get a generic description. Thread-safe.
#[unsafe(no_mangle)]
pub extern "C" fn mcp_status_str(status: i32) -> *const c_char {
    ffi_boundary!(c"unknown status code".as_ptr(), {
        describe(status).as_ptr()
    })
}
