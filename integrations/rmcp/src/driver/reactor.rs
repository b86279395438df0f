//! Linux: the connection's one descriptor (an epoll set standing for its
//! pipes, its server's exit and stderr, and other threads' sends) is
//! registered with tokio, edge-triggered; `receive` takes the events that
//! are ready and awaits the descriptor, or the connection's next deadline
//! (a signal of the shutdown), when none is. No thread of its own: a
//! server's answer wakes the task that waits for it, once.

use std::collections::VecDeque;
use std::time::Duration;

use mcp_stdio::{Connection, Event, Sender};
use rmcp::service::{RxJsonRpcMessage, ServiceRole, TxJsonRpcMessage};
use tokio::io::unix::AsyncFd;
use tokio::io::Interest;

use super::{io_error, Ended, Hooks, Lines, Turn};

/// A connection driven for role `R` on tokio's reactor.
pub(crate) struct Driver<R: ServiceRole> {
    /// `None` once closed (or moved to a thread at drop).
    conn: Option<AsyncFd<Connection>>,
    sender: Sender,
    lines: Lines<R>,
    /// The failures of the requests left unanswered, to give before the end.
    failures: VecDeque<RxJsonRpcMessage<R>>,
    /// `Closed` was taken.
    closed: bool,
    grace: Duration,
}

impl<R: ServiceRole> Driver<R> {
    /// Registers `conn`'s descriptor with the current tokio runtime.
    pub(crate) fn start(conn: Connection, hooks: Hooks, grace: Duration) -> std::io::Result<Self> {
        // Outside a runtime tokio would panic: an error instead, and the
        // server's shutdown on a thread.
        if tokio::runtime::Handle::try_current().is_err() {
            finish_in_a_thread(conn, grace);
            return Err(std::io::Error::other(
                "mcp-stdio-rmcp: a transport is made within a tokio runtime",
            ));
        }
        // Made first, where failing is an error (in `AsRawFd`, which
        // AsyncFd calls, it would be a panic).
        conn.poll_fd().map_err(io_error)?;
        let sender = conn.sender();
        // tokio 1.53.3 deprecated its safe constructors: unsound for a type
        // whose descriptor may change or close while registered. The
        // connection's is made once and closed only when it is dropped.
        #[allow(deprecated)]
        let conn = AsyncFd::try_with_interest(conn, Interest::READABLE).map_err(|e| {
            let (conn, e) = e.into_parts();
            finish_in_a_thread(conn, grace);
            e
        })?;
        Ok(Driver {
            conn: Some(conn),
            sender,
            lines: Lines::new(hooks),
            failures: VecDeque::new(),
            closed: false,
            grace,
        })
    }

    /// rmcp's `send`.
    pub(crate) fn send(
        &self,
        item: TxJsonRpcMessage<R>,
    ) -> impl std::future::Future<Output = Result<(), std::io::Error>> + Send + 'static {
        super::send::<R>(&self.sender, &self.lines.pending, item)
    }

    /// The next event of the connection for rmcp, taking what is ready and
    /// awaiting the descriptor (or the next deadline) when nothing is;
    /// `None` once `Closed` was taken.
    async fn turn(&mut self) -> Option<Turn<R>> {
        let conn = self.conn.as_mut()?;
        loop {
            // Edge-triggered: what is ready is taken before waiting.
            match conn.get_mut().next_event(Some(Duration::ZERO)) {
                Ok(Some(event)) => return Some(self.lines.take(event)),
                Ok(None) => {}
                Err(e) => {
                    tracing::error!("mcp-stdio: the connection failed: {e}");
                    return Some(Turn::Closed);
                }
            }
            let deadline = conn.get_ref().next_deadline().ok().flatten();
            let wake_at = deadline.map(tokio::time::Instant::from_std);
            tokio::select! {
                ready = conn.readable() => match ready {
                    Ok(mut guard) => guard.clear_ready(),
                    Err(e) => {
                        tracing::error!("mcp-stdio: the connection's descriptor failed: {e}");
                        return Some(Turn::Closed);
                    }
                },
                () = tokio::time::sleep_until(wake_at.unwrap_or_else(tokio::time::Instant::now)),
                    if wake_at.is_some() => {}
            }
        }
    }

    /// rmcp's `receive`: the next message, `None` once the connection ended
    /// (after the failures of the requests left unanswered).
    pub(crate) async fn receive(&mut self) -> Option<RxJsonRpcMessage<R>> {
        loop {
            if let Some(failure) = self.failures.pop_front() {
                return Some(failure);
            }
            if self.closed {
                return None;
            }
            match self.turn().await? {
                Turn::Message(message) => return Some(message),
                Turn::Nothing => {}
                Turn::Closed => self.end(),
            }
        }
    }

    /// The end: the failures to give, and how it ended, kept.
    fn end(&mut self) {
        self.closed = true;
        if let Some(conn) = &self.conn {
            self.failures = self.lines.end(conn.get_ref()).into();
        }
    }

    /// rmcp's `close`: the shutdown sequence begins (what is queued is
    /// written, stdin closed, signals at the grace) and is awaited; what
    /// comes meanwhile is dropped (rmcp reads no more).
    pub(crate) async fn close(&mut self) -> Result<(), std::io::Error> {
        let _ = self.sender.close(self.grace);
        while !self.closed {
            match self.turn().await {
                Some(Turn::Closed) | None => self.end(),
                Some(_) => {}
            }
        }
        self.conn = None; // dropped: nothing left to wait for
        Ok(())
    }

    /// How it ended, once it has.
    pub(crate) fn ended(&self) -> Option<Ended> {
        self.lines.ended()
    }
}

impl<R: ServiceRole> Drop for Driver<R> {
    /// An open connection finishes its shutdown on a thread of its own (no
    /// runtime needed): the server's process tree ends within about twice
    /// the grace, and is reaped. `close` waits for it instead.
    fn drop(&mut self) {
        if let Some(conn) = self.conn.take() {
            if self.closed {
                return; // its Closed was taken: dropped without waiting
            }
            finish_in_a_thread(conn.into_inner(), self.grace);
        }
    }
}

/// Drives a connection to its end on a thread of its own, the rest of its
/// events dropped: a transport dropped while open (no runtime needed).
pub(crate) fn finish_in_a_thread(mut conn: Connection, grace: Duration) {
    let _ = conn.close(grace);
    let finish = move || {
        while let Ok(Some(event)) = conn.next_event(None) {
            if matches!(event, Event::Closed) {
                break;
            }
        }
    };
    if let Err(e) = std::thread::Builder::new()
        .name("mcp-stdio-rmcp-close".into())
        .spawn(finish)
    {
        tracing::error!("mcp-stdio: no thread to finish the shutdown: {e}");
    }
}
