#!/usr/bin/env bash
# Builds mcp-stdio, compiles the C demo host and server against it, and runs
# an MCP session between them over pipes:
#
#   target/demo/mcp_host target/demo/mcp_server
#
# Works from any current directory. Needs cargo and a C compiler (gcc by
# default; override with CC=...).
set -euo pipefail

repo_root="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo_root"

CC="${CC:-gcc}"
out_dir=target/demo
lib=target/release/libmcp_stdio.a

# Native libraries the Rust static library needs, as reported by
#   cargo rustc --release --lib --crate-type staticlib -- --print native-static-libs
native_libs=(-lgcc_s -lutil -lrt -lpthread -lm -ldl -lc)

cflags=(-std=c11 -D_POSIX_C_SOURCE=200809L -Wall -Wextra -Werror -O2 -g -Iinclude)

echo "== cargo build --release"
cargo build --release

mkdir -p "$out_dir"
for prog in mcp_server mcp_host; do
    echo "== $CC examples/$prog.c -> $out_dir/$prog"
    # The .a is named by path so the static library is used even though the
    # shared one sits next to it.
    "$CC" "${cflags[@]}" "examples/$prog.c" "$lib" "${native_libs[@]}" -o "$out_dir/$prog"
done

echo "== $out_dir/mcp_host $out_dir/mcp_server"
"$out_dir/mcp_host" "$out_dir/mcp_server"
