//! `encode` and `encode_ascii` on any input (docs/contract.md §Encoder): both
//! fail exactly when the model says the input is not one JSON text;
//! otherwise each returns one line that
//! - ends in exactly one `\n`, with no other raw `\n` or `\r`,
//! - has no whitespace outside strings,
//! - is one JSON text per the model,
//! - holds the input's value: the same tokens, strings compared after
//!   unescaping (as UTF-16 units, so lone surrogates compare too), numbers
//!   and literals by their text; and, where serde_json can build a `Value`
//!   of both (no lone surrogates, depth <= 128), the same `Value` with
//!   `arbitrary_precision` (numbers as text),
//! - with ascii, has only bytes 0x20..=0x7E before the `\n`,
//! - is exactly what §Encoder: output and §Encoder: ASCII flag say: every
//!   token byte for byte, raw U+2028/U+2029 (and, with ascii, every raw
//!   character above 0x7E) escaped as lowercase `\uxxxx` (`common::model_encode`),
//! - encodes to itself (idempotent), and the two encoders compose:
//!   `encode_ascii(encode(x)) == encode_ascii(x)`, `encode(encode_ascii(x)) == encode_ascii(x)`.

#![no_main]

mod common;

use common::{is_ws, model_encode, model_is_json, tokens};
use libfuzzer_sys::fuzz_target;
use mcp_stdio::{encode, encode_ascii};

fn check_line(input: &[u8], line: &[u8], ascii: bool) {
    assert_eq!(line.last(), Some(&b'\n'), "no final newline");
    let body = &line[..line.len() - 1];
    assert!(!body.contains(&b'\n'), "raw \\n in the body");
    assert!(!body.contains(&b'\r'), "raw \\r in the body");
    // No whitespace outside strings.
    let mut in_string = false;
    let mut escaped = false;
    for &b in body {
        if in_string {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
        } else if b == b'"' {
            in_string = true;
        } else {
            assert!(!is_ws(b), "whitespace outside strings");
        }
    }
    assert!(model_is_json(body), "output is not one JSON text");
    if ascii {
        assert!(
            body.iter().all(|b| (0x20..=0x7E).contains(b)),
            "non-printable-ASCII byte in an ascii output"
        );
    }
    assert_eq!(tokens(input), tokens(body), "tokens differ");
    let a = serde_json::from_slice::<serde_json::Value>(input);
    let b = serde_json::from_slice::<serde_json::Value>(body);
    if let (Ok(a), Ok(b)) = (&a, &b) {
        assert_eq!(a, b, "values differ");
    }
    assert_eq!(
        a.is_ok(),
        b.is_ok(),
        "serde_json takes one and not the other"
    );
    assert_eq!(
        String::from_utf8_lossy(line),
        String::from_utf8_lossy(&model_encode(input, ascii)),
        "not the contract's output"
    );
    assert_eq!(line, &model_encode(input, ascii)[..]);
}

fuzz_target!(|input: &[u8]| {
    let valid = model_is_json(input);
    let plain = encode(input);
    let ascii = encode_ascii(input);
    match (&plain, &ascii) {
        (Ok(plain), Ok(ascii)) => {
            assert!(valid, "accepted input the model rejects");
            check_line(input, plain, false);
            check_line(input, ascii, true);
            assert_eq!(encode(plain).as_ref(), Ok(plain), "encode not idempotent");
            assert_eq!(
                encode_ascii(ascii).as_ref(),
                Ok(ascii),
                "encode_ascii not idempotent"
            );
            assert_eq!(encode_ascii(plain).as_ref(), Ok(ascii));
            assert_eq!(encode(ascii).as_ref(), Ok(ascii));
        }
        (Err(_), Err(_)) => assert!(!valid, "rejected input the model accepts"),
        _ => panic!("encode and encode_ascii disagree: {plain:?} vs {ascii:?}"),
    }
});
