//! Status codes: 0 is success, positive is "nothing yet", negative is an error.

use std::ffi::{c_char, CStr};

use super::boundary::fault_point;
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
    /// Not an error: it cannot be done now, try again later. A non-blocking
    /// file descriptor has no data now (EAGAIN: poll(2) it); or a transport's
    /// output queue is at its bound (send again once `next_event`, or you for a
    /// memory transport, has written some out). Nothing was done.
    MCP_STATUS_WOULD_BLOCK = 2,
    /// Not an error: read(2) returned 0, the peer closed its end. Call
    /// `mcp_line_reader_finish` to get a last line that had no final newline.
    MCP_STATUS_END_OF_STREAM = 3,
    /// A pointer argument that must not be NULL was NULL. Nothing was done.
    MCP_STATUS_NULL_ARGUMENT = -1,
    /// An argument is out of range (a line limit of 0, a length above
    /// PTRDIFF_MAX, an unknown mode or request id). Nothing was done.
    MCP_STATUS_INVALID_ARGUMENT = -2,
    /// The input is not exactly one JSON text in valid UTF-8 (or is empty). No output.
    MCP_STATUS_INVALID_JSON = -3,
    /// Memory could not be allocated. Nothing was done; the reader or transport is still usable.
    MCP_STATUS_OUT_OF_MEMORY = -4,
    /// A bug: a panic inside the library was caught at the boundary. The reader
    /// or transport it happened in (if any) is now unusable: free it.
    MCP_STATUS_PANIC = -5,
    /// The reader or transport panicked in an earlier call and refuses further
    /// use: free it.
    MCP_STATUS_POISONED = -6,
    /// A system call failed; `errno`, read right after the call on the same
    /// thread, says why (cgo's two-value calls capture it).
    MCP_STATUS_IO_ERROR = -7,
    /// The peer closed its end of the pipe or socket (EPIPE): it will read no more.
    MCP_STATUS_BROKEN_PIPE = -8,
    /// The deadline passed before the operation completed (the peer did not
    /// read in time); an out-parameter says how far it got.
    MCP_STATUS_TIMED_OUT = -9,
    /// The transport is closing or closed (or its peer went away): nothing was done.
    MCP_STATUS_CLOSED = -10,
    /// A server could not be started (`mcp_transport_spawn`); `errno` says
    /// why (ENOENT: no such program or working directory). Nothing is left
    /// behind: no process, no descriptor.
    MCP_STATUS_SPAWN_FAILED = -11,
    /// The caller's buffer is too short (`mcp_encode_to`): an out-parameter
    /// says how long it must be.
    MCP_STATUS_BUFFER_TOO_SMALL = -12,
    /// Params that are not a JSON object or array (JSON-RPC's rule; they
    /// are valid JSON, or `MCP_STATUS_INVALID_JSON` would say so). Nothing
    /// was done.
    MCP_STATUS_INVALID_PARAMS = -13,
    /// A text argument (a method, a reason, a message, a command's program,
    /// argument, variable or directory) is not valid UTF-8 where the library
    /// needs it to be (Windows, and JSON strings), or holds a NUL (C++ and
    /// Rust text). Nothing was done.
    MCP_STATUS_INVALID_TEXT = -14,
    /// Flag bits this library does not know. Nothing was done.
    MCP_STATUS_UNKNOWN_FLAGS = -15,
    /// The command's program is empty (`mcp_transport_spawn`). Nothing was
    /// started.
    MCP_STATUS_EMPTY_PROGRAM = -16,
    /// A spawned server that ended unexpectedly is being started again (the
    /// command's restart policy, `mcp_command_restart`): nothing was sent.
    /// Send again after `MCP_EVENT_RESTARTED`, with the handshake first.
    MCP_STATUS_RESTARTING = -17,
}

