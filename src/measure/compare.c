/* compare.c: the statistics of `llmload compare` (compare.h). */
#include "measure/compare.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "measure/hist.h"
#include "util/rng.h"
#include "util/util.h"

double cmp_percentile_sorted(const double *v, size_t n, double p)
{
    return v[hist_percentile_rank(p, n) - 1];
}

int cmp_pct_enough(size_t n, double p)
{
    if (n == 0)
        return 0;
    double q = p / 100.0, np = (double)n * q, sd = sqrt(np * (1 - q));
    double lo = floor(np - CMP_Z95 * sd), hi = ceil(np + CMP_Z95 * sd) + 1;
    return lo >= 1 && hi <= (double)n;
}

/* An index in [0, n), n < 2^32: Lemire's multiply-shift (bias below
 * n / 2^32, far under the bootstrap's own noise). */
static size_t draw_index(struct rng *r, size_t n)
{
    return (size_t)(((rng_next(r) >> 32) * (uint64_t)n) >> 32);
}

/* One resample of the n sorted values v: counts[] of each index drawn n
 * times, then the percentile ranks found in one walk. out[i] gets the
 * resample's ps[i]-th percentile. */
static void resample_pcts(struct rng *r, const double *v, size_t n, uint32_t *counts,
                          const size_t *ranks, size_t np, double *out)
{
    memset(counts, 0, n * sizeof *counts);
    for (size_t i = 0; i < n; i++)
        counts[draw_index(r, n)]++;
    size_t cum = 0, j = 0;
    for (size_t i = 0; i < n && j < np; i++) {
        cum += counts[i];
        while (j < np && cum >= ranks[j])
            out[j++] = v[i];
    }
    while (j < np)
        out[j++] = v[n - 1];
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int cmp_bootstrap_pct(const double *base, size_t nb, const double *cand, size_t nc,
                      const double *ps, size_t np, unsigned resamples, uint64_t seed,
                      struct cmp_diff *out)
{
    memset(out, 0, np * sizeof *out);
    if (nb == 0 || nc == 0 || np == 0 || resamples == 0)
        return 0;
    size_t *rb = ll_malloc(np * sizeof *rb), *rc = ll_malloc(np * sizeof *rc);
    uint32_t *counts = ll_malloc((nb > nc ? nb : nc) * sizeof *counts);
    double *ratios = ll_malloc((size_t)resamples * np * sizeof *ratios);
    double *qb = ll_malloc(np * sizeof *qb), *qc = ll_malloc(np * sizeof *qc);
    for (size_t i = 0; i < np; i++) {
        rb[i] = (size_t)hist_percentile_rank(ps[i], nb);
        rc[i] = (size_t)hist_percentile_rank(ps[i], nc);
    }
    struct rng r;
    rng_seed(&r, seed, 0);
    for (unsigned b = 0; b < resamples; b++) {
        resample_pcts(&r, base, nb, counts, rb, np, qb);
        resample_pcts(&r, cand, nc, counts, rc, np, qc);
        for (size_t i = 0; i < np; i++)
            ratios[i * resamples + b] = qb[i] > 0 ? qc[i] / qb[i] - 1.0 : NAN;
    }
    for (size_t i = 0; i < np; i++) {
        double b0 = cmp_percentile_sorted(base, nb, ps[i]);
        double c0 = cmp_percentile_sorted(cand, nc, ps[i]);
        if (!(b0 > 0))
            continue;
        double *x = ratios + i * resamples;
        size_t m = 0;
        for (size_t k = 0; k < resamples; k++) {
            if (!isnan(x[k]))
                x[m++] = x[k];
        }
        if (m == 0)
            continue;
        qsort(x, m, sizeof *x, cmp_double);
        out[i].ok = 1;
        out[i].diff = c0 / b0 - 1.0;
        if (!cmp_pct_enough(nb, ps[i]) || !cmp_pct_enough(nc, ps[i])) {
            out[i].too_few = 1;
            out[i].lo = -INFINITY;
            out[i].hi = INFINITY;
            continue;
        }
        out[i].lo = cmp_percentile_sorted(x, m, 2.5);
        out[i].hi = cmp_percentile_sorted(x, m, 97.5);
    }
    free(rb);
    free(rc);
    free(counts);
    free(ratios);
    free(qb);
    free(qc);
    return 0;
}

void cmp_wilson(uint64_t k, uint64_t n, double z, double *lo, double *hi)
{
    if (n == 0) {
        *lo = 0;
        *hi = 1;
        return;
    }
    double nn = (double)n, p = (double)k / nn, z2 = z * z;
    double den = 1 + z2 / nn;
    double mid = (p + z2 / (2 * nn)) / den;
    double half = z * sqrt(p * (1 - p) / nn + z2 / (4 * nn * nn)) / den;
    *lo = mid - half < 0 ? 0 : mid - half;
    *hi = mid + half > 1 ? 1 : mid + half;
    if (k == 0)
        *lo = 0;
    if (k == n)
        *hi = 1;
}

struct cmp_diff cmp_share_diff(uint64_t kb, uint64_t nb, uint64_t kc, uint64_t nc)
{
    struct cmp_diff d = {0};
    if (nb == 0 || nc == 0)
        return d;
    double pb = (double)kb / (double)nb, pc = (double)kc / (double)nc;
    double lb, ub, lc, uc;
    cmp_wilson(kb, nb, CMP_Z95, &lb, &ub);
    cmp_wilson(kc, nc, CMP_Z95, &lc, &uc);
    d.ok = 1;
    d.diff = pc - pb;
    d.lo = d.diff - sqrt((pc - lc) * (pc - lc) + (ub - pb) * (ub - pb));
    d.hi = d.diff + sqrt((uc - pc) * (uc - pc) + (pb - lb) * (pb - lb));
    return d;
}

struct cmp_diff cmp_total_ratio(double sb, double vb, double sc, double vc, double scale)
{
    struct cmp_diff d = {0};
    if (!(sb > 0) || !(sc > 0) || !(scale > 0))
        return d;
    double l = log(sc / sb * scale);
    double se = sqrt(vb / (sb * sb) + vc / (sc * sc));
    d.ok = 1;
    d.diff = exp(l) - 1.0;
    d.lo = exp(l - CMP_Z95 * se) - 1.0;
    d.hi = exp(l + CMP_Z95 * se) - 1.0;
    return d;
}

const char *cmp_verdict_name(enum cmp_verdict v)
{
    switch (v) {
    case CMP_SAME: return "same";
    case CMP_BETTER: return "better";
    case CMP_WORSE: return "worse";
    case CMP_NA: break;
    }
    return "n/a";
}

enum cmp_verdict cmp_verdict_of(const struct cmp_diff *d, enum cmp_better dir, double min_effect)
{
    if (!d->ok)
        return CMP_NA;
    if (d->too_few || (d->lo <= 0 && d->hi >= 0) || fabs(d->diff) < min_effect)
        return CMP_SAME;
    int up = d->lo > 0;
    return (up == (dir == CMP_HIGHER_BETTER)) ? CMP_BETTER : CMP_WORSE;
}

int cmp_thresholds_parse(const char *spec, struct cmp_threshold *out, size_t max, size_t *n,
                         char *err, size_t errlen)
{
    *n = 0;
    const char *p = spec;
    if (!*p) {
        snprintf(err, errlen, "--fail-on: empty");
        return -1;
    }
    while (*p) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        char item[96];
        if (len == 0 || len >= sizeof item) {
            snprintf(err, errlen, "--fail-on: an empty or over-long item in \"%s\"", spec);
            return -1;
        }
        memcpy(item, p, len);
        item[len] = '\0';
        char *colon = strchr(item, ':');
        if (!colon || colon == item || (size_t)(colon - item) >= sizeof out->row) {
            snprintf(err, errlen, "--fail-on: \"%s\" is not ROW:+N%% or ROW:+Npp", item);
            return -1;
        }
        if (*n >= max) {
            snprintf(err, errlen, "--fail-on: more than %zu thresholds", max);
            return -1;
        }
        struct cmp_threshold *t = &out[*n];
        memset(t, 0, sizeof *t);
        memcpy(t->row, item, (size_t)(colon - item));
        const char *a = colon + 1;
        if (*a != '+' && *a != '-') {
            snprintf(err, errlen,
                     "--fail-on: \"%s\": the amount needs a sign, + (more is worse) or - (less is "
                     "worse)",
                     item);
            return -1;
        }
        double sign = *a == '+' ? 1.0 : -1.0;
        char *e = NULL;
        double v = strtod(a + 1, &e);
        if (e == a + 1 || !isfinite(v) || v <= 0 || isspace((unsigned char)a[1])) {
            snprintf(err, errlen, "--fail-on: \"%s\": the amount must be a positive number", item);
            return -1;
        }
        if (strcmp(e, "%") == 0) {
            t->pp = 0;
        } else if (strcmp(e, "pp") == 0) {
            t->pp = 1;
        } else {
            snprintf(err, errlen, "--fail-on: \"%s\": the unit must be %% or pp", item);
            return -1;
        }
        t->amount = sign * v / 100.0;
        (*n)++;
        p = ll_list_next(p, len, "--fail-on", spec, err, errlen);
        if (!p)
            return -1;
    }
    return 0;
}

