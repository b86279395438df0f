// mcp::Transport: the memory transport (requests matched with their answers,
// ids, error responses, serving the peer's requests, invalid lines, deadlines,
// close, the output bound), move semantics, and, on POSIX, descriptor
// transports over a socketpair (1,000 requests, wake-ups from other threads,
// poll_fds in an event loop, borrowed descriptors).
#include "mcp_stdio.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#if defined(MCP_STDIO_HAS_POSIX_IO)
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>
#endif

namespace {

using namespace std::chrono_literals;
using mcp::Event;
using mcp::EventKind;
using mcp::RpcKind;
using mcp::Status;
using mcp::Transport;
using Clock = std::chrono::steady_clock;

static_assert(!std::is_copy_constructible_v<Transport>);
static_assert(!std::is_copy_assignable_v<Transport>);
static_assert(std::is_nothrow_move_constructible_v<Transport>);
static_assert(std::is_nothrow_move_assignable_v<Transport>);
static_assert(std::is_nothrow_destructible_v<Transport>);
static_assert(std::is_nothrow_swappable_v<Transport>);
static_assert(!std::is_convertible_v<Transport, bool>);  // explicit operator bool
static_assert(std::is_trivially_copyable_v<Event>);       // a value type of views
static_assert(std::is_trivially_copyable_v<mcp::Envelope>);
static_assert(std::is_nothrow_default_constructible_v<mcp::Envelope>);

// What an event said, copied out of the transport (its views are borrowed).
struct Got {
    EventKind kind;
    RpcKind rpc_kind;
    std::int64_t request_id;
    std::string data;
    std::string id, method, params, result, error;  // the envelope's members
};

Got copy(const Event &ev) {
    const mcp::Envelope &env = ev.envelope();
    return Got{ev.kind(),
               ev.rpc_kind(),
               ev.request_id(),
               std::string(ev.data()),
               std::string(env.id()),
               std::string(env.method()),
               std::string(env.params()),
               std::string(env.result()),
               std::string(env.error())};
}

// Every event ready now (next_event with a 0 ms timeout).
std::vector<Got> ready_events(Transport &t) {
    std::vector<Got> got;
    while (auto ev = t.next_event(0ms)) got.push_back(copy(*ev));
    return got;
}

// Runs `f`, which must throw mcp::Error, and returns its status.
template <class F>
Status status_thrown_by(F &&f) {
    try {
        f();
    } catch (const mcp::Error &e) {
        return e.status();
    }
    ADD_FAILURE() << "no mcp::Error thrown";
    return Status::Ok;
}

bool contains(std::string_view haystack, std::string_view needle) {
    return haystack.find(needle) != std::string_view::npos;
}

std::int64_t elapsed_ms(Clock::time_point since) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - since).count();
}

// ---------------------------------------------------------------------------
// The memory transport

// A request whose progress is followed: the token in its _meta, its
// notifications/progress as Progress events with its id; params that are an
// array refused.
TEST(Transport, RequestWithProgress) {
    Transport t;
    const std::int64_t id = t.request_with("tools/call", R"({"name":"build"})", 3000ms,
                                           mcp::RequestFlags::ResetOnProgress, 60000ms);
    EXPECT_EQ(id, 1);
    EXPECT_EQ(t.take_output(),
              "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":"
              "{\"_meta\":{\"progressToken\":1},\"name\":\"build\"}}\n");
    t.receive("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\","
              "\"params\":{\"progressToken\":1,\"progress\":1}}\n");
    auto ev = t.next_event(0ms);
    ASSERT_TRUE(ev);
    EXPECT_EQ(ev->kind(), EventKind::Progress);
    EXPECT_EQ(ev->request_id(), id);
    EXPECT_EQ(ev->envelope().params(), R"({"progressToken":1,"progress":1})");
    EXPECT_EQ(status_thrown_by([&] {
                  (void)t.request_with("m", "[1]", 0ms, mcp::RequestFlags::Progress);
              }),
              Status::InvalidParams);
    EXPECT_EQ(t.take_output(), "");
}

TEST(Transport, RequestResponseRoundTrip) {
    Transport t;
    ASSERT_TRUE(t);
    EXPECT_FALSE(t.closed());
    const std::int64_t ping = t.request("ping");
    const std::int64_t list = t.request("tools/list", R"({ "cursor" : "c1" })");
    EXPECT_EQ(ping, 1);
    EXPECT_EQ(list, 2);
    EXPECT_EQ(t.take_output(),
              "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n"
              "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\",\"params\":{\"cursor\":\"c1\"}}\n");
    EXPECT_EQ(t.take_output(), "");  // all taken
    EXPECT_FALSE(t.next_event(0ms));

    // Answers out of order, split anywhere.
    const std::string answers =
        "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"tools\":[]}}\r\n"
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n";
    t.receive(answers.substr(0, 10));
    EXPECT_FALSE(t.next_event(0ms));
    t.receive(std::vector<char>(answers.begin() + 10, answers.end()));

    auto ev = t.next_event(0ms);
    ASSERT_TRUE(ev);
    EXPECT_EQ(ev->kind(), EventKind::Response);
    EXPECT_EQ(ev->rpc_kind(), RpcKind::Response);
    EXPECT_EQ(ev->request_id(), list);
    EXPECT_EQ(ev->data(), R"({"jsonrpc":"2.0","id":2,"result":{"tools":[]}})");
    EXPECT_EQ(ev->size(), ev->data().size());
    EXPECT_EQ(ev->envelope().rpc_kind(), RpcKind::Response);
    EXPECT_EQ(ev->envelope().id(), "2");
    EXPECT_EQ(ev->envelope().result(), R"({"tools":[]})");
    EXPECT_EQ(ev->envelope().method(), "");
    EXPECT_EQ(ev->envelope().error(), "");
    EXPECT_EQ(ev->exit_code(), -1);
    EXPECT_EQ(ev->term_signal(), 0);

    ev = t.next_event(0ms);
    ASSERT_TRUE(ev);
    EXPECT_EQ(ev->kind(), EventKind::Response);
    EXPECT_EQ(ev->request_id(), ping);
    EXPECT_EQ(ev->envelope().result(), "{}");
    EXPECT_FALSE(t.next_event(0ms));
    EXPECT_FALSE(t.closed());

    // A second answer to the same id answers nothing: a Message.
    t.receive("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n");
    ev = t.next_event(0ms);
    ASSERT_TRUE(ev);
    EXPECT_EQ(ev->kind(), EventKind::Message);
    EXPECT_EQ(ev->rpc_kind(), RpcKind::Response);
    EXPECT_EQ(ev->request_id(), -1);
}

