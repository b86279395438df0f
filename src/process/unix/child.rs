//! The process behind a spawned transport: noticing its exit (a pidfd where
//! Linux has one, else a look every `POLL_EXIT`), the end of the shutdown
//! sequence (SIGTERM to its process group at the grace, SIGKILL at twice
//! the grace), and reaping it, never before its last group signal.
//!
//! The server's pid is also its process group's id. Reaping the server
//! frees that number, and a group signal sent after that may reach a
//! stranger that was given it (most likely the host's next server, itself a
//! group leader). So the exit is noticed without reaping (`waitid` with
//! `WNOWAIT`: the zombie keeps the number reserved), and the server is
//! reaped only once no group signal is to come. The group is signalled
//! through the pidfd where the kernel can (`PIDFD_SIGNAL_PROCESS_GROUP`,
//! Linux 6.9), which names the group the server led and no other; else by
//! its number, but only while the server is provably unreaped: once
//! someone else reaped it (a host's SIGCHLD handler, or SIGCHLD ignored),
//! only the server itself through its pidfd, or nothing.
//!
//! A server that cannot be reaped in time (a tracer holds it, or it is
//! stuck in the kernel) is not waited for: its pid goes on a list of waits
//! still owed, which every later spawn and free tries again (`reap_owed`),
//! so that no thread of ours is needed and no call blocks.

use std::ffi::c_int;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::end_reason::ServerExit;
use crate::sys::unix::process::{self as sys, ChildState};

/// How often a wait looks at the process where no pidfd tells its exit (or
/// the pidfd told it, but its status cannot be had yet).
pub(crate) const POLL_EXIT: Duration = Duration::from_millis(20);

/// How long after SIGKILL its exit status is awaited before the end comes
/// without it (a process stuck in the kernel may take that long to die).
const REAP_AFTER_KILL: Duration = Duration::from_secs(1);

/// How the server ended, once known.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Exit {
    /// It exited with this code.
    Code(c_int),
    /// A signal ended it.
    Signal(c_int),
    /// Gone, but its status was taken by someone else.
    Unknown,
}

#[derive(Debug)]
pub(crate) struct Child {
    /// The server, leader of its own process group (pgid == pid).
    pid: libc::pid_t,
    /// Readable once the process exited (Linux 5.3+), close-on-exec, above
    /// descriptor 2.
    pidfd: Option<OwnedFd>,
    /// How it ended, once noticed (it may not be reaped yet).
    exit: Option<Exit>,
    /// Its pid is no longer ours to wait for: reaped by us, or by someone
    /// else (then its number, and the group's, may already be reused).
    reaped: bool,
    /// Someone else reaped it: the group id is no longer provably ours.
    lost: bool,
    /// The pidfd said it ended but no status could be had (a tracer holds
    /// it): looked at every `POLL_EXIT` from now on, not through the pidfd,
    /// which would stay readable and make every wait return at once.
    pidfd_spent: bool,
    /// When SIGTERM and SIGKILL go to the group (set by close).
    term_at: Option<Instant>,
    kill_at: Option<Instant>,
    termed: bool,
    killed: bool,
}

impl Child {
    pub(crate) fn new(pid: libc::pid_t) -> Child {
        Child {
            pid,
            pidfd: sys::pidfd_open(pid),
            exit: None,
            reaped: false,
            lost: false,
            pidfd_spent: false,
            term_at: None,
            kill_at: None,
            termed: false,
            killed: false,
        }
    }

    pub(crate) fn pid(&self) -> libc::pid_t {
        self.pid
    }

    /// The descriptor to poll for its exit, until the exit is taken (an
    /// exited server's pidfd stays readable: polled again, it would make
    /// every wait return at once).
    pub(crate) fn pidfd(&self) -> Option<c_int> {
        self.pidfd
            .as_ref()
            .filter(|_| self.exit.is_none() && !self.pidfd_spent)
            .map(AsRawFd::as_raw_fd)
    }

    /// Nothing but a look now and then tells the exit.
    pub(crate) fn needs_polling(&self) -> bool {
        self.exit.is_none() && (self.pidfd.is_none() || self.pidfd_spent)
    }

