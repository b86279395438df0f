// Errors: mcp::Error, the std::error_code integration, what throws what, and
// that a throwing call leaves everything usable and leak-free.
#include "mcp_stdio.hpp"

#include <gtest/gtest.h>

#include <initializer_list>
#include <sstream>
#include <stdexcept>
#include <string>
#include <system_error>
#include <type_traits>

namespace {

using mcp::LineReader;
using mcp::Status;

static_assert(std::is_base_of_v<std::runtime_error, mcp::Error>);
static_assert(std::is_base_of_v<std::system_error, mcp::Error>);
static_assert(std::is_error_code_enum_v<mcp::Status>);
static_assert(std::is_error_code_enum_v<McpStatus>);

// Runs `f`, which must throw mcp::Error, and returns the error.
template <class F>
mcp::Error thrown_by(F &&f) {
    try {
        f();
    } catch (const mcp::Error &e) {
        return e;
    }
    ADD_FAILURE() << "no mcp::Error thrown";
    return mcp::Error(Status::Ok);
}

TEST(Errors, EncodeErrorCarriesItsCode) {
    const mcp::Error e = thrown_by([] { (void)mcp::encode("{\"a\":"); });
    EXPECT_EQ(e.status(), Status::InvalidJson);
    EXPECT_EQ(e.code().value(), MCP_STATUS_INVALID_JSON);
    EXPECT_EQ(&e.code().category(), &mcp::category());
    EXPECT_EQ(e.code(), MCP_STATUS_INVALID_JSON);       // the C enum converts
    EXPECT_EQ(e.code(), Status::InvalidJson);           // so does the C++ one
    EXPECT_EQ(e.code(), mcp::make_error_code(Status::InvalidJson));
    EXPECT_NE(e.code(), MCP_STATUS_INVALID_ARGUMENT);
    EXPECT_NE(e.code(), std::errc::invalid_argument);
    EXPECT_TRUE(static_cast<bool>(e.code()));
    const std::string what = e.what();
    EXPECT_NE(what, "");
    EXPECT_NE(what.find("mcp::encode"), std::string::npos) << what;
    EXPECT_NE(what.find(mcp_status_str(MCP_STATUS_INVALID_JSON)), std::string::npos) << what;
}

TEST(Errors, CaughtAsStandardExceptions) {
    EXPECT_THROW((void)mcp::encode("x"), std::system_error);
    EXPECT_THROW((void)mcp::encode("x"), std::runtime_error);
    EXPECT_THROW((void)mcp::encode("x"), std::exception);
}

TEST(Errors, Category) {
    const std::error_category &cat = mcp::category();
    EXPECT_EQ(&cat, &mcp::category());  // one object
    EXPECT_STREQ(cat.name(), "mcp_stdio");
    const std::initializer_list<int> statuses = {
        MCP_STATUS_OK, MCP_STATUS_NO_MESSAGE, MCP_STATUS_WOULD_BLOCK, MCP_STATUS_END_OF_STREAM,
        MCP_STATUS_NULL_ARGUMENT, MCP_STATUS_INVALID_ARGUMENT, MCP_STATUS_INVALID_JSON,
        MCP_STATUS_OUT_OF_MEMORY, MCP_STATUS_PANIC, MCP_STATUS_POISONED, MCP_STATUS_IO_ERROR,
        MCP_STATUS_BROKEN_PIPE, 12345};
    for (int st : statuses) {
        EXPECT_EQ(cat.message(st), mcp_status_str(st));
        EXPECT_NE(cat.message(st), "");
    }
    const std::error_code ok = MCP_STATUS_OK;
    EXPECT_FALSE(ok);
    const std::error_code bad = Status::Poisoned;
    EXPECT_TRUE(bad);
    EXPECT_EQ(bad.message(), mcp_status_str(MCP_STATUS_POISONED));
    EXPECT_EQ(bad, MCP_STATUS_POISONED);
    EXPECT_NE(bad, Status::Panic);
    EXPECT_NE(bad, std::error_code(MCP_STATUS_POISONED, std::generic_category()));
}

TEST(Errors, PortableConditions) {
    EXPECT_EQ(std::error_code(Status::InvalidArgument), std::errc::invalid_argument);
    EXPECT_EQ(std::error_code(Status::NullArgument), std::errc::invalid_argument);
    EXPECT_EQ(std::error_code(Status::OutOfMemory), std::errc::not_enough_memory);
    EXPECT_NE(std::error_code(Status::InvalidJson), std::errc::invalid_argument);
}

TEST(Errors, InvalidArgumentsThrowAndChangeNothing) {
    LineReader r;
    r.set_max_line_len(8);
    r.set_flags(mcp::ReaderFlags::JsonRpc);

    const mcp::Error zero = thrown_by([&] { r.set_max_line_len(0); });
    EXPECT_EQ(zero.status(), Status::InvalidArgument);
    EXPECT_EQ(zero.code(), std::errc::invalid_argument);
    EXPECT_NE(std::string(zero.what()).find("set_max_line_len"), std::string::npos);

    const mcp::Error bits = thrown_by([&] { r.set_flags(static_cast<mcp::ReaderFlags>(1u << 7)); });
    EXPECT_EQ(bits.code(), MCP_STATUS_UNKNOWN_FLAGS);
    EXPECT_EQ(bits.code(), std::errc::invalid_argument); // still the portable condition

    // Still limit 8 and JSON-RPC classification.
    r.feed("[1,2,3,4,5]\n[1]\n");
    EXPECT_EQ(r.next()->kind(), mcp::MessageKind::TooLong);
    EXPECT_EQ(r.next()->kind(), mcp::MessageKind::InvalidJsonRpc);
    EXPECT_FALSE(r.next());
}

TEST(Errors, NoMessageIsNotAnError) {
    LineReader r;
    EXPECT_NO_THROW({ EXPECT_FALSE(r.next()); });
    r.feed("{\"partial\":");
    EXPECT_NO_THROW({ EXPECT_FALSE(r.next()); });
}

TEST(Errors, ManyThrowsLeakNothing) {
    // Run under valgrind --leak-check=full: every path that throws frees what it holds.
    for (int i = 0; i < 200; ++i) {
        EXPECT_THROW((void)mcp::encode("{\"a\": [1, 2,"), mcp::Error);
        EXPECT_THROW((void)mcp::encode_buffer("\"\xC0\""), mcp::Error);
        LineReader r;
        r.feed("{\"half\":");
        EXPECT_THROW(r.set_max_line_len(0), mcp::Error);
        LineReader moved(std::move(r));
        EXPECT_THROW(r.feed("x"), mcp::Error);
    }
}

TEST(Errors, ExceptionFromAConstructorFreesTheReader) {
    // The delegating constructor throws after the C reader exists: it must be freed.
    EXPECT_THROW(LineReader(mcp::ReaderFlags::JsonRpc, 0), mcp::Error);
    EXPECT_THROW(LineReader(static_cast<mcp::ReaderFlags>(0xF0)), mcp::Error);
}

TEST(Errors, StatusPrintsItsDescription) {
    std::ostringstream os;
    os << Status::InvalidJson;
    EXPECT_EQ(os.str(), mcp_status_str(MCP_STATUS_INVALID_JSON));
}

}  // namespace