TEST(Transport, IdsCountUpAndARefusedRequestUsesNone) {
    Transport t;
    for (std::int64_t want = 1; want <= 5; ++want) EXPECT_EQ(t.request("a"), want);
    t.set_max_queued(1);  // only an empty queue takes a message now
    const mcp::RequestResult refused = t.try_request("b");
    EXPECT_EQ(refused.status, Status::WouldBlock);
    EXPECT_TRUE(refused.would_block());
    EXPECT_FALSE(refused.ok());
    EXPECT_EQ(refused.id, -1);
    EXPECT_EQ(status_thrown_by([&] { (void)t.request("b"); }), Status::WouldBlock);
    (void)t.take_output();
    const mcp::RequestResult taken = t.try_request("b");
    EXPECT_TRUE(taken.ok());
    EXPECT_EQ(taken.id, 6);
}

TEST(Transport, ErrorResponseToOurRequest) {
    Transport t;
    const std::int64_t id = t.request("tools/call", R"({"name":"x"})");
    t.receive(R"({"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"no such tool"}})"
              "\n");
    auto ev = t.next_event(0ms);
    ASSERT_TRUE(ev);
    EXPECT_EQ(ev->kind(), EventKind::Response);
    EXPECT_EQ(ev->request_id(), id);
    EXPECT_EQ(ev->rpc_kind(), RpcKind::Error);
    EXPECT_EQ(ev->envelope().rpc_kind(), RpcKind::Error);
    EXPECT_EQ(ev->envelope().error(), R"({"code":-32601,"message":"no such tool"})");
    EXPECT_EQ(ev->envelope().result(), "");
}

TEST(Transport, ServesThePeersRequests) {
    Transport t;
    t.receive(R"({"jsonrpc":"2.0","id":"a\"b","method":"tools\/call","params":{"x":1}})"
              "\n"
              R"({"jsonrpc":"2.0","method":"notifications/initialized"})"
              "\n"
              R"({"jsonrpc":"2.0","id":7,"method":"resources/list"})"
              "\n");
    auto ev = t.next_event(0ms);
    ASSERT_TRUE(ev);
    EXPECT_EQ(ev->kind(), EventKind::Message);
    EXPECT_EQ(ev->rpc_kind(), RpcKind::Request);
    EXPECT_EQ(ev->request_id(), -1);
    const mcp::Envelope env = ev->envelope();  // a copy: still borrowed
    EXPECT_EQ(env.id(), R"("a\"b")");
    EXPECT_EQ(env.method(), R"("tools\/call")");
    EXPECT_TRUE(env.method_is("tools/call"));  // escapes decoded
    EXPECT_FALSE(env.method_is("tools/cal"));
    EXPECT_FALSE(env.method_is(std::string_view("tools/call\0", 11)));
    EXPECT_EQ(env.params(), R"({"x":1})");
    t.respond(env.id(), R"({ "content" : [] })");

    ev = t.next_event(0ms);
    ASSERT_TRUE(ev);
    EXPECT_EQ(ev->rpc_kind(), RpcKind::Notification);
    EXPECT_TRUE(ev->envelope().method_is("notifications/initialized"));
    EXPECT_EQ(ev->envelope().id(), "");  // absent
    // An absent id is left out of an error response.
    t.respond_error(ev->envelope().id(), -32600, "no id");

    ev = t.next_event(0ms);
    ASSERT_TRUE(ev);
    EXPECT_EQ(ev->envelope().id(), "7");
    t.respond_error(ev->envelope().id(), -32601, "Method \"resources/list\" not found");
    t.notify("notifications/progress", R"({"progress":1})");
    t.notify("notifications/x");
    EXPECT_EQ(t.take_output(),
              "{\"jsonrpc\":\"2.0\",\"id\":\"a\\\"b\",\"result\":{\"content\":[]}}\n"
              "{\"jsonrpc\":\"2.0\",\"error\":{\"code\":-32600,\"message\":\"no id\"}}\n"
              "{\"jsonrpc\":\"2.0\",\"id\":7,\"error\":{\"code\":-32601,\"message\":"
              "\"Method \\\"resources/list\\\" not found\"}}\n"
              "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progress\":1}}\n"
              "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/x\"}\n");
}

TEST(Transport, InvalidLinesAreEvents) {
    Transport t;
    t.set_max_line_len(32);
    t.receive("not json\n[1,2]\n" + std::string(100, 'x') + "\n[{\"jsonrpc\":\"2.0\",\"method\":\"n\"}]\n");
    auto ev = t.next_event(0ms);
    ASSERT_TRUE(ev);
    EXPECT_EQ(ev->kind(), EventKind::Invalid);
    EXPECT_EQ(ev->invalid_kind(), mcp::MessageKind::ParseError);
    EXPECT_EQ(ev->data(), "not json");
    ev = t.next_event(0ms);
    ASSERT_TRUE(ev);
    EXPECT_EQ(ev->invalid_kind(), mcp::MessageKind::InvalidJsonRpc);
    EXPECT_EQ(ev->data(), "[1,2]");
    ev = t.next_event(0ms);
    ASSERT_TRUE(ev);
    EXPECT_EQ(ev->invalid_kind(), mcp::MessageKind::TooLong);
    EXPECT_EQ(ev->data(), "");
    EXPECT_GT(ev->size(), 32u);
    EXPECT_LE(ev->size(), 100u);
    ev = t.next_event(0ms);  // a batch: a Message without an envelope
    ASSERT_TRUE(ev);
    EXPECT_EQ(ev->kind(), EventKind::Message);
    EXPECT_EQ(ev->rpc_kind(), RpcKind::Batch);
    EXPECT_EQ(ev->envelope().rpc_kind(), RpcKind::None);
    EXPECT_EQ(ev->envelope().method(), "");
    EXPECT_FALSE(t.next_event(0ms));
}

