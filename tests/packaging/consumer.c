/* A consumer of an installed (or vendored) mcp-stdio: built by
 * tests/packaging/run.sh through pkg-config (shared and static),
 * find_package(mcp_stdio) and add_subdirectory(). Exits 0 when the library
 * it links against frames a line and encodes a message as documented. */
#include <mcp_stdio.h>

#include <stdio.h>
#include <string.h>

static int failures = 0;

#define CHECK(cond)                                                      \
    do {                                                                 \
        if (!(cond)) {                                                   \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__,       \
                    __LINE__, #cond);                                    \
            failures++;                                                  \
        }                                                                \
    } while (0)

static int bytes_equal(const uint8_t *data, size_t len, const char *want) {
    return data != NULL && len == strlen(want) && memcmp(data, want, len) == 0;
}

int main(void) {
    /* The header and the library agree. */
    CHECK(strcmp(mcp_stdio_version(), MCP_STDIO_VERSION) == 0);
    CHECK(mcp_stdio_abi_version() == MCP_STDIO_ABI_VERSION);

    /* Reader: one CRLF line in two chunks, then a line that is not JSON. */
    McpLineReader *reader = mcp_line_reader_new();
    CHECK(reader != NULL);
    if (reader == NULL) return 1;
    CHECK(mcp_line_reader_set_flags(reader, MCP_READER_JSONRPC) == MCP_STATUS_OK);
    const char *part1 = "{\"jsonrpc\":\"2.0\",\"method\":\"ping\",";
    const char *part2 = "\"id\":1}\r\nnot json\n";
    CHECK(mcp_line_reader_feed(reader, (const uint8_t *)part1, strlen(part1)) == MCP_STATUS_OK);

    McpMessage msg;
    CHECK(mcp_line_reader_next_message(reader, &msg) == MCP_STATUS_NO_MESSAGE);
    CHECK(mcp_line_reader_feed(reader, (const uint8_t *)part2, strlen(part2)) == MCP_STATUS_OK);

    CHECK(mcp_line_reader_next_message(reader, &msg) == MCP_STATUS_OK);
    CHECK(msg.kind == MCP_MESSAGE_JSON);
    CHECK(msg.rpc_kind == MCP_RPC_REQUEST);
    CHECK(bytes_equal(msg.data, msg.len, "{\"jsonrpc\":\"2.0\",\"method\":\"ping\",\"id\":1}"));

    CHECK(mcp_line_reader_next_message(reader, &msg) == MCP_STATUS_OK);
    CHECK(msg.kind == MCP_MESSAGE_PARSE_ERROR);
    CHECK(bytes_equal(msg.data, msg.len, "not json"));

    CHECK(mcp_line_reader_next_message(reader, &msg) == MCP_STATUS_NO_MESSAGE);
    CHECK(mcp_line_reader_finish(reader) == MCP_STATUS_OK);
    CHECK(mcp_line_reader_buffered_len(reader) == 0);
    mcp_line_reader_free(reader);

    /* Encoder: the README's seed example. */
    const char *json = "{\"a\": \"line1\\nline2\", \"id\": 1}";
    McpBuffer buf = {NULL, 0};
    CHECK(mcp_encode((const uint8_t *)json, strlen(json), 0, &buf) == MCP_STATUS_OK);
    CHECK(bytes_equal(buf.data, buf.len, "{\"a\":\"line1\\nline2\",\"id\":1}\n"));
    mcp_buffer_free(&buf);
    CHECK(buf.data == NULL && buf.len == 0);

    /* Errors are statuses, never crashes. */
    CHECK(mcp_encode((const uint8_t *)"{", 1, 0, &buf) == MCP_STATUS_INVALID_JSON);
    CHECK(mcp_line_reader_feed(NULL, NULL, 0) == MCP_STATUS_NULL_ARGUMENT);
    CHECK(mcp_status_str(MCP_STATUS_OK) != NULL);

    if (failures != 0) {
        fprintf(stderr, "consumer: %d check(s) failed\n", failures);
        return 1;
    }
    printf("consumer: mcp_stdio %s OK\n", mcp_stdio_version());
    return 0;
}
