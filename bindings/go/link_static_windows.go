//go:build windows && !mcpstdio_pkgconfig && !mcpstdio_pkgconfig_static

package mcpstdio

// On Windows (built with mingw-w64's gcc as cgo's compiler) the package
// links the static library of the repository for x86_64-pc-windows-gnu:
// build it first with `cargo build --release --target
// x86_64-pc-windows-gnu` at the repository root. The native libraries are
// the ones `cargo rustc --release --lib --crate-type staticlib --target
// x86_64-pc-windows-gnu -- --print native-static-libs` lists.

// #cgo CFLAGS: -I${SRCDIR}/../../include
// #cgo LDFLAGS: ${SRCDIR}/../../target/x86_64-pc-windows-gnu/release/libmcp_stdio.a -lkernel32 -lntdll -luserenv -lws2_32 -ldbghelp
import "C"
