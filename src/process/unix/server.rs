//! A spawned server under supervision: its stderr drained into lines, its
//! exit noticed, the shutdown sequence run, and the transport's core told
//! when the server is gone.

use std::ffi::c_int;
use std::os::fd::OwnedFd;
use std::time::{Duration, Instant};

use super::child::{Child, POLL_EXIT};
use crate::error::Error;
use crate::process::answers::{Answers, Seen};
use crate::process::stderr::StderrLines;
use crate::sys::unix::fd::poll;
use crate::transport::Transport;

/// The grace of the close that begins when a server exits by itself.
const EXIT_GRACE: Duration = Duration::from_secs(2);

/// A spawned server: the process and its stderr.
#[derive(Debug)]
pub(crate) struct Server {
    /// `None` unless stderr comes as events.
    stderr: Option<StderrLines>,
    /// Its stdout ended (the transport's end waits for the rest).
    stdout_ended: bool,
    /// When its pending requests fail.
    answers: Answers,
    /// `receive_end` was given to the core: the end is under way.
    ended: bool,
    /// An unexpected end is the restarter's: the core is not closed, and
    /// not ended, when the server goes (see [`gone`](Server::gone)).
    restart: bool,
    /// What a poll last said of stderr and the exit; `None` at the start of
    /// a call (the caller may have waited elsewhere): asked then with a
    /// poll that does not wait. So a round trip reads an empty stderr and
    /// asks for the exit status at most once, not on every turn.
    ready: Option<Ready>,
    /// Last: dropped after the pipes are closed (kills and reaps if needed).
    child: Child,
}

/// Which of a server's descriptors have something: its stderr (bytes, or
/// its end), its pidfd (the exit).
#[derive(Debug, Clone, Copy)]
struct Ready {
    stderr: bool,
    exit: bool,
}

/// Whether a poll entry says the descriptor has something (bytes, its end,
/// an error: a read or waitpid will tell which).
fn has_something(p: &libc::pollfd) -> bool {
    p.revents & (libc::POLLIN | libc::POLLHUP | libc::POLLERR | libc::POLLNVAL) != 0
}

impl Server {
    /// The server `pid` just started, its stderr pipe when it comes as
    /// lines (non-blocking).
    pub(crate) fn new(pid: libc::pid_t, stderr: Option<OwnedFd>) -> Server {
        Server {
            stderr: stderr.map(StderrLines::new),
            stdout_ended: false,
            answers: Answers::default(),
            ended: false,
            restart: false,
            ready: None,
            child: Child::new(pid),
        }
    }

    pub(crate) fn pid(&self) -> u32 {
        self.child.pid() as u32
    }

    pub(crate) fn stderr_dropped(&self) -> u64 {
        self.stderr.as_ref().map_or(0, StderrLines::dropped)
    }

    /// The last lines of its stderr, when the library reads it.
    pub(crate) fn stderr_tail(&self) -> Option<&crate::process::stderr::Tail> {
        self.stderr.as_ref().map(StderrLines::tail)
    }

    pub(crate) fn stdout_ended(&mut self) {
        self.stdout_ended = true;
        self.answers.stdout_ended(Instant::now());
    }

