package mcpstdio

// #include "mcp_stdio.h"
import "C"

import (
	"errors"
	"fmt"
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

// Is reports whether target is a *StatusError with the same Code.
func (e *StatusError) Is(target error) bool {
	t, ok := target.(*StatusError)
	return ok && t.Code == e.Code
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
	// ErrOutOfMemory: the C library could not allocate; nothing was done.
	ErrOutOfMemory = statusError(C.MCP_STATUS_OUT_OF_MEMORY)
	// ErrPanic: a bug in the library was caught; the reader it happened in
	// is unusable (close it).
	ErrPanic = statusError(C.MCP_STATUS_PANIC)
	// ErrPoisoned: the reader hit ErrPanic earlier and refuses further use.
	ErrPoisoned = statusError(C.MCP_STATUS_POISONED)
)

// ErrClosed is returned by the methods of a LineReader (or Decoder) after
// Close, and by a Conn's sends and Requests once the connection is closed
// or closing.
var ErrClosed = errors.New("mcpstdio: closed")

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
