/*
 * The floor of the round-trip benchmark: what a round trip costs in the kernel and in
 * examples/mcp_server.c alone, with a client that does as little as a client can. Not an
 * MCP client and not this library: posix_spawn(3) with two pipes, blocking write(2) of
 * request lines formatted with snprintf, blocking read(2) into a buffer, each response line
 * compared byte for byte with the line the server must send. No JSON is parsed or checked,
 * no poll(2), no timeouts, no stderr handling (the server's stderr is ours). For
 * bench/roundtrip/run.sh, as a reference row: the best any client could do against this
 * server on this machine.
 *
 *   roundtrip_floor SERVER N ROUNDS SPAWNS [INFLIGHT]
 *
 * The same work and the same ROUNDTRIP lines (client=pipe-floor) as host.c: handshake
 * (initialize, notifications/initialized), tools/list, a warm-up, ROUNDS rounds of N
 * sequential and N with INFLIGHT outstanding, then SPAWNS spawns timed to the first
 * response (the initialize result) and to the handshake's end (the notification written).
 * At the end of each session the server's stdin is closed and its exit status 0 checked.
 * cpu_median: as in host.c, this process's CPU time per run (the floor's own cost is a
 * write(2) and a read(2) per round trip).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define RUNNER_NAME "roundtrip_floor"
#include "runner_util.h"

#define CLIENT "pipe-floor"
#define WARM_UP 2000 /* calls in each mode before the timed runs, as the other clients */

extern char **environ;
static const char *server_path;

struct server {
    pid_t pid;
    int wr, rd;
    char buf[1 << 16];
    size_t start, end; /* unread bytes: buf[start..end) */
};

static void spawn_server(struct server *s)
{
    int in[2], out[2];
    if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0) die("pipe2 failed", strerror(errno));
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, in[0], 0);
    posix_spawn_file_actions_adddup2(&fa, out[1], 1);
    char *argv[] = {(char *)server_path, NULL};
    int e = posix_spawn(&s->pid, server_path, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (e != 0) die("posix_spawn failed", strerror(e));
    close(in[0]);
    close(out[1]);
    s->wr = in[1];
    s->rd = out[0];
    s->start = s->end = 0;
}

static void write_all(struct server *s, const char *p, size_t n)
{
    while (n) {
        ssize_t w = write(s->wr, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) die("write failed", strerror(errno));
        p += w;
        n -= (size_t)w;
    }
}

/* The next line (without its '\n'), valid until the next call. */
static const char *read_line(struct server *s, size_t *len)
{
    for (;;) {
        char *nl = memchr(s->buf + s->start, '\n', s->end - s->start);
        if (nl) {
            const char *line = s->buf + s->start;
            *len = (size_t)(nl - line);
            s->start += *len + 1;
            return line;
        }
        if (s->start > 0) { /* keep the partial line at the front */
            memmove(s->buf, s->buf + s->start, s->end - s->start);
            s->end -= s->start;
            s->start = 0;
        }
        if (s->end == sizeof s->buf) die("line too long", NULL);
        ssize_t r = read(s->rd, s->buf + s->end, sizeof s->buf - s->end);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) die("the server closed its stdout", NULL);
        s->end += (size_t)r;
    }
}

static void expect_prefix(struct server *s, const char *prefix, const char *what)
{
    size_t len;
    const char *line = read_line(s, &len);
    if (len < strlen(prefix) || memcmp(line, prefix, strlen(prefix)) != 0) {
        fprintf(stderr, "%s: %s: unexpected line %.*s\n", RUNNER_NAME, what, (int)len, line);
        exit(2);
    }
}

/* initialize (id 0), its result, notifications/initialized. Returns the result's time. */
static double handshake(struct server *s)
{
    static const char init[] =
        "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-11-25\","
        "\"capabilities\":{},\"clientInfo\":{\"name\":\"roundtrip_floor\",\"version\":\"0.0.0\"}}}\n";
    static const char initialized[] = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n";
    write_all(s, init, sizeof init - 1);
    expect_prefix(s, "{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{\"protocolVersion\":\"2025-11-25\"", "initialize");
    double got = now();
    write_all(s, initialized, sizeof initialized - 1);
    return got;
}

static void close_server(struct server *s)
{
    close(s->wr);
    int status;
    while (waitpid(s->pid, &status, 0) < 0)
        if (errno != EINTR) die("waitpid failed", strerror(errno));
    close(s->rd);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) die("the server did not exit with status 0", NULL);
}

