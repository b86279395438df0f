//! Is this exactly one JSON text? RFC 8259 on bytes, strict UTF-8, any depth.

use super::cursor::Cursor;
use super::nesting::Nesting;
use super::string::scan_string;

/// From this length on, UTF-8 is checked for the whole text at once, with
/// SIMD (simdutf8); shorter texts check it inside strings, as they are
/// scanned (a call and its setup cost more than a short line).
const UTF8_UPFRONT: usize = 512;

/// True when `text` is exactly one JSON text (RFC 8259) in valid UTF-8,
/// optionally surrounded by JSON whitespace: what Python's `json.loads`
/// accepts, minus `NaN` and `±Infinity`. Numbers of any size and lone
/// surrogate escapes are valid; nesting depth is not limited (the stack of
/// open containers costs one bit per level, on the heap past 64 levels).
pub(crate) fn is_json_text(text: &[u8]) -> bool {
    validate(text).is_some()
}

/// What validation learned about a valid text.
pub(crate) struct Valid {
    /// No whitespace between its tokens (around the value does not count):
    /// minifying it changes nothing.
    pub(crate) compact: bool,
}

/// [`is_json_text`], telling also whether the text is already compact.
pub(crate) fn validate(text: &[u8]) -> Option<Valid> {
    // Outside strings only ASCII is valid JSON, so strings are the only
    // place UTF-8 needs checking: either while scanning them, or up front.
    if text.len() < UTF8_UPFRONT {
        whole_text::<true>(text)
    } else if simdutf8::basic::from_utf8(text).is_ok() {
        whole_text::<false>(text)
    } else {
        None
    }
}

/// `UTF8`: strings check their UTF-8 as they are scanned.
fn whole_text<const UTF8: bool>(text: &[u8]) -> Option<Valid> {
    let mut v = Cursor::new(text);
    let mut gaps = false;
    v.skip_whitespace();
    let valid = v.value::<UTF8>(&mut gaps) && {
        v.skip_whitespace();
        v.i == text.len()
    };
    valid.then_some(Valid { compact: !gaps })
}

/// The validator's steps.
impl Cursor<'_> {
    /// Skips whitespace between tokens, noting that there was some.
    #[inline]
    fn gap(&mut self, gaps: &mut bool) {
        if super::is_whitespace(self.peek()) {
            *gaps = true;
            self.skip_whitespace();
        }
    }

    /// One value at the cursor (whitespace already skipped), containers included.
    fn value<const UTF8: bool>(&mut self, gaps: &mut bool) -> bool {
        let mut open = Nesting::new();
        loop {
            // A value starts here. Containers that are not empty push a level
            // and go round again for their first element.
            match self.peek() {
                b'{' => {
                    self.i += 1;
                    self.gap(gaps);
                    if self.peek() == b'}' {
                        self.i += 1;
                    } else {
                        open.push(true);
                        if !self.member_name::<UTF8>(gaps) {
                            return false;
                        }
                        continue;
                    }
                }
                b'[' => {
                    self.i += 1;
                    self.gap(gaps);
                    if self.peek() == b']' {
                        self.i += 1;
                    } else {
                        open.push(false);
                        continue;
                    }
                }
                b'"' => match scan_string::<UTF8>(self.s, self.i) {
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
            loop {
                if open.depth() == 0 {
                    return true;
                }
                self.gap(gaps);
                match self.peek() {
                    b',' => {
                        self.i += 1;
                        self.gap(gaps);
                        if open.in_object() && !self.member_name::<UTF8>(gaps) {
                            return false;
                        }
                        break;
                    }
                    b'}' if open.in_object() => {
                        self.i += 1;
                        open.pop();
                    }
                    b']' if !open.in_object() => {
                        self.i += 1;
                        open.pop();
                    }
                    _ => return false,
                }
            }
        }
    }

    /// `"name" :` and the whitespace after it, leaving the cursor on the value.
    fn member_name<const UTF8: bool>(&mut self, gaps: &mut bool) -> bool {
        if self.peek() != b'"' {
            return false;
        }
        match scan_string::<UTF8>(self.s, self.i) {
            Some(end) => self.i = end,
            None => return false,
        }
        self.gap(gaps);
        if self.peek() != b':' {
            return false;
        }
        self.i += 1;
        self.gap(gaps);
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
    fn number(&mut self) -> bool {
        if self.peek() == b'-' {
            self.i += 1;
        }
        match self.peek() {
            b'0' => self.i += 1,
            b'1'..=b'9' => self.digits(),
            _ => return false,
        }
        if self.peek() == b'.' {
            self.i += 1;
            if !self.peek().is_ascii_digit() {
                return false;
            }
            self.digits();
        }
        if matches!(self.peek(), b'e' | b'E') {
            self.i += 1;
            if matches!(self.peek(), b'+' | b'-') {
                self.i += 1;
            }
            if !self.peek().is_ascii_digit() {
                return false;
            }
            self.digits();
        }
        true
    }

    #[inline]
    fn digits(&mut self) {
        while self.peek().is_ascii_digit() {
            self.i += 1;
        }
    }
}
