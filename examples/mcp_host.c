/*
 * mcp_host.c - a small but real MCP host (client side) built on the mcp-stdio
 * transport.
 *
 * Usage:
 *   mcp_host [options] [--] <server-command> [args...]
 *
 * Options (each may be repeated where it says so):
 *   --call TOOL JSON_ARGS     call a tool (repeatable); JSON_ARGS is a JSON object
 *   --read-resource URI       read a resource (repeatable)
 *   --expect-tool NAME        tools/list must offer NAME (repeatable)
 *   --expect-text SUBSTRING   some tool or resource text must contain it (repeatable)
 *   --timeout SEC             how long to wait for each response (default 10); a
 *                             tool call that reports progress gets it again at
 *                             each step (the transport resets its deadline)
 *   --max-time SEC            the longest a tool call may take, progress or not
 *                             (default 600)
 *   --no-progress-reset       progress does not reset a tool call's timeout
 *   --listen                  MCP 2026-07-28: subscribe to the server's tool list
 *                             changes (subscriptions/listen) once connected, and
 *                             print each notification of that stream as
 *                             "subscription: <method>"
 *   --restart                 a server that ends unexpectedly is started again
 *                             (the library's restart policy: at most 3 restarts,
 *                             250 ms after the end, a crash loop at 5 ends within a
 *                             minute); the host then connects again (the probe or
 *                             the handshake, --listen again) and repeats the
 *                             request the end failed, once
 *   --max-line BYTES          longest line accepted from the server (default 64 MiB)
 *   --legacy                  no server/discover probe: the initialize handshake at once
 *   --protocol-version V      the version asked for in initialize (default 2025-11-25)
 *   --shutdown-timeout SEC    how long the server has to exit after its stdin
 *                             closes before SIGTERM (default 5; SIGKILL at twice it)
 *   --allow-kill              a server that has to be stopped with a signal is
 *                             not a failure (the spec's shutdown sequence allows
 *                             SIGTERM; some SDK servers never exit on their own)
 *   --inherit-env             the server gets the host's whole environment (by
 *                             default only HOME, LOGNAME, PATH, SHELL, TERM, USER,
 *                             the locale, TZ and TMPDIR, as the MCP SDKs do)
 *
 * Without any of --call, --read-resource, --expect-tool, --expect-text it runs
 * the demo session against examples/mcp_server.c: it expects the tools "echo"
 * and "add", calls echo (the text must come back unchanged) and add 2+3 (the
 * answer must be "5").
 *
 * The library does the work: mcp_transport_spawn starts the server (PATH
 * lookup, its own process group, pipes), and mcp_transport_next_event moves
 * the bytes both ways, numbers our requests and matches their answers, times
 * them out (and sends notifications/cancelled), and hands us the server's
 * stderr as lines (forwarded to our stderr, each prefixed "mcp_host: [server] ").
 * mcp_transport_close does the MCP shutdown (close stdin, SIGTERM, SIGKILL).
 * What is left here is MCP itself.
 *
 * The session, in MCP 2026-07-28 when the server speaks it:
 *   -> server/discover            (the probe; every request carries _meta:
 *                                  protocol version, client capabilities and info)
 *   -> tools/list                 (all pages, following nextCursor)
 *   -> tools/call ...             (each --call, in order)
 *   -> resources/read ...         (each --read-resource, in order)
 * A server from before 2026-07-28 answers the probe with an error (or not at
 * all, within --timeout): then, as the spec's backward compatibility section
 * says, the initialize handshake of 2025-11-25 (or --protocol-version) and
 * notifications/initialized come first, and the requests carry no _meta.
 * Requests from the server are answered whenever they arrive (ping -> {},
 * roots/list -> {"roots":[]}, anything else -> -32601 Method not found).
 * Lines from the server that are not JSON, not JSON-RPC 2.0, or longer than
 * the limit are reported on stderr and skipped; the session goes on.
 *
 * Output on stdout, one item per line (a test can check it):
 *   -> <line>       every message sent (as the transport queued it)
 *   <- <line>       every message received, exactly as received (trimmed)
 *   tool: <name>    each tool in tools/list
 *   text: <text>    each text content of a tools/call result and each text of
 *                   a resources/read result, decoded from JSON, with "\" written
 *                   "\\", newline "\n", CR "\r", tab "\t" and any other control
 *                   character "\xNN", so that it stays on one line; UTF-8 as is
 *   ok: N/M ... or FAILED: N/M ...   the summary, last
 * Diagnostics go to stderr.
 *
 * Exit status: 0 if every request got a successful response that passed its
 * checks (a tool result with isError true fails), every expectation was met,
 * and the server exited by itself with status 0 (or, with --allow-kill, was
 * stopped by a signal); 1 otherwise; 2 for bad usage.
 */

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if defined(_WIN32)
#include <windows.h> /* GetTickCount64 */
#endif

#include "mcp_stdio.h"

#define DEMO_PROG "mcp_host"
#include "demo_log.h"   /* log_msg, log_bytes */
#include "demo_json.h" /* JSpan, js_member, js_str_eq, js_array_next, ... */
#include "demo_buf.h"  /* Buf: the JSON texts we build */

