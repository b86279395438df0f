//! The OS layer through the safe API: [`Connection::spawn`] with its
//! [`Command`] (environment rules, working directory, stderr modes), the
//! shutdown sequence against servers that misbehave (never read, ignore
//! SIGTERM, leave a grandchild holding the pipes, exit at once, do not
//! exist), drop without close, 200 spawns in a row leaving no descriptor
//! and no zombie, and a [`Sender`](mcp_stdio::Sender) waking a thread that
//! waits in `next_event(None)`.
//!
//! The servers are `sh -c` scripts over the usual tools (cat, sed, sleep,
//! yes, head, env). Time bounds are generous (a debug build on a loaded
//! machine) but tight enough to catch a hang or a missed deadline. Tests
//! run in parallel, except the two that need the process to themselves
//! (they count descriptors, or set a variable of the process's
//! environment): those take [`exclusive`], every other test [`shared`].

#![cfg(all(unix, os_io))]

#[path = "connection_common/mod.rs"]
mod common;
#[cfg(target_os = "linux")]
#[path = "fd_census/mod.rs"]
mod fd_census;

use std::collections::BTreeMap;
use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::sync::{mpsc, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::{Duration, Instant};

use common::*;
#[cfg(target_os = "linux")]
use fd_census::Descriptors;
use mcp_stdio::{Command, Connection, EnvMode, Error, Event, InvalidKind, SpawnCause, StderrMode};

static PROCESS: RwLock<()> = RwLock::new(());

/// Runs alongside the other tests that take it.
fn shared() -> RwLockReadGuard<'static, ()> {
    PROCESS.read().unwrap_or_else(|e| e.into_inner())
}

/// Runs alone: no other test of this file holds a connection meanwhile.
fn exclusive() -> RwLockWriteGuard<'static, ()> {
    PROCESS.write().unwrap_or_else(|e| e.into_inner())
}

/// A name no other process or test uses.
fn unique(what: &str) -> String {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static N: AtomicUsize = AtomicUsize::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    format!(
        "{what}_{}_{nanos}_{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    )
}

/// A fresh directory under the temporary one, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new() -> TempDir {
        let dir = std::env::temp_dir().join(unique("mcp_stdio_conn_test"));
        std::fs::create_dir(&dir).unwrap();
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Answers `echo` requests (`{"echoed":true}`) until its stdin ends, then
/// exits 0. First it sends a `ping` request (id "s1"); when answered it
/// sends the notification `notifications/got_pong`.
const ECHO_SERVER: &str = r#"
printf '%s\n' '{"jsonrpc":"2.0","id":"s1","method":"ping"}'
while IFS= read -r line; do
  case "$line" in
    *'"method":"echo"'*)
      id=${line#*\"id\":}; id=${id%%,*}
      printf '{"jsonrpc":"2.0","id":%s,"result":{"echoed":true}}\n' "$id" ;;
    *'"id":"s1"'*)
      printf '%s\n' '{"jsonrpc":"2.0","method":"notifications/got_pong"}' ;;
  esac
done
"#;

/// Answers every request line with `{"jsonrpc":"2.0","id":<id>,"result":{}}`
/// (numeric ids), line by line, until its stdin ends.
const SED_ECHO: &str =
    r#"exec sed -u 's/.*"id":\([0-9]*\).*/{"jsonrpc":"2.0","id":\1,"result":{}}/'"#;

// ---------------------------------------------------------------------------
// 1. A server that behaves.

