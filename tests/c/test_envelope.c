/*
 * The JSON-RPC envelope: mcp_envelope_parse, mcp_line_reader_envelope and
 * mcp_json_string_eq, as a host uses them: route each request on its
 * method, answer it with its id echoed byte for byte, without parsing the
 * message again. Also: where the members point and how long they live
 * (valgrind and ASan watch every read), and the NULL cases.
 */
#include "test_util.h"

/* A member is exactly `lit`. */
static int slice_is(McpSlice s, const char *lit)
{
    size_t n = strlen(lit);
    return s.data != NULL && s.len == n && memcmp(s.data, lit, n) == 0;
}

static int absent(McpSlice s)
{
    return s.data == NULL && s.len == 0;
}

static int all_absent(const McpEnvelope *e)
{
    return absent(e->id) && absent(e->method) && absent(e->params) && absent(e->result) &&
           absent(e->error);
}

/* `s` lies within data[0..len]. */
static int inside(McpSlice s, const uint8_t *data, size_t len)
{
    return s.data != NULL && s.data >= data && s.data + s.len <= data + len;
}

static int same_slice(McpSlice a, McpSlice b)
{
    return a.data == b.data && a.len == b.len;
}

/* Field by field: the padding after rpc_kind is unspecified (valgrind sees
 * it uninitialised after the library wrote the struct). */
static int same_envelope(const McpEnvelope *a, const McpEnvelope *b)
{
    return a->rpc_kind == b->rpc_kind && same_slice(a->id, b->id) &&
           same_slice(a->method, b->method) && same_slice(a->params, b->params) &&
           same_slice(a->result, b->result) && same_slice(a->error, b->error);
}

static McpEnvelope sentinel_envelope(void)
{
    McpEnvelope e;
    memset(&e, 0x5a, sizeof e);
    return e;
}

static int envelope_is_sentinel(const McpEnvelope *e)
{
    McpEnvelope s = sentinel_envelope();
    return same_envelope(e, &s);
}

#define STR_EQ(token_slice, text) mcp_json_string_eq((token_slice).data, (token_slice).len, (text))

/* ---- a host: route on the method, echo the id ---- */

typedef struct {
    char out[4096];
    size_t len;
    int answered;
    int notified;
    int responses;
} Host;

/* Appends `{"jsonrpc":"2.0","id":<id as received>,<body>}` as one encoded line. */
static void answer(Host *h, McpSlice id, const char *body)
{
    char json[512];
    McpBuffer line = {NULL, 0};
    int n = snprintf(json, sizeof json, "{\"jsonrpc\": \"2.0\", \"id\": %.*s, %s}", (int)id.len,
                     (const char *)id.data, body);
    if (!CHECK(n > 0 && (size_t)n < sizeof json)) {
        return;
    }
    if (!CHECK_STATUS(mcp_encode((const uint8_t *)json, (size_t)n, 0, &line), MCP_STATUS_OK)) {
        return;
    }
    if (CHECK(h->len + line.len < sizeof h->out)) {
        memcpy(h->out + h->len, line.data, line.len);
        h->len += line.len;
        h->out[h->len] = '\0';
    }
    mcp_buffer_free(&line);
    h->answered++;
}

/* One message just taken from `r`: route it. */
static void handle(Host *h, McpLineReader *r, const McpMessage *m)
{
    McpEnvelope e = sentinel_envelope();
    if (!CHECK_STATUS(mcp_line_reader_envelope(r, &e), MCP_STATUS_OK)) {
        return;
    }
    CHECK(e.rpc_kind == m->rpc_kind || (m->rpc_kind == MCP_RPC_BATCH && e.rpc_kind == MCP_RPC_NONE));
    if (e.rpc_kind == MCP_RPC_NOTIFICATION) {
        CHECK(inside(e.method, m->data, m->len) && absent(e.id));
        h->notified++;
        return;
    }
    if (e.rpc_kind == MCP_RPC_RESPONSE) {
        CHECK(slice_is(e.id, "1") && slice_is(e.result, "null") && absent(e.method));
        h->responses++;
        return;
    }
    if (e.rpc_kind != MCP_RPC_REQUEST) {
        CHECK(e.rpc_kind == MCP_RPC_NONE && all_absent(&e));
        return;
    }
    CHECK(inside(e.id, m->data, m->len) && inside(e.method, m->data, m->len));
    if (STR_EQ(e.method, "tools/call")) {
        /* params echoed too: the raw value, as received */
        char body[256];
        int n = snprintf(body, sizeof body, "\"result\": {\"called\": %.*s}", (int)e.params.len,
                         e.params.data != NULL ? (const char *)e.params.data : "null");
        CHECK(n > 0 && (size_t)n < sizeof body);
        answer(h, e.id, body);
    } else if (STR_EQ(e.method, "ping")) {
        answer(h, e.id, "\"result\": {}");
    } else {
        answer(h, e.id, "\"error\": {\"code\": -32601, \"message\": \"Method not found\"}");
    }
}