#define MODERN_VERSION "2026-07-28"
#define DEFAULT_PROTOCOL_VERSION "2025-11-25" /* the legacy handshake's */
#define DEMO_ECHO_TEXT "hello from mcp-stdio"
#define DEFAULT_TIMEOUT_MS 10000  /* per expected response */
#define DEFAULT_MAX_MS 600000    /* the longest a tool call may take, progress or not */
#define SHUTDOWN_TIMEOUT_MS 5000  /* default, for the server to exit after its stdin closes */
#define MAX_LIST_PAGES 100        /* tools/list pages followed */

/* What every 2026-07-28 request carries in params._meta. */
#define META                                                                              \
    "{\"io.modelcontextprotocol/protocolVersion\":\"" MODERN_VERSION "\","                 \
    "\"io.modelcontextprotocol/clientCapabilities\":{},"                                  \
    "\"io.modelcontextprotocol/clientInfo\":{\"name\":\"mcp-stdio-demo-host\",\"version\":\"" \
    MCP_STDIO_VERSION "\"}}"

/* Versions of the initialize handshake this host can work with (the features
 * it uses are in all; a batch it receives is reported and skipped). */
static const char *const LEGACY_VERSIONS[] = {"2025-11-25", "2025-06-18", "2025-03-26",
                                              "2024-11-05"};

static int64_t now_ms(void)
{
#if defined(_WIN32)
    return (int64_t)GetTickCount64();
#else
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
#endif
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
    int64_t max_ms;     /* --max-time */
    int progress_reset; /* not --no-progress-reset */
    int listen;         /* --listen */
    int restart;        /* --restart */
    size_t max_line;
    const char *protocol_version;
    int legacy;
    int64_t shutdown_ms;
    int allow_kill;
    int inherit_env;
    char **command;
} Config;

/* ------------------------------------------------------------------------ */
/* Host state                                                               */
/* ------------------------------------------------------------------------ */

enum { PENDING = 2, GOT_RESULT = 1, GOT_ERROR = 0, TIMED_OUT = -1, NO_ANSWER = -2 };

typedef struct {
    const Config *cfg;
    McpTransport *t;
    int modern; /* speaking 2026-07-28: requests carry META */

    int64_t waiting_id;     /* the request we wait for, or -1 */
    int64_t last_id;        /* the last request's id, for messages */
    const char *waiting_method;
    int answer;             /* PENDING, or how it ended */
    Buf response;           /* its response, copied out of the event */

    int closed;             /* MCP_EVENT_CLOSED came */
    int exit_code, term_signal;
    int restarted;          /* MCP_EVENT_RESTARTED came, not yet acted on */
    int recovering;         /* connecting again after a restart */

    size_t steps_ok; /* steps of the session that succeeded, for the summary */
    int failed;      /* something went wrong that should fail the run */
    int stalled;     /* a response timed out or the server vanished */
} Host;

/* ------------------------------------------------------------------------ */
/* Sending                                                                  */
/* ------------------------------------------------------------------------ */

/* Prints "-> <json>" as the transport queued it: compact (mcp_encode writes
 * the same bytes as the transport's sends). */
static void print_sent(const Buf *json)
{
    McpBuffer out = {NULL, 0};
    if (mcp_encode((const uint8_t *)json->p, json->len, 0, &out) != MCP_STATUS_OK)
        return;
    fputs("-> ", stdout);
    fwrite(out.data, 1, out.len, stdout); /* out ends with exactly one '\n' */
    fflush(stdout);
    mcp_buffer_free(&out);
}

/* params with the progress token the transport put in it for request id:
 * merged into the _meta that make_params appended last (2026-07-28), or a
 * _meta of its own first. For the transcript only: the transport writes the
 * request. */
static void with_progress_token(const Host *h, const Buf *params, int64_t id, Buf *out)
{
    char token[64];
    const char *meta = NULL;
    for (const char *p = params->p; (p = strstr(p, "\"_meta\":{")) != NULL; p++)
        meta = p; /* the last one: make_params's */
    size_t at = h->modern && meta ? (size_t)(meta - params->p) + strlen("\"_meta\":{") : 1;
    snprintf(token, sizeof token, h->modern && meta ? "\"progressToken\":%lld," :
             "\"_meta\":{\"progressToken\":%lld},", (long long)id);
    buf_put(out, params->p, at);
    buf_puts(out, token);
    buf_put(out, params->p + at, params->len - at);
}

/* Queues a request (params: raw JSON, or NULL for none); returns its id, or
 * -1 if the transport refused it (logged). The answer comes as an event. A
 * tools/call follows its progress: each increase resets its timeout (unless
 * --no-progress-reset), never past --max-time. */
