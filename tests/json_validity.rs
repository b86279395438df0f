//! Which lines are messages: exactly one JSON text (RFC 8259) in valid UTF-8,
//! as Python's json.loads accepts them, minus NaN and Infinity.

mod common;

use common::{model_is_json, read_whole, Item, Settings};

/// The reader's verdict on one line.
fn is_message(line: &[u8]) -> bool {
    // Not at the very start of the stream, where a BOM would be skipped.
    let mut stream = b"\n".to_vec();
    stream.extend_from_slice(line);
    stream.push(b'\n');
    match read_whole(Settings::default(), &stream).as_slice() {
        [Item::Json(data, None)] => {
            assert_eq!(
                data.as_slice(),
                line,
                "a message carries its line as received"
            );
            true
        }
        [Item::ParseError(data)] => {
            assert_eq!(data.as_slice(), line);
            false
        }
        other => panic!("one item expected for {line:?}, got {other:?}"),
    }
}

const VALID: &[&str] = &[
    "{}",
    "[]",
    "42",
    "-0",
    "0.5",
    "-12.5e+3",
    "1E-2",
    "1e999",
    "-1e999",
    "123456789012345678901234567890123456789012",
    "\"str\"",
    "\"\"",
    "true",
    "false",
    "null",
    "{\"a\":1,\"a\":2}",
    "[1, 2 ,\t3 ]",
    "{ \"k\" : [ { } , [ ] , null ] }",
    "\"\\ud800\"",
    "\"\\udc00\\ud800\"",
    "\"\\uDFFF\\u0000\"",
    "\"\\\" \\\\ \\/ \\b \\f \\n \\r \\t\"",
    "\"\u{7f}\"",
    "\"é ✓ 😀 \u{2028}\"",
    "\"\u{10FFFF}\"",
    "{\"jsonrpc\":\"2.0\",\"method\":\"ping\",\"id\":1}",
];

const INVALID: &[&str] = &[
    "not json",
    "{",
    "}",
    "[1,]",
    "[,1]",
    "{\"a\":1,}",
    "{\"a\" 1}",
    "{a:1}",
    "{1:1}",
    "{\"a\":1 \"b\":2}",
    "[1 2]",
    "01",
    "-",
    "+1",
    "1.",
    ".5",
    "1.e5",
    "1e",
    "1e+",
    "0x10",
    "NaN",
    "Infinity",
    "-Infinity",
    "nul",
    "True",
    "\"abc",
    "\"\\x\"",
    "\"\\u12\"",
    "\"\\u12G4\"",
    "'single'",
    "1 2",
    "{} {}",
    "[] x",
    "\"a\"\"b\"",
    "\u{feff}{}",
    "{}\u{feff}",
    "\u{a0}1",
    "\u{c}1",
    "\u{b}1",
    "\u{2028}1",
];

#[test]
fn valid_texts_are_messages() {
    for text in VALID {
        assert!(is_message(text.as_bytes()), "should be a message: {text:?}");
        assert!(model_is_json(text.as_bytes()), "model disagrees: {text:?}");
    }
}

#[test]
fn invalid_texts_are_parse_errors() {
    for text in INVALID {
        assert!(
            !is_message(text.as_bytes()),
            "should be a parse error: {text:?}"
        );
        assert!(!model_is_json(text.as_bytes()), "model disagrees: {text:?}");
    }
}

#[test]
fn raw_control_characters_in_strings_are_invalid() {
    for c in (0u8..0x20).filter(|&c| c != b'\n') {
        let line = [b'"', b'a', c, b'"'];
        assert!(!is_message(&line), "control byte {c:#04x} inside a string");
    }
    // Outside strings, tab and CR are whitespace (and trimmed at the ends).
    assert!(is_message(b"[1,\t2,\r3]"));
}

