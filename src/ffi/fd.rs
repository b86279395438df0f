//! POSIX I/O helpers: the read and write loops every host writes around a
//! server's pipes, done once, correctly.

use std::ffi::c_int;
use std::os::fd::BorrowedFd;
use std::time::{Duration, Instant};

use super::boundary::fault_point;
use super::reader::with_reader;
use super::slice::bytes_in;
use super::{McpLineReader, McpStatus};
use crate::reader::READ_CHUNK;
use crate::sys::unix::fd::read_appending;
use crate::LineReader;

/// Leaves `errno` as the failing call set it, for the caller to read
/// (restoring calls in between may have changed it).
pub(crate) fn set_errno(value: c_int) {
    // SAFETY: the thread's errno location is always valid.
    #[cfg(any(target_os = "linux", target_os = "android", target_os = "emscripten"))]
    unsafe {
        *libc::__errno_location() = value
    };
    #[cfg(any(
        target_vendor = "apple",
        target_os = "freebsd",
        target_os = "dragonfly"
    ))]
    unsafe {
        *libc::__error() = value
    };
    #[cfg(any(target_os = "openbsd", target_os = "netbsd"))]
    unsafe {
        *libc::__errno() = value
    };
}

/// Reads once from `fd` what is available (up to 64 KiB) straight into the
/// reader's buffer, as `mcp_line_reader_feed` would take those bytes; take the
/// items with `mcp_line_reader_next_message`. An interrupted read (EINTR) is
/// retried. POSIX only; on Windows, `ReadFile` into a buffer of yours and
/// `mcp_line_reader_feed` (or a transport on handles,
/// `mcp_transport_open_handles`).
///
/// Returns, with `*nread` (when `nread` is not NULL) set to the bytes read
/// on every return, failures included (a count is an out-parameter that is
/// always written, so the caller never reads a stale one):
/// - `MCP_STATUS_OK`: `*nread` > 0 bytes were read;
/// - `MCP_STATUS_WOULD_BLOCK`: `fd` is non-blocking and has nothing now
///   (EAGAIN); `*nread` = 0; poll(2) it;
/// - `MCP_STATUS_END_OF_STREAM`: end of file, the peer closed its end;
///   `*nread` = 0; call `mcp_line_reader_finish` for a last line without `\n`;
/// - `MCP_STATUS_IO_ERROR`: read(2) failed; `errno` says why; `*nread` = 0;
/// - `MCP_STATUS_NULL_ARGUMENT` (reader NULL), `MCP_STATUS_OUT_OF_MEMORY`,
///   `MCP_STATUS_POISONED`: nothing was read; `*nread` = 0.
///
/// Invalidates the data of the last message taken. Blocks when `fd` is a
/// blocking descriptor with nothing to read.
///
/// # Safety
/// `reader` is NULL or a live reader, not used by another thread during the
/// call; `nread` is NULL or points to a writable `size_t`. `fd` is not closed
/// or changed by this call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcp_line_reader_read_fd(
    reader: *mut McpLineReader,
    fd: c_int,
    nread: *mut usize,
) -> McpStatus {
    ffi_boundary!(mcp_line_reader_read_fd, McpStatus::MCP_STATUS_PANIC, {
        let mut got = 0usize;
        let mut failure = 0;
        let read_once = |r: &mut LineReader| {
            if fd < 0 {
                failure = libc::EBADF;
                return McpStatus::MCP_STATUS_IO_ERROR;
            }
            // SAFETY: not -1; the caller keeps `fd` open for the call (a
            // number that is not open only makes read(2) fail with EBADF),
            // and the borrow ends with it.
            let fd = unsafe { BorrowedFd::borrow_raw(fd) };
            let appended = r.append_with(READ_CHUNK, |buf| read_appending(fd, buf, READ_CHUNK));
            match appended {
                Err(e) => e.into(),
                Ok(Ok(0)) => McpStatus::MCP_STATUS_END_OF_STREAM,
                Ok(Ok(n)) => {
                    got = n;
                    McpStatus::MCP_STATUS_OK
                }
                Ok(Err(e)) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    McpStatus::MCP_STATUS_WOULD_BLOCK
                }
                Ok(Err(e)) => {
                    failure = e.raw_os_error().unwrap_or(libc::EIO);
                    McpStatus::MCP_STATUS_IO_ERROR
                }
            }
        };
        // SAFETY: forwarded caller contract.
        let status = unsafe { with_reader(reader, read_once) };
        if !nread.is_null() {
            // SAFETY: non-null and writable, by the caller's contract.
            unsafe { nread.write(got) };
        }
        if failure != 0 {
            set_errno(failure);
        }
        status
    })
}

