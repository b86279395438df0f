/*
 * mcp_server.c - a small but real MCP server on stdin/stdout, built on the
 * mcp-stdio transport.
 *
 * Transport: mcp_transport_open_stdio(MCP_TRANSPORT_GUARD_STDOUT): the
 * library reads stdin, frames, classifies and queues; descriptor 1 is pointed
 * at stderr, so nothing but the transport can write to the protocol stream.
 * All logging goes to stderr. At the end of stdin it answers what it read
 * (but a last line without a newline, which the transport hands over only
 * once sends are over), and exits (status 0).
 *
 * Protocol versions: MCP 2026-07-28 (modern: no handshake, every request
 * carries its version and the client's capabilities in params._meta, and
 * server/discover says what the server is), and for older clients the
 * initialize handshake of 2025-11-25, 2025-06-18 and 2024-11-05. Not
 * 2025-03-26: that version requires accepting JSON-RPC batches, which this
 * server refuses. A request whose _meta names a protocol version is served
 * as that version says; one without is served in the version initialize
 * agreed (2025-11-25 before any initialize).
 *
 * Methods:
 *   server/discover            -> supportedVersions, capabilities (tools), serverInfo
 *   initialize                 -> the client's protocolVersion if it is a legacy
 *                                 one above, else 2025-11-25; tools capability
 *   notifications/initialized  -> (notification, no reply)
 *   ping                       -> {} (legacy versions only: 2026-07-28 removed it)
 *   tools/list                 -> tools "echo" {text:string} and "add" {a:number,b:number}
 *                                 (one page: a cursor, if any, is ignored)
 *   tools/call                 -> runs echo / add; bad arguments are a tool
 *                                 result with isError true (2025-11-25 and later;
 *                                 -32602 Invalid params before)
 *   other notifications        -> ignored (e.g. notifications/cancelled: every
 *                                 request is answered at once, nothing to cancel)
 *   anything else              -> -32601 Method not found
 * Modern requests: a version other than 2026-07-28 gets -32022 (Unsupported
 * protocol version, with the supported ones); no clientCapabilities, -32602.
 * Bad input (the reply has no "id" unless the line had a readable one; never
 * "id": null):
 *   line that is not JSON      -> -32700 Parse error
 *   line too long              -> -32700 Parse error
 *   JSON but not JSON-RPC      -> -32600 Invalid Request (id echoed if detectable)
 *   batch                      -> -32600 Invalid Request
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
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcp_stdio.h"

#define DEMO_PROG "mcp_server"
#include "demo_log.h"   /* log_msg, log_bytes (stderr only: stdout belongs to the protocol) */
#include "demo_json.h" /* JSpan, js_member, js_str_eq, ... */
#include "demo_buf.h"  /* Buf: the replies we build */

#define SERVER_NAME "mcp-stdio-demo-server"
/* Who we are, in every place that names the server (the same object
 * everywhere, so a client sees one server whatever field it reads). */
#define SERVER_INFO_JSON                                                                       \
    "{\"name\":\"" SERVER_NAME "\",\"title\":\"mcp-stdio demo server\","                         \
    "\"version\":\"" MCP_STDIO_VERSION "\"}"
#define MODERN_VERSION "2026-07-28"
#define DEFAULT_LEGACY_VERSION "2025-11-25"
#define META_VERSION "io.modelcontextprotocol/protocolVersion"
#define META_CAPABILITIES "io.modelcontextprotocol/clientCapabilities"

/* The versions the initialize handshake agrees to, newest first. What this
 * server does (tools with text content) means the same in all of them. */
static const char *const LEGACY_VERSIONS[] = {DEFAULT_LEGACY_VERSION, "2025-06-18", "2024-11-05"};
#define N_LEGACY (sizeof LEGACY_VERSIONS / sizeof LEGACY_VERSIONS[0])

/* Every version, for server/discover and -32022 (a JSON array). */
#define SUPPORTED_JSON "[\"" MODERN_VERSION "\",\"2025-11-25\",\"2025-06-18\",\"2024-11-05\"]"

/* After this many bad lines in a row (with no valid message in between) the
 * server stops answering them with error replies (it still logs). */
#define MAX_CONSECUTIVE_BAD 8

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

