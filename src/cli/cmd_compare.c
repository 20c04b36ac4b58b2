/* cmd_compare.c: `llmload compare DIR DIR [DIR...]`: runs side by side,
 * each candidate against the baseline, with a 95% interval on every
 * difference and a verdict that says better, worse, or within noise; and
 * --fail-on thresholds as exit statuses. The statistics are the measure
 * layer's (measure/compare.c); this file reads the results directories,
 * checks that both sides ran the same workload, prints and writes
 * compare.json. docs/compare.md documents it. */
#include <getopt.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/badarg.h"
#include "cli/cmds.h"
#include "cli/cmp_int.h"
#include "measure/compare.h"
#include "measure/expect.h"
#include "measure/record.h"
#include "measure/results.h"
#include "report/compare_html.h"
#include "util/json.h"
#include "util/util.h"

#define MAX_THRESHOLDS 32
#define MAX_ALLOWED 32

/* The run.json config keys that define the workload: two runs that differ
 * in one did not offer the same work (docs/compare.md). */
static const char *const workload_keys[] = {
    "prompt_tokens", "output_tokens",  "lengths",     "dataset",    "ignore_eos",
    "workload_file", "classes",        "all_unique",  "prefix",     "cancel",
    "api",           "stream",         "prompt_ids",  "slo",        "cold_start",
    "trace",         "trace_requests", "calibration", "extra_body", "class_extra_body",
    "images",        "batch",
};

/* The run.json config keys that set the load: not checked (comparing two
 * rates is a use of the command), but a latency compared across two loads
 * measures the load as much as the server, so a difference is said. A
 * run's --requests cap is one: 2 requests in a 5 s window read as a
 * goodput of 0.4/s against 20/s. */
static const char *const load_keys[] = {
    "load_model", "rate_per_s", "arrival", "burstiness", "ramp_to_per_s", "max_concurrency",
    "on_cap",     "users",      "pace_ns", "think",      "warmup_ns",     "requests",
};

static void vec_push(struct vec *x, const struct record *r, double v)
{
    if (x->n == x->cap) {
        x->cap = x->cap ? 2 * x->cap : 1024;
        x->at = ll_realloc(x->at, x->cap * sizeof *x->at);
    }
    x->at[x->n++] = (struct lat_at){r->step, r->sched_ns, r->end_ns, v};
}

/* Scheduled order: by step, then sched_ns (then end_ns, so that the
 * order is fixed). */
static int at_cmp(const void *a, const void *b)
{
    const struct lat_at *x = a, *y = b;
    if (x->step != y->step)
        return (x->step > y->step) - (x->step < y->step);
    if (x->sched_ns != y->sched_ns)
        return (x->sched_ns > y->sched_ns) - (x->sched_ns < y->sched_ns);
    return (x->end_ns > y->end_ns) - (x->end_ns < y->end_ns);
}

static int dcmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void on_record_window(const struct record *r, struct side *s);

static void on_record(void *ud, const struct record *r)
{
    struct side *s = ud;
    on_record_window(r, s);
    if (r->warmup || r->cold || r->kind != REC_OK)
        return;
    uint64_t t = record_ttft_ns(r);
    if (t != LL_NO_TIME)
        vec_push(&s->lat[LAT_TTFT], r, (double)t);
    t = record_tpot_ns(r);
    if (t != LL_NO_TIME)
        vec_push(&s->lat[LAT_TPOT], r, (double)t);
    t = record_itl_req_ns(r);
    if (t != LL_NO_TIME)
        vec_push(&s->lat[LAT_ITL], r, (double)t);
    t = record_e2e_ns(r);
    if (t != LL_NO_TIME)
        vec_push(&s->lat[LAT_E2E], r, (double)t);
}

/* Throughput counts what ended inside the window, as summary.json does
 * (docs/metrics.md), warm-up or not. */
static void on_record_window(const struct record *r, struct side *s)
{
    if (r->kind != REC_OK || r->end_ns == LL_NO_TIME || r->end_ns < s->win_lo ||
        r->end_ns > s->win_hi)
        return;
    s->tok_sum += (double)r->output_tokens;
    s->tok_sq += (double)r->output_tokens * (double)r->output_tokens;
}

static double jnum(json_t *o, const char *a, const char *b)
{
    json_t *x = json_object_get(o, a);
    if (b)
        x = json_object_get(x, b);
    return json_is_number(x) ? json_number_value(x) : NAN;
}

/* The JSON file called name in s's directory, parsed; NULL with jansson's
 * reason in je. */
static json_t *side_file_json(const struct side *s, const char *name, json_error_t *je)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", s->dir, name);
    return ll_json_load_file(path, 0, je);
}

/* Read a results directory's run.json into s: 0, or -1 with the reason in
 * s->err. */
static int side_load(struct side *s)
{
    json_error_t je;
    if (!s->dir[0]) { /* "DIR/run.json" would be /run.json */
        snprintf(s->err, sizeof s->err, "a results directory is an empty path");
        return -1;
    }
    s->run = side_file_json(s, "run.json", &je);
    if (!s->run) {
        snprintf(s->err, sizeof s->err, "%s: not a results directory (run.json: %s)", s->dir,
                 je.text);
        return -1;
    }
    char why[300];
    if (results_run_schema_check(s->run, why, sizeof why) != 0) {
        snprintf(s->err, sizeof s->err, "%.700s: %s", s->dir, why);
        return -1;
    }
    const char *cmd = json_string_value(json_object_get(s->run, "command"));
    snprintf(s->kind, sizeof s->kind, "%s", cmd ? cmd : "?");
    const char *api = json_string_value(json_object_get(json_object_get(s->run, "config"), "api"));
    s->no_stream = api && strcmp(api, "openai-embeddings") == 0;
    return 0;
}

