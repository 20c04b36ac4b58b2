/* harness.h: helpers for integration tests: start and stop `llmload sim`
 * on an ephemeral port, run the llmload binary with a timeout and capture
 * its output, raw HTTP exchanges, temporary directories and files.
 *
 * The binary is getenv("LLMLOAD_BIN") (set by `make integration`). Every
 * function reports failures with a message on stderr. Network traffic goes
 * to 127.0.0.1 only. */
#ifndef LL_TEST_HARNESS_H
#define LL_TEST_HARNESS_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct harness_sim {
    pid_t pid;
    int port;
    char url[128]; /* "http://127.0.0.1:PORT" (no trailing slash, no /v1) */
};

/* Run LLMLOAD_BIN sim --port 0 <extra_args...> (extra_args NULL-terminated,
 * may be NULL), wait up to 10 s for the first stdout line and parse the
 * address from it. The sim's stderr is inherited. Returns 0, or -1 with a
 * message on stderr (the child, if any, is killed and reaped). */
int harness_sim_start(struct harness_sim *s, const char *const *extra_args);

/* SIGTERM the sim, wait up to 5 s for it to exit, then SIGKILL and reap.
 * Safe on a sim that already exited or was never started (pid 0). */
void harness_sim_stop(struct harness_sim *s);

/* Like harness_sim_stop but returns the exit status (WEXITSTATUS, or 128 +
 * the signal number when it was killed), -1 on error. */
int harness_sim_stop_status(struct harness_sim *s);

/* Run LLMLOAD_BIN args... (args NULL-terminated, not including the binary),
 * capture stdout and stderr into NUL-terminated strings (caller frees
 * *out and *err; either pointer may be NULL to discard), and SIGKILL it past
 * timeout_s. *exit_status gets the exit code, or 128 + signal when it was
 * killed. Returns 0, or -1 when it could not run. */
int harness_run(const char *const *args, int timeout_s, int *exit_status, char **out,
                char **err);

/* mkdtemp under $TMPDIR or /tmp. Returns the path (caller frees), or NULL. */
char *harness_tmpdir(void);

/* Remove dir and everything under it (no symlinks followed). */
void harness_rm_rf(const char *dir);

/* Connect to 127.0.0.1:port, send raw_request[0, len), read until the peer
 * closes or timeout_ms passes with nothing new (then the read so far is
 * returned). *response gets the NUL-terminated bytes (caller frees),
 * *response_len their count. Returns 0, or -1 when it could not connect or
 * send. */
int harness_http(int port, const char *raw_request, size_t len, char **response,
                 size_t *response_len, int timeout_ms);

/* Read a whole file into a NUL-terminated buffer (caller frees); *len gets
 * the byte count (len may be NULL). NULL with a message when it cannot. */
char *harness_read_file(const char *path, size_t *len);

/* The line of text that starts with head (at the start of a line, not
 * the first) and, when the line after it starts with next, that one too,
 * as a new string without the last newline (caller frees); fails the
 * test when there is no such line. For a summary's line and its note. */
char *harness_line_and_next(const char *text, const char *head, const char *next);

/* `llmload ARGS...` exiting 0 or 1 (INVALID: a late wake of the generator
 * on a shared machine): harness_line_and_next of its stdout (caller
 * frees). */
char *harness_run_lines(const char *const *args, const char *head, const char *next);

/* ---- cmocka helpers -------------------------------------------------------
 * The functions below run inside a cmocka test: on an error they fail the
 * running test (fail_msg / assert_*) instead of returning one. */

/* The sim of the running test. A test starts it with
 * harness_sim_start(&harness_cur_sim, ...); harness_sim_teardown stops it
 * even when an assertion failed half-way. */
extern struct harness_sim harness_cur_sim;

/* harness_sim_start(&harness_cur_sim, extra_args), failing the test when
 * the sim does not start. */
void harness_cur_sim_start(const char *const *extra_args);

