package mcpstdio_test

// Items are taken from the C reader in batches (batch.go): up to BatchMax
// per cgo call, their bytes staged (StageSize bytes at most), then copied
// to what is left of the last arena and to a new one (of MinArena bytes or
// the rest of the batch's size), an item that does not fit in the stage
// handed over separately.
// These tests put the edges of batches, of the stage and of arenas
// everywhere in a stream, read it in many chunkings, and check every item,
// also after the items that followed it were read.

import (
	"fmt"
	"io"
	"math/rand"
	"runtime"
	"strings"
	"testing"

	mcpstdio "github.com/mcp-stdio/mcp-stdio/bindings/go"
)

// batchLimit is the line limit of these tests: lines longer than the stage
// are messages, longer ones still too long.
const batchLimit = 3 * mcpstdio.StageSize

// item is one line of a test stream and the item it gives.
type item struct {
	line string // as written, without "\n"
	want string // as show renders it; "TooLong" for a line over batchLimit
}

// lineOf returns a line of exactly n bytes after trimming, of the given
// kind: a JSON-RPC notification, a line that is not JSON, valid JSON that is
// not JSON-RPC, or a line too long. id makes every line distinct.
func lineOf(kind mcpstdio.Kind, id, n int) item {
	var head, tail string
	switch kind {
	case mcpstdio.KindMessage:
		head, tail = fmt.Sprintf(`{"jsonrpc":"2.0","method":"m%d","params":{"p":"`, id), `"}}`
	case mcpstdio.KindParseError:
		head, tail = fmt.Sprintf("junk%d-", id), ""
	case mcpstdio.KindInvalidJSONRPC:
		head, tail = fmt.Sprintf(`{"x":%d,"p":"`, id), `"}`
	case mcpstdio.KindTooLong:
		return item{line: strings.Repeat("t", batchLimit+1+n), want: "TooLong"}
	}
	pad := n - len(head) - len(tail)
	if pad < 0 {
		pad = 0
	}
	body := head + strings.Repeat(string(rune('a'+id%26)), pad) + tail
	switch kind {
	case mcpstdio.KindMessage:
		return item{line: body, want: "Message/Notification/" + body}
	case mcpstdio.KindParseError:
		return item{line: body, want: "ParseError/None/" + body}
	default:
		return item{line: body, want: "InvalidJSONRPC/None/" + body}
	}
}

// batchStream builds a stream that hits the edges of batches, of the stage
// and of arenas: runs of exactly BatchMax tiny items (and one more), items
// that fill the stage exactly, batches that fill what is left of an arena
// and go on in a new one, items of MinArena bytes and about, of the stage
// and more, too-long lines (no data) and invalid lines among them, blank
// lines and CRLF, then random sizes.
func batchStream(seed int64) (string, []item) {
	var items []item
	id := 0
	add := func(kind mcpstdio.Kind, n int) {
		id++
		items = append(items, lineOf(kind, id, n))
	}
	for i := 0; i < 16; i++ { // the stage filled exactly
		add(mcpstdio.KindMessage, mcpstdio.StageSize/16)
	}
	add(mcpstdio.KindMessage, 60) // then no room at all
	for i := 0; i < mcpstdio.BatchMax; i++ {
		add(mcpstdio.KindMessage, 40) // a batch filled exactly by count
	}
	for i := 0; i < mcpstdio.BatchMax+1; i++ {
		add(mcpstdio.KindParseError, 12)
	}
	for i := 0; i < 3*mcpstdio.MinArena/1000; i++ { // arenas of MinArena filled by batches of a few
		add(mcpstdio.KindMessage, 1000)
	}
	for _, n := range []int{mcpstdio.StageSize / 2, mcpstdio.StageSize/2 + 1, mcpstdio.StageSize / 2,
		mcpstdio.MinArena - 1, mcpstdio.MinArena, mcpstdio.MinArena + 1,
		mcpstdio.StageSize, mcpstdio.StageSize + 1, mcpstdio.StageSize - 1, 1, batchLimit, 2 * mcpstdio.StageSize} {
		add(mcpstdio.KindMessage, n)
	}
	add(mcpstdio.KindTooLong, 0)
	add(mcpstdio.KindInvalidJSONRPC, 30)
	add(mcpstdio.KindTooLong, mcpstdio.StageSize)
	rng := rand.New(rand.NewSource(seed))
	kinds := []mcpstdio.Kind{mcpstdio.KindMessage, mcpstdio.KindMessage, mcpstdio.KindMessage,
		mcpstdio.KindParseError, mcpstdio.KindInvalidJSONRPC}
	for i := 0; i < 3000; i++ {
		var n int
		switch r := rng.Intn(100); {
		case r < 70:
			n = 1 + rng.Intn(300)
		case r < 95:
			n = 1 + rng.Intn(8192)
		case r < 99:
			n = 1 + rng.Intn(2*mcpstdio.StageSize)
		default:
			add(mcpstdio.KindTooLong, rng.Intn(mcpstdio.StageSize))
			continue
		}
		add(kinds[rng.Intn(len(kinds))], n)
	}
	var b strings.Builder
	for i, it := range items {
		switch i % 7 {
		case 1:
			b.WriteString("  " + it.line + " \r\n")
		case 3:
			b.WriteString(it.line + "\n\n")
		default:
			b.WriteString(it.line + "\n")
		}
	}
	return b.String(), items
}

