#!/usr/bin/env bash
# The round-trip benchmark (see bench/README.md, "Round trips"): tools/call round trips per
# second against examples/mcp_server.c over real pipes, the client's CPU time per round
# trip, and spawn-to-first-response, from our C host on this library's transport, the
# TypeScript SDK's client and the Python SDK's client (2.x and 1.x), side by side in one
# run, plus a floor (bench/roundtrip/floor.c: no library, blocking pipes).
#
#   bash bench/roundtrip/run.sh                 # alone: builds and installs what it needs,
#                                               # writes target/bench/roundtrip.{txt,md}, prints the table
#   bash bench/roundtrip/run.sh --append FILE   # as a section of bench/run.sh: appends its
#                                               # INFO, ROUNDTRIP and SKIP lines to FILE
#
# Exits 1 if a client failed (a wrong answer, a crash, an install that failed). It never
# judges a timing.
#
# Environment (defaults in brackets; "scaled" = times BENCH_SIZE_MB/64 below 64, so that
# the smoke run of scripts/test.sh, BENCH_SIZE_MB=1, stays tiny):
#   BENCH_ROUNDTRIP_CLIENTS  ["mcp_stdio ts-sdk python-sdk python-sdk-v1 pipe-floor"]
#   BENCH_ROUNDTRIP_LAYOUTS  ["spread pinned"]: spread = where the scheduler puts the client
#                            and the server (2 cores here); pinned = both on CPU 0
#                            (taskset -c 0): no wake-ups of an idle core, see bench/README.md
#   BENCH_ROUNDTRIP_N        round trips per run, mcp_stdio, ts-sdk, pipe-floor [20000 scaled, >= 200]
#   BENCH_ROUNDTRIP_PY_N     round trips per run, the Python SDKs (about 4k/s here) [3000 scaled, >= 100]
#   BENCH_ROUNDTRIP_RUNS     runs of each mode per process, the median kept [3]
#   BENCH_ROUNDTRIP_SPAWNS   spawns per process for spawn-to-first-response [20 scaled, >= 3]
#   BENCH_ROUNDTRIP_INFLIGHT requests outstanding in the in-flight mode [100]
#   BENCH_ROUNDTRIP_PROCESSES processes per client and layout, the clients taking turns;
#                            per client, layout and mode the process with the lowest median
#                            is kept [BENCH_PROCESSES (2) scaled, >= 1]
#   BENCH_SIZE_MB            only for the scaling above [64]
set -euo pipefail
cd "$(dirname -- "${BASH_SOURCE[0]}")/../.."
root="$PWD"
source bench/roundtrip/install.sh

