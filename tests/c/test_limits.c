/*
 * Line length limit: mcp_line_reader_set_max_line_len, TOO_LONG items
 * (data NULL, len = bytes of the line received so far, > max_len), reading
 * continues after the line's '\n', the default of 64 MiB, SIZE_MAX = no
 * limit, and 0 -> MCP_STATUS_INVALID_ARGUMENT.
 */
#include "test_util.h"

#define MIB ((size_t)1024 * 1024)

static void test_set_max_line_len_arguments(void)
{
    McpLineReader *r = NEW_READER();

    CHECK_STATUS(mcp_line_reader_set_max_line_len(r, 0), MCP_STATUS_INVALID_ARGUMENT);
    CHECK_STATUS(mcp_line_reader_set_max_line_len(r, 1), MCP_STATUS_OK);
    CHECK_STATUS(mcp_line_reader_set_max_line_len(r, SIZE_MAX), MCP_STATUS_OK);
    CHECK_STATUS(mcp_line_reader_set_max_line_len(r, SIZE_MAX - 1), MCP_STATUS_OK);
    CHECK_STATUS(mcp_line_reader_set_max_line_len(r, 8), MCP_STATUS_OK);

    /* a rejected 0 keeps the previous limit (8) */
    CHECK_STATUS(mcp_line_reader_set_max_line_len(r, 0), MCP_STATUS_INVALID_ARGUMENT);
    CHECK_STATUS(FEED_LIT(r, "{\"a\":12}\n{\"a\":123}\n"), MCP_STATUS_OK);
    EXPECT_JSON(r, "{\"a\":12}");  /* exactly 8 bytes: allowed */
    EXPECT_TOO_LONG(r, 9, 9);       /* 9 bytes: too long */
    EXPECT_NONE(r);

    /* a limit of 1 */
    CHECK_STATUS(mcp_line_reader_set_max_line_len(r, 1), MCP_STATUS_OK);
    CHECK_STATUS(FEED_LIT(r, "1\n12\n2\n"), MCP_STATUS_OK);
    EXPECT_JSON(r, "1");
    EXPECT_TOO_LONG(r, 2, 2);
    EXPECT_JSON(r, "2");
    EXPECT_NONE(r);
    mcp_line_reader_free(r);
}

static void test_too_long_in_one_chunk(void)
{
    McpLineReader *r = NEW_READER();
    CHECK_STATUS(mcp_line_reader_set_max_line_len(r, 8), MCP_STATUS_OK);

    CHECK_STATUS(FEED_LIT(r, "{\"b\":1}\n{\"a\":12345}\n{\"c\":2}\n"), MCP_STATUS_OK);
    EXPECT_JSON(r, "{\"b\":1}");
    EXPECT_TOO_LONG(r, 9, 11);
    EXPECT_JSON(r, "{\"c\":2}");
    EXPECT_NONE(r);

    /* a too-long line that is not JSON is TOO_LONG, not PARSE_ERROR */
    CHECK_STATUS(FEED_LIT(r, "this is not json at all\nnope\n"), MCP_STATUS_OK);
    EXPECT_TOO_LONG(r, 9, 23);
    EXPECT_PARSE_ERROR(r, "nope");
    EXPECT_NONE(r);

    /* two too-long lines in a row: one item each */
    CHECK_STATUS(FEED_LIT(r, "[1,2,3,4,5]\n[6,7,8,9,10]\n[0]\n"), MCP_STATUS_OK);
    EXPECT_TOO_LONG(r, 9, 11);
    EXPECT_TOO_LONG(r, 9, 12);
    EXPECT_JSON(r, "[0]");
    EXPECT_NONE(r);
    mcp_line_reader_free(r);
}

static void test_too_long_reported_before_newline(void)
{
    McpLineReader *r = NEW_READER();
    uint8_t xs[1000];
    memset(xs, 'x', sizeof xs);

    CHECK_STATUS(mcp_line_reader_set_max_line_len(r, 8), MCP_STATUS_OK);
    CHECK_STATUS(mcp_line_reader_feed(r, xs, sizeof xs), MCP_STATUS_OK);
    /* the line is already longer than the limit: reported without waiting for '\n' */
    EXPECT_TOO_LONG(r, 9, 1000);
    EXPECT_NONE(r);
    /* the rest of the line is dropped, not buffered */
    CHECK(mcp_line_reader_buffered_len(r) <= 8);
    CHECK_STATUS(mcp_line_reader_feed(r, xs, sizeof xs), MCP_STATUS_OK);
    EXPECT_NONE(r); /* still the same line: no second item */
    CHECK(mcp_line_reader_buffered_len(r) <= 8);
    /* the dropped line ends at its '\n'; reading continues */
    CHECK_STATUS(FEED_LIT(r, "xxx\n{\"ok\":1}\n"), MCP_STATUS_OK);
    EXPECT_JSON(r, "{\"ok\":1}");
    EXPECT_NONE(r);
    mcp_line_reader_free(r);
}

