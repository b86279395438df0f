/*
 * Panics never cross the C boundary. Linked against a library built with the
 * cargo feature `panic-injection` (tests/c_abi/panics.rs builds it), which
 * exports the test-only mcp_test_inject_panic (not in the public header).
 *
 * The arguments are the functions to arm: every function that
 * include/mcp_stdio.h declares (tests/c_abi/panics.rs reads them from the
 * header). Each one is armed in turn, called, and must return its panic value
 * (MCP_STATUS_PANIC, NULL, 0, a fixed string, nothing); a name without a case
 * in PANIC_CASES below, or a case the arguments do not name, is a failure.
 * Around each armed call, "test_panic: armed <name>" and "test_panic: disarmed
 * <name>" go to stderr: the harness checks that Rust's panic hook printed
 * "injected panic in <name>" between the two, i.e. that the call did panic.
 *
 * Then, for the entry points in detail:
 *   - the process lives on after every panic;
 *   - a reader whose call panicked refuses every further reader call with
 *     MCP_STATUS_POISONED (buffered_len says 0) and can still be freed;
 *   - other readers (on this thread and another one) are unaffected;
 *   - nothing leaks (the harness runs this under valgrind).
 * Rust's panic hook prints "injected panic in ..." on stderr: expected.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test_util.h"

/* Test only: exported by the library built with `--features panic-injection`.
 * Makes the entry point `name` panic on every later call from this thread;
 * NULL disarms. */
void mcp_test_inject_panic(const char *name);

/* ---- helpers ---- */

static void make_pipe(int fds[2])
{
    if (!CHECK(pipe(fds) == 0)) {
        check_summary();
        exit(1);
    }
}

static void set_nonblocking(int fd)
{
    int flags = fcntl(fd, F_GETFL);
    CHECK(flags != -1 && fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0);
}

/* The pipe `fd` (non-blocking) has nothing to read. */
static int pipe_is_empty(int fd)
{
    char c;
    ssize_t n = read(fd, &c, 1);
    return n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK);
}

static int sigpipe_blocked(void)
{
    sigset_t now;
    sigemptyset(&now);
    if (pthread_sigmask(SIG_BLOCK, NULL, &now) != 0) {
        return -1;
    }
    return sigismember(&now, SIGPIPE);
}

/* A reader holding one complete line "[1]" and the partial line "[2". */
static McpLineReader *loaded_reader(void)
{
    McpLineReader *r = NEW_READER();
    CHECK_STATUS(FEED_LIT(r, "[1]\n[2"), MCP_STATUS_OK);
    CHECK_BUFFERED(r, 6);
    return r;
}

/* A loaded reader is intact: "[1]", then "[2]" after more bytes. */
static void check_reader_intact(McpLineReader *r)
{
    CHECK_BUFFERED(r, 6);
    EXPECT_JSON(r, "[1]");
    EXPECT_NONE(r);
    CHECK_STATUS(FEED_LIT(r, "]\n"), MCP_STATUS_OK);
    EXPECT_JSON(r, "[2]");
    EXPECT_NONE(r);
    CHECK_BUFFERED(r, 0);
}

/* ---- the reader calls that go through the poison check ---- */

typedef struct {
    const char *name;      /* the entry point (its fault point's name) */
    McpStatus healthy;     /* what the call returns on a fresh loaded reader */
} ReaderCall;

static int g_rd = -1; /* read end of a pipe holding nothing, for read_fd */

static const ReaderCall READER_CALLS[] = {
    {"mcp_line_reader_set_max_line_len", MCP_STATUS_OK},
    {"mcp_line_reader_set_flags", MCP_STATUS_OK},
    {"mcp_line_reader_feed", MCP_STATUS_OK},
    {"mcp_line_reader_next_message", MCP_STATUS_OK},
    {"mcp_line_reader_finish", MCP_STATUS_OK},
    {"mcp_line_reader_read_fd", MCP_STATUS_WOULD_BLOCK},
};
#define N_READER_CALLS (sizeof READER_CALLS / sizeof READER_CALLS[0])

/* Calls reader function `i` on `r`. `*out` is left for the caller to inspect. */
static McpStatus call_reader(size_t i, McpLineReader *r, McpMessage *out, size_t *nread)
{
    switch (i) {
    case 0:
        return mcp_line_reader_set_max_line_len(r, 1000);
    case 1:
        return mcp_line_reader_set_flags(r, MCP_READER_JSONRPC);
    case 2:
        return FEED_LIT(r, "{}\n");
    case 3:
        return mcp_line_reader_next_message(r, out);
    case 4:
        return mcp_line_reader_finish(r);
    default:
        return mcp_line_reader_read_fd(r, g_rd, nread);
    }
}

/* Every reader function refuses `r`: MCP_STATUS_POISONED, nothing written to
 * *out, buffered_len 0. */
static void check_poisoned(McpLineReader *r, const char *after)
{
    size_t i;
    for (i = 0; i < N_READER_CALLS; i++) {
        McpMessage m = sentinel_message();
        size_t nread = 12345;
        McpStatus st = call_reader(i, r, &m, &nread);
        if (!CHECK(st == MCP_STATUS_POISONED)) {
            printf("    after a panic in %s, %s returned %ld (%s), want MCP_STATUS_POISONED\n",
                   after, READER_CALLS[i].name, (long)st, status_name(st));
        }
        CHECK(message_is_sentinel(&m));
        if (i == N_READER_CALLS - 1) {
            CHECK(nread == 0); /* documented: *nread is 0 when nothing was read */
        }
    }
    /* Still poisoned after all those calls, even for an empty chunk; the
     * envelope is refused too, *out untouched. */
    {
        McpEnvelope e;
        memset(&e, 0x5a, sizeof e);
        CHECK_STATUS(mcp_line_reader_envelope(r, &e), MCP_STATUS_POISONED);
        CHECK(e.rpc_kind == 0x5a5a5a5a);
    }
    CHECK(mcp_line_reader_buffered_len(r) == 0);
    CHECK_STATUS(mcp_line_reader_feed(r, NULL, 0), MCP_STATUS_POISONED);
}

