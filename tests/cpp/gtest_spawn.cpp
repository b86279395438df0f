// mcp::Command and mcp::Transport::spawn: servers started as children (sh -c
// scripts, cat), their stderr as events, how they ended (exit code, signal),
// the shutdown sequence (SIGTERM to the group at the grace, SIGKILL at twice
// it, a grandchild included), spawn failures with their errno, the
// environment modes, and Transport::open_stdio with GuardStdout in a forked
// server. POSIX only.
#include "mcp_stdio.hpp"

#include <gtest/gtest.h>

#if defined(MCP_STDIO_HAS_POSIX_IO)

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

namespace {

using namespace std::chrono_literals;
using mcp::Command;
using mcp::EnvMode;
using mcp::EventKind;
using mcp::RpcKind;
using mcp::Status;
using mcp::StderrMode;
using mcp::Transport;
using Clock = std::chrono::steady_clock;

static_assert(!std::is_copy_constructible_v<Command>);
static_assert(!std::is_copy_assignable_v<Command>);
static_assert(std::is_nothrow_move_constructible_v<Command>);
static_assert(std::is_nothrow_move_assignable_v<Command>);
static_assert(std::is_nothrow_destructible_v<Command>);
static_assert(std::is_nothrow_swappable_v<Command>);
static_assert(!std::is_convertible_v<Command, bool>);
// A setter on a temporary gives the temporary back as an rvalue (so that
// `auto c = Command("x").arg("y");` moves), on an lvalue the lvalue.
static_assert(std::is_same_v<decltype(Command("x").arg("y")), Command &&>);
static_assert(std::is_same_v<decltype(std::declval<Command &>().arg("y")), Command &>);

// What an event said, copied out of the transport (its views are borrowed).
struct Got {
    EventKind kind;
    RpcKind rpc_kind;
    std::int64_t request_id;
    std::string data;
    std::string id;
    bool is_ping;
    std::int32_t exit_code;
    std::int32_t term_signal;
};

Got copy(const mcp::Event &ev) {
    return Got{ev.kind(),
               ev.rpc_kind(),
               ev.request_id(),
               std::string(ev.data()),
               std::string(ev.envelope().id()),
               ev.envelope().method_is("ping"),
               ev.exit_code(),
               ev.term_signal()};
}

// The next event that is not a Stderr line, waiting up to `limit`.
std::optional<Got> next_non_stderr(Transport &t, std::chrono::milliseconds limit = 10s) {
    const auto end = Clock::now() + limit;
    while (Clock::now() < end) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - Clock::now());
        auto ev = t.next_event(left);
        if (!ev) {
            if (t.closed()) return std::nullopt;
            continue;
        }
        if (ev->kind() != EventKind::Stderr) return copy(*ev);
    }
    return std::nullopt;
}

// Every event until Closed (included), waiting up to `limit` in all.
std::vector<Got> until_closed(Transport &t, std::chrono::milliseconds limit = 10s) {
    std::vector<Got> got;
    const auto end = Clock::now() + limit;
    while (!t.closed() && Clock::now() < end) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - Clock::now());
        if (auto ev = t.next_event(left)) got.push_back(copy(*ev));
    }
    EXPECT_TRUE(t.closed()) << "no Closed event within " << limit.count() << " ms";
    return got;
}

std::vector<std::string> stderr_lines(const std::vector<Got> &got) {
    std::vector<std::string> lines;
    for (const Got &g : got) {
        if (g.kind == EventKind::Stderr) lines.push_back(g.data);
    }
    return lines;
}

// Waits for the first Stderr line (a script saying it is ready).
std::string first_stderr_line(Transport &t) {
    const auto end = Clock::now() + 10s;
    while (Clock::now() < end) {
        auto ev = t.next_event(100ms);
        if (ev && ev->kind() == EventKind::Stderr) return std::string(ev->data());
        if (t.closed()) break;
    }
    ADD_FAILURE() << "no stderr line";
    return {};
}

Command sh(std::string_view script) { return Command("sh").args({"-c", script}); }

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

std::chrono::milliseconds since(Clock::time_point t0) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0);
}

// `pid` no longer runs: no such process, or a zombie that init has not
// reaped yet (an orphan is not ours to reap).
bool gone(pid_t pid) {
    if (::kill(pid, 0) != 0 && errno == ESRCH) return true;
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    if (!std::getline(stat, line)) return ::kill(pid, 0) != 0;
    const auto paren = line.rfind(')');
    return paren != std::string::npos && paren + 2 < line.size() && line[paren + 2] == 'Z';
}

