"""Our C host against a badly behaved server (tests/e2e/rogue_server.py) and
against our own server: bad lines are reported and skipped, server requests are
answered, a chatty stderr cannot deadlock it, shutdown always ends, a server
from before MCP 2026-07-28 gets the initialize handshake, and its checks fail
when they should."""

import time

from conftest import PYTHON, SERVER, E2E_DIR, call, run_host

ROGUE = [PYTHON, str(E2E_DIR / "rogue_server.py")]


def test_bad_lines_are_reported_and_the_session_goes_on():
    run = run_host([*call("echo", text="x"), "--max-line", str(1 << 20)], ROGUE)
    assert run.returncode == 0, run.describe()
    assert run.summary == "ok: 3/3 expected responses received and checked"
    err = run.stderr
    # The probe got an error: a legacy server, so initialize followed.
    ours = [m["method"] for m in run.sent if "method" in m]  # not our replies
    assert ours[:3] == ["server/discover", "initialize", "notifications/initialized"]
    assert "server/discover: error -32601: a server from before MCP 2026-07-28" in err
    assert run.requests("tools/list")[0].get("params") is None  # no _meta in legacy
    assert "bad line from server (not JSON), skipped: this is not json" in err
    assert 'bad line from server (not JSON-RPC 2.0), skipped: {"hello": "world"}' in err
    assert "bad line from server: too long (more than 1048576 bytes" in err
    assert "response with an id we are not waiting for, ignored" in err
    assert "answering the server's request \"sampling/createMessage\" with -32601" in err

    # The host answered the server's requests, which the server reports back.
    assert run.texts == [
        's-1={} 7={"roots": []} 8={"code": -32601, "message": "Method not found"}'
    ]
    # The initialize response came byte by byte with CRLF; the last message
    # had no newline at all (it counts at the end of the stream).
    assert run.results("initialize")[0]["serverInfo"]["name"] == "rogue"
    assert run.received[-1]["params"]["data"] == "bye"

    # All 10000 stderr lines came through, prefixed, and the unterminated last one.
    chatter = [l for l in err.splitlines() if l.startswith("mcp_host: [server] rogue chatter ")]
    assert len(chatter) == 10000
    assert "mcp_host: [server] rogue: end of input, no newline after this" in err.splitlines()


def test_silent_probe_times_out_into_initialize():
    """A legacy server that does not answer server/discover at all: after
    --timeout the probe is cancelled and the initialize handshake follows."""
    run = run_host([*call("echo", text="x"), "--timeout", "2"], [*ROGUE, "--silent-probe"])
    assert run.returncode == 0, run.describe()
    assert "no answer to server/discover in 2000 ms" in run.stderr
    (probe,) = run.requests("server/discover")
    cancel = run.sent[1]
    assert cancel["method"] == "notifications/cancelled", run.sent
    assert cancel["params"]["requestId"] == probe["id"]
    assert run.results("initialize")[0]["serverInfo"]["name"] == "rogue"
    assert run.summary == "ok: 3/3 expected responses received and checked"


def test_server_that_ignores_eof_is_terminated():
    start = time.monotonic()
    run = run_host([*call("echo", text="x"), "--shutdown-timeout", "1"], [*ROGUE, "--ignore-eof"])
    assert time.monotonic() - start < 20
    assert run.returncode == 1, run.describe()  # not exiting by itself is a failure...
    assert "did not exit within 1000 ms of its stdin closing; sending SIGTERM" in run.stderr
    assert "the server was killed by signal 15" in run.stderr
    assert run.texts  # ... but the session itself went through


def test_server_that_ignores_sigterm_is_killed():
    run = run_host(
        [*call("echo", text="x"), "--shutdown-timeout", "1", "--allow-kill"],
        [*ROGUE, "--ignore-eof", "--ignore-term"],
    )
    assert run.returncode == 0, run.describe()  # ... unless --allow-kill
    assert "the server ignored SIGTERM; sending SIGKILL" in run.stderr
    assert "the server was killed by signal 9" in run.stderr


def test_server_dying_mid_session():
    run = run_host([*call("echo", text="x")], [*ROGUE, "--die-after-init"])
    assert run.returncode == 1, run.describe()
    assert run.results("initialize")
    # The host says why: the server's exit (and its last stderr line), or a
    # refused write when it died before the request went out.
    assert "no answer to tools/list (id 3): server exited with code" in run.stderr \
        or "cannot write" in run.stderr, run.describe()
    assert run.summary.startswith("FAILED: 1/")


def test_missing_server_command():
    run = run_host([], ["/nonexistent/mcp-server"])
    assert run.returncode == 1
    assert "cannot start `/nonexistent/mcp-server`: No such file or directory" in run.stderr


def test_demo_session_with_our_server():
    """Our server speaks MCP 2026-07-28: server/discover, then every request
    with its _meta, and no initialize."""
    run = run_host([], [SERVER])
    assert run.returncode == 0, run.describe()
    assert run.tools == ["echo", "add"]
    assert run.texts == ["hello from mcp-stdio", "5"]
    assert [m["method"] for m in run.sent] == ["server/discover", "tools/list"] + ["tools/call"] * 2
    for request in run.sent:
        meta = request["params"]["_meta"]
        assert meta["io.modelcontextprotocol/protocolVersion"] == "2026-07-28"
        assert meta["io.modelcontextprotocol/clientCapabilities"] == {}
        assert meta["io.modelcontextprotocol/clientInfo"]["name"] == "mcp-stdio-demo-host"
    (discover,) = run.results("server/discover")
    assert "2026-07-28" in discover["supportedVersions"]
    assert all(r["resultType"] == "complete" for r in run.results("tools/call"))
    assert 'connected to "mcp-stdio-demo-server"' in run.stderr


def test_unmet_expectations_fail():
    run = run_host(
        [
            *call("echo", text="something else"),
            *call("no-such-tool"),
            "--expect-text", "not in any answer",
            "--expect-tool", "missing-tool",
        ],
        [SERVER],
    )
    assert run.returncode == 1, run.describe()
    assert "tools/list does not offer the tool missing-tool" in run.stderr
    assert "no text contained not in any answer" in run.stderr
    (_, unknown) = run.requests("tools/call")
    assert run.response_to(unknown)["error"]["code"] == -32602
    assert run.summary == "FAILED: 2/4 expected responses received and checked"


def test_bad_usage():
    for options in (["--call", "echo", "not json"], ["--timeout", "soon"], ["--bogus"]):
        run = run_host(options, [SERVER])
        assert run.returncode == 2, (options, run.describe())
        assert "usage:" in run.stderr


def test_protocol_version_option():
    """With --legacy the host skips the probe and asks initialize for the
    version given; our server agrees to any legacy one it knows, and answers
    its newest to one it does not, which the host accepts."""
    for asked, answered in (
        ("2024-11-05", "2024-11-05"),
        ("2025-03-26", "2025-11-25"),  # our server does not take batches
        ("1999-01-01", "2025-11-25"),
    ):
        run = run_host(["--legacy", "--protocol-version", asked], [SERVER])
        assert run.returncode == 0, run.describe()
        assert run.sent[0]["params"]["protocolVersion"] == asked
        assert run.results("initialize")[0]["protocolVersion"] == answered
        assert not run.requests("server/discover")
