// A Go consumer of an installed mcp-stdio, built by tests/packaging/run.sh
// with the binding's build tags mcpstdio_pkgconfig_static (static library
// through mcp_stdio_static.pc) and mcpstdio_pkgconfig (shared library through
// mcp_stdio.pc, with a RUNPATH). Prints "consumer: mcp_stdio <version> OK"
// and exits 0 when the library frames a line and encodes a message as
// documented, like ../consumer.c.
package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	mcpstdio "github.com/mcp-stdio/mcp-stdio/bindings/go"
)

func main() {
	failures := 0
	check := func(ok bool, what string, args ...any) {
		if !ok {
			fmt.Fprintf(os.Stderr, "check failed: "+what+"\n", args...)
			failures++
		}
	}

	// The header and the library agree.
	check(mcpstdio.ABIVersion() == mcpstdio.HeaderABIVersion,
		"ABIVersion %d, header %d", mcpstdio.ABIVersion(), mcpstdio.HeaderABIVersion)

	// Reader: a CRLF request, then a line that is not JSON.
	dec := mcpstdio.NewDecoder(strings.NewReader(
		"{\"jsonrpc\":\"2.0\",\"method\":\"ping\",\"id\":1}\r\nnot json\n"), mcpstdio.JSONRPC())
	var got []string
	for {
		msg, err := dec.Decode()
		if err == io.EOF {
			break
		}
		if err != nil {
			check(false, "Decode: %v", err)
			break
		}
		got = append(got, fmt.Sprintf("%v %v %s", msg.Kind, msg.RPCKind, msg.Data))
	}
	want := []string{
		"Message Request {\"jsonrpc\":\"2.0\",\"method\":\"ping\",\"id\":1}",
		"ParseError None not json",
	}
	check(fmt.Sprint(got) == fmt.Sprint(want), "decoded %q, want %q", got, want)

	// Encoder: compact, exactly one newline.
	line, err := mcpstdio.Encode([]byte("{ \"jsonrpc\": \"2.0\", \"id\": 1, \"result\": {} }"))
	check(err == nil && string(line) == "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n",
		"Encode: %q, %v", line, err)

	if failures > 0 {
		os.Exit(1)
	}
	fmt.Printf("consumer: mcp_stdio %s OK\n", mcpstdio.Version())
}
