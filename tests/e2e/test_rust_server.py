"""Our Rust server (examples/server.rs: the safe API, Connection::open_stdio
with the stdout guard) driven by the official Python SDK 2.x client
(tests/e2e/sdk2_client.py), in its default mode (the server/discover probe,
then 2026-07-28) and in its legacy mode (the initialize handshake). The
server prints a stray line with println! on purpose: the guard sends it to
stderr, and the client, which reads stdout, never sees it."""

import json
import subprocess

import pytest

from conftest import E2E_DIR, RUST_SERVER, SDK2_PYTHON

TEXT = 'grüße, мир, 世界 ✓ 🎉 "quoted" \\ backslash\nsecond line\ttab\u2028sep'
MODERN = "2026-07-28"


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_python_sdk2_client_vs_rust_server(mode):
    proc = subprocess.run(
        [SDK2_PYTHON, E2E_DIR / "sdk2_client.py", mode, TEXT, RUST_SERVER],
        capture_output=True,
        timeout=60,
    )
    stderr = proc.stderr.decode()
    assert proc.returncode == 0, stderr
    out = json.loads(proc.stdout)

    if mode == "auto":
        assert out["protocolVersion"] == MODERN
        assert out["initialize"] is None
        assert out["discover"]["supportedVersions"] == [
            MODERN, "2025-11-25", "2025-06-18", "2024-11-05"]
        assert out["ping"] == {"error": -32601}  # removed in 2026-07-28
    else:
        assert out["protocolVersion"] == "2025-11-25"
        assert out["discover"] is None
        assert out["ping"] == {"result": {}}
    assert out["serverInfo"]["name"] == "mcp-stdio-rust-server"
    assert out["capabilities"] == {"tools": {"listChanged": False}}
    assert [t["name"] for t in out["tools"]] == ["echo", "add"]
    assert out["echo"]["isError"] is False
    assert out["echo"]["content"] == [{"type": "text", "text": TEXT}]  # exactly
    assert out["add"]["content"] == [{"type": "text", "text": "42"}]
    bad = out["badArguments"]
    assert bad["isError"] is True
    assert bad["content"][0]["text"] == 'echo: "text" (a string) is required'
    assert out["unknownTool"] == {"error": -32602}
    assert out["listResources"] == {"error": -32601}
    assert out["closed"] is True
    # The stray println! went to stderr; the server ended at the end of its stdin.
    assert "server: this println! lands on stderr" in stderr
    assert stderr.rstrip().endswith("server: end of input, exiting")
