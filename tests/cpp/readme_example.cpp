#include "mcp_stdio.hpp"
#include <iostream>

int main() {
    mcp::LineReader reader(mcp::ReaderFlags::JsonRpc);  // throws std::bad_alloc
    reader.feed("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\nnot json\n");  // any chunks
    while (auto msg = reader.next()) {  // std::nullopt: no complete line yet
        // msg->data() borrows the reader until its next call: copy it to keep it.
        if (msg->rpc_kind() == mcp::RpcKind::Request)
            std::cout << "request: " << msg->data() << '\n';
        else
            std::cout << "skipped: " << msg->kind() << '\n';
    }
    std::cout << mcp::encode(R"({"jsonrpc": "2.0", "id": 1, "result": {}})");  // or mcp::Error
}