bool gone_within(pid_t pid, std::chrono::milliseconds limit) {
    const auto end = Clock::now() + limit;
    while (!gone(pid)) {
        if (Clock::now() >= end) return false;
        std::this_thread::sleep_for(5ms);
    }
    return true;
}

// ---------------------------------------------------------------------------
// Requests and responses

TEST(Spawn, RequestAndResponseWithAScriptedServer) {
    // Reads our request, answers id 1, then waits for the end of its stdin.
    Transport t = Transport::spawn(
        sh(R"(read line; printf '%s\n' '{"jsonrpc":"2.0","id":1,"result":{"ok":true}}'; cat >/dev/null)"));
    const std::int32_t pid = t.pid();
    ASSERT_GT(pid, 0);
    EXPECT_EQ(::getpgid(pid), pid);  // its own process group
    const std::int64_t id = t.request("tools/list", "{}", 10s);
    EXPECT_EQ(id, 1);
    auto got = next_non_stderr(t);
    ASSERT_TRUE(got);
    EXPECT_EQ(got->kind, EventKind::Response);
    EXPECT_EQ(got->request_id, id);
    EXPECT_EQ(got->data, R"({"jsonrpc":"2.0","id":1,"result":{"ok":true}})");

    // Closing closes its stdin: cat ends, the server exits 0, long before
    // the grace.
    const auto t0 = Clock::now();
    t.close(5s);
    const auto events = until_closed(t);
    EXPECT_LT(since(t0), 4s);
    ASSERT_FALSE(events.empty());
    EXPECT_EQ(events.back().kind, EventKind::Closed);
    EXPECT_EQ(events.back().exit_code, 0);
    EXPECT_EQ(events.back().term_signal, 0);
    EXPECT_EQ(t.pid(), pid);  // still given after the end
    // Reaped: it is no child of ours any more.
    EXPECT_EQ(::waitpid(pid, nullptr, WNOHANG), -1);
    EXPECT_EQ(errno, ECHILD);
}

TEST(Spawn, CatEchoesOurRequestsBackAsMessages) {
    Transport t = Transport::spawn(Command("cat"));
    const std::int64_t id = t.request("ping");
    t.notify("notifications/progress", R"({"progress":1})");
    auto req = next_non_stderr(t);
    ASSERT_TRUE(req);
    EXPECT_EQ(req->kind, EventKind::Message);
    EXPECT_EQ(req->rpc_kind, RpcKind::Request);
    EXPECT_TRUE(req->is_ping);
    EXPECT_EQ(req->id, std::to_string(id));
    auto note = next_non_stderr(t);
    ASSERT_TRUE(note);
    EXPECT_EQ(note->kind, EventKind::Message);
    EXPECT_EQ(note->rpc_kind, RpcKind::Notification);

    // Our request is still pending (cat echoed it, nobody answered it).
    t.close(2s);
    const auto events = until_closed(t);
    ASSERT_EQ(events.size(), 2u);
    EXPECT_EQ(events[0].kind, EventKind::RequestFailed);
    EXPECT_EQ(events[0].request_id, id);
    EXPECT_EQ(events[1].kind, EventKind::Closed);
    EXPECT_EQ(events[1].exit_code, 0);
    EXPECT_THROW(t.request("ping"), mcp::Error);
}

// ---------------------------------------------------------------------------
// Stderr

TEST(Spawn, StderrLinesAreEvents) {
    Transport t = Transport::spawn(sh(
        "echo one >&2; echo 'two words' >&2; head -c 70000 /dev/zero | tr '\\0' x >&2; "
        "echo >&2; printf 'last without newline' >&2"));
    const auto events = until_closed(t);
    const auto lines = stderr_lines(events);
    ASSERT_EQ(lines.size(), 5u);
    EXPECT_EQ(lines[0], "one");
    EXPECT_EQ(lines[1], "two words");
    // A line over 64 KiB comes in pieces of 64 KiB.
    EXPECT_EQ(lines[2], std::string(65536, 'x'));
    EXPECT_EQ(lines[3], std::string(70000 - 65536, 'x'));
    EXPECT_EQ(lines[4], "last without newline");
    EXPECT_EQ(events.back().kind, EventKind::Closed);
    EXPECT_EQ(events.back().exit_code, 0);
    EXPECT_EQ(t.stderr_dropped(), 0u);
}

