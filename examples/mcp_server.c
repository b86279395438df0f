/*
 * mcp_server.c - a small but real MCP server on stdin/stdout, built on mcp-stdio.
 *
 * Transport: MCP stdio, i.e. newline-delimited JSON-RPC 2.0.
 *   - Input is read from stdin by mcp_line_reader_read_fd() (one read(2) of
 *     whatever is there, in arbitrary chunks); complete messages come out of
 *     mcp_line_reader_next_message() already classified (MCP_READER_JSONRPC).
 *   - Every reply is built as JSON text, passed through mcp_encode() (which
 *     validates it, compacts it and appends exactly one '\n') and written out
 *     in full by mcp_write_all().
 *   - stdout carries protocol messages only; all logging goes to stderr.
 *   - At the end of stdin it answers what is left and exits (status 0).
 *
 * Methods:
 *   initialize                 -> the client's protocolVersion if it is one of
 *                                 SUPPORTED_VERSIONS, else the newest of them;
 *                                 tools capability
 *   notifications/initialized  -> (notification, no reply)
 *   ping                       -> {}
 *   tools/list                 -> tools "echo" {text:string} and "add" {a:number,b:number}
 *                                 (one page: a cursor, if any, is ignored)
 *   tools/call                 -> runs echo / add
 *   other notifications        -> ignored (e.g. notifications/cancelled: every
 *                                 request is answered at once, nothing to cancel)
 *   anything else              -> -32601 Method not found
 * Bad input:
 *   line that is not JSON      -> -32700 Parse error, id null
 *   line too long              -> -32700 Parse error, id null
 *   JSON but not JSON-RPC      -> -32600 Invalid Request (id echoed if detectable)
 *   batch (removed in MCP 2025-06-18) -> -32600 Invalid Request, id null
 * Error replies to bad input are rate limited (see MAX_CONSECUTIVE_BAD) and
 * never sent for things that look like responses, so two confused peers
 * cannot ping-pong errors at each other forever.
 *
 * Build (see scripts/demo.sh):
 *   gcc -std=c11 -D_POSIX_C_SOURCE=200809L -Wall -Wextra -Iinclude \
 *       examples/mcp_server.c target/release/libmcp_stdio.a -lpthread -ldl ... -o mcp_server
 */

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mcp_stdio.h"

#define DEMO_PROG "mcp_server"
#include "demo_log.h"   /* log_msg, log_bytes (stderr only: stdout belongs to the protocol) */
#include "demo_json.h" /* JSpan, js_member, js_str_eq, ... */

#define SERVER_NAME "mcp-stdio-demo-server"

/* The protocol versions this server speaks, newest first. What it does (tools
 * with text content, ping) means the same in all of them. */
static const char *const SUPPORTED_VERSIONS[] = {"2025-11-25", "2025-06-18", "2025-03-26",
                                                 "2024-11-05"};

/* After this many bad lines in a row (with no valid message in between) the
 * server stops answering them with error replies (it still logs). */
#define MAX_CONSECUTIVE_BAD 8

/* ------------------------------------------------------------------------ */
/* Growable string buffer for building replies                              */
/* ------------------------------------------------------------------------ */

typedef struct {
    char *p;
    size_t len;
    size_t cap;
} StrBuf;

static void sb_reserve(StrBuf *b, size_t extra)
{
    if (b->len + extra <= b->cap)
        return;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + extra)
        cap *= 2;
    char *p = realloc(b->p, cap);
    if (!p) {
        log_msg("out of memory");
        exit(1);
    }
    b->p = p;
    b->cap = cap;
}

static void sb_put(StrBuf *b, const char *s, size_t n)
{
    sb_reserve(b, n);
    memcpy(b->p + b->len, s, n);
    b->len += n;
}

static void sb_puts(StrBuf *b, const char *s) { sb_put(b, s, strlen(s)); }

/* Appends a C string as a JSON string literal (quoted and escaped). */
static void sb_json_string(StrBuf *b, const char *s)
{
    sb_puts(b, "\"");
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') {
            char esc[2] = {'\\', (char)c};
            sb_put(b, esc, 2);
        } else if (c < 0x20) {
            char esc[8];
            snprintf(esc, sizeof esc, "\\u%04x", c);
            sb_puts(b, esc);
        } else {
            sb_put(b, (const char *)&c, 1);
        }
    }
    sb_puts(b, "\"");
}

