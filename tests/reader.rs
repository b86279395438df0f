//! The reader's framing rules, one edge case at a time.

mod common;

use common::{drain, read_chunked, read_whole, reader, Item, Settings};
use mcp_stdio::{LineReader, Message};

fn json(line: &str) -> Item {
    Item::Json(line.as_bytes().to_vec(), None)
}

fn parse_error(line: &[u8]) -> Item {
    Item::ParseError(line.to_vec())
}

/// All the ways of cutting `stream` in two and in three (and into single
/// bytes) give `expected`.
fn assert_any_chunking(s: Settings, stream: &[u8], expected: &[Item]) {
    assert_eq!(read_whole(s, stream), expected, "whole");
    let bytes: Vec<usize> = (1..stream.len()).collect();
    assert_eq!(read_chunked(s, stream, &bytes), expected, "byte by byte");
    for a in 0..=stream.len() {
        assert_eq!(read_chunked(s, stream, &[a]), expected, "cut at {a}");
        if stream.len() <= 64 {
            for b in a..=stream.len() {
                assert_eq!(
                    read_chunked(s, stream, &[a, b]),
                    expected,
                    "cuts at {a}, {b}"
                );
            }
        }
    }
}

#[test]
fn lines_end_at_newline_and_crlf_is_trimmed() {
    let stream = b"{\"a\":1}\r\n  [2]\t\r\n\"x\"";
    assert_any_chunking(
        Settings::default(),
        stream,
        &[json("{\"a\":1}"), json("[2]"), json("\"x\"")],
    );
}

#[test]
fn empty_and_whitespace_only_lines_are_skipped() {
    let stream = b"\n\n \t\r\n\r\n1\n\n   \n2\r\n \t";
    assert_any_chunking(Settings::default(), stream, &[json("1"), json("2")]);
}

#[test]
fn only_json_whitespace_is_trimmed() {
    // Form feed, vertical tab, NBSP and NUL are not whitespace: parse errors, kept as they are.
    for line in [
        &b"\x0c1"[..],
        b"1\x0b",
        b"\xc2\xa01",
        b"1\0",
        b"\xe2\x80\xa81",
    ] {
        let mut stream = line.to_vec();
        stream.push(b'\n');
        assert_eq!(
            read_whole(Settings::default(), &stream),
            [parse_error(line)]
        );
    }
}

#[test]
fn a_bare_cr_does_not_end_a_line() {
    let stream = b"{\"a\":1}\r{\"b\":2}\n3\n";
    assert_any_chunking(
        Settings::default(),
        stream,
        &[parse_error(b"{\"a\":1}\r{\"b\":2}"), json("3")],
    );
}

#[test]
fn stray_output_between_messages_is_reported_in_order() {
    let stream = b"Server starting...\n{\"id\":1}\nDEBUG: x=1\n{\"id\":2}\n";
    assert_any_chunking(
        Settings::default(),
        stream,
        &[
            parse_error(b"Server starting..."),
            json("{\"id\":1}"),
            parse_error(b"DEBUG: x=1"),
            json("{\"id\":2}"),
        ],
    );
    let skip = Settings {
        skip_invalid: true,
        ..Settings::default()
    };
    assert_any_chunking(skip, stream, &[json("{\"id\":1}"), json("{\"id\":2}")]);
}

#[test]
fn a_bom_opening_the_stream_is_skipped_even_split_across_feeds() {
    let stream = b"\xEF\xBB\xBF{\"id\":1}\n\xEF\xBB\xBF{\"id\":2}\n";
    assert_any_chunking(
        Settings::default(),
        stream,
        &[json("{\"id\":1}"), parse_error(b"\xEF\xBB\xBF{\"id\":2}")],
    );
    // A BOM alone, a partial BOM, a BOM followed by whitespace.
    assert_any_chunking(Settings::default(), b"\xEF\xBB\xBF", &[]);
    assert_any_chunking(
        Settings::default(),
        b"\xEF\xBB",
        &[parse_error(b"\xEF\xBB")],
    );
    assert_any_chunking(
        Settings::default(),
        b"\xEF\xBBx\n",
        &[parse_error(b"\xEF\xBBx")],
    );
    assert_any_chunking(Settings::default(), b"\xEF\xBB\xBF \r\n7", &[json("7")]);
    // Only the very first bytes: after an empty line it is data.
    assert_any_chunking(
        Settings::default(),
        b"\n\xEF\xBB\xBF1\n",
        &[parse_error(b"\xEF\xBB\xBF1")],
    );
}

