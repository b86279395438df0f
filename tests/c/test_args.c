/*
 * Argument checking. NULL pointer arguments for every exported function that
 * takes a pointer, and lengths above PTRDIFF_MAX (which no real buffer can
 * have) -> MCP_STATUS_INVALID_ARGUMENT without touching the memory.
 * Contract: every pointer argument is checked; NULL gives
 * MCP_STATUS_NULL_ARGUMENT (never a crash), buffered_len(NULL) is 0 and the
 * free functions are no-ops on NULL. (NULL, 0) is valid empty input for
 * feed, and for encode it is empty input, i.e. MCP_STATUS_INVALID_JSON.
 */
#include "test_util.h"

static void test_reader_functions_with_null_reader(void)
{
    McpMessage m = sentinel_message();

    CHECK_STATUS(mcp_line_reader_set_max_line_len(NULL, 16), MCP_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(mcp_line_reader_set_max_line_len(NULL, SIZE_MAX), MCP_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(mcp_line_reader_set_flags(NULL, 0), MCP_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(mcp_line_reader_set_flags(NULL, MCP_READER_JSONRPC), MCP_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(mcp_line_reader_feed(NULL, LIT_PTR("{}\n"), 3), MCP_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(mcp_line_reader_feed(NULL, NULL, 0), MCP_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(mcp_line_reader_next_message(NULL, &m), MCP_STATUS_NULL_ARGUMENT);
    CHECK(message_is_sentinel(&m));
    CHECK_STATUS(mcp_line_reader_next_message(NULL, NULL), MCP_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(mcp_line_reader_finish(NULL), MCP_STATUS_NULL_ARGUMENT);
    CHECK(mcp_line_reader_buffered_len(NULL) == 0);
    mcp_line_reader_free(NULL); /* no-op, must not crash */
    CHECK(1);
}

static void test_feed_null_data(void)
{
    McpLineReader *r = NEW_READER();

    /* (NULL, 0) is valid empty input and changes nothing. */
    CHECK_STATUS(mcp_line_reader_feed(r, NULL, 0), MCP_STATUS_OK);
    CHECK_BUFFERED(r, 0);
    EXPECT_NONE(r);

    /* (NULL, n > 0) is rejected and must not affect the reader. */
    CHECK_STATUS(FEED_LIT(r, "{\"a\""), MCP_STATUS_OK);
    CHECK_STATUS(mcp_line_reader_feed(r, NULL, 1), MCP_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(mcp_line_reader_feed(r, NULL, 4096), MCP_STATUS_NULL_ARGUMENT);
    CHECK_BUFFERED(r, 4);
    CHECK_STATUS(mcp_line_reader_feed(r, NULL, 0), MCP_STATUS_OK);
    CHECK_BUFFERED(r, 4);
    CHECK_STATUS(FEED_LIT(r, ":1}\n"), MCP_STATUS_OK);
    EXPECT_JSON(r, "{\"a\":1}");
    EXPECT_NONE(r);

    mcp_line_reader_free(r);
}

static void test_next_message_null_out(void)
{
    McpLineReader *r = NEW_READER();

    CHECK_STATUS(mcp_line_reader_next_message(r, NULL), MCP_STATUS_NULL_ARGUMENT);

    /* A rejected call must not consume the pending message. */
    CHECK_STATUS(FEED_LIT(r, "{\"id\":1}\n{\"id\":2}\n"), MCP_STATUS_OK);
    CHECK_STATUS(mcp_line_reader_next_message(r, NULL), MCP_STATUS_NULL_ARGUMENT);
    EXPECT_JSON(r, "{\"id\":1}");
    CHECK_STATUS(mcp_line_reader_next_message(r, NULL), MCP_STATUS_NULL_ARGUMENT);
    EXPECT_JSON(r, "{\"id\":2}");
    EXPECT_NONE(r);

    mcp_line_reader_free(r);
}

static void test_encode_null_arguments(void)
{
    uint8_t marker[4] = {1, 2, 3, 4};
    McpBuffer out;

    out.data = marker;
    out.len = 77;
    /* json NULL with len > 0 */
    CHECK_STATUS(mcp_encode(NULL, 1, 0, &out), MCP_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(mcp_encode(NULL, 100, MCP_ENCODE_ASCII, &out), MCP_STATUS_NULL_ARGUMENT);
    CHECK(out.data == marker && out.len == 77);

    /* (NULL, 0) is valid empty input: empty is not a JSON text. */
    CHECK_STATUS(mcp_encode(NULL, 0, 0, &out), MCP_STATUS_INVALID_JSON);
    CHECK_STATUS(mcp_encode(NULL, 0, MCP_ENCODE_ASCII, &out), MCP_STATUS_INVALID_JSON);
    CHECK(out.data == marker && out.len == 77);

    /* out NULL */
    CHECK_STATUS(mcp_encode(LIT_PTR("{}"), 2, 0, NULL), MCP_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(mcp_encode(LIT_PTR("[1, 2]"), 6, MCP_ENCODE_ASCII, NULL), MCP_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(mcp_encode(NULL, 3, 0, NULL), MCP_STATUS_NULL_ARGUMENT);

    /* buffer_free(NULL) is a no-op */
    mcp_buffer_free(NULL);
    CHECK(1);
}

static void test_lengths_above_ptrdiff_max(void)
{
    static const uint8_t byte[1] = {'1'};
    static const size_t huge[] = {(size_t)PTRDIFF_MAX + 1, SIZE_MAX};
    McpLineReader *r = NEW_READER();
    size_t i;

    CHECK_STATUS(FEED_LIT(r, "[1"), MCP_STATUS_OK);
    for (i = 0; i < sizeof huge / sizeof huge[0]; i++) {
        uint8_t marker[2] = {0, 0};
        McpBuffer out;
        out.data = marker;
        out.len = 5;
        CHECK_STATUS(mcp_line_reader_feed(r, byte, huge[i]), MCP_STATUS_INVALID_ARGUMENT);
        CHECK_STATUS(mcp_encode(byte, huge[i], 0, &out), MCP_STATUS_INVALID_ARGUMENT);
        CHECK(out.data == marker && out.len == 5);
    }
    /* nothing was done: the reader still holds "[1" */
    CHECK_BUFFERED(r, 2);
    CHECK_STATUS(FEED_LIT(r, "]\n"), MCP_STATUS_OK);
    EXPECT_JSON(r, "[1]");
    EXPECT_NONE(r);
    mcp_line_reader_free(r);
}

int main(void)
{
    test_reader_functions_with_null_reader();
    test_feed_null_data();
    test_next_message_null_out();
    test_encode_null_arguments();
    test_lengths_above_ptrdiff_max();
    return check_summary();
}
