/* dist.c: parse, sample and print the DIST grammar of dist.h. */
#include "workload/dist.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"

/* Positional arguments a kind can take, at most. */
#define DIST_MAX_POS 2
/* Smallest probability mass a truncation interval may keep. */
#define DIST_MIN_MASS 1e-3
/* Largest magnitude of a plain value: far beyond any length, small enough
 * that sums and products of parameters stay finite. */
#define DIST_VALUE_MAX 1e15
/* Bounds that keep exp() and the gamma sampler finite and fast. */
#define DIST_LOG_MU_MAX 100.0
#define DIST_SIGMA_MAX 10.0
#define DIST_GAMMA_K_MAX 1e6

struct kind_info {
    const char *name;
    enum dist_kind kind;
    int npos;            /* positional arguments */
    const char *usage;   /* what was expected, for error messages */
};

static const struct kind_info kinds[] = {
    {"fixed", DIST_FIXED, 1, "expected N"},
    {"uniform", DIST_UNIFORM, 2, "expected A,B with A <= B"},
    {"normal", DIST_NORMAL, 2, "expected MU,SD with SD >= 0"},
    {"lognormal", DIST_LOGNORMAL, 2,
     "expected MU,SIGMA or median=M,sigma=S with SIGMA >= 0 and M > 0"},
    {"exponential", DIST_EXPONENTIAL, 1, "expected MEAN with MEAN > 0"},
    {"gamma", DIST_GAMMA, 2, "expected K,THETA with K > 0 and THETA > 0"},
};

const char *dist_kind_name(enum dist_kind k)
{
    for (size_t i = 0; i < LL_ARRAY_LEN(kinds); i++)
        if (kinds[i].kind == k)
            return kinds[i].name;
    return "unknown";
}

/* Trim spaces and tabs from both ends of s, in place; returns the start. */
static char *trim(char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
        s[--n] = '\0';
    return s;
}

/* Parse one value in the distribution's unit. Returns 0, or writes a
 * reason ("\"x\" is not a number") into why and returns LL_E_INVAL. */
static int parse_value(const char *s, enum dist_unit unit, double *out,
                       char *why, size_t whylen)
{
    if (unit == DIST_UNIT_DURATION_NS) {
        uint64_t ns;
        int rc = ll_parse_duration_ns(s, LL_NS_PER_SEC, &ns);
        if (rc == LL_E_RANGE && *s == '-') {
            snprintf(why, whylen, "\"%s\" is negative (durations are >= 0)",
                     s);
            return LL_E_INVAL;
        }
        if (rc != 0) {
            snprintf(why, whylen,
                     "\"%s\" is not a duration such as 500ms or 2s", s);
            return LL_E_INVAL;
        }
        *out = (double)ns;
        return 0;
    }
    if (ll_parse_count(s, out) != 0) {
        snprintf(why, whylen, "\"%s\" is not a number", s);
        return LL_E_INVAL;
    }
    if (fabs(*out) > DIST_VALUE_MAX) {
        snprintf(why, whylen, "\"%s\" is beyond +-%g", s, DIST_VALUE_MAX);
        return LL_E_INVAL;
    }
    return 0;
}

/* Parse a unitless number (gamma's K, lognormal's MU and SIGMA). */
static int parse_plain(const char *s, double *out, char *why, size_t whylen)
{
    if (ll_parse_double(s, out) != 0) {
        snprintf(why, whylen, "\"%s\" is not a number", s);
        return LL_E_INVAL;
    }
    return 0;
}

/* Standard normal upper tail, accurate far out: P(Z > x). */
static double normal_q(double x)
{
    return 0.5 * erfc(x / M_SQRT2);
}

/* Probability mass of the standard normal in [lo, hi]. */
static double normal_mass(double lo, double hi)
{
    if (lo > 0)
        return normal_q(lo) - normal_q(hi);
    return normal_q(-hi) - normal_q(-lo);
}

/* Draws gamma_mass estimates a gamma's truncated mass from. */
#define DIST_GAMMA_MASS_DRAWS 20000

/* The share of DIST_GAMMA_MASS_DRAWS draws of d (a gamma) inside [min,
 * max], from a fixed stream, so one spec always gets the same verdict.
 * Gamma's CDF has no closed form in libm; without this check
 * "gamma:2,1,min=60,max=61" was accepted and every sample clamped. About
 * a millisecond, once per spec parsed. */
