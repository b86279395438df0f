# Installs from exact pins, again only when the pins or the runtime changed. Sourced (not
# run) by bench/run.sh (the matplotlib venv, the TypeScript SDK) and bench/roundtrip/run.sh
# (the same TypeScript SDK install, the Python SDK venvs), from the repository's root: the
# pin files are named relative to it, and the fingerprints include those names.
#
# An install directory holds a `.installed` file with the fingerprint of what it was made
# from (the pin files' contents and names, and the runtime's version); it is up to date
# while that matches.

# fingerprint RUNTIME FILE...: what an install depends on (the pin files and a runtime version).
fingerprint() {
    local runtime="$1"
    shift
    { sha256sum "$@"; echo "$runtime"; } | sha256sum | cut -d' ' -f1
}

# npm_fresh DIR PKG_DIR: is DIR an install of PKG_DIR/package.json + package-lock.json
# with this node?
npm_fresh() {
    local dir="$1" src="$2"
    [[ -f "$dir/.installed" && "$(cat "$dir/.installed")" == \
        "$(fingerprint "node $(node --version)" "$src/package.json" "$src/package-lock.json")" ]]
}

# npm_install DIR PKG_DIR: `npm ci` of PKG_DIR's package.json + package-lock.json into DIR
# (emptied first). Returns non-zero on failure (&& chains: callers may run it in an `if`,
# where set -e is off).
npm_install() {
    local dir="$1" src="$2" want
    want="$(fingerprint "node $(node --version)" "$src/package.json" "$src/package-lock.json")" &&
        rm -rf "$dir" &&
        mkdir -p "$dir" &&
        cp "$src/package.json" "$src/package-lock.json" "$dir/" &&
        # No install scripts: none of the pinned packages needs one.
        (cd "$dir" && npm ci --no-audit --no-fund --ignore-scripts --loglevel=error) &&
        echo "$want" >"$dir/.installed"
}

# venv_fresh VENV REQUIREMENTS: is VENV made from REQUIREMENTS with this python3?
venv_fresh() {
    local venv="$1" req="$2"
    [[ -f "$venv/.installed" && "$(cat "$venv/.installed")" == "$(fingerprint "$(python3 --version 2>&1)" "$req")" ]]
}

# venv_install VENV REQUIREMENTS: a new venv (python3 -m venv) with REQUIREMENTS, binary
# wheels only. Returns non-zero on failure (&& chains, as npm_install).
venv_install() {
    local venv="$1" req="$2" want
    want="$(fingerprint "$(python3 --version 2>&1)" "$req")" &&
        rm -rf "$venv" &&
        python3 -m venv "$venv" &&
        "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-input \
            --require-virtualenv --only-binary=:all: -r "$req" &&
        echo "$want" >"$venv/.installed"
}
