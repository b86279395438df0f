//go:build unix

package mcpstdio_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	mcpstdio "github.com/mcp-stdio/mcp-stdio/bindings/go"
)

// pendingRequest sends a request with a 30 s timeout in a goroutine; the
// channel gets its error and how long it took.
type requestResult struct {
	res  string
	err  error
	took time.Duration
}

func pendingRequest(c *mcpstdio.CommandConn, method string) <-chan requestResult {
	ch := make(chan requestResult, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		t0 := time.Now()
		res, err := c.Request(ctx, method, nil)
		ch <- requestResult{string(res), err, time.Since(t0)}
	}()
	return ch
}

func awaitResult(t *testing.T, ch <-chan requestResult) requestResult {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(20 * time.Second):
		t.Fatal("the request did not return")
		return requestResult{}
	}
}

// exitError checks that err is a *ServerExitedError matching ErrClosed.
func exitError(t *testing.T, err error) *mcpstdio.ServerExitedError {
	t.Helper()
	if !errors.Is(err, mcpstdio.ErrClosed) {
		t.Errorf("%v does not match ErrClosed", err)
	}
	var exit *mcpstdio.ServerExitedError
	if !errors.As(err, &exit) {
		t.Fatalf("%v (%T) is not a *ServerExitedError", err, err)
	}
	return exit
}

// The server fails at its start: the pending Request fails at once (not
// at its 30 s deadline, not at CloseGrace) and says why.
func TestCommandExitBeforeFirstMessage(t *testing.T) {
	c := start(t, sh(`echo "ModuleNotFoundError: No module named foo" >&2; exit 3`), &mcpstdio.CommandConfig{
		ConnConfig: mcpstdio.ConnConfig{CloseGrace: 10 * time.Second},
		Stderr:     func([]byte) {},
	})
	r := awaitResult(t, pendingRequest(c, "initialize"))
	if r.took > 2*time.Second {
		t.Errorf("the request failed after %v", r.took)
	}
	exit := exitError(t, r.err)
	if exit.Code != 3 || exit.Signal != 0 || !exit.BeforeFirstMessage {
		t.Errorf("%+v", exit)
	}
	if !strings.Contains(string(exit.StderrTail), "ModuleNotFoundError: No module named foo") {
		t.Errorf("StderrTail %q", exit.StderrTail)
	}
	want := "mcpstdio: server exited with code 3 before its first message: ModuleNotFoundError: No module named foo"
	if got := r.err.Error(); got != want {
		t.Errorf("Error()\n got %q\nwant %q", got, want)
	}
	if got := string(c.StderrTail()); got != "ModuleNotFoundError: No module named foo" {
		t.Errorf("CommandConn.StderrTail %q", got)
	}
	<-c.Done()
	if err := c.Err(); err != exit {
		t.Errorf("Err() = %v, want the Request's error", err)
	}
	// Sends from now on fail with the same error.
	ctx := context.Background()
	if _, err := c.Request(ctx, "tools/list", nil); err != exit {
		t.Errorf("Request after the exit: %v", err)
	}
	if err := c.Notify(ctx, "notifications/initialized", nil); err != exit {
		t.Errorf("Notify after the exit: %v", err)
	}
	// Closing after the end changes nothing; the exit is the Wait's too.
	if err := c.Close(); err != nil {
		t.Error(err)
	}
	if c.Err() != exit || c.ExitCode() != 3 {
		t.Errorf("after Close: Err %v, exit %d", c.Err(), c.ExitCode())
	}
}

