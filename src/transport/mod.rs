//! `Transport`: one MCP stdio connection as a pure state machine.
//!
//! No I/O, no threads, no clock: a driver feeds it the peer's bytes
//! ([`Transport::receive`]), writes what it queues ([`Transport::output`] and
//! [`Transport::consume`]), passes the time in (`now`), and takes its
//! [`Event`]s. Sending frames lines straight into the output queue; requests
//! are numbered, matched with their answers, timed out and cancelled.

mod event;
mod frame;
mod options;
mod progress;
mod queue;
mod requests;
mod subscription;

use std::num::NonZeroUsize;
use std::time::{Duration, Instant};

use crate::encode::{encode_into, EncodeOptions};
use crate::error::Error;
use crate::message::{Message, RpcKind};
use crate::reader::LineReader;

pub use crate::end_reason::{EndReason, ServerExit};
pub use event::{Event, InvalidKind};
pub use options::RequestOptions;

use queue::{Bound, OutputQueue};
use requests::{Pending, Progress, Requests};

/// The reason given in the `notifications/cancelled` of a timed-out request.
const TIMED_OUT_REASON: &str = "request timed out";

/// One MCP stdio connection's protocol state: the peer's byte stream split
/// into messages, our requests matched with their answers (and timed out),
/// and the lines we send queued, bounded, for a driver to write.
///
/// ```
/// use std::time::{Duration, Instant};
/// use mcp_stdio::{Event, Transport};
///
/// let now = Instant::now();
/// let mut t = Transport::new();
/// let id = t.request("ping", None, Some(Duration::from_secs(5)), now).unwrap();
/// assert_eq!(t.output(), b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n");
/// t.consume(t.output().len()); // the driver wrote it
///
/// t.receive(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n").unwrap();
/// match t.next_event(now) {
///     Some(Event::Response { id: answered, envelope, .. }) => {
///         assert_eq!(answered, id);
///         assert_eq!(envelope.result, Some(&b"{}"[..]));
///     }
///     other => panic!("{other:?}"),
/// }
/// assert_eq!(t.next_event(now), None);
/// ```
#[derive(Debug)]
pub struct Transport {
    reader: LineReader,
    queue: OutputQueue,
    requests: Requests,
    /// The id the next request gets.
    next_id: i64,
    /// `close` was called.
    close_called: bool,
    /// When closing ends without the peer's end (`None`: not closing, or
    /// a grace too long to represent).
    close_at: Option<Instant>,
    /// `receive_end` was called.
    peer_ended: bool,
    /// Only the peer's end ends closing, not the grace nor a failed write:
    /// a driver supervising a process calls `receive_end` when it is gone.
    ended_by_peer_only: bool,
    /// `write_failed` was called.
    write_failed: bool,
    /// Closing has come to its end: pending requests are failing.
    ending: bool,
    /// The ids still to fail, ascending, and how many are done (when
    /// memory allowed the list; otherwise the smallest is searched each time).
    failing: Vec<i64>,
    failed: usize,
    /// `Closed` was given.
    done: bool,
    /// Why it ended (or is ending); `None` while open.
    end_reason: Option<EndReason>,
    /// [`fail_pending`](Transport::fail_pending) was called: pending
    /// requests fail now, before closing comes to its end.
    failing_now: bool,
    /// A line came from the peer (given as an event).
    heard: bool,
    /// The driver starts its peer again (a spawned server's restart):
    /// sends are refused with [`Error::Restarting`] until [`reopen`](Transport::reopen).
    restarting: bool,
}

impl Default for Transport {
    fn default() -> Self {
        Self::new()
    }
}

