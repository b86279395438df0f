//! Shared by `tests/connection_spawn.rs` and `tests/connection_deadlines.rs`:
//! events copied out of the connection (an [`Event`] borrows it until the
//! next call), taking events until `Closed` with every call timed, servers
//! as `sh -c` scripts, and looks at processes and descriptors.

#![allow(dead_code)]

use std::time::{Duration, Instant};

use mcp_stdio::{
    json_string_eq, Command, Connection, EndReason, Error, Event, InvalidKind, ServerExit,
};

/// An [`Event`] with its data copied (its `Debug` shows at most 200 bytes
/// of a line).
#[derive(Clone, PartialEq, Eq)]
pub enum Ev {
    Message {
        line: Vec<u8>,
        id: Option<Vec<u8>>,
        method: Option<Vec<u8>>,
    },
    Response {
        id: i64,
        line: Vec<u8>,
        result: Option<Vec<u8>>,
        error: Option<Vec<u8>>,
    },
    TimedOut(i64),
    Failed(i64),
    Invalid {
        kind: InvalidKind,
        line: Option<Vec<u8>>,
        len: usize,
    },
    Stderr(Vec<u8>),
    /// A restart: the new pid, the attempt, why the server before ended.
    Restarted(u32, u32, EndReason),
    Closed,
    /// A kind this file does not know (`Event` is non-exhaustive).
    Other(String),
}

/// At most 200 bytes of `bytes`, as text.
fn clip(bytes: &[u8]) -> String {
    let shown = String::from_utf8_lossy(&bytes[..bytes.len().min(200)]).into_owned();
    if bytes.len() > 200 {
        format!("{shown:?}... ({} bytes)", bytes.len())
    } else {
        format!("{shown:?}")
    }
}

impl std::fmt::Debug for Ev {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Ev::Message { line, .. } => write!(f, "Message({})", clip(line)),
            Ev::Response { id, line, .. } => write!(f, "Response({id}, {})", clip(line)),
            Ev::TimedOut(id) => write!(f, "TimedOut({id})"),
            Ev::Failed(id) => write!(f, "Failed({id})"),
            Ev::Invalid { kind, line, len } => {
                let line = line.as_deref().map(clip);
                write!(f, "Invalid({kind:?}, {line:?}, len {len})")
            }
            Ev::Stderr(line) => write!(f, "Stderr({})", clip(line)),
            Ev::Restarted(pid, attempt, reason) => {
                write!(f, "Restarted(pid {pid}, attempt {attempt}, {reason})")
            }
            Ev::Closed => write!(f, "Closed"),
            Ev::Other(what) => write!(f, "Other({what})"),
        }
    }
}

impl Ev {
    /// A message whose method is `method`.
    pub fn is_method(&self, method: &str) -> bool {
        matches!(self, Ev::Message { method: Some(m), .. } if json_string_eq(m, method))
    }

    pub fn stderr_text(&self) -> Option<String> {
        match self {
            Ev::Stderr(line) => Some(String::from_utf8_lossy(line).into_owned()),
            _ => None,
        }
    }
}

/// The end of a server that exited with `code` by itself.
pub fn exited(code: i32, before_first_message: bool) -> EndReason {
    EndReason::ServerExited(ServerExit {
        code: Some(code),
        signal: None,
        before_first_message,
    })
}

/// Copies `event` out of the connection.
pub fn own(event: Event<'_>) -> Ev {
    match event {
        Event::Message { line, envelope } => Ev::Message {
            line: line.to_vec(),
            id: envelope.id.map(<[u8]>::to_vec),
            method: envelope.method.map(<[u8]>::to_vec),
        },
        Event::Response { id, line, envelope } => Ev::Response {
            id,
            line: line.to_vec(),
            result: envelope.result.map(<[u8]>::to_vec),
            error: envelope.error.map(<[u8]>::to_vec),
        },
        Event::RequestTimedOut { id } => Ev::TimedOut(id),
        Event::RequestFailed { id, .. } => Ev::Failed(id),
        Event::Invalid { kind, line, len } => Ev::Invalid {
            kind,
            line: line.map(<[u8]>::to_vec),
            len,
        },
        Event::Stderr { line } => Ev::Stderr(line.to_vec()),
        Event::Restarted {
            pid,
            attempt,
            reason,
        } => Ev::Restarted(pid, attempt, reason),
        Event::Closed => Ev::Closed,
        other => Ev::Other(format!("{other:?}")),
    }
}

/// `conn.next_event(timeout)`, the event copied, and how long the call took.
pub fn next_timed(
    conn: &mut Connection,
    timeout: Option<Duration>,
) -> (Result<Option<Ev>, Error>, Duration) {
    let started = Instant::now();
    let got = conn.next_event(timeout).map(|e| e.map(own));
    (got, started.elapsed())
}

/// `conn.next_event(timeout)`, the event copied; panics on an error.
pub fn next(conn: &mut Connection, timeout: Option<Duration>) -> Option<Ev> {
    match conn.next_event(timeout) {
        Ok(e) => e.map(own),
        Err(e) => panic!("next_event({timeout:?}): {e:?}"),
    }
}

/// Every event until `Closed`.
#[derive(Debug, Default)]
pub struct Outcome {
    /// Every event, `Closed` last.
    pub events: Vec<Ev>,
    /// From the start of the call to `Closed`.
    pub took: Duration,
    /// The longest single `next_event` call.
    pub longest_call: Duration,
}

impl Outcome {
    pub fn stderr(&self) -> Vec<String> {
        self.events.iter().filter_map(Ev::stderr_text).collect()
    }

