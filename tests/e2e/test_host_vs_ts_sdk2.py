"""Our C host (examples/mcp_host.c) against a server on the official
TypeScript SDK 2.x (@modelcontextprotocol/server, serveStdio), from
tests/e2e/ts_sdk2_server.mjs: MCP 2026-07-28 and its subscriptions/listen."""

from conftest import (
    E2E_DIR,
    NODE_MODULES,
    call,
    first_text,
    node_env,
    run_host,
    subscription_stream,
)

TS_SDK2_SERVER = ["node", str(E2E_DIR / "ts_sdk2_server.mjs"), str(NODE_MODULES)]


def test_a_subscription_stream_is_tied_to_its_listen_request():
    # The host subscribes to tool list changes, then calls a tool that
    # changes them: the transport ties the stream's notifications (the
    # acknowledgement, then the change) to the listen request, and the
    # host prints them as subscription events without parsing their _meta.
    run = run_host(
        ["--listen", *call("change_tools"), "--allow-kill", "--shutdown-timeout", "1"],
        TS_SDK2_SERVER,
        env=node_env(),
    )
    assert run.returncode == 0, run.describe()
    (probe,) = run.requests("server/discover")
    assert "2026-07-28" in run.response_to(probe)["result"]["supportedVersions"]
    assert not run.requests("initialize"), "a 2026-07-28 session: no handshake"
    methods = subscription_stream(run)
    assert methods[0] == "notifications/subscriptions/acknowledged", run.describe()
    assert "notifications/tools/list_changed" in methods, run.describe()
    (result,) = run.results("tools/call")
    assert first_text(result) == "tools changed"
