"""Our C server (examples/mcp_server.c) driven by the official Python SDK 2.x
client (mcp.Client over stdio: stdio_client + ClientSession), from
tests/e2e/sdk2_client.py, run by the python of .deps/venv-sdk2.

What SDK 2.3.0 does: in its default mode ("auto") the client probes with
server/discover at 2026-07-28 before anything else; our server's answer lists
2026-07-28 among its supportedVersions, so the client adopts it and the
whole session is modern: no initialize, no notifications/initialized, every
request carries the _meta envelope. Its ping, deprecated as of 2026-07-28,
still goes out and our server refuses it (-32601: removed in that version).
In mode "legacy" it sends initialize (2025-11-25) and the session is the
handshake era's. Our server does not log the methods it reads, so the test
runs it under stdin_tee.py, which keeps a copy of everything the client sent."""

import json
import subprocess

import pytest

from conftest import E2E_DIR, PYTHON, SDK2_PYTHON, SERVER

TEXT = 'grüße, мир, 世界 ✓ 🎉 "quoted" \\ backslash\nsecond line\ttab\u2028sep'
MODERN = "2026-07-28"
SERVER_INFO = {"name": "mcp-stdio-demo-server", "title": "mcp-stdio demo server",
               "version": "0.1.0"}
# What the client asks after connecting, in order (sdk2_client.py).
SESSION = ["tools/list", "tools/call", "tools/call", "tools/call", "tools/call",
           "resources/list", "ping"]


def run_client(mode, tmp_path):
    """Runs sdk2_client.py MODE against our server under stdin_tee.py; returns
    its output, the server's stderr, the lines the server read, and the tee's
    last line (how the server ended)."""
    log = tmp_path / "client-to-server.jsonl"
    server = [PYTHON, E2E_DIR / "stdin_tee.py", log, SERVER]
    proc = subprocess.run(
        [SDK2_PYTHON, E2E_DIR / "sdk2_client.py", mode, TEXT, *server],
        capture_output=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr.decode()
    # split("\n"), not splitlines(): the text's U+2028 travels unescaped.
    *lines, end = [l for l in log.read_text().split("\n") if l]
    return json.loads(proc.stdout), proc.stderr.decode(), [json.loads(l) for l in lines], end


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_python_sdk2_client(mode, tmp_path):
    out, server_stderr, received, end = run_client(mode, tmp_path)
    methods = [m.get("method", "(response)") for m in received]

    if mode == "auto":
        # The probe, answered: a 2026-07-28 session without a handshake.
        assert methods == ["server/discover", *SESSION]
        assert out["protocolVersion"] == MODERN
        assert out["initialize"] is None
        discover = out["discover"]
        assert discover["supportedVersions"] == [MODERN, "2025-11-25", "2025-06-18", "2024-11-05"]
        assert out["serverInfo"] == SERVER_INFO  # from the discover result's _meta
        assert all(m["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] == MODERN
                   for m in received)
        assert out["ping"] == {"error": -32601}  # removed in 2026-07-28
        assert "client initialized" not in server_stderr
    else:
        assert methods == ["initialize", "notifications/initialized", *SESSION]
        assert received[0]["params"]["protocolVersion"] == "2025-11-25"
        assert out["protocolVersion"] == "2025-11-25"  # we speak what it asked
        assert out["discover"] is None
        assert out["serverInfo"] == SERVER_INFO
        assert all("_meta" not in m.get("params", {}) for m in received)
        assert out["ping"] == {"result": {}}
        assert "mcp_server: client initialized" in server_stderr
    assert out["capabilities"] == {"tools": {"listChanged": False}}

    tools = {t["name"]: t for t in out["tools"]}
    assert list(tools) == ["echo", "add"]
    assert tools["echo"]["inputSchema"]["required"] == ["text"]

    echo = out["echo"]
    assert echo["isError"] is False
    assert echo["content"] == [{"type": "text", "text": TEXT}]  # round-trips exactly
    assert out["add"]["content"] == [{"type": "text", "text": "42"}]
    # Bad arguments: a tool result with isError (2025-11-25 and 2026-07-28).
    bad = out["badArguments"]
    assert bad["isError"] is True
    assert [c["text"] for c in bad["content"]] == ['echo: argument "text" (string) is required']
    assert out["unknownTool"] == {"error": -32602}
    assert out["listResources"] == {"error": -32601}

    # The client's own close: it closed our stdin and we exited by ourselves,
    # with status 0, before its grace period ran out (a SIGTERM to the process
    # group would have killed stdin_tee.py before it wrote its last line).
    assert out["closed"] is True
    assert end == "exit status 0"
    assert server_stderr.rstrip().endswith("mcp_server: end of input, exiting")
