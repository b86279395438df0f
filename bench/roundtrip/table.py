#!/usr/bin/env python3
"""The round-trip benchmark's table, from the ROUNDTRIP lines of bench/roundtrip/run.sh.

Usage: table.py RESULTS_TXT OUT_MD   (writes the Markdown and prints it)

bench/report.py imports `parse_line` and `section` to put the same table in results.md.
A line (bench/roundtrip/host.c, ts_client.mjs, py_client.py; run.sh keeps, per client and
mode, the process with the lowest median):

  ROUNDTRIP layout=L client=C mode=sequential|inflight|spawn requests=N inflight=K
            seconds=BEST median=MED runs=R [cpu_median=S] [handshake_median=S]

For sequential and inflight, one run is N tools/call round trips (K outstanding at a time),
cpu_median the client process's median CPU time in a run; for spawn, one run is one spawn,
its seconds from starting the server to the first response (the initialize result),
handshake_median the median to the handshake's end. Every figure in the table is a median
run. One table per layout (spread: as the scheduler places the processes; pinned: on one core).
"""

import sys

OURS = "mcp_stdio"
FLOOR = "pipe-floor"  # a reference, not an SDK: left out of the ratios to the fastest SDK
# Display order and descriptions.
CLIENTS = {
    "mcp_stdio": "this library's transport from C: `mcp_transport_spawn`, `mcp_transport_request`, "
                 "`mcp_transport_next_event` (`bench/roundtrip/host.c`)",
    "ts-sdk": "TypeScript SDK: `Client` over `StdioClientTransport`, Node (`bench/roundtrip/ts_client.mjs`)",
    "python-sdk": "Python SDK 2.x: `ClientSession` over `stdio_client`, asyncio (`bench/roundtrip/py_client.py`)",
    "python-sdk-v1": "Python SDK 1.x: the same client code on the previous major version",
    "pipe-floor": "the floor, not an MCP client: `posix_spawn`, blocking `write`/`read`, each response "
                  "compared byte for byte, no JSON parsed (`bench/roundtrip/floor.c`): what the kernel and the "
                  "server cost by themselves",
}
LAYOUTS = {
    "spread": "client and server where the scheduler puts them (2 cores)",
    "pinned": "client and server on one core (`taskset -c 0`)",
}
# The goal: ours at least this many times the fastest SDK, in both modes.
GOAL = 10
# Fewer round trips per run than this (the smoke run's scaled-down counts): said next to the goal.
SMALL_RUN = 2000


def parse_line(line):
    """The fields of one ROUNDTRIP line (without its tag), numbers converted."""
    f = dict(kv.split("=", 1) for kv in line.split()[1:] if "=" in kv)
    f.setdefault("layout", "spread")
    for k in ("requests", "inflight", "runs"):
        f[k] = int(f[k])
    for k in ("seconds", "median", "handshake_median", "cpu_median"):
        if k in f:
            f[k] = float(f[k])
    return f


def md_table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "---|" + "---:|" * (len(header) - 1)]
    return out + ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]


def rate(f, key="median"):  # round trips per second of the median (or best) run
    return f["requests"] / f[key] if f else None


def cpu_us(f):  # the client's CPU time per round trip, microseconds (median run)
    return 1e6 * f["cpu_median"] / f["requests"] if f and "cpu_median" in f else None


def fmt_rate(x):
    return "-" if x is None else f"{x:,.0f}"


def fmt_us(x):
    return "-" if x is None else f"{x:.1f}" if x < 100 else f"{x:,.0f}"


def fmt_ms(s):
    return "-" if s is None else f"{s * 1e3:.2f}"


def ratio(x):
    return f"{x:.2f}x" if x < 10 else f"{x:.1f}x"


