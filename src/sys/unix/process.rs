//! A child process seen from its parent: its exit noticed without reaping
//! it (`waitid` with `WNOWAIT`: the zombie keeps its pid), reaping, signals
//! to its process group (by number, or through its pidfd on Linux), and a
//! short wait for its exit.

use std::ffi::c_int;
#[cfg(linux_apis)]
use std::ffi::c_uint;
#[cfg(linux_apis)]
use std::os::fd::FromRawFd;
use std::os::fd::{AsRawFd, BorrowedFd, OwnedFd};
use std::time::Duration;

use super::fd::last_errno;
#[cfg(linux_apis)]
use super::fd::move_above_stdio;

/// What a child's parent can see of it without reaping it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ChildState {
    /// Not exited, or exited but its status not to be had yet (a tracer
    /// holds it).
    Running,
    /// Exited with this code, not reaped.
    Exited(c_int),
    /// Ended by this signal, not reaped.
    Killed(c_int),
    /// Not a child of ours to wait for any more: reaped (by someone else,
    /// when we did not), its pid free.
    Gone,
}

/// How `pid` (a child of ours) stands, without reaping it.
pub(crate) fn peek(pid: libc::pid_t) -> ChildState {
    // SAFETY: `siginfo_t` is plain data; zeroed is a valid value, and
    // si_pid stays 0 when no child has a status to report.
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    // SAFETY: waits only for our own child, without blocking and without
    // reaping it (WNOWAIT); `info` is writable.
    let r = unsafe {
        libc::waitid(
            libc::P_PID,
            pid as libc::id_t,
            &mut info,
            libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
        )
    };
    if r != 0 {
        return if last_errno() == libc::ECHILD {
            ChildState::Gone
        } else {
            ChildState::Running // EINTR: look again later
        };
    }
    // SAFETY: waitid filled `info` (or left it zeroed).
    let (reported, code, status) = unsafe { (info.si_pid(), info.si_code, info.si_status()) };
    if reported != pid {
        ChildState::Running
    } else if code == libc::CLD_EXITED {
        ChildState::Exited(status)
    } else {
        ChildState::Killed(status)
    }
}

/// Reaps `pid` (a child of ours) if it has exited, without blocking. True
/// once it is no child of ours any more (reaped now, or before).
pub(crate) fn reap(pid: libc::pid_t) -> bool {
    let mut status = 0;
    // SAFETY: waits only for our own child, without blocking.
    let r = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
    r == pid || (r < 0 && last_errno() == libc::ECHILD)
}

/// Sends `signal` to the process group `pgid` by its number (ESRCH, when
/// the group is empty, is ignored). The caller has made sure the number is
/// still its child's group's.
pub(crate) fn signal_group(pgid: libc::pid_t, signal: c_int) {
    // SAFETY: kill(2) with a negative pid signals a process group; no memory.
    unsafe { libc::kill(-pgid, signal) };
}

/// `pidfd_send_signal` flag (Linux 6.9): the signal goes to the process
/// group the pidfd's process leads. (Not in the libc crate for every target.)
#[cfg(linux_apis)]
const PIDFD_SIGNAL_PROCESS_GROUP: c_uint = 1 << 2;

/// A pidfd for `pid` (Linux 5.3+), close-on-exec and above descriptor 2, or
/// `None` (an older kernel, another system, valgrind).
#[cfg(linux_apis)]
pub(crate) fn pidfd_open(pid: libc::pid_t) -> Option<OwnedFd> {
    // SAFETY: the pidfd_open system call takes a pid and flags; it returns a
    // new descriptor (close-on-exec) or -1.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    if fd < 0 {
        return None;
    }
    let fd = move_above_stdio(fd as c_int).ok()?;
    // SAFETY: a descriptor just made, owned by nothing else.
    Some(unsafe { OwnedFd::from_raw_fd(fd) })
}

#[cfg(not(linux_apis))]
pub(crate) fn pidfd_open(_pid: libc::pid_t) -> Option<OwnedFd> {
    None
}

/// Sends `signal` to the process group that the pidfd's process led when
/// it was started, whatever became of its number since (Linux 6.9+). False
/// when the kernel cannot (EINVAL before 6.9) or the group is empty.
pub(crate) fn pidfd_signal_group(pidfd: BorrowedFd<'_>, signal: c_int) -> bool {
    #[cfg(linux_apis)]
    return pidfd_send_signal(pidfd, signal, PIDFD_SIGNAL_PROCESS_GROUP);
    #[cfg(not(linux_apis))]
    return {
        let _ = (pidfd, signal);
        false
    };
}

/// Sends `signal` to the pidfd's process only (nothing once it is reaped).
pub(crate) fn pidfd_signal(pidfd: BorrowedFd<'_>, signal: c_int) {
    #[cfg(linux_apis)]
    pidfd_send_signal(pidfd, signal, 0);
    #[cfg(not(linux_apis))]
    let _ = (pidfd, signal);
}

#[cfg(linux_apis)]
fn pidfd_send_signal(pidfd: BorrowedFd<'_>, signal: c_int, flags: c_uint) -> bool {
    // SAFETY: the system call takes a descriptor, a signal number, a NULL
    // siginfo (the kernel fills one as kill(2) does) and flags.
    let r = unsafe {
        libc::syscall(
            libc::SYS_pidfd_send_signal,
            pidfd.as_raw_fd(),
            signal,
            std::ptr::null::<libc::siginfo_t>(),
            flags,
        )
    };
    r == 0
}

/// Waits until `fd` (a pidfd) is readable, or `timeout` (at least 1 ms);
/// without a descriptor, only the time.
pub(crate) fn wait_readable(fd: Option<BorrowedFd<'_>>, timeout: Duration) {
    let ms = timeout.as_millis().clamp(1, c_int::MAX as u128) as c_int;
    let mut set = libc::pollfd {
        fd: fd.map_or(-1, |fd| fd.as_raw_fd()), // a negative one is ignored: a sleep
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid pollfd entry.
    unsafe { libc::poll(&mut set, 1, ms) };
}
