/*
 * The transport's descriptors in a process whose standard descriptors are
 * closed or shared, against the promises in include/mcp_stdio.h:
 *   - a host that closed any of descriptors 0, 1, 2 (each of the 7
 *     non-empty subsets) still spawns a working server
 *     (mcp_transport_spawn, with stderr as events, inherited and
 *     discarded): the request is answered, the server's stderr line comes
 *     as an event (or goes nowhere, never into its stdout), it exits 0 at
 *     its stdin's end; and the library's own descriptors (pipes, wake-up,
 *     pidfd, /dev/null) never take the numbers 0-2, so what the host
 *     closed stays closed while the transport lives and after;
 *   - mcp_transport_new and mcp_transport_open_fds in a process without
 *     0 (or without 0, 1, 2) leave them closed, and the transport works;
 *   - a server without stderr (`2>&-`) that calls mcp_transport_open_stdio
 *     with MCP_TRANSPORT_GUARD_STDOUT: descriptor 2 stays closed,
 *     descriptor 1 becomes /dev/null, a stray 8-byte write to descriptor 1
 *     costs nothing (next_event waits without spinning), and the protocol
 *     still flows and ends;
 *   - the guard on one socket serving as both stdin and stdout (inetd
 *     style, what `socat - EXEC:server` gives): closing the transport
 *     shuts the socket's write side down, so the host sees the end of the
 *     stream while the server still runs.
 * Why: std's spawn and the transport's own descriptors used to take the
 * lowest free numbers, so a host started with `<&-`, `>&-` or `2>&-` (a
 * daemon, a test runner) gave its server a close-on-exec stdin ("Bad file
 * descriptor"), or its wake-up eventfd became stderr and then stdout; and
 * a guarded server on a socket never ended its stream.
 *
 * Each of those scenarios runs in a forked child under a watchdog (killed
 * and counted as a failure if it does not end in time), with the checks
 * made in the child reported to the parent through a pipe (the child's
 * stdout may be closed); the parent counts them. The same server with
 * every standard descriptor open is the control. A few seconds in all
 * (more under valgrind).
 */
#define _XOPEN_SOURCE 700 /* POSIX 2008: F_DUPFD_CLOEXEC, readlink, waitid */

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "test_clock.h" /* now_ms, sleep_ms */
#include "test_util.h"
#include "test_process.h" /* fd_count, spawning, Run, Text */

/* sed answers our ping: {"jsonrpc":"2.0","id":1,"method":"ping"} becomes
 * {"jsonrpc":"2.0","id":1,"result":{}}. It exits 0 at its stdin's end. */
#define PING_SERVER "echo to-stderr >&2; exec sed -u 's/\"method\":\"ping\"/\"result\":{}/'"
#define PING_RESPONSE "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}"

/* How long a child may take before the watchdog kills it: far more than
 * any scenario needs, even under valgrind, but bounded. */
#define CHILD_LIMIT_MS 20000L

/* ---- descriptors ---- */

/* Descriptor `fd` is not open. */
static int fd_closed(int fd)
{
    errno = 0;
    return fcntl(fd, F_GETFD) == -1 && errno == EBADF;
}

/* Every descriptor of `mask` (bit n: descriptor n) is closed. */
static int std_closed(int mask)
{
    int fd;
    for (fd = 0; fd <= 2; fd++) {
        if ((mask & (1 << fd)) != 0 && !fd_closed(fd)) {
            return 0;
        }
    }
    return 1;
}

static void close_std(int mask)
{
    int fd;
    for (fd = 0; fd <= 2; fd++) {
        if ((mask & (1 << fd)) != 0) {
            close(fd);
        }
    }
}

/* "{0,2}" */
static const char *mask_name(int mask)
{
    static const char *names[8] = {"{}",    "{0}",   "{1}",   "{0,1}",
                                   "{2}",   "{0,2}", "{1,2}", "{0,1,2}"};
    return names[mask & 7];
}

/* A pipe whose ends are both above 2 and close-on-exec. */
static int make_pipe(int p[2])
{
    int i;
    if (pipe(p) != 0) {
        return 0;
    }
    for (i = 0; i < 2; i++) {
        if (p[i] <= 2) {
            int moved = fcntl(p[i], F_DUPFD_CLOEXEC, 3);
            close(p[i]);
            p[i] = moved;
        } else {
            fcntl(p[i], F_SETFD, FD_CLOEXEC);
        }
    }
    return p[0] > 2 && p[1] > 2;
}

