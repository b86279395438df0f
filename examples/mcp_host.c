/*
 * mcp_host.c - a small but real MCP host (client side) built on mcp-stdio.
 *
 * Usage:
 *   mcp_host [options] [--] <server-command> [args...]
 *
 * Options (each may be repeated where it says so):
 *   --call TOOL JSON_ARGS     call a tool (repeatable); JSON_ARGS is a JSON object
 *   --read-resource URI       read a resource (repeatable)
 *   --expect-tool NAME        tools/list must offer NAME (repeatable)
 *   --expect-text SUBSTRING   some tool or resource text must contain it (repeatable)
 *   --timeout SEC             how long to wait for each response (default 10)
 *   --max-line BYTES          longest line accepted from the server (default 64 MiB)
 *   --protocol-version V      the version asked for in initialize (default 2025-06-18)
 *   --shutdown-timeout SEC    how long the server has to exit after its stdin
 *                             closes before SIGTERM (default 5)
 *   --allow-kill              a server that has to be stopped with a signal is
 *                             not a failure (the spec's shutdown sequence allows
 *                             SIGTERM; some SDK servers never exit on their own)
 *
 * Without any of --call, --read-resource, --expect-tool, --expect-text it runs
 * the demo session against examples/mcp_server.c: it expects the tools "echo"
 * and "add", calls echo (the text must come back unchanged) and add 2+3 (the
 * answer must be "5").
 *
 * The server is started with pipes on its stdin, stdout and stderr. One poll()
 * loop drives all three: outgoing bytes sit in a queue and are written only
 * when the server's stdin is writable, while its stdout (the protocol) and its
 * stderr (forwarded to our stderr, each line prefixed "mcp_host: [server] ")
 * are read the whole time, so a server that writes a lot to either cannot
 * deadlock us, and every wait has a deadline, so the host never hangs.
 *
 * The session:
 *   -> initialize                 (waits for the response first, as MCP requires)
 *   -> notifications/initialized
 *   -> tools/list                 (all pages, following nextCursor)
 *   -> tools/call ...             (each --call, in order)
 *   -> resources/read ...         (each --read-resource, in order)
 * Requests from the server are answered whenever they arrive (ping -> {},
 * roots/list -> {"roots":[]}, anything else -> -32601 Method not found).
 * Lines from the server that are not JSON, not JSON-RPC 2.0, or longer than
 * the limit are reported on stderr and skipped; the session goes on.
 *
 * Output on stdout, one item per line (a test can check it):
 *   -> <line>       every message sent
 *   <- <line>       every message received, exactly as received (trimmed)
 *   tool: <name>    each tool in tools/list
 *   text: <text>    each text content of a tools/call result and each text of
 *                   a resources/read result, decoded from JSON, with "\" written
 *                   "\\", newline "\n", CR "\r", tab "\t" and any other control
 *                   character "\xNN", so that it stays on one line; UTF-8 as is
 *   ok: N/M ... or FAILED: N/M ...   the summary, last
 * Diagnostics go to stderr.
 *
 * At the end it closes the server's stdin (the MCP stdio way to say goodbye),
 * keeps reading its stdout and stderr, and waits for it to exit, escalating to
 * SIGTERM and then SIGKILL (to its process group) if it does not. A request
 * the server sends after that cannot be answered any more; it is only logged.
 *
 * Exit status: 0 if every request got a successful response that passed its
 * checks (a tool result with isError true fails), every expectation was met,
 * and the server exited by itself with status 0 (or, with --allow-kill, was
 * stopped by a signal); 1 otherwise; 2 for bad usage.
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
#include "demo_json.h" /* JSpan, js_member, js_str_eq, js_array_next, ... */

#define DEFAULT_PROTOCOL_VERSION "2025-06-18"
#define DEMO_ECHO_TEXT "hello from mcp-stdio"
#define DEFAULT_TIMEOUT_MS 10000  /* per expected response */
#define SHUTDOWN_TIMEOUT_MS 5000  /* default, for the server to exit after its stdin closes */
#define TERM_TIMEOUT_MS 2000      /* for the server to exit after SIGTERM */
#define PIPES_AFTER_EXIT_MS 500   /* output still arriving after the server exited */
#define MAX_LIST_PAGES 100        /* tools/list pages followed */
#define STDERR_LINE_MAX 4096      /* a longer server stderr line is forwarded in pieces */

/* Protocol versions this host can work with (the features it uses are in all). */
static const char *const SUPPORTED_VERSIONS[] = {"2025-11-25", "2025-06-18", "2025-03-26",
                                                 "2024-11-05"};

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* ------------------------------------------------------------------------ */
/* Growable byte buffer                                                     */
/* ------------------------------------------------------------------------ */

typedef struct {
    char *p;
    size_t len, cap;
} Buf;

/* Appends n bytes; returns 0, or -1 if out of memory (buffer unchanged). */
static int buf_put(Buf *b, const char *s, size_t n)
{
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n)
            cap *= 2;
        char *p = realloc(b->p, cap);
        if (!p)
            return -1;
        b->p = p;
        b->cap = cap;
    }
    if (n)
        memcpy(b->p + b->len, s, n);
    b->len += n;
    return 0;
}

static int buf_puts(Buf *b, const char *s) { return buf_put(b, s, strlen(s)); }

