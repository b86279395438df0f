//go:build unix

package mcpstdio

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// CommandConfig configures StartCommand. The zero value is usable: the
// Conn's defaults, a 2 s grace, the server's stderr left as cmd.Stderr says.
type CommandConfig struct {
	// ConnConfig configures the Conn on the server's stdin and stdout. Its
	// CloseGrace (0: 2 s; negative: none) is also the grace of the
	// shutdown: SIGTERM to the server's process group at CloseGrace after
	// the shutdown began, SIGKILL at twice CloseGrace.
	ConnConfig

	// Stderr, when set, receives the server's stderr, one line per call,
	// without its newline: a line longer than 64 KiB comes in pieces of
	// 64 KiB, a last line without a newline comes too. The calls are made
	// one at a time, in order, from one goroutine of the CommandConn; the
	// slice is the callback's to keep. The pipe is always drained, so a
	// chatty server never blocks on its stderr, even when the callback is
	// slow: at most 1 MiB of lines waits for it, and beyond that the
	// oldest waiting lines are dropped and counted
	// (CommandConn.StderrDropped). cmd.Stderr must then be nil. The
	// callback must not call CommandConn.Close or Wait, which wait for the
	// last line to be delivered. The last lines read, delivered or
	// dropped, are also kept (CommandConn.StderrTail) and quoted by the
	// *ServerExitedError of a server that exits by itself: set Stderr, even
	// to a callback that does nothing, to have them.
	//
	// When nil, cmd.Stderr is left as the caller set it (and the stderr
	// tail stays empty, the CommandConn never reading it): nil discards the
	// server's stderr (/dev/null), os.Stderr shares the host's. (Another
	// io.Writer makes os/exec copy the stderr in a goroutine that Wait
	// waits for, so a grandchild holding stderr delays the end until the
	// shutdown kills it.)
	Stderr func(line []byte)
}

// CommandConn is an MCP server running as a child process, and the Conn
// on its stdin and stdout: the Conn's methods (Request, Notify, Done,
// Stats) talk to the server. StartCommand returns it.
//
// The server runs in a process group of its own, and the CommandConn
// applies the MCP stdio shutdown to that group (the same sequence as
// mcp_transport_spawn in C) once it begins, which happens at Close, when
// the server exits by itself, or when the Conn ends (the server closed its
// stdout, a write to its stdin failed, or the Conn was closed through
// Conn.Close or Request.Conn):
//
//  1. the Conn closes: sends are refused (ErrClosed), what was queued is
//     written and the server's stdin is closed, so it sees the end of its
//     input; answers that still come are delivered until its stdout ends,
//     or CloseGrace at most, and then pending Requests fail with ErrClosed
//     (at once when the server ended by itself: see below);
//  2. if the server is not gone CloseGrace after the shutdown began,
//     SIGTERM goes to its process group, and SIGKILL at twice CloseGrace;
//  3. the server is always reaped (exec.Cmd.Wait): no zombie is left.
//
// "Gone" means the server exited and, of what it started, nothing is left
// in its group or holds its stdout and stderr open: a child of a wrapper
// (npx, uvx) that kept the pipes is signalled with the group, even after
// the server itself exited. A process that left the group (setsid) is not.
//
// When the server ends by itself (it exits, or closes its stdout), before
// the host's Close, every pending Request fails at once (not at its
// deadline, not after CloseGrace), and so does every send from then on,
// with an error that wraps ErrClosed and says why. Answers that came
// before the end are delivered. Once stdout ends the exit status is waited
// for 500 ms at most; once the server exits, the end of its stdout (held
// by a process it started) too. The error is:
//
//   - a *ServerExitedError when it exited: its exit code or signal, whether
//     it exited before its first message, the last lines of its stderr
//     (with CommandConfig.Stderr set; see StderrTail), and a text to show:
//     "mcpstdio: server exited with code 1 before its first message:
//     ModuleNotFoundError: No module named 'foo'";
//   - ErrStdoutClosed ("mcpstdio: server closed its stdout") when it still
//     runs 500 ms after closing its stdout.
//
// After the host's own Close (or Conn.Close), pending Requests fail with
// plain ErrClosed as before: the server's exit then is not news. A host
// shows why a server died with no stderr handling of its own beyond
// setting CommandConfig.Stderr (to a callback that may do nothing):
//
//	res, err := server.Request(ctx, "tools/list", nil)
//	var exit *mcpstdio.ServerExitedError
//	if errors.As(err, &exit) {
//		log.Print(err) // mcpstdio: server exited with code 1 ...: <its last stderr line>
//	}
//
// or, with no request under way, after <-server.Done(): server.Err().
//
// The CommandConn has one goroutine that waits for the server and one that
// runs the shutdown; with CommandConfig.Stderr, two more that read and
// deliver the stderr lines. All of them end with the shutdown. Its methods
// are safe for concurrent use.
type CommandConn struct {
	*Conn

	cmd   *exec.Cmd
	pid   int
	grace time.Duration

	exited    chan struct{} // closed once cmd.Wait returned
	waitErr   error         // cmd.Wait's, set before exited is closed
	exitedAt  time.Time     // when cmd.Wait returned, set before exited is closed
	stdout    *stdoutReader
	stdoutEOF chan struct{} // closed when the server's stdout ended
	stderr    *stderrLines  // nil without CommandConfig.Stderr

	closeOnce sync.Once
	closeReq  chan struct{} // closed by Close
	finished  chan struct{} // closed when the shutdown is over
	closeErr  error         // the Conn's I/O error, set before finished is closed
}

