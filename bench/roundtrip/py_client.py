"""Round trips per second against examples/mcp_server.c with the Python SDK's client:
`ClientSession` over `stdio_client` (PyPI `mcp`, pinned in requirements-mcp2.txt and
requirements-mcp1.txt, each installed into its own venv under target/bench/), for
bench/roundtrip/run.sh. The same work as host.c (see there), the SDK's way:

    python py_client.py CLIENT SERVER N ROUNDS SPAWNS [INFLIGHT]

CLIENT names the lines (python-sdk, python-sdk-v1). stdio_client + ClientSession +
initialize() (spawn, initialize, notifications/initialized), one list_tools and a warm-up
of WARM_UP (2000) calls in each mode (whatever N, as the other clients), then ROUNDS rounds of
    sequential  N x `await session.call_tool("echo", {"text": text})`;
    inflight    N calls through INFLIGHT (100) asyncio tasks, each awaiting its call and
                starting the next: INFLIGHT outstanding at all times (a semaphore of 100
                over N tasks, without creating N tasks up front).
Every result is checked (one text content with the text sent, not an error); a wrong one
raises and the process exits 2. Then the session and the transport are closed (the server
exits at the end of its stdin), and SPAWNS times: stdio_client, ClientSession,
initialize(), close. The first response's time is taken when the session's dispatcher
takes the first message off the transport's read stream (a thin wrapper around the stream
stdio_client gives), the handshake's end when initialize() returns. The SDK's defaults are
kept (the server's stderr to ours, no request timeout). Runs on asyncio (anyio's default).

Prints ROUNDTRIP lines as host.c does; cpu_median from time.process_time() (user + system
of the whole process).
"""

import asyncio
import statistics
import sys
import time

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

WARM_UP = 2000  # calls in each mode before the timed runs, as the other clients


class FirstMessageClock:
    """The read stream stdio_client gives, noting when the first item is taken from it."""

    def __init__(self, stream):
        self._stream = stream
        self.first = None

    def _seen(self, item):
        if self.first is None:
            self.first = time.perf_counter()
        return item

    async def receive(self):
        return self._seen(await self._stream.receive())

    def __aiter__(self):
        return self

    async def __anext__(self):
        return self._seen(await self._stream.__anext__())

    async def __aenter__(self):
        await self._stream.__aenter__()
        return self

    async def __aexit__(self, *exc):
        return await self._stream.__aexit__(*exc)

    def __getattr__(self, name):
        return getattr(self._stream, name)


def is_error(result):
    return getattr(result, "is_error", getattr(result, "isError", None))


async def call(session, i):
    text = f"round trip {i}"
    result = await session.call_tool("echo", {"text": text})
    c = result.content
    if is_error(result) or len(c) != 1 or c[0].type != "text" or c[0].text != text:
        raise RuntimeError(f"tools/call {i}: wrong result {result!r}")


async def sequential(session, count):
    t0 = time.perf_counter()
    for i in range(count):
        await call(session, i)
    return time.perf_counter() - t0


async def pooled(session, count, width):
    next_i = 0

    async def worker():
        nonlocal next_i
        while next_i < count:
            i = next_i
            next_i += 1
            await call(session, i)

    t0 = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(min(width, count))))
    return time.perf_counter() - t0


def line(client, mode, requests, width, v, extra=""):
    print(f"ROUNDTRIP client={client} mode={mode} requests={requests} inflight={width} "
          f"seconds={min(v):.9f} median={statistics.median(v):.9f} runs={len(v)}{extra}", flush=True)


async def main():
    if len(sys.argv) not in (6, 7):
        sys.exit("usage: py_client.py CLIENT SERVER N ROUNDS SPAWNS [INFLIGHT]")
    client, server = sys.argv[1], sys.argv[2]
    n, rounds, spawns = int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
    width = int(sys.argv[6]) if len(sys.argv) == 7 else 100
    params = StdioServerParameters(command=server, args=[])

    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            tools = (await session.list_tools()).tools
            if not any(t.name == "echo" for t in tools):
                raise RuntimeError("tools/list: no echo tool")
            await sequential(session, WARM_UP)
            await pooled(session, WARM_UP, width)
            seq, par, seq_cpu, par_cpu = [], [], [], []
            for _ in range(rounds):
                c0 = time.process_time()
                seq.append(await sequential(session, n))
                c1 = time.process_time()
                par.append(await pooled(session, n, width))
                seq_cpu.append(c1 - c0)
                par_cpu.append(time.process_time() - c1)
    line(client, "sequential", n, 1, seq, f" cpu_median={statistics.median(seq_cpu):.9f}")
    line(client, "inflight", n, width, par, f" cpu_median={statistics.median(par_cpu):.9f}")

    first, hs = [], []
    for _ in range(spawns):
        t0 = time.perf_counter()
        async with stdio_client(params) as (read, write):
            clock = FirstMessageClock(read)
            async with ClientSession(clock, write) as session:
                await session.initialize()
                end = time.perf_counter()
        if clock.first is None:
            raise RuntimeError("initialize() returned before any message came")
        first.append(clock.first - t0)
        hs.append(end - t0)
    line(client, "spawn", 1, 1, first, f" handshake_median={statistics.median(hs):.9f}")


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except Exception:  # any failure (an ExceptionGroup from anyio too) is a failed run
        import traceback

        traceback.print_exc()
        sys.exit(2)
