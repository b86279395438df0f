/*
 * Helpers of the C tests that spawn servers (test_spawn.c and the tests of
 * the transport's bounds and descriptors): counting descriptors, watching
 * processes, spawning `sh -c` scripts, and running a transport to
 * MCP_EVENT_CLOSED while recording what the server said, reading a pipe to
 * its end. Header-only, as test_util.h (static inline: a file that uses
 * only some is not warned of the others); include it after test_util.h and
 * test_clock.h, with _XOPEN_SOURCE 700 (or _GNU_SOURCE) defined.
 */
#ifndef MCP_STDIO_TEST_PROCESS_H
#define MCP_STDIO_TEST_PROCESS_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>


/* The descriptors this process has open (the listing's own included: the
 * same number every time). */
static inline int fd_count(void)
{
    int n = 0;
    struct dirent *e;
    DIR *d = opendir("/proc/self/fd");
    if (d == NULL) {
        return -1;
    }
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] != '.') {
            n++;
        }
    }
    closedir(d);
    return n;
}

/* No child of this process is left, running or unreaped. */
static inline int no_child_left(void)
{
    errno = 0;
    return waitpid(-1, NULL, WNOHANG) == -1 && errno == ECHILD;
}

/* The process `pid` is gone: no such process, or a zombie (killed, waiting
 * for a parent that is not us to reap it). */
static inline int process_gone(pid_t pid)
{
    char path[64], buf[512];
    const char *close_paren;
    ssize_t n;
    int fd;
    sprintf(path, "/proc/%ld/stat", (long)pid);
    fd = open(path, O_RDONLY);
    if (fd < 0) {
        return 1;
    }
    n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) {
        return 1;
    }
    buf[n] = '\0';
    close_paren = strrchr(buf, ')');
    return close_paren != NULL && close_paren[1] == ' ' &&
           (close_paren[2] == 'Z' || close_paren[2] == 'X');
}

/* Waits up to `ms` for `pid` to be gone. */
static inline int process_gone_within(pid_t pid, long ms)
{
    double end = now_ms() + (double)ms;
    while (!process_gone(pid)) {
        if (now_ms() > end) {
            return 0;
        }
        sleep_ms(5);
    }
    return 1;
}

static inline McpCommand *new_command_at(const char *program, const char *file, int line)
{
    McpCommand *cmd = mcp_command_new(program);
    if (!check_at(cmd != NULL, "mcp_command_new() != NULL", file, line)) {
        check_summary();
        exit(1);
    }
    return cmd;
}

#define NEW_COMMAND(program) new_command_at((program), __FILE__, __LINE__)

/* `sh -c <script>` */
static inline McpCommand *sh_command_at(const char *script, const char *file, int line)
{
    McpCommand *cmd = new_command_at("sh", file, line);
    check_at(mcp_command_arg(cmd, "-c") == MCP_STATUS_OK, "arg -c", file, line);
    check_at(mcp_command_arg(cmd, script) == MCP_STATUS_OK, "arg script", file, line);
    return cmd;
}

#define SH_COMMAND(script) sh_command_at((script), __FILE__, __LINE__)

static inline McpTransport *spawn_at(const McpCommand *cmd, uint32_t flags, const char *file, int line)
{
    McpTransport *t = NULL;
    McpStatus st = mcp_transport_spawn(cmd, flags, &t);
    if (!check_at(st == MCP_STATUS_OK && t != NULL, "mcp_transport_spawn == MCP_STATUS_OK", file,
                  line)) {
        printf("    got %ld (%s), errno %d (%s)\n", (long)st, status_name(st), errno,
               strerror(errno));
        check_summary();
        exit(1);
    }
    return t;
}

#define SPAWN(cmd) spawn_at((cmd), 0, __FILE__, __LINE__)

/* Spawns the command and frees it (a transport does not need it). */
static inline McpTransport *spawn_and_free_at(McpCommand *cmd, const char *file, int line)
{
    McpTransport *t = spawn_at(cmd, 0, file, line);
    mcp_command_free(cmd);
    return t;
}

