// mcp_stdio.hpp: header-only C++17 wrapper of the mcp-stdio C API (mcp_stdio.h).
//
// Framing of MCP stdio messages (newline-delimited JSON-RPC): mcp::LineReader
// splits an input stream into messages, mcp::encode turns one JSON text into
// one line to write, mcp::Transport is a whole connection (requests matched
// with their answers, timeouts, a bounded output queue, close). Nothing to
// build: include this header and link libmcp_stdio as for the C API (CMake:
// mcp_stdio::mcp_stdio).
//
//     mcp::LineReader reader(mcp::ReaderFlags::JsonRpc);  // throws std::bad_alloc
//     reader.feed(chunk);                                 // any chunking
//     while (auto msg = reader.next()) {                  // std::optional<mcp::Message>
//         if (msg->kind() == mcp::MessageKind::Json) handle(std::string(msg->data()));
//     }
//     std::string line = mcp::encode(R"({"jsonrpc": "2.0", "id": 1, "result": {}})");
//
//     auto t = mcp::Transport::open_fds(from_server, to_server);  // or mcp::Transport() in memory
//     std::int64_t id = t.request("tools/list", "{}", std::chrono::seconds(5));
//     while (auto ev = t.next_event(mcp::Transport::forever)) {  // std::nullopt: ended
//         if (ev->kind() == mcp::EventKind::Response && ev->request_id() == id) {
//             use(std::string(ev->envelope().result()));  // borrowed: copy it
//             t.close(std::chrono::seconds(1));           // Closed comes next, then the loop ends
//         } else if (ev->kind() == mcp::EventKind::Message &&
//                    ev->rpc_kind() == mcp::RpcKind::Request) {
//             t.respond_error(ev->envelope().id(), -32601, "Method not found");
//         }
//     }
//
// Types
//   mcp::LineReader   RAII owner of an McpLineReader*. Move-only: a moved-from
//                     reader is empty (operator bool false), safe to destroy
//                     or assign to; calling it throws
//                     mcp::Error(Status::NullArgument), buffered_len() gives 0.
//                     Options: set_max_line_len(n or LineReader::no_limit),
//                     set_flags(ReaderFlags::SkipInvalid | ReaderFlags::JsonRpc).
//   mcp::Message      one item of next(): kind() (MessageKind), rpc_kind()
//                     (RpcKind), data(), size().
//   mcp::Buffer       RAII owner of an McpBuffer (what encode_buffer returns),
//                     move-only, for callers that want no copy.
//   mcp::Transport    RAII owner of an McpTransport*: Transport() is a memory
//                     transport (you move the bytes: receive, receive_end,
//                     take_output/read_output), Transport::open_fds(read_fd,
//                     write_fd[, TransportFlags::BorrowFds]) does its own I/O
//                     (POSIX). Move-only like LineReader: a moved-from one is
//                     empty, its destructor a no-op, calls throw
//                     mcp::Error(Status::NullArgument).
//                     Sends: send, request (returns the id), notify, respond,
//                     respond_error, cancel, close; set_max_queued,
//                     set_max_line_len. Receiving: next_event(timeout) ->
//                     std::optional<mcp::Event>, closed(); poll_fds (POSIX)
//                     for event loops. POSIX: Transport::spawn(command[,
//                     SpawnFlags::KillOnHostExit]) starts a server and
//                     supervises it (pid(), stderr_dropped(); close(grace):
//                     SIGTERM to its group at grace, SIGKILL at 2x grace),
//                     Transport::open_stdio([StdioFlags::GuardStdout]) is the
//                     server's own side.
//   mcp::Command      RAII owner of an McpCommand* (POSIX), move-only, built
//                     fluently: Command("prog").arg("x").env("K", "V")
//                     .env_remove("K").env_mode(EnvMode::Clear).cwd("/tmp")
//                     .stderr_mode(StderrMode::Discard).
//   mcp::Event        one event of next_event: kind() (EventKind), rpc_kind(),
//                     request_id(), data(), size(), envelope(),
//                     invalid_kind(), exit_code(), term_signal().
//   mcp::Envelope     a message's JSON-RPC kind and raw id, method, params,
//                     result, error tokens (empty view: absent); method_is().
//   mcp::RequestResult  what try_request returns: {status, id}.
//   mcp::Error        the exception: a std::system_error (so a
//                     std::runtime_error) whose code() is in mcp::category()
//                     and whose status() is the mcp::Status; what() is
//                     "<function>: <mcp_status_str text>".
//   mcp::Status       the McpStatus values as an enum class. Both mcp::Status
//                     and the C McpStatus convert to std::error_code, so
//                     `e.code() == MCP_STATUS_INVALID_JSON` and
//                     `e.code() == mcp::Status::InvalidJson` both work, and
//                     portable conditions too: NullArgument/InvalidArgument ==
//                     std::errc::invalid_argument, OutOfMemory ==
//                     std::errc::not_enough_memory, BrokenPipe == std::errc::broken_pipe.
//
// !!! LIFETIME: Message::data() BORROWS THE READER'S BUFFER. It is valid only
// !!! until the next call on that reader (feed, read_fd, next, finish, set_*,
// !!! being moved from, destruction). Copy what you keep:
// !!!     std::string kept(msg->data());
// !!! Likewise Event::data() and Event::envelope() BORROW THE TRANSPORT until
// !!! its next receiving call (next_event, receive, receive_end, take_output,
// !!! read_output, poll_fds, set_max_line_len) or its destruction.
//
// POSIX I/O (only where mcp_stdio.h defines MCP_STDIO_HAS_POSIX_IO, i.e. not Windows)
//   LineReader::read_fd(fd)   one read(2) into the reader; returns a ReadResult:
//                             {ReadState::Data, n > 0}, {WouldBlock, 0} (non-blocking
//                             fd, nothing now) or {EndOfStream, 0} (call finish()).
//   mcp::write_all(fd, bytes) writes everything (short writes, EINTR, EAGAIN
//                             handled); never raises SIGPIPE.
//   mcp::write_all(fd, bytes, timeout)  the same with a deadline: returns the
//                             bytes written (fewer than asked when time ran out).
//
// Errors (what throws what)
//   - LineReader(): std::bad_alloc if the C reader cannot be allocated.
//   - MCP_STATUS_OUT_OF_MEMORY, from any call: std::bad_alloc (nothing was done;
//     the reader stays usable).
//   - Every other negative status: mcp::Error carrying it. InvalidArgument:
//     set_max_line_len(0), unknown flag bits, more than PTRDIFF_MAX bytes.
//     NullArgument: a moved-from reader. InvalidJson: encode()/encode_buffer().
//     IoError: read_fd()/write_all(), with Error::os_error() = the errno.
//     SpawnFailed: Transport::spawn, with Error::os_error() = why (ENOENT...).
//     BrokenPipe: write_all() to a closed peer. Panic/Poisoned: the library
//     gave up on that reader (destroy it). After a throw, the reader is
//     unchanged and usable (except Panic/Poisoned).
//   - Transport: every send throws mcp::Error(Status::Closed) once close()
//     has begun or the peer went away, and mcp::Error(Status::WouldBlock) when
//     the output queue is at its bound (set_max_queued; nothing was queued:
//     send again once it has drained). To handle those two without an
//     exception, use try_send, try_request, try_notify, try_respond,
//     try_respond_error: they return Status::Ok, WouldBlock or Closed (and
//     still throw for the rest). Text arguments (method, message, reason)
//     holding a NUL throw mcp::Error(InvalidText): the C API takes them
//     NUL-terminated (they are copied, so a view need not be).
//   - Never thrown (not errors): "no complete line yet" is next() == std::nullopt;
//     WouldBlock and EndOfStream are read_fd() results; "no event in time"
//     and "the transport has ended" are next_event() == std::nullopt
//     (closed() tells them apart).
//   - noexcept: moves, swaps, destructors, Buffer(), buffered_len(), operator
//     bool, the Message/Buffer/ReadResult/Event/Envelope/RequestResult
//     accessors, Transport::closed(), category(), version(), abi_version(),
//     abi_compatible(). Anything building a std::string (encode, Error,
//     Buffer::str) may also throw std::bad_alloc.
//
// Threads: as in C, a LineReader may move between threads but must not be used
// by two at once; encode and write_all are thread-safe. A Transport's sends
// (send, request, notify, respond, respond_error, cancel, close,
// set_max_queued and their try_ forms) may be called on the same object from
// any threads at once, also while one thread waits in next_event (they wake
// it); its receiving calls (next_event, closed, receive, receive_end,
// take_output*, read_output, poll_fds, set_max_line_len) from one thread at a
// time. Moving, assigning or destroying it must not overlap any call.
// ~Transport of an open descriptor transport waits for its close (at most
// about 2 s; a spawned server's, until it is reaped: about 4 s at most):
// close() it and take the events until closed() to control that. A Command,
// like a LineReader, is for one thread at a time; spawning from it only
// reads it (several threads may spawn the same command at once).
//
// Versions: mcp::version() is the linked library's, mcp::header_version this
// header's; call mcp::abi_compatible() once at startup when linking the shared
// library.
#ifndef MCP_STDIO_HPP
#define MCP_STDIO_HPP

#if (defined(_MSVC_LANG) ? _MSVC_LANG : __cplusplus) < 201703L
#error "mcp_stdio.hpp needs C++17 or later (the C API, mcp_stdio.h, works from C++11)"
#endif

#include "mcp_stdio.h"
#if defined(_WIN32)
#include <windows.h> // GetLastError
#endif

#include <algorithm>
#include <cerrno>
#include <functional>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <new>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <utility>
#include <vector>

namespace mcp {

// ---------------------------------------------------------------------------
// Status codes and errors

/// The C McpStatus values. Ok and positive values are not errors.
enum class Status : std::int32_t {
    Ok = MCP_STATUS_OK,
    NoMessage = MCP_STATUS_NO_MESSAGE,
    NullArgument = MCP_STATUS_NULL_ARGUMENT,
    InvalidArgument = MCP_STATUS_INVALID_ARGUMENT,
    InvalidJson = MCP_STATUS_INVALID_JSON,
    OutOfMemory = MCP_STATUS_OUT_OF_MEMORY,
    Panic = MCP_STATUS_PANIC,
    Poisoned = MCP_STATUS_POISONED,
    WouldBlock = MCP_STATUS_WOULD_BLOCK,    // read_fd's ReadState; a Transport send: queue full
    EndOfStream = MCP_STATUS_END_OF_STREAM, // not an error: LineReader::read_fd's ReadState
    IoError = MCP_STATUS_IO_ERROR,          // Error::os_error() has the errno
    BrokenPipe = MCP_STATUS_BROKEN_PIPE,
    TimedOut = MCP_STATUS_TIMED_OUT,        // not thrown by write_all with a timeout: a count
    Closed = MCP_STATUS_CLOSED,             // the transport is closing or closed
    SpawnFailed = MCP_STATUS_SPAWN_FAILED,  // Transport::spawn; Error::os_error() has the errno
    BufferTooSmall = MCP_STATUS_BUFFER_TOO_SMALL, // mcp_encode_to: the length needed is returned
    InvalidParams = MCP_STATUS_INVALID_PARAMS,    // params not a JSON object or array
    InvalidText = MCP_STATUS_INVALID_TEXT,        // a NUL in a text (or not UTF-8)
    UnknownFlags = MCP_STATUS_UNKNOWN_FLAGS,      // flag bits the library does not know
    EmptyProgram = MCP_STATUS_EMPTY_PROGRAM,      // Transport::spawn of Command("")
    Restarting = MCP_STATUS_RESTARTING,           // a send while the server restarts
};

namespace detail {

class Category final : public std::error_category {
public:
    const char *name() const noexcept override { return "mcp_stdio"; }

    std::string message(int ev) const override { return mcp_status_str(ev); }

