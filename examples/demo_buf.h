/*
 * demo_buf.h - the growable string buffer shared by the demo programs
 * (mcp_host.c, mcp_server.c), in which they build JSON texts.
 *
 * Include demo_log.h first (out of memory is logged, then the demo exits:
 * a demo's answer to it). Header-only, static inline, as demo_log.h.
 */

#ifndef MCP_STDIO_DEMO_BUF_H
#define MCP_STDIO_DEMO_BUF_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Bytes, always followed by a NUL (so `p` is a C string too); zero is empty. */
typedef struct {
    char *p;
    size_t len, cap;
} Buf;

/* Makes room for n more bytes (and the NUL). */
static inline void buf_reserve(Buf *b, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *p = realloc(b->p, cap);
        if (!p) {
            log_msg("out of memory");
            exit(1);
        }
        b->p = p;
        b->cap = cap;
    }
}

/* Appends n bytes. */
static inline void buf_put(Buf *b, const char *s, size_t n)
{
    buf_reserve(b, n);
    if (n)
        memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

static inline void buf_puts(Buf *b, const char *s) { buf_put(b, s, strlen(s)); }

/* Appends a C string as a JSON string literal (quoted and escaped). */
static inline void buf_json_string(Buf *b, const char *s)
{
    buf_puts(b, "\"");
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        char esc[8] = {'\\', (char)c, 0}; /* \" and \\ */
        if (c < 0x20)
            snprintf(esc, sizeof esc, "\\u%04x", c);
        if (c == '"' || c == '\\' || c < 0x20)
            buf_puts(b, esc);
        else
            buf_put(b, s, 1);
    }
    buf_puts(b, "\"");
}

static inline void buf_free(Buf *b)
{
    free(b->p);
    b->p = NULL;
    b->len = b->cap = 0;
}

#endif /* MCP_STDIO_DEMO_BUF_H */
