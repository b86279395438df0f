//! Servers that misbehave, spawned through the C ABI
//! (`mcp_transport_spawn`): one that never reads its stdin while the host
//! sends 50 MB, one that floods its stderr while answering, one that
//! ignores SIGTERM, one whose grandchild keeps the pipes open, one that
//! exits at once, one that prints junk and half a line and dies, a program
//! that does not exist; and 200 servers in a row. For each: how long the
//! shutdown took (printed, and bounded at about three times what the
//! contract says), the server reaped (no zombie: `waitpid(pid, WNOHANG)`
//! gives ECHILD after free), what it started killed with its process group,
//! and no descriptor left behind.
//!
//! The servers are `sh -c` scripts over the usual tools (sleep, cat, sed,
//! yes, head). Graces are 200 ms, so the whole file takes a few seconds
//! (two cases wait for the fixed 2 s graces of an exit and of free). The
//! tests take turns (one lock): they count this process's descriptors and
//! measure times, which other tests running meanwhile would disturb.
//! Run with `--nocapture` for the table of shutdown times.
#![cfg(all(unix, os_io, feature = "capi"))]

#[path = "fd_census/mod.rs"]
mod fd_census;

use std::ffi::CString;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use fd_census::Descriptors;
use mcp_stdio::ffi::*;
use McpStatus::*;

const MESSAGE: i32 = McpEventKind::MCP_EVENT_MESSAGE as i32;
const RESPONSE: i32 = McpEventKind::MCP_EVENT_RESPONSE as i32;
const REQUEST_FAILED: i32 = McpEventKind::MCP_EVENT_REQUEST_FAILED as i32;
const INVALID: i32 = McpEventKind::MCP_EVENT_INVALID as i32;
const STDERR: i32 = McpEventKind::MCP_EVENT_STDERR as i32;
const CLOSED: i32 = McpEventKind::MCP_EVENT_CLOSED as i32;
const PARSE_ERROR: i32 = McpMessageKind::MCP_MESSAGE_PARSE_ERROR as i32;

/// The grace of the closes here.
const GRACE_MS: u32 = 200;
const GRACE: Duration = Duration::from_millis(GRACE_MS as u64);
/// The grace of a server that exits by itself, and of free: 2 s.
const FIXED_GRACE: Duration = Duration::from_secs(2);

/// One test at a time: see the module's doc.
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

fn errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

/// Our child `pid` was reaped: no zombie left.
fn reaped(pid: i32) -> bool {
    let r = unsafe { libc::waitpid(pid, std::ptr::null_mut(), libc::WNOHANG) };
    r == -1 && errno() == libc::ECHILD
}

/// `pid` is gone: no such process, or a zombie that some other parent has
/// yet to reap (a grandchild, killed).
fn gone(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rfind(')')
            .and_then(|at| stat[at + 1..].trim_start().chars().next())
            .is_some_and(|state| state == 'Z' || state == 'X'),
    }
}

