//go:build unix

package mcpstdio_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	mcpstdio "github.com/mcp-stdio/mcp-stdio/bindings/go"
)

// The test binary is also the MCP server of these tests: started with
// MCPSTDIO_TEST_SERVER=<mode> in its environment, it serves on its stdin
// and stdout with a Conn instead of running the tests.
func TestMain(m *testing.M) {
	if mode := os.Getenv("MCPSTDIO_TEST_SERVER"); mode != "" {
		os.Exit(testServer(mode))
	}
	os.Exit(m.Run())
}

// testServer serves until the client ends our stdin. Methods: "echo"
// answers its params; "log" writes params.text to stderr and answers {};
// "exit" exits with params.code without answering; "hang" says "hanging"
// on stderr and answers only when the connection ends; "call" asks the client
// "sampling/createMessage" with its params and answers what the client
// answered. Mode "ignore-term" ignores SIGTERM and, after the end of its
// stdin, never exits.
func testServer(mode string) int {
	if run := otherModes[mode]; run != nil {
		return run()
	}
	if mode == "ignore-term" {
		signal.Ignore(syscall.SIGTERM)
	}
	conn, err := mcpstdio.NewConn(os.Stdin, os.Stdout, &mcpstdio.ConnConfig{
		Handler: func(ctx context.Context, req *mcpstdio.Request) {
			var p struct {
				Text string
				Code int
			}
			json.Unmarshal(req.Params, &p)
			switch req.Method {
			case "echo":
				req.Respond(req.Params)
			case "log":
				fmt.Fprintln(os.Stderr, p.Text)
				req.Respond(struct{}{})
			case "exit":
				os.Exit(p.Code)
			case "hang":
				fmt.Fprintln(os.Stderr, "hanging")
				<-ctx.Done()
			case "call":
				res, err := req.Conn().Request(ctx, "sampling/createMessage", req.Params)
				if err != nil {
					req.RespondError(mcpstdio.CodeInternalError, err.Error())
					return
				}
				req.Respond(res)
			default:
				req.RespondError(mcpstdio.CodeMethodNotFound, req.Method)
			}
		},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	fmt.Fprintln(os.Stderr, "ready")
	<-conn.Done()
	conn.Close()
	if mode == "ignore-term" {
		for {
			time.Sleep(time.Hour)
		}
	}
	return 0
}

// otherModes are the test binary's modes other than a server (set by the
// platforms' test files).
var otherModes = map[string]func() int{}

// serverCmd is the test binary as a server in mode.
func serverCmd(t *testing.T, mode string) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), "MCPSTDIO_TEST_SERVER="+mode)
	return cmd
}

// stderrLog collects the stderr lines of a server.
type stderrLog struct {
	mu     sync.Mutex
	lines  []string
	ch     chan string // every line, as it comes (buffered)
	inside atomic.Int32
	overlp atomic.Bool // two calls overlapped
}

func newStderrLog() *stderrLog { return &stderrLog{ch: make(chan string, 1000)} }

func (l *stderrLog) add(line []byte) {
	if l.inside.Add(1) != 1 {
		l.overlp.Store(true)
	}
	defer l.inside.Add(-1)
	l.mu.Lock()
	l.lines = append(l.lines, string(line))
	l.mu.Unlock()
	select {
	case l.ch <- string(line):
	default:
	}
}

func (l *stderrLog) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.lines...)
}

// next waits for the next stderr line.
func (l *stderrLog) next(t *testing.T) string {
	t.Helper()
	select {
	case s := <-l.ch:
		return s
	case <-time.After(20 * time.Second):
		t.Fatal("no stderr line")
		return ""
	}
}

