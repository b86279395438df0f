//! Stress: 8 threads at once, each with its own reader (C ABI) and calling
//! `mcp_encode` (plain and ASCII) concurrently with the others, each checking
//! its own results; then 8 readers handed from thread to thread around a ring
//! (a reader may move between threads, one at a time). Meant for
//! ThreadSanitizer too (see tests/hostile/README.md, "Stress tests"); no
//! global or thread-local state may make threads interfere.
#![cfg(feature = "capi")]

use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Barrier};
use std::thread;
use std::time::Instant;

use mcp_stdio::ffi::*;
use McpStatus::*;

const THREADS: usize = 8;
/// Messages per thread; fewer in debug builds (and so under TSan, which builds in debug).
const ROUNDS: usize = if cfg!(debug_assertions) { 600 } else { 5000 };

/// A pretty-printed JSON text for thread `t`, round `k`, with the compact and
/// the ASCII-escaped lines `mcp_encode` must make of it (without the `\n`).
fn sample(t: usize, k: usize) -> (Vec<u8>, Vec<u8>, Vec<u8>) {
    let pad = "q".repeat((t * 131 + k * 17) % 700);
    let ws = [" ", "\t", "\r\n", "  \n ", ""][(t + k) % 5];
    let pretty = format!(
        "{ws}{{{ws}\"jsonrpc\" :{ws}\"2.0\" , \"id\":{ws}{k} ,\n  \"method\" : \"tools/call\",{ws}\"params\" : {{ \"t\" : {t}, \
         \"s\" : \"é😀\u{2028}\\n\\u00e9\", \"a\" : [ 1 ,{ws}2.5e3 , true , null , {{ }} , [ ] ], \"pad\":\"{pad}\" }} }}{ws}"
    );
    let compact = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":{k},\"method\":\"tools/call\",\"params\":{{\"t\":{t},\
         \"s\":\"é😀\\u2028\\n\\u00e9\",\"a\":[1,2.5e3,true,null,{{}},[]],\"pad\":\"{pad}\"}}}}"
    );
    let ascii = compact
        .replace('é', "\\u00e9")
        .replace('😀', "\\ud83d\\ude00");
    (
        pretty.into_bytes(),
        compact.into_bytes(),
        ascii.into_bytes(),
    )
}

fn encode(input: &[u8], flags: u32) -> Result<Vec<u8>, McpStatus> {
    let mut buf = McpBuffer {
        data: std::ptr::null_mut(),
        len: 0,
    };
    let status = unsafe { mcp_encode(input.as_ptr(), input.len(), flags, &mut buf) };
    if status != MCP_STATUS_OK {
        assert!(buf.data.is_null(), "no output on failure");
        return Err(status);
    }
    let out = unsafe { std::slice::from_raw_parts(buf.data, buf.len) }.to_vec();
    unsafe { mcp_buffer_free(&mut buf) };
    assert!(buf.data.is_null() && buf.len == 0);
    Ok(out)
}

fn new_reader() -> *mut McpLineReader {
    let r = mcp_line_reader_new();
    assert!(!r.is_null());
    assert_eq!(
        unsafe { mcp_line_reader_set_flags(r, MCP_READER_JSONRPC) },
        MCP_STATUS_OK
    );
    r
}

/// Takes every item of `r`, checks each is the next of `want` (a JSON-RPC request).
fn take(r: *mut McpLineReader, want: &[Vec<u8>], next: &mut usize) {
    loop {
        let mut m = McpMessage {
            kind: -1,
            rpc_kind: -1,
            data: std::ptr::null(),
            len: 0,
        };
        match unsafe { mcp_line_reader_next_message(r, &mut m) } {
            MCP_STATUS_NO_MESSAGE => return,
            MCP_STATUS_OK => {}
            other => panic!("{other:?}"),
        }
        assert_eq!(m.kind, McpMessageKind::MCP_MESSAGE_JSON as i32);
        assert_eq!(m.rpc_kind, McpRpcKind::MCP_RPC_REQUEST as i32);
        let got = unsafe { std::slice::from_raw_parts(m.data, m.len) };
        assert_eq!(got, &want[*next][..], "item {next}");
        *next += 1;
    }
}

