"""Our C server (examples/mcp_server.c) driven by the official Python SDK client:
mcp.client.stdio.stdio_client + ClientSession."""

import json
import subprocess
import tempfile

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import McpError

from conftest import SERVER

TEXT = 'grüße, мир, 世界 ✓ 🎉 "quoted" \\ backslash\nsecond line\ttab\u2028sep'


async def session(errlog):
    params = StdioServerParameters(command=str(SERVER), args=[])
    got = {}
    with anyio.fail_after(30):
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write) as s:
                got["init"] = await s.initialize()
                got["tools"] = await s.list_tools()
                got["echo"] = await s.call_tool("echo", {"text": TEXT})
                got["add"] = await s.call_tool("add", {"a": 2, "b": 40})
                got["add_float"] = await s.call_tool("add", {"a": 1e308, "b": 1e308})
                got["ping"] = await s.send_ping()
                # Bad arguments are a tool execution error in 2025-11-25.
                got["bad_arguments"] = await s.call_tool("echo", {"text": 42})
                for name, coro in (
                    ("unknown_method", s.list_resources()),
                    ("unknown_tool", s.call_tool("no-such-tool", {})),
                ):
                    try:
                        await coro
                        got[name] = None
                    except McpError as e:
                        got[name] = e.error.code
                # A cancellation notification for a finished request is ignored.
                await s.send_notification(
                    types.ClientNotification(
                        types.CancelledNotification(
                            params=types.CancelledNotificationParams(requestId=3, reason="test")
                        )
                    )
                )
                got["ping_after_cancel"] = await s.send_ping()
    return got


def test_python_sdk_client():
    with tempfile.TemporaryFile("w+") as errlog:
        got = anyio.run(session, errlog)
        errlog.seek(0)
        server_stderr = errlog.read()

    init = got["init"]
    assert init.protocolVersion == types.LATEST_PROTOCOL_VERSION  # we speak what it asked
    assert init.serverInfo.name == "mcp-stdio-demo-server"
    assert init.capabilities.tools is not None

    tools = {t.name: t for t in got["tools"].tools}
    assert sorted(tools) == ["add", "echo"]
    assert tools["echo"].inputSchema["required"] == ["text"]

    echo = got["echo"]
    assert not echo.isError
    assert [c.type for c in echo.content] == ["text"]
    assert echo.content[0].text == TEXT  # non-ASCII, newline, U+2028 round-trip exactly

    assert got["add"].content[0].text == "42"
    assert got["add_float"].isError and "overflow" in got["add_float"].content[0].text
    assert isinstance(got["ping"], types.EmptyResult)
    assert got["unknown_method"] == -32601
    assert got["unknown_tool"] == -32602
    bad = got["bad_arguments"]
    assert bad.isError
    assert bad.content[0].text == 'echo: argument "text" (string) is required'
    assert isinstance(got["ping_after_cancel"], types.EmptyResult)

    assert "mcp_server: client initialized" in server_stderr
    assert "ignoring notification \"notifications/cancelled\"" in server_stderr
    assert "mcp_server: end of input, exiting" in server_stderr  # it exited by itself


@pytest.mark.parametrize(
    "asked, answered",
    [
        ("2025-11-25", "2025-11-25"),
        ("2025-06-18", "2025-06-18"),
        ("2025-03-26", "2025-11-25"),  # not claimed: it would require accepting batches
        ("2024-11-05", "2024-11-05"),
        ("1999-01-01", "2025-11-25"),  # unknown: our newest; the client decides
    ],
)
def test_protocol_version_negotiation(asked, answered):
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": asked, "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}},
    }
    proc = subprocess.run(
        [str(SERVER)], input=json.dumps(init) + "\n", capture_output=True, text=True, timeout=10
    )
    assert proc.returncode == 0, proc.stderr
    (line,) = proc.stdout.splitlines()
    assert json.loads(line)["result"]["protocolVersion"] == answered