// How often the end of the server's process group is looked at, once the
// server itself has exited but its pipes are still open.
const groupPoll = 20 * time.Millisecond

// How long the end of the stderr stream is waited for once the server is
// gone (its group's descriptors are closing; only a process that left the
// group can hold it longer).
const stderrLinger = 100 * time.Millisecond

// How long the exit status is waited for once the server's stdout ended,
// and the end of its stdout once it exited, before pending Requests fail
// (see endError).
const exitWait = 500 * time.Millisecond

// StartCommand starts cmd as an MCP server and returns the connection on
// its stdin and stdout. cmd must not have been started, and its Stdin and
// Stdout must be nil: they become pipes of the CommandConn's. Everything
// else of cmd (Path, Args, Env, Dir, ExtraFiles, SysProcAttr) is used as
// set; SysProcAttr gets Setpgid (unless it has Setsid, which also makes
// the server the leader of a new group). On Linux, setting
// SysProcAttr.Pdeathsig to syscall.SIGKILL kills the server when the host
// dies, even by SIGKILL (mcp_transport_spawn's
// MCP_TRANSPORT_KILL_ON_HOST_EXIT). Linux sends it when the OS thread that
// started the server ends, and Go ends a thread only when a goroutine exits
// while locked to it (runtime.LockOSThread): do not start the server from
// such a goroutine.
//
// Note that os/exec passes the whole environment of the host unless
// cmd.Env is set, while a server needs only a few variables: set it to
// DefaultEnv(...) to give what the C library gives by default.
//
// cfg may be nil. On an error (an invalid configuration, cmd.Start's
// error, such as one matching exec.ErrNotFound or fs.ErrNotExist), nothing
// is left running and no descriptor is left open.
//
// Call Close when done with the server, whatever happened: it ends the
// shutdown and waits for it.
func StartCommand(cmd *exec.Cmd, cfg *CommandConfig) (*CommandConn, error) {
	if cfg == nil {
		cfg = &CommandConfig{}
	}
	switch {
	case cmd.Process != nil:
		return nil, errors.New("mcpstdio: StartCommand: the command was already started")
	case cmd.Stdin != nil:
		return nil, errors.New("mcpstdio: StartCommand: Stdin already set")
	case cmd.Stdout != nil:
		return nil, errors.New("mcpstdio: StartCommand: Stdout already set")
	case cfg.Stderr != nil && cmd.Stderr != nil:
		return nil, errors.New("mcpstdio: StartCommand: Stderr already set, and CommandConfig.Stderr too")
	case cfg.MaxQueued < 0:
		return nil, ErrInvalidArgument
	}
	grace := cfg.CloseGrace
	if grace == 0 {
		grace = 2 * time.Second
	} else if grace < 0 {
		grace = 0
	}

	var files []*os.File // everything opened here, closed on failure
	closeAll := func() {
		for _, f := range files {
			f.Close()
		}
	}
	pipe := func() (r, w *os.File, err error) {
		r, w, err = os.Pipe()
		if err == nil {
			files = append(files, r, w)
		}
		return r, w, err
	}
	stdinR, stdinW, err := pipe()
	if err != nil {
		return nil, err
	}
	stdoutR, stdoutW, err := pipe()
	if err != nil {
		closeAll()
		return nil, err
	}
	var stderrR, stderrW *os.File
	if cfg.Stderr != nil {
		if stderrR, stderrW, err = pipe(); err != nil {
			closeAll()
			return nil, err
		}
		cmd.Stderr = stderrW
	}
	cmd.Stdin = stdinR
	cmd.Stdout = stdoutW
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	if !cmd.SysProcAttr.Setsid {
		cmd.SysProcAttr.Setpgid = true
		cmd.SysProcAttr.Pgid = 0
	}
	if err := cmd.Start(); err != nil {
		closeAll()
		cmd.Stdin, cmd.Stdout = nil, nil
		if stderrW != nil {
			cmd.Stderr = nil
		}
		return nil, err
	}
	// The child has its ends: ours go, so that its exit ends the pipes.
	stdinR.Close()
	stdoutW.Close()
	if stderrW != nil {
		stderrW.Close()
	}

	c := &CommandConn{
		cmd:       cmd,
		pid:       cmd.Process.Pid,
		grace:     grace,
		exited:    make(chan struct{}),
		stdoutEOF: make(chan struct{}),
		closeReq:  make(chan struct{}),
		finished:  make(chan struct{}),
	}
	go func() {
		c.waitErr = cmd.Wait()
		c.exitedAt = time.Now()
		close(c.exited)
	}()
	if stderrR != nil {
		c.stderr = newStderrLines(stderrR, cfg.Stderr)
	}
	c.stdout = &stdoutReader{f: stdoutR, eof: c.stdoutEOF}
	conn, err := newConn(c.stdout, stdinW, &cfg.ConnConfig, c.endError)
	if err != nil {
		stdinW.Close()
		stdoutR.Close()
		syscall.Kill(-c.pid, syscall.SIGKILL)
		<-c.exited
		if c.stderr != nil {
			c.stderr.finish(stderrLinger)
		}
		return nil, err
	}
	c.Conn = conn
	go c.supervise()
	return c, nil
}

