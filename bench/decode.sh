#!/bin/sh
# decode.sh: ns per event of the stream decoder (sse + openai), 5 runs and
# their median. Builds its own binary from the decoder's sources, so it does
# not depend on the rest of the tree compiling. Usage: bench/decode.sh [events]
set -eu
cd "$(dirname "$0")/.."
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
${CC:-cc} -std=c11 -D_GNU_SOURCE -O2 -Isrc -o "$out/decode_bench" \
    bench/decode_bench.c src/sse.c src/jscan.c src/openai.c src/util.c -lm
for i in 1 2 3 4 5; do
    "$out/decode_bench" "${1:-2000000}"
done > "$out/runs.txt"
cat "$out/runs.txt"
echo "median of 5:"
for shape in "one event per feed" "64 events per feed"; do
    grep "^$shape" "$out/runs.txt" | awk '{print $(NF-1)}' | sort -n | sed -n 3p |
        awk -v s="$shape" '{printf "  %-22s %10.1f ns/event\n", s, $1}'
done
