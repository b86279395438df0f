//! Chunking invariance: any chunking of a stream gives the same items
//! (docs/contract.md §Reader: chunking).
//!
//! Input layout: `common::ChunkedInput` (limit, flags, split, chunk lengths,
//! stream); `split` is where the stream is cut for the finish-and-continue check.
//!
//! Readings compared, kinds, rpc kinds and data (a too-long item's `len` is
//! informational, so only its kind; its bounds are checked on their own):
//! 1. the whole stream in one feed, then finish;
//! 2. the chunks, taking items after every feed, then finish;
//! 3. the chunks, taking nothing until after finish;
//! 4. one byte per feed, taking items after every feed, then finish;
//! 5. feed(A), finish, feed(B), finish — which must give the items of A
//!    read alone, then those of `\n` + B read alone (§Reader: finish: what is fed
//!    starts a new line; the `\n` only stops B's BOM, which is no longer at
//!    the reader's start, from being skipped).
//!
//! Every reading is also checked line by line against the contract
//! (`common::check_against_lines`): too-long items with
//! `limit < len <= the line's full length` (§Reader: line limit, §Reader:
//! too-long lines), data and validity per the model. Readings 2 and 4 also
//! check `buffered_len` after each feed (§Reader: buffered_len).

#![no_main]

mod common;

use common::{
    check_against_lines, chunked_input, drain, drain_reported, expected_buffered_len, read_whole,
    read_whole_reported, reader, without_lens, ChunkedInput, Reported, Settings,
};
use libfuzzer_sys::fuzz_target;

/// Feeds `stream` in pieces of `lens` (cycling), taking items after every
/// feed when `take_each` (and checking `buffered_len` then), then finishes.
/// Every item, with its reported length.
fn read_chunked(s: Settings, stream: &[u8], lens: &[usize], take_each: bool) -> Vec<Reported> {
    let mut r = reader(s);
    let mut items = Vec::new();
    let mut from = 0;
    let mut line_start = 0; // just past the last `\n` fed
    for &len in lens.iter().cycle() {
        if from >= stream.len() {
            break;
        }
        let to = (from + len).min(stream.len());
        r.feed(&stream[from..to]).unwrap();
        if let Some(k) = stream[from..to].iter().rposition(|&b| b == b'\n') {
            line_start = from + k + 1;
        }
        from = to;
        if take_each {
            items.extend(drain_reported(&mut r));
            assert_eq!(
                r.buffered_len(),
                expected_buffered_len(s, stream, from, line_start),
                "buffered_len after {from} bytes"
            );
        }
    }
    r.finish().unwrap();
    items.extend(drain_reported(&mut r));
    assert_eq!(r.buffered_len(), 0, "buffered_len after finish");
    items
}

fuzz_target!(|data: &[u8]| {
    let Some(ChunkedInput {
        settings: s,
        split,
        lens,
        stream,
    }) = chunked_input(data)
    else {
        return;
    };

    let whole = read_whole_reported(s, stream);
    check_against_lines(s, stream, &whole);
    let whole = without_lens(&whole);

    let readings = [
        (
            "chunked, taking after each feed",
            read_chunked(s, stream, &lens, true),
        ),
        (
            "chunked, taking after finish",
            read_chunked(s, stream, &lens, false),
        ),
        ("one byte per feed", read_chunked(s, stream, &[1], true)),
    ];
    for (what, reported) in &readings {
        check_against_lines(s, stream, reported);
        // Kinds, rpc kinds and data: a too-long item's length may differ.
        let items = without_lens(reported);
        assert_eq!(items, whole, "{what}");
    }

    // Finish, then go on: a new line starts.
    let cut = usize::from(split) * stream.len() / 255;
    let (a, b) = stream.split_at(cut);
    let mut r = reader(s);
    r.feed(a).unwrap();
    let mut items = drain(&mut r);
    r.finish().unwrap();
    items.extend(drain(&mut r));
    r.feed(b).unwrap();
    items.extend(drain(&mut r));
    r.finish().unwrap();
    items.extend(drain(&mut r));
    let mut want = read_whole(s, a);
    // After a finish on a reader that has received nothing, B still opens
    // the stream (a BOM there is skipped); otherwise it starts a new line.
    let b_alone = if a.is_empty() {
        b.to_vec()
    } else {
        [b"\n".as_slice(), b].concat()
    };
    want.extend(read_whole(s, &b_alone));
    assert_eq!(items, want, "finish at {cut}");
});
