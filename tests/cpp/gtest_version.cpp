// Version helpers: the header's and the library's versions agree.
#include "mcp_stdio.hpp"

#include <gtest/gtest.h>

#include <string>
#include <cstdint>
#include <string_view>

namespace {

TEST(Version, LibraryMatchesHeader) {
    EXPECT_EQ(mcp::version(), MCP_STDIO_VERSION);
    EXPECT_EQ(mcp::version(), mcp::header_version);
    EXPECT_EQ(mcp::version(), std::to_string(MCP_STDIO_VERSION_MAJOR) + "." +
                                  std::to_string(MCP_STDIO_VERSION_MINOR) + "." +
                                  std::to_string(MCP_STDIO_VERSION_PATCH));
}

TEST(Version, AbiCompatible) {
    EXPECT_TRUE(mcp::abi_compatible());
    EXPECT_EQ(mcp::abi_version(), static_cast<std::uint32_t>(MCP_STDIO_ABI_VERSION));
}

static_assert(mcp::header_version == MCP_STDIO_VERSION);

}  // namespace