    /// The descriptors to wait on: stderr, and the pidfd.
    pub(crate) fn poll_fds(&self) -> impl Iterator<Item = c_int> + '_ {
        self.stderr
            .as_ref()
            .and_then(StderrLines::fd)
            .into_iter()
            .chain(self.child.pidfd())
    }

    /// The next time the process needs looking at: a signal due, the
    /// next look where no pidfd tells the exit, or the end of the wait for
    /// the exit after stdout ended.
    pub(crate) fn next_deadline(&self, now: Instant) -> Option<Instant> {
        let poll = self.child.needs_polling().then(|| now + POLL_EXIT);
        [
            self.child.next_deadline(),
            poll,
            self.answers.next_deadline(),
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// A new call begins: the stderr line lent by the last event goes, and
    /// what the last poll said is stale.
    pub(crate) fn begin_call(&mut self) {
        if let Some(stderr) = &mut self.stderr {
            stderr.begin_call();
        }
        self.ready = None;
    }

    /// What the wait's poll said of the process's descriptors (`set`: the
    /// entries it polled).
    pub(crate) fn note_poll(&mut self, set: &[libc::pollfd]) {
        let said = |fd: Option<c_int>| {
            fd.is_some_and(|fd| set.iter().any(|p| p.fd == fd && has_something(p)))
        };
        self.ready = Some(Ready {
            stderr: said(self.stderr.as_ref().and_then(StderrLines::fd)),
            exit: said(self.child.pidfd()),
        });
    }

    /// Asks, without waiting, which of stderr and the pidfd have something.
    fn probe(&self) -> Ready {
        let stderr = self.stderr.as_ref().and_then(StderrLines::fd);
        let mut set = [stderr, self.child.pidfd()].map(|fd| libc::pollfd {
            fd: fd.unwrap_or(-1), // poll ignores negative descriptors
            events: libc::POLLIN,
            revents: 0,
        });
        if poll(&mut set, 0).is_err() {
            return Ready {
                stderr: true,
                exit: true,
            }; // look at both
        }
        Ready {
            stderr: has_something(&set[0]),
            exit: has_something(&set[1]),
        }
    }

    /// `close` was called: SIGTERM at the grace, SIGKILL at twice it; no
    /// restart.
    pub(crate) fn on_close(&mut self, grace: Duration, now: Instant) {
        self.restart = false;
        self.child.schedule(grace, now);
    }

    /// Whether an unexpected end is left to the restarter (see
    /// [`gone`](Server::gone)) or ends the connection.
    pub(crate) fn set_restart(&mut self, yes: bool) {
        self.restart = yes;
    }

    /// It ended unexpectedly and is the restarter's: no answer can come
    /// (its pending requests failed), and the connection was not closed.
    pub(crate) fn gone(&self) -> bool {
        self.restart && self.answers.failed()
    }

    /// Makes way for the server started in its place: what is left of its
    /// process group (a wrapper's children, say) is sent SIGKILL while the
    /// group's id is still provably its own, and it is reaped.
    pub(crate) fn retire(mut self) {
        self.child.kill_group_now();
    }

    /// Reaps, signals what is due, drains stderr, fails the pending
    /// requests once no answer can come, and ends the transport when the
    /// server is gone: exited, reaped and its pipes ended, or its group
    /// sent SIGKILL. A server that exits by itself begins the close.
    ///
    /// `Ok(true)`: the server exited, or its group was sent SIGKILL, just
    /// now; the caller reads what its stdout still holds (an answer written
    /// before, say: it is delivered, not failed), then calls again.
    pub(crate) fn supervise(&mut self, core: &mut Transport) -> Result<bool, Error> {
        // Gone and the restarter's: nothing more is read from it (its
        // stderr lines read so far are still given), so that what is left
        // of it cannot hold the restart back.
        if self.ended || self.gone() {
            return Ok(false);
        }
        let now = Instant::now();
        let ready = self.ready.unwrap_or_else(|| self.probe());
        let mut more_stderr = false;
        if let Some(stderr) = self.stderr.as_mut().filter(|_| ready.stderr) {
            more_stderr = stderr.drain();
        }
        // Without a pidfd nothing tells the exit: a look every time.
        let exited_before = self.child.exited();
        let exited = if ready.exit || self.child.needs_polling() {
            self.child.check_exit(ready.exit)
        } else {
            exited_before
        };
        // Exited just now: what it wrote to stderr before is all in the
        // pipe (it may have come after the drain above), and is read
        // before its requests fail, so that its last words come first.
        if exited && !exited_before {
            if let Some(stderr) = &mut self.stderr {
                more_stderr |= stderr.drain();
            }
        }
        self.ready = Some(Ready {
            stderr: more_stderr,
            exit: false,
        });
        // Why it ends, and the failures once no answer can come.
        let seen = Seen {
            exited,
            by_itself: self.child.server_exit().filter(|_| !self.child.signalled()),
            stdout_ended: self.stdout_ended,
        };
        if self.answers.look(core, seen, now)? {
            return Ok(true);
        }
        if self.gone() {
            return Ok(false); // the restarter's from here on
        }
        // Exited by itself, closed its stdout (MCP's "the server closes its
        // output stream and exits"), or stopped reading (a refused write):
        // the shutdown sequence runs as after a close, for what is left
        // (the signals only, when it is to be restarted: it may still run).
        let went_away = exited || self.stdout_ended || core.closing();
        if went_away && !self.child.scheduled() {
            if !self.restart {
                core.close(EXIT_GRACE, now)?;
            }
            self.child.schedule(EXIT_GRACE, now);
        }
        let kill_sent_before = self.child.kill_sent();
        self.child.signal_due(now);
        if self.child.kill_sent() && !kill_sent_before && !self.stdout_ended {
            return Ok(true);
        }
        let pipes_ended = self.stdout_ended && self.stderr.as_ref().is_none_or(StderrLines::ended);
        if self.child.killed(now) || (self.child.exited() && pipes_ended) {
            core.receive_end()?;
            self.ended = true;
            // What is left of its group (a child that outlived it, holding
            // none of the pipes) is sent SIGKILL, as a Job Object's close
            // ends it on Windows; then no group signal is to come, and the
            // exited server's zombie, which kept its group's id reserved
            // until now, goes.
            self.child.kill_group_now();
        }
        Ok(false)
    }

    /// The end is under way: no answer can come (its pending requests
    /// failed), or the core was told the server is gone.
    pub(crate) fn ending(&self) -> bool {
        self.ended || self.answers.failed()
    }

    /// The next stderr line, lent until the next call.
    pub(crate) fn stderr_line(&mut self) -> Option<&[u8]> {
        self.stderr.as_mut()?.next_line()
    }

    pub(crate) fn exit_code(&self) -> i32 {
        self.child.exit_code()
    }

    pub(crate) fn term_signal(&self) -> i32 {
        self.child.term_signal()
    }
}
