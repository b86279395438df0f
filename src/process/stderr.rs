//! A spawned server's stderr as lines: always drained (a server blocked on a
//! full stderr pipe would stop answering), split into lines of at most
//! 64 KiB, with at most 1 MiB waiting undelivered; beyond it the oldest
//! lines are dropped and their bytes counted. A `\r\n` line end (how
//! Windows programs write) is taken off whole, as `\n` is. The last lines
//! are also kept apart (`Tail`: at most 20 lines and 4 KiB), delivered or
//! not, so that a host can say why a server died after it is gone.

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
/// The most lines and bytes the tail keeps.
const TAIL_LINES: usize = 20;
const TAIL_BYTES: usize = 4 << 10;

/// The last lines of the stream (pieces of a line longer than 64 KiB count
/// as lines), oldest first: at most `TAIL_LINES`, and at most `TAIL_BYTES`
/// in all (a single longer line keeps its last `TAIL_BYTES`).
#[derive(Debug, Default)]
pub(crate) struct Tail {
    lines: VecDeque<Vec<u8>>,
    bytes: usize,
}

impl Tail {
    fn push(&mut self, line: &[u8]) {
        let line = &line[line.len().saturating_sub(TAIL_BYTES)..];
        while !self.lines.is_empty()
            && (self.lines.len() >= TAIL_LINES || self.bytes + line.len() > TAIL_BYTES)
        {
            let old = self.lines.pop_front().expect("not empty");
            self.bytes -= old.len();
        }
        // A failed allocation leaves the line out: the tail is a courtesy.
        let mut kept = Vec::new();
        if kept.try_reserve_exact(line.len()).is_ok() {
            kept.extend_from_slice(line);
            self.bytes += kept.len();
            self.lines.push_back(kept);
        }
    }

    /// The lines kept, oldest first, without their newlines.
    pub(crate) fn lines(&self) -> impl Iterator<Item = &[u8]> + '_ {
        self.lines.iter().map(Vec::as_slice)
    }
}

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
    /// The last lines, delivered or not.
    tail: Tail,
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
            tail: Tail::default(),
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
        self.tail.push(&self.buf[line.start..line.start + line.len]);
        self.waiting += line.size();
        self.scan += line.size();
    }

    /// The last lines of the stream so far (see [`Tail`]).
    pub(crate) fn tail(&self) -> &Tail {
        &self.tail
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tail_keeps_the_last_twenty_lines() {
        let mut tail = Tail::default();
        for i in 0..30 {
            tail.push(format!("line {i}").as_bytes());
        }
        let kept: Vec<&[u8]> = tail.lines().collect();
        assert_eq!(kept.len(), TAIL_LINES);
        assert_eq!(kept[0], b"line 10");
        assert_eq!(kept[19], b"line 29");
    }

    #[test]
    fn the_tail_keeps_at_most_four_kib() {
        let mut tail = Tail::default();
        for i in 0..10u8 {
            tail.push(&[b'a' + i; 1000]);
        }
        let kept: Vec<&[u8]> = tail.lines().collect();
        assert_eq!(kept.len(), 4, "4 lines of 1000 bytes fit in 4096");
        assert_eq!(kept[0][0], b'g');
        assert_eq!(kept[3][0], b'j');
        assert!(tail.bytes <= TAIL_BYTES);
        // One longer line keeps its end, alone.
        let mut long = vec![b'x'; 10_000];
        long.extend_from_slice(b"the end");
        tail.push(&long);
        let kept: Vec<&[u8]> = tail.lines().collect();
        assert_eq!(kept.len(), 1);
        assert_eq!(kept[0].len(), TAIL_BYTES);
        assert!(kept[0].ends_with(b"the end"));
    }
}
