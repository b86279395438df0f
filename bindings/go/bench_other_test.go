//go:build !unix

package mcpstdio_test

import "time"

// cpuTime is 0 where getrusage is missing: no cpu-MB/s is reported.
func cpuTime() time.Duration { return 0 }

// offHeap returns b: the corpora stay in the Go heap.
func offHeap(b []byte) []byte { return b }
