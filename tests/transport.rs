//! The transport's rules, one at a time: what it sends (byte for byte),
//! how it bounds its queue, how it matches answers, times requests out,
//! reports lines that are no messages, and closes. Time is synthetic.

use std::num::NonZeroUsize;
use std::time::{Duration, Instant};

use mcp_stdio::{Error, Event, InvalidKind, RpcKind, Transport};
use proptest::prelude::*;

/// An event, owned: what tests compare.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Ev {
    Message {
        line: Vec<u8>,
        kind: Option<RpcKind>,
        id: Option<Vec<u8>>,
    },
    Response {
        id: i64,
        line: Vec<u8>,
        kind: Option<RpcKind>,
    },
    TimedOut(i64),
    Failed(i64),
    Invalid(InvalidKind, Option<Vec<u8>>),
    Closed,
}

fn own(e: Event<'_>) -> Ev {
    match e {
        Event::Message { line, envelope } => Ev::Message {
            line: line.to_vec(),
            kind: envelope.kind,
            id: envelope.id.map(<[u8]>::to_vec),
        },
        Event::Response { id, line, envelope } => Ev::Response {
            id,
            line: line.to_vec(),
            kind: envelope.kind,
        },
        Event::RequestTimedOut { id } => Ev::TimedOut(id),
        Event::RequestFailed { id, .. } => Ev::Failed(id),
        Event::Invalid { kind, line, .. } => Ev::Invalid(kind, line.map(<[u8]>::to_vec)),
        Event::Closed => Ev::Closed,
        _ => unreachable!(),
    }
}

/// Every event due at `now`.
fn drain(t: &mut Transport, now: Instant) -> Vec<Ev> {
    let mut events = Vec::new();
    while let Some(e) = t.next_event(now) {
        events.push(own(e));
        assert!(events.len() < 1_000_000, "events never end");
    }
    events
}

/// The lines queued, taken out.
fn sent(t: &mut Transport) -> Vec<String> {
    let mut out = Vec::new();
    t.take_output(&mut out).unwrap();
    String::from_utf8(out)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect()
}

fn message(line: &str, kind: RpcKind, id: Option<&str>) -> Ev {
    Ev::Message {
        line: line.as_bytes().to_vec(),
        kind: Some(kind),
        id: id.map(|i| i.as_bytes().to_vec()),
    }
}

fn response(id: i64, line: &str) -> Ev {
    Ev::Response {
        id,
        line: line.as_bytes().to_vec(),
        kind: Some(RpcKind::Response),
    }
}

fn result_line(id: &str) -> String {
    format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{{}}}}")
}

fn secs(s: u64) -> Duration {
    Duration::from_secs(s)
}

const CANCELLED_TIMEOUT: &str = "\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":";

// ---- Sending ----

#[test]
fn requests_are_numbered_per_transport() {
    let now = Instant::now();
    let (mut a, mut b) = (Transport::new(), Transport::new());
    assert_eq!(a.request("x", None, None, now), Ok(1));
    assert_eq!(a.request("x", None, None, now), Ok(2));
    assert_eq!(b.request("x", None, None, now), Ok(1));
    assert_eq!(a.request("x", None, None, now), Ok(3));
    assert_eq!(b.request("x", None, None, now), Ok(2));
}

