//! The C ABI called from Rust, as a C caller would (and under Miri): NULL and
//! empty arguments, ownership, panics caught at the boundary, and the
//! generated header kept in sync with the code.

use std::ffi::CStr;
use std::ptr;

use super::*;
use McpStatus::*;

fn message() -> McpMessage {
    McpMessage {
        kind: -1,
        rpc_kind: -1,
        data: ptr::null(),
        len: usize::MAX,
    }
}

fn bytes(m: &McpMessage) -> &[u8] {
    assert!(!m.data.is_null());
    // SAFETY: a message just returned by the reader, which is not touched meanwhile.
    unsafe { std::slice::from_raw_parts(m.data, m.len) }
}

#[test]
fn committed_header_matches_the_code() {
    let generated = include_str!(concat!(env!("OUT_DIR"), "/mcp_stdio.h"));
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/include/mcp_stdio.h");
    if std::env::var_os("MCP_STDIO_UPDATE_HEADER").is_some() {
        std::fs::write(path, generated).expect("write include/mcp_stdio.h");
    }
    let committed = std::fs::read_to_string(path).unwrap_or_default();
    assert!(
        committed == generated,
        "include/mcp_stdio.h differs from what build.rs generates from src/ffi; \
         update it with: MCP_STDIO_UPDATE_HEADER=1 cargo test --lib committed_header"
    );
}

#[test]
fn reader_round_trip_through_the_c_abi() {
    unsafe {
        let r = mcp_line_reader_new();
        assert!(!r.is_null());
        let input = b"{\"jsonrpc\":\"2.0\",\"method\":\"ping\",\"id\":7}\r\nnope\n{\"a\"";
        assert_eq!(
            mcp_line_reader_set_flags(r, MCP_READER_JSONRPC),
            MCP_STATUS_OK
        );
        assert_eq!(
            mcp_line_reader_feed(r, input.as_ptr(), input.len()),
            MCP_STATUS_OK
        );
        let mut m = message();
        assert_eq!(mcp_line_reader_next_message(r, &mut m), MCP_STATUS_OK);
        assert_eq!(m.kind, McpMessageKind::MCP_MESSAGE_JSON as i32);
        assert_eq!(m.rpc_kind, McpRpcKind::MCP_RPC_REQUEST as i32);
        assert_eq!(
            bytes(&m),
            b"{\"jsonrpc\":\"2.0\",\"method\":\"ping\",\"id\":7}"
        );
        assert_eq!(mcp_line_reader_next_message(r, &mut m), MCP_STATUS_OK);
        assert_eq!(m.kind, McpMessageKind::MCP_MESSAGE_PARSE_ERROR as i32);
        assert_eq!(m.rpc_kind, McpRpcKind::MCP_RPC_NONE as i32);
        assert_eq!(bytes(&m), b"nope");
        let before = m;
        assert_eq!(
            mcp_line_reader_next_message(r, &mut m),
            MCP_STATUS_NO_MESSAGE
        );
        assert_eq!((m.kind, m.len), (before.kind, before.len), "*out untouched");
        assert_eq!(mcp_line_reader_buffered_len(r), 4);
        assert_eq!(mcp_line_reader_feed(r, b":1}".as_ptr(), 3), MCP_STATUS_OK);
        assert_eq!(mcp_line_reader_finish(r), MCP_STATUS_OK);
        assert_eq!(mcp_line_reader_next_message(r, &mut m), MCP_STATUS_OK);
        assert_eq!(m.kind, McpMessageKind::MCP_MESSAGE_INVALID_JSONRPC as i32);
        assert_eq!(bytes(&m), b"{\"a\":1}");
        mcp_line_reader_free(r);
    }
}

