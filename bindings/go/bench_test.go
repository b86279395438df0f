package mcpstdio_test

// Throughput of the Decoder against Go's own framing (bufio.Scanner +
// json.Valid), on corpora shaped like bench/corpus.py's:
//
//	go test -run '^$' -bench 'Decoder|BufioJSONValid' -benchtime 20x
//
// The corpora are generated here, deterministically (16 MiB each; the
// environment variable MCPSTDIO_BENCH_MB changes that). To measure on the
// very bytes of bench/corpus.py instead, point MCPSTDIO_BENCH_CORPUS at its
// output directory (target/bench-corpus after bench/run.sh): <name>.ndjson
// is read from there. The benchmarks hold a live heap of
// MCPSTDIO_BENCH_HEAP_MB MiB (32 by default; see heapBallast). To run the C reader on the generated corpora
// (target/bench/bin/mcp_stdio_runner read RUNNER CORPUS FILE 65536 RUNS
// jsonrpc), MCPSTDIO_BENCH_WRITE=dir writes them to dir/<name>.ndjson. The
// build tag mcpstdio_cbench adds BenchmarkCReader*: the C reader's own loop
// (feed 64 KiB, take every item) in one cgo call, in this process, on the
// same bytes.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	mcpstdio "github.com/mcp-stdio/mcp-stdio/bindings/go"
)

const mib = 1 << 20

var (
	words = []string{
		"the", "server", "returned", "results", "for", "query", "in", "file", "line",
		"function", "error", "warning", "value", "config", "build", "test", "passed",
		"failed", "module", "request", "response", "cache", "index", "token", "user",
		"data", "path", "src/main.rs", "Cargo.toml", "0.42", "1024", "ok", "a", "of",
		"to", "and", "with", "is", "not", "found",
	}
	nonASCII = []string{
		"café", "naïve", "Größe", "température", "résumé", "données", "日本語", "テキスト",
		"данные", "ошибка", "→", "€12", "—", "✓", "🚀", "😀", "𝔘𝔫𝔦𝔠𝔬𝔡𝔢",
	}
	// JSON string fragments, already escaped.
	escapes = []string{
		`\n`, `\n`, `\n`, `\t`, `\"quoted\"`, `C:\\Users\\dev`, `\u00e9t\u00e9`,
		`\ud83d\ude80`, `https:\/\/example.com\/a`, `\r\n`, `\u001b[31m`,
	}
	heavyEscapes = []string{
		`\n`, `\n    `, `\"`, `\\`, `\t`, `\r\n`, `\u00e9`, `\u00fc`, `\u4e2d\u6587`,
		`\u0440\u0443\u0441`, `\ud83d\ude00`, `\ud834\udd1e`, `\u2028`, `\/`, `\b`,
		`\f`, `\u0000`, `\u001f`, `\"key\": \"value\"`, `if (x) {\n  return \"\\\\\";\n}`,
	}
	separators = []string{" ", ". ", ", ", `\n`}
	sepWeights = []int{17, 1, 1, 1}
	tools      = []string{"read_file", "search_code", "run_tests", "get_weather", "list_directory",
		"git_diff", "query_database", "fetch_url"}
	files = []string{"src/lib.rs", "src/reader.rs", "README.md", "docs/guide.md", "tests/ffi.rs",
		"include/mcp_stdio.h", "app/server.py", "web/index.ts"}
	levels  = []string{"debug", "info", "notice", "warning", "error"}
	loggers = []string{"db", "indexer", "http", "scheduler", "auth"}
)

// weighted picks tokens with integer weights.
type weighted struct {
	tokens []string
	cum    []int
}

func newWeighted(groups ...any) weighted {
	var w weighted
	for i := 0; i < len(groups); i += 2 {
		for _, t := range groups[i].([]string) {
			w.tokens = append(w.tokens, t)
			prev := 0
			if len(w.cum) > 0 {
				prev = w.cum[len(w.cum)-1]
			}
			w.cum = append(w.cum, prev+groups[i+1].(int))
		}
	}
	return w
}

func (w weighted) pick(rng *rand.Rand) string {
	x := rng.Intn(w.cum[len(w.cum)-1])
	return w.tokens[sort.SearchInts(w.cum, x+1)]
}

// textPool is a long random stream of escaped JSON string content, cut into
// windows at token boundaries (as bench/corpus.py's TextPool).
type textPool struct {
	text   string
	bounds []int // byte offsets of the token boundaries, 0 first
}