    /// Looks whether it exited, without reaping it; true once it has.
    /// `pidfd_said`: its pidfd was reported readable.
    pub(crate) fn check_exit(&mut self, pidfd_said: bool) -> bool {
        if self.exit.is_some() {
            return true;
        }
        match sys::peek(self.pid) {
            ChildState::Exited(code) => self.exit = Some(Exit::Code(code)),
            ChildState::Killed(signal) => self.exit = Some(Exit::Signal(signal)),
            // Gone, but held (a tracer): its pidfd stays readable; look now
            // and then instead.
            ChildState::Running => self.pidfd_spent |= pidfd_said,
            // Reaped by someone else (a SIGCHLD handler of the host's, or
            // SIGCHLD ignored): gone, its status unknown, its pid free.
            ChildState::Gone => {
                self.exit = Some(Exit::Unknown);
                self.reaped = true;
                self.lost = true;
            }
        }
        self.exit.is_some()
    }

    pub(crate) fn exited(&self) -> bool {
        self.exit.is_some()
    }

    /// Reaps it once it exited. Called when no group signal is to come any
    /// more: the transport ended, or SIGKILL was sent.
    pub(crate) fn release(&mut self) {
        if self.reaped || !self.check_exit(false) {
            return;
        }
        self.reaped = sys::reap(self.pid);
    }

    /// The group was sent SIGKILL and the server's status came (or did
    /// not come in `REAP_AFTER_KILL`): the end has come, whatever is left.
    pub(crate) fn killed(&self, now: Instant) -> bool {
        self.killed
            && (self.exit.is_some() || self.kill_at.is_some_and(|at| at + REAP_AFTER_KILL <= now))
    }

    /// The group was sent SIGKILL (its status may not have come yet).
    pub(crate) fn kill_sent(&self) -> bool {
        self.killed
    }

    /// Schedules SIGTERM at `now + grace` and SIGKILL at `now + 2 grace`
    /// (the first call's schedule stands).
    pub(crate) fn schedule(&mut self, grace: Duration, now: Instant) {
        if self.term_at.is_none() {
            self.term_at = Some(
                now.checked_add(grace)
                    .unwrap_or(now + Duration::from_secs(86_400)),
            );
            self.kill_at = self.term_at.map(|at| {
                at.checked_add(grace)
                    .unwrap_or(at + Duration::from_secs(86_400))
            });
        }
    }

    /// The shutdown signals are scheduled.
    pub(crate) fn scheduled(&self) -> bool {
        self.term_at.is_some()
    }

    /// Sends what is due. The group is signalled even after its leader
    /// exited: a wrapper's children (`npx`, `uvx`) may still hold the
    /// pipes. After SIGKILL no group signal is to come: the server is
    /// reaped if it can be.
    pub(crate) fn signal_due(&mut self, now: Instant) {
        if !self.termed && self.term_at.is_some_and(|at| at <= now) {
            self.termed = true;
            self.signal_group(libc::SIGTERM);
        }
        if !self.killed && self.kill_at.is_some_and(|at| at <= now) {
            self.killed = true;
            self.signal_group(libc::SIGKILL);
            self.release();
        }
    }

    /// Sends SIGKILL to the group now, whatever was scheduled (the server
    /// is replaced), and reaps the server if it can.
    pub(crate) fn kill_group_now(&mut self) {
        if !self.killed {
            self.killed = true;
            self.kill_at = Some(Instant::now());
            self.signal_group(libc::SIGKILL);
        }
        self.release();
    }

    /// Sends `signal` to the server's process group, if that group is still
    /// provably the server's; else to what the pidfd can still reach.
    fn signal_group(&mut self, signal: c_int) {
        // The group through the pidfd: names the very group the server led,
        // whatever became of its number (Linux 6.9+; EINVAL before).
        if let Some(pidfd) = &self.pidfd {
            if sys::pidfd_signal_group(pidfd.as_fd(), signal) {
                return;
            }
        }
        // By number: only while the server is provably unreaped (running, or
        // its zombie keeps the number). A host that reaps behind our back
        // (a SIGCHLD handler's waitpid(-1), SIGCHLD ignored) is seen here as
        // ECHILD; only an exit and reaping in the microseconds between this
        // look and the kill could escape it.
        self.check_exit(false);
        if !self.reaped && !self.lost {
            sys::signal_group(self.pid, signal);
        } else if let Some(pidfd) = &self.pidfd {
            sys::pidfd_signal(pidfd.as_fd(), signal); // only the server itself
        }
    }