TEST(Spawn, StderrBeyondTheBacklogIsDroppedAndCounted) {
    // 3000 lines of 999 bytes (1000 with the newline): 3 MB, written as
    // fast as the pipe takes them. Taking the first events slowly lets more
    // than 1 MiB wait untaken: the oldest lines go, counted.
    Transport t = Transport::spawn(
        sh("line=$(head -c 999 /dev/zero | tr '\\0' y); "
           "i=0; while [ $i -lt 3000 ]; do echo \"$line\"; i=$((i+1)); done >&2"));
    std::uint64_t delivered = 0;
    std::size_t events = 0;
    bool closed = false;
    int exit_code = -2;
    const auto end = Clock::now() + 60s;
    while (!closed && Clock::now() < end) {
        auto ev = t.next_event(1s);
        if (!ev) continue;
        ++events;
        if (ev->kind() == EventKind::Stderr) {
            EXPECT_EQ(ev->size(), 999u);
            delivered += ev->size() + 1;
            if (events < 100) std::this_thread::sleep_for(2ms);
        } else if (ev->kind() == EventKind::Closed) {
            closed = true;
            exit_code = ev->exit_code();
        }
    }
    ASSERT_TRUE(closed);
    EXPECT_EQ(exit_code, 0);
    const std::uint64_t dropped = t.stderr_dropped();
    EXPECT_GT(dropped, 0u);
    EXPECT_EQ(dropped % 1000, 0u);  // whole lines
    EXPECT_EQ(delivered + dropped, 3000u * 1000u);
}

TEST(Spawn, StderrDiscardedGivesNoEvents) {
    Transport t = Transport::spawn(
        sh("echo nobody hears this >&2; echo '{\"jsonrpc\":\"2.0\",\"method\":\"done\"}'")
            .stderr_mode(StderrMode::Discard));
    const auto events = until_closed(t);
    EXPECT_TRUE(stderr_lines(events).empty());
    ASSERT_EQ(events.size(), 2u);
    EXPECT_EQ(events[0].kind, EventKind::Message);
    EXPECT_EQ(events[1].kind, EventKind::Closed);
    EXPECT_EQ(events[1].exit_code, 0);
}

// ---------------------------------------------------------------------------
// How it ends

TEST(Spawn, AServerExitingByItselfClosesWithItsExitCode) {
    // Reads our request and exits 3 without answering.
    Transport t = Transport::spawn(sh("read line; echo bye >&2; exit 3"));
    const std::int64_t id = t.request("tools/call", R"({"name":"x"})");
    const auto events = until_closed(t);
    ASSERT_GE(events.size(), 3u);
    EXPECT_EQ(stderr_lines(events), std::vector<std::string>{"bye"});
    const Got &failed = events[events.size() - 2];
    EXPECT_EQ(failed.kind, EventKind::RequestFailed);
    EXPECT_EQ(failed.request_id, id);
    EXPECT_EQ(events.back().kind, EventKind::Closed);
    EXPECT_EQ(events.back().exit_code, 3);
    EXPECT_EQ(events.back().term_signal, 0);
    const mcp::Error e = thrown_by([&] { t.notify("late"); });
    EXPECT_EQ(e.status(), Status::Closed);
    EXPECT_EQ(t.try_send("{}"), Status::Closed);
}

// A server that dies in its first second: its request fails at once (not at
// its 30 s deadline) with the exit status, and the transport, the thrown
// error and the stderr tail say why.
TEST(Spawn, AServerExitingAtOnceSaysWhyFromTheFirstFailure) {
    const auto t0 = Clock::now();
    Transport t = Transport::spawn(
        sh("echo 'Traceback (most recent call last):' >&2;"
           "echo \"ModuleNotFoundError: No module named 'foo'\" >&2; exit 1"));
    EXPECT_EQ(t.end_reason(), mcp::EndReason::None);
    EXPECT_EQ(t.end_text(), "");
    const std::int64_t id = t.request("tools/list", {}, 30s);
    const std::optional<Got> failed = next_non_stderr(t);
    ASSERT_TRUE(failed.has_value());
    EXPECT_LT(since(t0), 1000ms);
    EXPECT_EQ(failed->kind, EventKind::RequestFailed);
    EXPECT_EQ(failed->request_id, id);
    EXPECT_EQ(failed->exit_code, 1);
    bool early = false;
    EXPECT_EQ(t.end_reason(&early), mcp::EndReason::ServerExited);
    EXPECT_TRUE(early);
    const std::string why =
        "server exited with code 1 before its first message: "
        "ModuleNotFoundError: No module named 'foo'";
    EXPECT_EQ(t.end_text(), why);
    EXPECT_EQ(t.stderr_tail(),
              "Traceback (most recent call last):\n"
              "ModuleNotFoundError: No module named 'foo'\n");
    const mcp::Error e = thrown_by([&] { t.notify("late"); });
    EXPECT_EQ(e.status(), Status::Closed);
    EXPECT_EQ(std::string(e.what()).rfind("mcp::Transport::notify: " + why, 0), 0u) << e.what();
}

