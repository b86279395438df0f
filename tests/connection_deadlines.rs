//! Every waiting call of the safe API returns by its deadline, whatever the
//! peer does: `next_event` with a timeout (and with zero) against a peer
//! that floods blank lines, sends one endless line, floods a spawned
//! server's stderr, or sends nothing; a request's timeout against a server
//! that never answers; `close` against a peer that neither reads nor stops
//! writing; drop of such a connection. Against spawned servers (`yes`,
//! `cat /dev/zero`, `sh -c`) and against descriptors where the test plays
//! the peer (a socket pair, two pipes, borrowed descriptors).
//!
//! Bounds are generous (a debug build on a loaded machine: about three
//! times the deadline plus 300 ms) but catch a hang or a missed deadline;
//! a `next_event` that gives nothing must also not give up before its
//! timeout.

#![cfg(all(unix, os_io))]

#[path = "connection_common/mod.rs"]
mod common;

use std::io::Write;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::os::unix::process::ExitStatusExt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use common::*;
use mcp_stdio::{Command, Connection, Error, InvalidKind, StderrMode};

/// Runs `f` on every case at once, a thread each (the cases mostly wait:
/// the test takes as long as its slowest case); a case that fails fails
/// the test.
fn each_at_once<C: Copy + Send + std::fmt::Debug>(cases: &[C], f: impl Fn(C) + Sync) {
    let f = &f;
    std::thread::scope(|scope| {
        let running: Vec<_> = cases
            .iter()
            .map(|&case| (case, scope.spawn(move || f(case))))
            .collect();
        for (case, thread) in running {
            assert!(thread.join().is_ok(), "case {case:?} failed");
        }
    });
}

/// The timeout of the waits here.
const T: Duration = Duration::from_millis(300);

/// The most a call that should return at once (zero timeout) may take.
const AT_ONCE: Duration = Duration::from_millis(250);

/// A bound for something due `after` from now.
fn bound(after: Duration) -> Duration {
    after * 3 + Duration::from_millis(300)
}

/// Calls `next_event(Some(T))` until three calls gave nothing, each timely;
/// events `allowed` may come meanwhile (each such call also returns by its
/// deadline), anything else fails. At most 30 calls.
fn three_empty_waits(conn: &mut Connection, what: &str, allowed: impl Fn(&Ev) -> bool) {
    let mut empty = 0;
    let mut longest = Duration::ZERO;
    for _ in 0..30 {
        let (got, took) = next_timed(conn, Some(T));
        longest = longest.max(took);
        match got {
            Ok(None) => {
                assert_timely(what, T, took);
                empty += 1;
                if empty == 3 {
                    println!("{what}: three empty waits of {T:?}, the longest call {longest:?}");
                    return;
                }
            }
            Ok(Some(e)) if allowed(&e) => {
                assert!(took <= bound(T), "{what}: {e:?} after {took:?}");
            }
            other => panic!("{what}: {other:?} after {took:?}"),
        }
    }
    panic!("{what}: events kept coming");
}

/// 50 calls of `next_event(Some(ZERO))`, each at once; events `allowed`
/// may come.
fn zero_waits(conn: &mut Connection, what: &str, allowed: impl Fn(&Ev) -> bool) {
    let mut longest = Duration::ZERO;
    for _ in 0..50 {
        let (got, took) = next_timed(conn, Some(Duration::ZERO));
        longest = longest.max(took);
        match got {
            Ok(None) => {}
            Ok(Some(e)) if allowed(&e) => {}
            other => panic!("{what}: next_event(0): {other:?}"),
        }
    }
    println!("{what}: the longest next_event(0): {longest:?}");
    assert!(longest <= AT_ONCE, "{what}: next_event(0) took {longest:?}");
}