impl Transport {
    /// A transport with JSON-RPC classification on, the default line limit
    /// ([`DEFAULT_MAX_LINE_LEN`](crate::DEFAULT_MAX_LINE_LEN)), invalid lines
    /// reported, and an output queue bounded at 64 MiB.
    /// Allocates nothing until used.
    pub fn new() -> Self {
        let mut reader = LineReader::new();
        reader.set_jsonrpc(true);
        Transport {
            reader,
            queue: OutputQueue::new(),
            requests: Requests::default(),
            next_id: 1,
            close_called: false,
            close_at: None,
            peer_ended: false,
            ended_by_peer_only: false,
            write_failed: false,
            ending: false,
            failing: Vec::new(),
            failed: 0,
            done: false,
            end_reason: None,
            failing_now: false,
            heard: false,
            restarting: false,
        }
    }

    /// Sets the longest line accepted from the peer (see
    /// [`LineReader::set_max_line_len`]); `None`: no limit.
    pub fn set_max_line_len(&mut self, limit: Option<NonZeroUsize>) {
        self.reader.set_max_line_len(limit);
    }

    /// The current line limit (`None`: no limit).
    pub fn max_line_len(&self) -> Option<NonZeroUsize> {
        self.reader.max_line_len()
    }

    /// Bounds the output queue at `bytes` (framed lines, newlines
    /// included). A send that would take the queue past it is refused with
    /// [`Error::WouldBlock`], unless the queue is empty. Applies to later
    /// sends only; `0` is [`Error::InvalidArgument`].
    pub fn set_max_queued(&mut self, bytes: usize) -> Result<(), Error> {
        self.queue.set_max(bytes)
    }

    /// The output queue's bound, in bytes.
    pub fn max_queued(&self) -> usize {
        self.queue.max()
    }

    // ---- Sending ----

    /// Queues `json` (any one JSON text) as one compact line, as
    /// [`encode_into`](crate::encode_into) writes it.
    ///
    /// Errors (nothing queued): [`Error::Closed`] once the transport is
    /// closing or its peer gone; [`Error::InvalidJson`];
    /// [`Error::WouldBlock`] when the queue is full; [`Error::OutOfMemory`].
    pub fn send(&mut self, json: &[u8]) -> Result<(), Error> {
        self.check_open()?;
        self.queue.append(Bound::Enforced, |out| {
            encode_into(json, EncodeOptions::default(), out)
        })
    }

    /// Queues the request
    /// `{"jsonrpc":"2.0","id":N,"method":"<method>","params":<params>}`
    /// (`params` omitted when `None`) and returns its id `N`: 1, 2, 3, … per
    /// transport. With a `timeout`, a [`Event::RequestTimedOut`] comes at
    /// `now + timeout` if no answer came first.
    ///
    /// Errors (nothing queued, no id used): as [`send`](Self::send), and
    /// [`Error::InvalidJson`] when `params` is not one JSON text,
    /// [`Error::InvalidParams`] when it is not an object or an array.
    pub fn request(
        &mut self,
        method: &str,
        params: Option<&[u8]>,
        timeout: Option<Duration>,
        now: Instant,
    ) -> Result<i64, Error> {
        self.request_with(method, params, RequestOptions::timeout(timeout), now)
    }

