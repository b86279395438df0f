//go:build unix

package mcpstdio_test

import (
	"context"
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
