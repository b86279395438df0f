//! Through the C ABI too, a transport allocates nothing per message in
//! steady state: once its buffers, map and heap have grown to the traffic,
//! the `mcp_transport_*` calls a host makes for every message (`receive`,
//! `next_event`, `request`, `notify`, `send`, `respond`, `respond_error`,
//! `read_output`; for a descriptor transport the `read(2)`, `write(2)` and
//! `poll(2)` inside `next_event`) allocate nothing at all: request/response
//! round trips answered out of order, notifications both ways, the peer's
//! requests answered, a timeout with its cancellation, waits that time out.
//! Counted with a global allocator that counts this thread's allocations;
//! the peer's side of the traffic is driven from the same thread, without
//! allocating. (`take_output` hands over a new buffer by design: not used.)
#![cfg(feature = "capi")]
// Apple's mobile systems have no descriptor transport: its test and helpers go.
#![cfg_attr(not(os_io), allow(unused_imports, dead_code))]

use std::ffi::{c_char, CStr};
use std::io::Write;
use std::mem::MaybeUninit;
use std::time::Duration;
use std::{ptr, thread};

use mcp_stdio::ffi::*;
use McpEventKind::*;
use McpStatus::*;

mod counting_allocator;

use counting_allocator::allocations;

/// How many of our requests are outstanding at once: enough for the deadline
/// heap to be compacted (answered entries below its top outnumber live ones).
const WINDOW: usize = 100;

const TOOLS_CALL: &CStr = c"tools/call";
const SLOW: &CStr = c"slow";
const PROGRESS: &CStr = c"notifications/progress";
const PARAMS: &[u8] = br#"{"name":"echo","arguments":{"text":"hello"}}"#;

/// The peer's side of one transport: hands it bytes and takes what it wrote.
trait Peer {
    fn transport(&self) -> *mut McpTransport;
    /// Gives the transport the peer's bytes.
    fn send(&mut self, bytes: &[u8]);
    /// Takes everything the transport has written so far; returns how many bytes.
    fn drain(&mut self) -> usize;
    /// How long `next_event` may wait for an event that is on its way.
    fn wait_ms(&self) -> i32;
}

/// A memory transport: the peer's bytes go in with `receive`, ours come out
/// with `read_output` into a fixed buffer.
struct Memory {
    t: *mut McpTransport,
    out: [u8; 4096],
}

impl Peer for Memory {
    fn transport(&self) -> *mut McpTransport {
        self.t
    }

    fn send(&mut self, bytes: &[u8]) {
        // In two pieces, so that a line arrives split.
        let (a, b) = bytes.split_at(bytes.len() / 2);
        for piece in [a, b] {
            assert_eq!(
                unsafe { mcp_transport_receive(self.t, piece.as_ptr(), piece.len()) },
                MCP_STATUS_OK
            );
        }
    }

    fn drain(&mut self) -> usize {
        let mut total = 0;
        loop {
            let mut n = usize::MAX;
            let st = unsafe {
                mcp_transport_read_output(self.t, self.out.as_mut_ptr(), self.out.len(), &mut n)
            };
            assert_eq!(st, MCP_STATUS_OK);
            if n == 0 {
                return total;
            }
            total += n;
        }
    }

    fn wait_ms(&self) -> i32 {
        0 // everything received is there already
    }
}

/// A descriptor transport on one end of a socketpair; the test writes and
/// reads the other end (non-blocking) itself.
#[cfg(unix)]
struct Socket {
    t: *mut McpTransport,
    peer: std::ffi::c_int,
    buf: [u8; 4096],
}

#[cfg(unix)]
impl Peer for Socket {
    fn transport(&self) -> *mut McpTransport {
        self.t
    }

    fn send(&mut self, bytes: &[u8]) {
        // Far below the socket's buffer: one write(2) takes it all.
        let n = unsafe { libc::write(self.peer, bytes.as_ptr().cast(), bytes.len()) };
        assert_eq!(n, bytes.len() as isize);
    }

