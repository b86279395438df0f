// The C++ wrapper on Windows, under Wine: mcp::Command and
// mcp::Transport::spawn start tests/windows/misbehave.c (MCP_STDIO_MISBEHAVE),
// a request is answered, the close ends the session with exit code 0; a
// program not found throws mcp::Error(SpawnFailed) with
// ERROR_FILE_NOT_FOUND as os_error(). Built by scripts/windows.sh.
#include "mcp_stdio.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>

using namespace std::chrono_literals;

int main() {
    const char *server = std::getenv("MCP_STDIO_MISBEHAVE");
    if (!server || !*server) {
        std::fprintf(stderr, "MCP_STDIO_MISBEHAVE is not set\n");
        return 1;
    }
    int failures = 0;
    auto check = [&](bool ok, const char *what) {
        if (!ok) {
            std::fprintf(stderr, "CHECK failed: %s\n", what);
            failures++;
        }
    };
    {
        mcp::Transport t = mcp::Transport::spawn(mcp::Command(server).arg("echo"));
        check(t.pid() > 0, "pid");
        const std::int64_t id = t.request("tools/list", {}, 30s);
        bool answered = false, closed = false;
        int exit_code = -2;
        for (int i = 0; i < 300 && !closed; i++) {
            auto ev = t.next_event(100ms);
            if (!ev) continue;
            if (ev->kind() == mcp::EventKind::Response && ev->request_id() == id) {
                answered = true;
                t.close(5000ms);
            }
            if (ev->kind() == mcp::EventKind::Closed) {
                closed = true;
                exit_code = ev->exit_code();
            }
        }
        check(answered, "answered");
        check(closed, "closed");
        check(exit_code == 0, "exit code 0");
    }
    try {
        mcp::Transport t = mcp::Transport::spawn(mcp::Command("Z:\\no\\such\\server.exe"));
        check(false, "spawn of a missing program throws");
    } catch (const mcp::Error &e) {
        check(e.status() == mcp::Status::SpawnFailed, "SpawnFailed");
        check(e.os_error().value() == 2, "ERROR_FILE_NOT_FOUND");
    }
    if (failures) {
        std::printf("test_spawn_cpp: %d checks failed\n", failures);
        return 1;
    }
    std::printf("test_spawn_cpp: all checks passed\n");
    return 0;
}
