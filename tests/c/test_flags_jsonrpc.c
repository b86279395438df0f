/*
 * mcp_line_reader_set_flags: unknown bits -> MCP_STATUS_UNKNOWN_FLAGS
 * (and the previous flags stay in force), MCP_READER_SKIP_INVALID, and the
 * MCP_READER_JSONRPC classification (request / notification / response /
 * error / batch, anything else -> MCP_MESSAGE_INVALID_JSONRPC).
 */
#include "test_util.h"

#define RPC(r, rpc, lit) EXPECT_ITEM(r, MCP_MESSAGE_JSON, rpc, lit)
#define INVALID_RPC(r, lit) EXPECT_ITEM(r, MCP_MESSAGE_INVALID_JSONRPC, MCP_RPC_NONE, lit)

static void test_set_flags_arguments(void)
{
    McpLineReader *r = NEW_READER();
    static const uint32_t bad[] = {4, 8, 0x80, 0x100, 0x80000000u, 0xFFFFFFFFu,
                                   MCP_READER_SKIP_INVALID | 4, MCP_READER_JSONRPC | 0x10};
    size_t i;

    CHECK_STATUS(mcp_line_reader_set_flags(r, 0), MCP_STATUS_OK);
    CHECK_STATUS(mcp_line_reader_set_flags(r, MCP_READER_SKIP_INVALID), MCP_STATUS_OK);
    CHECK_STATUS(mcp_line_reader_set_flags(r, MCP_READER_JSONRPC), MCP_STATUS_OK);
    CHECK_STATUS(mcp_line_reader_set_flags(r, MCP_READER_SKIP_INVALID | MCP_READER_JSONRPC), MCP_STATUS_OK);
    for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        if (!CHECK_STATUS(mcp_line_reader_set_flags(r, bad[i]), MCP_STATUS_UNKNOWN_FLAGS)) {
            printf("    flags = 0x%lx\n", (unsigned long)bad[i]);
        }
    }
    /* the rejected calls left SKIP_INVALID | JSONRPC in force */
    CHECK_STATUS(FEED_LIT(r, "bad\n{\"id\":1}\n{\"jsonrpc\":\"2.0\",\"method\":\"m\"}\n"), MCP_STATUS_OK);
    RPC(r, MCP_RPC_NOTIFICATION, "{\"jsonrpc\":\"2.0\",\"method\":\"m\"}");
    EXPECT_NONE(r);

    /* flags 0 turns both off again */
    CHECK_STATUS(mcp_line_reader_set_flags(r, 0), MCP_STATUS_OK);
    CHECK_STATUS(FEED_LIT(r, "bad\n{\"id\":1}\n{\"jsonrpc\":\"2.0\",\"method\":\"m\"}\n"), MCP_STATUS_OK);
    EXPECT_PARSE_ERROR(r, "bad");
    EXPECT_JSON(r, "{\"id\":1}");
    EXPECT_JSON(r, "{\"jsonrpc\":\"2.0\",\"method\":\"m\"}");
    EXPECT_NONE(r);
    mcp_line_reader_free(r);
}

static void test_skip_invalid(void)
{
    McpLineReader *r = NEW_READER();
    CHECK_STATUS(mcp_line_reader_set_flags(r, MCP_READER_SKIP_INVALID), MCP_STATUS_OK);
    CHECK_STATUS(FEED_LIT(r, "not json\n{\"a\":1}\n[1,\nNaN\n\"x\"\n{} {}\n"), MCP_STATUS_OK);
    EXPECT_JSON(r, "{\"a\":1}");
    EXPECT_JSON(r, "\"x\"");
    EXPECT_NONE(r);
    CHECK_BUFFERED(r, 0);
    /* skipped at finish() too */
    CHECK_STATUS(FEED_LIT(r, "garbage"), MCP_STATUS_OK);
    CHECK_STATUS(mcp_line_reader_finish(r), MCP_STATUS_OK);
    EXPECT_NONE(r);
    CHECK_BUFFERED(r, 0);
    /* without JSONRPC, any JSON text is a message (no JSON-RPC check) */
    CHECK_STATUS(FEED_LIT(r, "42\n{\"id\":1}\n"), MCP_STATUS_OK);
    EXPECT_JSON(r, "42");
    EXPECT_JSON(r, "{\"id\":1}");
    EXPECT_NONE(r);
    mcp_line_reader_free(r);
}

static void test_no_rpc_kind_without_jsonrpc_flag(void)
{
    McpLineReader *r = NEW_READER();
    CHECK_STATUS(FEED_LIT(r, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n"
                             "{\"jsonrpc\":\"2.0\",\"method\":\"n\"}\n"
                             "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n"
                             "[{\"jsonrpc\":\"2.0\",\"method\":\"n\"}]\n"),
                 MCP_STATUS_OK);
    EXPECT_JSON(r, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}");
    EXPECT_JSON(r, "{\"jsonrpc\":\"2.0\",\"method\":\"n\"}");
    EXPECT_JSON(r, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}");
    EXPECT_JSON(r, "[{\"jsonrpc\":\"2.0\",\"method\":\"n\"}]");
    EXPECT_NONE(r);
    mcp_line_reader_free(r);
}