    // Lets codes compare equal to the portable std::errc conditions.
    std::error_condition default_error_condition(int ev) const noexcept override {
        switch (ev) {
        case MCP_STATUS_NULL_ARGUMENT:
        case MCP_STATUS_INVALID_ARGUMENT:
        case MCP_STATUS_INVALID_PARAMS:
        case MCP_STATUS_INVALID_TEXT:
        case MCP_STATUS_UNKNOWN_FLAGS:
        case MCP_STATUS_EMPTY_PROGRAM:
            return std::make_error_condition(std::errc::invalid_argument);
        case MCP_STATUS_OUT_OF_MEMORY:
            return std::make_error_condition(std::errc::not_enough_memory);
        case MCP_STATUS_BROKEN_PIPE:
            return std::make_error_condition(std::errc::broken_pipe);
        case MCP_STATUS_TIMED_OUT:
            return std::make_error_condition(std::errc::timed_out);
        default:
            return std::error_condition(ev, *this);
        }
    }
};

}  // namespace detail

/// The std::error_category of mcp_stdio status codes (name "mcp_stdio",
/// message() from mcp_status_str). One object for the whole program.
inline const std::error_category &category() noexcept {
    static const detail::Category instance;
    return instance;
}

inline std::error_code make_error_code(Status s) noexcept {
    return std::error_code(static_cast<int>(s), category());
}

/// The exception of this library: a std::system_error (hence a
/// std::runtime_error) with code() in mcp::category().
class Error : public std::system_error {
public:
    /// `where` prefixes what(): "where: <description of s>".
    explicit Error(Status s, const char *where = "mcp_stdio")
        : std::system_error(make_error_code(s), where) {}

    /// With the OS error behind s (Status::IoError, Status::SpawnFailed):
    /// what() is "where: <strerror> (errno N): <description of s>".
    Error(Status s, const char *where, std::error_code os_error)
        : std::system_error(make_error_code(s), describe(where, os_error)), os_error_(os_error) {}

    /// With a text of the library's own that says what went wrong (a
    /// spawn's "cannot start `npx`: not found in PATH (searched: ...)"):
    /// what() is "text: <description of s>"; os_error() as given.
    static Error with_text(Status s, const std::string &text, std::error_code os_error) {
        Error e(s, text.c_str());
        e.os_error_ = os_error;
        return e;
    }

    /// The status the library returned.
    Status status() const noexcept { return static_cast<Status>(code().value()); }

    /// For Status::IoError: the errno of the failed system call; for
    /// Status::SpawnFailed: why the server could not be started (ENOENT: no
    /// such program or working directory, EACCES...). In
    /// std::system_category() (compare with std::errc values:
    /// `e.os_error() == std::errc::no_such_file_or_directory`). On Windows
    /// GetLastError()'s code (ERROR_FILE_NOT_FOUND, 2...). Otherwise empty
    /// (0).
    const std::error_code &os_error() const noexcept { return os_error_; }

private:
    static std::string describe(const char *where, const std::error_code &os_error) {
        std::string s(where);
        if (os_error) {
            s += ": " + os_error.message() + " (errno " + std::to_string(os_error.value()) + ")";
        }
        return s;
    }

    std::error_code os_error_;
};

namespace detail {

// The system's error code of the call just made: errno, or GetLastError()
// on Windows (what the C functions set with MCP_STATUS_IO_ERROR and
// MCP_STATUS_SPAWN_FAILED).
inline int last_os_error() noexcept {
#if defined(_WIN32)
    return static_cast<int>(GetLastError());
#else
    return errno;
#endif
}

// Throws for negative statuses; returns the others unchanged. `os_errno` is
// errno read right after the call (used for MCP_STATUS_IO_ERROR and
// MCP_STATUS_SPAWN_FAILED).
inline McpStatus check(McpStatus st, const char *where, int os_errno = 0) {
    if (static_cast<std::int32_t>(st) < 0) {
        if (st == MCP_STATUS_OUT_OF_MEMORY) throw std::bad_alloc();
        if ((st == MCP_STATUS_IO_ERROR || st == MCP_STATUS_SPAWN_FAILED) && os_errno != 0) {
            throw Error(static_cast<Status>(st), where,
                        std::error_code(os_errno, std::system_category()));
        }
        throw Error(static_cast<Status>(st), where);
    }
    return st;
}

}  // namespace detail

// ---------------------------------------------------------------------------
// Flags

/// Flags of LineReader::set_flags; combine with |.
enum class ReaderFlags : std::uint32_t {
    None = 0,
    /// Drop parse-error and invalid-JSON-RPC lines silently (too-long lines are still reported).
    SkipInvalid = MCP_READER_SKIP_INVALID,
    /// Classify messages as JSON-RPC 2.0 (Message::rpc_kind, MessageKind::InvalidJsonRpc).
    JsonRpc = MCP_READER_JSONRPC,
};

/// Flags of encode; combine with |.
enum class EncodeFlags : std::uint32_t {
    None = 0,
    /// Escape every non-ASCII character as \uXXXX: the line is pure ASCII.
    Ascii = MCP_ENCODE_ASCII,
};

#define MCP_STDIO_HPP_FLAG_OPS(E)                                                        \
    constexpr E operator|(E a, E b) noexcept {                                           \
        return static_cast<E>(static_cast<std::uint32_t>(a) | static_cast<std::uint32_t>(b)); \
    }                                                                                    \
    constexpr E operator&(E a, E b) noexcept {                                           \
        return static_cast<E>(static_cast<std::uint32_t>(a) & static_cast<std::uint32_t>(b)); \
    }                                                                                    \
    constexpr E operator^(E a, E b) noexcept {                                           \
        return static_cast<E>(static_cast<std::uint32_t>(a) ^ static_cast<std::uint32_t>(b)); \
    }                                                                                    \
    constexpr E operator~(E a) noexcept { return static_cast<E>(~static_cast<std::uint32_t>(a)); } \
    constexpr E &operator|=(E &a, E b) noexcept { return a = a | b; }                    \
    constexpr E &operator&=(E &a, E b) noexcept { return a = a & b; }                    \
    constexpr E &operator^=(E &a, E b) noexcept { return a = a ^ b; }                    \
    /** True if any bit of `flag` is set in `flags`. */                                  \
    constexpr bool has(E flags, E flag) noexcept { return (flags & flag) != E::None; }

MCP_STDIO_HPP_FLAG_OPS(ReaderFlags)
MCP_STDIO_HPP_FLAG_OPS(EncodeFlags)

#if defined(MCP_STDIO_HAS_POSIX_IO)
/// Flags of Transport::open_fds; combine with |. POSIX only.
enum class TransportFlags : std::uint32_t {
    None = 0,
    /// The caller keeps owning the descriptors: the transport never closes
    /// them, and when destroyed gives them back the flags it changed (O_NONBLOCK).
    BorrowFds = MCP_TRANSPORT_BORROW_FDS,
};

MCP_STDIO_HPP_FLAG_OPS(TransportFlags)
#endif

#if defined(MCP_STDIO_HAS_PROCESSES)
/// Flags of Transport::spawn; combine with |.
enum class SpawnFlags : std::uint32_t {
    None = 0,
    /// Linux: the server is sent SIGKILL when the thread that spawned it
    /// ends (the host exits or crashes), through PR_SET_PDEATHSIG. Spawn
    /// from a thread that lives as long as the server should. Elsewhere
    /// spawn throws mcp::Error(InvalidArgument).
    KillOnHostExit = MCP_TRANSPORT_KILL_ON_HOST_EXIT,
    /// Windows: a console program gets a console window (by default none,
    /// so that no window flashes from a GUI host). Elsewhere spawn throws
    /// mcp::Error(InvalidArgument).
    ConsoleWindow = MCP_TRANSPORT_CONSOLE_WINDOW,
};

MCP_STDIO_HPP_FLAG_OPS(SpawnFlags)

/// Flags of Transport::open_stdio; combine with |.
enum class StdioFlags : std::uint32_t {
    None = 0,
    /// Protect the protocol stream from stray output: the transport writes
    /// to a private duplicate of descriptor 1 and descriptor 1 is pointed
    /// at stderr (for good: also after the transport is gone), so a
    /// printf, a library logging to stdout or a child inheriting it cannot
    /// corrupt the stream. Windows: the standard output handle is set to
    /// stderr, and Transport::open_stdio also points the C runtime's
    /// descriptor 1 there (mcp_stdio_crt_stdout_to_stderr).
    GuardStdout = MCP_TRANSPORT_GUARD_STDOUT,
};

MCP_STDIO_HPP_FLAG_OPS(StdioFlags)
#endif

/// Flags of Transport::request_with; combine with |.
enum class RequestFlags : std::uint32_t {
    None = 0,
    /// Follow the request's progress: a progressToken in its params._meta
    /// (merged into the _meta the params carry), its notifications/progress
    /// as EventKind::Progress events with its id.
    Progress = MCP_REQUEST_PROGRESS,
    /// Follow it, and let each increase of its progress move the deadline
    /// to the timeout from then, never past the hard maximum.
    ResetOnProgress = MCP_REQUEST_RESET_ON_PROGRESS,
};

MCP_STDIO_HPP_FLAG_OPS(RequestFlags)

#undef MCP_STDIO_HPP_FLAG_OPS

// ---------------------------------------------------------------------------
// Messages

/// What an item of LineReader::next() is.
enum class MessageKind : std::int32_t {
    /// A JSON message: data() is the line, trimmed.
    Json = MCP_MESSAGE_JSON,
    /// A line that is not one JSON text: data() is the line, trimmed.
    ParseError = MCP_MESSAGE_PARSE_ERROR,
    /// A line over the limit, dropped: data() is empty, size() is the bytes received.
    TooLong = MCP_MESSAGE_TOO_LONG,
    /// Valid JSON that is not JSON-RPC 2.0 (only with ReaderFlags::JsonRpc).
    InvalidJsonRpc = MCP_MESSAGE_INVALID_JSONRPC,
};

/// The JSON-RPC 2.0 kind of a message (None unless ReaderFlags::JsonRpc is set).
enum class RpcKind : std::int32_t {
    None = MCP_RPC_NONE,
    Request = MCP_RPC_REQUEST,
    Notification = MCP_RPC_NOTIFICATION,
    Response = MCP_RPC_RESPONSE,
    Error = MCP_RPC_ERROR,
    Batch = MCP_RPC_BATCH,
};

/// One item of LineReader::next(). A small value type, but data() BORROWS
/// the reader's buffer: valid until the next call on the reader.
class Message {
public:
    explicit Message(const McpMessage &m) noexcept
        : kind_(static_cast<MessageKind>(m.kind)),
          rpc_kind_(static_cast<RpcKind>(m.rpc_kind)),
          data_(m.data != nullptr ? std::string_view(reinterpret_cast<const char *>(m.data), m.len)
                                  : std::string_view()),
          size_(m.len) {}

    MessageKind kind() const noexcept { return kind_; }
    RpcKind rpc_kind() const noexcept { return rpc_kind_; }
    /// True for MessageKind::Json.
    bool is_json() const noexcept { return kind_ == MessageKind::Json; }

    /// The line (trimmed of surrounding space, tab, CR), not NUL-terminated;
    /// empty for MessageKind::TooLong. BORROWED from the reader until its next
    /// call: copy with std::string(msg.data()) to keep it.
    std::string_view data() const noexcept { return data_; }

    /// data().size(), except for MessageKind::TooLong: the bytes of the line
    /// received before it was dropped (more than the limit).
    std::size_t size() const noexcept { return size_; }

private:
    MessageKind kind_;
    RpcKind rpc_kind_;
    std::string_view data_;
    std::size_t size_;
};

// ---------------------------------------------------------------------------
// LineReader

#if defined(MCP_STDIO_HAS_POSIX_IO)
/// What one LineReader::read_fd got.
enum class ReadState {
    /// Bytes were read (ReadResult::bytes > 0): take the items with next().
    Data,
    /// A non-blocking fd has nothing now (EAGAIN): poll(2) it and call again.
    WouldBlock,
    /// End of file, the peer closed its end: call finish() and take the last items.
    EndOfStream,
};

/// The result of LineReader::read_fd.
struct ReadResult {
    ReadState state;
    /// Bytes read: > 0 for ReadState::Data, 0 otherwise.
    std::size_t bytes;

