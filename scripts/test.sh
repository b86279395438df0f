#!/usr/bin/env bash
# Runs every test of mcp-stdio: formatting and lints, the end-to-end demo
# (C host <-> C server over pipes), then `cargo test`, which runs the Rust
# unit, property and doc tests and, in tests/c_abi.rs, the C and C++ tests
# against the shared and the static library, under valgrind and under
# ASan+UBSan, plus the header, exported-symbols and SONAME checks.
#
# Needs: cargo (with rustfmt and clippy), gcc, g++, valgrind, binutils.
# .ci/run installs what a fresh machine lacks, then runs exactly this.
set -euo pipefail
cd "$(dirname -- "${BASH_SOURCE[0]}")/.."

step() { printf '\n== %s\n' "$*"; }

step "cargo fmt --check"
cargo fmt --all -- --check

step "cargo clippy (all targets, warnings are errors)"
cargo clippy --all-targets -- -D warnings
cargo clippy --all-targets --features panic-injection -- -D warnings

step "demo: C host <-> C server on the library"
bash scripts/demo.sh

step "cargo test (Rust, C, C++, valgrind, sanitizers, header, symbols)"
cargo test