/// Sends a request with timeout `T` (the peer never answers it) and takes
/// events until its `RequestTimedOut`, which must come by its deadline;
/// events `allowed` may come before it. Returns the request's id.
fn request_times_out(conn: &mut Connection, what: &str, allowed: impl Fn(&Ev) -> bool) -> i64 {
    let sent = Instant::now();
    let id = conn.request("tools/call", Some(b"{}"), Some(T)).unwrap();
    let limit = bound(T);
    loop {
        let left = limit.saturating_sub(sent.elapsed());
        assert!(
            !left.is_zero(),
            "{what}: no RequestTimedOut({id}) after {:?}",
            sent.elapsed()
        );
        match next(conn, Some(left)) {
            Some(Ev::TimedOut(got)) => {
                let took = sent.elapsed();
                println!("{what}: RequestTimedOut {took:?} after the request (timeout {T:?})");
                assert_eq!(got, id);
                assert!(took >= T, "{what}: timed out after {took:?}");
                return id;
            }
            Some(e) if allowed(&e) => {}
            Some(other) => panic!("{what}: {other:?}"),
            None => {}
        }
    }
}

fn is_stderr(e: &Ev) -> bool {
    matches!(e, Ev::Stderr(_))
}

fn nothing(_: &Ev) -> bool {
    false
}

fn too_long(e: &Ev) -> bool {
    matches!(
        e,
        Ev::Invalid {
            kind: InvalidKind::TooLong,
            ..
        }
    )
}

/// Fills what the peer (which never reads) can hold: 64 KiB sends, with a
/// 1 MiB bound on the queue, until one is refused, each send at once.
fn fill(conn: &Connection) {
    conn.set_max_queued(1 << 20).unwrap();
    let params = format!("{{\"pad\":\"{}\"}}", "x".repeat(64 << 10));
    for n in 0.. {
        let started = Instant::now();
        let sent = conn.notify("fill", Some(params.as_bytes()));
        assert!(
            started.elapsed() <= AT_ONCE,
            "a send took {:?}",
            started.elapsed()
        );
        match sent {
            Ok(()) => assert!(n < 1000, "sends never refused"),
            Err(Error::WouldBlock) => return,
            Err(e) => panic!("notify: {e:?}"),
        }
    }
}

/// Closes with `grace` and takes the events to `Closed`, which must come
/// between `at_least` and `bound(at_most)` after the close, each call
/// returning within a second and a bit.
fn close_in_time(
    conn: &mut Connection,
    what: &str,
    grace: Duration,
    at_least: Duration,
    at_most: Duration,
) {
    let closing = Instant::now();
    conn.close(grace).unwrap();
    let out = run_to_closed(conn, bound(at_most));
    let took = closing.elapsed();
    println!(
        "{what}: Closed {took:?} after close({grace:?}), {} events, the longest call {:?}",
        out.events.len(),
        out.longest_call
    );
    assert!(took >= at_least, "{what}: Closed after {took:?}");
    assert!(took <= bound(at_most), "{what}: Closed after {took:?}");
    assert!(
        out.longest_call <= bound(Duration::from_secs(1)),
        "{what}: a call took {:?}",
        out.longest_call
    );
}

// ---------------------------------------------------------------------------
// Spawned servers.

fn blank_flood() -> Command {
    let mut cmd = Command::new("yes");
    cmd.arg("");
    cmd
}

#[test]
fn spawned_blank_line_flood() {
    let what = "spawned, blank lines flood";
    let mut conn = spawn(&blank_flood());
    let pid = conn.pid().unwrap();
    three_empty_waits(&mut conn, what, nothing);
    zero_waits(&mut conn, what, nothing);
    request_times_out(&mut conn, what, nothing);
    three_empty_waits(&mut conn, what, nothing);
    // Never reads: its stdin pipe full, and it keeps writing.
    fill(&conn);
    zero_waits(&mut conn, what, nothing);
    close_in_time(&mut conn, what, T, T - Duration::from_millis(20), T);
    assert_eq!(conn.exit_status().unwrap().signal(), Some(libc::SIGTERM));
    drop(conn);
    assert!(reaped(pid));
}