    bool end_of_stream() const noexcept { return state == ReadState::EndOfStream; }
    bool would_block() const noexcept { return state == ReadState::WouldBlock; }
};
#endif

/// Splits one input stream into messages. RAII owner of an McpLineReader*.
class LineReader {
public:
    /// Argument of set_max_line_len: no limit.
    static constexpr std::size_t no_limit = static_cast<std::size_t>(-1);
    /// The line limit of a new reader: 64 MiB.
    static constexpr std::size_t default_max_line_len = MCP_READER_DEFAULT_MAX_LINE_LEN;

    /// A reader with the default limit and no flags. Throws std::bad_alloc.
    LineReader() : handle_(mcp_line_reader_new()) {
        if (handle_ == nullptr) throw std::bad_alloc();
    }

    /// A reader with these flags and line limit. Throws std::bad_alloc, mcp::Error.
    explicit LineReader(ReaderFlags flags, std::size_t max_line_len = default_max_line_len)
        : LineReader() {
        set_flags(flags);
        set_max_line_len(max_line_len);
    }

    ~LineReader() { mcp_line_reader_free(handle_); }

    LineReader(const LineReader &) = delete;
    LineReader &operator=(const LineReader &) = delete;

    /// Takes other's reader; other becomes empty.
    LineReader(LineReader &&other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}

    /// Frees this reader and takes other's; other becomes empty. Self-assignment is a no-op.
    LineReader &operator=(LineReader &&other) noexcept {
        if (this != &other) {
            mcp_line_reader_free(handle_);
            handle_ = std::exchange(other.handle_, nullptr);
        }
        return *this;
    }

    friend void swap(LineReader &a, LineReader &b) noexcept { std::swap(a.handle_, b.handle_); }

    /// False for a moved-from reader.
    explicit operator bool() const noexcept { return handle_ != nullptr; }

    /// The C handle, still owned by this object (NULL if empty).
    McpLineReader *native_handle() const noexcept { return handle_; }

    /// Longest line accepted, in bytes before the '\n'; LineReader::no_limit
    /// for none. Throws mcp::Error(InvalidArgument) for 0.
    void set_max_line_len(std::size_t max_len) {
        detail::check(mcp_line_reader_set_max_line_len(handle_, max_len),
                      "mcp::LineReader::set_max_line_len");
    }

    /// Replaces the flags (ReaderFlags::None for none); they apply to the lines
    /// taken from then on. Throws mcp::Error(UnknownFlags) for unknown bits.
    void set_flags(ReaderFlags flags) {
        detail::check(mcp_line_reader_set_flags(handle_, static_cast<std::uint32_t>(flags)),
                      "mcp::LineReader::set_flags");
    }

    /// Appends bytes from the stream (copied). Any chunking gives the same items.
    /// Throws std::bad_alloc (nothing appended), mcp::Error.
    void feed(const void *data, std::size_t len) {
        detail::check(mcp_line_reader_feed(handle_, static_cast<const std::uint8_t *>(data), len),
                      "mcp::LineReader::feed");
    }

    void feed(std::string_view bytes) { feed(bytes.data(), bytes.size()); }

    /// Any contiguous container of 1-byte elements: std::vector<char>,
    /// std::vector<std::uint8_t>, std::array<std::byte, N>...
    template <class Bytes,
              class = std::enable_if_t<
                  !std::is_convertible_v<const Bytes &, std::string_view> &&
                  sizeof(*std::declval<const Bytes &>().data()) == 1 &&
                  std::is_convertible_v<decltype(std::declval<const Bytes &>().size()), std::size_t>>>
    void feed(const Bytes &bytes) {
        feed(static_cast<const void *>(bytes.data()), static_cast<std::size_t>(bytes.size()));
    }

    /// End of stream: an unterminated last line becomes a complete line (take
    /// it with next()). The reader stays usable. Throws std::bad_alloc, mcp::Error.
    void finish() { detail::check(mcp_line_reader_finish(handle_), "mcp::LineReader::finish"); }

    /// The next item, or std::nullopt when no complete line is buffered.
    /// The item's data() borrows the reader until its next call.
    /// Throws mcp::Error (Poisoned/Panic: destroy the reader).
    [[nodiscard]] std::optional<Message> next() {
        McpMessage m{};
        const McpStatus st =
            detail::check(mcp_line_reader_next_message(handle_, &m), "mcp::LineReader::next");
        if (st != MCP_STATUS_OK) return std::nullopt;
        return Message(m);
    }

#if defined(MCP_STDIO_HAS_POSIX_IO)
    /// One read(2) of what is available on `fd` (up to 64 KiB) straight into
    /// the reader's buffer, EINTR retried; then take the items with next().
    /// Blocks if `fd` is blocking and has nothing. POSIX only (defined when
    /// mcp_stdio.h defines MCP_STDIO_HAS_POSIX_IO). `fd` is not closed.
    /// Returns {Data, n > 0}, {WouldBlock, 0} or {EndOfStream, 0} (then call
    /// finish()). Throws mcp::Error(IoError) with os_error() = errno when
    /// read(2) fails, std::bad_alloc, mcp::Error (empty or poisoned reader).
    ReadResult read_fd(int fd) {
        std::size_t n = 0;
        const McpStatus st = mcp_line_reader_read_fd(handle_, fd, &n);
        const int os_errno = detail::last_os_error();
        switch (st) {
        case MCP_STATUS_OK: return ReadResult{ReadState::Data, n};
        case MCP_STATUS_END_OF_STREAM: return ReadResult{ReadState::EndOfStream, 0};
        case MCP_STATUS_WOULD_BLOCK: return ReadResult{ReadState::WouldBlock, 0};
        default: break;
        }
        detail::check(st, "mcp::LineReader::read_fd", os_errno);
        return ReadResult{ReadState::WouldBlock, 0};  // an unknown non-error status: nothing read
    }
#endif

    /// Bytes held that no item has consumed yet (0 for an empty reader).
    [[nodiscard]] std::size_t buffered_len() const noexcept {
        return mcp_line_reader_buffered_len(handle_);
    }

private:
    McpLineReader *handle_;
};

// ---------------------------------------------------------------------------
// Encoding

/// Bytes allocated by the library (RAII owner of an McpBuffer). Move-only;
/// a default-constructed or moved-from Buffer is empty.
class Buffer {
public:
    Buffer() noexcept = default;

    /// Adopts a buffer filled by the library (freed with mcp_buffer_free).
    explicit Buffer(McpBuffer raw) noexcept : raw_(raw) {}

    ~Buffer() { mcp_buffer_free(&raw_); }

    Buffer(const Buffer &) = delete;
    Buffer &operator=(const Buffer &) = delete;

    Buffer(Buffer &&other) noexcept : raw_(std::exchange(other.raw_, McpBuffer{nullptr, 0})) {}

    Buffer &operator=(Buffer &&other) noexcept {
        if (this != &other) {
            mcp_buffer_free(&raw_);
            raw_ = std::exchange(other.raw_, McpBuffer{nullptr, 0});
        }
        return *this;
    }

    friend void swap(Buffer &a, Buffer &b) noexcept { std::swap(a.raw_, b.raw_); }

    const char *data() const noexcept { return reinterpret_cast<const char *>(raw_.data); }
    std::size_t size() const noexcept { return raw_.len; }
    bool empty() const noexcept { return raw_.len == 0; }
    const char *begin() const noexcept { return data(); }
    const char *end() const noexcept { return data() + size(); }

    /// The bytes, valid as long as this Buffer is alive and not moved from.
    std::string_view view() const noexcept { return std::string_view(data(), size()); }
    /// A copy of the bytes.
    std::string str() const { return std::string(view()); }

    /// Gives up ownership: the caller must mcp_buffer_free the result.
    McpBuffer release() noexcept { return std::exchange(raw_, McpBuffer{nullptr, 0}); }

private:
    McpBuffer raw_{nullptr, 0};
};

/// Encodes one JSON text as one stdio line without copying: validated,
/// compact, ending in exactly one '\n'. Throws mcp::Error(InvalidJson) if
/// `json` is not exactly one JSON text in UTF-8 (or is empty), std::bad_alloc.
[[nodiscard]] inline Buffer encode_buffer(std::string_view json,
                                          EncodeFlags flags = EncodeFlags::None) {
    McpBuffer raw{nullptr, 0};
    detail::check(mcp_encode(reinterpret_cast<const std::uint8_t *>(json.data()), json.size(),
                             static_cast<std::uint32_t>(flags), &raw),
                  "mcp::encode");
    return Buffer(raw);
}

/// As encode_buffer, copied into a std::string. Example:
/// encode(R"({"a": "x", "id": 1})") == "{\"a\":\"x\",\"id\":1}\n".
[[nodiscard]] inline std::string encode(std::string_view json,
                                        EncodeFlags flags = EncodeFlags::None) {
    const Buffer line = encode_buffer(json, flags);  // freed even if the copy throws
    return line.str();
}

#if defined(MCP_STDIO_HAS_POSIX_IO)
// ---------------------------------------------------------------------------
// Writing (POSIX only: defined when mcp_stdio.h defines MCP_STDIO_HAS_POSIX_IO)

/// Writes all `len` bytes to `fd`: short writes continued, EINTR retried,
/// EAGAIN on a non-blocking fd waited out with poll(2). Never raises SIGPIPE.
/// Throws mcp::Error(BrokenPipe) when the peer closed its end (part of the
/// data may have been written), mcp::Error(IoError) with os_error() = errno,
/// mcp::Error(InvalidArgument) for len > PTRDIFF_MAX. Thread-safe, but
/// writes from several threads to one fd may interleave: serialise them.
inline void write_all(int fd, const void *data, std::size_t len) {
    const McpStatus st = mcp_write_all(fd, static_cast<const std::uint8_t *>(data), len);
    const int os_errno = detail::last_os_error();
    detail::check(st, "mcp::write_all", os_errno);
}

/// write_all of a string, e.g. mcp::write_all(1, mcp::encode(json)).
inline void write_all(int fd, std::string_view data) { write_all(fd, data.data(), data.size()); }

/// write_all with a deadline, so that a peer that stops reading cannot hang
/// the caller: returns how many bytes were written, data.size() when all of
/// them were, fewer when `timeout` passed first (0 ms: no waiting at all;
/// negative: no limit). A line written in part must be finished (write
/// data.substr(n) next) before anything else goes to `fd`. Throws as
/// write_all does (BrokenPipe, IoError). See mcp_write_all_deadline for
/// blocking descriptors.
inline std::size_t write_all(int fd, std::string_view data, std::chrono::milliseconds timeout) {
    using Ms = std::chrono::milliseconds;
    const auto clamped = std::clamp(timeout.count(), static_cast<Ms::rep>(-1),
                                    static_cast<Ms::rep>(INT32_MAX));
    std::size_t written = 0;
    const McpStatus st =
        mcp_write_all_deadline(fd, reinterpret_cast<const std::uint8_t *>(data.data()),
                               data.size(), static_cast<std::int32_t>(clamped), &written);
    const int os_errno = detail::last_os_error();
    if (st != MCP_STATUS_TIMED_OUT) detail::check(st, "mcp::write_all", os_errno);
    return written;
}
#endif

// ---------------------------------------------------------------------------
// Envelopes

namespace detail {

inline std::string_view view(const std::uint8_t *data, std::size_t len) noexcept {
    return data != nullptr ? std::string_view(reinterpret_cast<const char *>(data), len)
                           : std::string_view();
}

inline std::string_view view(const McpSlice &s) noexcept { return view(s.data, s.len); }

// A NUL-terminated copy of a std::string_view, for the C API's `const char *`
// text arguments (a view need not be NUL-terminated, so it is never passed
// as is). Texts shorter than 128 bytes stay on the stack: no allocation.
class CString {
public:
    explicit CString(std::string_view s) {
        if (s.size() < sizeof(small_)) {
            s.copy(small_, s.size());
            small_[s.size()] = '\0';
            ptr_ = small_;
        } else {
            big_.assign(s.data(), s.size());
            ptr_ = big_.c_str();
        }
    }

