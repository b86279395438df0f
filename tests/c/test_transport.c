/*
 * McpTransport, the C API of one MCP stdio connection, against the contract
 * in include/mcp_stdio.h:
 *   - every function's NULL arguments, and what a closed transport refuses;
 *   - the memory transport: the exact lines every send queues (take_output,
 *     read_output in small pieces), request ids, how the peer's lines become
 *     events (responses matched once, strays, batches, invalid lines) and
 *     the fields that do not apply to an event's kind;
 *   - the output queue's bound; timeouts and cancellation; closing;
 *   - how long an event's data lives (valgrind and ASan watch every read);
 *   - descriptor transports on pipes and on a socketpair, owned and
 *     borrowed: descriptors closed or given back, a peer that goes away, no
 *     SIGPIPE, end of stream after close, poll_fds for event loops.
 * Timeouts are tens of milliseconds: the whole program takes well under a
 * second (a few under valgrind).
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "test_clock.h" /* now_ms, sleep_ms */
#include "test_util.h"

/* ---- helpers ---- */

static McpTransport *new_transport_at(const char *file, int line)
{
    McpTransport *t = mcp_transport_new();
    if (!check_at(t != NULL, "mcp_transport_new() != NULL", file, line)) {
        check_summary();
        exit(1);
    }
    return t;
}

#define NEW_TRANSPORT() new_transport_at(__FILE__, __LINE__)

#define RECEIVE_LIT(t, lit) mcp_transport_receive((t), LIT_PTR(lit), LIT_LEN(lit))
#define SEND_LIT(t, lit) mcp_transport_send((t), LIT_PTR(lit), LIT_LEN(lit))

static void make_pipe(int fds[2])
{
    if (!CHECK(pipe(fds) == 0)) {
        check_summary();
        exit(1);
    }
}

static void make_socketpair(int sv[2])
{
    if (!CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0)) {
        check_summary();
        exit(1);
    }
}

static int fd_flags(int fd)
{
    return fcntl(fd, F_GETFL);
}

static int is_nonblocking(int fd)
{
    int flags = fd_flags(fd);
    return flags != -1 && (flags & O_NONBLOCK) != 0;
}

static void set_nonblocking(int fd)
{
    int flags = fd_flags(fd);
    CHECK(flags != -1 && fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0);
}

static int fd_is_open(int fd)
{
    return fcntl(fd, F_GETFD) != -1;
}

static int fd_is_closed(int fd)
{
    errno = 0;
    return fcntl(fd, F_GETFD) == -1 && errno == EBADF;
}

/* Writes `len` bytes to the (blocking) descriptor `fd`. */
static void peer_write(int fd, const char *data, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, data, len);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (!CHECK(n > 0)) {
            return;
        }
        data += n;
        len -= (size_t)n;
    }
}

#define PEER_WRITE_LIT(fd, lit) peer_write((fd), (lit), LIT_LEN(lit))

/* Reads what the non-blocking `fd` holds now (up to cap); sets *eof at end of stream. */
static size_t peer_read_now(int fd, char *buf, size_t cap, int *eof)
{
    size_t got = 0;
    *eof = 0;
    while (got < cap) {
        ssize_t n = read(fd, buf + got, cap - got);
        if (n > 0) {
            got += (size_t)n;
        } else if (n == 0) {
            *eof = 1;
            break;
        } else if (errno != EINTR) {
            break; /* EAGAIN: nothing more now */
        }
    }
    return got;
}

/* The non-blocking `fd` holds exactly `want` now (and no end of stream). */
static int peer_got_at(int fd, const char *want, size_t want_len, const char *file, int line)
{
    char buf[4096];
    int eof;
    size_t n = peer_read_now(fd, buf, sizeof buf, &eof);
    int ok = check_at(n == want_len && memcmp(buf, want, n) == 0 && !eof, "peer got the bytes",
                      file, line);
    if (!ok) {
        print_bytes("got ", (const uint8_t *)buf, n);
        print_bytes("want", (const uint8_t *)want, want_len);
        printf("    eof %d\n", eof);
    }
    return ok;
}

#define PEER_GOT(fd, lit) peer_got_at((fd), (lit), LIT_LEN(lit), __FILE__, __LINE__)

/* ---- outputs ---- */

/* take_output gives exactly `want` (and empties the queue). */
static int expect_output_at(McpTransport *t, const char *want, size_t want_len, const char *file,
                            int line)
{
    McpBuffer b;
    McpStatus st;
    int ok;
    b.data = (uint8_t *)&check_failed_count; /* overwritten on success */
    b.len = 777;
    st = mcp_transport_take_output(t, &b);
    if (!check_at(st == MCP_STATUS_OK, "take_output == MCP_STATUS_OK", file, line)) {
        printf("    got %ld (%s)\n", (long)st, status_name(st));
        return 0;
    }
    ok = want_len == 0 ? (b.data == NULL && b.len == 0)
                       : (b.data != NULL && b.len == want_len && memcmp(b.data, want, want_len) == 0);
    if (!check_at(ok, "take_output gives the expected lines", file, line)) {
        print_bytes("got ", b.data, b.data != NULL ? b.len : 0);
        print_bytes("want", (const uint8_t *)want, want_len);
    }
    mcp_buffer_free(&b);
    return ok;
}

#define EXPECT_OUTPUT(t, lit) expect_output_at((t), (lit), LIT_LEN(lit), __FILE__, __LINE__)
#define EXPECT_NO_OUTPUT(t) expect_output_at((t), "", 0, __FILE__, __LINE__)

/* ---- events ---- */

static McpEvent sentinel_event(void)
{
    McpEvent ev;
    memset(&ev, 0x5a, sizeof ev);
    return ev;
}

static int event_is_sentinel(const McpEvent *ev)
{
    McpEvent s = sentinel_event();
    return ev->kind == s.kind && ev->rpc_kind == s.rpc_kind && ev->request_id == s.request_id &&
           ev->data == s.data && ev->len == s.len && ev->invalid_kind == s.invalid_kind &&
           ev->exit_code == s.exit_code && ev->term_signal == s.term_signal;
}

static int absent(McpSlice s)
{
    return s.data == NULL && s.len == 0;
}

static int envelope_absent(const McpEnvelope *e)
{
    return e->rpc_kind == MCP_RPC_NONE && absent(e->id) && absent(e->method) &&
           absent(e->params) && absent(e->result) && absent(e->error);
}

static int slice_is(McpSlice s, const char *lit)
{
    size_t n = strlen(lit);
    return s.data != NULL && s.len == n && memcmp(s.data, lit, n) == 0;
}

/* The fields that do not apply to the event's kind hold their defaults. */
static int defaults_hold(const McpEvent *ev)
{
    int ok = ev->exit_code == -1 && ev->term_signal == 0;
    switch (ev->kind) {
    case MCP_EVENT_MESSAGE:
        return ok && ev->request_id == -1 && ev->invalid_kind == 0 && ev->data != NULL;
    case MCP_EVENT_RESPONSE:
        return ok && ev->request_id > 0 && ev->invalid_kind == 0 && ev->data != NULL &&
               (ev->rpc_kind == MCP_RPC_RESPONSE || ev->rpc_kind == MCP_RPC_ERROR) &&
               ev->envelope.rpc_kind == ev->rpc_kind;
    case MCP_EVENT_INVALID:
        return ok && ev->request_id == -1 && ev->rpc_kind == MCP_RPC_NONE &&
               envelope_absent(&ev->envelope) && ev->invalid_kind != 0;
    case MCP_EVENT_REQUEST_TIMED_OUT:
    case MCP_EVENT_REQUEST_FAILED:
        return ok && ev->request_id > 0 && ev->rpc_kind == MCP_RPC_NONE && ev->data == NULL &&
               ev->len == 0 && envelope_absent(&ev->envelope) && ev->invalid_kind == 0;
    case MCP_EVENT_CLOSED:
        return ok && ev->request_id == -1 && ev->rpc_kind == MCP_RPC_NONE && ev->data == NULL &&
               ev->len == 0 && envelope_absent(&ev->envelope) && ev->invalid_kind == 0;
    default:
        return 0;
    }
}

static void print_event(const McpEvent *ev)
{
    printf("    event kind %ld rpc_kind %ld request_id %lld invalid_kind %ld exit_code %ld "
           "term_signal %ld\n",
           (long)ev->kind, (long)ev->rpc_kind, (long long)ev->request_id, (long)ev->invalid_kind,
           (long)ev->exit_code, (long)ev->term_signal);
    print_bytes("data", ev->data, ev->data != NULL ? ev->len : 0);
}

/* next_event(t, timeout) gives an event of `kind` for request `id` (-1: none),
 * with the defaults of its kind. */
static McpEvent expect_event_at(McpTransport *t, int32_t timeout, int32_t kind, int64_t id,
                                const char *what, const char *file, int line)
{
    McpEvent ev = sentinel_event();
    McpStatus st = mcp_transport_next_event(t, timeout, &ev);
    if (!check_at(st == MCP_STATUS_OK, what, file, line)) {
        printf("    next_event returned %ld (%s), want an event of kind %ld for id %lld\n",
               (long)st, status_name(st), (long)kind, (long long)id);
        return sentinel_event();
    }
    if (!check_at(ev.kind == kind && ev.request_id == id && defaults_hold(&ev), what, file,
                  line)) {
        printf("    want kind %ld request_id %lld\n", (long)kind, (long long)id);
        print_event(&ev);
    }
    return ev;
}