#[test]
fn each_sent_line_is_exact() {
    let now = Instant::now();
    let mut t = Transport::new();
    t.request("tools/list", None, None, now).unwrap();
    t.request(
        "tools/call",
        Some(b" { \"name\" : \"echo\",\n \"args\": [1, 2] } "),
        None,
        now,
    )
    .unwrap();
    t.request("a\"b\\c\n\u{1}\u{2028}é", Some(b"[]"), None, now)
        .unwrap();
    t.notify("notifications/initialized", None).unwrap();
    t.notify("notifications/progress", Some(b"{\"progress\": 1}"))
        .unwrap();
    t.respond(b"7", b"{ \"ok\" : true }").unwrap();
    t.respond(b"\"a\\u0062\"", b"null").unwrap();
    t.respond(b"-1.5e3", b"[1, 2]").unwrap();
    t.respond_error(Some(b"\"x\""), -32601, "Method \"nope\" not found\n")
        .unwrap();
    t.respond_error(None, -32700, "Parse error").unwrap();
    t.send(b" [1, {\"a\" : \"b c\"}]\r\n").unwrap();
    t.cancel(2, Some("user \"stop\"")).unwrap();
    t.cancel(3, None).unwrap();
    assert_eq!(
        sent(&mut t),
        [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","args":[1,2]}}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"a\"b\\c\n\u0001\u2028é","params":[]}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}"#,
            r#"{"jsonrpc":"2.0","id":7,"result":{"ok":true}}"#,
            r#"{"jsonrpc":"2.0","id":"a\u0062","result":null}"#,
            r#"{"jsonrpc":"2.0","id":-1.5e3,"result":[1,2]}"#,
            r#"{"jsonrpc":"2.0","id":"x","error":{"code":-32601,"message":"Method \"nope\" not found\n"}}"#,
            r#"{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error"}}"#,
            r#"[1,{"a":"b c"}]"#,
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2,"reason":"user \"stop\""}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}"#,
        ]
    );
}

#[test]
fn every_sent_line_is_a_jsonrpc_message_of_its_kind() {
    let now = Instant::now();
    let mut t = Transport::new();
    t.request("m\u{2029}", Some(b"{}"), None, now).unwrap();
    t.notify("n", Some(b"[]")).unwrap();
    t.respond(b"1", b"0").unwrap();
    t.respond_error(None, 1, "\u{0}").unwrap();
    t.respond_error(Some(b"2"), 1, "").unwrap();
    t.cancel(1, Some("r")).unwrap();
    let kinds: Vec<_> = sent(&mut t)
        .iter()
        .map(|l| mcp_stdio::envelope(l.as_bytes()).unwrap().kind)
        .collect();
    use RpcKind::*;
    let expected = [Request, Notification, Response, Error, Error, Notification];
    assert_eq!(kinds, expected.map(Some));
}

#[test]
fn params_must_be_one_structured_json_text() {
    let now = Instant::now();
    let mut t = Transport::new();
    for bad in [&b""[..], b"{", b"{} {}", b"[1,]", b"\xff"] {
        assert_eq!(
            t.request("m", Some(bad), None, now),
            Err(Error::InvalidJson)
        );
        assert_eq!(t.notify("m", Some(bad)), Err(Error::InvalidJson));
        assert_eq!(t.send(bad), Err(Error::InvalidJson));
    }
    for scalar in [&b"1"[..], b"null", b"\"s\"", b"true", b" 2 "] {
        assert_eq!(
            t.request("m", Some(scalar), None, now),
            Err(Error::InvalidParams)
        );
        assert_eq!(t.notify("m", Some(scalar)), Err(Error::InvalidParams));
    }
    assert_eq!(t.queued_len(), 0, "a refused send queues nothing");
    // A refused request uses no id.
    assert_eq!(t.request("m", Some(b"{}"), None, now), Ok(1));
}

#[test]
fn response_ids_and_results_are_checked() {
    let mut t = Transport::new();
    for bad_id in [
        &b""[..],
        b"true",
        b"null",
        b"{}",
        b"[1]",
        b"abc",
        b"\"open",
        b"1 2",
    ] {
        assert_eq!(t.respond(bad_id, b"{}"), Err(Error::InvalidArgument));
        assert_eq!(
            t.respond_error(Some(bad_id), 1, "m"),
            Err(Error::InvalidArgument)
        );
    }
    assert_eq!(t.respond(b"1", b""), Err(Error::InvalidJson));
    assert_eq!(t.respond(b"1", b"{"), Err(Error::InvalidJson));
    assert_eq!(t.queued_len(), 0);
}

// ---- The queue ----

