// POSIX I/O through the wrapper: LineReader::read_fd and mcp::write_all over
// pipes (data, would-block, end of stream, errors with errno, broken pipe).
#include "mcp_stdio.hpp"

#include <gtest/gtest.h>

#if defined(MCP_STDIO_HAS_POSIX_IO)

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <exception>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

namespace {

using mcp::LineReader;
using mcp::ReadState;

// A pipe whose ends close themselves.
struct Pipe {
    int read_end = -1;
    int write_end = -1;

    Pipe() {
        int fds[2];
        if (::pipe(fds) != 0) throw std::system_error(errno, std::generic_category(), "pipe");
        read_end = fds[0];
        write_end = fds[1];
    }
    ~Pipe() {
        close_read();
        close_write();
    }
    Pipe(const Pipe &) = delete;
    Pipe &operator=(const Pipe &) = delete;

    void close_read() {
        if (read_end >= 0) ::close(std::exchange(read_end, -1));
    }
    void close_write() {
        if (write_end >= 0) ::close(std::exchange(write_end, -1));
    }
};

// Not a file descriptor: read(2) and write(2) fail with EBADF.
constexpr int kBadFd = -1;

TEST(Fd, WriteAllThenReadFd) {
    Pipe p;
    const std::string line = mcp::encode(R"({"jsonrpc": "2.0", "id": 1, "method": "ping"})");
    mcp::write_all(p.write_end, line);
    mcp::write_all(p.write_end, "not json\n[1", 11);
    LineReader r(mcp::ReaderFlags::JsonRpc);
    const mcp::ReadResult res = r.read_fd(p.read_end);
    EXPECT_EQ(res.state, ReadState::Data);
    EXPECT_FALSE(res.end_of_stream());
    EXPECT_EQ(res.bytes, line.size() + 11u);
    auto m = r.next();
    ASSERT_TRUE(m);
    EXPECT_EQ(m->rpc_kind(), mcp::RpcKind::Request);
    EXPECT_EQ(m->data(), R"({"jsonrpc":"2.0","id":1,"method":"ping"})");
    m = r.next();
    ASSERT_TRUE(m);
    EXPECT_EQ(m->kind(), mcp::MessageKind::ParseError);
    EXPECT_FALSE(r.next());
    EXPECT_EQ(r.buffered_len(), 2u);

    p.close_write();
    const mcp::ReadResult eof = r.read_fd(p.read_end);
    EXPECT_EQ(eof.state, ReadState::EndOfStream);
    EXPECT_TRUE(eof.end_of_stream());
    EXPECT_EQ(eof.bytes, 0u);
    r.finish();
    m = r.next();
    ASSERT_TRUE(m);
    EXPECT_EQ(m->data(), "[1");
    EXPECT_EQ(m->kind(), mcp::MessageKind::ParseError);
}

TEST(Fd, NonBlockingEmptyPipeWouldBlock) {
    Pipe p;
    ASSERT_EQ(::fcntl(p.read_end, F_SETFL, ::fcntl(p.read_end, F_GETFL) | O_NONBLOCK), 0);
    LineReader r;
    const mcp::ReadResult res = r.read_fd(p.read_end);
    EXPECT_EQ(res.state, ReadState::WouldBlock);
    EXPECT_TRUE(res.would_block());
    EXPECT_EQ(res.bytes, 0u);
    mcp::write_all(p.write_end, "[7]\n");
    EXPECT_EQ(r.read_fd(p.read_end).state, ReadState::Data);
    EXPECT_EQ(r.next()->data(), "[7]");
}

TEST(Fd, ReadErrorCarriesErrno) {
    LineReader r;
    try {
        (void)r.read_fd(kBadFd);
        FAIL() << "no exception";
    } catch (const mcp::Error &e) {
        EXPECT_EQ(e.status(), mcp::Status::IoError);
        EXPECT_EQ(e.code(), MCP_STATUS_IO_ERROR);
        EXPECT_EQ(e.os_error(), std::errc::bad_file_descriptor);
        EXPECT_EQ(&e.os_error().category(), &std::system_category());
        const std::string what = e.what();
        EXPECT_NE(what.find("read_fd"), std::string::npos) << what;
        EXPECT_NE(what.find("errno " + std::to_string(EBADF)), std::string::npos) << what;
    }
    r.feed("[1]\n");  // the reader is still fine
    EXPECT_EQ(r.next()->data(), "[1]");
}

TEST(Fd, ReadFdOnAMovedFromReaderThrows) {
    Pipe p;
    LineReader a;
    LineReader b(std::move(a));
    try {
        (void)a.read_fd(p.read_end);
        FAIL() << "no exception";
    } catch (const mcp::Error &e) {
        EXPECT_EQ(e.status(), mcp::Status::NullArgument);
        EXPECT_FALSE(e.os_error());
    }
}

TEST(Fd, WriteToAClosedPipeThrowsBrokenPipeWithoutSigpipe) {
    Pipe p;
    p.close_read();
    try {
        mcp::write_all(p.write_end, "[1]\n");
        FAIL() << "no exception";
    } catch (const mcp::Error &e) {
        EXPECT_EQ(e.status(), mcp::Status::BrokenPipe);
        EXPECT_EQ(e.code(), std::errc::broken_pipe);  // portable condition
        EXPECT_EQ(e.code(), MCP_STATUS_BROKEN_PIPE);
    }
    // Still alive: SIGPIPE did not kill the test.
}

TEST(Fd, WriteWithATimeoutReturnsWhatAPeerThatDoesNotReadTook) {
    using namespace std::chrono_literals;
    Pipe p;
    const std::string line = mcp::encode("[\"" + std::string(1 << 20, 'w') + "\"]");
    const std::size_t written = mcp::write_all(p.write_end, line, 30ms);
    EXPECT_GT(written, 0u);
    EXPECT_LT(written, line.size());
    EXPECT_EQ(mcp::write_all(p.write_end, std::string_view(line).substr(written), 0ms), 0u);
    // A reader drains the pipe: the rest goes through, and the line arrives whole.
    std::string received;
    std::thread reader([&p, &received] {
        char chunk[65536];
        for (ssize_t n; (n = ::read(p.read_end, chunk, sizeof chunk)) > 0;) received.append(chunk, n);
    });
    EXPECT_EQ(mcp::write_all(p.write_end, std::string_view(line).substr(written), -1ms),
              line.size() - written);
    p.close_write();
    reader.join();
    EXPECT_EQ(received, line);
}

TEST(Fd, WriteWithATimeoutThrowsOnABrokenPipe) {
    using namespace std::chrono_literals;
    Pipe p;
    p.close_read();
    try {
        (void)mcp::write_all(p.write_end, "[1]\n", 1000ms);
        FAIL() << "no exception";
    } catch (const mcp::Error &e) {
        EXPECT_EQ(e.status(), mcp::Status::BrokenPipe);
    }
    EXPECT_EQ(mcp::make_error_code(mcp::Status::TimedOut), std::errc::timed_out);
}

TEST(Fd, WriteErrorCarriesErrno) {
    try {
        mcp::write_all(kBadFd, "[1]\n");
        FAIL() << "no exception";
    } catch (const mcp::Error &e) {
        EXPECT_EQ(e.status(), mcp::Status::IoError);
        EXPECT_EQ(e.os_error(), std::errc::bad_file_descriptor);
    }
    EXPECT_NO_THROW(mcp::write_all(kBadFd, std::string_view()));  // nothing to write
}

TEST(Fd, ManyMessagesThroughAPipe) {
    // More than the pipe holds (64 KiB): the writer blocks until the reader reads.
    constexpr int kMessages = 5000;
    Pipe p;
    std::string writer_error;
    std::thread writer([&p, &writer_error] {
        try {
            for (int i = 0; i < kMessages; ++i) {
                const std::string json = R"({"jsonrpc": "2.0", "method": "n", "params": {"i": )" +
                                         std::to_string(i) + R"(, "pad": ")" + std::string(40, 'x') + "\"}}";
                mcp::write_all(p.write_end, mcp::encode(json));
            }
        } catch (const std::exception &e) {
            writer_error = e.what();
        }
        p.close_write();
    });
    // Joins the writer however this test ends (closing the read end first
    // unblocks it if an assertion stopped the reading early).
    struct Join {
        Pipe &pipe;
        std::thread &thread;
        ~Join() {
            pipe.close_read();
            thread.join();
        }
    } join{p, writer};

    LineReader r(mcp::ReaderFlags::JsonRpc);
    std::vector<std::string> got;
    for (;;) {
        const mcp::ReadResult res = r.read_fd(p.read_end);
        ASSERT_FALSE(res.would_block()) << "a blocking fd cannot would-block";
        ASSERT_EQ(res.bytes > 0, res.state == ReadState::Data);
        if (res.end_of_stream()) r.finish();
        while (auto m = r.next()) {
            EXPECT_EQ(m->rpc_kind(), mcp::RpcKind::Notification);
            got.emplace_back(m->data());
        }
        if (res.end_of_stream()) break;
    }
    EXPECT_EQ(writer_error, "");
    ASSERT_EQ(got.size(), static_cast<std::size_t>(kMessages));
    EXPECT_NE(got.front().find("\"i\":0,"), std::string::npos);
    EXPECT_NE(got.back().find("\"i\":" + std::to_string(kMessages - 1) + ","), std::string::npos);
}

}  // namespace

#else
TEST(Fd, NotAvailableOnThisPlatform) { GTEST_SKIP() << "mcp_stdio.h has no MCP_STDIO_HAS_POSIX_IO"; }
#endif