static double gamma_mass(const struct dist *d)
{
    struct rng r;
    rng_seed(&r, 0x67616D6D61ULL, 0);
    unsigned in = 0;
    for (unsigned i = 0; i < DIST_GAMMA_MASS_DRAWS; i++) {
        double x = rng_gamma(&r, d->a, d->b);
        in += x >= d->min && x <= d->max;
    }
    return (double)in / DIST_GAMMA_MASS_DRAWS;
}

/* The mass of d's distribution inside [min, max]: exact, or for gamma
 * estimated by drawing (gamma_mass). */
static double trunc_mass(const struct dist *d)
{
    double lo = d->min, hi = d->max;
    switch (d->kind) {
    case DIST_FIXED:
        return d->a >= lo && d->a <= hi ? 1.0 : 0.0;
    case DIST_UNIFORM:
        if (d->a == d->b)
            return d->a >= lo && d->a <= hi ? 1.0 : 0.0;
        return fmax(0.0, fmin(hi, d->b) - fmax(lo, d->a)) / (d->b - d->a);
    case DIST_NORMAL:
        if (d->b == 0)
            return d->a >= lo && d->a <= hi ? 1.0 : 0.0;
        return normal_mass((lo - d->a) / d->b, (hi - d->a) / d->b);
    case DIST_LOGNORMAL: {
        double llo = lo > 0 ? log(lo) : -INFINITY;
        double lhi = hi > 0 ? log(hi) : -INFINITY;
        if (d->b == 0)
            return d->a >= llo && d->a <= lhi ? 1.0 : 0.0;
        return normal_mass((llo - d->a) / d->b, (lhi - d->a) / d->b);
    }
    case DIST_EXPONENTIAL:
        return exp(-fmax(lo, 0.0) / d->a) - exp(-fmax(hi, 0.0) / d->a);
    case DIST_GAMMA: return gamma_mass(d);
    }
    return -1.0;
}

/* The keyed arguments one spec may carry. */
struct keyed {
    const char *min, *max, *median, *sigma;
};

/* A spec's arguments split on commas: views into the caller's copy. */
struct dist_args {
    const char *pos[DIST_MAX_POS];
    int npos;
    struct keyed kv;
};

/* The kind named kname, or NULL (with the message in err) when there is
 * none. "empirical" gets its own message: it is a kind we mean to add. */
static const struct kind_info *find_kind(const char *kname, char *err,
                                         size_t errlen)
{
    const struct kind_info *k = NULL;
    for (size_t i = 0; i < LL_ARRAY_LEN(kinds); i++)
        if (strcmp(kname, kinds[i].name) == 0)
            k = &kinds[i];
    if (k)
        return k;
    if (strcmp(kname, "empirical") == 0)
        ll_errf(err, errlen,
                "empirical:FILE is not supported yet (use fixed, "
                "uniform, normal, lognormal, exponential or gamma)");
    else
        ll_errf(err, errlen,
                "unknown distribution \"%s\" (expected fixed, uniform, "
                "normal, lognormal, exponential or gamma)",
                kname);
    return NULL;
}

/* Record one key=value token of kind k in kv; the key and value are
 * trimmed in place. Returns 0, or LL_E_INVAL for a key k does not take or
 * one given twice. */
static int split_keyed(const struct kind_info *k, char *tok, char *eq,
                       struct keyed *kv, char *err, size_t errlen)
{
    *eq = '\0';
    char *key = trim(tok), *val = trim(eq + 1);
    const char **slot = NULL;
    if (strcmp(key, "min") == 0)
        slot = &kv->min;
    else if (strcmp(key, "max") == 0)
        slot = &kv->max;
    else if (k->kind == DIST_LOGNORMAL && strcmp(key, "median") == 0)
        slot = &kv->median;
    else if (k->kind == DIST_LOGNORMAL && strcmp(key, "sigma") == 0)
        slot = &kv->sigma;
    if (!slot)
        return ll_errf(err, errlen,
                       "%s: unknown option \"%s=%s\" (expected "
                       "%smin=X or max=Y)",
                       k->name, key, val, k->kind == DIST_LOGNORMAL ? "median=M, sigma=S, " : "");
    if (*slot)
        return ll_errf(err, errlen, "%s: %s= given twice", k->name, key);
    *slot = val;
    return 0;
}