/* Descriptor `fd` is /dev/null: a character device with its number. */
static int is_dev_null(int fd)
{
    struct stat a, b;
    return fstat(fd, &a) == 0 && stat("/dev/null", &b) == 0 && S_ISCHR(a.st_mode) &&
           a.st_rdev == b.st_rdev;
}

/* ---- checks made in a child, counted by the parent ---- */

/* The child's end of its report pipe; -1 in the parent. */
static int g_report = -1;

static void report(const char *s)
{
    size_t len = strlen(s), done = 0;
    while (done < len) {
        ssize_t n = write(g_report, s + done, len - done);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return;
        }
        done += (size_t)n;
    }
}

/* One record: "P <line> <expr>" or "F <line> <expr>". */
static int rcheck_at(int ok, const char *expr, int line)
{
    char buf[512];
    snprintf(buf, sizeof buf, "%c %d %s\n", ok ? 'P' : 'F', line, expr);
    report(buf);
    return ok;
}

#define RCHECK(expr) rcheck_at((expr) ? 1 : 0, #expr, __LINE__)

/* A diagnostic line for the parent to print: "N <text>". */
static void rnote(const char *fmt, ...)
{
    char buf[1024];
    size_t i;
    va_list ap;
    buf[0] = 'N';
    buf[1] = ' ';
    va_start(ap, fmt);
    vsnprintf(buf + 2, sizeof buf - 3, fmt, ap);
    va_end(ap);
    for (i = 2; buf[i] != '\0'; i++) {
        if (buf[i] == '\n' || buf[i] == '\r') {
            buf[i] = '|';
        }
    }
    buf[i] = '\n';
    buf[i + 1] = '\0';
    report(buf);
}

/* Notes what descriptors 0-2 are now (for a failed check). */
static void rnote_std(void)
{
    int fd;
    for (fd = 0; fd <= 2; fd++) {
        char path[32], target[128];
        ssize_t n;
        if (fd_closed(fd)) {
            rnote("descriptor %d: closed", fd);
            continue;
        }
        sprintf(path, "/proc/self/fd/%d", fd);
        n = readlink(path, target, sizeof target - 1);
        target[n > 0 ? n : 0] = '\0';
        rnote("descriptor %d: open, %s", fd, target);
    }
}

/* ---- forked children under a watchdog ---- */

typedef struct {
    pid_t pid;
    int report; /* the parent's end of the report pipe */
    const char *name;
} Kid;

/* Forks; returns 1 in the child (with g_report set), 0 in the parent. */
static int kid_fork(Kid *k, const char *name)
{
    int p[2];
    k->name = name;
    k->pid = -1;
    k->report = -1;
    if (!CHECK(make_pipe(p))) {
        return 0;
    }
    fflush(stdout);
    fflush(stderr);
    k->pid = fork();
    if (k->pid == 0) {
        close(p[0]);
        g_report = p[1];
        return 1;
    }
    close(p[1]);
    if (!CHECK(k->pid > 0)) {
        close(p[0]);
        return 0;
    }
    k->report = p[0];
    return 0;
}

/* In the parent: takes the child's report until the child ends (at most
 * `limit_ms` from now, then SIGKILL), reaps it and counts its checks. */