// checkItems compares items with the stream's, Data and Len included; a
// too-long line must say it received more than the limit.
func checkItems(t *testing.T, what string, got []mcpstdio.Message, want []item) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d items, want %d", what, len(got), len(want))
	}
	for i, m := range got {
		if want[i].want == "TooLong" {
			if m.Kind != mcpstdio.KindTooLong || m.Data != nil || m.Len <= batchLimit {
				t.Fatalf("%s: item %d: %v, %d bytes, Len %d; want a line too long", what, i, m.Kind, len(m.Data), m.Len)
			}
			continue
		}
		if s := show([]mcpstdio.Message{m})[0]; s != want[i].want {
			t.Fatalf("%s: item %d:\n got  %.200q\n want %.200q", what, i, s, want[i].want)
		}
		if cap(m.Data) != len(m.Data) {
			t.Fatalf("%s: item %d: cap %d, len %d: an append would write into another item", what, i, cap(m.Data), len(m.Data))
		}
	}
}

// chunkReader returns at most n bytes per Read, as a pipe does.
type chunkReader struct {
	s string
	n int
}

func (r *chunkReader) Read(p []byte) (int, error) {
	if len(r.s) == 0 {
		return 0, io.EOF
	}
	if len(p) > r.n {
		p = p[:r.n]
	}
	k := copy(p, r.s)
	r.s = r.s[k:]
	return k, nil
}

var batchChunks = []int{1 << 20, 65536, 4099, 1000, 7}

// Every item, through the Decoder, in several chunkings: kept until the
// end and checked then, so an item overwritten by a later batch shows.
func TestBatchDecoder(t *testing.T) {
	s, want := batchStream(1)
	for _, chunk := range batchChunks {
		d := mcpstdio.NewDecoder(&chunkReader{s, chunk}, mcpstdio.JSONRPC(), mcpstdio.MaxLineLen(batchLimit))
		var got []mcpstdio.Message
		for {
			m, err := d.Decode()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("chunks of %d: Decode: %v", chunk, err)
			}
			got = append(got, m)
		}
		checkItems(t, fmt.Sprint("Decoder, chunks of ", chunk), got, want)
	}
}

// An append to an item's Data never changes another item.
func TestBatchAppendIsolated(t *testing.T) {
	d := mcpstdio.NewDecoder(strings.NewReader("1\n22\n333\n"))
	defer d.Close()
	var ms []mcpstdio.Message
	for d.More() {
		m, _ := d.Decode()
		ms = append(ms, m)
	}
	_ = append(ms[0].Data, "XXXX"...)
	ms[1].Data[0] = '2' // writable, and the others' own
	check(t, "items", show(ms), []string{"Message/None/1", "Message/None/22", "Message/None/333"})
}

