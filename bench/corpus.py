#!/usr/bin/env python3
"""Deterministic MCP stdio corpora for the side-by-side benchmark (bench/run.sh).

Writes into an output directory (default target/bench-corpus/):

  small.ndjson    ~150 B JSON-RPC messages (requests, notifications, results, errors)
  mixed.ndjson    0.1-50 KB messages, log-uniform sizes: tools/call text results
                  (escapes, ~20% non-ASCII bytes), base64 images, log notifications,
                  resources/read results
  large.ndjson    ~1 MiB lines: base64 blob resources and huge text results
  escape.ndjson   escape-heavy: strings full of \\n, \\", \\\\, \\uXXXX escapes (surrogate
                  pairs included) and raw non-ASCII, 0.2-20 KB messages
  crlf.ndjson     the mixed generator again, lines ending in \\r\\n, ~1% of the lines
                  replaced by invalid ones (truncated JSON, log text, trailing commas,
                  trailing garbage, raw control characters, single quotes...)

  <name>.slice.ndjson   the first lines of each (>= --slice-mb MiB) for the 1-byte runs
  encode-compact.docs   documents for mcp_encode timing, NUL-separated: half mixed messages
                        (string-heavy), half tools/list results (structure-heavy), compact
  encode-pretty.docs    the same documents pretty-printed (indent=2)
  encode-small-compact.docs, encode-small-pretty.docs   the small corpus's messages as
                        documents, as generated (compact) and pretty-printed
  encode-mixed-compact.docs, encode-mixed-pretty.docs   the same of the mixed corpus
  cg-mixed.ndjson       fixed 4 MiB of mixed (callgrind; independent of --size-mb)
  cg-small.ndjson       fixed 1 MiB of small (callgrind), cg-small-256k.ndjson its first 256 KiB
  cg-encode-compact.docs, cg-encode-pretty.docs   fixed ~1 MiB each (callgrind)
  manifest.json   sizes, line counts and the expected number of valid messages

Every line of every corpus is valid UTF-8 and every valid line is a JSON-RPC 2.0 message
that the TypeScript SDK's zod schema also accepts, so all runners can be compared on the
number of valid messages. Invalid lines are invalid for every JSON parser (no invalid
UTF-8, no lone surrogates, no NaN: those are where parsers legitimately differ).

Generation is seeded (random.Random) and sequential, so a corpus of N MiB is a prefix of
the corpus of M > N MiB, and every run on every machine writes the same bytes. Files are
regenerated only when this script or the sizes change (fingerprint in manifest.json).
"""

import argparse
import base64
import bisect
import hashlib
import itertools
import json
import math
import os
import random
import sys
import time

MIB = 1024 * 1024

WORDS = [
    "the", "server", "returned", "results", "for", "query", "in", "file", "line",
    "function", "error", "warning", "value", "config", "build", "test", "passed",
    "failed", "module", "request", "response", "cache", "index", "token", "user",
    "data", "path", "src/main.rs", "Cargo.toml", "0.42", "1024", "ok", "a", "of",
    "to", "and", "with", "is", "not", "found",
]
NON_ASCII = [
    "café", "naïve", "Größe", "température", "résumé", "données", "日本語", "テキスト",
    "данные", "ошибка", "→", "€12", "—", "✓", "🚀", "😀", "𝔘𝔫𝔦𝔠𝔬𝔡𝔢",
]
# Already-escaped JSON string fragments.
ESCAPES = [
    "\\n", "\\n", "\\n", "\\t", "\\\"quoted\\\"", "C:\\\\Users\\\\dev", "\\u00e9t\\u00e9",
    "\\ud83d\\ude80", "https:\\/\\/example.com\\/a", "\\r\\n", "\\u001b[31m",
]
SEPARATORS = [" ", ". ", ", ", "\\n"]
SEPARATOR_WEIGHTS = [17, 1, 1, 1]