func start(t *testing.T, cmd *exec.Cmd, cfg *mcpstdio.CommandConfig) *mcpstdio.CommandConn {
	t.Helper()
	c, err := mcpstdio.StartCommand(cmd, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func sh(script string) *exec.Cmd { return exec.Command("sh", "-c", script) }

// reaped reports whether pid is no child of ours any more.
func reaped(pid int) bool {
	var ws syscall.WaitStatus
	_, err := syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
	return err == syscall.ECHILD
}

// gone reports whether pid no longer runs: no such process, or a zombie
// that init has not reaped yet (an orphan is not ours to reap).
func gone(pid int) bool {
	if syscall.Kill(pid, 0) == syscall.ESRCH {
		return true
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return syscall.Kill(pid, 0) != nil
	}
	i := bytes.LastIndexByte(stat, ')')
	return i >= 0 && i+2 < len(stat) && stat[i+2] == 'Z'
}

func goneWithin(pid int, d time.Duration) bool {
	end := time.Now().Add(d)
	for !gone(pid) {
		if time.Now().After(end) {
			return false
		}
		time.Sleep(5 * time.Millisecond)
	}
	return true
}

func TestCommandRequestResponse(t *testing.T) {
	log := newStderrLog()
	var sampled atomic.Int32
	c := start(t, serverCmd(t, "serve"), &mcpstdio.CommandConfig{
		ConnConfig: mcpstdio.ConnConfig{
			// The server's requests to us.
			Handler: func(ctx context.Context, req *mcpstdio.Request) {
				if req.Method == "sampling/createMessage" {
					sampled.Add(1)
					req.Respond(map[string]string{"from": "client"})
				}
			},
		},
		Stderr: log.add,
	})
	if c.Pid() <= 0 {
		t.Fatalf("Pid() = %d", c.Pid())
	}
	if pgid, _ := syscall.Getpgid(c.Pid()); pgid != c.Pid() {
		t.Errorf("process group %d, want its own (%d)", pgid, c.Pid())
	}
	if got := log.next(t); got != "ready" {
		t.Fatalf("stderr %q", got)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := c.Request(ctx, "echo", map[string]int{"x": 1})
	if err != nil || string(res) != `{"x":1}` {
		t.Fatalf("echo: %s, %v", res, err)
	}
	res, err = c.Request(ctx, "call", map[string]int{"y": 2})
	if err != nil || string(res) != `{"from":"client"}` || sampled.Load() != 1 {
		t.Fatalf("call: %s, %v (sampled %d)", res, err, sampled.Load())
	}
	if _, err := c.Request(ctx, "log", map[string]string{"text": "hello from the server"}); err != nil {
		t.Fatal(err)
	}
	if got := log.next(t); got != "hello from the server" {
		t.Fatalf("stderr %q", got)
	}
	if c.ProcessState() != nil || c.ExitCode() != -1 {
		t.Fatal("exited already")
	}

	// Closing ends its stdin: the server ends, long before the grace.
	t0 := time.Now()
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(t0); d > time.Second {
		t.Errorf("Close took %v", d)
	}
	if c.ExitCode() != 0 || c.TermSignal() != 0 || c.Wait() != nil {
		t.Errorf("exit %d, signal %v, Wait %v", c.ExitCode(), c.TermSignal(), c.Wait())
	}
	if !reaped(c.Pid()) {
		t.Error("not reaped")
	}
	if _, err := c.Request(ctx, "echo", nil); !errors.Is(err, mcpstdio.ErrClosed) {
		t.Errorf("Request after Close: %v", err)
	}
	if log.overlp.Load() {
		t.Error("Stderr calls overlapped")
	}
}

func TestCommandStderrLines(t *testing.T) {
	log := newStderrLog()
	c := start(t, sh(`echo one >&2; echo 'two words' >&2; head -c 70000 /dev/zero | tr '\0' x >&2; `+
		`echo >&2; head -c 65536 /dev/zero | tr '\0' y >&2; echo >&2; printf 'last without newline' >&2`),
		&mcpstdio.CommandConfig{Stderr: log.add})
	if err := c.Wait(); err != nil {
		t.Fatal(err)
	}
	want := []string{"one", "two words", strings.Repeat("x", 65536), strings.Repeat("x", 70000-65536),
		strings.Repeat("y", 65536), "last without newline"}
	got := log.all()
	if len(got) != len(want) {
		t.Fatalf("%d lines, want %d: %.40q", len(got), len(want), got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("line %d: %.40q (%d bytes), want %.40q (%d bytes)", i, got[i], len(got[i]), want[i], len(want[i]))
		}
	}
	if c.StderrDropped() != 0 {
		t.Errorf("dropped %d", c.StderrDropped())
	}
}

// A slow callback never blocks the server: beyond 1 MiB waiting, the
// oldest lines are dropped and counted.
func TestCommandStderrBacklogDropsTheOldest(t *testing.T) {
	var delivered, calls atomic.Int64
	c := start(t, sh(`line=$(head -c 999 /dev/zero | tr '\0' y); `+
		`i=0; while [ $i -lt 3000 ]; do echo "$line"; i=$((i+1)); done >&2`),
		&mcpstdio.CommandConfig{Stderr: func(line []byte) {
			if len(line) != 999 {
				t.Errorf("a line of %d bytes", len(line))
			}
			delivered.Add(int64(len(line)) + 1)
			if calls.Add(1) < 50 {
				time.Sleep(5 * time.Millisecond)
			}
		}})
	if err := c.Wait(); err != nil { // the server was never blocked on stderr
		t.Fatal(err)
	}
	dropped := c.StderrDropped()
	if dropped == 0 || dropped%1000 != 0 {
		t.Errorf("dropped %d bytes", dropped)
	}
	if got := uint64(delivered.Load()) + dropped; got != 3000*1000 {
		t.Errorf("delivered %d + dropped %d = %d, want 3000000", delivered.Load(), dropped, got)
	}
}

func TestCommandServerExitingByItself(t *testing.T) {
	log := newStderrLog()
	c := start(t, serverCmd(t, "serve"), &mcpstdio.CommandConfig{Stderr: log.add})
	log.next(t) // ready
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	// Requests pending when the server exits fail with ErrClosed.
	pending := make(chan error, 1)
	go func() {
		_, err := c.Request(ctx, "hang", nil)
		pending <- err
	}()
	if got := log.next(t); got != "hanging" {
		t.Fatalf("stderr %q", got)
	}
	_, err := c.Request(ctx, "exit", map[string]int{"code": 3})
	if !errors.Is(err, mcpstdio.ErrClosed) {
		t.Fatalf("exit: %v", err)
	}
	select {
	case <-c.Exited():
	case <-time.After(20 * time.Second):
		t.Fatal("not exited")
	}
	if err := c.Wait(); err == nil {
		t.Fatal("Wait: nil")
	} else {
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 3 {
			t.Fatalf("Wait: %v", err)
		}
	}
	if c.ExitCode() != 3 || c.TermSignal() != 0 {
		t.Errorf("exit %d, signal %v", c.ExitCode(), c.TermSignal())
	}
	select {
	case <-c.Done():
	default:
		t.Error("the Conn did not end")
	}
	if err := <-pending; !errors.Is(err, mcpstdio.ErrClosed) {
		t.Errorf("pending: %v", err)
	}
	if err := c.Notify(ctx, "late", nil); !errors.Is(err, mcpstdio.ErrClosed) {
		t.Errorf("Notify after the exit: %v", err)
	}
	// Close after the end: at once, and again.
	t0 := time.Now()
	if err := c.Close(); err != nil {
		t.Error(err)
	}
	if err := c.Close(); err != nil {
		t.Error(err)
	}
	if d := time.Since(t0); d > 100*time.Millisecond {
		t.Errorf("Close after the end took %v", d)
	}
	if !reaped(c.Pid()) {
		t.Error("not reaped")
	}
}

func TestCommandSIGTERMAtTheGrace(t *testing.T) {
	log := newStderrLog()
	grace := 200 * time.Millisecond
	c := start(t, sh("echo ready >&2; exec sleep 30"), &mcpstdio.CommandConfig{
		ConnConfig: mcpstdio.ConnConfig{CloseGrace: grace},
		Stderr:     log.add,
	})
	log.next(t)
	t0 := time.Now()
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	d := time.Since(t0)
	if c.TermSignal() != syscall.SIGTERM || c.ExitCode() != -1 {
		t.Errorf("signal %v, exit %d", c.TermSignal(), c.ExitCode())
	}
	if d < grace || d > 2*grace+5*time.Second {
		t.Errorf("Close took %v (grace %v)", d, grace)
	}
}

func TestCommandSIGKILLAtTwiceTheGrace(t *testing.T) {
	log := newStderrLog()
	grace := 200 * time.Millisecond
	c := start(t, serverCmd(t, "ignore-term"), &mcpstdio.CommandConfig{
		ConnConfig: mcpstdio.ConnConfig{CloseGrace: grace},
		Stderr:     log.add,
	})
	if got := log.next(t); got != "ready" {
		t.Fatalf("stderr %q", got)
	}
	t0 := time.Now()
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	d := time.Since(t0)
	if c.TermSignal() != syscall.SIGKILL || c.ExitCode() != -1 {
		t.Errorf("signal %v, exit %d", c.TermSignal(), c.ExitCode())
	}
	if d < 2*grace || d > 2*grace+5*time.Second {
		t.Errorf("Close took %v, want 2 x %v", d, grace)
	}
	var ee *exec.ExitError
	if err := c.Wait(); !errors.As(err, &ee) {
		t.Errorf("Wait: %v", err)
	}
	if c.ProcessState() == nil || !reaped(c.Pid()) {
		t.Error("not reaped")
	}
}

// The server dies at SIGTERM, but its child ignores SIGTERM and keeps its
// stdout and stderr: the group's SIGKILL ends it.
func TestCommandGrandchildKilledWithTheGroup(t *testing.T) {
	log := newStderrLog()
	grace := 200 * time.Millisecond
	c := start(t, sh(`(trap '' TERM; exec sleep 30) & echo $! >&2; exec sleep 30`), &mcpstdio.CommandConfig{
		ConnConfig: mcpstdio.ConnConfig{CloseGrace: grace},
		Stderr:     log.add,
	})
	gpid, err := strconv.Atoi(log.next(t))
	if err != nil {
		t.Fatal(err)
	}
	if pgid, _ := syscall.Getpgid(gpid); pgid != c.Pid() {
		t.Errorf("grandchild in group %d, want %d", pgid, c.Pid())
	}
	t0 := time.Now()
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	d := time.Since(t0)
	if c.TermSignal() != syscall.SIGTERM {
		t.Errorf("server: signal %v", c.TermSignal())
	}
	if d < 2*grace || d > 2*grace+5*time.Second {
		t.Errorf("Close took %v, want 2 x %v", d, grace)
	}
	if !goneWithin(gpid, 5*time.Second) {
		t.Errorf("grandchild %d still runs", gpid)
	}
}

// A server that exits by itself but leaves a child holding its pipes: the
// shutdown runs for that child too, without Close.
func TestCommandExitLeavingAChildBehind(t *testing.T) {
	grace := 200 * time.Millisecond
	log := newStderrLog()
	t0 := time.Now()
	c := start(t, sh(`sleep 30 & echo $! >&2; exit 5`), &mcpstdio.CommandConfig{
		ConnConfig: mcpstdio.ConnConfig{CloseGrace: grace},
		Stderr:     log.add,
	})
	child, err := strconv.Atoi(log.next(t))
	if err != nil {
		t.Fatal(err)
	}
	var ee *exec.ExitError
	if err := c.Wait(); !errors.As(err, &ee) || ee.ExitCode() != 5 {
		t.Fatalf("Wait: %v", err)
	}
	// The child ends at SIGTERM, sent at the grace after the exit.
	if d := time.Since(t0); d < grace || d > 2*grace+5*time.Second {
		t.Errorf("Wait took %v (grace %v)", d, grace)
	}
	if !goneWithin(child, 5*time.Second) {
		t.Errorf("child %d still runs", child)
	}
	if !reaped(c.Pid()) {
		t.Error("not reaped")
	}
}

func TestCommandCloseIsIdempotentAndConcurrent(t *testing.T) {
	c := start(t, exec.Command("cat"), nil)
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			errs[i] = c.Close()
		}(i)
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("Close %d: %v", i, err)
		}
	}
	if c.ExitCode() != 0 || !reaped(c.Pid()) {
		t.Errorf("exit %d", c.ExitCode())
	}
}

