//! Soak: a few hundred MB of mixed MCP traffic (300 MB; `MCP_SOAK_MB` changes
//! it) written by one thread through a pipe with `mcp_write_all`, in pieces
//! of random size, and read by another with `mcp_line_reader_read_fd`
//! (JSON-RPC classification on). Small and large messages (up to 4 MiB), all
//! five JSON-RPC kinds, non-ASCII and escapes, CRLF and leading blanks
//! sometimes, about 1% stray lines (parse errors) and some JSON that is not
//! JSON-RPC. Both ends count and hash what they sent and got (kind, rpc kind
//! and bytes of every item, in order), and every line carries its sequence
//! number, checked on arrival: nothing lost, nothing duplicated, order kept.
//! Prints the throughput (`--nocapture`).
#![cfg(all(unix, os_io, feature = "capi"))]

mod common;

use common::Rng;
use std::ffi::c_int;
use std::ptr;
use std::thread;
use std::time::Instant;

use mcp_stdio::ffi::*;
use McpStatus::*;

/// What both ends account for.
#[derive(Debug, Default, PartialEq, Eq, Clone, Copy)]
struct Tally {
    /// Items by (kind, rpc_kind): json by rpc kind 1..=5, parse errors, invalid JSON-RPC.
    requests: u64,
    notifications: u64,
    responses: u64,
    errors: u64,
    batches: u64,
    parse_errors: u64,
    invalid_jsonrpc: u64,
    /// A running hash over (kind, rpc_kind, bytes) of every item, in order.
    hash: u64,
    /// Bytes of the items (trimmed lines).
    item_bytes: u64,
}

impl Tally {
    fn add(&mut self, kind: i32, rpc: i32, data: &[u8]) {
        use McpMessageKind::*;
        use McpRpcKind::*;
        match (kind, rpc) {
            (k, r) if k == MCP_MESSAGE_JSON as i32 && r == MCP_RPC_REQUEST as i32 => {
                self.requests += 1
            }
            (k, r) if k == MCP_MESSAGE_JSON as i32 && r == MCP_RPC_NOTIFICATION as i32 => {
                self.notifications += 1
            }
            (k, r) if k == MCP_MESSAGE_JSON as i32 && r == MCP_RPC_RESPONSE as i32 => {
                self.responses += 1
            }
            (k, r) if k == MCP_MESSAGE_JSON as i32 && r == MCP_RPC_ERROR as i32 => self.errors += 1,
            (k, r) if k == MCP_MESSAGE_JSON as i32 && r == MCP_RPC_BATCH as i32 => {
                self.batches += 1
            }
            (k, r) if k == MCP_MESSAGE_PARSE_ERROR as i32 && r == MCP_RPC_NONE as i32 => {
                self.parse_errors += 1
            }
            (k, r) if k == MCP_MESSAGE_INVALID_JSONRPC as i32 && r == MCP_RPC_NONE as i32 => {
                self.invalid_jsonrpc += 1
            }
            other => panic!("unexpected item kind {other:?}"),
        }
        self.hash = hash_bytes(self.hash ^ ((kind as u64) << 8 | rpc as u64), data);
        self.item_bytes += data.len() as u64;
    }
    fn messages(&self) -> u64 {
        self.requests + self.notifications + self.responses + self.errors + self.batches
    }
}

/// A fast running hash over whole words (quick in debug builds too).
fn hash_bytes(mut h: u64, bytes: &[u8]) -> u64 {
    const K: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut words = bytes.chunks_exact(8);
    for w in &mut words {
        h = (h ^ u64::from_le_bytes(w.try_into().unwrap()))
            .wrapping_mul(K)
            .rotate_left(31);
    }
    for &b in words.remainder() {
        h = (h ^ b as u64).wrapping_mul(K).rotate_left(31);
    }
    (h ^ bytes.len() as u64).wrapping_mul(K)
}

/// The sequence number a line carries: the digits after its first `"seq":` or `seq=`.
fn seq_of(line: &[u8]) -> u64 {
    let at = line
        .windows(3)
        .position(|w| w == b"seq")
        .unwrap_or_else(|| {
            panic!(
                "no seq in {:?}",
                String::from_utf8_lossy(&line[..line.len().min(200)])
            )
        });
    line[at + 3..]
        .iter()
        .skip_while(|&&b| b == b'"' || b == b':' || b == b'=')
        .take_while(|b| b.is_ascii_digit())
        .fold(0, |n, &d| n * 10 + (d - b'0') as u64)
}

/// Makes the traffic, one line at a time.
struct Traffic {
    rng: Rng,
    /// Safe string content (base64 alphabet), sliced for payloads.
    pool: Vec<u8>,
    seq: u64,
}

/// Bits of string content that are not plain ASCII letters: non-ASCII, escapes, U+2028.
const SPICE: [&str; 8] = [
    "é",
    "😀",
    "\\n",
    "\\\"",
    "\\u00e9",
    "\u{2028}",
    "\\ud83d\\ude00",
    "日本語",
];