// Killed from outside while a request is pending.
func TestCommandKilledWhileARequestIsPending(t *testing.T) {
	log := newStderrLog()
	c := start(t, sh(`echo ready >&2; exec sleep 30`), &mcpstdio.CommandConfig{
		ConnConfig: mcpstdio.ConnConfig{CloseGrace: 10 * time.Second},
		Stderr:     log.add,
	})
	if got := log.next(t); got != "ready" {
		t.Fatalf("stderr %q", got)
	}
	pending := pendingRequest(c, "tools/list")
	time.Sleep(50 * time.Millisecond)
	if err := syscall.Kill(c.Pid(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	r := awaitResult(t, pending)
	if d := time.Since(t0); d > 2*time.Second {
		t.Errorf("the request failed %v after the kill", d)
	}
	exit := exitError(t, r.err)
	if exit.Signal != syscall.SIGKILL || exit.Code != -1 || !exit.BeforeFirstMessage {
		t.Errorf("%+v", exit)
	}
	if want := "mcpstdio: server killed by signal 9 before its first message: ready"; r.err.Error() != want {
		t.Errorf("Error()\n got %q\nwant %q", r.err.Error(), want)
	}
}

// A server that answers one request and exits at once: the answer is
// delivered, the other request fails with the exit (after a message).
func TestCommandAnswerThenExit(t *testing.T) {
	// It reads both requests, answers the first one and exits.
	c := start(t, sh(`read a; read b; id=$(echo "$a" | sed 's/.*"id":\([0-9]*\).*/\1/'); `+
		`echo "{\"jsonrpc\":\"2.0\",\"id\":$id,\"result\":{\"first\":true}}"; exit 2`), &mcpstdio.CommandConfig{
		ConnConfig: mcpstdio.ConnConfig{CloseGrace: 10 * time.Second},
		Stderr:     func([]byte) {},
	})
	a, b := pendingRequest(c, "a"), pendingRequest(c, "b")
	ra, rb := awaitResult(t, a), awaitResult(t, b)
	if rb.err == nil {
		ra, rb = rb, ra
	}
	if ra.err != nil || ra.res != `{"first":true}` {
		t.Fatalf("the answered request: %q, %v (the other: %v)", ra.res, ra.err, rb.err)
	}
	if rb.took > 2*time.Second {
		t.Errorf("the other request failed after %v", rb.took)
	}
	exit := exitError(t, rb.err)
	if exit.Code != 2 || exit.Signal != 0 || exit.BeforeFirstMessage || len(exit.StderrTail) != 0 {
		t.Errorf("%+v", exit)
	}
	if want := "mcpstdio: server exited with code 2"; rb.err.Error() != want {
		t.Errorf("Error() %q, want %q", rb.err.Error(), want)
	}
}

// The same with the test server: an answer, then a request that makes it
// exit while another one hangs.
func TestCommandAnswerThenExitWhileAnotherHangs(t *testing.T) {
	log := newStderrLog()
	c := start(t, serverCmd(t, "serve"), &mcpstdio.CommandConfig{
		ConnConfig: mcpstdio.ConnConfig{CloseGrace: 10 * time.Second},
		Stderr:     log.add,
	})
	log.next(t) // ready
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if res, err := c.Request(ctx, "echo", map[string]int{"x": 1}); err != nil || string(res) != `{"x":1}` {
		t.Fatalf("echo: %s, %v", res, err)
	}
	hang := pendingRequest(c, "hang")
	if got := log.next(t); got != "hanging" {
		t.Fatalf("stderr %q", got)
	}
	_, err := c.Request(ctx, "exit", map[string]int{"code": 4})
	exit := exitError(t, err)
	if exit.Code != 4 || exit.BeforeFirstMessage {
		t.Errorf("%+v", exit)
	}
	if want := "mcpstdio: server exited with code 4: hanging"; err.Error() != want {
		t.Errorf("Error() %q, want %q", err.Error(), want)
	}
	if r := awaitResult(t, hang); r.err != err || r.took > 5*time.Second {
		t.Errorf("the hanging request: %v after %v", r.err, r.took)
	}
}

// Without CommandConfig.Stderr the tail is empty, and the error quotes
// nothing.
func TestCommandExitWithoutStderrCallback(t *testing.T) {
	c := start(t, sh(`echo oops >&2; exit 1`), nil)
	r := awaitResult(t, pendingRequest(c, "initialize"))
	exit := exitError(t, r.err)
	if want := "mcpstdio: server exited with code 1 before its first message"; r.err.Error() != want {
		t.Errorf("Error() %q, want %q", r.err.Error(), want)
	}
	if exit.StderrTail != nil || c.StderrTail() != nil {
		t.Errorf("tails %q, %q", exit.StderrTail, c.StderrTail())
	}
}

// The tail keeps the last 20 lines, 4 KiB at most, a long line its end.
func TestCommandStderrTail(t *testing.T) {
	tail := func(script string) string {
		t.Helper()
		c := start(t, sh(script), &mcpstdio.CommandConfig{Stderr: func([]byte) {}})
		c.Wait()
		return string(c.StderrTail())
	}
	var want []string
	for i := 980; i < 1000; i++ {
		want = append(want, fmt.Sprint("line ", i))
	}
	if got := tail(`i=0; while [ $i -lt 1000 ]; do echo "line $i"; i=$((i+1)); done >&2`); got != strings.Join(want, "\n") {
		t.Errorf("1000 short lines: tail %q", got)
	}
	// Lines of 300 bytes: 13 fit in 4096 bytes with their 12 newlines.
	got := tail(`pad=$(head -c 290 /dev/zero | tr '\0' p); i=0; ` +
		`while [ $i -lt 1000 ]; do printf '%s%09d\n' "$pad" $i; i=$((i+1)); done >&2`)
	lines := strings.Split(got, "\n")
	if len(got) > 4096 || len(lines) != 13 || lines[0] != strings.Repeat("p", 290)+"000000987" ||
		lines[12] != strings.Repeat("p", 290)+"000000999" {
		t.Errorf("1000 lines of 300 bytes: %d bytes, %d lines, from %.20q... to ...%q", len(got), len(lines), lines[0], lines[len(lines)-1][280:])
	}
	// One line of 10000 bytes, after others: its last 4096 bytes, alone.
	got = tail(`echo before >&2; head -c 9990 /dev/zero | tr '\0' z >&2; printf 'the end\r\n' >&2`)
	if want := strings.Repeat("z", 4096-len("the end\r")) + "the end\r"; got != want {
		t.Errorf("a long line: %d bytes, ...%q", len(got), got[len(got)-20:])
	}
	// CRLF lines: the \r stays in the tail (as delivered), not in the error.
	c := start(t, sh(`printf 'Error: bad config\r\n' >&2; exit 1`), &mcpstdio.CommandConfig{Stderr: func([]byte) {}})
	r := awaitResult(t, pendingRequest(c, "initialize"))
	if want := "mcpstdio: server exited with code 1 before its first message: Error: bad config"; r.err == nil || r.err.Error() != want {
		t.Errorf("CRLF: %v", r.err)
	}
	if got := string(c.StderrTail()); got != "Error: bad config\r" {
		t.Errorf("CRLF tail %q", got)
	}
}

// The tail is what was read, not what was delivered: lines dropped for a
// slow callback are in it, and it is there before they are delivered.
func TestCommandStderrTailIncludesUndeliveredLines(t *testing.T) {
	release := make(chan struct{})
	var once sync.Once
	defer once.Do(func() { close(release) })
	c := start(t, sh(`pad=$(head -c 1990 /dev/zero | tr '\0' q); i=0; `+
		`while [ $i -lt 1000 ]; do printf '%s%09d\n' "$pad" $i; i=$((i+1)); done >&2`),
		&mcpstdio.CommandConfig{Stderr: func([]byte) { <-release }})
	pad := strings.Repeat("q", 1990)
	want := pad + "000000998\n" + pad + "000000999" // 2 lines of 1999 bytes fit in 4 KiB
	end := time.Now().Add(20 * time.Second)
	for string(c.StderrTail()) != want {
		if time.Now().After(end) {
			t.Fatalf("tail %d bytes, ...%q", len(c.StderrTail()), c.StderrTail())
		}
		time.Sleep(10 * time.Millisecond)
	}
	// The callback still holds the first line; over 1 MiB waited.
	if c.StderrDropped() == 0 {
		t.Error("nothing dropped")
	}
	once.Do(func() { close(release) })
	if err := c.Wait(); err != nil {
		t.Fatal(err)
	}
	if got := string(c.StderrTail()); got != want {
		t.Errorf("after the exit: ...%q", got[len(got)-20:])
	}
}

// A server that closes its stdout and keeps running: the pending request
// fails at once with ErrStdoutClosed.
func TestCommandServerClosesItsStdout(t *testing.T) {
	log := newStderrLog()
	c := start(t, sh(`read line; exec 1>&-; echo "closed stdout" >&2; exec sleep 5`), &mcpstdio.CommandConfig{
		ConnConfig: mcpstdio.ConnConfig{CloseGrace: 3 * time.Second},
		Stderr:     log.add,
	})
	r := awaitResult(t, pendingRequest(c, "initialize"))
	if r.took > 2*time.Second {
		t.Errorf("the request failed after %v", r.took)
	}
	if r.err != mcpstdio.ErrStdoutClosed || !errors.Is(r.err, mcpstdio.ErrClosed) {
		t.Fatalf("%v, want ErrStdoutClosed", r.err)
	}
	var exit *mcpstdio.ServerExitedError
	if errors.As(r.err, &exit) {
		t.Errorf("a *ServerExitedError: %v", exit)
	}
	if r.err.Error() != "mcpstdio: server closed its stdout" {
		t.Errorf("Error() %q", r.err.Error())
	}
	if c.ProcessState() != nil {
		t.Error("the server exited already")
	}
	<-c.Done()
	if c.Err() != mcpstdio.ErrStdoutClosed {
		t.Errorf("Err() %v", c.Err())
	}
	if err := c.Notify(context.Background(), "late", nil); err != mcpstdio.ErrStdoutClosed {
		t.Errorf("Notify: %v", err)
	}
	if got := log.next(t); got != "closed stdout" {
		t.Errorf("stderr %q", got)
	}
}

// A server that exits while a process it started holds its stdout: the
// pending request fails soon after the exit, not at CloseGrace.
func TestCommandExitWhileAChildHoldsStdout(t *testing.T) {
	grace := 3 * time.Second
	c := start(t, sh(`sleep 30 & read line; echo dying >&2; exit 6`), &mcpstdio.CommandConfig{
		ConnConfig: mcpstdio.ConnConfig{CloseGrace: grace},
		Stderr:     func([]byte) {},
	})
	r := awaitResult(t, pendingRequest(c, "initialize"))
	if r.took > 2*time.Second {
		t.Errorf("the request failed after %v (grace %v)", r.took, grace)
	}
	exit := exitError(t, r.err)
	if want := "mcpstdio: server exited with code 6 before its first message: dying"; r.err.Error() != want {
		t.Errorf("Error() %q, want %q", r.err.Error(), want)
	}
	if exit.Code != 6 {
		t.Errorf("%+v", exit)
	}
	// The shutdown began at the exit: SIGTERM at the grace ends the child,
	// and its end is seen as the end of stdout (which the Conn, ended
	// early, still reads), not only once init reaps it.
	t0 := time.Now()
	c.Wait()
	if d := time.Since(t0) + r.took; d > grace+900*time.Millisecond {
		t.Errorf("the shutdown took %v after the exit (grace %v)", d, grace)
	}
	if c.TermSignal() != 0 || c.ExitCode() != 6 {
		t.Errorf("signal %v, exit %d", c.TermSignal(), c.ExitCode())
	}
}

// After the host's own Close, pending requests fail with plain ErrClosed,
// not with the exit that the Close brought.
func TestCommandHostCloseIsNoServerExit(t *testing.T) {
	for _, how := range []string{"CommandConn.Close", "Conn.Close"} {
		t.Run(how, func(t *testing.T) {
			log := newStderrLog()
			c := start(t, sh(`read line; echo got >&2; cat >/dev/null; echo bye >&2; exit 3`), &mcpstdio.CommandConfig{
				Stderr: log.add,
			})
			pending := pendingRequest(c, "initialize")
			if got := log.next(t); got != "got" {
				t.Fatalf("stderr %q", got)
			}
			if how == "Conn.Close" {
				c.Conn.Close()
			}
			c.Close()
			r := awaitResult(t, pending)
			if r.err != mcpstdio.ErrClosed {
				t.Errorf("pending: %v (%T), want ErrClosed", r.err, r.err)
			}
			if c.ExitCode() != 3 {
				t.Errorf("exit %d", c.ExitCode())
			}
			if c.Err() != mcpstdio.ErrClosed {
				t.Errorf("Err() %v", c.Err())
			}
			if _, err := c.Request(context.Background(), "x", nil); err != mcpstdio.ErrClosed {
				t.Errorf("Request after Close: %v", err)
			}
			if got := string(c.StderrTail()); got != "got\nbye" {
				t.Errorf("tail %q", got)
			}
		})
	}
}

// The end of stderr is waited for a moment after the exit: the tail has
// what was written last (here by a child, 200 ms after the exit).
func TestCommandExitWaitsForTheLastStderrLines(t *testing.T) {
	c := start(t, sh(`read line; (exec 1>&-; sleep 0.2; echo "last words" >&2) & exit 1`), &mcpstdio.CommandConfig{
		Stderr: func([]byte) {},
	})
	r := awaitResult(t, pendingRequest(c, "initialize"))
	exitError(t, r.err)
	if want := "mcpstdio: server exited with code 1 before its first message: last words"; r.err.Error() != want {
		t.Errorf("Error() %q, want %q", r.err.Error(), want)
	}
}

// A write to the server fails (it closed its stdin) and it exits a moment
// later: the request fails with the exit, not with plain ErrClosed.
func TestCommandWriteFailsThenTheServerExits(t *testing.T) {
	log := newStderrLog()
	c := start(t, sh(`exec 0<&-; echo "closed stdin" >&2; sleep 0.3; echo "exiting" >&2; exit 5`), &mcpstdio.CommandConfig{
		Stderr: log.add,
	})
	if got := log.next(t); got != "closed stdin" {
		t.Fatalf("stderr %q", got)
	}
	r := awaitResult(t, pendingRequest(c, "initialize"))
	exit := exitError(t, r.err)
	if exit.Code != 5 || !exit.BeforeFirstMessage {
		t.Errorf("%+v", exit)
	}
	if want := "mcpstdio: server exited with code 5 before its first message: exiting"; r.err.Error() != want {
		t.Errorf("Error() %q, want %q", r.err.Error(), want)
	}
	if r.took > 2*time.Second {
		t.Errorf("the request failed after %v", r.took)
	}
}