TEST(Transport, ARequestTimesOutAtItsDeadline) {
    Transport t;
    const std::int64_t id = t.request("slow", "{}", 40ms);
    (void)t.take_output();
    const auto start = Clock::now();
    auto ev = t.next_event(5s);
    const auto waited = elapsed_ms(start);
    ASSERT_TRUE(ev);
    EXPECT_EQ(ev->kind(), EventKind::RequestTimedOut);
    EXPECT_EQ(ev->request_id(), id);
    EXPECT_EQ(ev->data(), "");
    EXPECT_GE(waited, 30);
    EXPECT_LT(waited, 2000);
    // A cancellation was queued for it.
    EXPECT_EQ(t.take_output(),
              "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":1,"
              "\"reason\":\"request timed out\"}}\n");
    // A late answer answers nothing.
    t.receive("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n");
    ev = t.next_event(0ms);
    ASSERT_TRUE(ev);
    EXPECT_EQ(ev->kind(), EventKind::Message);
    EXPECT_EQ(t.take_output(), "");
}

TEST(Transport, NextEventWaitsForItsTimeoutAndNoLonger) {
    Transport t;
    (void)t.request("a");  // no deadline
    auto start = Clock::now();
    EXPECT_FALSE(t.next_event(30ms));
    auto waited = elapsed_ms(start);
    EXPECT_GE(waited, 25);
    EXPECT_LT(waited, 2000);
    EXPECT_FALSE(t.closed());

    // The earlier of two deadlines comes first; the wait ends at it.
    (void)t.request("late", "", 2000ms);
    const std::int64_t early = t.request("early", "", 20ms);
    start = Clock::now();
    auto ev = t.next_event(5s);
    ASSERT_TRUE(ev);
    EXPECT_EQ(ev->kind(), EventKind::RequestTimedOut);
    EXPECT_EQ(ev->request_id(), early);
    EXPECT_LT(elapsed_ms(start), 1500);
}

TEST(Transport, CloseFailsPendingRequestsThenCloses) {
    Transport t;
    const std::int64_t a = t.request("a");
    const std::int64_t b = t.request("b", "[]", 60000ms);
    t.close(20ms);
    t.close(0ms);  // the first schedule stands

    // From now on every send fails with Closed.
    EXPECT_EQ(status_thrown_by([&] { t.send("{}"); }), Status::Closed);
    EXPECT_EQ(status_thrown_by([&] { (void)t.request("c"); }), Status::Closed);
    EXPECT_EQ(status_thrown_by([&] { t.notify("n"); }), Status::Closed);
    EXPECT_EQ(status_thrown_by([&] { t.respond("1", "{}"); }), Status::Closed);
    EXPECT_EQ(status_thrown_by([&] { t.respond_error("1", 1, "x"); }), Status::Closed);
    EXPECT_EQ(status_thrown_by([&] { t.cancel(a); }), Status::Closed);
    EXPECT_EQ(t.try_send("{}"), Status::Closed);
    EXPECT_TRUE(t.try_request("c").closed());
    EXPECT_EQ(t.try_notify("n"), Status::Closed);
    EXPECT_EQ(t.try_respond("1", "{}"), Status::Closed);
    EXPECT_EQ(t.try_respond_error("", 1, "x"), Status::Closed);
    try {
        t.send("{}");
    } catch (const mcp::Error &e) {
        EXPECT_EQ(e.code(), Status::Closed);
        EXPECT_EQ(e.code(), MCP_STATUS_CLOSED);
        EXPECT_TRUE(contains(e.what(), "mcp::Transport::send")) << e.what();
    }

    std::vector<Got> got;
    const auto start = Clock::now();
    while (auto ev = t.next_event(5s)) got.push_back(copy(*ev));
    EXPECT_LT(elapsed_ms(start), 2000);
    ASSERT_EQ(got.size(), 3u);
    EXPECT_EQ(got[0].kind, EventKind::RequestFailed);
    EXPECT_EQ(got[0].request_id, a);
    EXPECT_EQ(got[1].kind, EventKind::RequestFailed);
    EXPECT_EQ(got[1].request_id, b);
    EXPECT_EQ(got[2].kind, EventKind::Closed);
    EXPECT_EQ(got[2].request_id, -1);
    EXPECT_TRUE(t.closed());
    EXPECT_FALSE(t.next_event(0ms));  // ended: at once, whatever the timeout
    EXPECT_FALSE(t.next_event(Transport::forever));
    EXPECT_TRUE(t.closed());
    t.close(1s);  // harmless after the end
    // What was queued stays for take_output, also after Closed.
    EXPECT_EQ(t.take_output(),
              "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\"}\n"
              "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"b\",\"params\":[]}\n");
    EXPECT_EQ(status_thrown_by([&] { t.receive("{}\n"); }), Status::Closed);
}

