//! Progress-aware deadlines in the transport's core, on synthetic time: the
//! progress token written into a request's `_meta`, its
//! `notifications/progress` tied to it as `Event::Progress`, each increase
//! resetting the timeout (never past the hard maximum), a value that does
//! not increase resetting nothing, and the defaults unchanged.

use std::time::{Duration, Instant};

use mcp_stdio::{Error, Event, RequestOptions, Transport};

const S: Duration = Duration::from_secs(1);

/// What the tests look at of an event.
#[derive(Debug, PartialEq, Eq)]
enum Ev {
    Progress(i64),
    Response(i64),
    TimedOut(i64),
    Message,
    Other,
}

fn events(t: &mut Transport, now: Instant) -> Vec<Ev> {
    let mut out = Vec::new();
    while let Some(e) = t.next_event(now) {
        out.push(match e {
            Event::Progress { id, envelope, .. } => {
                assert!(envelope.params.is_some());
                Ev::Progress(id)
            }
            Event::Response { id, .. } => Ev::Response(id),
            Event::RequestTimedOut { id } => Ev::TimedOut(id),
            Event::Message { .. } => Ev::Message,
            _ => Ev::Other,
        });
    }
    out
}

fn sent(t: &mut Transport) -> String {
    let mut out = Vec::new();
    t.take_output(&mut out).unwrap();
    String::from_utf8(out).unwrap()
}

fn progress(token: &str, value: &str) -> String {
    format!(
        "{{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":\
         {{\"progressToken\":{token},\"progress\":{value},\"total\":10}}}}\n"
    )
}

#[test]
fn the_token_is_the_request_id_in_its_meta() {
    let t0 = Instant::now();
    let mut t = Transport::new();
    let plain = t.request("a", None, Some(3 * S), t0).unwrap();
    let options = RequestOptions::timeout(Some(3 * S)).progress();
    let followed = t
        .request_with(
            "tools/call",
            Some(br#"{"name":"build","_meta":{"k":1}}"#),
            options,
            t0,
        )
        .unwrap();
    assert_eq!((plain, followed), (1, 2));
    assert_eq!(
        sent(&mut t),
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\"}\n\
         {\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":\
         {\"name\":\"build\",\"_meta\":{\"progressToken\":2,\"k\":1}}}\n"
    );
    // An array has no place for it; nothing is sent, no id used.
    assert_eq!(
        t.request_with("m", Some(b"[1]"), options, t0),
        Err(Error::InvalidParams)
    );
    assert_eq!(
        t.request_with("m", Some(br#"{"_meta":{"progressToken":9}}"#), options, t0),
        Err(Error::InvalidParams)
    );
    assert_eq!(sent(&mut t), "");
    assert_eq!(t.request("b", None, None, t0), Ok(3));
}

/// Progress every second outlives a 3 s timeout with reset on, until the
/// hard maximum; a value that does not increase resets nothing.
#[test]
fn increasing_progress_resets_the_timeout_up_to_the_hard_maximum() {
    let t0 = Instant::now();
    let mut t = Transport::new();
    let options = RequestOptions::timeout(Some(3 * S))
        .reset_on_progress()
        .max_timeout(10 * S);
    let id = t.request_with("tools/call", None, options, t0).unwrap();
    for second in 1..=8u32 {
        let now = t0 + second * S;
        t.receive(progress(&id.to_string(), &second.to_string()).as_bytes())
            .unwrap();
        assert_eq!(events(&mut t, now), vec![Ev::Progress(id)], "at {second} s");
        assert_eq!(t.next_deadline(), Some((now + 3 * S).min(t0 + 10 * S)));
    }
    // The same value again: delivered, resets nothing.
    t.receive(progress(&id.to_string(), "8").as_bytes())
        .unwrap();
    assert_eq!(events(&mut t, t0 + 9 * S), vec![Ev::Progress(id)]);
    assert_eq!(t.next_deadline(), Some(t0 + 10 * S), "the hard maximum");
    assert_eq!(
        events(&mut t, t0 + 10 * S - Duration::from_millis(1)),
        vec![]
    );
    assert_eq!(events(&mut t, t0 + 10 * S), vec![Ev::TimedOut(id)]);
    // Progress for a request no longer pending is a plain message.
    t.receive(progress(&id.to_string(), "9").as_bytes())
        .unwrap();
    assert_eq!(events(&mut t, t0 + 11 * S), vec![Ev::Message]);
}

#[test]
fn followed_without_reset_the_timeout_stands() {
    let t0 = Instant::now();
    let mut t = Transport::new();
    let id = t
        .request_with(
            "m",
            None,
            RequestOptions::timeout(Some(3 * S)).progress(),
            t0,
        )
        .unwrap();
    t.receive(progress(&id.to_string(), "1").as_bytes())
        .unwrap();
    assert_eq!(events(&mut t, t0 + 2 * S), vec![Ev::Progress(id)]);
    assert_eq!(t.next_deadline(), Some(t0 + 3 * S));
    assert_eq!(events(&mut t, t0 + 3 * S), vec![Ev::TimedOut(id)]);
}

/// The defaults keep what was: a request not followed gets its progress
/// as messages, and its timeout is never reset.
#[test]
fn progress_for_a_request_not_followed_is_a_message() {
    let t0 = Instant::now();
    let mut t = Transport::new();
    let id = t.request("m", None, Some(3 * S), t0).unwrap();
    let followed = t
        .request_with("n", None, RequestOptions::timeout(None).progress(), t0)
        .unwrap();
    t.receive(progress(&id.to_string(), "1").as_bytes())
        .unwrap();
    t.receive(progress("\"2\"", "1").as_bytes()).unwrap(); // a string token: not ours
    t.receive(progress("99", "1").as_bytes()).unwrap(); // no such request
    assert_eq!(
        events(&mut t, t0 + 2 * S),
        vec![Ev::Message, Ev::Message, Ev::Message]
    );
    assert_eq!(events(&mut t, t0 + 3 * S), vec![Ev::TimedOut(id)]);
    t.receive(progress(&followed.to_string(), "1").as_bytes())
        .unwrap();
    t.receive(b"{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}\n")
        .unwrap();
    assert_eq!(
        events(&mut t, t0 + 4 * S),
        vec![Ev::Progress(followed), Ev::Response(followed)]
    );
}

/// A hard maximum alone bounds a request that has no timeout.
#[test]
fn the_hard_maximum_alone_is_a_deadline() {
    let t0 = Instant::now();
    let mut t = Transport::new();
    let id = t
        .request_with(
            "m",
            None,
            RequestOptions::timeout(None).max_timeout(5 * S),
            t0,
        )
        .unwrap();
    assert_eq!(t.next_deadline(), Some(t0 + 5 * S));
    assert_eq!(events(&mut t, t0 + 5 * S), vec![Ev::TimedOut(id)]);
}
