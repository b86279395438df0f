"""A deliberately badly behaved MCP server (raw stdio, no SDK) for the host's
robustness tests. It is a server from before MCP 2026-07-28: it answers the
server/discover probe with -32601 (or, with --silent-probe, not at all, as
some legacy servers do with requests before initialize), then initialize,
tools/list (one tool, "echo") and tools/call echo, but on the way it:

  - writes about 800 KB to stderr before it reads anything (far more than a
    pipe holds: a host that does not drain stderr deadlocks here; less than
    the 1 MiB of lines the transport keeps for a host that is slower than
    the server), and a last stderr line without a newline;
  - before the initialize response, writes to stdout: a line that is not JSON,
    JSON that is not JSON-RPC, a response to an id nobody used, a 2 MiB
    notification (too long for a host running with --max-line 1048576), blank
    lines, and three requests to the client: ping (string id), roots/list and
    sampling/createMessage (which the host does not implement);
  - writes the initialize response with CRLF, one byte at a time;
  - answers tools/call echo with what the host replied to its three requests;
  - at the end of its stdin, writes a last notification without a newline.

Options: --ignore-eof (keep running after stdin closes), --ignore-term (ignore
SIGTERM), --die-after-init (exit right after answering initialize),
--silent-probe (no answer to server/discover).
"""

import json
import signal
import sys
import time

args = set(sys.argv[1:])
if "--ignore-term" in args:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)

out = sys.stdout.buffer
err = sys.stderr


def send(obj, end=b"\n"):
    out.write(json.dumps(obj).encode() + end)
    out.flush()


for i in range(10000):
    err.write(f"rogue chatter {i:05d} " + "." * 60 + "\n")
err.flush()

replies = {}  # our request id -> the host's reply
while True:  # the probe (and its cancellation, if it timed out), then initialize
    init = json.loads(sys.stdin.buffer.readline())
    if init.get("method") == "initialize":
        break
    if init.get("method") == "server/discover" and "--silent-probe" not in args:
        send({"jsonrpc": "2.0", "id": init["id"], "error": {"code": -32601, "message": "nope"}})

out.write(b"this is not json\n")
out.write(b'{"hello": "world"}\n')
out.write(b'{"jsonrpc": "2.0", "id": 12345, "result": {}}\n')
out.write(
    b'{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"'
    + b"a" * (2 << 20)
    + b'"}}\n'
)
out.write(b"\n   \r\n")
out.flush()
send({"jsonrpc": "2.0", "id": "s-1", "method": "ping"})
send({"jsonrpc": "2.0", "id": 7, "method": "roots/list"})
send(
    {
        "jsonrpc": "2.0",
        "id": 8,
        "method": "sampling/createMessage",
        "params": {"messages": [], "maxTokens": 1},
    }
)
response = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": init["id"],
        "result": {
            "protocolVersion": init["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "rogue", "version": "6.6.6"},
        },
    }
).encode() + b"\r\n"
for b in response:
    out.write(bytes([b]))
    out.flush()
if "--die-after-init" in args:
    sys.exit(0)

for line in sys.stdin.buffer:
    msg = json.loads(line)
    if "method" not in msg:  # a reply to one of our requests
        replies[msg["id"]] = msg
        continue
    if "id" not in msg:
        continue  # notifications/initialized
    if msg["method"] == "tools/list":
        tool = {"name": "echo", "inputSchema": {"type": "object"}}
        send({"jsonrpc": "2.0", "id": msg["id"], "result": {"tools": [tool]}})
    elif msg["method"] == "tools/call":
        got = " ".join(
            f"{rid}={json.dumps(replies[rid].get('result', replies[rid].get('error')))}"
            for rid in ("s-1", 7, 8)
            if rid in replies
        )
        result = {"content": [{"type": "text", "text": got}]}
        send({"jsonrpc": "2.0", "id": msg["id"], "result": result})
    else:
        send({"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32601, "message": "nope"}})

err.write("rogue: end of input, no newline after this")
err.flush()
send({"jsonrpc": "2.0", "method": "notifications/message", "params": {"data": "bye"}}, end=b"")
if "--ignore-eof" in args:
    time.sleep(60)