#[test]
fn a_final_line_without_newline_waits_for_finish() {
    let mut r = LineReader::new();
    r.feed(b"[1]\n[2]").unwrap();
    assert_eq!(drain(&mut r), [json("[1]")]);
    assert_eq!(r.buffered_len(), 3);
    r.finish().unwrap();
    assert_eq!(r.buffered_len(), 3);
    assert_eq!(drain(&mut r), [json("[2]")]);
    assert_eq!(r.buffered_len(), 0);
    // finish twice, or on nothing: nothing more.
    r.finish().unwrap();
    assert_eq!(drain(&mut r), []);
    // The reader stays usable, and what comes next is a new line.
    r.feed(b"[3").unwrap();
    r.finish().unwrap();
    r.feed(b"[4]\n").unwrap();
    assert_eq!(drain(&mut r), [parse_error(b"[3"), json("[4]")]);
}

#[test]
fn a_bom_is_skipped_after_a_finish_that_came_before_any_byte() {
    // "The very first three bytes the reader ever receives."
    let mut r = LineReader::new();
    r.feed(b"").unwrap();
    r.finish().unwrap();
    r.feed(b"\xEF\xBB\xBF{}\n").unwrap();
    assert_eq!(drain(&mut r), [json("{}")]);
    // Once a byte has been received, it is data.
    let mut r = LineReader::new();
    r.feed(b"\xEF").unwrap();
    r.finish().unwrap();
    r.feed(b"\xEF\xBB\xBF{}\n").unwrap();
    assert_eq!(
        drain(&mut r),
        [parse_error(b"\xEF"), parse_error(b"\xEF\xBB\xBF{}")]
    );
}

#[test]
fn finish_before_taking_keeps_lines_apart() {
    let mut r = LineReader::new();
    r.feed(b"1").unwrap();
    r.finish().unwrap();
    r.feed(b"2\n3").unwrap();
    r.finish().unwrap();
    assert_eq!(drain(&mut r), [json("1"), json("2"), json("3")]);
}

#[test]
fn buffered_len_counts_what_no_item_consumed() {
    let mut r = LineReader::new();
    assert_eq!(r.buffered_len(), 0);
    r.feed(b"\xEF\xBB").unwrap();
    assert_eq!(r.buffered_len(), 2, "a possible BOM is held");
    r.feed(b"\xBF").unwrap();
    assert_eq!(r.buffered_len(), 0, "a skipped BOM is not counted");
    r.feed(b"{\"id\":1}\n{\"id\"").unwrap();
    assert_eq!(r.buffered_len(), 14);
    assert_eq!(drain(&mut r).len(), 1);
    assert_eq!(r.buffered_len(), 5);
}

#[test]
fn a_four_byte_character_split_at_every_boundary() {
    let stream = "{\"emoji\":\"😀\",\"é\":\"✓\"}\n".as_bytes();
    assert_any_chunking(
        Settings::default(),
        stream,
        &[json("{\"emoji\":\"😀\",\"é\":\"✓\"}")],
    );
}

fn limited(n: usize) -> Settings {
    Settings {
        max_line_len: Some(n),
        ..Settings::default()
    }
}

#[test]
fn the_line_limit_counts_raw_bytes_before_the_newline() {
    // Exactly the limit is allowed, one byte more is too long; \r and spaces count.
    assert_any_chunking(limited(5), b"[123]\n", &[json("[123]")]);
    assert_any_chunking(limited(5), b"[1234]\n[1]\n", &[Item::TooLong, json("[1]")]);
    assert_any_chunking(limited(5), b"[123]\r\n", &[Item::TooLong]);
    assert_any_chunking(limited(5), b" [12]\n", &[json("[12]")]);
    assert_any_chunking(limited(5), b"  [12]\n", &[Item::TooLong]);
    // A whitespace-only line longer than the limit is still too long.
    assert_any_chunking(limited(3), b"      \n1\n", &[Item::TooLong, json("1")]);
    // The stream-opening BOM does not count.
    assert_any_chunking(limited(3), b"\xEF\xBB\xBF[1]\n", &[json("[1]")]);
}

#[test]
fn a_too_long_line_is_reported_once_and_reading_goes_on() {
    let long = format!("{{\"data\":\"{}\"}}", "x".repeat(100));
    let stream = format!("[1]\n{long}\n[2]\n{long}\n{long}\n[3]\n{long}");
    let expected = [
        json("[1]"),
        Item::TooLong,
        json("[2]"),
        Item::TooLong,
        Item::TooLong,
        json("[3]"),
        Item::TooLong,
    ];
    assert_any_chunking(limited(50), stream.as_bytes(), &expected);
    // Whatever the flags: data was lost and the host must know.
    for (skip_invalid, jsonrpc) in [(true, false), (false, true), (true, true)] {
        let s = Settings {
            max_line_len: Some(50),
            skip_invalid,
            jsonrpc,
        };
        let items = read_whole(s, stream.as_bytes());
        assert_eq!(items.iter().filter(|i| **i == Item::TooLong).count(), 4);
    }
}

