//! `Transport` against an independent model of its event rules
//! (`tests/transport_model/mod.rs`, shared with `tests/transport_properties.rs`):
//! the input is a program of operations on one transport, run on the
//! transport and on the model alike, every result, event (its envelope and
//! length too), queued byte, next deadline and `is_closed` compared after
//! each operation. The rules are docs/contract.md's §Transport (sending,
//! queue bound, matching, deadlines, order of events, closing) on top of
//! §Reader, with the Rust docs (`src/transport/mod.rs`,
//! `src/transport/event.rs`): lines in stream order, a response matched only by the exact
//! decimal integer of a pending id and only once, timeouts by deadline then
//! id (a `notifications/cancelled` queued for each, but for `initialize` or
//! once a write failed), then when closing has ended `RequestFailed` in
//! ascending ids and `Closed` last, then nothing; sends after closing refused
//! with `Closed`; the queue's bound (`WouldBlock` unless the queue is empty;
//! cancellations bypass it).
//!
//! The program ends with the peer's end and every event taken: `Closed` must
//! come, last and once, and every request must have ended exactly once (a
//! `Response`, `RequestTimedOut`, `RequestFailed` or an accepted `cancel`).
//!
//! Input: `[limit]` (below 0x80: a line limit of `limit + 1`, else none), then
//! operations, each an opcode byte (modulo 24) and its argument bytes (0 past
//! the end); see `decode`. `fuzz/seeds/make_seeds.py` writes seeds in it.

#![no_main]

#[path = "../../tests/transport_model/mod.rs"]
mod transport_model;

use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use transport_model::{check_outcomes, peer_line, run, Ev, Op};

/// Programs longer than this are cut (fast executions).
const MAX_OPS: usize = 400;

struct Input<'a>(&'a [u8]);

impl Input<'_> {
    fn byte(&mut self) -> u8 {
        match self.0.split_first() {
            Some((&b, rest)) => {
                self.0 = rest;
                b
            }
            None => 0,
        }
    }

    fn index(&mut self) -> usize {
        usize::from(self.byte())
    }

    /// `None` for an even byte, else the byte's upper bits.
    fn option(&mut self) -> Option<usize> {
        let b = self.byte();
        (b & 1 == 1).then_some(usize::from(b >> 1))
    }
}

fn ms(n: u8) -> Duration {
    Duration::from_millis(u64::from(n % 64))
}

/// The id in a peer line: mostly 0..=5 (our first ids, and 0, never one),
/// or up to 89 (enough to answer many requests out of deadline order, which
/// leaves stale entries in the deadline heap until it is compacted).
fn id_text(b: u8) -> String {
    match b {
        0..=159 => (b % 6).to_string(),
        160..=249 => (b - 160).to_string(),
        250 => i64::MAX.to_string(),
        251 => "9223372036854775808".to_owned(),
        252 => "-0".to_owned(),
        253 => "1.5".to_owned(),
        254 => "\"x\"".to_owned(),
        255 => "null".to_owned(),
    }
}

/// Decodes one operation (or two or three: a peer line split, events taken
/// between the halves).
fn decode(input: &mut Input<'_>, ops: &mut Vec<Op>) {
    let op = input.byte() % 24;
    match op {
        // A peer line, whole (cut 255) or cut in two.
        0..=3 => {
            let kind = input.index();
            let line = peer_line(kind, &id_text(input.byte()));
            match input.byte() {
                255 => ops.push(Op::Receive(line)),
                cut => {
                    let cut = usize::from(cut) % (line.len() + 1);
                    ops.push(Op::Receive(line[..cut].to_vec()));
                    ops.push(Op::Drain);
                    ops.push(Op::Receive(line[cut..].to_vec()));
                }
            }
        }
        // Raw bytes.
        4 => {
            let n = usize::from(input.byte() % 16).min(input.0.len());
            let (bytes, rest) = input.0.split_at(n);
            input.0 = rest;
            ops.push(Op::Receive(bytes.to_vec()));
        }
        5 => ops.push(Op::ReceiveEnd),
        6..=8 => {
            let method = input.index();
            let params = input.index();
            let timeout = match input.byte() {
                254 => Some(Duration::MAX),
                192.. => None,
                b => Some(ms(b)),
            };
            ops.push(Op::Request {
                method,
                params,
                timeout,
            });
        }
        9 => ops.push(Op::Notify {
            method: input.index(),
            params: input.index(),
        }),
        10 => ops.push(Op::Respond {
            id: input.index(),
            result: input.index(),
        }),
        11 => {
            let id = input.option();
            let code = match [input.byte(), input.byte()] {
                [255, 255] => i64::MIN,
                [255, 254] => i64::MAX,
                bytes => i64::from(i16::from_le_bytes(bytes)),
            };
            ops.push(Op::RespondError {
                id,
                code,
                message: input.index(),
            });
        }
        12 => ops.push(Op::Send(input.index())),
        13 => {
            let id = match input.byte() {
                250 => -1,
                251 => i64::MAX,
                252 => i64::MIN,
                b @ 0..=127 => i64::from(b % 8),
                b => i64::from(b - 128),
            };
            ops.push(Op::Cancel {
                id,
                reason: input.option(),
            });
        }
        14 => ops.push(Op::SetMaxQueued(match input.byte() {
            255 => 64 << 20,
            b => usize::from(b) * 2,
        })),
        15 => ops.push(Op::Consume(match input.byte() {
            255 => usize::MAX,
            b => usize::from(b) * 4,
        })),
        16 => ops.push(Op::TakeOutput),
        17 | 18 => ops.push(Op::Advance(ms(input.byte()))),
        19 => ops.push(Op::Close(match input.byte() {
            255 => Duration::MAX,
            b => ms(b),
        })),
        20 => ops.push(Op::WriteFailed),
        21 | 22 => ops.push(Op::NextEvent),
        _ => ops.push(Op::Drain),
    }
}

fuzz_target!(|data: &[u8]| {
    let mut input = Input(data);
    let limit = match input.byte() {
        b @ 0..=0x7F => Some(usize::from(b) + 1),
        _ => None,
    };
    let mut ops = Vec::new();
    while !input.0.is_empty() && ops.len() < MAX_OPS {
        decode(&mut input, &mut ops);
    }
    // The peer's end closes the transport: everything pending fails, Closed last.
    ops.extend([Op::ReceiveEnd, Op::Drain, Op::NextEvent]);
    let out = run(limit, &ops);
    check_outcomes(&out);
    assert_eq!(out.events.last(), Some(&Ev::Closed), "no Closed at the end");
});
