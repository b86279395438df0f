/*
 * Shared helpers for the C ABI tests of mcp-stdio.
 *
 * Every test program is one translation unit that includes this file once.
 * CHECK(expr) counts a pass or prints `file:line: CHECK failed: expr` and
 * counts a failure; check_summary() prints `N passed, M failed` as the last
 * line of stdout and returns the process exit code (non-zero on any failure).
 *
 * The test harness (tests/c_abi/toolchain/program_output.rs) parses that last
 * line, so nothing may be printed to stdout after check_summary().
 */
#ifndef MCP_STDIO_TEST_UTIL_H
#define MCP_STDIO_TEST_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcp_stdio.h"

static int check_passed_count = 0;
static int check_failed_count = 0;

static inline int check_at(int ok, const char *expr, const char *file, int line)
{
    if (ok) {
        check_passed_count++;
    } else {
        check_failed_count++;
        printf("%s:%d: CHECK failed: %s\n", file, line, expr);
        fflush(stdout);
    }
    return ok;
}

#define CHECK(expr) check_at((expr) ? 1 : 0, #expr, __FILE__, __LINE__)

static inline int check_summary(void)
{
    printf("%d passed, %d failed\n", check_passed_count, check_failed_count);
    fflush(stdout);
    return check_failed_count == 0 ? 0 : 1;
}

/* Print bytes as a C-ish escaped string (truncated), for failure diagnostics. */
static inline void print_bytes(const char *label, const uint8_t *p, size_t n)
{
    size_t i, shown = n > 160 ? 160 : n;
    printf("    %s (%lu bytes): ", label, (unsigned long)n);
    if (p == NULL) {
        printf("NULL\n");
        return;
    }
    putchar('"');
    for (i = 0; i < shown; i++) {
        uint8_t c = p[i];
        if (c == '\\' || c == '"') {
            printf("\\%c", c);
        } else if (c >= 0x20 && c < 0x7f) {
            putchar(c);
        } else if (c == '\n') {
            printf("\\n");
        } else if (c == '\r') {
            printf("\\r");
        } else {
            printf("\\x%02x", c);
        }
    }
    printf("\"%s\n", shown < n ? "..." : "");
}

static inline const char *status_name(McpStatus st)
{
    const char *s = mcp_status_str(st);
    return s != NULL ? s : "(NULL)";
}

/* Check `got == want` for statuses, printing both on failure. */
static inline int check_status_at(McpStatus got, McpStatus want, const char *expr,
                                  const char *file, int line)
{
    int ok = check_at(got == want, expr, file, line);
    if (!ok) {
        printf("    got status %ld (%s), want %ld (%s)\n", (long)got, status_name(got),
               (long)want, status_name(want));
    }
    return ok;
}

#define CHECK_STATUS(call, want) check_status_at((call), (want), #call " == " #want, __FILE__, __LINE__)

/* `("" lit "")` only compiles for string literals, so sizeof is safe. */
#define LIT_PTR(lit) ((const uint8_t *)("" lit ""))
#define LIT_LEN(lit) (sizeof("" lit "") - 1)

#define FEED_LIT(r, lit) mcp_line_reader_feed((r), LIT_PTR(lit), LIT_LEN(lit))

/* Sentinel-filled message, to detect writes on NO_MESSAGE / errors. */
static inline McpMessage sentinel_message(void)
{
    McpMessage m;
    memset(&m, 0, sizeof m);
    m.kind = 0x5a5a5a5a;
    m.rpc_kind = 0x3c3c3c3c;
    m.data = (const uint8_t *)&check_passed_count; /* any distinctive non-NULL address */
    m.len = (size_t)0x12345;
    return m;
}

static inline int message_is_sentinel(const McpMessage *m)
{
    McpMessage s = sentinel_message();
    return m->kind == s.kind && m->rpc_kind == s.rpc_kind && m->data == s.data && m->len == s.len;
}

/*
 * Expect the next item to be (kind, rpc_kind, exact bytes). The data is only
 * read here, i.e. within its documented lifetime.
 */
