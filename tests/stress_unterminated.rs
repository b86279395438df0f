//! Stress: a peer sends 1 GiB without a newline, in 64 KiB chunks, under a
//! 1 MiB line limit, then `\n` and normal messages. Exactly one too-long item,
//! the messages before and after it intact, and memory stays small all along:
//! the reader's capacity under 2 MiB at every step, the process's peak RSS
//! (getrusage) grown by less than 16 MiB.
//!
//! Done twice: with `LineReader::feed` (checking `capacity()` after every
//! chunk), and through a pipe with `mcp_write_all` / `mcp_line_reader_read_fd`.
//! Alone in its file: each integration test file is its own process, so the
//! peak RSS is this test's. Prints its numbers (`--nocapture`).
#![cfg(all(unix, os_io, feature = "capi"))]

use std::ffi::c_int;
use std::num::NonZeroUsize;
use std::ptr;
use std::thread;
use std::time::Instant;

use mcp_stdio::ffi::*;
use mcp_stdio::{LineReader, Message, RpcKind};

const TOTAL: usize = 1 << 30;
const CHUNK: usize = 64 << 10;
const LIMIT: usize = 1 << 20;
const MAX_CAPACITY: usize = 2 << 20;
const MAX_RSS_GROWTH: usize = 16 << 20;

/// The process's peak resident set size so far, in bytes, as getrusage tells it.
/// On Linux this peak includes the parent's before `exec` (cargo's, ~40 MiB),
/// which can hide a smaller growth: hence also `vm_hwm` and `current_rss`.
fn peak_rss() -> usize {
    // SAFETY: getrusage fills the struct it is given.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    assert_eq!(unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) }, 0);
    usage.ru_maxrss as usize * 1024 // kilobytes on Linux
}

/// Linux: resets the process's RSS high-water mark (VmHWM) to its current RSS.
fn reset_vm_hwm() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

/// Linux: the RSS high-water mark (VmHWM of /proc/self/status) in bytes.
fn vm_hwm() -> Option<usize> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: usize = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// The process's current resident set size in bytes (Linux: /proc/self/statm; 0 elsewhere).
/// Sampled during the run: unlike the peak, it cannot be hidden by an earlier, higher peak.
fn current_rss() -> usize {
    let pages = std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| s.split_whitespace().nth(1)?.parse::<usize>().ok())
        .unwrap_or(0);
    // SAFETY: sysconf has no preconditions.
    pages * unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as usize
}

fn mib(bytes: usize) -> f64 {
    bytes as f64 / (1 << 20) as f64
}

/// The messages around the endless line: JSON-RPC notifications with their number.
fn messages(from: usize, to: usize) -> Vec<String> {
    (from..to)
        .map(|i| {
            format!(
                "{{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{{\"i\":{i},\"pad\":\"{}\"}}}}",
                "p".repeat(i % 300)
            )
        })
        .collect()
}

/// 64 KiB of what looks like the inside of a huge JSON string: no newline anywhere.
fn endless_chunk() -> Vec<u8> {
    let alphabet =
        b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/{}[]\":,\r\t \\";
    (0..CHUNK)
        .map(|i| alphabet[(i * 7 + i / 61) % alphabet.len()])
        .collect()
}

fn stream_after(messages: &[String]) -> Vec<u8> {
    let mut s = b"\n".to_vec();
    for m in messages {
        s.extend_from_slice(m.as_bytes());
        s.extend_from_slice(b"\r\n");
    }
    s
}

