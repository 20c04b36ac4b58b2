#!/bin/sh
# bench/run.sh: is the generator ever the bottleneck? Drives
# `llmload sim --profile instant` with `llmload run` (open-loop Poisson,
# 16-token streams, client and sim sharing the machine) at rising rates and
# prints, per rate: achieved/offered, TTFT p99 from the scheduled time,
# schedule lateness p99, and the client's CPU per 1,000 requests. Then:
#   - wrk (Debian package) against the same endpoint as the CPU floor,
#   - the marginal client CPU per token event (64- vs 16-token streams),
#   - 64-token streams with 2 ms between events at 2,000 req/s, as is and
#     with a 1 s warm-up (bench/readcost.sh shows what each event's read
#     costs the client there),
#   - past capacity: 20,000 requests at 20,000 req/s, three times: the wall
#     time, how many came back ok and the lateness (a client that falls
#     behind must not pile up connections: transport.c, TRANSPORT_BEHIND_NS),
#   - client-added TTFT: client TTFT minus the sim-logged TTFT, p50/p99,
#   - (with BENCH_CONCURRENT=1) 10,000 concurrent open streams: client RSS.
# Beside each rate's row: how late this machine wakes a thread at that
# rate with nothing else running (bench/wakeup.c: a bare timerfd +
# epoll_wait loop, run just before the client; p99), and what share of
# the client's sends over 1 ms late came due while it slept and woke late
# (summary.json's lateness_diagnosis: the OS's or VM's part).
# Not part of `make test`. Needs python3 (for reading JSON) and wrk.
# The rate table runs each rate on both HTTP clients (docs/http-client.md);
# CLIENTS="native" (or "curl") picks one. REPEAT=N runs the whole rate
# table N times over (rates interleaved, so a noisy minute spreads over all
# of them) and prints each cell's median with its range and how many of
# the N runs were valid. Everything after the table uses the default
# client (native for the sim's http:// URL).
# Usage: bench/run.sh [BIN] [SECONDS] [RATES...]
set -eu
. "$(dirname "$0")/common.sh"
bench_args "$@"
RATES=${REST:-"1000 2000 5000 8000 10000 12000 15000"}
bench_need python3

bench_tmp
${CC:-cc} -std=c11 -D_GNU_SOURCE -O2 -o "$TMP/wakeup" "$(dirname "$0")/wakeup.c" -lm

# run_client OUTDIR ARGS...: runs llmload run, records its CPU seconds in OUTDIR/cpu
run_client() {
    out=$1
    shift
    /usr/bin/env time -f "%U %S %M" -o "$TMP/time" "$BIN" run --url "$URL/v1" --out "$out" \
        --force --quiet "$@" >/dev/null 2>"$TMP/client.err" || true
    tail -1 "$TMP/time" | awk '{print $1 + $2, $3}' >"$out/cpu"
}

summ() { # DIR [FLOOR_US]: prints requests ok achieved% ttft_p99_ms late_p99_ms cpu_s rss_kb
    #                verdict asleep% bare_wake_p99_ms
    python3 - "$1" "${2:-nan}" <<'PY'
import json, sys
d = sys.argv[1]
s = json.load(open(d + "/summary.json"))
req = s["requests"]
lat = s["latency_ns"]
cpu, rss = open(d + "/cpu").read().split()
sched = req["scheduled"] or 1
def p99(k):
    v = lat.get(k)
    return v["p99"] / 1e6 if v else float("nan")
ld = s.get("lateness_diagnosis") or {}
late = ld.get("late_sends", 0)
asleep = 100.0 * ld.get("asleep_when_due", 0) / late if late else float("nan")
print(req["scheduled"], req["by_kind"]["ok"], 100.0 * s["sent_in_window"] / sched,
      p99("ttft"), p99("schedule_lateness") if "schedule_lateness" in lat else p99("lateness"),
      float(cpu), int(rss), "INVALID" if s.get("invalid") else "ok", asleep,
      float(sys.argv[2]) / 1e3)
PY
}

bare_wake_us() { # RATE: the bare wake-up loop's p99 at RATE, microseconds
    "$TMP/wakeup" "$1" "$SECS" | sed 's/.* p99 \([0-9.]*\) .*/\1/'
}