#[test]
fn too_long_items_have_no_data() {
    unsafe {
        let r = mcp_line_reader_new();
        assert_eq!(mcp_line_reader_set_max_line_len(r, 4), MCP_STATUS_OK);
        let input = b"123456789\n[1]\n";
        assert_eq!(mcp_line_reader_feed(r, input.as_ptr(), 6), MCP_STATUS_OK);
        assert_eq!(
            mcp_line_reader_buffered_len(r),
            0,
            "the dropped part is not held"
        );
        assert_eq!(
            mcp_line_reader_feed(r, input[6..].as_ptr(), input.len() - 6),
            MCP_STATUS_OK
        );
        let mut m = message();
        assert_eq!(mcp_line_reader_next_message(r, &mut m), MCP_STATUS_OK);
        assert_eq!(m.kind, McpMessageKind::MCP_MESSAGE_TOO_LONG as i32);
        assert!(m.data.is_null());
        assert_eq!(m.len, 6);
        assert_eq!(mcp_line_reader_next_message(r, &mut m), MCP_STATUS_OK);
        assert_eq!(bytes(&m), b"[1]");
        mcp_line_reader_free(r);
    }
}

/// A message's data fed back into its own reader: the bytes are taken
/// before the buffer grows (Miri and ASan see a use after free otherwise)...
#[test]
fn a_message_fed_back_into_its_reader_survives_growth() {
    unsafe {
        let r = mcp_line_reader_new();
        // The tail is longer than what is consumed: nothing is compacted, and
        // the buffer, sized for this chunk, must grow for three more bytes.
        let input = b"[1]\n[2,3,4,5,6,";
        assert_eq!(
            mcp_line_reader_feed(r, input.as_ptr(), input.len()),
            MCP_STATUS_OK
        );
        let mut m = message();
        assert_eq!(mcp_line_reader_next_message(r, &mut m), MCP_STATUS_OK);
        assert_eq!(mcp_line_reader_feed(r, m.data, m.len), MCP_STATUS_OK);
        assert_eq!(mcp_line_reader_feed(r, b"]\n".as_ptr(), 2), MCP_STATUS_OK);
        assert_eq!(mcp_line_reader_next_message(r, &mut m), MCP_STATUS_OK);
        assert_eq!(bytes(&m), b"[2,3,4,5,6,[1]]");
        mcp_line_reader_free(r);
    }
}

/// ...and before the unconsumed tail moves over them.
#[test]
fn a_message_fed_back_into_its_reader_survives_compaction() {
    unsafe {
        let r = mcp_line_reader_new();
        assert_eq!(
            mcp_line_reader_feed(r, b"[1]\n[2,".as_ptr(), 7),
            MCP_STATUS_OK
        );
        let mut m = message();
        assert_eq!(mcp_line_reader_next_message(r, &mut m), MCP_STATUS_OK);
        assert_eq!(bytes(&m), b"[1]");
        // Feeding first moves the tail `[2,` to the buffer's start, where `[1]` is.
        assert_eq!(mcp_line_reader_feed(r, m.data, m.len), MCP_STATUS_OK);
        assert_eq!(mcp_line_reader_feed(r, b"]\n".as_ptr(), 2), MCP_STATUS_OK);
        assert_eq!(mcp_line_reader_next_message(r, &mut m), MCP_STATUS_OK);
        assert_eq!(bytes(&m), b"[2,[1]]");
        mcp_line_reader_free(r);
    }
}