static void test_panic_in_each_reader_call_poisons_only_that_reader(void)
{
    size_t i;
    for (i = 0; i < N_READER_CALLS; i++) {
        const char *name = READER_CALLS[i].name;
        McpLineReader *victim = loaded_reader();
        McpLineReader *bystander = loaded_reader();
        McpLineReader *second = loaded_reader();
        McpMessage m = sentinel_message();
        size_t nread = 777;
        McpStatus st;

        mcp_test_inject_panic(name);
        st = call_reader(i, victim, &m, &nread);
        if (!CHECK(st == MCP_STATUS_PANIC)) {
            printf("    %s with an injected panic returned %ld (%s)\n", name, (long)st,
                   status_name(st));
        }
        CHECK(message_is_sentinel(&m));
        /* Armed until disarmed: a second call panics too (the process still lives). */
        CHECK_STATUS(call_reader(i, second, &m, &nread), MCP_STATUS_PANIC);
        /* Only the armed entry point panics: the others work meanwhile. */
        CHECK(mcp_line_reader_buffered_len(bystander) == 6);
        mcp_test_inject_panic(NULL);

        check_poisoned(victim, name);
        check_poisoned(second, name);
        mcp_line_reader_free(victim); /* freeing a poisoned reader works (valgrind: no leak) */
        mcp_line_reader_free(second);

        /* Another reader is unaffected, before and after the call. */
        check_reader_intact(bystander);
        st = call_reader(i, bystander, &m, &nread);
        CHECK(st != MCP_STATUS_PANIC && st != MCP_STATUS_POISONED);
        mcp_line_reader_free(bystander);

        /* Disarmed: the same call on a fresh reader works. */
        {
            McpLineReader *fresh = loaded_reader();
            McpMessage fm = sentinel_message();
            size_t fresh_n = 99;
            st = call_reader(i, fresh, &fm, &fresh_n);
            if (!CHECK(st == READER_CALLS[i].healthy)) {
                printf("    %s after disarming returned %ld (%s)\n", name, (long)st,
                       status_name(st));
            }
            mcp_line_reader_free(fresh);
        }
    }
}

/* ---- every function of the header, armed in turn ---- */

/* The markers around one armed call, on stderr (unbuffered, like the panic
 * hook's message, so the order holds): the harness wants the hook's
 * "injected panic in <name>" between them. */
static void arm(const char *name)
{
    fprintf(stderr, "test_panic: armed %s\n", name);
    mcp_test_inject_panic(name);
}

static void disarm(const char *name)
{
    mcp_test_inject_panic(NULL);
    fprintf(stderr, "test_panic: disarmed %s\n", name);
}

static void want_panic_status(const char *name, McpStatus st)
{
    if (!CHECK(st == MCP_STATUS_PANIC)) {
        printf("    %s, armed, returned %ld (%s), want its panic value MCP_STATUS_PANIC\n", name,
               (long)st, status_name(st));
    }
}

/* The reader calls of READER_CALLS, on a loaded reader: MCP_STATUS_PANIC,
 * *out untouched. */
static void armed_reader_call(const char *name)
{
    size_t i = 0;
    McpLineReader *r;
    McpMessage m = sentinel_message();
    size_t nread = 777;
    McpStatus st;

    while (i < N_READER_CALLS && strcmp(READER_CALLS[i].name, name) != 0) {
        i++;
    }
    if (!CHECK(i < N_READER_CALLS)) {
        printf("    %s is not in READER_CALLS\n", name);
        return;
    }
    r = loaded_reader();
    arm(name);
    st = call_reader(i, r, &m, &nread);
    disarm(name);
    want_panic_status(name, st);
    CHECK(message_is_sentinel(&m));
    mcp_line_reader_free(r);
}

static void armed_new(const char *name)
{
    McpLineReader *r;
    arm(name);
    r = mcp_line_reader_new();
    disarm(name);
    if (!CHECK(r == NULL)) {
        printf("    %s, armed, returned a reader, want its panic value NULL\n", name);
        mcp_line_reader_free(r);
    }
}

static void armed_buffered_len(const char *name)
{
    McpLineReader *r = loaded_reader(); /* 6 bytes buffered */
    size_t n;
    arm(name);
    n = mcp_line_reader_buffered_len(r);
    disarm(name);
    if (!CHECK(n == 0)) {
        printf("    %s, armed, returned %lu, want its panic value 0\n", name, (unsigned long)n);
    }
    mcp_line_reader_free(r);
}

static void armed_free(const char *name)
{
    McpLineReader *r = loaded_reader();
    arm(name);
    mcp_line_reader_free(r); /* returns nothing; valgrind and ASan check it freed */
    disarm(name);
    CHECK(1); /* still alive */
}

/* A sentinel McpEnvelope has every byte 0x5a; compared field by field (the
 * padding after rpc_kind is unspecified once the library writes it). */
static int slice_untouched(McpSlice s)
{
    McpSlice want;
    memset(&want, 0x5a, sizeof want);
    return s.data == want.data && s.len == want.len;
}

static int envelope_untouched(const McpEnvelope *e)
{
    return e->rpc_kind == 0x5a5a5a5a && slice_untouched(e->id) && slice_untouched(e->method) &&
           slice_untouched(e->params) && slice_untouched(e->result) && slice_untouched(e->error);
}

static void armed_envelope_parse(const char *name)
{
    McpEnvelope e;
    McpStatus st;
    memset(&e, 0x5a, sizeof e);
    arm(name);
    st = mcp_envelope_parse(LIT_PTR("{\"jsonrpc\":\"2.0\",\"method\":\"m\"}"),
                            LIT_LEN("{\"jsonrpc\":\"2.0\",\"method\":\"m\"}"), &e);
    disarm(name);
    want_panic_status(name, st);
    CHECK(envelope_untouched(&e));
}

/* Reading the envelope changes nothing: a panic there leaves the reader usable. */
static void armed_line_reader_envelope(const char *name)
{
    McpLineReader *r = loaded_reader();
    McpEnvelope e;
    McpStatus st;
    memset(&e, 0x5a, sizeof e);
    arm(name);
    st = mcp_line_reader_envelope(r, &e);
    disarm(name);
    want_panic_status(name, st);
    CHECK(envelope_untouched(&e));
    check_reader_intact(r);
    CHECK_STATUS(mcp_line_reader_envelope(r, &e), MCP_STATUS_OK);
    mcp_line_reader_free(r);
}

/* The panic value is false, like a token that is not equal: only the panic
 * hook's message tells that it panicked. */
static void armed_json_string_eq(const char *name)
{
    bool eq;
    arm(name);
    eq = mcp_json_string_eq(LIT_PTR("\"m\""), 3, "m");
    disarm(name);
    if (!CHECK(!eq)) {
        printf("    %s, armed, returned true, want its panic value false\n", name);
    }
    CHECK(mcp_json_string_eq(LIT_PTR("\"m\""), 3, "m"));
}

static void armed_encode(const char *name)
{
    McpBuffer buf;
    McpStatus st;
    /* A distinctive value that must survive the call (never freed: not ours). */
    buf.data = (uint8_t *)&check_passed_count;
    buf.len = 4242;
    arm(name);
    st = mcp_encode(LIT_PTR("[1]"), LIT_LEN("[1]"), 0, &buf);
    disarm(name);
    want_panic_status(name, st);
    CHECK(buf.data == (uint8_t *)&check_passed_count && buf.len == 4242);
}