static void kid_finish(Kid *k, long limit_ms)
{
    double end = now_ms() + (double)limit_ms;
    Text rep;
    int eof = 0, killed = 0, status = 0;
    char buf[4096];
    const char *p;

    if (k->pid <= 0) {
        return;
    }
    memset(&rep, 0, sizeof rep);
    for (;;) {
        if (!eof) {
            struct pollfd pf;
            pf.fd = k->report;
            pf.events = POLLIN;
            pf.revents = 0;
            if (poll(&pf, 1, 20) > 0) {
                ssize_t n = read(k->report, buf, sizeof buf);
                if (n > 0) {
                    text_add(&rep, buf, (size_t)n);
                } else if (n == 0 || errno != EINTR) {
                    eof = 1;
                }
            }
        } else {
            sleep_ms(5);
        }
        if (eof && process_gone(k->pid)) {
            break;
        }
        if (now_ms() > end) {
            killed = 1;
            kill(k->pid, SIGKILL);
            process_gone_within(k->pid, 5000);
            break;
        }
    }
    /* What the child wrote before it was killed (the only writer is gone). */
    while (!eof) {
        struct pollfd pf;
        ssize_t n;
        pf.fd = k->report;
        pf.events = POLLIN;
        pf.revents = 0;
        if (poll(&pf, 1, 1000) <= 0) {
            break;
        }
        n = read(k->report, buf, sizeof buf);
        if (n > 0) {
            text_add(&rep, buf, (size_t)n);
        } else {
            eof = 1;
        }
    }
    close(k->report);
    waitpid(k->pid, &status, 0);

    /* Count the child's checks as ours. */
    p = rep.data;
    while (p != NULL && *p != '\0') {
        const char *nl = strchr(p, '\n');
        char line_buf[1100];
        size_t len = nl != NULL ? (size_t)(nl - p) : strlen(p);
        if (len >= sizeof line_buf) {
            len = sizeof line_buf - 1;
        }
        memcpy(line_buf, p, len);
        line_buf[len] = '\0';
        if ((line_buf[0] == 'P' || line_buf[0] == 'F') && line_buf[1] == ' ') {
            char *rest;
            long line = strtol(line_buf + 2, &rest, 10);
            if (*rest == ' ') {
                rest++;
            }
            if (!check_at(line_buf[0] == 'P', rest, __FILE__, (int)line)) {
                printf("    in: %s\n", k->name);
            }
        } else if (line_buf[0] == 'N' && line_buf[1] == ' ') {
            printf("    %s\n", line_buf + 2);
        }
        if (nl == NULL) {
            break;
        }
        p = nl + 1;
    }
    text_free(&rep);
    if (!CHECK(!killed)) {
        printf("    %s: still running after %ld ms, killed\n", k->name, limit_ms);
    } else if (!CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
        printf("    %s: the child ended with status 0x%x\n", k->name, status);
    }
    fflush(stdout);
}

/* ---- events ---- */

/* What came from a transport: a Run, and the responses' lines. */
typedef struct {
    Run run;
    Text responses;
} Seen;

static void seen_free(Seen *s)
{
    run_free(&s->run);
    text_free(&s->responses);
}

/* Takes events into `s` until one of kind `until` (a RESPONSE only for
 * request `id`), CLOSED, or `limit_ms`; notes why when it gives up (but
 * for limits under 1 s, which only pump the transport). */
static void collect(McpTransport *t, Seen *s, int32_t until, int64_t id, double limit_ms)
{
    Run *r = &s->run;
    double end = now_ms() + limit_ms;
    while (!r->closed) {
        McpEvent ev;
        McpStatus st;
        double left = end - now_ms();
        if (left <= 0) {
            if (limit_ms >= 1000) { /* a short one only pumps the transport */
                rnote("no event of kind %ld within %.0f ms", (long)until, limit_ms);
            }
            return;
        }
        st = mcp_transport_next_event(t, (int32_t)left + 1, &ev);
        if (st == MCP_STATUS_NO_MESSAGE) {
            continue;
        }
        if (st != MCP_STATUS_OK) {
            rnote("next_event returned %ld (%s), errno %d", (long)st, status_name(st), errno);
            return;
        }
        run_note(r, &ev);
        if (ev.kind == MCP_EVENT_RESPONSE) {
            text_add(&s->responses, ev.data, ev.len);
            text_add(&s->responses, "\n", 1);
        }
        if (ev.kind == until && (until != MCP_EVENT_RESPONSE || ev.request_id == id)) {
            return;
        }
    }
}

static void rnote_seen(const Seen *s)
{
    rnote("responses: %s", s->responses.data != NULL ? s->responses.data : "(none)");
    rnote("stderr events: %s", s->run.err.data != NULL ? s->run.err.data : "(none)");
    rnote("invalid lines: %s", s->run.invalid.data != NULL ? s->run.invalid.data : "(none)");
    rnote("messages: %s", s->run.messages.data != NULL ? s->run.messages.data : "(none)");
    rnote("closed %d, exit_code %ld, term_signal %ld, %lu requests failed", s->run.closed,
          (long)s->run.exit_code, (long)s->run.term_signal, (unsigned long)s->run.n_failed);
}