    CString(const CString &) = delete;
    CString &operator=(const CString &) = delete;

    const char *c_str() const noexcept { return ptr_; }

private:
    char small_[128];
    std::string big_;
    const char *ptr_;
};

// The text argument `s` for the C API: a NUL inside it would cut it short
// there, so it is refused (mcp::Error(InvalidText)) instead.
inline CString c_text(std::string_view s, const char *where) {
    if (s.find('\0') != std::string_view::npos) {
        const std::string full = std::string(where) + ": a NUL inside the text";
        throw Error(Status::InvalidText, full.c_str());
    }
    return CString(s);
}

}  // namespace detail

/// Whether the JSON string token `token` (quotes included: an envelope's
/// method(), say) stands for the UTF-8 `text`, comparing while it unescapes:
/// "tools\/call" and "\u0074ools/call" both equal tools/call. False for
/// anything else: another value, a token that is not a valid JSON string,
/// and a `text` holding a NUL (the C API cannot compare one). Thread-safe.
/// Allocates only for a `text` of 128 bytes or more (std::bad_alloc).
[[nodiscard]] inline bool json_string_eq(std::string_view token, std::string_view text) {
    if (text.find('\0') != std::string_view::npos) return false;
    const detail::CString c(text);
    return mcp_json_string_eq(reinterpret_cast<const std::uint8_t *>(token.data()), token.size(),
                              c.c_str());
}

/// The envelope of one JSON-RPC 2.0 message (an McpEnvelope): its kind and
/// the members a host routes on, each the member's raw JSON exactly as on
/// the wire (no whitespace around it). An absent member is an empty view; a
/// present one never is empty. A small value type that BORROWS the
/// message's bytes: it lives exactly as long as the data it came with.
class Envelope {
public:
    /// No message: rpc_kind() None, every member absent.
    Envelope() noexcept = default;

    explicit Envelope(const McpEnvelope &e) noexcept
        : rpc_kind_(static_cast<RpcKind>(e.rpc_kind)),
          id_(detail::view(e.id)),
          method_(detail::view(e.method)),
          params_(detail::view(e.params)),
          result_(detail::view(e.result)),
          error_(detail::view(e.error)) {}

    /// Request, Notification, Response, Error, or None (not JSON-RPC, or a
    /// batch: then every member is absent). Never Batch.
    RpcKind rpc_kind() const noexcept { return rpc_kind_; }
    /// The id token as on the wire: 7, "abc" (quotes included) or null.
    /// Absent for a notification and for an error response without an id.
    /// Pass it as is to Transport::respond / respond_error.
    std::string_view id() const noexcept { return id_; }
    /// The method as a JSON string token, quotes and escapes included:
    /// compare it with method_is().
    std::string_view method() const noexcept { return method_; }
    /// The params value (an object or an array).
    std::string_view params() const noexcept { return params_; }
    /// The result value (any JSON value, null included).
    std::string_view result() const noexcept { return result_; }
    /// The error object.
    std::string_view error() const noexcept { return error_; }

    /// True if method() is present and stands for `name`, escapes decoded
    /// (json_string_eq): method_is("tools/call").
    [[nodiscard]] bool method_is(std::string_view name) const {
        return !method_.empty() && json_string_eq(method_, name);
    }

private:
    RpcKind rpc_kind_ = RpcKind::None;
    std::string_view id_;
    std::string_view method_;
    std::string_view params_;
    std::string_view result_;
    std::string_view error_;
};

// ---------------------------------------------------------------------------
// Transport

/// What an Event is (the C McpEventKind).
enum class EventKind : std::int32_t {
    /// A message from the peer that answers no request of ours: a request or
    /// a notification (answer a request with Transport::respond), a response
    /// to no pending request (stray, late after a timeout or a cancel, a
    /// duplicate), or a batch (rpc_kind() Batch, envelope() empty).
    Message = MCP_EVENT_MESSAGE,
    /// The answer (result or error) to our request request_id(). Once per request.
    Response = MCP_EVENT_RESPONSE,
    /// Our request request_id() reached its deadline unanswered. It is
    /// forgotten (a late answer is a Message) and, unless it was an
    /// initialize, a notifications/cancelled for it was queued.
    RequestTimedOut = MCP_EVENT_REQUEST_TIMED_OUT,
    /// Our request request_id() will never be answered: the transport
    /// closed, or a spawned server exited or closed its stdout (then at
    /// once, not at the end of the shutdown). Transport::end_reason() says
    /// why (end_text() in words), exit_code() and term_signal() how the
    /// server ended when known. By ascending id, before Closed.
    RequestFailed = MCP_EVENT_REQUEST_FAILED,
    /// A line from the peer that is not a message: invalid_kind() says why.
    Invalid = MCP_EVENT_INVALID,
    /// One line a spawned server wrote to its stderr (Transport::spawn with
    /// StderrMode::Events, the default): data() is the line without its
    /// newline; a line longer than 64 KiB comes in pieces of 64 KiB, and
    /// lines dropped because more than 1 MiB waited untaken are counted
    /// by Transport::stderr_dropped().
    Stderr = MCP_EVENT_STDERR,
    /// The transport is closed: always the last event, given once.
    Closed = MCP_EVENT_CLOSED,
    /// A notifications/progress for our request request_id(), sent with
    /// RequestFlags::Progress (Transport::request_with): data() the line,
    /// envelope() its members. With RequestFlags::ResetOnProgress an
    /// increasing progress moved the request's deadline.
    Progress = MCP_EVENT_PROGRESS,
    /// A notification of the stream of our subscriptions/listen request
    /// request_id() (MCP 2026-07-28): its _meta named the subscription.
    Subscription = MCP_EVENT_SUBSCRIPTION,
    /// The server ended our subscription request_id() (its
    /// notifications/cancelled for it): the listen request is over.
    SubscriptionEnded = MCP_EVENT_SUBSCRIPTION_ENDED,
    /// A spawned server that ended unexpectedly was started again by its
    /// command's RestartPolicy (Command::restart): the requests pending
    /// failed before it (subscriptions too), sends meanwhile threw
    /// mcp::Error(Restarting). exit_code() and term_signal(): how the
    /// server before it ended; Transport::pid() the new one's,
    /// Transport::restarts() this restart's number. Do the handshake
    /// again; request ids go on.
    Restarted = MCP_EVENT_RESTARTED,
};

/// Why a transport ended (Transport::end_reason): mcp_stdio.h's
/// McpEndReason.
enum class EndReason : std::int32_t {
    /// Open.
    None = MCP_END_NONE,
    /// We closed it (close(), or the destructor) first.
    ClosedByHost = MCP_END_CLOSED_BY_HOST,
    /// The peer closed its output (a spawned server its stdout) and lives
    /// on, as far as known: no answer can come.
    PeerClosed = MCP_END_PEER_CLOSED,
    /// A write to the peer was refused: it reads no more.
    WriteRefused = MCP_END_WRITE_REFUSED,
    /// A spawned server exited by itself: RequestFailed's exit_code().
    ServerExited = MCP_END_SERVER_EXITED,
    /// A spawned server was killed by a signal not ours: term_signal().
    ServerKilled = MCP_END_SERVER_KILLED,
};

/// One event of Transport::next_event (an McpEvent). A small value type, but
/// data() and envelope() BORROW the transport: valid until its next
/// receiving call (next_event, receive, receive_end, take_output,
/// read_output, poll_fds, set_max_line_len) or its destruction. Sends, also
/// from other threads, do not disturb them. Copy what you keep.
class Event {
public:
    explicit Event(const McpEvent &e) noexcept
        : kind_(static_cast<EventKind>(e.kind)),
          rpc_kind_(static_cast<RpcKind>(e.rpc_kind)),
          request_id_(e.request_id),
          data_(detail::view(e.data, e.len)),
          size_(e.len),
          envelope_(e.envelope),
          invalid_kind_(static_cast<MessageKind>(e.invalid_kind)),
          exit_code_(e.exit_code),
          term_signal_(e.term_signal) {}

    EventKind kind() const noexcept { return kind_; }

    /// Message, Response: the message's JSON-RPC kind (Batch for a batch;
    /// Response or Error for a Response event). RpcKind::None otherwise.
    RpcKind rpc_kind() const noexcept { return rpc_kind_; }

    /// Response, RequestTimedOut, RequestFailed: the id Transport::request
    /// returned. -1 otherwise.
    std::int64_t request_id() const noexcept { return request_id_; }

    /// Message, Response, Invalid: the line, trimmed, not NUL-terminated
    /// (empty for a line too long); Stderr: the stderr line. Empty otherwise.
    /// BORROWED from the transport (see the class comment).
    std::string_view data() const noexcept { return data_; }

    /// data().size(), except for an Invalid event of MessageKind::TooLong:
    /// the bytes of the line received before it was dropped.
    std::size_t size() const noexcept { return size_; }

    /// Message (but a batch), Response: the message's id, method, params,
    /// result and error, pointing into data(). Empty (RpcKind::None) otherwise.
    const Envelope &envelope() const noexcept { return envelope_; }

    /// Invalid: why the line is not a message, MessageKind::ParseError,
    /// TooLong or InvalidJsonRpc. Meaningless for other kinds (the C field
    /// is 0 then, which reads as MessageKind::Json).
    MessageKind invalid_kind() const noexcept { return invalid_kind_; }

    /// Closed, and RequestFailed once it is known, after a spawned server
    /// exited: its exit status. -1 otherwise (no process, still running,
    /// or killed by a signal: see term_signal()).
    std::int32_t exit_code() const noexcept { return exit_code_; }

    /// Closed, and RequestFailed once it is known, after a spawned server
    /// was killed by a signal: the signal. 0 otherwise.
    std::int32_t term_signal() const noexcept { return term_signal_; }

private:
    EventKind kind_;
    RpcKind rpc_kind_;
    std::int64_t request_id_;
    std::string_view data_;
    std::size_t size_;
    Envelope envelope_;
    MessageKind invalid_kind_;
    std::int32_t exit_code_;
    std::int32_t term_signal_;
};

/// The result of Transport::try_request.
struct RequestResult {
    /// Status::Ok (queued), Status::WouldBlock (the queue is at its bound:
    /// nothing queued, no id used) or Status::Closed.
    Status status;
    /// The request's id when status is Ok; -1 otherwise.
    std::int64_t id;