static void armed_encode_to(const char *name)
{
    uint8_t out[8] = {'x', 'x', 'x', 'x', 'x', 'x', 'x', 'x'};
    size_t written = 777;
    McpStatus st;
    arm(name);
    st = mcp_encode_to(LIT_PTR("[1]"), LIT_LEN("[1]"), 0, out, sizeof out, &written);
    disarm(name);
    want_panic_status(name, st);
    CHECK(written == 777 && out[0] == 'x'); /* the panic came before any write */
}

static void armed_encode_bound(const char *name)
{
    size_t n;
    arm(name);
    n = mcp_encode_bound(3, 0);
    disarm(name);
    if (!CHECK(n == SIZE_MAX)) {
        printf("    %s, armed, returned %zu, want its panic value SIZE_MAX\n", name, n);
    }
}

static void armed_buffer_free(const char *name)
{
    McpBuffer buf = {NULL, 0};
    CHECK_STATUS(mcp_encode(LIT_PTR("[1]"), LIT_LEN("[1]"), 0, &buf), MCP_STATUS_OK);
    arm(name);
    mcp_buffer_free(&buf); /* returns nothing */
    disarm(name);
    CHECK(1); /* still alive */
    /* A no-op if the armed call freed and reset the buffer; frees it if not. */
    mcp_buffer_free(&buf);
    CHECK(buf.data == NULL && buf.len == 0);
}

static void armed_write_all(const char *name)
{
    int fds[2];
    McpStatus st;
    make_pipe(fds);
    arm(name);
    st = mcp_write_all(fds[1], LIT_PTR("[1]\n"), 4);
    disarm(name);
    want_panic_status(name, st);
    close(fds[0]);
    close(fds[1]);
}

static void armed_write_all_deadline(const char *name)
{
    int fds[2];
    size_t written = 12345;
    McpStatus st;
    make_pipe(fds);
    arm(name);
    st = mcp_write_all_deadline(fds[1], LIT_PTR("[1]\n"), 4, 1000, &written);
    disarm(name);
    want_panic_status(name, st);
    CHECK(written == 12345); /* the panic came before any write: the count untouched */
    close(fds[0]);
    close(fds[1]);
}

static void armed_status_str(const char *name)
{
    const char *s;
    arm(name);
    s = mcp_status_str(MCP_STATUS_OK);
    disarm(name);
    /* src/ffi/status.rs: the panic value is "unknown status code" (MCP_STATUS_OK's is "ok"). */
    if (!CHECK(s != NULL && strcmp(s, "unknown status code") == 0)) {
        printf("    %s, armed, returned \"%s\", want its panic value \"unknown status code\"\n",
               name, s != NULL ? s : "(NULL)");
    }
}

/* The version functions' panic values are the versions themselves
 * (src/ffi/version.rs): only the panic hook's message tells that they panicked. */
static void armed_version(const char *name)
{
    const char *v;
    arm(name);
    v = mcp_stdio_version();
    disarm(name);
    if (!CHECK(v != NULL && strcmp(v, MCP_TEST_CRATE_VERSION) == 0)) {
        printf("    %s, armed, returned \"%s\", want its panic value \"%s\"\n", name,
               v != NULL ? v : "(NULL)", MCP_TEST_CRATE_VERSION);
    }
}

static void armed_simd_level(const char *name)
{
    const char *v;
    arm(name);
    v = mcp_stdio_simd_level();
    disarm(name);
    if (!CHECK(v != NULL && strcmp(v, "scalar") == 0)) {
        printf("    %s, armed, returned \"%s\", want its panic value \"scalar\"\n", name,
               v != NULL ? v : "(NULL)");
    }
}

static void armed_abi_version(const char *name)
{
    uint32_t v;
    arm(name);
    v = mcp_stdio_abi_version();
    disarm(name);
    if (!CHECK(v == MCP_STDIO_ABI_VERSION)) {
        printf("    %s, armed, returned %lu, want its panic value %lu\n", name, (unsigned long)v,
               (unsigned long)MCP_STDIO_ABI_VERSION);
    }
}

/* ---- the transport: every call but new, open_fds and free takes its lock;
 * a panic there poisons it ---- */

/* A memory transport with request 1 pending, one line received and not yet
 * taken, and output queued: every call below succeeds on it. */
static McpTransport *loaded_transport(void)
{
    McpTransport *t = mcp_transport_new();
    int64_t id = 0;
    if (!CHECK(t != NULL)) {
        check_summary();
        exit(1);
    }
    CHECK_STATUS(mcp_transport_request(t, "m", NULL, 0, 0, &id), MCP_STATUS_OK);
    CHECK(id == 1);
    CHECK_STATUS(mcp_transport_receive(t, LIT_PTR("{\"jsonrpc\":\"2.0\",\"method\":\"n\"}\n"),
                                       LIT_LEN("{\"jsonrpc\":\"2.0\",\"method\":\"n\"}\n")),
                 MCP_STATUS_OK);
    return t;
}

/* Everything a transport call may write, sentinel-filled. */
typedef struct {
    McpEvent ev;
    McpBuffer buf;
    int64_t id;
    size_t n;
    int32_t timeout;
    struct pollfd fds[3];
    uint8_t bytes[64];
} TransportOuts;

static void sentinel_outs(TransportOuts *o)
{
    memset(o, 0x5a, sizeof *o);
}

/* Field by field (padding is unspecified once the library writes a struct);
 * `n` is not compared: a count, written on every return that is not a panic. */
static int outs_untouched(const TransportOuts *o)
{
    TransportOuts s;
    size_t i;
    int ok;
    sentinel_outs(&s);
    ok = o->ev.kind == s.ev.kind && o->ev.request_id == s.ev.request_id &&
         o->ev.data == s.ev.data && o->ev.len == s.ev.len && o->buf.data == s.buf.data &&
         o->buf.len == s.buf.len && o->id == s.id && o->timeout == s.timeout &&
         memcmp(o->bytes, s.bytes, sizeof s.bytes) == 0;
    for (i = 0; i < 3; i++) {
        ok = ok && o->fds[i].fd == s.fds[i].fd && o->fds[i].events == s.fds[i].events;
    }
    return ok;
}

static const char *const TRANSPORT_CALLS[] = {
    "mcp_transport_set_max_line_len",
    "mcp_transport_set_max_queued",
    "mcp_transport_send",
    "mcp_transport_request",
    "mcp_transport_notify",
    "mcp_transport_respond",
    "mcp_transport_respond_error",
    "mcp_transport_cancel",
    "mcp_transport_close",
    "mcp_transport_receive",
    "mcp_transport_receive_end",
    "mcp_transport_take_output",
    "mcp_transport_read_output",
    "mcp_transport_next_event",
    "mcp_transport_next_deadline",
    "mcp_transport_request_with",
    "mcp_transport_poll_fds",
};
#define N_TRANSPORT_CALLS (sizeof TRANSPORT_CALLS / sizeof TRANSPORT_CALLS[0])

