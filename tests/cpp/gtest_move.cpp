// Ownership: mcp::LineReader and mcp::Buffer are move-only RAII owners; a
// moved-from object is empty, safe to destroy, assign to, and query.
// (Leaks and double frees are caught by running the suite under valgrind.)
#include "mcp_stdio.hpp"

#include <gtest/gtest.h>

#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace {

using mcp::Buffer;
using mcp::LineReader;

static_assert(!std::is_copy_constructible_v<LineReader>);
static_assert(!std::is_copy_assignable_v<LineReader>);
static_assert(std::is_nothrow_move_constructible_v<LineReader>);
static_assert(std::is_nothrow_move_assignable_v<LineReader>);
static_assert(std::is_nothrow_destructible_v<LineReader>);
static_assert(std::is_nothrow_swappable_v<LineReader>);
static_assert(!std::is_convertible_v<LineReader, bool>);  // explicit operator bool

static_assert(!std::is_copy_constructible_v<Buffer>);
static_assert(!std::is_copy_assignable_v<Buffer>);
static_assert(std::is_nothrow_move_constructible_v<Buffer>);
static_assert(std::is_nothrow_move_assignable_v<Buffer>);
static_assert(std::is_nothrow_default_constructible_v<Buffer>);

// Moves its argument through an alias, so compilers do not flag the self-move.
template <class T>
void self_move_assign(T &x) {
    T &alias = x;
    x = std::move(alias);
}

void expect_empty(const LineReader &r) {
    EXPECT_FALSE(r);
    EXPECT_EQ(r.native_handle(), nullptr);
    EXPECT_EQ(r.buffered_len(), 0u);
}

TEST(Move, ConstructTakesTheStateAndEmptiesTheSource) {
    LineReader a;
    a.feed("[1]\n[2");
    McpLineReader *handle = a.native_handle();
    LineReader b(std::move(a));
    expect_empty(a);
    EXPECT_TRUE(b);
    EXPECT_EQ(b.native_handle(), handle);
    EXPECT_EQ(b.buffered_len(), 6u);
    EXPECT_EQ(b.next()->data(), "[1]");
    b.feed("]\n");
    EXPECT_EQ(b.next()->data(), "[2]");
}

TEST(Move, AssignFreesTheOldReaderAndTakesTheNewOne) {
    LineReader a;
    a.feed("[\"a\"");
    LineReader b;
    b.feed("[\"b\"]\n[\"b2\"");  // freed by the assignment: valgrind checks it
    b = std::move(a);
    expect_empty(a);
    EXPECT_EQ(b.buffered_len(), 4u);
    b.feed("]\n");
    EXPECT_EQ(b.next()->data(), "[\"a\"]");
    EXPECT_FALSE(b.next());
}

TEST(Move, SelfMoveAssignIsHarmless) {
    LineReader r;
    r.feed("[1]\n[2");
    self_move_assign(r);
    ASSERT_TRUE(r);
    EXPECT_EQ(r.buffered_len(), 6u);
    EXPECT_EQ(r.next()->data(), "[1]");

    LineReader empty;
    LineReader sink(std::move(empty));
    self_move_assign(empty);  // an empty one too
    expect_empty(empty);
}

TEST(Move, MovedFromReaderCanBeDestroyedAssignedAndReused) {
    LineReader a;
    LineReader b(std::move(a));
    a = LineReader();  // assigning to a moved-from reader revives it
    ASSERT_TRUE(a);
    a.feed("[3]\n");
    EXPECT_EQ(a.next()->data(), "[3]");

    LineReader c(std::move(b));
    b = std::move(a);  // empty <- live
    a = LineReader(std::move(c));
    expect_empty(c);
    EXPECT_TRUE(a);
    EXPECT_TRUE(b);
}

TEST(Move, UsingAMovedFromReaderThrowsInsteadOfCrashing) {
    LineReader a;
    LineReader b(std::move(a));
    try {
        a.feed("[1]\n");
        FAIL() << "feed on a moved-from reader did not throw";
    } catch (const mcp::Error &e) {
        EXPECT_EQ(e.status(), mcp::Status::NullArgument);
    }
    EXPECT_THROW((void)a.next(), mcp::Error);
    EXPECT_THROW(a.finish(), mcp::Error);
    EXPECT_THROW(a.set_flags(mcp::ReaderFlags::JsonRpc), mcp::Error);
    EXPECT_THROW(a.set_max_line_len(10), mcp::Error);
    expect_empty(a);
}

TEST(Move, Swap) {
    LineReader a;
    a.feed("[1");
    LineReader b;
    b.feed("[22");
    using std::swap;
    swap(a, b);
    EXPECT_EQ(a.buffered_len(), 3u);
    EXPECT_EQ(b.buffered_len(), 2u);
}

TEST(Move, ReadersInAVector) {
    std::vector<LineReader> readers;
    for (int i = 0; i < 50; ++i) {  // reallocations move the readers
        readers.emplace_back();
        readers.back().feed("[" + std::to_string(i) + "]\n");
    }
    for (int i = 0; i < 50; ++i) {
        auto m = readers[static_cast<std::size_t>(i)].next();
        ASSERT_TRUE(m);
        EXPECT_EQ(m->data(), "[" + std::to_string(i) + "]");
    }
}

TEST(Move, BufferOwnership) {
    Buffer a = mcp::encode_buffer("[1, 2]");
    EXPECT_EQ(a.view(), "[1,2]\n");
    const char *bytes = a.data();

    Buffer b(std::move(a));
    EXPECT_TRUE(a.empty());
    EXPECT_EQ(a.data(), nullptr);
    EXPECT_EQ(a.view(), "");
    EXPECT_EQ(b.data(), bytes);  // moved, not copied

    Buffer c = mcp::encode_buffer("3");
    c = std::move(b);  // frees "3\n"
    EXPECT_EQ(c.view(), "[1,2]\n");
    self_move_assign(c);
    EXPECT_EQ(c.view(), "[1,2]\n");

    McpBuffer raw = c.release();  // back to C: we free it ourselves
    EXPECT_TRUE(c.empty());
    EXPECT_EQ(std::string(reinterpret_cast<const char *>(raw.data), raw.len), "[1,2]\n");
    mcp_buffer_free(&raw);
    EXPECT_EQ(raw.data, nullptr);

    Buffer d;  // default: empty, destroying it is a no-op
    EXPECT_TRUE(d.empty());
    EXPECT_EQ(d.begin(), d.end());
}

}  // namespace
