//! The sonic-rs peer of bench/run.sh: sonic-rs, built with `-C target-cpu=native` (its
//! SIMD kernels are chosen at compile time), used the way a Rust host would use it on a
//! stdio stream, beside simdjson built with `-march=native`.
//!
//! Usage:
//!   sonic-rs-runner RUNNER CORPUS FILE CHUNK RUNS
//!       Reads FILE into memory, then RUNS times: chunks of CHUNK bytes appended to a
//!       buffer, only the new bytes searched for `\n` (memchr, from where the last search
//!       stopped), each complete line validated, the partial last line kept (moved to the
//!       front of the buffer) for the next chunk. As simdjson_lines.cpp: trailing `\r`,
//!       spaces and tabs are stripped and blank lines skipped (the rest is JSON
//!       whitespace, which the parser skips).
//!   sonic-rs-runner encode RUNNER CORPUS FILE RUNS
//!       FILE holds NUL-separated JSON documents (as for `mcp_stdio_runner encode`); RUNS
//!       times: minify each one into one reused Vec (parse to `sonic_rs::Value`, then
//!       `sonic_rs::to_writer`, compact, and a `\n`: one line). Bytes = input bytes.
//!
//! Prints one line (chunk=0 for encode, which report.py puts in the encode table):
//!   BENCH runner=.. corpus=.. chunk=.. bytes=.. messages=.. errors=.. seconds=<best>
//!         median=.. runs=.. checksum=.. simd=..
//!
//! Validation of a line: `sonic_rs::from_slice::<serde::de::IgnoredAny>`, which checks the
//! whole line as UTF-8 (simdutf8, strict), then skips the value "with full validation"
//! (structure, number syntax, string control characters, escape letters), then only
//! whitespace after it. One gap against RFC 8259: it takes any 4 bytes after `\u` as the
//! escape's digits (`"\uZZZZ"` passes). `unicode_escapes_are_hex` closes it, on the lines
//! sonic-rs accepted only. Lone surrogate escapes (`"\ud800"`) and huge numbers are
//! accepted, as by mcp-stdio: skipping decodes neither.

use std::hint::black_box;
use std::time::Instant;

#[derive(Default, Clone, Copy, PartialEq)]
struct Counts {
    messages: u64,
    errors: u64,
    checksum: u64,
}

/// A 64-byte block's bitmask of the bytes equal to `c` (bit k: byte k).
#[inline(always)]
fn eq_mask(block: &[u8], c: u8) -> u64 {
    let block = &block[..64];
    #[cfg(all(target_arch = "x86_64", target_feature = "avx2"))]
    // SAFETY: AVX2 is enabled at compile time (target-cpu=native on an AVX2 CPU), and the
    // two unaligned 32-byte loads stay inside `block`, 64 bytes long.
    unsafe {
        use std::arch::x86_64::*;
        let v = _mm256_set1_epi8(c as i8);
        let lo = _mm256_loadu_si256(block.as_ptr() as *const __m256i);
        let hi = _mm256_loadu_si256(block.as_ptr().add(32) as *const __m256i);
        let lo = _mm256_movemask_epi8(_mm256_cmpeq_epi8(lo, v)) as u32 as u64;
        let hi = _mm256_movemask_epi8(_mm256_cmpeq_epi8(hi, v)) as u32 as u64;
        lo | hi << 32
    }
    #[cfg(not(all(target_arch = "x86_64", target_feature = "avx2")))]
    {
        let mut m = 0u64;
        for (k, &b) in block.iter().enumerate() {
            m |= ((b == c) as u64) << k;
        }
        m
    }
}

/// A 64-byte block's bitmask of the ASCII hex digits (`0-9`, `a-f`, `A-F`).
#[inline(always)]
fn hex_mask(block: &[u8]) -> u64 {
    let block = &block[..64];
    #[cfg(all(target_arch = "x86_64", target_feature = "avx2"))]
    // SAFETY: as in `eq_mask`.
    unsafe {
        use std::arch::x86_64::*;
        // x - lo <= span, unsigned: `min` leaves the in-range bytes unchanged.
        let within = |x: __m256i, lo: u8, span: u8| {
            let d = _mm256_sub_epi8(x, _mm256_set1_epi8(lo as i8));
            _mm256_cmpeq_epi8(_mm256_min_epu8(d, _mm256_set1_epi8(span as i8)), d)
        };
        let half = |p: *const u8| {
            let v = _mm256_loadu_si256(p as *const __m256i);
            // `| 0x20` maps exactly `A-F` and `a-f` into `a-f`.
            let lower = _mm256_or_si256(v, _mm256_set1_epi8(0x20));
            let hex = _mm256_or_si256(within(v, b'0', 9), within(lower, b'a', 5));
            _mm256_movemask_epi8(hex) as u32 as u64
        };
        half(block.as_ptr()) | half(block.as_ptr().add(32)) << 32
    }
    #[cfg(not(all(target_arch = "x86_64", target_feature = "avx2")))]
    {
        let mut m = 0u64;
        for (k, &b) in block.iter().enumerate() {
            m |= (b.is_ascii_hexdigit() as u64) << k;
        }
        m
    }
}

