#!/usr/bin/env python3
"""Collects the runners' lines (bench/run.sh) into tables, a Markdown file and a PNG chart.

Usage: report.py RESULTS_TXT MANIFEST_JSON OUT_MD OUT_PNG

RESULTS_TXT holds the lines the runners printed, plus lines from run.sh:
  BENCH runner=R corpus=C chunk=N bytes=B messages=M errors=E seconds=BEST median=MED runs=K ...
    (chunk=0: an encode line, corpus = the documents' kind, e.g. compact, pretty, small-pretty
    or mixed-compact: the file encode-CORPUS.docs; extra fields such as simd=LEVEL,
    the SIMD level the runner ran at, or simdjson's impl=NAME, are kept)
  SKIP runner=R corpus=C chunk=N reason=free text to the end of the line
  CALLGRIND bytes=B ir=IR [messages=M transport=MODE] workload=free text to the end of the line
  INFO key=free text to the end of the line
and the transport runner's lines (bench/runners/transport.c):
  TRANSPORT mode=MODE corpus=C chunk=N bytes=B messages=M errors=E seconds=BEST median=MED runs=K ...
and the round-trip benchmark's (bench/roundtrip/run.sh; bench/roundtrip/table.py renders them):
  ROUNDTRIP layout=L client=C mode=M requests=N inflight=K seconds=BEST median=MED runs=R ...

Checks that every runner counted, per corpus file, exactly the valid messages (and invalid
lines) the manifest says the file holds; a mismatch prints a loud error and exits 1 (after
writing the outputs). Without matplotlib it still prints and writes the Markdown.
"""

import json
import os
import sys

# The round-trip benchmark's table (bench/roundtrip/table.py), shared with bench/roundtrip/run.sh.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "roundtrip"))
import table as roundtrip_table  # noqa: E402

OURS = "mcp_stdio"
# Our reader with MCP_STDIO_SIMD=portable: the SSE2 (x86-64) floor, shown beside the default.
OURS_SSE2 = "mcp_stdio-sse2"
# The SIMD validators built for this CPU: "ours / best" divides by the faster of them per cell
# (issue 12's headline ratio).
BEST_PEERS = ["simdjson-native", "sonic-rs"]
# Our encoders, and the peer their ratio is taken against in the encode table.
OUR_ENCODERS = ["mcp_encode", "mcp_encode_to"]
ENCODE_PEER = "sonic-rs"
# The transport benchmark's modes (bench/runners/transport.c), in display order.
TRANSPORT_MODES = {
    "bare": "bare reader (`MCP_READER_JSONRPC`)",
    "memory": "memory transport",
    "socketpair": "socketpair transport",
}
# The bound on the memory transport's overhead on small messages.
TRANSPORT_MAX_OVERHEAD = 0.25
# Display order and descriptions.
RUNNERS = {
    "mcp_stdio": "this library, C ABI, default flags (framing + RFC 8259 + UTF-8)",
    "mcp_stdio-sse2": "the same with MCP_STDIO_SIMD=portable: our kernels at the baseline (SSE2 on x86-64), the "
                      "portable floor (memchr and simdutf8 still detect AVX2 themselves)",
    "mcp_stdio+jsonrpc": "the same with MCP_READER_JSONRPC (JSON-RPC 2.0 classification)",
    "naive-rust": "split on \\n + serde_json::from_slice::<Value>, drain the prefix",
    "python": "the seed's reference algorithm (str buffer, split, json.loads), CPython",
    "ts-sdk": "@modelcontextprotocol/sdk ReadBuffer (JSON.parse + zod JSON-RPC schema), Node",
    "go": "bufio.Reader.ReadSlice + encoding/json.Valid",
    "simdjson-native": "simdjson DOM parser line by line, -O3 -march=native",
    "simdjson-portable": "simdjson DOM parser line by line, -O3 (no -march)",
    "sonic-rs": "sonic_rs::from_slice::<IgnoredAny> line by line (+ a \\u hex-digit check), -C target-cpu=native",
}
# The MCP SDK peers of the 8x goal (naive-rust stands in for a Rust SDK's codec; the issue
# lists Go's encoding/json check among the existing implementations).
SDK_PEERS = ["ts-sdk", "python", "naive-rust", "go"]
CORPORA = ["small", "mixed", "large", "escape", "crlf"]
CHUNKS = [65536, 4096, 1]


