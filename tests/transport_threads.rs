//! Threads on one transport, through the C ABI: the sending calls (send,
//! request, notify, respond, cancel, close) from several threads at once
//! while another thread waits in `mcp_transport_next_event` with no time
//! limit, for a memory transport and for a descriptor transport on a
//! socketpair. The waiter must be woken by the sends: a descriptor
//! transport's waiting thread is the one that writes, so the peer sees what
//! was sent; a request's new deadline or a close must end a wait that had
//! none. Every send that said OK is on the wire exactly once; none after a
//! close. Meant for ThreadSanitizer too (`scripts/test.sh tsan`).
#![cfg(all(unix, os_io, feature = "capi"))]

use std::collections::HashSet;
use std::ffi::c_int;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier};
use std::thread;
use std::time::{Duration, Instant};

use mcp_stdio::ffi::*;
use McpStatus::*;

const SENDERS: usize = 4;
/// Rounds per sender (each: a request, a notification, a send, a response,
/// every other request cancelled). Fewer in debug builds, and so under TSan.
const ROUNDS: usize = if cfg!(debug_assertions) { 400 } else { 4000 };
/// No wait may take this long: a waiter that a send does not wake fails
/// the test after this, rather than hanging it.
const STALL: Duration = Duration::from_secs(10);
const STALL_MS: i32 = 10_000;

const TIMED_OUT: i32 = McpEventKind::MCP_EVENT_REQUEST_TIMED_OUT as i32;
const FAILED: i32 = McpEventKind::MCP_EVENT_REQUEST_FAILED as i32;
const CLOSED: i32 = McpEventKind::MCP_EVENT_CLOSED as i32;

/// A transport shared by threads: the sending calls are for any thread.
#[derive(Clone, Copy)]
struct Shared(*mut McpTransport);
// SAFETY: the header's threads rule: sends from any thread, concurrently;
// the receiving calls here are made by one thread only (the waiter), and
// free after every thread is joined.
unsafe impl Send for Shared {}
unsafe impl Sync for Shared {}

fn new_event() -> McpEvent {
    // SAFETY: McpEvent is plain integers and pointers: all zeroes is a value.
    unsafe { std::mem::zeroed() }
}

fn socketpair() -> (c_int, c_int) {
    let mut sv = [0; 2];
    let r = unsafe { libc::socketpair(libc::AF_UNIX, libc::SOCK_STREAM, 0, sv.as_mut_ptr()) };
    assert_eq!(r, 0);
    (sv[0], sv[1])
}

/// What one sender thread got OK for.
#[derive(Default)]
struct Sent {
    requests: Vec<i64>,
    cancelled: Vec<i64>,
    notifications: usize,
    sends: usize,
    responses: usize,
    /// The first CLOSED: every call after it must be CLOSED too.
    closed_at: Option<usize>,
}

/// Sender `s`: ROUNDS rounds of every sending call; with `until_closed`, on
/// until a close refuses its sends.
fn sender(t: Shared, s: usize, start: &Barrier, until_closed: bool) -> Sent {
    let mut sent = Sent::default();
    start.wait();
    let mut round = 0;
    while round < ROUNDS || (until_closed && sent.closed_at.is_none()) {
        let p = format!("{{\"s\":{s},\"r\":{round}}}");
        let mut id = -1;
        let results = unsafe {
            let req = mcp_transport_request(t.0, c"work".as_ptr(), p.as_ptr(), p.len(), 0, &mut id);
            if req == MCP_STATUS_OK {
                sent.requests.push(id);
            }
            let note =
                mcp_transport_notify(t.0, c"notifications/progress".as_ptr(), p.as_ptr(), p.len());
            if note == MCP_STATUS_OK {
                sent.notifications += 1;
            }
            let line = format!("{{\"jsonrpc\":\"2.0\",\"method\":\"raw\",\"params\":{p}}}");
            let send = mcp_transport_send(t.0, line.as_ptr(), line.len());
            if send == MCP_STATUS_OK {
                sent.sends += 1;
            }
            let rid = format!("\"{s}-{round}\"");
            let resp = mcp_transport_respond(t.0, rid.as_ptr(), rid.len(), p.as_ptr(), p.len());
            if resp == MCP_STATUS_OK {
                sent.responses += 1;
            }
            // Every other request cancelled (when it was sent); in call order.
            let cancel = (req == MCP_STATUS_OK && round % 2 == 0).then(|| {
                let c = mcp_transport_cancel(t.0, id, c"changed my mind".as_ptr());
                if c == MCP_STATUS_OK {
                    sent.cancelled.push(id);
                }
                c
            });
            [Some(req), Some(note), Some(send), Some(resp), cancel]
        };
        for st in results.into_iter().flatten() {
            match st {
                MCP_STATUS_OK => assert!(
                    sent.closed_at.is_none(),
                    "sender {s}: OK after CLOSED (round {round})"
                ),
                MCP_STATUS_CLOSED => {
                    sent.closed_at.get_or_insert(round);
                }
                other => panic!("sender {s} round {round}: {other:?}"),
            }
        }
        round += 1;
    }
    sent
}

