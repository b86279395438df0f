#!/usr/bin/env bash
# The side-by-side benchmark: `bash bench/run.sh` (see bench/README.md).
#
# Builds mcp-stdio and every peer, installs what is missing (the first time), generates
# the corpora, runs every (corpus, chunk size, runner) cell, counts instructions with
# callgrind, and writes target/bench/results.{txt,md,png}. Exits 1 if a runner failed or
# the runners disagree on the number of valid messages.
#
# Environment (defaults in brackets):
#   BENCH_SIZE_MB   size of each corpus in MiB [64]
#   BENCH_RUNS      timed runs per cell, best reported [3]
#   BENCH_PROCESSES each cell runs in this many separate processes, the best kept [2]:
#                   on this machine a process now and then runs a cell at half speed
#                   from start to end, whatever runner it is, so runs in one process
#                   are not independent enough
#   BENCH_SLICE_MB  size of the slice fed in 1-byte chunks [1]
#   BENCH_ENCODE_MB size of the mcp_encode inputs [16]
#   BENCH_CHUNKS    chunk sizes in bytes ["65536 4096 1"]
#   BENCH_CORPORA   ["small mixed large escape crlf"]
#   BENCH_RUNNERS   ["mcp_stdio mcp_stdio-sse2 mcp_stdio+jsonrpc naive-rust python ts-sdk go
#                   simdjson-native simdjson-portable sonic-rs"]; mcp_stdio-sse2 is our runner
#                   with MCP_STDIO_SIMD=portable (the SSE2 floor); sonic-rs is built with
#                   -C target-cpu=native and also minifies in the encode section
#   BENCH_SKIP_1B   runner:corpus cells not run in 1-byte chunks (quadratic peers, see
#                   bench/README.md) ["python:large ts-sdk:large naive-rust:large"]
#   BENCH_CALLGRIND 0 to skip the instruction counts [1]
#   BENCH_TRANSPORT_CORPORA corpora of the transport benchmark (McpTransport, memory and
#                   socketpair, against the bare reader; "" skips it) ["small mixed"]
#   BENCH_TRANSPORT_RUNS rounds of the transport benchmark per process, the median
#                   reported [3 x BENCH_RUNS]
#   BENCH_ROUNDTRIP 0 to skip the round-trip benchmark (bench/roundtrip/run.sh: tools/call
#                   round trips against examples/mcp_server.c, ours against the MCP SDKs'
#                   clients) [1]; its own knobs (BENCH_ROUNDTRIP_N, _PY_N, _RUNS, _SPAWNS,
#                   _PROCESSES, _CLIENTS, _LAYOUTS, _INFLIGHT) are described there. Below
#                   BENCH_SIZE_MB=64 its counts shrink in proportion (the smoke run stays tiny)
set -euo pipefail
cd "$(dirname -- "${BASH_SOURCE[0]}")/.."
root="$PWD"
# fingerprint, npm_fresh/npm_install, venv_fresh/venv_install: shared with the round trips.
source bench/roundtrip/install.sh

size_mb="${BENCH_SIZE_MB:-64}"
runs="${BENCH_RUNS:-3}"
processes="${BENCH_PROCESSES:-2}"
slice_mb="${BENCH_SLICE_MB:-1}"
encode_mb="${BENCH_ENCODE_MB:-16}"
chunks="${BENCH_CHUNKS:-65536 4096 1}"
corpora="${BENCH_CORPORA:-small mixed large escape crlf}"
runners="${BENCH_RUNNERS:-mcp_stdio mcp_stdio-sse2 mcp_stdio+jsonrpc naive-rust python ts-sdk go simdjson-native simdjson-portable sonic-rs}"
skip_1b="${BENCH_SKIP_1B-python:large ts-sdk:large naive-rust:large}"
do_callgrind="${BENCH_CALLGRIND:-1}"
transport_corpora="${BENCH_TRANSPORT_CORPORA-small mixed}"
transport_runs="${BENCH_TRANSPORT_RUNS:-$((runs * 3))}"
do_roundtrip="${BENCH_ROUNDTRIP:-1}"

out="$root/target/bench"
bin="$out/bin"
corpus_dir="$root/target/bench-corpus"
logs="$out/logs"
results="$out/results.txt"
mkdir -p "$bin" "$logs" "$out/callgrind"
t_start=$SECONDS

step() { printf '\n== %s\n' "$*"; }
# timed NAME CMD...: runs CMD, records how long it took (the install/build times).
setup_times=()
timed() {
    local name="$1" t0=$SECONDS
    shift
    "$@"
    setup_times+=("$name: $((SECONDS - t0))s")
}

