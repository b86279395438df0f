#!/usr/bin/env bash
# Packaging tests of mcp-stdio: the CMake build installs the library the way
# libcurl or zstd are installed, and C programs can consume it every usual way.
#
#   bash tests/packaging/run.sh        (from any directory; KEEP=1 keeps the work dir)
#
# Builds the library once with CMake (cargo build --release inside the CMake
# build dir), installs it into a temporary prefix, checks the installed files,
# then builds and runs tests/packaging/consumer.c through
#   1. pkg-config, shared library (with LD_LIBRARY_PATH, and with an rpath:
#      the prefix is not one the loader searches, as with $HOME/.local)
#   2. pkg-config --static, and mcp_stdio_static.pc: static library
#   3. find_package(mcp_stdio), static (default) and shared, also installed
#      (INSTALL_RPATH_USE_LINK_PATH)
#   4. add_subdirectory() of the source tree, static (default) and shared
# (4 reuses the first build's cargo target dir, so cargo runs only once),
# and the Go binding against the installed prefix:
#   5. tests/packaging/go_consumer (go.mod: require + replace) with the build
#      tags mcpstdio_pkgconfig_static (no libmcp_stdio NEEDED) and
#      mcpstdio_pkgconfig with an rpath (NEEDs libmcp_stdio.so.0), and the
#      binding's own tests (go test -short) with mcpstdio_pkgconfig_static.
# Prints one line per check, then "N passed, M failed" alone on the last line;
# exits non-zero if any check failed.
#
# Needs: cargo, cmake >= 3.16, a C compiler (cc), pkg-config, readelf, go >= 1.19.
set -euo pipefail

ROOT=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/../.." && pwd)
HERE="$ROOT/tests/packaging"
mkdir -p "$ROOT/target/packaging-tests"
WORK=$(mktemp -d "$ROOT/target/packaging-tests/run.XXXXXX")
cleanup() {
    [ "${KEEP:-0}" = 1 ] && return
    rm -rf -- "$WORK"
    rmdir -- "$ROOT/target/packaging-tests" 2>/dev/null || true
}
trap cleanup EXIT

CC=${CC:-cc}
JOBS=$(nproc 2>/dev/null || echo 2)
PREFIX="$WORK/prefix"
BUILD="$WORK/build"
CARGO_DIR="$BUILD/cargo"      # the CMake build's CARGO_TARGET_DIR, reused by check 4
CFLAGS_STRICT=(-std=c99 -Wall -Wextra -Wpedantic -Werror)
mkdir -p "$WORK/logs"

# The check harness and cargo_field.
# shellcheck source=tests/packaging/harness.sh
source "$ROOT/tests/packaging/harness.sh"

