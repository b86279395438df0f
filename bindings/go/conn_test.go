package mcpstdio_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	mcpstdio "github.com/mcp-stdio/mcp-stdio/bindings/go"
)

// fakePeer is the other end of a Conn, played by the test: it reads the
// Conn's lines and writes raw lines back.
type fakePeer struct {
	t     *testing.T
	out   *io.PipeWriter // to the Conn
	lines chan string    // from the Conn; closed at its end of stream
}

// newFakePeer returns a Conn (with cfg) talking to a fakePeer over two
// io.Pipes. Cleanup closes both and checks that Close returns.
func newFakePeer(t *testing.T, cfg *mcpstdio.ConnConfig) (*mcpstdio.Conn, *fakePeer) {
	t.Helper()
	connR, peerW := io.Pipe()
	peerR, connW := io.Pipe()
	c, err := mcpstdio.NewConn(connR, connW, cfg)
	if err != nil {
		t.Fatal(err)
	}
	p := &fakePeer{t: t, out: peerW, lines: make(chan string, 1024)}
	go func() {
		defer close(p.lines)
		sc := bufio.NewScanner(peerR)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
		peerR.Close()
	}()
	t.Cleanup(func() {
		go func() {
			for range p.lines {
			}
		}()
		p.out.Close()
		c.Close()
	})
	return c, p
}

// next returns the next line the Conn wrote.
func (p *fakePeer) next() string {
	p.t.Helper()
	select {
	case l, ok := <-p.lines:
		if !ok {
			p.t.Fatal("the Conn ended its stream")
		}
		return l
	case <-time.After(10 * time.Second):
		p.t.Fatal("no line from the Conn")
	}
	return ""
}

// expect checks that the next line is want.
func (p *fakePeer) expect(want string) {
	p.t.Helper()
	if got := p.next(); got != want {
		p.t.Fatalf("the Conn wrote\n%s\nwant\n%s", got, want)
	}
}

// expectNothing checks that the Conn writes nothing for a while.
func (p *fakePeer) expectNothing(d time.Duration) {
	p.t.Helper()
	select {
	case l, ok := <-p.lines:
		if ok {
			p.t.Fatalf("unexpected line from the Conn: %s", l)
		}
	case <-time.After(d):
	}
}

func (p *fakePeer) send(line string) {
	p.t.Helper()
	if _, err := io.WriteString(p.out, line+"\n"); err != nil {
		p.t.Fatal(err)
	}
}

// request runs c.Request in a goroutine; the result comes on the channel.
func request(c *mcpstdio.Conn, ctx context.Context, method string, params any) <-chan callResult {
	ch := make(chan callResult, 1)
	go func() {
		res, err := c.Request(ctx, method, params)
		ch <- callResult{res, err}
	}()
	return ch
}

type callResult struct {
	res json.RawMessage
	err error
}

func wait(t *testing.T, ch <-chan callResult) callResult {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(10 * time.Second):
		t.Fatal("Request did not return")
	}
	return callResult{}
}