    bool ok() const noexcept { return status == Status::Ok; }
    bool would_block() const noexcept { return status == Status::WouldBlock; }
    bool closed() const noexcept { return status == Status::Closed; }
};

namespace detail {

// A send's outcome that a caller may expect and act on, returned as a
// Status: Ok, WouldBlock (the output queue is at its bound) or Closed.
// Throws for every other negative status, as check() does.
inline Status send_status(McpStatus st, const char *where) {
    if (st == MCP_STATUS_WOULD_BLOCK || st == MCP_STATUS_CLOSED) return static_cast<Status>(st);
    return static_cast<Status>(check(st, where));
}

// The text of mcp_transport_end_text ("" while open).
inline std::string end_text(const McpTransport *t) {
    McpBuffer b{nullptr, 0};
    if (mcp_transport_end_text(t, &b) != MCP_STATUS_OK) return std::string();
    return Buffer(b).str();
}

// A send that throws for everything but Ok, WouldBlock included. Closed
// says why the transport ended: "where: server exited with code 1 before
// its first message: ModuleNotFoundError: ...: the transport is closed".
inline void send_check(McpStatus st, const char *where, const McpTransport *t) {
    if (st == MCP_STATUS_WOULD_BLOCK) {
        const std::string full = std::string(where) + ": the output queue is at its bound";
        throw Error(Status::WouldBlock, full.c_str());
    }
    if (st == MCP_STATUS_CLOSED) {
        const std::string why = end_text(t);
        if (!why.empty()) {
            const std::string full = std::string(where) + ": " + why;
            throw Error(Status::Closed, full.c_str());
        }
    }
    check(st, where);
}

// std::chrono::milliseconds to the C API's integer milliseconds, clamped to
// [lo, hi] (so that a huge duration means "as long as the C API allows").
template <class Int>
Int clamp_ms(std::chrono::milliseconds ms, Int lo, Int hi) noexcept {
    using Rep = std::chrono::milliseconds::rep;
    return static_cast<Int>(std::clamp(ms.count(), static_cast<Rep>(lo), static_cast<Rep>(hi)));
}

inline std::uint32_t ms_u32(std::chrono::milliseconds ms) noexcept {
    return clamp_ms<std::uint32_t>(ms, 0, UINT32_MAX);
}

inline const std::uint8_t *bytes(std::string_view s) noexcept {
    return reinterpret_cast<const std::uint8_t *>(s.data());
}

}  // namespace detail

#if defined(MCP_STDIO_HAS_PROCESSES)
// ---------------------------------------------------------------------------
// Spawning a server (POSIX and Windows)

/// How a spawned server's environment starts, before Command::env and
/// Command::env_remove are laid over it (the C McpEnvMode).
enum class EnvMode : std::int32_t {
    /// Only the host's variables a server needs and no secret: HOME,
    /// LOGNAME, PATH, SHELL, TERM, USER, LANG, LC_ALL, LC_CTYPE, TZ, TMPDIR
    /// (values starting with "()", exported shell functions, left out).
    /// The default.
    Default = MCP_ENV_DEFAULT,
    /// Every variable of the host.
    Inherit = MCP_ENV_INHERIT,
    /// No variable: only what Command::env sets.
    Clear = MCP_ENV_CLEAR,
};

/// Where a spawned server's stderr goes (the C McpStderrMode).
enum class StderrMode : std::int32_t {
    /// To the host as EventKind::Stderr events, one per line (the default).
    /// Always drained, so a chatty server never blocks on it; lines longer
    /// than 64 KiB come in pieces of 64 KiB; at most 1 MiB waits untaken,
    /// beyond it the oldest lines are dropped and counted
    /// (Transport::stderr_dropped).
    Events = MCP_STDERR_EVENTS,
    /// The host's own stderr.
    Inherit = MCP_STDERR_INHERIT,
    /// Nowhere (/dev/null).
    Discard = MCP_STDERR_DISCARD,
};

/// When a spawned server that ends unexpectedly is started again
/// (Command::restart; mcp_command_restart): at most max_restarts restarts
/// in the transport's life; the wait before each is backoff, doubled for
/// every other end within the crash-loop window, up to max_backoff;
/// crash_loop_exits ends within crash_loop_window are a crash loop (no
/// restart follows; 0: no such check). The defaults are the suggested
/// values, the Rust API's RestartPolicy::new().
struct RestartPolicy {
    std::uint32_t max_restarts = 10;
    std::chrono::milliseconds backoff{250};
    std::chrono::milliseconds max_backoff{8000};
    std::uint32_t crash_loop_exits = 5;
    std::chrono::milliseconds crash_loop_window{60000};
};

/// A command to spawn as an MCP server: RAII owner of an McpCommand*.
/// Move-only; the setters return the command, so it is built in one
/// expression:
///     auto cmd = mcp::Command("npx").arg("-y").arg("some-mcp-server")
///                    .env("API_LEVEL", "2").stderr_mode(mcp::StderrMode::Discard);
///     auto t = mcp::Transport::spawn(cmd);
/// A command can be spawned any number of times; with restart() the
/// transport starts the server again by itself when it ends unexpectedly.
/// The transports do not depend on it afterwards.
/// A moved-from command is empty (operator bool false): its setters throw
/// mcp::Error(NullArgument), and so does spawning it. One thread at a time.
/// Text arguments holding a NUL throw mcp::Error(InvalidText) (the C API
/// takes NUL-terminated text; everything is copied).
class Command {
public:
    /// Runs `program`: a name looked up in the PATH the server will get
    /// (after the environment mode and the overlays; the host's PATH when
    /// the server gets none), or a path with a '/'. A relative path, and a
    /// name found through a relative PATH entry, are taken from the
    /// server's working directory (cwd()), as `cd dir && program`. No
    /// arguments, EnvMode::Default, the host's working directory,
    /// StderrMode::Events. Whether the program exists is found out by
    /// Transport::spawn. Throws std::bad_alloc, mcp::Error(InvalidText) for
    /// a NUL in `program`.
    explicit Command(std::string_view program)
        : handle_(mcp_command_new(detail::c_text(program, "mcp::Command").c_str())) {
        if (handle_ == nullptr) throw std::bad_alloc();
    }

    /// Adopts a command from the C API (freed with mcp_command_free);
    /// nullptr gives an empty Command.
    explicit Command(McpCommand *adopt) noexcept : handle_(adopt) {}

    ~Command() { mcp_command_free(handle_); }

    Command(const Command &) = delete;
    Command &operator=(const Command &) = delete;

    /// Takes other's command; other becomes empty.
    Command(Command &&other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}

    /// Frees this command and takes other's; other becomes empty.
    /// Self-assignment is a no-op.
    Command &operator=(Command &&other) noexcept {
        if (this != &other) {
            mcp_command_free(handle_);
            handle_ = std::exchange(other.handle_, nullptr);
        }
        return *this;
    }

    friend void swap(Command &a, Command &b) noexcept { std::swap(a.handle_, b.handle_); }

    /// False for a moved-from (or released) command.
    explicit operator bool() const noexcept { return handle_ != nullptr; }

    /// The C handle, still owned by this object (NULL if empty).
    McpCommand *native_handle() const noexcept { return handle_; }

    /// Gives up ownership: the caller must mcp_command_free the result.
    [[nodiscard]] McpCommand *release() noexcept { return std::exchange(handle_, nullptr); }

    // Each setter comes twice: on an lvalue it returns *this, on an rvalue
    // (a temporary being built) it returns it as an rvalue, so that
    // `auto c = Command("x").arg("y");` moves instead of failing to copy.

    /// Appends one argument (any bytes but NUL).
    Command &arg(std::string_view a) & {
        const detail::CString c = detail::c_text(a, "mcp::Command::arg");
        detail::check(mcp_command_arg(handle_, c.c_str()), "mcp::Command::arg");
        return *this;
    }
    Command &&arg(std::string_view a) && { return std::move(arg(a)); }

    /// Appends each argument of `list`, in order.
    Command &args(std::initializer_list<std::string_view> list) & {
        for (std::string_view a : list) arg(a);
        return *this;
    }
    Command &&args(std::initializer_list<std::string_view> list) && {
        return std::move(args(list));
    }

    /// Sets the variable `name` to `value` in the server's environment,
    /// over what the mode gives; later calls for the same name win. Throws
    /// mcp::Error(InvalidArgument): `name` empty or holding '='
    /// (mcp::Error(InvalidText): a NUL in either).
    Command &env(std::string_view name, std::string_view value) & {
        const detail::CString n = detail::c_text(name, "mcp::Command::env");
        const detail::CString v = detail::c_text(value, "mcp::Command::env");
        detail::check(mcp_command_env(handle_, n.c_str(), v.c_str()), "mcp::Command::env");
        return *this;
    }
    Command &&env(std::string_view name, std::string_view value) && {
        return std::move(env(name, value));
    }

    /// Removes the variable `name` from the server's environment (one the
    /// mode gives, or an earlier env()). Throws as env().
    Command &env_remove(std::string_view name) & {
        const detail::CString n = detail::c_text(name, "mcp::Command::env_remove");
        detail::check(mcp_command_env(handle_, n.c_str(), nullptr), "mcp::Command::env_remove");
        return *this;
    }
    Command &&env_remove(std::string_view name) && { return std::move(env_remove(name)); }

    /// How the server's environment starts (EnvMode::Default unless set).
    /// The env() and env_remove() entries apply over it, whenever set.
    Command &env_mode(EnvMode mode) & {
        detail::check(mcp_command_env_mode(handle_, static_cast<std::int32_t>(mode)),
                      "mcp::Command::env_mode");
        return *this;
    }
    Command &&env_mode(EnvMode mode) && { return std::move(env_mode(mode)); }

    /// The server's working directory (the host's unless set). Checked when
    /// spawning: a missing one makes spawn throw SpawnFailed with ENOENT.
    Command &cwd(std::string_view dir) & {
        const detail::CString d = detail::c_text(dir, "mcp::Command::cwd");
        detail::check(mcp_command_cwd(handle_, d.c_str()), "mcp::Command::cwd");
        return *this;
    }
    Command &&cwd(std::string_view dir) && { return std::move(cwd(dir)); }

    /// Where the server's stderr goes (StderrMode::Events unless set).
    /// (Not named stderr: the C library may define stderr as a macro.)
    Command &stderr_mode(StderrMode mode) & {
        detail::check(mcp_command_stderr(handle_, static_cast<std::int32_t>(mode)),
                      "mcp::Command::stderr_mode");
        return *this;
    }
    Command &&stderr_mode(StderrMode mode) && { return std::move(stderr_mode(mode)); }

    /// Starts the server again when it ends unexpectedly (it exits, is
    /// killed, closes its stdout, while the host has not closed): its
    /// pending requests fail at once with the reason, then after the
    /// backoff EventKind::Restarted comes on the same Transport. See
    /// RestartPolicy and mcp_command_restart; RestartPolicy{} holds the
    /// suggested values. Throws mcp::Error(InvalidArgument) when
    /// max_backoff is below backoff.
    Command &restart(const RestartPolicy &policy) & {
        detail::check(mcp_command_restart(handle_, policy.max_restarts,
                                          detail::ms_u32(policy.backoff),
                                          detail::ms_u32(policy.max_backoff),
                                          policy.crash_loop_exits,
                                          detail::ms_u32(policy.crash_loop_window)),
                      "mcp::Command::restart");
        return *this;
    }
    Command &&restart(const RestartPolicy &policy) && { return std::move(restart(policy)); }

    /// No restart (the default).
    Command &no_restart() & {
        detail::check(mcp_command_restart(handle_, 0, 0, 0, 0, 0), "mcp::Command::no_restart");
        return *this;
    }
    Command &&no_restart() && { return std::move(no_restart()); }

private:
    McpCommand *handle_;
};
#endif

/// One MCP stdio connection: RAII owner of an McpTransport*. The peer's
/// lines come as events (next_event); our requests are numbered, matched
/// with their answers and timed out; what we send is queued, bounded.
/// Move-only; see the overview at the top of this header.
class Transport {
public:
    /// Argument of set_max_line_len: no limit.
    static constexpr std::size_t no_limit = static_cast<std::size_t>(-1);
    /// The line limit of a new transport: 64 MiB.
    static constexpr std::size_t default_max_line_len = MCP_READER_DEFAULT_MAX_LINE_LEN;
    /// Timeout of next_event: wait with no limit.
    static constexpr std::chrono::milliseconds forever{-1};
#if defined(MCP_STDIO_HAS_POSIX_IO)
    /// The most descriptors poll_fds gives (read, write, wake-up, and for a
    /// spawned server its stderr and its pidfd).
    static constexpr std::size_t max_poll_fds = MCP_TRANSPORT_MAX_POLL_FDS;
#endif

