/*
 * The bounds a transport keeps whatever its peer sends (include/mcp_stdio.h:
 * next_event waits "up to timeout_ms", sends "never block" and may come
 * from any thread while another waits in next_event, close "wakes a
 * waiting next_event", a request's timeout comes at its deadline):
 *   - time, against peers whose bytes never run out but give no event: a
 *     descriptor transport on /dev/zero (the rest of a line already
 *     reported too long, 4 KiB limit), a server writing blank lines faster
 *     than any reader (this program, spawned with --blank-line-server),
 *     `yes ''`, and `cat /dev/zero`. For each:
 *     (a/b) next_event(t, 200) and next_event(t, 0) give NO_MESSAGE in
 *       time, and a request overdue meanwhile times out in time;
 *     (c) while a thread waits in next_event(t, -1), notify, request,
 *       next_deadline and close from another thread return at once, and
 *       the waiting thread then gets MCP_EVENT_CLOSED (a server: SIGTERM);
 *     (d) an event loop (poll_fds + poll(2) + next_event(t, 0) until
 *       NO_MESSAGE) keeps turning for 300 ms, every call in time, and
 *       ends at close with CLOSED;
 *   - memory, seen as events: (e) with a request overdue while a server
 *     floods notifications and the host takes them at a realistic pace,
 *     MCP_EVENT_REQUEST_TIMED_OUT comes once the lines read by its
 *     deadline are taken (at most one read chunk, 64 KiB, of lines waiting,
 *     and one chunk more read when the deadline falls due), while the
 *     flood goes on. The bytes themselves are measured in
 *     tests/transport_memory_bound.rs.
 * A library that overruns a bound may never return, so every scenario runs
 * in a forked child under a watchdog: the parent waits a bounded time,
 * then SIGKILLs the child (and the servers it reported) and counts a
 * failure naming the step it hung in. The child reports its steps, its
 * servers and its check counts through a pipe. Bounds are generous
 * (seconds), for valgrind and the sanitizers. Uses pthreads (link with
 * -pthread) and Linux's /proc/self/exe, splice(2) and F_SETPIPE_SZ.
 * About 8 s plain.
 */
#define _GNU_SOURCE /* POSIX 2008, and splice(2), F_SETPIPE_SZ (Linux) */

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "test_clock.h" /* now_ms, sleep_ms */
#include "test_util.h"
#include "test_process.h" /* spawning, process_gone */

/* How long a call may take, generously: one with a 200 ms timeout, one with
 * timeout 0 (or that promises to return at once: sends, close, poll_fds). */
#define TIMEOUT_MS 200
#define TIMEOUT_BOUND_MS 3000.0
#define PROMPT_BOUND_MS 2000.0

/* The transport's read chunk (the header's "64 KiB" of stderr pieces and of
 * one read). */
#define READ_CHUNK 65536

/* ---- scenarios in forked children, under a watchdog ---- */

/* What a scenario's child tells its parent (one write each: atomic). */
enum { REPORT_STEP = 1, REPORT_SERVER = 2, REPORT_DONE = 3 };

typedef struct {
    int32_t type;
    int32_t passed, failed; /* the child's counts so far */
    int32_t pid;            /* REPORT_SERVER: a server's pid (its group's) */
    char text[80];          /* REPORT_STEP: what it is doing now */
} Report;

static int g_report_fd = -1; /* in a child: the pipe to the parent */

static void report(int32_t type, int32_t pid, const char *text)
{
    Report r;
    memset(&r, 0, sizeof r);
    r.type = type;
    r.passed = check_passed_count;
    r.failed = check_failed_count;
    r.pid = pid;
    if (text != NULL) {
        strncpy(r.text, text, sizeof r.text - 1);
    }
    if (g_report_fd >= 0) {
        ssize_t w;
        do {
            w = write(g_report_fd, &r, sizeof r);
        } while (w < 0 && errno == EINTR);
    }
}

/* The step a scenario is at: named if it hangs there. */
#define STEP(text) report(REPORT_STEP, 0, (text))

/* Ends a scenario's child that cannot go on (a thread is stuck in the
 * library, a transport cannot be freed): its checks so far, failed ones
 * among them, are reported; nothing more is freed. */
static void abandon_scenario(void)
{
    report(REPORT_DONE, 0, "abandoned");
    fflush(stdout);
    _exit(0);
}

/* A spawned server whose pid the parent kills (with its group) if the
 * scenario hangs. */
