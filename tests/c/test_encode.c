/*
 * mcp_encode / mcp_buffer_free: validation of one JSON text, compact output
 * with exactly one trailing '\n', tokens kept byte for byte except raw
 * U+2028/U+2029, MCP_ENCODE_ASCII escaping (lowercase hex, surrogate pairs),
 * *out untouched on every error, and mcp_buffer_free idempotence.
 * mcp_encode_to and mcp_encode_bound, on every case of mcp_encode: the same
 * line in a buffer of the bound and of the exact length, the length needed
 * from a buffer one byte short (and from none), the same errors.
 */
#include "test_util.h"

static uint8_t out_marker[8];

static McpBuffer marked_buffer(void)
{
    McpBuffer b;
    b.data = out_marker;
    b.len = 4242;
    return b;
}

/* mcp_encode_to makes `want` in a buffer of mcp_encode_bound bytes and in one
 * of exactly its length; one byte short, and with no buffer, it says the
 * length needed. */
static int encode_to_ok_at(const uint8_t *in, size_t in_len, uint32_t flags, const uint8_t *want,
                           size_t want_len, const char *what, const char *file, int line)
{
    size_t bound = mcp_encode_bound(in_len, flags);
    uint8_t *buf = malloc(bound);
    size_t n = 12345;
    McpStatus st;
    int ok = check_at(buf != NULL && bound >= want_len, "mcp_encode_bound covers the line", file, line);
    if (!ok) {
        free(buf);
        return 0;
    }
    st = mcp_encode_to(in, in_len, flags, buf, bound, &n);
    ok = check_at(st == MCP_STATUS_OK && n == want_len && memcmp(buf, want, want_len) == 0, what, file, line);
    memset(buf, 'x', bound);
    st = mcp_encode_to(in, in_len, flags, buf, want_len, &n);
    ok &= check_at(st == MCP_STATUS_OK && n == want_len && memcmp(buf, want, want_len) == 0,
                   "mcp_encode_to into exactly the line's length", file, line);
    ok &= check_at(want_len == bound || buf[want_len] == 'x', "nothing written past the line", file, line);
    st = mcp_encode_to(in, in_len, flags, buf, want_len - 1, &n);
    ok &= check_at(st == MCP_STATUS_BUFFER_TOO_SMALL && n == want_len,
                   "one byte short: MCP_STATUS_BUFFER_TOO_SMALL and the length needed", file, line);
    st = mcp_encode_to(in, in_len, flags, NULL, 0, &n);
    ok &= check_at(st == MCP_STATUS_BUFFER_TOO_SMALL && n == want_len,
                   "no buffer: MCP_STATUS_BUFFER_TOO_SMALL and the length needed", file, line);
    if (!ok) {
        print_bytes("input", in, in_len);
        print_bytes("want ", want, want_len);
        printf("    last status %s, *out_len %zu, bound %zu\n", status_name(st), n, bound);
    }
    free(buf);
    return ok;
}

static int encode_ok_at(const uint8_t *in, size_t in_len, uint32_t flags, const uint8_t *want,
                        size_t want_len, const char *what, const char *file, int line)
{
    McpBuffer out = marked_buffer();
    McpStatus st = mcp_encode(in, in_len, flags, &out);
    int ok;
    if (!check_at(st == MCP_STATUS_OK, what, file, line)) {
        printf("    mcp_encode returned %ld (%s), want MCP_STATUS_OK\n", (long)st, status_name(st));
        print_bytes("input", in, in_len);
        return 0;
    }
    ok = out.data != NULL && out.data != out_marker && out.len == want_len &&
         memcmp(out.data, want, want_len) == 0;
    if (!check_at(ok, what, file, line)) {
        print_bytes("input", in, in_len);
        print_bytes("got  ", out.data, out.len);
        print_bytes("want ", want, want_len);
    }
    mcp_buffer_free(&out);
    check_at(out.data == NULL && out.len == 0, "mcp_buffer_free resets *buf to {NULL, 0}", file, line);
    return encode_to_ok_at(in, in_len, flags, want, want_len, what, file, line) && ok;
}