/// A NULL or poisoned reader is reported first, whatever the other arguments.
#[test]
fn the_reader_is_checked_before_the_other_arguments() {
    unsafe {
        let null = ptr::null_mut::<McpLineReader>();
        assert_eq!(
            mcp_line_reader_feed(null, ptr::null(), 5),
            MCP_STATUS_NULL_ARGUMENT
        );
        assert_eq!(
            mcp_line_reader_next_message(null, ptr::null_mut()),
            MCP_STATUS_NULL_ARGUMENT
        );
        let r = mcp_line_reader_new();
        with_panic_in(c"mcp_line_reader_finish", || mcp_line_reader_finish(r));
        assert_eq!(mcp_line_reader_feed(r, ptr::null(), 5), MCP_STATUS_POISONED);
        assert_eq!(
            mcp_line_reader_feed(r, b"x".as_ptr(), usize::MAX),
            MCP_STATUS_POISONED
        );
        assert_eq!(
            mcp_line_reader_next_message(r, ptr::null_mut()),
            MCP_STATUS_POISONED
        );
        assert_eq!(mcp_line_reader_set_max_line_len(r, 0), MCP_STATUS_POISONED);
        assert_eq!(mcp_line_reader_set_flags(r, u32::MAX), MCP_STATUS_POISONED);
        mcp_line_reader_free(r);
        // A good reader with bad arguments: the argument errors.
        let r = mcp_line_reader_new();
        assert_eq!(
            mcp_line_reader_feed(r, ptr::null(), 5),
            MCP_STATUS_NULL_ARGUMENT
        );
        assert_eq!(
            mcp_line_reader_feed(r, b"x".as_ptr(), usize::MAX),
            MCP_STATUS_INVALID_ARGUMENT
        );
        assert_eq!(
            mcp_line_reader_next_message(r, ptr::null_mut()),
            MCP_STATUS_NULL_ARGUMENT
        );
        mcp_line_reader_free(r);
    }
}

#[test]
fn null_and_empty_arguments() {
    unsafe {
        let mut m = message();
        let mut buf = McpBuffer {
            data: ptr::null_mut(),
            len: 0,
        };
        let null = ptr::null_mut::<McpLineReader>();
        assert_eq!(
            mcp_line_reader_set_max_line_len(null, 10),
            MCP_STATUS_NULL_ARGUMENT
        );
        assert_eq!(mcp_line_reader_set_flags(null, 0), MCP_STATUS_NULL_ARGUMENT);
        assert_eq!(
            mcp_line_reader_feed(null, b"x".as_ptr(), 1),
            MCP_STATUS_NULL_ARGUMENT
        );
        assert_eq!(
            mcp_line_reader_next_message(null, &mut m),
            MCP_STATUS_NULL_ARGUMENT
        );
        assert_eq!(mcp_line_reader_finish(null), MCP_STATUS_NULL_ARGUMENT);
        assert_eq!(mcp_line_reader_buffered_len(null), 0);
        mcp_line_reader_free(null);

        let r = mcp_line_reader_new();
        assert_eq!(mcp_line_reader_feed(r, ptr::null(), 0), MCP_STATUS_OK);
        assert_eq!(
            mcp_line_reader_feed(r, ptr::null(), 3),
            MCP_STATUS_NULL_ARGUMENT
        );
        assert_eq!(
            mcp_line_reader_next_message(r, ptr::null_mut()),
            MCP_STATUS_NULL_ARGUMENT
        );
        assert_eq!(
            mcp_line_reader_set_max_line_len(r, 0),
            MCP_STATUS_INVALID_ARGUMENT
        );
        assert_eq!(
            mcp_line_reader_set_max_line_len(r, usize::MAX),
            MCP_STATUS_OK
        );
        assert_eq!(mcp_line_reader_set_flags(r, 4), MCP_STATUS_UNKNOWN_FLAGS);
        assert_eq!(mcp_line_reader_set_flags(r, 3), MCP_STATUS_OK);
        assert_eq!(mcp_line_reader_buffered_len(r), 0);
        mcp_line_reader_free(r);

        assert_eq!(
            mcp_encode(ptr::null(), 0, 0, &mut buf),
            MCP_STATUS_INVALID_JSON
        );
        assert_eq!(
            mcp_encode(ptr::null(), 2, 0, &mut buf),
            MCP_STATUS_NULL_ARGUMENT
        );
        assert_eq!(
            mcp_encode(b"1".as_ptr(), 1, 0, ptr::null_mut()),
            MCP_STATUS_NULL_ARGUMENT
        );
        assert_eq!(
            mcp_encode(b"1".as_ptr(), 1, 2, &mut buf),
            MCP_STATUS_UNKNOWN_FLAGS
        );
        assert!(
            buf.data.is_null() && buf.len == 0,
            "*out untouched on errors"
        );
        mcp_buffer_free(ptr::null_mut());
        mcp_buffer_free(&mut buf);
    }
}