/* Appends a C string as a JSON string literal (quoted and escaped). */
static int buf_json_string(Buf *b, const char *s)
{
    int rc = buf_puts(b, "\"");
    for (; *s && rc == 0; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') {
            char esc[2] = {'\\', (char)c};
            rc = buf_put(b, esc, 2);
        } else if (c < 0x20) {
            char esc[8];
            snprintf(esc, sizeof esc, "\\u%04x", c);
            rc = buf_puts(b, esc);
        } else {
            rc = buf_put(b, (const char *)&c, 1);
        }
    }
    return rc ? rc : buf_puts(b, "\"");
}

static void buf_free(Buf *b)
{
    free(b->p);
    b->p = NULL;
    b->len = b->cap = 0;
}

/* ------------------------------------------------------------------------ */
/* Configuration                                                            */
/* ------------------------------------------------------------------------ */

typedef struct {
    const char *tool;
    const char *args;  /* a JSON object */
    const char *exact; /* if not NULL: the first text content must be exactly this */
} Call;

typedef struct {
    const char *text;
    int found;
} Expectation;

typedef struct {
    Call *calls;
    size_t n_calls;
    const char **resources;
    size_t n_resources;
    Expectation *tools; /* --expect-tool */
    size_t n_tools;
    Expectation *texts; /* --expect-text */
    size_t n_texts;
    int64_t timeout_ms;
    size_t max_line;
    const char *protocol_version;
    int64_t shutdown_ms;
    int allow_kill;
    char **command;
} Config;

/* ------------------------------------------------------------------------ */
/* Host state                                                               */
/* ------------------------------------------------------------------------ */

typedef struct {
    const Config *cfg;
    pid_t pid;
    int to_server;   /* server's stdin (write end); -1 once closed */
    int from_server; /* server's stdout (read end); -1 after EOF */
    int err_server;  /* server's stderr (read end); -1 after EOF */
    McpLineReader *reader;
    Buf outq;        /* bytes queued for the server's stdin */
    size_t outq_off; /* how much of outq is written */
    Buf errline;     /* the server's current stderr line */

    long long next_id;
    long long waiting_id; /* the request we wait for, or -1 */
    Buf response;         /* its response, copied out of the reader */
    int have_response;

    size_t steps_ok; /* steps of the session that succeeded, for the summary */
    int failed;                   /* something went wrong that should fail the run */
    int stalled;                  /* a response timed out or the server vanished */
} Host;

/* ------------------------------------------------------------------------ */
/* Sending                                                                  */
/* ------------------------------------------------------------------------ */

static void close_to_server(Host *h)
{
    if (h->to_server >= 0) {
        close(h->to_server);
        h->to_server = -1;
    }
    h->outq.len = h->outq_off = 0;
}

/* Writes as much of the queue as the pipe takes right now (non-blocking).
 * Returns 0, or -1 if the server's stdin is gone. */
