/* hist.c: log-linear histogram with bounded relative error.
 *
 * Layout of the bucket array (index -> values):
 *   0 .. 255                     one bucket per value, exact;
 *   256 + (m - 8) * 128 + (s - 128)  for a value v whose highest set bit is m
 *                                (8 <= m <= 46) and s = v >> (m - 7), the
 *                                top 8 bits of v (128 <= s <= 255).
 * A bucket above the exact range holds 2^(m-7) consecutive values starting
 * at s << (m - 7), so its width over its lowest value is 1/s <= 1/128. */
#include "measure/hist.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"

/* Highest bit a non-overflow value can have: HIST_MAX_VALUE = 2^47. */
#define HIST_TOP_BIT 46
#define HIST_BUCKETS \
    (HIST_EXACT_BELOW + (HIST_TOP_BIT - 7) * HIST_SUB_BUCKETS)

struct hist {
    uint64_t count;     /* values recorded, overflow included */
    uint64_t overflow;  /* values >= HIST_MAX_VALUE */
    uint64_t min;       /* exact smallest value; UINT64_MAX while empty */
    uint64_t max;       /* exact largest value; 0 while empty */
    uint64_t sum_hi;    /* sum of every value, as a 128-bit number */
    uint64_t sum_lo;
    uint64_t buckets[HIST_BUCKETS];
};

static size_t hist_index(uint64_t v)
{
    if (v < HIST_EXACT_BELOW)
        return (size_t)v;
    unsigned m = 63u - (unsigned)__builtin_clzll(v);
    unsigned shift = m - 7u;
    uint64_t s = v >> shift;
    return HIST_EXACT_BELOW + (size_t)(m - 8u) * HIST_SUB_BUCKETS +
           (size_t)(s - HIST_SUB_BUCKETS);
}

static void hist_bounds(size_t idx, uint64_t *lo, uint64_t *hi)
{
    if (idx < HIST_EXACT_BELOW) {
        *lo = *hi = idx;
        return;
    }
    size_t j = idx - HIST_EXACT_BELOW;
    unsigned shift = (unsigned)(j / HIST_SUB_BUCKETS) + 1u;
    uint64_t s = HIST_SUB_BUCKETS + (uint64_t)(j % HIST_SUB_BUCKETS);
    *lo = s << shift;
    *hi = *lo + (((uint64_t)1 << shift) - 1);
}

/* The full 128-bit product a * b, from 32-bit halves. */
static void mul_64x64(uint64_t a, uint64_t b, uint64_t *hi, uint64_t *lo)
{
    uint64_t a_lo = a & 0xffffffffu, a_hi = a >> 32;
    uint64_t b_lo = b & 0xffffffffu, b_hi = b >> 32;
    uint64_t ll = a_lo * b_lo, lh = a_lo * b_hi;
    uint64_t hl = a_hi * b_lo, hh = a_hi * b_hi;
    uint64_t mid = (ll >> 32) + (lh & 0xffffffffu) + (hl & 0xffffffffu);
    *lo = (mid << 32) | (ll & 0xffffffffu);
    *hi = hh + (lh >> 32) + (hl >> 32) + (mid >> 32);
}

static void sum_add(struct hist *h, uint64_t hi, uint64_t lo)
{
    uint64_t old = h->sum_lo;
    h->sum_lo += lo;
    h->sum_hi += hi + (h->sum_lo < old);
}

struct hist *hist_new(void)
{
    struct hist *h = ll_malloc(sizeof(*h));
    hist_reset(h);
    return h;
}

void hist_free(struct hist *h)
{
    free(h);
}

void hist_reset(struct hist *h)
{
    memset(h, 0, sizeof(*h));
    h->min = UINT64_MAX;
}

void hist_record(struct hist *h, uint64_t v)
{
    /* hist_record_n(h, v, 1) without the 128-bit multiply: the hot path. */
    if (v >= HIST_MAX_VALUE)
        h->overflow++;
    else
        h->buckets[hist_index(v)]++;
    h->count++;
    if (v < h->min)
        h->min = v;
    if (v > h->max)
        h->max = v;
    sum_add(h, 0, v);
}

void hist_record_n(struct hist *h, uint64_t v, uint64_t n)
{
    if (n == 0)
        return;
    if (v >= HIST_MAX_VALUE)
        h->overflow += n;
    else
        h->buckets[hist_index(v)] += n;
    h->count += n;
    if (v < h->min)
        h->min = v;
    if (v > h->max)
        h->max = v;
    uint64_t hi, lo;
    mul_64x64(v, n, &hi, &lo);
    sum_add(h, hi, lo);
}

