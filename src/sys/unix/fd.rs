//! Descriptors: one read(2) into a buffer's spare room, the errno of the
//! last failed call, new descriptors kept above 2, flags, poll(2).

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
/// retried. The bytes read (0: end of file), or the errno. `fd` is any
/// descriptor number (the C face reads from those its caller names): one
/// that is not open fails with EBADF.
pub(crate) fn read_appending(fd: c_int, buf: &mut Vec<u8>, max: usize) -> Result<usize, c_int> {
    assert!(
        buf.capacity() - buf.len() >= max,
        "room reserved for the read"
    );
    loop {
        let old = buf.len();
        // SAFETY: `buf` has room for `max` more bytes (checked above);
        // read(2) writes at most that many, and only the bytes it reports
        // written become part of the vector.
        let n = unsafe { libc::read(fd, buf.as_mut_ptr().add(old).cast(), max) };
        if n >= 0 {
            // SAFETY: read(2) initialised these `n` <= `max` bytes.
            unsafe { buf.set_len(old + n as usize) };
            return Ok(n as usize);
        }
        let errno = last_errno();
        if errno != libc::EINTR {
            return Err(errno);
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
