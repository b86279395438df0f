package mcpstdio

// Items are taken from the C reader in batches: one cgo call feeds a chunk
// (or marks the end of the stream) and takes up to batchMax items, copying
// the bytes of each into an arena, a Go []byte of which the messages' Data
// are slices. A cgo call and a make([]byte) per message cost more than the
// C reader's own work on a message of 150 bytes (taken one by one, such
// messages came at under 40% of the C reader's speed); per batch, they are
// paid once.
//
// The lifetime rule of the C reader (an item's data borrows the reader's
// buffer until the next call on it) holds because the bytes are copied in
// the same C call that takes the item, or, for the one item of a batch
// that does not fit in the arena (it is then the last of the batch), by Go
// right after the call and before any other.
//
// An arena is only ever appended to: the bytes handed out in a Message are
// never written again, so a Message kept from a batch is not disturbed by
// the next ones. When an item does not fit in what is left of the arena, a
// new arena is allocated (the old one lives as long as a Message holds
// part of it), unless the item is longer than bigItem: that one gets a
// slice of its own.

/*
#include <string.h>
#include "mcp_stdio.h"

// One item of a batch: its kind, and where its bytes are. off is the
// offset of its copy in the arena, or MCPGO_NO_DATA (data NULL: a line too
// long), or MCPGO_BORROWED (they did not fit: mcpgo_batch.borrowed points
// to them in the reader's buffer, until the next call on the reader).
typedef struct {
	int32_t kind;
	int32_t rpc_kind;
	size_t off;
	size_t len;
} mcpgo_item;

#define MCPGO_NO_DATA SIZE_MAX
#define MCPGO_BORROWED (SIZE_MAX - 1)

typedef struct {
	// MCP_STATUS_NO_MESSAGE: the reader holds no complete line any more;
	// MCP_STATUS_OK: it may hold more (max items taken, or the last one is
	// borrowed); an error: of the feed or the finish (n is 0 then), or of
	// the take after the n items.
	McpStatus status;
	uint32_t n;
	size_t used; // arena bytes used, those before the call included
	const uint8_t *borrowed;
} mcpgo_batch;

// Feeds data[0..len] (when len > 0), marks the end of the stream (when
// finish), then takes up to max items into items[], copying their bytes to
// arena[used..cap]. Go memory is only written during the call and no
// pointer to it is kept. The reader is passed as an integer: cgo would box
// a pointer to an incomplete type to check it, an allocation per call.
static mcpgo_batch mcpgo_take(uintptr_t reader, const uint8_t *data, size_t len, int finish,
		mcpgo_item *items, uint32_t max, uint8_t *arena, size_t used, size_t cap) {
	McpLineReader *r = (McpLineReader *)reader;
	mcpgo_batch b = { MCP_STATUS_OK, 0, used, NULL };
	if (len > 0 && (b.status = mcp_line_reader_feed(r, data, len)) != MCP_STATUS_OK) return b;
	if (finish && (b.status = mcp_line_reader_finish(r)) != MCP_STATUS_OK) return b;
	McpMessage m;
	while (b.n < max) {
		if ((b.status = mcp_line_reader_next_message(r, &m)) != MCP_STATUS_OK) return b;
		mcpgo_item *it = &items[b.n++];
		it->kind = m.kind;
		it->rpc_kind = m.rpc_kind;
		it->len = m.len;
		if (m.data == NULL) {
			it->off = MCPGO_NO_DATA;
		} else if (m.len <= cap - b.used) {
			if (m.len > 0) memcpy(arena + b.used, m.data, m.len);
			it->off = b.used;
			b.used += m.len;
		} else {
			it->off = MCPGO_BORROWED;
			b.borrowed = m.data;
			return b;
		}
	}
	return b;
}
*/
import "C"

import (
	"runtime"
	"unsafe"
)

const (
	// batchMax is the most items taken per cgo call.
	batchMax = 256
	// arenaSize is the size of an arena. A Message in it keeps the whole
	// arena alive: small, so that one kept message holds little memory;
	// large enough that arenas cost little against the bytes they hold.
	arenaSize = 16 << 10
	// bigItem: an item longer than this that does not fit in what is left
	// of the arena gets a slice of its own rather than a new arena.
	bigItem = arenaSize / 4
)

// batch is what a LineReader took from the C reader and not yet handed
// out: msgs[next:n].
type batch struct {
	items []C.mcpgo_item // written by C
	msgs  []Message
	n     int
	next  int
	arena []byte // len == cap; arena[:used] is handed out, never written again (unless reuse)
	used  int
	err   error // an error that came after msgs[:n], for once they are taken

	// reuse: the items handed out before a take may be overwritten by it
	// (Decoder.ReuseData): the arena is filled from its start again, and
	// an item that does not fit goes to spare, reused too.
	reuse bool
	spare []byte
}

