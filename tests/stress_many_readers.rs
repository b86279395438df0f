//! Stress: 10,000 readers alive at once through the C ABI (`mcp_line_reader_new`),
//! fed interleaved: round robin, a chunk of odd size to each in turn, every
//! reader its own stream of known messages (and stray lines, CRLF, too-long
//! lines, a final line without newline; four flag settings). Every item is
//! checked as it comes out, in order; every reader is freed at the end.
//! Prints its numbers (`--nocapture`).
#![cfg(feature = "capi")]

use std::ptr;
use std::time::Instant;

use mcp_stdio::ffi::*;
use McpMessageKind::*;
use McpRpcKind::*;
use McpStatus::*;

const READERS: usize = 10_000;

/// One expected item: (kind, rpc_kind, data; None for too-long).
type Want = (McpMessageKind, McpRpcKind, Option<Vec<u8>>);

struct Peer {
    reader: *mut McpLineReader,
    stream: Vec<u8>,
    sent: usize,
    want: Vec<Want>,
    taken: usize,
    limit: Option<usize>,
}

/// Reader `i`'s settings and stream: 0 no flags, 1 JSON-RPC, 2 JSON-RPC and
/// skip, 3 no flags with a 200-byte line limit.
fn peer(i: usize) -> Peer {
    let mode = i % 4;
    let jsonrpc = mode == 1 || mode == 2;
    let skip = mode == 2;
    let limit = (mode == 3).then_some(200);
    let mut stream = Vec::new();
    let mut want: Vec<Want> = Vec::new();
    let count = 12 + i % 9;
    for k in 0..count {
        let pad = "x".repeat((i * 31 + k * 17) % if limit.is_some() { 100 } else { 400 });
        let (line, rpc) = if k % 5 == 4 {
            (
                format!("{{\"jsonrpc\":\"2.0\",\"method\":\"notifications/r{i}\",\"params\":{{\"k\":{k},\"pad\":\"{pad}\"}}}}"),
                MCP_RPC_NOTIFICATION,
            )
        } else if k % 5 == 2 {
            (
                format!(
                    "{{\"jsonrpc\":\"2.0\",\"id\":{k},\"result\":{{\"r\":{i},\"pad\":\"{pad}\"}}}}"
                ),
                MCP_RPC_RESPONSE,
            )
        } else {
            (
                format!("{{\"jsonrpc\":\"2.0\",\"id\":\"{i}-{k}\",\"method\":\"tools/call\",\"params\":{{\"pad\":\"{pad}\"}}}}"),
                MCP_RPC_REQUEST,
            )
        };
        if k % 3 == 0 {
            stream.extend_from_slice(b"  ");
        }
        stream.extend_from_slice(line.as_bytes());
        let last = k + 1 == count;
        if !(last && i.is_multiple_of(2)) {
            // Reader pairs end with a final line without newline: it counts at finish.
            stream.extend_from_slice(if k % 3 == 1 { b"\r\n" } else { b"\n" });
        }
        want.push((
            MCP_MESSAGE_JSON,
            if jsonrpc { rpc } else { MCP_RPC_NONE },
            Some(line.into_bytes()),
        ));
        if last {
            break;
        }
        if k % 7 == 3 {
            // A server printing to stdout.
            let log = format!("[reader {i}] step {k} done");
            stream.extend_from_slice(log.as_bytes());
            stream.push(b'\n');
            if !skip {
                want.push((
                    MCP_MESSAGE_PARSE_ERROR,
                    MCP_RPC_NONE,
                    Some(log.into_bytes()),
                ));
            }
        }
        if k % 6 == 5 {
            // JSON but not JSON-RPC.
            stream.extend_from_slice(b"{\"id\":null}\n");
            if jsonrpc && !skip {
                want.push((
                    MCP_MESSAGE_INVALID_JSONRPC,
                    MCP_RPC_NONE,
                    Some(b"{\"id\":null}".to_vec()),
                ));
            } else if !jsonrpc {
                want.push((
                    MCP_MESSAGE_JSON,
                    MCP_RPC_NONE,
                    Some(b"{\"id\":null}".to_vec()),
                ));
            }
        }
        if limit.is_some() && k == 5 {
            stream.extend_from_slice(&[b'z'; 500]);
            stream.push(b'\n');
            want.push((MCP_MESSAGE_TOO_LONG, MCP_RPC_NONE, None));
        }
    }
    let reader = mcp_line_reader_new();
    assert!(!reader.is_null());
    let flags = if jsonrpc { MCP_READER_JSONRPC } else { 0 }
        | if skip { MCP_READER_SKIP_INVALID } else { 0 };
    unsafe {
        assert_eq!(mcp_line_reader_set_flags(reader, flags), MCP_STATUS_OK);
        if let Some(limit) = limit {
            assert_eq!(
                mcp_line_reader_set_max_line_len(reader, limit),
                MCP_STATUS_OK
            );
        }
    }
    Peer {
        reader,
        stream,
        sent: 0,
        want,
        taken: 0,
        limit,
    }
}

