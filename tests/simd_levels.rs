//! Every SIMD level gives the same results: the reader's items (with and
//! without JSON-RPC classification), the envelope, `encode` and
//! `encode_ascii`, on generated texts built to put every kind of byte at
//! every offset of the 16-, 32- and 64-byte windows the kernels use. The
//! levels the CPU lacks are reported and skipped (a CPU that has them runs
//! them).
//!
//! One test function: the level is the process's, so nothing else may run
//! beside it in this binary.

use mcp_stdio::{
    encode, encode_ascii, envelope, force_simd_level, simd_level, LineReader, SimdLevel,
};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

const LEVELS: [SimdLevel; 3] = [SimdLevel::Portable, SimdLevel::Avx2, SimdLevel::Avx512];

/// Pieces of JSON, valid and not, of many lengths.
fn piece() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        4 => "[a-z]{1,80}".prop_map(String::into_bytes),
        2 => " {1,70}".prop_map(String::into_bytes),
        1 => "[ \t\r\n]{1,20}".prop_map(String::into_bytes),
        3 => prop::sample::select(vec![
            "{", "}", "[", "]", ",", ":", "\"", "\\", "\\\"", "\\\\", "\\n", "\\u00e9", "\\ud83d",
            "\\uD83D\\uDE00", "\\x", "\\u12", "é", "€", "😀", "\u{2028}", "\u{2029}", "0", "-1.5e+3",
            "true", "false", "null", "\"jsonrpc\"", "\"2.0\"", "\"id\"", "\"method\"",
        ])
        .prop_map(|s| s.as_bytes().to_vec()),
        1 => prop::sample::select(vec![
            vec![0x01u8], vec![0x1F], vec![0x7F], vec![0x80], vec![0xFF], vec![0xC0, 0x80],
            vec![0xED, 0xA0, 0x80], vec![0xE2, 0x80], vec![0xF4, 0x90, 0x80, 0x80], vec![0],
        ]),
    ]
}

/// A text: pieces, or pieces inside a string of a JSON-RPC message (so that
/// long strings, where the 64-byte kernels run, are common and valid).
fn text() -> impl Strategy<Value = Vec<u8>> {
    (prop::collection::vec(piece(), 0..40), 0..3u8).prop_map(|(pieces, wrap)| {
        let body: Vec<u8> = pieces.concat();
        match wrap {
            0 => body,
            1 => {
                let inner: Vec<u8> = body
                    .into_iter()
                    .filter(|&b| b != b'"' && b != b'\\' && b >= 0x20)
                    .collect();
                let mut t = br#"{"jsonrpc":"2.0","id":7,"method":"m","params":{"text":""#.to_vec();
                t.extend_from_slice(&inner);
                t.extend_from_slice(br#"","n":[1, 2,   3]}}"#);
                t
            }
            _ => {
                let mut t = br#"{"jsonrpc":"2.0","id":"x","result":{"#.to_vec();
                t.extend_from_slice(&body);
                t.extend_from_slice(b"}}");
                t
            }
        }
    })
}

/// What the library makes of `input` at the level in use, as text.
fn results(input: &[u8]) -> String {
    let mut out = String::new();
    for jsonrpc in [false, true] {
        let mut reader = LineReader::new();
        reader.set_jsonrpc(jsonrpc);
        reader.feed(input).unwrap();
        reader.feed(b"\n").unwrap();
        while let Some(m) = reader.next_message() {
            out += &format!("{m:?}\n");
        }
    }
    out += &format!("{:?}\n", envelope(input).map(|e| format!("{e:?}")));
    out += &format!("{:?}\n{:?}\n", encode(input), encode_ascii(input));
    out
}

#[test]
fn every_level_gives_the_same_results() {
    // MCP_STDIO_SIMD picks the level (AVX2 when unset), never above what
    // the CPU has.
    let best = *LEVELS.iter().rev().find(|l| l.is_supported()).unwrap();
    let want = match std::env::var("MCP_STDIO_SIMD").as_deref() {
        Ok("portable") => SimdLevel::Portable,
        Ok("avx512") => SimdLevel::Avx512.min(best),
        _ => SimdLevel::Avx2.min(best),
    };
    assert_eq!(
        simd_level(),
        want,
        "MCP_STDIO_SIMD={:?}",
        std::env::var("MCP_STDIO_SIMD")
    );

    let levels: Vec<SimdLevel> = LEVELS.into_iter().filter(|l| l.is_supported()).collect();
    println!("levels compared: {levels:?} (of {LEVELS:?})");
    let mut runner = TestRunner::new(Config {
        cases: if cfg!(miri) { 8 } else { 3000 },
        ..Config::default()
    });
    runner
        .run(&text(), |input| {
            assert!(force_simd_level(SimdLevel::Portable));
            let portable = results(&input);
            for &level in &levels[1..] {
                assert!(force_simd_level(level));
                prop_assert_eq!(&results(&input), &portable, "at {:?}", level);
            }
            Ok(())
        })
        .unwrap();
    assert!(force_simd_level(want));
}
