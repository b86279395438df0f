//! `LineReader`: bytes in, one item per line out.
//!
//! `feed` frames: it appends the chunk to one buffer, remembers where the
//! unterminated last line starts, and enforces the line limit on that line as
//! it grows (so memory stays bounded whatever the peer sends). `next_message`
//! judges: it takes the next complete line, trims it, validates it and, when
//! asked, classifies it. Each byte is searched for `\n` at most twice (once
//! backwards by `feed`, once forwards by `next_message`) and validated once,
//! whatever the chunking; nothing is ever rescanned from the buffer's start.

use std::collections::VecDeque;
use std::num::NonZeroUsize;

use crate::envelope::Envelope;
use crate::error::Error;
use crate::json::{is_json_text, trimmed_bounds, validate};
use crate::jsonrpc::Classifier;
use crate::message::{Message, RpcKind};
use crate::newline::{first_newline, last_newline};
use crate::span::Spans;

/// The line limit a new reader starts with: 64 MiB.
pub const DEFAULT_MAX_LINE_LEN: usize = 64 << 20;

/// The UTF-8 byte-order mark, skipped when it opens the stream.
const BOM: [u8; 3] = [0xEF, 0xBB, 0xBF];

/// Lines above this size make the buffer give its memory back once consumed.
const BIG_LINE: usize = 1 << 20;

/// How much `read_from` (and the C `mcp_line_reader_read_fd`) reads at once, at most.
pub(crate) const READ_CHUNK: usize = 64 << 10;

/// The least `read_from` offers a source.
const MIN_READ_OFFER: usize = 512;

/// The capacity the buffer shrinks back to (at least) after a big line.
const SMALL_CAPACITY: usize = 64 << 10;

/// Splits a byte stream into lines and tells, for each non-empty line, whether
/// it is a JSON message (and which JSON-RPC kind), or why not.
///
/// One reader per input stream. A `LineReader` is `Send` (it may move to
/// another thread) but not shared: every method but `buffered_len` takes `&mut self`.
///
/// ```
/// use mcp_stdio::{LineReader, Message};
/// let mut reader = LineReader::new();
/// reader.feed(b"{\"id\":1}\n{\"id\"").unwrap();
/// assert_eq!(reader.next_message(), Some(Message::Json { line: b"{\"id\":1}", rpc: None }));
/// assert_eq!(reader.next_message(), None); // `{"id"` waits for the rest of its line
/// assert_eq!(reader.buffered_len(), 5);
/// ```
#[derive(Debug)]
pub struct LineReader {
    /// Bytes received and kept: consumed ones before `pos`, complete lines in
    /// `pos..tail`, the unterminated last line in `tail..`.
    buf: Vec<u8>,
    pos: usize,
    tail: usize,
    /// Items that are not plain `\n`-terminated lines, at buffer offsets, in order.
    events: VecDeque<Event>,
    /// Discarding the rest of a too-long line, through its `\n`.
    dropping: bool,
    /// How much of a stream-opening BOM has been seen, until it is settled.
    bom: Bom,
    /// A line (or a chunk) over `BIG_LINE` went through the buffer: give the
    /// memory back at the next call where less than `BIG_LINE` is held.
    shrink_pending: bool,
    max_line_len: usize,
    skip_invalid: bool,
    jsonrpc: bool,
    /// How many bytes `read_from` offers its source next (see there).
    read_offer: usize,
    /// The JSON-RPC message (or batch) the last `next_message` returned,
    /// for `envelope`; `None` after any other call taking `&mut self`.
    last: Option<Last>,
}