static int encode_fails_at(const uint8_t *in, size_t in_len, uint32_t flags, McpStatus want,
                           const char *what, const char *file, int line)
{
    McpBuffer out = marked_buffer();
    McpStatus st = mcp_encode(in, in_len, flags, &out);
    int ok = check_at(st == want, what, file, line);
    if (!ok) {
        printf("    mcp_encode returned %ld (%s), want %ld (%s)\n", (long)st, status_name(st), (long)want,
               status_name(want));
        print_bytes("input", in, in_len);
        if (st == MCP_STATUS_OK) {
            print_bytes("output", out.data, out.len);
            mcp_buffer_free(&out);
            return 0;
        }
    }
    check_at(out.data == out_marker && out.len == 4242, "failed mcp_encode leaves *out untouched", file, line);
    {
        uint8_t buf[64];
        size_t n = 12345;
        McpStatus to = mcp_encode_to(in, in_len, flags, buf, sizeof buf, &n);
        ok &= check_at(to == want && n == 0, "mcp_encode_to fails the same way, *out_len 0", file, line);
    }
    return ok;
}

#define ENCODE_OK(flags, in, want)                                                             \
    encode_ok_at(LIT_PTR(in), LIT_LEN(in), (flags), LIT_PTR(want), LIT_LEN(want),             \
                 "mcp_encode(" #in ", " #flags ") == " #want, __FILE__, __LINE__)
#define ENCODE_INVALID(in)                                                                     \
    do {                                                                                       \
        encode_fails_at(LIT_PTR(in), LIT_LEN(in), 0, MCP_STATUS_INVALID_JSON,                  \
                        "mcp_encode(" #in ", 0) == MCP_STATUS_INVALID_JSON", __FILE__, __LINE__); \
        encode_fails_at(LIT_PTR(in), LIT_LEN(in), MCP_ENCODE_ASCII, MCP_STATUS_INVALID_JSON,   \
                        "mcp_encode(" #in ", ASCII) == MCP_STATUS_INVALID_JSON", __FILE__,     \
                        __LINE__);                                                             \
    } while (0)

static void test_seed_example(void)
{
    ENCODE_OK(0, "{\"a\": \"line1\\nline2\", \"id\": 1}", "{\"a\":\"line1\\nline2\",\"id\":1}\n");
    ENCODE_OK(MCP_ENCODE_ASCII, "{\"a\": \"line1\\nline2\", \"id\": 1}", "{\"a\":\"line1\\nline2\",\"id\":1}\n");
}

static void test_compaction(void)
{
    ENCODE_OK(0, "{}", "{}\n");
    ENCODE_OK(0, "[]", "[]\n");
    ENCODE_OK(0, "  {  }  ", "{}\n");
    ENCODE_OK(0, "[ ]", "[]\n");
    ENCODE_OK(0, "[ 1 , { \"b\" : [ ] } , \"c d\" ]", "[1,{\"b\":[]},\"c d\"]\n");
    ENCODE_OK(0, "\n\t\r {\"k\"\n:\r\n\"v\"\t,\"n\" :\tnull}\r\n", "{\"k\":\"v\",\"n\":null}\n");
    /* surrounding whitespace, including a trailing newline, is allowed */
    ENCODE_OK(0, "{\"a\":1}\n", "{\"a\":1}\n");
    ENCODE_OK(0, "{\"a\":1}\r\n", "{\"a\":1}\n");
    /* scalars */
    ENCODE_OK(0, "42", "42\n");
    ENCODE_OK(0, "  -0  ", "-0\n");
    ENCODE_OK(0, "true", "true\n");
    ENCODE_OK(0, "false", "false\n");
    ENCODE_OK(0, "null", "null\n");
    ENCODE_OK(0, "\"\"", "\"\"\n");
    /* whitespace inside strings is kept */
    ENCODE_OK(0, "[\"  a \\t b  \"]", "[\"  a \\t b  \"]\n");
}

static void test_tokens_kept_byte_for_byte(void)
{
    /* numbers are not normalised */
    ENCODE_OK(0, "[1.0, 1e2, 1E+2, -0.0, 1.50e-007, 12345678901234567890123]",
              "[1.0,1e2,1E+2,-0.0,1.50e-007,12345678901234567890123]\n");
    /* escapes are not normalised (uppercase hex, \/ kept) */
    ENCODE_OK(0, "\"\\u00E9 \\/ \\\" \\\\ \\b\\f\\n\\r\\t \\uD83D\\uDE00\"",
              "\"\\u00E9 \\/ \\\" \\\\ \\b\\f\\n\\r\\t \\uD83D\\uDE00\"\n");
    ENCODE_OK(MCP_ENCODE_ASCII, "\"\\u00E9 \\/ \\uD83D\\uDE00\"", "\"\\u00E9 \\/ \\uD83D\\uDE00\"\n");
    /* raw UTF-8 is kept as is without ASCII */
    ENCODE_OK(0, "{\"caf\xC3\xA9\": \"\xE2\x82\xAC \xF0\x9F\x98\x80\"}",
              "{\"caf\xC3\xA9\":\"\xE2\x82\xAC \xF0\x9F\x98\x80\"}\n");
    /* key order and duplicate keys are kept */
    ENCODE_OK(0, "{\"b\":1, \"a\":2, \"b\":3}", "{\"b\":1,\"a\":2,\"b\":3}\n");
    /* DEL is not a control character for JSON */
    ENCODE_OK(0, "\"\x7F\"", "\"\x7F\"\n");
}

static void test_u2028_u2029_always_escaped(void)
{
    ENCODE_OK(0, "\"a\xE2\x80\xA8" "b\xE2\x80\xA9" "c\"", "\"a\\u2028b\\u2029c\"\n");
    ENCODE_OK(0, "{\"\xE2\x80\xA8\": 1}", "{\"\\u2028\":1}\n");
    ENCODE_OK(MCP_ENCODE_ASCII, "\"\xE2\x80\xA8\xE2\x80\xA9\"", "\"\\u2028\\u2029\"\n");
    /* neighbours of U+2028/U+2029 are not escaped without ASCII */
    ENCODE_OK(0, "\"\xE2\x80\xA7\xE2\x80\xAA\"", "\"\xE2\x80\xA7\xE2\x80\xAA\"\n");
}

static void test_ascii_flag(void)
{
    ENCODE_OK(MCP_ENCODE_ASCII, "\"\xC3\xA9\"", "\"\\u00e9\"\n");                       /* é */
    ENCODE_OK(MCP_ENCODE_ASCII, "\"\xF0\x9F\x98\x80\"", "\"\\ud83d\\ude00\"\n");         /* U+1F600 */
    ENCODE_OK(MCP_ENCODE_ASCII, "\"\xC2\x80\"", "\"\\u0080\"\n");                       /* U+0080 */
    ENCODE_OK(MCP_ENCODE_ASCII, "\"\xE2\x82\xAC\"", "\"\\u20ac\"\n");                   /* € */
    ENCODE_OK(MCP_ENCODE_ASCII, "\"\xEF\xBF\xBF\"", "\"\\uffff\"\n");                   /* U+FFFF */
    ENCODE_OK(MCP_ENCODE_ASCII, "\"\xF0\x90\x80\x80\"", "\"\\ud800\\udc00\"\n");         /* U+10000 */
    ENCODE_OK(MCP_ENCODE_ASCII, "\"\xF4\x8F\xBF\xBF\"", "\"\\udbff\\udfff\"\n");         /* U+10FFFF */
    ENCODE_OK(MCP_ENCODE_ASCII, "{\"caf\xC3\xA9\" : [ \"x\xC3\xA9y\", 1 ]}",
              "{\"caf\\u00e9\":[\"x\\u00e9y\",1]}\n");
    /* ASCII input is unchanged by the flag */
    ENCODE_OK(MCP_ENCODE_ASCII, "{\"a\": [true, null, 1.5, \"\\n\"]}", "{\"a\":[true,null,1.5,\"\\n\"]}\n");
}

static void test_invalid_input(void)
{
    /* empty, (NULL, 0) and whitespace-only input are not a JSON text */
    encode_fails_at(NULL, 0, 0, MCP_STATUS_INVALID_JSON, "mcp_encode(NULL, 0) == INVALID_JSON", __FILE__, __LINE__);
    encode_fails_at(LIT_PTR("{}"), 0, 0, MCP_STATUS_INVALID_JSON, "mcp_encode(\"\", 0) == INVALID_JSON",
                    __FILE__, __LINE__);
    ENCODE_INVALID(" ");
    ENCODE_INVALID(" \t\r\n ");
    /* not exactly one JSON text */
    ENCODE_INVALID("1 2");
    ENCODE_INVALID("{} {}");
    ENCODE_INVALID("{}\n{}");
    ENCODE_INVALID("[] x");
    /* grammar errors */
    ENCODE_INVALID("{");
    ENCODE_INVALID("[1,]");
    ENCODE_INVALID("{\"a\":}");
    ENCODE_INVALID("{\"a\":1,}");
    ENCODE_INVALID("{'a':1}");
    ENCODE_INVALID("01");
    ENCODE_INVALID("1.");
    ENCODE_INVALID(".5");
    ENCODE_INVALID("+1");
    ENCODE_INVALID("NaN");
    ENCODE_INVALID("Infinity");
    ENCODE_INVALID("-Infinity");
    ENCODE_INVALID("[NaN]");
    ENCODE_INVALID("tru");
    ENCODE_INVALID("\"unterminated");
    ENCODE_INVALID("\"bad \\x escape\"");
    ENCODE_INVALID("\"\\u12g4\"");
    ENCODE_INVALID("\"raw\ttab\"");
    ENCODE_INVALID("\"raw\nnewline\"");
    /* form feed, vertical tab and NBSP are not JSON whitespace */
    ENCODE_INVALID("\f{}");
    ENCODE_INVALID("{}\v");
    ENCODE_INVALID("[1,\f2]");
    ENCODE_INVALID("\xC2\xA0{}");
    /* not UTF-8 */
    ENCODE_INVALID("\"\xFF\"");
    ENCODE_INVALID("\"\xC3\"");
    ENCODE_INVALID("\"\xC0\xAF\"");         /* overlong */
    ENCODE_INVALID("\"\xED\xA0\x80\"");     /* UTF-8-encoded surrogate */
    ENCODE_INVALID("\"\xF4\x90\x80\x80\""); /* > U+10FFFF */
    /* embedded NUL after a complete text */
    {
        static const uint8_t nul[] = {'[', '1', ']', 0};
        encode_fails_at(nul, sizeof nul, 0, MCP_STATUS_INVALID_JSON, "mcp_encode(\"[1]\\0\") == INVALID_JSON",
                        __FILE__, __LINE__);
    }
    /* unknown flag bits have a status of their own, *out untouched */
    encode_fails_at(LIT_PTR("{}"), 2, 2, MCP_STATUS_UNKNOWN_FLAGS, "mcp_encode(flags 2) == UNKNOWN_FLAGS",
                    __FILE__, __LINE__);
    encode_fails_at(LIT_PTR("{}"), 2, 0xFFFFFFFFu, MCP_STATUS_UNKNOWN_FLAGS,
                    "mcp_encode(flags ~0) == UNKNOWN_FLAGS", __FILE__, __LINE__);
}

static void test_buffer_free(void)
{
    McpBuffer out;
    McpBuffer zero;
    out.data = NULL;
    out.len = 0;
    CHECK_STATUS(mcp_encode(LIT_PTR("[1, 2]"), 6, 0, &out), MCP_STATUS_OK);
    CHECK(out.data != NULL && out.len == 6 && memcmp(out.data, "[1,2]\n", 6) == 0);
    mcp_buffer_free(&out);
    CHECK(out.data == NULL && out.len == 0);
    mcp_buffer_free(&out); /* second call is safe */
    CHECK(out.data == NULL && out.len == 0);
    mcp_buffer_free(NULL);

    /* freeing a zeroed buffer is safe */
    zero.data = NULL;
    zero.len = 0;
    mcp_buffer_free(&zero);
    CHECK(zero.data == NULL && zero.len == 0);
}

static void test_large_input(void)
{
    /* ["xxxx...", 0, "xxxx...", 1, ...]: ~2 MiB in, compact out */
    size_t items = 4096, item_len = 512, i, pos = 0;
    size_t in_cap = items * (item_len + 8) + 16;
    uint8_t *in = (uint8_t *)malloc(in_cap);
    uint8_t *want = (uint8_t *)malloc(in_cap);
    size_t want_pos = 0;
    McpBuffer out;
    if (in == NULL || want == NULL) {
        abort();
    }
    in[pos++] = '[';
    want[want_pos++] = '[';
    for (i = 0; i < items; i++) {
        if (i > 0) {
            in[pos++] = ',';
            in[pos++] = ' ';
            want[want_pos++] = ',';
        }
        in[pos++] = '"';
        want[want_pos++] = '"';
        memset(in + pos, 'a' + (int)(i % 26), item_len);
        memset(want + want_pos, 'a' + (int)(i % 26), item_len);
        pos += item_len;
        want_pos += item_len;
        in[pos++] = '"';
        want[want_pos++] = '"';
    }
    in[pos++] = ']';
    want[want_pos++] = ']';
    want[want_pos++] = '\n';
    out.data = NULL;
    out.len = 0;
    if (CHECK_STATUS(mcp_encode(in, pos, 0, &out), MCP_STATUS_OK)) {
        CHECK(out.len == want_pos && memcmp(out.data, want, want_pos) == 0);
    }
    mcp_buffer_free(&out);
    CHECK(out.data == NULL && out.len == 0);
    free(in);
    free(want);
}

/* Deeply nested input: compacted, no stack overflow; a mismatch deep inside is found. */
static void test_deep_nesting(void)
{
    size_t depth = 300000, i, pos = 0;
    uint8_t *in = (uint8_t *)malloc(depth * 3 + 2);
    uint8_t *want = (uint8_t *)malloc(depth * 2 + 2);
    McpBuffer out;
    if (in == NULL || want == NULL) {
        abort();
    }
    for (i = 0; i < depth; i++) {
        in[pos++] = '[';
        in[pos++] = ' ';
        want[i] = '[';
    }
    for (i = 0; i < depth; i++) {
        in[pos++] = ']';
        want[depth + i] = ']';
    }
    want[2 * depth] = '\n';
    out.data = NULL;
    out.len = 0;
    if (CHECK_STATUS(mcp_encode(in, pos, 0, &out), MCP_STATUS_OK)) {
        CHECK(out.len == 2 * depth + 1 && memcmp(out.data, want, 2 * depth + 1) == 0);
        mcp_buffer_free(&out);
    }
    in[pos - depth / 2] = '}'; /* wrong closer half-way out */
    encode_fails_at(in, pos, 0, MCP_STATUS_INVALID_JSON, "deep mismatch is INVALID_JSON", __FILE__, __LINE__);
    in[pos - depth / 2] = ']';
    encode_fails_at(in, pos - 1, 0, MCP_STATUS_INVALID_JSON, "one closer missing is INVALID_JSON", __FILE__,
                    __LINE__);
    free(in);
    free(want);
}

/* Encoded output framed back through a reader gives the same message. */
static void test_round_trip_through_reader(void)
{
    McpBuffer out;
    McpLineReader *r = NEW_READER();
    out.data = NULL;
    out.len = 0;
    CHECK_STATUS(mcp_encode(LIT_PTR(" {\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"ping\"} "),
                            LIT_LEN(" {\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"ping\"} "), 0, &out),
                 MCP_STATUS_OK);
    CHECK_STATUS(mcp_line_reader_set_flags(r, MCP_READER_JSONRPC), MCP_STATUS_OK);
    CHECK_STATUS(mcp_line_reader_feed(r, out.data, out.len), MCP_STATUS_OK);
    mcp_buffer_free(&out);
    EXPECT_ITEM(r, MCP_MESSAGE_JSON, MCP_RPC_REQUEST, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}");
    EXPECT_NONE(r);
    CHECK_BUFFERED(r, 0);
    mcp_line_reader_free(r);
}

static void test_encode_to_arguments(void)
{
    uint8_t buf[16];
    size_t n = 12345;
    CHECK_STATUS(mcp_encode_to(LIT_PTR("[1]"), 3, 0, buf, sizeof buf, NULL), MCP_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(mcp_encode_to(NULL, 3, 0, buf, sizeof buf, &n), MCP_STATUS_NULL_ARGUMENT);
    CHECK(n == 0);
    n = 12345;
    CHECK_STATUS(mcp_encode_to(LIT_PTR("[1]"), 3, 0, NULL, 4, &n), MCP_STATUS_NULL_ARGUMENT);
    CHECK(n == 0);
    CHECK_STATUS(mcp_encode_to(LIT_PTR("[1]"), 3, 4, buf, sizeof buf, &n), MCP_STATUS_UNKNOWN_FLAGS);
    CHECK_STATUS(mcp_encode_to(LIT_PTR("[1]"), 3, 0, buf, (size_t)PTRDIFF_MAX + 1, &n),
                 MCP_STATUS_INVALID_ARGUMENT);
    CHECK_STATUS(mcp_encode_to(NULL, 0, 0, buf, sizeof buf, &n), MCP_STATUS_INVALID_JSON);
    CHECK(n == 0);
    /* The bound: 2 bytes a byte (U+2028), 6 with ASCII (DEL), plus the newline; saturating. */
    CHECK(mcp_encode_bound(0, 0) == 1 && mcp_encode_bound(10, 0) == 21);
    CHECK(mcp_encode_bound(10, MCP_ENCODE_ASCII) == 61);
    CHECK(mcp_encode_bound(SIZE_MAX / 2, MCP_ENCODE_ASCII) == SIZE_MAX);
    /* The worst cases fill their bound exactly, but for the quotes. */
    ENCODE_OK(0, "\"\xE2\x80\xA8\"", "\"\\u2028\"\n");
    ENCODE_OK(MCP_ENCODE_ASCII, "\"\x7F\"", "\"\\u007f\"\n");
    /* A buffer reused for many lines: each call replaces the last. */
    {
        static const char *const lines[] = {"{\"a\": [1, 2]}", "  \"x\"  ", "[]"};
        static const char *const want[] = {"{\"a\":[1,2]}\n", "\"x\"\n", "[]\n"};
        size_t i;
        for (i = 0; i < 3; i++) {
            CHECK_STATUS(mcp_encode_to((const uint8_t *)lines[i], strlen(lines[i]), 0, buf, sizeof buf, &n),
                         MCP_STATUS_OK);
            CHECK(n == strlen(want[i]) && memcmp(buf, want[i], n) == 0);
        }
    }
}

int main(void)
{
    test_seed_example();
    test_compaction();
    test_tokens_kept_byte_for_byte();
    test_u2028_u2029_always_escaped();
    test_ascii_flag();
    test_invalid_input();
    test_buffer_free();
    test_large_input();
    test_deep_nesting();
    test_round_trip_through_reader();
    test_encode_to_arguments();
    return check_summary();
}