static void test_too_long_byte_by_byte(void)
{
    McpLineReader *r = NEW_READER();
    const uint8_t *s = LIT_PTR("[1]\n{\"long\":\"line\"}\n[2]\n");
    size_t n = LIT_LEN("[1]\n{\"long\":\"line\"}\n[2]\n"), i;
    int too_long = 0, json = 0, other = 0;
    CHECK_STATUS(mcp_line_reader_set_max_line_len(r, 8), MCP_STATUS_OK);
    for (i = 0; i < n; i++) {
        CHECK_STATUS(mcp_line_reader_feed(r, s + i, 1), MCP_STATUS_OK);
        for (;;) {
            McpMessage m = sentinel_message();
            McpStatus st = mcp_line_reader_next_message(r, &m);
            if (st != MCP_STATUS_OK) {
                CHECK_STATUS(st, MCP_STATUS_NO_MESSAGE);
                break;
            }
            if (m.kind == MCP_MESSAGE_TOO_LONG) {
                too_long++;
                CHECK(m.data == NULL && m.len >= 9 && m.len <= 15);
                CHECK(json == 1); /* order: after [1] */
            } else if (m.kind == MCP_MESSAGE_JSON) {
                json++;
                CHECK(m.len == 3 && m.data[0] == '[' && m.data[1] == (json == 1 ? '1' : '2'));
                if (json == 2) {
                    CHECK(too_long == 1);
                }
            } else {
                other++;
            }
        }
    }
    CHECK(too_long == 1);
    CHECK(json == 2);
    CHECK(other == 0);
    mcp_line_reader_free(r);
}

static void test_too_long_with_skip_invalid_and_finish(void)
{
    McpLineReader *r = NEW_READER();
    CHECK_STATUS(mcp_line_reader_set_max_line_len(r, 8), MCP_STATUS_OK);
    CHECK_STATUS(mcp_line_reader_set_flags(r, MCP_READER_SKIP_INVALID), MCP_STATUS_OK);

    /* SKIP_INVALID drops parse errors but still reports too-long items */
    CHECK_STATUS(FEED_LIT(r, "bad\n[\"0123456789\"]\n[1]\n"), MCP_STATUS_OK);
    EXPECT_TOO_LONG(r, 9, 14);
    EXPECT_JSON(r, "[1]");
    EXPECT_NONE(r);

    /* finish() while dropping the rest of a too-long line ends that line */
    CHECK_STATUS(FEED_LIT(r, "xxxxxxxxxxxxxxxxxxxx"), MCP_STATUS_OK);
    EXPECT_TOO_LONG(r, 9, 20);
    CHECK_STATUS(mcp_line_reader_finish(r), MCP_STATUS_OK);
    EXPECT_NONE(r); /* the line was already reported once */
    CHECK_STATUS(FEED_LIT(r, "[2]\n"), MCP_STATUS_OK);
    EXPECT_JSON(r, "[2]");
    EXPECT_NONE(r);

    /* an unterminated too-long line reported only at finish() */
    CHECK_STATUS(FEED_LIT(r, "[3]\n[\"abcdefgh\"]"), MCP_STATUS_OK);
    EXPECT_JSON(r, "[3]");
    /* the second line (12 bytes) may be reported now or at finish, but exactly once */
    {
        McpMessage m = sentinel_message();
        int seen = 0;
        McpStatus st = mcp_line_reader_next_message(r, &m);
        if (st == MCP_STATUS_OK) {
            CHECK(m.kind == MCP_MESSAGE_TOO_LONG && m.data == NULL && m.len >= 9 && m.len <= 12);
            seen++;
        } else {
            CHECK_STATUS(st, MCP_STATUS_NO_MESSAGE);
        }
        CHECK_STATUS(mcp_line_reader_finish(r), MCP_STATUS_OK);
        m = sentinel_message();
        st = mcp_line_reader_next_message(r, &m);
        if (st == MCP_STATUS_OK) {
            CHECK(m.kind == MCP_MESSAGE_TOO_LONG && m.data == NULL && m.len >= 9 && m.len <= 12);
            seen++;
        } else {
            CHECK_STATUS(st, MCP_STATUS_NO_MESSAGE);
        }
        CHECK(seen == 1);
        EXPECT_NONE(r);
    }
    mcp_line_reader_free(r);
}