/* How the run ended: INVALID or interrupted, from run.json's outcome and
 * summary.json (either saying so is enough). */
static void side_outcome(struct side *s)
{
    json_t *o = json_object_get(s->run, "outcome"), *sum = s->summary;
    s->invalid = json_is_true(json_object_get(o, "invalid")) ||
                 json_is_true(json_object_get(sum, "invalid"));
    s->interrupted = json_is_true(json_object_get(o, "interrupted")) ||
                     json_is_true(json_object_get(sum, "interrupted"));
    s->invalid_reason = json_string_value(json_object_get(o, "invalid_reason"));
    if (!s->invalid_reason)
        s->invalid_reason = json_string_value(json_object_get(sum, "invalid_reason"));
    s->stopped_in = json_string_value(json_object_get(o, "stopped_in"));
}

const char *cmp_outcome_name(const struct side *s)
{
    if (s->invalid && s->interrupted)
        return "INVALID, interrupted";
    return s->invalid ? "INVALID" : s->interrupted ? "interrupted" : "ok";
}

/* A shard's place when s is one shard of a sharded run (run.json's config
 * "shard" of "shards" > 1) and not the directory llmload merge wrote:
 * *k and *n, returning 1; else 0. */
static int side_shard(const struct side *s, json_int_t *k, json_int_t *n)
{
    const json_t *cfg = json_object_get(s->run, "config");
    const json_t *jk = json_object_get(cfg, "shard"), *jn = json_object_get(cfg, "shards");
    if (json_object_get(s->run, "merged") || !json_is_integer(jk) || !json_is_integer(jn) ||
        json_integer_value(jn) < 2)
        return 0;
    *k = json_integer_value(jk);
    *n = json_integer_value(jn);
    return 1;
}

/* 1 when every one of the nd sides (nd >= 2) is shard k of n of a sharded
 * run, the same k and n for all, setting *k and *n; else 0. */
static int sides_same_shard(const struct side *sides, int nd, json_int_t *k, json_int_t *n)
{
    if (nd < 2 || !side_shard(&sides[0], k, n))
        return 0;
    for (int i = 1; i < nd; i++) {
        json_int_t ki, ni;
        if (!side_shard(&sides[i], &ki, &ni) || ki != *k || ni != *n)
            return 0;
    }
    return 1;
}

/* A side whose figures are not a fair measure says so on stderr, one line.
 * like_shards: every side is the same shard K/N, so this one's being a
 * shard is like for like and said once, by cmp_sides_warn. */
static void side_warn(const struct side *s, const char *role, int like_shards)
{
    json_int_t k, n;
    if (!like_shards && side_shard(s, &k, &n))
        ll_errorf("compare: warning: the %s %s (%s) is shard %lld of %lld of a sharded run: its "
                  "figures are that shard's share of the load alone; compare the directory "
                  "llmload merge writes from all its shards",
                  role, s->label, s->dir, (long long)k, (long long)n);
    if (s->invalid)
        ll_errorf("compare: warning: the %s %s (%s) was INVALID: %s; its figures are not a fair "
                  "measure",
                  role, s->label, s->dir,
                  s->invalid_reason ? s->invalid_reason : "no reason given");
    if (s->interrupted)
        ll_errorf("compare: warning: the %s %s (%s) was interrupted%s%s: it measured less than "
                  "it planned",
                  role, s->label, s->dir, s->stopped_in ? " in " : "",
                  s->stopped_in ? s->stopped_in : "");
}

static json_t *side_json(const struct side *s)
{
    json_t *o = json_object();
    json_object_set_new(o, "dir", json_string(s->dir));
    json_object_set_new(o, "label", json_string(s->label));
    json_object_set_new(o, "outcome", json_string(cmp_outcome_name(s)));
    json_object_set_new(o, "invalid", json_boolean(s->invalid));
    json_object_set_new(o, "invalid_reason",
                        s->invalid && s->invalid_reason ? json_string(s->invalid_reason)
                                                        : json_null());
    json_object_set_new(o, "interrupted", json_boolean(s->interrupted));
    json_int_t k, n;
    if (side_shard(s, &k, &n)) {
        char shard[48];
        snprintf(shard, sizeof shard, "%lld/%lld", (long long)k, (long long)n);
        json_object_set_new(o, "shard", json_string(shard));
    }
    return o;
}

