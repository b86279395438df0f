# Shared by the packaging tests (run.sh, windows.sh), sourced after they set
# ROOT (the repository) and WORK (their work directory, with WORK/logs): the
# check harness and Cargo.toml's fields.

# A field of Cargo.toml's [package] table (version, description).
cargo_field() {
    awk -v key="$1" '
        /^[ \t]*\[/ { in_pkg = ($0 ~ /^[ \t]*\[package\][ \t]*$/) ; next }
        in_pkg && $0 ~ "^[ \t]*" key "[ \t]*=" {
            sub(/^[^=]*=[ \t]*"/, ""); sub(/".*$/, ""); print; exit
        }' "$ROOT/Cargo.toml"
}

# ---------------------------------------------------------------------------
# Harness: each check runs in a subshell with `set -e`, its output in a log
# that is shown only when it fails.
passed=0
failed=0
n=0
last_rc=0
check() {
    local name=$1; shift
    n=$((n + 1))
    local log="$WORK/logs/$n.log"
    local rc=0
    set +e
    ( set -e; "$@" ) >"$log" 2>&1
    rc=$?
    set -e
    if [ "$rc" -eq 0 ]; then
        passed=$((passed + 1))
        printf 'ok   %s\n' "$name"
    else
        failed=$((failed + 1))
        printf 'FAIL %s\n' "$name"
        tail -n 40 "$log" | sed 's/^/     | /'
    fi
    last_rc=$rc
}
summary() {
    [ "${KEEP:-0}" = 1 ] && printf 'work dir kept: %s\n' "$WORK"
    printf '%d passed, %d failed\n' "$passed" "$failed"
    [ "$failed" -eq 0 ]
}
# A check the rest depends on: stop at once if it fails.
require() {
    check "$@"
    if [ "$last_rc" -ne 0 ]; then summary; exit 1; fi
}

fail() { printf '%s\n' "$*" >&2; return 1; }