static int64_t send_request(Host *h, const char *method, const Buf *params)
{
    int64_t id;
    int follow = strcmp(method, "tools/call") == 0 && params && params->len > 2;
    uint32_t flags = follow ? MCP_REQUEST_PROGRESS : 0;
    if (follow && h->cfg->progress_reset)
        flags |= MCP_REQUEST_RESET_ON_PROGRESS;
    McpStatus st = mcp_transport_request_with(
        h->t, method, params ? (const uint8_t *)params->p : NULL, params ? params->len : 0,
        (uint32_t)h->cfg->timeout_ms, flags, follow ? (uint32_t)h->cfg->max_ms : 0, &id);
    if (st != MCP_STATUS_OK) {
        log_msg("cannot write %s to the server: %s", method, mcp_status_str(st));
        return -1;
    }
    Buf merged = {0};
    if (follow) {
        with_progress_token(h, params, id, &merged);
        params = &merged;
    }
    Buf b = {0};
    char head[64];
    snprintf(head, sizeof head, "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"method\":", (long long)id);
    buf_puts(&b, head);
    buf_json_string(&b, method);
    if (params) {
        buf_puts(&b, ",\"params\":");
        buf_put(&b, params->p, params->len);
    }
    buf_puts(&b, "}");
    print_sent(&b);
    buf_free(&b);
    buf_free(&merged);
    return id;
}

/* Answers a request of the server's: with result (raw JSON), or, when it is
 * NULL, with -32601 Method not found. */
static void reply(Host *h, McpSlice id, const char *result)
{
    McpStatus st = result ? mcp_transport_respond(h->t, id.data, id.len, (const uint8_t *)result,
                                                  strlen(result))
                          : mcp_transport_respond_error(h->t, id.data, id.len, -32601,
                                                        "Method not found");
    if (st != MCP_STATUS_OK) {
        log_msg("cannot answer the server's request: %s", mcp_status_str(st));
        return;
    }
    Buf b = {0};
    buf_puts(&b, "{\"jsonrpc\":\"2.0\",\"id\":");
    buf_put(&b, (const char *)id.data, id.len);
    buf_puts(&b, result ? ",\"result\":"
                        : ",\"error\":{\"code\":-32601,\"message\":\"Method not found\"}");
    buf_puts(&b, result ? result : "");
    buf_puts(&b, "}");
    print_sent(&b);
    buf_free(&b);
}

/* ------------------------------------------------------------------------ */
/* Receiving                                                                */
/* ------------------------------------------------------------------------ */

static JSpan span(McpSlice s) { return (JSpan){(const char *)s.data, s.len}; }

/* A message from the server that answers nothing of ours. */
static void handle_message(Host *h, const McpEvent *ev)
{
    JSpan method = span(ev->envelope.method);
    switch (ev->rpc_kind) {
    case MCP_RPC_REQUEST:
        if (js_str_eq(method, "ping")) {
            reply(h, ev->envelope.id, "{}");
        } else if (js_str_eq(method, "roots/list")) {
            reply(h, ev->envelope.id, "{\"roots\":[]}");
        } else {
            log_msg("answering the server's request %.*s with -32601 Method not found",
                    (int)method.n, method.p);
            reply(h, ev->envelope.id, NULL);
        }
        break;
    case MCP_RPC_NOTIFICATION:
        break; /* e.g. notifications/message: shown, nothing to do */
    case MCP_RPC_BATCH:
        log_msg("server sent a batch, which MCP 2025-06-18 does not allow; ignored");
        break;
    default: /* a response to no pending request: stray, late, or a duplicate */
        log_bytes("response with an id we are not waiting for, ignored", ev->data, ev->len);
        break;
    }
}

/* Our request's end: its answer, its timeout, or the end of the connection. */
static void handle_end_of_request(Host *h, const McpEvent *ev)
{
    if (ev->request_id != h->waiting_id)
        return; /* cannot happen: one request at a time */
    if (ev->kind == MCP_EVENT_RESPONSE) {
        h->response.len = 0;
        buf_put(&h->response, (const char *)ev->data, ev->len);
        h->answer = ev->rpc_kind == MCP_RPC_RESPONSE ? GOT_RESULT : GOT_ERROR;
    } else if (ev->kind == MCP_EVENT_REQUEST_TIMED_OUT) {
        h->answer = TIMED_OUT;
        if (strcmp(h->waiting_method, "initialize") != 0) {
            /* The transport sent this (never for initialize). */
            char line[160];
            snprintf(line, sizeof line,
                     "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":"
                     "{\"requestId\":%lld,\"reason\":\"request timed out\"}}",
                     (long long)ev->request_id);
            Buf b = {line, strlen(line), 0};
            print_sent(&b);
        }
    } else {
        h->answer = NO_ANSWER;
    }
}

/* Takes one event, waiting up to timeout_ms (-1: no limit), and handles it.
 * Returns 1 if one came, 0 if none did in time, -1 once there are no more. */
