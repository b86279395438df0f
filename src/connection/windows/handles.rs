//! The handles of a connection (Windows): our overlapped ends of a spawned
//! server's stdout and stdin, or any other handles (the process's own
//! stdio, a caller's) through a thread per direction, read and written
//! without blocking; and the wake event for other threads. Where each side
//! stands is `connection::io`'s.

use std::io;
use std::os::windows::io::{BorrowedHandle, OwnedHandle};

use crate::reader::READ_CHUNK;
use crate::sys::windows::stream::{Reader, Writer};
use crate::sys::windows::threaded::Source;
use crate::sys::windows::wake::Wake;
use crate::transport::Transport;

/// The handles of one connection.
#[derive(Debug)]
pub(crate) struct Handles {
    read: Reader,
    /// `None` once the write side ended (closed).
    write: Option<Writer>,
    /// Sends from other threads wake the wait through this.
    pub(crate) wake: Wake,
}

impl Handles {
    /// The handles of a spawned server: our ends of its stdout and stdin
    /// (overlapped).
    pub(crate) fn for_process(stdout: OwnedHandle, stdin: OwnedHandle) -> io::Result<Handles> {
        Ok(Handles {
            read: Reader::new(stdout, READ_CHUNK)?,
            write: Some(Writer::new(stdin)?),
            wake: Wake::new()?,
        })
    }

    /// Handles that are not ours to make overlapped: read and written by a
    /// thread each.
    pub(crate) fn threaded(read: Source, write: Source) -> io::Result<Handles> {
        Ok(Handles {
            read: Reader::threaded(read)?,
            write: Some(Writer::threaded(write)?),
            wake: Wake::new()?,
        })
    }

    /// Reads what has come at the end of `buf` (at most 64 KiB, which
    /// `max` is); `WouldBlock` when nothing is there, 0 at the end of the
    /// stream.
    pub(crate) fn read(&mut self, buf: &mut Vec<u8>, max: usize) -> io::Result<usize> {
        debug_assert!(max >= READ_CHUNK);
        self.read.read_appending(buf)
    }

    /// Writes what is queued, as far as the pipe takes it now. `Err(())`:
    /// the write was refused (the reader is gone).
    pub(crate) fn write_queued(&mut self, core: &mut Transport) -> Result<(), ()> {
        let Some(write) = &mut self.write else {
            return Ok(());
        };
        loop {
            let out = core.output();
            if out.is_empty() {
                return Ok(());
            }
            match write.write(out) {
                Ok(n) => core.consume(n),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
                Err(_) => return Err(()),
            }
        }
    }

    /// A write is in flight: the queue no longer shows its bytes, but they
    /// are not in the pipe yet (the write side must not end under it).
    pub(crate) fn write_in_flight(&mut self) -> bool {
        self.write.as_mut().is_some_and(Writer::in_flight)
    }

    /// Ends the write side: a write in flight is cancelled, our end closed
    /// (the server reads the end of its stdin).
    pub(crate) fn end_write(&mut self) {
        self.write = None;
    }

    /// The events of the read and the write in flight.
    pub(crate) fn wait_handles(&mut self) -> impl Iterator<Item = BorrowedHandle<'_>> + '_ {
        let write = self.write.as_mut().and_then(Writer::event);
        self.read.event().into_iter().chain(write)
    }
}