print_rows() { # CLIENT RATE: its row (the median of its runs, with ranges, when several)
    python3 - "$TMP/rows.$1.$2" "$1" "$2" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
c, r = sys.argv[2], int(sys.argv[3])
cols = [[float(x[i]) for x in rows] for i in range(7)]
asleep = [float(x[8]) for x in rows if x[8] != "nan"]
bare = [float(x[9]) for x in rows if x[9] != "nan"]
cpu = [1e6 * s / max(n, 1) for s, n in zip(cols[5], cols[0])]
med = lambda v: statistics.median(v)
medn = lambda v, f: format(med(v), f) if v else "-"
valid = sum(1 for x in rows if x[7] == "ok")
verdict = rows[0][7] if len(rows) == 1 else f"ok {valid}/{len(rows)}"
print(f"{c:<7} {r:8d} {int(med(cols[0])):9d} {med(cols[2]):10.2f} {med(cols[3]):13.3f} "
      f"{med(cols[4]):13.3f} {med(cpu):14.1f} {med(cols[6]) / 1024:8.1f} "
      f"{medn(bare, '13.3f'):>13} {medn(asleep, '8.0f'):>8} {verdict}")
if len(rows) > 1:
    rng = lambda v, f: f"{min(v):{f}}-{max(v):{f}}"
    print(f"{'':16} ranges over {len(rows)} runs: ttft_p99 {rng(cols[3], '.3f')} ms, "
          f"late_p99 {rng(cols[4], '.3f')} ms, cpu {rng(cpu, '.1f')} ms/1000req")
PY
}

echo "machine: $(nproc) cores, $(awk -F: '/model name/ {print $2; exit}' /proc/cpuinfo | sed 's/^ *//')"
echo "open-loop Poisson, 16-token prompts and streams, ${SECS}s per rate, sim --profile instant"
[ "${REPEAT:-1}" -le 1 ] || echo "each rate ${REPEAT} times, interleaved: medians, then the ranges"
echo
sim_start --profile instant
printf '%-7s %8s %9s %10s %13s %13s %14s %8s %13s %8s %s\n' client rate requests achieved% \
    ttft_p99_ms late_p99_ms cpu_ms/1000req rss_MB bare_wake_p99 asleep% verdict
REPEAT=${REPEAT:-1}
rep=1
while [ "$rep" -le "$REPEAT" ]; do
    for r in $RATES; do
        for c in ${CLIENTS:-native curl}; do
            f=$(bare_wake_us "$r")
            run_client "$TMP/r$r" --http-client "$c" --rate "$r" --duration "${SECS}s" \
                --prompt-tokens 16 --output-tokens 16 --ignore-eos
            summ "$TMP/r$r" "$f" >>"$TMP/rows.$c.$r"
            [ "$REPEAT" -gt 1 ] || print_rows "$c" "$r"
        done
    done
    rep=$((rep + 1))
done
if [ "$REPEAT" -gt 1 ]; then
    for r in $RATES; do
        for c in ${CLIENTS:-native curl}; do
            print_rows "$c" "$r"
        done
    done
fi

echo
echo "marginal CPU per token event (64- vs 16-token streams at 2000 req/s):"
run_client "$TMP/e16" --rate 2000 --duration "${SECS}s" --prompt-tokens 16 --output-tokens 16 --ignore-eos
run_client "$TMP/e64" --rate 2000 --duration "${SECS}s" --prompt-tokens 16 --output-tokens 64 --ignore-eos
python3 - "$TMP/e16" "$TMP/e64" <<'PY'
import json, sys
def load(d):
    s = json.load(open(d + "/summary.json"))
    cpu = float(open(d + "/cpu").read().split()[0])
    return cpu, s["tokens"]["events"], s["requests"]["scheduled"]
c16, ev16, n16 = load(sys.argv[1])
c64, ev64, n64 = load(sys.argv[2])
per_req16 = c16 / n16
per_req64 = c64 / n64
per_ev = (per_req64 - per_req16) / (ev64 / n64 - ev16 / n16)
print(f"  16 tokens: {1e6 * per_req16:.1f} us CPU per request; 64 tokens: {1e6 * per_req64:.1f} us;"
      f" marginal {1e6 * per_ev:.2f} us per token event")
PY

if command -v wrk >/dev/null; then
    echo
    echo "floor: wrk (1 thread, 16 connections, same endpoint, streamed 16-token completion):"
    wrk_script "$TMP/post.lua"
    /usr/bin/env time -f "%U %S" -o "$TMP/wtime" wrk -t1 -c16 -d"${SECS}s" -s "$TMP/post.lua" "$URL" \
        >"$TMP/wrk.out" 2>&1 || true
    python3 - "$TMP/wrk.out" "$TMP/wtime" <<'PY'
import re, sys
out = open(sys.argv[1]).read()
m = re.search(r"(\d+) requests in", out)
n = int(m.group(1)) if m else 0
u, s = map(float, open(sys.argv[2]).read().split())
print(f"  wrk: {n} requests, {1e6 * (u + s) / max(n, 1):.1f} us CPU per request "
      f"(= {1000 * (u + s) / max(n, 1) * 1000:.1f} ms per 1000)")
PY
fi

echo
echo "64-token streams, 2 ms between events, 2000 req/s for ${SECS}s:"
sim_start --step-base 2ms --step-per-prefill-token 0 --step-per-seq 0 --max-num-seqs 20000 \
    --kv-tokens 2000000 --queue-limit 0
