//! Descriptors: one read(2) into a buffer's spare room, writes that never
//! raise SIGPIPE's default, the errno of the last failed call, new
//! descriptors kept above 2, flags, poll(2), and the stdout guard.

// Without `os_io` only the C face's descriptor helpers use this file.
#![cfg_attr(not(os_io), allow(dead_code))]

use std::ffi::c_int;
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, IntoRawFd, OwnedFd};

/// The errno of the last failed system call on this thread.
pub(crate) fn last_errno() -> c_int {
    io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EIO)
}

/// One read(2) of at most `max` bytes from `fd`, appended to `buf`, which
/// has room for them (`LineReader::append_with` reserved it); EINTR is
/// retried. The bytes read (0: end of file), or the error (`WouldBlock` on
/// a non-blocking descriptor with nothing to read).
pub(crate) fn read_appending(
    fd: BorrowedFd<'_>,
    buf: &mut Vec<u8>,
    max: usize,
) -> io::Result<usize> {
    assert!(
        buf.capacity() - buf.len() >= max,
        "room reserved for the read"
    );
    loop {
        let old = buf.len();
        // SAFETY: `buf` has room for `max` more bytes (checked above);
        // read(2) writes at most that many, and only the bytes it reports
        // written become part of the vector.
        let n = unsafe { libc::read(fd.as_raw_fd(), buf.as_mut_ptr().add(old).cast(), max) };
        if n >= 0 {
            // SAFETY: read(2) initialised these `n` <= `max` bytes.
            unsafe { buf.set_len(old + n as usize) };
            return Ok(n as usize);
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

/// Moves a descriptor the library just made (close-on-exec) to a number
/// above 2, when it got one of 0, 1, 2 because the host had closed them:
/// the library never holds the standard descriptors' numbers, which a
/// later `dup2`, a child's stdio or the host's own reopening would take
/// for stdin, stdout or stderr. `Err(errno)` with `fd` closed.
pub(crate) fn move_above_stdio(fd: c_int) -> Result<c_int, c_int> {
    if fd > 2 {
        return Ok(fd);
    }
    // SAFETY: duplicates a descriptor the caller owns (close-on-exec, at 3
    // or above), then closes the original once.
    let moved = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 3) };
    let errno = last_errno();
    // SAFETY: as above.
    unsafe { libc::close(fd) };
    if moved < 0 {
        Err(errno)
    } else {
        Ok(moved)
    }
}

/// [`move_above_stdio`] for an owned descriptor.
pub(crate) fn above_stdio(fd: OwnedFd) -> io::Result<OwnedFd> {
    let raw = move_above_stdio(fd.into_raw_fd()).map_err(io::Error::from_raw_os_error)?;
    // SAFETY: a descriptor just made or moved, owned by nothing else.
    Ok(unsafe { OwnedFd::from_raw_fd(raw) })
}

/// Descriptor number `fd` is open in this process.
pub(crate) fn is_open(fd: c_int) -> bool {
    // SAFETY: F_GETFD on a descriptor number; a closed one fails.
    unsafe { libc::fcntl(fd, libc::F_GETFD) >= 0 }
}

/// Makes `fd` non-blocking (a failure leaves it as it was).
pub(crate) fn set_nonblocking(fd: BorrowedFd<'_>) {
    // SAFETY: F_GETFL and F_SETFL on a live descriptor; no memory.
    unsafe {
        let old = libc::fcntl(fd.as_raw_fd(), libc::F_GETFL);
        if old >= 0 {
            libc::fcntl(fd.as_raw_fd(), libc::F_SETFL, old | libc::O_NONBLOCK);
        }
    }
}

/// poll(2) on `set` for at most `timeout_ms` (-1: no limit, 0: no wait):
/// how many entries have something, or the error.
pub(crate) fn poll(set: &mut [libc::pollfd], timeout_ms: c_int) -> io::Result<usize> {
    // SAFETY: `set` is a live slice of pollfd entries, its length given.
    let r = unsafe { libc::poll(set.as_mut_ptr(), set.len() as libc::nfds_t, timeout_ms) };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r as usize)
    }
}

/// `fd`'s file status flags (F_GETFL).
pub(crate) fn status_flags(fd: BorrowedFd<'_>) -> io::Result<c_int> {
    // SAFETY: F_GETFL on a live descriptor; no memory.
    let flags = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_GETFL) };
    if flags < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(flags)
    }
}