static int flush_out(Host *h)
{
    while (h->to_server >= 0 && h->outq_off < h->outq.len) {
        ssize_t w = write(h->to_server, h->outq.p + h->outq_off, h->outq.len - h->outq_off);
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
    if (h->outq_off == h->outq.len)
        h->outq_off = h->outq.len = 0;
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

    int rc = buf_put(&h->outq, (const char *)out.data, out.len);
    mcp_buffer_free(&out);
    if (rc != 0) {
        log_msg("out of memory");
        h->failed = 1;
        return -1;
    }
    return flush_out(h);
}

static int send_str(Host *h, const char *json) { return send_message(h, json, strlen(json)); }

/* Sends {"jsonrpc":"2.0","id":<id>,<body>} where body is raw JSON members. */
static void reply(Host *h, JSpan id, const char *body)
{
    if (h->to_server < 0) {
        log_bytes("the server's stdin is closed, cannot answer", (const uint8_t *)body, strlen(body));
        return;
    }
    Buf b = {0};
    if (buf_puts(&b, "{\"jsonrpc\":\"2.0\",\"id\":") || buf_put(&b, id.p, id.n) ||
        buf_puts(&b, ",") || buf_puts(&b, body) || buf_puts(&b, "}")) {
        log_msg("out of memory");
        h->failed = 1;
    } else {
        send_message(h, b.p, b.len);
    }
    buf_free(&b);
}

/* ------------------------------------------------------------------------ */
/* Receiving                                                                */
/* ------------------------------------------------------------------------ */

/* A request from the server to us. */
static void handle_server_request(Host *h, JSpan msg)
{
    JSpan method = js_member(msg, "method");
    JSpan id = js_member(msg, "id");
    if (js_str_eq(method, "ping")) {
        reply(h, id, "\"result\":{}");
    } else if (js_str_eq(method, "roots/list")) {
        reply(h, id, "\"result\":{\"roots\":[]}");
    } else {
        log_msg("answering the server's request %.*s with -32601 Method not found",
                method.p ? (int)method.n : 4, method.p ? method.p : "null");
        reply(h, id, "\"error\":{\"code\":-32601,\"message\":\"Method not found\"}");
    }
}

/* A response (result or error) from the server: keep it if it is the one we wait for. */
static void handle_response(Host *h, JSpan msg)
{
    char want[32];
    snprintf(want, sizeof want, "%lld", h->waiting_id);
    JSpan id = js_member(msg, "id");
    if (h->waiting_id < 0 || h->have_response || !js_raw_eq(id, want)) {
        log_bytes("response with an id we are not waiting for, ignored", (const uint8_t *)msg.p,
                  msg.n);
        return;
    }
    h->response.len = 0;
    if (buf_put(&h->response, msg.p, msg.n) != 0) {
        log_msg("out of memory for a response of %zu bytes", msg.n);
        h->failed = 1;
        return;
    }
    h->have_response = 1;
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
        case MCP_RPC_ERROR:
            handle_response(h, line);
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
        log_bytes("bad line from server (not JSON), skipped", m->data, m->len);
        break;
    case MCP_MESSAGE_INVALID_JSONRPC:
        log_bytes("bad line from server (not JSON-RPC 2.0), skipped", m->data, m->len);
        break;
    case MCP_MESSAGE_TOO_LONG:
        log_msg("bad line from server: too long (more than %zu bytes; %zu received), skipped",
                h->cfg->max_line, m->len);
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

/* Reads what is available from the server's stdout (one read, straight into
 * the reader) and processes it. At EOF, finishes the reader (an unterminated
 * last line still counts). */
static void read_from_server(Host *h)
{
    McpStatus st = mcp_line_reader_read_fd(h->reader, h->from_server, NULL);
    if (st == MCP_STATUS_WOULD_BLOCK)
        return;
    if (st == MCP_STATUS_IO_ERROR)
        log_msg("read from the server: %s", strerror(errno));
    if (st == MCP_STATUS_END_OF_STREAM || st == MCP_STATUS_IO_ERROR) {
        close(h->from_server);
        h->from_server = -1;
        st = mcp_line_reader_finish(h->reader);
        if (st != MCP_STATUS_OK) {
            log_msg("mcp_line_reader_finish: %s", mcp_status_str(st));
            h->failed = 1;
            return;
        }
    } else if (st != MCP_STATUS_OK) {
        log_msg("mcp_line_reader_read_fd: %s", mcp_status_str(st));
        h->failed = 1;
        return;
    }
    drain(h);
}

static uint8_t err_buf[64 * 1024];

/* Forwards the server's current stderr line (if any) to our stderr, prefixed. */
static void flush_errline(Host *h)
{
    if (h->errline.len == 0)
        return;
    fflush(stdout);
    fprintf(stderr, DEMO_PROG ": [server] %.*s\n", (int)h->errline.len, h->errline.p);
    h->errline.len = 0;
}

/* Reads what is available from the server's stderr and forwards whole lines. */
static void read_server_stderr(Host *h)
{
    ssize_t got = read(h->err_server, err_buf, sizeof err_buf);
    if (got < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK))
        return;
    if (got <= 0) {
        flush_errline(h);
        close(h->err_server);
        h->err_server = -1;
        return;
    }
    for (ssize_t i = 0; i < got; i++) {
        char c = (char)err_buf[i];
        if (c == '\n') {
            flush_errline(h);
            continue;
        }
        if (h->errline.len >= STDERR_LINE_MAX)
            flush_errline(h);
        buf_put(&h->errline, &c, 1); /* only the first growths can fail (out of memory) */
    }
}

/* One round of I/O: waits (until deadline at most) for the server's stdout
 * or stderr to be readable or, if we have queued output, its stdin to be
 * writable. Returns 1 if something happened, 0 on timeout, -1 if there is
 * nothing left to wait for or poll failed. */
static int pump(Host *h, int64_t deadline)
{
    struct pollfd fds[3];
    nfds_t nfds = 0;
    int ri = -1, ei = -1, wi = -1;
    if (h->from_server >= 0) {
        fds[nfds] = (struct pollfd){.fd = h->from_server, .events = POLLIN};
        ri = (int)nfds++;
    }
    if (h->err_server >= 0) {
        fds[nfds] = (struct pollfd){.fd = h->err_server, .events = POLLIN};
        ei = (int)nfds++;
    }
    if (h->to_server >= 0 && h->outq_off < h->outq.len) {
        fds[nfds] = (struct pollfd){.fd = h->to_server, .events = POLLOUT};
        wi = (int)nfds++;
    }
    if (nfds == 0)
        return -1;

    int64_t left = deadline - now_ms();
    if (left <= 0)
        return 0;
    int n = poll(fds, nfds, left > 60000 ? 60000 : (int)left);
    if (n < 0)
        return errno == EINTR ? 1 : -1;
    if (n == 0)
        return now_ms() >= deadline ? 0 : 1;
    if (wi >= 0 && fds[wi].revents)
        flush_out(h); /* POLLERR/POLLHUP too: the write reports the error */
    if (ei >= 0 && fds[ei].revents)
        read_server_stderr(h);
    if (ri >= 0 && fds[ri].revents)
        read_from_server(h);
    return 1;
}

/*
 * Sends a request and waits for its response. params is raw JSON or NULL.
 * Returns 1 with the response in h->response (a result), 0 if the server
 * answered with an error (logged), or -1 if no response came (timeout, the
 * server went away) - then the session cannot go on (h->stalled).
 */
static int request(Host *h, const char *method, const char *params, size_t params_len)
{
    long long id = h->next_id++;
    Buf b = {0};
    char head[64];
    snprintf(head, sizeof head, "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"method\":", id);
    int oom = buf_puts(&b, head) || buf_json_string(&b, method);
    if (params)
        oom = oom || buf_puts(&b, ",\"params\":") || buf_put(&b, params, params_len);
    oom = oom || buf_puts(&b, "}");
    h->waiting_id = id;
    h->have_response = 0;
    int sent = !oom && send_message(h, b.p, b.len) == 0;
    buf_free(&b);
    if (!sent) {
        h->failed = h->stalled = 1;
        h->waiting_id = -1;
        return -1;
    }

    int64_t deadline = now_ms() + h->cfg->timeout_ms;
    while (!h->have_response) {
        if (h->from_server < 0) {
            log_msg("the server closed its stdout before answering %s (id %lld)", method, id);
            break;
        }
        int r = pump(h, deadline);
        if (r == 0) {
            log_msg("timed out after %lld ms waiting for the response to %s (id %lld)",
                    (long long)h->cfg->timeout_ms, method, id);
            break;
        }
        if (r < 0) {
            log_msg("poll: %s", strerror(errno));
            break;
        }
    }
    h->waiting_id = -1;
    if (!h->have_response) {
        h->failed = h->stalled = 1;
        return -1;
    }
    JSpan msg = {h->response.p, h->response.len};
    JSpan err = js_member(msg, "error");
    if (err.p) {
        JSpan code = js_member(err, "code");
        JSpan text = js_member(err, "message");
        log_msg("%s (id %lld) failed: error %.*s %.*s", method, id, code.p ? (int)code.n : 0,
                code.p ? code.p : "", text.p ? (int)text.n : 0, text.p ? text.p : "");
        h->failed = 1;
        return 0;
    }
    return 1;
}

/* The result member of the response just received. */
static JSpan response_result(const Host *h)
{
    JSpan msg = {h->response.p, h->response.len};
    return js_member(msg, "result");
}

/* ------------------------------------------------------------------------ */
/* Printing and checking what the server returned                           */
/* ------------------------------------------------------------------------ */

/* Prints "<label>: <bytes>" on one line, escaping "\" and control characters. */
static void print_escaped_line(const char *label, const char *s, size_t n)
{
    fputs(label, stdout);
    fputs(": ", stdout);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        switch (c) {
        case '\\': fputs("\\\\", stdout); break;
        case '\n': fputs("\\n", stdout); break;
        case '\r': fputs("\\r", stdout); break;
        case '\t': fputs("\\t", stdout); break;
        default:
            if (c < 0x20 || c == 0x7f)
                printf("\\x%02x", c);
            else
                putchar(c);
        }
    }
    putchar('\n');
    fflush(stdout);
}

