/*
 * Round trips per second against examples/mcp_server.c over real pipes, through this
 * library's transport (mcp_transport_spawn, mcp_transport_request, mcp_transport_next_event),
 * for bench/roundtrip/run.sh. Linked with target/release/libmcp_stdio.a.
 *
 *   roundtrip_host SERVER N ROUNDS SPAWNS [INFLIGHT]
 *
 * Spawns SERVER (an absolute path), does the 2025-11-25 handshake (initialize, then
 * notifications/initialized), one tools/list and a warm-up of WARM_UP (2000) calls in each
 * mode (not timed, whatever N: a short smoke run must not time a cold client either), then
 * ROUNDS rounds of, one after the other:
 *
 *   sequential  N tools/call echo requests, each sent once the previous one's response
 *               came: mcp_transport_request, then mcp_transport_next_event(t, -1, ...)
 *               until its MCP_EVENT_RESPONSE;
 *   inflight    N tools/call echo requests with INFLIGHT (100) outstanding at all times:
 *               INFLIGHT are queued, then each response queues the next one, until N
 *               have been answered.
 *
 * Every response is checked: an MCP_EVENT_RESPONSE (not an error) to a request we sent
 * and did not see answered before, whose result is byte for byte the result the server
 * must send for that request's text,
 *   {"content":[{"type":"text","text":"<the text sent>"}],"isError":false}
 * (each request's text is different: "round trip <i>"). Anything else exits 2.
 *
 * Then the server is closed (mcp_transport_close, its stdin closed, it exits with status
 * 0 at the end of its input: checked), and SPAWNS times: spawn the server, send
 * initialize, wait for its response (the first response: the time from just before
 * mcp_transport_spawn to the event), queue notifications/initialized (the handshake's
 * end), close and wait for MCP_EVENT_CLOSED (not timed), free.
 *
 * Prints, seconds = the best run, median = the median run:
 *   ROUNDTRIP client=mcp_stdio mode=sequential requests=N inflight=1 seconds=.. median=.. runs=ROUNDS
 *             cpu_median=..
 *   ROUNDTRIP client=mcp_stdio mode=inflight requests=N inflight=100 seconds=.. median=.. runs=ROUNDS
 *             cpu_median=..
 *   ROUNDTRIP client=mcp_stdio mode=spawn requests=1 inflight=1 seconds=.. median=.. runs=SPAWNS
 *             handshake_median=..
 * where cpu_median is the median over the runs of this process's CPU time (user + system,
 * CLOCK_PROCESS_CPUTIME_ID) during a run: what the client costs, the server's share left
 * out; a spawn run's seconds are spawn-to-first-response and handshake_median is the
 * median spawn-to-handshake-end. The server's stderr lines come as MCP_EVENT_STDERR
 * events (the transport's default) and are copied to our stderr.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcp_stdio.h"

#define RUNNER_NAME "roundtrip_host"
#include "runner_util.h"

#define CLIENT "mcp_stdio"
#define WARM_UP 2000 /* calls in each mode before the timed runs, as the other clients */
#define PROTOCOL "2025-11-25"

static const char *server_path;

static void check(McpStatus st, const char *what)
{
    if (st != MCP_STATUS_OK) die(what, mcp_status_str(st));
}

static McpTransport *spawn_server(void)
{
    McpCommand *cmd = mcp_command_new(server_path);
    if (!cmd) die("mcp_command_new failed", NULL);
    McpTransport *t;
    McpStatus st = mcp_transport_spawn(cmd, MCP_TRANSPORT_KILL_ON_HOST_EXIT, &t);
    mcp_command_free(cmd);
    check(st, "mcp_transport_spawn");
    return t;
}

/* The next event that is not a stderr line (those are copied to our stderr). */
static void next_event(McpTransport *t, McpEvent *ev)
{
    for (;;) {
        McpStatus st = mcp_transport_next_event(t, -1, ev);
        if (st == MCP_STATUS_OUT_OF_MEMORY) continue;
        check(st, "mcp_transport_next_event");
        if (ev->kind != MCP_EVENT_STDERR) return;
        fprintf(stderr, "[server] %.*s\n", (int)ev->len, (const char *)ev->data);
    }
}

