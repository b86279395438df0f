//! Framing throughput benchmark: `cargo bench --bench framing`.
//!
//! Not a test: it prints a table and never asserts timings. The only check is a
//! correctness smoke check (every reader must see the same number of messages);
//! a difference prints a loud `MISMATCH` line.
//!
//! Corpora are generated in code from a seeded PRNG (splitmix64), so every run on
//! every machine frames the same bytes:
//!   * `small`: ~150-byte JSON-RPC requests / notifications / responses;
//!   * `mixed`: 0.1-50 KB messages, log-uniform sizes (tools/call text results with
//!     non-ASCII text and escapes, base64 images, log notifications, resources);
//!   * `large`: ~1 MiB lines (base64 blob resources and huge text results).
//!
//! Readers, side by side:
//!   1. `mcp_stdio`            LineReader, default flags (feed a chunk, drain `next_message`);
//!   2. `mcp_stdio+jsonrpc`    the same with `set_jsonrpc(true)`;
//!   3. `naive Value`          what a typical SDK does: append the chunk to a `Vec<u8>`,
//!      search `\n` from the start of the pending bytes, `serde_json::from_slice::<Value>`
//!      each complete line, drain the consumed prefix;
//!   4. `serde IgnoredAny`     the same splitting, validation only
//!      (`serde_json::from_slice::<serde::de::IgnoredAny>`; `IgnoredAny` lives in
//!      `serde`, which serde_json does not re-export, hence the `serde` dev-dependency);
//!      it does not check UTF-8 (serde_json's ignore path skips string bytes unchecked);
//!   5. `serde RawValue`       the same splitting, `serde_json::from_slice::<&RawValue>`:
//!      the ignore path plus a UTF-8 check of the value, the strictness closest to ours.
//!
//! Timing: one warm-up run, then `BENCH_RUNS` (default 5) timed runs with
//! `std::time::Instant`; the table reports the BEST run (minimum time), plus the
//! median run's MB/s as a noise indicator. MB/s = 10^6 input bytes per second.
//!
//! Environment:
//!   BENCH_SIZE_MB  size of each corpus in MiB (default 64; e.g. 4 for a smoke run)
//!   BENCH_RUNS     timed runs per cell (default 5)
//!   BENCH_DUMP_DIR if set, also write each corpus to `<dir>/<name>.ndjson`
//!
//! When run without `--bench` (e.g. by `cargo test --benches`), it does a 1 MiB, 1-run
//! smoke pass and exits non-zero on a message-count mismatch.

use std::fmt::Write as _;
use std::hint::black_box;
use std::io::Write as _;
use std::time::{Duration, Instant};

use mcp_stdio::{LineReader, Message};

const MIB: usize = 1024 * 1024;
/// Default size of each corpus, in MiB (override with BENCH_SIZE_MB).
const DEFAULT_CORPUS_MIB: usize = 64;
/// Default number of timed runs per cell (override with BENCH_RUNS).
const DEFAULT_RUNS: usize = 5;
/// Chunk sizes fed to every reader.
const CHUNKS: [usize; 2] = [64 * 1024, 4 * 1024];
/// Target length of a `large` line, `\n` included.
const LARGE_LINE: usize = MIB;
/// Size range of the `mixed` corpus (log-uniform), in bytes.
const MIXED_MIN: usize = 100;
const MIXED_MAX: usize = 50 * 1024;

// ---------------------------------------------------------------------------
// PRNG: splitmix64 (deterministic, no crates)
// ---------------------------------------------------------------------------

struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Self {
        Rng(seed)
    }
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in `0..n` (n > 0), multiply-high reduction.
    fn below(&mut self, n: usize) -> usize {
        ((self.next_u64() as u128 * n as u128) >> 64) as usize
    }
    fn range(&mut self, lo: usize, hi_inclusive: usize) -> usize {
        lo + self.below(hi_inclusive - lo + 1)
    }
    /// Uniform in [0, 1).
    fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