static void sb_free(StrBuf *b)
{
    free(b->p);
    b->p = NULL;
    b->len = b->cap = 0;
}

/* ------------------------------------------------------------------------ */
/* JSON navigation only the server needs (the shared part is demo_json.h)   */
/* ------------------------------------------------------------------------ */

static int js_is_number(JSpan v)
{
    return v.p && v.n >= 1 && (v.p[0] == '-' || (v.p[0] >= '0' && v.p[0] <= '9'));
}

/* Reads a JSON number as a double. Returns 0 if v is not a finite number. */
static int js_number(JSpan v, double *out)
{
    if (!js_is_number(v))
        return 0;
    char *tmp = malloc(v.n + 1); /* strtod needs a NUL-terminated copy */
    if (!tmp)
        return 0;
    memcpy(tmp, v.p, v.n);
    tmp[v.n] = '\0';
    char *end;
    double d = strtod(tmp, &end); /* JSON numbers are a subset of strtod's syntax (C locale) */
    int ok = (*end == '\0') && isfinite(d);
    free(tmp);
    if (ok)
        *out = d;
    return ok;
}

/* Formats d with the fewest significant digits that read back exactly. */
static void format_double(double d, char buf[40])
{
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, 40, "%.*g", prec, d);
        if (strtod(buf, NULL) == d)
            return;
    }
}

/* ------------------------------------------------------------------------ */
/* Output                                                                   */
/* ------------------------------------------------------------------------ */

typedef struct {
    int initialized;  /* notifications/initialized seen */
    int initialize_seen;
    unsigned bad_run; /* consecutive bad lines */
    int output_failed;
} Server;

/* Frames one JSON message with mcp_encode and writes it to stdout. */
static void send_json(Server *srv, const StrBuf *msg)
{
    if (srv->output_failed)
        return;
    McpBuffer out = {NULL, 0};
    McpStatus st = mcp_encode((const uint8_t *)msg->p, msg->len, 0, &out);
    if (st != MCP_STATUS_OK) {
        /* Only possible if this file builds bad JSON: a bug, not an input problem. */
        log_msg("internal error: mcp_encode rejected a reply (%s)", mcp_status_str(st));
        log_bytes("rejected reply", (const uint8_t *)msg->p, msg->len);
        return;
    }
    st = mcp_write_all(STDOUT_FILENO, out.data, out.len);
    if (st != MCP_STATUS_OK) {
        log_msg("cannot write to stdout: %s",
                st == MCP_STATUS_IO_ERROR ? strerror(errno) : mcp_status_str(st));
        srv->output_failed = 1;
    }
    mcp_buffer_free(&out);
}

static void sb_id(StrBuf *b, JSpan id)
{
    if (id.p)
        sb_put(b, id.p, id.n);
    else
        sb_puts(b, "null");
}

/* Sends {"jsonrpc":"2.0","id":<id>,"result":<result>} */
static void send_result(Server *srv, JSpan id, const char *result, size_t result_len)
{
    StrBuf b = {0};
    sb_puts(&b, "{\"jsonrpc\":\"2.0\",\"id\":");
    sb_id(&b, id);
    sb_puts(&b, ",\"result\":");
    sb_put(&b, result, result_len);
    sb_puts(&b, "}");
    send_json(srv, &b);
    sb_free(&b);
}

/* Sends an error response; data is optional raw JSON (NULL for none). */
static void send_error(Server *srv, JSpan id, int code, const char *message, const StrBuf *data)
{
    StrBuf b = {0};
    char num[16];
    sb_puts(&b, "{\"jsonrpc\":\"2.0\",\"id\":");
    sb_id(&b, id);
    snprintf(num, sizeof num, "%d", code);
    sb_puts(&b, ",\"error\":{\"code\":");
    sb_puts(&b, num);
    sb_puts(&b, ",\"message\":");
    sb_json_string(&b, message);
    if (data) {
        sb_puts(&b, ",\"data\":");
        sb_put(&b, data->p, data->len);
    }
    sb_puts(&b, "}}");
    send_json(srv, &b);
    sb_free(&b);
}