static JSpan span(McpSlice s) { return (JSpan){(const char *)s.data, s.len}; }

/* ------------------------------------------------------------------------ */
/* Output                                                                   */
/* ------------------------------------------------------------------------ */

typedef struct {
    McpTransport *t;
    const char *legacy_version; /* what initialize agreed, or NULL */
    unsigned bad_run;           /* consecutive bad lines */
    int output_failed;
} Server;

/* How the request being answered is served. */
typedef struct {
    int modern;          /* 2026-07-28: resultType, serverInfo in every result */
    int tool_errors_in_result; /* 2025-11-25 and later: bad arguments are isError */
} Era;

/* Looks at the status of a send. A client that reads nothing more (the
 * queue at its 64 MiB bound) ends the session; one that is gone is logged
 * (the transport's CLOSED event ends the loop). */
static void check_sent(Server *srv, McpStatus st)
{
    if (st == MCP_STATUS_OK || srv->output_failed)
        return;
    if (st == MCP_STATUS_CLOSED) {
        /* Also for a last line without a newline: the transport hands it
         * over only at the end of stdin, when sends are over. */
        log_msg("the client closed its end: an answer cannot be sent");
        return;
    }
    if (st == MCP_STATUS_WOULD_BLOCK)
        log_msg("the client does not read its answers (the output queue is full); giving up");
    else /* only possible if this file builds bad JSON: a bug, not an input problem */
        log_msg("internal error: a reply was refused (%s)", mcp_status_str(st));
    srv->output_failed = 1;
}

/* Sends the result of request id: the raw JSON in r. */
static void send_result(Server *srv, McpSlice id, const Buf *r)
{
    check_sent(srv, mcp_transport_respond(srv->t, id.data, id.len, (const uint8_t *)r->p, r->len));
}

/* Opens a result object in r: in the modern era every result says it is
 * complete and names the server. The caller appends members and the '}'. */
static void result_open(Buf *r, Era era)
{
    buf_puts(r, "{");
    if (era.modern)
        buf_puts(r, "\"resultType\":\"complete\","
                   "\"_meta\":{\"io.modelcontextprotocol/serverInfo\":" SERVER_INFO_JSON "},");
}

/*
 * Sends an error response; data is optional raw JSON (NULL for none). An id
 * that could not be read (absent) is left out of the reply, never written as
 * null. With data, the message is built here (mcp_transport_respond_error has
 * no data), else the transport builds it.
 */
static void send_error(Server *srv, McpSlice id, int code, const char *message, const char *data)
{
    if (!data) {
        check_sent(srv, mcp_transport_respond_error(srv->t, id.data, id.len, code, message));
        return;
    }
    Buf b = {0};
    char num[16];
    buf_puts(&b, "{\"jsonrpc\":\"2.0\",");
    if (id.data) {
        buf_puts(&b, "\"id\":");
        buf_put(&b, (const char *)id.data, id.len);
        buf_puts(&b, ",");
    }
    snprintf(num, sizeof num, "%d", code);
    buf_puts(&b, "\"error\":{\"code\":");
    buf_puts(&b, num);
    buf_puts(&b, ",\"message\":");
    buf_json_string(&b, message);
    buf_puts(&b, ",\"data\":");
    buf_puts(&b, data);
    buf_puts(&b, "}}");
    check_sent(srv, mcp_transport_send(srv->t, (const uint8_t *)b.p, b.len));
    buf_free(&b);
}

static void send_invalid_params(Server *srv, McpSlice id, const char *why)
{
    Buf data = {0};
    buf_puts(&data, "{\"reason\":");
    buf_json_string(&data, why);
    buf_puts(&data, "}");
    send_error(srv, id, -32602, "Invalid params", data.p);
    buf_free(&data);
}

/* Error reply to a bad line (no id unless one was readable), subject to the storm limit. */
static void send_bad_line_error(Server *srv, McpSlice id, int code, const char *message)
{
    srv->bad_run++;
    if (srv->bad_run <= MAX_CONSECUTIVE_BAD)
        send_error(srv, id, code, message, NULL);
    if (srv->bad_run == MAX_CONSECUTIVE_BAD)
        log_msg("%d bad lines in a row: no more error replies until a valid message arrives",
                MAX_CONSECUTIVE_BAD);
}

