/*
 * The clock of the C tests that measure time (test_transport.c,
 * test_spawn.c): POSIX, so include it after defining _POSIX_C_SOURCE (or
 * _XOPEN_SOURCE) and before nothing else in particular. Header-only, as
 * test_util.h.
 */
#ifndef MCP_STDIO_TEST_CLOCK_H
#define MCP_STDIO_TEST_CLOCK_H

#include <errno.h>
#include <time.h>

/* Milliseconds on the monotonic clock. */
static inline double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Sleeps `ms` milliseconds, whatever signals come meanwhile. */
static inline void sleep_ms(long ms)
{
    struct timespec ts;
    ts.tv_sec = ms / 1000;
    ts.tv_nsec = (ms % 1000) * 1000000L;
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

#endif /* MCP_STDIO_TEST_CLOCK_H */