// The Conn's lines on the wire, and answers routed back.
func TestConnFakePeer(t *testing.T) {
	c, p := newFakePeer(t, nil)
	ctx := context.Background()

	res := request(c, ctx, "tools/list", map[string]int{"a": 1})
	p.expect(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"a":1}}`)
	p.send(`{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}`)
	if r := wait(t, res); r.err != nil || string(r.res) != `{"tools":[]}` {
		t.Fatalf("Request = %s, %v", r.res, r.err)
	}

	// Params as json.RawMessage (compacted by the library), and absent.
	res = request(c, ctx, "a\"b", json.RawMessage(`[ 1, 2 ]`))
	p.expect(`{"jsonrpc":"2.0","id":2,"method":"a\"b","params":[1,2]}`)
	res2 := request(c, ctx, "ping", nil)
	p.expect(`{"jsonrpc":"2.0","id":3,"method":"ping"}`)
	// Answers in any order, string and number results, CRLF.
	p.send(`{"jsonrpc":"2.0","result":"three","id":3}` + "\r")
	p.send(`{"id":2,"jsonrpc":"2.0","result": 2 }`)
	if r := wait(t, res2); r.err != nil || string(r.res) != `"three"` {
		t.Fatalf("Request 3 = %s, %v", r.res, r.err)
	}
	if r := wait(t, res); r.err != nil || string(r.res) != `2` {
		t.Fatalf("Request 2 = %s, %v", r.res, r.err)
	}

	if err := c.Notify(ctx, "notifications/initialized", nil); err != nil {
		t.Fatal(err)
	}
	p.expect(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)

	// Without a handler, requests get "Method not found"; notifications
	// are dropped.
	p.send(`{"jsonrpc":"2.0","method":"note"}`)
	p.send(`{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{}}`)
	p.expect(`{"jsonrpc":"2.0","id":"x","error":{"code":-32601,"message":"Method not found"}}`)

	// Close: our stream ends; the peer ends its own; Close returns.
	closed := make(chan error, 1)
	go func() { closed <- c.Close() }()
	if l, ok := <-p.lines; ok {
		t.Fatalf("line after Close: %s", l)
	}
	p.out.Close()
	select {
	case err := <-closed:
		if err != nil {
			t.Fatalf("Close = %v", err)
		}
	case <-time.After(time.Second):
		t.Fatal("Close did not return at the peer's end")
	}
	if st := c.Stats(); st != (mcpstdio.ConnStats{}) {
		t.Fatalf("Stats = %+v", st)
	}
}

// An error response is a *ResponseError with its code, message and data.
func TestConnErrorResponse(t *testing.T) {
	c, p := newFakePeer(t, nil)
	res := request(c, context.Background(), "x", nil)
	p.expect(`{"jsonrpc":"2.0","id":1,"method":"x"}`)
	p.send(`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"bad \"params\"","data":{"why":[1]}}}`)
	r := wait(t, res)
	var e *mcpstdio.ResponseError
	if !errors.As(r.err, &e) || r.res != nil {
		t.Fatalf("Request = %s, %v; want a *ResponseError", r.res, r.err)
	}
	if e.Code != mcpstdio.CodeInvalidParams || e.Message != `bad "params"` || string(e.Data) != `{"why":[1]}` {
		t.Fatalf("error = %+v", e)
	}
	if e.Error() != `mcpstdio: error response -32602: bad "params"` {
		t.Fatalf("Error() = %q", e.Error())
	}
	// Without data.
	res = request(c, context.Background(), "x", nil)
	p.expect(`{"jsonrpc":"2.0","id":2,"method":"x"}`)
	p.send(`{"jsonrpc":"2.0","id":2,"error":{"code":-1,"message":""}}`)
	if r := wait(t, res); !errors.As(r.err, &e) || e.Code != -1 || e.Data != nil {
		t.Fatalf("Request = %v", r.err)
	}
}

const cancelledLine = `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%d,"reason":"%s"}}`

// A ctx deadline: the library times the request out and sends
// notifications/cancelled once; the late answer reaches only Unhandled.
func TestConnContextTimeout(t *testing.T) {
	unhandled := make(chan mcpstdio.Message, 10)
	c, p := newFakePeer(t, &mcpstdio.ConnConfig{Unhandled: func(m mcpstdio.Message) { unhandled <- m }})
	ctx, cancel := context.WithTimeout(context.Background(), 80*time.Millisecond)
	defer cancel()
	start := time.Now()
	res := request(c, ctx, "slow", nil)
	p.expect(`{"jsonrpc":"2.0","id":1,"method":"slow"}`)
	r := wait(t, res)
	if r.err != context.DeadlineExceeded {
		t.Fatalf("Request = %s, %v; want DeadlineExceeded", r.res, r.err)
	}
	if d := time.Since(start); d < 80*time.Millisecond {
		t.Fatalf("timed out after %v", d)
	}
	p.expect(fmt.Sprintf(cancelledLine, 1, "request timed out"))
	p.send(`{"jsonrpc":"2.0","id":1,"result":"late"}`)
	select {
	case m := <-unhandled:
		if m.Kind != mcpstdio.KindMessage || m.RPCKind != mcpstdio.RPCResponse || string(m.Data) != `{"jsonrpc":"2.0","id":1,"result":"late"}` {
			t.Fatalf("Unhandled got %+v", m)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the late answer did not reach Unhandled")
	}
	if st := c.Stats(); st.StrayResponses != 1 {
		t.Fatalf("Stats = %+v", st)
	}
	// The next line is the next request: no second cancellation.
	res = request(c, context.Background(), "next", nil)
	p.expect(`{"jsonrpc":"2.0","id":2,"method":"next"}`)
	p.send(`{"jsonrpc":"2.0","id":2,"result":{}}`)
	if r := wait(t, res); r.err != nil || string(r.res) != `{}` {
		t.Fatalf("Request = %s, %v", r.res, r.err)
	}
	// A deadline already passed sends nothing.
	past, cancel2 := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel2()
	if _, err := c.Request(past, "never", nil); err != context.DeadlineExceeded {
		t.Fatalf("Request = %v", err)
	}
	p.expectNothing(50 * time.Millisecond)
}

// Many requests with deadlines, most answered in time: every timed-out one
// is cancelled exactly once, and no answered one is.
func TestConnManyTimeouts(t *testing.T) {
	c, p := newFakePeer(t, nil)
	const n = 40
	results := make([]<-chan callResult, n)
	for i := 0; i < n; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), time.Duration(20+i*5)*time.Millisecond)
		defer cancel()
		results[i] = request(c, ctx, "m", []int{i})
	}
	requests := map[int]bool{}
	for i := 0; i < n; i++ {
		var m struct{ ID int }
		json.Unmarshal([]byte(p.next()), &m)
		requests[m.ID] = true
	}
	// Answer the even ids now (before any deadline, 20 ms at the earliest,
	// unless the machine is very slow: then they are strays, still fine).
	for id := range requests {
		if id%2 == 0 {
			p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":%d}`, id, id))
		}
	}
	timedOut := 0
	for i := 0; i < n; i++ {
		r := wait(t, results[i])
		if r.err == context.DeadlineExceeded {
			timedOut++
		} else if r.err != nil {
			t.Fatal(r.err)
		}
	}
	cancelled := map[int]int{}
	for i := 0; i < timedOut; i++ {
		var m struct {
			Method string
			Params struct{ RequestID int }
		}
		l := p.next()
		if json.Unmarshal([]byte(l), &m) != nil || m.Method != "notifications/cancelled" {
			t.Fatalf("line %s", l)
		}
		cancelled[m.Params.RequestID]++
	}
	p.expectNothing(50 * time.Millisecond)
	for id, k := range cancelled {
		if k != 1 {
			t.Fatalf("request %d cancelled %d times", id, k)
		}
	}
	if timedOut < n/2 {
		t.Fatalf("only %d of %d timed out", timedOut, n)
	}
}

