#!/usr/bin/env bash
# End-to-end tests of mcp-stdio against MCP peers this project did not write:
#
#   our C host (examples/mcp_host.c) driving
#     - @modelcontextprotocol/server-everything   (TypeScript SDK server)
#     - @modelcontextprotocol/server-filesystem   (a 5 MB file in one line)
#     - a FastMCP server (Python SDK 1.x), tests/e2e/fastmcp_server.py
#     - an MCPServer server (Python SDK 2.x), tests/e2e/sdk2_server.py
#   our Rust hosts (examples/host.rs, blocking; examples/tokio_host.rs, a
#   tokio task) driving
#     - @modelcontextprotocol/server-everything
#     - the FastMCP server
#   our C server (examples/mcp_server.c) driven by
#     - the Python SDK 1.x client (mcp.client.stdio + ClientSession)
#     - the Python SDK 2.x client (mcp.Client), tests/e2e/sdk2_client.py
#     - the TypeScript SDK client (Client + StdioClientTransport), ts_client.mjs
#     - the MCP Inspector's CLI mode
#
# Installs what it needs, exactly pinned, into tests/e2e/.deps/ (ignored by
# git) the first time and whenever package-lock.json, a requirements file or
# the node/python versions change: `npm ci` from package.json +
# package-lock.json into .deps/npm; two venvs, because one venv cannot hold
# both SDK majors: .deps/venv from requirements.txt (mcp 1.x and pytest: the
# tests run in it) and .deps/venv-sdk2 from requirements-sdk2.txt (mcp 2.x:
# the tests run its python on sdk2_server.py and sdk2_client.py as
# subprocesses). Then builds the demo binaries (scripts/demo.sh, which also
# runs the demo) and the Rust hosts (target/release/examples/), and runs
# pytest on tests/e2e/test_*.py. Extra arguments go to pytest (e.g. -k
# fastmcp).
#
# Needs: node + npm, python3 (with venv), cargo, gcc; the npm registry and PyPI
# for the first install. Works from any current directory.
set -euo pipefail

e2e_dir="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)"
repo_root="$(cd -- "$e2e_dir/../.." && pwd)"
deps="$e2e_dir/.deps"
npm_dir="$deps/npm"
venv="$deps/venv"
venv_sdk2="$deps/venv-sdk2"
mkdir -p "$deps"
# Keep all of it out of git even before .gitignore knows about it.
[[ -f "$deps/.gitignore" ]] || echo '*' >"$deps/.gitignore"

# What an install depends on: the pin files and the runtime's version.
fingerprint() {
    local runtime="$1"
    shift
    { (cd "$e2e_dir" && sha256sum "$@"); echo "$runtime"; } | sha256sum | cut -d' ' -f1
}

want_npm="$(fingerprint "node $(node --version)" package.json package-lock.json)"
if [[ -f "$npm_dir/.installed" && "$(cat "$npm_dir/.installed")" == "$want_npm" ]]; then
    echo "== npm packages: up to date in tests/e2e/.deps/npm"
else
    echo "== npm ci into tests/e2e/.deps/npm"
    rm -rf "$npm_dir"
    mkdir -p "$npm_dir"
    cp "$e2e_dir/package.json" "$e2e_dir/package-lock.json" "$npm_dir/"
    # No install scripts: none of the pinned packages needs one.
    (cd "$npm_dir" && npm ci --no-audit --no-fund --ignore-scripts)
    echo "$want_npm" >"$npm_dir/.installed"
fi

# install_venv DIR REQUIREMENTS: a venv in DIR with exactly REQUIREMENTS
# (a file in tests/e2e), reused while its fingerprint matches.
install_venv() {
    local dir="$1" requirements="$2" want
    want="$(fingerprint "$(python3 --version 2>&1)" "$requirements")"
    if [[ -f "$dir/.installed" && "$(cat "$dir/.installed")" == "$want" ]]; then
        echo "== python venv: up to date in tests/e2e/.deps/${dir##*/} ($requirements)"
    else
        echo "== python venv into tests/e2e/.deps/${dir##*/} ($requirements)"
        rm -rf "$dir"
        python3 -m venv "$dir"
        "$dir/bin/python" -m pip install --quiet --disable-pip-version-check \
            --no-input --require-virtualenv -r "$e2e_dir/$requirements"
        echo "$want" >"$dir/.installed"
    fi
}
install_venv "$venv" requirements.txt
install_venv "$venv_sdk2" requirements-sdk2.txt

# Builds the library and target/demo/{mcp_host,mcp_server}, and runs the demo.
echo "== scripts/demo.sh (builds target/demo/mcp_host and target/demo/mcp_server)"
bash "$repo_root/scripts/demo.sh" >"$deps/demo.log" 2>&1 || {
    cat "$deps/demo.log"
    echo "scripts/demo.sh failed" >&2
    exit 1
}
tail -n 1 "$deps/demo.log"

# The Rust hosts and the Rust server.
echo "== cargo build --release --example host --example tokio_host --example server"
(cd "$repo_root" && cargo build --release --example host --example tokio_host --example server)

# rmcp on our transports (integrations/rmcp, its own lockfile).
echo "== cargo build --release --locked --example rmcp_host --example rmcp_server (integrations/rmcp)"
(cd "$repo_root/integrations/rmcp" && cargo build --release --locked --example rmcp_host --example rmcp_server)

echo "== pytest tests/e2e"
cd "$e2e_dir"
export PYTHONDONTWRITEBYTECODE=1 # no __pycache__ in the source tree
exec "$venv/bin/python" -m pytest -p no:cacheprovider "$@"