/// The waiter: next_event until CLOSED, each wait limited only by STALL
/// (far beyond what any step takes); returns the ids of the requests that
/// failed, in order, and the other events' kinds.
fn waiter(t: Shared) -> (Vec<i64>, Vec<i32>) {
    let mut failed = Vec::new();
    let mut others = Vec::new();
    let mut ev = new_event();
    loop {
        let st = unsafe { mcp_transport_next_event(t.0, STALL_MS, &mut ev) };
        assert_eq!(st, MCP_STATUS_OK, "the waiter was not woken in {STALL:?}");
        match ev.kind {
            FAILED => failed.push(ev.request_id),
            CLOSED => break,
            kind => others.push(kind),
        }
    }
    let st = unsafe { mcp_transport_next_event(t.0, -1, &mut ev) };
    assert_eq!(st, MCP_STATUS_END_OF_STREAM);
    (failed, others)
}

/// The lines of `bytes` by kind, checking each is what some sender sent.
#[derive(Default, Debug, PartialEq)]
struct Lines {
    requests: HashSet<i64>,
    cancelled: HashSet<i64>,
    notifications: usize,
    sends: usize,
    responses: usize,
}

fn classify(bytes: &[u8]) -> Lines {
    let mut lines = Lines::default();
    assert!(
        bytes.is_empty() || bytes.ends_with(b"\n"),
        "a line cut short"
    );
    for line in bytes.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        let v: serde_json::Value = serde_json::from_slice(line)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(line)));
        match v["method"].as_str() {
            Some("work") => assert!(lines.requests.insert(v["id"].as_i64().unwrap()), "id twice"),
            Some("notifications/cancelled") => {
                assert_eq!(v["params"]["reason"], "changed my mind");
                let id = v["params"]["requestId"].as_i64().unwrap();
                assert!(lines.cancelled.insert(id), "cancelled twice");
            }
            Some("notifications/progress") => lines.notifications += 1,
            Some("raw") => lines.sends += 1,
            None if v.get("result").is_some() => lines.responses += 1,
            _ => panic!("unexpected line {}", String::from_utf8_lossy(line)),
        }
    }
    lines
}

/// The senders' OKs, summed; the requests neither cancelled (so pending).
fn tally(all: &[Sent]) -> (Lines, Vec<i64>) {
    let mut want = Lines::default();
    for s in all {
        for &id in &s.requests {
            assert!(want.requests.insert(id), "request id {id} given twice");
        }
        want.cancelled.extend(&s.cancelled);
        want.notifications += s.notifications;
        want.sends += s.sends;
        want.responses += s.responses;
    }
    let mut pending: Vec<i64> = want.requests.difference(&want.cancelled).copied().collect();
    pending.sort_unstable();
    // Refused requests used no id: the ids are consecutive.
    if let (Some(lo), Some(hi)) = (want.requests.iter().min(), want.requests.iter().max()) {
        assert_eq!(
            hi - lo + 1,
            want.requests.len() as i64,
            "ids {lo}..={hi} have gaps"
        );
    }
    (want, pending)
}