fn gone_within(pid: i32, limit: Duration) -> bool {
    let end = Instant::now() + limit;
    while !gone(pid) {
        if Instant::now() > end {
            return false;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    true
}

fn command(program: &str, args: &[&str]) -> *mut McpCommand {
    let program = CString::new(program).unwrap();
    let cmd = unsafe { mcp_command_new(program.as_ptr()) };
    assert!(!cmd.is_null());
    for arg in args {
        let arg = CString::new(*arg).unwrap();
        assert_eq!(unsafe { mcp_command_arg(cmd, arg.as_ptr()) }, MCP_STATUS_OK);
    }
    cmd
}

/// A spawned server.
struct Server {
    t: *mut McpTransport,
    pid: i32,
}

fn spawn(cmd: *mut McpCommand) -> Server {
    let mut t = std::ptr::null_mut();
    let st = unsafe { mcp_transport_spawn(cmd, 0, &mut t) };
    assert_eq!(st, MCP_STATUS_OK, "spawn: errno {}", errno());
    let pid = unsafe { mcp_transport_pid(t) };
    assert!(pid > 0);
    Server { t, pid }
}

/// `sh -c <script>`, its stderr as events.
fn spawn_sh(script: &str) -> Server {
    let cmd = command("sh", &["-c", script]);
    let server = spawn(cmd);
    unsafe { mcp_command_free(cmd) };
    server
}

fn new_event() -> McpEvent {
    // SAFETY: McpEvent is plain integers and pointers: all zeroes is a value.
    unsafe { std::mem::zeroed() }
}

/// The bytes an event points to (valid until the next receiving call).
fn data(ev: &McpEvent) -> Vec<u8> {
    if ev.data.is_null() || ev.len == 0 {
        return Vec::new();
    }
    unsafe { std::slice::from_raw_parts(ev.data, ev.len) }.to_vec()
}

/// What came until CLOSED.
#[derive(Debug, Default)]
struct Outcome {
    closed: bool,
    exit_code: i32,
    term_signal: i32,
    stderr: Vec<Vec<u8>>,
    invalid: Vec<(i32, Vec<u8>)>,
    messages: Vec<Vec<u8>>,
    responses: Vec<i64>,
    failed: Vec<i64>,
    /// The longest single `next_event` call.
    longest_call: Duration,
}

/// Takes every event until CLOSED, for at most `limit`.
fn run_to_closed(t: *mut McpTransport, limit: Duration) -> Outcome {
    let end = Instant::now() + limit;
    let mut out = Outcome::default();
    let mut ev = new_event();
    while !out.closed {
        let now = Instant::now();
        if now >= end {
            break;
        }
        let wait = (end - now).as_millis().min(1000) as i32 + 1;
        let st = unsafe { mcp_transport_next_event(t, wait, &mut ev) };
        out.longest_call = out
            .longest_call
            .max(now.elapsed().min(Duration::from_millis(wait as u64)));
        match st {
            MCP_STATUS_NO_MESSAGE => continue,
            MCP_STATUS_OK => {}
            other => panic!("next_event: {other:?}"),
        }
        match ev.kind {
            STDERR => out.stderr.push(data(&ev)),
            INVALID => out.invalid.push((ev.invalid_kind, data(&ev))),
            MESSAGE => out.messages.push(data(&ev)),
            RESPONSE => out.responses.push(ev.request_id),
            REQUEST_FAILED => out.failed.push(ev.request_id),
            CLOSED => {
                out.closed = true;
                out.exit_code = ev.exit_code;
                out.term_signal = ev.term_signal;
            }
            other => panic!("unexpected event kind {other}"),
        }
    }
    if out.closed {
        assert_eq!(
            unsafe { mcp_transport_next_event(t, 0, &mut ev) },
            MCP_STATUS_END_OF_STREAM
        );
    }
    out
}

/// Prints one row of the table of shutdown times and checks it against
/// what the contract says (`expected`), generously: at least `expected`
/// minus a little, at most three times it (and 300 ms for an expected 0).
fn shutdown_time(what: &str, took: Duration, expected: Duration) {
    println!(
        "shutdown | {what:<58} | expected ~{:>5} ms | took {:>5} ms",
        expected.as_millis(),
        took.as_millis()
    );
    let low = expected.saturating_sub(Duration::from_millis(30));
    let high = (expected * 3).max(Duration::from_millis(300));
    assert!(
        took >= low && took <= high,
        "{what}: the shutdown took {took:?}, want about {expected:?} (between {low:?} and {high:?})"
    );
}

/// Frees the transport and checks that the server was reaped.
fn free(server: Server) {
    unsafe { mcp_transport_free(server.t) };
    assert!(reaped(server.pid), "server {} left unreaped", server.pid);
}

/// The pid a script printed as its first stderr line.
fn pid_line(t: *mut McpTransport) -> i32 {
    let mut ev = new_event();
    let st = unsafe { mcp_transport_next_event(t, 5000, &mut ev) };
    assert_eq!(st, MCP_STATUS_OK);
    assert_eq!(ev.kind, STDERR);
    String::from_utf8(data(&ev))
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

// ---------------------------------------------------------------------------

/// Never reads its stdin while the host sends 50 MB: with a 1 MiB bound the
/// sends meet MCP_STATUS_WOULD_BLOCK and queue nothing more, the host stays
/// responsive (next_event(t, 0) returns at once), and close ends it at the
/// grace (SIGTERM), or at twice the grace (SIGKILL) when it ignores SIGTERM.
#[test]
fn a_server_that_never_reads_its_stdin() {
    let _serial = serial();
    let fds = Descriptors::now();
    for (script, signal, expected) in [
        ("exec sleep 1000", libc::SIGTERM, GRACE),
        ("trap '' TERM; exec sleep 1000", libc::SIGKILL, GRACE * 2),
    ] {
        let server = spawn_sh(script);
        let t = server.t;
        assert_eq!(
            unsafe { mcp_transport_set_max_queued(t, 1 << 20) },
            MCP_STATUS_OK
        );
        let params = format!("{{\"pad\":\"{}\"}}", "x".repeat(64 << 10));
        let line_len = params.len() + 50;
        let (mut attempted, mut accepted, mut refused) = (0usize, 0usize, 0usize);
        let mut longest = Duration::ZERO;
        let mut ev = new_event();
        let started = Instant::now();
        while attempted < 50_000_000 {
            let st =
                unsafe { mcp_transport_notify(t, c"fill".as_ptr(), params.as_ptr(), params.len()) };
            attempted += line_len;
            match st {
                MCP_STATUS_OK => accepted += line_len,
                MCP_STATUS_WOULD_BLOCK => refused += 1,
                other => panic!("notify: {other:?}"),
            }
            let call = Instant::now();
            let st = unsafe { mcp_transport_next_event(t, 0, &mut ev) };
            longest = longest.max(call.elapsed());
            assert_eq!(st, MCP_STATUS_NO_MESSAGE);
        }
        println!(
            "never reads ({script}): 50 MB offered in {:?}: {accepted} bytes taken, {refused} \
             sends refused, longest next_event(t, 0): {longest:?}",
            started.elapsed()
        );
        // The bound, plus what the pipe took (64 KiB by default, up to 1 MiB).
        assert!(refused > 700, "{refused} sends refused");
        assert!(accepted <= (2 << 20) + line_len, "{accepted} bytes taken");
        assert!(
            longest < Duration::from_millis(100),
            "next_event(t, 0) took {longest:?}"
        );

        let closing = Instant::now();
        assert_eq!(unsafe { mcp_transport_close(t, GRACE_MS) }, MCP_STATUS_OK);
        assert_eq!(
            unsafe { mcp_transport_notify(t, c"late".as_ptr(), std::ptr::null(), 0) },
            MCP_STATUS_CLOSED
        );
        let out = run_to_closed(t, Duration::from_secs(10));
        let took = closing.elapsed();
        assert!(out.closed);
        assert_eq!((out.exit_code, out.term_signal), (-1, signal));
        assert!(
            out.longest_call <= GRACE * 3,
            "a next_event call took {:?}",
            out.longest_call
        );
        shutdown_time(&format!("never reads stdin ({script})"), took, expected);
        free(server);
    }
    Descriptors::assert_none_left_since(&fds, "a_server_that_never_reads_its_stdin");
}

/// Writes 50 MB to stderr (from a process of its group) while it answers
/// 1000 requests: no deadlock, every answer arrives, the host stays
/// responsive; what stderr could not keep is counted.
#[test]
fn a_server_that_floods_stderr_while_answering() {
    let _serial = serial();
    let fds = Descriptors::now();
    let script = "yes 'a line of log that a chatty server writes, again and again, to its \
                  stderr, about two hundred bytes long, padded: .............................\
                  ..................................' | head -c 50000000 >&2 &
                  exec sed -u 's/.*\"id\":\\([0-9]*\\).*/{\"jsonrpc\":\"2.0\",\"id\":\\1,\"result\":{}}/'";
    let server = spawn_sh(script);
    let t = server.t;
    let started = Instant::now();
    let mut answered = vec![false; 1001];
    let (mut sent, mut got, mut stderr_lines, mut stderr_bytes) = (0i64, 0, 0u64, 0u64);
    let mut longest = Duration::ZERO;
    let mut ev = new_event();
    while got < 1000 {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "only {got} answers after 30 s"
        );
        // A window of 50 requests in flight.
        while sent < 1000 && sent - got < 50 {
            let mut id = 0;
            let st = unsafe {
                mcp_transport_request(t, c"echo".as_ptr(), std::ptr::null(), 0, 0, &mut id)
            };
            assert_eq!(st, MCP_STATUS_OK);
            sent += 1;
            assert_eq!(id, sent);
        }
        let call = Instant::now();
        let st = unsafe { mcp_transport_next_event(t, 1000, &mut ev) };
        longest = longest.max(call.elapsed());
        match st {
            MCP_STATUS_NO_MESSAGE => continue,
            MCP_STATUS_OK => {}
            other => panic!("next_event: {other:?}"),
        }
        match ev.kind {
            RESPONSE => {
                let id = ev.request_id as usize;
                assert!(!answered[id], "request {id} answered twice");
                answered[id] = true;
                got += 1;
            }
            STDERR => {
                stderr_lines += 1;
                stderr_bytes += ev.len as u64 + 1;
            }
            other => panic!(
                "unexpected event kind {other} ({:?})",
                String::from_utf8_lossy(&data(&ev))
            ),
        }
    }
    let answering = started.elapsed();
    let dropped = unsafe { mcp_transport_stderr_dropped(t) };
    println!(
        "stderr flood: 1000 answers in {answering:?}; meanwhile {stderr_lines} stderr lines \
         ({stderr_bytes} bytes) delivered, {dropped} bytes dropped; longest next_event: {longest:?}"
    );
    assert!(
        longest < Duration::from_millis(1500),
        "a next_event call took {longest:?}"
    );

    let closing = Instant::now();
    assert_eq!(unsafe { mcp_transport_close(t, GRACE_MS) }, MCP_STATUS_OK);
    let out = run_to_closed(t, Duration::from_secs(10));
    let took = closing.elapsed();
    assert!(out.closed && out.failed.is_empty() && out.responses.is_empty());
    let delivered: u64 = out.stderr.iter().map(|l| l.len() as u64 + 1).sum::<u64>() + stderr_bytes;
    let dropped = unsafe { mcp_transport_stderr_dropped(t) };
    println!(
        "stderr flood: in all {delivered} bytes of stderr delivered, {dropped} dropped, closed \
         with exit_code {} term_signal {}",
        out.exit_code, out.term_signal
    );
    // Never more than was written (the flood's last line, cut by head, has
    // no newline: counted one byte too many here); less when the flood was
    // still going at the grace and ended by SIGTERM.
    assert!(delivered + dropped <= 50_000_001);
    // The flood is usually over by now: sed ends at its stdin's end at once
    // (else SIGTERM at the grace ends the flood; the bound allows for it).
    shutdown_time(
        "floods stderr (sed answering, yes | head >&2)",
        took,
        Duration::ZERO,
    );
    free(server);
    Descriptors::assert_none_left_since(&fds, "a_server_that_floods_stderr_while_answering");
}

/// Ignores SIGTERM and does not end at its stdin's end: SIGKILL at twice
/// the grace, and CLOSED then, with term_signal 9.
#[test]
fn a_server_that_ignores_sigterm() {
    let _serial = serial();
    let fds = Descriptors::now();
    let server = spawn_sh("trap '' TERM; cat >/dev/null; echo 'stdin ended' >&2; exec sleep 1000");
    let t = server.t;
    let mut id = 0;
    assert_eq!(
        unsafe { mcp_transport_request(t, c"never".as_ptr(), std::ptr::null(), 0, 0, &mut id) },
        MCP_STATUS_OK
    );
    let closing = Instant::now();
    assert_eq!(unsafe { mcp_transport_close(t, GRACE_MS) }, MCP_STATUS_OK);
    let out = run_to_closed(t, Duration::from_secs(10));
    let took = closing.elapsed();
    assert!(out.closed);
    assert_eq!((out.exit_code, out.term_signal), (-1, libc::SIGKILL));
    assert_eq!(out.failed, vec![1]);
    assert_eq!(out.stderr, vec![b"stdin ended".to_vec()]); // the request, then stdin closed
    shutdown_time("ignores SIGTERM", took, GRACE * 2);
    free(server);

    // free on an open transport: a close with a 2 s grace, and it waits
    // (SIGKILL at 4 s at the latest).
    let server = spawn_sh("trap '' TERM; exec sleep 1000");
    let pid = server.pid;
    let freeing = Instant::now();
    unsafe { mcp_transport_free(server.t) };
    let took = freeing.elapsed();
    assert!(reaped(pid));
    shutdown_time(
        "ignores SIGTERM, freed open (2 s grace)",
        took,
        FIXED_GRACE * 2,
    );

    // free after close: the close's schedule stands.
    let server = spawn_sh("trap '' TERM; exec sleep 1000");
    let pid = server.pid;
    let freeing = Instant::now();
    assert_eq!(
        unsafe { mcp_transport_close(server.t, GRACE_MS) },
        MCP_STATUS_OK
    );
    unsafe { mcp_transport_free(server.t) };
    let took = freeing.elapsed();
    assert!(reaped(pid));
    shutdown_time("ignores SIGTERM, freed after close", took, GRACE * 2);
    Descriptors::assert_none_left_since(&fds, "a_server_that_ignores_sigterm");
}

/// A grandchild keeps the pipes open after the server ended: CLOSED comes
/// at the grace (SIGTERM to the group) or at twice it (SIGKILL, when the
/// grandchild ignores SIGTERM), and the grandchild is dead too.
#[test]
fn a_grandchild_that_keeps_the_pipes_open() {
    let _serial = serial();
    let fds = Descriptors::now();
    for (script, expected) in [
        ("sleep 1000 & echo $! >&2; exec cat", GRACE),
        (
            "trap '' TERM; sleep 1000 & echo $! >&2; exec cat",
            GRACE * 2,
        ),
    ] {
        let server = spawn_sh(script);
        let t = server.t;
        let grandchild = pid_line(t);
        assert!(!gone(grandchild));
        let closing = Instant::now();
        assert_eq!(unsafe { mcp_transport_close(t, GRACE_MS) }, MCP_STATUS_OK);
        let out = run_to_closed(t, Duration::from_secs(10));
        let took = closing.elapsed();
        assert!(out.closed);
        // cat ended at its stdin's end, before any signal.
        assert_eq!((out.exit_code, out.term_signal), (0, 0));
        assert!(
            gone_within(grandchild, Duration::from_secs(1)),
            "grandchild {grandchild} lives"
        );
        shutdown_time(
            &format!("grandchild holds the pipes ({script})"),
            took,
            expected,
        );
        free(server);
    }

    // The server exits by itself, its grandchild holding the pipes: the
    // transport closes with the 2 s grace for what was left running.
    let server = spawn_sh("sleep 1000 & echo $! >&2; exit 5");
    let grandchild = pid_line(server.t);
    let started = Instant::now();
    let out = run_to_closed(server.t, Duration::from_secs(10));
    let took = started.elapsed();
    assert!(out.closed);
    assert_eq!((out.exit_code, out.term_signal), (5, 0));
    assert!(
        gone_within(grandchild, Duration::from_secs(1)),
        "grandchild {grandchild} lives"
    );
    shutdown_time(
        "exits by itself, grandchild holds the pipes (2 s grace)",
        took,
        FIXED_GRACE,
    );
    free(server);
    Descriptors::assert_none_left_since(&fds, "a_grandchild_that_keeps_the_pipes_open");
}

/// Exits at once: the pending request fails, CLOSED gives the exit code.
#[test]
fn a_server_that_exits_at_once() {
    let _serial = serial();
    let fds = Descriptors::now();
    let server = spawn_sh("exit 3");
    let t = server.t;
    let started = Instant::now();
    let mut id = 0;
    let st = unsafe { mcp_transport_request(t, c"m".as_ptr(), std::ptr::null(), 0, 0, &mut id) };
    assert_eq!(st, MCP_STATUS_OK);
    let out = run_to_closed(t, Duration::from_secs(10));
    let took = started.elapsed();
    assert!(out.closed);
    assert_eq!((out.exit_code, out.term_signal), (3, 0));
    assert_eq!(out.failed, vec![1]);
    assert!(out.responses.is_empty() && out.messages.is_empty() && out.stderr.is_empty());
    let mut ev = new_event();
    assert_eq!(
        unsafe { mcp_transport_request(t, c"m".as_ptr(), std::ptr::null(), 0, 0, &mut id) },
        MCP_STATUS_CLOSED
    );
    assert_eq!(
        unsafe { mcp_transport_next_event(t, 0, &mut ev) },
        MCP_STATUS_END_OF_STREAM
    );
    shutdown_time("exits at once", took, Duration::ZERO);
    free(server);
    Descriptors::assert_none_left_since(&fds, "a_server_that_exits_at_once");
}

/// Dies saying why on stderr: the tail keeps the last lines after CLOSED.
#[test]
fn a_server_that_dies_saying_why_leaves_its_stderr_tail() {
    let _serial = serial();
    let server = spawn_sh("echo starting >&2; echo 'Error: Cannot find module foo' >&2; exit 1");
    let t = server.t;
    let out = run_to_closed(t, Duration::from_secs(10));
    assert_eq!((out.exit_code, out.term_signal), (1, 0));
    let mut tail = McpBuffer {
        data: std::ptr::null_mut(),
        len: 0,
    };
    assert_eq!(
        unsafe { mcp_transport_stderr_tail(t, &mut tail) },
        MCP_STATUS_OK
    );
    let text = unsafe { std::slice::from_raw_parts(tail.data, tail.len) }.to_vec();
    unsafe { mcp_buffer_free(&mut tail) };
    assert_eq!(text, b"starting\nError: Cannot find module foo\n");
    assert_eq!(
        unsafe { mcp_transport_stderr_tail(t, std::ptr::null_mut()) },
        MCP_STATUS_NULL_ARGUMENT
    );
    assert_eq!(
        unsafe { mcp_transport_stderr_tail(std::ptr::null(), &mut tail) },
        MCP_STATUS_NULL_ARGUMENT
    );
    free(server);
}

/// The text `mcp_transport_end_text` gives.
fn end_text(t: *mut McpTransport) -> String {
    let mut text = McpBuffer {
        data: std::ptr::null_mut(),
        len: 0,
    };
    assert_eq!(
        unsafe { mcp_transport_end_text(t, &mut text) },
        MCP_STATUS_OK
    );
    let bytes = if text.len == 0 {
        Vec::new()
    } else {
        unsafe { std::slice::from_raw_parts(text.data, text.len) }.to_vec()
    };
    unsafe { mcp_buffer_free(&mut text) };
    String::from_utf8(bytes).unwrap()
}

/// Exits at once with a request pending: its REQUEST_FAILED comes at once
/// (not at its 30 s deadline) with the exit status, and the transport says
/// why, with the last stderr line.
#[test]
fn a_server_that_exits_at_once_says_why_from_the_first_failure() {
    let _serial = serial();
    let started = Instant::now();
    let server = spawn_sh("echo 'npm ERR! 404 Not Found - GET https://registry/x' >&2; exit 1");
    let t = server.t;
    let mut early = false;
    assert_eq!(unsafe { mcp_transport_end_reason(t, &mut early) }, 0);
    assert_eq!(end_text(t), "", "open: no reason");
    let mut id = 0;
    let st = unsafe {
        mcp_transport_request(
            t,
            c"tools/list".as_ptr(),
            std::ptr::null(),
            0,
            30_000,
            &mut id,
        )
    };
    assert_eq!(st, MCP_STATUS_OK);
    let mut ev = new_event();
    let failure = loop {
        assert!(started.elapsed() < Duration::from_secs(10), "no failure");
        match unsafe { mcp_transport_next_event(t, 1000, &mut ev) } {
            MCP_STATUS_OK if ev.kind == STDERR => continue,
            MCP_STATUS_OK => break ev,
            MCP_STATUS_NO_MESSAGE => continue,
            other => panic!("next_event: {other:?}"),
        }
    };
    let took = started.elapsed();
    assert_eq!((failure.kind, failure.request_id), (REQUEST_FAILED, id));
    assert_eq!((failure.exit_code, failure.term_signal), (1, 0));
    assert!(took < Duration::from_secs(1), "failed after {took:?}");
    assert_eq!(
        unsafe { mcp_transport_end_reason(t, &mut early) },
        McpEndReason::MCP_END_SERVER_EXITED as i32
    );
    assert!(early, "no line came before the exit");
    assert_eq!(
        end_text(t),
        "server exited with code 1 before its first message: \
         npm ERR! 404 Not Found - GET https://registry/x"
    );
    assert_eq!(
        unsafe { mcp_transport_end_text(t, std::ptr::null_mut()) },
        MCP_STATUS_NULL_ARGUMENT
    );
    assert_eq!(
        unsafe { mcp_transport_end_reason(std::ptr::null(), std::ptr::null_mut()) },
        0
    );
    let out = run_to_closed(t, Duration::from_secs(10));
    assert_eq!((out.exit_code, out.term_signal), (1, 0));
    free(server);
}

/// Killed from outside while a request waits: REQUEST_FAILED at once with
/// the signal; closed by us: the reason is ours.
#[test]
fn a_server_killed_from_outside_or_closed_by_us_says_so() {
    let _serial = serial();
    let server = spawn_sh("echo $$ >&2; exec sleep 1000");
    let t = server.t;
    let pid = pid_line(t);
    let mut id = 0;
    let st =
        unsafe { mcp_transport_request(t, c"m".as_ptr(), std::ptr::null(), 0, 30_000, &mut id) };
    assert_eq!(st, MCP_STATUS_OK);
    let killed = Instant::now();
    assert_eq!(unsafe { libc::kill(pid, libc::SIGKILL) }, 0);
    let out = run_to_closed(t, Duration::from_secs(10));
    assert_eq!(out.failed, vec![id]);
    assert!(
        killed.elapsed() < Duration::from_secs(1),
        "{:?}",
        killed.elapsed()
    );
    let mut early = false;
    assert_eq!(
        unsafe { mcp_transport_end_reason(t, &mut early) },
        McpEndReason::MCP_END_SERVER_KILLED as i32
    );
    assert_eq!(
        end_text(t),
        format!("server killed by signal 9 before its first message: {pid}")
    );
    free(server);

    let server = spawn_sh("exec sleep 1000");
    let t = server.t;
    assert_eq!(unsafe { mcp_transport_close(t, GRACE_MS) }, MCP_STATUS_OK);
    run_to_closed(t, Duration::from_secs(10));
    assert_eq!(
        unsafe { mcp_transport_end_reason(t, std::ptr::null_mut()) },
        McpEndReason::MCP_END_CLOSED_BY_HOST as i32
    );
    assert_eq!(end_text(t), "closed by the host");
    free(server);
}

/// Prints junk and half a line, and dies: the junk is INVALID, the half
/// line at the end of the stream too (not JSON); a whole message without
/// its newline at the end is a message (or the answer it is).
#[test]
fn a_server_that_prints_junk_and_half_a_line_and_dies() {
    let _serial = serial();
    let fds = Descriptors::now();
    let server = spawn_sh(
        "read request; printf 'junk\\n\\n{\"jsonrpc\":\"2.0\",\"id\":1,\"res'; kill -KILL $$",
    );
    let t = server.t;
    let mut id = 0;
    let st = unsafe { mcp_transport_request(t, c"m".as_ptr(), std::ptr::null(), 0, 0, &mut id) };
    assert_eq!(st, MCP_STATUS_OK);
    let started = Instant::now();
    let out = run_to_closed(t, Duration::from_secs(10));
    let took = started.elapsed();
    assert!(out.closed);
    assert_eq!((out.exit_code, out.term_signal), (-1, libc::SIGKILL));
    assert_eq!(
        out.invalid,
        vec![
            (PARSE_ERROR, b"junk".to_vec()),
            (PARSE_ERROR, b"{\"jsonrpc\":\"2.0\",\"id\":1,\"res".to_vec()),
        ]
    );
    assert_eq!(out.failed, vec![1]);
    assert!(out.messages.is_empty() && out.responses.is_empty());
    shutdown_time("junk and half a line, killed", took, Duration::ZERO);
    free(server);

    // A whole answer without its newline, then the end: the answer counts.
    let server = spawn_sh("read request; printf '{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}'");
    let st =
        unsafe { mcp_transport_request(server.t, c"m".as_ptr(), std::ptr::null(), 0, 0, &mut id) };
    assert_eq!(st, MCP_STATUS_OK);
    let out = run_to_closed(server.t, Duration::from_secs(10));
    assert!(out.closed && out.failed.is_empty() && out.invalid.is_empty());
    assert_eq!(out.responses, vec![1]);
    assert_eq!(out.exit_code, 0);
    free(server);

    // A whole notification without its newline: a message.
    let server = spawn_sh("printf '{\"jsonrpc\":\"2.0\",\"method\":\"last\"}'; exit 1");
    let out = run_to_closed(server.t, Duration::from_secs(10));
    assert!(out.closed && out.invalid.is_empty());
    assert_eq!(
        out.messages,
        vec![b"{\"jsonrpc\":\"2.0\",\"method\":\"last\"}".to_vec()]
    );
    assert_eq!(out.exit_code, 1);
    free(server);
    Descriptors::assert_none_left_since(&fds, "a_server_that_prints_junk_and_half_a_line_and_dies");
}

/// A program that does not exist: MCP_STATUS_SPAWN_FAILED with ENOENT at
/// once, no process, no descriptor.
#[test]
fn a_program_that_does_not_exist() {
    let _serial = serial();
    let fds = Descriptors::now();
    for program in ["mcp-stdio-no-such-server", "/nonexistent/mcp-stdio-server"] {
        let cmd = command(program, &["--stdio"]);
        let mut t = std::ptr::null_mut();
        let started = Instant::now();
        let st = unsafe { mcp_transport_spawn(cmd, 0, &mut t) };
        let e = errno();
        let took = started.elapsed();
        assert_eq!(st, MCP_STATUS_SPAWN_FAILED);
        assert_eq!(e, libc::ENOENT);
        assert!(t.is_null());
        unsafe { mcp_command_free(cmd) };
        shutdown_time(&format!("does not exist ({program})"), took, Duration::ZERO);
    }
    Descriptors::assert_none_left_since(&fds, "a_program_that_does_not_exist");
}

/// 200 servers spawned, closed (or not) and freed in a row: as many
/// descriptors after as before, every one reaped.
#[test]
fn two_hundred_servers_leave_nothing_behind() {
    let _serial = serial();
    let cat = command("cat", &[]);
    let truth = command("true", &[]);
    let fds = Descriptors::now();
    let started = Instant::now();
    for i in 0..200 {
        let server = spawn(if i % 2 == 0 { cat } else { truth });
        match i % 4 {
            // Closed, then run to its end.
            0 | 1 => {
                assert_eq!(
                    unsafe { mcp_transport_close(server.t, 1000) },
                    MCP_STATUS_OK
                );
                let out = run_to_closed(server.t, Duration::from_secs(5));
                assert!(out.closed && out.exit_code == 0, "{out:?}");
            }
            // Freed open: closed and waited for by free.
            _ => {}
        }
        free(server);
    }
    let took = started.elapsed();
    println!("200 spawn/close/free cycles: {took:?}");
    Descriptors::assert_none_left_since(&fds, "two_hundred_servers_leave_nothing_behind");
    unsafe {
        mcp_command_free(cat);
        mcp_command_free(truth);
    }
}

/// Resident memory of this process, in KiB.
#[cfg(target_os = "linux")]
fn rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

/// A stderr that never stops (`yes`): the host stays responsive
/// (next_event(t, 0) returns at once, its memory bounded), and close ends
/// it at the grace. (Linux: the test reads /proc and watches the server
/// through a pidfd of its own.)
#[cfg(target_os = "linux")]
#[test]
fn a_server_whose_stderr_never_stops() {
    let _serial = serial();
    let fds = Descriptors::now();
    // The shell stays (`; exit`), holding the server's stdout open: with
    // `exec yes >&2` the stdout pipe had no writer from the start, which
    // began the library's own close (a 2 s grace from the spawn), so the
    // close below changed nothing and its timing held by coincidence.
    let server = spawn_sh("yes 'endless log line' >&2; exit");
    let t = server.t;
    let rss_before = rss_kib();
    let mut ev = new_event();
    let mut longest = Duration::ZERO;
    let (mut calls, mut lines) = (0u64, 0u64);
    let started = Instant::now();
    while started.elapsed() < Duration::from_millis(1500) {
        let call = Instant::now();
        let st = unsafe { mcp_transport_next_event(t, 0, &mut ev) };
        longest = longest.max(call.elapsed());
        calls += 1;
        if st == MCP_STATUS_OK {
            assert_eq!(ev.kind, STDERR);
            lines += 1;
        }
    }
    let rss_after = rss_kib();
    println!(
        "endless stderr: {calls} calls, {lines} lines, {} bytes dropped, longest \
         next_event(t, 0): {longest:?}, rss {rss_before} -> {rss_after} KiB",
        unsafe { mcp_transport_stderr_dropped(t) }
    );
    assert!(
        longest < Duration::from_millis(200),
        "next_event(t, 0) took {longest:?}"
    );
    assert!(
        rss_after < rss_before + 16 * 1024,
        "rss {rss_before} -> {rss_after} KiB"
    );
    // Up to 1 MiB of stderr lines still wait when the server dies, and come
    // before CLOSED, one event each (tens of thousands: on a debug build
    // taking them is most of a second). So the shutdown's moment is the
    // server's death, seen through a pidfd of the test's own between
    // events; CLOSED must follow once the lines are taken.
    // SAFETY: pidfd_open takes a pid and flags, returns a descriptor or -1.
    let pidfd = unsafe { libc::syscall(libc::SYS_pidfd_open, server.pid, 0) } as i32;
    assert!(pidfd >= 0, "pidfd_open: errno {}", errno());
    let dead = || {
        let mut p = libc::pollfd {
            fd: pidfd,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd entry; no wait.
        unsafe { libc::poll(&mut p, 1, 0) == 1 }
    };
    let closing = Instant::now();
    assert_eq!(unsafe { mcp_transport_close(t, GRACE_MS) }, MCP_STATUS_OK);
    let (mut died, mut closed, mut after_death) = (None, false, 0u64);
    while !closed && closing.elapsed() < Duration::from_secs(10) {
        let st = unsafe { mcp_transport_next_event(t, 100, &mut ev) };
        if died.is_none() && dead() {
            died = Some(closing.elapsed());
        }
        if st != MCP_STATUS_OK {
            assert_eq!(st, MCP_STATUS_NO_MESSAGE);
            continue;
        }
        match ev.kind {
            STDERR => after_death += u64::from(died.is_some()),
            CLOSED => {
                closed = true;
                assert_eq!((ev.exit_code, ev.term_signal), (-1, libc::SIGTERM));
            }
            other => panic!("unexpected event kind {other}"),
        }
    }
    let took = closing.elapsed();
    // SAFETY: the test's own descriptor, closed once.
    unsafe { libc::close(pidfd) };
    assert!(closed, "no CLOSED within 10 s of the close");
    let died = died.expect("the server died");
    println!(
        "stderr never stops: the server died {died:?} after the close, CLOSED came at {took:?} \
         after {after_death} stderr lines it left"
    );
    shutdown_time("stderr never stops (yes >&2)", died, GRACE);
    free(server);
    Descriptors::assert_none_left_since(&fds, "a_server_whose_stderr_never_stops");
}

/// A server that logs without end while it answers: its answers still come
/// (stderr lines do not starve its messages), and close ends the logging
/// process of its group at the grace.
#[test]
fn a_server_that_logs_without_end_still_answers() {
    let _serial = serial();
    let fds = Descriptors::now();
    let server = spawn_sh(
        "yes 'endless log line' >&2 &
         exec sed -u 's/.*\"id\":\\([0-9]*\\).*/{\"jsonrpc\":\"2.0\",\"id\":\\1,\"result\":{}}/'",
    );
    let t = server.t;
    // The log is flowing before the first request.
    let mut ev = new_event();
    let st = unsafe { mcp_transport_next_event(t, 5000, &mut ev) };
    assert_eq!((st, ev.kind), (MCP_STATUS_OK, STDERR));
    std::thread::sleep(Duration::from_millis(50));
    for want in 1..=20 {
        let mut id = 0;
        let st = unsafe {
            mcp_transport_request(t, c"echo".as_ptr(), std::ptr::null(), 0, 5000, &mut id)
        };
        assert_eq!((st, id), (MCP_STATUS_OK, want));
    }
    let started = Instant::now();
    let (mut answered, mut lines) = (0, 0u64);
    while answered < 20 && started.elapsed() < Duration::from_secs(3) {
        let st = unsafe { mcp_transport_next_event(t, 100, &mut ev) };
        if st != MCP_STATUS_OK {
            continue;
        }
        match ev.kind {
            RESPONSE => answered += 1,
            STDERR => lines += 1,
            other => panic!("unexpected event kind {other}"),
        }
    }
    println!(
        "endless log: {answered} answers in {:?}, {lines} stderr lines meanwhile",
        started.elapsed()
    );
    assert_eq!(
        answered, 20,
        "answers starved by stderr ({lines} stderr lines given)"
    );
    let closing = Instant::now();
    assert_eq!(unsafe { mcp_transport_close(t, GRACE_MS) }, MCP_STATUS_OK);
    let out = run_to_closed(t, Duration::from_secs(10));
    let took = closing.elapsed();
    assert!(out.closed && out.failed.is_empty());
    assert_eq!((out.exit_code, out.term_signal), (0, 0)); // sed, at its stdin's end
    shutdown_time("logs without end (yes >&2 &), answering", took, GRACE);
    free(server);
    Descriptors::assert_none_left_since(&fds, "a_server_that_logs_without_end_still_answers");
}

/// After CLOSED an event loop waits on the wake-up descriptor only (as
/// `mcp_transport_poll_fds` says), also when CLOSED came at the SIGKILL,
/// before the end of the server's stderr was read: nothing in the set is
/// ready, so the loop does not spin.
#[test]
fn after_a_kill_the_poll_set_is_quiet() {
    let _serial = serial();
    let server = spawn_sh("trap '' TERM; sleep 1000 & echo $! >&2; exec cat");
    let t = server.t;
    let grandchild = pid_line(t);
    assert_eq!(unsafe { mcp_transport_close(t, GRACE_MS) }, MCP_STATUS_OK);
    let out = run_to_closed(t, Duration::from_secs(10));
    assert!(out.closed);
    assert!(gone_within(grandchild, Duration::from_secs(1)));
    std::thread::sleep(Duration::from_millis(50)); // the pipes' ends have come
    let mut fds = [libc::pollfd {
        fd: -1,
        events: 0,
        revents: 0,
    }; MCP_TRANSPORT_MAX_POLL_FDS];
    let (mut n, mut timeout) = (0usize, -1i32);
    let st =
        unsafe { mcp_transport_poll_fds(t, fds.as_mut_ptr(), fds.len(), &mut n, &mut timeout) };
    assert_eq!(st, MCP_STATUS_OK);
    let ready = unsafe { libc::poll(fds.as_mut_ptr(), n as libc::nfds_t, 0) };
    assert_eq!(
        (n, timeout, ready),
        (1, 0, 0),
        "after CLOSED: {n} descriptors ({:?}), {ready} ready",
        &fds[..n]
            .iter()
            .map(|p| (p.fd, p.revents))
            .collect::<Vec<_>>()
    );
    free(server);
}

/// Closes its stdin, or its stdout, and lives on. Stdin: the first write
/// the host makes is refused (EPIPE, no SIGPIPE). Stdout: no answer can
/// come any more (MCP: a server shuts down by closing its output stream).
/// Either begins the close with the 2 s grace of a server that went away:
/// its stdin is closed, and as it does not exit, SIGTERM ends it then. The
/// pending request fails; sends are refused.
#[test]
fn a_server_that_closes_its_stdin_or_stdout_and_lives_on() {
    let _serial = serial();
    let fds = Descriptors::now();
    for (what, script) in [
        ("stdin", "exec 0<&-; echo ready >&2; exec sleep 1000"),
        (
            "stdout",
            "echo ready >&2; read request; exec 1>&-; exec sleep 1000",
        ),
    ] {
        let server = spawn_sh(script);
        let t = server.t;
        let mut ev = new_event();
        assert_eq!(
            unsafe { mcp_transport_next_event(t, 5000, &mut ev) },
            MCP_STATUS_OK
        );
        assert_eq!((ev.kind, data(&ev)), (STDERR, b"ready".to_vec()));
        let mut id = 0;
        let st =
            unsafe { mcp_transport_request(t, c"m".as_ptr(), std::ptr::null(), 0, 0, &mut id) };
        assert_eq!(st, MCP_STATUS_OK);
        let started = Instant::now();
        let out = run_to_closed(t, Duration::from_secs(10));
        let took = started.elapsed();
        assert!(out.closed, "closes its {what}");
        assert_eq!(out.failed, vec![1]);
        assert_eq!((out.exit_code, out.term_signal), (-1, libc::SIGTERM));
        assert_eq!(
            unsafe { mcp_transport_request(t, c"m".as_ptr(), std::ptr::null(), 0, 0, &mut id) },
            MCP_STATUS_CLOSED
        );
        shutdown_time(
            &format!("closes its {what}, lives on (2 s grace after its end)"),
            took,
            FIXED_GRACE,
        );
        free(server);
    }
    Descriptors::assert_none_left_since(
        &fds,
        "a_server_that_closes_its_stdin_or_stdout_and_lives_on",
    );
}

/// The host looks again only after the kill is due: the answer the server
/// wrote before it was killed is still read and delivered, not failed.
#[test]
fn an_answer_written_before_the_kill_is_delivered() {
    let _serial = serial();
    let server = spawn_sh(
        "trap '' TERM; read request; echo '{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}';
         exec sleep 1000",
    );
    let t = server.t;
    let mut id = 0;
    let st = unsafe { mcp_transport_request(t, c"m".as_ptr(), std::ptr::null(), 0, 0, &mut id) };
    assert_eq!(st, MCP_STATUS_OK);
    assert_eq!(unsafe { mcp_transport_close(t, 50) }, MCP_STATUS_OK);
    let mut ev = new_event();
    // Writes the request and closes the server's stdin.
    assert_eq!(
        unsafe { mcp_transport_next_event(t, 0, &mut ev) },
        MCP_STATUS_NO_MESSAGE
    );
    std::thread::sleep(Duration::from_millis(300)); // SIGTERM and SIGKILL are due
    let out = run_to_closed(t, Duration::from_secs(5));
    assert!(out.closed);
    assert_eq!((out.exit_code, out.term_signal), (-1, libc::SIGKILL));
    assert_eq!((out.responses, out.failed), (vec![1], vec![]));
    free(server);
}

/// A handle that may move to another thread (a transport may be used from
/// any thread; `close` is one of the calls for any thread).
struct Handle(*mut McpTransport);
// SAFETY: see the header's threads rule.
unsafe impl Send for Handle {}

/// One thread waits in next_event without a limit; another closes: the
/// waiting thread is woken, drives the shutdown, and gets CLOSED at the
/// grace (SIGTERM to a server that neither reads nor ends by itself).
#[test]
fn close_from_another_thread_wakes_the_waiting_one() {
    let _serial = serial();
    let server = spawn_sh("exec sleep 1000");
    let handle = Handle(server.t);
    let closer = std::thread::spawn(move || {
        let handle = handle;
        std::thread::sleep(Duration::from_millis(100));
        let closing = Instant::now();
        assert_eq!(
            unsafe { mcp_transport_close(handle.0, GRACE_MS) },
            MCP_STATUS_OK
        );
        closing
    });
    let mut ev = new_event();
    let st = unsafe { mcp_transport_next_event(server.t, -1, &mut ev) };
    let closing = closer.join().unwrap();
    let took = closing.elapsed();
    assert_eq!((st, ev.kind), (MCP_STATUS_OK, CLOSED));
    assert_eq!((ev.exit_code, ev.term_signal), (-1, libc::SIGTERM));
    shutdown_time("closed from another thread (exec sleep)", took, GRACE);
    free(server);
}
