/*
 * mcp_host.c - a small but real MCP host (client side) built on mcp-stdio.
 *
 * Usage: mcp_host <server-command> [args...]
 *
 * It spawns the server with pipes on its stdin/stdout (the server's stderr is
 * inherited), then runs a short MCP session:
 *
 *   -> initialize                 (waits for the response first, as MCP requires)
 *   -> notifications/initialized
 *   -> tools/list                 (checks that "echo" and "add" are offered)
 *   -> tools/call echo            (checks the text comes back unchanged)
 *   -> tools/call add 2+3         (checks the answer is "5")
 *
 * Every message sent is printed as "-> <line>" and every message received as
 * "<- <line>" on stdout. Requests from the server are answered (ping -> {},
 * roots/list -> {"roots":[]}, anything else -> -32601). Lines from the server
 * that are not valid JSON-RPC are reported on stderr and otherwise skipped.
 *
 * I/O is driven by poll(): outgoing bytes sit in a queue and are written only
 * when the server's stdin is writable, while the server's stdout is read the
 * whole time, so neither side can deadlock the other on full pipes, and every
 * wait has a deadline (RESPONSE_TIMEOUT_MS), so the host never hangs.
 *
 * At the end it closes the server's stdin (the MCP stdio way to say goodbye),
 * reads until the server's stdout reaches EOF, and reaps the child (escalating
 * to SIGTERM then SIGKILL if it does not exit).
 *
 * Exit status: 0 if every expected response arrived, passed its check, and the
 * server exited with status 0; 1 otherwise.
 */

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "mcp_stdio.h"

#define DEMO_PROG "mcp_host"
#include "demo_log.h"   /* log_msg, log_bytes */
#include "demo_json.h" /* JSpan, js_member, js_str_eq, ... */

#define PROTOCOL_VERSION "2025-06-18"
#define ECHO_TEXT "hello from mcp-stdio"
#define RESPONSE_TIMEOUT_MS 10000 /* per expected response */
#define SHUTDOWN_TIMEOUT_MS 5000  /* for the server to exit after its stdin closes */

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ------------------------------------------------------------------------ */
/* JSON navigation only the host needs (the shared part is demo_json.h)     */
/* ------------------------------------------------------------------------ */

static int js_is_array(JSpan v) { return v.p && v.n >= 2 && v.p[0] == '['; }

/* Is the raw JSON text of v exactly lit (e.g. an id "3" or the literal "true")? */
static int js_raw_eq(JSpan v, const char *lit)
{
    return v.p && v.n == strlen(lit) && memcmp(v.p, lit, v.n) == 0;
}

/* Element `index` of array arr, or JS_NONE. */
static JSpan js_index(JSpan arr, size_t index)
{
    if (!js_is_array(arr))
        return JS_NONE;
    const char *s = arr.p;
    size_t n = arr.n;
    size_t i = js_ws(s, n, 1);
    for (size_t k = 0; i < n && s[i] != ']'; k++) {
        size_t vend = js_skip_value(s, n, i);
        if (vend == JS_ERR)
            return JS_NONE;
        if (k == index)
            return (JSpan){s + i, vend - i};
        i = js_ws(s, n, vend);
        if (i >= n || s[i] != ',')
            break;
        i = js_ws(s, n, i + 1);
    }
    return JS_NONE;
}

/* ------------------------------------------------------------------------ */
/* Host state                                                               */
/* ------------------------------------------------------------------------ */

typedef struct Host Host;

/* Checks a successful result; returns 1 if it is what we expect. */
typedef int (*VerifyFn)(JSpan result);

enum { P_UNSENT, P_WAITING, P_OK, P_FAILED };

/* One request we send and the response we expect for it. */
typedef struct {
    const char *id;     /* raw JSON text of the id, e.g. "1" */
    const char *label;  /* for messages */
    const char *json;   /* the request as JSON text (any formatting) */
    VerifyFn verify;
    int state;
} Expect;