    /// [`request`](Self::request) with options: a timeout, and whether the
    /// request's progress is followed ([`RequestOptions::progress`]: a
    /// `progressToken` in its `params._meta`, its `notifications/progress`
    /// as [`Event::Progress`], each increase resetting the timeout if
    /// asked, never past a hard maximum).
    ///
    /// Errors as [`request`](Self::request), and, with progress followed,
    /// [`Error::InvalidParams`] when `params` is an array (the token has no
    /// place in it) or its `_meta` is not an object or already holds a
    /// `progressToken`.
    pub fn request_with(
        &mut self,
        method: &str,
        params: Option<&[u8]>,
        options: RequestOptions,
        now: Instant,
    ) -> Result<i64, Error> {
        self.check_open()?;
        let id = self.next_id;
        let next = id.checked_add(1).ok_or(Error::InvalidArgument)?;
        self.requests.reserve()?;
        let deadline = options.timeout.and_then(|t| now.checked_add(t));
        let hard_deadline = options.max_timeout.and_then(|max| now.checked_add(max));
        let progress = options.progress.then(|| Progress {
            reset_by: options
                .reset_on_progress
                .then_some(options.timeout)
                .flatten(),
            hard_deadline,
            last: None,
        });
        self.queue.append(Bound::Enforced, |out| {
            frame::raw(out, frame::OPEN)?;
            frame::raw(out, b"\"id\":")?;
            frame::integer(out, id)?;
            frame::raw(out, b",")?;
            match progress {
                Some(_) => progress::method_and_params_with_token(out, method, params, id),
                None => method_and_params(out, method, params),
            }
        })?;
        self.next_id = next;
        self.requests.insert(
            id,
            Pending {
                // The hard maximum bounds the first deadline too.
                deadline: match (deadline, hard_deadline) {
                    (Some(d), Some(hard)) => Some(d.min(hard)),
                    (None, hard) => hard,
                    (d, None) => d,
                },
                initialize: method == "initialize",
                progress,
                subscription: method == subscription::LISTEN,
            },
        );
        Ok(id)
    }

    /// Queues the notification
    /// `{"jsonrpc":"2.0","method":"<method>","params":<params>}` (`params`
    /// omitted when `None`). Errors as [`request`](Self::request).
    pub fn notify(&mut self, method: &str, params: Option<&[u8]>) -> Result<(), Error> {
        self.check_open()?;
        self.queue.append(Bound::Enforced, |out| {
            frame::raw(out, frame::OPEN)?;
            method_and_params(out, method, params)
        })
    }

    /// Queues the response `{"jsonrpc":"2.0","id":<id_token>,"result":<result>}`,
    /// the id token as the request had it (e.g. [`Envelope::id`](crate::Envelope::id)).
    ///
    /// Errors (nothing queued): as [`send`](Self::send);
    /// [`Error::InvalidArgument`] when `id_token` is empty or not a JSON
    /// string or number; [`Error::InvalidJson`] when `result` is not one
    /// JSON text (or is empty).
    pub fn respond(&mut self, id_token: &[u8], result: &[u8]) -> Result<(), Error> {
        self.check_open()?;
        self.queue.append(Bound::Enforced, |out| {
            frame::raw(out, frame::OPEN)?;
            id_member(out, id_token)?;
            frame::raw(out, b",\"result\":")?;
            frame::value(out, result)?;
            frame::raw(out, b"}\n")
        })
    }

    /// Queues the error response
    /// `{"jsonrpc":"2.0","id":<id_token>,"error":{"code":<code>,"message":"<message>"}}`;
    /// with `None`, `id` is left out (never `"id":null`), for a request whose
    /// id could not be read. Errors as [`respond`](Self::respond).
    pub fn respond_error(
        &mut self,
        id_token: Option<&[u8]>,
        code: i64,
        message: &str,
    ) -> Result<(), Error> {
        self.check_open()?;
        self.queue.append(Bound::Enforced, |out| {
            frame::raw(out, frame::OPEN)?;
            if let Some(id_token) = id_token {
                id_member(out, id_token)?;
                frame::raw(out, b",")?;
            }
            frame::raw(out, b"\"error\":{\"code\":")?;
            frame::integer(out, code)?;
            frame::raw(out, b",\"message\":")?;
            frame::string(out, message)?;
            frame::raw(out, b"}}\n")
        })
    }

    /// Cancels our request `id`: queues
    /// `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":<id>,"reason":"<reason>"}}`
    /// (`reason` left out when `None`), whatever the queue's bound, and
    /// forgets the request: no event will come for it (its answer, should it
    /// come, is a [`Event::Message`]).
    ///
    /// Errors (nothing queued): [`Error::Closed`] as for every send;
    /// [`Error::InvalidArgument`] when `id` is no pending request of ours
    /// (unknown, answered, timed out) or is an `initialize` request (MCP
    /// forbids cancelling it); [`Error::OutOfMemory`].
    pub fn cancel(&mut self, id: i64, reason: Option<&str>) -> Result<(), Error> {
        self.check_open()?;
        match self.requests.get(id) {
            Some(request) if !request.initialize => {}
            _ => return Err(Error::InvalidArgument),
        }
        self.queue
            .append(Bound::Bypassed, |out| cancellation(out, id, reason))?;
        self.requests.remove(id);
        Ok(())
    }