def layout_section(layout, lines):
    cell = {(f["client"], f["mode"]): f for f in lines}
    clients = [c for c in CLIENTS if any(k[0] == c for k in cell)]
    clients += sorted({k[0] for k in cell} - set(clients))
    sdks = [c for c in clients if c not in (OURS, FLOOR)]
    width = max((f["inflight"] for f in lines if f["mode"] == "inflight"), default=100)

    def get(c, m):
        return cell.get((c, m))

    def spawn(c, key="median"):
        f = get(c, "spawn")
        return f.get(key) if f else None

    # Each column: (header, value of a client, format, higher is better).
    cols = [
        ("sequential round trips/s", lambda c: rate(get(c, "sequential")), fmt_rate, True),
        (f"{width}-in-flight round trips/s", lambda c: rate(get(c, "inflight")), fmt_rate, True),
        ("client CPU per round trip, sequential, us", lambda c: cpu_us(get(c, "sequential")), fmt_us, False),
        (f"client CPU per round trip, {width} in flight, us", lambda c: cpu_us(get(c, "inflight")), fmt_us, False),
        ("spawn to first response, ms", lambda c: spawn(c), fmt_ms, False),
        ("spawn to handshake end, ms", lambda c: spawn(c, "handshake_median"), fmt_ms, False),
    ]
    rows = [[f"`{c}`"] + [fmt(value(c)) for _, value, fmt, _ in cols] for c in clients]

    def versus(others, label):  # ours against the best of `others`, per column (>1 = ours better)
        row, found = [label], {}
        for name, value, _, higher in cols:
            ours = value(OURS)
            cands = [(value(c), c) for c in others if value(c)]
            if not ours or not cands:
                row.append("-")
                continue
            v, c = max(cands) if higher else min(cands)
            r = ours / v if higher else v / ours
            found[name] = (r, c)
            row.append(f"**{ratio(r)}**" + (f" (`{c}`)" if len(others) > 1 else ""))
        return row, found

    goals = []
    if OURS in clients and sdks:
        row, found = versus(sdks, f"`{OURS}` / fastest SDK")
        rows.append(row)
        for name, label in ((cols[0][0], "sequential"), (cols[1][0], f"{width} in flight")):
            if name in found:
                r, c = found[name]
                goals.append(f"- at least {GOAL}x the fastest SDK, {label}, {layout}: {ratio(r)} (against `{c}`): "
                             f"**{'met' if r >= GOAL else 'not met'}**")
    if OURS in clients and FLOOR in clients:
        rows.append(versus([FLOOR], f"`{OURS}` / `{FLOOR}`")[0])

    best_rows = [[f"`{c}`", fmt_rate(rate(get(c, "sequential"), "seconds")),
                  fmt_rate(rate(get(c, "inflight"), "seconds")), fmt_ms(spawn(c, "seconds"))] for c in clients]
    md = [f"### {LAYOUTS.get(layout, layout)}", "",
          *md_table(["client"] + [name for name, *_ in cols], rows), "",
          "<details><summary>best runs (compare with the medians above for the noise)</summary>", "",
          *md_table(["client", "sequential round trips/s", f"{width}-in-flight round trips/s",
                     "spawn to first response, ms"], best_rows), "", "</details>", ""]
    return md, goals


def section(lines):
    """Markdown lines for the ROUNDTRIP fields in `lines` (dicts from parse_line); [] if none."""
    if not lines:
        return []
    layouts = [lay for lay in LAYOUTS if any(f["layout"] == lay for f in lines)]
    layouts += sorted({f["layout"] for f in lines} - set(layouts))
    runs = sorted({f["runs"] for f in lines if f["mode"] != "spawn"})
    spawns = sorted({f["runs"] for f in lines if f["mode"] == "spawn"})
    clients = [c for c in CLIENTS if any(f["client"] == c for f in lines)]
    clients += sorted({f["client"] for f in lines} - set(clients))
    per_run = {}
    for f in lines:
        if f["mode"] == "sequential":
            per_run[f["client"]] = f["requests"]
    md = [f"## Round trips: `tools/call` echo against `examples/mcp_server.c` over pipes "
          f"(median of {'/'.join(map(str, runs))} runs; spawns: median of {'/'.join(map(str, spawns))})", ""]
    md += [f"- `{c}`: {CLIENTS.get(c, '')}" for c in clients] + [""]
    md += [f"Round trips per run: {', '.join(f'`{c}` {n:,}' for c, n in per_run.items())}. A run's rate is its "
           f"round trips over its time, its client CPU the client process's user + system time over its round "
           f"trips (the server's left out); each figure is the median run, of the process with the lowest median "
           f"among its client's processes. Ratio rows: ours over the other (for CPU and times, the other's over "
           f"ours): >1 = ours better. Every response was checked (its result text).", ""]
    all_goals = []
    for layout in layouts:
        body, goals = layout_section(layout, [f for f in lines if f["layout"] == layout])
        md += body
        all_goals += goals
    if all_goals:
        small = min(f["requests"] for f in lines if f["mode"] != "spawn") < SMALL_RUN
        md += ["The round-trip goal, on this run" + (f" (a smoke-sized run, under {SMALL_RUN:,} round trips per run: "
                                                     f"take it as a check that it runs, not as a measurement)"
                                                     if small else "") + ":", ""] + all_goals + [""]
    return md


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    info, lines = [], []
    with open(sys.argv[1], encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("ROUNDTRIP "):
                lines.append(parse_line(line))
            elif line.startswith("INFO "):
                key, _, value = line[5:].partition("=")
                info.append(f"- **{key}**: {value}")
            elif line.startswith("SKIP "):
                info.append(f"- **skipped**: {line[5:]}")
    md = ["# mcp-stdio round-trip benchmark", ""] + info + [""] + section(lines)
    text = "\n".join(md)
    with open(sys.argv[2], "w", encoding="utf-8") as f:
        f.write(text)
    print(text)
    print(f"written: {sys.argv[2]}")


if __name__ == "__main__":
    main()
