//go:build linux

package mcpstdio_test

import (
	"bufio"
	"fmt"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"

	mcpstdio "github.com/mcp-stdio/mcp-stdio/bindings/go"
)

func init() { otherModes["host"] = pdeathsigHost }

// pdeathsigHost starts a server with Pdeathsig SIGKILL, prints its pid
// and waits to be killed.
func pdeathsigHost() int {
	cmd := exec.Command("sleep", "30")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	c, err := mcpstdio.StartCommand(cmd, nil)
	if err != nil {
		fmt.Println(err)
		return 2
	}
	fmt.Println(c.Pid())
	for {
		time.Sleep(time.Hour)
	}
}

// The README's advice for MCP_TRANSPORT_KILL_ON_HOST_EXIT: with Pdeathsig,
// a host killed by SIGKILL (no Close, no shutdown) takes its server along.
func TestCommandPdeathsigKillsTheServerWithTheHost(t *testing.T) {
	host := serverCmd(t, "host")
	out, err := host.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := host.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		host.Process.Kill()
		host.Wait()
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(line[:len(line)-1])
	if err != nil {
		host.Process.Kill()
		host.Wait()
		t.Fatalf("host said %q", line)
	}
	if gone(pid) {
		t.Fatal("the server is not running")
	}
	host.Process.Signal(syscall.SIGKILL)
	host.Wait()
	if !goneWithin(pid, 5*time.Second) {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Errorf("server %d outlived its host", pid)
	}
}