#[test]
fn spawned_endless_line() {
    // One line that never ends: /dev/zero has no newline. Past the line
    // limit it is one TooLong event, and the rest is dropped as it comes.
    each_at_once(&[None, std::num::NonZeroUsize::new(4096)], |limit| {
        let what = &format!("spawned, one endless line (line limit {limit:?})");
        let mut cmd = Command::new("cat");
        cmd.arg("/dev/zero");
        let mut conn = spawn(&cmd);
        if limit.is_some() {
            conn.set_max_line_len(limit).unwrap();
        }
        let max = limit.map_or(mcp_stdio::DEFAULT_MAX_LINE_LEN, |l| l.get());
        let started = Instant::now();
        loop {
            let (got, took) = next_timed(&mut conn, Some(T));
            match got {
                Ok(Some(Ev::Invalid {
                    kind: InvalidKind::TooLong,
                    line: None,
                    len,
                })) => {
                    assert!(len > max, "{what}: TooLong of {len} bytes");
                    break;
                }
                Ok(None) => assert_timely(what, T, took),
                other => panic!("{what}: {other:?}"),
            }
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "{what}: no TooLong"
            );
        }
        println!("{what}: TooLong after {:?}", started.elapsed());
        // Then nothing more comes, however long it keeps writing.
        three_empty_waits(&mut conn, what, nothing);
        zero_waits(&mut conn, what, nothing);
        request_times_out(&mut conn, what, nothing);
        close_in_time(&mut conn, what, T, T - Duration::from_millis(20), T);
        assert_eq!(conn.exit_status().unwrap().signal(), Some(libc::SIGTERM));
    });
}

#[test]
fn spawned_endless_stderr() {
    let what = "spawned, endless stderr";
    // The shell stays (holding stdout) while yes floods stderr with lines
    // of one byte: the most lines per byte.
    let mut conn = spawn(&sh("yes x >&2; exit 0"));
    let pid = conn.pid().unwrap();
    // Every call gives a stderr line, whatever its timeout, and returns
    // by the deadline.
    let started = Instant::now();
    let mut calls = 0u64;
    let mut longest = [Duration::ZERO; 2];
    while started.elapsed() < Duration::from_secs(1) {
        for (i, timeout) in [T, Duration::ZERO].into_iter().enumerate() {
            let (got, took) = next_timed(&mut conn, Some(timeout));
            match got {
                Ok(Some(Ev::Stderr(line))) => assert_eq!(line, b"x"),
                Ok(None) if calls == 0 => {} // (not started yet)
                other => panic!("{what}: {other:?}"),
            }
            longest[i] = longest[i].max(took);
            assert!(
                took <= bound(T),
                "{what}: next_event({timeout:?}) took {took:?}"
            );
            calls += 1;
        }
    }
    println!(
        "{what}: {calls} calls in 1 s, the longest next_event({T:?}) {:?}, the longest \
         next_event(0) {:?}; {} bytes of stderr dropped",
        longest[0],
        longest[1],
        conn.stderr_dropped()
    );
    assert!(conn.stderr_dropped() > 0);
    // A request's timeout is not held back by the lines.
    request_times_out(&mut conn, what, is_stderr);

    // Close: the server dies at the grace (SIGTERM); Closed comes after
    // the lines left (up to 1 MiB of them, taken one per call).
    let closing = Instant::now();
    conn.close(T).unwrap();
    let mut died = None;
    let mut longest = Duration::ZERO;
    let mut lines = 0u64;
    loop {
        assert!(
            closing.elapsed() < Duration::from_secs(60),
            "{what}: no Closed"
        );
        let (got, took) = next_timed(&mut conn, Some(T));
        longest = longest.max(took);
        if died.is_none() && gone(pid) {
            died = Some(closing.elapsed());
        }
        match got {
            Ok(Some(Ev::Closed)) => break,
            Ok(Some(Ev::Stderr(_))) => lines += 1,
            other => panic!("{what}: {other:?}"),
        }
    }
    let died = died.expect("the server died before Closed");
    println!(
        "{what}: the server died {died:?} after close({T:?}), Closed after {:?} and {lines} \
         lines; the longest call {longest:?}",
        closing.elapsed()
    );
    assert!(died >= T - Duration::from_millis(20), "died after {died:?}");
    assert!(
        died <= bound(T),
        "{what}: the server died {died:?} after the close"
    );
    assert!(longest <= bound(T), "{what}: a call took {longest:?}");
    // What waits is bounded: the 1 MiB backlog (524,288 lines of two
    // bytes), what the pipe held at the end (64 KiB), and the lines taken
    // during the grace (one per call); the flood itself was far more.
    assert!(lines <= 600_000, "{lines} lines after the close");
    assert_eq!(conn.exit_status().unwrap().signal(), Some(libc::SIGTERM));

    // Stderr discarded: the flood gives nothing, the waits are timely.
    let what = "spawned, endless stderr, discarded";
    let mut cmd = sh("yes x >&2; exit 0");
    cmd.stderr(StderrMode::Discard);
    let mut conn = spawn(&cmd);
    three_empty_waits(&mut conn, what, nothing);
    request_times_out(&mut conn, what, nothing);
    close_in_time(&mut conn, what, T, T - Duration::from_millis(20), T);
}