#[test]
fn the_queue_is_bounded() {
    let now = Instant::now();
    let mut t = Transport::new();
    assert_eq!(t.max_queued(), 64 << 20);
    assert_eq!(t.set_max_queued(0), Err(Error::InvalidArgument));
    assert_eq!(t.max_queued(), 64 << 20);
    t.set_max_queued(20).unwrap();
    // "[1,2,3,4,5,6,7,8]\n" is 18 bytes; "0\n" 2: exactly the bound.
    t.send(b"[1, 2, 3, 4, 5, 6, 7, 8]").unwrap();
    t.send(b"0").unwrap();
    assert_eq!(t.queued_len(), 20);
    assert_eq!(t.send(b"1"), Err(Error::WouldBlock));
    assert_eq!(t.notify("n", None), Err(Error::WouldBlock));
    assert_eq!(t.request("m", None, None, now), Err(Error::WouldBlock));
    assert_eq!(t.respond(b"1", b"1"), Err(Error::WouldBlock));
    assert_eq!(t.respond_error(None, 1, ""), Err(Error::WouldBlock));
    assert_eq!(t.queued_len(), 20, "a refused send queues nothing");
    // Writing some makes room.
    t.consume(18);
    t.send(b"[1, 2, 3, 4, 5, 6, 7, 8]").unwrap();
    assert_eq!(t.output(), b"0\n[1,2,3,4,5,6,7,8]\n");
    // The refused request used no id.
    t.consume(usize::MAX);
    assert_eq!(t.request("m", None, None, now), Ok(1));
}

#[test]
fn a_message_larger_than_the_bound_goes_when_the_queue_is_empty() {
    let mut t = Transport::new();
    t.set_max_queued(4).unwrap();
    t.send(b"\"a long string, far over the bound\"").unwrap();
    assert_eq!(t.send(b"1"), Err(Error::WouldBlock));
    t.consume(t.output().len());
    t.send(b"\"again, now that the queue is empty\"").unwrap();
}

#[test]
fn lowering_the_bound_affects_later_sends_only() {
    let mut t = Transport::new();
    for _ in 0..10 {
        t.send(b"[1,2,3]").unwrap();
    }
    t.set_max_queued(5).unwrap();
    assert_eq!(t.queued_len(), 80, "nothing queued is dropped");
    assert_eq!(t.send(b"1"), Err(Error::WouldBlock));
    t.set_max_queued(82).unwrap();
    t.send(b"1").unwrap();
}

#[test]
fn cancellations_bypass_the_bound() {
    let now = Instant::now();
    let mut t = Transport::new();
    let a = t.request("a", None, None, now).unwrap();
    let b = t.request("b", None, Some(secs(1)), now).unwrap();
    t.set_max_queued(1).unwrap();
    assert_eq!(t.send(b"1"), Err(Error::WouldBlock));
    t.cancel(a, None).unwrap();
    assert_eq!(drain(&mut t, now + secs(1)), [Ev::TimedOut(b)]);
    let lines = sent(&mut t);
    assert_eq!(lines.len(), 4);
    assert!(lines[2].contains(&format!("{CANCELLED_TIMEOUT}{a}}}")));
    assert!(lines[3].contains(&format!("{CANCELLED_TIMEOUT}{b},")));
}

#[test]
fn output_is_written_from_the_queue_in_pieces() {
    let mut t = Transport::new();
    let mut expected = Vec::new();
    let mut written = Vec::new();
    for i in 0..1000 {
        let line = format!("[{i}]\n");
        t.send(line.as_bytes()).unwrap();
        expected.extend_from_slice(line.as_bytes());
        let n = (i % 7).min(t.output().len());
        written.extend_from_slice(&t.output()[..n]);
        t.consume(n);
    }
    t.take_output(&mut written).unwrap();
    assert_eq!(written, expected);
    assert_eq!(t.queued_len(), 0);
}

// ---- Matching ----

#[test]
fn only_the_exact_integer_token_matches_and_only_once() {
    let now = Instant::now();
    let mut t = Transport::new();
    let id = t.request("m", None, None, now).unwrap();
    assert_eq!(id, 1);
    let not_ours = ["1.0", "1e0", "\"1\"", "-0", "10", "99", "1.5"];
    let mut stream = String::new();
    for token in not_ours {
        stream += &result_line(token);
        stream += "\n";
    }
    let error = r#"{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"no"}}"#;
    stream += &format!("{error}\n{}\n", result_line("1"));
    t.receive(stream.as_bytes()).unwrap();
    let mut expected: Vec<Ev> = not_ours
        .iter()
        .map(|token| message(&result_line(token), RpcKind::Response, Some(token)))
        .collect();
    expected.push(Ev::Response {
        id: 1,
        line: error.as_bytes().to_vec(),
        kind: Some(RpcKind::Error),
    });
    // A second answer for the same id: a message.
    expected.push(message(&result_line("1"), RpcKind::Response, Some("1")));
    assert_eq!(drain(&mut t, now), expected);
}

