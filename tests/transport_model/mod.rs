//! An independent model of `Transport`'s event rules, and a runner that
//! drives a real `Transport` and the model with the same program of
//! operations, checking after every one that they agree. One file for both
//! suites: `tests/transport_properties.rs` includes it as a module, the
//! `transport_model` fuzz target (its own cargo workspace in `fuzz/`) with
//! `#[path]`.
//!
//! The rules modelled are docs/contract.md's §Transport (and the Rust docs
//! in `src/transport/mod.rs`, `src/transport/event.rs`), on top of the
//! reader's (§Reader: lines, §Reader: trimming, §Reader: BOM, §Reader: line
//! limit, §Reader: too-long lines, §Reader: finish):
//!
//! - lines come first, in stream order; a Response or Error whose id token is
//!   exactly the decimal integer of a pending request of ours answers it
//!   (`Response`, once; the request is forgotten); every other message is a
//!   `Message` (batches too: nothing inside one matches) (§Transport:
//!   matching, §Transport: order of events);
//! - then requests whose deadline is `<= now` time out, earliest deadline
//!   first, ties by id; each queues a `notifications/cancelled` (whatever the
//!   queue's bound) unless it was an `initialize` or a write failed
//!   (§Transport: deadlines; the last exception is the Rust docs' only);
//! - then, when closing has come to its end (the peer's end, a failed write,
//!   or the close grace over), lines are no longer given, pending requests
//!   fail in ascending order, then `Closed`, then nothing, forever
//!   (§Transport: order of events, §Transport: closing);
//! - sends after `close`, `receive_end` or `write_failed` return `Closed`; a
//!   send that would take a non-empty queue past its bound is refused with
//!   `WouldBlock` (cancellations bypass the bound); a refused send queues
//!   nothing and a refused request uses no id (§Transport: sending,
//!   §Transport: queue bound, §Transport: closing).
//!
//! The model uses no library code but `mcp_stdio::envelope`, for a complete
//! line's JSON-RPC kind and raw id token (classification has its own model,
//! the `jsonrpc_model` fuzz target); the match itself (token == our decimal
//! integer) is written here. The lines the transport writes are written here
//! too, byte for byte, from tables giving each input's expected encoding.

#![allow(dead_code)]

use std::collections::{BTreeMap, VecDeque};
use std::fmt;
use std::num::NonZeroUsize;
use std::ops::RangeInclusive;
use std::time::{Duration, Instant};

use mcp_stdio::{envelope, Error, Event, InvalidKind, RpcKind, Transport};

// ---------------------------------------------------------------------------
// Events, owned.

/// An event, owned: what runs compare. An `Invalid`'s length is checked by
/// the runner but not kept: a too-long line's depends on the chunking
/// (docs/contract.md §Reader: too-long lines). Shown with lines as text.
#[derive(Clone, PartialEq, Eq)]
pub enum Ev {
    Message {
        line: Vec<u8>,
        kind: Option<RpcKind>,
        id: Option<Vec<u8>>,
    },
    Response {
        id: i64,
        line: Vec<u8>,
        kind: Option<RpcKind>,
    },
    TimedOut(i64),
    Failed(i64),
    Invalid {
        kind: InvalidKind,
        line: Option<Vec<u8>>,
    },
    Closed,
}

/// Bytes as text, escaped where not printable ASCII.
struct Text<'a>(&'a [u8]);

impl fmt::Debug for Text<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "\"{}\"", self.0.escape_ascii())
    }
}

impl fmt::Debug for Ev {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Ev::Message { line, kind, id } => f
                .debug_struct("Message")
                .field("line", &Text(line))
                .field("kind", kind)
                .field("id", &id.as_deref().map(Text))
                .finish(),
            Ev::Response { id, line, kind } => f
                .debug_struct("Response")
                .field("id", id)
                .field("line", &Text(line))
                .field("kind", kind)
                .finish(),
            Ev::TimedOut(id) => write!(f, "TimedOut({id})"),
            Ev::Failed(id) => write!(f, "Failed({id})"),
            Ev::Invalid { kind, line } => f
                .debug_struct("Invalid")
                .field("kind", kind)
                .field("line", &line.as_deref().map(Text))
                .finish(),
            Ev::Closed => f.write_str("Closed"),
        }
    }
}