// take feeds p (when not empty), marks the end of the stream (when
// finish), then takes up to max items into the queue, which must be empty,
// in one cgo call. more reports that the reader may hold more complete
// items (take again), !more that it holds none (feed more). err is the
// error of the feed, of the finish, or of a take that gave no item; an
// error after some items is kept for after them (batch.err). r is open.
func (r *LineReader) take(p []byte, finish bool, max int) (more bool, err error) {
	b := &r.b
	if b.reuse {
		b.used = 0
	}
	if len(b.items) < max {
		b.items = make([]C.mcpgo_item, max)
		b.msgs = make([]Message, max)
	}
	var arena *C.uint8_t
	if len(b.arena) > 0 {
		arena = (*C.uint8_t)(unsafe.Pointer(&b.arena[0]))
	}
	var fin C.int
	if finish {
		fin = 1
	}
	// p, b.items and b.arena are Go memory without Go pointers, pinned for
	// the duration of the call; C keeps no pointer to them.
	res := C.mcpgo_take(C.uintptr_t(uintptr(unsafe.Pointer(r.h))), bytesPtr(p), C.size_t(len(p)), fin,
		&b.items[0], C.uint32_t(max), arena, C.size_t(b.used), C.size_t(len(b.arena)))
	n := int(res.n)
	b.used = int(res.used)
	for i := 0; i < n; i++ {
		it := &b.items[i]
		m := &b.msgs[i]
		*m = Message{Kind: Kind(it.kind), RPCKind: RPCKind(it.rpc_kind), Len: int(it.len)}
		switch it.off {
		case C.MCPGO_NO_DATA:
		case C.MCPGO_BORROWED: // the last item: copied before any other call on r
			m.Data = b.copyBorrowed(res.borrowed, m.Len)
		default:
			off := int(it.off)
			m.Data = b.arena[off : off+m.Len : off+m.Len]
			if m.Data == nil { // an empty line from an arena not allocated yet
				m.Data = []byte{}
			}
		}
	}
	// The borrowed bytes are copied: r (and its finalizer) may go now.
	runtime.KeepAlive(r)
	b.n, b.next = n, 0
	switch st := res.status; {
	case st == C.MCP_STATUS_OK:
		return true, nil
	case st == C.MCP_STATUS_NO_MESSAGE:
		return false, nil
	case n == 0:
		return false, statusError(st)
	default:
		b.err = statusError(st)
		return false, nil
	}
}

// copyBorrowed copies the n bytes at p, borrowed from the reader: into a
// new arena, or into a slice of their own when longer than bigItem.
func (b *batch) copyBorrowed(p *C.uint8_t, n int) []byte {
	src := unsafe.Slice((*byte)(unsafe.Pointer(p)), n)
	if b.reuse && (b.arena != nil || n > bigItem) {
		if cap(b.spare) < n {
			b.spare = append(b.spare[:0], src...)
		} else {
			b.spare = b.spare[:n]
			copy(b.spare, src)
		}
		return b.spare[:n:n]
	}
	if n > bigItem {
		// append, unlike make and copy, does not clear the memory it
		// is about to overwrite: one pass over the bytes, not two.
		d := append([]byte(nil), src...)
		return d[:n:n]
	}
	b.arena = make([]byte, arenaSize)
	b.used = copy(b.arena, src)
	return b.arena[:n:n]
}

// pop hands out the next item of the queue.
func (r *LineReader) pop() (Message, bool) {
	b := &r.b
	if b.next == b.n {
		return Message{}, false
	}
	m := b.msgs[b.next]
	b.msgs[b.next] = Message{} // the queue keeps no reference to what it handed out
	b.next++
	return m, true
}

// takeErr returns, once, the error that came after the items of the queue,
// when they are all taken.
func (r *LineReader) takeErr() error {
	b := &r.b
	if b.next < b.n {
		return nil
	}
	err := b.err
	b.err = nil
	return err
}

// drain feeds p (when not empty), marks the end of the stream (when
// finish), and appends every complete item to out. r is open.
func (r *LineReader) drain(out []Message, p []byte, finish bool) ([]Message, error) {
	for {
		for m, ok := r.pop(); ok; m, ok = r.pop() {
			out = append(out, m)
		}
		if err := r.takeErr(); err != nil {
			return out, err
		}
		more, err := r.take(p, finish, batchMax)
		if err != nil {
			return out, err
		}
		p, finish = nil, false
		if !more {
			for m, ok := r.pop(); ok; m, ok = r.pop() {
				out = append(out, m)
			}
			return out, r.takeErr()
		}
	}
}