/* Calls transport function `i` on `t` with valid arguments (MCP_STATUS_OK
 * on a loaded transport), or, with `null_args`, with every other pointer
 * NULL (a poisoned transport is refused before its arguments are looked at). */
static McpStatus call_transport(size_t i, McpTransport *t, TransportOuts *o, int null_args)
{
    switch (i) {
    case 0:
        return mcp_transport_set_max_line_len(t, null_args ? 0 : 1000);
    case 1:
        return mcp_transport_set_max_queued(t, null_args ? 0 : 1000);
    case 2:
        return null_args ? mcp_transport_send(t, NULL, 5) : mcp_transport_send(t, LIT_PTR("{}"), 2);
    case 3:
        return mcp_transport_request(t, null_args ? NULL : "m", NULL, 0, 0, &o->id);
    case 4:
        return mcp_transport_notify(t, null_args ? NULL : "n", NULL, 0);
    case 5:
        return null_args ? mcp_transport_respond(t, NULL, 1, NULL, 2)
                         : mcp_transport_respond(t, LIT_PTR("7"), 1, LIT_PTR("{}"), 2);
    case 6:
        return mcp_transport_respond_error(t, LIT_PTR("7"), 1, -1, null_args ? NULL : "x");
    case 7:
        return mcp_transport_cancel(t, null_args ? 99 : 1, NULL);
    case 8:
        return mcp_transport_close(t, 0);
    case 9:
        return null_args ? mcp_transport_receive(t, NULL, 3)
                         : mcp_transport_receive(t, LIT_PTR("[1]\n"), 4);
    case 10:
        return mcp_transport_receive_end(t);
    case 11:
        return mcp_transport_take_output(t, null_args ? NULL : &o->buf);
    case 12:
        return null_args ? mcp_transport_read_output(t, NULL, 5, &o->n)
                         : mcp_transport_read_output(t, o->bytes, sizeof o->bytes, &o->n);
    case 13:
        return mcp_transport_next_event(t, 0, null_args ? NULL : &o->ev);
    case 14:
        return mcp_transport_next_deadline(t, null_args ? NULL : &o->timeout);
    case 15:
        return mcp_transport_request_with(t, null_args ? NULL : "m", NULL, 0, 0,
                                          MCP_REQUEST_PROGRESS, 0, &o->id);
    default:
        return null_args ? mcp_transport_poll_fds(t, NULL, 1, &o->n, NULL)
                         : mcp_transport_poll_fds(t, o->fds, 3, &o->n, &o->timeout);
    }
}

/* Every transport call refuses `t` with MCP_STATUS_POISONED, whatever its
 * other arguments, writing nothing but the counts (0). */
static void check_transport_poisoned(McpTransport *t, const char *after)
{
    size_t i;
    int null_args;
    for (null_args = 0; null_args <= 1; null_args++) {
        for (i = 0; i < N_TRANSPORT_CALLS; i++) {
            TransportOuts o;
            McpStatus st;
            sentinel_outs(&o);
            st = call_transport(i, t, &o, null_args);
            if (!CHECK(st == MCP_STATUS_POISONED)) {
                printf("    after a panic in %s, %s%s returned %ld (%s), want "
                       "MCP_STATUS_POISONED\n",
                       after, TRANSPORT_CALLS[i], null_args ? " (NULL arguments)" : "", (long)st,
                       status_name(st));
            }
            CHECK(outs_untouched(&o));
            if (i == 12 || i == 16) {
                CHECK(o.n == 0); /* read_output's and poll_fds' count: 0 */
            }
        }
    }
}

/* A transport call armed: its panic value, outputs untouched (the count
 * too: the panic came before it was written), the transport poisoned for
 * every call but free; other transports unaffected. */
static void armed_transport_call(const char *name)
{
    size_t i = 0;
    McpTransport *victim, *bystander;
    TransportOuts o;
    McpStatus st;

    while (i < N_TRANSPORT_CALLS && strcmp(TRANSPORT_CALLS[i], name) != 0) {
        i++;
    }
    if (!CHECK(i < N_TRANSPORT_CALLS)) {
        printf("    %s is not in TRANSPORT_CALLS\n", name);
        return;
    }
    victim = loaded_transport();
    bystander = loaded_transport();
    sentinel_outs(&o);
    arm(name);
    st = call_transport(i, victim, &o, 0);
    disarm(name);
    want_panic_status(name, st);
    CHECK(outs_untouched(&o) && o.n == (size_t)0x5a5a5a5a5a5a5a5aull);
    check_transport_poisoned(victim, name);
    mcp_transport_free(victim); /* a poisoned transport is freed (valgrind: no leak) */

    /* The same call on another transport works. */
    sentinel_outs(&o);
    st = call_transport(i, bystander, &o, 0);
    if (!CHECK(st == MCP_STATUS_OK)) {
        printf("    %s on another transport returned %ld (%s)\n", name, (long)st,
               status_name(st));
    }
    if (i == 11) {
        mcp_buffer_free(&o.buf);
    }
    mcp_transport_free(bystander);
}

static void armed_transport_new(const char *name)
{
    McpTransport *t;
    arm(name);
    t = mcp_transport_new();
    disarm(name);
    if (!CHECK(t == NULL)) {
        printf("    %s, armed, returned a transport, want its panic value NULL\n", name);
        mcp_transport_free(t);
    }
}

/* The descriptors are neither taken nor changed. */
static void armed_transport_open_fds(const char *name)
{
    int fds[2];
    int flags0, flags1;
    McpTransport *t = (McpTransport *)&check_passed_count;
    McpStatus st;
    make_pipe(fds);
    flags0 = fcntl(fds[0], F_GETFL);
    flags1 = fcntl(fds[1], F_GETFL);
    arm(name);
    st = mcp_transport_open_fds(fds[0], fds[1], 0, &t);
    disarm(name);
    want_panic_status(name, st);
    CHECK(t == (McpTransport *)&check_passed_count);
    CHECK(fcntl(fds[0], F_GETFL) == flags0 && fcntl(fds[1], F_GETFL) == flags1);
    close(fds[0]);
    close(fds[1]);
}

/* Frees anyway (the fault point comes after the transport is taken apart;
 * valgrind and ASan check that nothing leaks). */
static void armed_transport_free(const char *name)
{
    McpTransport *t = loaded_transport();
    arm(name);
    mcp_transport_free(t);
    disarm(name);
    CHECK(1); /* still alive */
}

/* ---- spawning: McpCommand, mcp_transport_spawn, pid, stderr_dropped,
 * open_stdio ---- */