// call: the server asks back (roots/list) and waits for the answer, then
// notifies and answers. The call answers it (-32601 by default), returns
// the response, and the notification and stderr line are kept for
// next_event; a server that dies fails the call with why.
TEST(Spawn, CallAnswersThePeerAndKeepsTheRest) {
    const char *script =
        "read call; echo '{\"jsonrpc\":\"2.0\",\"id\":\"s1\",\"method\":\"roots/list\"}';"
        "read answer; echo \"$answer\" >&2;"
        "echo '{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{}}';"
        "echo '{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[]}}'; exec sleep 100";
    Transport t = Transport::spawn(sh(script));
    EXPECT_EQ(t.call("tools/call", R"({"name":"x"})", 20s),
              R"({"jsonrpc":"2.0","id":1,"result":{"content":[]}})");
    std::vector<Got> meanwhile;
    while (meanwhile.size() < 2) {
        auto ev = t.next_event(10s);
        ASSERT_TRUE(ev);
        meanwhile.push_back(copy(*ev));
    }
    const std::string answer =
        R"({"jsonrpc":"2.0","id":"s1","error":{"code":-32601,"message":"Method not found"}})";
    bool saw_answer = false, saw_note = false;
    for (const Got &g : meanwhile) {
        saw_answer |= g.kind == EventKind::Stderr && g.data == answer;
        saw_note |= g.kind == EventKind::Message &&
                    g.data.find("notifications/message") != std::string::npos;
    }
    EXPECT_TRUE(saw_answer);
    EXPECT_TRUE(saw_note);

    Transport dies = Transport::spawn(sh("echo 'npm ERR! 404' >&2; exit 1"));
    const mcp::Error e = thrown_by([&] { (void)dies.call("tools/list", {}, 20s); });
    EXPECT_EQ(e.status(), Status::Closed);
    EXPECT_NE(std::string(e.what()).find(
                  "server exited with code 1 before its first message: npm ERR! 404"),
              std::string::npos)
        << e.what();
    const auto kept = dies.next_event(0ms);
    ASSERT_TRUE(kept);
    EXPECT_EQ(kept->kind(), EventKind::Stderr);
    EXPECT_EQ(kept->data(), "npm ERR! 404");
}

// Restart: a server that crashes on its second request fails that call
// with why, refuses sends as Restarting until Restarted comes (with how
// the old one ended), then the next call reaches the new server; ids go on.
TEST(Spawn, ARestartedServerAnswersTheNextCall) {
    const char *script =
        "n=0; while read -r line; do n=$((n+1));"
        "if [ $n -eq 2 ]; then echo boom >&2; exit 7; fi;"
        "printf '%s\\n' \"$line\" | "
        "sed 's/.*\"id\":\\([0-9]*\\).*/{\"jsonrpc\":\"2.0\",\"id\":\\1,\"result\":{}}/'; done";
    mcp::RestartPolicy policy;
    policy.backoff = 50ms;
    policy.max_backoff = 50ms;
    EXPECT_EQ(thrown_by([&] {
                  mcp::RestartPolicy bad = policy;
                  bad.max_backoff = 10ms;
                  (void)sh(script).restart(bad);
              }).status(),
              Status::InvalidArgument);
    Transport t = Transport::spawn(sh(script).restart(policy));
    const std::int32_t first = t.pid();
    EXPECT_EQ(t.call("tools/list", {}, 20s), R"({"jsonrpc":"2.0","id":1,"result":{}})");
    const mcp::Error crashed = thrown_by([&] { (void)t.call("tools/call", {}, 20s); });
    EXPECT_EQ(crashed.status(), Status::Closed);
    EXPECT_NE(std::string(crashed.what()).find("server exited with code 7: boom"),
              std::string::npos)
        << crashed.what();
    EXPECT_EQ(thrown_by([&] { t.notify("notifications/x"); }).status(), Status::Restarting);
    std::optional<Got> restarted;
    while (!restarted) {
        const std::optional<Got> got = next_non_stderr(t);
        ASSERT_TRUE(got.has_value());
        if (got->kind == EventKind::Restarted) restarted = got;
    }
    EXPECT_EQ(restarted->exit_code, 7);
    EXPECT_EQ(t.restarts(), 1u);
    EXPECT_NE(t.pid(), first);
    EXPECT_GT(t.pid(), 0);
    EXPECT_EQ(t.end_reason(), mcp::EndReason::None);
    EXPECT_EQ(t.call("tools/list", {}, 20s), R"({"jsonrpc":"2.0","id":3,"result":{}})");
    t.close(2s);
    for (const Got &g : until_closed(t)) EXPECT_NE(g.kind, EventKind::Restarted);
    EXPECT_EQ(t.restarts(), 1u);
}