TEST(Transport, ThePeersEndClosesAtOnce) {
    Transport t;
    const std::int64_t id = t.request("a");
    t.receive(R"({"jsonrpc":"2.0","method":"bye"})");  // no final newline
    EXPECT_FALSE(t.next_event(0ms));
    t.receive_end();
    t.receive_end();  // repeating it is harmless
    const std::vector<Got> got = ready_events(t);
    ASSERT_EQ(got.size(), 3u);
    EXPECT_EQ(got[0].kind, EventKind::Message);
    EXPECT_EQ(got[0].method, R"("bye")");
    EXPECT_EQ(got[1].kind, EventKind::RequestFailed);
    EXPECT_EQ(got[1].request_id, id);
    EXPECT_EQ(got[2].kind, EventKind::Closed);
    EXPECT_TRUE(t.closed());
    EXPECT_EQ(t.try_send("{}"), Status::Closed);
}

TEST(Transport, WouldBlockAtTheBound) {
    Transport t;
    const std::string msg = R"({"jsonrpc":"2.0","method":"n","params":{"pad":"0123456789"}})";
    const std::size_t line = msg.size() + 1;
    t.set_max_queued(2 * line);
    t.send(msg);
    t.send(msg);
    EXPECT_EQ(t.try_send(msg), Status::WouldBlock);
    EXPECT_EQ(t.try_notify("n"), Status::WouldBlock);
    EXPECT_EQ(t.try_respond("1", "{}"), Status::WouldBlock);
    EXPECT_EQ(t.try_respond_error("1", 1, "x"), Status::WouldBlock);
    try {
        t.send(msg);
        FAIL() << "no exception";
    } catch (const mcp::Error &e) {
        EXPECT_EQ(e.status(), Status::WouldBlock);
        EXPECT_TRUE(contains(e.what(), "output queue")) << e.what();
    }
    EXPECT_EQ(status_thrown_by([&] { t.notify("n"); }), Status::WouldBlock);
    EXPECT_EQ(status_thrown_by([&] { t.respond("1", "{}"); }), Status::WouldBlock);
    EXPECT_EQ(status_thrown_by([&] { t.respond_error("1", 1, "x"); }), Status::WouldBlock);

    // Drain part of it with read_output: room again.
    char buf[16];
    std::string out;
    std::size_t n = t.read_output(buf, sizeof buf);
    EXPECT_EQ(n, sizeof buf);
    out.append(buf, n);
    while (out.size() < line) {
        n = t.read_output(buf, std::min(sizeof buf, line - out.size()));
        ASSERT_GT(n, 0u);
        out.append(buf, n);
    }
    EXPECT_EQ(out, msg + "\n");
    EXPECT_EQ(t.try_send(msg), Status::Ok);
    EXPECT_EQ(t.try_send(msg), Status::WouldBlock);

    // Errors other than WouldBlock and Closed still throw from try_*.
    EXPECT_EQ(status_thrown_by([&] { (void)t.try_send("{"); }), Status::InvalidJson);

    // An empty queue takes one message larger than the bound.
    std::vector<char> all(4096);
    std::size_t total = 0;
    while ((n = t.read_output(all.data(), all.size())) > 0) total += n;
    EXPECT_EQ(total, 2 * line);
    EXPECT_EQ(t.read_output(nullptr, 0), 0u);
    t.send("[\"" + std::string(10 * line, 'b') + "\"]");
    EXPECT_EQ(t.try_send("[]"), Status::WouldBlock);

    // Cancellations are queued whatever the bound.
    t.set_max_queued(1);
    (void)t.take_output_buffer();
    const std::int64_t id = t.request("r");
    t.cancel(id, "user");
    const mcp::Buffer out2 = t.take_output_buffer();
    EXPECT_TRUE(contains(out2.view(), "\"reason\":\"user\"")) << out2.view();
}

TEST(Transport, Cancel) {
    Transport t;
    const std::int64_t a = t.request("a", "{}", 10000ms);
    const std::int64_t b = t.request("b");
    const std::int64_t init = t.request("initialize", "{}");
    (void)t.take_output();
    t.cancel(a);
    t.cancel(b, "changed my mind");
    EXPECT_EQ(t.take_output(),
              "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":1}}\n"
              "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":2,"
              "\"reason\":\"changed my mind\"}}\n");
    // Not pending any more, unknown, or an initialize: InvalidArgument.
    EXPECT_EQ(status_thrown_by([&] { t.cancel(a); }), Status::InvalidArgument);
    EXPECT_EQ(status_thrown_by([&] { t.cancel(999); }), Status::InvalidArgument);
    EXPECT_EQ(status_thrown_by([&] { t.cancel(init); }), Status::InvalidArgument);
    EXPECT_EQ(status_thrown_by([&] { t.cancel(init, std::string_view("a\0b", 3)); }),
              Status::InvalidArgument);
    // No event comes for a cancelled request; a late answer is a Message.
    t.receive("{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}\n");
    auto ev = t.next_event(0ms);
    ASSERT_TRUE(ev);
    EXPECT_EQ(ev->kind(), EventKind::Message);
    EXPECT_FALSE(t.next_event(0ms));
}

TEST(Transport, TextArgumentsNeedNotBeNulTerminated) {
    Transport t;
    const std::string buffer = "pingXXXX";
    (void)t.request(std::string_view(buffer).substr(0, 4));
    const std::string long_method(300, 'm');  // past the on-stack copy
    t.notify(long_method);
    t.respond_error("1", 5, std::string_view("errorXXXX").substr(0, 5));
    EXPECT_EQ(t.take_output(),
              "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n"
              "{\"jsonrpc\":\"2.0\",\"method\":\"" + long_method + "\"}\n"
              "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":5,\"message\":\"error\"}}\n");
    // A NUL inside would cut the text short in C: refused.
    const std::string_view with_nul("a\0b", 3);
    EXPECT_EQ(status_thrown_by([&] { (void)t.request(with_nul); }), Status::InvalidText);
    EXPECT_EQ(status_thrown_by([&] { (void)t.try_request(with_nul); }), Status::InvalidText);
    EXPECT_EQ(status_thrown_by([&] { t.notify(with_nul); }), Status::InvalidText);
    EXPECT_EQ(status_thrown_by([&] { t.respond_error("1", 1, with_nul); }), Status::InvalidText);
    EXPECT_EQ(status_thrown_by([&] { (void)t.request("\xff"); }), Status::InvalidText);  // not UTF-8
    EXPECT_EQ(t.take_output(), "");
    EXPECT_EQ(t.request("next"), 2);  // refused requests used no id
}