/* No child of this process is left (running or unreaped). */
static int no_child_left(void)
{
    errno = 0;
    return waitpid(-1, NULL, WNOHANG) == -1 && errno == ECHILD;
}

static McpCommand *new_command(const char *program)
{
    McpCommand *cmd = mcp_command_new(program);
    if (!CHECK(cmd != NULL)) {
        check_summary();
        exit(1);
    }
    return cmd;
}

static void armed_command_new(const char *name)
{
    McpCommand *cmd;
    arm(name);
    cmd = mcp_command_new("cat");
    disarm(name);
    if (!CHECK(cmd == NULL)) {
        printf("    %s, armed, returned a command, want its panic value NULL\n", name);
        mcp_command_free(cmd);
    }
}

/* A command's setters: MCP_STATUS_PANIC; the command is still usable and
 * freed (valgrind, ASan: no leak). */
static void armed_command_call(const char *name)
{
    McpCommand *cmd = new_command("cat");
    McpStatus st;
    arm(name);
    if (strcmp(name, "mcp_command_arg") == 0) {
        st = mcp_command_arg(cmd, "-u");
    } else if (strcmp(name, "mcp_command_env") == 0) {
        st = mcp_command_env(cmd, "A", "1");
    } else if (strcmp(name, "mcp_command_env_mode") == 0) {
        st = mcp_command_env_mode(cmd, MCP_ENV_CLEAR);
    } else if (strcmp(name, "mcp_command_cwd") == 0) {
        st = mcp_command_cwd(cmd, "/");
    } else if (strcmp(name, "mcp_command_stderr") == 0) {
        st = mcp_command_stderr(cmd, MCP_STDERR_DISCARD);
    } else if (strcmp(name, "mcp_command_restart") == 0) {
        st = mcp_command_restart(cmd, 3, 100, 1000, 3, 10000);
    } else if (strcmp(name, "mcp_command_spawn_error") == 0) {
        McpBuffer text = {(uint8_t *)&check_passed_count, 7};
        st = mcp_command_spawn_error(cmd, ENOENT, &text);
        CHECK(text.data == (uint8_t *)&check_passed_count && text.len == 7); /* untouched */
    } else {
        st = MCP_STATUS_OK;
        printf("    %s: no armed call for it in armed_command_call\n", name);
    }
    disarm(name);
    want_panic_status(name, st);
    /* Disarmed, the same setters work on the same command. */
    CHECK_STATUS(mcp_command_arg(cmd, "-u"), MCP_STATUS_OK);
    CHECK_STATUS(mcp_command_env(cmd, "A", "1"), MCP_STATUS_OK);
    CHECK_STATUS(mcp_command_cwd(cmd, "/"), MCP_STATUS_OK);
    mcp_command_free(cmd);
}

static void armed_command_free(const char *name)
{
    McpCommand *cmd = new_command("cat");
    CHECK_STATUS(mcp_command_arg(cmd, "-u"), MCP_STATUS_OK);
    CHECK_STATUS(mcp_command_env(cmd, "A", "1"), MCP_STATUS_OK);
    arm(name);
    mcp_command_free(cmd); /* frees, then panics: caught (valgrind: no leak) */
    mcp_command_free(NULL); /* a no-op before the fault point */
    disarm(name);
    CHECK(1); /* still alive */
}

/* Nothing started, *out untouched, no child left. */
static void armed_transport_spawn(const char *name)
{
    McpCommand *cmd = new_command("cat");
    McpTransport *t = (McpTransport *)&check_passed_count;
    McpStatus st;
    arm(name);
    st = mcp_transport_spawn(cmd, 0, &t);
    disarm(name);
    want_panic_status(name, st);
    CHECK(t == (McpTransport *)&check_passed_count);
    CHECK(no_child_left());
    mcp_command_free(cmd);
}

/* A spawned `cat`, whose pid is known. */
static McpTransport *spawned_cat(int32_t *pid)
{
    McpCommand *cmd = new_command("cat");
    McpTransport *t = NULL;
    CHECK_STATUS(mcp_transport_spawn(cmd, 0, &t), MCP_STATUS_OK);
    mcp_command_free(cmd);
    if (t == NULL) {
        check_summary();
        exit(1);
    }
    *pid = mcp_transport_pid(t);
    CHECK(*pid > 0);
    return t;
}

/* pid, restarts and stderr_dropped take the transport's lock: a panic
 * there poisons it. Their panic values are -1, 0 and 0, and so are their
 * answers for a poisoned transport; free still kills and reaps the server. */
static void armed_transport_process_query(const char *name)
{
    int is_pid = strcmp(name, "mcp_transport_pid") == 0;
    int is_restarts = strcmp(name, "mcp_transport_restarts") == 0;
    int32_t pid = 0;
    McpTransport *t = spawned_cat(&pid);
    McpTransport *bystander;
    int32_t other_pid = 0;
    int64_t got;

    arm(name);
    got = is_pid        ? (int64_t)mcp_transport_pid(t)
          : is_restarts ? (int64_t)mcp_transport_restarts(t)
                        : (int64_t)mcp_transport_stderr_dropped(t);
    disarm(name);
    if (!CHECK(got == (is_pid ? -1 : 0))) {
        printf("    %s, armed, returned %lld, want its panic value %d\n", name, (long long)got,
               is_pid ? -1 : 0);
    }
    CHECK(mcp_transport_pid(t) == -1);
    CHECK(mcp_transport_restarts(t) == 0);
    CHECK(mcp_transport_stderr_dropped(t) == 0);
    check_transport_poisoned(t, name);
    mcp_transport_free(t); /* poisoned: the server is killed and reaped */
    errno = 0;
    CHECK(waitpid(pid, NULL, WNOHANG) == -1 && errno == ECHILD);

    /* Another transport is unaffected. */
    bystander = spawned_cat(&other_pid);
    CHECK(other_pid != pid);
    CHECK(mcp_transport_stderr_dropped(bystander) == 0);
    mcp_transport_free(bystander);
    CHECK(no_child_left());
}

/* stderr_tail takes the transport's lock: a panic there poisons it, and
 * leaves *out untouched; free still kills and reaps the server. */
static void armed_transport_stderr_tail(const char *name)
{
    int32_t pid = 0;
    McpTransport *t = spawned_cat(&pid);
    McpBuffer tail = {(uint8_t *)&check_passed_count, 7};

    arm(name);
    CHECK(mcp_transport_stderr_tail(t, &tail) == MCP_STATUS_PANIC);
    disarm(name);
    CHECK(tail.data == (uint8_t *)&check_passed_count && tail.len == 7);
    CHECK(mcp_transport_stderr_tail(t, &tail) == MCP_STATUS_POISONED);
    check_transport_poisoned(t, name);
    mcp_transport_free(t); /* poisoned: the server is killed and reaped */
    errno = 0;
    CHECK(waitpid(pid, NULL, WNOHANG) == -1 && errno == ECHILD);
    CHECK(no_child_left());
}

