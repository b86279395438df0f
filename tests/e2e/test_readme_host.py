"""The README's "A host in C" (45 lines on the transport) against
@modelcontextprotocol/server-everything, a server from before MCP 2026-07-28
(the probe fails, initialize follows), and against our server, which speaks
2026-07-28."""

import json
import subprocess

from conftest import EVERYTHING_SERVER, SERVER, node_env


def run(host, tool, arguments, server):
    proc = subprocess.run(
        [str(host), tool, json.dumps(arguments), *map(str, server)],
        stdin=subprocess.DEVNULL, capture_output=True, timeout=60, env=node_env(),
    )
    return proc, proc.stdout.decode().splitlines()


def test_readme_host_against_server_everything(readme_host):
    proc, lines = run(readme_host, "get-sum", {"a": 19, "b": 23.5}, EVERYTHING_SERVER)
    assert proc.returncode == 0, proc.stderr.decode()
    (line,) = lines
    response = json.loads(line)
    assert response["result"]["content"][0]["text"] == "The sum of 19 and 23.5 is 42.5."
    assert response["id"] == 3  # 1 the probe, 2 initialize, 3 the call
    # The server's stderr went straight to ours.
    assert "Starting default (STDIO) server..." in proc.stderr.decode()


def test_readme_host_against_our_server(readme_host):
    proc, lines = run(readme_host, "echo", {"text": "héllo ✓"}, [SERVER])
    assert proc.returncode == 0, proc.stderr.decode()
    (line,) = lines
    response = json.loads(line)
    assert response["id"] == 2  # 1 the probe, 2 the call: no initialize
    assert response["result"]["resultType"] == "complete"
    assert response["result"]["content"] == [{"type": "text", "text": "héllo ✓"}]
    assert "mcp_server: end of input, exiting" in proc.stderr.decode()


def test_readme_host_reports_an_error(readme_host):
    proc, lines = run(readme_host, "no-such-tool", {}, [SERVER])
    assert proc.returncode == 1
    (line,) = lines
    assert json.loads(line)["error"]["code"] == -32602
