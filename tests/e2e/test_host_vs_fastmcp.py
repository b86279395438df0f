"""Our C host (examples/mcp_host.c) against a FastMCP server written with the
official Python SDK (tests/e2e/fastmcp_server.py)."""

import re

from conftest import FASTMCP_SERVER, call, first_text, run_host

TEXT = "grüße, мир, 世界 ✓ 🎉\nline two\twith a tab and a \\ backslash"


def test_tools_resource_and_server_to_client_requests():
    run = run_host(
        [
            *call("echo", text=TEXT),
            *call("add", a=2, b=40),
            *call("ping_client"),  # the server pings us mid-call
            *call("list_client_roots"),  # ... asks for roots/list
            *call("ask_sampling"),  # ... and sends a request we do not implement
            "--read-resource", "e2e://greeting/mcp-stdio",
            "--expect-tool", "echo",
            "--expect-tool", "add",
            "--expect-text", "line two",
            "--expect-text", "Hello, mcp-stdio!",
        ],
        FASTMCP_SERVER,
    )
    # FastMCP exits by itself when its stdin closes: no --allow-kill.
    assert run.returncode == 0, run.describe()
    assert run.summary == "ok: 8/8 expected responses received and checked", run.describe()

    # The Python SDK 1.x predates MCP 2026-07-28: it refuses the probe (an
    # implementation-defined error), and the initialize handshake follows.
    (probe,) = run.requests("server/discover")
    assert "error" in run.response_to(probe)
    init = run.results("initialize")[0]
    assert init["serverInfo"]["name"] == "e2e-fastmcp"
    assert init["protocolVersion"] == "2025-11-25"
    assert run.tools == ["echo", "add", "ping_client", "list_client_roots", "ask_sampling", "chatty"]

    echo, add, ping, roots, sampling = run.results("tools/call")
    assert first_text(echo) == TEXT
    assert echo["structuredContent"] == {"result": TEXT}
    assert first_text(add) == "42"
    assert add["structuredContent"] == {"result": 42}
    assert first_text(ping).startswith("pong: ")
    assert first_text(roots) == "roots: 0"
    assert first_text(sampling) == "sampling error: -32601"
    assert run.texts[:5] == [TEXT, "42", first_text(ping), "roots: 0", "sampling error: -32601"]

    # What the server asked and what we answered.
    (ping_req,) = run.server_requests("ping")
    assert run.our_reply_to(ping_req)["result"] == {}
    (roots_req,) = run.server_requests("roots/list")
    assert run.our_reply_to(roots_req)["result"] == {"roots": []}
    (sampling_req,) = run.server_requests("sampling/createMessage")
    assert run.our_reply_to(sampling_req)["error"]["code"] == -32601

    (resource,) = run.results("resources/read")
    assert resource["contents"][0]["text"] == "Hello, mcp-stdio!"
    assert run.texts[5] == "Hello, mcp-stdio!"


def test_chatty_stderr_does_not_block():
    """20 MB of stderr from the server while a call is pending: the transport
    keeps draining stderr, so the server never blocks on it, and the answer
    still arrives. The host forwards the lines, prefixed, in order; what it
    could not take in time (more than 1 MiB of lines waiting) was dropped,
    oldest first, and is counted."""
    lines = 250_000  # 87 bytes each: about 21 MB, far beyond a pipe's 64 KiB
    run = run_host([*call("chatty", lines=lines), "--timeout", "60"], FASTMCP_SERVER)
    assert run.returncode == 0, run.describe()
    assert run.texts == ["done"]
    forwarded = [l for l in run.stderr.splitlines() if "chatty stderr line" in l]
    numbers = [int(l.split()[5]) for l in forwarded]
    assert numbers == sorted(set(numbers)), "in order, none twice"
    assert forwarded[-1] == f"mcp_host: [server] chatty stderr line {lines - 1:06d} " + "x" * 60
    dropped = re.search(r"(\d+) bytes of the server's stderr were dropped", run.stderr)
    dropped = int(dropped.group(1)) if dropped else 0
    # Every chatty line was forwarded or counted (the count may also hold a
    # few of the SDK's own log lines, dropped with them).
    assert lines * 87 <= len(forwarded) * 87 + dropped <= lines * 87 + 64 * 1024