static void test_jsonrpc_kinds(void)
{
    McpLineReader *r = NEW_READER();
    CHECK_STATUS(mcp_line_reader_set_flags(r, MCP_READER_JSONRPC), MCP_STATUS_OK);

    /* requests */
    CHECK_STATUS(FEED_LIT(r, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"a\":1}}\n"
                             "{\"jsonrpc\":\"2.0\",\"id\":\"abc\",\"method\":\"tools/list\"}\n"
                             "{\"method\":\"ping\",\"id\":7,\"jsonrpc\":\"2.0\"}\n"
                             " {\"jsonrpc\": \"2.0\", \"id\": 2, \"method\": \"x\", \"params\": [1]} \r\n"),
                 MCP_STATUS_OK);
    RPC(r, MCP_RPC_REQUEST, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"a\":1}}");
    RPC(r, MCP_RPC_REQUEST, "{\"jsonrpc\":\"2.0\",\"id\":\"abc\",\"method\":\"tools/list\"}");
    RPC(r, MCP_RPC_REQUEST, "{\"method\":\"ping\",\"id\":7,\"jsonrpc\":\"2.0\"}");
    RPC(r, MCP_RPC_REQUEST, "{\"jsonrpc\": \"2.0\", \"id\": 2, \"method\": \"x\", \"params\": [1]}");
    EXPECT_NONE(r);

    /* notifications */
    CHECK_STATUS(FEED_LIT(r, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n"
                             "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"p\":1}}\n"),
                 MCP_STATUS_OK);
    RPC(r, MCP_RPC_NOTIFICATION, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
    RPC(r, MCP_RPC_NOTIFICATION, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"p\":1}}");
    EXPECT_NONE(r);

    /* responses */
    CHECK_STATUS(FEED_LIT(r, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n"
                             "{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"result\":null}\n"
                             "{\"result\":[1,2],\"id\":3,\"jsonrpc\":\"2.0\"}\n"),
                 MCP_STATUS_OK);
    RPC(r, MCP_RPC_RESPONSE, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}");
    RPC(r, MCP_RPC_RESPONSE, "{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"result\":null}");
    RPC(r, MCP_RPC_RESPONSE, "{\"result\":[1,2],\"id\":3,\"jsonrpc\":\"2.0\"}");
    EXPECT_NONE(r);

    /* error responses (id null is allowed for errors) */
    CHECK_STATUS(FEED_LIT(r, "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32601,\"message\":\"Method not found\"}}\n"
                             "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"Parse error\"}}\n"),
                 MCP_STATUS_OK);
    RPC(r, MCP_RPC_ERROR, "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32601,\"message\":\"Method not found\"}}");
    RPC(r, MCP_RPC_ERROR, "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"Parse error\"}}");
    EXPECT_NONE(r);

    /* batches */
    CHECK_STATUS(FEED_LIT(r, "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\"},{\"jsonrpc\":\"2.0\",\"method\":\"b\"}]\n"
                             "[{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":0}]\n"),
                 MCP_STATUS_OK);
    RPC(r, MCP_RPC_BATCH, "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\"},{\"jsonrpc\":\"2.0\",\"method\":\"b\"}]");
    RPC(r, MCP_RPC_BATCH, "[{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":0}]");
    EXPECT_NONE(r);

    /* valid JSON that is not JSON-RPC 2.0 */
    CHECK_STATUS(FEED_LIT(r, "{\"id\":1,\"method\":\"a\"}\n"              /* no jsonrpc member */
                             "{\"jsonrpc\":\"1.0\",\"id\":1,\"method\":\"a\"}\n" /* wrong version */
                             "{\"jsonrpc\":2.0,\"id\":1,\"method\":\"a\"}\n"     /* version not a string */
                             "{\"jsonrpc\":\"2.0\"}\n"                          /* nothing else */
                             "{\"jsonrpc\":\"2.0\",\"id\":1}\n"                 /* id only */
                             "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":5}\n"    /* method not a string */
                             "{\"jsonrpc\":\"2.0\",\"result\":1}\n"             /* response without id */
                             "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":1,\"error\":{\"code\":1,\"message\":\"m\"}}\n"
                             "{\"jsonrpc\":\"2.0\",\"id\":true,\"method\":\"a\"}\n"     /* id not string/number/null */
                             "{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"a\"}\n"
                             "{\"jsonrpc\":\"2.0\",\"id\":[1],\"result\":1}\n"
                             "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\",\"params\":5}\n" /* params not structured */
                             "{\"jsonrpc\":\"2.0\",\"method\":\"a\",\"params\":\"s\"}\n"
                             "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":5}\n"            /* error not an object */
                             "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"message\":\"m\"}}\n" /* no code */
                             "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":\"1\",\"message\":\"m\"}}\n"
                             "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":1}}\n" /* no message */
                             "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":1.5,\"message\":\"m\"}}\n"
                             "[]\n"                                                 /* empty batch */
                             "[1]\n"                                                /* batch of non-messages */
                             "[{\"jsonrpc\":\"2.0\",\"method\":\"a\"},{}]\n"
                             "{}\n"
                             "42\n"
                             "\"str\"\n"
                             "null\n"),
                 MCP_STATUS_OK);
    INVALID_RPC(r, "{\"id\":1,\"method\":\"a\"}");
    INVALID_RPC(r, "{\"jsonrpc\":\"1.0\",\"id\":1,\"method\":\"a\"}");
    INVALID_RPC(r, "{\"jsonrpc\":2.0,\"id\":1,\"method\":\"a\"}");
    INVALID_RPC(r, "{\"jsonrpc\":\"2.0\"}");
    INVALID_RPC(r, "{\"jsonrpc\":\"2.0\",\"id\":1}");
    INVALID_RPC(r, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":5}");
    INVALID_RPC(r, "{\"jsonrpc\":\"2.0\",\"result\":1}");
    INVALID_RPC(r, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":1,\"error\":{\"code\":1,\"message\":\"m\"}}");
    INVALID_RPC(r, "{\"jsonrpc\":\"2.0\",\"id\":true,\"method\":\"a\"}");
    INVALID_RPC(r, "{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"a\"}");
    INVALID_RPC(r, "{\"jsonrpc\":\"2.0\",\"id\":[1],\"result\":1}");
    INVALID_RPC(r, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\",\"params\":5}");
    INVALID_RPC(r, "{\"jsonrpc\":\"2.0\",\"method\":\"a\",\"params\":\"s\"}");
    INVALID_RPC(r, "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":5}");
    INVALID_RPC(r, "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"message\":\"m\"}}");
    INVALID_RPC(r, "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":\"1\",\"message\":\"m\"}}");
    INVALID_RPC(r, "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":1}}");
    INVALID_RPC(r, "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":1.5,\"message\":\"m\"}}");
    INVALID_RPC(r, "[]");
    INVALID_RPC(r, "[1]");
    INVALID_RPC(r, "[{\"jsonrpc\":\"2.0\",\"method\":\"a\"},{}]");
    INVALID_RPC(r, "{}");
    INVALID_RPC(r, "42");
    INVALID_RPC(r, "\"str\"");
    INVALID_RPC(r, "null");
    EXPECT_NONE(r);

    /* parse errors stay parse errors with JSONRPC on */
    CHECK_STATUS(FEED_LIT(r, "{\"jsonrpc\":\"2.0\",\"method\":\"m\"\n"), MCP_STATUS_OK);
    EXPECT_PARSE_ERROR(r, "{\"jsonrpc\":\"2.0\",\"method\":\"m\"");
    EXPECT_NONE(r);

    /* and finish() classifies the last line too */
    CHECK_STATUS(FEED_LIT(r, "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"last\"}"), MCP_STATUS_OK);
    EXPECT_NONE(r);
    CHECK_STATUS(mcp_line_reader_finish(r), MCP_STATUS_OK);
    RPC(r, MCP_RPC_REQUEST, "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"last\"}");
    EXPECT_NONE(r);
    mcp_line_reader_free(r);
}