static void send_invalid_params(Server *srv, JSpan id, const char *why)
{
    StrBuf data = {0};
    sb_puts(&data, "{\"reason\":");
    sb_json_string(&data, why);
    sb_puts(&data, "}");
    send_error(srv, id, -32602, "Invalid params", &data);
    sb_free(&data);
}

/* Error reply to a bad line (id usually null), subject to the storm limit. */
static void send_bad_line_error(Server *srv, JSpan id, int code, const char *message)
{
    srv->bad_run++;
    if (srv->bad_run < MAX_CONSECUTIVE_BAD) {
        send_error(srv, id, code, message, NULL);
    } else if (srv->bad_run == MAX_CONSECUTIVE_BAD) {
        send_error(srv, id, code, message, NULL);
        log_msg("%d bad lines in a row: no more error replies until a valid message arrives",
                MAX_CONSECUTIVE_BAD);
    }
}

/* ------------------------------------------------------------------------ */
/* Method handlers                                                          */
/* ------------------------------------------------------------------------ */

static void do_initialize(Server *srv, JSpan id, JSpan params)
{
    JSpan version = js_member(params, "protocolVersion");
    if (!js_is_string(version)) {
        send_invalid_params(srv, id, "params.protocolVersion (string) is required");
        return;
    }
    /* Version negotiation: the client's version if we speak it, else our
     * newest (a client that cannot speak that is expected to disconnect). */
    const char *answer = SUPPORTED_VERSIONS[0];
    int supported = 0;
    for (size_t i = 0; i < sizeof SUPPORTED_VERSIONS / sizeof SUPPORTED_VERSIONS[0]; i++)
        if (js_str_eq(version, SUPPORTED_VERSIONS[i])) {
            answer = SUPPORTED_VERSIONS[i];
            supported = 1;
        }
    if (!supported)
        log_msg("client asked for protocol %.*s; offering %s", (int)version.n, version.p, answer);
    srv->initialize_seen = 1;

    StrBuf r = {0};
    sb_puts(&r, "{\"protocolVersion\":");
    sb_json_string(&r, answer);
    sb_puts(&r, ",\"capabilities\":{\"tools\":{\"listChanged\":false}},"
                "\"serverInfo\":{\"name\":\"" SERVER_NAME "\","
                "\"title\":\"mcp-stdio demo server\",\"version\":");
    sb_json_string(&r, mcp_stdio_version());
    sb_puts(&r, "}}");
    send_result(srv, id, r.p, r.len);
    sb_free(&r);
}

static const char TOOLS_LIST_RESULT[] =
    "{\"tools\": ["
    "  {\"name\": \"echo\","
    "   \"title\": \"Echo\","
    "   \"description\": \"Returns the given text unchanged.\","
    "   \"inputSchema\": {\"type\": \"object\","
    "                     \"properties\": {\"text\": {\"type\": \"string\","
    "                                                 \"description\": \"Text to echo back\"}},"
    "                     \"required\": [\"text\"]}},"
    "  {\"name\": \"add\","
    "   \"title\": \"Add\","
    "   \"description\": \"Adds two numbers (IEEE-754 double precision).\","
    "   \"inputSchema\": {\"type\": \"object\","
    "                     \"properties\": {\"a\": {\"type\": \"number\"},"
    "                                    \"b\": {\"type\": \"number\"}},"
    "                     \"required\": [\"a\", \"b\"]}}"
    "]}";