#[test]
fn spawned_silent_server() {
    let what = "spawned, silent";
    let mut conn = spawn(&sh("exec sleep 1000"));
    three_empty_waits(&mut conn, what, nothing);
    zero_waits(&mut conn, what, nothing);
    let id = request_times_out(&mut conn, what, nothing);
    assert_eq!(id, 1);
    // A request without a timeout is failed at the close.
    let id = conn.request("tools/list", None, None).unwrap();
    let closing = Instant::now();
    conn.close(T).unwrap();
    let out = run_to_closed(&mut conn, bound(T));
    assert_eq!(out.events, vec![Ev::Failed(id), Ev::Closed]);
    assert!(closing.elapsed() >= T - Duration::from_millis(20));
    assert_eq!(conn.exit_status().unwrap().signal(), Some(libc::SIGTERM));
}

#[test]
fn a_timed_out_request_is_cancelled() {
    let what = "spawned, echoes its stdin to stderr";
    // The server copies what it reads to its stderr: what we send is seen.
    let mut conn = spawn(&sh("cat >&2"));
    let id = request_times_out(&mut conn, what, is_stderr);
    let mut lines = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(5);
    while !lines
        .iter()
        .any(|l: &String| l.contains("notifications/cancelled"))
    {
        assert!(Instant::now() < deadline, "no cancellation sent: {lines:?}");
        if let Some(Ev::Stderr(line)) = next(&mut conn, Some(Duration::from_millis(500))) {
            lines.push(String::from_utf8(line).unwrap());
        }
    }
    let cancel = lines
        .iter()
        .find(|l| l.contains("notifications/cancelled"))
        .unwrap();
    let envelope = mcp_stdio::envelope(cancel.as_bytes()).unwrap();
    assert!(envelope.id.is_none(), "a notification: {cancel}");
    let params = String::from_utf8(envelope.params.unwrap().to_vec()).unwrap();
    assert!(
        params.contains(&format!("\"requestId\":{id}")),
        "cancellation {cancel}"
    );
    close_in_time(&mut conn, what, T, Duration::ZERO, T);
    assert!(conn.exit_status().unwrap().success());
}

#[test]
fn close_ends_a_server_that_neither_reads_nor_stops_writing() {
    each_at_once(
        &[
            ("exec yes ''", libc::SIGTERM, T),
            (
                "trap '' TERM; echo ready >&2; exec yes ''",
                libc::SIGKILL,
                T * 2,
            ),
        ],
        |(script, signal, at)| {
            let what = &format!("spawned, never reads, floods ({script})");
            let mut conn = spawn(&sh(script));
            let pid = conn.pid().unwrap();
            if signal == libc::SIGKILL {
                // Its trap is set.
                let mut stderr = Vec::new();
                while stderr.is_empty() {
                    let got = next(&mut conn, Some(Duration::from_secs(10)));
                    assert!(got.as_ref().is_none_or(is_stderr), "{got:?}");
                    stderr.extend(got.and_then(|e| e.stderr_text()));
                }
                assert_eq!(stderr, vec!["ready".to_string()]);
            }
            fill(&conn);
            zero_waits(&mut conn, what, nothing);
            close_in_time(&mut conn, what, T, at - Duration::from_millis(20), at);
            assert_eq!(conn.exit_status().unwrap().signal(), Some(signal));
            drop(conn);
            assert!(reaped(pid));
        },
    );
}

