#include "mcp_stdio.hpp"
#include <iostream>
#include <string>

// readme_host TOOL JSON_ARGS SERVER [ARGS...]: spawns the server, does the initialize
// handshake, calls the tool, prints the response line, closes.
int main(int argc, char **argv) try {
    using namespace std::chrono_literals;
    if (argc < 4) return std::cerr << "usage: readme_host TOOL JSON_ARGS SERVER [ARGS...]\n", 2;
    mcp::Command cmd(argv[3]);  // looked up in PATH
    for (int i = 4; i < argc; i++) cmd.arg(argv[i]);
    cmd.stderr_mode(mcp::StderrMode::Inherit);  // the server's log goes to ours
    mcp::Transport t = mcp::Transport::spawn(cmd);
    t.call("initialize", R"({"protocolVersion":"2025-11-25","capabilities":{},)"
                         R"("clientInfo":{"name":"readme","version":"1"}})", 10s);
    t.notify("notifications/initialized");
    const std::string params = std::string(R"({"name":")") + argv[1] + R"(","arguments":)" + argv[2] + "}";
    std::cout << t.call("tools/call", params, 10s) << '\n';  // the response, as it came
    t.close(2s);  // close its stdin; SIGTERM at 2 s, SIGKILL at 4 s
    while (t.next_event(mcp::Transport::forever)) {}  // until its exit is seen
    return 0;
} catch (const mcp::Error &e) {  // "mcp::Transport::call: server exited with code 1 ...: <its stderr>"
    std::cerr << e.what() << '\n';
    return 1;
}