#define SPAWN_SH(script) spawn_and_free_at(SH_COMMAND(script), __FILE__, __LINE__)

/* Growing text, for what a server said. */
typedef struct {
    char *data;
    size_t len, cap;
} Text;

static inline void text_add(Text *t, const void *p, size_t n)
{
    if (t->len + n + 1 > t->cap) {
        size_t cap = t->cap == 0 ? 256 : t->cap;
        char *grown;
        while (cap < t->len + n + 1) {
            cap *= 2;
        }
        grown = (char *)realloc(t->data, cap);
        if (grown == NULL) {
            printf("out of memory\n");
            exit(1);
        }
        t->data = grown;
        t->cap = cap;
    }
    if (n > 0) {
        memcpy(t->data + t->len, p, n);
    }
    t->len += n;
    t->data[t->len] = '\0';
}

static inline void text_free(Text *t)
{
    free(t->data);
    t->data = NULL;
    t->len = t->cap = 0;
}

/* Reads from `fd` into `out` until its end (1) or `limit_ms` (0). */
static inline int read_to_end(int fd, Text *out, double limit_ms)
{
    double end = now_ms() + limit_ms;
    char buf[4096];
    for (;;) {
        struct pollfd p;
        ssize_t n;
        double left = end - now_ms();
        p.fd = fd;
        p.events = POLLIN;
        p.revents = 0;
        if (left <= 0) {
            return 0;
        }
        if (poll(&p, 1, (int)left + 1) <= 0) {
            continue; /* EINTR, or the time is up: the loop sees which */
        }
        n = read(fd, buf, sizeof buf);
        if (n == 0) {
            return 1;
        }
        if (n < 0) {
            if (errno == EINTR || errno == EAGAIN) {
                continue;
            }
            return 0;
        }
        text_add(out, buf, (size_t)n);
    }
}

/* `text` (lines, each ended by '\n') has the line `line`. */
static inline int has_line(const Text *text, const char *line)
{
    size_t n = strlen(line);
    const char *p = text->data;
    if (p == NULL) {
        return 0;
    }
    while (*p != '\0') {
        const char *end = strchr(p, '\n');
        size_t len = end != NULL ? (size_t)(end - p) : strlen(p);
        if (len == n && memcmp(p, line, n) == 0) {
            return 1;
        }
        if (end == NULL) {
            break;
        }
        p = end + 1;
    }
    return 0;
}

/* What a server did, as seen through its events until CLOSED. */
typedef struct {
    Text err;      /* its stderr lines (STDERR events), each + '\n' */
    Text invalid;  /* its stdout lines that are not JSON (INVALID), each + '\n' */
    Text messages; /* its messages (MESSAGE), each + '\n' */
    size_t n_stderr, n_invalid, n_messages, n_responses, n_failed;
    int closed;
    int32_t exit_code, term_signal;
    double ms; /* from the start of run_to_close to CLOSED */
} Run;

static inline void run_free(Run *r)
{
    text_free(&r->err);
    text_free(&r->invalid);
    text_free(&r->messages);
}

/* Records one event in `r` (CLOSED: closed, exit_code, term_signal). */
static inline void run_note(Run *r, const McpEvent *ev)
{
    switch (ev->kind) {
    case MCP_EVENT_STDERR:
        text_add(&r->err, ev->data, ev->len);
        text_add(&r->err, "\n", 1);
        r->n_stderr++;
        break;
    case MCP_EVENT_INVALID:
        if (ev->data != NULL) {
            text_add(&r->invalid, ev->data, ev->len);
        }
        text_add(&r->invalid, "\n", 1);
        r->n_invalid++;
        break;
    case MCP_EVENT_MESSAGE:
        text_add(&r->messages, ev->data, ev->len);
        text_add(&r->messages, "\n", 1);
        r->n_messages++;
        break;
    case MCP_EVENT_RESPONSE:
        r->n_responses++;
        break;
    case MCP_EVENT_REQUEST_FAILED:
        r->n_failed++;
        break;
    case MCP_EVENT_CLOSED:
        r->closed = 1;
        r->exit_code = ev->exit_code;
        r->term_signal = ev->term_signal;
        break;
    default:
        break;
    }
}