struct Host {
    pid_t pid;
    int to_server;   /* server's stdin (write end); -1 once closed */
    int from_server; /* server's stdout (read end); -1 after EOF */
    McpLineReader *reader;
    uint8_t *outq;   /* bytes queued for the server's stdin */
    size_t outq_len, outq_off, outq_cap;
    Expect *expects;
    size_t n_expects;
    int failed;      /* something went wrong that should fail the run */
    int stalled;     /* a response timed out: stop the session */
};

/* ------------------------------------------------------------------------ */
/* Sending                                                                  */
/* ------------------------------------------------------------------------ */

static void close_to_server(Host *h)
{
    if (h->to_server >= 0) {
        close(h->to_server);
        h->to_server = -1;
    }
    h->outq_len = h->outq_off = 0;
}

/* Writes as much of the queue as the pipe takes right now (non-blocking).
 * Returns 0, or -1 if the server's stdin is gone. */
static int flush_out(Host *h)
{
    while (h->to_server >= 0 && h->outq_off < h->outq_len) {
        ssize_t w = write(h->to_server, h->outq + h->outq_off, h->outq_len - h->outq_off);
        if (w > 0) {
            h->outq_off += (size_t)w;
        } else if (w < 0 && errno == EINTR) {
            continue;
        } else if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            return 0; /* poll() will tell us when there is room */
        } else {
            log_msg("cannot write to the server: %s", w < 0 ? strerror(errno) : "short write");
            close_to_server(h);
            h->failed = 1;
            return -1;
        }
    }
    if (h->outq_off == h->outq_len)
        h->outq_off = h->outq_len = 0;
    return 0;
}

/* Frames one JSON message with mcp_encode, prints it, and queues it. */
static int send_message(Host *h, const char *json, size_t len)
{
    if (h->to_server < 0) {
        log_msg("cannot send, the server's stdin is closed: %.*s", (int)len, json);
        h->failed = 1;
        return -1;
    }
    McpBuffer out = {NULL, 0};
    McpStatus st = mcp_encode((const uint8_t *)json, len, 0, &out);
    if (st != MCP_STATUS_OK) {
        log_msg("mcp_encode failed (%s) for: %.*s", mcp_status_str(st), (int)len, json);
        h->failed = 1;
        return -1;
    }
    fputs("-> ", stdout);
    fwrite(out.data, 1, out.len, stdout); /* out ends with exactly one '\n' */
    fflush(stdout);

    if (h->outq_len + out.len > h->outq_cap) {
        size_t cap = h->outq_cap ? h->outq_cap : 4096;
        while (cap < h->outq_len + out.len)
            cap *= 2;
        uint8_t *q = realloc(h->outq, cap);
        if (!q) {
            log_msg("out of memory");
            mcp_buffer_free(&out);
            h->failed = 1;
            return -1;
        }
        h->outq = q;
        h->outq_cap = cap;
    }
    memcpy(h->outq + h->outq_len, out.data, out.len);
    h->outq_len += out.len;
    mcp_buffer_free(&out);
    return flush_out(h);
}

static int send_str(Host *h, const char *json) { return send_message(h, json, strlen(json)); }

/* Sends {"jsonrpc":"2.0","id":<id>,<body>} where body is raw JSON members. */
static void reply(Host *h, JSpan id, const char *body)
{
    if (!id.p)
        return; /* cannot happen for a message classified as a request */
    size_t len = id.n + strlen(body) + 32;
    char *msg = malloc(len);
    if (!msg) {
        log_msg("out of memory");
        h->failed = 1;
        return;
    }
    int n = snprintf(msg, len, "{\"jsonrpc\":\"2.0\",\"id\":%.*s,%s}", (int)id.n, id.p, body);
    send_message(h, msg, (size_t)n);
    free(msg);
}

/* ------------------------------------------------------------------------ */
/* Receiving                                                                */
/* ------------------------------------------------------------------------ */

/* A request from the server to us. */
static void handle_server_request(Host *h, JSpan msg)
{
    JSpan method = js_member(msg, "method");
    JSpan id = js_member(msg, "id");
    if (js_str_eq(method, "ping"))
        reply(h, id, "\"result\":{}");
    else if (js_str_eq(method, "roots/list"))
        reply(h, id, "\"result\":{\"roots\":[]}");
    else
        reply(h, id, "\"error\":{\"code\":-32601,\"message\":\"Method not found\"}");
}

