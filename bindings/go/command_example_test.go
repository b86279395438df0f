//go:build unix

package mcpstdio_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"os/exec"
	"time"

	mcpstdio "github.com/mcp-stdio/mcp-stdio/bindings/go"
)

// An MCP server as a child process: a request, a line of its stderr, and
// the shutdown.
func ExampleStartCommand() {
	// snippet-start command (README.md shows these lines)
	// A stand-in server: it answers the first request, logs a line, and
	// waits for the end of its stdin.
	cmd := exec.Command("sh", "-c", `read request; echo 'listing tools' >&2; `+
		`echo '{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}'; cat >/dev/null`)
	cmd.Env = mcpstdio.DefaultEnv() // PATH, HOME...: not the host's secrets
	logged := make(chan string, 100)
	server, err := mcpstdio.StartCommand(cmd, &mcpstdio.CommandConfig{
		ConnConfig: mcpstdio.ConnConfig{CloseGrace: time.Second},
		Stderr:     func(line []byte) { logged <- string(line) },
	})
	if err != nil {
		log.Fatal(err) // e.g. exec.ErrNotFound
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	res, err := server.Request(ctx, "tools/list", nil)
	fmt.Println(string(res), err)
	fmt.Println("stderr:", <-logged)

	// Closes its stdin; SIGTERM to its process group at 1 s if it is still
	// there, SIGKILL at 2 s; always reaped.
	server.Close()
	fmt.Println("exit code", server.ExitCode())
	// snippet-end command

	// Output:
	// {"tools":[]} <nil>
	// stderr: listing tools
	// exit code 0
}

// A server that dies at its start: the pending request fails at once, and
// says why.
func ExampleServerExitedError() {
	// snippet-start exit
	// A stand-in server that fails at its start, as a Python server
	// missing a module does.
	cmd := exec.Command("sh", "-c", `echo "ModuleNotFoundError: No module named 'foo'" >&2; exit 1`)
	server, err := mcpstdio.StartCommand(cmd, &mcpstdio.CommandConfig{
		// Reading its stderr (even into a callback that does nothing)
		// keeps its last lines for the error.
		Stderr: func(line []byte) {},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer server.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err = server.Request(ctx, "initialize", nil) // fails at once, not in 30 s
	fmt.Println(err)
	var exit *mcpstdio.ServerExitedError
	if errors.As(err, &exit) { // errors.Is(err, mcpstdio.ErrClosed) holds too
		fmt.Println("exit code", exit.Code, "before its first message:", exit.BeforeFirstMessage)
	}
	// snippet-end exit

	// Output:
	// mcpstdio: server exited with code 1 before its first message: ModuleNotFoundError: No module named 'foo'
	// exit code 1 before its first message: true
}

// snippet-start host (README.md shows these lines)
// callTool spawns server, does the initialize handshake, calls tool with
// args (a JSON object) and closes: the tool's result.
func callTool(server []string, tool, args string) (json.RawMessage, error) {
	cmd := exec.Command(server[0], server[1:]...) // looked up in PATH
	cmd.Env = mcpstdio.DefaultEnv()               // PATH, HOME...: not the host's secrets
	conn, err := mcpstdio.StartCommand(cmd, &mcpstdio.CommandConfig{
		Stderr: func(line []byte) { log.Printf("[server] %s", line) },
	})
	if err != nil {
		return nil, err // exec.ErrNotFound...
	}
	defer conn.Close() // closes its stdin; SIGTERM, SIGKILL if need be; always reaped
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err = conn.Request(ctx, "initialize", json.RawMessage(`{"protocolVersion":"2025-11-25",`+
		`"capabilities":{},"clientInfo":{"name":"readme","version":"1"}}`))
	if err != nil {
		return nil, err // "mcpstdio: server exited with code 1 ...: <its stderr>"
	}
	if err := conn.Notify(ctx, "notifications/initialized", nil); err != nil {
		return nil, err
	}
	call := map[string]any{"name": tool, "arguments": json.RawMessage(args)}
	return conn.Request(ctx, "tools/call", call)
}

// snippet-end host

// The README's shortest host, against a stand-in server that answers the
// initialize handshake, and a tools/call only after
// notifications/initialized.
func Example_callTool() {
	standIn := `init=0
	while read -r line; do
	  id=$(printf '%s' "$line" | sed -n 's/.*"id":\([0-9][0-9]*\).*/\1/p')
	  case "$line" in
	  *'"initialize"'*) echo '{"jsonrpc":"2.0","id":'$id',"result":{"protocolVersion":"2025-11-25",'\
	    '"capabilities":{"tools":{}},"serverInfo":{"name":"stand-in","version":"1"}}}' ;;
	  *'"notifications/initialized"'*) init=1 ;;
	  *'"tools/call"'*) [ $init = 1 ] && echo '{"jsonrpc":"2.0","id":'$id',"result":'\
	    '{"content":[{"type":"text","text":"called after the handshake"}]}}' ;;
	  esac
	done`
	result, err := callTool([]string{"sh", "-c", standIn}, "echo", `{"text":"hi"}`)
	fmt.Println(string(result), err)
	// Output:
	// {"content":[{"type":"text","text":"called after the handshake"}]} <nil>
}
