//! JSON strings: validating one (escapes, control characters, strict UTF-8),
//! skipping one already validated, and decoding a short one for comparison.

use super::block::{string_specials_at, Specials, BLOCK};
use super::watch::Watch;
use crate::simd::portable::Portable;
use crate::simd::Kernels;

/// The index of the first byte at or after `i` that a string scanner must
/// look at (see [`string_specials`], non-ASCII bytes included), or
/// `s.len()`. Sixteen bytes a step.
pub(crate) fn next_special_or_non_ascii(s: &[u8], mut i: usize) -> usize {
    while i < s.len() {
        let (mask, covered) = string_specials_at::<true, _>(Portable, s, i, false);
        if mask != 0 {
            return i + mask.trailing_zeros() as usize;
        }
        i += covered;
    }
    s.len()
}

/// Checks the string that opens at `s[i] == b'"'`: escapes, no raw control
/// characters and, when `UTF8`, strict UTF-8 (otherwise the caller has
/// checked the whole text already). Returns the index just past its closing
/// quote, or `None` if invalid.
///
/// 64 bytes are classified at once, into `window` ([`Specials`]), which the
/// next strings of the same text reuse while they lie in it; every special
/// byte of a window is then handled from its bitmask, so a string dense with
/// escapes or non-ASCII characters costs a few instructions per escape, not
/// a new search.
#[inline(always)]
pub(crate) fn scan_string<const UTF8: bool, W: Watch, K: Kernels>(
    k: K,
    window: &mut Specials,
    s: &[u8],
    i: usize,
    watch: &mut W,
) -> Option<usize> {
    let mut j = i + 1;
    loop {
        let (mask, covered, width) = window.from::<UTF8, K>(k, s, j, W::LINE_SEPARATORS);
        match specials::<UTF8, W>(s, j, mask, covered, width, watch)? {
            Window::StringEnd(end) => return Some(end),
            Window::Next(next) => j = next,
        }
    }
}

/// What the special bytes of a window of a string say.
enum Window {
    /// The closing quote ends just before this index.
    StringEnd(usize),
    /// The string goes on from this index.
    Next(usize),
}

/// Handles the special bytes of the window `s[j..j + width]` (bit `k` of
/// `mask` for `s[j + k]`; only `covered` bytes of the window exist).
#[inline(always)]
fn specials<const UTF8: bool, W: Watch>(
    s: &[u8],
    j: usize,
    mut mask: u64,
    covered: usize,
    width: usize,
    watch: &mut W,
) -> Option<Window> {
    loop {
        if mask == 0 {
            // The text ends inside the string, or the string goes on.
            return (covered == width).then_some(Window::Next(j + width));
        }
        let k = j + mask.trailing_zeros() as usize;
        let next = match s[k] {
            b'"' => return Some(Window::StringEnd(k + 1)),
            b'\\' => escape_end(s, k)?,
            b if b >= 0x80 => {
                // Flagged for UTF-8 checking or, with LINE_SEPARATORS, as 0xE2.
                if W::LINE_SEPARATORS && is_line_separator(s, k) {
                    watch.line_separator();
                }
                if UTF8 {
                    utf8_end(s, k)?
                } else {
                    k + 1
                }
            }
            _ => return None, // a raw control character
        };
        let used = next - j;
        if used >= width {
            return Some(Window::Next(next));
        }
        mask &= u64::MAX << used;
    }
}

/// `s[k..]` starts with U+2028 or U+2029 (E2 80 A8 or E2 80 A9).
#[inline]
fn is_line_separator(s: &[u8], k: usize) -> bool {
    matches!(s.get(k..k + 3), Some([0xE2, 0x80, 0xA8 | 0xA9]))
}

