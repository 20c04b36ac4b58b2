/* compare.c: the statistics of `llmload compare` (compare.h). */
#include "measure/compare.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "measure/hist.h"
#include "measure/stats.h"
#include "measure/tdist.h"
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

size_t cmp_pct_min_n(double p)
{
    /* The rule holds from its first n on (checked to 3 times it for p50,
     * p90, p99 and p99.9): double up to a bound, then bisect. */
    size_t hi = 1;
    while (!cmp_pct_enough(hi, p) && hi < ((size_t)1 << 40))
        hi *= 2;
    size_t lo = hi / 2; /* not enough, or 0 */
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (cmp_pct_enough(mid, p))
            hi = mid;
        else
            lo = mid;
    }
    return hi;
}

/* An index in [0, n), n < 2^32: Lemire's multiply-shift (bias below
 * n / 2^32, far under the bootstrap's own noise). */
static size_t draw_index(struct rng *r, size_t n)
{
    return (size_t)(((rng_next(r) >> 32) * (uint64_t)n) >> 32);
}

/* One side's resampling state: its sample, and for blocks the sorted
 * index of each value in time order (so a block adds to the counts of
 * sorted positions, and the percentiles are found as for single draws). */
struct side_rs {
    const struct cmp_sample *s;
    size_t *rank_of; /* NULL for block 1 */
};

/* One resample of a side: counts[] of each sorted index drawn (n in
 * all: single draws, or ceil(n / L) circular blocks cut to n), then the
 * percentile ranks found in one walk. out[i] gets the resample's ps[i]-th
 * percentile. */
static void resample_pcts(struct rng *r, const struct side_rs *x, uint32_t *counts,
                          const size_t *ranks, size_t np, double *out)
{
    size_t n = x->s->n, L = x->s->block;
    const double *v = x->s->sorted;
    memset(counts, 0, n * sizeof *counts);
    if (!x->rank_of) {
        for (size_t i = 0; i < n; i++)
            counts[draw_index(r, n)]++;
    } else {
        for (size_t drawn = 0; drawn < n;) {
            size_t t = draw_index(r, n);
            for (size_t j = 0; j < L && drawn < n; j++, drawn++) {
                counts[x->rank_of[t]]++;
                t = t + 1 == n ? 0 : t + 1;
            }
        }
    }
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
    return LL_CMP(*(const double *)a, *(const double *)b);
}

/* For qsort of indices by the values they point at (ties by index, so
 * the order is fixed). */
struct by_value {
    double v;
    size_t i;
};

static int cmp_by_value(const void *a, const void *b)
{
    const struct by_value *x = a, *y = b;
    int c = LL_CMP(x->v, y->v);
    return c ? c : LL_CMP(x->i, y->i);
}

/* The sorted position of each value of in_order: the k-th smallest (ties
 * in time order) gets k, and sorted[k] equals it. Caller frees. */
static size_t *ranks_in_order(const double *in_order, size_t n)
{
    struct by_value *bv = ll_malloc(n * sizeof *bv);
    for (size_t i = 0; i < n; i++) {
        bv[i].v = in_order[i];
        bv[i].i = i;
    }
    qsort(bv, n, sizeof *bv, cmp_by_value);
    size_t *rank_of = ll_malloc(n * sizeof *rank_of);
    for (size_t k = 0; k < n; k++)
        rank_of[bv[k].i] = k;
    free(bv);
    return rank_of;
}

static void side_rs_init(struct side_rs *x, const struct cmp_sample *s)
{
    x->s = s;
    x->rank_of = s->block > 1 && s->in_order ? ranks_in_order(s->in_order, s->n) : NULL;
}

/* One side's resampled log-percentiles: their sum, sum of squares and
 * count (a percentile of 0 has no log and is left out). */
struct logmom {
    double s, ss, k;
};

static void logmom_add(struct logmom *m, double q)
{
    if (q > 0) {
        double l = log(q);
        m->s += l;
        m->ss += l * l;
        m->k++;
    }
}

/* The variance of a side's resampled log-percentiles; -1 when unknown. */
static double logmom_var(const struct logmom *m)
{
    if (m->k < 2)
        return -1;
    double v = (m->ss - m->s * m->s / m->k) / (m->k - 1);
    return v > 0 ? v : 0;
}