// stdoutReader is the server's stdout for the Conn; it tells when the
// stream really ended (io.EOF), as opposed to being closed by the Conn, and
// whether a line came (a byte other than white space, which the library
// skips).
type stdoutReader struct {
	f       *os.File
	once    sync.Once
	eof     chan struct{}
	sawLine atomic.Bool
}

func (r *stdoutReader) Read(p []byte) (int, error) {
	n, err := r.f.Read(p)
	if n > 0 && !r.sawLine.Load() {
		for _, b := range p[:n] {
			if b != ' ' && b != '\t' && b != '\r' && b != '\n' {
				r.sawLine.Store(true)
				break
			}
		}
	}
	if err == io.EOF {
		r.once.Do(func() { close(r.eof) })
	}
	return n, err
}

func (r *stdoutReader) Close() error { return r.f.Close() }

// Close begins the shutdown (see CommandConn), unless it began already,
// and waits until it is over: the Conn closed, the server and what it
// started gone (SIGTERM to its group at CloseGrace, SIGKILL at twice it),
// the server reaped, and every stderr line delivered. So it returns after
// about twice CloseGrace at most (unless a process of the group cannot be
// killed, such as one stuck in the kernel).
//
// It returns the Conn's I/O error (see Conn.Close), or nil; a write that
// failed because the server had gone (EPIPE) is not an error. How the
// server ended is for ExitCode, TermSignal, ProcessState and Wait. Close
// is idempotent and safe to call concurrently: every call waits and
// returns the same.
func (c *CommandConn) Close() error {
	c.closeOnce.Do(func() {
		c.Conn.hostClosed.Store(true) // pending Requests fail with ErrClosed
		close(c.closeReq)
	})
	<-c.finished
	return c.closeErr
}

// Wait waits until the shutdown is over, without beginning it (it begins
// when the server exits by itself or the Conn ends, or at Close), and
// returns the result of exec.Cmd.Wait: nil when the server exited with
// status 0, an *exec.ExitError otherwise (killed by a signal included).
func (c *CommandConn) Wait() error {
	<-c.finished
	return c.waitErr
}

// Exited returns a channel closed once the server has exited and been
// reaped. The shutdown may still be under way (Conn.Done and Wait tell
// the rest).
func (c *CommandConn) Exited() <-chan struct{} { return c.exited }

// Pid returns the server's process id, which is also its process group's.
func (c *CommandConn) Pid() int { return c.pid }

// ProcessState returns how the server ended, or nil until it has exited
// and been reaped.
func (c *CommandConn) ProcessState() *os.ProcessState {
	select {
	case <-c.exited:
		return c.cmd.ProcessState
	default:
		return nil
	}
}

