//! `subscriptions/listen` (MCP 2026-07-28): a long-lived request whose
//! stream of notifications carries `_meta["io.modelcontextprotocol/subscriptionId"]`
//! equal to the request's id, and which the server ends with a
//! `notifications/cancelled` for that id. The transport numbers the ids, so
//! it ties them to the request: the host need not parse them.

use super::frame;
use crate::envelope::{json_string_eq, Envelope};
use crate::json::object_members;

/// The method of a listen request.
pub(super) const LISTEN: &str = "subscriptions/listen";

/// Where the subscription's id is, in a notification's `params._meta`.
const SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";

/// What a notification is to an open subscription.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Tie {
    /// One of its stream (its `_meta` names the subscription).
    Stream(i64),
    /// The server's `notifications/cancelled` for the listen request: the
    /// end of the subscription.
    Ended(i64),
}

/// The listen request `envelope` (a notification) belongs to, as far as the
/// text says (the caller checks that the id is an open subscription).
pub(super) fn tie(envelope: &Envelope<'_>) -> Option<Tie> {
    let params = envelope.params?;
    if json_string_eq(envelope.method?, "notifications/cancelled") {
        let [request] = object_members(params, ["requestId"]).ok().flatten()?;
        return frame::our_id(request?).map(Tie::Ended);
    }
    let [meta] = object_members(params, ["_meta"]).ok().flatten()?;
    let [id] = object_members(meta?, [SUBSCRIPTION_ID]).ok().flatten()?;
    frame::our_id(id?).map(Tie::Stream)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tie_of(line: &'static [u8]) -> Option<Tie> {
        tie(&crate::envelope(line).unwrap())
    }

    #[test]
    fn stream_notifications_and_the_end_are_recognised() {
        assert_eq!(
            tie_of(br#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":4}}}"#),
            Some(Tie::Stream(4))
        );
        assert_eq!(
            tie_of(br#"{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":4}}}"#),
            Some(Tie::Stream(4))
        );
        assert_eq!(
            tie_of(br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":4,"reason":"shutting down"}}"#),
            Some(Tie::Ended(4))
        );
        for line in [
            &br#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#[..],
            br#"{"jsonrpc":"2.0","method":"notifications/x","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":"4"}}}"#,
            br#"{"jsonrpc":"2.0","method":"notifications/x","params":{"_meta":{"other":4}}}"#,
            br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"4"}}"#,
        ] {
            assert_eq!(tie_of(line), None, "{}", String::from_utf8_lossy(line));
        }
    }
}
