//! One epoll descriptor that stands for a set of descriptors (Linux): it is
//! readable while any of them is ready, so that an event loop (tokio's
//! `AsyncFd`, a GLib source) waits on one descriptor for a whole
//! connection.

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};

use super::fd::above_stdio;

/// What to wait for on one descriptor, as poll(2) says it.
pub(crate) type Interest = libc::c_short;

/// An epoll instance (close-on-exec, above descriptor 2).
#[derive(Debug)]
pub(crate) struct Epoll {
    fd: OwnedFd,
}

/// The epoll events for poll(2)'s `POLLIN`/`POLLOUT`, level-triggered.
fn events_of(interest: Interest) -> u32 {
    let mut events = 0;
    if interest & libc::POLLIN != 0 {
        events |= libc::EPOLLIN as u32;
    }
    if interest & libc::POLLOUT != 0 {
        events |= libc::EPOLLOUT as u32;
    }
    events
}

impl Epoll {
    pub(crate) fn new() -> io::Result<Epoll> {
        // SAFETY: epoll_create1 makes a descriptor; no pointers.
        let fd = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: a descriptor just made, owned by nothing else.
        let fd = above_stdio(unsafe { OwnedFd::from_raw_fd(fd) })?;
        Ok(Epoll { fd })
    }

    pub(crate) fn fd(&self) -> BorrowedFd<'_> {
        use std::os::fd::AsFd;
        self.fd.as_fd()
    }

    fn ctl(&self, op: libc::c_int, fd: RawFd, interest: Interest) -> io::Result<()> {
        let mut event = libc::epoll_event {
            events: events_of(interest),
            u64: fd as u64,
        };
        // SAFETY: epoll_ctl on our epoll descriptor with a live event struct
        // (ignored for EPOLL_CTL_DEL); a bad `fd` fails with EBADF.
        let r = unsafe { libc::epoll_ctl(self.fd.as_raw_fd(), op, fd, &mut event) };
        if r < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(())
        }
    }

    /// Watches `fd` for `interest` (or changes what it is watched for).
    pub(crate) fn watch(&self, fd: RawFd, interest: Interest, known: bool) -> io::Result<()> {
        let op = if known {
            libc::EPOLL_CTL_MOD
        } else {
            libc::EPOLL_CTL_ADD
        };
        self.ctl(op, fd, interest)
    }

    /// Stops watching `fd`. A descriptor already closed left the set by
    /// itself: the error is then ignored.
    pub(crate) fn unwatch(&self, fd: RawFd) {
        let _ = self.ctl(libc::EPOLL_CTL_DEL, fd, 0);
    }
}