/* Split args (written to in place) on commas into a: positional values
 * first, then key=value. shown is the trimmed text for messages. Returns 0
 * or LL_E_INVAL: a positional value after a key, too many, or an empty one. */
static int split_args(const struct kind_info *k, char *args, const char *shown,
                      struct dist_args *a, char *err, size_t errlen)
{
    char *p = args;
    for (;;) {
        char *comma = strchr(p, ',');
        if (comma)
            *comma = '\0';
        char *tok = trim(p);
        char *eq = strchr(tok, '=');
        if (eq) {
            int rc = split_keyed(k, tok, eq, &a->kv, err, errlen);
            if (rc)
                return rc;
        } else {
            const struct keyed *kv = &a->kv;
            if (kv->min || kv->max || kv->median || kv->sigma ||
                a->npos == k->npos || *tok == '\0')
                return ll_errf(err, errlen, "%s: %s, got \"%s\"", k->name, k->usage, shown);
            a->pos[a->npos++] = tok;
        }
        if (!comma)
            return 0;
        p = comma + 1;
    }
}

/* Lognormal by median=M,sigma=S: both keys, no positional values, M > 0
 * and S >= 0. Sets d->median, d->b, d->a = log(M) and d->by_median.
 * Returns 0 or LL_E_INVAL with the message in err. */
static int parse_median_form(const struct kind_info *k,
                             const struct dist_args *a, enum dist_unit unit,
                             const char *shown, struct dist *d, char *err,
                             size_t errlen)
{
    char why[DIST_SPEC_MAX + 64];
    if (a->npos != 0 || !a->kv.median || !a->kv.sigma)
        return ll_errf(err, errlen, "%s: %s, got \"%s\"", k->name, k->usage, shown);
    int rc = parse_value(a->kv.median, unit, &d->median, why, sizeof(why));
    if (!rc)
        rc = parse_plain(a->kv.sigma, &d->b, why, sizeof(why));
    if (rc)
        return ll_errf(err, errlen, "%s: %s (%s)", k->name, why, k->usage);
    if (!(d->median > 0) || d->b < 0)
        return ll_errf(err, errlen, "%s: %s, got \"%s\"", k->name, k->usage, shown);
    d->by_median = 1;
    d->a = log(d->median);
    return 0;
}

/* Parse the kind's own parameters (d->a, d->b, and for lognormal by median
 * d->median) from a. Returns 0 or LL_E_INVAL with the message in err. */
static int parse_params(const struct kind_info *k, const struct dist_args *a,
                        enum dist_unit unit, const char *shown,
                        struct dist *d, char *err, size_t errlen)
{
    char why[DIST_SPEC_MAX + 64];
    int rc = 0;
    why[0] = '\0';
    if (k->kind == DIST_LOGNORMAL && (a->kv.median || a->kv.sigma))
        return parse_median_form(k, a, unit, shown, d, err, errlen);
    if (a->npos != k->npos) {
        return ll_errf(err, errlen, "%s: %s, got \"%s\"", k->name, k->usage, shown);
    } else if (k->kind == DIST_LOGNORMAL) {
        if (unit == DIST_UNIT_DURATION_NS)
            return ll_errf(err, errlen,
                           "lognormal: for a duration write median=M,sigma=S "
                           "(e.g. lognormal:median=2s,sigma=0.5), got \"%s\"",
                           shown);
        rc = parse_plain(a->pos[0], &d->a, why, sizeof(why));
        if (!rc)
            rc = parse_plain(a->pos[1], &d->b, why, sizeof(why));
    } else if (k->kind == DIST_GAMMA) {
        rc = parse_plain(a->pos[0], &d->a, why, sizeof(why));
        if (!rc)
            rc = parse_value(a->pos[1], unit, &d->b, why, sizeof(why));
    } else {
        rc = parse_value(a->pos[0], unit, &d->a, why, sizeof(why));
        if (!rc && a->npos == 2)
            rc = parse_value(a->pos[1], unit, &d->b, why, sizeof(why));
    }
    if (rc)
        return ll_errf(err, errlen, "%s: %s (%s)", k->name, why, k->usage);
    return 0;
}

/* Check d's parameters against kind k's ranges: the usage rule, then the
 * bounds that keep sampling finite. Returns 0 or LL_E_INVAL with the
 * message in err. */
