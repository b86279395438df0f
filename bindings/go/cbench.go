//go:build mcpstdio_cbench

package mcpstdio

// The C reader's own loop, for BenchmarkCReader* (build tag
// mcpstdio_cbench): what bench/runners/mcp_stdio.c's one_read_pass does,
// in one cgo call, so that the Decoder's throughput can be compared with
// the C reader's in the same process, on the same bytes.

/*
#include "mcp_stdio.h"

static McpStatus cbench_pass(const uint8_t *data, size_t len, size_t chunk, uint32_t flags,
		uint64_t *messages, uint64_t *errors) {
	McpLineReader *r = mcp_line_reader_new();
	if (!r) return MCP_STATUS_OUT_OF_MEMORY;
	McpStatus st = mcp_line_reader_set_flags(r, flags);
	McpMessage m;
	for (size_t off = 0; st == MCP_STATUS_OK && off <= len; off += chunk) {
		if (off == len) {
			st = mcp_line_reader_finish(r);
		} else {
			size_t n = len - off < chunk ? len - off : chunk;
			st = mcp_line_reader_feed(r, data + off, n);
		}
		while (st == MCP_STATUS_OK && (st = mcp_line_reader_next_message(r, &m)) == MCP_STATUS_OK) {
			if (m.kind == MCP_MESSAGE_JSON && (!(flags & MCP_READER_JSONRPC) || m.rpc_kind != MCP_RPC_NONE))
				++*messages;
			else
				++*errors;
		}
		if (st == MCP_STATUS_NO_MESSAGE) st = MCP_STATUS_OK;
	}
	mcp_line_reader_free(r);
	return st;
}
*/
import "C"

// cReaderPass reads data in chunk-byte pieces with a C reader (JSON-RPC
// classification on when jsonrpc) and counts the messages and the other
// items.
func cReaderPass(data []byte, chunk int, jsonrpc bool) (messages, errors uint64, err error) {
	var flags C.uint32_t
	if jsonrpc {
		flags = C.MCP_READER_JSONRPC
	}
	var m, e C.uint64_t
	st := C.cbench_pass(bytesPtr(data), C.size_t(len(data)), C.size_t(chunk), flags, &m, &e)
	if st != C.MCP_STATUS_OK {
		return 0, 0, statusError(st)
	}
	return uint64(m), uint64(e), nil
}
