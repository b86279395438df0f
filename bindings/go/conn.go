package mcpstdio

/*
#include "mcp_stdio.h"

// The Conn holds its transport as an integer and calls the library through
// these wrappers. cgo checks every pointer argument of a call
// (_cgoCheckPointer), and a C.conn_t, a pointer to an incomplete C
// type, is boxed into an interface for it: 8 bytes allocated per call, per
// message. An integer is not checked. mcp_transport_request returns the id
// by value, so no Go variable escapes to the heap for it.
typedef uintptr_t conn_t;

static inline conn_t conn_new(void) { return (conn_t)mcp_transport_new(); }
static inline void conn_free(conn_t t) { mcp_transport_free((McpTransport *)t); }
static inline McpStatus conn_set_max_line_len(conn_t t, size_t n) {
	return mcp_transport_set_max_line_len((McpTransport *)t, n);
}
static inline McpStatus conn_set_max_queued(conn_t t, size_t n) {
	return mcp_transport_set_max_queued((McpTransport *)t, n);
}
static inline McpStatus conn_send(conn_t t, const uint8_t *json, size_t len) {
	return mcp_transport_send((McpTransport *)t, json, len);
}
typedef struct { McpStatus status; int64_t id; } conn_request_result;
static inline conn_request_result conn_request(conn_t t, const char *method,
		const uint8_t *params, size_t params_len, uint32_t timeout_ms) {
	conn_request_result r = { 0, -1 };
	r.status = mcp_transport_request((McpTransport *)t, method, params, params_len, timeout_ms, &r.id);
	return r;
}
static inline McpStatus conn_notify(conn_t t, const char *method, const uint8_t *params, size_t len) {
	return mcp_transport_notify((McpTransport *)t, method, params, len);
}
static inline McpStatus conn_respond(conn_t t, const uint8_t *id, size_t id_len,
		const uint8_t *result, size_t result_len) {
	return mcp_transport_respond((McpTransport *)t, id, id_len, result, result_len);
}
static inline McpStatus conn_respond_error(conn_t t, const uint8_t *id, size_t id_len,
		int64_t code, const char *message) {
	return mcp_transport_respond_error((McpTransport *)t, id, id_len, code, message);
}
static inline McpStatus conn_cancel(conn_t t, int64_t id, const char *reason) {
	return mcp_transport_cancel((McpTransport *)t, id, reason);
}
static inline McpStatus conn_close(conn_t t, uint32_t grace_ms) {
	return mcp_transport_close((McpTransport *)t, grace_ms);
}
static inline McpStatus conn_receive(conn_t t, const uint8_t *data, size_t len) {
	return mcp_transport_receive((McpTransport *)t, data, len);
}
static inline McpStatus conn_receive_end(conn_t t) {
	return mcp_transport_receive_end((McpTransport *)t);
}
static inline size_t conn_read_output(conn_t t, uint8_t *buf, size_t cap) {
	size_t n = 0;
	mcp_transport_read_output((McpTransport *)t, buf, cap, &n);
	return n;
}
static inline McpStatus conn_next_event(conn_t t, McpEvent *ev) {
	return mcp_transport_next_event((McpTransport *)t, 0, ev);
}
// The milliseconds to the next deadline (-1: none).
static inline int32_t conn_next_deadline(conn_t t) {
	int32_t ms = -1;
	if (mcp_transport_next_deadline((McpTransport *)t, &ms) != MCP_STATUS_OK) {
		return -1;
	}
	return ms;
}
*/
import "C"

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
)

// Handler answers the peer's requests and takes its notifications. req.ID
// is nil for a notification, which takes no answer.
//
// A request is answered with req.Respond, req.RespondError or
// req.RespondErr, once, before the handler returns (from the handler's
// goroutine or another one); a handler that returns without answering gets
// an automatic error response, code CodeInternalError. ctx is done when the
// peer cancels the request (notifications/cancelled with its id), when the
// handler has returned, and when the connection ends.
//
// Requests are handled concurrently, each in a goroutine of its own, so a
// slow request holds up nothing else. Notifications (and the
// ConnConfig.Unhandled callback) run one at a time, in the order they
// arrived, on one goroutine of the Conn: a notification handler that blocks
// delays later notifications, never requests or responses.
type Handler func(ctx context.Context, req *Request)

// ConnConfig configures a Conn. The zero value is usable: no handler
// (every request of the peer is answered with CodeMethodNotFound,
// notifications are dropped), the default limits, a 2 s closing grace.
type ConnConfig struct {
	// Handler answers the peer's requests and takes its notifications.
	Handler Handler

	// Unhandled, when set, receives the lines of the peer that are not a
	// request, a notification or the answer to a pending Request: responses
	// to no pending request (RPCKind RPCResponse or RPCError: a late answer
	// after a timeout or a cancellation, a duplicate, an unknown id),
	// batches (RPCBatch, which MCP no longer allows) and invalid lines
	// (Kind KindParseError, KindTooLong, KindInvalidJSONRPC). It runs on
	// the notifications' goroutine, in stream order. Without it these lines
	// are dropped; Conn.Stats counts them either way.
	Unhandled func(m Message)

	// CloseGrace is how long Close (or a failed write) waits for the peer to
	// end its stream before pending Requests fail and the connection ends,
	// and again for a stuck Write before w is closed under it. 0 means 2 s;
	// a negative value means no wait.
	CloseGrace time.Duration

	// MaxLineLen is the longest line accepted from the peer, in bytes
	// (longer ones are reported to Unhandled as KindTooLong and dropped).
	// 0 means the default, 64 MiB; a negative value means no limit.
	MaxLineLen int

	// MaxQueued bounds the bytes queued for the peer but not yet written.
	// A send that would pass it waits (Request and Notify until their ctx
	// is done) for the writer to drain the queue. 0 means the default,
	// 64 MiB.
	MaxQueued int
}

