# bench/common.sh: what run.sh, sim.sh, compare.sh, compare-ab.sh and
# compare-sensitivity.sh share, sourced by each (POSIX sh).
# NAME (for messages) is bench/ and the script's file name unless the caller
# set it; the caller sets TMP (a scratch folder it removes on exit), most
# through bench_tmp.
NAME=${NAME:-bench/${0##*/}}

# bench_need TOOL...: exits 2 naming the first TOOL not on PATH.
bench_need() {
    for t in "$@"; do
        command -v "$t" >/dev/null || { echo "$NAME: needs $t (apt-get install -y $t)" >&2; exit 2; }
    done
}

# bench_tmp: makes TMP, a scratch folder, and sets the way out: on exit
# (a signal included: a run piped to head gets SIGPIPE) the sim this script
# started is stopped and TMP removed.
bench_tmp() {
    TMP=$(mktemp -d)
    trap 'sim_stop; rm -rf "$TMP"' EXIT
    trap 'exit 130' INT TERM PIPE
}

# bench_args [BIN] [SECONDS] [REST...]: BIN (default build/llmload, which
# must be executable), SECS (default 5) and REST (the words left, as one
# string); exits 2 when there is no binary.
bench_args() {
    BIN=${1:-build/llmload}
    [ $# -gt 0 ] && shift
    SECS=${1:-5}
    [ $# -gt 0 ] && shift
    REST=$*
    [ -x "$BIN" ] || { echo "$NAME: no binary at $BIN (run make)" >&2; exit 2; }
}

# sim_launch FILE ARGS...: starts `$BIN sim --port 0 ARGS...` in the
# background, leaving any other sim running: SIMPID is its pid and SIMURL
# the address it announces on its first line (into $TMP/FILE, its stderr
# into $TMP/FILE.err). Waits up to 5 s for it; when it does not come up,
# stops it and exits 1 with its stderr.
sim_launch() {
    f=$1
    shift
    rm -f "$TMP/$f"
    "$BIN" sim --port 0 "$@" >"$TMP/$f" 2>"$TMP/$f.err" &
    SIMPID=$!
    i=0
    while [ ! -s "$TMP/$f" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
    SIMURL=$(head -1 "$TMP/$f")
    [ -n "$SIMURL" ] || { kill "$SIMPID" 2>/dev/null; echo "$NAME: the sim did not start" >&2; cat "$TMP/$f.err" >&2; exit 1; }
}

# sim_start ARGS...: stops the sim this script started last (if any), then
# starts another (sim_launch): SIM is its pid and URL its address.
SIM=
sim_stop() { [ -n "$SIM" ] && kill "$SIM" 2>/dev/null && wait "$SIM" 2>/dev/null; SIM=; }
sim_start() {
    sim_stop
    sim_launch addr "$@"
    SIM=$SIMPID
    URL=$SIMURL
}

# wrk_script FILE: writes the wrk script both benches drive the sim with:
# a streamed 16-token completion (ignore_eos, so exactly 16) posted on
# each request.
wrk_script() {
    cat >"$1" <<'LUA'
wrk.method = "POST"
wrk.path = "/v1/completions"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"model":"llmload-sim","prompt":"the quick brown fox","stream":true,"max_tokens":16,"ignore_eos":true}'
LUA
}