    /// A memory transport: it does no I/O. Hand it the peer's bytes with
    /// receive() (receive_end() when the peer closed), take what it queued
    /// for the peer with take_output() or read_output(). Defaults: 64 MiB
    /// line limit, JSON-RPC classification, every invalid line reported,
    /// 64 MiB output bound. Throws std::bad_alloc.
    Transport() : handle_(mcp_transport_new()) {
        if (handle_ == nullptr) throw std::bad_alloc();
    }

    /// Adopts a transport from the C API (freed with mcp_transport_free);
    /// nullptr gives an empty Transport.
    explicit Transport(McpTransport *adopt) noexcept : handle_(adopt) {}

#if defined(MCP_STDIO_HAS_POSIX_IO)
    /// A transport doing its own I/O: it reads the peer's messages from
    /// `read_fd` and writes to `write_fd` (two pipes, or one socket passed
    /// twice), made non-blocking; next_event does the I/O. Writes never
    /// raise SIGPIPE. It owns and closes the descriptors, unless `flags`
    /// has TransportFlags::BorrowFds. POSIX only.
    /// Throws mcp::Error(InvalidArgument) (a negative descriptor),
    /// mcp::Error(UnknownFlags), mcp::Error(IoError) with os_error() = errno (a descriptor is
    /// not open, no descriptor left for the wake-up), std::bad_alloc; then
    /// nothing was taken: the caller still owns the descriptors, unchanged.
    [[nodiscard]] static Transport open_fds(int read_fd, int write_fd,
                                            TransportFlags flags = TransportFlags::None) {
        McpTransport *raw = nullptr;
        const McpStatus st =
            mcp_transport_open_fds(read_fd, write_fd, static_cast<std::uint32_t>(flags), &raw);
        const int os_errno = detail::last_os_error();
        detail::check(st, "mcp::Transport::open_fds", os_errno);
        return Transport(raw);
    }
#endif

#if defined(MCP_STDIO_HAS_PROCESSES)
    /// A transport on the process's own stdin and stdout: for an MCP
    /// server. Descriptors 0 and 1 are borrowed (never closed; made
    /// non-blocking meanwhile, their flags given back at destruction).
    /// With StdioFlags::GuardStdout the transport writes to a private
    /// duplicate of descriptor 1, which it owns (closing the transport
    /// closes it: the host sees the end of the stream), and descriptor 1
    /// is pointed at stderr for good, so stray output cannot corrupt the
    /// stream. Descriptor 1 is process state: call this once, early, before
    /// other threads write to stdout. Windows: the standard handles, read
    /// and written by a thread each; with GuardStdout the standard output
    /// handle and the C runtime's descriptor 1 (this header's code, so your
    /// runtime's) are pointed at stderr.
    /// Throws mcp::Error(UnknownFlags), mcp::Error(IoError)
    /// with os_error() = errno (descriptor 0 or 1 not open, no descriptor
    /// left), std::bad_alloc; then nothing was changed.
    [[nodiscard]] static Transport open_stdio(StdioFlags flags = StdioFlags::None) {
        McpTransport *raw = nullptr;
        const McpStatus st = mcp_transport_open_stdio(static_cast<std::uint32_t>(flags), &raw);
        const int os_errno = detail::last_os_error();
        detail::check(st, "mcp::Transport::open_stdio", os_errno);
#if defined(_WIN32)
        if ((flags & StdioFlags::GuardStdout) == StdioFlags::GuardStdout) {
            mcp_stdio_crt_stdout_to_stderr();
        }
#endif
        return Transport(raw);
    }

    /// Starts `cmd` as an MCP server, a child process, and returns a
    /// transport on its stdin and stdout. It runs in its own process group,
    /// with an empty signal mask, every signal at its default (also those
    /// the host ignores) and no descriptor of the host but its three; its stderr goes where the command says
    /// (by default: EventKind::Stderr events). No thread is started, no
    /// signal handler installed; next_event drives everything. Then:
    /// - close(grace) begins the MCP shutdown: the queue is written and the
    ///   server's stdin closed (at the latest at the grace), SIGTERM goes to
    ///   its process group at `grace` if it has not exited, SIGKILL at
    ///   twice `grace`; answers still arriving are delivered.
    /// - Closed comes once the server has exited, been reaped and its stdout
    ///   and stderr have ended, or once its group was sent SIGKILL (a
    ///   grandchild holding the pipes cannot keep it open); pending
    ///   requests get RequestFailed just before. Its exit_code() and
    ///   term_signal() say how the server ended.
    /// - A server that exits by itself, or closes its stdout, closes the
    ///   transport the same way (with a 2 s grace: its stdin is closed,
    ///   SIGTERM 2 s later if it still runs): sends throw Closed. With
    ///   Command::restart it is started again instead (EventKind::Restarted),
    ///   until the policy gives up.
    /// - ~Transport of an open one closes it with a 2 s grace (or on an
    ///   earlier close's schedule) and waits: at most about twice the
    ///   grace. The server is always reaped.
    /// Throws mcp::Error(SpawnFailed) with os_error() = why (ENOENT: no such
    /// program or working directory; EACCES, E2BIG, EMFILE...) and a what()
    /// that names the program ("cannot start `npx`: not found in PATH
    /// (searched: ...)"),
    /// mcp::Error(InvalidArgument) (SpawnFlags::KillOnHostExit off Linux),
    /// mcp::Error(EmptyProgram) (Command("")), mcp::Error(NullArgument)
    /// (an empty command), std::bad_alloc; then
    /// nothing was started and nothing is left behind. Thread-safe (`cmd`
    /// is only read). Windows: in a Job Object instead of a process group,
    /// the program found with PATHEXT, a .cmd run through cmd.exe with its
    /// arguments escaped, the job terminated at `grace` (no SIGTERM);
    /// os_error() is GetLastError()'s code.
    [[nodiscard]] static Transport spawn(const Command &cmd, SpawnFlags flags = SpawnFlags::None) {
        McpTransport *raw = nullptr;
        const McpStatus st =
            mcp_transport_spawn(cmd.native_handle(), static_cast<std::uint32_t>(flags), &raw);
        const int os_errno = detail::last_os_error();
        if (st == MCP_STATUS_SPAWN_FAILED) {
            // "cannot start `npx`: not found in PATH (searched: ...)".
            McpBuffer b{nullptr, 0};
            std::string why = "mcp::Transport::spawn";
            if (mcp_command_spawn_error(cmd.native_handle(), os_errno, &b) == MCP_STATUS_OK) {
                why += ": " + Buffer(b).str();
            }
            throw Error::with_text(Status::SpawnFailed, why,
                                   std::error_code(os_errno, std::system_category()));
        }
        detail::check(st, "mcp::Transport::spawn", os_errno);
        return Transport(raw);
    }
#endif

    /// Frees the transport. A descriptor transport not yet closed is closed
    /// first, with a 2 s grace, and this WAITS for it (its queue written or
    /// dropped, the peer's end seen; at most about 2 s; for a spawned
    /// server, until it is reaped: at most about twice the grace, 4 s):
    /// call close() and take the events until closed() to control that. A
    /// memory transport is freed at once, dropping what it still queued.
    ~Transport() { mcp_transport_free(handle_); }

    Transport(const Transport &) = delete;
    Transport &operator=(const Transport &) = delete;

    /// Takes other's transport; other becomes empty.
    Transport(Transport &&other) noexcept
        : handle_(std::exchange(other.handle_, nullptr)),
          closed_(std::exchange(other.closed_, false)),
          kept_(std::move(other.kept_)),
          kept_head_(std::exchange(other.kept_head_, 0)),
          kept_bytes_(std::exchange(other.kept_bytes_, 0)),
          lent_(std::move(other.lent_)) {}

    /// Frees this transport (see ~Transport) and takes other's; other
    /// becomes empty. Self-assignment is a no-op.
    Transport &operator=(Transport &&other) noexcept {
        if (this != &other) {
            mcp_transport_free(handle_);
            handle_ = std::exchange(other.handle_, nullptr);
            closed_ = std::exchange(other.closed_, false);
            kept_ = std::move(other.kept_);
            kept_head_ = std::exchange(other.kept_head_, 0);
            kept_bytes_ = std::exchange(other.kept_bytes_, 0);
            lent_ = std::move(other.lent_);
        }
        return *this;
    }

    friend void swap(Transport &a, Transport &b) noexcept {
        std::swap(a.handle_, b.handle_);
        std::swap(a.closed_, b.closed_);
        a.kept_.swap(b.kept_);
        std::swap(a.kept_head_, b.kept_head_);
        std::swap(a.kept_bytes_, b.kept_bytes_);
        std::swap(a.lent_, b.lent_);
    }

    /// False for a moved-from (or released) transport.
    explicit operator bool() const noexcept { return handle_ != nullptr; }

    /// The C handle, still owned by this object (NULL if empty).
    McpTransport *native_handle() const noexcept { return handle_; }

    /// Gives up ownership: the caller must mcp_transport_free the result.
    /// This object becomes empty.
    [[nodiscard]] McpTransport *release() noexcept {
        closed_ = false;
        return std::exchange(handle_, nullptr);
    }

#if defined(MCP_STDIO_HAS_PROCESSES)
    /// A spawned server's process id, on POSIX also its process group's
    /// (still given after it was reaped); -1 for a transport that spawned
    /// nothing and for an empty one.
    [[nodiscard]] std::int32_t pid() const noexcept { return mcp_transport_pid(handle_); }

    /// How many times the server was started again by its command's
    /// RestartPolicy: after EventKind::Restarted, that restart's number
    /// (1 for the first). 0 for a transport that never restarted.
    [[nodiscard]] std::uint32_t restarts() const noexcept { return mcp_transport_restarts(handle_); }

    /// The bytes of a spawned server's stderr lines dropped because more
    /// than 1 MiB waited untaken (newlines included); 0 for transports
    /// without Stderr events and for an empty one.
    [[nodiscard]] std::uint64_t stderr_dropped() const noexcept {
        return mcp_transport_stderr_dropped(handle_);
    }

    /// The last lines a spawned server wrote to its stderr (at most 20
    /// lines and 4 KiB, each ending in '\n'), kept after it is gone:
    /// what to show when it dies. Empty for a transport that spawned
    /// nothing, and when its stderr is inherited or discarded (the library
    /// does not read it then). Any thread. Throws std::bad_alloc.
    [[nodiscard]] std::string stderr_tail() const {
        McpBuffer b{nullptr, 0};
        detail::check(mcp_transport_stderr_tail(handle_, &b), "mcp::Transport::stderr_tail");
        return Buffer(b).str();
    }
#endif

    /// Why the transport ended, or is ending (EndReason::None while it is
    /// open, and for an empty one); before_first_message (may be null) is
    /// set to whether a spawned server that exited had never written a
    /// line. RequestFailed events come with this reason. Any thread.
    [[nodiscard]] EndReason end_reason(bool *before_first_message = nullptr) const noexcept {
        return static_cast<EndReason>(mcp_transport_end_reason(handle_, before_first_message));
    }

    /// Why the transport ended, in words: "server exited with code 1 before
    /// its first message: ModuleNotFoundError: No module named 'foo'",
    /// "server closed its stdout", "closed by the host"...; empty while it
    /// is open. The sends' mcp::Error(Closed) carries the same text. Any
    /// thread. Throws std::bad_alloc.
    [[nodiscard]] std::string end_text() const { return detail::end_text(handle_); }

    // ---- Settings

    /// Longest line accepted from the peer, in bytes before the '\n'
    /// (Transport::no_limit for none); a longer one is an Invalid event of
    /// MessageKind::TooLong, its bytes dropped. Receiving side (see Threads).
    /// Throws mcp::Error(InvalidArgument) for 0.
    void set_max_line_len(std::size_t max_len) {
        detail::check(mcp_transport_set_max_line_len(handle_, max_len),
                      "mcp::Transport::set_max_line_len");
    }