#define EXPECT_EVENT(t, kind, id)                                                              \
    expect_event_at((t), 0, (kind), (id), "next event is " #kind " " #id, __FILE__, __LINE__)
#define EXPECT_EVENT_WITHIN(t, timeout, kind, id)                                              \
    expect_event_at((t), (timeout), (kind), (id), "next event is " #kind " " #id, __FILE__,    \
                    __LINE__)

/* The event's line is exactly `lit`. */
#define CHECK_LINE(ev, lit)                                                                    \
    do {                                                                                       \
        if (!CHECK((ev).data != NULL && (ev).len == LIT_LEN(lit) &&                            \
                   memcmp((ev).data, (lit), LIT_LEN(lit)) == 0)) {                              \
            print_bytes("got ", (ev).data, (ev).data != NULL ? (ev).len : 0);                  \
            print_bytes("want", LIT_PTR(lit), LIT_LEN(lit));                                    \
        }                                                                                      \
    } while (0)

/* next_event(t, timeout) returns `want` (NO_MESSAGE, END_OF_STREAM...) and leaves *ev alone. */
static int expect_no_event_at(McpTransport *t, int32_t timeout, McpStatus want, const char *file,
                              int line)
{
    McpEvent ev = sentinel_event();
    McpStatus st = mcp_transport_next_event(t, timeout, &ev);
    int ok = check_status_at(st, want, "next_event gives no event", file, line);
    if (!ok && st == MCP_STATUS_OK) {
        print_event(&ev);
    }
    return check_at(event_is_sentinel(&ev), "*ev untouched without an event", file, line) && ok;
}

#define EXPECT_NO_EVENT(t) expect_no_event_at((t), 0, MCP_STATUS_NO_MESSAGE, __FILE__, __LINE__)
#define EXPECT_END(t) expect_no_event_at((t), 0, MCP_STATUS_END_OF_STREAM, __FILE__, __LINE__)

/* ---- NULL arguments ---- */

static void test_null_arguments(void)
{
    McpTransport *t = NEW_TRANSPORT();
    int64_t id = 4242;
    McpBuffer b;
    uint8_t buf[16];
    size_t n;
    int32_t timeout = 777;
    struct pollfd fds[3];
    McpEvent ev = sentinel_event();

    /* A NULL handle, whatever the other arguments. */
    CHECK_STATUS(mcp_transport_set_max_line_len(NULL, 100), MCP_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(mcp_transport_set_max_line_len(NULL, 0), MCP_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(mcp_transport_set_max_queued(NULL, 100), MCP_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(mcp_transport_set_max_queued(NULL, 0), MCP_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(SEND_LIT(NULL, "{}"), MCP_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(mcp_transport_send(NULL, NULL, 5), MCP_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(mcp_transport_request(NULL, "ping", NULL, 0, 0, &id), MCP_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(mcp_transport_request(NULL, NULL, NULL, 3, 0, &id), MCP_STATUS_NULL_ARGUMENT);
    CHECK(id == 4242);
    CHECK_STATUS(mcp_transport_notify(NULL, "n", NULL, 0), MCP_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(mcp_transport_respond(NULL, LIT_PTR("1"), 1, LIT_PTR("{}"), 2),
                 MCP_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(mcp_transport_respond_error(NULL, LIT_PTR("1"), 1, -1, "x"),
                 MCP_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(mcp_transport_cancel(NULL, 1, NULL), MCP_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(mcp_transport_close(NULL, 0), MCP_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(RECEIVE_LIT(NULL, "{}\n"), MCP_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(mcp_transport_receive_end(NULL), MCP_STATUS_NULL_ARGUMENT);
    b.data = (uint8_t *)&check_passed_count;
    b.len = 99;
    CHECK_STATUS(mcp_transport_take_output(NULL, &b), MCP_STATUS_NULL_ARGUMENT);
    CHECK(b.data == (uint8_t *)&check_passed_count && b.len == 99);
    n = 12345;
    CHECK_STATUS(mcp_transport_read_output(NULL, buf, sizeof buf, &n), MCP_STATUS_NULL_ARGUMENT);
    CHECK(n == 0); /* a count: written on every return */
    CHECK_STATUS(mcp_transport_next_event(NULL, 0, &ev), MCP_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(mcp_transport_next_event(NULL, -1, &ev), MCP_STATUS_NULL_ARGUMENT);
    CHECK(event_is_sentinel(&ev));
    n = 12345;
    CHECK_STATUS(mcp_transport_poll_fds(NULL, fds, 3, &n, &timeout), MCP_STATUS_NULL_ARGUMENT);
    CHECK(n == 0 && timeout == 777);
    mcp_transport_free(NULL); /* a no-op */

    /* NULL data with a length, NULL out-parameters. Nothing queued by any. */
    CHECK_STATUS(mcp_transport_send(t, NULL, 5), MCP_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(mcp_transport_send(t, NULL, 0), MCP_STATUS_INVALID_JSON);
    CHECK_STATUS(mcp_transport_request(t, NULL, NULL, 0, 0, &id), MCP_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(mcp_transport_request(t, "m", NULL, 3, 0, &id), MCP_STATUS_NULL_ARGUMENT);
    CHECK(id == 4242);
    CHECK_STATUS(mcp_transport_notify(t, NULL, NULL, 0), MCP_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(mcp_transport_notify(t, "m", NULL, 3), MCP_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(mcp_transport_respond(t, NULL, 1, LIT_PTR("{}"), 2), MCP_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(mcp_transport_respond(t, LIT_PTR("1"), 1, NULL, 2), MCP_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(mcp_transport_respond(t, NULL, 0, LIT_PTR("{}"), 2),
                 MCP_STATUS_INVALID_ARGUMENT); /* (NULL, 0): no id */
    CHECK_STATUS(mcp_transport_respond(t, LIT_PTR("1"), 1, NULL, 0), MCP_STATUS_INVALID_JSON);
    CHECK_STATUS(mcp_transport_respond_error(t, NULL, 1, -1, "x"), MCP_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(mcp_transport_respond_error(t, LIT_PTR("1"), 1, -1, NULL),
                 MCP_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(mcp_transport_respond_error(t, NULL, 0, -1, NULL), MCP_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(mcp_transport_receive(t, NULL, 3), MCP_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(mcp_transport_receive(t, NULL, 0), MCP_STATUS_OK); /* the empty input */
    CHECK_STATUS(mcp_transport_take_output(t, NULL), MCP_STATUS_NULL_ARGUMENT);
    n = 12345;
    CHECK_STATUS(mcp_transport_read_output(t, NULL, 5, &n), MCP_STATUS_NULL_ARGUMENT);
    CHECK(n == 0);
    n = 12345;
    CHECK_STATUS(mcp_transport_read_output(t, NULL, 0, &n), MCP_STATUS_OK);
    CHECK(n == 0);
    CHECK_STATUS(mcp_transport_read_output(t, buf, sizeof buf, NULL), MCP_STATUS_OK);
    CHECK_STATUS(mcp_transport_next_event(t, 0, NULL), MCP_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(mcp_transport_next_event(t, 10, NULL), MCP_STATUS_NULL_ARGUMENT);
    n = 12345;
    timeout = 777;
    CHECK_STATUS(mcp_transport_poll_fds(t, fds, 3, NULL, &timeout), MCP_STATUS_NULL_ARGUMENT);
    CHECK(timeout == 777);
    CHECK_STATUS(mcp_transport_poll_fds(t, fds, 3, &n, NULL), MCP_STATUS_NULL_ARGUMENT);
    CHECK(n == 0);
    n = 12345;
    CHECK_STATUS(mcp_transport_poll_fds(t, NULL, 1, &n, &timeout), MCP_STATUS_NULL_ARGUMENT);
    CHECK(n == 0 && timeout == 777);
    CHECK_STATUS(mcp_transport_poll_fds(t, NULL, 0, &n, &timeout), MCP_STATUS_OK);
    CHECK(n == 0 && timeout == -1); /* a memory transport: no descriptor, no deadline */
    EXPECT_NO_OUTPUT(t);

    /* Out of range: nothing queued, no id used. */
    CHECK_STATUS(mcp_transport_set_max_line_len(t, 0), MCP_STATUS_INVALID_ARGUMENT);
    CHECK_STATUS(mcp_transport_set_max_queued(t, 0), MCP_STATUS_INVALID_ARGUMENT);
    CHECK_STATUS(mcp_transport_request(t, "\xff", NULL, 0, 0, &id), MCP_STATUS_INVALID_TEXT);
    CHECK_STATUS(mcp_transport_request(t, "m", LIT_PTR("1"), 1, 0, &id),
                 MCP_STATUS_INVALID_PARAMS); /* params: an object or an array */
    CHECK_STATUS(mcp_transport_request(t, "m", LIT_PTR("{"), 1, 0, &id), MCP_STATUS_INVALID_JSON);
    CHECK(id == 4242);
    CHECK_STATUS(mcp_transport_notify(t, "m", LIT_PTR("\"s\""), 3), MCP_STATUS_INVALID_PARAMS);
    CHECK_STATUS(SEND_LIT(t, "{} {}"), MCP_STATUS_INVALID_JSON);
    CHECK_STATUS(mcp_transport_respond(t, LIT_PTR("null"), 4, LIT_PTR("{}"), 2),
                 MCP_STATUS_INVALID_ARGUMENT);
    CHECK_STATUS(mcp_transport_respond(t, LIT_PTR("{}"), 2, LIT_PTR("{}"), 2),
                 MCP_STATUS_INVALID_ARGUMENT);
    CHECK_STATUS(mcp_transport_respond(t, LIT_PTR("1"), 1, LIT_PTR("{"), 1),
                 MCP_STATUS_INVALID_JSON);
    CHECK_STATUS(mcp_transport_respond_error(t, LIT_PTR("true"), 4, -1, "x"),
                 MCP_STATUS_INVALID_ARGUMENT);
    CHECK_STATUS(mcp_transport_respond_error(t, LIT_PTR("1"), 1, -1, "\xc3"),
                 MCP_STATUS_INVALID_TEXT);
    EXPECT_NO_OUTPUT(t);
    CHECK_STATUS(mcp_transport_request(t, "m", NULL, 0, 0, NULL), MCP_STATUS_OK); /* id optional */
    CHECK_STATUS(mcp_transport_cancel(t, 1, "\xff"), MCP_STATUS_INVALID_TEXT);
    EXPECT_OUTPUT(t, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\"}\n");
    mcp_transport_free(t);
}

/* ---- closed ---- */

static void check_sends_refused(McpTransport *t, McpStatus want)
{
    int64_t id = 4242;
    CHECK_STATUS(SEND_LIT(t, "{}"), want);
    CHECK_STATUS(mcp_transport_request(t, "m", NULL, 0, 0, &id), want);
    CHECK_STATUS(mcp_transport_request(t, "m", NULL, 0, 10, &id), want);
    CHECK(id == 4242);
    CHECK_STATUS(mcp_transport_notify(t, "n", NULL, 0), want);
    CHECK_STATUS(mcp_transport_respond(t, LIT_PTR("1"), 1, LIT_PTR("{}"), 2), want);
    CHECK_STATUS(mcp_transport_respond_error(t, LIT_PTR("1"), 1, -1, "x"), want);
    CHECK_STATUS(mcp_transport_respond_error(t, NULL, 0, -1, "x"), want);
    CHECK_STATUS(mcp_transport_cancel(t, 1, NULL), want);
    CHECK_STATUS(mcp_transport_cancel(t, 99, "r"), want);
}

static void test_closed(void)
{
    McpTransport *t = NEW_TRANSPORT();
    int64_t id = 0;

    /* close: every send refused at once, twice is fine. */
    CHECK_STATUS(mcp_transport_request(t, "m", NULL, 0, 0, &id), MCP_STATUS_OK);
    CHECK(id == 1);
    CHECK_STATUS(mcp_transport_close(t, 0), MCP_STATUS_OK);
    CHECK_STATUS(mcp_transport_close(t, 0), MCP_STATUS_OK);
    CHECK_STATUS(mcp_transport_close(t, 100000), MCP_STATUS_OK);
    check_sends_refused(t, MCP_STATUS_CLOSED);
    CHECK_STATUS(mcp_transport_set_max_queued(t, 10), MCP_STATUS_OK); /* a setting, not a send */
    EXPECT_EVENT(t, MCP_EVENT_REQUEST_FAILED, 1);
    EXPECT_EVENT(t, MCP_EVENT_CLOSED, -1);
    EXPECT_END(t);
    EXPECT_END(t);
    CHECK(expect_no_event_at(t, 50, MCP_STATUS_END_OF_STREAM, __FILE__, __LINE__));
    CHECK(expect_no_event_at(t, -1, MCP_STATUS_END_OF_STREAM, __FILE__, __LINE__));
    CHECK_STATUS(mcp_transport_close(t, 0), MCP_STATUS_OK); /* after CLOSED too */
    check_sends_refused(t, MCP_STATUS_CLOSED);
    CHECK_STATUS(RECEIVE_LIT(t, "{}\n"), MCP_STATUS_CLOSED);
    CHECK_STATUS(mcp_transport_receive(t, NULL, 0), MCP_STATUS_CLOSED);
    CHECK_STATUS(mcp_transport_receive_end(t), MCP_STATUS_OK);
    EXPECT_END(t);
    /* The memory transport keeps its output for take_output after CLOSED. */
    EXPECT_OUTPUT(t, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\"}\n");
    EXPECT_NO_OUTPUT(t);
    mcp_transport_free(t);

    /* receive_end: receive refused, sends refused, CLOSED comes. */
    t = NEW_TRANSPORT();
    CHECK_STATUS(RECEIVE_LIT(t, "{\"jsonrpc\":\"2.0\",\"method\":\"n\"}"), MCP_STATUS_OK);
    CHECK_STATUS(mcp_transport_receive_end(t), MCP_STATUS_OK);
    CHECK_STATUS(mcp_transport_receive_end(t), MCP_STATUS_OK);
    CHECK_STATUS(RECEIVE_LIT(t, "{}\n"), MCP_STATUS_CLOSED);
    check_sends_refused(t, MCP_STATUS_CLOSED);
    {
        /* The last line without its newline still counts. */
        McpEvent ev = EXPECT_EVENT(t, MCP_EVENT_MESSAGE, -1);
        CHECK_LINE(ev, "{\"jsonrpc\":\"2.0\",\"method\":\"n\"}");
        CHECK(ev.rpc_kind == MCP_RPC_NOTIFICATION);
    }
    EXPECT_EVENT(t, MCP_EVENT_CLOSED, -1);
    EXPECT_END(t);
    CHECK_STATUS(mcp_transport_close(t, 0), MCP_STATUS_OK);
    EXPECT_NO_OUTPUT(t);
    mcp_transport_free(t);
}

/* ---- the memory transport's lines ---- */

#define LINE_INITIALIZE                                                                        \
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"  \
    "\"2025-06-18\",\"capabilities\":{}}}\n"
#define LINE_TOOLS_LIST "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}\n"
#define LINE_ESCAPED "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"a\\\"b\\\\c\\n\",\"params\":[1,2]}\n"
#define LINE_INITIALIZED "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n"
#define LINE_PROGRESS                                                                          \
    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"p\":0.5}}\n"
#define LINE_RESULT "{\"jsonrpc\":\"2.0\",\"id\":\"abc\",\"result\":{\"x\":[1,\"\xc3\xa9\"]}}\n"
#define LINE_NULL_RESULT "{\"jsonrpc\":\"2.0\",\"id\":-7,\"result\":null}\n"
#define LINE_ERROR                                                                             \
    "{\"jsonrpc\":\"2.0\",\"id\":5,\"error\":{\"code\":-32601,\"message\":\"Method \\\"x\\\" not " \
    "found\"}}\n"
#define LINE_ERROR_NO_ID                                                                       \
    "{\"jsonrpc\":\"2.0\",\"error\":{\"code\":-32700,\"message\":\"Parse error\"}}\n"
#define LINE_CANCEL_3                                                                          \
    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":3,"   \
    "\"reason\":\"user \\\"stop\\\"\"}}\n"
#define LINE_CANCEL_2                                                                          \
    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":2}}\n"
#define LINE_SENT "{\"jsonrpc\":\"2.0\",\"method\":\"x\",\"params\":{\"a\":[true,null]}}\n"

#define ALL_LINES                                                                              \
    LINE_INITIALIZE LINE_TOOLS_LIST LINE_ESCAPED LINE_INITIALIZED LINE_PROGRESS LINE_RESULT     \
        LINE_NULL_RESULT LINE_ERROR LINE_ERROR_NO_ID LINE_CANCEL_3 LINE_CANCEL_2 LINE_SENT

/* Queues ALL_LINES on `t`, checking the ids 1, 2, 3. */
static void queue_all_lines(McpTransport *t)
{
    int64_t id = 0;
    CHECK_STATUS(mcp_transport_request(
                     t, "initialize",
                     LIT_PTR(" { \"protocolVersion\" : \"2025-06-18\",\n \"capabilities\" : {} } "),
                     LIT_LEN(" { \"protocolVersion\" : \"2025-06-18\",\n \"capabilities\" : {} } "),
                     0, &id),
                 MCP_STATUS_OK);
    CHECK(id == 1);
    CHECK_STATUS(mcp_transport_request(t, "tools/list", NULL, 0, 0, &id), MCP_STATUS_OK);
    CHECK(id == 2);
    CHECK_STATUS(mcp_transport_request(t, "a\"b\\c\n", LIT_PTR("[1, 2]"), LIT_LEN("[1, 2]"), 0,
                                       &id),
                 MCP_STATUS_OK);
    CHECK(id == 3);
    CHECK_STATUS(mcp_transport_notify(t, "notifications/initialized", NULL, 0), MCP_STATUS_OK);
    CHECK_STATUS(mcp_transport_notify(t, "notifications/progress", LIT_PTR("{\"p\": 0.5}"),
                                      LIT_LEN("{\"p\": 0.5}")),
                 MCP_STATUS_OK);
    CHECK_STATUS(mcp_transport_respond(t, LIT_PTR("\"abc\""), 5,
                                       LIT_PTR("{ \"x\" : [ 1 , \"\xc3\xa9\" ] }"),
                                       LIT_LEN("{ \"x\" : [ 1 , \"\xc3\xa9\" ] }")),
                 MCP_STATUS_OK);
    CHECK_STATUS(mcp_transport_respond(t, LIT_PTR("-7"), 2, LIT_PTR(" null "), 6), MCP_STATUS_OK);
    CHECK_STATUS(mcp_transport_respond_error(t, LIT_PTR("5"), 1, -32601, "Method \"x\" not found"),
                 MCP_STATUS_OK);
    CHECK_STATUS(mcp_transport_respond_error(t, NULL, 0, -32700, "Parse error"), MCP_STATUS_OK);
    CHECK_STATUS(mcp_transport_cancel(t, 3, "user \"stop\""), MCP_STATUS_OK);
    CHECK_STATUS(mcp_transport_cancel(t, 2, NULL), MCP_STATUS_OK);
    CHECK_STATUS(SEND_LIT(t, " {\"jsonrpc\" : \"2.0\",\t\"method\":\"x\", \"params\":{\"a\":[true, "
                             "null]}}\r\n"),
                 MCP_STATUS_OK);
}

static void test_sent_lines_are_exact(void)
{
    McpTransport *t = NEW_TRANSPORT();
    queue_all_lines(t);
    EXPECT_OUTPUT(t, ALL_LINES);
    EXPECT_NO_OUTPUT(t);
    mcp_transport_free(t);
}

/* read_output in pieces of `cap` bytes gives the same bytes as take_output. */
static void read_in_pieces(size_t cap)
{
    static const char want[] = ALL_LINES;
    char got[sizeof want];
    uint8_t piece[64];
    size_t total = 0, n, calls = 0;
    McpTransport *t = NEW_TRANSPORT();
    queue_all_lines(t);

    /* cap 0: nothing copied, nothing removed. */
    n = 999;
    CHECK_STATUS(mcp_transport_read_output(t, piece, 0, &n), MCP_STATUS_OK);
    CHECK(n == 0);
    for (;;) {
        n = 999;
        memset(piece, 0xee, sizeof piece);
        CHECK_STATUS(mcp_transport_read_output(t, piece, cap, &n), MCP_STATUS_OK);
        if (n == 0) {
            break;
        }
        if (!CHECK(n <= cap && total + n <= sizeof want - 1)) {
            break;
        }
        CHECK(n == cap || total + n == sizeof want - 1); /* full pieces but the last */
        CHECK(cap == sizeof piece || piece[cap] == 0xee); /* nothing past cap */
        memcpy(got + total, piece, n);
        total += n;
        calls++;
    }
    if (!CHECK(total == sizeof want - 1 && memcmp(got, want, total) == 0)) {
        print_bytes("got ", (const uint8_t *)got, total);
    }
    CHECK(calls == (sizeof want - 1 + cap - 1) / cap);
    EXPECT_NO_OUTPUT(t);
    /* A line queued after a partial read follows the rest. */
    CHECK_STATUS(mcp_transport_notify(t, "a", NULL, 0), MCP_STATUS_OK);
    CHECK_STATUS(mcp_transport_notify(t, "b", NULL, 0), MCP_STATUS_OK);
    CHECK_STATUS(mcp_transport_read_output(t, piece, 5, &n), MCP_STATUS_OK);
    CHECK(n == 5 && memcmp(piece, "{\"jso", 5) == 0);
    CHECK_STATUS(mcp_transport_notify(t, "c", NULL, 0), MCP_STATUS_OK);
    EXPECT_OUTPUT(t, "nrpc\":\"2.0\",\"method\":\"a\"}\n{\"jsonrpc\":\"2.0\",\"method\":\"b\"}\n"
                     "{\"jsonrpc\":\"2.0\",\"method\":\"c\"}\n");
    mcp_transport_free(t);
}

static void test_read_output_in_small_pieces(void)
{
    read_in_pieces(1);
    read_in_pieces(7);
    read_in_pieces(64);
}

/* ---- the peer's lines as events ---- */

static void test_events_from_the_peer(void)
{
    McpTransport *t = NEW_TRANSPORT();
    int64_t id = 0;
    McpEvent ev;
    int i;

    for (i = 1; i <= 3; i++) {
        CHECK_STATUS(mcp_transport_request(t, "m", NULL, 0, 0, &id), MCP_STATUS_OK);
        CHECK(id == i);
    }
    EXPECT_NO_EVENT(t);

    /* The answer to 1, once; again: a stray. */
    CHECK_STATUS(RECEIVE_LIT(t, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"ok\":true}}\r\n"),
                 MCP_STATUS_OK);
    ev = EXPECT_EVENT(t, MCP_EVENT_RESPONSE, 1);
    CHECK_LINE(ev, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"ok\":true}}");
    CHECK(ev.rpc_kind == MCP_RPC_RESPONSE && ev.envelope.rpc_kind == MCP_RPC_RESPONSE);
    CHECK(slice_is(ev.envelope.id, "1") && slice_is(ev.envelope.result, "{\"ok\":true}"));
    CHECK(absent(ev.envelope.method) && absent(ev.envelope.error));
    EXPECT_NO_EVENT(t);
    CHECK_STATUS(RECEIVE_LIT(t, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n"), MCP_STATUS_OK);
    ev = EXPECT_EVENT(t, MCP_EVENT_MESSAGE, -1);
    CHECK(ev.rpc_kind == MCP_RPC_RESPONSE && slice_is(ev.envelope.id, "1"));

    /* Tokens that are not exactly our integer: messages; request 2 stays pending. */
    CHECK_STATUS(RECEIVE_LIT(t, "{\"jsonrpc\":\"2.0\",\"id\":2.0,\"result\":{}}\n"
                                "{\"jsonrpc\":\"2.0\",\"id\":\"2\",\"result\":{}}\n"
                                "{\"jsonrpc\":\"2.0\",\"id\":02,\"result\":{}}\n"
                                "{\"jsonrpc\":\"2.0\",\"id\":2e0,\"result\":{}}\n"),
                 MCP_STATUS_OK);
    ev = EXPECT_EVENT(t, MCP_EVENT_MESSAGE, -1);
    CHECK(ev.rpc_kind == MCP_RPC_RESPONSE && slice_is(ev.envelope.id, "2.0"));
    ev = EXPECT_EVENT(t, MCP_EVENT_MESSAGE, -1);
    CHECK(ev.rpc_kind == MCP_RPC_RESPONSE && slice_is(ev.envelope.id, "\"2\""));
    ev = EXPECT_EVENT(t, MCP_EVENT_INVALID, -1); /* a leading zero is not JSON */
    CHECK(ev.invalid_kind == MCP_MESSAGE_PARSE_ERROR);
    ev = EXPECT_EVENT(t, MCP_EVENT_MESSAGE, -1);
    CHECK(ev.rpc_kind == MCP_RPC_RESPONSE && slice_is(ev.envelope.id, "2e0"));
    EXPECT_NO_EVENT(t);

    /* An error answers request 2, split across three receives. */
    CHECK_STATUS(RECEIVE_LIT(t, "{\"jsonrpc\":\"2.0\",\"id\":2,\"err"), MCP_STATUS_OK);
    EXPECT_NO_EVENT(t);
    CHECK_STATUS(RECEIVE_LIT(t, "or\":{\"code\":-1,\"message\":\"no\"}}"), MCP_STATUS_OK);
    EXPECT_NO_EVENT(t);
    CHECK_STATUS(RECEIVE_LIT(t, "\n"), MCP_STATUS_OK);
    ev = EXPECT_EVENT(t, MCP_EVENT_RESPONSE, 2);
    CHECK(ev.rpc_kind == MCP_RPC_ERROR && slice_is(ev.envelope.id, "2") &&
          slice_is(ev.envelope.error, "{\"code\":-1,\"message\":\"no\"}"));

    /* An error without an id: a message; a batch, even of an answer to 3: a message. */
    CHECK_STATUS(RECEIVE_LIT(t, LINE_ERROR_NO_ID
                             "[{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}]\n"
                             "{\"jsonrpc\":\"2.0\",\"id\":\"r1\",\"method\":\"ping\",\"params\":{}}\n"
                             "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\"}\n"),
                 MCP_STATUS_OK);
    ev = EXPECT_EVENT(t, MCP_EVENT_MESSAGE, -1);
    CHECK(ev.rpc_kind == MCP_RPC_ERROR && ev.envelope.rpc_kind == MCP_RPC_ERROR);
    CHECK(absent(ev.envelope.id) &&
          slice_is(ev.envelope.error, "{\"code\":-32700,\"message\":\"Parse error\"}"));
    ev = EXPECT_EVENT(t, MCP_EVENT_MESSAGE, -1);
    CHECK(ev.rpc_kind == MCP_RPC_BATCH && envelope_absent(&ev.envelope));
    CHECK_LINE(ev, "[{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}]");
    ev = EXPECT_EVENT(t, MCP_EVENT_MESSAGE, -1);
    CHECK(ev.rpc_kind == MCP_RPC_REQUEST && slice_is(ev.envelope.id, "\"r1\"") &&
          slice_is(ev.envelope.method, "\"ping\"") && slice_is(ev.envelope.params, "{}"));
    CHECK(mcp_json_string_eq(ev.envelope.method.data, ev.envelope.method.len, "ping"));
    ev = EXPECT_EVENT(t, MCP_EVENT_MESSAGE, -1);
    CHECK(ev.rpc_kind == MCP_RPC_NOTIFICATION && absent(ev.envelope.id));
    EXPECT_NO_EVENT(t);

    /* Lines that are not messages: each reported, data the line. */
    CHECK_STATUS(RECEIVE_LIT(t, "not json\n{\"a\":1}\n[]\n\n"), MCP_STATUS_OK);
    ev = EXPECT_EVENT(t, MCP_EVENT_INVALID, -1);
    CHECK(ev.invalid_kind == MCP_MESSAGE_PARSE_ERROR);
    CHECK_LINE(ev, "not json");
    ev = EXPECT_EVENT(t, MCP_EVENT_INVALID, -1);
    CHECK(ev.invalid_kind == MCP_MESSAGE_INVALID_JSONRPC);
    CHECK_LINE(ev, "{\"a\":1}");
    ev = EXPECT_EVENT(t, MCP_EVENT_INVALID, -1);
    CHECK(ev.invalid_kind == MCP_MESSAGE_INVALID_JSONRPC);
    CHECK_LINE(ev, "[]");
    EXPECT_NO_EVENT(t); /* an empty line is no line at all (docs/contract.md) */

    /* A line longer than the limit: data NULL, len the bytes received. */
    CHECK_STATUS(mcp_transport_set_max_line_len(t, 17), MCP_STATUS_OK);
    CHECK_STATUS(RECEIVE_LIT(t, "{\"jsonrpc\":\"2.0\",\"method\":\"long\"}\n"
                                "{\"jsonrpc\":\"2.0\"}\n"),
                 MCP_STATUS_OK);
    ev = EXPECT_EVENT(t, MCP_EVENT_INVALID, -1);
    CHECK(ev.invalid_kind == MCP_MESSAGE_TOO_LONG && ev.data == NULL);
    CHECK(ev.len > 17 && ev.len <= LIT_LEN("{\"jsonrpc\":\"2.0\",\"method\":\"long\"}"));
    ev = EXPECT_EVENT(t, MCP_EVENT_INVALID, -1); /* 17 bytes: within the limit */
    CHECK(ev.invalid_kind == MCP_MESSAGE_INVALID_JSONRPC);
    CHECK_LINE(ev, "{\"jsonrpc\":\"2.0\"}");
    CHECK_STATUS(mcp_transport_set_max_line_len(t, SIZE_MAX), MCP_STATUS_OK);

    /* The peer's end: request 3 (only answered inside a batch) fails. */
    CHECK_STATUS(mcp_transport_receive_end(t), MCP_STATUS_OK);
    EXPECT_EVENT(t, MCP_EVENT_REQUEST_FAILED, 3);
    EXPECT_EVENT(t, MCP_EVENT_CLOSED, -1);
    EXPECT_END(t);
    mcp_transport_free(t);
}

/* ---- the queue's bound ---- */

#define LINE_M1 "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\"}\n"
#define LINE_M2 "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"m\"}\n"

static void test_queue_bound(void)
{
    McpTransport *t = NEW_TRANSPORT();
    int64_t id = 0;
    char big[300];
    double start;
    McpEvent ev;

    CHECK_STATUS(mcp_transport_set_max_queued(t, 0), MCP_STATUS_INVALID_ARGUMENT);
    CHECK_STATUS(mcp_transport_set_max_queued(t, 60), MCP_STATUS_OK);
    CHECK_STATUS(mcp_transport_request(t, "m", NULL, 0, 0, &id), MCP_STATUS_OK);
    CHECK(id == 1);
    /* 38 bytes queued: another 38 would pass 60. */
    id = 4242;
    CHECK_STATUS(mcp_transport_request(t, "m", NULL, 0, 0, &id), MCP_STATUS_WOULD_BLOCK);
    CHECK(id == 4242);
    CHECK_STATUS(mcp_transport_request(t, "m", NULL, 0, 20, &id), MCP_STATUS_WOULD_BLOCK);
    CHECK_STATUS(mcp_transport_notify(t, "notifications/x", NULL, 0), MCP_STATUS_WOULD_BLOCK);
    CHECK_STATUS(SEND_LIT(t, "{\"jsonrpc\":\"2.0\",\"method\":\"x\"}"), MCP_STATUS_WOULD_BLOCK);
    CHECK_STATUS(mcp_transport_respond(t, LIT_PTR("1"), 1, LIT_PTR("{\"a\":1}"), 7),
                 MCP_STATUS_WOULD_BLOCK);
    CHECK_STATUS(mcp_transport_respond_error(t, LIT_PTR("1"), 1, -1, "a message"),
                 MCP_STATUS_WOULD_BLOCK);
    /* What still fits is taken: 38 + 22 = 60, the bound exactly. */
    CHECK_STATUS(SEND_LIT(t, "{\"a\":\"0123456789abc\"}"), MCP_STATUS_OK);
    CHECK_STATUS(SEND_LIT(t, "1"), MCP_STATUS_WOULD_BLOCK);
    /* A refused request used no id: the next gets 2. Cancellations bypass the bound. */
    CHECK_STATUS(mcp_transport_cancel(t, 1, "r"), MCP_STATUS_OK);
    EXPECT_OUTPUT(t, LINE_M1 "{\"a\":\"0123456789abc\"}\n"
                             "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
                             "\"params\":{\"requestId\":1,\"reason\":\"r\"}}\n");
    CHECK_STATUS(mcp_transport_request(t, "m", NULL, 0, 30, &id), MCP_STATUS_OK);
    CHECK(id == 2);

    /* A timed-out request's cancellation bypasses the bound too. */
    start = now_ms();
    ev = EXPECT_EVENT_WITHIN(t, 1000, MCP_EVENT_REQUEST_TIMED_OUT, 2);
    CHECK(now_ms() - start < 900);
    EXPECT_OUTPUT(t, LINE_M2 "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
                             "\"params\":{\"requestId\":2,\"reason\":\"request timed out\"}}\n");

    /* One message larger than the bound goes when the queue is empty, alone. */
    memset(big, 'x', sizeof big);
    big[0] = '"';
    big[sizeof big - 1] = '"';
    CHECK_STATUS(mcp_transport_send(t, (const uint8_t *)big, sizeof big), MCP_STATUS_OK);
    CHECK_STATUS(mcp_transport_send(t, (const uint8_t *)big, sizeof big), MCP_STATUS_WOULD_BLOCK);
    CHECK_STATUS(SEND_LIT(t, "1"), MCP_STATUS_WOULD_BLOCK);
    {
        McpBuffer b = {NULL, 0};
        CHECK_STATUS(mcp_transport_take_output(t, &b), MCP_STATUS_OK);
        CHECK(b.len == sizeof big + 1 && memcmp(b.data, big, sizeof big) == 0 &&
              b.data[sizeof big] == '\n');
        mcp_buffer_free(&b);
    }
    CHECK_STATUS(mcp_transport_send(t, (const uint8_t *)big, sizeof big), MCP_STATUS_OK);
    CHECK_STATUS(SEND_LIT(t, "1"), MCP_STATUS_WOULD_BLOCK);
    /* Raising the bound lets more in. */
    CHECK_STATUS(mcp_transport_set_max_queued(t, 1000), MCP_STATUS_OK);
    CHECK_STATUS(SEND_LIT(t, "1"), MCP_STATUS_OK);
    (void)ev;
    mcp_transport_free(t); /* what is still queued is dropped (valgrind: no leak) */
}

/* ---- timeouts and cancellation ---- */

#define CANCELLED_TIMED_OUT(id)                                                                \
    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":" id \
    ",\"reason\":\"request timed out\"}}\n"

static void test_timeouts(void)
{
    McpTransport *t = NEW_TRANSPORT();
    int64_t id = 0;
    double start, took;
    McpEvent ev;

    /* next_event waits for the deadline, not for its own timeout. */
    CHECK_STATUS(mcp_transport_request(t, "slow", NULL, 0, 30, &id), MCP_STATUS_OK);
    CHECK(id == 1);
    EXPECT_OUTPUT(t, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"slow\"}\n");
    start = now_ms();
    EXPECT_EVENT_WITHIN(t, 1000, MCP_EVENT_REQUEST_TIMED_OUT, 1);
    took = now_ms() - start;
    if (!CHECK(took >= 25 && took < 900)) {
        printf("    timed out after %.1f ms, want about 30\n", took);
    }
    EXPECT_OUTPUT(t, CANCELLED_TIMED_OUT("1"));
    EXPECT_NO_EVENT(t);
    CHECK_STATUS(mcp_transport_cancel(t, 1, NULL), MCP_STATUS_INVALID_ARGUMENT); /* timed out */
    /* A late answer is a message. */
    CHECK_STATUS(RECEIVE_LIT(t, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n"), MCP_STATUS_OK);
    EXPECT_EVENT(t, MCP_EVENT_MESSAGE, -1);

    /* Nothing comes: NO_MESSAGE after the timeout, *ev untouched. */
    start = now_ms();
    CHECK(expect_no_event_at(t, 30, MCP_STATUS_NO_MESSAGE, __FILE__, __LINE__));
    took = now_ms() - start;
    if (!CHECK(took >= 29 && took < 900)) {
        printf("    next_event(30) returned after %.1f ms\n", took);
    }

    /* initialize times out but is never cancelled, nor cancellable. */
    CHECK_STATUS(mcp_transport_request(t, "initialize", LIT_PTR("{}"), 2, 20, &id), MCP_STATUS_OK);
    CHECK(id == 2);
    EXPECT_OUTPUT(t, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"initialize\",\"params\":{}}\n");
    CHECK_STATUS(mcp_transport_cancel(t, 2, NULL), MCP_STATUS_INVALID_ARGUMENT);
    CHECK_STATUS(mcp_transport_cancel(t, 2, "r"), MCP_STATUS_INVALID_ARGUMENT);
    EXPECT_NO_OUTPUT(t);
    EXPECT_EVENT_WITHIN(t, 1000, MCP_EVENT_REQUEST_TIMED_OUT, 2);
    EXPECT_NO_OUTPUT(t);

    /* Deadlines passing together: earliest first (ids 4 and 6 have the
     * earlier deadlines though they were sent after 3 and 5). */
    CHECK_STATUS(mcp_transport_request(t, "a", NULL, 0, 100, &id), MCP_STATUS_OK);
    CHECK(id == 3);
    CHECK_STATUS(mcp_transport_request(t, "b", NULL, 0, 50, &id), MCP_STATUS_OK);
    CHECK(id == 4);
    CHECK_STATUS(mcp_transport_request(t, "c", NULL, 0, 100, &id), MCP_STATUS_OK);
    CHECK(id == 5);
    CHECK_STATUS(mcp_transport_request(t, "d", NULL, 0, 50, &id), MCP_STATUS_OK);
    CHECK(id == 6);
    CHECK_STATUS(mcp_transport_request(t, "none", NULL, 0, 0, &id), MCP_STATUS_OK); /* no deadline */
    CHECK(id == 7);
    CHECK_STATUS(mcp_transport_request(t, "cancelled", NULL, 0, 10, &id), MCP_STATUS_OK);
    CHECK(id == 8);
    CHECK_STATUS(mcp_transport_cancel(t, 8, "never mind"), MCP_STATUS_OK);
    CHECK_STATUS(mcp_transport_cancel(t, 8, "never mind"), MCP_STATUS_INVALID_ARGUMENT);
    EXPECT_OUTPUT(t, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"a\"}\n"
                     "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"b\"}\n"
                     "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"c\"}\n"
                     "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"d\"}\n"
                     "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"none\"}\n"
                     "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"cancelled\"}\n"
                     "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{"
                     "\"requestId\":8,\"reason\":\"never mind\"}}\n");
    sleep_ms(150);
    /* A line received comes before the deadlines that passed. */
    CHECK_STATUS(RECEIVE_LIT(t, "{\"jsonrpc\":\"2.0\",\"method\":\"n\"}\n"), MCP_STATUS_OK);
    ev = EXPECT_EVENT(t, MCP_EVENT_MESSAGE, -1);
    CHECK(ev.rpc_kind == MCP_RPC_NOTIFICATION);
    EXPECT_EVENT(t, MCP_EVENT_REQUEST_TIMED_OUT, 4);
    EXPECT_EVENT(t, MCP_EVENT_REQUEST_TIMED_OUT, 6);
    EXPECT_EVENT(t, MCP_EVENT_REQUEST_TIMED_OUT, 3);
    EXPECT_EVENT(t, MCP_EVENT_REQUEST_TIMED_OUT, 5);
    EXPECT_NO_EVENT(t); /* 7 has no deadline, 8 was cancelled */
    EXPECT_OUTPUT(t, CANCELLED_TIMED_OUT("4") CANCELLED_TIMED_OUT("6") CANCELLED_TIMED_OUT("3")
                         CANCELLED_TIMED_OUT("5"));

    /* cancel refuses what is not a pending request of ours, queuing nothing. */
    CHECK_STATUS(mcp_transport_cancel(t, 99, NULL), MCP_STATUS_INVALID_ARGUMENT); /* unknown */
    CHECK_STATUS(mcp_transport_cancel(t, 0, NULL), MCP_STATUS_INVALID_ARGUMENT);
    CHECK_STATUS(mcp_transport_cancel(t, -1, NULL), MCP_STATUS_INVALID_ARGUMENT);
    CHECK_STATUS(mcp_transport_cancel(t, 4, NULL), MCP_STATUS_INVALID_ARGUMENT); /* timed out */
    CHECK_STATUS(RECEIVE_LIT(t, "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}\n"), MCP_STATUS_OK);
    EXPECT_EVENT(t, MCP_EVENT_RESPONSE, 7);
    CHECK_STATUS(mcp_transport_cancel(t, 7, NULL), MCP_STATUS_INVALID_ARGUMENT); /* answered */
    EXPECT_NO_OUTPUT(t);

    /* A cancelled request never times out. */
    CHECK_STATUS(mcp_transport_request(t, "e", NULL, 0, 20, &id), MCP_STATUS_OK);
    CHECK(id == 9);
    CHECK_STATUS(mcp_transport_cancel(t, 9, NULL), MCP_STATUS_OK);
    CHECK(expect_no_event_at(t, 50, MCP_STATUS_NO_MESSAGE, __FILE__, __LINE__));
    mcp_transport_free(t);
}

/* ---- closing ---- */

static void test_close(void)
{
    McpTransport *t = NEW_TRANSPORT();
    int64_t id = 0;
    int i;
    double start, took;
    McpEvent ev;

    /* Ends at the peer's end: answers before it are delivered, the rest fail. */
    for (i = 1; i <= 4; i++) {
        CHECK_STATUS(mcp_transport_request(t, "m", NULL, 0, 0, &id), MCP_STATUS_OK);
    }
    CHECK_STATUS(RECEIVE_LIT(t, "{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}\n"), MCP_STATUS_OK);
    EXPECT_EVENT(t, MCP_EVENT_RESPONSE, 3);
    CHECK_STATUS(mcp_transport_close(t, 100000), MCP_STATUS_OK);
    EXPECT_NO_EVENT(t); /* closing: the grace is long, the peer still there */
    CHECK(expect_no_event_at(t, 20, MCP_STATUS_NO_MESSAGE, __FILE__, __LINE__));
    CHECK_STATUS(RECEIVE_LIT(t, "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}\n"), MCP_STATUS_OK);
    EXPECT_EVENT(t, MCP_EVENT_RESPONSE, 2);
    CHECK_STATUS(mcp_transport_receive_end(t), MCP_STATUS_OK);
    EXPECT_EVENT(t, MCP_EVENT_REQUEST_FAILED, 1);
    EXPECT_EVENT(t, MCP_EVENT_REQUEST_FAILED, 4);
    EXPECT_EVENT(t, MCP_EVENT_CLOSED, -1);
    EXPECT_END(t);
    EXPECT_OUTPUT(t, LINE_M1 LINE_M2 "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"m\"}\n"
                                     "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"m\"}\n");
    mcp_transport_free(t);

    /* Ends at the grace, with the failures in ascending order, whatever the
     * order the requests' deadlines would have. */
    t = NEW_TRANSPORT();
    for (i = 1; i <= 5; i++) {
        CHECK_STATUS(mcp_transport_request(t, "m", NULL, 0, i == 2 ? 0 : (uint32_t)(10000 - i),
                                           &id),
                     MCP_STATUS_OK);
    }
    CHECK_STATUS(mcp_transport_close(t, 30), MCP_STATUS_OK);
    start = now_ms();
    EXPECT_EVENT_WITHIN(t, 1000, MCP_EVENT_REQUEST_FAILED, 1);
    took = now_ms() - start;
    if (!CHECK(took >= 20 && took < 900)) {
        printf("    closed after %.1f ms, want about 30\n", took);
    }
    for (i = 2; i <= 5; i++) {
        ev = EXPECT_EVENT(t, MCP_EVENT_REQUEST_FAILED, i);
    }
    ev = EXPECT_EVENT(t, MCP_EVENT_CLOSED, -1);
    CHECK(ev.exit_code == -1 && ev.term_signal == 0);
    EXPECT_END(t);
    /* The requests' lines stay for take_output (nothing else was queued). */
    {
        uint8_t buf[512];
        size_t n = 0, total = 0;
        do {
            CHECK_STATUS(mcp_transport_read_output(t, buf + total, 10, &n), MCP_STATUS_OK);
            total += n;
        } while (n > 0 && total + 10 <= sizeof buf);
        CHECK(total == 5 * LIT_LEN(LINE_M1));
    }
    mcp_transport_free(t);

    /* Nothing pending: CLOSED alone, at once with a grace of 0. */
    t = NEW_TRANSPORT();
    CHECK_STATUS(mcp_transport_close(t, 0), MCP_STATUS_OK);
    EXPECT_EVENT(t, MCP_EVENT_CLOSED, -1);
    EXPECT_END(t);
    mcp_transport_free(t);
}

/* ---- how long an event's data lives ---- */

static void test_event_data_lifetime(void)
{
    McpTransport *t = NEW_TRANSPORT();
    static const char first[] = "{\"jsonrpc\":\"2.0\",\"id\":\"q\",\"method\":\"tools/call\","
                                "\"params\":{\"name\":\"echo\",\"arguments\":{\"s\":\"hello\"}}}";
    char copy[sizeof first];
    McpEvent ev, second;
    McpBuffer b = {NULL, 0};
    uint8_t piece[32];
    size_t n;
    int i;

    CHECK_STATUS(mcp_transport_receive(t, (const uint8_t *)first, sizeof first - 1), MCP_STATUS_OK);
    CHECK_STATUS(RECEIVE_LIT(t, "\n{\"jsonrpc\":\"2.0\",\"method\":\"second\"}\n"), MCP_STATUS_OK);
    ev = EXPECT_EVENT(t, MCP_EVENT_MESSAGE, -1);
    if (!CHECK(ev.data != NULL && ev.len == sizeof first - 1)) {
        mcp_transport_free(t);
        return;
    }
    memcpy(copy, ev.data, ev.len);

    /* Sends (enough to grow the output queue many times), the output taken
     * and read, poll_fds: none of them is a receiving call. */
    for (i = 0; i < 200; i++) {
        CHECK_STATUS(mcp_transport_respond(t, ev.envelope.id.data, ev.envelope.id.len,
                                           ev.envelope.params.data, ev.envelope.params.len),
                     MCP_STATUS_OK);
        CHECK_STATUS(mcp_transport_notify(t, "notifications/progress", LIT_PTR("{\"i\":1}"), 7),
                     MCP_STATUS_OK);
    }
    CHECK_STATUS(mcp_transport_request(t, "x", NULL, 0, 0, NULL), MCP_STATUS_OK);
    CHECK_STATUS(mcp_transport_read_output(t, piece, sizeof piece, &n), MCP_STATUS_OK);
    CHECK_STATUS(mcp_transport_take_output(t, &b), MCP_STATUS_OK);
    CHECK(b.len > 200 * 50);
    mcp_buffer_free(&b);
    {
        struct pollfd fds[3];
        int32_t timeout;
        CHECK_STATUS(mcp_transport_poll_fds(t, fds, 3, &n, &timeout), MCP_STATUS_OK);
    }
    CHECK(memcmp(ev.data, copy, ev.len) == 0);
    CHECK(slice_is(ev.envelope.id, "\"q\"") && slice_is(ev.envelope.method, "\"tools/call\""));
    CHECK(ev.envelope.params.data > ev.data &&
          ev.envelope.params.data + ev.envelope.params.len <= ev.data + ev.len);

    /* The next receiving call: a new event with its own data. */
    second = EXPECT_EVENT(t, MCP_EVENT_MESSAGE, -1);
    CHECK_LINE(second, "{\"jsonrpc\":\"2.0\",\"method\":\"second\"}");
    CHECK(memcmp(copy, first, sizeof first - 1) == 0); /* the copy is what was sent */
    mcp_transport_free(t);
}

/* ---- descriptor transports ---- */

/* A transport on the descriptors; aborts on failure. */
static McpTransport *open_fds_at(int rd, int wr, uint32_t flags, const char *file, int line)
{
    McpTransport *t = NULL;
    McpStatus st = mcp_transport_open_fds(rd, wr, flags, &t);
    if (!check_at(st == MCP_STATUS_OK && t != NULL, "open_fds", file, line)) {
        printf("    open_fds(%d, %d, %lu) returned %ld (%s)\n", rd, wr, (unsigned long)flags,
               (long)st, status_name(st));
        check_summary();
        exit(1);
    }
    return t;
}

#define OPEN_FDS(rd, wr, flags) open_fds_at((rd), (wr), (flags), __FILE__, __LINE__)

/* Flags of `fd` equal `flags`, and it is open. */
static int untouched(int fd, int flags)
{
    return fd_is_open(fd) && fd_flags(fd) == flags;
}

static void test_open_fds_arguments(void)
{
    int p[2], q[2], bad[2];
    int pf0, pf1;
    McpTransport *t = (McpTransport *)&check_passed_count; /* must stay untouched */

    make_pipe(p);
    pf0 = fd_flags(p[0]);
    pf1 = fd_flags(p[1]);
    /* Two descriptor numbers that are not open: the lowest free ones, which
     * the transport's own wake-up descriptor would get. */
    make_pipe(bad);
    close(bad[0]);
    close(bad[1]);
    CHECK(fd_is_closed(bad[0]) && fd_is_closed(bad[1]));

    CHECK_STATUS(mcp_transport_open_fds(p[0], p[1], 0, NULL), MCP_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(mcp_transport_open_fds(-1, p[1], 0, NULL), MCP_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(mcp_transport_open_fds(-1, p[1], 0, &t), MCP_STATUS_INVALID_ARGUMENT);
    CHECK_STATUS(mcp_transport_open_fds(p[0], -1, 0, &t), MCP_STATUS_INVALID_ARGUMENT);
    CHECK_STATUS(mcp_transport_open_fds(-5, -5, MCP_TRANSPORT_BORROW_FDS, &t),
                 MCP_STATUS_INVALID_ARGUMENT);
    CHECK_STATUS(mcp_transport_open_fds(p[0], p[1], 1u << 1, &t), MCP_STATUS_UNKNOWN_FLAGS);
    CHECK_STATUS(mcp_transport_open_fds(p[0], p[1], 0x80000000u | MCP_TRANSPORT_BORROW_FDS, &t),
                 MCP_STATUS_UNKNOWN_FLAGS);

    errno = 0;
    CHECK_STATUS(mcp_transport_open_fds(bad[0], bad[0], 0, &t), MCP_STATUS_IO_ERROR);
    CHECK(errno == EBADF);
    errno = 0;
    CHECK_STATUS(mcp_transport_open_fds(bad[0], bad[1], MCP_TRANSPORT_BORROW_FDS, &t),
                 MCP_STATUS_IO_ERROR);
    CHECK(errno == EBADF);
    /* One good, one bad: the good one is neither closed nor changed. */
    errno = 0;
    CHECK_STATUS(mcp_transport_open_fds(p[0], bad[0], 0, &t), MCP_STATUS_IO_ERROR);
    CHECK(errno == EBADF);
    errno = 0;
    CHECK_STATUS(mcp_transport_open_fds(bad[0], p[1], 0, &t), MCP_STATUS_IO_ERROR);
    CHECK(errno == EBADF);
    CHECK(t == (McpTransport *)&check_passed_count);
    CHECK(untouched(p[0], pf0) && untouched(p[1], pf1));
    CHECK(!is_nonblocking(p[0]) && !is_nonblocking(p[1]));
    /* No descriptor leaked: the next free number is still the lowest one. */
    make_pipe(q);
    CHECK(q[0] == bad[0] && q[1] == bad[1]);
    close(q[0]);
    close(q[1]);

    /* A transport on descriptors of other kinds: a receiving call of the
     * memory transport is refused. */
    t = OPEN_FDS(p[0], p[1], MCP_TRANSPORT_BORROW_FDS);
    {
        McpBuffer b = {NULL, 0};
        uint8_t buf[8];
        size_t n = 77;
        CHECK_STATUS(RECEIVE_LIT(t, "{}\n"), MCP_STATUS_INVALID_ARGUMENT);
        CHECK_STATUS(mcp_transport_receive_end(t), MCP_STATUS_INVALID_ARGUMENT);
        CHECK_STATUS(mcp_transport_take_output(t, &b), MCP_STATUS_INVALID_ARGUMENT);
        CHECK(b.data == NULL && b.len == 0);
        CHECK_STATUS(mcp_transport_read_output(t, buf, sizeof buf, &n), MCP_STATUS_INVALID_ARGUMENT);
        CHECK(n == 0);
    }
    /* Our own pipe, both ends: the request we send comes back as a message. */
    CHECK_STATUS(mcp_transport_notify(t, "loop", NULL, 0), MCP_STATUS_OK);
    {
        McpEvent ev = EXPECT_EVENT_WITHIN(t, 1000, MCP_EVENT_MESSAGE, -1);
        CHECK_LINE(ev, "{\"jsonrpc\":\"2.0\",\"method\":\"loop\"}");
    }
    CHECK_STATUS(mcp_transport_close(t, 0), MCP_STATUS_OK);
    EXPECT_EVENT_WITHIN(t, 1000, MCP_EVENT_CLOSED, -1);
    mcp_transport_free(t);
    CHECK(untouched(p[0], pf0) && untouched(p[1], pf1));
    close(p[0]);
    close(p[1]);
}

/* A peer on pipes: the transport reads `to_us[0]` and writes `to_peer[1]`. */
typedef struct {
    int to_us[2];
    int to_peer[2];
} Pipes;

static void make_pipes(Pipes *p)
{
    make_pipe(p->to_us);
    make_pipe(p->to_peer);
    set_nonblocking(p->to_peer[0]); /* the peer reads what is there now */
}

static void test_owned_pipes(void)
{
    Pipes p;
    McpTransport *t;
    int64_t id = 0;
    McpEvent ev;

    make_pipes(&p);
    t = OPEN_FDS(p.to_us[0], p.to_peer[1], 0);
    CHECK(is_nonblocking(p.to_us[0]) && is_nonblocking(p.to_peer[1]));

    CHECK_STATUS(mcp_transport_request(t, "ping", NULL, 0, 0, &id), MCP_STATUS_OK);
    CHECK(id == 1);
    CHECK_STATUS(mcp_transport_request(t, "slow", NULL, 0, 300, &id), MCP_STATUS_OK);
    CHECK(id == 2);
    CHECK_STATUS(mcp_transport_request(t, "other", NULL, 0, 0, &id), MCP_STATUS_OK);
    CHECK(id == 3);
    EXPECT_NO_EVENT(t); /* writes the queue */
    PEER_GOT(p.to_peer[0], "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n"
                           "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"slow\"}\n"
                           "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"other\"}\n");
    PEER_WRITE_LIT(p.to_us[1], "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n");
    ev = EXPECT_EVENT_WITHIN(t, 1000, MCP_EVENT_RESPONSE, 1);
    CHECK_LINE(ev, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}");
    /* The timeout's cancellation is written at once. */
    EXPECT_EVENT_WITHIN(t, 1000, MCP_EVENT_REQUEST_TIMED_OUT, 2);
    PEER_GOT(p.to_peer[0], CANCELLED_TIMED_OUT("2"));
    /* The peer's last lines, then its end: request 3 fails, then CLOSED. */
    PEER_WRITE_LIT(p.to_us[1], "{\"jsonrpc\":\"2.0\",\"method\":\"bye\"}");
    close(p.to_us[1]);
    ev = EXPECT_EVENT_WITHIN(t, 1000, MCP_EVENT_MESSAGE, -1);
    CHECK_LINE(ev, "{\"jsonrpc\":\"2.0\",\"method\":\"bye\"}");
    EXPECT_EVENT_WITHIN(t, 1000, MCP_EVENT_REQUEST_FAILED, 3);
    EXPECT_EVENT_WITHIN(t, 1000, MCP_EVENT_CLOSED, -1);
    EXPECT_END(t);
    check_sends_refused(t, MCP_STATUS_CLOSED);
    {
        /* Closing ended the write side: the owned write end is closed. */
        char c;
        int eof;
        CHECK(peer_read_now(p.to_peer[0], &c, 1, &eof) == 0 && eof);
    }
    mcp_transport_free(t);
    CHECK(fd_is_closed(p.to_us[0]) && fd_is_closed(p.to_peer[1]));
    close(p.to_peer[0]);
}

static void test_borrowed_pipes(void)
{
    Pipes p;
    McpTransport *t;
    int f_us, f_peer;

    make_pipes(&p);
    set_nonblocking(p.to_peer[1]); /* already non-blocking: stays so */
    f_us = fd_flags(p.to_us[0]);
    f_peer = fd_flags(p.to_peer[1]);
    t = OPEN_FDS(p.to_us[0], p.to_peer[1], MCP_TRANSPORT_BORROW_FDS);
    CHECK(is_nonblocking(p.to_us[0]) && is_nonblocking(p.to_peer[1]));
    CHECK_STATUS(mcp_transport_notify(t, "n", NULL, 0), MCP_STATUS_OK);
    CHECK_STATUS(mcp_transport_close(t, 5000), MCP_STATUS_OK);
    EXPECT_NO_EVENT(t); /* the queue written; a borrowed write end stays open */
    PEER_GOT(p.to_peer[0], "{\"jsonrpc\":\"2.0\",\"method\":\"n\"}\n");
    {
        char c;
        int eof;
        CHECK(peer_read_now(p.to_peer[0], &c, 1, &eof) == 0 && !eof);
    }
    close(p.to_us[1]); /* the peer's end: CLOSED before the grace */
    EXPECT_EVENT_WITHIN(t, 1000, MCP_EVENT_CLOSED, -1);
    mcp_transport_free(t);
    CHECK(untouched(p.to_us[0], f_us) && !is_nonblocking(p.to_us[0]));
    CHECK(untouched(p.to_peer[1], f_peer) && is_nonblocking(p.to_peer[1]));
    close(p.to_us[0]);
    close(p.to_peer[0]);
    close(p.to_peer[1]);
}

static int sigpipe_pending(void)
{
    sigset_t pending;
    sigemptyset(&pending);
    return sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE);
}

/* The peer stopped reading: no SIGPIPE (its default action would end this
 * program), the transport closes. */
static void test_peer_stops_reading(void)
{
    Pipes p;
    McpTransport *t;
    int sv[2];
    int64_t id = 0;

    CHECK(signal(SIGPIPE, SIG_DFL) != SIG_ERR);
    make_pipes(&p);
    t = OPEN_FDS(p.to_us[0], p.to_peer[1], 0);
    close(p.to_peer[0]);
    CHECK_STATUS(mcp_transport_request(t, "m", NULL, 0, 0, &id), MCP_STATUS_OK);
    EXPECT_EVENT_WITHIN(t, 1000, MCP_EVENT_REQUEST_FAILED, 1);
    EXPECT_EVENT_WITHIN(t, 1000, MCP_EVENT_CLOSED, -1);
    EXPECT_END(t);
    CHECK(!sigpipe_pending());
    check_sends_refused(t, MCP_STATUS_CLOSED);
    close(p.to_us[1]);
    mcp_transport_free(t);
    CHECK(fd_is_closed(p.to_us[0]) && fd_is_closed(p.to_peer[1]));

    /* A socket whose peer is gone altogether. */
    make_socketpair(sv);
    t = OPEN_FDS(sv[0], sv[0], 0);
    close(sv[1]);
    CHECK_STATUS(mcp_transport_request(t, "m", NULL, 0, 0, &id), MCP_STATUS_OK);
    EXPECT_EVENT_WITHIN(t, 1000, MCP_EVENT_REQUEST_FAILED, 1);
    EXPECT_EVENT_WITHIN(t, 1000, MCP_EVENT_CLOSED, -1);
    CHECK(!sigpipe_pending());
    mcp_transport_free(t);
    CHECK(fd_is_closed(sv[0]));

    /* What the peer wrote before it went is delivered, though a write
     * finds it gone first: the answer to 1 is a RESPONSE, not a failure. */
    make_socketpair(sv);
    set_nonblocking(sv[1]);
    t = OPEN_FDS(sv[0], sv[0], 0);
    CHECK_STATUS(mcp_transport_request(t, "a", NULL, 0, 0, &id), MCP_STATUS_OK);
    EXPECT_NO_EVENT(t);
    PEER_GOT(sv[1], "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\"}\n");
    PEER_WRITE_LIT(sv[1], "{\"jsonrpc\":\"2.0\",\"method\":\"bye\"}\n"
                          "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n");
    close(sv[1]);
    CHECK_STATUS(mcp_transport_request(t, "b", NULL, 0, 0, &id), MCP_STATUS_OK); /* queued */
    EXPECT_EVENT_WITHIN(t, 1000, MCP_EVENT_MESSAGE, -1);
    EXPECT_EVENT_WITHIN(t, 1000, MCP_EVENT_RESPONSE, 1);
    EXPECT_EVENT_WITHIN(t, 1000, MCP_EVENT_REQUEST_FAILED, 2);
    EXPECT_EVENT_WITHIN(t, 1000, MCP_EVENT_CLOSED, -1);
    mcp_transport_free(t);

    /* The same on pipes: the peer stops reading but its answer is there. */
    make_pipes(&p);
    t = OPEN_FDS(p.to_us[0], p.to_peer[1], 0);
    CHECK_STATUS(mcp_transport_request(t, "a", NULL, 0, 0, &id), MCP_STATUS_OK);
    EXPECT_NO_EVENT(t);
    PEER_GOT(p.to_peer[0], "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\"}\n");
    PEER_WRITE_LIT(p.to_us[1], "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n");
    close(p.to_peer[0]);
    CHECK_STATUS(mcp_transport_notify(t, "n", NULL, 0), MCP_STATUS_OK);
    EXPECT_EVENT_WITHIN(t, 1000, MCP_EVENT_RESPONSE, 1);
    EXPECT_EVENT_WITHIN(t, 1000, MCP_EVENT_CLOSED, -1);
    CHECK(!sigpipe_pending());
    close(p.to_us[1]);
    mcp_transport_free(t);
}

/* One socket both ways, owned: close() writes the whole queue (more than
 * the socket holds), then shuts the write side: the peer sees every byte
 * then the end of the stream. */
static void test_owned_socket_close_flushes_then_ends(void)
{
    enum { LINES = 40, PAD = 40000 };
    int sv[2];
    McpTransport *t;
    char *params = malloc(PAD + 16);
    char *got = malloc((size_t)LINES * (PAD + 100));
    size_t total = 0, expected = 0;
    int i, eof = 0, rounds = 0;
    double start = now_ms();

    if (!CHECK(params != NULL && got != NULL)) {
        free(params);
        free(got);
        return;
    }
    make_socketpair(sv);
    set_nonblocking(sv[1]);
    t = OPEN_FDS(sv[0], sv[0], 0);
    memcpy(params, "{\"s\":\"", 6);
    memset(params + 6, 'x', PAD);
    memcpy(params + 6 + PAD, "\"}", 2);
    for (i = 0; i < LINES; i++) {
        CHECK_STATUS(mcp_transport_notify(t, "big", (const uint8_t *)params, PAD + 8),
                     MCP_STATUS_OK);
        expected += LIT_LEN("{\"jsonrpc\":\"2.0\",\"method\":\"big\",\"params\":}\n") + PAD + 8;
    }
    CHECK_STATUS(mcp_transport_close(t, 10000), MCP_STATUS_OK);
    CHECK_STATUS(mcp_transport_notify(t, "late", NULL, 0), MCP_STATUS_CLOSED);
    while (!eof && now_ms() - start < 5000) {
        int events_ok;
        McpEvent ev = sentinel_event();
        McpStatus st = mcp_transport_next_event(t, 0, &ev);
        events_ok = st == MCP_STATUS_NO_MESSAGE;
        if (!CHECK(events_ok)) {
            printf("    next_event while flushing: %ld (%s)\n", (long)st, status_name(st));
            break;
        }
        total += peer_read_now(sv[1], got + total, (size_t)LINES * (PAD + 100) - total, &eof);
        rounds++;
    }
    CHECK(eof);
    CHECK(rounds > 1); /* more than the socket's buffer: several writes */
    if (!CHECK(total == expected)) {
        printf("    peer got %lu bytes, want %lu\n", (unsigned long)total, (unsigned long)expected);
    } else {
        size_t at = 0;
        int lines_ok = 1;
        for (i = 0; i < LINES && lines_ok; i++) {
            static const char head[] = "{\"jsonrpc\":\"2.0\",\"method\":\"big\",\"params\":{\"s\":\"";
            lines_ok = memcmp(got + at, head, sizeof head - 1) == 0 &&
                       got[at + sizeof head - 1 + PAD] == '"' &&
                       memcmp(got + at + sizeof head - 1 + PAD, "\"}}\n", 4) == 0;
            at += sizeof head - 1 + PAD + 4;
        }
        CHECK(lines_ok && at == total);
    }
    /* The transport still waits for the peer's end; it comes: CLOSED. */
    EXPECT_NO_EVENT(t);
    PEER_WRITE_LIT(sv[1], "{\"jsonrpc\":\"2.0\",\"method\":\"last\"}\n");
    shutdown(sv[1], SHUT_WR);
    EXPECT_EVENT_WITHIN(t, 1000, MCP_EVENT_MESSAGE, -1);
    EXPECT_EVENT_WITHIN(t, 1000, MCP_EVENT_CLOSED, -1);
    EXPECT_END(t);
    mcp_transport_free(t);
    CHECK(fd_is_closed(sv[0]));
    close(sv[1]);
    free(params);
    free(got);
}

/* One socket both ways, borrowed: never shut down nor closed, flags back. */
static void test_borrowed_socket(void)
{
    int sv[2];
    int flags;
    McpTransport *t;
    int64_t id = 0;
    double start, took;

    make_socketpair(sv);
    set_nonblocking(sv[1]);
    flags = fd_flags(sv[0]);
    t = OPEN_FDS(sv[0], sv[0], MCP_TRANSPORT_BORROW_FDS);
    CHECK(is_nonblocking(sv[0]));
    CHECK_STATUS(mcp_transport_request(t, "m", NULL, 0, 0, &id), MCP_STATUS_OK);
    EXPECT_NO_EVENT(t);
    PEER_GOT(sv[1], "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\"}\n");
    PEER_WRITE_LIT(sv[1], "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n");
    EXPECT_EVENT_WITHIN(t, 1000, MCP_EVENT_RESPONSE, 1);
    CHECK_STATUS(mcp_transport_request(t, "m", NULL, 0, 0, &id), MCP_STATUS_OK);
    CHECK(id == 2);
    CHECK_STATUS(mcp_transport_close(t, 300), MCP_STATUS_OK);
    EXPECT_NO_EVENT(t);
    PEER_GOT(sv[1], "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"m\"}\n"); /* and no end */
    /* The peer stays: CLOSED at the grace. */
    start = now_ms();
    EXPECT_EVENT_WITHIN(t, 1000, MCP_EVENT_REQUEST_FAILED, 2);
    EXPECT_EVENT_WITHIN(t, 1000, MCP_EVENT_CLOSED, -1);
    took = now_ms() - start;
    CHECK(took < 900);
    mcp_transport_free(t);
    CHECK(untouched(sv[0], flags) && !is_nonblocking(sv[0]));
    /* Still ours, both ways. */
    peer_write(sv[0], "x", 1);
    PEER_GOT(sv[1], "x");
    close(sv[0]);
    close(sv[1]);
}

/* ---- poll_fds ---- */

static const struct pollfd *find_fd(const struct pollfd *fds, size_t n, int fd)
{
    size_t i;
    for (i = 0; i < n; i++) {
        if (fds[i].fd == fd) {
            return &fds[i];
        }
    }
    return NULL;
}

/* The descriptor that is not `a` nor `b` (the wake-up), or -1. */
static int other_fd(const struct pollfd *fds, size_t n, int a, int b)
{
    size_t i;
    for (i = 0; i < n; i++) {
        if (fds[i].fd != a && fds[i].fd != b) {
            return fds[i].fd;
        }
    }
    return -1;
}

static void test_poll_fds(void)
{
    Pipes p;
    McpTransport *t;
    struct pollfd fds[3];
    const struct pollfd *e;
    size_t n;
    int32_t timeout;
    int wake = -1, i;
    int64_t id = 0;

    /* A memory transport: no descriptor; the time to its next deadline. */
    t = NEW_TRANSPORT();
    CHECK_STATUS(mcp_transport_poll_fds(t, NULL, 0, &n, &timeout), MCP_STATUS_OK);
    CHECK(n == 0 && timeout == -1);
    CHECK_STATUS(mcp_transport_request(t, "m", NULL, 0, 500, &id), MCP_STATUS_OK);
    CHECK_STATUS(mcp_transport_poll_fds(t, fds, 3, &n, &timeout), MCP_STATUS_OK);
    CHECK(n == 0 && timeout > 0 && timeout <= 500);
    CHECK_STATUS(mcp_transport_close(t, 0), MCP_STATUS_OK);
    CHECK_STATUS(mcp_transport_poll_fds(t, fds, 3, &n, &timeout), MCP_STATUS_OK);
    CHECK(n == 0 && timeout == 0); /* due now */
    EXPECT_EVENT(t, MCP_EVENT_REQUEST_FAILED, 1);
    EXPECT_EVENT(t, MCP_EVENT_CLOSED, -1);
    CHECK_STATUS(mcp_transport_poll_fds(t, fds, 3, &n, &timeout), MCP_STATUS_OK);
    CHECK(n == 0 && timeout == 0);
    mcp_transport_free(t);

    /* Pipes: the read end and the wake-up; POLLOUT only while output waits. */
    make_pipes(&p);
    t = OPEN_FDS(p.to_us[0], p.to_peer[1], 0);
    n = 99;
    CHECK_STATUS(mcp_transport_poll_fds(t, NULL, 0, &n, &timeout), MCP_STATUS_INVALID_ARGUMENT);
    CHECK(n == 2);
    memset(fds, 0x5a, sizeof fds);
    timeout = 777;
    CHECK_STATUS(mcp_transport_poll_fds(t, fds, 1, &n, &timeout), MCP_STATUS_INVALID_ARGUMENT);
    CHECK(n == 2 && timeout == 777 && fds[0].fd == 0x5a5a5a5a); /* outputs untouched */
    CHECK_STATUS(mcp_transport_poll_fds(t, fds, 3, &n, &timeout), MCP_STATUS_OK);
    CHECK(n == 2 && timeout == -1);
    e = find_fd(fds, n, p.to_us[0]);
    CHECK(e != NULL && e->events == POLLIN);
    wake = other_fd(fds, n, p.to_us[0], p.to_us[0]);
    CHECK(wake >= 0 && wake != p.to_peer[1]);
    e = find_fd(fds, n, wake);
    CHECK(e != NULL && e->events == POLLIN);
    CHECK(find_fd(fds, n, p.to_peer[1]) == NULL);
    /* Nothing is ready. */
    for (i = 0; i < (int)n; i++) {
        fds[i].revents = 0;
    }
    CHECK(poll(fds, (nfds_t)n, 0) == 0);

    /* Output queued, a deadline: POLLOUT on the write end, the time to it. */
    CHECK_STATUS(mcp_transport_request(t, "m", NULL, 0, 5000, &id), MCP_STATUS_OK);
    n = 1;
    CHECK_STATUS(mcp_transport_poll_fds(t, fds, 2, &n, &timeout), MCP_STATUS_INVALID_ARGUMENT);
    CHECK(n == 3);
    CHECK_STATUS(mcp_transport_poll_fds(t, fds, 3, &n, &timeout), MCP_STATUS_OK);
    CHECK(n == 3 && timeout > 4000 && timeout <= 5000);
    e = find_fd(fds, n, p.to_peer[1]);
    CHECK(e != NULL && e->events == POLLOUT);
    e = find_fd(fds, n, p.to_us[0]);
    CHECK(e != NULL && e->events == POLLIN);
    CHECK(find_fd(fds, n, wake) != NULL);
    /* An event loop: wait, take every event, ask again. (The request, made
     * after poll_fds, also woke the set.) */
    CHECK(poll(fds, (nfds_t)n, timeout) >= 1 && find_fd(fds, n, p.to_peer[1])->revents == POLLOUT);
    EXPECT_NO_EVENT(t);
    PEER_GOT(p.to_peer[0], "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\"}\n");
    CHECK_STATUS(mcp_transport_poll_fds(t, fds, 3, &n, &timeout), MCP_STATUS_OK);
    CHECK(n == 2 && find_fd(fds, n, p.to_peer[1]) == NULL && timeout > 4000 && timeout <= 5000);
    CHECK(poll(fds, (nfds_t)n, 0) == 0); /* every event taken: nothing ready */

    /* A send after poll_fds makes the set ready (the wake-up), for a loop
     * that waits on it; once its events are taken, the set is quiet again. */
    CHECK_STATUS(mcp_transport_notify(t, "n", NULL, 0), MCP_STATUS_OK);
    CHECK(poll(fds, (nfds_t)n, 1000) == 1 && find_fd(fds, n, wake)->revents == POLLIN);
    EXPECT_NO_EVENT(t);
    PEER_GOT(p.to_peer[0], "{\"jsonrpc\":\"2.0\",\"method\":\"n\"}\n");
    CHECK_STATUS(mcp_transport_poll_fds(t, fds, 3, &n, &timeout), MCP_STATUS_OK);
    CHECK(n == 2);
    for (i = 0; i < (int)n; i++) {
        fds[i].revents = 0;
    }
    if (!CHECK(poll(fds, (nfds_t)n, 0) == 0)) {
        printf("    the set stays ready after every event was taken: the loop would spin\n");
        for (i = 0; i < (int)n; i++) {
            printf("    fd %d (%s) revents %d\n", fds[i].fd, fds[i].fd == wake ? "wake" : "read",
                   fds[i].revents);
        }
    }
    /* The peer's bytes make the read end ready. */
    PEER_WRITE_LIT(p.to_us[1], "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n");
    CHECK(poll(fds, (nfds_t)n, 1000) == 1 && find_fd(fds, n, p.to_us[0])->revents == POLLIN);
    EXPECT_EVENT(t, MCP_EVENT_RESPONSE, 1);
    EXPECT_NO_EVENT(t);
    CHECK_STATUS(mcp_transport_poll_fds(t, fds, 3, &n, &timeout), MCP_STATUS_OK);
    CHECK(n == 2 && timeout == -1);

    /* Closed: only the wake-up, and 0. */
    close(p.to_us[1]);
    EXPECT_EVENT_WITHIN(t, 1000, MCP_EVENT_CLOSED, -1);
    CHECK_STATUS(mcp_transport_poll_fds(t, fds, 3, &n, &timeout), MCP_STATUS_OK);
    CHECK(n == 1 && fds[0].fd == wake && fds[0].events == POLLIN && timeout == 0);
    mcp_transport_free(t);
    close(p.to_peer[0]);

    /* One socket both ways: one entry, POLLIN|POLLOUT while output waits. */
    {
        int sv[2];
        make_socketpair(sv);
        t = OPEN_FDS(sv[0], sv[0], 0);
        CHECK_STATUS(mcp_transport_notify(t, "n", NULL, 0), MCP_STATUS_OK);
        CHECK_STATUS(mcp_transport_poll_fds(t, fds, 3, &n, &timeout), MCP_STATUS_OK);
        CHECK(n == 2);
        e = find_fd(fds, n, sv[0]);
        CHECK(e != NULL && e->events == (POLLIN | POLLOUT));
        EXPECT_NO_EVENT(t);
        CHECK_STATUS(mcp_transport_poll_fds(t, fds, 3, &n, &timeout), MCP_STATUS_OK);
        e = find_fd(fds, n, sv[0]);
        CHECK(n == 2 && e != NULL && e->events == POLLIN);
        close(sv[1]);
        EXPECT_EVENT_WITHIN(t, 1000, MCP_EVENT_CLOSED, -1);
        mcp_transport_free(t);
    }
}

/* An answer that arrived before the transport looked, but after the
 * deadline passed, is the request's RESPONSE, not a timeout: what is
 * already there is read before deadlines are judged. */
static void test_an_arrived_answer_beats_its_passed_deadline(void)
{
    int sv[2];
    McpTransport *t;
    int64_t id = 0;
    char buf[256];
    int eof = 0;

    make_socketpair(sv);
    set_nonblocking(sv[1]);
    t = OPEN_FDS(sv[0], sv[0], 0);
    CHECK_STATUS(mcp_transport_request(t, "slow", NULL, 0, 20, &id), MCP_STATUS_OK);
    EXPECT_NO_EVENT(t); /* writes the request */
    CHECK(peer_read_now(sv[1], buf, sizeof buf, &eof) > 0);
    PEER_WRITE_LIT(sv[1], "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n");
    sleep_ms(60); /* the deadline passes with the answer unread */
    EXPECT_EVENT(t, MCP_EVENT_RESPONSE, 1);
    EXPECT_NO_EVENT(t);
    close(sv[1]); /* the peer's end first: free has nothing to wait for */
    mcp_transport_free(t);
}

int main(void)
{
    test_null_arguments();
    test_closed();
    test_sent_lines_are_exact();
    test_read_output_in_small_pieces();
    test_events_from_the_peer();
    test_queue_bound();
    test_timeouts();
    test_close();
    test_event_data_lifetime();
    test_open_fds_arguments();
    test_owned_pipes();
    test_borrowed_pipes();
    test_peer_stops_reading();
    test_an_arrived_answer_beats_its_passed_deadline();
    test_owned_socket_close_flushes_then_ends();
    test_borrowed_socket();
    test_poll_fds();
    return check_summary();
}