static int pump(Host *h, int timeout_ms)
{
    McpEvent ev;
    McpStatus st = mcp_transport_next_event(h->t, timeout_ms, &ev);
    if (st == MCP_STATUS_NO_MESSAGE || st == MCP_STATUS_OUT_OF_MEMORY)
        return 0;
    if (st != MCP_STATUS_OK) {
        if (st != MCP_STATUS_END_OF_STREAM) {
            log_msg("mcp_transport_next_event: %s", mcp_status_str(st));
            h->failed = 1;
        }
        return -1;
    }
    switch (ev.kind) {
    case MCP_EVENT_MESSAGE:
    case MCP_EVENT_RESPONSE:
        fputs("<- ", stdout);
        fwrite(ev.data, 1, ev.len, stdout);
        fputc('\n', stdout);
        fflush(stdout);
        if (ev.kind == MCP_EVENT_MESSAGE)
            handle_message(h, &ev);
        else
            handle_end_of_request(h, &ev);
        break;
    case MCP_EVENT_REQUEST_TIMED_OUT:
    case MCP_EVENT_REQUEST_FAILED:
        handle_end_of_request(h, &ev);
        break;
    case MCP_EVENT_PROGRESS: /* a notifications/progress of our tools/call */
    case MCP_EVENT_SUBSCRIPTION: /* tied to our subscriptions/listen by the transport */
    case MCP_EVENT_SUBSCRIPTION_ENDED:
        fputs("<- ", stdout);
        fwrite(ev.data, 1, ev.len, stdout);
        fputc('\n', stdout);
        if (ev.kind != MCP_EVENT_PROGRESS)
            printf("subscription%s: %.*s\n", ev.kind == MCP_EVENT_SUBSCRIPTION ? "" : " ended",
                   (int)ev.envelope.method.len, (const char *)ev.envelope.method.data);
        fflush(stdout);
        break;
    case MCP_EVENT_INVALID:
        if (ev.invalid_kind == MCP_MESSAGE_TOO_LONG)
            log_msg("bad line from server: too long (more than %zu bytes; %zu received), skipped",
                    h->cfg->max_line, ev.len);
        else
            log_bytes(ev.invalid_kind == MCP_MESSAGE_PARSE_ERROR
                          ? "bad line from server (not JSON), skipped"
                          : "bad line from server (not JSON-RPC 2.0), skipped",
                      ev.data, ev.len);
        break;
    case MCP_EVENT_STDERR:
        fflush(stdout);
        fputs(DEMO_PROG ": [server] ", stderr);
        fwrite(ev.data, 1, ev.len, stderr);
        fputc('\n', stderr);
        break;
    case MCP_EVENT_RESTARTED:
        /* How the server before it ended; the new pid and the count. */
        if (ev.term_signal)
            log_msg("the server was killed by signal %d; restarted it (pid %d, restart %u)",
                    ev.term_signal, mcp_transport_pid(h->t), mcp_transport_restarts(h->t));
        else
            log_msg("the server ended (exit status %d); restarted it (pid %d, restart %u)",
                    ev.exit_code, mcp_transport_pid(h->t), mcp_transport_restarts(h->t));
        printf("restarted: %u\n", mcp_transport_restarts(h->t));
        fflush(stdout);
        h->restarted = 1;
        break;
    case MCP_EVENT_CLOSED:
        h->closed = 1;
        h->exit_code = ev.exit_code;
        h->term_signal = ev.term_signal;
        break;
    default:
        break;
    }
    return 1;
}

/*
 * Sends a request and waits for its end, serving what comes meanwhile.
 * Returns GOT_RESULT or GOT_ERROR (the response in h->response), TIMED_OUT,
 * or NO_ANSWER (refused, or the connection ended first). Judges nothing.
 */
static int exchange(Host *h, const char *method, const Buf *params)
{
    h->waiting_method = method;
    h->waiting_id = h->last_id = send_request(h, method, params);
    h->answer = h->waiting_id < 0 ? NO_ANSWER : PENDING;
    while (h->answer == PENDING)
        if (pump(h, -1) < 0)
            h->answer = NO_ANSWER;
    h->waiting_id = -1;
    return h->answer;
}

static JSpan response_member(const Host *h, const char *name)
{
    JSpan msg = {h->response.p, h->response.len};
    return js_member(msg, name);
}

/* Logs an error response: "<what> failed: error <code> <message>". */
static void log_error_response(const Host *h, const char *what)
{
    JSpan err = response_member(h, "error");
    JSpan code = js_member(err, "code"), text = js_member(err, "message");
    log_msg("%s (id %lld) failed: error %.*s %.*s", what, (long long)h->last_id,
            code.p ? (int)code.n : 0, code.p ? code.p : "", text.p ? (int)text.n : 0,
            text.p ? text.p : "");
}

/*
 * exchange, judged: returns 1 with a result in h->response, 0 if the server
 * answered with an error or a result this host cannot use (logged), or -1 if
 * no response came (timeout, the server went away) - then the session cannot
 * go on (h->stalled).
 */
/* Logs why no answer came: the transport's end in words ("server exited
 * with code 1 before its first message: ModuleNotFoundError: ..."; the
 * server's stderr lines were forwarded as they came). */
static void log_ended(const Host *h, const char *method, long long id)
{
    McpBuffer why = {NULL, 0};
    if (mcp_transport_end_text(h->t, &why) == MCP_STATUS_OK && why.len > 0)
        log_msg("no answer to %s (id %lld): %.*s", method, id, (int)why.len,
                (const char *)why.data);
    else
        log_msg("the server closed the connection before answering %s (id %lld)", method, id);
    mcp_buffer_free(&why);
}

static int reconnect(Host *h);