#[test]
fn requests_and_notifications_from_the_peer_are_messages() {
    let now = Instant::now();
    let mut t = Transport::new();
    t.request("m", None, None, now).unwrap();
    let request = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    let notification = r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{}}"#;
    let no_id_error = r#"{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error"}}"#;
    let null_id_error = r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}"#;
    t.receive(format!("{request}\n{notification}\n{no_id_error}\n{null_id_error}\n").as_bytes())
        .unwrap();
    assert_eq!(
        drain(&mut t, now),
        [
            message(request, RpcKind::Request, Some("1")),
            message(notification, RpcKind::Notification, None),
            message(no_id_error, RpcKind::Error, None),
            message(null_id_error, RpcKind::Error, Some("null")),
        ]
    );
}

#[test]
fn a_batch_is_a_message_and_nothing_inside_matches() {
    let now = Instant::now();
    let mut t = Transport::new();
    let id = t.request("m", None, None, now).unwrap();
    let batch = format!(
        "[{},{{\"jsonrpc\":\"2.0\",\"method\":\"n\"}}]",
        result_line("1")
    );
    t.receive(format!("{batch}\n{}\n", result_line("1")).as_bytes())
        .unwrap();
    assert_eq!(
        drain(&mut t, now),
        [
            Ev::Message {
                line: batch.into_bytes(),
                kind: Some(RpcKind::Batch),
                id: None
            },
            response(id, &result_line("1")),
        ]
    );
}

#[test]
fn a_stray_response_is_a_message() {
    let now = Instant::now();
    let mut t = Transport::new();
    t.receive(format!("{}\n", result_line("1")).as_bytes())
        .unwrap();
    assert_eq!(
        drain(&mut t, now),
        [message(&result_line("1"), RpcKind::Response, Some("1"))]
    );
}

#[test]
fn the_envelope_of_a_response_is_given() {
    let now = Instant::now();
    let mut t = Transport::new();
    t.request("m", None, None, now).unwrap();
    t.receive(b"{\"jsonrpc\":\"2.0\",\"result\":[1, 2],\"id\":1}\n")
        .unwrap();
    match t.next_event(now) {
        Some(Event::Response {
            id: 1, envelope, ..
        }) => {
            assert_eq!(envelope.result, Some(&b"[1, 2]"[..]));
            assert_eq!(envelope.id, Some(&b"1"[..]));
        }
        other => panic!("{other:?}"),
    }
}

// ---- Timeouts ----

#[test]
fn deadlines_time_out_in_order_then_by_id() {
    let t0 = Instant::now();
    let mut t = Transport::new();
    let a = t.request("a", None, Some(secs(3)), t0).unwrap();
    let b = t.request("b", None, Some(secs(1)), t0).unwrap();
    let c = t.request("c", None, Some(secs(3)), t0).unwrap();
    let d = t.request("d", None, None, t0).unwrap();
    let e = t.request("e", None, Some(secs(1)), t0).unwrap();
    sent(&mut t);
    assert_eq!(drain(&mut t, t0), []);
    assert_eq!(drain(&mut t, t0 + secs(1) - Duration::from_nanos(1)), []);
    assert_eq!(
        drain(&mut t, t0 + secs(5)),
        [
            Ev::TimedOut(b),
            Ev::TimedOut(e),
            Ev::TimedOut(a),
            Ev::TimedOut(c)
        ]
    );
    let cancelled: Vec<String> = sent(&mut t);
    let expected: Vec<String> = [b, e, a, c]
        .iter()
        .map(|id| {
            format!("{{\"jsonrpc\":\"2.0\",{CANCELLED_TIMEOUT}{id},\"reason\":\"request timed out\"}}}}")
        })
        .collect();
    assert_eq!(cancelled, expected);
    // Once only; `d` has no deadline.
    assert_eq!(drain(&mut t, t0 + secs(1_000_000)), []);
    assert_eq!(t.cancel(d, None), Ok(()));
}

