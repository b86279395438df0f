#!/usr/bin/env bash
# Tests the Go binding: builds the static library (cargo build --release at
# the repository root; cheap when up to date), then `go vet` and
# `go test -race` here. Works from any directory.
#
# Standard library only: GOPROXY=off and GOFLAGS=-mod=readonly prove that no
# module is downloaded. The Go build cache lives under target/ so nothing is
# written outside the repository.
#
# Needs: cargo, go (1.19 or later), gcc.
set -euo pipefail
here="$(cd "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"

step() { printf '\n== %s\n' "$*"; }

step "cargo build --release (target/release/libmcp_stdio.a)"
(cd "$root" && cargo build --release)
test -f "$root/target/release/libmcp_stdio.a"

export GOPROXY=off
export GOFLAGS=-mod=readonly
export GOCACHE="$root/target/go-cache"
export GOTMPDIR="$root/target/go-tmp"
export CGO_ENABLED=1
mkdir -p "$GOTMPDIR"
cd "$here"

step "go version"
go version

step "gofmt -l (no unformatted files)"
unformatted="$(gofmt -l .)"
if [ -n "$unformatted" ]; then
	printf 'not gofmt-formatted:\n%s\n' "$unformatted" >&2
	exit 1
fi

step "go vet ./..."
go vet ./...
# The C reader's own loop, beside the Decoder's benchmarks (cbench.go).
go vet -tags mcpstdio_cbench ./...

# Each set of build tags links the library one way: exactly one link_*.go.
step "build tags select one link file each"
link_files() {
	go list -tags "$1" -f '{{range .GoFiles}}{{.}} {{end}}{{range .CgoFiles}}{{.}} {{end}}' . |
		tr ' ' '\n' | grep '^link_' | xargs
}
for want in ":link_static.go" \
	"mcpstdio_pkgconfig:link_pkgconfig.go" \
	"mcpstdio_pkgconfig_static:link_pkgconfig_static.go" \
	"mcpstdio_pkgconfig,mcpstdio_pkgconfig_static:link_pkgconfig_static.go"; do
	tags=${want%%:*} file=${want#*:}
	got=$(link_files "$tags")
	printf 'tags "%s": %s\n' "$tags" "$got"
	[ "$got" = "$file" ] || { echo "tags \"$tags\" select \"$got\", not $file" >&2; exit 1; }
done

step "go test -race -count=1 -v ./..."
go test -race -count=1 -v ./...

step "go test -short with GODEBUG=cgocheck=2 (every cgo pointer rule checked)"
GODEBUG=cgocheck=2 go test -short -count=1 ./...

# Each benchmark checks the count of messages it read: run each once, on
# 2 MiB corpora, so they stay correct (bench_test.go).
step "benchmarks, one iteration each (-tags mcpstdio_cbench, 2 MiB corpora)"
MCPSTDIO_BENCH_MB=2 go test -tags mcpstdio_cbench -count=1 -run '^$' -bench . -benchtime 1x ./...

# The mcpstdio_pkgconfig build tag, against the shared library of this
# build through a throwaway mcp_stdio.pc under target/ (an installed library
# has its own, see CMakeLists.txt). pkg-config is required.
# tests/packaging/run.sh builds against a real installed prefix: a Go
# consumer with mcpstdio_pkgconfig_static and with mcpstdio_pkgconfig plus an
# rpath, and these tests with mcpstdio_pkgconfig_static.
command -v pkg-config >/dev/null || { echo "pkg-config is required (Debian package pkg-config)" >&2; exit 1; }
if true; then
	step "go test -tags mcpstdio_pkgconfig (shared library via pkg-config)"
	pc="$root/target/go-pkgconfig"
	rm -rf "$pc"
	mkdir -p "$pc/lib"
	ln -s "$root/target/release/libmcp_stdio.so" "$pc/lib/libmcp_stdio.so"
	ln -s "$root/target/release/libmcp_stdio.so" "$pc/lib/libmcp_stdio.so.0"
	cat >"$pc/mcp_stdio.pc" <<PC
libdir=$pc/lib
includedir=$root/include

Name: mcp_stdio
Description: mcp-stdio (build tree, for the Go binding's test)
Version: 0.0.0
Libs: -L\${libdir} -lmcp_stdio
Cflags: -I\${includedir}
PC
	PKG_CONFIG_PATH="$pc" LD_LIBRARY_PATH="$pc/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
		go vet -tags mcpstdio_pkgconfig ./...
	# The test binary must really use the shared library.
	PKG_CONFIG_PATH="$pc" go test -tags mcpstdio_pkgconfig -c -o "$pc/mcpstdio.test" .
	readelf -d "$pc/mcpstdio.test" | grep -q 'NEEDED.*libmcp_stdio\.so\.0' ||
		{ echo "the pkg-config build does not link libmcp_stdio.so.0" >&2; exit 1; }
	(cd "$here" && LD_LIBRARY_PATH="$pc/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$pc/mcpstdio.test" -test.short -test.count=1)
fi
