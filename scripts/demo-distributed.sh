#!/bin/sh
# demo-distributed.sh: what `make demo-distributed` runs (not part of
# `make test`). $1 is the llmload binary. The whole distributed path on one
# machine (docs/distributed.md): start the built-in sim, run a short sweep
# as 4 shards of one schedule under mpirun (--shard auto, one --start-at),
# merge the shards into one results directory (every step, the capacity,
# the knee and the recovery recomputed from the merged records), print the
# merged step table and say where the report is.
set -eu
bin=${1:?usage: sh scripts/demo-distributed.sh path/to/llmload}
command -v mpirun >/dev/null 2>&1 || {
    echo "demo-distributed: mpirun not found: scripts/install-deps.sh installs openmpi-bin" >&2
    exit 2
}
out="results/demo-distributed-$(date +%Y%m%d-%H%M%S)"
mkdir -p "$out"
sim_pid=
cleanup() { [ -n "$sim_pid" ] && kill "$sim_pid" 2>/dev/null; wait 2>/dev/null || true; }
trap cleanup EXIT INT TERM
# The sim on a free port, for 5 minutes at most; its first line is its address.
"$bin" sim --port 0 --duration 300s >"$out/sim.out" 2>"$out/sim.err" &
sim_pid=$!
i=0
while ! grep -q '^http://' "$out/sim.out" 2>/dev/null; do
    i=$((i + 1))
    [ "$i" -le 100 ] || { echo "demo-distributed: the sim did not start (see $out/sim.err)" >&2; exit 1; }
    sleep 0.1
done
url="$(head -n 1 "$out/sim.out")/v1"
# Every shard starts its schedule at the same instant, 3 s from now.
start=$(( $(date +%s) + 3 ))
# mpirun ends every rank when one exits non-zero: the sh wrapper lets a
# shard's exit 1 (a step judged INVALID on a loaded machine) pass.
echo "4 shards under mpirun against $url, starting at unix time $start ..."
OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
    mpirun --oversubscribe -np 4 sh -c '"$@" || [ $? -eq 1 ]' sh \
    "$bin" sweep --url "$url" --out "$out/shard-{shard}" --rates 4,8,16 \
    --step-duration 3s --warmup 1s --gap 1s --overload-duration 1s --recovery-duration 3s \
    --prompt-tokens uniform:16,200 --output-tokens 16 --ignore-eos --seed 7 \
    --shard auto --start-at "$start" --quiet >"$out/mpirun.log" 2>&1 || {
    echo "demo-distributed: mpirun failed (see $out/mpirun.log)" >&2
    exit 1
}
echo "merging $out/shard-0 .. shard-3 into $out/merged:"
rc=0
"$bin" merge "$out/shard-0" "$out/shard-1" "$out/shard-2" "$out/shard-3" \
    --out "$out/merged" || rc=$?
echo "report: $out/merged/report.html (open it in a browser)"
# 1: a step the generator could not judge on this machine; still a demo.
[ "$rc" -le 1 ] || exit "$rc"
