#!/usr/bin/env bash
# Checks the Swift module map without a Swift toolchain: clang imports the
# CMcpStdio module from Objective-C (`@import`, -fmodules) exactly as Swift's
# ClangImporter would, compiles and runs a program using the API through it,
# and checks that the module map and Package.swift name the library and the
# pkg-config file the install step provides.
set -euo pipefail
here="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd -- "$here/../.." && pwd)"
out="$root/target/swift-check"
rm -rf "$out" && mkdir -p "$out"

command -v clang >/dev/null || { echo "clang is required (Debian package clang)"; exit 1; }
[ -f "$root/target/release/libmcp_stdio.a" ] || (cd "$root" && cargo build --release --quiet)

# The names must agree: module map link "mcp_stdio", pkgConfig "mcp_stdio",
# and the library and .pc file the build and install produce.
grep -q 'link "mcp_stdio"' "$here/Sources/CMcpStdio/module.modulemap"
grep -q 'pkgConfig: "mcp_stdio"' "$here/Package.swift"
grep -q 'module CMcpStdio' "$here/Sources/CMcpStdio/module.modulemap"

clang -fmodules -fmodules-cache-path="$out/module-cache" \
    -fmodule-map-file="$here/Sources/CMcpStdio/module.modulemap" \
    -I "$root/include" -Wall -Wextra -Werror \
    "$here/modulemap-check/main.m" \
    "$root/target/release/libmcp_stdio.a" -lgcc_s -lutil -lrt -lpthread -lm -ldl -lc \
    -o "$out/modulemap-check"
"$out/modulemap-check"