/// A classified message just returned: its kind, where its line starts in
/// the buffer, and where its envelope's members are in that line.
#[derive(Debug, Clone, Copy)]
struct Last {
    kind: RpcKind,
    line_at: usize,
    spans: Spans,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Bom {
    /// The stream's first bytes so far (0 to 2 of them) match the BOM; they are held back.
    Matching(usize),
    Settled,
}

#[derive(Debug, Clone, Copy)]
struct Event {
    /// The buffer offset where the event sits, always at a line boundary.
    at: usize,
    kind: EventKind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum EventKind {
    /// A line grew past the limit here; `len` bytes of it had arrived. Nothing of it is kept.
    TooLong(usize),
    /// The line before this offset ended without `\n` (at `finish`).
    LineEnd,
}

/// How `next_message` judged a line, without borrowing it.
enum Verdict {
    /// JSON, not classified.
    Json,
    /// A JSON-RPC message or batch, and where its envelope's members are.
    JsonRpc(RpcKind, Spans),
    ParseError,
    InvalidJsonRpc,
}

impl Default for LineReader {
    fn default() -> Self {
        Self::new()
    }
}

impl LineReader {
    /// A reader with the default limit (64 MiB a line), reporting invalid lines,
    /// without JSON-RPC classification. Allocates nothing until the first feed.
    pub fn new() -> Self {
        LineReader {
            buf: Vec::new(),
            pos: 0,
            tail: 0,
            events: VecDeque::new(),
            dropping: false,
            bom: Bom::Matching(0),
            shrink_pending: false,
            max_line_len: DEFAULT_MAX_LINE_LEN,
            skip_invalid: false,
            jsonrpc: false,
            read_offer: READ_CHUNK,
            last: None,
        }
    }

    /// Forgets the stream (what is held, a line not ended, a BOM half seen)
    /// and starts a new one, the settings kept: the peer was replaced.
    #[cfg_attr(not(os_io), allow(dead_code))] // a connection's restart
    pub(crate) fn reset(&mut self) {
        *self = LineReader {
            max_line_len: self.max_line_len,
            skip_invalid: self.skip_invalid,
            jsonrpc: self.jsonrpc,
            ..LineReader::new()
        };
    }

    /// Sets the longest line accepted, in bytes before the `\n` (trailing `\r`
    /// and surrounding whitespace included); `None` means no limit. A longer
    /// line yields one [`Message::TooLong`] and is dropped. Applies to lines
    /// not yet complete: the current partial line included, lines already
    /// framed by an earlier `feed` too.
    pub fn set_max_line_len(&mut self, limit: Option<NonZeroUsize>) {
        self.last = None;
        self.max_line_len = limit.map_or(usize::MAX, NonZeroUsize::get);
    }

    /// The current line limit (`None`: no limit).
    pub fn max_line_len(&self) -> Option<NonZeroUsize> {
        if self.max_line_len == usize::MAX {
            None
        } else {
            NonZeroUsize::new(self.max_line_len)
        }
    }

    /// When on, lines that are not JSON (and, with classification on, JSON
    /// that is not JSON-RPC) are dropped silently instead of being reported.
    /// Too-long lines are always reported: their data is lost.
    pub fn set_skip_invalid(&mut self, on: bool) {
        self.last = None;
        self.skip_invalid = on;
    }

    /// Whether invalid lines are skipped.
    pub fn skip_invalid(&self) -> bool {
        self.skip_invalid
    }

    /// When on, each message is classified as JSON-RPC 2.0 ([`RpcKind`]), and
    /// valid JSON that is no JSON-RPC message becomes [`Message::InvalidJsonRpc`].
    pub fn set_jsonrpc(&mut self, on: bool) {
        self.last = None;
        self.jsonrpc = on;
    }

    /// Whether messages are classified as JSON-RPC.
    pub fn jsonrpc(&self) -> bool {
        self.jsonrpc
    }

