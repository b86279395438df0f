package mcpstdio

// #include "mcp_stdio.h"
import "C"

import (
	"bytes"
	"encoding/json"
	"io"
	"unsafe"
)

// Encode validates json as one JSON text (RFC 8259, valid UTF-8; whitespace
// around it allowed) and returns it as one line for the stdio transport:
// compact (no whitespace outside strings) and followed by exactly one "\n".
// Every token is kept byte for byte, except raw U+2028 and U+2029, written
// as \u2028 and \u2029. Input that is not exactly one JSON text, or is
// empty, gives an error matching ErrInvalidJSON.
//
// Encode is safe for concurrent use.
func Encode(json []byte) ([]byte, error) {
	return encode(json, 0)
}

// EncodeASCII is Encode that also escapes every non-ASCII character (and
// DEL) as \uXXXX (lowercase hex, surrogate pairs above U+FFFF), so the line
// is pure printable ASCII.
func EncodeASCII(json []byte) ([]byte, error) {
	return encode(json, C.MCP_ENCODE_ASCII)
}

// EncodeValue marshals v with encoding/json and returns it as one line, as
// Encode does.
//
// Unlike json.Marshal, it does not escape '<', '>' and '&' (as \u003c and
// so on): MCP messages are not embedded in HTML, and the escapes would only
// lengthen code and markup in tool results. U+2028 and U+2029 are escaped,
// as always. Use json.Marshal and Encode for the HTML-safe form.
func EncodeValue(v any) ([]byte, error) {
	return encodeValue(v, 0)
}

func encodeValue(v any, flags C.uint32_t) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	// The trailing "\n" of json.Encoder is whitespace around the value: the
	// library drops it and ends the line with its own.
	return encode(b.Bytes(), flags)
}

func encode(src []byte, flags C.uint32_t) ([]byte, error) {
	var buf C.McpBuffer
	// src is Go memory without Go pointers, pinned during the call and not
	// kept; buf receives memory allocated by the library.
	st := C.mcp_encode(bytesPtr(src), C.size_t(len(src)), flags, &buf)
	if st != C.MCP_STATUS_OK {
		return nil, statusError(st)
	}
	out := make([]byte, int(buf.len))
	copy(out, unsafe.Slice((*byte)(unsafe.Pointer(buf.data)), int(buf.len)))
	C.mcp_buffer_free(&buf)
	return out, nil
}

// Encoder writes JSON messages to an io.Writer, one line each.
//
// Every Encode or EncodeValue call makes exactly one Write call with a
// whole line, so lines never interleave when goroutines share a writer
// whose Write calls do not (an *os.File serializes them; otherwise guard
// the writer with a mutex). An Encoder has no state besides SetASCII: its
// methods are safe for concurrent use if the writer's are.
type Encoder struct {
	w     io.Writer
	flags C.uint32_t
}

// NewEncoder returns an Encoder writing to w.
func NewEncoder(w io.Writer) *Encoder {
	return &Encoder{w: w}
}

// SetASCII makes the encoder escape every non-ASCII character, as
// EncodeASCII does.
func (e *Encoder) SetASCII(on bool) {
	if on {
		e.flags = C.MCP_ENCODE_ASCII
	} else {
		e.flags = 0
	}
}

// Encode validates json and writes it as one line (see the package-level
// Encode). Nothing is written when json is invalid.
func (e *Encoder) Encode(json []byte) error {
	line, err := encode(json, e.flags)
	if err != nil {
		return err
	}
	_, err = e.w.Write(line)
	return err
}

// EncodeValue marshals v (see the package-level EncodeValue) and writes it
// as one line.
func (e *Encoder) EncodeValue(v any) error {
	line, err := encodeValue(v, e.flags)
	if err != nil {
		return err
	}
	_, err = e.w.Write(line)
	return err
}