/// `e` owned, and the length an `Invalid` reported.
pub fn own(e: &Event<'_>) -> (Ev, Option<usize>) {
    match *e {
        Event::Message { line, envelope } => (
            Ev::Message {
                line: line.to_vec(),
                kind: envelope.kind,
                id: envelope.id.map(<[u8]>::to_vec),
            },
            None,
        ),
        Event::Response { id, line, envelope } => (
            Ev::Response {
                id,
                line: line.to_vec(),
                kind: envelope.kind,
            },
            None,
        ),
        Event::RequestTimedOut { id } => (Ev::TimedOut(id), None),
        Event::RequestFailed { id, .. } => (Ev::Failed(id), None),
        Event::Invalid { kind, line, len } => (
            Ev::Invalid {
                kind,
                line: line.map(<[u8]>::to_vec),
            },
            Some(len),
        ),
        Event::Closed => (Ev::Closed, None),
        _ => panic!("an event this model does not know: {e:?}"),
    }
}

// ---------------------------------------------------------------------------
// What we send: the inputs, and the bytes the transport must write for them.

/// An input, and what the transport writes for it (or its error).
pub type Written = (&'static [u8], Result<&'static [u8], Error>);

/// Method names and their JSON string tokens.
pub const METHODS: &[(&str, &[u8])] = &[
    ("tools/call", b"\"tools/call\""),
    ("initialize", b"\"initialize\""),
    ("ping", b"\"ping\""),
    (
        "a\"b\\c\n\u{1}\u{2028}\u{e9}",
        b"\"a\\\"b\\\\c\\n\\u0001\\u2028\xc3\xa9\"",
    ),
];

/// `params` given, and what is written: no params, the compact value, or
/// the error (not one JSON text; not an object or array).
#[allow(clippy::type_complexity)]
pub const PARAMS: &[(Option<&[u8]>, Result<Option<&[u8]>, Error>)] = &[
    (None, Ok(None)),
    (Some(b"{}"), Ok(Some(b"{}"))),
    (
        Some(b" [1, {\"a\" : \"b c\"}]\n"),
        Ok(Some(b"[1,{\"a\":\"b c\"}]")),
    ),
    (
        Some(b"{\"t\":\"\\u00e9\xc3\xa9\"}"),
        Ok(Some(b"{\"t\":\"\\u00e9\xc3\xa9\"}")),
    ),
    (Some(b"{"), Err(Error::InvalidJson)),
    (Some(b"1"), Err(Error::InvalidParams)),
    (Some(b"\"s\""), Err(Error::InvalidParams)),
];

/// Id tokens given to `respond`/`respond_error`, and what is written.
pub const ID_TOKENS: &[Written] = &[
    (b"1", Ok(b"1")),
    (b"\"abc\"", Ok(b"\"abc\"")),
    (b" -1.5e3 ", Ok(b"-1.5e3")),
    (b"true", Err(Error::InvalidArgument)),
    (b"", Err(Error::InvalidArgument)),
    (b"\"open", Err(Error::InvalidArgument)),
    (b"null", Err(Error::InvalidArgument)),
];

/// Results given to `respond`, and what is written.
pub const RESULTS: &[Written] = &[
    (b"{}", Ok(b"{}")),
    (b"null", Ok(b"null")),
    (b" [1, 2] ", Ok(b"[1,2]")),
    (b"{", Err(Error::InvalidJson)),
    (b"", Err(Error::InvalidJson)),
];

/// Texts (error messages, cancel reasons) and their JSON string tokens.
pub const TEXTS: &[(&str, &[u8])] = &[
    ("Parse error", b"\"Parse error\""),
    ("", b"\"\""),
    ("q\"\n", b"\"q\\\"\\n\""),
];