    fn check_open(&self) -> Result<(), Error> {
        if self.restarting && !self.close_called {
            Err(Error::Restarting)
        } else if self.closing() {
            Err(Error::Closed)
        } else {
            Ok(())
        }
    }

    // ---- The output queue ----

    /// The bytes queued, waiting to be written to the peer: write from this
    /// slice, then [`consume`](Self::consume) what was written.
    pub fn output(&self) -> &[u8] {
        self.queue.output()
    }

    /// Marks the first `n` bytes of [`output`](Self::output) written (at
    /// most all of them).
    pub fn consume(&mut self, n: usize) {
        self.queue.consume(n);
    }

    /// Appends everything queued to `out` and empties the queue. Kept after
    /// [`Event::Closed`] too. On [`Error::OutOfMemory`] nothing moved.
    pub fn take_output(&mut self, out: &mut Vec<u8>) -> Result<(), Error> {
        self.queue.take(out)
    }

    /// How many bytes are queued.
    pub fn queued_len(&self) -> usize {
        self.queue.output().len()
    }

    // ---- Receiving ----

    /// Takes bytes the peer sent, in chunks of any size (the same events
    /// come whatever the chunking).
    ///
    /// Errors: [`Error::Closed`] after [`receive_end`](Self::receive_end),
    /// and once closing has come to its end (pending requests failing, or
    /// [`Event::Closed`] given): nothing more would be delivered;
    /// [`Error::OutOfMemory`] (nothing taken).
    pub fn receive(&mut self, bytes: &[u8]) -> Result<(), Error> {
        if self.peer_ended || self.ending || self.done {
            return Err(Error::Closed);
        }
        self.reader.feed(bytes)
    }

    /// [`receive`](Self::receive) for a driver that reads straight into the
    /// transport: `fill` appends at most `max` bytes to the vector it is
    /// given (the reader's buffer, with room reserved). Errors as `receive`
    /// (`fill` not called).
    #[cfg_attr(not(os_io), allow(dead_code))] // the connection's driver
    pub(crate) fn receive_with<T>(
        &mut self,
        max: usize,
        fill: impl FnOnce(&mut Vec<u8>) -> T,
    ) -> Result<T, Error> {
        if self.peer_ended || self.ending || self.done {
            return Err(Error::Closed);
        }
        self.reader.append_with(max, fill)
    }

    /// Sends are over: `close` was called or the peer is gone. A driver
    /// ends its write side once the queue is written (or the grace is over).
    #[cfg_attr(not(os_io), allow(dead_code))] // the connection's driver
    pub(crate) fn closing(&self) -> bool {
        self.close_called || self.peer_ended || self.write_failed || self.failing_now || self.done
    }

    /// Makes only the peer's end ([`receive_end`](Self::receive_end)) end
    /// closing, not the grace nor a failed write: a driver that supervises
    /// a process calls `receive_end` when the process is gone. The grace's
    /// instant is then only for the driver ([`close_at`](Self::close_at)),
    /// not a deadline of the transport.
    #[cfg_attr(not(os_io), allow(dead_code))] // the connection's driver
    pub(crate) fn set_ended_by_peer_only(&mut self) {
        self.ended_by_peer_only = true;
    }

    /// When the closing grace ends (`None`: `close` not called, or a grace
    /// too long to represent).
    #[cfg_attr(not(os_io), allow(dead_code))] // the connection's driver
    pub(crate) fn close_at(&self) -> Option<Instant> {
        self.close_at.filter(|_| self.close_called)
    }