impl Traffic {
    fn new() -> Traffic {
        let mut rng = Rng(0x5eed);
        let alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/ ";
        let pool = (0..(5 << 20))
            .map(|_| alphabet[rng.below(alphabet.len())])
            .collect();
        Traffic { rng, pool, seq: 0 }
    }

    /// A payload string's content: usually short, sometimes tens of KB, rarely MBs.
    fn payload(&mut self, out: &mut Vec<u8>) {
        let len = match self.rng.below(1000) {
            0..=1 => (1 << 20) + self.rng.below(3 << 20),
            2..=49 => 1000 + self.rng.below(63 << 10),
            _ => self.rng.below(400),
        };
        let from = self.rng.below(self.pool.len() - len);
        if self.rng.chance(300) {
            out.extend_from_slice(SPICE[self.rng.below(SPICE.len())].as_bytes());
        }
        out.extend_from_slice(&self.pool[from..from + len]);
        if self.rng.chance(300) {
            out.extend_from_slice(SPICE[self.rng.below(SPICE.len())].as_bytes());
        }
    }

    /// One JSON-RPC message object of the given kind (0..4), carrying `seq`.
    fn message(&mut self, kind: usize, seq: u64, out: &mut Vec<u8>) {
        let head = format!("{{\"seq\":{seq},\"jsonrpc\":\"2.0\",");
        out.extend_from_slice(head.as_bytes());
        match kind {
            0 => {
                out.extend_from_slice(format!("\"id\":{seq},\"method\":\"tools/call\",\"params\":{{\"name\":\"echo\",\"arguments\":{{\"text\":\"").as_bytes());
                self.payload(out);
                out.extend_from_slice(b"\"}}}");
            }
            1 => {
                out.extend_from_slice(b"\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"t\",\"progress\":0.5,\"message\":\"");
                self.payload(out);
                out.extend_from_slice(b"\"}}");
            }
            2 => {
                out.extend_from_slice(format!("\"id\":\"r-{seq}\",\"result\":{{\"content\":[{{\"type\":\"text\",\"text\":\"").as_bytes());
                self.payload(out);
                out.extend_from_slice(b"\"}],\"isError\":false}}");
            }
            _ => {
                out.extend_from_slice(
                    format!("\"id\":{seq},\"error\":{{\"code\":-32603,\"message\":\"").as_bytes(),
                );
                self.payload(out);
                out.extend_from_slice(b"\",\"data\":null}}");
            }
        }
    }

    /// Appends the next line (with its line end) to `out`; accounts for its item in `tally`.
    fn line(&mut self, out: &mut Vec<u8>, tally: &mut Tally) {
        use McpMessageKind::*;
        use McpRpcKind::*;
        let seq = self.seq;
        self.seq += 1;
        if self.rng.chance(20) {
            out.extend_from_slice(b" \t");
        }
        let start = out.len();
        let roll = self.rng.below(1000);
        let (kind, rpc) = if roll < 10 {
            // ~1%: stray output, truncated JSON, invalid UTF-8, a raw control character.
            match self.rng.below(4) {
                0 => out.extend_from_slice(format!("DEBUG seq={seq}: handled in 3 ms").as_bytes()),
                1 => {
                    self.message(0, seq, out);
                    let cut = start + (out.len() - start) / 2;
                    out.truncate(cut.max(start + 12));
                    // The reader trims what the cut may leave at the end.
                    while matches!(out.last(), Some(b' ' | b'\t' | b'\r')) {
                        out.pop();
                    }
                }
                2 => {
                    // Latin-1, not UTF-8.
                    out.extend_from_slice(format!("{{\"seq\":{seq},\"name\":\"caf").as_bytes());
                    out.extend_from_slice(b"\xe9\"}");
                }
                _ => {
                    out.extend_from_slice(format!("{{\"seq\":{seq},\"tab\":\"a\tb\"}}").as_bytes())
                }
            }
            (MCP_MESSAGE_PARSE_ERROR, MCP_RPC_NONE)
        } else if roll < 13 {
            // JSON that is not JSON-RPC: a request with a null id.
            out.extend_from_slice(
                format!("{{\"seq\":{seq},\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"m\"}}")
                    .as_bytes(),
            );
            (MCP_MESSAGE_INVALID_JSONRPC, MCP_RPC_NONE)
        } else if roll < 23 {
            // A batch of two: a request and a notification.
            out.push(b'[');
            self.message(0, seq, out);
            out.push(b',');
            self.message(1, seq, out);
            out.push(b']');
            (MCP_MESSAGE_JSON, MCP_RPC_BATCH)
        } else {
            let kind = self.rng.below(4);
            self.message(kind, seq, out);
            let rpc = [
                MCP_RPC_REQUEST,
                MCP_RPC_NOTIFICATION,
                MCP_RPC_RESPONSE,
                MCP_RPC_ERROR,
            ][kind];
            (MCP_MESSAGE_JSON, rpc)
        };
        tally.add(kind as i32, rpc as i32, &out[start..]);
        out.extend_from_slice(if self.rng.chance(100) { b"\r\n" } else { b"\n" });
    }
}

