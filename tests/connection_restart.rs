//! Restart, through the Rust API: a server that crashes on its Nth
//! request, one that crashes at start (the crash loop stops it), one killed
//! from outside, one whose wrapper's children outlive it; the policy's
//! limits; and never a restart after the host's own close. The order a
//! host sees is checked on the way: the old server's stderr, the failures
//! with their reason, sends refused as `Restarting`, `Restarted` with the
//! new pid, then the new server's answers, ids going on.
#![cfg(all(unix, os_io))]

#[path = "connection_common/mod.rs"]
mod common;

use std::time::{Duration, Instant};

use common::*;
use mcp_stdio::{Command, Connection, EndReason, Error, Event, RestartPolicy, ServerExit};

const MS: Duration = Duration::from_millis(1);
const LONG: Duration = Duration::from_secs(20);

/// A server in sh that answers every request with `{"n":<count>}` (its
/// count of requests in this life), but `hang` which it never answers, and
/// on its `crash_at`th request writes "boom <pid>" to stderr and exits 7
/// without answering.
fn counting_server(crash_at: u32) -> Command {
    sh(&format!(
        r#"n=0
        while IFS= read -r line; do
          id=$(printf '%s' "$line" | sed -n 's/.*"id":\([0-9][0-9]*\).*/\1/p')
          [ -z "$id" ] && continue
          case "$line" in *'"method":"hang"'*) continue;; esac
          n=$((n+1))
          if [ "$n" -eq {crash_at} ]; then echo "boom $$" >&2; exit 7; fi
          printf '{{"jsonrpc":"2.0","id":%s,"result":{{"n":%s}}}}\n' "$id" "$n"
        done"#
    ))
}

fn with_policy(mut cmd: Command, policy: RestartPolicy) -> Command {
    cmd.restart(Some(policy));
    cmd
}

/// A restarted event, copied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Restart {
    pid: u32,
    attempt: u32,
    reason: EndReason,
}

/// What the tests look at, copied out of an event.
#[derive(Debug)]
enum Seen {
    Restarted(Restart),
    Failed(i64, EndReason),
    Other(Ev),
}

fn next_seen(conn: &mut Connection, limit: Duration) -> Option<Seen> {
    match conn.next_event(Some(limit)).unwrap()? {
        Event::Restarted {
            pid,
            attempt,
            reason,
        } => Some(Seen::Restarted(Restart {
            pid,
            attempt,
            reason,
        })),
        Event::RequestFailed { id, reason } => Some(Seen::Failed(id, reason)),
        other => Some(Seen::Other(own(other))),
    }
}

/// Takes events until the response to `id`; panics on anything but
/// stderr lines meanwhile. Returns its result.
fn answer(conn: &mut Connection, id: i64) -> Vec<u8> {
    let end = Instant::now() + LONG;
    while Instant::now() < end {
        match next_seen(conn, LONG) {
            Some(Seen::Other(Ev::Response {
                id: answered,
                result: Some(result),
                ..
            })) if answered == id => return result,
            Some(Seen::Other(Ev::Stderr(_))) | None => {}
            other => panic!("waiting for the answer to {id}: {other:?}"),
        }
    }
    panic!("no answer to {id}");
}

/// Takes events until `Closed`; panics on a restart meanwhile.
fn closed_without_restart(conn: &mut Connection) {
    loop {
        match next_seen(conn, LONG) {
            Some(Seen::Other(Ev::Closed)) => return,
            Some(Seen::Restarted(r)) => panic!("restarted after close: {r:?}"),
            _ => {}
        }
    }
}