def chunk_name(n):
    return f"{n // 1024} KiB" if n >= 1024 and n % 1024 == 0 else f"{n} B"


def si(x):
    if x is None:
        return "-"
    for div, unit in ((1e9, " G"), (1e6, " M"), (1e3, " k")):
        if x >= div:
            return f"{x / div:.2f}{unit}"
    return f"{x:.1f}"


def mbps(x):
    if x is None:
        return "-"
    return f"{x:,.0f}" if x >= 100 else f"{x:.3g}"


def simd_levels(bench):
    """(runner, level text) of the runners that report theirs: simd= (ours, sonic-rs), impl= (simdjson)."""
    seen = {}
    for b in bench:
        level = b.get("simd") or (f"impl={b['impl']}" if "impl" in b else None)
        if level:
            seen.setdefault(b["runner"], set()).add(level)
    order = [r for r in RUNNERS if r in seen] + sorted(set(seen) - set(RUNNERS))
    notes = {OURS: " (run-time choice)", OURS_SSE2: " (forced: MCP_STDIO_SIMD=portable)",
             "mcp_stdio+jsonrpc": " (run-time choice)", "mcp_encode": " (run-time choice)",
             "mcp_encode_to": " (run-time choice)", "sonic-rs": " (compile time, -C target-cpu=native)",
             "simdjson-native": " (libsimdjson's run-time choice)", "simdjson-portable": " (libsimdjson's run-time choice)"}
    return [(r, "/".join(sorted(seen[r])) + notes.get(r, "")) for r in order]


def parse(path):
    bench, skips, callgrind, info, transport, roundtrip = [], [], [], [], [], []
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            tag, _, rest = line.partition(" ")
            if tag == "ROUNDTRIP":
                roundtrip.append(roundtrip_table.parse_line(line))
                continue
            if tag == "INFO":
                key, _, value = rest.partition("=")
                info.append((key, value))
                continue
            if tag not in ("BENCH", "SKIP", "CALLGRIND", "TRANSPORT"):
                continue
            tail = None  # free text at the end of SKIP and CALLGRIND lines
            if tag in ("SKIP", "CALLGRIND"):
                rest, _, tail = rest.partition(" reason=" if tag == "SKIP" else " workload=")
            fields = dict(kv.split("=", 1) for kv in rest.split() if "=" in kv)
            if tag in ("BENCH", "TRANSPORT"):
                for k in ("chunk", "bytes", "messages", "errors", "runs"):
                    fields[k] = int(fields[k])
                for k in ("seconds", "median"):
                    fields[k] = float(fields[k])
                (bench if tag == "BENCH" else transport).append(fields)
            elif tag == "SKIP":
                fields["chunk"] = int(fields["chunk"])
                fields["reason"] = tail
                skips.append(fields)
            else:
                fields["bytes"] = int(fields["bytes"])
                fields["ir"] = int(fields["ir"])
                if "messages" in fields:
                    fields["messages"] = int(fields["messages"])
                fields["workload"] = tail
                callgrind.append(fields)
    return bench, skips, callgrind, info, transport, roundtrip