/* Read the rest of a run's directory: summary.json and requests.jsonl. */
static int side_load_data(struct side *s)
{
    char path[4200];
    json_error_t je;
    s->summary = side_file_json(s, "summary.json", &je);
    if (!s->summary) {
        snprintf(s->err, sizeof s->err, "%s: no summary.json (%s): an unfinished run", s->dir,
                 je.text);
        return -1;
    }
    json_t *sum = s->summary;
    double w = jnum(sum, "window_ns", NULL), wu = jnum(sum, "warmup_ns", NULL);
    s->window_s = isfinite(w) ? w / 1e9 : 0;
    s->win_lo = isfinite(wu) && wu > 0 ? (uint64_t)wu : 0;
    s->win_hi = s->win_lo + (isfinite(w) && w > 0 ? (uint64_t)w : 0);
    snprintf(path, sizeof path, "%s/requests.jsonl", s->dir);
    /* An emptied requests.jsonl read as a run with no latencies at all:
     * every percentile row "n/a", exit 0, and nothing said why. */
    double sched = jnum(json_object_get(sum, "requests"), "scheduled", NULL);
    struct stat sb;
    if (isfinite(sched) && sched > 0 && stat(path, &sb) == 0 && S_ISREG(sb.st_mode) &&
        sb.st_size == 0) {
        snprintf(s->err, sizeof s->err,
                 "%.900s: empty, but summary.json counts %.0f scheduled requests: no records to "
                 "compare",
                 path, sched);
        return -1;
    }
    char err[600];
    if (record_read_file(path, 0, on_record, s, err, sizeof err) != 0) {
        snprintf(s->err, sizeof s->err, "%s", err);
        return -1;
    }
    cmp_side_finish(s);
    s->completed = (uint64_t)fmax(0, jnum(json_object_get(sum, "requests"), "completed", NULL));
    s->failed = (uint64_t)fmax(0, jnum(json_object_get(sum, "requests"), "failed", NULL));
    s->scheduled = (uint64_t)fmax(0, jnum(json_object_get(sum, "requests"), "scheduled", NULL));
    json_t *bk = json_object_get(json_object_get(sum, "requests"), "by_kind");
    for (int k = 0; k < REC_KIND_COUNT; k++) {
        double v = jnum(bk, rec_kind_name((enum rec_kind)k), NULL);
        s->by_kind[k] = isfinite(v) && v > 0 ? (uint64_t)v : 0;
    }
    s->goodput = jnum(sum, "throughput", "goodput_per_s");
    s->attainment = jnum(sum, "throughput", "attainment");
    s->tok_s = jnum(sum, "throughput", "output_tokens_per_s");
    s->send_rate = jnum(sum, "throughput", "send_rate_per_s");
    s->has_slo = isfinite(s->goodput);
    /* The counts behind the rates: each rate is a count in the window over it. */
    if (s->has_slo)
        s->good = (uint64_t)llround(s->goodput * s->window_s);
    /* Attainment is over the requests the SLO judged (a client's
     * cancellation before a miss is not; absent in older summaries: 0). */
    double unjudged = jnum(sum, "throughput", "slo_unjudged");
    s->slo_judged =
        s->scheduled -
        (isfinite(unjudged) && unjudged > 0 ? LL_MIN((uint64_t)unjudged, s->scheduled) : 0);
    if (isfinite(s->attainment))
        s->attained = (uint64_t)llround(s->attainment * (double)s->slo_judged);
    if (isfinite(s->send_rate))
        s->sent = (uint64_t)llround(s->send_rate * s->window_s);
    /* The window's arrivals, --cold-start's included, as the sends are:
     * requests.scheduled leaves the cold ones out (docs/metrics.md). */
    double sched_rate = jnum(sum, "throughput", "scheduled_rate_per_s");
    s->win_scheduled = isfinite(sched_rate) && sched_rate > 0
                           ? (uint64_t)llround(sched_rate * s->window_s)
                           : s->scheduled;
    s->sent_scheduled = s->win_scheduled;
    double done_rate = jnum(sum, "throughput", "completion_rate_per_s");
    double drop_rate = jnum(sum, "throughput", "dropped_rate_per_s");
    /* Older summaries have no completion rate: kept up, as compare took
     * every side before. */
    s->served = isfinite(done_rate)
                    ? (uint64_t)llround(fmax(0, done_rate - (isfinite(drop_rate) ? drop_rate : 0)) *
                                        s->window_s)
                    : s->win_scheduled;
    if (!(s->window_s > 0)) {
        snprintf(s->err, sizeof s->err, "%s: summary.json has no measurement window", s->dir);
        return -1;
    }
    side_outcome(s);
    return 0;
}

static void side_free(struct side *s)
{
    json_decref(s->run);
    json_decref(s->summary);
    for (int i = 0; i < LAT_N; i++) {
        free(s->lat[i].v);
        free(s->lat[i].t);
        free(s->lat[i].at);
    }
}

/* ---- the workload check ------------------------------------------------ */

static json_t *cfg_get(json_t *run, const char *k)
{
    json_t *v = json_object_get(json_object_get(run, "config"), k);
    return v ? v : json_null();
}

static int allowed(const char *k, char *const *allow, size_t n_allow)
{
    for (size_t i = 0; i < n_allow; i++) {
        if (strcmp(allow[i], k) == 0)
            return 1;
    }
    return 0;
}

/* The keys of b's and c's run.json config, of the nk named, whose values
 * differ: [{key, baseline, candidate}]. Caller owns it. */
static json_t *keys_diffs(const struct side *b, const struct side *c, const char *const *keys,
                          size_t nk)
{
    json_t *a = json_array();
    for (size_t i = 0; i < nk; i++) {
        json_t *x = cfg_get(b->run, keys[i]), *y = cfg_get(c->run, keys[i]);
        if (json_equal(x, y))
            continue;
        json_t *o = json_object();
        json_object_set_new(o, "key", json_string(keys[i]));
        json_object_set(o, "baseline", x);
        json_object_set(o, "candidate", y);
        json_array_append_new(a, o);
    }
    return a;
}

