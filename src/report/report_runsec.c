/* report_runsec.c: hist.jsonl read down to the page's points
 * (report_runsec.h).
 *
 * Two passes over the file. The first finds the last second, from which
 * the bucket width k follows (at most RUN_SECONDS_POINTS buckets); the
 * second parses each line, adds its counts to its bucket and merges its
 * histograms into the bucket's slot of the ring, slot = bucket mod
 * RUN_SECONDS_RING. A line for a newer bucket that lands on an occupied
 * slot closes the bucket there first: its percentiles are taken and its
 * histograms emptied for reuse. */
#include "report/report_runsec.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "measure/hist.h"
#include "util/json.h"
#include "util/util.h"

/* One open bucket: its index (SIZE_MAX = none) and its histograms. */
struct runsec_slot {
    size_t bucket;
    struct hist *ttft, *tpot;
};

void run_seconds_free(struct run_seconds *s)
{
    free(s->ok);
    free(s->failed);
    free(s->seen);
    free(s->ttft_p50_ns);
    free(s->ttft_p99_ns);
    free(s->tpot_p50_ns);
    free(s->tpot_p99_ns);
    *s = (struct run_seconds){0};
}

/* The second a line's t_ns names, for the first pass: -1 when the line
 * has none in range or is a sweep step's. The second pass checks again
 * with a real parse. */
static long long runsec_peek_second(const char *line)
{
    const char *t = strstr(line, "\"t_ns\":");
    if (t == NULL || strstr(line, "\"step\":") != NULL)
        return -1;
    char *end;
    errno = 0;
    long long ns = strtoll(t + 7, &end, 10);
    if (errno != 0 || end == t + 7 || ns < 0 || ns / 1000000000 >= RUN_SECONDS_MAX)
        return -1;
    return ns / 1000000000;
}

/* Size s for seconds 0 .. last: k and the bucket arrays. */
static void runsec_size(struct run_seconds *s, long long last)
{
    size_t secs = (size_t)last + 1;
    s->n_seconds = secs;
    s->k = (secs + RUN_SECONDS_POINTS - 1) / RUN_SECONDS_POINTS;
    s->n = (secs + s->k - 1) / s->k;
    s->ok = ll_calloc(s->n, sizeof *s->ok);
    s->failed = ll_calloc(s->n, sizeof *s->failed);
    s->seen = ll_calloc(s->n, 1);
    double **p[] = {&s->ttft_p50_ns, &s->ttft_p99_ns, &s->tpot_p50_ns, &s->tpot_p99_ns};
    for (size_t i = 0; i < LL_ARRAY_LEN(p); i++) {
        *p[i] = ll_calloc(s->n, sizeof(double));
        for (size_t j = 0; j < s->n; j++)
            (*p[i])[j] = NAN;
    }
}

/* Take h's p50 and p99 (NAN when empty) and empty it. */
static void runsec_reduce(struct hist *h, double *p50, double *p99)
{
    if (hist_count(h) > 0) {
        *p50 = (double)hist_percentile(h, 50);
        *p99 = (double)hist_percentile(h, 99);
    }
    hist_reset(h);
}

/* Close slot sl's bucket into s, if it holds one. */
static void runsec_close(struct run_seconds *s, struct runsec_slot *sl)
{
    if (sl->bucket == SIZE_MAX)
        return;
    runsec_reduce(sl->ttft, &s->ttft_p50_ns[sl->bucket], &s->ttft_p99_ns[sl->bucket]);
    runsec_reduce(sl->tpot, &s->tpot_p50_ns[sl->bucket], &s->tpot_p99_ns[sl->bucket]);
    sl->bucket = SIZE_MAX;
}

/* Merge histogram text v (hist.c's form) into h through scratch. A
 * malformed one is skipped, as a malformed line is. */
static void runsec_hist_add(struct hist *h, struct hist *scratch, const json_t *v)
{
    const char *text = json_string_value(v);
    if (text == NULL)
        return;
    char err[128];
    hist_reset(scratch);
    if (hist_from_string(scratch, text, err, sizeof err) == 0)
        hist_merge(h, scratch);
}

static double runsec_count(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    return json_is_number(v) && json_number_value(v) > 0 ? json_number_value(v) : 0;
}

/* Add one parsed line to s and the ring. */
static void runsec_add(struct run_seconds *s, struct runsec_slot *ring, struct hist *scratch,
                       const json_t *o)
{
    const json_t *t = json_object_get(o, "t_ns");
    if (!json_is_integer(t) || json_integer_value(t) < 0 || json_object_get(o, "step") != NULL ||
        json_integer_value(t) / 1000000000 >= (json_int_t)s->n_seconds) {
        s->bad_lines++;
        return;
    }
    size_t i = (size_t)(json_integer_value(t) / 1000000000) / s->k;
    s->seen[i] = 1;
    s->ok[i] += runsec_count(o, "ok");
    s->failed[i] += runsec_count(o, "failed");
    struct runsec_slot *sl = &ring[i % RUN_SECONDS_RING];
    if (sl->bucket != SIZE_MAX && sl->bucket > i) {
        s->late_lines++;
        return;
    }
    if (sl->bucket != i) {
        runsec_close(s, sl);
        sl->bucket = i;
    }
    runsec_hist_add(sl->ttft, scratch, json_object_get(o, "ttft"));
    runsec_hist_add(sl->tpot, scratch, json_object_get(o, "tpot"));
}

void run_seconds_load(const char *path, struct run_seconds *s)
{
    *s = (struct run_seconds){.k = 1};
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return;
    char *line = NULL;
    size_t cap = 0;
    ssize_t got;
    long long last = -1;
    uint64_t lines = 0;
    while ((got = getline(&line, &cap, f)) > 0) {
        last = LL_MAX(last, runsec_peek_second(line));
        lines++;
    }
    if (last < 0)
        s->bad_lines = lines; /* not one line names a second of a run */
    if (last >= 0 && fseek(f, 0, SEEK_SET) == 0) {
        runsec_size(s, last);
        struct runsec_slot ring[RUN_SECONDS_RING];
        for (size_t i = 0; i < RUN_SECONDS_RING; i++)
            ring[i] =
                (struct runsec_slot){.bucket = SIZE_MAX, .ttft = hist_new(), .tpot = hist_new()};
        struct hist *scratch = hist_new();
        while ((got = getline(&line, &cap, f)) > 0) {
            json_t *o = json_loadb(line, (size_t)got, 0, NULL);
            if (o == NULL) {
                s->bad_lines++;
                continue;
            }
            runsec_add(s, ring, scratch, o);
            json_decref(o);
        }
        for (size_t i = 0; i < RUN_SECONDS_RING; i++) {
            runsec_close(s, &ring[i]);
            hist_free(ring[i].ttft);
            hist_free(ring[i].tpot);
        }
        hist_free(scratch);
    }
    free(line);
    fclose(f);
}