/// JSON given to `send`, and what is written (before the newline).
pub const SENDS: &[Written] = &[
    (b"[1, 2]", Ok(b"[1,2]")),
    (
        b"{\"jsonrpc\":\"2.0\",\"method\":\"n\"}\r\n",
        Ok(b"{\"jsonrpc\":\"2.0\",\"method\":\"n\"}"),
    ),
    (b"\"x\"", Ok(b"\"x\"")),
    (b"{", Err(Error::InvalidJson)),
    (b"1 2", Err(Error::InvalidJson)),
];

fn pick<T>(table: &[T], i: usize) -> &T {
    &table[i % table.len()]
}

// ---------------------------------------------------------------------------
// What the peer sends.

/// How many kinds of [`peer_line`] there are.
pub const PEER_LINES: usize = 26;

/// A piece of peer stream, kind `kind % PEER_LINES`, about id `id` (a
/// decimal integer, e.g. `"3"`, or any token text): answers to our requests
/// and lookalikes that are not (`1.0`, `"1"`, `01` which is no JSON, `-1`,
/// `1e0`, duplicate ids, batches), requests and notifications, junk, CRLF,
/// blank lines, a BOM, non-ASCII text, a long line, an unterminated line.
pub fn peer_line(kind: usize, id: &str) -> Vec<u8> {
    let s = match kind % PEER_LINES {
        0 => format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{{}}}}\n"),
        1 => format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"error\":{{\"code\":-1,\"message\":\"no\"}}}}\r\n"
        ),
        2 => format!("{{\"result\":[1, 2],\"id\" : {id} ,\"jsonrpc\":\"2.0\"}}\n"),
        3 => format!("{{\"jsonrpc\":\"2.0\",\"id\":{id}.0,\"result\":1}}\n"),
        4 => format!("{{\"jsonrpc\":\"2.0\",\"id\":\"{id}\",\"result\":1}}\n"),
        5 => format!("{{\"jsonrpc\":\"2.0\",\"id\":0{id},\"result\":1}}\n"),
        6 => format!("{{\"jsonrpc\":\"2.0\",\"id\":-{id},\"result\":1}}\n"),
        7 => format!("{{\"jsonrpc\":\"2.0\",\"id\":{id}e0,\"result\":1}}\n"),
        8 => format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"ping\"}}\n"),
        9 => format!("[{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{{}}}}]\n"),
        10 => format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"id\":\"x\",\"result\":{{}}}}\n"),
        11 => format!("{{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"id\":{id},\"result\":{{}}}}\n"),
        12 => "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"t\":\"\u{e9}\u{1f600}\"}}\n".to_owned(),
        13 => "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"x\"}}\n".to_owned(),
        14 => "{\"jsonrpc\":\"2.0\",\"error\":{\"code\":1,\"message\":\"x\"}}\n".to_owned(),
        15 => "junk\n".to_owned(),
        16 => "\n".to_owned(),
        17 => "  \t\r\n".to_owned(),
        18 => "\u{feff}".to_owned(),
        19 => "{\"a\":1}\n".to_owned(),
        20 => "\"\u{e9}\u{2028}\"\r\n".to_owned(),
        21 => format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":\"a line long enough to pass a small limit\"}}\n"
        ),
        22 => format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{{}}}}"),
        23 => format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{{}},\"error\":{{\"code\":1,\"message\":\"x\"}}}}\n"),
        24 => "\r".to_owned(),
        _ => format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":null}}\n"),
    };
    let mut bytes = s.into_bytes();
    if kind % PEER_LINES == 15 && id.len() % 2 == 1 {
        bytes.insert(0, 0xFF); // invalid UTF-8 too
    }
    bytes
}

// ---------------------------------------------------------------------------
// The program.

