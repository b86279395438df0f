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
# What runs: the Rust tests that apply to Windows (unit, property and
# allocation tests, the C ABI's in-process tests, and tests/windows_spawn.rs:
# the Windows backend spawning tests/windows/misbehave.c as a well-behaved
# and as a misbehaving server), the C tests of tests/c that need no POSIX,
# built with mingw-w64 against the DLL (through its import library) and
# against the static library, and tests/windows/test_spawn.c (spawn, the
# event-loop handles, a transport on anonymous pipes, the stdout guard of
# tests/windows/guarded_server.c); the demo (mcp_host.exe with
# mcp_server.exe, directly and through a .cmd found by PATHEXT); the Go
# binding's tests, cross-built; the CMake install for Windows; the C++
# wrapper, compiled with mingw's g++, spawning a server. At the end no test server may be
# left running (Wine's processes are processes of this machine: `ps` sees
# them).
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

# The test server of tests/windows_spawn.rs, given by its Windows path.
mkdir -p target/wine-bin
x86_64-w64-mingw32-gcc -O2 -Wall -Wextra -Werror -o target/wine-bin/misbehave.exe \
    tests/windows/misbehave.c
MCP_STDIO_MISBEHAVE=$("$wine" winepath -w "$PWD/target/wine-bin/misbehave.exe" 2>/dev/null | tr -d '\r')
export MCP_STDIO_MISBEHAVE

suites=(--lib --test windows_spawn --test reader --test encode --test envelope --test jsonrpc --test json_validity
    --test hostile --test properties --test seed --test transport --test transport_memory_bound
    --test transport_no_alloc --test transport_properties --test simd_levels --test no_alloc
    --test readme_snippets)
status=0
CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUNNER="$wine" \
    cargo test --target x86_64-pc-windows-gnu "${suites[@]}" || status=$?

# The C tests that need no POSIX, against the DLL and the static library
# (target/x86_64-pc-windows-gnu/debug: cargo test of some suites does not
# make them, so they are built here), each run from a directory of its own:
# the DLL beside the one that needs it, none beside the static one.
c_tests=(c/test_args c/test_encode c/test_envelope c/test_flags_jsonrpc c/test_limits c/test_meta
    c/test_reader windows/test_spawn)
lib=target/x86_64-pc-windows-gnu/debug
cargo build --target x86_64-pc-windows-gnu --lib || status=1
out=target/wine-c
rm -rf "$out" && mkdir -p "$out/dll" "$out/static"
cp "$lib/mcp_stdio.dll" "$out/dll/"
native_libs=(-lkernel32 -lntdll -luserenv -lws2_32 -ldbghelp) # cargo's native-static-libs
# The guarded server of test_spawn, linked statically (it needs no DLL
# beside it, wherever it runs from).
x86_64-w64-mingw32-gcc -std=c11 -Wall -Wextra -Werror -Iinclude tests/windows/guarded_server.c \
    "$lib/libmcp_stdio.a" "${native_libs[@]}" -o target/wine-bin/guarded_server.exe || status=1
