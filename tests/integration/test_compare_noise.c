/* Integration test of `llmload compare`'s false-alarm rate against
 * `llmload sim` on 127.0.0.1: 40 pairs of runs of one configuration with
 * different seeds (Poisson arrivals), each pair compared; no row may be
 * called better or worse in more pairs than its 95% interval allows.
 *
 * The arithmetic. Pairs are independent (their own seeds, their own runs),
 * so for one row the number of the 40 pairs that call it different is
 * Binomial(40, q), q its false-alarm rate: at most 5% for a 95% interval,
 * less with --min-effect 5% (default). P(Bin(40, 0.05) >= 10) = 2.1e-5.
 * Rows are correlated (goodput, tok/s and achieved rate are one count;
 * p50 and p90 share their requests), so their counts are not added: the
 * test fails when a row is called in 10 pairs or more, and by the union
 * bound, which needs no independence between rows, that happens by chance
 * with probability at most K x 2.1e-5 < 1/1000 for any K < 48 rows. An
 * interval too narrow breaks it: with the bootstrap's interval halved
 * around its estimate (a 95% interval made about a 67% one), TTFT p90 was
 * called in 18 of 40 pairs (and TTFT p50 in 8).
 *
 * TPOT, ITL and E2E: requests in flight together share the server's
 * batches, and the run's own arrivals set how full those are, so their
 * decode times are correlated. The bootstrap of single requests took them
 * as independent: on this 2-core VM their p90 rows were called in 4 to 9
 * of 40 pairs (10-22%), and the differences spread 1.8 (p50) to 2.4 (p90)
 * times the standard error the intervals claimed. The block bootstrap
 * (docs/compare.md, "How each interval is computed") keeps consecutive
 * requests together, and widens an interval made of few blocks (Student's
 * t, and the variance extrapolated from blocks of L and 2L): every row
 * is held to MAX_CALLED. The test prints that ratio for every row (about
 * 1 is an honest interval, well under 1 a conservative one) and fails
 * when a percentile row's is past MAX_SPREAD: a sharper test than the
 * count of false alarms, which the 5% --min-effect floor holds down.
 *
 * Each pair's two runs go at the same moment to two sims (the box's load
 * then weighs on both), four pairs at a time on eight sims: 40 pairs of
 * 2 s runs take about 30 s. The count of rows called different is
 * printed. */
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "test.h"

#define PAIRS 40
#define AT_ONCE 4 /* pairs run at the same time */
/* Pairs in which one row may be called different. The TPOT, ITL and E2E
 * p90 rows were held to 12 before the widening of few blocks (called in
 * 1 to 5 of 40, about 9%); now they are held to this like every row. */
#define MAX_CALLED 9
/* How much wider than its intervals claim a percentile row's differences
 * may spread over the pairs (the smaller of the standard deviation and
 * the robust one, so that neither a stalled pair nor the median absolute
 * deviation's own noise decides). Measured on the shared 2-core VM (80
 * pairs, twice): 0.6 to 0.9 at p50, 0.7 to 1.1 at p90; with the block
 * bootstrap before its widening 1.2 to 1.5 for TPOT, ITL and E2E at p90,
 * with the bootstrap of single requests before that 1.7 to 1.8 at p50 and
 * 2.3 to 2.4 at p90. From 40 pairs a standard deviation is known within
 * about 11% (one standard error), so 1.6 is about four of those past what
 * the widened intervals give, and below what the unwidened p90 rows gave
 * on a loaded VM (1.5 to 1.8). */
#define MAX_SPREAD 1.6
#define MAX_ROWS 64

static struct harness_sim sims[2 * AT_ONCE];

/* 20 req/s for 2 s (Poisson): about 40 requests, enough for a p50 and a
 * p90 (a p99 is "too few values"). */
static const char *const workload[] = {"--rate",          "40",    "--duration",      "2s",
                                       "--prompt-tokens", "64",    "--output-tokens", "16",
                                       "--ignore-eos",    "--slo", "ttft=500ms",      "--quiet",
                                       "--force",         NULL};