/// One operation on the transport (and the model). Indices pick from the
/// tables above (modulo their length).
#[derive(Debug, Clone)]
pub enum Op {
    Receive(Vec<u8>),
    ReceiveEnd,
    Request {
        method: usize,
        params: usize,
        timeout: Option<Duration>,
    },
    Notify {
        method: usize,
        params: usize,
    },
    Respond {
        id: usize,
        result: usize,
    },
    RespondError {
        id: Option<usize>,
        code: i64,
        message: usize,
    },
    Send(usize),
    Cancel {
        id: i64,
        reason: Option<usize>,
    },
    SetMaxQueued(usize),
    /// Write (consume) this many bytes of the output.
    Consume(usize),
    TakeOutput,
    /// Move the fake clock forward.
    Advance(Duration),
    Close(Duration),
    WriteFailed,
    /// One `next_event` at the clock's time.
    NextEvent,
    /// `next_event` until `None`.
    Drain,
}

/// What a run saw.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Outcome {
    /// Every event, in order.
    pub events: Vec<Ev>,
    /// Every byte the transport queued, in order (written or still queued
    /// at the end).
    pub written: Vec<u8>,
    /// The ids `request` returned.
    pub ids: Vec<i64>,
    /// The ids `cancel` accepted.
    pub cancelled: Vec<i64>,
}

impl fmt::Debug for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Outcome")
            .field("events", &self.events)
            .field("written", &Text(&self.written))
            .field("ids", &self.ids)
            .field("cancelled", &self.cancelled)
            .finish()
    }
}

// ---------------------------------------------------------------------------
// The model.

const BOM: &[u8] = b"\xEF\xBB\xBF";

fn trim(line: &[u8]) -> &[u8] {
    let ws = |b: &u8| matches!(b, b' ' | b'\t' | b'\r' | b'\n');
    let start = line.iter().position(|b| !ws(b)).unwrap_or(line.len());
    let end = line.iter().rposition(|b| !ws(b)).map_or(start, |i| i + 1);
    &line[start..end]
}

/// A line received and not yet given.
#[derive(Debug)]
enum Line {
    /// Complete, trimmed, not empty.
    Text(Vec<u8>),
    /// Over the limit; `arrived`: its length, once it has ended (`None`:
    /// still arriving, the model's `line_len` so far).
    TooLong { arrived: Option<usize> },
}

#[derive(Debug, Clone, Copy)]
struct Pending {
    deadline: Option<Instant>,
    initialize: bool,
}

/// The model. Fields are the state the docs describe, nothing more.
#[derive(Debug)]
pub struct Model {
    limit: Option<usize>,
    /// `Some(held)` while the stream's first bytes may still be a BOM.
    bom: Option<Vec<u8>>,
    /// The unterminated line (when not over the limit) and its raw length.
    line: Vec<u8>,
    line_len: usize,
    /// The unterminated line is over the limit: its bytes are dropped.
    dropping: bool,
    lines: VecDeque<Line>,
    next_id: i64,
    pending: BTreeMap<i64, Pending>,
    output: Vec<u8>,
    max_queued: usize,
    close_called: bool,
    close_at: Option<Instant>,
    peer_ended: bool,
    write_failed: bool,
    /// Closing has come to its end: pending requests are failing.
    ending: bool,
    done: bool,
}

impl Model {
    pub fn new(limit: Option<usize>) -> Self {
        Model {
            limit,
            bom: Some(Vec::new()),
            line: Vec::new(),
            line_len: 0,
            dropping: false,
            lines: VecDeque::new(),
            next_id: 1,
            pending: BTreeMap::new(),
            output: Vec::new(),
            max_queued: 64 << 20,
            close_called: false,
            close_at: None,
            peer_ended: false,
            write_failed: false,
            ending: false,
            done: false,
        }
    }

    // ---- Reading (docs/contract.md §Reader) ----

    fn feed(&mut self, bytes: &[u8]) {
        for &b in bytes {
            match &mut self.bom {
                Some(held) => {
                    held.push(b);
                    if held == BOM {
                        self.bom = None;
                    } else if !BOM.starts_with(held) {
                        for b in self.bom.take().unwrap() {
                            self.byte(b);
                        }
                    }
                }
                None => self.byte(b),
            }
        }
    }

    fn byte(&mut self, b: u8) {
        if b == b'\n' {
            self.end_line();
            return;
        }
        self.line_len += 1;
        if self.dropping {
            return;
        }
        self.line.push(b);
        if self.limit.is_some_and(|limit| self.line_len > limit) {
            self.dropping = true;
            self.line.clear();
            self.lines.push_back(Line::TooLong { arrived: None });
        }
    }

