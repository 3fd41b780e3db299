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
    (cd "$ROOT" && swift build -c release 2>&1 | tail -1) >&2
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