declare -A unavailable=() # runner -> why it cannot run here

# apt_need PACKAGE: installs a missing Debian package when root, else explains.
apt_updated=0
apt_need() {
    local pkg="$1"
    dpkg -s "$pkg" >/dev/null 2>&1 && return 0
    if [[ "$(id -u)" != 0 ]]; then
        echo "!! $pkg is not installed and this is not root: run 'sudo apt-get install $pkg' (skipping what needs it)"
        return 1
    fi
    export DEBIAN_FRONTEND=noninteractive
    if [[ $apt_updated == 0 ]]; then
        apt-get update -q >"$logs/apt-update.log" 2>&1 || { cat "$logs/apt-update.log"; return 1; }
        apt_updated=1
    fi
    echo "installing $pkg with apt-get"
    apt-get install -y -q --no-install-recommends "$pkg" >"$logs/apt-$pkg.log" 2>&1 || {
        tail -n 20 "$logs/apt-$pkg.log"
        return 1
    }
}

wants() { [[ " $runners " == *" $1 "* ]]; }

# ---------------------------------------------------------------------------
step "build: mcp-stdio (cargo build --release) and its C runners"
build_ours() {
    cargo build --release --quiet
    gcc -O2 -g -std=c11 -Wall -Wextra -Iinclude bench/runners/mcp_stdio.c target/release/libmcp_stdio.a \
        -lgcc_s -lutil -lrt -lpthread -lm -ldl -lc -o "$bin/mcp_stdio_runner"
    gcc -O2 -g -std=c11 -Wall -Wextra -Iinclude bench/runners/transport.c target/release/libmcp_stdio.a \
        -lgcc_s -lutil -lrt -lpthread -lm -ldl -lc -o "$bin/transport_runner"
}
timed "cargo build --release + C runners" build_ours

if wants naive-rust; then
    step "build: naive Rust baseline (bench/runners/naive-rust, serde_json pinned)"
    timed "naive-rust (cargo build --locked)" env CARGO_TARGET_DIR="$out/naive-rust" \
        cargo build --release --locked --quiet --manifest-path bench/runners/naive-rust/Cargo.toml
fi

if wants sonic-rs; then
    # RUSTFLAGS here only: sonic-rs picks its SIMD kernels at compile time, so it is built
    # for this CPU as simdjson-native is; the library and the other runners are not.
    step "build: sonic-rs runner (bench/runners/sonic-rs, sonic-rs pinned, -C target-cpu=native)"
    sonic_cargo() { # SUBCOMMAND: cargo SUBCOMMAND on the sonic-rs runner, for this CPU
        env CARGO_TARGET_DIR="$out/sonic-rs" RUSTFLAGS="-C target-cpu=native" \
            cargo "$1" --release --locked --quiet --manifest-path bench/runners/sonic-rs/Cargo.toml
    }
    timed "sonic-rs (cargo build --locked, target-cpu=native)" sonic_cargo build
    # Its unit tests pin the strictness the counts rely on (the \u hex-digit check above all):
    # a few seconds, the dependencies being those just built.
    sonic_test() {
        sonic_cargo test >"$logs/sonic-rs-test.log" 2>&1 || {
            tail -n 20 "$logs/sonic-rs-test.log"
            return 1
        }
    }
    timed "sonic-rs strictness tests (cargo test)" sonic_test
fi

if wants go; then
    step "build: Go runner (standard library only, GOPROXY=off)"
    if command -v go >/dev/null || apt_need golang-go; then
        timed "go build" bash -c "cd bench/runners/go && GOPROXY=off GOFLAGS=-mod=mod GO111MODULE=on \
            GOCACHE='$out/go-cache' go build -o '$bin/go-runner' ."
    else
        unavailable[go]="Go is not installed"
    fi
fi

if wants simdjson-native || wants simdjson-portable; then
    step "build: simdjson line by line (libsimdjson-dev), with and without -march=native"
    if apt_need libsimdjson-dev; then
        build_simdjson() {
            g++ -O3 -march=native -std=c++17 bench/runners/simdjson_lines.cpp -lsimdjson -o "$bin/simdjson-native"
            g++ -O3 -std=c++17 bench/runners/simdjson_lines.cpp -lsimdjson -o "$bin/simdjson-portable"
        }
        timed "simdjson runners (g++ x2)" build_simdjson
    else
        unavailable[simdjson-native]="libsimdjson-dev is not installed"
        unavailable[simdjson-portable]="libsimdjson-dev is not installed"
    fi