# The first 128 ms open ~256 connections while every stream is new; the
# second run leaves that ramp out of the figures with a 1 s warm-up.
# (It used to hold 10-26 ms stalls: see runopts_raise_nofile.)
for warm in 0s 1s; do
    run_client "$TMP/slow" --rate 2000 --duration "${SECS}s" --prompt-tokens 16 --output-tokens 64 \
        --ignore-eos --warmup "$warm"
    summ "$TMP/slow" | awk -v w="$warm" '{printf "  warm-up %s: requests %d ok %d achieved %.2f%% TTFT p99 %.3f ms lateness p99 %.3f ms CPU %.1f ms/1000req %s (late sends asleep when due: %s%%)\n",
        w, $1, $2, $3, $4, $5, 1000 * $6 / ($1 > 0 ? $1 : 1) * 1000, $8, $9 == "nan" ? "-" : sprintf("%.0f", $9)}'
done

echo "past capacity: 20,000 requests at 20,000 req/s (one worker thread), three runs:"
sim_start --profile instant
for k in 1 2 3; do
    start=$(date +%s.%N)
    run_client "$TMP/past$k" --rate 20000 --requests 20000 --threads 1 --prompt-tokens 16 \
        --output-tokens 16 --ignore-eos
    wall=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')
    python3 - "$TMP/past$k" "$wall" <<'PY'
import json, sys
s = json.load(open(sys.argv[1] + "/summary.json"))
k = s["requests"]["by_kind"]
bad = {x: v for x, v in k.items() if v and x != "ok"}
print(f"  wall {float(sys.argv[2]):.1f} s, ok {k['ok']} of {s['requests']['scheduled']},"
      f" lateness p99 {s['latency_ns']['schedule_lateness']['p99'] / 1e6:.1f} ms"
      + (f", failed: {bad}" if bad else ""))
PY
done

echo "client-added TTFT (client TTFT-from-sent minus sim-logged TTFT), 1000 req/s:"
sim_start --profile instant --log "$TMP/sim.log"
run_client "$TMP/agree" --rate 1000 --duration "${SECS}s" --prompt-tokens 16 --output-tokens 16 \
    --ignore-eos
sim_stop
python3 - "$TMP/agree" "$TMP/sim.log" <<'PY'
import json, sys
d, log = sys.argv[1], sys.argv[2]
start = json.load(open(d + "/summary.json"))["run_start_monotonic_ns"]
recs = [json.loads(l) for l in open(d + "/requests.jsonl")]
recs = [r for r in recs if r["kind"] == "ok"]
srv = [json.loads(l) for l in open(log)]
srv = [s for s in srv if s.get("first_token_ns")]
recs.sort(key=lambda r: r["sent_ns"])
srv.sort(key=lambda s: s["arrival_ns"])
n = min(len(recs), len(srv))
diffs = sorted((start + recs[i]["first_ns"]) - srv[i]["first_token_ns"] for i in range(n))
def pct(p):
    import math
    return diffs[max(0, math.ceil(p / 100 * len(diffs)) - 1)]
print(f"  {n} requests: client-added TTFT p50 {pct(50) / 1e3:.1f} us, p99 {pct(99) / 1e3:.1f} us,"
      f" max {diffs[-1] / 1e3:.1f} us")
PY

if [ "${BENCH_CONCURRENT:-0}" = 1 ]; then
    echo
    echo "10,000 concurrent open streams (each held ~60 s by the sim):"
    sim_start --step-base 30s --step-per-prefill-token 0 --step-per-seq 0 --max-num-seqs 20000 \
        --kv-tokens 2000000 --queue-limit 0
    "$BIN" run --url "$URL/v1" --out "$TMP/conc" --force --quiet --rate 1000 --arrival constant \
        --requests 10000 --prompt-tokens 4 --output-tokens 2 --ignore-eos --timeout-idle 0 \
        --timeout-first-token 0 >/dev/null 2>&1 &
    CL=$!
    peak=0
    fds=0
    for _ in $(seq 1 40); do
        sleep 1
        rss=$(awk '/VmRSS/ {print $2}' /proc/$CL/status 2>/dev/null || echo 0)
        [ "${rss:-0}" -gt "$peak" ] && peak=$rss
        n=$(ls /proc/$CL/fd 2>/dev/null | wc -l)
        [ "$n" -gt "$fds" ] && fds=$n
        kill -0 $CL 2>/dev/null || break
    done
    # The sim holds every stream for minutes (chunked prefill admits 128
    # 4-token prompts per 30 s step): stop the client once measured.
    kill -INT $CL 2>/dev/null || true
    sleep 1
    kill -INT $CL 2>/dev/null || true
    wait $CL || true
    echo "  peak client RSS $((peak / 1024)) MB with up to $fds descriptors open"
fi