MCP_STDIO_GUARDED_SERVER=$("$wine" winepath -w "$PWD/target/wine-bin/guarded_server.exe" 2>/dev/null | tr -d '\r')
export MCP_STDIO_GUARDED_SERVER
for src in "${c_tests[@]}"; do
    t=${src#*/}
    for kind in dll static; do
        exe="$out/$kind/$t.exe"
        if [ "$kind" = dll ]; then
            link=("$lib/libmcp_stdio.dll.a")
        else
            link=("$lib/libmcp_stdio.a" "${native_libs[@]}")
        fi
        if ! x86_64-w64-mingw32-gcc -std=c11 -Wall -Wextra -Werror -Iinclude "tests/$src.c" \
            "${link[@]}" -o "$exe"; then
            echo "windows: $t ($kind): does not build"
            status=1
            continue
        fi
        if result=$(cd "$out/$kind" && timeout 300 "$wine" "./$t.exe" 2>&1); then
            echo "windows: $t ($kind): $(tail -n 1 <<<"$result")"
        else
            printf '%s\nwindows: %s (%s): FAILED\n' "$result" "$t" "$kind"
            status=1
        fi
    done
done
# The demo: mcp_host.exe runs its session with mcp_server.exe, started
# directly and through a .cmd wrapper that the host finds as `srv` in its
# PATH with PATHEXT (WINEPATH puts the wrapper's directory first in the
# PATH Wine gives the host).
echo "== mcp_host.exe with mcp_server.exe, directly and through a .cmd"
demo=target/wine-demo
rm -rf "$demo" && mkdir -p "$demo/cmd"
cp "$lib/mcp_stdio.dll" "$demo/"
for p in mcp_host mcp_server; do
    x86_64-w64-mingw32-gcc -std=c11 -O1 -Wall -Wextra -Werror -Iinclude -Iexamples "examples/$p.c" \
        "$lib/libmcp_stdio.dll.a" -o "$demo/$p.exe" || status=1
done
printf '@"%%~dp0..\\mcp_server.exe" %%*\r\n' >"$demo/cmd/srv.cmd"
server_path=$("$wine" winepath -w "$PWD/$demo/mcp_server.exe" 2>/dev/null | tr -d '\r')
cmd_dir=$("$wine" winepath -w "$PWD/$demo/cmd" 2>/dev/null | tr -d '\r')
for how in direct cmd; do
    if [ "$how" = direct ]; then args=("$server_path"); path=; else args=(srv); path=$cmd_dir; fi
    if result=$(cd "$demo" && WINEPATH="$path" timeout 120 "$wine" ./mcp_host.exe "${args[@]}" 2>&1) &&
        grep -q '^ok: 4/4 expected responses' <<<"$result"; then
        echo "windows: mcp_host.exe with mcp_server.exe ($how): $(tail -n 1 <<<"$result")"
    else
        printf '%s\nwindows: mcp_host.exe with mcp_server.exe (%s): FAILED\n' "$result" "$how"
        status=1
    fi
done

# The same with the Rust examples on the safe API (examples/host.rs and
# examples/server.rs).
if cargo build --target x86_64-pc-windows-gnu --example host --example server; then
    examples=target/x86_64-pc-windows-gnu/debug/examples
    rust_server=$("$wine" winepath -w "$PWD/$examples/server.exe" 2>/dev/null | tr -d '\r')
    if result=$(timeout 120 "$wine" "$examples/host.exe" "$rust_server" 2>&1) &&
        grep -q '^ok: 4/4 expected responses' <<<"$result"; then
        echo "windows: examples/host.rs with examples/server.rs: $(tail -n 1 <<<"$result")"
    else
        printf '%s\nwindows: examples/host.rs with examples/server.rs: FAILED\n' "$result"
        status=1
    fi
else
    echo "windows: the Rust examples do not build for Windows"
    status=1
fi

# The Go binding, cross-built (cgo with mingw-w64's gcc, linking the release
# static library for Windows) and its tests run under Wine, without -race
# (the race detector needs a Windows host). StartCommand and its tests are
# unix-only (build tag unix): they wait for the library's Windows backend.
echo "== the Go binding for windows/amd64, its tests under Wine"
if cargo build --release --target x86_64-pc-windows-gnu --lib &&
    (cd bindings/go &&
        GOPROXY=off GOFLAGS=-mod=readonly GOCACHE="$PWD/../../target/go-cache-windows" \
            GOOS=windows GOARCH=amd64 CGO_ENABLED=1 CC=x86_64-w64-mingw32-gcc \
            go test -c -o "../../$out/go_test.exe" .); then
    if result=$(cd "$out" && timeout 600 "$wine" ./go_test.exe -test.v 2>&1); then
        echo "windows: the Go binding: $(grep -c '^--- PASS' <<<"$result") tests passed, $(tail -n 1 <<<"$result")"
    else
        printf '%s\nwindows: the Go binding: FAILED\n' "$result"
        status=1
    fi
else
    echo "windows: the Go binding does not build for windows/amd64"
    status=1
fi

# The C++17 wrapper, as mingw's g++ compiles it, spawning a server under
# Wine (its C++ runtime linked statically: Wine has no libstdc++ DLL).
echo "== the C++ wrapper on Windows"
if x86_64-w64-mingw32-g++ -std=c++17 -Wall -Wextra -Werror -Iinclude tests/windows/test_spawn.cpp \
    "$lib/libmcp_stdio.dll.a" -static -o "$out/dll/test_spawn_cpp.exe"; then
    if result=$(cd "$out/dll" && timeout 120 "$wine" ./test_spawn_cpp.exe 2>&1); then
        echo "windows: $(tail -n 1 <<<"$result")"
    else
        printf '%s\nwindows: test_spawn_cpp: FAILED\n' "$result"
        status=1
    fi
else
    echo "windows: mcp_stdio.hpp does not compile with mingw g++"
    status=1
fi

# The CMake install for Windows (MinGW toolchain file), and consumers of it
# (find_package, pkg-config, add_subdirectory; DLL and static) run under
# Wine; it reuses this build's cargo directory.
echo "== the CMake install for Windows, its consumers under Wine"
MCP_STDIO_CARGO_TARGET_DIR="$PWD/target" bash tests/packaging/windows.sh || status=1

# No test server left running: each test checks its own tree with markers;
# this looks at the whole machine.
if left=$(pgrep -af 'misbehave\.exe|guarded_server\.exe|mcp_server\.exe|mcp_host\.exe|examples.(host|server)\.exe'); then
    printf 'windows: test servers left running:\n%s\n' "$left"
    status=1
else
    echo "windows: no test server left running"
fi
# Nothing of the prefix's left running: its wineserver and services end now.
wineserver=$(command -v wineserver || echo /usr/lib/wine/wineserver)
"$wineserver" -k 2>/dev/null || true
exit "$status"
