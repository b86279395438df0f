//! What the transport tells its user: [`Event`].

use crate::end_reason::EndReason;
use crate::envelope::Envelope;

/// Why a line the peer sent is not a message ([`Event::Invalid`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum InvalidKind {
    /// Not one JSON text in valid UTF-8.
    ParseError,
    /// Longer than the line limit; its bytes were dropped.
    TooLong,
    /// Valid JSON but no JSON-RPC 2.0 message (nor batch of them).
    InvalidJsonRpc,
}

/// One thing that happened on a [`Transport`](crate::Transport), from
/// [`next_event`](crate::Transport::next_event). Data borrows the
/// transport until its next call taking `&mut self`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Event<'a> {
    /// A message from the peer that answers none of our requests: a request
    /// or notification, a response or error to no pending request of ours
    /// (stray, late, duplicate), or a batch (kind
    /// [`RpcKind::Batch`](crate::RpcKind::Batch), no member).
    Message {
        /// The line, trimmed.
        line: &'a [u8],
        /// Its envelope (kind and members).
        envelope: Envelope<'a>,
    },
    /// The answer (result or error) to our request `id`: its id token was
    /// exactly the decimal integer we wrote. Given once per request.
    Response {
        /// The id [`request`](crate::Transport::request) returned.
        id: i64,
        /// The line, trimmed.
        line: &'a [u8],
        /// Its envelope (kind `Response` or `Error`).
        envelope: Envelope<'a>,
    },
    /// A `notifications/progress` for our request `id`, whose progress is
    /// followed ([`RequestOptions::progress`](crate::RequestOptions::progress)):
    /// its `progressToken` named the request. When the request resets its
    /// timeout on progress, an increasing `progress` moved its deadline.
    /// Only while the request is pending; other progress notifications are
    /// [`Event::Message`]s.
    Progress {
        /// The request's id.
        id: i64,
        /// The line, trimmed.
        line: &'a [u8],
        /// Its envelope (a notification).
        envelope: Envelope<'a>,
    },
    /// A notification of the stream of our `subscriptions/listen` request
    /// `id` (MCP 2026-07-28): its `_meta["io.modelcontextprotocol/subscriptionId"]`
    /// named the request (`notifications/subscriptions/acknowledged`, then
    /// the changes it listens to). Only while the subscription is open.
    Subscription {
        /// The listen request's id.
        id: i64,
        /// The line, trimmed.
        line: &'a [u8],
        /// Its envelope (a notification).
        envelope: Envelope<'a>,
    },
    /// The server ended our subscription `id` with a `notifications/cancelled`
    /// for it (the one case in which a server sends one): the listen request
    /// is over (no other event comes for it; listen again if needed).
    SubscriptionEnded {
        /// The listen request's id.
        id: i64,
        /// The line, trimmed (its `params.reason` may say why).
        line: &'a [u8],
        /// Its envelope.
        envelope: Envelope<'a>,
    },
    /// Request `id` got no answer by its deadline: it is forgotten (a late
    /// answer is a [`Event::Message`]) and, unless it was an `initialize`,
    /// a `notifications/cancelled` for it was queued.
    RequestTimedOut {
        /// The request's id.
        id: i64,
    },
    /// Request `id` will never be answered: the transport closed, or its
    /// peer can answer no more (a spawned server exited, or closed its
    /// stdout: then the failures come at once, not at the end of the
    /// shutdown). Ascending ids, after the lines received before the end,
    /// before [`Event::Closed`].
    RequestFailed {
        /// The request's id.
        id: i64,
        /// Why.
        reason: EndReason,
    },
    /// A line from the peer that is not a message.
    Invalid {
        /// Why.
        kind: InvalidKind,
        /// The line, trimmed; `None` for [`InvalidKind::TooLong`].
        line: Option<&'a [u8]>,
        /// The line's length; for [`InvalidKind::TooLong`], the bytes
        /// received (and dropped).
        len: usize,
    },
    /// One line a spawned server wrote to its stderr, without the newline
    /// (a line over 64 KiB comes in pieces of 64 KiB): from a
    /// [`Connection`](crate::Connection) whose command has
    /// [`StderrMode::Events`](crate::StderrMode::Events), never from a
    /// bare [`Transport`](crate::Transport). They come in the order
    /// written, interleaved with the other events as they arrive, all
    /// before [`Event::Closed`].
    Stderr {
        /// The line.
        line: &'a [u8],
    },
    /// A spawned server that ended unexpectedly was started again, by the
    /// [`RestartPolicy`](crate::RestartPolicy) of its command: from a
    /// [`Connection`](crate::Connection), never from a bare
    /// [`Transport`](crate::Transport). The requests pending at its end
    /// failed before it ([`Event::RequestFailed`], open subscriptions
    /// included), and so did those sent while it was down. Everything
    /// after it is the new process's: do the handshake again, and listen
    /// again to what was subscribed to. Request ids go on (a late answer
    /// from the process before cannot match a new request).
    Restarted {
        /// The new server's process id.
        pid: u32,
        /// Which restart this is: 1 for the first of the connection.
        attempt: u32,
        /// Why the server before it ended.
        reason: EndReason,
    },
    /// The transport is closed: always the last event, given once.
    Closed,
}
