//! What a transport holds while a server floods it and one of our requests
//! is overdue, measured through a global allocator that tracks the peak of
//! the bytes live (tests/peak_allocator).
//!
//! The server, spawned through the C ABI (`mcp_transport_spawn`), writes the
//! same notification for ever (`yes '<line>'`, its stderr discarded); the
//! host sends a request with a 100 ms timeout that is never answered, and
//! takes events: at a realistic pace (a little work per event, 1 ms of
//! sleep every 100), and slowly (a sleep between events). Whatever the
//! pace, the transport reads only when no complete line waits, at most one
//! read chunk (64 KiB) more when the deadline falls due, and gives
//! `MCP_EVENT_REQUEST_TIMED_OUT` once the lines read by then are taken. So
//! what it holds stays within: the line limit (4 KiB here) + one read chunk
//! of lines read but not yet taken (+ the chunk read at the deadline) + the
//! output queue's bound (64 KiB here); no stderr backlog (discarded). The
//! bound asserted on the peak above the level before the flood doubles the
//! reader's part (a `Vec` grows by doubling) and adds 256 KiB for the
//! transport's own small structures:
//! `2 * (4 KiB + 2 * 64 KiB) + 64 KiB + 256 KiB`, about 584 KiB.
//!
//! Each run also checks that the timeout came while the flood went on, and
//! that `mcp_transport_free` after `mcp_transport_close(t, 200)` returns
//! within about twice the grace (5 s allowed): what the transport holds
//! must not make it longer.
//!
//! A transport that reads one more chunk per call while a deadline is due
//! grows by 64 KiB per event taken (tens or hundreds of MB in a second),
//! and the timeout never comes while the flood lasts; the tests stop
//! at 64 MiB above the start, well past the bound. Run with `--nocapture`
//! for the numbers. The tests take turns (one lock): the allocator counts
//! every thread.
#![cfg(all(unix, os_io, feature = "capi"))]

mod peak_allocator;

use std::ffi::CString;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use mcp_stdio::ffi::*;
use McpStatus::*;

const MESSAGE: i32 = McpEventKind::MCP_EVENT_MESSAGE as i32;
const REQUEST_TIMED_OUT: i32 = McpEventKind::MCP_EVENT_REQUEST_TIMED_OUT as i32;

/// The server's line, written for ever.
const FLOOD_LINE: &str = r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"flood"}}"#;

/// The line limit and output bound set here, and the transport's read chunk.
const MAX_LINE_LEN: usize = 4096;
const MAX_QUEUED: usize = 64 << 10;
const READ_CHUNK: usize = 64 << 10;

/// The bound on the peak live bytes above the level before the flood.
const BOUND: usize = 2 * (MAX_LINE_LEN + 2 * READ_CHUNK) + MAX_QUEUED + (256 << 10);

/// Stop once this much more is live: far past the bound, the verdict is in.
const GIVE_UP_BYTES: usize = 64 << 20;

/// The request's timeout.
const REQUEST_TIMEOUT: Duration = Duration::from_millis(100);

/// The grace of the close before free, and how long free may take then
/// (about twice the grace, +1 s, generously).
const CLOSE_GRACE_MS: u32 = 200;
const FREE_BOUND: Duration = Duration::from_secs(5);

/// One test at a time: the allocator counts every thread.
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

fn new_event() -> McpEvent {
    // SAFETY: McpEvent is plain integers and pointers: all zeroes is a value.
    unsafe { std::mem::zeroed() }
}

/// How the host takes events.
#[derive(Clone, Copy, Debug)]
enum Pace {
    /// A little work per event, 1 ms of sleep every 100 events.
    Realistic,
    /// A sleep between events.
    Slow,
}

impl Pace {
    fn after_event(self, n: u64) {
        match self {
            Pace::Realistic => {
                let mut x = n;
                for _ in 0..200 {
                    x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
                }
                std::hint::black_box(x);
                if n % 100 == 99 {
                    std::thread::sleep(Duration::from_millis(1));
                }
            }
            Pace::Slow => std::thread::sleep(Duration::from_micros(250)),
        }
    }
}

/// What one run saw.
#[derive(Debug)]
struct Flood {
    /// The peak live bytes above the level before the flood.
    peak_above: usize,
    /// Events taken after the request was sent.
    events: u64,
    /// Events taken after the deadline, before the timeout came.
    after_deadline: u64,
    /// When the timeout came, after the request was sent.
    timed_out_at: Option<Duration>,
    /// Events taken after the timeout (the flood went on).
    after_timeout: u64,
    /// The run stopped at `GIVE_UP_BYTES`.
    gave_up: bool,
    /// From the request to the end of the run.
    took: Duration,
    /// How long `mcp_transport_free` took after `mcp_transport_close(t, 200)`.
    free_took: Duration,
}