static int contains(const char *hay, size_t n, const char *needle)
{
    size_t m = strlen(needle);
    if (m == 0)
        return 1;
    for (size_t i = 0; i + m <= n; i++)
        if (hay[i] == needle[0] && memcmp(hay + i, needle, m) == 0)
            return 1;
    return 0;
}

/*
 * Decodes the JSON string v, prints it as "<label>: ..." and checks it against
 * the --expect-text expectations and, if exact is not NULL, compares it with
 * exact. Returns 1 if it matched exact (or exact is NULL), 0 otherwise.
 */
static int take_text(Host *h, const char *label, JSpan v, const char *exact)
{
    char *text = malloc(v.n ? v.n : 1);
    if (!text) {
        log_msg("out of memory for a text of %zu bytes", v.n);
        h->failed = 1;
        return 0;
    }
    size_t n = js_str_decode(v, text);
    if (n == JS_ERR) {
        log_msg("%s is not a string", label);
        free(text);
        return 0;
    }
    print_escaped_line(label, text, n);
    const Config *cfg = h->cfg;
    for (size_t i = 0; i < cfg->n_texts; i++)
        if (!cfg->texts[i].found && contains(text, n, cfg->texts[i].text))
            cfg->texts[i].found = 1;
    int ok = !exact || (n == strlen(exact) && memcmp(text, exact, n) == 0);
    if (!ok)
        log_msg("expected the text %s", exact);
    free(text);
    return ok;
}

/* ------------------------------------------------------------------------ */
/* The steps of the session                                                 */
/* ------------------------------------------------------------------------ */

static int is_supported_version(JSpan v)
{
    for (size_t i = 0; i < sizeof SUPPORTED_VERSIONS / sizeof SUPPORTED_VERSIONS[0]; i++)
        if (js_str_eq(v, SUPPORTED_VERSIONS[i]))
            return 1;
    return 0;
}

/* The end of a step of the session: counts it when it went well, marks the
 * session failed otherwise. Returns 0 or -1, what the step returns. */
static int step_end(Host *h, int ok)
{
    if (!ok) {
        h->failed = 1;
        return -1;
    }
    h->steps_ok++;
    return 0;
}

/* initialize; sets *has_tools and *has_resources from the server's capabilities.
 * Returns 0 on success. */
