//! Volume through the C ABI: two descriptor transports (`mcp_transport_open_fds`)
//! talking to each other over a socketpair. A sends 100,000 requests, its
//! output queue bounded small so that sends meet `MCP_STATUS_WOULD_BLOCK`
//! and wait for the queue to drain; B answers each, in batches, in an order
//! of its own (shuffled); A must get every answer matched to its request
//! exactly once (`MCP_EVENT_RESPONSE`, the result echoing the request), and
//! nothing else: no stray `MCP_EVENT_MESSAGE`, no invalid line, no failed
//! request. Then A closes; both see the other's end and give
//! `MCP_EVENT_CLOSED`. Once with one thread per transport waiting in
//! `next_event`, once in a single thread driving both from one poll(2) on
//! their `mcp_transport_poll_fds` sets, as an event loop does.
#![cfg(all(unix, os_io, feature = "capi"))]

use std::ffi::c_int;
use std::thread;
use std::time::{Duration, Instant};

use mcp_stdio::ffi::*;
use McpStatus::*;

/// Requests from A.
const REQUESTS: i64 = 100_000;
/// A's output bound: a few dozen requests.
const A_MAX_QUEUED: usize = 4096;
/// B answers when it holds this many requests (or when none is ready).
const BATCH: usize = 64;
/// No step may wait this long.
const STALL: Duration = Duration::from_secs(20);

const MESSAGE: i32 = McpEventKind::MCP_EVENT_MESSAGE as i32;
const RESPONSE: i32 = McpEventKind::MCP_EVENT_RESPONSE as i32;
const CLOSED: i32 = McpEventKind::MCP_EVENT_CLOSED as i32;
const RPC_REQUEST: i32 = McpRpcKind::MCP_RPC_REQUEST as i32;
const RPC_RESPONSE: i32 = McpRpcKind::MCP_RPC_RESPONSE as i32;

/// A transport handle that may move to the thread that drives it.
struct Handle(*mut McpTransport);
// SAFETY: a transport may be used from any thread (the header's threads rule);
// each handle here is used by one thread at a time.
unsafe impl Send for Handle {}

fn socketpair() -> (c_int, c_int) {
    let mut sv = [0; 2];
    let r = unsafe { libc::socketpair(libc::AF_UNIX, libc::SOCK_STREAM, 0, sv.as_mut_ptr()) };
    assert_eq!(r, 0);
    (sv[0], sv[1])
}

/// An owned transport on one socket serving both ways.
fn open(fd: c_int) -> *mut McpTransport {
    let mut t = std::ptr::null_mut();
    assert_eq!(
        unsafe { mcp_transport_open_fds(fd, fd, 0, &mut t) },
        MCP_STATUS_OK
    );
    assert!(!t.is_null());
    t
}

fn new_event() -> McpEvent {
    // SAFETY: McpEvent is plain integers and pointers: all zeroes is a value.
    unsafe { std::mem::zeroed() }
}