/// A memory transport: its waiter sleeps on no deadline at all; a request
/// with a timeout made by another thread must wake it to keep that
/// deadline, and a close must end its wait.
#[test]
fn memory_transport_waiter_is_woken_by_other_threads() {
    let t = Shared(mcp_transport_new());
    assert!(!t.0.is_null());

    // A deadline set by another thread while the waiter waits for none.
    let woke = thread::spawn(move || {
        let t = t; // the whole handle, not its pointer field
        let mut ev = new_event();
        let start = Instant::now();
        let st = unsafe { mcp_transport_next_event(t.0, STALL_MS, &mut ev) };
        (st, ev.kind, ev.request_id, start.elapsed())
    });
    thread::sleep(Duration::from_millis(50)); // the waiter is waiting by now (or soon)
    let mut id = 0;
    let st =
        unsafe { mcp_transport_request(t.0, c"slow".as_ptr(), std::ptr::null(), 0, 30, &mut id) };
    assert_eq!((st, id), (MCP_STATUS_OK, 1));
    let (st, kind, rid, took) = woke.join().unwrap();
    assert_eq!((st, kind, rid), (MCP_STATUS_OK, TIMED_OUT, 1));
    assert!(
        took < STALL / 2,
        "the deadline was kept {took:?} late: not woken"
    );
    let mut out = McpBuffer {
        data: std::ptr::null_mut(),
        len: 0,
    };
    assert_eq!(
        unsafe { mcp_transport_take_output(t.0, &mut out) },
        MCP_STATUS_OK
    );
    unsafe { mcp_buffer_free(&mut out) };

    // Senders at full speed, the waiter waiting, a closer in the middle.
    let start = Arc::new(Barrier::new(SENDERS + 1));
    let waiting = thread::spawn(move || waiter(t));
    let senders: Vec<_> = (0..SENDERS)
        .map(|s| {
            let start = Arc::clone(&start);
            thread::spawn(move || sender(t, s, &start, true))
        })
        .collect();
    start.wait();
    thread::sleep(Duration::from_millis(20));
    let closed = Instant::now();
    // Closing ends at once with a grace of 0 (no peer end to wait for).
    assert_eq!(unsafe { mcp_transport_close(t.0, 0) }, MCP_STATUS_OK);
    let sent: Vec<Sent> = senders.into_iter().map(|h| h.join().unwrap()).collect();
    let (failed, others) = waiting.join().unwrap();
    assert!(
        closed.elapsed() < Duration::from_secs(5),
        "the waiter saw the close after {:?}",
        closed.elapsed()
    );
    assert!(others.is_empty(), "only failures and CLOSED: {others:?}");
    let (want, pending) = tally(&sent);
    assert_eq!(failed, pending, "every pending request fails, ascending");
    assert!(sent.iter().all(|s| s.closed_at.is_some()));

    // Every OK is in the output exactly once (the memory transport keeps it).
    assert_eq!(
        unsafe { mcp_transport_take_output(t.0, &mut out) },
        MCP_STATUS_OK
    );
    let bytes = if out.len == 0 {
        Vec::new()
    } else {
        unsafe { std::slice::from_raw_parts(out.data, out.len) }.to_vec()
    };
    unsafe { mcp_buffer_free(&mut out) };
    assert_eq!(classify(&bytes), want);
    unsafe { mcp_transport_free(t.0) };
}

/// Reads the peer's end until end of stream; the bytes. `seen` is set once
/// the first bytes came.
fn read_all(fd: c_int, first: Option<Arc<AtomicBool>>) -> Vec<u8> {
    let mut all = Vec::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
        if n < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
            continue;
        }
        assert!(n >= 0, "read: {}", std::io::Error::last_os_error());
        if n == 0 {
            return all;
        }
        all.extend_from_slice(&buf[..n as usize]);
        if let Some(first) = &first {
            first.store(true, Ordering::Release);
        }
    }
}

/// Waits until `fd` is readable; false after `timeout`.
fn readable_within(fd: c_int, timeout: Duration) -> bool {
    let mut p = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    unsafe { libc::poll(&mut p, 1, timeout.as_millis() as c_int) == 1 }
}

