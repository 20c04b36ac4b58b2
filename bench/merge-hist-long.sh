#!/bin/sh
# bench/merge-hist-long.sh: llmload merge's cost in writing the merged
# hist.jsonl of a long run: wall time, CPU, peak memory and page faults
# per run length (default 1 h and 4 h; give hours, e.g. "1 4 24").
# Usage: bench/merge-hist-long.sh [BIN] [HOURS...]
#
# Two real shards of 8 workers each run 3 s against `llmload sim` on
# 127.0.0.1 (20 requests/s). Each shard's hist.jsonl is then stretched to
# the run length by repeating its lines with t_ns shifted by whole spans
# of its seconds (awk), so every second holds the 8 workers' real
# histograms; the records stay the 3 s ones (the records' merge is
# bench/merge.sh's). `llmload merge` runs under /usr/bin/time -v (exit 1,
# an INVALID shard on a busy machine, is fine here) and the table says what
# the hist.jsonl added.
set -eu
NAME=merge-hist-long.sh
BIN=${1:-build/llmload}
[ $# -gt 0 ] && shift
HOURS=${*:-1 4}
[ -x "$BIN" ] || { echo "$NAME: no binary at $BIN (run make)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "$NAME: needs /usr/bin/time (Debian: time)" >&2; exit 2; }
TMP=$(mktemp -d "${TMPDIR:-/tmp}/llmload-mergehist-bench.XXXXXX")
SIMPID=
trap '[ -n "$SIMPID" ] && kill "$SIMPID" 2>/dev/null; rm -rf "$TMP"' EXIT
. "$(dirname "$0")/common.sh"

sim_launch sim.out --step-base 10ms --step-per-prefill-token 0 --step-per-seq 0
for k in 0 1; do
    "$BIN" run --url "$SIMURL/v1" --model llmload-sim --rate 20 --arrival constant --duration 3s \
        --threads 8 --shard "$k/2" --seed 9 --prompt-salt 5 --prompt-tokens 8 --output-tokens 10 --ignore-eos --no-metrics \
        --quiet --out "$TMP/short-$k" >/dev/null
done
kill "$SIMPID"
wait "$SIMPID" 2>/dev/null || true
SIMPID=

printf '%-6s %10s %10s %9s %9s %8s %12s %10s\n' "run" "lines" "wall" "user s" "sys s" \
    "RSS MB" "minor faults" "us/line"
for h in $HOURS; do
    secs=$((h * 3600))
    for k in 0 1; do
        d="$TMP/long-$k"
        rm -rf "$d"
        cp -r "$TMP/short-$k" "$d"
        # each line's t_ns plus r spans of the short log's seconds, r = 0, 1, ...
        awk -v secs="$secs" '{ line[NR] = $0
            if (match($0, /"t_ns":[0-9]+/)) t = substr($0, RSTART + 7, RLENGTH - 7) + 0
            if (t > span) span = t }
        END { span = span + 1000000000
            for (r = 0; r * span < secs * 1000000000; r++)
                for (i = 1; i <= NR; i++) {
                    s = line[i]
                    match(s, /"t_ns":[0-9]+/)
                    t = substr(s, RSTART + 7, RLENGTH - 7) + r * span
                    printf "%s\"t_ns\":%.0f%s\n", substr(s, 1, RSTART - 1), t,
                        substr(s, RSTART + RLENGTH)
                } }' "$TMP/short-$k/hist.jsonl" >"$d/hist.jsonl"
    done
    lines=$(cat "$TMP"/long-*/hist.jsonl | wc -l)
    rm -rf "$TMP/merged"
    /usr/bin/time -v "$BIN" merge "$TMP/long-0" "$TMP/long-1" --out "$TMP/merged" \
        >"$TMP/out" 2>"$TMP/time" || [ $? -eq 1 ] || { echo "$NAME: merge failed" >&2; cat "$TMP/time" >&2; exit 1; }
    [ -s "$TMP/merged/hist.jsonl" ] || { echo "$NAME: no merged hist.jsonl" >&2; cat "$TMP/time" >&2; exit 1; }
    wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$TMP/time")
    user=$(sed -n 's/.*User time (seconds): //p' "$TMP/time")
    sys=$(sed -n 's/.*System time (seconds): //p' "$TMP/time")
    rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$TMP/time")
    minor=$(sed -n 's/.*Minor (reclaiming a frame) page faults: //p' "$TMP/time")
    per=$(awk -v u="$user" -v s="$sys" -v n="$lines" 'BEGIN { printf "%.1f", (u + s) * 1e6 / n }')
    printf '%-6s %10d %10s %9s %9s %8d %12d %10s\n' "${h} h" "$lines" "$wall" "$user" "$sys" \
        $((rss / 1024)) "$minor" "$per"
done