#[test]
fn encode_buffer_is_owned_and_freed_by_the_library() {
    unsafe {
        let mut buf = McpBuffer {
            data: ptr::null_mut(),
            len: 0,
        };
        let json = "{ \"t\" : \"é\u{2028}\" }".as_bytes();
        assert_eq!(
            mcp_encode(json.as_ptr(), json.len(), 0, &mut buf),
            MCP_STATUS_OK
        );
        let line = std::slice::from_raw_parts(buf.data, buf.len);
        assert_eq!(line, "{\"t\":\"é\\u2028\"}\n".as_bytes());
        mcp_buffer_free(&mut buf);
        assert!(buf.data.is_null() && buf.len == 0);
        mcp_buffer_free(&mut buf); // twice is harmless

        assert_eq!(
            mcp_encode(json.as_ptr(), json.len(), MCP_ENCODE_ASCII, &mut buf),
            MCP_STATUS_OK
        );
        let line = std::slice::from_raw_parts(buf.data, buf.len);
        assert_eq!(line, b"{\"t\":\"\\u00e9\\u2028\"}\n");
        mcp_buffer_free(&mut buf);
    }
}

#[test]
fn status_strings_and_versions() {
    for code in -10..10 {
        let s = unsafe { CStr::from_ptr(mcp_status_str(code)) };
        assert!(!s.to_bytes().is_empty());
    }
    let version = unsafe { CStr::from_ptr(mcp_stdio_version()) };
    assert_eq!(version.to_str().unwrap(), env!("CARGO_PKG_VERSION"));
    assert_eq!(mcp_stdio_abi_version(), MCP_STDIO_ABI_VERSION);
    assert_eq!(
        MCP_STDIO_ABI_VERSION.to_string(),
        env!("CARGO_PKG_VERSION_MAJOR"),
        "the ABI version is the crate's major version (the SONAME number)"
    );
    assert_eq!(MCP_READER_DEFAULT_MAX_LINE_LEN, crate::DEFAULT_MAX_LINE_LEN);
}

/// Every status the header publishes has its own description, and codes it
/// does not publish are "unknown": the header (generated from the enum) and
/// the list the descriptions come from agree.
#[test]
fn every_status_in_the_header_has_its_own_description() {
    let header = include_str!(concat!(env!("OUT_DIR"), "/mcp_stdio.h"));
    // Under Miri, where going through the 70 kB header line by line takes
    // half a minute, only the lines of `enum McpStatus` (the native run
    // reads every line: a status published anywhere else is seen there),
    // found with memchr's search (`str::find` takes 15 s with Tree Borrows).
    let searched = if cfg!(miri) {
        let find = |text: &str, what: &str| memchr::memmem::find(text.as_bytes(), what.as_bytes());
        let start = find(header, "enum McpStatus").expect("enum McpStatus");
        let len = find(&header[start..], "};").expect("the end of enum McpStatus");
        &header[start..start + len]
    } else {
        header
    };
    let published: Vec<(String, i32)> = searched
        .lines()
        .filter_map(|line| {
            let (name, value) = line.trim().trim_end_matches(',').split_once(" = ")?;
            name.starts_with("MCP_STATUS_")
                .then(|| (name.to_string(), value.parse().ok()))?
                .1
                .map(|code| (name.to_string(), code))
        })
        .collect();
    assert_eq!(published.len(), McpStatus::ALL.len(), "{published:?}");
    let describe = |code: i32| unsafe { CStr::from_ptr(mcp_status_str(code)) };
    let unknown = describe(1000);
    let mut seen = std::collections::HashSet::new();
    for (name, code) in &published {
        let status = McpStatus::from_code(*code).unwrap_or_else(|| panic!("{name}"));
        assert_eq!(format!("{status:?}"), *name);
        assert_ne!(describe(*code), unknown, "{name}");
        assert!(
            seen.insert(describe(*code)),
            "{name}: a description of its own"
        );
    }
    for code in -100..100 {
        if !published.iter().any(|&(_, c)| c == code) {
            assert_eq!(describe(code), unknown, "{code}");
        }
    }
}

