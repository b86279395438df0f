/*
 * Framing behaviour of McpLineReader through the C ABI: the seed example,
 * chunking independence, finish(), CRLF / whitespace trimming, empty lines,
 * the UTF-8 BOM, which lines are JSON, and the borrowed-data lifetime rule.
 * (Limits are in test_limits.c, flags/JSON-RPC in test_flags_jsonrpc.c.)
 */
#include "test_util.h"

/* ---- item collection (copies data out immediately, within its lifetime) ---- */

typedef struct {
    int32_t kind;
    int32_t rpc_kind;
    size_t len;
    uint8_t *data; /* malloc'd copy, or NULL when the item had data == NULL */
} Item;

typedef struct {
    Item items[64];
    size_t n;
    int overflow;
} Items;

static void drain(McpLineReader *r, Items *out)
{
    for (;;) {
        McpMessage m = sentinel_message();
        McpStatus st = mcp_line_reader_next_message(r, &m);
        if (st == MCP_STATUS_NO_MESSAGE) {
            CHECK(message_is_sentinel(&m));
            return;
        }
        if (!CHECK(st == MCP_STATUS_OK)) {
            printf("    next_message returned %ld (%s)\n", (long)st, status_name(st));
            return;
        }
        if (out->n == sizeof out->items / sizeof out->items[0]) {
            out->overflow = 1;
            return;
        }
        {
            Item *it = &out->items[out->n++];
            it->kind = m.kind;
            it->rpc_kind = m.rpc_kind;
            it->len = m.len;
            it->data = NULL;
            if (m.data != NULL) {
                it->data = (uint8_t *)malloc(m.len + 1);
                if (it->data == NULL) {
                    abort();
                }
                memcpy(it->data, m.data, m.len);
            }
        }
    }
}

static void items_free(Items *items)
{
    size_t i;
    for (i = 0; i < items->n; i++) {
        free(items->items[i].data);
    }
    items->n = 0;
}

static int items_equal(const Items *a, const Items *b)
{
    size_t i;
    if (a->overflow || b->overflow || a->n != b->n) {
        return 0;
    }
    for (i = 0; i < a->n; i++) {
        const Item *x = &a->items[i], *y = &b->items[i];
        if (x->kind != y->kind || x->rpc_kind != y->rpc_kind || x->len != y->len ||
            (x->data == NULL) != (y->data == NULL)) {
            return 0;
        }
        if (x->data != NULL && memcmp(x->data, y->data, x->len) != 0) {
            return 0;
        }
    }
    return 1;
}

static void print_items(const char *label, const Items *items)
{
    size_t i;
    printf("    %s: %lu items%s\n", label, (unsigned long)items->n, items->overflow ? " (overflow)" : "");
    for (i = 0; i < items->n; i++) {
        printf("     [%lu] kind %ld rpc %ld", (unsigned long)i, (long)items->items[i].kind,
               (long)items->items[i].rpc_kind);
        print_bytes("", items->items[i].data, items->items[i].len);
    }
}

/* Feed `data` in chunks of the given sizes (cycled), draining after every feed, then finish. */
static void run_chunked(const uint8_t *data, size_t len, const size_t *chunks, size_t nchunks,
                        uint32_t flags, Items *out)
{
    McpLineReader *r = NEW_READER();
    size_t pos = 0, ci = 0;
    CHECK_STATUS(mcp_line_reader_set_flags(r, flags), MCP_STATUS_OK);
    while (pos < len) {
        size_t n = chunks[ci++ % nchunks];
        if (n > len - pos) {
            n = len - pos;
        }
        CHECK_STATUS(mcp_line_reader_feed(r, data + pos, n), MCP_STATUS_OK);
        pos += n;
        drain(r, out);
    }
    CHECK_STATUS(mcp_line_reader_finish(r), MCP_STATUS_OK);
    drain(r, out);
    CHECK_BUFFERED(r, 0);
    mcp_line_reader_free(r);
}

/* ---- tests ---- */

static void test_new_reader_is_empty(void)
{
    McpLineReader *r = NEW_READER();
    CHECK_BUFFERED(r, 0);
    EXPECT_NONE(r);
    EXPECT_NONE(r);
    CHECK_STATUS(mcp_line_reader_finish(r), MCP_STATUS_OK);
    EXPECT_NONE(r);
    CHECK_BUFFERED(r, 0);
    mcp_line_reader_free(r);
}

