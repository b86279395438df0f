//! An independent model of the contract (docs/contract.md), written the
//! simplest way, and the few helpers that drive a reader to compare with it.
//! One file for both test suites: the integration tests include it through
//! `tests/common/mod.rs`, the fuzz targets (their own cargo workspace in
//! `fuzz/`) through `fuzz/fuzz_targets/common/mod.rs`, with `#[path]`.
//!
//! The model functions (`model_*`, `raw_lines`, `trim`, `check_against_lines`,
//! `expected_buffered_len`, `tokens`) use no library code: std, and serde_json
//! for JSON validity. Only the helpers under "Driving the reader" call the
//! library, through its public API, to get what is compared.

#![allow(dead_code)]

use std::num::NonZeroUsize;

use mcp_stdio::{LineReader, Message, RpcKind};

// ---------------------------------------------------------------------------
// Items and settings.

/// An item, owned, so that whole streams' items can be collected and compared.
///
/// Its equality is the contract's (docs/contract.md §Reader: chunking): kind,
/// rpc kind and data. A too-long item carries no length: the contract fixes
/// only its bounds (§Reader: too-long lines), which depend on the chunking,
/// so no model can say what it is. Where a length is checked, it comes
/// alongside, as a [`Reported`] item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Item {
    Json(Vec<u8>, Option<RpcKind>),
    ParseError(Vec<u8>),
    InvalidJsonRpc(Vec<u8>),
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

/// An item with the length the reader reported for it (`Message::len`, the C
/// `McpMessage.len`): the data's length, or for a too-long item how many of
/// the line's bytes had arrived (informational: §Reader: too-long lines).
pub type Reported = (Item, usize);

/// The items of `reported`, without their lengths: what the contract compares.
pub fn without_lens(reported: &[Reported]) -> Vec<Item> {
    reported.iter().map(|(item, _)| item.clone()).collect()
}

/// Reader settings.
#[derive(Debug, Clone, Copy, Default)]
pub struct Settings {
    /// The line limit; `None`: no limit. Never `Some(0)`.
    pub max_line_len: Option<usize>,
    pub skip_invalid: bool,
    pub jsonrpc: bool,
}

// ---------------------------------------------------------------------------
// Driving the reader (its public API), to get what is compared with the model.

/// A new reader with settings `s`.
pub fn reader(s: Settings) -> LineReader {
    let mut r = LineReader::new();
    r.set_max_line_len(
        s.max_line_len
            .map(|n| NonZeroUsize::new(n).expect("limit > 0")),
    );
    r.set_skip_invalid(s.skip_invalid);
    r.set_jsonrpc(s.jsonrpc);
    r
}

/// Every item `r` has now, each with its reported length.
pub fn drain_reported(r: &mut LineReader) -> Vec<Reported> {
    let mut items = Vec::new();
    while let Some(m) = r.next_message() {
        items.push((m.into(), m.len()));
    }
    items
}

/// Every item `r` has now.
pub fn drain(r: &mut LineReader) -> Vec<Item> {
    without_lens(&drain_reported(r))
}

/// Feeds the whole stream at once, takes the items, finishes, takes the
/// rest: every item, with its reported length.
pub fn read_whole_reported(s: Settings, stream: &[u8]) -> Vec<Reported> {
    let mut r = reader(s);
    r.feed(stream).unwrap();
    let mut items = drain_reported(&mut r);
    r.finish().unwrap();
    items.extend(drain_reported(&mut r));
    items
}

/// [`read_whole_reported`], without the lengths.
pub fn read_whole(s: Settings, stream: &[u8]) -> Vec<Item> {
    without_lens(&read_whole_reported(s, stream))
}

// ---------------------------------------------------------------------------
// The model: no library code from here on.

pub const BOM: &[u8] = b"\xEF\xBB\xBF";

/// JSON whitespace: space, tab, CR, LF (nothing else: not FF, VT, NBSP, NUL,
/// U+2028). docs/contract.md §Terms.
pub fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\n')
}

/// `line` without JSON whitespace at either end (§Reader: trimming).
pub fn trim(line: &[u8]) -> &[u8] {
    let start = line.iter().position(|&b| !is_ws(b)).unwrap_or(line.len());
    let end = line
        .iter()
        .rposition(|&b| !is_ws(b))
        .map_or(start, |i| i + 1);
    &line[start..end]
}

