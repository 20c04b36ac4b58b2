#!/bin/sh
# bench/real-server.sh: how llmload reads your server, before you trust a
# campaign on it. Runs a short sequence against one OpenAI-compatible
# endpoint and prints, beside each figure llmload measures, what the server
# itself says where it says it (llama.cpp's `timings` and /metrics, vLLM's
# and SGLang's /metrics):
#
#   1. the server: model, vocabulary and context (where /v1/models and
#      llama.cpp's /props give them), and its /metrics engine;
#   2. sequential streamed requests (llmload run --users 1): output tokens
#      counted from usage against the stream's own events, the server's
#      generation and prompt counters against the client's, the client's
#      mean E2E against the server's own busy time per request;
#   3. sequential non-streamed requests, the same, and curl's time beside
#      llmload's (the HTTP gap is curl's too);
#   4. a short open-loop run at half the sequential rate: the self-check,
#      the warnings, the server join;
#   5. a short sweep: the capacity and the knee.
#
# Not part of `make test` (it needs a server). Sends only to URL, bounded
# in count and time (about 2 minutes). Needs curl and jq (Debian: apt-get
# install -y curl jq).
#
# Usage: bench/real-server.sh URL [BIN] [MODEL]
#   URL    the API base, e.g. http://127.0.0.1:8090/v1
#   BIN    llmload (default build/llmload)
#   MODEL  the model name to send (default: the first one /models lists)
# Extra llmload flags (e.g. --api-key-env K) go in LLMLOAD_FLAGS.
set -eu
NAME=bench/real-server.sh
URL=${1:?usage: bench/real-server.sh URL [BIN] [MODEL]}
URL=${URL%/}
BIN=${2:-build/llmload}
MODEL=${3:-}
FLAGS=${LLMLOAD_FLAGS:-}
[ -x "$BIN" ] || { echo "$NAME: no binary at $BIN (run make)" >&2; exit 2; }
for t in curl jq; do
    command -v $t >/dev/null || { echo "$NAME: needs $t (apt-get install -y $t)" >&2; exit 2; }
done
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
trap 'exit 130' INT TERM
ROOT=${URL%/v1}
METRICS=$ROOT/metrics
# A seed of this minute: a server's prompt cache does not carry over from
# an earlier run of this script (docs/metrics.md, "Cached prompt tokens").
SEED=$(( $(date +%s) / 60 % 100000 ))

row() { printf '  %-44s %16s %16s   %s\n' "$1" "$2" "$3" "$4"; }
ms() { awk -v n="$1" 'BEGIN { if (n == "" || n == "null") print "-"; else printf "%.2f ms", n / 1e6 }'; }

# ---- 1. the server ----------------------------------------------------
curl -sf --max-time 10 "$URL/models" >"$TMP/models.json" || {
    echo "$NAME: $URL/models does not answer" >&2; exit 1; }
[ -n "$MODEL" ] || MODEL=$(jq -r '.data[0].id // empty' "$TMP/models.json")
[ -n "$MODEL" ] || { echo "$NAME: $URL/models lists no model; give MODEL" >&2; exit 1; }
VOCAB=$(jq -r '.data[0].meta.n_vocab // empty' "$TMP/models.json")
CTX=$(curl -sf --max-time 5 "$ROOT/props" 2>/dev/null | jq -r '.default_generation_settings.n_ctx // empty' 2>/dev/null || true)
curl -sf --max-time 5 "$METRICS" >"$TMP/m0" 2>/dev/null || : >"$TMP/m0"
if grep -q '^llamacpp:' "$TMP/m0"; then ENGINE=llamacpp
elif grep -q '^vllm:' "$TMP/m0"; then ENGINE=vllm
elif grep -q '^sglang:' "$TMP/m0"; then ENGINE=sglang
elif [ -s "$TMP/m0" ]; then ENGINE=other
else ENGINE=none; fi

echo "llmload against $URL ($($BIN --version 2>/dev/null | head -1))"
echo "  model $MODEL${VOCAB:+, vocabulary $VOCAB tokens}${CTX:+, context $CTX tokens per slot}; /metrics: $ENGINE; seed $SEED"
echo

# The server's own busy seconds and its request count so far, from
# /metrics: llama.cpp's prompt and generation seconds; vLLM's and SGLang's
# end-to-end latency histograms (sum and count).
server_busy() {
    curl -sf --max-time 5 "$METRICS" 2>/dev/null | awk -v e="$ENGINE" '
        e == "llamacpp" && ($1 == "llamacpp:prompt_seconds_total" || $1 == "llamacpp:tokens_predicted_seconds_total") { s += $2 }
        e == "vllm" && $1 ~ /^vllm:e2e_request_latency_seconds_sum/ { s += $2 }
        e == "vllm" && $1 ~ /^vllm:e2e_request_latency_seconds_count/ { n += $2 }
        e == "sglang" && $1 ~ /^sglang:e2e_request_latency_seconds_sum/ { s += $2 }
        e == "sglang" && $1 ~ /^sglang:e2e_request_latency_seconds_count/ { n += $2 }
        END { printf "%.6f %d\n", s, n }'
}