#[test]
fn a_timed_out_request_is_forgotten() {
    let t0 = Instant::now();
    let mut t = Transport::new();
    let id = t.request("m", None, Some(secs(1)), t0).unwrap();
    assert_eq!(drain(&mut t, t0 + secs(1)), [Ev::TimedOut(id)]);
    t.receive(format!("{}\n", result_line("1")).as_bytes())
        .unwrap();
    assert_eq!(
        drain(&mut t, t0 + secs(2)),
        [message(&result_line("1"), RpcKind::Response, Some("1"))]
    );
    assert_eq!(t.cancel(id, None), Err(Error::InvalidArgument));
}

#[test]
fn initialize_is_never_cancelled() {
    let t0 = Instant::now();
    let mut t = Transport::new();
    let init = t
        .request("initialize", Some(b"{}"), Some(secs(1)), t0)
        .unwrap();
    sent(&mut t);
    assert_eq!(t.cancel(init, None), Err(Error::InvalidArgument));
    assert_eq!(drain(&mut t, t0 + secs(1)), [Ev::TimedOut(init)]);
    assert_eq!(t.queued_len(), 0, "no cancellation for initialize");
}

#[test]
fn lines_received_come_before_deadlines_passed() {
    let t0 = Instant::now();
    let mut t = Transport::new();
    let a = t.request("a", None, Some(secs(1)), t0).unwrap();
    let b = t.request("b", None, Some(secs(1)), t0).unwrap();
    t.receive(format!("{}\n1\n", result_line("2")).as_bytes())
        .unwrap();
    assert_eq!(
        drain(&mut t, t0 + secs(9)),
        [
            response(b, &result_line("2")),
            Ev::Invalid(InvalidKind::InvalidJsonRpc, Some(b"1".to_vec())),
            Ev::TimedOut(a),
        ]
    );
}

#[test]
fn cancel_forgets_and_refuses_what_it_cannot_cancel() {
    let t0 = Instant::now();
    let mut t = Transport::new();
    let answered = t.request("a", None, None, t0).unwrap();
    let cancelled = t.request("c", None, Some(secs(1)), t0).unwrap();
    t.receive(format!("{}\n", result_line("1")).as_bytes())
        .unwrap();
    assert_eq!(drain(&mut t, t0).len(), 1);
    sent(&mut t);
    for id in [answered, 0, -1, 99, i64::MAX] {
        assert_eq!(t.cancel(id, None), Err(Error::InvalidArgument), "{id}");
    }
    assert_eq!(t.queued_len(), 0, "a refused cancel sends nothing");
    t.cancel(cancelled, Some("bye")).unwrap();
    assert_eq!(t.cancel(cancelled, None), Err(Error::InvalidArgument));
    assert_eq!(sent(&mut t).len(), 1);
    // No event for it, ever: no timeout, and its answer is a message.
    t.receive(format!("{}\n", result_line("2")).as_bytes())
        .unwrap();
    assert_eq!(
        drain(&mut t, t0 + secs(9)),
        [message(&result_line("2"), RpcKind::Response, Some("2"))]
    );
    assert_eq!(t.next_deadline(), None);
}

#[test]
fn next_deadline_is_the_earliest() {
    let t0 = Instant::now();
    let mut t = Transport::new();
    assert_eq!(t.next_deadline(), None);
    t.request("x", None, None, t0).unwrap();
    assert_eq!(t.next_deadline(), None);
    let a = t.request("a", None, Some(secs(5)), t0).unwrap();
    t.request("b", None, Some(secs(7)), t0).unwrap();
    assert_eq!(t.next_deadline(), Some(t0 + secs(5)));
    t.cancel(a, None).unwrap();
    assert_eq!(t.next_deadline(), Some(t0 + secs(7)));
    t.close(secs(3), t0 + secs(1)).unwrap();
    assert_eq!(t.next_deadline(), Some(t0 + secs(4)));
    drain(&mut t, t0 + secs(4));
    assert!(t.is_closed());
    assert_eq!(t.next_deadline(), None);
}

// ---- Invalid lines ----

