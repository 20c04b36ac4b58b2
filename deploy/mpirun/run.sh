#!/bin/bash
# Four llmload shards on the machines of deploy/mpirun/hostfile, started
# by Open MPI's mpirun (docs/distributed.md, "deploy/").
#
#   LLMLOAD_URL=http://router:8000/v1 RESULTS=/shared/llmload/run1 deploy/mpirun/run.sh
#
# Each rank reads its shard from OMPI_COMM_WORLD_RANK/SIZE (--shard auto)
# and waits for the start time computed here, once, on the launching
# machine. With MPICH's mpiexec the same line works (PMI_RANK/PMI_SIZE).
# Then: llmload merge "$RESULTS"/shard-* --out "$RESULTS"/merged.
set -euo pipefail

: "${LLMLOAD_URL:?set LLMLOAD_URL to the endpoint (http://HOST:PORT/v1)}"
: "${RESULTS:?set RESULTS to a directory every machine writes to}"
HOSTFILE=${HOSTFILE:-$(dirname "$0")/hostfile}
NP=${NP:-4}
# 30 s from now: room for ssh to start every rank.
START_AT=$(($(date +%s) + 30))

LLMLOAD_ARGS=(
    run
    --url "$LLMLOAD_URL"
    --rate 400
    --duration 10m
    --warmup 30s
    --prompt-tokens lognormal:median=400,sigma=0.6,max=4000
    --output-tokens uniform:50,300
    --slo ttft=500ms,tpot=50ms
    --seed 1
    --threads 4
    --shard auto
    --start-at "$START_AT"
    --out "$RESULTS/shard-{shard}"
    --quiet
)

# --map-by node puts the ranks on the hosts in turn, one each first.
exec mpirun --hostfile "$HOSTFILE" -np "$NP" --map-by node llmload "${LLMLOAD_ARGS[@]}"