/// Spawns the flooding server, sends a request that is never answered
/// and takes events at `pace` until about a second has passed and the
/// flood has run 300 ms past the timeout (at most `limit`, or until
/// `GIVE_UP_BYTES` are live above the start).
fn flood(pace: Pace, limit: Duration) -> Flood {
    let script = format!("exec yes '{FLOOD_LINE}'");
    let sh = CString::new("sh").unwrap();
    let dash_c = CString::new("-c").unwrap();
    let script = CString::new(script).unwrap();
    let mut t = std::ptr::null_mut();
    unsafe {
        let cmd = mcp_command_new(sh.as_ptr());
        assert!(!cmd.is_null());
        assert_eq!(mcp_command_arg(cmd, dash_c.as_ptr()), MCP_STATUS_OK);
        assert_eq!(mcp_command_arg(cmd, script.as_ptr()), MCP_STATUS_OK);
        assert_eq!(
            mcp_command_stderr(cmd, McpStderrMode::MCP_STDERR_DISCARD as i32),
            MCP_STATUS_OK
        );
        assert_eq!(mcp_transport_spawn(cmd, 0, &mut t), MCP_STATUS_OK);
        mcp_command_free(cmd);
        assert_eq!(
            mcp_transport_set_max_line_len(t, MAX_LINE_LEN),
            MCP_STATUS_OK
        );
        assert_eq!(mcp_transport_set_max_queued(t, MAX_QUEUED), MCP_STATUS_OK);
    }

    let base = peak_allocator::live();
    peak_allocator::reset_peak();
    let mut ev = new_event();

    // The flood flows: its lines are notifications.
    for n in 0..100 {
        let st = unsafe { mcp_transport_next_event(t, 5000, &mut ev) };
        assert_eq!(st, MCP_STATUS_OK);
        assert_eq!(ev.kind, MESSAGE);
        assert_eq!(ev.len, FLOOD_LINE.len());
        pace.after_event(n);
    }

    let mut id = 0i64;
    let st = unsafe {
        mcp_transport_request(t, c"tools/list".as_ptr(), std::ptr::null(), 0, 100, &mut id)
    };
    assert_eq!(st, MCP_STATUS_OK);
    let sent = Instant::now(); // the deadline, set during the call, is at most this + 100 ms
    let deadline = sent + REQUEST_TIMEOUT;
    let mut run = Flood {
        peak_above: 0,
        events: 0,
        after_deadline: 0,
        timed_out_at: None,
        after_timeout: 0,
        gave_up: false,
        took: Duration::ZERO,
        free_took: Duration::ZERO,
    };
    loop {
        let now = Instant::now();
        let elapsed = now - sent;
        let enough = run.timed_out_at.is_some_and(|at| {
            elapsed >= Duration::from_secs(1).max(at + Duration::from_millis(300))
        });
        if enough || elapsed >= limit {
            break;
        }
        if peak_allocator::live().saturating_sub(base) > GIVE_UP_BYTES {
            run.gave_up = true;
            break;
        }
        let st = unsafe { mcp_transport_next_event(t, 1000, &mut ev) };
        assert_eq!(st, MCP_STATUS_OK, "next_event during the flood");
        run.events += 1;
        if ev.kind == REQUEST_TIMED_OUT {
            assert_eq!(ev.request_id, id);
            assert!(
                run.timed_out_at.is_none(),
                "a second timeout for one request"
            );
            run.timed_out_at = Some(sent.elapsed());
        } else {
            assert_eq!(ev.kind, MESSAGE, "the flood's lines are messages");
            if run.timed_out_at.is_some() {
                run.after_timeout += 1;
            } else if now >= deadline {
                run.after_deadline += 1;
            }
        }
        pace.after_event(run.events);
    }
    run.took = sent.elapsed();
    run.peak_above = peak_allocator::peak().saturating_sub(base);

    // Free on close's schedule: SIGTERM at 200 ms, SIGKILL at 400 ms.
    let freeing = Instant::now();
    unsafe {
        assert_eq!(mcp_transport_close(t, CLOSE_GRACE_MS), MCP_STATUS_OK);
        mcp_transport_free(t);
    }
    run.free_took = freeing.elapsed();
    println!(
        "memory bound | {pace:?}: {} events in {:?}, {} after the deadline before the timeout, \
         timeout {}, {} after it{} | peak live above the start {} bytes (bound {BOUND}) | \
         close and free took {:?}; live after free {} bytes above the start",
        run.events,
        run.took,
        run.after_deadline,
        run.timed_out_at
            .map_or("never came".to_string(), |at| format!("after {at:?}")),
        run.after_timeout,
        if run.gave_up {
            format!(" | stopped at {GIVE_UP_BYTES} bytes live above the start")
        } else {
            String::new()
        },
        run.peak_above,
        run.free_took,
        peak_allocator::live().saturating_sub(base),
    );
    run
}

fn check(run: &Flood, pace: Pace) {
    assert!(
        run.peak_above <= BOUND,
        "{pace:?}: the transport held up to {} bytes above the start while a request was \
         overdue and the server flooded; the bound is {BOUND} (line limit {MAX_LINE_LEN} + \
         {READ_CHUNK}-byte read chunks + output bound {MAX_QUEUED}, with room): {run:?}",
        run.peak_above
    );
    assert!(
        run.timed_out_at.is_some(),
        "{pace:?}: MCP_EVENT_REQUEST_TIMED_OUT never came while the flood lasted: {run:?}"
    );
    assert!(
        run.after_timeout > 0,
        "{pace:?}: the flood did not go on after the timeout: {run:?}"
    );
    // Free waits at most about twice the grace (+1 s for a server stuck in
    // the kernel): what the transport held must not make it longer.
    assert!(
        run.free_took <= FREE_BOUND,
        "{pace:?}: free after close({CLOSE_GRACE_MS}) took {:?} (bound {FREE_BOUND:?}): {run:?}",
        run.free_took
    );
}

/// A host that takes events at a realistic pace: memory stays within the
/// bound, and the overdue request times out while the flood lasts.
#[test]
fn an_overdue_request_in_a_flood_keeps_memory_bounded() {
    let _serial = serial();
    let run = flood(Pace::Realistic, Duration::from_secs(3));
    check(&run, Pace::Realistic);
}

/// A host that takes events slowly (it sleeps between them): the server
/// is always ahead, and still memory stays within the bound.
#[test]
fn an_overdue_request_with_a_slow_host_keeps_memory_bounded() {
    let _serial = serial();
    let run = flood(Pace::Slow, Duration::from_secs(4));
    check(&run, Pace::Slow);
}