#[test]
fn lines_that_are_no_messages_are_reported() {
    let now = Instant::now();
    let mut t = Transport::new();
    t.set_max_line_len(NonZeroUsize::new(16));
    assert_eq!(t.max_line_len(), NonZeroUsize::new(16));
    t.receive(b"not json\n{\"a\":1}\n[\"a very long line indeed\"]\n\xff\n{\"jsonrpc\":1}\n")
        .unwrap();
    assert_eq!(
        drain(&mut t, now),
        [
            Ev::Invalid(InvalidKind::ParseError, Some(b"not json".to_vec())),
            Ev::Invalid(InvalidKind::InvalidJsonRpc, Some(b"{\"a\":1}".to_vec())),
            Ev::Invalid(InvalidKind::TooLong, None),
            Ev::Invalid(InvalidKind::ParseError, Some(b"\xff".to_vec())),
            Ev::Invalid(
                InvalidKind::InvalidJsonRpc,
                Some(b"{\"jsonrpc\":1}".to_vec())
            ),
        ]
    );
}

// ---- Close ----

#[test]
fn close_refuses_sends_fails_pending_then_closes_once() {
    let t0 = Instant::now();
    let mut t = Transport::new();
    let ids: Vec<i64> = (0..5)
        .map(|i| {
            t.request("m", None, (i % 2 == 0).then(|| secs(100)), t0)
                .unwrap()
        })
        .collect();
    t.close(secs(10), t0).unwrap();
    t.close(secs(1), t0).unwrap(); // the first schedule stands
    assert_eq!(t.close(secs(0), t0 + secs(5)), Ok(()));
    assert_eq!(t.send(b"1"), Err(Error::Closed));
    assert_eq!(t.request("m", None, None, t0), Err(Error::Closed));
    assert_eq!(t.notify("m", None), Err(Error::Closed));
    assert_eq!(t.respond(b"1", b"1"), Err(Error::Closed));
    assert_eq!(t.respond_error(None, 1, "m"), Err(Error::Closed));
    assert_eq!(t.cancel(ids[0], None), Err(Error::Closed));
    // Answers still arriving are delivered.
    t.receive(format!("{}\n", result_line("3")).as_bytes())
        .unwrap();
    assert_eq!(
        drain(&mut t, t0 + secs(9)),
        [response(3, &result_line("3"))]
    );
    assert!(!t.is_closed());
    assert_eq!(
        drain(&mut t, t0 + secs(10)),
        [
            Ev::Failed(1),
            Ev::Failed(2),
            Ev::Failed(4),
            Ev::Failed(5),
            Ev::Closed
        ]
    );
    assert!(t.is_closed());
    for _ in 0..3 {
        assert_eq!(t.next_event(t0 + secs(1000)), None);
    }
    assert_eq!(t.receive(b"1\n"), Err(Error::Closed));
    assert_eq!(t.send(b"1"), Err(Error::Closed));
    // The output is kept.
    assert_eq!(sent(&mut t).len(), 5);
}

#[test]
fn close_ends_at_the_peer_end_if_it_comes_first() {
    let t0 = Instant::now();
    let mut t = Transport::new();
    let id = t.request("m", None, None, t0).unwrap();
    t.close(secs(10), t0).unwrap();
    assert_eq!(drain(&mut t, t0 + secs(1)), []);
    t.receive(b"[1]\n").unwrap();
    t.receive_end().unwrap();
    assert_eq!(
        drain(&mut t, t0 + secs(1)),
        [
            Ev::Invalid(InvalidKind::InvalidJsonRpc, Some(b"[1]".to_vec())),
            Ev::Failed(id),
            Ev::Closed
        ]
    );
}

#[test]
fn closing_with_nothing_pending_gives_closed_alone() {
    let t0 = Instant::now();
    let mut t = Transport::new();
    t.close(Duration::ZERO, t0).unwrap();
    assert_eq!(drain(&mut t, t0), [Ev::Closed]);
}