static int check_params(const struct kind_info *k, const struct dist *d,
                        const char *shown, char *err, size_t errlen)
{
    int ok = 1;
    switch (k->kind) {
    case DIST_FIXED: break;
    case DIST_UNIFORM: ok = d->a <= d->b; break;
    case DIST_NORMAL: ok = d->b >= 0; break;
    case DIST_LOGNORMAL: ok = d->b >= 0; break;
    case DIST_EXPONENTIAL: ok = d->a > 0; break;
    case DIST_GAMMA: ok = d->a > 0 && d->b > 0; break;
    }
    if (!ok)
        return ll_errf(err, errlen, "%s: %s, got \"%s\"", k->name, k->usage, shown);
    if (k->kind == DIST_LOGNORMAL &&
        (d->b > DIST_SIGMA_MAX || fabs(d->a) > DIST_LOG_MU_MAX))
        return ll_errf(err, errlen,
                       "lognormal: expected SIGMA <= %g and |MU| <= %g, got "
                       "\"%s\"",
                       DIST_SIGMA_MAX, DIST_LOG_MU_MAX, shown);
    if (k->kind == DIST_GAMMA && d->a > DIST_GAMMA_K_MAX)
        return ll_errf(err, errlen, "gamma: expected K <= %g, got \"%s\"", DIST_GAMMA_K_MAX, shown);
    return 0;
}

/* Apply min= and max= from kv to d (d->min, d->max, has_min, has_max).
 * Returns 0, or LL_E_INVAL when a bound does not parse, min is above max,
 * or the interval keeps less than DIST_MIN_MASS of the distribution. */
static int parse_truncation(const struct kind_info *k, const struct keyed *kv,
                            enum dist_unit unit, struct dist *d, char *err,
                            size_t errlen)
{
    char why[DIST_SPEC_MAX + 64];
    if (kv->min) {
        if (parse_value(kv->min, unit, &d->min, why, sizeof(why)))
            return ll_errf(err, errlen, "%s: min=: %s", k->name, why);
        d->has_min = 1;
    }
    if (kv->max) {
        if (parse_value(kv->max, unit, &d->max, why, sizeof(why)))
            return ll_errf(err, errlen, "%s: max=: %s", k->name, why);
        d->has_max = 1;
    }
    if (d->min > d->max)
        return ll_errf(err, errlen, "%s: min=%s is above max=%s", k->name, kv->min, kv->max);
    if (d->has_min || d->has_max) {
        double mass = trunc_mass(d);
        if (mass >= 0 && mass < DIST_MIN_MASS)
            return ll_errf(err, errlen,
                           "%s: min=%s,max=%s keeps only %.3g%% of the "
                           "distribution (expected at least %g%%)",
                           k->name, kv->min ? kv->min : "-", kv->max ? kv->max : "-", 100.0 * mass,
                           100.0 * DIST_MIN_MASS);
    }
    return 0;
}

/* A spec with KIND:ARGS, s trimmed and colon at its ':' (both in the
 * caller's copy, written to in place). Fills *d (unit and bounds already
 * set) and returns 0, or LL_E_INVAL with the message in err. */
static int parse_kind_args(char *s, char *colon, enum dist_unit unit,
                           struct dist *d, char *err, size_t errlen)
{
    char args_text[DIST_SPEC_MAX];
    *colon = '\0';
    const struct kind_info *k = find_kind(trim(s), err, errlen);
    if (!k)
        return LL_E_INVAL;
    d->kind = k->kind;

    char *args = colon + 1;
    memcpy(args_text, args, strlen(args) + 1);
    const char *shown = trim(args_text);
    struct dist_args a = {.npos = 0, .kv = {NULL, NULL, NULL, NULL}};
    int rc = split_args(k, args, shown, &a, err, errlen);
    if (!rc)
        rc = parse_params(k, &a, unit, shown, d, err, errlen);
    if (!rc)
        rc = check_params(k, d, shown, err, errlen);
    if (!rc)
        rc = parse_truncation(k, &a.kv, unit, d, err, errlen);
    return rc;
}

/* Parse spec (see dist.h for the grammar): a bare value is fixed, else
 * KIND:ARGS. The spec is copied, trimmed and split in a stack buffer, so
 * nothing is allocated and spec is not written to. */
