//! The naive Rust baseline for bench/run.sh (same algorithm as `naive Value` in
//! benches/framing.rs): append each chunk to a `Vec<u8>`, search `\n` from the start of
//! the pending bytes (so a long line is re-scanned on every chunk), parse each complete
//! line with `serde_json::from_slice::<serde_json::Value>`, drain the consumed prefix.
//!
//! Usage: naive-rust-runner RUNNER CORPUS FILE CHUNK RUNS
//! Prints: BENCH runner=.. corpus=.. chunk=.. bytes=.. messages=.. errors=.. seconds=<best>
//!         median=.. runs=.. checksum=..

use std::hint::black_box;
use std::time::Instant;

#[derive(Default, Clone, Copy, PartialEq)]
struct Counts {
    messages: u64,
    errors: u64,
    checksum: u64,
}

fn parse(line: &[u8], c: &mut Counts) {
    match serde_json::from_slice::<serde_json::Value>(line) {
        Ok(v) => {
            c.messages += 1;
            c.checksum += line.len() as u64;
            black_box(&v);
        }
        Err(_) => {
            c.errors += 1;
            c.checksum += line.len() as u64 + 7;
        }
    }
}

#[inline(never)]
fn one_pass(data: &[u8], chunk: usize) -> Counts {
    let mut c = Counts::default();
    let mut buf: Vec<u8> = Vec::new();
    for piece in data.chunks(chunk) {
        buf.extend_from_slice(piece);
        let mut start = 0;
        while let Some(pos) = memchr::memchr(b'\n', &buf[start..]) {
            parse(&buf[start..start + pos], &mut c);
            start += pos + 1;
        }
        buf.drain(..start);
    }
    if !buf.is_empty() {
        parse(&buf, &mut c);
    }
    c
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 6 {
        eprintln!("usage: {} RUNNER CORPUS FILE CHUNK RUNS", args[0]);
        std::process::exit(2);
    }
    let data = std::fs::read(&args[3]).unwrap_or_else(|e| {
        eprintln!("naive-rust-runner: cannot read {}: {e}", args[3]);
        std::process::exit(2)
    });
    let chunk: usize = args[4].parse().expect("CHUNK");
    let runs: usize = args[5].parse().expect("RUNS");
    assert!(chunk > 0 && runs > 0);
    let mut times = Vec::with_capacity(runs);
    let mut first = None;
    for _ in 0..runs {
        let t = Instant::now();
        let c = one_pass(black_box(&data), chunk);
        times.push(t.elapsed().as_secs_f64());
        match first {
            None => first = Some(c),
            Some(f) if f != c => panic!("runs disagree"),
            _ => {}
        }
    }
    times.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let c = first.unwrap();
    println!(
        "BENCH runner={} corpus={} chunk={} bytes={} messages={} errors={} seconds={:.9} median={:.9} runs={} checksum={}",
        args[1], args[2], chunk, data.len(), c.messages, c.errors, times[0], times[runs / 2], runs, c.checksum
    );
}
