/* promreplicas.c: the replicas behind --prometheus in the run's report
 * (see promsource.h): their count and spread, what the figures lag by,
 * and the routing-imbalance finding. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "metrics/promsource.h"
#include "metrics/scrape_int.h"
#include "util/util.h"

/* A replica's mean waiting over the window, NAN when it had no scrape. */
static double mean_waiting(const struct promsource_replica *r)
{
    return r->rc == 0 && r->j.waiting.present ? r->j.waiting.mean : NAN;
}

int promsource_imbalance(const struct promsource_replica *r, size_t n, char *buf, size_t len)
{
    if (len)
        buf[0] = '\0';
    size_t hi = n, lo = n;
    for (size_t i = 0; i < n; i++) {
        double w = mean_waiting(&r[i]);
        if (isnan(w))
            continue;
        if (hi == n || w > mean_waiting(&r[hi]))
            hi = i;
        if (lo == n || w < mean_waiting(&r[lo]))
            lo = i;
    }
    if (hi == n || hi == lo)
        return 0;
    double wh = mean_waiting(&r[hi]), wl = mean_waiting(&r[lo]);
    /* A queue of one request on average is a queue; a tenth of it is idle
     * by comparison: the router sent work where it waited, not where the
     * batch had room. */
    if (!(wh >= 1.0 && wl < 0.1 * wh))
        return 0;
    snprintf(buf, len,
             "routing imbalance: replica %s queued (mean %.2f waiting) while %s did not "
             "(mean %.2f): the router is not spreading the load",
             r[hi].name, wh, r[lo].name, wl);
    return 1;
}

void promsource_replicas_print(FILE *f, const struct promsource_replica *r, size_t n,
                               const struct promsource_staleness *st)
{
    if (n == 0)
        return;
    char shown[300];
    fprintf(f, "  replicas             %zu (by %s); Prometheus scrapes every ", n,
            st && st->by[0] ? ll_shown(st->by, shown, sizeof shown) : "pod");
    if (st && !isnan(st->interval_s))
        fprintf(f, "%.2g s, figures up to %.2g s old\n", st->interval_s, st->max_age_s);
    else
        fprintf(f, "? s (no series had two samples)\n");
    double lo = NAN, hi = NAN;
    for (size_t i = 0; i < n; i++) {
        const struct scrape_join *j = &r[i].j;
        fprintf(f, "    %-18s ", ll_shown(r[i].name, shown, sizeof shown));
        if (r[i].rc != 0) {
            fprintf(f, "no scrape in the window\n");
            continue;
        }
        if (j->waiting.present)
            fprintf(f, "waiting mean %.2f max %.0f", j->waiting.mean, j->waiting.max);
        if (j->running.present)
            fprintf(f, "  running mean %.2f", j->running.mean);
        if (j->generation_tokens.present)
            fprintf(f, "  generated %.0f tokens", j->generation_tokens.delta);
        fprintf(f, "\n");
        double w = mean_waiting(&r[i]);
        if (!isnan(w)) {
            lo = isnan(lo) || w < lo ? w : lo;
            hi = isnan(hi) || w > hi ? w : hi;
        }
    }
    if (!isnan(lo) && n > 1)
        fprintf(f, "    spread             mean waiting %.2f to %.2f across replicas\n", lo, hi);
    char why[300];
    if (promsource_imbalance(r, n, why, sizeof why)) /* it names replicas: the server's labels */
        fprintf(f, "  finding: %s\n", ll_shown(why, shown, sizeof shown));
}

json_t *promsource_replicas_json(const struct promsource_replica *r, size_t n,
                                 const struct promsource_staleness *st)
{
    if (n == 0)
        return NULL;
    json_t *o = json_object();
    json_object_set_new(o, "count", json_integer((json_int_t)n));
    json_object_set_new(o, "by", json_string(st && st->by[0] ? st->by : "pod"));
    json_object_set_new(o, "prom_interval_s",
                        st && !isnan(st->interval_s) ? json_real(st->interval_s) : json_null());
    json_object_set_new(o, "max_age_s",
                        st && !isnan(st->max_age_s) ? json_real(st->max_age_s) : json_null());
    json_t *each = json_object();
    for (size_t i = 0; i < n; i++) {
        const struct scrape_join *j = &r[i].j;
        json_t *x = json_object();
        if (r[i].rc == 0 && j->waiting.present) {
            json_object_set_new(x, "waiting_mean", json_real(j->waiting.mean));
            json_object_set_new(x, "waiting_max", scrape_json_count(j->waiting.max));
        }
        if (r[i].rc == 0 && j->running.present)
            json_object_set_new(x, "running_mean", json_real(j->running.mean));
        if (r[i].rc == 0 && j->kv_usage.present)
            json_object_set_new(x, "kv_usage_mean", json_real(j->kv_usage.mean));
        if (r[i].rc == 0 && j->generation_tokens.present)
            json_object_set_new(x, "generation_tokens",
                                scrape_json_count(j->generation_tokens.delta));
        json_object_set_new(each, r[i].name, x);
    }
    json_object_set_new(o, "replicas", each);
    char why[300];
    json_object_set_new(o, "imbalance",
                        promsource_imbalance(r, n, why, sizeof why) ? json_string(why)
                                                                    : json_null());
    return o;
}