/// The bytes an event or envelope member points to (valid until the next
/// receiving call on its transport).
fn bytes<'a>(data: *const u8, len: usize) -> &'a [u8] {
    if len == 0 {
        return &[];
    }
    assert!(!data.is_null());
    unsafe { std::slice::from_raw_parts(data, len) }
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The params of request `k`, which B echoes as its result.
fn params(k: i64) -> String {
    format!(
        "{{\"k\":{k},\"pad\":\"{}\"}}",
        "p".repeat((k % 50) as usize)
    )
}

/// A: what it has sent and what came back.
struct Client {
    t: *mut McpTransport,
    next: i64,
    answered: Vec<bool>,
    got: i64,
    would_block: u64,
}

impl Client {
    fn new(t: *mut McpTransport) -> Client {
        assert_eq!(
            unsafe { mcp_transport_set_max_queued(t, A_MAX_QUEUED) },
            MCP_STATUS_OK
        );
        Client {
            t,
            next: 1,
            answered: vec![false; REQUESTS as usize + 1],
            got: 0,
            would_block: 0,
        }
    }

    /// Sends requests until the queue is full or all are sent; true when
    /// the queue refused one.
    fn send_some(&mut self) -> bool {
        while self.next <= REQUESTS {
            let p = params(self.next);
            let mut id = -1;
            let st = unsafe {
                mcp_transport_request(self.t, c"echo".as_ptr(), p.as_ptr(), p.len(), 0, &mut id)
            };
            match st {
                MCP_STATUS_OK => {
                    assert_eq!(id, self.next, "ids are 1, 2, 3...");
                    self.next += 1;
                }
                MCP_STATUS_WOULD_BLOCK => {
                    assert_eq!(id, -1, "a refused request writes no id");
                    self.would_block += 1;
                    return true;
                }
                other => panic!("request {}: {other:?}", self.next),
            }
        }
        false
    }

    /// One event of A: an answer, matched once.
    fn on_event(&mut self, ev: &McpEvent) {
        assert_eq!(
            ev.kind,
            RESPONSE,
            "A got an event that is no answer: kind {} request_id {} line {}",
            ev.kind,
            ev.request_id,
            text(bytes(ev.data, ev.len))
        );
        assert_eq!(ev.rpc_kind, RPC_RESPONSE);
        let k = ev.request_id;
        assert!(k >= 1 && k < self.next, "answer to {k}, not sent yet");
        assert!(!self.answered[k as usize], "request {k} answered twice");
        self.answered[k as usize] = true;
        self.got += 1;
        let result = bytes(ev.envelope.result.data, ev.envelope.result.len);
        assert_eq!(
            text(result),
            params(k),
            "the answer to {k} echoes its params"
        );
        assert_eq!(
            text(bytes(ev.envelope.id.data, ev.envelope.id.len)),
            k.to_string()
        );
    }

    fn done(&self) -> bool {
        self.got == REQUESTS
    }
}

/// B: the requests it holds, answered in batches in a shuffled order.
struct Server {
    t: *mut McpTransport,
    held: Vec<(Vec<u8>, Vec<u8>)>,
    seen: i64,
    rng: u64,
    batches: u64,
}

impl Server {
    fn new(t: *mut McpTransport) -> Server {
        Server {
            t,
            held: Vec::new(),
            seen: 0,
            rng: 0x9e37_79b9_7f4a_7c15,
            batches: 0,
        }
    }

    /// One event of B: a request, held (its id and params copied: the data
    /// lives only until the next receiving call). Returns false on CLOSED.
    fn on_event(&mut self, ev: &McpEvent) -> bool {
        if ev.kind == CLOSED {
            return false;
        }
        assert_eq!(
            (ev.kind, ev.rpc_kind),
            (MESSAGE, RPC_REQUEST),
            "B got {}",
            text(bytes(ev.data, ev.len))
        );
        let method = bytes(ev.envelope.method.data, ev.envelope.method.len);
        assert_eq!(method, b"\"echo\"");
        let id = bytes(ev.envelope.id.data, ev.envelope.id.len).to_vec();
        let p = bytes(ev.envelope.params.data, ev.envelope.params.len).to_vec();
        self.held.push((id, p));
        self.seen += 1;
        true
    }

    /// Answers every request held, in a shuffled order.
    fn answer(&mut self) {
        if self.held.is_empty() {
            return;
        }
        for i in (1..self.held.len()).rev() {
            self.rng ^= self.rng << 13;
            self.rng ^= self.rng >> 7;
            self.rng ^= self.rng << 17;
            self.held.swap(i, (self.rng % (i as u64 + 1)) as usize);
        }
        for (id, p) in self.held.drain(..) {
            let st = unsafe {
                mcp_transport_respond(self.t, id.as_ptr(), id.len(), p.as_ptr(), p.len())
            };
            assert_eq!(st, MCP_STATUS_OK, "B's queue is unbounded enough");
        }
        self.batches += 1;
    }
}

/// Takes events of `t` until CLOSED (only CLOSED may come), then checks
/// that nothing more comes and frees it.
fn finish(t: *mut McpTransport) {
    let mut ev = new_event();
    let st = unsafe { mcp_transport_next_event(t, STALL.as_millis() as i32, &mut ev) };
    assert_eq!(st, MCP_STATUS_OK);
    assert_eq!(ev.kind, CLOSED, "only CLOSED is left, no request failed");
    let st = unsafe { mcp_transport_next_event(t, 0, &mut ev) };
    assert_eq!(st, MCP_STATUS_END_OF_STREAM);
    unsafe { mcp_transport_free(t) };
}

/// poll(2) on the `mcp_transport_poll_fds` sets of both, neither with a deadline.
fn poll_both(
    a: *mut McpTransport,
    b: *mut McpTransport,
    set: &mut [libc::pollfd; 6],
    timeout_ms: c_int,
) -> c_int {
    let (mut n_a, mut n_b, mut to_a, mut to_b) = (0usize, 0usize, 0i32, 0i32);
    unsafe {
        assert_eq!(
            mcp_transport_poll_fds(a, set.as_mut_ptr(), 3, &mut n_a, &mut to_a),
            MCP_STATUS_OK
        );
        assert_eq!(
            mcp_transport_poll_fds(b, set.as_mut_ptr().add(n_a), 3, &mut n_b, &mut to_b),
            MCP_STATUS_OK
        );
    }
    assert_eq!((to_a, to_b), (-1, -1), "no deadline anywhere");
    unsafe { libc::poll(set.as_mut_ptr(), (n_a + n_b) as libc::nfds_t, timeout_ms) }
}

#[test]
fn a_hundred_thousand_requests_one_thread_per_transport() {
    let (fa, fb) = socketpair();
    let (a, b) = (Handle(open(fa)), Handle(open(fb)));
    let start = Instant::now();

    let server = thread::spawn(move || {
        let b = b;
        let mut s = Server::new(b.0);
        let mut ev = new_event();
        loop {
            // Nothing held: wait for requests; else take what is ready, then answer.
            let timeout = if s.held.is_empty() {
                STALL.as_millis() as i32
            } else {
                0
            };
            match unsafe { mcp_transport_next_event(s.t, timeout, &mut ev) } {
                MCP_STATUS_OK => {
                    if !s.on_event(&ev) {
                        break;
                    }
                    if s.held.len() >= BATCH {
                        s.answer();
                    }
                }
                MCP_STATUS_NO_MESSAGE => {
                    assert!(!s.held.is_empty(), "B waited {STALL:?} for a request");
                    s.answer();
                }
                other => panic!("B: next_event {other:?}"),
            }
        }
        assert!(s.held.is_empty());
        let (seen, batches) = (s.seen, s.batches);
        let st = unsafe { mcp_transport_next_event(s.t, 0, &mut ev) };
        assert_eq!(st, MCP_STATUS_END_OF_STREAM);
        unsafe { mcp_transport_free(s.t) };
        (seen, batches)
    });

    let mut c = Client::new(a.0);
    let mut ev = new_event();
    while !c.done() {
        let blocked = c.send_some();
        // All sent, or the queue full: wait for answers (they drain it);
        // otherwise take what is ready and send on.
        let timeout = if blocked || c.next > REQUESTS {
            STALL.as_millis() as i32
        } else {
            0
        };
        loop {
            match unsafe { mcp_transport_next_event(c.t, timeout, &mut ev) } {
                MCP_STATUS_OK => c.on_event(&ev),
                MCP_STATUS_NO_MESSAGE => {
                    assert_eq!(timeout, 0, "A waited {STALL:?} for an answer");
                    break;
                }
                other => panic!("A: next_event {other:?}"),
            }
            if c.done() {
                break;
            }
            // Once one answer came, take only what is ready.
            if timeout != 0 {
                break;
            }
        }
    }
    assert!(c.answered[1..].iter().all(|&x| x));
    assert!(
        c.would_block > 0,
        "the bound was never met: A_MAX_QUEUED too large"
    );
    assert_eq!(unsafe { mcp_transport_close(c.t, 5000) }, MCP_STATUS_OK);
    finish(c.t);
    let (seen, batches) = server.join().unwrap();
    assert_eq!(seen, REQUESTS);
    eprintln!(
        "{REQUESTS} requests answered in {:?} (threads; A's queue full {} times, B answered in \
         {batches} batches)",
        start.elapsed(),
        c.would_block
    );
}

#[test]
fn a_hundred_thousand_requests_one_event_loop() {
    let (fa, fb) = socketpair();
    let mut c = Client::new(open(fa));
    let mut s = Server::new(open(fb));
    let start = Instant::now();
    let mut ev = new_event();
    let mut set = [libc::pollfd {
        fd: -1,
        events: 0,
        revents: 0,
    }; 6];
    let mut polls = 0u64;
    while !c.done() {
        c.send_some();
        // Every event of both, before waiting: events already received do
        // not make a descriptor ready.
        loop {
            match unsafe { mcp_transport_next_event(c.t, 0, &mut ev) } {
                MCP_STATUS_OK => c.on_event(&ev),
                MCP_STATUS_NO_MESSAGE => break,
                other => panic!("A: next_event {other:?}"),
            }
        }
        loop {
            match unsafe { mcp_transport_next_event(s.t, 0, &mut ev) } {
                MCP_STATUS_OK => assert!(s.on_event(&ev), "B closed early"),
                MCP_STATUS_NO_MESSAGE => break,
                other => panic!("B: next_event {other:?}"),
            }
        }
        s.answer();
        if c.done() {
            break;
        }
        // Wait on both sets, as an event loop does.
        let r = poll_both(c.t, s.t, &mut set, STALL.as_millis() as i32);
        assert!(r > 0, "the event loop stalled (poll returned {r})");
        polls += 1;
    }
    assert!(c.answered[1..].iter().all(|&x| x));
    assert_eq!(s.seen, REQUESTS);
    assert!(c.would_block > 0);
    // Every event taken, every byte written and read: both sets are quiet
    // (a wake-up left signalled would make the loop spin).
    for t in [c.t, s.t] {
        let st = unsafe { mcp_transport_next_event(t, 0, &mut ev) };
        assert_eq!(st, MCP_STATUS_NO_MESSAGE);
    }
    assert_eq!(
        poll_both(c.t, s.t, &mut set, 0),
        0,
        "a set stays ready: {set:?}"
    );

    // A closes; B sees its end and closes; A sees B's.
    assert_eq!(unsafe { mcp_transport_close(c.t, 5000) }, MCP_STATUS_OK);
    let deadline = Instant::now() + STALL;
    let (mut a_closed, mut b_closed) = (false, false);
    while !(a_closed && b_closed) {
        assert!(Instant::now() < deadline, "closing stalled");
        for (t, closed) in [(c.t, &mut a_closed), (s.t, &mut b_closed)] {
            if *closed {
                continue;
            }
            match unsafe { mcp_transport_next_event(t, 10, &mut ev) } {
                MCP_STATUS_OK => {
                    assert_eq!(ev.kind, CLOSED);
                    *closed = true;
                }
                MCP_STATUS_NO_MESSAGE => {}
                other => panic!("closing: {other:?}"),
            }
        }
    }
    unsafe {
        mcp_transport_free(c.t);
        mcp_transport_free(s.t);
    }
    eprintln!(
        "{REQUESTS} requests answered in {:?} (one event loop, {polls} polls)",
        start.elapsed()
    );
}
