//! Writing a whole buffer to a descriptor the caller names: short writes
//! continued, EINTR retried, EAGAIN waited out with poll(2) until an
//! optional deadline, and never a SIGPIPE that kills the process.

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd};
use std::time::Instant;

use super::fd::{poll, status_flags, write, NONBLOCK};
use super::sigpipe::SigpipeGuard;

/// Writes `data` to `fd` until all of it is written, the peer is gone, a
/// call fails or `deadline` passes. Returns how it ended and the bytes
/// written: `ErrorKind::TimedOut` (no OS code) at the deadline, else the
/// failing call's error (EPIPE: the reader is gone; the SIGPIPE that write
/// raised was consumed).
///
/// With a deadline on a blocking descriptor, each write waits with poll(2)
/// first and then writes at most `PIPE_BUF` bytes, which a pipe that
/// poll(2) called writable takes without blocking.
pub(crate) fn write_all(
    fd: BorrowedFd<'_>,
    data: &[u8],
    deadline: Option<Instant>,
) -> (io::Result<()>, usize) {
    let blocking = status_flags(fd).is_ok_and(|flags| flags & NONBLOCK == 0);
    let wait_first = deadline.is_some() && blocking;
    let mut done = 0;
    let guard = SigpipeGuard::new();
    let failure = loop {
        if done == data.len() {
            return (Ok(()), done);
        }
        let rest = &data[done..];
        let step = if wait_first {
            if let Err(e) = wait_writable(fd, deadline) {
                break e;
            }
            rest.len().min(libc::PIPE_BUF)
        } else {
            rest.len()
        };
        match write(fd, &rest[..step], false) {
            Ok(n) => done += n,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                if let Err(e) = wait_writable(fd, deadline) {
                    break e;
                }
            }
            Err(e) => {
                if e.kind() == io::ErrorKind::BrokenPipe {
                    guard.consume_raised();
                }
                break e;
            }
        }
    };
    drop(guard);
    (Err(failure), done)
}

/// Waits until `fd` can take more data (or reports an error or hang-up,
/// which the next write then reports precisely), at most until `deadline`.
fn wait_writable(fd: BorrowedFd<'_>, deadline: Option<Instant>) -> io::Result<()> {
    let mut pfd = [libc::pollfd {
        fd: fd.as_raw_fd(),
        events: libc::POLLOUT,
        revents: 0,
    }];
    loop {
        let timeout = match deadline {
            None => -1,
            Some(deadline) => {
                let left = deadline.saturating_duration_since(Instant::now());
                // Round up, so that a wait never ends before the deadline.
                i32::try_from(left.as_nanos().div_ceil(1_000_000)).unwrap_or(i32::MAX)
            }
        };
        match poll(&mut pfd, timeout) {
            Ok(0) if timeout == 0 => return Err(io::ErrorKind::TimedOut.into()),
            Ok(0) => {} // woke early by rounding: the next round decides
            Ok(_) if pfd[0].revents & libc::POLLNVAL != 0 => {
                return Err(io::Error::from_raw_os_error(libc::EBADF));
            }
            Ok(_) => return Ok(()),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}