// The same through LineReader.Feed, Finish, and Write + Next.
func TestBatchLineReader(t *testing.T) {
	s, want := batchStream(2)
	for _, chunk := range batchChunks {
		r := newReader(t, mcpstdio.JSONRPC(), mcpstdio.MaxLineLen(batchLimit))
		var got []mcpstdio.Message
		for rest := s; len(rest) > 0; {
			n := chunk
			if n > len(rest) {
				n = len(rest)
			}
			ms, err := r.Feed([]byte(rest[:n]))
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, ms...)
			rest = rest[n:]
		}
		ms, err := r.Finish()
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ms...)
		checkItems(t, fmt.Sprint("Feed, chunks of ", chunk), got, want)
	}

	// Write + Next: BufferedLen counts the lines not taken, exactly.
	r := newReader(t, mcpstdio.JSONRPC(), mcpstdio.MaxLineLen(batchLimit))
	var got []mcpstdio.Message
	for rest := s; len(rest) > 0; {
		n := 65536
		if n > len(rest) {
			n = len(rest)
		}
		if _, err := r.Write([]byte(rest[:n])); err != nil {
			t.Fatal(err)
		}
		rest = rest[n:]
		for {
			before := r.BufferedLen()
			m, ok, err := r.Next()
			if err != nil {
				t.Fatal(err)
			}
			if !ok {
				break
			}
			if after := r.BufferedLen(); m.Kind != mcpstdio.KindTooLong && after > before-m.Len {
				t.Fatalf("BufferedLen %d before an item of %d bytes, %d after", before, m.Len, after)
			}
			got = append(got, m)
		}
	}
	ms, err := r.Finish()
	if err != nil {
		t.Fatal(err)
	}
	checkItems(t, "Write + Next", append(got, ms...), want)
}

// With ReuseData, each item is right when Decode returns it (its Data is
// only valid until the next call); items returned before ReuseData stay
// valid for good.
func TestDecoderReuseData(t *testing.T) {
	s, want := batchStream(3)
	for _, chunk := range batchChunks {
		d := mcpstdio.NewDecoder(&chunkReader{s, chunk}, mcpstdio.JSONRPC(), mcpstdio.MaxLineLen(batchLimit))
		var kept []mcpstdio.Message
		for i := 0; i < 10; i++ { // owned: kept as they are
			m, err := d.Decode()
			if err != nil {
				t.Fatal(err)
			}
			kept = append(kept, m)
		}
		d.ReuseData()
		d.ReuseData() // idempotent
		var got []mcpstdio.Message
		for i := len(kept); ; i++ {
			if i%3 == 0 && !d.More() { // More, then Decode, keeps the item
				break
			}
			m, err := d.Decode()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("chunks of %d: Decode: %v", chunk, err)
			}
			checkItems(t, fmt.Sprint("ReuseData, chunks of ", chunk, ", item ", i), []mcpstdio.Message{m}, want[i:i+1])
			if m.Data != nil {
				m.Data = append(make([]byte, 0, len(m.Data)), m.Data...)
			}
			got = append(got, m)
		}
		checkItems(t, fmt.Sprint("ReuseData, chunks of ", chunk), append(kept, got...), want)
		d.Close()
	}
}

// Items kept from a Decoder stay intact while many more are decoded and
// the garbage collector reclaims the arenas of those dropped: a kept item
// keeps its own arena alive, and arenas are never written again.
func TestDecoderDataSurvivesGC(t *testing.T) {
	s, want := batchStream(4)
	for _, chunk := range []int{65536, 4099} {
		var kept []mcpstdio.Message
		var keptAt []int
		for pass := 0; pass < 3; pass++ { // the stream three times: many more batches after the kept items
			d := mcpstdio.NewDecoder(&chunkReader{s, chunk}, mcpstdio.JSONRPC(), mcpstdio.MaxLineLen(batchLimit))
			for i := 0; ; i++ {
				m, err := d.Decode()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatalf("chunks of %d: Decode: %v", chunk, err)
				}
				if pass == 0 && (i < 20 || i%97 == 0) {
					kept, keptAt = append(kept, m), append(keptAt, i)
				}
				if i%500 == 0 {
					runtime.GC()
				}
			}
		}
		runtime.GC()
		runtime.GC()
		for j, m := range kept {
			checkItems(t, fmt.Sprint("kept, chunks of ", chunk, ", item ", keptAt[j]), []mcpstdio.Message{m}, want[keptAt[j]:keptAt[j]+1])
		}
	}
}