fi

ts_deps="$out/ts-deps"
if wants ts-sdk; then
    step "install: @modelcontextprotocol/sdk (npm ci into target/bench/ts-deps)"
    if command -v node >/dev/null && command -v npm >/dev/null; then
        if npm_fresh "$ts_deps" bench/runners/ts; then
            echo "up to date"
        else
            timed "npm ci (@modelcontextprotocol/sdk)" npm_install "$ts_deps" bench/runners/ts
        fi
    else
        unavailable[ts-sdk]="node/npm not found"
    fi
fi

venv="$out/venv"
report_python=python3
step "install: matplotlib for the chart (pip into target/bench/venv)"
if venv_fresh "$venv" bench/requirements.txt; then
    echo "up to date"
    report_python="$venv/bin/python"
elif timed "pip install matplotlib (venv)" venv_install "$venv" bench/requirements.txt; then
    report_python="$venv/bin/python"
else
    echo "!! could not install matplotlib: the report will have no PNG chart"
fi

if [[ "$do_callgrind" != 0 ]] && ! command -v valgrind >/dev/null; then
    apt_need valgrind || do_callgrind=0
fi

# ---------------------------------------------------------------------------
step "corpora: bench/corpus.py -> target/bench-corpus ($size_mb MiB each)"
timed "corpus generation" python3 bench/corpus.py --out "$corpus_dir" --size-mb "$size_mb" \
    --slice-mb "$slice_mb" --encode-mb "$encode_mb"

# ---------------------------------------------------------------------------
sdk_version="$(sed -n 's/^ *"version": "\(.*\)",$/\1/p' "$ts_deps/node_modules/@modelcontextprotocol/sdk/package.json" 2>/dev/null | head -n 1 || true)"
zod_version="$(sed -n 's/^ *"version": "\(.*\)",$/\1/p' "$ts_deps/node_modules/zod/package.json" 2>/dev/null | head -n 1 || true)"
serde_json_version="$(grep -A1 '^name = "serde_json"' bench/runners/naive-rust/Cargo.lock | sed -n 's/version = "\(.*\)"/\1/p')"
sonic_rs_version="$(grep -A1 '^name = "sonic-rs"' bench/runners/sonic-rs/Cargo.lock | sed -n 's/version = "\(.*\)"/\1/p')"
# The SIMD level of each build: ours is picked at run time (MCP_STDIO_SIMD, else AVX2 where
# the CPU has it), sonic-rs's at compile time (its runner prints it in its BENCH lines).
simd_ours="$("$bin/mcp_stdio_runner" level)"
simd_sse2="$(MCP_STDIO_SIMD=portable "$bin/mcp_stdio_runner" level)"
{
    echo "INFO date=$(date -u '+%Y-%m-%d %H:%M UTC')"
    echo "INFO machine=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1), $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(uname -sr)"
    echo "INFO load average at start=$(cut -d' ' -f1-3 /proc/loadavg) (other work on the machine makes timings noisy)"
    echo "INFO settings=BENCH_SIZE_MB=$size_mb BENCH_RUNS=$runs BENCH_PROCESSES=$processes BENCH_SLICE_MB=$slice_mb BENCH_ENCODE_MB=$encode_mb BENCH_TRANSPORT_RUNS=$transport_runs"
    echo "INFO mcp-stdio=$(git rev-parse --short HEAD 2>/dev/null || echo '?')$(git diff --quiet -- src 2>/dev/null || echo ' + uncommitted changes in src/'), $(rustc --version)"
    echo "INFO C runner=$(gcc --version | head -n 1), -O2, static libmcp_stdio.a"
    echo "INFO simd=mcp_stdio: $simd_ours (mcp_stdio_simd_level(), MCP_STDIO_SIMD=${MCP_STDIO_SIMD:-unset}); mcp_stdio-sse2: $simd_sse2 (MCP_STDIO_SIMD=portable)"
    echo "INFO naive-rust=serde_json $serde_json_version"
    echo "INFO sonic-rs=sonic-rs $sonic_rs_version, RUSTFLAGS=\"-C target-cpu=native\", default features (its avx512 feature off)"
    echo "INFO python=$(python3 --version 2>&1)"
    echo "INFO ts-sdk=@modelcontextprotocol/sdk ${sdk_version:-?} (zod ${zod_version:-?}), node $(node --version 2>/dev/null || echo '?')"
    echo "INFO go=$(go version 2>/dev/null || echo '?')"
    echo "INFO simdjson=libsimdjson-dev $(dpkg-query -W -f='${Version}' libsimdjson-dev 2>/dev/null || echo '?'), $(g++ --version | head -n 1)"
} >"$results"

