//! Shared by the integration tests: an owned copy of items, and an
//! independent model of the reader's contract to compare against.

#![allow(dead_code)]

use mcp_stdio::{LineReader, Message, RpcKind};

/// An item, owned, so that a whole stream's items can be collected and compared.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Item {
    Json(Vec<u8>, Option<RpcKind>),
    ParseError(Vec<u8>),
    InvalidJsonRpc(Vec<u8>),
    /// The length of a too-long item is informational (it depends on chunking).
    TooLong,
}

impl From<Message<'_>> for Item {
    fn from(m: Message<'_>) -> Self {
        match m {
            Message::Json { line, rpc } => Item::Json(line.to_vec(), rpc),
            Message::ParseError { line } => Item::ParseError(line.to_vec()),
            Message::InvalidJsonRpc { line } => Item::InvalidJsonRpc(line.to_vec()),
            Message::TooLong { .. } => Item::TooLong,
        }
    }
}

/// Reader settings for a test.
#[derive(Debug, Clone, Copy, Default)]
pub struct Settings {
    pub max_line_len: Option<usize>,
    pub skip_invalid: bool,
    pub jsonrpc: bool,
}

pub fn reader(s: Settings) -> LineReader {
    let mut r = LineReader::new();
    r.set_max_line_len(s.max_line_len.map(|n| n.try_into().unwrap()));
    r.set_skip_invalid(s.skip_invalid);
    r.set_jsonrpc(s.jsonrpc);
    r
}

/// Every item `r` has now.
pub fn drain(r: &mut LineReader) -> Vec<Item> {
    let mut items = Vec::new();
    while let Some(m) = r.next_message() {
        items.push(m.into());
    }
    items
}

/// Feeds `stream` cut at `cuts` (sorted offsets), taking items after every
/// feed, then finishes: all the items, in order.
pub fn read_chunked(s: Settings, stream: &[u8], cuts: &[usize]) -> Vec<Item> {
    let mut r = reader(s);
    let mut items = Vec::new();
    let mut from = 0;
    for &cut in cuts.iter().chain(std::iter::once(&stream.len())) {
        let cut = cut.clamp(from, stream.len());
        r.feed(&stream[from..cut]).unwrap();
        items.extend(drain(&mut r));
        from = cut;
    }
    r.finish().unwrap();
    items.extend(drain(&mut r));
    items
}

pub fn read_whole(s: Settings, stream: &[u8]) -> Vec<Item> {
    read_chunked(s, stream, &[])
}

/// Is `text` one JSON text in valid UTF-8? Independent of the library: std's
/// UTF-8 check plus serde_json's validating skip (`IgnoredAny` accepts any
/// number size and lone surrogate escapes, and is not recursive).
pub fn model_is_json(text: &[u8]) -> bool {
    std::str::from_utf8(text).is_ok()
        && serde_json::from_slice::<serde::de::IgnoredAny>(text).is_ok()
}

/// The contract's reader, written the simplest way (no limit, no JSON-RPC):
/// strip a leading BOM, split on `\n`, trim JSON whitespace, skip empty lines.
pub fn model_read(stream: &[u8], skip_invalid: bool) -> Vec<Item> {
    let stream = stream.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(stream);
    let ws = |b: &u8| matches!(b, b' ' | b'\t' | b'\r' | b'\n');
    let mut items = Vec::new();
    for line in stream.split(|&b| b == b'\n') {
        let start = line.iter().position(|b| !ws(b)).unwrap_or(line.len());
        let end = line.iter().rposition(|b| !ws(b)).map_or(start, |i| i + 1);
        let line = &line[start..end];
        if line.is_empty() {
            continue;
        }
        if model_is_json(line) {
            items.push(Item::Json(line.to_vec(), None));
        } else if !skip_invalid {
            items.push(Item::ParseError(line.to_vec()));
        }
    }
    items
}

/// SplitMix64: a small deterministic generator, so that test data and
/// chunkings are the same on every run.
pub struct Rng(pub u64);

impl Rng {
    /// A generator seeded from a name and a run number.
    pub fn named(name: &str, run: u64) -> Rng {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in name.bytes() {
            h = (h ^ b as u64).wrapping_mul(0x100_0000_01b3);
        }
        Rng(h ^ run.wrapping_mul(0x9e37_79b9_7f4a_7c15))
    }

    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (n > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// True with probability `per_mille`/1000.
    pub fn chance(&mut self, per_mille: usize) -> bool {
        self.below(1000) < per_mille
    }
}
