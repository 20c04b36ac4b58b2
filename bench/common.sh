# bench/common.sh: what run.sh and sim.sh share, sourced by both (POSIX sh).
# The caller sets NAME (its name, for messages) and TMP (a scratch folder it
# removes on exit) first.

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

# sim_start ARGS...: stops the sim this script started last (if any), then
# starts `$BIN sim --port 0 ARGS...` in the background: SIM is its pid and
# URL the address it announces on its first line. Waits up to 5 s for it;
# exits 1 with the sim's stderr when it does not come up.
SIM=
sim_stop() { [ -n "$SIM" ] && kill "$SIM" 2>/dev/null && wait "$SIM" 2>/dev/null; SIM=; }
sim_start() {
    sim_stop
    rm -f "$TMP/addr"
    "$BIN" sim --port 0 "$@" >"$TMP/addr" 2>"$TMP/sim.err" &
    SIM=$!
    i=0
    while [ ! -s "$TMP/addr" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
    URL=$(head -1 "$TMP/addr")
    [ -n "$URL" ] || { echo "$NAME: the sim did not start" >&2; cat "$TMP/sim.err" >&2; exit 1; }
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
