//! In steady state the transport allocates nothing per message: once its
//! buffers, map and heap have grown to the traffic, request/response round
//! trips (answered in or out of order), notifications, incoming requests
//! and their responses, timeouts (with their cancellations) and the
//! driver's writes allocate nothing at all. Counted with a global
//! allocator that counts this thread's allocations.

use std::io::Write;
use std::time::{Duration, Instant};

use mcp_stdio::{Event, Transport};

mod counting_allocator;

use counting_allocator::allocations;

/// How many requests are outstanding at once: enough for the deadline heap
/// to be compacted (answered entries below its top outnumber live ones).
const WINDOW: usize = 100;

/// One round of traffic: a window of timed requests answered in a rotating
/// order (so answered entries linger in the deadline heap), one that times
/// out, a notification each way, an incoming request answered. The driver
/// writes what is queued in two pieces. `scratch` is the peer's line, reused.
fn round(t: &mut Transport, now: &mut Instant, round: usize, scratch: &mut Vec<u8>) {
    let mut ids = [0i64; WINDOW];
    for id in &mut ids {
        *id = t
            .request(
                "tools/call",
                Some(br#"{"name":"echo","arguments":{"text":"hello"}}"#),
                Some(Duration::from_secs(30)),
                *now,
            )
            .unwrap();
    }
    let late = t
        .request("slow", None, Some(Duration::from_millis(5)), *now)
        .unwrap();
    t.notify("notifications/progress", Some(br#"{"progress":1}"#))
        .unwrap();
    let half = t.output().len() / 2;
    t.consume(half);
    t.consume(t.output().len());

    // The peer answers the window out of order, notifies, and asks.
    for k in 0..WINDOW {
        let id = ids[(k * 37 + round) % WINDOW];
        scratch.clear();
        write!(
            scratch,
            "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{{\"content\":[]}}}}\n\
             {{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{{\"level\":\"info\"}}}}\n"
        )
        .unwrap();
        t.receive(scratch).unwrap();
        match t.next_event(*now) {
            Some(Event::Response { id: got, .. }) => assert_eq!(got, id),
            other => panic!("{other:?}"),
        }
        assert!(matches!(t.next_event(*now), Some(Event::Message { .. })));
    }
    t.receive(b"{\"jsonrpc\":\"2.0\",\"id\":\"s1\",\"method\":\"ping\"}\n")
        .unwrap();
    let id_token = match t.next_event(*now) {
        Some(Event::Message { envelope, .. }) => envelope.id.unwrap(),
        other => panic!("{other:?}"),
    };
    scratch.clear();
    scratch.extend_from_slice(id_token);
    t.respond(scratch, b"{}").unwrap();

    // The slow one times out: its cancellation is queued.
    *now += Duration::from_millis(10);
    assert_eq!(
        t.next_event(*now),
        Some(Event::RequestTimedOut { id: late })
    );
    assert_eq!(t.next_event(*now), None);
    t.consume(t.output().len());
}

#[test]
fn steady_state_traffic_allocates_nothing() {
    let mut t = Transport::new();
    let mut now = Instant::now();
    let mut scratch = Vec::with_capacity(1024);
    for r in 0..64 {
        round(&mut t, &mut now, r, &mut scratch);
    }
    let before = allocations();
    for r in 64..1064 {
        round(&mut t, &mut now, r, &mut scratch);
    }
    assert_eq!(allocations() - before, 0, "allocations in steady state");
}

#[test]
fn take_output_into_a_reused_vec_allocates_nothing() {
    let mut t = Transport::new();
    let now = Instant::now();
    let mut out = Vec::new();
    let step = |t: &mut Transport, out: &mut Vec<u8>| {
        let id = t.request("ping", None, None, now).unwrap();
        t.notify("n", None).unwrap();
        out.clear();
        t.take_output(out).unwrap();
        t.cancel(id, Some("no longer needed")).unwrap();
        out.clear();
        t.take_output(out).unwrap();
    };
    for _ in 0..64 {
        step(&mut t, &mut out);
    }
    let before = allocations();
    for _ in 0..10_000 {
        step(&mut t, &mut out);
    }
    assert_eq!(allocations() - before, 0);
}
