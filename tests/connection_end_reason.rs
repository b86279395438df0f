//! Failures that say why, through the Rust API: a spawned server that
//! exits (at once, after an answer, killed from outside), closes its
//! stdout and lives on, or is closed by us. Each pending request fails at
//! once (not at its deadline, not at the end of the shutdown) with the
//! reason, the exit status is known from the first failure, and the error
//! a host shows carries the last line of the server's stderr.
#![cfg(all(unix, os_io))]

#[path = "connection_common/mod.rs"]
mod common;

use std::time::{Duration, Instant};

use common::*;
use mcp_stdio::{Connection, EndReason, Error, Event, ServerExit};

/// Takes events until the failure of request `id`, at most `limit`: its
/// reason, when it came (after `since`), and the exit status known then.
fn failure_of(
    conn: &mut Connection,
    id: i64,
    since: Instant,
    limit: Duration,
) -> (EndReason, Duration, Option<std::process::ExitStatus>) {
    let end = Instant::now() + limit;
    loop {
        let left = end.saturating_duration_since(Instant::now());
        assert!(!left.is_zero(), "no failure for request {id} in {limit:?}");
        match conn.next_event(Some(left)).unwrap() {
            Some(Event::RequestFailed { id: failed, reason }) if failed == id => {
                let took = since.elapsed();
                return (reason, took, conn.exit_status());
            }
            Some(Event::Stderr { .. }) | None => {}
            Some(other) => panic!("before the failure of {id}: {:?}", own(other)),
        }
    }
}

