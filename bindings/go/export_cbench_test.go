//go:build mcpstdio_cbench

package mcpstdio

// CReaderPass is cReaderPass for the external tests' benchmarks.
var CReaderPass = cReaderPass