def md_table(header, rows, align=None):
    align = align or ["l"] + ["r"] * (len(header) - 1)
    sep = ["---:" if a == "r" else "---" for a in align]
    out = ["| " + " | ".join(header) + " |", "| " + " | ".join(sep) + " |"]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(out)


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    results_path, manifest_path, out_md, out_png = sys.argv[1:]
    bench, skips, callgrind, info, transport, roundtrip = parse(results_path)
    # Instruction counts of the transport benchmark (per message) apart from the others (per byte).
    transport_cg = {w["transport"]: w for w in callgrind if "transport" in w}
    callgrind = [w for w in callgrind if "transport" not in w]
    with open(manifest_path, encoding="utf-8") as f:
        manifest = json.load(f)
    files = manifest["files"]

    reads = [b for b in bench if b["chunk"] > 0]
    encodes = [b for b in bench if b["chunk"] == 0]
    cell = {(b["runner"], b["corpus"], b["chunk"]): b for b in reads}
    runners = [r for r in RUNNERS if any(b["runner"] == r for b in reads)]
    runners += sorted({b["runner"] for b in reads} - set(runners))
    peers = [r for r in runners if r != OURS]
    rows_keys = [(c, n) for n in CHUNKS for c in CORPORA
                 if any((r, c, n) in cell for r in runners)]

    def rate(r, c, n, what):
        b = cell.get((r, c, n))
        if b is None:
            return None
        return (b["bytes"] / 1e6 if what == "MB/s" else b["messages"]) / b["seconds"]

    md = ["# mcp-stdio side-by-side benchmark", ""]
    levels = simd_levels(bench)
    if levels:
        md += ["**SIMD levels of this run**: " + "; ".join(f"`{r}` {v}" for r, v in levels) + ".", ""]
    if info:
        md += [f"- **{k}**: {v}" for k, v in info] + [""]
    md += ["Runners:", ""] + [f"- `{r}`: {RUNNERS.get(r, '')}" for r in runners] + [""]
    corp = []
    for c in CORPORA:
        for key in (c, c + ".slice"):
            if key in files:
                f = files[key]
                corp.append((f"`{f['file']}`", f"{f['bytes']:,}", f"{f['lines']:,}", f"{f['valid']:,}",
                             f"{f['invalid']:,}", f"{f['line_min']:,} / {f['line_median']:,} / {f['line_max']:,}",
                             f"{100 * f.get('non_ascii_fraction', 0):.1f}%"))
    md += ["Corpora (`target/bench-corpus/`, generated by `bench/corpus.py`; `.slice` files are the "
           "1-byte-chunk inputs):", "",
           md_table(["file", "bytes", "lines", "valid", "invalid", "line min / median / max", "non-ASCII"], corp),
           ""]

    def matrix(what, fmt):
        header = ["corpus", "chunk"] + [f"`{r}`" for r in runners]
        rows = []
        for c, n in rows_keys:
            rows.append([c, chunk_name(n)] + [fmt(rate(r, c, n, what)) for r in runners])
        return md_table(header, rows, ["l", "r"] + ["r"] * len(runners))

    runs = sorted({b["runs"] for b in reads})
    settings = dict(kv.split("=", 1) for kv in dict(info).get("settings", "").split() if "=" in kv)
    processes = settings.get("BENCH_PROCESSES", "1")
    md += [f"## Throughput, MB/s (10^6 input bytes per second; best of {'/'.join(map(str, runs))} run(s) "
           f"in each of {processes} process(es))", "",
           matrix("MB/s", mbps), "",
           "## Messages per second", "", matrix("msgs", si), ""]

    # Ratios ours / peer.
    def fmt_ratio(ratio):
        return "-" if ratio is None else f"{ratio:.2f}x" if ratio < 10 else f"{ratio:.1f}x"

    def best_peer(c, n):  # (rate, runner) of the fastest of BEST_PEERS on the cell, or None
        cands = [(rate(p, c, n, "MB/s"), p) for p in BEST_PEERS if p in runners]
        cands = [x for x in cands if x[0]]
        return max(cands) if cands else None

    def over_best(r, c, n):
        ours, best = rate(r, c, n, "MB/s"), best_peer(c, n)
        return ours / best[0] if ours and best else None

    best_present = [p for p in BEST_PEERS if p in runners]
    best_cols = [r for r in (OURS, OURS_SSE2) if r in runners] if best_present else []
    best_name = ", ".join(f"`{p}`" for p in best_present)
    ratio_rows, worst = [], {}
    for c, n in rows_keys:
        ours = rate(OURS, c, n, "MB/s")
        row = [c, chunk_name(n)]
        for p in peers:
            theirs = rate(p, c, n, "MB/s")
            if ours is None or theirs is None:
                row.append("-")
                continue
            ratio = ours / theirs
            row.append(fmt_ratio(ratio))
            if p not in worst or ratio < worst[p][0]:
                worst[p] = (ratio, c, n)
        for r in best_cols:
            text = fmt_ratio(over_best(r, c, n))
            row.append(f"**{text}**" if r == OURS and text != "-" else text)
        ratio_rows.append(row)
    best_header = [f"**`{r}` / best**" if r == OURS else f"`{r}` / best" for r in best_cols]
    md += [f"## Ratios: `{OURS}` / each peer (throughput; >1 = ours faster)", "",
           md_table(["corpus", "chunk"] + [f"`{p}`" for p in peers] + best_header, ratio_rows,
                    ["l", "r"] + ["r"] * (len(peers) + len(best_cols))),
           ""]
    if best_cols:
        md += [f"\"best\": the faster of {best_name} on each cell (SIMD validators built for this CPU: "
               f"`-march=native`, `-C target-cpu=native`). "
               + (f"`{OURS_SSE2}` / best: our reader forced to its baseline kernels (`MCP_STDIO_SIMD=portable`) "
                  f"against the same: the portable floor." if OURS_SSE2 in best_cols else ""), ""]
    if worst:
        md += ["Lowest ratio per peer: " + "; ".join(
            f"`{p}` {w[0]:.2f}x ({w[1]}, {chunk_name(w[2])})" for p, w in worst.items()) + ".", ""]

    # The goals of issues 5 and 12, checked on this run's numbers.
    goals = []
    sdks = [p for p in SDK_PEERS if p in runners]

    def min_ratio(peer_of_cell):
        best = None
        for c, n in rows_keys:
            ours, theirs = rate(OURS, c, n, "MB/s"), peer_of_cell(c, n)
            if ours and theirs:
                r = ours / theirs[0]
                if best is None or r < best[0]:
                    best = (r, c, n, theirs[1])
        return best

    def fastest_sdk(c, n):
        cands = [(rate(p, c, n, "MB/s"), p) for p in sdks]
        cands = [x for x in cands if x[0]]
        return max(cands) if cands else None

    if sdks:
        w = min_ratio(fastest_sdk)
        if w:
            goals.append(f"- at least 8x the fastest MCP SDK peer ({', '.join(f'`{p}`' for p in sdks)}) in every "
                         f"cell: lowest {w[0]:.2f}x (`{w[3]}`, {w[1]}, {chunk_name(w[2])}): "
                         f"**{'met' if w[0] >= 8 else 'not met'}**")
            # Where 8x the fastest peer is beyond the fastest validator measured, no
            # validator could meet it: say so, cell by cell.
            if "simdjson-native" in runners:
                beyond = []
                for c, n in rows_keys:
                    f, sj = fastest_sdk(c, n), rate("simdjson-native", c, n, "MB/s")
                    if f and sj and 8 * f[0] > sj:
                        beyond.append(f"{c} {chunk_name(n)} (8x `{f[1]}` = {8 * f[0]:,.0f} MB/s, "
                                      f"simdjson {sj:,.0f})")
                if beyond:
                    goals.append(f"  - in {len(beyond)} of {len(rows_keys)} cells 8x the fastest peer is above "
                                 f"`simdjson-native`'s own rate, out of reach of any line-by-line validator "
                                 f"measured: " + "; ".join(beyond))
            for peer in [p for p in ("ts-sdk", "python") if p in sdks]:
                for n in CHUNKS:
                    r = min_ratio(lambda c, m, peer=peer, n=n: (rate(peer, c, m, "MB/s"), peer) if m == n and rate(peer, c, m, "MB/s") else None)
                    if r:
                        goals.append(f"  - against `{peer}` alone, {chunk_name(n)} chunks: lowest {r[0]:.1f}x ({r[1]}): "
                                     f"**{'met' if r[0] >= 8 else 'not met'}**")
    if "simdjson-native" in runners:
        for n in CHUNKS:
            keys = [(c, m) for c, m in rows_keys if m == n]
            ratios = [(rate(OURS, c, n, "MB/s") / rate("simdjson-native", c, n, "MB/s"), c) for c, _ in keys
                      if rate(OURS, c, n, "MB/s") and rate("simdjson-native", c, n, "MB/s")]
            if ratios:
                lo = min(ratios)
                goals.append(f"- at or above `simdjson-native` line by line, {chunk_name(n)} chunks: lowest "
                             f"{lo[0]:.2f}x ({lo[1]}): **{'met' if lo[0] >= 1 else 'not met'}**")
    if best_cols:
        for n in CHUNKS:
            for r in best_cols:
                ratios = [(over_best(r, c, n), c) for c, m in rows_keys if m == n and over_best(r, c, n)]
                if not ratios:
                    continue
                lo, hi = min(ratios), max(ratios)
                if r == OURS:
                    goals.append(f"- (issue 12) at or above the best of {best_name} line by line, {chunk_name(n)} chunks: "
                                 f"lowest {lo[0]:.2f}x ({lo[1]}), highest {hi[0]:.2f}x ({hi[1]}): "
                                 f"**{'met' if lo[0] >= 1 else 'not met'}**")
                else:
                    goals.append(f"  - `{r}` (the portable floor, no goal) against the same, {chunk_name(n)} "
                                 f"chunks: lowest {lo[0]:.2f}x ({lo[1]}), highest {hi[0]:.2f}x ({hi[1]})")
    for b in encodes:
        if b["runner"] not in OUR_ENCODERS:
            continue
        gbs = b["bytes"] / 1e9 / b["seconds"]
        goals.append(f"- `{b['runner']}` at 1 GB/s or more on {b['corpus']} input: {gbs:.2f} GB/s: "
                     f"**{'met' if gbs >= 1 else 'not met'}**")
    # Issue 12: 3 GB/s on compact input, and 1.5x the peer's minify on every kind of document.
    for enc in OUR_ENCODERS:
        mine = [b for b in encodes if b["runner"] == enc]
        compact = [(b["bytes"] / 1e9 / b["seconds"], b["corpus"]) for b in mine if b["corpus"].endswith("compact")]
        if compact:
            cells = ", ".join(f"{c} {g:.2f} GB/s ({'met' if g >= 3 else 'not met'})" for g, c in compact)
            goals.append(f"- (issue 12) `{enc}` at 3 GB/s or more on compact input: {cells}")
        peer = {b["corpus"]: b for b in encodes if b["runner"] == ENCODE_PEER}
        ratios = [(peer[b["corpus"]]["seconds"] / b["seconds"], b["corpus"]) for b in mine
                  if b["corpus"] in peer and peer[b["corpus"]]["bytes"] == b["bytes"]]
        if ratios:
            lo, hi = min(ratios), max(ratios)
            goals.append(f"- (issue 12) `{enc}` at 1.5x `{ENCODE_PEER}` minify or more on every kind of document: "
                         f"lowest {lo[0]:.2f}x ({lo[1]}), highest {hi[0]:.2f}x ({hi[1]}): "
                         f"**{'met' if lo[0] >= 1.5 else 'not met'}**")
    tcell = {(b["mode"], b["corpus"]): b for b in transport}
    tcorpora = [c for c in CORPORA if any(k[1] == c for k in tcell)]
    tcorpora += sorted({k[1] for k in tcell} - set(tcorpora))

    def overhead(mode, c):  # median time of `mode` over the bare reader's, minus 1
        a, b = tcell.get(("bare", c)), tcell.get((mode, c))
        return b["median"] / a["median"] - 1 if a and b else None

    if goals:
        md += ["## The goals of issues 5 and 12, on this run", ""] + goals + [
            "", "(On a loaded machine a goal can read 'not met' from noise alone: see the noise table.)", ""]

    # Noise: how far the median run is from the best run.
    spread = []
    for r in runners:
        cells = [b for b in reads if b["runner"] == r and b["runs"] > 1]
        if cells:
            worst_cell = max(cells, key=lambda b: b["median"] / b["seconds"])
            avg = sum(b["median"] / b["seconds"] for b in cells) / len(cells)
            spread.append((f"`{r}`", f"{100 * (avg - 1):.0f}%",
                           f"{100 * (worst_cell['median'] / worst_cell['seconds'] - 1):.0f}% "
                           f"({worst_cell['corpus']}, {chunk_name(worst_cell['chunk'])})"))
    if spread:
        md += ["Noise (median run time over best run time, minus 1):", "",
               md_table(["runner", "mean", "worst cell"], spread), ""]

    if skips:
        md += ["Skipped:", ""] + [
            f"- `{s['runner']}`: {s['reason']}" if s["chunk"] == 0 else
            f"- `{s['runner']}` on `{s['corpus']}` in {chunk_name(s['chunk'])} chunks: {s['reason']}" for s in skips
        ] + [""]

    if encodes:
        peer_enc = {b["corpus"]: b for b in encodes if b["runner"] == ENCODE_PEER}
        rows = []
        for b in encodes:
            p = peer_enc.get(b["corpus"])
            ratio = "-"
            if p and b["runner"] in OUR_ENCODERS and b["bytes"] == p["bytes"]:
                ratio = fmt_ratio(p["seconds"] / b["seconds"])
            rows.append([f"`{b['runner']}`", b["corpus"], f"{b['bytes']:,}", f"{b['messages']:,}",
                         mbps(b["bytes"] / 1e6 / b["seconds"]), mbps(b["bytes"] / 1e6 / b["median"]),
                         f"{b['bytes'] / 1e6 / b['seconds'] / 1000:.2f}"] + ([ratio] if peer_enc else [])
                        + [b.get("simd", "-")])
        peer_title = f" and `{ENCODE_PEER}` minify" if peer_enc else ""
        peer_col = [f"ours / `{ENCODE_PEER}`"] if peer_enc else []
        md += [f"## mcp_encode, mcp_encode_to{peer_title} (validate + minify, one call per document)", "",
               "Documents (`bench/corpus.py`): `compact` and `pretty` are mixed messages and tools/list results, "
               "half and half (structure-heavy); `small-*` and `mixed-*` the small and mixed corpora's messages, "
               "as generated (compact) and pretty-printed. Goals: 1 GB/s (issue 5); 3 GB/s on compact input and "
               "1.5x sonic-rs minify on every kind (issue 12).", "",
               md_table(["function", "input", "bytes", "documents", "MB/s (best)", "MB/s (median)", "GB/s"]
                        + peer_col + ["SIMD"], rows,
                        ["l", "l"] + ["r"] * (5 + len(peer_col)) + ["l"]),
               ""]
        if peer_enc:
            md += [f"`{ENCODE_PEER}` minifies as its API allows: `from_slice::<sonic_rs::Value>` (a DOM) then "
                   f"`to_writer` (compact) into one reused `Vec`, plus the `\\n`. It rewrites what it parsed "
                   f"(escapes decoded and re-escaped its way, numbers through f64/i64/u64) where ours keeps every "
                   f"token byte for byte; ratios > 1 = ours faster.", ""]

    if callgrind:
        rows = [(w["workload"], f"{w['bytes']:,}", f"{w['ir']:,}", f"{w['ir'] / w['bytes']:.2f}")
                for w in callgrind]
        md += ["## Instruction counts (valgrind --tool=callgrind, our C runner, one pass; stable under load)", "",
               md_table(["workload", "input bytes", "instructions (Ir)", "Ir per byte"], rows), "",
               "Valgrind does not emulate AVX-512: these are the counts of the AVX2 (or older) code path "
               "the library selects under valgrind.", ""]

    if transport:
        truns = sorted({b["runs"] for b in transport})

        def cell_text(b):
            return f"{si(b['messages'] / b['median'])} msgs/s, {mbps(b['bytes'] / 1e6 / b['median'])} MB/s"

        modes = [m for m in TRANSPORT_MODES if any(k[0] == m for k in tcell)]
        rows = []
        for c in tcorpora:
            row = [c] + [cell_text(tcell[(m, c)]) if (m, c) in tcell else "-" for m in modes]
            for m in modes[1:]:
                o = overhead(m, c)
                row.append("-" if o is None else f"{100 * o:+.0f}%")
            rows.append(row)
        header = ["corpus"] + [TRANSPORT_MODES[m] for m in modes] + [
            f"{TRANSPORT_MODES[m].split()[0]} overhead" for m in modes[1:]]
        md += [f"## Transport: `McpTransport` against the bare reader (64 KiB chunks; median of "
               f"{'/'.join(map(str, truns))} rounds, the modes alternating within each round)", "",
               md_table(header, rows), "",
               "Overhead: the mode's median time over the bare reader's, minus 1 (what the transport "
               "costs on top of framing, validating and classifying). The socketpair column includes the "
               "writer thread's write(2) calls and the transport's read(2) and poll(2).", ""]
        if "bare" in transport_cg and "memory" in transport_cg:
            b, m = transport_cg["bare"], transport_cg["memory"]
            bare_ir, mem_ir = b["ir"] / b["messages"], m["ir"] / m["messages"]
            md += [f"Instructions per message (callgrind, {b['messages']:,} small messages, 1 MiB, 64 KiB chunks; "
                   f"stable under load): bare reader {bare_ir:,.0f}, memory transport {mem_ir:,.0f}: "
                   f"{mem_ir - bare_ir:+,.0f} ({100 * (mem_ir / bare_ir - 1):+.1f}%).", ""]
        small_overhead = overhead("memory", "small")
        if small_overhead is not None:
            cg = ""
            if "bare" in transport_cg and "memory" in transport_cg:
                cg = f"; in instructions {100 * (mem_ir / bare_ir - 1):+.0f}%"
            md += [f"The memory transport within {100 * TRANSPORT_MAX_OVERHEAD:.0f}% of the bare reader on small "
                   f"messages (median time): {100 * small_overhead:+.0f}%{cg}: "
                   f"**{'met' if small_overhead <= TRANSPORT_MAX_OVERHEAD else 'not met'}** (timings on a loaded "
                   f"machine are noisy; the instruction count is not).", ""]

    md += roundtrip_table.section(roundtrip)

    # The count check.
    problems = []
    for b in reads:
        key = b["corpus"] + (".slice" if b["chunk"] == 1 else "")
        f = files.get(key)
        if f is None:
            problems.append(f"{b['runner']} {b['corpus']} {chunk_name(b['chunk'])}: no such corpus in the manifest")
            continue
        if (b["messages"], b["errors"], b["bytes"]) != (f["valid"], f["invalid"], f["bytes"]):
            problems.append(
                f"{b['runner']} on {f['file']} in {chunk_name(b['chunk'])} chunks counted {b['messages']} valid "
                f"messages and {b['errors']} invalid lines over {b['bytes']} bytes; the file holds {f['valid']} "
                f"valid, {f['invalid']} invalid, {f['bytes']} bytes")
    for b in transport:
        f = files.get(b["corpus"])
        if f is None:
            problems.append(f"transport {b['mode']} {b['corpus']}: no such corpus in the manifest")
        elif (b["messages"], b["errors"], b["bytes"]) != (f["valid"], f["invalid"], f["bytes"]):
            problems.append(
                f"the transport benchmark ({b['mode']}) on {f['file']} counted {b['messages']} valid messages and "
                f"{b['errors']} invalid lines over {b['bytes']} bytes; the file holds {f['valid']} valid, "
                f"{f['invalid']} invalid, {f['bytes']} bytes")
    for b in encodes:
        f = files.get(f"encode-{b['corpus']}")
        if f and (b["messages"], b["errors"]) != (f["lines"], 0):
            problems.append(f"{b['runner']} on {f['file']}: {b['messages']} encoded, {b['errors']} failed, "
                            f"of {f['lines']} documents")
    # The forced-SSE2 runner must really have run below the default (a typo in the variable,
    # or a library that ignores it, would otherwise show the default's figures as the floor).
    level_problems = []
    for b in bench:
        if b["runner"] == OURS_SSE2 and b.get("simd") in ("avx2", "avx512"):
            level_problems.append(f"{OURS_SSE2} on {b['corpus']} in {chunk_name(b['chunk'])} chunks ran at simd="
                            f"{b['simd']}, not the baseline: MCP_STDIO_SIMD=portable was not applied")
    if level_problems:
        md += ["## !!! SIMD LEVEL NOT FORCED !!!", ""] + [f"- {p}" for p in level_problems] + [""]
    if problems:
        md += ["## !!! COUNT MISMATCH !!!", ""] + [f"- {p}" for p in problems] + [""]
    else:
        md += [f"Message counts: every runner counted exactly the valid messages (and invalid lines) of every "
               f"corpus file ({len(reads) + len(transport)} cells checked).", ""]

    text = "\n".join(md)
    with open(out_md, "w", encoding="utf-8") as f:
        f.write(text)
    print(text)
    print(f"written: {out_md}")

    try:
        chart(out_png, runners, cell, rate)
        print(f"written: {out_png}")
    except ImportError:
        print("no PNG chart: matplotlib is not installed here (bench/run.sh installs it into target/bench/venv)")

    bar = "!" * 78
    if level_problems:
        print(f"\n{bar}\nSIMD LEVEL NOT FORCED: the forced-SSE2 figures are not the floor\n"
              + "\n".join(level_problems) + f"\n{bar}", file=sys.stderr)
    if problems:
        print(f"\n{bar}\nCOUNT MISMATCH: runners disagree on the number of valid messages\n"
              + "\n".join(problems) + f"\n{bar}", file=sys.stderr)
    if problems or level_problems:
        sys.exit(1)


