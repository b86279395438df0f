// mcp_stdio.hpp: header-only C++17 wrapper of the mcp-stdio C API (mcp_stdio.h).
//
// Framing of MCP stdio messages (newline-delimited JSON-RPC): mcp::LineReader
// splits an input stream into messages, mcp::encode turns one JSON text into
// one line to write. Nothing to build: include this header and link
// libmcp_stdio as for the C API (CMake: mcp_stdio::mcp_stdio).
//
//     mcp::LineReader reader(mcp::ReaderFlags::JsonRpc);  // throws std::bad_alloc
//     reader.feed(chunk);                                 // any chunking
//     while (auto msg = reader.next()) {                  // std::optional<mcp::Message>
//         if (msg->kind() == mcp::MessageKind::Json) handle(std::string(msg->data()));
//     }
//     std::string line = mcp::encode(R"({"jsonrpc": "2.0", "id": 1, "result": {}})");
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
//     BrokenPipe: write_all() to a closed peer. Panic/Poisoned: the library
//     gave up on that reader (destroy it). After a throw, the reader is
//     unchanged and usable (except Panic/Poisoned).
//   - Never thrown (not errors): "no complete line yet" is next() == std::nullopt;
//     WouldBlock and EndOfStream are read_fd() results.
//   - noexcept: moves, swaps, destructors, Buffer(), buffered_len(), operator
//     bool, the Message/Buffer/ReadResult accessors, category(), version(),
//     abi_version(), abi_compatible(). Anything building a std::string (encode,
//     Error, Buffer::str) may also throw std::bad_alloc.
//
// Threads: as in C, a LineReader may move between threads but must not be used
// by two at once; encode and write_all are thread-safe.
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

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <new>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <utility>

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
    WouldBlock = MCP_STATUS_WOULD_BLOCK,    // not an error: LineReader::read_fd's ReadState
    EndOfStream = MCP_STATUS_END_OF_STREAM, // not an error: LineReader::read_fd's ReadState
    IoError = MCP_STATUS_IO_ERROR,          // Error::os_error() has the errno
    BrokenPipe = MCP_STATUS_BROKEN_PIPE,
    TimedOut = MCP_STATUS_TIMED_OUT,        // not thrown by write_all with a timeout: a count
    Closed = MCP_STATUS_CLOSED,             // the transport is closing or closed
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

    /// With the OS error behind s (Status::IoError): what() is
    /// "where: <strerror> (errno N): <description of s>".
    Error(Status s, const char *where, std::error_code os_error)
        : std::system_error(make_error_code(s), describe(where, os_error)), os_error_(os_error) {}

    /// The status the library returned.
    Status status() const noexcept { return static_cast<Status>(code().value()); }

    /// For Status::IoError: the errno of the failed system call, in
    /// std::system_category() (compare with std::errc values). Otherwise empty (0).
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

// Throws for negative statuses; returns the others unchanged. `os_errno` is
// errno read right after the call (used for MCP_STATUS_IO_ERROR).
inline McpStatus check(McpStatus st, const char *where, int os_errno = 0) {
    if (static_cast<std::int32_t>(st) < 0) {
        if (st == MCP_STATUS_OUT_OF_MEMORY) throw std::bad_alloc();
        if (st == MCP_STATUS_IO_ERROR && os_errno != 0) {
            throw Error(Status::IoError, where, std::error_code(os_errno, std::system_category()));
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
    /// taken from then on. Throws mcp::Error(InvalidArgument) for unknown bits.
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
        const int os_errno = errno;
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
    const int os_errno = errno;
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
    const int os_errno = errno;
    if (st != MCP_STATUS_TIMED_OUT) detail::check(st, "mcp::write_all", os_errno);
    return written;
}
#endif

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

inline std::ostream &operator<<(std::ostream &os, MessageKind k) { return os << to_string(k); }
inline std::ostream &operator<<(std::ostream &os, RpcKind k) { return os << to_string(k); }
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