// ExitCode returns the server's exit status, or -1 while it runs and when
// a signal killed it (see TermSignal).
func (c *CommandConn) ExitCode() int {
	if ps := c.ProcessState(); ps != nil {
		return ps.ExitCode()
	}
	return -1
}

// TermSignal returns the signal that killed the server, or 0 while it
// runs and when it exited.
func (c *CommandConn) TermSignal() syscall.Signal {
	if ps := c.ProcessState(); ps != nil {
		if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return ws.Signal()
		}
	}
	return 0
}

// StderrDropped returns the bytes of stderr lines dropped because more than
// 1 MiB waited for the CommandConfig.Stderr callback (newlines included);
// 0 without the callback.
func (c *CommandConn) StderrDropped() uint64 {
	if c.stderr == nil {
		return 0
	}
	return c.stderr.dropped.Load()
}

// StderrTail returns a copy of the last lines the server wrote to its
// stderr, oldest first, joined with "\n" (no newline at the end): at most
// 20 lines and 4 KiB in all, a single longer line keeping its last 4 KiB.
// Each line is as given to the CommandConfig.Stderr callback (a piece of a
// line over 64 KiB counts as a line), whether it was delivered or dropped
// for a slow callback (see StderrDropped). It can be called any time, and
// still gives the tail after the server is gone: what a host shows when a
// server dies ("ModuleNotFoundError: ...", "npm ERR! 404").
//
// Without CommandConfig.Stderr the tail is empty (nil): the server's
// stderr is then inherited or discarded, never read by the CommandConn.
func (c *CommandConn) StderrTail() []byte {
	if c.stderr == nil {
		return nil
	}
	return c.stderr.tailCopy()
}

// Err returns nil while the connection is open, and once it has ended (Done
// is closed) the error its pending Requests failed with, which its sends
// return too: a *ServerExitedError when the server exited by itself (its
// exit status and stderr tail: the text to show a user), ErrStdoutClosed
// when it closed its stdout and did not exit, or ErrClosed (closed by the
// host, or a write to the server failed while it ran).
func (c *CommandConn) Err() error {
	select {
	case <-c.Conn.Done():
		return c.Conn.closedErr()
	default:
		return nil
	}
}

// endError is the Conn's peerEnd hook, called once when the server's side
// ended first (its stdout ended, a write to its stdin failed, or it
// exited), and before pending Requests fail: it returns what they fail
// with. It waits up to exitWait (500 ms) for the exit status and for the
// end of stdout (so that answers written before the exit are delivered),
// and a moment for the end of stderr (so that the tail has the last
// words). Exited: a *ServerExitedError. Still running with its stdout
// ended: ErrStdoutClosed. Else (a write failed, stdout open): nil, plain
// ErrClosed.
func (c *CommandConn) endError() error {
	deadline := time.Now().Add(exitWait)
	if isClosed(c.exited) {
		if d := c.exitedAt.Add(exitWait); d.Before(deadline) {
			deadline = d
		}
	}
	waitUntil(c.exited, deadline)
	waitUntil(c.stdoutEOF, deadline)
	if !isClosed(c.exited) {
		if isClosed(c.stdoutEOF) {
			return ErrStdoutClosed
		}
		return nil
	}
	if c.stderr != nil {
		if d := time.Now().Add(stderrLinger); d.After(deadline) {
			deadline = d
		}
		waitUntil(c.stderr.eof, deadline)
	}
	e := &ServerExitedError{
		Code:               c.cmd.ProcessState.ExitCode(),
		StderrTail:         c.StderrTail(),
		BeforeFirstMessage: !c.stdout.sawLine.Load(),
	}
	if ws, ok := c.cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		e.Signal = ws.Signal()
		e.Code = -1
	}
	return e
}

// waitUntil waits until ch is closed or the deadline has passed.
func waitUntil(ch <-chan struct{}, deadline time.Time) {
	if isClosed(ch) {
		return
	}
	d := time.Until(deadline)
	if d <= 0 {
		return
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-ch:
	case <-tm.C:
	}
}

