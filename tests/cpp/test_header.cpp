// C++ consumer of include/mcp_stdio.h: compiled as C++11 with
// -Wall -Wextra -Wpedantic -Werror and linked against libmcp_stdio, which
// proves the header is valid C++ and declares the functions extern "C".
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
    CHECK(mcp_line_reader_set_flags(r.get(), 1u << 7) == MCP_STATUS_INVALID_ARGUMENT);
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

}  // namespace

int main() {
    test_types();
    test_reader();
    test_encode();
    std::printf("%d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}