#[test]
fn a_server_that_exits_at_once_says_why_from_the_first_failure() {
    let started = Instant::now();
    let mut conn = spawn(&sh("echo 'Traceback (most recent call last):' >&2
         echo \"ModuleNotFoundError: No module named 'foo'\" >&2
         exit 3"));
    let id = conn
        .request("tools/list", None, Some(Duration::from_secs(30)))
        .unwrap();
    let (reason, took, status) = failure_of(&mut conn, id, started, Duration::from_secs(10));
    println!("exits at once: failure {took:?} after the spawn");
    assert_eq!(
        reason,
        EndReason::ServerExited(ServerExit {
            code: Some(3),
            signal: None,
            before_first_message: true,
        })
    );
    assert!(took < Duration::from_secs(1), "failed after {took:?}");
    assert_eq!(
        status.and_then(|s| s.code()),
        Some(3),
        "known at the failure"
    );
    assert_eq!(conn.end_reason(), Some(reason));
    let error = conn.end_error().unwrap();
    assert_eq!(
        error.to_string(),
        "server exited with code 3 before its first message: \
         ModuleNotFoundError: No module named 'foo'"
    );
    match &error {
        Error::ServerExited(report) => {
            assert_eq!(report.exit.code, Some(3));
            assert_eq!(
                String::from_utf8_lossy(&report.stderr_tail),
                "Traceback (most recent call last):\nModuleNotFoundError: No module named 'foo'\n"
            );
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(conn.request("tools/list", None, None), Err(Error::Closed));
    let out = run_to_closed(&mut conn, Duration::from_secs(10));
    assert_eq!(out.non_stderr(), vec![&Ev::Closed]);
}

/// An answer written just before the exit is delivered, never failed
/// (both are there when the host next looks: the answer is read first);
/// the request after it fails, and the server had spoken.
#[test]
fn an_answer_before_the_exit_is_delivered_and_the_next_request_fails() {
    let mut conn = spawn(&sh(
        "read request; echo '{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}'; exit 0",
    ));
    let first = conn.request("a", None, None).unwrap();
    let second = conn
        .request("b", None, Some(Duration::from_secs(30)))
        .unwrap();
    // Written out; then the server answers and exits while nobody looks.
    assert_eq!(next(&mut conn, Some(Duration::ZERO)), None);
    std::thread::sleep(Duration::from_millis(500));
    let started = Instant::now();
    match next_non_stderr(&mut conn, Duration::from_secs(10), &mut Vec::new()) {
        Some(Ev::Response { id, .. }) => assert_eq!(id, first),
        other => panic!("want the answer, got {other:?}"),
    }
    let (reason, took, _) = failure_of(&mut conn, second, started, Duration::from_secs(10));
    assert_eq!(
        reason,
        EndReason::ServerExited(ServerExit {
            code: Some(0),
            signal: None,
            before_first_message: false,
        })
    );
    assert!(took < Duration::from_secs(1), "failed after {took:?}");
    assert_eq!(
        conn.end_error().unwrap().to_string(),
        "server exited with code 0"
    );
}

/// A server that exits while a grandchild holds its stdout: its requests
/// fail at its exit, not when the shutdown ends the grandchild (2 s).
#[test]
fn a_server_that_exits_leaving_its_stdout_open_fails_its_requests_at_once() {
    let started = Instant::now();
    let mut conn = spawn(&sh("sleep 100 & echo 'gone' >&2; exit 5"));
    let id = conn
        .request("tools/list", None, Some(Duration::from_secs(30)))
        .unwrap();
    let (reason, took, status) = failure_of(&mut conn, id, started, Duration::from_secs(10));
    println!("exits, a grandchild holds stdout: failure {took:?} after the spawn");
    assert_eq!(
        reason,
        EndReason::ServerExited(ServerExit {
            code: Some(5),
            signal: None,
            before_first_message: true,
        })
    );
    assert!(took < Duration::from_secs(1), "failed after {took:?}");
    assert_eq!(status.and_then(|s| s.code()), Some(5));
    let out = run_to_closed(&mut conn, Duration::from_secs(10));
    assert_eq!(out.non_stderr(), vec![&Ev::Closed]);
}

/// Killed from outside (a signal that is not the shutdown's): the signal is
/// the reason, at once.
#[test]
fn a_server_killed_from_outside_fails_its_requests_at_once() {
    let mut conn = spawn(&sh("echo ready >&2; exec sleep 100"));
    let pid = conn.pid().unwrap();
    let id = conn
        .request("tools/call", None, Some(Duration::from_secs(30)))
        .unwrap();
    assert_eq!(
        next(&mut conn, Some(Duration::from_secs(10))),
        Some(Ev::Stderr(b"ready".to_vec()))
    );
    let killed = Instant::now();
    // SAFETY: kill(2) on our own child's pid.
    assert_eq!(unsafe { libc::kill(pid as i32, libc::SIGKILL) }, 0);
    let (reason, took, status) = failure_of(&mut conn, id, killed, Duration::from_secs(10));
    println!("killed from outside: failure {took:?} after the kill");
    assert_eq!(
        reason,
        EndReason::ServerExited(ServerExit {
            code: None,
            signal: Some(libc::SIGKILL),
            before_first_message: true,
        })
    );
    assert!(took < Duration::from_secs(1), "failed after {took:?}");
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(status.and_then(|s| s.signal()), Some(libc::SIGKILL));
    assert_eq!(
        conn.end_error().unwrap().to_string(),
        "server killed by signal 9 before its first message: ready"
    );
}

/// A server that closes its stdout and lives on: no answer can come, so
/// its requests fail soon after (the exit is waited for 200 ms), as
/// "closed its stdout"; the shutdown then ends it.
#[test]
fn a_server_that_closes_its_stdout_fails_its_requests_soon() {
    let started = Instant::now();
    let mut conn = spawn(&sh("exec 1>&-; echo 'closing stdout' >&2; exec sleep 100"));
    let id = conn
        .request("tools/list", None, Some(Duration::from_secs(30)))
        .unwrap();
    let (reason, took, status) = failure_of(&mut conn, id, started, Duration::from_secs(10));
    println!("closes its stdout: failure {took:?} after the spawn");
    assert_eq!(reason, EndReason::PeerClosed);
    assert!(
        took >= Duration::from_millis(190) && took < Duration::from_secs(1),
        "failed after {took:?}"
    );
    assert_eq!(status, None, "still running");
    assert_eq!(conn.end_error(), Some(Error::Closed));
    assert_eq!(reason.to_string(), "the peer closed its output");
}

/// After our own close, the reason is ours, whatever the server does next.
#[test]
fn after_a_close_the_reason_is_ours() {
    let mut conn = spawn(&sh("exec sleep 100"));
    let id = conn
        .request("tools/list", None, Some(Duration::from_secs(30)))
        .unwrap();
    let closing = Instant::now();
    conn.close(Duration::from_millis(200)).unwrap();
    let (reason, took, status) = failure_of(&mut conn, id, closing, Duration::from_secs(10));
    assert_eq!(reason, EndReason::ClosedByUs);
    assert!(took < Duration::from_secs(2), "failed after {took:?}");
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(status.and_then(|s| s.signal()), Some(libc::SIGTERM));
    assert_eq!(conn.end_error(), Some(Error::Closed));
    assert_eq!(reason.to_string(), "closed by the host");
}

/// No reason while open; a memory connection's peer end is the peer's.
#[test]
fn a_memory_connection_reports_its_peer_end() {
    let mut conn = Connection::memory();
    assert_eq!(conn.end_reason(), None);
    assert_eq!(conn.end_error(), None);
    let id = conn.request("a", None, None).unwrap();
    conn.receive_end().unwrap();
    match conn.next_event(Some(Duration::ZERO)).unwrap() {
        Some(Event::RequestFailed { id: failed, reason }) => {
            assert_eq!((failed, reason), (id, EndReason::PeerClosed));
        }
        other => panic!("{:?}", other.map(own)),
    }
    assert_eq!(conn.exit_status(), None);
}

/// An answer without its newline, then the exit, both there when the host
/// next looks, while a child still holds the server's stderr (so the end
/// is not complete yet): the end of stdout makes the last bytes a line,
/// which is the answer, before any failure.
#[test]
fn an_answer_without_its_newline_before_the_exit_is_delivered() {
    let mut conn = spawn(&sh("read request; sleep 2 >/dev/null &
         printf '{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}'"));
    let id = conn
        .request("a", None, Some(Duration::from_secs(30)))
        .unwrap();
    assert_eq!(next(&mut conn, Some(Duration::ZERO)), None); // written out
    std::thread::sleep(Duration::from_millis(500)); // answered and exited meanwhile
    let out = run_to_closed(&mut conn, Duration::from_secs(10));
    assert!(
        matches!(out.non_stderr()[..], [Ev::Response { id: r, .. }, Ev::Closed] if *r == id),
        "{:?}",
        out.events
    );
}

/// What the server wrote to its stderr before it exited comes before the
/// failures its exit brings (both there when the host next looks; a child
/// keeps its stderr open, so the end is not complete yet).
#[test]
fn its_last_stderr_lines_come_before_the_failures() {
    let mut conn = spawn(&sh(
        "read request; echo bye >&2; sleep 1 >/dev/null & exit 3",
    ));
    let id = conn
        .request("a", None, Some(Duration::from_secs(30)))
        .unwrap();
    assert_eq!(next(&mut conn, Some(Duration::ZERO)), None); // written out
    std::thread::sleep(Duration::from_millis(500)); // its stderr, then its exit, meanwhile
    let out = run_to_closed(&mut conn, Duration::from_secs(10));
    assert_eq!(
        out.events,
        vec![Ev::Stderr(b"bye".to_vec()), Ev::Failed(id), Ev::Closed]
    );
}
