//! The Windows backend of [`Connection::spawn`], run under Wine: a session
//! with a server started directly and through a `.cmd` wrapper found by
//! `PATHEXT`, hostile arguments to a batch file, and the misbehaving
//! servers (never reads, floods stderr, ignores the close, leaves a
//! grandchild holding the pipes, exits at once, does not exist, and the
//! host killed while the server runs), each leaving no process behind.
//!
//! The server is `tests/windows/misbehave.c`, built by `scripts/windows.sh`,
//! which gives its path in `MCP_STDIO_MISBEHAVE` (the tests fail without
//! it). "No process behind" is shown by markers: the server (and its
//! grandchild) append to a file every 50 ms while they run; a file that
//! stops growing is a tree that is gone. `scripts/windows.sh` also looks
//! for any `misbehave.exe` left among the machine's processes afterwards.

#![cfg(windows)]

#[path = "connection_common/mod.rs"]
mod common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::*;
use mcp_stdio::{Command, Connection, Error, RestartPolicy, SpawnCause, StderrMode};

/// The test server, or a failure that says how to get it.
fn misbehave() -> PathBuf {
    match std::env::var_os("MCP_STDIO_MISBEHAVE") {
        Some(path) => PathBuf::from(path),
        None => panic!(
            "MCP_STDIO_MISBEHAVE is not set: run these tests through scripts/windows.sh, \
             which builds tests/windows/misbehave.c"
        ),
    }
}

/// A directory of this test's own, empty.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mcp-stdio-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn server(mode: &str) -> Command {
    let mut cmd = Command::new(misbehave());
    cmd.arg(mode);
    cmd
}

/// The server writes `marker` while it runs.
fn with_marker(cmd: &mut Command, marker: &Path) {
    cmd.env("MISBEHAVE_MARKER", marker);
}

fn size(path: &Path) -> u64 {
    std::fs::metadata(path).map_or(0, |m| m.len())
}