/// Phase 1: each thread encodes its messages and reads its own encoded stream back.
fn encode_and_read(t: usize, barrier: &Barrier) -> usize {
    let r = new_reader();
    barrier.wait();
    let mut next = 0;
    let mut want = Vec::with_capacity(ROUNDS);
    let mut bytes = 0;
    for k in 0..ROUNDS {
        let (pretty, compact, ascii) = sample(t, k);
        let line = encode(&pretty, 0).unwrap();
        assert_eq!(
            &line[..line.len() - 1],
            &compact[..],
            "thread {t} round {k}"
        );
        assert_eq!(line.last(), Some(&b'\n'));
        let ascii_line = encode(&pretty, MCP_ENCODE_ASCII).unwrap();
        assert_eq!(
            &ascii_line[..ascii_line.len() - 1],
            &ascii[..],
            "thread {t} round {k}"
        );
        assert!(ascii_line
            .iter()
            .all(|&b| b == b'\n' || (0x20..0x7f).contains(&b)));
        // Invalid input: an error, no output.
        assert_eq!(
            encode(&pretty[..pretty.len() / 2], 0),
            Err(MCP_STATUS_INVALID_JSON)
        );
        want.push(compact);
        // Feed the line in two odd pieces; take the items now and then.
        let cut = (t + k * 7) % line.len();
        for piece in [&line[..cut], &line[cut..]] {
            assert_eq!(
                unsafe { mcp_line_reader_feed(r, piece.as_ptr(), piece.len()) },
                MCP_STATUS_OK
            );
        }
        bytes += line.len();
        if k % 3 != 0 {
            take(r, &want, &mut next);
        }
    }
    take(r, &want, &mut next);
    assert_eq!(next, ROUNDS);
    unsafe { mcp_line_reader_free(r) };
    bytes
}

/// A reader travelling around the ring with its stream.
struct Token {
    reader: *mut McpLineReader,
    id: usize,
    stream: Arc<Vec<u8>>,
    want: Arc<Vec<Vec<u8>>>,
    sent: usize,
    next: usize,
    hops: usize,
}

// SAFETY: a reader may move between threads; the token is only ever used by
// the thread that holds it (the channel hands it over).
unsafe impl Send for Token {}

/// Phase 2: a thread of the ring feeds each reader it receives one piece, takes
/// its items, and passes it on; a reader whose stream is done goes to `done`.
fn ring_member(
    t: usize,
    inbox: Receiver<Option<Token>>,
    next: Sender<Option<Token>>,
    done: Sender<Token>,
) {
    while let Some(mut token) = inbox.recv().unwrap() {
        let size = 1 + (t * 13 + token.hops * 31 + token.id) % 997;
        let end = (token.sent + size).min(token.stream.len());
        let piece = &token.stream[token.sent..end];
        assert_eq!(
            unsafe { mcp_line_reader_feed(token.reader, piece.as_ptr(), piece.len()) },
            MCP_STATUS_OK
        );
        token.sent = end;
        token.hops += 1;
        take(token.reader, &token.want, &mut token.next);
        if token.sent == token.stream.len() {
            assert_eq!(
                unsafe { mcp_line_reader_finish(token.reader) },
                MCP_STATUS_OK
            );
            take(token.reader, &token.want, &mut token.next);
            done.send(token).unwrap();
        } else {
            next.send(Some(token)).unwrap();
        }
    }
}

#[test]
fn eight_threads_encode_and_read_at_once() {
    let start = Instant::now();
    let barrier = Arc::new(Barrier::new(THREADS));
    let workers: Vec<_> = (0..THREADS)
        .map(|t| {
            let barrier = Arc::clone(&barrier);
            thread::spawn(move || encode_and_read(t, &barrier))
        })
        .collect();
    let bytes: usize = workers.into_iter().map(|w| w.join().unwrap()).sum();
    let phase1 = start.elapsed();

    // Phase 2: readers handed around a ring of threads.
    let start = Instant::now();
    let (senders, receivers): (Vec<_>, Vec<_>) = (0..THREADS).map(|_| channel()).unzip();
    let (done_tx, done_rx) = channel();
    let ring: Vec<_> = receivers
        .into_iter()
        .enumerate()
        .map(|(t, inbox)| {
            let next = senders[(t + 1) % THREADS].clone();
            let done = done_tx.clone();
            thread::spawn(move || ring_member(t, inbox, next, done))
        })
        .collect();
    let per_reader = ROUNDS / 4;
    for (id, sender) in senders.iter().enumerate() {
        let mut stream = Vec::new();
        let mut want = Vec::new();
        for k in 0..per_reader {
            let (_, compact, _) = sample(id + 100, k);
            stream.extend_from_slice(&compact);
            stream.extend_from_slice(if k % 2 == 0 { b"\n" } else { b"\r\n" });
            want.push(compact);
        }
        stream.pop(); // the last line ends without newline: it counts at finish
        let token = Token {
            reader: new_reader(),
            id,
            stream: Arc::new(stream),
            want: Arc::new(want),
            sent: 0,
            next: 0,
            hops: 0,
        };
        sender.send(Some(token)).unwrap();
    }
    let mut hops = 0;
    for _ in 0..THREADS {
        let token = done_rx.recv().unwrap();
        assert_eq!(token.next, per_reader, "reader {}", token.id);
        hops += token.hops;
        unsafe { mcp_line_reader_free(token.reader) };
    }
    for s in &senders {
        s.send(None).unwrap();
    }
    for member in ring {
        member.join().unwrap();
    }
    eprintln!(
        "{THREADS} threads x {ROUNDS} messages encoded twice and read back ({:.1} MB): {phase1:.2?}; \
         {THREADS} readers x {per_reader} messages handed around the ring in {hops} hops: {:.2?}",
        bytes as f64 / 1e6,
        start.elapsed()
    );
}