// Conn is one MCP stdio connection over an io.Reader (the peer's messages)
// and an io.Writer (ours), driven by goroutines over the library's memory
// transport (mcp_transport_new): the library frames the lines, numbers our
// requests, matches the answers, times requests out and writes their
// notifications/cancelled; the Conn moves the bytes and routes the events.
//
// All methods are safe for concurrent use.
//
// A Conn runs three goroutines of its own: a reader (r.Read, 64 KiB at a
// time, into the transport), a writer (what the transport queued, into w,
// through one reused 64 KiB buffer) and a timer (the transport's deadlines:
// request timeouts, the closing grace); plus one for notifications and one
// per request of the peer being handled.
//
// The connection ends when Close is called, when the peer ends its stream
// (r returns io.EOF, or any other error), or when a write to w fails. Then
// pending Requests fail with ErrClosed, handler contexts are cancelled,
// Done is closed, what was queued is written and w is closed if it is an
// io.Closer (the peer sees the end of our stream). (The Conn of a
// CommandConn whose server ended by itself fails them, and later sends,
// with an error wrapping ErrClosed that says how: a *ServerExitedError or
// ErrStdoutClosed.) The C transport is
// freed once the writer is done with it. Call Close in every case: it also
// closes r (if an io.Closer) and waits for the Conn's goroutines.
type Conn struct {
	r io.Reader
	w io.Writer

	handler   Handler
	unhandled func(Message)
	grace     time.Duration
	sameRW    bool // r and w are one object: closed once, by Close

	// life guards t: read-locked around every C call, write-locked to free.
	life sync.RWMutex
	t    C.conn_t // the McpTransport; 0 once freed

	// rmu makes the receiving calls (receive, receive_end, next_event,
	// read_output, poll_fds) one at a time; the fields below it are its.
	rmu sync.Mutex
	ev  C.McpEvent

	// mu guards pending (our Requests waiting, by id) and inflight (the
	// peer's requests being handled, by id token).
	mu       sync.Mutex
	pending  map[int64]chan callResult
	inflight map[string]*Request

	wakeW    chan struct{} // the writer has output to write (capacity 1)
	kickT    chan struct{} // the timer must ask for the next deadline (capacity 1)
	nextWake atomic.Int64  // when the timer fires (UnixNano); MaxInt64: not armed

	drainMu sync.Mutex
	drained chan struct{} // closed by the writer when it took output; created by a waiting sender

	// The notification queue.
	qmu   sync.Mutex
	queue []queued
	qsig  chan struct{} // capacity 1

	base       context.Context // the handlers' contexts derive from it
	cancelBase context.CancelFunc

	closeOnce   sync.Once
	closingOnce sync.Once
	closing     chan struct{} // closed when the writer is to flush and close w
	doneOnce    sync.Once
	done        chan struct{} // closed at MCP_EVENT_CLOSED
	wOnce       sync.Once
	rOnce       sync.Once

	readerExited chan struct{}
	writerExited chan struct{}
	timerExited  chan struct{}

	errMu sync.Mutex
	err   error // the first I/O error

	// A CommandConn's: how the peer's side ended (see endByPeer). nil for
	// a Conn of NewConn.
	peerEnd    func() error
	endOnce    sync.Once
	hostClosed atomic.Bool // Close was called (by the host: not a peer's end)
	endErr     error       // under mu: what ErrClosed becomes (see closedErr)

	strays, invalid, batches atomic.Uint64
}

// ConnStats counts the peer's lines that a Conn did not route (see
// ConnConfig.Unhandled).
type ConnStats struct {
	// StrayResponses: answers to no pending Request (late after a timeout
	// or a cancellation, duplicates, unknown ids).
	StrayResponses uint64
	// Invalid: lines that are not JSON-RPC messages (not JSON, too long,
	// JSON but not JSON-RPC).
	Invalid uint64
	// Batches: JSON-RPC batches, which MCP does not allow.
	Batches uint64
}

type callResult struct {
	result json.RawMessage
	err    error
}

// queued is one item for the notifications' goroutine: a notification or
// an unhandled line.
type queued struct {
	req *Request
	msg Message
}

// The JSON-RPC error codes.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternalError  = -32603
)

// ResponseError is a JSON-RPC error response: the error a Request returns
// when the peer answered with one (match it with errors.As), or the one to
// send with Request.RespondErr. Code is one of the Code constants or an
// application's own.
type ResponseError struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"` // nil when absent
}

func (e *ResponseError) Error() string {
	return fmt.Sprintf("mcpstdio: error response %d: %s", e.Code, e.Message)
}

// ErrResponded is returned by the Respond methods of a Request already
// answered, and of a notification, which takes no answer.
var ErrResponded = errors.New("mcpstdio: request already answered (or a notification)")

