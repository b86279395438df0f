//! The transport's C ABI called from Rust as a C caller would, and under
//! Miri: pointers into events, copying out, waking a waiting thread, panics.
//! (Descriptor transports are tested from C: tests/c/test_transport.c.)

use std::ffi::CStr;
use std::ptr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use super::super::*;
use McpStatus::*;

/// A `*mut McpTransport` that may cross threads, as C would pass it.
#[derive(Clone, Copy)]
struct Shared(*mut McpTransport);
// SAFETY: the transport's sending calls are thread-safe (a lock inside).
unsafe impl Send for Shared {}
// SAFETY: as above; `McpTransport` is `Sync`.
unsafe impl Sync for Shared {}

fn event() -> McpEvent {
    McpEvent {
        kind: -9,
        ..McpEvent::new(crate::Event::Closed, crate::connection::Exit::UNKNOWN)
    }
}

fn data(ev: &McpEvent) -> &[u8] {
    assert!(!ev.data.is_null());
    // SAFETY: an event just taken; no receiving call since.
    unsafe { std::slice::from_raw_parts(ev.data, ev.len) }
}

fn slice(s: McpSlice) -> &'static [u8] {
    assert!(!s.data.is_null());
    // SAFETY: points into an event's line, read before the next receiving call.
    unsafe { std::slice::from_raw_parts(s.data, s.len) }
}

/// Everything queued, copied out through `read_output` in pieces of `cap`.
fn output(t: *mut McpTransport, cap: usize) -> Vec<u8> {
    let mut all = Vec::new();
    let mut piece = vec![0u8; cap];
    loop {
        let mut n = usize::MAX;
        assert_eq!(
            unsafe { mcp_transport_read_output(t, piece.as_mut_ptr(), cap, &mut n) },
            MCP_STATUS_OK
        );
        if n == 0 {
            return all;
        }
        all.extend_from_slice(&piece[..n]);
    }
}

#[test]
fn a_request_and_its_response_through_the_c_abi() {
    unsafe {
        let t = mcp_transport_new();
        let mut id = 0;
        let params = br#"{ "name" : "echo" }"#;
        assert_eq!(
            mcp_transport_request(
                t,
                c"tools/call".as_ptr(),
                params.as_ptr(),
                params.len(),
                0,
                &mut id
            ),
            MCP_STATUS_OK
        );
        assert_eq!(id, 1);
        assert_eq!(
            output(t, 7),
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}
"#
        );
        let answer = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"ok\":true}}\r\n";
        assert_eq!(
            mcp_transport_receive(t, answer.as_ptr(), answer.len()),
            MCP_STATUS_OK
        );
        let mut ev = event();
        assert_eq!(mcp_transport_next_event(t, 0, &mut ev), MCP_STATUS_OK);
        assert_eq!(ev.kind, McpEventKind::MCP_EVENT_RESPONSE as i32);
        assert_eq!(ev.request_id, 1);
        assert_eq!(ev.rpc_kind, McpRpcKind::MCP_RPC_RESPONSE as i32);
        assert_eq!(data(&ev), &answer[..answer.len() - 2]);
        assert_eq!(slice(ev.envelope.result), b"{\"ok\":true}");
        assert_eq!(slice(ev.envelope.id), b"1");
        assert_eq!((ev.invalid_kind, ev.exit_code, ev.term_signal), (0, -1, 0));
        // A second answer to the same id is a message; the event is untouched on NO_MESSAGE.
        assert_eq!(
            mcp_transport_receive(t, answer.as_ptr(), answer.len()),
            MCP_STATUS_OK
        );
        assert_eq!(mcp_transport_next_event(t, 0, &mut ev), MCP_STATUS_OK);
        assert_eq!(ev.kind, McpEventKind::MCP_EVENT_MESSAGE as i32);
        assert_eq!(ev.request_id, -1);
        let mut after = event();
        assert_eq!(
            mcp_transport_next_event(t, 0, &mut after),
            MCP_STATUS_NO_MESSAGE
        );
        assert_eq!(after.kind, -9);

        // Too long: no data, the bytes received counted.
        assert_eq!(mcp_transport_set_max_line_len(t, 4), MCP_STATUS_OK);
        assert_eq!(
            mcp_transport_receive(t, b"[1,2,3]\n".as_ptr(), 8),
            MCP_STATUS_OK
        );
        assert_eq!(mcp_transport_next_event(t, 0, &mut ev), MCP_STATUS_OK);
        assert_eq!(ev.kind, McpEventKind::MCP_EVENT_INVALID as i32);
        assert_eq!(ev.invalid_kind, McpMessageKind::MCP_MESSAGE_TOO_LONG as i32);
        assert!(ev.data.is_null());
        assert!(ev.len > 4);

        // take_output hands over an owned buffer.
        assert_eq!(
            mcp_transport_notify(t, c"ping".as_ptr(), ptr::null(), 0),
            MCP_STATUS_OK
        );
        let mut buf = McpBuffer {
            data: ptr::null_mut(),
            len: 0,
        };
        assert_eq!(mcp_transport_take_output(t, &mut buf), MCP_STATUS_OK);
        assert_eq!(
            std::slice::from_raw_parts(buf.data, buf.len),
            b"{\"jsonrpc\":\"2.0\",\"method\":\"ping\"}\n"
        );
        mcp_buffer_free(&mut buf);
        assert_eq!(mcp_transport_take_output(t, &mut buf), MCP_STATUS_OK);
        assert!(buf.data.is_null() && buf.len == 0);
        mcp_transport_free(t);
    }
}