// ---------------------------------------------------------------------------
// Corpus generation
// ---------------------------------------------------------------------------

/// Words for text payloads. Plain words must not need JSON escaping.
const WORDS: &[&str] = &[
    "the",
    "server",
    "returned",
    "results",
    "for",
    "query",
    "in",
    "file",
    "line",
    "function",
    "error",
    "warning",
    "value",
    "config",
    "build",
    "test",
    "passed",
    "failed",
    "module",
    "request",
    "response",
    "cache",
    "index",
    "token",
    "user",
    "data",
    "path",
    "src/main.rs",
    "Cargo.toml",
    "0.42",
    "1024",
    "ok",
    "a",
    "of",
    "to",
    "and",
    "with",
    "is",
    "not",
    "found",
    // non-ASCII (2-, 3- and 4-byte UTF-8)
    "café",
    "naïve",
    "Größe",
    "température",
    "résumé",
    "données",
    "日本語",
    "テキスト",
    "данные",
    "ошибка",
    "→",
    "€12",
    "—",
    "✓",
    "🚀",
    "😀",
    "𝔘𝔫𝔦𝔠𝔬𝔡𝔢",
];

/// Already-escaped JSON string fragments.
const ESCAPES: &[&str] = &[
    "\\n",
    "\\n",
    "\\n",
    "\\t",
    "\\\"quoted\\\"",
    "C:\\\\Users\\\\dev",
    "\\u00e9t\\u00e9",
    "\\ud83d\\ude80",
    "https:\\/\\/example.com\\/a",
    "\\r\\n",
    "\\u001b[31m",
];

const TOOLS: &[&str] = &[
    "read_file",
    "search_code",
    "run_tests",
    "get_weather",
    "list_directory",
    "git_diff",
    "query_database",
    "fetch_url",
];
const FILES: &[&str] = &[
    "src/lib.rs",
    "src/reader.rs",
    "README.md",
    "docs/guide.md",
    "tests/ffi.rs",
    "include/mcp_stdio.h",
    "app/server.py",
    "web/index.ts",
];
const LEVELS: &[&str] = &["debug", "info", "notice", "warning", "error"];
const LOGGERS: &[&str] = &["db", "indexer", "http", "scheduler", "auth"];

/// Appends JSON string *content* (already escaped, no quotes) of at least `target` bytes.
fn push_text(out: &mut Vec<u8>, rng: &mut Rng, target: usize) {
    let end = out.len() + target;
    while out.len() < end {
        let r = rng.below(100);
        if r < 7 {
            out.extend_from_slice(rng.pick(ESCAPES).as_bytes());
        } else {
            out.extend_from_slice(rng.pick(WORDS).as_bytes());
        }
        match rng.below(20) {
            0 => out.extend_from_slice(b". "),
            1 => out.extend_from_slice(b", "),
            2 => out.extend_from_slice(b"\\n"),
            _ => out.push(b' '),
        }
    }
}

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Appends base64 of random bytes; exactly `chars` characters (rounded down to a multiple of 4).
fn push_base64(out: &mut Vec<u8>, rng: &mut Rng, chars: usize) {
    let groups = chars / 4;
    out.reserve(groups * 4);
    let mut i = 0;
    while i < groups {
        // 8 random bytes -> two 3-byte groups (we use 6 of them).
        let x = rng.next_u64();
        for g in 0..2 {
            if i == groups {
                break;
            }
            let v = (x >> (g * 24)) as u32 & 0xFF_FFFF;
            out.extend_from_slice(&[
                B64[(v >> 18) as usize & 63],
                B64[(v >> 12) as usize & 63],
                B64[(v >> 6) as usize & 63],
                B64[v as usize & 63],
            ]);
            i += 1;
        }
    }
    // Occasionally end with padding, like a real encoder of n % 3 != 0 bytes.
    if groups > 0 && rng.below(3) == 0 {
        let n = out.len();
        out[n - 1] = b'=';
    }
}