/* end_reason and end_text take the transport's lock: a panic there
 * poisons it. end_reason's panic value is MCP_END_NONE (and
 * *before_first_message is untouched); end_text's is MCP_STATUS_PANIC with
 * *out untouched. A memory transport ended by its peer shows both. */
static void armed_transport_end(const char *name)
{
    int is_text = strcmp(name, "mcp_transport_end_text") == 0;
    McpTransport *t = mcp_transport_new();
    McpBuffer text = {(uint8_t *)&check_passed_count, 7};
    bool early = true;

    if (!CHECK(t != NULL)) {
        return;
    }
    CHECK(mcp_transport_receive_end(t) == MCP_STATUS_OK);
    arm(name);
    if (is_text) {
        CHECK(mcp_transport_end_text(t, &text) == MCP_STATUS_PANIC);
    } else {
        CHECK(mcp_transport_end_reason(t, &early) == MCP_END_NONE);
    }
    disarm(name);
    CHECK(text.data == (uint8_t *)&check_passed_count && text.len == 7);
    CHECK(early);
    CHECK(mcp_transport_end_text(t, &text) == MCP_STATUS_POISONED);
    CHECK(mcp_transport_end_reason(t, &early) == MCP_END_NONE);
    check_transport_poisoned(t, name);
    mcp_transport_free(t);

    /* Unarmed, the same transport kind answers. */
    t = mcp_transport_new();
    if (!CHECK(t != NULL)) {
        return;
    }
    CHECK(mcp_transport_end_reason(t, NULL) == MCP_END_NONE);
    CHECK(mcp_transport_receive_end(t) == MCP_STATUS_OK);
    CHECK(mcp_transport_end_reason(t, &early) == MCP_END_PEER_CLOSED && !early);
    CHECK(mcp_transport_end_text(t, &text) == MCP_STATUS_OK);
    CHECK(text.len == strlen("the peer closed its output") &&
          memcmp(text.data, "the peer closed its output", text.len) == 0);
    mcp_buffer_free(&text);
    mcp_transport_free(t);
}

/* Nothing changed: *out untouched, descriptors 0 and 1 as they were. */
static void armed_transport_open_stdio(const char *name)
{
    McpTransport *t = (McpTransport *)&check_passed_count;
    int fl0 = fcntl(0, F_GETFL), fl1 = fcntl(1, F_GETFL);
    struct stat before, after;
    McpStatus st;
    int stat_ok = fstat(1, &before) == 0;
    arm(name);
    st = mcp_transport_open_stdio(MCP_TRANSPORT_GUARD_STDOUT, &t);
    disarm(name);
    want_panic_status(name, st);
    CHECK(t == (McpTransport *)&check_passed_count);
    CHECK(fcntl(0, F_GETFL) == fl0 && fcntl(1, F_GETFL) == fl1);
    CHECK(stat_ok && fstat(1, &after) == 0 && after.st_ino == before.st_ino &&
          after.st_dev == before.st_dev);
}

/* How to call each function of the header armed, and check its panic value. */
typedef struct {
    const char *name;
    void (*call_armed)(const char *name);
} PanicCase;

static const PanicCase PANIC_CASES[] = {
    {"mcp_buffer_free", armed_buffer_free},
    {"mcp_encode", armed_encode},
    {"mcp_encode_to", armed_encode_to},
    {"mcp_encode_bound", armed_encode_bound},
    {"mcp_line_reader_read_fd", armed_reader_call},
    {"mcp_write_all", armed_write_all},
    {"mcp_write_all_deadline", armed_write_all_deadline},
    {"mcp_line_reader_new", armed_new},
    {"mcp_line_reader_set_max_line_len", armed_reader_call},
    {"mcp_line_reader_set_flags", armed_reader_call},
    {"mcp_line_reader_feed", armed_reader_call},
    {"mcp_line_reader_next_message", armed_reader_call},
    {"mcp_line_reader_finish", armed_reader_call},
    {"mcp_line_reader_buffered_len", armed_buffered_len},
    {"mcp_line_reader_free", armed_free},
    {"mcp_envelope_parse", armed_envelope_parse},
    {"mcp_line_reader_envelope", armed_line_reader_envelope},
    {"mcp_json_string_eq", armed_json_string_eq},
    {"mcp_status_str", armed_status_str},
    {"mcp_stdio_version", armed_version},
    {"mcp_stdio_abi_version", armed_abi_version},
    {"mcp_stdio_simd_level", armed_simd_level},
    {"mcp_transport_new", armed_transport_new},
    {"mcp_transport_set_max_line_len", armed_transport_call},
    {"mcp_transport_set_max_queued", armed_transport_call},
    {"mcp_transport_send", armed_transport_call},
    {"mcp_transport_request", armed_transport_call},
    {"mcp_transport_request_with", armed_transport_call},
    {"mcp_transport_notify", armed_transport_call},
    {"mcp_transport_respond", armed_transport_call},
    {"mcp_transport_respond_error", armed_transport_call},
    {"mcp_transport_cancel", armed_transport_call},
    {"mcp_transport_close", armed_transport_call},
    {"mcp_transport_receive", armed_transport_call},
    {"mcp_transport_receive_end", armed_transport_call},
    {"mcp_transport_take_output", armed_transport_call},
    {"mcp_transport_read_output", armed_transport_call},
    {"mcp_transport_next_event", armed_transport_call},
    {"mcp_transport_next_deadline", armed_transport_call},
    {"mcp_transport_free", armed_transport_free},
    {"mcp_transport_open_fds", armed_transport_open_fds},
    {"mcp_transport_poll_fds", armed_transport_call},
    {"mcp_command_new", armed_command_new},
    {"mcp_command_arg", armed_command_call},
    {"mcp_command_env", armed_command_call},
    {"mcp_command_env_mode", armed_command_call},
    {"mcp_command_cwd", armed_command_call},
    {"mcp_command_stderr", armed_command_call},
    {"mcp_command_restart", armed_command_call},
    {"mcp_command_spawn_error", armed_command_call},
    {"mcp_command_free", armed_command_free},
    {"mcp_transport_spawn", armed_transport_spawn},
    {"mcp_transport_pid", armed_transport_process_query},
    {"mcp_transport_restarts", armed_transport_process_query},
    {"mcp_transport_stderr_dropped", armed_transport_process_query},
    {"mcp_transport_stderr_tail", armed_transport_stderr_tail},
    {"mcp_transport_end_reason", armed_transport_end},
    {"mcp_transport_end_text", armed_transport_end},
    {"mcp_transport_open_stdio", armed_transport_open_stdio},
};
#define N_PANIC_CASES (sizeof PANIC_CASES / sizeof PANIC_CASES[0])

