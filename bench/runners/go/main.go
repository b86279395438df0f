// Go's standard library as a host would frame MCP stdio, for bench/run.sh: a
// bufio.Reader (64 KiB buffer) over a reader that returns at most CHUNK bytes per Read
// (as a pipe does), ReadSlice('\n') for each line (a line longer than the buffer is
// gathered from its ErrBufferFull fragments, as ReadBytes does), then json.Valid on the
// line: a validity check only, no decoding into values (the fastest thing
// encoding/json offers; Unmarshal into a struct or map would be slower).
//
// Usage: go-runner RUNNER CORPUS FILE CHUNK RUNS
// Prints: BENCH runner=.. corpus=.. chunk=.. bytes=.. messages=.. errors=.. seconds=<best>
//
//	median=.. runs=.. checksum=..
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"time"
)

// chunkReader returns at most chunk bytes per Read, copied, like read(2) on a pipe.
type chunkReader struct {
	data  []byte
	off   int
	chunk int
}

func (r *chunkReader) Read(p []byte) (int, error) {
	if r.off >= len(r.data) {
		return 0, io.EOF
	}
	n := len(r.data) - r.off
	if n > r.chunk {
		n = r.chunk
	}
	if n > len(p) {
		n = len(p)
	}
	copy(p, r.data[r.off:r.off+n])
	r.off += n
	return n, nil
}

type counts struct{ messages, errors, checksum uint64 }

func judge(line []byte, c *counts) {
	line = bytes.TrimRight(line, "\r\n")
	if len(line) == 0 {
		return
	}
	if json.Valid(line) {
		c.messages++
	} else {
		c.errors++
	}
	c.checksum += uint64(len(line))
}

func onePass(data []byte, chunk int) counts {
	var c counts
	br := bufio.NewReaderSize(&chunkReader{data: data, chunk: chunk}, 64*1024)
	var long []byte // a line longer than the bufio buffer, being gathered
	for {
		frag, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			long = append(long, frag...)
			continue
		}
		if long != nil {
			long = append(long, frag...)
			frag, long = long, nil
		}
		if len(frag) > 0 {
			judge(frag, &c)
		}
		if err == io.EOF {
			return c
		} else if err != nil {
			panic(err)
		}
	}
}

func main() {
	if len(os.Args) != 6 {
		fmt.Fprintf(os.Stderr, "usage: %s RUNNER CORPUS FILE CHUNK RUNS\n", os.Args[0])
		os.Exit(2)
	}
	data, err := os.ReadFile(os.Args[3])
	if err != nil {
		fmt.Fprintln(os.Stderr, "go-runner:", err)
		os.Exit(2)
	}
	chunk, err1 := strconv.Atoi(os.Args[4])
	runs, err2 := strconv.Atoi(os.Args[5])
	if err1 != nil || err2 != nil || chunk <= 0 || runs <= 0 {
		fmt.Fprintln(os.Stderr, "go-runner: CHUNK and RUNS must be positive numbers")
		os.Exit(2)
	}
	times := make([]float64, 0, runs)
	var first counts
	for r := 0; r < runs; r++ {
		t := time.Now()
		c := onePass(data, chunk)
		times = append(times, time.Since(t).Seconds())
		if r == 0 {
			first = c
		} else if c != first {
			panic("runs disagree")
		}
	}
	sort.Float64s(times)
	fmt.Printf("BENCH runner=%s corpus=%s chunk=%d bytes=%d messages=%d errors=%d seconds=%.9f median=%.9f runs=%d checksum=%d\n",
		os.Args[1], os.Args[2], chunk, len(data), first.messages, first.errors, times[0], times[runs/2], runs, first.checksum)
}
