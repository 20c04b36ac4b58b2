#!/bin/sh
# demo.sh: what `make demo` runs. $1 is the llmload binary. Starts the
# built-in sim, sweeps it (llmload demo), and says where the report is.
set -e
bin=${1:?usage: sh scripts/demo.sh path/to/llmload}
out="results/demo-$(date +%Y%m%d-%H%M%S)"
"$bin" demo --out "$out"
echo "report: $out/report.html (open it in a browser)"