/* As logmom_var, corrected for the few blocks (n / L of them) the
 * resamples were made of: a variance from B nearly independent blocks is
 * low by (B - 1) / B. -1 when unknown. */
static double logmom_var_blocks(const struct logmom *m, double blocks)
{
    double v = logmom_var(m);
    return v < 0 || blocks < 2 ? -1 : v * blocks / (blocks - 1);
}

/* The second pass of a side with blocks: np log-percentile moments of
 * resamples resamples in blocks of L2 (L2 1: single draws), percentile
 * i's into m2[4 i] (mom's layout). */
static void resample_moments(struct rng *r, const struct cmp_sample *s, size_t L2, uint32_t *counts,
                             const size_t *ranks, size_t np, unsigned resamples, double *q,
                             struct logmom *m2)
{
    struct cmp_sample s2 = *s;
    s2.block = L2;
    struct side_rs x;
    side_rs_init(&x, &s2);
    for (unsigned b = 0; b < resamples; b++) {
        resample_pcts(r, &x, counts, ranks, np, q);
        for (size_t i = 0; i < np; i++)
            logmom_add(&m2[4 * i], q[i]);
    }
    free(x.rank_of);
}

/* A side's variance of its log-percentile: of blocks of L (m1) and, when
 * L > 1, of the second length L2 (m2; NULL when L is 1). A block
 * bootstrap's variance falls short of the truth by about c / L (the
 * correlation past a block's end is lost at each of its joins), so from
 * two lengths the truth is V = (L2 v(L2) - L v(L)) / (L2 - L)
 * (Richardson's extrapolation in 1 / L, the same whichever is longer);
 * the larger of it and v1, since a noisier v2 can also come out lower. */
static double side_var(const struct logmom *m1, const struct logmom *m2, const struct cmp_sample *s,
                       size_t L2)
{
    double L = (double)s->block, v1 = logmom_var_blocks(m1, (double)s->n / L);
    if (!m2 || v1 < 0)
        return v1;
    double v2 = logmom_var_blocks(m2, (double)s->n / (double)L2);
    if (v2 < 0)
        return v1;
    double V = ((double)L2 * v2 - L * v1) / ((double)L2 - L);
    return V > v1 ? V : v1;
}

/* The second block length of a side with blocks: 2L, at most
 * cmp_block_max(n), where that is still 1.5 L or more; else L / 2
 * (rounded): lengths close together would multiply the resampling's own
 * noise by L / (L2 - L) in the extrapolation. 0 when there is none
 * (L 1). */
static size_t second_block(const struct cmp_sample *s)
{
    if (s->block <= 1 || !s->in_order)
        return 0;
    size_t mx = cmp_block_max(s->n), up = 2 * s->block < mx ? 2 * s->block : mx;
    if (2 * up >= 3 * s->block)
        return up;
    return (s->block + 1) / 2;
}

/* d's interval (the ratio's 2.5 and 97.5 percentiles), widened around
 * its centre in the log scale by sqrt(w_b + w_c) / sqrt(v_b + v_c) x
 * t975(df) / 1.96: v a side's bootstrap variance of its log-percentile,
 * w the same as side_var corrects it, and df Welch-Satterthwaite's over
 * the w, each side's B - 1 (B = n / L its blocks). A variance from all n
 * overlapping blocks of L, as v is, has about 1.5 B degrees of freedom,
 * but w rests on v(2L) too, of half as many blocks, and its
 * extrapolation adds that noise twice over: B - 1 counts both (measured:
 * with 1.5 B - 1 the decode p90 rows of the loaded noise set spread 1.2
 * times what they claimed, with B - 1 1.1; docs/compare.md). Never
 * narrowed. An interval whose low end is -100% (a candidate's percentile
 * of 0 in some resamples) is widened at its high end, from the estimate.
 * Independent values (L 1, no second length) of 80 values: 1.3% wider;
 * of thousands, unchanged to 0.1%. m: the two sides' moments at L. */
