//! A spawned server under supervision on Windows: its stderr drained into
//! lines, its exit noticed through its process handle, the shutdown run,
//! and the transport's core told when the server is gone.
//!
//! The shutdown, as there is no SIGTERM: the server's stdin is closed (the
//! MCP way to ask a stdio server to exit), and if it has not exited at the
//! grace its Job Object is terminated: the server and everything it
//! started. Its end then comes once its exit is seen (at most 1 s later).
//! A server that exits by itself gets the same with a 2 s grace: its
//! output is read until its streams end, but no longer than that (a
//! grandchild that holds the pipes open dies with the job). Dropping the
//! server closes the job, which kills what is left in it.

use std::os::windows::io::{AsHandle, BorrowedHandle};
use std::time::{Duration, Instant};

use crate::end_reason::ServerExit;
use crate::error::Error;
use crate::process::answers::{Answers, Seen};
use crate::process::stderr::StderrLines;
use crate::sys::windows::job::Job;
use crate::sys::windows::spawn::Started;
use crate::transport::Transport;

/// The grace of the close that begins when a server exits by itself.
const EXIT_GRACE: Duration = Duration::from_secs(2);

/// How long after the job's termination the exit is awaited before the end
/// comes without it.
const EXIT_AFTER_TERMINATE: Duration = Duration::from_secs(1);

/// The exit code the job's processes are given when it is terminated: 1,
/// as `std::process::Child::kill` gives.
pub(crate) const TERMINATED: u32 = 1;

/// A spawned server: the process, its job, its stderr.
#[derive(Debug)]
pub(crate) struct Server {
    /// `None` unless stderr comes as events.
    stderr: Option<StderrLines>,
    /// Its stdout ended.
    stdout_ended: bool,
    /// When its pending requests fail.
    answers: Answers,
    /// `receive_end` was given to the core: the end is under way.
    ended: bool,
    /// An unexpected end is the restarter's: the core is not closed, and
    /// not ended, when the server goes (see [`gone`](Server::gone)).
    restart: bool,
    /// Its exit code, once it exited.
    exit: Option<u32>,
    /// When the job is terminated (set by a close, or by its exit).
    terminate_at: Option<Instant>,
    /// When it was terminated.
    terminated_at: Option<Instant>,
    process: Started,
    /// Last: closing it kills whatever is left in it.
    job: Job,
}

impl Server {
    /// The server just started in `job`, its stderr pipe when it comes as
    /// lines.
    pub(crate) fn new(process: Started, job: Job, stderr: Option<StderrLines>) -> Server {
        Server {
            stderr,
            stdout_ended: false,
            answers: Answers::default(),
            ended: false,
            restart: false,
            exit: None,
            terminate_at: None,
            terminated_at: None,
            process,
            job,
        }
    }