# llmload run into $TMP/NAME with the given flags; its summary is
# $TMP/NAME/summary.json. Each run takes the next seed: the same prompts
# twice would be served from the server's prompt cache the second time.
RUNS=0
run() {
    name=$1; shift
    RUNS=$((RUNS + 1))
    # shellcheck disable=SC2086
    "$BIN" run --url "$URL" --model "$MODEL" --seed $((SEED + RUNS)) --out "$TMP/$name" --quiet \
        $FLAGS "$@" >"$TMP/$name.out" 2>"$TMP/$name.err" || true
    [ -s "$TMP/$name/summary.json" ] || { echo "$NAME: llmload run $* wrote no summary:" >&2; cat "$TMP/$name.err" >&2; exit 1; }
}

# The rows every run prints: requests, tokens and the server join.
join_rows() {
    s=$TMP/$1/summary.json
    row "requests ok / sent" "$(jq -r '.requests.by_kind.ok' "$s") / $(jq -r '.requests.sent' "$s")" "" \
        "$(jq -r '[.requests.by_kind | to_entries[] | select(.key != "ok" and .value > 0) | "\(.key) \(.value)"] | join(", ")' "$s")"
    if [ "$(jq -r '.tokens.source.usage + .tokens.source.chunk_usage' "$s")" -gt 0 ] &&
        [ "$(jq -r '.tokens.events > .requests.by_kind.ok' "$s")" = true ]; then
        row "output tokens: usage / counted events" "$(jq -r '.tokens.output_tokens' "$s")" \
            "$(jq -r '.tokens.events' "$s")" "(one event a token unless the server batches them)"
    fi
    g=$(jq -r '.server.generation_tokens.delta // empty' "$s")
    [ -z "$g" ] || row "generation tokens: client / server" "$(jq -r '.server.generation_tokens.client' "$s")" "$g" \
        "server/client $(jq -r '.server.generation_tokens | if .client > 0 then (.delta / .client * 1000 | round / 1000) else "-" end' "$s")"
    p=$(jq -r '.server.prompt_tokens.delta // empty' "$s")
    [ -z "$p" ] || row "prompt tokens$(jq -r 'if .server.prompt_tokens.excludes_cached then " (less cached)" else "" end' "$s"): client / server" \
        "$(jq -r '.server.prompt_tokens.client' "$s")" "$p" \
        "server/client $(jq -r '.server.prompt_tokens | if .client > 0 then (.delta / .client * 1000 | round / 1000) else "-" end' "$s")"
    row "prompt tokens: requested / server-counted" "$(jq -s 'map(.prompt_tokens) | add' "$TMP/$1/requests.jsonl")" \
        "$(jq -s 'map(select(.prompt_tokens_server >= 0) | .prompt_tokens_server) | add' "$TMP/$1/requests.jsonl")" \
        "(another tokenizer or a chat template: llmload calibrate)"
    c=$(jq -r '.tokens.cached_share // empty' "$s")
    [ -z "$c" ] || row "cached prompt share: server / workload" "$(jq -r '.tokens.cached_share * 1000 | round / 10' "$s")%" \
        "$(jq -r 'if .tokens.workload_cached_share == null then "-" else (.tokens.workload_cached_share * 1000 | round / 10 | tostring) + "%" end' "$s")" ""
    for w in lateness_warning cache_warning prompt_warning cut_short_warning; do
        v=$(jq -r --arg w "$w" '.[$w] // empty' "$s")
        [ -z "$v" ] || echo "    $w: $v"
    done
    if [ "$(jq -r '.invalid' "$s")" = true ]; then echo "    INVALID: $(jq -r '.invalid_reason' "$s")"; fi
}

# ---- 2. sequential streamed -------------------------------------------
N=40
b0=$(server_busy)
run seq-stream --users 1 --requests $N --prompt-tokens 64 --output-tokens 32 --ignore-eos
b1=$(server_busy)
echo "sequential streamed ($N requests, one at a time)                 client           server"
join_rows seq-stream
S=$TMP/seq-stream/summary.json
row "TTFT p50 (from send)" "$(ms "$(jq -r '.latency_ns.ttft.p50' "$S")")" "" ""
busy=$(echo "$b0 $b1" | awk '{ n = $4 - $2; if (n <= 0) n = '"$N"'; if ($3 > $1) printf "%.0f", ($3 - $1) / n * 1e9 }')
e2e=$(jq -r '.latency_ns.e2e.mean' "$S")
row "E2E mean / server busy per request" "$(ms "$e2e")" "$(ms "$busy")" \
    "$( [ -n "$busy" ] && awk -v a="$e2e" -v b="$busy" 'BEGIN { printf "gap %+.2f ms", (a - b) / 1e6 }' || echo "(no server timing in /metrics)")"