    pub fn failed(&self) -> Vec<i64> {
        self.events
            .iter()
            .filter_map(|e| match e {
                Ev::Failed(id) => Some(*id),
                _ => None,
            })
            .collect()
    }

    /// The events other than stderr lines.
    pub fn non_stderr(&self) -> Vec<&Ev> {
        self.events
            .iter()
            .filter(|e| !matches!(e, Ev::Stderr(_)))
            .collect()
    }
}

/// The size of the stderr lines (newlines included) among `events`.
pub fn stderr_bytes(events: &[Ev]) -> u64 {
    events
        .iter()
        .map(|e| match e {
            Ev::Stderr(line) => line.len() as u64 + 1,
            _ => 0,
        })
        .sum()
}

/// Takes every event until `Closed`, each call waiting at most `step`
/// (`None`: no limit), and fails when `Closed` has not come within `limit`.
/// Checks that `Closed` is the last event: the next call gives
/// `Err(Error::Closed)`, at once.
pub fn run_to_closed_with(
    conn: &mut Connection,
    limit: Duration,
    step: Option<Duration>,
) -> Outcome {
    let started = Instant::now();
    let mut out = Outcome::default();
    loop {
        let elapsed = started.elapsed();
        assert!(
            elapsed <= limit,
            "no Closed within {limit:?}; {} events so far, the last ones: {:?}",
            out.events.len(),
            &out.events[out.events.len().saturating_sub(5)..]
        );
        let wait = step.map(|s| s.min(limit - elapsed + Duration::from_millis(1)));
        let (got, call) = next_timed(conn, wait);
        out.longest_call = out.longest_call.max(call);
        match got {
            Ok(Some(Ev::Closed)) => {
                out.events.push(Ev::Closed);
                break;
            }
            Ok(Some(e)) => out.events.push(e),
            Ok(None) => {}
            Err(e) => panic!(
                "next_event before Closed: {e:?} after {:?}",
                started.elapsed()
            ),
        }
    }
    out.took = started.elapsed();
    let (after, call) = next_timed(conn, Some(Duration::from_secs(5)));
    assert_eq!(after, Err(Error::Closed), "after Closed");
    assert!(
        call < Duration::from_millis(500),
        "next_event after Closed took {call:?}"
    );
    out
}

/// [`run_to_closed_with`], calls of at most 1 s.
pub fn run_to_closed(conn: &mut Connection, limit: Duration) -> Outcome {
    run_to_closed_with(conn, limit, Some(Duration::from_secs(1)))
}

/// The first event that is not a stderr line, waiting at most `limit` in
/// all; the stderr lines met on the way are appended to `stderr`.
pub fn next_non_stderr(
    conn: &mut Connection,
    limit: Duration,
    stderr: &mut Vec<String>,
) -> Option<Ev> {
    let end = Instant::now() + limit;
    loop {
        let now = Instant::now();
        if now >= end {
            return None;
        }
        match next(conn, Some(end - now)) {
            Some(Ev::Stderr(line)) => stderr.push(String::from_utf8_lossy(&line).into_owned()),
            other @ Some(_) => return other,
            None => return None,
        }
    }
}

/// `sh -c <script>`.
pub fn sh(script: &str) -> Command {
    let mut cmd = Command::new("sh");
    cmd.arg("-c").arg(script);
    cmd
}

/// Spawns, or panics with why not.
pub fn spawn(cmd: &Command) -> Connection {
    match Connection::spawn(cmd) {
        Ok(conn) => conn,
        Err(e) => panic!("spawn {cmd:?}: {e:?}"),
    }
}

/// `pid` is gone: no such process, or a zombie (killed; some other parent,
/// init say, has yet to reap it).
#[cfg(unix)]
pub fn gone(pid: u32) -> bool {
    #[cfg(target_os = "linux")]
    {
        match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            Err(_) => true,
            Ok(stat) => stat
                .rfind(')')
                .and_then(|at| stat[at + 1..].trim_start().chars().next())
                .is_some_and(|state| state == 'Z' || state == 'X'),
        }
    }
    #[cfg(not(target_os = "linux"))]
    no_such_process(pid)
}

/// Waits (polling) at most `limit` for `pid` to be [`gone`].
#[cfg(unix)]
pub fn gone_within(pid: u32, limit: Duration) -> bool {
    let end = Instant::now() + limit;
    loop {
        if gone(pid) {
            return true;
        }
        if Instant::now() > end {
            return false;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Our child `pid` was reaped: `waitpid` no longer knows it (no zombie of
/// ours left).
#[cfg(unix)]
pub fn reaped(pid: u32) -> bool {
    // SAFETY: a null status pointer is allowed; WNOHANG never blocks.
    let r = unsafe { libc::waitpid(pid as libc::pid_t, std::ptr::null_mut(), libc::WNOHANG) };
    r == -1 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ECHILD)
}

/// `kill(pid, 0)` fails with ESRCH: no such process (not even a zombie).
#[cfg(unix)]
pub fn no_such_process(pid: u32) -> bool {
    // SAFETY: signal 0 only checks that the process exists.
    let r = unsafe { libc::kill(pid as libc::pid_t, 0) };
    r == -1 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH)
}

/// Asserts that a call that waited for nothing (`Ok(None)`) with `timeout`
/// returned by its deadline: not before it, and not much after it (three
/// times it plus 300 ms: a debug build on a loaded machine).
pub fn assert_timely(what: &str, timeout: Duration, took: Duration) {
    let high = timeout * 3 + Duration::from_millis(300);
    assert!(
        took >= timeout && took <= high,
        "{what}: next_event({timeout:?}) gave nothing after {took:?} (want between {timeout:?} and {high:?})"
    );
}