static void widen_few_blocks(struct cmp_diff *d, const struct logmom m[2], double wb, double wc,
                             const struct cmp_sample *sb, const struct cmp_sample *sc)
{
    double bb = (double)sb->n / (double)sb->block, bc = (double)sc->n / (double)sc->block;
    double vb = logmom_var(&m[0]), vc = logmom_var(&m[1]);
    if (!(d->hi > -1) || !(d->diff > -1) || vb < 0 || vc < 0 || wb < 0 || wc < 0 || !(vb + vc > 0))
        return;
    double db = bb - 1, dc = bc - 1;
    double df = (wb + wc) * (wb + wc) / (wb * wb / db + wc * wc / dc);
    double f = sqrt((wb + wc) / (vb + vc)) * t975(df) / CMP_Z95;
    if (!(f > 1))
        return;
    double h = log1p(d->hi);
    if (!(d->lo > -1)) {
        double x = log1p(d->diff);
        if (h > x)
            d->hi = expm1(x + f * (h - x));
        return;
    }
    double l = log1p(d->lo), mid = (l + h) / 2;
    d->lo = expm1(mid - f * (mid - l));
    d->hi = expm1(mid + f * (h - mid));
}

int cmp_bootstrap_pct_blocks(const struct cmp_sample *sb, const struct cmp_sample *sc,
                             const double *ps, size_t np, unsigned resamples, uint64_t seed,
                             struct cmp_diff *out)
{
    memset(out, 0, np * sizeof *out);
    size_t nb = sb->n, nc = sc->n;
    if (nb == 0 || nc == 0 || np == 0 || resamples == 0)
        return 0;
    const double *base = sb->sorted, *cand = sc->sorted;
    struct side_rs xb, xc;
    side_rs_init(&xb, sb);
    side_rs_init(&xc, sc);
    size_t *rb = ll_malloc(np * sizeof *rb), *rc = ll_malloc(np * sizeof *rc);
    uint32_t *counts = ll_malloc((nb > nc ? nb : nc) * sizeof *counts);
    double *ratios = ll_malloc((size_t)resamples * np * sizeof *ratios);
    double *qb = ll_malloc(np * sizeof *qb), *qc = ll_malloc(np * sizeof *qc);
    /* Per percentile i: the baseline's and the candidate's moments at L
     * (mom[4i], mom[4i + 1]), then at their second lengths (+2, +3). */
    struct logmom *mom = ll_calloc(4 * np, sizeof *mom);
    for (size_t i = 0; i < np; i++) {
        rb[i] = (size_t)hist_percentile_rank(ps[i], nb);
        rc[i] = (size_t)hist_percentile_rank(ps[i], nc);
    }
    struct rng r;
    rng_seed(&r, seed, 0);
    for (unsigned b = 0; b < resamples; b++) {
        resample_pcts(&r, &xb, counts, rb, np, qb);
        resample_pcts(&r, &xc, counts, rc, np, qc);
        for (size_t i = 0; i < np; i++) {
            ratios[i * resamples + b] = qb[i] > 0 ? qc[i] / qb[i] - 1.0 : NAN;
            logmom_add(&mom[4 * i], qb[i]);
            logmom_add(&mom[4 * i + 1], qc[i]);
        }
    }
    size_t L2b = second_block(sb), L2c = second_block(sc);
    for (int side = 0; side < 2; side++) {
        size_t L2 = side ? L2c : L2b;
        if (L2 != 0)
            resample_moments(&r, side ? sc : sb, L2, counts, side ? rc : rb, np, resamples, qb,
                             mom + 2 + side);
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
        const struct logmom *mi = mom + 4 * i;
        double wb = side_var(&mi[0], L2b ? &mi[2] : NULL, sb, L2b);
        double wc = side_var(&mi[1], L2c ? &mi[3] : NULL, sc, L2c);
        widen_few_blocks(&out[i], mi, wb, wc, sb, sc);
    }
    free(xb.rank_of);
    free(xc.rank_of);
    free(rb);
    free(rc);
    free(counts);
    free(ratios);
    free(qb);
    free(qc);
    free(mom);
    return 0;
}