/// The raw lines of a stream, as the contract frames them (§Reader: lines,
/// §Reader: BOM): a BOM as the stream's first three bytes is not part of it,
/// lines end at `\n` only (the last one may end at the end of the stream).
/// Each line is given without its `\n`, untrimmed (its length is what the
/// line limit counts).
pub fn raw_lines(stream: &[u8]) -> impl Iterator<Item = &[u8]> {
    let stream = stream.strip_prefix(BOM).unwrap_or(stream);
    stream.split(|&b| b == b'\n')
}

/// Is `text` exactly one JSON text (RFC 8259) in valid UTF-8 (§JSON)?
///
/// std's UTF-8 check, then serde_json skipping one value with
/// `serde::de::IgnoredAny` and checking nothing but whitespace follows
/// (`from_slice` does). Why `IgnoredAny` and not `serde_json::Value`: the
/// contract accepts lone surrogate escapes (`"\ud800"`) and numbers of any
/// size (`1e999`, `-1e-999`, 40-digit integers), which `Value` rejects (it
/// decodes strings to Rust `String`s and, without `arbitrary_precision`,
/// numbers to f64). serde_json's ignore path validates the syntax exactly
/// (escapes, `\u` hex digits, raw control characters, number grammar,
/// structure) without decoding anything, and it is iterative (a byte stack,
/// no recursion limit), so nesting depth is unlimited as in the contract.
/// It does not check UTF-8 on the ignore path, hence `from_utf8` first.
pub fn model_is_json(text: &[u8]) -> bool {
    std::str::from_utf8(text).is_ok()
        && serde_json::from_slice::<serde::de::IgnoredAny>(text).is_ok()
}

/// The reader's contract with no limit and no JSON-RPC, the simplest way:
/// strip a leading BOM, split on `\n`, trim JSON whitespace, skip empty
/// lines; a line is a message iff [`model_is_json`] (§Reader: messages).
pub fn model_read(stream: &[u8], skip_invalid: bool) -> Vec<Item> {
    let mut items = Vec::new();
    for line in raw_lines(stream) {
        let line = trim(line);
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

/// Checks `items`, read from `stream` with settings `s` (any chunking), line
/// by line against the contract: a line longer than the limit (raw bytes
/// before `\n`) gives exactly one `TooLong` with `limit < len <= line length`,
/// whatever the flags (§Reader: line limit, §Reader: too-long lines); other
/// lines are trimmed, empty ones skipped; a valid one gives `Json` with its
/// trimmed bytes (an rpc kind exactly when classification is on) or, with
/// classification, `InvalidJsonRpc` (dropped with the skip flag); an invalid
/// one gives `ParseError` (dropped with the skip flag). Which valid lines are
/// JSON-RPC is taken from the reader (the JSON-RPC model is the
/// `jsonrpc_model` fuzz target's).
pub fn check_against_lines(s: Settings, stream: &[u8], items: &[Reported]) {
    let mut it = items.iter().peekable();
    for (n, raw) in raw_lines(stream).enumerate() {
        if let Some(limit) = s.max_line_len {
            if raw.len() > limit {
                match it.next() {
                    Some(&(Item::TooLong, len)) => assert!(
                        len > limit && len <= raw.len(),
                        "line {n}: TooLong len {len} not in ({limit}, {}]",
                        raw.len()
                    ),
                    other => panic!(
                        "line {n} ({} bytes > limit {limit}): expected TooLong, got {other:?}",
                        raw.len()
                    ),
                }
                continue;
            }
        }
        let line = trim(raw);
        if line.is_empty() {
            continue;
        }
        if model_is_json(line) {
            match it.peek() {
                Some((Item::Json(data, rpc), _)) if data == line => {
                    assert_eq!(rpc.is_some(), s.jsonrpc, "line {n}: rpc kind {rpc:?}");
                    it.next();
                }
                Some((Item::InvalidJsonRpc(data), _))
                    if data == line && s.jsonrpc && !s.skip_invalid =>
                {
                    it.next();
                }
                // Valid JSON that is no JSON-RPC message, dropped by the skip flag.
                _ if s.jsonrpc && s.skip_invalid => {}
                other => panic!(
                    "line {n} {:?} is JSON: got {other:?}",
                    String::from_utf8_lossy(line)
                ),
            }
        } else if !s.skip_invalid {
            match it.next() {
                Some((Item::ParseError(data), _)) if data == line => {}
                other => panic!(
                    "line {n} {:?} is not JSON: expected ParseError, got {other:?}",
                    String::from_utf8_lossy(line)
                ),
            }
        }
    }
    assert_eq!(it.next(), None, "items left over");
}

/// What `buffered_len` must be after feeding `stream[..fed]` and taking
/// every item (`line_start`: the offset just past the last `\n` in
/// `stream[..fed]`, 0 if none), by §Reader: buffered_len: the bytes of the
/// unterminated last line (a stream-opening BOM not counted), or 0 when that
/// line is over the limit (its bytes are being dropped). The stream's first
/// one or two bytes, while they may still be the start of a BOM, are held
/// back and not yet a line: they count, whatever the limit.
pub fn expected_buffered_len(s: Settings, stream: &[u8], fed: usize, line_start: usize) -> usize {
    if fed < BOM.len() && BOM.starts_with(&stream[..fed]) {
        return fed;
    }
    let start = if line_start == 0 && stream.starts_with(BOM) {
        BOM.len()
    } else {
        line_start
    };
    let tail = fed - start;
    match s.max_line_len {
        Some(limit) if tail > limit => 0,
        _ => tail,
    }
}

/// A JSON token, for comparing two JSON texts' values: strings as UTF-16 code
/// units after unescaping (so `"é"`, `"\u00e9"`, `"\u00E9"` are equal and a
/// lone surrogate escape is a unit of its own), numbers and literals by
/// their text, punctuation as itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Token {
    Punct(u8),
    Text(Vec<u8>),
    Str(Vec<u16>),
}

/// The tokens of `json`, which [`model_is_json`] accepted.
pub fn tokens(json: &[u8]) -> Vec<Token> {
    let s = std::str::from_utf8(json).expect("valid UTF-8");
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            c if is_ws(c) => i += 1,
            c @ (b'{' | b'}' | b'[' | b']' | b':' | b',') => {
                out.push(Token::Punct(c));
                i += 1;
            }
            b'"' => {
                let mut units = Vec::new();
                i += 1;
                loop {
                    match b[i] {
                        b'"' => break,
                        b'\\' => {
                            let unit = match b[i + 1] {
                                b'"' => 0x22,
                                b'\\' => 0x5C,
                                b'/' => 0x2F,
                                b'b' => 0x08,
                                b'f' => 0x0C,
                                b'n' => 0x0A,
                                b'r' => 0x0D,
                                b't' => 0x09,
                                b'u' => {
                                    let hex = &s[i + 2..i + 6];
                                    i += 4;
                                    u16::from_str_radix(hex, 16).expect("hex escape")
                                }
                                e => panic!("bad escape {e}"),
                            };
                            units.push(unit);
                            i += 2;
                        }
                        _ => {
                            let c = s[i..].chars().next().unwrap();
                            let mut buf = [0u16; 2];
                            units.extend_from_slice(c.encode_utf16(&mut buf));
                            i += c.len_utf8();
                        }
                    }
                }
                out.push(Token::Str(units));
                i += 1;
            }
            _ => {
                let end = b[i..]
                    .iter()
                    .position(|&c| is_ws(c) || b"{}[]:,\"".contains(&c))
                    .map_or(b.len(), |k| i + k);
                out.push(Token::Text(b[i..end].to_vec()));
                i = end;
            }
        }
    }
    out
}