    /// Bounds the output queue at `bytes` of framed lines (default 64 MiB):
    /// a send that would pass it is refused with WouldBlock, unless the
    /// queue is empty (one larger message is accepted then). Cancellations
    /// are queued whatever the bound. Any thread. Throws
    /// mcp::Error(InvalidArgument) for 0.
    void set_max_queued(std::size_t bytes) {
        detail::check(mcp_transport_set_max_queued(handle_, bytes),
                      "mcp::Transport::set_max_queued");
    }

    // ---- Sending (any thread, also while another waits in next_event)

    /// Queues one JSON text for the peer, as one compact line; for messages
    /// the other sends do not build (an error with data, say). Throws
    /// mcp::Error: InvalidJson, WouldBlock (queue at its bound: nothing
    /// queued; try_send tells it without an exception), Closed.
    void send(std::string_view json) {
        detail::send_check(mcp_transport_send(handle_, detail::bytes(json), json.size()),
                           "mcp::Transport::send", handle_);
    }

    /// As send, but returns Status::Ok, Status::WouldBlock or Status::Closed
    /// instead of throwing them (other errors still throw).
    [[nodiscard]] Status try_send(std::string_view json) {
        return detail::send_status(mcp_transport_send(handle_, detail::bytes(json), json.size()),
                                   "mcp::Transport::try_send");
    }

    /// Queues the request {"jsonrpc":"2.0","id":N,"method":<method>,
    /// "params":<params>} and returns its id N (1, 2, 3... per transport).
    /// Its answer comes as one Response event with request_id() N.
    /// `method` is UTF-8 text (escaped by the library); `params` a JSON
    /// object or array, empty to leave it out. With `timeout` > 0 an
    /// unanswered request gives one RequestTimedOut event at its deadline
    /// and is cancelled (but an initialize); 0 or negative: no deadline.
    /// Throws mcp::Error: InvalidArgument (method not UTF-8 or holding a
    /// NUL, params not an object or array), InvalidJson (params), and
    /// WouldBlock / Closed as send (a refused request uses no id).
    std::int64_t request(std::string_view method, std::string_view params = {},
                         std::chrono::milliseconds timeout = std::chrono::milliseconds(0)) {
        const detail::CString m = detail::c_text(method, "mcp::Transport::request");
        std::int64_t id = -1;
        detail::send_check(mcp_transport_request(handle_, m.c_str(), detail::bytes(params),
                                                 params.size(), detail::ms_u32(timeout), &id),
                           "mcp::Transport::request", handle_);
        return id;
    }

    /// As request, with RequestFlags (progress followed, and maybe the
    /// timeout reset by it) and the hard maximum `max` (0: none): the
    /// request times out `max` after it was sent at the latest, whatever
    /// its progress. Throws as request, and mcp::Error(InvalidParams) when
    /// progress is followed and params is an array (or its _meta is not an
    /// object, or already holds a progressToken).
    std::int64_t request_with(std::string_view method, std::string_view params,
                              std::chrono::milliseconds timeout, RequestFlags flags,
                              std::chrono::milliseconds max = std::chrono::milliseconds(0)) {
        const detail::CString m = detail::c_text(method, "mcp::Transport::request_with");
        std::int64_t id = -1;
        detail::send_check(
            mcp_transport_request_with(handle_, m.c_str(), detail::bytes(params), params.size(),
                                       detail::ms_u32(timeout),
                                       static_cast<std::uint32_t>(flags), detail::ms_u32(max),
                                       &id),
            "mcp::Transport::request_with", handle_);
        return id;
    }

    /// The most call keeps of the events it takes for later (their bytes).
    static constexpr std::size_t call_kept_max = std::size_t(16) << 20;

    /// Sends the request and waits for its end: the response line (a
    /// result or an error response; mcp_envelope_parse gives its members),
    /// or a throw with the reason:
    /// mcp::Error(TimedOut) at its deadline (a notifications/cancelled was
    /// sent), mcp::Error(Closed) when the transport ended first, its what()
    /// saying why ("server exited with code 1 before its first message:
    /// ModuleNotFoundError: ..."). Meanwhile the peer's requests are
    /// answered with -32601 "Method not found" (so that a server waiting
    /// for its answer cannot deadlock the call; call_with gives them to a
    /// handler), and every other event is kept, in order, for the next
    /// next_event calls: nothing is dropped. At most call_kept_max bytes
    /// are kept: past it the wait ends with mcp::Error(WouldBlock) (what
    /// was kept is still delivered, and the answer when it comes, as a
    /// Response). Receiving side (see Threads).
    std::string call(std::string_view method, std::string_view params = {},
                     std::chrono::milliseconds timeout = std::chrono::milliseconds(0),
                     RequestFlags flags = RequestFlags::None,
                     std::chrono::milliseconds max = std::chrono::milliseconds(0)) {
        return call_with(method, params, timeout, flags, max, [](Transport &t, const Event &req) {
            try {
                t.respond_error(req.envelope().id(), -32601, "Method not found");
            } catch (const Error &) {
                // The peer is gone meanwhile: its answer is moot.
            }
        });
    }

    /// As call, the peer's requests given to on_request(*this, event) to
    /// answer (respond or respond_error with event.envelope().id()).
    std::string call_with(std::string_view method, std::string_view params,
                          std::chrono::milliseconds timeout, RequestFlags flags,
                          std::chrono::milliseconds max,
                          const std::function<void(Transport &, const Event &)> &on_request) {
        const std::int64_t id = request_with(method, params, timeout, flags, max);
        for (;;) {
            McpEvent ev{};
            const McpStatus st = mcp_transport_next_event(handle_, -1, &ev);
            const int os_errno = detail::last_os_error();
            if (st == MCP_STATUS_END_OF_STREAM) {
                closed_ = true;
                throw Error(Status::Closed, "mcp::Transport::call");
            }
            detail::check(st, "mcp::Transport::call", os_errno);
            if (st != MCP_STATUS_OK) continue;
            if (ev.request_id == id && ev.kind == MCP_EVENT_RESPONSE) {
                return std::string(reinterpret_cast<const char *>(ev.data), ev.len);
            }
            if (ev.request_id == id && ev.kind == MCP_EVENT_REQUEST_TIMED_OUT) {
                throw Error(Status::TimedOut, "mcp::Transport::call: the request timed out");
            }
            if (ev.request_id == id && ev.kind == MCP_EVENT_REQUEST_FAILED) {
                const std::string why = "mcp::Transport::call: " + end_text();
                throw Error(Status::Closed, why.c_str());
            }
            if (ev.kind == MCP_EVENT_MESSAGE && ev.rpc_kind == MCP_RPC_REQUEST) {
                on_request(*this, Event(ev));
                continue;
            }
            Kept k;
            k.ev = ev;
            if (ev.data != nullptr) k.bytes.assign(reinterpret_cast<const char *>(ev.data), ev.len);
            kept_bytes_ += k.bytes.size();
            kept_.push_back(std::move(k));
            if (kept_bytes_ > call_kept_max) {
                throw Error(Status::WouldBlock,
                            "mcp::Transport::call: more than 16 MiB of events kept while waiting");
            }
        }
    }

    /// As request, but WouldBlock and Closed come in the result instead of
    /// being thrown (other errors still throw).
    [[nodiscard]] RequestResult try_request(
        std::string_view method, std::string_view params = {},
        std::chrono::milliseconds timeout = std::chrono::milliseconds(0)) {
        const detail::CString m = detail::c_text(method, "mcp::Transport::try_request");
        std::int64_t id = -1;
        const Status st = detail::send_status(
            mcp_transport_request(handle_, m.c_str(), detail::bytes(params), params.size(),
                                  detail::ms_u32(timeout), &id),
            "mcp::Transport::try_request");
        return RequestResult{st, st == Status::Ok ? id : -1};
    }

    /// Queues the notification {"jsonrpc":"2.0","method":<method>,
    /// "params":<params>}; arguments and errors as request.
    void notify(std::string_view method, std::string_view params = {}) {
        const detail::CString m = detail::c_text(method, "mcp::Transport::notify");
        detail::send_check(
            mcp_transport_notify(handle_, m.c_str(), detail::bytes(params), params.size()),
            "mcp::Transport::notify", handle_);
    }

    /// As notify, returning Ok, WouldBlock or Closed (as try_send).
    [[nodiscard]] Status try_notify(std::string_view method, std::string_view params = {}) {
        const detail::CString m = detail::c_text(method, "mcp::Transport::try_notify");
        return detail::send_status(
            mcp_transport_notify(handle_, m.c_str(), detail::bytes(params), params.size()),
            "mcp::Transport::try_notify");
    }

    /// Queues the response {"jsonrpc":"2.0","id":<id>,"result":<result>} to
    /// a request of the peer. `id` is the request's id token as on the wire,
    /// echoed as is: pass event.envelope().id(). Throws mcp::Error:
    /// InvalidArgument (id empty, or not a JSON string or number),
    /// InvalidJson (result not one JSON text), WouldBlock, Closed.
    void respond(std::string_view id, std::string_view result) {
        detail::send_check(mcp_transport_respond(handle_, detail::bytes(id), id.size(),
                                                 detail::bytes(result), result.size()),
                           "mcp::Transport::respond", handle_);
    }

    /// As respond, returning Ok, WouldBlock or Closed (as try_send).
    [[nodiscard]] Status try_respond(std::string_view id, std::string_view result) {
        return detail::send_status(mcp_transport_respond(handle_, detail::bytes(id), id.size(),
                                                         detail::bytes(result), result.size()),
                                   "mcp::Transport::try_respond");
    }

    /// Queues the error response {"jsonrpc":"2.0","id":<id>,"error":
    /// {"code":<code>,"message":<message>}}. `id` as for respond, but EMPTY
    /// LEAVES "id" OUT (for a request whose id could not be read; never
    /// "id":null), so event.envelope().id() can be passed whatever it is.
    /// `message` is UTF-8 text, escaped by the library. For error.data,
    /// build the message yourself and send() it. Throws mcp::Error:
    /// InvalidArgument (id not a JSON string or number; message not UTF-8
    /// or holding a NUL), WouldBlock, Closed.
    void respond_error(std::string_view id, std::int64_t code, std::string_view message) {
        const detail::CString m = detail::c_text(message, "mcp::Transport::respond_error");
        detail::send_check(
            mcp_transport_respond_error(handle_, detail::bytes(id), id.size(), code, m.c_str()),
            "mcp::Transport::respond_error", handle_);
    }

    /// As respond_error, returning Ok, WouldBlock or Closed (as try_send).
    [[nodiscard]] Status try_respond_error(std::string_view id, std::int64_t code,
                                           std::string_view message) {
        const detail::CString m = detail::c_text(message, "mcp::Transport::try_respond_error");
        return detail::send_status(
            mcp_transport_respond_error(handle_, detail::bytes(id), id.size(), code, m.c_str()),
            "mcp::Transport::try_respond_error");
    }

    /// Cancels our request `id`: queues notifications/cancelled for it (with
    /// "reason" when given) whatever the queue's bound, and forgets it: no
    /// event comes for it (an answer that comes anyway is a Message).
    /// Throws mcp::Error: Closed, InvalidArgument when `id` is not pending
    /// (unknown, answered, timed out, cancelled: also when its answer or
    /// timeout was just taken by the receiving thread), is an initialize,
    /// or `reason` is not UTF-8 or holds a NUL.
    void cancel(std::int64_t id, std::optional<std::string_view> reason = std::nullopt) {
        const char *where = "mcp::Transport::cancel";
        if (reason && reason->find('\0') != std::string_view::npos) {
            throw Error(Status::InvalidArgument, where);
        }
        std::optional<detail::CString> text;
        if (reason) text.emplace(*reason);
        detail::check(mcp_transport_cancel(handle_, id, text ? text->c_str() : nullptr), where);
    }