/* Request i of a pass has id base + i and the text "round trip <i>", as in host.c. */
static uint64_t base;

static void send_call(struct server *s, uint64_t i)
{
    char line[160];
    int n = snprintf(line, sizeof line,
                     "{\"jsonrpc\":\"2.0\",\"id\":%llu,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\","
                     "\"arguments\":{\"text\":\"round trip %llu\"}}}\n",
                     (unsigned long long)(base + i), (unsigned long long)i);
    write_all(s, line, (size_t)n);
}

/* The next line must be the response to request i (answers come in order: the server
 * answers each request as it reads it). */
static void check_call(struct server *s, uint64_t i)
{
    char want[192];
    int n = snprintf(want, sizeof want,
                     "{\"jsonrpc\":\"2.0\",\"id\":%llu,\"result\":{\"content\":[{\"type\":\"text\",\"text\":"
                     "\"round trip %llu\"}],\"isError\":false}}",
                     (unsigned long long)(base + i), (unsigned long long)i);
    size_t len;
    const char *line = read_line(s, &len);
    if (len != (size_t)n || memcmp(line, want, len) != 0) {
        fprintf(stderr, "%s: tools/call %llu: got %.*s, expected %s\n", RUNNER_NAME, (unsigned long long)i,
                (int)len, line, want);
        exit(2);
    }
}

static double sequential_pass(struct server *s, uint64_t n)
{
    double t0 = now();
    for (uint64_t i = 0; i < n; i++) {
        send_call(s, i);
        check_call(s, i);
    }
    double t = now() - t0;
    base += n;
    return t;
}

static double inflight_pass(struct server *s, uint64_t n, uint64_t inflight)
{
    double t0 = now();
    uint64_t sent = 0;
    while (sent < n && sent < inflight) send_call(s, sent++);
    for (uint64_t done = 0; done < n; done++) {
        check_call(s, done);
        if (sent < n) send_call(s, sent++);
    }
    double t = now() - t0;
    base += n;
    return t;
}

int main(int argc, char **argv)
{
    struct roundtrip_args args = parse_roundtrip_args(argc, argv);
    server_path = args.server;
    uint64_t n = args.n, inflight = args.inflight;
    size_t rounds = args.rounds, spawns = args.spawns;
    double *seq = malloc(rounds * sizeof *seq), *par = malloc(rounds * sizeof *par);
    double *first = malloc(spawns * sizeof *first), *hs = malloc(spawns * sizeof *hs);
    static struct server s;
    if (!seq || !par || !first || !hs) die("out of memory", NULL);

    spawn_server(&s);
    handshake(&s);
    static const char list[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}\n";
    write_all(&s, list, sizeof list - 1);
    expect_prefix(&s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"tools\":[{\"name\":\"echo\"", "tools/list");
    base = 2;
    sequential_pass(&s, WARM_UP);
    inflight_pass(&s, WARM_UP, inflight);
    double *seq_cpu = malloc(rounds * sizeof *seq_cpu), *par_cpu = malloc(rounds * sizeof *par_cpu);
    if (!seq_cpu || !par_cpu) die("out of memory", NULL);
    for (size_t r = 0; r < rounds; r++) {
        double c0 = cpu_now();
        seq[r] = sequential_pass(&s, n);
        double c1 = cpu_now();
        par[r] = inflight_pass(&s, n, inflight);
        seq_cpu[r] = c1 - c0;
        par_cpu[r] = cpu_now() - c1;
    }
    close_server(&s);
    char extra[64];
    snprintf(extra, sizeof extra, " cpu_median=%.9f", median(seq_cpu, rounds));
    print_roundtrip(CLIENT, "sequential", n, 1, seq, rounds, extra);
    snprintf(extra, sizeof extra, " cpu_median=%.9f", median(par_cpu, rounds));
    print_roundtrip(CLIENT, "inflight", n, inflight, par, rounds, extra);

    for (size_t k = 0; k < spawns; k++) {
        double t0 = now();
        spawn_server(&s);
        double got = handshake(&s);
        double end = now();
        first[k] = got - t0;
        hs[k] = end - t0;
        close_server(&s);
    }
    snprintf(extra, sizeof extra, " handshake_median=%.9f", median(hs, spawns));
    print_roundtrip(CLIENT, "spawn", 1, 1, first, spawns, extra);
    return 0;
}
