"""Our C server (examples/mcp_server.c) driven by the official TypeScript SDK
client (Client + StdioClientTransport), from tests/e2e/ts_client.mjs."""

import json
import subprocess

from conftest import E2E_DIR, NODE_MODULES, SERVER, node_env

TEXT = "héllo, wörld ✓ 🎉 \"quoted\" \\ back\nsecond line\ttab"


def test_typescript_sdk_client():
    proc = subprocess.run(
        ["node", str(E2E_DIR / "ts_client.mjs"), str(NODE_MODULES), TEXT, str(SERVER)],
        capture_output=True,
        timeout=60,
        env=node_env(),
    )
    assert proc.returncode == 0, proc.stderr.decode()
    out = json.loads(proc.stdout)

    assert out["protocolVersion"] == out["requestedVersion"]
    assert out["serverInfo"]["name"] == "mcp-stdio-demo-server"
    assert "tools" in out["capabilities"]
    assert [t["name"] for t in out["tools"]] == ["echo", "add"]

    assert out["echo"] == {"content": [{"type": "text", "text": TEXT}], "isError": False}
    assert out["add"]["content"] == [{"type": "text", "text": "0.30000000000000004"}]
    assert out["ping"] == {}
    assert out["listResourcesError"] == -32601
    assert out["unknownToolError"] == -32602
    # 2025-11-25: bad arguments are a tool execution error, not a protocol error.
    assert out["protocolVersion"] == "2025-11-25"
    assert out["badArguments"]["isError"] is True
    assert "finite numbers" in out["badArguments"]["content"][0]["text"]

    assert out["sentMethods"][:3] == ["initialize", "notifications/initialized", "tools/list"]
    assert "mcp_server: end of input, exiting" in out["serverStderr"]