TEST(Transport, ArgumentErrors) {
    Transport t;
    EXPECT_EQ(status_thrown_by([&] { t.send(""); }), Status::InvalidJson);
    EXPECT_EQ(status_thrown_by([&] { t.send("{} {}"); }), Status::InvalidJson);
    EXPECT_EQ(status_thrown_by([&] { (void)t.request("a", "1"); }), Status::InvalidParams);
    EXPECT_EQ(status_thrown_by([&] { (void)t.request("a", "{"); }), Status::InvalidJson);
    EXPECT_EQ(status_thrown_by([&] { t.respond("", "{}"); }), Status::InvalidArgument);
    EXPECT_EQ(status_thrown_by([&] { t.respond("{}", "{}"); }), Status::InvalidArgument);
    EXPECT_EQ(status_thrown_by([&] { t.respond("1", ""); }), Status::InvalidJson);
    EXPECT_EQ(status_thrown_by([&] { t.respond_error("null", 1, "x"); }), Status::InvalidArgument);
    EXPECT_EQ(status_thrown_by([&] { t.set_max_queued(0); }), Status::InvalidArgument);
    EXPECT_EQ(status_thrown_by([&] { t.set_max_line_len(0); }), Status::InvalidArgument);
    t.set_max_line_len(Transport::no_limit);
    t.send(" { \"a\" : [ 1 , 2 ] } ");  // sent compact
    EXPECT_EQ(t.take_output(), "{\"a\":[1,2]}\n");
}

// ---------------------------------------------------------------------------
// Ownership

void expect_empty(Transport &t) {
    EXPECT_FALSE(t);
    EXPECT_EQ(t.native_handle(), nullptr);
    EXPECT_FALSE(t.closed());
    EXPECT_EQ(status_thrown_by([&] { t.send("{}"); }), Status::NullArgument);
    EXPECT_EQ(status_thrown_by([&] { (void)t.try_send("{}"); }), Status::NullArgument);
    EXPECT_EQ(status_thrown_by([&] { (void)t.request("a"); }), Status::NullArgument);
    EXPECT_EQ(status_thrown_by([&] { (void)t.try_request("a"); }), Status::NullArgument);
    EXPECT_EQ(status_thrown_by([&] { t.close(0ms); }), Status::NullArgument);
    EXPECT_EQ(status_thrown_by([&] { (void)t.next_event(0ms); }), Status::NullArgument);
    EXPECT_EQ(status_thrown_by([&] { t.receive("[]\n"); }), Status::NullArgument);
    EXPECT_EQ(status_thrown_by([&] { (void)t.take_output(); }), Status::NullArgument);
}

// Moves its argument through an alias, so compilers do not flag the self-move.
template <class T>
void self_move_assign(T &x) {
    T &alias = x;
    x = std::move(alias);
}

TEST(Transport, MoveConstructTakesTheTransport) {
    Transport a;
    (void)a.request("a");
    McpTransport *handle = a.native_handle();
    Transport b(std::move(a));
    expect_empty(a);  // and its destructor is a no-op (valgrind checks no double free)
    ASSERT_TRUE(b);
    EXPECT_EQ(b.native_handle(), handle);
    EXPECT_EQ(b.request("b"), 2);  // the same transport: ids go on
    EXPECT_EQ(b.take_output(),
              "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\"}\n"
              "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"b\"}\n");
}

TEST(Transport, MoveAssignFreesTheOldTransport) {
    Transport a;
    (void)a.request("a");
    Transport b;
    (void)b.request("b");  // freed by the assignment, queue and all: valgrind checks it
    b = std::move(a);
    expect_empty(a);
    EXPECT_EQ(b.take_output(), "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\"}\n");
    self_move_assign(b);
    ASSERT_TRUE(b);
    EXPECT_EQ(b.request("c"), 2);

    a = Transport();  // a moved-from transport can be assigned to
    EXPECT_TRUE(a);
    EXPECT_EQ(a.request("x"), 1);

    Transport empty(std::move(a));
    Transport sink(std::move(empty));
    self_move_assign(empty);  // an empty one too
    expect_empty(empty);
}

TEST(Transport, ClosedMovesWithTheTransport) {
    Transport a;
    a.close(0ms);
    while (a.next_event(1s)) {
    }
    ASSERT_TRUE(a.closed());
    Transport b(std::move(a));
    EXPECT_TRUE(b.closed());
    EXPECT_FALSE(a.closed());
    using std::swap;
    swap(a, b);
    EXPECT_TRUE(a.closed());
    EXPECT_FALSE(b);
}

TEST(Transport, ReleaseAndAdopt) {
    Transport a;
    (void)a.request("a");
    McpTransport *raw = a.release();
    expect_empty(a);
    ASSERT_NE(raw, nullptr);
    // The C API sees the same transport.
    std::int64_t id = 0;
    ASSERT_EQ(mcp_transport_request(raw, "b", nullptr, 0, 0, &id), MCP_STATUS_OK);
    EXPECT_EQ(id, 2);
    Transport b(raw);  // adopted: freed by b
    EXPECT_EQ(b.request("c"), 3);
    Transport none(nullptr);
    expect_empty(none);
}

TEST(Transport, TransportsInAVector) {
    std::vector<Transport> ts;
    for (int i = 0; i < 40; ++i) {  // reallocations move them
        ts.emplace_back();
        for (int j = 0; j <= i; ++j) (void)ts.back().request("m");
    }
    for (std::size_t i = 0; i < ts.size(); ++i) {
        EXPECT_EQ(ts[i].request("last"), static_cast<std::int64_t>(i) + 2);
    }
}