static int do_initialize(Host *h, int *has_tools, int *has_resources)
{
    Buf params = {0};
    int oom = buf_puts(&params, "{\"protocolVersion\":") ||
              buf_json_string(&params, h->cfg->protocol_version) ||
              buf_puts(&params, ",\"capabilities\":{\"roots\":{\"listChanged\":false}},"
                                "\"clientInfo\":{\"name\":\"mcp-stdio-demo-host\",\"version\":") ||
              buf_json_string(&params, mcp_stdio_version()) || buf_puts(&params, "}}");
    int r = oom ? -1 : request(h, "initialize", params.p, params.len);
    buf_free(&params);
    if (r != 1)
        return -1;

    JSpan result = response_result(h);
    JSpan version = js_member(result, "protocolVersion");
    if (!is_supported_version(version)) {
        log_msg("the server wants protocol version %.*s, which this host does not speak",
                version.p ? (int)version.n : 4, version.p ? version.p : "null");
        return step_end(h, 0);
    }
    JSpan caps = js_member(result, "capabilities");
    *has_tools = js_is_object(js_member(caps, "tools"));
    *has_resources = js_is_object(js_member(caps, "resources"));
    JSpan info = js_member(result, "serverInfo");
    JSpan name = js_member(info, "name");
    JSpan sversion = js_member(info, "version");
    log_msg("connected to %.*s %.*s, protocol %.*s", name.p ? (int)name.n : 9,
            name.p ? name.p : "(unnamed)", sversion.p ? (int)sversion.n : 0,
            sversion.p ? sversion.p : "", (int)version.n, version.p);
    return step_end(h, 1);
}

/* tools/list, every page. Returns 0 if it worked and the expected tools are there. */
static int do_tools_list(Host *h)
{
    const Config *cfg = h->cfg;
    char *cursor = NULL; /* raw JSON string of the next page's cursor */
    int ok = 1;
    for (int page = 0; page < MAX_LIST_PAGES; page++) {
        Buf params = {0};
        int r;
        if (cursor) {
            int oom = buf_puts(&params, "{\"cursor\":") || buf_puts(&params, cursor) ||
                      buf_puts(&params, "}");
            r = oom ? -1 : request(h, "tools/list", params.p, params.len);
        } else {
            r = request(h, "tools/list", NULL, 0);
        }
        buf_free(&params);
        free(cursor);
        cursor = NULL;
        if (r != 1)
            return -1;

        JSpan result = response_result(h);
        JSpan tools = js_member(result, "tools");
        if (!js_is_array(tools)) {
            log_msg("tools/list: the result has no tools array");
            return step_end(h, 0);
        }
        size_t pos = 0;
        JSpan tool;
        while (js_array_next(tools, &pos, &tool)) {
            JSpan name = js_member(tool, "name");
            if (!js_is_string(name) || !js_is_object(js_member(tool, "inputSchema"))) {
                log_bytes("tools/list: a tool without a name or an inputSchema", (const uint8_t *)tool.p,
                          tool.n);
                ok = 0;
                continue;
            }
            char *s = malloc(name.n);
            if (!s)
                continue;
            size_t n = js_str_decode(name, s);
            print_escaped_line("tool", s, n);
            for (size_t i = 0; i < cfg->n_tools; i++)
                if (strlen(cfg->tools[i].text) == n && memcmp(cfg->tools[i].text, s, n) == 0)
                    cfg->tools[i].found = 1;
            free(s);
        }
        JSpan next = js_member(result, "nextCursor");
        if (!js_is_string(next))
            break;
        cursor = malloc(next.n + 1);
        if (!cursor)
            break;
        memcpy(cursor, next.p, next.n);
        cursor[next.n] = '\0';
    }
    free(cursor);
    for (size_t i = 0; i < cfg->n_tools; i++)
        if (!cfg->tools[i].found) {
            log_msg("tools/list does not offer the tool %s", cfg->tools[i].text);
            ok = 0;
        }
    return step_end(h, ok);
}

/* tools/call; prints the content. Returns 0 if the call succeeded and passed its check. */
static int do_tools_call(Host *h, const Call *c)
{
    Buf params = {0};
    int oom = buf_puts(&params, "{\"name\":") || buf_json_string(&params, c->tool) ||
              buf_puts(&params, ",\"arguments\":") || buf_puts(&params, c->args) ||
              buf_puts(&params, "}");
    int r = oom ? -1 : request(h, "tools/call", params.p, params.len);
    buf_free(&params);
    if (r != 1)
        return -1;

    JSpan result = response_result(h);
    JSpan content = js_member(result, "content");
    if (!js_is_array(content)) {
        log_msg("tools/call %s: the result has no content array", c->tool);
        return step_end(h, 0);
    }
    int ok = 1, first = 1;
    size_t pos = 0;
    JSpan item;
    while (js_array_next(content, &pos, &item)) {
        JSpan type = js_member(item, "type");
        if (js_str_eq(type, "text")) {
            ok &= take_text(h, "text", js_member(item, "text"), first ? c->exact : NULL);
        } else {
            print_escaped_line("content", type.p ? type.p : "null", type.p ? type.n : 4);
            if (first && c->exact)
                ok = 0;
        }
        first = 0;
    }
    if (first && c->exact) {
        log_msg("tools/call %s: empty content", c->tool);
        ok = 0;
    }
    if (js_raw_eq(js_member(result, "isError"), "true")) {
        log_msg("tools/call %s: the tool reported an error (isError true)", c->tool);
        ok = 0;
    }
    return step_end(h, ok);
}