/// On a line sonic-rs accepted: every `\u` escape has 4 hex digits. Such a line has
/// backslashes only inside strings, each starting an escape, so a `u` is an escape's letter
/// when the run of backslashes before it is odd (a run pairs up from its start), as long as
/// every escape before it is well formed; the first malformed one is therefore found.
///
/// Per 64-byte block, with bitmasks (AVX2): the backslashes and the `u`s; where a `u`
/// follows a backslash, or digits or a backslash run are pending from the block before,
/// also the escaped bytes as simdjson finds them (odd runs of backslashes, carried across
/// blocks), the escaped `u`s among them, and the 4 positions after each (carried too),
/// tested against the block's hex-digit mask. The line's last partial block is its last 64
/// bytes shifted down (zeros above the end, so digits missing there fail), or a
/// zero-padded copy of a line shorter than 64 bytes. Against the same runner without the
/// check, it adds 3% to the time on the small corpus, 8% on escape, 15-17% on mixed and
/// large (on mixed, sonic-rs runs ~4.8 instructions a byte and the check ~0.7). Looking
/// at each `\u` pair found instead (the backslash run before it counted, its 4 digits
/// looked up) was as fast but on the escape corpus (a `\u` every 27 bytes): +20% there.
fn unicode_escapes_are_hex(line: &[u8]) -> bool {
    const ODD_BITS: u64 = 0xaaaa_aaaa_aaaa_aaaa;
    let mut escaped_next = 0u64; // bit 0: the next block's first byte is escaped
    let mut digits_next = 0u64; // bits 0-3: the next block's bytes that must be hex digits
    let mut backslash_last = 0u64; // bit 0: the last block ended in a backslash

    // A block's masks of backslashes and `u`s, and its hex digits (when needed).
    let mut block_ok = |backslash: u64, u: u64, hex: &dyn Fn() -> u64| {
        let after_backslash = backslash << 1 | backslash_last;
        backslash_last = backslash >> 63;
        if u & after_backslash == 0 && digits_next == 0 && backslash_last == 0 {
            escaped_next = 0; // no `\u` here, nothing pending, no run into the next block
            return true;
        }
        // simdjson's json_escape_scanner: the byte after each odd run's last backslash.
        let potential = backslash & !escaped_next;
        let codes = (((potential << 1) | ODD_BITS).wrapping_sub(potential)) ^ ODD_BITS;
        let escaped = codes ^ (backslash | escaped_next);
        escaped_next = (codes & backslash) >> 63;
        let u = escaped & u;
        let digits = digits_next | u << 1 | u << 2 | u << 3 | u << 4;
        digits_next = u >> 63 | u >> 62 | u >> 61 | u >> 60;
        digits == 0 || digits & !hex() == 0
    };
    let n = line.len();
    let mut i = 0;
    while i + 64 <= n {
        let b = &line[i..];
        if !block_ok(eq_mask(b, b'\\'), eq_mask(b, b'u'), &|| hex_mask(b)) {
            return false;
        }
        i += 64;
    }
    if i < n && n >= 64 {
        // The last 64 bytes, shifted down so that bit 0 is byte i: zeros come in above n.
        let (b, shift) = (&line[n - 64..], i - (n - 64));
        let ok = block_ok(
            eq_mask(b, b'\\') >> shift,
            eq_mask(b, b'u') >> shift,
            &|| hex_mask(b) >> shift,
        );
        if !ok {
            return false;
        }
    } else if i < n {
        let mut b = [0u8; 64];
        b[..n].copy_from_slice(line);
        if !block_ok(eq_mask(&b, b'\\'), eq_mask(&b, b'u'), &|| hex_mask(&b)) {
            return false;
        }
    }
    digits_next == 0
}

#[inline]
fn valid(line: &[u8]) -> bool {
    sonic_rs::from_slice::<serde::de::IgnoredAny>(line).is_ok() && unicode_escapes_are_hex(line)
}

#[inline]
fn judge(line: &[u8], c: &mut Counts) {
    let mut len = line.len();
    while len > 0 && matches!(line[len - 1], b'\r' | b' ' | b'\t') {
        len -= 1;
    }
    if len == 0 {
        return;
    }
    if valid(black_box(&line[..len])) {
        c.messages += 1;
    } else {
        c.errors += 1;
    }
    c.checksum += len as u64;
}