// Closing the embedded Conn (as a handler could, through Request.Conn)
// also shuts the server down and reaps it.
func TestCommandConnCloseShutsTheServerDown(t *testing.T) {
	c := start(t, exec.Command("cat"), nil)
	if err := c.Conn.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-c.Exited():
	case <-time.After(20 * time.Second):
		t.Fatal("not exited")
	}
	if err := c.Wait(); err != nil {
		t.Fatal(err)
	}
	if !reaped(c.Pid()) {
		t.Error("not reaped")
	}
}

func TestCommandStartErrors(t *testing.T) {
	if _, err := mcpstdio.StartCommand(exec.Command("mcp-stdio-no-such-program-xyz"), nil); !errors.Is(err, exec.ErrNotFound) {
		t.Errorf("not found: %v", err)
	}
	if _, err := mcpstdio.StartCommand(exec.Command("/nonexistent/prog"), nil); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("absolute: %v", err)
	}
	cmd := exec.Command("cat")
	cmd.Dir = "/nonexistent/dir"
	if _, err := mcpstdio.StartCommand(cmd, nil); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("dir: %v", err)
	}
	cmd = exec.Command("cat")
	cmd.Stdout = os.Stderr
	if _, err := mcpstdio.StartCommand(cmd, nil); err == nil {
		t.Error("Stdout set: no error")
	}
	cmd = exec.Command("cat")
	cmd.Stderr = os.Stderr
	if _, err := mcpstdio.StartCommand(cmd, &mcpstdio.CommandConfig{Stderr: func([]byte) {}}); err == nil {
		t.Error("Stderr twice: no error")
	}
	cmd = exec.Command("cat")
	if _, err := mcpstdio.StartCommand(cmd, &mcpstdio.CommandConfig{ConnConfig: mcpstdio.ConnConfig{MaxQueued: -1}}); !errors.Is(err, mcpstdio.ErrInvalidArgument) {
		t.Errorf("MaxQueued -1: %v", err)
	}
	if cmd.Process != nil {
		t.Error("started anyway")
	}
	// Started once: not again.
	cmd = exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	if _, err := mcpstdio.StartCommand(cmd, nil); err == nil {
		t.Error("started twice: no error")
	}
}

