//! Reading a case through the Rust API: `LineReader::feed`, and
//! `LineReader::read_from` with a source handing out the same pieces.

use mcp_stdio::{LineReader, Message};

use crate::catalogue::Case;
use crate::chunkings::{chunks, take_now, Plan};
use crate::items::{Got, Kind};

fn got_from(m: Message<'_>) -> Got {
    match m {
        Message::Json { line, rpc } => Got {
            kind: Kind::Json(rpc),
            data: line.to_vec(),
            len: line.len(),
        },
        Message::ParseError { line } => Got {
            kind: Kind::ParseError,
            data: line.to_vec(),
            len: line.len(),
        },
        Message::InvalidJsonRpc { line } => Got {
            kind: Kind::InvalidJsonRpc,
            data: line.to_vec(),
            len: line.len(),
        },
        Message::TooLong { len } => Got {
            kind: Kind::TooLong,
            data: Vec::new(),
            len,
        },
    }
}

/// A `Read` source that hands out the planned pieces, one (or, past 64 KiB,
/// part of one) per call, for `LineReader::read_from`.
struct Pieces<'a> {
    pieces: Vec<&'a [u8]>,
    next: usize,
}

impl std::io::Read for Pieces<'_> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        while self.next < self.pieces.len() && self.pieces[self.next].is_empty() {
            self.next += 1;
        }
        let Some(piece) = self.pieces.get_mut(self.next) else {
            return Ok(0);
        };
        let n = piece.len().min(out.len());
        out[..n].copy_from_slice(&piece[..n]);
        *piece = &piece[n..];
        Ok(n)
    }
}

pub fn read_rust_feed(case: &Case, plan: &Plan) -> Result<Vec<Got>, String> {
    read_rust(case, plan, false)
}

pub fn read_rust_read_from(case: &Case, plan: &Plan) -> Result<Vec<Got>, String> {
    read_rust(case, plan, true)
}

fn read_rust(case: &Case, plan: &Plan, read_from: bool) -> Result<Vec<Got>, String> {
    let mut r = LineReader::new();
    r.set_max_line_len(
        std::num::NonZeroUsize::new(case.max_line_len).filter(|_| case.max_line_len != usize::MAX),
    );
    r.set_skip_invalid(case.skip_invalid);
    r.set_jsonrpc(case.jsonrpc);
    let mut items = Vec::new();
    if read_from {
        let mut source = Pieces {
            pieces: chunks(&case.input, &plan.cuts).collect(),
            next: 0,
        };
        for i in 0.. {
            let n = r
                .read_from(&mut source)
                .map_err(|e| format!("read_from: {e}"))?;
            if n == 0 {
                break;
            }
            if take_now(plan, i) {
                while let Some(m) = r.next_message() {
                    items.push(got_from(m));
                }
            }
        }
    } else {
        for (i, piece) in chunks(&case.input, &plan.cuts).enumerate() {
            r.feed(piece).map_err(|e| format!("feed: {e}"))?;
            if take_now(plan, i) {
                while let Some(m) = r.next_message() {
                    items.push(got_from(m));
                }
            }
        }
    }
    while let Some(m) = r.next_message() {
        items.push(got_from(m));
    }
    if case.finish {
        r.finish().map_err(|e| format!("finish: {e}"))?;
        while let Some(m) = r.next_message() {
            items.push(got_from(m));
        }
        if r.buffered_len() != 0 {
            return Err(format!(
                "buffered_len {} after finish and every item taken",
                r.buffered_len()
            ));
        }
    }
    Ok(items)
}