// Request is a request or a notification from the peer, given to the
// Handler.
type Request struct {
	// Method is the method name, unescaped.
	Method string
	// Params is the params value as on the wire, nil when absent.
	Params json.RawMessage
	// ID is the request's id token as on the wire (7, "abc"); nil for a
	// notification.
	ID json.RawMessage

	conn   *Conn
	cancel context.CancelFunc // the handler's context

	mu            sync.Mutex // held while answering
	answered      bool
	peerCancelled atomic.Bool // set by the reader: never waits for mu
}

// Conn returns the connection the request came on: a handler may send
// requests and notifications of its own through it.
func (r *Request) Conn() *Conn { return r.conn }

// IsNotification reports whether the peer expects no answer.
func (r *Request) IsNotification() bool { return r.ID == nil }

// Respond answers the request with result: a json.RawMessage is sent as is
// (it must be one JSON text; nil is null), anything else is marshalled with
// encoding/json (without HTML escaping). It returns ErrResponded when the
// request was answered already (or is a notification), ErrClosed when the
// connection is closed or closing, a *StatusError matching ErrInvalidJSON
// for a json.RawMessage that is not JSON (the request stays unanswered), or
// the marshalling error.
//
// Once the peer has cancelled the request, the answers send nothing and
// return nil: MCP asks not to answer a cancelled request.
func (r *Request) Respond(result any) error {
	res, err := marshalValue(result)
	if err != nil {
		return err
	}
	return r.answer(func(t C.conn_t) C.McpStatus {
		return C.conn_respond(t, bytesPtr(r.ID), C.size_t(len(r.ID)), bytesPtr(res), C.size_t(len(res)))
	})
}

// RespondError answers the request with the error response
// {"code":code,"message":message}. Returns as Respond.
func (r *Request) RespondError(code int64, message string) error {
	if strings.IndexByte(message, 0) >= 0 {
		return r.RespondErr(&ResponseError{Code: code, Message: message})
	}
	msg := cString(message)
	return r.answer(func(t C.conn_t) C.McpStatus {
		return C.conn_respond_error(t, bytesPtr(r.ID), C.size_t(len(r.ID)), C.int64_t(code), (*C.char)(unsafe.Pointer(&msg[0])))
	})
}

// RespondErr answers the request with the error response e, its Data
// included. Returns as Respond.
func (r *Request) RespondErr(e *ResponseError) error {
	if e.Data == nil && strings.IndexByte(e.Message, 0) < 0 {
		return r.RespondError(e.Code, e.Message)
	}
	line, err := marshalValue(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   *ResponseError  `json:"error"`
	}{"2.0", r.ID, e})
	if err != nil {
		return err
	}
	return r.answer(func(t C.conn_t) C.McpStatus {
		return C.conn_send(t, bytesPtr(line), C.size_t(len(line)))
	})
}