/// Arms a panic in `entry` for this thread, runs `f`, disarms.
fn with_panic_in<T>(entry: &CStr, f: impl FnOnce() -> T) -> T {
    unsafe { mcp_test_inject_panic(entry.as_ptr()) };
    let out = f();
    unsafe { mcp_test_inject_panic(ptr::null()) };
    out
}

#[test]
fn a_panic_in_a_reader_call_is_caught_and_poisons_that_reader() {
    type ReaderCall = unsafe fn(*mut McpLineReader) -> McpStatus;
    let calls: [(&CStr, ReaderCall); 5] = [
        (c"mcp_line_reader_feed", |r| unsafe {
            mcp_line_reader_feed(r, b"1\n".as_ptr(), 2)
        }),
        (c"mcp_line_reader_next_message", |r| unsafe {
            mcp_line_reader_next_message(r, &mut message())
        }),
        (c"mcp_line_reader_finish", |r| unsafe {
            mcp_line_reader_finish(r)
        }),
        (c"mcp_line_reader_set_flags", |r| unsafe {
            mcp_line_reader_set_flags(r, 0)
        }),
        (c"mcp_line_reader_set_max_line_len", |r| unsafe {
            mcp_line_reader_set_max_line_len(r, 9)
        }),
    ];
    for (name, call) in calls {
        unsafe {
            let r = mcp_line_reader_new();
            assert_eq!(
                mcp_line_reader_feed(r, b"[1]\n[2".as_ptr(), 6),
                MCP_STATUS_OK
            );
            assert_eq!(
                with_panic_in(name, || call(r)),
                MCP_STATUS_PANIC,
                "{name:?}"
            );
            // The reader refuses further use, whatever the call; freeing it still works.
            for (_, other) in calls {
                assert_eq!(other(r), MCP_STATUS_POISONED, "{name:?}");
            }
            let mut e = sentinel_envelope();
            assert_eq!(mcp_line_reader_envelope(r, &mut e), MCP_STATUS_POISONED);
            assert!(is_sentinel(&e));
            assert_eq!(mcp_line_reader_buffered_len(r), 0);
            mcp_line_reader_free(r);
            // Other readers are unaffected.
            let fresh = mcp_line_reader_new();
            assert_eq!(
                call(fresh),
                if name == c"mcp_line_reader_next_message" {
                    MCP_STATUS_NO_MESSAGE
                } else {
                    MCP_STATUS_OK
                }
            );
            mcp_line_reader_free(fresh);
        }
    }
}

#[test]
fn a_panic_elsewhere_is_caught_too() {
    unsafe {
        let r = with_panic_in(c"mcp_line_reader_new", || mcp_line_reader_new());
        assert!(r.is_null());
        let mut buf = McpBuffer {
            data: ptr::null_mut(),
            len: 0,
        };
        let status = with_panic_in(c"mcp_encode", || mcp_encode(b"[]".as_ptr(), 2, 0, &mut buf));
        assert_eq!(status, MCP_STATUS_PANIC);
        assert!(buf.data.is_null());

        let r = mcp_line_reader_new();
        let held = with_panic_in(c"mcp_line_reader_buffered_len", || {
            mcp_line_reader_buffered_len(r)
        });
        assert_eq!(held, 0);
        // buffered_len only reads: the reader is still usable.
        assert_eq!(mcp_line_reader_feed(r, b"{}\n".as_ptr(), 3), MCP_STATUS_OK);
        // A panic after the memory is given back: nothing leaks, nothing crashes.
        with_panic_in(c"mcp_line_reader_free", || mcp_line_reader_free(r));

        assert_eq!(mcp_encode(b"[]".as_ptr(), 2, 0, &mut buf), MCP_STATUS_OK);
        with_panic_in(c"mcp_buffer_free", || mcp_buffer_free(&mut buf));
        assert!(buf.data.is_null() && buf.len == 0);
    }
}

