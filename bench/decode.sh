#!/bin/sh
# decode.sh: the cost of the client's hot path. Builds its own binary from
# the decoder's sources, so it does not depend on the rest of the tree
# compiling.
#
#   bench/decode.sh [events]   ns per event of the stream decoder (sse +
#                              openai), 5 runs and their median; the last
#                              line decodes through the per-stream memo
#                              the client uses (oai_decode_chunk_memo);
#                              then the same token as an Anthropic
#                              Messages event (anth_decode_event, with
#                              and without its memo) and as an OpenAI
#                              Responses event (resp_decode_event); then
#                              ns per body of an OpenAI embeddings
#                              answer (emb_decode_response: one body, no
#                              stream) of 1 x 8, 1 x 1024 and 8 x 1024
#                              floats
#   bench/decode.sh --instr    instructions per call under callgrind, which
#                              a busy machine does not disturb: per payload
#                              for oai_decode_chunk (NAME+memo: through
#                              the stream memo, repeating the chunk; messages_*:
#                              anth_decode_event and its memo;
#                              responses_*: resp_decode_event and its
#                              memo), and
#                              per record for record_write_jsonl (needs
#                              valgrind)
set -eu
cd "$(dirname "$0")/.."
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
${CC:-cc} -std=c11 -D_GNU_SOURCE -O2 -g -Isrc -o "$out/decode_bench" \
    bench/decode_bench.c src/http/h1.c src/decode/sse.c src/decode/jscan.c src/decode/openai.c src/decode/anthropic.c src/decode/responses.c src/decode/embeddings.c src/measure/record.c src/util/util.c \
    $(pkg-config --cflags --libs jansson) -lm

if [ "${1:-}" = "--instr" ]; then
    calls=2000
    printf "%-24s %6s %12s %10s\n" "payload" "bytes" "instr/call" "instr/byte"
    "$out/decode_bench" --list | while read -r name bytes; do
        fn=oai_decode_chunk
        [ "$name" = record ] && fn=record_write_jsonl
        [ "$name" = response ] && fn="feed_response*"
        case $name in *+memo) fn=oai_decode_chunk_memo ;; esac
        case $name in messages_*) fn=anth_decode_event ;; responses_*) fn=resp_decode_event ;; esac
        valgrind -q --tool=callgrind --toggle-collect="$fn" \
            --callgrind-out-file="$out/cg.$name" \
            "$out/decode_bench" --calls "$name" "$calls" 2>/dev/null
        ir=$(sed -n 's/^totals: *\([0-9]*\).*/\1/p' "$out/cg.$name")
        [ -n "$ir" ] || ir=$(sed -n 's/^summary: *\([0-9]*\).*/\1/p' "$out/cg.$name")
        awk -v n="$name" -v b="$bytes" -v ir="$ir" -v c="$calls" 'BEGIN {
            per = ir / c
            if (b > 0) printf "%-24s %6d %12.0f %10.1f\n", n, b, per, per / b
            else       printf "%-24s %6s %12.0f %10s\n", n, "-", per, "-"
        }'
    done
    exit 0
fi

for i in 1 2 3 4 5; do
    "$out/decode_bench" "${1:-2000000}"
done > "$out/runs.txt"
cat "$out/runs.txt"
echo "median of 5:"
for shape in "one event per feed" "64 events per feed" "64 per feed, the stream memo" \
    "messages: one event per feed" "messages: 64 per feed, memo" \
    "responses: one event per feed" "responses: 64 per feed, memo"; do
    grep "^$shape" "$out/runs.txt" | awk '{print $(NF-1)}' | sort -n | sed -n 3p |
        awk -v s="$shape" '{printf "  %-30s %10.1f ns/event\n", s, $1}'
done
for shape in "embeddings: 1 x 8 floats" "embeddings: 1 x 1024 floats" \
    "embeddings: 8 x 1024 floats"; do
    grep "^$shape" "$out/runs.txt" | awk '{print $(NF-5)}' | sort -n | sed -n 3p |
        awk -v s="$shape" '{printf "  %-30s %10.1f ns/body\n", s, $1}'
done
