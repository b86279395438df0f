// Package mcpstdio frames MCP (Model Context Protocol) stdio messages:
// newline-delimited JSON-RPC, one JSON text per line. It is a thin cgo
// binding of the mcp-stdio C library (include/mcp_stdio.h).
//
// Reading: a [LineReader] takes the bytes of a stream in chunks of any size
// ([LineReader.Feed]) and returns the items they complete, in stream order:
// JSON messages, and reports of lines that are not one ([KindParseError],
// [KindTooLong], [KindInvalidJSONRPC]). Chunking never changes the items.
// Lines end at "\n"; surrounding space, tab and CR are trimmed (so CRLF
// works), empty lines are skipped and a UTF-8 BOM opening the stream is
// skipped. A [Decoder] does the same over an [io.Reader].
//
// Writing: [Encode] validates one JSON text and returns it compact, followed
// by exactly one "\n"; [EncodeValue] marshals a Go value first; an [Encoder]
// writes such lines to an [io.Writer].
//
// Connections: a [Conn] runs one MCP stdio connection over an [io.Reader]
// and an [io.Writer] (a child process's pipes, os.Stdin and os.Stdout):
// [Conn.Request] sends a request and waits for its answer (an error
// response is a [*ResponseError]; a ctx deadline or cancellation makes the
// library send notifications/cancelled), [Conn.Notify] sends a
// notification, and a [Handler] answers the peer's requests. It drives the
// library's memory transport with goroutines: request ids, matching,
// timeouts and cancellation are the library's.
//
// Servers as child processes (Unix): [StartCommand] starts an [os/exec.Cmd]
// in a process group of its own and returns a [CommandConn], a Conn on its
// stdin and stdout that also applies the MCP stdio shutdown to the group,
// as the C library's mcp_transport_spawn does: at [CommandConn.Close] (or
// when the server exits by itself, or the Conn ends) the server's stdin is
// closed, SIGTERM goes to the group at the closing grace if it is still
// there, SIGKILL at twice the grace, and the server is always reaped.
// [CommandConfig].Stderr receives its stderr line by line, always drained;
// [CommandConn.StderrTail] keeps its last 20 lines (4 KiB at most), empty
// without the callback (stderr inherited or discarded is never read).
// [CommandConn.ExitCode], [CommandConn.TermSignal] and [CommandConn.Wait]
// tell how it ended. A server that ends by itself (it exits, or closes its
// stdout) before the host's Close fails every pending Request at once, and
// every later send, with an error wrapping [ErrClosed] that says why: a
// [*ServerExitedError] ("mcpstdio: server exited with code 1 before its
// first message: ModuleNotFoundError: No module named 'foo'": the exit
// status, and the last line of the stderr tail) or [ErrStdoutClosed];
// [CommandConn.Err] gives it too. After the host's own Close they fail
// with plain ErrClosed.
//
// Memory: every [Message] owns a Go copy of its bytes, so it stays valid
// after later calls ([Decoder.ReuseData] trades that for speed). Items cross
// from C to Go in batches, one cgo call for up to 512 items, their bytes in
// shared arenas of up to 64 KiB (a kept item keeps its arena alive). A
// LineReader holds C memory: [LineReader.Close] frees it; a finalizer frees
// a reader that was never closed, but do not rely on it for timely release.
//
// Concurrency: a LineReader or Decoder is not safe for concurrent use (like
// a [bufio.Reader]): use it from one goroutine at a time. Different readers
// are independent, and the package-level functions and a Conn's methods are
// safe for concurrent use. The C library keeps no global or thread-local
// state, so goroutines may move between OS threads freely (no
// [runtime.LockOSThread]).
//
// Building: by default the package links target/release/libmcp_stdio.a of
// the repository it lives in (run `cargo build --release` at the repository
// root first). For a library installed with CMake, the build tag
// mcpstdio_pkgconfig_static links its static library (`pkg-config
// mcp_stdio_static`), and mcpstdio_pkgconfig its shared library
// (`pkg-config mcp_stdio`; outside the loader's directories, add
// CGO_LDFLAGS=-Wl,-rpath,<libdir>).
package mcpstdio