impl From<Error> for McpStatus {
    fn from(e: Error) -> Self {
        match e {
            Error::InvalidJson => McpStatus::MCP_STATUS_INVALID_JSON,
            Error::OutOfMemory => McpStatus::MCP_STATUS_OUT_OF_MEMORY,
            Error::InvalidArgument => McpStatus::MCP_STATUS_INVALID_ARGUMENT,
            Error::InvalidParams => McpStatus::MCP_STATUS_INVALID_PARAMS,
            Error::InvalidText => McpStatus::MCP_STATUS_INVALID_TEXT,
            Error::EmptyProgram => McpStatus::MCP_STATUS_EMPTY_PROGRAM,
            Error::WouldBlock => McpStatus::MCP_STATUS_WOULD_BLOCK,
            Error::TimedOut => McpStatus::MCP_STATUS_TIMED_OUT,
            // Only `Connection::call` gives it, which the C face has not.
            Error::KeptEventsFull => McpStatus::MCP_STATUS_WOULD_BLOCK,
            Error::Closed | Error::ServerExited(_) => McpStatus::MCP_STATUS_CLOSED,
            Error::Restarting => McpStatus::MCP_STATUS_RESTARTING,
            Error::BufferTooSmall(_) => McpStatus::MCP_STATUS_BUFFER_TOO_SMALL,
            Error::Poisoned => McpStatus::MCP_STATUS_POISONED,
            // The header promises `errno` with these: set as the status is made.
            #[cfg(unix)]
            Error::Os(code) => {
                super::fd::set_errno(code);
                McpStatus::MCP_STATUS_IO_ERROR
            }
            #[cfg(unix)]
            Error::SpawnFailed(spawn) => {
                super::fd::set_errno(spawn.code);
                McpStatus::MCP_STATUS_SPAWN_FAILED
            }
            // Windows: `GetLastError()` gives the code.
            #[cfg(windows)]
            Error::Os(code) => {
                crate::sys::windows::set_last_error(code);
                McpStatus::MCP_STATUS_IO_ERROR
            }
            #[cfg(windows)]
            Error::SpawnFailed(spawn) => {
                crate::sys::windows::set_last_error(spawn.code);
                McpStatus::MCP_STATUS_SPAWN_FAILED
            }
            #[cfg(not(any(unix, windows)))]
            Error::Os(_) => McpStatus::MCP_STATUS_IO_ERROR,
            #[cfg(not(any(unix, windows)))]
            Error::SpawnFailed(_) => McpStatus::MCP_STATUS_SPAWN_FAILED,
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

/// Lists every status once: `ALL` and an exhaustive `match` come from the
/// same list, so the compiler refuses a variant left out (non-exhaustive
/// match) or named twice (unreachable pattern, denied by clippy).
macro_rules! every_status {
    ($($status:ident),* $(,)?) => {
        impl McpStatus {
            /// Every status, in declaration order.
            pub(crate) const ALL: &'static [McpStatus] = &[$(McpStatus::$status),*];
        }

        #[allow(dead_code)]
        fn every_status_is_listed(status: McpStatus) {
            match status {
                $(McpStatus::$status)|* => {}
            }
        }
    };
}

every_status!(
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
    MCP_STATUS_TIMED_OUT,
    MCP_STATUS_CLOSED,
    MCP_STATUS_SPAWN_FAILED,
    MCP_STATUS_BUFFER_TOO_SMALL,
    MCP_STATUS_INVALID_PARAMS,
    MCP_STATUS_INVALID_TEXT,
    MCP_STATUS_UNKNOWN_FLAGS,
    MCP_STATUS_EMPTY_PROGRAM,
    MCP_STATUS_RESTARTING,
);

impl McpStatus {
    /// The status whose code is `code`, if any.
    pub(crate) fn from_code(code: i32) -> Option<McpStatus> {
        McpStatus::ALL.iter().copied().find(|&s| s as i32 == code)
    }

    fn description(self) -> &'static CStr {
        use McpStatus::*;
        match self {
            MCP_STATUS_OK => c"ok",
            MCP_STATUS_NO_MESSAGE => c"no complete message yet",
            MCP_STATUS_WOULD_BLOCK => c"would block: no data now, or the output queue is full",
            MCP_STATUS_END_OF_STREAM => c"end of stream: the peer closed its end",
            MCP_STATUS_NULL_ARGUMENT => c"a required pointer argument is NULL",
            MCP_STATUS_INVALID_ARGUMENT => c"an argument is out of range",
            MCP_STATUS_INVALID_JSON => c"input is not one JSON text in valid UTF-8",
            MCP_STATUS_OUT_OF_MEMORY => c"out of memory",
            MCP_STATUS_PANIC => c"internal error: a panic was caught (the handle is now unusable)",
            MCP_STATUS_POISONED => c"unusable after an earlier panic: free it",
            MCP_STATUS_IO_ERROR => c"a system call failed (see errno)",
            MCP_STATUS_BROKEN_PIPE => c"broken pipe: the peer closed its end",
            MCP_STATUS_TIMED_OUT => c"timed out: the deadline passed first",
            MCP_STATUS_CLOSED => c"the transport is closed",
            MCP_STATUS_SPAWN_FAILED => c"the server could not be started (see errno)",
            MCP_STATUS_BUFFER_TOO_SMALL => c"the buffer is too small",
            MCP_STATUS_INVALID_PARAMS => c"params must be a JSON object or array",
            MCP_STATUS_INVALID_TEXT => c"a text argument is not valid UTF-8 or holds a NUL",
            MCP_STATUS_UNKNOWN_FLAGS => c"unknown flag bits",
            MCP_STATUS_EMPTY_PROGRAM => c"the program to start is empty",
            MCP_STATUS_RESTARTING => {
                c"the server is being restarted: send after MCP_EVENT_RESTARTED"
            }
        }
    }
}

const UNKNOWN: &CStr = c"unknown status code";

/// A short English description of `status`, for logs.
///
/// Returns a static NUL-terminated string (never NULL, never to be freed);
/// unknown codes get a generic description. Thread-safe.
#[unsafe(no_mangle)]
pub extern "C" fn mcp_status_str(status: i32) -> *const c_char {
    ffi_boundary!(mcp_status_str, UNKNOWN.as_ptr(), {
        fault_point();
        McpStatus::from_code(status)
            .map_or(UNKNOWN, McpStatus::description)
            .as_ptr()
    })
}
