//! Shared by the fuzz targets: the model of the contract (docs/contract.md),
//! in `tests/contract_model/mod.rs`, one file with the integration tests
//! (written the simplest way, with no code from the library), and what only
//! the fuzz targets need: decoding a chunked-reading input.

#![allow(dead_code)]

#[path = "../../../tests/contract_model/mod.rs"]
mod contract_model;

pub use contract_model::*;

/// A chunked-reading fuzz input, decoded. Layout:
/// `[limit] [flags] [split] [chunk lengths...] [stream...]`
/// - `limit`: bit 7 set: no line limit; else a limit of `(limit & 63) + 1` (1..=64).
/// - `flags`: bit 0 skip invalid lines, bit 1 JSON-RPC classification,
///   bits 2..=5: how many chunk-length bytes follow (0..=15).
/// - `split`: a byte for the target's own use (where to cut the stream).
/// - chunk lengths: the feeds' sizes, used in turn (cycling); 0 is an empty
///   feed. None (or all 0): one byte per feed.
pub struct ChunkedInput<'a> {
    pub settings: Settings,
    pub split: u8,
    pub lens: Vec<usize>,
    pub stream: &'a [u8],
}

/// Decodes `data` as a [`ChunkedInput`]; `None` when it is too short.
pub fn chunked_input(data: &[u8]) -> Option<ChunkedInput<'_>> {
    if data.len() < 3 {
        return None;
    }
    let settings = Settings {
        max_line_len: (data[0] & 0x80 == 0).then(|| usize::from(data[0] & 0x3F) + 1),
        skip_invalid: data[1] & 1 != 0,
        jsonrpc: data[1] & 2 != 0,
    };
    let n = usize::from((data[1] >> 2) & 0x0F);
    let header = (3 + n).min(data.len());
    let mut lens: Vec<usize> = data[3..header].iter().map(|&b| usize::from(b)).collect();
    if lens.iter().all(|&l| l == 0) {
        lens = vec![1];
    }
    Some(ChunkedInput {
        settings,
        split: data[2],
        lens,
        stream: &data[header..],
    })
}