/* cmocka teardown (state unused): stop harness_cur_sim when it runs and
 * zero its pid. Safe to call from a test or another teardown. Returns 0. */
int harness_sim_teardown(void **state);

/* cmocka teardown: harness_sim_teardown, then harness_tmp_end. Returns 0. */
int harness_sim_tmp_teardown(void **state);

/* Accepted by harness_run_client as expect_rc: exit 0, or 1 (the run was
 * marked INVALID because a wake-up of the generator was over 1 ms late on
 * this shared machine: the self-check doing its job, not a wrong
 * measurement). */
#define HARNESS_RC_OK_OR_INVALID (-1)

/* Run LLMLOAD_BIN args... (as harness_run) with a timeout_s timeout and
 * fail the test unless it exits want_status (or, for
 * HARNESS_RC_OK_OR_INVALID, 0 or 1); the message gives the command line
 * (up to 1 KiB of it), its exit status, stdout and stderr. Returns its stdout (caller
 * frees); *err_out, when err_out is not NULL, gets its stderr (caller
 * frees). */
char *harness_run_expect(const char *const *args, int timeout_s, int want_status,
                         char **err_out);

/* Run LLMLOAD_BIN args... (20 s timeout) and fail the test unless it is a
 * usage error: exit 2, nothing on stdout, and exactly one line on stderr,
 * which contains needle. */
void harness_expect_usage(const char *const *args, const char *needle);

/* A usage error to expect: the command line (up to the first NULL) and
 * what its one stderr line must contain. */
struct harness_usage {
    const char *args[12];
    const char *needle;
};

/* harness_expect_usage() for each of the n cases of u. */
void harness_expect_usages(const struct harness_usage *u, size_t n);

/* harness_expect_usages() for the cases given: HARNESS_EXPECT_USAGES(
 * {{"sweep", "--rates", "x"}, "--rates"}, ...). */
#define HARNESS_EXPECT_USAGES(...)                                                                 \
    do {                                                                                           \
        const struct harness_usage u_[] = {__VA_ARGS__};                                           \
        harness_expect_usages(u_, sizeof u_ / sizeof u_[0]);                                       \
    } while (0)

/* Create (or truncate) path and write text to it; fails the test when it
 * cannot. */
void harness_write_file(const char *path, const char *text);

/* harness_write_file of text into <harness_cur_tmp>/name (which must
 * exist); path gets its path (harness_tmp_path). */
void harness_tmp_file(char *path, size_t len, const char *name, const char *text);

/* Run `llmload run --url <harness_cur_sim.url>/v1 --out <tmp>/r --quiet
 * <fixed...> <args...>` (fixed may be NULL; both NULL-terminated, at most
 * 56 strings together) with a 60 s timeout, and fail the test unless it
 * exits expect_rc (or HARNESS_RC_OK_OR_INVALID). *err_out, when err_out is
 * not NULL, gets its stderr (caller frees). Returns the results dir
 * "<tmp>/r" (caller releases it with harness_results_free). */
char *harness_run_client(const char *const *fixed, const char *const *args, int expect_rc,
                         char **err_out);

/* Run `llmload <cmd> --url <harness_cur_sim.url>/v1 --out <tmp>/r --quiet
 * <fixed...> <args...>` (as harness_run_client, fixed may be NULL), in a
 * new temporary directory, with a timeout_s timeout; its exit status,
 * stdout and stderr as harness_run gives them. Returns the results dir
 * "<tmp>/r" (caller releases it with harness_results_free). */
char *harness_run_against_sim(const char *cmd, const char *const *fixed,
                              const char *const *args, int timeout_s, int *status,
                              char **out, char **err);

/* harness_run_against_sim(cmd, NULL, args, timeout_s, ...), failing the
 * test unless it exits 0 or 1 (a verdict, PASS or INVALID). *out and *err
 * get its stdout and stderr (caller frees). Returns the results dir
 * (caller releases it with harness_results_free). */