    /// Begins closing and returns at once: from now on every send fails
    /// with Status::Closed. next_event then drives the close: the queue is
    /// written until empty or `grace` has passed, the write side ends,
    /// answers still arriving are delivered; when the peer's end arrives
    /// (or `grace` after this call), pending requests get RequestFailed
    /// and Closed comes, last. Repeating it is harmless (the first
    /// schedule stands). Any thread; wakes a waiting next_event. `grace`
    /// is clamped to [0, 2^32-1] ms.
    void close(std::chrono::milliseconds grace) {
        detail::check(mcp_transport_close(handle_, detail::ms_u32(grace)),
                      "mcp::Transport::close");
    }

    // ---- Receiving (one thread at a time)

    /// The next event, waiting up to `timeout` for one (0: only what is
    /// ready now; negative, e.g. Transport::forever: no limit; clamped to
    /// 2^31-1 ms). A descriptor transport does its I/O meanwhile; sends
    /// from other threads wake it. std::nullopt when none came in time, or
    /// when the transport has ENDED: after its Closed event was delivered,
    /// every call returns std::nullopt at once, and closed() tells these
    /// apart. So with Transport::forever,
    ///     while (auto ev = t.next_event(mcp::Transport::forever)) { ... }
    /// ends right after the Closed event. The event BORROWS the transport
    /// until its next receiving call (see Event). Throws
    /// mcp::Error(IoError) with os_error() (poll(2) failed), std::bad_alloc
    /// (call again), mcp::Error(Poisoned).
    [[nodiscard]] std::optional<Event> next_event(std::chrono::milliseconds timeout) {
        // What a call kept comes first, in the order it came.
        if (kept_head_ < kept_.size()) {
            lent_ = std::move(kept_[kept_head_++]);
            if (kept_head_ == kept_.size()) {
                kept_.clear();
                kept_head_ = 0;
            }
            kept_bytes_ -= lent_.bytes.size();
            if (lent_.ev.kind == MCP_EVENT_CLOSED) closed_ = true;
            return Event(lent_.rebased());
        }
        McpEvent ev{};
        const std::int32_t ms = detail::clamp_ms<std::int32_t>(timeout, -1, INT32_MAX);
        const McpStatus st = mcp_transport_next_event(handle_, ms, &ev);
        const int os_errno = detail::last_os_error();
        switch (st) {
        case MCP_STATUS_OK:
            if (ev.kind == MCP_EVENT_CLOSED) closed_ = true;
            return Event(ev);
        case MCP_STATUS_END_OF_STREAM: closed_ = true; return std::nullopt;
        default: break;
        }
        detail::check(st, "mcp::Transport::next_event", os_errno);
        return std::nullopt;  // NoMessage (or an unknown non-error status)
    }

    /// True once this object's next_event has delivered the Closed event
    /// (or reported the end): no event will come any more. Receiving side,
    /// like next_event. False for an empty transport.
    [[nodiscard]] bool closed() const noexcept { return closed_; }

    /// Memory transport: hands it bytes the peer sent, in chunks of any
    /// size; then take the events with next_event(0ms) until std::nullopt.
    /// Invalidates the last event's data. Throws mcp::Error: Closed (after
    /// receive_end, or once closing has ended), InvalidArgument (a
    /// descriptor transport); std::bad_alloc (nothing taken).
    void receive(const void *data, std::size_t len) {
        detail::check(mcp_transport_receive(handle_, static_cast<const std::uint8_t *>(data), len),
                      "mcp::Transport::receive");
    }

    void receive(std::string_view bytes) { receive(bytes.data(), bytes.size()); }

    /// Any contiguous container of 1-byte elements, as LineReader::feed.
    template <class Bytes,
              class = std::enable_if_t<
                  !std::is_convertible_v<const Bytes &, std::string_view> &&
                  sizeof(*std::declval<const Bytes &>().data()) == 1 &&
                  std::is_convertible_v<decltype(std::declval<const Bytes &>().size()), std::size_t>>>
    void receive(const Bytes &bytes) {
        receive(static_cast<const void *>(bytes.data()), static_cast<std::size_t>(bytes.size()));
    }

    /// Memory transport: the peer closed its end. A last line without a
    /// newline still counts, then the transport closes (pending requests
    /// get RequestFailed, then Closed). Repeating it is harmless. Throws
    /// mcp::Error(InvalidArgument) for a descriptor transport,
    /// std::bad_alloc (call again).
    void receive_end() {
        detail::check(mcp_transport_receive_end(handle_), "mcp::Transport::receive_end");
    }

    /// Memory transport: moves everything queued for the peer into a
    /// Buffer, without copying (empty when nothing is queued: nothing is
    /// allocated then). Write the bytes to the peer in order. Works after
    /// the Closed event too. Throws mcp::Error(InvalidArgument) for a
    /// descriptor transport, std::bad_alloc (nothing moved).
    [[nodiscard]] Buffer take_output_buffer() {
        McpBuffer raw{nullptr, 0};
        detail::check(mcp_transport_take_output(handle_, &raw), "mcp::Transport::take_output");
        return Buffer(raw);
    }

    /// take_output_buffer(), copied into a std::string.
    [[nodiscard]] std::string take_output() { return take_output_buffer().str(); }

    /// Memory transport: copies up to `cap` queued bytes into `buf` and
    /// removes them from the queue; returns how many (0: nothing queued).
    /// Call until it returns 0. No allocation. Throws
    /// mcp::Error(InvalidArgument) for a descriptor transport.
    [[nodiscard]] std::size_t read_output(void *buf, std::size_t cap) {
        std::size_t n = 0;
        detail::check(mcp_transport_read_output(handle_, static_cast<std::uint8_t *>(buf), cap, &n),
                      "mcp::Transport::read_output");
        return n;
    }

#if defined(MCP_STDIO_HAS_POSIX_IO)
    /// For event loops: fills `fds` (resized to the count; its capacity is
    /// reused, so no allocation once it has held max_poll_fds entries) with
    /// the descriptors to wait on now, and returns the time to the
    /// transport's next deadline (-1 ms: none; 0: due now):
    ///     auto timeout = t.poll_fds(fds);
    ///     ::poll(fds.data(), fds.size(), static_cast<int>(timeout.count()));
    ///     while (auto ev = t.next_event(0ms)) handle(*ev);
    /// Take every event before waiting again (events already received do
    /// not make a descriptor ready) and ask again each time: the set
    /// changes. A memory transport gives no descriptors. POSIX only.
    [[nodiscard]] std::chrono::milliseconds poll_fds(std::vector<pollfd> &fds) {
        if (fds.size() < max_poll_fds) fds.resize(max_poll_fds);
        std::size_t n = 0;
        std::int32_t timeout = -1;
        McpStatus st = mcp_transport_poll_fds(handle_, fds.data(), fds.size(), &n, &timeout);
        if (st == MCP_STATUS_INVALID_ARGUMENT && n > fds.size()) {  // a later library's bigger set
            fds.resize(n);
            st = mcp_transport_poll_fds(handle_, fds.data(), fds.size(), &n, &timeout);
        }
        detail::check(st, "mcp::Transport::poll_fds");
        fds.resize(n);
        return std::chrono::milliseconds(timeout);
    }

    /// poll_fds into the caller's array (a part of a bigger pollfd set,
    /// say): writes fds[0..n) and `timeout`, returns n. Throws
    /// mcp::Error(InvalidArgument) when `cap` is too small (max_poll_fds is
    /// always enough).
    [[nodiscard]] std::size_t poll_fds(pollfd *fds, std::size_t cap,
                                       std::chrono::milliseconds &timeout) {
        std::size_t n = 0;
        std::int32_t ms = -1;
        detail::check(mcp_transport_poll_fds(handle_, fds, cap, &n, &ms),
                      "mcp::Transport::poll_fds");
        timeout = std::chrono::milliseconds(ms);
        return n;
    }
#endif

private:
    McpTransport *handle_;
    bool closed_ = false;
    // Events a call took while it waited, copied (their data lives in
    // `bytes`), for the next next_event calls; and the one lent last.
    struct Kept {
        McpEvent ev{};
        std::string bytes;

        // ev, its pointers into bytes.
        McpEvent rebased() const noexcept {
            McpEvent e = ev;
            const auto at = [&](const std::uint8_t *p) {
                return reinterpret_cast<const std::uint8_t *>(bytes.data()) + (p - ev.data);
            };
            if (ev.data != nullptr) e.data = at(ev.data);
            for (McpSlice *s : {&e.envelope.id, &e.envelope.method, &e.envelope.params,
                                &e.envelope.result, &e.envelope.error}) {
                if (s->data != nullptr) s->data = at(s->data);
            }
            return e;
        }
    };
    std::vector<Kept> kept_;  // from kept_head_ on (a vector: its move is noexcept)
    std::size_t kept_head_ = 0;
    std::size_t kept_bytes_ = 0;
    Kept lent_;
};

// ---------------------------------------------------------------------------
// Versions

/// The version of the header compiled against, "MAJOR.MINOR.PATCH".
inline constexpr std::string_view header_version = MCP_STDIO_VERSION;

/// The version of the library linked at run time, "MAJOR.MINOR.PATCH".
inline std::string_view version() noexcept { return mcp_stdio_version(); }

/// The ABI version of the library linked at run time.
inline std::uint32_t abi_version() noexcept { return mcp_stdio_abi_version(); }

/// True if the library linked at run time has the ABI this header declares
/// (check it once at startup when linking the shared library).
inline bool abi_compatible() noexcept {
    return mcp_stdio_abi_version() == static_cast<std::uint32_t>(MCP_STDIO_ABI_VERSION);
}

// ---------------------------------------------------------------------------
// Names, for logs and test output

inline std::string_view to_string(MessageKind k) noexcept {
    switch (k) {
    case MessageKind::Json: return "Json";
    case MessageKind::ParseError: return "ParseError";
    case MessageKind::TooLong: return "TooLong";
    case MessageKind::InvalidJsonRpc: return "InvalidJsonRpc";
    }
    return "MessageKind(?)";
}

inline std::string_view to_string(RpcKind k) noexcept {
    switch (k) {
    case RpcKind::None: return "None";
    case RpcKind::Request: return "Request";
    case RpcKind::Notification: return "Notification";
    case RpcKind::Response: return "Response";
    case RpcKind::Error: return "Error";
    case RpcKind::Batch: return "Batch";
    }
    return "RpcKind(?)";
}

inline std::string_view to_string(EventKind k) noexcept {
    switch (k) {
    case EventKind::Message: return "Message";
    case EventKind::Response: return "Response";
    case EventKind::RequestTimedOut: return "RequestTimedOut";
    case EventKind::RequestFailed: return "RequestFailed";
    case EventKind::Invalid: return "Invalid";
    case EventKind::Stderr: return "Stderr";
    case EventKind::Closed: return "Closed";
    case EventKind::Progress: return "Progress";
    case EventKind::Subscription: return "Subscription";
    case EventKind::SubscriptionEnded: return "SubscriptionEnded";
    case EventKind::Restarted: return "Restarted";
    }
    return "EventKind(?)";
}

inline std::ostream &operator<<(std::ostream &os, MessageKind k) { return os << to_string(k); }
inline std::ostream &operator<<(std::ostream &os, RpcKind k) { return os << to_string(k); }
inline std::ostream &operator<<(std::ostream &os, EventKind k) { return os << to_string(k); }
inline std::ostream &operator<<(std::ostream &os, Status s) {
    return os << mcp_status_str(static_cast<std::int32_t>(s));
}

}  // namespace mcp

namespace std {
template <>
struct is_error_code_enum<mcp::Status> : true_type {};
/// The C enum converts too: `e.code() == MCP_STATUS_INVALID_JSON`.
template <>
struct is_error_code_enum<McpStatus> : true_type {};
}  // namespace std

/// Found by argument-dependent lookup for the global C enum McpStatus.
inline std::error_code make_error_code(McpStatus s) noexcept {
    return mcp::make_error_code(static_cast<mcp::Status>(s));
}

#endif  // MCP_STDIO_HPP