    /// The peer's stream ended, but the driver keeps the transport open a
    /// little longer (to answer what came last, to write what is queued): a
    /// last line without a newline becomes a line, and
    /// [`receive_end`](Self::receive_end) follows when the driver is done.
    #[cfg_attr(not(os_io), allow(dead_code))] // the connection's driver
    pub(crate) fn finish_input(&mut self) -> Result<(), Error> {
        self.reader.finish()
    }

    /// Received lines not yet given as events (or a line not yet ended).
    #[cfg_attr(not(os_io), allow(dead_code))] // the connection's driver
    pub(crate) fn input_pending(&self) -> bool {
        self.reader.buffered_len() > 0
    }

    /// A received line (or a too-long report) waits to be taken: a driver
    /// reads more only when none does, so that what it holds stays within
    /// the line limit and one read.
    #[cfg_attr(not(os_io), allow(dead_code))] // the connection's driver
    pub(crate) fn line_waiting(&self) -> bool {
        self.reader.line_waiting()
    }

    /// The peer closed its end: a last line without a newline still counts;
    /// then the transport closes (pending requests get
    /// [`Event::RequestFailed`], then [`Event::Closed`]). Calling it again
    /// does nothing.
    pub fn receive_end(&mut self) -> Result<(), Error> {
        if self.peer_ended || self.done {
            return Ok(());
        }
        self.reader.finish()?;
        self.peer_ended = true;
        self.set_end_reason(EndReason::PeerClosed);
        Ok(())
    }

    /// The driver could not write to the peer (`EPIPE`: it reads no more):
    /// the transport closes as if the peer had closed its end (lines
    /// already received are still delivered).
    pub fn write_failed(&mut self) {
        self.write_failed = true;
        self.set_end_reason(EndReason::WriteRefused);
    }

    /// Says why the transport ends, for a driver that knows more than the
    /// transport sees (a spawned server that exited by itself). The first
    /// reason stands, but that a server's exit takes the place of
    /// [`EndReason::PeerClosed`] and [`EndReason::WriteRefused`] (its
    /// stdout ends, or a write fails, a moment before its exit is
    /// noticed). `close`, `receive_end` and a failed write give their own.
    /// A [`ServerExit`]'s `before_first_message` is the transport's to
    /// say: whether a line came from the peer.
    pub fn set_end_reason(&mut self, reason: EndReason) {
        let replace = matches!(
            (self.end_reason, reason),
            (None, _)
                | (
                    Some(EndReason::PeerClosed | EndReason::WriteRefused),
                    EndReason::ServerExited(_)
                )
        );
        if replace {
            self.end_reason = Some(reason);
        }
    }

    /// Why the transport ended, or is ending; `None` while open.
    pub fn end_reason(&self) -> Option<EndReason> {
        reason_with_heard(self.end_reason, self.heard)
    }

    /// No answer can come any more (the driver saw the server exit, or its
    /// stdout end, while the shutdown still has to run): sends are refused
    /// from now on and every pending request fails with the end's reason,
    /// after the lines already received, without waiting for the end.
    /// [`Event::Closed`] still comes at the end, as before.
    pub fn fail_pending(&mut self) {
        self.failing_now = true;
    }

    /// The driver will start its peer again once the pending requests have
    /// failed (`yes`), or will not after all: sends are refused with
    /// [`Error::Restarting`] meanwhile, not [`Error::Closed`].
    #[cfg_attr(not(os_io), allow(dead_code))] // the connection's driver
    pub(crate) fn set_restarting(&mut self, yes: bool) {
        self.restarting = yes;
    }

    /// The pending requests have all failed, and no failure is left to
    /// give: the driver may replace its peer.
    #[cfg_attr(not(os_io), allow(dead_code))] // the connection's driver
    pub(crate) fn failures_given(&self) -> bool {
        self.failing_now && self.requests.is_empty()
    }