/* The workload keys where b and c differ, as a JSON array of
 * {key, baseline, candidate}. */
static json_t *config_diffs(const struct side *b, const struct side *c)
{
    return keys_diffs(b, c, workload_keys, LL_ARRAY_LEN(workload_keys));
}

static char *compact(json_t *v)
{
    /* For the terminal: ASCII, so a C1 control in a tag or a model id
     * (U+009B is CSI) is written \u009b like a C0 one. */
    return json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY | JSON_SORT_KEYS | JSON_ENSURE_ASCII);
}

/* ---- the command ------------------------------------------------------- */

static void compare_usage(FILE *f)
{
    fprintf(f, "usage: llmload compare DIR DIR [DIR...] [options]\n"
               "\n"
               "Compare the results directories of runs (llmload run, or replay) or of\n"
               "sweeps, one kind at a time: each candidate against the baseline, one row\n"
               "per metric (TTFT, TPOT, ITL per request and E2E at p50/p90/p99, goodput,\n"
               "attainment, error rate and each error kind's, output tok/s, achieved\n"
               "rate), the difference with its 95%% interval, and a verdict: better,\n"
               "worse or same.\n"
               "Percentile intervals come from a block bootstrap over the raw records\n"
               "(runs of requests in schedule order, which shared the server's batches,\n"
               "kept together; a fixed seed; a percentile with too few values to bound\n"
               "it is never called),\n"
               "rates from Poisson intervals (two open loops: the achieved rate per\n"
               "scheduled request, goodput and output tok/s with an interval that spans\n"
               "per second and per scheduled request, so one schedule drawing more\n"
               "arrivals is not the server's doing), shares from Newcombe's\n"
               "(docs/compare.md).\n"
               "Runs that did not offer the same workload (token lengths, API, classes,\n"
               "prefixes, stream mode, SLO) are refused unless --allow-different names\n"
               "each differing key; runs of another load (rate, arrival, users) are\n"
               "compared with a note line that names it. A side that was INVALID or\n"
               "interrupted is compared, with a warning line that names it. Sweeps:\n"
               "the SLO capacity and the knee of each, bracketed by the offered rates\n"
               "around them and called only when the brackets do not overlap; the\n"
               "curves of TTFT p99, TPOT p99, goodput\n"
               "and attainment against offered load; and the rows above at each offered\n"
               "rate both sweeps ran; where a sweep repeated a rate (--repeat), the\n"
               "between-run interval of its runs is used when wider (the table's from\n"
               "column). Writes compare.json and compare.html. Nothing is sent anywhere.\n"
               "\n"
               "options:\n"
               "  --baseline DIR            the baseline (default: the first DIR); may be one of\n"
               "                            the DIRs or another\n"
               "  --label NAME              a name for each DIR, repeatable, in order, baseline\n"
               "                            first (default: the directory names)\n"
               "  --bootstrap N             bootstrap resamples, 100 to 100000 (default 2000)\n"
               "  --min-effect PCT          a relative difference under PCT is never called\n"
               "                            better or worse, whatever its interval: whole runs\n"
               "                            move by a few percent on a shared machine\n"
               "                            (default 5%%; 0%% turns it off)\n"
               "  --allow-different KEYS    compare although these run.json config keys differ\n"
               "                            (comma-separated, e.g. output_tokens,slo)\n"
               "  --fail-on SPEC            thresholds, e.g. 'ttft_p99:+10%%,goodput:-5%%,\n"
               "                            error_rate:+0.5pp': exit 1 when a candidate is worse\n"
               "                            past one, outside noise; 5 when the interval reaches\n"
               "                            past it (inconclusive). Rows: ttft_, tpot_, itl_,\n"
               "                            e2e_ with p50, p90 or p99 (in %%); goodput,\n"
               "                            output_tokens_per_s, achieved_rate (in %%);\n"
               "                            attainment, error_rate, error_rate_KIND (a record\n"
               "                            kind: error_rate_http_5xx, ...; in pp). Sweeps: at\n"
               "                            every offered rate both ran; and capacity, knee (in\n"
               "                            %%, once: their brackets' extremes are the interval)\n"
               "  --out DIR                 where compare.json and compare.html go (default:\n"
               "                            results/<YYYYmmdd-HHMMSS>)\n"
               "  --force                   write into a DIR that already holds files\n"
               "  --quiet                   no table on stdout\n"
               "  --help                    this text\n"
               "\n"
               "Exit status: 0 ok, 1 a --fail-on threshold failed, 2 bad arguments, unreadable\n"
               "or mismatched directories, a --out DIR that holds files without --force,\n"
               "3 cannot write, 5 inconclusive (a --fail-on row's interval reaches past its\n"
               "threshold).\n");
}

static const char *dir_label(const char *dir)
{
    size_t n = strlen(dir);
    while (n > 1 && dir[n - 1] == '/')
        n--;
    char *d = ll_strndup(dir, n);
    const char *s = strrchr(d, '/');
    return s && s[1] ? s + 1 : d; /* leaked on purpose: lives as long as the command */
}

/* What the flags asked for. */
struct cmp_args {
    const char *baseline, *out, *fail_on;
    const char *labels[MAX_SIDES];
    size_t n_labels;
    char *allow[MAX_ALLOWED];
    size_t n_allow;
    unsigned resamples;
    double min_effect;
    int force, quiet;
    struct cmp_threshold th[MAX_THRESHOLDS]; /* --fail-on */
    size_t n_th;
    int kind_wanted[REC_KIND_COUNT]; /* error kinds --fail-on names: rows even when absent */
};