#[test]
fn the_peer_going_away_first_closes_the_transport() {
    let t0 = Instant::now();
    let mut t = Transport::new();
    let a = t.request("a", None, Some(secs(100)), t0).unwrap();
    let b = t.request("b", None, None, t0).unwrap();
    // A last line without a newline still counts.
    t.receive(result_line("2").as_bytes()).unwrap();
    t.receive_end().unwrap();
    t.receive_end().unwrap(); // twice is harmless
    assert_eq!(t.receive(b"1\n"), Err(Error::Closed));
    assert_eq!(t.send(b"1"), Err(Error::Closed));
    assert_eq!(t.request("c", None, None, t0), Err(Error::Closed));
    assert_eq!(
        drain(&mut t, t0),
        [response(b, &result_line("2")), Ev::Failed(a), Ev::Closed]
    );
    assert_eq!(t.next_event(t0), None);
    assert_eq!(t.receive_end(), Ok(()));
}

#[test]
fn a_failed_write_closes_the_transport() {
    let t0 = Instant::now();
    let mut t = Transport::new();
    let a = t.request("a", None, Some(secs(1)), t0).unwrap();
    let b = t.request("b", None, None, t0).unwrap();
    t.receive(b"{\"jsonrpc\":\"2.0\",\"method\":\"n\"}\n")
        .unwrap();
    t.write_failed();
    assert_eq!(t.notify("n", None), Err(Error::Closed));
    let notification = "{\"jsonrpc\":\"2.0\",\"method\":\"n\"}";
    assert_eq!(
        t.next_event(t0).map(own),
        Some(message(notification, RpcKind::Notification, None))
    );
    // The peer may still send until closing comes to its end.
    t.receive(b"[1]\n").unwrap();
    assert_eq!(
        t.next_event(t0).map(own),
        Some(Ev::Invalid(
            InvalidKind::InvalidJsonRpc,
            Some(b"[1]".to_vec())
        ))
    );
    assert_eq!(t.next_event(t0).map(own), Some(Ev::Failed(a)));
    assert_eq!(
        t.receive(b"[2]\n"),
        Err(Error::Closed),
        "nothing more would come out"
    );
    assert_eq!(drain(&mut t, t0), [Ev::Failed(b), Ev::Closed]);
    assert_eq!(t.respond(b"1", b"1"), Err(Error::Closed));
}

#[test]
fn many_pending_requests_fail_in_ascending_order() {
    let t0 = Instant::now();
    let mut t = Transport::new();
    for i in 0..1000u64 {
        t.request("m", None, (i % 3 == 0).then(|| secs(1000 - i)), t0)
            .unwrap();
    }
    // Answer every fifth one, in descending order.
    for id in (1..=1000).rev().filter(|id| id % 5 == 0) {
        t.receive(format!("{}\n", result_line(&id.to_string())).as_bytes())
            .unwrap();
    }
    let answered = drain(&mut t, t0);
    assert_eq!(answered.len(), 200);
    t.receive_end().unwrap();
    let expected: Vec<Ev> = (1..=1000)
        .filter(|id| id % 5 != 0)
        .map(Ev::Failed)
        .chain([Ev::Closed])
        .collect();
    assert_eq!(drain(&mut t, t0), expected);
}

#[test]
fn no_cancellation_is_queued_once_writing_failed() {
    let t0 = Instant::now();
    let mut t = Transport::new();
    let a = t.request("a", None, Some(secs(1)), t0).unwrap();
    sent(&mut t);
    t.write_failed();
    assert_eq!(drain(&mut t, t0 + secs(1)), [Ev::TimedOut(a), Ev::Closed]);
    assert_eq!(t.queued_len(), 0, "the peer reads no more");
}

// ---- Chunking ----

/// Lines of every kind, some answering requests 1 to 3.
const LINES: &[&[u8]] = &[
    b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n",
    b"{\"jsonrpc\":\"2.0\",\"id\":2,\"error\":{\"code\":1,\"message\":\"m\"}}\r\n",
    b"{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":null}\n",
    b"{\"jsonrpc\":\"2.0\",\"id\":\"3\",\"result\":null}\n",
    b"{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"ping\"}\n",
    b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/x\",\"params\":[1]}\n",
    b"[{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":1}]\n",
    b"  \n\n",
    b"junk\n",
    b"\xef\xbb\xbf{}\n",
    b"{\"jsonrpc\":\"2.0\",\"method\":\"a line far longer than the limit of this transport\"}\n",
    b"{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":\"\xc3\xa9\"}\n",
    b"{\"jsonrpc\":",
];

