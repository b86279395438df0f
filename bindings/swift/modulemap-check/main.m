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

    /* The transport, as a Swift app drives it: a memory transport whose bytes it moves. */
    McpTransport *t = mcp_transport_new();
    CHECK(t != NULL);
    int64_t id = 0;
    CHECK(mcp_transport_request(t, "tools/list", NULL, 0, 0, &id) == MCP_STATUS_OK && id == 1);
    McpBuffer out = {NULL, 0};
    CHECK(mcp_transport_take_output(t, &out) == MCP_STATUS_OK);
    const char *sent = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}\n";
    CHECK(out.len == strlen(sent) && memcmp(out.data, sent, out.len) == 0);
    mcp_buffer_free(&out);
    const char *answer = "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"tools\":[]}}\n";
    CHECK(mcp_transport_receive(t, (const uint8_t *)answer, strlen(answer)) == MCP_STATUS_OK);
    McpEvent ev;
    CHECK(mcp_transport_next_event(t, 0, &ev) == MCP_STATUS_OK);
    CHECK(ev.kind == MCP_EVENT_RESPONSE && ev.request_id == 1 && ev.rpc_kind == MCP_RPC_RESPONSE);
    CHECK(ev.envelope.result.len == 12 && memcmp(ev.envelope.result.data, "{\"tools\":[]}", 12) == 0);
    CHECK(mcp_transport_next_event(t, 0, &ev) == MCP_STATUS_NO_MESSAGE);
    CHECK(mcp_transport_close(t, 0) == MCP_STATUS_OK);
    CHECK(mcp_transport_notify(t, "ping", NULL, 0) == MCP_STATUS_CLOSED);
    CHECK(mcp_transport_receive_end(t) == MCP_STATUS_OK);
    CHECK(mcp_transport_next_event(t, 0, &ev) == MCP_STATUS_OK && ev.kind == MCP_EVENT_CLOSED);
    CHECK(mcp_transport_next_event(t, 0, &ev) == MCP_STATUS_END_OF_STREAM);
    mcp_transport_free(t);

    printf("%d passed, %d failed\n", passes, failures);
    return failures != 0;
}
