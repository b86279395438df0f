"""A small MCP server written with the official Python SDK 2.x (MCPServer, the
successor of FastMCP), for the end-to-end tests: our C host
(examples/mcp_host.c) talks to it over stdio. Run by the python of
.deps/venv-sdk2 (conftest.py's SDK2_SERVER); the tools mirror
fastmcp_server.py's, but for chatty (the stderr flood is the transport's
business, tested once against FastMCP).

Tools:
  change_tools()        -> "tools changed", after telling listen subscribers
                           that the tool list changed
  echo(text)            -> the text
  add(a, b)             -> a + b (integers)
  ping_client()         -> sends a ping request to the client, "pong: {}"
  list_client_roots()   -> asks the client for roots/list, "roots: N"
  ask_sampling()        -> sends sampling/createMessage, which our host does not
                           implement; "sampling unexpectedly worked" if it did
The three server-to-client requests return "<what> error: <exception> <code>"
when the SDK raises MCPError: the client's error reply, or NoBackChannelError
(-32600) on a 2026-07-28 connection, where the SDK refuses every
server-initiated request (mcp/shared/transport_context.py, can_send_request).
Resource:
  e2e://greeting/{name} -> "Hello, {name}!"
"""

import warnings

from mcp import MCPDeprecationWarning, types
from mcp.server.mcpserver import Context, MCPServer
from mcp.shared.exceptions import MCPError

# ping is not deprecated, roots and sampling are (as of 2026-07-28): the
# warnings would only clutter the server's stderr, which the host forwards.
warnings.simplefilter("ignore", MCPDeprecationWarning)

mcp = MCPServer("e2e-sdk2", version="2.3.0-e2e")


def refused(what: str, e: MCPError) -> str:
    return f"{what} error: {type(e).__name__} {e.code}"


@mcp.tool()
async def change_tools(ctx: Context) -> str:
    """Tells the subscriptions/listen streams that the tool list changed
    (MCP 2026-07-28)."""
    await ctx.notify_tools_changed()
    return "tools changed"


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
    try:
        result = await ctx.session.send_ping()
    except MCPError as e:
        return refused("ping", e)
    return "pong: " + result.model_dump_json(by_alias=True, exclude_none=True)


@mcp.tool()
async def list_client_roots(ctx: Context) -> str:
    """Asks the client for its roots (a server-to-client request)."""
    try:
        result = await ctx.session.list_roots()
    except MCPError as e:
        return refused("roots", e)
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
    except MCPError as e:
        return refused("sampling", e)
    return "sampling unexpectedly worked"


@mcp.resource("e2e://greeting/{name}")
def greeting(name: str) -> str:
    """A greeting for name."""
    return f"Hello, {name}!"


if __name__ == "__main__":
    mcp.run("stdio")