int cmp_bootstrap_pct(const double *base, size_t nb, const double *cand, size_t nc,
                      const double *ps, size_t np, unsigned resamples, uint64_t seed,
                      struct cmp_diff *out)
{
    struct cmp_sample b = {base, NULL, nb, 1}, c = {cand, NULL, nc, 1};
    return cmp_bootstrap_pct_blocks(&b, &c, ps, np, resamples, seed, out);
}

size_t cmp_block_max(size_t n)
{
    double m = ceil(fmin(3 * sqrt((double)n), (double)n / 3));
    return m >= 1 ? (size_t)m : 1;
}

/* The flat-top (trapezoidal) lag window of Politis and White. */
static double flat_top(double t)
{
    t = fabs(t);
    return t <= 0.5 ? 1 : t <= 1 ? 2 * (1 - t) : 0;
}

size_t cmp_block_length(const double *x, size_t n)
{
    if (n < 8)
        return 1;
    size_t kn = (size_t)fmax(5, ceil(sqrt(log10((double)n))));
    size_t mmax = (size_t)ceil(sqrt((double)n)) + kn;
    size_t lags = mmax + kn < n - 1 ? mmax + kn : n - 1;
    double mean = 0;
    for (size_t i = 0; i < n; i++)
        mean += x[i];
    mean /= (double)n;
    /* R[k]: the autocovariance at lag k (divided by n, as is usual). */
    double *R = ll_malloc((lags + 1) * sizeof *R);
    for (size_t k = 0; k <= lags; k++) {
        double s = 0;
        for (size_t t = 0; t + k < n; t++)
            s += (x[t] - mean) * (x[t + k] - mean);
        R[k] = s / (double)n;
    }
    size_t b = 1;
    if (!(R[0] > 0))
        goto done;
    /* m: the first lag after which kn autocorrelations in a row are
     * insignificant. */
    double crit = 2 * sqrt(log10((double)n) / (double)n);
    size_t m = mmax;
    for (size_t mm = 0; mm <= mmax; mm++) {
        size_t k = 1;
        while (k <= kn && mm + k <= lags && fabs(R[mm + k] / R[0]) < crit)
            k++;
        if (k > kn || mm + k > lags) {
            m = mm;
            break;
        }
    }
    size_t M = 2 * m < mmax ? 2 * m : mmax;
    if (M > lags)
        M = lags;
    double g0 = R[0], G = 0;
    for (size_t k = 1; k <= M; k++) {
        double w = flat_top((double)k / (double)M);
        g0 += 2 * w * R[k];
        G += 2 * w * (double)k * R[k];
    }
    if (!(g0 > 0))
        goto done;
    double D = 4.0 / 3.0 * g0 * g0;
    double bb = cbrt(2 * G * G / D) * cbrt((double)n);
    size_t bmax = cmp_block_max(n);
    if (bb >= (double)bmax)
        b = bmax;
    else if (bb > 1)
        b = (size_t)llround(bb);
done:
    free(R);
    return b;
}