// ---------------------------------------------------------------------------
// Threads

TEST(Transport, ASendFromAnotherThreadWakesNextEvent) {
    Transport t;
    // The waiting thread has no deadline to wake it: only the send can.
    std::thread sender([&t] {
        std::this_thread::sleep_for(50ms);
        (void)t.request("slow", "{}", 30ms);
    });
    const auto start = Clock::now();
    auto ev = t.next_event(10s);
    const auto waited = elapsed_ms(start);
    sender.join();
    ASSERT_TRUE(ev);
    EXPECT_EQ(ev->kind(), EventKind::RequestTimedOut);
    EXPECT_EQ(ev->request_id(), 1);
    EXPECT_GE(waited, 70);    // 50 ms before the send, 30 ms of deadline
    EXPECT_LT(waited, 5000);  // not the 10 s timeout
}

TEST(Transport, ACloseFromAnotherThreadEndsAWaitWithNoLimit) {
    Transport t;
    const std::int64_t id = t.request("pending");
    std::thread closer([&t] {
        std::this_thread::sleep_for(50ms);
        t.close(0ms);
    });
    std::vector<Got> got;
    const auto start = Clock::now();
    while (auto ev = t.next_event(Transport::forever)) got.push_back(copy(*ev));
    closer.join();
    EXPECT_LT(elapsed_ms(start), 5000);
    ASSERT_EQ(got.size(), 2u);
    EXPECT_EQ(got[0].kind, EventKind::RequestFailed);
    EXPECT_EQ(got[0].request_id, id);
    EXPECT_EQ(got[1].kind, EventKind::Closed);
    EXPECT_TRUE(t.closed());
}

TEST(Transport, ManyThreadsSendAtOnce) {
    constexpr int kThreads = 4;
    constexpr int kEach = 250;
    Transport t;
    std::vector<std::thread> senders;
    for (int i = 0; i < kThreads; ++i) {
        senders.emplace_back([&t] {
            for (int j = 0; j < kEach; ++j) (void)t.request("m");
        });
    }
    for (auto &s : senders) s.join();
    const std::string out = t.take_output();
    std::set<std::string> ids;
    std::istringstream lines(out);
    for (std::string line; std::getline(lines, line);) {
        mcp::LineReader r(mcp::ReaderFlags::JsonRpc);
        r.feed(line);
        r.finish();
        auto m = r.next();
        ASSERT_TRUE(m);
        ASSERT_EQ(m->rpc_kind(), RpcKind::Request) << line;
        ids.insert(line.substr(0, line.find(",\"method\"")));
    }
    EXPECT_EQ(ids.size(), static_cast<std::size_t>(kThreads * kEach));  // every id once
}

TEST(Transport, EventKindNames) {
    std::ostringstream os;
    os << EventKind::Response << ' ' << EventKind::Closed;
    EXPECT_EQ(os.str(), "Response Closed");
    EXPECT_EQ(mcp::to_string(EventKind::RequestTimedOut), "RequestTimedOut");
    EXPECT_EQ(mcp::to_string(static_cast<EventKind>(99)), "EventKind(?)");
}

TEST(Transport, JsonStringEq) {
    EXPECT_TRUE(mcp::json_string_eq(R"("tools\/call")", "tools/call"));
    EXPECT_TRUE(mcp::json_string_eq(R"("\u0074ools/call")", "tools/call"));
    EXPECT_TRUE(mcp::json_string_eq("\"" + std::string(200, 'x') + "\"", std::string(200, 'x')));
    EXPECT_FALSE(mcp::json_string_eq("7", "7"));
    EXPECT_FALSE(mcp::json_string_eq("", ""));
    EXPECT_FALSE(mcp::json_string_eq(R"("a\u0000")", std::string_view("a\0", 2)));
}

#if defined(MCP_STDIO_HAS_POSIX_IO)
// ---------------------------------------------------------------------------
// Descriptor transports

// A connected pair of stream sockets; the ends not given away close themselves.
struct SocketPair {
    int fds[2] = {-1, -1};

    SocketPair() {
        if (::socketpair(AF_UNIX, SOCK_STREAM, 0, fds) != 0) {
            throw std::system_error(errno, std::generic_category(), "socketpair");
        }
    }
    ~SocketPair() {
        for (int fd : fds) {
            if (fd >= 0) ::close(fd);
        }
    }
    SocketPair(const SocketPair &) = delete;
    SocketPair &operator=(const SocketPair &) = delete;

    // Gives end i to a transport that owns it.
    int give(int i) { return std::exchange(fds[i], -1); }
};

// A server on its own thread, on a descriptor transport: answers every
// request with its params as the result, until its transport ends (when the
// client's end goes away). Its destructor ends it in any case, so that a
// test stopped early by a failed assertion still joins the thread.
class EchoServer {
public:
    explicit EchoServer(int fd) : t_(Transport::open_fds(fd, fd)), thread_([this] { serve(); }) {}

    ~EchoServer() {
        if (thread_.joinable()) {
            try {
                t_.close(0ms);  // a send: any thread, wakes the server's next_event
            } catch (...) {
            }
            thread_.join();
        }
    }

    EchoServer(const EchoServer &) = delete;
    EchoServer &operator=(const EchoServer &) = delete;

    // Waits for the server to end; returns what went wrong, if anything.
    std::string join() {
        thread_.join();
        EXPECT_TRUE(t_.closed());
        return error_;
    }

private:
    void serve() {
        try {
            for (int idle = 0; !t_.closed();) {
                auto ev = t_.next_event(10s);
                if (!ev) {
                    if (++idle > 1) {
                        error_ = "the server waited 20 s for nothing";
                        return;
                    }
                    continue;
                }
                if (ev->kind() == EventKind::Message && ev->rpc_kind() == RpcKind::Request) {
                    const std::string_view params = ev->envelope().params();
                    t_.respond(ev->envelope().id(), params.empty() ? "{}" : params);
                }
            }
        } catch (const std::exception &e) {
            error_ = e.what();
        }
    }