    fn end_line(&mut self) {
        if self.dropping {
            if let Some(Line::TooLong { arrived: a @ None }) = self.lines.back_mut() {
                *a = Some(self.line_len);
            }
        } else {
            let line = trim(&self.line);
            if !line.is_empty() {
                self.lines.push_back(Line::Text(line.to_vec()));
            }
        }
        self.line.clear();
        self.line_len = 0;
        self.dropping = false;
    }

    fn finish(&mut self) {
        // Bytes held as a possible BOM become data; a finish before any
        // byte changes nothing (§Reader: BOM, §Reader: finish).
        if self.bom.as_ref().is_some_and(|held| !held.is_empty()) {
            for b in self.bom.take().unwrap() {
                self.byte(b);
            }
        }
        self.end_line();
    }

    // ---- Sending ----

    fn open(&self) -> Result<(), Error> {
        if self.close_called || self.peer_ended || self.write_failed || self.done {
            Err(Error::Closed)
        } else {
            Ok(())
        }
    }

    /// Queues `line` (newline included) under the bound.
    fn enqueue(&mut self, line: Vec<u8>) -> Result<(), Error> {
        let queued = self.output.len();
        if queued > 0 && queued + line.len() > self.max_queued {
            return Err(Error::WouldBlock);
        }
        self.output.extend_from_slice(&line);
        Ok(())
    }

    fn cancellation(id: i64, reason: Option<&[u8]>) -> Vec<u8> {
        let mut line = format!(
            "{{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{{\"requestId\":{id}"
        )
        .into_bytes();
        if let Some(reason) = reason {
            line.extend_from_slice(b",\"reason\":");
            line.extend_from_slice(reason);
        }
        line.extend_from_slice(b"}}\n");
        line
    }

    fn method_and_params(line: &mut Vec<u8>, method: usize, params: usize) -> Result<(), Error> {
        let (_, token) = pick(METHODS, method);
        let (_, written) = pick(PARAMS, params);
        line.extend_from_slice(b"\"method\":");
        line.extend_from_slice(token);
        if let Some(p) = written.clone()? {
            line.extend_from_slice(b",\"params\":");
            line.extend_from_slice(p);
        }
        line.extend_from_slice(b"}\n");
        Ok(())
    }

