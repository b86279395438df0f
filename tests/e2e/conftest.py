"""Shared helpers for the end-to-end tests (run them with tests/e2e/run.sh,
which installs the pinned peers and builds the demo binaries first)."""

import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

E2E_DIR = Path(__file__).resolve().parent
REPO_ROOT = E2E_DIR.parent.parent
NPM_DIR = E2E_DIR / ".deps" / "npm"
NODE_MODULES = NPM_DIR / "node_modules"
HOST = REPO_ROOT / "target" / "demo" / "mcp_host"
# The Rust hosts (examples/host.rs, examples/tokio_host.rs), built by run.sh:
# the C host's session and output, on the options they have.
RUST_HOSTS = [REPO_ROOT / "target" / "release" / "examples" / n for n in ("host", "tokio_host")]
SERVER = REPO_ROOT / "target" / "demo" / "mcp_server"
# The Rust server (examples/server.rs), built by run.sh.
RUST_SERVER = REPO_ROOT / "target" / "release" / "examples" / "server"

# rmcp (the official Rust SDK) on our transports: integrations/rmcp's
# examples, built by run.sh.
RMCP_EXAMPLES = REPO_ROOT / "integrations" / "rmcp" / "target" / "release" / "examples"
RMCP_HOST = RMCP_EXAMPLES / "rmcp_host"
RMCP_SERVER = RMCP_EXAMPLES / "rmcp_server"
PYTHON = sys.executable  # the venv's python, which has the mcp SDK