    Transport t_;
    std::string error_;
    std::thread thread_;  // last: starts once the rest is built
};

TEST(TransportFds, AThousandRequestsOverASocketpair) {
    constexpr int kRequests = 1000;
    SocketPair sp;
    const int client_fd = sp.give(0);
    const int server_fd = sp.give(1);
    Transport client = Transport::open_fds(client_fd, client_fd);
    EchoServer server(server_fd);

    const auto start = Clock::now();
    std::vector<std::int64_t> ids;
    for (int i = 0; i < kRequests; ++i) {
        ids.push_back(client.request("echo", "{\"n\":" + std::to_string(i) + "}", 10000ms));
    }
    std::vector<int> answered(kRequests, 0);
    int responses = 0;
    while (responses < kRequests) {
        auto ev = client.next_event(10s);
        ASSERT_TRUE(ev) << "no event for 10 s after " << responses << " responses";
        ASSERT_EQ(ev->kind(), EventKind::Response) << ev->data();
        const std::int64_t id = ev->request_id();
        ASSERT_GE(id, 1);
        ASSERT_LE(id, kRequests);
        const int n = static_cast<int>(id - 1);
        EXPECT_EQ(ids[static_cast<std::size_t>(n)], id);
        EXPECT_EQ(ev->envelope().result(), "{\"n\":" + std::to_string(n) + "}");
        ++answered[static_cast<std::size_t>(n)];
        ++responses;
    }
    for (int i = 0; i < kRequests; ++i) EXPECT_EQ(answered[static_cast<std::size_t>(i)], 1) << i;

    // Close: our end goes (shutdown), the server sees it and closes; we see its end.
    client.close(2000ms);
    std::vector<Got> rest;
    while (auto ev = client.next_event(10s)) rest.push_back(copy(*ev));
    ASSERT_EQ(rest.size(), 1u);
    EXPECT_EQ(rest[0].kind, EventKind::Closed);
    EXPECT_TRUE(client.closed());
    EXPECT_EQ(server.join(), "");
    const auto ms = elapsed_ms(start);
    EXPECT_LT(ms, 10000);
    RecordProperty("round_trip_ms", static_cast<int>(ms));
}

TEST(TransportFds, ASendFromAnotherThreadIsWrittenByTheWaitingNextEvent) {
    SocketPair sp;
    const int client_fd = sp.give(0);
    const int server_fd = sp.give(1);
    Transport client = Transport::open_fds(client_fd, client_fd);
    EchoServer server(server_fd);

    // The main thread waits with nothing queued; the request comes from
    // another thread, and only the waiting next_event can write it.
    std::atomic<std::int64_t> id{0};
    std::thread sender([&] {
        std::this_thread::sleep_for(50ms);
        id = client.request("ping", "{\"x\":1}");
    });
    const auto start = Clock::now();
    auto ev = client.next_event(10s);
    sender.join();
    ASSERT_TRUE(ev);
    EXPECT_LT(elapsed_ms(start), 5000);
    EXPECT_EQ(ev->kind(), EventKind::Response);
    EXPECT_EQ(ev->request_id(), id.load());
    EXPECT_EQ(ev->envelope().result(), "{\"x\":1}");

    client.close(1000ms);
    while (client.next_event(10s)) {
    }
    EXPECT_TRUE(client.closed());
    EXPECT_EQ(server.join(), "");
}

TEST(TransportFds, AnEventLoopOnPollFds) {
    SocketPair sp;
    const int client_fd = sp.give(0);
    const int server_fd = sp.give(1);
    Transport client = Transport::open_fds(client_fd, client_fd);
    EchoServer server(server_fd);

    std::vector<pollfd> fds;
    std::chrono::milliseconds timeout = client.poll_fds(fds);
    EXPECT_EQ(timeout, -1ms);  // no deadline
    ASSERT_GE(fds.size(), 2u);   // the socket (POLLIN) and the wake-up
    EXPECT_LE(fds.size(), Transport::max_poll_fds);
    EXPECT_EQ(fds[0].fd, client_fd);
    EXPECT_TRUE(fds[0].events & POLLIN);
    EXPECT_FALSE(fds[0].events & POLLOUT);

    const std::int64_t id = client.request("ping", "", 5000ms);
    timeout = client.poll_fds(fds);
    EXPECT_GT(timeout, 0ms);
    EXPECT_LE(timeout, 5000ms);
    EXPECT_TRUE(fds[0].events & POLLOUT);  // something to write

    std::optional<Got> answer;
    const auto start = Clock::now();
    while (!answer && elapsed_ms(start) < 10000) {
        timeout = client.poll_fds(fds);
        ASSERT_GE(::poll(fds.data(), fds.size(), static_cast<int>(timeout.count())), 0);
        while (auto ev = client.next_event(0ms)) answer = copy(*ev);
    }
    ASSERT_TRUE(answer);
    EXPECT_EQ(answer->kind, EventKind::Response);
    EXPECT_EQ(answer->request_id, id);

    // Into the caller's own array.
    pollfd raw[Transport::max_poll_fds];
    std::chrono::milliseconds raw_timeout(123);
    const std::size_t n = client.poll_fds(raw, Transport::max_poll_fds, raw_timeout);
    EXPECT_EQ(n, fds.size());
    EXPECT_EQ(raw_timeout, -1ms);
    EXPECT_EQ(status_thrown_by([&] { (void)client.poll_fds(raw, 1, raw_timeout); }),
              Status::InvalidArgument);

    client.close(1000ms);
    while (client.next_event(10s)) {
    }
    EXPECT_EQ(server.join(), "");
    // After the end: only the wake-up, and "due now".
    EXPECT_EQ(client.poll_fds(fds), 0ms);
    EXPECT_EQ(fds.size(), 1u);

    // A memory transport: no descriptors, the time to its deadline.
    Transport memory;
    EXPECT_EQ(memory.poll_fds(fds), -1ms);
    EXPECT_TRUE(fds.empty());
    (void)memory.request("a", "", 100ms);
    timeout = memory.poll_fds(fds);
    EXPECT_GT(timeout, 0ms);
    EXPECT_LE(timeout, 100ms);
}

