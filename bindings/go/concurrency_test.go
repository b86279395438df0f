package mcpstdio_test

import (
	"fmt"
	"math/rand"
	"strings"
	"sync"
	"testing"

	mcpstdio "github.com/mcp-stdio/mcp-stdio/bindings/go"
)

// Many goroutines, each with its own reader, plus concurrent Encode calls
// (run it with -race).
func TestConcurrentReadersAndEncode(t *testing.T) {
	const readers, encoders, rounds = 16, 8, 30
	var wg sync.WaitGroup
	errs := make(chan error, readers+encoders)
	for g := 0; g < readers; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			rng := rand.New(rand.NewSource(int64(g)))
			var in strings.Builder
			for i := 0; i < 200; i++ {
				if i%10 == 9 {
					fmt.Fprintf(&in, "junk %d-%d\r\n", g, i)
					continue
				}
				fmt.Fprintf(&in, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"g%d\",\"params\":{\"s\":\"\U0001F600%s\"}}\n", i, g, strings.Repeat("x", rng.Intn(300)))
			}
			s := in.String()
			for round := 0; round < rounds; round++ {
				r, err := mcpstdio.NewLineReader(mcpstdio.JSONRPC())
				if err != nil {
					errs <- err
					return
				}
				var got []mcpstdio.Message
				for rest := s; len(rest) > 0; {
					n := 1 + rng.Intn(64)
					if n > len(rest) {
						n = len(rest)
					}
					ms, err := r.Feed([]byte(rest[:n]))
					if err != nil {
						errs <- err
						return
					}
					got = append(got, ms...)
					rest = rest[n:]
				}
				r.Close()
				if len(got) != 200 {
					errs <- fmt.Errorf("reader %d: %d items", g, len(got))
					return
				}
				for i, m := range got {
					var ok bool
					if i%10 == 9 {
						ok = m.Kind == mcpstdio.KindParseError && string(m.Data) == fmt.Sprintf("junk %d-%d", g, i)
					} else {
						ok = m.Kind == mcpstdio.KindMessage && m.RPCKind == mcpstdio.RPCRequest &&
							strings.HasPrefix(string(m.Data), fmt.Sprintf("{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"g%d\"", i, g))
					}
					if !ok {
						errs <- fmt.Errorf("reader %d item %d: %v %v %q", g, i, m.Kind, m.RPCKind, m.Data)
						return
					}
				}
			}
		}(g)
	}
	for g := 0; g < encoders; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 500; i++ {
				in := fmt.Sprintf("{ \"g\" : %d , \"i\" : %d , \"s\" : \"\u00e9\" }", g, i)
				got, err := mcpstdio.Encode([]byte(in))
				if want := fmt.Sprintf("{\"g\":%d,\"i\":%d,\"s\":\"\u00e9\"}\n", g, i); err != nil || string(got) != want {
					errs <- fmt.Errorf("Encode(%q) = %q, %v", in, got, err)
					return
				}
				got, err = mcpstdio.EncodeASCII([]byte(in))
				if want := fmt.Sprintf("{\"g\":%d,\"i\":%d,\"s\":\"\\u00e9\"}\n", g, i); err != nil || string(got) != want {
					errs <- fmt.Errorf("EncodeASCII(%q) = %q, %v", in, got, err)
					return
				}
				if _, err := mcpstdio.Encode([]byte("{")); err == nil {
					errs <- fmt.Errorf("Encode of invalid JSON succeeded")
					return
				}
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