static McpTransport *spawn_reported(McpCommand *cmd)
{
    McpTransport *t = SPAWN(cmd);
    mcp_command_free(cmd);
    report(REPORT_SERVER, mcp_transport_pid(t), NULL);
    return t;
}

/* Runs `scenario` in a forked child, for at most `limit_ms`; adds its
 * checks to ours. A child that does not end in time is killed, with the
 * servers it spawned, and counted as one failure. */
static void run_scenario(const char *name, void (*scenario)(void), double limit_ms)
{
    int p[2];
    pid_t pid;
    int status = 0, exited = 0, killed = 0, done = 0, eof = 0;
    int32_t passed = 0, failed = 0, servers[16];
    size_t n_servers = 0, i;
    char step[sizeof ((Report *)0)->text] = "(start)";
    double start;

    if (!CHECK(pipe(p) == 0)) {
        return;
    }
    fflush(stdout);
    fflush(stderr);
    pid = fork();
    if (pid == 0) {
        close(p[0]);
        g_report_fd = p[1];
        check_passed_count = 0;
        check_failed_count = 0;
        scenario();
        report(REPORT_DONE, 0, NULL);
        fflush(stdout);
        close(p[1]);
        exit(0); /* not _exit: leak checkers look at the child too */
    }
    close(p[1]);
    if (!CHECK(pid > 0)) {
        close(p[0]);
        return;
    }
    start = now_ms();
    while (!eof || !exited) {
        struct pollfd pf;
        pf.fd = p[0];
        pf.events = POLLIN;
        pf.revents = 0;
        if (!eof && poll(&pf, 1, 20) > 0) {
            Report r;
            ssize_t n = read(p[0], &r, sizeof r);
            if (n == (ssize_t)sizeof r) {
                passed = r.passed;
                failed = r.failed;
                if (r.type == REPORT_STEP) {
                    memcpy(step, r.text, sizeof step);
                } else if (r.type == REPORT_SERVER && n_servers < sizeof servers / sizeof *servers) {
                    servers[n_servers++] = r.pid;
                } else if (r.type == REPORT_DONE) {
                    done = 1;
                }
            } else if (n == 0 || (n < 0 && errno != EINTR)) {
                eof = 1;
            }
        } else if (eof) {
            sleep_ms(5);
        }
        if (!exited && waitpid(pid, &status, WNOHANG) == pid) {
            exited = 1;
        }
        if (now_ms() - start > limit_ms && !(exited && eof)) {
            if (!exited) {
                kill(pid, SIGKILL);
                waitpid(pid, &status, 0);
                exited = 1;
                killed = 1;
            }
            break;
        }
    }
    close(p[0]);
    if (killed) {
        for (i = 0; i < n_servers; i++) {
            if (!process_gone(servers[i])) {
                kill(-servers[i], SIGKILL);
                process_gone_within(servers[i], 2000);
            }
        }
    }
    check_passed_count += passed;
    check_failed_count += failed;
    if (!CHECK(!killed)) {
        printf("    scenario %s did not end within %.0f ms (killed); it hung at: %s\n", name,
               limit_ms, step);
    } else if (!CHECK(done && WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
        printf("    scenario %s ended with status 0x%x%s; its last step: %s\n", name, status,
               done ? "" : " before its end", step);
    }
}

/* ---- helpers ---- */

/* next_event(t, timeout_ms) returns MCP_STATUS_NO_MESSAGE within `bound_ms`,
 * `times` times in a row. */
static void expect_no_message_within_at(McpTransport *t, int32_t timeout_ms, double bound_ms,
                                        int times, const char *file, int line)
{
    int i;
    for (i = 0; i < times; i++) {
        McpEvent ev;
        double start = now_ms(), took;
        McpStatus st = mcp_transport_next_event(t, timeout_ms, &ev);
        took = now_ms() - start;
        if (!check_status_at(st, MCP_STATUS_NO_MESSAGE, "next_event gives NO_MESSAGE", file,
                             line) &&
            st == MCP_STATUS_OK) {
            printf("    an event of kind %ld came (call %d, timeout %ld)\n", (long)ev.kind, i,
                   (long)timeout_ms);
        }
        if (!check_at(took <= bound_ms, "next_event returns within its bound", file, line)) {
            printf("    next_event(t, %ld) took %.0f ms (call %d), bound %.0f ms\n",
                   (long)timeout_ms, took, i, bound_ms);
        }
    }
}

#define EXPECT_NO_MESSAGE_WITHIN(t, timeout_ms, bound_ms, times)                               \
    expect_no_message_within_at((t), (timeout_ms), (bound_ms), (times), __FILE__, __LINE__)

/* Takes events until MCP_EVENT_CLOSED, for at most `limit_ms`; the closed
 * event's exit status in *exit_code and *term_signal. */
static int take_until_closed(McpTransport *t, double limit_ms, int32_t *exit_code,
                             int32_t *term_signal)
{
    double end = now_ms() + limit_ms;
    for (;;) {
        McpEvent ev;
        McpStatus st;
        double left = end - now_ms();
        if (left <= 0) {
            return 0;
        }
        st = mcp_transport_next_event(t, (int32_t)left + 1, &ev);
        if (st == MCP_STATUS_NO_MESSAGE) {
            continue;
        }
        if (st != MCP_STATUS_OK) {
            printf("    next_event returned %ld (%s) before CLOSED\n", (long)st, status_name(st));
            return 0;
        }
        if (ev.kind == MCP_EVENT_CLOSED) {
            *exit_code = ev.exit_code;
            *term_signal = ev.term_signal;
            return 1;
        }
    }
}

/* close(t, TIMEOUT_MS) returns at once, CLOSED comes (a spawned server:
 * killed by SIGTERM at the grace), the transport is freed. */
static void close_and_free_at(McpTransport *t, int spawned, const char *file, int line)
{
    int32_t exit_code = -2, term_signal = -2;
    double start = now_ms(), took;
    check_status_at(mcp_transport_close(t, TIMEOUT_MS), MCP_STATUS_OK, "close", file, line);
    took = now_ms() - start;
    if (!check_at(took <= PROMPT_BOUND_MS, "close returns at once", file, line)) {
        printf("    close took %.0f ms\n", took);
    }
    if (check_at(take_until_closed(t, 8000, &exit_code, &term_signal), "CLOSED came", file,
                 line) &&
        spawned &&
        !check_at(exit_code == -1 && term_signal == SIGTERM, "the server ended by SIGTERM", file,
                  line)) {
        printf("    exit_code %ld term_signal %ld\n", (long)exit_code, (long)term_signal);
    }
    mcp_transport_free(t);
}

#define CLOSE_AND_FREE(t, spawned) close_and_free_at((t), (spawned), __FILE__, __LINE__)

/* ---- the peers: bytes that never run out and give no event ---- */

/* A descriptor transport on `rd` (writing to /dev/null), with a 4 KiB
 * line limit. */
static McpTransport *open_fds_limited(int rd)
{
    McpTransport *t = NULL;
    int null = open("/dev/null", O_WRONLY);
    if (!CHECK(rd >= 0 && null >= 0)) {
        abandon_scenario();
    }
    if (!CHECK_STATUS(mcp_transport_open_fds(rd, null, 0, &t), MCP_STATUS_OK)) {
        close(rd);
        close(null);
        abandon_scenario();
    }
    CHECK_STATUS(mcp_transport_set_max_line_len(t, 4096), MCP_STATUS_OK);
    return t;
}

/* A spawned `sh -c <script>` with a 4 KiB line limit. */
static McpTransport *spawn_limited(const char *script)
{
    McpTransport *t = spawn_reported(SH_COMMAND(script));
    CHECK_STATUS(mcp_transport_set_max_line_len(t, 4096), MCP_STATUS_OK);
    return t;
}

/* The server of the peer "blank lines that never run dry": this program,
 * run as `<it> --blank-line-server`. It splices a file of 64 KiB of
 * newlines into its stdout, made a 1 MiB pipe: the page cache's pages, not
 * copies, so it outruns a reader and the pipe is almost never empty.
 * (`yes ''` writes about as fast as a transport reads blank lines: its
 * pipe is empty for a moment now and then, and a library that reads until
 * the pipe is empty returns then.) Ends at SIGTERM, or when the pipe's
 * reader goes. */
static int blank_line_server(void)
{
    static char newlines[READ_CHUNK];
    char path[] = "/tmp/mcp-test-bounds-XXXXXX";
    int file = mkstemp(path), use_splice = 1;
    memset(newlines, '\n', sizeof newlines);
    if (file < 0 || write(file, newlines, sizeof newlines) != (ssize_t)sizeof newlines) {
        return 1;
    }
    unlink(path);
#ifdef F_SETPIPE_SZ
    (void)fcntl(1, F_SETPIPE_SZ, 1 << 20); /* at most pipe-max-size: best effort */
#endif
    for (;;) {
        ssize_t n;
#ifdef SPLICE_F_MOVE
        if (use_splice) {
            loff_t off = 0;
            n = splice(file, &off, 1, NULL, sizeof newlines, 0);
            if (n < 0 && errno == EINVAL) {
                use_splice = 0; /* not from this file system: copy */
                continue;
            }
        } else
#endif
        {
            n = write(1, newlines, sizeof newlines);
        }
        if (n < 0 && errno != EINTR) {
            return 0;
        }
        (void)use_splice;
    }
}

/* This program, spawned as the blank-line server. */
static McpTransport *spawn_blank_line_server(void)
{
    char self[4096];
    const char *ld_path = getenv("LD_LIBRARY_PATH");
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    McpCommand *cmd;
    McpTransport *t;
    if (!CHECK(n > 0)) {
        abandon_scenario();
    }
    self[n] = '\0';
    cmd = NEW_COMMAND(self);
    CHECK_STATUS(mcp_command_arg(cmd, "--blank-line-server"), MCP_STATUS_OK);
    if (ld_path != NULL) {
        /* It needs the library to start, as we did. */
        CHECK_STATUS(mcp_command_env(cmd, "LD_LIBRARY_PATH", ld_path), MCP_STATUS_OK);
    }
    CHECK_STATUS(mcp_command_stderr(cmd, MCP_STDERR_INHERIT), MCP_STATUS_OK);
    t = spawn_reported(cmd);
    CHECK_STATUS(mcp_transport_set_max_line_len(t, 4096), MCP_STATUS_OK);
    return t;
}

typedef struct {
    const char *name;
    int spawned;        /* a server: SIGTERM ends it at close */
    int too_long_first; /* its first event is one too-long line */
} Peer;

static const Peer PEERS[] = {
    {"/dev/zero", 0, 1},
    {"blank lines that never run dry", 1, 0}, /* --blank-line-server */
    {"yes ''", 1, 0},
    {"cat /dev/zero", 1, 1},
};

static const Peer *g_peer = &PEERS[0]; /* the peer of the next scenario */

static McpTransport *open_peer(void)
{
    if (g_peer == &PEERS[0]) {
        return open_fds_limited(open("/dev/zero", O_RDONLY));
    }
    if (g_peer == &PEERS[1]) {
        return spawn_blank_line_server();
    }
    if (g_peer == &PEERS[2]) {
        return spawn_limited("exec yes ''");
    }
    return spawn_limited("exec cat /dev/zero");
}

/* Prints "<scenario> <peer>: <what>" as the step. */
static void peer_step(const char *scenario, const char *what)
{
    char step[sizeof ((Report *)0)->text];
    size_t n = strlen(scenario) + strlen(g_peer->name) + strlen(what) + 4;
    if (n < sizeof step) {
        sprintf(step, "%s %s: %s", scenario, g_peer->name, what);
    } else {
        sprintf(step, "%s %.40s: %.20s", scenario, g_peer->name, what);
    }
    STEP(step);
}

/* The first event is the too-long line: INVALID, TOO_LONG, data NULL,
 * len above the limit. */
static void expect_too_long_event_at(McpTransport *t, const char *file, int line)
{
    McpEvent ev;
    McpStatus st;
    memset(&ev, 0, sizeof ev);
    st = mcp_transport_next_event(t, 5000, &ev);
    if (!check_at(st == MCP_STATUS_OK && ev.kind == MCP_EVENT_INVALID &&
                      ev.invalid_kind == MCP_MESSAGE_TOO_LONG && ev.data == NULL &&
                      ev.len > 4096,
                  "the first event is INVALID, MCP_MESSAGE_TOO_LONG", file, line)) {
        printf("    got status %ld (%s), kind %ld, invalid_kind %ld, data %s, len %lu\n", (long)st,
               status_name(st), (long)ev.kind, (long)ev.invalid_kind,
               ev.data == NULL ? "NULL" : "non-NULL", (unsigned long)ev.len);
    }
}

/* The peer, its too-long line taken. */
static McpTransport *open_peer_at_first(const char *scenario)
{
    McpTransport *t = open_peer();
    if (g_peer->too_long_first) {
        peer_step(scenario, "the first event");
        expect_too_long_event_at(t, __FILE__, __LINE__);
    }
    return t;
}

/* ---- (a), (b): next_event's timeouts, and a request's ---- */

/* A request overdue while the bytes keep coming times out, and every
 * next_event(t, 200) meanwhile returns in time. */
static void expect_request_timed_out(McpTransport *t)
{
    int64_t id = 0;
    int timed_out = 0;
    double sent, end;
    CHECK_STATUS(mcp_transport_request(t, "tools/list", NULL, 0, 100, &id), MCP_STATUS_OK);
    sent = now_ms();
    end = sent + 100 + TIMEOUT_BOUND_MS;
    while (!timed_out && now_ms() < end) {
        McpEvent ev;
        double start = now_ms(), took;
        McpStatus st = mcp_transport_next_event(t, TIMEOUT_MS, &ev);
        took = now_ms() - start;
        if (!CHECK(took <= TIMEOUT_BOUND_MS)) {
            printf("    %s: next_event(t, %d) took %.0f ms\n", g_peer->name, TIMEOUT_MS, took);
        }
        if (st == MCP_STATUS_OK && ev.kind == MCP_EVENT_REQUEST_TIMED_OUT) {
            CHECK(ev.request_id == id);
            timed_out = 1;
        } else if (!CHECK(st == MCP_STATUS_NO_MESSAGE)) {
            printf("    %s: got status %ld (%s), kind %ld\n", g_peer->name, (long)st,
                   status_name(st), (long)(st == MCP_STATUS_OK ? ev.kind : 0));
            break;
        }
    }
    if (!CHECK(timed_out)) {
        printf("    %s: no MCP_EVENT_REQUEST_TIMED_OUT %.0f ms after the request\n", g_peer->name,
               now_ms() - sent);
    }
}

static void scenario_timeouts(void)
{
    McpTransport *t = open_peer_at_first("(a/b)");
    peer_step("(a/b)", "next_event(t, 200)");
    EXPECT_NO_MESSAGE_WITHIN(t, TIMEOUT_MS, TIMEOUT_BOUND_MS, 3);
    peer_step("(a/b)", "next_event(t, 0)");
    EXPECT_NO_MESSAGE_WITHIN(t, 0, PROMPT_BOUND_MS, 5);
    peer_step("(a/b)", "a request overdue");
    expect_request_timed_out(t);
    peer_step("(a/b)", "close and free");
    CLOSE_AND_FREE(t, g_peer->spawned);
}

/* ---- (c) sends and close from another thread meanwhile ---- */

typedef struct {
    McpTransport *t;
    pthread_mutex_t lock;
    int started;   /* about to call next_event */
    int finished;  /* the thread is done */
    int closed;    /* it got MCP_EVENT_CLOSED */
    int32_t exit_code, term_signal;
    McpStatus failure; /* a status other than OK and NO_MESSAGE, or OK */
} Waiter;

static void *waiter_thread(void *arg)
{
    Waiter *w = (Waiter *)arg;
    int over = 0;
    pthread_mutex_lock(&w->lock);
    w->started = 1;
    pthread_mutex_unlock(&w->lock);
    while (!over) {
        McpEvent ev;
        McpStatus st = mcp_transport_next_event(w->t, -1, &ev);
        pthread_mutex_lock(&w->lock);
        if (st == MCP_STATUS_OK && ev.kind == MCP_EVENT_CLOSED) {
            w->closed = over = 1;
            w->exit_code = ev.exit_code;
            w->term_signal = ev.term_signal;
        } else if (st != MCP_STATUS_OK && st != MCP_STATUS_NO_MESSAGE) {
            w->failure = st;
            over = 1;
        }
        pthread_mutex_unlock(&w->lock);
    }
    pthread_mutex_lock(&w->lock);
    w->finished = 1;
    pthread_mutex_unlock(&w->lock);
    return NULL;
}

/* Waits up to `ms` for `*flag` (under the waiter's lock). */
static int waiter_flag_within(Waiter *w, const int *flag, double ms)
{
    double end = now_ms() + ms;
    for (;;) {
        int v;
        pthread_mutex_lock(&w->lock);
        v = *flag;
        pthread_mutex_unlock(&w->lock);
        if (v) {
            return 1;
        }
        if (now_ms() > end) {
            return 0;
        }
        sleep_ms(5);
    }
}

/* `call` returned within PROMPT_BOUND_MS of `start`. */
static void expect_prompt_at(double start, const char *call, const char *file, int line)
{
    double took = now_ms() - start;
    if (!check_at(took <= PROMPT_BOUND_MS, "a call from another thread returns at once", file,
                  line)) {
        printf("    %s: %s took %.0f ms while another thread waited in next_event\n",
               g_peer->name, call, took);
    }
}

#define EXPECT_PROMPT(start, call) expect_prompt_at((start), (call), __FILE__, __LINE__)

static void scenario_waiting_thread(void)
{
    McpTransport *t = open_peer_at_first("(c)");
    Waiter w;
    pthread_t thread;
    int32_t timeout = -2;
    int64_t id = 0;
    double start;

    memset(&w, 0, sizeof w);
    w.t = t;
    w.exit_code = w.term_signal = -2;
    if (!CHECK(pthread_mutex_init(&w.lock, NULL) == 0) ||
        !CHECK(pthread_create(&thread, NULL, waiter_thread, &w) == 0)) {
        abandon_scenario();
    }
    CHECK(waiter_flag_within(&w, &w.started, 5000));
    sleep_ms(100); /* it waits in next_event(t, -1) by now */

    /* Sends never block, and wake the waiting thread. */
    peer_step("(c)", "notify from another thread");
    start = now_ms();
    CHECK_STATUS(mcp_transport_notify(t, "notifications/progress", (const uint8_t *)"{}", 2),
                 MCP_STATUS_OK);
    EXPECT_PROMPT(start, "notify");

    peer_step("(c)", "request from another thread");
    start = now_ms();
    CHECK_STATUS(mcp_transport_request(t, "tools/list", NULL, 0, 0, &id), MCP_STATUS_OK);
    EXPECT_PROMPT(start, "request");

    peer_step("(c)", "next_deadline from another thread");
    start = now_ms();
    CHECK_STATUS(mcp_transport_next_deadline(t, &timeout), MCP_STATUS_OK);
    EXPECT_PROMPT(start, "next_deadline");

    /* Close wakes the waiting next_event, which drives it to CLOSED. */
    peer_step("(c)", "close from another thread");
    start = now_ms();
    CHECK_STATUS(mcp_transport_close(t, TIMEOUT_MS), MCP_STATUS_OK);
    EXPECT_PROMPT(start, "close");

    peer_step("(c)", "the waiting thread gets CLOSED");
    /* SIGTERM at the grace (200 ms), SIGKILL at twice it, 1 s more for a
     * process stuck in the kernel: 8 s is plenty. */
    if (!CHECK(waiter_flag_within(&w, &w.finished, 8000))) {
        printf("    %s: the thread waiting in next_event(t, -1) did not end\n", g_peer->name);
        abandon_scenario(); /* it is still in the library: nothing can be freed */
    }
    CHECK(pthread_join(thread, NULL) == 0);
    if (!CHECK(w.closed)) {
        printf("    %s: next_event returned %ld (%s) instead of CLOSED\n", g_peer->name,
               (long)w.failure, status_name(w.failure));
    }
    if (g_peer->spawned && !CHECK(w.exit_code == -1 && w.term_signal == SIGTERM)) {
        printf("    %s: exit_code %ld term_signal %ld\n", g_peer->name, (long)w.exit_code,
               (long)w.term_signal);
    }
    pthread_mutex_destroy(&w.lock);
    mcp_transport_free(t);
}

/* ---- (d) an event loop: poll_fds + poll(2) + next_event(t, 0) ---- */

/* Turns the loop for about 300 ms (three rounds at least), closes, and goes
 * on to CLOSED. Every call returns within its bound (the loop stops at the
 * first that does not); the loop keeps turning. */
static void scenario_event_loop(void)
{
    McpTransport *t = open_peer_at_first("(d)");
    struct pollfd fds[MCP_TRANSPORT_MAX_POLL_FDS];
    double start = now_ms(), end_by = start + 300 + 8000;
    double longest_poll_fds = 0, longest_next_event = 0, longest_close = 0;
    long rounds = 0, calls = 0, events = 0;
    int closing = 0, closed = 0, overran = 0;
    int32_t exit_code = -2, term_signal = -2, event_kind = 0;
    McpStatus failed = MCP_STATUS_OK;

    peer_step("(d)", "the event loop");
    while (!closed && !overran && failed == MCP_STATUS_OK && now_ms() < end_by) {
        size_t n = 0;
        int32_t timeout = -2;
        McpStatus st;
        double t0 = now_ms(), took;
        st = mcp_transport_poll_fds(t, fds, MCP_TRANSPORT_MAX_POLL_FDS, &n, &timeout);
        took = now_ms() - t0;
        longest_poll_fds = took > longest_poll_fds ? took : longest_poll_fds;
        if (st != MCP_STATUS_OK) {
            failed = st;
            break;
        }
        if (took > PROMPT_BOUND_MS) {
            overran = 1;
            break;
        }
        if (poll(fds, (nfds_t)n, timeout < 0 || timeout > 100 ? 100 : timeout) < 0 &&
            !CHECK(errno == EINTR)) {
            break;
        }
        rounds++;
        for (;;) {
            McpEvent ev;
            t0 = now_ms();
            st = mcp_transport_next_event(t, 0, &ev);
            took = now_ms() - t0;
            calls++;
            longest_next_event = took > longest_next_event ? took : longest_next_event;
            if (took > PROMPT_BOUND_MS) {
                overran = 1;
                break;
            }
            if (st == MCP_STATUS_NO_MESSAGE) {
                break;
            }
            if (st != MCP_STATUS_OK) {
                failed = st;
                break;
            }
            if (ev.kind == MCP_EVENT_CLOSED) {
                closed = 1;
                exit_code = ev.exit_code;
                term_signal = ev.term_signal;
                break;
            }
            events++; /* none should come: the bytes give none */
            event_kind = ev.kind;
        }
        /* At least three rounds before the close, however slow each call
         * (valgrind on a debug build): the loop must be seen turning. */
        if (!closing && now_ms() - start >= 300 && rounds >= 3) {
            peer_step("(d)", "close in the event loop");
            t0 = now_ms();
            CHECK_STATUS(mcp_transport_close(t, TIMEOUT_MS), MCP_STATUS_OK);
            longest_close = now_ms() - t0;
            closing = 1;
        }
    }
    if (!CHECK(longest_poll_fds <= PROMPT_BOUND_MS && longest_next_event <= PROMPT_BOUND_MS &&
               longest_close <= PROMPT_BOUND_MS)) {
        printf("    %s: the longest poll_fds took %.0f ms, next_event(t, 0) %.0f ms, close %.0f "
               "ms (call %ld)\n",
               g_peer->name, longest_poll_fds, longest_next_event, longest_close, calls);
    }
    if (!CHECK(failed == MCP_STATUS_OK)) {
        printf("    %s: a call returned %ld (%s)\n", g_peer->name, (long)failed,
               status_name(failed));
    }
    if (!CHECK(events == 0)) {
        printf("    %s: %ld events came (the last of kind %ld)\n", g_peer->name, events,
               (long)event_kind);
    }
    /* The loop turned (poll woke it, the calls returned) more than once. */
    if (!CHECK(rounds >= 3 && calls >= rounds)) {
        printf("    %s: %ld rounds, %ld calls\n", g_peer->name, rounds, calls);
    }
    if (!CHECK(closed)) {
        printf("    %s: no CLOSED in the event loop (%ld rounds, %ld calls)\n", g_peer->name,
               rounds, calls);
    }
    if (closed && g_peer->spawned && !CHECK(exit_code == -1 && term_signal == SIGTERM)) {
        printf("    %s: exit_code %ld term_signal %ld\n", g_peer->name, (long)exit_code,
               (long)term_signal);
    }
    if (!closed) {
        abandon_scenario(); /* free would wait for the end that did not come */
    }
    mcp_transport_free(t);
}

/* ---- (e) a request overdue while the server floods notifications ---- */

#define FLOOD_LINE                                                                             \
    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":"        \
    "\"info\",\"data\":\"flood\"}}"

static volatile unsigned long g_work; /* what the host's "work" computes */

/* Some work per event, as a host does: a short loop, and 1 ms of sleep
 * every 100 events (the server gets ahead meanwhile). */
static void host_work(long event)
{
    unsigned long i, x = (unsigned long)event;
    for (i = 0; i < 200; i++) {
        x = x * 1103515245UL + 12345UL;
    }
    g_work = x;
    if (event % 100 == 99) {
        sleep_ms(1);
    }
}

static void scenario_flood_overdue(void)
{
    /* The lines one read chunk can hold (a partial line before it
     * included), twice: those buffered when the deadline fell due and the
     * one read more then; a few more for rounding. */
    const size_t line_len = LIT_LEN(FLOOD_LINE) + 1;
    const long bound = (long)(2 * READ_CHUNK / line_len) + 16;
    McpCommand *cmd = SH_COMMAND("exec yes '" FLOOD_LINE "'");
    McpTransport *t;
    int64_t id = 0;
    long taken = 0, after_deadline = 0, other = 0;
    int timed_out = 0;
    double sent, start, deadline;
    McpEvent ev;
    McpStatus st;

    CHECK_STATUS(mcp_command_stderr(cmd, MCP_STDERR_DISCARD), MCP_STATUS_OK);
    t = spawn_reported(cmd);
    CHECK_STATUS(mcp_transport_set_max_line_len(t, 4096), MCP_STATUS_OK);

    /* The flood flows: its lines are notifications. */
    STEP("(e) flood: the first events");
    for (taken = 0; taken < 100; taken++) {
        st = mcp_transport_next_event(t, 5000, &ev);
        if (!CHECK(st == MCP_STATUS_OK && ev.kind == MCP_EVENT_MESSAGE &&
                   ev.rpc_kind == MCP_RPC_NOTIFICATION && ev.len == line_len - 1)) {
            printf("    got status %ld (%s), kind %ld\n", (long)st, status_name(st),
                   (long)(st == MCP_STATUS_OK ? ev.kind : 0));
            break;
        }
        host_work(taken);
    }

    STEP("(e) flood: a request overdue");
    CHECK_STATUS(mcp_transport_request(t, "tools/list", NULL, 0, 100, &id), MCP_STATUS_OK);
    sent = now_ms(); /* the deadline, set during the call, is at most this + 100 */
    deadline = sent + 100;
    start = sent;
    taken = 0;
    while (now_ms() - start < 5000 && taken < 300000) {
        double before = now_ms();
        st = mcp_transport_next_event(t, 1000, &ev);
        if (st != MCP_STATUS_OK) {
            CHECK_STATUS(st, MCP_STATUS_OK);
            break;
        }
        taken++;
        if (ev.kind == MCP_EVENT_REQUEST_TIMED_OUT && ev.request_id == id) {
            timed_out = 1;
            break;
        }
        if (ev.kind != MCP_EVENT_MESSAGE) {
            other++;
        }
        if (before >= deadline) {
            after_deadline++;
            if (after_deadline > bound) {
                break; /* past the bound already: the memory too */
            }
        }
        host_work(taken);
    }
    if (!CHECK(timed_out)) {
        printf("    no MCP_EVENT_REQUEST_TIMED_OUT for request %ld: %ld events taken in %.0f ms, "
               "%ld of them after its deadline (bound %ld)%s\n",
               (long)id, taken, now_ms() - sent, after_deadline, bound,
               after_deadline > bound ? ", stopped there" : "");
    }
    if (!CHECK(after_deadline <= bound)) {
        printf("    %ld events came after the deadline before its timeout; at most %ld lines "
               "(two reads of %d bytes, lines of %lu bytes) were buffered then\n",
               after_deadline, bound, READ_CHUNK, (unsigned long)line_len);
    }
    CHECK(other == 0);
    if (!timed_out) {
        /* Megabytes of lines may wait in the transport: no cleanup. */
        kill(-mcp_transport_pid(t), SIGKILL);
        abandon_scenario();
    }

    /* The flood goes on: the timeout came while it lasted. */
    STEP("(e) flood: after the timeout");
    st = mcp_transport_next_event(t, 5000, &ev);
    CHECK(st == MCP_STATUS_OK && ev.kind == MCP_EVENT_MESSAGE);

    STEP("(e) flood: close and free");
    CLOSE_AND_FREE(t, 1);
}

int main(int argc, char **argv)
{
    size_t i;
    char name[160];

    if (argc == 2 && strcmp(argv[1], "--blank-line-server") == 0) {
        return blank_line_server();
    }


    /* Each takes a second or less plain; the limits leave room for
     * valgrind and the sanitizers. */
    for (i = 0; i < sizeof PEERS / sizeof *PEERS; i++) {
        g_peer = &PEERS[i];
        sprintf(name, "(a/b) timeouts, %s", g_peer->name);
        run_scenario(name, scenario_timeouts, 10000);
    }
    for (i = 0; i < sizeof PEERS / sizeof *PEERS; i++) {
        g_peer = &PEERS[i];
        sprintf(name, "(c) a waiting thread, %s", g_peer->name);
        run_scenario(name, scenario_waiting_thread, 12000);
    }
    for (i = 0; i < sizeof PEERS / sizeof *PEERS; i++) {
        g_peer = &PEERS[i];
        sprintf(name, "(d) an event loop, %s", g_peer->name);
        run_scenario(name, scenario_event_loop, 12000);
    }
    run_scenario("(e) a request overdue in a flood", scenario_flood_overdue, 20000);
    CHECK(no_child_left());
    return check_summary();
}