#[test]
fn too_long_len_is_more_than_the_limit_and_at_most_the_line() {
    let line = [b'7'; 40];
    for chunk in [1, 3, 10, 41, 100] {
        let mut r = reader(limited(16));
        let mut lens = Vec::new();
        let mut stream = line.to_vec();
        stream.extend_from_slice(b"\n8\n");
        for piece in stream.chunks(chunk) {
            r.feed(piece).unwrap();
            while let Some(m) = r.next_message() {
                if let Message::TooLong { len } = m {
                    lens.push(len);
                } else {
                    assert_eq!(m.data(), Some(&b"8"[..]));
                }
            }
        }
        assert_eq!(lens.len(), 1, "chunk {chunk}");
        assert!(
            lens[0] > 16 && lens[0] <= 40,
            "chunk {chunk}: len {}",
            lens[0]
        );
    }
}

#[test]
fn finish_while_dropping_ends_the_line_and_yields_nothing_more() {
    let mut r = reader(limited(4));
    r.feed(b"[1,2,3,4,5").unwrap();
    assert!(matches!(
        r.next_message(),
        Some(Message::TooLong { len: 10 })
    ));
    r.feed(b",6,7]").unwrap();
    r.finish().unwrap();
    assert_eq!(drain(&mut r), []);
    r.feed(b"[9]\n").unwrap();
    assert_eq!(drain(&mut r), [json("[9]")]);
}

#[test]
fn items_wait_in_order_when_not_taken_between_feeds() {
    // Too-long reports and complete lines queue up until taken.
    let mut r = reader(limited(4));
    r.feed(b"[1]\n[2,2,2,2,2").unwrap();
    r.feed(b"2]\n[3]\n[4,4,4,4").unwrap();
    r.feed(b"\n[5]").unwrap();
    r.finish().unwrap();
    assert_eq!(
        drain(&mut r),
        [
            json("[1]"),
            Item::TooLong,
            json("[3]"),
            Item::TooLong,
            json("[5]")
        ]
    );
}

#[test]
fn no_limit_can_be_set() {
    let mut r = LineReader::new();
    assert_eq!(
        r.max_line_len().map(|n| n.get()),
        Some(mcp_stdio::DEFAULT_MAX_LINE_LEN)
    );
    r.set_max_line_len(None);
    assert_eq!(r.max_line_len(), None);
    let big = format!("\"{}\"\n", "y".repeat(70 << 20));
    r.feed(big.as_bytes()).unwrap();
    assert_eq!(r.next_message().map(|m| m.len()), Some(big.len() - 1));
}

