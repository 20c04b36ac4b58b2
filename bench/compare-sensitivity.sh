#!/bin/sh
# bench/compare-sensitivity.sh: the smallest slowdown of the sim's decode
# step that `llmload compare` calls `worse` on TPOT p50 and p99. For each
# slowdown S% (default 0.5 1 2 5 10), a baseline sim (the default step:
# --step-base 4ms, --step-per-seq 150us) and a candidate sim whose two step
# costs are S% dearer run at the same time, one run of SECONDS on each (the
# same schedule: constant arrivals, one seed), and compare prints each
# row's difference, interval and verdict, with the default --min-effect 5%
# and with --min-effect 0% (the interval alone). A p99 needs about 700
# requests: RATE x SECONDS of at least 700. Not part of `make test`.
# Usage: bench/compare-sensitivity.sh [BIN] [SECONDS] [RATE] [SLOWDOWNS...]
#        (defaults build/llmload, 30, 40, 0.5 1 2 5 10)
set -eu
. "$(dirname "$0")/common.sh"
bench_args "$@"
set -- $REST
RATE=${1:-40}
[ $# -gt 0 ] && shift
STEPS=${*:-0.5 1 2 5 10}
bench_need jq

TMP=$(mktemp -d)
S1=
S2=
stop() {
    for p in $S1 $S2; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
    S1=
    S2=
}
trap 'stop; rm -rf "$TMP"' EXIT
trap 'exit 130' INT TERM PIPE

W="--rate $RATE --duration ${SECS}s --arrival constant --seed 1 --prompt-tokens 64
   --output-tokens 16 --ignore-eos --quiet --force"
row() { # row FILE NAME: "diff [lo, hi] verdict" of a row, in %
    jq -r --arg r "$2" '.candidates[0].rows[] | select(.row == $r)
        | if .diff.too_few then "\(.diff.value * 1000 | round / 10)% too-few \(.verdict)"
          else "\(.diff.value * 1000 | round / 10)% [\(.diff.lo * 1000 | round / 10), \(.diff.hi * 1000 | round / 10)] \(.verdict)\(if .same_because then "(" + .same_because + ")" else "" end)" end' "$1"
}
echo "$NAME: ${SECS} s runs at $RATE req/s (constant), 64+16 tokens, baseline step 4ms + 150us/seq"
printf '%-9s %-8s %-42s %-30s %-9s %s\n' slowdown row "diff [95% interval] verdict (min-effect 5%)" \
    "(min-effect 0%)" "ok b/c" "outcome b/c"
for s in $STEPS; do
    base=$(awk -v s="$s" 'BEGIN { printf "%dus", 4000 * (1 + s / 100) + 0.5 }')
    seq=$(awk -v s="$s" 'BEGIN { printf "%dns", 150000 * (1 + s / 100) + 0.5 }')
    sim_launch sima
    S1=$SIMPID
    A=$SIMURL
    sim_launch simb --step-base "$base" --step-per-seq "$seq"
    S2=$SIMPID
    B=$SIMURL
    # shellcheck disable=SC2086
    "$BIN" run --url "$A/v1" $W --out "$TMP/a" >"$TMP/a.log" 2>&1 &
    ra=$!
    # shellcheck disable=SC2086
    "$BIN" run --url "$B/v1" $W --out "$TMP/b" >"$TMP/b.log" 2>&1 || [ $? -eq 1 ] || { cat "$TMP/b.log" >&2; exit 1; }
    wait $ra || [ $? -eq 1 ] || { cat "$TMP/a.log" >&2; exit 1; }
    stop
    "$BIN" compare "$TMP/a" "$TMP/b" --out "$TMP/c5" --force --quiet 2>/dev/null
    "$BIN" compare "$TMP/a" "$TMP/b" --out "$TMP/c0" --force --quiet --min-effect 0% 2>/dev/null
    n=$(jq -r .requests.ok "$TMP/a/summary.json")/$(jq -r .requests.ok "$TMP/b/summary.json")
    o=$(jq -r '"\(.baseline.outcome)/\(.candidates[0].outcome)"' "$TMP/c5/compare.json")
    for r in tpot_p50 tpot_p99; do
        printf '%-9s %-8s %-42s %-30s %-9s %s\n' "+$s%" "$r" "$(row "$TMP/c5/compare.json" $r)" \
            "$(row "$TMP/c0/compare.json" $r)" "$n" "$o"
    done
done