void hist_merge(struct hist *dst, const struct hist *src)
{
    if (src->count == 0)
        return;
    for (size_t i = 0; i < HIST_BUCKETS; i++)
        dst->buckets[i] += src->buckets[i];
    /* Read src's totals before writing dst's: dst may be src. */
    uint64_t count = src->count, overflow = src->overflow;
    uint64_t sum_hi = src->sum_hi, sum_lo = src->sum_lo;
    if (src->min < dst->min)
        dst->min = src->min;
    if (src->max > dst->max)
        dst->max = src->max;
    dst->count += count;
    dst->overflow += overflow;
    sum_add(dst, sum_hi, sum_lo);
}

uint64_t hist_count(const struct hist *h)
{
    return h->count;
}

uint64_t hist_overflow(const struct hist *h)
{
    return h->overflow;
}

uint64_t hist_min(const struct hist *h)
{
    return h->count ? h->min : 0;
}

uint64_t hist_max(const struct hist *h)
{
    return h->max;
}

double hist_mean(const struct hist *h)
{
    if (h->count == 0)
        return 0.0;
    long double sum = (long double)h->sum_hi * 18446744073709551616.0L +
                      (long double)h->sum_lo;
    return (double)(sum / (long double)h->count);
}

uint64_t hist_percentile_rank(double pct, uint64_t n)
{
    if (n == 0)
        return 0;
    if (!(pct > 0.0))
        return 1;
    if (pct >= 100.0)
        return n;
    /* pct itself is a binary approximation (99.9 is 99.900000000000006),
     * so take off a relative 1e-15 before rounding up: a product meant to
     * be an integer stays that integer. */
    long double x = (long double)pct * (long double)n / 100.0L;
    x -= x * 1e-15L;
    uint64_t rank = (uint64_t)x;
    if ((long double)rank < x)
        rank++;
    if (rank < 1)
        rank = 1;
    if (rank > n)
        rank = n;
    return rank;
}

uint64_t hist_percentile(const struct hist *h, double pct)
{
    return hist_rank_value(h, hist_percentile_rank(pct, h->count));
}

uint64_t hist_rank_value(const struct hist *h, uint64_t rank)
{
    uint64_t n = h->count;
    if (n == 0)
        return 0;
    if (rank < 1)
        rank = 1;
    if (rank > n)
        rank = n;
    uint64_t in_range = n - h->overflow;
    if (rank == 1)
        return h->min;
    if (rank == n || rank > in_range)
        return h->max;

    /* Find the bucket holding the rank-th smallest value, walking from
     * whichever end is nearer. */
    size_t idx = 0;
    if (rank <= in_range / 2) {
        uint64_t cum = 0;
        for (idx = 0; idx < HIST_BUCKETS; idx++) {
            cum += h->buckets[idx];
            if (cum >= rank)
                break;
        }
    } else {
        uint64_t from_top = in_range - rank + 1, cum = 0;
        for (idx = HIST_BUCKETS; idx-- > 0;) {
            cum += h->buckets[idx];
            if (cum >= from_top)
                break;
        }
    }
    uint64_t lo, hi;
    hist_bounds(idx, &lo, &hi);
    uint64_t mid = lo + (hi - lo) / 2;
    if (mid < h->min)
        mid = h->min;
    if (mid > h->max)
        mid = h->max;
    return mid;
}

int hist_iter_next(const struct hist *h, size_t *cursor, uint64_t *lo,
                   uint64_t *hi, uint64_t *count)
{
    size_t i = *cursor;
    for (; i < HIST_BUCKETS; i++) {
        if (h->buckets[i]) {
            hist_bounds(i, lo, hi);
            *count = h->buckets[i];
            *cursor = i + 1;
            return 1;
        }
    }
    if (i == HIST_BUCKETS && h->overflow) {
        *lo = HIST_MAX_VALUE;
        *hi = h->max;
        *count = h->overflow;
        *cursor = HIST_BUCKETS + 1;
        return 1;
    }
    *cursor = HIST_BUCKETS + 1;
    return 0;
}

/* Longest text of one field: a space, "+", 20 digits, ":", 20 digits. */
#define HIST_FIELD_MAX 48

char *hist_to_string(const struct hist *h)
{
    size_t nonempty = 0;
    for (size_t i = 0; i < HIST_BUCKETS; i++)
        nonempty += h->buckets[i] != 0;
    size_t cap = (7 + nonempty) * HIST_FIELD_MAX + 1;
    char *buf = ll_malloc(cap);
    size_t pos = 0;
    int w = snprintf(buf, cap, "llh1 %llu %llu %llu %llu %llu %llu",
                     (unsigned long long)h->count,
                     (unsigned long long)hist_min(h),
                     (unsigned long long)h->max,
                     (unsigned long long)h->sum_hi,
                     (unsigned long long)h->sum_lo,
                     (unsigned long long)h->overflow);
    pos = (size_t)w;
    size_t prev = 0;
    int first = 1;
    for (size_t i = 0; i < HIST_BUCKETS; i++) {
        if (!h->buckets[i])
            continue;
        if (first)
            w = snprintf(buf + pos, cap - pos, " %zu:%llu", i,
                         (unsigned long long)h->buckets[i]);
        else
            w = snprintf(buf + pos, cap - pos, " +%zu:%llu", i - prev,
                         (unsigned long long)h->buckets[i]);
        pos += (size_t)w;
        prev = i;
        first = 0;
    }
    return buf;
}