#[test]
fn readers_may_move_between_threads() {
    fn send<T: Send>() {}
    send::<McpLineReader>();
    send::<crate::LineReader>();
}

// ---- envelopes ----------------------------------------------------------

fn sentinel_envelope() -> McpEnvelope {
    let odd = McpSlice {
        data: ptr::dangling(),
        len: 77,
    };
    McpEnvelope {
        rpc_kind: -1,
        id: odd,
        method: odd,
        params: odd,
        result: odd,
        error: odd,
    }
}

fn is_sentinel(e: &McpEnvelope) -> bool {
    let s = sentinel_envelope();
    e.rpc_kind == s.rpc_kind && [e.id, e.method, e.params, e.result, e.error] == [s.id; 5]
}

fn is_absent(s: McpSlice) -> bool {
    s.data.is_null() && s.len == 0
}

/// The bytes of a present slice, checked to lie inside `within`.
fn slice_in(s: McpSlice, within: &[u8]) -> &[u8] {
    assert!(!s.data.is_null() && s.len > 0);
    let (at, base) = (s.data as usize, within.as_ptr() as usize);
    assert!(
        at >= base && at + s.len <= base + within.len(),
        "points into the input"
    );
    // SAFETY: inside `within`, just checked.
    unsafe { std::slice::from_raw_parts(s.data, s.len) }
}

#[test]
fn envelope_parse_points_into_the_input() {
    let json = b" {\"jsonrpc\":\"2.0\",\"id\":\"a\",\"method\":\"tools\\/call\",\"params\":[1]}\n";
    let mut e = sentinel_envelope();
    assert_eq!(
        unsafe { mcp_envelope_parse(json.as_ptr(), json.len(), &mut e) },
        MCP_STATUS_OK
    );
    assert_eq!(e.rpc_kind, McpRpcKind::MCP_RPC_REQUEST as i32);
    assert_eq!(slice_in(e.id, json), b"\"a\"");
    let method = slice_in(e.method, json);
    assert_eq!(method, b"\"tools\\/call\"");
    assert_eq!(slice_in(e.params, json), b"[1]");
    assert!(is_absent(e.result) && is_absent(e.error));
    assert!(unsafe { mcp_json_string_eq(method.as_ptr(), method.len(), c"tools/call".as_ptr()) });

    let json = b"{\"jsonrpc\":\"2.0\",\"error\":{\"code\":1,\"message\":\"m\"},\"id\":null}";
    assert_eq!(
        unsafe { mcp_envelope_parse(json.as_ptr(), json.len(), &mut e) },
        MCP_STATUS_OK
    );
    assert_eq!(e.rpc_kind, McpRpcKind::MCP_RPC_ERROR as i32);
    assert_eq!(slice_in(e.id, json), b"null");
    assert_eq!(slice_in(e.error, json), b"{\"code\":1,\"message\":\"m\"}");
    assert!(is_absent(e.method) && is_absent(e.params) && is_absent(e.result));

    // Batches and other JSON: no kind, no member.
    for json in [
        &b"[{\"jsonrpc\":\"2.0\",\"method\":\"a\"}]"[..],
        b"{\"id\":1}",
        b"7",
    ] {
        let mut e = sentinel_envelope();
        assert_eq!(
            unsafe { mcp_envelope_parse(json.as_ptr(), json.len(), &mut e) },
            MCP_STATUS_OK
        );
        assert_eq!(e.rpc_kind, McpRpcKind::MCP_RPC_NONE as i32);
        assert!([e.id, e.method, e.params, e.result, e.error]
            .into_iter()
            .all(is_absent));
    }
}

