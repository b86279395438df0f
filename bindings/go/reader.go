package mcpstdio

// #include "mcp_stdio.h"
import "C"

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"unsafe"
)

// Kind says what an item taken from a LineReader is.
type Kind int

// The kinds of items (McpMessage.kind).
const (
	// KindMessage is a JSON message: Data is the line, trimmed.
	KindMessage Kind = 0
	// KindParseError is a line that is not one JSON text in valid UTF-8:
	// Data is the line, trimmed. Not reported with SkipInvalid.
	KindParseError Kind = 1
	// KindTooLong is a line longer than the limit, dropped: Data is nil and
	// Len is how many of its bytes had been received when the reader gave up
	// (more than the limit). Reported whatever the options.
	KindTooLong Kind = 2
	// KindInvalidJSONRPC is valid JSON that is not a JSON-RPC 2.0 message
	// (only with the JSONRPC option): Data is the line, trimmed. Not
	// reported with SkipInvalid.
	KindInvalidJSONRPC Kind = 3
)

func (k Kind) String() string {
	switch k {
	case KindMessage:
		return "Message"
	case KindParseError:
		return "ParseError"
	case KindTooLong:
		return "TooLong"
	case KindInvalidJSONRPC:
		return "InvalidJSONRPC"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// RPCKind is the JSON-RPC 2.0 kind of a message (with the JSONRPC option).
type RPCKind int

// The JSON-RPC kinds (McpMessage.rpc_kind).
const (
	// RPCNone: not classified (the JSONRPC option is off, or the item is not
	// a message).
	RPCNone RPCKind = 0
	// RPCRequest: "method" (a string) and "id" (a string or a number, not
	// null): the peer expects a response.
	RPCRequest RPCKind = 1
	// RPCNotification: "method" without "id": no response expected.
	RPCNotification RPCKind = 2
	// RPCResponse: "id" and "result" (any value, null included).
	RPCResponse RPCKind = 3
	// RPCError: "id" (or null) and an "error" object with an integer "code"
	// and a string "message".
	RPCError RPCKind = 4
	// RPCBatch: a non-empty array of the kinds above.
	RPCBatch RPCKind = 5
)

func (k RPCKind) String() string {
	switch k {
	case RPCNone:
		return "None"
	case RPCRequest:
		return "Request"
	case RPCNotification:
		return "Notification"
	case RPCResponse:
		return "Response"
	case RPCError:
		return "Error"
	case RPCBatch:
		return "Batch"
	}
	return fmt.Sprintf("RPCKind(%d)", int(k))
}

// Compile-time checks that the constants above are the header's (a
// mismatch makes an array length negative).
var (
	_ [KindMessage - C.MCP_MESSAGE_JSON]struct{}
	_ [C.MCP_MESSAGE_JSON - KindMessage]struct{}
	_ [KindParseError - C.MCP_MESSAGE_PARSE_ERROR]struct{}
	_ [C.MCP_MESSAGE_PARSE_ERROR - KindParseError]struct{}
	_ [KindTooLong - C.MCP_MESSAGE_TOO_LONG]struct{}
	_ [C.MCP_MESSAGE_TOO_LONG - KindTooLong]struct{}
	_ [KindInvalidJSONRPC - C.MCP_MESSAGE_INVALID_JSONRPC]struct{}
	_ [C.MCP_MESSAGE_INVALID_JSONRPC - KindInvalidJSONRPC]struct{}
	_ [RPCNone - C.MCP_RPC_NONE]struct{}
	_ [C.MCP_RPC_NONE - RPCNone]struct{}
	_ [RPCRequest - C.MCP_RPC_REQUEST]struct{}
	_ [C.MCP_RPC_REQUEST - RPCRequest]struct{}
	_ [RPCNotification - C.MCP_RPC_NOTIFICATION]struct{}
	_ [C.MCP_RPC_NOTIFICATION - RPCNotification]struct{}
	_ [RPCResponse - C.MCP_RPC_RESPONSE]struct{}
	_ [C.MCP_RPC_RESPONSE - RPCResponse]struct{}
	_ [RPCError - C.MCP_RPC_ERROR]struct{}
	_ [C.MCP_RPC_ERROR - RPCError]struct{}
	_ [RPCBatch - C.MCP_RPC_BATCH]struct{}
	_ [C.MCP_RPC_BATCH - RPCBatch]struct{}
)

// Message is one item taken from a LineReader: a JSON message or the report
// of a line that is not one.
type Message struct {
	Kind    Kind
	RPCKind RPCKind // RPCNone unless the JSONRPC option is on and Kind is KindMessage
	// Data is the line, trimmed of surrounding space, tab and CR: a copy
	// owned by Go, valid for as long as you keep it. Nil for KindTooLong.
	// The Data of items taken together may share one backing array (up to
	// 64 KiB, which a kept item keeps alive), each with its capacity at
	// its length, so an append to one never writes into another.
	Data []byte
	// Len is len(Data), except for KindTooLong: the bytes of the line
	// received when the reader gave up.
	Len int
}

// config is what the options set.
type config struct {
	maxLen    C.size_t
	maxLenErr bool // MaxLineLen got n < 1
	flags     C.uint32_t
}

// Option configures a LineReader or a Decoder.
type Option func(*config)

// MaxLineLen sets the longest line accepted, in bytes before the "\n"
// (default 64 MiB). A longer line yields one KindTooLong item and is dropped
// through its "\n". n must be at least 1 (otherwise ErrInvalidArgument).
func MaxLineLen(n int) Option {
	return func(c *config) {
		if n < 1 {
			c.maxLenErr = true
			return
		}
		c.maxLenErr = false
		c.maxLen = C.size_t(n)
	}
}

// NoLineLimit removes the line limit: lines of any length are buffered.
// Use it only with trusted peers.
func NoLineLimit() Option {
	return func(c *config) {
		c.maxLenErr = false
		c.maxLen = ^C.size_t(0) // SIZE_MAX
	}
}

// SkipInvalid drops KindParseError and KindInvalidJSONRPC items silently.
// KindTooLong items are still reported.
func SkipInvalid() Option {
	return func(c *config) { c.flags |= C.MCP_READER_SKIP_INVALID }
}

// JSONRPC classifies each message as JSON-RPC 2.0 (Message.RPCKind); valid
// JSON that is none of the JSON-RPC kinds becomes a KindInvalidJSONRPC item.
func JSONRPC() Option {
	return func(c *config) { c.flags |= C.MCP_READER_JSONRPC }
}

// LineReader splits a stream of bytes, fed in chunks of any size, into
// messages. It holds C memory: Close it when done.
//
// A LineReader is not safe for concurrent use: calls on one reader must not
// overlap (like a bufio.Reader). Different readers are independent.
type LineReader struct {
	h *C.McpLineReader // nil after Close
	b batch            // items taken from h, not handed out yet (batch.go)
}

// finalized counts the readers freed by their finalizer (a test hook).
var finalized atomic.Int64

// NewLineReader returns a reader configured by opts: 64 MiB line limit and
// no flags by default.
func NewLineReader(opts ...Option) (*LineReader, error) {
	c := config{maxLen: C.MCP_READER_DEFAULT_MAX_LINE_LEN}
	for _, o := range opts {
		o(&c)
	}
	if c.maxLenErr {
		return nil, ErrInvalidArgument
	}
	h := C.mcp_line_reader_new()
	if h == nil {
		return nil, ErrOutOfMemory
	}
	if st := C.mcp_line_reader_set_max_line_len(h, c.maxLen); st != C.MCP_STATUS_OK {
		C.mcp_line_reader_free(h)
		return nil, statusError(st)
	}
	if st := C.mcp_line_reader_set_flags(h, c.flags); st != C.MCP_STATUS_OK {
		C.mcp_line_reader_free(h)
		return nil, statusError(st)
	}
	r := &LineReader{h: h}
	runtime.SetFinalizer(r, (*LineReader).finalize)
	return r, nil
}

// finalize frees the C reader of a LineReader that was never closed.
func (r *LineReader) finalize() {
	if r.h != nil {
		C.mcp_line_reader_free(r.h)
		r.h = nil
		r.b = batch{}
		finalized.Add(1)
	}
}

// Close frees the reader's C memory. It is idempotent; afterwards the other
// methods return ErrClosed (BufferedLen returns 0). Messages already taken
// stay valid: they are Go copies.
func (r *LineReader) Close() error {
	if r == nil || r.h == nil {
		return nil
	}
	C.mcp_line_reader_free(r.h)
	r.h = nil
	r.b = batch{}
	runtime.SetFinalizer(r, nil)
	return nil
}

// Feed appends p, a chunk of the stream, and returns every item now
// complete, in stream order (items not taken before included). p is copied: it may be reused after the call.
// Any chunking of a stream gives the same items.
func (r *LineReader) Feed(p []byte) ([]Message, error) {
	if r == nil || r.h == nil {
		return nil, ErrClosed
	}
	return r.drain(nil, p, false)
}

// Write appends p, a chunk of the stream, without taking items: take them
// one by one with Next. It copies p and returns len(p), nil unless the
// reader is closed or out of memory. With Write, a LineReader is an
// io.Writer.
func (r *LineReader) Write(p []byte) (n int, err error) {
	if err := r.feed(p); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Next takes the next complete item. ok is false (with a nil error) when no
// complete line is buffered: feed more, or Finish at the end of the stream.
func (r *LineReader) Next() (m Message, ok bool, err error) {
	if r == nil || r.h == nil {
		return Message{}, false, ErrClosed
	}
	if m, ok := r.pop(); ok {
		return m, true, nil
	}
	if err := r.takeErr(); err != nil {
		return Message{}, false, err
	}
	// One item: items left in the C reader count in BufferedLen.
	if _, err := r.take(nil, false, 1); err != nil {
		return Message{}, false, err
	}
	m, ok = r.pop()
	return m, ok, nil
}

// Finish marks the end of the stream and returns the remaining items: a
// buffered last line without "\n" counts as complete. The reader stays
// usable: bytes fed afterwards start a new line.
func (r *LineReader) Finish() ([]Message, error) {
	if r == nil || r.h == nil {
		return nil, ErrClosed
	}
	return r.drain(nil, nil, true)
}

// BufferedLen returns how many bytes the reader holds that no item has
// consumed yet (complete lines not taken plus the unterminated last line).
// It returns 0 after Close.
func (r *LineReader) BufferedLen() int {
	if r == nil || r.h == nil {
		return 0
	}
	n := C.mcp_line_reader_buffered_len(r.h)
	runtime.KeepAlive(r)
	return int(n)
}

// feed appends p without taking items.
func (r *LineReader) feed(p []byte) error {
	if r == nil || r.h == nil {
		return ErrClosed
	}
	// p is Go memory holding no Go pointers, pinned for the duration of
	// the call; the library copies it and does not keep the pointer.
	st := C.mcp_line_reader_feed(r.h, bytesPtr(p), C.size_t(len(p)))
	runtime.KeepAlive(r)
	if st != C.MCP_STATUS_OK {
		return statusError(st)
	}
	return nil
}

// bytesPtr returns a C pointer to p's first byte, or nil when p is empty
// (the library takes (NULL, 0) as empty input).
func bytesPtr(p []byte) *C.uint8_t {
	if len(p) == 0 {
		return nil
	}
	return (*C.uint8_t)(unsafe.Pointer(&p[0]))
}
