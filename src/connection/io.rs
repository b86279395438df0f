//! A connection's I/O as the driver sees it, the same on every platform:
//! where each side stands (the peer's end seen, the write side ended), the
//! writes of the queue, the reads into the transport, the end of the
//! stream and its grace, the read that a due deadline gets first, and a
//! spawned server behind it all. The platform's ends ([`Ends`]: descriptors
//! on POSIX, handles on Windows) only move bytes, end the write side and
//! wake the waiting thread.

use std::io;
use std::time::{Duration, Instant};

use crate::error::Error;
use crate::process::Server;
use crate::reader::READ_CHUNK;
use crate::transport::Transport;

#[cfg(unix)]
pub(crate) use super::unix::fds::Fds as Ends;
#[cfg(windows)]
pub(crate) use super::windows::handles::Handles as Ends;

/// How long queued output may still be written after the peer's end.
const END_GRACE: Duration = Duration::from_secs(2);

/// Reads (of up to 64 KiB) of what a peer that went away left unread: 1 MiB.
const LEFT_READS: usize = 16;

/// The I/O of one connection and where each side stands.
#[derive(Debug)]
pub(crate) struct Io {
    /// The platform's ends: the read side, the write side, the wake-up.
    pub(crate) ends: Ends,
    /// The peer's end has not been seen.
    pub(crate) read_open: bool,
    /// The write side has not ended.
    pub(crate) write_open: bool,
    /// The wake-up was signalled and not drained since.
    pub(crate) signalled: bool,
    /// A write was refused: what the peer wrote before it went is still to
    /// be read, before the connection ends.
    read_left: bool,
    /// The peer's end came at this instant while output was queued: the
    /// connection ends once that is written (or `END_GRACE` later).
    eof_at: Option<Instant>,
    /// The last time a due deadline made `catch_up` read: deadlines up to
    /// then have had theirs.
    caught_up: Option<Instant>,
    /// A spawned server behind the ends. Last: dropped after the pipes are
    /// closed (it kills what is left, and reaps it on POSIX).
    pub(crate) process: Option<Server>,
}

impl Io {
    /// Both sides open, no process.
    pub(crate) fn new(ends: Ends) -> Io {
        Io {
            ends,
            read_open: true,
            write_open: true,
            signalled: false,
            read_left: false,
            eof_at: None,
            caught_up: None,
            process: None,
        }
    }

    /// The I/O of a spawned server: the ends of its pipes, and the process.
    pub(crate) fn for_process(ends: Ends, process: Server) -> Io {
        let mut io = Io::new(ends);
        io.process = Some(process);
        io
    }

    /// Makes way for a server started in its place: the pipes close, and
    /// what is left of the server is killed (see `Server::retire`).
    pub(crate) fn retire(self: Box<Io>) {
        let Io { ends, process, .. } = *self;
        drop(ends);
        if let Some(process) = process {
            process.retire();
        }
    }

    /// The spawned server, if any.
    pub(crate) fn process(&self) -> Option<&Server> {
        self.process.as_ref()
    }

    pub(crate) fn process_mut(&mut self) -> Option<&mut Server> {
        self.process.as_mut()
    }

    /// Wakes the thread waiting on this connection.
    pub(crate) fn wake(&mut self) {
        self.ends.wake.signal();
        self.signalled = true;
    }

    /// Empties the wake-up once its signal is taken into account (else an
    /// event loop waiting on it would spin).
    pub(crate) fn clear_wake(&mut self) {
        if self.signalled {
            self.ends.wake.drain();
            self.signalled = false;
        }
    }

    /// Empties the wake-up whatever filled it (an event loop is about to
    /// wait on it: anything left would make it return at once).
    pub(crate) fn drain_wake(&mut self) {
        self.ends.wake.drain();
        self.signalled = false;
    }

    /// Writes what is queued, as far as the write side takes it now. A
    /// refused write (the peer reads no more) closes the connection. Once
    /// sends are over and the queue is written (or the closing grace is
    /// over), the write side ends.
    pub(crate) fn flush(&mut self, core: &mut Transport) {
        if !self.write_open {
            return;
        }
        if !core.output().is_empty() && self.ends.write_queued(core).is_err() {
            core.write_failed();
            self.end_write(core);
            self.read_left = true;
            return;
        }
        if core.closing() {
            let grace_over = || core.close_at().is_some_and(|at| at <= Instant::now());
            let written = core.output().is_empty() && !self.ends.write_in_flight();
            if written || grace_over() {
                self.end_write(core);
            }
        }
    }

    /// Ends the write side, dropping what is still queued (see the
    /// platform's `end_write` for what happens to the descriptor or handle).
    pub(crate) fn end_write(&mut self, core: &mut Transport) {
        if !self.write_open {
            return;
        }
        self.write_open = false;
        core.consume(usize::MAX);
        self.ends.end_write();
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
        let ends = &mut self.ends;
        let read = core.receive_with(READ_CHUNK, |buf| ends.read(buf, READ_CHUNK));
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

    /// When the I/O side needs a look without any I/O: the end of
    /// `END_GRACE`, a spawned server's shutdown step or exit check.
    pub(crate) fn next_deadline(&self, now: Instant) -> Option<Instant> {
        let end = self.eof_at.map(|at| at + END_GRACE);
        let process = self.process.as_ref().and_then(|p| p.next_deadline(now));
        match (end, process) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
}