#[test]
fn envelope_parse_arguments() {
    unsafe {
        let mut e = sentinel_envelope();
        assert_eq!(
            mcp_envelope_parse(ptr::null(), 0, &mut e),
            MCP_STATUS_INVALID_JSON
        );
        assert_eq!(
            mcp_envelope_parse(ptr::null(), 3, &mut e),
            MCP_STATUS_NULL_ARGUMENT
        );
        assert_eq!(
            mcp_envelope_parse(b"{}".as_ptr(), 2, ptr::null_mut()),
            MCP_STATUS_NULL_ARGUMENT
        );
        assert_eq!(
            mcp_envelope_parse(ptr::null(), 0, ptr::null_mut()),
            MCP_STATUS_NULL_ARGUMENT
        );
        assert_eq!(
            mcp_envelope_parse(b"{}".as_ptr(), usize::MAX, &mut e),
            MCP_STATUS_INVALID_ARGUMENT
        );
        assert_eq!(
            mcp_envelope_parse(b"{} x".as_ptr(), 4, &mut e),
            MCP_STATUS_INVALID_JSON
        );
        assert!(is_sentinel(&e), "*out untouched on errors");
    }
}

#[test]
fn json_string_eq_arguments() {
    unsafe {
        let token = b"\"\\u0070ing\"";
        assert!(mcp_json_string_eq(
            token.as_ptr(),
            token.len(),
            c"ping".as_ptr()
        ));
        assert!(!mcp_json_string_eq(
            token.as_ptr(),
            token.len(),
            c"pin".as_ptr()
        ));
        assert!(!mcp_json_string_eq(
            token.as_ptr(),
            token.len(),
            ptr::null()
        ));
        assert!(!mcp_json_string_eq(ptr::null(), 5, c"ping".as_ptr()));
        assert!(!mcp_json_string_eq(ptr::null(), 0, c"".as_ptr()));
        assert!(!mcp_json_string_eq(
            token.as_ptr(),
            usize::MAX,
            c"ping".as_ptr()
        ));
        assert!(mcp_json_string_eq(b"\"\"".as_ptr(), 2, c"".as_ptr()));
        let pair = b"\"\\ud83d\\ude00\"";
        assert!(mcp_json_string_eq(
            pair.as_ptr(),
            pair.len(),
            c"\u{1F600}".as_ptr()
        ));
        assert!(!mcp_json_string_eq(pair.as_ptr(), 8, c"".as_ptr()));
    }
}

#[test]
fn the_reader_envelope_is_that_of_the_message_just_taken() {
    unsafe {
        let r = mcp_line_reader_new();
        let mut e = sentinel_envelope();
        assert_eq!(mcp_line_reader_envelope(r, &mut e), MCP_STATUS_OK);
        assert_eq!(e.rpc_kind, McpRpcKind::MCP_RPC_NONE as i32);
        assert!(is_absent(e.id));
        assert_eq!(
            mcp_line_reader_set_flags(r, MCP_READER_JSONRPC),
            MCP_STATUS_OK
        );
        let input = b"{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"ok\":true}}\n[1]\n{\"id\"";
        assert_eq!(
            mcp_line_reader_feed(r, input.as_ptr(), input.len()),
            MCP_STATUS_OK
        );
        let mut m = message();
        assert_eq!(mcp_line_reader_next_message(r, &mut m), MCP_STATUS_OK);
        assert_eq!(mcp_line_reader_envelope(r, &mut e), MCP_STATUS_OK);
        assert_eq!(e.rpc_kind, McpRpcKind::MCP_RPC_RESPONSE as i32);
        // The members are inside the message's data, which stays valid.
        let data = bytes(&m);
        assert_eq!(slice_in(e.id, data), b"3");
        assert_eq!(slice_in(e.result, data), b"{\"ok\":true}");
        assert!(is_absent(e.method));
        assert_eq!(
            data,
            b"{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"ok\":true}}"
        );
        // An invalid JSON-RPC item has none; nor has the reader after a feed.
        assert_eq!(mcp_line_reader_next_message(r, &mut m), MCP_STATUS_OK);
        assert_eq!(mcp_line_reader_envelope(r, &mut e), MCP_STATUS_OK);
        assert_eq!(e.rpc_kind, McpRpcKind::MCP_RPC_NONE as i32);
        assert!(is_absent(e.result));
        assert_eq!(mcp_line_reader_feed(r, b":1}\n".as_ptr(), 4), MCP_STATUS_OK);
        let mut e = sentinel_envelope();
        assert_eq!(mcp_line_reader_envelope(r, &mut e), MCP_STATUS_OK);
        assert_eq!(e.rpc_kind, McpRpcKind::MCP_RPC_NONE as i32);
        mcp_line_reader_free(r);
    }
}

