//! The process behind a spawned transport: noticing its exit (a pidfd where
//! Linux has one, else `waitpid(WNOHANG)` on every turn of the loop),
//! reaping it, and the end of the shutdown sequence: SIGTERM to its process
//! group at the grace, SIGKILL at twice the grace.

use std::ffi::c_int;
use std::time::{Duration, Instant};

/// How often a wait looks at the process where no pidfd tells its exit.
pub(super) const POLL_EXIT: Duration = Duration::from_millis(20);

/// How long after SIGKILL its exit status is awaited before the end comes
/// without it (a process stuck in the kernel may take that long to die).
const REAP_AFTER_KILL: Duration = Duration::from_secs(1);

#[derive(Debug)]
pub(super) struct Child {
    /// The server, leader of its own process group (pgid == pid).
    pid: libc::pid_t,
    /// Readable once the process exited (Linux 5.3+), close-on-exec.
    pidfd: Option<c_int>,
    /// Its wait status, once reaped.
    status: Option<c_int>,
    /// When SIGTERM and SIGKILL go to the group (set by close).
    term_at: Option<Instant>,
    kill_at: Option<Instant>,
    termed: bool,
    killed: bool,
}

impl Child {
    pub(super) fn new(pid: libc::pid_t) -> Child {
        Child {
            pid,
            pidfd: pidfd_open(pid),
            status: None,
            term_at: None,
            kill_at: None,
            termed: false,
            killed: false,
        }
    }

    pub(super) fn pid(&self) -> libc::pid_t {
        self.pid
    }

    /// The descriptor to poll for its exit, while it has not been reaped.
    pub(super) fn pidfd(&self) -> Option<c_int> {
        self.pidfd.filter(|_| self.status.is_none())
    }

    /// Without a pidfd, a wait must look again at the latest then.
    pub(super) fn needs_polling(&self) -> bool {
        self.pidfd.is_none() && self.status.is_none()
    }

    /// Reaps it if it exited; true once reaped.
    pub(super) fn reap(&mut self) -> bool {
        if self.status.is_none() {
            let mut status = 0;
            // SAFETY: waits only for our own child, without blocking.
            let r = unsafe { libc::waitpid(self.pid, &mut status, libc::WNOHANG) };
            if r == self.pid {
                self.status = Some(status);
            } else if r < 0 && crate::ffi::fd::last_errno() == libc::ECHILD {
                // Reaped by someone else (a SIGCHLD handler of the host's, or
                // SIGCHLD ignored): gone, its status unknown.
                self.status = Some(-1);
            }
        }
        self.status.is_some()
    }

    pub(super) fn exited(&self) -> bool {
        self.status.is_some()
    }

    /// The group was sent SIGKILL and the server's status came (or did
    /// not come in `REAP_AFTER_KILL`): the end has come, whatever is left.
    pub(super) fn killed(&self, now: Instant) -> bool {
        self.killed
            && (self.status.is_some() || self.kill_at.is_some_and(|at| at + REAP_AFTER_KILL <= now))
    }

    /// The group was sent SIGKILL (its status may not have come yet).
    pub(super) fn kill_sent(&self) -> bool {
        self.killed
    }

    /// Schedules SIGTERM at `now + grace` and SIGKILL at `now + 2 grace`
    /// (the first call's schedule stands).
    pub(super) fn schedule(&mut self, grace: Duration, now: Instant) {
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
    pub(super) fn scheduled(&self) -> bool {
        self.term_at.is_some()
    }

    /// Sends what is due. The group is signalled even after its leader
    /// exited: a wrapper's children (`npx`, `uvx`) may still hold the pipes.
    pub(super) fn signal_due(&mut self, now: Instant) {
        if !self.termed && self.term_at.is_some_and(|at| at <= now) {
            self.termed = true;
            self.signal(libc::SIGTERM);
        }
        if !self.killed && self.kill_at.is_some_and(|at| at <= now) {
            self.killed = true;
            self.signal(libc::SIGKILL);
            self.reap();
        }
    }

    fn signal(&self, signal: c_int) {
        // SAFETY: kill(2) on our child's own group (ESRCH when it is empty).
        unsafe { libc::kill(-self.pid, signal) };
    }

    /// The next signal's time, while one is to come; after SIGKILL, the
    /// end of the wait for its status.
    pub(super) fn next_deadline(&self) -> Option<Instant> {
        if !self.termed {
            self.term_at
        } else if !self.killed {
            self.kill_at
        } else if self.status.is_none() {
            self.kill_at.map(|at| at + REAP_AFTER_KILL)
        } else {
            None
        }
    }

    /// For `MCP_EVENT_CLOSED`: the exit status, or -1.
    pub(super) fn exit_code(&self) -> i32 {
        match self.status {
            Some(s) if s >= 0 && libc::WIFEXITED(s) => libc::WEXITSTATUS(s),
            _ => -1,
        }
    }

    /// For `MCP_EVENT_CLOSED`: the signal that killed it, or 0.
    pub(super) fn term_signal(&self) -> i32 {
        match self.status {
            Some(s) if s >= 0 && libc::WIFSIGNALED(s) => libc::WTERMSIG(s),
            _ => 0,
        }
    }
}

impl Drop for Child {
    /// Never leaves a zombie: a child not reaped yet is killed with its group
    /// (unless it was already) and waited for.
    fn drop(&mut self) {
        if !self.reap() {
            if !self.killed {
                self.signal(libc::SIGKILL);
            }
            let mut status = 0;
            // SAFETY: waits for our own child, which was sent SIGKILL.
            while unsafe { libc::waitpid(self.pid, &mut status, 0) } < 0
                && crate::ffi::fd::last_errno() == libc::EINTR
            {}
        }
        if let Some(fd) = self.pidfd {
            // SAFETY: the child owns its pidfd; closed once.
            unsafe { libc::close(fd) };
        }
    }
}

/// A pidfd for `pid` (Linux 5.3+), or `None`.
#[cfg(any(target_os = "linux", target_os = "android"))]
fn pidfd_open(pid: libc::pid_t) -> Option<c_int> {
    // SAFETY: the pidfd_open system call takes a pid and flags; it returns a
    // new descriptor (close-on-exec) or -1.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    (fd >= 0).then_some(fd as c_int)
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
fn pidfd_open(_pid: libc::pid_t) -> Option<c_int> {
    None
}
