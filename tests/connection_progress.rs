//! Progress-aware deadlines with a real server: a tool call that reports
//! progress every second for 5 s, then answers. With its timeout reset by
//! progress, a 3 s deadline is outlived and the answer arrives; without the
//! reset it times out at 3 s; with a hard maximum of 4 s it stops there.
//! (The three run side by side: about 6 s in all.)
#![cfg(all(unix, os_io))]

#[path = "connection_common/mod.rs"]
mod common;

use std::time::{Duration, Instant};

use common::*;
use mcp_stdio::{Connection, Event, RequestOptions};

/// Reads the request (id 1: the first of the connection, so its progress
/// token is 1), reports progress 1..5 a second apart, then answers.
const BUILD_TOOL: &str = "read request
    i=1
    while [ $i -le 5 ]; do
        sleep 1
        echo \"{\\\"jsonrpc\\\":\\\"2.0\\\",\\\"method\\\":\\\"notifications/progress\\\",\\\"params\\\":{\\\"progressToken\\\":1,\\\"progress\\\":$i,\\\"total\\\":5}}\"
        i=$((i+1))
    done
    echo '{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[]}}'
    exec cat >/dev/null";

/// How the call ended, when (after it was sent), and the progress seen.
#[derive(Debug)]
struct Ended {
    answered: bool,
    at: Duration,
    progress: usize,
}

fn call(options: RequestOptions) -> Ended {
    let mut conn: Connection = spawn(&sh(BUILD_TOOL));
    let sent = Instant::now();
    let id = conn
        .request_with("tools/call", Some(br#"{"name":"build"}"#), options)
        .unwrap();
    assert_eq!(id, 1);
    let mut progress = 0;
    let ended = loop {
        assert!(sent.elapsed() < Duration::from_secs(20), "no end");
        match conn.next_event(Some(Duration::from_secs(1))).unwrap() {
            Some(Event::Progress {
                id: of, envelope, ..
            }) => {
                assert_eq!(of, id);
                assert!(envelope.params.is_some());
                progress += 1;
            }
            Some(Event::Response { id: of, .. }) if of == id => break true,
            Some(Event::RequestTimedOut { id: of }) if of == id => break false,
            Some(Event::Stderr { line }) => panic!("{}", String::from_utf8_lossy(line)),
            Some(other) => panic!("{:?}", own(other)),
            None => {}
        }
    };
    let at = sent.elapsed();
    conn.close(Duration::from_secs(1)).unwrap();
    run_to_closed(&mut conn, Duration::from_secs(10));
    Ended {
        answered: ended,
        at,
        progress,
    }
}

#[test]
fn progress_every_second_outlives_a_3_s_deadline_with_reset_on() {
    let options = RequestOptions::timeout(Some(Duration::from_secs(3)))
        .reset_on_progress()
        .max_timeout(Duration::from_secs(15));
    let ended = call(options);
    println!("reset on: {ended:?}");
    assert!(ended.answered, "{ended:?}");
    assert_eq!(ended.progress, 5, "{ended:?}");
    assert!(ended.at >= Duration::from_secs(5), "{ended:?}");
}

#[test]
fn without_the_reset_the_3_s_deadline_stands() {
    let ended = call(RequestOptions::timeout(Some(Duration::from_secs(3))).progress());
    println!("reset off: {ended:?}");
    assert!(!ended.answered, "{ended:?}");
    assert!(
        ended.at >= Duration::from_millis(2950) && ended.at < Duration::from_millis(4500),
        "{ended:?}"
    );
    assert!(ended.progress >= 1, "progress still delivered: {ended:?}");
}

#[test]
fn the_hard_maximum_stops_it() {
    let options = RequestOptions::timeout(Some(Duration::from_secs(3)))
        .reset_on_progress()
        .max_timeout(Duration::from_secs(4));
    let ended = call(options);
    println!("max 4 s: {ended:?}");
    assert!(!ended.answered, "{ended:?}");
    assert!(
        ended.at >= Duration::from_millis(3950) && ended.at < Duration::from_millis(5500),
        "{ended:?}"
    );
}