static void test_jsonrpc_with_skip_invalid(void)
{
    McpLineReader *r = NEW_READER();
    CHECK_STATUS(mcp_line_reader_set_flags(r, MCP_READER_JSONRPC | MCP_READER_SKIP_INVALID), MCP_STATUS_OK);
    CHECK_STATUS(mcp_line_reader_set_max_line_len(r, 64), MCP_STATUS_OK);
    CHECK_STATUS(FEED_LIT(r, "{\"id\":1}\n"
                             "not json\n"
                             "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\"}\n"
                             "42\n"
                             "{\"jsonrpc\":\"2.0\",\"method\":\"n\",\"params\":{\"padding\":\"0123456789012345678901234567890123456789\"}}\n"
                             "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":1,\"message\":\"m\"}}\n"),
                 MCP_STATUS_OK);
    RPC(r, MCP_RPC_REQUEST, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\"}");
    EXPECT_TOO_LONG(r, 65, 94);  /* too-long items are still reported */
    RPC(r, MCP_RPC_ERROR, "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":1,\"message\":\"m\"}}");
    EXPECT_NONE(r);
    mcp_line_reader_free(r);
}

int main(void)
{
    test_set_flags_arguments();
    test_skip_invalid();
    test_no_rpc_kind_without_jsonrpc_flag();
    test_jsonrpc_kinds();
    test_jsonrpc_with_skip_invalid();
    return check_summary();
}
