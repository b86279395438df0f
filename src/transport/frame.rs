//! Writing the parts of the lines the transport composes: JSON values given
//! by the caller (validated and compacted by `encode_into`), strings,
//! integers. Everything appends to the queue's buffer; the caller has made
//! room, or the `try_reserve` here does.

use crate::encode::{encode_into, EncodeOptions};
use crate::error::Error;

/// `{"jsonrpc":"2.0",`: every line the transport composes starts so.
pub(crate) const OPEN: &[u8] = b"{\"jsonrpc\":\"2.0\",";

/// Appends `json` (one JSON text) compacted, without a newline. Returns the
/// first byte written (which tells the value's type). On error nothing is
/// appended.
pub(crate) fn value(out: &mut Vec<u8>, json: &[u8]) -> Result<u8, Error> {
    let start = out.len();
    encode_into(json, EncodeOptions::default(), out)?;
    out.pop(); // the newline
    Ok(out[start])
}

/// Appends `text` as a JSON string token: quotes, `"` and `\` escaped,
/// control characters escaped, U+2028 and U+2029 escaped as `encode` does.
pub(crate) fn string(out: &mut Vec<u8>, text: &str) -> Result<(), Error> {
    // At most 6 bytes a byte (`\u00XX`), 2 quotes.
    out.try_reserve(text.len().saturating_mul(6).saturating_add(2))
        .map_err(|_| Error::OutOfMemory)?;
    out.push(b'"');
    let bytes = text.as_bytes();
    let mut from = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let escape: &[u8] = match b {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\t' => b"\\t",
            0x08 => b"\\b",
            0x0C => b"\\f",
            0..=0x1F => b"",
            // U+2028 and U+2029 are E2 80 A8 and E2 80 A9.
            0xE2 if bytes.get(i + 1) == Some(&0x80)
                && matches!(bytes.get(i + 2), Some(0xA8 | 0xA9)) =>
            {
                out.extend_from_slice(&bytes[from..i]);
                out.extend_from_slice(if bytes[i + 2] == 0xA8 {
                    b"\\u2028"
                } else {
                    b"\\u2029"
                });
                from = i + 3;
                continue;
            }
            _ => continue,
        };
        out.extend_from_slice(&bytes[from..i]);
        if escape.is_empty() {
            const HEX: &[u8; 16] = b"0123456789abcdef";
            out.extend_from_slice(&[
                b'\\',
                b'u',
                b'0',
                b'0',
                HEX[usize::from(b >> 4)],
                HEX[usize::from(b & 0xF)],
            ]);
        } else {
            out.extend_from_slice(escape);
        }
        from = i + 1;
    }
    out.extend_from_slice(&bytes[from..]);
    out.push(b'"');
    Ok(())
}

/// Appends `n` in decimal (room for 20 bytes must be there or is made).
pub(crate) fn integer(out: &mut Vec<u8>, n: i64) -> Result<(), Error> {
    out.try_reserve(20).map_err(|_| Error::OutOfMemory)?;
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    let mut rest = n.unsigned_abs();
    loop {
        at -= 1;
        digits[at] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    if n < 0 {
        out.push(b'-');
    }
    out.extend_from_slice(&digits[at..]);
    Ok(())
}

/// Appends bytes the transport itself chose (small, fixed).
pub(crate) fn raw(out: &mut Vec<u8>, bytes: &[u8]) -> Result<(), Error> {
    out.try_reserve(bytes.len())
        .map_err(|_| Error::OutOfMemory)?;
    out.extend_from_slice(bytes);
    Ok(())
}

/// The request id an id token names, when it is exactly the decimal
/// integer the transport writes (no sign, no leading zero, no fraction,
/// no exponent, no quotes) and fits an `i64`.
pub(crate) fn our_id(token: &[u8]) -> Option<i64> {
    match token {
        [] | [b'0', _, ..] => return None,
        _ => {}
    }
    let mut n: i64 = 0;
    for &b in token {
        if !b.is_ascii_digit() {
            return None;
        }
        n = n.checked_mul(10)?.checked_add(i64::from(b - b'0'))?;
    }
    Some(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_are_escaped_and_valid() {
        for text in [
            "",
            "ping",
            "a\"b\\c",
            "\n\r\t\u{8}\u{c}\u{1}\u{1f}",
            "é\u{2028}x\u{2029}😀",
            "\u{2027}\u{202a}",
        ] {
            let mut out = Vec::new();
            string(&mut out, text).unwrap();
            let back: String = serde_json::from_slice(&out).unwrap();
            assert_eq!(back, text);
            assert!(!out
                .windows(3)
                .any(|w| w == "\u{2028}".as_bytes() || w == "\u{2029}".as_bytes()));
            assert!(out.iter().all(|&b| b >= 0x20));
        }
    }

    #[test]
    fn integers_are_decimal() {
        for n in [0, 1, 9, 10, 12345, -1, i64::MAX, i64::MIN] {
            let mut out = Vec::new();
            integer(&mut out, n).unwrap();
            assert_eq!(out, n.to_string().as_bytes());
        }
    }

    #[test]
    fn only_our_exact_integers_are_ours() {
        assert_eq!(our_id(b"1"), Some(1));
        assert_eq!(our_id(b"0"), Some(0)); // never ours: ids start at 1
        assert_eq!(our_id(b"9223372036854775807"), Some(i64::MAX));
        for token in [
            &b""[..],
            b"01",
            b"00",
            b"1.0",
            b"1e0",
            b"\"1\"",
            b"-1",
            b"9223372036854775808",
            b" 1",
        ] {
            assert_eq!(our_id(token), None, "{:?}", String::from_utf8_lossy(token));
        }
    }
}