/* Takes every event until CLOSED, at most `limit_ms` long. */
static inline void run_to_close(McpTransport *t, double limit_ms, Run *r)
{
    double start = now_ms();
    memset(r, 0, sizeof *r);
    r->exit_code = -2;
    r->term_signal = -2;
    while (!r->closed) {
        McpEvent ev;
        double left = start + limit_ms - now_ms();
        McpStatus st = mcp_transport_next_event(t, left > 0 ? (int32_t)left + 1 : 0, &ev);
        if (st == MCP_STATUS_NO_MESSAGE && now_ms() < start + limit_ms) {
            continue;
        }
        if (st != MCP_STATUS_OK) {
            printf("    run_to_close: next_event returned %ld (%s) after %.0f ms\n", (long)st,
                   status_name(st), now_ms() - start);
            break;
        }
        run_note(r, &ev);
        if (r->closed) {
            r->ms = now_ms() - start;
        }
    }
}

/* Runs the transport to CLOSED (10 s at most), frees it, checks that the
 * server exited with status 0, and that nothing is left of it. */
static inline void run_and_free_at(McpTransport *t, Run *r, const char *file, int line)
{
    int32_t pid = mcp_transport_pid(t);
    run_to_close(t, 10000, r);
    check_at(r->closed, "the transport closed", file, line);
    if (!check_at(r->exit_code == 0 && r->term_signal == 0, "the server exited with 0", file,
                  line)) {
        printf("    exit_code %ld term_signal %ld\n", (long)r->exit_code, (long)r->term_signal);
        print_bytes("its stderr", (const uint8_t *)r->err.data, r->err.len);
        print_bytes("its stdout (not JSON)", (const uint8_t *)r->invalid.data, r->invalid.len);
    }
    mcp_transport_free(t);
    errno = 0;
    check_at(waitpid(pid, NULL, WNOHANG) == -1 && errno == ECHILD, "the server was reaped", file,
             line);
}

#define RUN_AND_FREE(t, r) run_and_free_at((t), (r), __FILE__, __LINE__)

/* `cmd` cannot be started: MCP_STATUS_SPAWN_FAILED with `want_errno`,
 * *out untouched, no child and no descriptor left. */
static inline void expect_spawn_failed_at(const McpCommand *cmd, int want_errno, const char *file,
                                   int line)
{
    McpTransport *t = (McpTransport *)&check_passed_count;
    int fds = fd_count();
    McpStatus st;
    errno = 0;
    st = mcp_transport_spawn(cmd, 0, &t);
    {
        int e = errno;
        if (!check_at(st == MCP_STATUS_SPAWN_FAILED && e == want_errno,
                      "spawn fails with MCP_STATUS_SPAWN_FAILED and the errno", file, line)) {
            printf("    got %ld (%s), errno %d (%s); want errno %d (%s)\n", (long)st,
                   status_name(st), e, strerror(e), want_errno, strerror(want_errno));
        }
    }
    check_at(t == (McpTransport *)&check_passed_count, "*out untouched", file, line);
    if (st == MCP_STATUS_OK && t != (McpTransport *)&check_passed_count) {
        mcp_transport_free(t);
    }
    check_at(no_child_left(), "no process left", file, line);
    if (!check_at(fd_count() == fds, "no descriptor left", file, line)) {
        printf("    %d descriptors before, %d after\n", fds, fd_count());
    }
}

#define EXPECT_SPAWN_FAILED(cmd, e) expect_spawn_failed_at((cmd), (e), __FILE__, __LINE__)

#endif /* MCP_STDIO_TEST_PROCESS_H */
