/*
 * mcp-stdio through its C ABI, for bench/run.sh (linked with target/release/libmcp_stdio.a).
 *
 *   mcp_stdio_runner read   RUNNER CORPUS FILE CHUNK RUNS [jsonrpc]
 *       Reads FILE into memory, then RUNS times: a new McpLineReader (flags 0, or
 *       MCP_READER_JSONRPC with "jsonrpc"), feed FILE in CHUNK-byte pieces, draining
 *       mcp_line_reader_next_message after each feed, finish, drain, free.
 *       Messages = MCP_MESSAGE_JSON items (with an rpc kind when classifying);
 *       errors = every other item.
 *   mcp_stdio_runner encode RUNNER CORPUS FILE RUNS
 *       FILE holds NUL-separated JSON documents; RUNS times: mcp_encode each one
 *       (RUNNER mcp_encode_to: mcp_encode_to each into one reused buffer)
 *       (flags 0) and mcp_buffer_free the result. Bytes = input bytes.
 *   mcp_stdio_runner level
 *       Prints mcp_stdio_simd_level(): the SIMD kernels the library picks in this
 *       environment ("avx2" by default where the CPU has it; MCP_STDIO_SIMD=portable
 *       forces the baseline, "sse2" on x86-64).
 *
 * Prints one line:
 *   BENCH runner=.. corpus=.. chunk=.. bytes=.. messages=.. errors=.. seconds=<best>
 *         median=<median> runs=.. checksum=.. simd=<the level the passes ran at>
 * The checksum (sum of item lengths and kinds) keeps the work observable.
 *
 * One pass is the function one_read_pass / one_encode_pass, never inlined, so that
 * `valgrind --tool=callgrind --collect-atstart=no --toggle-collect=one_read_pass`
 * counts the instructions of exactly that work (bench/run.sh does, with RUNS=1).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mcp_stdio.h"

#define RUNNER_NAME "mcp_stdio_runner"
#include "runner_util.h"

static void drain(McpLineReader *reader, int jsonrpc, struct counts *c)
{
    McpMessage m;
    McpStatus st;
    while ((st = mcp_line_reader_next_message(reader, &m)) == MCP_STATUS_OK) {
        if (m.kind == MCP_MESSAGE_JSON && (!jsonrpc || m.rpc_kind != MCP_RPC_NONE))
            c->messages++;
        else
            c->errors++;
        c->checksum += m.len + (uint64_t)m.kind * 7 + (uint64_t)m.rpc_kind;
    }
    if (st != MCP_STATUS_NO_MESSAGE) die("next_message failed", mcp_status_str(st));
}

__attribute__((noinline)) void one_read_pass(const uint8_t *data, size_t len, size_t chunk, int jsonrpc,
                                             struct counts *c)
{
    McpLineReader *reader = mcp_line_reader_new();
    if (!reader) die("mcp_line_reader_new failed", NULL);
    if (jsonrpc && mcp_line_reader_set_flags(reader, MCP_READER_JSONRPC) != MCP_STATUS_OK)
        die("set_flags failed", NULL);
    for (size_t off = 0; off < len; off += chunk) {
        size_t n = len - off < chunk ? len - off : chunk;
        McpStatus st = mcp_line_reader_feed(reader, data + off, n);
        if (st != MCP_STATUS_OK) die("feed failed", mcp_status_str(st));
        drain(reader, jsonrpc, c);
    }
    if (mcp_line_reader_finish(reader) != MCP_STATUS_OK) die("finish failed", NULL);
    drain(reader, jsonrpc, c);
    mcp_line_reader_free(reader);
}

struct doc {
    const uint8_t *data;
    size_t len;
};

/* One mcp_encode per document (a new buffer each, freed), or, with `reuse`
 * (of `cap` bytes, at least mcp_encode_bound of the longest document), one
 * mcp_encode_to into it: nothing allocated. */
