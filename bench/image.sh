#!/bin/sh
# image.sh: what one synthetic image costs the client (docs/workload.md,
# "Images"): paint, encode (libpng at zlib's fastest level, libjpeg-turbo
# at quality 85) and base64, per size and format, in milliseconds per image
# of this thread's CPU time (the median of 5 runs of N images, so a busy
# machine barely moves it), with the image's tokens on the sim
# and its bytes.
#
#   bench/image.sh [N]     N images per run (default 40)
set -eu
cd "$(dirname "$0")/.."
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
${CC:-cc} -std=c11 -D_GNU_SOURCE -O2 -g -Isrc -o "$out/image_bench" \
    bench/image_bench.c src/workload/image.c src/workload/dist.c src/util/rng.c src/util/util.c \
    $(pkg-config --cflags --libs libpng libjpeg) -lm -lpthread
"$out/image_bench" "${1:-40}"