    pub fn request(
        &mut self,
        method: usize,
        params: usize,
        timeout: Option<Duration>,
        now: Instant,
    ) -> Result<i64, Error> {
        self.open()?;
        let id = self.next_id;
        let mut line = format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},").into_bytes();
        Self::method_and_params(&mut line, method, params)?;
        self.enqueue(line)?;
        self.next_id += 1;
        self.pending.insert(
            id,
            Pending {
                deadline: timeout.and_then(|t| now.checked_add(t)),
                initialize: pick(METHODS, method).0 == "initialize",
            },
        );
        Ok(id)
    }

    pub fn notify(&mut self, method: usize, params: usize) -> Result<(), Error> {
        self.open()?;
        let mut line = b"{\"jsonrpc\":\"2.0\",".to_vec();
        Self::method_and_params(&mut line, method, params)?;
        self.enqueue(line)
    }

    pub fn respond(&mut self, id: usize, result: usize) -> Result<(), Error> {
        self.open()?;
        let id = pick(ID_TOKENS, id).1.clone()?;
        let result = pick(RESULTS, result).1.clone()?;
        let mut line = b"{\"jsonrpc\":\"2.0\",\"id\":".to_vec();
        line.extend_from_slice(id);
        line.extend_from_slice(b",\"result\":");
        line.extend_from_slice(result);
        line.extend_from_slice(b"}\n");
        self.enqueue(line)
    }

    pub fn respond_error(
        &mut self,
        id: Option<usize>,
        code: i64,
        message: usize,
    ) -> Result<(), Error> {
        self.open()?;
        let mut line = b"{\"jsonrpc\":\"2.0\",".to_vec();
        if let Some(id) = id {
            line.extend_from_slice(b"\"id\":");
            line.extend_from_slice(pick(ID_TOKENS, id).1.clone()?);
            line.push(b',');
        }
        line.extend_from_slice(format!("\"error\":{{\"code\":{code},\"message\":").as_bytes());
        line.extend_from_slice(pick(TEXTS, message).1);
        line.extend_from_slice(b"}}\n");
        self.enqueue(line)
    }

    pub fn send(&mut self, json: usize) -> Result<(), Error> {
        self.open()?;
        let mut line = pick(SENDS, json).1.clone()?.to_vec();
        line.push(b'\n');
        self.enqueue(line)
    }

    pub fn cancel(&mut self, id: i64, reason: Option<usize>) -> Result<(), Error> {
        self.open()?;
        match self.pending.get(&id) {
            Some(p) if !p.initialize => {}
            _ => return Err(Error::InvalidArgument),
        }
        // Whatever the bound.
        let reason = reason.map(|r| pick(TEXTS, r).1);
        self.output
            .extend_from_slice(&Self::cancellation(id, reason));
        self.pending.remove(&id);
        Ok(())
    }

    pub fn set_max_queued(&mut self, bytes: usize) -> Result<(), Error> {
        if bytes == 0 {
            return Err(Error::InvalidArgument);
        }
        self.max_queued = bytes;
        Ok(())
    }

    pub fn consume(&mut self, n: usize) {
        self.output.drain(..n.min(self.output.len()));
    }

    // ---- Receiving and closing ----

    pub fn receive(&mut self, bytes: &[u8]) -> Result<(), Error> {
        if self.peer_ended || self.ending || self.done {
            return Err(Error::Closed);
        }
        self.feed(bytes);
        Ok(())
    }

    pub fn receive_end(&mut self) {
        if self.peer_ended || self.done {
            return;
        }
        self.finish();
        self.peer_ended = true;
    }

    pub fn write_failed(&mut self) {
        self.write_failed = true;
    }

    pub fn close(&mut self, grace: Duration, now: Instant) {
        if !self.close_called {
            self.close_called = true;
            self.close_at = now.checked_add(grace);
        }
    }

    pub fn next_deadline(&self) -> Option<Instant> {
        if self.done {
            return None;
        }
        let requests = self.pending.values().filter_map(|p| p.deadline);
        let close = self.close_at.filter(|_| self.close_called);
        requests.chain(close).min()
    }

    // ---- Events ----

    /// The next event, and for an `Invalid` the lengths it may report.
    pub fn next_event(&mut self, now: Instant) -> Option<(Ev, Option<RangeInclusive<usize>>)> {
        if self.done {
            return None;
        }
        if !self.ending {
            if let Some(line) = self.lines.pop_front() {
                return Some(self.judge(line));
            }
            let expired = self
                .pending
                .iter()
                .filter_map(|(&id, p)| p.deadline.filter(|&d| d <= now).map(|d| (d, id)))
                .min();
            if let Some((_, id)) = expired {
                let p = self.pending.remove(&id).unwrap();
                if !p.initialize && !self.write_failed {
                    let reason = b"\"request timed out\"";
                    self.output
                        .extend_from_slice(&Self::cancellation(id, Some(reason)));
                }
                return Some((Ev::TimedOut(id), None));
            }
            let grace_over = self.close_called && self.close_at.is_some_and(|at| at <= now);
            if !(self.peer_ended || self.write_failed || grace_over) {
                return None;
            }
            self.ending = true;
        }
        match self.pending.pop_first() {
            Some((id, _)) => Some((Ev::Failed(id), None)),
            None => {
                self.done = true;
                Some((Ev::Closed, None))
            }
        }
    }

    fn judge(&mut self, line: Line) -> (Ev, Option<RangeInclusive<usize>>) {
        let text = match line {
            Line::TooLong { arrived } => {
                let limit = self.limit.expect("too long without a limit");
                let arrived = arrived.unwrap_or(self.line_len);
                return (
                    Ev::Invalid {
                        kind: InvalidKind::TooLong,
                        line: None,
                    },
                    Some(limit + 1..=arrived),
                );
            }
            Line::Text(text) => text,
        };
        let len = text.len();
        let Ok(e) = envelope(&text) else {
            return (
                Ev::Invalid {
                    kind: InvalidKind::ParseError,
                    line: Some(text),
                },
                Some(len..=len),
            );
        };
        let Some(kind) = e.kind else {
            return (
                Ev::Invalid {
                    kind: InvalidKind::InvalidJsonRpc,
                    line: Some(text.clone()),
                },
                Some(len..=len),
            );
        };
        let token = e.id.map(<[u8]>::to_vec);
        // Ours: a response or error whose id token is exactly our decimal id.
        let ours = match (&token, kind) {
            (Some(token), RpcKind::Response | RpcKind::Error) => self
                .pending
                .keys()
                .copied()
                .find(|id| id.to_string().as_bytes() == &token[..]),
            _ => None,
        };
        let ev = match ours {
            Some(id) => {
                self.pending.remove(&id);
                Ev::Response {
                    id,
                    line: text,
                    kind: Some(kind),
                }
            }
            None => Ev::Message {
                line: text,
                kind: Some(kind),
                id: token,
            },
        };
        (ev, None)
    }
}