fn pipe() -> (c_int, c_int) {
    let mut fds = [0; 2];
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    (fds[0], fds[1])
}

#[test]
#[cfg_attr(
    debug_assertions,
    ignore = "slow in debug builds: cargo test --release --test stress_soak"
)]
fn hundreds_of_megabytes_of_mixed_traffic_through_a_pipe() {
    let target: usize = std::env::var("MCP_SOAK_MB")
        .ok()
        .map_or(300, |v| v.parse().expect("MCP_SOAK_MB: a number of MB"))
        * 1_000_000;
    let (rd, wr) = pipe();
    let start = Instant::now();

    let writer = thread::spawn(move || {
        let mut traffic = Traffic::new();
        let mut tally = Tally::default();
        let mut buf = Vec::with_capacity(8 << 20);
        let mut written = 0usize;
        let mut writes = 0usize;
        let mut piece = 1;
        while written < target {
            traffic.line(&mut buf, &mut tally);
            if buf.len() >= piece {
                // Pieces of random size (1 byte to 256 KiB): lines cut anywhere.
                let status = unsafe { mcp_write_all(wr, buf.as_ptr(), buf.len()) };
                assert_eq!(status, MCP_STATUS_OK);
                written += buf.len();
                writes += 1;
                buf.clear();
                piece = 1 + traffic.rng.below(256 << 10);
            }
        }
        assert_eq!(
            unsafe { mcp_write_all(wr, buf.as_ptr(), buf.len()) },
            MCP_STATUS_OK
        );
        written += buf.len();
        unsafe { libc::close(wr) };
        (tally, written, writes, traffic.seq)
    });

    let reader = thread::spawn(move || {
        let mut tally = Tally::default();
        let mut next_seq = 0u64;
        let mut total = 0usize;
        let mut reads = 0usize;
        unsafe {
            let r = mcp_line_reader_new();
            assert_eq!(
                mcp_line_reader_set_flags(r, MCP_READER_JSONRPC),
                MCP_STATUS_OK
            );
            let mut m = McpMessage {
                kind: -1,
                rpc_kind: -1,
                data: ptr::null(),
                len: 0,
            };
            loop {
                let mut n = 0;
                let status = mcp_line_reader_read_fd(r, rd, &mut n);
                match status {
                    MCP_STATUS_OK => {
                        total += n;
                        reads += 1;
                    }
                    MCP_STATUS_END_OF_STREAM => {
                        assert_eq!(mcp_line_reader_finish(r), MCP_STATUS_OK)
                    }
                    other => panic!("read_fd: {other:?}"),
                }
                while mcp_line_reader_next_message(r, &mut m) == MCP_STATUS_OK {
                    assert!(!m.data.is_null(), "no too-long item expected");
                    let data = std::slice::from_raw_parts(m.data, m.len);
                    let seq = seq_of(data);
                    assert_eq!(seq, next_seq, "lost, duplicated or reordered");
                    next_seq += 1;
                    tally.add(m.kind, m.rpc_kind, data);
                }
                if status == MCP_STATUS_END_OF_STREAM {
                    break;
                }
            }
            assert_eq!(mcp_line_reader_buffered_len(r), 0);
            mcp_line_reader_free(r);
        }
        libc_close(rd);
        (tally, total, reads, next_seq)
    });

    let (sent, written, writes, lines) = writer.join().unwrap();
    let (got, read, reads, seen) = reader.join().unwrap();
    let elapsed = start.elapsed();
    assert_eq!(read, written, "bytes");
    assert_eq!(seen, lines, "lines");
    assert_eq!(got, sent, "counts and hashes");
    // About 1% stray lines were sent, and exactly those came back as parse errors.
    assert!(sent.parse_errors * 200 > lines && sent.parse_errors * 50 < lines);
    eprintln!(
        "soak: {:.0} MB in {writes} writes / {reads} reads, {lines} lines: {} requests, {} notifications, \
         {} responses, {} errors, {} batches, {} parse errors, {} invalid JSON-RPC; hashes equal \
         ({:#018x}); {:.2?}, {:.0} MB/s",
        written as f64 / 1e6,
        got.requests,
        got.notifications,
        got.responses,
        got.errors,
        got.batches,
        got.parse_errors,
        got.invalid_jsonrpc,
        got.hash,
        elapsed,
        written as f64 / 1e6 / elapsed.as_secs_f64()
    );
    assert!(got.messages() > 0);
}

fn libc_close(fd: c_int) {
    unsafe { libc::close(fd) };
}
