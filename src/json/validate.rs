//! Is this exactly one JSON text? RFC 8259 on bytes, strict UTF-8, any depth.

use super::cursor::Cursor;
use super::nesting::Nesting;
use super::string::scan_string;
use super::watch::Watch;
use crate::error::Error;
use crate::simd::{dispatch, Kernels, WithKernels};

/// From this length on, UTF-8 is checked for the whole text at once, with
/// SIMD (simdutf8); shorter texts check it inside strings, as they are
/// scanned (a call and its setup cost more than a short line).
const UTF8_UPFRONT: usize = 512;

/// `Ok(true)` when `text` is exactly one JSON text (RFC 8259) in valid
/// UTF-8, optionally surrounded by JSON whitespace: what Python's
/// `json.loads` accepts, minus `NaN` and `±Infinity`. Numbers of any size and
/// lone surrogate escapes are valid; nesting depth is not limited: the stack
/// of open containers costs one bit per level, on the heap past 64 levels,
/// and `Err(OutOfMemory)` says that heap part could not grow.
pub(crate) fn is_json_text(text: &[u8]) -> Result<bool, Error> {
    validate(text, &mut ())
}

/// [`is_json_text`], telling `watch` what it asks for. What it was told
/// is meaningless when the text turns out invalid. Runs with the kernels of
/// the SIMD level in use.
pub(crate) fn validate<W: Watch>(text: &[u8], watch: &mut W) -> Result<bool, Error> {
    dispatch(Validate { text, watch })
}

/// [`validate`]'s arguments, to run at a SIMD level.
struct Validate<'t, 'w, W> {
    text: &'t [u8],
    watch: &'w mut W,
}

impl<W: Watch> WithKernels for Validate<'_, '_, W> {
    type Output = Result<bool, Error>;

    #[inline(always)]
    fn run<K: Kernels>(self, k: K) -> Self::Output {
        let Validate { text, watch } = self;
        // Outside strings only ASCII is valid JSON, so strings are the only
        // place UTF-8 needs checking: either while scanning them, or up front.
        if text.len() < UTF8_UPFRONT {
            whole_text::<true, W, K>(k, text, watch)
        } else if simdutf8::basic::from_utf8(text).is_ok() {
            whole_text::<false, W, K>(k, text, watch)
        } else {
            Ok(false)
        }
    }
}

/// `UTF8`: strings check their UTF-8 as they are scanned.
#[inline(always)]
fn whole_text<const UTF8: bool, W: Watch, K: Kernels>(
    k: K,
    text: &[u8],
    watch: &mut W,
) -> Result<bool, Error> {
    let mut v = Cursor::new(text, k);
    let mut open = Nesting::new();
    v.skip_whitespace();
    if !v.value::<UTF8, W>(watch, &mut open) {
        return if open.out_of_memory() {
            Err(Error::OutOfMemory)
        } else {
            Ok(false)
        };
    }
    v.skip_whitespace();
    Ok(v.i == text.len())
}

