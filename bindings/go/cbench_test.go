//go:build mcpstdio_cbench

package mcpstdio_test

import (
	"testing"

	mcpstdio "github.com/mcp-stdio/mcp-stdio/bindings/go"
)

// cReaderCount is the C reader's own loop (64 KiB chunks, JSON-RPC
// classification) in one cgo call: the ceiling of the Decoder.
func cReaderCount(tb testing.TB, data []byte) int {
	n, _, err := mcpstdio.CReaderPass(data, 64<<10, true)
	if err != nil {
		tb.Fatal(err)
	}
	return int(n)
}

func BenchmarkCReaderSmall(b *testing.B)  { benchCorpus(b, "small", cReaderCount) }
func BenchmarkCReaderMixed(b *testing.B)  { benchCorpus(b, "mixed", cReaderCount) }
func BenchmarkCReaderLarge(b *testing.B)  { benchCorpus(b, "large", cReaderCount) }
func BenchmarkCReaderEscape(b *testing.B) { benchCorpus(b, "escape", cReaderCount) }
