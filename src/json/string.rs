//! JSON strings: validating one (escapes, control characters, strict UTF-8),
//! skipping one already validated, and decoding a short one for comparison.

use memchr::memchr2;

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// Per byte of `w` (little-endian order), the high bit is set for a byte that
/// a string scanner must look at: `"`, `\`, a control character (< 0x20) or a
/// non-ASCII byte. Borrows only run upwards from a flagged byte, so the lowest
/// flag is always exact (later flags may be spurious and are never used).
#[inline]
fn special_bytes(w: u64) -> u64 {
    let quote = w ^ (ONES * u64::from(b'"'));
    let backslash = w ^ (ONES * u64::from(b'\\'));
    let is_quote = quote.wrapping_sub(ONES) & !quote;
    let is_backslash = backslash.wrapping_sub(ONES) & !backslash;
    let is_control = w.wrapping_sub(ONES * 0x20) & !w;
    (is_quote | is_backslash | is_control | w) & HIGHS
}

/// The index of the first byte at or after `i` that needs a look (see
/// [`special_bytes`]), or `s.len()`. Short strings are done eight bytes per
/// step; past the first 16 bytes the search switches to bulk scanning.
#[inline]
pub(crate) fn next_special(s: &[u8], mut i: usize) -> usize {
    for _ in 0..2 {
        let Some(chunk) = s.get(i..i + 8) else {
            return next_special_bytewise(s, i);
        };
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let mask = special_bytes(u64::from_le_bytes(word));
        if mask != 0 {
            return i + (mask.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    next_special_bulk(s, i)
}

/// Long runs: find the next quote or backslash with SIMD (memchr), then check
/// the run before it for control and non-ASCII bytes in blocks the compiler
/// vectorises. Each byte is read twice at SIMD speed instead of once at
/// eight bytes a step.
#[inline(never)]
fn next_special_bulk(s: &[u8], i: usize) -> usize {
    let end = memchr2(b'"', b'\\', &s[i..]).map_or(s.len(), |k| i + k);
    match first_control_or_non_ascii(&s[i..end]) {
        Some(k) => i + k,
        None => end,
    }
}

fn next_special_bytewise(s: &[u8], mut i: usize) -> usize {
    while let Some(&b) = s.get(i) {
        if b == b'"' || b == b'\\' || needs_look(b) {
            return i;
        }
        i += 1;
    }
    i
}

/// A control character (< 0x20) or a non-ASCII byte: one compare after a
/// wrapping subtraction, which vectorises well.
#[inline(always)]
fn needs_look(b: u8) -> bool {
    b.wrapping_sub(0x20) >= 0x60
}

/// The offset of the first control or non-ASCII byte of `run`, if any.
fn first_control_or_non_ascii(run: &[u8]) -> Option<usize> {
    const BLOCK: usize = 32;
    let mut blocks = run.chunks_exact(BLOCK);
    let mut offset = 0;
    for block in &mut blocks {
        // No early exit inside the block, so that this becomes SIMD compares.
        let any = block.iter().fold(0u8, |acc, &b| acc | u8::from(needs_look(b)));
        if any != 0 {
            return block.iter().position(|&b| needs_look(b)).map(|k| offset + k);
        }
        offset += BLOCK;
    }
    blocks
        .remainder()
        .iter()
        .position(|&b| needs_look(b))
        .map(|k| offset + k)
}

/// Validates the string that opens at `s[i] == b'"'`; returns the index just
/// past its closing quote, or `None` if it is not a valid JSON string.
#[inline]
pub(crate) fn scan_string(s: &[u8], i: usize) -> Option<usize> {
    let mut i = i + 1;
    loop {
        i = next_special(s, i);
        match *s.get(i)? {
            b'"' => return Some(i + 1),
            b'\\' => i = escape_end(s, i)?,
            0x80..=0xFF => i = non_ascii_run_end(s, i)?,
            _ => return None, // a raw control character
        }
    }
}

/// `s[i]` is a non-ASCII byte inside a string: validates everything up to
/// the next quote or backslash at once (strict UTF-8 by the standard
/// library, no control characters) and returns where that run ends.
/// Neither byte can occur inside a multi-byte UTF-8 sequence, so the run
/// never cuts a character in two.
#[inline(never)]
fn non_ascii_run_end(s: &[u8], i: usize) -> Option<usize> {
    let end = memchr2(b'"', b'\\', &s[i..]).map_or(s.len(), |k| i + k);
    let run = &s[i..end];
    let ok = std::str::from_utf8(run).is_ok() && !run.iter().any(|&b| b < 0x20);
    ok.then_some(end)
}

/// `s[i]` is a backslash: the index past its escape sequence, if valid.
#[inline]
fn escape_end(s: &[u8], i: usize) -> Option<usize> {
    match *s.get(i + 1)? {
        b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => Some(i + 2),
        b'u' => {
            let hex = s.get(i + 2..i + 6)?;
            // Any code unit is accepted, lone surrogates included (as Python and JS do).
            hex.iter().all(u8::is_ascii_hexdigit).then_some(i + 6)
        }
        _ => None,
    }
}

/// `s[i]` is a non-ASCII byte: the index past its UTF-8 sequence, if it is a
/// well-formed one (no overlongs, no encoded surrogates, nothing above U+10FFFF).
#[inline]
pub(crate) fn utf8_char_end(s: &[u8], i: usize) -> Option<usize> {
    let (len, lo, hi) = match s[i] {
        0xC2..=0xDF => (2, 0x80, 0xBF),
        0xE0 => (3, 0xA0, 0xBF),
        0xE1..=0xEC | 0xEE..=0xEF => (3, 0x80, 0xBF),
        0xED => (3, 0x80, 0x9F),
        0xF0 => (4, 0x90, 0xBF),
        0xF1..=0xF3 => (4, 0x80, 0xBF),
        0xF4 => (4, 0x80, 0x8F),
        _ => return None,
    };
    let second = *s.get(i + 1)?;
    if !(lo..=hi).contains(&second) {
        return None;
    }
    for k in 2..len {
        if *s.get(i + k)? & 0xC0 != 0x80 {
            return None;
        }
    }
    Some(i + len)
}

/// Skips the already validated string opening at `s[i] == b'"'`: the index
/// past its closing quote.
#[inline]
pub(crate) fn skip_string(s: &[u8], i: usize) -> usize {
    let mut j = i + 1;
    while let Some(k) = memchr2(b'"', b'\\', &s[j.min(s.len())..]) {
        j += k;
        if s[j] == b'"' {
            return j + 1;
        }
        j += 2; // the backslash and the character it escapes
    }
    s.len()
}

/// A decoded string of at most 8 ASCII bytes (enough for every JSON-RPC member name).
#[derive(Clone, Copy)]
pub(crate) struct Short {
    bytes: [u8; 8],
    len: usize,
}

impl Short {
    pub(crate) fn as_bytes(&self) -> &[u8] {
        &self.bytes[..self.len]
    }
}

/// Decodes the already validated string opening at `s[i] == b'"'` when its
/// value is at most 8 ASCII characters (escapes resolved, so `"json\u0072pc"`
/// is `jsonrpc`). Returns that value, or `None` for any other string, and the
/// index past the closing quote.
pub(crate) fn unescape_short(s: &[u8], i: usize) -> (Option<Short>, usize) {
    let mut out = Short {
        bytes: [0; 8],
        len: 0,
    };
    let mut j = i + 1;
    loop {
        let (byte, next) = match s.get(j) {
            None => return (None, s.len()),
            Some(b'"') => return (Some(out), j + 1),
            Some(b'\\') => match s.get(j + 1) {
                Some(b'u') => (
                    s.get(j + 2..j + 6).and_then(hex4).filter(|&c| c < 0x80),
                    j + 6,
                ),
                Some(&e) => (simple_escape(e), j + 2),
                None => (None, j + 1),
            },
            Some(&b) if b < 0x80 => (Some(u32::from(b)), j + 1),
            Some(_) => (None, j + 1),
        };
        match byte {
            Some(c) if out.len < out.bytes.len() => {
                out.bytes[out.len] = c as u8;
                out.len += 1;
                j = next;
            }
            _ => return (None, skip_string(s, i)),
        }
    }
}

fn simple_escape(e: u8) -> Option<u32> {
    let c = match e {
        b'"' => b'"',
        b'\\' => b'\\',
        b'/' => b'/',
        b'b' => 0x08,
        b'f' => 0x0C,
        b'n' => b'\n',
        b'r' => b'\r',
        b't' => b'\t',
        _ => return None,
    };
    Some(u32::from(c))
}

fn hex4(h: &[u8]) -> Option<u32> {
    h.iter().try_fold(0u32, |acc, &d| {
        let v = (d as char).to_digit(16)?;
        Some(acc * 16 + v)
    })
}