#[inline(never)]
fn one_read_pass(data: &[u8], chunk: usize) -> Counts {
    let mut c = Counts::default();
    let mut buf: Vec<u8> = Vec::with_capacity(4096);
    let mut scanned = 0; // bytes of buf already searched for '\n'
    for piece in data.chunks(chunk) {
        buf.extend_from_slice(piece);
        let mut start = 0;
        while let Some(p) = memchr::memchr(b'\n', &buf[scanned..]) {
            let end = scanned + p;
            judge(&buf[start..end], &mut c);
            start = end + 1;
            scanned = start;
        }
        scanned = buf.len();
        if start > 0 {
            buf.drain(..start);
            scanned -= start;
        }
    }
    if !buf.is_empty() {
        judge(&buf, &mut c);
    }
    c
}

#[inline(never)]
fn one_encode_pass(docs: &[&[u8]], out: &mut Vec<u8>) -> Counts {
    let mut c = Counts::default();
    for doc in docs {
        out.clear();
        let ok = match sonic_rs::from_slice::<sonic_rs::Value>(doc) {
            Ok(v) => sonic_rs::to_writer(&mut *out, &v).is_ok(),
            Err(_) => false,
        };
        if ok {
            out.push(b'\n');
            c.messages += 1;
            c.checksum += out.len() as u64 + out[out.len() / 2] as u64;
        } else {
            c.errors += 1;
        }
    }
    c
}

/// The SIMD level sonic-rs was compiled for (it has no run-time dispatch; its 512-bit
/// kernels need its `avx512` feature, which this crate leaves off, as mcp-stdio leaves
/// AVX-512 off by default).
fn simd() -> &'static str {
    if cfg!(all(target_feature = "avx2", target_feature = "pclmulqdq")) {
        "avx2"
    } else if cfg!(target_feature = "sse2") {
        "sse2"
    } else if cfg!(target_feature = "neon") {
        "neon"
    } else {
        "scalar"
    }
}

fn usage(argv0: &str) -> ! {
    eprintln!("usage: {argv0} RUNNER CORPUS FILE CHUNK RUNS\n       {argv0} encode RUNNER CORPUS FILE RUNS");
    std::process::exit(2)
}

