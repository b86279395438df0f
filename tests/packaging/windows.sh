#!/usr/bin/env bash
# Packaging tests of mcp-stdio for Windows: the CMake build, cross-compiled
# from Linux with mingw-w64 (cmake/toolchains/mingw-w64-x86_64.cmake, cargo
# target x86_64-pc-windows-gnu), installs the library the Windows way, and C
# programs built against the installed package run under Wine.
#
#   bash tests/packaging/windows.sh    (from any directory; KEEP=1 keeps the work dir)
#
# Builds the library once with CMake, installs it into a temporary prefix,
# checks the installed files (bin/mcp_stdio.dll, lib/libmcp_stdio.dll.a,
# lib/libmcp_stdio.a, the headers, the CMake package, the pkg-config files;
# no symlinks), the imported targets' properties and the .pc files, then
# builds tests/packaging/consumer.c and runs it under Wine through
#   1. find_package(mcp_stdio) (tests/packaging/find_package, cross-compiled
#      with the same toolchain file), shared (the DLL copied beside the .exe;
#      without it the .exe does not start) and static, with the C++ consumer
#   2. pkg-config with mingw-w64's gcc, shared (-lmcp_stdio takes the import
#      library) and static (mcp_stdio_static.pc)
#   3. add_subdirectory() of the source tree, shared and static
# (3 reuses the first build's cargo target dir, so cargo runs only once).
# Prints one line per check, then "N passed, M failed" alone on the last line;
# exits non-zero if any check failed.
#
# Environment:
#   WINEPREFIX                  the Wine prefix (default: target/wine, the one
#                               scripts/windows.sh uses; made if missing)
#   MCP_STDIO_CARGO_TARGET_DIR  cargo's target dir for the build (default: in
#                               the work dir, so a full cargo build each run;
#                               set it to keep cargo's work between runs)
#
# Needs: cargo with the Rust target x86_64-pc-windows-gnu, cmake >= 3.21,
# mingw-w64 (gcc-mingw-w64-x86-64, g++-mingw-w64-x86-64), wine64 (Debian 12:
# Wine 8.0), pkg-config.
set -euo pipefail

ROOT=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/../.." && pwd)
HERE="$ROOT/tests/packaging"
TOOLCHAIN="$ROOT/cmake/toolchains/mingw-w64-x86_64.cmake"
TRIPLE=x86_64-pc-windows-gnu
MINGW=x86_64-w64-mingw32
mkdir -p "$ROOT/target/packaging-tests"
WORK=$(mktemp -d "$ROOT/target/packaging-tests/windows.XXXXXX")
cleanup() {
    [ "${KEEP:-0}" = 1 ] && return
    rm -rf -- "$WORK"
    rmdir -- "$ROOT/target/packaging-tests" 2>/dev/null || true
}
trap cleanup EXIT

JOBS=$(nproc 2>/dev/null || echo 2)
PREFIX="$WORK/prefix"
BUILD="$WORK/build"
CARGO_DIR=${MCP_STDIO_CARGO_TARGET_DIR:-$BUILD/cargo}
CFLAGS_STRICT=(-std=c99 -Wall -Wextra -Wpedantic -Werror)
SYSTEM_LIBS="-lkernel32 -lntdll -luserenv -lws2_32 -ldbghelp"   # rustc's native-static-libs
mkdir -p "$WORK/logs"

export WINEPREFIX=${WINEPREFIX:-$ROOT/target/wine}
export WINEDEBUG=-all
# No Mono or Gecko: nothing here needs .NET or HTML (scripts/windows.sh does the same).
export WINEDLLOVERRIDES="mscoree,mshtml="
WINE=$(command -v wine64 || echo /usr/lib/wine/wine64)

# The check harness and cargo_field, as in run.sh.
# shellcheck source=tests/packaging/harness.sh
source "$ROOT/tests/packaging/harness.sh"

VERSION=$(cargo_field version)
FULL_VERSION=${VERSION%%[-+]*}

