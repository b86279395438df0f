//! A spawned server started again when it ends unexpectedly (its
//! command's [`RestartPolicy`]): the decision when it goes, the wait, the
//! swap of its I/O for a new server's, and what
//! [`Event::Restarted`](crate::Event::Restarted) says. The same on every
//! platform; each platform's `open.rs` gives `Io::spawn`.
//!
//! The order a host sees: the old server's stderr lines read before it
//! went, the lines it wrote before it went, a failure for every request
//! pending (sends are refused with [`Error::Restarting`] from then on),
//! then after the backoff `Restarted`, and the new server's events.

use std::time::{Duration, Instant};

use super::driver::Exit;
use super::io::Io;
use super::{Connection, Inner};
use crate::end_reason::EndReason;
use crate::error::Error;
use crate::process::command::Command;
use crate::process::restart::{RestartPolicy, Restarts};
use crate::process::Server;
use crate::transport::Transport;

/// How long lines still coming from what is left of the old server (a
/// grandchild holding its stdout) may hold a due restart back.
const LEFT_LINES_GRACE: Duration = Duration::from_secs(1);

/// A connection's restarts: the command, the policy's count, and the
/// restart to come.
#[derive(Debug)]
pub(crate) struct Restarter {
    cmd: Command,
    /// Linux's PDEATHSIG and Windows' console window, as at the first start.
    start: (bool, bool),
    restarts: Restarts,
    /// The server went: the new one starts at this instant, once the
    /// events of the old one's end are given.
    due: Option<Instant>,
    /// Why the last restart could not start the server (the connection
    /// then ended as without a policy).
    failed: Option<Error>,
}

/// What a look at the restart to come found.
#[derive(Debug)]
pub(crate) enum Restart {
    /// None is due (or none is to come).
    NotNow,
    /// The server could not be started: the old one's end runs as without
    /// a policy (supervise it again now).
    GaveUp,
    /// Done: the new server runs.
    Done(Restarted),
}

/// A restart done: what [`Event::Restarted`](crate::Event::Restarted)
/// says, and how the server before it ended (the C face's `exit_code` and
/// `term_signal`).
#[derive(Debug)]
pub(crate) struct Restarted {
    pub(crate) pid: u32,
    pub(crate) attempt: u32,
    pub(crate) reason: EndReason,
    pub(crate) exit: Exit,
}

impl Restarter {
    pub(crate) fn new(cmd: Command, start: (bool, bool), policy: RestartPolicy) -> Restarter {
        Restarter {
            cmd,
            start,
            restarts: Restarts::new(policy),
            due: None,
            failed: None,
        }
    }

    /// When the restart to come is due.
    pub(crate) fn due(&self) -> Option<Instant> {
        self.due
    }

    /// The restarts done.
    pub(crate) fn done(&self) -> u32 {
        self.restarts.done()
    }

    /// Why the last restart could not start the server.
    pub(crate) fn failed(&self) -> Option<&Error> {
        self.failed.as_ref()
    }

    /// Looks, right after `server` was supervised, whether it went and is
    /// ours (once per end): the restart is scheduled (sends refused with
    /// [`Error::Restarting`] meanwhile), or the policy gives up and the
    /// server's end runs as without one: `true`, supervise it again now.
    #[must_use]
    pub(crate) fn plan(&mut self, core: &mut Transport, server: &mut Server, now: Instant) -> bool {
        if self.due.is_some() || !server.gone() {
            return false;
        }
        match self.restarts.on_exit(now) {
            Ok(wait) => {
                self.due = Some(now.checked_add(wait).unwrap_or(now + LONGEST_WAIT));
                core.set_restarting(true);
                false
            }
            Err(_) => {
                self.give_up(core, server);
                true
            }
        }
    }

    /// No restart from now on: the server's end runs as without a policy.
    fn give_up(&mut self, core: &mut Transport, server: &mut Server) {
        server.set_restart(false);
        self.cancel(core);
    }

    /// The host closes: the restart to come, if any, does not come (the
    /// server was told by its own `on_close`).
    pub(crate) fn cancel(&mut self, core: &mut Transport) {
        self.due = None;
        core.set_restarting(false);
    }
}

/// A wait too long for an `Instant`: a year.
const LONGEST_WAIT: Duration = Duration::from_secs(365 * 86_400);

impl Inner {
    /// The restarts done.
    pub(crate) fn restarts(&self) -> u32 {
        self.restarter.as_ref().map_or(0, |r| r.done())
    }

    /// Why the last restart could not start the server.
    pub(crate) fn restart_error(&self) -> Option<Error> {
        self.restarter.as_ref()?.failed().cloned()
    }

    /// Starts the server again when its restart is due and the events of
    /// the old one's end are given (its failures, its lines: those that
    /// keep coming from what is left of it hold the restart back
    /// `LEFT_LINES_GRACE` at most). The old I/O goes (what is left of the
    /// old server is killed) and the core starts a new stream. A start
    /// that fails gives up: the old server's end runs as without a policy,
    /// and [`Restarter::failed`] keeps why.
    pub(crate) fn restart_if_due(&mut self, now: Instant) -> Restart {
        let exit = self.exit();
        let Inner {
            core,
            io: current,
            restarter: Some(restarter),
            generation,
            ..
        } = self
        else {
            return Restart::NotNow;
        };
        let Some(due) = restarter.due.filter(|&due| due <= now) else {
            return Restart::NotNow;
        };
        let lines_over = !core.line_waiting() || due + LEFT_LINES_GRACE <= now;
        if !core.failures_given() || !lines_over {
            return Restart::NotNow;
        }
        let reason = core.end_reason().unwrap_or(EndReason::PeerClosed);
        let (kill_on_host_exit, console_window) = restarter.start;
        let mut io = match Io::spawn(&restarter.cmd, kill_on_host_exit, console_window) {
            Ok(io) => io,
            Err(e) => {
                if let Some(server) = current.as_mut().and_then(|io| io.process_mut()) {
                    restarter.give_up(core, server);
                }
                restarter.failed = Some(e);
                return Restart::GaveUp;
            }
        };
        let Some(server) = io.process_mut() else {
            return Restart::NotNow; // a spawn always has its process
        };
        server.set_restart(true);
        let pid = server.pid();
        if let Some(old) = current.replace(Box::new(io)) {
            old.retire();
        }
        core.reopen();
        restarter.due = None;
        let attempt = restarter.restarts.started();
        *generation = generation.wrapping_add(1);
        Restart::Done(Restarted {
            pid,
            attempt,
            reason,
            exit,
        })
    }
}

impl Connection {
    /// How many times the spawned server was started again by its
    /// command's [`RestartPolicy`]: after
    /// [`Event::Restarted`](crate::Event::Restarted), that restart's
    /// `attempt`. 0 for a connection that never restarted.
    pub fn restarts(&self) -> u32 {
        self.shared().with(|inner| inner.restarts()).unwrap_or(0)
    }

    /// Why the last restart could not start the server
    /// ([`Error::SpawnFailed`], say: the program was removed): the
    /// connection then ended as without a policy, with the reason of the
    /// exit before.
    pub fn restart_error(&self) -> Option<Error> {
        self.shared()
            .with(|inner| inner.restart_error())
            .ok()
            .flatten()
    }
}