def chart(path, runners, cell, rate):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = [(65536, "MB/s", "64 KiB chunks: MB/s"), (4096, "MB/s", "4 KiB chunks: MB/s"),
              (1, "msgs", "1-byte chunks: messages/s")]
    panels = [p for p in panels if any(k[2] == p[0] for k in cell)]
    fig, axes = plt.subplots(len(panels), 1, figsize=(13, 4.2 * len(panels)), squeeze=False)
    colors = plt.get_cmap("tab10").colors
    width = 0.8 / max(len(runners), 1)
    for ax, (n, what, title) in zip(axes[:, 0], panels):
        corpora = [c for c in CORPORA if any((r, c, n) in cell for r in runners)]
        for i, r in enumerate(runners):
            xs, ys = [], []
            for j, c in enumerate(corpora):
                v = rate(r, c, n, what)
                if v:
                    xs.append(j + (i - (len(runners) - 1) / 2) * width)
                    ys.append(v)
            ax.bar(xs, ys, width, label=r, color=colors[i % len(colors)],
                   edgecolor="black" if r == OURS else None, linewidth=1.2 if r == OURS else 0)
        ax.set_yscale("log")
        ax.set_xticks(range(len(corpora)), corpora)
        ax.set_title(title)
        ax.set_ylabel(what if what == "MB/s" else "messages/s")
        ax.grid(axis="y", which="both", alpha=0.3)
        lo, hi = ax.get_ylim()
        ax.set_ylim(lo, hi * 2)
    axes[0, 0].legend(ncol=5, fontsize=8, loc="upper left")
    fig.suptitle("mcp-stdio vs MCP SDK framing and JSON validators (log scale, higher is better)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    main()