run_cell() { # RUNNER CORPUS FILE CHUNK
    local r="$1" c="$2" f="$3" n="$4"
    case "$r" in
    mcp_stdio) "$bin/mcp_stdio_runner" read "$r" "$c" "$f" "$n" "$runs" ;;
    mcp_stdio-sse2) MCP_STDIO_SIMD=portable "$bin/mcp_stdio_runner" read "$r" "$c" "$f" "$n" "$runs" ;;
    mcp_stdio+jsonrpc) "$bin/mcp_stdio_runner" read "$r" "$c" "$f" "$n" "$runs" jsonrpc ;;
    naive-rust) "$out/naive-rust/release/naive-rust-runner" "$r" "$c" "$f" "$n" "$runs" ;;
    python) python3 bench/runners/python_reference.py "$r" "$c" "$f" "$n" "$runs" ;;
    ts-sdk) BENCH_TS_DEPS="$ts_deps" node bench/runners/ts/readbuffer.mjs "$r" "$c" "$f" "$n" "$runs" ;;
    go) "$bin/go-runner" "$r" "$c" "$f" "$n" "$runs" ;;
    simdjson-native | simdjson-portable) "$bin/$r" "$r" "$c" "$f" "$n" "$runs" ;;
    sonic-rs) "$out/sonic-rs/release/sonic-rs-runner" "$r" "$c" "$f" "$n" "$runs" ;;
    *) echo "unknown runner $r" >&2; return 2 ;;
    esac
}

best_cell() { # RUNNER CORPUS FILE CHUNK: run_cell in $processes processes, print the fastest BENCH line
    local k line best="" best_s=""
    for ((k = 0; k < processes; k++)); do
        line="$(run_cell "$@" | grep '^BENCH ')" || return 1
        local s="${line##* seconds=}"
        s="${s%% *}"
        if [[ -z "$best" ]] || awk -v a="$s" -v b="$best_s" 'BEGIN { exit !(a < b) }'; then
            best="$line" best_s="$s"
        fi
    done
    echo "$best"
}

skip_reason() { # RUNNER: why 1-byte chunks are not run on `large` (see bench/README.md)
    case "$1" in
    python) echo "quadratic: each 1-byte chunk is appended to the str buffer (a copy) and the whole pending line split again; at the 4 KiB rate scaled to 1-byte chunks, over 10 min per run" ;;
    ts-sdk) echo "quadratic: each append is a Buffer.concat of the whole pending line and readMessage searches it from the start again; at the 4 KiB rate scaled to 1-byte chunks, several minutes per run" ;;
    naive-rust) echo "quadratic: the pending line is searched from its start again for every chunk; about 20 s per run measured here, over 60 s for 3 runs" ;;
    *) echo "listed in BENCH_SKIP_1B" ;;
    esac
}

failed=0
step "run: best of $runs run(s) in each of $processes process(es) per cell; corpora [$corpora], chunks [$chunks]"
for c in $corpora; do
    for n in $chunks; do
        file="$corpus_dir/$c.ndjson"
        [[ "$n" == 1 ]] && file="$corpus_dir/$c.slice.ndjson"
        for r in $runners; do
            if [[ -n "${unavailable[$r]:-}" ]]; then
                continue
            fi
            if [[ "$n" == 1 && " $skip_1b " == *" $r:$c "* ]]; then
                echo "SKIP runner=$r corpus=$c chunk=$n reason=$(skip_reason "$r")" >>"$results"
                printf '%-7s %7s  %-18s skipped (see the report)\n' "$c" "$n" "$r"
                continue
            fi
            log="$logs/$r.$c.$n.log"
            t0=$SECONDS
            if line="$(best_cell "$r" "$c" "$file" "$n" 2>"$log")"; then
                echo "$line" >>"$results"
                echo "$line" | awk -v r="$r" -v c="$c" -v n="$n" -v t=$((SECONDS - t0)) '{
                    for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
                    printf "%-7s %7s  %-18s %10.1f MB/s %12.0f msgs/s   (%ss)\n", c, n, r,
                        f["bytes"] / f["seconds"] / 1e6, f["messages"] / f["seconds"], t }'
            else
                failed=1
                echo "SKIP runner=$r corpus=$c chunk=$n reason=FAILED, see target/bench/logs/$(basename "$log")" >>"$results"
                echo "!! $r on $c in $n-byte chunks FAILED:"
                tail -n 5 "$log"
            fi
        done
    done
