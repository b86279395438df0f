/* The C face of the Windows backend, under Wine: mcp_command_* and
 * mcp_transport_spawn start tests/windows/misbehave.c (its Windows path in
 * MCP_STDIO_MISBEHAVE), a request is answered, the close ends the session
 * with the server's exit code; a program not found gives
 * MCP_STATUS_SPAWN_FAILED with GetLastError() == ERROR_FILE_NOT_FOUND; a
 * line break for a batch file is refused; an unknown flag is refused. Built
 * against the DLL and the static library by scripts/windows.sh. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <windows.h>

#include "mcp_stdio.h"

static int failures = 0;
#define CHECK(cond)                                                      \
    do {                                                                 \
        if (!(cond)) {                                                   \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
            failures++;                                                  \
        }                                                                \
    } while (0)

/* The next event that is not a stderr line, within 30 s. */
static McpStatus next_event(struct McpTransport *t, struct McpEvent *ev) {
    for (int i = 0; i < 300; i++) {
        McpStatus st = mcp_transport_next_event(t, 100, ev);
        if (st == MCP_STATUS_NO_MESSAGE) continue;
        if (st == MCP_STATUS_OK && ev->kind == MCP_EVENT_STDERR) continue;
        return st;
    }
    return MCP_STATUS_NO_MESSAGE;
}

static void a_session(const char *server) {
    struct McpCommand *cmd = mcp_command_new(server);
    CHECK(cmd != NULL);
    CHECK(mcp_command_arg(cmd, "echo") == MCP_STATUS_OK);
    struct McpTransport *t = NULL;
    McpStatus st = mcp_transport_spawn(cmd, 0, &t);
    CHECK(st == MCP_STATUS_OK);
    if (st != MCP_STATUS_OK) {
        fprintf(stderr, "spawn: %s (GetLastError %lu)\n", mcp_status_str(st), GetLastError());
        mcp_command_free(cmd);
        return;
    }
    CHECK(mcp_transport_pid(t) > 0);
    int64_t id = 0;
    CHECK(mcp_transport_request(t, "tools/list", NULL, 0, 30000, &id) == MCP_STATUS_OK);
    struct McpEvent ev;
    CHECK(next_event(t, &ev) == MCP_STATUS_OK);
    CHECK(ev.kind == MCP_EVENT_RESPONSE && ev.request_id == id);
    CHECK(mcp_transport_close(t, 5000) == MCP_STATUS_OK);
    int closed = 0;
    for (int i = 0; i < 100 && !closed; i++) {
        st = next_event(t, &ev);
        if (st == MCP_STATUS_OK && ev.kind == MCP_EVENT_CLOSED) {
            closed = 1;
            CHECK(ev.exit_code == 0);
            CHECK(ev.term_signal == 0);
        }
    }
    CHECK(closed);
    mcp_transport_free(t);
    /* The same command again: a restart. */
    CHECK(mcp_transport_spawn(cmd, 0, &t) == MCP_STATUS_OK);
    mcp_transport_free(t); /* closes with a 2 s grace; the server exits at once */
    mcp_command_free(cmd);
}

static void not_found(void) {
    struct McpCommand *cmd = mcp_command_new("Z:\\no\\such\\server-anywhere.exe");
    struct McpTransport *t = NULL;
    McpStatus st = mcp_transport_spawn(cmd, 0, &t);
    DWORD why = GetLastError();
    CHECK(st == MCP_STATUS_SPAWN_FAILED);
    CHECK(why == ERROR_FILE_NOT_FOUND);
    CHECK(t == NULL);
    /* Linux's flag means nothing here. */
    CHECK(mcp_transport_spawn(cmd, MCP_TRANSPORT_KILL_ON_HOST_EXIT, &t) ==
          MCP_STATUS_INVALID_ARGUMENT);
    CHECK(mcp_transport_spawn(cmd, 1u << 30, &t) == MCP_STATUS_INVALID_ARGUMENT);
    mcp_command_free(cmd);
}

static void a_line_break_for_a_batch_file(void) {
    char dir[MAX_PATH], script[MAX_PATH + 16];
    GetTempPathA(MAX_PATH, dir);
    snprintf(script, sizeof script, "%smcp-stdio-c.cmd", dir);
    FILE *f = fopen(script, "wb");
    CHECK(f != NULL);
    if (!f) return;
    fputs("@exit 0\r\n", f);
    fclose(f);
    struct McpCommand *cmd = mcp_command_new(script);
    CHECK(mcp_command_arg(cmd, "one\r\necho two") == MCP_STATUS_OK);
    struct McpTransport *t = NULL;
    CHECK(mcp_transport_spawn(cmd, 0, &t) == MCP_STATUS_INVALID_ARGUMENT);
    mcp_command_free(cmd);
    DeleteFileA(script);
}

int main(void) {
    const char *server = getenv("MCP_STDIO_MISBEHAVE");
    if (!server || !*server) {
        fprintf(stderr, "MCP_STDIO_MISBEHAVE is not set (scripts/windows.sh sets it)\n");
        return 1;
    }
    a_session(server);
    not_found();
    a_line_break_for_a_batch_file();
    if (failures) {
        printf("test_spawn: %d checks failed\n", failures);
        return 1;
    }
    printf("test_spawn: all checks passed\n");
    return 0;
}