/* ---- the control: every standard descriptor open ---- */

static void test_control(void)
{
    McpCommand *missing = NEW_COMMAND("/nonexistent-mcp-stdio-dir/server");
    McpTransport *t = SPAWN_SH(PING_SERVER);
    int64_t id = 0;
    Run r;
    CHECK_STATUS(mcp_transport_request(t, "ping", NULL, 0, 5000, &id), MCP_STATUS_OK);
    CHECK(id == 1);
    CHECK_STATUS(mcp_transport_close(t, 2000), MCP_STATUS_OK); /* sed ends at its stdin's end */
    RUN_AND_FREE(t, &r);
    if (!CHECK(r.n_responses == 1 && r.n_failed == 0 && r.n_invalid == 0 &&
               has_line(&r.err, "to-stderr"))) {
        printf("    control: %lu responses, %lu failed, %lu invalid\n",
               (unsigned long)r.n_responses, (unsigned long)r.n_failed,
               (unsigned long)r.n_invalid);
        print_bytes("its stderr", (const uint8_t *)r.err.data, r.err.len);
    }
    run_free(&r);
    /* A failed spawn leaves nothing behind: the same holds in what follows. */
    EXPECT_SPAWN_FAILED(missing, ENOENT);
    mcp_command_free(missing);
}

/* ---- finding 4: spawning from a host with closed standard descriptors ---- */

static const char *stderr_mode_name(int32_t mode)
{
    return mode == MCP_STDERR_EVENTS ? "stderr events"
                                     : mode == MCP_STDERR_INHERIT ? "stderr inherited"
                                                                  : "stderr discarded";
}

/* The child: closes the descriptors of `mask`, spawns `cmd`, pings. */
static void spawn_child(const McpCommand *cmd, int mask, int32_t mode)
{
    McpTransport *t = NULL;
    McpStatus st;
    int64_t id = -1;
    Seen s;
    memset(&s, 0, sizeof s);
    s.run.exit_code = -2;
    s.run.term_signal = -2;

    close_std(mask);
    errno = 0;
    st = mcp_transport_spawn(cmd, 0, &t);
    if (!RCHECK(st == MCP_STATUS_OK && t != NULL)) {
        rnote("spawn returned %ld (%s), errno %d (%s)", (long)st, status_name(st), errno,
              strerror(errno));
        return;
    }
    RCHECK(mcp_transport_request(t, "ping", NULL, 0, 5000, &id) == MCP_STATUS_OK);
    RCHECK(id == 1);
    collect(t, &s, MCP_EVENT_RESPONSE, id, 6000);
    if (!RCHECK(s.run.n_responses == 1 && has_line(&s.responses, PING_RESPONSE))) {
        rnote_seen(&s);
    }
    /* While the transport is open, what the host closed stays closed. */
    if (!RCHECK(std_closed(mask))) {
        rnote_std();
    }
    RCHECK(mcp_transport_close(t, 2000) == MCP_STATUS_OK);
    collect(t, &s, MCP_EVENT_CLOSED, -1, 8000);
    if (!RCHECK(s.run.closed && s.run.exit_code == 0 && s.run.term_signal == 0)) {
        rnote_seen(&s);
    }
    /* Nothing on its stdout but the response. */
    if (!RCHECK(s.run.n_invalid == 0 && s.run.n_messages == 0 && s.run.n_failed == 0)) {
        rnote_seen(&s);
    }
    if (mode == MCP_STDERR_EVENTS) {
        if (!RCHECK(has_line(&s.run.err, "to-stderr"))) {
            rnote_seen(&s);
        }
    } else {
        /* Inherited from a host without stderr, or discarded: no event,
         * and never into its stdout (or stdin, whence sed would echo it). */
        RCHECK(s.run.n_stderr == 0);
        if (!RCHECK((s.run.invalid.data == NULL || strstr(s.run.invalid.data, "to-stderr") == NULL) &&
                    (s.run.messages.data == NULL ||
                     strstr(s.run.messages.data, "to-stderr") == NULL))) {
            rnote_seen(&s);
        }
    }
    mcp_transport_free(t);
    if (!RCHECK(std_closed(mask))) {
        rnote_std();
    }
    seen_free(&s);
}