// answer sends an answer once.
func (r *Request) answer(send func(t C.conn_t) C.McpStatus) error {
	if r.ID == nil {
		return ErrResponded
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.answered {
		return ErrResponded
	}
	if r.peerCancelled.Load() {
		r.answered = true
		return nil
	}
	err := r.conn.send(context.Background(), send)
	if err == nil {
		r.answered = true
	}
	return err
}

// NewConn returns a connection reading the peer's messages from r and
// writing ours to w, and starts its goroutines. cfg may be nil.
//
// The Conn owns r and w from now on: it closes w when the connection ends
// and r at Close, if they are io.Closers (wrap them in a type with only
// Read or Write to keep them open). When r and w are the same object (a
// socket), it is closed once, by Close; when the connection ends, only its
// write side is closed, if it has a CloseWrite method.
func NewConn(r io.Reader, w io.Writer, cfg *ConnConfig) (*Conn, error) {
	return newConn(r, w, cfg, nil)
}

// newConn is NewConn with the peerEnd hook of a CommandConn: called once
// when the peer's side ends before the host closed the Conn, it returns
// the error that pending Requests and later sends get instead of ErrClosed
// (nil: ErrClosed). It may wait a while; the end waits for it.
func newConn(r io.Reader, w io.Writer, cfg *ConnConfig, peerEnd func() error) (*Conn, error) {
	if cfg == nil {
		cfg = &ConnConfig{}
	}
	grace := cfg.CloseGrace
	if grace == 0 {
		grace = 2 * time.Second
	} else if grace < 0 {
		grace = 0
	}
	maxLine := C.size_t(C.MCP_READER_DEFAULT_MAX_LINE_LEN)
	if cfg.MaxLineLen < 0 {
		maxLine = ^C.size_t(0)
	} else if cfg.MaxLineLen > 0 {
		maxLine = C.size_t(cfg.MaxLineLen)
	}
	if cfg.MaxQueued < 0 {
		return nil, ErrInvalidArgument
	}
	t := C.conn_new()
	if t == 0 {
		return nil, ErrOutOfMemory
	}
	if st := C.conn_set_max_line_len(t, maxLine); st != C.MCP_STATUS_OK {
		C.conn_free(t)
		return nil, statusError(st)
	}
	if cfg.MaxQueued > 0 {
		if st := C.conn_set_max_queued(t, C.size_t(cfg.MaxQueued)); st != C.MCP_STATUS_OK {
			C.conn_free(t)
			return nil, statusError(st)
		}
	}
	c := &Conn{
		r:            r,
		w:            w,
		handler:      cfg.Handler,
		unhandled:    cfg.Unhandled,
		grace:        grace,
		sameRW:       sameObject(r, w),
		t:            t,
		pending:      make(map[int64]chan callResult),
		inflight:     make(map[string]*Request),
		wakeW:        make(chan struct{}, 1),
		kickT:        make(chan struct{}, 1),
		qsig:         make(chan struct{}, 1),
		closing:      make(chan struct{}),
		done:         make(chan struct{}),
		readerExited: make(chan struct{}),
		writerExited: make(chan struct{}),
		timerExited:  make(chan struct{}),
		peerEnd:      peerEnd,
	}
	if c.handler == nil {
		c.handler = methodNotFound
	}
	c.nextWake.Store(math.MaxInt64)
	c.base, c.cancelBase = context.WithCancel(context.Background())
	go c.readLoop()
	go c.writeLoop()
	go c.timerLoop()
	go c.dispatchLoop()
	return c, nil
}

func methodNotFound(_ context.Context, req *Request) {
	if !req.IsNotification() {
		req.RespondError(CodeMethodNotFound, "Method not found")
	}
}

// sameObject reports whether r and w are the same comparable object.
func sameObject(r io.Reader, w io.Writer) bool {
	if r == nil || w == nil || !reflect.TypeOf(r).Comparable() || reflect.TypeOf(r) != reflect.TypeOf(w) {
		return false
	}
	return any(r) == any(w)
}

// Request sends the request {"jsonrpc":"2.0","id":N,"method":method,
// "params":params} and waits for its answer: the result as on the wire, or
// an error.
//
// params: nil (or a nil json.RawMessage, or a value marshalling to null)
// leaves "params" out; a json.RawMessage is sent as is; anything else is
// marshalled with encoding/json. It must be a JSON object or array.
//
// Errors:
//   - *ResponseError: the peer answered with an error response;
//   - ctx.Err(): ctx was done first. When ctx has a deadline, the library
//     times the request out at that deadline (rounded up to the
//     millisecond) and sends notifications/cancelled with reason "request
//     timed out"; when ctx is cancelled, the Conn cancels the request
//     through the library, which sends notifications/cancelled with reason
//     ctx.Err().Error(). Either way the cancellation is sent once, and an
//     answer that comes later goes to Unhandled. An "initialize" request is
//     never cancelled (MCP forbids it): the library sends nothing for it.
//     If the answer had already arrived when ctx was cancelled, it is
//     returned instead;
//   - ErrClosed: the connection was closed, or closing, before the answer
//     came (or before the request could be sent). On a CommandConn whose
//     server ended by itself, an error wrapping ErrClosed (match it with
//     errors.Is) that says how: a *ServerExitedError (errors.As) when it
//     exited, ErrStdoutClosed when it closed its stdout and lives on;
//   - a *StatusError (ErrInvalidText: method not UTF-8 or holding a NUL
//     byte; ErrInvalidParams: params not an object or array; both also
//     match ErrInvalidArgument; ErrInvalidJSON: params not JSON),
//     or the marshalling error of params; nothing was sent then.
func (c *Conn) Request(ctx context.Context, method string, params any) (json.RawMessage, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m, err := cMethod(method)
	if err != nil {
		return nil, err
	}
	p, err := marshalParams(params)
	if err != nil {
		return nil, err
	}
	var timeout uint32
	var deadline int64
	if d, ok := ctx.Deadline(); ok {
		rem := time.Until(d)
		if rem <= 0 {
			return nil, context.DeadlineExceeded
		}
		ms := (rem + time.Millisecond - 1) / time.Millisecond
		if ms <= math.MaxUint32 {
			timeout = uint32(ms)
			deadline = time.Now().Add(ms * time.Millisecond).UnixNano()
		}
	}
	ch := make(chan callResult, 1)
	var id int64
	err = c.send(ctx, func(t C.conn_t) C.McpStatus {
		c.mu.Lock()
		r := C.conn_request(t, (*C.char)(unsafe.Pointer(&m[0])), bytesPtr(p), C.size_t(len(p)), C.uint32_t(timeout))
		if r.status == C.MCP_STATUS_OK {
			id = int64(r.id)
			c.pending[id] = ch
		}
		c.mu.Unlock()
		return r.status
	})
	if err != nil {
		return nil, err
	}
	if timeout > 0 && deadline < c.nextWake.Load() {
		c.kick()
	}
	select {
	case r := <-ch:
		return r.result, r.err
	case <-ctx.Done():
	}
	if timeout > 0 && ctx.Err() == context.DeadlineExceeded {
		// The library's deadline is the same (rounded up): it times the
		// request out and sends notifications/cancelled, and the timer
		// brings the event at once. Whatever it is (the answer may have
		// beaten it), it comes.
		r := <-ch
		return r.result, r.err
	}
	c.mu.Lock()
	_, waiting := c.pending[id]
	delete(c.pending, id)
	c.mu.Unlock()
	if !waiting {
		r := <-ch // routed already: the answer, a timeout, or the close
		return r.result, r.err
	}
	// The library sends the cancellation unless the request is no longer
	// pending there (answered meanwhile: the answer is then a stray) or is
	// an initialize.
	reason := cString(ctx.Err().Error())
	c.send(nil, func(t C.conn_t) C.McpStatus {
		st := C.conn_cancel(t, C.int64_t(id), (*C.char)(unsafe.Pointer(&reason[0])))
		if st == C.MCP_STATUS_INVALID_ARGUMENT {
			st = C.MCP_STATUS_OK
		}
		return st
	})
	return nil, ctx.Err()
}

// Notify sends the notification {"jsonrpc":"2.0","method":method,
// "params":params}; params as for Request. ctx bounds only the wait for
// room in the output queue (ConnConfig.MaxQueued). It returns once the
// notification is queued: the writer goroutine writes it. Errors as for
// Request's sending.
func (c *Conn) Notify(ctx context.Context, method string, params any) error {
	m, err := cMethod(method)
	if err != nil {
		return err
	}
	p, err := marshalParams(params)
	if err != nil {
		return err
	}
	return c.send(ctx, func(t C.conn_t) C.McpStatus {
		return C.conn_notify(t, (*C.char)(unsafe.Pointer(&m[0])), bytesPtr(p), C.size_t(len(p)))
	})
}

// Done returns a channel closed when the connection has ended: after
// Close, the peer's end of stream, or a failed write.
func (c *Conn) Done() <-chan struct{} { return c.done }

// Stats returns the counts of the peer's lines the Conn did not route.
func (c *Conn) Stats() ConnStats {
	return ConnStats{StrayResponses: c.strays.Load(), Invalid: c.invalid.Load(), Batches: c.batches.Load()}
}

// Close ends the connection: sends are refused from now on (ErrClosed),
// what was queued is written and w is closed (if an io.Closer), so the peer
// sees the end of our stream. Answers that still come are delivered until
// the peer ends its stream or CloseGrace has passed, whichever first; then
// pending Requests fail with ErrClosed. Close then closes r (if an
// io.Closer, ending a Read in progress) and waits for the Conn's reader,
// writer and timer goroutines; it does not wait for handlers, whose
// contexts are cancelled.
//
// If w is not an io.Closer and its Write never returns, or r is not an
// io.Closer and its Read never returns, the goroutine stuck there stays
// until it does (Close does not wait for it).
//
// Close is idempotent and safe to call concurrently; every call waits as
// above and returns the first error of r (other than io.EOF) or w, or nil.
func (c *Conn) Close() error {
	c.hostClosed.Store(true)
	return c.close()
}

// close is Close without marking the close as the host's: a CommandConn
// closes its Conn this way when the shutdown begins for another reason.
func (c *Conn) close() error {
	c.closeOnce.Do(func() {
		grace := c.grace / time.Millisecond
		if grace > math.MaxUint32 {
			grace = math.MaxUint32
		}
		c.life.RLock()
		if c.t != 0 {
			C.conn_close(c.t, C.uint32_t(grace))
		}
		c.life.RUnlock()
		c.kick()
		c.startClosing()
	})
	<-c.done
	select {
	case <-c.writerExited:
	case <-time.After(c.grace):
		// The writer is stuck in w.Write: closing w ends it.
		if c.closeW(true) {
			<-c.writerExited
		}
	}
	if c.closeR() {
		<-c.readerExited
	}
	<-c.timerExited
	return c.ioErr()
}

// ---- Sending ----

// send runs one sending call on the live transport. WOULD_BLOCK (the
// output queue at its bound) waits for the writer to drain and tries
// again, until ctx is done (nil: no limit) or the connection ends.
func (c *Conn) send(ctx context.Context, call func(t C.conn_t) C.McpStatus) error {
	for {
		c.life.RLock()
		if c.t == 0 {
			c.life.RUnlock()
			return c.closedErr()
		}
		st := call(c.t)
		c.life.RUnlock()
		switch st {
		case C.MCP_STATUS_OK:
			c.wakeWriter()
			return nil
		case C.MCP_STATUS_WOULD_BLOCK:
			if err := c.waitDrained(ctx); err != nil {
				return err
			}
		default:
			return c.connError(st)
		}
	}
}

// waitDrained waits until the writer has taken output from the queue.
func (c *Conn) waitDrained(ctx context.Context) error {
	c.drainMu.Lock()
	if c.drained == nil {
		c.drained = make(chan struct{})
	}
	drained := c.drained
	c.drainMu.Unlock()
	c.wakeWriter()
	var ctxDone <-chan struct{}
	if ctx != nil {
		ctxDone = ctx.Done()
	}
	select {
	case <-drained:
		return nil
	case <-ctxDone:
		return ctx.Err()
	case <-c.done:
		return c.closedErr()
	}
}

func (c *Conn) wakeWriter() {
	select {
	case c.wakeW <- struct{}{}:
	default:
	}
}

func (c *Conn) kick() {
	select {
	case c.kickT <- struct{}{}:
	default:
	}
}

// connError is the error for a failed call's status.
func (c *Conn) connError(st C.McpStatus) error {
	if st == C.MCP_STATUS_CLOSED {
		return c.closedErr()
	}
	return statusError(st)
}

// closedErr is the error of a Request or a send that failed because the
// connection ended: ErrClosed, or what the peerEnd hook said instead (a
// *ServerExitedError, ErrStdoutClosed).
func (c *Conn) closedErr() error {
	c.mu.Lock()
	err := c.endErr
	c.mu.Unlock()
	if err == nil {
		return ErrClosed
	}
	return err
}

// endByPeer is called when the peer's side ended: its stream ended (or r
// failed), a write to w failed, or (for a CommandConn) the server exited.
// Unless the host closed the Conn first, the peerEnd hook says once what
// pending Requests and later sends fail with; every caller waits until it
// is said, and only then ends the transport (so no Request fails with
// plain ErrClosed meanwhile). Nothing without a hook.
func (c *Conn) endByPeer() {
	if c.peerEnd == nil {
		return
	}
	c.endOnce.Do(func() {
		if c.hostClosed.Load() {
			return
		}
		select {
		case <-c.done:
			return
		default:
		}
		if err := c.peerEnd(); err != nil {
			c.mu.Lock()
			c.endErr = err
			c.mu.Unlock()
		}
	})
}

// endNow closes the transport without a grace: pending Requests fail at
// once (with closedErr), the Conn ends.
func (c *Conn) endNow() {
	c.life.RLock()
	if c.t != 0 {
		C.conn_close(c.t, 0)
	}
	c.life.RUnlock()
	c.kick()
}

func (c *Conn) setErr(err error) {
	c.errMu.Lock()
	if c.err == nil {
		c.err = err
	}
	c.errMu.Unlock()
}

func (c *Conn) ioErr() error {
	c.errMu.Lock()
	defer c.errMu.Unlock()
	return c.err
}

// ---- Receiving: the reader and the timer ----

// receiving runs fn with the transport live and the receiving calls ours;
// false when the transport is freed.
func (c *Conn) receiving(fn func(t C.conn_t)) bool {
	c.life.RLock()
	defer c.life.RUnlock()
	if c.t == 0 {
		return false
	}
	c.rmu.Lock()
	defer c.rmu.Unlock()
	fn(c.t)
	return true
}

func (c *Conn) readLoop() {
	defer close(c.readerExited)
	buf := make([]byte, 64<<10)
	for {
		n, err := c.r.Read(buf)
		if n > 0 {
			more := false
			c.receiving(func(t C.conn_t) {
				st := C.conn_receive(t, bytesPtr(buf[:n]), C.size_t(n))
				switch st {
				case C.MCP_STATUS_OK:
					c.drainEvents(t)
					more = true
				case C.MCP_STATUS_CLOSED: // closing has come to its end
				default: // out of memory: the stream cannot go on
					c.setErr(statusError(st))
					C.conn_receive_end(t)
					c.drainEvents(t)
				}
			})
			if !more {
				return
			}
		}
		if err != nil {
			select {
			case <-c.done: // Close closed r
			default:
				if err != io.EOF {
					c.setErr(err)
				}
				c.endByPeer()
			}
			c.receiving(func(t C.conn_t) {
				C.conn_receive_end(t)
				c.drainEvents(t)
			})
			return
		}
	}
}

// timerLoop takes the events that time brings (timeouts, the end of the
// closing grace) when they are due, or when kicked (a new deadline, a
// close).
func (c *Conn) timerLoop() {
	defer close(c.timerExited)
	tm := time.NewTimer(time.Hour)
	stopTimer(tm)
	for {
		select {
		case <-c.kickT:
		case <-tm.C:
		case <-c.done:
			stopTimer(tm)
			return
		}
		// Until the next deadline is known, every new one kicks.
		c.nextWake.Store(math.MaxInt64)
		ms := C.int32_t(-1)
		if !c.receiving(func(t C.conn_t) {
			c.drainEvents(t)
			ms = C.conn_next_deadline(t)
		}) {
			return
		}
		stopTimer(tm)
		select {
		case <-c.done:
			return
		default:
		}
		if ms >= 0 {
			d := time.Duration(ms) * time.Millisecond
			c.nextWake.Store(time.Now().Add(d).UnixNano())
			tm.Reset(d)
		}
	}
}

func stopTimer(tm *time.Timer) {
	if !tm.Stop() {
		select {
		case <-tm.C:
		default:
		}
	}
}

// drainEvents takes every event ready now and routes it. Under rmu.
func (c *Conn) drainEvents(t C.conn_t) {
	for {
		st := C.conn_next_event(t, &c.ev)
		if st != C.MCP_STATUS_OK {
			if st != C.MCP_STATUS_NO_MESSAGE && st != C.MCP_STATUS_END_OF_STREAM {
				// Out of memory judging a line, or a poisoned transport
				// (a bug in the library): the stream cannot go on, and
				// MCP_EVENT_CLOSED may never come. End here.
				c.setErr(statusError(st))
				C.conn_close(t, 0)
				c.onClosed()
			}
			return
		}
		c.route(&c.ev)
	}
}

// cBytes copies n bytes of C memory at p (nil when absent).
func cBytes(p *C.uint8_t, n C.size_t) []byte {
	if p == nil {
		return nil
	}
	b := make([]byte, int(n))
	copy(b, unsafe.Slice((*byte)(unsafe.Pointer(p)), int(n)))
	return b
}

// sub is the slice s of the event's line, as a subslice of line (its copy).
func sub(ev *C.McpEvent, line []byte, s C.McpSlice) []byte {
	if s.data == nil {
		return nil
	}
	off := int(uintptr(unsafe.Pointer(s.data)) - uintptr(unsafe.Pointer(ev.data)))
	return line[off : off+int(s.len) : off+int(s.len)]
}

// route delivers one event: under rmu, without blocking (handlers run in
// goroutines; channel sends are to buffered channels).
func (c *Conn) route(ev *C.McpEvent) {
	switch ev.kind {
	case C.MCP_EVENT_RESPONSE:
		ch := c.takePending(int64(ev.request_id))
		if ch == nil { // the Request gave up (ctx done) as the answer came
			c.strays.Add(1)
			return
		}
		if ev.rpc_kind == C.MCP_RPC_ERROR {
			e := &ResponseError{}
			if err := json.Unmarshal(cBytes(ev.envelope.error.data, ev.envelope.error.len), e); err != nil {
				e = &ResponseError{Code: CodeInternalError, Message: "unreadable error response: " + err.Error()}
			}
			ch <- callResult{err: e}
		} else {
			ch <- callResult{result: cBytes(ev.envelope.result.data, ev.envelope.result.len)}
		}
	case C.MCP_EVENT_REQUEST_TIMED_OUT:
		if ch := c.takePending(int64(ev.request_id)); ch != nil {
			ch <- callResult{err: context.DeadlineExceeded}
		}
		c.wakeWriter() // the notifications/cancelled it queued
	case C.MCP_EVENT_REQUEST_FAILED:
		if ch := c.takePending(int64(ev.request_id)); ch != nil {
			ch <- callResult{err: c.closedErr()}
		}
	case C.MCP_EVENT_MESSAGE:
		switch ev.rpc_kind {
		case C.MCP_RPC_REQUEST, C.MCP_RPC_NOTIFICATION:
			c.routeIncoming(ev)
		case C.MCP_RPC_BATCH:
			c.batches.Add(1)
			c.routeUnhandled(ev, KindMessage)
		default: // a response or an error to no pending request
			c.strays.Add(1)
			c.routeUnhandled(ev, KindMessage)
		}
	case C.MCP_EVENT_PROGRESS, C.MCP_EVENT_SUBSCRIPTION:
		// Notifications the library tied to a request (a subscription's
		// stream): delivered as the notifications they are.
		c.routeIncoming(ev)
	case C.MCP_EVENT_SUBSCRIPTION_ENDED:
		// The server ended a subscriptions/listen: its Request returns
		// ErrSubscriptionEnded, and the notification is delivered too.
		if ch := c.takePending(int64(ev.request_id)); ch != nil {
			ch <- callResult{err: ErrSubscriptionEnded}
		}
		c.routeIncoming(ev)
	case C.MCP_EVENT_INVALID:
		c.invalid.Add(1)
		c.routeUnhandled(ev, Kind(ev.invalid_kind))
	case C.MCP_EVENT_CLOSED:
		c.onClosed()
	}
}

func (c *Conn) takePending(id int64) chan callResult {
	c.mu.Lock()
	ch := c.pending[id]
	delete(c.pending, id)
	c.mu.Unlock()
	return ch
}

func (c *Conn) routeUnhandled(ev *C.McpEvent, kind Kind) {
	if c.unhandled == nil {
		return
	}
	m := Message{Kind: kind, Len: int(ev.len), Data: cBytes(ev.data, ev.len)}
	if kind == KindMessage {
		m.RPCKind = RPCKind(ev.rpc_kind)
	}
	c.enqueue(queued{msg: m})
}

func (c *Conn) routeIncoming(ev *C.McpEvent) {
	line := cBytes(ev.data, ev.len)
	req := &Request{
		Method: methodName(sub(ev, line, ev.envelope.method)),
		Params: sub(ev, line, ev.envelope.params),
		conn:   c,
	}
	if ev.rpc_kind == C.MCP_RPC_NOTIFICATION {
		if req.Method == "notifications/cancelled" {
			c.peerCancelled(req.Params)
		}
		c.enqueue(queued{req: req})
		return
	}
	req.ID = sub(ev, line, ev.envelope.id)
	ctx, cancel := context.WithCancel(c.base)
	req.cancel = cancel
	key := string(req.ID)
	c.mu.Lock()
	c.inflight[key] = req
	c.mu.Unlock()
	go func() {
		defer func() {
			c.mu.Lock()
			if c.inflight[key] == req {
				delete(c.inflight, key)
			}
			c.mu.Unlock()
			cancel()
		}()
		c.handler(ctx, req)
		req.mu.Lock()
		answered := req.answered
		req.mu.Unlock()
		if !answered {
			req.RespondError(CodeInternalError, "the handler returned without answering")
		}
	}()
}

// peerCancelled cancels the handler's context of the request that the
// peer's notifications/cancelled names.
func (c *Conn) peerCancelled(params json.RawMessage) {
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
	}
	if json.Unmarshal(params, &p) != nil || p.RequestID == nil {
		return
	}
	c.mu.Lock()
	req := c.inflight[string(p.RequestID)]
	c.mu.Unlock()
	if req == nil {
		return
	}
	req.peerCancelled.Store(true)
	req.cancel()
}

