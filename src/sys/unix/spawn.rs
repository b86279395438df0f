//! The child's side of spawning a server: what runs between fork and exec
//! (async-signal-safe calls only), installed on a `std::process::Command`.
//! Linux's way; the portable POSIX build uses posix_spawn(3)
//! (`posix_spawn.rs`) but for `kill_on_host_exit`, which is Linux's only.

use std::ffi::c_int;
use std::io;
use std::os::unix::process::CommandExt;
use std::process::Command;

/// Makes the child that `command` starts a clean server: every descriptor
/// of the host from 3 up close-on-exec, 0-2 kept across the exec, every
/// signal at its default, an empty signal mask, and (Linux, with
/// `kill_on_host_exit`) SIGKILL when the spawning thread ends.
pub(crate) fn prepare_child(command: &mut Command, kill_on_host_exit: bool) {
    // The standard library gives the child the default SIGPIPE disposition,
    // but the signal mask of the thread that spawns (it no longer empties
    // it): a host that blocks SIGTERM (to take it with sigwait or a
    // signalfd) would start servers deaf to the SIGTERM of the shutdown.
    // The closure empties it.
    #[cfg(any(target_os = "linux", target_os = "android"))]
    let parent = std::process::id() as libc::pid_t;
    // SAFETY: the closure runs in the child between fork and exec and makes
    // only async-signal-safe calls (fcntl, close_range, prctl, getppid, sigaction,
    // _exit, sigemptyset, sigprocmask).
    unsafe {
        command.pre_exec(move || {
            close_on_exec_from_3();
            stdio_kept_on_exec();
            #[cfg(any(target_os = "linux", target_os = "android"))]
            if kill_on_host_exit {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                if libc::getppid() != parent {
                    libc::_exit(127); // the host is already gone
                }
            }
            let _ = kill_on_host_exit;
            default_signal_dispositions();
            let mut empty = std::mem::MaybeUninit::<libc::sigset_t>::uninit();
            libc::sigemptyset(empty.as_mut_ptr());
            if libc::sigprocmask(libc::SIG_SETMASK, empty.as_ptr(), std::ptr::null_mut()) != 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// Marks every descriptor from 3 up close-on-exec, in the child between
/// fork and exec (async-signal-safe calls only), so that none of the host's
/// leaks into the server, whatever flags the host gave them.
fn close_on_exec_from_3() {
    #[cfg(linux_apis)]
    {
        const CLOSE_RANGE_CLOEXEC: libc::c_uint = 1 << 2;
        // SAFETY: close_range(2) with CLOSE_RANGE_CLOEXEC only sets flags.
        let r =
            unsafe { libc::syscall(libc::SYS_close_range, 3u32, u32::MAX, CLOSE_RANGE_CLOEXEC) };
        if r == 0 {
            return;
        }
    }
    // SAFETY: sysconf is async-signal-safe.
    let max = unsafe { libc::sysconf(libc::_SC_OPEN_MAX) };
    let max = if max <= 0 {
        1024
    } else {
        max.min(1 << 16) as c_int
    };
    for fd in 3..max {
        // SAFETY: fcntl on a descriptor number; a closed one fails harmlessly.
        unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) };
    }
}

/// Clears close-on-exec on descriptors 0-2, in the child between fork and
/// exec (async-signal-safe calls only): they are exactly what the server
/// is given, and an inherited stderr that the host marked close-on-exec
/// would otherwise be closed by the exec.
fn stdio_kept_on_exec() {
    for fd in 0..3 {
        // SAFETY: fcntl(2) is async-signal-safe; a closed descriptor fails.
        unsafe {
            let flags = libc::fcntl(fd, libc::F_GETFD);
            if flags >= 0 && flags & libc::FD_CLOEXEC != 0 {
                libc::fcntl(fd, libc::F_SETFD, flags & !libc::FD_CLOEXEC);
            }
        }
    }
}

/// Sets every signal the host ignores back to its default, in the child
/// between fork and exec (async-signal-safe calls only): an exec keeps
/// ignored signals ignored, so a host that ignores SIGTERM or SIGINT (or
/// SIGPIPE, as most servers of sockets do) would start servers deaf to the
/// shutdown's SIGTERM, or unable to die of a broken pipe. Handled signals
/// need nothing: exec resets them. Node's `child_process.spawn` does the same.
fn default_signal_dispositions() {
    // 1..=64 covers Linux's real-time signals too; numbers a platform does
    // not have (or glibc keeps for itself) fail harmlessly.
    for sig in 1..=64 {
        if sig == libc::SIGKILL || sig == libc::SIGSTOP {
            continue;
        }
        let mut old = std::mem::MaybeUninit::<libc::sigaction>::zeroed();
        // SAFETY: sigaction(2) is async-signal-safe; a NULL new action only
        // reads the current one into `old`, which it may write.
        if unsafe { libc::sigaction(sig, std::ptr::null(), old.as_mut_ptr()) } != 0 {
            continue;
        }
        // SAFETY: sigaction succeeded and wrote `old`.
        let mut action = unsafe { old.assume_init() };
        if action.sa_sigaction == libc::SIG_IGN {
            action.sa_sigaction = libc::SIG_DFL;
            // SAFETY: as above; SIG_DFL is a valid disposition for any
            // signal but SIGKILL and SIGSTOP, which are skipped.
            unsafe { libc::sigaction(sig, &action, std::ptr::null_mut()) };
        }
    }
}
