/*
 * mcp_status_str for every status and unknown codes, the version string and
 * macros, and the ABI version. The harness passes
 * -DMCP_TEST_CRATE_VERSION="\"<CARGO_PKG_VERSION>\"" so the header's version
 * is also checked against the crate's.
 */
#include "test_util.h"

static void test_status_strings(void)
{
    /* every status of the header (the Rust unit tests check that this is all of them) */
    static const McpStatus known[] = {
        MCP_STATUS_OK,           MCP_STATUS_NO_MESSAGE,       MCP_STATUS_WOULD_BLOCK,
        MCP_STATUS_END_OF_STREAM, MCP_STATUS_NULL_ARGUMENT,   MCP_STATUS_INVALID_ARGUMENT,
        MCP_STATUS_INVALID_JSON, MCP_STATUS_OUT_OF_MEMORY,    MCP_STATUS_PANIC,
        MCP_STATUS_POISONED,     MCP_STATUS_IO_ERROR,         MCP_STATUS_BROKEN_PIPE,
        MCP_STATUS_TIMED_OUT,    MCP_STATUS_CLOSED,           MCP_STATUS_SPAWN_FAILED,
        MCP_STATUS_BUFFER_TOO_SMALL, MCP_STATUS_INVALID_PARAMS,  MCP_STATUS_INVALID_TEXT,
        MCP_STATUS_UNKNOWN_FLAGS, MCP_STATUS_EMPTY_PROGRAM, MCP_STATUS_RESTARTING,
    };
    /* the codes just past each end, and far ones */
    static const int32_t unknown[] = {4, 100, -18, -100, INT32_MAX, INT32_MIN};
    const char *known_str[sizeof known / sizeof known[0]];
    size_t i, j;

    /* the documented values */
    CHECK(MCP_STATUS_OK == 0);
    CHECK(MCP_STATUS_NO_MESSAGE == 1);
    CHECK(MCP_STATUS_NULL_ARGUMENT == -1);
    CHECK(MCP_STATUS_INVALID_ARGUMENT == -2);
    CHECK(MCP_STATUS_INVALID_JSON == -3);
    CHECK(MCP_STATUS_OUT_OF_MEMORY == -4);
    CHECK(MCP_STATUS_PANIC == -5);
    CHECK(MCP_STATUS_POISONED == -6);
    CHECK(MCP_STATUS_WOULD_BLOCK == 2);
    CHECK(MCP_STATUS_END_OF_STREAM == 3);
    CHECK(MCP_STATUS_IO_ERROR == -7);
    CHECK(MCP_STATUS_BROKEN_PIPE == -8);
    CHECK(MCP_STATUS_TIMED_OUT == -9);
    CHECK(MCP_STATUS_CLOSED == -10);
    CHECK(MCP_STATUS_SPAWN_FAILED == -11);
    CHECK(MCP_STATUS_BUFFER_TOO_SMALL == -12);
    CHECK(MCP_STATUS_INVALID_PARAMS == -13 && MCP_STATUS_INVALID_TEXT == -14 &&
          MCP_STATUS_UNKNOWN_FLAGS == -15 && MCP_STATUS_EMPTY_PROGRAM == -16 &&
          MCP_STATUS_RESTARTING == -17);
    CHECK(MCP_END_NONE == 0 && MCP_END_CLOSED_BY_HOST == 1 && MCP_END_PEER_CLOSED == 2 &&
          MCP_END_WRITE_REFUSED == 3 && MCP_END_SERVER_EXITED == 4 && MCP_END_SERVER_KILLED == 5);
    CHECK(MCP_MESSAGE_JSON == 0 && MCP_MESSAGE_PARSE_ERROR == 1 && MCP_MESSAGE_TOO_LONG == 2 &&
          MCP_MESSAGE_INVALID_JSONRPC == 3);
    CHECK(MCP_RPC_NONE == 0 && MCP_RPC_REQUEST == 1 && MCP_RPC_NOTIFICATION == 2 && MCP_RPC_RESPONSE == 3 &&
          MCP_RPC_ERROR == 4 && MCP_RPC_BATCH == 5);
    CHECK(MCP_READER_SKIP_INVALID == 1 && MCP_READER_JSONRPC == 2 && MCP_ENCODE_ASCII == 1);
    CHECK(sizeof(McpStatus) == 4);
#if defined(MCP_STDIO_HAS_POSIX_IO)
    CHECK(MCP_ENV_DEFAULT == 0 && MCP_ENV_INHERIT == 1 && MCP_ENV_CLEAR == 2);
    CHECK(MCP_STDERR_EVENTS == 0 && MCP_STDERR_INHERIT == 1 && MCP_STDERR_DISCARD == 2);
    CHECK(MCP_TRANSPORT_BORROW_FDS == 1 && MCP_TRANSPORT_GUARD_STDOUT == 2 &&
          MCP_TRANSPORT_KILL_ON_HOST_EXIT == 4 && MCP_TRANSPORT_MAX_POLL_FDS == 5);
    CHECK(sizeof(McpEnvMode) == 4 && sizeof(McpStderrMode) == 4);
#endif
    CHECK(MCP_EVENT_STDERR == 6 && MCP_EVENT_CLOSED == 7 && MCP_EVENT_PROGRESS == 8 &&
          MCP_EVENT_SUBSCRIPTION == 9 && MCP_EVENT_SUBSCRIPTION_ENDED == 10 &&
          MCP_EVENT_RESTARTED == 11);
    CHECK(MCP_REQUEST_PROGRESS == 1 && MCP_REQUEST_RESET_ON_PROGRESS == 2);

    for (i = 0; i < sizeof known / sizeof known[0]; i++) {
        const char *s = mcp_status_str(known[i]);
        known_str[i] = s;
        if (!CHECK(s != NULL && s[0] != '\0')) {
            printf("    status %ld\n", (long)known[i]);
            continue;
        }
        /* a static string: same result every time, still there after other calls */
        CHECK(mcp_status_str(known[i]) == s || strcmp(mcp_status_str(known[i]), s) == 0);
    }
    /* every known status has its own text */
    for (i = 0; i < sizeof known / sizeof known[0]; i++) {
        for (j = i + 1; j < sizeof known / sizeof known[0]; j++) {
            if (known_str[i] != NULL && known_str[j] != NULL &&
                !CHECK(strcmp(known_str[i], known_str[j]) != 0)) {
                printf("    statuses %ld and %ld share \"%s\"\n", (long)known[i], (long)known[j], known_str[i]);
            }
        }
    }
    /* unknown codes get a generic string, never NULL, and not a known status's text */
    for (i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
        const char *s = mcp_status_str(unknown[i]);
        if (!CHECK(s != NULL && s[0] != '\0')) {
            printf("    unknown status %ld\n", (long)unknown[i]);
            continue;
        }
        for (j = 0; j < sizeof known / sizeof known[0]; j++) {
            if (known_str[j] != NULL && !CHECK(strcmp(s, known_str[j]) != 0)) {
                printf("    unknown status %ld reads like status %ld: \"%s\"\n", (long)unknown[i], (long)known[j], s);
            }
        }
    }
}