#[test]
fn reader_envelope_arguments() {
    unsafe {
        let mut e = sentinel_envelope();
        assert_eq!(
            mcp_line_reader_envelope(ptr::null(), &mut e),
            MCP_STATUS_NULL_ARGUMENT
        );
        assert_eq!(
            mcp_line_reader_envelope(ptr::null(), ptr::null_mut()),
            MCP_STATUS_NULL_ARGUMENT
        );
        let r = mcp_line_reader_new();
        assert_eq!(
            mcp_line_reader_envelope(r, ptr::null_mut()),
            MCP_STATUS_NULL_ARGUMENT
        );
        with_panic_in(c"mcp_line_reader_finish", || mcp_line_reader_finish(r));
        assert_eq!(
            mcp_line_reader_envelope(r, ptr::null_mut()),
            MCP_STATUS_POISONED,
            "the reader first"
        );
        assert_eq!(mcp_line_reader_envelope(r, &mut e), MCP_STATUS_POISONED);
        assert!(is_sentinel(&e));
        mcp_line_reader_free(r);
    }
}

#[test]
fn a_panic_in_an_envelope_function_is_caught() {
    unsafe {
        let json = b"{\"jsonrpc\":\"2.0\",\"method\":\"m\"}";
        let mut e = sentinel_envelope();
        let status = with_panic_in(c"mcp_envelope_parse", || {
            mcp_envelope_parse(json.as_ptr(), json.len(), &mut e)
        });
        assert_eq!(status, MCP_STATUS_PANIC);
        assert!(is_sentinel(&e));

        let eq = with_panic_in(c"mcp_json_string_eq", || {
            mcp_json_string_eq(b"\"m\"".as_ptr(), 3, c"m".as_ptr())
        });
        assert!(!eq, "the panic value is false");

        // Reading the envelope changes nothing: a panic there poisons nothing.
        let r = mcp_line_reader_new();
        assert_eq!(
            mcp_line_reader_set_flags(r, MCP_READER_JSONRPC),
            MCP_STATUS_OK
        );
        let line = b"{\"jsonrpc\":\"2.0\",\"method\":\"m\"}\n";
        assert_eq!(
            mcp_line_reader_feed(r, line.as_ptr(), line.len()),
            MCP_STATUS_OK
        );
        let mut m = message();
        assert_eq!(mcp_line_reader_next_message(r, &mut m), MCP_STATUS_OK);
        let status = with_panic_in(c"mcp_line_reader_envelope", || {
            mcp_line_reader_envelope(r, &mut e)
        });
        assert_eq!(status, MCP_STATUS_PANIC);
        assert!(is_sentinel(&e));
        assert_eq!(mcp_line_reader_envelope(r, &mut e), MCP_STATUS_OK);
        assert_eq!(e.rpc_kind, McpRpcKind::MCP_RPC_NOTIFICATION as i32);
        assert_eq!(slice_in(e.method, bytes(&m)), b"\"m\"");
        mcp_line_reader_free(r);
    }
}
