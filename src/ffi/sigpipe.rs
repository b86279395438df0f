//! Writing to a closed pipe must not kill the host.
//!
//! write(2) to a pipe whose reader is gone raises SIGPIPE, whose default
//! action ends the process. [`SigpipeGuard`] blocks SIGPIPE for the calling
//! thread only while the library writes, and consumes the one its own write
//! raised, so the host sees `MCP_STATUS_BROKEN_PIPE` and lives on, whatever
//! its signal disposition. Process-wide state (the disposition) is never
//! touched, so this is thread-safe.

use std::mem::MaybeUninit;
use std::ptr;

/// SIGPIPE blocked for this thread while the guard lives.
pub(crate) struct SigpipeGuard {
    old_mask: libc::sigset_t,
    /// SIGPIPE was already pending for this thread before: not ours to consume.
    was_pending: bool,
}

fn sigpipe_set() -> libc::sigset_t {
    let mut set = MaybeUninit::<libc::sigset_t>::uninit();
    // SAFETY: sigemptyset initialises the set; sigaddset with a valid signal cannot fail.
    unsafe {
        libc::sigemptyset(set.as_mut_ptr());
        libc::sigaddset(set.as_mut_ptr(), libc::SIGPIPE);
        set.assume_init()
    }
}

fn sigpipe_pending() -> bool {
    let mut pending = MaybeUninit::<libc::sigset_t>::uninit();
    // SAFETY: sigpending fills the set it is given.
    unsafe {
        libc::sigpending(pending.as_mut_ptr()) == 0
            && libc::sigismember(pending.as_ptr(), libc::SIGPIPE) == 1
    }
}

impl SigpipeGuard {
    pub(crate) fn new() -> SigpipeGuard {
        let block = sigpipe_set();
        let mut old_mask = MaybeUninit::<libc::sigset_t>::uninit();
        // SAFETY: valid sets; pthread_sigmask only changes this thread's mask.
        unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, &block, old_mask.as_mut_ptr()) };
        SigpipeGuard {
            // SAFETY: pthread_sigmask wrote the previous mask.
            old_mask: unsafe { old_mask.assume_init() },
            was_pending: sigpipe_pending(),
        }
    }

    /// Call after a write failed with EPIPE: takes away the SIGPIPE it raised
    /// for this thread, so that unblocking it later delivers nothing.
    pub(crate) fn consume_raised(&self) {
        if self.was_pending || !sigpipe_pending() {
            return;
        }
        let set = sigpipe_set();
        let zero = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: valid set and timeout; a pending SIGPIPE is taken at once.
        // On Apple systems (no sigtimedwait) sigwait does the same for a pending signal.
        #[cfg(not(target_vendor = "apple"))]
        unsafe {
            libc::sigtimedwait(&set, ptr::null_mut(), &zero)
        };
        #[cfg(target_vendor = "apple")]
        {
            let _ = zero;
            let mut signal = 0;
            // SAFETY: SIGPIPE is pending (checked above), so sigwait returns at once.
            unsafe { libc::sigwait(&set, &mut signal) };
        }
    }
}

impl Drop for SigpipeGuard {
    fn drop(&mut self) {
        // SAFETY: restores this thread's own previous mask.
        unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &self.old_mask, ptr::null_mut()) };
    }
}
