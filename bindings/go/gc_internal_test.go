package mcpstdio

import (
	"bytes"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// Readers that are never closed are freed by their finalizer.
func TestFinalizerFreesForgottenReaders(t *testing.T) {
	const n = 1000
	before := finalized.Load()
	func() {
		for i := 0; i < n; i++ {
			r, err := NewLineReader()
			if err != nil {
				t.Fatal(err)
			}
			// Some buffered bytes, so the C side holds memory.
			if _, err := r.Feed([]byte(`{"id":1}` + "\n" + `{"unterminated":`)); err != nil {
				t.Fatal(err)
			}
		}
	}()
	deadline := time.Now().Add(10 * time.Second)
	for finalized.Load()-before < n {
		if time.Now().After(deadline) {
			t.Fatalf("after GC only %d of %d readers were finalized", finalized.Load()-before, n)
		}
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	// A closed reader is not finalized again (its finalizer is cleared).
	closedBefore := finalized.Load()
	func() {
		for i := 0; i < 100; i++ {
			r, _ := NewLineReader()
			r.Close()
		}
	}()
	for i := 0; i < 5; i++ {
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	if d := finalized.Load() - closedBefore; d != 0 {
		t.Fatalf("%d closed readers were finalized", d)
	}
}

// readerWith returns a reader holding payload+"\n", whose only reference is
// the returned pointer: once the caller's method call no longer uses it, the
// reader is unreachable and its finalizer may free the C buffer.
//
//go:noinline
func readerWith(t *testing.T, payload []byte) *LineReader {
	r, err := NewLineReader(NoLineLimit())
	if err != nil {
		t.Fatal(err)
	}
	if err := r.feed(payload); err != nil {
		t.Fatal(err)
	}
	if err := r.feed([]byte("\n")); err != nil {
		t.Fatal(err)
	}
	return r
}

// The message data is copied before the reader may be collected: without
// the runtime.KeepAlive in next, the finalizer (run by a GC forced from
// another goroutine) can free the C buffer during the copy, and the copy
// then holds garbage (or the process crashes).
func TestKeepAliveDuringCopy(t *testing.T) {
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for g := 0; g < 2; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
					runtime.GC()
				}
			}
		}()
	}
	defer func() { close(stop); wg.Wait() }()

	before := finalized.Load()
	iterations := 100
	if testing.Short() {
		iterations = 20
	}
	// Lines of 4 MiB: the C buffer is then large enough to be given back to
	// the system when freed, so a read after the free faults.
	base := []byte(`"` + strings.Repeat("x", 4<<20) + `"`)
	for i := 0; i < iterations; i++ {
		// A distinct payload each time, so a freed and reused buffer shows.
		payload := base[:len(base)-i*4099]
		copy(payload[1:], fmt.Sprintf("%08d", i))
		copy(payload[len(payload)-9:], fmt.Sprintf("%08d", i))
		payload[len(payload)-1] = '"'
		m, ok, err := readerWith(t, payload).Next()
		if err != nil || !ok {
			t.Fatalf("iteration %d: Next = %v, %v", i, ok, err)
		}
		if m.Kind != KindMessage || !bytes.Equal(m.Data, payload) {
			t.Fatalf("iteration %d: data corrupted (kind %v, %d bytes)", i, m.Kind, len(m.Data))
		}
		// Same for the slice that Feed returns.
		ms, err := readerWithPartial(t, payload).Feed([]byte("\n"))
		if err != nil || len(ms) != 1 || !bytes.Equal(ms[0].Data, payload) {
			t.Fatalf("iteration %d: Feed: %d items, %v", i, len(ms), err)
		}
	}
	if finalized.Load() == before {
		t.Fatal("no reader was finalized: the test did not exercise the finalizer")
	}
}

//go:noinline
func readerWithPartial(t *testing.T, payload []byte) *LineReader {
	r, err := NewLineReader(NoLineLimit())
	if err != nil {
		t.Fatal(err)
	}
	if err := r.feed(payload); err != nil {
		t.Fatal(err)
	}
	return r
}
