//! encode: any JSON text in, one safe line out.

use mcp_stdio::{encode, encode_ascii, encode_into, EncodeOptions, Error};

fn enc(s: &str) -> String {
    String::from_utf8(encode(s.as_bytes()).unwrap()).unwrap()
}

fn enc_ascii(s: &str) -> String {
    String::from_utf8(encode_ascii(s.as_bytes()).unwrap()).unwrap()
}

#[test]
fn the_seed_example() {
    assert_eq!(
        enc("{\"a\": \"line1\\nline2\", \"id\": 1}"),
        "{\"a\":\"line1\\nline2\",\"id\":1}\n"
    );
}

#[test]
fn whitespace_outside_strings_goes_and_tokens_stay_byte_for_byte() {
    let pretty = "\r\n {\n  \"id\" : 123456789012345678901234567890,\n  \"x\" :\t[ 1.50E+10 , -0 , true , null ],\n  \"s\" : \"a  b\\u00e9\\/\"\n}\n\t";
    assert_eq!(
        enc(pretty),
        "{\"id\":123456789012345678901234567890,\"x\":[1.50E+10,-0,true,null],\"s\":\"a  b\\u00e9\\/\"}\n"
    );
    assert_eq!(enc("42"), "42\n");
    assert_eq!(enc(" \"str\" "), "\"str\"\n");
    assert_eq!(enc("[]"), "[]\n");
    assert_eq!(enc("1e999"), "1e999\n");
    assert_eq!(enc("\"\\ud800\""), "\"\\ud800\"\n");
}

#[test]
fn line_separators_in_strings_are_escaped() {
    assert_eq!(enc("\"a\u{2028}b\u{2029}c\""), "\"a\\u2028b\\u2029c\"\n");
    // Other characters starting with the same byte are kept raw.
    assert_eq!(
        enc("\"\u{2026}\u{20ac}\u{2027}\u{202a}\""),
        "\"\u{2026}\u{20ac}\u{2027}\u{202a}\"\n"
    );
    assert_eq!(enc("\"é✓😀\u{7f}\""), "\"é✓😀\u{7f}\"\n");
    // Long texts (UTF-8 checked up front, strings scanned another way),
    // compact and pretty, with a separator in one string among many.
    let filler = "— €\u{2027}".repeat(100);
    for gap in ["", " ", "\n  "] {
        let text = format!("[{gap}\"{filler}\",{gap}\"x\u{2029}y\",{gap}\"{filler}\"{gap}]");
        let line = format!("[\"{filler}\",\"x\\u2029y\",\"{filler}\"]\n");
        assert_eq!(enc(&text), line, "gap {gap:?}");
        let without = text.replace('\u{2029}', "");
        assert_eq!(enc(&without), line.replace("\\u2029", ""), "gap {gap:?}");
    }
}

#[test]
fn ascii_escapes_every_non_ascii_character_like_python() {
    assert_eq!(enc_ascii("\"é\""), "\"\\u00e9\"\n");
    assert_eq!(enc_ascii("\"😀\""), "\"\\ud83d\\ude00\"\n");
    assert_eq!(enc_ascii("\"\u{10FFFF}\""), "\"\\udbff\\udfff\"\n");
    assert_eq!(enc_ascii("\"\u{2028}\""), "\"\\u2028\"\n");
    assert_eq!(enc_ascii("\"\u{7f}x\u{ABCD}\""), "\"\\u007fx\\uabcd\"\n");
    assert_eq!(enc_ascii("{\"ключ\": [\"значение\", 1]}"), "{\"\\u043a\\u043b\\u044e\\u0447\":[\"\\u0437\\u043d\\u0430\\u0447\\u0435\\u043d\\u0438\\u0435\",1]}\n");
    // Escapes already present stay as written.
    assert_eq!(enc_ascii("\"\\u00E9\\n\""), "\"\\u00E9\\n\"\n");
}

#[test]
fn invalid_input_is_an_error_with_no_output() {
    for bad in [
        &b""[..],
        b"   ",
        b"\n",
        b"\xEF\xBB\xBF{}",
        b"{",
        b"[1,]",
        b"1 2",
        b"NaN",
        b"\"\xFF\"",
        b"\"a\nb\"",
        b"\x0c1",
    ] {
        assert_eq!(encode(bad), Err(Error::InvalidJson), "{bad:?}");
        assert_eq!(encode_ascii(bad), Err(Error::InvalidJson), "{bad:?}");
    }
    let mut out = b"kept".to_vec();
    assert_eq!(
        encode_into(b"{", EncodeOptions::default(), &mut out),
        Err(Error::InvalidJson)
    );
    assert_eq!(out, b"kept");
}

#[test]
fn encode_into_appends_and_reuses_the_buffer() {
    let mut out = Vec::new();
    encode_into(b"[1, 2]", EncodeOptions::default(), &mut out).unwrap();
    encode_into(b"{ }", EncodeOptions { ascii: true }, &mut out).unwrap();
    assert_eq!(out, b"[1,2]\n{}\n");
}

#[test]
fn deep_input_encodes_without_recursion() {
    let deep = format!("{}{}", "[ ".repeat(200_000), " ]".repeat(200_000));
    let line = encode(deep.as_bytes()).unwrap();
    assert_eq!(line.len(), 400_001);
}
