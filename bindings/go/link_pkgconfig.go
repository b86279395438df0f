//go:build mcpstdio_pkgconfig && !mcpstdio_pkgconfig_static

package mcpstdio

// With the build tag mcpstdio_pkgconfig the package takes the header and the
// library of an installed mcp-stdio from pkg-config (mcp_stdio.pc), usually
// the shared library libmcp_stdio.so.0. Outside the loader's directories
// (e.g. a prefix under $HOME), give the binary a RUNPATH at build time:
//
//	CGO_LDFLAGS="-Wl,-rpath,$(pkg-config --variable=libdir mcp_stdio)" go build -tags mcpstdio_pkgconfig
//
// or run it with LD_LIBRARY_PATH. mcpstdio_pkgconfig_static links the static
// library instead (link_pkgconfig_static.go).

// #cgo pkg-config: mcp_stdio
import "C"
