"""Drives an MCP server over stdio with the official Python SDK 2.x client
(mcp.Client over StdioServerParameters, i.e. stdio_client + ClientSession)
and prints what it got as one JSON object. Run by the python of
.deps/venv-sdk2 (conftest.py's SDK2_PYTHON).

Usage: python sdk2_client.py MODE ECHO_TEXT SERVER_COMMAND [ARGS...]

MODE is the Client's: "auto" (its default: probes server/discover and falls
back to the initialize handshake) or "legacy" (initialize only). The server's
stderr goes to ours. Leaving the `async with` is the client's own close:
close the server's stdin, wait up to 2 s, then SIGTERM/SIGKILL its process
group (mcp/client/stdio.py).
"""

import json
import sys
import warnings

import anyio
from mcp import Client, MCPDeprecationWarning, StdioServerParameters
from mcp.shared.exceptions import MCPError

# ping is deprecated as of 2026-07-28 (the call still goes out): no warning
# text in the stderr the test reads.
warnings.simplefilter("ignore", MCPDeprecationWarning)


def dump(model):
    """The model as JSON would have it; None stays None."""
    return model and model.model_dump(by_alias=True, mode="json", exclude_none=True)


async def outcome(awaitable):
    """The result, dumped, or the JSON-RPC error's code."""
    try:
        return {"result": dump(await awaitable)}
    except MCPError as e:
        return {"error": e.code}


async def main(mode, echo_text, command, args):
    out = {"mode": mode}
    with anyio.fail_after(30):
        server = StdioServerParameters(command=command, args=args)
        async with Client(server, mode=mode) as client:
            session = client.session
            out["protocolVersion"] = client.protocol_version
            out["serverInfo"] = dump(client.server_info)
            out["capabilities"] = dump(client.server_capabilities)
            out["discover"] = dump(session.discover_result)
            out["initialize"] = dump(session.initialize_result)

            out["tools"] = dump(await client.list_tools())["tools"]
            out["echo"] = dump(await client.call_tool("echo", {"text": echo_text}))
            out["add"] = dump(await client.call_tool("add", {"a": 2, "b": 40}))
            # Bad arguments: a tool execution error (a result with isError).
            out["badArguments"] = dump(await client.call_tool("echo", {"text": 42}))
            out["unknownTool"] = await outcome(client.call_tool("no-such-tool", {}))
            out["listResources"] = await outcome(client.list_resources())
            out["ping"] = await outcome(client.send_ping())
    out["closed"] = True
    return out


if __name__ == "__main__":
    mode, echo_text, command, *args = sys.argv[1:]
    print(json.dumps(anyio.run(main, mode, echo_text, command, args), ensure_ascii=False))