/* Waits for the response to request `id`: any other event is a failure. */
static void wait_response(McpTransport *t, int64_t id, McpEvent *ev, const char *what)
{
    next_event(t, ev);
    if (ev->kind != MCP_EVENT_RESPONSE || ev->request_id != id || ev->rpc_kind != MCP_RPC_RESPONSE) {
        fprintf(stderr, "%s: %s: expected the result of request %lld, got event kind %d (request %lld): %.*s\n",
                RUNNER_NAME, what, (long long)id, ev->kind, (long long)ev->request_id,
                ev->data ? (int)ev->len : 0, ev->data ? (const char *)ev->data : "");
        exit(2);
    }
}

static int contains(const McpSlice s, const char *needle)
{
    return s.data && memmem(s.data, s.len, needle, strlen(needle)) != NULL;
}

/* initialize, its response, notifications/initialized. Returns the time the response came. */
static double handshake(McpTransport *t)
{
    static const char params[] = "{\"protocolVersion\":\"" PROTOCOL "\",\"capabilities\":{},"
                                 "\"clientInfo\":{\"name\":\"roundtrip_host\",\"version\":\"0.0.0\"}}";
    int64_t id;
    McpEvent ev;
    check(mcp_transport_request(t, "initialize", (const uint8_t *)params, sizeof params - 1, 0, &id),
          "initialize");
    wait_response(t, id, &ev, "initialize");
    double got = now();
    if (!contains(ev.envelope.result, "\"protocolVersion\":\"" PROTOCOL "\"")) die("initialize: unexpected result", NULL);
    check(mcp_transport_notify(t, "notifications/initialized", NULL, 0), "notifications/initialized");
    return got;
}

/* Closes the transport (the server's stdin), waits for the server's exit: status 0. */
static void close_server(McpTransport *t)
{
    check(mcp_transport_close(t, 2000), "mcp_transport_close");
    McpEvent ev;
    do
        next_event(t, &ev);
    while (ev.kind != MCP_EVENT_CLOSED);
    if (ev.exit_code != 0) {
        fprintf(stderr, "%s: the server ended with status %d (signal %d)\n", RUNNER_NAME, ev.exit_code,
                ev.term_signal);
        exit(2);
    }
    mcp_transport_free(t);
}

/* ---- the calls ---- */

struct session {
    McpTransport *t;
    int64_t base;      /* request i of a pass has id base + i */
    uint64_t n;        /* requests in this pass */
    uint8_t *answered; /* per request of the pass */
    char *expected;    /* scratch for the expected result */
};

#define TEXT_FMT "round trip %llu"

static int64_t send_call(struct session *s, uint64_t i)
{
    char params[96];
    int len = snprintf(params, sizeof params, "{\"name\":\"echo\",\"arguments\":{\"text\":\"" TEXT_FMT "\"}}",
                       (unsigned long long)i);
    int64_t id;
    check(mcp_transport_request(s->t, "tools/call", (const uint8_t *)params, (size_t)len, 0, &id), "tools/call");
    return id;
}

/* Checks one event: the response to a request of this pass not answered before, with
 * exactly the result the server must send for its text. */
static void check_call(struct session *s, const McpEvent *ev)
{
    if (ev->kind != MCP_EVENT_RESPONSE || ev->rpc_kind != MCP_RPC_RESPONSE) {
        fprintf(stderr, "%s: tools/call: expected a result, got event kind %d: %.*s\n", RUNNER_NAME, ev->kind,
                ev->data ? (int)ev->len : 0, ev->data ? (const char *)ev->data : "");
        exit(2);
    }
    int64_t i = ev->request_id - s->base;
    if (i < 0 || (uint64_t)i >= s->n || s->answered[i]) die("tools/call: a response to no pending call", NULL);
    s->answered[i] = 1;
    int len = snprintf(s->expected, 128, "{\"content\":[{\"type\":\"text\",\"text\":\"" TEXT_FMT "\"}],\"isError\":false}",
                       (unsigned long long)i);
    McpSlice r = ev->envelope.result;
    if (r.len != (size_t)len || memcmp(r.data, s->expected, r.len) != 0) {
        fprintf(stderr, "%s: tools/call %lld: wrong result %.*s, expected %s\n", RUNNER_NAME, (long long)i,
                (int)r.len, r.data ? (const char *)r.data : "", s->expected);
        exit(2);
    }
}

