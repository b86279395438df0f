//! A spawned server's stderr as lines: always drained (a server blocked on a
//! full stderr pipe would stop answering), split into lines of at most
//! 64 KiB, with at most 1 MiB waiting undelivered; beyond it the oldest
//! lines are dropped and their bytes counted. A `\r\n` line end (how
//! Windows programs write) is taken off whole, as `\n` is.

use std::collections::VecDeque;

/// The pipe stderr is read from: a non-blocking descriptor, or on Windows
/// our overlapped end.
#[cfg(unix)]
pub(crate) type Pipe = std::os::fd::OwnedFd;
#[cfg(windows)]
pub(crate) type Pipe = crate::sys::windows::stream::Reader;

/// Appends what is there to `buf` (at most `READ` bytes): the count, 0 at
/// the end, `WouldBlock` when nothing is there now.
fn read_pipe(pipe: &mut Pipe, buf: &mut Vec<u8>) -> std::io::Result<usize> {
    #[cfg(unix)]
    return crate::sys::unix::fd::read_appending(std::os::fd::AsFd::as_fd(pipe), buf, READ);
    #[cfg(windows)]
    return pipe.read_appending(buf);
}

/// The longest piece of a line given as one event.
const PIECE: usize = 64 << 10;
/// The most bytes of complete lines waiting undelivered.
const BACKLOG: usize = 1 << 20;
/// One read's size.
pub(crate) const READ: usize = 64 << 10;
/// The most reads of one drain: what the backlog holds. A server that
/// writes faster than the host reads would otherwise hold the call (and
/// grow the buffer) for as long as it keeps writing.
const DRAIN_READS: usize = BACKLOG / READ;

/// One line (or piece of one) in the buffer.
#[derive(Debug, Clone, Copy)]
struct Line {
    start: usize,
    len: usize,
    /// Ended by a newline (else a 64 KiB piece, or the last bytes before
    /// the end of the stream).
    newline: bool,
    /// Its newline came after a `\r` (a `\r\n` line end, as Windows
    /// programs write): the `\r` is not part of the line given.
    cr: bool,
}

/// The stderr pipe of a spawned server and its lines.
#[derive(Debug)]
pub(crate) struct StderrLines {
    /// The pipe, until its end (or a read error) closes it.
    pipe: Option<Pipe>,
    /// Bytes from `head` on are undelivered: complete lines, then the
    /// start of a line still coming (from `scan` on).
    buf: Vec<u8>,
    head: usize,
    scan: usize,
    lines: VecDeque<Line>,
    /// The front line was lent as an event: it goes at the next call.
    lent: bool,
    /// Bytes of the complete lines not yet delivered (the lent one aside),
    /// newlines included.
    waiting: usize,
    /// Bytes dropped, newlines included.
    dropped: u64,
}

impl Line {
    /// Its bytes in the stream, newline included.
    fn size(&self) -> usize {
        self.len + usize::from(self.cr) + usize::from(self.newline)
    }
}

impl StderrLines {
    /// Takes the pipe (non-blocking; on Windows reading `READ` bytes at a
    /// time).
    pub(crate) fn new(pipe: Pipe) -> StderrLines {
        StderrLines {
            pipe: Some(pipe),
            buf: Vec::new(),
            head: 0,
            scan: 0,
            lines: VecDeque::new(),
            lent: false,
            waiting: 0,
            dropped: 0,
        }
    }

    /// The pipe's descriptor, to poll, until its end.
    #[cfg(unix)]
    pub(crate) fn fd(&self) -> Option<std::ffi::c_int> {
        self.pipe.as_ref().map(std::os::fd::AsRawFd::as_raw_fd)
    }

