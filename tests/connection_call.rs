//! `Connection::call`: a request and its answer awaited, the peer's
//! requests answered meanwhile (by default with -32601, so that a server
//! waiting for its answer cannot deadlock the call), every other event kept
//! in order for the next `next_event` calls, and the failures with their
//! reason.
#![cfg(all(unix, os_io))]

#[path = "connection_common/mod.rs"]
mod common;

use std::time::{Duration, Instant};

use common::*;
use mcp_stdio::{envelope, json_string_eq, Error, RequestOptions};

/// Reads our call, asks us `roots/list` and waits for the answer (which it
/// echoes to stderr), notifies, then answers the call.
const ASKS_BACK: &str = "read call
    echo '{\"jsonrpc\":\"2.0\",\"id\":\"s1\",\"method\":\"roots/list\"}'
    read answer
    echo \"$answer\" >&2
    echo '{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"hi\"}}'
    echo '{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[]}}'
    exec cat >/dev/null";

/// The two events the server sends besides its answer (kept by the call,
/// or still coming), its stderr line and its notification.
fn meanwhile(conn: &mut mcp_stdio::Connection) -> Vec<Ev> {
    let mut events = Vec::new();
    while events.len() < 2 {
        match next(conn, Some(Duration::from_secs(10))) {
            Some(e) => events.push(e),
            None => panic!("only {events:?}"),
        }
    }
    events
}

fn options() -> RequestOptions {
    RequestOptions::timeout(Some(Duration::from_secs(20)))
}

#[test]
fn a_server_that_asks_back_gets_an_answer_and_nothing_is_lost() {
    let mut conn = spawn(&sh(ASKS_BACK));
    let line = conn
        .call("tools/call", Some(br#"{"name":"x"}"#), options())
        .unwrap();
    assert_eq!(line, br#"{"jsonrpc":"2.0","id":1,"result":{"content":[]}}"#);
    // What came meanwhile: the server's stderr (our answer to its request,
    // as it read it) and its notification (the two streams are read as
    // they come: their order between them is not the server's).
    let answer =
        r#"{"jsonrpc":"2.0","id":"s1","error":{"code":-32601,"message":"Method not found"}}"#;
    let events = meanwhile(&mut conn);
    assert!(
        events.contains(&Ev::Stderr(answer.as_bytes().to_vec())),
        "{events:?}"
    );
    assert_eq!(
        events
            .iter()
            .filter(|e| e.is_method("notifications/message"))
            .count(),
        1,
        "{events:?}"
    );
    conn.close(Duration::from_secs(1)).unwrap();
    let out = run_to_closed(&mut conn, Duration::from_secs(10));
    assert_eq!(out.non_stderr(), vec![&Ev::Closed]);
}

#[test]
fn the_handler_answers_the_peers_requests() {
    let mut conn = spawn(&sh(ASKS_BACK));
    let mut asked = Vec::new();
    let line = conn
        .call_with("tools/call", None, options(), |sender, request| {
            asked.push(String::from_utf8_lossy(request.method.unwrap()).into_owned());
            assert!(json_string_eq(request.method.unwrap(), "roots/list"));
            sender
                .respond(request.id.unwrap(), br#"{"roots":[]}"#)
                .unwrap();
        })
        .unwrap();
    assert_eq!(asked, ["\"roots/list\""]);
    assert!(envelope(&line).unwrap().result.is_some());
    let answer = br#"{"jsonrpc":"2.0","id":"s1","result":{"roots":[]}}"#;
    assert!(
        meanwhile(&mut conn).contains(&Ev::Stderr(answer.to_vec())),
        "the server read our answer"
    );
}

#[test]
fn a_server_that_dies_fails_the_call_with_why() {
    let started = Instant::now();
    let mut conn = spawn(&sh("echo 'Error: Cannot find module foo' >&2; exit 1"));
    match conn.call("tools/list", None, options()) {
        Err(e @ Error::ServerExited(_)) => assert_eq!(
            e.to_string(),
            "server exited with code 1 before its first message: Error: Cannot find module foo"
        ),
        other => panic!("{other:?}"),
    }
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    // The stderr line it took meanwhile is kept.
    assert_eq!(
        next(&mut conn, Some(Duration::ZERO)),
        Some(Ev::Stderr(b"Error: Cannot find module foo".to_vec()))
    );
}

#[test]
fn a_call_times_out_at_its_deadline() {
    let mut conn = spawn(&sh("exec sleep 100"));
    let started = Instant::now();
    let got = conn.call(
        "tools/list",
        None,
        RequestOptions::timeout(Some(Duration::from_millis(300))),
    );
    assert_eq!(got, Err(Error::TimedOut));
    let took = started.elapsed();
    assert!(
        took >= Duration::from_millis(290) && took < Duration::from_secs(3),
        "{took:?}"
    );
}

/// A flood while the call waits: past 16 MiB kept, the call gives up with
/// KeptEventsFull; what it kept is delivered, in order, and then the
/// answer, as a Response.
#[test]
fn a_flood_past_the_cap_ends_the_wait_and_loses_nothing() {
    let line = r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"debug","data":"x"}}"#;
    let count = mcp_stdio::KEPT_MAX / line.len() + 1000;
    let script = format!(
        "read call; yes '{line}' | head -n {count}; echo '{{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{{}}}}'; exec sleep 100"
    );
    let mut conn = spawn(&sh(&script));
    assert_eq!(
        conn.call("tools/list", None, options()),
        Err(Error::KeptEventsFull)
    );
    let mut notifications = 0;
    loop {
        match next(&mut conn, Some(Duration::from_secs(10))) {
            Some(Ev::Response { id: 1, .. }) => break,
            Some(e) if e.is_method("notifications/message") => notifications += 1,
            other => panic!("after {notifications} notifications: {other:?}"),
        }
    }
    assert_eq!(notifications, count, "every notification, then the answer");
}