    fn drain(&mut self) -> usize {
        let mut total = 0;
        loop {
            let n = unsafe { libc::read(self.peer, self.buf.as_mut_ptr().cast(), self.buf.len()) };
            if n > 0 {
                total += n as usize;
                continue;
            }
            assert_eq!(n, -1, "the transport closed its end");
            let errno = std::io::Error::last_os_error().raw_os_error();
            assert_eq!(errno, Some(libc::EAGAIN));
            return total;
        }
    }

    fn wait_ms(&self) -> i32 {
        5_000 // the bytes are in the socket: next_event reads them at once
    }
}

/// An event buffer `next_event` writes into.
fn event() -> McpEvent {
    // SAFETY: McpEvent is integers and raw pointers: all zeroes is a value.
    unsafe { MaybeUninit::zeroed().assume_init() }
}

fn next(t: *mut McpTransport, timeout_ms: i32, ev: &mut McpEvent) -> McpStatus {
    unsafe { mcp_transport_next_event(t, timeout_ms, ev) }
}

fn request(t: *mut McpTransport, method: &CStr, timeout_ms: u32) -> i64 {
    let mut id = -1;
    let st = unsafe {
        mcp_transport_request(
            t,
            method.as_ptr(),
            PARAMS.as_ptr(),
            PARAMS.len(),
            timeout_ms,
            &mut id,
        )
    };
    assert_eq!(st, MCP_STATUS_OK);
    id
}

/// Until the transport has nothing more (`next_event(t, 0)`, which also
/// writes a descriptor transport's queue).
fn settle(t: *mut McpTransport, ev: &mut McpEvent) {
    assert_eq!(next(t, 0, ev), MCP_STATUS_NO_MESSAGE);
}

/// One round of traffic through the C ABI. `scratch` holds the peer's lines, reused.
fn round(p: &mut impl Peer, round: usize, scratch: &mut Vec<u8>) {
    let t = p.transport();
    let mut ev = event();

    // Nothing pending: a wait that times out (a descriptor transport polls).
    assert_eq!(next(t, 1, &mut ev), MCP_STATUS_NO_MESSAGE);

    // Our side: a window of timed requests, a notification, a message built
    // by the caller.
    let mut ids = [0i64; WINDOW];
    for id in &mut ids {
        *id = request(t, TOOLS_CALL, 30_000);
    }
    unsafe {
        let params = br#"{"progress":1}"#;
        let st = mcp_transport_notify(t, PROGRESS.as_ptr(), params.as_ptr(), params.len());
        assert_eq!(st, MCP_STATUS_OK);
        let json = br#"{ "jsonrpc": "2.0", "method": "notifications/initialized" }"#;
        assert_eq!(
            mcp_transport_send(t, json.as_ptr(), json.len()),
            MCP_STATUS_OK
        );
    }
    settle(t, &mut ev);
    assert!(p.drain() > 0);

    // The peer answers the window out of order, notifies, and asks twice.
    scratch.clear();
    for k in 0..WINDOW {
        let id = ids[(k * 37 + round) % WINDOW];
        write!(
            scratch,
            "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{{\"content\":[]}}}}\n\
             {{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{{\"level\":\"info\"}}}}\n"
        )
        .unwrap();
    }
    scratch.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":\"s1\",\"method\":\"ping\"}\r\n");
    scratch.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"nope\"}\n");
    p.send(scratch);
    for k in 0..WINDOW {
        assert_eq!(next(t, p.wait_ms(), &mut ev), MCP_STATUS_OK);
        assert_eq!(ev.kind, MCP_EVENT_RESPONSE as i32);
        assert_eq!(ev.request_id, ids[(k * 37 + round) % WINDOW]);
        assert_eq!(next(t, p.wait_ms(), &mut ev), MCP_STATUS_OK);
        assert_eq!(ev.kind, MCP_EVENT_MESSAGE as i32);
    }
    // The peer's requests, answered straight from the event's envelope.
    assert_eq!(next(t, p.wait_ms(), &mut ev), MCP_STATUS_OK);
    assert_eq!(ev.kind, MCP_EVENT_MESSAGE as i32);
    assert_eq!(ev.rpc_kind, McpRpcKind::MCP_RPC_REQUEST as i32);
    let result = br#"{}"#;
    let st = unsafe {
        let id = ev.envelope.id;
        mcp_transport_respond(t, id.data, id.len, result.as_ptr(), result.len())
    };
    assert_eq!(st, MCP_STATUS_OK);
    assert_eq!(next(t, p.wait_ms(), &mut ev), MCP_STATUS_OK);
    let message: *const c_char = c"Method not found".as_ptr();
    let st = unsafe {
        let id = ev.envelope.id;
        mcp_transport_respond_error(t, id.data, id.len, -32601, message)
    };
    assert_eq!(st, MCP_STATUS_OK);

    settle(t, &mut ev);

    // A request that times out: its cancellation is queued (and written).
    let late = request(t, SLOW, 1);
    thread::sleep(Duration::from_millis(2));
    assert_eq!(next(t, 0, &mut ev), MCP_STATUS_OK);
    assert_eq!(ev.kind, MCP_EVENT_REQUEST_TIMED_OUT as i32);
    assert_eq!(ev.request_id, late);
    settle(t, &mut ev);
    assert!(p.drain() > 0);
}

