/*
 * McpTransport against the bare reader, through the C ABI, for bench/run.sh (linked with
 * target/release/libmcp_stdio.a and -lpthread).
 *
 *   transport_runner CORPUS FILE RUNS [MODES]
 *
 * Reads FILE into memory, then RUNS rounds; each round runs one pass of every mode in
 * MODES (a comma-separated list, default "bare,memory,socketpair"), one after the
 * other, so that the modes share the machine's ups and downs:
 *
 *   bare        the bare reader with classification, as `mcp_stdio_runner read ... jsonrpc`:
 *               a new McpLineReader with MCP_READER_JSONRPC, feed 64 KiB chunks, drain
 *               mcp_line_reader_next_message after each, finish, drain, free;
 *   memory      a memory transport (mcp_transport_new): mcp_transport_receive 64 KiB
 *               chunks, mcp_transport_next_event(t, 0, &ev) until MCP_STATUS_NO_MESSAGE
 *               after each, mcp_transport_receive_end, events until MCP_EVENT_CLOSED, free;
 *   socketpair  a descriptor transport (mcp_transport_open_fds on one end of an AF_UNIX
 *               socketpair): a writer thread write(2)s FILE into the other end in 64 KiB
 *               pieces and closes it; this thread takes events with
 *               mcp_transport_next_event(t, -1, &ev) until MCP_EVENT_CLOSED, then frees.
 *               The time runs from socketpair(2) to the free, writer joined.
 *
 * Every message touches its data (first byte) and length, the same in every mode.
 * Prints one line per mode:
 *   TRANSPORT mode=M corpus=C chunk=65536 bytes=B messages=N errors=E seconds=<best>
 *             median=<median> runs=K checksum=X
 * messages = valid JSON-RPC messages, errors = every other line. Exits 2 if the modes (or
 * the rounds) disagree on the counts or the checksum: they must all do the same work.
 *
 * Each pass is a function of its own, never inlined (bare_pass, memory_pass,
 * socketpair_pass), so that `valgrind --tool=callgrind --collect-atstart=no
 * --toggle-collect=memory_pass` counts exactly that work (bench/run.sh does, with RUNS=1
 * and one mode).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "mcp_stdio.h"

#define CHUNK ((size_t)64 << 10)

#define RUNNER_NAME "transport_runner"
#include "runner_util.h"

/* One line taken: `ok` for a valid JSON-RPC message. The same in every mode. */
static inline void note(struct counts *c, int ok, int32_t rpc_kind, const uint8_t *data, size_t len)
{
    if (ok)
        c->messages++;
    else
        c->errors++;
    c->checksum += len + (uint64_t)rpc_kind + (data ? data[0] : 0);
}

/* ---- bare: the reader with classification, as bench/runners/mcp_stdio.c ---- */

static void drain_reader(McpLineReader *reader, struct counts *c)
{
    McpMessage m;
    McpStatus st;
    while ((st = mcp_line_reader_next_message(reader, &m)) == MCP_STATUS_OK)
        note(c, m.kind == MCP_MESSAGE_JSON && m.rpc_kind != MCP_RPC_NONE, m.rpc_kind, m.data, m.len);
    if (st != MCP_STATUS_NO_MESSAGE) die("next_message failed", mcp_status_str(st));
}

__attribute__((noinline)) void bare_pass(const uint8_t *data, size_t len, struct counts *c)
{
    McpLineReader *reader = mcp_line_reader_new();
    if (!reader) die("mcp_line_reader_new failed", NULL);
    if (mcp_line_reader_set_flags(reader, MCP_READER_JSONRPC) != MCP_STATUS_OK) die("set_flags failed", NULL);
    for (size_t off = 0; off < len; off += CHUNK) {
        size_t n = len - off < CHUNK ? len - off : CHUNK;
        McpStatus st = mcp_line_reader_feed(reader, data + off, n);
        if (st != MCP_STATUS_OK) die("feed failed", mcp_status_str(st));
        drain_reader(reader, c);
    }
    if (mcp_line_reader_finish(reader) != MCP_STATUS_OK) die("finish failed", NULL);
    drain_reader(reader, c);
    mcp_line_reader_free(reader);
}

/* ---- the transports ---- */

/* One event of the peer's: returns 0 for MCP_EVENT_CLOSED, 1 otherwise. */
static inline int take(const McpEvent *ev, struct counts *c)
{
    switch (ev->kind) {
    case MCP_EVENT_MESSAGE:
        note(c, ev->rpc_kind != MCP_RPC_NONE, ev->rpc_kind, ev->data, ev->len);
        return 1;
    case MCP_EVENT_INVALID:
        note(c, 0, ev->rpc_kind, ev->data, ev->len);
        return 1;
    case MCP_EVENT_CLOSED:
        return 0;
    default:
        die("unexpected event", NULL);
        return 0;
    }
}