#[test]
fn a_server_that_crashes_on_its_third_request_is_back_and_ids_go_on() {
    let policy = RestartPolicy::new().backoff(300 * MS, 300 * MS);
    let mut conn = spawn(&with_policy(counting_server(3), policy));
    let first_pid = conn.pid().unwrap();
    for id in [1, 2] {
        assert_eq!(conn.request("tools/list", None, Some(LONG)).unwrap(), id);
        assert_eq!(answer(&mut conn, id), format!(r#"{{"n":{id}}}"#).as_bytes());
    }
    let crash = conn.request("tools/call", None, Some(LONG)).unwrap();
    let listen = conn.request("subscriptions/listen", None, None).unwrap();
    // Its stderr first, then every pending request fails with the exit.
    let mut stderr = Vec::new();
    let failed = loop {
        match next_seen(&mut conn, LONG) {
            Some(Seen::Other(Ev::Stderr(line))) => stderr.push(line),
            Some(Seen::Failed(id, reason)) => break (id, reason),
            other => panic!("before the failures: {other:?}"),
        }
    };
    assert_eq!(failed, (crash, exited(7, false)));
    assert_eq!(stderr, [format!("boom {first_pid}").into_bytes()]);
    // Until the restart, sends are refused as such (deterministic: the
    // restart happens only inside `next_event`).
    assert_eq!(
        conn.request("tools/list", None, None),
        Err(Error::Restarting)
    );
    assert_eq!(conn.notify("notifications/x", None), Err(Error::Restarting));
    let restarted_at = Instant::now();
    let mut rest = Vec::new();
    let restart = loop {
        match next_seen(&mut conn, LONG) {
            Some(Seen::Restarted(restart)) => break restart,
            Some(other) => rest.push(format!("{other:?}")),
            None => panic!("no restart"),
        }
    };
    let waited = restarted_at.elapsed();
    assert_eq!(
        rest,
        [format!("{:?}", Seen::Failed(listen, exited(7, false)))],
        "the open subscription fails too, before the restart"
    );
    assert!(waited >= 250 * MS, "the backoff: {waited:?}");
    assert_eq!(restart.attempt, 1);
    assert_eq!(restart.reason, exited(7, false));
    assert_ne!(restart.pid, first_pid);
    assert_eq!(conn.pid(), Some(restart.pid));
    assert_eq!(conn.restarts(), 1);
    assert!(gone_within(first_pid, 5 * 1000 * MS));
    assert!(reaped(first_pid), "the old server was reaped");
    assert_eq!(conn.end_reason(), None, "open again");
    // The new server answers; ids go on, never reused.
    let id = conn.request("tools/list", None, Some(LONG)).unwrap();
    assert_eq!(id, listen + 1);
    assert_eq!(answer(&mut conn, id), br#"{"n":1}"#);
    conn.close(2000 * MS).unwrap();
    closed_without_restart(&mut conn);
    assert_eq!(conn.end_reason(), Some(EndReason::ClosedByUs));
}

#[test]
fn a_server_that_crashes_at_start_stops_at_the_crash_loop() {
    let policy = RestartPolicy::new()
        .backoff(20 * MS, 40 * MS)
        .crash_loop(3, Duration::from_secs(30));
    let started = Instant::now();
    let mut conn = spawn(&with_policy(
        sh("echo 'npm ERR! 404 Not Found' >&2; exit 1"),
        policy,
    ));
    let mut restarts = Vec::new();
    let mut pids = vec![conn.pid().unwrap()];
    loop {
        match next_seen(&mut conn, LONG) {
            Some(Seen::Restarted(r)) => {
                restarts.push(r.attempt);
                assert_eq!(r.reason, exited(1, true));
                pids.push(r.pid);
            }
            Some(Seen::Other(Ev::Closed)) => break,
            Some(Seen::Other(Ev::Stderr(line))) => assert_eq!(line, b"npm ERR! 404 Not Found"),
            other => panic!("{other:?}"),
        }
    }
    // Three exits within the window: two restarts, then the end.
    assert_eq!(restarts, [1, 2]);
    assert_eq!(conn.restarts(), 2);
    assert!(started.elapsed() < Duration::from_secs(10));
    assert_eq!(conn.end_reason(), Some(exited(1, true)));
    assert_eq!(
        conn.end_error().unwrap().to_string(),
        "server exited with code 1 before its first message: npm ERR! 404 Not Found"
    );
    assert_eq!(conn.exit_status().and_then(|s| s.code()), Some(1));
    for pid in pids {
        assert!(reaped(pid), "{pid} reaped");
    }
}

#[test]
fn max_restarts_counts_the_connection_s_life() {
    let policy = RestartPolicy::new()
        .max_restarts(2)
        .backoff(10 * MS, 10 * MS)
        .crash_loop(0, Duration::ZERO);
    let mut conn = spawn(&with_policy(sh("exit 4"), policy));
    let mut attempts = Vec::new();
    loop {
        match next_seen(&mut conn, LONG) {
            Some(Seen::Restarted(r)) => attempts.push(r.attempt),
            Some(Seen::Other(Ev::Closed)) => break,
            Some(Seen::Other(Ev::Stderr(_))) => {}
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(attempts, [1, 2]);
    assert_eq!(conn.end_reason(), Some(exited(4, true)));
}

#[test]
fn a_server_killed_from_outside_is_back_and_the_next_call_succeeds() {
    let policy = RestartPolicy::new().backoff(10 * MS, 10 * MS);
    let mut conn = spawn(&with_policy(counting_server(1000), policy));
    let id = conn.request("tools/list", None, Some(LONG)).unwrap();
    assert_eq!(answer(&mut conn, id), br#"{"n":1}"#);
    let killed = conn.pid().unwrap();
    let pending = conn.request("hang", None, None).unwrap();
    // SAFETY: a plain kill(2) of our own child.
    assert_eq!(unsafe { libc::kill(killed as i32, libc::SIGKILL) }, 0);
    let kill_at = Instant::now();
    let killed_by_9 = EndReason::ServerExited(ServerExit {
        code: None,
        signal: Some(libc::SIGKILL),
        before_first_message: false,
    });
    let mut saw_failure = false;
    let restart = loop {
        match next_seen(&mut conn, LONG) {
            Some(Seen::Failed(id, reason)) => {
                assert_eq!((id, reason), (pending, killed_by_9));
                println!(
                    "killed from outside: failure {:?} after the kill",
                    kill_at.elapsed()
                );
                saw_failure = true;
            }
            Some(Seen::Restarted(r)) => {
                println!(
                    "restarted {:?} after the kill (backoff 10 ms)",
                    kill_at.elapsed()
                );
                break r;
            }
            other => panic!("{other:?}"),
        }
    };
    assert!(saw_failure);
    assert_eq!(restart.reason, killed_by_9);
    assert_eq!(restart.attempt, 1);
    let id = conn.request("tools/list", None, Some(LONG)).unwrap();
    assert_eq!(
        answer(&mut conn, id),
        br#"{"n":1}"#,
        "the new server's first"
    );
    drop(conn);
    assert!(reaped(killed));
    assert!(gone_within(restart.pid, 5 * 1000 * MS));
}

#[test]
fn what_is_left_of_the_old_server_dies_at_the_restart() {
    // The server's child (a wrapper's node, say) outlives it, in its
    // process group, holding none of the pipes.
    let policy = RestartPolicy::new().backoff(10 * MS, 10 * MS);
    let mut conn = spawn(&with_policy(
        sh("sleep 1000 </dev/null >/dev/null 2>&1 & echo $! >&2; exec cat"),
        policy,
    ));
    let first = conn.pid().unwrap();
    let grandchild: u32 = match next_seen(&mut conn, LONG) {
        Some(Seen::Other(Ev::Stderr(line))) => {
            String::from_utf8(line).unwrap().trim().parse().unwrap()
        }
        other => panic!("{other:?}"),
    };
    assert!(!gone(grandchild));
    // SAFETY: a plain kill(2) of our own child.
    assert_eq!(unsafe { libc::kill(first as i32, libc::SIGTERM) }, 0);
    loop {
        match next_seen(&mut conn, LONG) {
            Some(Seen::Restarted(_)) => break,
            Some(Seen::Other(Ev::Stderr(_))) => {}
            other => panic!("{other:?}"),
        }
    }
    assert!(
        gone_within(grandchild, 5 * 1000 * MS),
        "the old server's group was killed at the restart"
    );
}

#[test]
fn no_restart_after_the_host_s_close_even_when_the_server_exits_badly() {
    // It exits with 1 when its stdin closes: the close's doing, not a crash.
    let policy = RestartPolicy::new().backoff(MS, MS);
    let mut conn = spawn(&with_policy(sh("cat >/dev/null; exit 1"), policy));
    conn.close(2000 * MS).unwrap();
    closed_without_restart(&mut conn);
    assert_eq!(conn.restarts(), 0);
    assert_eq!(conn.end_reason(), Some(EndReason::ClosedByUs));
    assert_eq!(conn.exit_status().and_then(|s| s.code()), Some(1));
}

#[test]
fn a_close_while_the_restart_waits_ends_it_without_one() {
    let policy = RestartPolicy::new().backoff(Duration::from_secs(30), Duration::from_secs(30));
    let mut conn = spawn(&with_policy(counting_server(1), policy));
    let pid = conn.pid().unwrap();
    let id = conn.request("tools/list", None, None).unwrap();
    loop {
        match next_seen(&mut conn, LONG) {
            Some(Seen::Failed(failed, reason)) if failed == id => {
                assert_eq!(reason, exited(7, true));
                break;
            }
            Some(Seen::Other(Ev::Stderr(_))) => {}
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(conn.request("x", None, None), Err(Error::Restarting));
    let closing = Instant::now();
    conn.close(2000 * MS).unwrap();
    assert_eq!(conn.request("x", None, None), Err(Error::Closed));
    closed_without_restart(&mut conn);
    assert!(
        closing.elapsed() < Duration::from_secs(3),
        "{:?}",
        closing.elapsed()
    );
    assert_eq!(conn.restarts(), 0);
    assert_eq!(conn.pid(), Some(pid), "never replaced");
    assert!(reaped(pid));
}

#[test]
fn a_restart_that_cannot_start_the_server_ends_the_connection_with_why() {
    let dir = std::env::temp_dir().join(format!("mcp-restart-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let script = dir.join("server.sh");
    // It removes itself, then exits: the restart finds no program.
    std::fs::write(&script, "#!/bin/sh\nrm -f \"$0\"\nexit 5\n").unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let policy = RestartPolicy::new().backoff(MS, MS);
    let mut conn = spawn(&with_policy(Command::new(&script), policy));
    loop {
        match next_seen(&mut conn, LONG) {
            Some(Seen::Other(Ev::Closed)) => break,
            Some(Seen::Restarted(r)) => panic!("restarted: {r:?}"),
            _ => {}
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(conn.restarts(), 0);
    assert_eq!(conn.end_reason(), Some(exited(5, true)));
    match conn.restart_error() {
        Some(Error::SpawnFailed(e)) => assert_eq!(e.code, libc::ENOENT),
        other => panic!("{other:?}"),
    }
}

#[cfg(linux_apis)]
#[test]
fn an_event_loop_on_the_poll_fd_follows_the_restart() {
    use std::os::fd::AsRawFd;
    let policy = RestartPolicy::new().backoff(10 * MS, 10 * MS);
    let mut conn = spawn(&with_policy(counting_server(2), policy));
    let fd = conn.as_raw_fd();
    let wait = |timeout_ms: i32| {
        let mut p = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd.
        unsafe { libc::poll(&mut p, 1, timeout_ms) }
    };
    let mut ids = vec![conn.request("a", None, None).unwrap()];
    let mut answered = Vec::new();
    let mut restarted = 0;
    let end = Instant::now() + LONG;
    while answered.len() < 2 && Instant::now() < end {
        // As an event loop does: the descriptor, or the next deadline (the
        // restart's among them).
        let timeout = match conn.next_deadline().unwrap() {
            Some(at) => at.saturating_duration_since(Instant::now()).as_millis() as i32 + 1,
            None => 5000,
        };
        assert!(wait(timeout) >= 0);
        while let Some(seen) = next_seen(&mut conn, Duration::ZERO) {
            match seen {
                Seen::Other(Ev::Response { id, .. }) => {
                    answered.push(id);
                    if answered.len() == 1 {
                        ids.push(conn.request("crash", None, None).unwrap());
                    }
                }
                Seen::Restarted(_) => {
                    restarted += 1;
                    ids.push(conn.request("after", None, None).unwrap());
                }
                Seen::Failed(id, _) => assert_eq!(id, ids[1]),
                Seen::Other(Ev::Stderr(_)) => {}
                other => panic!("{other:?}"),
            }
        }
    }
    assert_eq!(restarted, 1);
    assert_eq!(
        answered,
        [ids[0], ids[2]],
        "woken by the new server's answer"
    );
}