char *harness_run_sim_verdict(const char *cmd, const char *const *args, int timeout_s, char **out,
                              char **err);

/* The integer run.json's "config" holds at key in the results dir. */
int64_t harness_run_config_ival(const char *dir, const char *key);

/* harness_run_against_sim("sweep", NULL, args, timeout_s, ...), then
 * stop harness_cur_sim; fails the test unless the sweep exited 0. *out
 * and *err get its stdout and stderr (caller frees; either may be NULL to
 * discard). Returns the results dir (caller releases it with
 * harness_results_free). */
char *harness_sweep_ok(const char *const *args, int timeout_s, char **out, char **err);

/* The sum over the samples of metric name (exact name, any labels) on
 * sim s's /metrics now; *n (when not NULL) gets how many there were. A
 * failed GET fails the test. */
double harness_sim_metric_sum(const struct harness_sim *s, const char *name, int *n);

/* The points of series in report.html's chart chart_id (its data-x and
 * data-y) into xs and ys, the first max of them; fails the test when the
 * chart is missing. Returns the count (which may exceed max). */
size_t harness_svg_points(const char *html, const char *chart_id, const char *series, double *xs,
                          double *ys, size_t max);

/* `llmload report dir` must rebuild each of files (NULL-terminated names
 * in dir) byte for byte: each is read, removed, rebuilt and compared; a
 * difference fails the test naming the file and the first byte that
 * differs. report may exit 1 (a step INVALID, as the run said): the files
 * carry the verdict. Returns report's stdout (caller frees). */
char *harness_report_rebuilds(const char *dir, const char *const *files);

/* The small sim the sweep tests measure against: the default profile with
 * a batch of 4 sequences and a 20 ms step base (HARNESS_SMALL_SIM, its
 * flags), for HARNESS_SMALL_WORKLOAD (prompt 64, output 16 tokens,
 * ignore_eos, constant arrivals). Its capacity is low, about 12 req/s. */
#define HARNESS_SMALL_SIM_SEQS 4
#define HARNESS_SMALL_SIM "--max-num-seqs", "4", "--step-base", "20ms"
#define HARNESS_SMALL_WORKLOAD "--prompt-tokens", "64", "--output-tokens", "16", \
                               "--ignore-eos", "--arrival", "constant"

/* A sweep that runs its capacity probe (--rates auto, 0.5 s rounds) and
 * then one short step (1 s after a 0.2 s warm-up), no recovery: what the
 * probe's tests need of a sweep. */
#define HARNESS_PROBE_ONE_STEP                                                                     \
    "--rates", "auto", "--probe-duration", "0.5s", "--max-steps", "1", "--step-duration", "1s",    \
        "--warmup", "0.2s", "--no-recovery"

/* The small sim's capacity for HARNESS_SMALL_WORKLOAD in requests per
 * second, by sim_profile_capacity_rps: the truth a sweep's findings are
 * checked against. */
double harness_small_sim_rps(void);

/* A rate as the sweep writes it (3 significant digits, "%.3g"), for
 * --rates and for comparing with summary.json. */
void harness_sweep_rate(char *buf, size_t len, double rate_per_s);

/* The --rates list "r1,r2,..." of f[i] * c for i < n, each as
 * harness_sweep_rate writes it; fails the test when it does not fit len. */
void harness_sweep_rates(char *buf, size_t len, double c, const double *f, size_t n);

/* Start harness_cur_sim as the small sim, with extra_args (NULL-terminated,
 * may be NULL) after HARNESS_SMALL_SIM; fails the test when it does not
 * start. Returns harness_small_sim_rps(). */
double harness_small_sim_start(const char *const *extra_args);

/* The prefix-sharing run test_workload and test_prompt_ids make (with
 * text and with token-ID prompts): 20 req/s of 256-token prompts and 8
 * output tokens (ignore_eos), half of them beginning with one of two
 * shared 128-token prefixes. */