# Escape-heavy text: source code and logs quoted into JSON strings.
HEAVY_ESCAPES = [
    "\\n", "\\n    ", "\\\"", "\\\\", "\\t", "\\r\\n", "\\u00e9", "\\u00fc", "\\u4e2d\\u6587",
    "\\u0440\\u0443\\u0441", "\\ud83d\\ude00", "\\ud834\\udd1e", "\\u2028", "\\/", "\\b",
    "\\f", "\\u0000", "\\u001f", "\\\"key\\\": \\\"value\\\"", "if (x) {\\n  return \\\"\\\\\\\\\\\";\\n}",
]
HEAVY_TOKENS = HEAVY_ESCAPES + NON_ASCII + WORDS[:20]
HEAVY_WEIGHTS = [5] * len(HEAVY_ESCAPES) + [5] * len(NON_ASCII) + [1] * 20

TEXT_TOKENS = WORDS + NON_ASCII + ESCAPES
# ~7% escapes (as in benches/framing.rs); non-ASCII words weighted so that ~20% of the
# bytes of text are non-ASCII.
TEXT_WEIGHTS = [12] * len(WORDS) + [12] * len(NON_ASCII) + [8] * len(ESCAPES)

TOOLS = ["read_file", "search_code", "run_tests", "get_weather", "list_directory",
         "git_diff", "query_database", "fetch_url"]
FILES = ["src/lib.rs", "src/reader.rs", "README.md", "docs/guide.md", "tests/ffi.rs",
         "include/mcp_stdio.h", "app/server.py", "web/index.ts"]
LEVELS = ["debug", "info", "notice", "warning", "error"]
LOGGERS = ["db", "indexer", "http", "scheduler", "auth"]

_BLEN = {t: len(t.encode("utf-8")) for t in TEXT_TOKENS + HEAVY_TOKENS + SEPARATORS}


def _cum(weights):
    return list(itertools.accumulate(weights))


TEXT_CUM = _cum(TEXT_WEIGHTS)
HEAVY_CUM = _cum(HEAVY_WEIGHTS)
SEP_CUM = _cum(SEPARATOR_WEIGHTS)