static void test_version(void)
{
    const char *v = mcp_stdio_version();
    char from_macros[64];

    if (CHECK(v != NULL)) {
        if (!CHECK(strcmp(v, MCP_STDIO_VERSION) == 0)) {
            printf("    mcp_stdio_version() = \"%s\", MCP_STDIO_VERSION = \"%s\"\n", v, MCP_STDIO_VERSION);
        }
        CHECK(mcp_stdio_version() == v || strcmp(mcp_stdio_version(), v) == 0);
    }
    sprintf(from_macros, "%lu.%lu.%lu", (unsigned long)MCP_STDIO_VERSION_MAJOR,
            (unsigned long)MCP_STDIO_VERSION_MINOR, (unsigned long)MCP_STDIO_VERSION_PATCH);
    if (!CHECK(strcmp(from_macros, MCP_STDIO_VERSION) == 0)) {
        printf("    MAJOR.MINOR.PATCH = \"%s\", MCP_STDIO_VERSION = \"%s\"\n", from_macros, MCP_STDIO_VERSION);
    }
#ifdef MCP_TEST_CRATE_VERSION
    if (!CHECK(strcmp(MCP_STDIO_VERSION, MCP_TEST_CRATE_VERSION) == 0)) {
        printf("    header MCP_STDIO_VERSION = \"%s\", crate version = \"%s\"\n", MCP_STDIO_VERSION,
               MCP_TEST_CRATE_VERSION);
    }
#endif
}

static void test_abi_version(void)
{
    uint32_t abi = mcp_stdio_abi_version();
    if (!CHECK(abi == (uint32_t)MCP_STDIO_ABI_VERSION)) {
        printf("    mcp_stdio_abi_version() = %lu, MCP_STDIO_ABI_VERSION = %lu\n", (unsigned long)abi,
               (unsigned long)MCP_STDIO_ABI_VERSION);
    }
    /* while the crate is 0.x the ABI version is 0 */
    if (MCP_STDIO_VERSION_MAJOR == 0) {
        CHECK(MCP_STDIO_ABI_VERSION == 0);
    }
}

/* The SIMD level: one of the names, and what MCP_STDIO_SIMD asks for when
 * it asks for the portable kernels (always there). */
static void test_simd_level(void)
{
    static const char *const names[] = {"avx512", "avx2", "sse2", "neon", "scalar"};
    const char *level = mcp_stdio_simd_level();
    const char *asked = getenv("MCP_STDIO_SIMD");
    int known = 0;
    size_t i;
    for (i = 0; level != NULL && i < sizeof names / sizeof names[0]; i++) {
        known |= strcmp(level, names[i]) == 0;
    }
    if (!CHECK(known)) {
        printf("    mcp_stdio_simd_level() = \"%s\"\n", level != NULL ? level : "(NULL)");
    }
    CHECK(mcp_stdio_simd_level() == level); /* the same static string */
    if (asked != NULL && strcmp(asked, "portable") == 0) {
        CHECK(level != NULL && strcmp(level, "avx2") != 0 && strcmp(level, "avx512") != 0);
    }
}

int main(void)
{
    test_status_strings();
    test_version();
    test_abi_version();
    test_simd_level();
    return check_summary();
}