/* A response (result or error) from the server: match it to what we asked. */
static void handle_response(Host *h, JSpan msg, int is_error)
{
    JSpan id = js_member(msg, "id");
    Expect *e = NULL;
    for (size_t i = 0; i < h->n_expects; i++)
        if (js_raw_eq(id, h->expects[i].id))
            e = &h->expects[i];

    if (!e || e->state == P_UNSENT) {
        log_bytes("response with an id we never used", (const uint8_t *)msg.p, msg.n);
        return;
    }
    if (e->state != P_WAITING) {
        log_msg("duplicate response for %s (id %s), ignored", e->label, e->id);
        return;
    }
    if (is_error) {
        JSpan err = js_member(msg, "error");
        JSpan code = js_member(err, "code");
        JSpan text = js_member(err, "message");
        log_msg("%s failed: error %.*s %.*s", e->label, code.p ? (int)code.n : 0,
                code.p ? code.p : "", text.p ? (int)text.n : 0, text.p ? text.p : "");
        e->state = P_FAILED;
        return;
    }
    if (e->verify && !e->verify(js_member(msg, "result"))) {
        log_msg("%s: unexpected result", e->label);
        e->state = P_FAILED;
        return;
    }
    e->state = P_OK;
}

/* Handles one item from the reader. m->data is only valid until the next
 * call on the reader; nothing here calls the reader. */
static void handle_item(Host *h, const McpMessage *m)
{
    JSpan line = {(const char *)m->data, m->len};

    switch (m->kind) {
    case MCP_MESSAGE_JSON:
        fputs("<- ", stdout);
        fwrite(m->data, 1, m->len, stdout);
        fputc('\n', stdout);
        fflush(stdout);
        switch (m->rpc_kind) {
        case MCP_RPC_REQUEST:
            handle_server_request(h, line);
            break;
        case MCP_RPC_NOTIFICATION:
            break; /* e.g. notifications/message: shown above, nothing to do */
        case MCP_RPC_RESPONSE:
            handle_response(h, line, 0);
            break;
        case MCP_RPC_ERROR:
            handle_response(h, line, 1);
            break;
        case MCP_RPC_BATCH:
            log_msg("server sent a batch, which MCP 2025-06-18 does not allow; ignored");
            break;
        default:
            log_msg("unclassified message (rpc_kind %d); ignored", (int)m->rpc_kind);
            break;
        }
        break;
    case MCP_MESSAGE_PARSE_ERROR:
        log_bytes("bad line from server (not JSON)", m->data, m->len);
        break;
    case MCP_MESSAGE_INVALID_JSONRPC:
        log_bytes("bad line from server (not JSON-RPC 2.0)", m->data, m->len);
        break;
    case MCP_MESSAGE_TOO_LONG:
        log_msg("bad line from server: too long (%zu bytes), dropped", m->len);
        break;
    default:
        log_msg("unknown item kind %d from the reader", (int)m->kind);
        break;
    }
}

/* Takes every complete item out of the reader. */
static int drain(Host *h)
{
    for (;;) {
        McpMessage m;
        McpStatus st = mcp_line_reader_next_message(h->reader, &m);
        if (st == MCP_STATUS_NO_MESSAGE)
            return 0;
        if (st != MCP_STATUS_OK) {
            log_msg("mcp_line_reader_next_message: %s", mcp_status_str(st));
            h->failed = 1;
            return -1;
        }
        handle_item(h, &m);
    }
}

/* Reads what is available from the server's stdout and processes it.
 * At EOF, finishes the reader (an unterminated last line still counts). */
