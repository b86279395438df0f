// mcp::LineReader: framing through the C++ wrapper (seed example, chunking,
// CRLF, too-long lines, flags, JSON-RPC kinds, feed overloads).
#include "mcp_stdio.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace {

using mcp::LineReader;
using mcp::MessageKind;
using mcp::ReaderFlags;
using mcp::RpcKind;

// An item copied out of the reader while its data() was still valid.
struct Item {
    MessageKind kind;
    RpcKind rpc;
    std::string data;
    std::size_t size;

    bool operator==(const Item &o) const {
        return kind == o.kind && rpc == o.rpc && data == o.data && size == o.size;
    }
};

std::ostream &operator<<(std::ostream &os, const Item &it) {
    return os << "{" << it.kind << ", " << it.rpc << ", \"" << it.data << "\", " << it.size << "}";
}

Item json(std::string s, RpcKind rpc = RpcKind::None) {
    const std::size_t n = s.size();
    return Item{MessageKind::Json, rpc, std::move(s), n};
}

Item parse_error(std::string s) {
    const std::size_t n = s.size();
    return Item{MessageKind::ParseError, RpcKind::None, std::move(s), n};
}

std::vector<Item> drain(LineReader &r) {
    std::vector<Item> items;
    while (auto m = r.next()) {
        items.push_back(Item{m->kind(), m->rpc_kind(), std::string(m->data()), m->size()});
    }
    return items;
}

// Feeds `input` in chunks of `chunk` bytes, taking items after every feed, then finishes.
// The size of a TooLong item is how much had arrived when the reader gave up, so it
// depends on the chunking: it is checked against the limit and the line, then zeroed.
std::vector<Item> read_chunked(LineReader &r, std::string_view input, std::size_t chunk,
                               std::size_t limit, std::size_t too_long_line) {
    std::vector<Item> items;
    for (std::size_t i = 0; i < input.size(); i += chunk) {
        r.feed(input.substr(i, chunk));
        for (auto &it : drain(r)) items.push_back(std::move(it));
    }
    r.finish();
    for (auto &it : drain(r)) items.push_back(std::move(it));
    for (auto &it : items) {
        if (it.kind == MessageKind::TooLong) {
            EXPECT_GT(it.size, limit) << "chunk size " << chunk;
            EXPECT_LE(it.size, too_long_line) << "chunk size " << chunk;
            it.size = 0;
        }
    }
    return items;
}

TEST(Reader, SeedExample) {
    LineReader r;
    r.feed(R"({"id":1})" "\n" R"({"id")");
    auto m = r.next();
    ASSERT_TRUE(m.has_value());
    EXPECT_EQ(m->kind(), MessageKind::Json);
    EXPECT_EQ(m->rpc_kind(), RpcKind::None);
    EXPECT_EQ(m->data(), R"({"id":1})");
    EXPECT_EQ(m->size(), 8u);
    EXPECT_FALSE(r.next().has_value());
    EXPECT_EQ(r.buffered_len(), 5u);

    r.feed(R"(:2})" "\n" R"({"id":3})" "\nnot json\n");
    EXPECT_EQ(drain(r), (std::vector<Item>{json(R"({"id":2})"), json(R"({"id":3})"),
                                           parse_error("not json")}));

    r.feed(R"({"id":4})");
    EXPECT_FALSE(r.next().has_value());
    EXPECT_EQ(r.buffered_len(), 8u);
    r.finish();
    EXPECT_EQ(drain(r), std::vector<Item>{json(R"({"id":4})")});
    EXPECT_EQ(r.buffered_len(), 0u);
}

const std::string_view kStream =
    "\xEF\xBB\xBF{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\"}\r\n"
    "\n"
    "  {\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\t\r\n"
    "not json\n"
    "[1,2,\"\xC3\xA9\\n\"]\n"
    "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n"
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n"
    "{\"unterminated\":true}";

TEST(Reader, ChunkingNeverChangesTheItems) {
    const std::size_t limit = 64, too_long_line = 68;
    LineReader whole(ReaderFlags::JsonRpc, limit);
    const std::vector<Item> expected = read_chunked(whole, kStream, kStream.size(), limit, too_long_line);
    ASSERT_EQ(expected.size(), 7u);
    EXPECT_EQ(expected[0], json(R"({"jsonrpc":"2.0","id":1,"method":"initialize"})", RpcKind::Request));
    EXPECT_EQ(expected[1],
              json(R"({"jsonrpc":"2.0","method":"notifications/initialized"})", RpcKind::Notification));
    EXPECT_EQ(expected[2].kind, MessageKind::ParseError);
    EXPECT_EQ(expected[3].kind, MessageKind::InvalidJsonRpc);
    EXPECT_EQ(expected[4].kind, MessageKind::TooLong);
    EXPECT_EQ(expected[5].rpc, RpcKind::Response);
    EXPECT_EQ(expected[6].kind, MessageKind::InvalidJsonRpc);
    EXPECT_EQ(expected[6].data, R"({"unterminated":true})");

    for (std::size_t chunk : {1u, 2u, 3u, 7u, 64u}) {
        LineReader r(ReaderFlags::JsonRpc, limit);
        EXPECT_EQ(read_chunked(r, kStream, chunk, limit, too_long_line), expected) << "chunk size " << chunk;
    }
}

