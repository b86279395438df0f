package mcpstdio

// #include "mcp_stdio.h"
import "C"

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"unicode/utf8"
)

// StatusError is an error status returned by the C library.
//
// Compare it with the sentinels below using [errors.Is], which matches on
// Code: errors.Is(err, ErrInvalidJSON).
type StatusError struct {
	Code int    // the McpStatus value, negative (MCP_STATUS_INVALID_JSON is -3)
	Msg  string // its description, from mcp_status_str
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("mcpstdio: %s (status %d)", e.Msg, e.Code)
}

// Is reports whether target is a *StatusError with the same Code. The
// statuses that narrow "an argument is wrong" (ErrInvalidParams,
// ErrInvalidText, ErrUnknownFlags, ErrEmptyProgram) also match
// ErrInvalidArgument, which they were before they had codes of their own.
func (e *StatusError) Is(target error) bool {
	t, ok := target.(*StatusError)
	if !ok {
		return false
	}
	if t.Code == e.Code {
		return true
	}
	return t.Code == C.MCP_STATUS_INVALID_ARGUMENT && narrowsInvalidArgument(e.Code)
}

func narrowsInvalidArgument(code int) bool {
	switch code {
	case C.MCP_STATUS_INVALID_PARAMS, C.MCP_STATUS_INVALID_TEXT,
		C.MCP_STATUS_UNKNOWN_FLAGS, C.MCP_STATUS_EMPTY_PROGRAM:
		return true
	}
	return false
}

// The error statuses of the C library, for use with [errors.Is].
var (
	// ErrNullArgument: a required pointer was NULL (never returned by this
	// package's own calls).
	ErrNullArgument = statusError(C.MCP_STATUS_NULL_ARGUMENT)
	// ErrInvalidArgument: an argument is out of range, e.g. a line limit
	// below 1.
	ErrInvalidArgument = statusError(C.MCP_STATUS_INVALID_ARGUMENT)
	// ErrInvalidJSON: the input to Encode is not exactly one JSON text in
	// valid UTF-8 (or is empty).
	ErrInvalidJSON = statusError(C.MCP_STATUS_INVALID_JSON)
	// ErrInvalidParams: a request's or notification's params are valid
	// JSON but not an object or array. Also matches ErrInvalidArgument.
	ErrInvalidParams = statusError(C.MCP_STATUS_INVALID_PARAMS)
	// ErrInvalidText: a method (or other text) holds a NUL byte or is not
	// valid UTF-8. Also matches ErrInvalidArgument.
	ErrInvalidText = statusError(C.MCP_STATUS_INVALID_TEXT)
	// ErrOutOfMemory: the C library could not allocate; nothing was done.
	ErrOutOfMemory = statusError(C.MCP_STATUS_OUT_OF_MEMORY)
	// ErrPanic: a bug in the library was caught; the reader it happened in
	// is unusable (close it).
	ErrPanic = statusError(C.MCP_STATUS_PANIC)
	// ErrPoisoned: the reader hit ErrPanic earlier and refuses further use.
	ErrPoisoned = statusError(C.MCP_STATUS_POISONED)
)

// ErrSubscriptionEnded is the error of a subscriptions/listen Request (MCP
// 2026-07-28) that the server ended with a notifications/cancelled for it
// (the notification is delivered to the notification handler too).
var ErrSubscriptionEnded = errors.New("mcpstdio: the server ended the subscription")

// ErrClosed is returned by the methods of a LineReader (or Decoder) after
// Close, and by a Conn's sends and Requests once the connection is closed
// or closing.
var ErrClosed = errors.New("mcpstdio: closed")

// ServerExitedError is the error of a CommandConn whose server ended by
// itself: its pending Requests fail with it (at once, not at their
// deadline), and so do sends from then on and CommandConn.Err. It wraps
// ErrClosed, so errors.Is(err, ErrClosed) holds; errors.As gives the
// details:
//
//	var exit *mcpstdio.ServerExitedError
//	if errors.As(err, &exit) { ... exit.Code, exit.StderrTail ... }
//
// Its text, the same words in every language of the project:
//
//	mcpstdio: server exited with code 1 before its first message: ModuleNotFoundError: No module named 'foo'
//
// that is "mcpstdio: server exited with code N" or "mcpstdio: server
// killed by signal N", then " before its first message" when
// BeforeFirstMessage, then, when the tail holds a non-empty line, ": " and
// the tail's last non-blank line (its leading and trailing ASCII white
// space, "\r" included, trimmed, as Rust's trim_ascii does; invalid UTF-8
// replaced by U+FFFD; cut to 200 bytes at a character's boundary).
//
// A host closing the CommandConn itself (Close, Conn.Close) gets plain
// ErrClosed instead: closed by us is not a server exit. One value is
// shared by every call that fails with it: do not modify its StderrTail.
type ServerExitedError struct {
	// Code is the exit status, or -1 when a signal killed the server.
	Code int
	// Signal is the signal that killed the server, or 0 when it exited.
	Signal syscall.Signal
	// StderrTail is CommandConn.StderrTail when the error was made: the
	// last lines of the server's stderr (at most 20 lines and 4 KiB,
	// joined with "\n"). Empty without CommandConfig.Stderr, as the
	// library does not read the server's stderr then.
	StderrTail []byte
	// BeforeFirstMessage: the server exited before it wrote any line on its
	// stdout (nothing but white space). An answer never came: a server that
	// failed at its start (a missing module, a wrong path, a bad argument).
	BeforeFirstMessage bool
}

