#!/usr/bin/env bash
# Runs the C ABI layer (src/ffi, where all the unsafe code is) under Miri, the
# Rust interpreter that detects undefined behaviour: out-of-bounds or
# dangling accesses, slices from invalid raw parts, frees with the wrong
# layout, aliasing violations, leaks, uninitialised reads.
#
#   1. the lib's unit tests (src/ffi/tests.rs calls every extern "C" function
#      as a C caller would: NULL pointers, (NULL, 0) slices, buffers freed
#      twice, panics injected at every fault point and the poisoning after);
#      once with Stacked Borrows (Miri's default) and once with Tree Borrows,
#      both with strict provenance;
#   2. the POSIX I/O tests (tests/posix_io.rs) that Miri can run: pipes and
#      read(2)/write(2) are emulated by Miri, which checks the raw read into
#      the reader's spare capacity. Miri does not emulate the signal-mask
#      calls of mcp_write_all's SIGPIPE guard (sigemptyset, pthread_sigmask,
#      sigpending...), so a small native library forwarding just those to
#      libc is loaded with -Zmiri-native-lib (they only touch a local
#      sigset_t and the thread's mask). Left out:
#        megabytes_through_a_pipe_*   ~9 MB of JSON: hours under Miri
#        write_all_waits_out_*,
#        write_all_deadline_*         poll(2) is not supported by Miri
#        socketpairs_work_both_ways   Miri's socketpair has no shutdown(2):
#                                     the peer never sees end of stream
#      tests/posix_signals.rs is left out entirely: Miri emulates no signals
#      (signal(2), kill(2), EINTR).
#
# Needs rustup (installs the nightly components miri and rust-src if
# missing) and a C compiler as `cc`. Builds in target/miri. Extra MIRIFLAGS
# from the environment are kept.
set -euo pipefail
cd "$(dirname -- "${BASH_SOURCE[0]}")/.."

toolchain=${MIRI_TOOLCHAIN:-nightly}
target_dir=target/miri
start=$SECONDS

installed=$(rustup component list --toolchain "$toolchain" --installed 2>/dev/null || true)
if ! grep -q '^miri' <<<"$installed" || ! grep -q '^rust-src' <<<"$installed"; then
    rustup component add miri rust-src --toolchain "$toolchain"
fi
cargo "+$toolchain" miri setup

# committed_header_matches_the_code reads include/mcp_stdio.h: no isolation.
base_flags="${MIRIFLAGS:-} -Zmiri-disable-isolation"
# The unit tests also pass with strict provenance (no integer-to-pointer casts).
lib_flags="$base_flags -Zmiri-strict-provenance"

# Work that buys Miri nothing, left out of the interpreted tests (together
# about 6.5 of the step's 15 minutes on the 2-core CI machine):
# - backtraces: with RUST_BACKTRACE set, each panic the tests inject (caught
#   at the C boundary) captures and prints one, seconds of interpreted std
#   code per panic (over 3 minutes over both runs, most with Tree Borrows).
#   Miri's own reports of undefined behaviour keep theirs;
#   MIRI_RUST_BACKTRACE=1 brings the tests' back, to see where one of their
#   assertions failed.
# - proptest's 256 cases per property (PROPTEST_CASES sets the default
#   config's count): Miri looks for undefined behaviour along code paths that
#   a few cases already take, and src/process/windows/cmdline.rs's property
#   took over 3 minutes of the two runs. The native `cargo test` runs all 256.
export RUST_BACKTRACE=${MIRI_RUST_BACKTRACE:-0}
export PROPTEST_CASES=${MIRI_PROPTEST_CASES:-8}

step() { printf '\n==== miri: %s\n' "$*"; }

step "unit tests (src/ffi/tests.rs), Stacked Borrows"
MIRIFLAGS="$lib_flags" \
    cargo "+$toolchain" miri test --lib --target-dir "$target_dir"

step "unit tests (src/ffi/tests.rs), Tree Borrows"
MIRIFLAGS="$lib_flags -Zmiri-tree-borrows" \
    cargo "+$toolchain" miri test --lib --target-dir "$target_dir"

step "tests/posix_io.rs (pipes), with native signal-mask calls"
shim_dir="$target_dir/sigmask-shim"
mkdir -p "$shim_dir"
cat >"$shim_dir/sigmask_shim.c" <<'EOF'
/* Forwarders to libc for the signal-mask calls Miri does not emulate. They
 * must be defined in this library (Miri only calls functions it defines). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <signal.h>
#include <time.h>
#define FORWARD(ret, name, params, args)                                       \
    ret name params                                                            \
    {                                                                          \
        ret(*real) params = (ret(*) params)dlsym(RTLD_NEXT, #name);            \
        return real args;                                                      \
    }
FORWARD(int, sigemptyset, (sigset_t * s), (s))
FORWARD(int, sigaddset, (sigset_t * s, int n), (s, n))
FORWARD(int, sigismember, (const sigset_t *s, int n), (s, n))
FORWARD(int, sigpending, (sigset_t * s), (s))
FORWARD(int, pthread_sigmask, (int how, const sigset_t *s, sigset_t *old), (how, s, old))
FORWARD(int, sigtimedwait, (const sigset_t *s, siginfo_t *info, const struct timespec *t),
        (s, info, t))
EOF
cc -shared -fPIC -O2 -o "$shim_dir/libsigmask_shim.so" "$shim_dir/sigmask_shim.c" -ldl
MIRIFLAGS="$base_flags -Zmiri-native-lib=$PWD/$shim_dir/libsigmask_shim.so" \
    cargo "+$toolchain" miri test --test posix_io --target-dir "$target_dir" -- \
    --skip megabytes_through_a_pipe_arrive_whole_and_in_order \
    --skip write_all_waits_out_a_full_non_blocking_pipe \
    --skip write_all_deadline \
    --skip socketpairs_work_both_ways

printf '\nmiri: all passed (%ss)\n' $((SECONDS - start))