/// The byte after a backslash: 2 for a one-character escape, 6 for `u`
/// (four hex digits follow), 0 for anything else (invalid).
static ESCAPE_LEN: [u8; 256] = {
    let mut t = [0u8; 256];
    let simple = b"\"\\/bfnrt";
    let mut k = 0;
    while k < simple.len() {
        t[simple[k] as usize] = 2;
        k += 1;
    }
    t[b'u' as usize] = 6;
    t
};

/// True for the ASCII hex digits.
static IS_HEX: [bool; 256] = {
    let mut t = [false; 256];
    let mut b = 0;
    while b < 256 {
        t[b] = (b as u8).is_ascii_hexdigit();
        b += 1;
    }
    t
};

/// `s[i]` is a backslash: the index past its escape sequence, if valid.
#[inline(always)]
fn escape_end(s: &[u8], i: usize) -> Option<usize> {
    match ESCAPE_LEN[usize::from(*s.get(i + 1)?)] {
        2 => Some(i + 2),
        6 => {
            // Any code unit is accepted, lone surrogates included (as Python and JS do).
            let hex = s.get(i + 2..i + 6)?;
            (IS_HEX[usize::from(hex[0])]
                & IS_HEX[usize::from(hex[1])]
                & IS_HEX[usize::from(hex[2])]
                & IS_HEX[usize::from(hex[3])])
            .then_some(i + 6)
        }
        _ => None,
    }
}

/// `s[i]` is a non-ASCII byte: the index past the UTF-8 sequence it starts,
/// if that is well formed (Unicode table 3-7: no overlong forms, no
/// surrogates, nothing above U+10FFFF).
#[inline(always)]
fn utf8_end(s: &[u8], i: usize) -> Option<usize> {
    let at = |k: usize| s.get(i + k).copied().unwrap_or(0);
    let is_cont = |b: u8| b & 0xC0 == 0x80;
    let (lead, second) = (s[i], at(1));
    let ok = match lead {
        0xC2..=0xDF => return is_cont(second).then_some(i + 2),
        0xE0 => (0xA0..=0xBF).contains(&second),
        0xE1..=0xEC | 0xEE..=0xEF => is_cont(second),
        0xED => (0x80..=0x9F).contains(&second),
        0xF0 => (0x90..=0xBF).contains(&second),
        0xF1..=0xF3 => is_cont(second),
        0xF4 => (0x80..=0x8F).contains(&second),
        _ => false,
    };
    if !ok || !is_cont(at(2)) {
        return None;
    }
    if lead < 0xF0 {
        Some(i + 3)
    } else {
        is_cont(at(3)).then_some(i + 4)
    }
}

/// Skips the already validated string opening at `s[i] == b'"'`: the index
/// past its closing quote (the scanner of [`scan_string`], whose checks
/// cannot fail on a valid text).
#[inline]
pub(crate) fn skip_string(s: &[u8], i: usize) -> usize {
    scan_string::<false, (), _>(Portable, &mut Specials::new(), s, i, &mut ()).unwrap_or(s.len())
}

/// A decoded string of at most 8 bytes (enough for every JSON-RPC member name).
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
    // The common case, a name without escapes: found with one SIMD compare.
    if let Some(block) = s.get(i + 1..i + 1 + BLOCK) {
        let block: &[u8; BLOCK] = block.try_into().unwrap();
        let k = Portable
            .string_specials_16::<false>(block, false)
            .trailing_zeros() as usize;
        if k < BLOCK && block[k] == b'"' {
            if k > out.bytes.len() {
                return (None, i + k + 2); // longer than any JSON-RPC name
            }
            out.bytes.copy_from_slice(&block[..8]);
            out.len = k;
            return (Some(out), i + k + 2);
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

/// The character a one-character escape `\e` stands for (`e` after the backslash).
pub(super) fn simple_escape(e: u8) -> Option<u32> {
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

/// The value of four hex digits (either case).
pub(super) fn hex4(h: &[u8]) -> Option<u32> {
    h.iter().try_fold(0u32, |acc, &d| {
        let v = (d as char).to_digit(16)?;
        Some(acc * 16 + v)
    })
}