// A send from another thread makes the wake-up descriptor of poll_fds' set
// readable; the next_event that follows must take it, or an event loop on
// poll_fds + next_event(0ms) would spin (every poll(2) returning at once).
TEST(TransportFds, AWakeUpIsConsumedByTheEventLoop) {
    SocketPair sp;
    const int fd = sp.fds[0];
    Transport t = Transport::open_fds(fd, fd, mcp::TransportFlags::BorrowFds);
    std::vector<pollfd> fds;
    const std::chrono::milliseconds timeout = t.poll_fds(fds);
    std::thread sender([&t] {
        std::this_thread::sleep_for(20ms);
        (void)t.request("ping");
    });
    const int ready = ::poll(fds.data(), fds.size(), static_cast<int>(timeout.count()));
    sender.join();
    ASSERT_EQ(ready, 1);  // woken
    while (t.next_event(0ms)) {
    }
    // The request went out; nothing is left to do, so nothing is ready.
    (void)t.poll_fds(fds);
    EXPECT_EQ(::poll(fds.data(), fds.size(), 0), 0) << "the wake-up descriptor is still readable";
    ::shutdown(sp.fds[1], SHUT_WR);
    t.close(1000ms);
    while (t.next_event(10s)) {
    }
}

TEST(TransportFds, MemoryOnlyCallsRefuseADescriptorTransport) {
    SocketPair sp;
    ::shutdown(sp.fds[1], SHUT_WR);  // the peer's end: destroying t need not wait for it
    Transport t = Transport::open_fds(sp.fds[0], sp.fds[0], mcp::TransportFlags::BorrowFds);
    EXPECT_EQ(status_thrown_by([&] { t.receive("[]\n"); }), Status::InvalidArgument);
    EXPECT_EQ(status_thrown_by([&] { t.receive_end(); }), Status::InvalidArgument);
    EXPECT_EQ(status_thrown_by([&] { (void)t.take_output(); }), Status::InvalidArgument);
    char buf[4];
    EXPECT_EQ(status_thrown_by([&] { (void)t.read_output(buf, sizeof buf); }), Status::InvalidArgument);
}

TEST(TransportFds, BorrowedDescriptorsStayOpenWithTheirFlags) {
    SocketPair sp;
    const int flags_before = ::fcntl(sp.fds[0], F_GETFL);
    ASSERT_FALSE(flags_before & O_NONBLOCK);
    {
        Transport t = Transport::open_fds(sp.fds[0], sp.fds[0],
                                          mcp::TransportFlags::BorrowFds | mcp::TransportFlags::None);
        EXPECT_TRUE(mcp::has(mcp::TransportFlags::BorrowFds, mcp::TransportFlags::BorrowFds));
        EXPECT_TRUE(::fcntl(sp.fds[0], F_GETFL) & O_NONBLOCK);  // the transport's
        t.notify("bye");
        // The peer ends, so that destroying the transport need not wait.
        ::shutdown(sp.fds[1], SHUT_WR);
        t.close(1000ms);
        while (t.next_event(10s)) {
        }
        EXPECT_TRUE(t.closed());
    }
    EXPECT_EQ(::fcntl(sp.fds[0], F_GETFL), flags_before);  // given back
    char buf[64];
    const ssize_t n = ::read(sp.fds[1], buf, sizeof buf);  // what it wrote, still readable
    ASSERT_GT(n, 0);
    EXPECT_EQ(std::string(buf, static_cast<std::size_t>(n)),
              "{\"jsonrpc\":\"2.0\",\"method\":\"bye\"}\n");
}

TEST(TransportFds, OpenFdsErrors) {
    try {
        (void)Transport::open_fds(-1, 1);
        FAIL() << "no exception";
    } catch (const mcp::Error &e) {
        EXPECT_EQ(e.status(), Status::InvalidArgument);
    }
    int fds[2];
    ASSERT_EQ(::pipe(fds), 0);
    ::close(fds[0]);
    ::close(fds[1]);
    try {
        (void)Transport::open_fds(fds[0], fds[1]);  // closed: EBADF
        FAIL() << "no exception";
    } catch (const mcp::Error &e) {
        EXPECT_EQ(e.status(), Status::IoError);
        EXPECT_EQ(e.os_error(), std::errc::bad_file_descriptor);
        EXPECT_TRUE(contains(e.what(), "open_fds")) << e.what();
    }
    SocketPair sp;
    EXPECT_EQ(status_thrown_by([&] {
                  (void)Transport::open_fds(sp.fds[0], sp.fds[0], static_cast<mcp::TransportFlags>(1u << 9));
              }),
              Status::UnknownFlags);
}

TEST(TransportFds, ThePeerGoingAwayClosesTheTransport) {
    SocketPair sp;
    const int fd = sp.give(0);
    Transport t = Transport::open_fds(fd, fd);
    const std::int64_t id = t.request("never answered");
    ::close(sp.give(1));  // the peer goes away: not an error, the end
    std::vector<Got> got;
    while (auto ev = t.next_event(10s)) got.push_back(copy(*ev));
    ASSERT_EQ(got.size(), 2u);
    EXPECT_EQ(got[0].kind, EventKind::RequestFailed);
    EXPECT_EQ(got[0].request_id, id);
    EXPECT_EQ(got[1].kind, EventKind::Closed);
    EXPECT_EQ(t.try_send("{}"), Status::Closed);
}

#endif  // MCP_STDIO_HAS_POSIX_IO

}  // namespace
