package mcpstdio_test

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	mcpstdio "github.com/mcp-stdio/mcp-stdio/bindings/go"
)

// decodeAll decodes until io.EOF, checks that io.EOF is sticky, closes d.
func decodeAll(t testing.TB, d *mcpstdio.Decoder) []string {
	t.Helper()
	defer d.Close()
	var ms []mcpstdio.Message
	for {
		m, err := d.Decode()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("Decode after %d items: %v", len(ms), err)
		}
		ms = append(ms, m)
	}
	for i := 0; i < 2; i++ {
		if _, err := d.Decode(); err != io.EOF {
			t.Fatalf("Decode after io.EOF: %v", err)
		}
	}
	if d.More() {
		t.Fatal("More after io.EOF")
	}
	return show(ms)
}

func TestDecoderStringsReader(t *testing.T) {
	check(t, "strings.Reader", decodeAll(t, mcpstdio.NewDecoder(strings.NewReader(stream))), streamItems)
	check(t, "empty", decodeAll(t, mcpstdio.NewDecoder(strings.NewReader(""))), []string{})
	check(t, "JSONRPC", decodeAll(t, mcpstdio.NewDecoder(strings.NewReader(
		"{\"jsonrpc\":\"2.0\",\"method\":\"n\"}\n{}\njunk"), mcpstdio.JSONRPC(), mcpstdio.SkipInvalid())),
		[]string{`Message/Notification/{"jsonrpc":"2.0","method":"n"}`})
}

func TestDecoderIOTestReaders(t *testing.T) {
	for name, r := range map[string]func() io.Reader{
		"OneByteReader": func() io.Reader { return iotest.OneByteReader(strings.NewReader(stream)) },
		"HalfReader":    func() io.Reader { return iotest.HalfReader(strings.NewReader(stream)) },
		"DataErrReader": func() io.Reader { return iotest.DataErrReader(strings.NewReader(stream)) },
	} {
		check(t, name, decodeAll(t, mcpstdio.NewDecoder(r())), streamItems)
	}
}

// bigStream has lines longer than the Decoder's 64 KiB chunks.
func bigStream() (string, []string) {
	var b strings.Builder
	var want []string
	for i := 0; i < 60; i++ {
		line := fmt.Sprintf(`{"id":%d,"pad":"%s"}`, i, strings.Repeat(string(rune('a'+i%26)), i*i*37))
		if i%7 == 3 {
			line = fmt.Sprintf("junk %d %s", i, strings.Repeat("\U0001F600", i*100))
			want = append(want, "ParseError/None/"+line)
		} else {
			want = append(want, "Message/None/"+line)
		}
		b.WriteString(line)
		if i%2 == 0 {
			b.WriteString("\r")
		}
		b.WriteString("\n")
	}
	return b.String(), want
}

// A writer goroutine writes the stream into an io.Pipe in odd chunk sizes.
func TestDecoderPipe(t *testing.T) {
	s, want := bigStream()
	s += `{"last":true}` // unterminated: delivered at EOF
	want = append(want, `Message/None/{"last":true}`)
	pr, pw := io.Pipe()
	go func() {
		sizes := []int{1, 3, 7, 13, 4099, 65537, 2, 100003}
		for i := 0; len(s) > 0; i++ {
			n := sizes[i%len(sizes)]
			if n > len(s) {
				n = len(s)
			}
			if _, err := pw.Write([]byte(s[:n])); err != nil {
				pw.CloseWithError(err)
				return
			}
			s = s[n:]
		}
		pw.Close()
	}()
	check(t, "pipe", decodeAll(t, mcpstdio.NewDecoder(pr)), want)
}

func TestDecoderReadError(t *testing.T) {
	boom := errors.New("boom")
	r := io.MultiReader(strings.NewReader("{\"id\":1}\n{\"id\":2}\n{\"partial\""), iotest.ErrReader(boom))
	d := mcpstdio.NewDecoder(r)
	defer d.Close()
	var got []mcpstdio.Message
	for d.More() {
		m, err := d.Decode()
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, m)
	}
	// The complete items, then the error (not the partial line); sticky.
	check(t, "items", show(got), []string{`Message/None/{"id":1}`, `Message/None/{"id":2}`})
	for i := 0; i < 2; i++ {
		if _, err := d.Decode(); err != boom {
			t.Fatalf("Decode = %v, want boom", err)
		}
	}
}

type zeroReader struct{}

func (zeroReader) Read([]byte) (int, error) { return 0, nil }

func TestDecoderNoProgress(t *testing.T) {
	d := mcpstdio.NewDecoder(io.MultiReader(strings.NewReader("1\n"), zeroReader{}))
	defer d.Close()
	if m, err := d.Decode(); err != nil || string(m.Data) != "1" {
		t.Fatalf("Decode = %v, %v", m, err)
	}
	if _, err := d.Decode(); err != io.ErrNoProgress {
		t.Fatalf("Decode = %v, want io.ErrNoProgress", err)
	}
}

func TestDecoderOptionsAndClose(t *testing.T) {
	d := mcpstdio.NewDecoder(strings.NewReader("1\n"), mcpstdio.MaxLineLen(0))
	if _, err := d.Decode(); !errors.Is(err, mcpstdio.ErrInvalidArgument) {
		t.Fatalf("Decode with MaxLineLen(0): %v", err)
	}
	if d.More() {
		t.Fatal("More with a bad option")
	}
	d.Close()

	d = mcpstdio.NewDecoder(strings.NewReader("1\n2\n3\n"), mcpstdio.MaxLineLen(1))
	if !d.More() {
		t.Fatal("More = false")
	}
	if !d.More() { // a second More keeps the peeked item
		t.Fatal("More = false")
	}
	if m, err := d.Decode(); err != nil || string(m.Data) != "1" {
		t.Fatalf("Decode = %v, %v", m, err)
	}
	for i := 0; i < 2; i++ {
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := d.Decode(); !errors.Is(err, mcpstdio.ErrClosed) {
		t.Fatalf("Decode after Close: %v", err)
	}
	if d.More() {
		t.Fatal("More after Close")
	}
}
