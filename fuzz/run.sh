#!/usr/bin/env bash
# Runs every fuzz target for SECONDS each (default 60), one after the other,
# and ends with `fuzz: N passed, M failed`. Exits non-zero if any target found
# a crash (a failed assertion, a panic, a sanitizer report, a timeout or OOM);
# the input that did it is saved under fuzz/artifacts/<target>/ and its path
# printed.
#
#   fuzz/run.sh [SECONDS]               every target
#   FUZZ_TARGETS="encode" fuzz/run.sh   only some
#   FUZZ_SIMD="portable avx2" fuzz/run.sh  at those SIMD levels only (default:
#                                       every level this CPU has: portable,
#                                       and avx2 and avx512 where present;
#                                       each target's SECONDS are shared
#                                       among them, MCP_STDIO_SIMD forcing
#                                       each in turn)
#   FUZZ_SANITIZER=address fuzz/run.sh  every target with ASan (default: ffi,
#                                       the unsafe C ABI, with ASan; the
#                                       others, which call only the safe Rust
#                                       API, with none: ~2x faster; overflow
#                                       checks and debug assertions always on)
#
# Uses the nightly toolchain (`cargo +nightly`) when there is one, as ASan
# needs it; without it (or with FUZZ_TOOLCHAIN=stable), the default (stable)
# toolchain and no sanitizer: cargo-fuzz's coverage instrumentation works on
# stable. Installs
# cargo-fuzz from crates.io when it is missing (about 1.5 to 2 minutes on
# this project's 2-core machine). The corpus grows in fuzz/target/corpus/
# (scratch, kept between runs, ignored by git); the checked-in seeds in
# fuzz/seeds/<target>/ are only read.
set -uo pipefail
cd "$(dirname -- "${BASH_SOURCE[0]}")"

