#!/usr/bin/env bash
# Runs every test of mcp-stdio, step by step, and ends with a summary line.
# First, every time, the set-up installs what the steps need and the machine
# lacks (see `setup` below; when nothing is missing it only checks, in about
# a second):
#
#   setup       Debian packages, checked with dpkg -s and installed with
#               apt-get when missing: valgrind, binutils, gcc, g++, libc6-dev,
#               libasan8, libubsan1 (the C ABI tests), clang (the Swift module
#               map), cmake, pkg-config, libgtest-dev (install, consumers, the
#               C++ tests), golang-go (the Go binding, Go 1.19),
#               libsimdjson-dev (the benchmark's simdjson peer), wine64,
#               gcc- and g++-mingw-w64-x86-64 (the Windows build under
#               Wine), and
#               python3-venv if python3 cannot make venvs (e2e). As root
#               directly; otherwise with sudo if it works without a password;
#               otherwise it names the missing packages and the command to
#               install them, and fails (without dpkg, not Debian, it says so
#               and checks none). With rustup: rustfmt and clippy on
#               the default toolchain (lint), the nightly toolchain and its
#               rust-src component (tsan's -Zbuild-std), the targets
#               aarch64-apple-darwin, x86_64-apple-darwin, aarch64-apple-ios
#               (lint) and x86_64-pc-windows-gnu (windows). Checks that node,
#               npm and python3 are there (e2e; the machine image has them).
#               Not here: miri (scripts/miri.sh adds it) and cargo-fuzz
#               (fuzz/run.sh installs it). The whole list is installed even
#               when only some steps are asked for.
#
#   lint        cargo fmt --check, cargo clippy -D warnings (also with
#               panic injection, without the C ABI feature, for macOS on
#               Apple silicon and Intel and for iOS: compiled, not run; and
#               the library for Windows), cargo
#               doc with warnings denied (with and without the C ABI feature)
#   rust        cargo test: Rust unit, property and doc tests, the POSIX I/O
#               helpers, and (tests/c_abi/) the C and C++ tests against the
#               shared and the static library, under valgrind and ASan+UBSan,
#               the header as C99/C11/C++11, exported symbols, SONAME
#   posix       the OS layer's tests on the portable POSIX build
#               (MCP_STDIO_PORTABLE_POSIX=1: no pidfd, eventfd, epoll or
#               close_range; the code path macOS runs), here on Linux
#   windows     the crate built for x86_64-pc-windows-gnu (mingw-w64) and
#               the Rust tests that apply to Windows run under Wine
#               (scripts/windows.sh)
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
#   rmcp        integrations/rmcp (rmcp on our transports, its own crate and
#               lockfile): fmt, clippy (also the library for Windows), its
#               tests (misbehaving servers, the rmcp server example on our
#               stdio, the failure catalogue)
#   e2e         real MCP peers (npm and PyPI packages, pinned) against our
#               host and our server
#   fuzz        every cargo-fuzz target for 60 s (nightly; FUZZ_SECONDS=N)
#   bench_smoke the side-by-side benchmark on tiny corpora: it still builds,
#               runs and every runner counts the same messages (no timing
#               is judged: the real run is `bash bench/run.sh`)
#
# `scripts/test.sh STEP...` runs the set-up, then only those steps;
# `scripts/test.sh setup` runs only the set-up.
set -uo pipefail
cd "$(dirname -- "${BASH_SOURCE[0]}")/.."

