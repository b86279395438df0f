/* The C face of the Windows backend, under Wine: mcp_command_* and
 * mcp_transport_spawn start tests/windows/misbehave.c (its Windows path in
 * MCP_STDIO_MISBEHAVE), a request is answered, the close ends the session
 * with the server's exit code; a program not found gives
 * MCP_STATUS_SPAWN_FAILED with GetLastError() == ERROR_FILE_NOT_FOUND; a
 * line break for a batch file is refused; an unknown flag is refused; an
 * event loop on mcp_transport_poll_handles and WaitForMultipleObjects; a
 * transport on anonymous pipes (mcp_transport_open_handles), owned and
 * borrowed; and the stdout guard of a server on its own stdio
 * (tests/windows/guarded_server.c, its path in MCP_STDIO_GUARDED_SERVER):
 * none of its stray output reaches the protocol stream. Built against the
 * DLL and the static library by scripts/windows.sh. */
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
    CHECK(mcp_transport_spawn(cmd, 1u << 30, &t) == MCP_STATUS_UNKNOWN_FLAGS);
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

/* The session of a_session, driven by an event loop: WaitForMultipleObjects
 * on the handles mcp_transport_poll_handles gives. */
static void an_event_loop(const char *server) {
    struct McpCommand *cmd = mcp_command_new(server);
    mcp_command_arg(cmd, "echo");
    struct McpTransport *t = NULL;
    CHECK(mcp_transport_spawn(cmd, 0, &t) == MCP_STATUS_OK);
    mcp_command_free(cmd);
    if (!t) return;
    void *handles[MCP_TRANSPORT_MAX_POLL_HANDLES];
    size_t n = 0;
    int32_t timeout = 0;
    CHECK(mcp_transport_poll_handles(t, handles, 0, &n, &timeout) == MCP_STATUS_INVALID_ARGUMENT);
    CHECK(n >= 1 && n <= MCP_TRANSPORT_MAX_POLL_HANDLES);
    int64_t id = 0;
    CHECK(mcp_transport_request(t, "tools/list", NULL, 0, 30000, &id) == MCP_STATUS_OK);
    int answered = 0, closed = 0, waits = 0;
    while (!closed && waits < 500) {
        struct McpEvent ev;
        McpStatus st;
        while ((st = mcp_transport_next_event(t, 0, &ev)) == MCP_STATUS_OK) {
            if (ev.kind == MCP_EVENT_RESPONSE && ev.request_id == id) {
                answered = 1;
                mcp_transport_close(t, 5000);
            }
            if (ev.kind == MCP_EVENT_CLOSED) closed = 1;
        }
        if (closed) break;
        CHECK(st == MCP_STATUS_NO_MESSAGE);
        CHECK(mcp_transport_poll_handles(t, handles, MCP_TRANSPORT_MAX_POLL_HANDLES, &n,
                                         &timeout) == MCP_STATUS_OK);
        DWORD wait = timeout < 0 ? 10000 : (DWORD)timeout;
        DWORD r = WaitForMultipleObjects((DWORD)n, (HANDLE *)handles, FALSE, wait);
        CHECK(r != WAIT_FAILED);
        waits++;
    }
    CHECK(answered);
    CHECK(closed);
    mcp_transport_free(t);
}

/* Two anonymous pipes: a transport on one end of each, the test on the
 * other ends as the peer. */