static inline int expect_item_at(McpLineReader *r, int32_t kind, int32_t rpc_kind,
                                 const uint8_t *want, size_t want_len,
                                 const char *what, const char *file, int line)
{
    McpMessage m = sentinel_message();
    McpStatus st = mcp_line_reader_next_message(r, &m);
    int ok = 1;
    if (!check_at(st == MCP_STATUS_OK, what, file, line)) {
        printf("    next_message returned %ld (%s), want MCP_STATUS_OK; expected item:\n", (long)st,
               status_name(st));
        print_bytes("want", want, want_len);
        return 0;
    }
    if (m.kind != kind || m.rpc_kind != rpc_kind || m.len != want_len || m.data == NULL ||
        (want_len > 0 && memcmp(m.data, want, want_len) != 0)) {
        ok = 0;
    }
    if (!check_at(ok, what, file, line)) {
        printf("    got kind %ld rpc_kind %ld, want kind %ld rpc_kind %ld\n", (long)m.kind,
               (long)m.rpc_kind, (long)kind, (long)rpc_kind);
        print_bytes("got ", m.data, m.data != NULL ? m.len : 0);
        print_bytes("want", want, want_len);
    }
    return ok;
}

#define EXPECT_ITEM(r, kind, rpc, lit)                                                         \
    expect_item_at((r), (kind), (rpc), LIT_PTR(lit), LIT_LEN(lit),                             \
                   "next item is " #kind "/" #rpc " " #lit, __FILE__, __LINE__)
#define EXPECT_JSON(r, lit) EXPECT_ITEM(r, MCP_MESSAGE_JSON, MCP_RPC_NONE, lit)
#define EXPECT_PARSE_ERROR(r, lit) EXPECT_ITEM(r, MCP_MESSAGE_PARSE_ERROR, MCP_RPC_NONE, lit)

/* Expect a TOO_LONG item with data NULL and min_len <= len <= max_len. */
static inline int expect_too_long_at(McpLineReader *r, size_t min_len, size_t max_len,
                                     const char *what, const char *file, int line)
{
    McpMessage m = sentinel_message();
    McpStatus st = mcp_line_reader_next_message(r, &m);
    int ok = st == MCP_STATUS_OK && m.kind == MCP_MESSAGE_TOO_LONG && m.rpc_kind == MCP_RPC_NONE &&
             m.data == NULL && m.len >= min_len && m.len <= max_len;
    if (!check_at(ok, what, file, line)) {
        printf("    got status %ld (%s) kind %ld rpc_kind %ld data %s len %lu; want OK, "
               "MCP_MESSAGE_TOO_LONG, data NULL, %lu <= len <= %lu\n",
               (long)st, status_name(st), (long)m.kind, (long)m.rpc_kind,
               m.data == NULL ? "NULL" : "non-NULL", (unsigned long)m.len,
               (unsigned long)min_len, (unsigned long)max_len);
    }
    return ok;
}

#define EXPECT_TOO_LONG(r, min_len, max_len)                                                   \
    expect_too_long_at((r), (min_len), (max_len),                                             \
                       "next item is TOO_LONG, len in [" #min_len ", " #max_len "]", __FILE__, \
                       __LINE__)

/* Expect NO_MESSAGE with *out left untouched. */
static inline int expect_none_at(McpLineReader *r, const char *file, int line)
{
    McpMessage m = sentinel_message();
    McpStatus st = mcp_line_reader_next_message(r, &m);
    int ok = check_at(st == MCP_STATUS_NO_MESSAGE, "next_message == MCP_STATUS_NO_MESSAGE", file, line);
    if (!ok) {
        printf("    got status %ld (%s) kind %ld rpc_kind %ld\n", (long)st, status_name(st),
               (long)m.kind, (long)m.rpc_kind);
        if (st == MCP_STATUS_OK) {
            print_bytes("unexpected item", m.data, m.data != NULL ? m.len : 0);
        }
        return 0;
    }
    return check_at(message_is_sentinel(&m), "NO_MESSAGE leaves *out untouched", file, line);
}

#define EXPECT_NONE(r) expect_none_at((r), __FILE__, __LINE__)

#define CHECK_BUFFERED(r, n)                                                                   \
    do {                                                                                       \
        size_t got_buffered_ = mcp_line_reader_buffered_len(r);                                \
        if (!CHECK(mcp_line_reader_buffered_len(r) == (n))) {                                  \
            printf("    buffered_len = %lu\n", (unsigned long)got_buffered_);                  \
        }                                                                                      \
    } while (0)

/* A new reader; aborts the program (counted as failure by the harness) if NULL. */
static inline McpLineReader *new_reader_at(const char *file, int line)
{
    McpLineReader *r = mcp_line_reader_new();
    if (!check_at(r != NULL, "mcp_line_reader_new() != NULL", file, line)) {
        check_summary();
        exit(1);
    }
    return r;
}

#define NEW_READER() new_reader_at(__FILE__, __LINE__)

#endif /* MCP_STDIO_TEST_UTIL_H */