static void do_tools_call(Server *srv, JSpan id, JSpan params)
{
    if (!js_is_object(params)) {
        send_invalid_params(srv, id, "params must be an object");
        return;
    }
    JSpan name = js_member(params, "name");
    if (!js_is_string(name)) {
        send_invalid_params(srv, id, "params.name (string) is required");
        return;
    }
    JSpan args = js_member(params, "arguments");
    if (args.p && !js_is_object(args)) {
        send_invalid_params(srv, id, "params.arguments must be an object");
        return;
    }

    StrBuf r = {0};
    if (js_str_eq(name, "echo")) {
        JSpan text = js_member(args, "text");
        if (!js_is_string(text)) {
            send_invalid_params(srv, id, "echo: argument \"text\" (string) is required");
            return;
        }
        /* The text goes back as its raw JSON string token: exact, no re-escaping. */
        sb_puts(&r, "{\"content\":[{\"type\":\"text\",\"text\":");
        sb_put(&r, text.p, text.n);
        sb_puts(&r, "}],\"isError\":false}");
    } else if (js_str_eq(name, "add")) {
        double a, b;
        if (!js_number(js_member(args, "a"), &a) || !js_number(js_member(args, "b"), &b)) {
            send_invalid_params(srv, id, "add: arguments \"a\" and \"b\" (finite numbers) are required");
            return;
        }
        double sum = a + b;
        if (isfinite(sum)) {
            char num[40];
            format_double(sum, num);
            sb_puts(&r, "{\"content\":[{\"type\":\"text\",\"text\":");
            sb_json_string(&r, num);
            sb_puts(&r, "}],\"isError\":false}");
        } else {
            /* A tool execution error, reported in the result as MCP prescribes. */
            sb_puts(&r, "{\"content\":[{\"type\":\"text\",\"text\":\"overflow: the sum is not "
                        "a finite number\"}],\"isError\":true}");
        }
    } else {
        StrBuf data = {0};
        sb_puts(&data, "{\"name\":");
        sb_put(&data, name.p, name.n);
        sb_puts(&data, "}");
        send_error(srv, id, -32602, "Unknown tool", &data);
        sb_free(&data);
        return;
    }
    send_result(srv, id, r.p, r.len);
    sb_free(&r);
}

static void handle_request(Server *srv, JSpan msg)
{
    JSpan method = js_member(msg, "method");
    JSpan id = js_member(msg, "id");
    JSpan params = js_member(msg, "params");

    if (js_str_eq(method, "initialize")) {
        do_initialize(srv, id, params);
    } else if (js_str_eq(method, "ping")) {
        send_result(srv, id, "{}", 2);
    } else if (js_str_eq(method, "tools/list")) {
        if (!srv->initialize_seen)
            log_msg("warning: tools/list before initialize");
        send_result(srv, id, TOOLS_LIST_RESULT, sizeof TOOLS_LIST_RESULT - 1);
    } else if (js_str_eq(method, "tools/call")) {
        if (!srv->initialize_seen)
            log_msg("warning: tools/call before initialize");
        do_tools_call(srv, id, params);
    } else {
        StrBuf data = {0};
        sb_puts(&data, "{\"method\":");
        sb_put(&data, method.p ? method.p : "null", method.p ? method.n : 4);
        sb_puts(&data, "}");
        send_error(srv, id, -32601, "Method not found", &data);
        sb_free(&data);
    }
}

static void handle_notification(Server *srv, JSpan msg)
{
    JSpan method = js_member(msg, "method");
    if (js_str_eq(method, "notifications/initialized")) {
        srv->initialized = 1;
        log_msg("client initialized");
    } else {
        /* Notifications never get a reply, known or not. */
        log_msg("ignoring notification %.*s", method.p ? (int)method.n : 4,
                method.p ? method.p : "null");
    }
}

/* Handles one item from the reader. msg->data is only valid until the next
 * call on the reader, and nothing here calls the reader. */
