// mcp::encode / mcp::encode_buffer: one JSON text to one stdio line.
#include "mcp_stdio.hpp"

#include <gtest/gtest.h>

#include <string>
#include <string_view>

namespace {

using mcp::EncodeFlags;

TEST(Encode, SeedExample) {
    EXPECT_EQ(mcp::encode(R"({"a": "line1\nline2", "id": 1})"), "{\"a\":\"line1\\nline2\",\"id\":1}\n");
}

TEST(Encode, CompactsWhitespaceOutsideStringsOnly) {
    EXPECT_EQ(mcp::encode(" \r\n\t{ \"k\" : [ 1 , 2.50 , \"a b\" ] , \"t\" : true }\n "),
              "{\"k\":[1,2.50,\"a b\"],\"t\":true}\n");
    EXPECT_EQ(mcp::encode("null"), "null\n");
}

TEST(Encode, KeepsNonAsciiByDefaultAndEscapesLineSeparators) {
    // é, U+1F600, and a raw U+2028 inside a string.
    EXPECT_EQ(mcp::encode("\"\xC3\xA9\xF0\x9F\x98\x80\xE2\x80\xA8\""),
              "\"\xC3\xA9\xF0\x9F\x98\x80\\u2028\"\n");
}

TEST(Encode, AsciiFlag) {
    EXPECT_EQ(mcp::encode("\"\xC3\xA9\xF0\x9F\x98\x80\"", EncodeFlags::Ascii), "\"\\u00e9\\ud83d\\ude00\"\n");
    const std::string line = mcp::encode("{\"name\": \"caf\xC3\xA9\"}", EncodeFlags::Ascii);
    EXPECT_EQ(line, "{\"name\":\"caf\\u00e9\"}\n");
    for (char c : line) EXPECT_GE(static_cast<unsigned char>(c), 0x0Au);
    for (char c : line) EXPECT_LT(static_cast<unsigned char>(c), 0x80u);
}

TEST(Encode, OutputIsOneLineTheReaderReadsBack) {
    const std::string line = mcp::encode("{\n  \"text\": \"a\\nb\",\n  \"id\": 7\n}\n");
    ASSERT_FALSE(line.empty());
    EXPECT_EQ(line.find('\n'), line.size() - 1);
    mcp::LineReader r;
    r.feed(line);
    auto m = r.next();
    ASSERT_TRUE(m);
    EXPECT_EQ(m->kind(), mcp::MessageKind::Json);
    EXPECT_EQ(std::string(m->data()) + "\n", line);
}

TEST(Encode, BufferVariantHasTheSameBytes) {
    const mcp::Buffer b = mcp::encode_buffer(R"({"a": "line1\nline2", "id": 1})");
    EXPECT_EQ(b.view(), "{\"a\":\"line1\\nline2\",\"id\":1}\n");
    EXPECT_EQ(b.size(), b.view().size());
    EXPECT_EQ(std::string(b.begin(), b.end()), b.str());
    EXPECT_EQ(mcp::encode_buffer("[\"\xC3\xA9\"]", EncodeFlags::Ascii).str(), "[\"\\u00e9\"]\n");
}

TEST(Encode, InvalidInputThrowsInvalidJson) {
    for (std::string_view bad : {std::string_view("{\"a\":"), std::string_view(""), std::string_view("   "),
                                 std::string_view("[1] [2]"), std::string_view("NaN"),
                                 std::string_view("\"\xFF\""), std::string_view("{'a':1}"),
                                 std::string_view("\"a\0b\"", 5)}) {
        try {
            (void)mcp::encode(bad);
            ADD_FAILURE() << "no exception for: " << bad;
        } catch (const mcp::Error &e) {
            EXPECT_EQ(e.status(), mcp::Status::InvalidJson) << bad;
            EXPECT_EQ(e.code(), MCP_STATUS_INVALID_JSON) << bad;
            EXPECT_NE(std::string(e.what()), "") << bad;
        }
        EXPECT_THROW((void)mcp::encode_buffer(bad), mcp::Error) << bad;
        EXPECT_THROW((void)mcp::encode(bad, EncodeFlags::Ascii), mcp::Error) << bad;
    }
}

TEST(Encode, UnknownFlagBitsThrowUnknownFlags) {
    try {
        (void)mcp::encode("1", static_cast<EncodeFlags>(1u << 9));
        FAIL() << "no exception";
    } catch (const mcp::Error &e) {
        EXPECT_EQ(e.status(), mcp::Status::UnknownFlags);
    }
}

TEST(Encode, NullStringViewIsEmptyInput) {
    EXPECT_THROW((void)mcp::encode(std::string_view()), mcp::Error);
}

}  // namespace
