#!/bin/sh
# bench/compare-ab.sh: how often `llmload compare` calls each row different,
# for A/A pairs (no SIMARGS: the same server) or A/B pairs (SIMARGS: the
# candidate's sim differs, e.g. --step-base 4.8ms --step-per-seq 180us for
# a 20% dearer decode, or --fault 500:0.02 for 2% errors). Each run is on a
# fresh sim (same state), one after the other, at RATE req/s (Poisson,
# 64 prompt and 16 output tokens); SEEDS same gives both runs of a pair one
# seed, other a seed each. Prints, per row, the pairs called better and
# worse and the median difference (docs/compare.md, "A short run on a
# loaded VM"). Needs jq. Not part of `make test`.
# Usage: bench/compare-ab.sh [BIN] [SECONDS] [PAIRS] [RATE] [same|other] [SIMARGS...]
#        (defaults build/llmload 5 8 20 other)
set -eu
. "$(dirname "$0")/common.sh"
bench_args "$@"
set -- $REST
PAIRS=${1:-8}
RATE=${2:-20}
SEEDS=${3:-other}
[ $# -gt 3 ] && shift 3 || set --
bench_need jq

bench_tmp

one_run() { # OUT SEED SIMARGS...
    out=$1 seed=$2
    shift 2
    sim_start "$@"
    "$BIN" run --url "$URL/v1" --rate "$RATE" --duration "${SECS}s" --prompt-tokens 64 \
        --output-tokens 16 --ignore-eos --slo ttft=500ms --seed "$seed" \
        --out "$out" --force --quiet >/dev/null 2>&1 || [ $? -eq 1 ]
    sim_stop
}

p=0
while [ $p -lt "$PAIRS" ]; do
    sa=$((100 + p))
    sb=$sa
    [ "$SEEDS" = same ] || sb=$((500 + p))
    one_run "$TMP/a" $sa
    one_run "$TMP/b" $sb "$@"
    "$BIN" compare "$TMP/a" "$TMP/b" --out "$TMP/c" --force --quiet 2>/dev/null || true
    jq -c '.candidates[0].rows[] | [.row, .verdict, .diff.value]' "$TMP/c/compare.json" >>"$TMP/rows"
    p=$((p + 1))
done
echo "$NAME: $PAIRS pairs of ${SECS} s runs at $RATE req/s, seeds $SEEDS, candidate's sim: ${*:-as the baseline's}"
jq -rs 'group_by(.[0])[] | [.[0][0], ([.[] | select(.[1] == "better")] | length),
        ([.[] | select(.[1] == "worse")] | length), ([.[] | select(.[2] != null) | .[2]] | sort |
        if length > 0 then (.[length / 2 | floor] * 1000 | round / 10) else null end)]
        | "  \(.[0]): better \(.[1]), worse \(.[2]) of '"$PAIRS"', median diff \(.[3])"' "$TMP/rows"