#[test]
fn drop_of_a_server_that_neither_reads_nor_stops_writing() {
    each_at_once(
        &[
            ("exec yes ''", Duration::from_secs(2)),
            (
                "trap '' TERM; echo ready >&2; exec yes ''",
                Duration::from_secs(4),
            ),
        ],
        |(script, at_most)| {
            let mut conn = spawn(&sh(script));
            let pid = conn.pid().unwrap();
            if at_most > Duration::from_secs(2) {
                let got = next(&mut conn, Some(Duration::from_secs(10)));
                assert_eq!(got, Some(Ev::Stderr(b"ready".to_vec())));
            }
            fill(&conn);
            zero_waits(&mut conn, script, nothing);
            let dropping = Instant::now();
            drop(conn);
            let took = dropping.elapsed();
            println!("drop ({script}): {took:?}");
            assert!(
                took >= at_most - Duration::from_millis(100),
                "drop took {took:?}"
            );
            assert!(took < Duration::from_secs(8), "drop took {took:?}");
            assert!(reaped(pid), "server {pid} not reaped");
        },
    );
}

// ---------------------------------------------------------------------------
// Descriptors, the test playing the peer.

/// A thread that writes `chunk` again and again until told to stop or a
/// write fails (the connection closed its end); the bytes written.
struct Writer {
    stop: Arc<AtomicBool>,
    written: Arc<AtomicU64>,
    thread: Option<JoinHandle<()>>,
}

impl Writer {
    fn start(mut peer: impl Write + Send + 'static, chunk: Vec<u8>) -> Writer {
        let stop = Arc::new(AtomicBool::new(false));
        let written = Arc::new(AtomicU64::new(0));
        let (s, w) = (stop.clone(), written.clone());
        let thread = std::thread::spawn(move || {
            while !s.load(Ordering::Relaxed) {
                match peer.write(&chunk) {
                    Ok(n) => w.fetch_add(n as u64, Ordering::Relaxed),
                    Err(_) => return,
                };
            }
        });
        Writer {
            stop,
            written,
            thread: Some(thread),
        }
    }

    /// Blank lines, 64 KiB at a time.
    fn blank_lines(peer: impl Write + Send + 'static) -> Writer {
        Writer::start(peer, vec![b'\n'; 64 << 10])
    }

    /// One line that never ends.
    fn endless_line(peer: impl Write + Send + 'static) -> Writer {
        Writer::start(peer, vec![b'a'; 64 << 10])
    }

    fn written(&self) -> u64 {
        self.written.load(Ordering::Relaxed)
    }
}

impl Drop for Writer {
    /// Stops the thread (the connection must be gone, or still reading).
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            thread.join().unwrap();
        }
    }
}

/// The peer's side of a connection: where it writes (and reads, which it
/// never does here).
struct Peer {
    end: PeerEnd,
    /// Our socket when the connection borrows it (leaked, never closed):
    /// shut down when the peer goes, so that a writer blocked on it fails.
    ours: Option<&'static UnixStream>,
}

enum PeerEnd {
    Socket(UnixStream),
    Pipes {
        to_us: Option<std::io::PipeWriter>,
        /// Held, never read.
        _from_us: std::io::PipeReader,
    },
}

impl Peer {
    fn writer(&self) -> Box<dyn Write + Send> {
        match &self.end {
            PeerEnd::Socket(s) => Box::new(s.try_clone().unwrap()),
            PeerEnd::Pipes { to_us, .. } => Box::new(to_us.as_ref().unwrap().try_clone().unwrap()),
        }
    }

    /// Ends what the peer sends (the connection sees the end of its input).
    fn end_writing(&mut self) {
        match &mut self.end {
            PeerEnd::Socket(s) => s.shutdown(std::net::Shutdown::Write).unwrap(),
            PeerEnd::Pipes { to_us, .. } => drop(to_us.take()),
        }
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        if let Some(ours) = self.ours {
            let _ = ours.shutdown(std::net::Shutdown::Both);
        }
    }
}