// ---------------------------------------------------------------------------
// The runner.

/// Runs `ops` on a new transport with line limit `limit` (`None`: the
/// default) and on the model, panicking at the first disagreement: a
/// result, an event (and its envelope and length), the queued bytes, the
/// next deadline, `is_closed`. Returns what it saw.
pub fn run(limit: Option<usize>, ops: &[Op]) -> Outcome {
    let base = Instant::now();
    let mut clock = Duration::ZERO;
    let mut t = Transport::new();
    t.set_max_line_len(limit.and_then(NonZeroUsize::new));
    let limit = t.max_line_len().map(NonZeroUsize::get);
    let mut m = Model::new(limit);
    let mut out = Outcome::default();
    for (step, op) in ops.iter().enumerate() {
        let now = base + clock;
        let ctx = || format!("op {step}: {op:?}");
        match *op {
            Op::Receive(ref bytes) => {
                assert_eq!(t.receive(bytes), m.receive(bytes), "{}", ctx());
            }
            Op::ReceiveEnd => {
                assert_eq!(t.receive_end(), Ok(()), "{}", ctx());
                m.receive_end();
            }
            Op::Request {
                method,
                params,
                timeout,
            } => {
                let got = t.request(
                    pick(METHODS, method).0,
                    pick(PARAMS, params).0,
                    timeout,
                    now,
                );
                assert_eq!(got, m.request(method, params, timeout, now), "{}", ctx());
                if let Ok(id) = got {
                    out.ids.push(id);
                }
            }
            Op::Notify { method, params } => {
                let got = t.notify(pick(METHODS, method).0, pick(PARAMS, params).0);
                assert_eq!(got, m.notify(method, params), "{}", ctx());
            }
            Op::Respond { id, result } => {
                let got = t.respond(pick(ID_TOKENS, id).0, pick(RESULTS, result).0);
                assert_eq!(got, m.respond(id, result), "{}", ctx());
            }
            Op::RespondError { id, code, message } => {
                let got = t.respond_error(
                    id.map(|id| pick(ID_TOKENS, id).0),
                    code,
                    pick(TEXTS, message).0,
                );
                assert_eq!(got, m.respond_error(id, code, message), "{}", ctx());
            }
            Op::Send(json) => {
                assert_eq!(t.send(pick(SENDS, json).0), m.send(json), "{}", ctx());
            }
            Op::Cancel { id, reason } => {
                let got = t.cancel(id, reason.map(|r| pick(TEXTS, r).0));
                assert_eq!(got, m.cancel(id, reason), "{}", ctx());
                if got.is_ok() {
                    out.cancelled.push(id);
                }
            }
            Op::SetMaxQueued(bytes) => {
                assert_eq!(
                    t.set_max_queued(bytes),
                    m.set_max_queued(bytes),
                    "{}",
                    ctx()
                );
            }
            Op::Consume(n) => {
                let n = n.min(t.output().len());
                out.written.extend_from_slice(&t.output()[..n]);
                t.consume(n);
                m.consume(n);
            }
            Op::TakeOutput => {
                t.take_output(&mut out.written).unwrap();
                m.consume(usize::MAX);
            }
            Op::Advance(d) => clock = clock.saturating_add(d),
            Op::Close(grace) => {
                assert_eq!(t.close(grace, now), Ok(()), "{}", ctx());
                m.close(grace, now);
            }
            Op::WriteFailed => {
                t.write_failed();
                m.write_failed();
            }
            Op::NextEvent => {
                next_event(&mut t, &mut m, now, &mut out.events, &ctx);
            }
            Op::Drain => while next_event(&mut t, &mut m, now, &mut out.events, &ctx) {},
        }
        assert_eq!(t.output(), &m.output[..], "queued bytes after {}", ctx());
        assert_eq!(t.queued_len(), m.output.len());
        assert_eq!(t.max_queued(), m.max_queued);
        assert_eq!(t.is_closed(), m.done, "is_closed after {}", ctx());
        assert_eq!(
            t.next_deadline(),
            m.next_deadline(),
            "next_deadline after {}",
            ctx()
        );
    }
    out.written.extend_from_slice(t.output());
    out
}