# The server-everything and server-filesystem entry points (node + file, so
# that no npx or shell sits between our host and the server).
EVERYTHING_SERVER = [
    "node",
    str(NODE_MODULES / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"),
    "stdio",
]
FILESYSTEM_SERVER_JS = str(
    NODE_MODULES / "@modelcontextprotocol" / "server-filesystem" / "dist" / "index.js"
)
FASTMCP_SERVER = [PYTHON, str(E2E_DIR / "fastmcp_server.py")]
# The Python MCP SDK 2.x lives in a venv of its own (run.sh installs
# requirements-sdk2.txt there): its scripts run as subprocesses with its python.
SDK2_PYTHON = E2E_DIR / ".deps" / "venv-sdk2" / "bin" / "python"
SDK2_SERVER = [SDK2_PYTHON, E2E_DIR / "sdk2_server.py"]


README_HOST = REPO_ROOT / "target" / "demo" / "readme_host"
STATIC_LIB = REPO_ROOT / "target" / "release" / "libmcp_stdio.a"
NATIVE_LIBS = ["-lgcc_s", "-lutil", "-lrt", "-lpthread", "-lm", "-ldl", "-lc"]


@pytest.fixture(scope="session")
def readme_host():
    """The README's "A host in C", compiled against the static library that
    scripts/demo.sh built: the first ```c block after that heading."""
    readme = (REPO_ROOT / "README.md").read_text()
    section = readme[readme.index("## A host in C") :]
    start = section.index("```c\n") + len("```c\n")
    source = README_HOST.with_suffix(".c")
    source.write_text(section[start : section.index("```", start)])
    subprocess.run(
        ["gcc", "-std=c99", "-D_POSIX_C_SOURCE=200809L", "-Wall", "-Wextra", "-Werror",
         "-I", str(REPO_ROOT / "include"), str(source), str(STATIC_LIB), *NATIVE_LIBS,
         "-o", str(README_HOST)],
        check=True,
    )
    return README_HOST


@pytest.fixture(scope="session", autouse=True)
def _prerequisites():
    needed = (HOST, *RUST_HOSTS, SERVER, NODE_MODULES, SDK2_PYTHON, RMCP_HOST, RMCP_SERVER)
    missing = [p for p in needed if not p.exists()]
    if missing:
        pytest.exit(
            "missing " + ", ".join(map(str, missing)) + ": run tests/e2e/run.sh", returncode=2
        )


def unescape_host_text(raw: bytes) -> str:
    """Reverses the escaping of the host's `text:` lines (\\\\, \\n, \\r, \\t, \\xNN)."""
    out = bytearray()
    i = 0
    simple = {ord("\\"): b"\\", ord("n"): b"\n", ord("r"): b"\r", ord("t"): b"\t"}
    while i < len(raw):
        c = raw[i]
        if c != ord("\\"):
            out.append(c)
            i += 1
            continue
        nxt = raw[i + 1]
        if nxt in simple:
            out += simple[nxt]
            i += 2
        elif nxt == ord("x"):
            out.append(int(raw[i + 2 : i + 4], 16))
            i += 4
        else:
            raise ValueError(f"bad escape at {i}: {raw[i:i + 4]!r}")
    return out.decode("utf-8")


@dataclass
class HostRun:
    """What target/demo/mcp_host (or a Rust host) printed, parsed."""

    returncode: int
    stdout: bytes
    stderr: str
    sent: list = field(default_factory=list)  # JSON of each "-> " line
    received: list = field(default_factory=list)  # JSON of each "<- " line
    tools: list = field(default_factory=list)  # "tool: " lines
    texts: list = field(default_factory=list)  # "text: " lines, unescaped
    summary: str = ""

    def requests(self, method):
        return [m for m in self.sent if m.get("method") == method and "id" in m]

    def response_to(self, request):
        """The response (from received) to a request we sent."""
        for m in self.received:
            if "method" not in m and m.get("id") == request["id"]:
                return m
        raise AssertionError(f"no response to {request}")

    def results(self, method):
        """The results of our requests of this method, in order."""
        return [self.response_to(r)["result"] for r in self.requests(method)]

    def server_requests(self, method):
        return [m for m in self.received if m.get("method") == method and "id" in m]

    def our_reply_to(self, server_request):
        for m in self.sent:
            if "method" not in m and m.get("id") == server_request["id"]:
                return m
        raise AssertionError(f"the host never answered {server_request}")

    def describe(self):
        return f"exit {self.returncode}\n--- stderr ---\n{self.stderr[-6000:]}"


def run_host(options, server_cmd, *, timeout=120, cwd=None, env=None, host=HOST) -> HostRun:
    """Runs HOST (mcp_host, or a Rust host) OPTIONS -- SERVER_CMD and parses its output."""
    cmd = [str(host), *options, "--", *map(str, server_cmd)]
    proc = subprocess.run(
        cmd, stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout, cwd=cwd, env=env
    )
    return parse_host_output(proc.returncode, proc.stdout, proc.stderr)


def parse_host_output(returncode, stdout: bytes, stderr: bytes) -> HostRun:
    """A host's exit status and output, parsed (see HostRun)."""
    run = HostRun(returncode, stdout, stderr.decode("utf-8", "replace"))
    for line in stdout.split(b"\n"):
        if line.startswith(b"-> "):
            run.sent.append(json.loads(line[3:]))
        elif line.startswith(b"<- "):
            run.received.append(json.loads(line[3:]))
        elif line.startswith(b"tool: "):
            run.tools.append(line[6:].decode("utf-8"))
        elif line.startswith(b"text: "):
            run.texts.append(unescape_host_text(line[6:]))
        elif line.startswith((b"ok: ", b"FAILED: ")):
            run.summary = line.decode()
    return run


def subscription_stream(run):
    """The --listen request's stream as the server sent it (the notifications
    whose _meta names the listen request), after checking that the host
    printed each as a subscription event, tied to that request by the
    transport: their methods."""
    (listen,) = run.requests("subscriptions/listen")
    stream = [
        m for m in run.received
        if m.get("params", {}).get("_meta", {}).get("io.modelcontextprotocol/subscriptionId")
        == listen["id"]
    ]
    methods = [m["method"] for m in stream]
    printed = [
        line for line in run.stdout.decode().splitlines() if line.startswith("subscription: ")
    ]
    assert printed == [f"subscription: \"{m}\"" for m in methods], run.describe()
    return methods


def call(tool, **arguments):
    """The --call option pair for a tool call."""
    return ["--call", tool, json.dumps(arguments, ensure_ascii=False)]


def first_text(result):
    """The first content item of a tools/call result, which must be text."""
    item = result["content"][0]
    assert item["type"] == "text", result
    return item["text"]


def node_env():
    """The environment for node processes (no colours, no update checks)."""
    env = dict(os.environ)
    env.update(NO_COLOR="1", NO_UPDATE_NOTIFIER="1", npm_config_update_notifier="false")
    return env