static void test_host_routes_on_method_and_echoes_id(void)
{
    McpLineReader *r = NEW_READER();
    Host h;
    McpMessage m = sentinel_message();
    static const char want[] =
        "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}\n"
        "{\"jsonrpc\":\"2.0\",\"id\":\"abc\",\"result\":{\"called\":{\"name\":\"x\"}}}\n"
        "{\"jsonrpc\":\"2.0\",\"id\":-1.5e3,\"result\":{\"called\":[1,2]}}\n"
        "{\"jsonrpc\":\"2.0\",\"id\":\"a\\\"b\\u00e9\",\"error\":{\"code\":-32601,\"message\":\"Method not found\"}}\n"
        "{\"jsonrpc\":\"2.0\",\"id\":\"\\ud83d\\ude00\",\"result\":{}}\n";
    memset(&h, 0, sizeof h);
    CHECK_STATUS(mcp_line_reader_set_flags(r, MCP_READER_JSONRPC), MCP_STATUS_OK);
    CHECK_STATUS(FEED_LIT(r, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\"}\n"
                             "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n"
                             "{\"jsonrpc\":\"2.0\",\"id\":\"abc\",\"method\":\"tools\\/call\",\"params\":{\"name\":\"x\"}}\r\n"
                             "  {\"method\" : \"\\u0074ools/call\" , \"params\" : [1, 2], \"id\" : -1.5e3, \"jsonrpc\":\"2.0\"}  \n"
                             "{\"jsonrpc\":\"2.0\",\"id\":\"a\\\"b\\u00e9\",\"method\":\"tools/list\"}\n"
                             "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":null}\n"
                             "{\"jsonrpc\":\"2.0\",\"id\":\"\\ud83d\\ude00\",\"method\":\"p\\u0069ng\"}\n"
                             "[{\"jsonrpc\":\"2.0\",\"method\":\"ping\",\"id\":2}]\n"
                             "not json\n"
                             "{\"id\":3,\"method\":\"ping\"}\n"),
                 MCP_STATUS_OK);
    while (mcp_line_reader_next_message(r, &m) == MCP_STATUS_OK) {
        handle(&h, r, &m);
    }
    CHECK(h.answered == 5);
    CHECK(h.notified == 1);
    CHECK(h.responses == 1);
    if (!CHECK(h.len == strlen(want) && memcmp(h.out, want, h.len) == 0)) {
        print_bytes("got ", (const uint8_t *)h.out, h.len);
        print_bytes("want", (const uint8_t *)want, strlen(want));
    }
    mcp_line_reader_free(r);
}

/* ---- the reader's envelope: what it holds, how long ---- */