static void handle_message(Server *srv, const McpMessage *m)
{
    JSpan line = {(const char *)m->data, m->len};

    switch (m->kind) {
    case MCP_MESSAGE_JSON:
        switch (m->rpc_kind) {
        case MCP_RPC_REQUEST:
            srv->bad_run = 0;
            handle_request(srv, line);
            break;
        case MCP_RPC_NOTIFICATION:
            srv->bad_run = 0;
            handle_notification(srv, line);
            break;
        case MCP_RPC_RESPONSE:
        case MCP_RPC_ERROR:
            srv->bad_run = 0;
            /* This server never sends requests, so no response is expected. */
            log_bytes("ignoring unexpected response", m->data, m->len);
            break;
        case MCP_RPC_BATCH:
            /* MCP 2025-06-18 removed JSON-RPC batching. */
            log_bytes("rejecting batch", m->data, m->len);
            send_bad_line_error(srv, JS_NONE, -32600, "Invalid Request: batches are not supported");
            break;
        default:
            log_bytes("unclassified message", m->data, m->len);
            break;
        }
        break;

    case MCP_MESSAGE_PARSE_ERROR:
        log_bytes("parse error", m->data, m->len);
        send_bad_line_error(srv, JS_NONE, -32700, "Parse error");
        break;

    case MCP_MESSAGE_TOO_LONG:
        log_msg("line too long (%zu bytes received), dropped", m->len);
        send_bad_line_error(srv, JS_NONE, -32700, "Parse error: line too long");
        break;

    case MCP_MESSAGE_INVALID_JSONRPC: {
        log_bytes("invalid JSON-RPC", m->data, m->len);
        /* Never answer something that looks like a (malformed) response:
         * that is how two peers end up trading errors forever. */
        if (js_is_object(line) && !js_member(line, "method").p &&
            (js_member(line, "result").p || js_member(line, "error").p))
            break;
        /* Echo the id if it is detectable (a string or a number), else null. */
        JSpan id = js_member(line, "id");
        if (!js_is_string(id) && !js_is_number(id))
            id = JS_NONE;
        send_bad_line_error(srv, id, -32600, "Invalid Request");
        break;
    }

    default:
        log_msg("unknown message kind %d", (int)m->kind);
        break;
    }
}

/* Takes every complete item out of the reader. Returns 0, or -1 on a library error. */
static int drain(Server *srv, McpLineReader *reader)
{
    for (;;) {
        McpMessage m;
        McpStatus st = mcp_line_reader_next_message(reader, &m);
        if (st == MCP_STATUS_NO_MESSAGE)
            return 0;
        if (st != MCP_STATUS_OK) {
            log_msg("mcp_line_reader_next_message: %s", mcp_status_str(st));
            return -1;
        }
        handle_message(srv, &m);
        if (srv->output_failed)
            return -1;
    }
}

int main(void)
{
    /* mcp_write_all never raises SIGPIPE, but a closed stderr must not kill us
     * either (log lines are written with stdio). */
    signal(SIGPIPE, SIG_IGN);

    McpLineReader *reader = mcp_line_reader_new();
    if (!reader) {
        log_msg("out of memory");
        return 1;
    }
    McpStatus st = mcp_line_reader_set_flags(reader, MCP_READER_JSONRPC);
    if (st != MCP_STATUS_OK) {
        log_msg("mcp_line_reader_set_flags: %s", mcp_status_str(st));
        mcp_line_reader_free(reader);
        return 1;
    }

    Server srv = {0};
    int rc = 0;
    log_msg("ready (mcp-stdio %s)", mcp_stdio_version());

    for (;;) {
        /* One read(2) of what stdin has, straight into the reader. */
        st = mcp_line_reader_read_fd(reader, STDIN_FILENO, NULL);
        if (st == MCP_STATUS_WOULD_BLOCK) {
            /* stdin was handed to us non-blocking: wait for it. */
            struct pollfd pfd = {.fd = STDIN_FILENO, .events = POLLIN};
            (void)poll(&pfd, 1, -1);
            continue;
        }
        if (st == MCP_STATUS_END_OF_STREAM) {
            /* End of input: an unterminated last line still counts. */
            st = mcp_line_reader_finish(reader);
            if (st != MCP_STATUS_OK) {
                log_msg("mcp_line_reader_finish: %s", mcp_status_str(st));
                rc = 1;
            } else if (drain(&srv, reader) != 0) {
                rc = 1;
            }
            break;
        }
        if (st != MCP_STATUS_OK) {
            log_msg("reading stdin: %s",
                    st == MCP_STATUS_IO_ERROR ? strerror(errno) : mcp_status_str(st));
            rc = 1;
            break;
        }
        if (drain(&srv, reader) != 0) {
            rc = 1;
            break;
        }
    }

    mcp_line_reader_free(reader);
    log_msg(rc == 0 ? "end of input, exiting" : "exiting after an error");
    return rc;
}
