"""Our C host (examples/mcp_host.c) against @modelcontextprotocol/server-everything,
the reference server of the MCP project, written with the TypeScript SDK."""

import base64
import os
import signal
import subprocess

import pytest

from conftest import (
    EVERYTHING_SERVER,
    HOST,
    call,
    first_text,
    node_env,
    parse_host_output,
    run_host,
)

ECHO = 'héllo, wörld ✓ 🎉 "quoted" back\\slash\ttab\nsecond line'


def test_tools_resources_and_server_requests():
    run = run_host(
        [
            *call("echo", message=ECHO),
            *call("get-sum", a=19, b=23.5),
            *call("get-roots-list"),  # the server asks us roots/list mid-call
            *call("get-tiny-image"),
            "--read-resource", "demo://resource/dynamic/text/1",
            "--expect-tool", "echo",
            "--expect-tool", "get-sum",
            "--expect-text", "Echo: héllo",
            # The server may need SIGTERM after its stdin closes (its timers keep
            # node alive); the MCP shutdown sequence allows that.
            "--allow-kill", "--shutdown-timeout", "1",
        ],
        EVERYTHING_SERVER,
        env=node_env(),
    )
    assert run.returncode == 0, run.describe()
    assert run.summary == "ok: 7/7 expected responses received and checked", run.describe()

    # A server from before MCP 2026-07-28: the server/discover probe gets an
    # error, and the initialize handshake of 2025-11-25 follows.
    (probe,) = run.requests("server/discover")
    assert run.sent[0] == probe
    assert run.response_to(probe)["error"]["code"] == -32601
    assert [m.get("method") for m in run.sent[1:3]] == ["initialize", "notifications/initialized"]
    init = run.results("initialize")[0]
    assert init["serverInfo"]["name"] == "mcp-servers/everything"
    assert init["protocolVersion"] == "2025-11-25"
    # No 2026-07-28 metadata in a 2025-11-25 session: a tool call's _meta
    # holds its progress token (as 2025-11-25 has it), nothing else.
    assert all(
        set((m.get("params") or {}).get("_meta", {})) <= {"progressToken"} for m in run.sent[1:]
    ), run.sent

    assert {"echo", "get-sum", "get-tiny-image", "get-roots-list"} <= set(run.tools)
    listed = [t["name"] for r in run.results("tools/list") for t in r["tools"]]
    assert listed == run.tools

    echo, total, roots, image = run.results("tools/call")
    assert first_text(echo) == "Echo: " + ECHO
    assert first_text(total) == "The sum of 19 and 23.5 is 42.5."
    assert first_text(roots).startswith("The client supports roots but no roots are currently")
    (picture,) = [c for c in image["content"] if c["type"] == "image"]
    assert picture["mimeType"] == "image/png"
    assert base64.b64decode(picture["data"]).startswith(b"\x89PNG\r\n\x1a\n")
    assert 'content: "image"' in run.stdout.decode()

    # The host printed the decoded texts, in order, one per line.
    assert run.texts[0] == "Echo: " + ECHO
    assert run.texts[1] == "The sum of 19 and 23.5 is 42.5."
    assert run.texts[2] == first_text(roots)

    # The server asked us for roots (during get-roots-list, if not before)
    # and got an empty list.
    asked = run.server_requests("roots/list")
    assert asked, run.describe()
    for req in asked:
        assert run.our_reply_to(req)["result"] == {"roots": []}

    (resource,) = run.results("resources/read")
    (content,) = resource["contents"]
    assert content["uri"] == "demo://resource/dynamic/text/1"
    assert content["text"].startswith("Resource 1: This is a plaintext resource")
    assert run.texts[-1] == content["text"]

    # Its stderr came through, prefixed.
    assert "mcp_host: [server] Starting default (STDIO) server..." in run.stderr


def test_tool_error_fails_the_host():
    """A tool result with isError (bad arguments) is reported and fails the run."""
    run = run_host(
        [*call("get-sum", a="not a number", b=1), "--allow-kill", "--shutdown-timeout", "1"],
        EVERYTHING_SERVER,
        env=node_env(),
    )
    assert run.returncode == 1, run.describe()
    (result,) = run.results("tools/call")
    assert result.get("isError") is True
    assert "the tool reported an error (isError true)" in run.stderr
    assert run.summary.startswith("FAILED: 2/3"), run.describe()