/// What a descriptor connection is opened on.
#[derive(Clone, Copy, Debug)]
enum Kind {
    Socket,
    Pipes,
    BorrowedSocket,
}

const KINDS: [Kind; 3] = [Kind::Socket, Kind::Pipes, Kind::BorrowedSocket];

/// A connection of `kind` and its peer.
fn open(kind: Kind) -> (Connection, Peer) {
    match kind {
        Kind::Socket => {
            let (ours, theirs) = UnixStream::pair().unwrap();
            let conn = Connection::open_socket(OwnedFd::from(ours)).unwrap();
            let peer = Peer {
                end: PeerEnd::Socket(theirs),
                ours: None,
            };
            (conn, peer)
        }
        Kind::Pipes => {
            let (read, to_us) = std::io::pipe().unwrap();
            let (from_us, write) = std::io::pipe().unwrap();
            let conn = Connection::open_fds(OwnedFd::from(read), OwnedFd::from(write)).unwrap();
            let peer = Peer {
                end: PeerEnd::Pipes {
                    to_us: Some(to_us),
                    _from_us: from_us,
                },
                ours: None,
            };
            (conn, peer)
        }
        Kind::BorrowedSocket => {
            let (ours, theirs) = UnixStream::pair().unwrap();
            // Borrowed for 'static: leaked (one descriptor per test).
            let ours: &'static UnixStream = Box::leak(Box::new(ours));
            let conn = Connection::open_borrowed_fds(ours.as_fd(), ours.as_fd()).unwrap();
            let peer = Peer {
                end: PeerEnd::Socket(theirs),
                ours: Some(ours),
            };
            (conn, peer)
        }
    }
}

#[test]
fn descriptors_silent_peer() {
    each_at_once(&KINDS, |kind| {
        let what = &format!("{kind:?}, silent peer");
        let (mut conn, peer) = open(kind);
        three_empty_waits(&mut conn, what, nothing);
        zero_waits(&mut conn, what, nothing);
        let id = request_times_out(&mut conn, what, nothing);
        assert_eq!(id, 1);
        // The peer still sends a message: it comes at once.
        let mut w = peer.writer();
        w.write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"hello\"}\n")
            .unwrap();
        let (got, took) = next_timed(&mut conn, Some(Duration::from_secs(5)));
        assert!(
            got.as_ref().unwrap().as_ref().unwrap().is_method("hello"),
            "{got:?}"
        );
        assert!(took <= AT_ONCE * 2, "{what}: the message after {took:?}");
        // Closing against a peer that never ends its side: Closed at the grace.
        close_in_time(&mut conn, what, T, T - Duration::from_millis(20), T);
        drop(conn);
        drop(peer);
    });
}

#[test]
fn descriptors_blank_line_flood() {
    each_at_once(&KINDS, |kind| {
        let what = &format!("{kind:?}, blank lines flood");
        let (mut conn, peer) = open(kind);
        let writer = Writer::blank_lines(peer.writer());
        three_empty_waits(&mut conn, what, nothing);
        zero_waits(&mut conn, what, nothing);
        request_times_out(&mut conn, what, nothing);
        fill(&conn);
        three_empty_waits(&mut conn, what, nothing);
        assert!(
            writer.written() > 1 << 20,
            "{what}: the peer wrote {}",
            writer.written()
        );
        // The peer neither reads nor stops: Closed at the grace.
        close_in_time(&mut conn, what, T, T - Duration::from_millis(20), T);
        drop(conn);
        drop(peer);
        drop(writer);
    });
}