/// A descriptor transport: only its waiting thread does I/O, so what other
/// threads send reaches the peer only if they wake it.
#[test]
fn descriptor_transport_waiter_writes_what_other_threads_send() {
    let (ours, peer) = socketpair();
    let mut raw = std::ptr::null_mut();
    assert_eq!(
        unsafe { mcp_transport_open_fds(ours, ours, 0, &mut raw) },
        MCP_STATUS_OK
    );
    let t = Shared(raw);
    let waiting = thread::spawn(move || waiter(t));

    // One send at a time while the waiter sleeps in poll(2): the peer gets it.
    for round in 0..20 {
        thread::sleep(Duration::from_millis(if round < 3 { 30 } else { 2 }));
        let line =
            format!("{{\"jsonrpc\":\"2.0\",\"method\":\"ping\",\"params\":{{\"r\":{round}}}}}");
        assert_eq!(
            unsafe { mcp_transport_send(t.0, line.as_ptr(), line.len()) },
            MCP_STATUS_OK
        );
        assert!(
            readable_within(peer, STALL),
            "round {round}: the waiter did not write what another thread sent"
        );
        let mut buf = [0u8; 256];
        let n = unsafe { libc::read(peer, buf.as_mut_ptr().cast(), buf.len()) };
        assert_eq!(&buf[..n.max(0) as usize], format!("{line}\n").as_bytes());
    }

    // Senders at full speed; the peer reads all the while. Then a close.
    let first = Arc::new(AtomicBool::new(false));
    let reader = {
        let first = Arc::clone(&first);
        thread::spawn(move || read_all(peer, Some(first)))
    };
    let start = Arc::new(Barrier::new(SENDERS + 1));
    let senders: Vec<_> = (0..SENDERS)
        .map(|s| {
            let start = Arc::clone(&start);
            thread::spawn(move || sender(t, s, &start, false))
        })
        .collect();
    start.wait();
    let sent: Vec<Sent> = senders.into_iter().map(|h| h.join().unwrap()).collect();
    assert!(
        sent.iter().all(|s| s.closed_at.is_none()),
        "nobody closed yet"
    );
    // The waiter wrote while they sent (it was woken), not only at the close.
    let deadline = Instant::now() + STALL;
    while !first.load(Ordering::Acquire) {
        assert!(
            Instant::now() < deadline,
            "nothing written before the close"
        );
        thread::sleep(Duration::from_millis(1));
    }
    // Close from this thread: the waiter writes the rest, shuts the socket
    // down (the reader sees the end), then waits for the peer's end.
    assert_eq!(unsafe { mcp_transport_close(t.0, 10_000) }, MCP_STATUS_OK);
    let bytes = reader.join().unwrap();
    unsafe { libc::shutdown(peer, libc::SHUT_WR) };
    let (failed, others) = waiting.join().unwrap();
    let (want, pending) = tally(&sent);
    assert_eq!(classify(&bytes), want, "every OK on the wire once");
    assert!(others.is_empty(), "no message came: {others:?}");
    assert_eq!(failed, pending, "every pending request fails, ascending");
    unsafe {
        mcp_transport_free(t.0);
        libc::close(peer);
    }
}

/// A request with a deadline made while the waiter of a descriptor
/// transport sleeps with no limit: its timeout comes, and its cancellation
/// reaches the peer.
#[test]
fn descriptor_transport_waiter_keeps_a_deadline_set_by_another_thread() {
    let (ours, peer) = socketpair();
    let mut raw = std::ptr::null_mut();
    assert_eq!(
        unsafe { mcp_transport_open_fds(ours, ours, 0, &mut raw) },
        MCP_STATUS_OK
    );
    let t = Shared(raw);
    let woke = thread::spawn(move || {
        let t = t; // the whole handle, not its pointer field
        let mut ev = new_event();
        let start = Instant::now();
        let st = unsafe { mcp_transport_next_event(t.0, STALL_MS, &mut ev) };
        (st, ev.kind, ev.request_id, start.elapsed())
    });
    thread::sleep(Duration::from_millis(50));
    let mut id = 0;
    let st =
        unsafe { mcp_transport_request(t.0, c"slow".as_ptr(), std::ptr::null(), 0, 30, &mut id) };
    assert_eq!((st, id), (MCP_STATUS_OK, 1));
    let (st, kind, rid, took) = woke.join().unwrap();
    assert_eq!((st, kind, rid), (MCP_STATUS_OK, TIMED_OUT, 1));
    assert!(
        took < STALL / 2,
        "the deadline was kept {took:?} late: not woken"
    );
    assert!(readable_within(peer, STALL));
    let mut buf = [0u8; 512];
    let mut got = Vec::new();
    let want = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"slow\"}\n{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":1,\"reason\":\"request timed out\"}}\n";
    while got.len() < want.len() && readable_within(peer, STALL) {
        let n = unsafe { libc::read(peer, buf.as_mut_ptr().cast(), buf.len()) };
        assert!(n > 0);
        got.extend_from_slice(&buf[..n as usize]);
    }
    assert_eq!(String::from_utf8_lossy(&got), String::from_utf8_lossy(want));
    unsafe {
        libc::close(peer);
        let mut ev = new_event();
        assert_eq!(mcp_transport_next_event(t.0, 5000, &mut ev), MCP_STATUS_OK);
        assert_eq!(ev.kind, CLOSED);
        mcp_transport_free(t.0);
    }
}