TEST(Spawn, AServerThatHonoursSigtermEndsAtTheGrace) {
    Transport t = Transport::spawn(sh("echo ready >&2; exec sleep 30"));
    EXPECT_EQ(first_stderr_line(t), "ready");
    const auto grace = 200ms;
    const auto t0 = Clock::now();
    t.close(grace);
    const auto events = until_closed(t);
    const auto elapsed = since(t0);
    ASSERT_FALSE(events.empty());
    EXPECT_EQ(events.back().kind, EventKind::Closed);
    EXPECT_EQ(events.back().term_signal, SIGTERM);
    EXPECT_EQ(events.back().exit_code, -1);
    EXPECT_GE(elapsed, grace);
    EXPECT_LT(elapsed, 5s);
}

TEST(Spawn, ASigtermIgnoringServerIsKilledAtTwiceTheGrace) {
    // SIG_IGN survives exec: sleep ignores SIGTERM too.
    Transport t = Transport::spawn(sh("trap '' TERM; echo ready >&2; exec sleep 30"));
    EXPECT_EQ(first_stderr_line(t), "ready");
    const auto grace = 200ms;
    const auto t0 = Clock::now();
    t.close(grace);
    const auto events = until_closed(t);
    const auto elapsed = since(t0);
    ASSERT_FALSE(events.empty());
    EXPECT_EQ(events.back().kind, EventKind::Closed);
    // Closed comes right after the SIGKILL, with the status if the server
    // was reaped within the few milliseconds the library waits for it. On
    // a loaded machine it may not have been: then neither is known
    // (term_signal 0, exit_code -1), and the server is reaped at the free.
    const std::int32_t sig = events.back().term_signal;
    EXPECT_TRUE(sig == SIGKILL || sig == 0) << sig;
    EXPECT_EQ(events.back().exit_code, -1);
    EXPECT_GE(elapsed, 2 * grace);
    EXPECT_LT(elapsed, 2 * grace + 5s);
    const std::int32_t pid = t.pid();
    t = Transport();  // frees the old one: reaped by now at the latest
    EXPECT_EQ(::waitpid(pid, nullptr, WNOHANG), -1);
    EXPECT_EQ(errno, ECHILD);
}

TEST(Spawn, AGrandchildHoldingThePipesIsKilledWithTheGroup) {
    // The server (sleep) dies at SIGTERM, but its child ignores SIGTERM and
    // holds stdout and stderr open: only SIGKILL to the group ends it.
    Transport t = Transport::spawn(
        sh("(trap '' TERM; exec sleep 30) & echo $! >&2; exec sleep 30"));
    const std::string grandchild = first_stderr_line(t);
    const pid_t gpid = static_cast<pid_t>(std::atoi(grandchild.c_str()));
    ASSERT_GT(gpid, 0) << grandchild;
    EXPECT_EQ(::getpgid(gpid), t.pid());  // in the server's group
    const auto grace = 200ms;
    const auto t0 = Clock::now();
    t.close(grace);
    const auto events = until_closed(t);
    const auto elapsed = since(t0);
    ASSERT_FALSE(events.empty());
    EXPECT_EQ(events.back().kind, EventKind::Closed);
    EXPECT_EQ(events.back().term_signal, SIGTERM);  // the server itself
    EXPECT_GE(elapsed, 2 * grace);
    EXPECT_LT(elapsed, 2 * grace + 5s);
    EXPECT_TRUE(gone_within(gpid, 5s)) << "grandchild " << gpid << " still runs";
}

TEST(Spawn, TheDestructorClosesAndReapsAnOpenServer) {
    std::int32_t pid = -1;
    const auto t0 = Clock::now();
    {
        Transport t = Transport::spawn(Command("cat"));
        pid = t.pid();
        ASSERT_GT(pid, 0);
    }  // closes its stdin: cat exits at once
    EXPECT_LT(since(t0), 4s);
    EXPECT_EQ(::waitpid(pid, nullptr, WNOHANG), -1);
    EXPECT_EQ(errno, ECHILD);
}

TEST(Spawn, TheSameCommandSpawnsTwice) {
    const Command cmd = sh("echo $$ >&2");
    Transport a = Transport::spawn(cmd);
    Transport b = Transport::spawn(cmd);
    EXPECT_NE(a.pid(), b.pid());
    EXPECT_EQ(stderr_lines(until_closed(a)), std::vector<std::string>{std::to_string(a.pid())});
    EXPECT_EQ(stderr_lines(until_closed(b)), std::vector<std::string>{std::to_string(b.pid())});
}