// Cancelling ctx sends notifications/cancelled with its reason, once.
func TestConnContextCancel(t *testing.T) {
	c, p := newFakePeer(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	// A deadline too, so the library has one; the cancel comes first.
	ctx, cancel2 := context.WithTimeout(ctx, time.Hour)
	defer cancel2()
	res := request(c, ctx, "slow", nil)
	p.expect(`{"jsonrpc":"2.0","id":1,"method":"slow"}`)
	cancel()
	if r := wait(t, res); r.err != context.Canceled {
		t.Fatalf("Request = %v", r.err)
	}
	p.expect(fmt.Sprintf(cancelledLine, 1, "context canceled"))
	p.send(`{"jsonrpc":"2.0","id":1,"result":"late"}`)
	p.expectNothing(50 * time.Millisecond)
	if st := c.Stats(); st.StrayResponses != 1 {
		t.Fatalf("Stats = %+v", st)
	}
	// An already cancelled ctx sends nothing.
	if _, err := c.Request(ctx, "x", nil); err != context.Canceled {
		t.Fatalf("Request = %v", err)
	}
	p.expectNothing(20 * time.Millisecond)
}

// MCP forbids cancelling initialize: it times out without a cancellation.
func TestConnInitializeNotCancelled(t *testing.T) {
	c, p := newFakePeer(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	res := request(c, ctx, "initialize", map[string]any{})
	p.expect(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`)
	if r := wait(t, res); r.err != context.DeadlineExceeded {
		t.Fatalf("Request = %v", r.err)
	}
	ctx2, cancel2 := context.WithCancel(context.Background())
	res = request(c, ctx2, "initialize", nil)
	p.expect(`{"jsonrpc":"2.0","id":2,"method":"initialize"}`)
	cancel2()
	if r := wait(t, res); r.err != context.Canceled {
		t.Fatalf("Request = %v", r.err)
	}
	p.expectNothing(80 * time.Millisecond)
}

// Invalid arguments are refused before anything is sent.
func TestConnInvalidArguments(t *testing.T) {
	c, p := newFakePeer(t, nil)
	ctx := context.Background()
	for _, tc := range []struct {
		method string
		params any
		want   error
	}{
		{"a\x00b", nil, mcpstdio.ErrInvalidText},
		{"m", json.RawMessage(`[1`), mcpstdio.ErrInvalidJSON},
		{"m", json.RawMessage(`3`), mcpstdio.ErrInvalidParams},
		{"m", "text", mcpstdio.ErrInvalidParams},
		{"\xff", nil, mcpstdio.ErrInvalidText},
	} {
		if _, err := c.Request(ctx, tc.method, tc.params); !errors.Is(err, tc.want) {
			t.Errorf("Request(%q, %v) = %v, want %v", tc.method, tc.params, err, tc.want)
		}
		err := c.Notify(ctx, tc.method, tc.params)
		if !errors.Is(err, tc.want) {
			t.Errorf("Notify(%q, %v) = %v, want %v", tc.method, tc.params, err, tc.want)
		}
		// The narrower statuses still match what they were before.
		if tc.want != mcpstdio.ErrInvalidJSON && !errors.Is(err, mcpstdio.ErrInvalidArgument) {
			t.Errorf("Notify(%q, %v) = %v, not an ErrInvalidArgument", tc.method, tc.params, err)
		}
		if tc.want == mcpstdio.ErrInvalidJSON && errors.Is(err, mcpstdio.ErrInvalidArgument) {
			t.Errorf("Notify(%q, %v) = %v, an ErrInvalidArgument", tc.method, tc.params, err)
		}
	}
	var ue *json.UnsupportedTypeError
	if _, err := c.Request(ctx, "m", make(chan int)); !errors.As(err, &ue) {
		t.Errorf("Request with a channel = %v", err)
	}
	// A typed nil and JSON null leave params out.
	var m map[string]int
	if err := c.Notify(ctx, "n", m); err != nil {
		t.Fatal(err)
	}
	p.expect(`{"jsonrpc":"2.0","method":"n"}`)
	if _, err := mcpstdio.NewConn(strings.NewReader(""), io.Discard, &mcpstdio.ConnConfig{MaxQueued: -1}); !errors.Is(err, mcpstdio.ErrInvalidArgument) {
		t.Fatalf("NewConn = %v", err)
	}
}

// connPair returns a client and a server Conn over two io.Pipes.
func connPair(t testing.TB, client, server *mcpstdio.ConnConfig) (*mcpstdio.Conn, *mcpstdio.Conn) {
	t.Helper()
	cr, sw := io.Pipe()
	sr, cw := io.Pipe()
	c, err := mcpstdio.NewConn(cr, cw, client)
	if err != nil {
		t.Fatal(err)
	}
	s, err := mcpstdio.NewConn(sr, sw, server)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c.Close()
		s.Close()
	})
	return c, s
}

// A Conn talking to a Conn: the server's handler answers, fails, and calls
// back the client.
func TestConnToConn(t *testing.T) {
	var notes []string
	var notesMu sync.Mutex
	noted := make(chan struct{}, 1000)
	double := make(chan error, 1)
	server := &mcpstdio.ConnConfig{Handler: func(ctx context.Context, req *mcpstdio.Request) {
		if req.IsNotification() {
			if req.Respond("x") != mcpstdio.ErrResponded {
				t.Error("a notification took an answer")
			}
			notesMu.Lock()
			notes = append(notes, req.Method+string(req.Params))
			notesMu.Unlock()
			noted <- struct{}{}
			return
		}
		switch req.Method {
		case "echo":
			req.Respond(req.Params)
		case "value":
			req.Respond(map[string]any{"id": req.ID, "html": "<&>"})
		case "fail":
			req.RespondError(-32000, "nope \"quoted\"")
		case "faildata":
			req.RespondErr(&mcpstdio.ResponseError{Code: 7, Message: "with data", Data: json.RawMessage(`{"a":[1,2]}`)})
		case "nul":
			req.RespondError(1, "a\x00b")
		case "silent":
		case "double":
			req.Respond(1)
			double <- req.Respond(2)
		case "bad":
			err := req.Respond(json.RawMessage(`{`))
			if !errors.Is(err, mcpstdio.ErrInvalidJSON) {
				t.Errorf("Respond(invalid) = %v", err)
			}
			req.RespondError(1, "answered after all")
		case "async":
			go func() { req.Respond("later") }()
			time.Sleep(10 * time.Millisecond) // answered before return
		case "callback":
			res, err := req.Conn().Request(ctx, "client/hello", req.Params)
			if err != nil {
				req.RespondError(2, err.Error())
				return
			}
			req.Respond(res)
		default:
			req.RespondError(mcpstdio.CodeMethodNotFound, "no "+req.Method)
		}
	}}
	client := &mcpstdio.ConnConfig{Handler: func(ctx context.Context, req *mcpstdio.Request) {
		req.Respond(map[string]json.RawMessage{"hello": req.Params})
	}}
	c, _ := connPair(t, client, server)
	ctx := context.Background()

	check := func(method string, params any, want string, wantErr *mcpstdio.ResponseError) {
		t.Helper()
		res, err := c.Request(ctx, method, params)
		if wantErr != nil {
			var e *mcpstdio.ResponseError
			if !errors.As(err, &e) || e.Code != wantErr.Code || e.Message != wantErr.Message || string(e.Data) != string(wantErr.Data) {
				t.Fatalf("%s: %v, want %v", method, err, wantErr)
			}
			return
		}
		if err != nil || string(res) != want {
			t.Fatalf("%s: %s, %v; want %s", method, res, err, want)
		}
	}
	check("echo", map[string]int{"x": 1}, `{"x":1}`, nil)
	check("echo", nil, `null`, nil)
	check("value", nil, `{"html":"<&>","id":3}`, nil)
	check("fail", nil, "", &mcpstdio.ResponseError{Code: -32000, Message: `nope "quoted"`})
	check("faildata", nil, "", &mcpstdio.ResponseError{Code: 7, Message: "with data", Data: json.RawMessage(`{"a":[1,2]}`)})
	check("nul", nil, "", &mcpstdio.ResponseError{Code: 1, Message: "a\x00b"})
	check("silent", nil, "", &mcpstdio.ResponseError{Code: mcpstdio.CodeInternalError, Message: "the handler returned without answering"})
	check("double", nil, `1`, nil)
	if err := <-double; err != mcpstdio.ErrResponded {
		t.Fatalf("second Respond = %v", err)
	}
	check("bad", nil, "", &mcpstdio.ResponseError{Code: 1, Message: "answered after all"})
	check("async", nil, `"later"`, nil)
	check("callback", []int{4}, `{"hello":[4]}`, nil)
	check("tools/\u00e9", nil, "", &mcpstdio.ResponseError{Code: mcpstdio.CodeMethodNotFound, Message: "no tools/\u00e9"})

	// Notifications arrive in order.
	const n = 200
	for i := 0; i < n; i++ {
		if err := c.Notify(ctx, "note", []int{i}); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < n; i++ {
		select {
		case <-noted:
		case <-time.After(10 * time.Second):
			t.Fatalf("%d notifications of %d", i, n)
		}
	}
	notesMu.Lock()
	defer notesMu.Unlock()
	for i, got := range notes {
		if want := fmt.Sprintf("note[%d]", i); got != want {
			t.Fatalf("notification %d: %s, want %s", i, got, want)
		}
	}
}

// Many goroutines, many requests: every answer reaches its caller.
func TestConnConcurrentRequests(t *testing.T) {
	goroutines, perGoroutine := 50, 200
	if testing.Short() {
		goroutines, perGoroutine = 10, 20
	}
	server := &mcpstdio.ConnConfig{Handler: func(ctx context.Context, req *mcpstdio.Request) {
		req.Respond(req.Params)
	}}
	c, s := connPair(t, nil, server)
	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < perGoroutine; i++ {
				want := fmt.Sprintf(`{"g":%d,"i":%d,"pad":"%s"}`, g, i, strings.Repeat("x", (g*31+i)%300))
				res, err := c.Request(context.Background(), "echo", json.RawMessage(want))
				if err != nil || string(res) != want {
					errs <- fmt.Errorf("goroutine %d request %d: %s, %v", g, i, res, err)
					return
				}
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if st := c.Stats(); st != (mcpstdio.ConnStats{}) {
		t.Fatalf("client Stats = %+v", st)
	}
	if st := s.Stats(); st != (mcpstdio.ConnStats{}) {
		t.Fatalf("server Stats = %+v", st)
	}
}

// Close is idempotent, safe concurrently with itself and with Requests,
// which then return ErrClosed.
func TestConnCloseConcurrentWithRequests(t *testing.T) {
	server := &mcpstdio.ConnConfig{Handler: func(ctx context.Context, req *mcpstdio.Request) {
		req.Respond(req.Params)
	}}
	c, s := connPair(t, nil, server)
	var ok atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for g := 0; g < 20; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; ; i++ {
				want := fmt.Sprintf(`[%d,%d]`, g, i)
				res, err := c.Request(context.Background(), "echo", json.RawMessage(want))
				if err == nil && string(res) == want {
					ok.Add(1)
					continue
				}
				if !errors.Is(err, mcpstdio.ErrClosed) {
					errs <- fmt.Errorf("Request = %s, %v", res, err)
				}
				if err := c.Notify(context.Background(), "n", nil); !errors.Is(err, mcpstdio.ErrClosed) {
					errs <- fmt.Errorf("Notify after close = %v", err)
				}
				return
			}
		}(g)
	}
	for ok.Load() < 100 {
		time.Sleep(time.Millisecond)
	}
	var closers sync.WaitGroup
	for i := 0; i < 3; i++ {
		closers.Add(1)
		go func() {
			defer closers.Done()
			if err := c.Close(); err != nil {
				errs <- fmt.Errorf("Close = %v", err)
			}
		}()
	}
	closers.Wait()
	wg.Wait()
	select {
	case <-c.Done():
	default:
		t.Fatal("Done not closed after Close")
	}
	// The server saw our end: it ended too.
	select {
	case <-s.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the server did not see the client's end")
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Request(context.Background(), "echo", nil); !errors.Is(err, mcpstdio.ErrClosed) {
		t.Fatalf("Request after Close = %v", err)
	}
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// The peer's end of stream fails pending Requests with ErrClosed and ends
// the Conn; later sends are refused.
func TestConnPeerEOF(t *testing.T) {
	c, p := newFakePeer(t, nil)
	var results []<-chan callResult
	for i := 1; i <= 5; i++ {
		results = append(results, request(c, context.Background(), "wait", nil))
	}
	for i := 0; i < 5; i++ {
		p.next()
	}
	// A last line without a newline still counts.
	io.WriteString(p.out, `{"jsonrpc":"2.0","id":3,"result":"three"}`)
	p.out.Close()
	answered := 0
	for _, ch := range results {
		r := wait(t, ch)
		if r.err == nil && string(r.res) == `"three"` {
			answered++
		} else if !errors.Is(r.err, mcpstdio.ErrClosed) {
			t.Fatalf("Request = %s, %v", r.res, r.err)
		}
	}
	if answered != 1 {
		t.Fatalf("%d answered", answered)
	}
	select {
	case <-c.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("Done not closed")
	}
	// The Conn ended its stream too.
	if l, ok := <-p.lines; ok {
		t.Fatalf("line %s", l)
	}
	if err := c.Notify(context.Background(), "n", nil); !errors.Is(err, mcpstdio.ErrClosed) {
		t.Fatalf("Notify = %v", err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
}

// Close waits for the peer's end for CloseGrace at most; then pending
// Requests fail.
func TestConnCloseGrace(t *testing.T) {
	c, p := newFakePeer(t, &mcpstdio.ConnConfig{CloseGrace: 100 * time.Millisecond})
	res := request(c, context.Background(), "wait", nil)
	p.next()
	start := time.Now()
	closed := make(chan error, 1)
	go func() { closed <- c.Close() }()
	// Our end of stream comes at once; an answer during the grace is
	// still delivered... (sent before the grace ends)
	if _, ok := <-p.lines; ok {
		t.Fatal("line after Close")
	}
	p.send(`{"jsonrpc":"2.0","id":1,"result":1}`)
	if r := wait(t, res); r.err != nil || string(r.res) != "1" {
		t.Fatalf("Request = %s, %v", r.res, r.err)
	}
	// ... and the peer never ends its stream: Close returns after the grace.
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 100*time.Millisecond || d > 5*time.Second {
		t.Fatalf("Close took %v", d)
	}
}

// The peer's notifications/cancelled cancels the handler's context, and the
// cancelled request gets no answer.
func TestConnPeerCancelsHandler(t *testing.T) {
	started := make(chan struct{})
	handlerErr := make(chan error, 2)
	c, p := newFakePeer(t, &mcpstdio.ConnConfig{Handler: func(ctx context.Context, req *mcpstdio.Request) {
		switch req.Method {
		case "slow":
			close(started)
			<-ctx.Done()
			handlerErr <- ctx.Err()
			handlerErr <- req.Respond("too late")
		case "ping":
			req.Respond(map[string]any{})
		}
	}})
	_ = c
	p.send(`{"jsonrpc":"2.0","id":"a","method":"slow"}`)
	<-started
	p.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"a","reason":"user"}}`)
	if err := <-handlerErr; err != context.Canceled {
		t.Fatalf("handler ctx: %v", err)
	}
	if err := <-handlerErr; err != nil {
		t.Fatalf("Respond after the peer's cancellation = %v", err)
	}
	p.send(`{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	p.expect(`{"jsonrpc":"2.0","id":2,"result":{}}`)
	p.expectNothing(30 * time.Millisecond)
}

// Lines that are not routed go to Unhandled, in stream order, and are
// counted.
func TestConnUnhandled(t *testing.T) {
	got := make(chan mcpstdio.Message, 10)
	c, p := newFakePeer(t, &mcpstdio.ConnConfig{MaxLineLen: 64, Unhandled: func(m mcpstdio.Message) { got <- m }})
	p.send(`not json`)
	p.send(`{"a":1}`)
	p.send(`[{"jsonrpc":"2.0","method":"x"}]`)
	p.send(`{"jsonrpc":"2.0","id":99,"error":{"code":1,"message":"m"}}`)
	p.send(`{"jsonrpc":"2.0","id":1,"method":"` + strings.Repeat("x", 100) + `"}`)
	want := []mcpstdio.Message{
		{Kind: mcpstdio.KindParseError, Data: []byte(`not json`), Len: 8},
		{Kind: mcpstdio.KindInvalidJSONRPC, Data: []byte(`{"a":1}`), Len: 7},
		{Kind: mcpstdio.KindMessage, RPCKind: mcpstdio.RPCBatch, Data: []byte(`[{"jsonrpc":"2.0","method":"x"}]`), Len: 32},
		{Kind: mcpstdio.KindMessage, RPCKind: mcpstdio.RPCError, Data: []byte(`{"jsonrpc":"2.0","id":99,"error":{"code":1,"message":"m"}}`), Len: 58},
		{Kind: mcpstdio.KindTooLong, Len: 65},
	}
	for i, w := range want {
		select {
		case m := <-got:
			if m.Kind != w.Kind || m.RPCKind != w.RPCKind || string(m.Data) != string(w.Data) || (w.Kind != mcpstdio.KindTooLong && m.Len != w.Len) || (w.Kind == mcpstdio.KindTooLong && m.Len <= 64) {
				t.Fatalf("item %d: %+v (%s), want %+v", i, m, m.Data, w)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("item %d did not come", i)
		}
	}
	if st := c.Stats(); st != (mcpstdio.ConnStats{StrayResponses: 1, Invalid: 3, Batches: 1}) {
		t.Fatalf("Stats = %+v", st)
	}
}

// failingWriter fails after a number of writes.
type failingWriter struct {
	mu   sync.Mutex
	left int
}

var errWrite = errors.New("write failed")

func (w *failingWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.left == 0 {
		return 0, errWrite
	}
	w.left--
	return len(p), nil
}

// A failed write ends the connection at once: pending Requests fail, and
// Close returns the write's error.
func TestConnWriteError(t *testing.T) {
	r, pw := io.Pipe()
	defer pw.Close()
	c, err := mcpstdio.NewConn(r, &failingWriter{left: 1}, &mcpstdio.ConnConfig{CloseGrace: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	first := request(c, context.Background(), "one", nil)
	time.Sleep(20 * time.Millisecond) // written
	second := request(c, context.Background(), "two", nil)
	for _, ch := range []<-chan callResult{first, second} {
		if r := wait(t, ch); !errors.Is(r.err, mcpstdio.ErrClosed) {
			t.Fatalf("Request = %v", r.err)
		}
	}
	select {
	case <-c.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("Done not closed")
	}
	if err := c.Close(); err != errWrite {
		t.Fatalf("Close = %v", err)
	}
}

// A read error other than io.EOF ends the connection; Close returns it.
func TestConnReadError(t *testing.T) {
	r, pw := io.Pipe()
	errRead := errors.New("read failed")
	c, err := mcpstdio.NewConn(r, io.Discard, nil)
	if err != nil {
		t.Fatal(err)
	}
	res := request(c, context.Background(), "x", nil)
	time.Sleep(10 * time.Millisecond)
	pw.CloseWithError(errRead)
	if r := wait(t, res); !errors.Is(r.err, mcpstdio.ErrClosed) {
		t.Fatalf("Request = %v", r.err)
	}
	if err := c.Close(); err != errRead {
		t.Fatalf("Close = %v", err)
	}
}

// With a small output bound, sends wait for the writer instead of failing,
// and a wait ends with ctx.
func TestConnBackpressure(t *testing.T) {
	c, p := newFakePeer(t, &mcpstdio.ConnConfig{MaxQueued: 256, CloseGrace: 100 * time.Millisecond})
	const goroutines, each = 4, 100
	var wg sync.WaitGroup
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < each; i++ {
				if err := c.Notify(context.Background(), "n", map[string]string{"pad": strings.Repeat("y", 100)}); err != nil {
					t.Error(err)
					return
				}
			}
		}(g)
	}
	for i := 0; i < goroutines*each; i++ {
		if i%50 == 0 {
			time.Sleep(time.Millisecond) // a slow reader
		}
		p.next()
	}
	wg.Wait()
	// Nobody reads now: the pipe holds the writer, the queue fills, and a
	// Notify waits until its ctx is done.
	var err error
	for i := 0; i < 100000 && err == nil; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		err = c.Notify(ctx, "n", map[string]string{"pad": strings.Repeat("z", 100)})
		cancel()
	}
	if err != context.DeadlineExceeded {
		t.Fatalf("Notify = %v", err)
	}
}

// A socket-like object serving both ways (net.Pipe) is closed once, by
// Close.
func TestConnSameReadWriter(t *testing.T) {
	a, b := net.Pipe()
	server := &mcpstdio.ConnConfig{Handler: func(ctx context.Context, req *mcpstdio.Request) { req.Respond("pong") }}
	c, err := mcpstdio.NewConn(a, a, &mcpstdio.ConnConfig{CloseGrace: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	s, err := mcpstdio.NewConn(b, b, server)
	if err != nil {
		t.Fatal(err)
	}
	if res, err := c.Request(context.Background(), "ping", nil); err != nil || string(res) != `"pong"` {
		t.Fatalf("Request = %s, %v", res, err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-s.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the server did not see the end")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

// Conns leave no goroutine behind once closed, whichever way they end.
func TestConnNoGoroutineLeak(t *testing.T) {
	before := runtime.NumGoroutine()
	for i := 0; i < 20; i++ {
		func() {
			server := &mcpstdio.ConnConfig{Handler: func(ctx context.Context, req *mcpstdio.Request) {
				if !req.IsNotification() {
					req.Respond(req.Params)
				}
			}}
			cr, sw := io.Pipe()
			sr, cw := io.Pipe()
			c, _ := mcpstdio.NewConn(cr, cw, nil)
			s, _ := mcpstdio.NewConn(sr, sw, server)
			for j := 0; j < 10; j++ {
				if _, err := c.Request(context.Background(), "echo", []int{j}); err != nil {
					t.Fatal(err)
				}
				c.Notify(context.Background(), "n", nil)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
			c.Request(ctx, "echo", nil)
			cancel()
			switch i % 3 {
			case 0: // the client closes; the server sees its end
				c.Close()
				<-s.Done()
				s.Close()
			case 1: // the server closes first
				s.Close()
				<-c.Done()
				c.Close()
			case 2: // both at once
				var wg sync.WaitGroup
				wg.Add(2)
				go func() { defer wg.Done(); c.Close() }()
				go func() { defer wg.Done(); s.Close() }()
				wg.Wait()
			}
		}()
	}
	// Readers that are not io.Closers end with their stream.
	c, err := mcpstdio.NewConn(strings.NewReader(`{"jsonrpc":"2.0","method":"x"}`), io.Discard, nil)
	if err != nil {
		t.Fatal(err)
	}
	<-c.Done()
	c.Close()
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("%d goroutines, %d before:\n%s", runtime.NumGoroutine(), before, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Two Conns over io.Pipe: one request, one answer, one at a time.
func BenchmarkConnRoundTrip(b *testing.B) {
	server := &mcpstdio.ConnConfig{Handler: func(ctx context.Context, req *mcpstdio.Request) {
		req.Respond(json.RawMessage(`{"ok":true}`))
	}}
	c, _ := connPair(b, nil, server)
	params := json.RawMessage(`{"name":"tool","arguments":{"x":1}}`)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := c.Request(ctx, "tools/call", params); err != nil {
			b.Fatal(err)
		}
	}
}

// The same with requests from many goroutines at once.
func BenchmarkConnRoundTripParallel(b *testing.B) {
	server := &mcpstdio.ConnConfig{Handler: func(ctx context.Context, req *mcpstdio.Request) {
		req.Respond(json.RawMessage(`{"ok":true}`))
	}}
	c, _ := connPair(b, nil, server)
	params := json.RawMessage(`{"name":"tool","arguments":{"x":1}}`)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		ctx := context.Background()
		for pb.Next() {
			if _, err := c.Request(ctx, "tools/call", params); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// A subscriptions/listen Request (MCP 2026-07-28): its stream's
// notifications reach the Handler as before; the server's
// notifications/cancelled for it ends the Request with ErrSubscriptionEnded
// (and reaches the Handler too).
func TestConnSubscriptionEndedByTheServer(t *testing.T) {
	got := make(chan string, 8)
	cfg := &mcpstdio.ConnConfig{Handler: func(ctx context.Context, req *mcpstdio.Request) {
		got <- req.Method
	}}
	c, p := newFakePeer(t, cfg)
	res := request(c, context.Background(), "subscriptions/listen", json.RawMessage(`{}`))
	p.expect(`{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{}}`)
	p.send(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":1}}}`)
	select {
	case m := <-got:
		if m != "notifications/tools/list_changed" {
			t.Fatalf("handler got %q", m)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the stream's notification never reached the handler")
	}
	p.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"bye"}}`)
	select {
	case r := <-res:
		if !errors.Is(r.err, mcpstdio.ErrSubscriptionEnded) {
			t.Fatalf("Request = %s, %v; want ErrSubscriptionEnded", r.res, r.err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the listen Request did not end")
	}
	select {
	case m := <-got:
		if m != "notifications/cancelled" {
			t.Fatalf("handler got %q", m)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the cancellation never reached the handler")
	}
}