// methodName unescapes a JSON string token.
func methodName(tok []byte) string {
	if len(tok) >= 2 && bytes.IndexByte(tok, '\\') < 0 {
		return string(tok[1 : len(tok)-1])
	}
	var s string
	json.Unmarshal(tok, &s)
	return s
}

// onClosed: MCP_EVENT_CLOSED (or a fatal status). Every Request still
// pending got its REQUEST_FAILED already after MCP_EVENT_CLOSED; whatever
// is left fails here. Idempotent.
func (c *Conn) onClosed() {
	c.mu.Lock()
	pending := c.pending
	c.pending = make(map[int64]chan callResult)
	c.mu.Unlock()
	err := c.closedErr()
	for _, ch := range pending {
		ch <- callResult{err: err}
	}
	c.cancelBase()
	c.doneOnce.Do(func() { close(c.done) })
	c.startClosing()
}

func (c *Conn) startClosing() {
	c.closingOnce.Do(func() { close(c.closing) })
}

// ---- The notifications' goroutine ----

func (c *Conn) enqueue(q queued) {
	c.qmu.Lock()
	c.queue = append(c.queue, q)
	c.qmu.Unlock()
	select {
	case c.qsig <- struct{}{}:
	default:
	}
}

func (c *Conn) dispatchLoop() {
	var batch []queued
	for {
		c.qmu.Lock()
		batch, c.queue = c.queue, batch[:0]
		c.qmu.Unlock()
		if len(batch) == 0 {
			select {
			case <-c.qsig:
				continue
			case <-c.done:
			}
			c.qmu.Lock()
			batch, c.queue = c.queue, nil
			c.qmu.Unlock()
			if len(batch) == 0 {
				return
			}
		}
		for i := range batch {
			if q := batch[i]; q.req != nil {
				c.handler(c.base, q.req)
			} else {
				c.unhandled(q.msg)
			}
			batch[i] = queued{}
		}
	}
}

