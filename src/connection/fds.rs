//! The descriptors of a connection (POSIX): a read side and a write side
//! (two pipes, one socket, a tty, a spawned server's stdout and stdin),
//! non-blocking, and where each side stands; the writes, the reads, the end
//! of each side, and what to wait for.

use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd, RawFd};
use std::time::{Duration, Instant};

use crate::error::Error;
use crate::process::server::Server;
use crate::reader::READ_CHUNK;
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

/// The descriptors of one connection and where each side stands.
#[derive(Debug)]
pub(crate) struct FdIo {
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
    /// The peer's end has not been seen.
    read_open: bool,
    /// The write side has not ended.
    write_open: bool,
    /// Sends from other threads wake a `poll(2)` through this.
    pub(super) wake: Wake,
    /// `wake` was signalled and not drained since.
    pub(super) signalled: bool,
    /// A write was refused: what the peer wrote before it went is still to
    /// be read, before the connection ends.
    read_left: bool,
    /// The peer's end came at this instant while output was queued: the
    /// connection ends once that is written (or `END_GRACE` later).
    eof_at: Option<Instant>,
    /// The last time a due deadline made `catch_up` read: deadlines up to
    /// then have had theirs.
    caught_up: Option<Instant>,
    /// A spawned server behind the descriptors. Last: dropped after the
    /// pipes are closed (it kills and reaps what is left).
    process: Option<Server>,
}

/// How long queued output may still be written after the peer's end.
const END_GRACE: Duration = Duration::from_secs(2);

/// Reads (of up to 64 KiB) of what a peer that went away left unread: 1 MiB.
const LEFT_READS: usize = 16;

/// Why [`FdIo::open`] failed, with the descriptors it was given, untouched
/// (their flags as they were): the caller still owns them.
#[cfg_attr(not(feature = "capi"), allow(dead_code))] // the C face gives them back
pub(crate) struct OpenFailed {
    pub(crate) error: Error,
    pub(crate) read: Desc,
    pub(crate) write: Option<Desc>,
}

impl FdIo {
    /// The I/O of a connection reading `read` and writing `write` (`None`:
    /// `read` serves both ways). Both are made non-blocking (borrowed ones
    /// get their flags back at the end); a wake-up channel is made.
    pub(crate) fn open(read: Desc, write: Option<Desc>) -> Result<FdIo, OpenFailed> {
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
        let mut io = FdIo::new(read, write, wake);
        io.restore = restore;
        io.write_is_socket = write_is_socket;
        Ok(io)
    }

    /// Both sides open, nothing to restore, no process.
    fn new(read: Desc, write: Option<Desc>, wake: Wake) -> FdIo {
        FdIo {
            read,
            write_is_read: write.is_none(),
            write,
            restore: Vec::new(),
            write_is_socket: false,
            read_open: true,
            write_open: true,
            wake,
            signalled: false,
            read_left: false,
            eof_at: None,
            caught_up: None,
            process: None,
        }
    }

    /// The I/O of a spawned server: its stdout and stdin (owned, already
    /// non-blocking), and the process.
    pub(crate) fn for_process(
        stdout: OwnedFd,
        stdin: OwnedFd,
        process: Server,
    ) -> io::Result<FdIo> {
        let wake = Wake::new()?; // on failure the pipes close and the process is reaped
        let mut io = FdIo::new(Desc::Owned(stdout), Some(Desc::Owned(stdin)), wake);
        io.process = Some(process);
        Ok(io)
    }

