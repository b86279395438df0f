#!/usr/bin/env python3
"""The Python reference algorithm of the seed, for bench/run.sh.

The seed's LineReader: a text buffer; feed(chunk) appends the chunk, splits the whole
buffer on "\\n", keeps the last piece as the new buffer, skips empty lines, json.loads
every complete line and gives {"parse_error": line} for a line that is not JSON.

A real host reads bytes, so each chunk of bytes is decoded first with an incremental
UTF-8 decoder (codecs.getincrementaldecoder, as asyncio/anyio text streams do): a
character split across two reads is decoded once both halves have arrived.

Usage: python_reference.py RUNNER CORPUS FILE CHUNK RUNS
Prints: BENCH runner=.. corpus=.. chunk=.. bytes=.. messages=.. errors=.. seconds=<best>
        median=.. runs=.. checksum=..
(messages = parsed messages, errors = parse_error items, counted separately).
"""

import codecs
import json
import sys
import time


class LineReader:
    """The seed's reference algorithm, as written there."""

    def __init__(self):
        self.buffer = ""

    def feed(self, chunk):
        self.buffer += chunk
        lines = self.buffer.split("\n")
        self.buffer = lines[-1]
        out = []
        for line in lines[:-1]:
            if not line or line.isspace():  # empty lines are skipped
                continue
            try:
                out.append(json.loads(line))
            except ValueError:  # json.JSONDecodeError
                out.append({"parse_error": line})
        return out


def one_pass(data, chunk):
    decoder = codecs.getincrementaldecoder("utf-8")()
    reader = LineReader()
    messages = errors = checksum = 0
    for off in range(0, len(data), chunk):
        for item in reader.feed(decoder.decode(data[off:off + chunk])):
            if type(item) is dict and "parse_error" in item and len(item) == 1:
                errors += 1
            else:
                messages += 1
            checksum += len(item)
    # End of stream: the seed keeps an unterminated last line in the buffer (the corpora
    # end with a newline, so there is none here).
    reader.feed(decoder.decode(b"", final=True))
    return messages, errors, checksum


def main():
    if len(sys.argv) != 6:
        sys.exit(f"usage: {sys.argv[0]} RUNNER CORPUS FILE CHUNK RUNS")
    runner, corpus, path, chunk, runs = sys.argv[1:]
    chunk, runs = int(chunk), int(runs)
    with open(path, "rb") as f:
        data = f.read()
    times, first = [], None
    for _ in range(runs):
        t = time.perf_counter()
        counts = one_pass(data, chunk)
        times.append(time.perf_counter() - t)
        if first is None:
            first = counts
        elif counts != first:
            sys.exit("runs disagree")
    times.sort()
    messages, errors, checksum = first
    print(f"BENCH runner={runner} corpus={corpus} chunk={chunk} bytes={len(data)} messages={messages} "
          f"errors={errors} seconds={times[0]:.9f} median={times[len(times) // 2]:.9f} runs={runs} "
          f"checksum={checksum}", flush=True)


if __name__ == "__main__":
    main()
