"""Drives an MCP server over stdio with the official Python SDK 2.x client
and prints, as one JSON object, its protocol version, its tools and the
result of one tool call. Run by the python of .deps/venv-sdk2.

Usage: python sdk2_tools_client.py MODE TOOL ARGS_JSON SERVER_COMMAND [ARGS...]

MODE is the Client's: "auto" (server/discover, then 2026-07-28, falling back
to the initialize handshake) or "legacy" (initialize only).
"""

import json
import sys

import anyio
from mcp import Client, StdioServerParameters


def dump(model):
    return model and model.model_dump(by_alias=True, mode="json", exclude_none=True)


async def main(mode, tool, arguments, command, args):
    out = {"mode": mode}
    with anyio.fail_after(30):
        server = StdioServerParameters(command=command, args=args)
        async with Client(server, mode=mode) as client:
            out["protocolVersion"] = client.protocol_version
            out["serverInfo"] = dump(client.server_info)
            out["tools"] = [t["name"] for t in dump(await client.list_tools())["tools"]]
            out["call"] = dump(await client.call_tool(tool, arguments))
    out["closed"] = True
    return out


if __name__ == "__main__":
    mode, tool, arguments, command, *args = sys.argv[1:]
    print(json.dumps(anyio.run(main, mode, tool, json.loads(arguments), command, args),
                     ensure_ascii=False))
