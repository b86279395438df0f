//! The descriptors of a connection (POSIX): a read side and a write side
//! (two pipes, one socket, a tty, a spawned server's stdout and stdin),
//! non-blocking; their reads and writes, the end of the write side, and the
//! wake-up for other threads. Where each side stands is `connection::io`'s.

use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};

use crate::error::Error;
use crate::sys::unix::fd::{
    is_socket, read_appending, set_status_flags, shutdown_write, status_flags, write, NONBLOCK,
};
use crate::sys::unix::sigpipe::SigpipeGuard;
use crate::sys::unix::wake::Wake;
use crate::transport::Transport;

/// The most descriptors a connection waits on at once: 5 (read, write,
/// wake-up, and for a spawned server its stderr and its pidfd).
pub(crate) const MAX_POLL_FDS: usize = 5;

/// A descriptor the connection owns (closed at its end) or borrows (given
/// back the flags it changed).
#[derive(Debug)]
pub(crate) enum Desc {
    Owned(OwnedFd),
    Borrowed(BorrowedFd<'static>),
}

impl Desc {
    fn fd(&self) -> BorrowedFd<'_> {
        match self {
            Desc::Owned(fd) => fd.as_fd(),
            Desc::Borrowed(fd) => *fd,
        }
    }
}

/// The descriptors of one connection.
#[derive(Debug)]
pub(crate) struct Fds {
    read: Desc,
    /// `None` once the write side ended and was closed, or from the start
    /// when one descriptor serves both ways (`write_is_read`).
    write: Option<Desc>,
    /// One descriptor (a socket) reads and writes.
    write_is_read: bool,
    /// Borrowed descriptors whose flags were changed, with their old flags.
    restore: Vec<(BorrowedFd<'static>, i32)>,
    /// The write descriptor is a socket: `send(MSG_NOSIGNAL)`, no signal
    /// mask games.
    write_is_socket: bool,
    /// Sends from other threads wake a `poll(2)` through this.
    pub(crate) wake: Wake,
}

/// Why [`Fds::open`] failed, with the descriptors it was given, untouched
/// (their flags as they were): the caller still owns them.
#[cfg_attr(not(feature = "capi"), allow(dead_code))] // the C face gives them back
pub(crate) struct OpenFailed {
    pub(crate) error: Error,
    pub(crate) read: Desc,
    pub(crate) write: Option<Desc>,
}

impl Fds {
    /// The descriptors of a connection reading `read` and writing `write`
    /// (`None`: `read` serves both ways). Both are made non-blocking
    /// (borrowed ones get their flags back at the end); a wake-up channel
    /// is made.
    pub(crate) fn open(read: Desc, write: Option<Desc>) -> Result<Fds, OpenFailed> {
        let fail = |error, read, write| Err(OpenFailed { error, read, write });
        let mut old = [0; 2];
        let fds = [Some(read.fd()), write.as_ref().map(Desc::fd)];
        for (fd, old) in fds.iter().zip(&mut old) {
            if let Some(fd) = fd {
                match status_flags(*fd) {
                    Ok(flags) => *old = flags,
                    Err(e) => return fail(Error::from(e), read, write),
                }
            }
        }
        let wake = match Wake::new() {
            Ok(wake) => wake,
            Err(e) => return fail(Error::from(e), read, write),
        };
        // Made non-blocking, each; on a failure those already changed are
        // given their flags back.
        let mut changed = Vec::new();
        if changed.try_reserve(2).is_err() {
            return fail(Error::OutOfMemory, read, write);
        }
        let mut failure = None;
        for (fd, &old) in fds.iter().zip(&old) {
            if let Some(fd) = fd.filter(|_| old & NONBLOCK == 0) {
                if let Err(e) = set_status_flags(fd, old | NONBLOCK) {
                    failure = Some(Error::from(e));
                    break;
                }
                changed.push((fd.as_raw_fd(), old));
            }
        }
        if let Some(error) = failure {
            for (fd, old) in changed {
                let desc = [Some(&read), write.as_ref()].into_iter().flatten();
                if let Some(d) = desc.map(Desc::fd).find(|d| d.as_raw_fd() == fd) {
                    let _ = set_status_flags(d, old);
                }
            }
            return fail(error, read, write);
        }
        let mut restore = Vec::new();
        for (fd, old) in changed {
            let desc = [Some(&read), write.as_ref()].into_iter().flatten();
            if let Some(Desc::Borrowed(d)) = desc.into_iter().find(|d| d.fd().as_raw_fd() == fd) {
                restore.push((*d, old));
            }
        }
        let write_is_socket = is_socket(write.as_ref().unwrap_or(&read).fd());
        let mut fds = Fds::new(read, write, wake);
        fds.restore = restore;
        fds.write_is_socket = write_is_socket;
        Ok(fds)
    }

