//! The POSIX I/O helpers and signals, in a process of their own (these tests
//! change process-wide signal dispositions): no death by SIGPIPE, and reads
//! interrupted by a signal are retried.
#![cfg(all(unix, os_io, feature = "capi"))]

use std::ffi::c_int;
use std::sync::Mutex;
use std::thread;
use std::time::Duration;

use mcp_stdio::ffi::*;
use McpStatus::*;

/// The tests below change process-wide signal state: one at a time.
static SIGNALS: Mutex<()> = Mutex::new(());

fn pipe() -> (c_int, c_int) {
    let mut fds = [0; 2];
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    (fds[0], fds[1])
}

fn sigpipe_pending() -> bool {
    unsafe {
        let mut set = std::mem::zeroed::<libc::sigset_t>();
        libc::sigpending(&mut set);
        libc::sigismember(&set, libc::SIGPIPE) == 1
    }
}

#[test]
fn a_closed_peer_is_broken_pipe_not_death_by_sigpipe() {
    let _one = SIGNALS.lock().unwrap();
    // Rust programs ignore SIGPIPE; C hosts usually do not. Restore the
    // default (terminate the process) to prove mcp_write_all does not raise it.
    let previous = unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
    let (rd, wr) = pipe();
    unsafe { libc::close(rd) };
    let status = unsafe { mcp_write_all(wr, b"{}\n".as_ptr(), 3) };
    let errno = std::io::Error::last_os_error().raw_os_error();
    assert_eq!(status, MCP_STATUS_BROKEN_PIPE);
    assert_eq!(errno, Some(libc::EPIPE));
    assert!(!sigpipe_pending(), "the SIGPIPE it raised was consumed");
    // The thread's signal mask is as it was: SIGPIPE not blocked.
    unsafe {
        let mut mask = std::mem::zeroed::<libc::sigset_t>();
        libc::pthread_sigmask(libc::SIG_BLOCK, std::ptr::null(), &mut mask);
        assert_eq!(libc::sigismember(&mask, libc::SIGPIPE), 0);
        libc::close(wr);
        libc::signal(libc::SIGPIPE, previous);
    }
}

extern "C" fn ignore_signal(_: c_int) {}

#[test]
fn a_read_interrupted_by_a_signal_is_retried() {
    let _one = SIGNALS.lock().unwrap();
    unsafe {
        // A handler without SA_RESTART: a blocked read(2) fails with EINTR.
        let mut action = std::mem::zeroed::<libc::sigaction>();
        action.sa_sigaction = ignore_signal as *const () as usize;
        action.sa_flags = 0;
        libc::sigemptyset(&mut action.sa_mask);
        assert_eq!(
            libc::sigaction(libc::SIGUSR1, &action, std::ptr::null_mut()),
            0
        );
    }
    let (rd, wr) = pipe();
    let reader_thread = unsafe { libc::pthread_self() };
    let (tx, rx) = std::sync::mpsc::channel();
    let poker = thread::spawn(move || {
        rx.recv().unwrap();
        thread::sleep(Duration::from_millis(200)); // let it block in read(2)
        unsafe { libc::pthread_kill(reader_thread, libc::SIGUSR1) };
        thread::sleep(Duration::from_millis(100));
        assert_eq!(
            unsafe { mcp_write_all(wr, b"[7]\n".as_ptr(), 4) },
            MCP_STATUS_OK
        );
        unsafe { libc::close(wr) };
    });
    unsafe {
        let r = mcp_line_reader_new();
        tx.send(()).unwrap();
        let mut n = 0;
        assert_eq!(mcp_line_reader_read_fd(r, rd, &mut n), MCP_STATUS_OK);
        assert_eq!(n, 4);
        mcp_line_reader_free(r);
        libc::close(rd);
    }
    poker.join().unwrap();
}