fn number(s: &str, what: &str) -> usize {
    match s.parse::<usize>() {
        Ok(n) if n > 0 => n,
        _ => {
            eprintln!("sonic-rs-runner: {what} must be a positive number, not {s:?}");
            std::process::exit(2)
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let encode = args.len() == 6 && args[1] == "encode";
    if !encode && args.len() != 6 {
        usage(&args[0]);
    }
    let a = if encode { &args[2..] } else { &args[1..] };
    let (runner, corpus, path) = (&a[0], &a[1], &a[2]);
    let chunk = if encode { 0 } else { number(&a[3], "CHUNK") };
    let runs = number(&a[a.len() - 1], "RUNS");
    let data = std::fs::read(path).unwrap_or_else(|e| {
        eprintln!("sonic-rs-runner: cannot read {path}: {e}");
        std::process::exit(2)
    });

    // The documents of encode: every piece that a NUL ends (as mcp_stdio_runner).
    let mut docs: Vec<&[u8]> = Vec::new();
    if encode {
        let mut start = 0;
        for nul in memchr::memchr_iter(0, &data) {
            docs.push(&data[start..nul]);
            start = nul + 1;
        }
    }
    let longest = docs.iter().map(|d| d.len()).max().unwrap_or(0);
    let mut out = Vec::with_capacity(longest + 1);

    let mut times = Vec::with_capacity(runs);
    let mut first = None;
    for _ in 0..runs {
        let t = Instant::now();
        let c = if encode {
            one_encode_pass(black_box(&docs), &mut out)
        } else {
            one_read_pass(black_box(&data), chunk)
        };
        times.push(t.elapsed().as_secs_f64());
        match first {
            None => first = Some(c),
            Some(f) if f != c => {
                eprintln!("sonic-rs-runner: runs disagree");
                std::process::exit(1)
            }
            _ => {}
        }
    }
    times.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let c = first.unwrap();
    let bytes: usize = if encode {
        docs.iter().map(|d| d.len()).sum()
    } else {
        data.len()
    };
    println!(
        "BENCH runner={runner} corpus={corpus} chunk={chunk} bytes={bytes} messages={} errors={} seconds={:.9} \
         median={:.9} runs={runs} checksum={} simd={}",
        c.messages,
        c.errors,
        times[0],
        times[runs / 2],
        c.checksum,
        simd()
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strictness() {
        for ok in [
            &br#"{"a":[1,2.5e-3,-0,true,false,null],"b":"\u00e9\ud83d\ude00\n\\u"}"#[..],
            br#""\ud800""#, // a lone surrogate escape
            br#"["\udc00","\ud800\u0041","\uDFFF\uD800"]"#,
            br#"123456789012345678901234567890e99999"#, // a huge number
            br#"[1e999999,-1E+999999,0.000001e-999999]"#,
            " {\"x\": \"\u{e9}\u{2028}\"} ".as_bytes(),
            br#"["\\", "\\\\u", "\u0041"]"#,
        ] {
            assert!(valid(ok), "{}", String::from_utf8_lossy(ok));
        }
        for bad in [
            &br#""\uZZZZ""#[..],
            br#"["\u12",1]"#,
            br#""\u00e""#,
            br#"{"a":1,}"#,
            br#"[01]"#,
            b"01",
            b"-",
            b"1.",
            b"1e",
            b"\"\xc0\xaf\"",         // overlong UTF-8 ('/' in 2 bytes)
            b"\"\xe0\x80\xaf\"",     // overlong UTF-8 ('/' in 3 bytes)
            b"\"\xf4\x90\x80\x80\"", // above U+10FFFF
            b"\"\xc3\"",             // truncated sequence
            br#"{"a":1}{"b":2}"#,
            br#"{"a":1},"#,
            br#""\u00e9\uD83G""#,
            b"tru",
            br#"[1 2]"#,
            br#"{"a" 1}"#,
            br#""tab	here""#,
            br#"{"a":1} x"#,
            b"\"\xff\"",
            b"\"\xed\xa0\x80\"", // a surrogate in UTF-8
            br#""\x""#,
            b"",
            b"nul",
        ] {
            assert!(!valid(bad), "{}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn strictness_across_64_byte_blocks() {
        for pad in 0..200 {
            let x = "x".repeat(pad);
            let with = |s: &str| format!(r#"["{x}{s}", "{x}"]"#);
            for ok in [r"\u00e9", r"\\u", r"\\\\uZZ", r"\\\u0041", r"\ud83d\ude00"] {
                assert!(valid(with(ok).as_bytes()), "{pad} {ok}");
            }
            for bad in [r"\uZZZZ", r"\u00eX", r"\\\uZ000", r"a\u12"] {
                assert!(!valid(with(bad).as_bytes()), "{pad} {bad}");
            }
            // The escape in the last bytes of the line (the tail bitmask).
            let last = |s: &str| format!(r#""{x}{s}""#);
            for ok in [r"\u00e9", r"\\u", r"\\\\uZ", r"\u0041\u0042"] {
                assert!(valid(last(ok).as_bytes()), "{pad} {ok}");
            }
            for bad in [r"\uZZZZ", r"\u004G", r"\u0041\u004", r"\\\u12"] {
                assert!(!valid(last(bad).as_bytes()), "{pad} {bad}");
            }
        }
    }

    #[test]
    fn hex_mask_is_ascii_hexdigit() {
        let bytes: Vec<u8> = (0..=255).collect();
        for block in bytes.chunks(64) {
            let want = (0..64).fold(0u64, |m, k| m | (block[k].is_ascii_hexdigit() as u64) << k);
            assert_eq!(hex_mask(block), want, "{block:?}");
        }
    }

    /// `unicode_escapes_are_hex` by its definition, one byte at a time.
    fn escapes_are_hex_slowly(line: &[u8]) -> bool {
        (0..line.len().saturating_sub(1)).all(|k| {
            line[k] != b'\\'
                || line[k + 1] != b'u'
                || line[..k].iter().rev().take_while(|&&b| b == b'\\').count() % 2 == 1
                || matches!(line.get(k + 2..k + 6), Some(d) if d.iter().all(u8::is_ascii_hexdigit))
        })
    }

    #[test]
    fn escape_check_blocks_and_tail_agree_with_the_definition() {
        // Every length to 300, bytes drawn (xorshift) from those that make and break `\u`
        // escapes; most lines are no JSON, which the function does not need.
        let alphabet = b"\\\\\\uuu09afAFgG/:\x13\" ";
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let (mut passed, mut failed) = (0, 0);
        for n in 0..300 {
            for _ in 0..200 {
                let line: Vec<u8> = (0..n)
                    .map(|_| {
                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
                        alphabet[(x % alphabet.len() as u64) as usize]
                    })
                    .collect();
                let want = escapes_are_hex_slowly(&line);
                assert_eq!(
                    unicode_escapes_are_hex(&line),
                    want,
                    "{}",
                    String::from_utf8_lossy(&line)
                );
                if want {
                    passed += 1;
                } else {
                    failed += 1;
                }
            }
        }
        assert!(passed > 5_000 && failed > 5_000, "{passed} {failed}"); // 9,369 and 50,631
    }
}