func newTextPool(seed int64, tokens weighted) *textPool {
	rng := rand.New(rand.NewSource(seed))
	seps := weighted{tokens: separators}
	for i, w := range sepWeights {
		seps.cum = append(seps.cum, w)
		if i > 0 {
			seps.cum[i] += seps.cum[i-1]
		}
	}
	var b strings.Builder
	p := &textPool{bounds: []int{0}}
	for b.Len() < 4*mib {
		b.WriteString(tokens.pick(rng))
		p.bounds = append(p.bounds, b.Len())
		b.WriteString(seps.pick(rng))
		p.bounds = append(p.bounds, b.Len())
	}
	p.text = b.String()
	return p
}

// take returns at least target bytes (never cutting an escape) from a random
// boundary.
func (p *textPool) take(rng *rand.Rand, target int) string {
	if target <= 0 {
		return ""
	}
	total := len(p.text)
	if target >= total {
		return strings.Repeat(p.text, target/total) + p.take(rng, target%total)
	}
	last := sort.SearchInts(p.bounds, total-target+1) - 1
	i := rng.Intn(last + 1)
	j := sort.SearchInts(p.bounds, p.bounds[i]+target)
	return p.text[p.bounds[i]:p.bounds[j]]
}

// The text pools, built when a corpus is generated and dropped once the
// corpora are (releaseTextPools): they hold some 30 MiB (the text and the
// offsets of its tokens), which, left in the heap, would raise the
// collector's goal as much as corpora held in the heap would (see corpus).
var (
	poolsMu           sync.Mutex
	plainPool, heavyP *textPool
)

func text(rng *rand.Rand, target int, heavy bool) string {
	poolsMu.Lock()
	if plainPool == nil {
		plainPool = newTextPool(0x5EED00F1, newWeighted(words, 12, nonASCII, 12, escapes, 8))
		heavyP = newTextPool(0x5EED00F2, newWeighted(heavyEscapes, 5, nonASCII, 5, words[:20], 1))
	}
	p := plainPool
	if heavy {
		p = heavyP
	}
	poolsMu.Unlock()
	return p.take(rng, target)
}

// releaseTextPools drops the text pools; text builds them again when needed
// (the same: they are deterministic).
func releaseTextPools() {
	poolsMu.Lock()
	plainPool, heavyP = nil, nil
	poolsMu.Unlock()
}

func b64(rng *rand.Rand, chars int) string {
	groups := chars / 4
	if groups < 0 {
		groups = 0
	}
	raw := make([]byte, groups*3)
	rng.Read(raw)
	s := base64.StdEncoding.EncodeToString(raw)
	if groups > 0 && rng.Intn(3) == 0 {
		s = s[:len(s)-1] + "="
	}
	return s
}

func rpcID(rng *rand.Rand, i int) string {
	if rng.Intn(4) == 0 {
		return fmt.Sprintf(`"req-%x"`, i)
	}
	return strconv.Itoa(i)
}

func pick(rng *rand.Rand, s []string) string { return s[rng.Intn(len(s))] }

// between returns an int in [lo, hi].
func between(rng *rand.Rand, lo, hi int) int { return lo + rng.Intn(hi-lo+1) }

func smallMessage(rng *rand.Rand, i int) string {
	switch r := rng.Intn(10); {
	case r < 2:
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"%s","arguments":{"path":"/home/dev/project/%s","limit":%d}}}`,
			rpcID(rng, i), pick(rng, tools), pick(rng, files), between(rng, 1, 500))
	case r == 2:
		return fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"tok-%08x","progress":%d,"total":100,"message":"Indexing files"}}`,
			rng.Uint32(), between(rng, 0, 100))
	case r < 5:
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"%s"}],"isError":false}}`,
			rpcID(rng, i), text(rng, between(rng, 16, 80), false))
	case r == 5:
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32602,"message":"Invalid params: unknown tool '%s'","data":{"retryable":false}}}`,
			rpcID(rng, i), pick(rng, tools))
	case r == 6:
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"resources/read","params":{"uri":"file:///var/log/app/%s-%d.log","_meta":{"progressToken":%d}}}`,
			rpcID(rng, i), pick(rng, loggers), between(rng, 1, 99), i)
	case r == 7:
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"tools/list","params":{"cursor":"c-%016x","_meta":{"client":"bench"}}}`,
			rpcID(rng, i), rng.Uint64())
	case r == 8:
		return fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"%s","logger":"%s","data":"%s"}}`,
			pick(rng, levels), pick(rng, loggers), text(rng, between(rng, 30, 80), false))
	default:
		id := i - between(rng, 1, 9)
		if id < 0 {
			id = 0
		}
		return fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%d,"reason":"User requested cancellation"}}`, id)
	}
}

