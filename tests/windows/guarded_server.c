/* A server for tests/windows/test_spawn.c: opens its own stdio with the
 * stdout guard (and the header's C runtime half of it), then writes stray
 * output every way a Windows program can: printf and puts (the C runtime's
 * descriptor 1), WriteFile on GetStdHandle(STD_OUTPUT_HANDLE), and a child
 * that inherits the standard handles (cmd /c echo). None of it may reach
 * the protocol stream: the host sees it on stderr. Then it answers every
 * request with {} until its stdin ends. */
#include <stdio.h>
#include <string.h>
#include <windows.h>

#include "mcp_stdio.h"

int main(void) {
    struct McpTransport *t = NULL;
    if (mcp_transport_open_stdio(MCP_TRANSPORT_GUARD_STDOUT, &t) != MCP_STATUS_OK) return 2;
    if (mcp_stdio_crt_stdout_to_stderr() != 0) return 3;
    printf("stray printf\n");
    puts("stray puts");
    fflush(stdout);
    DWORD n;
    const char *raw = "stray WriteFile\n";
    WriteFile(GetStdHandle(STD_OUTPUT_HANDLE), raw, (DWORD)strlen(raw), &n, NULL);
    STARTUPINFOA si;
    PROCESS_INFORMATION pi;
    memset(&si, 0, sizeof si);
    si.cb = sizeof si;
    char line[] = "cmd.exe /d /c echo stray child";
    if (CreateProcessA(NULL, line, NULL, NULL, TRUE, 0, NULL, NULL, &si, &pi)) {
        WaitForSingleObject(pi.hProcess, 10000);
        CloseHandle(pi.hProcess);
        CloseHandle(pi.hThread);
    }
    for (;;) {
        struct McpEvent ev;
        McpStatus st = mcp_transport_next_event(t, -1, &ev);
        if (st != MCP_STATUS_OK || ev.kind == MCP_EVENT_CLOSED) break;
        if (ev.kind == MCP_EVENT_MESSAGE && ev.rpc_kind == MCP_RPC_REQUEST)
            mcp_transport_respond(t, ev.envelope.id.data, ev.envelope.id.len,
                                  (const uint8_t *)"{}", 2);
    }
    mcp_transport_free(t);
    return 0;
}