/// Sets `fd`'s file status flags (F_SETFL).
pub(crate) fn set_status_flags(fd: BorrowedFd<'_>, flags: c_int) -> io::Result<()> {
    // SAFETY: F_SETFL on a live descriptor; no memory.
    if unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_SETFL, flags) } < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// The flag that makes a descriptor non-blocking, among its status flags.
pub(crate) const NONBLOCK: c_int = libc::O_NONBLOCK;

/// `fd` is a socket.
pub(crate) fn is_socket(fd: BorrowedFd<'_>) -> bool {
    let mut stat = std::mem::MaybeUninit::<libc::stat>::uninit();
    // SAFETY: fstat fills the struct it is given for a live descriptor.
    if unsafe { libc::fstat(fd.as_raw_fd(), stat.as_mut_ptr()) } != 0 {
        return false;
    }
    // SAFETY: fstat succeeded, so it initialised `stat`.
    let stat = unsafe { stat.assume_init() };
    stat.st_mode & libc::S_IFMT == libc::S_IFSOCK
}

/// One write of `buf` to `fd`, EINTR retried: the bytes written, or the
/// error (`WouldBlock` when a non-blocking descriptor is full, `BrokenPipe`
/// when the reader is gone; a write of 0 bytes is reported as an error,
/// since nothing more would go). A socket is written with `MSG_NOSIGNAL`;
/// anything else under a [`SigpipeGuard`](super::sigpipe::SigpipeGuard)
/// the caller holds, so that no SIGPIPE reaches the process.
pub(crate) fn write(fd: BorrowedFd<'_>, buf: &[u8], socket: bool) -> io::Result<usize> {
    loop {
        // SAFETY: `buf` is a live slice; write(2) and send(2) only read it.
        let n = unsafe {
            if socket {
                libc::send(
                    fd.as_raw_fd(),
                    buf.as_ptr().cast(),
                    buf.len(),
                    libc::MSG_NOSIGNAL,
                )
            } else {
                libc::write(fd.as_raw_fd(), buf.as_ptr().cast(), buf.len())
            }
        };
        if n > 0 {
            return Ok(n as usize);
        }
        if n == 0 {
            return Err(io::Error::from_raw_os_error(libc::EIO));
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

/// Shuts a socket down for writing: the peer sees the end of the stream
/// whatever other descriptor still holds the socket.
pub(crate) fn shutdown_write(fd: BorrowedFd<'_>) {
    // SAFETY: shutdown(2) on a live descriptor; no memory.
    unsafe { libc::shutdown(fd.as_raw_fd(), libc::SHUT_WR) };
}

/// A close-on-exec duplicate of `fd`, numbered above 2.
pub(crate) fn duplicate_above_stdio(fd: BorrowedFd<'_>) -> io::Result<OwnedFd> {
    // SAFETY: duplicates a live descriptor (close-on-exec, at 3 or above).
    let dup = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_DUPFD_CLOEXEC, 3) };
    if dup < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a descriptor just made, owned by nothing else.
    Ok(unsafe { OwnedFd::from_raw_fd(dup) })
}

/// The stdout guard: points descriptor 1 at stderr, or at `/dev/null` when
/// the process has no stderr (started with `2>&-`), never at whatever else
/// may hold the number 2. Process state: the caller has moved the protocol
/// stream off descriptor 1.
pub(crate) fn point_stdout_away() {
    if is_open(2) {
        // SAFETY: descriptor 2 is open; dup2 replaces descriptor 1.
        unsafe { libc::dup2(2, 1) };
        return;
    }
    // SAFETY: opens /dev/null (a NUL-terminated literal); on success the new
    // descriptor replaces 1 and is closed once (unless it is 1 itself).
    unsafe {
        let null = libc::open(c"/dev/null".as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if null >= 0 && null != 1 {
            libc::dup2(null, 1);
            libc::close(null);
        }
    }
}

/// Standard descriptor `n` (0, 1 or 2) of the process, borrowed for as long
/// as the process lives: the library never closes it. One the process has
/// closed fails every call on it with EBADF (the connection's open asks
/// for its flags first, and refuses it).
pub(crate) fn standard(n: u8) -> BorrowedFd<'static> {
    debug_assert!(n <= 2);
    // SAFETY: 0, 1 and 2 are not -1; they name the process's standard
    // streams for its whole life (closed by nothing of this library).
    unsafe { BorrowedFd::borrow_raw(c_int::from(n)) }
}