static void test_spawn_closed_std(void)
{
    static const int32_t modes[3] = {MCP_STDERR_EVENTS, MCP_STDERR_INHERIT, MCP_STDERR_DISCARD};
    static char names[3][8][64];
    int m, mask;
    for (m = 0; m < 3; m++) {
        for (mask = 1; mask <= 7; mask++) {
            McpCommand *cmd;
            Kid k;
            /* Inherited stderr only where the host has none (else it would
             * be this program's stderr). */
            if (modes[m] == MCP_STDERR_INHERIT && (mask & 4) == 0) {
                continue;
            }
            sprintf(names[m][mask], "spawn, closed %s, %s", mask_name(mask),
                    stderr_mode_name(modes[m]));
            cmd = SH_COMMAND(PING_SERVER);
            CHECK_STATUS(mcp_command_stderr(cmd, modes[m]), MCP_STATUS_OK);
            if (kid_fork(&k, names[m][mask])) {
                spawn_child(cmd, mask, modes[m]);
                mcp_command_free(cmd);
                _exit(0);
            }
            kid_finish(&k, CHILD_LIMIT_MS);
            mcp_command_free(cmd);
        }
    }
}

/* ---- finding 4: new and open_fds without standard descriptors ---- */

static void open_fds_child(int mask, int a_r, int a_w, int b_r, int b_w)
{
    static const char hi[] = "{\"jsonrpc\":\"2.0\",\"method\":\"hi\"}\n";
    McpTransport *m, *t = NULL;
    McpStatus st;
    Seen s;
    Text out;
    double end;
    int ended = 0;
    memset(&s, 0, sizeof s);
    memset(&out, 0, sizeof out);

    close_std(mask);
    m = mcp_transport_new();
    RCHECK(m != NULL);
    if (!RCHECK(std_closed(mask))) {
        rnote_std();
    }
    mcp_transport_free(m);

    errno = 0;
    st = mcp_transport_open_fds(a_r, b_w, 0, &t);
    if (!RCHECK(st == MCP_STATUS_OK && t != NULL)) {
        rnote("open_fds returned %ld (%s), errno %d (%s)", (long)st, status_name(st), errno,
              strerror(errno));
        close(a_r);
        close(a_w);
        close(b_r);
        close(b_w);
        return;
    }
    if (!RCHECK(std_closed(mask))) {
        rnote_std();
    }
    /* It works: a message each way. */
    RCHECK(write(a_w, hi, sizeof hi - 1) == (ssize_t)(sizeof hi - 1));
    RCHECK(mcp_transport_notify(t, "back", NULL, 0) == MCP_STATUS_OK);
    collect(t, &s, MCP_EVENT_MESSAGE, -1, 5000);
    if (!RCHECK(has_line(&s.run.messages, "{\"jsonrpc\":\"2.0\",\"method\":\"hi\"}"))) {
        rnote_seen(&s);
    }
    /* Closing writes the queue out and closes the write side: the peer
     * reads the notification and its end. */
    RCHECK(mcp_transport_close(t, 2000) == MCP_STATUS_OK);
    end = now_ms() + 5000;
    while (!ended && now_ms() < end) {
        struct pollfd p;
        collect(t, &s, MCP_EVENT_CLOSED, -1, 20);
        p.fd = b_r;
        p.events = POLLIN;
        p.revents = 0;
        if (poll(&p, 1, 0) == 1) {
            char buf[256];
            ssize_t n = read(b_r, buf, sizeof buf);
            if (n > 0) {
                text_add(&out, buf, (size_t)n);
            } else if (n == 0) {
                ended = 1;
            }
        }
    }
    if (!RCHECK(ended && has_line(&out, "{\"jsonrpc\":\"2.0\",\"method\":\"back\"}"))) {
        rnote("the peer read: %s%s", out.data != NULL ? out.data : "(nothing)",
              ended ? " and the end" : ", no end");
    }
    close(b_r);
    /* Then the peer's end: CLOSED. */
    close(a_w);
    collect(t, &s, MCP_EVENT_CLOSED, -1, 5000);
    RCHECK(s.run.closed);
    if (!RCHECK(std_closed(mask))) {
        rnote_std();
    }
    mcp_transport_free(t);
    if (!RCHECK(std_closed(mask))) {
        rnote_std();
    }
    text_free(&out);
    seen_free(&s);
}