VERSION=$(cargo_field version)
DESCRIPTION=$(cargo_field description)
MAJOR=${VERSION%%.*}
MINOR=${VERSION#*.}; MINOR=${MINOR%%.*}
FULL_VERSION=${VERSION%%[-+]*}

# needed <binary>: its DT_NEEDED entries, one a line.
needed() { readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'; }
needs_shared() {
    needed "$1"
    needed "$1" | grep -qx 'libmcp_stdio.so.0' || fail "$1 does not NEED libmcp_stdio.so.0"
}
needs_static() {
    needed "$1"
    if needed "$1" | grep -q 'libmcp_stdio'; then fail "$1 NEEDs libmcp_stdio: not statically linked"; fi
}
# runpath_is <binary> <dir>: its RUNPATH (or RPATH) is exactly <dir>.
runpath_is() {
    local got
    got=$(readelf -d "$1" | sed -n 's/.*(\(RUNPATH\|RPATH\)).*\[\(.*\)\]/\2/p')
    echo "RUNPATH of $1: $got"
    [ "$got" = "$2" ] || fail "$1 has RUNPATH '$got', not $2"
}
# fails_to_load <binary>: the loader cannot find libmcp_stdio.so.0 for it
# (what a newcomer sees with a prefix outside the loader's directories).
fails_to_load() {
    local out rc=0
    out=$("$1" 2>&1) || rc=$?
    printf '%s\n' "$out"
    [ "$rc" -ne 0 ] || fail "$1 ran without libmcp_stdio.so.0 on the loader's path"
    grep -q 'libmcp_stdio\.so\.0: cannot open shared object file' <<<"$out" ||
        fail "$1 failed for another reason than a missing libmcp_stdio.so.0"
}
# resolves_to <binary> <dir>: the loader takes libmcp_stdio.so.0 from <dir>.
resolves_to() {
    local got
    got=$(ldd "$1" | sed -n 's/^[[:space:]]*libmcp_stdio\.so\.0 => \([^ ]*\) .*/\1/p')
    echo "libmcp_stdio.so.0 => $got"
    [ "$got" = "$2/libmcp_stdio.so.0" ] || fail "libmcp_stdio.so.0 resolves to '$got', not $2/libmcp_stdio.so.0"
}
run_consumer() {
    local out
    out=$("$@")
    printf '%s\n' "$out"
    grep -q '^consumer: mcp_stdio .* OK$' <<<"$out" || fail "unexpected output from $1"
}
# CMake consumer project: configure <src> <build> [-D...]; build it.
cmake_consumer() {
    local src=$1 bld=$2; shift 2
    cmake -S "$src" -B "$bld" -DCMAKE_BUILD_TYPE=Release "$@"
    cmake --build "$bld" --parallel "$JOBS"
}

# ---------------------------------------------------------------------------
# Build and install.

t_configure() {
    cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DMCP_STDIO_BUILD_TESTS=OFF
    grep -qx "CMAKE_PROJECT_VERSION:STATIC=$FULL_VERSION" "$BUILD/CMakeCache.txt" ||
        fail "project version is not Cargo.toml's $FULL_VERSION"
}
t_build() {
    cmake --build "$BUILD" --parallel "$JOBS"
    [ -f "$CARGO_DIR/release/libmcp_stdio.so" ] || fail "cargo did not build into $CARGO_DIR/release"
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
        include/mcp_stdio.h
        lib/cmake/mcp_stdio/mcp_stdioConfig.cmake
        lib/cmake/mcp_stdio/mcp_stdioConfigVersion.cmake
        lib/libmcp_stdio.a
        lib/libmcp_stdio.so
        lib/libmcp_stdio.so.0
        "lib/libmcp_stdio.so.$FULL_VERSION"
        lib/pkgconfig/mcp_stdio.pc
        lib/pkgconfig/mcp_stdio_static.pc
    )
    [ -f "$ROOT/include/mcp_stdio.hpp" ] && expected+=(include/mcp_stdio.hpp)
    diff -u <(printf '%s\n' "${expected[@]}" | LC_ALL=C sort) \
            <(cd "$PREFIX" && find . ! -type d | sed 's|^\./||' | LC_ALL=C sort)
    local lib="$PREFIX/lib"
    if [ ! -f "$lib/libmcp_stdio.so.$FULL_VERSION" ] || [ -L "$lib/libmcp_stdio.so.$FULL_VERSION" ]; then
        fail "libmcp_stdio.so.$FULL_VERSION is not a regular file"
    fi
    [ -x "$lib/libmcp_stdio.so.$FULL_VERSION" ] || fail "libmcp_stdio.so.$FULL_VERSION is not executable"
    [ "$(readlink "$lib/libmcp_stdio.so.0")" = "libmcp_stdio.so.$FULL_VERSION" ] ||
        fail "libmcp_stdio.so.0 -> $(readlink "$lib/libmcp_stdio.so.0")"
    [ "$(readlink "$lib/libmcp_stdio.so")" = "libmcp_stdio.so.0" ] ||
        fail "libmcp_stdio.so -> $(readlink "$lib/libmcp_stdio.so")"
    local soname
    soname=$(readelf -d "$lib/libmcp_stdio.so.$FULL_VERSION" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
    [ "$soname" = libmcp_stdio.so.0 ] || fail "SONAME is '$soname', not libmcp_stdio.so.0"
    cmp "$ROOT/include/mcp_stdio.h" "$PREFIX/include/mcp_stdio.h"
    if [ -f "$ROOT/include/mcp_stdio.hpp" ]; then cmp "$ROOT/include/mcp_stdio.hpp" "$PREFIX/include/mcp_stdio.hpp"; fi
}
# The fields both .pc files share: NAME, and the end of its Description after Cargo.toml's.
check_pc_common() {
    local name=$1 description=$2 pc="$PREFIX/lib/pkgconfig/$1.pc"
    cat "$pc"
    export PKG_CONFIG_PATH="$PREFIX/lib/pkgconfig"
    pkg-config --validate "$name"
    grep -qx "prefix=$PREFIX" "$pc" || fail "prefix is not the --prefix given to cmake --install"
    grep -qx "Name: $name" "$pc" || fail "Name"
    grep -qxF "Description: $DESCRIPTION$description" "$pc" || fail "Description is not Cargo.toml's"
    [ "$(pkg-config --modversion "$name")" = "$VERSION" ] || fail "Version is not Cargo.toml's $VERSION"
    [ "$(pkg-config --cflags "$name" | xargs)" = "-I$PREFIX/include" ] || fail "Cflags"
}
t_pc_file() {
    check_pc_common mcp_stdio ""
    [ "$(pkg-config --libs mcp_stdio | xargs)" = "-L$PREFIX/lib -lmcp_stdio" ] || fail "Libs"
    [ "$(pkg-config --static --libs mcp_stdio | xargs)" = \
      "-L$PREFIX/lib -lmcp_stdio -lgcc_s -lutil -lrt -lpthread -lm -ldl -lc" ] || fail "Libs.private"
}
t_pc_static_file() {
    # The static library for `pkg-config --libs` without --static (cgo): Libs
    # names the archive itself, so no linker can take the .so instead.
    check_pc_common mcp_stdio_static " (static library)"
    local libs="$PREFIX/lib/libmcp_stdio.a -lgcc_s -lutil -lrt -lpthread -lm -ldl -lc"
    [ "$(pkg-config --libs mcp_stdio_static | xargs)" = "$libs" ] || fail "Libs"
    [ "$(pkg-config --static --libs mcp_stdio_static | xargs)" = "$libs" ] || fail "Libs with --static"
}
t_components() {
    # Packagers split runtime and development files: Runtime = the versioned
    # library and its SONAME link.
    local p="$WORK/runtime-only"
    cmake --install "$BUILD" --prefix "$p" --component Runtime
    diff -u <(printf '%s\n' lib/libmcp_stdio.so.0 "lib/libmcp_stdio.so.$FULL_VERSION") \
            <(cd "$p" && find . ! -type d | sed 's|^\./||' | LC_ALL=C sort)
}
t_destdir_strip() {
    # Staged install (what distribution packages do): files under DESTDIR,
    # paths inside them without it; --strip strips the libraries.
    local stage="$WORK/stage" lib
    DESTDIR="$stage" cmake --install "$BUILD" --prefix /opt/mcp --strip
    lib="$stage/opt/mcp/lib"
    [ -f "$lib/libmcp_stdio.so.$FULL_VERSION" ] || fail "library not staged"
    grep -qx 'prefix=/opt/mcp' "$lib/pkgconfig/mcp_stdio.pc" || fail "staged .pc prefix"
    grep -qx 'prefix=/opt/mcp' "$lib/pkgconfig/mcp_stdio_static.pc" || fail "staged static .pc prefix"
    if readelf -S "$lib/libmcp_stdio.so.$FULL_VERSION" | grep -q debug_info; then fail ".so not stripped"; fi
    if readelf -S "$lib/libmcp_stdio.a" 2>/dev/null | grep -q debug_info; then fail ".a not stripped"; fi
    [ "$(readelf -d "$lib/libmcp_stdio.so.$FULL_VERSION" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')" = libmcp_stdio.so.0 ] ||
        fail "stripped .so lost its SONAME"
}

# ---------------------------------------------------------------------------
# Consumers.

t_pkgconfig_shared() {
    export PKG_CONFIG_PATH="$PREFIX/lib/pkgconfig"
    local exe="$WORK/pc-shared/consumer"
    mkdir -p "${exe%/*}"
    # shellcheck disable=SC2046  # pkg-config output is meant to be split
    "$CC" "${CFLAGS_STRICT[@]}" $(pkg-config --cflags mcp_stdio) "$HERE/consumer.c" \
        $(pkg-config --libs mcp_stdio) -o "$exe"
    needs_shared "$exe"
    LD_LIBRARY_PATH="$PREFIX/lib" resolves_to "$exe" "$PREFIX/lib"
    LD_LIBRARY_PATH="$PREFIX/lib" run_consumer "$exe"
}
t_pkgconfig_shared_rpath() {
    # The prefix is not in the loader's path (like $HOME/.local): without
    # LD_LIBRARY_PATH the program above does not start; with the rpath
    # docs/install.md gives, it does.
    unset LD_LIBRARY_PATH
    export PKG_CONFIG_PATH="$PREFIX/lib/pkgconfig"
    fails_to_load "$WORK/pc-shared/consumer"
    local exe="$WORK/pc-shared-rpath/consumer" libdir
    mkdir -p "${exe%/*}"
    libdir=$(pkg-config --variable=libdir mcp_stdio)
    [ "$libdir" = "$PREFIX/lib" ] || fail "libdir is '$libdir', not $PREFIX/lib"
    # shellcheck disable=SC2046
    "$CC" "${CFLAGS_STRICT[@]}" $(pkg-config --cflags mcp_stdio) "$HERE/consumer.c" \
        $(pkg-config --libs mcp_stdio) -Wl,-rpath,"$libdir" -o "$exe"
    needs_shared "$exe"
    runpath_is "$exe" "$PREFIX/lib"
    resolves_to "$exe" "$PREFIX/lib"
    run_consumer "$exe"
}
t_pkgconfig_static() {
    export PKG_CONFIG_PATH="$PREFIX/lib/pkgconfig"
    local exe="$WORK/pc-static/consumer"
    mkdir -p "${exe%/*}"
    # With libmcp_stdio.so next to libmcp_stdio.a, -lmcp_stdio means the .so:
    # ask the linker for the archive (as for any library installed both ways).
    # The command docs/install.md gives:
    # shellcheck disable=SC2046
    "$CC" "${CFLAGS_STRICT[@]}" $(pkg-config --cflags mcp_stdio) "$HERE/consumer.c" \
        $(pkg-config --static --libs mcp_stdio | sed 's/-lmcp_stdio/-Wl,-Bstatic -lmcp_stdio -Wl,-Bdynamic/') \
        -o "$exe"
    needs_static "$exe"
    run_consumer "$exe"
}
t_pkgconfig_static_pc() {
    unset LD_LIBRARY_PATH
    export PKG_CONFIG_PATH="$PREFIX/lib/pkgconfig"
    local exe="$WORK/pc-static-pc/consumer"
    mkdir -p "${exe%/*}"
    # shellcheck disable=SC2046
    "$CC" "${CFLAGS_STRICT[@]}" $(pkg-config --cflags mcp_stdio_static) "$HERE/consumer.c" \
        $(pkg-config --libs mcp_stdio_static) -o "$exe"
    needs_static "$exe"
    run_consumer "$exe"
}
found_in_prefix() {
    grep -x "mcp_stdio_DIR:PATH=.*" "$1/CMakeCache.txt"
    grep -qx "mcp_stdio_DIR:PATH=$2/lib/cmake/mcp_stdio" "$1/CMakeCache.txt" ||
        fail "find_package did not find the package in $2"
}
t_find_package_static() {
    local bld="$WORK/fp-static" cxx=OFF
    [ -f "$PREFIX/include/mcp_stdio.hpp" ] && cxx=ON
    cmake_consumer "$HERE/find_package" "$bld" -DCMAKE_PREFIX_PATH="$PREFIX" -DMCP_STDIO_CXX=$cxx
    found_in_prefix "$bld" "$PREFIX"
    needs_static "$bld/consumer"
    run_consumer "$bld/consumer"
    if [ "$cxx" = ON ]; then
        needs_static "$bld/consumer_cxx"
        "$bld/consumer_cxx"
    fi
}
t_find_package_shared() {
    local bld="$WORK/fp-shared"
    cmake_consumer "$HERE/find_package" "$bld" -DCMAKE_PREFIX_PATH="$PREFIX" -DMCP_STDIO_SHARED=ON
    found_in_prefix "$bld" "$PREFIX"
    needs_shared "$bld/consumer"
    resolves_to "$bld/consumer" "$PREFIX/lib"   # no LD_LIBRARY_PATH: CMake's build RUNPATH
    run_consumer "$bld/consumer"
}
t_find_package_shared_installed() {
    # `cmake --install` of the consumer above: CMake drops the build tree's
    # RUNPATH, so the installed program does not find libmcp_stdio.so.0 in a
    # non-system prefix; INSTALL_RPATH_USE_LINK_PATH keeps it, as
    # docs/install.md says (find_package/CMakeLists.txt, MCP_STDIO_KEEP_RPATH).
    unset LD_LIBRARY_PATH
    local bld="$WORK/fp-shared" plain="$WORK/fp-shared-installed" kept="$WORK/fp-shared-installed-rpath"
    cmake --install "$bld" --prefix "$plain"
    runpath_is "$plain/bin/consumer" ""
    fails_to_load "$plain/bin/consumer"
    cmake -S "$HERE/find_package" -B "$bld" -DMCP_STDIO_KEEP_RPATH=ON
    cmake --build "$bld" --parallel "$JOBS"
    cmake --install "$bld" --prefix "$kept"
    runpath_is "$kept/bin/consumer" "$PREFIX/lib"
    resolves_to "$kept/bin/consumer" "$PREFIX/lib"
    run_consumer "$kept/bin/consumer"
}
t_find_package_version() {
    local ok="$MAJOR.$MINOR" newer_minor="$MAJOR.$((MINOR + 1))" newer_major="$((MAJOR + 1)).0"
    cmake -S "$HERE/find_package" -B "$WORK/fp-version" -DCMAKE_PREFIX_PATH="$PREFIX" \
        -DMCP_STDIO_WANT_VERSION="$ok"
    local want
    for want in "$newer_minor" "$newer_major"; do
        rm -rf "$WORK/fp-version"
        if cmake -S "$HERE/find_package" -B "$WORK/fp-version" -DCMAKE_PREFIX_PATH="$PREFIX" \
            -DMCP_STDIO_WANT_VERSION="$want"; then
            fail "find_package(mcp_stdio $want) accepted version $VERSION"
        fi
    done
    if [ "$MAJOR" = 0 ] && [ "$MINOR" -gt 0 ]; then
        rm -rf "$WORK/fp-version"
        if cmake -S "$HERE/find_package" -B "$WORK/fp-version" -DCMAKE_PREFIX_PATH="$PREFIX" \
            -DMCP_STDIO_WANT_VERSION="0.$((MINOR - 1))"; then
            fail "find_package(mcp_stdio 0.$((MINOR - 1))) accepted version $VERSION (0.x: same minor only)"
        fi
    fi
}
t_relocatable() {
    # Move the whole prefix: the CMake package still works from its new place.
    local moved="$WORK/moved/prefix" bld="$WORK/fp-moved"
    mkdir -p "${moved%/*}"
    mv "$PREFIX" "$moved"
    local rc
    set +e
    ( set -e
      cmake_consumer "$HERE/find_package" "$bld" -DCMAKE_PREFIX_PATH="$moved"
      found_in_prefix "$bld" "$moved"
      if grep -rq -- "$PREFIX" "$moved/lib/cmake"; then fail "the CMake package names its old prefix"; fi
      run_consumer "$bld/consumer" )
    rc=$?
    set -e
    mv "$moved" "$PREFIX"
    return "$rc"
}
t_add_subdirectory_static() {
    local bld="$WORK/as-static"
    cmake_consumer "$HERE/add_subdirectory" "$bld" -DMCP_STDIO_SOURCE_DIR="$ROOT" \
        -DMCP_STDIO_CARGO_TARGET_DIR="$CARGO_DIR"
    needs_static "$bld/consumer"
    run_consumer "$bld/consumer"
    if grep -q '^MCP_STDIO_BUILD_TESTS:BOOL=ON$' "$bld/CMakeCache.txt"; then
        fail "a vendored mcp_stdio builds its tests by default"
    fi
}
t_add_subdirectory_shared() {
    local bld="$WORK/as-shared"
    cmake_consumer "$HERE/add_subdirectory" "$bld" -DMCP_STDIO_SOURCE_DIR="$ROOT" \
        -DMCP_STDIO_CARGO_TARGET_DIR="$CARGO_DIR" -DMCP_STDIO_SHARED=ON
    needs_shared "$bld/consumer"
    resolves_to "$bld/consumer" "$bld/mcp_stdio/lib"   # the build tree's copy, by RUNPATH
    run_consumer "$bld/consumer"
}

# ---------------------------------------------------------------------------
# Go: the binding (bindings/go) against the installed prefix.

BINDING=github.com/mcp-stdio/mcp-stdio/bindings/go
go_env() {
    unset LD_LIBRARY_PATH
    export PKG_CONFIG_PATH="$PREFIX/lib/pkgconfig"
    # Standard library only: nothing is downloaded.
    export GOPROXY=off GOFLAGS=-mod=readonly CGO_ENABLED=1
    # A build cache of this run's own: Go's cache does not key on pkg-config's
    # answers (golang/go#24544), so a binding built against an earlier run's
    # (deleted) prefix would be linked again.
    export GOCACHE="$WORK/go-cache" GOTMPDIR="$WORK/go-tmp"
    mkdir -p "$GOTMPDIR"
}
# go_link_files <tags>: the binding's link_*.go files and pkg-config names for <tags>.
go_link_files() {
    (cd "$HERE/go_consumer" &&
        go list -tags "$1" -f '{{range .GoFiles}}{{.}} {{end}}{{range .CgoFiles}}{{.}} {{end}}pkg-config:{{join .CgoPkgConfig ","}}' "$BINDING") |
        tr ' ' '\n' | grep -E '^(link_|pkg-config:)' | xargs
}
t_go_static() {
    go_env
    local exe="$WORK/go-static/consumer" files
    files=$(go_link_files mcpstdio_pkgconfig_static)
    echo "$files"
    [ "$files" = "link_pkgconfig_static.go pkg-config:mcp_stdio_static" ] ||
        fail "tag mcpstdio_pkgconfig_static selects: $files"
    (cd "$HERE/go_consumer" && go build -tags mcpstdio_pkgconfig_static -o "$exe" .)
    needs_static "$exe"
    run_consumer "$exe"
}
t_go_shared_rpath() {
    go_env
    local exe="$WORK/go-shared/consumer" files libdir
    files=$(go_link_files mcpstdio_pkgconfig)
    echo "$files"
    [ "$files" = "link_pkgconfig.go pkg-config:mcp_stdio" ] || fail "tag mcpstdio_pkgconfig selects: $files"
    libdir=$(pkg-config --variable=libdir mcp_stdio)
    # The command docs/install.md gives:
    (cd "$HERE/go_consumer" &&
        CGO_LDFLAGS="-Wl,-rpath,$libdir" go build -tags mcpstdio_pkgconfig -o "$exe" .)
    needs_shared "$exe"
    runpath_is "$exe" "$PREFIX/lib"
    resolves_to "$exe" "$PREFIX/lib"
    run_consumer "$exe"
}
t_go_binding_tests_static() {
    go_env
    local bin="$WORK/go-test/mcpstdio.test"
    (cd "$ROOT/bindings/go" && go test -tags mcpstdio_pkgconfig_static -c -o "$bin" .)
    needs_static "$bin"
    (cd "$ROOT/bindings/go" && "$bin" -test.short -test.count=1)
}

echo "mcp-stdio $VERSION packaging tests (work dir under target/packaging-tests)"
require "cmake configure (Release, version $FULL_VERSION from Cargo.toml)" t_configure
require "cmake --build (cargo build --release --lib)" t_build
check   "cmake --build again is a no-op (cargo not rerun)" t_rebuild_noop
require "cmake --install --prefix <tmp>" t_install
check   "installed files: exact list, .so -> .so.0 -> .so.$FULL_VERSION, SONAME, headers" t_installed_files
check   "mcp_stdio.pc: prefix, Name, Description, Version, Libs, Libs.private, Cflags" t_pc_file
check   "mcp_stdio_static.pc: prefix, Name, Description, Version, Libs (the archive), Cflags" t_pc_static_file
check   "install --component Runtime: versioned library and SONAME link only" t_components
check   "DESTDIR staged install, --strip" t_destdir_strip
check   "pkg-config shared: builds, NEEDs libmcp_stdio.so.0, runs" t_pkgconfig_shared
check   "pkg-config shared, non-system prefix: fails to load without rpath; -Wl,-rpath runs" t_pkgconfig_shared_rpath
check   "pkg-config --static: builds, no libmcp_stdio NEEDED, runs" t_pkgconfig_static
check   "pkg-config mcp_stdio_static: builds, no libmcp_stdio NEEDED, runs" t_pkgconfig_static_pc
check   "find_package(mcp_stdio) static (default): builds, no libmcp_stdio NEEDED, runs" t_find_package_static
check   "find_package(mcp_stdio) MCP_STDIO_SHARED=ON: builds, NEEDs libmcp_stdio.so.0, runs" t_find_package_shared
check   "find_package shared, installed consumer: no RUNPATH by default; INSTALL_RPATH_USE_LINK_PATH runs" t_find_package_shared_installed
check   "find_package version: $MAJOR.$MINOR accepted, newer minor/major rejected" t_find_package_version
check   "relocatable: find_package from a moved prefix" t_relocatable
check   "add_subdirectory() static (default): builds, no libmcp_stdio NEEDED, runs" t_add_subdirectory_static
check   "add_subdirectory() MCP_STDIO_SHARED=ON: builds, NEEDs libmcp_stdio.so.0, runs" t_add_subdirectory_shared
check   "Go consumer, tag mcpstdio_pkgconfig_static: builds, no libmcp_stdio NEEDED, runs" t_go_static
check   "Go consumer, tag mcpstdio_pkgconfig + rpath: builds, NEEDs libmcp_stdio.so.0, runs" t_go_shared_rpath
check   "Go binding tests (go test -short), tag mcpstdio_pkgconfig_static, installed prefix" t_go_binding_tests_static
summary
