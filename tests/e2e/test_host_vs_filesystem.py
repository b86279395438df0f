"""Our C host (examples/mcp_host.c) against @modelcontextprotocol/server-filesystem:
reading a 5 MiB text file sends a response line of over 10 MB (the text twice,
in content and structuredContent, JSON-escaped) through the host's reader."""

import hashlib

import pytest

from conftest import FILESYSTEM_SERVER_JS, call, first_text, node_env, run_host

FILE_SIZE = 5 * 1024 * 1024


@pytest.fixture(scope="module")
def big_file(tmp_path_factory):
    """A deterministic 5 MiB text file with non-ASCII, quotes, backslashes, tabs."""
    root = tmp_path_factory.mktemp("fs-root")
    parts, size, i = [], 0, 0
    while size < FILE_SIZE:
        line = f'line {i:07d}: the quick brown fox — «jumps» over "the" lazy\\dog\tæøå ✓\n'
        parts.append(line)
        size += len(line.encode())
        i += 1
    text = "".join(parts)
    path = root / "big.txt"
    path.write_bytes(text.encode())
    return root.resolve(), path.resolve(), text


def read_tool(run_tools):
    # The pinned version has read_text_file (read_file is its deprecated alias).
    return "read_text_file" if "read_text_file" in run_tools else "read_file"


def test_read_multi_megabyte_file(big_file):
    root, path, text = big_file
    want = hashlib.sha256(text.encode()).hexdigest()
    run = run_host(
        [*call("read_text_file", path=str(path)), "--expect-tool", "read_text_file"],
        ["node", FILESYSTEM_SERVER_JS, root],
        env=node_env(),
    )
    assert run.returncode == 0, run.describe()
    assert read_tool(run.tools) == "read_text_file"

    (result,) = run.results("tools/call")
    got = first_text(result)
    assert len(got) == len(text)
    assert hashlib.sha256(got.encode()).hexdigest() == want
    assert hashlib.sha256(result["structuredContent"]["content"].encode()).hexdigest() == want
    # The host's own decoding of the JSON string, printed on its text: line.
    (printed,) = run.texts
    assert hashlib.sha256(printed.encode()).hexdigest() == want

    # The line really was that long.
    longest = max(len(l) for l in run.stdout.split(b"\n"))
    assert longest > 2 * FILE_SIZE


def test_line_over_the_limit_is_reported_not_fatal(big_file):
    """With --max-line 1 MiB the same response is too long: the host reports it
    and skips it (the response is lost, so the call times out), and it still
    shuts down cleanly."""
    root, path, _ = big_file
    run = run_host(
        [
            *call("read_text_file", path=str(path)),
            "--max-line", str(1 << 20),
            "--timeout", "3",
        ],
        ["node", FILESYSTEM_SERVER_JS, root],
        env=node_env(),
    )
    assert run.returncode == 1, run.describe()
    assert "bad line from server: too long (more than 1048576 bytes" in run.stderr
    assert "timed out after 3000 ms waiting for the response to tools/call" in run.stderr
    assert run.summary == "FAILED: 2/3 expected responses received and checked"
    assert "the server exited" not in run.stderr  # it exited by itself, status 0