/* ------------------------------------------------------------------------ */
/* Method handlers                                                          */
/* ------------------------------------------------------------------------ */

static void do_discover(Server *srv, McpSlice id, Era era)
{
    Buf r = {0};
    result_open(&r, era);
    /* The 2026-07-28 schema names the server in _meta (above, when the
     * request was modern); its drafts, and SDKs built on them, read a
     * serverInfo member: both are there. The tool list never changes. */
    buf_puts(&r, "\"supportedVersions\":" SUPPORTED_JSON ","
                "\"capabilities\":{\"tools\":{\"listChanged\":false}},"
                "\"serverInfo\":" SERVER_INFO_JSON ","
                "\"ttlMs\":3600000,\"cacheScope\":\"public\"}");
    send_result(srv, id, &r);
    buf_free(&r);
}

static void do_initialize(Server *srv, McpSlice id, JSpan params)
{
    JSpan version = js_member(params, "protocolVersion");
    if (!js_is_string(version)) {
        send_invalid_params(srv, id, "params.protocolVersion (string) is required");
        return;
    }
    /* Version negotiation: the client's version if we speak it, else our
     * newest legacy one (a client that cannot speak that is expected to
     * disconnect). 2026-07-28 has no handshake: a client asking for it here
     * gets 2025-11-25 too. */
    const char *answer = LEGACY_VERSIONS[0];
    int supported = 0;
    for (size_t i = 0; i < N_LEGACY; i++)
        if (js_str_eq(version, LEGACY_VERSIONS[i])) {
            answer = LEGACY_VERSIONS[i];
            supported = 1;
        }
    if (!supported)
        log_msg("client asked for protocol %.*s; offering %s", (int)version.n, version.p, answer);
    srv->legacy_version = answer;

    Buf r = {0};
    buf_puts(&r, "{\"protocolVersion\":");
    buf_json_string(&r, answer);
    buf_puts(&r, ",\"capabilities\":{\"tools\":{\"listChanged\":false}},"
                "\"serverInfo\":" SERVER_INFO_JSON "}");
    send_result(srv, id, &r);
    buf_free(&r);
}

static const char TOOLS[] =
    "\"tools\": ["
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
    "]";

static void do_tools_list(Server *srv, McpSlice id, Era era)
{
    Buf r = {0};
    result_open(&r, era);
    buf_puts(&r, TOOLS);
    if (era.modern) /* 2026-07-28: list results are cacheable, and say for how long */
        buf_puts(&r, ",\"ttlMs\":3600000,\"cacheScope\":\"public\"");
    buf_puts(&r, "}");
    send_result(srv, id, &r);
    buf_free(&r);
}

/* Sends a tool result: one text content (a C string, or raw JSON string
 * token when raw is not NULL), and isError. */
static void send_tool_result(Server *srv, McpSlice id, Era era, const char *text, JSpan raw,
                             int is_error)
{
    Buf r = {0};
    result_open(&r, era);
    buf_puts(&r, "\"content\":[{\"type\":\"text\",\"text\":");
    if (raw.p)
        buf_put(&r, raw.p, raw.n); /* the raw JSON string token: exact, no re-escaping */
    else
        buf_json_string(&r, text);
    buf_puts(&r, is_error ? "}],\"isError\":true}" : "}],\"isError\":false}");
    send_result(srv, id, &r);
    buf_free(&r);
}

/* Arguments a tool cannot use: since 2025-11-25 a tool execution error (the
 * model can read it and retry), before that -32602 Invalid params. */
static void bad_arguments(Server *srv, McpSlice id, Era era, const char *why)
{
    if (era.tool_errors_in_result)
        send_tool_result(srv, id, era, why, JS_NONE, 1);
    else
        send_invalid_params(srv, id, why);
}