fn events_of(stream: &[u8], cuts: &[usize]) -> Vec<Ev> {
    let t0 = Instant::now();
    let mut t = Transport::new();
    t.set_max_line_len(NonZeroUsize::new(64));
    for i in 0..3 {
        t.request("m", None, Some(secs(10 + i)), t0).unwrap();
    }
    let mut events = Vec::new();
    let mut from = 0;
    let mut cuts = cuts.to_vec();
    cuts.sort_unstable();
    for &cut in &cuts {
        let cut = cut.clamp(from, stream.len());
        t.receive(&stream[from..cut]).unwrap();
        events.extend(drain(&mut t, t0));
        from = cut;
    }
    t.receive(&stream[from..]).unwrap();
    t.receive_end().unwrap();
    events.extend(drain(&mut t, t0 + secs(11)));
    events
}

proptest! {
    #[test]
    fn any_chunking_gives_the_same_events(
        picks in proptest::collection::vec(0..LINES.len(), 0..16),
        cuts in proptest::collection::vec(any::<usize>(), 0..12),
    ) {
        let stream: Vec<u8> = picks.iter().flat_map(|&i| LINES[i].iter().copied()).collect();
        let cuts: Vec<usize> = cuts.iter().map(|c| c % (stream.len() + 1)).collect();
        let whole = events_of(&stream, &[]);
        prop_assert_eq!(whole.last(), Some(&Ev::Closed));
        prop_assert_eq!(events_of(&stream, &cuts), whole.clone());
        let bytes: Vec<usize> = (0..=stream.len()).collect();
        prop_assert_eq!(events_of(&stream, &bytes), whole);
    }
}

// ---- Two transports ----

/// A small deterministic generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
}

#[test]
fn two_transports_talking() {
    const N: i64 = 10_000;
    let now = Instant::now();
    let (mut a, mut b) = (Transport::new(), Transport::new());
    for i in 1..=N {
        let params = format!("{{\"n\":{i}}}");
        assert_eq!(
            a.request("echo", Some(params.as_bytes()), Some(secs(60)), now),
            Ok(i)
        );
    }
    // B reads A's requests in pieces, keeping each id token.
    let mut ids = Vec::new();
    let mut wire = Vec::new();
    a.take_output(&mut wire).unwrap();
    for piece in wire.chunks(4093) {
        b.receive(piece).unwrap();
        while let Some(event) = b.next_event(now) {
            match event {
                Event::Message { envelope, .. } => {
                    assert_eq!(envelope.kind, Some(RpcKind::Request));
                    assert!(mcp_stdio::json_string_eq(envelope.method.unwrap(), "echo"));
                    ids.push((
                        envelope.id.unwrap().to_vec(),
                        envelope.params.unwrap().to_vec(),
                    ));
                }
                other => panic!("{other:?}"),
            }
        }
    }
    assert_eq!(ids.len(), N as usize);
    // B answers in a shuffled order (Fisher-Yates), echoing ids and params.
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for i in (1..ids.len()).rev() {
        let j = (rng.next() % (i as u64 + 1)) as usize;
        ids.swap(i, j);
    }
    for (id, params) in &ids {
        b.respond(id, params).unwrap();
    }
    let mut wire = Vec::new();
    b.take_output(&mut wire).unwrap();
    let mut seen = vec![false; N as usize + 1];
    let mut count = 0;
    for piece in wire.chunks(5003) {
        a.receive(piece).unwrap();
        while let Some(event) = a.next_event(now) {
            match event {
                Event::Response { id, envelope, .. } => {
                    assert!(!seen[id as usize], "{id} twice");
                    seen[id as usize] = true;
                    assert_eq!(
                        envelope.result.unwrap(),
                        format!("{{\"n\":{id}}}").as_bytes()
                    );
                    count += 1;
                }
                other => panic!("{other:?}"),
            }
        }
    }
    assert_eq!(count, N);
    assert_eq!(a.next_deadline(), None, "nothing left pending");
    assert_eq!(a.next_event(now + secs(61)), None);
}
