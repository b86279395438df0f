//! Invariants of `Transport` over generated runs: the peer's bytes (answers
//! to our requests and lookalikes, stray, late and duplicate answers,
//! requests, notifications, batches, junk, CRLF, BOMs, lines over a small
//! limit, characters split across pieces) interleaved with our own requests
//! (some with timeouts), cancels, sends, a moving clock, closing.
//!
//! Every run is also checked, operation by operation, against the
//! independent model in `tests/transport_model` (shared with the
//! `transport_model` fuzz target): results, events, queued bytes, deadlines.
//!
//! - Chunking never matters (docs/contract.md §Transport: order of events,
//!   §Reader: chunking): the peer's bytes received in any pieces, events
//!   drained after each piece, give the same events and the same output
//!   bytes as each stretch received whole.
//! - Every request ends once: a `Response`, `RequestTimedOut` or
//!   `RequestFailed`, or an accepted `cancel`; `Closed` comes once, last
//!   (§Transport: matching, §Transport: deadlines, §Transport: order of
//!   events).

mod transport_model;

use std::time::Duration;

use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::Index;
use transport_model::{
    check_outcomes, peer_line, run, Ev, Op, ID_TOKENS, METHODS, PARAMS, PEER_LINES, RESULTS, SENDS,
    TEXTS,
};

/// Few cases under Miri, which interprets every step (scripts/miri.sh does
/// not run this file today).
fn cases(n: u32) -> u32 {
    if cfg!(miri) {
        4
    } else {
        n
    }
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// The id in a peer line: mostly the first ids we use, sometimes others
/// (0 never is one), the largest `i64` and one past it.
fn id_text() -> impl Strategy<Value = String> {
    prop_oneof![
        12 => (1i64..5).prop_map(|i| i.to_string()),
        4 => (0i64..10).prop_map(|i| i.to_string()),
        1 => Just(i64::MAX.to_string()),
        1 => Just("9223372036854775808".to_owned()),
    ]
}

/// A piece of the peer's stream.
fn piece() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        12 => (0..PEER_LINES, id_text()).prop_map(|(kind, id)| peer_line(kind, &id)),
        // Answers (result, error, members reordered, null result) to our first ids.
        6 => (prop::sample::select(&[0usize, 1, 2, 25][..]), 1i64..6)
            .prop_map(|(kind, id)| peer_line(kind, &id.to_string())),
        // A character split across pieces, and its orphaned halves.
        1 => Just(b"\"\xC3".to_vec()),
        1 => Just(b"\xA9\"\n".to_vec()),
        1 => Just(b"\xF0\x9F".to_vec()),
        1 => vec(any::<u8>(), 0..6),
        1 => "[a-z0-9{}\\[\\]:,\" \r\n]{0,10}".prop_map(String::into_bytes),
    ]
}

fn stretch() -> impl Strategy<Value = Vec<u8>> {
    vec(piece(), 0..5).prop_map(|pieces| pieces.concat())
}

fn timeout() -> impl Strategy<Value = Option<Duration>> {
    prop_oneof![
        3 => Just(None),
        6 => (0u64..40).prop_map(|n| Some(ms(n))),
        1 => Just(Some(Duration::MAX)),
    ]
}

/// Params: mostly accepted ones (the first four of the table).
fn params() -> impl Strategy<Value = usize> {
    prop_oneof![4 => 0..4usize, 1 => 0..PARAMS.len()]
}