    /// Nothing to restore.
    fn new(read: Desc, write: Option<Desc>, wake: Wake) -> Fds {
        Fds {
            read,
            write_is_read: write.is_none(),
            write,
            restore: Vec::new(),
            write_is_socket: false,
            wake,
        }
    }

    /// The descriptors of a spawned server: its stdout and stdin (owned,
    /// already non-blocking).
    pub(crate) fn for_process(stdout: OwnedFd, stdin: OwnedFd) -> io::Result<Fds> {
        let wake = Wake::new()?; // on failure the pipes close
        Ok(Fds::new(
            Desc::Owned(stdout),
            Some(Desc::Owned(stdin)),
            wake,
        ))
    }

    pub(crate) fn read_fd(&self) -> BorrowedFd<'_> {
        self.read.fd()
    }

    pub(crate) fn write_fd(&self) -> Option<BorrowedFd<'_>> {
        if self.write_is_read {
            Some(self.read.fd())
        } else {
            self.write.as_ref().map(Desc::fd)
        }
    }

    /// Reads up to `max` bytes at the end of `buf`; `WouldBlock` when
    /// nothing is there, 0 at the end of the stream.
    pub(crate) fn read(&mut self, buf: &mut Vec<u8>, max: usize) -> io::Result<usize> {
        read_appending(self.read.fd(), buf, max)
    }

    /// Writes what is queued, as far as the descriptor takes it now.
    /// `Err(())`: the write was refused (EPIPE, or any error but EAGAIN):
    /// the peer reads no more. Never raises SIGPIPE.
    pub(crate) fn write_queued(&mut self, core: &mut Transport) -> Result<(), ()> {
        let guard = (!self.write_is_socket).then(SigpipeGuard::new);
        loop {
            let out = core.output();
            if out.is_empty() {
                return Ok(());
            }
            let Some(fd) = self.write_fd() else {
                return Ok(());
            };
            match write(fd, out, self.write_is_socket) {
                Ok(n) => core.consume(n),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
                Err(e) => {
                    if e.kind() == io::ErrorKind::BrokenPipe {
                        if let Some(guard) = &guard {
                            guard.consume_raised();
                        }
                    }
                    return Err(());
                }
            }
        }
    }

    /// A write is under way that the queue no longer shows: never on POSIX
    /// (a write either moved bytes into the kernel or did not).
    pub(crate) fn write_in_flight(&self) -> bool {
        false
    }

    /// Ends the write side: an owned socket is shut down for writing
    /// (whatever other descriptor also holds it: a server's guarded stdout
    /// on the socket that is also its stdin), then an owned write
    /// descriptor is closed unless it also reads; borrowed ones are left as
    /// they are.
    pub(crate) fn end_write(&mut self) {
        let owned = match (&self.write, self.write_is_read) {
            (_, true) => matches!(self.read, Desc::Owned(_)),
            (Some(Desc::Owned(_)), false) => true,
            _ => false,
        };
        if owned {
            if self.write_is_socket {
                if let Some(fd) = self.write_fd() {
                    shutdown_write(fd);
                }
            }
            if !self.write_is_read {
                self.write = None; // closed
            }
        }
    }
}

impl Drop for Fds {
    fn drop(&mut self) {
        // Borrowed descriptors get their flags back; owned ones close as
        // their fields drop.
        for &(fd, flags) in &self.restore {
            let _ = set_status_flags(fd, flags);
        }
    }
}
