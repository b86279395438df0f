package mcpstdio_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"reflect"
	"regexp"
	"strings"
	"testing"

	mcpstdio "github.com/mcp-stdio/mcp-stdio/bindings/go"
)

// show renders items for comparison: "Kind/RPCKind/data/len".
func show(ms []mcpstdio.Message) []string {
	out := []string{}
	for _, m := range ms {
		if m.Kind == mcpstdio.KindTooLong {
			out = append(out, fmt.Sprintf("%v/%v/nil=%v/%d", m.Kind, m.RPCKind, m.Data == nil, m.Len))
			continue
		}
		if m.Len != len(m.Data) {
			out = append(out, fmt.Sprintf("BAD LEN %d != %d", m.Len, len(m.Data)))
		}
		out = append(out, fmt.Sprintf("%v/%v/%s", m.Kind, m.RPCKind, m.Data))
	}
	return out
}

func newReader(t testing.TB, opts ...mcpstdio.Option) *mcpstdio.LineReader {
	t.Helper()
	r, err := mcpstdio.NewLineReader(opts...)
	if err != nil {
		t.Fatalf("NewLineReader: %v", err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

func feed(t testing.TB, r *mcpstdio.LineReader, s string) []string {
	t.Helper()
	ms, err := r.Feed([]byte(s))
	if err != nil {
		t.Fatalf("Feed(%q): %v", s, err)
	}
	return show(ms)
}

func finish(t testing.TB, r *mcpstdio.LineReader) []string {
	t.Helper()
	ms, err := r.Finish()
	if err != nil {
		t.Fatalf("Finish: %v", err)
	}
	return show(ms)
}

func check(t testing.TB, what string, got, want []string) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s:\n got  %q\n want %q", what, got, want)
	}
}

// The seed example of the project.
func TestSeedExample(t *testing.T) {
	r := newReader(t)
	check(t, "feed 1", feed(t, r, "{\"id\":1}\n{\"id\""), []string{`Message/None/{"id":1}`})
	if n := r.BufferedLen(); n != 5 {
		t.Fatalf("BufferedLen = %d, want 5", n)
	}
	check(t, "feed 2", feed(t, r, ":2}\n{\"id\":3}\nnot json\n"), []string{
		`Message/None/{"id":2}`, `Message/None/{"id":3}`, `ParseError/None/not json`,
	})
	if n := r.BufferedLen(); n != 0 {
		t.Fatalf("BufferedLen = %d, want 0", n)
	}
	check(t, "feed 3", feed(t, r, `{"id":4}`), []string{})
	if n := r.BufferedLen(); n != 8 {
		t.Fatalf("BufferedLen = %d, want 8", n)
	}
	check(t, "finish", finish(t, r), []string{`Message/None/{"id":4}`})
	check(t, "finish again", finish(t, r), []string{})
	// The reader stays usable after Finish.
	check(t, "feed after finish", feed(t, r, "{\"id\":5}\n"), []string{`Message/None/{"id":5}`})
}

// Messages are Go copies: later calls do not change them.
func TestMessageDataIsCopy(t *testing.T) {
	r := newReader(t)
	in := []byte("{\"id\":1}\n")
	ms, err := r.Feed(in)
	if err != nil || len(ms) != 1 {
		t.Fatalf("Feed: %v %v", ms, err)
	}
	copy(in, "XXXXXXXXX") // the reader copied the input too
	for i := 0; i < 100; i++ {
		if _, err := r.Feed([]byte("{\"id\":2222222}\n")); err != nil {
			t.Fatal(err)
		}
	}
	r.Close()
	if string(ms[0].Data) != `{"id":1}` {
		t.Fatalf("data changed: %q", ms[0].Data)
	}
}

func TestNextAndEmptyFeed(t *testing.T) {
	r := newReader(t)
	if ms, err := r.Feed(nil); err != nil || len(ms) != 0 {
		t.Fatalf("Feed(nil) = %v, %v", ms, err)
	}
	if ms, err := r.Feed([]byte{}); err != nil || len(ms) != 0 {
		t.Fatalf("Feed(empty) = %v, %v", ms, err)
	}
	m, ok, err := r.Next()
	if ok || err != nil {
		t.Fatalf("Next on empty reader = %v, %v, %v", m, ok, err)
	}
	// Feed returns the items, so Next sees nothing afterwards.
	check(t, "feed", feed(t, r, "1\n2\n"), []string{"Message/None/1", "Message/None/2"})
	if _, ok, _ := r.Next(); ok {
		t.Fatal("Next after Feed returned an item")
	}
	// Write appends without taking items; Next takes them in order.
	if n, err := r.Write([]byte("3\n{\"x\"\n4")); n != 8 || err != nil {
		t.Fatalf("Write = %d, %v", n, err)
	}
	var got []mcpstdio.Message
	for {
		m, ok, err := r.Next()
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		got = append(got, m)
	}
	check(t, "Write+Next", show(got), []string{"Message/None/3", `ParseError/None/{"x"`})
	check(t, "Finish", finish(t, r), []string{"Message/None/4"})
	var w io.Writer = r // a LineReader is an io.Writer
	if _, err := fmt.Fprintf(w, "%d\n", 5); err != nil {
		t.Fatal(err)
	}
	check(t, "Fprintf", feed(t, r, ""), []string{"Message/None/5"})
	r.Close()
	if n, err := r.Write([]byte("1\n")); n != 0 || !errors.Is(err, mcpstdio.ErrClosed) {
		t.Fatalf("Write after Close = %d, %v", n, err)
	}
}

// stream is a stream with a BOM, CRLF, blank lines, junk, invalid UTF-8, a
// 4-byte emoji (split by the small chunkings) and an unterminated last line.
const stream = "\xef\xbb\xbf{\"a\":1}\r\n" +
	"  \r\n\n" +
	"junk here\n" +
	"\t{\"emoji\":\"\U0001F600\"} \r\n" +
	"[1,2\n" +
	"\"\xff\"\n" +
	"[{\"b\":[null,true,false,-1.5e3]}]\r\n" +
	"{\"tail\":\"\U0001F600\"}"

var streamItems = []string{
	`Message/None/{"a":1}`,
	`ParseError/None/junk here`,
	"Message/None/{\"emoji\":\"\U0001F600\"}",
	`ParseError/None/[1,2`,
	"ParseError/None/\"\xff\"",
	`Message/None/[{"b":[null,true,false,-1.5e3]}]`,
	"Message/None/{\"tail\":\"\U0001F600\"}",
}

// readChunked feeds s in chunks of the given sizes (cycled), then finishes.
func readChunked(t testing.TB, s string, sizes []int, opts ...mcpstdio.Option) []string {
	t.Helper()
	r := newReader(t, opts...)
	defer r.Close()
	var got []string
	for i := 0; len(s) > 0; i++ {
		n := sizes[i%len(sizes)]
		if n > len(s) {
			n = len(s)
		}
		got = append(got, feed(t, r, s[:n])...)
		s = s[n:]
	}
	got = append(got, finish(t, r)...)
	if n := r.BufferedLen(); n != 0 {
		t.Fatalf("BufferedLen after Finish = %d", n)
	}
	return got
}

func TestChunkingInvariance(t *testing.T) {
	whole := readChunked(t, stream, []int{len(stream)})
	check(t, "one feed", whole, streamItems)
	check(t, "1-byte feeds", readChunked(t, stream, []int{1}), streamItems)
	for _, sizes := range [][]int{{2}, {3}, {5}, {7}, {1, 2, 3}, {4, 1}, {64}} {
		check(t, fmt.Sprint("chunks ", sizes), readChunked(t, stream, sizes), streamItems)
	}
	// Every split in two.
	for i := 0; i <= len(stream); i++ {
		check(t, fmt.Sprint("split at ", i), readChunked(t, stream, []int{i + 1, len(stream)}), streamItems)
	}
	// Random chunkings.
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 200; i++ {
		sizes := make([]int, 1+rng.Intn(8))
		for j := range sizes {
			sizes[j] = 1 + rng.Intn(12)
		}
		check(t, fmt.Sprint("chunks ", sizes), readChunked(t, stream, sizes), streamItems)
	}
}

func TestTooLong(t *testing.T) {
	const limit = 10
	long := `{"long":"` + strings.Repeat("x", 40) + `"}`
	in := "{\"a\":1}\n" + long + "\n1234567890\n{\"b\":2}\n" + long
	for _, sizes := range [][]int{{len(in)}, {1}, {3}, {9, 1}} {
		got := readChunked(t, in, sizes, mcpstdio.MaxLineLen(limit))
		if len(got) != 5 {
			t.Fatalf("chunks %v: %q", sizes, got)
		}
		check(t, fmt.Sprint("chunks ", sizes), []string{got[0], got[2], got[3]}, []string{
			`Message/None/{"a":1}`, `Message/None/1234567890`, `Message/None/{"b":2}`,
		})
		for _, i := range []int{1, 4} {
			var isNil bool
			var n int
			if _, err := fmt.Sscanf(got[i], "TooLong/None/nil=%t/%d", &isNil, &n); err != nil {
				t.Fatalf("chunks %v: item %d = %q, want TooLong: %v", sizes, i, got[i], err)
			}
			if !isNil || n <= limit || n > len(long) {
				t.Fatalf("chunks %v: item %d = %q", sizes, i, got[i])
			}
		}
	}
	// Skipping invalid lines never hides a too-long one.
	got := readChunked(t, "junk\n"+long+"\n", []int{4}, mcpstdio.MaxLineLen(limit), mcpstdio.SkipInvalid())
	if len(got) != 1 || !strings.HasPrefix(got[0], "TooLong/") {
		t.Fatalf("SkipInvalid: %q", got)
	}
}

func TestLineLimitOptions(t *testing.T) {
	for _, n := range []int{0, -1, -1 << 40} {
		r, err := mcpstdio.NewLineReader(mcpstdio.MaxLineLen(n))
		if r != nil || !errors.Is(err, mcpstdio.ErrInvalidArgument) {
			t.Fatalf("MaxLineLen(%d): %v, %v", n, r, err)
		}
	}
	// The last option wins.
	r := newReader(t, mcpstdio.MaxLineLen(0), mcpstdio.MaxLineLen(3))
	if got := feed(t, r, "1234\n123\n"); len(got) != 2 || !strings.HasPrefix(got[0], "TooLong/") || got[1] != "Message/None/123" {
		t.Fatalf("MaxLineLen(3): %q", got)
	}
	// A line above the 64 MiB default, accepted without a limit.
	big := "[" + strings.Repeat("1,", 33<<20) + "1]"
	for _, opts := range [][]mcpstdio.Option{nil, {mcpstdio.NoLineLimit()}} {
		r := newReader(t, opts...)
		ms, err := r.Feed([]byte(big + "\n"))
		if err != nil || len(ms) != 1 {
			t.Fatalf("big line: %d items, %v", len(ms), err)
		}
		if opts == nil {
			if ms[0].Kind != mcpstdio.KindTooLong || ms[0].Data != nil || ms[0].Len <= 64<<20 {
				t.Fatalf("default limit: %v %d", ms[0].Kind, ms[0].Len)
			}
		} else if ms[0].Kind != mcpstdio.KindMessage || !bytes.Equal(ms[0].Data, []byte(big)) {
			t.Fatalf("NoLineLimit: %v %d", ms[0].Kind, ms[0].Len)
		}
		r.Close()
	}
}

func TestJSONRPCKinds(t *testing.T) {
	in := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":"a","result":{}}
{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}
[{"jsonrpc":"2.0","method":"x"},{"jsonrpc":"2.0","id":2,"result":null}]
{"id":1,"method":"no version"}
[]
not json
`
	check(t, "JSONRPC", readChunked(t, in, []int{len(in)}, mcpstdio.JSONRPC()), []string{
		`Message/Request/{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`,
		`Message/Notification/{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`Message/Response/{"jsonrpc":"2.0","id":"a","result":{}}`,
		`Message/Error/{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`,
		`Message/Batch/[{"jsonrpc":"2.0","method":"x"},{"jsonrpc":"2.0","id":2,"result":null}]`,
		`InvalidJSONRPC/None/{"id":1,"method":"no version"}`,
		`InvalidJSONRPC/None/[]`,
		`ParseError/None/not json`,
	})
	check(t, "JSONRPC+SkipInvalid", readChunked(t, in, []int{7}, mcpstdio.JSONRPC(), mcpstdio.SkipInvalid()), []string{
		`Message/Request/{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`,
		`Message/Notification/{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`Message/Response/{"jsonrpc":"2.0","id":"a","result":{}}`,
		`Message/Error/{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`,
		`Message/Batch/[{"jsonrpc":"2.0","method":"x"},{"jsonrpc":"2.0","id":2,"result":null}]`,
	})
	// Without the option nothing is classified.
	got := readChunked(t, in, []int{len(in)})
	if len(got) != 8 || got[0] != `Message/None/{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}` || got[6] != "Message/None/[]" {
		t.Fatalf("no JSONRPC: %q", got)
	}
}

func TestKindStrings(t *testing.T) {
	for k, want := range map[mcpstdio.Kind]string{
		mcpstdio.KindMessage: "Message", mcpstdio.KindParseError: "ParseError",
		mcpstdio.KindTooLong: "TooLong", mcpstdio.KindInvalidJSONRPC: "InvalidJSONRPC", 9: "Kind(9)",
	} {
		if got := k.String(); got != want {
			t.Errorf("Kind(%d).String() = %q, want %q", int(k), got, want)
		}
	}
	for k, want := range map[mcpstdio.RPCKind]string{
		mcpstdio.RPCNone: "None", mcpstdio.RPCRequest: "Request", mcpstdio.RPCNotification: "Notification",
		mcpstdio.RPCResponse: "Response", mcpstdio.RPCError: "Error", mcpstdio.RPCBatch: "Batch", -1: "RPCKind(-1)",
	} {
		if got := k.String(); got != want {
			t.Errorf("RPCKind(%d).String() = %q, want %q", int(k), got, want)
		}
	}
}

func TestCloseIdempotentAndErrClosed(t *testing.T) {
	r, err := mcpstdio.NewLineReader()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Feed([]byte("{\"id\":1}\n{\"id\"")); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if err := r.Close(); err != nil {
			t.Fatalf("Close #%d: %v", i, err)
		}
	}
	if ms, err := r.Feed([]byte("1\n")); ms != nil || !errors.Is(err, mcpstdio.ErrClosed) {
		t.Fatalf("Feed after Close: %v %v", ms, err)
	}
	if _, ok, err := r.Next(); ok || !errors.Is(err, mcpstdio.ErrClosed) {
		t.Fatalf("Next after Close: %v %v", ok, err)
	}
	if ms, err := r.Finish(); ms != nil || !errors.Is(err, mcpstdio.ErrClosed) {
		t.Fatalf("Finish after Close: %v %v", ms, err)
	}
	if n := r.BufferedLen(); n != 0 {
		t.Fatalf("BufferedLen after Close = %d", n)
	}
	var nilReader *mcpstdio.LineReader
	if err := nilReader.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := nilReader.Feed(nil); !errors.Is(err, mcpstdio.ErrClosed) {
		t.Fatalf("Feed on nil reader: %v", err)
	}
}

func TestVersion(t *testing.T) {
	if v := mcpstdio.Version(); !regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+$`).MatchString(v) {
		t.Fatalf("Version() = %q", v)
	}
	if mcpstdio.ABIVersion() != mcpstdio.HeaderABIVersion {
		t.Fatalf("ABIVersion() = %d, header %d", mcpstdio.ABIVersion(), mcpstdio.HeaderABIVersion)
	}
}