static void test_open_fds_closed_std(void)
{
    static const int masks[2] = {1, 7};
    int i;
    for (i = 0; i < 2; i++) {
        int a[2], b[2];
        Kid k;
        if (!CHECK(make_pipe(a) && make_pipe(b))) {
            return;
        }
        if (kid_fork(&k, masks[i] == 1 ? "new and open_fds, closed {0}"
                                       : "new and open_fds, closed {0,1,2}")) {
            open_fds_child(masks[i], a[0], a[1], b[0], b[1]);
            _exit(0);
        }
        close(a[0]);
        close(a[1]);
        close(b[0]);
        close(b[1]);
        kid_finish(&k, CHILD_LIMIT_MS);
    }
}

/* ---- finding 6: the stdout guard in a server without stderr ---- */

static double cpu_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* The server: 0 and 1 are pipes from and to the parent, 2 is closed. */
/* In a server child: open_stdio with the guard, checked (NULL: noted). */
static McpTransport *open_guarded_stdio(void)
{
    McpTransport *t = NULL;
    McpStatus st;
    errno = 0;
    st = mcp_transport_open_stdio(MCP_TRANSPORT_GUARD_STDOUT, &t);
    if (!RCHECK(st == MCP_STATUS_OK && t != NULL)) {
        rnote("open_stdio returned %ld (%s), errno %d (%s)", (long)st, status_name(st), errno,
              strerror(errno));
        return NULL;
    }
    return t;
}

static void no_stderr_server(void)
{
    McpTransport *t = NULL;
    McpStatus st;
    McpEvent ev;
    double wall, cpu, end;
    int closed = 0;

    t = open_guarded_stdio();
    if (t == NULL) {
        return;
    }
    /* No stderr to point stdout at: /dev/null, and 2 stays closed. */
    if (!RCHECK(fd_closed(2))) {
        rnote_std();
    }
    if (!RCHECK(is_dev_null(1))) {
        rnote_std();
    }
    /* A stray print of 8 bytes (an eventfd's size). */
    RCHECK(write(1, "12345678", 8) == 8);
    wall = now_ms();
    cpu = cpu_ms();
    st = mcp_transport_next_event(t, 300, &ev);
    cpu = cpu_ms() - cpu;
    wall = now_ms() - wall;
    if (!RCHECK(st == MCP_STATUS_NO_MESSAGE)) {
        rnote("next_event returned %ld (%s), event kind %ld", (long)st, status_name(st),
              st == MCP_STATUS_OK ? (long)ev.kind : 0L);
    }
    /* It waited, and without spinning. */
    if (!RCHECK(wall >= 200 && cpu < wall / 4)) {
        rnote("next_event(300 ms) took %.0f ms of wall time and %.0f ms of CPU", wall, cpu);
    }
    /* The protocol still flows, and ends. */
    RCHECK(mcp_transport_notify(t, "still-here", NULL, 0) == MCP_STATUS_OK);
    RCHECK(mcp_transport_close(t, 2000) == MCP_STATUS_OK);
    end = now_ms() + 8000;
    while (!closed && now_ms() < end) {
        st = mcp_transport_next_event(t, 100, &ev);
        if (st == MCP_STATUS_OK) {
            closed = ev.kind == MCP_EVENT_CLOSED;
        } else if (st != MCP_STATUS_NO_MESSAGE) {
            rnote("next_event returned %ld (%s) while closing", (long)st, status_name(st));
            break;
        }
    }
    RCHECK(closed);
    mcp_transport_free(t);
    RCHECK(fd_closed(2));
}

static void test_guard_without_stderr(void)
{
    int in[2], out[2];
    Kid k;
    Text o;
    int ended;
    memset(&o, 0, sizeof o);
    if (!CHECK(make_pipe(in) && make_pipe(out))) {
        return;
    }
    if (kid_fork(&k, "open_stdio with the guard, stderr closed")) {
        dup2(in[0], 0);
        dup2(out[1], 1);
        close(2);
        close(in[0]);
        close(in[1]);
        close(out[0]);
        close(out[1]);
        no_stderr_server();
        _exit(0);
    }
    close(in[0]);
    close(out[1]);
    /* The notification, then the end of the stream (the private duplicate
     * closed), while our end of its stdin is still open. */
    ended = read_to_end(out[0], &o, 5000);
    if (!CHECK(o.data != NULL && strcmp(o.data, "{\"jsonrpc\":\"2.0\",\"method\":\"still-here\"}\n") ==
                                     0)) {
        print_bytes("the server's stdout", (const uint8_t *)o.data, o.len);
    }
    CHECK(ended);
    close(in[1]); /* its peer's end: CLOSED comes */
    close(out[0]);
    kid_finish(&k, CHILD_LIMIT_MS);
    text_free(&o);
}