static void begin_pass(struct session *s, uint64_t n)
{
    /* Ids are 1, 2, 3... per transport: the pass's first request gets s->base (checked). */
    s->n = n;
    memset(s->answered, 0, n);
}

/* N calls, one at a time. */
static double sequential_pass(struct session *s, uint64_t n)
{
    begin_pass(s, n);
    McpEvent ev;
    double t0 = now();
    for (uint64_t i = 0; i < n; i++) {
        int64_t id = send_call(s, i);
        if (i == 0 && id != s->base) die("unexpected request id", NULL);
        next_event(s->t, &ev);
        check_call(s, &ev);
    }
    double t = now() - t0;
    s->base += (int64_t)n;
    return t;
}

/* N calls, `inflight` outstanding at all times until the last ones. */
static double inflight_pass(struct session *s, uint64_t n, uint64_t inflight)
{
    begin_pass(s, n);
    McpEvent ev;
    double t0 = now();
    uint64_t sent = 0, done = 0;
    while (sent < n && sent < inflight) {
        int64_t id = send_call(s, sent++);
        if (sent == 1 && id != s->base) die("unexpected request id", NULL);
    }
    while (done < n) {
        next_event(s->t, &ev);
        check_call(s, &ev);
        done++;
        if (sent < n) send_call(s, sent++);
    }
    double t = now() - t0;
    s->base += (int64_t)n;
    return t;
}

int main(int argc, char **argv)
{
    struct roundtrip_args args = parse_roundtrip_args(argc, argv);
    server_path = args.server;
    uint64_t n = args.n, inflight = args.inflight;
    size_t rounds = args.rounds, spawns = args.spawns;

    /* The session: handshake, tools/list, warm-up, then the rounds. */
    struct session s = {0};
    s.t = spawn_server();
    s.answered = malloc(n > WARM_UP ? n : WARM_UP);
    s.expected = malloc(128);
    double *seq = malloc(rounds * sizeof *seq), *par = malloc(rounds * sizeof *par);
    if (!s.answered || !s.expected || !seq || !par) die("out of memory", NULL);
    handshake(s.t);
    int64_t id;
    McpEvent ev;
    check(mcp_transport_request(s.t, "tools/list", NULL, 0, 0, &id), "tools/list");
    wait_response(s.t, id, &ev, "tools/list");
    if (!contains(ev.envelope.result, "\"name\":\"echo\"")) die("tools/list: no echo tool", NULL);
    s.base = id + 1;
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
    close_server(s.t);
    char extra[64];
    snprintf(extra, sizeof extra, " cpu_median=%.9f", median(seq_cpu, rounds));
    print_roundtrip(CLIENT, "sequential", n, 1, seq, rounds, extra);
    snprintf(extra, sizeof extra, " cpu_median=%.9f", median(par_cpu, rounds));
    print_roundtrip(CLIENT, "inflight", n, inflight, par, rounds, extra);

    /* Spawn to first response, and to the handshake's end. */
    double *first = malloc(spawns * sizeof *first), *hs = malloc(spawns * sizeof *hs);
    if (!first || !hs) die("out of memory", NULL);
    for (size_t k = 0; k < spawns; k++) {
        double t0 = now();
        McpTransport *t = spawn_server();
        double got = handshake(t);
        double end = now();
        first[k] = got - t0;
        hs[k] = end - t0;
        close_server(t);
    }
    snprintf(extra, sizeof extra, " handshake_median=%.9f", median(hs, spawns));
    print_roundtrip(CLIENT, "spawn", 1, 1, first, spawns, extra);
    return 0;
}