#[test]
fn descriptors_endless_line() {
    each_at_once(&KINDS, |kind| {
        let what = &format!("{kind:?}, one endless line");
        let (mut conn, peer) = open(kind);
        conn.set_max_line_len(std::num::NonZeroUsize::new(1 << 20))
            .unwrap();
        let writer = Writer::endless_line(peer.writer());
        three_empty_waits(&mut conn, what, too_long);
        zero_waits(&mut conn, what, too_long);
        request_times_out(&mut conn, what, too_long);
        assert!(
            writer.written() > 2 << 20,
            "{what}: the peer wrote {}",
            writer.written()
        );
        close_in_time(&mut conn, what, T, T - Duration::from_millis(20), T);
        drop(conn);
        drop(peer);
        drop(writer);
    });
}

#[test]
fn drop_of_a_descriptor_connection_whose_peer_floods_and_never_reads() {
    each_at_once(&KINDS, |kind| {
        let (mut conn, peer) = open(kind);
        let writer = Writer::blank_lines(peer.writer());
        fill(&conn);
        zero_waits(&mut conn, "drop", nothing);
        let dropping = Instant::now();
        drop(conn);
        let took = dropping.elapsed();
        println!("{kind:?}: drop against a flooding peer that never reads: {took:?}");
        // The 2 s grace, then it ends without the peer's end.
        assert!(took >= Duration::from_millis(1900), "drop took {took:?}");
        assert!(took < Duration::from_secs(8), "drop took {took:?}");
        drop(peer);
        drop(writer);
    });
}

#[test]
fn a_peer_that_ends_its_side_closes_the_connection_at_once() {
    each_at_once(&KINDS, |kind| {
        let (mut conn, mut peer) = open(kind);
        let id = conn.request("tools/list", None, None).unwrap();
        let started = Instant::now();
        peer.end_writing();
        let out = run_to_closed(&mut conn, Duration::from_secs(3));
        let took = started.elapsed();
        assert_eq!(out.events, vec![Ev::Failed(id), Ev::Closed], "{kind:?}");
        assert!(took <= AT_ONCE * 2, "{kind:?}: Closed after {took:?}");
    });
}

#[test]
fn next_deadline_tells_when_an_event_is_due() {
    let (mut conn, _peer) = open(Kind::Socket);
    assert_eq!(conn.next_deadline(), Ok(None));
    let before = Instant::now();
    let id = conn.request("tools/list", None, Some(T)).unwrap();
    let after = Instant::now();
    let due = conn
        .next_deadline()
        .unwrap()
        .expect("the request's deadline");
    assert!(due >= before + T && due <= after + T, "{due:?}");
    // Waiting until then gives the time-out, not before.
    let (got, _) = next_timed(&mut conn, Some(Duration::from_secs(5)));
    assert!(Instant::now() >= due);
    assert_eq!(got, Ok(Some(Ev::TimedOut(id))));
    assert_eq!(conn.next_deadline(), Ok(None));
    // The close's grace.
    let closing = Instant::now();
    conn.close(T).unwrap();
    let due = conn.next_deadline().unwrap().expect("the end of the grace");
    assert!(
        due <= closing + T + Duration::from_millis(50),
        "{:?}",
        due - closing
    );
    let _ = run_to_closed(&mut conn, bound(T));
    assert!(conn
        .next_deadline()
        .unwrap()
        .is_some_and(|at| at <= Instant::now()));
}

#[test]
fn borrowed_descriptors_get_their_flags_back() {
    let (ours, _theirs) = UnixStream::pair().unwrap();
    let ours: &'static UnixStream = Box::leak(Box::new(ours));
    // SAFETY: F_GETFL only reads the flags of a descriptor that is open.
    let flags = |fd: i32| unsafe { libc::fcntl(fd, libc::F_GETFL) };
    let before = flags(ours.as_raw_fd());
    assert_eq!(before & libc::O_NONBLOCK, 0);
    let mut conn = Connection::open_borrowed_fds(ours.as_fd(), ours.as_fd()).unwrap();
    assert_ne!(
        flags(ours.as_raw_fd()) & libc::O_NONBLOCK,
        0,
        "made non-blocking"
    );
    conn.close(Duration::ZERO).unwrap();
    let _ = run_to_closed(&mut conn, Duration::from_secs(3));
    drop(conn);
    assert_eq!(flags(ours.as_raw_fd()), before, "flags given back");
}