static int read_from_server(Host *h)
{
    static uint8_t buf[64 * 1024];
    ssize_t got = read(h->from_server, buf, sizeof buf);
    if (got < 0) {
        if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)
            return 0;
        log_msg("read from the server: %s", strerror(errno));
        got = 0; /* treat as EOF */
    }
    McpStatus st;
    if (got == 0) {
        close(h->from_server);
        h->from_server = -1;
        st = mcp_line_reader_finish(h->reader);
    } else {
        st = mcp_line_reader_feed(h->reader, buf, (size_t)got);
    }
    if (st != MCP_STATUS_OK) {
        log_msg("mcp_line_reader_%s: %s", got == 0 ? "finish" : "feed", mcp_status_str(st));
        h->failed = 1;
        return -1;
    }
    return drain(h);
}

/* One round of I/O: waits (until deadline at most) for the server's stdout to
 * be readable or, if we have queued output, its stdin to be writable.
 * Returns 1 if something happened, 0 on timeout, -1 on error. */
static int pump(Host *h, int64_t deadline)
{
    struct pollfd fds[2];
    nfds_t nfds = 0;
    int ri = -1, wi = -1;
    if (h->from_server >= 0) {
        fds[nfds] = (struct pollfd){.fd = h->from_server, .events = POLLIN};
        ri = (int)nfds++;
    }
    if (h->to_server >= 0 && h->outq_off < h->outq_len) {
        fds[nfds] = (struct pollfd){.fd = h->to_server, .events = POLLOUT};
        wi = (int)nfds++;
    }
    if (nfds == 0)
        return -1; /* nothing left to wait for */

    int64_t left = deadline - now_ms();
    if (left <= 0)
        return 0;
    int n = poll(fds, nfds, (int)left);
    if (n < 0)
        return errno == EINTR ? 1 : -1;
    if (n == 0)
        return 0;
    if (wi >= 0 && fds[wi].revents)
        flush_out(h); /* POLLERR/POLLHUP too: the write reports the error */
    if (ri >= 0 && fds[ri].revents)
        read_from_server(h);
    return 1;
}

/* Sends an expected request and waits for its response. Returns 0 if it
 * arrived and passed its check. */
static int call(Host *h, Expect *e)
{
    e->state = P_WAITING;
    if (send_str(h, e->json) != 0) {
        e->state = P_FAILED;
        return -1;
    }
    int64_t deadline = now_ms() + RESPONSE_TIMEOUT_MS;
    while (e->state == P_WAITING) {
        if (h->from_server < 0) {
            log_msg("the server closed its stdout before answering %s (id %s)", e->label, e->id);
            e->state = P_FAILED;
            break;
        }
        int r = pump(h, deadline);
        if (r == 0) {
            log_msg("timed out after %d ms waiting for the response to %s (id %s)",
                    RESPONSE_TIMEOUT_MS, e->label, e->id);
            h->stalled = 1;
            e->state = P_FAILED;
            break;
        }
        if (r < 0) {
            log_msg("poll: %s", strerror(errno));
            e->state = P_FAILED;
            break;
        }
    }
    return e->state == P_OK ? 0 : -1;
}

/* ------------------------------------------------------------------------ */
/* Checks on the results                                                    */
/* ------------------------------------------------------------------------ */

static int verify_initialize(JSpan result)
{
    JSpan version = js_member(result, "protocolVersion");
    if (!js_str_eq(version, PROTOCOL_VERSION)) {
        log_msg("server wants protocol version %.*s; this host speaks only " PROTOCOL_VERSION,
                version.p ? (int)version.n : 4, version.p ? version.p : "null");
        return 0;
    }
    if (!js_is_object(js_member(js_member(result, "capabilities"), "tools"))) {
        log_msg("server does not offer the tools capability");
        return 0;
    }
    JSpan name = js_member(js_member(result, "serverInfo"), "name");
    log_msg("connected to %.*s", name.p ? (int)name.n : 9, name.p ? name.p : "(unnamed)");
    return 1;
}

static int has_tool(JSpan tools, const char *name)
{
    JSpan t;
    for (size_t i = 0; (t = js_index(tools, i)).p; i++)
        if (js_str_eq(js_member(t, "name"), name))
            return js_is_object(js_member(t, "inputSchema"));
    return 0;
}

static int verify_tools_list(JSpan result)
{
    JSpan tools = js_member(result, "tools");
    return has_tool(tools, "echo") && has_tool(tools, "add");
}