TEST(Spawn, KillOnHostExit) {
#if defined(__linux__)
    Transport t = Transport::spawn(Command("cat"), mcp::SpawnFlags::KillOnHostExit);
    EXPECT_GT(t.pid(), 0);
    t.close(1s);
    EXPECT_EQ(until_closed(t).back().exit_code, 0);
#else
    const mcp::Error e = thrown_by(
        [] { (void)Transport::spawn(Command("cat"), mcp::SpawnFlags::KillOnHostExit); });
    EXPECT_EQ(e.status(), Status::InvalidArgument);
#endif
}

TEST(Spawn, PidAndStderrDroppedOfOtherTransports) {
    Transport memory;
    EXPECT_EQ(memory.pid(), -1);
    EXPECT_EQ(memory.stderr_dropped(), 0u);
    Transport moved = std::move(memory);
    EXPECT_EQ(memory.pid(), -1);  // empty
    EXPECT_EQ(memory.stderr_dropped(), 0u);
}

// ---------------------------------------------------------------------------
// Spawn failures

TEST(Spawn, AProgramNotFoundFailsWithEnoent) {
    const mcp::Error e =
        thrown_by([] { (void)Transport::spawn(Command("mcp-stdio-no-such-program-xyz")); });
    EXPECT_EQ(e.status(), Status::SpawnFailed);
    EXPECT_EQ(e.code(), MCP_STATUS_SPAWN_FAILED);
    EXPECT_EQ(e.os_error(), std::errc::no_such_file_or_directory);
    EXPECT_EQ(&e.os_error().category(), &std::system_category());
    const std::string what = e.what();
    EXPECT_NE(what.find("mcp::Transport::spawn"), std::string::npos) << what;
    EXPECT_NE(what.find(mcp_status_str(MCP_STATUS_SPAWN_FAILED)), std::string::npos) << what;
    // Named, with the PATH it was looked up in.
    EXPECT_NE(what.find("cannot start `mcp-stdio-no-such-program-xyz`: not found in PATH "
                        "(searched: "),
              std::string::npos)
        << what;

    const mcp::Error abs = thrown_by([] { (void)Transport::spawn(Command("/nonexistent/prog")); });
    EXPECT_EQ(abs.status(), Status::SpawnFailed);
    EXPECT_EQ(abs.os_error(), std::errc::no_such_file_or_directory);
    const std::string abs_what = abs.what();
    EXPECT_NE(abs_what.find("cannot start `/nonexistent/prog`: "), std::string::npos) << abs_what;
    EXPECT_NE(abs_what.find(std::strerror(ENOENT)), std::string::npos) << abs_what;

    // An empty program is not a missing one.
    EXPECT_EQ(thrown_by([] { (void)Transport::spawn(Command("")); }).status(),
              Status::EmptyProgram);
}

TEST(Spawn, AMissingWorkingDirectoryFailsWithEnoent) {
    const mcp::Error e =
        thrown_by([] { (void)Transport::spawn(Command("cat").cwd("/nonexistent/dir")); });
    EXPECT_EQ(e.status(), Status::SpawnFailed);
    EXPECT_EQ(e.os_error(), std::errc::no_such_file_or_directory);
}

TEST(Spawn, AFileThatIsNotExecutableFailsWithEacces) {
    char path[] = "/tmp/mcp-stdio-spawn-XXXXXX";
    const int fd = ::mkstemp(path);
    ASSERT_GE(fd, 0);
    ::close(fd);
    ASSERT_EQ(::chmod(path, 0644), 0);
    const mcp::Error e = thrown_by([&] { (void)Transport::spawn(Command(path)); });
    ::unlink(path);
    EXPECT_EQ(e.status(), Status::SpawnFailed);
    EXPECT_EQ(e.os_error(), std::errc::permission_denied);
}

TEST(Spawn, StatusText) {
    std::ostringstream os;
    os << Status::SpawnFailed;
    EXPECT_EQ(os.str(), mcp_status_str(MCP_STATUS_SPAWN_FAILED));
    EXPECT_EQ(mcp::make_error_code(Status::SpawnFailed).message(),
              mcp_status_str(MCP_STATUS_SPAWN_FAILED));
    EXPECT_EQ(static_cast<std::int32_t>(Status::SpawnFailed), -11);
}

// ---------------------------------------------------------------------------
// Command