static int request(Host *h, const char *method, const Buf *params)
{
    int r = exchange(h, method, params);
    long long id = (long long)h->last_id;
    if (r == TIMED_OUT)
        log_msg("timed out after %lld ms waiting for the response to %s (id %lld)",
                (long long)h->cfg->timeout_ms, method, id);
    else if (r == NO_ANSWER && id >= 0)
        log_ended(h, method, id);
    /* --restart: the server is started again; connect again and repeat the
     * request, once. */
    if (r == NO_ANSWER && h->cfg->restart && !h->recovering && reconnect(h) == 0) {
        log_msg("repeating %s", method);
        r = exchange(h, method, params);
        id = (long long)h->last_id;
        if (r == TIMED_OUT)
            log_msg("timed out after %lld ms waiting for the response to %s (id %lld)",
                    (long long)h->cfg->timeout_ms, method, id);
        else if (r == NO_ANSWER && id >= 0)
            log_ended(h, method, id);
    }
    if (r < 0) {
        h->failed = h->stalled = 1;
        return -1;
    }
    h->failed |= r != GOT_RESULT;
    if (r == GOT_ERROR) {
        log_error_response(h, method);
        return 0;
    }
    /* 2026-07-28: a result may ask for more input (a multi round-trip
     * request), which this host does not provide. Absent means complete. */
    JSpan type = js_member(response_member(h, "result"), "resultType");
    if (type.p && !js_str_eq(type, "complete")) {
        log_msg("%s (id %lld): a result of type %.*s, which this host does not handle", method,
                id, (int)type.n, type.p);
        h->failed = 1;
        return 0;
    }
    return 1;
}

/* params for a request: "{" members (may be "") and, in 2026-07-28, _meta "}". */
static void make_params(const Host *h, Buf *b, const char *members)
{
    b->len = 0;
    buf_puts(b, "{");
    buf_puts(b, members);
    if (h->modern) {
        buf_puts(b, *members ? ",\"_meta\":" : "\"_meta\":");
        buf_puts(b, META);
    }
    buf_puts(b, "}");
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
    for (size_t i = 0; i + m <= n; i++)
        if (memcmp(hay + i, needle, m) == 0)
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
    Buf text = {0};
    buf_reserve(&text, v.n); /* decoding never makes a string longer */
    size_t n = js_str_decode(v, text.p);
    if (n == JS_ERR) {
        log_msg("%s is not a string", label);
        buf_free(&text);
        return 0;
    }
    print_escaped_line(label, text.p, n);
    const Config *cfg = h->cfg;
    for (size_t i = 0; i < cfg->n_texts; i++)
        if (!cfg->texts[i].found && contains(text.p, n, cfg->texts[i].text))
            cfg->texts[i].found = 1;
    int ok = !exact || (n == strlen(exact) && memcmp(text.p, exact, n) == 0);
    if (!ok)
        log_msg("expected the text %s", exact);
    buf_free(&text);
    return ok;
}

/* ------------------------------------------------------------------------ */
/* The steps of the session                                                 */
/* ------------------------------------------------------------------------ */

/* Does the JSON array list hold the string s? */
static int lists(JSpan list, const char *s)
{
    size_t pos = 0;
    JSpan v;
    while (js_array_next(list, &pos, &v))
        if (js_str_eq(v, s))
            return 1;
    return 0;
}

