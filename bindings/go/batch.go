package mcpstdio

// Items are taken from the C reader in batches: one cgo call feeds a chunk
// (or marks the end of the stream) and takes up to batchMax items. A cgo
// call and an allocation per message cost more than the C reader's own
// work on a message of 150 bytes (taken one by one, such messages came at
// under 40% of the C reader's speed); per batch, they are paid once.
//
// The lifetime rule of the C reader (an item's data borrows the reader's
// buffer until the next call on it) holds because the bytes are copied in
// the same C call that takes the item, or, for the one item of a batch
// that is handed over (the last of the batch), by Go right after the call
// and before any other.
//
// Within the call, C copies the bytes of the items into the stage, a
// buffer of the LineReader reused by every take, which stays in the cache.
// After the call, Go copies what was staged into an arena with one append:
// one allocation per batch, of the batch's size, which an append does not
// clear first (make would, and the stage's copy then writes it again).
// Memory fresh from the garbage collector is what costs: writing it costs
// several times as much as writing the stage, and more in small pieces
// than in large ones. An item that does not fit in what is left of the
// stage ends the batch and is copied by Go into a slice of its own, also
// with one append: it is written once.
//
// An arena is only ever appended to: the bytes handed out in a Message are
// never written again (its capacity is its length), so a Message kept from
// a batch is not disturbed by the next ones. A batch that fits in what is
// left of the last arena goes there; a small one starts an arena of
// minArena bytes, so that items taken a few at a time (a peer sending one
// message at a time, LineReader.Next) share arenas too. A Message keeps its
// whole arena alive: at most stageSize bytes, or minArena.

