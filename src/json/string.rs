//! JSON strings: validating one (escapes, control characters, strict UTF-8),
//! skipping one already validated, and decoding a short one for comparison.

use memchr::memchr2;

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// Per byte of `w` (little-endian order), the high bit is set for a byte that
/// a string scanner must look at: `"`, `\`, a control character (< 0x20),
/// and, when `NON_ASCII`, a non-ASCII byte. Borrows only run upwards from a
/// flagged byte, so the lowest flag is always exact (later flags may be
/// spurious and are never used).
#[inline(always)]
fn special_bytes<const NON_ASCII: bool>(w: u64) -> u64 {
    let quote = w ^ (ONES * u64::from(b'"'));
    let backslash = w ^ (ONES * u64::from(b'\\'));
    let is_quote = quote.wrapping_sub(ONES) & !quote;
    let is_backslash = backslash.wrapping_sub(ONES) & !backslash;
    let is_control = w.wrapping_sub(ONES * 0x20) & !w;
    let flags = is_quote | is_backslash | is_control;
    if NON_ASCII {
        (flags | w) & HIGHS
    } else {
        flags & HIGHS
    }
}

/// The index of the first byte at or after `i` that needs a look (see
/// [`special_bytes`]), or `s.len()`. Eight bytes per step.
#[inline(always)]
pub(crate) fn next_special<const NON_ASCII: bool>(s: &[u8], mut i: usize) -> usize {
    while let Some(chunk) = s.get(i..i + 8) {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let mask = special_bytes::<NON_ASCII>(u64::from_le_bytes(word));
        if mask != 0 {
            return i + (mask.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while let Some(&b) = s.get(i) {
        if b == b'"' || b == b'\\' || b < 0x20 || (NON_ASCII && b >= 0x80) {
            return i;
        }
        i += 1;
    }
    i
}

/// Checks the string that opens at `s[i] == b'"'` in a text whose UTF-8 is
/// already known to be valid: escapes, and no raw control characters.
/// Returns the index just past its closing quote, or `None` if invalid.
///
/// `NO_CONTROL`: the whole text is known to hold no byte below 0x20, so
/// only quotes and backslashes matter, and long runs are searched with SIMD.
#[inline]
pub(crate) fn scan_string<const NO_CONTROL: bool>(s: &[u8], i: usize) -> Option<usize> {
    let mut i = i + 1;
    loop {
        i = if NO_CONTROL {
            next_quote_or_backslash(s, i)
        } else {
            next_special::<false>(s, i)
        };
        match *s.get(i)? {
            b'"' => return Some(i + 1),
            b'\\' => i = escape_end(s, i)?,
            _ => return None, // a raw control character
        }
    }
}

/// The index of the next `"` or `\\` at or after `i`, or `s.len()`: up to
/// four words inline (most member names and values end there: a call
/// costs more than a short string), then memchr2 for long runs.
#[inline(always)]
pub(crate) fn next_quote_or_backslash(s: &[u8], mut i: usize) -> usize {
    for _ in 0..4 {
        let Some(chunk) = s.get(i..i + 8) else {
            return memchr2(b'"', b'\\', &s[i..]).map_or(s.len(), |k| i + k);
        };
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let mask = special_bytes::<false>(u64::from_le_bytes(word));
        if mask != 0 {
            return i + (mask.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    memchr2(b'"', b'\\', &s[i..]).map_or(s.len(), |k| i + k)
}

/// True when `s` holds a byte below 0x20 (a control character, tab, CR
/// and LF included). Written as a block-wise minimum, which compiles to
/// SIMD compares without any `unsafe`.
pub(crate) fn has_control_byte(s: &[u8]) -> bool {
    const BLOCK: usize = 64;
    let mut blocks = s.chunks_exact(BLOCK);
    for block in &mut blocks {
        if block.iter().fold(u8::MAX, |m, &b| m.min(b)) < 0x20 {
            return true;
        }
    }
    blocks.remainder().iter().any(|&b| b < 0x20)
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
/// value is at most 8 bytes (escapes resolved, so `"json\u0072pc"` is
/// `jsonrpc`). Returns that value, or `None` for a longer string or one with
/// an escaped non-ASCII character (no JSON-RPC name or version has one), and
/// the index past the closing quote.
pub(crate) fn unescape_short(s: &[u8], i: usize) -> (Option<Short>, usize) {
    let mut out = Short {
        bytes: [0; 8],
        len: 0,
    };
    // The common case, a short name without escapes: copy it as it is.
    let body = s.get(i + 1..).unwrap_or_default();
    for (k, &b) in body.iter().take(out.bytes.len() + 1).enumerate() {
        match b {
            b'"' => {
                out.bytes[..k].copy_from_slice(&body[..k]);
                out.len = k;
                return (Some(out), i + k + 2);
            }
            b'\\' => break,
            _ => {}
        }
    }
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