/// Warms `p` up, then proves that more rounds allocate nothing.
fn steady_state_allocates_nothing(p: &mut impl Peer) {
    let mut scratch = Vec::with_capacity(64 << 10);
    for r in 0..32 {
        round(p, r, &mut scratch);
    }
    let before = allocations();
    for r in 32..232 {
        round(p, r, &mut scratch);
    }
    let during = allocations() - before;
    assert_eq!(
        during, 0,
        "{during} allocations in 200 rounds of steady state"
    );
}

#[test]
fn a_memory_transport_allocates_nothing_per_message() {
    let t = mcp_transport_new();
    assert!(!t.is_null());
    let mut p = Memory { t, out: [0; 4096] };
    steady_state_allocates_nothing(&mut p);
    unsafe { mcp_transport_free(t) };
}

#[cfg(all(unix, os_io))]
#[test]
fn a_socketpair_transport_allocates_nothing_per_message() {
    let mut sv = [-1; 2];
    let r = unsafe { libc::socketpair(libc::AF_UNIX, libc::SOCK_STREAM, 0, sv.as_mut_ptr()) };
    assert_eq!(r, 0);
    let mut t = ptr::null_mut();
    assert_eq!(
        unsafe { mcp_transport_open_fds(sv[0], sv[0], 0, &mut t) },
        MCP_STATUS_OK
    );
    unsafe {
        let flags = libc::fcntl(sv[1], libc::F_GETFL);
        assert_eq!(
            libc::fcntl(sv[1], libc::F_SETFL, flags | libc::O_NONBLOCK),
            0
        );
    }
    let mut p = Socket {
        t,
        peer: sv[1],
        buf: [0; 4096],
    };
    steady_state_allocates_nothing(&mut p);

    // The peer closes: the transport closes too, and frees at once.
    unsafe { libc::close(sv[1]) };
    let mut ev = event();
    loop {
        assert_eq!(next(t, 5_000, &mut ev), MCP_STATUS_OK);
        if ev.kind == MCP_EVENT_CLOSED as i32 {
            break;
        }
    }
    unsafe { mcp_transport_free(t) };
}

/// The counter sees what the C ABI allocates (a transport is allocated).
#[test]
fn the_counter_counts_the_c_abi() {
    let before = allocations();
    let t = mcp_transport_new();
    assert!(allocations() > before);
    let mut ev = event();
    assert_eq!(next(t, 0, &mut ev), MCP_STATUS_NO_MESSAGE);
    unsafe { mcp_transport_free(t) };
}