/// One `next_event` on both; whether there was one.
fn next_event(
    t: &mut Transport,
    m: &mut Model,
    now: Instant,
    events: &mut Vec<Ev>,
    ctx: &dyn Fn() -> String,
) -> bool {
    let want = m.next_event(now);
    let got = t.next_event(now);
    let Some(e) = got else {
        assert_eq!(
            None,
            want.map(|w| w.0),
            "{}: the transport has no event",
            ctx()
        );
        return false;
    };
    if let Event::Message { line, envelope: en }
    | Event::Response {
        line, envelope: en, ..
    } = e
    {
        assert_eq!(Ok(en), envelope(line), "{}: the event's envelope", ctx());
    }
    let (ev, len) = own(&e);
    let Some((want, lens)) = want else {
        panic!("{}: the model has no event, the transport {ev:?}", ctx());
    };
    assert_eq!(ev, want, "{}", ctx());
    if let (Some(len), Some(lens)) = (len, lens) {
        assert!(
            lens.contains(&len),
            "{}: length {len} not in {lens:?}",
            ctx()
        );
    }
    events.push(ev);
    true
}

/// What every finished run must show: `Closed` at most once, and only last;
/// every id `request` returned got at most one outcome (a `Response`,
/// `RequestTimedOut` or `RequestFailed`, or an accepted `cancel`), exactly
/// one once `Closed` came; no outcome for an id never returned.
pub fn check_outcomes(out: &Outcome) {
    let closed = out.events.iter().filter(|e| **e == Ev::Closed).count();
    assert!(closed <= 1, "Closed {closed} times");
    if closed == 1 {
        assert_eq!(out.events.last(), Some(&Ev::Closed), "Closed is not last");
    }
    let mut count: BTreeMap<i64, usize> = out.ids.iter().map(|&id| (id, 0)).collect();
    assert_eq!(count.len(), out.ids.len(), "an id returned twice");
    let ended = out.events.iter().filter_map(|e| match *e {
        Ev::Response { id, .. } | Ev::TimedOut(id) | Ev::Failed(id) => Some(id),
        _ => None,
    });
    for id in ended.chain(out.cancelled.iter().copied()) {
        *count
            .get_mut(&id)
            .unwrap_or_else(|| panic!("an outcome for {id}, never returned")) += 1;
    }
    for (id, n) in count {
        match (n, closed) {
            (0, 0) | (1, _) => {}
            _ => panic!("request {id}: {n} outcomes (closed: {closed})"),
        }
    }
    // Ids are 1, 2, 3, ... in order.
    assert!(
        out.ids.iter().copied().eq(1..=out.ids.len() as i64),
        "ids {:?}",
        out.ids
    );
}