TEST(Reader, CrLfIsTrimmed) {
    LineReader r;
    r.feed("{\"id\":1}\r\n  \"s\" \r\n\r\n{\"id\":2}\r");
    r.finish();
    EXPECT_EQ(drain(r), (std::vector<Item>{json(R"({"id":1})"), json(R"("s")"), json(R"({"id":2})")}));
}

TEST(Reader, TooLongLineIsReportedAndReadingContinues) {
    LineReader r;
    r.set_max_line_len(16);
    r.feed(std::string(40, 'x') + "\n{\"id\":1}\n");
    auto m = r.next();
    ASSERT_TRUE(m);
    EXPECT_EQ(m->kind(), MessageKind::TooLong);
    EXPECT_TRUE(m->data().empty());
    EXPECT_GT(m->size(), 16u);
    EXPECT_LE(m->size(), 40u);
    m = r.next();
    ASSERT_TRUE(m);
    EXPECT_EQ(m->kind(), MessageKind::Json);
    EXPECT_EQ(m->data(), R"({"id":1})");
    EXPECT_FALSE(r.next());
}

TEST(Reader, TooLongAcrossFeedsIsDroppedThroughItsNewline) {
    LineReader r;
    r.set_max_line_len(8);
    r.feed("[1,2,3,4,5,6");
    r.feed(",7,8,9]");  // still the same line: dropped
    r.feed("\n[0]\n");
    const auto items = drain(r);
    ASSERT_EQ(items.size(), 2u);
    EXPECT_EQ(items[0].kind, MessageKind::TooLong);
    EXPECT_EQ(items[0].data, "");
    EXPECT_EQ(items[1], json("[0]"));
}

TEST(Reader, LineAtTheLimitIsAccepted) {
    LineReader r;
    r.set_max_line_len(8);
    r.feed("{\"id\":1}\n");
    EXPECT_EQ(drain(r), std::vector<Item>{json(R"({"id":1})")});
}

TEST(Reader, NoLimit) {
    LineReader r;
    r.set_max_line_len(16);
    r.set_max_line_len(LineReader::no_limit);
    const std::string big = "\"" + std::string(1 << 20, 'a') + "\"";
    r.feed(big + "\n");
    auto m = r.next();
    ASSERT_TRUE(m);
    EXPECT_EQ(m->kind(), MessageKind::Json);
    EXPECT_EQ(m->size(), big.size());
    EXPECT_EQ(m->data(), big);
}

TEST(Reader, DefaultLimitIs64MiB) {
    EXPECT_EQ(LineReader::default_max_line_len, std::size_t{64} << 20);
}

TEST(Reader, SkipInvalidDropsBadLinesButNotTooLong) {
    LineReader r(ReaderFlags::SkipInvalid | ReaderFlags::JsonRpc, 48);
    r.feed("garbage\n{\"jsonrpc\":\"2.0\",\"method\":\"ping\",\"id\":1}\n[1]\n");
    r.feed(std::string(60, ' ') + "1\n{\"jsonrpc\":\"2.0\",\"method\":\"n\"}\n");
    const auto items = drain(r);
    ASSERT_EQ(items.size(), 3u);
    EXPECT_EQ(items[0], json(R"({"jsonrpc":"2.0","method":"ping","id":1})", RpcKind::Request));
    EXPECT_EQ(items[1].kind, MessageKind::TooLong);
    EXPECT_EQ(items[2], json(R"({"jsonrpc":"2.0","method":"n"})", RpcKind::Notification));
}

TEST(Reader, FlagsCanBeChangedBetweenLines) {
    LineReader r;
    r.feed("[1]\n[2]\n");
    EXPECT_EQ(r.next()->rpc_kind(), RpcKind::None);
    r.set_flags(ReaderFlags::JsonRpc);
    EXPECT_EQ(r.next()->kind(), MessageKind::InvalidJsonRpc);
    r.set_flags(ReaderFlags::None);
    r.feed("{\"jsonrpc\":\"2.0\",\"method\":\"n\"}\n");
    EXPECT_EQ(drain(r), std::vector<Item>{json(R"({"jsonrpc":"2.0","method":"n"})")});
}

struct KindCase {
    const char *line;
    MessageKind kind;
    RpcKind rpc;
};