done
for r in "${!unavailable[@]}"; do
    echo "SKIP runner=$r corpus=all chunk=0 reason=not available here: ${unavailable[$r]}" >>"$results"
done

if [[ -n "$transport_corpora" ]]; then
    step "transport: McpTransport (memory, socketpair) against the bare reader, 64 KiB chunks, $transport_runs rounds in each of $processes process(es)"
    t0=$SECONDS
    for c in $transport_corpora; do
        log="$logs/transport.$c.log"
        lines=""
        for ((k = 0; k < processes; k++)); do
            if tout="$("$bin/transport_runner" "$c" "$corpus_dir/$c.ndjson" "$transport_runs" 2>>"$log")"; then
                lines+="$tout"$'\n'
            else
                failed=1
                echo "SKIP runner=transport corpus=$c chunk=65536 reason=FAILED, see target/bench/logs/$(basename "$log")" >>"$results"
                echo "!! the transport benchmark on $c FAILED:"
                tail -n 5 "$log"
                lines=""
                break
            fi
        done
        [[ -n "$lines" ]] || continue
        # Per mode, the process with the lowest median (the other cells keep the fastest process).
        awk '/^TRANSPORT / {
                for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
                m = f["mode"]
                if (!(m in best)) { name[++n] = m }
                if (!(m in best) || f["median"] + 0 < med[m]) { best[m] = $0; med[m] = f["median"] + 0 }
            }
            END { for (i = 1; i <= n; i++) print best[name[i]] }' <<<"$lines" |
            tee -a "$results" | awk '{
                for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
                printf "%-7s %-11s %10.1f MB/s %12.0f msgs/s (median of %s)\n", f["corpus"], f["mode"],
                    f["bytes"] / f["median"] / 1e6, f["messages"] / f["median"], f["runs"] }'
    done
    setup_times+=("transport benchmark: $((SECONDS - t0))s")
fi

if [[ "$do_roundtrip" != 0 ]]; then
    step "round trips: tools/call against examples/mcp_server.c over pipes, ours and the MCP SDKs' clients (bench/roundtrip/run.sh)"
    t0=$SECONDS
    bash bench/roundtrip/run.sh --append "$results" || failed=1
    setup_times+=("round-trip benchmark (builds and installs included): $((SECONDS - t0))s")
fi

encoders="mcp_encode mcp_encode_to"
wants sonic-rs && encoders+=" sonic-rs"
# The documents (encode-KIND.docs, bench/corpus.py): compact/pretty are mixed messages and
# tools/list results; small-* and mixed-* the small and mixed corpora's messages alone.
encode_kinds="compact pretty small-compact small-pretty mixed-compact mixed-pretty"
step "mcp_encode, mcp_encode_to (a reused buffer)$(wants sonic-rs && echo ' and sonic-rs minify (Value + to_writer)'): compact and pretty-printed documents (${encode_mb} MiB of each kind: $encode_kinds)"
encode_cmd() { # ENCODER KIND
    case "$1" in
    sonic-rs) "$out/sonic-rs/release/sonic-rs-runner" encode "$1" "$2" "$corpus_dir/encode-$2.docs" "$runs" ;;
    *) "$bin/mcp_stdio_runner" encode "$1" "$2" "$corpus_dir/encode-$2.docs" "$runs" ;;
    esac
}
for encoder in $encoders; do
    for kind in $encode_kinds; do
        if line="$(encode_cmd "$encoder" "$kind" 2>"$logs/$encoder.$kind.log")"; then
            echo "$line" | tee -a "$results"
        else
            failed=1
            echo "!! $encoder on $kind documents FAILED:"
            tail -n 5 "$logs/$encoder.$kind.log"
        fi
    done
done

