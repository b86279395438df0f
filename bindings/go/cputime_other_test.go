//go:build !unix

package mcpstdio_test

import "time"

// cpuTime is 0 where getrusage is missing: no cpu-MB/s is reported.
func cpuTime() time.Duration { return 0 }