int dist_parse(const char *spec, enum dist_unit unit, struct dist *out,
               char *err, size_t errlen)
{
    char buf[DIST_SPEC_MAX], why[DIST_SPEC_MAX + 64];
    struct dist d;

    if (strlen(spec) >= sizeof(buf))
        return ll_errf(err, errlen, "distribution spec longer than %d bytes", DIST_SPEC_MAX - 1);
    memcpy(buf, spec, strlen(spec) + 1);
    char *s = trim(buf);
    memset(&d, 0, sizeof(d));
    d.unit = unit;
    d.min = -INFINITY;
    d.max = INFINITY;

    if (*s == '\0')
        return ll_errf(err, errlen,
                       "empty distribution (expected e.g. 500, uniform:100,900 "
                       "or exponential:2s)");

    char *colon = strchr(s, ':');
    if (colon) {
        int rc = parse_kind_args(s, colon, unit, &d, err, errlen);
        if (rc)
            return rc;
    } else {
        /* A bare value: fixed. */
        if (strchr(s, ',') || parse_value(s, unit, &d.a, why, sizeof(why)))
            return ll_errf(err, errlen,
                           "expected a %s or KIND:ARGS (fixed, uniform, normal, "
                           "lognormal, exponential, gamma), got \"%s\"",
                           unit == DIST_UNIT_DURATION_NS ? "duration" : "number", s);
        d.kind = DIST_FIXED;
    }
    *out = d;
    return 0;
}

int dist_require_nonneg(struct dist *d, char *err, size_t errlen)
{
    const char *name = dist_kind_name(d->kind);
    if ((d->kind == DIST_FIXED || d->kind == DIST_UNIFORM ||
         d->kind == DIST_NORMAL) && d->a < 0)
        return ll_errf(err, errlen,
                       "%s: %s must be >= 0 for a quantity that cannot be "
                       "negative, got %g",
                       name,
                       d->kind == DIST_FIXED     ? "N"
                       : d->kind == DIST_UNIFORM ? "A"
                                                 : "MU",
                       d->a);
    if (d->has_min && d->min < 0)
        return ll_errf(err, errlen, "%s: min= must be >= 0, got %g", name, d->min);
    if (d->has_max && d->max < 0)
        return ll_errf(err, errlen, "%s: max= must be >= 0, got %g", name, d->max);
    if (d->kind == DIST_NORMAL && !d->has_min) {
        d->min = 0;
        d->has_min = 1;
    }
    return 0;
}

static double draw(const struct dist *d, struct rng *r)
{
    switch (d->kind) {
    case DIST_FIXED:
        return d->a;
    case DIST_UNIFORM:
        return d->a + (d->b - d->a) * rng_uniform(r);
    case DIST_NORMAL:
        return d->a + d->b * rng_normal(r);
    case DIST_LOGNORMAL:
        return exp(d->a + d->b * rng_normal(r));
    case DIST_EXPONENTIAL:
        return rng_exponential(r, d->a);
    case DIST_GAMMA:
        return rng_gamma(r, d->a, d->b);
    }
    return 0.0;
}

uint32_t dist_to_tokens(double v)
{
    if (!(v >= 1.0))
        return 1;
    if (v > (double)DIST_TOKENS_MAX)
        return DIST_TOKENS_MAX;
    return (uint32_t)llround(v);
}

double dist_sample_counted(const struct dist *d, struct rng *r,
                           uint64_t *clamped)
{
    double x = draw(d, r);
    if (!d->has_min && !d->has_max)
        return x;
    for (int i = 1; i < DIST_MAX_REDRAWS && (x < d->min || x > d->max); i++)
        x = draw(d, r);
    if (x >= d->min && x <= d->max)
        return x;
    if (clamped)
        (*clamped)++;
    return x < d->min ? d->min : d->max;
}

double dist_sample(const struct dist *d, struct rng *r)
{
    return dist_sample_counted(d, r, NULL);
}

uint64_t dist_sample_u64(const struct dist *d, struct rng *r)
{
    double x = dist_sample(d, r);
    if (!(x > 0))
        return 0;
    if (x >= 0x1.0p63)
        return (uint64_t)1 << 63;
    return (uint64_t)llround(x);
}

double dist_mean(const struct dist *d)
{
    switch (d->kind) {
    case DIST_FIXED:
    case DIST_NORMAL:
    case DIST_EXPONENTIAL:
        return d->a;
    case DIST_UNIFORM:
        return 0.5 * (d->a + d->b);
    case DIST_LOGNORMAL:
        return exp(d->a + 0.5 * d->b * d->b);
    case DIST_GAMMA:
        return d->a * d->b;
    }
    return 0.0;
}