if [[ "$do_callgrind" != 0 ]]; then
    step "callgrind: instructions per input byte (fixed workloads, independent of BENCH_SIZE_MB)"
    callgrind() { # NAME FUNCTION BYTES_FILE ARGS...
        local name="$1" fn="$2" bytes_file="$3"
        shift 3
        local outf="$out/callgrind/${name//[^A-Za-z0-9.+-]/_}.out"
        local ir bytes
        if ! valgrind --tool=callgrind --collect-atstart=no --toggle-collect="$fn" --callgrind-out-file="$outf" \
            "$bin/mcp_stdio_runner" "$@" >/dev/null 2>"$logs/callgrind.log" ||
            ! ir="$(sed -n 's/^summary: //p' "$outf")" || [[ -z "$ir" ]]; then
            failed=1
            echo "!! callgrind on '$name' FAILED:"
            tail -n 5 "$logs/callgrind.log"
            return 0
        fi
        if [[ "$bytes_file" == *.docs ]]; then
            bytes=$(($(stat -c %s "$bytes_file") - $(tr -cd '\0' <"$bytes_file" | wc -c)))
        else
            bytes=$(stat -c %s "$bytes_file")
        fi
        echo "CALLGRIND bytes=$bytes ir=$ir workload=$name" | tee -a "$results"
    }
    t0=$SECONDS
    callgrind "read mixed 4 MiB, 64 KiB chunks" one_read_pass "$corpus_dir/cg-mixed.ndjson" \
        read cg cg "$corpus_dir/cg-mixed.ndjson" 65536 1
    callgrind "read mixed 4 MiB, 4 KiB chunks" one_read_pass "$corpus_dir/cg-mixed.ndjson" \
        read cg cg "$corpus_dir/cg-mixed.ndjson" 4096 1
    callgrind "read small 1 MiB, 64 KiB chunks" one_read_pass "$corpus_dir/cg-small.ndjson" \
        read cg cg "$corpus_dir/cg-small.ndjson" 65536 1
    callgrind "read small 256 KiB, 1-byte chunks" one_read_pass "$corpus_dir/cg-small-256k.ndjson" \
        read cg cg "$corpus_dir/cg-small-256k.ndjson" 1 1
    callgrind "read+jsonrpc mixed 4 MiB, 64 KiB chunks" one_read_pass "$corpus_dir/cg-mixed.ndjson" \
        read cg cg "$corpus_dir/cg-mixed.ndjson" 65536 1 jsonrpc
    callgrind "mcp_encode 1 MiB of documents, compact" one_encode_pass "$corpus_dir/cg-encode-compact.docs" \
        encode cg cg "$corpus_dir/cg-encode-compact.docs" 1
    callgrind "mcp_encode the same documents, pretty-printed" one_encode_pass "$corpus_dir/cg-encode-pretty.docs" \
        encode cg cg "$corpus_dir/cg-encode-pretty.docs" 1
    # The transport's cost per message: the same fixed small workload through the bare
    # reader with classification and through a memory transport (bench/runners/transport.c).
    callgrind_transport() { # MODE FILE
        local mode="$1" file="$2" outf="$out/callgrind/transport-$1.out" ir msgs
        if ! msgs="$(valgrind --tool=callgrind --collect-atstart=no --toggle-collect="${mode}_pass" \
            --callgrind-out-file="$outf" "$bin/transport_runner" cg "$file" 1 "$mode" 2>"$logs/callgrind.log" |
            sed -n 's/^TRANSPORT .* messages=\([0-9]*\) .*/\1/p')" || [[ -z "$msgs" ]] ||
            ! ir="$(sed -n 's/^summary: //p' "$outf")" || [[ -z "$ir" ]]; then
            failed=1
            echo "!! callgrind on the transport runner ($mode) FAILED:"
            tail -n 5 "$logs/callgrind.log"
            return 0
        fi
        echo "CALLGRIND bytes=$(stat -c %s "$file") ir=$ir messages=$msgs transport=$mode workload=transport: $mode, small 1 MiB, 64 KiB chunks" |
            tee -a "$results"
    }
    if [[ -n "$transport_corpora" ]]; then
        callgrind_transport bare "$corpus_dir/cg-small.ndjson"
        callgrind_transport memory "$corpus_dir/cg-small.ndjson"
    fi
    setup_times+=("callgrind: $((SECONDS - t0))s")
fi

{
    echo "INFO load average at end=$(cut -d' ' -f1-3 /proc/loadavg)"
    joined="$(printf '%s; ' "${setup_times[@]}")"
    echo "INFO setup and build times this run=${joined%; }"
    echo "INFO total time=$((SECONDS - t_start))s"
} >>"$results"

step "report"
report_status=0
"$report_python" bench/report.py "$results" "$corpus_dir/manifest.json" "$out/results.md" "$out/results.png" ||
    report_status=$?
echo "raw results: target/bench/results.txt; logs: target/bench/logs/"
if [[ $failed != 0 || $report_status != 0 ]]; then
    echo "!! bench/run.sh: some runner failed or the counts disagree (see above)"
    exit 1
fi