/// Waits until `marker` grows (its writer runs), at most 10 s.
fn grows(marker: &Path) {
    let start = Instant::now();
    let first = size(marker);
    while size(marker) <= first {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "{marker:?} never grew: its writer did not start"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The writers of `marker` are gone: it does not grow for 600 ms (they
/// write every 50 ms), looked at for at most 5 s.
fn stops_growing(marker: &Path) {
    let start = Instant::now();
    loop {
        let before = size(marker);
        std::thread::sleep(Duration::from_millis(600));
        if size(marker) == before {
            return;
        }
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "{marker:?} still grows after 5 s: a process of the tree is still running"
        );
    }
}

/// One request and its answer.
fn round_trip(conn: &mut Connection) {
    let id = conn
        .request("tools/list", None, Some(Duration::from_secs(30)))
        .unwrap();
    let mut stderr = Vec::new();
    match next_non_stderr(conn, Duration::from_secs(30), &mut stderr) {
        Some(Ev::Response {
            id: answered,
            result,
            ..
        }) => {
            assert_eq!(answered, id);
            assert_eq!(result.as_deref(), Some(&b"{}"[..]));
        }
        other => panic!("expected the answer to {id}, got {other:?} (stderr: {stderr:?})"),
    }
}

#[test]
fn a_session_with_a_server_started_directly() {
    let mut conn = spawn(&server("echo"));
    assert!(conn.pid().is_some_and(|pid| pid > 0));
    round_trip(&mut conn);
    round_trip(&mut conn);
    conn.close(Duration::from_secs(5)).unwrap();
    let out = run_to_closed(&mut conn, Duration::from_secs(10));
    assert_eq!(out.failed(), Vec::<i64>::new());
    // It exited by itself at the end of its stdin, before the grace.
    assert!(out.took < Duration::from_secs(4), "took {:?}", out.took);
    assert_eq!(conn.exit_status().and_then(|s| s.code()), Some(0));
}

/// `srv.cmd` in a directory of its own, running the test server with the
/// arguments it is given: found as `srv` through `PATH` and `PATHEXT`.
fn cmd_wrapper(dir: &Path) {
    let script = format!("@\"{}\" %*\r\n", misbehave().display());
    std::fs::write(dir.join("srv.cmd"), script).unwrap();
}

#[test]
fn a_cmd_wrapper_is_found_through_pathext() {
    let dir = scratch("pathext");
    cmd_wrapper(&dir);
    let mut cmd = Command::new("srv");
    cmd.arg("echo")
        .env("PATH", &dir)
        .env("PATHEXT", ".COM;.EXE;.BAT;.CMD");
    let mut conn = spawn(&cmd);
    round_trip(&mut conn);
    conn.close(Duration::from_secs(5)).unwrap();
    run_to_closed(&mut conn, Duration::from_secs(10));
    assert_eq!(conn.exit_status().and_then(|s| s.code()), Some(0));
}

/// A smoke test under Wine: the exact command lines are proved by the
/// golden tests of `src/process/windows/cmdline.rs`; Wine's `cmd.exe` does
/// not parse `%`, `^` and `"` as Windows' does. What must hold everywhere:
/// no argument runs a command, and plain arguments with spaces and shell
/// characters arrive whole.
#[test]
fn hostile_arguments_to_a_batch_file_inject_nothing() {
    let dir = scratch("hostile");
    cmd_wrapper(&dir);
    let injected = dir.join("INJECTED");
    let plain = [
        "a b", "x<y", "p|q", "&calc", "one&two", "(parens)", "tail\\",
    ];
    let hostile = [
        format!("\"&echo x>\"{}\"", injected.display()),
        format!("&echo x>{}", injected.display()),
        format!("|echo x>{}", injected.display()),
    ];
    let mut cmd = Command::new(dir.join("srv.cmd"));
    cmd.arg("args").args(plain).args(&hostile).current_dir(&dir);
    let mut conn = spawn(&cmd);
    let mut stderr = Vec::new();
    let got = next_non_stderr(&mut conn, Duration::from_secs(30), &mut stderr);
    let Some(Ev::Message { line, .. }) = got else {
        panic!("expected the server's list of arguments, got {got:?} (stderr: {stderr:?})");
    };
    let text = String::from_utf8(line).unwrap();
    let params: &str = text
        .split_once("\"params\":")
        .map(|(_, p)| p.trim_end_matches('}'))
        .unwrap();
    for arg in plain {
        let quoted = format!("\"{}\"", arg.replace('\\', "\\\\"));
        assert!(
            params.contains(&quoted),
            "{arg:?} did not arrive whole: {params}"
        );
    }
    conn.close(Duration::from_secs(5)).unwrap();
    run_to_closed(&mut conn, Duration::from_secs(10));
    assert!(
        !injected.exists(),
        "an argument ran a command: {injected:?} exists"
    );
}

#[test]
fn a_line_break_for_a_batch_file_is_refused() {
    let dir = scratch("linebreak");
    cmd_wrapper(&dir);
    let mut cmd = Command::new(dir.join("srv.cmd"));
    cmd.arg("echo").arg("one\r\necho two");
    match Connection::spawn(&cmd) {
        Err(Error::InvalidArgument) => {}
        other => panic!("expected InvalidArgument, got {other:?}"),
    }
}

#[test]
fn a_server_that_never_reads_is_terminated_at_the_grace() {
    let dir = scratch("never-read");
    let marker = dir.join("marker");
    let mut cmd = server("never-read");
    with_marker(&mut cmd, &marker);
    let mut conn = spawn(&cmd);
    grows(&marker);
    // More than the pipe holds: the write stays in flight.
    let big = format!("{{\"x\":\"{}\"}}", "y".repeat(1 << 20));
    conn.send(big.as_bytes()).unwrap();
    conn.close(Duration::from_millis(500)).unwrap();
    let out = run_to_closed(&mut conn, Duration::from_secs(10));
    assert!(out.took < Duration::from_secs(4), "took {:?}", out.took);
    // Terminated through its job: exit code 1.
    assert_eq!(conn.exit_status().and_then(|s| s.code()), Some(1));
    stops_growing(&marker);
}

#[test]
fn a_stderr_flood_does_not_block_the_server() {
    let mut cmd = server("stderr-flood");
    cmd.arg((8 << 20).to_string()).stderr(StderrMode::Events);
    let mut conn = spawn(&cmd);
    // The server answers only after writing 8 MiB to stderr: it would block
    // on a full pipe if stderr were not drained.
    let id = conn
        .request("tools/list", None, Some(Duration::from_secs(60)))
        .unwrap();
    let mut stderr = Vec::new();
    match next_non_stderr(&mut conn, Duration::from_secs(60), &mut stderr) {
        Some(Ev::Response { id: answered, .. }) => assert_eq!(answered, id),
        other => panic!("expected the answer, got {other:?}"),
    }
    conn.close(Duration::from_secs(5)).unwrap();
    let out = run_to_closed(&mut conn, Duration::from_secs(20));
    // 8192 lines of 1023 bytes; the C runtime writes each newline as
    // `\r\n`, which is taken off whole.
    stderr.extend(out.stderr());
    let line = "e".repeat(1023);
    assert!(stderr.iter().all(|l| *l == line), "every line whole");
    assert_eq!(
        stderr.len() as u64 * 1025 + conn.stderr_dropped(),
        8192 * 1025,
        "every stderr line delivered or counted as dropped"
    );
}

#[test]
fn a_server_that_ignores_the_close_is_terminated() {
    let dir = scratch("ignore-close");
    let marker = dir.join("marker");
    let mut cmd = server("ignore-close");
    with_marker(&mut cmd, &marker);
    let mut conn = spawn(&cmd);
    grows(&marker);
    let closed_at = Instant::now();
    conn.close(Duration::from_millis(500)).unwrap();
    run_to_closed(&mut conn, Duration::from_secs(10));
    let took = closed_at.elapsed();
    assert!(
        took >= Duration::from_millis(450) && took < Duration::from_secs(3),
        "closed after {took:?}: the job is terminated at the grace"
    );
    assert_eq!(conn.exit_status().and_then(|s| s.code()), Some(1));
    stops_growing(&marker);
}

#[test]
fn a_grandchild_holding_the_pipes_dies_with_the_job() {
    let dir = scratch("grandchild");
    let marker = dir.join("marker");
    let mut cmd = server("grandchild");
    cmd.arg(&marker);
    let mut conn = spawn(&cmd);
    round_trip(&mut conn);
    grows(&marker);
    // The server exits at the end of its stdin; its grandchild holds its
    // stdout and stderr open for ever.
    conn.close(Duration::from_millis(500)).unwrap();
    let out = run_to_closed(&mut conn, Duration::from_secs(10));
    assert!(out.took < Duration::from_secs(5), "took {:?}", out.took);
    stops_growing(&marker);
}

#[test]
fn a_server_that_exits_at_once() {
    let mut conn = spawn(server("exit").arg("3"));
    let id = conn
        .request("tools/list", None, Some(Duration::from_secs(30)))
        .unwrap();
    let out = run_to_closed(&mut conn, Duration::from_secs(10));
    assert_eq!(out.failed(), vec![id], "the pending request fails at once");
    assert!(out.took < Duration::from_secs(4), "took {:?}", out.took);
    assert_eq!(conn.exit_status().and_then(|s| s.code()), Some(3));
}

#[test]
fn a_program_not_found() {
    let dir = scratch("not-found");
    let mut cmd = Command::new("no-such-server-anywhere");
    cmd.env("PATH", &dir);
    match Connection::spawn(&cmd) {
        Err(Error::SpawnFailed(failure)) if failure.code == 2 => {
            assert_eq!(failure.cause, SpawnCause::NotInPath(vec![dir.clone()]));
            assert_eq!(
                failure.to_string(),
                format!(
                    "cannot start `no-such-server-anywhere`: not found in PATH (searched: {})",
                    dir.display()
                )
            );
        }
        other => panic!("expected SpawnFailed(ERROR_FILE_NOT_FOUND), got {other:?}"),
    }
    match Connection::spawn(&Command::new(dir.join("missing.exe"))) {
        Err(Error::SpawnFailed(failure)) if failure.code == 2 => {
            assert_eq!(failure.cause, SpawnCause::Os);
        }
        other => panic!("expected SpawnFailed(ERROR_FILE_NOT_FOUND), got {other:?}"),
    }
    assert_eq!(
        Connection::spawn(&Command::new("")).err(),
        Some(Error::EmptyProgram)
    );
}

#[test]
fn dropping_the_connection_ends_the_tree() {
    let dir = scratch("drop");
    let marker = dir.join("marker");
    let mut cmd = server("grandchild");
    cmd.arg(&marker);
    let conn = spawn(&cmd);
    grows(&marker);
    drop(conn);
    stops_growing(&marker);
}

/// Not a test of its own: the host process that
/// `the_tree_dies_with_the_host` starts (this test binary again, with
/// `HOST_MARKER` set) and kills. It starts a server with a grandchild and
/// waits; without `HOST_MARKER` it does nothing.
#[test]
fn helper_host_process() {
    let Some(marker) = std::env::var_os("HOST_MARKER") else {
        return;
    };
    let mut cmd = server("grandchild");
    cmd.arg(&marker);
    let _conn = spawn(&cmd);
    std::thread::sleep(Duration::from_secs(60));
}

#[test]
fn the_tree_dies_with_the_host() {
    let dir = scratch("host-killed");
    let marker = dir.join("marker");
    let mut host = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "helper_host_process", "--nocapture"])
        .env("HOST_MARKER", &marker)
        .spawn()
        .unwrap();
    grows(&marker);
    host.kill().unwrap(); // TerminateProcess: no destructor runs
    host.wait().unwrap();
    stops_growing(&marker);
}