func mixedMessage(rng *rand.Rand, i, target int) string {
	if target < 250 {
		return smallMessage(rng, i)
	}
	var head, tail, body string
	switch r := rng.Intn(20); {
	case r <= 8:
		head = fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"`, rpcID(rng, i))
		tail = `"}],"isError":false}}`
		body = text(rng, target-len(head)-len(tail), false)
	case r <= 12:
		head = fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"Rendered chart \u2192 see image"},{"type":"image","data":"`, rpcID(rng, i))
		tail = `","mimeType":"image/png"}]}}`
		body = b64(rng, target-len(head)-len(tail))
	case r <= 16:
		head = fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"%s","logger":"%s","data":{"file":"%s","line":%d,"message":"`,
			pick(rng, levels), pick(rng, loggers), pick(rng, files), between(rng, 1, 5000))
		tail = `"}}}`
		body = text(rng, target-len(head)-len(tail), false)
	default:
		head = fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"contents":[{"uri":"file:///home/dev/project/%s","mimeType":"text/markdown","text":"`,
			rpcID(rng, i), pick(rng, files))
		tail = `"}]}}`
		body = text(rng, target-len(head)-len(tail), false)
	}
	return head + body + tail
}

func largeMessage(rng *rand.Rand, i int) string {
	const target = mib - 1 // the newline makes it 1 MiB
	if i%2 == 0 {
		head := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"contents":[{"uri":"file:///data/blob-%d.bin","mimeType":"application/octet-stream","blob":"`, i, i)
		tail := `"}]}}`
		return head + b64(rng, target-len(head)-len(tail)) + tail
	}
	head := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":"`, i)
	tail := `"}],"isError":false}}`
	return head + text(rng, target-len(head)-len(tail)-16, false) + tail
}

func escapeMessage(rng *rand.Rand, i, target int) string {
	var head, tail string
	if rng.Intn(4) == 0 {
		head = `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","logger":"\"quoted\\logger\"","data":{"stdout":"`
		tail = `","exit":0}}}`
	} else {
		head = fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"\u00e9\ud83d\ude80 \"src/\u4e2d.rs\":\n`, rpcID(rng, i))
		tail = `"}],"isError":false}}`
	}
	return head + text(rng, target-len(head)-len(tail), true) + tail
}

func logUniform(rng *rand.Rand, lo, hi float64) int {
	return int(math.Exp(math.Log(lo) + (math.Log(hi)-math.Log(lo))*rng.Float64()))
}

// genCorpus returns about size bytes of lines of one kind, each ending in "\n".
func genCorpus(kind string, size int) []byte {
	seeds := map[string]int64{"small": 0x5EED0001, "mixed": 0x5EED0002, "large": 0x5EED0003, "escape": 0x5EED0004}
	rng := rand.New(rand.NewSource(seeds[kind]))
	var b bytes.Buffer
	b.Grow(size + 2*mib)
	for i := 1; b.Len() < size; i++ {
		switch kind {
		case "small":
			b.WriteString(smallMessage(rng, i))
		case "mixed":
			b.WriteString(mixedMessage(rng, i, logUniform(rng, 100, 50*1024)))
		case "large":
			b.WriteString(largeMessage(rng, i))
		case "escape":
			b.WriteString(escapeMessage(rng, i, logUniform(rng, 200, 20*1024)))
		default:
			panic("unknown corpus " + kind)
		}
		b.WriteByte('\n')
	}
	return b.Bytes()
}

var (
	corpusMu sync.Mutex
	corpora  = map[string][]byte{}
)

// heapBallast is the live heap the benchmarks hold: MCPSTDIO_BENCH_HEAP_MB
// MiB, 32 by default (allocated and never touched: it takes no memory of
// the machine, only room in the collector's accounts). The garbage
// collector paces itself on the live heap (a cycle when the heap has grown
// by GOGC%, 100, of it, or by 4 MiB), and what the Decoder costs on its
// own Data depends on that pace: with no other heap, a cycle every 4 MiB
// decoded. A host holds a heap of its own; 32 MiB is a modest one, and
// about what the corpus generator's text pools held, by accident, in every
// benchmark run before they were dropped after use (releaseTextPools). 0
// measures a program that holds nothing else.
var heapBallast []byte

// holdHeap allocates heapBallast once.
func holdHeap(tb testing.TB) {
	if heapBallast != nil {
		return
	}
	mb := 32
	if s := os.Getenv("MCPSTDIO_BENCH_HEAP_MB"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			tb.Fatalf("MCPSTDIO_BENCH_HEAP_MB=%q: not a number of MiB", s)
		}
		mb = n
	}
	heapBallast = make([]byte, mb<<20)
}

// corpus returns the named corpus (generated once per process, or read from
// MCPSTDIO_BENCH_CORPUS).
func corpus(tb testing.TB, kind string) []byte {
	tb.Helper()
	corpusMu.Lock()
	defer corpusMu.Unlock()
	holdHeap(tb)
	if c, ok := corpora[kind]; ok {
		return c
	}
	var data []byte
	if dir := os.Getenv("MCPSTDIO_BENCH_CORPUS"); dir != "" {
		var err error
		if data, err = os.ReadFile(filepath.Join(dir, kind+".ndjson")); err != nil {
			tb.Fatal(err)
		}
	} else {
		size := 16 * mib
		if s := os.Getenv("MCPSTDIO_BENCH_MB"); s != "" {
			n, err := strconv.Atoi(s)
			if err != nil || n <= 0 {
				tb.Fatalf("MCPSTDIO_BENCH_MB=%q: not a positive number", s)
			}
			size = n * mib
		}
		data = genCorpus(kind, size)
		releaseTextPools()
		if dir := os.Getenv("MCPSTDIO_BENCH_WRITE"); dir != "" {
			if err := os.WriteFile(filepath.Join(dir, kind+".ndjson"), data, 0o644); err != nil {
				tb.Fatal(err)
			}
		}
	}
	// Outside the Go heap, as a stream from a pipe is: 16 MiB of input held
	// in the heap would raise the collector's goal by as much, and send
	// every allocation of the code measured to memory out of the caches.
	data = offHeap(data)
	corpora[kind] = data
	return data
}

// corpusLines counts the non-empty lines of a corpus: every one is a
// JSON-RPC message.
func corpusLines(data []byte) int {
	n := 0
	for _, line := range bytes.Split(data, []byte("\n")) {
		if len(bytes.TrimSpace(line)) > 0 {
			n++
		}
	}
	return n
}

// The corpora are what they claim: every line a JSON-RPC message, judged the
// same by the Decoder and by json.Valid (a small size, to stay quick).
func TestBenchCorpora(t *testing.T) {
	for _, kind := range []string{"small", "mixed", "large", "escape"} {
		data := genCorpus(kind, 2*mib)
		if !bytes.Equal(data, genCorpus(kind, 2*mib)) {
			t.Fatalf("%s: genCorpus is not deterministic", kind)
		}
		want := corpusLines(data)
		if got := decodeCount(t, data); got != want {
			t.Errorf("%s: the Decoder found %d JSON-RPC messages in %d lines", kind, got, want)
		}
		if got := scanCount(t, data); got != want {
			t.Errorf("%s: bufio.Scanner + json.Valid found %d valid lines of %d", kind, got, want)
		}
	}
}

// decodeCount decodes data with JSONRPC and counts the JSON-RPC messages.
func decodeCount(tb testing.TB, data []byte) int { return decodeCounting(tb, data, false) }

// decodeReuseCount is decodeCount with Decoder.ReuseData.
func decodeReuseCount(tb testing.TB, data []byte) int { return decodeCounting(tb, data, true) }

func decodeCounting(tb testing.TB, data []byte, reuse bool) int {
	d := mcpstdio.NewDecoder(bytes.NewReader(data), mcpstdio.JSONRPC())
	if reuse {
		d.ReuseData()
	}
	n := 0
	for {
		m, err := d.Decode()
		if err == io.EOF {
			return n
		}
		if err != nil {
			tb.Fatal(err)
		}
		if m.Kind == mcpstdio.KindMessage && m.RPCKind != mcpstdio.RPCNone {
			n++
		}
	}
}

// scanCount is what a Go program does without this package: bufio.Scanner
// for the lines, json.Valid on each.
func scanCount(tb testing.TB, data []byte) int {
	s := bufio.NewScanner(bytes.NewReader(data))
	s.Buffer(make([]byte, 64<<10), 64<<20)
	n := 0
	for s.Scan() {
		line := bytes.TrimSpace(s.Bytes())
		if len(line) > 0 && json.Valid(line) {
			n++
		}
	}
	if err := s.Err(); err != nil {
		tb.Fatal(err)
	}
	return n
}

// benchStart loads a corpus and counts its messages, and (re)starts the
// benchmark's timer from a collected heap.
func benchStart(b *testing.B, kind string) ([]byte, int) {
	data := corpus(b, kind)
	want := corpusLines(data)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	runtime.GC()
	b.ResetTimer()
	return data, want
}

// benchCorpus reports MB/s (wall clock) and cpu-MB/s: the bytes per second
// of CPU time the process used meanwhile (every thread, the garbage
// collector's included). On a machine shared with other work, the CPU time
// counts only what ran, so cpu-MB/s varies less than MB/s.
func benchCorpus(b *testing.B, kind string, count func(testing.TB, []byte) int) {
	data, want := benchStart(b, kind)
	cpu0 := cpuTime()
	for i := 0; i < b.N; i++ {
		if got := count(b, data); got != want {
			b.Fatalf("%d messages, want %d", got, want)
		}
	}
	if cpu := cpuTime() - cpu0; cpu > 0 {
		b.ReportMetric(float64(len(data))*float64(b.N)/1e6/cpu.Seconds(), "cpu-MB/s")
	}
}

func BenchmarkDecoderReuseSmall(b *testing.B)  { benchCorpus(b, "small", decodeReuseCount) }
func BenchmarkDecoderReuseMixed(b *testing.B)  { benchCorpus(b, "mixed", decodeReuseCount) }
func BenchmarkDecoderReuseLarge(b *testing.B)  { benchCorpus(b, "large", decodeReuseCount) }
func BenchmarkDecoderReuseEscape(b *testing.B) { benchCorpus(b, "escape", decodeReuseCount) }

func BenchmarkDecoderSmall(b *testing.B)  { benchCorpus(b, "small", decodeCount) }
func BenchmarkDecoderMixed(b *testing.B)  { benchCorpus(b, "mixed", decodeCount) }
func BenchmarkDecoderLarge(b *testing.B)  { benchCorpus(b, "large", decodeCount) }
func BenchmarkDecoderEscape(b *testing.B) { benchCorpus(b, "escape", decodeCount) }

func BenchmarkBufioJSONValidSmall(b *testing.B)  { benchCorpus(b, "small", scanCount) }
func BenchmarkBufioJSONValidMixed(b *testing.B)  { benchCorpus(b, "mixed", scanCount) }
func BenchmarkBufioJSONValidLarge(b *testing.B)  { benchCorpus(b, "large", scanCount) }
func BenchmarkBufioJSONValidEscape(b *testing.B) { benchCorpus(b, "escape", scanCount) }

// connCount runs a Conn over data (its answers to io.Discard) until the
// end of the stream and counts what it routed: the notifications handled,
// the requests answered and the lines left to Unhandled (here the responses
// to no request of ours). Handlers may still run after Close: it waits up
// to 10 s for want of them.
func connCount(tb testing.TB, data []byte, want int) int {
	var n atomic.Int64
	c, err := mcpstdio.NewConn(bytes.NewReader(data), io.Discard, &mcpstdio.ConnConfig{
		Handler: func(ctx context.Context, req *mcpstdio.Request) {
			if !req.IsNotification() {
				req.Respond(json.RawMessage(`{}`))
			}
			n.Add(1)
		},
		Unhandled:  func(m mcpstdio.Message) { n.Add(1) },
		CloseGrace: -1,
	})
	if err != nil {
		tb.Fatal(err)
	}
	<-c.Done()
	if err := c.Close(); err != nil {
		tb.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); n.Load() < int64(want) && time.Now().Before(deadline); {
		time.Sleep(100 * time.Microsecond)
	}
	return int(n.Load())
}

// The Conn's reading side: the peer's lines through the transport's events
// to the handlers (the first 4 MiB of a corpus; every request of the peer
// runs in a goroutine of its own).
func BenchmarkConnReceiveSmall(b *testing.B) { benchConn(b, "small") }
func BenchmarkConnReceiveMixed(b *testing.B) { benchConn(b, "mixed") }

func benchConn(b *testing.B, kind string) {
	data := corpus(b, kind)
	if len(data) > 4*mib {
		data = data[:bytes.IndexByte(data[4*mib:], '\n')+4*mib+1]
	}
	want := corpusLines(data)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if got := connCount(b, data, want); got != want {
			b.Fatalf("%d messages routed, want %d", got, want)
		}
	}
}