    fn write_fd(&self) -> Option<BorrowedFd<'_>> {
        if self.write_is_read {
            Some(self.read.fd())
        } else {
            self.write.as_ref().map(Desc::fd)
        }
    }

    /// The spawned server, if any.
    pub(crate) fn process(&self) -> Option<&Server> {
        self.process.as_ref()
    }

    pub(crate) fn process_mut(&mut self) -> Option<&mut Server> {
        self.process.as_mut()
    }

    /// Wakes the thread polling this connection's descriptors.
    pub(crate) fn wake(&mut self) {
        self.wake.signal();
        self.signalled = true;
    }

    /// Empties the wake-up channel once its signal is taken into account
    /// (else an event loop polling it would spin).
    pub(crate) fn clear_wake(&mut self) {
        if self.signalled {
            self.wake.drain();
            self.signalled = false;
        }
    }

    /// Empties the wake-up channel whatever filled it (an event loop is
    /// about to wait on it: anything left would make it return at once).
    pub(crate) fn drain_wake(&mut self) {
        self.wake.drain();
        self.signalled = false;
    }

    /// Writes what is queued, as far as the descriptor takes it now. A
    /// refused write (EPIPE, or any error but EAGAIN) means the peer reads
    /// no more: the connection closes. Once sends are over and the queue is
    /// written (or the closing grace is over), the write side ends.
    pub(crate) fn flush(&mut self, core: &mut Transport) {
        if !self.write_open {
            return;
        }
        if !core.output().is_empty() {
            let guard = (!self.write_is_socket).then(SigpipeGuard::new);
            loop {
                let out = core.output();
                if out.is_empty() {
                    break;
                }
                let Some(fd) = self.write_fd() else { break };
                match write(fd, out, self.write_is_socket) {
                    Ok(n) => core.consume(n),
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                    Err(e) => {
                        if e.kind() == io::ErrorKind::BrokenPipe {
                            if let Some(guard) = &guard {
                                guard.consume_raised();
                            }
                        }
                        core.write_failed();
                        self.end_write(core);
                        self.read_left = true;
                        break;
                    }
                }
            }
        }
        if core.closing() {
            let grace_over = || core.close_at().is_some_and(|at| at <= Instant::now());
            if core.output().is_empty() || grace_over() {
                self.end_write(core);
            }
        }
    }

    /// Ends the write side, dropping what is still queued: an owned socket
    /// is shut down for writing (whatever other descriptor also holds it:
    /// a server's guarded stdout on the socket that is also its stdin),
    /// then an owned write descriptor is closed unless it also reads;
    /// borrowed ones are left as they are.
    pub(crate) fn end_write(&mut self, core: &mut Transport) {
        if !self.write_open {
            return;
        }
        self.write_open = false;
        core.consume(usize::MAX);
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

    /// When the earliest deadline is due: reads once what already arrived
    /// (its answer, maybe, which then is a response, not a timeout). Once
    /// per deadline, and only when no line is waiting (they come before
    /// the timeout anyway): a peer that keeps writing can then neither hold
    /// the timeout back nor make the buffer grow past one read.
    pub(crate) fn catch_up(&mut self, core: &mut Transport) -> Result<(), Error> {
        let Some(at) = core.next_deadline() else {
            return Ok(());
        };
        let now = Instant::now();
        if at > now || self.caught_up.is_some_and(|done| at <= done) || core.line_waiting() {
            return Ok(());
        }
        self.caught_up = Some(now);
        self.read(core).map(|_| ())
    }

    /// Makes the next turn read what the peer left (see `read_left`): a
    /// spawned server was just killed.
    pub(crate) fn read_what_is_left(&mut self) {
        self.read_left = true;
    }

    /// After a refused write, reads what the peer wrote before it went (an
    /// answer, say: it is delivered, not failed), up to `LEFT_READS` reads so
    /// that a peer still writing cannot hold the end back. Called before the
    /// transport is asked for its next event, never while an event's data
    /// is lent out (reading may move the reader's buffer).
    pub(crate) fn read_left(&mut self, core: &mut Transport) -> Result<(), Error> {
        if !self.read_left {
            return Ok(());
        }
        self.read_left = false;
        for _ in 0..LEFT_READS {
            if !self.read(core)? {
                break;
            }
        }
        Ok(())
    }

    /// Reads once what the peer sent (up to 64 KiB) straight into the
    /// transport. `Ok(true)`: something changed (bytes came, or the peer's
    /// end: events may be due); `Ok(false)`: nothing to read now.
    pub(crate) fn read(&mut self, core: &mut Transport) -> Result<bool, Error> {
        if !self.read_open {
            return Ok(false);
        }
        let fd = self.read.fd();
        let read = core.receive_with(READ_CHUNK, |buf| read_appending(fd, buf, READ_CHUNK));
        match read {
            Ok(Ok(n)) if n > 0 => Ok(true),
            Ok(Err(e)) if e.kind() == io::ErrorKind::WouldBlock => Ok(false),
            // The end of the stream; a read error (ECONNRESET...) ends it too.
            // A spawned server's connection ends when the process is gone.
            // Without a process, the lines that came last are given and may
            // be answered, and what is queued is written (the peer may only
            // have closed its half), for at most END_GRACE; then the end.
            Ok(_) => {
                match &mut self.process {
                    Some(process) => process.stdout_ended(),
                    None => {
                        core.finish_input()?;
                        self.eof_at = Some(Instant::now());
                    }
                }
                self.read_open = false;
                Ok(true)
            }
            Err(Error::Closed) => {
                self.read_open = false; // closing came to its end: no more input
                Ok(false)
            }
            Err(e) => Err(e),
        }
    }

    /// Ends the connection whose peer's end came, once the lines that came
    /// last are taken and what is queued is written (or the write side has
    /// ended, or `END_GRACE` passed).
    pub(crate) fn finish_end(&mut self, core: &mut Transport) -> Result<(), Error> {
        if let Some(at) = self.eof_at {
            let settled = !core.input_pending() && (core.output().is_empty() || !self.write_open);
            if settled || at + END_GRACE <= Instant::now() {
                core.receive_end()?;
                self.eof_at = None;
            }
        }
        Ok(())
    }

    /// When the descriptors' side needs a look without any I/O: the end of
    /// `END_GRACE`, a spawned server's signal or exit check.
    pub(crate) fn next_deadline(&self, now: Instant) -> Option<Instant> {
        let end = self.eof_at.map(|at| at + END_GRACE);
        let process = self.process.as_ref().and_then(|p| p.next_deadline(now));
        match (end, process) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Fills `set` with what to wait for now: the peer's bytes, room to
    /// write when something is queued, a wake-up; for a spawned server its
    /// stderr and exit. Returns how many.
    pub(crate) fn poll_set(
        &self,
        core: &Transport,
        set: &mut [libc::pollfd; MAX_POLL_FDS],
    ) -> usize {
        let mut n = 0;
        let mut add = |fd: RawFd, events: libc::c_short| {
            if let Some(same) = set[..n].iter_mut().find(|p| p.fd == fd) {
                same.events |= events;
            } else {
                set[n] = libc::pollfd {
                    fd,
                    events,
                    revents: 0,
                };
                n += 1;
            }
        };
        if !core.is_closed() {
            if self.read_open {
                add(self.read.fd().as_raw_fd(), libc::POLLIN);
            }
            if let Some(fd) = self.write_fd().filter(|_| self.write_open) {
                if !core.output().is_empty() {
                    add(fd.as_raw_fd(), libc::POLLOUT);
                }
            }
        }
        add(self.wake.fd(), libc::POLLIN);
        // After CLOSED nothing is read any more: a spawned server's stderr
        // at its end (it was killed before the end was read) would be
        // ready for ever, and an event loop on the set would spin.
        if let Some(process) = self.process.as_ref().filter(|_| !core.is_closed()) {
            for fd in process.poll_fds() {
                add(fd, libc::POLLIN);
            }
        }
        n
    }
}

impl Drop for FdIo {
    fn drop(&mut self) {
        // Borrowed descriptors get their flags back; owned ones close as
        // their fields drop (the write one first, then the read one, then
        // the process is killed and reaped if it still runs).
        for &(fd, flags) in &self.restore {
            let _ = set_status_flags(fd, flags);
        }
    }
}