size_t cmp_pct_block_length(const double *x, size_t n, const double *ps, size_t np,
                            size_t floor_len)
{
    if (n == 0)
        return 1;
    size_t b = floor_len > 1 ? floor_len : 1;
    double *sorted = ll_malloc(n * sizeof *sorted), *ind = ll_malloc(n * sizeof *ind);
    memcpy(sorted, x, n * sizeof *sorted);
    qsort(sorted, n, sizeof *sorted, cmp_double);
    for (size_t i = 0; i < np; i++) {
        if (!cmp_pct_enough(n, ps[i]))
            continue;
        double q = cmp_percentile_sorted(sorted, n, ps[i]);
        for (size_t t = 0; t < n; t++)
            ind[t] = x[t] <= q ? 1.0 : 0.0;
        size_t l = cmp_block_length(ind, n);
        if (l > b)
            b = l;
    }
    free(sorted);
    free(ind);
    size_t bmax = cmp_block_max(n);
    return b < bmax ? b : bmax;
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

/* cmp_total_ratio when one side's total is 0 and the other's, s with
 * variance v, is not: given the events of both sides, each is the
 * candidate's with probability p = rc / (rc + rb / scale), so the ratio
 * of rates is p / (1 - p) x scale. The nonzero side stands for s^2 / v
 * events (s for a count; a token total's events of its mean size), all
 * of them its own: p's exact (Clopper-Pearson) interval at 0 of n, an
 * upper bound of 1 - 0.025^(1/n) (or at n of n, a lower bound of
 * 0.025^(1/n)), bounds the ratio on one side, and the point is -100% (or
 * no finite value). Not Wilson's, whose bound at the edge is too narrow
 * for few events: it read 5 goodput events against 0, in two identical
 * sweeps' overloaded 28 req/s steps against llama.cpp, as better
 * [+30.2%, +inf], where all 5 falling on one side of equal rates has a
 * chance of 2 x 0.5^5 = 6%. */
static struct cmp_diff total_ratio_one_zero(double s, double v, int cand_zero, double scale)
{
    struct cmp_diff d = {0};
    double n = v > 0 ? floor(s * s / v) : 0;
    if (!(n >= 1))
        return d;
    double edge = pow(CMP_TAIL95, 1.0 / n); /* P(all n on one side) = edge^n */
    d.ok = 1;
    if (cand_zero) {
        double hi = 1 - edge;
        d.diff = d.lo = -1.0;
        d.hi = hi / (1 - hi) * scale - 1.0;
    } else {
        d.diff = d.hi = INFINITY;
        d.lo = edge / (1 - edge) * scale - 1.0;
    }
    return d;
}

struct cmp_diff cmp_total_ratio(double sb, double vb, double sc, double vc, double scale)
{
    struct cmp_diff d = {0};
    if (!(scale > 0) || !(sb >= 0) || !(sc >= 0) || (sb == 0 && sc == 0))
        return d;
    if (sb == 0 || sc == 0)
        return total_ratio_one_zero(sb > 0 ? sb : sc, sb > 0 ? vb : vc, sc == 0, scale);
    double l = log(sc / sb * scale);
    double se = sqrt(vb / (sb * sb) + vc / (sc * sc));
    d.ok = 1;
    d.diff = exp(l) - 1.0;
    d.lo = exp(l - CMP_Z95 * se) - 1.0;
    d.hi = exp(l + CMP_Z95 * se) - 1.0;
    return d;
}

int cmp_kept_up(uint64_t served, uint64_t scheduled)
{
    return (double)served >= CMP_KEPT_UP_SHARE * (double)scheduled;
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
        char item[96];
        size_t len = ll_list_item(p, item, sizeof item);
        if (len == 0 || len >= sizeof item) {
            snprintf(err, errlen, "--fail-on: an empty or over-long item in \"%s\"", spec);
            return -1;
        }
        /* Blanks around the colon are allowed: "ttft_p99: +10%". */
        char *colon = strchr(item, ':'), rowbuf[sizeof item];
        snprintf(rowbuf, sizeof rowbuf, "%.*s", colon ? (int)(colon - item) : 0, item);
        const char *row = ll_trim(rowbuf);
        if (!colon || !*row || strlen(row) >= sizeof out->row) {
            snprintf(err, errlen, "--fail-on: \"%s\" is not ROW:+N%% or ROW:+Npp", item);
            return -1;
        }
        if (*n >= max) {
            snprintf(err, errlen, "--fail-on: more than %zu thresholds", max);
            return -1;
        }
        struct cmp_threshold *t = &out[*n];
        memset(t, 0, sizeof *t);
        snprintf(t->row, sizeof t->row, "%s", row);
        const char *a = colon + 1;
        a += strspn(a, " \t\n\v\f\r");
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
                                 int relative, double diff)
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
    double h = t975(fmax(1, df)) * sqrt(vb + vc);
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
    /* A difference of exactly the threshold is not past it: 98.5% less
     * 99.5% reads -0.010000000000000009, which failed "-1pp"
     * (stats_share_cmp). */
    if (stats_share_cmp(w, lim) > 0 && a > 0)
        return CMP_GATE_FAIL;
    if (stats_share_cmp(b, lim) > 0)
        return CMP_GATE_INCONCLUSIVE;
    return CMP_GATE_PASS;
}