/// The notifications tied to a request, through the C ABI: progress of a
/// request sent with MCP_REQUEST_PROGRESS, the stream and the end of a
/// subscription.
#[test]
fn notifications_tied_to_a_request_through_the_c_abi() {
    unsafe {
        let t = mcp_transport_new();
        let mut id = 0;
        assert_eq!(
            mcp_transport_request_with(
                t,
                c"tools/call".as_ptr(),
                ptr::null(),
                0,
                3000,
                MCP_REQUEST_PROGRESS | MCP_REQUEST_RESET_ON_PROGRESS,
                60_000,
                &mut id
            ),
            MCP_STATUS_OK
        );
        assert_eq!(
            mcp_transport_request_with(t, c"m".as_ptr(), ptr::null(), 0, 0, 4, 0, &mut id),
            MCP_STATUS_UNKNOWN_FLAGS
        );
        let mut listen = 0;
        assert_eq!(
            mcp_transport_request(
                t,
                c"subscriptions/listen".as_ptr(),
                b"{}".as_ptr(),
                2,
                0,
                &mut listen
            ),
            MCP_STATUS_OK
        );
        assert_eq!((id, listen), (1, 2));
        assert_eq!(
            output(t, 64),
            &b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"_meta\":{\"progressToken\":1}}}\n\
               {\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"subscriptions/listen\",\"params\":{}}\n"[..]
        );
        let input = b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":1,\"progress\":1}}\n\
            {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\",\"params\":{\"_meta\":{\"io.modelcontextprotocol/subscriptionId\":2}}}\n\
            {\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":2}}\n";
        assert_eq!(
            mcp_transport_receive(t, input.as_ptr(), input.len()),
            MCP_STATUS_OK
        );
        let mut ev = event();
        for (kind, request_id) in [
            (McpEventKind::MCP_EVENT_PROGRESS, 1),
            (McpEventKind::MCP_EVENT_SUBSCRIPTION, 2),
            (McpEventKind::MCP_EVENT_SUBSCRIPTION_ENDED, 2),
        ] {
            assert_eq!(mcp_transport_next_event(t, 0, &mut ev), MCP_STATUS_OK);
            assert_eq!((ev.kind, ev.request_id), (kind as i32, request_id));
            assert_eq!(ev.rpc_kind, McpRpcKind::MCP_RPC_NOTIFICATION as i32);
            assert!(!slice(ev.envelope.params).is_empty());
        }
        assert_eq!(
            mcp_transport_next_event(t, 0, &mut ev),
            MCP_STATUS_NO_MESSAGE
        );
        mcp_transport_free(t);
    }
}