echo

# ---- 3. sequential non-streamed, and curl beside it ---------------------
N2=20
b0=$(server_busy)
run seq-body --users 1 --requests $N2 --prompt-tokens 64 --output-tokens 32 --ignore-eos --no-stream
b1=$(server_busy)
echo "sequential non-streamed ($N2 requests)"
join_rows seq-body
S=$TMP/seq-body/summary.json
busy=$(echo "$b0 $b1" | awk '{ n = $4 - $2; if (n <= 0) n = '"$N2"'; if ($3 > $1) printf "%.0f", ($3 - $1) / n * 1e9 }')
e2e=$(jq -r '.latency_ns.e2e.mean' "$S")
row "E2E mean / server busy per request" "$(ms "$e2e")" "$(ms "$busy")" \
    "$( [ -n "$busy" ] && awk -v a="$e2e" -v b="$busy" 'BEGIN { printf "gap %+.2f ms", (a - b) / 1e6 }' || echo "")"
# curl: the same size of request, its own time beside the server's timings.
body=$(jq -cn --arg m "$MODEL" '{model: $m, max_tokens: 32, ignore_eos: true, stream: false,
    messages: [{role: "user", content: "Once upon a time there was a little girl who liked to walk in the park with her dog and her friends every day"}]}')
i=0
: >"$TMP/curl.txt"
while [ $i -lt $N2 ]; do
    curl -s --max-time 30 -o "$TMP/c.json" -w '%{time_total}\n' -H 'Content-Type: application/json' \
        -d "$body" "$URL/chat/completions" >>"$TMP/curl.txt" || true
    jq -r '(.timings.prompt_ms // empty) + (.timings.predicted_ms // 0)' "$TMP/c.json" 2>/dev/null >>"$TMP/timings.txt" || true
    i=$((i + 1))
done
ct=$(sort -n "$TMP/curl.txt" | awk '{ a[NR] = $1 } END { if (NR) printf "%.0f", a[int((NR + 1) / 2)] * 1e9 }')
if [ -s "$TMP/timings.txt" ]; then
    st=$(sort -n "$TMP/timings.txt" | awk '{ a[NR] = $1 } END { if (NR) printf "%.0f", a[int((NR + 1) / 2)] * 1e6 }')
    row "curl time_total p50 / server timings p50" "$(ms "$ct")" "$(ms "$st")" \
        "$(awk -v a="$ct" -v b="$st" 'BEGIN { printf "gap %+.2f ms (curl'"'"'s own HTTP gap)", (a - b) / 1e6 }')"
else
    row "curl time_total p50" "$(ms "$ct")" "-" "(the server sends no timings)"
fi
echo

# ---- 4. a short open-loop run ---------------------------------------------
R=$(jq -r '.throughput.ok_rate_per_s // empty' "$TMP/seq-stream/summary.json")
R=$(awk -v r="${R:-2}" 'BEGIN { r = r / 2; if (r < 1) r = 1; printf "%.3g", r }')
run open --rate "$R" --duration 10s --prompt-tokens 64 --output-tokens 32 --ignore-eos
echo "open loop, $R req/s for 10 s (half the sequential rate)"
join_rows open
S=$TMP/open/summary.json
row "TTFT p50 / p99" "$(ms "$(jq -r '.latency_ns.ttft.p50' "$S")")" "$(ms "$(jq -r '.latency_ns.ttft.p99' "$S")")" ""
row "schedule lateness p99" "$(ms "$(jq -r '.latency_ns.schedule_lateness.p99' "$S")")" "" "(the generator's own delay)"
echo

# ---- 5. a short sweep -------------------------------------------------------
echo "sweep (--rates auto, 4 s steps, at most 6)"
# shellcheck disable=SC2086
"$BIN" sweep --url "$URL" --model "$MODEL" --seed $((SEED + 100)) --out "$TMP/sweep" --quiet $FLAGS \
    --rates auto --step-duration 4s --warmup 1s --max-steps 6 --no-recovery \
    --prompt-tokens 64 --output-tokens 32 --ignore-eos --slo ttft=500ms >"$TMP/sweep.out" 2>"$TMP/sweep.err" || true
if [ -s "$TMP/sweep/summary.json" ]; then
    jq -r '.findings.text // empty' "$TMP/sweep/summary.json" | sed 's/^/  /'
else
    sed 's/^/  /' "$TMP/sweep.err" | tail -5
fi