/* Start `llmload run` of the workload on sim with seed into dir. */
static pid_t run_start(const struct harness_sim *sim, int seed, const char *dir)
{
    char url[160], s[16], out[720], err[720];
    snprintf(url, sizeof url, "%s/v1", sim->url);
    snprintf(s, sizeof s, "%d", seed);
    snprintf(out, sizeof out, "%.600s.out", dir);
    snprintf(err, sizeof err, "%.600s.err", dir);
    struct harness_argv a = {0};
    const char *fixed[] = {"run", "--url", url, "--seed", s, "--out", dir, NULL};
    harness_argv_add(&a, fixed);
    harness_argv_add(&a, workload);
    return harness_spawn(a.v, out, err, -1, NULL, NULL);
}

/* Wait up to 60 s for pid; fail unless it exited 0 or 1 (INVALID: a late
 * wake-up on this shared box, not a wrong measurement). */
static void run_wait(pid_t pid, const char *dir)
{
    int st = 0;
    for (int i = 0; i < 6000; i++) {
        pid_t r = waitpid(pid, &st, WNOHANG);
        if (r == pid) {
            if (!WIFEXITED(st) || WEXITSTATUS(st) > 1) {
                char p[720];
                snprintf(p, sizeof p, "%.600s.err", dir);
                char *e = harness_read_file(p, NULL);
                fail_msg("run %s ended with status %d: %s", dir, st, e ? e : "");
            }
            return;
        }
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    harness_kill_reap(&pid);
    fail_msg("run %s did not end in 60 s", dir);
}

struct tally {
    char name[MAX_ROWS][48];
    int called[MAX_ROWS];
    /* Over the pairs whose row has a bounded interval: the sum and sum
     * of squares of log(1 + diff), and of the interval's half-width in
     * that scale over z (the standard error it implies). */
    double sum[MAX_ROWS], sq[MAX_ROWS], se[MAX_ROWS];
    double x[MAX_ROWS][PAIRS]; /* each pair's log(1 + diff), for the robust spread */
    int bounded[MAX_ROWS];
    size_t n;
    int total_rows, total_called;
};

static int dcmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* A spread that a stalled pair or two cannot move: 1.4826 times the
 * median absolute deviation of v (n values; reordered), which is the
 * standard deviation for normal values. */
static double robust_sd(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, dcmp);
    double med = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    for (int i = 0; i < n; i++)
        v[i] = fabs(v[i] - med);
    qsort(v, (size_t)n, sizeof *v, dcmp);
    return 1.4826 * (n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2);
}

/* Row i's spread: the standard deviation of log(1 + diff) over the
 * pairs, against the mean standard error their intervals claimed. The
 * ratio is how much too narrow (> 1) an interval is, floor or none. */
static void tally_spread(struct tally *t, size_t i, json_t *diff)
{
    json_t *v = json_object_get(diff, "value"), *lo = json_object_get(diff, "lo"),
           *hi = json_object_get(diff, "hi");
    if (!json_is_number(v) || !json_is_number(lo) || !json_is_number(hi) ||
        strcmp(json_string_value(json_object_get(diff, "kind")), "relative") != 0)
        return;
    double x = log1p(json_number_value(v));
    t->sum[i] += x;
    t->sq[i] += x * x;
    t->se[i] += (log1p(json_number_value(hi)) - log1p(json_number_value(lo))) / (2 * 1.96);
    if (t->bounded[i] < PAIRS)
        t->x[i][t->bounded[i]] = x;
    t->bounded[i]++;
}

static void tally_row(struct tally *t, const char *name, int called)
{
    size_t i;
    for (i = 0; i < t->n; i++)
        if (strcmp(t->name[i], name) == 0)
            break;
    if (i == t->n) {
        assert_true(t->n < MAX_ROWS);
        snprintf(t->name[t->n++], sizeof t->name[0], "%s", name);
    }
    t->called[i] += called;
    t->total_rows++;
    t->total_called += called;
}

/* Compare pair p's two runs and count its rows called different. */
static void compare_pair(struct tally *t, const char *a, const char *b, int p)
{
    char out[720];
    snprintf(out, sizeof out, "%.600s.cmp", a);
    const char *args[] = {"compare", a, b, "--out", out, "--force", "--quiet", NULL};
    free(harness_run_expect(args, 60, 0, NULL));
    json_t *j = harness_json_load(out, "compare.json");
    json_t *rows = json_object_get(json_array_get(json_object_get(j, "candidates"), 0), "rows");
    assert_true(json_array_size(rows) >= 17);
    size_t i;
    json_t *r;
    json_array_foreach(rows, i, r)
    {
        const char *v = harness_sval(r, "verdict");
        int called = strcmp(v, "better") == 0 || strcmp(v, "worse") == 0;
        if (called) {
            char *d = json_dumps(json_object_get(r, "diff"), JSON_COMPACT);
            char *bl = json_dumps(json_object_get(r, "block"), JSON_COMPACT | JSON_ENCODE_ANY);
            printf("  pair %d: %s %s %s block %s\n", p, harness_sval(r, "row"), v, d, bl);
            free(d);
            free(bl);
        }
        tally_row(t, harness_sval(r, "row"), called);
        for (size_t k = 0; k < t->n; k++)
            if (strcmp(t->name[k], harness_sval(r, "row")) == 0)
                tally_spread(t, k, json_object_get(r, "diff"));
    }
    json_decref(j);
}