static void do_tools_call(Server *srv, McpSlice id, JSpan params, Era era)
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
    int echo = js_str_eq(name, "echo"), add = js_str_eq(name, "add");
    if (!echo && !add) {
        /* An unknown tool stays a protocol error in every version. */
        Buf data = {0};
        buf_puts(&data, "{\"name\":");
        buf_put(&data, name.p, name.n);
        buf_puts(&data, "}");
        send_error(srv, id, -32602, "Unknown tool", data.p);
        buf_free(&data);
        return;
    }
    JSpan args = js_member(params, "arguments");
    if (args.p && !js_is_object(args)) {
        bad_arguments(srv, id, era, "arguments must be an object");
        return;
    }
    if (echo) {
        JSpan text = js_member(args, "text");
        if (js_is_string(text))
            send_tool_result(srv, id, era, NULL, text, 0);
        else
            bad_arguments(srv, id, era, "echo: argument \"text\" (string) is required");
        return;
    }
    double a, b;
    if (!js_number(js_member(args, "a"), &a) || !js_number(js_member(args, "b"), &b)) {
        bad_arguments(srv, id, era, "add: arguments \"a\" and \"b\" (finite numbers) are required");
        return;
    }
    double sum = a + b;
    char num[40];
    if (isfinite(sum))
        format_double(sum, num);
    /* Overflow is a tool execution error, reported in the result in every version. */
    send_tool_result(srv, id, era, isfinite(sum) ? num : "overflow: the sum is not a finite number",
                     JS_NONE, !isfinite(sum));
}

/*
 * Which era serves this request. A modern request (its params._meta names a
 * protocol version) must name 2026-07-28 and declare the client's
 * capabilities; if not, the error is sent here and 0 returned.
 */
static int request_era(Server *srv, McpSlice id, JSpan params, Era *era)
{
    JSpan meta = js_member(params, "_meta");
    JSpan version = js_member(meta, META_VERSION);
    if (!version.p) {
        const char *v = srv->legacy_version ? srv->legacy_version : DEFAULT_LEGACY_VERSION;
        *era = (Era){0, strcmp(v, "2025-11-25") >= 0}; /* the dates compare as strings */
        return 1;
    }
    if (!js_str_eq(version, MODERN_VERSION)) {
        Buf data = {0};
        buf_puts(&data, "{\"supported\":" SUPPORTED_JSON ",\"requested\":");
        buf_put(&data, version.p, version.n);
        buf_puts(&data, "}");
        send_error(srv, id, -32022, "Unsupported protocol version", data.p);
        buf_free(&data);
        return 0;
    }
    if (!js_is_object(js_member(meta, META_CAPABILITIES))) {
        send_invalid_params(srv, id,
                            "params._meta[\"" META_CAPABILITIES "\"] (object) is required");
        return 0;
    }
    *era = (Era){1, 1};
    return 1;
}

static void handle_request(Server *srv, const McpEnvelope *env)
{
    McpSlice id = env->id;
    JSpan method = span(env->method), params = span(env->params);
    Era era;
    if (!request_era(srv, id, params, &era))
        return;

    if (js_str_eq(method, "server/discover")) {
        do_discover(srv, id, era);
    } else if (js_str_eq(method, "initialize") && !era.modern) {
        do_initialize(srv, id, params);
    } else if (js_str_eq(method, "ping") && !era.modern) {
        check_sent(srv, mcp_transport_respond(srv->t, id.data, id.len, (const uint8_t *)"{}", 2));
    } else if (js_str_eq(method, "tools/list") || js_str_eq(method, "tools/call")) {
        if (!era.modern && !srv->legacy_version)
            log_msg("warning: %.*s before initialize", (int)method.n, method.p);
        if (js_str_eq(method, "tools/list"))
            do_tools_list(srv, id, era);
        else
            do_tools_call(srv, id, params, era);
    } else {
        Buf data = {0};
        buf_puts(&data, "{\"method\":");
        buf_put(&data, method.p, method.n);
        buf_puts(&data, "}");
        send_error(srv, id, -32601, "Method not found", data.p);
        buf_free(&data);
    }
}

static void handle_notification(const McpEnvelope *env)
{
    JSpan method = span(env->method);
    if (js_str_eq(method, "notifications/initialized")) {
        log_msg("client initialized");
    } else {
        /* Notifications never get a reply, known or not. */
        log_msg("ignoring notification %.*s", (int)method.n, method.p);
    }
}