/* A new limit applies to the lines that follow. */
static void test_limit_applies_to_new_lines(void)
{
    McpLineReader *r = NEW_READER();
    CHECK_STATUS(mcp_line_reader_set_max_line_len(r, 4), MCP_STATUS_OK);
    CHECK_STATUS(FEED_LIT(r, "[10]\n[100]\n"), MCP_STATUS_OK);
    EXPECT_JSON(r, "[10]");
    EXPECT_TOO_LONG(r, 5, 5);
    CHECK_STATUS(mcp_line_reader_set_max_line_len(r, SIZE_MAX), MCP_STATUS_OK);
    CHECK_STATUS(FEED_LIT(r, "[1000000000]\n"), MCP_STATUS_OK);
    EXPECT_JSON(r, "[1000000000]");
    EXPECT_NONE(r);
    mcp_line_reader_free(r);
}

/* Feed `total` bytes of 'x' (in 1 MiB chunks) followed by "\n". */
static void feed_xs(McpLineReader *r, size_t total)
{
    static uint8_t chunk[1024 * 1024];
    size_t left = total;
    memset(chunk, 'x', sizeof chunk);
    while (left > 0) {
        size_t n = left < sizeof chunk ? left : sizeof chunk;
        if (mcp_line_reader_feed(r, chunk, n) != MCP_STATUS_OK) {
            CHECK(!"feed of 'x' chunk failed");
            return;
        }
        left -= n;
    }
    CHECK_STATUS(FEED_LIT(r, "\n"), MCP_STATUS_OK);
}

static void test_default_limit_is_64_mib(void)
{
    McpLineReader *r = NEW_READER();
    McpMessage m = sentinel_message();

    /* exactly 64 MiB: allowed (it is not JSON, so a PARSE_ERROR carrying the whole line) */
    feed_xs(r, 64 * MIB);
    if (CHECK_STATUS(mcp_line_reader_next_message(r, &m), MCP_STATUS_OK)) {
        CHECK(m.kind == MCP_MESSAGE_PARSE_ERROR);
        CHECK(m.len == 64 * MIB);
        CHECK(m.data != NULL && m.data[0] == 'x' && m.data[m.len - 1] == 'x');
    }
    EXPECT_NONE(r);

    /* 64 MiB + 1: too long */
    feed_xs(r, 64 * MIB + 1);
    EXPECT_TOO_LONG(r, 64 * MIB + 1, 64 * MIB + 1);
    CHECK_STATUS(FEED_LIT(r, "{\"after\":true}\n"), MCP_STATUS_OK);
    EXPECT_JSON(r, "{\"after\":true}");
    EXPECT_NONE(r);
    mcp_line_reader_free(r);
}

static void test_size_max_means_no_limit(void)
{
    McpLineReader *r = NEW_READER();
    McpMessage m = sentinel_message();
    CHECK_STATUS(mcp_line_reader_set_max_line_len(r, SIZE_MAX), MCP_STATUS_OK);
    feed_xs(r, 64 * MIB + 1);
    if (CHECK_STATUS(mcp_line_reader_next_message(r, &m), MCP_STATUS_OK)) {
        CHECK(m.kind == MCP_MESSAGE_PARSE_ERROR);
        CHECK(m.len == 64 * MIB + 1);
        CHECK(m.data != NULL && m.data[0] == 'x' && m.data[m.len - 1] == 'x');
    }
    EXPECT_NONE(r);
    mcp_line_reader_free(r);
}

int main(void)
{
    test_set_max_line_len_arguments();
    test_too_long_in_one_chunk();
    test_too_long_reported_before_newline();
    test_too_long_byte_by_byte();
    test_too_long_with_skip_invalid_and_finish();
    test_limit_applies_to_new_lines();
    test_default_limit_is_64_mib();
    test_size_max_means_no_limit();
    return check_summary();
}