append=""
if [[ $# -gt 0 ]]; then
    [[ $# == 2 && "$1" == --append ]] || { echo "usage: $0 [--append RESULTS_TXT]" >&2; exit 2; }
    append="$2"
fi

size_mb="${BENCH_SIZE_MB:-64}"
scaled() { # DEFAULT FLOOR
    awk -v d="$1" -v lo="$2" -v s="$size_mb" 'BEGIN { n = int(d * (s >= 64 ? 1 : s / 64)); print (n < lo ? lo : n) }'
}
clients="${BENCH_ROUNDTRIP_CLIENTS:-mcp_stdio ts-sdk python-sdk python-sdk-v1 pipe-floor}"
layouts="${BENCH_ROUNDTRIP_LAYOUTS:-spread pinned}"
n="${BENCH_ROUNDTRIP_N:-$(scaled 20000 200)}"
py_n="${BENCH_ROUNDTRIP_PY_N:-$(scaled 3000 100)}"
runs="${BENCH_ROUNDTRIP_RUNS:-3}"
spawns="${BENCH_ROUNDTRIP_SPAWNS:-$(scaled 20 3)}"
inflight="${BENCH_ROUNDTRIP_INFLIGHT:-100}"
processes="${BENCH_ROUNDTRIP_PROCESSES:-$(scaled "${BENCH_PROCESSES:-2}" 1)}"

out="$root/target/bench"
bin="$out/bin"
logs="$out/logs"
mkdir -p "$bin" "$logs"
results="${append:-$out/roundtrip.txt}"
[[ -n "$append" ]] || : >"$results"
t_start=$SECONDS
failed=0
lines=() # what goes to $results

wants() { [[ " $clients " == *" $1 "* ]]; }
if [[ " $layouts " == *" pinned "* ]] && ! command -v taskset >/dev/null; then
    echo "!! taskset not found (util-linux): the pinned layout is left out"
    layouts="${layouts//pinned/}"
fi
declare -A unavailable=() # client -> why it cannot run here

echo "-- build: libmcp_stdio.a (cargo build --release), examples/mcp_server.c, bench/roundtrip/host.c and floor.c"
cargo build --release --quiet
# The native libraries of the static library, and the server's flags, as scripts/demo.sh.
native_libs=(-lgcc_s -lutil -lrt -lpthread -lm -ldl -lc)
gcc -std=c11 -D_POSIX_C_SOURCE=200809L -Wall -Wextra -Werror -O2 -g -Iinclude examples/mcp_server.c \
    target/release/libmcp_stdio.a "${native_libs[@]}" -o "$bin/mcp_server"
gcc -O2 -g -std=c11 -Wall -Wextra -Werror -Iinclude -Ibench/runners bench/roundtrip/host.c \
    target/release/libmcp_stdio.a "${native_libs[@]}" -o "$bin/roundtrip_host"
gcc -O2 -g -std=c11 -Wall -Wextra -Werror -Ibench/runners bench/roundtrip/floor.c -o "$bin/roundtrip_floor"
server="$bin/mcp_server"

# The TypeScript SDK: the pin and the install directory of bench/run.sh's ts-sdk runner.
ts_deps="$out/ts-deps"
if wants ts-sdk; then
    if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
        unavailable[ts-sdk]="node/npm not found"
    elif npm_fresh "$ts_deps" bench/runners/ts; then
        echo "-- @modelcontextprotocol/sdk in target/bench/ts-deps: up to date"
    else
        echo "-- install: @modelcontextprotocol/sdk (npm ci into target/bench/ts-deps)"
        if ! npm_install "$ts_deps" bench/runners/ts; then
            failed=1
            unavailable[ts-sdk]="FAILED: npm ci of bench/runners/ts"
        fi
    fi
fi

# The Python SDKs: one venv per major version.
declare -A venv_of=([python-sdk]="$out/venv-mcp2" [python-sdk-v1]="$out/venv-mcp1")
declare -A req_of=([python-sdk]=bench/roundtrip/requirements-mcp2.txt [python-sdk-v1]=bench/roundtrip/requirements-mcp1.txt)
for c in python-sdk python-sdk-v1; do
    wants "$c" || continue
    if venv_fresh "${venv_of[$c]}" "${req_of[$c]}"; then
        echo "-- $c in ${venv_of[$c]#"$root/"}: up to date"
    else
        echo "-- install: $c (pip, ${req_of[$c]} into ${venv_of[$c]#"$root/"})"
        if ! venv_install "${venv_of[$c]}" "${req_of[$c]}"; then
            failed=1
            unavailable[$c]="FAILED: pip install -r ${req_of[$c]}"
        fi
    fi
done

# ---------------------------------------------------------------------------
if [[ -z "$append" ]]; then
    lines+=("INFO date=$(date -u '+%Y-%m-%d %H:%M UTC')")
    lines+=("INFO machine=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1), $(nproc) cores, $(uname -sr)")
    lines+=("INFO load average at start=$(cut -d' ' -f1-3 /proc/loadavg) (other work on the machine makes timings noisy)")
    lines+=("INFO mcp-stdio=$(git rev-parse --short HEAD 2>/dev/null || echo '?')$(git diff --quiet -- src 2>/dev/null || echo ' + uncommitted changes in src/'), $(rustc --version)")
fi
lines+=("INFO round trips=N=$n (Python SDKs: $py_n) RUNS=$runs SPAWNS=$spawns INFLIGHT=$inflight PROCESSES=$processes; server examples/mcp_server.c and host bench/roundtrip/host.c: $(gcc --version | head -n 1), -O2, static libmcp_stdio.a")
pkg_version() { # DIR NAME: the version in DIR/node_modules/NAME/package.json
    sed -n 's/^ *"version": "\(.*\)",$/\1/p' "$1/node_modules/$2/package.json" 2>/dev/null | head -n 1
}
if wants ts-sdk && [[ -z "${unavailable[ts-sdk]:-}" ]]; then
    lines+=("INFO round trips ts-sdk=@modelcontextprotocol/sdk $(pkg_version "$ts_deps" @modelcontextprotocol/sdk) (zod $(pkg_version "$ts_deps" zod)), node $(node --version)")
fi
for c in python-sdk python-sdk-v1; do
    if wants "$c" && [[ -z "${unavailable[$c]:-}" ]]; then
        lines+=("INFO round trips $c=$("${venv_of[$c]}/bin/python" -c '
import importlib.metadata as m, platform
v = m.version
print("mcp %s (pydantic %s, anyio %s), Python %s" % (v("mcp"), v("pydantic"), v("anyio"), platform.python_version()))')")
    fi
done

run_client() { # CLIENT: its ROUNDTRIP lines on stdout (prefixed with the layout's ${pin[@]})
    case "$1" in
    mcp_stdio) "${pin[@]}" "$bin/roundtrip_host" "$server" "$n" "$runs" "$spawns" "$inflight" ;;
    pipe-floor) "${pin[@]}" "$bin/roundtrip_floor" "$server" "$n" "$runs" "$spawns" "$inflight" ;;
    ts-sdk) BENCH_TS_DEPS="$ts_deps" "${pin[@]}" node bench/roundtrip/ts_client.mjs "$server" "$n" "$runs" "$spawns" "$inflight" ;;
    python-sdk | python-sdk-v1)
        "${pin[@]}" "${venv_of[$1]}/bin/python" bench/roundtrip/py_client.py "$1" "$server" "$py_n" "$runs" "$spawns" "$inflight" ;;
    *) echo "unknown client $1" >&2; return 2 ;;
    esac
}