static void test_reader_envelope_lifetime(void)
{
    McpLineReader *r = NEW_READER();
    McpMessage m = sentinel_message();
    McpEnvelope e = sentinel_envelope();
    McpEnvelope again = sentinel_envelope();

    /* Nothing taken yet: none. */
    CHECK_STATUS(mcp_line_reader_envelope(r, &e), MCP_STATUS_OK);
    CHECK(e.rpc_kind == MCP_RPC_NONE && all_absent(&e));

    /* Classification off: none, even for a request. */
    CHECK_STATUS(FEED_LIT(r, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\"}\n"), MCP_STATUS_OK);
    CHECK_STATUS(mcp_line_reader_next_message(r, &m), MCP_STATUS_OK);
    e = sentinel_envelope();
    CHECK_STATUS(mcp_line_reader_envelope(r, &e), MCP_STATUS_OK);
    CHECK(e.rpc_kind == MCP_RPC_NONE && all_absent(&e));

    CHECK_STATUS(mcp_line_reader_set_flags(r, MCP_READER_JSONRPC), MCP_STATUS_OK);
    CHECK_STATUS(FEED_LIT(r, "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"Parse error\"}}\n"
                             "{\"jsonrpc\":\"2.0\",\"error\":{\"code\":1,\"message\":\"m\"}}\n"
                             "{\"jsonrpc\":\"2.0\",\"method\":\"n\",\"params\":[1,2,3]}\n"
                             "[1,"),
                 MCP_STATUS_OK);
    CHECK_STATUS(mcp_line_reader_next_message(r, &m), MCP_STATUS_OK);
    e = sentinel_envelope();
    CHECK_STATUS(mcp_line_reader_envelope(r, &e), MCP_STATUS_OK);
    CHECK(e.rpc_kind == MCP_RPC_ERROR);
    CHECK(slice_is(e.id, "null") && inside(e.id, m.data, m.len));
    CHECK(slice_is(e.error, "{\"code\":-32700,\"message\":\"Parse error\"}"));
    CHECK(absent(e.method) && absent(e.params) && absent(e.result));
    /* Asking again changes nothing, and the message's data is still valid. */
    CHECK_STATUS(mcp_line_reader_envelope(r, &again), MCP_STATUS_OK);
    CHECK(same_envelope(&e, &again));
    CHECK(mcp_line_reader_buffered_len(r) > 0);
    CHECK(m.len > 0 && m.data[0] == '{' && m.data[m.len - 1] == '}');

    /* An error response without an id: id absent. */
    CHECK_STATUS(mcp_line_reader_next_message(r, &m), MCP_STATUS_OK);
    CHECK_STATUS(mcp_line_reader_envelope(r, &e), MCP_STATUS_OK);
    CHECK(e.rpc_kind == MCP_RPC_ERROR && absent(e.id) && inside(e.error, m.data, m.len));

    /* A member fed back into its own reader: copied before the buffer moves. */
    CHECK_STATUS(mcp_line_reader_next_message(r, &m), MCP_STATUS_OK);
    CHECK_STATUS(mcp_line_reader_envelope(r, &e), MCP_STATUS_OK);
    CHECK(e.rpc_kind == MCP_RPC_NOTIFICATION && slice_is(e.params, "[1,2,3]"));
    CHECK_STATUS(mcp_line_reader_feed(r, e.params.data, e.params.len), MCP_STATUS_OK);
    /* The feed forgot the envelope (its bytes may have moved). */
    e = sentinel_envelope();
    CHECK_STATUS(mcp_line_reader_envelope(r, &e), MCP_STATUS_OK);
    CHECK(e.rpc_kind == MCP_RPC_NONE && all_absent(&e));
    CHECK_STATUS(FEED_LIT(r, "]\n"), MCP_STATUS_OK);
    EXPECT_ITEM(r, MCP_MESSAGE_INVALID_JSONRPC, MCP_RPC_NONE, "[1,[1,2,3]]");
    CHECK_STATUS(mcp_line_reader_envelope(r, &e), MCP_STATUS_OK);
    CHECK(e.rpc_kind == MCP_RPC_NONE && all_absent(&e));

    /* A batch: the message says BATCH, the envelope NONE. */
    CHECK_STATUS(FEED_LIT(r, "[{\"jsonrpc\":\"2.0\",\"method\":\"a\"}]\n"), MCP_STATUS_OK);
    CHECK_STATUS(mcp_line_reader_next_message(r, &m), MCP_STATUS_OK);
    CHECK(m.rpc_kind == MCP_RPC_BATCH);
    CHECK_STATUS(mcp_line_reader_envelope(r, &e), MCP_STATUS_OK);
    CHECK(e.rpc_kind == MCP_RPC_NONE && all_absent(&e));

    /* NO_MESSAGE forgets it too. */
    CHECK_STATUS(FEED_LIT(r, "{\"jsonrpc\":\"2.0\",\"method\":\"a\"}\n"), MCP_STATUS_OK);
    CHECK_STATUS(mcp_line_reader_next_message(r, &m), MCP_STATUS_OK);
    CHECK_STATUS(mcp_line_reader_envelope(r, &e), MCP_STATUS_OK);
    CHECK(e.rpc_kind == MCP_RPC_NOTIFICATION);
    EXPECT_NONE(r);
    CHECK_STATUS(mcp_line_reader_envelope(r, &e), MCP_STATUS_OK);
    CHECK(e.rpc_kind == MCP_RPC_NONE && all_absent(&e));
    mcp_line_reader_free(r);
}

/* ---- mcp_envelope_parse ---- */