// The longest stderr line that ServerExitedError.Error quotes, in bytes.
const exitErrorLineMax = 200

func (e *ServerExitedError) Error() string {
	var b strings.Builder
	if e.Signal != 0 {
		fmt.Fprintf(&b, "mcpstdio: server killed by signal %d", int(e.Signal))
	} else {
		fmt.Fprintf(&b, "mcpstdio: server exited with code %d", e.Code)
	}
	if e.BeforeFirstMessage {
		b.WriteString(" before its first message")
	}
	if line := lastLine(e.StderrTail, exitErrorLineMax); line != "" {
		b.WriteString(": ")
		b.WriteString(line)
	}
	return b.String()
}

// Unwrap returns ErrClosed.
func (e *ServerExitedError) Unwrap() error { return ErrClosed }

// lastLine is the last line of tail that is not empty once its ASCII white
// space is trimmed at both ends (as the Rust core's): trimmed, decoded as Rust's
// String::from_utf8_lossy does (one U+FFFD for each maximal invalid
// subpart, so that the languages of the project say the same), and cut to
// max bytes at a character's boundary; "" when there is none.
func lastLine(tail []byte, max int) string {
	for len(tail) > 0 {
		line := tail
		if i := bytes.LastIndexByte(tail, '\n'); i >= 0 {
			line, tail = tail[i+1:], tail[:i]
		} else {
			tail = nil
		}
		line = bytes.Trim(line, " \t\n\f\r")
		if len(line) == 0 {
			continue
		}
		text := lossyUTF8(line)
		if len(text) > max {
			cut := max
			for !utf8.RuneStart(text[cut]) {
				cut--
			}
			text = text[:cut]
		}
		return text
	}
	return ""
}

// lossyUTF8 is b with each maximal subpart of an invalid sequence replaced
// by U+FFFD (the Unicode recommended practice, which Rust follows).
func lossyUTF8(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	var out strings.Builder
	for len(b) > 0 {
		if r, n := utf8.DecodeRune(b); r != utf8.RuneError || n > 1 {
			out.Write(b[:n])
			b = b[n:]
			continue
		}
		out.WriteString("\uFFFD")
		b = b[maximalSubpart(b):]
	}
	return out.String()
}

// maximalSubpart is the length of the invalid sequence that opens b: its
// first byte, and the bytes after it that could continue it.
func maximalSubpart(b []byte) int {
	need, lo, hi := 0, byte(0x80), byte(0xBF)
	switch c := b[0]; {
	case c >= 0xC2 && c <= 0xDF:
		need = 1
	case c == 0xE0:
		need, lo = 2, 0xA0
	case c == 0xED:
		need, hi = 2, 0x9F
	case c >= 0xE1 && c <= 0xEF:
		need = 2
	case c == 0xF0:
		need, lo = 3, 0x90
	case c == 0xF4:
		need, hi = 3, 0x8F
	case c >= 0xF1 && c <= 0xF3:
		need = 3
	}
	n := 1
	for n <= need && n < len(b) && b[n] >= lo && b[n] <= hi {
		n++
		lo, hi = 0x80, 0xBF
	}
	return n
}

// ErrStdoutClosed is the error of a CommandConn whose server closed its
// stdout but did not exit (still running 500 ms later): its pending
// Requests fail with it at once, and so do sends from then on and
// CommandConn.Err. It wraps ErrClosed: errors.Is(err, ErrClosed) holds.
// Its text is "mcpstdio: server closed its stdout".
var ErrStdoutClosed error = stdoutClosedError{}

type stdoutClosedError struct{}

func (stdoutClosedError) Error() string { return "mcpstdio: server closed its stdout" }
func (stdoutClosedError) Unwrap() error { return ErrClosed }

// statusError returns the error for a C status code.
func statusError(code C.McpStatus) *StatusError {
	return &StatusError{Code: int(code), Msg: C.GoString(C.mcp_status_str(C.int32_t(code)))}
}

// Version returns the C library's version, "MAJOR.MINOR.PATCH".
func Version() string { return C.GoString(C.mcp_stdio_version()) }

// ABIVersion returns the C library's ABI version; it equals HeaderABIVersion
// when the library and the header this package was compiled with agree (they
// always do with the default static linking).
func ABIVersion() int { return int(C.mcp_stdio_abi_version()) }

// HeaderABIVersion is MCP_STDIO_ABI_VERSION of the header this package was
// compiled with.
const HeaderABIVersion = 0

// Compile-time check that HeaderABIVersion is the header's.
var (
	_ [HeaderABIVersion - C.MCP_STDIO_ABI_VERSION]struct{}
	_ [C.MCP_STDIO_ABI_VERSION - HeaderABIVersion]struct{}
)