echo "-- run: layouts [$layouts], $processes process(es) per client taking turns; $runs runs per mode, $spawns spawns per process"
declare -A got=() dead=()
for layout in $layouts; do
    pin=() # the command line's prefix: the client (and so the server it starts) on CPU 0
    if [[ "$layout" == pinned ]]; then pin=(taskset -c 0); fi
    for ((k = 1; k <= processes; k++)); do
        for c in $clients; do
            [[ -z "${unavailable[$c]:-}" && -z "${dead[$c]:-}" ]] || continue
            log="$logs/roundtrip.$layout.$c.$k.log"
            t0=$SECONDS
            if tout="$(run_client "$c" 2>"$log")" && [[ "$(grep -c '^ROUNDTRIP ' <<<"$tout")" == 3 ]]; then
                tout="$(grep '^ROUNDTRIP ' <<<"$tout" | sed "s/^ROUNDTRIP /ROUNDTRIP layout=$layout /")"
                got[$c]+="$tout"$'\n'
                awk -v c="$c" -v k="$k" -v t=$((SECONDS - t0)) '{
                    for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
                    printf "%-7s %-14s process %s  %-10s ", f["layout"], c, k, f["mode"]
                    if (f["mode"] == "spawn")
                        printf "%9.2f ms to the first response (median of %s)\n", 1e3 * f["median"], f["runs"]
                    else
                        printf "%9.0f round trips/s, client CPU %6.1f us each (median of %s)%s\n", f["requests"] / f["median"],
                            1e6 * f["cpu_median"] / f["requests"], f["runs"], f["mode"] == "inflight" ? "  (" t "s)" : ""
                }' <<<"$tout"
            else
                failed=1
                dead[$c]=1
                echo "!! the round-trip client $c FAILED ($layout, process $k):"
                tail -n 8 "$log"
                lines+=("SKIP runner=roundtrip-$c corpus=roundtrip chunk=0 reason=FAILED, see target/bench/logs/$(basename "$log")")
            fi
        done
    done
done
for c in $clients; do
    if [[ -n "${unavailable[$c]:-}" ]]; then
        lines+=("SKIP runner=roundtrip-$c corpus=roundtrip chunk=0 reason=${unavailable[$c]}")
        echo "!! $c: ${unavailable[$c]}"
    fi
    [[ -n "${got[$c]:-}" && -z "${dead[$c]:-}" ]] || continue
    # Per layout and mode, the process with the lowest median.
    while IFS= read -r l; do lines+=("$l"); done < <(awk '{
            for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
            m = f["layout"] " " f["mode"]
            if (!(m in best)) { name[++n] = m }
            if (!(m in best) || f["median"] + 0 < med[m]) { best[m] = $0; med[m] = f["median"] + 0 }
        }
        END { for (i = 1; i <= n; i++) print best[name[i]] }' <<<"${got[$c]}")
done
[[ -n "$append" ]] || lines+=("INFO load average at end=$(cut -d' ' -f1-3 /proc/loadavg)" "INFO total time=$((SECONDS - t_start))s")
printf '%s\n' "${lines[@]}" >>"$results"

if [[ -z "$append" ]]; then
    python3 bench/roundtrip/table.py "$results" "$out/roundtrip.md"
fi
if [[ $failed != 0 ]]; then
    echo "!! bench/roundtrip/run.sh: a client failed (see above)"
    exit 1
fi
