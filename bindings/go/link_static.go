//go:build !windows && !mcpstdio_pkgconfig && !mcpstdio_pkgconfig_static

package mcpstdio

// By default the package links the static library of the repository it
// lives in: build it first with `cargo build --release` at the repository
// root. The native libraries are the ones `cargo rustc --release --lib
// --crate-type staticlib -- --print native-static-libs` lists. For an
// installed library, see the build tags mcpstdio_pkgconfig_static and
// mcpstdio_pkgconfig (link_pkgconfig_static.go, link_pkgconfig.go).

// #cgo CFLAGS: -I${SRCDIR}/../../include
// #cgo LDFLAGS: ${SRCDIR}/../../target/release/libmcp_stdio.a -lgcc_s -lutil -lrt -lpthread -lm -ldl -lc
import "C"
