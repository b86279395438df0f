//! In steady state the reader and the encoder allocate nothing per message:
//! once their buffers have grown to the traffic, reading and classifying
//! more lines, and encoding into a reused `Vec` or the caller's buffer
//! (`encode_to_slice`, C `mcp_encode_to`), allocate nothing at all.
//! Counted with a global allocator that counts this thread's allocations.

use mcp_stdio::{encode_into, encode_to_slice, EncodeOptions, LineReader, Message};

mod counting_allocator;

use counting_allocator::allocations;

/// MCP traffic of every kind: requests, notifications, responses, errors, a
/// batch, a long line, CRLF, blank lines, junk, invalid UTF-8, a non-JSON-RPC value.
fn traffic() -> Vec<u8> {
    let mut t = Vec::new();
    for i in 0..200 {
        t.extend_from_slice(
            format!(
                "{{\"jsonrpc\":\"2.0\",\"id\":{i},\"method\":\"tools/call\",\"params\":{{\"name\":\"echo\",\"arguments\":{{\"text\":\"h\\u00e9llo \\\"{i}\\\" — ✓\"}}}}}}\r\n\
                 {{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{{\"progress\":{i}}}}}\n\
                 {{\"jsonrpc\":\"2.0\",\"id\":\"r{i}\",\"result\":{{\"content\":[{{\"type\":\"text\",\"text\":\"{}\"}}]}}}}\n\
                 {{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{{\"code\":-32700,\"message\":\"Parse error\"}}}}\n\
                 [{{\"jsonrpc\":\"2.0\",\"method\":\"a\"}},{{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":null}}]\n\
                 \n   \n\
                 server log: starting\n\
                 {{\"a\": [1, 2.5e3, true, false, null, {{\"deep\": [[[[{{}}]]]]}}]}}\n",
                "x".repeat(if i % 50 == 0 { 20_000 } else { 40 })
            )
            .as_bytes(),
        );
        t.extend_from_slice(b"{\"bad\": \"\xff\"}\n");
    }
    t
}

/// Feeds `traffic` in chunks of `chunk` bytes, draining after each; returns
/// how many items came out.
fn read_all(r: &mut LineReader, traffic: &[u8], chunk: usize) -> usize {
    let mut items = 0;
    for piece in traffic.chunks(chunk) {
        r.feed(piece).unwrap();
        while let Some(m) = r.next_message() {
            assert!(!matches!(m, Message::TooLong { .. }));
            items += 1;
        }
    }
    r.finish().unwrap();
    while r.next_message().is_some() {
        items += 1;
    }
    items
}

#[test]
fn reading_and_classifying_allocate_nothing_in_steady_state() {
    let traffic = traffic();
    for jsonrpc in [false, true] {
        for chunk in [1, 7, 4096, 65536] {
            let mut r = LineReader::new();
            r.set_jsonrpc(jsonrpc);
            let warm = read_all(&mut r, &traffic, chunk); // the buffers grow here
            let before = allocations();
            for _ in 0..3 {
                assert_eq!(read_all(&mut r, &traffic, chunk), warm);
            }
            let during = allocations() - before;
            assert_eq!(
                during, 0,
                "{during} allocations (jsonrpc {jsonrpc}, chunks of {chunk})"
            );
        }
    }
}

#[test]
fn encoding_into_a_reused_buffer_allocates_nothing() {
    let documents = [
        &b"{\"jsonrpc\": \"2.0\", \"id\": 1,\n  \"result\": {\"text\": \"a\\nb \xe2\x80\xa8 \xc3\xa9\"}}"[..],
        b"[1, 2, 3]",
        b"  \"plain\"  ",
        b"{\"nested\": [[[[[[{\"a\": null}]]]]]]}",
    ];
    let mut out = Vec::with_capacity(1 << 16);
    let mut buf = [0u8; 1 << 10];
    // The first call chooses the SIMD level once per process, reading
    // MCP_STDIO_SIMD (on Windows that allocates: the name goes to UTF-16).
    encode_into(documents[0], EncodeOptions::default(), &mut out).unwrap();
    out.clear();
    for ascii in [false, true] {
        let options = EncodeOptions { ascii };
        let before = allocations();
        for _ in 0..100 {
            for doc in documents {
                out.clear();
                encode_into(doc, options, &mut out).unwrap();
                // The caller's own buffer, from Rust and through the C ABI.
                let n = encode_to_slice(doc, options, &mut buf).unwrap();
                assert_eq!(&buf[..n], &out[..]);
                #[cfg(feature = "capi")]
                {
                    let mut len = 0;
                    // SAFETY: valid input and output ranges, a writable length.
                    let st = unsafe {
                        mcp_stdio::ffi::mcp_encode_to(
                            doc.as_ptr(),
                            doc.len(),
                            u32::from(ascii),
                            buf.as_mut_ptr(),
                            buf.len(),
                            &mut len,
                        )
                    };
                    assert_eq!(st, mcp_stdio::ffi::McpStatus::MCP_STATUS_OK);
                    assert_eq!(&buf[..len], &out[..]);
                }
            }
        }
        assert_eq!(allocations() - before, 0, "ascii {ascii}");
    }
}

#[test]
fn the_counter_counts() {
    let before = allocations();
    let v: Vec<u8> = Vec::with_capacity(10);
    drop(v);
    assert_eq!(allocations() - before, 1);
}
