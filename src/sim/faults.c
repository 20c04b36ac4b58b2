/* faults.c: per-request fault draws for `llmload sim`. */
#include "sim/faults.h"

#include <stdio.h>
#include <string.h>

#include "util/rng.h"

#include "util/util.h"

static const char *const kind_names[FAULT_KIND_COUNT] = {
    "none", "500", "503", "429", "cut", "malformed", "slow-headers", "role-only", "reasoning",
};

void faults_init(struct faults *f, uint64_t seed)
{
    memset(f, 0, sizeof(*f));
    /* Offset the seed so the fault stream differs from the engine's draws. */
    f->rng_state = seed ^ 0x6c6c6d6c6f616466ULL;
}

const char *fault_kind_name(enum fault_kind k)
{
    if ((int)k < 0 || k >= FAULT_KIND_COUNT)
        return "unknown";
    return kind_names[k];
}

int faults_add_spec(struct faults *f, const char *spec, char *err, size_t errlen)
{
    const char *colon = strrchr(spec, ':');
    if (!colon) {
        snprintf(err, errlen, "expected KIND:FRACTION (e.g. 500:0.05), got \"%s\"", spec);
        return LL_E_INVAL;
    }
    size_t klen = (size_t)(colon - spec);
    int kind = -1;
    for (int k = 1; k < FAULT_KIND_COUNT; k++)
        if (strlen(kind_names[k]) == klen && strncmp(spec, kind_names[k], klen) == 0)
            kind = k;
    if (kind < 0) {
        snprintf(err, errlen,
                 "unknown fault kind \"%.*s\" (expected 500, 503, 429, cut, malformed, "
                 "slow-headers, role-only or reasoning)", (int)klen, spec);
        return LL_E_INVAL;
    }
    double v;
    if (ll_parse_double(colon + 1, &v) < 0 || v < 0 || v > 1) {
        snprintf(err, errlen, "expected a fraction in [0, 1] after \"%.*s:\", got \"%s\"",
                 (int)klen, spec, colon + 1);
        return LL_E_INVAL;
    }
    double sum = v;
    for (int k = 1; k < FAULT_KIND_COUNT; k++)
        if (k != kind)
            sum += f->fraction[k];
    if (sum > 1.0 + 1e-12) {
        snprintf(err, errlen, "fault fractions add up to %.4g, more than 1", sum);
        return LL_E_INVAL;
    }
    f->fraction[kind] = v;
    return 0;
}

enum fault_kind faults_draw(struct faults *f)
{
    double u = (double)(rng_splitmix64(&f->rng_state) >> 11) * 0x1.0p-53;
    double acc = 0;
    enum fault_kind got = FAULT_NONE;
    for (int k = 1; k < FAULT_KIND_COUNT; k++) {
        acc += f->fraction[k];
        if (f->fraction[k] > 0 && u < acc) {
            got = (enum fault_kind)k;
            break;
        }
    }
    f->drawn_total[got]++;
    return got;
}