/// Through `LineReader::feed`; returns the largest capacity and current RSS seen.
fn through_feed(chunk: &[u8]) -> (usize, usize) {
    let before = messages(0, 2);
    let after = messages(2, 1002);
    let mut r = LineReader::new();
    r.set_max_line_len(NonZeroUsize::new(LIMIT));
    r.set_jsonrpc(true);
    let mut head = Vec::new();
    for m in &before {
        head.extend_from_slice(m.as_bytes());
        head.push(b'\n');
    }
    head.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"method\":\"x\",\"params\":\"");
    let mut sent_in_line = head.len() - (before[0].len() + before[1].len() + 2);
    r.feed(&head).unwrap();
    for m in &before {
        assert_eq!(
            r.next_message(),
            Some(Message::Json {
                line: m.as_bytes(),
                rpc: Some(RpcKind::Notification)
            })
        );
    }
    let mut too_long = 0;
    let mut max_capacity = r.capacity();
    let mut max_buffered = 0;
    let mut max_rss = current_rss();
    for i in 0..TOTAL / CHUNK {
        if i % 256 == 0 {
            max_rss = max_rss.max(current_rss());
        }
        r.feed(chunk).unwrap();
        sent_in_line += chunk.len();
        while let Some(m) = r.next_message() {
            match m {
                Message::TooLong { len } => {
                    too_long += 1;
                    assert!(len > LIMIT && len <= sent_in_line, "len {len}");
                }
                other => panic!("unexpected item {other:?}"),
            }
        }
        // Reported as soon as the line grows past the limit.
        assert_eq!(
            too_long,
            usize::from(sent_in_line > LIMIT),
            "after {sent_in_line} bytes"
        );
        max_capacity = max_capacity.max(r.capacity());
        max_buffered = max_buffered.max(r.buffered_len());
        assert!(r.capacity() < MAX_CAPACITY, "capacity {}", r.capacity());
    }
    // The line ends; what follows arrives intact, in odd pieces.
    let rest = stream_after(&after);
    let mut got = Vec::new();
    for piece in rest.chunks(777) {
        r.feed(piece).unwrap();
        while let Some(m) = r.next_message() {
            match m {
                Message::Json {
                    line,
                    rpc: Some(RpcKind::Notification),
                } => got.push(String::from_utf8(line.to_vec()).unwrap()),
                other => panic!("unexpected item {other:?}"),
            }
        }
        max_capacity = max_capacity.max(r.capacity());
        assert!(r.capacity() < MAX_CAPACITY, "capacity {}", r.capacity());
    }
    r.finish().unwrap();
    assert_eq!(r.next_message(), None);
    assert_eq!(too_long, 1);
    assert_eq!(got, after);
    assert_eq!(r.buffered_len(), 0);
    eprintln!(
        "feed: 1 GiB line in {} chunks: 1 too-long item, {} messages after it intact; \
         max capacity {:.2} MiB, max buffered_len {} bytes",
        TOTAL / CHUNK,
        got.len(),
        mib(max_capacity),
        max_buffered
    );
    (max_capacity, max_rss.max(current_rss()))
}

fn write_all(fd: c_int, data: &[u8]) {
    // SAFETY: a valid slice.
    assert_eq!(
        unsafe { mcp_write_all(fd, data.as_ptr(), data.len()) },
        McpStatus::MCP_STATUS_OK
    );
}