    /// A new peer, on the same transport (a spawned server started again
    /// after it ended unexpectedly): what was received from the old one and
    /// not yet given (a line it never ended) and what was queued for it
    /// go; the end's state and reason are cleared, and sends are accepted
    /// again. Request ids go on from where they were. Call it once the
    /// pending requests have failed ([`failures_given`](Self::failures_given)).
    #[cfg_attr(not(os_io), allow(dead_code))] // the connection's driver
    pub(crate) fn reopen(&mut self) {
        debug_assert!(self.requests.is_empty() && !self.done && !self.close_called);
        self.reader.reset();
        self.queue.consume(usize::MAX);
        self.close_at = None;
        self.peer_ended = false;
        self.write_failed = false;
        self.ending = false;
        self.failing = Vec::new();
        self.failed = 0;
        self.end_reason = None;
        self.failing_now = false;
        self.heard = false;
        self.restarting = false;
    }

    /// Begins closing and returns at once: from now on every send returns
    /// [`Error::Closed`]. [`Event::Closed`] comes when the peer's end
    /// arrives ([`receive_end`](Self::receive_end)) or at `now + grace`,
    /// whichever first; answers arriving before then are delivered, and
    /// requests still pending then get [`Event::RequestFailed`]. Calling it
    /// again does nothing (the first schedule stands).
    pub fn close(&mut self, grace: Duration, now: Instant) -> Result<(), Error> {
        if !self.close_called {
            self.close_called = true;
            self.close_at = now.checked_add(grace);
            self.set_end_reason(EndReason::ClosedByUs);
        }
        Ok(())
    }

    /// True once [`Event::Closed`] was given.
    pub fn is_closed(&self) -> bool {
        self.done
    }

    /// The earliest instant at which an event is due without new input: a
    /// request's deadline, or the end of the closing grace. `None` when
    /// nothing is scheduled. (After `receive`, `receive_end` or
    /// `write_failed`, events may be due at once: call
    /// [`next_event`](Self::next_event) before waiting.)
    pub fn next_deadline(&self) -> Option<Instant> {
        if self.done {
            return None;
        }
        let close_at = self
            .close_at
            .filter(|_| self.close_called && !self.ended_by_peer_only);
        match (self.requests.next_deadline(), close_at) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    // ---- Events ----

    /// The next event, or `None` until more input, or time, brings one.
    /// Lines received come first, in stream order; then requests whose
    /// deadline is `<= now` time out (earliest deadline first, ties by id);
    /// then, when closing has come to its end, pending requests fail
    /// (ascending ids) and [`Event::Closed`] comes, last; then `None`
    /// forever. The event's data borrows the transport until its next call.
    ///
    /// Judging a line nested more than 64 levels deep allocates; should
    /// that fail, this aborts the process as `Vec::push` does;
    /// [`try_next_event`](Self::try_next_event) reports it instead.
    pub fn next_event(&mut self, now: Instant) -> Option<Event<'_>> {
        match self.try_next_event(now) {
            Ok(event) => event,
            Err(_) => std::alloc::handle_alloc_error(std::alloc::Layout::new::<u64>()),
        }
    }