/* The example of docs/contract.md §Reader: example, step by step. */
static void test_seed_example(void)
{
    McpLineReader *r = NEW_READER();

    CHECK_STATUS(FEED_LIT(r, "{\"id\":1}\n{\"id\""), MCP_STATUS_OK);
    EXPECT_JSON(r, "{\"id\":1}");
    EXPECT_NONE(r);
    CHECK_BUFFERED(r, 5);

    CHECK_STATUS(FEED_LIT(r, ":2}\n{\"id\":3}\nnot json\n"), MCP_STATUS_OK);
    EXPECT_JSON(r, "{\"id\":2}");
    EXPECT_JSON(r, "{\"id\":3}");
    EXPECT_PARSE_ERROR(r, "not json");
    EXPECT_NONE(r);
    CHECK_BUFFERED(r, 0);

    CHECK_STATUS(FEED_LIT(r, "{\"id\":4}"), MCP_STATUS_OK);
    EXPECT_NONE(r);
    CHECK_BUFFERED(r, 8);

    CHECK_STATUS(mcp_line_reader_finish(r), MCP_STATUS_OK);
    EXPECT_JSON(r, "{\"id\":4}");
    EXPECT_NONE(r);
    CHECK_BUFFERED(r, 0);

    /* finish() leaves the reader usable. */
    CHECK_STATUS(FEED_LIT(r, "{\"id\":5}\n"), MCP_STATUS_OK);
    EXPECT_JSON(r, "{\"id\":5}");
    EXPECT_NONE(r);
    CHECK_STATUS(mcp_line_reader_finish(r), MCP_STATUS_OK);
    EXPECT_NONE(r);

    mcp_line_reader_free(r);
}

/* Items are produced lazily: feeding several lines then draining gives all, in order. */
static void test_items_keep_order_across_feeds(void)
{
    McpLineReader *r = NEW_READER();
    CHECK_STATUS(FEED_LIT(r, "[1]\n"), MCP_STATUS_OK);
    CHECK_STATUS(FEED_LIT(r, "[2]\nbad\n"), MCP_STATUS_OK);
    CHECK_STATUS(FEED_LIT(r, "[3]\n"), MCP_STATUS_OK);
    EXPECT_JSON(r, "[1]");
    EXPECT_JSON(r, "[2]");
    EXPECT_PARSE_ERROR(r, "bad");
    EXPECT_JSON(r, "[3]");
    EXPECT_NONE(r);
    mcp_line_reader_free(r);
}

static const char chunk_stream[] =
    "\xEF\xBB\xBF{\"id\":1}\r\n"
    "\n"
    "  \t \r\n"
    "{\"id\":2,\"s\":\"caf\xC3\xA9 \xF0\x9F\x98\x80\"}\n"
    "not json\r\n"
    "[1,2,\n"
    "\t{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"} \n"
    "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}\n"
    "{\"id\":4}";

/* Chunking never changes the items: whole, 1-byte, every 2-way split, odd sizes. */
static void test_chunking_never_changes_items(void)
{
    static const uint32_t flag_sets[] = {0, MCP_READER_JSONRPC, MCP_READER_SKIP_INVALID,
                                         MCP_READER_JSONRPC | MCP_READER_SKIP_INVALID};
    const uint8_t *data = (const uint8_t *)chunk_stream;
    size_t len = sizeof chunk_stream - 1;
    size_t f;

    for (f = 0; f < sizeof flag_sets / sizeof flag_sets[0]; f++) {
        Items whole = {{{0, 0, 0, NULL}}, 0, 0};
        size_t all[1];
        size_t split, k;
        static const size_t odd[] = {1, 3, 2, 7, 5, 11, 13};

        all[0] = len;
        run_chunked(data, len, all, 1, flag_sets[f], &whole);
        if (flag_sets[f] == 0) {
            CHECK(whole.n == 7);
        } else if (flag_sets[f] == MCP_READER_JSONRPC) {
            CHECK(whole.n == 7);
        } else if (flag_sets[f] == MCP_READER_SKIP_INVALID) {
            CHECK(whole.n == 5);
        } else {
            /* JSON-RPC + skip: only the notification and the response remain. */
            CHECK(whole.n == 2);
        }

        for (k = 1; k <= 4; k++) {
            Items got = {{{0, 0, 0, NULL}}, 0, 0};
            size_t sz[1];
            sz[0] = k;
            run_chunked(data, len, sz, 1, flag_sets[f], &got);
            if (!CHECK(items_equal(&whole, &got))) {
                printf("    flags %lu, chunk size %lu\n", (unsigned long)flag_sets[f], (unsigned long)k);
                print_items("whole", &whole);
                print_items("chunked", &got);
            }
            items_free(&got);
        }
        {
            Items got = {{{0, 0, 0, NULL}}, 0, 0};
            run_chunked(data, len, odd, sizeof odd / sizeof odd[0], flag_sets[f], &got);
            if (!CHECK(items_equal(&whole, &got))) {
                print_items("whole", &whole);
                print_items("odd chunks", &got);
            }
            items_free(&got);
        }
        for (split = 0; split <= len; split++) {
            Items got = {{{0, 0, 0, NULL}}, 0, 0};
            size_t sz[2];
            sz[0] = split == 0 ? len : split;
            sz[1] = len;
            run_chunked(data, len, sz, 2, flag_sets[f], &got);
            if (!CHECK(items_equal(&whole, &got))) {
                printf("    flags %lu, split at %lu\n", (unsigned long)flag_sets[f], (unsigned long)split);
                print_items("whole", &whole);
                print_items("split", &got);
            }
            items_free(&got);
        }
        items_free(&whole);
    }
}

