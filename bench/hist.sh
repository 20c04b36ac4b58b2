#!/bin/sh
# bench/hist.sh: ns per hist_record, per percentile query, per merge.
# Usage: bench/hist.sh [ITERATIONS]   (default 10,000,000 records)
# Builds the objects it needs through make, then a bench binary in build/bench/.
set -eu
cd "$(dirname "$0")/.."
make --no-print-directory build/src/measure/hist.o build/src/util/rng.o build/src/util/util.o >/dev/null
mkdir -p build/bench
${CC:-cc} -std=c11 -D_GNU_SOURCE -O2 -g -Wall -Wextra -Werror -Isrc \
    -o build/bench/hist_bench bench/hist_bench.c \
    build/src/measure/hist.o build/src/util/rng.o build/src/util/util.o -lm
exec build/bench/hist_bench "${1:-10000000}"