/// The validator's steps.
impl<K: Kernels> Cursor<'_, K> {
    /// Skips whitespace between tokens, reporting it. Inline only the check:
    /// most texts have no whitespace at all.
    #[inline(always)]
    fn gap<W: Watch>(&mut self, watch: &mut W) {
        if super::is_whitespace(self.peek()) {
            self.skip_gap(watch);
        }
    }

    #[inline(never)]
    fn skip_gap<W: Watch>(&mut self, watch: &mut W) {
        let from = self.i;
        self.skip_whitespace();
        watch.gap(from, self.i);
    }

    /// One value at the cursor (whitespace already skipped), containers
    /// included, with `open` (empty) as the stack of open containers.
    #[inline(always)]
    fn value<const UTF8: bool, W: Watch>(&mut self, watch: &mut W, open: &mut Nesting) -> bool {
        loop {
            // A value starts here. Containers that are not empty push a level
            // and go round again for their first element.
            if W::STRUCTURE {
                watch.value_start(open.depth(), self.i);
            }
            match self.peek() {
                b'{' => {
                    self.i += 1;
                    self.gap(watch);
                    if self.peek() == b'}' {
                        self.i += 1;
                    } else {
                        if !open.push(true) || !self.member_name::<UTF8, W>(watch, open.depth()) {
                            return false;
                        }
                        continue;
                    }
                }
                b'[' => {
                    self.i += 1;
                    self.gap(watch);
                    if self.peek() == b']' {
                        self.i += 1;
                    } else {
                        if !open.push(false) {
                            return false;
                        }
                        continue;
                    }
                }
                b'"' => match scan_string::<UTF8, W, K>(
                    self.k,
                    &mut self.strings,
                    self.s,
                    self.i,
                    watch,
                ) {
                    Some(end) => self.i = end,
                    None => return false,
                },
                b'-' | b'0'..=b'9' => {
                    if !self.number() {
                        return false;
                    }
                }
                b't' => {
                    if !self.literal(b"true") {
                        return false;
                    }
                }
                b'f' => {
                    if !self.literal(b"false") {
                        return false;
                    }
                }
                b'n' => {
                    if !self.literal(b"null") {
                        return false;
                    }
                }
                _ => return false,
            }
            // A value ended: close containers until one has another element.
            if W::STRUCTURE {
                watch.value_end(open.depth(), self.i);
            }
            loop {
                if open.depth() == 0 {
                    return true;
                }
                self.gap(watch);
                match self.peek() {
                    b',' => {
                        self.i += 1;
                        self.gap(watch);
                        if open.in_object() && !self.member_name::<UTF8, W>(watch, open.depth()) {
                            return false;
                        }
                        break;
                    }
                    b'}' if open.in_object() => {
                        self.i += 1;
                        open.pop();
                        if W::STRUCTURE {
                            watch.value_end(open.depth(), self.i);
                        }
                    }
                    b']' if !open.in_object() => {
                        self.i += 1;
                        open.pop();
                        if W::STRUCTURE {
                            watch.value_end(open.depth(), self.i);
                        }
                    }
                    _ => return false,
                }
            }
        }
    }

    /// `"name" :` and the whitespace after it, leaving the cursor on the value.
    #[inline(always)]
    fn member_name<const UTF8: bool, W: Watch>(&mut self, watch: &mut W, depth: usize) -> bool {
        if self.peek() != b'"' {
            return false;
        }
        if W::STRUCTURE {
            watch.member_name(depth, self.i);
        }
        match scan_string::<UTF8, W, K>(self.k, &mut self.strings, self.s, self.i, watch) {
            Some(end) => self.i = end,
            None => return false,
        }
        self.gap(watch);
        if self.peek() != b':' {
            return false;
        }
        self.i += 1;
        self.gap(watch);
        true
    }

    fn literal(&mut self, word: &[u8]) -> bool {
        if self.s[self.i..].starts_with(word) {
            self.i += word.len();
            true
        } else {
            false
        }
    }

    /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`, any number of digits.
    /// The cursor is on `-` or a digit.
    #[inline(always)]
    fn number(&mut self) -> bool {
        // Most numbers in messages are small integers ending before a
        // delimiter: count the digits, and leave the rest to `number_tail`.
        let s = self.s;
        let mut i = self.i + usize::from(s[self.i] == b'-');
        let first = s.get(i).copied().unwrap_or(0);
        i += 1;
        match first {
            b'1'..=b'9' => {
                while s.get(i).is_some_and(u8::is_ascii_digit) {
                    i += 1;
                }
            }
            b'0' => {}
            _ => return false,
        }
        match s.get(i) {
            Some(b'.' | b'e' | b'E') => self.number_tail(i),
            _ => {
                self.i = i;
                true
            }
        }
    }

    /// The fraction and exponent of a number whose integer part ends before `s[i]`.
    #[inline(never)]
    fn number_tail(&mut self, mut i: usize) -> bool {
        let s = self.s;
        let at = |i: usize| s.get(i).copied().unwrap_or(0);
        let digits = |mut i: usize| {
            while at(i).is_ascii_digit() {
                i += 1;
            }
            i
        };
        if at(i) == b'.' {
            if !at(i + 1).is_ascii_digit() {
                return false;
            }
            i = digits(i + 2);
        }
        if at(i) | 0x20 == b'e' {
            i += 1;
            i += usize::from(matches!(at(i), b'+' | b'-'));
            if !at(i).is_ascii_digit() {
                return false;
            }
            i = digits(i + 1);
        }
        self.i = i;
        true
    }
}
