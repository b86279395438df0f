//go:build !mcpstdio_pkgconfig

package mcpstdio

// By default the package links the static library of the repository it
// lives in: build it first with `cargo build --release` at the repository
// root. The native libraries are the ones `cargo rustc --release --lib
// --crate-type staticlib -- --print native-static-libs` lists.

// #cgo CFLAGS: -I${SRCDIR}/../../include
// #cgo LDFLAGS: ${SRCDIR}/../../target/release/libmcp_stdio.a -lgcc_s -lutil -lrt -lpthread -lm -ldl -lc
import "C"