/* A plain number in its shortest form that strtod reads back exactly. */
static void fmt_plain(double v, char *buf, size_t len)
{
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(buf, len, "%.*g", prec, v);
        if (strtod(buf, NULL) == v)
            return;
    }
}

/* v within d's truncation bounds. */
static double dist_bound(const struct dist *d, double v)
{
    if (d->has_min && v < d->min)
        v = d->min;
    if (d->has_max && v > d->max)
        v = d->max;
    return v;
}

/* The standard normal's 99th percentile. */
#define DIST_Z99 2.3263478740408408

/* The q-quantile of a gamma distribution (z: the standard normal's
 * q-quantile), by Wilson and Hilferty's cube of a normal. */
static double gamma_quantile(double k, double theta, double z)
{
    double c = 1.0 / (9.0 * k);
    double t = 1.0 - c + z * sqrt(c);
    return t > 0 ? k * theta * t * t * t : 0.0;
}

double dist_median(const struct dist *d)
{
    double m = 0.0;
    switch (d->kind) {
    case DIST_FIXED:
    case DIST_NORMAL: m = d->a; break;
    case DIST_UNIFORM: m = 0.5 * (d->a + d->b); break;
    case DIST_LOGNORMAL: m = exp(d->a); break;
    case DIST_EXPONENTIAL: m = d->a * log(2.0); break;
    case DIST_GAMMA: m = gamma_quantile(d->a, d->b, 0.0); break;
    }
    return dist_bound(d, m);
}

double dist_p99(const struct dist *d)
{
    double p = 0.0;
    switch (d->kind) {
    case DIST_FIXED: p = d->a; break;
    case DIST_NORMAL: p = d->a + DIST_Z99 * d->b; break;
    case DIST_UNIFORM: p = d->a + 0.99 * (d->b - d->a); break;
    case DIST_LOGNORMAL: p = exp(d->a + DIST_Z99 * d->b); break;
    case DIST_EXPONENTIAL: p = d->a * log(100.0); break;
    case DIST_GAMMA: p = gamma_quantile(d->a, d->b, DIST_Z99); break;
    }
    return dist_bound(d, p);
}

double dist_clamp_share(const struct dist *d)
{
    if (!d->has_min && !d->has_max)
        return 0;
    double m = trunc_mass(d);
    if (!(m >= 0) || m >= 1)
        return 0;
    return pow(1.0 - m, DIST_MAX_REDRAWS);
}

int dist_check_length(const struct dist *d, char *err, size_t errlen)
{
    /* A length is the sample rounded, at least 1: a spec whose p99 rounds
     * to 0 would send 1 token where 0 was written, silently. */
    if (dist_p99(d) >= 0.5)
        return 0;
    if (d->kind == DIST_FIXED)
        return ll_errf(err, errlen,
                       "a length of 0 tokens (it would be sent as 1); expected at "
                       "least 1");
    return ll_errf(err, errlen,
                   "99%% of the lengths round to 0 tokens (each would be sent as 1); "
                   "expected lengths of at least 1");
}

