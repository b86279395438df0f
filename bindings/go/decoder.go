package mcpstdio

import "io"

// decoderChunk is how many bytes a Decoder asks its reader for at a time.
const decoderChunk = 64 << 10

// maxEmptyReads is how many reads in a row may return no data and no error
// before Decode gives up with io.ErrNoProgress (as bufio does).
const maxEmptyReads = 100

// Decoder reads the items of a stream from an io.Reader, in chunks of 64
// KiB. Like a bufio.Reader it may read ahead of the item it returns, and it
// takes the items from the C reader in batches: one cgo call feeds a chunk
// and takes up to 512 items.
//
// Each item's Data is Go memory of its own, valid for as long as you keep
// it (unless ReuseData). The items of a batch share one allocation, an
// arena of up to 64 KiB (16 KiB when the items come a few at a time), each
// Data a slice of it whose capacity is its length; an item that does not
// fit in 64 KiB has a slice of its own. The trade-off: a Data you keep
// keeps its whole arena alive, up to 64 KiB for one small message. Copy a
// small item you keep for long among many you drop (append([]byte(nil),
// m.Data...)) to let the rest go.
//
// A Decoder is not safe for concurrent use. It holds a LineReader: Close
// frees it early (it is also freed at io.EOF, after an error, and by a
// finalizer).
type Decoder struct {
	r        io.Reader
	lr       *LineReader
	buf      []byte
	peek     Message
	havePeek bool
	more     bool  // the line reader may hold complete items not taken yet
	readErr  error // a read error, returned once the complete items are taken
	eof      bool  // r reported io.EOF and the line reader was finished
	err      error // sticky: what Decode returns from now on
}

// NewDecoder returns a Decoder reading from r, its LineReader configured by
// opts. An invalid option is reported by the first Decode.
func NewDecoder(r io.Reader, opts ...Option) *Decoder {
	lr, err := NewLineReader(opts...)
	return &Decoder{r: r, lr: lr, err: err}
}

// Decode returns the next item of the stream, reading as needed. At the end
// of the stream the last line, even without a final "\n", is delivered, then
// Decode returns io.EOF. A read error is returned after the items completed
// before it; errors are sticky.
func (d *Decoder) Decode() (Message, error) {
	if !d.havePeek && d.err == nil {
		// Not d.lr.pop: the Message is built here, in the result (see
		// batch.nextItem).
		if kind, rpc, data, n, ok := d.lr.b.nextItem(); ok {
			return Message{Kind: kind, RPCKind: rpc, Data: data, Len: n}, nil
		}
		return d.decode()
	}
	if d.havePeek {
		m := d.peek
		d.peek, d.havePeek = Message{}, false
		return m, nil
	}
	return d.decode()
}

// More reports whether another item is available, reading ahead as needed
// (it may block). When it returns false, Decode returns the reason: io.EOF
// or an error.
func (d *Decoder) More() bool {
	if d.havePeek || d.err == nil && d.lr.b.next < d.lr.b.n {
		return true // the next item is taken already: Decode hands it out
	}
	m, err := d.decode()
	if err != nil {
		return false
	}
	d.peek, d.havePeek = m, true
	return true
}

// ReuseData makes the Decoder reuse the memory of the items' Data: the Data
// of an item returned by Decode is then valid only until the next call to
// Decode or More, which may overwrite it (as with bufio.Scanner.Bytes).
// Copy what you keep. No memory is allocated per item any more: the Decoder
// keeps one 64 KiB arena and one buffer as long as the longest item that
// did not fit in it. For a consumer that handles each item at once (unmarshal
// it, forward it), that saves the allocation and the garbage collection of
// every item's bytes: on lines of 1 KiB and more, most of what the Decoder
// adds to the C reader's own time. Items returned before the call are not
// affected.
func (d *Decoder) ReuseData() {
	if d.lr != nil {
		// The items already taken stay in their arena: only the next
		// batches go to the stage.
		d.lr.b.reuse = true
	}
}

// Close frees the decoder's LineReader; it does not close the io.Reader.
// Decode then returns ErrClosed. Close is idempotent.
func (d *Decoder) Close() error {
	d.lr.Close()
	d.peek, d.havePeek = Message{}, false
	d.err = ErrClosed
	return nil
}

func (d *Decoder) decode() (Message, error) {
	if d.err != nil {
		return Message{}, d.err
	}
	empty := 0
	for {
		if m, ok := d.lr.pop(); ok {
			return m, nil
		}
		if err := d.lr.takeErr(); err != nil {
			return Message{}, d.fail(err)
		}
		var p []byte
		finish := false
		if !d.more {
			// Nothing complete is buffered: read.
			if d.eof {
				return Message{}, d.fail(io.EOF)
			}
			if d.readErr != nil {
				return Message{}, d.fail(d.readErr)
			}
			if d.buf == nil {
				d.buf = make([]byte, decoderChunk)
			}
			n, rerr := d.r.Read(d.buf)
			p = d.buf[:n]
			if n > 0 {
				empty = 0
			}
			switch {
			case rerr == io.EOF: // io.Reader returns io.EOF itself, never wrapped
				finish, d.eof = true, true
			case rerr != nil:
				d.readErr = rerr
			case n == 0:
				empty++
				if empty >= maxEmptyReads {
					d.readErr = io.ErrNoProgress
				}
			}
			if n == 0 && !finish {
				continue
			}
		}
		// One cgo call: feed what was read (and the end of the stream),
		// take a batch of items.
		more, err := d.lr.take(p, finish, batchMax)
		if err != nil {
			return Message{}, d.fail(err)
		}
		d.more = more
	}
}

// fail makes err sticky and frees the line reader.
func (d *Decoder) fail(err error) error {
	d.err = err
	d.lr.Close()
	d.buf = nil
	return err
}