/* resources/read; prints the contents. Returns 0 if it worked. */
static int do_resources_read(Host *h, const char *uri)
{
    Buf params = {0};
    int oom = buf_puts(&params, "{\"uri\":") || buf_json_string(&params, uri) ||
              buf_puts(&params, "}");
    int r = oom ? -1 : request(h, "resources/read", params.p, params.len);
    buf_free(&params);
    if (r != 1)
        return -1;

    JSpan contents = js_member(response_result(h), "contents");
    if (!js_is_array(contents)) {
        log_msg("resources/read %s: the result has no contents array", uri);
        return step_end(h, 0);
    }
    size_t pos = 0;
    JSpan item;
    while (js_array_next(contents, &pos, &item)) {
        JSpan text = js_member(item, "text");
        JSpan blob = js_member(item, "blob");
        if (text.p) {
            take_text(h, "text", text, NULL);
        } else if (js_is_string(blob)) {
            char note[64];
            int n = snprintf(note, sizeof note, "%zu base64 characters", blob.n - 2);
            print_escaped_line("blob", note, (size_t)n);
        }
    }
    return step_end(h, 1);
}

/* ------------------------------------------------------------------------ */
/* Process management                                                       */
/* ------------------------------------------------------------------------ */

static void set_cloexec(int fd) { fcntl(fd, F_SETFD, fcntl(fd, F_GETFD) | FD_CLOEXEC); }

static void set_nonblock(int fd) { fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK); }

/* Starts argv[0] (searched in PATH) with pipes on its stdin, stdout, stderr,
 * in a process group of its own (so that it and its children can be killed). */