    /// The envelope of the item the last [`next_message`](Self::next_message)
    /// (or [`try_next_message`](Self::try_next_message)) returned: its `id`,
    /// `method`, `params`, `result` and `error`, borrowing the buffer like
    /// the message's line, found when the line was classified (nothing is
    /// read again). It is what [`envelope`](crate::envelope()) gives for that
    /// line when classification ([`set_jsonrpc`](Self::set_jsonrpc)) was on
    /// and the item a [`Message::Json`]; otherwise, and after any other call
    /// taking `&mut self` (which may move the buffer), it is
    /// [`Envelope::default()`]: no kind, no member.
    ///
    /// ```
    /// use mcp_stdio::{json_string_eq, LineReader, RpcKind};
    /// let mut reader = LineReader::new();
    /// reader.set_jsonrpc(true);
    /// reader.feed(b"{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"method\":\"ping\"}\n").unwrap();
    /// assert!(reader.next_message().is_some());
    /// let e = reader.envelope();
    /// assert_eq!(e.kind, Some(RpcKind::Request));
    /// assert_eq!(e.id, Some(&b"\"a\""[..]));
    /// assert!(json_string_eq(e.method.unwrap(), "ping"));
    /// ```
    pub fn envelope(&self) -> Envelope<'_> {
        match &self.last {
            Some(last) => Envelope::at(
                self.buf.get(last.line_at..).unwrap_or_default(),
                Some(last.kind),
                &last.spans,
            ),
            None => Envelope::default(),
        }
    }

    /// The bytes held that no item has consumed yet: complete lines waiting
    /// for [`next_message`](Self::next_message) and the unterminated last line
    /// (not a skipped BOM, not the dropped part of a too-long line).
    pub fn buffered_len(&self) -> usize {
        let held_bom = match self.bom {
            Bom::Matching(n) => n,
            Bom::Settled => 0,
        };
        self.buf.len() - self.pos + held_bom
    }

    /// A complete line (or a too-long report) waits to be taken: reading
    /// more now would only grow the buffer.
    #[cfg_attr(not(os_io), allow(dead_code))] // the connection's driver
    pub(crate) fn line_waiting(&self) -> bool {
        self.pos < self.tail || !self.events.is_empty()
    }

    /// The memory the reader's buffer holds, in bytes (for monitoring).
    pub fn capacity(&self) -> usize {
        self.buf.capacity()
    }

    /// True when `bytes` starts inside the memory of the reader's buffer:
    /// bytes that feeding may move before reading them (a message's data fed
    /// back). Bytes from elsewhere cannot reach into the buffer: an object
    /// never spans two allocations.
    #[cfg(feature = "capi")]
    #[inline]
    pub(crate) fn holds_bytes_at(&self, bytes: *const u8) -> bool {
        (bytes as usize).wrapping_sub(self.buf.as_ptr() as usize) < self.buf.capacity()
    }

    /// Appends a chunk of the stream. The chunk is copied; any chunking of the
    /// same stream gives the same items. Fails only when memory for the chunk
    /// cannot be allocated, and then changes nothing.
    #[inline]
    pub fn feed(&mut self, chunk: &[u8]) -> Result<(), Error> {
        if self.feed_tiny(chunk) {
            return Ok(());
        }
        self.feed_general(chunk)
    }

    #[inline(never)]
    fn feed_general(&mut self, chunk: &[u8]) -> Result<(), Error> {
        self.append_with(chunk.len(), |buf| buf.extend_from_slice(chunk))
    }

    /// `feed` for a chunk of a few bytes in the common state (nothing to
    /// compact or give back, room in the buffer, no BOM or too-long line
    /// pending, the limit not reached): the cost of a host that reads a
    /// byte at a time. Returns false, having changed nothing, otherwise.
    #[inline]
    fn feed_tiny(&mut self, chunk: &[u8]) -> bool {
        const TINY: usize = 8;
        if chunk.len() > TINY
            || self.pos != 0
            || self.shrink_pending
            || self.dropping
            || self.bom != Bom::Settled
            || self.buf.capacity() - self.buf.len() < chunk.len()
        {
            return false;
        }
        let start = self.buf.len();
        let tail = match last_newline(chunk) {
            Some(k) => start + k + 1,
            None => self.tail,
        };
        if start + chunk.len() - tail > self.max_line_len {
            return false; // the general path reports it
        }
        // No envelope to forget: one is kept only while `pos > 0` (a line
        // was taken), and then this path is not taken.
        debug_assert!(self.last.is_none());
        for &b in chunk {
            self.buf.push(b); // no call, no reallocation: the room is there
        }
        self.tail = tail;
        true
    }