/// An operation of ours (not receiving, not taking events).
fn our_op() -> impl Strategy<Value = Op> {
    prop_oneof![
        16 => (0..METHODS.len(), params(), timeout())
            .prop_map(|(method, params, timeout)| Op::Request { method, params, timeout }),
        6 => (0u64..30).prop_map(|n| Op::Advance(ms(n))),
        4 => (prop_oneof![3 => 1i64..5, 1 => -1i64..10], proptest::option::of(0..TEXTS.len()))
            .prop_map(|(id, reason)| Op::Cancel { id, reason }),
        2 => (0..METHODS.len(), params())
            .prop_map(|(method, params)| Op::Notify { method, params }),
        2 => (0..ID_TOKENS.len(), 0..RESULTS.len()).prop_map(|(id, result)| Op::Respond { id, result }),
        2 => (proptest::option::of(0..ID_TOKENS.len()), any::<i64>(), 0..TEXTS.len())
            .prop_map(|(id, code, message)| Op::RespondError { id, code, message }),
        2 => (0..SENDS.len()).prop_map(Op::Send),
        6 => (0usize..200).prop_map(Op::Consume),
        2 => (0usize..300).prop_map(Op::SetMaxQueued),
        1 => Just(Op::TakeOutput),
        // Rare: each ends the exchange.
        1 => (0u64..50).prop_map(|n| Op::Close(ms(n))),
        1 => Just(Op::WriteFailed),
        1 => Just(Op::ReceiveEnd),
    ]
}

fn limit() -> impl Strategy<Value = Option<usize>> {
    prop_oneof![
        2 => Just(None),
        1 => (1usize..40).prop_map(Some),
        2 => (40usize..120).prop_map(Some),
    ]
}

/// One step of a run: our operations, then a stretch of the peer's stream,
/// and where to cut it.
type Step = (Vec<Op>, Vec<u8>, Vec<Index>);

fn steps() -> impl Strategy<Value = Vec<Step>> {
    vec(
        (vec(our_op(), 0..5), stretch(), vec(any::<Index>(), 0..6)),
        0..12,
    )
}

#[derive(Clone, Copy)]
enum Cut {
    Whole,
    AtIndices,
    EveryByte,
}

/// The program of a run: each step's operations, then events drained at
/// the step's time (so that what is due then comes before the stretch's
/// lines, however it is cut), then the stretch received in pieces, events
/// drained after each; at the end, the peer's end and everything after.
fn program(steps: &[Step], cut: Cut) -> Vec<Op> {
    let mut ops = Vec::new();
    for (ours, stretch, cuts) in steps {
        ops.extend(ours.iter().cloned());
        ops.push(Op::Drain);
        let mut at: Vec<usize> = match cut {
            Cut::Whole => Vec::new(),
            Cut::AtIndices => cuts.iter().map(|i| i.index(stretch.len() + 1)).collect(),
            Cut::EveryByte => (1..stretch.len()).collect(),
        };
        at.sort_unstable();
        let mut from = 0;
        for to in at.into_iter().chain([stretch.len()]) {
            ops.push(Op::Receive(stretch[from..to].to_vec()));
            ops.push(Op::Drain);
            from = to;
        }
    }
    ops.extend([Op::Drain, Op::ReceiveEnd, Op::Drain]);
    ops
}

/// Any operation, receiving and taking events included.
fn any_op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => piece().prop_map(Op::Receive),
        6 => our_op(),
        3 => Just(Op::NextEvent),
        2 => Just(Op::Drain),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(256)))]

    #[test]
    fn any_chunking_gives_the_same_events_and_output(limit in limit(), steps in steps()) {
        let whole = run(limit, &program(&steps, Cut::Whole));
        prop_assert_eq!(whole.events.last(), Some(&Ev::Closed));
        check_outcomes(&whole);
        let cut = run(limit, &program(&steps, Cut::AtIndices));
        prop_assert_eq!(&cut, &whole);
        let bytes = run(limit, &program(&steps, Cut::EveryByte));
        prop_assert_eq!(&bytes, &whole);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(512)))]

    #[test]
    fn every_request_ends_once_and_closed_comes_last(
        limit in limit(),
        ops in vec(any_op(), 0..60),
        advance in 0u64..100,
    ) {
        let mut ops = ops;
        // Unfinished, then finished: the peer's end closes the transport.
        let before = run(limit, &ops);
        check_outcomes(&before);
        ops.extend([Op::Advance(ms(advance)), Op::ReceiveEnd, Op::Drain, Op::NextEvent]);
        let after = run(limit, &ops);
        check_outcomes(&after);
        prop_assert_eq!(after.events.last(), Some(&Ev::Closed));
        prop_assert_eq!(&after.events[..before.events.len()], &before.events[..]);
    }
}