/* ---- finding 7: the guard on one socket as stdin and stdout ---- */

static void socket_server(int go)
{
    McpTransport *t = NULL;
    McpStatus st;
    double end;
    int done = 0;
    char c;

    t = open_guarded_stdio();
    if (t == NULL) {
        return;
    }
    RCHECK(mcp_transport_notify(t, "hello", NULL, 0) == MCP_STATUS_OK);
    RCHECK(mcp_transport_close(t, 2000) == MCP_STATUS_OK);
    /* Drive the close until CLOSED, or until the host says it has seen
     * what it waited for. */
    end = now_ms() + 8000;
    while (!done && now_ms() < end) {
        McpEvent ev;
        struct pollfd p;
        st = mcp_transport_next_event(t, 50, &ev);
        if (st == MCP_STATUS_OK && ev.kind == MCP_EVENT_CLOSED) {
            done = 1;
        } else if (st != MCP_STATUS_OK && st != MCP_STATUS_NO_MESSAGE) {
            rnote("next_event returned %ld (%s) while closing", (long)st, status_name(st));
            break;
        }
        p.fd = go;
        p.events = POLLIN;
        p.revents = 0;
        if (poll(&p, 1, 0) == 1) {
            break;
        }
    }
    /* Alive until the host has checked. */
    while (read(go, &c, 1) < 0 && errno == EINTR) {
    }
    mcp_transport_free(t);
}

static void test_guard_on_socket(void)
{
    int sv[2], go[2];
    Kid k;
    Text o;
    int ended, alive;
    siginfo_t info;
    memset(&o, 0, sizeof o);
    if (!CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0 && make_pipe(go))) {
        return;
    }
    if (kid_fork(&k, "open_stdio with the guard on one socket")) {
        dup2(sv[1], 0);
        dup2(sv[1], 1);
        close(sv[0]);
        close(sv[1]);
        close(go[1]);
        socket_server(go[0]);
        close(go[0]);
        _exit(0);
    }
    close(sv[1]);
    close(go[0]);
    ended = read_to_end(sv[0], &o, 5000);
    /* Not exited (a zombie counts as exited), and not reaped here. */
    memset(&info, 0, sizeof info);
    alive = waitid(P_PID, (id_t)k.pid, &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == 0;
    if (!CHECK(o.data != NULL && strcmp(o.data, "{\"jsonrpc\":\"2.0\",\"method\":\"hello\"}\n") == 0)) {
        print_bytes("read from the socket", (const uint8_t *)o.data, o.len);
    }
    if (!CHECK(ended)) {
        printf("    no end of stream on the socket within 5 s of the server's close\n");
    }
    CHECK(alive); /* so the end came from the close, not from the exit */
    close(sv[0]);
    CHECK(write(go[1], "g", 1) == 1);
    close(go[1]);
    kid_finish(&k, CHILD_LIMIT_MS);
    text_free(&o);
}

int main(void)
{
    double start = now_ms();
    int fd, fds;
    /* Run with closed standard descriptors, this program gives itself
     * /dev/null there, so that its own pipes are above 2. */
    for (fd = 0; fd <= 2; fd++) {
        if (fd_closed(fd)) {
            int n = open("/dev/null", O_RDWR);
            (void)n;
        }
    }
    /* A child that is gone never kills us through a write. */
    signal(SIGPIPE, SIG_IGN);
    fds = fd_count();
    test_control();
    test_spawn_closed_std();
    test_open_fds_closed_std();
    test_guard_without_stderr();
    test_guard_on_socket();
    if (!CHECK(fd_count() == fds)) {
        printf("    %d descriptors before, %d after\n", fds, fd_count());
    }
    CHECK(no_child_left());
    printf("    test_stdio_fds took %.0f ms\n", now_ms() - start);
    return check_summary();
}
