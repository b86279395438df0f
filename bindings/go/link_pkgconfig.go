//go:build mcpstdio_pkgconfig

package mcpstdio

// With the build tag mcpstdio_pkgconfig the package takes the header and the
// library of an installed mcp-stdio from pkg-config (mcp_stdio.pc), usually
// the shared library libmcp_stdio.so.0.

// #cgo pkg-config: mcp_stdio
import "C"