fn push_id(out: &mut Vec<u8>, rng: &mut Rng, id: u64) {
    if rng.below(4) == 0 {
        write!(out, "\"req-{id:x}\"").unwrap();
    } else {
        write!(out, "{id}").unwrap();
    }
}

/// One ~150-byte MCP-shaped JSON-RPC message (no newline).
fn small_message(out: &mut Vec<u8>, rng: &mut Rng, id: u64) {
    match rng.below(10) {
        0 | 1 => {
            out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
            push_id(out, rng, id);
            write!(
                out,
                ",\"method\":\"tools/call\",\"params\":{{\"name\":\"{}\",\"arguments\":{{\"path\":\"/home/dev/project/{}\",\"limit\":{}}}}}}}",
                rng.pick(TOOLS),
                rng.pick(FILES),
                rng.range(1, 500)
            )
            .unwrap();
        }
        2 => {
            write!(
                out,
                "{{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{{\"progressToken\":\"tok-{:08x}\",\"progress\":{},\"total\":100,\"message\":\"Indexing files\"}}}}",
                rng.next_u64() as u32,
                rng.range(0, 100)
            )
            .unwrap();
        }
        3 | 4 => {
            out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
            push_id(out, rng, id);
            out.extend_from_slice(b",\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"");
            let n = rng.range(16, 80);
            push_text(out, rng, n);
            out.extend_from_slice(b"\"}],\"isError\":false}}");
        }
        5 => {
            out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
            push_id(out, rng, id);
            write!(
                out,
                ",\"error\":{{\"code\":-32602,\"message\":\"Invalid params: unknown tool '{}'\",\"data\":{{\"retryable\":false}}}}}}",
                rng.pick(TOOLS)
            )
            .unwrap();
        }
        6 => {
            out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
            push_id(out, rng, id);
            write!(
                out,
                ",\"method\":\"resources/read\",\"params\":{{\"uri\":\"file:///var/log/app/{}-{}.log\",\"_meta\":{{\"progressToken\":{}}}}}}}",
                rng.pick(LOGGERS),
                rng.range(1, 99),
                id
            )
            .unwrap();
        }
        7 => {
            out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
            push_id(out, rng, id);
            write!(
                out,
                ",\"method\":\"tools/list\",\"params\":{{\"cursor\":\"c-{:016x}\",\"_meta\":{{\"client\":\"bench\"}}}}}}",
                rng.next_u64()
            )
            .unwrap();
        }
        8 => {
            write!(
                out,
                "{{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{{\"level\":\"{}\",\"logger\":\"{}\",\"data\":\"",
                rng.pick(LEVELS),
                rng.pick(LOGGERS)
            )
            .unwrap();
            let n = rng.range(30, 80);
            push_text(out, rng, n);
            out.extend_from_slice(b"\"}}");
        }
        _ => {
            write!(
                out,
                "{{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{{\"requestId\":{},\"reason\":\"User requested cancellation\"}}}}",
                id.saturating_sub(rng.range(1, 9) as u64)
            )
            .unwrap();
        }
    }
}

/// One mixed-corpus message of about `target` bytes (no newline).
fn mixed_message(out: &mut Vec<u8>, rng: &mut Rng, id: u64, target: usize) {
    if target < 250 {
        return small_message(out, rng, id);
    }
    let start = out.len();
    let fill = |out: &mut Vec<u8>, suffix_len: usize| {
        target.saturating_sub(out.len() - start + suffix_len)
    };
    match rng.below(20) {
        // tools/call result with text content
        0..=8 => {
            out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
            push_id(out, rng, id);
            out.extend_from_slice(b",\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"");
            let n = fill(out, 22);
            push_text(out, rng, n);
            out.extend_from_slice(b"\"}],\"isError\":false}}");
        }
        // tools/call result with a base64 image
        9..=12 => {
            out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
            push_id(out, rng, id);
            out.extend_from_slice(
                b",\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"Rendered chart \\u2192 see image\"},{\"type\":\"image\",\"data\":\"",
            );
            let n = fill(out, 30);
            push_base64(out, rng, n);
            out.extend_from_slice(b"\",\"mimeType\":\"image/png\"}]}}");
        }
        // log notification with structured data
        13..=16 => {
            write!(
                out,
                "{{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{{\"level\":\"{}\",\"logger\":\"{}\",\"data\":{{\"file\":\"{}\",\"line\":{},\"message\":\"",
                rng.pick(LEVELS),
                rng.pick(LOGGERS),
                rng.pick(FILES),
                rng.range(1, 5000)
            )
            .unwrap();
            let n = fill(out, 4);
            push_text(out, rng, n);
            out.extend_from_slice(b"\"}}}");
        }
        // resources/read result with text contents
        _ => {
            out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
            push_id(out, rng, id);
            write!(
                out,
                ",\"result\":{{\"contents\":[{{\"uri\":\"file:///home/dev/project/{}\",\"mimeType\":\"text/markdown\",\"text\":\"",
                rng.pick(FILES)
            )
            .unwrap();
            let n = fill(out, 5);
            push_text(out, rng, n);
            out.extend_from_slice(b"\"}]}}");
        }
    }
}

/// One ~1 MiB message (no newline): a base64 blob resource or a huge text result.
fn large_message(out: &mut Vec<u8>, rng: &mut Rng, id: u64) {
    let start = out.len();
    let target = LARGE_LINE - 1;
    if id.is_multiple_of(2) {
        write!(
            out,
            "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{{\"contents\":[{{\"uri\":\"file:///data/blob-{id}.bin\",\"mimeType\":\"application/octet-stream\",\"blob\":\""
        )
        .unwrap();
        let suffix = b"\"}]}}";
        let n = target - (out.len() - start) - suffix.len();
        push_base64(out, rng, n);
        out.extend_from_slice(suffix);
    } else {
        write!(
            out,
            "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{{\"content\":[{{\"type\":\"text\",\"text\":\""
        )
        .unwrap();
        let suffix = b"\"}],\"isError\":false}}";
        let n = target - (out.len() - start) - suffix.len() - 16; // push_text may overshoot a bit
        push_text(out, rng, n);
        out.extend_from_slice(suffix);
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Small,
    Mixed,
    Large,
}

struct Corpus {
    name: &'static str,
    data: Vec<u8>,
    lines: usize,
    min_line: usize,
    median_line: usize,
    max_line: usize,
}

fn generate(kind: Kind, size: usize) -> Corpus {
    let (name, seed) = match kind {
        Kind::Small => ("small", 0x5EED_0001),
        Kind::Mixed => ("mixed", 0x5EED_0002),
        Kind::Large => ("large", 0x5EED_0003),
    };
    let mut rng = Rng::new(seed);
    let mut data = Vec::with_capacity(size + LARGE_LINE + MIXED_MAX + 4096);
    let mut lens = Vec::new();
    let mut id = 1u64;
    let (lo, hi) = ((MIXED_MIN as f64).ln(), (MIXED_MAX as f64).ln());
    while data.len() < size {
        let start = data.len();
        match kind {
            Kind::Small => small_message(&mut data, &mut rng, id),
            Kind::Mixed => {
                let target = (lo + (hi - lo) * rng.unit()).exp() as usize;
                mixed_message(&mut data, &mut rng, id, target);
            }
            Kind::Large => large_message(&mut data, &mut rng, id),
        }
        data.push(b'\n');
        lens.push(data.len() - start);
        id += 1;
    }
    lens.sort_unstable();
    Corpus {
        name,
        lines: lens.len(),
        min_line: lens[0],
        median_line: lens[lens.len() / 2],
        max_line: lens[lens.len() - 1],
        data,
    }
}

// ---------------------------------------------------------------------------
// Readers
// ---------------------------------------------------------------------------

#[derive(Clone, Copy)]
enum Reader {
    Mcp,
    McpJsonRpc,
    NaiveValue,
    SerdeIgnoredAny,
    SerdeRawValue,
}

impl Reader {
    const ALL: [Reader; 5] = [
        Reader::Mcp,
        Reader::McpJsonRpc,
        Reader::NaiveValue,
        Reader::SerdeIgnoredAny,
        Reader::SerdeRawValue,
    ];
    fn name(self) -> &'static str {
        match self {
            Reader::Mcp => "mcp_stdio",
            Reader::McpJsonRpc => "mcp_stdio+jsonrpc",
            Reader::NaiveValue => "naive Value (baseline)",
            Reader::SerdeIgnoredAny => "serde IgnoredAny",
            Reader::SerdeRawValue => "serde RawValue",
        }
    }
    /// Frames the whole corpus; returns the number of messages accepted.
    fn run(self, data: &[u8], chunk: usize) -> usize {
        match self {
            Reader::Mcp => run_mcp(data, chunk, false),
            Reader::McpJsonRpc => run_mcp(data, chunk, true),
            Reader::NaiveValue => run_naive_value(data, chunk),
            Reader::SerdeIgnoredAny => run_serde_ignored_any(data, chunk),
            Reader::SerdeRawValue => run_serde_raw_value(data, chunk),
        }
    }
}

/// (1)/(2): mcp_stdio::LineReader. Counts `Message::Json` items (with an rpc kind when
/// classification is on); anything else is not counted, so it would show as a mismatch.
fn run_mcp(data: &[u8], chunk: usize, jsonrpc: bool) -> usize {
    let mut reader = LineReader::new();
    reader.set_jsonrpc(jsonrpc);
    let mut count = 0usize;
    let mut drain = |reader: &mut LineReader| {
        while let Some(msg) = reader.next_message() {
            if let Message::Json { line, rpc } = msg {
                if !jsonrpc || rpc.is_some() {
                    count += 1;
                }
                black_box(line);
                black_box(&rpc);
            }
        }
    };
    for piece in data.chunks(chunk) {
        reader.feed(piece).expect("feed");
        drain(&mut reader);
    }
    reader.finish().expect("finish");
    drain(&mut reader);
    count
}

/// Naive line splitting as a typical SDK does it: append the chunk, search `\n` from
/// the start of the pending bytes (so a long line is re-scanned on every chunk), call
/// `parse` on each complete line, then drain the consumed prefix.
#[inline(always)]
fn naive_split(data: &[u8], chunk: usize, mut parse: impl FnMut(&[u8]) -> bool) -> usize {
    let mut buf: Vec<u8> = Vec::new();
    let mut count = 0usize;
    for piece in data.chunks(chunk) {
        buf.extend_from_slice(piece);
        let mut start = 0;
        while let Some(pos) = memchr::memchr(b'\n', &buf[start..]) {
            let line = &buf[start..start + pos];
            if parse(line) {
                count += 1;
            }
            start += pos + 1;
        }
        buf.drain(..start);
    }
    if !buf.is_empty() && parse(&buf) {
        count += 1;
    }
    count
}

/// (3): naive baseline, full `serde_json::Value` per line.
fn run_naive_value(data: &[u8], chunk: usize) -> usize {
    naive_split(data, chunk, |line| {
        match serde_json::from_slice::<serde_json::Value>(line) {
            Ok(v) => {
                black_box(&v);
                true
            }
            Err(_) => false,
        }
    })
}

/// (4): validation only: the same splitting, `serde::de::IgnoredAny` per line.
fn run_serde_ignored_any(data: &[u8], chunk: usize) -> usize {
    naive_split(data, chunk, |line| {
        match serde_json::from_slice::<serde::de::IgnoredAny>(line) {
            Ok(v) => {
                black_box(v);
                true
            }
            Err(_) => false,
        }
    })
}

/// (5): validation and UTF-8: the same splitting, a borrowed `RawValue` per line.
fn run_serde_raw_value(data: &[u8], chunk: usize) -> usize {
    naive_split(data, chunk, |line| {
        match serde_json::from_slice::<&serde_json::value::RawValue>(line) {
            Ok(v) => {
                black_box(v);
                true
            }
            Err(_) => false,
        }
    })
}

// ---------------------------------------------------------------------------
// Driver
// ---------------------------------------------------------------------------

struct Cell {
    corpus: &'static str,
    chunk: usize,
    reader: Reader,
    best: Duration,
    median: Duration,
    bytes: usize,
    msgs: usize,
}

impl Cell {
    fn mbps(&self, d: Duration) -> f64 {
        self.bytes as f64 / d.as_secs_f64() / 1e6
    }
    fn msgs_per_s(&self) -> f64 {
        self.msgs as f64 / self.best.as_secs_f64()
    }
}

fn env_usize(name: &str, default: usize) -> usize {
    match std::env::var(name) {
        Ok(v) => v.trim().parse().unwrap_or_else(|_| {
            eprintln!("warning: ignoring {name}={v:?} (not a number); using {default}");
            default
        }),
        Err(_) => default,
    }
}

fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| {
                    l.starts_with("model name")
                        || l.starts_with("Model")
                        || l.starts_with("cpu model")
                })
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_else(|| "unknown".to_string())
}