#[test]
fn invalid_utf8_anywhere_is_a_parse_error() {
    let cases: &[&[u8]] = &[
        b"\"\x80\"",             // lone continuation byte
        b"\"\xC0\xAF\"",         // overlong '/'
        b"\"\xE0\x80\xAF\"",     // overlong, 3 bytes
        b"\"\xF0\x80\x80\xAF\"", // overlong, 4 bytes
        b"\"\xED\xA0\x80\"",     // encoded surrogate U+D800
        b"\"\xED\xBF\xBF\"",     // encoded surrogate U+DFFF
        b"\"\xF4\x90\x80\x80\"", // above U+10FFFF
        b"\"\xFF\"",
        b"\"\xFE\"",
        b"\"\xC3\"",           // truncated
        b"\"\xE2\x82\"",       // truncated
        b"\"\xC3\x28\"",       // bad continuation
        b"[\"ok\", \xC3\xA9]", // valid UTF-8 outside a string
        b"\xFF",
        b"{\"\x80\":1}", // in a member name
    ];
    for case in cases {
        assert!(!is_message(case), "{case:?}");
        assert!(!model_is_json(case), "model disagrees: {case:?}");
    }
    // Boundaries of the valid ranges.
    let valid: &[&[u8]] = &[
        b"\"\xC2\x80\"",
        b"\"\xDF\xBF\"",
        b"\"\xE0\xA0\x80\"",
        b"\"\xED\x9F\xBF\"",
        b"\"\xEE\x80\x80\"",
        b"\"\xF0\x90\x80\x80\"",
        b"\"\xF4\x8F\xBF\xBF\"",
    ];
    for case in valid {
        assert!(is_message(case), "{case:?}");
    }
}

#[test]
fn nul_bytes_are_never_json() {
    assert!(!is_message(b"\0"));
    assert!(!is_message(b"[1]\0"));
    assert!(!is_message(b"\"a\0b\""));
}

fn nested(depth: usize, open: &str, close: &str, inner: &str) -> String {
    format!("{}{}{}", open.repeat(depth), inner, close.repeat(depth))
}

#[test]
fn deep_nesting_is_accepted_without_recursion() {
    for depth in [10, 63, 64, 65, 1_000, 100_000, 1_000_000] {
        let arrays = nested(depth, "[", "]", "1");
        assert!(is_message(arrays.as_bytes()), "arrays, depth {depth}");
        let objects = nested(depth, "{\"a\":", "}", "[]");
        assert!(is_message(objects.as_bytes()), "objects, depth {depth}");
        let unbalanced = nested(depth, "[", "]", "1") + "]";
        assert!(
            !is_message(unbalanced.as_bytes()),
            "unbalanced, depth {depth}"
        );
        let unclosed = &arrays[..arrays.len() - 1];
        assert!(!is_message(unclosed.as_bytes()), "unclosed, depth {depth}");
    }
    // Containers must close with their own kind, at any depth.
    let mut mixed = "[{\"a\":".repeat(100);
    mixed.push('1');
    mixed.push_str(&"}]".repeat(100));
    assert!(is_message(mixed.as_bytes()));
    let crossed = mixed.replacen("}]", "]}", 1);
    assert!(!is_message(crossed.as_bytes()));
}

#[test]
fn every_prefix_of_a_valid_text_is_invalid_and_the_whole_valid() {
    let text =
        "{\"jsonrpc\":\"2.0\",\"id\":-1.5e3,\"result\":{\"a\":[true,false,null,\"\\u00e9é\"]}}";
    assert!(is_message(text.as_bytes()));
    for end in 1..text.len() {
        if text.is_char_boundary(end) {
            let prefix = text[..end].trim_end();
            let valid = model_is_json(prefix.as_bytes());
            assert_eq!(is_message(prefix.as_bytes()), valid, "{prefix:?}");
        }
    }
}

#[test]
fn long_texts_take_the_same_rules() {
    // From 512 bytes on, strings are scanned another way: same verdicts.
    let pad = "x".repeat(600);
    assert!(is_message(
        format!("{{\"a\":\"{pad}\",\"b\":[1,\"{pad}\\n\\\"\"]}}").as_bytes()
    ));
    assert!(
        is_message(format!("{{\"a\":\t\"{pad}\"}}").as_bytes()),
        "tab between tokens"
    );
    assert!(
        !is_message(format!("{{\"a\":\"{pad}\t\"}}").as_bytes()),
        "raw tab in a string"
    );
    assert!(
        !is_message(format!("{{\"a\":\"{pad}\u{1}\"}}").as_bytes()),
        "control in a string"
    );
    assert!(
        !is_message(format!("{{\"a\":\"{pad}").as_bytes()),
        "unterminated string"
    );
    assert!(
        !is_message(format!("{{\"a\":\"{pad}\\x\"}}").as_bytes()),
        "bad escape"
    );
    assert!(
        !is_message(format!("{{\"a\":\"{pad}\\").as_bytes()),
        "escape at the end"
    );
}
