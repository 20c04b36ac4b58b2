#!/bin/sh
# bench/compare.sh: the false-alarm rate of `llmload compare`. Runs PAIRS
# pairs of runs of one configuration against `llmload sim` (Poisson arrivals,
# a new seed per run), compares each pair, and prints how many rows were
# called better or worse: at 95%, about 5% of the rows of a pair whose
# difference is noise alone, fewer with --min-effect (docs/compare.md).
# Not part of `make test`.
# Usage: bench/compare.sh [BIN] [SECONDS] [PAIRS] [RATE]   (defaults 5, 10, 20)
set -eu
. "$(dirname "$0")/common.sh"
bench_args "$@"
set -- $REST
PAIRS=${1:-10}
RATE=${2:-20}

bench_tmp

sim_start
rows=0
called=0
p=0
while [ $p -lt "$PAIRS" ]; do
    for s in 1 2; do
        "$BIN" run --url "$URL/v1" --rate "$RATE" --duration "${SECS}s" --prompt-tokens 64 \
            --output-tokens 16 --ignore-eos --slo ttft=500ms --seed $((2 * p + s)) \
            --out "$TMP/r$s" --force --quiet >/dev/null 2>&1 || [ $? -eq 1 ]
    done
    "$BIN" compare "$TMP/r1" "$TMP/r2" --out "$TMP/c" --force --quiet
    n=$(grep -c '"verdict"' "$TMP/c/compare.json")
    d=$(grep -cE '"verdict": "(better|worse)"' "$TMP/c/compare.json" || true)
    if command -v jq >/dev/null; then
        jq -r --arg p "$p" '.candidates[0].rows[] | select(.verdict == "better" or .verdict == "worse")
            | "  pair \($p): \(.row) \(.verdict) \(.diff.value) [\(.diff.lo), \(.diff.hi)]"' \
            "$TMP/c/compare.json"
    fi
    rows=$((rows + n))
    called=$((called + d))
    p=$((p + 1))
done
echo "$NAME: $PAIRS pairs of ${SECS} s runs at $RATE req/s: $called of $rows rows called different"
