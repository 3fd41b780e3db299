# Shared helpers of the Tools/bench scripts (sourced, not run).
# Every measurement is one process under /usr/bin/time: wall time, CPU time (user + sys)
# and peak RSS. On a shared machine wall time depends on the load, so tables give both.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BENCH_DIR="${BENCH_DIR:-/tmp/faultline-bench}"
mkdir -p "$BENCH_DIR"
# Every benchmark sends output it does not keep to /dev/null. If /dev/null has been
# replaced by a regular file (it happened on a build machine: a file owned by tcpdump),
# each of those writes lands in the page cache and every figure is skewed (the libpcap
# floor doubled), so refuse to run rather than print wrong numbers.
if [ ! -c /dev/null ]; then
    echo "Tools/bench: /dev/null is not a character device ($(stat -c '%F, owner %U' /dev/null 2>/dev/null || echo missing));" >&2
    echo "  output sent there would be written to a file and skew every figure. As root:" >&2
    echo "  rm -f /dev/null && mknod -m 666 /dev/null c 1 3" >&2
    exit 2
fi
# Per command bound, so a benchmark always stops by itself.
BENCH_TIMEOUT="${BENCH_TIMEOUT:-1200}"

need_time() {
    if [ ! -x /usr/bin/time ]; then
        apt-get install -y time >/dev/null 2>&1 || { apt-get update >/dev/null && apt-get install -y time >/dev/null; }
    fi
}

need_apt() {  # need_apt COMMAND PACKAGE
    command -v "$1" >/dev/null 2>&1 && return 0
    apt-get install -y "$2" >/dev/null 2>&1 || { apt-get update >/dev/null && apt-get install -y "$2" >/dev/null 2>&1; } || return 1
}

build_release() {
    # FAULTLINE_BIN=path skips the build (to measure a given binary).
    if [ -n "${FAULTLINE_BIN:-}" ]; then FAULTLINE="$FAULTLINE_BIN"; return; fi
    # Linked as the Debian package links it (Tools/package): the Swift runtime and Foundation
    # inside the binary, whose own resident pages are then some 6 MB fewer.
    (cd "$ROOT" && swift build -c release --static-swift-stdlib 2>&1 | tail -1) >&2
    FAULTLINE="$ROOT/.build/release/faultline"
}

# measure NAME CMD...: runs CMD (through sh -c if one argument) and sets
# WALL (s), CPU (s), RSS_MB, STATUS. Output of CMD goes to $BENCH_DIR/NAME.out.
measure() {
    local name="$1"; shift
    local stats="$BENCH_DIR/$name.time"
    set +e
    if [ $# -eq 1 ]; then
        timeout -s KILL "$BENCH_TIMEOUT" /usr/bin/time -o "$stats" -f "%e %U %S %M" sh -c "$1" >"$BENCH_DIR/$name.out" 2>&1
    else
        timeout -s KILL "$BENCH_TIMEOUT" /usr/bin/time -o "$stats" -f "%e %U %S %M" "$@" >"$BENCH_DIR/$name.out" 2>&1
    fi
    STATUS=$?
    set -e
    local line; line="$(grep -E '^[0-9.]+ [0-9.]+ [0-9.]+ [0-9]+$' "$stats" | tail -1)"
    WALL="$(echo "$line" | awk '{print $1}')"
    CPU="$(echo "$line" | awk '{printf "%.2f", $2 + $3}')"
    RSS_MB="$(echo "$line" | awk '{printf "%.1f", $4 / 1024}')"
}

# div A B [DIGITS]
div() { awk -v a="$1" -v b="$2" -v d="${3:-1}" 'BEGIN { if (b + 0 == 0) print "-"; else printf "%.*f", d, a / b }'; }

machine_note() {
    local cpu; cpu="$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')"
    echo "Machine: $(nproc) cores ($cpu), $(free -g | awk '/Mem:/ {print $2}') GiB RAM, $(uname -sr);" \
         "load average at start $(cut -d' ' -f1-3 /proc/loadavg) (a shared build machine: other jobs ran" \
         "at the same time, so wall times are noisy; CPU time = user + sys is the steadier figure)." \
         "Date $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(cd "$ROOT" && git rev-parse --short HEAD)."
}

# ---- Relay cost (page-cost, live-cost): one open-loop load through a fresh proxy per mode,
# the modes interleaved over ROUNDS rounds, the proxy's CPU from /proc/PID/stat during the
# load only, medians. Results go in R["MODE|ROUND"] = "messages cpu_s [more fields]".

# relay_bench_setup [ECHO_MODE]: builds wsload ($WSLOAD), pins the proxy on CPU 1 and the
# load on CPU 0 when there are two cores ($ON_RELAY, $ON_LOAD, $PINNED), starts the echo
# server (`wsload echo`, or ECHO_MODE such as bird-echo) on $ECHO_PORT, and ends every
# process in BENCH_PIDS on exit.
relay_bench_setup() {
    cc -O2 -Wall -o "$BENCH_DIR/wsload" "$ROOT/Tools/bench/wsload.c" -lcrypto
    WSLOAD="$BENCH_DIR/wsload"
    ON_LOAD=(); ON_RELAY=(); PINNED=0
    if [ "$(nproc)" -ge 2 ] && command -v taskset >/dev/null; then ON_LOAD=(taskset -c 0); ON_RELAY=(taskset -c 1); PINNED=1; fi
    BENCH_PIDS=()
    trap 'for p in "${BENCH_PIDS[@]}"; do kill -9 "$p" 2>/dev/null || true; done' EXIT
    HZ=$(getconf CLK_TCK)
    ECHO_PORT=$(free_port)
    "${ON_LOAD[@]}" "$WSLOAD" "${1:-echo}" "$ECHO_PORT" > "$BENCH_DIR/relay-echo.log" 2>&1 & BENCH_PIDS+=($!)
    wait_for "$BENCH_DIR/relay-echo.log" listening
}

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_for() {  # wait_for FILE PATTERN: up to 60 s
    for _ in $(seq 600); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.1; done
    echo "timed out waiting for '$2' in $1" >&2; return 1
}
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }   # user + sys, in clock ticks
median() { sort -g | awk '{a[NR] = $1} END {print (NR ? a[int((NR + 1) / 2)] : "-")}'; }

