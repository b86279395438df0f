// The installed C++ wrapper (mcp_stdio.hpp) in a C++17 consumer: built by
// tests/packaging/run.sh through find_package(mcp_stdio) when the wrapper is
// installed. Deliberately small: the wrapper's own tests live in tests/cpp.
#include <mcp_stdio.hpp>

#include <cstdio>
#include <string>

int main() {
    mcp::LineReader reader;
    reader.feed(std::string_view("{\"jsonrpc\":\"2.0\",\"method\":\"ping\",\"id\":1}\r\n"));
    auto msg = reader.next();
    if (!msg || std::string(msg->data()) != "{\"jsonrpc\":\"2.0\",\"method\":\"ping\",\"id\":1}") {
        std::fprintf(stderr, "consumer_cxx: reader gave the wrong item\n");
        return 1;
    }
    if (mcp::encode("{\"a\": \"line1\\nline2\", \"id\": 1}") != "{\"a\":\"line1\\nline2\",\"id\":1}\n") {
        std::fprintf(stderr, "consumer_cxx: encode gave the wrong line\n");
        return 1;
    }
    std::puts("consumer_cxx: OK");
    return 0;
}