static void test_whole_stream_items(void)
{
    McpLineReader *r = NEW_READER();
    CHECK_STATUS(mcp_line_reader_feed(r, (const uint8_t *)chunk_stream, sizeof chunk_stream - 1),
                 MCP_STATUS_OK);
    EXPECT_JSON(r, "{\"id\":1}");
    EXPECT_JSON(r, "{\"id\":2,\"s\":\"caf\xC3\xA9 \xF0\x9F\x98\x80\"}");
    EXPECT_PARSE_ERROR(r, "not json");
    EXPECT_PARSE_ERROR(r, "[1,2,");
    EXPECT_JSON(r, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
    EXPECT_JSON(r, "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}");
    EXPECT_NONE(r);
    CHECK_BUFFERED(r, 8);
    CHECK_STATUS(mcp_line_reader_finish(r), MCP_STATUS_OK);
    EXPECT_JSON(r, "{\"id\":4}");
    EXPECT_NONE(r);
    mcp_line_reader_free(r);
}

static void test_crlf_and_whitespace_trimming(void)
{
    McpLineReader *r = NEW_READER();

    CHECK_STATUS(FEED_LIT(r, "{\"a\":1}\r\n"), MCP_STATUS_OK);
    EXPECT_JSON(r, "{\"a\":1}");
    CHECK_STATUS(FEED_LIT(r, "  \t{\"b\": [1, 2]} \t \r\n"), MCP_STATUS_OK);
    EXPECT_JSON(r, "{\"b\": [1, 2]}"); /* inner whitespace is kept: the line is not re-encoded */
    CHECK_STATUS(FEED_LIT(r, "\r\r{\"c\":3}\r\r\n"), MCP_STATUS_OK);
    EXPECT_JSON(r, "{\"c\":3}");
    /* non-message lines are trimmed too */
    CHECK_STATUS(FEED_LIT(r, " not json \r\n"), MCP_STATUS_OK);
    EXPECT_PARSE_ERROR(r, "not json");
    /* CR alone does not end a line: this is one line, and not one JSON text */
    CHECK_STATUS(FEED_LIT(r, "{\"a\":1}\r{\"b\":2}\n"), MCP_STATUS_OK);
    EXPECT_PARSE_ERROR(r, "{\"a\":1}\r{\"b\":2}");
    /* CRLF split across feeds */
    CHECK_STATUS(FEED_LIT(r, "{\"d\":4}\r"), MCP_STATUS_OK);
    EXPECT_NONE(r);
    CHECK_STATUS(FEED_LIT(r, "\n"), MCP_STATUS_OK);
    EXPECT_JSON(r, "{\"d\":4}");
    /* whitespace inside a string is not trimmed */
    CHECK_STATUS(FEED_LIT(r, "\" padded \"\r\n"), MCP_STATUS_OK);
    EXPECT_JSON(r, "\" padded \"");
    /* only space, tab and CR are trimmed: form feed, vertical tab, NBSP are not JSON whitespace */
    CHECK_STATUS(FEED_LIT(r, "\f{\"f\":1}\n"), MCP_STATUS_OK);
    EXPECT_PARSE_ERROR(r, "\f{\"f\":1}");
    CHECK_STATUS(FEED_LIT(r, "{\"v\":1}\v\n"), MCP_STATUS_OK);
    EXPECT_PARSE_ERROR(r, "{\"v\":1}\v");
    CHECK_STATUS(FEED_LIT(r, "\xC2\xA0{}\n"), MCP_STATUS_OK);
    EXPECT_PARSE_ERROR(r, "\xC2\xA0{}");
    CHECK_STATUS(FEED_LIT(r, " \f \n"), MCP_STATUS_OK);
    EXPECT_PARSE_ERROR(r, "\f");
    /* finish() trims a trailing CR of an unterminated last line */
    CHECK_STATUS(FEED_LIT(r, "{\"e\":5} \r"), MCP_STATUS_OK);
    EXPECT_NONE(r);
    CHECK_STATUS(mcp_line_reader_finish(r), MCP_STATUS_OK);
    EXPECT_JSON(r, "{\"e\":5}");
    EXPECT_NONE(r);
    mcp_line_reader_free(r);
}

static void test_empty_lines_are_skipped(void)
{
    McpLineReader *r = NEW_READER();
    CHECK_STATUS(FEED_LIT(r, "\n\n\r\n \t \r\n\t\n"), MCP_STATUS_OK);
    EXPECT_NONE(r);
    CHECK_BUFFERED(r, 0);
    CHECK_STATUS(FEED_LIT(r, "\n{\"x\":1}\n\n\n{\"y\":2}\n\r\n"), MCP_STATUS_OK);
    EXPECT_JSON(r, "{\"x\":1}");
    EXPECT_JSON(r, "{\"y\":2}");
    EXPECT_NONE(r);
    /* a whitespace-only unterminated line at finish() is empty too */
    CHECK_STATUS(FEED_LIT(r, "  \r"), MCP_STATUS_OK);
    CHECK_STATUS(mcp_line_reader_finish(r), MCP_STATUS_OK);
    EXPECT_NONE(r);
    CHECK_BUFFERED(r, 0);
    mcp_line_reader_free(r);
}

static void test_bom(void)
{
    McpLineReader *r;
    const uint8_t *bom_stream = LIT_PTR("\xEF\xBB\xBF{\"a\":1}\n");
    size_t i;

    /* BOM as the very first 3 bytes is skipped */
    r = NEW_READER();
    CHECK_STATUS(FEED_LIT(r, "\xEF\xBB\xBF{\"a\":1}\n"), MCP_STATUS_OK);
    EXPECT_JSON(r, "{\"a\":1}");
    EXPECT_NONE(r);
    mcp_line_reader_free(r);

    /* ... also when it arrives byte by byte */
    r = NEW_READER();
    for (i = 0; i < LIT_LEN("\xEF\xBB\xBF{\"a\":1}\n"); i++) {
        CHECK_STATUS(mcp_line_reader_feed(r, bom_stream + i, 1), MCP_STATUS_OK);
        if (i + 1 < LIT_LEN("\xEF\xBB\xBF{\"a\":1}\n")) {
            EXPECT_NONE(r);
        }
    }
    EXPECT_JSON(r, "{\"a\":1}");
    EXPECT_NONE(r);
    mcp_line_reader_free(r);

    /* BOM followed directly by a newline, then a message */
    r = NEW_READER();
    CHECK_STATUS(FEED_LIT(r, "\xEF\xBB\xBF\n[true]\n"), MCP_STATUS_OK);
    EXPECT_JSON(r, "[true]");
    EXPECT_NONE(r);
    mcp_line_reader_free(r);

    /* BOM-only stream: nothing at all */
    r = NEW_READER();
    CHECK_STATUS(FEED_LIT(r, "\xEF\xBB\xBF"), MCP_STATUS_OK);
    CHECK_STATUS(mcp_line_reader_finish(r), MCP_STATUS_OK);
    EXPECT_NONE(r);
    mcp_line_reader_free(r);

    /* Only the very first 3 bytes of the stream: a later BOM stays in the line */
    r = NEW_READER();
    CHECK_STATUS(FEED_LIT(r, "{\"a\":1}\n\xEF\xBB\xBF{\"b\":2}\n"), MCP_STATUS_OK);
    EXPECT_JSON(r, "{\"a\":1}");
    EXPECT_PARSE_ERROR(r, "\xEF\xBB\xBF{\"b\":2}");
    EXPECT_NONE(r);
    mcp_line_reader_free(r);

    /* Only one BOM is skipped */
    r = NEW_READER();
    CHECK_STATUS(FEED_LIT(r, "\xEF\xBB\xBF\xEF\xBB\xBF{}\n"), MCP_STATUS_OK);
    EXPECT_PARSE_ERROR(r, "\xEF\xBB\xBF{}");
    EXPECT_NONE(r);
    mcp_line_reader_free(r);

    /* A BOM after leading whitespace is not "the very first 3 bytes" */
    r = NEW_READER();
    CHECK_STATUS(FEED_LIT(r, " \xEF\xBB\xBF{}\n"), MCP_STATUS_OK);
    EXPECT_PARSE_ERROR(r, "\xEF\xBB\xBF{}");
    EXPECT_NONE(r);
    mcp_line_reader_free(r);

    /* A truncated BOM prefix is not a BOM: the bytes stay in the line (fed whole and byte by byte) */
    r = NEW_READER();
    CHECK_STATUS(FEED_LIT(r, "\xEF\xBB{}\n"), MCP_STATUS_OK);
    EXPECT_PARSE_ERROR(r, "\xEF\xBB{}");
    EXPECT_NONE(r);
    mcp_line_reader_free(r);
    r = NEW_READER();
    CHECK_STATUS(FEED_LIT(r, "\xEF"), MCP_STATUS_OK);
    CHECK_STATUS(FEED_LIT(r, "\xBB"), MCP_STATUS_OK);
    CHECK_STATUS(FEED_LIT(r, "{}\n"), MCP_STATUS_OK);
    EXPECT_PARSE_ERROR(r, "\xEF\xBB{}");
    EXPECT_NONE(r);
    mcp_line_reader_free(r);

    /* A stream of only a partial BOM, finished: a parse error with those bytes */
    r = NEW_READER();
    CHECK_STATUS(FEED_LIT(r, "\xEF\xBB"), MCP_STATUS_OK);
    CHECK_STATUS(mcp_line_reader_finish(r), MCP_STATUS_OK);
    EXPECT_PARSE_ERROR(r, "\xEF\xBB");
    EXPECT_NONE(r);
    mcp_line_reader_free(r);
}

/* A line is a message iff it is exactly one JSON text (RFC 8259, UTF-8, no NaN/Infinity). */
static void test_which_lines_are_json(void)
{
    static const char *const json_lines[] = {
        "{}", "[]", "0", "-0", "1.5e-3", "-12.5E+10", "true", "false", "null", "\"\"",
        "\"esc \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\u00e9 \\uD83D\\uDE00\"",
        "{\"a\":{\"b\":[1,{\"c\":null}]}}", "[ 1 , 2 ]", "{\"k\" : \"v\"}",
        "\"caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80\"", "\"\x7F\"",
        "{\"dup\":1,\"dup\":2}", "1e400", "-1E-400", "[-0.0e+0]",
    };
    static const char *const bad_lines[] = {
        "NaN", "Infinity", "-Infinity", "[NaN]", "{\"a\":Infinity}", "nan", "True", "None",
        "{", "}", "[1,]", "{\"a\":1,}", "{'a':1}", "{a:1}", "01", "1.", ".5", "+1", "0x10",
        "1e", "--1", "\"unterminated", "\"bad escape \\x\"", "\"\\u12\"",
        "\"raw\ttab\"", "\"raw\x01" "ctl\"", "{} {}", "1 2", "[] x", "\"a\" \"b\"",
        "\"\xFF\"", "\"\xC3\"", "\"\xC0\xAF\"", "\"\xED\xA0\x80\"", "\"\xF4\x90\x80\x80\"",
        "/* c */ 1", "1 // c", "undefined", "tru", "nul",
    };
    McpLineReader *r = NEW_READER();
    size_t i;

    for (i = 0; i < sizeof json_lines / sizeof json_lines[0]; i++) {
        const char *s = json_lines[i];
        size_t n = strlen(s);
        McpMessage m = sentinel_message();
        CHECK_STATUS(mcp_line_reader_feed(r, (const uint8_t *)s, n), MCP_STATUS_OK);
        CHECK_STATUS(FEED_LIT(r, "\n"), MCP_STATUS_OK);
        if (CHECK_STATUS(mcp_line_reader_next_message(r, &m), MCP_STATUS_OK)) {
            if (!CHECK(m.kind == MCP_MESSAGE_JSON && m.rpc_kind == MCP_RPC_NONE && m.len == n &&
                       m.data != NULL && memcmp(m.data, s, n) == 0)) {
                printf("    kind %ld\n", (long)m.kind);
                print_bytes("line", (const uint8_t *)s, n);
            }
        }
        EXPECT_NONE(r);
    }
    for (i = 0; i < sizeof bad_lines / sizeof bad_lines[0]; i++) {
        const char *s = bad_lines[i];
        size_t n = strlen(s);
        McpMessage m = sentinel_message();
        CHECK_STATUS(mcp_line_reader_feed(r, (const uint8_t *)s, n), MCP_STATUS_OK);
        CHECK_STATUS(FEED_LIT(r, "\n"), MCP_STATUS_OK);
        if (CHECK_STATUS(mcp_line_reader_next_message(r, &m), MCP_STATUS_OK)) {
            if (!CHECK(m.kind == MCP_MESSAGE_PARSE_ERROR && m.rpc_kind == MCP_RPC_NONE && m.len == n &&
                       m.data != NULL && memcmp(m.data, s, n) == 0)) {
                printf("    kind %ld (want PARSE_ERROR)\n", (long)m.kind);
                print_bytes("line", (const uint8_t *)s, n);
            }
        }
        EXPECT_NONE(r);
    }
    /* an embedded NUL byte makes a line invalid, and the whole line is carried */
    {
        static const uint8_t nul_line[] = {'[', '1', ']', 0, '\n'};
        CHECK_STATUS(mcp_line_reader_feed(r, nul_line, sizeof nul_line), MCP_STATUS_OK);
        expect_item_at(r, MCP_MESSAGE_PARSE_ERROR, MCP_RPC_NONE, nul_line, 4,
                       "line with a NUL byte is a PARSE_ERROR", __FILE__, __LINE__);
        EXPECT_NONE(r);
    }
    mcp_line_reader_free(r);
}

/*
 * Nested values: `depth` levels, level i an array if i % 3 != 1 else an
 * object ({"k": ...}), innermost value 0. If swap_level < depth, that level is
 * closed with the wrong bracket. Returns a malloc'd buffer, length in *len.
 */
static uint8_t *build_nested(size_t depth, size_t swap_level, size_t *len)
{
    uint8_t *buf = (uint8_t *)malloc(depth * 6 + 2);
    size_t pos = 0, i;
    if (buf == NULL) {
        abort();
    }
    for (i = 0; i < depth; i++) {
        if (i % 3 != 1) {
            buf[pos++] = '[';
        } else {
            memcpy(buf + pos, "{\"k\":", 5);
            pos += 5;
        }
    }
    buf[pos++] = '0';
    for (i = depth; i-- > 0;) {
        int object = i % 3 == 1;
        if (i == swap_level) {
            object = !object;
        }
        buf[pos++] = object ? '}' : ']';
    }
    *len = pos;
    return buf;
}

static void expect_nested_kind(McpLineReader *r, size_t depth, size_t swap_level, int32_t kind, int line)
{
    size_t len;
    uint8_t *s = build_nested(depth, swap_level, &len);
    McpMessage m = sentinel_message();
    CHECK_STATUS(mcp_line_reader_feed(r, s, len), MCP_STATUS_OK);
    CHECK_STATUS(FEED_LIT(r, "\n"), MCP_STATUS_OK);
    if (CHECK_STATUS(mcp_line_reader_next_message(r, &m), MCP_STATUS_OK)) {
        int ok = m.kind == kind && m.len == len && m.data != NULL && memcmp(m.data, s, len) == 0;
        if (!check_at(ok, "nested value classified as expected", __FILE__, line)) {
            printf("    depth %lu, wrong closer at level %lu: kind %ld, want %ld\n", (unsigned long)depth,
                   (unsigned long)swap_level, (long)m.kind, (long)kind);
        }
    }
    EXPECT_NONE(r);
    free(s);
}

/* Deep nesting is valid JSON (no depth limit in the contract) and never crashes; mismatches at any depth are found. */
static void test_nesting(void)
{
    static const size_t levels[] = {0, 1, 2, 31, 62, 63, 64, 65, 66, 99, 127, 128, 129, 199};
    McpLineReader *r = NEW_READER();
    size_t i;

    expect_nested_kind(r, 200, (size_t)-1, MCP_MESSAGE_JSON, __LINE__);
    for (i = 0; i < sizeof levels / sizeof levels[0]; i++) {
        expect_nested_kind(r, 200, levels[i], MCP_MESSAGE_PARSE_ERROR, __LINE__);
    }
    /* 300000 levels: fine, and no stack overflow */
    expect_nested_kind(r, 300000, (size_t)-1, MCP_MESSAGE_JSON, __LINE__);
    expect_nested_kind(r, 300000, 150000, MCP_MESSAGE_PARSE_ERROR, __LINE__);
    expect_nested_kind(r, 300000, 0, MCP_MESSAGE_PARSE_ERROR, __LINE__);
    /* unbalanced: missing closers, extra closers */
    CHECK_STATUS(FEED_LIT(r, "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[0]]]]\n"), MCP_STATUS_OK);
    EXPECT_PARSE_ERROR(r, "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[0]]]]");
    CHECK_STATUS(FEED_LIT(r, "[0]]\n{}}\n]\n"), MCP_STATUS_OK);
    EXPECT_PARSE_ERROR(r, "[0]]");
    EXPECT_PARSE_ERROR(r, "{}}");
    EXPECT_PARSE_ERROR(r, "]");
    mcp_line_reader_free(r);
}

static void test_finish_behaviour(void)
{
    McpLineReader *r = NEW_READER();

    /* finish twice, nothing buffered */
    CHECK_STATUS(mcp_line_reader_finish(r), MCP_STATUS_OK);
    CHECK_STATUS(mcp_line_reader_finish(r), MCP_STATUS_OK);
    EXPECT_NONE(r);

    /* an unterminated invalid line becomes a PARSE_ERROR item */
    CHECK_STATUS(FEED_LIT(r, "oops"), MCP_STATUS_OK);
    EXPECT_NONE(r);
    CHECK_STATUS(mcp_line_reader_finish(r), MCP_STATUS_OK);
    EXPECT_PARSE_ERROR(r, "oops");
    EXPECT_NONE(r);
    CHECK_STATUS(mcp_line_reader_finish(r), MCP_STATUS_OK);
    EXPECT_NONE(r);

    /* finish with complete lines still pending: all of them come out, then the last one */
    CHECK_STATUS(FEED_LIT(r, "1\n2\n3"), MCP_STATUS_OK);
    CHECK_STATUS(mcp_line_reader_finish(r), MCP_STATUS_OK);
    EXPECT_JSON(r, "1");
    EXPECT_JSON(r, "2");
    EXPECT_JSON(r, "3");
    EXPECT_NONE(r);

    /* after finish, a new stream continues normally (no join with old data) */
    CHECK_STATUS(FEED_LIT(r, "{\"n\":"), MCP_STATUS_OK);
    CHECK_STATUS(mcp_line_reader_finish(r), MCP_STATUS_OK);
    EXPECT_PARSE_ERROR(r, "{\"n\":");
    CHECK_STATUS(FEED_LIT(r, "1}\n"), MCP_STATUS_OK);
    EXPECT_PARSE_ERROR(r, "1}");
    EXPECT_NONE(r);
    mcp_line_reader_free(r);

    /* free with data buffered and items pending must not leak (valgrind / LSan) */
    r = NEW_READER();
    CHECK_STATUS(FEED_LIT(r, "{\"a\":1}\n{\"b\":2}\nbad\n{\"partial"), MCP_STATUS_OK);
    EXPECT_JSON(r, "{\"a\":1}");
    mcp_line_reader_free(r);
}

/*
 * Borrowed-data lifetime: McpMessage.data is valid until the next call on the
 * reader (feed, next_message, finish, set_*, free). Copy it out before that.
 * buffered_len() is not in that list, so data stays readable across it.
 * Under valgrind / ASan this test must be clean.
 */
static void test_borrowed_data_lifetime(void)
{
    McpLineReader *r = NEW_READER();
    McpMessage m = sentinel_message();
    char first[64], second[64];
    size_t first_len = 0, second_len = 0, i;
    static uint8_t big[256 * 1024];

    CHECK_STATUS(FEED_LIT(r, "{\"first\":1}\n{\"second\":2}\n"), MCP_STATUS_OK);
    if (CHECK_STATUS(mcp_line_reader_next_message(r, &m), MCP_STATUS_OK) && CHECK(m.len < sizeof first)) {
        (void)mcp_line_reader_buffered_len(r); /* not an invalidating call */
        memcpy(first, m.data, m.len);           /* use within lifetime */
        first_len = m.len;
    }
    m = sentinel_message();
    if (CHECK_STATUS(mcp_line_reader_next_message(r, &m), MCP_STATUS_OK) && CHECK(m.len < sizeof second)) {
        memcpy(second, m.data, m.len);
        second_len = m.len;
    }
    /* Now force the reader's buffer to grow/move a lot; our copies stay valid. */
    for (i = 0; i < sizeof big; i++) {
        big[i] = (uint8_t)(i % 64 == 63 ? '\n' : (i % 64 == 0 ? '[' : (i % 64 == 62 ? ']' : '1')));
    }
    CHECK_STATUS(mcp_line_reader_feed(r, big, sizeof big), MCP_STATUS_OK);
    CHECK(first_len == 11 && memcmp(first, "{\"first\":1}", 11) == 0);
    CHECK(second_len == 12 && memcmp(second, "{\"second\":2}", 12) == 0);
    {
        /* every big line is "[1...1]" (63 bytes); read each only within its lifetime */
        size_t count = 0, ok = 0;
        for (;;) {
            McpMessage b = sentinel_message();
            McpStatus st = mcp_line_reader_next_message(r, &b);
            if (st != MCP_STATUS_OK) {
                CHECK_STATUS(st, MCP_STATUS_NO_MESSAGE);
                break;
            }
            count++;
            if (b.kind == MCP_MESSAGE_JSON && b.len == 63 && b.data[0] == '[' && b.data[62] == ']') {
                ok++;
            }
        }
        CHECK(count == sizeof big / 64);
        CHECK(ok == count);
    }
    /* data of the last item of a finished stream, then free right after use */
    CHECK_STATUS(FEED_LIT(r, "\"tail\""), MCP_STATUS_OK);
    CHECK_STATUS(mcp_line_reader_finish(r), MCP_STATUS_OK);
    m = sentinel_message();
    if (CHECK_STATUS(mcp_line_reader_next_message(r, &m), MCP_STATUS_OK)) {
        CHECK(m.len == 6 && memcmp(m.data, "\"tail\"", 6) == 0);
    }
    mcp_line_reader_free(r);
}

/*
 * A message's own data fed back into the same reader (the data is valid
 * until the next call on the reader, and that call is this feed): the reader
 * takes the bytes before its buffer grows (else: use after free, which ASan
 * and valgrind report) or moves its tail over them (else: wrong bytes).
 */
static void test_feeding_back_a_message_of_the_same_reader(void)
{
    McpLineReader *r = NEW_READER();
    McpMessage m = sentinel_message();

    /* growth: the tail `[2,3,4,5,6,` is longer than what was consumed, so
     * nothing is compacted, and the buffer (sized for the first chunk) must
     * grow to take three more bytes */
    CHECK_STATUS(FEED_LIT(r, "[1]\n[2,3,4,5,6,"), MCP_STATUS_OK);
    if (CHECK_STATUS(mcp_line_reader_next_message(r, &m), MCP_STATUS_OK)) {
        CHECK_STATUS(mcp_line_reader_feed(r, m.data, m.len), MCP_STATUS_OK);
    }
    CHECK_STATUS(FEED_LIT(r, "]\n"), MCP_STATUS_OK);
    EXPECT_JSON(r, "[2,3,4,5,6,[1]]");
    mcp_line_reader_free(r);

    /* compaction: feeding moves the unterminated tail `[2,` to where `[1]` is */
    r = NEW_READER();
    CHECK_STATUS(FEED_LIT(r, "[1]\n[2,"), MCP_STATUS_OK);
    m = sentinel_message();
    if (CHECK_STATUS(mcp_line_reader_next_message(r, &m), MCP_STATUS_OK)) {
        CHECK_STATUS(mcp_line_reader_feed(r, m.data, m.len), MCP_STATUS_OK);
    }
    CHECK_STATUS(FEED_LIT(r, "]\n"), MCP_STATUS_OK);
    EXPECT_JSON(r, "[2,[1]]");
    mcp_line_reader_free(r);
}

/* Many readers at once are independent. */
static void test_readers_are_independent(void)
{
    McpLineReader *a = NEW_READER();
    McpLineReader *b = NEW_READER();
    CHECK_STATUS(FEED_LIT(a, "{\"r\":\"a\""), MCP_STATUS_OK);
    CHECK_STATUS(FEED_LIT(b, "[\"b\"]\n"), MCP_STATUS_OK);
    CHECK_STATUS(mcp_line_reader_set_flags(b, MCP_READER_SKIP_INVALID), MCP_STATUS_OK);
    CHECK_BUFFERED(a, 8);
    EXPECT_NONE(a);
    EXPECT_JSON(b, "[\"b\"]");
    CHECK_STATUS(FEED_LIT(a, "}\nbad\n"), MCP_STATUS_OK);
    CHECK_STATUS(FEED_LIT(b, "bad\n"), MCP_STATUS_OK);
    EXPECT_JSON(a, "{\"r\":\"a\"}");
    EXPECT_PARSE_ERROR(a, "bad"); /* a has no SKIP_INVALID */
    EXPECT_NONE(b);
    mcp_line_reader_free(b);
    EXPECT_NONE(a);
    mcp_line_reader_free(a);
}

int main(void)
{
    test_new_reader_is_empty();
    test_seed_example();
    test_items_keep_order_across_feeds();
    test_whole_stream_items();
    test_chunking_never_changes_items();
    test_crlf_and_whitespace_trimming();
    test_empty_lines_are_skipped();
    test_bom();
    test_which_lines_are_json();
    test_nesting();
    test_finish_behaviour();
    test_borrowed_data_lifetime();
    test_feeding_back_a_message_of_the_same_reader();
    test_readers_are_independent();
    return check_summary();
}