    /// [`next_event`](Self::next_event), except that when memory cannot be
    /// allocated (to judge a line, or to queue a timed-out request's
    /// cancellation) it returns [`Error::OutOfMemory`] and nothing is
    /// consumed: a later call tries again.
    pub fn try_next_event(&mut self, now: Instant) -> Result<Option<Event<'_>>, Error> {
        self.try_next_event_at(|| now)
    }

    /// [`try_next_event`](Self::try_next_event) with the time read from
    /// `clock` only when it matters (a deadline or the closing grace is
    /// scheduled and no line is waiting): a driver then pays no clock read
    /// per message.
    // Inlined into a driver's loop (the C ABI's `next_event`), the event is
    // built straight from the line and its envelope, without the moves of an
    // `Event` returned by value.
    #[inline]
    pub fn try_next_event_at(
        &mut self,
        clock: impl FnOnce() -> Instant,
    ) -> Result<Option<Event<'_>>, Error> {
        if self.done {
            return Ok(None);
        }
        if !self.ending {
            if let Some((message, envelope)) = self.reader.try_next_message_and_envelope()? {
                self.heard = true;
                return Ok(Some(match message {
                    Message::Json { line, rpc } => {
                        // With no request pending, no answer can be ours: no
                        // id to parse, no lookup (a host that only serves).
                        let ours = match rpc {
                            Some(RpcKind::Response | RpcKind::Error)
                                if !self.requests.is_empty() =>
                            {
                                envelope.id.and_then(frame::our_id)
                            }
                            _ => None,
                        };
                        match ours.and_then(|id| self.requests.remove(id).map(|_| id)) {
                            Some(id) => Event::Response { id, line, envelope },
                            // Notifications tied to a request of ours: the
                            // progress of one whose progress is followed,
                            // the stream and the end of a subscription.
                            None if rpc == Some(RpcKind::Notification)
                                && self.requests.any_tied() =>
                            {
                                tied(&mut self.requests, line, envelope, clock)
                            }
                            None => Event::Message { line, envelope },
                        }
                    }
                    Message::ParseError { line } => Event::Invalid {
                        kind: InvalidKind::ParseError,
                        line: Some(line),
                        len: line.len(),
                    },
                    Message::InvalidJsonRpc { line } => Event::Invalid {
                        kind: InvalidKind::InvalidJsonRpc,
                        line: Some(line),
                        len: line.len(),
                    },
                    Message::TooLong { len } => Event::Invalid {
                        kind: InvalidKind::TooLong,
                        line: None,
                        len,
                    },
                }));
            }
            // (Fields, not methods, here and below: the line's borrow above
            // ends only at the end of the function.)
            if self.failing_now {
                if let Some(id) =
                    next_to_fail(&mut self.requests, &mut self.failing, &mut self.failed)
                {
                    return Ok(Some(failure(id, self.end_reason, self.heard)));
                }
            }
            // Nothing scheduled: no deadline can have passed, no clock read.
            // (Fields, not `next_deadline`: the line's borrow above ends only here.)
            let scheduled = self.requests.next_deadline().is_some()
                || (self.close_called && !self.ended_by_peer_only && self.close_at.is_some());
            let now = scheduled.then(clock);
            if let Some(id) = now.and_then(|now| self.requests.expired(now)) {
                let cancel =
                    self.requests.get(id).is_some_and(|r| !r.initialize) && !self.write_failed;
                if cancel {
                    // On failure nothing is queued and the request stays: retried.
                    self.queue.append(Bound::Bypassed, |out| {
                        cancellation(out, id, Some(TIMED_OUT_REASON))
                    })?;
                }
                self.requests.remove(id);
                return Ok(Some(Event::RequestTimedOut { id }));
            }
            let grace_over = self.close_called
                && !self.ended_by_peer_only
                && matches!((self.close_at, now), (Some(at), Some(now)) if at <= now);
            let write_failed = self.write_failed && !self.ended_by_peer_only;
            if !(self.peer_ended || write_failed || grace_over) {
                return Ok(None);
            }
            self.ending = true;
        }
        // Closing has come to its end: fail what is pending, then close.
        match next_to_fail(&mut self.requests, &mut self.failing, &mut self.failed) {
            Some(id) => Ok(Some(failure(id, self.end_reason, self.heard))),
            None => {
                self.done = true;
                self.failing = Vec::new();
                Ok(Some(Event::Closed))
            }
        }
    }
}

