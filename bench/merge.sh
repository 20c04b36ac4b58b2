#!/bin/sh
# bench/merge.sh: llmload merge's time and peak memory for RECORDS synthetic
# records across SHARDS shards (default 1,000,000 across 4).
# Usage: bench/merge.sh [BIN] [RECORDS] [SHARDS]
#
# The shards are written by awk, not by running a load: each a run.json
# (one config_hash, its shard index), a small summary.json and a
# requests.jsonl of its ids (i mod SHARDS == K) in requests.jsonl's own
# line format, neighbours swapped as a finishing order would have them.
# Then `llmload merge` runs under /usr/bin/time -v; the table gives its
# wall time, CPU time (and its share of the wall time: on a shared machine
# a low share is waiting for a CPU or the disk) and maximum resident set,
# and checks that the merged file has every record. Nothing is sent
# anywhere.
set -eu
NAME=merge.sh
BIN=${1:-build/llmload}
N=${2:-1000000}
S=${3:-4}
[ -x "$BIN" ] || { echo "$NAME: no binary at $BIN (run make)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "$NAME: needs /usr/bin/time (Debian: time)" >&2; exit 2; }
TMP=$(mktemp -d "${TMPDIR:-/tmp}/llmload-merge-bench.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

gen_start=$(date +%s)
k=0
while [ "$k" -lt "$S" ]; do
    d="$TMP/shard-$k"
    mkdir -p "$d"
    cat >"$d/run.json" <<EOF
{"schema": "llmload.run/1", "version": "bench", "command": "run",
 "config": {"load_model": "open", "rate_per_s": 1000.0, "arrival": "poisson",
  "duration_ns": 0, "requests": $N, "warmup_ns": 0, "cold_start": 0,
  "max_tokens_total": 0, "seed": 1, "prompt_salt": 1, "prompt_salt_auto": false,
  "url": "http://127.0.0.1:1/v1", "shard": $k, "shards": $S, "shard_launcher": "flag",
  "metrics_shard": 0},
 "host": {"hostname": "bench"}, "config_hash": "0123456789abcdef",
 "outcome": {"exit_status": 0, "invalid": false, "interrupted": false}}
EOF
    cat >"$d/summary.json" <<EOF
{"schema": "llmload.summary/1", "mode": "open-loop poisson 1000/s (shard $k of $S)",
 "closed_loop": false, "target_url": "http://127.0.0.1:1/v1", "model": "bench",
 "window_ns": $((N + 0))000000, "warmup_ns": 0,
 "requests": {"scheduled": $(( (N - k + S - 1) / S ))},
 "throughput": {"offered_rate_per_s": $(awk "BEGIN{print 1000/$S}")},
 "inflight": {"mean": 5.0}, "sent_in_window": $(( (N - k + S - 1) / S )),
 "lateness_diagnosis": {"late_sends": 0, "asleep_when_due": 0}}
EOF
    # ids k, k+S, ...; each pair of neighbours swapped (completion order)
    awk -v n="$N" -v s="$S" -v k="$k" 'function line(id,  sched) {
        sched = id * 1000000 + (id * 7919) % 1000000
        printf "{\"id\":%d,\"kind\":\"ok\",\"http_status\":200,\"sched_ns\":%d,\"sent_ns\":%d,\"late_ns\":%d,\"first_ns\":%d,\"first_content_ns\":%d,\"last_ns\":%d,\"end_ns\":%d,\"max_gap_ns\":%d,\"prompt_tokens\":%d,\"prompt_tokens_server\":%d,\"cached_tokens\":0,\"max_tokens\":16,\"ignore_eos\":true,\"output_tokens\":16,\"tokens_source\":\"usage\",\"events\":16,\"finish_reason\":\"length\",\"retry_after_ms\":null,\"worker\":0,\"user\":null,\"warmup\":false,\"detail\":null}\n",
            id, sched, sched + 20000, 15000, sched + 5000000 + (id % 97) * 100000,
            sched + 5000000 + (id % 97) * 100000, sched + 60000000 + (id % 89) * 200000,
            sched + 60000000 + (id % 89) * 200000, 4000000, 100 + id % 400, 100 + id % 400
    }
    BEGIN {
        for (id = k; id < n; id += 2 * s) {
            if (id + s < n) line(id + s)
            line(id)
        }
    }' >"$d/requests.jsonl"
    k=$((k + 1))
done
gen_end=$(date +%s)
bytes=$(cat "$TMP"/shard-*/requests.jsonl | wc -c)

/usr/bin/time -v "$BIN" merge "$TMP"/shard-* --out "$TMP/merged" >"$TMP/out" 2>"$TMP/time" || {
    st=$?
    # 1 (INVALID) cannot happen here: no lateness; anything else is a failure
    echo "$NAME: merge exited $st" >&2
    cat "$TMP/time" >&2
    exit 1
}
lines=$(wc -l <"$TMP/merged/requests.jsonl")
[ "$lines" -eq "$N" ] || { echo "$NAME: merged $lines lines, want $N" >&2; exit 1; }
wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$TMP/time")
user=$(sed -n 's/.*User time (seconds): //p' "$TMP/time")
sys=$(sed -n 's/.*System time (seconds): //p' "$TMP/time")
rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$TMP/time")
cpu=$(sed -n 's/.*Percent of CPU this job got: //p' "$TMP/time")
printf 'llmload merge: %d records in %d shards (%d MB of requests.jsonl, generated in %d s)\n' \
    "$N" "$S" $((bytes / 1000000)) $((gen_end - gen_start))
printf '%-28s %s\n' "wall time (m:ss)" "$wall" "user CPU (s)" "$user" "system CPU (s)" "$sys" \
    "CPU share of the wall time" "$cpu" \
    "peak memory (MB)" "$((rss / 1024))" "merged lines" "$lines"
