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
    /// A SIGPIPE was already pending for this very thread: the one a failed
    /// write raises merges into it (standard signals do not queue), so there
    /// is nothing of ours to consume.
    thread_had_one: bool,
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

/// SIGPIPE is pending for this thread or for the whole process.
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
        // SAFETY: pthread_sigmask wrote the previous mask.
        let old_mask = unsafe { old_mask.assume_init() };
        // SAFETY: a valid, initialised set.
        let was_blocked = unsafe { libc::sigismember(&old_mask, libc::SIGPIPE) } == 1;
        SigpipeGuard {
            old_mask,
            // Only a thread that had SIGPIPE blocked can have one pending
            // (unblocked, it would have been delivered), so only then is it
            // worth asking: the usual write costs two system calls, not three.
            thread_had_one: was_blocked && sigpipe_pending() && pending_for_this_thread(),
        }
    }

    /// Call after a write failed with EPIPE: takes away the SIGPIPE it raised
    /// for this thread, so that unblocking it later delivers nothing, and
    /// leaves alone any SIGPIPE that was pending before. The write's signal
    /// is directed at this thread, and taking a signal takes the thread's own
    /// pending ones before the process's, so a process-wide SIGPIPE pending
    /// from before stays.
    pub(crate) fn consume_raised(&self) {
        if self.thread_had_one || !sigpipe_pending() {
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

/// Is a SIGPIPE pending for this thread itself (not only for the process)?
/// Linux tells in `/proc/thread-self/status` (`SigPnd`: the thread's own,
/// `ShdPnd`: the process's). Where that cannot be read, the answer is yes:
/// leaving the write's signal pending is the safe mistake, taking the
/// caller's would lose it.
fn pending_for_this_thread() -> bool {
    #[cfg(linux_apis)]
    if let Ok(status) = std::fs::read_to_string("/proc/thread-self/status") {
        let mask = status
            .lines()
            .find_map(|line| line.strip_prefix("SigPnd:"))
            .and_then(|hex| u64::from_str_radix(hex.trim(), 16).ok());
        if let Some(mask) = mask {
            return mask & (1 << (libc::SIGPIPE - 1)) != 0;
        }
    }
    true
}

impl Drop for SigpipeGuard {
    fn drop(&mut self) {
        // SAFETY: restores this thread's own previous mask.
        unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &self.old_mask, ptr::null_mut()) };
    }
}