/// Writes all `len` bytes of `data` to `fd`: short writes are continued,
/// EINTR is retried, and on a non-blocking `fd` EAGAIN is waited out with
/// poll(2), for as long as it takes (`mcp_write_all_deadline` bounds the
/// wait). POSIX only (on Windows, `WriteFile` on a blocking handle writes
/// it all; or a transport, `mcp_transport_open_handles`). `(NULL, 0)`
/// writes nothing and succeeds.
///
/// Never raises SIGPIPE: the signal is blocked for the calling thread during
/// the call and the one its write raised is consumed, so a peer that closed
/// its end gives `MCP_STATUS_BROKEN_PIPE` instead of killing the process,
/// whatever the process's SIGPIPE disposition (which is not touched). A
/// SIGPIPE that was already pending stays pending (on Linux exactly; where
/// the system cannot tell a thread's pending signals from the process's, a
/// SIGPIPE pending before the call leaves the one the call raised pending
/// too). Your own write(2) calls elsewhere still need
/// `signal(SIGPIPE, SIG_IGN)` or MSG_NOSIGNAL.
///
/// Returns `MCP_STATUS_OK` (all written), `MCP_STATUS_BROKEN_PIPE` (EPIPE;
/// part of the data may have been written), `MCP_STATUS_IO_ERROR` (`errno`
/// says why), `MCP_STATUS_NULL_ARGUMENT` (data NULL with `len` > 0) or
/// `MCP_STATUS_INVALID_ARGUMENT` (`len` > PTRDIFF_MAX). Thread-safe; a
/// message of several writes may interleave with other threads' writes to the
/// same `fd`: serialise them yourself.
///
/// # Safety
/// `data` is NULL or points to `len` readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcp_write_all(fd: c_int, data: *const u8, len: usize) -> McpStatus {
    ffi_boundary!(mcp_write_all, McpStatus::MCP_STATUS_PANIC, {
        fault_point();
        // SAFETY: `data` points to `len` readable bytes, by the caller's contract.
        match unsafe { bytes_in(data, len) } {
            Ok(bytes) => write_all(fd, bytes, None).0,
            Err(status) => status,
        }
    })
}

/// `mcp_write_all` with a deadline: gives up with `MCP_STATUS_TIMED_OUT` when
/// `fd` has not taken all of `data` within `timeout_ms` milliseconds of the
/// call (0: only what it takes without waiting; negative: no limit, as
/// `mcp_write_all`). A peer that stops reading can then not hang the host.
/// `*written` (when `written` is not NULL) is set on every return to the
/// bytes written: after `MCP_STATUS_TIMED_OUT` (or `BROKEN_PIPE`, or
/// `IO_ERROR`) a line may have been written in part, and the rest
/// (`data + *written`) must follow before anything else, or the stream is
/// corrupt. POSIX only (on Windows: a transport on handles,
/// `mcp_transport_open_handles`, whose deadlines `next_event` keeps).
///
/// The deadline is exact on a non-blocking `fd`. On a blocking one the call
/// waits with poll(2) and then writes at most PIPE_BUF bytes at a time, which
/// a pipe that poll(2) called writable takes without blocking; a blocking
/// socket may still block past the deadline: make it non-blocking.
///
/// Returns what `mcp_write_all` returns, or `MCP_STATUS_TIMED_OUT`.
/// Thread-safe, as `mcp_write_all`.
///
/// # Safety
/// `data` is NULL or points to `len` readable bytes; `written` is NULL or
/// points to a writable `size_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcp_write_all_deadline(
    fd: c_int,
    data: *const u8,
    len: usize,
    timeout_ms: i32,
    written: *mut usize,
) -> McpStatus {
    ffi_boundary!(mcp_write_all_deadline, McpStatus::MCP_STATUS_PANIC, {
        fault_point();
        // SAFETY: `data` points to `len` readable bytes, by the caller's contract.
        let (status, done) = match unsafe { bytes_in(data, len) } {
            Ok(bytes) => {
                let deadline = u64::try_from(timeout_ms)
                    .ok()
                    .map(|ms| Instant::now() + Duration::from_millis(ms));
                write_all(fd, bytes, deadline)
            }
            Err(status) => (status, 0),
        };
        if !written.is_null() {
            // SAFETY: non-null and writable, by the caller's contract.
            unsafe { written.write(done) };
        }
        status
    })
}

/// [`sys::unix::write_all`](crate::sys::unix::write_all::write_all) on
/// descriptor number `fd`, its outcome as a status (`errno` set to the
/// failing call's).
fn write_all(fd: c_int, data: &[u8], deadline: Option<Instant>) -> (McpStatus, usize) {
    if data.is_empty() {
        return (McpStatus::MCP_STATUS_OK, 0); // nothing to write: no descriptor looked at
    }
    if fd < 0 {
        set_errno(libc::EBADF);
        return (McpStatus::MCP_STATUS_IO_ERROR, 0);
    }
    // SAFETY: not -1; the caller keeps `fd` open for the call (a number
    // that is not open only makes the calls fail with EBADF), and the
    // borrow ends with it.
    let fd = unsafe { BorrowedFd::borrow_raw(fd) };
    let (result, done) = crate::sys::unix::write_all::write_all(fd, data, deadline);
    let status = match result {
        Ok(()) => McpStatus::MCP_STATUS_OK,
        Err(e) => match e.raw_os_error() {
            None if e.kind() == std::io::ErrorKind::TimedOut => McpStatus::MCP_STATUS_TIMED_OUT,
            code => {
                let code = code.unwrap_or(libc::EIO);
                set_errno(code);
                if code == libc::EPIPE {
                    McpStatus::MCP_STATUS_BROKEN_PIPE
                } else {
                    McpStatus::MCP_STATUS_IO_ERROR
                }
            }
        },
    };
    (status, done)
}
