#!/bin/sh
# bench/sim.sh: how many short streamed requests per second one core of
# `llmload sim --profile instant` serves. Starts the sim, drives it with wrk
# (Debian: apt-get install -y wrk) posting a streamed 16-token completion
# over keep-alive connections, and prints requests/s and the sim's CPU use.
# Not part of `make test`. Usage: bench/sim.sh [BIN] [SECONDS] [CONNS...]
set -eu
. "$(dirname "$0")/common.sh"
bench_need wrk
bench_args "$@"
CONNS=${REST:-"16 64 256"}

bench_tmp
wrk_script "$TMP/post.lua"

sim_start --profile instant
# Pin the sim to one core (when taskset exists) and wrk to the others, so
# the figure is per core of the server.
NCPU=$(nproc)
if command -v taskset >/dev/null && [ "$NCPU" -ge 2 ]; then
    taskset -pc 0 "$SIM" >/dev/null
    WRK="taskset -c 1-$((NCPU - 1)) wrk"
    THREADS=$(( NCPU - 1 > 4 ? 4 : NCPU - 1 ))
else
    WRK=wrk
    THREADS=1
fi
HZ=$(getconf CLK_TCK)
cpu_ticks() { awk '{print $14 + $15}' /proc/"$SIM"/stat; }

printf '%-8s %12s %10s %12s %10s\n' conns requests/s sim_cpu req/s/core p99_ms
for c in $CONNS; do
    t0=$(cpu_ticks)
    $WRK -t "$THREADS" -c "$c" -d "${SECS}s" --latency -s "$TMP/post.lua" "$URL" >"$TMP/wrk.out" 2>&1 || true
    t1=$(cpu_ticks)
    rps=$(awk '/^Requests\/sec:/ {print $2}' "$TMP/wrk.out")
    p99=$(awk '$1 == "99%" {print $2}' "$TMP/wrk.out")
    errs=$(awk '/Non-2xx|Socket errors/' "$TMP/wrk.out")
    cpu=$(awk -v a="$t0" -v b="$t1" -v hz="$HZ" -v s="$SECS" 'BEGIN {printf "%.2f", (b - a) / hz / s}')
    per=$(awk -v r="${rps:-0}" -v c="$cpu" 'BEGIN {if (c > 0) printf "%.0f", r / c; else print "-"}')
    printf '%-8s %12s %10s %12s %10s\n' "$c" "${rps:-?}" "$cpu" "$per" "${p99:-?}"
    [ -z "$errs" ] || echo "  wrk: $errs"
done
