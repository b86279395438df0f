//! `mcp_transport_open_stdio` ([`Connection::open_stdio`]): a server on
//! its own stdin and stdout, POSIX and Windows.

use super::{McpStatus, McpTransport};
use crate::Connection;

/// `mcp_transport_open_stdio` flag: protect the protocol stream from stray
/// output. The transport writes to a private duplicate of descriptor 1
/// (close-on-exec, above 2), and descriptor 1 is pointed at stderr (at
/// `/dev/null` in a process without one, started with `2>&-`), so a
/// `printf`, a library that logs to stdout or a child that inherits it can
/// no longer corrupt the stream. Descriptor 1 stays so after close and
/// free. When stdin and stdout are one socket (inetd style, `socat`), the
/// end of the transport's write side shuts the socket down for writing,
/// so the host sees the end of the stream although descriptor 0 keeps the
/// socket open.
///
/// Windows: the transport writes to a private duplicate of the standard
/// output handle, and the process's standard output handle is set to its
/// standard error (`NUL` without one): `GetStdHandle`, Rust's `println!`
/// and children started afterwards are covered. The C runtime's own
/// descriptor 1 (`printf`, `puts`) is not the library's to reach: call
/// `mcp_stdio_crt_stdout_to_stderr()` (an inline function of this header,
/// compiled with your code against your C runtime) right after, which
/// points it at stderr too and closes the old handle, so that the host
/// sees the end of the stream when the transport's write side ends.
pub const MCP_TRANSPORT_GUARD_STDOUT: u32 = 1 << 1;

/// Creates a transport on the process's own stdin and stdout: for an MCP
/// server. Descriptors 0 and 1 are borrowed (never closed; their flags,
/// made non-blocking meanwhile, are given back at free); with
/// `MCP_TRANSPORT_GUARD_STDOUT` the transport writes to its private
/// duplicate of descriptor 1 instead, which it owns: closing the transport
/// closes it, and the host sees the end of the stream. Windows: the
/// standard handles, borrowed, read and written by a thread each (the
/// reading thread lives until stdin ends); `MCP_STATUS_IO_ERROR` with
/// `GetLastError()` == `ERROR_FILE_NOT_FOUND` when the process has no
/// stdin or stdout.
///
/// Returns `MCP_STATUS_OK` and the transport in `*out`, or, with nothing
/// changed: `MCP_STATUS_NULL_ARGUMENT` (out NULL),
/// `MCP_STATUS_UNKNOWN_FLAGS` (a flag other than
/// `MCP_TRANSPORT_GUARD_STDOUT`), `MCP_STATUS_IO_ERROR` (descriptor 0 or 1
/// is not open, or no descriptor is left; `errno` says why),
/// `MCP_STATUS_OUT_OF_MEMORY`. Thread-safe, but descriptor 1 is process
/// state: call it once, early, before other threads write to stdout.
///
/// # Safety
/// `out` is NULL or points to writable memory for one pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcp_transport_open_stdio(
    flags: u32,
    out: *mut *mut McpTransport,
) -> McpStatus {
    ffi_boundary!(mcp_transport_open_stdio, McpStatus::MCP_STATUS_PANIC, {
        super::fault_point();
        if out.is_null() {
            return McpStatus::MCP_STATUS_NULL_ARGUMENT;
        }
        if flags & !MCP_TRANSPORT_GUARD_STDOUT != 0 {
            return McpStatus::MCP_STATUS_UNKNOWN_FLAGS;
        }
        let guard = flags & MCP_TRANSPORT_GUARD_STDOUT != 0;
        let made = McpTransport::make(|| Connection::open_stdio(guard));
        // SAFETY: `out` is non-null and writable, by the caller's contract.
        unsafe { super::hand_out(made, out) }
    })
}
