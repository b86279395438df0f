package mcpstdio_test

import (
	"errors"
	"strings"
	"syscall"
	"testing"

	mcpstdio "github.com/mcp-stdio/mcp-stdio/bindings/go"
)

// The text of a ServerExitedError, the same words in every language of the
// project.
func TestServerExitedErrorText(t *testing.T) {
	e170 := strings.Repeat("é", 150) // 2 bytes each
	for _, tc := range []struct {
		err  mcpstdio.ServerExitedError
		want string
	}{
		{mcpstdio.ServerExitedError{Code: 1}, "mcpstdio: server exited with code 1"},
		{mcpstdio.ServerExitedError{Code: 0}, "mcpstdio: server exited with code 0"},
		{mcpstdio.ServerExitedError{Code: -1, Signal: syscall.Signal(9)}, "mcpstdio: server killed by signal 9"},
		{mcpstdio.ServerExitedError{Code: 1, BeforeFirstMessage: true,
			StderrTail: []byte("Traceback (most recent call last):\nModuleNotFoundError: No module named 'foo'")},
			"mcpstdio: server exited with code 1 before its first message: ModuleNotFoundError: No module named 'foo'"},
		{mcpstdio.ServerExitedError{Code: -1, Signal: syscall.Signal(15), BeforeFirstMessage: true, StderrTail: []byte("ready")},
			"mcpstdio: server killed by signal 15 before its first message: ready"},
		// The last non-blank line, its CR and white space trimmed at both
		// ends (as the Rust core's trim_ascii).
		{mcpstdio.ServerExitedError{Code: 2, StderrTail: []byte("first\n  npm ERR! 404 \t\r\n\r\n   \n")},
			"mcpstdio: server exited with code 2: npm ERR! 404"},
		// Only blank lines: nothing quoted.
		{mcpstdio.ServerExitedError{Code: 2, StderrTail: []byte("\n \r\n\t")}, "mcpstdio: server exited with code 2"},
		// Cut to 200 bytes: ASCII, then at a UTF-8 boundary.
		{mcpstdio.ServerExitedError{Code: 1, StderrTail: []byte(strings.Repeat("x", 300))},
			"mcpstdio: server exited with code 1: " + strings.Repeat("x", 200)},
		{mcpstdio.ServerExitedError{Code: 1, StderrTail: []byte("a" + e170)},
			"mcpstdio: server exited with code 1: a" + strings.Repeat("é", 99)},
		{mcpstdio.ServerExitedError{Code: 1, StderrTail: []byte(e170)},
			"mcpstdio: server exited with code 1: " + strings.Repeat("é", 100)},
		// Invalid UTF-8 is replaced, one U+FFFD for each maximal invalid
		// subpart (as Rust's String::from_utf8_lossy).
		{mcpstdio.ServerExitedError{Code: 1, StderrTail: []byte("bad \xff\xfe byte")},
			"mcpstdio: server exited with code 1: bad \uFFFD\uFFFD byte"},
		{mcpstdio.ServerExitedError{Code: 1, StderrTail: []byte("cut \xe2\x82 euro, \xf0\x9f\x98 smile, \xed\xa0\x80 surrogate, \xe0\x80 overlong")},
			"mcpstdio: server exited with code 1: cut \uFFFD euro, \uFFFD smile, \uFFFD\uFFFD\uFFFD surrogate, \uFFFD\uFFFD overlong"},
		// The replacement counts in the 200 bytes (3 bytes each).
		{mcpstdio.ServerExitedError{Code: 1, StderrTail: []byte(strings.Repeat("\xff", 100))},
			"mcpstdio: server exited with code 1: " + strings.Repeat("\uFFFD", 66)},
		// A form feed or a vertical tab: the one is ASCII white space, the
		// other not (Rust's trim_ascii).
		{mcpstdio.ServerExitedError{Code: 1, StderrTail: []byte("form feed\f\nvertical tab\v")},
			"mcpstdio: server exited with code 1: vertical tab\v"},
		{mcpstdio.ServerExitedError{Code: 1, StderrTail: []byte("\f\tindented\r")},
			"mcpstdio: server exited with code 1: indented"},
	} {
		err := tc.err
		if got := err.Error(); got != tc.want {
			t.Errorf("%+v:\n got %q\nwant %q", tc.err, got, tc.want)
		}
		if !errors.Is(&err, mcpstdio.ErrClosed) {
			t.Errorf("%q does not match ErrClosed", tc.want)
		}
	}
	var wrapped error = &mcpstdio.ServerExitedError{Code: 7}
	var exit *mcpstdio.ServerExitedError
	if !errors.As(wrapped, &exit) || exit.Code != 7 {
		t.Errorf("errors.As: %v", exit)
	}

	if got := mcpstdio.ErrStdoutClosed.Error(); got != "mcpstdio: server closed its stdout" {
		t.Errorf("ErrStdoutClosed: %q", got)
	}
	if !errors.Is(mcpstdio.ErrStdoutClosed, mcpstdio.ErrClosed) {
		t.Error("ErrStdoutClosed does not match ErrClosed")
	}
	if errors.As(mcpstdio.ErrStdoutClosed, &exit) {
		t.Error("ErrStdoutClosed is a *ServerExitedError")
	}
}