// A failed start leaves no descriptor open.
func TestCommandStartErrorLeaksNoDescriptor(t *testing.T) {
	before := openFds(t)
	for i := 0; i < 20; i++ {
		mcpstdio.StartCommand(exec.Command("/nonexistent/prog"), &mcpstdio.CommandConfig{Stderr: func([]byte) {}})
	}
	if after := openFds(t); after > before {
		t.Errorf("%d descriptors open, %d before", after, before)
	}
}

func openFds(t *testing.T) int {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd")
	}
	return len(entries)
}

// With Setsid the server leads a new session, and so its own group.
func TestCommandSetsid(t *testing.T) {
	cmd := exec.Command("cat")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	c := start(t, cmd, nil)
	if pgid, _ := syscall.Getpgid(c.Pid()); pgid != c.Pid() {
		t.Errorf("process group %d, want %d", pgid, c.Pid())
	}
	if err := c.Close(); err != nil || c.ExitCode() != 0 {
		t.Errorf("Close: %v, exit %d", err, c.ExitCode())
	}
}

// Once Close returns, the CommandConn's goroutines end (the Conn's and the
// stderr readers' included).
func TestCommandLeavesNoGoroutine(t *testing.T) {
	before := runtime.NumGoroutine()
	for i := 0; i < 5; i++ {
		c, err := mcpstdio.StartCommand(sh("echo a >&2; cat"), &mcpstdio.CommandConfig{Stderr: func([]byte) {}})
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
	}
	end := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before {
		if time.Now().After(end) {
			buf := make([]byte, 1<<20)
			t.Fatalf("%d goroutines, %d before:\n%s", runtime.NumGoroutine(), before, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// DefaultEnv keeps only the default variables of the host, and the
// server started with it sees them and the extra ones, and no secret.
func TestCommandDefaultEnv(t *testing.T) {
	t.Setenv("MCPSTDIO_SECRET", "do-not-pass")
	t.Setenv("LANG", "C.UTF-8")
	t.Setenv("TZ", "UTC")
	env := mcpstdio.DefaultEnv("TZ=Europe/Oslo", "MCPSTDIO_EXTRA=1")
	for _, kv := range env {
		if strings.HasPrefix(kv, "MCPSTDIO_SECRET=") || kv == "TZ=UTC" {
			t.Fatalf("DefaultEnv kept %q: %q", kv, env)
		}
	}
	cmd := sh("env >&2; cat >/dev/null")
	cmd.Env = env
	log := newStderrLog()
	server := start(t, cmd, &mcpstdio.CommandConfig{Stderr: log.add})
	server.Close()
	got := map[string]bool{}
	for _, line := range log.all() {
		got[line] = true
	}
	for _, want := range []string{"PATH=" + os.Getenv("PATH"), "LANG=C.UTF-8", "TZ=Europe/Oslo", "MCPSTDIO_EXTRA=1"} {
		if !got[want] {
			t.Errorf("the server's environment lacks %q: %q", want, log.all())
		}
	}
	for line := range got {
		if strings.HasPrefix(line, "MCPSTDIO_SECRET=") || strings.HasPrefix(line, "MCPSTDIO_TEST") {
			t.Errorf("the server got %q", line)
		}
	}
}