#[test]
fn event_data_survives_sends_from_other_threads() {
    unsafe {
        let t = mcp_transport_new();
        let line = b"{\"jsonrpc\":\"2.0\",\"id\":\"q\",\"method\":\"tools/list\"}";
        let mut input = line.to_vec();
        input.push(b'\n');
        assert_eq!(
            mcp_transport_receive(t, input.as_ptr(), input.len()),
            MCP_STATUS_OK
        );
        let mut ev = event();
        assert_eq!(mcp_transport_next_event(t, 0, &mut ev), MCP_STATUS_OK);
        let rounds = if cfg!(miri) { 20 } else { 2000 };
        let shared = Shared(t);
        let sender = thread::spawn(move || {
            let shared = shared;
            for _ in 0..rounds {
                let st = mcp_transport_send(
                    shared.0,
                    b"{\"jsonrpc\":\"2.0\",\"method\":\"n\"}".as_ptr(),
                    30,
                );
                assert_eq!(st, MCP_STATUS_OK);
            }
        });
        // Meanwhile the event's data is read, and answered.
        for _ in 0..rounds / 10 {
            assert_eq!(data(&ev), line);
            assert_eq!(slice(ev.envelope.id), b"\"q\"");
        }
        sender.join().unwrap();
        assert_eq!(data(&ev), line);
        let id = ev.envelope.id;
        assert_eq!(
            mcp_transport_respond(t, id.data, id.len, b"{}".as_ptr(), 2),
            MCP_STATUS_OK
        );
        let out = output(t, 4096);
        assert!(out.ends_with(b"{\"jsonrpc\":\"2.0\",\"id\":\"q\",\"result\":{}}\n"));
        assert_eq!(out.iter().filter(|&&b| b == b'\n').count(), rounds + 1);
        mcp_transport_free(t);
    }
}

#[test]
fn a_waiting_next_event_is_woken_by_sends_and_close() {
    unsafe {
        let t = mcp_transport_new();
        let shared = Shared(t);
        let woke = AtomicUsize::new(0);
        thread::scope(|s| {
            let woke = &woke;
            s.spawn(move || {
                let shared = shared; // the whole wrapper, not its raw field
                                     // A request with a short deadline, sent while the other thread waits without limit.
                thread::sleep(Duration::from_millis(5));
                let mut id = 0;
                let st =
                    mcp_transport_request(shared.0, c"slow".as_ptr(), ptr::null(), 0, 10, &mut id);
                assert_eq!(st, MCP_STATUS_OK);
                while woke.load(Ordering::SeqCst) == 0 {
                    thread::yield_now();
                }
                assert_eq!(mcp_transport_close(shared.0, 0), MCP_STATUS_OK);
            });
            let started = Instant::now();
            let mut ev = event();
            assert_eq!(
                mcp_transport_next_event(shared.0, -1, &mut ev),
                MCP_STATUS_OK
            );
            assert_eq!(ev.kind, McpEventKind::MCP_EVENT_REQUEST_TIMED_OUT as i32);
            assert_eq!(ev.request_id, 1);
            assert!(started.elapsed() >= Duration::from_millis(10));
            woke.store(1, Ordering::SeqCst);
            // Then the close from the other thread ends the wait.
            assert_eq!(
                mcp_transport_next_event(shared.0, -1, &mut ev),
                MCP_STATUS_OK
            );
            assert_eq!(ev.kind, McpEventKind::MCP_EVENT_CLOSED as i32);
            assert_eq!(
                mcp_transport_next_event(shared.0, -1, &mut ev),
                MCP_STATUS_END_OF_STREAM
            );
        });
        // The timed-out request's cancellation was queued, and is kept after CLOSED.
        let out = output(t, 64);
        assert!(out.ends_with(
            b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":1,\"reason\":\"request timed out\"}}\n"
        ));
        mcp_transport_free(t);
    }
}