static void on_anonymous_pipes(int borrow) {
    HANDLE to_transport_r, to_transport_w, from_transport_r, from_transport_w;
    CHECK(CreatePipe(&to_transport_r, &to_transport_w, NULL, 0));
    CHECK(CreatePipe(&from_transport_r, &from_transport_w, NULL, 0));
    struct McpTransport *t = NULL;
    uint32_t flags = borrow ? MCP_TRANSPORT_BORROW_HANDLES : 0;
    CHECK(mcp_transport_open_handles(NULL, from_transport_w, flags, &t) ==
          MCP_STATUS_INVALID_ARGUMENT);
    CHECK(mcp_transport_open_handles(to_transport_r, from_transport_w, flags, &t) == MCP_STATUS_OK);
    if (!t) return;
    const char *line = "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\"}\n";
    DWORD n = 0;
    CHECK(WriteFile(to_transport_w, line, (DWORD)strlen(line), &n, NULL));
    struct McpEvent ev;
    CHECK(next_event(t, &ev) == MCP_STATUS_OK);
    CHECK(ev.kind == MCP_EVENT_MESSAGE && ev.rpc_kind == MCP_RPC_REQUEST);
    CHECK(mcp_transport_respond(t, (const uint8_t *)"7", 1, (const uint8_t *)"{}", 2) ==
          MCP_STATUS_OK);
    /* The answer goes out while the transport is driven. */
    char got[256] = {0};
    DWORD have = 0;
    for (int i = 0; i < 100 && have == 0; i++) {
        mcp_transport_next_event(t, 50, &ev);
        DWORD avail = 0;
        if (PeekNamedPipe(from_transport_r, NULL, 0, NULL, &avail, NULL) && avail > 0)
            ReadFile(from_transport_r, got, sizeof got - 1, &have, NULL);
    }
    CHECK(strcmp(got, "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}\n") == 0);
    /* The peer's end closes the transport. */
    CloseHandle(to_transport_w);
    int closed = 0;
    for (int i = 0; i < 100 && !closed; i++)
        if (mcp_transport_next_event(t, 100, &ev) == MCP_STATUS_OK && ev.kind == MCP_EVENT_CLOSED)
            closed = 1;
    CHECK(closed);
    mcp_transport_free(t);
    if (borrow) {
        /* Still the caller's: open until closed here. */
        CHECK(CloseHandle(to_transport_r));
        CHECK(CloseHandle(from_transport_w));
    }
    CloseHandle(from_transport_r);
}

static void the_stdout_guard(const char *guarded) {
    struct McpCommand *cmd = mcp_command_new(guarded);
    mcp_command_env_mode(cmd, MCP_ENV_INHERIT);
    struct McpTransport *t = NULL;
    CHECK(mcp_transport_spawn(cmd, 0, &t) == MCP_STATUS_OK);
    mcp_command_free(cmd);
    if (!t) return;
    int64_t id = 0;
    CHECK(mcp_transport_request(t, "tools/list", NULL, 0, 30000, &id) == MCP_STATUS_OK);
    int answered = 0, closed = 0, invalid = 0, strays = 0;
    for (int i = 0; i < 300 && !closed; i++) {
        struct McpEvent ev;
        McpStatus st = mcp_transport_next_event(t, 100, &ev);
        if (st != MCP_STATUS_OK) continue;
        if (ev.kind == MCP_EVENT_INVALID) invalid++;
        if (ev.kind == MCP_EVENT_STDERR && ev.len >= 5 && memcmp(ev.data, "stray", 5) == 0) strays++;
        if (ev.kind == MCP_EVENT_RESPONSE && ev.request_id == id) {
            answered = 1;
            mcp_transport_close(t, 5000);
        }
        if (ev.kind == MCP_EVENT_CLOSED) {
            closed = 1;
            CHECK(ev.exit_code == 0);
        }
    }
    CHECK(answered);
    CHECK(closed);
    CHECK(invalid == 0); /* nothing but JSON-RPC on the protocol stream */
    if (strays != 4) fprintf(stderr, "stray lines on stderr: %d of 4\n", strays);
    CHECK(strays == 4); /* printf, puts, WriteFile, the child: all on stderr */
    mcp_transport_free(t);
}

int main(void) {
    const char *server = getenv("MCP_STDIO_MISBEHAVE");
    if (!server || !*server) {
        fprintf(stderr, "MCP_STDIO_MISBEHAVE is not set (scripts/windows.sh sets it)\n");
        return 1;
    }
    const char *guarded = getenv("MCP_STDIO_GUARDED_SERVER");
    if (!guarded || !*guarded) {
        fprintf(stderr, "MCP_STDIO_GUARDED_SERVER is not set (scripts/windows.sh sets it)\n");
        return 1;
    }
    a_session(server);
    not_found();
    a_line_break_for_a_batch_file();
    an_event_loop(server);
    on_anonymous_pipes(0);
    on_anonymous_pipes(1);
    the_stdout_guard(guarded);
    if (failures) {
        printf("test_spawn: %d checks failed\n", failures);
        return 1;
    }
    printf("test_spawn: all checks passed\n");
    return 0;
}
