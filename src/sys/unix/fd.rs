//! Descriptors: one read(2) into a buffer's spare room, the errno of the
//! last failed call, and new descriptors kept above 2.

use std::ffi::c_int;
use std::io;

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