// ---- The writer ----

func (c *Conn) writeLoop() {
	defer close(c.writerExited)
	buf := make([]byte, 64<<10)
loop:
	for {
		select {
		case <-c.wakeW:
			if !c.flush(buf) {
				break loop
			}
		case <-c.closing:
			c.flush(buf)
			break loop
		}
	}
	// Sends are over (or w failed): the peer sees the end of our stream.
	// Output queued from now on (the cancellation of a request timing out
	// during the grace) is dropped.
	c.closeW(false)
	<-c.done
	c.life.Lock()
	if c.t != 0 {
		C.conn_free(c.t)
		c.t = 0
	}
	c.life.Unlock()
}

// flush writes what the transport queued; false when w failed.
func (c *Conn) flush(buf []byte) bool {
	for {
		var n int
		c.receiving(func(t C.conn_t) {
			n = int(C.conn_read_output(t, bytesPtr(buf), C.size_t(len(buf))))
		})
		// The queue has room now (it may have had some before: a sender
		// that waits wakes this writer after it registered, and must be
		// answered even when there is nothing to write).
		c.drainMu.Lock()
		if c.drained != nil {
			close(c.drained)
			c.drained = nil
		}
		c.drainMu.Unlock()
		if n == 0 {
			return true
		}
		if _, err := c.w.Write(buf[:n]); err != nil {
			c.setErr(err)
			// The stream to the peer is broken: close now, no grace.
			c.endByPeer()
			c.endNow()
			return false
		}
	}
}

