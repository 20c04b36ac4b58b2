/* libFuzzer target for the line-oriented input files: the same bytes as a
 * replay trace (trace.c), a prompt dataset (dataset.c) and an empirical
 * distribution in both units (empirical.c). Checks that no parser crashes,
 * that every rejection is one line starting with the file name, and the
 * invariants of what is accepted: a trace sorted by time with lengths in
 * range, dataset prompts of the stated length, empirical quantiles that
 * are ordered and inside the observed range. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "workload/dataset.h"
#include "workload/empirical.h"
#include "workload/trace.h"
#include "util/util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_err(int rc, const void *out, const char *err)
{
    if (rc == 0)
        return;
    if (out || strncmp(err, "fuzz", 4) != 0 || strchr(err, '\n'))
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    char err[1024];
    struct rng r;
    rng_seed(&r, size, 1);

    struct trace *t = NULL;
    err[0] = '\0';
    int rc = trace_parse("fuzz.jsonl", text, size, &t, err, sizeof(err));
    check_err(rc, t, err);
    if (rc == 0) {
        for (size_t i = 0; i < t->n; i++) {
            const struct trace_entry *e = &t->entries[i];
            if (i && e->sched_ns < t->entries[i - 1].sched_ns)
                abort();
            if (e->max_tokens < 1 || e->max_tokens > TRACE_MAX_TOKENS ||
                e->prompt_tokens > TRACE_MAX_TOKENS)
                abort();
            size_t plen;
            const char *p = trace_prompt(t, i, &plen);
            if ((e->prompt_tokens == 0 && !p) || (p && strlen(p) != plen))
                abort();
            if (e->class_id >= 0 && !trace_class_name(t, i))
                abort();
            if (trace_scaled_sched_ns(t, i, 1.0) != e->sched_ns)
                abort();
        }
        trace_free(t);
    }

    struct dataset *d = NULL;
    err[0] = '\0';
    rc = dataset_parse("fuzz.json", text, size, &d, err, sizeof(err));
    check_err(rc, d, err);
    if (rc == 0) {
        for (size_t i = 0; i < d->n; i++) {
            size_t plen;
            const char *p = dataset_prompt(d, i, &plen);
            if (strlen(p) != plen || dataset_count_words(p, plen) == 0)
                abort();
        }
        if (dataset_pick(d, &r) >= d->n)
            abort();
        dataset_free(d);
    }

    for (int u = 0; u < 2; u++) {
        struct empirical *e = NULL;
        err[0] = '\0';
        rc = empirical_parse("fuzz.csv", text, size,
                             u ? DIST_UNIT_DURATION_NS : DIST_UNIT_NONE, &e, err,
                             sizeof(err));
        check_err(rc, e, err);
        if (rc)
            continue;
        for (int c = 0; c < empirical_columns(e); c++) {
            double lo = empirical_quantile(e, c, 0), hi = empirical_quantile(e, c, 1);
            double q1 = empirical_quantile(e, c, 0.3), q2 = empirical_quantile(e, c, 0.7);
            if (!(lo >= 0) || !(lo <= q1 && q1 <= q2 && q2 <= hi))
                abort();
            double x = empirical_sample(e, c, &r);
            if (!(x >= lo && x <= hi))
                abort();
        }
        empirical_free(e);
    }
    return 0;
}
