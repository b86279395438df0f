"""Our C host (examples/mcp_host.c) against a FastMCP server written with the
official Python SDK (tests/e2e/fastmcp_server.py)."""

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

    init = run.results("initialize")[0]
    assert init["serverInfo"]["name"] == "e2e-fastmcp"
    assert init["protocolVersion"] == "2025-06-18"
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
    """20 MB of stderr from the server while a call is pending: the host keeps
    draining stderr (forwarding it, prefixed) and the answer still arrives."""
    lines = 250_000  # 87 bytes each: about 21 MB, far beyond a pipe's 64 KiB
    run = run_host([*call("chatty", lines=lines), "--timeout", "60"], FASTMCP_SERVER)
    assert run.returncode == 0, run.describe()
    assert run.texts == ["done"]
    forwarded = [l for l in run.stderr.splitlines() if "chatty stderr line" in l]
    assert len(forwarded) == lines
    assert forwarded[0] == "mcp_host: [server] chatty stderr line 000000 " + "x" * 60
    assert forwarded[-1].startswith(f"mcp_host: [server] chatty stderr line {lines - 1:06d} ")