#[test]
fn a_server_that_crashes_is_restarted_and_the_next_call_succeeds() {
    let dir = scratch("restart");
    let marker = dir.join("grandchild");
    let mut cmd = server("crash-after");
    cmd.arg("1").arg(&marker).restart(Some(
        RestartPolicy::new().backoff(Duration::from_millis(50), Duration::from_millis(50)),
    ));
    let mut conn = spawn(&cmd);
    let first = conn.pid().unwrap();
    round_trip(&mut conn);
    grows(&marker); // the old server's grandchild runs
    let crash = conn
        .request("tools/call", None, Some(Duration::from_secs(30)))
        .unwrap();
    let mut stderr = Vec::new();
    match next_non_stderr(&mut conn, Duration::from_secs(30), &mut stderr) {
        Some(Ev::Failed(id)) => assert_eq!(id, crash),
        other => panic!("expected the failure of {crash}, got {other:?}"),
    }
    assert_eq!(stderr, ["boom"], "its stderr came first");
    assert_eq!(conn.end_reason(), Some(exited(7, false)));
    assert_eq!(conn.notify("x", None), Err(Error::Restarting));
    match next_non_stderr(&mut conn, Duration::from_secs(30), &mut stderr) {
        Some(Ev::Restarted(pid, 1, reason)) => {
            assert_ne!(pid, first);
            assert_eq!(Some(pid), conn.pid());
            assert_eq!(reason, exited(7, false));
        }
        other => panic!("expected the restart, got {other:?}"),
    }
    // The new server (which starts a grandchild of its own) answers.
    round_trip(&mut conn);
    assert_eq!(conn.restarts(), 1);
    conn.close(Duration::from_secs(5)).unwrap();
    let out = run_to_closed(&mut conn, Duration::from_secs(10));
    assert!(
        !out.events.iter().any(|e| matches!(e, Ev::Restarted(..))),
        "restarted after close"
    );
    // Both grandchildren are gone: the old one with its job at the
    // restart, the new one with its job at the close.
    stops_growing(&marker);
}

#[test]
fn a_server_that_crashes_at_start_stops_at_the_crash_loop() {
    let mut cmd = server("exit");
    cmd.arg("3").restart(Some(
        RestartPolicy::new()
            .backoff(Duration::from_millis(10), Duration::from_millis(10))
            .crash_loop(2, Duration::from_secs(60)),
    ));
    let mut conn = spawn(&cmd);
    let out = run_to_closed(&mut conn, Duration::from_secs(20));
    let restarts: Vec<_> = out
        .events
        .iter()
        .filter(|e| matches!(e, Ev::Restarted(..)))
        .collect();
    assert_eq!(restarts.len(), 1, "{:?}", out.events);
    assert_eq!(conn.restarts(), 1);
    assert_eq!(conn.end_reason(), Some(exited(3, true)));
    assert_eq!(conn.exit_status().and_then(|s| s.code()), Some(3));
}