static void test_envelope_parse(void)
{
    static const char req[] = " {\"jsonrpc\":\"2.0\",\"id\":\"x\",\"id\":42,\"method\":\"a\",\"params\":{}} \n";
    static const char resp[] = "{\"jsonrpc\":\"2.0\",\"id\":\"r\",\"result\":null}";
    static const char batch[] = "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\"}]";
    static const char other[] = "{\"id\":1,\"method\":\"a\"}";
    McpEnvelope e = sentinel_envelope();

    CHECK_STATUS(mcp_envelope_parse((const uint8_t *)req, strlen(req), &e), MCP_STATUS_OK);
    CHECK(e.rpc_kind == MCP_RPC_REQUEST);
    CHECK(slice_is(e.id, "42") && inside(e.id, (const uint8_t *)req, strlen(req)));
    CHECK(slice_is(e.method, "\"a\"") && STR_EQ(e.method, "a"));
    CHECK(slice_is(e.params, "{}"));
    CHECK(absent(e.result) && absent(e.error));

    CHECK_STATUS(mcp_envelope_parse((const uint8_t *)resp, strlen(resp), &e), MCP_STATUS_OK);
    CHECK(e.rpc_kind == MCP_RPC_RESPONSE && slice_is(e.id, "\"r\"") && slice_is(e.result, "null"));

    e = sentinel_envelope();
    CHECK_STATUS(mcp_envelope_parse((const uint8_t *)batch, strlen(batch), &e), MCP_STATUS_OK);
    CHECK(e.rpc_kind == MCP_RPC_NONE && all_absent(&e));
    e = sentinel_envelope();
    CHECK_STATUS(mcp_envelope_parse((const uint8_t *)other, strlen(other), &e), MCP_STATUS_OK);
    CHECK(e.rpc_kind == MCP_RPC_NONE && all_absent(&e));

    /* errors leave *out untouched */
    e = sentinel_envelope();
    CHECK_STATUS(mcp_envelope_parse(LIT_PTR("{\"a\":"), LIT_LEN("{\"a\":"), &e), MCP_STATUS_INVALID_JSON);
    CHECK_STATUS(mcp_envelope_parse(LIT_PTR("   "), 3, &e), MCP_STATUS_INVALID_JSON);
    CHECK_STATUS(mcp_envelope_parse(NULL, 0, &e), MCP_STATUS_INVALID_JSON);
    CHECK_STATUS(mcp_envelope_parse(NULL, 4, &e), MCP_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(mcp_envelope_parse(LIT_PTR("{}"), (size_t)PTRDIFF_MAX + 1, &e), MCP_STATUS_INVALID_ARGUMENT);
    CHECK(envelope_is_sentinel(&e));
    CHECK_STATUS(mcp_envelope_parse(LIT_PTR("{}"), 2, NULL), MCP_STATUS_NULL_ARGUMENT);
}

/* ---- mcp_json_string_eq ---- */

static void test_json_string_eq(void)
{
#define EQ(lit, text) mcp_json_string_eq(LIT_PTR(lit), LIT_LEN(lit), (text))
    CHECK(EQ("\"tools/call\"", "tools/call"));
    CHECK(EQ("\"tools\\/call\"", "tools/call"));
    CHECK(EQ("\"\\u0074ools/call\"", "tools/call"));
    CHECK(EQ("\"\\u00E9\\u00e9\"", "\xc3\xa9\xc3\xa9"));
    CHECK(EQ("\"\\ud83d\\ude00\"", "\xf0\x9f\x98\x80"));
    CHECK(EQ("\"\\\"\\\\\\b\\f\\n\\r\\t\"", "\"\\\b\f\n\r\t"));
    CHECK(EQ("\"\"", ""));
    CHECK(!EQ("\"\\ud83d\"", "\xed\xa0\xbd")); /* a lone surrogate equals no text */
    CHECK(!EQ("\"tools/call\"", "tools/cal"));
    CHECK(!EQ("\"tools/call\" ", "tools/call"));
    CHECK(!EQ("\"a\"x", "a"));
    CHECK(!EQ("7", "7"));
    CHECK(!EQ("null", "null"));
    CHECK(!EQ("\"\\x\"", "x"));
    CHECK(!EQ("\"a\"", NULL));
    CHECK(!mcp_json_string_eq(NULL, 3, "a"));
    CHECK(!mcp_json_string_eq(NULL, 0, ""));
#undef EQ
}

/* ---- NULL arguments ---- */

static void test_reader_envelope_null_arguments(void)
{
    McpLineReader *r = NEW_READER();
    McpEnvelope e = sentinel_envelope();
    CHECK_STATUS(mcp_line_reader_envelope(NULL, &e), MCP_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(mcp_line_reader_envelope(NULL, NULL), MCP_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(mcp_line_reader_envelope(r, NULL), MCP_STATUS_NULL_ARGUMENT);
    CHECK(envelope_is_sentinel(&e));
    mcp_line_reader_free(r);
}

int main(void)
{
    test_host_routes_on_method_and_echoes_id();
    test_reader_envelope_lifetime();
    test_envelope_parse();
    test_json_string_eq();
    test_reader_envelope_null_arguments();
    return check_summary();
}