int dist_check_tokens(const struct dist *d, const char *flag, const char *spec, char *err,
                      size_t errlen, char *warn, size_t warnlen)
{
    if (warnlen)
        warn[0] = '\0';
    char why[160];
    const char *sp = flag ? " " : ""; /* flag NULL: "SPEC: why" */
    if (!flag)
        flag = "";
    if (dist_check_length(d, why, sizeof why) != 0)
        return ll_errf(err, errlen, "%s%s%s: %s", flag, sp, spec, why);
    double median = dist_median(d);
    if (median > DIST_TOKENS_MEDIAN_MAX) {
        if (d->kind == DIST_LOGNORMAL && !d->by_median && exp(d->a) > DIST_TOKENS_HINT_MEDIAN) {
            char mu[32], sigma[32];
            fmt_plain(d->a, mu, sizeof mu);
            fmt_plain(d->b, sigma, sizeof sigma);
            return ll_errf(err, errlen,
                           "%s%s%s: a median of %.3g tokens, beyond any model's context "
                           "(at most %.0f): lognormal:MU,SIGMA takes MU as the log of the "
                           "median; for a median of %s tokens write "
                           "lognormal:median=%s,sigma=%s",
                           flag, sp, spec, median, DIST_TOKENS_MEDIAN_MAX, mu, mu, sigma);
        }
        return ll_errf(err, errlen,
                       "%s%s%s: a median of %.3g tokens, beyond any model's context (at most "
                       "%.0f)",
                       flag, sp, spec, median, DIST_TOKENS_MEDIAN_MAX);
    }
    double p99 = dist_p99(d), clamped = dist_clamp_share(d);
    if (p99 > DIST_TOKENS_P99_WARN && warnlen)
        snprintf(warn, warnlen,
                 "warning: %s%s%s: 1%% of the lengths are above %.3g tokens, beyond most "
                 "models' context (add max=N to bound them)",
                 flag, sp, spec, p99);
    else if (clamped > DIST_CLAMP_WARN && warnlen)
        snprintf(warn, warnlen,
                 "warning: %s%s%s: about %.2g%% of the lengths are clamped to min= or max= "
                 "(the interval holds %.2g%% of the distribution)",
                 flag, sp, spec, 100.0 * clamped,
                 100.0 * (1.0 - pow(clamped, 1.0 / DIST_MAX_REDRAWS)));
    return 0;
}

/* A value in the unit: plain, or a duration in the largest exact unit. */
static void fmt_value(const struct dist *d, double v, char *buf, size_t len)
{
    if (d->unit != DIST_UNIT_DURATION_NS) {
        fmt_plain(v, buf, len);
        return;
    }
    unsigned long long ns = (unsigned long long)llround(v);
    if (ns % LL_NS_PER_SEC == 0)
        snprintf(buf, len, "%llus", ns / LL_NS_PER_SEC);
    else if (ns % LL_NS_PER_MS == 0)
        snprintf(buf, len, "%llums", ns / LL_NS_PER_MS);
    else if (ns % LL_NS_PER_US == 0)
        snprintf(buf, len, "%lluus", ns / LL_NS_PER_US);
    else
        snprintf(buf, len, "%lluns", ns);
}

/* Append ",<name>=<v>" at buf + *used (buf has len bytes) and advance
 * *used. Returns 0, or LL_E_FULL when it does not fit. */
static int put_bound(const struct dist *d, const char *name, double v, char *buf, size_t len,
                     size_t *used)
{
    char text[40];
    fmt_value(d, v, text, sizeof(text));
    int n = snprintf(buf + *used, len - *used, ",%s=%s", name, text);
    if (n < 0 || (size_t)n >= len - *used)
        return LL_E_FULL;
    *used += (size_t)n;
    return 0;
}

int dist_format(const struct dist *d, char *buf, size_t len)
{
    char a[40], b[40];
    int n;

    switch (d->kind) {
    case DIST_FIXED:
    case DIST_EXPONENTIAL:
        fmt_value(d, d->a, a, sizeof(a));
        n = snprintf(buf, len, "%s:%s", dist_kind_name(d->kind), a);
        break;
    case DIST_UNIFORM:
    case DIST_NORMAL:
        fmt_value(d, d->a, a, sizeof(a));
        fmt_value(d, d->b, b, sizeof(b));
        n = snprintf(buf, len, "%s:%s,%s", dist_kind_name(d->kind), a, b);
        break;
    case DIST_LOGNORMAL:
        fmt_plain(d->b, b, sizeof(b));
        if (d->by_median) {
            fmt_value(d, d->median, a, sizeof(a));
            n = snprintf(buf, len, "lognormal:median=%s,sigma=%s", a, b);
        } else {
            fmt_plain(d->a, a, sizeof(a));
            n = snprintf(buf, len, "lognormal:%s,%s", a, b);
        }
        break;
    case DIST_GAMMA:
        fmt_plain(d->a, a, sizeof(a));
        fmt_value(d, d->b, b, sizeof(b));
        n = snprintf(buf, len, "gamma:%s,%s", a, b);
        break;
    default:
        n = snprintf(buf, len, "unknown");
        break;
    }
    if (n < 0 || (size_t)n >= len)
        return LL_E_FULL;
    size_t used = (size_t)n;
    if (d->has_min && put_bound(d, "min", d->min, buf, len, &used) < 0)
        return LL_E_FULL;
    if (d->has_max && put_bound(d, "max", d->max, buf, len, &used) < 0)
        return LL_E_FULL;
    return (int)used;
}