/* A successful tool result whose first content item is text equal to want. */
static int tool_text_is(JSpan result, const char *want)
{
    if (js_raw_eq(js_member(result, "isError"), "true"))
        return 0;
    JSpan first = js_index(js_member(result, "content"), 0);
    return js_str_eq(js_member(first, "type"), "text") &&
           js_str_eq(js_member(first, "text"), want);
}

static int verify_echo(JSpan result) { return tool_text_is(result, ECHO_TEXT); }
static int verify_add(JSpan result) { return tool_text_is(result, "5"); }

/* ------------------------------------------------------------------------ */
/* Process management                                                       */
/* ------------------------------------------------------------------------ */

static void set_cloexec(int fd) { fcntl(fd, F_SETFD, fcntl(fd, F_GETFD) | FD_CLOEXEC); }

/* Starts argv[0] with pipes on its stdin and stdout. */
static int spawn_server(Host *h, char **argv)
{
    int in[2], out[2]; /* in: host -> server stdin; out: server stdout -> host */
    if (pipe(in) != 0)
        return -1;
    if (pipe(out) != 0) {
        close(in[0]);
        close(in[1]);
        return -1;
    }
    pid_t pid = fork();
    if (pid < 0) {
        close(in[0]);
        close(in[1]);
        close(out[0]);
        close(out[1]);
        return -1;
    }
    if (pid == 0) {
        /* Child: wire up stdin/stdout, restore SIGPIPE (ignored dispositions
         * survive exec), and become the server. */
        signal(SIGPIPE, SIG_DFL);
        if (dup2(in[0], STDIN_FILENO) < 0 || dup2(out[1], STDOUT_FILENO) < 0)
            _exit(127);
        int fds[4] = {in[0], in[1], out[0], out[1]};
        for (int i = 0; i < 4; i++)
            if (fds[i] > STDERR_FILENO)
                close(fds[i]);
        execvp(argv[0], argv);
        fprintf(stderr, "mcp_host: cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    set_cloexec(in[1]);
    set_cloexec(out[0]);
    /* Non-blocking writes let pump() keep reading while the pipe is full. */
    fcntl(in[1], F_SETFL, fcntl(in[1], F_GETFL) | O_NONBLOCK);
    h->pid = pid;
    h->to_server = in[1];
    h->from_server = out[0];
    return 0;
}

/* Waits up to ms for the child; returns 1 and sets *status if it exited. */
static int wait_child(pid_t pid, int ms, int *status)
{
    int64_t deadline = now_ms() + ms;
    for (;;) {
        pid_t r = waitpid(pid, status, WNOHANG);
        if (r == pid)
            return 1;
        if (r < 0 && errno != EINTR)
            return -1;
        if (now_ms() >= deadline)
            return 0;
        struct timespec ts = {0, 10 * 1000 * 1000}; /* 10 ms */
        nanosleep(&ts, NULL);
    }
}

/* Closes the server's stdin, reads its remaining output until EOF, and reaps
 * it. Returns 0 if the server exited with status 0. */
static int shutdown_server(Host *h)
{
    int64_t deadline = now_ms() + SHUTDOWN_TIMEOUT_MS;
    /* Let queued output (e.g. a last reply to a ping) go out first. */
    while (h->to_server >= 0 && h->outq_off < h->outq_len && pump(h, deadline) > 0)
        ;
    close_to_server(h);
    while (h->from_server >= 0) {
        if (pump(h, deadline) <= 0) {
            log_msg("the server did not close its stdout within %d ms", SHUTDOWN_TIMEOUT_MS);
            break;
        }
    }

    /* The same deadline covers both waiting for EOF and waiting for exit. */
    int64_t left = deadline - now_ms();
    int status = 0;
    int r = wait_child(h->pid, left > 0 ? (int)left : 0, &status);
    if (r == 0) {
        log_msg("the server did not exit; sending SIGTERM");
        kill(h->pid, SIGTERM);
        r = wait_child(h->pid, 2000, &status);
        if (r == 0) {
            log_msg("sending SIGKILL");
            kill(h->pid, SIGKILL);
            r = waitpid(h->pid, &status, 0) == h->pid ? 1 : -1;
        }
        h->failed = 1;
    }
    if (r < 0) {
        log_msg("waitpid: %s", strerror(errno));
        return -1;
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return 0;
    if (WIFEXITED(status))
        log_msg("the server exited with status %d", WEXITSTATUS(status));
    else if (WIFSIGNALED(status))
        log_msg("the server was killed by signal %d", WTERMSIG(status));
    return -1;
}

/* ------------------------------------------------------------------------ */
/* The session                                                              */
/* ------------------------------------------------------------------------ */

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s <server-command> [args...]\n", argv[0]);
        return 2;
    }
    /* A dead server must show up as EPIPE from write(), not kill the host. */
    signal(SIGPIPE, SIG_IGN);

    char init[512];
    snprintf(init, sizeof init,
             "{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"initialize\","
             " \"params\": {\"protocolVersion\": \"" PROTOCOL_VERSION "\","
             "              \"capabilities\": {\"roots\": {\"listChanged\": false}},"
             "              \"clientInfo\": {\"name\": \"mcp-stdio-demo-host\", \"version\": \"%s\"}}}",
             mcp_stdio_version());

    /* The requests (pretty-printed here on purpose: mcp_encode compacts them). */
    Expect expects[] = {
        {"1", "initialize", init, verify_initialize, P_UNSENT},
        {"2", "tools/list",
         "{\"jsonrpc\": \"2.0\", \"id\": 2, \"method\": \"tools/list\"}",
         verify_tools_list, P_UNSENT},
        {"3", "tools/call echo",
         "{\"jsonrpc\": \"2.0\", \"id\": 3, \"method\": \"tools/call\","
         " \"params\": {\"name\": \"echo\", \"arguments\": {\"text\": \"" ECHO_TEXT "\"}}}",
         verify_echo, P_UNSENT},
        {"4", "tools/call add",
         "{\"jsonrpc\": \"2.0\", \"id\": 4, \"method\": \"tools/call\","
         " \"params\": {\"name\": \"add\", \"arguments\": {\"a\": 2, \"b\": 3}}}",
         verify_add, P_UNSENT},
    };
    const size_t n_expects = sizeof expects / sizeof expects[0];

    Host h = {.to_server = -1, .from_server = -1, .expects = expects, .n_expects = n_expects};
    h.reader = mcp_line_reader_new();
    if (!h.reader) {
        log_msg("out of memory");
        return 1;
    }
    McpStatus st = mcp_line_reader_set_flags(h.reader, MCP_READER_JSONRPC);
    if (st != MCP_STATUS_OK) {
        log_msg("mcp_line_reader_set_flags: %s", mcp_status_str(st));
        mcp_line_reader_free(h.reader);
        return 1;
    }
    if (spawn_server(&h, &argv[1]) != 0) {
        log_msg("cannot start %s: %s", argv[1], strerror(errno));
        mcp_line_reader_free(h.reader);
        return 1;
    }

    /* initialize must complete before anything else is sent. */
    if (call(&h, &expects[0]) == 0) {
        if (send_str(&h, "{\"jsonrpc\": \"2.0\", \"method\": \"notifications/initialized\"}") == 0) {
            for (size_t i = 1; i < n_expects; i++) {
                call(&h, &expects[i]);
                /* After a timeout or a vanished server there is no point going on. */
                if (h.stalled || h.from_server < 0 || h.to_server < 0)
                    break;
            }
        }
    }

    if (shutdown_server(&h) != 0)
        h.failed = 1;

    size_t ok = 0;
    for (size_t i = 0; i < n_expects; i++)
        if (expects[i].state == P_OK)
            ok++;
        else
            log_msg("missing or bad: %s (id %s)", expects[i].label, expects[i].id);

    if (h.from_server >= 0)
        close(h.from_server);
    mcp_line_reader_free(h.reader);
    free(h.outq);

    int success = ok == n_expects && !h.failed;
    printf("%s: %zu/%zu expected responses received and checked\n",
           success ? "ok" : "FAILED", ok, n_expects);
    return success ? 0 : 1;
}