/*
#include <string.h>
#include "mcp_stdio.h"

// One item of a batch: its kind, and where its bytes are. off is the
// offset of its copy in the stage, or MCPGO_NO_DATA (data NULL: a line too
// long), or MCPGO_BORROWED (not staged: mcpgo_batch.borrowed points to
// them in the reader's buffer, until the next call on the reader).
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
	size_t used; // stage bytes used
	const uint8_t *borrowed;
} mcpgo_batch;

// Feeds data[0..len] (when len > 0), marks the end of the stream (when
// finish), then takes up to max items into items[], copying their bytes
// to stage[0..cap]; an item that does not fit is borrowed and ends the
// batch. Go memory is only written during the call and no pointer to it
// is kept. The reader is passed as an integer: cgo would box a pointer to
// an incomplete type to check it, an allocation per call.
static mcpgo_batch mcpgo_take(uintptr_t reader, const uint8_t *data, size_t len, int finish,
		mcpgo_item *items, uint32_t max, uint8_t *stage, size_t cap) {
	McpLineReader *r = (McpLineReader *)reader;
	mcpgo_batch b = { MCP_STATUS_OK, 0, 0, NULL };
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
			if (m.len > 0) memcpy(stage + b.used, m.data, m.len);
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
	// batchMax is the most items taken per cgo call: enough for messages
	// of ~150 bytes to fill the stage.
	batchMax = 512
	// stageSize is the size of the stage: the most bytes of a batch's
	// items, so the largest arena. A Message in an arena keeps the whole
	// arena alive: not too large, so that one kept message holds little
	// memory; large enough that the allocation of an arena costs little
	// against the bytes it holds (fresh memory is written at about 4 GB/s
	// here in arenas of 8 KiB, 6 GB/s in arenas of 32 or 64 KiB, against
	// 50 GB/s for the stage).
	stageSize = 64 << 10
	// minArena is the smallest arena allocated, for batches of a few
	// items, which the next batches then fill.
	minArena = 16 << 10
)

// batch is what a LineReader took from the C reader and not yet handed
// out: items[next:n], their Data in arena (from base) and big.
type batch struct {
	items []C.mcpgo_item // written by C
	n     int
	next  int
	arena []byte // cap > len: the next batch may go to arena[len:]; arena[:len] is never written again (unless reuse)
	base  int    // the offset in arena of the items' staged bytes (their off is in the stage)
	big   []byte // the Data of the borrowed item, the last
	err   error  // an error that came after items[:n], for once they are taken
	stage []byte // len == cap == stageSize, written by C during a take

	// reuse: the items handed out before a take may be overwritten by it
	// (Decoder.ReuseData): the stage itself is the arena, and an item not
	// staged goes to spare, reused too.
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
	if len(b.items) < max {
		b.items = make([]C.mcpgo_item, max)
	}
	if b.stage == nil {
		b.stage = make([]byte, stageSize)
	}
	var fin C.int
	if finish {
		fin = 1
	}
	// p, b.items and b.stage are Go memory without Go pointers, pinned
	// for the duration of the call; C keeps no pointer to them.
	res := C.mcpgo_take(C.uintptr_t(uintptr(unsafe.Pointer(r.h))), bytesPtr(p), C.size_t(len(p)), fin,
		&b.items[0], C.uint32_t(max), (*C.uint8_t)(unsafe.Pointer(&b.stage[0])), C.size_t(len(b.stage)))
	n := int(res.n)
	b.n, b.next = n, 0
	b.big = nil
	if used := int(res.used); used > 0 {
		b.keepStaged(used)
	}
	if res.borrowed != nil { // the last item: copied before any other call on r
		b.big = b.copyBorrowed(res.borrowed, int(b.items[n-1].len))
	}
	// The borrowed bytes are copied: r (and its finalizer) may go now.
	runtime.KeepAlive(r)
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

// keepStaged moves the used bytes of the stage to where the batch's
// messages will point: the rest of the last arena when they fit, else a
// new arena (with reuse, the stage stays the arena).
func (b *batch) keepStaged(used int) {
	staged := b.stage[:used]
	switch {
	case b.reuse:
		b.arena, b.base = staged, 0
	case cap(b.arena)-len(b.arena) >= used:
		b.base = len(b.arena)
		b.arena = append(b.arena, staged...)
	case used < minArena:
		// Zeroed by make, then partly written: the batches to come
		// fill the rest.
		b.arena = append(make([]byte, 0, minArena), staged...)
		b.base = 0
	default:
		// append, unlike make and copy, does not clear the memory it is
		// about to overwrite: one pass over the bytes, not two.
		b.arena = append([]byte(nil), staged...)
		b.base = 0
	}
}

// copyBorrowed copies the n bytes at p, borrowed from the reader, into a
// slice of their own.
func (b *batch) copyBorrowed(p *C.uint8_t, n int) []byte {
	src := unsafe.Slice((*byte)(unsafe.Pointer(p)), n)
	if b.reuse {
		if cap(b.spare) < n {
			b.spare = append(b.spare[:0], src...)
		} else {
			b.spare = b.spare[:n]
			copy(b.spare, src)
		}
		return b.spare[:n:n]
	}
	d := append([]byte(nil), src...)
	return d[:n:n]
}

// pop hands out the next item of the queue.
func (r *LineReader) pop() (Message, bool) {
	kind, rpc, data, n, ok := r.b.nextItem()
	if !ok {
		return Message{}, false
	}
	return Message{Kind: kind, RPCKind: rpc, Data: data, Len: n}, true
}

// nextItem hands out the next item of the queue, as the fields of a
// Message. A Message (six words, more than the compiler keeps in
// registers) returned from one function to another is copied through the
// stack, 16 bytes at a time, from where it was just written 8 bytes at a
// time: each copy then waits for the stores to complete, three times
// (store forwarding fails), which cost 5% of the Decoder's time on small
// messages. The caller builds the Message in its own result instead.
func (b *batch) nextItem() (kind Kind, rpc RPCKind, data []byte, n int, ok bool) {
	if b.next == b.n {
		return 0, 0, nil, 0, false
	}
	it := &b.items[b.next]
	b.next++
	switch it.off {
	case C.MCPGO_NO_DATA:
	case C.MCPGO_BORROWED:
		data = b.big
		b.big = nil // the queue keeps no reference to what it handed out
	default:
		off, end := b.base+int(it.off), b.base+int(it.off)+int(it.len)
		data = b.arena[off:end:end]
		if data == nil { // an empty line from an arena not allocated yet
			data = []byte{}
		}
	}
	return Kind(it.kind), RPCKind(it.rpc_kind), data, int(it.len), true
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
