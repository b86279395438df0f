package mcpstdio_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	mcpstdio "github.com/mcp-stdio/mcp-stdio/bindings/go"
)

func TestEncodeSeedExample(t *testing.T) {
	got, err := mcpstdio.Encode([]byte(`{"a": "line1\nline2", "id": 1}`))
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"a":"line1\nline2","id":1}` + "\n"; string(got) != want {
		t.Fatalf("Encode = %q, want %q", got, want)
	}
}

func TestEncode(t *testing.T) {
	for in, want := range map[string]string{
		" \r\n\t[ 1 , 2.50 , \"a b\" , {} ] \n": `[1,2.50,"a b",{}]`,
		"\"\u2028\u2029\"":                      `"\u2028\u2029"`,
		`"\u00e9 é"`:                            `"\u00e9 é"`, // tokens kept byte for byte
		"true":                                  "true",
	} {
		got, err := mcpstdio.Encode([]byte(in))
		if err != nil || string(got) != want+"\n" {
			t.Errorf("Encode(%q) = %q, %v; want %q", in, got, err, want+"\n")
		}
	}
}

func TestEncodeASCII(t *testing.T) {
	got, err := mcpstdio.EncodeASCII([]byte("{\"caf\u00e9\": \"\U0001F600\x7f\"}"))
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"caf\u00e9":"\ud83d\ude00\u007f"}` + "\n"; string(got) != want {
		t.Fatalf("EncodeASCII = %q, want %q", got, want)
	}
}

func TestEncodeInvalid(t *testing.T) {
	for _, in := range []string{"", " \n", "not json", `{"a":1} {"b":2}`, `{"a":}`, "\"\xff\"", "NaN", "[1,]"} {
		for name, f := range map[string]func([]byte) ([]byte, error){"Encode": mcpstdio.Encode, "EncodeASCII": mcpstdio.EncodeASCII} {
			got, err := f([]byte(in))
			if got != nil || !errors.Is(err, mcpstdio.ErrInvalidJSON) {
				t.Fatalf("%s(%q) = %q, %v; want ErrInvalidJSON", name, in, got, err)
			}
			var se *mcpstdio.StatusError
			if !errors.As(err, &se) || se.Code != -3 || se.Msg == "" {
				t.Fatalf("%s(%q): error %#v", name, in, err)
			}
			if errors.Is(err, mcpstdio.ErrInvalidArgument) {
				t.Fatalf("%v matches ErrInvalidArgument", err)
			}
			if !strings.Contains(err.Error(), se.Msg) || !strings.Contains(err.Error(), "-3") {
				t.Fatalf("Error() = %q", err.Error())
			}
		}
	}
	if _, err := mcpstdio.Encode(nil); !errors.Is(err, mcpstdio.ErrInvalidJSON) {
		t.Fatalf("Encode(nil): %v", err)
	}
}

func TestEncodeValue(t *testing.T) {
	type params struct {
		Text string `json:"text"`
	}
	v := map[string]any{"jsonrpc": "2.0", "id": 7, "method": "m", "params": params{"a<b && c>d\u2028é\n"}}
	got, err := mcpstdio.EncodeValue(v)
	if err != nil {
		t.Fatal(err)
	}
	// <, > and & are kept; U+2028 is escaped; one "\n" at the end.
	want := `{"id":7,"jsonrpc":"2.0","method":"m","params":{"text":"a<b && c>d\u2028é\n"}}` + "\n"
	if string(got) != want {
		t.Fatalf("EncodeValue = %q, want %q", got, want)
	}
	var back map[string]any
	if err := json.Unmarshal(got, &back); err != nil || back["params"].(map[string]any)["text"] != "a<b && c>d\u2028é\n" {
		t.Fatalf("round trip: %v %v", back, err)
	}
	if _, err := mcpstdio.EncodeValue(make(chan int)); err == nil {
		t.Fatal("EncodeValue(chan) succeeded")
	}
	if _, err := mcpstdio.EncodeValue(json.RawMessage(`{"a":`)); err == nil {
		t.Fatal("EncodeValue(invalid RawMessage) succeeded")
	}
}

// countingWriter records each Write call.
type countingWriter struct {
	writes []string
	err    error
}

func (w *countingWriter) Write(p []byte) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	w.writes = append(w.writes, string(p))
	return len(p), nil
}

func TestEncoder(t *testing.T) {
	w := &countingWriter{}
	enc := mcpstdio.NewEncoder(w)
	if err := enc.Encode([]byte(`{ "a" : "é" }`)); err != nil {
		t.Fatal(err)
	}
	if err := enc.Encode([]byte(`{`)); !errors.Is(err, mcpstdio.ErrInvalidJSON) {
		t.Fatalf("Encode invalid: %v", err)
	}
	if err := enc.EncodeValue([]int{1, 2}); err != nil {
		t.Fatal(err)
	}
	enc.SetASCII(true)
	if err := enc.Encode([]byte(`"é"`)); err != nil {
		t.Fatal(err)
	}
	if err := enc.EncodeValue("\U0001F600"); err != nil {
		t.Fatal(err)
	}
	enc.SetASCII(false)
	if err := enc.EncodeValue("é"); err != nil {
		t.Fatal(err)
	}
	want := []string{"{\"a\":\"é\"}\n", "[1,2]\n", "\"\\u00e9\"\n", "\"\\ud83d\\ude00\"\n", "\"é\"\n"}
	check(t, "writes", w.writes, want)

	w.err = errors.New("disk full")
	if err := enc.Encode([]byte("1")); err != w.err {
		t.Fatalf("write error: %v", err)
	}
	if err := enc.EncodeValue(1); err != w.err {
		t.Fatalf("write error: %v", err)
	}
}

// Encoder output read back by a Decoder gives the same messages.
func TestEncoderDecoderRoundTrip(t *testing.T) {
	var b bytes.Buffer
	enc := mcpstdio.NewEncoder(&b)
	values := []any{map[string]any{"jsonrpc": "2.0", "method": "x"}, "multi\nline", []any{nil, 1.5, true}}
	for _, v := range values {
		if err := enc.EncodeValue(v); err != nil {
			t.Fatal(err)
		}
	}
	if strings.Count(b.String(), "\n") != len(values) {
		t.Fatalf("lines: %q", b.String())
	}
	got := decodeAll(t, mcpstdio.NewDecoder(&b))
	check(t, "round trip", got, []string{
		`Message/None/{"jsonrpc":"2.0","method":"x"}`, `Message/None/"multi\nline"`, `Message/None/[null,1.5,true]`,
	})
}
