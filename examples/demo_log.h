/*
 * demo_log.h - diagnostics output shared by the demo programs (mcp_host.c,
 * mcp_server.c): every line goes to stderr, prefixed with the program name,
 * because stdout belongs to the protocol (server) or the transcript (host).
 *
 * Define DEMO_PROG (a string literal such as "mcp_host") before including.
 *
 * Header-only: every function is static inline, so each demo stays a single
 * translation unit and one that does not call a helper gets no
 * unused-function warning.
 */

#ifndef MCP_STDIO_DEMO_LOG_H
#define MCP_STDIO_DEMO_LOG_H

#ifndef DEMO_PROG
#error "define DEMO_PROG (the program name for log lines) before including demo_log.h"
#endif

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Logs one line: "<prog>: <formatted message>". stdout is flushed first so
 * that anything written to it with stdio stays in order with the log. */
static inline void log_msg(const char *fmt, ...)
{
    va_list ap;
    fflush(stdout);
    fputs(DEMO_PROG ": ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

/* Logs a prefix of untrusted bytes, escaping anything non-printable. */
static inline void log_bytes(const char *what, const uint8_t *data, size_t len)
{
    const size_t max = 120;
    fflush(stdout);
    fprintf(stderr, DEMO_PROG ": %s: ", what);
    for (size_t i = 0; i < len && i < max; i++) {
        if (data[i] >= 0x20 && data[i] < 0x7f)
            fputc(data[i], stderr);
        else
            fprintf(stderr, "\\x%02x", data[i]);
    }
    if (len > max)
        fprintf(stderr, "... (%zu bytes)", len);
    fputc('\n', stderr);
}

#endif /* MCP_STDIO_DEMO_LOG_H */