    pub(crate) fn pid(&self) -> u32 {
        self.process.pid
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

    /// The handles to wait on: stderr's read in flight, and the process
    /// until its exit is seen.
    pub(crate) fn wait_handles(&self) -> impl Iterator<Item = BorrowedHandle<'_>> + '_ {
        let stderr = self.stderr.as_ref().and_then(StderrLines::event);
        let process = self
            .exit
            .is_none()
            .then(|| self.process.process.as_handle());
        stderr.into_iter().chain(process)
    }

    /// The next time the process needs looking at: the termination due,
    /// or the end of the wait for its exit after it.
    pub(crate) fn next_deadline(&self, _now: Instant) -> Option<Instant> {
        let shutdown = match self.terminated_at {
            None => self.terminate_at,
            Some(at) if self.exit.is_none() => Some(at + EXIT_AFTER_TERMINATE),
            Some(_) => None,
        };
        [shutdown, self.answers.next_deadline()]
            .into_iter()
            .flatten()
            .min()
    }

    /// A new call begins: the stderr line lent by the last event goes.
    pub(crate) fn begin_call(&mut self) {
        if let Some(stderr) = &mut self.stderr {
            stderr.begin_call();
        }
    }

    /// `close` was called: the job is terminated at the grace; no restart.
    pub(crate) fn on_close(&mut self, grace: Duration, now: Instant) {
        self.restart = false;
        if self.terminate_at.is_none() {
            self.terminate_at = Some(now + grace);
        }
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

    /// Makes way for the server started in its place: its job is
    /// terminated now (and closed at drop), with whatever is left in it.
    pub(crate) fn retire(self) {
        let _ = self.job.terminate(TERMINATED);
    }

    fn look_at_exit(&mut self) {
        if self.exit.is_none() {
            self.exit = self.process.exit_code().ok().flatten();
        }
    }

    /// Drains stderr, notices the exit, terminates the job when due, and
    /// ends the transport when the server is gone: exited and its pipes
    /// ended, or its job terminated and its exit seen (or not seen within
    /// 1 s). A server that exits by itself, closes its stdout or stops
    /// reading begins the close.
    ///
    /// `Ok(true)`: the server exited, or the job was terminated, just now;
    /// the caller reads what its stdout still holds, then calls again.
    pub(crate) fn supervise(&mut self, core: &mut Transport) -> Result<bool, Error> {
        // Gone and the restarter's: nothing more is read from it (its
        // stderr lines read so far are still given), so that what is left
        // of it cannot hold the restart back.
        if self.ended || self.gone() {
            return Ok(false);
        }
        let now = Instant::now();
        if let Some(stderr) = &mut self.stderr {
            stderr.drain();
        }
        let exited_before = self.exit.is_some();
        self.look_at_exit();
        // Exited just now: what it wrote to stderr before is read before
        // its requests fail (as far as its pipe's reads have completed).
        if self.exit.is_some() && !exited_before {
            if let Some(stderr) = &mut self.stderr {
                stderr.drain();
            }
        }
        // Why it ends, and the failures once no answer can come.
        let seen = Seen {
            exited: self.exit.is_some(),
            by_itself: self
                .exit
                .filter(|_| self.terminated_at.is_none())
                .map(|code| ServerExit {
                    code: Some(code as i32),
                    signal: None,
                    before_first_message: false,
                }),
            stdout_ended: self.stdout_ended,
        };
        if self.answers.look(core, seen, now)? {
            return Ok(true);
        }
        if self.gone() {
            return Ok(false); // the restarter's from here on
        }
        // When it is to be restarted, only the termination is scheduled:
        // it may still run.
        let went_away = self.exit.is_some() || self.stdout_ended || core.closing();
        if went_away && self.terminate_at.is_none() {
            if !self.restart {
                core.close(EXIT_GRACE, now)?;
            }
            self.terminate_at = Some(now + EXIT_GRACE);
        }
        if self.terminated_at.is_none() && self.terminate_at.is_some_and(|at| at <= now) {
            // Whatever went wrong, the job's close at drop still kills the
            // tree; the end does not wait for it.
            let _ = self.job.terminate(TERMINATED);
            self.terminated_at = Some(now);
            self.look_at_exit();
            if !self.stdout_ended {
                return Ok(true);
            }
        }
        let pipes_ended = self.stdout_ended && self.stderr.as_ref().is_none_or(StderrLines::ended);
        let terminated = self
            .terminated_at
            .is_some_and(|at| self.exit.is_some() || at + EXIT_AFTER_TERMINATE <= now);
        if terminated || (self.exit.is_some() && pipes_ended) {
            core.receive_end()?;
            self.ended = true;
            // What is left in its job (a child that outlived it, holding
            // none of the pipes) ends with the transport, as on POSIX, not
            // only when the connection is dropped.
            let _ = self.job.terminate(TERMINATED);
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

    /// Its exit code (`-1`: not known); a code above `i32::MAX` (an
    /// `NTSTATUS` such as `0xC0000005`) comes as the same 32 bits.
    pub(crate) fn exit_code(&self) -> i32 {
        self.exit.map_or(-1, |code| code as i32)
    }

    /// No signals on Windows.
    pub(crate) fn term_signal(&self) -> i32 {
        0
    }
}
