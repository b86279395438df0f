//! The C ABI (the crate's only `unsafe` code) against the Rust API: the same
//! chunking through `mcp_line_reader_*` and through `LineReader` must give the
//! same statuses, items (kind, rpc kind, data, and here even a too-long
//! item's `len`: same chunking) and `buffered_len`; `0` as the line limit and
//! unknown flag bits are rejected (docs/contract.md §Reader: line limit,
//! §Reader: flags, §Encoder: errors); every line's bytes through
//! `mcp_encode` (both flags) must give what `encode`/`encode_ascii` give, and
//! the buffer must free cleanly (twice: the second is a no-op). Each chunk is
//! fed from its own heap copy, freed right after the feed (the reader must
//! have copied it); message data is read before the next call. `run.sh`
//! builds this target with AddressSanitizer, so a stray pointer shows.
//!
//! Input layout: `common::ChunkedInput` (limit, flags, split byte unused here,
//! chunk lengths; a 0-length chunk is fed as `(NULL, 0)`), then the stream.

#![no_main]

mod common;

use std::ptr;

use common::{chunked_input, drain_reported, reader, ChunkedInput, Item, Reported};
use libfuzzer_sys::fuzz_target;
use mcp_stdio::ffi::*;
use mcp_stdio::{encode, encode_ascii, RpcKind};

/// The next item of a C reader, owned, with its `len`, or `None` for
/// `MCP_STATUS_NO_MESSAGE`.
fn c_next(r: *mut McpLineReader) -> Option<Reported> {
    let mut m = McpMessage {
        kind: -1,
        rpc_kind: -1,
        data: ptr::null(),
        len: usize::MAX,
    };
    let status = unsafe { mcp_line_reader_next_message(r, &mut m) };
    if status == McpStatus::MCP_STATUS_NO_MESSAGE {
        assert_eq!(m.kind, -1, "out written with no message");
        return None;
    }
    assert_eq!(status, McpStatus::MCP_STATUS_OK);
    let rpc = match m.rpc_kind {
        0 => None,
        1 => Some(RpcKind::Request),
        2 => Some(RpcKind::Notification),
        3 => Some(RpcKind::Response),
        4 => Some(RpcKind::Error),
        5 => Some(RpcKind::Batch),
        k => panic!("rpc_kind {k}"),
    };
    let data = || {
        assert!(!m.data.is_null(), "NULL data for a line");
        // SAFETY: valid until the next call on the reader, by the contract.
        unsafe { std::slice::from_raw_parts(m.data, m.len) }.to_vec()
    };
    let item = match m.kind {
        0 => Item::Json(data(), rpc),
        1 => Item::ParseError(data()),
        2 => {
            assert!(m.data.is_null(), "too-long item with data");
            Item::TooLong
        }
        3 => Item::InvalidJsonRpc(data()),
        k => panic!("kind {k}"),
    };
    if !matches!(item, Item::Json(..)) {
        assert_eq!(rpc, None, "rpc kind on a non-message");
    }
    Some((item, m.len))
}

fn c_drain(r: *mut McpLineReader) -> Vec<Reported> {
    std::iter::from_fn(|| c_next(r)).collect()
}

/// `mcp_encode` against `encode`/`encode_ascii`.
fn check_encode(input: &[u8]) {
    for (flags, want) in [(0, encode(input)), (MCP_ENCODE_ASCII, encode_ascii(input))] {
        let copy = input.to_vec(); // the exact length, on the heap, for ASan
        let mut buf = McpBuffer {
            data: ptr::null_mut(),
            len: 0,
        };
        let status = unsafe { mcp_encode(copy.as_ptr(), copy.len(), flags, &mut buf) };
        match want {
            Ok(line) => {
                assert_eq!(status, McpStatus::MCP_STATUS_OK);
                assert!(!buf.data.is_null());
                assert_eq!(
                    unsafe { std::slice::from_raw_parts(buf.data, buf.len) },
                    &line[..]
                );
            }
            Err(_) => {
                assert_eq!(status, McpStatus::MCP_STATUS_INVALID_JSON);
                assert!(
                    buf.data.is_null() && buf.len == 0,
                    "output written on error"
                );
            }
        }
        unsafe { mcp_buffer_free(&mut buf) };
        assert!(buf.data.is_null() && buf.len == 0);
        unsafe { mcp_buffer_free(&mut buf) };
    }
    // Unknown flag bits.
    let mut buf = McpBuffer {
        data: ptr::null_mut(),
        len: 0,
    };
    let status = unsafe { mcp_encode(input.as_ptr(), input.len(), 2, &mut buf) };
    assert_eq!(status, McpStatus::MCP_STATUS_UNKNOWN_FLAGS);
    assert!(buf.data.is_null());
}

fuzz_target!(|data: &[u8]| {
    let Some(ChunkedInput {
        settings: s,
        split: _,
        lens,
        stream,
    }) = chunked_input(data)
    else {
        return;
    };

    let c = mcp_line_reader_new();
    assert!(!c.is_null());
    unsafe {
        assert_eq!(
            mcp_line_reader_set_max_line_len(c, 0),
            McpStatus::MCP_STATUS_INVALID_ARGUMENT
        );
        assert_eq!(
            mcp_line_reader_set_flags(c, 4),
            McpStatus::MCP_STATUS_UNKNOWN_FLAGS
        );
        let limit = s.max_line_len.unwrap_or(usize::MAX);
        assert_eq!(
            mcp_line_reader_set_max_line_len(c, limit),
            McpStatus::MCP_STATUS_OK
        );
        let flags = u32::from(s.skip_invalid) * MCP_READER_SKIP_INVALID
            + u32::from(s.jsonrpc) * MCP_READER_JSONRPC;
        assert_eq!(
            mcp_line_reader_set_flags(c, flags),
            McpStatus::MCP_STATUS_OK
        );
    }
    let mut r = reader(s);

    let mut c_items = Vec::new();
    let mut r_items = Vec::new();
    let mut from = 0;
    for &len in lens.iter().cycle() {
        if from >= stream.len() {
            break;
        }
        let to = (from + len).min(stream.len());
        let status = if len == 0 {
            unsafe { mcp_line_reader_feed(c, ptr::null(), 0) }
        } else {
            let chunk: Box<[u8]> = stream[from..to].into(); // freed right after the feed
            unsafe { mcp_line_reader_feed(c, chunk.as_ptr(), chunk.len()) }
        };
        assert_eq!(status, McpStatus::MCP_STATUS_OK);
        r.feed(&stream[from..to]).unwrap();
        from = to;
        c_items.extend(c_drain(c));
        r_items.extend(drain_reported(&mut r));
        assert_eq!(unsafe { mcp_line_reader_buffered_len(c) }, r.buffered_len());
    }
    assert_eq!(
        unsafe { mcp_line_reader_finish(c) },
        McpStatus::MCP_STATUS_OK
    );
    r.finish().unwrap();
    c_items.extend(c_drain(c));
    r_items.extend(drain_reported(&mut r));
    // Lengths too: a too-long item's, informational, is the same for the same chunking.
    assert_eq!(c_items, r_items);
    assert_eq!(unsafe { mcp_line_reader_buffered_len(c) }, 0);
    assert_eq!(c_next(c), None);
    unsafe { mcp_line_reader_free(c) };

    for (item, _) in &c_items {
        if let Item::Json(line, _) | Item::ParseError(line) | Item::InvalidJsonRpc(line) = item {
            check_encode(line);
        }
    }
    check_encode(stream);
});
