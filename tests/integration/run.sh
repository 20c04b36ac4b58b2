#!/bin/bash
# tests/integration/run.sh: run the integration tests as jobs, several at a
# time, and say which failed.
#
#   run.sh [--curl BIN...] -- BIN...
#
# Each BIN is a test binary; those after --curl run a second time with
# LLMLOAD_HTTP_CLIENT=curl. LLMLOAD_BIN and LLMLOAD_DATA must be set.
#
# The tests spend nearly all their time waiting on simulated servers (the
# whole suite uses under a tenth of the two cores it is given), so running
# INTEG_JOBS of them at once (default 4) cuts the wall time about that much
# without crowding the measurements. The few long files are split into
# jobs by test name (LLMLOAD_TEST_FILTER / LLMLOAD_TEST_SKIP, read by
# harness_run_tests); the table below lists them, longest first. A job's
# output is kept and printed whole when it fails; the exit status is 1 when
# any job failed. A job that runs past INTEG_JOB_TIMEOUT seconds (default
# 900) is killed and fails.
#
# INTEG_JOBS=1 runs them one after another, as before.
set -u
set -f    # the filters below are globs for cmocka, not for the shell

# binary  filter  skip  when   ("-" for none); every test of a split file
# must be in exactly one of its jobs. Whole files listed here only start
# early; the rest follow in the order given. "alone" jobs run after all the
# others, one at a time: test_agreement_with_sim_log compares client and
# server timestamps to within a millisecond, which three other jobs on the
# same two cores can spoil, and test_past_capacity_no_pileup wants the sim
# to keep up with 20,000 requests at 20,000/s, test_busy_lateness_diagnosis
# with 20,000 offered at 200,000/s, and test_prometheus wants a real
# Prometheus to scrape two sims every second on time (about 25 s).
SPLITS='
test_sweep_confirm -                              -                                   -
test_sweep        test_sweep_capacity_knee       -                                   -
test_run_measure  -                              test_agreement_with_sim_log,test_past_capacity_no_pileup,test_busy_lateness_diagnosis -
test_sweep        test_stop_*                    -                                   -
test_sweep        -                              test_sweep_capacity_knee,test_stop_* -
test_recovery     test_recovery_after_overload   -                                   -
test_workload     -                              -                                   -
test_compare_sweep_sim -                         -                                   -
test_images       -                              -                                   -
test_embeddings   -                              -                                   -
test_gpu          -                              -                                   -
test_gpu_sampler  -                              -                                   -
test_prometheus   -                              -                                   alone
test_promfake     -                              -                                   -
test_run          -                              test_co_*                           -
test_run          test_co_closed_loop            -                                   -
test_run          test_co_open_loop              -                                   -
test_recovery     -                              test_recovery_after_overload        -
test_run_measure  test_agreement_with_sim_log    -                                   alone
test_run_measure  test_past_capacity_no_pileup   -                                   alone
test_run_measure  test_busy_lateness_diagnosis   -                                   alone
test_merge        -                              -                                   -
test_compare_noise -                             -                                   alone
test_endpoints    -                              -                                   -
test_histlog      -                              -                                   -
test_deploy       -                              -                                   -
'

curl_bins=()
bins=()
mode=
for a in "$@"; do
    case $a in
    --curl) mode=curl ;;
    --) mode=plain ;;
    *) if [ "$mode" = curl ]; then curl_bins+=("$a"); else bins+=("$a"); fi ;;
    esac
done
: "${LLMLOAD_BIN:?LLMLOAD_BIN is not set}" "${LLMLOAD_DATA:?LLMLOAD_DATA is not set}"
export LLMLOAD_BIN LLMLOAD_DATA

# The job list: "client binary filter skip when" lines, split files first.
jobs_for() { # client bins...
    local client=$1 b name
    shift
    while read -r name filter skip when; do
        [ -n "$name" ] || continue
        for b in "$@"; do
            [ "$(basename "$b")" = "$name" ] && echo "$client $b $filter $skip $when"
        done
    done <<<"$SPLITS"
    for b in "$@"; do
        name=$(basename "$b")
        grep -q "^$name " <<<"$SPLITS" || echo "$client $b - - -"
    done
}
mapfile -t JOBS < <(jobs_for native "${bins[@]}"; jobs_for curl "${curl_bins[@]}")
if [ ${#JOBS[@]} -eq 0 ]; then
    echo "run.sh: no test binaries given" >&2
    exit 1
fi

LOGS=$(mktemp -d)
trap 'rm -rf "$LOGS"' EXIT
NPAR=${INTEG_JOBS:-4}

run_job() { # index client binary filter skip when
    local i=$1 client=$2 bin=$3 filter=$4 skip=$5 label start rc
    label=$(basename "$bin")
    [ "$filter" != - ] && label="$label [$filter]"
    [ "$skip" != - ] && label="$label [all but $skip]"
    [ "$client" = curl ] && label="$label (LLMLOAD_HTTP_CLIENT=curl)"
    start=$(date +%s.%N)
    (
        [ "$client" = curl ] && export LLMLOAD_HTTP_CLIENT=curl
        [ "$filter" != - ] && export LLMLOAD_TEST_FILTER="$filter"
        [ "$skip" != - ] && export LLMLOAD_TEST_SKIP="$skip"
        exec timeout --kill-after=10 "${INTEG_JOB_TIMEOUT:-900}" "$bin"
    ) >"$LOGS/$i.log" 2>&1
    rc=$?
    local secs
    secs=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }')
    if [ $rc -eq 0 ]; then
        echo "== $label: ok ($secs s, $(grep -c '^\[       OK \]' "$LOGS/$i.log") tests)"
    else
        echo "== $label: FAILED (exit $rc, $secs s)"
        sed 's/^/   | /' "$LOGS/$i.log"
        : >"$LOGS/$i.failed"
    fi
}

running=0
for i in "${!JOBS[@]}"; do
    case ${JOBS[$i]} in *" alone") continue ;; esac
    # shellcheck disable=SC2086
    run_job "$i" ${JOBS[$i]} &
    running=$((running + 1))
    if [ $running -ge "$NPAR" ]; then
        wait -n
        running=$((running - 1))
    fi
done
wait
for i in "${!JOBS[@]}"; do
    # shellcheck disable=SC2086
    case ${JOBS[$i]} in *" alone") run_job "$i" ${JOBS[$i]} ;; esac
done

failed=$(find "$LOGS" -name '*.failed' | wc -l)
echo "== integration: ${#JOBS[@]} jobs, $failed failed"
[ "$failed" -eq 0 ]