static int spawn_server(Host *h, char **argv)
{
    int p[3][2]; /* stdin, stdout, stderr of the server */
    int made = 0;
    for (; made < 3; made++)
        if (pipe(p[made]) != 0)
            break;
    pid_t pid = made == 3 ? fork() : -1;
    if (pid < 0) {
        int saved = errno;
        for (int i = 0; i < made; i++) {
            close(p[i][0]);
            close(p[i][1]);
        }
        errno = saved;
        return -1;
    }
    if (pid == 0) {
        /* Child: own process group, stdio on the pipes, default SIGPIPE
         * (an ignored disposition would survive exec), then the server. */
        setpgid(0, 0);
        signal(SIGPIPE, SIG_DFL);
        if (dup2(p[0][0], STDIN_FILENO) < 0 || dup2(p[1][1], STDOUT_FILENO) < 0 ||
            dup2(p[2][1], STDERR_FILENO) < 0)
            _exit(127);
        for (int i = 0; i < 3; i++) {
            close(p[i][0]);
            close(p[i][1]);
        }
        execvp(argv[0], argv);
        fprintf(stderr, "cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    setpgid(pid, pid); /* also here, so kill(-pid) works whoever runs first */
    close(p[0][0]);
    close(p[1][1]);
    close(p[2][1]);
    h->pid = pid;
    h->to_server = p[0][1];
    h->from_server = p[1][0];
    h->err_server = p[2][0];
    for (int i = 0; i < 3; i++) {
        int fd = i == 0 ? h->to_server : i == 1 ? h->from_server : h->err_server;
        set_cloexec(fd);
        set_nonblock(fd); /* pump() never blocks on one pipe while another needs service */
    }
    return 0;
}

/* Keeps the pipes serviced while waiting up to ms for the child to exit.
 * Returns 1 and sets *status if it exited, 0 if not, -1 on a waitpid error. */
static int wait_child(Host *h, int ms, int *status)
{
    int64_t deadline = now_ms() + ms;
    for (;;) {
        pid_t r = waitpid(h->pid, status, WNOHANG);
        if (r == h->pid)
            return 1;
        if (r < 0 && errno != EINTR)
            return -1;
        int64_t now = now_ms();
        if (now >= deadline)
            return 0;
        int64_t step = now + 20 < deadline ? now + 20 : deadline;
        if (pump(h, step) < 0)
            sleep_ms(10); /* nothing left to poll */
    }
}

/* Closes the server's stdin, reads its remaining output and reaps it.
 * Returns 0 if the server exited by itself with status 0. */
static int shutdown_server(Host *h)
{
    int shutdown_ms = (int)h->cfg->shutdown_ms;
    int64_t deadline = now_ms() + shutdown_ms;
    /* Let queued output (e.g. a last reply to a ping) go out first. */
    while (h->to_server >= 0 && h->outq_off < h->outq.len && pump(h, deadline) > 0)
        ;
    close_to_server(h);

    int status = 0, rc = 0;
    int signalled = 0;
    int r = wait_child(h, shutdown_ms, &status);
    if (r == 0) {
        log_msg("the server did not exit within %d ms of its stdin closing; sending SIGTERM",
                shutdown_ms);
        signalled = 1;
        kill(-h->pid, SIGTERM);
        r = wait_child(h, TERM_TIMEOUT_MS, &status);
        if (r == 0) {
            log_msg("the server ignored SIGTERM; sending SIGKILL");
            kill(-h->pid, SIGKILL);
            r = waitpid(h->pid, &status, 0) == h->pid ? 1 : -1;
        }
        if (!h->cfg->allow_kill)
            rc = -1;
    }
    if (r < 0) {
        log_msg("waitpid: %s", strerror(errno));
        return -1;
    }
    /* The server is gone; take what is left in the pipes (children it left
     * behind may hold them open, so only for a short while). */
    int64_t pipes_deadline = now_ms() + PIPES_AFTER_EXIT_MS;
    while ((h->from_server >= 0 || h->err_server >= 0) && pump(h, pipes_deadline) > 0)
        ;
    flush_errline(h);

    if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
        log_msg("the server exited with status %d", WEXITSTATUS(status));
        rc = -1;
    } else if (WIFSIGNALED(status)) {
        log_msg("the server was killed by signal %d", WTERMSIG(status));
        if (!(signalled && h->cfg->allow_kill))
            rc = -1;
    }
    return rc;
}

/* ------------------------------------------------------------------------ */
/* Command line                                                             */
/* ------------------------------------------------------------------------ */

static void usage(FILE *f, const char *prog)
{
    fprintf(f,
            "usage: %s [options] [--] <server-command> [args...]\n"
            "  --call TOOL JSON_ARGS     call a tool (repeatable)\n"
            "  --read-resource URI       read a resource (repeatable)\n"
            "  --expect-tool NAME        tools/list must offer NAME (repeatable)\n"
            "  --expect-text SUBSTRING   a tool or resource text must contain it (repeatable)\n"
            "  --timeout SEC             wait this long for each response (default %d)\n"
            "  --max-line BYTES          longest line accepted from the server (default %d)\n"
            "  --protocol-version V      version asked for in initialize (default %s)\n"
            "  --shutdown-timeout SEC    time to exit after stdin closes, then SIGTERM (default %d)\n"
            "  --allow-kill              a server stopped by a signal is not a failure\n"
            "Without --call/--read-resource/--expect-*: the demo session (echo, add).\n",
            prog, DEFAULT_TIMEOUT_MS / 1000, MCP_READER_DEFAULT_MAX_LINE_LEN,
            DEFAULT_PROTOCOL_VERSION, SHUTDOWN_TIMEOUT_MS / 1000);
}

/* Is s one JSON object? (validated by the library) */
static int is_json_object(const char *s)
{
    McpBuffer out = {NULL, 0};
    if (mcp_encode((const uint8_t *)s, strlen(s), 0, &out) != MCP_STATUS_OK)
        return 0;
    int ok = out.len > 0 && out.data[0] == '{';
    mcp_buffer_free(&out);
    return ok;
}

/* Parses the options into cfg (arrays sized argc, which is always enough).
 * Returns 0, or 2 for a usage error (already reported), or 3 for --help. */
static int parse_args(int argc, char **argv, Config *cfg)
{
    int i = 1;
    for (; i < argc; i++) {
        const char *a = argv[i];
        int left = argc - i - 1; /* arguments after this one */
        if (strcmp(a, "--") == 0) {
            i++;
            break;
        }
        if (a[0] != '-' || a[1] == '\0')
            break; /* the server command */
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0)
            return 3;
        if (strcmp(a, "--call") == 0 && left >= 2) {
            if (!is_json_object(argv[i + 2])) {
                fprintf(stderr, DEMO_PROG ": --call %s: the arguments must be a JSON object: %s\n",
                        argv[i + 1], argv[i + 2]);
                return 2;
            }
            cfg->calls[cfg->n_calls++] = (Call){argv[i + 1], argv[i + 2], NULL};
            i += 2;
        } else if (strcmp(a, "--read-resource") == 0 && left >= 1) {
            cfg->resources[cfg->n_resources++] = argv[++i];
        } else if (strcmp(a, "--expect-tool") == 0 && left >= 1) {
            cfg->tools[cfg->n_tools++] = (Expectation){argv[++i], 0};
        } else if (strcmp(a, "--expect-text") == 0 && left >= 1) {
            cfg->texts[cfg->n_texts++] = (Expectation){argv[++i], 0};
        } else if ((strcmp(a, "--timeout") == 0 || strcmp(a, "--shutdown-timeout") == 0) &&
                   left >= 1) {
            char *end;
            double sec = strtod(argv[++i], &end);
            if (*end != '\0' || !(sec > 0 && sec <= 86400)) {
                fprintf(stderr, DEMO_PROG ": %s: not a number of seconds: %s\n", a, argv[i]);
                return 2;
            }
            *(a[2] == 't' ? &cfg->timeout_ms : &cfg->shutdown_ms) = (int64_t)(sec * 1000);
        } else if (strcmp(a, "--allow-kill") == 0) {
            cfg->allow_kill = 1;
        } else if (strcmp(a, "--max-line") == 0 && left >= 1) {
            char *end;
            errno = 0;
            unsigned long long n = strtoull(argv[++i], &end, 10);
            if (*end != '\0' || errno || n == 0 || argv[i][0] == '-' || n > SIZE_MAX) {
                fprintf(stderr, DEMO_PROG ": --max-line: not a positive byte count: %s\n", argv[i]);
                return 2;
            }
            cfg->max_line = (size_t)n;
        } else if (strcmp(a, "--protocol-version") == 0 && left >= 1) {
            cfg->protocol_version = argv[++i];
        } else {
            fprintf(stderr, DEMO_PROG ": unknown option or missing argument: %s\n", a);
            return 2;
        }
    }
    if (i >= argc) {
        fprintf(stderr, DEMO_PROG ": no server command given\n");
        return 2;
    }
    cfg->command = &argv[i];
    return 0;
}

/* ------------------------------------------------------------------------ */
/* The session                                                              */
/* ------------------------------------------------------------------------ */