__attribute__((noinline)) void memory_pass(const uint8_t *data, size_t len, struct counts *c)
{
    McpTransport *t = mcp_transport_new();
    if (!t) die("mcp_transport_new failed", NULL);
    McpEvent ev;
    McpStatus st;
    for (size_t off = 0; off < len; off += CHUNK) {
        size_t n = len - off < CHUNK ? len - off : CHUNK;
        st = mcp_transport_receive(t, data + off, n);
        if (st != MCP_STATUS_OK) die("receive failed", mcp_status_str(st));
        while ((st = mcp_transport_next_event(t, 0, &ev)) == MCP_STATUS_OK)
            if (!take(&ev, c)) die("closed early", NULL);
        if (st != MCP_STATUS_NO_MESSAGE) die("next_event failed", mcp_status_str(st));
    }
    st = mcp_transport_receive_end(t);
    if (st != MCP_STATUS_OK) die("receive_end failed", mcp_status_str(st));
    for (;;) {
        st = mcp_transport_next_event(t, 0, &ev);
        if (st != MCP_STATUS_OK) die("no MCP_EVENT_CLOSED after receive_end", mcp_status_str(st));
        if (!take(&ev, c)) break;
    }
    mcp_transport_free(t);
}

struct writer {
    int fd;
    const uint8_t *data;
    size_t len;
};

static void *write_corpus(void *arg)
{
    struct writer *w = arg;
    for (size_t off = 0; off < w->len;) {
        size_t n = w->len - off < CHUNK ? w->len - off : CHUNK;
        ssize_t k = write(w->fd, w->data + off, n);
        if (k < 0) {
            if (errno == EINTR) continue;
            die("write to the socketpair failed", strerror(errno));
        }
        off += (size_t)k;
    }
    close(w->fd); /* the transport sees the end of the stream */
    return NULL;
}

__attribute__((noinline)) void socketpair_pass(const uint8_t *data, size_t len, struct counts *c)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) die("socketpair failed", strerror(errno));
    McpTransport *t = NULL;
    /* Owned: the transport closes sv[0]. */
    McpStatus st = mcp_transport_open_fds(sv[0], sv[0], 0, &t);
    if (st != MCP_STATUS_OK) die("mcp_transport_open_fds failed", mcp_status_str(st));
    struct writer w = {sv[1], data, len};
    pthread_t writer;
    if (pthread_create(&writer, NULL, write_corpus, &w) != 0) die("pthread_create failed", NULL);
    McpEvent ev;
    for (;;) {
        st = mcp_transport_next_event(t, -1, &ev);
        if (st != MCP_STATUS_OK) die("next_event failed", mcp_status_str(st));
        if (!take(&ev, c)) break;
    }
    pthread_join(writer, NULL);
    mcp_transport_free(t);
}

/* ---- main ---- */

enum { BARE, MEMORY, SOCKETPAIR, NMODES };
static const char *const mode_names[NMODES] = {"bare", "memory", "socketpair"};
static void (*const passes[NMODES])(const uint8_t *, size_t, struct counts *) = {bare_pass, memory_pass,
                                                                                  socketpair_pass};

int main(int argc, char **argv)
{
    if (argc != 4 && argc != 5) {
        fprintf(stderr, "usage: %s CORPUS FILE RUNS [bare,memory,socketpair]\n", argv[0]);
        return 2;
    }
    const char *corpus = argv[1], *path = argv[2];
    size_t runs = parse_size(argv[3], "RUNS");
    int on[NMODES] = {argc == 4, argc == 4, argc == 4};
    if (argc == 5) {
        char *list = strdup(argv[4]);
        for (char *save = NULL, *m = strtok_r(list, ",", &save); m; m = strtok_r(NULL, ",", &save)) {
            int k = 0;
            while (k < NMODES && strcmp(m, mode_names[k]) != 0) k++;
            if (k == NMODES) die("unknown mode", m);
            on[k] = 1;
        }
        free(list);
    }

    size_t len;
    uint8_t *data = read_file(path, &len);
    double *times = malloc(NMODES * runs * sizeof *times);
    struct counts first = {0, 0, 0};
    int have_first = 0;
    for (size_t r = 0; r < runs; r++) {
        for (int k = 0; k < NMODES; k++) {
            if (!on[k]) continue;
            struct counts c = {0, 0, 0};
            double t0 = now();
            passes[k](data, len, &c);
            times[k * runs + r] = now() - t0;
            if (!have_first) {
                first = c;
                have_first = 1;
            } else if (c.messages != first.messages || c.errors != first.errors || c.checksum != first.checksum) {
                fprintf(stderr, "%s counted %llu messages, %llu errors (checksum %llu); before: %llu, %llu (%llu)\n",
                        mode_names[k], (unsigned long long)c.messages, (unsigned long long)c.errors,
                        (unsigned long long)c.checksum, (unsigned long long)first.messages,
                        (unsigned long long)first.errors, (unsigned long long)first.checksum);
                die("the modes disagree", NULL);
            }
        }
    }
    for (int k = 0; k < NMODES; k++) {
        if (!on[k]) continue;
        double *t = times + k * runs;
        qsort(t, runs, sizeof *t, cmp_double);
        printf("TRANSPORT mode=%s corpus=%s chunk=%zu bytes=%zu messages=%llu errors=%llu seconds=%.9f "
               "median=%.9f runs=%zu checksum=%llu\n",
               mode_names[k], corpus, CHUNK, len, (unsigned long long)first.messages,
               (unsigned long long)first.errors, t[0], t[runs / 2], runs, (unsigned long long)first.checksum);
    }
    free(times);
    free(data);
    return 0;
}