/* Handles one event. Its data is only valid until the next next_event. */
static void handle_event(Server *srv, const McpEvent *ev)
{
    static const McpSlice NO_ID = {NULL, 0};
    JSpan line = {(const char *)ev->data, ev->len};

    if (ev->kind == MCP_EVENT_MESSAGE) {
        switch (ev->rpc_kind) {
        case MCP_RPC_REQUEST:
            srv->bad_run = 0;
            handle_request(srv, &ev->envelope);
            break;
        case MCP_RPC_NOTIFICATION:
            srv->bad_run = 0;
            handle_notification(&ev->envelope);
            break;
        case MCP_RPC_BATCH:
            /* MCP 2025-06-18 removed JSON-RPC batching; this server never took it up. */
            log_bytes("rejecting batch", ev->data, ev->len);
            send_bad_line_error(srv, NO_ID, -32600, "Invalid Request: batches are not supported");
            break;
        default: /* a response or an error: this server never sends requests */
            srv->bad_run = 0;
            log_bytes("ignoring unexpected response", ev->data, ev->len);
            break;
        }
    } else if (ev->kind == MCP_EVENT_INVALID && ev->invalid_kind == MCP_MESSAGE_TOO_LONG) {
        log_msg("line too long (%zu bytes received), dropped", ev->len);
        send_bad_line_error(srv, NO_ID, -32700, "Parse error: line too long");
    } else if (ev->kind == MCP_EVENT_INVALID && ev->invalid_kind == MCP_MESSAGE_PARSE_ERROR) {
        log_bytes("parse error", ev->data, ev->len);
        send_bad_line_error(srv, NO_ID, -32700, "Parse error");
    } else if (ev->kind == MCP_EVENT_INVALID) {
        log_bytes("invalid JSON-RPC", ev->data, ev->len);
        /* Never answer something that looks like a (malformed) response:
         * that is how two peers end up trading errors forever. */
        if (js_is_object(line) && !js_member(line, "method").p &&
            (js_member(line, "result").p || js_member(line, "error").p))
            return;
        /* Echo the id if it is readable (a string or a number), else none. */
        JSpan id = js_member(line, "id");
        McpSlice echo = NO_ID;
        if (js_is_string(id) || js_is_number(id))
            echo = (McpSlice){(const uint8_t *)id.p, id.n};
        send_bad_line_error(srv, echo, -32600, "Invalid Request");
    }
    /* MCP_EVENT_CLOSED ends the loop in main; a server gets no other kind
     * (it sends no requests and spawns nothing). */
}

int main(void)
{
    /* The transport never raises SIGPIPE, but a closed stderr must not kill us
     * either (log lines are written with stdio). Windows has no SIGPIPE. */
#if defined(SIGPIPE)
    signal(SIGPIPE, SIG_IGN);
#endif

    Server srv = {0};
    McpStatus st = mcp_transport_open_stdio(MCP_TRANSPORT_GUARD_STDOUT, &srv.t);
    if (st != MCP_STATUS_OK) {
        int io = st == MCP_STATUS_IO_ERROR;
        log_msg("mcp_transport_open_stdio: %s%s%s", mcp_status_str(st), io ? ": " : "",
                io ? strerror(errno) : "");
        return 1;
    }
#if defined(_WIN32)
    /* The guard's last part on Windows: the C runtime's own stdout (printf)
     * to stderr too. */
    mcp_stdio_crt_stdout_to_stderr();
#endif
    log_msg("ready (mcp-stdio %s)", mcp_stdio_version());

    int rc = 0;
    McpEvent ev;
    for (;;) {
        st = mcp_transport_next_event(srv.t, -1, &ev);
        if (st == MCP_STATUS_OUT_OF_MEMORY)
            continue; /* nothing was taken: try again */
        if (st != MCP_STATUS_OK) {
            log_msg("mcp_transport_next_event: %s", mcp_status_str(st));
            rc = 1;
            break;
        }
        if (ev.kind == MCP_EVENT_CLOSED)
            break; /* the end of stdin, after what came before it was answered */
        handle_event(&srv, &ev);
        if (srv.output_failed) {
            rc = 1;
            break;
        }
    }
    mcp_transport_free(srv.t); /* writes what is still queued (2 s at most) */
    log_msg(rc == 0 ? "end of input, exiting" : "exiting after an error");
    return rc;
}