# Debian packages the steps use (most are already there on a developer machine).
packages=(
    valgrind binutils gcc g++ libc6-dev libasan8 libubsan1  # C ABI tests
    clang                                                   # Swift module map check
    cmake pkg-config libgtest-dev                           # install, consumers, C++ tests
    golang-go                                               # Go binding (Go 1.19)
    libsimdjson-dev                                         # the benchmark's simdjson peer
    wine64 gcc-mingw-w64-x86-64 g++-mingw-w64-x86-64        # the Windows build, under Wine
)
# Rust targets lint compiles for, and the Windows one the windows step runs
# under Wine (rustup downloads their standard libraries).
apple_targets=(aarch64-apple-darwin x86_64-apple-darwin aarch64-apple-ios)
rust_targets=("${apple_targets[@]}" x86_64-pc-windows-gnu)
can_make_venvs() { python3 -c 'import ensurepip, venv' >/dev/null 2>&1; }
setup() {
    local p pkgs=("${packages[@]}") missing=() sudo=()
    # e2e makes venvs: Debian's own python3 needs python3-venv for that.
    command -v python3 >/dev/null && ! can_make_venvs && pkgs+=(python3-venv)
    if command -v dpkg >/dev/null; then
        for p in "${pkgs[@]}"; do
            dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
        done
    else
        echo "setup: no dpkg, so not Debian: not checking the Debian packages; the steps need their equivalents: ${pkgs[*]}"
    fi
    if [ ${#missing[@]} -gt 0 ]; then
        echo "setup: missing Debian packages: ${missing[*]}"
        if [ "$(id -u)" != 0 ]; then
            if command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
                sudo=(sudo -n)
            else
                echo "setup: this is not root, and sudo is not there or asks for a password; install them with:"
                echo "    sudo apt-get update && sudo apt-get install --no-install-recommends ${missing[*]}"
                echo "setup: then run scripts/test.sh again"
                return 1
            fi
        fi
        "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q &&
            "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
                apt-get install -y -q --no-install-recommends "${missing[@]}" || {
            echo "setup: apt-get could not install: ${missing[*]}"
            return 1
        }
    fi
    # Rust: lint needs rustfmt and clippy; tsan needs nightly and its rust-src
    # (-Zbuild-std). Miri's components are added by scripts/miri.sh.
    command -v rustup >/dev/null || { echo "setup: rustup is required (https://rustup.rs)"; return 1; }
    local have
    have=$(rustup component list --installed 2>/dev/null)
    if ! grep -q '^rustfmt' <<<"$have" || ! grep -q '^clippy' <<<"$have"; then
        echo "setup: adding rustfmt and clippy to the default toolchain"
        rustup component add rustfmt clippy || return 1
    fi
    if ! rustup toolchain list | grep -q '^nightly-[^0-9]'; then
        echo "setup: installing the nightly toolchain"
        rustup toolchain install nightly --profile minimal || return 1
    fi
    local targets
    targets=$(rustup target list --installed 2>/dev/null)
    for p in "${rust_targets[@]}"; do
        if ! grep -qx "$p" <<<"$targets"; then
            echo "setup: adding the Rust target $p"
            rustup target add "$p" || return 1
        fi
    done
    if ! rustup component list --toolchain nightly --installed 2>/dev/null | grep -q '^rust-src'; then
        echo "setup: adding rust-src to the nightly toolchain"
        rustup component add rust-src --toolchain nightly || return 1
    fi
    for p in node npm python3; do
        command -v "$p" >/dev/null || { echo "setup: $p is required (the machine image provides it)"; return 1; }
    done
    can_make_venvs || { echo "setup: $(command -v python3) cannot make venvs (python3 -m venv), which e2e needs"; return 1; }
}

lint() {
    cargo fmt --all -- --check &&
        cargo clippy --all-targets -- -D warnings &&
        cargo clippy --all-targets --features panic-injection -- -D warnings &&
        cargo clippy --all-targets --no-default-features -- -D warnings &&
        RUSTDOCFLAGS="-D warnings" cargo doc --no-deps --quiet &&
        RUSTDOCFLAGS="-D warnings" cargo doc --no-deps --quiet --no-default-features &&
        RUSTDOCFLAGS="-D warnings" cargo doc --no-deps --quiet --target x86_64-pc-windows-gnu &&
        for target in "${apple_targets[@]}"; do
            echo "== cargo clippy --all-targets --target $target"
            cargo clippy --quiet --all-targets --target "$target" -- -D warnings || return 1
        done &&
        # Windows: the library, with its unit tests, and the Windows spawn
        # tests (the windows step runs them under Wine).
        cargo clippy --quiet --lib --target x86_64-pc-windows-gnu -- -D warnings &&
        cargo clippy --quiet --lib --profile test --target x86_64-pc-windows-gnu -- -D warnings &&
        cargo clippy --quiet --test windows_spawn --example host --example server \
            --target x86_64-pc-windows-gnu -- -D warnings
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
# The OS layer's suites, and the hosts, on the portable POSIX build (its own
# target directory: the default build keeps its artefacts).
posix_suites=(--lib --test connection_spawn --test connection_deadlines --test transport_spawn
    --test transport_socketpair --test transport_threads --test posix_io --test posix_signals
    --test sigpipe_pending --test capi_transport_no_alloc --test rust_host
    --test connection_end_reason --test connection_call --test connection_progress
    --test connection_restart --test connection_send_now)
posix() {
    MCP_STDIO_PORTABLE_POSIX=1 CARGO_TARGET_DIR=target/posix cargo test "${posix_suites[@]}"
}
windows() { bash scripts/windows.sh; }
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
# rmcp on our transports: a crate of its own (integrations/rmcp, its own
# lockfile), so the library's build never sees rmcp or tokio.
rmcp() {
    (cd integrations/rmcp &&
        cargo fmt -- --check &&
        cargo clippy --locked --all-targets -- -D warnings &&
        cargo clippy --locked --lib --target x86_64-pc-windows-gnu -- -D warnings &&
        cargo test --locked)
}
e2e() { bash tests/e2e/run.sh; }
fuzz() { bash fuzz/run.sh "${FUZZ_SECONDS:-60}"; }
bench_smoke() {
    BENCH_SIZE_MB=1 BENCH_RUNS=1 BENCH_SLICE_MB=0.25 BENCH_ENCODE_MB=1 bash bench/run.sh
}

all=(lint rust posix windows stress miri tsan demo swift packaging cpp go_binding rmcp e2e fuzz bench_smoke)
steps=()
for step in "${@:-${all[@]}}"; do
    [ "$step" = setup ] || steps+=("$step")
done
printf '======== setup\n'
start=$SECONDS
if ! setup; then
    printf '======== setup: FAILED (%ss): no step was run\n' $((SECONDS - start))
    exit 1
fi
printf '======== setup: ok (%ss)\n' $((SECONDS - start))
[ ${#steps[@]} -gt 0 ] || exit 0
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