fn nproc() -> String {
    let cmd = std::process::Command::new("nproc")
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
    let par = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(0);
    match cmd {
        Some(n) => format!("{n} (available_parallelism {par})"),
        None => format!("nproc unavailable (available_parallelism {par})"),
    }
}

fn si(x: f64) -> String {
    if x >= 1e9 {
        format!("{:.2} G", x / 1e9)
    } else if x >= 1e6 {
        format!("{:.2} M", x / 1e6)
    } else if x >= 1e3 {
        format!("{:.1} k", x / 1e3)
    } else {
        format!("{x:.1}")
    }
}

fn chunk_name(chunk: usize) -> String {
    if chunk.is_multiple_of(1024) {
        format!("{} KiB", chunk / 1024)
    } else {
        format!("{chunk} B")
    }
}

fn main() {
    // `cargo bench` passes `--bench`; without it (e.g. `cargo test --benches`) do a tiny smoke pass.
    let bench_mode = std::env::args().any(|a| a == "--bench");
    let size_mib = if bench_mode {
        env_usize("BENCH_SIZE_MB", DEFAULT_CORPUS_MIB).max(1)
    } else {
        1
    };
    let runs = if bench_mode {
        env_usize("BENCH_RUNS", DEFAULT_RUNS).max(1)
    } else {
        1
    };
    let warmup = bench_mode;

    println!("mcp-stdio framing benchmark");
    println!("cpu:    {}", cpu_model());
    println!("nproc:  {}", nproc());
    println!(
        "setup:  {} MiB per corpus, chunks {}, {}best of {} timed run(s) (median also shown), MB/s = 10^6 input bytes/s",
        size_mib,
        CHUNKS.map(chunk_name).join(" and "),
        if warmup { "1 warm-up + " } else { "no warm-up, " },
        runs
    );
    println!();

    let total_start = Instant::now();
    let mut cells: Vec<Cell> = Vec::new();
    let mut mismatches = 0usize;

    for kind in [Kind::Small, Kind::Mixed, Kind::Large] {
        let t = Instant::now();
        let corpus = generate(kind, size_mib * MIB);
        println!(
            "corpus {:<5} {:>9} bytes, {:>8} lines, line length min/median/max {}/{}/{} bytes (generated in {:.2}s)",
            corpus.name,
            corpus.data.len(),
            corpus.lines,
            corpus.min_line,
            corpus.median_line,
            corpus.max_line,
            t.elapsed().as_secs_f64()
        );
        if let Ok(dir) = std::env::var("BENCH_DUMP_DIR") {
            let path = std::path::Path::new(&dir).join(format!("{}.ndjson", corpus.name));
            match std::fs::write(&path, &corpus.data) {
                Ok(()) => println!("       wrote {}", path.display()),
                Err(e) => println!("       could not write {}: {e}", path.display()),
            }
        }
        for &chunk in &CHUNKS {
            for reader in Reader::ALL {
                let mut counts = Vec::new();
                if warmup {
                    counts.push(reader.run(&corpus.data, chunk));
                }
                let mut times = Vec::with_capacity(runs);
                for _ in 0..runs {
                    let t = Instant::now();
                    let n = reader.run(black_box(&corpus.data), chunk);
                    times.push(t.elapsed());
                    counts.push(black_box(n));
                }
                times.sort();
                if let Some(&bad) = counts.iter().find(|&&n| n != corpus.lines) {
                    mismatches += 1;
                    println!(
                        "!!!!!!!! MISMATCH: corpus {} chunk {} reader {}: saw {} messages, corpus has {} lines !!!!!!!!",
                        corpus.name,
                        chunk_name(chunk),
                        reader.name(),
                        bad,
                        corpus.lines
                    );
                }
                cells.push(Cell {
                    corpus: corpus.name,
                    chunk,
                    reader,
                    best: times[0],
                    median: times[times.len() / 2],
                    bytes: corpus.data.len(),
                    msgs: counts[0],
                });
            }
        }
    }

    // ---- table
    let mut out = String::new();
    writeln!(out).unwrap();
    writeln!(
        out,
        "{:<6} {:>7}  {:<23} {:>9} {:>10} {:>9} {:>11}",
        "corpus", "chunk", "reader", "MB/s", "msgs/s", "vs naive", "median MB/s"
    )
    .unwrap();
    writeln!(out, "{}", "-".repeat(82)).unwrap();
    let find = |corpus: &str, chunk: usize, name: &str| {
        cells
            .iter()
            .find(|c| c.corpus == corpus && c.chunk == chunk && c.reader.name() == name)
    };
    let mut last_group = None;
    for c in &cells {
        let group = (c.corpus, c.chunk);
        if last_group.is_some() && last_group != Some(group) {
            writeln!(out).unwrap();
        }
        last_group = Some(group);
        let base = find(c.corpus, c.chunk, Reader::NaiveValue.name()).map(|b| b.mbps(b.best));
        let ratio = match base {
            Some(b) => format!("{:.2}x", c.mbps(c.best) / b),
            None => "-".into(),
        };
        writeln!(
            out,
            "{:<6} {:>7}  {:<23} {:>9.1} {:>10} {:>9} {:>11.1}",
            c.corpus,
            chunk_name(c.chunk),
            c.reader.name(),
            c.mbps(c.best),
            si(c.msgs_per_s()),
            ratio,
            c.mbps(c.median)
        )
        .unwrap();
    }

    // ---- 4 KiB vs 64 KiB summary
    writeln!(out).unwrap();
    writeln!(
        out,
        "4 KiB vs 64 KiB chunks (MB/s at 4 KiB / MB/s at 64 KiB, best runs; 1.00x = no slowdown):"
    )
    .unwrap();
    for corpus in ["small", "mixed", "large"] {
        let mut parts = Vec::new();
        for reader in Reader::ALL {
            if let (Some(a), Some(b)) = (
                find(corpus, 4 * 1024, reader.name()),
                find(corpus, 64 * 1024, reader.name()),
            ) {
                parts.push(format!(
                    "{} {:.2}x",
                    reader.name(),
                    a.mbps(a.best) / b.mbps(b.best)
                ));
            }
        }
        writeln!(out, "  {:<6} {}", corpus, parts.join(", ")).unwrap();
    }
    writeln!(out).unwrap();
    if mismatches == 0 {
        writeln!(
            out,
            "message counts: all readers agree with the corpus line counts"
        )
        .unwrap();
    } else {
        writeln!(
            out,
            "!!!!!!!! MISMATCH in {mismatches} cell(s): see the lines above !!!!!!!!"
        )
        .unwrap();
    }
    writeln!(
        out,
        "total time {:.1}s",
        total_start.elapsed().as_secs_f64()
    )
    .unwrap();
    print!("{out}");

    if mismatches > 0 && !bench_mode {
        std::process::exit(1);
    }
}
