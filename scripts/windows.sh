#!/usr/bin/env bash
# The Windows build under Wine: the crate compiled for x86_64-pc-windows-gnu
# (mingw-w64) and the Rust tests that apply to Windows run with Wine as the
# runner, in a Wine prefix of their own (target/wine).
#
# Needs: wine64 and gcc-mingw-w64-x86-64 (Debian 12: Wine 8.0), the Rust
# target x86_64-pc-windows-gnu (scripts/test.sh's setup installs them).
#
# Wine 8.0 has no bcryptprimitives.dll (it came with Wine 8.13), whose
# ProcessPrng every Rust program for Windows imports: a shim forwarding it to
# RtlGenRandom (tests/windows/bcryptprimitives.c) is built here and put in
# the prefix's system32, where children started under Wine find it too.
#
# What runs: the reader, the encoder, the envelope, the JSON-RPC classifier,
# the transport's state machine and the memory transport (their unit,
# property and allocation tests, and the C ABI's in-process tests). The
# transport's OS layer has no Windows backend yet, so nothing that spawns or
# does I/O runs here.
set -euo pipefail
cd "$(dirname -- "${BASH_SOURCE[0]}")/.."

wine=$(command -v wine64 || true)
[ -n "$wine" ] || wine=/usr/lib/wine/wine64
[ -x "$wine" ] || { echo "windows: wine64 not found (Debian: apt-get install wine64)"; exit 1; }
command -v x86_64-w64-mingw32-gcc >/dev/null ||
    { echo "windows: x86_64-w64-mingw32-gcc not found (Debian: apt-get install gcc-mingw-w64-x86-64)"; exit 1; }

export WINEPREFIX="$PWD/target/wine"
export WINEDEBUG=-all
# No Mono or Gecko: nothing here needs .NET or HTML, and their installers
# would ask (with no display, they would fail noisily).
export WINEDLLOVERRIDES="mscoree,mshtml="
if [ ! -f "$WINEPREFIX/system.reg" ]; then
    echo "== a new Wine prefix in $WINEPREFIX"
    mkdir -p "$WINEPREFIX"
    "$wine" wineboot -i >/dev/null 2>&1 || true
    [ -d "$WINEPREFIX/drive_c/windows/system32" ] ||
        { echo "windows: wineboot made no prefix in $WINEPREFIX"; exit 1; }
fi
x86_64-w64-mingw32-gcc -O2 -Wall -Wextra -shared -o "$WINEPREFIX/bcryptprimitives.dll" \
    tests/windows/bcryptprimitives.c -ladvapi32
cp "$WINEPREFIX/bcryptprimitives.dll" "$WINEPREFIX/drive_c/windows/system32/"

suites=(--lib --test reader --test encode --test envelope --test jsonrpc --test json_validity
    --test hostile --test properties --test seed --test transport --test transport_memory_bound
    --test transport_no_alloc --test transport_properties --test simd_levels --test no_alloc
    --test readme_snippets)
status=0
CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUNNER="$wine" \
    cargo test --target x86_64-pc-windows-gnu "${suites[@]}" || status=$?
# Nothing of the prefix's left running: its wineserver and services end now.
wineserver=$(command -v wineserver || echo /usr/lib/wine/wineserver)
"$wineserver" -k 2>/dev/null || true
exit "$status"