/* `names`: the functions of the header. Each has a case, and each case is named. */
static void test_every_header_function_returns_its_panic_value(int n_names, char **names)
{
    unsigned char named[N_PANIC_CASES];
    size_t c;
    int i;

    memset(named, 0, sizeof named);
    if (!CHECK(n_names > 0)) {
        printf("    no arguments: give test_panic the functions of include/mcp_stdio.h\n");
    }
    for (i = 0; i < n_names; i++) {
        c = 0;
        while (c < N_PANIC_CASES && strcmp(PANIC_CASES[c].name, names[i]) != 0) {
            c++;
        }
        if (!CHECK(c < N_PANIC_CASES)) {
            printf("    no case for function %s in test_panic.c\n", names[i]);
            continue;
        }
        named[c] = 1;
        PANIC_CASES[c].call_armed(PANIC_CASES[c].name);
    }
    for (c = 0; c < N_PANIC_CASES; c++) {
        if (!CHECK(named[c])) {
            printf("    test_panic.c has a case for %s, which the arguments (the functions of "
                   "include/mcp_stdio.h) do not name\n",
                   PANIC_CASES[c].name);
        }
    }
}

/* ---- the other entry points ---- */

static void test_panic_in_new_gives_null(void)
{
    McpLineReader *r;
    mcp_test_inject_panic("mcp_line_reader_new");
    r = mcp_line_reader_new();
    CHECK(r == NULL);
    CHECK(mcp_line_reader_new() == NULL);
    mcp_test_inject_panic(NULL);
    r = mcp_line_reader_new();
    CHECK(r != NULL);
    CHECK_STATUS(FEED_LIT(r, "1\n"), MCP_STATUS_OK);
    EXPECT_JSON(r, "1");
    mcp_line_reader_free(r);
}

static void test_panic_in_buffered_len_gives_zero_and_does_not_poison(void)
{
    McpLineReader *r = loaded_reader();
    mcp_test_inject_panic("mcp_line_reader_buffered_len");
    CHECK(mcp_line_reader_buffered_len(r) == 0);
    CHECK(mcp_line_reader_buffered_len(NULL) == 0);
    /* buffered_len only reads: the reader stays usable, even while armed. */
    EXPECT_JSON(r, "[1]");
    mcp_test_inject_panic(NULL);
    CHECK_BUFFERED(r, 2);
    CHECK_STATUS(FEED_LIT(r, "]\n"), MCP_STATUS_OK);
    EXPECT_JSON(r, "[2]");
    mcp_line_reader_free(r);
}

static void test_panic_in_free_still_frees(void)
{
    /* The fault point comes after the memory is given back: valgrind sees no leak. */
    McpLineReader *r = loaded_reader();
    McpMessage m = sentinel_message();
    CHECK_STATUS(mcp_line_reader_next_message(r, &m), MCP_STATUS_OK);
    mcp_test_inject_panic("mcp_line_reader_free");
    mcp_line_reader_free(r);
    mcp_line_reader_free(NULL); /* no-op: never reaches the fault point */
    mcp_test_inject_panic(NULL);
    CHECK(1); /* still alive */

    /* A poisoned reader freed with a panic in free: nothing leaks either. */
    r = loaded_reader();
    mcp_test_inject_panic("mcp_line_reader_finish");
    CHECK_STATUS(mcp_line_reader_finish(r), MCP_STATUS_PANIC);
    mcp_test_inject_panic("mcp_line_reader_free");
    mcp_line_reader_free(r);
    mcp_test_inject_panic(NULL);
    CHECK(1);
}

static void test_panic_in_encode_leaves_out_untouched(void)
{
    McpBuffer buf = {NULL, 0};
    McpBuffer untouched;
    McpBuffer ok = {NULL, 0};
    /* A distinctive value that must survive the call (never freed: not ours). */
    untouched.data = (uint8_t *)&check_passed_count;
    untouched.len = 4242;
    buf = untouched;

    mcp_test_inject_panic("mcp_encode");
    CHECK_STATUS(mcp_encode(LIT_PTR("{\"a\": [1, 2]}"), LIT_LEN("{\"a\": [1, 2]}"), 0, &buf),
                 MCP_STATUS_PANIC);
    CHECK(buf.data == untouched.data && buf.len == untouched.len);
    CHECK_STATUS(mcp_encode(LIT_PTR("[]"), 2, MCP_ENCODE_ASCII, &buf), MCP_STATUS_PANIC);
    CHECK(buf.data == untouched.data && buf.len == untouched.len);
    mcp_test_inject_panic(NULL);

    CHECK_STATUS(mcp_encode(LIT_PTR("{\"a\": [1, 2]}"), LIT_LEN("{\"a\": [1, 2]}"), 0, &ok),
                 MCP_STATUS_OK);
    CHECK(ok.data != NULL && ok.len == LIT_LEN("{\"a\":[1,2]}\n") &&
          memcmp(ok.data, "{\"a\":[1,2]}\n", ok.len) == 0);
    mcp_buffer_free(&ok);
}

static void test_panic_in_buffer_free_still_frees(void)
{
    McpBuffer buf = {NULL, 0};
    CHECK_STATUS(mcp_encode(LIT_PTR("[\"x\"]"), LIT_LEN("[\"x\"]"), 0, &buf), MCP_STATUS_OK);
    CHECK(buf.data != NULL);
    mcp_test_inject_panic("mcp_buffer_free");
    mcp_buffer_free(&buf); /* frees, resets, then panics: caught */
    CHECK(buf.data == NULL && buf.len == 0);
    mcp_buffer_free(&buf); /* the empty buffer: panics again, caught, no double free */
    CHECK(buf.data == NULL && buf.len == 0);
    mcp_buffer_free(NULL); /* no-op before the fault point */
    mcp_test_inject_panic(NULL);
    mcp_buffer_free(&buf);
    CHECK(buf.data == NULL && buf.len == 0);
}

static void test_panic_in_write_all_writes_nothing(void)
{
    int fds[2];
    int blocked_before = sigpipe_blocked();
    McpLineReader *r;
    size_t n = 0;

    make_pipe(fds);
    set_nonblocking(fds[0]);

    mcp_test_inject_panic("mcp_write_all");
    CHECK_STATUS(mcp_write_all(fds[1], LIT_PTR("[1]\n"), 4), MCP_STATUS_PANIC);
    CHECK_STATUS(mcp_write_all(fds[1], NULL, 0), MCP_STATUS_PANIC);
    mcp_test_inject_panic(NULL);
    CHECK(pipe_is_empty(fds[0]));
    /* The thread's signal mask is as it was (SIGPIPE is only blocked inside a write). */
    CHECK(sigpipe_blocked() == blocked_before);

    CHECK_STATUS(mcp_write_all(fds[1], LIT_PTR("[1]\n"), 4), MCP_STATUS_OK);
    r = NEW_READER();
    CHECK_STATUS(mcp_line_reader_read_fd(r, fds[0], &n), MCP_STATUS_OK);
    CHECK(n == 4);
    EXPECT_JSON(r, "[1]");
    mcp_line_reader_free(r);
    close(fds[0]);
    close(fds[1]);
}