#[test]
fn the_default_limit_accepts_a_50_mb_line() {
    let line = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{{\"blob\":\"{}\"}}}}",
        "QUJD".repeat(50 << 18)
    );
    let mut r = reader(Settings {
        jsonrpc: true,
        ..Settings::default()
    });
    for chunk in line.as_bytes().chunks(64 << 10) {
        r.feed(chunk).unwrap();
        assert_eq!(r.next_message(), None);
    }
    r.feed(b"\n").unwrap();
    let m = r.next_message().unwrap();
    assert_eq!(m.data().map(<[u8]>::len), Some(line.len()));
    assert_eq!(
        m,
        Message::Json {
            line: line.as_bytes(),
            rpc: Some(mcp_stdio::RpcKind::Response)
        }
    );
}

#[test]
fn memory_stays_bounded_by_the_limit_plus_a_chunk() {
    let limit = 1 << 16;
    let chunk = vec![b'a'; 4096];
    let mut r = reader(limited(limit));
    for _ in 0..4096 {
        // 16 MiB without a newline
        r.feed(&chunk).unwrap();
        assert!(
            r.capacity() <= 2 * (limit + chunk.len()),
            "capacity {}",
            r.capacity()
        );
        while r.next_message().is_some() {}
    }
    r.feed(b"\n{}\n").unwrap();
    assert_eq!(drain(&mut r), [json("{}")]);
}

#[test]
fn memory_is_given_back_after_a_big_line() {
    let mut r = LineReader::new();
    let big = format!("[\"{}\"]\n", "z".repeat(8 << 20));
    r.feed(big.as_bytes()).unwrap();
    assert!(r.capacity() >= 8 << 20);
    assert!(r.next_message().is_some());
    // The next call that consumes or feeds gives the memory back.
    assert_eq!(r.next_message(), None);
    assert!(r.capacity() < 1 << 20, "capacity {}", r.capacity());

    // Same after one huge chunk of small lines.
    let mut r = LineReader::new();
    let many: Vec<u8> = b"[1,2,3]\n".repeat(1 << 20);
    r.feed(&many).unwrap();
    assert_eq!(drain(&mut r).len(), 1 << 20);
    r.feed(b"[4]\n").unwrap();
    assert!(r.capacity() < 1 << 20, "capacity {}", r.capacity());
    assert_eq!(drain(&mut r), [json("[4]")]);

    // Same after a too-long line that had grown the buffer before it overflowed.
    let mut r = reader(limited(4 << 20));
    for _ in 0..80 {
        r.feed(&[b'q'; 64 << 10]).unwrap();
    }
    assert!(matches!(r.next_message(), Some(Message::TooLong { .. })));
    r.feed(b"\n[1]\n").unwrap();
    assert!(r.capacity() < 1 << 20, "capacity {}", r.capacity());
    assert_eq!(drain(&mut r), [json("[1]")]);
}

/// After a big line, what is still held keeps room to grow: a feed that
/// follows does not double the buffer past 1 MiB.
#[test]
fn memory_given_back_leaves_room_for_what_is_held() {
    for (held_kib, feed_kib) in [(600, 0), (600, 100), (900, 60), (100, 500)] {
        let mut r = LineReader::new();
        let mut stream = format!("[\"{}\"]\n", "b".repeat(3 << 20)).into_bytes();
        stream.extend(std::iter::repeat_n(b'h', held_kib << 10));
        r.feed(&stream).unwrap();
        assert!(r.next_message().is_some());
        r.feed(&vec![b'h'; (feed_kib << 10).max(8)]).unwrap();
        assert!(
            r.capacity() < 1 << 20,
            "held {held_kib} KiB, fed {feed_kib} KiB: capacity {}",
            r.capacity()
        );
        assert_eq!(r.buffered_len(), (held_kib << 10) + (feed_kib << 10).max(8));
    }
}

/// The rest of a too-long line arriving as one huge chunk is dropped, and
/// the memory that chunk needed is given back like a big line's.
#[test]
fn memory_is_given_back_after_a_huge_dropped_chunk() {
    for (ends_in_chunk, chunk_mib) in [(false, 32), (true, 32), (false, 64)] {
        let mut r = reader(limited(1 << 20));
        r.feed(&[b'q'; 2 << 20]).unwrap();
        assert!(matches!(r.next_message(), Some(Message::TooLong { .. })));
        let mut rest = vec![b'q'; chunk_mib << 20];
        if ends_in_chunk {
            rest.extend_from_slice(b"\n[0]\n");
        }
        r.feed(&rest).unwrap();
        drop(rest);
        // The next call that consumes gives the memory back...
        let first = r.next_message().map(|m| m.data().map(<[u8]>::to_vec));
        assert!(
            r.capacity() < 1 << 20,
            "{chunk_mib} MiB, end in chunk: {ends_in_chunk}: capacity {}",
            r.capacity()
        );
        assert_eq!(first, ends_in_chunk.then(|| Some(b"[0]".to_vec())));
        // ...and it stays given back over more rounds.
        for i in 1..=5 {
            r.feed(format!("\n[{i}]\n").as_bytes()).unwrap();
            assert_eq!(drain(&mut r), [json(&format!("[{i}]"))]);
            assert!(
                r.capacity() < 1 << 20,
                "round {i}: capacity {}",
                r.capacity()
            );
        }
    }
}

#[test]
fn a_message_borrows_the_reader_buffer_without_copying() {
    let mut r = LineReader::new();
    r.feed(b"  {\"k\":\"v\"}  \n").unwrap();
    let m = r.next_message().unwrap();
    // Exactly the received bytes, trimmed: no re-serialisation.
    assert_eq!(m.data(), Some(&b"{\"k\":\"v\"}"[..]));
    assert!(m.is_json() && !m.is_empty());
}

/// A source that hands out its bytes a few at a time and is sometimes interrupted.
struct Trickle<'a> {
    data: &'a [u8],
    calls: usize,
}

impl std::io::Read for Trickle<'_> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        self.calls += 1;
        if self.calls.is_multiple_of(3) {
            return Err(std::io::ErrorKind::Interrupted.into());
        }
        let n = (self.calls % 7 + 1).min(self.data.len()).min(out.len());
        out[..n].copy_from_slice(&self.data[..n]);
        self.data = &self.data[n..];
        Ok(n)
    }
}

#[test]
fn read_from_takes_bytes_straight_from_a_source() {
    let stream = "\u{feff}{\"a\":\"é😀\"}\r\njunk\n[1,2]".as_bytes();
    let mut source = Trickle {
        data: stream,
        calls: 0,
    };
    let mut r = LineReader::new();
    let mut items = Vec::new();
    let mut total = 0;
    loop {
        let n = r.read_from(&mut source).unwrap();
        total += n;
        items.extend(drain(&mut r));
        if n == 0 {
            break;
        }
    }
    r.finish().unwrap();
    items.extend(drain(&mut r));
    assert_eq!(total, stream.len());
    assert_eq!(items, read_whole(Settings::default(), stream));
    assert_eq!(items.len(), 3);
}