class TextPool:
    """A long random token stream (JSON string content, already escaped), cut into windows.

    Drawing every token of 64 MiB with the PRNG takes a minute in Python; a window at a
    random token boundary of a 4 MiB pool is as random to a parser and costs a slice.
    """

    def __init__(self, seed, tokens, cum, size=4 * MIB):
        rng = random.Random(seed)
        n = size // 5
        toks = rng.choices(tokens, cum_weights=cum, k=n)
        seps = rng.choices(SEPARATORS, cum_weights=SEP_CUM, k=n)
        parts = [p for pair in zip(toks, seps) for p in pair]
        self.text = "".join(parts)
        # Character and byte offsets of every token boundary (0 first).
        self.chars = [0, *itertools.accumulate(len(p) for p in parts)]
        self.bytes = [0, *itertools.accumulate(_BLEN[p] for p in parts)]

    def take(self, rng, target):
        """About `target` UTF-8 bytes (at least, never cutting an escape), from a random boundary."""
        if target <= 0:
            return ""
        total = self.bytes[-1]
        if target >= total:
            return self.text * (target // total) + self.take(rng, target % total)
        last_start = bisect.bisect_right(self.bytes, total - target) - 1
        i = rng.randint(0, last_start)
        j = bisect.bisect_left(self.bytes, self.bytes[i] + target)
        return self.text[self.chars[i]:self.chars[j]]


_POOLS = {}


def text(rng, target, heavy=False):
    """JSON string content (escaped, no quotes) of about `target` UTF-8 bytes."""
    if heavy not in _POOLS:
        _POOLS[heavy] = (TextPool(0x5EED00F2, HEAVY_TOKENS, HEAVY_CUM) if heavy
                         else TextPool(0x5EED00F1, TEXT_TOKENS, TEXT_CUM))
    return _POOLS[heavy].take(rng, target)


def b64(rng, chars):
    """Base64 of random bytes, `chars` characters rounded down to a multiple of 4."""
    groups = max(chars // 4, 0)
    s = base64.b64encode(rng.randbytes(groups * 3)).decode("ascii")
    if groups and rng.randrange(3) == 0:
        s = s[:-1] + "="
    return s


def rpc_id(rng, i):
    return f'"req-{i:x}"' if rng.randrange(4) == 0 else str(i)


def small_message(rng, i):
    r = rng.randrange(10)
    if r < 2:
        return (f'{{"jsonrpc":"2.0","id":{rpc_id(rng, i)},"method":"tools/call","params":{{"name":"{rng.choice(TOOLS)}",'
                f'"arguments":{{"path":"/home/dev/project/{rng.choice(FILES)}","limit":{rng.randint(1, 500)}}}}}}}')
    if r == 2:
        return (f'{{"jsonrpc":"2.0","method":"notifications/progress","params":{{"progressToken":"tok-{rng.getrandbits(32):08x}",'
                f'"progress":{rng.randint(0, 100)},"total":100,"message":"Indexing files"}}}}')
    if r < 5:
        return (f'{{"jsonrpc":"2.0","id":{rpc_id(rng, i)},"result":{{"content":[{{"type":"text","text":"'
                f'{text(rng, rng.randint(16, 80))}"}}],"isError":false}}}}')
    if r == 5:
        return (f'{{"jsonrpc":"2.0","id":{rpc_id(rng, i)},"error":{{"code":-32602,"message":"Invalid params: unknown tool '
                f"'{rng.choice(TOOLS)}'\",\"data\":{{\"retryable\":false}}}}}}")
    if r == 6:
        return (f'{{"jsonrpc":"2.0","id":{rpc_id(rng, i)},"method":"resources/read","params":{{"uri":"file:///var/log/app/'
                f'{rng.choice(LOGGERS)}-{rng.randint(1, 99)}.log","_meta":{{"progressToken":{i}}}}}}}')
    if r == 7:
        return (f'{{"jsonrpc":"2.0","id":{rpc_id(rng, i)},"method":"tools/list","params":{{"cursor":"c-{rng.getrandbits(64):016x}",'
                f'"_meta":{{"client":"bench"}}}}}}')
    if r == 8:
        return (f'{{"jsonrpc":"2.0","method":"notifications/message","params":{{"level":"{rng.choice(LEVELS)}",'
                f'"logger":"{rng.choice(LOGGERS)}","data":"{text(rng, rng.randint(30, 80))}"}}}}')
    return (f'{{"jsonrpc":"2.0","method":"notifications/cancelled","params":{{"requestId":{max(i - rng.randint(1, 9), 0)},'
            f'"reason":"User requested cancellation"}}}}')


def mixed_message(rng, i, target):
    if target < 250:
        return small_message(rng, i)
    r = rng.randrange(20)
    if r <= 8:
        head = f'{{"jsonrpc":"2.0","id":{rpc_id(rng, i)},"result":{{"content":[{{"type":"text","text":"'
        tail = '"}],"isError":false}}'
        return head + text(rng, target - len(head) - len(tail)) + tail
    if r <= 12:
        head = (f'{{"jsonrpc":"2.0","id":{rpc_id(rng, i)},"result":{{"content":[{{"type":"text","text":"Rendered chart '
                '\\u2192 see image"},{"type":"image","data":"')
        tail = '","mimeType":"image/png"}]}}'
        return head + b64(rng, target - len(head) - len(tail)) + tail
    if r <= 16:
        head = (f'{{"jsonrpc":"2.0","method":"notifications/message","params":{{"level":"{rng.choice(LEVELS)}",'
                f'"logger":"{rng.choice(LOGGERS)}","data":{{"file":"{rng.choice(FILES)}","line":{rng.randint(1, 5000)},"message":"')
        tail = '"}}}'
        return head + text(rng, target - len(head) - len(tail)) + tail
    head = (f'{{"jsonrpc":"2.0","id":{rpc_id(rng, i)},"result":{{"contents":[{{"uri":"file:///home/dev/project/'
            f'{rng.choice(FILES)}","mimeType":"text/markdown","text":"')
    tail = '"}]}}'
    return head + text(rng, target - len(head) - len(tail)) + tail


def large_message(rng, i):
    target = MIB - 1  # the newline makes it 1 MiB
    if i % 2 == 0:
        head = (f'{{"jsonrpc":"2.0","id":{i},"result":{{"contents":[{{"uri":"file:///data/blob-{i}.bin",'
                '"mimeType":"application/octet-stream","blob":"')
        tail = '"}]}}'
        return head + b64(rng, target - len(head) - len(tail)) + tail
    head = f'{{"jsonrpc":"2.0","id":{i},"result":{{"content":[{{"type":"text","text":"'
    tail = '"}],"isError":false}}'
    return head + text(rng, target - len(head) - len(tail) - 16) + tail


def escape_message(rng, i, target):
    if rng.randrange(4) == 0:
        head = (f'{{"jsonrpc":"2.0","method":"notifications/message","params":{{"level":"info","logger":"\\"quoted\\\\logger\\"",'
                '"data":{"stdout":"')
        tail = '","exit":0}}}'
    else:
        head = (f'{{"jsonrpc":"2.0","id":{rpc_id(rng, i)},"result":{{"content":[{{"type":"text","text":"'
                '\\u00e9\\ud83d\\ude80 \\"src/\\u4e2d.rs\\":\\n')
        tail = '"}],"isError":false}}'
    return head + text(rng, target - len(head) - len(tail), heavy=True) + tail


PARAM_TYPES = ["string", "integer", "number", "boolean"]


def tools_list_message(rng, i):
    """A structure-heavy tools/list result (names, schemas, short descriptions), compact."""
    tools = []
    for t in range(rng.randint(3, 40)):
        props = {}
        for p in range(rng.randint(1, 8)):
            kind = rng.choice(PARAM_TYPES)
            prop = {"type": kind, "description": json.loads('"' + text(rng, rng.randint(10, 60)) + '"')}
            if kind == "integer":
                prop.update(minimum=0, maximum=rng.randint(1, 10000))
            elif kind == "string" and rng.randrange(3) == 0:
                prop["enum"] = rng.sample(LEVELS, 3)
            props[f"{rng.choice(WORDS[:26])}_{p}"] = prop
        tools.append({
            "name": f"{rng.choice(TOOLS)}_{t}",
            "description": json.loads('"' + text(rng, rng.randint(20, 200)) + '"'),
            "inputSchema": {"type": "object", "properties": props,
                            "required": sorted(rng.sample(sorted(props), rng.randint(0, len(props))))},
            "annotations": {"readOnlyHint": rng.randrange(2) == 0, "openWorldHint": False},
        })
    msg = {"jsonrpc": "2.0", "id": i, "result": {"tools": tools, "nextCursor": f"c-{rng.getrandbits(32):08x}"}}
    return json.dumps(msg, separators=(",", ":"), ensure_ascii=False)


def log_uniform(rng, lo, hi):
    return int(math.exp(math.log(lo) + (math.log(hi) - math.log(lo)) * rng.random()))


def lines_of(kind):
    """Endless deterministic stream of message strings (no newline) for one corpus kind."""
    seeds = {"small": 0x5EED0001, "mixed": 0x5EED0002, "large": 0x5EED0003, "escape": 0x5EED0004,
             "encode": 0x5EED0006}
    rng = random.Random(seeds[kind])
    for i in itertools.count(1):
        if kind == "small":
            yield small_message(rng, i)
        elif kind == "mixed":
            yield mixed_message(rng, i, log_uniform(rng, 100, 50 * 1024))
        elif kind == "large":
            yield large_message(rng, i)
        elif kind == "encode":  # half mixed messages (string-heavy), half tools/list (structure-heavy)
            yield (mixed_message(rng, i, log_uniform(rng, 100, 50 * 1024)) if i % 2
                   else tools_list_message(rng, i))
        else:
            yield escape_message(rng, i, log_uniform(rng, 200, 20 * 1024))


def invalid_line(rng, valid):
    """A line no JSON parser accepts (valid UTF-8, no surrogate or NaN tricks)."""
    r = rng.randrange(8)
    if r == 0:  # truncated message (a proper prefix of an object never closes it)
        return valid[: max(1, rng.randrange(len(valid)))]
    if r == 1:
        return f"[{rng.choice(LEVELS)}] server listening on stdio (pid {rng.randint(100, 99999)})"
    if r == 2:
        return valid[:-1] + ",}"  # trailing comma
    if r == 3:
        return valid + " garbage"  # trailing garbage
    if r == 4:
        return valid + valid  # two values on one line
    if r == 5:
        return '{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"raw\ttab"}}'  # raw control char
    if r == 6:
        return "{'jsonrpc':'2.0','id':1,'method':'ping'}"  # single quotes
    return '{jsonrpc:"2.0",id:1,method:"ping"}'  # unquoted keys


def build(kind, size, crlf_invalid=False):
    """Returns (list of encoded lines with their terminators, list of validity flags)."""
    rng_bad = random.Random(0x5EED0005)
    source = lines_of(kind)
    out, ok, total = [], [], 0
    while total < size:
        s = next(source)
        valid = True
        if crlf_invalid and rng_bad.random() < 0.01:
            s, valid = invalid_line(rng_bad, s), False
        b = s.encode("utf-8") + (b"\r\n" if crlf_invalid else b"\n")
        out.append(b)
        ok.append(valid)
        total += len(b)
    return out, ok


_ASCII = bytes(range(128))


def stats(lines, ok):
    lens = sorted(len(b) for b in lines)
    data_bytes = sum(lens)
    non_ascii = sum(len(b.translate(None, _ASCII)) for b in lines)
    return {
        "bytes": data_bytes,
        "lines": len(lines),
        "valid": sum(ok),
        "invalid": len(ok) - sum(ok),
        "line_min": lens[0],
        "line_median": lens[len(lens) // 2],
        "line_max": lens[-1],
        "non_ascii_fraction": round(non_ascii / data_bytes, 4),
    }


def prefix(lines, ok, size):
    """The first lines holding at least `size` bytes (at least one line)."""
    total, k = 0, 0
    while k < len(lines) and (total < size or k == 0):
        total += len(lines[k])
        k += 1
    return lines[:k], ok[:k]


def write(path, chunks):
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.writelines(chunks)
    os.replace(tmp, path)


def pretty(line):
    return json.dumps(json.loads(line), indent=2, ensure_ascii=False).encode("utf-8")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default="target/bench-corpus")
    ap.add_argument("--size-mb", type=float, default=float(os.environ.get("BENCH_SIZE_MB", 64)))
    ap.add_argument("--slice-mb", type=float, default=float(os.environ.get("BENCH_SLICE_MB", 1)))
    ap.add_argument("--encode-mb", type=float, default=float(os.environ.get("BENCH_ENCODE_MB", 16)))
    ap.add_argument("--force", action="store_true", help="regenerate even if up to date")
    args = ap.parse_args()

    with open(__file__, "rb") as f:
        me = f.read()
    fingerprint = hashlib.sha256(
        me + f"|{args.size_mb}|{args.slice_mb}|{args.encode_mb}|{sys.version_info[:2]}".encode()).hexdigest()
    manifest_path = os.path.join(args.out, "manifest.json")
    if not args.force and os.path.exists(manifest_path):
        try:
            with open(manifest_path) as f:
                old = json.load(f)
            if old.get("fingerprint") == fingerprint and all(
                    os.path.exists(os.path.join(args.out, c["file"])) for c in old["files"].values()):
                print(f"corpora up to date in {args.out} ({args.size_mb:g} MiB each)")
                return
        except (OSError, ValueError, KeyError):
            pass

    os.makedirs(args.out, exist_ok=True)
    size = int(args.size_mb * MIB)
    slice_size = int(args.slice_mb * MIB)
    files = {}

    def emit(name, filename, lines, ok, **extra):
        write(os.path.join(args.out, filename), lines)
        files[name] = {"file": filename, **stats(lines, ok), **extra}

    t_all = time.time()
    for kind, crlf in [("small", False), ("mixed", False), ("large", False), ("escape", False), ("crlf", True)]:
        t = time.time()
        lines, ok = build("mixed" if kind == "crlf" else kind, size, crlf_invalid=crlf)
        emit(kind, f"{kind}.ndjson", lines, ok, corpus=kind)
        # The 1-byte slice: at least slice_size bytes (2 lines of `large`).
        s_lines, s_ok = prefix(lines, ok, slice_size if kind != "large" else MIB + 1)
        emit(kind + ".slice", f"{kind}.slice.ndjson", s_lines, s_ok, corpus=kind)
        f = files[kind]
        print(f"corpus {kind:<6} {f['bytes']:>10} bytes {f['lines']:>8} lines ({f['invalid']} invalid), "
              f"line min/median/max {f['line_min']}/{f['line_median']}/{f['line_max']}, "
              f"slice {files[kind + '.slice']['bytes']} bytes ({time.time() - t:.1f}s)", flush=True)
        del lines, ok, s_lines, s_ok

    # Fixed workloads, independent of --size-mb: callgrind reads 4 MiB of mixed; mcp_encode
    # timing uses --encode-mb of documents (mixed messages and tools/list results, compact
    # and pretty-printed; and small and mixed messages alone), callgrind 1 MiB of the first.
    t = time.time()
    lines, ok = build("mixed", 4 * MIB)
    emit("cg-mixed", "cg-mixed.ndjson", lines, ok, corpus="mixed")
    lines, ok = build("small", 1 * MIB)
    emit("cg-small", "cg-small.ndjson", lines, ok, corpus="small")
    lines, ok = prefix(lines, ok, 256 * 1024)
    emit("cg-small-256k", "cg-small-256k.ndjson", lines, ok, corpus="small")
    def emit_docs(name, docs, docs_ok):  # each line a document, compact as generated and pretty
        compact = [b.rstrip(b"\n") + b"\0" for b in docs]
        emit(f"{name}-compact", f"{name}-compact.docs", compact, docs_ok, separator="NUL")
        pretty_docs = [pretty(b) + b"\0" for b in docs]
        emit(f"{name}-pretty", f"{name}-pretty.docs", pretty_docs, docs_ok, separator="NUL")

    lines, ok = build("encode", int(args.encode_mb * MIB))
    for name, limit in [("encode", int(args.encode_mb * MIB)), ("cg-encode", 1 * MIB)]:
        emit_docs(name, *prefix(lines, ok, limit))
    # Issue 12 measures encode on the reader's own traffic too: small records and mixed ones.
    for kind in ["small", "mixed"]:
        emit_docs(f"encode-{kind}", *build(kind, int(args.encode_mb * MIB)))
    print(f"encode and callgrind inputs written ({time.time() - t:.1f}s)")

    manifest = {
        "fingerprint": fingerprint,
        "size_mb": args.size_mb,
        "slice_mb": args.slice_mb,
        "encode_mb": args.encode_mb,
        "files": files,
    }
    write(manifest_path, [json.dumps(manifest, indent=1).encode()])
    print(f"corpora written to {args.out} in {time.time() - t_all:.1f}s")


if __name__ == "__main__":
    main()