#[test]
fn an_echo_server_answers_and_closes_cleanly() {
    let _g = shared();
    let mut conn = spawn(&sh(ECHO_SERVER));
    let pid = conn.pid().expect("a spawned connection has a pid");
    assert!(pid > 0);
    assert_eq!(conn.exit_status(), None, "no exit status before Closed");
    let sender = conn.sender();

    // The server's request, answered while its event is held (through a
    // Sender: the event borrows the connection).
    match conn.next_event(Some(Duration::from_secs(10))) {
        Ok(Some(Event::Message { envelope, line })) => {
            assert!(mcp_stdio::json_string_eq(envelope.method.unwrap(), "ping"));
            assert_eq!(envelope.id, Some(&b"\"s1\""[..]));
            assert_eq!(line, br#"{"jsonrpc":"2.0","id":"s1","method":"ping"}"#);
            sender.respond(envelope.id.unwrap(), b"{}").unwrap();
        }
        other => panic!("want the server's ping, got {other:?}"),
    }
    let mut stderr = Vec::new();
    let got = next_non_stderr(&mut conn, Duration::from_secs(10), &mut stderr);
    assert!(
        got.as_ref()
            .is_some_and(|e| e.is_method("notifications/got_pong")),
        "want got_pong, got {got:?} (stderr {stderr:?})"
    );

    // Our requests: ids 1, 2, 3, each answered with its own id.
    for want in 1..=3 {
        let id = conn
            .request("echo", Some(br#"{"n":1}"#), Some(Duration::from_secs(30)))
            .unwrap();
        assert_eq!(id, want);
        conn.notify("notifications/ignored", None).unwrap();
        match next_non_stderr(&mut conn, Duration::from_secs(10), &mut stderr) {
            Some(Ev::Response {
                id: answered,
                result,
                error,
                ..
            }) => {
                assert_eq!(answered, id);
                assert_eq!(result.as_deref(), Some(&br#"{"echoed":true}"#[..]));
                assert_eq!(error, None);
            }
            other => panic!("want the response to {id}, got {other:?} (stderr {stderr:?})"),
        }
    }

    // Close: the server sees the end of its stdin and exits 0, well before
    // the grace (a SIGTERM would show in the exit status).
    conn.close(Duration::from_secs(2)).unwrap();
    assert_eq!(conn.request("echo", None, None), Err(Error::Closed));
    assert_eq!(sender.notify("late", None), Err(Error::Closed));
    let out = run_to_closed(&mut conn, Duration::from_secs(6));
    assert_eq!(out.non_stderr(), vec![&Ev::Closed], "{:?}", out.events);
    assert!(
        stderr.is_empty() && out.stderr().is_empty(),
        "stderr: {stderr:?} {:?}",
        out.stderr()
    );
    let status = conn.exit_status().expect("an exit status after Closed");
    assert!(status.success(), "exit status {status:?}");
    assert!(
        out.took < Duration::from_secs(2),
        "the server exits at the end of its stdin, but Closed took {:?}",
        out.took
    );
    drop(conn);
    assert!(reaped(pid), "server {pid} not reaped");
    // A sender that outlives its connection.
    assert_eq!(sender.request("echo", None, None), Err(Error::Closed));
}

// ---------------------------------------------------------------------------
// 2. Environment and working directory.

fn env_program() -> &'static str {
    ["/usr/bin/env", "/bin/env"]
        .into_iter()
        .find(|p| std::path::Path::new(p).exists())
        .expect("an env program")
}

/// The environment `env` prints when spawned from `cmd` (its stdout lines,
/// which are no JSON: invalid lines).
fn environment_of(cmd: &mut Command) -> BTreeMap<String, String> {
    let mut conn = spawn(cmd);
    let out = run_to_closed(&mut conn, Duration::from_secs(10));
    assert!(
        conn.exit_status().is_some_and(|s| s.success()),
        "env: {:?}, stderr {:?}",
        conn.exit_status(),
        out.stderr()
    );
    let mut vars = BTreeMap::new();
    for e in &out.events {
        match e {
            Ev::Invalid {
                kind: InvalidKind::ParseError,
                line: Some(line),
                ..
            } => {
                let line = String::from_utf8_lossy(line);
                let (name, value) = line.split_once('=').expect("NAME=value");
                vars.insert(name.to_string(), value.to_string());
            }
            Ev::Closed => {}
            other => panic!("env printed {other:?}"),
        }
    }
    vars
}

#[test]
fn environment_modes_and_overlays() {
    // Sets a variable of the process: no spawn runs meanwhile.
    let _g = exclusive();
    let secret = unique("MCP_STDIO_TEST_SECRET");
    std::env::set_var(&secret, "hunter2");
    let host_path = std::env::var("PATH").expect("the tests run with a PATH");

    // Default: PATH (and the others of the list) pass, the secret does not.
    let vars = environment_of(Command::new(env_program()).env_mode(EnvMode::Default));
    assert_eq!(vars.get("PATH"), Some(&host_path));
    assert!(!vars.contains_key(&secret), "{vars:?}");
    let allowed = [
        "HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LANG", "LC_ALL", "LC_CTYPE", "TZ",
        "TMPDIR",
    ];
    for (name, value) in &vars {
        assert!(allowed.contains(&name.as_str()), "{name} passed by default");
        assert_eq!(std::env::var(name).as_ref(), Ok(value), "{name}");
    }
    // Default is the default.
    assert_eq!(environment_of(&mut Command::new(env_program())), vars);

    // Inherit: every variable, the secret too; env_remove takes it out.
    let vars = environment_of(Command::new(env_program()).env_mode(EnvMode::Inherit));
    assert_eq!(vars.get(&secret).map(String::as_str), Some("hunter2"));
    let vars = environment_of(
        Command::new(env_program())
            .env_mode(EnvMode::Inherit)
            .env_remove(&secret),
    );
    assert!(!vars.contains_key(&secret));
    assert_eq!(vars.get("PATH"), Some(&host_path));

    // Overlays, in order, over Default.
    let vars = environment_of(
        Command::new(env_program())
            .env("MCP_STDIO_OVERLAY", "one")
            .env("MCP_STDIO_OVERLAY", "two")
            .env("MCP_STDIO_GONE", "x")
            .env_remove("MCP_STDIO_GONE")
            .env("HOME", "/nowhere/home")
            .env_remove("PATH"),
    );
    assert_eq!(
        vars.get("MCP_STDIO_OVERLAY").map(String::as_str),
        Some("two")
    );
    assert_eq!(vars.get("HOME").map(String::as_str), Some("/nowhere/home"));
    assert!(!vars.contains_key("MCP_STDIO_GONE"));
    assert!(!vars.contains_key("PATH"), "{vars:?}");
    assert!(!vars.contains_key(&secret));

    // Clear: only what is set.
    let vars = environment_of(
        Command::new(env_program())
            .env_mode(EnvMode::Clear)
            .env("ONLY", "1")
            .env("ALSO", "a=b"),
    );
    let want: BTreeMap<String, String> = [("ALSO", "a=b"), ("ONLY", "1")]
        .into_iter()
        .map(|(n, v)| (n.to_string(), v.to_string()))
        .collect();
    assert_eq!(vars, want);

    std::env::remove_var(&secret);
}

#[test]
fn an_environment_name_that_is_empty_or_holds_an_equals_sign_is_refused() {
    let _g = shared();
    for name in ["A=B", "=", "", "=LEADING"] {
        let mut cmd = Command::new("true");
        cmd.env(name, "x");
        match Connection::spawn(&cmd) {
            Err(Error::InvalidArgument) => {}
            Err(e) => panic!("env name {name:?}: {e:?}"),
            Ok(conn) => panic!("env name {name:?}: spawned pid {:?}", conn.pid()),
        }
    }
}

#[test]
fn the_working_directory_is_the_one_given() {
    let _g = shared();
    let dir = TempDir::new();
    let want = std::fs::canonicalize(&dir.0).unwrap();
    let mut cmd = sh("pwd -P >&2; ls >&2");
    cmd.current_dir(&dir.0);
    std::fs::write(dir.0.join("marker-file"), b"").unwrap();
    let mut conn = spawn(&cmd);
    let out = run_to_closed(&mut conn, Duration::from_secs(10));
    assert_eq!(
        out.stderr(),
        vec![
            want.to_str().unwrap().to_string(),
            "marker-file".to_string()
        ]
    );
    assert!(conn.exit_status().unwrap().success());

    // A program given by a relative path is found from that directory.
    std::fs::write(dir.0.join("server.sh"), "echo from-the-script >&2\n").unwrap();
    let mut cmd = Command::new("sh");
    cmd.arg("./server.sh").current_dir(&dir.0);
    let mut conn = spawn(&cmd);
    let out = run_to_closed(&mut conn, Duration::from_secs(10));
    assert_eq!(out.stderr(), vec!["from-the-script".to_string()]);
}

// ---------------------------------------------------------------------------
// 3. Stderr.

#[test]
fn stderr_lines_come_as_events_in_order() {
    let _g = shared();
    // Five short lines, one of 100,000 bytes (two pieces: 64 KiB and the
    // rest), and a last one without a newline.
    let script = "for i in 1 2 3 4 5; do echo \"line $i\" >&2; done
                  head -c 100000 /dev/zero | tr '\\0' x >&2; echo >&2
                  printf 'the last, without newline' >&2";
    let mut conn = spawn(&sh(script));
    let out = run_to_closed(&mut conn, Duration::from_secs(10));
    let mut want: Vec<String> = (1..=5).map(|i| format!("line {i}")).collect();
    want.push("x".repeat(65536));
    want.push("x".repeat(100_000 - 65536));
    want.push("the last, without newline".to_string());
    let got = out.stderr();
    assert_eq!(
        got.len(),
        want.len(),
        "stderr lines: {:?}",
        got.iter().map(String::len).collect::<Vec<_>>()
    );
    assert_eq!(got, want);
    assert_eq!(out.events.last(), Some(&Ev::Closed));
    assert_eq!(conn.stderr_dropped(), 0);
    assert!(conn.exit_status().unwrap().success());
}

/// A `\r\n` line end (how Windows programs write their stderr) is taken
/// off whole; a `\r` anywhere else stays.
#[test]
fn a_crlf_line_end_on_stderr_is_taken_off_whole() {
    let _g = shared();
    let script = "printf 'one\\r\\ntwo\\r\\r\\nin\\rside\\n\\r\\n' >&2";
    let mut conn = spawn(&sh(script));
    let out = run_to_closed(&mut conn, Duration::from_secs(10));
    assert_eq!(out.stderr(), ["one", "two\r", "in\rside", ""]);
}

/// The last 20 lines of stderr stay readable after the server is gone,
/// whether taken as events or not; none where stderr is not read.
#[test]
fn the_stderr_tail_outlives_the_server() {
    let _g = shared();
    let script = "i=0; while [ $i -lt 25 ]; do echo \"line $i\" >&2; i=$((i+1)); done
                  printf 'ModuleNotFoundError: no module named foo' >&2; exit 3";
    let mut conn = spawn(&sh(script));
    let out = run_to_closed(&mut conn, Duration::from_secs(10));
    assert_eq!(conn.exit_status().and_then(|s| s.code()), Some(3));
    assert_eq!(out.stderr().len(), 26, "every line came as an event too");
    let mut want: String = (6..25).map(|i| format!("line {i}\n")).collect();
    want.push_str("ModuleNotFoundError: no module named foo\n");
    assert_eq!(String::from_utf8(conn.stderr_tail()).unwrap(), want);

    let mut cmd = sh("echo lost >&2; exit 1");
    cmd.stderr(StderrMode::Discard);
    let mut conn = spawn(&cmd);
    run_to_closed(&mut conn, Duration::from_secs(10));
    assert_eq!(conn.stderr_tail(), b"", "a discarded stderr is not read");
}

#[test]
fn discarded_stderr_gives_no_event() {
    let _g = shared();
    let mut cmd = sh(
        "echo hidden >&2; echo '{\"jsonrpc\":\"2.0\",\"method\":\"hello\"}'; echo hidden again >&2",
    );
    cmd.stderr(StderrMode::Discard);
    let mut conn = spawn(&cmd);
    let out = run_to_closed(&mut conn, Duration::from_secs(10));
    assert_eq!(out.events.len(), 2, "{:?}", out.events);
    assert!(out.events[0].is_method("hello"), "{:?}", out.events);
    assert_eq!(out.events[1], Ev::Closed);
    assert_eq!(conn.stderr_dropped(), 0);
    assert!(conn.exit_status().unwrap().success());
}

#[test]
fn a_stderr_flood_never_blocks_the_server() {
    let _g = shared();
    // 4 MiB of stderr in lines of 16 bytes (15 and the newline), then a
    // message on stdout, then an echo server.
    const FLOOD: u64 = 4 << 20;
    let script = format!(
        "yes 'stderr line 015' | head -c {FLOOD} >&2
         echo '{{\"jsonrpc\":\"2.0\",\"method\":\"flooded\"}}'
         {SED_ECHO}"
    );
    let mut conn = spawn(&sh(&script));
    // The test takes no event for a while (the server is stuck on its full
    // pipe meanwhile: nothing drains it but next_event).
    std::thread::sleep(Duration::from_millis(300));
    let started = Instant::now();
    let mut before = Vec::new();
    loop {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "no message after {:?} and {} stderr lines",
            started.elapsed(),
            before.len()
        );
        match next(&mut conn, Some(Duration::from_secs(1))) {
            Some(e) if e.is_method("flooded") => break,
            Some(e @ Ev::Stderr(_)) => before.push(e),
            Some(other) => panic!("unexpected {other:?}"),
            None => {}
        }
    }
    let took = started.elapsed();
    let dropped = conn.stderr_dropped();
    println!(
        "stderr flood: the message after {took:?}, {} stderr lines before it, {dropped} bytes dropped",
        before.len()
    );
    // The server wrote its 4 MiB while the test took far fewer lines: more
    // than the 1 MiB backlog was dropped, not held.
    assert!(dropped > 0, "nothing dropped");
    assert!(dropped <= FLOOD, "{dropped} dropped");
    assert!(stderr_bytes(&before) + dropped <= FLOOD);

    // The connection still works.
    let id = conn
        .request("echo", None, Some(Duration::from_secs(30)))
        .unwrap();
    let mut lines = Vec::new();
    match next_non_stderr(&mut conn, Duration::from_secs(10), &mut lines) {
        Some(Ev::Response { id: answered, .. }) => assert_eq!(answered, id),
        other => panic!("want the response, got {other:?}"),
    }
    conn.close(Duration::from_secs(1)).unwrap();
    let out = run_to_closed(&mut conn, Duration::from_secs(10));
    // Every byte of the flood was either delivered or counted as dropped.
    let delivered = stderr_bytes(&before)
        + lines.iter().map(|l| l.len() as u64 + 1).sum::<u64>()
        + stderr_bytes(&out.events);
    assert_eq!(
        delivered + conn.stderr_dropped(),
        FLOOD,
        "delivered {delivered}"
    );
    assert!(conn.exit_status().unwrap().success());
}

// ---------------------------------------------------------------------------
// 4. Servers that misbehave.

/// The grace of the closes here.
const GRACE: Duration = Duration::from_millis(200);

#[test]
fn a_server_that_never_reads_its_stdin() {
    let _g = shared();
    let mut conn = spawn(&sh("exec sleep 1000"));
    let pid = conn.pid().unwrap();
    conn.set_max_queued(1 << 20).unwrap();
    let params = format!("{{\"pad\":\"{}\"}}", "x".repeat(64 << 10));
    let line_len = params.len() + 50;
    let (mut accepted, mut refused) = (0usize, 0usize);
    let (mut longest_send, mut longest_poll) = (Duration::ZERO, Duration::ZERO);
    for _ in 0..300 {
        // 300 sends of 64 KiB: about 20 MB offered.
        let call = Instant::now();
        match conn.notify("fill", Some(params.as_bytes())) {
            Ok(()) => accepted += line_len,
            Err(Error::WouldBlock) => refused += 1,
            Err(e) => panic!("notify: {e:?}"),
        }
        longest_send = longest_send.max(call.elapsed());
        let (got, took) = next_timed(&mut conn, Some(Duration::ZERO));
        assert_eq!(got, Ok(None));
        longest_poll = longest_poll.max(took);
    }
    println!(
        "never reads: {accepted} bytes taken, {refused} sends refused, longest send \
         {longest_send:?}, longest next_event(0) {longest_poll:?}"
    );
    assert!(refused > 200, "{refused} sends refused");
    // The bound, what the pipe took (64 KiB by default, up to 1 MiB), a line.
    assert!(
        accepted <= (2 << 20) + 2 * line_len,
        "{accepted} bytes taken"
    );
    assert!(
        longest_send < Duration::from_millis(250),
        "a send took {longest_send:?}"
    );
    assert!(
        longest_poll < Duration::from_millis(250),
        "next_event(0) took {longest_poll:?}"
    );

    conn.close(GRACE).unwrap();
    let out = run_to_closed(&mut conn, Duration::from_secs(5));
    println!("never reads: Closed {:?} after close({GRACE:?})", out.took);
    assert!(
        out.took <= GRACE * 3 + Duration::from_millis(600),
        "Closed after {:?}",
        out.took
    );
    assert!(
        out.took >= GRACE - Duration::from_millis(20),
        "Closed after {:?}",
        out.took
    );
    assert_eq!(conn.exit_status().unwrap().signal(), Some(libc::SIGTERM));
    drop(conn);
    assert!(reaped(pid));
}

/// A server that ignores SIGTERM and sleeps, once its trap is set (it says
/// so on stderr: a SIGTERM before would kill it, and the test would test
/// nothing); and its pid.
fn spawn_ignoring_sigterm() -> (Connection, u32) {
    let mut conn = spawn(&sh("trap '' TERM; echo ready >&2; exec sleep 1000"));
    let pid = conn.pid().unwrap();
    assert_eq!(
        next(&mut conn, Some(Duration::from_secs(10))),
        Some(Ev::Stderr(b"ready".to_vec()))
    );
    (conn, pid)
}

/// `Closed` came `took` after `close(GRACE)`: at the group's SIGKILL, twice
/// the grace (and not much later: a debug build on a loaded machine).
fn assert_closed_at_twice_the_grace(took: Duration) {
    assert!(
        took >= GRACE * 2 - Duration::from_millis(20),
        "Closed after {took:?}"
    );
    assert!(
        took <= GRACE * 6 + Duration::from_millis(600),
        "Closed after {took:?}"
    );
}

#[test]
fn a_server_that_ignores_sigterm_is_killed_at_twice_the_grace() {
    let _g = shared();
    let (mut conn, pid) = spawn_ignoring_sigterm();
    let closing = Instant::now();
    conn.close(GRACE).unwrap();
    let out = run_to_closed(&mut conn, Duration::from_secs(5));
    let took = closing.elapsed();
    println!("ignores SIGTERM: Closed {took:?} after close({GRACE:?})");
    assert_closed_at_twice_the_grace(took);
    assert_eq!(out.non_stderr(), vec![&Ev::Closed]);
    let status = conn.exit_status().unwrap();
    assert_eq!(status.signal(), Some(libc::SIGKILL), "{status:?}");
    drop(conn);
    assert!(reaped(pid));
}

#[test]
fn a_grandchild_holding_the_pipes_is_killed_with_the_group() {
    let _g = shared();
    // The grandchild ignores SIGTERM and holds stdout and stderr; the
    // server (cat) exits at the end of its stdin.
    let script = "(trap '' TERM; exec sleep 1000) & echo $! >&2; exec cat";
    let mut conn = spawn(&sh(script));
    let pid = conn.pid().unwrap();
    let grandchild: u32 = match next(&mut conn, Some(Duration::from_secs(10))) {
        Some(Ev::Stderr(line)) => String::from_utf8(line).unwrap().trim().parse().unwrap(),
        other => panic!("want the grandchild's pid, got {other:?}"),
    };
    assert!(!gone(grandchild));
    let closing = Instant::now();
    conn.close(GRACE).unwrap();
    let out = run_to_closed(&mut conn, Duration::from_secs(5));
    let took = closing.elapsed();
    println!("grandchild holds the pipes: Closed {took:?} after close({GRACE:?})");
    // Its pipes stay open until the group's SIGKILL, at twice the grace.
    assert_closed_at_twice_the_grace(took);
    assert_eq!(out.non_stderr(), vec![&Ev::Closed]);
    // The server itself exited at the end of its stdin.
    assert_eq!(conn.exit_status().unwrap().code(), Some(0));
    assert!(
        gone_within(grandchild, Duration::from_secs(2)),
        "grandchild {grandchild} still alive after Closed"
    );
    drop(conn);
    assert!(reaped(pid));
}

#[test]
fn a_server_that_exits_leaving_a_grandchild_is_closed_after_the_exit_grace() {
    let _g = shared();
    // The server exits by itself; a grandchild holds its pipes. The
    // connection closes as after close() with a 2 s grace: SIGTERM to the
    // group at 2 s ends the grandchild, and the pipes with it.
    let script = "sleep 1000 & echo $! >&2; exit 0";
    let started = Instant::now();
    let mut conn = spawn(&sh(script));
    let grandchild: u32 = match next(&mut conn, Some(Duration::from_secs(10))) {
        Some(Ev::Stderr(line)) => String::from_utf8(line).unwrap().trim().parse().unwrap(),
        other => panic!("want the grandchild's pid, got {other:?}"),
    };
    let out = run_to_closed(&mut conn, Duration::from_secs(10));
    let took = started.elapsed();
    println!("exits, grandchild holds the pipes: Closed {took:?} after the spawn");
    assert!(took >= Duration::from_millis(1900), "Closed after {took:?}");
    assert!(took <= Duration::from_secs(7), "Closed after {took:?}");
    assert_eq!(out.non_stderr(), vec![&Ev::Closed]);
    assert_eq!(conn.exit_status().unwrap().code(), Some(0));
    assert!(
        gone_within(grandchild, Duration::from_secs(2)),
        "grandchild alive"
    );
}

#[test]
fn what_is_left_of_the_group_dies_when_the_connection_ends() {
    let _g = shared();
    // A child that outlives the server, holding none of its pipes (a
    // daemon it started, a wrapper's node): nothing holds the connection
    // open, and it ends at once; the child ends with it, as in a Job
    // Object on Windows.
    let script = "sleep 1000 </dev/null >/dev/null 2>&1 & echo $! >&2; exec cat";
    let mut conn = spawn(&sh(script));
    let grandchild: u32 = match next(&mut conn, Some(Duration::from_secs(10))) {
        Some(Ev::Stderr(line)) => String::from_utf8(line).unwrap().trim().parse().unwrap(),
        other => panic!("want the grandchild's pid, got {other:?}"),
    };
    conn.close(GRACE).unwrap();
    let out = run_to_closed(&mut conn, Duration::from_secs(5));
    assert_eq!(out.non_stderr(), vec![&Ev::Closed]);
    assert_eq!(
        conn.exit_status().unwrap().code(),
        Some(0),
        "exited by itself"
    );
    assert!(
        out.took < GRACE,
        "no signal was needed for the server: {:?}",
        out.took
    );
    assert!(
        gone_within(grandchild, Duration::from_secs(2)),
        "grandchild {grandchild} outlived the connection"
    );
}

#[test]
fn a_server_that_exits_at_once_fails_the_pending_request() {
    let _g = shared();
    let started = Instant::now();
    let mut conn = spawn(&sh("exit 3"));
    let pid = conn.pid().unwrap();
    let id = conn
        .request("tools/list", None, Some(Duration::from_secs(30)))
        .unwrap();
    let out = run_to_closed(&mut conn, Duration::from_secs(10));
    let took = started.elapsed();
    println!("exits at once: Closed {took:?} after the spawn");
    assert_eq!(
        out.non_stderr(),
        vec![&Ev::Failed(id), &Ev::Closed],
        "{:?}",
        out.events
    );
    assert_eq!(conn.exit_status().unwrap().code(), Some(3));
    // Its pipes ended with it: no grace, no timeout is waited for.
    assert!(took < Duration::from_millis(1500), "Closed after {took:?}");
    assert_eq!(conn.request("tools/list", None, None), Err(Error::Closed));
    drop(conn);
    assert!(reaped(pid));
}

#[test]
fn spawn_failures_say_why() {
    let _g = shared();
    let spawn_err = |cmd: &Command| match Connection::spawn(cmd) {
        Err(e) => e,
        Ok(conn) => panic!("{cmd:?} spawned: pid {:?}", conn.pid()),
    };
    let spawn_failure = |cmd: &Command| match spawn_err(cmd) {
        Error::SpawnFailed(failure) => *failure,
        other => panic!("{cmd:?}: want SpawnFailed, got {other:?}"),
    };
    let dir = TempDir::new();
    let missing = unique("mcp-stdio-no-such-program");
    // A name looked up in the PATH the server gets: the directories named.
    let mut cmd = Command::new(&missing);
    let path = format!("{}:/nonexistent/bin", dir.0.display());
    cmd.env("PATH", &path);
    let failure = spawn_failure(&cmd);
    assert_eq!(failure.code, libc::ENOENT);
    assert_eq!(
        failure.cause,
        SpawnCause::NotInPath(vec![dir.0.clone(), PathBuf::from("/nonexistent/bin")])
    );
    assert_eq!(
        failure.to_string(),
        format!(
            "cannot start `{missing}`: not found in PATH (searched: {}, /nonexistent/bin)",
            dir.0.display()
        )
    );
    // A path: the system's word, no PATH.
    let failure = spawn_failure(&Command::new(format!("/nonexistent/{missing}")));
    assert_eq!(
        (failure.code, &failure.cause),
        (libc::ENOENT, &SpawnCause::Os)
    );
    assert_eq!(
        failure.to_string(),
        format!("cannot start `/nonexistent/{missing}`: No such file or directory (os error 2)")
    );
    // A working directory that is missing: named as the cause.
    let mut cmd = Command::new("true");
    cmd.current_dir(format!("/nonexistent/{missing}"));
    let failure = spawn_failure(&cmd);
    assert_eq!(failure.code, libc::ENOENT);
    assert_eq!(
        failure.cause,
        SpawnCause::WorkingDirectory(PathBuf::from(format!("/nonexistent/{missing}")))
    );
    assert!(
        failure.to_string().starts_with(&format!(
            "cannot start `true`: working directory `/nonexistent/{missing}`: "
        )),
        "{failure}"
    );
    // A file that is not executable.
    let script = dir.0.join("not-executable");
    std::fs::write(&script, "#!/bin/sh\n").unwrap();
    let failure = spawn_failure(&Command::new(&script));
    assert_eq!(
        (failure.code, &failure.cause),
        (libc::EACCES, &SpawnCause::Os)
    );
    assert_eq!(
        spawn_err(&Command::new(&script)).os_code(),
        Some(libc::EACCES)
    );
    // The name of a program not in the PATH the server gets.
    let mut cmd = Command::new("sh");
    cmd.env("PATH", dir.0.as_os_str());
    let failure = spawn_failure(&cmd);
    assert_eq!(failure.cause, SpawnCause::NotInPath(vec![dir.0.clone()]));
    // An empty program, a NUL, a bad variable name: each its own error.
    assert_eq!(spawn_err(&Command::new("")), Error::EmptyProgram);
    assert_eq!(
        spawn_err(&Command::new("")).to_string(),
        "the program to start is empty"
    );
    let mut cmd = Command::new("true");
    cmd.arg("a\0b");
    assert_eq!(spawn_err(&cmd), Error::InvalidText);
    let mut cmd = Command::new("true");
    cmd.env("NAME", "a\0b");
    assert_eq!(spawn_err(&cmd), Error::InvalidText);
    let mut cmd = Command::new("true");
    cmd.env("A=B", "c");
    assert_eq!(spawn_err(&cmd), Error::InvalidArgument);
}

// ---------------------------------------------------------------------------
// 5. Drop without close.

#[test]
fn dropping_an_open_connection_ends_a_well_behaved_server() {
    let _g = shared();
    let conn = spawn(&Command::new("cat"));
    let pid = conn.pid().unwrap();
    conn.request("tools/list", None, None).unwrap();
    assert!(!gone(pid));
    let dropping = Instant::now();
    drop(conn);
    let took = dropping.elapsed();
    println!("drop (cat): {took:?}");
    assert!(took < Duration::from_secs(3), "drop took {took:?}");
    assert!(reaped(pid), "server {pid} not reaped after drop");
    assert!(gone(pid));
}

#[test]
fn dropping_an_open_connection_kills_a_server_that_ignores_sigterm() {
    let _g = shared();
    let (conn, pid) = spawn_ignoring_sigterm();
    let dropping = Instant::now();
    drop(conn);
    let took = dropping.elapsed();
    println!("drop (ignores SIGTERM): {took:?}");
    // SIGTERM at the 2 s grace, SIGKILL at 4 s; about 5 s at most.
    assert!(took >= Duration::from_millis(3900), "drop took {took:?}");
    assert!(took < Duration::from_secs(8), "drop took {took:?}");
    assert!(reaped(pid), "server {pid} not reaped after drop");
}

// ---------------------------------------------------------------------------
// 6. Many servers in a row.

/// `pid` is a zombie child of ours (exited, not reaped).
#[cfg(target_os = "linux")]
fn zombie(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rfind(')')
            .and_then(|at| stat[at + 1..].trim_start().chars().next())
            == Some('Z')
    })
}

#[cfg(target_os = "linux")]
#[test]
fn two_hundred_spawns_leave_no_descriptor_and_no_zombie() {
    // Counts the descriptors of the process: nothing else runs meanwhile.
    let _g = exclusive();
    let before = Descriptors::now();
    let started = Instant::now();
    let mut pids = Vec::new();
    for i in 0..200 {
        let (mut conn, closed_by_us) = if i % 2 == 0 {
            // Ended by close: cat sees the end of its stdin.
            let conn = spawn(&Command::new("cat"));
            conn.close(Duration::from_secs(2)).unwrap();
            (conn, true)
        } else {
            // Ends by itself.
            (spawn(&Command::new("true")), false)
        };
        let pid = conn.pid().unwrap();
        let out = run_to_closed(&mut conn, Duration::from_secs(10));
        assert_eq!(out.events, vec![Ev::Closed], "cycle {i}");
        assert!(
            conn.exit_status().is_some_and(|s| s.success()),
            "cycle {i} (closed by us: {closed_by_us}): {:?}",
            conn.exit_status()
        );
        drop(conn);
        assert!(reaped(pid), "cycle {i}: server {pid} not reaped");
        pids.push(pid);
    }
    // Failed spawns leave nothing behind either.
    for _ in 0..50 {
        let missing = Connection::spawn(&Command::new("/nonexistent/program"));
        assert_eq!(missing.err().and_then(|e| e.os_code()), Some(libc::ENOENT));
        let mut cmd = Command::new("true");
        cmd.current_dir("/nonexistent/dir");
        assert_eq!(
            Connection::spawn(&cmd).err().and_then(|e| e.os_code()),
            Some(libc::ENOENT)
        );
    }
    println!(
        "200 spawns in {:?}; descriptors open before: {}, now: {}",
        started.elapsed(),
        before.len(),
        Descriptors::now().len()
    );
    Descriptors::assert_none_left_since(&before, "200 spawns");
    // (Each was reaped at its drop, checked above; none became a zombie
    // since.)
    for pid in pids {
        assert!(!zombie(pid), "{pid} is a zombie");
    }
}

// ---------------------------------------------------------------------------
// 7. Sending from other threads.

/// Aborts the process when not disarmed within `limit`: a `next_event(None)`
/// that is never woken would hang the test forever.
fn watchdog(what: &'static str, limit: Duration) -> mpsc::Sender<()> {
    let (disarm, armed) = mpsc::channel::<()>();
    std::thread::spawn(move || {
        if let Err(mpsc::RecvTimeoutError::Timeout) = armed.recv_timeout(limit) {
            eprintln!("{what}: still waiting after {limit:?}: aborting");
            std::process::abort();
        }
    });
    disarm
}

#[test]
fn a_send_from_another_thread_wakes_next_event_none() {
    let _g = shared();
    fn is_sender<T: Clone + Send + Sync + 'static>(_: &T) {}
    let mut conn = spawn(&sh(SED_ECHO));
    let sender = conn.sender();
    is_sender(&sender);
    let disarm = watchdog("next_event(None) woken by a send", Duration::from_secs(60));
    for round in 0..3 {
        let sender = sender.clone();
        let (sent_tx, sent_rx) = mpsc::channel();
        let thread = std::thread::spawn(move || {
            // Long enough for the main thread to be waiting in next_event.
            std::thread::sleep(Duration::from_millis(200));
            let id = sender.request("echo", None, None).unwrap();
            sent_tx.send((id, Instant::now())).unwrap();
        });
        let event = next(&mut conn, None);
        let answered = Instant::now();
        let (id, sent_at) = sent_rx.recv().unwrap();
        thread.join().unwrap();
        match event {
            Some(Ev::Response { id: got, .. }) => assert_eq!(got, id, "round {round}"),
            other => panic!("round {round}: want the response to {id}, got {other:?}"),
        }
        let latency = answered.saturating_duration_since(sent_at);
        println!("round {round}: answered {latency:?} after the send");
        assert!(
            latency < Duration::from_secs(2),
            "answered {latency:?} after the send"
        );
    }

    // Four threads, 50 requests each, while the main thread waits with no
    // limit: every answer comes, each once.
    let threads: Vec<_> = (0..4)
        .map(|_| {
            let sender = sender.clone();
            std::thread::spawn(move || {
                (0..50)
                    .map(|_| sender.request("echo", None, None).unwrap())
                    .collect::<Vec<i64>>()
            })
        })
        .collect();
    let mut answered = std::collections::BTreeSet::new();
    while answered.len() < 200 {
        match next(&mut conn, None) {
            Some(Ev::Response { id, .. }) => assert!(answered.insert(id), "{id} twice"),
            other => panic!("want responses, got {other:?}"),
        }
    }
    let mut sent: Vec<i64> = threads
        .into_iter()
        .flat_map(|t| t.join().unwrap())
        .collect();
    sent.sort();
    assert_eq!(sent, (4..204).collect::<Vec<i64>>());
    assert_eq!(answered.into_iter().collect::<Vec<_>>(), sent);

    // A close from another thread wakes it too.
    let closer = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(200));
        sender.close(Duration::from_secs(2)).unwrap();
    });
    assert_eq!(next(&mut conn, None), Some(Ev::Closed));
    closer.join().unwrap();
    disarm.send(()).unwrap();
    assert!(conn.exit_status().unwrap().success());
}