# start_proxy LOG ARGS...: `faultline proxy` on CPU 1 in front of the echo server, its output
# in LOG; sets PROXY_PID and PROXY_PORT once it listens.
start_proxy() {
    local log=$1; shift
    "${ON_RELAY[@]}" "$FAULTLINE" proxy --listen 127.0.0.1:0 --upstream "ws://127.0.0.1:$ECHO_PORT" "$@" > "$log" 2>&1 &
    PROXY_PID=$!
    BENCH_PIDS+=("$PROXY_PID")
    wait_for "$log" "listening on"
    PROXY_PORT=$(grep -o 'listening on [^ ]*' "$log" | head -1 | sed 's/.*://')
}

# stop_proxy: SIGINT (the proxy closes its capture and prints its summary), SIGKILL after 30 s.
stop_proxy() {
    kill -INT "$PROXY_PID" 2>/dev/null || true
    for _ in $(seq 300); do kill -0 "$PROXY_PID" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$PROXY_PID" 2>/dev/null || true; wait "$PROXY_PID" 2>/dev/null || true
}

# load_through LOG WSLOAD_ARGS...: runs wsload (on CPU 0, bounded) against the proxy; sets
# LOAD_MESSAGES (echoed messages, 0 if the load failed), LOAD_LOST (sent and not echoed
# within 2 s, as `wsload rate` counts them) and LOAD_CPU (the proxy's CPU seconds over the
# load).
load_through() {
    local log=$1; shift
    local before; before=$(cpu_ticks "$PROXY_PID")
    timeout -s KILL $((DURATION + 60)) "${ON_LOAD[@]}" "$WSLOAD" "$@" > "$log" 2>&1 || true
    local after; after=$(cpu_ticks "$PROXY_PID")
    LOAD_MESSAGES=$(grep -E '^[0-9]+ ' "$log" | tail -1 | awk '{print $1}')
    LOAD_LOST=$(grep -E '^[0-9]+ ' "$log" | tail -1 | awk '{print ($8 == "" ? "-" : $8)}')
    [ -n "$LOAD_MESSAGES" ] || { echo "    the load failed: $(tail -1 "$log")" >&2; LOAD_MESSAGES=0; LOAD_LOST=-; }
    LOAD_CPU=$(div "$((after - before))" "$HZ" 2)
}

# us_per_msg MODE ROUND: the proxy's CPU microseconds per echoed message (each counted
# message crossed the proxy twice).
us_per_msg() { echo "${R["$1|$2"]}" | awk '{ if ($1 > 0) printf "%.2f", $2 * 1e6 / $1; else print "-" }'; }
# cost_median MODE: the median over the rounds of us_per_msg.
cost_median() { for round in $(seq "$ROUNDS"); do us_per_msg "$1" "$round"; echo; done | { grep -v '^-\?$' || true; } | median; }

# cost_row MODE LABEL BASE: "| LABEL | messages | CPU s | us per message | range | ratio to BASE"
# (medians over the rounds; the caller adds its own columns and the closing "|").
cost_row() {
    local mode=$1 label=$2 base=$3 per=() msgs=() cpus=() round m c
    for round in $(seq "$ROUNDS"); do
        per+=("$(us_per_msg "$mode" "$round")")
        read -r m c _ <<< "${R["$mode|$round"]}"
        msgs+=("$m"); cpus+=("$c")
    done
    local range; range=$(printf '%s\n' "${per[@]}" | { grep -v '^-$' || true; } | sort -g | awk '{a[NR] = $1} END {print (NR ? a[1] "-" a[NR] : "-")}')
    local per_msg ratio=-; per_msg=$(cost_median "$mode")
    [ "$per_msg" = - ] || ratio=$(div "$per_msg" "$(cost_median "$base")" 3)
    printf '| %s | %s | %s | %s | %s | %s' "$label" "$(printf '%s\n' "${msgs[@]}" | median)" "$(printf '%s\n' "${cpus[@]}" | median)" \
        "$per_msg" "$range" "$ratio"
}

# cost_change MODE BASE: "+4.2 %", the change of MODE's median CPU per message against BASE's.
cost_change() {
    awk -v p="$(cost_median "$1")" -v b="$(cost_median "$2")" 'BEGIN { if (b + 0 == 0) print "-"; else printf "%+.1f %%", (p / b - 1) * 100 }'
}
