/*
 * Imports the CMcpStdio module exactly as Swift would (clang modules, the
 * module map in ../Sources/CMcpStdio) and uses the API through it.
 * Built and run by bindings/swift/test.sh; no Swift toolchain is needed.
 */
@import CMcpStdio;

#include <stdio.h>
#include <string.h>

static int passes = 0, failures = 0;
#define CHECK(e) ((e) ? (void)passes++ : (void)(failures++, printf("%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #e)))

int main(void)
{
    McpLineReader *reader = mcp_line_reader_new();
    CHECK(reader != NULL);
    CHECK(mcp_line_reader_set_flags(reader, MCP_READER_JSONRPC) == MCP_STATUS_OK);
    const char *input = "{\"jsonrpc\":\"2.0\",\"method\":\"ping\",\"id\":1}\r\n";
    CHECK(mcp_line_reader_feed(reader, (const uint8_t *)input, strlen(input)) == MCP_STATUS_OK);
    McpMessage m;
    CHECK(mcp_line_reader_next_message(reader, &m) == MCP_STATUS_OK);
    CHECK(m.kind == MCP_MESSAGE_JSON && m.rpc_kind == MCP_RPC_REQUEST);
    CHECK(m.len == strlen(input) - 2 && memcmp(m.data, input, m.len) == 0);
    /* The envelope of the message just taken: route on the method, echo the id. */
    McpEnvelope env;
    CHECK(mcp_line_reader_envelope(reader, &env) == MCP_STATUS_OK);
    CHECK(env.rpc_kind == MCP_RPC_REQUEST);
    CHECK(mcp_json_string_eq(env.method.data, env.method.len, "ping"));
    CHECK(env.id.len == 1 && env.id.data[0] == '1');
    CHECK(env.params.data == NULL && env.params.len == 0);
    mcp_line_reader_free(reader);

    const char *error = "{\"jsonrpc\":\"2.0\",\"error\":{\"code\":-32700,\"message\":\"Parse error\"}}";
    CHECK(mcp_envelope_parse((const uint8_t *)error, strlen(error), &env) == MCP_STATUS_OK);
    CHECK(env.rpc_kind == MCP_RPC_ERROR && env.id.data == NULL && env.error.len > 0);

    McpBuffer line = {NULL, 0};
    const char *json = "{ \"a\" : [1, 2] }";
    CHECK(mcp_encode((const uint8_t *)json, strlen(json), 0, &line) == MCP_STATUS_OK);
    CHECK(line.len == 12 && memcmp(line.data, "{\"a\":[1,2]}\n", 12) == 0);
    mcp_buffer_free(&line);
    CHECK(strcmp(mcp_stdio_version(), MCP_STDIO_VERSION) == 0);

    printf("%d passed, %d failed\n", passes, failures);
    return failures != 0;
}
