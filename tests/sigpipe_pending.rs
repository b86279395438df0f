//! `mcp_write_all` consumes exactly the SIGPIPE its own write raised, never
//! one that was pending before, with the caller's SIGPIPE blocked.
//!
//! A process-directed SIGPIPE stays pending only when every thread blocks
//! it, so this runs without a test harness, on the main thread alone (the
//! signal state is process-wide). Linux tells a thread's pending signals
//! from the process's; see `mcp_write_all`'s documentation for other systems,
//! whose fallback the portable POSIX build (`MCP_STDIO_PORTABLE_POSIX=1`) runs.

#[cfg(target_os = "linux")]
mod linux {
    use std::ffi::c_int;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use mcp_stdio::ffi::*;
    use McpStatus::*;

    static HANDLED: AtomicUsize = AtomicUsize::new(0);

    extern "C" fn count_sigpipe(_: c_int) {
        HANDLED.fetch_add(1, Ordering::SeqCst);
    }

    fn sigpipe_mask(how: c_int) {
        unsafe {
            let mut set = std::mem::zeroed::<libc::sigset_t>();
            libc::sigemptyset(&mut set);
            libc::sigaddset(&mut set, libc::SIGPIPE);
            assert_eq!(libc::pthread_sigmask(how, &set, std::ptr::null_mut()), 0);
        }
    }

    /// Where a SIGPIPE is pending, from `/proc/thread-self/status`: (this
    /// thread's own, the process's).
    fn pending() -> (bool, bool) {
        let status = std::fs::read_to_string("/proc/thread-self/status").unwrap();
        let has = |field: &str| {
            let hex = status.lines().find_map(|l| l.strip_prefix(field)).unwrap();
            u64::from_str_radix(hex.trim(), 16).unwrap() & (1 << (libc::SIGPIPE - 1)) != 0
        };
        (has("SigPnd:"), has("ShdPnd:"))
    }

    /// A write end whose reader is gone.
    fn broken_pipe() -> c_int {
        let mut fds = [0; 2];
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
        unsafe { libc::close(fds[0]) };
        fds[1]
    }

    enum Before {
        Nothing,
        ForTheProcess,
        ForThisThread,
    }

    /// With SIGPIPE blocked and `before` pending, writes to a broken pipe (with
    /// or without a deadline), unblocks, and returns how many SIGPIPEs ran the
    /// handler.
    fn handled_after(before: &Before, deadline: bool) -> Result<usize, String> {
        HANDLED.store(0, Ordering::SeqCst);
        sigpipe_mask(libc::SIG_BLOCK);
        unsafe {
            match before {
                Before::Nothing => {}
                Before::ForTheProcess => assert_eq!(libc::kill(libc::getpid(), libc::SIGPIPE), 0),
                Before::ForThisThread => {
                    assert_eq!(libc::pthread_kill(libc::pthread_self(), libc::SIGPIPE), 0)
                }
            }
        }
        let fd = broken_pipe();
        let status = unsafe {
            if deadline {
                mcp_write_all_deadline(fd, b"{}\n".as_ptr(), 3, 1000, std::ptr::null_mut())
            } else {
                mcp_write_all(fd, b"{}\n".as_ptr(), 3)
            }
        };
        unsafe { libc::close(fd) };
        let left = pending();
        sigpipe_mask(libc::SIG_UNBLOCK);
        if status != MCP_STATUS_BROKEN_PIPE {
            return Err(format!("status {status:?}"));
        }
        let expected_left = match before {
            Before::Nothing => (false, false),
            // Where a thread's pending signals cannot be told from the
            // process's (the portable POSIX build: macOS's way), the
            // documented fallback leaves the write's own pending too.
            Before::ForTheProcess if !cfg!(linux_apis) => (true, true),
            Before::ForTheProcess => (false, true),
            Before::ForThisThread => (true, false),
        };
        if left != expected_left {
            return Err(format!(
                "pending (thread, process) {left:?}, expected {expected_left:?}"
            ));
        }
        Ok(HANDLED.load(Ordering::SeqCst))
    }

    pub fn main() {
        unsafe {
            let mut action = std::mem::zeroed::<libc::sigaction>();
            action.sa_sigaction = count_sigpipe as *const () as usize;
            libc::sigemptyset(&mut action.sa_mask);
            assert_eq!(
                libc::sigaction(libc::SIGPIPE, &action, std::ptr::null_mut()),
                0
            );
        }
        let cases = [
            ("nothing pending before", Before::Nothing, 0),
            (
                "a SIGPIPE pending for the process",
                Before::ForTheProcess,
                if cfg!(linux_apis) { 1 } else { 2 },
            ),
            (
                "a SIGPIPE pending for this thread",
                Before::ForThisThread,
                1,
            ),
        ];
        let mut failed = 0;
        let mut passed = 0;
        for deadline in [false, true] {
            for (what, before, expected) in &cases {
                let function = if deadline {
                    "mcp_write_all_deadline"
                } else {
                    "mcp_write_all"
                };
                match handled_after(before, deadline) {
                    Ok(n) if n == *expected => {
                        passed += 1;
                        println!("{function}, {what}: ok, {n} handled after unblocking");
                    }
                    Ok(n) => {
                        failed += 1;
                        println!("{function}, {what}: FAILED: {n} handled, expected {expected}");
                    }
                    Err(why) => {
                        failed += 1;
                        println!("{function}, {what}: FAILED: {why}");
                    }
                }
            }
        }
        println!("{passed} passed, {failed} failed");
        std::process::exit(i32::from(failed > 0));
    }
}

fn main() {
    #[cfg(target_os = "linux")]
    linux::main();
}