__attribute__((noinline)) void one_encode_pass(const struct doc *docs, size_t ndocs, uint8_t *reuse,
                                               size_t cap, struct counts *c)
{
    for (size_t i = 0; i < ndocs; i++) {
        McpBuffer out = {NULL, 0};
        McpStatus st = reuse ? mcp_encode_to(docs[i].data, docs[i].len, 0, reuse, cap, &out.len)
                             : mcp_encode(docs[i].data, docs[i].len, 0, &out);
        if (st == MCP_STATUS_OK) {
            const uint8_t *line = reuse ? reuse : out.data;
            c->messages++;
            c->checksum += out.len + line[out.len / 2];
            mcp_buffer_free(&out);
        } else {
            c->errors++;
        }
    }
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "level") == 0) {
        printf("%s\n", mcp_stdio_simd_level());
        return 0;
    }
    int is_read = argc >= 7 && strcmp(argv[1], "read") == 0;
    int is_encode = argc == 6 && strcmp(argv[1], "encode") == 0;
    if (!is_read && !is_encode) {
        fprintf(stderr,
                "usage: %s read RUNNER CORPUS FILE CHUNK RUNS [jsonrpc]\n"
                "       %s encode RUNNER CORPUS FILE RUNS\n"
                "       %s level\n",
                argv[0], argv[0], argv[0]);
        return 2;
    }
    const char *runner = argv[2], *corpus = argv[3], *path = argv[4];
    size_t chunk = is_read ? parse_size(argv[5], "CHUNK") : 0;
    size_t runs = parse_size(argv[is_read ? 6 : 5], "RUNS");
    int jsonrpc = is_read && argc > 7 && strcmp(argv[7], "jsonrpc") == 0;

    size_t len;
    uint8_t *data = read_file(path, &len);

    struct doc *docs = NULL;
    size_t ndocs = 0, doc_bytes = 0, longest = 0;
    if (is_encode) {
        size_t cap = 1024;
        docs = malloc(cap * sizeof *docs);
        for (size_t start = 0, i = 0; i < len; i++) {
            if (data[i] != 0) continue;
            if (ndocs == cap) docs = realloc(docs, (cap *= 2) * sizeof *docs);
            if (!docs) die("out of memory", NULL);
            docs[ndocs].data = data + start;
            docs[ndocs].len = i - start;
            doc_bytes += i - start;
            if (i - start > longest) longest = i - start;
            ndocs++;
            start = i + 1;
        }
    }

    /* Runner mcp_encode_to: one buffer for every line. */
    size_t reuse_cap = mcp_encode_bound(longest, 0);
    uint8_t *reuse = is_encode && strcmp(runner, "mcp_encode_to") == 0 ? malloc(reuse_cap) : NULL;
    if (is_encode && strcmp(runner, "mcp_encode_to") == 0 && !reuse) die("out of memory", NULL);
    double *times = malloc(runs * sizeof *times);
    struct counts first = {0, 0, 0};
    for (size_t r = 0; r < runs; r++) {
        struct counts c = {0, 0, 0};
        double t0 = now();
        if (is_read)
            one_read_pass(data, len, chunk, jsonrpc, &c);
        else
            one_encode_pass(docs, ndocs, reuse, reuse_cap, &c);
        times[r] = now() - t0;
        if (r == 0)
            first = c;
        else if (c.messages != first.messages || c.checksum != first.checksum)
            die("runs disagree", NULL);
    }
    qsort(times, runs, sizeof *times, cmp_double);
    printf("BENCH runner=%s corpus=%s chunk=%zu bytes=%zu messages=%llu errors=%llu seconds=%.9f median=%.9f "
           "runs=%zu checksum=%llu simd=%s\n",
           runner, corpus, chunk, is_read ? len : doc_bytes, (unsigned long long)first.messages,
           (unsigned long long)first.errors, times[0], times[runs / 2], runs, (unsigned long long)first.checksum,
           mcp_stdio_simd_level());
    free(times);
    free(docs);
    free(data);
    return 0;
}