    /// Reads once from `source` (up to 64 KiB, `Interrupted` retried) straight
    /// into the buffer, as [`feed`](Self::feed) would take those bytes.
    /// Returns how many bytes were read: 0 means end of stream (then call
    /// [`finish`](Self::finish)). Errors are the source's, or `OutOfMemory`.
    ///
    /// Safe Rust must zero the bytes it lends to `source`; the size offered
    /// follows what the source actually delivers (from 512 bytes up to
    /// 64 KiB), so that zeroing costs about as much as the data read.
    pub fn read_from(&mut self, source: &mut impl std::io::Read) -> std::io::Result<usize> {
        let offer = self.read_offer;
        let result = self
            .append_with(offer, |buf| {
                let start = buf.len();
                buf.resize(start + offer, 0);
                let result = loop {
                    match source.read(&mut buf[start..]) {
                        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                        other => break other,
                    }
                };
                buf.truncate(start + result.as_ref().map_or(0, |&n| n.min(offer)));
                result
            })
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::OutOfMemory, e))?;
        if let Ok(n) = result {
            self.read_offer = if n == offer {
                (offer * 2).min(READ_CHUNK)
            } else if n < offer / 4 {
                (offer / 2).max(MIN_READ_OFFER)
            } else {
                offer
            };
        }
        result
    }

    /// Makes room for `max` more bytes, lets `fill` append at most that many
    /// to the buffer, and frames what it appended. The FFI layer reads from a
    /// file descriptor this way, with no copy. Fails before calling `fill`,
    /// changing nothing, when the room cannot be allocated.
    pub(crate) fn append_with<T>(
        &mut self,
        max: usize,
        fill: impl FnOnce(&mut Vec<u8>) -> T,
    ) -> Result<T, Error> {
        self.last = None;
        self.reclaim();
        // Everything framing may need, so that it cannot fail half way.
        self.events.try_reserve(1).map_err(|_| Error::OutOfMemory)?;
        self.reserve(max.saturating_add(BOM.len()))?;
        let start = self.buf.len();
        let out = fill(&mut self.buf);
        if self.buf.len() > start {
            self.frame_appended(start);
        }
        Ok(out)
    }

    /// Makes room for `extra` more bytes, growing the buffer by doubling, but
    /// never past `BIG_LINE` for contents that fit under it: memory given
    /// back after a big line stays given back until the data needs more.
    fn reserve(&mut self, extra: usize) -> Result<(), Error> {
        let needed = self.buf.len().saturating_add(extra);
        if needed <= self.buf.capacity() {
            return Ok(());
        }
        let grown = if needed < BIG_LINE && 2 * self.buf.capacity() >= BIG_LINE {
            self.buf.try_reserve_exact(BIG_LINE - 1 - self.buf.len())
        } else {
            self.buf.try_reserve(extra)
        };
        grown.map_err(|_| Error::OutOfMemory)
    }

    /// End of stream: a buffered unterminated line becomes a complete line,
    /// and the rest of a too-long line being dropped is over. The reader
    /// stays usable; what is fed next starts a new line.
    pub fn finish(&mut self) -> Result<(), Error> {
        self.last = None;
        self.events.try_reserve(2).map_err(|_| Error::OutOfMemory)?;
        match self.bom {
            // What looked like the start of a BOM is data.
            Bom::Matching(seen) if seen > 0 => {
                self.buf.try_reserve(seen).map_err(|_| Error::OutOfMemory)?;
                self.bom = Bom::Settled;
                let start = self.buf.len();
                self.buf.extend_from_slice(&BOM[..seen]);
                self.frame_appended(start);
            }
            // Nothing received yet: the first three bytes ever received may
            // still be a BOM, after this finish too.
            _ => {}
        }
        if self.dropping {
            self.dropping = false;
        } else if self.tail < self.buf.len() {
            self.events.push_back(Event {
                at: self.buf.len(),
                kind: EventKind::LineEnd,
            });
            self.tail = self.buf.len();
        }
        Ok(())
    }

    /// The next item, in stream order, or `None` until more data (or `finish`)
    /// completes a line. A message's bytes are the line as received, trimmed.
    ///
    /// Judging a line allocates only for a line nested more than 64 levels
    /// deep (one bit a level). Should that allocation fail, this aborts the
    /// process, as `Vec::push` does; [`try_next_message`](Self::try_next_message)
    /// reports it instead.
    #[inline]
    pub fn next_message(&mut self) -> Option<Message<'_>> {
        match self.try_next_message() {
            Ok(item) => item,
            Err(_) => std::alloc::handle_alloc_error(std::alloc::Layout::new::<u64>()),
        }
    }

    /// [`next_message`](Self::next_message), except that when memory for
    /// judging the next line cannot be allocated it returns
    /// `Err(Error::OutOfMemory)` and leaves that line in place: a later call
    /// tries it again.
    #[inline]
    pub fn try_next_message(&mut self) -> Result<Option<Message<'_>>, Error> {
        self.last = None;
        if self.pos == self.tail && self.events.is_empty() && !self.shrink_pending {
            return Ok(None); // no complete line: the common case with small chunks
        }
        self.take_next()
    }

    /// [`try_next_message`](Self::try_next_message) and the
    /// [`envelope`](Self::envelope) of the item it returns, borrowed
    /// together (the transport routes on both while the line is borrowed).
    #[inline] // one caller, the transport's event loop: ~30 instructions a message
    pub(crate) fn try_next_message_and_envelope(
        &mut self,
    ) -> Result<Option<(Message<'_>, Envelope<'_>)>, Error> {
        // Where the item's line lies in the buffer, so that it can be
        // borrowed again next to the envelope once the `&mut` borrow ends.
        let (at, item) = match self.try_next_message()? {
            None => return Ok(None),
            Some(item) => (
                item.data().map(|line| (line.as_ptr() as usize, line.len())),
                match item {
                    Message::Json { rpc, .. } => Message::Json { line: &[], rpc },
                    Message::ParseError { .. } => Message::ParseError { line: &[] },
                    Message::InvalidJsonRpc { .. } => Message::InvalidJsonRpc { line: &[] },
                    Message::TooLong { len } => Message::TooLong { len },
                },
            ),
        };
        let line = match at {
            Some((address, len)) => {
                let from = address - self.buf.as_ptr() as usize;
                &self.buf[from..from + len]
            }
            None => &[][..],
        };
        let item = match item {
            Message::Json { rpc, .. } => Message::Json { line, rpc },
            Message::ParseError { .. } => Message::ParseError { line },
            Message::InvalidJsonRpc { .. } => Message::InvalidJsonRpc { line },
            too_long => too_long,
        };
        Ok(Some((item, self.envelope())))
    }

    /// `try_next_message` when there may be something to do.
    #[inline(never)]
    fn take_next(&mut self) -> Result<Option<Message<'_>>, Error> {
        if self.shrink_pending {
            // Compacting waits for the next append, which needs the room;
            // memory held by a big line is given back as soon as possible.
            self.reclaim_slow();
        }
        loop {
            let (start, end, ended_at_finish) = match self.next_line() {
                Framed::Line(start, end, ended_at_finish) => (start, end, ended_at_finish),
                Framed::TooLong(len) => return Ok(Some(Message::TooLong { len })),
                Framed::Nothing => return Ok(None),
            };
            let raw_len = end - start;
            if raw_len > BIG_LINE {
                self.shrink_pending = true;
            }
            if raw_len > self.max_line_len {
                // A line that arrived whole in one chunk (or before the limit was lowered).
                return Ok(Some(Message::TooLong { len: raw_len }));
            }
            let (from, to) = trimmed_bounds(&self.buf[start..end]);
            if from == to {
                self.skip_empty_lines();
                continue;
            }
            let (from, to) = (start + from, start + to);
            match self.judge(&self.buf[from..to]) {
                Ok(Some(verdict)) => {
                    if let Verdict::JsonRpc(kind, spans) = verdict {
                        self.last = Some(Last {
                            kind,
                            line_at: from,
                            spans,
                        });
                    }
                    let line = &self.buf[from..to];
                    return Ok(Some(match verdict {
                        Verdict::Json => Message::Json { line, rpc: None },
                        Verdict::JsonRpc(kind, _) => Message::Json {
                            line,
                            rpc: Some(kind),
                        },
                        Verdict::ParseError => Message::ParseError { line },
                        Verdict::InvalidJsonRpc => Message::InvalidJsonRpc { line },
                    }));
                }
                Ok(None) => {}
                Err(e) => {
                    // Put the line back, as it was framed.
                    self.pos = start;
                    if ended_at_finish {
                        self.events.push_front(Event {
                            at: end,
                            kind: EventKind::LineEnd,
                        }); // into the room its pop left: no allocation
                    }
                    return Err(e);
                }
            }
        }
    }

    /// After a line that gives no item: consumes at once the empty lines
    /// right behind it (a peer's keep-alive newlines, `yes ''`), each of
    /// which would otherwise be framed and dropped on its own: a flood of
    /// them costs a byte compare per line. (Empty, they can be neither too
    /// long nor anything but dropped.)
    fn skip_empty_lines(&mut self) {
        let limit = self
            .events
            .front()
            .map_or(self.tail, |e| e.at.min(self.tail));
        let run = self.buf[self.pos..limit]
            .iter()
            .take_while(|&&b| b == b'\n')
            .count();
        self.pos += run;
    }

    /// Consumes what comes next in the buffer: a complete line (its bounds,
    /// without the `\n`, and whether `finish` ended it), a too-long report,
    /// or nothing when no line is complete.
    #[inline]
    fn next_line(&mut self) -> Framed {
        let limit = match self.events.front() {
            Some(&Event {
                at,
                kind: EventKind::TooLong(len),
            }) if at == self.pos => {
                self.events.pop_front();
                return Framed::TooLong(len);
            }
            Some(event) => event.at,
            None => self.tail,
        };
        let start = self.pos;
        if let Some(k) = first_newline(&self.buf[start..limit]) {
            self.pos = start + k + 1;
            return Framed::Line(start, start + k, false);
        }
        match self.events.front() {
            Some(&Event {
                at,
                kind: EventKind::LineEnd,
            }) if at == limit => {
                self.events.pop_front();
                self.pos = limit;
                Framed::Line(start, limit, true)
            }
            _ => Framed::Nothing,
        }
    }

    /// Is this trimmed, non-empty line a message? `None`: drop it silently.
    #[inline]
    fn judge(&self, line: &[u8]) -> Result<Option<Verdict>, Error> {
        let verdict = if !self.jsonrpc {
            if is_json_text(line)? {
                Verdict::Json
            } else {
                Verdict::ParseError
            }
        } else {
            // One pass: the classifier watches the validator.
            let mut rpc = Classifier::new(line);
            if !validate(line, &mut rpc)? {
                Verdict::ParseError
            } else {
                match rpc.envelope() {
                    (Some(kind), spans) => Verdict::JsonRpc(kind, spans),
                    (None, _) => Verdict::InvalidJsonRpc,
                }
            }
        };
        Ok(match verdict {
            Verdict::Json | Verdict::JsonRpc(..) => Some(verdict),
            _ if self.skip_invalid => None,
            _ => Some(verdict),
        })
    }

    /// Frames the bytes just appended at `buf[start..]`: settles a
    /// stream-opening BOM, drops the rest of a too-long line through its
    /// `\n`, and enforces the line limit on the unterminated last line.
    /// `append_with` reserved room for the BOM and one event: nothing here
    /// allocates.
    fn frame_appended(&mut self, start: usize) {
        if let Bom::Matching(seen) = self.bom {
            let new = &self.buf[start..];
            let wanted = (BOM.len() - seen).min(new.len());
            if new[..wanted] == BOM[seen..seen + wanted] {
                self.buf.drain(start..start + wanted);
                self.bom = if seen + wanted == BOM.len() {
                    Bom::Settled
                } else {
                    Bom::Matching(seen + wanted)
                };
            } else {
                // Not a BOM after all: what was held back is data.
                self.buf.splice(start..start, BOM[..seen].iter().copied());
                self.bom = Bom::Settled;
            }
        }
        if self.buf.len() - start > BIG_LINE {
            // A huge chunk (of any lines, or of the rest of a too-long line
            // dropped below): give its memory back once it is consumed.
            self.shrink_pending = true;
        }
        if self.dropping {
            match first_newline(&self.buf[start..]) {
                None => {
                    self.buf.truncate(start);
                    return;
                }
                Some(k) => {
                    self.buf.drain(start..=start + k);
                    self.dropping = false;
                }
            }
        }
        let partial_start = match last_newline(&self.buf[start..]) {
            Some(k) => start + k + 1,
            None => self.tail,
        };
        let partial_len = self.buf.len() - partial_start;
        if partial_len > self.max_line_len {
            // The unterminated line is already too long: report it, keep none of it.
            if partial_len > BIG_LINE {
                self.shrink_pending = true;
            }
            self.buf.truncate(partial_start);
            self.events.push_back(Event {
                at: partial_start,
                kind: EventKind::TooLong(partial_len),
            });
            self.dropping = true;
        }
        self.tail = partial_start;
    }

    /// At the start of a call (when no item borrows the buffer any more):
    /// gives memory back after a big line, and moves the unconsumed bytes to
    /// the front when that costs no more than the bytes consumed (so the
    /// total work stays linear in the bytes fed).
    #[inline]
    fn reclaim(&mut self) {
        if self.pos == 0 && !self.shrink_pending {
            return; // nothing consumed, nothing to give back: the common case
        }
        self.reclaim_slow();
    }

    fn reclaim_slow(&mut self) {
        let held = self.buf.len() - self.pos;
        if self.shrink_pending && held < BIG_LINE {
            self.shrink_pending = false;
            if self.buf.capacity() > BIG_LINE {
                let mut smaller = Vec::new();
                if smaller.try_reserve_exact(held.max(SMALL_CAPACITY)).is_ok() {
                    smaller.extend_from_slice(&self.buf[self.pos..]);
                    self.buf = smaller;
                    self.shift(self.pos);
                    return;
                }
            }
        }
        if self.pos > 0 && held <= self.pos {
            self.buf.copy_within(self.pos.., 0);
            self.buf.truncate(held);
            self.shift(self.pos);
        }
    }

    /// The buffer's first `by` bytes were removed: move every offset back.
    fn shift(&mut self, by: usize) {
        self.pos -= by;
        self.tail -= by;
        for event in &mut self.events {
            event.at -= by;
        }
    }
}

/// What comes next in the buffer.
enum Framed {
    /// Start, end, and whether `finish` ended the line (rather than `\n`).
    Line(usize, usize, bool),
    TooLong(usize),
    Nothing,
}
