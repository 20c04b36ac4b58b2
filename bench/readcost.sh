#!/bin/sh
# readcost.sh: ns per read() of one small streamed event on loopback TCP,
# with the kernel's immediate ACK (what every client gets by default) and
# with the ACK delayed, alternating, 5 runs each, medians and their ratio.
# Explains where the client's time goes on many-token streams: see
# bench/readcost.c. Usage: bench/readcost.sh [reads per run]
set -eu
cd "$(dirname "$0")/.."
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
${CC:-cc} -std=c11 -D_GNU_SOURCE -O2 -o "$out/readcost" bench/readcost.c
n=${1:-200000}
for i in 1 2 3 4 5; do
    "$out/readcost" 0 "$n" >>"$out/ack"
    "$out/readcost" 1 "$n" >>"$out/delayed"
done
med() { sort -n "$1" | sed -n 3p; }
a=$(med "$out/ack")
d=$(med "$out/delayed")
echo "machine: $(nproc) cores, $(awk -F: '/model name/ {print $2; exit}' /proc/cpuinfo | sed 's/^ *//')"
echo "one read() of a 200-byte pushed segment on loopback TCP, $n reads per run, median of 5:"
printf '  %-34s %8s ns\n' "immediate ACK (the default)" "$a"
printf '  %-34s %8s ns\n' "delayed ACK (TCP_QUICKACK 0)" "$d"
awk -v a="$a" -v d="$d" 'BEGIN { printf "  the ACK is %.0f ns, %.0f%% of the read\n", a - d, 100 * (a - d) / a }'