// supervise runs the shutdown once it begins.
func (c *CommandConn) supervise() {
	byServer := false
	select {
	case <-c.closeReq:
	case <-c.exited:
		byServer = true
	case <-c.Conn.Done():
	}
	start := time.Now()
	connClosed := make(chan struct{})
	signalled := make(chan struct{}) // closed once the server is gone or signalled to the end
	go func() {
		if byServer && !c.Conn.hostClosed.Load() {
			// The server exited by itself. Its stdout ends now, and the
			// Conn's reader fails the pending Requests with how it
			// exited; unless a process it started holds its stdout: then
			// they fail here, not at CloseGrace.
			c.Conn.endByPeer()
			if !isClosed(c.stdoutEOF) {
				c.Conn.endNow()
				// Its reader still reads (closing the Conn would close
				// stdout under it), so that the end of the holder is seen
				// as the end of stdout (see gone), not only once its
				// zombie is reaped.
				select {
				case <-c.stdoutEOF:
				case <-signalled:
				}
			}
		}
		err := c.Conn.close()
		if errors.Is(err, syscall.EPIPE) {
			err = nil // the server went away: its exit status says how
		}
		c.closeErr = err
		close(connClosed)
	}()
	if !c.waitGone(start.Add(c.grace)) {
		syscall.Kill(-c.pid, syscall.SIGTERM)
		if !c.waitGone(start.Add(2 * c.grace)) {
			syscall.Kill(-c.pid, syscall.SIGKILL)
		}
	}
	close(signalled)
	<-c.exited
	if c.stderr != nil {
		c.stderr.finish(stderrLinger)
	}
	<-connClosed
	close(c.finished)
}

// gone reports whether the server exited and nothing of its is left: its
// group is empty, or its stdout and stderr have ended.
func (c *CommandConn) gone() bool {
	if !isClosed(c.exited) {
		return false
	}
	if isClosed(c.stdoutEOF) && (c.stderr == nil || isClosed(c.stderr.eof)) {
		return true
	}
	return syscall.Kill(-c.pid, 0) == syscall.ESRCH
}

