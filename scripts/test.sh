#!/usr/bin/env bash
# Runs every test of mcp-stdio, step by step, and ends with a summary line.
#
#   lint        cargo fmt --check, cargo clippy -D warnings (also with
#               panic injection, and without the C ABI feature)
#   rust        cargo test: Rust unit, property and doc tests, the POSIX I/O
#               helpers, and (tests/c_abi/) the C and C++ tests against the
#               shared and the static library, under valgrind and ASan+UBSan,
#               the header as C99/C11/C++11, exported symbols, SONAME
#   stress      release: the hostile-input catalogue and the stress tests (1 GiB
#               unterminated line, 10,000 readers, 8 threads, a 300 MB soak)
#   miri        the FFI layer under Miri (Stacked and Tree Borrows)
#   tsan        the threads stress tests (readers; sends on one transport from
#               many threads) under ThreadSanitizer (nightly)
#   demo        the C host and C server on the library, over pipes
#   swift       the Swift module map, imported with clang -fmodules
#   packaging   install into a prefix; consumers via pkg-config (shared and
#               static), find_package and add_subdirectory, rpath checks, and
#               the Go binding against the installed prefix
#   cpp         the C++17 wrapper's GoogleTest suite (CMake + ctest)
#   go          the Go binding: go vet, go test -race
#   e2e         real MCP peers (npm and PyPI packages, pinned) against our
#               host and our server
#   fuzz        every cargo-fuzz target for 60 s (nightly; FUZZ_SECONDS=N)
#   bench_smoke the side-by-side benchmark on tiny corpora: it still builds,
#               runs and every runner counts the same messages (no timing
#               is judged: the real run is `bash bench/run.sh`)
#
# Needs what .ci/run installs. `scripts/test.sh STEP...` runs only those steps.
set -uo pipefail
cd "$(dirname -- "${BASH_SOURCE[0]}")/.."

lint() {
    cargo fmt --all -- --check &&
        cargo clippy --all-targets -- -D warnings &&
        cargo clippy --all-targets --features panic-injection -- -D warnings &&
        cargo clippy --all-targets --no-default-features -- -D warnings
}
# Also the crate as Rust users without the C ABI get it (default-features = false).
# Then the suites that validate JSON again at the SIMD levels the first run
# did not use (it used the default, AVX2 where the CPU has it; a level the
# CPU lacks falls back to the widest it has; see `SimdLevel`).
simd_suites=(--test simd_levels --test json_validity --test hostile --test reader --test encode
    --test envelope --test jsonrpc --test properties)
rust() {
    cargo test && cargo test --no-default-features --lib --test reader --test encode || return 1
    for level in portable avx512; do
        echo "== the validating suites at MCP_STDIO_SIMD=$level"
        MCP_STDIO_SIMD=$level cargo test -q "${simd_suites[@]}" || return 1
    done
}
stress() { cargo test --release --test hostile --test 'stress_*' -- --nocapture; }
miri() { bash scripts/miri.sh; }
tsan() {
    RUSTFLAGS="-Zsanitizer=thread" CARGO_TARGET_DIR=target/tsan \
        cargo +nightly test -Zbuild-std --target x86_64-unknown-linux-gnu \
        --test stress_threads --test transport_threads
}
demo() { bash scripts/demo.sh; }
swift() { bash bindings/swift/test.sh; }
packaging() { bash tests/packaging/run.sh; }
cpp() {
    cmake -S . -B target/cmake-tests -DMCP_STDIO_BUILD_TESTS=ON -DCMAKE_BUILD_TYPE=Release &&
        cmake --build target/cmake-tests --parallel 2 &&
        ctest --test-dir target/cmake-tests --output-on-failure
}
go_binding() { bash bindings/go/test.sh; }
e2e() { bash tests/e2e/run.sh; }
fuzz() { bash fuzz/run.sh "${FUZZ_SECONDS:-60}"; }
bench_smoke() {
    BENCH_SIZE_MB=1 BENCH_RUNS=1 BENCH_SLICE_MB=0.25 BENCH_ENCODE_MB=1 bash bench/run.sh
}

all=(lint rust stress miri tsan demo swift packaging cpp go_binding e2e fuzz bench_smoke)
steps=("${@:-${all[@]}}")
passed=0
failed=()
for step in "${steps[@]}"; do
    printf '\n======== %s\n' "$step"
    start=$SECONDS
    if "$step"; then
        passed=$((passed + 1))
        printf '======== %s: ok (%ss)\n' "$step" $((SECONDS - start))
    else
        failed+=("$step")
        printf '======== %s: FAILED (%ss)\n' "$step" $((SECONDS - start))
    fi
done
printf '\n'
[ ${#failed[@]} -eq 0 ] || printf 'failed steps: %s\n' "${failed[*]}"
printf 'steps: %d passed, %d failed\n' "$passed" "${#failed[@]}"
[ ${#failed[@]} -eq 0 ]
