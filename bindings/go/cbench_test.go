//go:build mcpstdio_cbench

package mcpstdio_test

import (
	"sort"
	"testing"
	"time"

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

// The Decoder against the C reader, interleaved: each iteration runs one
// pass of each on the same corpus, in alternating order, and the ratio of
// their times is taken per pair. On a machine shared with other work, the
// load changes between two benchmarks seconds apart more than between two
// passes a few milliseconds apart: the median of the per-pair ratios moves
// less than the ratio of BenchmarkDecoder* to BenchmarkCReader*.
// Reported: %ofC, the Decoder's speed as a percentage of the C reader's
// (median of the pairs, wall clock), and cpu-%ofC (the same with the CPU
// time of the process, the garbage collector's included).
func BenchmarkVersusCSmall(b *testing.B)       { benchVersus(b, "small", decodeCount) }
func BenchmarkVersusCMixed(b *testing.B)       { benchVersus(b, "mixed", decodeCount) }
func BenchmarkVersusCLarge(b *testing.B)       { benchVersus(b, "large", decodeCount) }
func BenchmarkVersusCEscape(b *testing.B)      { benchVersus(b, "escape", decodeCount) }
func BenchmarkVersusCReuseSmall(b *testing.B)  { benchVersus(b, "small", decodeReuseCount) }
func BenchmarkVersusCReuseMixed(b *testing.B)  { benchVersus(b, "mixed", decodeReuseCount) }
func BenchmarkVersusCReuseLarge(b *testing.B)  { benchVersus(b, "large", decodeReuseCount) }
func BenchmarkVersusCReuseEscape(b *testing.B) { benchVersus(b, "escape", decodeReuseCount) }

func benchVersus(b *testing.B, kind string, count func(testing.TB, []byte) int) {
	data, want := benchStart(b, kind)
	var wall, cpu []float64
	pass := func(f func(testing.TB, []byte) int) (time.Duration, time.Duration) {
		w0, c0 := time.Now(), cpuTime()
		if got := f(b, data); got != want {
			b.Fatalf("%d messages, want %d", got, want)
		}
		return time.Since(w0), cpuTime() - c0
	}
	for i := 0; i < b.N; i++ {
		var cw, cc, dw, dc time.Duration
		if i%2 == 0 {
			cw, cc = pass(cReaderCount)
			dw, dc = pass(count)
		} else {
			dw, dc = pass(count)
			cw, cc = pass(cReaderCount)
		}
		wall = append(wall, float64(cw)/float64(dw))
		if cc > 0 && dc > 0 {
			cpu = append(cpu, float64(cc)/float64(dc))
		}
	}
	b.ReportMetric(100*median(wall), "%ofC")
	if len(cpu) > 0 {
		b.ReportMetric(100*median(cpu), "cpu-%ofC")
	}
}

func median(v []float64) float64 {
	sort.Float64s(v)
	if n := len(v); n%2 == 1 {
		return v[n/2]
	} else {
		return (v[n/2-1] + v[n/2]) / 2
	}
}