/* Our newest legacy version that v is (a JSON string) or lists (an array); NULL if none. */
static const char *legacy_version(JSpan v)
{
    for (size_t i = 0; i < sizeof LEGACY_VERSIONS / sizeof LEGACY_VERSIONS[0]; i++)
        if (js_str_eq(v, LEGACY_VERSIONS[i]) || lists(v, LEGACY_VERSIONS[i]))
            return LEGACY_VERSIONS[i];
    return NULL;
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

/* Logs who answered, and takes the capabilities. */
static void connected(const Host *h, JSpan result, JSpan info, const char *version,
                      int *has_tools, int *has_resources)
{
    JSpan caps = js_member(result, "capabilities");
    *has_tools = js_is_object(js_member(caps, "tools"));
    *has_resources = js_is_object(js_member(caps, "resources"));
    JSpan name = js_member(info, "name"), sversion = js_member(info, "version");
    log_msg("connected to %.*s %.*s, protocol %s%s", name.p ? (int)name.n : 9,
            name.p ? name.p : "(unnamed)", sversion.p ? (int)sversion.n : 0,
            sversion.p ? sversion.p : "", version, h->modern ? "" : " (initialize)");
}

/*
 * The server/discover probe, as the stdio transport's backward compatibility
 * section says: a result (or the error -32022, Unsupported protocol version)
 * comes from a server of 2026-07-28 or later; any other error, or no answer
 * in time, from an older one. Returns 1 if the server speaks 2026-07-28 (the
 * step is done), 0 if the initialize handshake comes next (*version: the
 * version to ask for), -1 if the session cannot start.
 */
static int probe(Host *h, const char **version, int *has_tools, int *has_resources)
{
    Buf params = {0};
    h->modern = 1;
    make_params(h, &params, "");
    h->modern = 0;
    int r = exchange(h, "server/discover", &params);
    buf_free(&params);
    JSpan offered = JS_NONE; /* the versions a modern server named */
    if (r == GOT_RESULT) {
        JSpan result = response_member(h, "result");
        offered = js_member(result, "supportedVersions");
        if (lists(offered, MODERN_VERSION)) {
            h->modern = 1;
            /* 2026-07-28 names the server in the result's _meta; its drafts
             * had a serverInfo member. */
            JSpan meta = js_member(result, "_meta");
            JSpan info = js_member(meta, "io.modelcontextprotocol/serverInfo");
            connected(h, result, info.p ? info : js_member(result, "serverInfo"), MODERN_VERSION,
                      has_tools, has_resources);
            return step_end(h, 1) == 0 ? 1 : -1;
        }
    } else if (r == GOT_ERROR) {
        JSpan err = response_member(h, "error"), code = js_member(err, "code");
        if (js_raw_eq(code, "-32022"))
            offered = js_member(js_member(err, "data"), "supported");
        else
            log_msg("server/discover: error %.*s: a server from before MCP " MODERN_VERSION
                    ", so the initialize handshake",
                    code.p ? (int)code.n : 4, code.p ? code.p : "null");
    } else if (r == TIMED_OUT) {
        log_msg("no answer to server/discover in %lld ms: a server from before MCP " MODERN_VERSION
                ", so the initialize handshake", (long long)h->cfg->timeout_ms);
    } else {
        log_msg("the server closed the connection before answering server/discover");
        return step_end(h, 0);
    }
    if (offered.p) {
        /* A modern server that does not speak our modern version: its
         * initialize handshake, if it keeps one we speak. */
        *version = legacy_version(offered);
        if (!*version) {
            log_msg("the server speaks only %.*s; this host speaks " MODERN_VERSION
                    " and the initialize handshake", (int)offered.n, offered.p);
            return step_end(h, 0);
        }
    }
    return 0;
}

/*
 * The start: the probe, then, for a server from before 2026-07-28, the
 * initialize handshake. Sets *has_tools and *has_resources from the server's
 * capabilities. Returns 0 on success.
 */
static int do_connect(Host *h, int *has_tools, int *has_resources)
{
    const char *version = h->cfg->protocol_version;
    if (!h->cfg->legacy) {
        int r = probe(h, &version, has_tools, has_resources);
        if (r != 0)
            return r > 0 ? 0 : -1;
    }
    Buf params = {0};
    buf_puts(&params, "{\"protocolVersion\":");
    buf_json_string(&params, version);
    buf_puts(&params, ",\"capabilities\":{\"roots\":{\"listChanged\":false}},"
                      "\"clientInfo\":{\"name\":\"mcp-stdio-demo-host\",\"version\":\""
                      MCP_STDIO_VERSION "\"}}");
    int r = request(h, "initialize", &params);
    buf_free(&params);
    if (r != 1)
        return -1;
    JSpan result = response_member(h, "result");
    JSpan agreed = js_member(result, "protocolVersion");
    if (!legacy_version(agreed) || !js_is_string(agreed)) {
        log_msg("the server wants protocol version %.*s, which this host does not speak",
                agreed.p ? (int)agreed.n : 4, agreed.p ? agreed.p : "null");
        return step_end(h, 0);
    }
    connected(h, result, js_member(result, "serverInfo"), legacy_version(agreed), has_tools,
              has_resources);
    McpStatus st = mcp_transport_notify(h->t, "notifications/initialized", NULL, 0);
    if (st != MCP_STATUS_OK) {
        /* initialize was answered and checked; the server went away (or
         * cannot be written to) before the handshake's last message. */
        log_msg("cannot write notifications/initialized to the server: %s", mcp_status_str(st));
        step_end(h, 1);
        h->failed = h->stalled = 1;
        return -1;
    }
    Buf b = {0};
    buf_puts(&b, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
    print_sent(&b);
    buf_free(&b);
    return step_end(h, 1);
}

/* --listen: a subscriptions/listen for tool list changes, left open (no
 * deadline): its stream comes as MCP_EVENT_SUBSCRIPTION events, printed by
 * pump; it ends with the session. MCP 2026-07-28 only. */
static void do_listen(Host *h)
{
    if (!h->modern) {
        log_msg("--listen: the session is not MCP " MODERN_VERSION ": no subscriptions");
        return;
    }
    Buf params = {0};
    make_params(h, &params, "\"notifications\":{\"toolsListChanged\":true}");
    if (send_request(h, "subscriptions/listen", &params) < 0)
        h->failed = 1;
    buf_free(&params);
}

/* --restart: waits for the transport's restart of the server (or its end),
 * then connects again as at the start (the probe or the handshake; --listen
 * again). Its steps are not counted: they repeat the start. Returns 0 once
 * the new server is connected. */
static int reconnect(Host *h)
{
    while (!h->restarted && !h->closed)
        if (pump(h, -1) < 0)
            break;
    if (!h->restarted)
        return -1; /* the transport ended instead (the crash loop, say) */
    h->restarted = 0;
    h->recovering = 1;
    size_t steps = h->steps_ok;
    int failed = h->failed;
    int has_tools = 0, has_resources = 0;
    int r = do_connect(h, &has_tools, &has_resources);
    h->steps_ok = steps;
    h->recovering = 0;
    if (r != 0)
        return -1;
    h->failed = failed;
    if (h->cfg->listen)
        do_listen(h);
    return 0;
}

/* tools/list, every page. Returns 0 if it worked and the expected tools are there. */
static int do_tools_list(Host *h)
{
    const Config *cfg = h->cfg;
    Buf cursor = {0}; /* "cursor":<raw JSON string> of the next page */
    Buf params = {0};
    int ok = 1;
    for (int page = 0; page < MAX_LIST_PAGES; page++) {
        make_params(h, &params, cursor.len ? cursor.p : "");
        /* Without a cursor, in legacy: no params at all. */
        int r = request(h, "tools/list", params.len > 2 ? &params : NULL);
        cursor.len = 0;
        if (r != 1) {
            buf_free(&params);
            buf_free(&cursor);
            return -1;
        }
        JSpan result = response_member(h, "result");
        JSpan tools = js_member(result, "tools");
        if (!js_is_array(tools)) {
            log_msg("tools/list: the result has no tools array");
            ok = 0;
            break;
        }
        size_t pos = 0;
        JSpan tool;
        while (js_array_next(tools, &pos, &tool)) {
            JSpan name = js_member(tool, "name");
            if (!js_is_string(name) || !js_is_object(js_member(tool, "inputSchema"))) {
                log_bytes("tools/list: a tool without a name or an inputSchema",
                          (const uint8_t *)tool.p, tool.n);
                ok = 0;
                continue;
            }
            Buf s = {0};
            buf_reserve(&s, name.n);
            size_t n = js_str_decode(name, s.p);
            print_escaped_line("tool", s.p, n);
            for (size_t i = 0; i < cfg->n_tools; i++)
                if (strlen(cfg->tools[i].text) == n && memcmp(cfg->tools[i].text, s.p, n) == 0)
                    cfg->tools[i].found = 1;
            buf_free(&s);
        }
        JSpan next = js_member(result, "nextCursor");
        if (!js_is_string(next))
            break;
        buf_puts(&cursor, "\"cursor\":");
        buf_put(&cursor, next.p, next.n);
    }
    buf_free(&params);
    buf_free(&cursor);
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
    Buf members = {0}, params = {0};
    buf_puts(&members, "\"name\":");
    buf_json_string(&members, c->tool);
    buf_puts(&members, ",\"arguments\":");
    buf_puts(&members, c->args);
    make_params(h, &params, members.p);
    int r = request(h, "tools/call", &params);
    buf_free(&members);
    buf_free(&params);
    if (r != 1)
        return -1;

    JSpan result = response_member(h, "result");
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
    Buf members = {0}, params = {0};
    buf_puts(&members, "\"uri\":");
    buf_json_string(&members, uri);
    make_params(h, &params, members.p);
    int r = request(h, "resources/read", &params);
    buf_free(&members);
    buf_free(&params);
    if (r != 1)
        return -1;

    JSpan contents = js_member(response_member(h, "result"), "contents");
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
/* Starting and stopping the server                                         */
/* ------------------------------------------------------------------------ */

/* Starts the server: argv[0] looked up in PATH, its stderr as events. The
 * command is left in *cmd_out (the caller frees it), to say why a failed
 * start failed. */
static McpStatus spawn_server(const Config *cfg, McpCommand **cmd_out, McpTransport **t)
{
    McpCommand *cmd = *cmd_out = mcp_command_new(cfg->command[0]);
    if (!cmd)
        return MCP_STATUS_OUT_OF_MEMORY;
    McpStatus st = MCP_STATUS_OK;
    for (char **a = cfg->command + 1; *a && st == MCP_STATUS_OK; a++)
        st = mcp_command_arg(cmd, *a);
    if (st == MCP_STATUS_OK && cfg->inherit_env)
        st = mcp_command_env_mode(cmd, MCP_ENV_INHERIT);
    /* 3 restarts, 250 ms after the end (doubling), a crash loop at 5 ends
     * within a minute. */
    if (st == MCP_STATUS_OK && cfg->restart)
        st = mcp_command_restart(cmd, 3, 250, 8000, 5, 60000);
    uint32_t flags = 0;
#ifdef __linux__
    flags |= MCP_TRANSPORT_KILL_ON_HOST_EXIT; /* no server outlives a crashed host */
#endif
    if (st == MCP_STATUS_OK)
        st = mcp_transport_spawn(cmd, flags, t);
    return st;
}

/*
 * The MCP shutdown, done by the transport: it closes the server's stdin,
 * sends SIGTERM to its process group at the grace and SIGKILL at twice it;
 * meanwhile the answers and stderr still coming are taken. Returns 0 if the
 * server exited by itself with status 0 (or, with --allow-kill, was stopped).
 */
static int shutdown_server(Host *h)
{
    int grace = (int)h->cfg->shutdown_ms;
    int64_t start = now_ms();
    int marks = 0; /* the graces passed: 1, SIGTERM went; 2, SIGKILL */
    mcp_transport_close(h->t, (uint32_t)grace);
    for (int r = 0; r >= 0 && !h->closed;) {
        int64_t left = start + (int64_t)grace * (marks + 1) - now_ms();
        r = pump(h, marks == 2 ? -1 : left > 0 ? (int)left : 0);
        /* The transport signals at these times too; its CLOSED may come in
         * the same call, so look at the clock whatever came. */
        while (marks < 2 && now_ms() >= start + (int64_t)grace * (marks + 1)) {
            if (++marks == 1)
                log_msg("the server did not exit within %d ms of its stdin closing; "
                        "sending SIGTERM", grace);
            else
                log_msg("the server ignored SIGTERM; sending SIGKILL");
        }
    }
    uint64_t dropped = mcp_transport_stderr_dropped(h->t);
    if (dropped)
        log_msg("%llu bytes of the server's stderr were dropped (it wrote faster than we read)",
                (unsigned long long)dropped);
    int rc = h->closed && !(marks && !h->cfg->allow_kill) ? 0 : -1;
    if (h->exit_code > 0) {
        log_msg("the server exited with status %d", h->exit_code);
        rc = -1;
    } else if (h->term_signal) {
        log_msg("the server was killed by signal %d", h->term_signal);
        if (!marks)
            rc = -1; /* not by us */
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
            "  --timeout SEC             wait this long for each response (default %d);\n"
            "                            a tool call's progress resets it\n"
            "  --max-time SEC            the longest a tool call may take (default %d)\n"
            "  --no-progress-reset       progress does not reset a tool call's timeout\n"
            "  --listen                  subscribe to tool list changes (2026-07-28)\n"
            "  --restart                 start a server that ends unexpectedly again\n"
            "  --max-line BYTES          longest line accepted from the server (default %d)\n"
            "  --legacy                  no server/discover probe: initialize at once\n"
            "  --protocol-version V      version asked for in initialize (default %s)\n"
            "  --shutdown-timeout SEC    time to exit after stdin closes, then SIGTERM\n"
            "                            (default %d; SIGKILL at twice it)\n"
            "  --allow-kill              a server stopped by a signal is not a failure\n"
            "  --inherit-env             the server gets the whole environment\n"
            "Speaks MCP " MODERN_VERSION " (server/discover), else the initialize handshake.\n"
            "Without --call/--read-resource/--expect-*: the demo session (echo, add).\n",
            prog, DEFAULT_TIMEOUT_MS / 1000, DEFAULT_MAX_MS / 1000, MCP_READER_DEFAULT_MAX_LINE_LEN,
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
        } else if ((strcmp(a, "--timeout") == 0 || strcmp(a, "--shutdown-timeout") == 0 ||
                    strcmp(a, "--max-time") == 0) &&
                   left >= 1) {
            char *end;
            double sec = strtod(argv[++i], &end);
            if (*end != '\0' || !(sec > 0 && sec <= 86400)) {
                fprintf(stderr, DEMO_PROG ": %s: not a number of seconds: %s\n", a, argv[i]);
                return 2;
            }
            *(a[2] == 't' ? &cfg->timeout_ms
              : a[2] == 'm' ? &cfg->max_ms
                            : &cfg->shutdown_ms) = (int64_t)(sec * 1000);
        } else if (strcmp(a, "--no-progress-reset") == 0) {
            cfg->progress_reset = 0;
        } else if (strcmp(a, "--listen") == 0) {
            cfg->listen = 1;
        } else if (strcmp(a, "--allow-kill") == 0) {
            cfg->allow_kill = 1;
        } else if (strcmp(a, "--legacy") == 0) {
            cfg->legacy = 1;
        } else if (strcmp(a, "--restart") == 0) {
            cfg->restart = 1;
        } else if (strcmp(a, "--inherit-env") == 0) {
            cfg->inherit_env = 1;
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
        .max_ms = DEFAULT_MAX_MS,
        .progress_reset = 1,
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

    /* The steps: the start (discover or initialize), tools/list (if the
     * server has tools or we need them), each call, each resource. */
    int has_tools = 0, has_resources = 0;
    int need_tools = cfg.n_calls || cfg.n_tools;
    size_t planned = 1 + (size_t)need_tools + cfg.n_calls + cfg.n_resources;
    Host h = {.cfg = &cfg, .waiting_id = -1, .last_id = -1, .exit_code = -1};

    McpCommand *cmd = NULL;
    McpStatus st = spawn_server(&cfg, &cmd, &h.t);
    if (st == MCP_STATUS_SPAWN_FAILED) {
        /* "cannot start `npx`: not found in PATH (searched: ...)" */
        int code = errno;
        McpBuffer why = {NULL, 0};
        mcp_command_spawn_error(cmd, code, &why);
        log_msg("%.*s", (int)why.len, why.len ? (const char *)why.data : "");
        mcp_buffer_free(&why);
    } else if (st != MCP_STATUS_OK) {
        log_msg("cannot run %s: %s", cfg.command[0], mcp_status_str(st));
    }
    mcp_command_free(cmd);
    if (st != MCP_STATUS_OK) {
        printf("FAILED: 0/%zu expected responses received and checked\n", planned);
        return free_config(&cfg, demo_calls, 1);
    }
    mcp_transport_set_max_line_len(h.t, cfg.max_line);

    if (do_connect(&h, &has_tools, &has_resources) == 0) {
        if (cfg.listen)
            do_listen(&h);
        if (has_tools && !need_tools)
            planned++;
        if (has_tools) {
            do_tools_list(&h);
        } else if (need_tools) {
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
    mcp_transport_free(h.t);

    for (size_t i = 0; i < cfg.n_texts; i++)
        if (!cfg.texts[i].found) {
            log_msg("no text contained %s", cfg.texts[i].text);
            h.failed = 1;
        }
    buf_free(&h.response);

    int success = !h.failed && h.steps_ok == planned;
    printf("%s: %zu/%zu expected responses received and checked\n", success ? "ok" : "FAILED",
           h.steps_ok, planned);
    return free_config(&cfg, demo_calls, success ? 0 : 1);
}
