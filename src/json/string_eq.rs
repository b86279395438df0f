//! Does a JSON string token say this text? Compared while unescaping, byte
//! for byte, with no allocation: a host routes on `"tools\/call"` as on
//! `"tools/call"` without decoding the method into a buffer.

use super::block::Specials;
use super::string::{hex4, scan_string, simple_escape};
use crate::simd::portable::Portable;

/// True when `token` is exactly one valid JSON string token (its quotes
/// included, nothing before or after) whose value, escapes resolved, is the
/// bytes of `text`. The token is checked by the validator's own string
/// scanner (escapes, control characters, strict UTF-8). A lone surrogate
/// escape is valid JSON but no Unicode character: it equals no text.
pub(crate) fn string_token_eq(token: &[u8], text: &[u8]) -> bool {
    if token.first() != Some(&b'"')
        || scan_string::<true, (), _>(Portable, &mut Specials::new(), token, 0, &mut ())
            != Some(token.len())
    {
        return false;
    }
    let body = &token[1..token.len() - 1];
    let mut rest = text;
    let mut i = 0;
    while i < body.len() {
        // A run of bytes as written, up to the next escape...
        let run_end = body[i..]
            .iter()
            .position(|&b| b == b'\\')
            .map_or(body.len(), |k| i + k);
        let Some(after) = rest.strip_prefix(&body[i..run_end]) else {
            return false;
        };
        rest = after;
        i = run_end;
        if i == body.len() {
            break;
        }
        // ...then the escape, as the UTF-8 of the character it stands for.
        let Some((c, next)) = escaped_char(body, i) else {
            return false;
        };
        let mut utf8 = [0; 4];
        let Some(after) = rest.strip_prefix(c.encode_utf8(&mut utf8).as_bytes()) else {
            return false;
        };
        rest = after;
        i = next;
    }
    rest.is_empty()
}

/// The character of the escape at `s[i] == b'\\'` (already validated) and the
/// index past it: a surrogate pair `\uD83D\uDE00` is one character. `None`
/// for a lone surrogate.
fn escaped_char(s: &[u8], i: usize) -> Option<(char, usize)> {
    if s.get(i + 1) != Some(&b'u') {
        let c = simple_escape(*s.get(i + 1)?)?;
        return Some((char::from_u32(c)?, i + 2));
    }
    let unit = hex4(s.get(i + 2..i + 6)?)?;
    if !(0xD800..=0xDBFF).contains(&unit) {
        // Any other code unit is the character itself; a low surrogate
        // alone is none (`from_u32` refuses it).
        return Some((char::from_u32(unit)?, i + 6));
    }
    // A high surrogate: a low one must follow.
    if s.get(i + 6..i + 8) != Some(b"\\u") {
        return None;
    }
    let low = hex4(s.get(i + 8..i + 12)?)?;
    if !(0xDC00..=0xDFFF).contains(&low) {
        return None;
    }
    let c = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
    Some((char::from_u32(c)?, i + 12))
}

#[cfg(test)]
mod tests {
    use super::string_token_eq as eq;

    #[test]
    fn escapes_of_every_kind() {
        assert!(eq(br#""tools/call""#, b"tools/call"));
        assert!(eq(br#""tools\/call""#, b"tools/call"));
        assert!(eq(br#""\u0074ools/call""#, b"tools/call"));
        assert!(eq(br#""\u0054\u0074""#, b"Tt"));
        assert!(eq(br#""\u00E9\u00e9""#, "éé".as_bytes()));
        assert!(eq(br#""\"\\\/\b\f\n\r\t""#, b"\"\\/\x08\x0c\n\r\t"));
        assert!(eq(br#""\ud83d\ude00""#, "\u{1F600}".as_bytes()));
        assert!(eq(br#""\uD83D\uDE00!""#, "\u{1F600}!".as_bytes()));
        assert!(eq("\"é😀\"".as_bytes(), "é😀".as_bytes()));
        assert!(eq(br#""""#, b""));
        assert!(eq(br#""\u0000""#, b"\0"));
    }

    #[test]
    fn what_is_not_equal() {
        assert!(!eq(br#""tools/call""#, b"tools/cal"));
        assert!(!eq(br#""tools/cal""#, b"tools/call"));
        assert!(!eq(br#""\ud83d""#, b"\xed\xa0\xbd")); // lone high surrogate
        assert!(!eq(br#""\ude00""#, b"\xed\xb8\x80")); // lone low surrogate
        assert!(!eq(br#""\ud83d\u0041""#, b"A"));
        assert!(!eq(br#""\ud83dx""#, b"x"));
        assert!(!eq(b"\"\xff\"", b"\xff")); // invalid UTF-8 in the token
        assert!(!eq(b"\"a\tb\"", b"a\tb")); // a raw control character
        assert!(!eq(br#""a\x""#, b"ax"));
        assert!(!eq(br#""a" "#, b"a"));
        assert!(!eq(br#" "a""#, b"a"));
        assert!(!eq(br#""a"b"#, b"a"));
        assert!(!eq(br#""a""#, b"a\xff"));
        assert!(!eq(b"\"abc", b"abc"));
        assert!(!eq(b"\"", b""));
        assert!(!eq(b"", b""));
        assert!(!eq(b"null", b"null"));
        assert!(!eq(b"7", b"7"));
    }
}