    /// The next signal's time, while one is to come; after SIGKILL, the
    /// end of the wait for its status.
    pub(crate) fn next_deadline(&self) -> Option<Instant> {
        if !self.termed {
            self.term_at
        } else if !self.killed {
            self.kill_at
        } else if self.exit.is_none() {
            self.kill_at.map(|at| at + REAP_AFTER_KILL)
        } else {
            None
        }
    }

    /// A signal of the shutdown's was sent to its group.
    pub(crate) fn signalled(&self) -> bool {
        self.termed || self.killed
    }

    /// How it exited, once it has, for an exit by itself (the transport's
    /// reason; `before_first_message` is the transport's to fill).
    pub(crate) fn server_exit(&self) -> Option<ServerExit> {
        let (code, signal) = match self.exit? {
            Exit::Code(code) => (Some(code), None),
            Exit::Signal(signal) => (None, Some(signal)),
            Exit::Unknown => (None, None),
        };
        Some(ServerExit {
            code,
            signal,
            before_first_message: false,
        })
    }

    /// For `MCP_EVENT_CLOSED`: the exit status, or -1.
    pub(crate) fn exit_code(&self) -> i32 {
        match self.exit {
            Some(Exit::Code(code)) => code,
            _ => -1,
        }
    }

    /// For `MCP_EVENT_CLOSED`: the signal that killed it, or 0.
    pub(crate) fn term_signal(&self) -> i32 {
        match self.exit {
            Some(Exit::Signal(signal)) => signal,
            _ => 0,
        }
    }
}

impl Drop for Child {
    /// Never leaves a zombie for long, never blocks for long: a server not
    /// reaped yet is killed with its group (unless it was already; an exited
    /// one's group too, for what is left in it), given `REAP_AFTER_KILL` at
    /// most, and if it still cannot be reaped its pid goes on the list of
    /// waits owed.
    fn drop(&mut self) {
        if !self.reaped {
            let now = Instant::now();
            // The wait after SIGKILL is `REAP_AFTER_KILL` from the kill, once:
            // a transport that already waited it out (CLOSED came without the
            // status) does not wait again here.
            let mut give_up = now;
            if !self.killed {
                let running = !self.check_exit(false);
                self.killed = true;
                self.signal_group(libc::SIGKILL);
                if running {
                    give_up = now + REAP_AFTER_KILL;
                }
            } else {
                give_up = self
                    .kill_at
                    .map_or(now, |at| (at + REAP_AFTER_KILL).max(now));
            }
            loop {
                self.release();
                if self.reaped || Instant::now() >= give_up {
                    break;
                }
                let left = give_up.saturating_duration_since(Instant::now());
                let pidfd = self.pidfd.as_ref().filter(|_| !self.pidfd_spent);
                sys::wait_readable(pidfd.map(AsFd::as_fd), left.min(POLL_EXIT));
            }
            if !self.reaped {
                owe_wait(self.pid);
            }
        }
    }
}

// ---- Waits owed ----

/// Servers that could not be reaped when their transport was freed.
static OWED: Mutex<Vec<libc::pid_t>> = Mutex::new(Vec::new());

/// Remembers that `pid` (our child, killed) is still to be reaped.
fn owe_wait(pid: libc::pid_t) {
    if let Ok(mut owed) = OWED.lock() {
        // A failed allocation leaves a zombie until the host exits: better
        // than blocking.
        if owed.try_reserve(1).is_ok() {
            owed.push(pid);
        }
    }
}

/// Reaps the servers of earlier transports that could not be reaped when
/// they were freed, those that can be now. Called at every spawn and free.
pub(crate) fn reap_owed() {
    let Ok(mut owed) = OWED.lock() else {
        return;
    };
    owed.retain(|&pid| !sys::reap(pid));
}