// closeW closes w if it is an io.Closer (once) and reports whether it is.
// When r and w are the same object, only Close (force) closes it; before,
// its write side is closed if it has a CloseWrite method (*net.TCPConn,
// *net.UnixConn).
func (c *Conn) closeW(force bool) bool {
	if c.sameRW && !force {
		if cw, ok := c.w.(interface{ CloseWrite() error }); ok {
			cw.CloseWrite()
		}
		return false
	}
	wc, ok := c.w.(io.Closer)
	if !ok {
		return false
	}
	c.wOnce.Do(func() { wc.Close() })
	return true
}

// closeR closes r if it is an io.Closer (once) and reports whether it is.
func (c *Conn) closeR() bool {
	rc, ok := c.r.(io.Closer)
	if !ok {
		return false
	}
	if c.sameRW {
		c.closeW(true)
		return true
	}
	c.rOnce.Do(func() { rc.Close() })
	return true
}

// ---- Values ----

// cString returns s and a NUL, for a call (the library copies it).
func cString(s string) []byte {
	b := make([]byte, len(s)+1)
	copy(b, s)
	return b
}

// cMethod is a method name for the library: no NUL inside.
func cMethod(method string) ([]byte, error) {
	if strings.IndexByte(method, 0) >= 0 {
		return nil, ErrInvalidText
	}
	return cString(method), nil
}

// marshalValue marshals v (a json.RawMessage as is, nil as null) without
// HTML escaping.
func marshalValue(v any) ([]byte, error) {
	if raw, ok := v.(json.RawMessage); ok {
		if raw == nil {
			return []byte("null"), nil
		}
		return raw, nil
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// marshalParams is marshalValue, nil (absent) for nil, empty and null.
func marshalParams(v any) ([]byte, error) {
	if v == nil {
		return nil, nil
	}
	if raw, ok := v.(json.RawMessage); ok && len(raw) == 0 {
		return nil, nil
	}
	p, err := marshalValue(v)
	if err != nil || string(p) == "null" {
		return nil, err
	}
	return p, nil
}
