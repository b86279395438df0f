//! The reader (no limit, no JSON-RPC, with and without the skip flag) against
//! an independent, deliberately simple model of the contract (`common`;
//! docs/contract.md §Reader: lines, trimming, BOM, messages, and §JSON):
//! strip a leading BOM, split on `\n`, trim JSON whitespace, skip empty lines,
//! a line is a message iff std's UTF-8 check and serde_json's validating skip
//! (`IgnoredAny`) accept it. The whole input is the stream.
//!
//! Also: turning JSON-RPC classification on never changes which lines are
//! JSON (a message becomes a classified message or `InvalidJsonRpc`;
//! §Reader: messages).

#![no_main]

mod common;

use common::{model_read, read_whole, Item, Settings};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|stream: &[u8]| {
    for skip_invalid in [false, true] {
        let s = Settings {
            max_line_len: None,
            skip_invalid,
            jsonrpc: false,
        };
        let got = read_whole(s, stream);
        let want = model_read(stream, skip_invalid);
        assert_eq!(got, want, "skip_invalid={skip_invalid}");
        if !skip_invalid {
            let rpc = read_whole(Settings { jsonrpc: true, ..s }, stream);
            assert_eq!(got.len(), rpc.len());
            for (plain, rpc) in got.iter().zip(&rpc) {
                match (plain, rpc) {
                    (Item::Json(a, None), Item::Json(b, Some(_))) => assert_eq!(a, b),
                    (Item::Json(a, None), Item::InvalidJsonRpc(b)) => assert_eq!(a, b),
                    (a, b) => assert_eq!(a, b),
                }
            }
        }
    }
});
