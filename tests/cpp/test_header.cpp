// C++ consumer of include/mcp_stdio.h: compiled as C++11 with
// -Wall -Wextra -Wpedantic -Werror and linked against libmcp_stdio, which
// proves the header is valid C++ and declares the functions extern "C".
// Also the transport API (McpTransport, McpEvent, poll_fds where POSIX).
// Prints `N passed, M failed` as its last line; exits non-zero on failure.
#include "mcp_stdio.h"

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

namespace {

int passed = 0;
int failed = 0;

void check(bool ok, const char *expr, const char *file, int line) {
    if (ok) {
        ++passed;
    } else {
        ++failed;
        std::printf("%s:%d: CHECK failed: %s\n", file, line, expr);
    }
}

#define CHECK(expr) check(static_cast<bool>(expr), #expr, __FILE__, __LINE__)

struct ReaderDeleter {
    void operator()(McpLineReader *r) const noexcept { mcp_line_reader_free(r); }
};
using Reader = std::unique_ptr<McpLineReader, ReaderDeleter>;

struct Item {
    int32_t kind;
    int32_t rpc_kind;
    std::string data;  // copied out within the borrowed lifetime
    size_t len;
};

std::vector<Item> drain(McpLineReader *r) {
    std::vector<Item> items;
    for (;;) {
        McpMessage m{};
        McpStatus st = mcp_line_reader_next_message(r, &m);
        if (st == MCP_STATUS_NO_MESSAGE) break;
        CHECK(st == MCP_STATUS_OK);
        if (st != MCP_STATUS_OK) break;
        Item it{m.kind, m.rpc_kind,
                m.data ? std::string(reinterpret_cast<const char *>(m.data), m.len) : std::string(),
                m.len};
        items.push_back(it);
    }
    return items;
}

McpStatus feed(McpLineReader *r, const std::string &s) {
    return mcp_line_reader_feed(r, reinterpret_cast<const uint8_t *>(s.data()), s.size());
}

std::string encode(const std::string &json, uint32_t flags, McpStatus *status) {
    McpBuffer out{nullptr, 0};
    *status = mcp_encode(reinterpret_cast<const uint8_t *>(json.data()), json.size(), flags, &out);
    std::string s;
    if (*status == MCP_STATUS_OK) {
        s.assign(reinterpret_cast<const char *>(out.data), out.len);
        mcp_buffer_free(&out);
        CHECK(out.data == nullptr && out.len == 0);
    }
    return s;
}

void test_types() {
    static_assert(std::is_same<decltype(mcp_line_reader_new()), McpLineReader *>::value, "new");
    static_assert(std::is_same<decltype(mcp_stdio_abi_version()), uint32_t>::value, "abi");
    static_assert(std::is_same<decltype(mcp_line_reader_buffered_len(nullptr)), size_t>::value, "buffered_len");
    static_assert(sizeof(McpStatus) == 4, "McpStatus is 32-bit");
    static_assert(std::is_standard_layout<McpMessage>::value, "McpMessage is a C struct");
    static_assert(std::is_standard_layout<McpBuffer>::value, "McpBuffer is a C struct");
    CHECK(std::string(mcp_stdio_version()) == MCP_STDIO_VERSION);
    CHECK(mcp_stdio_abi_version() == static_cast<uint32_t>(MCP_STDIO_ABI_VERSION));
    CHECK(mcp_status_str(MCP_STATUS_OK) != nullptr);
    CHECK(mcp_status_str(12345) != nullptr);
}

void test_reader() {
    Reader r(mcp_line_reader_new());
    CHECK(r != nullptr);
    if (!r) return;
    CHECK(mcp_line_reader_set_flags(r.get(), MCP_READER_JSONRPC) == MCP_STATUS_OK);
    CHECK(mcp_line_reader_set_max_line_len(r.get(), 64) == MCP_STATUS_OK);
    CHECK(mcp_line_reader_feed(r.get(), nullptr, 0) == MCP_STATUS_OK);
    CHECK(feed(r.get(), "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\r\n{\"jsonrpc\"") == MCP_STATUS_OK);
    CHECK(mcp_line_reader_buffered_len(r.get()) > 0);
    CHECK(feed(r.get(), ":\"2.0\",\"method\":\"n\"}\nnot json\n") == MCP_STATUS_OK);
    CHECK(feed(r.get(), std::string(100, 'x') + "\n{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}") == MCP_STATUS_OK);
    std::vector<Item> items = drain(r.get());
    CHECK(mcp_line_reader_finish(r.get()) == MCP_STATUS_OK);
    std::vector<Item> rest = drain(r.get());
    items.insert(items.end(), rest.begin(), rest.end());

    CHECK(items.size() == 5);
    if (items.size() == 5) {
        CHECK(items[0].kind == MCP_MESSAGE_JSON && items[0].rpc_kind == MCP_RPC_REQUEST);
        CHECK(items[0].data == "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}");
        CHECK(items[1].kind == MCP_MESSAGE_JSON && items[1].rpc_kind == MCP_RPC_NOTIFICATION);
        CHECK(items[1].data == "{\"jsonrpc\":\"2.0\",\"method\":\"n\"}");
        CHECK(items[2].kind == MCP_MESSAGE_PARSE_ERROR && items[2].data == "not json");
        CHECK(items[3].kind == MCP_MESSAGE_TOO_LONG && items[3].len > 64 && items[3].len <= 100);
        CHECK(items[4].kind == MCP_MESSAGE_JSON && items[4].rpc_kind == MCP_RPC_RESPONSE);
        CHECK(items[4].data == "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}");
    }
    CHECK(mcp_line_reader_buffered_len(r.get()) == 0);
    CHECK(mcp_line_reader_set_flags(r.get(), 1u << 7) == MCP_STATUS_UNKNOWN_FLAGS);
    CHECK(mcp_line_reader_set_max_line_len(r.get(), 0) == MCP_STATUS_INVALID_ARGUMENT);
    CHECK(mcp_line_reader_next_message(nullptr, nullptr) == MCP_STATUS_NULL_ARGUMENT);
    mcp_line_reader_free(nullptr);
}

void test_encode() {
    McpStatus st = MCP_STATUS_PANIC;
    CHECK(encode("{\"a\": \"line1\\nline2\", \"id\": 1}", 0, &st) == "{\"a\":\"line1\\nline2\",\"id\":1}\n");
    CHECK(st == MCP_STATUS_OK);
    CHECK(encode("\"\xC3\xA9\xF0\x9F\x98\x80\"", MCP_ENCODE_ASCII, &st) == "\"\\u00e9\\ud83d\\ude00\"\n");
    CHECK(st == MCP_STATUS_OK);
    CHECK(encode("{\"a\":", 0, &st).empty());
    CHECK(st == MCP_STATUS_INVALID_JSON);
    McpBuffer untouched{nullptr, 99};
    CHECK(mcp_encode(nullptr, 0, 0, &untouched) == MCP_STATUS_INVALID_JSON);
    CHECK(untouched.data == nullptr && untouched.len == 99);
    mcp_buffer_free(nullptr);
}

struct TransportDeleter {
    void operator()(McpTransport *t) const noexcept { mcp_transport_free(t); }
};
using Transport = std::unique_ptr<McpTransport, TransportDeleter>;

std::string take_output(McpTransport *t) {
    McpBuffer out{nullptr, 0};
    CHECK(mcp_transport_take_output(t, &out) == MCP_STATUS_OK);
    std::string s;
    if (out.data) s.assign(reinterpret_cast<const char *>(out.data), out.len);
    mcp_buffer_free(&out);
    return s;
}

std::string slice(const McpSlice &s) {
    return s.data ? std::string(reinterpret_cast<const char *>(s.data), s.len) : std::string();
}

void test_transport() {
    static_assert(std::is_standard_layout<McpEvent>::value, "McpEvent is a C struct");
    static_assert(std::is_standard_layout<McpEnvelope>::value, "McpEnvelope is a C struct");
    static_assert(std::is_standard_layout<McpSlice>::value, "McpSlice is a C struct");
    static_assert(sizeof(McpEventKind) == 4, "McpEventKind is 32-bit");
    static_assert(std::is_same<decltype(mcp_transport_new()), McpTransport *>::value, "transport_new");

    Transport t(mcp_transport_new());
    CHECK(t != nullptr);
    if (!t) return;
    int64_t id = 0;
    const std::string params = "{\"a\": 1}";
    CHECK(mcp_transport_request(t.get(), "ping", reinterpret_cast<const uint8_t *>(params.data()),
                                params.size(), 0, &id) == MCP_STATUS_OK);
    CHECK(id == 1);
    CHECK(take_output(t.get()) == "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{\"a\":1}}\n");
    const std::string answer = "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"ok\":true}}\n";
    CHECK(mcp_transport_receive(t.get(), reinterpret_cast<const uint8_t *>(answer.data()), answer.size()) ==
          MCP_STATUS_OK);
    McpEvent ev;
    std::memset(&ev, 0, sizeof ev);
    CHECK(mcp_transport_next_event(t.get(), 0, &ev) == MCP_STATUS_OK);
    CHECK(ev.kind == MCP_EVENT_RESPONSE && ev.request_id == 1 && ev.rpc_kind == MCP_RPC_RESPONSE);
    CHECK(slice(ev.envelope.result) == "{\"ok\":true}");
    CHECK(mcp_transport_next_event(t.get(), 0, &ev) == MCP_STATUS_NO_MESSAGE);

    CHECK(mcp_transport_set_max_queued(t.get(), 1) == MCP_STATUS_OK);
    CHECK(mcp_transport_notify(t.get(), "n", nullptr, 0) == MCP_STATUS_OK);
    CHECK(mcp_transport_notify(t.get(), "n", nullptr, 0) == MCP_STATUS_WOULD_BLOCK);
    CHECK(mcp_transport_close(t.get(), 0) == MCP_STATUS_OK);
    CHECK(mcp_transport_send(t.get(), reinterpret_cast<const uint8_t *>("{}"), 2) == MCP_STATUS_CLOSED);
    CHECK(mcp_transport_next_event(t.get(), 1000, &ev) == MCP_STATUS_OK);
    CHECK(ev.kind == MCP_EVENT_CLOSED);
    CHECK(mcp_transport_next_event(t.get(), 0, &ev) == MCP_STATUS_END_OF_STREAM);
    char buf[64];
    size_t n = 99;
    CHECK(mcp_transport_read_output(t.get(), reinterpret_cast<uint8_t *>(buf), sizeof buf, &n) == MCP_STATUS_OK);
    CHECK(std::string(buf, n) == "{\"jsonrpc\":\"2.0\",\"method\":\"n\"}\n");
#if defined(MCP_STDIO_HAS_POSIX_IO)
    struct pollfd fds[3];
    int32_t timeout_ms = 7;
    CHECK(mcp_transport_poll_fds(t.get(), fds, 3, &n, &timeout_ms) == MCP_STATUS_OK);
    CHECK(n == 0 && timeout_ms == 0);  // a memory transport, ended
    McpTransport *none = nullptr;
    CHECK(mcp_transport_open_fds(-1, 1, MCP_TRANSPORT_BORROW_FDS, &none) == MCP_STATUS_INVALID_ARGUMENT);
    CHECK(none == nullptr);
#endif
    mcp_transport_free(nullptr);
}

}  // namespace

int main() {
    test_types();
    test_reader();
    test_encode();
    test_transport();
    std::printf("%d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}
