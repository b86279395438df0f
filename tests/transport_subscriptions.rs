//! Subscriptions (MCP 2026-07-28) in the transport's core: a
//! `subscriptions/listen` request's stream (notifications whose
//! `_meta["io.modelcontextprotocol/subscriptionId"]` is its id) comes tied
//! to it, the server's `notifications/cancelled` for it ends it, the host's
//! cancel works as for any request, and nothing else changes.

use std::time::Instant;

use mcp_stdio::{json_string_eq, Event, Transport};

#[derive(Debug, PartialEq, Eq)]
enum Ev {
    Subscription(i64, String),
    Ended(i64),
    Message(String),
    Response(i64),
    Other,
}

fn events(t: &mut Transport) -> Vec<Ev> {
    let method = |m: Option<&[u8]>| String::from_utf8_lossy(m.unwrap_or_default()).into_owned();
    let mut out = Vec::new();
    while let Some(e) = t.next_event(Instant::now()) {
        out.push(match e {
            Event::Subscription { id, envelope, .. } => {
                Ev::Subscription(id, method(envelope.method))
            }
            Event::SubscriptionEnded { id, envelope, .. } => {
                assert!(json_string_eq(
                    envelope.method.unwrap(),
                    "notifications/cancelled"
                ));
                Ev::Ended(id)
            }
            Event::Message { envelope, .. } => Ev::Message(method(envelope.method)),
            Event::Response { id, .. } => Ev::Response(id),
            _ => Ev::Other,
        });
    }
    out
}

fn notification(method: &str, subscription: &str) -> String {
    format!(
        "{{\"jsonrpc\":\"2.0\",\"method\":\"{method}\",\"params\":{{\"_meta\":\
         {{\"io.modelcontextprotocol/subscriptionId\":{subscription}}}}}}}\n"
    )
}

#[test]
fn a_listen_requests_stream_is_tied_to_it_and_its_end_ends_it() {
    let now = Instant::now();
    let mut t = Transport::new();
    let other = t.request("tools/list", None, None, now).unwrap();
    let listen = t
        .request(
            "subscriptions/listen",
            Some(br#"{"notifications":["notifications/tools/list_changed"]}"#),
            None,
            now,
        )
        .unwrap();
    t.receive(
        notification(
            "notifications/subscriptions/acknowledged",
            &listen.to_string(),
        )
        .as_bytes(),
    )
    .unwrap();
    t.receive(notification("notifications/tools/list_changed", &listen.to_string()).as_bytes())
        .unwrap();
    // Not ours: another id, and a request that is no subscription.
    t.receive(notification("notifications/tools/list_changed", "99").as_bytes())
        .unwrap();
    t.receive(notification("notifications/tools/list_changed", &other.to_string()).as_bytes())
        .unwrap();
    t.receive(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\"}}\n")
        .unwrap();
    assert_eq!(
        events(&mut t),
        vec![
            Ev::Subscription(
                listen,
                "\"notifications/subscriptions/acknowledged\"".into()
            ),
            Ev::Subscription(listen, "\"notifications/tools/list_changed\"".into()),
            Ev::Message("\"notifications/tools/list_changed\"".into()),
            Ev::Message("\"notifications/tools/list_changed\"".into()),
            Ev::Message("\"notifications/message\"".into()),
        ]
    );
    // The server ends it; after that its stream is a plain message.
    let cancelled = format!(
        "{{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":\
         {{\"requestId\":{listen},\"reason\":\"server shutting down\"}}}}\n"
    );
    t.receive(cancelled.as_bytes()).unwrap();
    t.receive(notification("notifications/tools/list_changed", &listen.to_string()).as_bytes())
        .unwrap();
    t.receive(cancelled.as_bytes()).unwrap();
    assert_eq!(
        events(&mut t),
        vec![
            Ev::Ended(listen),
            Ev::Message("\"notifications/tools/list_changed\"".into()),
            Ev::Message("\"notifications/cancelled\"".into()),
        ]
    );
    // The other request is still pending and answered as usual.
    t.receive(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n")
        .unwrap();
    assert_eq!(events(&mut t), vec![Ev::Response(other)]);
}

/// The host cancels a subscription as any request: notifications/cancelled
/// goes out, and what the stream still sends is a plain message.
#[test]
fn the_host_cancels_a_subscription_as_any_request() {
    let now = Instant::now();
    let mut t = Transport::new();
    let listen = t
        .request("subscriptions/listen", Some(b"{}"), None, now)
        .unwrap();
    t.cancel(listen, Some("no longer needed")).unwrap();
    let mut out = Vec::new();
    t.take_output(&mut out).unwrap();
    assert!(String::from_utf8(out).unwrap().ends_with(
        "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":\
         {\"requestId\":1,\"reason\":\"no longer needed\"}}\n"
    ));
    t.receive(notification("notifications/tools/list_changed", "1").as_bytes())
        .unwrap();
    assert_eq!(
        events(&mut t),
        vec![Ev::Message("\"notifications/tools/list_changed\"".into())]
    );
}