/// Takes every item the reader has and checks each against the next expected one.
fn take_items(i: usize, p: &mut Peer) -> usize {
    let mut n = 0;
    loop {
        let mut m = McpMessage {
            kind: -1,
            rpc_kind: -1,
            data: ptr::null(),
            len: 0,
        };
        match unsafe { mcp_line_reader_next_message(p.reader, &mut m) } {
            MCP_STATUS_NO_MESSAGE => return n,
            MCP_STATUS_OK => {}
            other => panic!("reader {i}: {other:?}"),
        }
        let (kind, rpc, data) = p.want.get(p.taken).unwrap_or_else(|| {
            panic!(
                "reader {i}: an item more than the {} expected",
                p.want.len()
            )
        });
        assert_eq!(
            (m.kind, m.rpc_kind),
            (*kind as i32, *rpc as i32),
            "reader {i} item {}",
            p.taken
        );
        match data {
            Some(data) => {
                let got = unsafe { std::slice::from_raw_parts(m.data, m.len) };
                assert_eq!(got, &data[..], "reader {i} item {}", p.taken);
            }
            None => {
                assert!(m.data.is_null());
                assert!(
                    m.len > p.limit.unwrap() && m.len <= 500,
                    "reader {i}: too-long len {}",
                    m.len
                );
            }
        }
        p.taken += 1;
        n += 1;
    }
}

fn peak_rss_mib() -> f64 {
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    assert_eq!(unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) }, 0);
    usage.ru_maxrss as f64 / 1024.0
}

#[test]
fn ten_thousand_readers_fed_round_robin() {
    let start = Instant::now();
    let mut peers: Vec<Peer> = (0..READERS).map(peer).collect();
    let mut handles: Vec<usize> = peers.iter().map(|p| p.reader as usize).collect();
    handles.sort_unstable();
    handles.dedup();
    assert_eq!(handles.len(), READERS, "distinct handles");
    let bytes: usize = peers.iter().map(|p| p.stream.len()).sum();
    let items: usize = peers.iter().map(|p| p.want.len()).sum();

    let mut round = 0usize;
    let mut feeds = 0usize;
    let mut taken = 0usize;
    let mut active = READERS;
    while active > 0 {
        active = 0;
        for (i, p) in peers.iter_mut().enumerate() {
            if p.sent == p.stream.len() {
                continue;
            }
            active += 1;
            // Odd sizes, different for each reader and round; now and then one byte or a big piece.
            let size = match (i * 7 + round * 13) % 23 {
                0 => 1,
                1 => 1000 + i % 300,
                x => 1 + (x * 37 + i + round * 5) % 97,
            };
            let end = (p.sent + size).min(p.stream.len());
            let piece = &p.stream[p.sent..end];
            assert_eq!(
                unsafe { mcp_line_reader_feed(p.reader, piece.as_ptr(), piece.len()) },
                MCP_STATUS_OK
            );
            p.sent = end;
            feeds += 1;
            // Most rounds take the items at once; some let them queue up.
            if !(i + round).is_multiple_of(4) {
                taken += take_items(i, p);
            }
        }
        round += 1;
    }
    let alive_rss = peak_rss_mib();
    for (i, p) in peers.iter_mut().enumerate() {
        taken += take_items(i, p);
        assert_eq!(unsafe { mcp_line_reader_finish(p.reader) }, MCP_STATUS_OK);
        taken += take_items(i, p);
        assert_eq!(p.taken, p.want.len(), "reader {i}: items missing");
        assert_eq!(unsafe { mcp_line_reader_buffered_len(p.reader) }, 0);
        unsafe { mcp_line_reader_free(p.reader) };
        p.reader = ptr::null_mut();
    }
    assert_eq!(taken, items);
    eprintln!(
        "{READERS} readers alive at once: {:.1} MB in {feeds} feeds over {round} rounds, \
         {items} items checked, all freed; {:.2?}; peak RSS {alive_rss:.1} MiB",
        bytes as f64 / 1e6,
        start.elapsed()
    );
}