TEST(Reader, JsonRpcKinds) {
    const KindCase cases[] = {
        {R"({"jsonrpc":"2.0","id":1,"method":"tools/list"})", MessageKind::Json, RpcKind::Request},
        {R"({"jsonrpc":"2.0","id":"abc","method":"ping","params":{}})", MessageKind::Json, RpcKind::Request},
        {R"({"jsonrpc":"2.0","method":"notifications/initialized"})", MessageKind::Json,
         RpcKind::Notification},
        {R"({"jsonrpc":"2.0","id":1,"result":{}})", MessageKind::Json, RpcKind::Response},
        {R"({"jsonrpc":"2.0","id":"x","result":null})", MessageKind::Json, RpcKind::Response},
        {R"({"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}})",
         MessageKind::Json, RpcKind::Error},
        {R"({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}})",
         MessageKind::Json, RpcKind::Error},
        {R"([{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","method":"b"}])", MessageKind::Json,
         RpcKind::Batch},
        {R"({"id":1,"method":"m"})", MessageKind::InvalidJsonRpc, RpcKind::None},       // no "jsonrpc"
        {R"({"jsonrpc":"1.0","id":1,"method":"m"})", MessageKind::InvalidJsonRpc, RpcKind::None},
        {R"({"jsonrpc":"2.0","id":null,"method":"m"})", MessageKind::InvalidJsonRpc, RpcKind::None},
        {R"([])", MessageKind::InvalidJsonRpc, RpcKind::None},
        {R"(42)", MessageKind::InvalidJsonRpc, RpcKind::None},
        {R"({"jsonrpc":"2.0",)", MessageKind::ParseError, RpcKind::None},
    };
    for (const auto &c : cases) {
        LineReader r(ReaderFlags::JsonRpc);
        r.feed(std::string(c.line) + "\n");
        auto m = r.next();
        ASSERT_TRUE(m) << c.line;
        EXPECT_EQ(m->kind(), c.kind) << c.line;
        EXPECT_EQ(m->rpc_kind(), c.rpc) << c.line;
        EXPECT_EQ(m->data(), c.line);
        EXPECT_EQ(m->is_json(), c.kind == MessageKind::Json);
        EXPECT_FALSE(r.next()) << c.line;

        LineReader plain;  // without the flag: no classification
        plain.feed(std::string(c.line) + "\n");
        auto p = plain.next();
        ASSERT_TRUE(p);
        EXPECT_EQ(p->rpc_kind(), RpcKind::None);
        EXPECT_EQ(p->kind(), c.kind == MessageKind::ParseError ? MessageKind::ParseError : MessageKind::Json);
    }
}

TEST(Reader, FinishKeepsTheReaderUsable) {
    LineReader r;
    r.finish();  // nothing buffered: nothing happens
    EXPECT_FALSE(r.next());
    r.feed("[1]");
    r.finish();
    r.feed("[2]");
    r.finish();
    EXPECT_EQ(drain(r), (std::vector<Item>{json("[1]"), json("[2]")}));
}

TEST(Reader, FeedOverloads) {
    LineReader r;
    const char raw[] = "[1]\n";
    r.feed(raw, sizeof raw - 1);                                      // (const void*, size_t)
    r.feed(std::string("[2]\n"));                                      // std::string
    r.feed(std::vector<char>{'[', '3', ']', '\n'});                    // contiguous char container
    r.feed(std::vector<std::uint8_t>{'[', '4', ']', '\n'});            // bytes
    r.feed(std::array<std::byte, 4>{std::byte{'['}, std::byte{'5'}, std::byte{']'}, std::byte{'\n'}});
    r.feed(nullptr, 0);                                                // empty chunk
    r.feed(std::string_view());
    EXPECT_EQ(drain(r), (std::vector<Item>{json("[1]"), json("[2]"), json("[3]"), json("[4]"), json("[5]")}));
}

TEST(Reader, DataBorrowsUntilTheNextCallSoCopiesSurvive) {
    LineReader r;
    r.feed("{\"keep\":1}\n");
    std::string kept;
    {
        auto m = r.next();
        ASSERT_TRUE(m);
        kept = std::string(m->data());
    }
    r.feed(std::string(4096, ' ') + "[2]\n");  // may reallocate the reader's buffer
    EXPECT_EQ(kept, R"({"keep":1})");
    EXPECT_EQ(r.next()->data(), "[2]");
}

TEST(Reader, ConstructorWithFlagsAndLimit) {
    LineReader r(ReaderFlags::JsonRpc, 10);
    r.feed("{\"jsonrpc\":\"2.0\",\"method\":\"n\"}\n[0]\n");
    EXPECT_EQ(r.next()->kind(), MessageKind::TooLong);
    EXPECT_EQ(r.next()->kind(), MessageKind::InvalidJsonRpc);
}

TEST(Flags, BitOperations) {
    constexpr auto both = ReaderFlags::SkipInvalid | ReaderFlags::JsonRpc;
    static_assert(static_cast<std::uint32_t>(both) == (MCP_READER_SKIP_INVALID | MCP_READER_JSONRPC));
    static_assert(mcp::has(both, ReaderFlags::JsonRpc));
    static_assert(!mcp::has(both & ~ReaderFlags::JsonRpc, ReaderFlags::JsonRpc));
    static_assert(!mcp::has(ReaderFlags::None, ReaderFlags::SkipInvalid));
    auto f = ReaderFlags::None;
    f |= ReaderFlags::SkipInvalid;
    EXPECT_EQ(f, ReaderFlags::SkipInvalid);
    f ^= ReaderFlags::SkipInvalid;
    EXPECT_EQ(f, ReaderFlags::None);
    static_assert(static_cast<std::uint32_t>(mcp::EncodeFlags::Ascii) == MCP_ENCODE_ASCII);
}

}  // namespace
