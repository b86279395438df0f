"""Our C server (examples/mcp_server.c) driven by the MCP Inspector's CLI mode
(@modelcontextprotocol/inspector): `mcp-inspector --cli <server> --method ...`.
CLI mode needs neither a browser nor a network; it prints the result as JSON."""

import json
import subprocess

import pytest

from conftest import NPM_DIR, SERVER, node_env


def inspector(*args):
    return subprocess.run(
        ["npx", "--no-install", "mcp-inspector", "--cli", str(SERVER), *args],
        cwd=NPM_DIR,  # where the pinned inspector is installed
        capture_output=True,
        text=True,
        timeout=60,
        env=node_env(),
    )


def test_tools_list():
    proc = inspector("--method", "tools/list")
    assert proc.returncode == 0, proc.stderr
    tools = json.loads(proc.stdout)["tools"]
    assert [t["name"] for t in tools] == ["echo", "add"]
    assert tools[0]["inputSchema"]["properties"]["text"]["type"] == "string"
    assert tools[1]["inputSchema"]["required"] == ["a", "b"]


@pytest.mark.parametrize(
    "tool, args, text",
    [
        ("echo", ["text=héllo, wörld ✓ 🎉\nsecond \"line\" \\ end"], "héllo, wörld ✓ 🎉\nsecond \"line\" \\ end"),
        ("add", ["a=2", "b=40.5"], "42.5"),
    ],
    ids=["echo", "add"],
)
def test_tools_call(tool, args, text):
    tool_args = [x for a in args for x in ("--tool-arg", a)]
    proc = inspector("--method", "tools/call", "--tool-name", tool, *tool_args)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result == {"content": [{"type": "text", "text": text}], "isError": False}


def test_unknown_method_is_an_error():
    proc = inspector("--method", "resources/list")
    assert proc.returncode == 1
    assert "MCP error -32601: Method not found" in proc.stderr