TEST(Command, MoveSemantics) {
    Command a("cat");
    EXPECT_TRUE(a);
    McpCommand *raw = a.native_handle();
    Command b = std::move(a);
    EXPECT_FALSE(a);
    EXPECT_EQ(a.native_handle(), nullptr);
    EXPECT_EQ(b.native_handle(), raw);

    // A moved-from command refuses everything, and so does spawning it.
    EXPECT_EQ(thrown_by([&] { a.arg("x"); }).status(), Status::NullArgument);
    EXPECT_EQ(thrown_by([&] { a.env("K", "V"); }).status(), Status::NullArgument);
    EXPECT_EQ(thrown_by([&] { a.env_mode(EnvMode::Clear); }).status(), Status::NullArgument);
    EXPECT_EQ(thrown_by([&] { a.stderr_mode(StderrMode::Discard); }).status(),
              Status::NullArgument);
    EXPECT_EQ(thrown_by([&] { a.cwd("/"); }).status(), Status::NullArgument);
    EXPECT_EQ(thrown_by([&] { (void)Transport::spawn(a); }).status(), Status::NullArgument);

    // Assigning to it revives it; the old command of the target is freed.
    Command c("true");
    a = std::move(c);
    EXPECT_TRUE(a);
    EXPECT_FALSE(c);
    a = std::move(b);
    EXPECT_EQ(a.native_handle(), raw);
    Command &self = a;
    a = std::move(self);  // self-assignment: a no-op
    EXPECT_EQ(a.native_handle(), raw);

    swap(a, b);
    EXPECT_FALSE(a);
    EXPECT_EQ(b.native_handle(), raw);

    // Built in one expression, moved into place.
    Command built = Command("sh").arg("-c").arg("exit 7").stderr_mode(StderrMode::Discard);
    Transport t = Transport::spawn(built);
    EXPECT_EQ(until_closed(t).back().exit_code, 7);

    // release / adopt.
    McpCommand *released = built.release();
    EXPECT_FALSE(built);
    Command adopted(released);
    EXPECT_EQ(adopted.native_handle(), released);
    std::vector<Command> many;
    for (int i = 0; i < 10; ++i) many.emplace_back("cat");
    EXPECT_TRUE(many.back());
}

TEST(Command, ArgumentErrors) {
    using namespace std::string_view_literals;
    Command c("cat");
    EXPECT_EQ(thrown_by([&] { c.env("", "v"); }).status(), Status::InvalidArgument);
    EXPECT_EQ(thrown_by([&] { c.env("A=B", "v"); }).status(), Status::InvalidArgument);
    EXPECT_EQ(thrown_by([&] { c.env_remove(""); }).status(), Status::InvalidArgument);
    EXPECT_EQ(thrown_by([&] { c.env("K", "a\0b"sv); }).status(), Status::InvalidText);
    EXPECT_EQ(thrown_by([&] { c.arg("a\0b"sv); }).status(), Status::InvalidText);
    EXPECT_EQ(thrown_by([&] { c.cwd("/\0x"sv); }).status(), Status::InvalidText);
    EXPECT_EQ(thrown_by([&] { c.env_mode(static_cast<EnvMode>(7)); }).status(),
              Status::InvalidArgument);
    EXPECT_EQ(thrown_by([&] { c.stderr_mode(static_cast<StderrMode>(-1)); }).status(),
              Status::InvalidArgument);
    EXPECT_EQ(thrown_by([] { Command bad("c\0at"sv); }).status(), Status::InvalidText);
    // After those, the command is still usable and unchanged.
    Transport t = Transport::spawn(c);
    t.close(1s);
    EXPECT_EQ(until_closed(t).back().exit_code, 0);
}

TEST(Command, ArgumentsArePassedAsIs) {
    const std::string long_arg(1000, 'a');
    Transport t = Transport::spawn(Command("sh").args(
        {"-c", R"(for a in "$@"; do printf '[%s]\n' "$a" >&2; done)", "sh", "two words", "",
         "$HOME", "*", long_arg}));
    EXPECT_EQ(stderr_lines(until_closed(t)),
              (std::vector<std::string>{"[two words]", "[]", "[$HOME]", "[*]",
                                        "[" + long_arg + "]"}));
}

// What the server sees of the variables: "<secret>|<FOO>|<HOME>".
std::string env_seen(Command cmd) {
    Transport t = Transport::spawn(cmd.args(
        {"-c",
         R"(printf '%s|%s|%s\n' "${MCP_STDIO_TEST_SECRET-unset}" "${FOO-unset}" "${HOME-unset}" >&2)"}));
    const auto lines = stderr_lines(until_closed(t));
    return lines.size() == 1 ? lines[0] : "?";
}