#define HARNESS_PREFIX_RUN "--rate", "20", HARNESS_PREFIX_WORK

/* Its work without the rate (for a sweep's steps). */
#define HARNESS_PREFIX_WORK                                                                        \
    "--prompt-tokens", "256", "--output-tokens", "8", "--ignore-eos", "--prefix-fraction", "0.5",  \
        "--prefix-groups", "2", "--prefix-tokens", "128"

struct workload;

/* The workload the client builds from --seed seed, --prompt-tokens prompt
 * and --output-tokens output (distributions as those flags take them),
 * with --ignore-eos when ignore_eos, every other field zero (the caller
 * sets a prefix or a cancel itself): the schedule's ground truth, for
 * workload_spec. Fails the test when a distribution does not parse. */
void harness_workload(struct workload *w, uint64_t seed, const char *prompt, const char *output,
                      int ignore_eos);

/* The records in dir of a HARNESS_PREFIX_RUN against the sim: more than 30,
 * each ok with 256 prompt tokens by both counts. A request the workload
 * (seed 1) puts in a prefix group is served 0 or 128 cached tokens (8
 * whole blocks, once its group's prefix is computed), any other none;
 * more than 10 are shared and at most 4 of those miss. */
void harness_check_prefix_hits(const char *dir);

/* The records in dir of a HARNESS_PREFIX_RUN with --all-unique: more than
 * 20, the server counting 256 prompt tokens and serving no cached one. */
void harness_check_no_prefix_hits(const char *dir);

/* Start harness_cur_sim with sim_args (harness_cur_sim_start), run the
 * client against it (harness_run_client with fixed and args, exit 0 or
 * 1 accepted), and stop the sim. Returns the results dir (caller releases
 * it with harness_results_free). */
char *harness_run_on_sim(const char *const *sim_args, const char *const *fixed,
                         const char *const *args);

/* Run the client on harness_cur_sim (harness_run_client with fixed and
 * args, exit 0 or 1 accepted), stop the sim (which flushes its log), and
 * load the run's requests.jsonl, which must hold want_n records. *dir
 * gets the results dir (caller releases it with harness_results_free);
 * the records are the caller's (harness_recs_free). */
struct harness_recs *harness_run_recs(const char *const *fixed, const char *const *args,
                                      size_t want_n, char **dir);

/* Remove the temporary directory above a results dir returned by
 * harness_run_client (with everything in it) and free dir. */
void harness_results_free(char *dir);

/* Every line of a JSON Lines file, parsed, as a JSON array (caller
 * decrefs). Every line must end with a newline and parse. */
json_t *harness_jsonl_load(const char *path);

/* harness_jsonl_load of dir/name (say "steps.jsonl"). */
json_t *harness_jsonl_in(const char *dir, const char *name);

/* The records of a JSON Lines file as a flat array of objects. */
struct harness_recs {
    json_t **items; /* n records, each owned (one reference) */
    size_t n;
};

/* Load path as harness_jsonl_load does. Returns the records (caller frees
 * with harness_recs_free). */
struct harness_recs *harness_recs_load(const char *path);

/* harness_recs_load of dir/requests.jsonl. */
struct harness_recs *harness_requests_load(const char *dir);

/* Release every record and r itself; NULL is a no-op. */
void harness_recs_free(struct harness_recs *r);

/* Parse the JSON file dir/name (dir may be NULL: name is the path).
 * Returns it (caller decrefs). */
json_t *harness_json_load(const char *dir, const char *name);

/* harness_json_load(dir, "summary.json"). */
json_t *harness_summary_load(const char *dir);

/* dir's summary.json, whose "expect" must list n thresholds, each passed
 * (the test fails naming the first that did not). Caller json_decrefs it. */
json_t *harness_expect_passed(const char *dir, size_t n);