/// What the encoder must output for `json`, which [`model_is_json`]
/// accepted (§Encoder: output, §Encoder: ASCII flag): the tokens byte for
/// byte, whitespace outside strings dropped; in strings, escapes kept as
/// written, raw U+2028 and U+2029 written `\u2028`/`\u2029`, and with `ascii`
/// every raw character above 0x7E (DEL included) written `\uxxxx` in
/// lowercase hex (a surrogate pair above U+FFFF); then one `\n`.
pub fn model_encode(json: &[u8], ascii: bool) -> Vec<u8> {
    let s = std::str::from_utf8(json).expect("valid UTF-8");
    let mut out = Vec::new();
    let mut in_string = false;
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if !in_string {
            if c == '"' {
                in_string = true;
            }
            if !(c.is_ascii() && is_ws(c as u8)) {
                out.push(c as u8);
            }
            continue;
        }
        match c {
            '"' => {
                in_string = false;
                out.push(b'"');
            }
            '\\' => {
                // The escaped character; `\uXXXX`'s hex digits follow as plain characters.
                out.push(b'\\');
                out.push(chars.next().unwrap() as u8);
            }
            c if (ascii && c as u32 > 0x7E) || c == '\u{2028}' || c == '\u{2029}' => {
                let mut buf = [0u16; 2];
                for unit in c.encode_utf16(&mut buf) {
                    out.extend_from_slice(format!("\\u{unit:04x}").as_bytes());
                }
            }
            c => out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes()),
        }
    }
    out.push(b'\n');
    out
}