TEST(Command, EnvModes) {
    ASSERT_EQ(::setenv("MCP_STDIO_TEST_SECRET", "s3cret", 1), 0);
    const char *home_env = std::getenv("HOME");
    const std::string home = home_env != nullptr ? home_env : "unset";

    // Default: only the listed variables (HOME among them), no secret.
    EXPECT_EQ(env_seen(Command("sh")), "unset|unset|" + home);
    EXPECT_EQ(env_seen(Command("sh").env("FOO", "bar")), "unset|bar|" + home);
    // Inherit: everything.
    EXPECT_EQ(env_seen(Command("sh").env_mode(EnvMode::Inherit)), "s3cret|unset|" + home);
    EXPECT_EQ(env_seen(Command("sh").env_mode(EnvMode::Inherit).env_remove("MCP_STDIO_TEST_SECRET")),
              "unset|unset|" + home);
    // Clear: only what we set; sh is still found through the host's PATH.
    EXPECT_EQ(env_seen(Command("sh").env_mode(EnvMode::Clear).env("FOO", "bar")),
              "unset|bar|unset");
    // The overlays apply whenever set, later ones win.
    EXPECT_EQ(env_seen(Command("sh").env("FOO", "a").env_mode(EnvMode::Clear).env("FOO", "b")),
              "unset|b|unset");
    EXPECT_EQ(env_seen(Command("sh").env("FOO", "a").env_remove("FOO")), "unset|unset|" + home);
    EXPECT_EQ(env_seen(Command("sh").env("FOO", "").env_remove("HOME")), "unset||unset");
    ::unsetenv("MCP_STDIO_TEST_SECRET");
}

TEST(Command, WorkingDirectory) {
    Transport t = Transport::spawn(Command("sh").args({"-c", "pwd >&2"}).cwd("/"));
    EXPECT_EQ(stderr_lines(until_closed(t)), std::vector<std::string>{"/"});
}

// ---------------------------------------------------------------------------
// open_stdio

TEST(OpenStdio, AnUnknownFlagChangesNothing) {
    const mcp::Error e = thrown_by(
        [] { (void)Transport::open_stdio(static_cast<mcp::StdioFlags>(MCP_TRANSPORT_BORROW_FDS)); });
    EXPECT_EQ(e.status(), Status::UnknownFlags);
    EXPECT_EQ(::fcntl(1, F_GETFL) & O_NONBLOCK, 0);
}

// A forked child serves on its own stdin and stdout with GuardStdout: its
// stray write to descriptor 1 lands on its stderr, not in the stream.
TEST(OpenStdio, GuardStdoutKeepsStrayOutputOutOfTheStream) {
    int to_child[2], from_child[2], err[2];
    ASSERT_EQ(::pipe(to_child), 0);
    ASSERT_EQ(::pipe(from_child), 0);
    ASSERT_EQ(::pipe(err), 0);
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        ::dup2(to_child[0], 0);
        ::dup2(from_child[1], 1);
        ::dup2(err[1], 2);
        for (int fd : {to_child[0], to_child[1], from_child[0], from_child[1], err[0], err[1]}) {
            ::close(fd);
        }
        int code = 0;
        try {
            Transport t = Transport::open_stdio(mcp::StdioFlags::GuardStdout);
            const char stray[] = "stray output\n";
            if (::write(1, stray, sizeof stray - 1) < 0) code = 3;
            while (auto ev = t.next_event(Transport::forever)) {
                if (ev->kind() == EventKind::Message && ev->rpc_kind() == RpcKind::Request) {
                    t.respond(ev->envelope().id(), R"({"pong":true})");
                }
            }
        } catch (...) {
            code = 2;
        }
        ::_exit(code);
    }
    ::close(to_child[0]);
    ::close(from_child[1]);
    ::close(err[1]);
    {
        Transport t = Transport::open_fds(from_child[0], to_child[1]);
        const std::int64_t id = t.request("ping", {}, 10s);
        auto got = next_non_stderr(t);
        ASSERT_TRUE(got);
        EXPECT_EQ(got->kind, EventKind::Response);  // not an Invalid "stray output"
        EXPECT_EQ(got->request_id, id);
        EXPECT_EQ(got->data, R"({"jsonrpc":"2.0","id":1,"result":{"pong":true}})");
        t.close(2s);
        const auto events = until_closed(t);
        ASSERT_EQ(events.size(), 1u);  // Closed: the child saw our end and ended its own
    }
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0);
    std::string stray;
    char buf[256];
    for (ssize_t n; (n = ::read(err[0], buf, sizeof buf)) > 0;) stray.append(buf, static_cast<std::size_t>(n));
    ::close(err[0]);
    EXPECT_NE(stray.find("stray output\n"), std::string::npos) << stray;
}

}  // namespace

#else

TEST(Spawn, NotAvailableOnThisPlatform) { GTEST_SKIP() << "mcp_stdio.h has no MCP_STDIO_HAS_POSIX_IO"; }

#endif