/* Integer field k of o, or -1 when it is absent or not an integer. */
int64_t harness_ival(json_t *o, const char *k);

/* Integer field k of o; fails the test when it is absent, null or not an
 * integer. */
int64_t harness_ival_req(json_t *o, const char *k);

/* String field k of o, or "" when it is absent or not a string. The
 * string belongs to o. */
const char *harness_sval(json_t *o, const char *k);

/* Whether field k of o is null; fails the test when it is missing. */
int harness_is_null(json_t *o, const char *k);

/* The number at a dotted path in o ("server.waiting.max"; a plain key is a
 * path of one); fails the test when it is missing or not a number. */
double harness_num(json_t *o, const char *path);

/* Fail the test unless text contains each of the NULL-terminated needles
 * of has and none of those of lacks (either list may be NULL). what names
 * the text in the message (say "stdout" or "report.html"), which also
 * gives the needle and whether it was wanted; a NULL text fails too. */
void harness_text_check(const char *what, const char *text, const char *const *has,
                        const char *const *lacks);

/* harness_text_check of text (named as written) for each string given:
 * HARNESS_HAS(out, "E2E p99", "inputs/s"). */
#define HARNESS_HAS(text, ...)                                                                     \
    harness_text_check(#text, (text), (const char *const[]){__VA_ARGS__, NULL}, NULL)

/* The same, for strings text must not contain. */
#define HARNESS_LACKS(text, ...)                                                                   \
    harness_text_check(#text, (text), NULL, (const char *const[]){__VA_ARGS__, NULL})

/* The wall-clock instant ms from now (ms may be negative) as unix seconds
 * with nanoseconds, a --start-at value, into buf (len bytes). */
void harness_start_in(char *buf, size_t len, long ms);

/* The file dir/name, read whole (harness_read_file; caller frees); fails
 * the test when it cannot be read. */
char *harness_read_in(const char *dir, const char *name);

/* The element of rows (compare.json's rows of a candidate or a rate)
 * whose "row" is name; fails the test when there is none. Borrowed from
 * rows. */
json_t *harness_row_named(json_t *rows, const char *name);

/* The output tokens of a sweep step as the sweep counts them: the ok
 * records of recs (requests.jsonl as harness_jsonl_load gives it) of step
 * (a line of steps.jsonl: its "step", "warmup_ns" and "duration_ns") that
 * ended in its window [warmup_ns, duration_ns). */
double harness_step_window_tokens(json_t *recs, json_t *step);

/* This test's temporary directory (NULL outside harness_tmp_begin ..
 * harness_tmp_end). */
extern char *harness_cur_tmp;

/* Create harness_cur_tmp for the running test (harness_tmpdir). */
void harness_tmp_begin(void);

/* buf = <harness_cur_tmp>/name; fails the test when it does not fit len. */
void harness_tmp_path(char *buf, size_t len, const char *name);

/* buf = <harness_cur_tmp>/name, made, holding only a run.json whose
 * "command" is command (a results directory of that kind with nothing
 * else in it, for the refusals of whoever reads one). */
void harness_tmp_results_stub(char *buf, size_t len, const char *name, const char *command);

/* Start harness_cur_sim with extra_args (NULL-terminated, may be NULL)
 * and "--log <harness_cur_tmp>/sim.log" (harness_log_args); logp gets the
 * log's path. Fails the test when the sim does not start. */
void harness_logged_sim_start(char *logp, size_t len, const char *const *extra_args);

/* Make harness_cur_tmp when there is none, start harness_cur_sim with
 * extra_args (NULL-terminated, may be NULL; harness_cur_sim_start) and
 * set url to its "<url>/v1". */
void harness_sim_v1_start(char *url, size_t len, const char *const *extra_args);

/* Start harness_cur_sim with "--profile instant" (it answers at once: for
 * tests of what is sent, not of timing). */
void harness_instant_sim_start(void);

/* Two runs that did not offer the same work: start the instant sim
 * (harness_instant_sim_start), run the client (harness_run_client, exit 0
 * or 1) with "--rate 100 --requests 5 --no-metrics" and a, then with b,
 * stop the sim, and `llmload compare` the two (--quiet, 30 s timeout): it
 * must refuse them, exit 2 with needle on stderr. */
void harness_compare_refuses(const char *const *a, const char *const *b, const char *needle);

/* Remove harness_cur_tmp with everything in it and reset it to NULL; a
 * no-op when there is none. For teardowns. */
void harness_tmp_end(void);

/* SIGKILL *pid and reap it when it is > 0; *pid becomes 0. */
void harness_kill_reap(pid_t *pid);

/* Fork and exec LLMLOAD_BIN args... (NULL-terminated, at most
 * HARNESS_MAX_ARGS) with stdin from /dev/null, stdout into the file
 * out_path and stderr into err_path, or onto err_fd when err_fd >= 0. In
 * the child, prep(ud) runs first when prep is not NULL (to set a limit or
 * the environment); the child exits 126 when prep returns non-zero or a
 * file cannot be opened, 127 when the exec fails. Fails the test when
 * LLMLOAD_BIN is unset or fork fails. Returns the child's pid. */
#define HARNESS_MAX_ARGS 96
pid_t harness_spawn(const char *const *args, const char *out_path, const char *err_path,
                    int err_fd, int (*prep)(void *ud), void *ud);

/* A prep for harness_spawn: unset every launcher's rank and size
 * variable (Open MPI's, PMI's, Slurm's, a Kubernetes indexed job's), then
 * set each NAME=VALUE string of ud (a NULL-terminated char *[], which must
 * outlive the child's exec; NULL sets none). Returns 0, or -1 when putenv
 * fails. */
int harness_launcher_env(void *ud);

/* An argument vector built in pieces: v holds n arguments and a NULL. */
struct harness_argv {
    const char *v[HARNESS_MAX_ARGS + 1];
    size_t n;
};

/* Append the NULL-terminated args (may be NULL) to a; fails the test past
 * HARNESS_MAX_ARGS. */
void harness_argv_add(struct harness_argv *a, const char *const *args);

/* Append a sim's arguments to a: extra_args (NULL-terminated, may be
 * NULL), then "--log <harness_cur_tmp>/name", making harness_cur_tmp
 * first when there is none; logp gets the log's path. */
void harness_log_args(struct harness_argv *a, const char *const *extra_args, const char *name,
                      char *logp, size_t len);

/* For a cmocka teardown: harness_kill_reap each pid that pids (a
 * NULL-terminated list) points to, stop harness_cur_sim
 * (harness_sim_teardown) and remove harness_cur_tmp (harness_tmp_end). */
void harness_cleanup(pid_t *const *pids);

/* For a test's own server: send buf[0, len) on fd, resuming after EINTR,
 * without SIGPIPE. Adds the bytes written to *sent (when not NULL), also
 * when it fails. Returns 0, or -1 once the peer is gone. */
int harness_send_all(int fd, const void *buf, size_t len, size_t *sent);

/* A TCP port on 127.0.0.1 where nothing listens (bound, then closed). */
int harness_free_port(void);

/* A TCP socket (close-on-exec) bound to 127.0.0.1:0, listening with
 * backlog, or only bound when backlog is negative (connections to it are
 * refused). Fails the test on an error. Returns the socket; *port gets the
 * port it is bound to. */
int harness_bind_local(int backlog, int *port);

/* size bytes of zeroed memory shared with the children forked after this
 * (MAP_SHARED), for a test's own server to report to the test; fails the
 * test when it cannot. The caller unmaps it with munmap(p, size). */
void *harness_shared_map(size_t size);

/* Wait for pid at most timeout_ms, SIGKILL past it: its exit status, 128
 * + the signal that ended it, or -1 (waitpid failed). */
int harness_reap(pid_t pid, int timeout_ms);

/* Run argv (PATH lookup) with stdin, stdout and stderr on /dev/null: its
 * exit status, or -1 when it could not run, was killed or took over
 * timeout_s. */
int harness_run_quiet(const char *const *argv, int timeout_s);

/* 1 once a TCP connection to 127.0.0.1:port succeeds, 0 after timeout_ms. */
int harness_wait_listening(int port, int timeout_ms);

/* The body of a test's own server child: accept on lfd forever, each
 * connection (TCP_NODELAY) on a detached thread running thread_main with
 * make_arg(fd, ud), a malloc'd argument the thread frees (NULL: the
 * connection is closed). The child dies with the test process
 * (PDEATHSIG) and after alarm_s at most, so no server outlives a crashed
 * test. Never returns. */
void harness_serve_forever(int lfd, unsigned alarm_s, void *(*thread_main)(void *),
                           void *(*make_arg)(int fd, void *ud), void *ud);

/* Fork a child that runs harness_serve_forever(lfd, alarm_s, thread_main,
 * make_arg, ud), then close lfd here. ud is read in the child's copy of
 * memory, so it may point into the caller's stack. Returns the child's
 * pid, for the caller to kill and reap; fails the test when fork does. */
pid_t harness_serve_fork(int lfd, unsigned alarm_s, void *(*thread_main)(void *),
                         void *(*make_arg)(int fd, void *ud), void *ud);

/* A make_arg for harness_serve_forever when a connection's thread needs
 * only its fd: the fd in a malloc'd int (NULL when out of memory); ud is
 * unused. The thread takes it back with harness_fd_take. */
void *harness_fd_arg(int fd, void *ud);

/* The fd that harness_fd_arg put in arg; frees arg. */
int harness_fd_take(void *arg);

/* A TLS server for a test: a certificate made now, self-signed, for
 * common name cn and subjectAltName san ("IP:127.0.0.1", "DNS:name"), in
 * the test's temporary directory (cert gets its path, for --cacert), and
 * `openssl s_server -www` serving it on a free port of 127.0.0.1 (url
 * gets https://127.0.0.1:PORT/v1; *pid the server, for the caller to
 * kill, set as soon as it is forked). 0 once it listens; -1 with *why
 * when openssl is missing or fails, for the caller to skip. */
int harness_tls_server_start(const char *cn, const char *san, char *url, size_t url_len,
                             char *cert, size_t cert_len, pid_t *pid, const char **why);

/* harness_tls_server_start with `openssl s_server -WWW` in dir: a GET of
 * /NAME answers the file dir/NAME (HTTP/1.0, then the connection closes),
 * so a test can serve a /metrics page over TLS. */
int harness_tls_files_start(const char *cn, const char *san, const char *dir, char *url,
                            size_t url_len, char *cert, size_t cert_len, pid_t *pid,
                            const char **why);

/* For a test's own HTTP server: read one request (head, then its
 * Content-Length body) from fd into buf. Returns the head's length
 * (through the blank line) and *body_len; the body follows the head in
 * buf when it fits (*body_kept 1), else it is read and dropped. buf ends
 * with a NUL after what it holds. 0 when the peer closed, or sent a
 * chunked body or a bad length. */
size_t harness_read_request(int fd, char *buf, size_t cap, size_t *body_len, int *body_kept);

/* Sleep ms milliseconds (resumed after a signal). */
void harness_sleep_ms(unsigned ms);

/* Run a file's cmocka tests, or some of them: LLMLOAD_TEST_FILTER (globs
 * separated by commas) keeps only the tests whose names match one,
 * LLMLOAD_TEST_SKIP (the same) drops those that match one. This is how
 * tests/integration/run.sh splits the long files into jobs that run side
 * by side. A selection that leaves no test is an error (exit 1), so a
 * stale job list cannot pass by running nothing; so is an unset
 * LLMLOAD_BIN. */
struct CMUnitTest;
int harness_run_tests(const struct CMUnitTest *tests, size_t n);
/* A cmocka test entry for one HTTP client: runs fn with *state the client's
 * name, "native" or "curl" (a string literal), under the name
 * test_<name>_<client>, with teardown. */
#define HARNESS_CLIENT_TEST(name, fn, client, teardown) \
    { "test_" name "_" client, (fn), NULL, (teardown), (void *)(client) }
#define harness_run_group(tests) harness_run_tests((tests), sizeof(tests) / sizeof((tests)[0]))

/* main() of an integration test binary: harness_run_group over the cmocka
 * tests given, in order. */
#define HARNESS_MAIN(...)                                 \
    int main(void)                                        \
    {                                                     \
        const struct CMUnitTest tests[] = {__VA_ARGS__};  \
        return harness_run_group(tests);                  \
    }

/* ---- dupintb ---------------------------------------------------------- */

/* A make_arg for harness_serve_forever when a connection's thread needs
 * the server's settings as well as its fd: a malloc'd copy of the size
 * bytes at proto (the server's own struct, passed as ud), with the int at
 * fd_offset in it set to fd. NULL when out of memory; the thread frees it. */
void *harness_conn_copy(const void *proto, size_t size, size_t fd_offset, int fd);

/* ---- branch dupinta: a client stopped part-way, a TLS server or a skip ---- */

/* The client a test runs in the background (harness_run_interrupted), or
 * 0; harness_client_teardown kills and reaps it when an assertion failed
 * half-way. */
extern pid_t harness_cur_client;

/* cmocka teardown: harness_cleanup of harness_cur_client (it, the sim
 * and harness_cur_tmp). Returns 0. */
int harness_client_teardown(void **state);

/* Start the default sim (harness_sim_v1_start), spawn `llmload run --url
 * <sim>/v1 --out <tmp>/name --quiet args...` (args NULL-terminated) as
 * harness_cur_client, its stdout and stderr into <tmp>/name.out and
 * <tmp>/name.err, SIGINT it ms milliseconds after the sim first counts
 * prompt tokens (the run's first request, not the spawn), and fail the
 * test unless it exits 130 within 30 s. dir gets the results dir. */
void harness_run_interrupted(char *dir, size_t len, const char *name, const char *const *args,
                             unsigned ms);

/* harness_tls_server_start, skipping the test (saying why) when openssl
 * is missing or fails. */
void harness_tls_server_or_skip(const char *cn, const char *san, char *url, size_t url_len,
                                char *cert, size_t cert_len, pid_t *pid);

/* intb */

/* Run two shards of one load against url, one after the other: `llmload
 * run --url url --out <tmp>/<prefix>K --shard K/2 args...` (args
 * NULL-terminated) for K = 0 and 1, each exiting 0 or 1
 * (HARNESS_RC_OK_OR_INVALID); sd[K] gets shard K's results dir. Needs
 * harness_cur_tmp. */
void harness_two_shards_run(const char *url, const char *prefix, const char *const *args,
                            char sd[2][600]);

/* tidy */

/* The value of an unlabelled sample "name value" on a Prometheus
 * exposition page (a line "name value"); fails the test, showing the
 * page, when there is none. */
double harness_page_value(const char *page, const char *name);

/* The port of the line "llmload: serving /metrics on
 * http://127.0.0.1:PORT/metrics" (what `run --expose 127.0.0.1:0` says on
 * stderr) in the file at path, once there: waits up to 10 s, then fails
 * the test with the file's text. */
int harness_expose_announced_port(const char *path);

/* linger */

/* Wait up to timeout_ms for the file at path to hold needle (say a line a
 * background llmload writes on stderr), looking every 50 ms; fails the
 * test past it, showing the file's text. Returns the text (caller frees). */
char *harness_wait_text(const char *path, const char *needle, int timeout_ms);

#endif