static void test_compare_noise_false_alarms(void **state)
{
    (void)state;
    harness_tmp_begin();
    for (int i = 0; i < 2 * AT_ONCE; i++)
        assert_int_equal(harness_sim_start(&sims[i], NULL), 0);
    struct tally t = {0};
    for (int p0 = 0; p0 < PAIRS; p0 += AT_ONCE) {
        char dir[2 * AT_ONCE][720];
        pid_t pid[2 * AT_ONCE];
        for (int k = 0; k < 2 * AT_ONCE; k++) {
            char name[32];
            snprintf(name, sizeof name, "p%d-%c", p0 + k / 2, 'a' + k % 2);
            harness_tmp_path(dir[k], sizeof dir[k], name);
            pid[k] = run_start(&sims[k], 1000 + 2 * p0 + k, dir[k]);
        }
        for (int k = 0; k < 2 * AT_ONCE; k++)
            run_wait(pid[k], dir[k]);
        for (int k = 0; k < AT_ONCE; k++)
            compare_pair(&t, dir[2 * k], dir[2 * k + 1], p0 + k);
    }
    printf("compare false alarms: %d of %d rows in %d pairs called different\n", t.total_called,
           t.total_rows, PAIRS);
    for (size_t i = 0; i < t.n; i++)
        if (t.called[i] > 0)
            printf("  %s: %d of %d pairs\n", t.name[i], t.called[i], PAIRS);
    size_t too_narrow[MAX_ROWS], n_narrow = 0;
    printf("spread of log(1 + diff) over the pairs against the standard error the intervals "
           "claimed:\n");
    for (size_t i = 0; i < t.n; i++) {
        int k = t.bounded[i];
        if (k < 2)
            continue;
        double m = t.sum[i] / k, sd = sqrt((t.sq[i] - k * m * m) / (k - 1));
        double rsd = robust_sd(t.x[i], k < PAIRS ? k : PAIRS), claimed = t.se[i] / k;
        printf("  %-20s sd %.4f (robust %.4f)  claimed %.4f  ratio %.2f (robust %.2f)\n", t.name[i],
               sd, rsd, claimed, sd / claimed, rsd / claimed);
        if (strstr(t.name[i], "_p") && k >= PAIRS / 2 && fmin(sd, rsd) > MAX_SPREAD * claimed)
            too_narrow[n_narrow++] = i;
    }
    for (size_t j = 0; j < n_narrow; j++) {
        size_t i = too_narrow[j];
        fail_msg("row %s: its intervals claim a standard error %.4f, but the differences of "
                 "pairs of one configuration spread %.2f times that",
                 t.name[i], t.se[i] / t.bounded[i],
                 sqrt((t.sq[i] - t.sum[i] * t.sum[i] / t.bounded[i]) / (t.bounded[i] - 1)) /
                     (t.se[i] / t.bounded[i]));
    }
    assert_true(t.n >= 17);
    for (size_t i = 0; i < t.n; i++)
        if (t.called[i] > MAX_CALLED)
            fail_msg("row %s called different in %d of %d pairs of one configuration "
                     "(at most %d by chance, P < 1/1000)",
                     t.name[i], t.called[i], PAIRS, MAX_CALLED);
    for (int i = 0; i < 2 * AT_ONCE; i++)
        harness_sim_stop(&sims[i]);
    harness_tmp_end();
}

static int teardown(void **state)
{
    (void)state;
    for (int i = 0; i < 2 * AT_ONCE; i++)
        harness_sim_stop(&sims[i]);
    harness_tmp_end();
    return 0;
}

HARNESS_MAIN(cmocka_unit_test_teardown(test_compare_noise_false_alarms, teardown))