static int hist_parse_fail(struct hist *h, char *err, size_t errlen,
                           const char *why)
{
    hist_reset(h);
    if (errlen)
        snprintf(err, errlen, "histogram: %s", why);
    return LL_E_INVAL;
}

int hist_from_string(struct hist *h, const char *s, char *err, size_t errlen)
{
    static const char *const names[6] = {"count", "min", "max", "sum_hi",
                                         "sum_lo", "overflow"};
    uint64_t head[6];
    char why[96];

    hist_reset(h);
    if (strncmp(s, "llh1", 4) != 0)
        return hist_parse_fail(h, err, errlen,
                               "expected a string starting with \"llh1\"");
    const char *p = s + 4;
    for (int k = 0; k < 6; k++) {
        if (*p != ' ' || (p++, ll_scan_u64(&p, &head[k]) != 0)) {
            snprintf(why, sizeof(why), "expected a number for %s", names[k]);
            return hist_parse_fail(h, err, errlen, why);
        }
    }
    uint64_t count = head[0], min = head[1], max = head[2];
    uint64_t overflow = head[5];

    uint64_t total = overflow;
    size_t idx = 0, first_idx = 0;
    int first = 1;
    while (*p == ' ') {
        p++;
        int rel = 0;
        uint64_t at, n;
        if (*p == '+') {
            rel = 1;
            p++;
        }
        if (ll_scan_u64(&p, &at) != 0 || *p != ':' || (p++, ll_scan_u64(&p, &n) != 0))
            return hist_parse_fail(h, err, errlen,
                                   "expected a bucket as INDEX:COUNT or "
                                   "+DELTA:COUNT");
        if (rel == first || (rel && at == 0) || n == 0)
            return hist_parse_fail(h, err, errlen,
                                   "buckets must be non-empty and in "
                                   "increasing order");
        if (at >= HIST_BUCKETS || (rel && idx + at >= HIST_BUCKETS))
            return hist_parse_fail(h, err, errlen, "bucket index out of range");
        idx = rel ? idx + (size_t)at : (size_t)at;
        if (first)
            first_idx = idx;
        first = 0;
        if (total > UINT64_MAX - n)
            return hist_parse_fail(h, err, errlen, "counts overflow");
        total += n;
        h->buckets[idx] = n;
    }
    if (*p == '\n')
        p++;
    if (*p != '\0')
        return hist_parse_fail(h, err, errlen, "unexpected text after the "
                                               "buckets");
    if (total != count)
        return hist_parse_fail(h, err, errlen,
                               "bucket counts do not add up to the count");

    /* min and max must be consistent with the buckets that hold them. */
    if (count == 0) {
        if (min || max || head[3] || head[4])
            return hist_parse_fail(h, err, errlen,
                                   "an empty histogram has non-zero totals");
    } else {
        uint64_t lo, hi;
        if (min > max)
            return hist_parse_fail(h, err, errlen, "min is above max");
        if (!first) {
            hist_bounds(first_idx, &lo, &hi);
            if (min < lo || min > hi)
                return hist_parse_fail(h, err, errlen,
                                       "min is not in the lowest bucket");
        } else if (min < HIST_MAX_VALUE) {
            return hist_parse_fail(h, err, errlen,
                                   "min is below the overflow range");
        }
        if (overflow) {
            if (max < HIST_MAX_VALUE)
                return hist_parse_fail(h, err, errlen,
                                       "max is below the overflow range");
        } else {
            hist_bounds(idx, &lo, &hi);
            if (max < lo || max > hi)
                return hist_parse_fail(h, err, errlen,
                                       "max is not in the highest bucket");
        }
    }
    h->count = count;
    h->overflow = overflow;
    h->min = count ? min : UINT64_MAX;
    h->max = max;
    h->sum_hi = head[3];
    h->sum_lo = head[4];
    return 0;
}

int hist_write(const struct hist *h, FILE *f)
{
    char *s = hist_to_string(h);
    int rc = 0;
    if (fputs(s, f) == EOF || fputc('\n', f) == EOF)
        rc = LL_E_IO;
    free(s);
    return rc;
}
