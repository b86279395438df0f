"""Our Rust hosts (examples/host.rs, blocking; examples/tokio_host.rs, a tokio
task on the connection's descriptor) against @modelcontextprotocol/server-everything
and the FastMCP server: the sessions test_host_vs_everything.py and
test_host_vs_fastmcp.py run with the C host, on the options the Rust hosts have
(--call, --timeout, --allow-kill, --shutdown-timeout), judged on the same output."""

import pytest

from conftest import (
    EVERYTHING_SERVER, FASTMCP_SERVER, RUST_HOSTS, call, first_text, node_env, run_host,
)

ECHO = 'héllo, wörld ✓ 🎉 "quoted" back\\slash\ttab\nsecond line'
TEXT = "grüße, мир, 世界 ✓ 🎉\nline two\twith a tab and a \\ backslash"

hosts = pytest.mark.parametrize("host", RUST_HOSTS, ids=lambda p: p.name)


@hosts
def test_rust_host_vs_everything(host):
    run = run_host(
        [
            *call("echo", message=ECHO),
            *call("get-sum", a=19, b=23.5),
            *call("get-roots-list"),  # the server asks us roots/list mid-call
            *call("get-tiny-image"),
            # The server may need SIGTERM after its stdin closes.
            "--allow-kill", "--shutdown-timeout", "1",
        ],
        EVERYTHING_SERVER,
        env=node_env(),
        host=host,
    )
    assert run.returncode == 0, run.describe()
    assert run.summary == "ok: 6/6 expected responses received and checked", run.describe()

    # A server from before MCP 2026-07-28: the probe gets -32601, then initialize.
    (probe,) = run.requests("server/discover")
    assert run.sent[0] == probe
    assert run.response_to(probe)["error"]["code"] == -32601
    assert [m.get("method") for m in run.sent[1:3]] == ["initialize", "notifications/initialized"]
    init = run.results("initialize")[0]
    assert init["serverInfo"]["name"] == "mcp-servers/everything"
    assert init["protocolVersion"] == "2025-11-25"
    assert all("_meta" not in (m.get("params") or {}) for m in run.sent[1:])

    assert {"echo", "get-sum", "get-tiny-image", "get-roots-list"} <= set(run.tools)
    assert [t["name"] for r in run.results("tools/list") for t in r["tools"]] == run.tools

    echo, total, roots, image = run.results("tools/call")
    assert first_text(echo) == "Echo: " + ECHO
    assert first_text(total) == "The sum of 19 and 23.5 is 42.5."
    assert first_text(roots).startswith("The client supports roots but no roots are currently")
    assert any(c["type"] == "image" for c in image["content"])
    assert 'content: "image"' in run.stdout.decode()
    assert run.texts[:3] == ["Echo: " + ECHO, "The sum of 19 and 23.5 is 42.5.", first_text(roots)]

    asked = run.server_requests("roots/list")
    assert asked, run.describe()
    for req in asked:
        assert run.our_reply_to(req)["result"] == {"roots": []}

    assert f"{host.name}: [server] Starting default (STDIO) server..." in run.stderr


@hosts
def test_rust_host_vs_fastmcp(host):
    run = run_host(
        [
            *call("echo", text=TEXT),
            *call("add", a=2, b=40),
            *call("ping_client"),  # the server pings us mid-call
            *call("list_client_roots"),  # ... asks for roots/list
            *call("ask_sampling"),  # ... and sends a request we do not implement
        ],
        FASTMCP_SERVER,
        host=host,
    )
    # FastMCP exits by itself when its stdin closes: no --allow-kill.
    assert run.returncode == 0, run.describe()
    assert run.summary == "ok: 7/7 expected responses received and checked", run.describe()

    (probe,) = run.requests("server/discover")
    assert "error" in run.response_to(probe)
    init = run.results("initialize")[0]
    assert init["serverInfo"]["name"] == "e2e-fastmcp"
    tools = ["echo", "add", "ping_client", "list_client_roots", "ask_sampling", "chatty"]
    assert run.tools == tools

    echo, add, ping, roots, sampling = run.results("tools/call")
    assert first_text(echo) == TEXT
    assert first_text(add) == "42"
    assert first_text(ping).startswith("pong: ")
    assert first_text(roots) == "roots: 0"
    assert first_text(sampling) == "sampling error: -32601"
    assert run.texts == [TEXT, "42", first_text(ping), "roots: 0", "sampling error: -32601"]

    (ping_req,) = run.server_requests("ping")
    assert run.our_reply_to(ping_req)["result"] == {}
    (roots_req,) = run.server_requests("roots/list")
    assert run.our_reply_to(roots_req)["result"] == {"roots": []}
    (sampling_req,) = run.server_requests("sampling/createMessage")
    assert run.our_reply_to(sampling_req)["error"]["code"] == -32601
