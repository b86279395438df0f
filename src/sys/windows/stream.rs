//! Non-blocking reads and writes on our overlapped end of a pipe (or, for
//! a handle that cannot be used overlapped, through a thread: see
//! `threaded.rs`), in the shape of POSIX's non-blocking descriptors: a read gives what has come
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
use super::threaded;

/// The most bytes one write takes.
const WRITE_CHUNK: usize = 64 * 1024;

/// A read side: one of our overlapped pipe ends, or any handle read by a
/// thread.
#[derive(Debug)]
pub(crate) enum Reader {
    Pipe(PipeReader),
    Thread(threaded::Reader),
}

/// The read side of one of our overlapped pipe ends.
#[derive(Debug)]
pub(crate) struct PipeReader {
    /// First: dropped (its read cancelled and waited for) before the handle
    /// closes.
    op: Op,
    _handle: OwnedHandle,
}

impl Reader {
    /// Reads `handle` (opened overlapped) in pieces of up to `chunk` bytes.
    pub(crate) fn new(handle: OwnedHandle, chunk: usize) -> io::Result<Reader> {
        Ok(Reader::Pipe(PipeReader {
            op: Op::new(handle.as_handle(), chunk)?,
            _handle: handle,
        }))
    }

    /// Reads any handle, through a thread (at most 64 KiB a read).
    pub(crate) fn threaded(source: threaded::Source) -> io::Result<Reader> {
        Ok(Reader::Thread(threaded::Reader::new(source)?))
    }

    /// Appends what has come (at most the chunk given to `new`, or 64 KiB)
    /// to `buf`: the count; 0 at the end of the stream; `WouldBlock` when
    /// nothing has come (wait on [`event`](Self::event)).
    pub(crate) fn read_appending(&mut self, buf: &mut Vec<u8>) -> io::Result<usize> {
        match self {
            Reader::Pipe(pipe) => pipe.read_appending(buf),
            Reader::Thread(thread) => thread.read_appending(buf),
        }
    }

    /// Signalled when there is something to read; `None` when a read would
    /// return at once (no read in flight).
    pub(crate) fn event(&self) -> Option<BorrowedHandle<'_>> {
        match self {
            Reader::Pipe(pipe) => pipe.op.in_flight().then(|| pipe.op.event()),
            Reader::Thread(thread) => Some(thread.event()),
        }
    }
}

impl PipeReader {
    fn read_appending(&mut self, buf: &mut Vec<u8>) -> io::Result<usize> {
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
}

/// A write side: one of our overlapped pipe ends, or any handle written by
/// a thread.
#[derive(Debug)]
pub(crate) enum Writer {
    Pipe(PipeWriter),
    Thread(threaded::Writer),
}

/// The write side of one of our overlapped pipe ends.
#[derive(Debug)]
pub(crate) struct PipeWriter {
    /// First: dropped (its write cancelled) before the handle closes.
    op: Op,
    _handle: OwnedHandle,
}

impl Writer {
    /// Writes to `handle` (opened overlapped).
    pub(crate) fn new(handle: OwnedHandle) -> io::Result<Writer> {
        Ok(Writer::Pipe(PipeWriter {
            op: Op::new(handle.as_handle(), 0)?,
            _handle: handle,
        }))
    }

    /// Writes to any handle, through a thread.
    pub(crate) fn threaded(source: threaded::Source) -> io::Result<Writer> {
        Ok(Writer::Thread(threaded::Writer::new(source)?))
    }

    /// Takes up to 64 KiB of `data`: how many bytes it took; `WouldBlock`
    /// while the last write is still in flight; `BrokenPipe` once the
    /// reader is gone.
    pub(crate) fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        match self {
            Writer::Pipe(pipe) => pipe.write(data),
            Writer::Thread(thread) => thread.write(data),
        }
    }

    /// A write is in flight: its bytes are taken but not yet written.
    pub(crate) fn in_flight(&mut self) -> bool {
        match self {
            Writer::Pipe(pipe) => pipe.in_flight(),
            Writer::Thread(thread) => thread.in_flight(),
        }
    }

    /// Signalled when the write in flight completes; `None` when none is.
    pub(crate) fn event(&mut self) -> Option<BorrowedHandle<'_>> {
        if !self.in_flight() {
            return None;
        }
        Some(match self {
            Writer::Pipe(pipe) => pipe.op.event(),
            Writer::Thread(thread) => thread.event(),
        })
    }
}

impl PipeWriter {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
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

    fn in_flight(&mut self) -> bool {
        if self.op.in_flight() {
            // Finished meanwhile? (What became of it, the next write says.)
            let _ = matches!(self.op.poll(), Ok(Done::Pending));
        }
        self.op.in_flight()
    }
}