/* Frees what main allocated for cfg and returns rc. */
static int free_config(Config *cfg, const Call *demo_calls, int rc)
{
    if (cfg->calls != demo_calls)
        free(cfg->calls);
    free(cfg->resources);
    free(cfg->tools);
    free(cfg->texts);
    return rc;
}

int main(int argc, char **argv)
{
    size_t cap = (size_t)argc;
    Config cfg = {
        .calls = calloc(cap, sizeof(Call)),
        .resources = calloc(cap, sizeof(char *)),
        .tools = calloc(cap + 2, sizeof(Expectation)),
        .texts = calloc(cap, sizeof(Expectation)),
        .timeout_ms = DEFAULT_TIMEOUT_MS,
        .max_line = MCP_READER_DEFAULT_MAX_LINE_LEN,
        .protocol_version = DEFAULT_PROTOCOL_VERSION,
        .shutdown_ms = SHUTDOWN_TIMEOUT_MS,
    };
    Call demo_calls[] = {
        {"echo", "{\"text\": \"" DEMO_ECHO_TEXT "\"}", DEMO_ECHO_TEXT},
        {"add", "{\"a\": 2, \"b\": 3}", "5"},
    };
    if (!cfg.calls || !cfg.resources || !cfg.tools || !cfg.texts) {
        fprintf(stderr, DEMO_PROG ": out of memory\n");
        return free_config(&cfg, demo_calls, 1);
    }
    int pr = parse_args(argc, argv, &cfg);
    if (pr != 0) {
        usage(pr == 3 ? stdout : stderr, argv[0]);
        return free_config(&cfg, demo_calls, pr == 3 ? 0 : 2);
    }
    if (cfg.n_calls == 0 && cfg.n_resources == 0 && cfg.n_tools == 0 && cfg.n_texts == 0) {
        /* The demo session against examples/mcp_server.c. */
        free(cfg.calls);
        cfg.calls = demo_calls;
        cfg.n_calls = sizeof demo_calls / sizeof demo_calls[0];
        cfg.tools[cfg.n_tools++] = (Expectation){"echo", 0};
        cfg.tools[cfg.n_tools++] = (Expectation){"add", 0};
    }

    /* A dead server must show up as EPIPE from write(), not kill the host. */
    signal(SIGPIPE, SIG_IGN);

    Host h = {.cfg = &cfg, .to_server = -1, .from_server = -1, .err_server = -1,
              .next_id = 1, .waiting_id = -1};
    h.reader = mcp_line_reader_new();
    if (!h.reader) {
        log_msg("out of memory");
        return free_config(&cfg, demo_calls, 1);
    }
    McpStatus st = mcp_line_reader_set_flags(h.reader, MCP_READER_JSONRPC);
    if (st == MCP_STATUS_OK)
        st = mcp_line_reader_set_max_line_len(h.reader, cfg.max_line);
    if (st != MCP_STATUS_OK) {
        log_msg("configuring the reader: %s", mcp_status_str(st));
        mcp_line_reader_free(h.reader);
        return free_config(&cfg, demo_calls, 1);
    }
    if (spawn_server(&h, cfg.command) != 0) {
        log_msg("cannot start %s: %s", cfg.command[0], strerror(errno));
        mcp_line_reader_free(h.reader);
        return free_config(&cfg, demo_calls, 1);
    }

    /* The steps: initialize, tools/list (if the server has tools or we need
     * them), each call, each resource. initialize must complete before
     * anything else is sent. */
    int has_tools = 0, has_resources = 0;
    int need_tools = cfg.n_calls || cfg.n_tools;
    size_t planned = 1 + (size_t)need_tools + cfg.n_calls + cfg.n_resources;
    if (do_initialize(&h, &has_tools, &has_resources) == 0 &&
        send_str(&h, "{\"jsonrpc\": \"2.0\", \"method\": \"notifications/initialized\"}") == 0) {
        if (has_tools && !need_tools)
            planned++;
        if (has_tools) {
            do_tools_list(&h);
        } else if (cfg.n_calls || cfg.n_tools) {
            log_msg("the server does not offer tools (no tools capability)");
            h.failed = 1;
        }
        for (size_t i = 0; i < cfg.n_calls && !h.stalled; i++)
            do_tools_call(&h, &cfg.calls[i]);
        if (cfg.n_resources && !has_resources)
            log_msg("warning: the server does not declare the resources capability");
        for (size_t i = 0; i < cfg.n_resources && !h.stalled; i++)
            do_resources_read(&h, cfg.resources[i]);
    }

    if (shutdown_server(&h) != 0)
        h.failed = 1;

    for (size_t i = 0; i < cfg.n_texts; i++)
        if (!cfg.texts[i].found) {
            log_msg("no text contained %s", cfg.texts[i].text);
            h.failed = 1;
        }

    if (h.from_server >= 0)
        close(h.from_server);
    if (h.err_server >= 0)
        close(h.err_server);
    mcp_line_reader_free(h.reader);
    buf_free(&h.outq);
    buf_free(&h.errline);
    buf_free(&h.response);

    int success = !h.failed && h.steps_ok == planned;
    printf("%s: %zu/%zu expected responses received and checked\n", success ? "ok" : "FAILED",
           h.steps_ok, planned);
    return free_config(&cfg, demo_calls, success ? 0 : 1);
}