    /// The event of the read in flight, to wait on, until the end.
    #[cfg(windows)]
    pub(crate) fn event(&self) -> Option<std::os::windows::io::BorrowedHandle<'_>> {
        self.pipe.as_ref().and_then(Pipe::event)
    }

    /// The stream ended (its last bytes are split into lines).
    pub(crate) fn ended(&self) -> bool {
        self.pipe.is_none()
    }

    pub(crate) fn dropped(&self) -> u64 {
        self.dropped
    }

    /// Forgets the line lent by the last event (its data is no longer
    /// valid: a new call began) and gives back room.
    pub(crate) fn begin_call(&mut self) {
        if self.lent {
            self.lent = false;
            self.lines.pop_front();
            self.head = self.lines.front().map_or(self.scan, |l| l.start);
        }
        if self.head > 0 && (self.head == self.buf.len() || self.head >= PIECE) {
            self.buf.drain(..self.head);
            self.scan -= self.head;
            for line in &mut self.lines {
                line.start -= self.head;
            }
            self.head = 0;
        }
    }

    /// Reads what is there (until EAGAIN or the end, at most `DRAIN_READS`
    /// reads: the rest waits for the next call), splitting lines. Returns
    /// whether more may be there now (the reads ran out, or memory did):
    /// after EAGAIN, a poll tells when more comes.
    pub(crate) fn drain(&mut self) -> bool {
        for _ in 0..DRAIN_READS {
            let Some(pipe) = &mut self.pipe else {
                return false;
            };
            if self.buf.try_reserve(READ).is_err() {
                return true; // read later
            }
            match read_pipe(pipe, &mut self.buf) {
                // On to EAGAIN: a flood is read as fast as it comes.
                Ok(n) if n > 0 => self.split(false),
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return false,
                // The end (or an error): the rest is a last line; the pipe
                // is closed.
                _ => {
                    self.split(true);
                    self.pipe = None;
                }
            }
        }
        self.pipe.is_some() // the reads ran out: there may be more
    }

    /// Finds the complete lines (and 64 KiB pieces) after `scan`; at the end
    /// of the stream the rest is a last line. Then keeps the backlog bounded.
    fn split(&mut self, end: bool) {
        loop {
            let rest = &self.buf[self.scan..];
            let window = &rest[..rest.len().min(PIECE)];
            if let Some(at) = memchr::memchr(b'\n', window) {
                self.push(at, true);
            } else if rest.len() > PIECE {
                // A full piece; the byte after it says whether the line ends
                // there (then no empty line follows).
                let newline = rest[PIECE] == b'\n';
                self.push(PIECE, newline);
            } else if end && window.len() == PIECE {
                self.push(PIECE, false);
            } else {
                break;
            }
        }
        if end && self.scan < self.buf.len() {
            self.push(self.buf.len() - self.scan, false);
        }
        // Over the bound: the oldest lines go (never the lent one, whose
        // data the caller holds; the bytes of dropped lines behind it stay
        // in the buffer until it is taken, only not delivered).
        let lent = usize::from(self.lent);
        while self.waiting > BACKLOG && self.lines.len() > lent {
            let line = self.lines.remove(lent).expect("a line past the lent one");
            self.waiting -= line.size();
            self.dropped += line.size() as u64;
        }
        if !self.lent {
            self.head = self.lines.front().map_or(self.scan, |l| l.start);
        }
    }

    fn push(&mut self, len: usize, newline: bool) {
        let cr = newline && len > 0 && self.buf[self.scan + len - 1] == b'\r';
        let line = Line {
            start: self.scan,
            len: len - usize::from(cr),
            newline,
            cr,
        };
        self.lines.push_back(line);
        self.waiting += line.size();
        self.scan += line.size();
    }

    /// The next line to deliver, lent until the next call.
    pub(crate) fn next_line(&mut self) -> Option<&[u8]> {
        if self.lent {
            return None; // (begin_call was not called: one line per call)
        }
        let line = *self.lines.front()?;
        self.lent = true;
        self.waiting -= line.size();
        Some(&self.buf[line.start..line.start + line.len])
    }
}