static void test_panic_in_read_fd_reads_nothing(void)
{
    /* Data waiting in the pipe is not consumed by the panicking call. */
    int fds[2];
    McpLineReader *r = NEW_READER();
    McpLineReader *other = NEW_READER();
    size_t n = 5;

    make_pipe(fds);
    set_nonblocking(fds[0]);
    CHECK_STATUS(mcp_write_all(fds[1], LIT_PTR("{\"id\":1}\n"), 9), MCP_STATUS_OK);

    mcp_test_inject_panic("mcp_line_reader_read_fd");
    CHECK_STATUS(mcp_line_reader_read_fd(r, fds[0], &n), MCP_STATUS_PANIC);
    mcp_test_inject_panic(NULL);
    CHECK_STATUS(mcp_line_reader_read_fd(r, fds[0], &n), MCP_STATUS_POISONED);
    CHECK(n == 0);

    CHECK_STATUS(mcp_line_reader_read_fd(other, fds[0], &n), MCP_STATUS_OK);
    CHECK(n == 9);
    EXPECT_JSON(other, "{\"id\":1}");
    close(fds[1]);
    CHECK_STATUS(mcp_line_reader_read_fd(other, fds[0], &n), MCP_STATUS_END_OF_STREAM);

    mcp_line_reader_free(r);
    mcp_line_reader_free(other);
    close(fds[0]);
}

/* ---- threads: an armed panic is per thread ---- */

typedef struct {
    McpLineReader *reader;
    McpStatus armed_feed;
    McpStatus after;
} ThreadResult;

static void *panicking_thread(void *arg)
{
    ThreadResult *res = (ThreadResult *)arg;
    mcp_test_inject_panic("mcp_line_reader_feed");
    res->armed_feed = FEED_LIT(res->reader, "[3]\n");
    mcp_test_inject_panic(NULL);
    res->after = FEED_LIT(res->reader, "[3]\n");
    return NULL;
}

static void test_panic_on_another_thread(void)
{
    pthread_t t;
    ThreadResult res;
    McpLineReader *mine = loaded_reader();

    res.reader = NEW_READER();
    res.armed_feed = MCP_STATUS_OK;
    res.after = MCP_STATUS_OK;
    /* Armed on this thread: must not affect the other thread's calls, and vice versa. */
    mcp_test_inject_panic("mcp_line_reader_next_message");
    if (!CHECK(pthread_create(&t, NULL, panicking_thread, &res) == 0)) {
        return;
    }
    CHECK(pthread_join(t, NULL) == 0);
    mcp_test_inject_panic(NULL);
    CHECK_STATUS(res.armed_feed, MCP_STATUS_PANIC);
    CHECK_STATUS(res.after, MCP_STATUS_POISONED);
    /* A reader poisoned on another thread is refused here too (readers may move). */
    check_poisoned(res.reader, "mcp_line_reader_feed (other thread)");
    mcp_line_reader_free(res.reader);
    check_reader_intact(mine);
    mcp_line_reader_free(mine);
}

/* A descriptor transport poisoned (a panic while it held its lock) is still
 * freed at once, its descriptors closed (owned) or given back their flags
 * (borrowed); no I/O is attempted on it any more. */
static void test_panic_poisons_a_descriptor_transport(void)
{
    int borrow;
    for (borrow = 0; borrow <= 1; borrow++) {
        int to_us[2], to_peer[2];
        int flags_us, flags_peer;
        McpTransport *t = NULL;
        McpEvent ev;
        make_pipe(to_us);
        make_pipe(to_peer);
        flags_us = fcntl(to_us[0], F_GETFL);
        flags_peer = fcntl(to_peer[1], F_GETFL);
        CHECK_STATUS(mcp_transport_open_fds(to_us[0], to_peer[1],
                                            borrow ? MCP_TRANSPORT_BORROW_FDS : 0u, &t),
                     MCP_STATUS_OK);
        if (t == NULL) {
            return;
        }
        CHECK_STATUS(mcp_transport_notify(t, "n", NULL, 0), MCP_STATUS_OK);
        mcp_test_inject_panic("mcp_transport_next_event");
        CHECK_STATUS(mcp_transport_next_event(t, -1, &ev), MCP_STATUS_PANIC);
        mcp_test_inject_panic(NULL);
        CHECK_STATUS(mcp_transport_next_event(t, -1, &ev), MCP_STATUS_POISONED);
        CHECK_STATUS(mcp_transport_close(t, 0), MCP_STATUS_POISONED);
        check_transport_poisoned(t, "mcp_transport_next_event (descriptors)");
        set_nonblocking(to_peer[0]);
        CHECK(pipe_is_empty(to_peer[0])); /* the notification was never written */
        mcp_transport_free(t); /* at once: the peer never closes its end here */
        if (borrow) {
            CHECK(fcntl(to_us[0], F_GETFL) == flags_us && fcntl(to_peer[1], F_GETFL) == flags_peer);
            close(to_us[0]);
            close(to_peer[1]);
        } else {
            errno = 0;
            CHECK(fcntl(to_us[0], F_GETFD) == -1 && errno == EBADF);
            errno = 0;
            CHECK(fcntl(to_peer[1], F_GETFD) == -1 && errno == EBADF);
        }
        close(to_us[1]);
        close(to_peer[0]);
    }
}

static void test_status_strings_describe_panics(void)
{
    CHECK(strstr(mcp_status_str(MCP_STATUS_PANIC), "panic") != NULL);
    CHECK(strstr(mcp_status_str(MCP_STATUS_POISONED), "unusable") != NULL);
}

int main(int argc, char **argv)
{
    int fds[2];
    make_pipe(fds);
    set_nonblocking(fds[0]);
    g_rd = fds[0];

    test_every_header_function_returns_its_panic_value(argc - 1, argv + 1);
    test_panic_in_each_reader_call_poisons_only_that_reader();
    test_panic_in_new_gives_null();
    test_panic_in_buffered_len_gives_zero_and_does_not_poison();
    test_panic_in_free_still_frees();
    test_panic_in_encode_leaves_out_untouched();
    test_panic_in_buffer_free_still_frees();
    test_panic_in_write_all_writes_nothing();
    test_panic_in_read_fd_reads_nothing();
    test_panic_on_another_thread();
    test_panic_poisons_a_descriptor_transport();
    test_status_strings_describe_panics();

    close(fds[0]);
    close(fds[1]);
    return check_summary();
}