/// Through a pipe: a writer thread sends the endless line with mcp_write_all,
/// the reader takes it with mcp_line_reader_read_fd. Returns the largest current RSS seen.
fn through_pipe(chunk: Vec<u8>) -> usize {
    let after = messages(0, 1000);
    let mut fds = [0; 2];
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    let (rd, wr) = (fds[0], fds[1]);
    let rest = stream_after(&after);
    let writer = thread::spawn(move || {
        for _ in 0..TOTAL / CHUNK {
            write_all(wr, &chunk);
        }
        write_all(wr, &rest);
        unsafe { libc::close(wr) };
    });
    let mut too_long = Vec::new();
    let mut got = Vec::new();
    let mut total = 0;
    let mut max_rss = current_rss();
    let mut reads = 0usize;
    unsafe {
        let r = mcp_line_reader_new();
        assert_eq!(
            mcp_line_reader_set_max_line_len(r, LIMIT),
            McpStatus::MCP_STATUS_OK
        );
        assert_eq!(
            mcp_line_reader_set_flags(r, MCP_READER_JSONRPC),
            McpStatus::MCP_STATUS_OK
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
                McpStatus::MCP_STATUS_OK => {
                    total += n;
                    reads += 1;
                    if reads.is_multiple_of(256) {
                        max_rss = max_rss.max(current_rss());
                    }
                }
                McpStatus::MCP_STATUS_END_OF_STREAM => {
                    assert_eq!(mcp_line_reader_finish(r), McpStatus::MCP_STATUS_OK)
                }
                other => panic!("read_fd: {other:?}"),
            }
            while mcp_line_reader_next_message(r, &mut m) == McpStatus::MCP_STATUS_OK {
                if m.kind == McpMessageKind::MCP_MESSAGE_TOO_LONG as i32 {
                    assert!(m.data.is_null());
                    too_long.push((m.len, total));
                } else {
                    assert_eq!(m.kind, McpMessageKind::MCP_MESSAGE_JSON as i32);
                    assert_eq!(m.rpc_kind, McpRpcKind::MCP_RPC_NOTIFICATION as i32);
                    got.push(
                        String::from_utf8(std::slice::from_raw_parts(m.data, m.len).to_vec())
                            .unwrap(),
                    );
                }
            }
            assert!(mcp_line_reader_buffered_len(r) <= LIMIT + CHUNK);
            if status == McpStatus::MCP_STATUS_END_OF_STREAM {
                break;
            }
        }
        mcp_line_reader_free(r);
    }
    writer.join().unwrap();
    unsafe { libc::close(rd) };
    assert_eq!(total, TOTAL + stream_after(&after).len());
    assert_eq!(too_long.len(), 1, "{too_long:?}");
    let (len, read_so_far) = too_long[0];
    assert!(len > LIMIT && len <= read_so_far, "too-long len {len}");
    assert_eq!(got, after);
    eprintln!(
        "pipe: 1 GiB line through mcp_write_all / mcp_line_reader_read_fd: 1 too-long item \
         (len {len}), {} messages after it intact",
        got.len()
    );
    max_rss.max(current_rss())
}

#[test]
#[cfg_attr(
    debug_assertions,
    ignore = "slow in debug builds: cargo test --release --test stress_unterminated"
)]
fn a_gibibyte_without_newline_costs_no_memory() {
    let chunk = endless_chunk();
    assert!(!chunk.contains(&b'\n'));
    let hwm_reset = reset_vm_hwm();
    let hwm_before = vm_hwm();
    let rss_before = peak_rss();
    let current_before = current_rss();
    let start = Instant::now();
    let (max_capacity, feed_rss) = through_feed(&chunk);
    let feed_time = start.elapsed();
    let rss_after_feed = peak_rss();
    let start = Instant::now();
    let pipe_rss = through_pipe(chunk);
    let pipe_time = start.elapsed();
    let rss_after = peak_rss();
    let current_growth = feed_rss.max(pipe_rss).saturating_sub(current_before);
    let hwm_growth = match (hwm_reset, hwm_before, vm_hwm()) {
        (true, Some(before), Some(after)) => Some(after - before),
        _ => None,
    };
    eprintln!(
        "peak RSS: {:.1} MiB before, {:.1} MiB after feed (+{:.1}), {:.1} MiB after pipe (+{:.1} in all); \
         current RSS sampled during the runs: at most +{:.1} MiB over {:.1} MiB; \
         VmHWM (reset at the start) grew by {}; \
         max capacity {:.2} MiB; feed {:.2?} ({:.0} MB/s), pipe {:.2?} ({:.0} MB/s)",
        mib(rss_before),
        mib(rss_after_feed),
        mib(rss_after_feed - rss_before),
        mib(rss_after),
        mib(rss_after - rss_before),
        mib(current_growth),
        mib(current_before),
        hwm_growth.map_or("(not available)".to_string(), |g| format!("{:.1} MiB", mib(g))),
        mib(max_capacity),
        feed_time,
        TOTAL as f64 / 1e6 / feed_time.as_secs_f64(),
        pipe_time,
        TOTAL as f64 / 1e6 / pipe_time.as_secs_f64(),
    );
    assert!(
        rss_after - rss_before < MAX_RSS_GROWTH,
        "peak RSS grew by {:.1} MiB",
        mib(rss_after - rss_before)
    );
    if let Some(growth) = hwm_growth {
        assert!(
            growth < MAX_RSS_GROWTH,
            "VmHWM grew by {:.1} MiB",
            mib(growth)
        );
    }
    assert!(
        current_growth < MAX_RSS_GROWTH,
        "RSS grew by {:.1} MiB",
        mib(current_growth)
    );
}
