//! Non-blocking reads and writes on our overlapped end of a pipe, in the
//! shape of POSIX's non-blocking descriptors: a read gives what has come
//! (or `WouldBlock`, with a read left in flight whose event says when more
//! comes), a write takes bytes at once (or `WouldBlock` while the last one
//! is still in flight). So the driver above is one for both platforms.
//!
//! A read completes into the operation's own buffer and is copied out (one
//! copy of at most 64 KiB per read: the buffer must stay put while the
//! kernel fills it). A write copies its bytes into the operation's buffer
//! and counts them as taken, as a POSIX pipe counts what went into its
//! buffer: a write to a reader that went away is reported by the next one.

use std::io;
use std::os::windows::io::{AsHandle, BorrowedHandle, OwnedHandle};

use super::pipe::{Done, Op};

/// The most bytes one write takes.
const WRITE_CHUNK: usize = 64 * 1024;

/// The read side of one of our overlapped pipe ends.
#[derive(Debug)]
pub(crate) struct Reader {
    /// First: dropped (its read cancelled and waited for) before the handle
    /// closes.
    op: Op,
    _handle: OwnedHandle,
}

impl Reader {
    /// Reads `handle` (opened overlapped) in pieces of up to `chunk` bytes.
    pub(crate) fn new(handle: OwnedHandle, chunk: usize) -> io::Result<Reader> {
        Ok(Reader {
            op: Op::new(handle.as_handle(), chunk)?,
            _handle: handle,
        })
    }

    /// Appends what has come (at most the chunk given to `new`) to `buf`:
    /// the count; 0 at the end of the stream; `WouldBlock` when nothing
    /// has come, with a read in flight (wait on [`event`](Self::event)).
    pub(crate) fn read_appending(&mut self, buf: &mut Vec<u8>) -> io::Result<usize> {
        loop {
            let done = match self.op.in_flight() {
                true => self.op.poll()?,
                false => self.op.start_read()?,
            };
            match done {
                // A zero-byte write of the peer completes a read with 0
                // bytes: not the end; read again.
                Done::Bytes(0) => continue,
                Done::Bytes(n) => {
                    buf.extend_from_slice(&self.op.buffer()[..n]);
                    return Ok(n);
                }
                Done::Pending => return Err(io::ErrorKind::WouldBlock.into()),
                Done::Closed => return Ok(0),
            }
        }
    }

    /// Signalled when the read in flight completes; `None` when no read is
    /// in flight (a read returns at once).
    pub(crate) fn event(&self) -> Option<BorrowedHandle<'_>> {
        self.op.in_flight().then(|| self.op.event())
    }
}

/// The write side of one of our overlapped pipe ends.
#[derive(Debug)]
pub(crate) struct Writer {
    /// First: dropped (its write cancelled) before the handle closes.
    op: Op,
    _handle: OwnedHandle,
}

impl Writer {
    /// Writes to `handle` (opened overlapped).
    pub(crate) fn new(handle: OwnedHandle) -> io::Result<Writer> {
        Ok(Writer {
            op: Op::new(handle.as_handle(), 0)?,
            _handle: handle,
        })
    }

    /// Takes up to 64 KiB of `data`: how many bytes it took; `WouldBlock`
    /// while the last write is still in flight; `BrokenPipe` once the
    /// reader is gone.
    pub(crate) fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        if self.op.in_flight() {
            match self.op.poll()? {
                Done::Pending => return Err(io::ErrorKind::WouldBlock.into()),
                Done::Closed => return Err(io::ErrorKind::BrokenPipe.into()),
                Done::Bytes(_) => {}
            }
        }
        let n = data.len().min(WRITE_CHUNK);
        match self.op.start_write(&data[..n])? {
            Done::Closed => Err(io::ErrorKind::BrokenPipe.into()),
            Done::Bytes(_) | Done::Pending => Ok(n),
        }
    }

    /// A write is in flight: its bytes are taken but not yet in the pipe.
    pub(crate) fn in_flight(&mut self) -> bool {
        if self.op.in_flight() {
            // Finished meanwhile? (What became of it, the next write says.)
            let _ = matches!(self.op.poll(), Ok(Done::Pending));
        }
        self.op.in_flight()
    }

    /// Signalled when the write in flight completes; `None` when none is.
    pub(crate) fn event(&self) -> Option<BorrowedHandle<'_>> {
        self.op.in_flight().then(|| self.op.event())
    }
}
