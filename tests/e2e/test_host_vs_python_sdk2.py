"""Our C host (examples/mcp_host.c) against an MCPServer server written with
the official Python SDK 2.x (tests/e2e/sdk2_server.py, run by the python of
.deps/venv-sdk2).

What SDK 2.3.0 does: its server answers our server/discover probe (MCP
2026-07-28) with supportedVersions ["2026-07-28"], so the whole session is
modern: no initialize, every request carries _meta. Its stdio loop serves
both eras and lets the client's first request pick one (a request with the
2026-07-28 _meta envelope, other than initialize, opens a modern
connection: mcp/server/runner.py, serve_dual_era_loop). On a 2026-07-28
connection it sends no server-to-client request at all: ping, roots/list and
sampling/createMessage fail inside the server with NoBackChannelError
(-32600), because that version forbids them. With --legacy the host opens
with initialize instead; the server then speaks 2025-11-25 and does send
them, and the host answers."""

from conftest import SDK2_SERVER, call, first_text, run_host, subscription_stream

TEXT = "grüße, мир, 世界 ✓ 🎉\nline two\twith a tab and a \\ backslash"
MODERN = "2026-07-28"
TOOLS = ["change_tools", "echo", "add", "ping_client", "list_client_roots", "ask_sampling"]
SERVER_TO_CLIENT = [*call("ping_client"), *call("list_client_roots"), *call("ask_sampling")]


def test_modern_session_via_server_discover():
    run = run_host(
        [
            *call("echo", text=TEXT),
            *call("add", a=2, b=40),
            *SERVER_TO_CLIENT,
            "--read-resource", "e2e://greeting/mcp-stdio",
            "--expect-tool", "echo",
            "--expect-tool", "add",
            "--expect-text", "line two",
            "--expect-text", "Hello, mcp-stdio!",
        ],
        SDK2_SERVER,
    )
    # The server exits by itself when its stdin closes: no --allow-kill.
    assert run.returncode == 0, run.describe()
    assert run.summary == "ok: 8/8 expected responses received and checked", run.describe()

    # The probe succeeds: 2026-07-28, and no handshake at all.
    (probe,) = run.requests("server/discover")
    assert probe["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] == MODERN
    discover = run.response_to(probe)["result"]
    assert discover["supportedVersions"] == [MODERN]
    assert discover["_meta"]["io.modelcontextprotocol/serverInfo"] == {
        "name": "e2e-sdk2",
        "version": "2.3.0-e2e",
    }
    assert "tools" in discover["capabilities"]
    assert [m.get("method") for m in run.sent if "method" in m] == [
        "server/discover", "tools/list", *["tools/call"] * 5, "resources/read"
    ]
    assert all(m["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] == MODERN
               for m in run.sent)
    assert f'connected to "e2e-sdk2" "2.3.0-e2e", protocol {MODERN}\n' in run.stderr

    assert run.tools == TOOLS
    echo, add, ping, roots, sampling = run.results("tools/call")
    assert first_text(echo) == TEXT
    assert echo["structuredContent"] == {"result": TEXT}
    assert first_text(add) == "42"
    assert add["structuredContent"] == {"result": 42}
    # 2026-07-28 has no server-to-client requests: the SDK refuses to send them.
    assert first_text(ping) == "ping error: NoBackChannelError -32600"
    assert first_text(roots) == "roots error: NoBackChannelError -32600"
    assert first_text(sampling) == "sampling error: NoBackChannelError -32600"
    assert [m for m in run.received if "method" in m] == []
    assert run.texts[:5] == [TEXT, "42", *map(first_text, (ping, roots, sampling))]

    (resource,) = run.results("resources/read")
    assert resource["contents"][0]["text"] == "Hello, mcp-stdio!"
    assert run.texts[5] == "Hello, mcp-stdio!"


def test_legacy_session_with_server_to_client_requests():
    """--legacy: the initialize handshake; the same server then speaks
    2025-11-25 and sends ping, roots/list and sampling/createMessage mid-call,
    as FastMCP (SDK 1.x) does."""
    run = run_host(["--legacy", *call("echo", text=TEXT), *SERVER_TO_CLIENT], SDK2_SERVER)
    assert run.returncode == 0, run.describe()
    assert run.summary == "ok: 6/6 expected responses received and checked", run.describe()

    assert run.requests("server/discover") == []
    (init,) = run.results("initialize")
    assert init["protocolVersion"] == "2025-11-25"
    assert init["serverInfo"] == {"name": "e2e-sdk2", "version": "2.3.0-e2e"}
    assert [m["method"] for m in run.sent if "method" in m][:3] == [
        "initialize", "notifications/initialized", "tools/list"
    ]
    assert run.tools == TOOLS

    echo, ping, roots, sampling = run.results("tools/call")
    assert first_text(echo) == TEXT
    assert first_text(ping) == "pong: {}"
    assert first_text(roots) == "roots: 0"
    assert first_text(sampling) == "sampling error: MCPError -32601"

    (ping_req,) = run.server_requests("ping")
    assert run.our_reply_to(ping_req)["result"] == {}
    (roots_req,) = run.server_requests("roots/list")
    assert run.our_reply_to(roots_req)["result"] == {"roots": []}
    (sampling_req,) = run.server_requests("sampling/createMessage")
    assert run.our_reply_to(sampling_req)["error"]["code"] == -32601


def test_tool_error_fails_the_host():
    """Bad arguments: MCPServer answers with a tool result with isError true
    (not a protocol error); the host reports it and fails the run."""
    run = run_host(call("add", a="not a number", b=1), SDK2_SERVER)
    assert run.returncode == 1, run.describe()
    (result,) = run.results("tools/call")
    assert result["isError"] is True
    assert "validation error for addArguments" in first_text(result)
    assert "the tool reported an error (isError true)" in run.stderr
    assert run.summary.startswith("FAILED: 2/3"), run.describe()


def test_a_subscription_stream_is_tied_to_its_listen_request():
    # MCP 2026-07-28: the host subscribes to tool list changes, then calls a
    # tool that changes them. The transport ties the stream's notifications
    # (the acknowledgement, then the change) to the listen request: the host
    # prints them as subscription events without parsing their _meta.
    run = run_host(["--listen", *call("change_tools")], SDK2_SERVER)
    assert run.returncode == 0, run.describe()
    (listen,) = run.requests("subscriptions/listen")
    assert listen["params"]["notifications"] == {"toolsListChanged": True}
    methods = subscription_stream(run)
    assert methods[0] == "notifications/subscriptions/acknowledged", run.describe()
    assert "notifications/tools/list_changed" in methods, run.describe()
