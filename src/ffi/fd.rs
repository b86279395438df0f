//! POSIX I/O helpers: the read and write loops every host writes around a
//! server's pipes, done once, correctly.

use std::ffi::c_int;
use std::io;

use super::boundary::fault_point;
use super::reader::with_reader;
use super::sigpipe::SigpipeGuard;
use super::slice::bytes_in;
use super::{McpLineReader, McpStatus};
use crate::reader::READ_CHUNK;
use crate::LineReader;

/// The errno of the last failed system call on this thread.
fn last_errno() -> c_int {
    io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EIO)
}

/// Leaves `errno` as the failing call set it, for the caller to read
/// (restoring calls in between may have changed it).
fn set_errno(value: c_int) {
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
/// retried. POSIX only.
///
/// Returns, with `*nread` (when `nread` is not NULL) set to the bytes read:
/// - `MCP_STATUS_OK`: `*nread` > 0 bytes were read;
/// - `MCP_STATUS_WOULD_BLOCK`: `fd` is non-blocking and has nothing now
///   (EAGAIN); `*nread` = 0; poll(2) it;
/// - `MCP_STATUS_END_OF_STREAM`: end of file, the peer closed its end;
///   `*nread` = 0; call `mcp_line_reader_finish` for a last line without `\n`;
/// - `MCP_STATUS_IO_ERROR`: read(2) failed; `errno` says why; `*nread` = 0;
/// - `MCP_STATUS_NULL_ARGUMENT` (reader NULL), `MCP_STATUS_OUT_OF_MEMORY`,
///   `MCP_STATUS_POISONED`: nothing was read.
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
    ffi_boundary!(McpStatus::MCP_STATUS_PANIC, {
        let mut got = 0usize;
        let mut failure = 0;
        let read_once = |r: &mut LineReader| {
            let appended = r.append_with(READ_CHUNK, |buf| loop {
                let old = buf.len();
                // SAFETY: `append_with` reserved READ_CHUNK bytes after
                // `old`; read(2) writes at most that many, and only the
                // bytes it reports written become part of the vector.
                let n = unsafe { libc::read(fd, buf.as_mut_ptr().add(old).cast(), READ_CHUNK) };
                if n >= 0 {
                    // SAFETY: read(2) initialised these `n` <= READ_CHUNK bytes.
                    unsafe { buf.set_len(old + n as usize) };
                    break Ok(n as usize);
                }
                let errno = last_errno();
                if errno != libc::EINTR {
                    break Err(errno);
                }
            });
            match appended {
                Err(e) => e.into(),
                Ok(Ok(0)) => McpStatus::MCP_STATUS_END_OF_STREAM,
                Ok(Ok(n)) => {
                    got = n;
                    McpStatus::MCP_STATUS_OK
                }
                Ok(Err(e)) if e == libc::EAGAIN || e == libc::EWOULDBLOCK => {
                    McpStatus::MCP_STATUS_WOULD_BLOCK
                }
                Ok(Err(e)) => {
                    failure = e;
                    McpStatus::MCP_STATUS_IO_ERROR
                }
            }
        };
        // SAFETY: forwarded caller contract.
        let status = unsafe { with_reader(reader, "mcp_line_reader_read_fd", read_once) };
        if !nread.is_null() && status != McpStatus::MCP_STATUS_NULL_ARGUMENT {
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
/// poll(2). POSIX only. `(NULL, 0)` writes nothing and succeeds.
///
/// Never raises SIGPIPE: the signal is blocked for the calling thread during
/// the call and the one its write raised is consumed, so a peer that closed
/// its end gives `MCP_STATUS_BROKEN_PIPE` instead of killing the process,
/// whatever the process's SIGPIPE disposition (which is not touched). Your
/// own write(2) calls elsewhere still need `signal(SIGPIPE, SIG_IGN)` or
/// MSG_NOSIGNAL.
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
    ffi_boundary!(McpStatus::MCP_STATUS_PANIC, {
        fault_point("mcp_write_all");
        // SAFETY: `data` points to `len` readable bytes, by the caller's contract.
        let mut rest = match unsafe { bytes_in(data, len) } {
            Ok(bytes) => bytes,
            Err(status) => return status,
        };
        let guard = SigpipeGuard::new();
        while !rest.is_empty() {
            // SAFETY: `rest` is a valid slice; write(2) only reads it.
            let n = unsafe { libc::write(fd, rest.as_ptr().cast(), rest.len()) };
            if n > 0 {
                rest = &rest[n as usize..];
                continue;
            }
            let errno = if n == 0 { libc::EIO } else { last_errno() };
            match errno {
                libc::EINTR => {}
                e if e == libc::EAGAIN || e == libc::EWOULDBLOCK => {
                    if let Err(e) = wait_writable(fd) {
                        drop(guard);
                        set_errno(e);
                        return McpStatus::MCP_STATUS_IO_ERROR;
                    }
                }
                libc::EPIPE => {
                    guard.consume_raised();
                    drop(guard);
                    set_errno(libc::EPIPE);
                    return McpStatus::MCP_STATUS_BROKEN_PIPE;
                }
                e => {
                    drop(guard);
                    set_errno(e);
                    return McpStatus::MCP_STATUS_IO_ERROR;
                }
            }
        }
        McpStatus::MCP_STATUS_OK
    })
}

/// Waits until `fd` can take more data (or reports an error/hang-up, which
/// the next write then reports precisely).
fn wait_writable(fd: c_int) -> Result<(), c_int> {
    let mut pfd = libc::pollfd {
        fd,
        events: libc::POLLOUT,
        revents: 0,
    };
    loop {
        // SAFETY: one valid pollfd.
        let r = unsafe { libc::poll(&mut pfd, 1, -1) };
        if r >= 0 {
            return if pfd.revents & libc::POLLNVAL != 0 {
                Err(libc::EBADF)
            } else {
                Ok(())
            };
        }
        let errno = last_errno();
        if errno != libc::EINTR {
            return Err(errno);
        }
    }
}