/// The event of a notification (`line`, `envelope`) that may be tied to a
/// request of ours: [`Event::Progress`] for a request whose progress is
/// followed, [`Event::Subscription`] and [`Event::SubscriptionEnded`] for
/// an open subscription (its end forgets it); else [`Event::Message`].
fn tied<'a>(
    requests: &mut Requests,
    line: &'a [u8],
    envelope: crate::envelope::Envelope<'a>,
    clock: impl FnOnce() -> Instant,
) -> Event<'a> {
    if requests.any_followed() {
        if let Some((id, value)) = progress::of_ours(&envelope) {
            if requests.progress(id, value, clock()) {
                return Event::Progress { id, line, envelope };
            }
            return Event::Message { line, envelope };
        }
    }
    match subscription::tie(&envelope) {
        Some(subscription::Tie::Stream(id)) if requests.is_subscription(id) => {
            Event::Subscription { id, line, envelope }
        }
        Some(subscription::Tie::Ended(id)) if requests.is_subscription(id) => {
            requests.remove(id);
            Event::SubscriptionEnded { id, line, envelope }
        }
        _ => Event::Message { line, envelope },
    }
}

/// The next pending request to fail, forgotten: ascending ids, from the
/// list `failing` (made at the first, when memory allows; `failed` of it
/// done) or else the smallest searched each time.
fn next_to_fail(
    requests: &mut Requests,
    failing: &mut Vec<i64>,
    failed: &mut usize,
) -> Option<i64> {
    if *failed == 0 && failing.is_empty() {
        requests.ids_ascending(failing);
    }
    let id = loop {
        match failing.get(*failed) {
            Some(&id) => {
                *failed += 1;
                // Answered, timed out or cancelled since the list was made.
                if requests.get(id).is_some() {
                    break Some(id);
                }
            }
            None => break requests.smallest_id(),
        }
    }?;
    requests.remove(id);
    Some(id)
}

/// The failure event of request `id`, the transport's end reason given
/// as [`Transport::end_reason`] gives it.
fn failure(id: i64, end_reason: Option<EndReason>, heard: bool) -> Event<'static> {
    Event::RequestFailed {
        id,
        reason: reason_with_heard(end_reason, heard).unwrap_or(EndReason::ClosedByUs),
    }
}

/// `end_reason`, a server's exit saying whether a line came (`heard`).
fn reason_with_heard(end_reason: Option<EndReason>, heard: bool) -> Option<EndReason> {
    end_reason.map(|reason| match reason {
        EndReason::ServerExited(exit) => EndReason::ServerExited(ServerExit {
            before_first_message: !heard,
            ..exit
        }),
        other => other,
    })
}

/// Writes `"method":"<method>"`, `,"params":<params>` when given, and `}\n`.
fn method_and_params(out: &mut Vec<u8>, method: &str, params: Option<&[u8]>) -> Result<(), Error> {
    frame::raw(out, b"\"method\":")?;
    frame::string(out, method)?;
    if let Some(params) = params {
        frame::raw(out, b",\"params\":")?;
        // JSON-RPC: params are a structured value.
        if !matches!(frame::value(out, params)?, b'{' | b'[') {
            return Err(Error::InvalidParams);
        }
    }
    frame::raw(out, b"}\n")
}

/// Writes `"id":<id_token>`; the token must be a JSON string or number.
fn id_member(out: &mut Vec<u8>, id_token: &[u8]) -> Result<(), Error> {
    frame::raw(out, b"\"id\":")?;
    match frame::value(out, id_token) {
        Ok(b'"' | b'-' | b'0'..=b'9') => Ok(()),
        Ok(_) | Err(Error::InvalidJson) => Err(Error::InvalidArgument),
        Err(e) => Err(e),
    }
}

/// Writes the `notifications/cancelled` line for request `id`.
fn cancellation(out: &mut Vec<u8>, id: i64, reason: Option<&str>) -> Result<(), Error> {
    frame::raw(out, frame::OPEN)?;
    frame::raw(
        out,
        b"\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":",
    )?;
    frame::integer(out, id)?;
    if let Some(reason) = reason {
        frame::raw(out, b",\"reason\":")?;
        frame::string(out, reason)?;
    }
    frame::raw(out, b"}}\n")
}
