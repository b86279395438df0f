//! When a spawned server's pending requests fail, and why: as soon as no
//! answer can come any more, not at the end of the shutdown. For every
//! platform; each `server.rs` tells it what it saw.
//!
//! - The server exited by itself (no signal or termination of ours): that
//!   is the reason (its exit status), and what its stdout holds is read
//!   first, so that an answer written before the exit is delivered.
//! - Its stdout ended: no answer can come. Its exit is waited for
//!   `STDOUT_LINGER` (a server that ends closes its stdout a moment before
//!   it exits), so that the failures say how it exited; then they come
//!   with "closed its stdout".
//! - It was closed by us, or a write to it failed: the reason the core
//!   already has stands, and the failures come when it exits or its stdout
//!   ends.

use std::time::{Duration, Instant};

use crate::end_reason::{EndReason, ServerExit};
use crate::error::Error;
use crate::transport::Transport;

/// How long after its stdout ended a server's exit is waited for before
/// its pending requests fail as "closed its stdout".
pub(crate) const STDOUT_LINGER: Duration = Duration::from_millis(200);

/// A server's side of when its pending requests fail.
#[derive(Debug, Default)]
pub(crate) struct Answers {
    /// When its stdout's end was noticed.
    stdout_ended_at: Option<Instant>,
    /// Reading what its stdout held at the exit was asked for.
    read_asked: bool,
    /// The core was told that no answer can come.
    failed: bool,
}

/// What a server saw of its process, for [`Answers::look`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct Seen {
    /// It exited (by itself or by our signals).
    pub(crate) exited: bool,
    /// How, when it exited by itself (no signal or termination of ours).
    pub(crate) by_itself: Option<ServerExit>,
    /// Its stdout ended.
    pub(crate) stdout_ended: bool,
}

impl Answers {
    /// Its stdout's end was noticed now (the first call counts).
    pub(crate) fn stdout_ended(&mut self, now: Instant) {
        self.stdout_ended_at.get_or_insert(now);
    }

    /// The pending requests were failed: no answer can come.
    pub(crate) fn failed(&self) -> bool {
        self.failed
    }

    /// When the wait for the exit after stdout's end is over, while it runs.
    pub(crate) fn next_deadline(&self) -> Option<Instant> {
        self.stdout_ended_at
            .filter(|_| !self.failed)
            .map(|at| at + STDOUT_LINGER)
    }

    /// Gives the core the reason (before the shutdown's close, which would
    /// say "closed by us") and, once no answer can come, has it fail the
    /// pending requests (after a last line without a newline, when stdout
    /// ended, became a line: it may be the answer). `Ok(true)`: read what
    /// the stdout holds first, then look again.
    pub(crate) fn look(
        &mut self,
        core: &mut Transport,
        seen: Seen,
        now: Instant,
    ) -> Result<bool, Error> {
        if let Some(exit) = seen.by_itself {
            core.set_end_reason(EndReason::ServerExited(exit));
        }
        if seen.stdout_ended {
            core.set_end_reason(EndReason::PeerClosed);
        }
        if self.failed {
            return Ok(false);
        }
        let linger_over = self.next_deadline().is_some_and(|at| at <= now);
        if !(seen.exited || linger_over) {
            return Ok(false);
        }
        if !seen.stdout_ended && !self.read_asked {
            self.read_asked = true;
            return Ok(true);
        }
        if seen.stdout_ended {
            core.finish_input()?;
        }
        core.fail_pending();
        self.failed = true;
        Ok(false)
    }
}