# `cmd | has PATTERN`: grep that reads all its input (grep -q stops at the
# first match, and under pipefail the writer's SIGPIPE would fail the pipe).
has() { grep "$@" >/dev/null; }
# imports <exe>: the DLLs a PE file imports, one a line.
imports() { "$MINGW-objdump" -p "$1" | sed -n 's/^[[:space:]]*DLL Name: //p'; }
imports_dll() {
    imports "$1"
    imports "$1" | has -x 'mcp_stdio.dll' || fail "$1 does not import mcp_stdio.dll"
}
imports_no_dll() {
    imports "$1"
    if imports "$1" | has -i 'mcp_stdio'; then fail "$1 imports mcp_stdio.dll: not statically linked"; fi
}
# wine_run <exe> [WINEPATH]: runs it under Wine from its own directory (where
# Windows looks for DLLs first); prints its output without the CRs.
wine_run() {
    local dir=${1%/*} exe=${1##*/}
    (cd "$dir" && WINEPATH=${2:-} timeout 300 "$WINE" "./$exe" </dev/null) | tr -d '\r'
}
run_consumer() {
    local out
    out=$(wine_run "$1")
    printf '%s\n' "$out"
    grep -qx "consumer: mcp_stdio $VERSION OK" <<<"$out" || fail "unexpected output from $1"
}
# mingw-w64's own DLLs (libstdc++-6.dll, libgcc_s_seh-1.dll), which a C++
# program built with its g++ loads: their directory, as a Windows path.
gcc_runtime_winpath() {
    local dll
    dll=$("$MINGW-g++" -print-file-name=libstdc++-6.dll)
    [ -f "$dll" ] || fail "libstdc++-6.dll of $MINGW-g++ not found"
    printf 'Z:%s' "$(dirname "$dll" | tr / '\\')"
}
run_consumer_cxx() {
    local out
    out=$(wine_run "$1" "$(gcc_runtime_winpath)")
    printf '%s\n' "$out"
    grep -qx 'consumer_cxx: OK' <<<"$out" || fail "unexpected output from $1"
}
# The DLL beside <exe> is the installed one.
dll_beside() {
    local dll="${1%/*}/mcp_stdio.dll"
    [ -f "$dll" ] || fail "no mcp_stdio.dll beside $1"
    cmp "$2" "$dll" || fail "the DLL beside $1 is not $2"
    echo "mcp_stdio.dll beside ${1##*/}: $2"
}
no_dll_beside() {
    if [ -e "${1%/*}/mcp_stdio.dll" ]; then fail "mcp_stdio.dll beside $1, which links the static library"; fi
}
# Cross-compiled CMake project: configure <src> <build> [-D...]; build it.
cmake_windows() {
    local src=$1 bld=$2; shift 2
    cmake -S "$src" -B "$bld" -DCMAKE_BUILD_TYPE=Release -DCMAKE_TOOLCHAIN_FILE="$TOOLCHAIN" "$@"
    cmake --build "$bld" --parallel "$JOBS"
}
# find_package in an installed prefix, cross-compiling: the prefix is both
# searched and a find root (see the toolchain file).
FIND_PREFIX=(-DCMAKE_PREFIX_PATH="$PREFIX" -DCMAKE_FIND_ROOT_PATH="$PREFIX")
found_in_prefix() {
    grep -x "mcp_stdio_DIR:PATH=.*" "$1/CMakeCache.txt"
    grep -qx "mcp_stdio_DIR:PATH=$2/lib/cmake/mcp_stdio" "$1/CMakeCache.txt" ||
        fail "find_package did not find the package in $2"
}

# ---------------------------------------------------------------------------
# Tools, build and install.