seconds=${1:-60}
case $seconds in
'' | *[!0-9]*) echo "usage: fuzz/run.sh [SECONDS]" >&2; exit 2 ;;
esac
read -r -a targets <<<"${FUZZ_TARGETS:-reader_chunking reader_model encode jsonrpc_model transport_model ffi}"
# The SIMD levels to fuzz at: every one this CPU has (what the library
# would pick at most; see its `SimdLevel`).
cpu_has() { grep -q -w "$1" /proc/cpuinfo 2>/dev/null; }
default_levels="portable"
if cpu_has avx2 && cpu_has bmi2; then default_levels+=" avx2"; fi
if cpu_has avx2 && cpu_has bmi2 && cpu_has avx512f && cpu_has avx512bw; then default_levels+=" avx512"; fi
read -r -a levels <<<"${FUZZ_SIMD:-$default_levels}"
per_level=$((seconds / ${#levels[@]}))
[ "$per_level" -ge 1 ] || per_level=1
# Inputs up to 4 KiB: room for every seed (the largest, 1000 nested arrays,
# is 2000 bytes) while keeping executions fast.
max_len=${FUZZ_MAX_LEN:-4096}
cargo_fuzz_version=0.13.2

# FUZZ_TOOLCHAIN=stable (or any rustup toolchain name) forces one.
if [ -n "${FUZZ_TOOLCHAIN:-}" ]; then
    toolchain=$FUZZ_TOOLCHAIN
    cargo=(cargo "+$toolchain")
elif cargo +nightly --version >/dev/null 2>&1; then
    toolchain=nightly
    cargo=(cargo +nightly)
else
    toolchain=default
    cargo=(cargo)
fi
[ "$toolchain" = nightly ] || echo "fuzz: not nightly: fuzzing on $("${cargo[@]}" --version) without sanitizers"

# The sanitizer of a target, and the target dir its build goes to (one per
# toolchain and sanitizer, so that switching never rebuilds everything;
# nightly without a sanitizer uses cargo-fuzz's default, fuzz/target).
sanitizer_of() {
    if [ "$toolchain" != nightly ]; then
        echo none
    elif [ -n "${FUZZ_SANITIZER:-}" ]; then
        echo "$FUZZ_SANITIZER"
    elif [ "$1" = ffi ]; then
        echo address
    else
        echo none
    fi
}
target_dir_of() {
    local s
    s=$(sanitizer_of "$1")
    if [ "$toolchain-$s" = nightly-none ]; then echo target; else echo "target/$toolchain-$s"; fi
}

if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "fuzz: installing cargo-fuzz $cargo_fuzz_version from crates.io (about 2 minutes)"
    start=$SECONDS
    cargo install cargo-fuzz --locked --version "$cargo_fuzz_version" || exit 1
    echo "fuzz: cargo-fuzz installed in $((SECONDS - start)) s"
fi
echo "fuzz: $(cargo fuzz --version), $("${cargo[@]}" --version)"

# Build everything first, so that the fuzzing time is fuzzing.
start=$SECONDS
for t in "${targets[@]}"; do
    "${cargo[@]}" fuzz build --sanitizer "$(sanitizer_of "$t")" --target-dir "$(target_dir_of "$t")" "$t" || {
        echo "fuzz: building $t failed"
        echo "fuzz: 0 passed, $((${#targets[@]} * ${#levels[@]})) failed"
        exit 1
    }
done
echo "fuzz: built in $((SECONDS - start)) s"

echo "fuzz: SIMD levels: ${levels[*]} ($per_level s each)"
passed=0
failed=()
for t in "${targets[@]}"; do
    for level in "${levels[@]}"; do
        corpus=target/corpus/$t
        log=target/logs/$t.$level.log
        mkdir -p "$corpus" target/logs
        printf '\n======== fuzz %s at %s: %s s (sanitizer: %s)\n' "$t" "$level" "$per_level" "$(sanitizer_of "$t")"
        # The scratch corpus first: new inputs go there; the seeds are only read.
        MCP_STDIO_SIMD=$level "${cargo[@]}" fuzz run --sanitizer "$(sanitizer_of "$t")" \
            --target-dir "$(target_dir_of "$t")" "$t" "$corpus" "seeds/$t" -- \
            -max_total_time="$per_level" -max_len="$max_len" -timeout=30 -rss_limit_mb=2048 \
            -print_final_stats=1 >"$log" 2>&1
        status=$?
        # libFuzzer's closing line for a clean run: `Done N runs in S second(s)`.
        done_line=$(grep -E '^Done [0-9]+ runs in [0-9]+ second' "$log" | tail -n 1)
        if [ "$status" -eq 0 ] && [ -n "$done_line" ]; then
            passed=$((passed + 1))
            runs=$(sed -E 's/^Done ([0-9]+) runs in ([0-9]+) second.*/\1 runs in \2 s/' <<<"$done_line")
            cov=$(grep -E '^#[0-9]+[[:space:]]+(DONE|INITED)' "$log" | tail -n 1 |
                grep -oE 'cov: [0-9]+ ft: [0-9]+ corp: [0-9]+/[^ ]+' || true)
            echo "fuzz $t at $level: ok, $runs clean ($cov)"
        else
            failed+=("$t@$level")
            # What went wrong, and where the input is.
            awk '/panicked at/ { p = 1 } /^stack backtrace/ { p = 0 } p' "$log" | head -n 20
            grep -E -A 20 "ERROR: AddressSanitizer" "$log" | head -n 30
            grep -E "ERROR: libFuzzer|SUMMARY: libFuzzer" "$log" | head -n 2
            grep -E -m 1 -A 2 "^MS: " "$log" | tail -n 2 | cut -c 1-300  # the input, as bytes and as text
            grep -E -m 1 "Test unit written to" "$log"
            grep -E -m 1 -A 2 "^Reproduce with" "$log" | tr -d '\t' | grep .
            echo "fuzz $t at $level: FAILED (exit $status; reproduce with MCP_STDIO_SIMD=$level); full log: fuzz/$log"
        fi
    done
done
printf '\n'
[ ${#failed[@]} -eq 0 ] || printf 'fuzz: failed targets: %s\n' "${failed[*]}"
printf 'fuzz: %d passed, %d failed\n' "$passed" "${#failed[@]}"
[ ${#failed[@]} -eq 0 ]
