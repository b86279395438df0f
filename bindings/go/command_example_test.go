//go:build unix

package mcpstdio_test

import (
	"context"
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