t_tools() {
    local tool
    for tool in cargo cmake pkg-config "$MINGW-gcc" "$MINGW-g++" "$MINGW-objdump" "$MINGW-nm"; do
        command -v "$tool" || fail "$tool not found"
    done
    [ -x "$WINE" ] || fail "wine64 not found (Debian: apt-get install wine64)"
    "$WINE" --version
    local v
    v=$(cmake --version | sed -n 's/^cmake version \([0-9]*\.[0-9]*\).*/\1/p')
    echo "cmake $v"
    printf '%s\n' 3.21 "$v" | sort -C -V || fail "CMake >= 3.21 needed (\$<TARGET_RUNTIME_DLLS>), not $v"
    rustup target list --installed 2>/dev/null | has -x "$TRIPLE" ||
        fail "the Rust target $TRIPLE is not installed (rustup target add $TRIPLE)"
}
t_configure() {
    cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DMCP_STDIO_BUILD_TESTS=OFF \
        -DCMAKE_TOOLCHAIN_FILE="$TOOLCHAIN" -DMCP_STDIO_CARGO_TARGET="$TRIPLE" \
        -DMCP_STDIO_CARGO_TARGET_DIR="$CARGO_DIR"
    grep -qx "CMAKE_PROJECT_VERSION:STATIC=$FULL_VERSION" "$BUILD/CMakeCache.txt" ||
        fail "project version is not Cargo.toml's $FULL_VERSION"
    grep -qx 'set(CMAKE_SYSTEM_NAME "Windows")' "$BUILD"/CMakeFiles/*/CMakeSystem.cmake ||
        fail "the system is not Windows"
    grep -qx "set(CMAKE_C_COMPILER \".*/$MINGW-gcc\")" "$BUILD"/CMakeFiles/*/CMakeCCompiler.cmake ||
        fail "the C compiler is not $MINGW-gcc"
}
t_build() {
    cmake --build "$BUILD" --parallel "$JOBS"
    local out="$CARGO_DIR/$TRIPLE/release" f
    # What cargo makes for a windows-gnu cdylib + staticlib.
    for f in mcp_stdio.dll libmcp_stdio.dll.a libmcp_stdio.a; do
        [ -f "$out/$f" ] || fail "cargo did not make $out/$f"
    done
    for f in bin/mcp_stdio.dll lib/libmcp_stdio.dll.a lib/libmcp_stdio.a; do
        [ -f "$BUILD/$f" ] || fail "the build tree has no $f"
    done
}
t_rebuild_noop() {
    cmake --build "$BUILD" --parallel "$JOBS" | tee "$WORK/noop.log"
    if grep -q 'mcp_stdio: cargo build' "$WORK/noop.log"; then fail "cargo ran again with nothing changed"; fi
}
t_install() {
    cmake --install "$BUILD" --prefix "$PREFIX"
}
t_installed_files() {
    local expected=(
        bin/mcp_stdio.dll
        include/mcp_stdio.h
        lib/cmake/mcp_stdio/mcp_stdioConfig.cmake
        lib/cmake/mcp_stdio/mcp_stdioConfigVersion.cmake
        lib/libmcp_stdio.a
        lib/libmcp_stdio.dll.a
        lib/pkgconfig/mcp_stdio.pc
        lib/pkgconfig/mcp_stdio_static.pc
    )
    [ -f "$ROOT/include/mcp_stdio.hpp" ] && expected+=(include/mcp_stdio.hpp)
    diff -u <(printf '%s\n' "${expected[@]}" | LC_ALL=C sort) \
            <(cd "$PREFIX" && find . ! -type d | sed 's|^\./||' | LC_ALL=C sort)
    local links
    links=$(cd "$PREFIX" && find . -type l)
    [ -z "$links" ] || fail "symlinks installed: $links"
    local dll="$PREFIX/bin/mcp_stdio.dll" implib="$PREFIX/lib/libmcp_stdio.dll.a" ar="$PREFIX/lib/libmcp_stdio.a"
    "$MINGW-objdump" -f "$dll" | has 'file format pei-x86-64' || fail "$dll is not a 64-bit PE file"
    "$MINGW-objdump" -p "$dll" | has '^[[:space:]]*\[ *[0-9]*\] mcp_stdio_version$' ||
        fail "$dll does not export mcp_stdio_version"
    # The import library: __imp_ symbols, for mcp_stdio.dll.
    "$MINGW-nm" "$implib" | has ' I __imp_mcp_stdio_version$' || fail "$implib has no __imp_mcp_stdio_version"
    grep -aq 'mcp_stdio\.dll' "$implib" || fail "$implib does not name mcp_stdio.dll"
    # The static library: COFF objects defining the functions.
    "$MINGW-nm" "$ar" 2>/dev/null | has ' T mcp_stdio_version$' || fail "$ar does not define mcp_stdio_version"
    cmp "$ROOT/include/mcp_stdio.h" "$PREFIX/include/mcp_stdio.h"
    if [ -f "$ROOT/include/mcp_stdio.hpp" ]; then cmp "$ROOT/include/mcp_stdio.hpp" "$PREFIX/include/mcp_stdio.hpp"; fi
}
t_cmake_targets() {
    # A project that prints the package's imported targets, found with the
    # toolchain file, default and MCP_STDIO_SHARED=ON.
    local src="$WORK/props-src"
    mkdir -p "$src"
    cat >"$src/CMakeLists.txt" <<'EOF'
cmake_minimum_required(VERSION 3.16)
project(props LANGUAGES C)
find_package(mcp_stdio CONFIG REQUIRED)
foreach(t IN ITEMS mcp_stdio::mcp_stdio_shared mcp_stdio::mcp_stdio_static mcp_stdio::mcp_stdio)
  foreach(p IN ITEMS TYPE IMPORTED_LOCATION IMPORTED_IMPLIB IMPORTED_SONAME INTERFACE_LINK_LIBRARIES)
    get_target_property(v ${t} ${p})
    message(STATUS "prop ${t} ${p}=${v}")
  endforeach()
endforeach()
EOF
    local props want
    cmake -S "$src" -B "$WORK/props" -DCMAKE_TOOLCHAIN_FILE="$TOOLCHAIN" "${FIND_PREFIX[@]}" | tee "$WORK/props.log"
    props=$(sed -n 's/^-- prop //p' "$WORK/props.log")
    want="mcp_stdio::mcp_stdio_shared TYPE=SHARED_LIBRARY
mcp_stdio::mcp_stdio_shared IMPORTED_LOCATION=$PREFIX/bin/mcp_stdio.dll
mcp_stdio::mcp_stdio_shared IMPORTED_IMPLIB=$PREFIX/lib/libmcp_stdio.dll.a
mcp_stdio::mcp_stdio_shared IMPORTED_SONAME=v-NOTFOUND
mcp_stdio::mcp_stdio_shared INTERFACE_LINK_LIBRARIES=v-NOTFOUND
mcp_stdio::mcp_stdio_static TYPE=STATIC_LIBRARY
mcp_stdio::mcp_stdio_static IMPORTED_LOCATION=$PREFIX/lib/libmcp_stdio.a
mcp_stdio::mcp_stdio_static IMPORTED_IMPLIB=v-NOTFOUND
mcp_stdio::mcp_stdio_static IMPORTED_SONAME=v-NOTFOUND
mcp_stdio::mcp_stdio_static INTERFACE_LINK_LIBRARIES=kernel32;ntdll;userenv;ws2_32;dbghelp
mcp_stdio::mcp_stdio TYPE=INTERFACE_LIBRARY
mcp_stdio::mcp_stdio IMPORTED_LOCATION=v-NOTFOUND
mcp_stdio::mcp_stdio IMPORTED_IMPLIB=v-NOTFOUND
mcp_stdio::mcp_stdio IMPORTED_SONAME=v-NOTFOUND
mcp_stdio::mcp_stdio INTERFACE_LINK_LIBRARIES=mcp_stdio::mcp_stdio_static"
    diff -u <(printf '%s\n' "$want") <(printf '%s\n' "$props")
    rm -rf "$WORK/props"
    cmake -S "$src" -B "$WORK/props" -DCMAKE_TOOLCHAIN_FILE="$TOOLCHAIN" "${FIND_PREFIX[@]}" \
        -DMCP_STDIO_SHARED=ON >"$WORK/props.log"
    grep -qx -- '-- prop mcp_stdio::mcp_stdio INTERFACE_LINK_LIBRARIES=mcp_stdio::mcp_stdio_shared' "$WORK/props.log" ||
        fail "MCP_STDIO_SHARED=ON: mcp_stdio::mcp_stdio is not the shared library"
}
t_pc_files() {
    export PKG_CONFIG_PATH="$PREFIX/lib/pkgconfig"
    cat "$PREFIX/lib/pkgconfig/mcp_stdio.pc" "$PREFIX/lib/pkgconfig/mcp_stdio_static.pc"
    pkg-config --validate mcp_stdio
    pkg-config --validate mcp_stdio_static
    grep -qx "prefix=$PREFIX" "$PREFIX/lib/pkgconfig/mcp_stdio.pc" || fail "prefix is not the --prefix given to cmake --install"
    [ "$(pkg-config --modversion mcp_stdio)" = "$VERSION" ] || fail "Version is not Cargo.toml's $VERSION"
    [ "$(pkg-config --cflags mcp_stdio | xargs)" = "-I$PREFIX/include" ] || fail "Cflags"
    [ "$(pkg-config --libs mcp_stdio | xargs)" = "-L$PREFIX/lib -lmcp_stdio" ] || fail "Libs"
    [ "$(pkg-config --static --libs mcp_stdio | xargs)" = "-L$PREFIX/lib -lmcp_stdio $SYSTEM_LIBS" ] ||
        fail "Libs.private: $(pkg-config --static --libs mcp_stdio)"
    [ "$(pkg-config --libs mcp_stdio_static | xargs)" = "$PREFIX/lib/libmcp_stdio.a $SYSTEM_LIBS" ] ||
        fail "mcp_stdio_static Libs: $(pkg-config --libs mcp_stdio_static)"
}
t_components() {
    # Runtime = the DLL only (the rest is Development).
    local p="$WORK/runtime-only"
    cmake --install "$BUILD" --prefix "$p" --component Runtime
    diff -u <(printf '%s\n' bin/mcp_stdio.dll) <(cd "$p" && find . ! -type d | sed 's|^\./||' | LC_ALL=C sort)
}
t_destdir_strip() {
    # Staged install, --strip with mingw-w64's strip (the toolchain's CMAKE_STRIP).
    local stage="$WORK/stage" root
    DESTDIR="$stage" cmake --install "$BUILD" --prefix /opt/mcp --strip
    root="$stage/opt/mcp"
    [ -f "$root/bin/mcp_stdio.dll" ] || fail "DLL not staged"
    grep -qx 'prefix=/opt/mcp' "$root/lib/pkgconfig/mcp_stdio.pc" || fail "staged .pc prefix"
    "$MINGW-objdump" -h "$PREFIX/bin/mcp_stdio.dll" | has debug_info || fail "the unstripped DLL has no debug info to strip"
    if "$MINGW-objdump" -h "$root/bin/mcp_stdio.dll" | has debug_info; then fail "DLL not stripped"; fi
    if "$MINGW-objdump" -h "$root/lib/libmcp_stdio.a" 2>/dev/null | has debug_info; then fail ".a not stripped"; fi
    "$MINGW-objdump" -p "$root/bin/mcp_stdio.dll" | has '\] mcp_stdio_version$' || fail "the stripped DLL lost its exports"
    # The stripped static library still links.
    "$MINGW-gcc" "${CFLAGS_STRICT[@]}" -I"$root/include" "$HERE/consumer.c" "$root/lib/libmcp_stdio.a" \
        $SYSTEM_LIBS -o "$WORK/stage/consumer.exe"
    ls -l "$PREFIX/bin/mcp_stdio.dll" "$root/bin/mcp_stdio.dll"
}
t_cargo_target() {
    # Without MCP_STDIO_CARGO_TARGET, the target follows the C compiler
    # (mingw-w64: x86_64-pc-windows-gnu); a target for another system is refused.
    cmake -S "$ROOT" -B "$WORK/target-default" -DCMAKE_TOOLCHAIN_FILE="$TOOLCHAIN" \
        -DMCP_STDIO_CARGO_TARGET_DIR="$CARGO_DIR" | tee "$WORK/target-default.log"
    grep -q "mcp_stdio: cargo target $TRIPLE " "$WORK/target-default.log" || fail "no default target $TRIPLE"
    if cmake -S "$ROOT" -B "$WORK/target-linux" -DCMAKE_TOOLCHAIN_FILE="$TOOLCHAIN" \
        -DMCP_STDIO_CARGO_TARGET=x86_64-unknown-linux-gnu; then
        fail "a Linux cargo target was accepted with the Windows toolchain"
    fi
    if cmake -S "$ROOT" -B "$WORK/target-msvc" -DCMAKE_TOOLCHAIN_FILE="$TOOLCHAIN" \
        -DMCP_STDIO_CARGO_TARGET=x86_64-pc-windows-msvc; then
        fail "the MSVC cargo target was accepted with mingw-w64's gcc"
    fi
    if cmake -S "$ROOT" -B "$WORK/target-host" -DMCP_STDIO_CARGO_TARGET="$TRIPLE"; then
        fail "a Windows cargo target was accepted without the toolchain file"
    fi
}

# ---------------------------------------------------------------------------
# Wine.

t_wine_prefix() {
    # A prefix of our own if none yet, and bcryptprimitives.dll: Wine 8.0 has
    # none (it came with Wine 8.13) and Rust's std imports ProcessPrng from
    # it; the shim of scripts/windows.sh (tests/windows/bcryptprimitives.c),
    # built the same way, if the prefix lacks it.
    echo "WINEPREFIX=$WINEPREFIX"
    if [ ! -f "$WINEPREFIX/system.reg" ]; then
        echo "a new Wine prefix in $WINEPREFIX"
        mkdir -p "$WINEPREFIX"
        "$WINE" wineboot -i >/dev/null 2>&1 || true
        [ -d "$WINEPREFIX/drive_c/windows/system32" ] || fail "wineboot made no prefix in $WINEPREFIX"
    fi
    local sys32="$WINEPREFIX/drive_c/windows/system32"
    if [ ! -f "$sys32/bcryptprimitives.dll" ]; then
        echo "building bcryptprimitives.dll into $sys32"
        "$MINGW-gcc" -O2 -Wall -Wextra -shared -o "$WINEPREFIX/bcryptprimitives.dll" \
            "$ROOT/tests/windows/bcryptprimitives.c" -ladvapi32
        cp "$WINEPREFIX/bcryptprimitives.dll" "$sys32/"
    fi
    ls -l "$sys32/bcryptprimitives.dll"
}

# ---------------------------------------------------------------------------
# Consumers, run under Wine.

t_find_package_shared() {
    local bld="$WORK/fp-shared"
    cmake_windows "$HERE/find_package" "$bld" "${FIND_PREFIX[@]}" -DMCP_STDIO_SHARED=ON -DMCP_STDIO_CXX=ON
    found_in_prefix "$bld" "$PREFIX"
    imports_dll "$bld/consumer.exe"
    dll_beside "$bld/consumer.exe" "$PREFIX/bin/mcp_stdio.dll"
    run_consumer "$bld/consumer.exe"
    imports_dll "$bld/consumer_cxx.exe"
    run_consumer_cxx "$bld/consumer_cxx.exe"
}
t_shared_needs_dll() {
    # Windows has no rpath: without the DLL beside it (or on PATH), the
    # program above does not start.
    local dir="$WORK/no-dll" rc=0
    mkdir -p "$dir"
    cp "$WORK/fp-shared/consumer.exe" "$dir/"
    wine_run "$dir/consumer.exe" || rc=$?
    echo "exit status without mcp_stdio.dll: $rc"
    [ "$rc" -ne 0 ] || fail "consumer.exe started without mcp_stdio.dll"
}
t_find_package_static() {
    local bld="$WORK/fp-static"
    cmake_windows "$HERE/find_package" "$bld" "${FIND_PREFIX[@]}" -DMCP_STDIO_CXX=ON
    found_in_prefix "$bld" "$PREFIX"
    imports_no_dll "$bld/consumer.exe"
    no_dll_beside "$bld/consumer.exe"
    run_consumer "$bld/consumer.exe"
    imports_no_dll "$bld/consumer_cxx.exe"
    run_consumer_cxx "$bld/consumer_cxx.exe"
}
t_pkgconfig_shared() {
    export PKG_CONFIG_PATH="$PREFIX/lib/pkgconfig"
    local exe="$WORK/pc-shared/consumer.exe"
    mkdir -p "${exe%/*}"
    # -lmcp_stdio: the linker takes libmcp_stdio.dll.a before libmcp_stdio.a.
    # shellcheck disable=SC2046  # pkg-config output is meant to be split
    "$MINGW-gcc" "${CFLAGS_STRICT[@]}" $(pkg-config --cflags mcp_stdio) "$HERE/consumer.c" \
        $(pkg-config --libs mcp_stdio) -o "$exe"
    imports_dll "$exe"
    cp "$PREFIX/bin/mcp_stdio.dll" "${exe%/*}/"
    run_consumer "$exe"
}
t_pkgconfig_static() {
    export PKG_CONFIG_PATH="$PREFIX/lib/pkgconfig"
    local exe="$WORK/pc-static/consumer.exe"
    mkdir -p "${exe%/*}"
    # shellcheck disable=SC2046
    "$MINGW-gcc" "${CFLAGS_STRICT[@]}" $(pkg-config --cflags mcp_stdio_static) "$HERE/consumer.c" \
        $(pkg-config --libs mcp_stdio_static) -o "$exe"
    imports_no_dll "$exe"
    run_consumer "$exe"
}
t_add_subdirectory_shared() {
    local bld="$WORK/as-shared"
    cmake_windows "$HERE/add_subdirectory" "$bld" -DMCP_STDIO_SOURCE_DIR="$ROOT" \
        -DMCP_STDIO_CARGO_TARGET="$TRIPLE" -DMCP_STDIO_CARGO_TARGET_DIR="$CARGO_DIR" -DMCP_STDIO_SHARED=ON
    imports_dll "$bld/consumer.exe"
    dll_beside "$bld/consumer.exe" "$bld/mcp_stdio/bin/mcp_stdio.dll"   # the build tree's copy
    run_consumer "$bld/consumer.exe"
}
t_add_subdirectory_static() {
    local bld="$WORK/as-static"
    cmake_windows "$HERE/add_subdirectory" "$bld" -DMCP_STDIO_SOURCE_DIR="$ROOT" \
        -DMCP_STDIO_CARGO_TARGET="$TRIPLE" -DMCP_STDIO_CARGO_TARGET_DIR="$CARGO_DIR"
    imports_no_dll "$bld/consumer.exe"
    no_dll_beside "$bld/consumer.exe"
    run_consumer "$bld/consumer.exe"
}

echo "mcp-stdio $VERSION packaging tests for Windows (mingw-w64 cross build, Wine; work dir under target/packaging-tests)"
require "tools: cargo + $TRIPLE, cmake >= 3.21, mingw-w64, wine64, pkg-config" t_tools
require "cmake configure (toolchain mingw-w64-x86_64.cmake, MCP_STDIO_CARGO_TARGET=$TRIPLE)" t_configure
require "cmake --build (cargo build --release --lib --target $TRIPLE): mcp_stdio.dll, libmcp_stdio.dll.a, libmcp_stdio.a" t_build
check   "cmake --build again is a no-op (cargo not rerun)" t_rebuild_noop
require "cmake --install --prefix <tmp>" t_install
check   "installed files: exact list (bin/mcp_stdio.dll, lib/libmcp_stdio.dll.a, lib/libmcp_stdio.a, ...), no symlinks, PE/COFF contents, headers" t_installed_files
check   "CMake package: shared = DLL + IMPLIB (no SONAME), static + Windows system libs, default static" t_cmake_targets
check   "pkg-config files: prefix, Version, Cflags, Libs, Libs.private ($SYSTEM_LIBS)" t_pc_files
check   "install --component Runtime: the DLL only" t_components
check   "DESTDIR staged install, --strip (mingw-w64 strip)" t_destdir_strip
check   "cargo target: $TRIPLE by default with mingw-w64; Linux/MSVC targets refused; Windows target refused without the toolchain" t_cargo_target
require "Wine prefix ready, with bcryptprimitives.dll ($WINEPREFIX)" t_wine_prefix
check   "find_package(mcp_stdio) MCP_STDIO_SHARED=ON: imports mcp_stdio.dll, DLL copied beside, C and C++ consumers run under Wine" t_find_package_shared
check   "shared consumer without mcp_stdio.dll beside it: does not start" t_shared_needs_dll
check   "find_package(mcp_stdio) static (default): no mcp_stdio.dll import, C and C++ consumers run under Wine" t_find_package_static
check   "pkg-config mcp_stdio with mingw-w64 gcc: -lmcp_stdio takes the import library, runs under Wine" t_pkgconfig_shared
check   "pkg-config mcp_stdio_static with mingw-w64 gcc: no mcp_stdio.dll import, runs under Wine" t_pkgconfig_static
check   "add_subdirectory() MCP_STDIO_SHARED=ON: the build tree's DLL copied beside, runs under Wine" t_add_subdirectory_shared
check   "add_subdirectory() static (default): no mcp_stdio.dll import, runs under Wine" t_add_subdirectory_static
summary