def _long_operation(*options):
    """A tool call that reports progress every second for 5 s, with a 2 s
    timeout: the transport follows its progress (the token in its _meta)."""
    run = run_host(
        [
            "--timeout", "2",
            *options,
            *call("trigger-long-running-operation", duration=5, steps=5),
            "--allow-kill", "--shutdown-timeout", "1",
        ],
        EVERYTHING_SERVER,
        env=node_env(),
    )
    (request,) = run.requests("tools/call")
    progress = [
        m for m in run.received
        if m.get("method") == "notifications/progress"
        and m["params"]["progressToken"] == request["params"]["_meta"]["progressToken"]
    ]
    return run, request, progress


def test_progress_resets_a_short_deadline():
    # Each step's notifications/progress moves the 2 s deadline: the 5 s
    # call succeeds.
    run, request, progress = _long_operation()
    assert run.returncode == 0, run.describe()
    assert request["params"]["_meta"]["progressToken"] == request["id"], request
    assert [p["params"]["progress"] for p in progress] == [1, 2, 3, 4, 5], run.describe()
    assert "Long running operation completed" in first_text(run.response_to(request)["result"])


def test_without_the_reset_the_deadline_stands():
    run, request, progress = _long_operation("--no-progress-reset")
    assert run.returncode == 1, run.describe()
    assert "timed out after 2000 ms waiting for the response to tools/call" in run.stderr, run.describe()
    assert 1 <= len(progress) <= 2, run.describe()


def test_the_hard_maximum_stops_it():
    run, request, progress = _long_operation("--max-time", "3")
    assert run.returncode == 1, run.describe()
    assert "timed out" in run.stderr, run.describe()
    assert 2 <= len(progress) <= 3, run.describe()


def _children(pid):
    """The pids of the processes whose parent is pid (Linux /proc)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        # pid (comm) state ppid ...: comm may hold spaces and parentheses.
        if int(stat[stat.rindex(")") + 2:].split()[1]) == pid:
            found.append(int(entry))
    return found


def test_a_server_killed_from_outside_is_restarted_and_the_call_repeated():
    # --restart: the library's restart policy. The server is killed (SIGKILL,
    # from outside) while the tool call runs: the call fails at once with
    # the reason, the transport starts the server again, and the host
    # connects again and repeats the call, which then succeeds.
    cmd = [
        str(HOST), "--restart", "--timeout", "10",
        *call("trigger-long-running-operation", duration=3, steps=3),
        "--allow-kill", "--shutdown-timeout", "1",
        "--", *EVERYTHING_SERVER,
    ]
    proc = subprocess.Popen(
        cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env=node_env(),
    )
    head = []
    killed = None
    try:
        for line in proc.stdout:
            head.append(line)
            if line.startswith(b"<- ") and b'"notifications/progress"' in line:
                (killed,) = _children(proc.pid)  # the server, mid-call
                os.kill(killed, signal.SIGKILL)
                break
        rest, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    run = parse_host_output(proc.returncode, b"".join(head) + rest, err)
    assert killed is not None, run.describe()
    assert run.returncode == 0, run.describe()
    assert run.summary == "ok: 3/3 expected responses received and checked", run.describe()
    first, second = run.requests("tools/call")
    assert second["id"] > first["id"]
    assert all(m.get("id") != first["id"] for m in run.received if "method" not in m)
    assert "Long running operation completed" in first_text(run.response_to(second)["result"])
    assert f"no answer to tools/call (id {first['id']}): server killed by signal 9" in run.stderr, (
        run.describe()
    )
    assert "the server was killed by signal 9; restarted it (pid " in run.stderr, run.describe()
    assert b"restarted: 1\n" in run.stdout
    # The host connected again: the probe and the handshake, twice.
    assert len(run.requests("initialize")) == 2, run.describe()
    # The killed server was reaped by the library, not left a zombie.
    with pytest.raises(ProcessLookupError):
        os.kill(killed, 0)
