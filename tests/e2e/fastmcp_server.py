"""A small MCP server written with the official Python SDK (FastMCP), for the
end-to-end tests: our C host (examples/mcp_host.c) talks to it over stdio.

Tools:
  echo(text)            -> the text
  add(a, b)             -> a + b (integers)
  ping_client()         -> sends a ping request to the client, "pong: {}"
  list_client_roots()   -> asks the client for roots/list, "roots: N"
  ask_sampling()        -> sends sampling/createMessage, which our host does not
                           implement, and reports the error code it got back
  chatty(lines)         -> writes `lines` lines to stderr, then returns "done"
Resource:
  e2e://greeting/{name} -> "Hello, {name}!"
"""

import sys

from mcp import types
from mcp.server.fastmcp import Context, FastMCP
from mcp.shared.exceptions import McpError

mcp = FastMCP("e2e-fastmcp")


@mcp.tool()
def echo(text: str) -> str:
    """Returns the text unchanged."""
    return text


@mcp.tool()
def add(a: int, b: int) -> int:
    """Adds two integers."""
    return a + b


@mcp.tool()
async def ping_client(ctx: Context) -> str:
    """Pings the client (a server-to-client request)."""
    result = await ctx.session.send_ping()
    return "pong: " + result.model_dump_json()


@mcp.tool()
async def list_client_roots(ctx: Context) -> str:
    """Asks the client for its roots (a server-to-client request)."""
    result = await ctx.session.list_roots()
    return f"roots: {len(result.roots)}"


@mcp.tool()
async def ask_sampling(ctx: Context) -> str:
    """Sends sampling/createMessage, which the client does not offer."""
    try:
        await ctx.session.create_message(
            messages=[
                types.SamplingMessage(
                    role="user", content=types.TextContent(type="text", text="hi")
                )
            ],
            max_tokens=1,
        )
    except McpError as e:
        return f"sampling error: {e.error.code}"
    return "sampling unexpectedly worked"


@mcp.tool()
def chatty(lines: int) -> str:
    """Writes many lines to stderr before answering."""
    for i in range(lines):
        sys.stderr.write(f"chatty stderr line {i:06d} " + "x" * 60 + "\n")
    sys.stderr.flush()
    return "done"


@mcp.resource("e2e://greeting/{name}")
def greeting(name: str) -> str:
    """A greeting for name."""
    return f"Hello, {name}!"


if __name__ == "__main__":
    mcp.run("stdio")