/* --allow-different KEY,...: the keys are cut out of argv's own string
 * (nothing to free). */
static void allow_flag(char *v, struct cmp_args *a)
{
    char *save = NULL;
    for (char *t = strtok_r(v, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (a->n_allow >= MAX_ALLOWED)
            ll_usage_fail("--allow-different: more than %d keys", MAX_ALLOWED);
        int ok = 0;
        for (size_t i = 0; i < LL_ARRAY_LEN(workload_keys); i++)
            ok |= strcmp(workload_keys[i], t) == 0;
        if (!ok)
            ll_usage_fail("--allow-different: \"%s\" is not a workload key (see "
                          "docs/compare.md)",
                          t);
        a->allow[a->n_allow++] = t;
    }
    if (a->n_allow == 0)
        ll_usage_fail("--allow-different: empty");
}

/* --fail-on SPEC into a->th, each row checked against the table's. */
static void fail_on_flag(const char *v, struct cmp_args *a)
{
    char err[256];
    if (cmp_thresholds_parse(v, a->th, MAX_THRESHOLDS, &a->n_th, err, sizeof err) != 0)
        ll_usage_fail("%s", err);
    for (size_t i = 0; i < a->n_th; i++) {
        const struct cmp_threshold *t = &a->th[i];
        if (!cmp_known_row(t->row))
            ll_usage_fail("--fail-on: no row \"%s\" (see llmload compare --help)", t->row);
        if (expect_error_kind(t->row) >= 0)
            a->kind_wanted[expect_error_kind(t->row)] = 1;
        if (t->pp != cmp_is_share_row(t->row))
            ll_usage_fail("--fail-on: %s takes %s", t->row,
                          cmp_is_share_row(t->row) ? "percentage points (pp)" : "percent (%)");
        if (!t->pp && fabs(t->amount) < a->min_effect) /* the table's "same (under ...)" */
            fprintf(stderr,
                    "llmload: compare: note: --fail-on %s:%+.4g%% is under --min-effect %.4g%%: "
                    "a change between them fails the gate where the table reads it same\n",
                    t->row, 100 * t->amount, 100 * a->min_effect);
    }
}

/* The flags into *a (a bad one ends the process with status 2); 1 when
 * --help was printed. */
static int compare_flags(int argc, char **argv, struct cmp_args *a)
{
    enum { O_BASE = 256, O_LABEL, O_BOOT, O_MIN, O_ALLOW, O_FAIL, O_OUT, O_FORCE, O_QUIET };
    static const struct option opts[] = {
        {"help", no_argument, NULL, 'h'},
        {"baseline", required_argument, NULL, O_BASE},
        {"label", required_argument, NULL, O_LABEL},
        {"bootstrap", required_argument, NULL, O_BOOT},
        {"min-effect", required_argument, NULL, O_MIN},
        {"allow-different", required_argument, NULL, O_ALLOW},
        {"fail-on", required_argument, NULL, O_FAIL},
        {"out", required_argument, NULL, O_OUT},
        {"force", no_argument, NULL, O_FORCE},
        {"quiet", no_argument, NULL, O_QUIET},
        {NULL, 0, NULL, 0},
    };
    a->resamples = 2000;
    a->min_effect = 0.05;
    optind = 1;
    opterr = 0;
    int ch;
    while ((ch = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        switch (ch) {
        case 'h': compare_usage(stdout); return 1;
        case O_BASE: a->baseline = optarg; break;
        case O_LABEL:
            if (a->n_labels >= MAX_SIDES)
                ll_usage_fail("--label: more than %d", MAX_SIDES);
            if (!*optarg)
                ll_usage_fail("--label: empty");
            for (size_t i = 0; i < a->n_labels; i++) /* two columns of one name */
                if (strcmp(a->labels[i], optarg) == 0)
                    ll_usage_fail("--label: \"%s\" given twice (each names one directory)", optarg);
            a->labels[a->n_labels++] = optarg;
            break;
        case O_BOOT: {
            uint64_t v;
            if (ll_parse_u64(optarg, &v) != 0 || v < 100 || v > 100000)
                ll_usage_fail("--bootstrap: \"%s\" is not a count from 100 to 100000", optarg);
            a->resamples = (unsigned)v;
            break;
        }
        case O_MIN: {
            double v;
            size_t l = strlen(optarg);
            char buf[64];
            if (l == 0 || l >= sizeof buf || optarg[l - 1] != '%')
                ll_usage_fail("--min-effect: \"%s\" is not a percentage such as 5%%", optarg);
            memcpy(buf, optarg, l - 1);
            buf[l - 1] = '\0';
            if (ll_parse_double(buf, &v) != 0 || v < 0 || v >= 100)
                ll_usage_fail("--min-effect: \"%s\" is not a percentage from 0%% to under 100%%",
                              optarg);
            a->min_effect = v / 100.0;
            break;
        }
        case O_ALLOW: allow_flag(optarg, a); break;
        case O_FAIL: a->fail_on = optarg; break;
        case O_OUT: a->out = optarg; break;
        case O_FORCE: a->force = 1; break;
        case O_QUIET: a->quiet = 1; break;
        default: badarg_getopt_fail("compare", argv, optind, ch, optopt, opts);
        }
    }
    if (a->fail_on)
        fail_on_flag(a->fail_on, a);
    return 0;
}

/* The directories after the flags, the baseline first, into sides[] with
 * their labels, each read and of one kind (run, replay or sweep). Returns
 * how many. */
static int sides_load(int argc, char **argv, const struct cmp_args *a, struct side *sides)
{
    const char *dirs[MAX_SIDES];
    int nd = 0;
    if (a->baseline)
        dirs[nd++] = a->baseline;
    for (int i = optind; i < argc; i++) {
        if (a->baseline && strcmp(argv[i], a->baseline) == 0)
            continue;
        if (nd >= MAX_SIDES)
            ll_usage_fail("compare: more than %d directories", MAX_SIDES);
        dirs[nd++] = argv[i];
    }
    if (argc - optind < 1 || nd < 2)
        ll_usage_fail("compare: expected two results directories or more (see llmload compare "
                      "--help)");
    if (a->n_labels && a->n_labels != (size_t)nd)
        ll_usage_fail("--label: %zu given for %d directories (one each, baseline first)",
                      a->n_labels, nd);
    for (int i = 0; i < nd; i++) {
        struct side *s = &sides[i];
        s->dir = dirs[i];
        s->label = a->n_labels ? a->labels[i] : dir_label(dirs[i]);
        if (side_load(s) != 0)
            ll_usage_fail("compare: %s", s->err);
    }
    for (int i = 0; i < nd; i++) {
        if (strcmp(sides[i].kind, "run") != 0 && strcmp(sides[i].kind, "replay") != 0 &&
            strcmp(sides[i].kind, "sweep") != 0)
            ll_usage_fail("compare: %s: run.json's command \"%s\" is not run, replay or sweep",
                          sides[i].dir, sides[i].kind);
        if (strcmp(sides[i].kind, sides[0].kind) != 0)
            ll_usage_fail("compare: mixed kinds: %s is a %s, %s a %s (compare runs with runs, "
                          "replays with replays, sweeps with sweeps)",
                          sides[0].dir, sides[0].kind, sides[i].dir, sides[i].kind);
    }
    for (size_t t = 0; t < a->n_th; t++) {
        if (strcmp(sides[0].kind, "sweep") != 0 && cmp_sweep_row(a->th[t].row))
            ll_usage_fail("--fail-on: %s is a row of sweeps (their SLO capacity and knee); %s is "
                          "a %s",
                          a->th[t].row, sides[0].dir, sides[0].kind);
    }
    if (strcmp(sides[0].kind, "sweep") == 0) {
        cmp_sweeps_load(sides, nd);
        for (int i = 0; i < nd; i++)
            side_outcome(&sides[i]); /* run.json's word: a sweep has no run summary */
        return nd;
    }
    for (int i = 0; i < nd; i++) {
        if (side_load_data(&sides[i]) != 0)
            ll_usage_fail("compare: %s", sides[i].err);
    }
    return nd;
}

/* The workload check, before anything is written: diffs[i] gets each
 * candidate's config differences from the baseline; one not in
 * --allow-different ends the process with status 2, naming them all. */
static void workload_check(const struct side *sides, int nd, const struct cmp_args *a,
                           json_t **diffs)
{
    for (int i = 1; i < nd; i++) {
        diffs[i] = config_diffs(&sides[0], &sides[i]);
        char list[1024] = "";
        size_t used = 0;
        size_t k;
        json_t *o;
        json_array_foreach(diffs[i], k, o)
        {
            const char *key = json_string_value(json_object_get(o, "key"));
            if (allowed(key, a->allow, a->n_allow))
                continue;
            char *x = compact(json_object_get(o, "baseline"));
            char *y = compact(json_object_get(o, "candidate"));
            int w = snprintf(list + used, sizeof list - used, "%s%s (%s vs %s)", used ? ", " : "",
                             key, x ? x : "?", y ? y : "?");
            free(x);
            free(y);
            if (w > 0 && (size_t)w < sizeof list - used)
                used += (size_t)w;
        }
        if (used)
            ll_usage_fail("compare: %s and %s did not run the same workload: %s; "
                          "--allow-different KEY,... to compare anyway",
                          sides[0].dir, sides[i].dir, list);
    }
}

/* The two sides' tags when they differ ({"baseline", "candidate"}), else
 * null. Caller owns it. */
static json_t *tags_differ(const struct side *b, const struct side *c)
{
    json_t *tb = json_object_get(b->run, "tags"), *tc = json_object_get(c->run, "tags");
    if (json_equal(tb ? tb : json_null(), tc ? tc : json_null()))
        return json_null();
    json_t *tags = json_object();
    json_object_set(tags, "baseline", tb ? tb : json_null());
    json_object_set(tags, "candidate", tc ? tc : json_null());
    return tags;
}

/* Below the table: the config differences --allow-different let through,
 * and the tags when they differ. */
static void print_differences(json_t *diffs, json_t *tags)
{
    size_t k;
    json_t *o;
    json_array_foreach(diffs, k, o)
    {
        char *x = compact(json_object_get(o, "baseline"));
        char *y = compact(json_object_get(o, "candidate"));
        printf("config differs (allowed): %s: %s vs %s\n",
               json_string_value(json_object_get(o, "key")), x, y);
        free(x);
        free(y);
    }
    if (!json_is_null(tags)) {
        char *x = compact(json_object_get(tags, "baseline"));
        char *y = compact(json_object_get(tags, "candidate"));
        printf("tags: %s vs %s\n", x, y);
        free(x);
        free(y);
    }
}

/* One stderr line when b and c offered different loads (load_keys):
 * "note: b and c ran different loads: rate_per_s 20 vs 10; ...". The
 * differences, as compare.json's load_differences, are returned (caller
 * owns them). */
static json_t *load_note(const struct side *b, const struct side *c)
{
    json_t *d = keys_diffs(b, c, load_keys, LL_ARRAY_LEN(load_keys));
    if (json_array_size(d) == 0)
        return d;
    char list[512] = "";
    size_t used = 0, k;
    json_t *o;
    json_array_foreach(d, k, o)
    {
        char *x = compact(json_object_get(o, "baseline"));
        char *y = compact(json_object_get(o, "candidate"));
        int w = snprintf(list + used, sizeof list - used, "%s%s %s vs %s", used ? ", " : "",
                         json_string_value(json_object_get(o, "key")), x ? x : "?", y ? y : "?");
        free(x);
        free(y);
        if (w > 0 && (size_t)w < sizeof list - used)
            used += (size_t)w;
    }
    fprintf(stderr,
            "llmload: compare: note: %s and %s ran different loads (%s): their latencies "
            "differ by the load as well as by the server\n",
            b->label, c->label, list);
    return d;
}

int cmp_finish(json_t *doc, json_t *cands, int fail, int inconclusive, int quiet,
               const char *outdir)
{
    int status = fail ? LL_EXIT_FAIL : inconclusive ? CMP_EXIT_INCONCLUSIVE : LL_EXIT_OK;
    json_object_set_new(doc, "candidates", cands);
    json_object_set_new(doc, "exit_status", json_integer(status));
    char err[512];
    if (results_write_json_atomic(outdir, "compare.json", doc, err, sizeof err) != 0 ||
        compare_html_write(outdir, doc, err, sizeof err) != 0) {
        ll_errorf("compare: %s", err);
        if (status == LL_EXIT_OK || status > LL_EXIT_RUNTIME)
            status = LL_EXIT_RUNTIME; /* the lowest non-zero status wins */
    } else if (!quiet) {
        printf("\nresults: %s/compare.json, %s/compare.html\n", outdir, outdir);
    }
    json_decref(doc);
    return status;
}

/* compare of runs (or replays): each candidate's rows against the
 * baseline, printed unless quiet, with compare.json and compare.html in
 * outdir. Returns the exit status. */
static int compare_runs(const struct side *sides, int nd, const struct cmp_opts *o,
                        const char *outdir)
{
    struct row *rows = ll_calloc((size_t)cmp_rows_max(), sizeof *rows);
    json_t *doc = json_object();
    json_object_set_new(doc, "schema", json_string("llmload.compare/1"));
    json_object_set_new(doc, "version", json_string(LL_VERSION));
    json_object_set_new(doc, "kind", json_string(sides[0].kind));
    json_object_set_new(doc, "bootstrap", json_integer(o->resamples));
    json_object_set_new(doc, "confidence", json_real(0.95));
    json_object_set_new(doc, "min_effect", json_real(o->min_effect));
    json_object_set_new(doc, "baseline", side_json(&sides[0]));
    cmp_sides_warn(sides, nd);
    json_t *cands = json_array();
    int fail = 0, inconclusive = 0;
    for (int i = 1; i < nd; i++) {
        const struct side *b = &sides[0], *c = &sides[i];
        int n = cmp_build_rows(b, c, o->resamples, 0x636f6d70617265ULL, o->min_effect,
                               o->kind_wanted, rows);
        if (n < 0) {
            ll_errorf("compare: out of memory");
            return LL_EXIT_RUNTIME;
        }
        json_t *jc = side_json(c);
        json_object_set(jc, "config_differences", o->diffs[i]);
        json_object_set_new(jc, "load_differences", load_note(b, c));
        int per_sched = cmp_per_scheduled(b, c);
        json_object_set_new(jc, "rates_per_scheduled", json_boolean(per_sched));
        if (per_sched && b->win_scheduled != c->win_scheduled)
            fprintf(stderr,
                    "llmload: compare: note: open loops: the achieved rate is judged per scheduled "
                    "request, goodput and output tok/s per second within an interval that spans "
                    "both (%s scheduled %llu, %s %llu%s: the client's arrivals, not the server's "
                    "doing)\n",
                    b->label, (unsigned long long)b->win_scheduled, c->label,
                    (unsigned long long)c->win_scheduled,
                    b->win_scheduled != b->scheduled || c->win_scheduled != c->scheduled
                        ? " in the window, --cold-start's included"
                        : "");
        json_t *tags = tags_differ(b, c);
        json_object_set_new(jc, "tags_differ", tags);
        json_t *jr = json_array();
        for (int r = 0; r < n; r++)
            json_array_append_new(jr, cmp_row_json(&rows[r]));
        json_object_set_new(jc, "rows", jr);
        if (!o->quiet) {
            cmp_print_table(stdout, b, c, rows, n, o->resamples);
            print_differences(o->diffs[i], tags);
        }
        json_object_set_new(jc, "fail_on", cmp_gates(o, c, NAN, rows, n, &fail, &inconclusive));
        json_array_append_new(cands, jc);
    }
    free(rows);
    return cmp_finish(doc, cands, fail, inconclusive, o->quiet, outdir);
}

/* A --fail-on row that an embeddings comparison has not (no first token,
 * no output: cmp_build_rows leaves those rows out) is a usage error,
 * rather than a gate that could never judge. */
static void stream_gates_check(const struct side *sides, const struct cmp_args *a)
{
    if (!sides[0].no_stream)
        return;
    static const char *const pre[] = {"ttft_", "tpot_", "itl_", "output_tokens_per_s"};
    for (size_t t = 0; t < a->n_th; t++)
        for (size_t k = 0; k < sizeof pre / sizeof pre[0]; k++)
            if (strncmp(a->th[t].row, pre[k], strlen(pre[k])) == 0)
                ll_usage_fail("compare: --fail-on: %s: openai-embeddings runs have no first "
                              "token and no output (their latency is e2e_p*)",
                              a->th[t].row);
}

int compare_main(int argc, char **argv)
{
    static struct cmp_args a;
    static struct side sides[MAX_SIDES];
    memset(&a, 0, sizeof a);
    if (compare_flags(argc, argv, &a))
        return LL_EXIT_OK;
    int nd = sides_load(argc, argv, &a, sides);
    json_t *diffs[MAX_SIDES] = {0};
    workload_check(sides, nd, &a, diffs);
    stream_gates_check(sides, &a);

    char outdir[4096], err[512];
    int status;
    if (results_dir_prepare(a.out, a.force, outdir, sizeof outdir, err, sizeof err) != 0) {
        ll_errorf("compare: --out: %s", err);
        status =
            LL_EXIT_USAGE; /* as run's --out: a directory that holds files, or cannot be made */
    } else {
        struct cmp_opts o = {a.resamples, a.min_effect, a.quiet, a.kind_wanted,
                             diffs,       a.th,         a.n_th};
        status = strcmp(sides[0].kind, "sweep") == 0 ? cmp_sweeps(sides, nd, &o, outdir)
                                                     : compare_runs(sides, nd, &o, outdir);
    }
    for (int i = 0; i < nd; i++) {
        json_decref(diffs[i]);
        side_free(&sides[i]);
    }
    return status;
}

/* ---- shared with cmp_sweep.c (cmp_int.h) ------------------------------- */

void cmp_side_add_record(void *ud, const struct record *r)
{
    on_record(ud, r);
}

/* 1 + how many other requests a request overlapped in flight, on
 * average, rounded: from the E2E values' requests (ok, out of the
 * warm-up), in scheduled order, each pair of one step whose spans
 * [sched, end] overlap. Those requests shared the server's batches. */
static size_t side_overlap(const struct vec *e2e)
{
    if (e2e->n == 0)
        return 1;
    double pairs = 0;
    for (size_t i = 0; i < e2e->n; i++) {
        const struct lat_at *a = &e2e->at[i];
        for (size_t j = i + 1; j < e2e->n; j++) {
            const struct lat_at *b = &e2e->at[j];
            if (b->step != a->step || b->sched_ns >= a->end_ns)
                break;
            pairs++;
        }
    }
    return 1 + (size_t)llround(2 * pairs / (double)e2e->n);
}

static const double block_pcts[NPCT] = {50, 90, 99};

void cmp_side_finish(struct side *s)
{
    if (s->lat[0].t)
        return; /* finished already: the values are out of at */
    for (int i = 0; i < LAT_N; i++) {
        struct vec *x = &s->lat[i];
        if (x->n)
            qsort(x->at, x->n, sizeof *x->at, at_cmp);
    }
    s->overlap = side_overlap(&s->lat[LAT_E2E]);
    for (int i = 0; i < LAT_N; i++) {
        struct vec *x = &s->lat[i];
        x->v = ll_realloc(x->v, (x->n + 1) * sizeof *x->v);
        x->t = ll_realloc(x->t, (x->n + 1) * sizeof *x->t);
        for (size_t k = 0; k < x->n; k++)
            x->t[k] = x->v[k] = x->at[k].v;
        if (x->n)
            qsort(x->v, x->n, sizeof(double), dcmp);
        /* A decode time is tied to its neighbours' for about two
         * lifetimes (the batches a request's overlaps left behind were
         * shared by the next ones): the floor is two overlaps, and 1
         * where no request overlapped another (docs/compare.md, "How
         * each interval is computed"). */
        size_t floor_len = s->overlap > 1 ? 2 * s->overlap : 1;
        s->block[i] = cmp_pct_block_length(x->t, x->n, block_pcts, NPCT, floor_len);
        free(x->at);
        x->at = NULL;
        x->cap = 0;
    }
}

void cmp_side_free(struct side *s)
{
    side_free(s);
}

json_t *cmp_side_json(const struct side *s)
{
    return side_json(s);
}

void cmp_sides_warn(const struct side *sides, int nd)
{
    json_int_t k, n;
    int like = sides_same_shard(sides, nd, &k, &n);
    /* Shard K/N of one run against shard K/N of another offered the same
     * share of the same schedule: the figures compare like for like, and
     * a warning per side (as for a shard against a whole run) misled. */
    if (like)
        ll_errorf("compare: note: every side is shard %lld of %lld of a sharded run: like for "
                  "like shares of the load, each side's figures that shard's share alone",
                  (long long)k, (long long)n);
    for (int i = 0; i < nd; i++)
        side_warn(&sides[i], i ? "candidate" : "baseline", like);
}
