//go:build mcpstdio_pkgconfig_static

package mcpstdio

// With the build tag mcpstdio_pkgconfig_static the package links the static
// library of an installed mcp-stdio, libmcp_stdio.a, through
// mcp_stdio_static.pc (installed by CMake next to mcp_stdio.pc): its Libs name
// the archive by path, then the system libraries it needs, so the binary
// needs no libmcp_stdio.so at run time and no cargo build of this checkout.
//
// Not `#cgo pkg-config: --static mcp_stdio`: cgo passes --static on, but
// pkg-config still answers -lmcp_stdio, which the linker resolves to
// libmcp_stdio.so when both libraries are installed.
//
// This tag wins over mcpstdio_pkgconfig when both are given.

// #cgo pkg-config: mcp_stdio_static
import "C"