#[test]
fn the_handle_is_checked_first_and_outputs_only_on_success() {
    unsafe {
        let null = ptr::null_mut();
        let mut ev = event();
        assert_eq!(
            mcp_transport_next_event(null, 0, &mut ev),
            MCP_STATUS_NULL_ARGUMENT
        );
        assert_eq!(
            mcp_transport_send(null, ptr::null(), 0),
            MCP_STATUS_NULL_ARGUMENT
        );
        assert_eq!(mcp_transport_close(null, 0), MCP_STATUS_NULL_ARGUMENT);
        let mut n = usize::MAX;
        assert_eq!(
            mcp_transport_read_output(null, ptr::null_mut(), 0, &mut n),
            MCP_STATUS_NULL_ARGUMENT
        );
        assert_eq!(n, 0);
        mcp_transport_free(null);

        let t = mcp_transport_new();
        assert_eq!(
            mcp_transport_next_event(t, 0, ptr::null_mut()),
            MCP_STATUS_NULL_ARGUMENT
        );
        assert_eq!(
            mcp_transport_send(t, ptr::null(), 1),
            MCP_STATUS_NULL_ARGUMENT
        );
        assert_eq!(
            mcp_transport_send(t, ptr::null(), 0),
            MCP_STATUS_INVALID_JSON
        );
        let mut id = 77;
        assert_eq!(
            mcp_transport_request(t, ptr::null(), ptr::null(), 0, 0, &mut id),
            MCP_STATUS_NULL_ARGUMENT
        );
        assert_eq!(
            mcp_transport_request(t, c"m".as_ptr(), b"1".as_ptr(), 1, 0, &mut id),
            MCP_STATUS_INVALID_PARAMS
        );
        assert_eq!(
            mcp_transport_request(t, c"\xff".as_ptr(), ptr::null(), 0, 0, &mut id),
            MCP_STATUS_INVALID_TEXT
        );
        assert_eq!(id, 77);
        assert_eq!(
            mcp_transport_respond(t, ptr::null(), 0, b"{}".as_ptr(), 2),
            MCP_STATUS_INVALID_ARGUMENT
        );
        assert_eq!(
            mcp_transport_respond(t, b"1".as_ptr(), 1, ptr::null(), 0),
            MCP_STATUS_INVALID_JSON
        );
        assert_eq!(
            mcp_transport_respond_error(t, ptr::null(), 0, -32600, ptr::null()),
            MCP_STATUS_NULL_ARGUMENT
        );
        assert_eq!(
            mcp_transport_cancel(t, 1, ptr::null()),
            MCP_STATUS_INVALID_ARGUMENT
        );
        assert_eq!(
            mcp_transport_take_output(t, ptr::null_mut()),
            MCP_STATUS_NULL_ARGUMENT
        );
        assert_eq!(
            mcp_transport_read_output(t, ptr::null_mut(), 1, &mut n),
            MCP_STATUS_NULL_ARGUMENT
        );
        assert_eq!(
            mcp_transport_set_max_queued(t, 0),
            MCP_STATUS_INVALID_ARGUMENT
        );
        assert_eq!(
            mcp_transport_set_max_line_len(t, 0),
            MCP_STATUS_INVALID_ARGUMENT
        );
        assert!(output(t, 16).is_empty());
        mcp_transport_free(t);
    }
}

#[test]
fn a_panic_in_a_transport_call_poisons_that_transport() {
    type Call = unsafe fn(*mut McpTransport) -> McpStatus;
    let calls: [(&CStr, Call); 6] = [
        (c"mcp_transport_send", |t| unsafe {
            mcp_transport_send(t, b"{}".as_ptr(), 2)
        }),
        (c"mcp_transport_notify", |t| unsafe {
            mcp_transport_notify(t, c"n".as_ptr(), ptr::null(), 0)
        }),
        (c"mcp_transport_next_event", |t| unsafe {
            mcp_transport_next_event(t, 0, &mut event())
        }),
        (c"mcp_transport_receive", |t| unsafe {
            mcp_transport_receive(t, b"[1]".as_ptr(), 3)
        }),
        (c"mcp_transport_close", |t| unsafe {
            mcp_transport_close(t, 0)
        }),
        (c"mcp_transport_read_output", |t| unsafe {
            mcp_transport_read_output(t, ptr::null_mut(), 0, ptr::null_mut())
        }),
    ];
    for (name, call) in calls {
        unsafe {
            let t = mcp_transport_new();
            let status = {
                mcp_test_inject_panic(name.as_ptr());
                let status = call(t);
                mcp_test_inject_panic(ptr::null());
                status
            };
            assert_eq!(status, MCP_STATUS_PANIC, "{name:?}");
            for (_, other) in calls {
                assert_eq!(other(t), MCP_STATUS_POISONED, "{name:?}");
            }
            mcp_transport_free(t);
        }
    }
}

#[test]
fn the_header_constants_are_the_core_s() {
    assert_eq!(
        MCP_TRANSPORT_DEFAULT_MAX_QUEUED,
        crate::Transport::new().max_queued()
    );
    unsafe {
        let t = mcp_transport_new();
        let mut ms = 7;
        assert_eq!(mcp_transport_next_deadline(t, &mut ms), MCP_STATUS_OK);
        assert_eq!(ms, -1);
        let mut id = 0;
        let st = mcp_transport_request(t, c"m".as_ptr(), ptr::null(), 0, 60_000, &mut id);
        assert_eq!(st, MCP_STATUS_OK);
        assert_eq!(mcp_transport_next_deadline(t, &mut ms), MCP_STATUS_OK);
        assert!((59_000..=60_000).contains(&ms), "{ms}");
        assert_eq!(
            mcp_transport_next_deadline(t, ptr::null_mut()),
            MCP_STATUS_NULL_ARGUMENT
        );
        mcp_transport_free(t);
    }
}

#[test]
fn transports_may_be_shared_between_threads() {
    fn shared<T: Send + Sync>() {}
    shared::<McpTransport>();
}
