"""Our C server (examples/mcp_server.c) on the wire, line by line: MCP
2026-07-28 requests (of the SDK clients we pin only the Python SDK 2.x speaks
it, test_server_vs_python_sdk2.py, and only what it needs), the errors an SDK
client never provokes, and what each protocol version changes."""

import json
import subprocess

from conftest import SERVER

MODERN = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "wire-test", "version": "1"},
}
SERVER_INFO = {"name": "mcp-stdio-demo-server", "title": "mcp-stdio demo server",
               "version": "0.1.0"}


def exchange(*lines):
    """Sends the lines (dicts are JSON-encoded) and returns the answers, parsed."""
    data = "".join((json.dumps(l) if isinstance(l, dict) else l) + "\n" for l in lines)
    proc = subprocess.run([str(SERVER)], input=data.encode(), capture_output=True, timeout=10)
    assert proc.returncode == 0, proc.stderr.decode()
    return [json.loads(l) for l in proc.stdout.splitlines()]


def request(id, method, params=None, meta=MODERN):
    msg = {"jsonrpc": "2.0", "id": id, "method": method}
    if params is not None or meta is not None:
        msg["params"] = dict(params or {})
        if meta is not None:
            msg["params"]["_meta"] = meta
    return msg


def test_modern_session():
    discover, tools, echo, add, bad = exchange(
        request(1, "server/discover"),
        request(2, "tools/list"),
        request(3, "tools/call", {"name": "echo", "arguments": {"text": "héllo ✓"}}),
        request(4, "tools/call", {"name": "add", "arguments": {"a": 2, "b": 40}}),
        request(5, "tools/call", {"name": "add", "arguments": {"a": "x", "b": 1}}),
    )
    result = discover["result"]
    assert result["resultType"] == "complete"
    assert result["supportedVersions"] == ["2026-07-28", "2025-11-25", "2025-06-18", "2024-11-05"]
    assert result["capabilities"] == {"tools": {"listChanged": False}}
    assert result["_meta"]["io.modelcontextprotocol/serverInfo"] == SERVER_INFO
    assert result["ttlMs"] >= 0 and result["cacheScope"] == "public"

    listed = tools["result"]
    assert [t["name"] for t in listed["tools"]] == ["echo", "add"]
    assert listed["resultType"] == "complete" and "ttlMs" in listed and "cacheScope" in listed
    assert listed["_meta"]["io.modelcontextprotocol/serverInfo"] == SERVER_INFO

    assert echo["result"]["content"] == [{"type": "text", "text": "héllo ✓"}]
    assert echo["result"]["resultType"] == "complete"
    assert add["result"]["content"][0]["text"] == "42"
    # Bad arguments: a tool execution error the model can read.
    assert bad["result"]["isError"] is True
    assert "finite numbers" in bad["result"]["content"][0]["text"]


def test_modern_request_errors():
    old, missing_caps, ping, init, unknown_tool = exchange(
        request(1, "tools/list", meta={**MODERN, "io.modelcontextprotocol/protocolVersion": "2099-01-01"}),
        request(2, "tools/list", meta={"io.modelcontextprotocol/protocolVersion": "2026-07-28"}),
        request(3, "ping"),  # removed in 2026-07-28
        request(4, "initialize", {"protocolVersion": "2025-11-25"}),  # no handshake in 2026-07-28
        request(5, "tools/call", {"name": "nope", "arguments": {}}),
    )
    assert old["id"] == 1 and old["error"]["code"] == -32022
    assert old["error"]["data"] == {
        "supported": ["2026-07-28", "2025-11-25", "2025-06-18", "2024-11-05"],
        "requested": "2099-01-01",
    }
    assert missing_caps["error"]["code"] == -32602
    assert ping["error"]["code"] == -32601
    assert init["error"]["code"] == -32601
    assert unknown_tool["error"]["code"] == -32602  # an unknown tool stays a protocol error


def test_errors_never_carry_a_null_id():
    """An error whose request id could not be read has no id member at all."""
    parse, no_id, with_id, batch, ping = exchange(
        "this is not json",
        '{"jsonrpc": "2.0", "params": {}}',
        '{"jsonrpc": "2.0", "id": 7, "bogus": true}',
        '[{"jsonrpc": "2.0", "id": 8, "method": "ping"}]',
        '{"jsonrpc": "2.0", "id": 9, "method": "ping"}',
    )
    assert parse == {"jsonrpc": "2.0", "error": {"code": -32700, "message": "Parse error"}}
    assert no_id == {"jsonrpc": "2.0", "error": {"code": -32600, "message": "Invalid Request"}}
    assert with_id["id"] == 7 and with_id["error"]["code"] == -32600
    assert "id" not in batch and batch["error"]["code"] == -32600  # batches are refused
    assert ping == {"jsonrpc": "2.0", "id": 9, "result": {}}  # legacy ping still works


def test_bad_arguments_by_version():
    """Since 2025-11-25 bad tool arguments are a result with isError; before,
    -32602 Invalid params. Legacy results carry no resultType."""
    def session(version):
        init, bad = exchange(
            request(1, "initialize", {"protocolVersion": version, "capabilities": {},
                                      "clientInfo": {"name": "t", "version": "0"}}, meta=None),
            request(2, "tools/call", {"name": "echo", "arguments": {}}, meta=None),
        )
        assert init["result"]["protocolVersion"] == version
        return bad

    new = session("2025-11-25")["result"]
    assert new["isError"] is True and "resultType" not in new
    assert session("2025-06-18")["error"]["code"] == -32602
    assert session("2024-11-05")["error"]["code"] == -32602