// waitGone waits until the server is gone or the deadline has passed, and
// reports whether it is gone.
func (c *CommandConn) waitGone(deadline time.Time) bool {
	tm := time.NewTimer(time.Hour)
	defer tm.Stop()
	for {
		if c.gone() {
			return true
		}
		d := time.Until(deadline)
		if d <= 0 {
			return false
		}
		exited := openOrNil(c.exited)
		if exited == nil && d > groupPoll {
			d = groupPoll // the group's end is not signalled: look again
		}
		var stderrEOF <-chan struct{}
		if c.stderr != nil {
			stderrEOF = openOrNil(c.stderr.eof)
		}
		stopTimer(tm)
		tm.Reset(d)
		select {
		case <-exited:
		case <-openOrNil(c.stdoutEOF):
		case <-stderrEOF:
		case <-tm.C:
		}
	}
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// openOrNil is ch while it is open, nil (never ready) once closed.
func openOrNil(ch chan struct{}) <-chan struct{} {
	if isClosed(ch) {
		return nil
	}
	return ch
}

// ---- Stderr lines ----

const (
	stderrPiece   = 64 << 10 // the longest piece of a line given in one call
	stderrBacklog = 1 << 20  // the most bytes of lines waiting for the callback

	stderrTailLines = 20      // the most lines of the tail
	stderrTailBytes = 4 << 10 // the most bytes of the tail, "\n"s between lines included
)

// stderrLine is one line (or piece) waiting for the callback.
type stderrLine struct {
	data    []byte
	newline bool // ended by a newline (counted in the backlog's bytes)
}

func (l stderrLine) size() int {
	if l.newline {
		return len(l.data) + 1
	}
	return len(l.data)
}

// stderrLines reads the server's stderr (always: the reader never waits
// for the callback) and delivers it line by line to the callback from a
// goroutine of its own.
type stderrLines struct {
	f  *os.File
	fn func([]byte)

	mu      sync.Mutex
	more    *sync.Cond // signalled when a line is queued or the stream ended
	queue   []stderrLine
	waiting int  // bytes in queue, newlines included
	ended   bool // the reader is done

	// The tail: the last lines read (delivered or dropped), a ring of
	// tailLen lines from tailStart, tailBytes bytes without the newlines.
	tail      [stderrTailLines][]byte
	tailStart int
	tailLen   int
	tailBytes int

	dropped atomic.Uint64

	eof       chan struct{} // closed when the reader is done
	delivered chan struct{} // closed when the last line was delivered
}

func newStderrLines(f *os.File, fn func([]byte)) *stderrLines {
	s := &stderrLines{f: f, fn: fn, eof: make(chan struct{}), delivered: make(chan struct{})}
	s.more = sync.NewCond(&s.mu)
	go s.read()
	go s.deliver()
	return s
}

// read splits the stream into lines of at most stderrPiece bytes until the
// end of the stream (or an error: the pipe closed by finish).
func (s *stderrLines) read() {
	defer close(s.eof)
	buf := make([]byte, 0, 2*stderrPiece)
	for {
		if cap(buf)-len(buf) < stderrPiece/2 {
			grown := make([]byte, len(buf), len(buf)+2*stderrPiece)
			copy(grown, buf)
			buf = grown
		}
		n, err := s.f.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		rest := buf
		for {
			window := rest
			if len(window) > stderrPiece+1 {
				window = window[:stderrPiece+1]
			}
			if i := bytes.IndexByte(window, '\n'); i >= 0 {
				s.push(rest[:i], true)
				rest = rest[i+1:]
			} else if len(rest) > stderrPiece {
				// (Exactly stderrPiece bytes wait for the next byte: a
				// newline there makes them a whole line, not a piece and
				// an empty line.)
				s.push(rest[:stderrPiece], false)
				rest = rest[stderrPiece:]
			} else {
				break
			}
		}
		if err != nil {
			if len(rest) > 0 {
				s.push(rest, false)
			}
			s.mu.Lock()
			s.ended = true
			s.more.Signal()
			s.mu.Unlock()
			return
		}
		buf = buf[:copy(buf, rest)]
	}
}

// push queues a copy of line, dropping the oldest lines beyond the backlog.
func (s *stderrLines) push(line []byte, newline bool) {
	l := stderrLine{data: append([]byte(nil), line...), newline: newline}
	s.mu.Lock()
	s.queue = append(s.queue, l)
	s.waiting += l.size()
	for s.waiting > stderrBacklog && len(s.queue) > 1 {
		old := s.queue[0]
		s.queue[0] = stderrLine{}
		s.queue = s.queue[1:]
		s.waiting -= old.size()
		s.dropped.Add(uint64(old.size()))
	}
	s.pushTail(line)
	s.more.Signal()
	s.mu.Unlock()
}

// pushTail adds a copy of line to the tail (its last stderrTailBytes),
// dropping the oldest lines beyond stderrTailLines or stderrTailBytes
// joined. Under mu.
func (s *stderrLines) pushTail(line []byte) {
	if len(line) > stderrTailBytes {
		line = line[len(line)-stderrTailBytes:]
	}
	// Joined, the tail would be tailBytes+len(line) bytes and tailLen
	// newlines.
	for s.tailLen > 0 && (s.tailLen >= stderrTailLines || s.tailBytes+len(line)+s.tailLen > stderrTailBytes) {
		s.tailBytes -= len(s.tail[s.tailStart]) // its buffer is reused
		s.tailStart = (s.tailStart + 1) % stderrTailLines
		s.tailLen--
	}
	i := (s.tailStart + s.tailLen) % stderrTailLines
	s.tail[i] = append(s.tail[i][:0], line...)
	s.tailLen++
	s.tailBytes += len(line)
}

// tailCopy returns the tail's lines joined with "\n", or nil.
func (s *stderrLines) tailCopy() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tailLen == 0 {
		return nil
	}
	out := make([]byte, 0, s.tailBytes+s.tailLen-1)
	for k := 0; k < s.tailLen; k++ {
		if k > 0 {
			out = append(out, '\n')
		}
		out = append(out, s.tail[(s.tailStart+k)%stderrTailLines]...)
	}
	return out
}

func (s *stderrLines) deliver() {
	defer close(s.delivered)
	for {
		s.mu.Lock()
		for len(s.queue) == 0 && !s.ended {
			s.more.Wait()
		}
		if len(s.queue) == 0 {
			s.mu.Unlock()
			return
		}
		l := s.queue[0]
		s.queue[0] = stderrLine{}
		s.queue = s.queue[1:]
		s.waiting -= l.size()
		s.mu.Unlock()
		s.fn(l.data)
	}
}

// finish waits up to wait for the end of the stream, then closes the pipe
// (ending a holder's hold on it: what it writes later is lost) and waits
// until every line read was delivered.
func (s *stderrLines) finish(wait time.Duration) {
	if wait > 0 {
		tm := time.NewTimer(wait)
		select {
		case <-s.eof:
		case <-tm.C:
		}
		tm.Stop()
	}
	if !isClosed(s.eof) {
		s.f.Close()
		<-s.eof
	}
	s.f.Close()
	<-s.delivered
}