/* Mean and sample variance of v[0..n), n >= 1 (variance 0 when n = 1). */
static void mean_var(const double *v, size_t n, double *mean, double *var)
{
    double m = 0, ss = 0;
    for (size_t i = 0; i < n; i++)
        m += v[i];
    m /= (double)n;
    for (size_t i = 0; i < n; i++)
        ss += (v[i] - m) * (v[i] - m);
    *mean = m;
    *var = n > 1 ? ss / (double)(n - 1) : 0;
}

struct cmp_diff cmp_between_runs(const double *b, size_t nb, const double *c, size_t nc,
                                 int relative, double diff, cmp_t975_fn *t975)
{
    struct cmp_diff d = {0};
    if (nb == 0 || nc == 0 || (nb < 2 && nc < 2))
        return d;
    double mb, sb, mc, sc;
    mean_var(b, nb, &mb, &sb);
    mean_var(c, nc, &mc, &sc);
    if (relative) {
        if (!(mb > 0) || !(mc > 0) || !(1 + diff > 0))
            return d;
        sb /= mb * mb; /* the squared coefficient of variation per run */
        sc /= mc * mc;
    }
    /* A side of one run varies as the other does. */
    if (nb < 2)
        sb = sc;
    if (nc < 2)
        sc = sb;
    double vb = sb / (double)nb, vc = sc / (double)nc;
    double df;
    if (nb < 2 || nc < 2) {
        df = (double)((nb < 2 ? nc : nb) - 1);
    } else {
        double den = vb * vb / (double)(nb - 1) + vc * vc / (double)(nc - 1);
        df = den > 0 ? (vb + vc) * (vb + vc) / den : (double)(nb + nc - 2);
    }
    /* Rounded down, past a rounding error: 4 computed as 3.999... is 4. */
    double h = t975((uint32_t)fmax(1, floor(df + 1e-9))) * sqrt(vb + vc);
    d.ok = 1;
    d.diff = diff;
    if (relative) {
        double l = log1p(diff);
        d.lo = expm1(l - h);
        d.hi = expm1(l + h);
    } else {
        d.lo = diff - h;
        d.hi = diff + h;
    }
    return d;
}

enum cmp_gate cmp_gate_of(const struct cmp_diff *d, const struct cmp_threshold *t)
{
    if (!d->ok || d->too_few)
        return CMP_GATE_INCONCLUSIVE;
    double s = t->amount > 0 ? 1.0 : -1.0, lim = fabs(t->amount);
    double w = s * d->diff, a = s * d->lo, b = s * d->hi;
    if (a > b) {
        double x = a;
        a = b;
        b = x;
    }
    if (w > lim && a > 0)
        return CMP_GATE_FAIL;
    if (b > lim)
        return CMP_GATE_INCONCLUSIVE;
    return CMP_GATE_PASS;
}
