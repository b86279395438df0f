//! Invariants over generated streams: chunking never changes the items; the
//! reader agrees with the independent model (`tests/contract_model`); encode's
//! output is one safe line, the one the model writes (docs/contract.md
//! §Reader: chunking, §Reader: messages, §Encoder).

mod common;

use common::{model_encode, model_is_json, model_read, read_chunked, read_whole, Item, Settings};
use mcp_stdio::{encode, encode_ascii, encode_bound, encode_to_slice, EncodeOptions, Error};
use proptest::prelude::*;

/// Pieces that make streams full of edge cases: messages, junk, CRLF, BOMs,
/// split multi-byte characters, invalid UTF-8, JSON-RPC shapes.
fn piece() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        Just(b"\n".to_vec()),
        Just(b"\r\n".to_vec()),
        Just(b" ".to_vec()),
        Just(b"\t".to_vec()),
        Just(b"\r".to_vec()),
        Just(b"\xEF\xBB\xBF".to_vec()),
        Just(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{}}".to_vec()),
        Just(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}".to_vec()),
        Just(b"{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"result\":null}".to_vec()),
        Just(
            b"{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"x\"}}"
                .to_vec()
        ),
        Just(b"[{\"jsonrpc\":\"2.0\",\"method\":\"m\"}]".to_vec()),
        Just(b"{\"id\":1}".to_vec()),
        Just(b"[1,2,{\"a\":[true,false,null]}]".to_vec()),
        Just("\"é😀\u{2028}\"".as_bytes().to_vec()),
        Just(b"\"\\ud800\\n\\\"\"".to_vec()),
        Just(b"1e999".to_vec()),
        Just(b"-0.5E+12".to_vec()),
        Just(b"not json".to_vec()),
        Just(b"{".to_vec()),
        Just(b"]".to_vec()),
        Just(b"\"".to_vec()),
        Just(b"\xFF".to_vec()),
        Just(b"\xC3".to_vec()),
        Just(b"\xED\xA0\x80".to_vec()),
        Just(b"\0".to_vec()),
        "[a-z0-9\\[\\]{}:,\" ]{0,12}".prop_map(String::into_bytes),
        proptest::collection::vec(any::<u8>(), 0..8),
    ]
}

fn stream() -> impl Strategy<Value = Vec<u8>> {
    proptest::collection::vec(piece(), 0..40).prop_map(|pieces| pieces.concat())
}

fn settings() -> impl Strategy<Value = Settings> {
    (
        prop_oneof![Just(None), (1usize..80).prop_map(Some)],
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(max_line_len, skip_invalid, jsonrpc)| Settings {
            max_line_len,
            skip_invalid,
            jsonrpc,
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn chunking_never_changes_the_items(
        s in settings(),
        stream in stream(),
        cuts in proptest::collection::vec(any::<prop::sample::Index>(), 0..12),
    ) {
        let mut cuts: Vec<usize> = cuts.iter().map(|i| i.index(stream.len() + 1)).collect();
        cuts.sort_unstable();
        prop_assert_eq!(read_chunked(s, &stream, &cuts), read_whole(s, &stream));
    }

    #[test]
    fn one_byte_feeds_give_the_same_items(s in settings(), stream in stream()) {
        let cuts: Vec<usize> = (1..stream.len()).collect();
        prop_assert_eq!(read_chunked(s, &stream, &cuts), read_whole(s, &stream));
    }

    #[test]
    fn the_reader_agrees_with_the_simple_model(stream in stream(), skip in any::<bool>()) {
        let s = Settings { skip_invalid: skip, ..Settings::default() };
        prop_assert_eq!(read_whole(s, &stream), model_read(&stream, skip));
    }

    #[test]
    fn json_rpc_classification_never_changes_validity(stream in stream()) {
        let plain = read_whole(Settings::default(), &stream);
        let rpc = read_whole(Settings { jsonrpc: true, ..Settings::default() }, &stream);
        prop_assert_eq!(plain.len(), rpc.len());
        for (p, r) in plain.iter().zip(&rpc) {
            match (p, r) {
                (Item::Json(a, None), Item::Json(b, Some(_))) => prop_assert_eq!(a, b),
                (Item::Json(a, None), Item::InvalidJsonRpc(b)) => prop_assert_eq!(a, b),
                (a, b) => prop_assert_eq!(a, b),
            }
        }
    }

    #[test]
    fn encode_gives_one_compact_line_or_an_error(input in stream(), ascii in any::<bool>()) {
        let result = if ascii { encode_ascii(&input) } else { encode(&input) };
        let trimmed = input.strip_suffix(b"\n").unwrap_or(&input);
        match result {
            Err(_) => prop_assert!(!model_is_json(&input)),
            Ok(line) => {
                prop_assert!(model_is_json(&input), "accepted invalid input");
                prop_assert_eq!(line.last(), Some(&b'\n'));
                let body = &line[..line.len() - 1];
                prop_assert!(!body.contains(&b'\n') && !body.contains(&b'\r'));
                prop_assert!(model_is_json(body));
                if ascii {
                    prop_assert!(body.iter().all(|b| (0x20..0x7F).contains(b)));
                }
                // Same value: serde_json agrees (lone surrogates and huge numbers aside,
                // which it cannot hold as a Value).
                let a = serde_json::from_slice::<serde_json::Value>(&input);
                let b = serde_json::from_slice::<serde_json::Value>(body);
                if let (Ok(a), Ok(b)) = (a, b) {
                    prop_assert_eq!(a, b);
                }
                // Exactly the contract's line (docs/contract.md §Encoder: output, §Encoder: ASCII flag).
                prop_assert_eq!(&line[..], &model_encode(&input, ascii)[..]);
                // Encoding is idempotent.
                let again = if ascii { encode_ascii(body) } else { encode(body) };
                prop_assert_eq!(again.as_deref(), Ok(&line[..]));
                let _ = trimmed;
            }
        }
        // Into the caller's buffer: the same line within the bound, the
        // length needed when one byte short, the same error otherwise.
        let options = EncodeOptions { ascii };
        let bound = encode_bound(input.len(), options);
        let mut buf = vec![0u8; bound];
        let to = encode_to_slice(&input, options, &mut buf);
        let want = if ascii { encode_ascii(&input) } else { encode(&input) };
        match (&want, to) {
            (Ok(line), Ok(n)) => {
                prop_assert_eq!(&buf[..n], &line[..]);
                prop_assert_eq!(
                    encode_to_slice(&input, options, &mut buf[..n - 1]),
                    Err(Error::BufferTooSmall(n))
                );
            }
            (Err(e), Err(f)) => prop_assert_eq!(e, &f),
            (a, b) => prop_assert!(false, "encode {:?}, encode_to_slice {:?}", a, b),
        }
    }
}
