package mcpstdio

import (
	"bytes"
	"fmt"
	"runtime"
	"testing"
	"unsafe"
)

// line returns a JSON line of exactly n bytes (n >= 10), distinct per id.
func line(id, n int) []byte {
	head := fmt.Sprintf(`{"i":%d,"p":"`, id)
	return []byte(head + string(bytes.Repeat([]byte{byte('a' + id%26)}, n-len(head)-2)) + `"}`)
}

// adjacent reports whether b starts right where a ends: the same arena.
func adjacent(a, b []byte) bool {
	return uintptr(unsafe.Pointer(&a[0]))+uintptr(len(a)) == uintptr(unsafe.Pointer(&b[0]))
}

// feedLines feeds the lines (each with its "\n") in one chunk and checks
// the items against them.
func feedLines(t *testing.T, r *LineReader, lines ...[]byte) []Message {
	t.Helper()
	var chunk []byte
	for _, l := range lines {
		chunk = append(append(chunk, l...), '\n')
	}
	ms, err := r.Feed(chunk)
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != len(lines) {
		t.Fatalf("%d items, want %d", len(ms), len(lines))
	}
	for i, m := range ms {
		if m.Kind != KindMessage || !bytes.Equal(m.Data, lines[i]) || cap(m.Data) != len(m.Data) {
			t.Fatalf("item %d: %v, %d bytes (cap %d), want the line of %d bytes", i, m.Kind, len(m.Data), cap(m.Data), len(lines[i]))
		}
	}
	return ms
}

// Where the bytes of the items go (batch.go): a batch's staged items
// share one arena; a batch of a few items starts an arena of minArena
// bytes that the next batches fill; a batch that does not fit in what is
// left goes to a new arena, never across two; a batch larger than
// minArena gets an arena of its own size; an item that does not fit in
// the stage gets a slice of its own. Every item stays intact through all
// of it, and after garbage collections.
func TestBatchArenas(t *testing.T) {
	r, err := NewLineReader(NoLineLimit())
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var kept []Message
	var want [][]byte
	keep := func(ms []Message) {
		for _, m := range ms {
			kept = append(kept, m)
			want = append(want, append([]byte(nil), m.Data...))
		}
	}

	// A batch of one item starts an arena of minArena bytes...
	a := feedLines(t, r, line(1, 1000))
	if cap(r.b.arena) != minArena {
		t.Fatalf("arena of %d bytes after a small batch, want %d", cap(r.b.arena), minArena)
	}
	// ...which the next batches fill, up to exactly its end.
	fill := minArena - 1000 - 3000
	b := feedLines(t, r, line(2, 3000), line(3, fill))
	if !adjacent(a[0].Data, b[0].Data) || !adjacent(b[0].Data, b[1].Data) {
		t.Fatal("the batches after a small one do not share its arena")
	}
	if len(r.b.arena) != cap(r.b.arena) {
		t.Fatalf("arena %d of %d bytes used, want it full", len(r.b.arena), cap(r.b.arena))
	}
	keep(a)
	keep(b)

	// A batch that does not fit in what is left goes, whole, to a new
	// arena: its first item at the start.
	c := feedLines(t, r, line(4, 500), line(5, 600))
	if adjacent(b[1].Data, c[0].Data) || !adjacent(c[0].Data, c[1].Data) {
		t.Fatal("a batch that did not fit the last arena is not alone in a new one")
	}
	if &r.b.arena[0] != &c[0].Data[0] {
		t.Fatal("the new arena does not start with the batch's first item")
	}
	keep(c)

	// Half an arena left: a batch one byte too large for it moves on.
	rest := cap(r.b.arena) - len(r.b.arena)
	d := feedLines(t, r, line(6, rest-200), line(7, 201))
	if adjacent(c[1].Data, d[0].Data) {
		t.Fatal("a batch one byte larger than the rest of the arena went there")
	}
	keep(d)
	// And one that fits exactly stays.
	rest = cap(r.b.arena) - len(r.b.arena)
	e := feedLines(t, r, line(8, rest-100), line(9, 100))
	if !adjacent(d[1].Data, e[0].Data) || len(r.b.arena) != cap(r.b.arena) {
		t.Fatal("a batch that fits exactly in the rest of the arena did not go there")
	}
	keep(e)

	// A batch larger than minArena: an arena of its own, of its size (the
	// allocator rounds it up to a size class or a page).
	var big [][]byte
	for i := 0; i < 40; i++ {
		big = append(big, line(100+i, 1000))
	}
	f := feedLines(t, r, big...)
	for i := 1; i < len(f); i++ {
		if !adjacent(f[i-1].Data, f[i].Data) {
			t.Fatalf("items %d and %d of one batch are not in one arena", i-1, i)
		}
	}
	if n := cap(r.b.arena); n < 40*1000 || n > 40*1000+8192 {
		t.Fatalf("an arena of %d bytes for a batch of %d", n, 40*1000)
	}
	keep(f)

	// An item that does not fit in the stage, alone or after others: a
	// slice of its own, which ends the batch; the items after it come
	// in the next batches.
	g := feedLines(t, r, line(200, 300), line(201, stageSize+1), line(202, 300), line(203, stageSize), line(204, stageSize-100), line(205, 300))
	if adjacent(g[0].Data, g[1].Data) || adjacent(g[1].Data, g[2].Data) {
		t.Fatal("an item larger than the stage shares an arena")
	}
	keep(g)

	// Everything kept is intact after more batches and collections.
	for i := 0; i < 200; i++ {
		feedLines(t, r, line(300+i, 100+i*37%5000), line(301+i, 1000))
		if i%50 == 0 {
			runtime.GC()
		}
	}
	runtime.GC()
	runtime.GC()
	for i, m := range kept {
		if !bytes.Equal(m.Data, want[i]) {
			t.Fatalf("kept item %d changed", i)
		}
	}
}
