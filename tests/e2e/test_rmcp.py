"""rmcp, the official Rust SDK, on our transports (integrations/rmcp): its
client on our ChildProcess (examples/rmcp_host.rs) against server-everything
and the FastMCP server, and an rmcp server on our stdio() (examples/rmcp_server.rs)
driven by the Python SDK 2.x client."""

import json
import subprocess

import pytest

from conftest import (
    E2E_DIR, EVERYTHING_SERVER, FASTMCP_SERVER, RMCP_HOST, RMCP_SERVER, SDK2_PYTHON, node_env,
)

TEXT = 'grüße, мир, 世界 ✓ 🎉 "quoted" \\ backslash\nsecond line\ttab'


def rmcp_host(tool, arguments, server, env=None):
    """rmcp_host --call TOOL ARGS -- SERVER: its exit status, its output lines."""
    proc = subprocess.run(
        [RMCP_HOST, "--call", tool, json.dumps(arguments), "--", *map(str, server)],
        capture_output=True, timeout=120, env=env,
    )
    return proc.returncode, proc.stdout.decode().splitlines(), proc.stderr.decode()


def result_of(lines):
    (result,) = [json.loads(line[len("result: "):]) for line in lines if line.startswith("result: ")]
    return result


def test_rmcp_client_on_our_transport_vs_everything():
    code, lines, stderr = rmcp_host("echo", {"message": TEXT}, EVERYTHING_SERVER, env=node_env())
    assert code == 0, stderr
    assert lines[0].startswith("server: "), lines
    assert "tool: echo" in lines and "tool: get-sum" in lines, lines
    assert result_of(lines)["content"] == [{"type": "text", "text": "Echo: " + TEXT}]
    # Its stderr came through our transport, as lines.
    assert "rmcp_host: [server] Starting default (STDIO) server..." in stderr


def test_rmcp_client_on_our_transport_vs_fastmcp():
    code, lines, stderr = rmcp_host("echo", {"text": TEXT}, FASTMCP_SERVER)
    assert code == 0, stderr
    assert "tool: echo" in lines, lines
    assert result_of(lines)["content"][0]["text"] == TEXT


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_python_sdk2_client_vs_rmcp_server_on_our_stdio(mode):
    proc = subprocess.run(
        [SDK2_PYTHON, E2E_DIR / "sdk2_tools_client.py", mode, "echo", json.dumps({"text": TEXT}),
         RMCP_SERVER],
        capture_output=True, timeout=60,
    )
    assert proc.returncode == 0, proc.stderr.decode()
    out = json.loads(proc.stdout)
    assert out["tools"] == ["echo", "stray_print"]
    assert out["call"]["content"] == [{"type": "text", "text": TEXT}]
    assert out["closed"] is True
    if mode == "legacy":
        assert out["protocolVersion"] == "2025-11-25"
    else:
        assert out["protocolVersion"] == "2026-07-28"


def test_a_stray_print_in_an_rmcp_server_goes_to_stderr():
    proc = subprocess.run(
        [SDK2_PYTHON, E2E_DIR / "sdk2_tools_client.py", "auto", "stray_print", "{}", RMCP_SERVER],
        capture_output=True, timeout=60,
    )
    assert proc.returncode == 0, proc.stderr.decode()
    assert json.loads(proc.stdout)["call"]["content"][0]["text"] == "printed"
    assert "a stray print: the stdout guard sends it to stderr" in proc.stderr.decode()
